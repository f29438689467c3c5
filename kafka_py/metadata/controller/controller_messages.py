"""The controller's answers as the message classes of the requests it serves (no Kafka
counterpart: Kafka's generated *ResponseData classes serve every version at once).

Each kio class is one version of one message, so the controller builds a response of the
request's own version: ``response_module(request)`` is the module holding that version's
response classes, and ``make(cls, **fields)`` builds one, leaving out the fields this
version does not have (a CreateTopics v4 result has no topic_id) and letting the class
defaults stand for the ones not given.
"""
from __future__ import annotations

import sys
from dataclasses import MISSING, fields
from functools import cache
from types import ModuleType
from typing import Any

from kio.index import load_response_schema

from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.messages import response_schema


@cache
def _response_module(api_key: int, version: int) -> ModuleType:
    try:
        cls = response_schema(api_key, version)
    except Exception:
        # an API 2.8.2 does not have (AllocateProducerIds): kio's class
        cls = load_response_schema(api_key, version)
    return sys.modules[cls.__module__]


def response_module(request: Any) -> ModuleType:
    return _response_module(int(type(request).__api_key__), int(type(request).__version__))


@cache
def _field_names(cls: type) -> dict[str, bool]:
    """Field name -> whether the field must be given (it has no default)."""
    return {f.name: f.default is MISSING and f.default_factory is MISSING  # type: ignore[misc]
            for f in fields(cls)}


def make(cls: type, **values: Any) -> Any:
    """``cls`` from the values it has a field for, through kafka_py.clients.common.protocol.entities'
    ``build_entity``: error codes given as ints or Errors become kio's ErrorCode (which is
    what kio's writer needs), and fields not given start at Kafka's defaults (0, "", null
    when nullable, the zero Uuid)."""
    names = _field_names(cls)
    return build_entity(cls, {k: v for k, v in values.items() if k in names})
