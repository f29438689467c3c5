"""BrokerHeartbeatManager, after Kafka's BrokerHeartbeatManagerTest: session expiry in
order of last contact, the lowest active offset, and the broker state machine of
heartbeats (fence, unfence once caught up, controlled shutdown, shutdown now)."""
from __future__ import annotations

import pytest
from kio.schema.broker_heartbeat.v0.request import BrokerHeartbeatRequest

from kafka_py.metadata.controller.broker_control_state import BrokerControlState as S
from kafka_py.metadata.controller.broker_control_states import BrokerControlStates
from kafka_py.metadata.controller.broker_heartbeat_manager import BrokerHeartbeatManager
from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.clients.common.utils.time import MockTime

SESSION_NS = 10_000_000  # 10 ms


def new_manager() -> BrokerHeartbeatManager:
    return BrokerHeartbeatManager(MockTime(0, 0), SESSION_NS)


def hb(offset=0, want_fence=False, want_shut_down=False) -> BrokerHeartbeatRequest:
    return BrokerHeartbeatRequest(broker_id=0, broker_epoch=0, current_metadata_offset=offset,
                                  want_fence=want_fence, want_shut_down=want_shut_down)


def test_stale_brokers_in_order_of_last_contact():
    manager = new_manager()
    time: MockTime = manager.time
    assert manager.next_check_time_ns() == LONG_MAX
    for broker_id in range(3):
        manager.touch(broker_id, False, 0)
        time.advance(1)  # 1 ms
    assert manager.next_check_time_ns() == SESSION_NS
    assert manager.find_one_stale_broker() is None
    time.advance(7)
    assert manager.find_one_stale_broker() is None  # exactly at the deadline: still valid
    time.advance(1)
    assert manager.find_one_stale_broker() == 0
    manager.fence(0)
    assert not manager.has_valid_session(0)
    assert manager.find_one_stale_broker() is None
    time.advance(1)
    assert manager.find_one_stale_broker() == 1
    manager.touch(1, False, 0)
    assert manager.find_one_stale_broker() is None  # broker 2's deadline is now
    time.advance(1)
    assert manager.find_one_stale_broker() == 2
    assert [b.id for b in manager.unfenced()] == [2, 1]


def test_lowest_active_offset_ignores_fenced_and_shutting_down():
    manager = new_manager()
    manager.touch(0, False, 100)
    manager.touch(1, False, 50)
    manager.touch(2, True, 10)
    assert manager.lowest_active_offset() == 50
    manager.update_controlled_shutdown_offset(1, 60)
    assert manager.lowest_active_offset() == 100
    with pytest.raises(RuntimeError):
        manager.update_controlled_shutdown_offset(2, 60)


@pytest.mark.parametrize("request_kwargs, leaderships, expected", [
    (dict(offset=5), False, S.FENCED),            # not caught up with offset 10
    (dict(offset=10), False, S.UNFENCED),
    (dict(offset=10, want_fence=True), False, S.FENCED),
    (dict(want_shut_down=True), False, S.SHUTDOWN_NOW),
])
def test_fenced_broker_transitions(request_kwargs, leaderships, expected):
    manager = new_manager()
    manager.touch(0, True, 0)
    states = manager.calculate_next_broker_state(0, hb(**request_kwargs), 10, lambda: leaderships)
    assert states == BrokerControlStates(S.FENCED, expected)


@pytest.mark.parametrize("request_kwargs, leaderships, expected", [
    (dict(offset=10), False, S.UNFENCED),
    (dict(want_fence=True), False, S.FENCED),
    (dict(want_fence=True, want_shut_down=True), False, S.SHUTDOWN_NOW),
    (dict(want_shut_down=True), True, S.CONTROLLED_SHUTDOWN),
    (dict(want_shut_down=True), False, S.SHUTDOWN_NOW),
])
def test_unfenced_broker_transitions(request_kwargs, leaderships, expected):
    manager = new_manager()
    manager.touch(0, False, 0)
    states = manager.calculate_next_broker_state(0, hb(**request_kwargs), 10, lambda: leaderships)
    assert states == BrokerControlStates(S.UNFENCED, expected)


def test_controlled_shutdown_waits_for_leaders_and_active_offsets():
    manager = new_manager()
    manager.touch(0, False, 0)
    manager.touch(1, False, 5)
    manager.update_controlled_shutdown_offset(0, 10)
    request = hb(want_shut_down=True)
    assert manager.calculate_next_broker_state(0, request, 10, lambda: True).next is \
        S.CONTROLLED_SHUTDOWN
    assert manager.calculate_next_broker_state(0, request, 10, lambda: False).next is \
        S.CONTROLLED_SHUTDOWN  # broker 1 is at 5, below the shutdown offset 10
    manager.touch(1, False, 10)
    assert manager.calculate_next_broker_state(0, request, 10, lambda: False).next is \
        S.SHUTDOWN_NOW


def test_fencing_leaves_controlled_shutdown():
    manager = new_manager()
    manager.touch(0, False, 0)
    manager.update_controlled_shutdown_offset(0, 10)
    manager.touch(0, True, 0)
    assert manager.current_broker_state(manager.get(0)) is S.FENCED
