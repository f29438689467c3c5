"""Client quotas against a real broker process: a kafka-python producer and a confluent-kafka
consumer held to their byte rates, throttle times as Kafka computes them on raw requests,
quota changes at runtime, Kafka's precedence of quota entities, request_percentage, and
DescribeClientQuotas / AlterClientQuotas with their errors.

The broker samples quota rates over ``quota.window.num=2`` windows of a second. A client that
always has data to send is held to its rate on average, with a burst each time a window
rolls over; with two windows that burst is a second's worth, so QUOTA_TEST_SECONDS (default
12, after 2 s of warm-up) measure the rate within a few percent. With Kafka's default eleven
windows the bursts are ten seconds' worth and a run would need minutes to say the same.
"""
from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import encode_request, request_schema
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.protocol.entities import build_entity
from tests.integration.broker_harness import ROOT, RawClient, wait_until
from tests.integration.conftest import broker_factory  # noqa: F401 - the fixture, for a broker of its own
from tests.integration.conftest import new_broker

RATE = 1048576  # bytes/s: producer_byte_rate and consumer_byte_rate of the rate tests
RUN_SECONDS = float(os.environ.get("QUOTA_TEST_SECONDS", "12"))
WARM_UP_SECONDS = 2.0
VALUE = b"v" * 10_000
BACKLOG = 2 * RATE  # what the producer may have sent but not had acknowledged


pytestmark = pytest.mark.metadata_modes("zookeeper", "kraft")


@pytest.fixture(scope="module")
def broker(request, metadata_mode, tmp_path_factory):
    b = new_broker(request, metadata_mode, tmp_path_factory.mktemp("quota-broker"),
                   overrides={"quota.window.num": "2", "quota.window.size.seconds": "1",
                              # Clients from 127.0.0.2 only (the tests' other clients use 127.0.0.1).
                              "max.connections.per.ip.overrides": "127.0.0.2:2"})
    b.start()
    yield b
    if b.running:
        assert b.stop() == 0, b.tail()


def req(api: ApiKeys, version: int, **values):
    cls = request_schema(api, version)
    return build_entity(cls, values)


def alter(broker, entries, validate_only: bool = False):
    """AlterClientQuotas v1: ``entries`` are ({entity type: name or None}, {key: value or None})."""
    body = req(ApiKeys.ALTER_CLIENT_QUOTAS, 1, validate_only=validate_only, entries=[
        {"entity": [{"entity_type": t, "entity_name": n} for t, n in entity.items()],
         "ops": [{"key": k, "value": 0.0 if v is None else float(v), "remove": v is None} for k, v in ops.items()]}
        for entity, ops in entries])
    with RawClient(broker.port) as client:
        return client.request(ApiKeys.ALTER_CLIENT_QUOTAS, 1, body)


def alter_ok(broker, entries) -> None:
    response = alter(broker, entries)
    assert [int(e.error_code) for e in response.entries] == [0] * len(entries), response


def describe(broker, components, strict: bool = False, version: int = 1):
    """DescribeClientQuotas: ``components`` are (entity type, match type, match)."""
    body = req(ApiKeys.DESCRIBE_CLIENT_QUOTAS, version, strict=strict, components=[
        {"entity_type": t, "match_type": m, "match": n} for t, m, n in components])
    with RawClient(broker.port) as client:
        return client.request(ApiKeys.DESCRIBE_CLIENT_QUOTAS, version, body)


def described(response) -> dict:
    assert int(response.error_code) == 0, response
    return {tuple((e.entity_type, e.entity_name) for e in entry.entity): {v.key: float(v.value) for v in entry.values}
            for entry in response.entries}


def create_topic(broker, name: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(name, 1, 1)])
    finally:
        admin.close()


# ---------------------------------------------------------------------------- raw produce probes

PROBE_TOPIC = "quota-probes"
PROBE_BATCH = build_batch([SimpleRecord(None, b"p" * 200_000, 1_700_000_000_000)])


