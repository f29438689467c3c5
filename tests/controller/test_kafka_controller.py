"""KafkaController against a real ZooKeeper and real TCP brokers (FakeBroker peers)."""
from __future__ import annotations

import queue
import uuid

import pytest

from kafka_py.core.api.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.errors import ApiException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.controller.kafka_controller import ElectionType, KafkaController
from kafka_py.controller.partition_state_machine import OnlinePartition
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.core.zk.kafka_zk_client import KafkaZkClient
from kafka_py.core.zk.zk_data import BrokerInfo, ReplicaAssignment
from tests.controller.fake_broker import FakeBroker, lai_partitions, sr_partitions, um_partitions, wait_until


class Cluster:
    def __init__(self, connect: str, broker_ids=(1, 2, 3)) -> None:
        self.connect = connect
        self.admin = KafkaZkClient(connect, session_timeout_ms=10000, name="admin")
        self.admin.create_top_level_paths()
        self.brokers = {i: FakeBroker(i, connect) for i in broker_ids}
        for broker in self.brokers.values():
            broker.register()
        self.controllers: dict[int, tuple[KafkaController, KafkaZkClient]] = {}

    def start_controller(self, broker_id: int, **overrides: str) -> KafkaController:
        props = {"broker.id": str(broker_id), "zookeeper.connect": self.connect,
                 "listeners": f"PLAINTEXT://127.0.0.1:{self.brokers[broker_id].port}",
                 "auto.leader.rebalance.enable": "false"}
        props.update(overrides)
        config = KafkaConfig(props, do_log=False)
        zk = KafkaZkClient(self.connect, session_timeout_ms=10000, name=f"controller-{broker_id}")
        broker = self.brokers[broker_id]
        controller = KafkaController(config, zk, initial_broker_info=BrokerInfo(broker.broker),
                                     initial_broker_epoch=broker.broker_epoch)
        self.controllers[broker_id] = (controller, zk)
        controller.startup()
        return controller

    def stop_controller(self, broker_id: int) -> None:
        controller, zk = self.controllers.pop(broker_id)
        controller.shutdown()
        zk.close()

    def active_controller(self) -> KafkaController:
        return wait_until(lambda: next((c for c, _ in self.controllers.values() if c.is_active), None),
                          message="an active controller")

    def state(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        return self.admin.get_topic_partition_state(tp)

    def wait_state(self, tp: TopicPartition, leader: int, isr: tuple[int, ...]) -> LeaderIsrAndControllerEpoch:
        def matches():
            state = self.state(tp)
            if state and state.leader_and_isr.leader == leader and state.leader_and_isr.isr == isr:
                return state
            return None
        return wait_until(matches, message=f"{tp} led by {leader} with ISR {isr} (now {self.state(tp)})")

    def create_topic(self, topic: str, assignment: dict[int, list[int]]) -> uuid.UUID:
        topic_id = uuid.uuid4()
        self.admin.create_topic_assignment(topic, topic_id,
                                           {TopicPartition(topic, p): r for p, r in assignment.items()})
        return topic_id

    def clear_requests(self) -> None:
        for broker in self.brokers.values():
            broker.clear()

    def close(self) -> None:
        for broker_id in list(self.controllers):
            self.stop_controller(broker_id)
        for broker in self.brokers.values():
            broker.close()
        self.admin.close()


@pytest.fixture
def cluster(zookeeper):
    c = Cluster(f"{zookeeper.connect_string}/ctl-{uuid.uuid4().hex}")
    yield c
    c.close()


def test_two_controllers_race_and_the_loser_takes_over_when_the_winner_goes(cluster):
    first = cluster.start_controller(1)
    second = cluster.start_controller(2)
    winner = cluster.active_controller()
    loser = second if winner is first else first
    wait_until(lambda: loser.active_controller_id == winner.config.broker_id, message="loser sees the winner")
    assert not loser.is_active
    epoch, _ = cluster.admin.get_controller_epoch()
    assert winner.epoch == epoch
    assert cluster.admin.get_controller_id() == winner.config.broker_id
    # The winner told every live broker about the cluster, under its epoch.
    for broker in cluster.brokers.values():
        assert broker.wait_for(ApiKeys.UPDATE_METADATA).controller_epoch == epoch

    tp = TopicPartition("race", 0)
    cluster.create_topic("race", {0: [3, 1]})
    cluster.wait_state(tp, 3, (3, 1))
    cluster.clear_requests()

    # Ending the winner's session deletes its ephemeral /controller; the loser is elected.
    cluster.stop_controller(winner.config.broker_id)
    wait_until(lambda: loser.is_active, message="the loser becomes controller")
    assert loser.epoch == epoch + 1
    assert cluster.admin.get_controller_epoch()[0] == epoch + 1
    assert cluster.admin.get_controller_id() == loser.config.broker_id
    # The new controller rebuilt its view from ZooKeeper and re-sent the partition's state.
    lai = cluster.brokers[3].wait_for(ApiKeys.LEADER_AND_ISR, lambda b: b.controller_epoch == epoch + 1)
    state = lai_partitions(lai)[("race", 0)]
    assert (state.leader, state.isr, state.is_new) == (3, (3, 1), False)
    wait_until(lambda: loser.controller_context.partition_states.get(tp) is OnlinePartition,
               message="partition state rebuilt")


def test_new_topic_gets_leaders_written_and_announced(cluster):
    controller = cluster.start_controller(1)
    cluster.active_controller()
    wait_until(lambda: cluster.brokers[3].received(ApiKeys.UPDATE_METADATA), message="startup UpdateMetadata")
    # Broker 4 is not alive: partition 2 starts with its live replica only.
    topic_id = cluster.create_topic("orders", {0: [2, 3], 1: [3, 1], 2: [4, 2]})
    p0, p1, p2 = (TopicPartition("orders", p) for p in range(3))
    s0 = cluster.wait_state(p0, 2, (2, 3))
    cluster.wait_state(p1, 3, (3, 1))
    cluster.wait_state(p2, 2, (2,))
    assert (s0.leader_and_isr.leader_epoch, s0.controller_epoch) == (0, controller.epoch)

    lai2 = lai_partitions(cluster.brokers[2].wait_for(ApiKeys.LEADER_AND_ISR))
    assert set(lai2) == {("orders", 0), ("orders", 2)}
    assert (lai2[("orders", 0)].leader, lai2[("orders", 0)].replicas, lai2[("orders", 0)].is_new) == (2, (2, 3), True)
    lai3 = cluster.brokers[3].wait_for(ApiKeys.LEADER_AND_ISR)
    assert set(lai_partitions(lai3)) == {("orders", 0), ("orders", 1)}
    assert lai3.topic_states[0].topic_id == topic_id
    assert set(lai_partitions(cluster.brokers[1].wait_for(ApiKeys.LEADER_AND_ISR))) == {("orders", 1)}
    for broker in cluster.brokers.values():
        um = broker.wait_for(ApiKeys.UPDATE_METADATA, lambda b: ("orders", 2) in um_partitions(b))
        partitions = um_partitions(um)
        assert partitions[("orders", 1)].leader == 3
        assert partitions[("orders", 2)].offline_replicas == (4,)
    assert controller.controller_context.topic_ids["orders"] == topic_id


def test_added_partitions_come_online(cluster):
    controller = cluster.start_controller(1)
    cluster.active_controller()
    topic_id = cluster.create_topic("grow", {0: [2, 3]})
    cluster.wait_state(TopicPartition("grow", 0), 2, (2, 3))
    cluster.admin.set_topic_assignment("grow", topic_id, {
        TopicPartition("grow", 0): ReplicaAssignment((2, 3)),
        TopicPartition("grow", 1): ReplicaAssignment((3, 2)),
    })
    cluster.wait_state(TopicPartition("grow", 1), 3, (3, 2))
    lai = cluster.brokers[3].wait_for(ApiKeys.LEADER_AND_ISR, lambda b: ("grow", 1) in lai_partitions(b))
    assert lai_partitions(lai)[("grow", 1)].is_new
    assert controller.controller_context.partition_replica_assignment(TopicPartition("grow", 1)) == (3, 2)


def test_topic_deletion_stops_replicas_and_removes_the_znodes(cluster):
    controller = cluster.start_controller(1)
    cluster.active_controller()
    cluster.create_topic("doomed", {0: [2, 3], 1: [3, 1]})
    cluster.admin.set_or_create_entity_configs("topics", "doomed", {"retention.ms": "1000"})
    cluster.wait_state(TopicPartition("doomed", 1), 3, (3, 1))
    cluster.create_topic("kept", {0: [1]})
    cluster.wait_state(TopicPartition("kept", 0), 1, (1,))

    cluster.admin.create_delete_topic_path("doomed")
    for broker_id, partitions in ((2, {0}), (3, {0, 1}), (1, {1})):
        sr = cluster.brokers[broker_id].wait_for(
            ApiKeys.STOP_REPLICA, lambda b: any(s.delete_partition for s in sr_partitions(b).values()))
        deleted = {p for (t, p), s in sr_partitions(sr).items() if t == "doomed" and s.delete_partition}
        assert deleted == partitions
        assert all(s.leader_epoch == LeaderAndIsr.EPOCH_DURING_DELETE for s in sr_partitions(sr).values())
    wait_until(lambda: not cluster.admin.topic_exists("doomed"), message="topic znode removed")
    wait_until(lambda: not cluster.admin.is_topic_marked_for_deletion("doomed"), message="marker removed")
    assert not cluster.admin.path_exists("/config/topics/doomed")
    assert not cluster.admin.path_exists("/brokers/topics/doomed/partitions/0/state")
    wait_until(lambda: "doomed" not in controller.controller_context.all_topics, message="context forgets topic")
    # Brokers were told the topic is going away (leader -2) before it went.
    um = cluster.brokers[2].wait_for(ApiKeys.UPDATE_METADATA, lambda b: ("doomed", 0) in um_partitions(b)
                                     and um_partitions(b)[("doomed", 0)].leader == LeaderAndIsr.LEADER_DURING_DELETE)
    assert um.controller_epoch == controller.epoch
    assert cluster.admin.topic_exists("kept")
    assert cluster.state(TopicPartition("kept", 0)).leader_and_isr.leader == 1


def test_topic_deletion_disabled_only_removes_the_marker(cluster):
    cluster.start_controller(1, **{"delete.topic.enable": "false"})
    cluster.active_controller()
    cluster.create_topic("stays", {0: [2]})
    cluster.wait_state(TopicPartition("stays", 0), 2, (2,))
    cluster.admin.create_delete_topic_path("stays")
    wait_until(lambda: not cluster.admin.is_topic_marked_for_deletion("stays"), message="marker removed")
    assert cluster.admin.topic_exists("stays")
    assert cluster.brokers[2].received(ApiKeys.STOP_REPLICA) == []


def test_broker_failure_moves_leadership_or_takes_partitions_offline(cluster):
    controller = cluster.start_controller(1)
    cluster.active_controller()
    cluster.create_topic("f", {0: [2, 3], 1: [2]})
    p0, p1 = TopicPartition("f", 0), TopicPartition("f", 1)
    cluster.wait_state(p0, 2, (2, 3))
    cluster.wait_state(p1, 2, (2,))
    cluster.clear_requests()

    cluster.brokers[2].kill_session()
    s0 = cluster.wait_state(p0, 3, (3,))
    assert s0.leader_and_isr.leader_epoch == 1
    # No replica left to lead: leaderless, the last ISR member remembered.
    cluster.wait_state(p1, LeaderAndIsr.NO_LEADER, (2,))
    # The LeaderAndIsr of the move: the creation's (epoch 0) may reach a broker after
    # clear_requests(), as ZooKeeper's state is written before it is sent.
    lai = cluster.brokers[3].wait_for(ApiKeys.LEADER_AND_ISR, lambda b: ("f", 0) in lai_partitions(b)
                                      and lai_partitions(b)[("f", 0)].leader_epoch > 0)
    assert (lai_partitions(lai)[("f", 0)].leader, lai_partitions(lai)[("f", 0)].leader_epoch) == (3, 1)
    for broker_id in (1, 3):
        um = cluster.brokers[broker_id].wait_for(
            ApiKeys.UPDATE_METADATA, lambda b: um_partitions(b).get(("f", 1)) is not None
            and um_partitions(b)[("f", 1)].leader == LeaderAndIsr.NO_LEADER)
        assert 2 not in {b.id for b in um.live_brokers}
        assert um_partitions(um)[("f", 1)].offline_replicas == (2,)
    assert controller.controller_context.live_broker_ids == {1, 3}

    # The broker comes back: it is the only ISR member of f-1, so it leads it again.
    cluster.brokers[2].register()
    cluster.wait_state(p1, 2, (2,))
    lai2 = cluster.brokers[2].wait_for(ApiKeys.LEADER_AND_ISR, lambda b: ("f", 0) in lai_partitions(b)
                                       and lai_partitions(b)[("f", 0)].leader_epoch > 0)
    assert lai_partitions(lai2)[("f", 0)].leader == 3
    assert controller.controller_context.live_broker_ids == {1, 2, 3}


def test_controlled_shutdown_moves_leaders_away(cluster):
    controller = cluster.start_controller(1)
    cluster.active_controller()
    cluster.create_topic("cs", {0: [2, 3], 1: [3, 2], 2: [2]})
    p0, p1 = TopicPartition("cs", 0), TopicPartition("cs", 1)
    cluster.wait_state(p0, 2, (2, 3))
    cluster.wait_state(p1, 3, (3, 2))

    results: queue.Queue = queue.Queue()
    stale_epoch = cluster.brokers[2].broker_epoch - 1
    controller.controlled_shutdown(2, stale_epoch, results.put)
    stale = results.get(timeout=10)
    assert isinstance(stale, ApiException) and stale.error_name == "STALE_BROKER_EPOCH"

    controller.controlled_shutdown(2, cluster.brokers[2].broker_epoch, results.put)
    remaining = results.get(timeout=10)
    assert remaining == set()  # single-replica cs-2 does not count: it cannot move
    assert cluster.state(p0).leader_and_isr.leader == 3 and cluster.state(p0).leader_and_isr.isr == (3,)
    assert cluster.state(p1).leader_and_isr.isr == (3,)
    sr = cluster.brokers[2].wait_for(ApiKeys.STOP_REPLICA)
    assert ("cs", 1) in sr_partitions(sr) and not sr_partitions(sr)[("cs", 1)].delete_partition
    assert controller.controller_context.shutting_down_broker_ids == {2}


def test_isr_change_notification_and_preferred_leader_election(cluster):
    controller = cluster.start_controller(1)
    cluster.active_controller()
    tp = TopicPartition("pref", 0)
    cluster.create_topic("pref", {0: [2, 3]})
    cluster.wait_state(tp, 2, (2, 3))
    cluster.brokers[2].kill_session()
    cluster.wait_state(tp, 3, (3,))
    cluster.brokers[2].register()
    wait_until(lambda: 2 in controller.controller_context.live_broker_ids, message="broker 2 back")

    # The leader (3) lets 2 back into the ISR and tells the controller, as a broker does.
    current = cluster.state(tp)
    grown = LeaderIsrAndControllerEpoch(
        LeaderAndIsr(3, current.leader_and_isr.leader_epoch, (3, 2), current.leader_and_isr.zk_version),
        current.controller_epoch)
    assert cluster.admin.set_topic_partition_states({tp: grown})[tp][0]
    cluster.admin.propagate_isr_changes([tp])
    um = cluster.brokers[1].wait_for(ApiKeys.UPDATE_METADATA,
                                     lambda b: um_partitions(b).get(("pref", 0)) is not None
                                     and um_partitions(b)[("pref", 0)].isr == (3, 2))
    assert um_partitions(um)[("pref", 0)].leader == 3
    wait_until(lambda: not cluster.admin.get_all_isr_change_notifications(), message="notification consumed")

    results: queue.Queue = queue.Queue()
    controller.elect_leaders({tp, TopicPartition("nope", 0)}, ElectionType.PREFERRED, results.put)
    outcome = results.get(timeout=10)
    assert outcome[tp] == 2
    assert outcome[TopicPartition("nope", 0)] == ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                                          "The partition does not exist.")
    assert cluster.state(tp).leader_and_isr.leader == 2
    controller.elect_leaders({tp}, ElectionType.PREFERRED, results.put)
    assert results.get(timeout=10)[tp].error is Errors.ELECTION_NOT_NEEDED


