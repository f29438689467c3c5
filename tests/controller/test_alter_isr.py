"""The controller's side of AlterIsr (KafkaController._process_alter_isr) against a real
ZooKeeper and real TCP brokers (FakeBroker peers): what it accepts, what it refuses with which
Kafka error, and that a refused request leaves the partition state znode untouched."""
from __future__ import annotations

import queue
import uuid

import pytest

from kafka_py.core.api.leader_and_isr import LeaderAndIsr
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from tests.controller.fake_broker import um_partitions, wait_until
from tests.controller.test_kafka_controller import Cluster

TP = TopicPartition("isr", 0)


@pytest.fixture
def cluster(zookeeper):
    c = Cluster(f"{zookeeper.connect_string}/alter-isr-{uuid.uuid4().hex}")
    yield c
    c.close()


@pytest.fixture
def controller(cluster):
    controller = cluster.start_controller(1)
    cluster.active_controller()
    cluster.create_topic("isr", {0: [1, 2, 3]})
    cluster.wait_state(TP, 1, (1, 2, 3))
    # The creation's UpdateMetadata reaches the brokers after the znode is written: a test that
    # clears the brokers' requests first must not find it among those its own change caused.
    for broker in cluster.brokers.values():
        broker.wait_for(ApiKeys.UPDATE_METADATA, lambda b: ("isr", 0) in um_partitions(b))
    return controller


def alter(controller, broker_id: int, broker_epoch: int, proposals: dict[TopicPartition, LeaderAndIsr]):
    answers: queue.Queue = queue.Queue()
    controller.alter_isrs(broker_id, broker_epoch, proposals, answers.put)
    return answers.get(timeout=15)


def epoch_of(cluster, broker_id: int) -> int:
    return cluster.brokers[broker_id].broker_epoch


def test_the_leader_shrinks_its_isr_and_every_broker_is_told(cluster, controller):
    before = cluster.state(TP).leader_and_isr
    cluster.clear_requests()
    result = alter(controller, 1, epoch_of(cluster, 1), {TP: LeaderAndIsr(1, before.leader_epoch, (1, 2),
                                                                          before.zk_version)})
    stored = result[TP]
    assert isinstance(stored, LeaderAndIsr)
    # The leader's own change: same leader and epoch, new ISR, the znode one version further.
    assert (stored.leader, stored.leader_epoch, stored.isr) == (1, before.leader_epoch, (1, 2))
    assert stored.zk_version == before.zk_version + 1
    assert cluster.state(TP).leader_and_isr == stored
    for broker in cluster.brokers.values():
        um = broker.wait_for(ApiKeys.UPDATE_METADATA, lambda b: ("isr", 0) in um_partitions(b))
        assert um_partitions(um)[("isr", 0)].isr == (1, 2)

    # Sent again (its answer lost): the state is already there, so it is the answer, not an error.
    again = alter(controller, 1, epoch_of(cluster, 1), {TP: LeaderAndIsr(1, before.leader_epoch, (1, 2),
                                                                         before.zk_version)})
    assert again[TP] == stored
    assert cluster.state(TP).leader_and_isr == stored


def test_a_request_from_a_broker_that_does_not_lead_changes_nothing(cluster, controller):
    before = cluster.state(TP)
    result = alter(controller, 2, epoch_of(cluster, 2), {TP: LeaderAndIsr(2, before.leader_and_isr.leader_epoch,
                                                                          (2, 3), before.leader_and_isr.zk_version)})
    assert result == {TP: Errors.INVALID_REQUEST}
    assert cluster.state(TP) == before


