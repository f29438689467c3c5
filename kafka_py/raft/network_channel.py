"""Port of raft/src/main/java/org/apache/kafka/raft/NetworkChannel.java (Kafka 2.8.2).

How the raft client reaches other nodes, without knowing how: it hands over a
``RaftRequest.Outbound`` and later finds the answer (or the failure) in the request's
``completion``. The socket-backed implementation (core's KafkaNetworkChannel) lives outside
this package; the tests drive the client over an in-memory one.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod

from kafka_py.raft.raft_config import InetAddressSpec
from kafka_py.raft.raft_request import RaftRequest

logger = logging.getLogger(__name__)


class NetworkChannel(ABC):
    @abstractmethod
    def new_correlation_id(self) -> int:
        """A correlation id not used before by this channel."""

    @abstractmethod
    def send(self, request: "RaftRequest.Outbound") -> None:
        """Send ``request``; its ``completion`` is completed with the response or an error."""

    @abstractmethod
    def update_endpoint(self, node_id: int, address: InetAddressSpec) -> None:
        """Where node ``node_id`` can now be reached."""

    def close(self) -> None:
        pass