def test_session_expiry_resigns_then_reregisters_and_reelects(cluster, zookeeper):
    from kazoo.client import KazooClient

    # As in KafkaServer, the broker registration shares the controller's session.
    broker = cluster.brokers[1]
    broker.kill_session()
    config = KafkaConfig({"broker.id": "1", "zookeeper.connect": cluster.connect,
                          "listeners": f"PLAINTEXT://127.0.0.1:{broker.port}",
                          "auto.leader.rebalance.enable": "false"}, do_log=False)
    zk = KafkaZkClient(cluster.connect, session_timeout_ms=10000, name="controller-1")
    broker_epoch = zk.register_broker(BrokerInfo(broker.broker))
    controller = KafkaController(config, zk, initial_broker_info=BrokerInfo(broker.broker),
                                 initial_broker_epoch=broker_epoch)
    cluster.controllers[1] = (controller, zk)
    controller.startup()
    wait_until(lambda: controller.is_active, message="controller elected")
    first_epoch = controller.epoch
    cluster.create_topic("expiry", {0: [1, 2]})
    cluster.wait_state(TopicPartition("expiry", 0), 1, (1, 2))

    # Expire the session from outside: a second client attaches to it and closes it.
    session_id, password = zk.current_zookeeper.client_id
    hijacker = KazooClient(hosts=zookeeper.connect_string, client_id=(session_id, password))
    hijacker.start(timeout=10)
    hijacker.stop()
    hijacker.close()

    wait_until(lambda: controller.is_active and controller.epoch == first_epoch + 1,
               message="re-elected under a new session")
    assert zk.session_id != session_id
    assert controller.broker_epoch > broker_epoch
    assert cluster.admin.get_broker(1) is not None
    # The failover runs on after the election: wait for it to have reloaded the partition.
    wait_until(lambda: controller.controller_context.partition_states.get(TopicPartition("expiry", 0))
               is OnlinePartition, message="partition state reloaded")


