"""The AlterIsr managers (server/alter_isr_manager.py) against a real controller.

DefaultAlterIsrManager sends through its real BrokerToControllerRequestThread; the connection
under it is replaced by one that hands each request, encoded to bytes and decoded again as a
broker would receive it, to an in-process KafkaController running on a real ZooKeeper (with
FakeBroker peers), and returns the controller's answer the same way. The test can hold a
request on its way, to see what is batched behind it, or fail it, to see it sent again.

ZkIsrManager writes the partition state znode itself; the controller picks its notification
up and tells the brokers.
"""
from __future__ import annotations

import queue
import threading
import uuid
from typing import Any

import pytest

from kafka_py.core.api.leader_and_isr import LeaderAndIsr
from kafka_py.core.cluster.broker import Node
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader, ResponseHeader
from kafka_py.clients.common.protocol.messages import decode_request, decode_response, encode_request, encode_response
from kafka_py.server.alter_isr_manager import (
    AlterIsrItem,
    DefaultAlterIsrManager,
    IsrChangePropagationConfig,
    ZkIsrManager,
    alter_isr_request_partitions,
    build_alter_isr_response,
)
from kafka_py.server.broker_to_controller_channel_manager import BrokerToControllerChannelManager
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.core.utils.kafka_scheduler import KafkaScheduler
from kafka_py.clients.common.utils.time import MockTime, Time
from kafka_py.core.zk.zk_data import IsrChangeNotificationZNode
from tests.controller.fake_broker import um_partitions, wait_until
from tests.controller.test_kafka_controller import Cluster

TOPIC = "alter"
P0, P1, P2 = (TopicPartition(TOPIC, p) for p in range(3))


class InProcessControllers:
    """A ControllerConnection delivering to in-process controllers by node id, through the wire
    format: the request as a broker's handler parses it, the answer as the sender decodes it.
    ``hold`` keeps the next request waiting until ``release``; ``fail_next`` drops it."""

    def __init__(self, controllers: dict[int, Any]) -> None:
        self.controllers = controllers
        self.sent: list[tuple[int, dict[TopicPartition, LeaderAndIsr]]] = []
        self._lock = threading.Lock()
        self._held = threading.Event()
        self._released = threading.Event()
        self._released.set()
        self._fail_next = False
        self._aborted = threading.Event()

    def hold(self) -> None:
        self._released.clear()

    def wait_held(self) -> None:
        assert self._held.wait(15), "no request arrived"

    def release(self) -> None:
        self._released.set()

    def fail_next(self) -> None:
        with self._lock:
            self._fail_next = True

    def send_and_receive(self, node: Node, api_key: ApiKeys, api_version: int, request: Any) -> Any:
        header = RequestHeader.for_request(api_key, api_version, 1, "test")
        _, received = decode_request(encode_request(header, request)[4:])
        self._held.set()
        while not self._released.wait(0.1):
            if self._aborted.is_set():
                raise ConnectionError("aborted")
        self._held.clear()
        with self._lock:
            fail, self._fail_next = self._fail_next, False
            self.sent.append((node.id, alter_isr_request_partitions(received)))
        if fail:
            raise ConnectionError("connection closed by the controller")
        controller = self.controllers[node.id]
        answers: queue.Queue = queue.Queue()
        if controller.is_active:
            controller.alter_isrs(int(received.broker_id), int(received.broker_epoch),
                                  alter_isr_request_partitions(received),
                                  lambda result: answers.put(build_alter_isr_response(result)))
            response = answers.get(timeout=15)
        else:
            response = build_alter_isr_response(Errors.NOT_CONTROLLER)
        out = encode_response(ResponseHeader(1, 1), response)
        _, decoded = decode_response(out[4:], api_key, api_version)
        return decoded

    def disconnect(self) -> None:
        pass

    def abort(self) -> None:
        self._aborted.set()
        self._released.set()

    def close(self) -> None:
        self.abort()


