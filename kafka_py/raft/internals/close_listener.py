"""Port of raft/src/main/java/org/apache/kafka/raft/internals/CloseListener.java (Kafka 2.8.2).

Told when a BatchReader is closed: how the raft client learns that a listener has finished
with the batches it was handed.
"""
from __future__ import annotations

import logging
from typing import Protocol, TypeVar

logger = logging.getLogger(__name__)

T_contra = TypeVar("T_contra", contravariant=True)


class CloseListener(Protocol[T_contra]):
    def on_close(self, closeable: T_contra) -> None: ...
