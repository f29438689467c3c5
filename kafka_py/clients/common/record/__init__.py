"""Port of clients/src/main/java/org/apache/kafka/common/record: Kafka's magic v2
record batches in memory (MemoryRecords) and in segment files (FileRecords), and
the compression codecs with the framings Kafka's Java client uses."""
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import (
    DefaultRecordBatch,
    Record,
    SimpleRecord,
    TimestampType,
    build_batch,
)
from kafka_py.clients.common.record.file_records import FileRecords, LogOffsetPosition, TimestampAndOffset
from kafka_py.clients.common.record.memory_records import MemoryRecords

__all__ = [
    "CompressionType",
    "DefaultRecordBatch",
    "FileRecords",
    "LogOffsetPosition",
    "MemoryRecords",
    "Record",
    "SimpleRecord",
    "TimestampAndOffset",
    "TimestampType",
    "build_batch",
]
