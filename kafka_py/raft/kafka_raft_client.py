"""Port of raft/src/main/java/org/apache/kafka/raft/KafkaRaftClient.java (Kafka 2.8.2), with
Kafka 3.0.0's snapshots (KIP-630).

Kafka's Raft (KIP-595). Leader election is Raft's; replication is Kafka's: followers pull
with Fetch, and a follower whose log has diverged learns where from the leader's answer and
truncates (log reconciliation), instead of the leader pushing entries. Voters elect and
vote; observers only fetch. The APIs:

* Vote: a candidate asks every voter, sending its last epoch and end offset; a voter
  grants at most one vote per epoch, and only to a log at least as up to date as its own.
* BeginQuorumEpoch: the new leader tells every voter it leads the epoch, until each has
  acknowledged. Raft's empty AppendEntries does this; here followers pull, so they must be
  told whom to pull from.
* EndQuorumEpoch: a leader resigning (graceful shutdown) tells the voters, naming its
  preferred successors, most caught up first, so an election starts at once.
* Fetch (v12): the Kafka Fetch with ClusterId, LastFetchedEpoch and CurrentLeaderEpoch; the
  answer carries the current leader, the high watermark and, when the follower's log has
  diverged, the DivergingEpoch to truncate to.
* DescribeQuorum: the leader's view of every replica's progress.
* FetchSnapshot (v0): a follower whose fetch position is before the leader's log start is
  answered with the id of the leader's latest snapshot (the Fetch response's SnapshotId);
  it then fetches that snapshot in chunks of at most its max bytes, each request naming the
  position it has reached, freezes it once the size the leader reported is written, and
  empties its log up to the snapshot's end offset before fetching records again.

The client is sans-IO: it acts only in ``poll`` (on one thread), which handles at most one
message from its RaftMessageQueue, sends what the current state needs through the
NetworkChannel, and blocks on the queue for at most the time until its next timer. Time
comes from an injected Time, randomness from an injected Random, so a simulation with a mock
clock and an in-memory network replays exactly. ``register``, ``schedule_append``,
``shutdown`` and ``leader_and_epoch`` may be called from other threads; what they share with
the raft thread is guarded by locks.

Parked Fetch requests wait in a purgatory until the log end passes their offset or their
max wait expires. Expiry happens on the ExpirationService's thread; the expiry is handed to
the raft thread as an internal message, so only the raft thread reads the log or the
quorum state (Kafka 2.8.2 builds that response on the expiring thread).

Snapshots: ``create_snapshot`` gives the state machine a writer for a snapshot at a committed
offset (the controller writes one every ``metadata.log.max.record.bytes.between.snapshots``).
A listener whose next offset is below the log start (a restart after the log start moved, a
follower that fetched a snapshot) is handed the latest snapshot (``handle_snapshot``) before
any commit. Every minute the raft thread lets the log apply its retention limits
(``maybe_clean``), which is what moves the log start onto a snapshot and deletes old segments;
here it also does so as soon as a new snapshot appears, so the log shrinks without waiting
for the next minute.
"""
from __future__ import annotations

import logging
import random as _random
import threading
from typing import Any, Callable, Generic, Optional, Sequence, TypeVar

from kafka_py.clients.common.errors import KafkaException, NotLeaderOrFollowerException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.core.metrics.yammer import MetricsRegistry
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.raft import raft_util
from kafka_py.raft.batch_reader import Batch, BatchReader
from kafka_py.raft.candidate_state import CandidateState
from kafka_py.raft.control_record_utils import LeaderChangeMessage, with_leader_change_message
from kafka_py.raft.expiration_service import ExpirationService
from kafka_py.raft.follower_state import FollowerState
from kafka_py.raft.internals.batch_accumulator import BatchAccumulator, CompletedBatch
from kafka_py.raft.internals.blocking_message_queue import BlockingMessageQueue
from kafka_py.raft.internals.completable_future import CompletableFuture
from kafka_py.raft.internals.kafka_raft_metrics import KafkaRaftMetrics
from kafka_py.raft.internals.memory_batch_reader import MemoryBatchReader
from kafka_py.raft.internals.records_batch_reader import RecordsBatchReader
from kafka_py.raft.internals.threshold_purgatory import ThresholdPurgatory
from kafka_py.raft.internals.timer import Timer
from kafka_py.raft.isolation import Isolation
from kafka_py.raft.leader_and_epoch import LeaderAndEpoch
from kafka_py.raft.leader_state import LeaderState
from kafka_py.raft.log_append_info import LogAppendInfo
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.raft.network_channel import NetworkChannel
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.quorum_state import QuorumState
from kafka_py.raft.quorum_state_store import QuorumStateStore
from kafka_py.raft.raft_client import Listener, RaftClient
from kafka_py.raft.raft_config import InetAddressSpec, RaftConfig
from kafka_py.raft.raft_message_queue import RaftMessageQueue
from kafka_py.raft.raft_request import RaftRequest
from kafka_py.raft.raft_response import RaftResponse
from kafka_py.raft.record_serde import RecordSerde
from kafka_py.raft.replicated_log import ReplicatedLog
from kafka_py.raft.request_manager import RequestManager
from kafka_py.raft.resigned_state import ResignedState
from kafka_py.raft.valid_offset_and_epoch import ValidOffsetAndEpoch, ValidOffsetAndEpochType
from kafka_py.raft.snapshot.snapshot_reader import SnapshotReader
from kafka_py.raft.snapshot.snapshot_writer import SnapshotWriter
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.core.utils.java_limits import INT_MAX, LONG_MAX
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

T = TypeVar("T")

RETRY_BACKOFF_BASE_MS = 100
MAX_FETCH_WAIT_MS = 500
MAX_BATCH_SIZE_BYTES = 8 * 1024 * 1024
MAX_FETCH_SIZE_BYTES = MAX_BATCH_SIZE_BYTES
# How often the raft thread applies the metadata log's retention (Kafka's 60 s).
SNAPSHOT_CLEANER_DELAY_MS = 60000


def _optional_leader_id(leader_id_or_nil: int) -> Optional[int]:
    return None if leader_id_or_nil < 0 else leader_id_or_nil


class _DelayedFetchCompletion:
    """Internal message: a parked Fetch whose wait ended (data arrived, expiry, or leadership
    lost), to be answered on the raft thread."""

    __slots__ = ("request", "fetch_partition", "replica_id", "exception", "response")

    def __init__(self, request: "RaftRequest.Inbound", fetch_partition: Any, replica_id: int,
                 exception: Optional[BaseException], response: CompletableFuture[Any]) -> None:
        self.request = request
        self.fetch_partition = fetch_partition
        self.replica_id = replica_id
        self.exception = exception
        self.response = response

    def correlation_id(self) -> int:
        return self.request.correlation_id()

    def data(self) -> Any:
        return self.request.data()


class GracefulShutdown:
    def __init__(self, time: Time, shutdown_timeout_ms: int, complete_future: CompletableFuture[None]) -> None:
        self.finish_timer = Timer(time, shutdown_timeout_ms)
        self.complete_future = complete_future

    def update(self, current_time_ms: int) -> None:
        self.finish_timer.update(current_time_ms)

    def has_timed_out(self) -> bool:
        return self.finish_timer.is_expired()

    def is_finished(self) -> bool:
        return self.complete_future.is_done()

    def remaining_time_ms(self) -> int:
        return self.finish_timer.remaining_ms()

    def fail_with_timeout(self) -> None:
        logger.warning("Graceful shutdown timed out after %dms", self.finish_timer.timeout_ms())
        self.complete_future.complete_exceptionally(
            Errors.REQUEST_TIMED_OUT.exception("Timeout expired before graceful shutdown completed"))

    def complete(self) -> None:
        logger.info("Graceful shutdown completed")
        self.complete_future.complete(None)


class RaftMetadataLogCleanerManager:
    """Runs the log's cleaning (``maybe_clean``) on the raft thread every ``delay_ms``, and also
    when the latest snapshot changes: a new snapshot is what can let the log start move."""

    def __init__(self, log_prefix: str, time: Time, delay_ms: int, log: ReplicatedLog) -> None:
        self._log_prefix = log_prefix
        self._timer = Timer(time, delay_ms)
        self._delay_ms = delay_ms
        self._log = log
        self._last_cleaned_snapshot_id = log.latest_snapshot_id()

    def maybe_clean(self, current_time_ms: int) -> int:
        """Clean if due; the milliseconds until the next timed cleaning."""
        self._timer.update(current_time_ms)
        latest_snapshot_id = self._log.latest_snapshot_id()
        if self._timer.is_expired() or latest_snapshot_id != self._last_cleaned_snapshot_id:
            self._last_cleaned_snapshot_id = latest_snapshot_id
            try:
                self._log.maybe_clean()
            except Exception:
                logger.exception("%sHad an error during log cleaning", self._log_prefix)
            self._timer.reset(self._delay_ms)
        return self._timer.remaining_ms()


