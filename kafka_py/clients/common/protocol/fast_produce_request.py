"""A ProduceRequest read by hand, beside the deserialization of
clients/src/main/java/org/apache/kafka/common/requests/ProduceRequest.java (the read method
Kafka's generator emits for ProduceRequestData from ProduceRequest.json, Kafka 2.8.2); no
counterpart in Kafka's source as code: Kafka has one generated reader per message and needs
no second one.

Every produce request is read on the request path, and the generic reader
(kafka_py/clients/common/protocol/codec.py) pays a loop over field readers and a call per field for each of
the request's three nested objects. This one reads versions 3 to 9 (v9, flexible, is what
the Java client of 2.8 sends; librdkafka and older clients send v3 to v8) with a few struct
calls straight into kio's own objects, equal to what the generic reader builds from the same bytes, records left
a view of the buffer (tests/protocol/test_fast_produce_request.py). It reads only what it is
sure of: anything unusual (a short buffer, a length out of range, a name that is not UTF-8,
a tagged field) returns None, and the generic reader reads the request or fails exactly as it always did.

The same reader exists in C (``_fast_produce_request.c``, built by setup.py), which reads a
one-record request for a fraction of the Python one's instructions; the Python reader is
the fallback where the extension was not built, and the two are held to the same objects
and the same refusals (tests/protocol/test_fast_produce_request.py).
"""
from __future__ import annotations

import struct
import sys
from datetime import timedelta
from functools import partial
from typing import Any, Callable, Optional

from kio.index import load_request_schema

try:  # the same reader in C (_fast_produce_request.c), built by setup.py
    from kafka_py.clients.common.protocol import _fast_produce_request as _compiled
except ImportError:  # pragma: no cover - a checkout whose extension was not built
    _compiled = None

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_ACKS_TIMEOUT_TOPICS = struct.Struct(">hii")  # acks, timeout ms, topic count
_PARTITION_HEAD = struct.Struct(">ii")  # partition index, records length
_ACKS_TIMEOUT = struct.Struct(">hi")  # v9: acks, timeout ms (a compact topic count follows)

_TIMEOUTS_KEPT = 16  # and TIMEOUTS_KEPT in _fast_produce_request.c

FIRST_VERSION = 3
LAST_VERSION = 9  # v9 is flexible: compact lengths and tagged fields


def produce_request_reader(request_type: type) -> Optional[Callable[[memoryview], Any]]:
    """The hand-written reader of ``request_type`` when it is kio's own ProduceRequest of a
    version from 3 to 9, else None. The reader takes the body as a byte-format memoryview
    and returns the request, or None where the generic reader must read it."""
    version = getattr(request_type, "__version__", None)
    if getattr(request_type, "__api_key__", None) != 0 or version is None:
        return None
    if not FIRST_VERSION <= version <= LAST_VERSION:
        return None
    if load_request_schema(0, version) is not request_type:
        return None  # a look-alike class: the generic reader knows its fields
    module = sys.modules[request_type.__module__]
    # each timeout met, as a timedelta built once (see _RequestBuilder.request)
    timeouts: dict[int, timedelta] = {}
    flexible = bool(request_type.__flexible__)
    if _compiled is not None:
        return partial(_compiled.read, flexible, request_type, module.TopicProduceData, module.PartitionProduceData,
                       timeouts)
    make = _flexible_reader if flexible else _reader
    return make(request_type, module.TopicProduceData, module.PartitionProduceData, timeouts)


def _setter(entity_type: type, name: str) -> Callable[[Any, Any], None]:
    # The slot's own __set__: an object filled through it equals one built with the frozen
    # dataclass's __init__ (which only sets its fields), without object.__setattr__ per field
    # and the keyword arguments (the generic reader does the same, codec._field_setters).
    return vars(entity_type)[name].__set__


class _RequestBuilder:
    """What both Python readers share: the slot setters of the request, its topics and
    partitions, and the request built from the fields read."""

    def __init__(self, request_type: type, topic_type: type, partition_type: type,
                 timeouts: dict[int, timedelta]) -> None:
        self.request_type = request_type
        self.timeouts = timeouts
        self.set_transactional_id = _setter(request_type, "transactional_id")
        self.set_acks = _setter(request_type, "acks")
        self.set_timeout = _setter(request_type, "timeout")
        self.set_topic_data = _setter(request_type, "topic_data")
        self.set_name = _setter(topic_type, "name")
        self.set_partition_data = _setter(topic_type, "partition_data")
        self.set_index = _setter(partition_type, "index")
        self.set_records = _setter(partition_type, "records")

    def request(self, transactional_id: Optional[str], acks: int, timeout_ms: int, topics: list) -> Any:
        request = object.__new__(self.request_type)
        self.set_transactional_id(request, transactional_id)
        self.set_acks(request, acks)
        # A producer sends the same request.timeout.ms in every request, and building a
        # timedelta costs more than reading the rest of a one-record request's header: each
        # value met is built once (they are immutable), the dict kept small against a client
        # sending many.
        timeouts = self.timeouts
        timeout = timeouts.get(timeout_ms)
        if timeout is None:
            if len(timeouts) >= _TIMEOUTS_KEPT:
                timeouts.clear()
            timeout = timeouts[timeout_ms] = timedelta(milliseconds=timeout_ms)
        self.set_timeout(request, timeout)
        self.set_topic_data(request, tuple(topics))
        return request


