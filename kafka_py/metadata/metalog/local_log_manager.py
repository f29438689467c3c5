"""Port of metadata/src/main/java/org/apache/kafka/metalog/LocalLogManager.java (Kafka 2.8.2).

A metadata log kept in memory and shared by every LocalLogManager of one process: the
quorum controller tests run three controllers on one SharedLogData. The shared log is a
sorted map from the last offset of each batch to the batch; a batch is either records or
a leader change. Appending is committing (there is no replication to wait for), and
every manager reads the log on its own event queue and hands what it reads, in order, to
its listeners.

Leadership lives in the log itself, as in Raft: a LeaderChangeBatch names the new leader
and epoch. Whenever the log has no leader (at start, or after a renounce appended a
leader-less change) one of the registered managers is chosen at random and a change
electing it is appended. A write is appended only if its epoch is the log's current
leader epoch and the writer is that leader; any other write is dropped and
schedule_write returns LONG_MAX, an offset that never commits, so the writer's pending
operations fail when it learns of the new leader.

Kafka's manager only ever reports new leaders; this one also calls handle_renounce(E)
on a listener whose node led epoch E when it reads the change that ends E, so that a
listener hears that it lost the leadership before it hears who has it now.

``set_max_read_offset`` holds a manager back from reading past an offset, so a test can
keep one node behind the log (a partitioned controller whose writes are refused).

Snapshots, as Kafka 3.0.0's LocalLogManager keeps them: ``create_snapshot`` writes one into
the shared data (in memory, in the raft log's batch format), ``SharedLogData.delete_before_snapshot``
drops the batches it covers, and a listener whose next offset is no longer in the log is
handed the latest snapshot (``handle_snapshot``) before the batches after it.
"""
from __future__ import annotations

import bisect
import logging
import random
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

from kafka_py.metadata.api_message_and_version import ApiMessage, ApiMessageAndVersion
from kafka_py.metadata.metalog.meta_log_leader import MetaLogLeader
from kafka_py.metadata.metalog.meta_log_listener import MetaLogListener
from kafka_py.metadata.metalog.meta_log_manager import MetaLogManager
from kafka_py.metadata.queue.event_queue import Event
from kafka_py.metadata.queue.kafka_event_queue import KafkaEventQueue
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.raft.snapshot.raw_snapshot_reader import RawSnapshotReader
from kafka_py.raft.snapshot.raw_snapshot_writer import RawSnapshotWriter
from kafka_py.raft.snapshot.snapshot_reader import SnapshotReader
from kafka_py.raft.snapshot.snapshot_writer import SnapshotWriter
from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.core.utils.logging import TRACE, IdentLogger
from kafka_py.clients.common.utils.time import SystemTime, Time

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LeaderChangeBatch:
    new_leader: MetaLogLeader

    def size(self) -> int:
        return 1


@dataclass(frozen=True, slots=True)
class LocalRecordBatch:
    records: tuple[ApiMessage, ...]

    def size(self) -> int:
        return len(self.records)


LocalBatch = LeaderChangeBatch | LocalRecordBatch

# The raft client's batch limit, which snapshots are written with too.
_MAX_BATCH_SIZE_BYTES = 8 * 1024 * 1024


class _MemoryRawSnapshotWriter(RawSnapshotWriter):
    """A snapshot written into memory; freezing hands the bytes to ``on_frozen``."""

    def __init__(self, snapshot_id: OffsetAndEpoch, on_frozen: Callable[[OffsetAndEpoch, bytes], None]) -> None:
        self._snapshot_id = snapshot_id
        self._on_frozen = on_frozen
        self._data = bytearray()
        self._frozen = False

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def size_in_bytes(self) -> int:
        return len(self._data)

    def append(self, records: Union[MemoryRecords, bytes, bytearray, memoryview]) -> None:
        if self._frozen:
            raise RuntimeError(f"Snapshot {self._snapshot_id} is already frozen")
        self._data += records.buffer if isinstance(records, MemoryRecords) else records

    def is_frozen(self) -> bool:
        return self._frozen

    def freeze(self) -> None:
        self._frozen = True
        self._on_frozen(self._snapshot_id, bytes(self._data))

    def close(self) -> None:
        pass


