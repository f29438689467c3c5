"""Port of the write methods Kafka's generator emits for ProduceResponseData and
FetchResponseData (generator/.../MessageDataGenerator.java over
clients/src/main/resources/common/message/ProduceResponse.json and FetchResponse.json,
Kafka 2.8.2), written out by hand for the two answers every record passes through.

The generic writer (kio's, field by field, one function call and a type check per
value) costs tens of microseconds for even a one-partition produce answer. Here each
supported version is laid out once, with the fixed-size fields of a partition packed in
a single ``struct`` call. The bytes are exactly what kio writes (tests/tuning/
test_fast_paths.py compares both, every version, and has kafka-python read them back),
so callers cannot tell which path ran. Anything unusual goes back to the generic path:
a Fetch v12 partition with a tagged field set (diverging epoch, current leader,
snapshot id), or a value the layouts below do not expect; ``encode_response_chunks``
returns None then.

``encode_produce_response`` writes a Produce answer's frame straight from plain values,
for KafkaApis: no response objects at all on the path every produce takes.

Requests are still read by the generic reader of kafka_py.protocol.codec: a hand-written
ProduceRequest reader was tried and measured no faster (about 5 microseconds either way).
"""
from __future__ import annotations

import datetime
import logging
import struct
import sys
from typing import Any, Callable, Optional

from kafka_py.protocol.requests import AUTHORIZED_OPERATIONS_OMITTED
from kafka_py.protocol.schema_imports import load_schema


logger = logging.getLogger(__name__)

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")

# Produce partition answers by version: index, error code, base offset, log append time
# (v2+), log start offset (v5+).
_PRODUCE_PARTITION_V3 = struct.Struct(">ihqq")
_PRODUCE_PARTITION_V5 = struct.Struct(">ihqqq")
# Fetch partition heads by version: index, error, high watermark, last stable offset
# (v4+), log start offset (v5+).
_FETCH_PARTITION_V4 = struct.Struct(">ihqq")
_FETCH_PARTITION_V5 = struct.Struct(">ihqqq")
_ABORTED = struct.Struct(">qq")
_THROTTLE_ERROR_SESSION = struct.Struct(">ihi")

# Byte strings at least this long stay chunks of their own (codec.ChunkWriter's rule).
_PASS_THROUGH_BYTES = 4096

_BYTES_TYPES = (bytes, bytearray, memoryview)


class _FallBack(Exception):
    """The message holds something only the generic writer handles."""


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# Compact lengths (n + 1) below 128 are one byte; precomputed for the common counts.
_SMALL_UVARINTS = [bytes((n,)) for n in range(128)]


def _compact_length(n: int) -> bytes:
    """Compact array/string length of ``n`` elements (n + 1; -1 is null)."""
    n += 1
    return _SMALL_UVARINTS[n] if n < 128 else _uvarint(n)


def _millis(value: Any) -> int:
    """kio's timedelta writers: round(total_seconds * 1000)."""
    return round(value.total_seconds() * 1000)


def _datetime_millis(value: Optional[datetime.datetime]) -> int:
    """kio's nullable datetime_i64 writer: None is -1."""
    return -1 if value is None else round(value.timestamp() * 1000)


def _legacy_string(out: bytearray, value: str) -> None:
    data = value.encode()
    if len(data) > 0x7FFF:
        raise _FallBack()
    out += _I16.pack(len(data))
    out += data


def _nullable_legacy_string(out: bytearray, value: Optional[str]) -> None:
    if value is None:
        out += b"\xff\xff"
    else:
        _legacy_string(out, value)


def _compact_string(out: bytearray, value: Optional[str]) -> None:
    if value is None:
        out.append(0)
        return
    data = value.encode()
    out += _compact_length(len(data))
    out += data


# ---------------------------------------------------------------------------- Produce response

