"""Port of raft/src/main/java/org/apache/kafka/raft/RequestManager.java (Kafka 2.8.2).

One ConnectionState per destination, which allows at most one request in flight to it:
READY to send, AWAITING_REQUEST until the answer or the request timeout, BACKING_OFF for
``retry_backoff_ms`` after an error. A response is accepted only if it answers the one
request in flight (same correlation id); anything else is stale and ignored. A change of
state (new epoch, new role) resets every connection, so the next poll sends afresh.

``find_ready_voter`` is how an observer looks for the leader: starting at a random voter, a
voter it can send to now, unless a Fetch to some voter is still in flight.
"""
from __future__ import annotations

import enum
import logging
import random as _random
from typing import AbstractSet, Optional

from kafka_py.core.utils.java_limits import LONG_MAX

logger = logging.getLogger(__name__)


class _State(enum.Enum):
    AWAITING_REQUEST = "AWAITING_REQUEST"
    BACKING_OFF = "BACKING_OFF"
    READY = "READY"


class ConnectionState:
    def __init__(self, node_id: int, retry_backoff_ms: int, request_timeout_ms: int) -> None:
        self._id = node_id
        self._retry_backoff_ms = retry_backoff_ms
        self._request_timeout_ms = request_timeout_ms
        self._state = _State.READY
        self._last_send_time_ms = 0
        self._last_fail_time_ms = 0
        self._in_flight_correlation_id: Optional[int] = None

    def id(self) -> int:
        return self._id

    def _is_backoff_complete(self, time_ms: int) -> bool:
        return self._state is _State.BACKING_OFF and time_ms >= self._last_fail_time_ms + self._retry_backoff_ms

    def has_request_timed_out(self, time_ms: int) -> bool:
        return self._state is _State.AWAITING_REQUEST and time_ms >= self._last_send_time_ms + self._request_timeout_ms

    def is_ready(self, time_ms: int) -> bool:
        if self._is_backoff_complete(time_ms) or self.has_request_timed_out(time_ms):
            self._state = _State.READY
        return self._state is _State.READY

    def is_backing_off(self, time_ms: int) -> bool:
        return self._state is _State.BACKING_OFF and not self._is_backoff_complete(time_ms)

    def has_inflight_request(self, time_ms: int) -> bool:
        return self._state is _State.AWAITING_REQUEST and not self.has_request_timed_out(time_ms)

    def in_flight_correlation_id(self) -> Optional[int]:
        return self._in_flight_correlation_id

    def remaining_request_time_ms(self, time_ms: int) -> int:
        if self.has_inflight_request(time_ms):
            return self._last_send_time_ms + self._request_timeout_ms - time_ms
        return 0

    def remaining_backoff_ms(self, time_ms: int) -> int:
        if self.is_backing_off(time_ms):
            return self._last_fail_time_ms + self._retry_backoff_ms - time_ms
        return 0

    def is_response_expected(self, correlation_id: int) -> bool:
        return self._in_flight_correlation_id is not None and self._in_flight_correlation_id == correlation_id

    def on_response_error(self, correlation_id: int, time_ms: int) -> None:
        if self._in_flight_correlation_id == correlation_id:
            self._last_fail_time_ms = time_ms
            self._state = _State.BACKING_OFF
            self._in_flight_correlation_id = None

    def on_response_received(self, correlation_id: int) -> None:
        if self._in_flight_correlation_id == correlation_id:
            self._state = _State.READY
            self._in_flight_correlation_id = None

    def on_request_sent(self, correlation_id: int, time_ms: int) -> None:
        self._last_send_time_ms = time_ms
        self._in_flight_correlation_id = correlation_id
        self._state = _State.AWAITING_REQUEST

    def reset(self) -> None:
        """Forget the request in flight and any backoff: after a state change, old requests are moot."""
        self._state = _State.READY
        self._in_flight_correlation_id = None

    def __str__(self) -> str:
        return (f"ConnectionState(id={self._id}, state={self._state.value}, lastSendTimeMs={self._last_send_time_ms}, "
                f"lastFailTimeMs={self._last_fail_time_ms}, inFlightCorrelationId={self._in_flight_correlation_id})")


class RequestManager:
    def __init__(self, voter_ids: AbstractSet[int], retry_backoff_ms: int, request_timeout_ms: int,
                 random: _random.Random) -> None:
        self._retry_backoff_ms = retry_backoff_ms
        self._request_timeout_ms = request_timeout_ms
        # A fixed order, so a seeded random start picks the same voter on every run.
        self._voters = sorted(voter_ids)
        self._random = random
        self._connections: dict[int, ConnectionState] = {
            voter_id: ConnectionState(voter_id, retry_backoff_ms, request_timeout_ms) for voter_id in self._voters
        }

    def get_or_create(self, node_id: int) -> ConnectionState:
        connection = self._connections.get(node_id)
        if connection is None:
            connection = ConnectionState(node_id, self._retry_backoff_ms, self._request_timeout_ms)
            self._connections[node_id] = connection
        return connection

    def find_ready_voter(self, current_time_ms: int) -> Optional[int]:
        if not self._voters:
            return None
        start = self._random.randrange(len(self._voters))
        result: Optional[int] = None
        for i in range(len(self._voters)):
            voter_id = self._voters[(start + i) % len(self._voters)]
            connection = self._connections[voter_id]
            if connection.is_ready(current_time_ms):
                result = voter_id
            elif connection.in_flight_correlation_id() is not None:
                # One discovery Fetch at a time: wait for the one in flight.
                return None
        return result

    def backoff_before_available_voter(self, current_time_ms: int) -> int:
        min_backoff_ms = LONG_MAX
        for voter_id in self._voters:
            connection = self._connections[voter_id]
            if connection.is_ready(current_time_ms):
                return 0
            if connection.is_backing_off(current_time_ms):
                min_backoff_ms = min(min_backoff_ms, connection.remaining_backoff_ms(current_time_ms))
            else:
                min_backoff_ms = min(min_backoff_ms, connection.remaining_request_time_ms(current_time_ms))
        return min_backoff_ms

    def reset_all(self) -> None:
        for connection in self._connections.values():
            connection.reset()
