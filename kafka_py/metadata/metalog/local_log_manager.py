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
"""
from __future__ import annotations

import bisect
import logging
import random
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Sequence

from kafka_py.metadata.api_message_and_version import ApiMessage, ApiMessageAndVersion
from kafka_py.metadata.metalog.meta_log_leader import MetaLogLeader
from kafka_py.metadata.metalog.meta_log_listener import MetaLogListener
from kafka_py.metadata.metalog.meta_log_manager import MetaLogManager
from kafka_py.metadata.queue.event_queue import Event
from kafka_py.metadata.queue.kafka_event_queue import KafkaEventQueue
from kafka_py.utils.java_limits import LONG_MAX
from kafka_py.utils.logging import TRACE, IdentLogger
from kafka_py.utils.time import SystemTime, Time

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


class _MetaLogListenerData:
    __slots__ = ("offset", "listener", "claimed_epoch")

    def __init__(self, listener: MetaLogListener) -> None:
        self.offset = -1
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
        self._event_queue = KafkaEventQueue(time if time is not None else SystemTime(),
                                            self.logger.ident, thread_name_prefix)
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
                        data.listener.handle_commits(offset, list(batch.records))
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
