"""A three-broker cluster under load, for the durability tests of replication.

Built on test_replication's ``Cluster`` (brokers 0, 1 and 2 in one ZooKeeper chroot, partition
state znodes, on-disk batches). It adds what the failure tests need: the controller's id,
waits for every partition to have a live leader and a full ISR, a continuous idempotent
acks=all producer whose every value is unique, and a read-back that checks what the producer
was told against what any consumer finds. Every wait is bounded in time; nothing is timed.
"""
from __future__ import annotations

import collections
import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass, field

from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition
from kafka.errors import KafkaError

from tests.integration.broker_harness import BrokerProcess, read_znode, wait_until
from tests.integration.test_replication import Cluster, log_end_offset, wait_replicas_identical

WAIT = 90.0

# Broker settings of these clusters: a dead broker's registration goes within 4 s
# (zookeeper.session.timeout.ms of the harness), no automatic leader rebalance to move
# leaderships behind a test's back.
CLUSTER_PROPS = {
    "auto.leader.rebalance.enable": "false",
    "controlled.shutdown.retry.backoff.ms": "500",
    "default.replication.factor": "3",
    "offsets.topic.replication.factor": "3",
    "replica.fetch.backoff.ms": "200",
    "replica.lag.time.max.ms": "10000",
}


class ReplicatedCluster(Cluster):
    def controller_id(self) -> int | None:
        found = read_znode(self.zk, "/controller")
        return None if found is None else int(json.loads(found[0])["brokerid"])

    def live_ids(self) -> set[int]:
        return {b.broker_id for b in self.brokers if b.running}

    def wait_controller(self, exclude: int | None = None) -> int:
        """Until a live broker other than ``exclude`` is the controller; its id."""
        found: list[int] = []

        def elected() -> bool:
            c = self.controller_id()
            if c is not None and c != exclude and c in self.live_ids():
                found.append(c)
                return True
            return False

        wait_until(elected, WAIT, f"no live controller (other than {exclude})", interval=0.2)
        return found[0]

    def leaders(self, topic: str, partitions: int) -> dict[int, int]:
        return {p: (self.state(topic, p) or {}).get("leader", -1) for p in range(partitions)}

    def all_fully_replicated(self, topic: str, partitions: int) -> bool:
        live = self.live_ids()
        for p in range(partitions):
            s = self.state(topic, p)
            if s is None or s["leader"] not in live or sorted(s["isr"]) != [0, 1, 2]:
                return False
        return True

    def wait_fully_replicated(self, topic: str, partitions: int, timeout: float = WAIT) -> None:
        wait_until(lambda: self.all_fully_replicated(topic, partitions), timeout,
                   f"{topic}: not every partition has a live leader and ISR [0, 1, 2]: "
                   f"{[self.state(topic, p) for p in range(partitions)]}", interval=0.2)

    def wait_led_by_live_brokers(self, topic: str, partitions: int, timeout: float = WAIT) -> None:
        live = self.live_ids()
        wait_until(lambda: all(leader in live for leader in self.leaders(topic, partitions).values()), timeout,
                   f"{topic}: a partition has no live leader: {self.leaders(topic, partitions)}", interval=0.2)

    def broker(self, broker_id: int) -> BrokerProcess:
        return self.brokers[broker_id]

    def describe(self, topic: str, partitions: int, lines: int = 30) -> str:
        """The controller, the partitions' states and each broker's last log lines: what a failed
        wait shows."""
        text = [f"controller {self.controller_id()}, live {sorted(self.live_ids())}"]
        for p in range(partitions):
            s = self.state(topic, p)
            ends = {b.broker_id: log_end_offset(b, topic, p) for b in self.brokers}
            hw = None
            if s and s["leader"] in self.live_ids():
                try:
                    hw = consumer_fetch_high_watermark(self.broker(s["leader"]).port, topic, p)
                except Exception as e:  # noqa: BLE001 - a description, whatever the broker does
                    hw = repr(e)
            text.append(f"{topic}-{p}: {s}; log end offsets on disk {ends}; leader's high watermark {hw}")
        for b in self.brokers:
            text.append(f"--- broker {b.broker_id} ({'running' if b.running else 'down'}):\n{b.tail(lines)}")
        return "\n".join(text)


def make_replicated_cluster(broker_factory, chroot: str, **overrides: str) -> ReplicatedCluster:
    props = dict(CLUSTER_PROPS, **overrides)
    return ReplicatedCluster([broker_factory(i, chroot=chroot, overrides=props) for i in range(3)])


