"""Port of raft/src/main/java/org/apache/kafka/raft/RaftMessage.java (Kafka 2.8.2).

What travels between the raft client and its network channel: a request or a response,
identified by its correlation id, carrying one of kio's message bodies.
"""
from __future__ import annotations

import logging
from typing import Any, Protocol

logger = logging.getLogger(__name__)


class RaftMessage(Protocol):
    def correlation_id(self) -> int: ...

    def data(self) -> Any: ...
