"""Port of raft/src/main/java/org/apache/kafka/raft/internals/BatchAccumulator.java
(Kafka 2.8.2).

The leader's write buffer for one epoch. Application threads append records; they are
encoded into batches of at most ``max_batch_size`` bytes, offsets assigned from the log end
on. The raft thread drains the completed batches into the log when the linger time
(``controller.quorum.append.linger.ms``) since the first pending append has passed, so many
small appends become few batches and few fsyncs.

Appends hold the append lock. A drain marks itself STARTED and completes the open batch if it
can take the lock without waiting; if an appender holds it, that appender completes the
drain on its way in (``_maybe_complete_drain``), and the raft thread picks the batches up at
its next poll (``time_until_drain`` is then 0). So the raft thread never waits for an
application thread.

Kafka's BatchMemoryPool (reused 8 MiB buffers) is not ported; batches are plain bytearrays,
so an append never fails for want of memory.

Kafka 3.0.0's snapshot control messages (``append_snapshot_header_message``,
``append_snapshot_footer_message``) and ``force_drain`` serve the SnapshotWriter, which
batches a snapshot's records with this same accumulator.
"""
from __future__ import annotations

import enum
import logging
import threading
from dataclasses import dataclass
from typing import Callable, Generic, Optional, Sequence, TypeVar

from kafka_py.clients.common.errors import RecordBatchTooLargeException
from kafka_py.raft.control_record_utils import (
    SNAPSHOT_FOOTER_TYPE,
    SNAPSHOT_HEADER_TYPE,
    SnapshotFooterRecord,
    SnapshotHeaderRecord,
    snapshot_control_batch,
)
from kafka_py.raft.internals.batch_builder import BatchBuilder
from kafka_py.raft.record_serde import ObjectSerializationCache, RecordSerde
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

T = TypeVar("T")


class _DrainStatus(enum.Enum):
    STARTED = "STARTED"
    FINISHED = "FINISHED"
    NONE = "NONE"


@dataclass(frozen=True)
class CompletedBatch(Generic[T]):
    base_offset: int
    records: list[T]
    data: MemoryRecords

    def size_in_bytes(self) -> int:
        return self.data.size_in_bytes

    def release(self) -> None:
        """Kafka returns the buffer to its pool here; these buffers are garbage-collected."""


