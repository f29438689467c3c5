"""Port of raft/src/main/java/org/apache/kafka/raft/internals/RecordsBatchReader.java
(Kafka 2.8.2).

A BatchReader over log bytes: batches are decoded as the listener iterates, control batches
(leader changes) are skipped, and each record's value goes through the serde. Its last
offset is known only when the listener has read to the end and closed it (the last batch
may be a control batch nobody sees), which is why the client waits for the close before
handing over more.

A record that is not a raft record (a key, headers, a non-zero timestamp delta) means the
log holds something raft did not write, and raises.
"""
from __future__ import annotations

import logging
from typing import Generic, Iterator, Optional, TypeVar

from kafka_py.raft.batch_reader import Batch, BatchReader
from kafka_py.raft.internals.close_listener import CloseListener
from kafka_py.raft.record_serde import RecordSerde
from kafka_py.clients.common.record.default_record_batch import DefaultRecordBatch
from kafka_py.clients.common.record.memory_records import MemoryRecords

logger = logging.getLogger(__name__)

T = TypeVar("T")


class RecordsBatchReader(BatchReader[T], Generic[T]):
    def __init__(self, base_offset: int, records: MemoryRecords, serde: RecordSerde[T],
                 close_listener: CloseListener["BatchReader[T]"]) -> None:
        self._base_offset = base_offset
        self._records = records
        self._serde = serde
        self._close_listener = close_listener
        self._batch_iterator: Optional[Iterator[DefaultRecordBatch]] = None
        self._last_returned_offset = base_offset
        self._next_batch: Optional[Batch[T]] = None
        self._is_closed = False

    def _find_next_data_batch(self) -> None:
        if self._batch_iterator is None:
            # A read may end in a partial batch (the read size cut it); it is not ours yet.
            self._batch_iterator = self._records.batches(strict=False)
        for batch in self._batch_iterator:
            if not batch.is_control_batch:
                self._next_batch = self._read_batch(batch)
                return
            self._last_returned_offset = batch.last_offset

    def _read_batch(self, batch: DefaultRecordBatch) -> Batch[T]:
        records = []
        for record in batch.records():
            if record.key is not None:
                raise ValueError(f"Unexpected key in raft record at offset {record.offset}")
            if record.headers:
                raise ValueError(f"Unexpected headers in raft record at offset {record.offset}")
            if record.timestamp != batch.base_timestamp:
                raise ValueError(f"Unexpected timestamp delta in raft record at offset {record.offset}")
            if record.value is None:
                raise ValueError(f"Unexpected null value in raft record at offset {record.offset}")
            value = memoryview(record.value)
            records.append(self._serde.read(value, len(value)))
        return Batch(batch.base_offset, batch.partition_leader_epoch, records, batch.max_timestamp,
                     batch.size_in_bytes)

    def has_next(self) -> bool:
        if self._next_batch is None:
            self._find_next_data_batch()
        return self._next_batch is not None

    def next(self) -> Batch[T]:
        if not self.has_next():
            raise StopIteration
        batch = self._next_batch
        assert batch is not None
        self._next_batch = None
        self._last_returned_offset = batch.last_offset()
        return batch

    def base_offset(self) -> int:
        return self._base_offset

    def last_offset(self) -> Optional[int]:
        return self._last_returned_offset if self._is_closed else None

    def close(self) -> None:
        self._is_closed = True
        self._close_listener.on_close(self)