class _MemoryRawSnapshotReader(RawSnapshotReader):
    def __init__(self, snapshot_id: OffsetAndEpoch, data: bytes) -> None:
        self._snapshot_id = snapshot_id
        self._data = data

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def size_in_bytes(self) -> int:
        return len(self._data)

    def slice(self, position: int, size: int) -> bytes:
        return self._data[position:position + size]

    def records(self) -> MemoryRecords:
        return MemoryRecords(bytearray(self._data))


class SharedLogData:
    """The log the managers of one process share; every method holds its lock."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.logger = IdentLogger(logger, "[SharedLogData] ")
        self._lock = threading.RLock()
        self._rng = rng if rng is not None else random.Random()
        self._log_managers: dict[int, LocalLogManager] = {}
        self._offsets: list[int] = []  # sorted; the last offset of each batch
        self._batches: dict[int, LocalBatch] = {}
        self._leader = MetaLogLeader(-1, -1)
        self._prev_offset = -1
        self._start_offset = 0
        self._snapshots: dict[OffsetAndEpoch, bytes] = {}

    def register_log_manager(self, log_manager: LocalLogManager) -> None:
        with self._lock:
            if log_manager.node_id() in self._log_managers:
                raise ValueError(f"Can't have multiple LocalLogManagers with id "
                                 f"{log_manager.node_id()}")
            self._log_managers[log_manager.node_id()] = log_manager
            self.elect_leader_if_needed()

    def unregister_log_manager(self, log_manager: LocalLogManager) -> None:
        with self._lock:
            if self._log_managers.get(log_manager.node_id()) is not log_manager:
                raise ValueError(f"Log manager {log_manager.node_id()} was not found.")
            del self._log_managers[log_manager.node_id()]

    def try_append(self, node_id: int, epoch: int, batch: LocalBatch) -> int:
        """Append ``batch`` if ``node_id`` leads ``epoch``; its last offset, or LONG_MAX."""
        with self._lock:
            if epoch != self._leader.epoch:
                self.logger.log(TRACE, "tryAppend(nodeId=%d, epoch=%d): the provided epoch does not "
                                  "match the current leader epoch of %d.",
                                  node_id, epoch, self._leader.epoch)
                return LONG_MAX
            if node_id != self._leader.node_id:
                self.logger.log(TRACE, "tryAppend(nodeId=%d, epoch=%d): the given node id does not "
                                  "match the current leader id of %d.",
                                  node_id, epoch, self._leader.node_id)
                return LONG_MAX
            offset = self.append(batch)
            self.elect_leader_if_needed()
            return offset

    def append(self, batch: LocalBatch) -> int:
        with self._lock:
            self._prev_offset += batch.size()
            self.logger.debug("append(batch=%s, prevOffset=%d)", batch, self._prev_offset)
            self._offsets.append(self._prev_offset)
            self._batches[self._prev_offset] = batch
            if isinstance(batch, LeaderChangeBatch):
                self._leader = batch.new_leader
            for log_manager in self._log_managers.values():
                log_manager.schedule_log_check()
            return self._prev_offset

    def elect_leader_if_needed(self) -> None:
        with self._lock:
            if self._leader.node_id != -1 or not self._log_managers:
                return
            node_ids = sorted(self._log_managers)
            next_leader = MetaLogLeader(self._rng.choice(node_ids), self._leader.epoch + 1)
            self.logger.info("Elected new leader: %s.", next_leader)
            self.append(LeaderChangeBatch(next_leader))

    def next_batch(self, offset: int) -> tuple[int, LocalBatch] | None:
        """The first batch whose last offset is above ``offset``."""
        with self._lock:
            index = bisect.bisect_right(self._offsets, offset)
            if index == len(self._offsets):
                return None
            batch_offset = self._offsets[index]
            return batch_offset, self._batches[batch_offset]

    def leader(self) -> MetaLogLeader:
        with self._lock:
            return self._leader

    def end_offset(self) -> int:
        """The offset of the last batch appended (-1 for an empty log)."""
        with self._lock:
            return self._prev_offset

    def start_offset(self) -> int:
        """The first offset still in the log (above 0 once batches went for a snapshot)."""
        with self._lock:
            return self._start_offset

    def add_snapshot(self, snapshot_id: OffsetAndEpoch, data: bytes) -> None:
        with self._lock:
            self._snapshots.setdefault(snapshot_id, data)

    def has_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        with self._lock:
            return snapshot_id in self._snapshots

    def latest_snapshot(self) -> Optional[tuple[OffsetAndEpoch, bytes]]:
        with self._lock:
            if not self._snapshots:
                return None
            snapshot_id = max(self._snapshots, key=lambda i: (i.offset, i.epoch))
            return snapshot_id, self._snapshots[snapshot_id]

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        """Drop the batches the snapshot covers; a listener that has not read them loads it."""
        with self._lock:
            if snapshot_id not in self._snapshots:
                raise ValueError(f"No snapshot {snapshot_id}")
            kept = [offset for offset in self._offsets if offset >= snapshot_id.offset]
            for offset in self._offsets:
                if offset < snapshot_id.offset:
                    del self._batches[offset]
            self._offsets = kept
            self._start_offset = max(self._start_offset, snapshot_id.offset)


def _metadata_serde():
    # The metadata records' serde as the raft client has it; imported late, as it lives with
    # the raft shim.
    from kafka_py.raft.metadata.meta_log_raft_shim import RaftMetadataRecordSerde
    return RaftMetadataRecordSerde()


class _MetaLogListenerData:
    __slots__ = ("offset", "listener", "claimed_epoch", "epoch")

    def __init__(self, listener: MetaLogListener) -> None:
        self.offset = -1
        # the epoch of the last leader change read: the epoch of the batches that follow
        self.epoch = -1
        self.listener = listener
        # the epoch this node was told it leads, -1 if it does not lead
        self.claimed_epoch = -1


class _LambdaEvent(Event):
    def __init__(self, name: str, run, log: IdentLogger) -> None:
        self.name = name
        self._run = run
        self._log = log

    def run(self) -> None:
        self._run()

    def handle_exception(self, e: BaseException) -> None:
        self._log.debug("%s did not run: %s", self.name, type(e).__name__)

    def __str__(self) -> str:
        return self.name


class LocalLogManager(MetaLogManager):
    def __init__(self, node_id: int, shared: SharedLogData, thread_name_prefix: str = "",
                 time: Time | None = None, log_prefix: str | None = None) -> None:
        self._node_id = node_id
        self.logger = IdentLogger(logger, log_prefix if log_prefix is not None
                                  else f"[LocalLogManager {node_id}] ")
        self._shared = shared
        self._time = time if time is not None else SystemTime()
        self._event_queue = KafkaEventQueue(self._time, self.logger.ident, thread_name_prefix)
        # only the event queue's thread touches these three
        self._initialized = False
        self._shutdown = False
        self._max_read_offset = LONG_MAX
        self._listeners: list[_MetaLogListenerData] = []
        # read from any thread; the lock makes the handover visible at once
        self._leader_lock = threading.Lock()
        self._leader = MetaLogLeader(-1, -1)
        try:
            shared.register_log_manager(self)
        except BaseException:
            self._event_queue.close()
            raise

    def _append_event(self, name: str, run) -> None:
        self._event_queue.append(_LambdaEvent(name, run, self.logger))

    def schedule_log_check(self) -> None:
        self._append_event("logCheck", self._log_check)

    def _log_check(self) -> None:
        try:
            found = 0
            for data in self._listeners:
                if data.offset + 1 < self._shared.start_offset():
                    latest = self._shared.latest_snapshot()
                    if latest is not None:
                        snapshot_id, snapshot_data = latest
                        self.logger.debug("handing snapshot %s to a listener at offset %d.", snapshot_id,
                                          data.offset)
                        data.listener.handle_snapshot(SnapshotReader.of(
                            _MemoryRawSnapshotReader(snapshot_id, snapshot_data), _metadata_serde(),
                            _MAX_BATCH_SIZE_BYTES))
                        data.offset = snapshot_id.offset - 1
                # Bounded by the log's length: every step moves data.offset forward.
                while True:
                    entry = self._shared.next_batch(data.offset)
                    if entry is None:
                        break
                    offset, batch = entry
                    if offset > self._max_read_offset:
                        self.logger.log(TRACE, "not reading offset %d past maxReadOffset %d",
                                          offset, self._max_read_offset)
                        break
                    if isinstance(batch, LeaderChangeBatch):
                        self._deliver_leader_change(data, batch.new_leader)
                    else:
                        self.logger.log(TRACE, "handling LocalRecordBatch with offset %d.", offset)
                        data.listener.handle_commit_batch(offset, data.epoch, -1, 0, list(batch.records))
                    found += 1
                    data.offset = offset
            self.logger.log(TRACE, "Completed log check, %d entries found", found)
        except Exception:
            self.logger.exception("Exception while handling log check")

    def _deliver_leader_change(self, data: _MetaLogListenerData,
                               new_leader: MetaLogLeader) -> None:
        self.logger.log(TRACE, "handling LeaderChange to %s.", new_leader)
        if data.claimed_epoch != -1 and new_leader.epoch > data.claimed_epoch:
            ended, data.claimed_epoch = data.claimed_epoch, -1
            data.listener.handle_renounce(ended)
        with self._leader_lock:
            if new_leader.epoch > self._leader.epoch:
                self._leader = new_leader
        data.epoch = max(data.epoch, new_leader.epoch)
        if new_leader.node_id == self._node_id:
            data.claimed_epoch = new_leader.epoch
        data.listener.handle_new_leader(new_leader)

    def begin_shutdown(self) -> None:
        def cleanup() -> None:
            try:
                if self._initialized and not self._shutdown:
                    self.logger.debug("beginning shutdown.")
                    self.renounce(self.leader().epoch)
                    for data in self._listeners:
                        data.listener.begin_shutdown()
                    self._shared.unregister_log_manager(self)
            except Exception:
                self.logger.exception("Unexpected exception while sending beginShutdown callbacks")
            self._shutdown = True

        self._event_queue.begin_shutdown("beginShutdown", _LambdaEvent("shutdown", cleanup,
                                                                       self.logger))

    def close(self) -> None:
        self.logger.debug("closing.")
        self.begin_shutdown()
        self._event_queue.close()

    def initialize(self) -> None:
        def run() -> None:
            self.logger.debug("initialized local log manager for node %d", self._node_id)
            self._initialized = True

        self._append_event("initialize", run)

    def register(self, listener: MetaLogListener) -> None:
        future: Future[None] = Future()

        def run() -> None:
            if self._shutdown:
                self.logger.info("can't register because local log manager has already "
                                 "been shut down.")
                future.set_result(None)
            elif self._initialized:
                self.logger.info("registered MetaLogListener.")
                self._listeners.append(_MetaLogListenerData(listener))
                self._shared.elect_leader_if_needed()
                self.schedule_log_check()
                future.set_result(None)
            else:
                future.set_exception(RuntimeError("LocalLogManager was not initialized."))

        self._append_event("register", run)
        future.result()

    def schedule_write(self, epoch: int, batch: Sequence[ApiMessageAndVersion]) -> int:
        return self.schedule_atomic_write(epoch, batch)

    def schedule_atomic_write(self, epoch: int, batch: Sequence[ApiMessageAndVersion]) -> int:
        return self._shared.try_append(
            self._node_id, epoch, LocalRecordBatch(tuple(m.message for m in batch)))

    def renounce(self, epoch: int) -> None:
        # A leader-less change at the next epoch; try_append ignores it unless this node
        # leads ``epoch``, and then elects a successor (which may be this node again).
        self._shared.try_append(self._node_id, epoch,
                                LeaderChangeBatch(MetaLogLeader(-1, epoch + 1)))

    def leader(self) -> MetaLogLeader:
        with self._leader_lock:
            return self._leader

    def node_id(self) -> int:
        return self._node_id

    def create_snapshot(self, committed_offset: int, committed_epoch: int,
                        last_contained_log_time: int) -> Optional[SnapshotWriter[ApiMessageAndVersion]]:
        snapshot_id = OffsetAndEpoch(committed_offset + 1, committed_epoch)

        def supplier() -> Optional[RawSnapshotWriter]:
            if self._shared.has_snapshot(snapshot_id):
                return None
            return _MemoryRawSnapshotWriter(snapshot_id, self._shared.add_snapshot)

        return SnapshotWriter.create_with_header(supplier, _MAX_BATCH_SIZE_BYTES, self._time, last_contained_log_time,
                                                 CompressionType.NONE, _metadata_serde())

    def listeners(self) -> list[MetaLogListener]:
        future: Future[list[MetaLogListener]] = Future()
        self._append_event("listeners",
                           lambda: future.set_result([d.listener for d in self._listeners]))
        return future.result()

    def set_max_read_offset(self, max_read_offset: int) -> None:
        future: Future[None] = Future()

        def run() -> None:
            self.logger.log(TRACE, "set maxReadOffset to %d.", max_read_offset)
            self._max_read_offset = max_read_offset
            self.schedule_log_check()
            future.set_result(None)

        self._append_event("setMaxReadOffset", run)
        future.result()