class BatchAccumulator(Generic[T]):
    CompletedBatch = CompletedBatch

    def __init__(self, epoch: int, base_offset: int, linger_ms: int, max_batch_size: int, time: Time,
                 compression_type: CompressionType, serde: RecordSerde[T]) -> None:
        self._epoch = epoch
        self._linger_ms = linger_ms
        self._max_batch_size = max_batch_size
        self._time = time
        self._compression_type = compression_type
        self._serde = serde
        self._append_lock = threading.Lock()
        # Guards the drain status, the linger deadline and the completed list, which the raft
        # thread reads without the append lock.
        self._status_lock = threading.Lock()
        self._drain_status = _DrainStatus.NONE
        self._linger_deadline_ms = LONG_MAX
        self._completed: list[CompletedBatch[T]] = []
        # Guarded by the append lock.
        self._next_offset = base_offset
        self._current_batch: Optional[BatchBuilder[T]] = None

    def append(self, epoch: int, records: Sequence[T]) -> Optional[int]:
        """Records in order over as many batches as needed; the last record's offset, or
        Long.MAX_VALUE if ``epoch`` is not this accumulator's."""
        return self._append(epoch, records, False)

    def append_atomic(self, epoch: int, records: Sequence[T]) -> Optional[int]:
        """All records in one batch; the last record's offset, or Long.MAX_VALUE on epoch mismatch."""
        return self._append(epoch, records, True)

    def _append(self, epoch: int, records: Sequence[T], is_atomic: bool) -> Optional[int]:
        if epoch != self._epoch:
            return LONG_MAX
        serialization_cache: ObjectSerializationCache = {}
        with self._append_lock:
            self._maybe_complete_drain()
            batch: Optional[BatchBuilder[T]] = None
            if is_atomic:
                batch = self._maybe_allocate_batch(records, serialization_cache)
            for record in records:
                if not is_atomic:
                    batch = self._maybe_allocate_batch((record,), serialization_cache)
                assert batch is not None
                batch.append_record(record, serialization_cache)
                self._next_offset += 1
            self._maybe_reset_linger()
            return self._next_offset - 1

    def append_snapshot_header_message(self, header: SnapshotHeaderRecord, current_time_ms: int) -> None:
        """A SnapshotHeaderRecord control batch at the next offset (Kafka 3.0's SnapshotWriter)."""
        self._append_control_message(
            lambda offset: snapshot_control_batch(offset, current_time_ms, self._epoch, SNAPSHOT_HEADER_TYPE,
                                                  header.serialize()))

    def append_snapshot_footer_message(self, footer: SnapshotFooterRecord, current_time_ms: int) -> None:
        self._append_control_message(
            lambda offset: snapshot_control_batch(offset, current_time_ms, self._epoch, SNAPSHOT_FOOTER_TYPE,
                                                  footer.serialize()))

    def _append_control_message(self, value_creator: Callable[[int], MemoryRecords]) -> None:
        # The control batch stands alone: what is pending is completed first, so batches stay
        # in offset order.
        with self._append_lock:
            self._force_drain_locked()
            completed = CompletedBatch(self._next_offset, [], value_creator(self._next_offset))
            with self._status_lock:
                self._completed.append(completed)
            self._next_offset += 1

    def force_drain(self) -> None:
        """Complete the current batch now, whatever the linger time, so ``drain`` returns it."""
        with self._append_lock:
            self._force_drain_locked()

    def _force_drain_locked(self) -> None:
        with self._status_lock:
            self._drain_status = _DrainStatus.STARTED
        self._maybe_complete_drain()

    def _maybe_reset_linger(self) -> None:
        with self._status_lock:
            if self._linger_deadline_ms == LONG_MAX:
                self._linger_deadline_ms = self._time.milliseconds() + self._linger_ms

    def _maybe_allocate_batch(self, records: Sequence[T], serialization_cache: ObjectSerializationCache
                              ) -> BatchBuilder[T]:
        if self._current_batch is None:
            self._start_new_batch()
        assert self._current_batch is not None
        bytes_needed = self._current_batch.bytes_needed(records, serialization_cache)
        if bytes_needed is not None:
            if bytes_needed > self._max_batch_size:
                raise RecordBatchTooLargeException(
                    f"The total record(s) size of {bytes_needed} exceeds the maximum allowed batch size of "
                    f"{self._max_batch_size}")
            self._complete_current_batch()
            self._start_new_batch()
        assert self._current_batch is not None
        return self._current_batch

    def _complete_current_batch(self) -> None:
        batch = self._current_batch
        assert batch is not None
        completed = CompletedBatch(batch.base_offset(), batch.records(), batch.build())
        with self._status_lock:
            self._completed.append(completed)
        self._current_batch = None

    def _maybe_complete_drain(self) -> None:
        with self._status_lock:
            started = self._drain_status is _DrainStatus.STARTED
        if started:
            if self._current_batch is not None and self._current_batch.non_empty():
                self._complete_current_batch()
            with self._status_lock:
                # The linger clock starts again with the next append.
                self._linger_deadline_ms = LONG_MAX
                self._drain_status = _DrainStatus.FINISHED

    def _start_new_batch(self) -> None:
        self._current_batch = BatchBuilder(self._serde, self._compression_type, self._next_offset,
                                           self._time.milliseconds(), False, self._epoch, self._max_batch_size)

    def needs_drain(self, current_time_ms: int) -> bool:
        return self.time_until_drain(current_time_ms) <= 0

    def time_until_drain(self, current_time_ms: int) -> int:
        """Milliseconds until batches should be drained; Long.MAX_VALUE when nothing is pending."""
        with self._status_lock:
            if self._drain_status is _DrainStatus.FINISHED:
                return 0
            return max(0, self._linger_deadline_ms - current_time_ms)

    def epoch(self) -> int:
        return self._epoch

    def drain(self) -> list[CompletedBatch[T]]:
        """The completed batches, or none yet if an appender holds the lock (it will finish the
        drain; try again at the next poll). One thread drains."""
        with self._status_lock:
            if self._drain_status is _DrainStatus.NONE:
                self._drain_status = _DrainStatus.STARTED
        if self._append_lock.acquire(blocking=False):
            try:
                self._maybe_complete_drain()
            finally:
                self._append_lock.release()
        with self._status_lock:
            if self._drain_status is not _DrainStatus.FINISHED:
                return []
            self._drain_status = _DrainStatus.NONE
            drained, self._completed = self._completed, []
            return drained

    def is_empty(self) -> bool:
        # Pending appends keep the linger deadline set, so this needs no append lock.
        with self._status_lock:
            return self._linger_deadline_ms == LONG_MAX

    def num_completed_batches(self) -> int:
        with self._status_lock:
            return len(self._completed)

    def close(self) -> None:
        for batch in self.drain():
            batch.release()
