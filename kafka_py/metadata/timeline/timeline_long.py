"""Port of metadata/src/main/java/org/apache/kafka/timeline/TimelineLong.java (Kafka 3.0.0).

Kafka has a second class only because Java's int and long differ in width; a Python int
has no width, so TimelineLong is TimelineInteger under Kafka's other name (the
controller's counters, such as the next producer id block, use this one).
"""
from __future__ import annotations

from kafka_py.metadata.timeline.timeline_integer import TimelineInteger


class TimelineLong(TimelineInteger):
    pass