def probe(broker, client_id: str) -> tuple[int, int]:
    """One 200 KB produce from a new connection; (its size as the broker counts it, the
    throttle time of its answer). The connection is closed at once: it stays muted anyway."""
    body = req(ApiKeys.PRODUCE, 8, transactional_id=None, acks=1, timeout=30000,
               topic_data=[{"name": PROBE_TOPIC, "partition_data": [{"index": 0, "records": PROBE_BATCH}]}])
    size = len(encode_request(RequestHeader.for_request(ApiKeys.PRODUCE, 8, 1, client_id), body)) - 4
    with RawClient(broker.port, client_id=client_id) as client:
        response = client.request(ApiKeys.PRODUCE, 8, body)
    [topic] = response.responses
    [partition] = topic.partition_responses
    assert int(partition.error_code) == 0, partition
    return size, round(response.throttle_time.total_seconds() * 1000)


def expected_throttle_ms(size: int, bound: float) -> int:
    """Kafka's throttle time for one request of ``size`` bytes on a fresh sensor: the rate is
    measured over (windows - 1) = 1 s, and (O - T) / T x 1 s brings it back to T."""
    return int((size - bound) / bound * 1000 + 0.5)


def throttled_as(broker, client_id: str, bound: float) -> bool:
    """A probe from a client id the broker has not measured yet is throttled exactly as
    ``bound`` says."""
    size, throttle = probe(broker, client_id)
    return abs(throttle - expected_throttle_ms(size, bound)) <= 1


_markers = iter(range(10**6))


def sync(broker) -> None:
    """Wait until the broker has applied every quota change made so far: changes reach it in
    order (through /config/changes, or as records of the metadata log in KRaft mode), so once it logs applying a new marker quota, the earlier
    ones are in force. (Probing for the marker instead would be measured against whatever
    quota applies to an unknown client until then.)"""
    marker = f"sync-{next(_markers)}"
    alter_ok(broker, [({"user": "ANONYMOUS", "client-id": marker}, {"producer_byte_rate": 1})])
    line = f"Changing Produce quota for user ANONYMOUS client-id {marker} to 1.0"
    wait_until(lambda: line in broker.output(), 30, f"the broker never logged {line!r}", interval=0.05)


@pytest.fixture(scope="module", autouse=True)
def probe_topic(broker):
    create_topic(broker, PROBE_TOPIC)


# ---------------------------------------------------------------------------- rates

def test_producer_is_held_to_producer_byte_rate_and_told_its_throttle_time(broker) -> None:
    create_topic(broker, "quota-produce")
    alter_ok(broker, [({"client-id": "quota-producer"}, {"producer_byte_rate": RATE})])
    sync(broker)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, client_id="quota-producer", acks=1,
                             linger_ms=5, batch_size=64 * 1024)
    acked = [0]
    sent = 0

    def on_ack(_metadata) -> None:
        acked[0] += len(VALUE)

    try:
        start = time.monotonic()
        measured_from = measured_bytes = None
        deadline = start + WARM_UP_SECONDS + RUN_SECONDS
        while time.monotonic() < deadline:
            if measured_from is None and time.monotonic() - start >= WARM_UP_SECONDS:
                measured_from, measured_bytes = time.monotonic(), acked[0]
            if sent - acked[0] >= BACKLOG:
                time.sleep(0.002)  # always more than the quota allows waiting, no more
                continue
            producer.send("quota-produce", VALUE).add_callback(on_ack)
            sent += len(VALUE)
        rate = (acked[0] - measured_bytes) / (time.monotonic() - measured_from)
        throttle_max = producer.metrics()["producer-node-metrics.node-0"]["throttle-time-max"]
    finally:
        producer.close(timeout=30)
    assert 0.8 * RATE <= rate <= 1.2 * RATE, f"{rate:.0f} B/s against a quota of {RATE} B/s"
    assert throttle_max > 0