def test_api_reassignment_adds_then_removes_replicas_once_in_sync(cluster):
    controller = cluster.start_controller(1)
    cluster.active_controller()
    tp = TopicPartition("move", 0)
    topic_id = cluster.create_topic("move", {0: [1, 2]})
    cluster.wait_state(tp, 1, (1, 2))

    results: queue.Queue = queue.Queue()
    controller.alter_partition_reassignments({tp: [2, 3], TopicPartition("move", 9): [1]}, results.put)
    outcome = results.get(timeout=10)
    assert outcome[tp] == ApiError.NONE
    assert outcome[TopicPartition("move", 9)].error is Errors.UNKNOWN_TOPIC_OR_PARTITION
    # Phase A: the union is persisted, and the new replica is started as a follower.
    persisted = cluster.admin.get_full_replica_assignment_for_topics(["move"])[tp]
    assert (set(persisted.replicas), persisted.adding_replicas, persisted.removing_replicas) == ({1, 2, 3}, (3,), (1,))
    lai = cluster.brokers[3].wait_for(ApiKeys.LEADER_AND_ISR, lambda b: ("move", 0) in lai_partitions(b))
    state = lai_partitions(lai)[("move", 0)]
    assert (state.leader, state.is_new, state.adding_replicas, state.removing_replicas) == (1, True, (3,), (1,))
    listed: queue.Queue = queue.Queue()
    controller.list_partition_reassignments(None, listed.put)
    assert set(listed.get(timeout=10)) == {tp}

    # The leader reports the new replica in sync (AlterIsr); the controller finishes the move.
    current = cluster.state(tp)
    answers: queue.Queue = queue.Queue()
    controller.alter_isrs(1, cluster.brokers[1].broker_epoch, {tp: LeaderAndIsr(
        1, current.leader_and_isr.leader_epoch, (1, 2, 3), current.leader_and_isr.zk_version)}, answers.put)
    assert answers.get(timeout=10)[tp].isr == (1, 2, 3)
    wait_until(lambda: cluster.admin.get_full_replica_assignment_for_topics(["move"])[tp] == ReplicaAssignment((2, 3)),
               message="final assignment written")
    final = cluster.wait_state(tp, 2, (2, 3))
    assert final.leader_and_isr.leader_epoch > current.leader_and_isr.leader_epoch
    deletes = cluster.brokers[1].wait_for(ApiKeys.STOP_REPLICA, lambda b: ("move", 0) in sr_partitions(b)
                                          and sr_partitions(b)[("move", 0)].delete_partition)
    assert deletes.controller_epoch == controller.epoch
    controller.list_partition_reassignments(None, listed.put)
    assert listed.get(timeout=10) == {}
    assert cluster.admin.get_topic_ids_for_topics(["move"])["move"] == topic_id


