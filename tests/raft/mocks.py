"""Test doubles of the raft package's seams: the network channel, the message queue, the
quorum state store and the expiration service (Kafka's MockNetworkChannel,
MockMessageQueue, MockQuorumStateStore and MockExpirationService). Test-only code."""
from __future__ import annotations

import heapq
import itertools
from typing import Optional

from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.expiration_service import ExpirationService
from kafka_py.raft.internals.completable_future import CompletableFuture
from kafka_py.raft.network_channel import NetworkChannel
from kafka_py.raft.quorum_state_store import QuorumStateStore
from kafka_py.raft.raft_config import InetAddressSpec
from kafka_py.raft.raft_message_queue import RaftMessageQueue
from kafka_py.raft.raft_request import RaftRequest
from kafka_py.clients.common.utils.time import MockTime


class MockNetworkChannel(NetworkChannel):
    def __init__(self, correlation_ids: Optional[itertools.count] = None) -> None:
        self._correlation_ids = correlation_ids if correlation_ids is not None else itertools.count(1)
        self.sends: list[RaftRequest.Outbound] = []
        self.awaiting_response: dict[int, RaftRequest.Outbound] = {}
        self.endpoints: dict[int, InetAddressSpec] = {}

    def new_correlation_id(self) -> int:
        return next(self._correlation_ids)

    def send(self, request: "RaftRequest.Outbound") -> None:
        self.sends.append(request)
        self.awaiting_response[request.correlation_id()] = request

    def update_endpoint(self, node_id: int, address: InetAddressSpec) -> None:
        self.endpoints[node_id] = address

    def drain_send_queue(self) -> list["RaftRequest.Outbound"]:
        sends, self.sends = self.sends, []
        return sends

    def has_sent_requests(self) -> bool:
        return bool(self.sends)


class MockMessageQueue(RaftMessageQueue):
    """Never blocks: a poll with nothing queued returns None at once (time is the test's)."""

    def __init__(self) -> None:
        self.messages: list = []
        self.wakeup_requested = False
        self.last_poll_timeout_ms: Optional[int] = None

    def poll(self, timeout_ms: int):
        self.wakeup_requested = False
        self.last_poll_timeout_ms = timeout_ms
        return self.messages.pop(0) if self.messages else None

    def add(self, message) -> None:
        self.messages.append(message)

    def is_empty(self) -> bool:
        return not self.messages

    def wakeup(self) -> None:
        self.wakeup_requested = True


class MockQuorumStateStore(QuorumStateStore):
    def __init__(self) -> None:
        self.current: Optional[ElectionState] = None

    def read_election_state(self) -> Optional[ElectionState]:
        return self.current

    def write_election_state(self, latest: ElectionState) -> None:
        self.current = latest

    def clear(self) -> None:
        self.current = None


class MockExpirationService(ExpirationService):
    """Fails futures whose time has come whenever the MockTime moves."""

    def __init__(self, time: MockTime) -> None:
        self._time = time
        self._ids = itertools.count()
        self._queue: list[tuple[int, int, CompletableFuture]] = []
        time.add_listener(self._on_tick)

    def fail_after(self, timeout_ms: int) -> CompletableFuture:
        future: CompletableFuture = CompletableFuture()
        heapq.heappush(self._queue, (self._time.milliseconds() + timeout_ms, next(self._ids), future))
        return future

    def _on_tick(self) -> None:
        now = self._time.milliseconds()
        while self._queue and self._queue[0][0] <= now:
            _, _, future = heapq.heappop(self._queue)
            future.complete_exceptionally(Errors.REQUEST_TIMED_OUT.exception("Future failed to be completed before "
                                                                             "timeout"))

    def close(self) -> None:
        self._time.remove_listener(self._on_tick)