def test_consumer_is_held_to_consumer_byte_rate(broker) -> None:
    topic = "quota-consume"
    create_topic(broker, topic)
    needed = int(RATE * (WARM_UP_SECONDS + RUN_SECONDS) * 1.5)
    # Small batches and fetches: a throttled fetch is answered empty, and the pause it gets
    # also counts the bytes it would have carried (as in Kafka), so a consumer fetching a large
    # share of its quota at once gets noticeably less than the quota.
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1, linger_ms=5, batch_size=32 * 1024)
    try:
        for _ in range(needed // len(VALUE) + 1):
            producer.send(topic, VALUE)
        producer.flush(timeout=120)
    finally:
        producer.close()
    alter_ok(broker, [({"client-id": "quota-consumer"}, {"consumer_byte_rate": RATE})])
    sync(broker)

    # What the quota counts is the bytes of the fetch answers, partial batches at their ends
    # included: librdkafka's statistics say how many it received (rxbytes), and when.
    import json

    from confluent_kafka import Consumer, TopicPartition as CkTopicPartition

    snapshots: list[tuple[float, int]] = []

    def on_stats(text: str) -> None:
        stats = json.loads(text)
        rx = sum(b["rxbytes"] for b in stats["brokers"].values() if b.get("nodeid", -1) >= 0)
        snapshots.append((stats["ts"] / 1e6, rx))

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "client.id": "quota-consumer",
                         "group.id": "quota-consumer", "enable.auto.commit": False,
                         "fetch.max.bytes": 64 * 1024, "max.partition.fetch.bytes": 64 * 1024,
                         "message.max.bytes": 64 * 1024, "receive.message.max.bytes": 2 * 64 * 1024 + 512,
                         "statistics.interval.ms": 500, "stats_cb": on_stats})
    consumer.assign([CkTopicPartition(topic, 0, 0)])
    received = 0
    first_data = None
    try:
        deadline = time.monotonic() + 60 + WARM_UP_SECONDS + RUN_SECONDS
        while time.monotonic() < deadline:
            for message in consumer.consume(num_messages=100, timeout=0.2):
                if message.error() is None:
                    received += len(message.value())
            if first_data is None and received:
                first_data = len(snapshots)
            if first_data is not None and snapshots and (
                    snapshots[-1][0] - snapshots[first_data][0] >= WARM_UP_SECONDS + RUN_SECONDS):
                break
        assert first_data is not None, "the consumer never got going"
    finally:
        consumer.close()
    start_at = next(i for i in range(first_data, len(snapshots))
                    if snapshots[i][0] - snapshots[first_data][0] >= WARM_UP_SECONDS)
    (t0, rx0), (t1, rx1) = snapshots[start_at], snapshots[-1]
    rate = (rx1 - rx0) / (t1 - t0)
    assert received < needed, "the consumer read everything: the run measured nothing"
    assert 0.8 * RATE <= rate <= 1.2 * RATE, f"{rate:.0f} B/s against a quota of {RATE} B/s"


# ---------------------------------------------------------------------------- throttle arithmetic

def test_quota_changes_apply_at_runtime(broker) -> None:
    try:
        # A default, then lowered, then removed: each fresh client id shows the bound in force.
        alter_ok(broker, [({"client-id": None}, {"producer_byte_rate": 50_000})])
        sync(broker)
        assert throttled_as(broker, "runtime-1", 50_000)
        alter_ok(broker, [({"client-id": None}, {"producer_byte_rate": 25_000})])
        sync(broker)
        assert throttled_as(broker, "runtime-2", 25_000)
        # A client's own quota, changed while the broker measures that client.
        alter_ok(broker, [({"client-id": "runtime-own"}, {"producer_byte_rate": 50_000})])
        sync(broker)
        assert throttled_as(broker, "runtime-own", 50_000)
        alter_ok(broker, [({"client-id": "runtime-own"}, {"producer_byte_rate": 10**12})])
        sync(broker)
        assert probe(broker, "runtime-own")[1] == 0
        alter_ok(broker, [({"client-id": "runtime-own"}, {"producer_byte_rate": 1000})])
        sync(broker)
        assert probe(broker, "runtime-own")[1] > 10**5
        alter_ok(broker, [({"client-id": None}, {"producer_byte_rate": None})])
        sync(broker)
        assert probe(broker, "runtime-3")[1] == 0
    finally:
        alter_ok(broker, [({"client-id": None}, {"producer_byte_rate": None}),
                          ({"client-id": "runtime-own"}, {"producer_byte_rate": None})])