def test_an_old_leader_epoch_is_fenced(cluster, controller):
    # A controller-made change (broker 3 fails) bumps the leader epoch to 1.
    cluster.brokers[3].kill_session()
    current = cluster.wait_state(TP, 1, (1, 2))
    assert current.leader_and_isr.leader_epoch == 1
    result = alter(controller, 1, epoch_of(cluster, 1),
                   {TP: LeaderAndIsr(1, 0, (1,), current.leader_and_isr.zk_version)})
    assert result == {TP: Errors.FENCED_LEADER_EPOCH}
    assert cluster.state(TP) == current
    # An epoch the controller never gave out is refused the same way.
    result = alter(controller, 1, epoch_of(cluster, 1),
                   {TP: LeaderAndIsr(1, 7, (1,), current.leader_and_isr.zk_version)})
    assert result == {TP: Errors.FENCED_LEADER_EPOCH}
    assert cluster.state(TP) == current


def test_a_stale_zk_version_is_refused(cluster, controller):
    before = cluster.state(TP)
    lai = before.leader_and_isr
    first = alter(controller, 1, epoch_of(cluster, 1), {TP: LeaderAndIsr(1, lai.leader_epoch, (1, 2), lai.zk_version)})
    written = cluster.state(TP)
    assert written.leader_and_isr == first[TP]
    # A second proposal built on the version the first one replaced.
    result = alter(controller, 1, epoch_of(cluster, 1), {TP: LeaderAndIsr(1, lai.leader_epoch, (1,), lai.zk_version)})
    assert result == {TP: Errors.INVALID_UPDATE_VERSION}
    assert cluster.state(TP) == written


def test_a_stale_or_unknown_broker_epoch_is_refused_as_a_whole(cluster, controller):
    before = cluster.state(TP)
    lai = before.leader_and_isr
    proposal = {TP: LeaderAndIsr(1, lai.leader_epoch, (1, 2), lai.zk_version)}
    assert alter(controller, 1, epoch_of(cluster, 1) - 1, proposal) == Errors.STALE_BROKER_EPOCH
    assert alter(controller, 9, epoch_of(cluster, 1), proposal) == Errors.STALE_BROKER_EPOCH
    assert cluster.state(TP) == before


@pytest.mark.parametrize("isr", [(1, 9), (2, 3), (1, 1, 2), ()])
def test_an_isr_that_is_not_a_set_of_assigned_replicas_with_the_leader_is_refused(cluster, controller, isr):
    before = cluster.state(TP)
    lai = before.leader_and_isr
    result = alter(controller, 1, epoch_of(cluster, 1), {TP: LeaderAndIsr(1, lai.leader_epoch, isr, lai.zk_version)})
    assert result == {TP: Errors.INVALID_REQUEST}
    assert cluster.state(TP) == before


def test_each_partition_is_answered_on_its_own(cluster, controller):
    cluster.create_topic("other", {0: [2, 1]})
    other = TopicPartition("other", 0)
    cluster.wait_state(other, 2, (2, 1))
    lai = cluster.state(TP).leader_and_isr
    result = alter(controller, 1, epoch_of(cluster, 1), {
        TP: LeaderAndIsr(1, lai.leader_epoch, (1, 3), lai.zk_version),
        other: LeaderAndIsr(1, 0, (1,), 0),  # led by 2
        TopicPartition("missing", 0): LeaderAndIsr(1, 0, (1,), 0),
    })
    assert isinstance(result[TP], LeaderAndIsr) and result[TP].isr == (1, 3)
    assert result[other] == Errors.INVALID_REQUEST
    assert result[TopicPartition("missing", 0)] == Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert cluster.state(other).leader_and_isr.isr == (2, 1)


def test_a_broker_that_is_not_controller_answers_not_controller(cluster, controller):
    other = cluster.start_controller(2)
    wait_until(lambda: other.active_controller_id == 1, message="broker 2 sees controller 1")
    lai = cluster.state(TP).leader_and_isr
    assert alter(other, 1, epoch_of(cluster, 1), {TP: LeaderAndIsr(1, lai.leader_epoch, (1, 2),
                                                                   lai.zk_version)}) == Errors.NOT_CONTROLLER