class ListenerContext(Generic[T]):
    """One registered listener and how far it has read. ``next_offset`` and the reader last
    handed over are shared with the listener's thread (which closes readers), so they are
    read and written under the context's lock."""

    def __init__(self, client: "KafkaRaftClient[T]", listener: Listener[T]) -> None:
        self._client = client
        self.listener = listener
        # Only the raft thread reads or writes the claimed epoch.
        self._claimed_epoch = 0
        self._lock = threading.Lock()
        self._last_sent: Optional[BatchReader[T]] = None
        self._next_offset = 0

    def next_offset(self) -> int:
        """One past the last record the listener has finished with."""
        with self._lock:
            return self._next_offset

    def next_expected_offset(self) -> Optional[int]:
        """Where the next delivery starts: past the reader in flight if its end is known; None if
        a reader over log bytes is still open (its end is not known until it is closed)."""
        with self._lock:
            if self._last_sent is not None:
                last_sent_offset = self._last_sent.last_offset()
                return None if last_sent_offset is None else last_sent_offset + 1
            return self._next_offset

    def fire_handle_commit_records(self, base_offset: int, records: MemoryRecords) -> None:
        """Committed records read back from the log (a follower, or a lagging listener)."""
        self._fire_handle_commit(RecordsBatchReader(base_offset, records, self._client.serde, self))

    def fire_handle_commit_batch(self, base_offset: int, epoch: int, records: Sequence[T],
                                 append_timestamp: int = -1, size_in_bytes: int = 0) -> None:
        """Committed records the leader still holds in memory from the append."""
        self._fire_handle_commit(MemoryBatchReader(
            [Batch(base_offset, epoch, list(records), append_timestamp, size_in_bytes)], self))

    def fire_handle_snapshot(self, reader: SnapshotReader[T]) -> None:
        """The listener's next records are gone from the log: it loads the snapshot instead and
        goes on from the snapshot's end offset."""
        with self._lock:
            self._next_offset = reader.snapshot_id().offset
            self._last_sent = None
        logger.debug("%sNotifying listener %s of snapshot %s", self._client._log_prefix, self.listener,
                     reader.snapshot_id())
        self.listener.handle_snapshot(reader)

    def _fire_handle_commit(self, reader: BatchReader[T]) -> None:
        with self._lock:
            self._last_sent = reader
        self.listener.handle_commit(reader)

    def maybe_fire_handle_claim(self, epoch: int, epoch_start_offset: int) -> None:
        # Claim only once the listener has seen everything before the epoch's start, so the
        # state machine is complete before it writes as leader.
        if epoch > self._claimed_epoch and self.next_offset() >= epoch_start_offset:
            self._claimed_epoch = epoch
            self.listener.handle_claim(epoch)

    def fire_handle_resign(self, epoch: int) -> None:
        self.listener.handle_resign(epoch)

    def on_close(self, reader: BatchReader[T]) -> None:
        wake = False
        with self._lock:
            last_offset = reader.last_offset()
            if last_offset is not None:
                self._next_offset = last_offset + 1
            if self._last_sent is reader:
                self._last_sent = None
                wake = True
        if wake:
            self._client.wakeup()