def test_zookeeper_reassignment_is_picked_up_and_cleared(cluster):
    # Below IBP 2.7-IV2 leaders write ISR changes to the state znode, which the controller
    # watches for partitions being reassigned.
    controller = cluster.start_controller(1, **{"inter.broker.protocol.version": "2.7-IV1",
                                                "log.message.format.version": "2.7-IV1"})
    cluster.active_controller()
    tp = TopicPartition("zkmove", 0)
    cluster.create_topic("zkmove", {0: [2]})
    cluster.wait_state(tp, 2, (2,))
    cluster.admin.create_partition_reassignment({tp: [3]})
    lai = cluster.brokers[3].wait_for(ApiKeys.LEADER_AND_ISR, lambda b: ("zkmove", 0) in lai_partitions(b))
    assert lai_partitions(lai)[("zkmove", 0)].is_new
    current = cluster.state(tp)
    in_sync = LeaderIsrAndControllerEpoch(
        LeaderAndIsr(2, current.leader_and_isr.leader_epoch, (2, 3), current.leader_and_isr.zk_version),
        current.controller_epoch)
    assert cluster.admin.set_topic_partition_states({tp: in_sync})[tp][0]
    cluster.wait_state(tp, 3, (3,))
    wait_until(lambda: not cluster.admin.reassign_partitions_in_progress(), message="/admin/reassign_partitions gone")
    assert cluster.admin.get_full_replica_assignment_for_topics(["zkmove"])[tp] == ReplicaAssignment((3,))
    wait_until(lambda: not controller.controller_context.partitions_being_reassigned, message="reassignment done")


