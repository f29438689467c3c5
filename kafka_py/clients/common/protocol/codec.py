"""Port of clients/src/main/java/org/apache/kafka/common/protocol/ByteBufferAccessor.java
and of the read/write methods that Kafka's generator/.../MessageDataGenerator.java emits.

Messages are kio's frozen dataclasses (and kafka_py.clients.common.protocol.schema's, in the same
style). Writing goes through kio's entity writers. Reading does not use kio's native
entity reader, for three reasons found by probing kio 0.6.5:

* it sizes each array from the length on the wire before reading any element, so a
  4-byte garbage length asks for gigabytes and the allocation failure aborts the
  whole process (a Rust OOM abort, not an exception). Kafka's generated readers
  refuse an array longer than the bytes left; so do these.
* it raises on tagged fields it does not know, where Kafka skips them (KIP-482), so
  a newer client's optional extras would fail the request.
* it copies ``records`` fields into ``bytes``; here they stay a memoryview of the
  request buffer, as the produce path needs (docs/design.md, "The hot paths").

Primitive values (ints, strings, uuids, kio's error codes and timedeltas) are still
read by kio's native per-value readers, which check bounds, so the objects built here
compare equal to what kio's own reader builds from the same bytes.

``read_entity`` is the entry point; it accepts bytes, bytearray or memoryview.
"""
from __future__ import annotations

import io
import logging
import struct
from collections.abc import Callable
from dataclasses import fields
from functools import cache
from types import MemberDescriptorType
from typing import Any, TypeAlias, TypeVar

from kio.serial import entity_writer
from kio.serial.readers import read_unsigned_varint

from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.protocol.kio_fields import EntityField
from kafka_py.clients.common.protocol.kio_fields import EntityTupleField
from kafka_py.clients.common.protocol.kio_fields import PrimitiveField
from kafka_py.clients.common.protocol.kio_fields import PrimitiveTupleField
from kafka_py.clients.common.protocol.kio_fields import classify_field
from kafka_py.clients.common.protocol.kio_fields import get_field_tag
from kafka_py.clients.common.protocol.kio_fields import get_schema_field_type
from kafka_py.clients.common.protocol.kio_fields import get_tagged_field_default
from kafka_py.clients.common.protocol.kio_fields import is_optional
from kafka_py.clients.common.protocol.kio_fields import primitive_reader as kio_primitive_reader

logger = logging.getLogger(__name__)

E = TypeVar("E")

_INT32 = struct.Struct(">i")
_INT8 = struct.Struct(">b")

# Fixed-size primitive arrays are unpacked in one struct call.
_ARRAY_FORMATS = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "float64": "d"}


class SchemaException(KafkaException):
    """The bytes do not form a valid message of the expected type and version."""


def as_buffer(data: bytes | bytearray | memoryview) -> memoryview:
    """A flat, byte-format memoryview over ``data`` (no copy)."""
    view = data if isinstance(data, memoryview) else memoryview(data)
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    return view


def read_entity(
    entity_type: type[E], buffer: bytes | bytearray | memoryview, offset: int = 0
) -> tuple[E, int]:
    """Read one ``entity_type`` at ``offset``; returns it and the bytes consumed.

    ``records`` fields are views of ``buffer`` (writable if it is). Any malformed
    input raises SchemaException, kio's own decode errors included.
    """
    view = as_buffer(buffer)
    if not 0 <= offset <= len(view):
        raise SchemaException(f"offset {offset} outside a buffer of {len(view)} bytes")
    # kio's native readers accept only read-only buffers; records are sliced from
    # the original view so that produce can assign offsets in place.
    readonly = view if view.readonly else view.toreadonly()
    try:
        return entity_reader(entity_type)(readonly, view, offset)
    except SchemaException:
        raise
    except Exception as e:  # kio's DecodeError, UnicodeDecodeError, ValueError ...
        raise SchemaException(f"{type(e).__name__}: {e}") from e


