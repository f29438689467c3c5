"""Port of raft/src/main/java/org/apache/kafka/raft/ExpirationService.java (Kafka 2.8.2).

Hands out futures that fail with a TimeoutException if nobody completes them in time: the
purgatories of parked Fetch requests and of uncommitted appends use it. The broker's
implementation runs a timing wheel on its own thread (core's
TimingWheelExpirationService); tests expire futures as their mock clock moves.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod

from kafka_py.raft.internals.completable_future import CompletableFuture

logger = logging.getLogger(__name__)


class ExpirationService(ABC):
    @abstractmethod
    def fail_after(self, timeout_ms: int) -> CompletableFuture:
        """A new future that fails with TimeoutException unless completed within ``timeout_ms``."""
