"""Incremental fetch sessions (KIP-227) over real sockets, on a three-broker cluster whose
brokers keep at most two sessions each (``max.incremental.fetch.session.cache.slots``):
brokers 0 and 1 lead the partitions of the topic and follow each other's, so one slot of
each goes to the other's follower session and one is left for a consumer.

* bad input: an unknown session id, a wrong or replayed epoch get Kafka's error codes and
  change nothing; an incremental fetch answers only the partitions with news; a full fetch
  with epoch -1 closes the session;
* a kafka-python consumer (Fetch v12, sessions on) gets a session on each broker and reads
  exactly what a kafka-python consumer with sessions off reads, while records arrive on some
  partitions and others stay idle;
* broker 2 starts following broker 0 (a new topic) when every slot of broker 0 is taken: its
  new follower session (privileged) evicts the consumer's; the consumer sees no error but
  FETCH_SESSION_ID_NOT_FOUND, falls back to full fetches and still reads everything; the
  cluster replicates all of it, followers fetching incrementally (the leaders' follower fetch
  requests are mostly the empty incremental kind).
"""
from __future__ import annotations

import logging
import time

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from tests.integration.broker_harness import BrokerProcess, RawClient, free_port, unique_chroot, wait_until
from tests.integration.replicated_cluster import CLUSTER_PROPS, ReplicatedCluster
from tests.integration.test_metrics import scrape, value
from tests.integration.test_replication import wait_replicas_identical

WAIT = 90.0
SLOTS = 2
TOPIC = "sessions"
PARTITIONS = 6
# brokers 0 and 1 lead three partitions each and follow the other's
ASSIGNMENT = {p: [p % 2, (p + 1) % 2] for p in range(PARTITIONS)}
LATE_TOPIC = "sessions-late"
# (partition, value) of every record produced to TOPIC by the tests of this module
PRODUCED: list[tuple[int, bytes]] = []
PROPS = dict(CLUSTER_PROPS, **{"max.incremental.fetch.session.cache.slots": str(SLOTS)})


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    chroot = unique_chroot("fetch-sessions")
    brokers = []
    for i in range(3):
        port = free_port()
        b = BrokerProcess(tmp_path_factory.mktemp(f"fs-broker{i}-"), zookeeper.connect_string, chroot, i,
                          overrides=dict(PROPS, **{"kafka.py.metrics.prometheus.port": str(port),
                                                   "kafka.py.metrics.prometheus.host": "127.0.0.1"}))
        b.metrics_port = port
        brokers.append(b)
    c = ReplicatedCluster(brokers).start()
    c.create_topic(TOPIC, ASSIGNMENT)  # (returns once every partition has its leader)
    # the follower of brokers 0 and 1 fetches from each in a session
    wait_until(lambda: [sessions(b) for b in brokers] == [1, 1, 0], WAIT, "the followers' fetch sessions",
               interval=0.2)
    yield c
    for b in brokers:
        if b.running:
            b.stop()
    c.close()


def metric(broker: BrokerProcess, name: str) -> float:
    return value(scrape(broker.metrics_port), f"kafka_server_fetchsessioncache_{name}")


def sessions(broker: BrokerProcess) -> int:
    return int(metric(broker, "numincrementalfetchsessions"))


def evictions(broker: BrokerProcess) -> int:
    return int(metric(broker, "incrementalfetchsessionevictions_total"))


def produce(cluster: ReplicatedCluster, values: list[tuple[int, bytes]]) -> None:
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap(), acks="all", retries=10,
                             max_in_flight_requests_per_connection=1)
    try:
        for partition, v in values:
            producer.send(TOPIC, value=v, partition=partition)
        producer.flush(60)
        PRODUCED.extend(values)
    finally:
        producer.close()


def fetch(client: RawClient, session_id: int, epoch: int, partitions: list[tuple[int, int]], forgotten=()):
    """A consumer's Fetch v12 of TOPIC's ``partitions`` as (partition, offset)."""
    request = build_entity(request_schema(ApiKeys.FETCH, 12), {
        "replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
        "session_id": session_id, "session_epoch": epoch, "rack_id": "",
        "topics": [{"topic": TOPIC, "partitions": [
            {"partition": p, "current_leader_epoch": -1, "fetch_offset": offset, "last_fetched_epoch": -1,
             "log_start_offset": -1, "partition_max_bytes": 1 << 16} for p, offset in partitions]}] if partitions else [],
        "forgotten_topics_data": [{"topic": TOPIC, "partitions": list(forgotten)}] if forgotten else []})
    return client.request(ApiKeys.FETCH, 12, request)


