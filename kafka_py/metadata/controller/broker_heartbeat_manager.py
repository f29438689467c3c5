"""Port of metadata/src/main/java/org/apache/kafka/controller/BrokerHeartbeatManager.java
(Kafka 3.0.0: one stale broker fenced at a time, and placement that may use fenced brokers
for followers; 2.8.2 fenced every stale broker in one go and placed only on unfenced ones).

The soft state of broker heartbeats, which is never written to the metadata log: when
each broker was last heard from, the metadata offset it reported, and whether it is in
a controlled shutdown. Only the active controller has one; a controller that becomes
active builds it afresh from the registrations, so after a failover brokers get a full
session timeout before they are fenced.

Unfenced brokers are kept in order of last contact, so the one that may have timed out
is always the first. The active brokers (unfenced and not shutting down) are those whose
metadata offsets decide when a controlled shutdown may finish.
"""
from __future__ import annotations

import bisect
import logging
from typing import Callable, Iterator

from kafka_py.metadata.controller.broker_control_state import BrokerControlState
from kafka_py.metadata.controller.broker_control_states import BrokerControlStates
from kafka_py.metadata.controller.replica_placer import ReplicaPlacer
from kafka_py.metadata.usable_broker import UsableBroker
from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)


class BrokerHeartbeatState:
    __slots__ = ("id", "last_contact_ns", "metadata_offset", "controlled_shut_down_offset",
                 "in_unfenced_list")

    def __init__(self, broker_id: int) -> None:
        self.id = broker_id
        # monotonic ns of the last heartbeat (or registration)
        self.last_contact_ns = 0
        self.metadata_offset = -1
        # the offset at which a controlled shutdown completes; -1 when not shutting down
        self.controlled_shut_down_offset = -1
        self.in_unfenced_list = False

    def fenced(self) -> bool:
        return not self.in_unfenced_list

    def shutting_down(self) -> bool:
        return self.controlled_shut_down_offset >= 0

    def __repr__(self) -> str:
        return (f"BrokerHeartbeatState(id={self.id}, lastContactNs={self.last_contact_ns}, "
                f"metadataOffset={self.metadata_offset}, "
                f"controlledShutDownOffset={self.controlled_shut_down_offset})")


class BrokerHeartbeatStateList:
    """The unfenced brokers in ascending order of last contact."""

    def __init__(self) -> None:
        self._brokers: list[BrokerHeartbeatState] = []

    def first(self) -> BrokerHeartbeatState | None:
        return self._brokers[0] if self._brokers else None

    def add(self, broker: BrokerHeartbeatState) -> None:
        # after every broker contacted at or before it: a heartbeat normally goes last
        index = bisect.bisect_right(self._brokers, broker.last_contact_ns,
                                    key=lambda b: b.last_contact_ns)
        self._brokers.insert(index, broker)
        broker.in_unfenced_list = True

    def remove(self, broker: BrokerHeartbeatState) -> None:
        if not broker.in_unfenced_list:
            raise ValueError(f"{broker} is not in the list.")
        self._brokers.remove(broker)
        broker.in_unfenced_list = False

    def __iter__(self) -> Iterator[BrokerHeartbeatState]:
        return iter(list(self._brokers))

    def __len__(self) -> int:
        return len(self._brokers)


