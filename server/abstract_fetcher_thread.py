"""Port of core/src/main/scala/kafka/server/AbstractFetcherThread.scala (Kafka 2.8.2).

A fetcher thread copies a set of partitions from one source broker. Each partition has a
``PartitionFetchState``: the offset to fetch next, the leader epoch it follows, and a state,

* ``TRUNCATING``: its log may hold records the leader does not have; before fetching it
  must find where its log and the leader's part, and cut its own log there;
* ``FETCHING``: it fetches from ``fetch_offset`` and appends what comes back;

either of which may be *delayed* (backing off for ``fetch_back_off_ms`` after an error).
The states live in one insertion-ordered map; a partition that made progress or failed
moves to the end, so a fetch's byte budget rotates over all partitions (Kafka's
PartitionStates).

``do_work`` is Kafka's loop, ``maybe_truncate`` then ``maybe_fetch``:

1. **truncate** (``_maybe_truncate``). Truncating partitions whose log knows its latest
   leader epoch ask the leader, with one OffsetsForLeaderEpoch request, where that epoch
   ends there (KIP-101); the answer is turned into a truncation offset by
   ``get_offset_truncation_state`` (KIP-279: an answer for an older epoch truncates that
   far and asks again). Partitions without epochs fall back to their high watermark.
2. **fetch** (``_maybe_fetch``): one Fetch request for every partition ready to fetch; each
   partition of the answer is appended (``process_partition_data``) if the partition still
   waits for exactly that offset. Errors are handled as Kafka does: OFFSET_OUT_OF_RANGE
   resets the fetch offset from the leader's ListOffsets (``_fetch_offset_and_truncate``);
   FENCED_LEADER_EPOCH takes the partition out until the next LeaderAndIsr says more;
   UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER and the rest back off and retry.
   From inter.broker.protocol.version 2.7-IV1 on, truncation happens on fetch instead: a
   follower that knows its epochs starts out fetching, sends the epoch of its last fetched
   batch, and the leader answers a diverging log with a *diverging epoch* that goes
   through the same ``get_offset_truncation_state``.

``partition_map_lock`` guards the states; appends and truncations happen under it, so a
partition removed or re-added meanwhile (a leadership change) never sees a write meant for
its previous state. Network requests are made without it, except where Kafka makes them
under it too (resetting an out-of-range offset).

A failure never ends the thread: an exception about one partition backs that partition off
or marks it failed (``FailedPartitions``, cleared by the next LeaderAndIsr for it); a failed
request backs every partition off.
"""
from __future__ import annotations

import abc
import enum
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional

from kafka_py.core.cluster.broker import BrokerEndPoint
from kafka_py.core.cluster.partition import FencedLeaderEpochException, UnknownLeaderEpochException
from kafka_py.clients.common.errors import (
    CorruptRecordException,
    InvalidRecordException,
    KafkaStorageException,
    NotLeaderOrFollowerException,
    UnknownTopicOrPartitionException,
)
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_append_info import LogAppendInfo
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, EpochEndOffset, PartitionData
from kafka_py.server.replica_manager_types import FetchPartitionData
from kafka_py.core.utils.delayed_item import DelayedItem
from kafka_py.core.utils.shutdownable_thread import ShutdownableThread
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:
    # AbstractFetcherManager.scala's, as in Kafka; the manager module imports this one
    from kafka_py.server.abstract_fetcher_manager import InitialFetchState

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------- the thread