def write_entity(entity: Any) -> bytes:
    """Serialize a kio-style entity (its class says version and flexibility)."""
    out = io.BytesIO()
    entity_writer(type(entity))(out, entity)
    return out.getvalue()


# Composite readers take (read-only view, original view, offset) and return
# (value, bytes consumed); kio's native primitive readers take (read-only view, offset).
Reader: TypeAlias = Callable[[memoryview, memoryview, int], tuple[Any, int]]


def _check_length(count: int, buffer: memoryview, offset: int, what: str) -> None:
    remaining = len(buffer) - offset
    if count > remaining:
        raise SchemaException(
            f"{what} claims {count} elements but only {remaining} bytes remain"
        )


def _read_length(buffer: memoryview, offset: int, flexible: bool, nullable: bool,
                 name: str) -> tuple[int, int]:
    """An array or bytes length: compact (varint, +1) or legacy (int32); -1 is null."""
    if flexible:
        raw, size = read_unsigned_varint(buffer, offset)
        length = raw - 1
    else:
        if len(buffer) - offset < 4:
            raise SchemaException(f"buffer ends inside the length of {name}")
        (length,) = _INT32.unpack_from(buffer, offset)
        size = 4
        if length < -1:
            raise SchemaException(f"negative length {length} for {name}")
    if length == -1 and not nullable:
        raise SchemaException(f"non-nullable field {name} was serialized as null")
    return length, size


def _primitive_array_reader(kafka_type: str, flexible: bool, nullable: bool, name: str) -> Reader:
    item_reader = kio_primitive_reader(kafka_type, flexible, False)
    fixed = _ARRAY_FORMATS.get(kafka_type)
    item_size = struct.calcsize(fixed) if fixed else 0

    def read_array(ro: memoryview, rw: memoryview, offset: int) -> tuple[tuple | None, int]:
        count, size = _read_length(ro, offset, flexible, nullable, name)
        if count == -1:
            return None, size
        pos = offset + size
        if fixed:
            _check_length(count * item_size, ro, pos, name)
            return struct.unpack_from(f">{count}{fixed}", ro, pos), size + count * item_size
        _check_length(count, ro, pos, name)
        items = []
        for _ in range(count):
            item, used = item_reader(ro, pos)
            items.append(item)
            pos += used
        return tuple(items), pos - offset

    return read_array


def _entity_array_reader(item_reader: Reader, flexible: bool, nullable: bool, name: str) -> Reader:
    def read_array(ro: memoryview, rw: memoryview, offset: int) -> tuple[tuple | None, int]:
        count, size = _read_length(ro, offset, flexible, nullable, name)
        if count == -1:
            return None, size
        pos = offset + size
        # Every element takes at least one byte, so a longer count is garbage; checked
        # before the loop so that a huge count costs nothing.
        _check_length(count, ro, pos, name)
        items = []
        for _ in range(count):
            item, used = item_reader(ro, rw, pos)
            items.append(item)
            pos += used
        return tuple(items), pos - offset

    return read_array


def _records_reader(flexible: bool, nullable: bool, name: str) -> Reader:
    """Records stay a view of the request buffer (zero copy)."""

    def read_records(ro: memoryview, rw: memoryview, offset: int) -> tuple[memoryview | None, int]:
        length, size = _read_length(ro, offset, flexible, nullable, name)
        if length == -1:
            return None, size
        start = offset + size
        _check_length(length, ro, start, name)
        return rw[start:start + length], size + length

    return read_records


def _nullable_entity_reader(inner: Reader) -> Reader:
    # KIP-893 marker byte, written by kio's writer as -1 (null) or 1.
    def read_nullable(ro: memoryview, rw: memoryview, offset: int) -> tuple[Any, int]:
        if len(ro) - offset < 1:
            raise SchemaException("buffer ends before a nullable struct marker")
        (marker,) = _INT8.unpack_from(ro, offset)
        if marker < 0:
            return None, 1
        value, used = inner(ro, rw, offset + 1)
        return value, used + 1

    return read_nullable