def test_precedence_user_client_over_user_over_client_over_default(broker) -> None:
    """A PLAINTEXT client is User:ANONYMOUS; each probe comes from a client id the broker has not
    measured, so the bound of the quota entity that applies shows in its exact throttle time."""
    user = "ANONYMOUS"
    try:
        alter_ok(broker, [
            ({"client-id": None}, {"producer_byte_rate": 25_000}),
            ({"client-id": "prec-c"}, {"producer_byte_rate": 40_000}),
            ({"client-id": "prec-u"}, {"producer_byte_rate": 40_000}),
            ({"client-id": "prec-uc"}, {"producer_byte_rate": 40_000}),
            ({"user": user, "client-id": "prec-uc"}, {"producer_byte_rate": 50_000}),
        ])
        sync(broker)
        assert throttled_as(broker, "prec-uc", 50_000)  # <user, client-id> over <client-id>
        assert throttled_as(broker, "prec-c", 40_000)  # <client-id> over the default
        assert throttled_as(broker, "prec-d", 25_000)  # the <client-id> default
        alter_ok(broker, [({"user": user}, {"producer_byte_rate": 100_000}),
                          ({"user": user, "client-id": "prec-uc2"}, {"producer_byte_rate": 50_000}),
                          ({"client-id": "prec-uc2"}, {"producer_byte_rate": 40_000})])
        sync(broker)
        assert throttled_as(broker, "prec-u", 100_000)  # <user> over <client-id> and its default
        assert throttled_as(broker, "prec-uc2", 50_000)  # <user, client-id> over <user>
        # The user quota is one rate for all its clients without their own <user, client-id>
        # quota: prec-u's 200 KB count against the next client of the user too.
        assert probe(broker, "prec-u2")[1] > expected_throttle_ms(200_000, 100_000)
    finally:
        alter_ok(broker, [({"user": user}, {"producer_byte_rate": None}),
                          ({"user": user, "client-id": "prec-uc"}, {"producer_byte_rate": None}),
                          ({"user": user, "client-id": "prec-uc2"}, {"producer_byte_rate": None}),
                          ({"client-id": None}, {"producer_byte_rate": None}),
                          ({"client-id": "prec-c"}, {"producer_byte_rate": None}),
                          ({"client-id": "prec-u"}, {"producer_byte_rate": None}),
                          ({"client-id": "prec-uc"}, {"producer_byte_rate": None}),
                          ({"client-id": "prec-uc2"}, {"producer_byte_rate": None})])
        sync(broker)


def test_request_percentage_throttles_any_request(broker) -> None:
    """request_percentage=0.001: 10 us of handler time per second; any request is over it, and
    the answer says for how long the client is throttled (at most one quota window)."""
    alter_ok(broker, [({"client-id": "req-quota"}, {"request_percentage": 0.001})])
    sync(broker)
    body = request_schema(ApiKeys.API_VERSIONS, 3)(client_software_name="t", client_software_version="1")
    with RawClient(broker.port, client_id="req-quota") as client:
        throttles = [round(client.request(ApiKeys.API_VERSIONS, 3, body).throttle_time.total_seconds() * 1000)
                     for _ in range(3)]
    assert all(0 < t <= 1000 for t in throttles), throttles
    with RawClient(broker.port, client_id="req-free") as client:
        assert client.request(ApiKeys.API_VERSIONS, 3, body).throttle_time.total_seconds() == 0
    alter_ok(broker, [({"client-id": "req-quota"}, {"request_percentage": None})])