def consumer_fetch_high_watermark(port: int, topic: str, partition: int):
    """(error, high watermark) of a consumer's Fetch at offset 0 to the broker on ``port``."""
    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.entities import build_entity
    from kafka_py.clients.common.protocol.errors import Errors
    from kafka_py.clients.common.protocol.messages import request_schema
    from tests.integration.broker_harness import RawClient

    request = build_entity(request_schema(ApiKeys.FETCH, 12), {
        "replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 1024, "session_id": 0,
        "session_epoch": -1, "topics": [{"topic": topic, "partitions": [
            {"partition": partition, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
             "log_start_offset": -1, "partition_max_bytes": 1024}]}]})
    with RawClient(port, timeout=5) as client:
        answer = client.request(ApiKeys.FETCH, 12, request).responses[0].partitions[0]
    return Errors.for_code(int(answer.error_code)).name, int(answer.high_watermark)


class _RingHandler(logging.Handler):
    def __init__(self, lines: collections.deque) -> None:
        super().__init__(logging.WARNING)
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.created:.3f} {record.name}: {record.getMessage()}"[:300])


# -- the producer --------------------------------------------------------------------------------


@dataclass
class ProduceLoad:
    """An idempotent acks=all producer sending unique values round-robin over the partitions, in
    rounds of ``window`` sends whose results it collects before the next round. ``acked`` maps
    each acknowledged value to its (partition, offset); ``failed`` holds what the client gave up
    on (those values may or may not be in the log, but never twice)."""

    bootstrap: list[str]
    topic: str
    partitions: int
    max_records: int = 200_000
    window: int = 50
    producer_config: dict = field(default_factory=dict)
    acked: dict[bytes, tuple[int, int]] = field(default_factory=dict)
    failed: dict[bytes, BaseException] = field(default_factory=dict)
    sent: int = 0
    describe: object = None  # a callable whose text a stall report adds (the cluster's state)

    def __post_init__(self) -> None:
        self.tag = uuid.uuid4().hex[:8]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="produce-load", daemon=True)
        self._lock = threading.Lock()
        self.crashed: BaseException | None = None
        config = dict(bootstrap_servers=self.bootstrap, acks="all", enable_idempotence=True,
                      max_in_flight_requests_per_connection=5, retries=2**31 - 1, retry_backoff_ms=100,
                      request_timeout_ms=15000, delivery_timeout_ms=120000, linger_ms=5,
                      metadata_max_age_ms=5000)
        config.update(self.producer_config)
        self.producer = KafkaProducer(**config)
        # the client's own warnings (retries and their errors), the last few, for a stall report
        self.client_log: collections.deque[str] = collections.deque(maxlen=20)
        self._handler = _RingHandler(self.client_log)
        logging.getLogger("kafka.producer").addHandler(self._handler)

    def start(self) -> "ProduceLoad":
        self._thread.start()
        return self

    def count(self) -> int:
        with self._lock:
            return len(self.acked)

    def wait_acked(self, more: int, timeout: float = WAIT) -> None:
        """Until ``more`` values beyond those acknowledged now are acknowledged."""
        target = self.count() + more
        assert target <= self.max_records, (f"waiting for {target} acknowledgements of a producer that sends "
                                            f"{self.max_records} records")
        try:
            wait_until(lambda: self.count() >= target or self.crashed is not None, timeout, "", interval=0.1)
        except TimeoutError:
            raise TimeoutError(f"the producer stalled at {self.count()} acknowledged (wanted {target}); "
                               f"{len(self.failed)} failed, last failures {list(self.failed.values())[-3:]}; "
                               f"its metadata lists brokers {sorted(self.known_brokers())}; "
                               "the producer's last warnings:\n" + "\n".join(self.client_log)
                               + (f"\n{self.describe()}" if self.describe else "")) from None
        assert self.crashed is None, self.crashed

    def known_brokers(self) -> set[int]:
        """The broker ids of the producer's last Metadata answer (a broker lists the live ones)."""
        return {int(b.node_id) for b in self.producer._metadata.brokers()}

    def wait_knows_brokers(self, broker_ids: set[int], timeout: float = WAIT) -> None:
        """Until the producer's metadata lists exactly ``broker_ids``, asking it to refresh.

        A client only ever connects to the brokers of its last Metadata answer (its bootstrap
        list is used once): Kafka 2.8's clients and kafka-python alike, until KIP-899's
        rebootstrap in Kafka 3.8. A client whose last answer came while the other two brokers
        were down knows one broker; if that one dies before the client's next refresh
        (metadata_max_age_ms), it has nobody left to ask and stalls until that broker returns.
        A test that kills brokers again after restarting some waits here first, as an operator
        waits for clients to see a restarted broker before taking the next one down."""
        wanted = set(broker_ids)

        def knows() -> bool:
            if self.known_brokers() == wanted:
                return True
            self.producer._metadata.request_update()
            return False

        wait_until(knows, timeout, f"the producer's metadata never listed brokers {sorted(wanted)} "
                                   f"(it lists {sorted(self.known_brokers())})", interval=0.2)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(WAIT + 60)
        assert not self._thread.is_alive(), "the producer thread did not finish its last round"
        self.producer.close(timeout=30)
        logging.getLogger("kafka.producer").removeHandler(self._handler)
        assert self.crashed is None, self.crashed

    def _run(self) -> None:
        try:
            while not self._stop.is_set() and self.sent < self.max_records:
                futures = []
                for _ in range(self.window):
                    value = b"%s-%09d" % (self.tag.encode(), self.sent)
                    futures.append((value, self.producer.send(self.topic, value,
                                                              partition=self.sent % self.partitions)))
                    self.sent += 1
                for value, future in futures:
                    try:
                        # bounded by delivery_timeout_ms inside the client; this is a backstop
                        metadata = future.get(timeout=180)
                    except KafkaError as e:
                        with self._lock:
                            self.failed[value] = e
                    else:
                        with self._lock:
                            self.acked[value] = (metadata.partition, metadata.offset)
        except BaseException as e:  # noqa: BLE001 - reported by stop() and wait_acked()
            self.crashed = e


