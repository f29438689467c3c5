"""Port of the field defaults of the message classes that Kafka's generator emits
(generator/src/main/java/org/apache/kafka/message/MessageDataGenerator.java, Kafka 2.8.2):
building a request or response of any version from one description of its content.

Kafka's generated ``*Data`` classes start every field at its default and let code set
only what it knows; a field a version lacks is simply not written. ``build_entity`` does
the same over kio's frozen dataclasses: the caller describes the message as nested dicts
with kio's field names, keys the version has no field for are dropped (a key that no
version of the message has raises, so a misspelling fails at once), required fields
left out get their type's zero value, and plain ints become error codes, durations and
timestamps where the field wants them. So one description serves every version: the
broker's clients (the replica fetchers, the tools) build their requests with it.

The broker's handlers answer as Kafka's do, with one version-independent object: the
kio classes of the newest version, built with keyword arguments (``new_entity`` fills
Kafka's defaults for the fields not named and refuses a keyword that is no field), and
``to_version`` writes that object as the classes of the version a request asked for.
"""
from __future__ import annotations

import datetime
import sys
import uuid
from dataclasses import MISSING, fields
from functools import cache
from typing import Any, Mapping

from kio.schema.errors import ErrorCode
from kio.static.constants import EntityType

from kafka_py.clients.common.protocol.kio_fields import (
    EntityField,
    EntityTupleField,
    PrimitiveField,
    PrimitiveTupleField,
    classify_field,
    get_schema_field_type,
    is_optional,
)

from kafka_py.clients.common.protocol.errors import Errors


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


def _collect_fields(cls: type, known: dict[str, set[str]]) -> None:
    names = known.setdefault(cls.__name__, set())
    for name, kind, _, _, _ in _field_plan(cls):
        names.add(name)
        if isinstance(kind, (EntityField, EntityTupleField)):
            _collect_fields(kind.type_, known)


@cache
def _message_family(module_name: str) -> tuple[type, ...]:
    """Every version of the request or response defined in the module ``module_name`` (its
    nested structs included); () for a module that defines none (headers)."""
    message = next((value for value in vars(sys.modules[module_name]).values()
                    if isinstance(value, type) and value.__module__ == module_name
                    and getattr(value, "__api_key__", None) is not None
                    and getattr(value, "__type__", None) in (EntityType.request, EntityType.response)), None)
    if message is None:
        return ()
    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.messages import request_schema, response_schema

    api = ApiKeys(int(message.__api_key__))
    schema = response_schema if message.__type__ is EntityType.response else request_schema
    family = {schema(api.id, version) for version in api.schema_versions()}
    family.add(message)
    return tuple(sorted(family, key=lambda c: (int(c.__version__), c.__module__)))


@cache
def _family_fields(family: tuple[type, ...]) -> dict[str, frozenset[str]]:
    """For each struct of a message (by its name, which Kafka's specs keep across versions),
    the field names some version of it has: a key outside them is a misspelling, not a
    version difference. Computed once per request or response API."""
    known: dict[str, set[str]] = {}
    for version_cls in family:
        _collect_fields(version_cls, known)
    return {name: frozenset(fields_) for name, fields_ in known.items()}


@cache
def _own_fields(cls: type) -> frozenset[str]:
    return frozenset(name for name, *_ in _field_plan(cls))


@cache
def _allowed_keys(cls: type) -> frozenset[str]:
    """The keys ``build_entity`` accepts for ``cls``: its fields and those of the same struct in
    the other versions of its message."""
    return _own_fields(cls) | _family_fields(_message_family(cls.__module__)).get(cls.__name__, frozenset())


def _check_keys(cls: type, values: Mapping[str, Any]) -> None:
    """Raise TypeError for a key of ``values`` that no version of ``cls``'s message has there."""
    allowed = _allowed_keys(cls)
    if allowed.issuperset(values):
        return
    own = _own_fields(cls)
    unknown = sorted(str(k) for k in values if k not in allowed)
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(map(repr, unknown))} in any version of "
                        f"its message ({cls.__module__}.{cls.__qualname__} has {', '.join(sorted(own)) or 'none'})")


