"""Port of the JSON converters Kafka generates for the metadata records
(generator/src/main/java/org/apache/kafka/message/JsonConverterGenerator.java, and
MetadataJsonConvertersGenerator.java's MetadataJsonConverters), with the records' generated
``toString`` (MessageDataGenerator.generateClassToString) and the two ways Jackson prints a
tree (``JsonNode.toString`` and ``toPrettyString``).

Kafka's tools show metadata records as JSON: ``kafka-dump-log.sh --cluster-metadata-decoder``
prints each record's ``{"type":...,"version":...,"data":{...}}`` on one line, and the
metadata shell keeps a partition as its PartitionRecord's pretty-printed JSON, which it
reads back to apply a PartitionChangeRecord. Kafka generates one converter class per
record; here one walk over the generated dataclasses (kafka_py.metadata.records) does the
same, field by field in spec order, with the rules of the generator:

* names are the spec's in camelCase (``TopicId`` -> ``topicId``); every generated field
  name here is that name in snake_case, so it converts back without a table;
* numbers are numbers, a ``float64`` printed as Java's ``Double.toString`` prints it
  (``1024.0``, ``1.0E7``); a uuid is Kafka's ``Uuid.toString`` (URL-safe base64 without
  padding); ``bytes`` are base64 (Jackson's BinaryNode); a null string or array is ``null``;
* a tagged field is written only when it differs from its default.

The ``toString`` of a record is Kafka's too: ``TopicRecord(name='orders', topicId=...)``,
strings in single quotes, arrays as ``[a, b]``, bytes as Java's ``Arrays.toString``.
"""
from __future__ import annotations

import base64
import dataclasses
import json
import math
import uuid
from decimal import Decimal
from typing import Any, Union, get_args, get_origin, get_type_hints

from kafka_py.metadata.api_message_and_version import ApiMessage

# What Kafka's Uuid.ZERO_UUID prints; a null uuid field reads as it.
ZERO_UUID_STRING = "AAAAAAAAAAAAAAAAAAAAAA"


class JavaDouble(float):
    """A float64 field's value: a float that Jackson prints with Java's Double.toString."""


# -- names and Kafka's value formats ---------------------------------------------------------

def camel_case_name(field_name: str) -> str:
    """The spec's name in camelCase (FieldSpec.camelCaseName) from the generated snake_case."""
    head, *rest = field_name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def snake_case_name(camel: str) -> str:
    out = []
    for ch in camel:
        if ch.isupper():
            out.append("_" + ch.lower())
        else:
            out.append(ch)
    return "".join(out)


def uuid_to_string(value: uuid.UUID | None) -> str:
    """Kafka's Uuid.toString: the 16 bytes in URL-safe base64, no padding."""
    if value is None:
        return ZERO_UUID_STRING
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def uuid_from_string(text: str) -> uuid.UUID:
    """Kafka's Uuid.fromString."""
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"Invalid Uuid string {text!r}: it is {len(raw)} bytes, a Uuid is 16")
    return uuid.UUID(bytes=raw)


