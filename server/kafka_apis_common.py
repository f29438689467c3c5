"""What KafkaApis (server/kafka_apis.py) and its handler modules (server/kafka_apis_*.py) share
to read requests and group answers; a helper module of this port, with no Kafka file of its
own (Kafka's KafkaApis.scala reads fields with the generated classes' getters and groups
with its collections).

* ``field_of``: a request field that older versions lack, or its default;
* ``millis``: a duration as kio reads it (a timedelta) or an int, in milliseconds;
* ``topics_of``: (partition, value) pairs grouped by topic, topics in first-seen order.
"""
from __future__ import annotations

import datetime
from typing import Any, Iterable

from kafka_py.common.topic_partition import TopicPartition


def field_of(obj: Any, name: str, default: Any = None) -> Any:
    """``obj.name``, or ``default`` where the message version read has no such field."""
    return getattr(obj, name, default)


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


__all__ = ["field_of", "millis", "topics_of"]
