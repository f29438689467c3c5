"""The group coordinator against real broker processes: kafka-python KafkaConsumers in a group
(subscribe, commit, resume, split partitions, rebalance on leave), committed offsets that
survive clean and kill -9 broker restarts (reloaded from __consumer_offsets), and the group
APIs on raw sockets with the requests no well-behaved client sends, each answered with
Kafka's error code while the broker carries on."""
from __future__ import annotations

import threading
import time

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata

from kafka_py.core.coordinator.group.group_metadata_manager import java_string_hash_code
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.clients.common.protocol.entities import build_entity
from tests.coordinator.coordinator_harness import assignment, subscription
from tests.integration.broker_harness import RawClient, wait_until
from kafka_py.core.tools.group_subscription import subscribe
from kafka_py.clients.common.utils.utils import utils_abs

TOPIC = "grouped"
PARTITIONS = [TopicPartition(TOPIC, p) for p in range(4)]
WAIT_S = 60


def req(api: ApiKeys, version: int, **values):
    cls = request_schema(api, version)
    unknown = set(values) - set(cls.__dataclass_fields__)
    assert not unknown, f"{cls.__name__} v{version} has no fields {unknown}"
    return build_entity(cls, values)


def create_topic(broker, topic: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


def produce(broker, topic: str, per_partition: int, partitions: int, tag: str = "r") -> None:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    try:
        for i in range(per_partition):
            for p in range(partitions):
                producer.send(topic, value=f"{tag}-{p}-{i}".encode(), partition=p)
        producer.flush()
    finally:
        producer.close()


def consumer(broker, group: str, **kwargs) -> KafkaConsumer:
    kwargs.setdefault("auto_offset_reset", "earliest")
    kwargs.setdefault("enable_auto_commit", False)
    return KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group, session_timeout_ms=10000,
                         heartbeat_interval_ms=500, **kwargs)


def poll_records(c: KafkaConsumer, want: int) -> list:
    records: list = []
    deadline = time.monotonic() + WAIT_S
    while len(records) < want:
        assert time.monotonic() < deadline, f"only {len(records)} of {want} records arrived"
        for batch in c.poll(timeout_ms=200).values():
            records.extend(batch)
    return records


def committed(broker, group: str, tps) -> dict:
    c = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return {tp: c.committed(tp) for tp in tps}
    finally:
        c.close()


@pytest.fixture(scope="module", autouse=True)
def grouped_topic(broker):
    create_topic(broker, TOPIC, 4)
    produce(broker, TOPIC, 10, 4)


# ---------------------------------------------------------------------------- kafka-python consumers


def test_a_group_consumer_commits_and_a_new_member_resumes_there(broker):
    first = consumer(broker, "resume-group")
    try:
        subscribe(first, [TOPIC])
        assert len(poll_records(first, 40)) == 40
        assert first.assignment() == set(PARTITIONS)
        first.commit()
    finally:
        first.close()
    assert committed(broker, "resume-group", PARTITIONS) == {tp: 10 for tp in PARTITIONS}

    produce(broker, TOPIC, 2, 4, tag="later")
    second = consumer(broker, "resume-group")
    try:
        subscribe(second, [TOPIC])
        values = sorted(r.value.decode() for r in poll_records(second, 8))
        assert values == sorted(f"later-{p}-{i}" for p in range(4) for i in range(2))
        # nothing more: the committed offsets were honoured, not auto.offset.reset
        assert not any(second.poll(timeout_ms=500).values())
    finally:
        second.close()