def _produce_values_writer(version: int) -> Callable[[Any, int, bytearray], None]:
    """Writes a ProduceResponse body of ``version`` from plain values, and the throttle time
    in milliseconds. ``topics`` is a sequence of ``(topic name, partitions)``; each
    partition is ``(index, error, base_offset, log_append_time_ms, log_start_offset,
    record_errors, error_message)``, ``error`` an Errors member, a kio ErrorCode or an
    int, ``log_append_time_ms`` -1 for none, ``record_errors`` ``(batch_index, message)``
    pairs. Fields a version lacks are dropped."""
    flexible = version >= 9
    partition_struct = _PRODUCE_PARTITION_V5 if version >= 5 else _PRODUCE_PARTITION_V3
    with_log_start = version >= 5
    with_record_errors = version >= 8

    def write(topics: Any, throttle_time_ms: int, out: bytearray) -> None:
        out += _compact_length(len(topics)) if flexible else _I32.pack(len(topics))
        for name, partitions in topics:
            if flexible:
                _compact_string(out, name)
            else:
                _legacy_string(out, name)
            out += _compact_length(len(partitions)) if flexible else _I32.pack(len(partitions))
            for index, error, base_offset, log_append_time, log_start_offset, record_errors, message in partitions:
                # an Errors member carries its code; kio's ErrorCode and ints are the code
                code = getattr(error, "code", error)
                if with_log_start:
                    out += partition_struct.pack(index, code, base_offset, log_append_time, log_start_offset)
                else:
                    out += partition_struct.pack(index, code, base_offset, log_append_time)
                if with_record_errors:
                    record_errors = record_errors or ()
                    out += _compact_length(len(record_errors)) if flexible else _I32.pack(len(record_errors))
                    for batch_index, batch_message in record_errors:
                        out += _I32.pack(batch_index)
                        if flexible:
                            _compact_string(out, batch_message)
                            out.append(0)
                        else:
                            _nullable_legacy_string(out, batch_message)
                    if flexible:
                        _compact_string(out, message)
                    else:
                        _nullable_legacy_string(out, message)
                if flexible:
                    out.append(0)
            if flexible:
                out.append(0)
        out += _I32.pack(throttle_time_ms)
        if flexible:
            out.append(0)

    return write


_PRODUCE_VALUES_WRITERS: dict[int, Callable[[Any, int, bytearray], None]] = {}


def _produce_values_writer_for(version: int) -> Callable[[Any, int, bytearray], None]:
    write = _PRODUCE_VALUES_WRITERS.get(version)
    if write is None:
        write = _PRODUCE_VALUES_WRITERS[version] = _produce_values_writer(version)
    return write


def _produce_response_writer(version: int) -> Callable[[Any, bytearray], None]:
    """The writer of a kio ProduceResponse: its values taken out, then written as plain ones."""
    write_values = _produce_values_writer_for(version)
    with_log_start = version >= 5
    with_record_errors = version >= 8

    def write(response: Any, out: bytearray) -> None:
        topics = [(topic.name, [
            (p.index, p.error_code.value, p.base_offset, _datetime_millis(p.log_append_time),
             p.log_start_offset if with_log_start else -1,
             [(e.batch_index, e.batch_index_error_message) for e in p.record_errors] if with_record_errors else (),
             p.error_message if with_record_errors else None)
            for p in topic.partition_responses]) for topic in response.responses]
        write_values(topics, _millis(response.throttle_time), out)

    return write


def encode_produce_response(version: int, correlation_id: int, topics: Any, throttle_time_ms: int = 0) -> bytearray:
    """The size-prefixed frame (header included) of a ProduceResponse of ``version`` (3+),
    written straight from plain values (``topics`` as ``_produce_values_writer`` takes
    them): the same bytes as building that response and encoding it, without the objects.
    Raises ValueError for values the layout cannot hold (a topic name over 32,767 bytes)."""
    out = bytearray(b"\0\0\0\0")
    out += _I32.pack(correlation_id)
    if version >= 9:
        out.append(0)  # response header v1: no tagged fields
    try:
        _produce_values_writer_for(version)(topics, throttle_time_ms, out)
    except _FallBack:
        raise ValueError("a ProduceResponse value does not fit its field") from None
    _I32.pack_into(out, 0, len(out) - 4)
    return out


