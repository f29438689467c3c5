"""Subscribing a kafka-python group consumer so that its first assignment is complete.

kafka-python 3.0's group leader assigns partitions from the metadata it holds when the
JoinGroup answer arrives. A consumer that subscribes and polls at once often joins before
the subscribed topics' metadata has come back (its metadata refresh after bootstrap waits
out ``retry.backoff.ms``), so the leader hands out nothing and rejoins when the metadata
lands. If that second join outlives the ``poll(timeout_ms)`` that started it, the client
never applies the answer: the leader keeps an empty assignment, sends no heartbeats, and
is expelled when its session times out. Fetching the metadata right after subscribing,
before the first poll, makes the first assignment the complete one.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence


def subscribe(consumer: Any, topics: Optional[Sequence[str]] = None, pattern: Optional[str] = None,
              listener: Any = None) -> None:
    """``consumer.subscribe`` followed by a blocking metadata fetch (see the module docstring)."""
    consumer.subscribe(topics=topics, pattern=pattern, listener=listener)
    # topics() always asks the cluster; its answer reaches the coordinator's metadata
    # listener with the subscription already in place.
    consumer.topics()