# ---------------------------------------------------------------------------- the admin APIs

def test_alter_and_describe_client_quotas_round_trip(broker) -> None:
    alter_ok(broker, [
        ({"user": "alice"}, {"producer_byte_rate": 1024, "consumer_byte_rate": 2048, "request_percentage": 12.5}),
        ({"user": "alice", "client-id": "app"}, {"producer_byte_rate": 4096}),
        ({"user": None}, {"consumer_byte_rate": 8192}),
        ({"client-id": "app"}, {"request_percentage": 50}),
        ({"client-id": None, "user": None}, {"producer_byte_rate": 16384}),
        ({"user": "CN=bob,O=example"}, {"producer_byte_rate": 32768}),
    ])
    try:
        exact_alice = described(describe(broker, [("user", 0, "alice")], strict=True))
        assert exact_alice == {(("user", "alice"),): {
            "producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0, "request_percentage": 12.5}}
        # Not strict: alice's entities with or without a client id.
        alice = described(describe(broker, [("user", 0, "alice")]))
        assert alice[(("user", "alice"), ("client-id", "app"))] == {"producer_byte_rate": 4096.0}
        assert set(alice) == {(("user", "alice"),), (("user", "alice"), ("client-id", "app"))}
        # The default user (match type 1), strictly: <default> alone, not <default>/<default>.
        assert described(describe(broker, [("user", 1, None)], strict=True)) == {
            (("user", None),): {"consumer_byte_rate": 8192.0}}
        both_defaults = described(describe(broker, [("user", 1, None), ("client-id", 1, None)], strict=True))
        assert both_defaults == {(("user", None), ("client-id", None)): {"producer_byte_rate": 16384.0}}
        # Any named client id (match type 2), strictly.
        clients = described(describe(broker, [("client-id", 2, None)], strict=True))
        assert clients[(("client-id", "app"),)] == {"request_percentage": 50.0}
        assert all(dict(entity).keys() == {"client-id"} and dict(entity)["client-id"] is not None
                   for entity in clients)
        # A user name with characters ZooKeeper paths cannot hold comes back as given.
        assert described(describe(broker, [("user", 0, "CN=bob,O=example")], strict=True)) == {
            (("user", "CN=bob,O=example"),): {"producer_byte_rate": 32768.0}}
        # validate_only changes nothing.
        response = alter(broker, [({"user": "alice"}, {"producer_byte_rate": 1})], validate_only=True)
        assert int(response.entries[0].error_code) == 0
        assert described(describe(broker, [("user", 0, "alice")], strict=True))[(("user", "alice"),)][
            "producer_byte_rate"] == 1024.0
        # Removing every key leaves no entity to describe; removing an absent key is no error.
        alter_ok(broker, [({"user": "alice"}, {"producer_byte_rate": None, "consumer_byte_rate": None,
                                               "request_percentage": None, "controller_mutation_rate": None})])
        assert described(describe(broker, [("user", 0, "alice")], strict=True)) == {}
        # The version 0 API answers the same.
        assert described(describe(broker, [("client-id", 0, "app")], strict=True, version=0)) == {
            (("client-id", "app"),): {"request_percentage": 50.0}}
    finally:
        alter_ok(broker, [
            ({"user": "alice", "client-id": "app"}, {"producer_byte_rate": None}),
            ({"user": None}, {"consumer_byte_rate": None}),
            ({"client-id": "app"}, {"request_percentage": None}),
            ({"client-id": None, "user": None}, {"producer_byte_rate": None}),
            ({"user": "CN=bob,O=example"}, {"producer_byte_rate": None}),
        ])


@pytest.mark.parametrize("entity, ops, error, message", [
    ({"user": "eve"}, {"no_such_quota": 10}, Errors.INVALID_REQUEST, "Invalid configuration key no_such_quota"),
    ({"user": "eve"}, {"SCRAM-SHA-256": 10}, Errors.INVALID_REQUEST, "Invalid configuration key SCRAM-SHA-256"),
    ({"user": "eve"}, {"producer_byte_rate": -5}, Errors.INVALID_REQUEST, "must be greater than 0"),
    ({"user": "eve"}, {"request_percentage": 0}, Errors.INVALID_REQUEST, "must be greater than 0"),
    ({"user": "eve"}, {"producer_byte_rate": 1.5}, Errors.INVALID_REQUEST, "must be a LONG value"),
    ({"group": "g"}, {"producer_byte_rate": 10}, Errors.INVALID_REQUEST, "Unhandled client quota entity type: group"),
    ({}, {"producer_byte_rate": 10}, Errors.INVALID_REQUEST, "Invalid empty client quota entity"),
    ({"user": ""}, {"producer_byte_rate": 10}, Errors.INVALID_REQUEST, "Empty user not supported"),
    ({"ip": "127.0.0.1", "user": "eve"}, {"connection_creation_rate": 10}, Errors.INVALID_REQUEST,
     "Invalid quota entity combination"),
    ({"ip": "127.0.0.1"}, {"producer_byte_rate": 10}, Errors.INVALID_REQUEST,
     "Invalid configuration key producer_byte_rate"),
    ({"ip": "not a host!"}, {"connection_creation_rate": 10}, Errors.INVALID_REQUEST,
     "is not a valid IP or resolvable host"),
])
def test_alter_client_quotas_bad_input(broker, entity, ops, error, message) -> None:
    response = alter(broker, [(entity, ops), ({"user": "fine"}, {"producer_byte_rate": 10**12})])
    bad, good = response.entries
    # (ZooKeeper mode names a type as ConfigDef does, "LONG"; Kafka's KRaft controller "Long")
    assert int(bad.error_code) == error.error_code and message.lower() in bad.error_message.lower(), bad
    assert int(good.error_code) == 0  # one bad entry fails alone
    assert [(e.entity_type, e.entity_name) for e in bad.entity] == list(entity.items())
    assert described(describe(broker, [("user", 0, "eve")], strict=True)) == {}
    alter_ok(broker, [({"user": "fine"}, {"producer_byte_rate": None})])


@pytest.mark.parametrize("components, error, message", [
    ([("group", 0, "g")], Errors.UNSUPPORTED_VERSION, "Custom entity type 'group' not supported"),
    ([("", 2, None)], Errors.INVALID_REQUEST, "Unexpected empty filter component entity type"),
    ([("user", 2, None), ("user", 0, "a")], Errors.INVALID_REQUEST, "Duplicate user filter component"),
    ([("user", 2, None), ("ip", 2, None)], Errors.INVALID_REQUEST, "Invalid entity filter component combination"),
    ([("user", 7, None)], Errors.INVALID_REQUEST, "Unexpected match type: 7"),
])
def test_describe_client_quotas_bad_input(broker, components, error, message) -> None:
    response = describe(broker, components)
    assert int(response.error_code) == error.error_code and message in response.error_message, response
    assert response.entries is None
    # The broker carries on.
    assert described(describe(broker, [("user", 0, "nobody")], strict=True)) == {}


# ---------------------------------------------------------------------------- kafka-configs.sh

def kafka_configs(broker, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "kafka-configs.sh"), "--bootstrap-server", broker.bootstrap, *args],
                          capture_output=True, text=True, timeout=120)