# ---------------------------------------------------------------------------- Fetch response

def _fetch_response_writer(version: int, partition_type: type) -> Callable[[Any, bytearray, list], bytearray]:
    flexible = version >= 12
    head = _FETCH_PARTITION_V5 if version >= 5 else _FETCH_PARTITION_V4
    with_log_start = version >= 5
    with_session = version >= 7
    with_preferred_replica = version >= 11
    # v12's tagged partition fields, skipped by kio when equal to their defaults.
    tagged_defaults = ()
    if flexible:
        from dataclasses import fields

        tagged_defaults = tuple((f.name, f.default) for f in fields(partition_type)
                                if f.name in ("diverging_epoch", "current_leader", "snapshot_id"))

    def write(response: Any, out: bytearray, chunks: list) -> bytearray:
        """Writes into ``out``; a records value that stays a chunk of its own closes ``out``
        into ``chunks`` and the writing goes on in a new bytearray, which is returned."""
        if with_session:
            out += _THROTTLE_ERROR_SESSION.pack(_millis(response.throttle_time), response.error_code.value,
                                                response.session_id)
        else:
            out += _I32.pack(_millis(response.throttle_time))
        topics = response.responses
        out += _compact_length(len(topics)) if flexible else _I32.pack(len(topics))
        for topic in topics:
            if flexible:
                _compact_string(out, topic.topic)
            else:
                _legacy_string(out, topic.topic)
            partitions = topic.partitions
            out += _compact_length(len(partitions)) if flexible else _I32.pack(len(partitions))
            for p in partitions:
                for name, default in tagged_defaults:
                    if getattr(p, name) != default:
                        raise _FallBack()
                if with_log_start:
                    out += head.pack(p.partition_index, p.error_code.value, p.high_watermark,
                                     p.last_stable_offset, p.log_start_offset)
                else:
                    out += head.pack(p.partition_index, p.error_code.value, p.high_watermark,
                                     p.last_stable_offset)
                aborted = p.aborted_transactions
                if aborted is None:
                    out += b"\x00" if flexible else b"\xff\xff\xff\xff"
                else:
                    out += _compact_length(len(aborted)) if flexible else _I32.pack(len(aborted))
                    for a in aborted:
                        out += _ABORTED.pack(a.producer_id, a.first_offset)
                        if flexible:
                            out.append(0)
                if with_preferred_replica:
                    out += _I32.pack(p.preferred_read_replica)
                records = p.records
                if records is None:
                    out += b"\x00" if flexible else b"\xff\xff\xff\xff"
                else:
                    if isinstance(records, str):
                        raise _FallBack()
                    size = len(records)
                    out += _compact_length(size) if flexible else _I32.pack(size)
                    if isinstance(records, _BYTES_TYPES) and size < _PASS_THROUGH_BYTES:
                        out += records
                    elif size:
                        # a file region (sendfile) or a large buffer: not copied
                        chunks.append(out)
                        chunks.append(records)
                        out = bytearray()
                if flexible:
                    out.append(0)
            if flexible:
                out.append(0)
        if flexible:
            out.append(0)
        return out

    return write


# ---------------------------------------------------------------------------- Metadata response

_ZERO_UUID_BYTES = bytes(16)
# Partition heads: error, index, leader (v0-6), and the leader epoch (v7+).
_METADATA_PARTITION_V0 = struct.Struct(">hii")
_METADATA_PARTITION_V7 = struct.Struct(">hiii")
_INT32_ARRAYS: dict[int, struct.Struct] = {}