def answered(response) -> dict[int, tuple[int, int]]:
    """partition -> (error code, high watermark) of a Fetch answer."""
    return {int(p.partition_index): (int(p.error_code), int(p.high_watermark))
            for t in response.responses for p in t.partitions}


def test_session_errors_and_incremental_answers_over_the_wire(cluster):
    broker = cluster.brokers[0]
    led = [p for p, replicas in ASSIGNMENT.items() if replicas[0] == 0]
    before = sessions(broker)
    with RawClient(broker.port) as client:
        assert Errors.for_code(fetch(client, 424242, 1, []).error_code) is Errors.FETCH_SESSION_ID_NOT_FOUND
        full = fetch(client, 0, 0, [(p, 0) for p in led])
        assert full.error_code == 0 and full.session_id > 0
        session_id = int(full.session_id)
        assert answered(full) == {p: (0, 0) for p in led}
        assert sessions(broker) == before + 1
        # nothing changed: the answer lists nothing, the partitions are implied
        first = fetch(client, session_id, 1, [])
        assert (first.error_code, int(first.session_id), answered(first)) == (0, session_id, {}), (full, first)
        # the same epoch again, a skipped one, a negative one: INVALID_FETCH_SESSION_EPOCH
        for epoch in (1, 5, -3):
            wrong = fetch(client, session_id, epoch, [])
            assert Errors.for_code(wrong.error_code) is Errors.INVALID_FETCH_SESSION_EPOCH, epoch
            assert answered(wrong) == {}
        # the session is intact: epoch 2 is the next
        produce(cluster, [(led[0], b"news")])
        second = fetch(client, session_id, 2, [])
        assert second.error_code == 0 and list(answered(second)) == [led[0]]
        # (the record stays in every answer until the fetch offset moves past it)
        # a partition it follows: a consumer's Fetch v11+ reads it from this follower (KIP-392);
        # added to the session, it is in the answer
        other = next(p for p in ASSIGNMENT if p not in led)
        third = fetch(client, session_id, 3, [(led[0], 1), (other, 0)])
        assert {p: error for p, (error, _) in answered(third).items()} == {other: 0}
        fourth = fetch(client, session_id, 4, [], forgotten=[other])
        assert answered(fourth) == {}
        # a full fetch with epoch -1 closes the session and makes none
        closing = fetch(client, session_id, -1, [(p, 0) for p in led])
        assert (closing.error_code, int(closing.session_id)) == (0, 0)
        assert sorted(answered(closing)) == led
        assert Errors.for_code(fetch(client, session_id, 5, []).error_code) is Errors.FETCH_SESSION_ID_NOT_FOUND
    assert sessions(broker) == before


