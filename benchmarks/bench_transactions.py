"""Transactions benchmark: kafka-py brokers and one ZooKeeper on this machine.

    .venv/bin/python benchmarks/bench_transactions.py [--rounds 3] [--only commits|large|read_committed ...]
        [--cross] [--tree NAME=PATH ...]

The brokers are the test harness's (``tests/integration/broker_harness.py``). By default one
broker is both the transaction coordinator and the leader of the data partition. With
``--cross`` each setup is two brokers in one cluster, ``__transaction_state`` (one partition)
led by one and the data partitions by the other: every transaction's first batch on a
partition is then verified with the coordinator on the other broker (docs/transactions.md).
``--tree NAME=PATH`` adds a setup whose brokers run the code of another checkout (a ``git
worktree``), measured in the same rounds (the setups alternate), to compare before and after
a change::

    git worktree add /tmp/before <commit>
    .venv/bin/python benchmarks/bench_transactions.py --only commits large --cross --tree before=/tmp/before

Figures, each the median of ``--rounds`` rounds run in one go:

* ``commits``: transactions of 100 records of 100 B to one partition, committed one after
  another from one producer, for ``--seconds`` seconds: commits/s, with confluent-kafka
  (librdkafka; ``linger.ms=0``) and with a protocol-level producer of this repository (the
  requests a producer sends, AddPartitionsToTxn, Produce and EndTxn, each sent when the
  previous one is answered, no client-side timers: what the broker sustains for one producer).
* ``large``: 10,000 records of 100 B per transaction against the same records produced
  idempotently (acks=all), confluent-kafka, same settings otherwise (``linger.ms=5``), one
  after the other in each round (alternating order), each producer ready before the clock
  starts: records/s and the ratio transactional / idempotent.
* ``read_committed``: a partition of 200,000 records of 100 B written in transactions of 1,000
  records, one in ten aborted; confluent-kafka consumers reading it from the start, with
  ``isolation.level`` read_committed and read_uncommitted (alternating order per round):
  records/s of what each one delivers, and the ratio.
"""
from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import statistics
import sys
import tempfile
import time
import uuid

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from confluent_kafka import Consumer, Producer  # noqa: E402
from kafka.admin import KafkaAdminClient, NewTopic  # noqa: E402

from kafka_py.clients.common.protocol.api_keys import ApiKeys  # noqa: E402
from kafka_py.clients.common.protocol.entities import build_entity  # noqa: E402
from kafka_py.clients.common.protocol.errors import Errors  # noqa: E402
from kafka_py.clients.common.protocol.messages import request_schema  # noqa: E402
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch  # noqa: E402
from tests.integration.broker_harness import BrokerProcess, RawClient, unique_chroot, wait_until  # noqa: E402
from tests.zookeeper_harness import ZooKeeperServer  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from tree_broker import TreeBroker  # noqa: E402

VALUE = b"x" * 100


def req(api: ApiKeys, version: int, **fields):
    return build_entity(request_schema(api, version), fields)