def _int32_array(out: bytearray, values: Any, flexible: bool) -> None:
    n = len(values)
    packer = _INT32_ARRAYS.get(n)
    if packer is None:
        packer = _INT32_ARRAYS[n] = struct.Struct(f">{n}i")
    out += _compact_length(n) if flexible else _I32.pack(n)
    out += packer.pack(*values)


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
            _compact_string(out, value)
        else:
            _legacy_string(out, value)

    def nullable_string(out: bytearray, value: Optional[str]) -> None:
        if flexible:
            _compact_string(out, value)
        else:
            _nullable_legacy_string(out, value)

    def write(out: bytearray, throttle_time_ms: int, brokers: Any, cluster_id: Optional[str], controller_id: int,
              topics: Any, cluster_authorized_operations: int) -> None:
        if version >= 3:
            out += _I32.pack(throttle_time_ms)
        out += _compact_length(len(brokers)) if flexible else _I32.pack(len(brokers))
        for node_id, host, port, rack in brokers:
            out += _I32.pack(node_id)
            string(out, host)
            out += _I32.pack(port)
            if version >= 1:
                nullable_string(out, rack)
            if flexible:
                out.append(0)
        if version >= 2:
            nullable_string(out, cluster_id)
        if version >= 1:
            out += _I32.pack(controller_id)
        out += _compact_length(len(topics)) if flexible else _I32.pack(len(topics))
        for error, name, topic_id, is_internal, partitions, topic_authorized_operations in topics:
            out += _I16.pack(getattr(error, "code", error))
            string(out, name)
            if version >= 10:
                out += _ZERO_UUID_BYTES if topic_id is None else topic_id.bytes
            if version >= 1:
                out.append(1 if is_internal else 0)
            out += _compact_length(len(partitions)) if flexible else _I32.pack(len(partitions))
            for p_error, index, leader, leader_epoch, replicas, isr, offline in partitions:
                code = getattr(p_error, "code", p_error)
                out += head.pack(code, index, leader, leader_epoch) if with_epoch else head.pack(code, index, leader)
                _int32_array(out, replicas, flexible)
                _int32_array(out, isr, flexible)
                if version >= 5:
                    _int32_array(out, offline, flexible)
                if flexible:
                    out.append(0)
            if version >= 8:
                out += _I32.pack(topic_authorized_operations)
            if flexible:
                out.append(0)
        if 8 <= version <= 10:
            out += _I32.pack(cluster_authorized_operations)
        if flexible:
            out.append(0)

    return write


_METADATA_VALUES_WRITERS = {version: _metadata_values_writer(version) for version in range(12)}


