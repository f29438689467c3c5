"""KafkaZkClient against a real ZooKeeper (the session-wide ``zookeeper`` fixture).

Every test works under its own chroot, so tests never see each other's znodes. Waits are on
events or conditions with generous timeouts; nothing asserts how long anything took.
"""
from __future__ import annotations

import json
import queue
import threading
import time
import uuid

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

from kafka_py.core.api.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_py.core.cluster.broker import Broker, EndPoint, ListenerName, SecurityProtocol
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.zk.kafka_zk_client import (
    Code,
    ControllerMovedException,
    ExistsRequest,
    GetChildrenRequest,
    KafkaZkClient,
    StateChangeHandler,
    ZNodeChangeHandler,
    ZNodeChildChangeHandler,
)
from kafka_py.core.zk.zk_data import (
    BrokerInfo,
    ConfigType,
    ReplicaAssignment,
    TopicIdReplicaAssignment,
    ZkData,
    ZkVersion,
    random_uuid,
)

SESSION_TIMEOUT_MS = 6000
WAIT_S = 20.0


def wait_until(condition, timeout: float = WAIT_S, message: str = "condition") -> None:
    """Poll a ZooKeeper-side condition that has no event to wait on."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {message}")
        time.sleep(0.05)


@pytest.fixture
def chroot() -> str:
    return f"/test-{uuid.uuid4().hex}"


@pytest.fixture
def raw(zookeeper):
    """A plain kazoo client on the server root, to look at what KafkaZkClient wrote."""
    client = KazooClient(hosts=zookeeper.connect_string, timeout=15)
    client.start(timeout=15)
    yield client
    client.stop()
    client.close()


@pytest.fixture
def new_client(zookeeper, chroot):
    clients = []

    def make(**kwargs) -> KafkaZkClient:
        kwargs.setdefault("session_timeout_ms", SESSION_TIMEOUT_MS)
        client = KafkaZkClient(f"{zookeeper.connect_string}{chroot}", **kwargs)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def zk_client(new_client) -> KafkaZkClient:
    client = new_client()
    client.create_top_level_paths()
    return client


def broker_info(broker_id: int, port: int = 9092) -> BrokerInfo:
    broker = Broker(broker_id, (EndPoint("localhost", port, ListenerName("PLAINTEXT"), SecurityProtocol.PLAINTEXT),))
    return BrokerInfo(broker, 5, -1)


def expire_session(zookeeper, client: KafkaZkClient, lost: threading.Event) -> None:
    """Expire ``client``'s session on the server: another connection takes the session over
    with its id and password and closes it. Retried in the rare case the original client
    reconnects first and takes the session back."""
    for _ in range(10):
        session_id, password = client.current_zookeeper.client_id
        intruder = KazooClient(hosts=zookeeper.connect_string, client_id=(session_id, password), timeout=15)
        intruder.start(timeout=15)
        intruder.stop()
        intruder.close()
        if lost.wait(5):
            return
    raise AssertionError("could not expire the session")


# -- bootstrap ------------------------------------------------------------------------------------

def test_chroot_is_created_and_paths_are_relative_to_it(new_client, raw, chroot):
    assert raw.exists(chroot) is None
    client = new_client()
    assert raw.exists(chroot) is not None
    client.create_top_level_paths()
    for path in ZkData.PERSISTENT_ZK_PATHS:
        assert raw.exists(chroot + path) is not None, path
    # Creating them again is a no-op, as on every broker restart.
    client.create_top_level_paths()


def test_cluster_id_create_or_get_agrees_across_clients(new_client, raw, chroot):
    clients = [new_client(), new_client()]
    assert clients[0].get_cluster_id() is None
    barrier = threading.Barrier(2)
    results = [None, None]

    def create(i):
        barrier.wait()
        results[i] = clients[i].create_or_get_cluster_id(f"proposed-id-{i}")

    threads = [threading.Thread(target=create, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    assert results[0] == results[1] and results[0] in ("proposed-id-0", "proposed-id-1")
    data, _ = raw.get(chroot + "/cluster/id")
    assert json.loads(data) == {"version": "1", "id": results[0]}
    assert clients[1].get_cluster_id() == results[0]


def test_broker_sequence_ids_increase_across_clients(new_client):
    first, second = new_client(), new_client()
    first.create_top_level_paths()
    ids = [first.generate_broker_sequence_id(), second.generate_broker_sequence_id(),
           first.generate_broker_sequence_id()]
    assert ids == [ids[0], ids[0] + 1, ids[0] + 2]
    assert ids[0] == 1  # the version of /brokers/seqid after its first write


def test_broker_sequence_id_creates_the_seqid_znode(new_client):
    assert new_client().generate_broker_sequence_id() == 1


# -- broker registration ------------------------------------------------------------------------

def test_broker_registration_is_ephemeral(new_client, zk_client, raw, chroot):
    broker_client = new_client()
    info = broker_info(1)
    epoch = broker_client.register_broker(info)
    data, stat = raw.get(chroot + "/brokers/ids/1")
    assert stat.ephemeralOwner == broker_client.session_id
    assert epoch == stat.czxid
    assert stat.version == 1  # created empty, then set, in one multi, as Kafka does
    js = json.loads(data)
    assert {k: v for k, v in js.items() if k != "timestamp"} == {
        "features": {}, "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
        "endpoints": ["PLAINTEXT://localhost:9092"], "jmx_port": -1, "port": 9092, "host": "localhost",
        "version": 5}
    assert zk_client.get_broker(1) == info.broker
    assert zk_client.get_all_brokers_in_cluster() == [info.broker]
    assert zk_client.get_all_broker_and_epochs_in_cluster() == {info.broker: epoch}
    assert zk_client.get_sorted_broker_list() == [1]

    broker_client.close()
    wait_until(lambda: raw.exists(chroot + "/brokers/ids/1") is None, message="ephemeral broker znode to go")
    assert zk_client.get_broker(1) is None
    assert zk_client.get_all_brokers_in_cluster() == []


def test_registering_a_broker_id_held_by_another_session_fails(new_client, zk_client):
    zk_client.register_broker(broker_info(1))
    other = new_client()
    with pytest.raises(NodeExistsError):
        other.register_broker(broker_info(1, port=9093))
    assert zk_client.get_broker(1).end_point("PLAINTEXT").port == 9092


def test_register_broker_twice_in_one_session_returns_the_same_epoch(zk_client):
    epoch = zk_client.register_broker(broker_info(2))
    assert zk_client.register_broker(broker_info(2)) == epoch


def test_register_broker_replaces_its_own_leftover_from_an_expired_session(zk_client, raw, chroot):
    """KAFKA-7165: the znode of our previous session can outlive it; re-registering deletes it
    and creates it again under the new session instead of failing."""
    from kazoo.protocol.connection import _SESSION_EXPIRED  # kazoo's own test hook

    zk_client.register_broker(broker_info(3))
    old_session = zk_client.session_id
    new_session = threading.Event()
    zk_client.register_state_change_handler(
        StateChangeHandler("test", after_initializing_session=new_session.set))
    # Expire the session on the client side only: the server keeps the old session (and its
    # ephemeral znode) alive until its timeout, which is exactly the leftover case.
    zk_client.current_zookeeper._call(_SESSION_EXPIRED, None)
    assert new_session.wait(WAIT_S)
    assert zk_client.session_id != old_session
    _, stat = raw.get(chroot + "/brokers/ids/3")
    assert stat.ephemeralOwner == old_session

    epoch = zk_client.register_broker(broker_info(3))
    _, stat = raw.get(chroot + "/brokers/ids/3")
    assert stat.ephemeralOwner == zk_client.session_id
    assert epoch == stat.czxid


# -- controller election -------------------------------------------------------------------------

def test_controller_election_has_exactly_one_winner_and_bumps_the_epoch(new_client, zk_client, raw, chroot):
    contenders = [new_client() for _ in range(3)]
    barrier = threading.Barrier(len(contenders))
    outcomes: dict[int, object] = {}

    def elect(broker_id):
        barrier.wait()
        try:
            outcomes[broker_id] = contenders[broker_id].register_controller_and_increment_controller_epoch(broker_id)
        except ControllerMovedException as e:
            outcomes[broker_id] = e

    threads = [threading.Thread(target=elect, args=(i,)) for i in range(len(contenders))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    winners = {b: r for b, r in outcomes.items() if not isinstance(r, Exception)}
    assert len(outcomes) == 3 and len(winners) == 1
    (winner, (epoch, epoch_zk_version)), = winners.items()
    assert epoch == 1
    assert zk_client.get_controller_id() == winner
    current_epoch, stat = zk_client.get_controller_epoch()
    assert (current_epoch, stat.version) == (1, epoch_zk_version)
    data, stat = raw.get(chroot + "/controller")
    js = json.loads(data)
    assert (js["version"], js["brokerid"]) == (1, winner) and js["timestamp"].isdigit()
    assert stat.ephemeralOwner == contenders[winner].session_id
    assert raw.get(chroot + "/controller_epoch")[0] == b"1"

    # The controller goes away; the next election moves the epoch on.
    contenders[winner].close()
    wait_until(lambda: zk_client.get_controller_id() is None, message="/controller to go")
    successor = next(b for b in outcomes if b != winner)
    assert contenders[successor].register_controller_and_increment_controller_epoch(successor) == \
        (2, epoch_zk_version + 1)
    with pytest.raises(ControllerMovedException):
        zk_client.register_controller_and_increment_controller_epoch(99)


def test_delete_controller_and_fencing_on_the_epoch_version(zk_client):
    epoch, epoch_zk_version = zk_client.register_controller_and_increment_controller_epoch(1)
    tp = TopicPartition("fenced", 0)
    zk_client.create_topic_assignment("fenced", None, {tp: [1]})
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr.of(1, [1]), epoch)
    assert zk_client.create_topic_partition_states({tp: state}, epoch_zk_version) == {tp: (True, 0)}
    # Another controller bumps the epoch: writes fenced on the old version must fail.
    zk_client.set_controller_epoch_raw(epoch + 1, epoch_zk_version).maybe_throw()
    with pytest.raises(ControllerMovedException):
        zk_client.set_topic_partition_states({tp: state}, epoch_zk_version)
    with pytest.raises(ControllerMovedException):
        zk_client.delete_controller(epoch_zk_version)
    assert zk_client.get_controller_id() == 1
    zk_client.delete_controller(epoch_zk_version + 1)
    assert zk_client.get_controller_id() is None


# -- topics and partition state -------------------------------------------------------------------

def test_topic_assignment_round_trip(zk_client, raw, chroot):
    topic_id = random_uuid()
    zk_client.create_topic_assignment("orders", topic_id, {TopicPartition("orders", p): [p % 2, (p + 1) % 2]
                                                           for p in range(3)})
    js = json.loads(raw.get(chroot + "/brokers/topics/orders")[0])
    assert js["version"] == 3 and js["adding_replicas"] == {} and js["removing_replicas"] == {}
    assert js["partitions"] == {"0": [0, 1], "1": [1, 0], "2": [0, 1]}
    assert zk_client.topic_exists("orders") and not zk_client.topic_exists("nope")
    assert zk_client.get_all_topics_in_cluster() == {"orders"}
    assert zk_client.get_topic_ids_for_topics(["orders", "nope"]) == {"orders": topic_id}
    assert zk_client.get_partitions_for_topics(["orders"]) == {"orders": [0, 1, 2]}
    assert zk_client.get_replica_assignment_for_topics(["orders"])[TopicPartition("orders", 1)] == (1, 0)
    assert zk_client.get_topic_partition_count("orders") == 3
    with pytest.raises(NodeExistsError):
        zk_client.create_topic_assignment("orders", None, {TopicPartition("orders", 0): [0]})

    moving = ReplicaAssignment((0, 1)).reassign_to([1, 2])
    zk_client.set_topic_assignment("orders", topic_id, {TopicPartition("orders", 0): moving})
    assert zk_client.get_full_replica_assignment_for_topics(["orders"]) == {TopicPartition("orders", 0): moving}
    assert zk_client.get_replica_assignment_and_topic_id_for_topics(["orders"]) == {
        TopicIdReplicaAssignment("orders", topic_id, {TopicPartition("orders", 0): moving})}

    zk_client.create_topic_assignment("legacy", None, {TopicPartition("legacy", 0): [0]})
    (with_id,) = zk_client.set_topic_ids(zk_client.get_replica_assignment_and_topic_id_for_topics(["legacy"]),
                                         ZkVersion.MATCH_ANY_VERSION)
    assert zk_client.get_topic_ids_for_topics(["legacy"]) == {"legacy": with_id.topic_id}


def test_partition_state_writes_are_conditional_on_the_znode_version(zk_client, raw, chroot):
    tps = [TopicPartition("t", 0), TopicPartition("t", 1)]
    zk_client.create_topic_assignment("t", None, {tp: [1, 2] for tp in tps})
    initial = {tp: LeaderIsrAndControllerEpoch(LeaderAndIsr.of(1, [1, 2]), 1) for tp in tps}
    assert zk_client.create_topic_partition_states(initial) == {tp: (True, 0) for tp in tps}
    assert json.loads(raw.get(chroot + "/brokers/topics/t/partitions/0/state")[0]) == \
        {"controller_epoch": 1, "leader": 1, "version": 1, "leader_epoch": 0, "isr": [1, 2]}
    assert zk_client.create_topic_partition_states(initial) == {tp: (False, ZkVersion.UNKNOWN_VERSION) for tp in tps}

    read = zk_client.get_topic_partition_states(tps)
    assert read == initial
    shrunk = read[tps[0]].leader_and_isr.new_leader_and_isr(1, [1])
    assert zk_client.set_topic_partition_states({tps[0]: LeaderIsrAndControllerEpoch(shrunk, 1)}) == \
        {tps[0]: (True, 1)}
    # A writer still holding version 0 loses.
    stale = read[tps[0]].leader_and_isr.new_leader_and_isr(2, [2])
    assert zk_client.set_topic_partition_states({tps[0]: LeaderIsrAndControllerEpoch(stale, 1)}) == \
        {tps[0]: (False, ZkVersion.UNKNOWN_VERSION)}
    assert zk_client.get_leader_and_isr(tps[0]) == shrunk.with_zk_version(1)

    result = zk_client.update_leader_and_isr({tps[0]: stale, tps[1]: read[tps[1]].leader_and_isr.new_leader(2)},
                                             controller_epoch=1,
                                             expected_controller_epoch_zk_version=ZkVersion.MATCH_ANY_VERSION)
    assert result.partitions_to_retry == [tps[0]]
    assert result.finished_partitions == {tps[1]: LeaderAndIsr(2, 1, (1, 2), 1)}
    assert zk_client.get_leader_for_partition(tps[1]) == 2
    assert zk_client.get_epoch_for_partition(tps[1]) == 1
    assert zk_client.get_all_partitions() == set(tps)


def test_conditional_update_path(zk_client):
    zk_client.create_recursive("/some/node", b"a")
    assert zk_client.conditional_update_path("/some/node", b"b", 0) == (True, 1)
    assert zk_client.conditional_update_path("/some/node", b"c", 0) == (False, ZkVersion.UNKNOWN_VERSION)
    assert zk_client.conditional_update_path("/some/node", b"c", 0,
                                             lambda client, path, data: (True, 42)) == (True, 42)
    assert zk_client.conditional_update_path("/some/missing", b"c", 0) == (False, ZkVersion.UNKNOWN_VERSION)
    assert zk_client.get_data_and_version("/some/node") == (b"b", 1)
    assert zk_client.get_data_and_version("/some/missing") == (None, ZkVersion.UNKNOWN_VERSION)


def test_topic_deletion_flags_and_recursive_delete(zk_client):
    zk_client.create_topic_assignment("doomed", None, {TopicPartition("doomed", 0): [0]})
    zk_client.create_topic_partition_states(
        {TopicPartition("doomed", 0): LeaderIsrAndControllerEpoch(LeaderAndIsr.of(0, [0]), 1)})
    zk_client.set_or_create_entity_configs(ConfigType.TOPIC, "doomed", {"retention.ms": "1"})
    zk_client.create_delete_topic_path("doomed")
    with pytest.raises(NodeExistsError):
        zk_client.create_delete_topic_path("doomed")
    assert zk_client.get_topic_deletions() == ["doomed"]
    assert zk_client.is_topic_marked_for_deletion("doomed")

    zk_client.delete_topic_znode("doomed")
    zk_client.delete_topic_config("doomed")
    zk_client.delete_topic_deletion_flag("doomed")
    assert not zk_client.topic_exists("doomed")
    assert zk_client.get_entity_configs(ConfigType.TOPIC, "doomed") == {}
    assert zk_client.get_topic_deletions() == []


# -- configs and notifications --------------------------------------------------------------------

def test_entity_configs_and_sequential_change_notifications(zk_client, raw, chroot):
    zk_client.set_or_create_entity_configs(ConfigType.TOPIC, "foo", {"cleanup.policy": "compact"})
    zk_client.set_or_create_entity_configs(ConfigType.TOPIC, "foo", {"cleanup.policy": "delete", "segment.ms": 100})
    assert zk_client.get_entity_configs(ConfigType.TOPIC, "foo") == {"cleanup.policy": "delete", "segment.ms": "100"}
    assert json.loads(raw.get(chroot + "/config/topics/foo")[0]) == \
        {"version": 1, "config": {"cleanup.policy": "delete", "segment.ms": "100"}}
    zk_client.set_or_create_entity_configs(ConfigType.BROKER, "<default>", {"log.cleaner.threads": "2"})
    assert zk_client.get_entity_configs(ConfigType.BROKER, "<default>") == {"log.cleaner.threads": "2"}
    assert zk_client.get_all_entities_with_config(ConfigType.BROKER) == ["<default>"]

    paths = [zk_client.create_config_change_notification(p) for p in ("topics/foo", "brokers/<default>", "topics/foo")]
    assert paths == [f"/config/changes/config_change_{n:010d}" for n in range(3)]
    assert zk_client.get_config_change_notifications() == [p.rsplit("/", 1)[1] for p in paths]
    assert json.loads(raw.get(chroot + paths[1])[0]) == {"version": 2, "entity_path": "brokers/<default>"}


def test_log_configs_merge_defaults_and_overrides(zk_client):
    zk_client.set_or_create_entity_configs(ConfigType.TOPIC, "a", {"retention.ms": "1234"})
    configs, failed = zk_client.get_log_configs(["a", "b"], {"retention.ms": 5000, "segment.bytes": 1048576})
    assert failed == {}
    assert configs["a"].retention_ms == 1234 and configs["b"].retention_ms == 5000
    assert configs["a"].segment_size == 1048576


def test_isr_change_and_log_dir_notifications(zk_client):
    zk_client.propagate_isr_changes([TopicPartition("a", 0)])
    zk_client.propagate_isr_changes([TopicPartition("b", 1), TopicPartition("b", 2)])
    sequence_numbers = zk_client.get_all_isr_change_notifications()
    assert sorted(sequence_numbers) == ["0000000000", "0000000001"]
    assert sorted(zk_client.get_partitions_from_isr_change_notifications(sequence_numbers)) == \
        [TopicPartition("a", 0), TopicPartition("b", 1), TopicPartition("b", 2)]
    zk_client.delete_isr_change_notifications()
    assert zk_client.get_all_isr_change_notifications() == []

    zk_client.propagate_log_dir_event(7)
    events = zk_client.get_all_log_dir_event_notifications()
    assert zk_client.get_broker_ids_from_log_dir_events(events) == [7]
    zk_client.delete_log_dir_event_notifications(sequence_numbers=events)
    assert zk_client.get_all_log_dir_event_notifications() == []


def test_reassignment_and_preferred_election_znodes(zk_client):
    zk_client.create_partition_reassignment({TopicPartition("t", 0): [1, 2]})
    assert zk_client.reassign_partitions_in_progress()
    assert zk_client.get_partition_reassignment() == {TopicPartition("t", 0): (1, 2)}
    zk_client.delete_partition_reassignment()
    assert not zk_client.reassign_partitions_in_progress()
    zk_client.create_preferred_replica_election([TopicPartition("t", 0)])
    assert zk_client.get_preferred_replica_election() == {TopicPartition("t", 0)}
    zk_client.delete_preferred_replica_election()
    assert zk_client.get_preferred_replica_election() == set()


# -- watches and sessions ------------------------------------------------------------------------

def test_znode_change_handler_fires_and_rearms(zk_client, raw, chroot):
    events: queue.Queue = queue.Queue()
    handler = ZNodeChangeHandler("/watched", on_creation=lambda: events.put("created"),
                                 on_deletion=lambda: events.put("deleted"),
                                 on_data_change=lambda: events.put("changed"))
    assert zk_client.register_znode_change_handler_and_check_existence(handler) is False
    raw.create(chroot + "/watched", b"1")
    assert events.get(timeout=WAIT_S) == "created"
    # No read in between: each event must have re-armed the watch by itself.
    raw.set(chroot + "/watched", b"2")
    assert events.get(timeout=WAIT_S) == "changed"
    raw.set(chroot + "/watched", b"3")
    assert events.get(timeout=WAIT_S) == "changed"
    raw.delete(chroot + "/watched")
    assert events.get(timeout=WAIT_S) == "deleted"

    zk_client.unregister_znode_change_handler("/watched")
    raw.create(chroot + "/watched", b"4")
    zk_client.register_znode_change_handler(ZNodeChangeHandler("/other", on_creation=lambda: events.put("other")))
    zk_client.path_exists("/other")
    raw.create(chroot + "/other", b"")
    assert events.get(timeout=WAIT_S) == "other"  # and nothing from the unregistered handler
    assert events.empty()


def test_a_watched_read_answered_after_its_handler_left_keeps_no_stat(zk_client, raw, chroot):
    # A topic's handler is unregistered when the topic is deleted; a watched read of its
    # znode sent just before must not leave the znode's stat behind once answered. The
    # send and the completion are taken apart here to put the unregistering between them.
    raw.create(chroot + "/brokers/topics/leaving", b"{}", makepath=True)
    client = zk_client._zk_client
    for request, handler_type, register, unregister, stats in (
            (ExistsRequest("/brokers/topics/leaving"), ZNodeChangeHandler, client.register_znode_change_handler,
             client.unregister_znode_change_handler, client._node_stats),
            (GetChildrenRequest("/brokers/topics/leaving", register_watch=True), ZNodeChildChangeHandler,
             client.register_znode_child_change_handler, client.unregister_znode_child_change_handler,
             client._child_stats)):
        register(handler_type("/brokers/topics/leaving"))
        async_result, watched = client._send(request)
        assert watched
        unregister("/brokers/topics/leaving")
        response = client._complete(request, async_result, watched)
        assert response.result_code == Code.OK
        assert "/brokers/topics/leaving" not in stats
    # while registered, the stat is kept (a reconnect compares against it)
    client.register_znode_change_handler(ZNodeChangeHandler("/brokers/topics/leaving"))
    client.handle_request(ExistsRequest("/brokers/topics/leaving"))
    assert client._node_stats["/brokers/topics/leaving"] is not None
    client.unregister_znode_change_handler("/brokers/topics/leaving")
    assert "/brokers/topics/leaving" not in client._node_stats


def test_child_change_handler_is_armed_by_get_children_and_rearms(zk_client, raw, chroot):
    changes: queue.Queue = queue.Queue()
    zk_client.register_znode_child_change_handler(
        ZNodeChildChangeHandler("/brokers/ids", on_child_change=lambda: changes.put(True)))
    # Kafka's rule: registering alone sets no watch ...
    raw.create(chroot + "/brokers/ids/10", b"{}")
    with pytest.raises(queue.Empty):
        changes.get(timeout=0.5)
    # ... the read that follows does.
    assert zk_client.get_sorted_broker_list() == [10]
    raw.create(chroot + "/brokers/ids/11", b"{}")
    assert changes.get(timeout=WAIT_S)
    raw.delete(chroot + "/brokers/ids/10")
    assert changes.get(timeout=WAIT_S)
    assert zk_client.get_sorted_broker_list() == [11]


def test_watches_survive_a_dropped_connection(zk_client, raw, chroot):
    from kazoo.protocol.connection import _CONNECTION_DROP  # kazoo's own test hook

    events: queue.Queue = queue.Queue()
    zk_client.register_znode_change_handler_and_check_existence(
        ZNodeChangeHandler("/flappy", on_creation=lambda: events.put("created")))
    session = zk_client.session_id
    reconnected = threading.Event()
    zk_client.current_zookeeper.add_listener(lambda state: reconnected.set() if state == "CONNECTED" else None)
    zk_client.current_zookeeper._call(_CONNECTION_DROP, None)
    assert reconnected.wait(WAIT_S)
    assert zk_client.session_id == session
    wait_until(lambda: zk_client.path_exists("/anything") is False, message="requests to work again")
    raw.create(chroot + "/flappy", b"")
    assert events.get(timeout=WAIT_S) == "created"


def test_session_expiry_runs_state_handlers_and_broker_reregisters(zookeeper, new_client, zk_client, raw, chroot):
    broker_client = new_client()
    info = broker_info(5)
    broker_client.register_broker(info)
    old_session = broker_client.session_id
    calls: list[str] = []
    lost, reinitialized = threading.Event(), threading.Event()

    def before():
        calls.append("before")
        lost.set()

    def after():
        calls.append("after")
        # What KafkaServer does on a new session: register again.
        broker_client.register_broker(info)
        reinitialized.set()

    broker_client.register_state_change_handler(StateChangeHandler("broker", before, after))
    data_changes: queue.Queue = queue.Queue()
    broker_client.register_znode_change_handler_and_check_existence(
        ZNodeChangeHandler("/watched-across-sessions", on_creation=lambda: data_changes.put("created")))

    expire_session(zookeeper, broker_client, lost)
    assert reinitialized.wait(WAIT_S)
    assert calls == ["before", "after"]
    assert broker_client.session_id != old_session
    _, stat = raw.get(chroot + "/brokers/ids/5")
    assert stat.ephemeralOwner == broker_client.session_id
    assert zk_client.get_broker(5) == info.broker
    # The watch registered in the old session was set again in the new one.
    raw.create(chroot + "/watched-across-sessions", b"")
    assert data_changes.get(timeout=WAIT_S) == "created"


def test_requests_fail_fast_after_close(new_client):
    client = new_client()
    client.close()
    with pytest.raises(Exception):
        client.get_cluster_id()


def test_partition_states_of_many_partitions_are_created_in_multis(zk_client):
    """A topic's partitions go in multis; a multi that fails (one partition's state znode is
    already there) is redone partition by partition, each answered on its own."""
    epoch, epoch_zk_version = zk_client.register_controller_and_increment_controller_epoch(1)
    tps = [TopicPartition("many-a", p) for p in range(300)] + [TopicPartition("many-b", p) for p in range(5)]
    for topic in ("many-a", "many-b"):
        zk_client.create_topic_assignment(topic, None, {tp: [1] for tp in tps if tp.topic == topic})
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr.of(1, [1]), epoch)
    # made earlier (a controller that failed halfway): its multi of 250 fails as a whole
    assert zk_client.create_topic_partition_states({tps[3]: state}, epoch_zk_version) == {tps[3]: (True, 0)}
    result = zk_client.create_topic_partition_states({tp: state for tp in tps}, epoch_zk_version)
    assert result == {tp: ((False, ZkVersion.UNKNOWN_VERSION) if tp == tps[3] else (True, 0)) for tp in tps}
    assert [r.result_code for r in zk_client.get_topic_partition_states_raw(tps)] == [Code.OK] * len(tps)

    zk_client.set_controller_epoch_raw(epoch + 1, epoch_zk_version).maybe_throw()
    with pytest.raises(ControllerMovedException):
        zk_client.create_topic_partition_states({TopicPartition("many-b", p): state for p in range(5, 300)},
                                                epoch_zk_version)
