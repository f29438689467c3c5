"""What KafkaApis (server/kafka_apis.py) and its handler modules (server/kafka_apis_*.py) share
to read requests and build answers. Of Kafka's files it holds AbstractRequest.getErrorResponse,
which Kafka keeps on every request class; the rest has no Kafka file of its own (Kafka's
KafkaApis.scala reads fields with the generated classes' getters and groups with its
collections).

* ``millis``: a duration as kio reads it (a timedelta) or an int, in milliseconds;
* ``topics_of``: (partition, value) pairs grouped by topic, topics in first-seen order;
* ``partition_errors_by_topic``: the one-error-per-partition answer several APIs share;
* ``error_response`` / ``error_response_of``: the answer of a request whose handling failed
  as a whole, registered per API by the module that handles it;
* ``NO_THROTTLE``: the throttle time of an answer not held back.

The handler modules import these from here and KafkaApis imports the handler modules, so
none of them imports kafka_apis.py back.
"""
from __future__ import annotations

import datetime
import functools
import importlib
from typing import Any, Callable, Iterable, Mapping, Optional

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.network.request_channel import Request
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors

NO_THROTTLE = datetime.timedelta(0)


def millis(value: Any) -> int:
    """A kio duration (timedelta) or a plain int as milliseconds."""
    if isinstance(value, datetime.timedelta):
        return round(value.total_seconds() * 1000)
    return int(value)


def topics_of(items: Iterable[tuple[TopicPartition, Any]]) -> list[tuple[str, list[tuple[int, Any]]]]:
    """Group (partition, value) pairs by topic, topics in first-seen order (Kafka groups the
    consecutive partitions of a topic; a LinkedHashMap keyed by topic keeps them together)."""
    by_topic: dict[str, list[tuple[int, Any]]] = {}
    for tp, value in items:
        by_topic.setdefault(tp.topic, []).append((tp.partition, value))
    return list(by_topic.items())


# ---------------------------------------------------------------------------- building responses

def partition_errors_by_topic(topic_cls: type, partition_cls: type,
                              errors: Iterable[tuple[TopicPartition, Errors]]) -> tuple[Any, ...]:
    """The topics of an answer that says one error per partition, the shape several APIs share
    (OffsetCommit, TxnOffsetCommit, OffsetDelete): ``topic_cls(name, partitions)`` holding
    ``partition_cls(partition_index, error_code)``, topics in first-seen order."""
    return tuple([topic_cls(name=topic, partitions=tuple([
        partition_cls(partition_index=index, error_code=error.error_code) for index, error in parts]))
        for topic, parts in topics_of(errors)])


# ---------------------------------------------------------------------------- error responses

# What a request type answers when its handling failed as a whole (Kafka's
# AbstractRequest.getErrorResponse): request, error, error message -> the response.
ErrorResponseBuilder = Callable[[Request, Errors, Optional[str]], Any]

_ERROR_RESPONSES: dict[ApiKeys, ErrorResponseBuilder] = {}

# The modules whose handlers register error responses; imported before the first lookup.
_HANDLER_MODULES = (
    "kafka_py.server.kafka_apis",
    "kafka_py.server.kafka_apis_acls",
    "kafka_py.server.kafka_apis_admin",
    "kafka_py.server.kafka_apis_group",
    "kafka_py.server.kafka_apis_log_dirs",
    "kafka_py.server.kafka_apis_quotas",
    "kafka_py.server.kafka_apis_reassignment",
    "kafka_py.server.kafka_apis_security",
    "kafka_py.server.kafka_apis_tokens",
    "kafka_py.server.kafka_apis_txn",
)

# The served APIs that have no error response here: a failure of one closes the connection.
# Every served API has one, as every Kafka 2.8 request class has a getErrorResponse. Kafka
# closes the connection only where a request never reaches KafkaApis: a SASL exchange that
# fails before login (the network layer does that here) and a request its classes refuse to
# build (the network layer, and the ACL handlers for the codes Kafka refuses to read).
CLOSES_CONNECTION_ON_ERROR: frozenset[ApiKeys] = frozenset()


def error_response_of(*apis: ApiKeys) -> Callable[[ErrorResponseBuilder], ErrorResponseBuilder]:
    """Register the decorated function as the error response of ``apis``; each handler module
    declares it beside the handler of the request type."""

    def register(builder: ErrorResponseBuilder) -> ErrorResponseBuilder:
        for api in apis:
            known = _ERROR_RESPONSES.get(api)
            if known is not None and (known.__module__, known.__qualname__) != (
                    builder.__module__, builder.__qualname__):
                raise ValueError(f"two error responses for {api.name}: {known.__qualname__} "
                                 f"and {builder.__qualname__}")
            _ERROR_RESPONSES[api] = builder
        return builder

    return register


@functools.cache
def error_responses() -> Mapping[ApiKeys, ErrorResponseBuilder]:
    """Every registered error response, by API (the handler modules imported first)."""
    for module in _HANDLER_MODULES:
        importlib.import_module(module)
    return _ERROR_RESPONSES


def error_response(request: Request, error: Errors, message: Optional[str] = None) -> Any:
    """The request's answer when it failed as a whole (Kafka's AbstractRequest.getErrorResponse):
    ``error`` at the top level where the response has one, and on every item of the request.

    Returns None for an API without one; the caller then closes the connection.
    """
    builder = error_responses().get(request.api_key)
    return None if builder is None else builder(request, error, message)


__all__ = ["CLOSES_CONNECTION_ON_ERROR", "NO_THROTTLE", "ErrorResponseBuilder", "error_response", "error_response_of",
           "error_responses", "millis", "partition_errors_by_topic", "topics_of"]