class _FetchErrors(logging.Handler):
    """kafka-python's fetcher says so (at INFO) when a broker answers a fetch with an error."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "was unable to process the fetch request" in message:
            self.messages.append(message)


def consumer(cluster: ReplicatedCluster, sessions_on: bool) -> KafkaConsumer:
    c = KafkaConsumer(bootstrap_servers=cluster.bootstrap(), enable_auto_commit=False, group_id=None,
                      auto_offset_reset="earliest", enable_incremental_fetch_sessions=sessions_on,
                      fetch_max_wait_ms=200, request_timeout_ms=30000)
    c.assign([KafkaTopicPartition(TOPIC, p) for p in range(PARTITIONS)])
    return c


def poll_until(consumers: dict, read: dict, total: int, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(len(read[name]) < total for name in consumers):
        for name, c in consumers.items():
            for records in c.poll(timeout_ms=100).values():
                read[name].extend((r.partition, r.offset, r.value) for r in records)
    for name in consumers:
        assert len(read[name]) >= total, f"{name} read {len(read[name])} of {total}"


def test_a_session_consumer_reads_what_a_full_fetch_consumer_reads_through_evictions(cluster):
    errors = _FetchErrors()
    fetcher_logger = logging.getLogger("kafka.consumer.fetcher")
    fetcher_logger.addHandler(errors)
    previous_level = fetcher_logger.level
    fetcher_logger.setLevel(logging.INFO)
    with_sessions, without = consumer(cluster, True), consumer(cluster, False)
    consumers = {"sessions": with_sessions, "full": without}
    read: dict[str, list] = {name: [] for name in consumers}
    try:
        # every partition, then a few partitions while the others stay idle
        wave1 = [(p, b"w1-%d-%03d" % (p, i)) for p in range(PARTITIONS) for i in range(20)]
        produce(cluster, wave1)
        poll_until(consumers, read, len(PRODUCED))
        for round_ in range(5):
            produce(cluster, [(1, b"w2-%d-%03d" % (round_, i)) for i in range(10)] + [(4, b"w2-%d-x" % round_)])
            poll_until(consumers, read, len(PRODUCED))
        # the session consumer holds a session on each broker: the slots are full
        handlers = with_sessions._fetcher._session_handlers
        assert {node for node, h in handlers.items() if h.next_metadata.session_id > 0} == {0, 1}
        assert all(not h.next_metadata.is_full for h in handlers.values())
        assert [sessions(b) for b in cluster.brokers] == [SLOTS, SLOTS, 0]
        assert without._fetcher._session_handlers == {}

        # broker 2 starts following broker 0: its new session evicts the consumer's
        cluster.create_topic(LATE_TOPIC, {0: [0, 2]})  # (returns once broker 0 leads it)
        wait_until(lambda: evictions(cluster.brokers[0]) == 1, WAIT, "the consumer's session evicted", interval=0.2)
        produce_late = KafkaProducer(bootstrap_servers=cluster.bootstrap(), acks="all", retries=10)
        for i in range(50):
            produce_late.send(LATE_TOPIC, value=b"late-%03d" % i, partition=0)
        produce_late.flush(60)
        produce_late.close()
        produce(cluster, [(p, b"w3-%d-%03d" % (p, i)) for p in range(PARTITIONS) for i in range(10)])
        poll_until(consumers, read, len(PRODUCED))
        # no slot is free for it again: it fetches from broker 0 without a session
        assert handlers[0].next_metadata.session_id == 0
        assert [evictions(b) for b in cluster.brokers] == [1, 0, 0]
    finally:
        fetcher_logger.removeHandler(errors)
        fetcher_logger.setLevel(previous_level)
        for c in consumers.values():
            c.close()

    expected = sorted(PRODUCED)
    for name in consumers:
        assert sorted((p, v) for p, _, v in read[name]) == expected, name
        assert len({(p, o) for p, o, _ in read[name]}) == len(read[name]), f"{name} read an offset twice"
    assert sorted(read["sessions"]) == sorted(read["full"])
    # the evicted session is the only error the consumer was told of
    assert errors.messages, "the consumer never learnt that its session was evicted"
    assert all("FetchSessionIdNotFound" in m for m in errors.messages), errors.messages

    # and every replica holds the same records, fetched by followers with sessions
    for p in range(PARTITIONS):
        wait_replicas_identical(cluster, TOPIC, ids=(0, 1), partition=p)
    wait_replicas_identical(cluster, LATE_TOPIC, ids=(0, 2))
    # (broker 0's followers: broker 1 in TOPIC and broker 2 in LATE_TOPIC; broker 1's: broker 0)
    for leader, smallest_full_fetch in ((0, full_fetch_size(2, LATE_TOPIC, [0])),
                                        (1, full_fetch_size(0, TOPIC, [1, 3, 5]))):
        samples = scrape(cluster.brokers[leader].metrics_port)
        assert value(samples, "kafka_server_fetchsessioncache_numincrementalfetchsessions") == SLOTS
        # Most follower fetches are incremental ones naming no partition, or the one that moved;
        # full fetches would all be at least as large as the smallest full fetch a follower of
        # this leader can send.
        median = value(samples, "kafka_network_requestmetrics_requestbytes", request="FetchFollower",
                       quantile="0.50")
        assert 0 < median < smallest_full_fetch, (leader, median, smallest_full_fetch)


def full_fetch_size(follower: int, topic: str, partitions: list[int]) -> int:
    """The size of a follower's full Fetch v12 of ``partitions`` (header and body)."""
    from kafka_py.clients.common.protocol.fast_fetch_request import encode_fetch_request

    return len(encode_fetch_request(12, 0, f"broker-{follower}-fetcher-0", follower, 500, 1, 10 << 20, 0, 0, 0,
                                    [(topic, [(p, 0, 0, -1, 0, 1 << 20) for p in partitions])])) - 4