class PollingConsumer:
    """A group consumer polling on its own thread, as an application would: a rebalance waits
    for every member to rejoin, so members polled in turn by one thread would block each other."""

    def __init__(self, broker, group: str, client_id: str) -> None:
        self._consumer = consumer(broker, group, client_id=client_id)
        subscribe(self._consumer, [TOPIC])
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._assignment: frozenset = frozenset()
        self._thread = threading.Thread(target=self._run, name=f"poll-{client_id}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self._consumer.poll(timeout_ms=100)
                with self._lock:
                    self._assignment = frozenset(self._consumer.assignment())
        finally:
            self._consumer.close()  # LeaveGroup

    @property
    def assignment(self) -> frozenset:
        with self._lock:
            return self._assignment

    def close(self) -> None:
        self._stop.set()
        self._thread.join(WAIT_S)
        assert not self._thread.is_alive()


def test_two_consumers_split_the_partitions_and_a_leave_hands_them_over(broker):
    a = PollingConsumer(broker, "split-group", "a")
    b = PollingConsumer(broker, "split-group", "b")
    try:
        wait_until(lambda: len(a.assignment) == 2 and len(b.assignment) == 2, WAIT_S,
                   "the two consumers never shared the partitions", interval=0.05)
        assert a.assignment | b.assignment == set(PARTITIONS)
        assert not a.assignment & b.assignment
        b.close()  # LeaveGroup: the coordinator rebalances at once, no session timeout to wait out
        wait_until(lambda: a.assignment == set(PARTITIONS), WAIT_S, "the remaining consumer never got all partitions",
                   interval=0.05)
    finally:
        a.close()
        b.close()


def test_simple_consumer_commits_without_joining(broker):
    c = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id="standalone", enable_auto_commit=False)
    try:
        c.assign([PARTITIONS[0]])
        c.commit({PARTITIONS[0]: OffsetAndMetadata(3, "note", -1)})
    finally:
        c.close()
    assert committed(broker, "standalone", [PARTITIONS[0]]) == {PARTITIONS[0]: 3}


# ---------------------------------------------------------------------------- restarts


@pytest.mark.parametrize("stop", ["clean", "kill"])
def test_committed_offsets_survive_a_broker_restart(broker_factory, stop):
    broker = broker_factory()
    broker.start()
    create_topic(broker, "durable-offsets", 2)
    produce(broker, "durable-offsets", 5, 2)
    tps = [TopicPartition("durable-offsets", p) for p in range(2)]
    c = consumer(broker, "durable-group")
    try:
        subscribe(c, ["durable-offsets"])
        poll_records(c, 10)
        c.commit({tps[0]: OffsetAndMetadata(4, "", -1), tps[1]: OffsetAndMetadata(2, "", -1)})
    finally:
        c.close()

    if stop == "clean":
        assert broker.stop() == 0
        broker.start()
    else:
        broker.kill()
        broker.restart()
    # the coordinator reloads the group's partition of __consumer_offsets on election
    assert committed(broker, "durable-group", tps) == {tps[0]: 4, tps[1]: 2}
    assert "Finished loading offsets and group metadata from __consumer_offsets" in broker.output()

    c = consumer(broker, "durable-group")
    try:
        subscribe(c, ["durable-offsets"])
        values = sorted(r.value.decode() for r in poll_records(c, 4))
        assert values == ["r-0-4", "r-1-2", "r-1-3", "r-1-4"]
    finally:
        c.close()


# ---------------------------------------------------------------------------- the raw protocol


def coordinator_ready(client: RawClient, group: str, version: int = 3) -> None:
    """FindCoordinator until it names this broker and the group's partition is loaded."""
    def found() -> bool:
        values = {"key": group}
        if version >= 1:
            values["key_type"] = 0
        response = client.request(ApiKeys.FIND_COORDINATOR, version, req(ApiKeys.FIND_COORDINATOR, version,
                                                                          **values))
        return response.error_code == Errors.NONE.error_code

    wait_until(found, WAIT_S, f"no coordinator for {group}", interval=0.1)

    def loaded() -> bool:
        response = client.request(ApiKeys.HEARTBEAT, 4, req(ApiKeys.HEARTBEAT, 4, group_id=group, generation_id=1,
                                                            member_id="probe", group_instance_id=None))
        return response.error_code == Errors.UNKNOWN_MEMBER_ID.error_code

    wait_until(loaded, WAIT_S, f"group {group} never loaded", interval=0.1)


