"""Port of the field defaults of the message classes that Kafka's generator emits
(generator/src/main/java/org/apache/kafka/message/MessageDataGenerator.java, Kafka 2.8.2):
building a request or response of any version from one description of its content.

Kafka's generated ``*Data`` classes start every field at its default and let code set
only what it knows; a field a version lacks is simply not written. ``build_entity`` does
the same over kio's frozen dataclasses: the caller describes the message as nested dicts
with kio's field names, keys the version has no field for are dropped, required fields
left out get their type's zero value, and plain ints become error codes, durations and
timestamps where the field wants them. So one description serves every version: the
broker's handlers answer with it (``KafkaApis.build_response``), and its clients (the
replica fetchers) build their requests with it.
"""
from __future__ import annotations

import datetime
import uuid
from dataclasses import MISSING, fields
from functools import cache
from typing import Any, Mapping

from kio.schema.errors import ErrorCode

from kafka_py.protocol.kio_fields import (
    EntityField,
    EntityTupleField,
    PrimitiveField,
    PrimitiveTupleField,
    classify_field,
    get_schema_field_type,
    is_optional,
)

from kafka_py.protocol.errors import Errors


def millis_to_datetime(ms: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)


def _convert_primitive(kafka_type: str, optional: bool, value: Any) -> Any:
    if kafka_type == "error_code":
        if isinstance(value, Errors):
            return value.error_code
        return value if isinstance(value, ErrorCode) else ErrorCode(int(value))
    if kafka_type in ("timedelta_i32", "timedelta_i64"):
        return value if isinstance(value, datetime.timedelta) else datetime.timedelta(milliseconds=int(value))
    if kafka_type == "datetime_i64":
        if value is None or isinstance(value, datetime.datetime):
            return value
        return None if (int(value) < 0 and optional) else millis_to_datetime(int(value))
    if kafka_type == "uuid" and value is None and not optional:
        return uuid.UUID(int=0)
    return value


def _default_primitive(kafka_type: str, optional: bool) -> Any:
    if optional:
        return None
    match kafka_type:
        case "string":
            return ""
        case "bytes" | "records":
            return b""
        case "bool":
            return False
        case "error_code":
            return ErrorCode.none
        case "timedelta_i32" | "timedelta_i64":
            return datetime.timedelta(0)
        case "datetime_i64":
            return millis_to_datetime(0)
        case "uuid":
            return uuid.UUID(int=0)
        case "float64":
            return 0.0
    return 0


@cache
def _field_plan(cls: type) -> tuple[tuple[str, Any, str | None, bool, bool], ...]:
    """(name, field class, kafka type, optional, has default) of each field of ``cls``."""
    plan = []
    for f in fields(cls):
        kind = classify_field(f)
        kafka_type = get_schema_field_type(f) if isinstance(kind, (PrimitiveField, PrimitiveTupleField)) else None
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        plan.append((f.name, kind, kafka_type, is_optional(f), has_default))
    return tuple(plan)


def build_entity(cls: type, values: Mapping[str, Any]) -> Any:
    """An instance of the kio class ``cls`` from ``values``.

    Keys the class has no field for are dropped (the field is absent in that version);
    nested entities may be given as dicts; required fields not given get their type's
    zero value (0, "", empty array, null when nullable).
    """
    kwargs: dict[str, Any] = {}
    for name, kind, kafka_type, optional, has_default in _field_plan(cls):
        if name not in values:
            if has_default:
                continue
            if isinstance(kind, PrimitiveField):
                kwargs[name] = _default_primitive(kafka_type, optional)
            elif isinstance(kind, EntityField):
                kwargs[name] = None if optional else build_entity(kind.type_, {})
            else:
                kwargs[name] = None if optional else ()
            continue
        value = values[name]
        if isinstance(kind, PrimitiveField):
            kwargs[name] = _convert_primitive(kafka_type, optional, value)
        elif isinstance(kind, PrimitiveTupleField):
            kwargs[name] = None if value is None else tuple(
                _convert_primitive(kafka_type, False, v) for v in value)
        elif isinstance(kind, EntityField):
            kwargs[name] = build_entity(kind.type_, value) if isinstance(value, Mapping) else value
        else:
            kwargs[name] = None if value is None else tuple(
                build_entity(kind.type_, v) if isinstance(v, Mapping) else v for v in value)
    return cls(**kwargs)


__all__ = ["build_entity", "millis_to_datetime"]