class SwitchableNodeProvider:
    def __init__(self, node: Node | None) -> None:
        self.node = node
        self.asked = 0

    def get(self) -> Node | None:
        self.asked += 1
        return self.node


class Answers:
    """Callbacks that record what each item was told."""

    def __init__(self) -> None:
        self.results: queue.Queue = queue.Queue()

    def callback(self, tag: str):
        return lambda result: self.results.put((tag, result))

    def take(self, n: int) -> dict[str, Any]:
        return dict(self.results.get(timeout=15) for _ in range(n))


@pytest.fixture
def cluster(zookeeper):
    c = Cluster(f"{zookeeper.connect_string}/alter-isr-manager-{uuid.uuid4().hex}")
    yield c
    c.close()


@pytest.fixture
def controller(cluster):
    controller = cluster.start_controller(1)
    cluster.active_controller()
    cluster.create_topic(TOPIC, {0: [1, 2, 3], 1: [1, 2, 3], 2: [1, 2, 3]})
    for tp in (P0, P1, P2):
        cluster.wait_state(tp, 1, (1, 2, 3))
    return controller


@pytest.fixture
def scheduler():
    s = KafkaScheduler(1, thread_name_prefix="alter-isr-test-")
    s.startup()
    yield s
    s.shutdown()


@pytest.fixture
def make_manager(cluster, scheduler):
    made: list[DefaultAlterIsrManager] = []

    def make(connection: InProcessControllers, provider: SwitchableNodeProvider, broker_epoch=None):
        config = KafkaConfig({"broker.id": "1", "zookeeper.connect": "unused:2181"}, do_log=False)
        channel = BrokerToControllerChannelManager(provider, Time.SYSTEM, config, "alterIsrChannel",
                                                   connection=connection)
        epoch = broker_epoch or (lambda: cluster.brokers[1].broker_epoch)
        manager = DefaultAlterIsrManager(channel, scheduler, Time.SYSTEM, 1, epoch)
        manager.start()
        made.append(manager)
        return manager

    yield make
    for manager in made:
        manager.shutdown()


def node(broker_id: int) -> Node:
    return Node(broker_id, "127.0.0.1", 1)


def shrink_item(cluster, tp: TopicPartition, isr: tuple[int, ...], callback) -> AlterIsrItem:
    current = cluster.state(tp)
    lai = current.leader_and_isr
    return AlterIsrItem(tp, LeaderAndIsr(1, lai.leader_epoch, isr, lai.zk_version), callback, current.controller_epoch)


def test_items_arriving_while_a_request_is_in_flight_go_together_in_the_next(cluster, controller, make_manager):
    connection = InProcessControllers({1: controller})
    manager = make_manager(connection, SwitchableNodeProvider(node(1)))
    answers = Answers()
    connection.hold()
    assert manager.submit(shrink_item(cluster, P0, (1, 2), answers.callback("p0")))
    connection.wait_held()
    # One in flight: these wait, and a second item for a waiting partition is refused.
    assert manager.submit(shrink_item(cluster, P1, (1, 3), answers.callback("p1")))
    assert manager.submit(shrink_item(cluster, P2, (1,), answers.callback("p2")))
    assert not manager.submit(shrink_item(cluster, P2, (1, 2), answers.callback("p2-again")))
    connection.release()

    results = answers.take(3)
    assert [sorted(partitions) for _, partitions in connection.sent] == [[P0], [P1, P2]]
    for tag, tp, isr in (("p0", P0, (1, 2)), ("p1", P1, (1, 3)), ("p2", P2, (1,))):
        assert isinstance(results[tag], LeaderAndIsr) and results[tag].isr == isr
        assert cluster.state(tp).leader_and_isr == results[tag]
    assert manager.unsent_isr_updates == {}
    # The controller told the brokers the new ISRs.
    um = cluster.brokers[2].wait_for(ApiKeys.UPDATE_METADATA, lambda b: um_partitions(b).get((TOPIC, 2)) is not None
                                     and um_partitions(b)[(TOPIC, 2)].isr == (1,))
    assert um_partitions(um)[(TOPIC, 2)].leader == 1