def test_kafka_configs_users_and_clients(broker) -> None:
    pair = ("--entity-type", "users", "--entity-name", "dave", "--entity-type", "clients", "--entity-name", "app")
    result = kafka_configs(broker, "--alter", *pair, "--add-config",
                           "producer_byte_rate=1048576,consumer_byte_rate=2097152,request_percentage=50")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Completed updating config for user dave.\n"
    result = kafka_configs(broker, "--describe", *pair)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("Quota configs for user-principal 'dave', client-id 'app' are "
                             "consumer_byte_rate=2097152.0, producer_byte_rate=1048576.0, request_percentage=50.0\n")
    # The broker applies it: that user and client id is throttled at its bound.
    result = kafka_configs(broker, "--alter", "--entity-type", "clients", "--entity-default",
                           "--add-config", "producer_byte_rate=30000")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Completed updating default config for clients in the cluster.\n"
    sync(broker)
    assert throttled_as(broker, "cli-default", 30_000)
    result = kafka_configs(broker, "--describe", "--entity-type", "clients", "--entity-default")
    assert result.stdout == "Quota configs for the default client-id are producer_byte_rate=30000.0\n"
    # --delete-config, and deleting what is not there is refused.
    result = kafka_configs(broker, "--alter", *pair, "--delete-config", "producer_byte_rate,request_percentage")
    assert result.returncode == 0, result.stderr
    result = kafka_configs(broker, "--describe", "--user", "dave", "--client", "app")
    assert result.stdout == "Quota configs for user-principal 'dave', client-id 'app' are consumer_byte_rate=2097152.0\n"
    result = kafka_configs(broker, "--alter", *pair, "--delete-config", "producer_byte_rate")
    assert result.returncode == 1 and result.stderr.strip() == "Invalid config(s): producer_byte_rate"
    for args in (["--alter", *pair, "--delete-config", "consumer_byte_rate"],
                 ["--alter", "--client-defaults", "--delete-config", "producer_byte_rate"]):
        assert kafka_configs(broker, *args).returncode == 0
    sync(broker)
    assert probe(broker, "cli-after")[1] == 0
    assert kafka_configs(broker, "--describe", *pair).stdout == ""