def _reader(request_type: type, topic_type: type, partition_type: type,
            timeouts: dict[int, timedelta]) -> Callable[[memoryview], Any]:
    builder = _RequestBuilder(request_type, topic_type, partition_type, timeouts)
    new, request = object.__new__, builder.request
    set_name, set_partition_data = builder.set_name, builder.set_partition_data
    set_index, set_records = builder.set_index, builder.set_records
    unpack_i16 = _I16.unpack_from
    unpack_i32 = _I32.unpack_from
    unpack_head = _ACKS_TIMEOUT_TOPICS.unpack_from
    unpack_partition = _PARTITION_HEAD.unpack_from

    def read_produce_request(view: memoryview) -> Any:
        try:
            end = len(view)
            (size,) = unpack_i16(view, 0)
            pos = 2
            if size >= 0:
                if pos + size > end:
                    return None
                transactional_id = str(view[pos:pos + size], "utf-8")
                pos += size
            elif size == -1:
                transactional_id = None
            else:
                return None
            acks, timeout_ms, topic_count = unpack_head(view, pos)
            pos += 10
            # every element takes at least one byte: a longer count is garbage
            if not 0 <= topic_count <= end - pos:
                return None
            topics = []
            for _ in range(topic_count):
                (size,) = unpack_i16(view, pos)
                pos += 2
                if not 0 <= size <= end - pos:
                    return None
                name = str(view[pos:pos + size], "utf-8")
                pos += size
                (partition_count,) = unpack_i32(view, pos)
                pos += 4
                if not 0 <= partition_count <= end - pos:
                    return None
                partitions = []
                for _ in range(partition_count):
                    index, size = unpack_partition(view, pos)
                    pos += 8
                    if size >= 0:
                        if size > end - pos:
                            return None
                        records = view[pos:pos + size]
                        pos += size
                    elif size == -1:
                        records = None
                    else:
                        return None
                    partition = new(partition_type)
                    set_index(partition, index)
                    set_records(partition, records)
                    partitions.append(partition)
                topic = new(topic_type)
                set_name(topic, name)
                set_partition_data(topic, tuple(partitions))
                topics.append(topic)
        except (struct.error, UnicodeDecodeError):
            return None  # the generic reader says what is wrong, as it always did
        return request(transactional_id, acks, timeout_ms, topics)

    return read_produce_request


class _Unusual(Exception):
    """Bytes the generic reader is to read (a varint longer than this reader takes)."""


def _uvarint(view: memoryview, pos: int) -> tuple[int, int]:
    """An unsigned varint of at most four bytes at ``pos``: (value, position after it)."""
    value = 0
    for shift in (0, 7, 14, 21):
        b = view[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
    raise _Unusual()


def _flexible_reader(request_type: type, topic_type: type, partition_type: type,
                     timeouts: dict[int, timedelta]) -> Callable[[memoryview], Any]:
    """Version 9: the same fields, with compact (varint length + 1) strings, arrays and
    records, and tagged fields after each struct, of which 2.8.2 defines none here. Any
    tagged field, and a null where the field is not nullable, is left to the generic reader
    (which skips an unknown tag, or refuses the null)."""
    builder = _RequestBuilder(request_type, topic_type, partition_type, timeouts)
    new, request = object.__new__, builder.request
    set_name, set_partition_data = builder.set_name, builder.set_partition_data
    set_index, set_records = builder.set_index, builder.set_records
    unpack_head = _ACKS_TIMEOUT.unpack_from
    unpack_i32 = _I32.unpack_from

    def read_produce_request(view: memoryview) -> Any:
        try:
            end = len(view)
            size, pos = _uvarint(view, 0)
            if size == 0:
                transactional_id = None
            else:
                size -= 1
                if size > end - pos:
                    return None
                transactional_id = str(view[pos:pos + size], "utf-8")
                pos += size
            acks, timeout_ms = unpack_head(view, pos)
            topic_count, pos = _uvarint(view, pos + 6)
            topic_count -= 1
            # every element takes at least one byte: a longer count is garbage (-1: null)
            if not 0 <= topic_count <= end - pos:
                return None
            topics = []
            for _ in range(topic_count):
                size, pos = _uvarint(view, pos)
                size -= 1
                if not 0 <= size <= end - pos:
                    return None
                name = str(view[pos:pos + size], "utf-8")
                pos += size
                partition_count, pos = _uvarint(view, pos)
                partition_count -= 1
                if not 0 <= partition_count <= end - pos:
                    return None
                partitions = []
                for _ in range(partition_count):
                    (index,) = unpack_i32(view, pos)
                    size, pos = _uvarint(view, pos + 4)
                    if size == 0:
                        records = None
                    else:
                        size -= 1
                        if size > end - pos:
                            return None
                        records = view[pos:pos + size]
                        pos += size
                    if view[pos] != 0:
                        return None  # tagged fields
                    pos += 1
                    partition = new(partition_type)
                    set_index(partition, index)
                    set_records(partition, records)
                    partitions.append(partition)
                if view[pos] != 0:
                    return None
                pos += 1
                topic = new(topic_type)
                set_name(topic, name)
                set_partition_data(topic, tuple(partitions))
                topics.append(topic)
            if view[pos] != 0:
                return None
        except (struct.error, UnicodeDecodeError, IndexError, _Unusual):
            return None  # the generic reader says what is wrong, as it always did
        return request(transactional_id, acks, timeout_ms, topics)

    return read_produce_request


__all__ = ["FIRST_VERSION", "LAST_VERSION", "produce_request_reader"]
