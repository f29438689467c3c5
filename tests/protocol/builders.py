"""Build fully populated instances of kio-style message classes for tests.

Every field gets a value that differs from its default, so a round trip that drops
or reorders a field fails.
"""
from __future__ import annotations

import uuid
from dataclasses import fields
from datetime import timedelta
from typing import Any

from kio.schema.errors import ErrorCode
from kafka_py.clients.common.protocol.kio_fields import EntityField
from kafka_py.clients.common.protocol.kio_fields import EntityTupleField
from kafka_py.clients.common.protocol.kio_fields import PrimitiveField
from kafka_py.clients.common.protocol.kio_fields import PrimitiveTupleField
from kafka_py.clients.common.protocol.kio_fields import classify_field
from kafka_py.clients.common.protocol.kio_fields import get_schema_field_type
from kio.serial.readers import tz_aware_from_i64


def sample(kafka_type: str, seed: int) -> Any:
    match kafka_type:
        case "int8":
            return seed % 100 + 1
        case "int16":
            return 300 + seed
        case "int32":
            return 70_000 + seed
        case "int64":
            return 5_000_000_000 + seed
        case "string":
            return f"topic-{seed}-é"
        case "bool":
            return True
        case "uuid":
            return uuid.UUID(int=0x1234_5678_9ABC + seed)
        case "error_code":
            return ErrorCode.not_leader_or_follower
        case "bytes" | "records":
            return bytes(range(seed % 7, seed % 7 + 9))
        case "uint16":
            return 40_000 + seed
        case "float64":
            return 0.5 + seed
        case "timedelta_i32" | "timedelta_i64":
            return timedelta(milliseconds=1_500 + seed)
        case "datetime_i64":
            return tz_aware_from_i64(1_700_000_000_000 + seed)
    raise AssertionError(f"no sample for {kafka_type}")


def build(cls: type, seed: int = 1) -> Any:
    """An instance of ``cls`` with every field set, arrays holding two elements."""
    values = {}
    for n, f in enumerate(fields(cls)):
        s = seed * 10 + n
        match classify_field(f):
            case PrimitiveField():
                values[f.name] = sample(get_schema_field_type(f), s)
            case PrimitiveTupleField():
                kafka_type = get_schema_field_type(f)
                values[f.name] = (sample(kafka_type, s), sample(kafka_type, s + 1))
            case EntityField(entity_type):
                values[f.name] = build(entity_type, s)
            case EntityTupleField(entity_type):
                values[f.name] = (build(entity_type, s), build(entity_type, s + 1))
    return cls(**values)