class AbstractFetcherThread(ShutdownableThread, abc.ABC):
    """Fetches partitions from ``source_broker``; ReplicaFetcherThread fills in the I/O."""

    def __init__(self, name: str, client_id: str, source_broker: BrokerEndPoint,
                 failed_partitions: FailedPartitions, fetch_back_off_ms: int = 0, is_interruptible: bool = True,
                 time: Time = Time.SYSTEM) -> None:
        super().__init__(name, is_interruptible, daemon=True)
        self.client_id = client_id
        self.source_broker = source_broker
        self.failed_partitions = failed_partitions
        self.fetch_back_off_ms = fetch_back_off_ms
        self.time = time
        self._partition_states = PartitionStates()
        # reentrant, as Kafka's ReentrantLock: a truncation under it may mark a partition failed
        self.partition_map_lock = threading.RLock()
        self._partition_map_cond = threading.Condition(self.partition_map_lock)
        self.fetcher_stats = FetcherStats(client_id, source_broker)
        self.fetcher_lag_stats = FetcherLagStats(client_id)

    # ------------------------------------------------------------------ what subclasses provide

    @abc.abstractmethod
    def process_partition_data(self, topic_partition: TopicPartition, fetch_offset: int,
                               partition_data: FetchPartitionData) -> Optional[LogAppendInfo]:
        """Append a partition's fetched records; returns what the append did."""

    @abc.abstractmethod
    def truncate(self, topic_partition: TopicPartition, truncation_state: OffsetTruncationState) -> None: ...

    @abc.abstractmethod
    def truncate_fully_and_start_at(self, topic_partition: TopicPartition, offset: int) -> None: ...

    @abc.abstractmethod
    def build_fetch(self, partition_map: Mapping[TopicPartition, PartitionFetchState]) -> ResultWithPartitions:
        """ResultWithPartitions(Optional[ReplicaFetch], partitions that could not be included)."""

    @abc.abstractmethod
    def latest_epoch(self, topic_partition: TopicPartition) -> Optional[int]: ...

    @abc.abstractmethod
    def log_start_offset(self, topic_partition: TopicPartition) -> int: ...

    @abc.abstractmethod
    def log_end_offset(self, topic_partition: TopicPartition) -> int: ...

    @abc.abstractmethod
    def end_offset_for_epoch(self, topic_partition: TopicPartition, epoch: int) -> Optional[OffsetAndEpoch]: ...

    @abc.abstractmethod
    def fetch_epoch_end_offsets(self, partitions: Mapping[TopicPartition, EpochData]
                                ) -> dict[TopicPartition, EpochEndOffset]:
        """The leader's answers; failures come back as per-partition errors, never raised."""

    @abc.abstractmethod
    def fetch_from_leader(self, fetch_request: Any) -> dict[TopicPartition, FetchPartitionData]: ...

    @abc.abstractmethod
    def fetch_earliest_offset_from_leader(self, topic_partition: TopicPartition, current_leader_epoch: int) -> int: ...

    @abc.abstractmethod
    def fetch_latest_offset_from_leader(self, topic_partition: TopicPartition, current_leader_epoch: int) -> int: ...

    @property
    @abc.abstractmethod
    def is_offset_for_leader_epoch_supported(self) -> bool: ...

    @property
    @abc.abstractmethod
    def is_truncation_on_fetch_supported(self) -> bool: ...

    # ------------------------------------------------------------------ lifecycle

    def shutdown(self) -> None:
        self.initiate_shutdown()
        # wake a wait for partitions or a back-off
        with self.partition_map_lock:
            self._partition_map_cond.notify_all()
        self.await_shutdown()
        # this thread's metrics go with it (a new thread for the same broker makes them again)
        self.fetcher_lag_stats.unregister()
        self.fetcher_stats.unregister()

    def do_work(self) -> None:
        try:
            self._maybe_truncate()
            self._maybe_fetch()
        except Exception:  # noqa: BLE001 - a bug or a surprise about one round must not end replication
            if self.is_running:
                self.logger.exception("Error in fetcher round; backing off for %d ms",
                                      self.fetch_back_off_ms)
                with self.partition_map_lock:
                    self._await_back_off()

    def _await_back_off(self) -> None:
        """Wait ``fetch_back_off_ms`` or until partitions change or shutdown; lock held."""
        if self.is_running:
            self._partition_map_cond.wait(self.fetch_back_off_ms / 1000.0)

    # ------------------------------------------------------------------ fetching

    def _maybe_fetch(self) -> None:
        with self.partition_map_lock:
            result = self.build_fetch(self._partition_states.partition_state_map())
            fetch: Optional[ReplicaFetch] = result.result
            self._handle_partitions_with_errors(result.partitions_with_error, "maybe_fetch")
            if fetch is None:
                self.logger.debug("There are no active partitions. Back off for %d ms before sending a fetch request",
                                  self.fetch_back_off_ms)
                self._await_back_off()
        if fetch is not None:
            self._process_fetch_request(fetch.partition_data, fetch.fetch_request)

    def _handle_partitions_with_errors(self, partitions: Iterable[TopicPartition], method_name: str) -> None:
        partitions = list(partitions)
        if partitions:
            self.logger.debug("Handling errors in %s for partitions %s", method_name, partitions)
            self.delay_partitions(partitions, self.fetch_back_off_ms)

    def _process_fetch_request(self, session_partitions: Mapping[TopicPartition, PartitionData],
                               fetch_request: Any) -> None:
        partitions_with_error: set[TopicPartition] = set()
        diverging_end_offsets: dict[TopicPartition, EpochEndOffset] = {}
        response_data: Mapping[TopicPartition, FetchPartitionData] = {}
        try:
            self.logger.debug("Sending fetch request %s", fetch_request)
            response_data = self.fetch_from_leader(fetch_request)
            self.fetcher_stats.request_rate.mark()
        except Exception as e:  # noqa: BLE001 - a failed fetch backs every partition off
            if self.is_running:
                self.logger.warning("Error in response for fetch request %s: %s", fetch_request, e,
                                    exc_info=self.logger.isEnabledFor(logging.DEBUG))
                with self.partition_map_lock:
                    partitions_with_error.update(self._partition_states.partition_set())
                    # Kafka sleeps here too, and the partitions are delayed below as well
                    self._await_back_off()

        if response_data:
            with self.partition_map_lock:
                for tp, partition_data in response_data.items():
                    self._process_partition_response(tp, partition_data, session_partitions,
                                                     partitions_with_error, diverging_end_offsets)

        if diverging_end_offsets:
            self.truncate_on_fetch_response(diverging_end_offsets)
        if partitions_with_error:
            self._handle_partitions_with_errors(partitions_with_error, "process_fetch_request")

    def _process_partition_response(self, tp: TopicPartition, partition_data: FetchPartitionData,
                                    session_partitions: Mapping[TopicPartition, PartitionData],
                                    partitions_with_error: set[TopicPartition],
                                    diverging_end_offsets: dict[TopicPartition, EpochEndOffset]) -> None:
        current = self._partition_states.state_value(tp)
        if current is None:
            return
        requested = session_partitions.get(tp)
        # The partition may have been removed and added again, or truncated, while the fetch
        # was out: only an answer to exactly what it waits for may be appended.
        if requested is None or requested.fetch_offset != current.fetch_offset or not current.is_ready_for_fetch:
            return
        error = partition_data.error
        if error is Errors.NONE:
            try:
                diverging = partition_data.diverging_epoch
                if self.is_truncation_on_fetch_supported and diverging is not None:
                    # The log diverges from the leader's: truncate first. The answer carries no
                    # records, and its high watermark is not taken either, since this replica's
                    # log end may still lie among the records about to go (Kafka 2.8 still
                    # processed such an answer; later releases skip it, and so does this port).
                    diverging_end_offsets[tp] = EpochEndOffset(Errors.NONE, tp.partition, diverging.leader_epoch,
                                                               diverging.end_offset)
                    return
                info = self.process_partition_data(tp, current.fetch_offset, partition_data)
                if info is not None:
                    valid_bytes = info.valid_bytes
                    next_offset = info.last_offset + 1 if valid_bytes > 0 else current.fetch_offset
                    lag = max(0, partition_data.high_watermark - next_offset)
                    self.fetcher_lag_stats.get_and_maybe_put(tp).lag = lag
                    if valid_bytes > 0 and self._partition_states.contains(tp):
                        self._partition_states.update_and_move_to_end(tp, PartitionFetchState.of(
                            next_offset, lag, current.current_leader_epoch, ReplicaState.FETCHING,
                            info.last_leader_epoch))
                    if valid_bytes > 0:
                        self.fetcher_stats.byte_rate.mark(valid_bytes)
            except (CorruptRecordException, InvalidRecordException) as e:
                # one corrupt partition must not hold the others back; it may well be a
                # transient state of the leader's log, so it is fetched again after a back-off
                self.logger.error("Found invalid messages during fetch for partition %s offset %d: %s",
                                  tp, current.fetch_offset, e)
                partitions_with_error.add(tp)
            except KafkaStorageException as e:
                self.logger.error("Error while processing data for partition %s at offset %d: %s", tp,
                                  current.fetch_offset, e)
                self._mark_partition_failed(tp)
            except Exception:  # noqa: BLE001 - stop this partition, keep the thread
                self.logger.exception("Unexpected error occurred while processing data for partition %s at offset %d",
                                      tp, current.fetch_offset)
                self._mark_partition_failed(tp)
        elif error is Errors.OFFSET_OUT_OF_RANGE:
            if self._handle_out_of_range_error(tp, current, requested.current_leader_epoch):
                partitions_with_error.add(tp)
        elif error is Errors.UNKNOWN_LEADER_EPOCH:
            self.logger.debug("Remote broker has a smaller leader epoch for partition %s than this replica's current "
                              "leader epoch of %d.", tp, current.current_leader_epoch)
            partitions_with_error.add(tp)
        elif error is Errors.FENCED_LEADER_EPOCH:
            if self._on_partition_fenced(tp, requested.current_leader_epoch):
                partitions_with_error.add(tp)
        elif error is Errors.NOT_LEADER_OR_FOLLOWER:
            self.logger.debug("Remote broker is not the leader for partition %s, which could indicate that the "
                              "partition is being moved", tp)
            partitions_with_error.add(tp)
        elif error is Errors.UNKNOWN_TOPIC_OR_PARTITION:
            self.logger.warning("Received %s from the leader for partition %s. This error may be returned transiently "
                                "when the partition is being created or deleted, but it is not expected to persist.",
                                error.name, tp)
            partitions_with_error.add(tp)
        else:
            self.logger.error("Error for partition %s at offset %d: %s", tp, current.fetch_offset,
                              error.name)
            partitions_with_error.add(tp)

    # ------------------------------------------------------------------ truncation

    def _fetch_truncating_partitions(self) -> tuple[dict[TopicPartition, EpochData], set[TopicPartition]]:
        with_epochs: dict[TopicPartition, EpochData] = {}
        without_epochs: set[TopicPartition] = set()
        with self.partition_map_lock:
            for tp, state in self._partition_states.partition_state_map().items():
                if not state.is_truncating:
                    continue
                try:
                    epoch = self.latest_epoch(tp)
                except Exception as e:  # noqa: BLE001 - the log went away; retry after a back-off
                    self.logger.warning("Could not read the latest epoch of %s: %s", tp, e)
                    self.delay_partitions([tp], self.fetch_back_off_ms)
                    continue
                if epoch is not None and self.is_offset_for_leader_epoch_supported:
                    with_epochs[tp] = EpochData(tp.partition, state.current_leader_epoch, epoch)
                else:
                    without_epochs.add(tp)
        return with_epochs, without_epochs

    def _maybe_truncate(self) -> None:
        with_epochs, without_epochs = self._fetch_truncating_partitions()
        if with_epochs:
            self._truncate_to_epoch_end_offsets(with_epochs)
        if without_epochs:
            self.truncate_to_high_watermark(without_epochs)

    def _do_truncate(self, topic_partition: TopicPartition, truncation_state: OffsetTruncationState) -> bool:
        try:
            self.truncate(topic_partition, truncation_state)
            return True
        except KafkaStorageException as e:
            self.logger.error("Failed to truncate %s at offset %d: %s", topic_partition,
                              truncation_state.offset, e)
        except Exception:  # noqa: BLE001 - never fetch on top of a log that was not truncated
            self.logger.exception("Unexpected error occurred during truncation for %s at offset %d",
                                  topic_partition, truncation_state.offset)
        self._mark_partition_failed(topic_partition)
        return False

    def _truncate_to_epoch_end_offsets(self, latest_epochs_for_partitions: Mapping[TopicPartition, EpochData]) -> None:
        """Ask the leader where each epoch ends (no lock held), then truncate under the lock,
        skipping partitions whose leader epoch changed meanwhile."""
        end_offsets = self.fetch_epoch_end_offsets(latest_epochs_for_partitions)
        with self.partition_map_lock:
            epoch_end_offsets = {}
            for tp, end_offset in end_offsets.items():
                request = latest_epochs_for_partitions.get(tp)
                if request is None:
                    self.logger.warning("Leader replied with partition %s not requested in OffsetsForLeaderEpoch "
                                        "request", tp)
                    continue
                current = self._partition_states.state_value(tp)
                if current is not None and request.current_leader_epoch == current.current_leader_epoch:
                    epoch_end_offsets[tp] = end_offset
            result = self._maybe_truncate_to_epoch_end_offsets(epoch_end_offsets, latest_epochs_for_partitions)
            self._handle_partitions_with_errors(result.partitions_with_error, "truncate_to_epoch_end_offsets")
            self._update_fetch_offset_and_maybe_mark_truncation_complete(result.result)

    def truncate_on_fetch_response(self, epoch_end_offsets: Mapping[TopicPartition, EpochEndOffset]) -> None:
        with self.partition_map_lock:
            result = self._maybe_truncate_to_epoch_end_offsets(epoch_end_offsets, {})
            self._handle_partitions_with_errors(result.partitions_with_error, "truncate_on_fetch_response")
            self._update_fetch_offset_and_maybe_mark_truncation_complete(result.result)

    def truncate_to_high_watermark(self, partitions: Iterable[TopicPartition]) -> None:
        """Partitions without leader epochs truncate to their high watermark, the fetch offset
        they were added with (the pre-KIP-101 rule)."""
        with self.partition_map_lock:
            fetch_offsets: dict[TopicPartition, OffsetTruncationState] = {}
            for tp in partitions:
                state = self._partition_states.state_value(tp)
                if state is None:
                    continue
                truncation_state = OffsetTruncationState(state.fetch_offset, True)
                self.logger.info("Truncating partition %s to local high watermark %d", tp,
                                 state.fetch_offset)
                if self._do_truncate(tp, truncation_state):
                    fetch_offsets[tp] = truncation_state
            self._update_fetch_offset_and_maybe_mark_truncation_complete(fetch_offsets)

    def _maybe_truncate_to_epoch_end_offsets(self, fetched_epochs: Mapping[TopicPartition, EpochEndOffset],
                                             latest_epochs_for_partitions: Mapping[TopicPartition, EpochData]
                                             ) -> ResultWithPartitions:
        fetch_offsets: dict[TopicPartition, OffsetTruncationState] = {}
        partitions_with_error: set[TopicPartition] = set()
        for tp, leader_epoch_offset in fetched_epochs.items():
            if not self._partition_states.contains(tp):
                # removed while the request was out; it may already belong to another thread
                self.logger.debug("Ignoring epoch offsets for partition %s since it has been removed from this fetcher "
                                  "thread.", tp)
                continue
            error = leader_epoch_offset.error
            if error is Errors.NONE:
                try:
                    truncation_state = self._get_offset_truncation_state(tp, leader_epoch_offset)
                except Exception as e:  # noqa: BLE001 - the local log is unreadable now; retry later
                    self.logger.warning("Could not work out the truncation offset of %s: %s", tp, e)
                    partitions_with_error.add(tp)
                    continue
                self.logger.info("Truncating partition %s to offset %d (%s) due to leader epoch %d ending at offset %d",
                                 tp, truncation_state.offset,
                                 "final" if truncation_state.truncation_completed else "another epoch to ask about",
                                 leader_epoch_offset.leader_epoch, leader_epoch_offset.end_offset)
                if self._do_truncate(tp, truncation_state):
                    fetch_offsets[tp] = truncation_state
            elif error is Errors.FENCED_LEADER_EPOCH:
                request = latest_epochs_for_partitions.get(tp)
                if self._on_partition_fenced(tp, None if request is None else request.current_leader_epoch):
                    partitions_with_error.add(tp)
            else:
                self.logger.info("Retrying leaderEpoch request for partition %s as the leader reported an error: %s",
                                 tp, error.name)
                partitions_with_error.add(tp)
        return ResultWithPartitions(fetch_offsets, frozenset(partitions_with_error))

    def _get_offset_truncation_state(self, tp: TopicPartition,
                                     leader_epoch_offset: EpochEndOffset) -> OffsetTruncationState:
        with self.partition_map_lock:
            state = self._partition_states.state_value(tp)
            assert state is not None  # (the caller checked that this thread has the partition)
            return get_offset_truncation_state(tp, leader_epoch_offset, state.fetch_offset, self.log_end_offset(tp),
                                               lambda epoch: self.end_offset_for_epoch(tp, epoch))

    def _update_fetch_offset_and_maybe_mark_truncation_complete(
            self, fetch_offsets: Mapping[TopicPartition, OffsetTruncationState]) -> None:
        for tp, truncation_state in fetch_offsets.items():
            current = self._partition_states.state_value(tp)
            if current is None:
                continue
            # with truncation on fetch, a partial truncation is finished by the next fetch's
            # diverging epoch; otherwise another OffsetsForLeaderEpoch round is needed
            if self.is_truncation_on_fetch_supported or truncation_state.truncation_completed:
                state = ReplicaState.FETCHING
            else:
                state = ReplicaState.TRUNCATING
            self._partition_states.update(tp, PartitionFetchState(
                truncation_state.offset, current.lag, current.current_leader_epoch, current.delay, state,
                self.latest_epoch(tp)))

    def _on_partition_fenced(self, tp: TopicPartition, request_epoch: Optional[int]) -> bool:
        """A FENCED_LEADER_EPOCH answer: if it was about the epoch this thread still follows, the
        partition waits for a LeaderAndIsr with a newer one (False); if the thread has moved on
        to a newer epoch meanwhile, it just retries (True)."""
        with self.partition_map_lock:
            current = self._partition_states.state_value(tp)
            if current is None:
                return False
            if request_epoch is not None and request_epoch == current.current_leader_epoch:
                self.logger.info("Partition %s has an older epoch (%d) than the current leader. Will await the new "
                                 "LeaderAndIsr state before resuming fetching.", tp,
                                 current.current_leader_epoch)
                self._mark_partition_failed(tp)
                return False
            self.logger.info("Partition %s has a newer epoch (%d) than the current leader. Retry the partition later",
                             tp, current.current_leader_epoch)
            return True

    # ------------------------------------------------------------------ out of range

    def _handle_out_of_range_error(self, tp: TopicPartition, fetch_state: PartitionFetchState,
                                   request_epoch: Optional[int]) -> bool:
        """True if the partition should back off and retry."""
        try:
            new_state = self._fetch_offset_and_truncate(tp, fetch_state.current_leader_epoch)
            self._partition_states.update_and_move_to_end(tp, new_state)
            self.logger.info("Current offset %d for partition %s is out of range, which typically implies a leader "
                             "change. Reset fetch offset to %d", fetch_state.fetch_offset, tp,
                             new_state.fetch_offset)
            return False
        except FencedLeaderEpochException:
            return self._on_partition_fenced(tp, request_epoch)
        except (UnknownTopicOrPartitionException, UnknownLeaderEpochException, NotLeaderOrFollowerException) as e:
            self.logger.info("Could not fetch offset for %s due to error: %s", tp, e)
            return True
        except Exception as e:  # noqa: BLE001
            self.logger.error("Error getting offset for partition %s: %s", tp, e,
                              exc_info=not isinstance(e, OSError))
            return True

    def _fetch_offset_and_truncate(self, tp: TopicPartition, current_leader_epoch: int) -> PartitionFetchState:
        replica_end_offset = self.log_end_offset(tp)
        leader_end_offset = self.fetch_latest_offset_from_leader(tp, current_leader_epoch)
        reset = out_of_range_reset(tp, replica_end_offset, leader_end_offset,
                                   lambda: self.fetch_earliest_offset_from_leader(tp, current_leader_epoch))
        if reset.truncate_to is not None:
            self.truncate(tp, OffsetTruncationState(reset.truncate_to, True))
        if reset.truncate_fully_and_start_at is not None:
            self.truncate_fully_and_start_at(tp, reset.truncate_fully_and_start_at)
        return PartitionFetchState.of(reset.fetch_offset, reset.lag, current_leader_epoch, ReplicaState.FETCHING,
                                      self.latest_epoch(tp))

    # ------------------------------------------------------------------ partitions

    def _partition_fetch_state(self, tp: TopicPartition, initial: InitialFetchState,
                               current: Optional[PartitionFetchState]) -> PartitionFetchState:
        """Kafka's ``partitionFetchState``: keep the state of a partition still following the
        same epoch; otherwise start over, truncating first unless truncation happens on fetch
        (then a log that knows its epochs fetches at once, sending its last epoch)."""
        if current is not None and current.current_leader_epoch == initial.current_leader_epoch:
            return current
        if initial.init_offset < 0:
            return self._fetch_offset_and_truncate(tp, initial.current_leader_epoch)
        if self.is_truncation_on_fetch_supported:
            last_fetched_epoch = self.latest_epoch(tp)
            state = ReplicaState.FETCHING if last_fetched_epoch is not None else ReplicaState.TRUNCATING
            return PartitionFetchState.of(initial.init_offset, None, initial.current_leader_epoch, state,
                                          last_fetched_epoch)
        return PartitionFetchState.of(initial.init_offset, None, initial.current_leader_epoch,
                                      ReplicaState.TRUNCATING, None)

    def add_partitions(self, initial_fetch_states: Mapping[TopicPartition, InitialFetchState]) -> set[TopicPartition]:
        with self.partition_map_lock:
            self.failed_partitions.remove_all(initial_fetch_states.keys())
            for tp, initial in initial_fetch_states.items():
                current = self._partition_states.state_value(tp)
                self._partition_states.update_and_move_to_end(tp, self._partition_fetch_state(tp, initial, current))
            self._partition_map_cond.notify_all()
            return set(initial_fetch_states)

    def mark_partitions_for_truncation(self, topic_partition: TopicPartition, truncation_offset: int) -> None:
        """Back to TRUNCATING, fetching from ``truncation_offset`` at most (see AbstractFetcherManager)."""
        with self.partition_map_lock:
            state = self._partition_states.state_value(topic_partition)
            if state is not None:
                self._partition_states.update_and_move_to_end(topic_partition, PartitionFetchState(
                    min(truncation_offset, state.fetch_offset), state.lag, state.current_leader_epoch, state.delay,
                    ReplicaState.TRUNCATING, None))
                self._partition_map_cond.notify_all()

    def delay_partitions(self, partitions: Iterable[TopicPartition], delay_ms: int) -> None:
        with self.partition_map_lock:
            for tp in partitions:
                current = self._partition_states.state_value(tp)
                if current is not None and not current.is_delayed:
                    self._partition_states.update_and_move_to_end(
                        tp, replace(current, delay=DelayedItem(delay_ms, self.time)))
            self._partition_map_cond.notify_all()

    def remove_partitions(self, topic_partitions: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionFetchState]:
        with self.partition_map_lock:
            removed = {}
            for tp in topic_partitions:
                state = self._partition_states.remove(tp)
                if state is not None:
                    removed[tp] = state
                self.fetcher_lag_stats.unregister_partition(tp)
            return removed

    def _mark_partition_failed(self, topic_partition: TopicPartition) -> None:
        with self.partition_map_lock:
            self.failed_partitions.add(topic_partition)
            self.remove_partitions([topic_partition])
        self.logger.warning("Partition %s marked as failed", topic_partition)

    @property
    def partition_count(self) -> int:
        with self.partition_map_lock:
            return self._partition_states.size()

    @property
    def partitions(self) -> set[TopicPartition]:
        with self.partition_map_lock:
            return self._partition_states.partition_set()

    def fetch_state(self, topic_partition: TopicPartition) -> Optional[PartitionFetchState]:
        with self.partition_map_lock:
            return self._partition_states.state_value(topic_partition)