def java_double_to_string(value: float) -> str:
    """Java's Double.toString: plain decimal in [1e-3, 1e7), else ``d.dddE<exp>``; the
    shortest digits that read back as the same double, as Python's repr chooses them."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    _, digits, exponent = Decimal(repr(magnitude)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exponent)  # where the decimal point falls in ``text``
    if 1e-3 <= magnitude < 1e7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{text}"
        if point >= len(text):
            return f"{sign}{text}{'0' * (point - len(text))}.0"
        return f"{sign}{text[:point]}.{text[point:]}"
    return f"{sign}{text[0]}.{text[1:] or '0'}E{point - 1}"


def _java_bytes_to_string(data: bytes) -> str:
    # java.util.Arrays.toString(byte[]): signed bytes.
    return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in data) + "]"


# -- the fields of a generated class ---------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _FieldInfo:
    name: str
    json_name: str
    kafka_type: str | None  # None: a struct or an array of structs
    element_class: type | None  # the struct class of a struct (or array of structs) field
    is_array: bool
    tagged: bool
    default: Any


_FIELDS: dict[type, tuple[_FieldInfo, ...]] = {}


def _fields(cls: type) -> tuple[_FieldInfo, ...]:
    cached = _FIELDS.get(cls)
    if cached is not None:
        return cached
    hints = get_type_hints(cls)
    infos = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        is_array = False
        element_class = None
        # Strip ``| None``, then look inside ``tuple[X, ...]``.
        args = [a for a in get_args(hint) if a is not type(None)] if get_origin(hint) is Union or \
            type(hint).__name__ == "UnionType" else [hint]
        base = args[0] if args else hint
        if get_origin(base) is tuple:
            is_array = True
            base = get_args(base)[0]
        if dataclasses.is_dataclass(base):
            element_class = base
        default = f.default if f.default is not dataclasses.MISSING else dataclasses.MISSING
        infos.append(_FieldInfo(
            name=f.name,
            json_name=camel_case_name(f.name),
            kafka_type=f.metadata.get("kafka_type"),
            element_class=element_class,
            is_array=is_array,
            tagged="tag" in f.metadata,
            default=default,
        ))
    result = tuple(infos)
    _FIELDS[cls] = result
    return result


# -- JSON, as the generated JsonConverters write and read it ---------------------------------

def _value_to_json(info: _FieldInfo, value: Any) -> Any:
    if value is None:
        if info.kafka_type == "uuid":
            return ZERO_UUID_STRING
        return None
    if info.is_array:
        return [_scalar_to_json(info, v) for v in value]
    return _scalar_to_json(info, value)


def _scalar_to_json(info: _FieldInfo, value: Any) -> Any:
    if info.element_class is not None:
        return write_json(value)
    kind = info.kafka_type
    if kind == "uuid":
        return uuid_to_string(value)
    if kind == "bytes":
        return base64.b64encode(bytes(value)).decode("ascii")
    if kind == "float64":
        return JavaDouble(value)
    if kind == "bool":
        return bool(value)
    if kind in ("int8", "int16", "uint16", "int32", "int64"):
        return int(value)
    return value  # strings


def write_json(message: Any, version: int | None = None) -> dict[str, Any]:
    """The record (or nested struct) as Kafka's generated ``<Record>JsonConverter.write``
    builds it: an ordered dict of JSON values. ``version`` is the class's own (each
    generated class here is one version); it is accepted to mirror Kafka's signature."""
    cls = type(message)
    if version is not None and hasattr(cls, "__version__") and int(cls.__version__) != version:
        raise ValueError(f"{cls.__name__} is version {cls.__version__}, not {version}")
    node: dict[str, Any] = {}
    for info in _fields(cls):
        value = getattr(message, info.name)
        if info.tagged and info.default is not dataclasses.MISSING and value == info.default:
            continue  # tagged fields at their default are left out, as on the wire
        node[info.json_name] = _value_to_json(info, value)
    return node


def read_json(node: dict[str, Any], cls: type) -> Any:
    """``<Record>JsonConverter.read``: the record of class ``cls`` from its JSON object; a
    field the object lacks takes its default (an error if it has none)."""
    if not isinstance(node, dict):
        raise ValueError(f"{cls.__name__} expected a JSON object, but got {type(node).__name__}")
    kwargs: dict[str, Any] = {}
    for info in _fields(cls):
        if info.json_name not in node:
            if info.default is dataclasses.MISSING:
                raise ValueError(f"{cls.__name__}: unable to locate field '{info.json_name}', "
                                 f"which is mandatory in version {getattr(cls, '__version__', 0)}")
            continue
        value = node[info.json_name]
        if value is None:
            kwargs[info.name] = None
        elif info.is_array:
            if not isinstance(value, list):
                raise ValueError(f"{cls.__name__} expected a JSON array for '{info.json_name}'")
            kwargs[info.name] = tuple(_scalar_from_json(info, v) for v in value)
        else:
            kwargs[info.name] = _scalar_from_json(info, value)
    return cls(**kwargs)


def _scalar_from_json(info: _FieldInfo, value: Any) -> Any:
    if info.element_class is not None:
        return read_json(value, info.element_class)
    kind = info.kafka_type
    if kind == "uuid":
        return uuid_from_string(value)
    if kind == "bytes":
        return base64.b64decode(value)
    if kind == "float64":
        return float(value)
    if kind == "bool":
        return bool(value)
    if kind in ("int8", "int16", "uint16", "int32", "int64"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"'{info.json_name}' expected an integer, but got {value!r}")
        return value
    return value