def join(client: RawClient, group: str, member_id: str = "", version: int = 7, protocol_type: str = "consumer",
         protocols=(("range", None),), **extra):
    values = dict(group_id=group, session_timeout=10000, member_id=member_id, protocol_type=protocol_type,
                  protocols=[{"name": n, "metadata": m if m is not None else subscription(TOPIC)}
                             for n, m in protocols])
    values.update(extra)
    if version >= 1:
        values.setdefault("rebalance_timeout", 10000)
    if version >= 5:
        values.setdefault("group_instance_id", None)
    return client.request(ApiKeys.JOIN_GROUP, version, req(ApiKeys.JOIN_GROUP, version, **values))


def heartbeat(client: RawClient, group: str, member_id: str, generation: int) -> int:
    return client.request(ApiKeys.HEARTBEAT, 4, req(ApiKeys.HEARTBEAT, 4, group_id=group, generation_id=generation,
                                                    member_id=member_id, group_instance_id=None)).error_code


def test_find_coordinator_names_this_broker_for_every_version(broker):
    with RawClient(broker.port) as client:
        coordinator_ready(client, "finder")
        for version in range(4):
            values = {"key": "finder"} if version == 0 else {"key": "finder", "key_type": 0}
            response = client.request(ApiKeys.FIND_COORDINATOR, version,
                                      req(ApiKeys.FIND_COORDINATOR, version, **values))
            assert response.error_code == Errors.NONE.error_code
            assert (int(response.node_id), response.host, int(response.port)) == (0, "127.0.0.1", broker.port)
        # an unknown coordinator type is a bad request
        bad = client.request(ApiKeys.FIND_COORDINATOR, 3, req(ApiKeys.FIND_COORDINATOR, 3, key="x", key_type=7))
        assert bad.error_code == Errors.INVALID_REQUEST.error_code
    # the offsets topic exists with the default 50 partitions, compacted
    zk = broker.zk()
    try:
        assert len(zk.get_children("/brokers/topics/__consumer_offsets/partitions")) == 50
        config, _ = zk.get("/config/topics/__consumer_offsets")
        assert b'"cleanup.policy":"compact"' in config.replace(b" ", b"")
    finally:
        zk.stop()
        zk.close()
    partition = utils_abs(java_string_hash_code("finder")) % 50
    assert (broker.log_dir / f"__consumer_offsets-{partition}").is_dir()