# -- reading it back -----------------------------------------------------------------------------


def read_everything(cluster: ReplicatedCluster, topic: str, partitions: int,
                    replica_ids: tuple[int, ...] = (0, 1, 2)) -> dict[int, list[tuple[int, bytes]]]:
    """Every record of every partition, read from offset 0 by a kafka-python consumer up to the
    replicas' log end offset (which the replicas agree on: wait for that first)."""
    ends = {p: log_end_offset(cluster.brokers[replica_ids[0]], topic, p) for p in range(partitions)}
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap(), auto_offset_reset="earliest",
                             enable_auto_commit=False, fetch_max_wait_ms=200)
    records: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
    try:
        tps = [KafkaTopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        deadline = time.monotonic() + WAIT
        while any(consumer.position(KafkaTopicPartition(topic, p)) < ends[p] for p in range(partitions)):
            assert time.monotonic() < deadline, (f"reading stopped at "
                                                 f"{[consumer.position(tp) for tp in tps]} of {ends}")
            for tp, messages in consumer.poll(timeout_ms=1000).items():
                records[tp.partition].extend((m.offset, m.value) for m in messages)
    finally:
        consumer.close()
    return records


def check_nothing_lost(cluster: ReplicatedCluster, load: ProduceLoad, topic: str, partitions: int,
                       replica_ids: tuple[int, ...] = (0, 1, 2)) -> int:
    """Once every replica agrees: every acknowledged value is read back at the offset its
    acknowledgement named, no value is in the log twice, and each partition's offsets run from 0
    without a hole. Returns how many records the partitions hold."""
    for p in range(partitions):
        wait_replicas_identical(cluster, topic, ids=replica_ids, partition=p)
    records = read_everything(cluster, topic, partitions, replica_ids)
    where: dict[bytes, tuple[int, int]] = {}
    for p, found in records.items():
        offsets = [o for o, _ in found]
        assert offsets == list(range(len(offsets))), f"partition {p}: offsets with holes or repeats"
        for offset, value in found:
            assert value not in where, f"{value!r} written twice: at {where[value]} and {(p, offset)}"
            where[value] = (p, offset)
    lost = {v: at for v, at in load.acked.items() if v not in where}
    assert not lost, f"{len(lost)} acknowledged values lost, e.g. {list(lost.items())[:5]}"
    moved = {v: (at, where[v]) for v, at in load.acked.items() if where[v] != at}
    assert not moved, f"acknowledged at one offset, found at another: {list(moved.items())[:5]}"
    foreign = [v for v in where if not v.startswith(load.tag.encode())]
    assert not foreign, foreign[:5]
    return len(where)
