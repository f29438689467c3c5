"""Port of clients/src/main/java/org/apache/kafka/common/record/MemoryRecordsBuilder.java.

Builds one v2 batch record by record: used where the broker itself writes
records (re-compression in LogValidator, the group and transaction
coordinators, control markers, tools). The records are encoded into a
bytearray as they come; compression and the header (with its CRC) are written
once, in ``build()``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Optional

from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.control_record_type import ControlRecordType, EndTransactionMarker
from kafka_py.clients.common.record.default_record_batch import (
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    SimpleRecord,
    TimestampType,
    assemble_batch,
    record_size_in_bytes,
    write_record,
)
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.core.utils.java_limits import INT_MAX

logger = logging.getLogger(__name__)

# Kafka starts its compressed-size estimate from this ratio and pads it by 5%.
COMPRESSION_RATE_ESTIMATION_FACTOR = 1.05


@dataclass(frozen=True, slots=True)
class RecordsInfo:
    max_timestamp: int
    shallow_offset_of_max_timestamp: int


class MemoryRecordsBuilder:
    """Accumulates records for one batch; ``build()`` returns the MemoryRecords."""

    def __init__(
        self,
        compression_type: CompressionType | int = CompressionType.NONE,
        timestamp_type: TimestampType | int = TimestampType.CREATE_TIME,
        base_offset: int = 0,
        log_append_time: int = NO_TIMESTAMP,
        producer_id: int = NO_PRODUCER_ID,
        producer_epoch: int = NO_PRODUCER_EPOCH,
        base_sequence: int = NO_SEQUENCE,
        is_transactional: bool = False,
        is_control_batch: bool = False,
        partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
        write_limit: int = INT_MAX,
    ) -> None:
        if timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
            raise ValueError("TimestampType must be set for magic >= 0")
        if is_transactional and producer_id == NO_PRODUCER_ID:
            raise ValueError("Cannot write transactional messages without a valid producer ID")
        self.compression_type = CompressionType(compression_type)
        self.timestamp_type = TimestampType(timestamp_type)
        self.base_offset = base_offset
        self.log_append_time = log_append_time
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.is_transactional = is_transactional
        self.is_control_batch = is_control_batch
        self.partition_leader_epoch = partition_leader_epoch
        self.write_limit = write_limit
        self._records = bytearray()
        self._num_records = 0
        self._last_offset: Optional[int] = None
        self._first_timestamp: Optional[int] = None
        self._max_timestamp = NO_TIMESTAMP
        self._offset_of_max_timestamp = -1
        self._built: Optional[MemoryRecords] = None

    # ---- appends ---------------------------------------------------------------
    def append_with_offset(self, offset: int, timestamp: int, key, value, headers=()) -> None:
        self._append(offset, timestamp, key, value, headers, False)

    def append(self, timestamp: int, key, value, headers=()) -> None:
        self._append(self.next_sequential_offset(), timestamp, key, value, headers, False)

    def append_record(self, record: SimpleRecord) -> None:
        self.append(record.timestamp, record.key, record.value, record.headers)

    def append_control_record(self, timestamp: int, control_type: ControlRecordType, value: bytes) -> None:
        self._append(self.next_sequential_offset(), timestamp, control_type.record_key(), value, (), True)

    def append_end_txn_marker(self, timestamp: int, marker: EndTransactionMarker) -> None:
        if self.producer_id == NO_PRODUCER_ID:
            raise ValueError("End transaction marker requires a valid producerId")
        if not self.is_transactional:
            raise ValueError("End transaction marker depends on batch transactional flag being enabled")
        self._append(self.next_sequential_offset(), timestamp, marker.record_key(),
                     marker.serialize_value(), (), True)

    def _append(self, offset: int, timestamp: int, key, value, headers, is_control: bool) -> None:
        if self._built is not None:
            raise RuntimeError("Tried to append a record, but MemoryRecordsBuilder is closed for record appends")
        if is_control != self.is_control_batch:
            raise ValueError("Control records can only be appended to control batches")
        if self._last_offset is not None and offset <= self._last_offset:
            raise ValueError(
                f"Illegal offset {offset} following previous offset {self._last_offset} "
                "(Offsets must increase monotonically)."
            )
        if offset - self.base_offset > INT_MAX or offset < self.base_offset:
            raise ValueError(f"Offset {offset} is outside the batch range starting at {self.base_offset}")
        if timestamp < 0 and timestamp != NO_TIMESTAMP:
            raise ValueError(f"Invalid negative timestamp {timestamp}")
        if self._first_timestamp is None:
            self._first_timestamp = timestamp
        write_record(self._records, offset - self.base_offset, timestamp - self._first_timestamp,
                     key, value, headers)
        self._num_records += 1
        self._last_offset = offset
        if timestamp > self._max_timestamp:
            self._max_timestamp = timestamp
            self._offset_of_max_timestamp = offset

    # ---- state -----------------------------------------------------------------
    def set_producer_state(self, producer_id: int, producer_epoch: int, base_sequence: int,
                           is_transactional: bool) -> None:
        if self._built is not None:
            raise RuntimeError("Trying to set producer state of an already closed batch.")
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.is_transactional = is_transactional

    def next_sequential_offset(self) -> int:
        return self.base_offset if self._last_offset is None else self._last_offset + 1

    @property
    def num_records(self) -> int:
        return self._num_records

    def uncompressed_bytes_written(self) -> int:
        return RECORD_BATCH_OVERHEAD + len(self._records)

    def estimated_size_in_bytes(self) -> int:
        if self._built is not None:
            return self._built.size_in_bytes
        if self.compression_type == CompressionType.NONE:
            return self.uncompressed_bytes_written()
        return RECORD_BATCH_OVERHEAD + int(len(self._records) * COMPRESSION_RATE_ESTIMATION_FACTOR)

    def has_room_for(self, timestamp: int, key, value, headers=()) -> bool:
        if self.is_full():
            return False
        if self._num_records == 0:
            return True
        offset_delta = self.next_sequential_offset() - self.base_offset
        ts_delta = 0 if self._first_timestamp is None else timestamp - self._first_timestamp
        size = record_size_in_bytes(offset_delta, ts_delta, key, value, headers)
        return self.write_limit >= self.estimated_size_in_bytes() + size

    def is_full(self) -> bool:
        return self._built is not None or (
            self._num_records > 0 and self.write_limit <= self.estimated_size_in_bytes()
        )

    def is_closed(self) -> bool:
        return self._built is not None

    def info(self) -> RecordsInfo:
        """Max timestamp and where it lives; v2 batches always point at the last offset."""
        last = self._last_offset if self._last_offset is not None else -1
        if self.timestamp_type == TimestampType.LOG_APPEND_TIME:
            return RecordsInfo(self.log_append_time, last)
        if self._max_timestamp == NO_TIMESTAMP:
            return RecordsInfo(NO_TIMESTAMP, last)
        return RecordsInfo(self._max_timestamp, last)

    # ---- output ----------------------------------------------------------------
    def close(self) -> None:
        if self._built is not None:
            return
        if self._num_records == 0:
            self._built = MemoryRecords.EMPTY
            return
        if self.timestamp_type == TimestampType.LOG_APPEND_TIME:
            max_ts = self.log_append_time
        else:
            max_ts = self._max_timestamp
        data = assemble_batch(
            self._records,
            base_offset=self.base_offset,
            last_offset_delta=self._last_offset - self.base_offset,
            record_count=self._num_records,
            base_timestamp=self._first_timestamp,
            max_timestamp=max_ts,
            compression=self.compression_type,
            timestamp_type=self.timestamp_type,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            base_sequence=self.base_sequence,
            is_transactional=self.is_transactional,
            is_control_batch=self.is_control_batch,
            partition_leader_epoch=self.partition_leader_epoch,
        )
        self._records = bytearray()
        self._built = MemoryRecords(bytearray(data))

    def build(self) -> MemoryRecords:
        self.close()
        return self._built

    def compression_ratio(self) -> float:
        written = self.uncompressed_bytes_written()
        if self._built is None or written == 0:
            return 1.0
        return self._built.size_in_bytes / written
