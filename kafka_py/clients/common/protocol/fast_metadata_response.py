"""A MetadataResponse written by hand, beside the serialization of
clients/src/main/java/org/apache/kafka/common/requests/MetadataResponse.java (the write method
Kafka's generator emits for MetadataResponseData from MetadataResponse.json, versions 0 to
11, Kafka 2.8.2); no counterpart in Kafka's source as code.

A full Metadata answer of a broker with thousands of partitions is mostly the partitions'
replica arrays: each is one ``struct`` call here, against a writer call and a type check per
value in the generic (kio) writer. The bytes are exactly kio's
(tests/protocol/test_fast_response_writers.py).

``encode_metadata_response`` writes a whole frame straight from plain values, for KafkaApis
(server/kafka_apis_fast_answers.py); ``metadata_response_writer`` writes a kio
MetadataResponse for ``messages.encode_response_chunks``
(kafka_py/clients/common/protocol/fast_response_writers.py).
"""
from __future__ import annotations

import struct
from typing import Any, Callable, Optional

from kafka_py.clients.common.protocol.fast_fields import (
    I16,
    I32,
    FallBack,
    compact_length,
    compact_string,
    int32_array,
    legacy_string,
    millis,
    nullable_legacy_string,
)
from kafka_py.clients.common.protocol.requests import AUTHORIZED_OPERATIONS_OMITTED

_ZERO_UUID_BYTES = bytes(16)
# Partition heads: error, index, leader (v0-6), and the leader epoch (v7+).
_METADATA_PARTITION_V0 = struct.Struct(">hii")
_METADATA_PARTITION_V7 = struct.Struct(">hiii")


def _metadata_values_writer(version: int) -> Callable[..., None]:
    """Writes a MetadataResponse body of ``version`` (Kafka 2.8.2's MetadataResponse.json,
    versions 0 to 11) from plain values: ``brokers`` as (node id, host, port, rack),
    ``topics`` as (error, name, topic id or None, is internal, partitions, topic authorized
    operations), each partition (error, index, leader, leader epoch, replicas, ISR, offline
    replicas); errors as Errors members, kio ErrorCodes or ints. Fields a version lacks are
    dropped. A full Metadata of a broker with thousands of partitions is most of the
    partitions' arrays: each is one struct call here, against a writer call and a type
    check per value in the generic path."""
    flexible = version >= 9
    head = _METADATA_PARTITION_V7 if version >= 7 else _METADATA_PARTITION_V0
    with_epoch = version >= 7

    def string(out: bytearray, value: str) -> None:
        if flexible:
            compact_string(out, value)
        else:
            legacy_string(out, value)

    def nullable_string(out: bytearray, value: Optional[str]) -> None:
        if flexible:
            compact_string(out, value)
        else:
            nullable_legacy_string(out, value)

    def write(out: bytearray, throttle_time_ms: int, brokers: Any, cluster_id: Optional[str], controller_id: int,
              topics: Any, cluster_authorized_operations: int) -> None:
        if version >= 3:
            out += I32.pack(throttle_time_ms)
        out += compact_length(len(brokers)) if flexible else I32.pack(len(brokers))
        for node_id, host, port, rack in brokers:
            out += I32.pack(node_id)
            string(out, host)
            out += I32.pack(port)
            if version >= 1:
                nullable_string(out, rack)
            if flexible:
                out.append(0)
        if version >= 2:
            nullable_string(out, cluster_id)
        if version >= 1:
            out += I32.pack(controller_id)
        out += compact_length(len(topics)) if flexible else I32.pack(len(topics))
        for error, name, topic_id, is_internal, partitions, topic_authorized_operations in topics:
            out += I16.pack(getattr(error, "code", error))
            string(out, name)
            if version >= 10:
                out += _ZERO_UUID_BYTES if topic_id is None else topic_id.bytes
            if version >= 1:
                out.append(1 if is_internal else 0)
            out += compact_length(len(partitions)) if flexible else I32.pack(len(partitions))
            for p_error, index, leader, leader_epoch, replicas, isr, offline in partitions:
                code = getattr(p_error, "code", p_error)
                out += head.pack(code, index, leader, leader_epoch) if with_epoch else head.pack(code, index, leader)
                int32_array(out, replicas, flexible)
                int32_array(out, isr, flexible)
                if version >= 5:
                    int32_array(out, offline, flexible)
                if flexible:
                    out.append(0)
            if version >= 8:
                out += I32.pack(topic_authorized_operations)
            if flexible:
                out.append(0)
        if 8 <= version <= 10:
            out += I32.pack(cluster_authorized_operations)
        if flexible:
            out.append(0)

    return write


_METADATA_VALUES_WRITERS = {version: _metadata_values_writer(version) for version in range(12)}


def metadata_response_writer(version: int) -> Callable[[Any, bytearray], None]:
    """The writer of a kio MetadataResponse: its values taken out, then written as plain ones."""
    write_values = _METADATA_VALUES_WRITERS[version]

    def write(response: Any, out: bytearray) -> None:
        brokers = [(b.node_id, b.host, b.port, getattr(b, "rack", None)) for b in response.brokers]
        topics = [(t.error_code, t.name, getattr(t, "topic_id", None), getattr(t, "is_internal", False),
                   [(p.error_code, p.partition_index, p.leader_id, getattr(p, "leader_epoch", -1), p.replica_nodes,
                     p.isr_nodes, getattr(p, "offline_replicas", ())) for p in t.partitions],
                   getattr(t, "topic_authorized_operations", AUTHORIZED_OPERATIONS_OMITTED)) for t in response.topics]
        write_values(out, millis(response.throttle_time) if version >= 3 else 0, brokers,
                     getattr(response, "cluster_id", None), getattr(response, "controller_id", -1), topics,
                     getattr(response, "cluster_authorized_operations", AUTHORIZED_OPERATIONS_OMITTED))

    return write


def encode_metadata_response(version: int, correlation_id: int, brokers: Any, cluster_id: Optional[str],
                             controller_id: int, topics: Any, throttle_time_ms: int = 0,
                             cluster_authorized_operations: int = AUTHORIZED_OPERATIONS_OMITTED) -> bytearray:
    """The size-prefixed frame (header included) of a MetadataResponse of ``version``,
    written straight from plain values (as ``_metadata_values_writer`` takes them): the same
    bytes as building that response and encoding it. Raises ValueError for a value the
    layout cannot hold."""
    out = bytearray(b"\0\0\0\0")
    out += I32.pack(correlation_id)
    if version >= 9:
        out.append(0)  # response header v1: no tagged fields
    try:
        _METADATA_VALUES_WRITERS[version](out, throttle_time_ms, brokers, cluster_id, controller_id, topics,
                                          cluster_authorized_operations)
    except (FallBack, struct.error) as e:
        raise ValueError(f"a MetadataResponse value does not fit its field: {e}") from None
    I32.pack_into(out, 0, len(out) - 4)
    return out


__all__ = ["encode_metadata_response", "metadata_response_writer"]
