"""Port of raft/src/main/java/org/apache/kafka/raft/RaftResponse.java (Kafka 2.8.2).

``RaftResponse.Inbound`` is an answer from ``source_id`` to one of our requests (matched by
correlation id); ``RaftResponse.Outbound`` is our answer to a request we received.
"""
from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)


class RaftResponse:
    __slots__ = ("_correlation_id", "_data")

    def __init__(self, correlation_id: int, data: Any) -> None:
        self._correlation_id = correlation_id
        self._data = data

    def correlation_id(self) -> int:
        return self._correlation_id

    def data(self) -> Any:
        return self._data


class _InboundResponse(RaftResponse):
    __slots__ = ("_source_id",)

    def __init__(self, correlation_id: int, data: Any, source_id: int) -> None:
        super().__init__(correlation_id, data)
        self._source_id = source_id

    def source_id(self) -> int:
        return self._source_id

    def __repr__(self) -> str:
        return (f"InboundResponse(correlationId={self._correlation_id}, data={type(self._data).__name__}, "
                f"sourceId={self._source_id})")


class _OutboundResponse(RaftResponse):
    __slots__ = ()

    def __repr__(self) -> str:
        return f"OutboundResponse(correlationId={self._correlation_id}, data={type(self._data).__name__})"


_InboundResponse.__name__ = _InboundResponse.__qualname__ = "RaftResponse.Inbound"
_OutboundResponse.__name__ = _OutboundResponse.__qualname__ = "RaftResponse.Outbound"
RaftResponse.Inbound = _InboundResponse  # type: ignore[attr-defined]
RaftResponse.Outbound = _OutboundResponse  # type: ignore[attr-defined]