def test_storage_error_in_leader_and_isr_response_takes_the_replica_offline(cluster):
    controller = cluster.start_controller(1)
    cluster.active_controller()
    cluster.brokers[2].leader_and_isr_error = Errors.KAFKA_STORAGE_ERROR
    tp = TopicPartition("disk", 0)
    cluster.create_topic("disk", {0: [2, 3]})
    # Broker 2 cannot host the replica (its log dir is offline): leadership moves to 3.
    cluster.wait_state(tp, 3, (3,))
    wait_until(lambda: tp in controller.controller_context.replicas_on_offline_dirs.get(2, set()),
               message="replica recorded as offline")
    assert controller.controller_context.live_broker_ids == {1, 2, 3}
    um = cluster.brokers[1].wait_for(ApiKeys.UPDATE_METADATA, lambda b: um_partitions(b).get(("disk", 0)) is not None
                                     and um_partitions(b)[("disk", 0)].leader == 3)
    assert um_partitions(um)[("disk", 0)].offline_replicas == (2,)


def test_topic_deletion_waits_for_a_dead_replica_and_resumes_when_it_returns(cluster):
    controller = cluster.start_controller(1)
    cluster.active_controller()
    cluster.create_topic("halt", {0: [2, 3]})
    cluster.wait_state(TopicPartition("halt", 0), 2, (2, 3))
    cluster.brokers[2].kill_session()
    cluster.wait_state(TopicPartition("halt", 0), 3, (3,))
    wait_until(lambda: controller.controller_context.live_broker_ids == {1, 3}, message="broker 2 seen dead")

    cluster.admin.create_delete_topic_path("halt")
    cluster.brokers[3].wait_for(ApiKeys.STOP_REPLICA, lambda b: sr_partitions(b).get(("halt", 0)) is not None
                                and sr_partitions(b)[("halt", 0)].delete_partition)
    wait_until(lambda: "halt" in controller.controller_context.topics_ineligible_for_deletion,
               message="deletion halted")
    assert cluster.admin.topic_exists("halt")

    cluster.brokers[2].clear()
    cluster.brokers[2].register()
    sr = cluster.brokers[2].wait_for(ApiKeys.STOP_REPLICA, lambda b: sr_partitions(b).get(("halt", 0)) is not None
                                     and sr_partitions(b)[("halt", 0)].delete_partition)
    assert sr.controller_epoch == controller.epoch
    wait_until(lambda: not cluster.admin.topic_exists("halt"), message="topic deleted after the broker returned")
    # The marker goes last, after the topic and its config.
    wait_until(lambda: not cluster.admin.is_topic_marked_for_deletion("halt"), message="marker removed")