def build_entity(cls: type, values: Mapping[str, Any]) -> Any:
    """An instance of the kio class ``cls`` from ``values``.

    Keys that another version of the message has but this one lacks are dropped; a key
    that no version has in that struct raises TypeError naming it (a misspelling).
    Nested entities may be given as dicts; required fields not given get their type's
    zero value (0, "", empty array, null when nullable).
    """
    kwargs: dict[str, Any] = {}
    plan = _field_plan(cls)
    absent = 0
    for name, kind, kafka_type, optional, has_default in plan:
        if name not in values:
            absent += 1
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
    if len(plan) - absent != len(values):  # keys that are no field of this version
        _check_keys(cls, values)
    return cls(**kwargs)


def new_entity(cls: type, /, **values: Any) -> Any:
    """An instance of the kio class ``cls`` from keyword arguments, starting every field not
    given at Kafka's default for it, as a generated ``*Data`` class does (0, "", empty array,
    null when nullable, the schema's default where it has one); Errors, ints and timestamps
    in milliseconds are converted where the field wants an error code, a duration or a
    datetime. A keyword that is no field of ``cls`` itself raises TypeError at the call.

    The handlers build their answers this way with the classes of the newest version they
    speak; ``to_version`` then writes them at the version of the request."""
    own = _own_fields(cls)
    if not own.issuperset(values):
        unknown = sorted(k for k in values if k not in own)
        raise TypeError(f"{cls.__module__}.{cls.__qualname__} has no field {', '.join(map(repr, unknown))} "
                        f"(it has {', '.join(sorted(own)) or 'none'})")
    return build_entity(cls, values)


# How to_version fills a field of the target class: taken as it is from the source entity,
# converted (a struct, an array of structs: recursively, to the target's nested class),
# or the default of a field the source version lacks.
_COPY, _STRUCT, _STRUCTS, _DEFAULT = range(4)


@cache
def _version_plan(source: type, target: type) -> tuple[tuple[str, int, Any], ...]:
    """(field name, how, the nested target class or the default value) for each field of
    ``target`` without its own dataclass default that ``source`` lacks, and for each it has."""
    source_fields = {name: kind for name, kind, *_ in _field_plan(source)}
    plan = []
    for name, kind, kafka_type, optional, has_default in _field_plan(target):
        source_kind = source_fields.get(name)
        if source_kind is None:
            if has_default:
                continue
            if isinstance(kind, PrimitiveField):
                plan.append((name, _DEFAULT, _default_primitive(kafka_type, optional)))
            elif isinstance(kind, EntityField):
                plan.append((name, _DEFAULT, None if optional else build_entity(kind.type_, {})))
            else:
                plan.append((name, _DEFAULT, None if optional else ()))
        elif isinstance(kind, EntityField) and kind.type_ is not getattr(source_kind, "type_", None):
            plan.append((name, _STRUCT, kind.type_))
        elif isinstance(kind, EntityTupleField) and kind.type_ is not getattr(source_kind, "type_", None):
            plan.append((name, _STRUCTS, kind.type_))
        else:
            plan.append((name, _COPY, None))
    return tuple(plan)


def _convert(entity: Any, target: type) -> Any:
    if type(entity) is target:
        return entity
    kwargs: dict[str, Any] = {}
    for name, how, arg in _version_plan(type(entity), target):
        if how is _COPY:
            kwargs[name] = getattr(entity, name)
        elif how is _DEFAULT:
            kwargs[name] = arg
        else:
            value = getattr(entity, name)
            if value is None:
                kwargs[name] = None
            elif how is _STRUCT:
                kwargs[name] = _convert(value, arg)
            else:
                kwargs[name] = tuple([_convert(item, arg) for item in value])
    return target(**kwargs)


@cache
def _version_class(cls: type, version: int) -> type:
    from kafka_py.clients.common.protocol.messages import request_schema, response_schema

    schema = response_schema if cls.__type__ is EntityType.response else request_schema
    return schema(int(cls.__api_key__), version)


def to_version(entity: Any, version: int) -> Any:
    """``entity`` (a request or response of any version, usually the newest) as the kio class
    of ``version`` of its message, as Kafka's serializer writes one version-independent data
    object at the version asked: the fields that version has are taken from ``entity`` by name
    (nested structs converted likewise, by field name, to that version's struct classes), the
    fields ``entity`` lacks get their default, and the fields that version lacks are dropped.
    An entity already of that version is returned as it is. The plan of each (class, version)
    pair is computed once."""
    return _convert(entity, _version_class(type(entity), version))


__all__ = ["build_entity", "millis_to_datetime", "new_entity", "to_version"]
