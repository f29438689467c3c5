"""A FetchResponse written and read by hand, beside the serialization of
clients/src/main/java/org/apache/kafka/common/requests/FetchResponse.java (the write and read
methods Kafka's generator emits for FetchResponseData from FetchResponse.json, versions 0 to
12, Kafka 2.8.2); no counterpart in Kafka's source as code.

* ``fetch_response_writer``: the broker's Fetch answer from a FetchResponse (kio's class for
  v4+, this project's generated one for the old consumers' v0-v3), for
  ``messages.encode_response_chunks`` (kafka_py/clients/common/protocol/fast_response_writers.py): encoded
  parts, with the records values that stay chunks of their own (file regions sent with
  sendfile, large buffers) passed on uncopied between them. A v12 partition with a tagged
  field set (diverging epoch, current leader, snapshot id) raises ``FallBack``: the generic
  (kio) writer writes that answer. The bytes are exactly kio's
  (tests/protocol/test_fast_response_writers.py).
* ``read_fetch_response``: an answer as a replica fetcher reads it (and kafka-py's tools and
  the Spark source's reads through the brokers), to a ``FetchAnswer`` of the fields a
  fetcher uses, each partition's records a view of the frame, never copied
  (tests/protocol/test_fast_fetch_codec.py reads what kio writes). The requests are written
  by kafka_py/clients/common/protocol/fast_fetch_request.py.
"""
from __future__ import annotations

import struct
from dataclasses import fields as dataclass_fields
from typing import Any, Callable, Optional

from kafka_py.clients.common.protocol.fast_fields import (
    BYTES_TYPES,
    I16,
    I32,
    PASS_THROUGH_BYTES,
    FallBack,
    compact_length,
    compact_string,
    legacy_string,
    millis,
)

# Partition heads by version: index, error, high watermark, last stable offset (v4+), log
# start offset (v5+).
_FETCH_PARTITION_V0 = struct.Struct(">ihq")
_FETCH_PARTITION_V4 = struct.Struct(">ihqq")
_FETCH_PARTITION_V5 = struct.Struct(">ihqqq")
_ABORTED = struct.Struct(">qq")
_THROTTLE_ERROR_SESSION = struct.Struct(">ihi")


def fetch_response_writer(version: int, partition_type: type) -> Callable[[Any, bytearray, list], bytearray]:
    """The writer of a FetchResponse of ``version`` whose partitions are of ``partition_type``
    (that version's PartitionData)."""
    flexible = version >= 12
    head = _FETCH_PARTITION_V5 if version >= 5 else _FETCH_PARTITION_V4 if version >= 4 else _FETCH_PARTITION_V0
    with_throttle = version >= 1
    with_isolation = version >= 4  # the last stable offset and the aborted transactions
    with_log_start = version >= 5
    with_session = version >= 7
    with_preferred_replica = version >= 11
    # v12's tagged partition fields, skipped by kio when equal to their defaults.
    tagged_defaults = ()
    if flexible:
        tagged_defaults = tuple((f.name, f.default) for f in dataclass_fields(partition_type)
                                if f.name in ("diverging_epoch", "current_leader", "snapshot_id"))

    def write(response: Any, out: bytearray, chunks: list) -> bytearray:
        """Writes into ``out``; a records value that stays a chunk of its own closes ``out``
        into ``chunks`` and the writing goes on in a new bytearray, which is returned."""
        if with_session:
            out += _THROTTLE_ERROR_SESSION.pack(millis(response.throttle_time), response.error_code.value,
                                                response.session_id)
        elif with_throttle:
            out += I32.pack(millis(response.throttle_time))
        topics = response.responses
        out += compact_length(len(topics)) if flexible else I32.pack(len(topics))
        for topic in topics:
            if flexible:
                compact_string(out, topic.topic)
            else:
                legacy_string(out, topic.topic)
            partitions = topic.partitions
            out += compact_length(len(partitions)) if flexible else I32.pack(len(partitions))
            for p in partitions:
                for name, default in tagged_defaults:
                    if getattr(p, name) != default:
                        raise FallBack()
                if with_log_start:
                    out += head.pack(p.partition_index, p.error_code.value, p.high_watermark,
                                     p.last_stable_offset, p.log_start_offset)
                elif with_isolation:
                    out += head.pack(p.partition_index, p.error_code.value, p.high_watermark,
                                     p.last_stable_offset)
                else:
                    out += head.pack(p.partition_index, p.error_code.value, p.high_watermark)
                if with_isolation:
                    aborted = p.aborted_transactions
                    if aborted is None:
                        out += b"\x00" if flexible else b"\xff\xff\xff\xff"
                    else:
                        out += compact_length(len(aborted)) if flexible else I32.pack(len(aborted))
                        for a in aborted:
                            out += _ABORTED.pack(a.producer_id, a.first_offset)
                            if flexible:
                                out.append(0)
                if with_preferred_replica:
                    out += I32.pack(p.preferred_read_replica)
                records = p.records
                if records is None:
                    out += b"\x00" if flexible else b"\xff\xff\xff\xff"
                else:
                    if isinstance(records, str):
                        raise FallBack()
                    size = len(records)
                    out += compact_length(size) if flexible else I32.pack(size)
                    if isinstance(records, BYTES_TYPES) and size < PASS_THROUGH_BYTES:
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


_I16_AT = I16.unpack_from
_I32_AT = I32.unpack_from
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


__all__ = ["FetchAnswer", "FetchedPartition", "fetch_response_writer", "read_fetch_response"]
