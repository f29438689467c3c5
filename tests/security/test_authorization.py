"""ACL authorization end to end: two broker processes with kafka.security.authorizer.AclAuthorizer
and allow.everyone.if.no.acl.found=false on a real ZooKeeper, kafka-python clients logging in
with SASL PLAIN, ACLs managed with bin/kafka-acls.sh.

Brokers talk to each other (and the harness checks readiness) over a PLAINTEXT listener, whose
principal User:ANONYMOUS is a super user with User:admin; clients use the SASL_PLAINTEXT
listener as alice (producer ACLs), bob (prefixed consumer ACLs), carol and dave.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import (
    GroupAuthorizationFailedError,
    KafkaError,
    TopicAuthorizationFailedError,
)
from kio.schema.sasl_authenticate.v2 import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1 import SaslHandshakeRequest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from tests.integration.broker_harness import ROOT, BrokerProcess, RawClient, free_port, unique_chroot, wait_until

USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret",
         "dave": "dave-secret"}
JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
        + " ".join(f'user_{u}="{p}"' for u, p in USERS.items()) + ";")
WAIT = 30.0


@dataclass
class SecuredCluster:
    brokers: list[BrokerProcess]
    sasl_ports: list[int]
    command_configs: dict[str, str]

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{p}" for p in self.sasl_ports)

    def client_configs(self, user: str) -> dict:
        return {"bootstrap_servers": self.bootstrap, "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "PLAIN", "sasl_plain_username": user, "sasl_plain_password": USERS[user]}

    def acls(self, *args: str, user: str = "admin", check: bool = True) -> subprocess.CompletedProcess:
        """bin/kafka-acls.sh through the first broker's SASL listener, logged in as ``user``."""
        result = subprocess.run(
            [str(ROOT / "bin" / "kafka-acls.sh"), "--bootstrap-server", f"127.0.0.1:{self.sasl_ports[0]}",
             "--command-config", self.command_configs[user], *args],
            capture_output=True, text=True, timeout=120)
        if check:
            assert result.returncode == 0, result.stdout + result.stderr
        return result


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    chroot = unique_chroot("kafka-py-acl")
    brokers, sasl_ports = [], []
    for broker_id in (0, 1):
        sasl_port = free_port()
        broker = BrokerProcess(tmp_path_factory.mktemp(f"acl-broker{broker_id}"), zookeeper.connect_string, chroot,
                               broker_id)
        broker.overrides.update({
            "listeners": f"PLAINTEXT://127.0.0.1:{broker.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
            "inter.broker.listener.name": "PLAINTEXT",
            "sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
            "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
            "allow.everyone.if.no.acl.found": "false",
            "super.users": "User:admin;User:ANONYMOUS",
            "auto.create.topics.enable": "true",
            "offsets.topic.num.partitions": "2",
        })
        broker.write_config()
        brokers.append(broker)
        sasl_ports.append(sasl_port)
    for broker in brokers:
        broker.start(wait=False)
    for broker in brokers:
        broker.wait_started()
    configs_dir = tmp_path_factory.mktemp("acl-command-configs")
    command_configs = {}
    for user, password in USERS.items():
        path = configs_dir / f"{user}.properties"
        path.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                        f'username="{user}" password="{password}";\n')
        command_configs[user] = str(path)
    yield SecuredCluster(brokers, sasl_ports, command_configs)
    for broker in brokers:
        if broker.running:
            assert broker.stop() == 0, broker.tail()


def _topic(prefix: str = "t") -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def _admin(cluster: SecuredCluster, user: str = "admin") -> KafkaAdminClient:
    return KafkaAdminClient(request_timeout_ms=15000, **cluster.client_configs(user))


def _create_topics(cluster: SecuredCluster, assignments: dict[str, dict[int, list[int]]]) -> None:
    admin = _admin(cluster)
    try:
        admin.create_topics([NewTopic(name, replica_assignments=a) for name, a in assignments.items()])
    finally:
        admin.close()
    for name, assignment in assignments.items():
        wait_until(lambda: all(_metadata(cluster, "admin", i, [name])[name][0] == 0
                               and len(_metadata(cluster, "admin", i, [name])[name][1]) == len(assignment)
                               for i in range(len(cluster.brokers))),
                   WAIT, f"topic {name} led everywhere")


