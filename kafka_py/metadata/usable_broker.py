"""Port of metadata/src/main/java/org/apache/kafka/metadata/UsableBroker.java.

A broker a replica may be placed on, as the replica placement policy sees it.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class UsableBroker:
    id: int
    rack: str | None