def test_auto_rebalance_moves_leadership_back_to_the_preferred_replica(cluster):
    from kafka_py.controller.kafka_controller import AutoPreferredReplicaLeaderElection

    controller = cluster.start_controller(1)
    cluster.active_controller()
    tp = TopicPartition("bal", 0)
    cluster.create_topic("bal", {0: [2, 3]})
    cluster.wait_state(tp, 2, (2, 3))
    # Leadership moves off 2 (controlled shutdown), then 2 is back in the ISR.
    results: queue.Queue = queue.Queue()
    controller.controlled_shutdown(2, cluster.brokers[2].broker_epoch, results.put)
    assert results.get(timeout=10) == set()
    cluster.brokers[2].kill_session()
    wait_until(lambda: 2 not in controller.controller_context.live_or_shutting_down_broker_ids, message="2 gone")
    cluster.brokers[2].register()
    wait_until(lambda: 2 in controller.controller_context.live_broker_ids, message="2 back")
    current = cluster.wait_state(tp, 3, (3,))
    grown = LeaderIsrAndControllerEpoch(
        LeaderAndIsr(3, current.leader_and_isr.leader_epoch, (3, 2), current.leader_and_isr.zk_version),
        current.controller_epoch)
    assert cluster.admin.set_topic_partition_states({tp: grown})[tp][0]
    cluster.admin.propagate_isr_changes([tp])
    wait_until(lambda: controller.controller_context.partition_leadership_info(tp).leader_and_isr.isr == (3, 2),
               message="controller saw the ISR grow")

    controller.event_manager.put(AutoPreferredReplicaLeaderElection())
    cluster.wait_state(tp, 2, (3, 2))


