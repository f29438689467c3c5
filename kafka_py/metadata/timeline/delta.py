"""Port of metadata/src/main/java/org/apache/kafka/timeline/Delta.java.

What one snapshot keeps for one timeline collection: enough of the collection's state at
the snapshot's epoch to read it and to return to it.
"""
from __future__ import annotations

import abc


class Delta(abc.ABC):
    @abc.abstractmethod
    def merge_from(self, destination_epoch: int, source: Delta) -> None:
        """Fold ``source``, the delta of the next (newer) snapshot being deleted, into this
        one, whose snapshot is at ``destination_epoch``."""
