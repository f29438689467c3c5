"""Port of metadata/src/main/java/org/apache/kafka/metadata/UsableBroker.java (with
Kafka 3.0.0's ``fenced`` flag).

A broker a replica may be placed on, as the replica placer sees it. A fenced broker may
hold a follower replica when there are not enough unfenced ones, but never the leader.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class UsableBroker:
    id: int
    rack: str | None
    fenced: bool = False