# ---------------------------------------------------------------------------- fetcher metrics


class FetcherLagMetrics(KafkaMetricsGroup):
    """``kafka.server:type=FetcherLagMetrics,name=ConsumerLag,clientId=..,topic=..,partition=..``:
    how far the replica of one partition is behind the leader's high watermark, as of the
    last fetch answer (Kafka's FetcherLagMetrics)."""

    metrics_group = "kafka.server"
    metrics_type_name = "FetcherLagMetrics"

    def __init__(self, client_id: str, topic_partition: TopicPartition) -> None:
        self.lag = 0
        self.tags = {"clientId": client_id, "topic": topic_partition.topic,
                     "partition": str(topic_partition.partition)}
        self.new_gauge("ConsumerLag", lambda: self.lag, self.tags)

    def unregister(self) -> None:
        self.remove_metric("ConsumerLag", self.tags)


class FetcherLagStats:
    """One FetcherLagMetrics per partition a fetcher thread has had an answer for."""

    def __init__(self, client_id: str) -> None:
        self.client_id = client_id
        self.stats: dict[TopicPartition, FetcherLagMetrics] = {}
        self._lock = threading.Lock()

    def get_and_maybe_put(self, topic_partition: TopicPartition) -> FetcherLagMetrics:
        metrics = self.stats.get(topic_partition)
        if metrics is None:
            with self._lock:
                metrics = self.stats.get(topic_partition)
                if metrics is None:
                    metrics = self.stats[topic_partition] = FetcherLagMetrics(self.client_id, topic_partition)
        return metrics

    def is_replica_in_sync(self, topic_partition: TopicPartition) -> bool:
        metrics = self.stats.get(topic_partition)
        return metrics is not None and metrics.lag <= 0

    def unregister_partition(self, topic_partition: TopicPartition) -> None:
        with self._lock:
            metrics = self.stats.pop(topic_partition, None)
        if metrics is not None:
            metrics.unregister()

    def unregister(self) -> None:
        with self._lock:
            all_metrics = list(self.stats.values())
            self.stats.clear()
        for metrics in all_metrics:
            metrics.unregister()