def _field_reader(field: Any, flexible: bool, tagged: bool) -> tuple[bool, Callable]:
    """``(is_native, reader)`` for one dataclass field."""
    # Tagged fields are optional by their absence, so their values are never null
    # on the wire; kio makes the same choice when writing.
    nullable = False if tagged else is_optional(field)
    kind = classify_field(field)
    match kind:
        case PrimitiveField():
            kafka_type = get_schema_field_type(field)
            if kafka_type == "records":
                return False, _records_reader(flexible, nullable, field.name)
            return True, kio_primitive_reader(kafka_type, flexible, nullable)
        case PrimitiveTupleField():
            kafka_type = get_schema_field_type(field)
            return False, _primitive_array_reader(kafka_type, flexible, nullable, field.name)
        case EntityField(entity_type):
            reader = entity_reader(entity_type)
            return False, _nullable_entity_reader(reader) if nullable else reader
        case EntityTupleField(entity_type):
            return False, _entity_array_reader(entity_reader(entity_type), flexible, nullable,
                                               field.name)
    raise SchemaException(f"cannot read field {field.name} of kind {kind!r}")


@cache
def entity_reader(entity_type: type[E]) -> Callable[[memoryview, memoryview, int], tuple[E, int]]:
    """A reader for one kio-style entity class, compiled once per class."""
    flexible: bool = entity_type.__flexible__
    plain: list[tuple[str, bool, Callable]] = []
    tagged: dict[int, tuple[str, bool, Callable]] = {}
    tag_defaults: dict[str, Any] = {}
    for field in fields(entity_type):
        tag = get_field_tag(field)
        native, reader = _field_reader(field, flexible, tag is not None)
        if tag is None:
            plain.append((field.name, native, reader))
        else:
            tagged[int(tag)] = (field.name, native, reader)
            tag_defaults[field.name] = get_tagged_field_default(field)
    plain_fields = tuple(plain)
    setters = _field_setters(entity_type)
    if setters is not None and not flexible:
        # what nearly every request is made of: fields read and set in order, no dict
        set_fields = tuple((setters[name], native, reader) for name, native, reader in plain_fields)

        def read_fields_in_place(ro: memoryview, rw: memoryview, offset: int) -> tuple[E, int]:
            entity = _new_object(entity_type)
            pos = offset
            for setter, native, reader in set_fields:
                if native:
                    value, used = reader(ro, pos)
                else:
                    value, used = reader(ro, rw, pos)
                setter(entity, value)
                pos += used
            return entity, pos - offset

        return read_fields_in_place

    if setters is not None:
        # a flexible message (Produce v9, Fetch v12, every newer version): the same, with its
        # tagged fields set as they come and the absent ones given their defaults after
        set_fields = tuple((setters[name], native, reader) for name, native, reader in plain_fields)
        set_defaults = tuple((name, setters[name], default) for name, default in tag_defaults.items())

        def read_flexible_fields_in_place(ro: memoryview, rw: memoryview, offset: int) -> tuple[E, int]:
            entity = _new_object(entity_type)
            pos = offset
            for setter, native, reader in set_fields:
                if native:
                    value, used = reader(ro, pos)
                else:
                    value, used = reader(ro, rw, pos)
                setter(entity, value)
                pos += used
            count, used = read_unsigned_varint(ro, pos)
            pos += used
            seen: dict[str, Any] = {}
            if count:
                pos = _read_tagged_fields(ro, rw, pos, count, tagged, entity_type, seen)
            for name, value in seen.items():
                setters[name](entity, value)
            for name, setter, default in set_defaults:
                if name not in seen:
                    setter(entity, default)
            return entity, pos - offset

        return read_flexible_fields_in_place

    def read_entity_fields(ro: memoryview, rw: memoryview, offset: int) -> tuple[E, int]:
        values: dict[str, Any] = {}
        pos = offset
        for name, native, reader in plain_fields:
            if native:
                values[name], used = reader(ro, pos)
            else:
                values[name], used = reader(ro, rw, pos)
            pos += used
        if flexible:
            count, used = read_unsigned_varint(ro, pos)
            pos += used
            if count:
                pos = _read_tagged_fields(ro, rw, pos, count, tagged, entity_type, values)
            for name, default in tag_defaults.items():
                values.setdefault(name, default)
        return entity_type(**values), pos - offset

    return read_entity_fields