def test_partition_errors_reach_their_items_only(cluster, controller, make_manager):
    connection = InProcessControllers({1: controller})
    manager = make_manager(connection, SwitchableNodeProvider(node(1)))
    answers = Answers()
    connection.hold()
    stale = cluster.state(P1).leader_and_isr
    assert manager.submit(shrink_item(cluster, P0, (1, 2), answers.callback("p0")))
    connection.wait_held()
    assert manager.submit(AlterIsrItem(P1, LeaderAndIsr(1, stale.leader_epoch, (1, 2), stale.zk_version + 5),
                                       answers.callback("bad-version"), 1))
    assert manager.submit(AlterIsrItem(P2, LeaderAndIsr(1, stale.leader_epoch + 3, (1, 2), 0),
                                       answers.callback("bad-epoch"), 1))
    connection.release()
    results = answers.take(3)
    assert isinstance(results["p0"], LeaderAndIsr)
    assert results["bad-version"] is Errors.INVALID_UPDATE_VERSION
    assert results["bad-epoch"] is Errors.FENCED_LEADER_EPOCH
    assert cluster.state(P1).leader_and_isr.isr == (1, 2, 3) and cluster.state(P2).leader_and_isr.isr == (1, 2, 3)


def test_a_top_level_error_leaves_the_items_waiting_and_they_are_sent_again(cluster, controller, make_manager):
    connection = InProcessControllers({1: controller})
    epochs = iter([cluster.brokers[1].broker_epoch - 1])
    # The first request carries a stale broker epoch, the ones after it the current one.
    manager = make_manager(connection, SwitchableNodeProvider(node(1)),
                           broker_epoch=lambda: next(epochs, cluster.brokers[1].broker_epoch))
    answers = Answers()
    assert manager.submit(shrink_item(cluster, P0, (1, 2), answers.callback("p0")))
    result = answers.take(1)["p0"]
    assert isinstance(result, LeaderAndIsr) and result.isr == (1, 2)
    assert [sorted(p) for _, p in connection.sent] == [[P0], [P0]]


def test_a_lost_connection_sends_the_request_again(cluster, controller, make_manager):
    connection = InProcessControllers({1: controller})
    manager = make_manager(connection, SwitchableNodeProvider(node(1)))
    answers = Answers()
    connection.fail_next()
    assert manager.submit(shrink_item(cluster, P0, (1, 3), answers.callback("p0")))
    result = answers.take(1)["p0"]
    assert isinstance(result, LeaderAndIsr) and result.isr == (1, 3)
    assert len(connection.sent) == 2


def test_not_controller_sends_the_request_to_the_controller_the_metadata_names_next(cluster, controller,
                                                                                       make_manager):
    other = cluster.start_controller(2)
    wait_until(lambda: other.active_controller_id == 1, message="broker 2 sees controller 1")
    connection = InProcessControllers({1: controller, 2: other})
    provider = SwitchableNodeProvider(node(2))  # a metadata cache not updated yet
    manager = make_manager(connection, provider)
    answers = Answers()
    connection.hold()
    assert manager.submit(shrink_item(cluster, P0, (1, 2), answers.callback("p0")))
    connection.wait_held()
    provider.node = node(1)
    connection.release()
    result = answers.take(1)["p0"]
    assert isinstance(result, LeaderAndIsr) and result.isr == (1, 2)
    assert [broker for broker, _ in connection.sent] == [2, 1]