class FetcherStats(KafkaMetricsGroup):
    """``kafka.server:type=FetcherStats,name=RequestsPerSec|BytesPerSec,clientId=..,brokerHost=..,
    brokerPort=..``: the fetch requests a fetcher thread sent and the record bytes it got."""

    metrics_group = "kafka.server"
    metrics_type_name = "FetcherStats"

    def __init__(self, client_id: str, source_broker: Optional[BrokerEndPoint]) -> None:
        host = "" if source_broker is None else source_broker.host
        port = "" if source_broker is None else str(source_broker.port)
        self.tags = {"clientId": client_id, "brokerHost": host, "brokerPort": port}
        self.request_rate = self.new_meter("RequestsPerSec", "requests", self.tags)
        self.byte_rate = self.new_meter("BytesPerSec", "bytes", self.tags)

    def unregister(self) -> None:
        self.remove_metric("RequestsPerSec", self.tags)
        self.remove_metric("BytesPerSec", self.tags)


# ---------------------------------------------------------------------------- value types


class ReplicaState(enum.Enum):
    TRUNCATING = "Truncating"
    FETCHING = "Fetching"


@dataclass(frozen=True, slots=True)
class PartitionFetchState:
    """Where one partition's fetching stands (see the module docstring)."""

    fetch_offset: int
    lag: Optional[int]
    current_leader_epoch: int
    delay: Optional[DelayedItem]
    state: ReplicaState
    last_fetched_epoch: Optional[int]

    @classmethod
    def of(cls, offset: int, lag: Optional[int], current_leader_epoch: int, state: ReplicaState,
           last_fetched_epoch: Optional[int]) -> "PartitionFetchState":
        return cls(offset, lag, current_leader_epoch, None, state, last_fetched_epoch)

    @property
    def is_ready_for_fetch(self) -> bool:
        return self.state is ReplicaState.FETCHING and not self.is_delayed

    @property
    def is_replica_in_sync(self) -> bool:
        return self.lag is not None and self.lag <= 0

    @property
    def is_truncating(self) -> bool:
        return self.state is ReplicaState.TRUNCATING and not self.is_delayed

    @property
    def is_delayed(self) -> bool:
        return self.delay is not None and self.delay.get_delay_ms() > 0

    def __str__(self) -> str:
        return (f"FetchState(fetchOffset={self.fetch_offset}, currentLeaderEpoch={self.current_leader_epoch}, "
                f"lastFetchedEpoch={self.last_fetched_epoch}, state={self.state.value}, lag={self.lag}, "
                f"delay={0 if self.delay is None else self.delay.delay_ms}ms)")