def _produce(cluster: SecuredCluster, user: str, topic: str, values: list[bytes]) -> None:
    producer = KafkaProducer(acks="all", request_timeout_ms=10000, max_block_ms=20000, **cluster.client_configs(user))
    try:
        for value in values:
            producer.send(topic, value).get(timeout=20)
    finally:
        producer.close(timeout=10)


def _consume(cluster: SecuredCluster, user: str, topic: str, group: str, count: int,
             timeout_ms: int = 20000) -> list[bytes]:
    consumer = KafkaConsumer(topic, group_id=group, auto_offset_reset="earliest", consumer_timeout_ms=timeout_ms,
                             request_timeout_ms=15000, **cluster.client_configs(user))
    values: list[bytes] = []
    try:
        for record in consumer:
            values.append(record.value)
            if len(values) == count:
                break
    finally:
        consumer.close()
    return values


def _sasl_raw(cluster: SecuredCluster, broker_index: int, user: str) -> RawClient:
    """A raw connection to one broker's SASL listener, logged in as ``user`` with PLAIN."""
    client = RawClient(cluster.sasl_ports[broker_index], timeout=15)
    handshake = client.request(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
    assert handshake.error_code == 0
    auth = client.request(ApiKeys.SASL_AUTHENTICATE, 2,
                          SaslAuthenticateRequest(auth_bytes=f"\0{user}\0{USERS[user]}".encode()))
    assert auth.error_code == 0, auth.error_message
    return client


def _metadata(cluster: SecuredCluster, user: str, broker_index: int, topics: list[str] | None,
              with_operations: bool = False) -> dict[str, tuple[int, list[int], int]]:
    """Metadata v9 from one broker: topic -> (error code, partitions, authorized operations)."""
    schema = request_schema(ApiKeys.METADATA, 9)
    module = sys.modules[schema.__module__]
    request = schema(topics=None if topics is None else tuple(module.MetadataRequestTopic(name=t) for t in topics),
                     allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
                     include_topic_authorized_operations=with_operations)
    with _sasl_raw(cluster, broker_index, user) as client:
        response = client.request(ApiKeys.METADATA, 9, request)
    return {t.name: (int(t.error_code), [int(p.partition_index) for p in t.partitions],
                     int(t.topic_authorized_operations)) for t in response.topics}


def _bits(*operations: int) -> int:
    return sum(1 << op for op in operations)


READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 3, 4, 5, 6, 7, 8


# ---------------------------------------------------------------------------- tests


def test_producer_acls_write_but_cannot_read_or_create(cluster) -> None:
    topic, other = _topic("orders-"), _topic("other-")
    _create_topics(cluster, {topic: {0: [0], 1: [1]}, other: {0: [0]}})
    added = cluster.acls("--add", "--allow-principal", "User:alice", "--producer", "--topic", topic)
    assert f"ResourcePattern(resourceType=TOPIC, name={topic}, patternType=LITERAL)" in added.stdout
    assert "(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)" in added.stdout
    wait_until(lambda: all(_metadata(cluster, "alice", i, [topic])[topic][0] == 0 for i in range(2)),
               WAIT, "alice's ACLs on both brokers")

    # writes to both partitions (one led by each broker)
    producer = KafkaProducer(acks="all", request_timeout_ms=10000, max_block_ms=20000,
                             **cluster.client_configs("alice"))
    try:
        for partition in (0, 1):
            producer.send(topic, b"from alice", partition=partition).get(timeout=20)
        # but not to a topic it has no ACL on
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send(other, b"refused").get(timeout=20)
    finally:
        producer.close(timeout=10)

    # cannot read what it wrote
    consumer = KafkaConsumer(request_timeout_ms=15000, **cluster.client_configs("alice"))
    try:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek(TopicPartition(topic, 0), 0)
        with pytest.raises(TopicAuthorizationFailedError):
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline:
                consumer.poll(timeout_ms=1000)
    finally:
        consumer.close()

    # cannot create topics other than its own: neither through CreateTopics nor by auto-creation
    admin = _admin(cluster, "alice")
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            admin.create_topics([NewTopic(_topic("new-"), 1, 1)])
    finally:
        admin.close()
    ghost = _topic("ghost-")
    schema = request_schema(ApiKeys.METADATA, 9)
    module = sys.modules[schema.__module__]
    with _sasl_raw(cluster, 0, "alice") as client:
        response = client.request(ApiKeys.METADATA, 9, schema(
            topics=(module.MetadataRequestTopic(name=ghost),), allow_auto_topic_creation=True,
            include_cluster_authorized_operations=False, include_topic_authorized_operations=False))
    assert [(t.name, int(t.error_code)) for t in response.topics] == [
        (ghost, Errors.TOPIC_AUTHORIZATION_FAILED.error_code)]
    assert ghost not in _metadata(cluster, "admin", 0, None)


def test_prefixed_consumer_acl_works_for_matching_topics_only(cluster) -> None:
    prefix = _topic("pay-") + "-"
    matching, unrelated = prefix + "eu", _topic("payroll-")
    _create_topics(cluster, {matching: {0: [1]}, unrelated: {0: [0]}})
    _produce(cluster, "admin", matching, [b"a", b"b", b"c"])
    _produce(cluster, "admin", unrelated, [b"x"])
    cluster.acls("--add", "--allow-principal", "User:bob", "--consumer", "--topic", prefix, "--group", "bob-",
                 "--resource-pattern-type", "prefixed")
    listed = cluster.acls("--list", "--topic", matching, "--resource-pattern-type", "match").stdout
    assert f"ResourcePattern(resourceType=TOPIC, name={prefix}, patternType=PREFIXED)" in listed
    wait_until(lambda: all(_metadata(cluster, "bob", i, [matching])[matching][0] == 0 for i in range(2)),
               WAIT, "bob's ACLs on both brokers")

    assert _consume(cluster, "bob", matching, "bob-readers", 3) == [b"a", b"b", b"c"]
    # the other topic, though it starts with "pay" too: kafka-python reports the refusal and reads nothing
    assert _consume(cluster, "bob", unrelated, "bob-readers", 1, timeout_ms=5000) == []
    for i in range(2):
        assert _metadata(cluster, "bob", i, [unrelated])[unrelated][0] == Errors.TOPIC_AUTHORIZATION_FAILED.error_code
    with pytest.raises(GroupAuthorizationFailedError):
        _consume(cluster, "bob", matching, "someone-elses-group", 1)
    # DescribeGroups with the operations bob may do on each group (Read, and Describe it implies)
    # (asked of both brokers: one of them coordinates the group)
    describe = request_schema(ApiKeys.DESCRIBE_GROUPS, 3)
    described = []
    for i in range(2):
        with _sasl_raw(cluster, i, "bob") as client:
            answer = client.request(ApiKeys.DESCRIBE_GROUPS, 3, describe(
                groups=("bob-readers", "someone-elses-group"), include_authorized_operations=True))
        by_group = {g.group_id: g for g in answer.groups}
        assert int(by_group["someone-elses-group"].error_code) == Errors.GROUP_AUTHORIZATION_FAILED.error_code
        described.append((int(by_group["bob-readers"].error_code), int(by_group["bob-readers"].authorized_operations)))
    assert (0, _bits(READ, DESCRIBE)) in described


def test_super_user_does_everything(cluster) -> None:
    topic = _topic("admin-")
    admin = _admin(cluster)
    try:
        admin.create_topics([NewTopic(topic, 2, 1)])
        wait_until(lambda: _metadata(cluster, "admin", 0, [topic])[topic][0] == 0, WAIT, "topic created")
        _produce(cluster, "admin", topic, [b"1", b"2"])
        assert sorted(_consume(cluster, "admin", topic, "admin-group", 2)) == [b"1", b"2"]
        assert "admin-group" in repr(admin.list_groups())
        admin.delete_groups(["admin-group"])
        ops = _metadata(cluster, "admin", 1, [topic], with_operations=True)[topic][2]
        assert ops == _bits(READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, 10, 11)
        admin.delete_topics([topic])
        wait_until(lambda: topic not in _metadata(cluster, "admin", 0, None), WAIT, "topic deleted")
    finally:
        admin.close()
    # and manages ACLs (a non-super user may not)
    refused = cluster.acls("--list", user="carol", check=False)
    assert refused.returncode == 1
    assert "ClusterAuthorizationException" in refused.stderr


def test_removing_an_acl_takes_effect_on_every_broker(cluster) -> None:
    topic = _topic("shared-")
    _create_topics(cluster, {topic: {0: [0], 1: [1]}})
    cluster.acls("--add", "--allow-principal", "User:carol", "--operation", "Read", "--topic", topic)
    wait_until(lambda: all(_metadata(cluster, "carol", i, [topic])[topic][0] == 0 for i in range(2)),
               WAIT, "carol's ACL on both brokers")
    removed_at = time.monotonic()
    cluster.acls("--remove", "--force", "--allow-principal", "User:carol", "--operation", "Read", "--topic", topic)
    refused = Errors.TOPIC_AUTHORIZATION_FAILED.error_code
    for i in range(2):
        wait_until(lambda: _metadata(cluster, "carol", i, [topic])[topic][0] == refused, 15.0,
                   f"carol refused by broker {i}")
    assert time.monotonic() - removed_at < 15.0
    assert "carol" not in cluster.acls("--list", "--topic", topic).stdout


def test_metadata_hides_topics_the_principal_may_not_describe(cluster) -> None:
    visible, hidden = _topic("visible-"), _topic("hidden-")
    _create_topics(cluster, {visible: {0: [0]}, hidden: {0: [1]}})
    cluster.acls("--add", "--allow-principal", "User:dave", "--operation", "Describe", "--topic", visible)
    wait_until(lambda: all(_metadata(cluster, "dave", i, [visible])[visible][0] == 0 for i in range(2)),
               WAIT, "dave's ACL on both brokers")
    for i in range(2):
        everything = _metadata(cluster, "dave", i, None, with_operations=True)
        assert visible in everything and hidden not in everything
        assert everything[visible][2] == _bits(DESCRIBE)
        # a topic it may not describe looks the same whether it exists or not
        named = _metadata(cluster, "dave", i, [hidden, "no-such-topic", visible])
        refused = Errors.TOPIC_AUTHORIZATION_FAILED.error_code
        assert named[hidden] == (refused, [], named[hidden][2])
        assert named["no-such-topic"][0] == refused
        assert named[visible][0] == 0
    # the admin sees both
    assert {visible, hidden} <= set(_metadata(cluster, "admin", 0, None))


# ---- bad input to the ACL APIs (raw requests over PLAINTEXT, whose User:ANONYMOUS is a super user)


def _create_acls(cluster: SecuredCluster, *creations: dict) -> list[tuple[int, str | None]]:
    schema = request_schema(ApiKeys.CREATE_ACLS, 1)
    module = sys.modules[schema.__module__]
    defaults = dict(resource_type=2, resource_name="t", resource_pattern_type=3, principal="User:x", host="*",
                    operation=READ, permission_type=3)
    request = schema(creations=tuple(module.AclCreation(**{**defaults, **c}) for c in creations))
    with RawClient(cluster.brokers[0].port) as client:
        response = client.request(ApiKeys.CREATE_ACLS, 1, request)
    return [(int(r.error_code), r.error_message) for r in response.results]


def test_bad_acl_requests_get_kafkas_errors(cluster) -> None:
    invalid = Errors.INVALID_REQUEST.error_code
    unknown = Errors.UNKNOWN_SERVER_ERROR.error_code
    # a resource type no enum has: that creation fails, the valid one next to it is created
    assert _create_acls(cluster, {"resource_type": 99}, {"resource_name": "ok-" + _topic()}) == [
        (invalid, "Failed to create ACL"), (0, None)]
    # a principal that is not type:name is refused by the authorizer
    assert _create_acls(cluster, {"principal": "alice"}) == [(unknown, None)]
    # ANY where a binding needs a value fails the whole request, as Kafka's AclBinding constructor does
    for bad in ({"resource_type": 1}, {"operation": 1}, {"permission_type": 1}, {"resource_pattern_type": 1},
                {"resource_pattern_type": 2}):
        assert _create_acls(cluster, bad, {"resource_name": "never-" + _topic()}) == [(unknown, None)] * 2
    assert _create_acls(cluster, {"resource_type": 4, "resource_name": "my-cluster"}) == [
        (invalid, "The only valid name for the CLUSTER resource is kafka-cluster")]
    assert _create_acls(cluster, {"resource_name": ""}) == [(invalid, "Invalid empty resource name")]
    assert "never-" not in cluster.acls("--list").stdout

    # UNKNOWN (0) codes make a request Kafka cannot build: the connection is closed
    schema = request_schema(ApiKeys.CREATE_ACLS, 1)
    module = sys.modules[schema.__module__]
    with RawClient(cluster.brokers[0].port, timeout=10) as client:
        client.send(ApiKeys.CREATE_ACLS, 1, schema(creations=(module.AclCreation(
            resource_type=0, resource_name="t", resource_pattern_type=3, principal="User:x", host="*",
            operation=READ, permission_type=3),)))
        assert client.closed_by_broker()
    describe = request_schema(ApiKeys.DESCRIBE_ACLS, 1)
    with RawClient(cluster.brokers[0].port, timeout=10) as client:
        client.send(ApiKeys.DESCRIBE_ACLS, 1, describe(
            resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1, principal_filter=None,
            host_filter=None, operation=0, permission_type=1))
        assert client.closed_by_broker()
    # a resource type no enum has matches nothing
    with RawClient(cluster.brokers[0].port, timeout=10) as client:
        response = client.request(ApiKeys.DESCRIBE_ACLS, 1, describe(
            resource_type_filter=99, resource_name_filter=None, pattern_type_filter=1, principal_filter=None,
            host_filter=None, operation=1, permission_type=1))
    assert (int(response.error_code), response.resources) == (0, ())
    # the broker carries on
    assert cluster.acls("--list").returncode == 0


def test_leader_elections_need_alter_on_the_cluster(cluster) -> None:
    topic = _topic("elect")
    _create_topics(cluster, {topic: {0: [0, 1]}})

    def elect(user: str) -> tuple[int, dict]:
        admin = _admin(cluster, user)
        try:
            response = admin.elect_leaders(0, {topic: [0]}, timeout_ms=10000, raise_errors=False)
        finally:
            admin.close()
        return int(response.error_code), {(r.topic, int(p.partition_id)): int(p.error_code)
                                          for r in response.replica_election_results for p in r.partition_result}

    authorization_failed = Errors.CLUSTER_AUTHORIZATION_FAILED.code
    assert elect("dave") == (authorization_failed, {(topic, 0): authorization_failed})
    tool = [str(ROOT / "bin" / "kafka-leader-election.sh"), "--bootstrap-server", cluster.bootstrap,
            "--election-type", "preferred", "--all-topic-partitions", "--admin.config", cluster.command_configs["dave"]]
    refused = subprocess.run(tool, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1
    assert refused.stdout == refused.stderr == "Not authorized to perform leader election\n"

    cluster.acls("--add", "--allow-principal", "User:dave", "--operation", "Alter", "--cluster")
    try:
        wait_until(lambda: elect("dave")[0] == 0, WAIT, "Alter on the cluster lets dave elect leaders")
        # nothing to elect: the partition's preferred replica leads
        assert elect("dave") == (0, {(topic, 0): Errors.ELECTION_NOT_NEEDED.code})
        allowed = subprocess.run(tool, capture_output=True, text=True, timeout=120)
        assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, "", "")
    finally:
        cluster.acls("--remove", "--force", "--allow-principal", "User:dave", "--operation", "Alter", "--cluster")


def test_log_dirs_need_describe_and_alter_on_the_cluster(cluster) -> None:
    from kafka import TopicPartitionReplica
    from kafka.errors import ClusterAuthorizationFailedError, NoError

    topic = _topic("dirs")
    _create_topics(cluster, {topic: {0: [0]}})
    log_dir = str(cluster.brokers[0].log_dir)
    replica = TopicPartitionReplica(topic, 0, 0)
    tool = [str(ROOT / "bin" / "kafka-log-dirs.sh"), "--bootstrap-server", cluster.bootstrap, "--describe",
            "--broker-list", "0", "--command-config", cluster.command_configs["dave"]]

    def described() -> list:
        done = subprocess.run(tool, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[2])["brokers"][0]["logDirs"]

    def alter() -> dict:
        admin = _admin(cluster, "dave")
        try:
            return admin.alter_replica_log_dirs({replica: log_dir})
        finally:
            admin.close()

    # without Describe the answer lists no dirs, without Alter every partition is refused
    assert described() == []
    assert alter() == {replica: ClusterAuthorizationFailedError}

    cluster.acls("--add", "--allow-principal", "User:dave", "--operation", "Describe", "--operation", "Alter",
                 "--cluster")
    try:
        wait_until(lambda: [d["logDir"] for d in described()] == [log_dir], WAIT,
                   "Describe on the cluster lets dave see the log dirs")
        # Alter lets dave move the replica; to the dir it is in, nothing moves
        wait_until(lambda: alter() == {replica: NoError}, WAIT, "Alter on the cluster lets dave move replicas")
    finally:
        cluster.acls("--remove", "--force", "--allow-principal", "User:dave", "--operation", "Describe",
                     "--operation", "Alter", "--cluster")


def test_reassignments_need_alter_and_describe_on_the_cluster(cluster) -> None:
    from kafka.errors import ClusterAuthorizationFailedError, NoReassignmentInProgressError

    topic = _topic("moved")
    _create_topics(cluster, {topic: {0: [0]}})
    partition = TopicPartition(topic, 0)

    def as_dave(call):
        admin = _admin(cluster, "dave")
        try:
            return call(admin)
        finally:
            admin.close()

    with pytest.raises(ClusterAuthorizationFailedError):
        as_dave(lambda admin: admin.alter_partition_reassignments({partition: [1]}))
    with pytest.raises(ClusterAuthorizationFailedError):
        as_dave(lambda admin: admin.list_partition_reassignments())
    # refused before the controller saw it: nothing moved
    admin = _admin(cluster)
    try:
        [described] = admin.describe_topics([topic])
    finally:
        admin.close()
    assert [p["replica_nodes"] for p in described["partitions"]] == [[0]]

    cluster.acls("--add", "--allow-principal", "User:dave", "--operation", "Alter", "--operation", "Describe",
                 "--cluster")
    try:
        def listed() -> bool:
            try:
                return as_dave(lambda admin: admin.list_partition_reassignments()) == {}
            except ClusterAuthorizationFailedError:  # the ACL has not reached the controller yet
                return False

        wait_until(listed, WAIT, "Describe on the cluster lets dave list reassignments")
        # allowed: cancelling what is not moving gets the controller's own answer
        assert as_dave(lambda admin: admin.alter_partition_reassignments({partition: None})) == {
            partition: NoReassignmentInProgressError}
    finally:
        cluster.acls("--remove", "--force", "--allow-principal", "User:dave", "--operation", "Alter",
                     "--operation", "Describe", "--cluster")


def test_describe_transactions_needs_describe_on_the_transactional_id(cluster) -> None:
    """Kafka 3.0's rules: Describe on the id, and only the topics the principal may describe.
    The transaction itself (admin's) runs across both brokers, its partition leader verifying
    with the coordinator over the inter-broker listener."""
    topic = _topic("described")
    _create_topics(cluster, {topic: {0: [0]}})
    transactional_id = f"described-{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(transactional_id=transactional_id, request_timeout_ms=15000,
                             **cluster.client_configs("admin"))
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"open", partition=0).get(timeout=20)  # verified, left open

        with _sasl_raw(cluster, 0, "admin") as client:
            found = client.request(ApiKeys.FIND_COORDINATOR, 3, request_schema(ApiKeys.FIND_COORDINATOR, 3)(
                key=transactional_id, key_type=1))
        assert found.error_code == 0
        coordinator_index = [b.broker_id for b in cluster.brokers].index(found.node_id)

        def describe(user: str):
            schema = request_schema(ApiKeys.DESCRIBE_TRANSACTIONS, 0)
            with _sasl_raw(cluster, coordinator_index, user) as client:
                [state] = client.request(ApiKeys.DESCRIBE_TRANSACTIONS, 0,
                                         schema(transactional_ids=(transactional_id,))).transaction_states
            return (Errors.for_code(int(state.error_code)), str(state.transaction_state),
                    [(str(t.topic), [int(p) for p in t.partitions]) for t in state.topics])

        assert describe("admin") == (Errors.NONE, "Ongoing", [(topic, [0])])
        assert describe("dave") == (Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "", [])
        cluster.acls("--add", "--allow-principal", "User:dave", "--operation", "Describe", "--transactional-id",
                     transactional_id)
        try:
            wait_until(lambda: describe("dave") == (Errors.NONE, "Ongoing", []), WAIT,
                       "Describe on the id lets dave describe it, without the topic he may not describe")
            cluster.acls("--add", "--allow-principal", "User:dave", "--operation", "Describe", "--topic", topic)
            wait_until(lambda: describe("dave") == (Errors.NONE, "Ongoing", [(topic, [0])]), WAIT,
                       "Describe on the topic lists it")
        finally:
            cluster.acls("--remove", "--force", "--allow-principal", "User:dave", "--operation", "Describe",
                         "--transactional-id", transactional_id)
            cluster.acls("--remove", "--force", "--allow-principal", "User:dave", "--operation", "Describe",
                         "--topic", topic)
        producer.abort_transaction()
    finally:
        producer.close(timeout=10)