class KafkaRaftClient(RaftClient[T], Generic[T]):
    def __init__(self, serde: RecordSerde[T], channel: NetworkChannel, log: ReplicatedLog,
                 quorum_state_store: QuorumStateStore, time: Time, expiration_service: ExpirationService,
                 cluster_id: str, node_id: Optional[int], raft_config: RaftConfig,
                 message_queue: Optional[RaftMessageQueue] = None, fetch_max_wait_ms: int = MAX_FETCH_WAIT_MS,
                 random: Optional[_random.Random] = None, metrics_registry: Optional[MetricsRegistry] = None,
                 snapshot_cleaner_delay_ms: int = SNAPSHOT_CLEANER_DELAY_MS) -> None:
        self.serde = serde
        self._channel = channel
        self._message_queue = message_queue if message_queue is not None else BlockingMessageQueue()
        self._log = log
        self._time = time
        self._cluster_id = cluster_id
        self._fetch_max_wait_ms = fetch_max_wait_ms
        self._random = random if random is not None else _random.Random()
        self._raft_config = raft_config
        self._log_prefix = f"[RaftManager nodeId={node_id}] "
        self._fetch_purgatory = ThresholdPurgatory(expiration_service)
        self._append_purgatory = ThresholdPurgatory(expiration_service)

        voter_ids = raft_config.quorum_voter_ids()
        self._request_manager = RequestManager(voter_ids, raft_config.retry_backoff_ms,
                                               raft_config.request_timeout_ms, self._random)
        self.quorum = QuorumState(node_id, voter_ids, raft_config.election_timeout_ms,
                                  raft_config.fetch_timeout_ms, quorum_state_store, time, self._random,
                                  self._log_prefix)
        self._metrics = KafkaRaftMetrics(self.quorum, time, "raft", metrics_registry)
        self._metrics.update_num_unknown_voter_connections(len(self.quorum.remote_voters()))

        # Only the raft thread touches the listener contexts; registration goes through a
        # pending list other threads may append to.
        self._listener_contexts: list[ListenerContext[T]] = []
        self._snapshot_cleaner = RaftMetadataLogCleanerManager(self._log_prefix, time, snapshot_cleaner_delay_ms, log)
        self._shared_lock = threading.Lock()
        self._pending_listeners: list[Listener[T]] = []
        self._shutdown: Optional[GracefulShutdown] = None
        self._accumulator: Optional[BatchAccumulator[T]] = None

        for voter_id, address in raft_config.quorum_voter_connections().items():
            if isinstance(address, InetAddressSpec):
                self._channel.update_endpoint(voter_id, address)

    # ---- shared fields ----------------------------------------------------------
    def _get_shutdown(self) -> Optional[GracefulShutdown]:
        with self._shared_lock:
            return self._shutdown

    def _get_accumulator(self) -> Optional[BatchAccumulator[T]]:
        with self._shared_lock:
            return self._accumulator

    def _set_accumulator(self, accumulator: Optional[BatchAccumulator[T]]) -> None:
        with self._shared_lock:
            self._accumulator = accumulator

    # ---- high watermark and listeners -------------------------------------------
    def _update_follower_high_watermark(self, state: FollowerState, high_watermark: Optional[int]) -> None:
        if high_watermark is None:
            return
        # Never beyond what we hold ourselves: the leader may be further ahead.
        new_high_watermark = min(self._end_offset().offset, high_watermark)
        if state.update_high_watermark(new_high_watermark):
            logger.debug("%sFollower high watermark updated to %d", self._log_prefix, new_high_watermark)
            self._log.update_high_watermark(LogOffsetMetadata(new_high_watermark))
            self._update_listeners_progress(self._listener_contexts, new_high_watermark)

    def _update_leader_end_offset_and_timestamp(self, state: LeaderState, current_time_ms: int) -> None:
        end_offset_metadata = self._log.end_offset()
        if state.update_local_state(current_time_ms, end_offset_metadata):
            self._on_update_leader_high_watermark(state, current_time_ms)
        self._fetch_purgatory.maybe_complete(end_offset_metadata.offset, current_time_ms)

    def _on_update_leader_high_watermark(self, state: LeaderState, current_time_ms: int) -> None:
        high_watermark = state.high_watermark()
        if high_watermark is None:
            return
        logger.debug("%sLeader high watermark updated to %s", self._log_prefix, high_watermark)
        self._log.update_high_watermark(high_watermark)
        # Appends first: their records are still in memory and go straight to listeners
        # that are waiting for exactly them.
        self._append_purgatory.maybe_complete(high_watermark.offset, current_time_ms)
        # Then listeners that lag (e.g. the first high watermark of a new leader) read the log.
        self._update_listeners_progress(self._listener_contexts, high_watermark.offset)

    def _update_listeners_progress(self, contexts: Sequence[ListenerContext[T]], high_watermark: int) -> None:
        for context in contexts:
            next_expected_offset = context.next_expected_offset()
            if (next_expected_offset is not None and next_expected_offset < self._log.start_offset()
                    and next_expected_offset < high_watermark):
                # What the listener would read next is gone: it starts from the latest snapshot.
                snapshot = self._latest_snapshot()
                if snapshot is None:
                    raise RuntimeError(f"Snapshot expected since next offset of {context.listener} is "
                                       f"{next_expected_offset}, log start offset is {self._log.start_offset()} "
                                       f"and high-watermark is {high_watermark}")
                context.fire_handle_snapshot(snapshot)
            # Read again: loading a snapshot moved it.
            next_expected_offset = context.next_expected_offset()
            if next_expected_offset is not None and next_expected_offset < high_watermark:
                read_info = self._log.read(next_expected_offset, Isolation.COMMITTED)
                context.fire_handle_commit_records(next_expected_offset, read_info.records)

    def _latest_snapshot(self) -> Optional[SnapshotReader[T]]:
        raw = self._log.latest_snapshot()
        return None if raw is None else SnapshotReader.of(raw, self.serde, MAX_BATCH_SIZE_BYTES)

    def _maybe_fire_handle_commit(self, base_offset: int, epoch: int, records: Sequence[T],
                                  append_timestamp: int = -1, size_in_bytes: int = 0) -> None:
        for context in self._listener_contexts:
            if context.next_expected_offset() == base_offset:
                context.fire_handle_commit_batch(base_offset, epoch, records, append_timestamp, size_in_bytes)

    def _maybe_fire_handle_claim(self, state: LeaderState) -> None:
        for context in self._listener_contexts:
            context.maybe_fire_handle_claim(state.epoch(), state.epoch_start_offset())

    def _fire_handle_resign(self, epoch: int) -> None:
        for context in self._listener_contexts:
            context.fire_handle_resign(epoch)

    # ---- RaftClient -------------------------------------------------------------
    def initialize(self) -> None:
        self.quorum.initialize(OffsetAndEpoch(self._log.end_offset().offset, self._log.last_fetched_epoch()))
        current_time_ms = self._time.milliseconds()
        if self.quorum.is_leader():
            raise RuntimeError("Voter cannot initialize as a Leader")
        if self.quorum.is_candidate():
            self._on_become_candidate(current_time_ms)
        elif self.quorum.is_follower():
            self._on_become_follower(current_time_ms)
        # A quorum of one elects itself at once.
        if (self.quorum.is_voter() and not self.quorum.remote_voters() and not self.quorum.is_leader()
                and not self.quorum.is_candidate()):
            self._transition_to_candidate(current_time_ms)

    def register(self, listener: Listener[T]) -> None:
        with self._shared_lock:
            self._pending_listeners.append(listener)
        self.wakeup()

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return self.quorum.leader_and_epoch()

    def resign(self, epoch: int) -> None:
        if epoch < 0:
            raise ValueError(f"Attempt to resign from an invalid negative epoch {epoch}")
        if not self.quorum.is_voter():
            raise RuntimeError("Attempt to resign by a non-voter")
        current = self.quorum.leader_and_epoch()
        if epoch > current.epoch:
            raise ValueError(f"Attempt to resign from epoch {epoch} which is larger than the current "
                             f"epoch {current.epoch}")
        if epoch < current.epoch:
            # The caller has not heard of a leader change that already happened: nothing to do.
            logger.debug("%sIgnoring a resignation from epoch %d: the epoch is %d now", self._log_prefix,
                         epoch, current.epoch)
            return
        if current.leader_id != self.quorum.local_id_or_throw():
            raise ValueError(f"Cannot resign from epoch {epoch} since we are not the leader")
        # The state may change under us (this runs outside the raft thread); a leadership
        # already gone is a resignation done.
        state = self.quorum.state
        if not isinstance(state, LeaderState) or state.epoch() != epoch:
            logger.debug("%sIgnoring a resignation from epoch %d: no longer its leader", self._log_prefix, epoch)
            return
        logger.info("%sResigning from epoch %d on request", self._log_prefix, epoch)
        state.request_resign()
        self.wakeup()

    def _end_offset(self) -> OffsetAndEpoch:
        return OffsetAndEpoch(self._log.end_offset().offset, self._log.last_fetched_epoch())

    def _reset_connections(self) -> None:
        self._request_manager.reset_all()

    # ---- transitions ------------------------------------------------------------
    def _on_become_leader(self, current_time_ms: int) -> None:
        state = self.quorum.leader_state_or_throw()
        self._log.initialize_leader_epoch(self.quorum.epoch())
        # The high watermark can only pass the epoch start once a record of this epoch is
        # committed, so write one now rather than wait for the application.
        self._append_leader_change_message(state, self._log.end_offset().offset, current_time_ms)
        self._update_leader_end_offset_and_timestamp(state, current_time_ms)
        self._reset_connections()
        self._metrics.maybe_update_election_latency(current_time_ms)
        self._set_accumulator(BatchAccumulator(
            self.quorum.epoch(), self._log.end_offset().offset, self._raft_config.append_linger_ms,
            MAX_BATCH_SIZE_BYTES, self._time, CompressionType.NONE, self.serde))

    def _append_leader_change_message(self, state: LeaderState, base_offset: int, current_time_ms: int) -> None:
        leader_id = state.election().leader_id()
        voters = tuple(sorted(state.followers())) + (leader_id,)
        message = LeaderChangeMessage(leader_id, voters, tuple(sorted(state.granting_voters())))
        records = with_leader_change_message(base_offset, current_time_ms, self.quorum.epoch(), message)
        self._append_as_leader(records)
        self._flush_leader_log(state, current_time_ms)

    def _flush_leader_log(self, state: LeaderState, current_time_ms: int) -> None:
        # The end offset moves before the flush, so parked fetches can answer sooner.
        self._update_leader_end_offset_and_timestamp(state, current_time_ms)
        self._log.flush()

    def _maybe_transition_to_leader(self, state: CandidateState, current_time_ms: int) -> bool:
        if state.is_vote_granted():
            self.quorum.transition_to_leader(self._log.end_offset().offset)
            self._on_become_leader(current_time_ms)
            return True
        return False

    def _on_become_candidate(self, current_time_ms: int) -> None:
        state = self.quorum.candidate_state_or_throw()
        if not self._maybe_transition_to_leader(state, current_time_ms):
            self._reset_connections()
            self._metrics.update_election_start_ms(current_time_ms)

    def _maybe_resign_leadership(self) -> None:
        if self.quorum.is_leader():
            self._fire_handle_resign(self.quorum.epoch())
        accumulator = self._get_accumulator()
        if accumulator is not None:
            accumulator.close()
            self._set_accumulator(None)

    def _transition_to_candidate(self, current_time_ms: int) -> None:
        self._maybe_resign_leadership()
        self.quorum.transition_to_candidate()
        self._on_become_candidate(current_time_ms)

    def _transition_to_unattached(self, epoch: int) -> None:
        self._maybe_resign_leadership()
        self.quorum.transition_to_unattached(epoch)
        self._reset_connections()

    def _transition_to_resigned(self, preferred_successors: Sequence[int]) -> None:
        self._fetch_purgatory.complete_all_exceptionally(
            Errors.BROKER_NOT_AVAILABLE.exception("The broker is shutting down"))
        # The epoch takes no more appends (as Kafka 3.x closes the leader's accumulator here):
        # a write scheduled after the resignation gets Long.MAX_VALUE, an offset that never
        # commits, rather than an offset its records would never reach.
        accumulator = self._get_accumulator()
        if accumulator is not None:
            accumulator.close()
            self._set_accumulator(None)
        self.quorum.transition_to_resigned(preferred_successors)
        self._reset_connections()

    def _transition_to_voted(self, candidate_id: int, epoch: int) -> None:
        self._maybe_resign_leadership()
        self.quorum.transition_to_voted(epoch, candidate_id)
        self._reset_connections()

    def _on_become_follower(self, current_time_ms: int) -> None:
        self._metrics.maybe_update_election_latency(current_time_ms)
        self._reset_connections()
        # Parked fetches are answered now, so their senders retry against the new leader
        # instead of waiting out their max wait.
        self._fetch_purgatory.complete_all_exceptionally(NotLeaderOrFollowerException(
            "Cannot process the fetch request because the node is no longer the leader."))
        self._append_purgatory.complete_all_exceptionally(NotLeaderOrFollowerException(
            "Failed to receive sufficient acknowledgments for this append before leader change."))

    def _transition_to_follower(self, epoch: int, leader_id: int, current_time_ms: int) -> None:
        self._maybe_resign_leadership()
        self.quorum.transition_to_follower(epoch, leader_id)
        self._on_become_follower(current_time_ms)

    # ---- Vote -------------------------------------------------------------------
    def _build_vote_response(self, partition_level_error: Errors, vote_granted: bool) -> Any:
        return raft_util.vote_response_for(Errors.NONE, self._log.topic_partition(), partition_level_error,
                                           self.quorum.epoch(), self.quorum.leader_id_or_sentinel(), vote_granted)

    def _handle_vote_request(self, request_metadata: "RaftRequest.Inbound") -> Any:
        """Errors: BROKER_NOT_AVAILABLE, FENCED_LEADER_EPOCH (an older epoch),
        INCONSISTENT_VOTER_SET (we or the sender are not voters), INVALID_REQUEST."""
        request = request_metadata.data()
        if not raft_util.has_valid_topic_partition(request, self._log.topic_partition()):
            # Until raft runs several logs, any other partition is a malformed request.
            return raft_util.VoteResponseData(error_code=Errors.INVALID_REQUEST.error_code, topics=())
        partition_request = request.topics[0].partitions[0]
        candidate_id = partition_request.replica_id
        candidate_epoch = partition_request.replica_epoch
        last_epoch = partition_request.last_offset_epoch
        last_epoch_end_offset = partition_request.last_offset
        if last_epoch_end_offset < 0 or last_epoch < 0 or last_epoch >= candidate_epoch:
            return self._build_vote_response(Errors.INVALID_REQUEST, False)

        error = self._validate_voter_only_request(candidate_id, candidate_epoch)
        if error is not None:
            return self._build_vote_response(error, False)

        if candidate_epoch > self.quorum.epoch():
            self._transition_to_unattached(candidate_epoch)

        quorum = self.quorum
        if quorum.is_leader():
            logger.debug("%sRejecting vote request %s with epoch %d since we are already leader on that epoch",
                         self._log_prefix, request, candidate_epoch)
            vote_granted = False
        elif quorum.is_candidate():
            logger.debug("%sRejecting vote request %s with epoch %d since we are already candidate on that epoch",
                         self._log_prefix, request, candidate_epoch)
            vote_granted = False
        elif quorum.is_resigned():
            logger.debug("%sRejecting vote request %s with epoch %d since we have resigned as candidate/leader "
                         "in this epoch", self._log_prefix, request, candidate_epoch)
            vote_granted = False
        elif quorum.is_follower():
            logger.debug("%sRejecting vote request %s with epoch %d since we already have a leader %d on that epoch",
                         self._log_prefix, request, candidate_epoch, quorum.follower_state_or_throw().leader_id())
            vote_granted = False
        elif quorum.is_voted():
            voted_id = quorum.voted_state_or_throw().voted_id()
            vote_granted = voted_id == candidate_id
            if not vote_granted:
                logger.debug("%sRejecting vote request %s with epoch %d since we already have voted for another "
                             "candidate %d on that epoch", self._log_prefix, request, candidate_epoch, voted_id)
        elif quorum.is_unattached():
            # Grant only a log at least as up to date as ours: epoch first, then offset.
            vote_granted = OffsetAndEpoch(last_epoch_end_offset, last_epoch) >= self._end_offset()
            if vote_granted:
                self._transition_to_voted(candidate_id, candidate_epoch)
        else:
            raise RuntimeError(f"Unexpected quorum state {quorum}")

        logger.info("%sVote request from %d for epoch %d is %s", self._log_prefix, candidate_id, candidate_epoch,
                    "granted" if vote_granted else "rejected")
        return self._build_vote_response(Errors.NONE, vote_granted)

    def _handle_vote_response(self, response_metadata: "RaftResponse.Inbound", current_time_ms: int) -> bool:
        remote_node_id = response_metadata.source_id()
        response = response_metadata.data()
        top_level_error = raft_util.error_of(response.error_code)
        if top_level_error is not Errors.NONE:
            return self._handle_top_level_error(top_level_error, response_metadata)
        if not raft_util.has_valid_topic_partition(response, self._log.topic_partition()):
            return False
        partition_response = response.topics[0].partitions[0]
        error = raft_util.error_of(partition_response.error_code)
        response_leader_id = _optional_leader_id(partition_response.leader_id)
        response_epoch = partition_response.leader_epoch

        handled = self._maybe_handle_common_response(error, response_leader_id, response_epoch, current_time_ms)
        if handled is not None:
            return handled
        if error is not Errors.NONE:
            return self._handle_unexpected_error(error, response_metadata)
        if self.quorum.is_leader():
            logger.debug("%sIgnoring vote response %s since we already became leader for epoch %d",
                         self._log_prefix, partition_response, self.quorum.epoch())
        elif self.quorum.is_candidate():
            state = self.quorum.candidate_state_or_throw()
            if partition_response.vote_granted:
                state.record_granted_vote(remote_node_id)
                self._maybe_transition_to_leader(state, current_time_ms)
            else:
                state.record_rejected_vote(remote_node_id)
                # A lost election backs off at once instead of waiting out the election
                # timeout, so a split vote does not stall the quorum.
                if state.is_vote_rejected() and not state.is_backing_off():
                    logger.info("%sInsufficient remaining votes to become leader (rejected by %s). We will backoff "
                                "before retrying election again", self._log_prefix, sorted(state.rejecting_voters()))
                    state.start_backing_off(current_time_ms,
                                            self._binary_exponential_election_backoff_ms(state.retries()))
        else:
            logger.debug("%sIgnoring vote response %s since we are no longer a candidate in epoch %d",
                         self._log_prefix, partition_response, self.quorum.epoch())
        return True

    def _binary_exponential_election_backoff_ms(self, retries: int) -> int:
        if retries <= 0:
            raise ValueError(f"Retries {retries} should be larger than zero")
        # The exponent is capped at 20 so the range stays an int.
        return min(RETRY_BACKOFF_BASE_MS * self._random.randrange(2 << min(20, retries - 1)),
                   self._raft_config.election_backoff_max_ms)

    def _strict_exponential_election_backoff_ms(self, position_in_successors: int, total_num_successors: int) -> int:
        if position_in_successors <= 0 or position_in_successors >= total_num_successors:
            raise ValueError(f"Position {position_in_successors} should be larger than zero and smaller than total "
                             f"number of successors {total_num_successors}")
        retry_backoff_base_ms = self._raft_config.election_backoff_max_ms >> (total_num_successors - 1)
        return min(self._raft_config.election_backoff_max_ms, retry_backoff_base_ms << (position_in_successors - 1))

    # ---- BeginQuorumEpoch -------------------------------------------------------
    def _build_begin_quorum_epoch_response(self, partition_level_error: Errors) -> Any:
        return raft_util.begin_quorum_epoch_response_for(Errors.NONE, self._log.topic_partition(),
                                                         partition_level_error, self.quorum.epoch(),
                                                         self.quorum.leader_id_or_sentinel())

    def _handle_begin_quorum_epoch_request(self, request_metadata: "RaftRequest.Inbound",
                                           current_time_ms: int) -> Any:
        """Errors: BROKER_NOT_AVAILABLE, INCONSISTENT_VOTER_SET, FENCED_LEADER_EPOCH."""
        request = request_metadata.data()
        if not raft_util.has_valid_topic_partition(request, self._log.topic_partition()):
            return raft_util.BeginQuorumEpochResponseData(error_code=Errors.INVALID_REQUEST.error_code, topics=())
        partition_request = request.topics[0].partitions[0]
        request_leader_id = partition_request.leader_id
        request_epoch = partition_request.leader_epoch
        error = self._validate_voter_only_request(request_leader_id, request_epoch)
        if error is not None:
            return self._build_begin_quorum_epoch_response(error)
        self._maybe_transition(request_leader_id, request_epoch, current_time_ms)
        return self._build_begin_quorum_epoch_response(Errors.NONE)

    def _handle_begin_quorum_epoch_response(self, response_metadata: "RaftResponse.Inbound",
                                            current_time_ms: int) -> bool:
        remote_node_id = response_metadata.source_id()
        response = response_metadata.data()
        top_level_error = raft_util.error_of(response.error_code)
        if top_level_error is not Errors.NONE:
            return self._handle_top_level_error(top_level_error, response_metadata)
        if not raft_util.has_valid_topic_partition(response, self._log.topic_partition()):
            return False
        partition_response = response.topics[0].partitions[0]
        error = raft_util.error_of(partition_response.error_code)
        handled = self._maybe_handle_common_response(
            error, _optional_leader_id(partition_response.leader_id), partition_response.leader_epoch,
            current_time_ms)
        if handled is not None:
            return handled
        if error is not Errors.NONE:
            return self._handle_unexpected_error(error, response_metadata)
        if self.quorum.is_leader():
            self.quorum.leader_state_or_throw().add_acknowledgement_from(remote_node_id)
        else:
            logger.debug("%sIgnoring BeginQuorumEpoch response %s since this node is not the leader anymore",
                         self._log_prefix, response)
        return True

    # ---- EndQuorumEpoch ---------------------------------------------------------
    def _build_end_quorum_epoch_response(self, partition_level_error: Errors) -> Any:
        return raft_util.end_quorum_epoch_response_for(Errors.NONE, self._log.topic_partition(),
                                                       partition_level_error, self.quorum.epoch(),
                                                       self.quorum.leader_id_or_sentinel())

    def _handle_end_quorum_epoch_request(self, request_metadata: "RaftRequest.Inbound", current_time_ms: int) -> Any:
        """Errors: BROKER_NOT_AVAILABLE, INCONSISTENT_VOTER_SET, FENCED_LEADER_EPOCH."""
        request = request_metadata.data()
        if not raft_util.has_valid_topic_partition(request, self._log.topic_partition()):
            return raft_util.EndQuorumEpochResponseData(error_code=Errors.INVALID_REQUEST.error_code, topics=())
        partition_request = request.topics[0].partitions[0]
        request_epoch = partition_request.leader_epoch
        request_leader_id = partition_request.leader_id
        error = self._validate_voter_only_request(request_leader_id, request_epoch)
        if error is not None:
            return self._build_end_quorum_epoch_response(error)
        self._maybe_transition(request_leader_id, request_epoch, current_time_ms)

        if self.quorum.is_follower():
            state = self.quorum.follower_state_or_throw()
            if state.leader_id() == request_leader_id:
                election_backoff_ms = self._end_epoch_election_backoff(list(partition_request.preferred_successors))
                logger.debug("%sOverriding follower fetch timeout to %d after receiving EndQuorumEpoch request "
                             "from leader %d in epoch %d", self._log_prefix, election_backoff_ms, request_leader_id,
                             request_epoch)
                state.override_fetch_timeout(current_time_ms, election_backoff_ms)
        return self._build_end_quorum_epoch_response(Errors.NONE)

    def _end_epoch_election_backoff(self, preferred_successors: list[int]) -> int:
        # The better placed in the leader's list (most caught up first), the sooner we stand;
        # the first stands at once.
        local_id = self.quorum.local_id_or_throw()
        position = preferred_successors.index(local_id) if local_id in preferred_successors else -1
        if position <= 0:
            return 0
        return self._strict_exponential_election_backoff_ms(position, len(preferred_successors))

    def _handle_end_quorum_epoch_response(self, response_metadata: "RaftResponse.Inbound",
                                          current_time_ms: int) -> bool:
        response = response_metadata.data()
        top_level_error = raft_util.error_of(response.error_code)
        if top_level_error is not Errors.NONE:
            return self._handle_top_level_error(top_level_error, response_metadata)
        if not raft_util.has_valid_topic_partition(response, self._log.topic_partition()):
            return False
        partition_response = response.topics[0].partitions[0]
        error = raft_util.error_of(partition_response.error_code)
        handled = self._maybe_handle_common_response(
            error, _optional_leader_id(partition_response.leader_id), partition_response.leader_epoch,
            current_time_ms)
        if handled is not None:
            return handled
        if error is not Errors.NONE:
            return self._handle_unexpected_error(error, response_metadata)
        self.quorum.resigned_state_or_throw().acknowledge_resignation(response_metadata.source_id())
        return True

    # ---- Fetch ------------------------------------------------------------------
    def _build_fetch_response(self, error: Errors, records: Optional[MemoryRecords],
                              valid_offset_and_epoch: ValidOffsetAndEpoch,
                              high_watermark: Optional[LogOffsetMetadata]) -> Any:
        diverging = snapshot_id = None
        if valid_offset_and_epoch.type is ValidOffsetAndEpochType.DIVERGING:
            diverging = valid_offset_and_epoch.offset_and_epoch
        elif valid_offset_and_epoch.type is ValidOffsetAndEpochType.SNAPSHOT:
            snapshot_id = valid_offset_and_epoch.offset_and_epoch
        data = b"" if records is None or records.size_in_bytes == 0 else bytes(records.buffer)
        return raft_util.singleton_fetch_response(
            self._log.topic_partition(), Errors.NONE, error, data, self._log.start_offset(),
            -1 if high_watermark is None else high_watermark.offset, self.quorum.epoch(),
            self.quorum.leader_id_or_sentinel(), diverging, snapshot_id)

    def _build_empty_fetch_response(self, error: Errors, high_watermark: Optional[LogOffsetMetadata]) -> Any:
        return self._build_fetch_response(error, None, ValidOffsetAndEpoch.valid(), high_watermark)

    def _has_valid_cluster_id(self, request: Any) -> bool:
        # A request without a cluster id is not checked (older senders do not send one).
        return request.cluster_id is None or request.cluster_id == self._cluster_id

    def _handle_fetch_request(self, request_metadata: "RaftRequest.Inbound",
                              current_time_ms: int) -> CompletableFuture[Any]:
        """Answer now, or park until data arrives or the max wait passes. Errors:
        INCONSISTENT_CLUSTER_ID, BROKER_NOT_AVAILABLE, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH,
        NOT_LEADER_OR_FOLLOWER, INVALID_REQUEST (bad offsets or epochs)."""
        request = request_metadata.data()
        if not self._has_valid_cluster_id(request):
            return CompletableFuture.completed_future(raft_util.FetchResponseData(
                throttle_time=raft_util._ZERO, error_code=Errors.INCONSISTENT_CLUSTER_ID.error_code, responses=()))
        if not raft_util.has_valid_topic_partition(request, self._log.topic_partition()):
            return CompletableFuture.completed_future(raft_util.FetchResponseData(
                throttle_time=raft_util._ZERO, error_code=Errors.INVALID_REQUEST.error_code, responses=()))

        fetch_partition = request.topics[0].partitions[0]
        max_wait_ms = raft_util.max_wait_ms(request)
        if (max_wait_ms < 0 or fetch_partition.fetch_offset < 0 or fetch_partition.last_fetched_epoch < 0
                or fetch_partition.last_fetched_epoch > fetch_partition.current_leader_epoch):
            return CompletableFuture.completed_future(self._build_empty_fetch_response(Errors.INVALID_REQUEST, None))

        response = self._try_complete_fetch_request(request.replica_id, fetch_partition, current_time_ms)
        partition_response = response.responses[0].partitions[0]
        if (raft_util.error_of(partition_response.error_code) is not Errors.NONE
                or len(partition_response.records or b"") > 0 or max_wait_ms == 0):
            return CompletableFuture.completed_future(response)

        # Nothing to send yet: wait for the log end to pass the fetch offset. The answer is
        # built on the raft thread, whichever thread ends the wait.
        result: CompletableFuture[Any] = CompletableFuture()
        wait = self._fetch_purgatory.await_(fetch_partition.fetch_offset, max_wait_ms)
        wait.when_complete(lambda _time_ms, exception: self._message_queue.add(_DelayedFetchCompletion(
            request_metadata, fetch_partition, request.replica_id, exception, result)))
        return result

    def _complete_delayed_fetch(self, completion: _DelayedFetchCompletion, current_time_ms: int) -> None:
        exception = completion.exception
        if exception is not None:
            # An expired wait just means no new data: answer with what there is. Any other
            # failure (leadership lost, shutting down) is the answer.
            error = Errors.for_exception(exception)
            if error is not Errors.REQUEST_TIMED_OUT:
                logger.debug("%sFailed to handle fetch from %d at %d due to %s", self._log_prefix,
                             completion.replica_id, completion.fetch_partition.fetch_offset, error.name)
                completion.response.complete(self._build_empty_fetch_response(error, None))
                return
        completion.response.complete(self._try_complete_fetch_request(
            completion.replica_id, completion.fetch_partition, current_time_ms))

    def _try_complete_fetch_request(self, replica_id: int, request: Any, current_time_ms: int) -> Any:
        try:
            error = self._validate_leader_only_request(request.current_leader_epoch)
            if error is not None:
                return self._build_empty_fetch_response(error, None)
            fetch_offset = request.fetch_offset
            last_fetched_epoch = request.last_fetched_epoch
            state = self.quorum.leader_state_or_throw()
            valid_offset_and_epoch = self._log.validate_offset_and_epoch(fetch_offset, last_fetched_epoch)
            records: Optional[MemoryRecords] = None
            if valid_offset_and_epoch.type is ValidOffsetAndEpochType.VALID:
                info = self._log.read(fetch_offset, Isolation.UNCOMMITTED)
                if state.update_replica_state(replica_id, current_time_ms, info.start_offset_metadata):
                    self._on_update_leader_high_watermark(state, current_time_ms)
                records = info.records
            return self._build_fetch_response(Errors.NONE, records, valid_offset_and_epoch, state.high_watermark())
        except Exception:
            logger.exception("%sCaught unexpected error in fetch completion of request %s", self._log_prefix, request)
            return self._build_empty_fetch_response(Errors.UNKNOWN_SERVER_ERROR, None)

    def _handle_fetch_response(self, response_metadata: "RaftResponse.Inbound", current_time_ms: int) -> bool:
        response = response_metadata.data()
        top_level_error = raft_util.error_of(response.error_code)
        if top_level_error is not Errors.NONE:
            return self._handle_top_level_error(top_level_error, response_metadata)
        if not raft_util.has_valid_topic_partition(response, self._log.topic_partition()):
            return False
        partition_response = response.responses[0].partitions[0]
        current_leader = partition_response.current_leader
        response_leader_id = _optional_leader_id(current_leader.leader_id)
        response_epoch = current_leader.leader_epoch
        error = raft_util.error_of(partition_response.error_code)

        handled = self._maybe_handle_common_response(error, response_leader_id, response_epoch, current_time_ms)
        if handled is not None:
            return handled
        state = self.quorum.follower_state_or_throw()
        if error is not Errors.NONE:
            return self._handle_unexpected_error(error, response_metadata)

        diverging_epoch = partition_response.diverging_epoch
        if diverging_epoch.epoch >= 0:
            # The leader asks us to truncate before fetching on.
            diverging = OffsetAndEpoch(diverging_epoch.end_offset, diverging_epoch.epoch)
            high_watermark = state.high_watermark()
            if high_watermark is not None and diverging.offset < high_watermark.offset:
                raise KafkaException(f"The leader requested truncation to offset {diverging.offset}, which is below "
                                     f"the current high watermark {high_watermark}")
            truncation_offset = self._log.truncate_to_end_offset(diverging)
            logger.info("%sTruncated to offset %d from Fetch response from leader %d", self._log_prefix,
                        truncation_offset, self.quorum.leader_id_or_sentinel())
        elif partition_response.snapshot_id.epoch >= 0 or partition_response.snapshot_id.end_offset >= 0:
            # The leader asks us to fetch a snapshot first.
            if partition_response.snapshot_id.epoch < 0:
                logger.error("%sThe leader sent a snapshot id with a valid end offset %d but with an invalid "
                             "epoch %d", self._log_prefix, partition_response.snapshot_id.end_offset,
                             partition_response.snapshot_id.epoch)
                return False
            if partition_response.snapshot_id.end_offset < 0:
                logger.error("%sThe leader sent a snapshot id with a valid epoch %d but with an invalid end "
                             "offset %d", self._log_prefix, partition_response.snapshot_id.epoch,
                             partition_response.snapshot_id.end_offset)
                return False
            snapshot_id = OffsetAndEpoch(partition_response.snapshot_id.end_offset,
                                         partition_response.snapshot_id.epoch)
            # Not checked against our log: the snapshot lies past our end by design.
            state.set_fetching_snapshot(self._log.store_snapshot(snapshot_id))
        else:
            records = partition_response.records
            if records is not None and len(records) > 0:
                self._append_as_follower(MemoryRecords(records))
            high_watermark = partition_response.high_watermark
            self._update_follower_high_watermark(state, None if high_watermark < 0 else high_watermark)
        state.reset_fetch_timeout(current_time_ms)
        return True

    def _append_as_follower(self, records: MemoryRecords) -> None:
        info = self._log.append_as_follower(records)
        self._log.flush()
        end_offset = self._end_offset()
        self._metrics.update_fetched_records(info.last_offset - info.first_offset + 1)
        self._metrics.update_log_end(end_offset)

    def _append_as_leader(self, records: MemoryRecords) -> LogAppendInfo:
        info = self._log.append_as_leader(records, self.quorum.epoch())
        end_offset = self._end_offset()
        self._metrics.update_append_records(info.last_offset - info.first_offset + 1)
        self._metrics.update_log_end(end_offset)
        return info

    # ---- FetchSnapshot ----------------------------------------------------------
    def _handle_fetch_snapshot_request(self, request_metadata: "RaftRequest.Inbound") -> Any:
        """Kafka 3.0's checks, in its order: INCONSISTENT_CLUSTER_ID, INVALID_REQUEST,
        UNKNOWN_TOPIC_OR_PARTITION, the leader-only errors, SNAPSHOT_NOT_FOUND (no such snapshot,
        e.g. deleted since the Fetch named it), POSITION_OUT_OF_RANGE; then the chunk of at most
        the request's max bytes from the requested position."""
        request = request_metadata.data()
        if not self._has_valid_cluster_id(request):
            return raft_util.FetchSnapshotResponseData(
                throttle_time=raft_util._ZERO, error_code=Errors.INCONSISTENT_CLUSTER_ID.error_code, topics=())
        if len(request.topics) != 1 or len(request.topics[0].partitions) != 1:
            return raft_util.error_response(ApiKeys.FETCH_SNAPSHOT, Errors.INVALID_REQUEST)
        if not raft_util.has_valid_topic_partition(request, self._log.topic_partition()):
            topic = request.topics[0]
            return raft_util.fetch_snapshot_partition_response(
                TopicPartition(topic.name, topic.partitions[0].partition), Errors.UNKNOWN_TOPIC_OR_PARTITION,
                self.quorum.epoch(), self.quorum.leader_id_or_sentinel())
        partition_snapshot = request.topics[0].partitions[0]
        tp = self._log.topic_partition()
        error = self._validate_leader_only_request(partition_snapshot.current_leader_epoch)
        if error is not None:
            return raft_util.fetch_snapshot_partition_response(tp, error, self.quorum.epoch(),
                                                               self.quorum.leader_id_or_sentinel())
        snapshot_id = OffsetAndEpoch(partition_snapshot.snapshot_id.end_offset, partition_snapshot.snapshot_id.epoch)
        snapshot = self._log.read_snapshot(snapshot_id)
        if snapshot is None:
            return raft_util.fetch_snapshot_partition_response(tp, Errors.SNAPSHOT_NOT_FOUND, self.quorum.epoch(),
                                                               self.quorum.leader_id_or_sentinel())
        snapshot_size = snapshot.size_in_bytes()
        position = partition_snapshot.position
        if position < 0 or position >= snapshot_size:
            return raft_util.fetch_snapshot_partition_response(tp, Errors.POSITION_OUT_OF_RANGE, self.quorum.epoch(),
                                                               self.quorum.leader_id_or_sentinel())
        if position > INT_MAX:
            raise RuntimeError(f"Trying to fetch a snapshot with size ({snapshot_size}) and a position ({position}) "
                               f"larger than {INT_MAX}")
        chunk = snapshot.slice(position, min(int(request.max_bytes), snapshot_size, INT_MAX))
        return raft_util.fetch_snapshot_partition_response(
            tp, Errors.NONE, self.quorum.epoch(), self.quorum.leader_id_or_sentinel(), snapshot_id=snapshot_id,
            size=snapshot_size, position=position, unaligned_records=chunk)

    def _handle_fetch_snapshot_response(self, response_metadata: "RaftResponse.Inbound", current_time_ms: int) -> bool:
        response = response_metadata.data()
        top_level_error = raft_util.error_of(response.error_code)
        if top_level_error is not Errors.NONE:
            return self._handle_top_level_error(top_level_error, response_metadata)
        tp = self._log.topic_partition()
        if (len(response.topics) != 1 or response.topics[0].name != tp.topic
                or len(response.topics[0].partitions) != 1 or response.topics[0].partitions[0].index != tp.partition):
            return False
        partition_snapshot = response.topics[0].partitions[0]
        current_leader = partition_snapshot.current_leader
        error = raft_util.error_of(partition_snapshot.error_code)
        handled = self._maybe_handle_common_response(error, _optional_leader_id(current_leader.leader_id),
                                                     current_leader.leader_epoch, current_time_ms)
        if handled is not None:
            return handled
        state = self.quorum.follower_state_or_throw()
        if (error is Errors.SNAPSHOT_NOT_FOUND or partition_snapshot.snapshot_id.end_offset < 0
                or partition_snapshot.snapshot_id.epoch < 0):
            # The leader no longer has the snapshot (it moved on to a newer one): start over
            # with a Fetch, which names the current one.
            logger.info("%sLeader doesn't know about snapshot id %s, returned error %s and snapshot id %s",
                        self._log_prefix, state.fetching_snapshot(), error.name, partition_snapshot.snapshot_id)
            state.set_fetching_snapshot(None)
            state.reset_fetch_timeout(current_time_ms)
            return True
        snapshot_id = OffsetAndEpoch(partition_snapshot.snapshot_id.end_offset, partition_snapshot.snapshot_id.epoch)
        snapshot = state.fetching_snapshot()
        if snapshot is None:
            raise RuntimeError(f"Received unexpected fetch snapshot response: {partition_snapshot}")
        if snapshot.snapshot_id() != snapshot_id:
            raise RuntimeError(f"Received fetch snapshot response with an invalid id. Expected "
                               f"{snapshot.snapshot_id()}; Received {snapshot_id}")
        if snapshot.size_in_bytes() != partition_snapshot.position:
            raise RuntimeError(f"Received fetch snapshot response with an invalid position. Expected "
                               f"{snapshot.size_in_bytes()}; Received {partition_snapshot.position}")
        snapshot.append(partition_snapshot.unaligned_records or b"")
        if snapshot.size_in_bytes() == partition_snapshot.size:
            # The whole snapshot is here: it replaces our log up to its end offset.
            snapshot.freeze()
            state.set_fetching_snapshot(None)
            if self._log.truncate_to_latest_snapshot():
                logger.info("%sFetched snapshot %s from leader %d; the log now starts at %d", self._log_prefix,
                            snapshot_id, self.quorum.leader_id_or_sentinel(), self._log.start_offset())
                self._update_follower_high_watermark(state, self._log.high_watermark().offset)
            else:
                raise RuntimeError(f"Full log truncation expected but didn't happen. Snapshot of "
                                   f"{snapshot.snapshot_id()}, log end offset {self._log.end_offset()}, last fetched "
                                   f"{self._log.last_fetched_epoch()}")
        state.reset_fetch_timeout(current_time_ms)
        return True

    def _build_fetch_snapshot_request(self, snapshot_id: OffsetAndEpoch, snapshot_size: int) -> Any:
        return raft_util.singleton_fetch_snapshot_request(
            self._cluster_id, self._log.topic_partition(), self.quorum.local_id_or_sentinel(), self.quorum.epoch(),
            snapshot_id, snapshot_size, MAX_FETCH_SIZE_BYTES)

    # ---- DescribeQuorum ---------------------------------------------------------
    def _handle_describe_quorum_request(self, request_metadata: "RaftRequest.Inbound", current_time_ms: int) -> Any:
        request = request_metadata.data()
        if not raft_util.has_valid_topic_partition(request, self._log.topic_partition()):
            return raft_util.describe_quorum_partition_error_response(request, Errors.UNKNOWN_TOPIC_OR_PARTITION)
        if not self.quorum.is_leader():
            return raft_util.describe_quorum_top_level_error_response(Errors.INVALID_REQUEST)
        leader_state = self.quorum.leader_state_or_throw()
        high_watermark = leader_state.high_watermark()
        return raft_util.describe_quorum_response_for(
            self._log.topic_partition(), leader_state.local_id(), leader_state.epoch(),
            -1 if high_watermark is None else high_watermark.offset, leader_state.get_voter_end_offsets(),
            leader_state.get_observer_states(current_time_ms))

    # ---- common response handling -----------------------------------------------
    def _has_consistent_leader(self, epoch: int, leader_id: Optional[int]) -> bool:
        # Only elected leaders travel in messages, so a leader we learn of must match the one
        # we know for that epoch; one naming us must find us leading.
        if leader_id is not None and leader_id == self.quorum.local_id_or_sentinel():
            return self.quorum.is_leader()
        return (epoch != self.quorum.epoch() or leader_id is None or not self.quorum.has_leader()
                or leader_id == self.quorum.leader_id())

    def _maybe_handle_common_response(self, error: Errors, leader_id: Optional[int], epoch: int,
                                      current_time_ms: int) -> Optional[bool]:
        """None: not handled here, the API's handler goes on. True: handled, no retry needed.
        False: handled, but the request must be retried (after the backoff)."""
        if epoch < self.quorum.epoch() or error is Errors.UNKNOWN_LEADER_EPOCH:
            # Our epoch is newer: the answer no longer matters.
            return True
        if epoch > self.quorum.epoch() or error in (Errors.FENCED_LEADER_EPOCH, Errors.NOT_LEADER_OR_FOLLOWER):
            # Our epoch is stale; the response says what is current.
            self._maybe_transition(leader_id, epoch, current_time_ms)
            return True
        if epoch == self.quorum.epoch() and leader_id is not None and not self.quorum.has_leader():
            # We learn the leader of our epoch. Without an error the handler goes on, so an
            # observer finds the leader and appends in one Fetch round trip.
            self._transition_to_follower(epoch, leader_id, current_time_ms)
            return None if error is Errors.NONE else True
        if error is Errors.BROKER_NOT_AVAILABLE:
            return False
        if error is Errors.INCONSISTENT_GROUP_PROTOCOL:
            raise RuntimeError("Received error indicating inconsistent voter sets")
        if error is Errors.INVALID_REQUEST:
            raise RuntimeError("Received unexpected invalid request error")
        return None

    def _maybe_transition(self, leader_id: Optional[int], epoch: int, current_time_ms: int) -> None:
        if not self._has_consistent_leader(epoch, leader_id):
            raise RuntimeError(f"Received request or response with leader {leader_id} and epoch {epoch} which is "
                               f"inconsistent with current leader {self.quorum.leader_id()} and epoch "
                               f"{self.quorum.epoch()}")
        if epoch > self.quorum.epoch():
            if leader_id is not None:
                self._transition_to_follower(epoch, leader_id, current_time_ms)
            else:
                self._transition_to_unattached(epoch)
        elif leader_id is not None and not self.quorum.has_leader():
            # The leader of our current epoch, which we did not know.
            self._transition_to_follower(epoch, leader_id, current_time_ms)

    def _handle_top_level_error(self, error: Errors, response: "RaftResponse.Inbound") -> bool:
        if error is Errors.BROKER_NOT_AVAILABLE:
            return False
        if error is Errors.CLUSTER_AUTHORIZATION_FAILED:
            raise Errors.CLUSTER_AUTHORIZATION_FAILED.exception(
                f"Received cluster authorization error in response {response}")
        return self._handle_unexpected_error(error, response)

    def _handle_unexpected_error(self, error: Errors, response: "RaftResponse.Inbound") -> bool:
        logger.error("%sUnexpected error %s in %s response: %s", self._log_prefix, error.name,
                     raft_util.api_key_of(response.data()).name, response)
        return False

    def _handle_response(self, response: "RaftResponse.Inbound", current_time_ms: int) -> None:
        data = response.data()
        if isinstance(data, raft_util.FetchResponseData):
            handled_successfully = self._handle_fetch_response(response, current_time_ms)
        elif isinstance(data, raft_util.VoteResponseData):
            handled_successfully = self._handle_vote_response(response, current_time_ms)
        elif isinstance(data, raft_util.BeginQuorumEpochResponseData):
            handled_successfully = self._handle_begin_quorum_epoch_response(response, current_time_ms)
        elif isinstance(data, raft_util.EndQuorumEpochResponseData):
            handled_successfully = self._handle_end_quorum_epoch_response(response, current_time_ms)
        elif isinstance(data, raft_util.FetchSnapshotResponseData):
            handled_successfully = self._handle_fetch_snapshot_response(response, current_time_ms)
        else:
            raise ValueError(f"Received unexpected response type: {type(data).__name__}")
        connection = self._request_manager.get_or_create(response.source_id())
        if handled_successfully:
            connection.on_response_received(response.correlation_id())
        else:
            connection.on_response_error(response.correlation_id(), current_time_ms)

    # ---- request validation -----------------------------------------------------
    def _validate_voter_only_request(self, remote_node_id: int, request_epoch: int) -> Optional[Errors]:
        """The error for a request only voters may send each other, or None."""
        if request_epoch < self.quorum.epoch():
            return Errors.FENCED_LEADER_EPOCH
        if remote_node_id < 0:
            return Errors.INVALID_REQUEST
        if self.quorum.is_observer() or not self.quorum.is_voter(remote_node_id):
            return Errors.INCONSISTENT_VOTER_SET
        return None

    def _validate_leader_only_request(self, request_epoch: int) -> Optional[Errors]:
        """The error for a request meant for the leader of ``request_epoch``, or None."""
        if request_epoch < self.quorum.epoch():
            return Errors.FENCED_LEADER_EPOCH
        if request_epoch > self.quorum.epoch():
            return Errors.UNKNOWN_LEADER_EPOCH
        if not self.quorum.is_leader():
            # An observer may fetch from a non-leader of the same epoch while it looks for the
            # leader; the answer names the leader if we know it.
            return Errors.NOT_LEADER_OR_FOLLOWER
        if self._get_shutdown() is not None:
            return Errors.BROKER_NOT_AVAILABLE
        return None

    def _handle_request(self, request: "RaftRequest.Inbound", current_time_ms: int) -> None:
        data = request.data()
        api_key = raft_util.api_key_of(data)
        if isinstance(data, raft_util.FetchRequestData):
            response_future = self._handle_fetch_request(request, current_time_ms)
        elif isinstance(data, raft_util.VoteRequestData):
            response_future = CompletableFuture.completed_future(self._handle_vote_request(request))
        elif isinstance(data, raft_util.BeginQuorumEpochRequestData):
            response_future = CompletableFuture.completed_future(
                self._handle_begin_quorum_epoch_request(request, current_time_ms))
        elif isinstance(data, raft_util.EndQuorumEpochRequestData):
            response_future = CompletableFuture.completed_future(
                self._handle_end_quorum_epoch_request(request, current_time_ms))
        elif isinstance(data, raft_util.DescribeQuorumRequestData):
            response_future = CompletableFuture.completed_future(
                self._handle_describe_quorum_request(request, current_time_ms))
        elif isinstance(data, raft_util.FetchSnapshotRequestData):
            response_future = CompletableFuture.completed_future(self._handle_fetch_snapshot_request(request))
        else:
            raise ValueError(f"Unexpected request type {api_key.name}")

        def send_response(response: Any, exception: Optional[BaseException]) -> None:
            message = response if exception is None else raft_util.error_response(
                api_key, Errors.for_exception(exception))
            request.completion.complete(RaftResponse.Outbound(request.correlation_id(), message))

        response_future.when_complete(send_response)

    def _handle_inbound_message(self, message: Any, current_time_ms: int) -> None:
        if isinstance(message, _DelayedFetchCompletion):
            self._complete_delayed_fetch(message, current_time_ms)
        elif isinstance(message, RaftRequest.Inbound):
            self._handle_request(message, current_time_ms)
        elif isinstance(message, RaftResponse.Inbound):
            connection = self._request_manager.get_or_create(message.source_id())
            if connection.is_response_expected(message.correlation_id()):
                self._handle_response(message, current_time_ms)
            else:
                logger.debug("%sIgnoring response %s since it is no longer needed", self._log_prefix, message)
        else:
            raise ValueError(f"Unexpected message {message}")

    # ---- sending ----------------------------------------------------------------
    def _maybe_send_request(self, current_time_ms: int, destination_id: int,
                            request_supplier: Callable[[], Any]) -> int:
        """Send if the connection allows; returns how long until it might be worth trying again."""
        connection = self._request_manager.get_or_create(destination_id)
        if connection.is_backing_off(current_time_ms):
            return connection.remaining_backoff_ms(current_time_ms)
        if connection.is_ready(current_time_ms):
            correlation_id = self._channel.new_correlation_id()
            request = request_supplier()
            request_message = RaftRequest.Outbound(correlation_id, request, destination_id, current_time_ms)

            def on_complete(response: Any, exception: Optional[BaseException]) -> None:
                if exception is not None:
                    error = Errors.for_exception(exception)
                    response = RaftResponse.Inbound(
                        correlation_id, raft_util.error_response(raft_util.api_key_of(request), error), destination_id)
                self._message_queue.add(response)

            request_message.completion.when_complete(on_complete)
            self._channel.send(request_message)
            connection.on_request_sent(correlation_id, current_time_ms)
            return LONG_MAX
        return connection.remaining_request_time_ms(current_time_ms)

    def _maybe_send_requests(self, current_time_ms: int, destination_ids: Sequence[int],
                             request_supplier: Callable[[], Any]) -> int:
        min_backoff_ms = LONG_MAX
        for destination_id in sorted(destination_ids):
            min_backoff_ms = min(min_backoff_ms,
                                 self._maybe_send_request(current_time_ms, destination_id, request_supplier))
        return min_backoff_ms

    def _build_end_quorum_epoch_request(self, state: ResignedState) -> Any:
        return raft_util.end_quorum_epoch_request_for(self._log.topic_partition(), self.quorum.epoch(),
                                                      self.quorum.local_id_or_throw(), state.preferred_successors())

    def _build_begin_quorum_epoch_request(self) -> Any:
        return raft_util.begin_quorum_epoch_request_for(self._log.topic_partition(), self.quorum.epoch(),
                                                        self.quorum.local_id_or_throw())

    def _build_vote_request(self) -> Any:
        end_offset = self._end_offset()
        return raft_util.vote_request_for(self._log.topic_partition(), self.quorum.epoch(),
                                          self.quorum.local_id_or_throw(), end_offset.epoch, end_offset.offset)

    def _build_fetch_request(self) -> Any:
        return raft_util.singleton_fetch_request(
            self._log.topic_partition(), current_leader_epoch=self.quorum.epoch(),
            fetch_offset=self._log.end_offset().offset, last_fetched_epoch=self._log.last_fetched_epoch(),
            replica_id=self.quorum.local_id_or_sentinel(), max_wait_ms=self._fetch_max_wait_ms,
            max_bytes=MAX_FETCH_SIZE_BYTES, cluster_id=self._cluster_id)

    def _maybe_send_any_voter_fetch(self, current_time_ms: int) -> int:
        ready_voter_id = self._request_manager.find_ready_voter(current_time_ms)
        if ready_voter_id is not None:
            return self._maybe_send_request(current_time_ms, ready_voter_id, self._build_fetch_request)
        return self._request_manager.backoff_before_available_voter(current_time_ms)

    # ---- lifecycle --------------------------------------------------------------
    def is_running(self) -> bool:
        shutdown = self._get_shutdown()
        return shutdown is None or not shutdown.is_finished()

    def is_shutting_down(self) -> bool:
        shutdown = self._get_shutdown()
        return shutdown is not None and not shutdown.is_finished()

    # ---- polling ----------------------------------------------------------------
    def _append_batch(self, state: LeaderState, batch: CompletedBatch[T], append_time_ms: int) -> None:
        try:
            epoch = state.epoch()
            info = self._append_as_leader(batch.data)
            offset_and_epoch = OffsetAndEpoch(info.last_offset, epoch)
            future = self._append_purgatory.await_(offset_and_epoch.offset + 1, INT_MAX)

            def on_commit(commit_time_ms: Optional[int], exception: Optional[BaseException]) -> None:
                num_records = len(batch.records)
                if exception is not None:
                    logger.debug("%sFailed to commit %d records at %s: %s", self._log_prefix, num_records,
                                 offset_and_epoch, exception)
                    return
                elapsed = max(0, (commit_time_ms or append_time_ms) - append_time_ms)
                self._metrics.update_commit_latency(elapsed / max(1, num_records), append_time_ms)
                self._maybe_fire_handle_commit(batch.base_offset, epoch, batch.records, append_time_ms,
                                               batch.size_in_bytes())

            future.when_complete(on_commit)
        finally:
            batch.release()

    def _maybe_append_batches(self, state: LeaderState, current_time_ms: int) -> int:
        accumulator = self._get_accumulator()
        assert accumulator is not None
        time_until_drain = accumulator.time_until_drain(current_time_ms)
        if time_until_drain <= 0:
            batches = accumulator.drain()
            for batch in batches:
                self._append_batch(state, batch, current_time_ms)
            self._flush_leader_log(state, current_time_ms)
        return time_until_drain

    def _poll_resigned(self, current_time_ms: int) -> int:
        state = self.quorum.resigned_state_or_throw()
        end_quorum_backoff_ms = self._maybe_send_requests(
            current_time_ms, sorted(state.unacked_voters()), lambda: self._build_end_quorum_epoch_request(state))
        shutdown = self._get_shutdown()
        if shutdown is not None:
            # Shutting down: stay resigned until the shutdown ends or an election moves the epoch.
            state_timeout_ms = shutdown.remaining_time_ms()
        elif state.has_election_timeout_expired(current_time_ms):
            self._transition_to_candidate(current_time_ms)
            state_timeout_ms = 0
        else:
            state_timeout_ms = state.remaining_election_time_ms(current_time_ms)
        return min(state_timeout_ms, end_quorum_backoff_ms)

    def _poll_leader(self, current_time_ms: int) -> int:
        state = self.quorum.leader_state_or_throw()
        self._maybe_fire_handle_claim(state)
        if self._get_shutdown() is not None or state.is_resign_requested():
            self._transition_to_resigned(state.non_leader_voters_by_descending_fetch_offset())
            return 0
        time_until_flush = self._maybe_append_batches(state, current_time_ms)
        time_until_send = self._maybe_send_requests(current_time_ms, sorted(state.non_acknowledging_voters()),
                                                    self._build_begin_quorum_epoch_request)
        return min(time_until_flush, time_until_send)

    def _maybe_send_vote_requests(self, state: CandidateState, current_time_ms: int) -> int:
        # Ask on while winning is still possible.
        if not state.is_vote_rejected():
            return self._maybe_send_requests(current_time_ms, sorted(state.unrecorded_voters()),
                                             self._build_vote_request)
        return LONG_MAX

    def _poll_candidate(self, current_time_ms: int) -> int:
        state = self.quorum.candidate_state_or_throw()
        shutdown = self._get_shutdown()
        if shutdown is not None:
            # Shutting down mid-election: carry on until we win (and can resign), another
            # leader is elected, or the shutdown times out.
            min_request_backoff_ms = self._maybe_send_vote_requests(state, current_time_ms)
            return min(shutdown.remaining_time_ms(), min_request_backoff_ms)
        if state.is_backing_off():
            if state.is_backoff_complete(current_time_ms):
                logger.info("%sRe-elect as candidate after election backoff has completed", self._log_prefix)
                self._transition_to_candidate(current_time_ms)
                return 0
            return state.remaining_backoff_ms(current_time_ms)
        if state.has_election_timeout_expired(current_time_ms):
            backoff_duration_ms = self._binary_exponential_election_backoff_ms(state.retries())
            logger.debug("%sElection has timed out, backing off for %dms before becoming a candidate again",
                         self._log_prefix, backoff_duration_ms)
            state.start_backing_off(current_time_ms, backoff_duration_ms)
            return backoff_duration_ms
        min_request_backoff_ms = self._maybe_send_vote_requests(state, current_time_ms)
        return min(min_request_backoff_ms, state.remaining_election_time_ms(current_time_ms))

    def _poll_follower(self, current_time_ms: int) -> int:
        state = self.quorum.follower_state_or_throw()
        if self.quorum.is_voter():
            return self._poll_follower_as_voter(state, current_time_ms)
        return self._poll_follower_as_observer(state, current_time_ms)

    def _poll_follower_as_voter(self, state: FollowerState, current_time_ms: int) -> int:
        if self._get_shutdown() is not None:
            # A follower can stop at once; it must not stand for election now.
            return 0
        if state.has_fetch_timeout_expired(current_time_ms):
            logger.info("%sBecome candidate due to fetch timeout", self._log_prefix)
            self._transition_to_candidate(current_time_ms)
            return 0
        backoff_ms = self._maybe_send_fetch_or_fetch_snapshot(state, current_time_ms)
        return min(backoff_ms, state.remaining_fetch_time_ms(current_time_ms))

    def _maybe_send_fetch_or_fetch_snapshot(self, state: FollowerState, current_time_ms: int) -> int:
        snapshot = state.fetching_snapshot()
        if snapshot is not None:
            snapshot_id, snapshot_size = snapshot.snapshot_id(), snapshot.size_in_bytes()
            request_supplier: Callable[[], Any] = lambda: self._build_fetch_snapshot_request(snapshot_id, snapshot_size)
        else:
            request_supplier = self._build_fetch_request
        return self._maybe_send_request(current_time_ms, state.leader_id(), request_supplier)

    def _poll_follower_as_observer(self, state: FollowerState, current_time_ms: int) -> int:
        if state.has_fetch_timeout_expired(current_time_ms):
            return self._maybe_send_any_voter_fetch(current_time_ms)
        # If the leader does not answer, ask another voter: the leadership may have moved.
        connection = self._request_manager.get_or_create(state.leader_id())
        if connection.has_request_timed_out(current_time_ms):
            backoff_ms = self._maybe_send_any_voter_fetch(current_time_ms)
            connection.reset()
        elif connection.is_backing_off(current_time_ms):
            backoff_ms = self._maybe_send_any_voter_fetch(current_time_ms)
        else:
            backoff_ms = self._maybe_send_fetch_or_fetch_snapshot(state, current_time_ms)
        return min(backoff_ms, state.remaining_fetch_time_ms(current_time_ms))

    def _poll_voted(self, current_time_ms: int) -> int:
        state = self.quorum.voted_state_or_throw()
        shutdown = self._get_shutdown()
        if shutdown is not None:
            return shutdown.remaining_time_ms()
        if state.has_election_timeout_expired(current_time_ms):
            self._transition_to_candidate(current_time_ms)
            return 0
        return state.remaining_election_time_ms(current_time_ms)

    def _poll_unattached(self, current_time_ms: int) -> int:
        state = self.quorum.unattached_state_or_throw()
        if self.quorum.is_voter():
            shutdown = self._get_shutdown()
            if shutdown is not None:
                return shutdown.remaining_time_ms()
            if state.has_election_timeout_expired(current_time_ms):
                self._transition_to_candidate(current_time_ms)
                return 0
            return state.remaining_election_time_ms(current_time_ms)
        fetch_backoff_ms = self._maybe_send_any_voter_fetch(current_time_ms)
        return min(fetch_backoff_ms, state.remaining_election_time_ms(current_time_ms))

    def _poll_current_state(self, current_time_ms: int) -> int:
        quorum = self.quorum
        if quorum.is_leader():
            return self._poll_leader(current_time_ms)
        if quorum.is_candidate():
            return self._poll_candidate(current_time_ms)
        if quorum.is_follower():
            return self._poll_follower(current_time_ms)
        if quorum.is_voted():
            return self._poll_voted(current_time_ms)
        if quorum.is_unattached():
            return self._poll_unattached(current_time_ms)
        if quorum.is_resigned():
            return self._poll_resigned(current_time_ms)
        raise RuntimeError(f"Unexpected quorum state {quorum}")

    def _poll_listeners(self) -> None:
        with self._shared_lock:
            pending, self._pending_listeners = self._pending_listeners, []
        for listener in pending:
            self._listener_contexts.append(ListenerContext(self, listener))
        high_watermark = self.quorum.high_watermark()
        if high_watermark is not None:
            lagging = []
            for context in self._listener_contexts:
                next_expected_offset = context.next_expected_offset()
                if next_expected_offset is not None and next_expected_offset < high_watermark.offset:
                    lagging.append(context)
            self._update_listeners_progress(lagging, high_watermark.offset)

    def _maybe_complete_shutdown(self, current_time_ms: int) -> bool:
        shutdown = self._get_shutdown()
        if shutdown is None:
            return False
        shutdown.update(current_time_ms)
        if shutdown.has_timed_out():
            shutdown.fail_with_timeout()
            return True
        if self.quorum.is_observer() or not self.quorum.remote_voters() or self.quorum.has_remote_leader():
            shutdown.complete()
            return True
        return False

    def wakeup(self) -> None:
        self._message_queue.wakeup()

    def handle(self, request: "RaftRequest.Inbound") -> None:
        """An inbound request from the network; the answer arrives in ``request.completion``."""
        if request is None:
            raise ValueError("request must not be None")
        self._message_queue.add(request)

    def poll(self) -> None:
        """One turn of the raft thread: act on the current state, then handle at most one message."""
        self._poll_listeners()
        current_time_ms = self._time.milliseconds()
        if self._maybe_complete_shutdown(current_time_ms):
            return
        poll_state_timeout_ms = self._poll_current_state(current_time_ms)
        cleaning_timeout_ms = self._snapshot_cleaner.maybe_clean(current_time_ms)
        poll_timeout_ms = min(poll_state_timeout_ms, cleaning_timeout_ms)
        self._metrics.update_poll_start(current_time_ms)
        message = self._message_queue.poll(poll_timeout_ms)
        current_time_ms = self._time.milliseconds()
        self._metrics.update_poll_end(current_time_ms)
        if message is not None:
            self._handle_inbound_message(message, current_time_ms)

    def schedule_append(self, epoch: int, records: Sequence[T]) -> Optional[int]:
        return self._append(epoch, records, False)

    def schedule_atomic_append(self, epoch: int, records: Sequence[T]) -> Optional[int]:
        return self._append(epoch, records, True)

    def _append(self, epoch: int, records: Sequence[T], is_atomic: bool) -> Optional[int]:
        accumulator = self._get_accumulator()
        if accumulator is None:
            return LONG_MAX
        is_first_append = accumulator.is_empty()
        if is_atomic:
            offset = accumulator.append_atomic(epoch, records)
        else:
            offset = accumulator.append(epoch, records)
        # Wake the raft thread on the first append (so it arms the linger timer) or when a
        # drain is due; appends in between ride along.
        if is_first_append or accumulator.needs_drain(self._time.milliseconds()):
            self.wakeup()
        return offset

    def shutdown(self, timeout_ms: int) -> CompletableFuture[None]:
        logger.info("%sBeginning graceful shutdown", self._log_prefix)
        future: CompletableFuture[None] = CompletableFuture()
        with self._shared_lock:
            self._shutdown = GracefulShutdown(self._time, timeout_ms, future)
        self.wakeup()
        return future

    def create_snapshot(self, committed_offset: int, committed_epoch: int,
                        last_contained_log_time: int) -> Optional[SnapshotWriter[T]]:
        return SnapshotWriter.create_with_header(
            lambda: self._log.create_new_snapshot(OffsetAndEpoch(committed_offset + 1, committed_epoch)),
            MAX_BATCH_SIZE_BYTES, self._time, last_contained_log_time, CompressionType.NONE, self.serde)

    def close(self) -> None:
        self._metrics.close()

    def high_watermark(self) -> Optional[int]:
        high_watermark = self.quorum.high_watermark()
        return None if high_watermark is None else high_watermark.offset

    @property
    def metrics(self) -> KafkaRaftMetrics:
        return self._metrics