@dataclass(frozen=True, slots=True)
class OffsetTruncationState:
    """Where to truncate, and whether that is final or another epoch must be asked about."""

    offset: int
    truncation_completed: bool = True


@dataclass(frozen=True, slots=True)
class OffsetAndEpoch:
    offset: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class EpochData:
    """One partition of an OffsetsForLeaderEpoch request (OffsetForLeaderPartition)."""

    partition: int
    current_leader_epoch: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class ReplicaFetch:
    """A fetch to send: what each partition asks for, and the request itself (opaque here)."""

    partition_data: Mapping[TopicPartition, PartitionData]
    fetch_request: Any


@dataclass(frozen=True, slots=True)
class ResultWithPartitions:
    result: Any
    partitions_with_error: frozenset


class FailedPartitions:
    """Partitions a fetcher gave up on (a storage error, a fenced epoch, an unexpected error)
    until a LeaderAndIsr adds them again (AbstractFetcherManager.scala's FailedPartitions)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._partitions: set[TopicPartition] = set()

    def size(self) -> int:
        with self._lock:
            return len(self._partitions)

    def add(self, topic_partition: TopicPartition) -> None:
        with self._lock:
            self._partitions.add(topic_partition)

    def remove_all(self, topic_partitions: Iterable[TopicPartition]) -> None:
        with self._lock:
            self._partitions.difference_update(topic_partitions)

    def contains(self, topic_partition: TopicPartition) -> bool:
        with self._lock:
            return topic_partition in self._partitions


class PartitionStates:
    """clients/.../internals/PartitionStates.java: an insertion-ordered map whose entries move to
    the end when updated, so partitions take turns at the front of a fetch. Not thread-safe:
    the fetcher's partition_map_lock guards it."""

    def __init__(self) -> None:
        self._map: "OrderedDict[TopicPartition, PartitionFetchState]" = OrderedDict()

    def state_value(self, topic_partition: TopicPartition) -> Optional[PartitionFetchState]:
        return self._map.get(topic_partition)

    def contains(self, topic_partition: TopicPartition) -> bool:
        return topic_partition in self._map

    def update_and_move_to_end(self, topic_partition: TopicPartition, state: PartitionFetchState) -> None:
        self._map.pop(topic_partition, None)
        self._map[topic_partition] = state

    def update(self, topic_partition: TopicPartition, state: PartitionFetchState) -> None:
        """Replace a state in place, keeping the partition's turn."""
        self._map[topic_partition] = state

    def move_to_end(self, topic_partition: TopicPartition) -> None:
        if topic_partition in self._map:
            self._map.move_to_end(topic_partition)

    def remove(self, topic_partition: TopicPartition) -> Optional[PartitionFetchState]:
        return self._map.pop(topic_partition, None)

    def partition_state_map(self) -> "OrderedDict[TopicPartition, PartitionFetchState]":
        """A copy, in order."""
        return OrderedDict(self._map)

    def partition_set(self) -> set[TopicPartition]:
        return set(self._map)

    def size(self) -> int:
        return len(self._map)


