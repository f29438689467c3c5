"""What a field of a message class holds, read from the class alone.

The message classes (kio's and kafka_py.clients.common.protocol.schema's) are frozen dataclasses whose
field types say the shape (a value, an array, a nested struct, an array of structs,
``| None`` when nullable) and whose field metadata carry the wire type
(``kafka_type``) and, for tagged fields, the ``tag``. Kafka's generator keeps the same
facts in the message JSON (``type``, ``nullableVersions``, ``tag``). The codec and
``build_entity`` need them; they are derived here from the public dataclass and typing
introspection, so nothing depends on kio's private modules. The primitive readers
are kio's public native readers (``kio.serial.readers``).
"""
from __future__ import annotations

import datetime
from dataclasses import MISSING, Field, dataclass, fields, is_dataclass
from types import EllipsisType, NoneType, UnionType
from typing import Any, Callable, Union, get_args, get_origin

from kio.serial import readers
from kio.static.constants import uuid_zero


@dataclass(frozen=True, slots=True)
class PrimitiveField:
    """A single value of a wire type (int32, string, uuid, records...)."""
    type_: type


@dataclass(frozen=True, slots=True)
class PrimitiveTupleField:
    """An array of values of one wire type."""
    type_: type


@dataclass(frozen=True, slots=True)
class EntityField:
    """A nested struct."""
    type_: type


@dataclass(frozen=True, slots=True)
class EntityTupleField:
    """An array of nested structs."""
    type_: type


FieldKind = Union[PrimitiveField, PrimitiveTupleField, EntityField, EntityTupleField]


def _without_none(annotation: Any) -> Any:
    if get_origin(annotation) in (UnionType, Union):
        args = [a for a in get_args(annotation) if a is not NoneType]
        if len(args) != 1:
            raise TypeError(f"unsupported union type {annotation!r}")
        return args[0]
    return annotation


def _tuple_item(annotation: Any, name: str) -> Any:
    args = get_args(annotation)
    if len(args) != 2 or not isinstance(args[1], EllipsisType):
        raise TypeError(f"field {name} has an unsupported tuple type {annotation!r}")
    return args[0]


def classify_field(field: Field) -> FieldKind:
    """The shape of ``field``: value, array of values, struct or array of structs."""
    annotation = _without_none(field.type)
    if get_origin(annotation) is tuple:
        item = _tuple_item(annotation, field.name)
        return EntityTupleField(item) if is_dataclass(item) else PrimitiveTupleField(item)
    return EntityField(annotation) if is_dataclass(annotation) else PrimitiveField(annotation)


def is_optional(field: Field) -> bool:
    """Whether the field (an array: the array itself) may be null."""
    annotation = field.type
    if get_origin(annotation) is tuple:
        annotation = _tuple_item(annotation, field.name)
    return get_origin(annotation) in (UnionType, Union) and NoneType in get_args(annotation)


def get_schema_field_type(field: Field) -> str:
    """The wire type of a value or value-array field (``int32``, ``string``, ``records``...)."""
    try:
        kafka_type = field.metadata["kafka_type"]
    except KeyError:
        raise TypeError(f"field {field.name} carries no kafka_type") from None
    if not isinstance(kafka_type, str):
        raise TypeError(f"field {field.name} has a kafka_type that is not a string: {kafka_type!r}")
    return kafka_type


def get_field_tag(field: Field) -> int | None:
    """The tag of a tagged field (KIP-482), None for a field always on the wire."""
    tag = field.metadata.get("tag")
    return None if tag is None else int(tag)


def _implicit_default(kafka_type: str) -> Any:
    """The value a tagged field that is absent from the wire takes when its class gives none."""
    match kafka_type:
        case "int8" | "int16" | "int32" | "int64" | "uint8" | "uint16" | "uint32" | "uint64":
            return 0
        case "float64":
            return 0.0
        case "timedelta_i32" | "timedelta_i64":
            return datetime.timedelta(0)
        case "datetime_i64":
            return readers.tz_aware_from_i64(0)
        case "uuid":
            return uuid_zero
        case "string":
            return ""
        case "bytes":
            return b""
    raise TypeError(f"no implicit default for a tagged {kafka_type} field")