class BrokerHeartbeatManager:
    def __init__(self, time: Time, session_timeout_ns: int, log_prefix: str = "") -> None:
        self.logger = IdentLogger(logger, log_prefix)
        self.time = time
        self.session_timeout_ns = session_timeout_ns
        self._brokers: dict[int, BrokerHeartbeatState] = {}
        self._unfenced = BrokerHeartbeatStateList()
        # ids of the unfenced brokers that are not shutting down
        self._active: set[int] = set()

    def unfenced(self) -> BrokerHeartbeatStateList:
        return self._unfenced

    def brokers(self) -> list[BrokerHeartbeatState]:
        return list(self._brokers.values())

    def get(self, broker_id: int) -> BrokerHeartbeatState | None:
        return self._brokers.get(broker_id)

    def fence(self, broker_id: int) -> None:
        broker = self._brokers.get(broker_id)
        if broker is not None:
            self._untrack(broker)

    def remove(self, broker_id: int) -> None:
        broker = self._brokers.pop(broker_id, None)
        if broker is not None:
            self._untrack(broker)

    def _untrack(self, broker: BrokerHeartbeatState) -> None:
        if not broker.fenced():
            self._unfenced.remove(broker)
            self._active.discard(broker.id)

    def has_valid_session(self, broker_id: int) -> bool:
        broker = self._brokers.get(broker_id)
        return broker is not None and self._has_valid_session(broker)

    def _has_valid_session(self, broker: BrokerHeartbeatState) -> bool:
        if broker.fenced():
            return False
        return broker.last_contact_ns + self.session_timeout_ns >= self.time.nanoseconds()

    def touch(self, broker_id: int, fenced: bool, metadata_offset: int) -> None:
        """Record a heartbeat (or registration) from ``broker_id`` now."""
        broker = self._brokers.get(broker_id)
        if broker is None:
            broker = self._brokers[broker_id] = BrokerHeartbeatState(broker_id)
        else:
            # its place in the list depends on what changes here; it is put back below
            self._untrack(broker)
        broker.last_contact_ns = self.time.nanoseconds()
        broker.metadata_offset = metadata_offset
        if fenced:
            # a fenced broker leaves controlled shutdown; its next heartbeat shuts it down
            broker.controlled_shut_down_offset = -1
        else:
            self._unfenced.add(broker)
            if not broker.shutting_down():
                self._active.add(broker.id)

    def lowest_active_offset(self) -> int:
        if not self._active:
            return LONG_MAX
        return min(self._brokers[b].metadata_offset for b in self._active)

    def update_controlled_shutdown_offset(self, broker_id: int, offset: int) -> None:
        broker = self._brokers.get(broker_id)
        if broker is None:
            raise RuntimeError(f"Unable to locate broker {broker_id}")
        if broker.fenced():
            raise RuntimeError("Fenced brokers cannot enter controlled shutdown.")
        self._active.discard(broker_id)
        broker.controlled_shut_down_offset = offset
        self.logger.debug("Updated the controlled shutdown offset for broker %d to %d.",
                          broker_id, offset)

    def next_check_time_ns(self) -> int:
        """When the oldest unfenced session expires; LONG_MAX when none is unfenced."""
        broker = self._unfenced.first()
        return LONG_MAX if broker is None else broker.last_contact_ns + self.session_timeout_ns

    def find_one_stale_broker(self) -> int | None:
        """The id of a broker whose session has expired, if any. The list is in order of
        last contact, so if its first broker is still valid, every broker is."""
        broker = self._unfenced.first()
        if broker is not None and not self._has_valid_session(broker):
            return broker.id
        return None

    def place_replicas(self, start_partition: int, num_partitions: int, num_replicas: int,
                       id_to_rack: Callable[[int], str | None],
                       placer: ReplicaPlacer) -> list[list[int]]:
        """Place replicas on the brokers that are not shutting down (fenced ones only as
        followers, and only when needed: see StripedReplicaPlacer)."""
        usable = [UsableBroker(b.id, id_to_rack(b.id), b.fenced())
                  for b in self._brokers.values() if not b.shutting_down()]
        return placer.place(start_partition, num_partitions, num_replicas, iter(usable))

    def current_broker_state(self, broker: BrokerHeartbeatState) -> BrokerControlState:
        if broker.shutting_down():
            return BrokerControlState.CONTROLLED_SHUTDOWN
        if broker.fenced():
            return BrokerControlState.FENCED
        return BrokerControlState.UNFENCED

    def calculate_next_broker_state(self, broker_id: int, request,
                                    last_committed_offset: int,
                                    has_leaderships: Callable[[], bool]) -> BrokerControlStates:
        """The broker's state now and after the heartbeat ``request`` (a
        BrokerHeartbeatRequest: want_fence, want_shut_down, current_metadata_offset)."""
        broker = self._brokers.get(broker_id) or BrokerHeartbeatState(broker_id)
        current = self.current_broker_state(broker)
        S = BrokerControlState
        if current is S.FENCED:
            if request.want_shut_down:
                self.logger.info("Fenced broker %d has requested and been granted an "
                                 "immediate shutdown.", broker_id)
                return BrokerControlStates(current, S.SHUTDOWN_NOW)
            if not request.want_fence:
                if request.current_metadata_offset >= last_committed_offset:
                    self.logger.info("The request from broker %d to unfence has been granted "
                                     "because it has caught up with the last committed "
                                     "metadata offset %d.", broker_id, last_committed_offset)
                    return BrokerControlStates(current, S.UNFENCED)
                self.logger.debug("The request from broker %d to unfence cannot yet be "
                                  "granted because it has not caught up with the last "
                                  "committed metadata offset %d. It is still at offset %d.",
                                  broker_id, last_committed_offset,
                                  request.current_metadata_offset)
            return BrokerControlStates(current, S.FENCED)
        if current is S.UNFENCED:
            if request.want_fence:
                if request.want_shut_down:
                    self.logger.info("Unfenced broker %d has requested and been granted an "
                                     "immediate shutdown.", broker_id)
                    return BrokerControlStates(current, S.SHUTDOWN_NOW)
                self.logger.info("Unfenced broker %d has requested and been granted "
                                 "fencing", broker_id)
                return BrokerControlStates(current, S.FENCED)
            if request.want_shut_down:
                if has_leaderships():
                    self.logger.info("Unfenced broker %d has requested and been granted a "
                                     "controlled shutdown.", broker_id)
                    return BrokerControlStates(current, S.CONTROLLED_SHUTDOWN)
                self.logger.info("Unfenced broker %d has requested and been granted an "
                                 "immediate shutdown.", broker_id)
                return BrokerControlStates(current, S.SHUTDOWN_NOW)
            return BrokerControlStates(current, S.UNFENCED)
        if current is S.CONTROLLED_SHUTDOWN:
            if has_leaderships():
                self.logger.debug("Broker %d is in controlled shutdown state, but can not "
                                  "shut down because more leaders still need to be moved.",
                                  broker_id)
                return BrokerControlStates(current, S.CONTROLLED_SHUTDOWN)
            lowest = self.lowest_active_offset()
            if broker.controlled_shut_down_offset <= lowest:
                self.logger.info("The request from broker %d to shut down has been granted "
                                 "since the lowest active offset %d is now greater than the "
                                 "broker's controlled shutdown offset %d.", broker_id, lowest,
                                 broker.controlled_shut_down_offset)
                return BrokerControlStates(current, S.SHUTDOWN_NOW)
            self.logger.debug("The request from broker %d to shut down can not yet be granted "
                              "because the lowest active offset %d is not greater than the "
                              "broker's shutdown offset %d.", broker_id, lowest,
                              broker.controlled_shut_down_offset)
            return BrokerControlStates(current, S.CONTROLLED_SHUTDOWN)
        return BrokerControlStates(current, S.SHUTDOWN_NOW)
