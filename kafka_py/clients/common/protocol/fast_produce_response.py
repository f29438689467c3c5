"""A ProduceResponse written by hand, beside the serialization of
clients/src/main/java/org/apache/kafka/common/requests/ProduceResponse.java (the write method
Kafka's generator emits for ProduceResponseData from ProduceResponse.json, Kafka 2.8.2); no
counterpart in Kafka's source as code.

Every produce request is answered with one. The generic writer (kio's, field by field, one
function call and a type check per value) costs tens of microseconds for even a
one-partition answer; here each version (3 to 9) is laid out once, with the fixed-size
fields of a partition packed in a single ``struct`` call. The bytes are exactly kio's
(tests/protocol/test_fast_response_writers.py compares both, every version, and has
kafka-python read them back), so a client cannot tell which path ran.

``encode_produce_response`` writes a whole frame straight from plain values, for KafkaApis
(server/kafka_apis_fast_answers.py): no response objects at all on the path every produce
takes. ``produce_response_writer`` writes a kio ProduceResponse for
``messages.encode_response_chunks`` (kafka_py/clients/common/protocol/fast_response_writers.py).

The values writer also exists in C (``_fast_produce_response.c``, built by setup.py), used by
``encode_produce_response`` where it is built: it writes the same bytes, and hands anything
but the common case (a value of another type or out of range, a string too long) back to
the Python writer, which writes it or raises as before (tests/protocol/test_fast_response_writers.py
runs the frames of both against kio's and against each other).

Requests of versions 3 to 9 are read by kafka_py/clients/common/protocol/fast_produce_request.py (in C where
it is built), the others by the generic reader of kafka_py.clients.common.protocol.codec.
"""
from __future__ import annotations

import struct
from typing import Any, Callable

from kafka_py.clients.common.protocol.fast_fields import (
    I32,
    FallBack,
    compact_length,
    compact_string,
    datetime_millis,
    legacy_string,
    millis,
    nullable_legacy_string,
)

try:  # the same values writer in C (_fast_produce_response.c), built by setup.py
    from kafka_py.clients.common.protocol import _fast_produce_response as _compiled
except ImportError:  # pragma: no cover - a checkout whose extension was not built
    _compiled = None

# Partition answers by version: index, error code, base offset, log append time (v2+), log
# start offset (v5+).
_PRODUCE_PARTITION_V3 = struct.Struct(">ihqq")
_PRODUCE_PARTITION_V5 = struct.Struct(">ihqqq")


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
        out += compact_length(len(topics)) if flexible else I32.pack(len(topics))
        for name, partitions in topics:
            if flexible:
                compact_string(out, name)
            else:
                legacy_string(out, name)
            out += compact_length(len(partitions)) if flexible else I32.pack(len(partitions))
            for index, error, base_offset, log_append_time, log_start_offset, record_errors, message in partitions:
                # an Errors member carries its code; kio's ErrorCode and ints are the code
                code = getattr(error, "code", error)
                if with_log_start:
                    out += partition_struct.pack(index, code, base_offset, log_append_time, log_start_offset)
                else:
                    out += partition_struct.pack(index, code, base_offset, log_append_time)
                if with_record_errors:
                    record_errors = record_errors or ()
                    out += compact_length(len(record_errors)) if flexible else I32.pack(len(record_errors))
                    for batch_index, batch_message in record_errors:
                        out += I32.pack(batch_index)
                        if flexible:
                            compact_string(out, batch_message)
                            out.append(0)
                        else:
                            nullable_legacy_string(out, batch_message)
                    if flexible:
                        compact_string(out, message)
                    else:
                        nullable_legacy_string(out, message)
                if flexible:
                    out.append(0)
            if flexible:
                out.append(0)
        out += I32.pack(throttle_time_ms)
        if flexible:
            out.append(0)

    return write


_PRODUCE_VALUES_WRITERS: dict[int, Callable[[Any, int, bytearray], None]] = {}


def _produce_values_writer_for(version: int) -> Callable[[Any, int, bytearray], None]:
    write = _PRODUCE_VALUES_WRITERS.get(version)
    if write is None:
        write = _PRODUCE_VALUES_WRITERS[version] = _produce_values_writer(version)
    return write


def produce_response_writer(version: int) -> Callable[[Any, bytearray], None]:
    """The writer of a kio ProduceResponse: its values taken out, then written as plain ones."""
    write_values = _produce_values_writer_for(version)
    with_log_start = version >= 5
    with_record_errors = version >= 8

    def write(response: Any, out: bytearray) -> None:
        topics = [(topic.name, [
            (p.index, p.error_code.value, p.base_offset, datetime_millis(p.log_append_time),
             p.log_start_offset if with_log_start else -1,
             [(e.batch_index, e.batch_index_error_message) for e in p.record_errors] if with_record_errors else (),
             p.error_message if with_record_errors else None)
            for p in topic.partition_responses]) for topic in response.responses]
        write_values(topics, millis(response.throttle_time), out)

    return write


def encode_produce_response(version: int, correlation_id: int, topics: Any, throttle_time_ms: int = 0) -> bytearray:
    """The size-prefixed frame (header included) of a ProduceResponse of ``version`` (3+),
    written straight from plain values (``topics`` as ``_produce_values_writer`` takes
    them): the same bytes as building that response and encoding it, without the objects.
    Raises ValueError for values the layout cannot hold (a topic name over 32,767 bytes)."""
    out = bytearray(b"\0\0\0\0")
    out += I32.pack(correlation_id)
    if version >= 9:
        out.append(0)  # response header v1: no tagged fields
    try:
        # the compiled writer writes the common case, or nothing and says so
        if _compiled is None or not _compiled.write_values(version, topics, throttle_time_ms, out):
            _produce_values_writer_for(version)(topics, throttle_time_ms, out)
    except FallBack:
        raise ValueError("a ProduceResponse value does not fit its field") from None
    I32.pack_into(out, 0, len(out) - 4)
    return out


__all__ = ["encode_produce_response", "produce_response_writer"]