@pytest.mark.parametrize("args, message", [
    (["--entity-type", "clients", "--entity-name", "c", "--add-config", "no_such_quota=5"],
     "Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: no_such_quota"),
    (["--entity-type", "clients", "--entity-name", "c", "--add-config", "SCRAM-SHA-256=[password=x]"],
     "Only quota configs can be added for 'clients'"),
    (["--entity-type", "users", "--entity-name", "u", "--add-config",
      "producer_byte_rate=5,SCRAM-SHA-256=[password=x]"], "Cannot alter both quota and SCRAM credential configs"),
    (["--entity-type", "users", "--entity-name", "u", "--add-config", "producer_byte_rate=-5"],
     "Quota producer_byte_rate must be greater than 0"),
    (["--entity-type", "users", "--entity-name", "u", "--add-config", "producer_byte_rate=fast"],
     "Cannot parse quota configuration value for producer_byte_rate: fast"),
])
def test_kafka_configs_bad_quota_input(broker, args, message) -> None:
    result = kafka_configs(broker, "--alter", *args)
    assert result.returncode == 1 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1  # one line, no traceback


# ---------------------------------------------------------------------------- connection quotas

def connect_from(broker, source: str) -> socket.socket:
    return socket.create_connection(("127.0.0.1", broker.port), timeout=10, source_address=(source, 0))


def answers(sock: socket.socket) -> bool:
    """An ApiVersions round trip on ``sock`` works (False: the broker closed it instead)."""
    from tests.network.conftest import api_versions_frame
    try:
        sock.sendall(api_versions_frame(1))
        size = sock.recv(4)
        return len(size) == 4
    except (ConnectionResetError, BrokenPipeError):
        return False


