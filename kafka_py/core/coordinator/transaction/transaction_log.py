"""Port of core/src/main/scala/kafka/coordinator/transaction/TransactionLog.scala (Kafka 2.8.2), with
core/src/main/resources/common/message/TransactionLogKey.json and TransactionLogValue.json.

The records of __transaction_state, one per change of a transactional id's metadata, in
Kafka's binary format (so Kafka's own tools read them). The key and the value are each an
int16 schema version followed by the message (classic encoding: int16-length strings,
int32-counted arrays, big-endian ints)::

    key v0    TransactionLogKey    transactional_id: string
    value v0  TransactionLogValue  producer_id: int64, producer_epoch: int16,
                                   transaction_timeout_ms: int32, transaction_status: int8,
                                   transaction_partitions: nullable [topic: string,
                                                                     partition_ids: [int32]],
                                   transaction_last_update_timestamp_ms: int64,
                                   transaction_start_timestamp_ms: int64

A null value is a tombstone: the transactional id expired. An Empty transaction is written
with null partitions. The previous producer id and epoch are not in the value (v0), so after
a coordinator change a retried InitProducerId of a bump that already succeeded is fenced
(as in Kafka with this value version).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.group.group_metadata_schemas import Writable, read_version
from kafka_py.core.coordinator.transaction.transaction_metadata import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    Empty,
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
)
from kafka_py.clients.common.protocol.codec import SchemaException
from kafka_py.clients.common.record.compression import CompressionType

TRANSACTION_STATE_TOPIC_NAME = "__transaction_state"

# log-level defaults of the topic, and what is always enforced on it
DEFAULT_NUM_PARTITIONS = 50
DEFAULT_SEGMENT_BYTES = 100 * 1024 * 1024
DEFAULT_REPLICATION_FACTOR = 3
DEFAULT_MIN_IN_SYNC_REPLICAS = 2
DEFAULT_LOAD_BUFFER_SIZE = 5 * 1024 * 1024
ENFORCED_COMPRESSION_TYPE = CompressionType.NONE
ENFORCED_REQUIRED_ACKS = -1

KEY_VERSION = 0
VALUE_VERSION = 0


@dataclass(frozen=True, slots=True)
class TxnKey:
    version: int
    transactional_id: str

    def __str__(self) -> str:
        return self.transactional_id


def key_to_bytes(transactional_id: str) -> bytes:
    w = Writable()
    w.int16(KEY_VERSION)
    w.string(transactional_id, "transactionalId")
    return w.getvalue()


def value_to_bytes(txn_metadata: TxnTransitMetadata) -> bytes:
    if txn_metadata.txn_state is Empty and txn_metadata.topic_partitions:
        raise RuntimeError(f"Transaction is not expected to have any partitions since its state is "
                           f"{txn_metadata.txn_state}: {txn_metadata}")
    w = Writable()
    w.int16(VALUE_VERSION)
    w.int64(txn_metadata.producer_id)
    w.int16(txn_metadata.producer_epoch)
    w.int32(txn_metadata.txn_timeout_ms)
    w.int8(txn_metadata.txn_state.byte)
    if txn_metadata.txn_state is Empty:
        w.int32(-1)  # null partitions
    else:
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(txn_metadata.topic_partitions, key=lambda t: (t.topic, t.partition)):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        w.int32(len(by_topic))
        for topic, partition_ids in by_topic.items():
            w.string(topic, "topic")
            w.int32(len(partition_ids))
            for p in partition_ids:
                w.int32(p)
    w.int64(txn_metadata.txn_last_update_timestamp)
    w.int64(txn_metadata.txn_start_timestamp)
    return w.getvalue()


def read_txn_record_key(buffer) -> TxnKey:
    version, reader = read_version(buffer)
    if version != KEY_VERSION:
        raise SchemaException(f"Unknown version {version} from the transaction log message")
    return TxnKey(version, reader.string("transactionalId"))


def read_txn_record_value(transactional_id: str, buffer) -> Optional[TransactionMetadata]:
    """The metadata a value holds; None for a tombstone."""
    if buffer is None:
        return None
    version, reader = read_version(buffer)
    if version != VALUE_VERSION:
        raise SchemaException(f"Unknown version {version} from the transaction log message value")
    producer_id = reader.int64()
    producer_epoch = reader.int16()
    txn_timeout_ms = reader.int32()
    status = reader.int8()
    try:
        state = TransactionState.from_byte(status)
    except ValueError as e:
        raise SchemaException(str(e)) from None
    count = reader.array_length("transactionPartitions", nullable=True)
    partitions: list[TopicPartition] = []
    for _ in range(max(count, 0)):
        topic = reader.string("topic")
        n = reader.array_length("partitionIds")
        partitions.extend(TopicPartition(topic, reader.int32()) for _ in range(n))
    last_update = reader.int64()
    start = reader.int64()
    metadata = TransactionMetadata(transactional_id, producer_id, NO_PRODUCER_ID, producer_epoch,
                                   NO_PRODUCER_EPOCH, txn_timeout_ms, state, (), start, last_update)
    if state is not Empty:
        metadata.add_partitions(partitions)
    return metadata


def format_record_key_and_value(key: Optional[bytes], value: Optional[bytes]) -> Tuple[str, str]:
    """DumpLogSegments' --transaction-log-decoder text of one record (Kafka's wording)."""
    txn_key = read_txn_record_key(key)
    key_string = f"transaction_metadata::transactionalId={txn_key.transactional_id}"
    metadata = read_txn_record_value(txn_key.transactional_id, value)
    if metadata is None:
        value_string = "<DELETE>"
    else:
        partitions = ",".join(str(tp) for tp in sorted(metadata.topic_partitions,
                                                       key=lambda t: (t.topic, t.partition)))
        value_string = (f"producerId:{metadata.producer_id},producerEpoch:{metadata.producer_epoch},"
                        f"state={metadata.state},partitions=[{partitions}],"
                        f"txnLastUpdateTimestamp={metadata.txn_last_update_timestamp},"
                        f"txnTimeoutMs={metadata.txn_timeout_ms}")
    return key_string, value_string


__all__ = [
    "DEFAULT_LOAD_BUFFER_SIZE", "DEFAULT_MIN_IN_SYNC_REPLICAS", "DEFAULT_NUM_PARTITIONS",
    "DEFAULT_REPLICATION_FACTOR", "DEFAULT_SEGMENT_BYTES", "ENFORCED_COMPRESSION_TYPE", "ENFORCED_REQUIRED_ACKS",
    "TRANSACTION_STATE_TOPIC_NAME", "TxnKey", "format_record_key_and_value", "key_to_bytes",
    "read_txn_record_key", "read_txn_record_value", "value_to_bytes",
]
