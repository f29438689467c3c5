"""Port of raft/src/main/java/org/apache/kafka/raft/RaftMessageQueue.java (Kafka 2.8.2).

The raft client's inbox: inbound requests from the network, responses to its own requests,
and wake-ups. The client's poll blocks on it for at most the time until its next timer, so
no sleep loop is needed anywhere.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Optional

from kafka_py.raft.raft_message import RaftMessage

logger = logging.getLogger(__name__)


class RaftMessageQueue(ABC):
    @abstractmethod
    def poll(self, timeout_ms: int) -> Optional[RaftMessage]:
        """The next message, or None once ``timeout_ms`` passed or ``wakeup`` was called first."""

    @abstractmethod
    def add(self, message: RaftMessage) -> None:
        ...

    @abstractmethod
    def is_empty(self) -> bool:
        """True if no message is waiting (wake-ups do not count)."""

    @abstractmethod
    def wakeup(self) -> None:
        """Make a blocked ``poll`` return (None if no message arrived)."""
