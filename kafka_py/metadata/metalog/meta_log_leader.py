"""Port of metadata/src/main/java/org/apache/kafka/metalog/MetaLogLeader.java.

Who leads the metadata log, and in which epoch. A node id of -1 means no node leads.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MetaLogLeader:
    node_id: int
    epoch: int

    def __str__(self) -> str:
        return f"MetaLogLeader(nodeId={self.node_id}, epoch={self.epoch})"