def test_join_sync_heartbeat_commit_fetch_on_the_wire(broker):
    group = "wire-group"
    with RawClient(broker.port) as client:
        coordinator_ready(client, group)
        first = join(client, group)
        assert first.error_code == Errors.MEMBER_ID_REQUIRED.error_code and first.member_id
        joined = join(client, group, first.member_id)
        assert joined.error_code == Errors.NONE.error_code
        assert (joined.generation_id, joined.leader, joined.protocol_name, joined.protocol_type) == (
            1, first.member_id, "range", "consumer")
        member, generation = joined.member_id, joined.generation_id
        synced = client.request(ApiKeys.SYNC_GROUP, 5, req(
            ApiKeys.SYNC_GROUP, 5, group_id=group, generation_id=generation, member_id=member,
            group_instance_id=None, protocol_type="consumer", protocol_name="range",
            assignments=[{"member_id": member, "assignment": assignment({TOPIC: [0, 1, 2, 3]})}]))
        assert synced.error_code == Errors.NONE.error_code
        assert synced.assignment == assignment({TOPIC: [0, 1, 2, 3]})
        assert heartbeat(client, group, member, generation) == Errors.NONE.error_code

        commit = client.request(ApiKeys.OFFSET_COMMIT, 8, req(
            ApiKeys.OFFSET_COMMIT, 8, group_id=group, generation_id_or_member_epoch=generation, member_id=member,
            group_instance_id=None, topics=[{"name": TOPIC, "partitions": [
                {"partition_index": 1, "committed_offset": 6, "committed_leader_epoch": 0,
                 "committed_metadata": "hi"}]}]))
        assert commit.topics[0].partitions[0].error_code == Errors.NONE.error_code

        for version in (1, 5, 7):
            fetched = client.request(ApiKeys.OFFSET_FETCH, version, req(
                ApiKeys.OFFSET_FETCH, version, group_id=group,
                topics=[{"name": TOPIC, "partition_indexes": [1, 2]}],
                **({"require_stable": True} if version >= 7 else {})))
            parts = {p.partition_index: p for p in fetched.topics[0].partitions}
            assert (parts[1].committed_offset, parts[1].metadata) == (6, "hi")
            assert parts[2].committed_offset == -1
            if version >= 5:
                assert parts[1].committed_leader_epoch == 0
        # all partitions (v2+: topics null)
        every = client.request(ApiKeys.OFFSET_FETCH, 7, req(ApiKeys.OFFSET_FETCH, 7, group_id=group, topics=None,
                                                             require_stable=False))
        assert [(t.name, [(p.partition_index, p.committed_offset) for p in t.partitions]) for t in every.topics] == [
            (TOPIC, [(1, 6)])]

        described = client.request(ApiKeys.DESCRIBE_GROUPS, 5, req(
            ApiKeys.DESCRIBE_GROUPS, 5, groups=[group], include_authorized_operations=True))
        (d,) = described.groups
        assert (d.error_code, d.group_state, d.protocol_type, d.protocol_data) == (0, "Stable", "consumer", "range")
        assert [(m.member_id, m.client_host) for m in d.members] == [(member, "/127.0.0.1")]
        listed = client.request(ApiKeys.LIST_GROUPS, 4, req(ApiKeys.LIST_GROUPS, 4, states_filter=["Stable"]))
        assert (group, "Stable") in [(g.group_id, g.group_state) for g in listed.groups]

        left = client.request(ApiKeys.LEAVE_GROUP, 4, req(ApiKeys.LEAVE_GROUP, 4, group_id=group, members=[
            {"member_id": member, "group_instance_id": None}, {"member_id": "ghost", "group_instance_id": None}]))
        assert left.error_code == Errors.NONE.error_code
        assert [(m.member_id, m.error_code) for m in left.members] == [
            (member, Errors.NONE.error_code), ("ghost", Errors.UNKNOWN_MEMBER_ID.error_code)]

        def state() -> str:
            described = client.request(ApiKeys.DESCRIBE_GROUPS, 5, req(ApiKeys.DESCRIBE_GROUPS, 5, groups=[group],
                                                                       include_authorized_operations=False))
            return described.groups[0].group_state

        wait_until(lambda: state() == "Empty", WAIT_S, "the group never became empty")
        # an empty group takes commits without a generation (as tools make them)
        commit = client.request(ApiKeys.OFFSET_COMMIT, 2, req(
            ApiKeys.OFFSET_COMMIT, 2, group_id=group, generation_id_or_member_epoch=-1, member_id="",
            retention_time=-1, topics=[{"name": TOPIC, "partitions": [
                {"partition_index": 2, "committed_offset": 3, "committed_metadata": None}]}]))
        assert commit.topics[0].partitions[0].error_code == Errors.NONE.error_code

        deleted_offsets = client.request(ApiKeys.OFFSET_DELETE, 0, req(
            ApiKeys.OFFSET_DELETE, 0, group_id=group, topics=[
                {"name": TOPIC, "partitions": [{"partition_index": 1}]},
                {"name": "nope", "partitions": [{"partition_index": 0}]}]))
        assert deleted_offsets.error_code == Errors.NONE.error_code
        errors = {(t.name, p.partition_index): p.error_code for t in deleted_offsets.topics for p in t.partitions}
        assert errors == {(TOPIC, 1): Errors.NONE.error_code, ("nope", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION.error_code}
        assert state() == "Empty"  # it still has the offset of partition 2

        deleted = client.request(ApiKeys.DELETE_GROUPS, 2, req(ApiKeys.DELETE_GROUPS, 2,
                                                               groups_names=[group, "never-existed"]))
        assert {r.group_id: r.error_code for r in deleted.results} == {
            group: Errors.NONE.error_code, "never-existed": Errors.GROUP_ID_NOT_FOUND.error_code}
        assert state() == "Dead"
        gone = client.request(ApiKeys.OFFSET_FETCH, 7, req(ApiKeys.OFFSET_FETCH, 7, group_id=group, topics=None,
                                                           require_stable=False))
        assert gone.error_code == Errors.NONE.error_code and gone.topics == ()


def test_bad_group_requests_get_kafkas_errors(broker):
    group = "bad-group"
    with RawClient(broker.port) as client:
        coordinator_ready(client, group)
        # JoinGroup: no protocol type, no protocols, an invalid session timeout, an unknown member id
        assert join(client, group, protocol_type="").error_code == Errors.INCONSISTENT_GROUP_PROTOCOL.error_code
        assert join(client, group, protocols=()).error_code == Errors.INCONSISTENT_GROUP_PROTOCOL.error_code
        assert join(client, group, session_timeout=1).error_code == Errors.INVALID_SESSION_TIMEOUT.error_code
        assert join(client, group, "who-am-i").error_code == Errors.UNKNOWN_MEMBER_ID.error_code
        assert join(client, "", version=3).error_code == Errors.INVALID_GROUP_ID.error_code

        # a v3 member joins at once (no MEMBER_ID_REQUIRED before v4) ...
        joined = join(client, group, version=3)
        assert joined.error_code == Errors.NONE.error_code
        member, generation = joined.member_id, joined.generation_id
        client.request(ApiKeys.SYNC_GROUP, 3, req(ApiKeys.SYNC_GROUP, 3, group_id=group, generation_id=generation,
                                                  member_id=member, group_instance_id=None, assignments=[]))
        # ... so a member speaking another protocol type or sharing no protocol is refused
        assert join(client, group, version=3, protocol_type="connect").error_code == \
            Errors.INCONSISTENT_GROUP_PROTOCOL.error_code
        assert join(client, group, version=3, protocols=(("roundrobin", b""),)).error_code == \
            Errors.INCONSISTENT_GROUP_PROTOCOL.error_code

        # Heartbeat: unknown member, stale and future generations
        assert heartbeat(client, group, "ghost", generation) == Errors.UNKNOWN_MEMBER_ID.error_code
        assert heartbeat(client, group, member, generation - 1) == Errors.ILLEGAL_GENERATION.error_code
        assert heartbeat(client, group, member, generation + 5) == Errors.ILLEGAL_GENERATION.error_code
        assert heartbeat(client, "no-such-group", member, generation) in (
            Errors.UNKNOWN_MEMBER_ID.error_code, Errors.NOT_COORDINATOR.error_code)
        assert heartbeat(client, group, member, generation) == Errors.NONE.error_code

        # SyncGroup v5 without protocol type/name
        missing = client.request(ApiKeys.SYNC_GROUP, 5, req(
            ApiKeys.SYNC_GROUP, 5, group_id=group, generation_id=generation, member_id=member, group_instance_id=None,
            protocol_type=None, protocol_name=None, assignments=[]))
        assert missing.error_code == Errors.INCONSISTENT_GROUP_PROTOCOL.error_code

        def commit(group_id: str, topic: str, partition: int, generation_id: int, member_id: str) -> int:
            response = client.request(ApiKeys.OFFSET_COMMIT, 8, req(
                ApiKeys.OFFSET_COMMIT, 8, group_id=group_id, generation_id_or_member_epoch=generation_id,
                member_id=member_id, group_instance_id=None, topics=[{"name": topic, "partitions": [
                    {"partition_index": partition, "committed_offset": 1, "committed_metadata": None}]}]))
            return response.topics[0].partitions[0].error_code

        # OffsetCommit: unknown topic or partition, unknown member, wrong generation, unknown group
        assert commit(group, "no-such-topic", 0, generation, member) == Errors.UNKNOWN_TOPIC_OR_PARTITION.error_code
        assert commit(group, TOPIC, 99, generation, member) == Errors.UNKNOWN_TOPIC_OR_PARTITION.error_code
        assert commit(group, TOPIC, 0, generation, "ghost") == Errors.UNKNOWN_MEMBER_ID.error_code
        assert commit(group, TOPIC, 0, generation + 1, member) == Errors.ILLEGAL_GENERATION.error_code
        assert commit("bad-group-unknown", TOPIC, 0, 3, "m") in (
            Errors.ILLEGAL_GENERATION.error_code, Errors.NOT_COORDINATOR.error_code,
            Errors.COORDINATOR_LOAD_IN_PROGRESS.error_code)
        assert commit(group, TOPIC, 0, generation, member) == Errors.NONE.error_code

        # OffsetFetch of a group nobody committed for: no offsets, no error
        fetched = client.request(ApiKeys.OFFSET_FETCH, 7, req(ApiKeys.OFFSET_FETCH, 7, group_id="bad-group-unused",
                                                               topics=[{"name": TOPIC, "partition_indexes": [0]}],
                                                               require_stable=False))
        assert fetched.error_code in (Errors.NONE.error_code, Errors.NOT_COORDINATOR.error_code,
                                      Errors.COORDINATOR_LOAD_IN_PROGRESS.error_code)
        if fetched.error_code == Errors.NONE.error_code:
            assert fetched.topics[0].partitions[0].committed_offset == -1
        else:
            assert fetched.topics == ()  # v2+: the error is top-level only

        # DeleteGroups of a group with a live member
        deleted = client.request(ApiKeys.DELETE_GROUPS, 2, req(ApiKeys.DELETE_GROUPS, 2, groups_names=[group]))
        assert deleted.results[0].error_code == Errors.NON_EMPTY_GROUP.error_code
        # OffsetDelete of a topic the group consumes
        refused = client.request(ApiKeys.OFFSET_DELETE, 0, req(
            ApiKeys.OFFSET_DELETE, 0, group_id=group, topics=[{"name": TOPIC, "partitions": [{"partition_index": 0}]}]))
        assert refused.topics[0].partitions[0].error_code == Errors.GROUP_SUBSCRIBED_TO_TOPIC.error_code

        # LeaveGroup v0: the member's error is the top-level one
        gone = client.request(ApiKeys.LEAVE_GROUP, 0, req(ApiKeys.LEAVE_GROUP, 0, group_id=group, member_id="ghost"))
        assert gone.error_code == Errors.UNKNOWN_MEMBER_ID.error_code

        # the group lost nothing, and the broker still serves everyone
        assert heartbeat(client, group, member, generation) == Errors.NONE.error_code
    assert committed(broker, group, [PARTITIONS[0]]) == {PARTITIONS[0]: 1}


def test_no_coordinator_while_too_few_brokers_for_the_offsets_topic(broker_factory):
    broker = broker_factory(overrides={"offsets.topic.replication.factor": "3"})
    broker.start()
    with RawClient(broker.port) as client:
        for _ in range(3):
            response = client.request(ApiKeys.FIND_COORDINATOR, 3, req(ApiKeys.FIND_COORDINATOR, 3, key="lonely",
                                                                       key_type=0))
            assert response.error_code == Errors.COORDINATOR_NOT_AVAILABLE.error_code
            assert int(response.node_id) == -1
    # Kafka 2.8 does not shrink the replication factor to fit: the topic is not created at all
    zk = broker.zk()
    try:
        assert not zk.exists("/brokers/topics/__consumer_offsets")
    finally:
        zk.stop()
        zk.close()