def _read_tagged_fields(ro: memoryview, rw: memoryview, pos: int, count: int,
                        tagged: dict[int, tuple[str, bool, Any]], entity_type: type, values: dict[str, Any]) -> int:
    """Reads ``count`` tagged fields from ``pos`` into ``values`` by field name, and returns
    the position after them. Unknown tags are skipped: they come from newer peers (KIP-482)."""
    # Each tagged field takes at least two bytes (tag and size).
    _check_length(count, ro, pos, f"{entity_type.__name__} tagged fields")
    for _ in range(count):
        tag, used = read_unsigned_varint(ro, pos)
        pos += used
        size, used = read_unsigned_varint(ro, pos)
        pos += used
        end = pos + size
        if end > len(ro):
            raise SchemaException(f"tagged field {tag} runs past the end of the buffer")
        known = tagged.get(tag)
        if known is not None:
            name, native, reader = known
            if native:
                values[name], used = reader(ro[:end], pos)
            else:
                values[name], used = reader(ro[:end], rw[:end], pos)
            if used != size:
                raise SchemaException(f"tagged field {tag} ({name}) has size {size} "
                                      f"but its value took {used} bytes")
        pos = end
    return pos


_new_object = object.__new__


def _field_setters(entity_type: type) -> dict[str, Callable[[Any, Any], None]] | None:
    """The ``__set__`` of each field's slot, for a slotted dataclass whose ``__init__`` does
    nothing but set its fields (kio's message classes): an entity built field by field
    through them equals one built with ``__init__``, without the frozen dataclass's
    ``object.__setattr__`` per field and the keyword arguments. None for any other class."""
    init = getattr(entity_type.__init__, "__code__", None)
    if hasattr(entity_type, "__post_init__") or init is None or init.co_filename != "<string>":
        return None  # an __init__ of its own, or checks after it: built with it
    setters = {}
    for field in fields(entity_type):
        descriptor = vars(entity_type).get(field.name)
        if not isinstance(descriptor, MemberDescriptorType) or not field.init:
            return None
        setters[field.name] = descriptor.__set__
    return setters


# Byte strings at least this long are passed through as their own chunk rather than
# copied into the surrounding bytes: they are records.
_PASS_THROUGH_BYTES = 4096


class ChunkWriter:
    """A kio ``Writable`` that assembles a message as a list of chunks.

    Small writes are joined into ``bytes`` chunks. Large byte strings and any
    non-bytes object are kept as chunks of their own, uncopied: that is how a fetch
    response carries record data as file regions for ``os.sendfile`` (Kafka's
    ``MultiRecordsSend``). A ``records`` field may therefore hold any object whose
    ``len()`` is its size in bytes. ``size`` is the total length of all chunks.
    """

    __slots__ = ("chunks", "size", "_pending")

    def __init__(self) -> None:
        self.chunks: list[Any] = []
        self.size = 0
        self._pending = bytearray()

    def write(self, data: Any) -> None:
        n = len(data)
        self.size += n
        if isinstance(data, (bytes, bytearray, memoryview)) and n < _PASS_THROUGH_BYTES:
            self._pending += data
            return
        self._flush()
        self.chunks.append(data)

    def _flush(self) -> None:
        if self._pending:
            self.chunks.append(bytes(self._pending))
            self._pending = bytearray()

    def getvalue(self) -> list[Any]:
        self._flush()
        return self.chunks


def write_entity_chunks(entity: Any, writer: ChunkWriter | None = None) -> ChunkWriter:
    """Serialize ``entity`` into ``writer`` (a new one by default) and return it."""
    writer = writer if writer is not None else ChunkWriter()
    entity_writer(type(entity))(writer, entity)
    return writer
