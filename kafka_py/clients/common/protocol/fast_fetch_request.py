"""A FetchRequest written by hand, beside the serialization of
clients/src/main/java/org/apache/kafka/common/requests/FetchRequest.java (the write method
Kafka's generator emits for FetchRequestData from FetchRequest.json, versions 0 to 12, Kafka
2.8.2); no counterpart in Kafka's source as code.

A replica fetcher sends one Fetch request a round (server/replica_fetcher_thread.py), and
kafka-py's tools and the Spark source's reads through the brokers send theirs the same way:
written here from plain values, without kio objects, in exactly kio's bytes
(tests/protocol/test_fast_fetch_codec.py). Their answers are read by
kafka_py/clients/common/protocol/fast_fetch_response.py.
"""
from __future__ import annotations

import struct
from typing import Any, Optional

from kafka_py.clients.common.protocol.fast_fields import (
    I32,
    compact_length,
    compact_string,
    int32_array,
    legacy_string,
    nullable_legacy_string,
)

_FETCH_REQUEST_HEADER = struct.Struct(">hhi")  # api key, api version, correlation id
_FETCH_REQUEST_HEADS = {0: struct.Struct(">iii"), 3: struct.Struct(">iiii"), 4: struct.Struct(">iiiib"),
                        7: struct.Struct(">iiiibii")}
_FETCH_REQUEST_PARTITION_V0 = struct.Struct(">iqi")  # partition, fetch offset, max bytes
_FETCH_REQUEST_PARTITION_V5 = struct.Struct(">iqqi")  # ... log start offset
_FETCH_REQUEST_PARTITION_V9 = struct.Struct(">iiqqi")  # partition, current leader epoch, ...
_FETCH_REQUEST_PARTITION_V12 = struct.Struct(">iiqiqi")  # ... fetch offset, last fetched epoch, ...


def encode_fetch_request(version: int, correlation_id: int, client_id: Optional[str], replica_id: int,
                         max_wait_ms: int, min_bytes: int, max_bytes: int, isolation_level: int,
                         session_id: int, session_epoch: int, topics: Any, rack_id: str = "",
                         forgotten_topics: Any = ()) -> bytes:
    """The size-prefixed frame of a Fetch request, header included.

    ``topics``: (topic, partitions) pairs, each partition a tuple (partition,
    current_leader_epoch, fetch_offset, last_fetched_epoch, log_start_offset,
    partition_max_bytes); fields the version lacks are left out, as kio leaves them.
    ``forgotten_topics`` (v7+, an incremental fetch's partitions to drop from its session):
    (topic, [partition, ...]) pairs.
    """
    if not 0 <= version <= 12:
        raise ValueError(f"Fetch request version {version} has no layout here")
    flexible = version >= 12
    out = bytearray(b"\0\0\0\0")
    out += _FETCH_REQUEST_HEADER.pack(1, version, correlation_id)
    nullable_legacy_string(out, client_id)
    if flexible:
        out.append(0)  # the request header's tagged fields
    if version >= 7:
        out += _FETCH_REQUEST_HEADS[7].pack(replica_id, max_wait_ms, min_bytes, max_bytes, isolation_level,
                                            session_id, session_epoch)
    elif version >= 4:
        out += _FETCH_REQUEST_HEADS[4].pack(replica_id, max_wait_ms, min_bytes, max_bytes, isolation_level)
    elif version >= 3:
        out += _FETCH_REQUEST_HEADS[3].pack(replica_id, max_wait_ms, min_bytes, max_bytes)
    else:
        out += _FETCH_REQUEST_HEADS[0].pack(replica_id, max_wait_ms, min_bytes)
    out += compact_length(len(topics)) if flexible else I32.pack(len(topics))
    for topic, partitions in topics:
        if flexible:
            compact_string(out, topic)
            out += compact_length(len(partitions))
        else:
            legacy_string(out, topic)
            out += I32.pack(len(partitions))
        for partition, leader_epoch, fetch_offset, last_fetched_epoch, log_start_offset, max_part in partitions:
            if flexible:
                out += _FETCH_REQUEST_PARTITION_V12.pack(partition, leader_epoch, fetch_offset, last_fetched_epoch,
                                                         log_start_offset, max_part)
                out.append(0)
            elif version >= 9:
                out += _FETCH_REQUEST_PARTITION_V9.pack(partition, leader_epoch, fetch_offset, log_start_offset,
                                                        max_part)
            elif version >= 5:
                out += _FETCH_REQUEST_PARTITION_V5.pack(partition, fetch_offset, log_start_offset, max_part)
            else:
                out += _FETCH_REQUEST_PARTITION_V0.pack(partition, fetch_offset, max_part)
        if flexible:
            out.append(0)
    if version >= 7:
        out += compact_length(len(forgotten_topics)) if flexible else I32.pack(len(forgotten_topics))
        for topic, partitions in forgotten_topics:
            if flexible:
                compact_string(out, topic)
                int32_array(out, partitions, True)
                out.append(0)
            else:
                legacy_string(out, topic)
                int32_array(out, partitions, False)
    if version >= 11:
        if flexible:
            compact_string(out, rack_id)
        else:
            legacy_string(out, rack_id)
    if flexible:
        out.append(0)  # no cluster id (the only tagged field)
    I32.pack_into(out, 0, len(out) - 4)
    return bytes(out)


__all__ = ["encode_fetch_request"]
