"""Port of raft/src/main/java/org/apache/kafka/raft/internals/BatchBuilder.java (Kafka 2.8.2).

Builds one raft batch: a magic-2 DefaultRecordBatch whose records have no key, no headers,
a timestamp delta of 0 and the serde's bytes as value; CREATE_TIME with the append time as
both base and max timestamp; no producer id; the leader epoch as partition leader epoch.
The record encoding and the batch header with its CRC-32C are kafka_py.clients.common.record's, so a raft
batch is read by every tool that reads the log.

``bytes_needed`` answers "do these records still fit?" before anything is written: None if
they fit, else the size a batch holding them alone would need (the accumulator then starts
a new batch, or refuses a record larger than any batch). Sizes count the records
uncompressed, an upper bound when a codec is used.
"""
from __future__ import annotations

import logging
from typing import Generic, Iterable, Optional, TypeVar

from kafka_py.raft.record_serde import ObjectSerializationCache, RecordSerde
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    RECORD_BATCH_OVERHEAD,
    TimestampType,
    assemble_batch,
    size_of_varint,
    write_record,
)
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.core.utils.java_limits import INT_MAX

logger = logging.getLogger(__name__)

T = TypeVar("T")


def _record_size_in_bytes(offset_delta: int, value_size: int) -> int:
    """A raft record's bytes, its length varint included (DefaultRecord.sizeOfBodyInBytes)."""
    body = 1 + size_of_varint(0) + size_of_varint(offset_delta) + size_of_varint(-1)
    body += size_of_varint(value_size) + value_size + size_of_varint(0)
    return size_of_varint(body) + body


class BatchBuilder(Generic[T]):
    def __init__(self, serde: RecordSerde[T], compression_type: CompressionType, base_offset: int,
                 log_append_time: int, is_control_batch: bool, leader_epoch: int, max_bytes: int) -> None:
        self._serde = serde
        self._compression_type = CompressionType(compression_type)
        self._base_offset = base_offset
        self._next_offset = base_offset
        self._log_append_time = log_append_time
        self._is_control_batch = is_control_batch
        self._leader_epoch = leader_epoch
        self._max_bytes = max_bytes
        self._records: list[T] = []
        self._record_bytes = bytearray()
        self._built: Optional[MemoryRecords] = None

    def append_record(self, record: T, serialization_cache: ObjectSerializationCache) -> int:
        """Add ``record`` (the caller checked ``bytes_needed`` first); returns its offset."""
        if self._built is not None:
            raise RuntimeError("Cannot append new records after the batch has been built")
        if self._next_offset - self._base_offset > INT_MAX:
            raise ValueError(f"Cannot include more than {INT_MAX} records in a single batch")
        offset = self._next_offset
        self._next_offset += 1
        self.write_record(offset, record, serialization_cache)
        self._records.append(record)
        return offset

    def bytes_needed(self, records: Iterable[T], serialization_cache: ObjectSerializationCache) -> Optional[int]:
        needed = self._bytes_needed_for_records(records, serialization_cache)
        if self._built is None and self._max_bytes - self.approximate_size_in_bytes() >= needed:
            return None
        return RECORD_BATCH_OVERHEAD + needed

    def approximate_size_in_bytes(self) -> int:
        return RECORD_BATCH_OVERHEAD + len(self._record_bytes)

    def base_offset(self) -> int:
        return self._base_offset

    def last_offset(self) -> int:
        return self._next_offset - 1

    def num_records(self) -> int:
        return self._next_offset - self._base_offset

    def non_empty(self) -> bool:
        return self.num_records() > 0

    def records(self) -> list[T]:
        return self._records

    def build(self) -> MemoryRecords:
        if self._built is None:
            data = assemble_batch(
                self._record_bytes,
                base_offset=self._base_offset,
                last_offset_delta=self.last_offset() - self._base_offset,
                record_count=self.num_records(),
                base_timestamp=self._log_append_time,
                max_timestamp=self._log_append_time,
                compression=self._compression_type,
                timestamp_type=TimestampType.CREATE_TIME,
                producer_id=NO_PRODUCER_ID,
                producer_epoch=NO_PRODUCER_EPOCH,
                base_sequence=NO_SEQUENCE,
                is_transactional=False,
                is_control_batch=self._is_control_batch,
                partition_leader_epoch=self._leader_epoch,
            )
            self._built = MemoryRecords(bytearray(data))
            self._record_bytes = bytearray()
        return self._built

    def write_record(self, offset: int, payload: T, serialization_cache: ObjectSerializationCache) -> int:
        value = bytearray()
        size = self._serde.record_size(payload, serialization_cache)
        self._serde.write(payload, serialization_cache, value)
        if len(value) != size:
            raise RuntimeError(f"Serde wrote {len(value)} bytes for a record it sized at {size}")
        return write_record(self._record_bytes, offset - self._base_offset, 0, None, bytes(value))

    def _bytes_needed_for_records(self, records: Iterable[T], serialization_cache: ObjectSerializationCache) -> int:
        expected_next_offset = self._next_offset
        needed = 0
        for record in records:
            if expected_next_offset - self._base_offset >= INT_MAX:
                raise ValueError(f"Adding records to a batch with base offset of {self._base_offset} and next "
                                 f"offset of {expected_next_offset}")
            needed += _record_size_in_bytes(expected_next_offset - self._base_offset,
                                            self._serde.record_size(record, serialization_cache))
            expected_next_offset += 1
        return needed