class Bench:
    """One setup: a broker, or with ``cross`` two brokers (coordinator and partition leader apart)."""

    def __init__(self, workdir: pathlib.Path, zookeeper: ZooKeeperServer, name: str = "kafka-py",
                 root: pathlib.Path | None = None, cross: bool = False) -> None:
        self.name = name
        chroot = unique_chroot(f"bench-transactions-{name}")
        overrides = {"log.segment.bytes": str(256 << 20)}
        if cross:
            overrides.update({"transaction.state.log.num.partitions": "1"})
        self.brokers = []
        for broker_id in range(2 if cross else 1):
            path = workdir / f"{name}-broker{broker_id}"
            if root is None:
                broker = BrokerProcess(path, zookeeper.connect_string, chroot, broker_id, overrides=overrides)
            else:
                broker = TreeBroker(path, zookeeper.connect_string, chroot, broker_id, overrides=overrides,
                                    root=root)
            self.brokers.append(broker)
        for broker in self.brokers:
            broker.start(wait=False)
        for broker in self.brokers:
            broker.wait_started()
        # the transaction coordinator of every id (one __transaction_state partition) and the
        # broker leading the data partitions: the same one, or (cross) the other one
        self.coordinator = self.brokers[self._coordinator_id()]
        self.leader = next((b for b in self.brokers if b is not self.coordinator), self.coordinator)

    def _coordinator_id(self) -> int:
        found = []

        def coordinator() -> bool:
            with RawClient(self.brokers[0].port) as client:
                response = client.request(ApiKeys.FIND_COORDINATOR, 3, req(
                    ApiKeys.FIND_COORDINATOR, 3, key="bench-find", key_type=1))
            if response.error_code == 0 and response.node_id in range(len(self.brokers)):
                found.append(int(response.node_id))
            return bool(found)

        wait_until(coordinator, 60, "no transaction coordinator")
        return found[0]

    def close(self) -> None:
        for broker in self.brokers:
            if broker.running:
                broker.kill()

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers)

    def topic(self, prefix: str) -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:6]}"
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap.split(","))
        try:
            admin.create_topics([NewTopic(name, replica_assignments={0: [self.leader.broker_id]})])
        finally:
            admin.close()
        wait_until(lambda: self._led(name), 60, f"{name} has no leader")
        return name

    def _led(self, topic: str) -> bool:
        request = req(ApiKeys.METADATA, 9, topics=[{"name": topic}], allow_auto_topic_creation=False)
        with RawClient(self.leader.port) as client:
            response = client.request(ApiKeys.METADATA, 9, request)
        return any(t.name == topic and t.error_code == 0 and t.partitions
                   and int(t.partitions[0].leader_id) == self.leader.broker_id for t in response.topics)

    # ------------------------------------------------------------------ commits/s

    def commits_librdkafka(self, seconds: float) -> float:
        topic = self.topic("commits")
        producer = Producer({"bootstrap.servers": self.bootstrap, "transactional.id": f"bench-{uuid.uuid4()}",
                             "linger.ms": 0})
        producer.init_transactions(60)
        commits = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            producer.begin_transaction()
            for _ in range(100):
                producer.produce(topic, VALUE, partition=0)
            producer.commit_transaction(60)
            commits += 1
        return commits / (time.perf_counter() - start)

    def commits_protocol(self, seconds: float) -> float:
        topic = self.topic("commits-raw")
        txn_id = f"bench-raw-{uuid.uuid4()}"
        with RawClient(self.coordinator.port) as client, RawClient(self.leader.port) as leader:
            wait_until(lambda: client.request(ApiKeys.FIND_COORDINATOR, 3, req(
                ApiKeys.FIND_COORDINATOR, 3, key=txn_id, key_type=1)).error_code == 0, 60, "no coordinator")
            init = []
            wait_until(lambda: init.append(client.request(ApiKeys.INIT_PRODUCER_ID, 4, req(
                ApiKeys.INIT_PRODUCER_ID, 4, transactional_id=txn_id, transaction_timeout=60000))) or
                init[-1].error_code == 0, 60, "InitProducerId failed")
            pid, epoch = init[-1].producer_id, init[-1].producer_epoch
            add = req(ApiKeys.ADD_PARTITIONS_TO_TXN, 3, v3_and_below_transactional_id=txn_id,
                      v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
                      v3_and_below_topics=[{"name": topic, "partitions": [0]}])
            end = req(ApiKeys.END_TXN, 3, transactional_id=txn_id, producer_id=pid, producer_epoch=epoch,
                      committed=True)
            sequence = commits = 0
            start = time.perf_counter()
            while time.perf_counter() - start < seconds:
                while True:
                    response = client.request(ApiKeys.ADD_PARTITIONS_TO_TXN, 3, add)
                    error = response.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code
                    if error == Errors.NONE.error_code:
                        break
                    # the previous transaction is still completing: retry at once (a real
                    # client backs off 20-100 ms; the count shows whether it would have to)
                    assert error == Errors.CONCURRENT_TRANSACTIONS.error_code, error
                now = int(time.time() * 1000)
                batch = build_batch([SimpleRecord(None, VALUE, now)] * 100, producer_id=pid, producer_epoch=epoch,
                                    base_sequence=sequence, is_transactional=True)
                sequence += 100
                response = leader.request(ApiKeys.PRODUCE, 8, req(
                    ApiKeys.PRODUCE, 8, transactional_id=txn_id, acks=-1, timeout=30000,
                    topic_data=[{"name": topic, "partition_data": [{"index": 0, "records": batch}]}]))
                assert response.responses[0].partition_responses[0].error_code == 0
                response = client.request(ApiKeys.END_TXN, 3, end)
                assert response.error_code == 0, response
                commits += 1
            return commits / (time.perf_counter() - start)

    # ------------------------------------------------------------------ large transactions

    def produce_records(self, records: int, transactional: bool) -> float:
        topic = self.topic("large")
        conf = {"bootstrap.servers": self.bootstrap, "linger.ms": 5, "batch.size": 1 << 20,
                "queue.buffering.max.messages": 1_000_000}
        if transactional:
            conf["transactional.id"] = f"bench-large-{uuid.uuid4()}"
        else:
            conf.update({"enable.idempotence": True, "acks": "all"})
        producer = Producer(conf)
        # both ready before the clock starts: the transactional one initialised, the idempotent
        # one past its asynchronous producer id acquisition (about half a second in librdkafka)
        if transactional:
            producer.init_transactions(60)
        else:
            producer.produce(topic, VALUE, partition=0)
            producer.flush(60)
        start = time.perf_counter()
        sent = 0
        while sent < records:
            if transactional:
                producer.begin_transaction()
            for _ in range(10_000):
                while True:
                    try:
                        producer.produce(topic, VALUE, partition=0)
                        break
                    except BufferError:
                        producer.poll(0.01)
            sent += 10_000
            if transactional:
                producer.commit_transaction(120)
        producer.flush(120)
        return sent / (time.perf_counter() - start)

    # ------------------------------------------------------------------ read_committed

    def fill_with_aborts(self, records: int) -> str:
        topic = self.topic("aborts")
        producer = Producer({"bootstrap.servers": self.bootstrap, "transactional.id": f"bench-fill-{uuid.uuid4()}",
                             "linger.ms": 5, "batch.size": 1 << 20, "queue.buffering.max.messages": 1_000_000})
        producer.init_transactions(60)
        for txn in range(records // 1000):
            producer.begin_transaction()
            for _ in range(1000):
                producer.produce(topic, VALUE, partition=0)
            if txn % 10 == 9:
                producer.flush(120)  # on the broker, then aborted
                producer.abort_transaction(120)
            else:
                producer.commit_transaction(120)
        return topic

    def consume(self, topic: str, isolation: str, expected: int) -> float:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": f"bench-{uuid.uuid4()}",
                             "auto.offset.reset": "earliest", "enable.auto.commit": False,
                             "isolation.level": isolation, "enable.partition.eof": True,
                             "fetch.max.bytes": 52428800, "max.partition.fetch.bytes": 10485760})
        consumer.subscribe([topic])
        got = 0
        first = None
        deadline = time.monotonic() + 300
        done = False
        while not done and time.monotonic() < deadline:
            for message in consumer.consume(10_000, 1.0):
                if message.error() is not None:
                    done = got > 0  # end of partition
                    continue
                if first is None:
                    first = time.perf_counter()
                got += 1
        elapsed = time.perf_counter() - first
        consumer.close()
        assert got == expected, (isolation, got, expected)
        return got / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--large-records", type=int, default=200_000)
    parser.add_argument("--read-records", type=int, default=200_000)
    parser.add_argument("--only", nargs="*", default=["commits", "large", "read_committed"])
    parser.add_argument("--cross", action="store_true",
                        help="two brokers per setup: the coordinator and the data partitions' leader apart")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=PATH",
                        help="also measure brokers running the code of another checkout")
    args = parser.parse_args()
    results: dict = {"date": datetime.date.today().isoformat(), "rounds": args.rounds,
                     "brokers": "coordinator and leader apart (2)" if args.cross else "one"}
    trees = [("kafka-py", None)] + [(name, pathlib.Path(path).resolve())
                                    for name, path in (t.split("=", 1) for t in args.tree)]
    with tempfile.TemporaryDirectory() as tmp:
        (pathlib.Path(tmp) / "zk").mkdir()
        zookeeper = ZooKeeperServer(pathlib.Path(tmp) / "zk").start()
        benches: list[Bench] = []
        try:
            for name, root in trees:
                benches.append(Bench(pathlib.Path(tmp), zookeeper, name, root, args.cross))
            samples: dict = {b.name: {} for b in benches}

            def record(bench: Bench, key: str, value: float) -> None:
                samples[bench.name].setdefault(key, []).append(value)
                print(f"{bench.name:<10} {key:<32} {value:12,.1f}", file=sys.stderr, flush=True)

            read_topics = {}
            if "read_committed" in args.only:
                read_topics = {b.name: b.fill_with_aborts(args.read_records) for b in benches}
            for r in range(args.rounds):
                # the setups alternate, and within each the two sides of a ratio
                for bench in (benches if r % 2 == 0 else benches[::-1]):
                    if "commits" in args.only:
                        record(bench, "commits_confluent_kafka", bench.commits_librdkafka(args.seconds))
                        record(bench, "commits_protocol_producer", bench.commits_protocol(args.seconds))
                    if "large" in args.only:
                        order = (True, False) if r % 2 == 0 else (False, True)
                        got = {t: bench.produce_records(args.large_records, t) for t in order}
                        record(bench, "large_transactional_records_per_s", got[True])
                        record(bench, "large_idempotent_records_per_s", got[False])
                        samples[bench.name].setdefault("large_ratio", []).append(got[True] / got[False])
                    if "read_committed" in args.only:
                        aborted = args.read_records // 1000 // 10 * 1000
                        order = ("read_committed", "read_uncommitted") if r % 2 == 0 else \
                            ("read_uncommitted", "read_committed")
                        got = {iso: bench.consume(read_topics[bench.name], iso, args.read_records - (
                            aborted if iso == "read_committed" else 0)) for iso in order}
                        record(bench, "read_committed_records_per_s", got["read_committed"])
                        record(bench, "read_uncommitted_records_per_s", got["read_uncommitted"])
                        samples[bench.name].setdefault("read_ratio", []).append(
                            got["read_committed"] / got["read_uncommitted"])
            for name, figures in samples.items():
                results[name] = {key: {"median": round(statistics.median(values), 3 if "ratio" in key else 1),
                                       "rounds": [round(v, 3 if "ratio" in key else 1) for v in values]}
                                 for key, values in figures.items()}
        finally:
            for bench in benches:
                bench.close()
            zookeeper.stop()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
