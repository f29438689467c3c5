"""Hypothesis strategies that build any instance of a kio-style message class, from the
class alone (field shapes and wire types as kafka_py.clients.common.protocol.kio_fields reads them)."""
from __future__ import annotations

from dataclasses import fields
from functools import cache

from hypothesis import strategies as st

from kafka_py.clients.common.protocol.kio_fields import (
    EntityField,
    EntityTupleField,
    PrimitiveField,
    PrimitiveTupleField,
    classify_field,
    get_field_tag,
    get_schema_field_type,
    is_optional,
)

_PRIMITIVES = {
    "bool": st.booleans(),
    "int8": st.integers(-(2**7), 2**7 - 1),
    "int16": st.integers(-(2**15), 2**15 - 1),
    "int32": st.integers(-(2**31), 2**31 - 1),
    "int64": st.integers(-(2**63), 2**63 - 1),
    "uint16": st.integers(0, 2**16 - 1),
    # NaN never equals itself, so a round trip could not be checked with ==
    "float64": st.floats(allow_nan=False),
    "string": st.text(max_size=20),
    "bytes": st.binary(max_size=20),
    # the zero uuid is how a null uuid travels, and reads back as None
    "uuid": st.uuids().filter(lambda u: u.int != 0),
}


def _primitive(kafka_type: str) -> st.SearchStrategy:
    return _PRIMITIVES[kafka_type]


@cache
def entities(cls: type) -> st.SearchStrategy:
    """Any instance of ``cls``, every field drawn (tagged fields included, at their
    default or not)."""
    kwargs = {}
    for f in fields(cls):
        kind = classify_field(f)
        match kind:
            case PrimitiveField():
                value = _primitive(get_schema_field_type(f))
            case PrimitiveTupleField():
                value = st.lists(_primitive(get_schema_field_type(f)), max_size=4).map(tuple)
            case EntityField(entity_type):
                value = st.deferred(lambda t=entity_type: entities(t))
            case EntityTupleField(entity_type):
                value = st.lists(entities(entity_type), max_size=3).map(tuple)
        if is_optional(f) or (isinstance(kind, PrimitiveField)
                              and get_schema_field_type(f) == "uuid"):
            value = st.none() | value
        if get_field_tag(f) is not None:
            # the default is what is left off the wire: draw it often
            value = st.just(f.default) | value
        kwargs[f.name] = value
    return st.builds(cls, **kwargs)

