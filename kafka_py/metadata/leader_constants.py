"""Port of metadata/src/main/java/org/apache/kafka/metadata/LeaderConstants.java (Kafka 3.0.0).

The two leader ids with a meaning of their own: a partition with no leader, and (in a
PartitionChangeRecord) a leader that did not change.
"""
from __future__ import annotations

from typing import Final

NO_LEADER: Final = -1
NO_LEADER_CHANGE: Final = -2