def closed_by_broker(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def test_connections_over_max_connections_per_ip_are_closed(broker) -> None:
    first, second = connect_from(broker, "127.0.0.2"), connect_from(broker, "127.0.0.2")
    try:
        assert answers(first) and answers(second)
        third = connect_from(broker, "127.0.0.2")
        assert closed_by_broker(third)
        third.close()
        # Other addresses are not limited, and a closed connection frees its slot.
        with RawClient(broker.port) as client:
            assert client.request(ApiKeys.API_VERSIONS, 0, request_schema(ApiKeys.API_VERSIONS, 0)()) is not None
        first.close()

        def slot_free() -> bool:
            sock = connect_from(broker, "127.0.0.2")
            try:
                return answers(sock)
            finally:
                sock.close()
        wait_until(slot_free, 15, "the closed connection's slot never came back")
    finally:
        first.close()
        second.close()
    # Changed at runtime (a dynamic broker config): one connection from 127.0.0.2.
    result = kafka_configs(broker, "--alter", "--entity-type", "brokers", "--entity-name", "0",
                           "--add-config", "max.connections.per.ip.overrides=[127.0.0.2:1]")
    assert result.returncode == 0, result.stderr
    try:
        def second_refused() -> bool:
            one, two = connect_from(broker, "127.0.0.2"), connect_from(broker, "127.0.0.2")
            two.settimeout(2)
            try:
                return answers(one) and closed_by_broker(two)
            finally:
                one.close()
                two.close()
        wait_until(second_refused, 30, "max.connections.per.ip.overrides not changed at runtime", interval=0.3)
    finally:
        result = kafka_configs(broker, "--alter", "--entity-type", "brokers", "--entity-name", "0",
                               "--delete-config", "max.connections.per.ip.overrides")
        assert result.returncode == 0, result.stderr


def test_connection_creation_rate_per_ip(broker) -> None:
    alter_ok(broker, [({"ip": "127.0.0.3"}, {"connection_creation_rate": 2})])
    sync(broker)
    assert described(describe(broker, [("ip", 0, "127.0.0.3")], strict=True)) == {
        (("ip", "127.0.0.3"),): {"connection_creation_rate": 2.0}}
    opened = [connect_from(broker, "127.0.0.3") for _ in range(3)]
    try:
        # Two per second from 127.0.0.3: the third is closed without an answer.
        assert answers(opened[0]) and answers(opened[1])
        assert closed_by_broker(opened[2])
    finally:
        for sock in opened:
            sock.close()
    alter_ok(broker, [({"ip": "127.0.0.3"}, {"connection_creation_rate": None})])
    sync(broker)
    opened = [connect_from(broker, "127.0.0.3") for _ in range(4)]
    try:
        assert all(answers(sock) for sock in opened)
    finally:
        for sock in opened:
            sock.close()


# ZooKeeper mode only: with ACLs enforced and every listener PLAINTEXT, a KRaft node's own
# broker-to-controller traffic would be refused too (its principal, User:ANONYMOUS, is the
# clients'); tests/integration/test_kraft_acls_scram.py covers StandardAuthorizer.
@pytest.mark.metadata_modes("zookeeper")
def test_quota_admin_apis_need_cluster_describe_configs_and_alter_configs(broker_factory) -> None:
    """With an authorizer and no ACLs, DescribeClientQuotas and AlterClientQuotas are refused
    (DescribeConfigs / AlterConfigs on the cluster, as Kafka checks)."""
    secured = broker_factory(overrides={"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
                                        "allow.everyone.if.no.acl.found": "false"})
    # Not start(): its readiness check waits for metadata, which the controller's UpdateMetadata
    # (from User:ANONYMOUS, refused ClusterAction here) never brings.
    secured.start(wait=False)
    wait_until(lambda: "[KafkaServer id=0] started" in secured.output(), 60, "broker did not start")
    response = describe(secured, [("client-id", 2, None)])
    assert int(response.error_code) == Errors.CLUSTER_AUTHORIZATION_FAILED.error_code and response.entries is None
    [entry] = alter(secured, [({"client-id": "x"}, {"producer_byte_rate": 5})]).entries
    assert int(entry.error_code) == Errors.CLUSTER_AUTHORIZATION_FAILED.error_code
