"""Port of raft/src/main/java/org/apache/kafka/raft/RaftRequest.java (Kafka 2.8.2).

``RaftRequest.Inbound`` is a request another node sent us; the client completes its
``completion`` with the ``RaftResponse.Outbound`` to send back. ``RaftRequest.Outbound`` is
one we send to ``destination_id``; the network channel completes its ``completion`` with
the ``RaftResponse.Inbound`` (or an exception: disconnect, timeout), and the client takes
either into its message queue.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from kafka_py.raft.internals.completable_future import CompletableFuture

if TYPE_CHECKING:
    from kafka_py.raft.raft_response import RaftResponse

logger = logging.getLogger(__name__)


class RaftRequest:
    __slots__ = ("_correlation_id", "_data", "_created_time_ms")

    def __init__(self, correlation_id: int, data: Any, created_time_ms: int) -> None:
        self._correlation_id = correlation_id
        self._data = data
        self._created_time_ms = created_time_ms

    def correlation_id(self) -> int:
        return self._correlation_id

    def data(self) -> Any:
        return self._data

    def created_time_ms(self) -> int:
        return self._created_time_ms


class _InboundRequest(RaftRequest):
    __slots__ = ("completion",)

    def __init__(self, correlation_id: int, data: Any, created_time_ms: int) -> None:
        super().__init__(correlation_id, data, created_time_ms)
        self.completion: CompletableFuture["RaftResponse.Outbound"] = CompletableFuture()

    def __repr__(self) -> str:
        return (f"InboundRequest(correlationId={self._correlation_id}, data={type(self._data).__name__}, "
                f"createdTimeMs={self._created_time_ms})")


class _OutboundRequest(RaftRequest):
    __slots__ = ("_destination_id", "completion")

    def __init__(self, correlation_id: int, data: Any, destination_id: int, created_time_ms: int) -> None:
        super().__init__(correlation_id, data, created_time_ms)
        self._destination_id = destination_id
        self.completion: CompletableFuture["RaftResponse.Inbound"] = CompletableFuture()

    def destination_id(self) -> int:
        return self._destination_id

    def __repr__(self) -> str:
        return (f"OutboundRequest(correlationId={self._correlation_id}, data={type(self._data).__name__}, "
                f"createdTimeMs={self._created_time_ms}, destinationId={self._destination_id})")


_InboundRequest.__name__ = _InboundRequest.__qualname__ = "RaftRequest.Inbound"
_OutboundRequest.__name__ = _OutboundRequest.__qualname__ = "RaftRequest.Outbound"
RaftRequest.Inbound = _InboundRequest  # type: ignore[attr-defined]
RaftRequest.Outbound = _OutboundRequest  # type: ignore[attr-defined]