# ---------------------------------------------------------------------------- decisions


def get_offset_truncation_state(topic_partition: TopicPartition, leader_epoch_offset: EpochEndOffset,
                                initial_fetch_offset: int, replica_end_offset: int,
                                end_offset_for_epoch: Callable[[int], Optional[OffsetAndEpoch]]
                                ) -> OffsetTruncationState:
    """Where a follower truncates, given the leader's answer about an epoch (Kafka's
    ``getOffsetTruncationState``):

    * the leader knows no end offset (UNDEFINED_EPOCH_OFFSET: it has no epoch that old, or no
      epochs at all): truncate to ``initial_fetch_offset``, the follower's high watermark;
    * an end offset without an epoch (a leader on OffsetForLeaderEpoch v0): truncate to it,
      never past the follower's own end;
    * an epoch the follower does not have (KIP-279): truncate to the end of the follower's
      largest epoch below it, and ask again about that one (``truncation_completed=False``);
      if the follower has no epoch that small, trust the leader's offset;
    * otherwise: the smaller of the two logs' ends of that epoch, and of the follower's end.

    ``end_offset_for_epoch(epoch)`` is the follower log's ``end_offset_for_epoch``: the end of
    its largest epoch <= ``epoch``, or None.
    """
    if leader_epoch_offset.end_offset == UNDEFINED_EPOCH_OFFSET:
        logger.warning("Based on replica's leader epoch, leader replied with an unknown offset in %s. The initial "
                       "fetch offset %d will be used for truncation.", topic_partition, initial_fetch_offset)
        return OffsetTruncationState(initial_fetch_offset, True)
    if leader_epoch_offset.leader_epoch == UNDEFINED_EPOCH:
        logger.warning("Leader or replica is on protocol version where leader epoch is not considered in the "
                       "OffsetsForLeaderEpoch response. The leader's offset %d will be used for truncation in %s.",
                       leader_epoch_offset.end_offset, topic_partition)
        return OffsetTruncationState(min(leader_epoch_offset.end_offset, replica_end_offset), True)
    follower = end_offset_for_epoch(leader_epoch_offset.leader_epoch)
    if follower is None:
        # The follower kept no epochs that far back (a new or upgraded replica); the leader
        # answered an epoch older than the one asked about, so its offset is the safe one.
        logger.warning("Based on replica's leader epoch, leader replied with epoch %d below any replica's tracked "
                       "epochs for %s. The leader's offset only %d will be used for truncation.",
                       leader_epoch_offset.leader_epoch, topic_partition, leader_epoch_offset.end_offset)
        return OffsetTruncationState(min(leader_epoch_offset.end_offset, replica_end_offset), True)
    if follower.leader_epoch != leader_epoch_offset.leader_epoch:
        intermediate = min(follower.offset, replica_end_offset)
        logger.info("Based on replica's leader epoch, leader replied with epoch %d unknown to the replica for %s. "
                    "Will truncate to %d and send another leader epoch request to the leader.",
                    leader_epoch_offset.leader_epoch, topic_partition, intermediate)
        return OffsetTruncationState(intermediate, False)
    offset_to_truncate_to = min(follower.offset, leader_epoch_offset.end_offset)
    return OffsetTruncationState(min(offset_to_truncate_to, replica_end_offset), True)