# -- Jackson's printing ----------------------------------------------------------------------

def _scalar_text(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):  # JavaDouble, or a number read back from JSON
        return java_double_to_string(value)
    if isinstance(value, int):
        return str(value)
    # Jackson escapes quotes, backslashes and control characters, and writes the rest as
    # it is (UTF-8), which is json.dumps without ensure_ascii.
    return json.dumps(value, ensure_ascii=False)


def to_json_string(node: Any) -> str:
    """Jackson's JsonNode.toString: compact, no spaces."""
    if isinstance(node, dict):
        return "{" + ",".join(f"{_scalar_text(k)}:{to_json_string(v)}" for k, v in node.items()) + "}"
    if isinstance(node, list):
        return "[" + ",".join(to_json_string(v) for v in node) + "]"
    return _scalar_text(node)


def to_pretty_string(node: Any) -> str:
    """Jackson's JsonNode.toPrettyString (DefaultPrettyPrinter): objects one field a line,
    indented two spaces a level, ``"key" : value``; arrays on one line, ``[ 1, 2 ]``; an
    empty array ``[ ]`` and an empty object ``{ }``. Arrays do not indent what they hold."""
    out: list[str] = []
    _pretty(node, 0, out)
    return "".join(out)


def _pretty(node: Any, nesting: int, out: list[str]) -> None:
    if isinstance(node, dict):
        if not node:
            out.append("{ }")
            return
        out.append("{")
        first = True
        for key, value in node.items():
            out.append("\n" if first else ",\n")
            first = False
            out.append("  " * (nesting + 1) + _scalar_text(key) + " : ")
            _pretty(value, nesting + 1, out)
        out.append("\n" + "  " * nesting + "}")
    elif isinstance(node, list):
        if not node:
            out.append("[ ]")
            return
        out.append("[ ")
        for i, value in enumerate(node):
            if i:
                out.append(", ")
            _pretty(value, nesting, out)
        out.append(" ]")
    else:
        out.append(_scalar_text(node))


# -- toString --------------------------------------------------------------------------------

def message_to_string(message: Any) -> str:
    """The generated ``toString`` of a record or struct, as Kafka prints it."""
    cls = type(message)
    parts = []
    for info in _fields(cls):
        parts.append(f"{info.json_name}={_field_to_string(info, getattr(message, info.name))}")
    return f"{cls.__name__}({', '.join(parts)})"


def _field_to_string(info: _FieldInfo, value: Any) -> str:
    if info.is_array:
        if value is None:
            return "null"
        return "[" + ", ".join(_element_to_string(info, v) for v in value) + "]"
    if info.element_class is not None:
        return "null" if value is None else message_to_string(value)
    kind = info.kafka_type
    if kind == "string":
        return "null" if value is None else f"'{value}'"
    if kind == "uuid":
        return uuid_to_string(value)
    if kind == "bytes":
        return "null" if value is None else _java_bytes_to_string(bytes(value))
    if kind == "bool":
        return "true" if value else "false"
    if kind == "float64":
        return java_double_to_string(value)
    return str(int(value))


def _element_to_string(info: _FieldInfo, value: Any) -> str:
    # MessageUtil.deepToString: each element's own toString (a string unquoted).
    if info.element_class is not None:
        return message_to_string(value)
    if info.kafka_type == "uuid":
        return uuid_to_string(value)
    if info.kafka_type == "float64":
        return java_double_to_string(value)
    return str(value)


def metadata_record_json(message: ApiMessage, version: int) -> dict[str, Any]:
    """``{"type": ..., "version": ..., "data": ...}``: how DumpLogSegments'
    ClusterMetadataLogMessageParser shows one metadata record."""
    from kafka_py.metadata.records.metadata_record_type import MetadataRecordType

    record_type = MetadataRecordType.from_id(int(type(message).__api_key__))
    return {"type": record_type.name, "version": version, "data": write_json(message, version)}