def test_controller_resigns_when_another_broker_takes_the_controller_znode(cluster):
    from kafka_py.core.zk.zk_data import ControllerZNode

    controller = cluster.start_controller(1)
    cluster.active_controller()
    cluster.create_topic("handover", {0: [2]})
    cluster.wait_state(TopicPartition("handover", 0), 2, (2,))
    wait_until(lambda: controller.controller_channel_manager.broker_state_info, message="send threads running")

    # Another broker (9) takes /controller in one transaction, so there is no gap to re-win.
    zk = cluster.admin.current_zookeeper
    transaction = zk.transaction()
    transaction.delete(ControllerZNode.path())
    transaction.create(ControllerZNode.path(), ControllerZNode.encode(9, 0), ephemeral=True)
    assert all(r is not None and not isinstance(r, Exception) for r in transaction.commit())

    wait_until(lambda: controller.active_controller_id == 9, message="controller sees broker 9")
    assert not controller.is_active
    wait_until(lambda: not controller.controller_channel_manager.broker_state_info, message="send threads stopped")
    wait_until(lambda: not controller.controller_context.all_topics, message="context reset")
    assert cluster.admin.get_controller_id() == 9


def test_unclean_election_on_request_of_a_partition_without_a_live_isr(cluster):
    controller = cluster.start_controller(1)
    cluster.active_controller()
    tp = TopicPartition("uc", 0)
    cluster.create_topic("uc", {0: [2, 3]})
    cluster.wait_state(tp, 2, (2, 3))
    cluster.brokers[3].kill_session()
    cluster.wait_state(tp, 2, (2,))
    cluster.brokers[2].kill_session()
    cluster.wait_state(tp, LeaderAndIsr.NO_LEADER, (2,))
    results: queue.Queue = queue.Queue()

    # no replica alive at all
    controller.elect_leaders({tp}, ElectionType.UNCLEAN, results.put)
    assert results.get(timeout=10)[tp].error is Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE

    # the follower returns, out of sync: unclean.leader.election.enable is off, so it does not lead
    cluster.brokers[3].register()
    wait_until(lambda: 3 in controller.controller_context.live_broker_ids, message="broker 3 back")
    assert cluster.state(tp).leader_and_isr.leader == LeaderAndIsr.NO_LEADER
    controller.elect_leaders({tp}, ElectionType.PREFERRED, results.put)
    preferred = results.get(timeout=10)[tp]
    assert preferred.error is Errors.PREFERRED_LEADER_NOT_AVAILABLE
    assert preferred.message == ("Failed to elect leader for partition uc-0 under strategy "
                                 "PreferredReplicaPartitionLeaderElectionStrategy")

    # asked for, it leads, alone in its ISR
    controller.elect_leaders({tp}, ElectionType.UNCLEAN, results.put)
    assert results.get(timeout=10) == {tp: 3}
    assert cluster.state(tp).leader_and_isr.isr == (3,)
    lai = cluster.brokers[3].wait_for(ApiKeys.LEADER_AND_ISR, lambda b: ("uc", 0) in lai_partitions(b)
                                      and lai_partitions(b)[("uc", 0)].leader == 3)
    assert lai_partitions(lai)[("uc", 0)].isr == (3,)
    # a partition with a live leader needs no unclean election
    controller.elect_leaders({tp}, ElectionType.UNCLEAN, results.put)
    assert results.get(timeout=10)[tp].error is Errors.ELECTION_NOT_NEEDED