@dataclass(frozen=True, slots=True)
class OutOfRangeReset:
    """What a follower does when the leader says its fetch offset is out of range."""

    fetch_offset: int
    lag: int
    truncate_to: Optional[int] = None  # truncate to this offset (the leader's log is shorter)
    truncate_fully_and_start_at: Optional[int] = None  # drop the whole log, restart it here


def out_of_range_reset(topic_partition: TopicPartition, replica_end_offset: int, leader_end_offset: int,
                       fetch_leader_start_offset: Callable[[], int]) -> OutOfRangeReset:
    """Kafka's ``fetchOffsetAndTruncate`` decision, without the I/O.

    A leader whose log ends below ours (it was elected uncleanly while we were away) makes us
    truncate to its end. Otherwise our offset is below the leader's log start (we were away
    while it deleted old segments), or the leader's end moved past ours meanwhile: we fetch
    from the larger of our end and its start, dropping our whole log only in the first case.
    """
    if leader_end_offset < replica_end_offset:
        logger.warning("Reset fetch offset for partition %s from %d to current leader's latest offset %d",
                       topic_partition, replica_end_offset, leader_end_offset)
        return OutOfRangeReset(leader_end_offset, 0, truncate_to=leader_end_offset)
    leader_start_offset = fetch_leader_start_offset()
    logger.warning("Reset fetch offset for partition %s from %d to current leader's start offset %d",
                   topic_partition, replica_end_offset, leader_start_offset)
    offset_to_fetch = max(leader_start_offset, replica_end_offset)
    return OutOfRangeReset(offset_to_fetch, leader_end_offset - offset_to_fetch,
                           truncate_fully_and_start_at=leader_start_offset
                           if leader_start_offset > replica_end_offset else None)


__all__ = [
    "AbstractFetcherThread", "FetcherLagMetrics", "FetcherLagStats", "FetcherStats", "PartitionFetchState", "ReplicaState", "OffsetTruncationState", "OffsetAndEpoch",
    "EpochData", "ReplicaFetch", "ResultWithPartitions", "FailedPartitions", "PartitionStates",
    "get_offset_truncation_state", "OutOfRangeReset", "out_of_range_reset",
]