def test_clear_pending_drops_a_waiting_item_and_an_answer_does_not_drop_its_successor(cluster, controller,
                                                                                     make_manager):
    connection = InProcessControllers({1: controller})
    manager = make_manager(connection, SwitchableNodeProvider(node(1)))
    answers = Answers()
    connection.hold()
    first = shrink_item(cluster, P0, (1, 2), answers.callback("first"))
    assert manager.submit(first)
    connection.wait_held()
    # A LeaderAndIsr arrived meanwhile: the partition forgets its proposal and makes a new one.
    manager.clear_pending(P0)
    second = AlterIsrItem(P0, LeaderAndIsr(1, first.leader_and_isr.leader_epoch, (1, 2, 3),
                                           first.leader_and_isr.zk_version + 1), answers.callback("second"), 1)
    assert manager.submit(second)
    connection.release()
    results = answers.take(2)
    assert isinstance(results["first"], LeaderAndIsr) and results["first"].isr == (1, 2)
    assert isinstance(results["second"], LeaderAndIsr) and results["second"].isr == (1, 2, 3)
    assert cluster.state(P0).leader_and_isr.isr == (1, 2, 3)


# -- ZkIsrManager --------------------------------------------------------------------------------

def test_zk_isr_manager_writes_the_state_and_the_controller_announces_it(cluster, controller):
    time = MockTime()
    config = IsrChangePropagationConfig(check_interval_ms=2500, max_delay_ms=60000, linger_ms=5000)
    manager = ZkIsrManager(None, time, cluster.admin, config)
    answers = Answers()
    before = cluster.state(P0)
    assert manager.submit(shrink_item(cluster, P0, (1, 3), answers.callback("p0")))
    result = answers.take(1)["p0"]
    # Written at once, by the leader itself, under the controller epoch of its leadership.
    assert result == LeaderAndIsr(1, before.leader_and_isr.leader_epoch, (1, 3), before.leader_and_isr.zk_version + 1)
    assert cluster.state(P0).leader_and_isr == result
    assert cluster.state(P0).controller_epoch == before.controller_epoch
    assert manager.isr_change_set == {P0}

    # Announced only once changes settle (linger), in one notification.
    manager.maybe_propagate_isr_changes()
    assert manager.isr_change_set == {P0}
    cluster.clear_requests()
    time.sleep(5001)
    manager.maybe_propagate_isr_changes()
    assert manager.isr_change_set == set()
    um = cluster.brokers[3].wait_for(ApiKeys.UPDATE_METADATA, lambda b: um_partitions(b).get((TOPIC, 0)) is not None
                                     and um_partitions(b)[(TOPIC, 0)].isr == (1, 3))
    assert um_partitions(um)[(TOPIC, 0)].zk_version == result.zk_version
    # The controller consumed the notification.
    wait_until(lambda: not cluster.admin.get_children(IsrChangeNotificationZNode.path()),
               message="notification deleted")


def test_zk_isr_manager_refuses_a_stale_version_and_announces_nothing(cluster, controller):
    manager = ZkIsrManager(None, MockTime(), cluster.admin)
    answers = Answers()
    before = cluster.state(P0)
    lai = before.leader_and_isr
    assert manager.submit(AlterIsrItem(P0, LeaderAndIsr(1, lai.leader_epoch, (1,), lai.zk_version + 3),
                                       answers.callback("p0"), before.controller_epoch))
    assert answers.take(1)["p0"] is Errors.INVALID_UPDATE_VERSION
    assert cluster.state(P0) == before
    assert manager.isr_change_set == set()


def test_zk_isr_manager_counts_a_retried_write_that_already_landed_as_done(cluster, controller):
    # The write went through but its reply was lost; the retry finds a newer version holding
    # exactly what it meant to write.
    manager = ZkIsrManager(None, MockTime(), cluster.admin)
    answers = Answers()
    before = cluster.state(P0)
    lai = before.leader_and_isr
    proposal = LeaderAndIsr(1, lai.leader_epoch, (1, 2), lai.zk_version)
    assert manager.submit(AlterIsrItem(P0, proposal, answers.callback("first"), before.controller_epoch))
    first = answers.take(1)["first"]
    assert manager.submit(AlterIsrItem(P0, proposal, answers.callback("retry"), before.controller_epoch))
    assert answers.take(1)["retry"] == first
