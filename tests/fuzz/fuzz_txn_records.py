"""Fuzz target: the records of __transaction_state as the transaction coordinator loads them
and kafka-dump-log prints them (kafka_py/core/coordinator/transaction/transaction_log.py). The
first byte picks what the rest is: a record key, a value, or (a two-byte key length, the
key, the value) for the dump tool's formatter.

Contract: each parses, or SchemaException is raised (a record Kafka cannot read either).
"""
from __future__ import annotations

import struct
from typing import Iterable

from kafka_py.core.coordinator.transaction.transaction_log import (
    format_record_key_and_value,
    read_txn_record_key,
    read_txn_record_value,
)
from kafka_py.clients.common.protocol.codec import SchemaException


def one_input(data: bytes) -> None:
    if not data:
        return
    kind, rest = data[0] % 3, data[1:]
    try:
        if kind == 0:
            read_txn_record_key(rest)
        elif kind == 1:
            read_txn_record_value("fuzz-txn", rest)
        else:
            (key_length,) = struct.unpack_from(">H", rest) if len(rest) >= 2 else (0,)
            format_record_key_and_value(rest[2:2 + key_length], rest[2 + key_length:])
    except SchemaException:
        pass


def seeds() -> Iterable[tuple[str, bytes]]:
    from kafka_py.clients.common.topic_partition import TopicPartition
    from kafka_py.core.coordinator.transaction.transaction_log import key_to_bytes, value_to_bytes
    from kafka_py.core.coordinator.transaction.transaction_metadata import (
        CompleteCommit, Empty, Ongoing, PrepareAbort, TxnTransitMetadata)

    key = key_to_bytes("txn-a")
    yield "key", b"\x00" + key
    partitions = frozenset({TopicPartition("topic", 0), TopicPartition("topic", 1), TopicPartition("other", 4)})
    for state in (Empty, Ongoing, PrepareAbort, CompleteCommit):
        value = value_to_bytes(TxnTransitMetadata(
            producer_id=9, last_producer_id=-1, producer_epoch=3, last_producer_epoch=-1, txn_timeout_ms=60000,
            txn_state=state, topic_partitions=frozenset() if state is Empty else partitions,
            txn_start_timestamp=1_700_000_000_000, txn_last_update_timestamp=1_700_000_000_100))
        yield f"value-{state}", b"\x01" + value
        yield f"dump-{state}", b"\x02" + struct.pack(">H", len(key)) + key + value