def get_tagged_field_default(field: Field) -> Any:
    """The value of a tagged field absent from the wire."""
    if field.default is not MISSING:
        return field.default
    if field.default_factory is not MISSING:
        return field.default_factory()
    if is_optional(field):
        raise TypeError(f"tagged field {field.name} is nullable but has no default")
    kind = classify_field(field)
    if isinstance(kind, EntityField):
        return kind.type_(**{f.name: get_tagged_field_default(f) for f in fields(kind.type_)})
    if isinstance(kind, PrimitiveField):
        return _implicit_default(get_schema_field_type(field))
    raise TypeError(f"tagged array field {field.name} has no default")


def _read_datetime_i64(buffer: Any, offset: int) -> tuple[datetime.datetime, int]:
    """A timestamp in ms since the epoch. kio's native reader refuses a negative one, but Kafka
    writes -1 where there is no timestamp (a refused CreateDelegationToken, RenewDelegationToken
    or ExpireDelegationToken): it reads as the instant it names, which writes back as -1."""
    millis, size = readers.read_int64(buffer, offset)
    if millis >= 0:
        return readers.read_datetime_i64(buffer, offset)
    return datetime.datetime.fromtimestamp(millis / 1000, tz=datetime.timezone.utc), size


# (wire type, flexible, nullable) -> kio's native reader of one value.
_PRIMITIVE_READERS: dict[tuple[str, bool, bool], Callable] = {}
for _flexible in (False, True):
    for _kafka_type, _reader in (
        ("bool", readers.read_boolean), ("int8", readers.read_int8), ("int16", readers.read_int16),
        ("int32", readers.read_int32), ("int64", readers.read_int64), ("uint8", readers.read_uint8),
        ("uint16", readers.read_uint16), ("uint32", readers.read_uint32),
        ("uint64", readers.read_uint64), ("float64", readers.read_float64),
        ("error_code", readers.read_error_code), ("timedelta_i32", readers.read_timedelta_i32),
        ("timedelta_i64", readers.read_timedelta_i64),
    ):
        _PRIMITIVE_READERS[(_kafka_type, _flexible, False)] = _reader
    _PRIMITIVE_READERS[("datetime_i64", _flexible, False)] = _read_datetime_i64
    _PRIMITIVE_READERS[("datetime_i64", _flexible, True)] = readers.read_nullable_datetime_i64
    # A null uuid is the zero uuid on the wire.
    _PRIMITIVE_READERS[("uuid", _flexible, False)] = readers.read_uuid
    _PRIMITIVE_READERS[("uuid", _flexible, True)] = readers.read_uuid
for _kafka_type in ("bytes", "records"):
    _PRIMITIVE_READERS[(_kafka_type, False, False)] = readers.read_legacy_bytes
    _PRIMITIVE_READERS[(_kafka_type, False, True)] = readers.read_nullable_legacy_bytes
    _PRIMITIVE_READERS[(_kafka_type, True, False)] = readers.read_compact_string_as_bytes
    _PRIMITIVE_READERS[(_kafka_type, True, True)] = readers.read_compact_string_as_bytes_nullable
_PRIMITIVE_READERS[("string", False, False)] = readers.read_legacy_string
_PRIMITIVE_READERS[("string", False, True)] = readers.read_nullable_legacy_string
_PRIMITIVE_READERS[("string", True, False)] = readers.read_compact_string
_PRIMITIVE_READERS[("string", True, True)] = readers.read_compact_string_nullable


def primitive_reader(kafka_type: str, flexible: bool, nullable: bool) -> Callable:
    """kio's native reader of one value: ``reader(buffer, offset) -> (value, bytes used)``."""
    try:
        return _PRIMITIVE_READERS[(kafka_type, flexible, nullable)]
    except KeyError:
        raise TypeError(f"no reader for a {'nullable ' if nullable else ''}{kafka_type} field "
                        f"({'flexible' if flexible else 'legacy'} version)") from None


__all__ = [
    "EntityField", "EntityTupleField", "FieldKind", "PrimitiveField", "PrimitiveTupleField",
    "classify_field", "get_field_tag", "get_schema_field_type", "get_tagged_field_default",
    "is_optional", "primitive_reader",
]