def _metadata_response_writer(version: int) -> Callable[[Any, bytearray], None]:
    """The writer of a kio MetadataResponse: its values taken out, then written as plain ones."""
    write_values = _METADATA_VALUES_WRITERS[version]

    def write(response: Any, out: bytearray) -> None:
        brokers = [(b.node_id, b.host, b.port, getattr(b, "rack", None)) for b in response.brokers]
        topics = [(t.error_code, t.name, getattr(t, "topic_id", None), getattr(t, "is_internal", False),
                   [(p.error_code, p.partition_index, p.leader_id, getattr(p, "leader_epoch", -1), p.replica_nodes,
                     p.isr_nodes, getattr(p, "offline_replicas", ())) for p in t.partitions],
                   getattr(t, "topic_authorized_operations", AUTHORIZED_OPERATIONS_OMITTED)) for t in response.topics]
        write_values(out, _millis(response.throttle_time) if version >= 3 else 0, brokers,
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
    out += _I32.pack(correlation_id)
    if version >= 9:
        out.append(0)  # response header v1: no tagged fields
    try:
        _METADATA_VALUES_WRITERS[version](out, throttle_time_ms, brokers, cluster_id, controller_id, topics,
                                          cluster_authorized_operations)
    except (_FallBack, struct.error) as e:
        raise ValueError(f"a MetadataResponse value does not fit its field: {e}") from None
    _I32.pack_into(out, 0, len(out) - 4)
    return out


# ---------------------------------------------------------------------------- replica fetches

# A replica fetcher sends one Fetch request per round and reads one answer: both are written
# and read here from plain values (FetchRequest.json and FetchResponse.json, versions 0-12),
# without kio objects. The request bytes are kio's (tests/tuning/test_fast_paths.py); the
# reader returns the fields a fetcher uses, the records a view of the frame (never copied).

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
    _nullable_legacy_string(out, client_id)
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
    out += _compact_length(len(topics)) if flexible else _I32.pack(len(topics))
    for topic, partitions in topics:
        if flexible:
            _compact_string(out, topic)
            out += _compact_length(len(partitions))
        else:
            _legacy_string(out, topic)
            out += _I32.pack(len(partitions))
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
        out += _compact_length(len(forgotten_topics)) if flexible else _I32.pack(len(forgotten_topics))
        for topic, partitions in forgotten_topics:
            if flexible:
                _compact_string(out, topic)
                _int32_array(out, partitions, True)
                out.append(0)
            else:
                _legacy_string(out, topic)
                _int32_array(out, partitions, False)
    if version >= 11:
        if flexible:
            _compact_string(out, rack_id)
        else:
            _legacy_string(out, rack_id)
    if flexible:
        out.append(0)  # no cluster id (the only tagged field)
    _I32.pack_into(out, 0, len(out) - 4)
    return bytes(out)


class FetchedPartition:
    """One partition of a Fetch answer as a replica fetcher reads it (FetchResponse.json's
    PartitionData; ``diverging_epoch`` is (epoch, end offset) or None)."""

    __slots__ = ("partition_index", "error_code", "high_watermark", "last_stable_offset", "log_start_offset",
                 "diverging_epoch", "aborted_transactions", "preferred_read_replica", "records")

    def __init__(self, partition_index: int, error_code: int, high_watermark: int, last_stable_offset: int,
                 log_start_offset: int, diverging_epoch: Optional[tuple[int, int]],
                 aborted_transactions: Optional[list[tuple[int, int]]], preferred_read_replica: int,
                 records: Optional[memoryview]) -> None:
        self.partition_index = partition_index
        self.error_code = error_code
        self.high_watermark = high_watermark
        self.last_stable_offset = last_stable_offset
        self.log_start_offset = log_start_offset
        self.diverging_epoch = diverging_epoch
        self.aborted_transactions = aborted_transactions
        self.preferred_read_replica = preferred_read_replica
        self.records = records

    def __repr__(self) -> str:
        size = None if self.records is None else len(self.records)
        return (f"FetchedPartition(partition={self.partition_index}, error={self.error_code}, "
                f"hw={self.high_watermark}, lso={self.last_stable_offset}, log_start={self.log_start_offset}, "
                f"diverging={self.diverging_epoch}, records={size} bytes)")


class FetchAnswer:
    """A Fetch answer's top level: throttle time, error, session id and its topics, each a
    (topic, [FetchedPartition]) pair."""

    __slots__ = ("throttle_time_ms", "error_code", "session_id", "responses")

    def __init__(self, throttle_time_ms: int, error_code: int, session_id: int,
                 responses: list[tuple[str, list[FetchedPartition]]]) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.session_id = session_id
        self.responses = responses


_I16_AT = _I16.unpack_from
_I32_AT = _I32.unpack_from
_FETCHED_HEAD_V0 = struct.Struct(">ihq")  # partition index, error code, high watermark
_FETCHED_HEAD_V4 = struct.Struct(">ihqq")  # ... last stable offset
_FETCHED_HEAD_V5 = struct.Struct(">ihqqq")  # ... log start offset
_EPOCH_END_OFFSET = struct.Struct(">iq")


def _read_uvarint(buf: memoryview, pos: int) -> tuple[int, int]:
    value = 0
    shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise ValueError("varint too long")


def _check(buf: memoryview, end: int) -> None:
    if end > len(buf):
        raise ValueError(f"Fetch answer truncated: needs {end} bytes, has {len(buf)}")


def read_fetch_response(version: int, buf: memoryview) -> FetchAnswer:
    """Read a Fetch answer's body (after the response header) of ``version`` 0-12; a malformed
    one raises ValueError (or struct.error / IndexError), as a failed parse does."""
    if not 0 <= version <= 12:
        raise ValueError(f"Fetch response version {version} has no layout here")
    flexible = version >= 12
    pos = 0
    throttle = error = session_id = 0
    if version >= 1:
        (throttle,) = _I32_AT(buf, pos)
        pos += 4
    if version >= 7:
        (error,) = _I16_AT(buf, pos)
        (session_id,) = _I32_AT(buf, pos + 2)
        pos += 6
    head = _FETCHED_HEAD_V5 if version >= 5 else _FETCHED_HEAD_V4 if version >= 4 else _FETCHED_HEAD_V0
    head_size = head.size
    if flexible:
        n_topics, pos = _read_uvarint(buf, pos)
        n_topics -= 1
    else:
        (n_topics,) = _I32_AT(buf, pos)
        pos += 4
    if n_topics < 0:
        raise ValueError("Fetch answer with a null topic array")
    responses = []
    for _ in range(n_topics):
        if flexible:
            length, pos = _read_uvarint(buf, pos)
            length -= 1
        else:
            (length,) = _I16_AT(buf, pos)
            pos += 2
        if length < 0:
            raise ValueError("Fetch answer with a null topic name")
        _check(buf, pos + length)
        topic = bytes(buf[pos:pos + length]).decode()
        pos += length
        if flexible:
            n_parts, pos = _read_uvarint(buf, pos)
            n_parts -= 1
        else:
            (n_parts,) = _I32_AT(buf, pos)
            pos += 4
        if n_parts < 0:
            raise ValueError("Fetch answer with a null partition array")
        partitions = []
        for _ in range(n_parts):
            fields = head.unpack_from(buf, pos)
            pos += head_size
            index, error_code, high_watermark = fields[0], fields[1], fields[2]
            last_stable_offset = fields[3] if version >= 4 else -1
            log_start_offset = fields[4] if version >= 5 else -1
            aborted = None
            if version >= 4:
                if flexible:
                    n_aborted, pos = _read_uvarint(buf, pos)
                    n_aborted -= 1
                else:
                    (n_aborted,) = _I32_AT(buf, pos)
                    pos += 4
                if n_aborted >= 0:
                    aborted = []
                    for _ in range(n_aborted):
                        aborted.append(_ABORTED.unpack_from(buf, pos))
                        pos += 16
                        if flexible:
                            pos = _skip_tagged_fields(buf, pos)
            preferred = -1
            if version >= 11:
                (preferred,) = _I32_AT(buf, pos)
                pos += 4
            if flexible:
                size, pos = _read_uvarint(buf, pos)
                size -= 1
            else:
                (size,) = _I32_AT(buf, pos)
                pos += 4
            records = None
            if size >= 0:
                _check(buf, pos + size)
                records = buf[pos:pos + size]
                pos += size
            diverging = None
            if flexible:
                n_tags, pos = _read_uvarint(buf, pos)
                for _ in range(n_tags):
                    tag, pos = _read_uvarint(buf, pos)
                    tag_size, pos = _read_uvarint(buf, pos)
                    _check(buf, pos + tag_size)
                    if tag == 0:  # diverging epoch: epoch, end offset, tagged fields
                        diverging = _EPOCH_END_OFFSET.unpack_from(buf, pos)
                    pos += tag_size
            partitions.append(FetchedPartition(index, error_code, high_watermark, last_stable_offset,
                                               log_start_offset, diverging, aborted, preferred, records))
        if flexible:
            pos = _skip_tagged_fields(buf, pos)
        responses.append((topic, partitions))
    if flexible:
        _skip_tagged_fields(buf, pos)
    return FetchAnswer(throttle, error, session_id, responses)


def _skip_tagged_fields(buf: memoryview, pos: int) -> int:
    n_tags, pos = _read_uvarint(buf, pos)
    for _ in range(n_tags):
        _, pos = _read_uvarint(buf, pos)
        tag_size, pos = _read_uvarint(buf, pos)
        _check(buf, pos + tag_size)
        pos += tag_size
    return pos


# ---------------------------------------------------------------------------- dispatch

# The writer of each response class met so far: (kind, writer), or None for a class the
# generic writer handles. Filled on the first answer of each class rather than at import:
# registering every Produce, Fetch and Metadata version up front imported 57 kio schema
# modules (about a fifth of a broker's start, docs/kraft.md) for versions most brokers
# never answer.
_WRITERS: dict[type, Optional[tuple[str, Callable]]] = {}


def _writer_entry(response_type: type) -> Optional[tuple[str, Callable]]:
    """The (kind, writer) of a response class, or None: only kio's own classes of the
    Produce (v3+), Fetch (v4+) and Metadata versions the broker serves have one."""
    from kio.index import load_response_schema

    from kafka_py.protocol.api_keys import ApiKeys

    api_key = getattr(response_type, "__api_key__", None)
    version = getattr(response_type, "__version__", None)
    if api_key == ApiKeys.PRODUCE.id:
        api, first = ApiKeys.PRODUCE, 3
    elif api_key == ApiKeys.FETCH.id:
        api, first = ApiKeys.FETCH, 4
    elif api_key == ApiKeys.METADATA.id:
        api, first = ApiKeys.METADATA, 0
    else:
        return None
    if version not in api.schema_versions() or version < first:
        return None
    if load_response_schema(api.id, version) is not response_type:
        return None  # this project's schema of the same message, or a look-alike
    if api is ApiKeys.PRODUCE:
        return "produce", _produce_response_writer(version)
    if api is ApiKeys.METADATA:
        return "metadata", _metadata_response_writer(version)
    partition_type = sys.modules[response_type.__module__].PartitionData
    return "fetch", _fetch_response_writer(version, partition_type)


def _register_writer(response_type: type) -> Optional[tuple[str, Callable]]:
    if response_type not in _WRITERS:
        _WRITERS[response_type] = _writer_entry(response_type)
    return _WRITERS[response_type]


def _writer_for(response_type: type) -> Optional[tuple[str, Callable]]:
    try:
        return _WRITERS[response_type]
    except KeyError:
        # Under the schema import lock: the check may import a schema module, and two
        # threads meeting a new class at once build its writer once.
        return load_schema(_register_writer, response_type)


def has_fast_writer(response_type: type) -> bool:
    return _writer_for(response_type) is not None


def encode_response_chunks(header_bytes: bytes, response: Any) -> Optional[list[Any]]:
    """The size-prefixed frame of a Produce or Fetch response as chunks (bytes and uncopied
    records values), as ``messages.encode_response_chunks`` builds it; None when this
    response needs the generic writer (see the module docstring)."""
    entry = _writer_for(type(response))
    if entry is None:
        return None
    kind, write = entry
    out = bytearray(b"\0\0\0\0")
    out += header_bytes
    chunks: list[Any] = []
    try:
        if kind in ("produce", "metadata"):
            write(response, out)
        else:
            out = write(response, out, chunks)
    except (_FallBack, AttributeError, TypeError, ValueError, struct.error, OverflowError):
        # Built by hand with unexpected types or out-of-range values: the generic writer
        # gives the same bytes or the same error as before.
        return None
    if out or not chunks:
        chunks.append(out)
    size = -4
    for chunk in chunks:
        size += len(chunk)
    _I32.pack_into(chunks[0], 0, size)
    # Encoded parts (the even places: every records chunk closes one) go out as bytes, as
    # the generic path hands them over; records values are passed on untouched.
    for i in range(0, len(chunks), 2):
        chunks[i] = bytes(chunks[i])
    return chunks
