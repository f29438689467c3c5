"""Replication benchmark: three kafka-py brokers and one ZooKeeper on this machine.

    .venv/bin/python benchmarks/bench_replication.py [--rounds 3] [--catchup-mb 1024] [--only NAME ...]
        [--override KEY=VALUE ...] [--partitions N]

Brokers are the test harness's (``tests/integration/broker_harness.py``: ``python -m
kafka_py.core.kafka``, temp log dirs, zookeeper.session.timeout.ms=4000) with automatic leader
rebalancing off; the client is confluent-kafka, in this process. Figures, each the median of
``--rounds`` rounds run in one go (pairs alternate their order from round to round):

* ``throughput``: records/s and MB/s of values for 100-byte and 10,000-byte values, RF=3
  acks=all (min.insync.replicas=2) against RF=1 acks=1, same producer settings (linger.ms=5,
  idempotence off); the ratio is taken per round. With ``--partitions 1`` (the default)
  both topics have one partition led by broker 0: one producer connection with one request
  at a time in the leader, so the figure is that request's trip through the chain. With
  ``--partitions N`` each topic has N partitions whose leaders take turns over the three
  brokers (RF=3 replicas ``p, p+1, p+2`` mod 3, RF=1 replica ``p`` mod 3), and the records
  go to them in turn, as in a cluster whose load is spread over its brokers. Beside
  each rate, the CPU time (user + system, from /proc) the leader, the two other brokers and
  this client process spent per MB of values while it ran. Each measured topic is deleted
  (and its files gone) before the next run, so every run writes into a page cache of the
  same size.
* ``catchup``: a follower stopped while ``--catchup-mb`` MB go to its partition (acks=1),
  then started: MB/s from its "started" line to its log end offset reaching the leader's
  (bytes of segment files).
* ``failover``: kill -9 of a partition's leader (not the controller) while an acks=all
  producer sends one record at a time: seconds to the first acknowledged record, against
  zookeeper.session.timeout.ms.
* ``shutdown``: SIGTERM of the broker leading the most of 100 partitions (RF=3): seconds to
  every leadership of it moved (read in ZooKeeper).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time
import uuid

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from confluent_kafka import Producer  # noqa: E402
from kafka.admin import KafkaAdminClient, NewTopic  # noqa: E402

from tests.integration.broker_harness import BrokerProcess, unique_chroot, wait_until  # noqa: E402
from tests.zookeeper_harness import ZooKeeperServer  # noqa: E402

SESSION_MS = 4000
PROPS = {"auto.leader.rebalance.enable": "false", "controlled.shutdown.retry.backoff.ms": "500",
         "replica.lag.time.max.ms": "30000", "zookeeper.session.timeout.ms": str(SESSION_MS),
         "log.segment.bytes": str(256 << 20),
         # a deleted topic's files go within half a second (Kafka: 60 s), so the throughput
         # rounds can free what they wrote before the next one
         "log.segment.delete.delay.ms": "500"}


class Bench:
    def __init__(self, workdir: pathlib.Path) -> None:
        (workdir / "zk").mkdir()
        self.zookeeper = ZooKeeperServer(workdir / "zk").start()
        chroot = unique_chroot("bench-replication")
        self.brokers = [BrokerProcess(workdir / f"broker{i}", self.zookeeper.connect_string, chroot, i,
                                      overrides=PROPS) for i in range(3)]
        for b in self.brokers:
            b.start(wait=False)
        for b in self.brokers:
            b.wait_started()
        self.zk = self.brokers[0].zk()

    def close(self) -> None:
        self.zk.stop()
        for b in self.brokers:
            if b.running:
                b.kill()
        self.zookeeper.stop()

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers if b.running)

    def state(self, topic: str, p: int) -> dict:
        return json.loads(self.zk.get(f"/brokers/topics/{topic}/partitions/{p}/state")[0])

    def controller(self) -> int:
        return int(json.loads(self.zk.get("/controller")[0])["brokerid"])

    def create(self, topic: str, assignment: dict[int, list[int]], **configs: str) -> None:
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=60000)
        try:
            admin.create_topics([NewTopic(topic, replica_assignments=assignment, topic_configs=configs)],
                                timeout_ms=60000)
        finally:
            admin.close()
        for p in assignment:
            wait_until(lambda: self.zk.exists(f"/brokers/topics/{topic}/partitions/{p}/state") is not None
                       and self.state(topic, p)["leader"] >= 0
                       and len(self.state(topic, p)["isr"]) == len(assignment[p]), 60, f"{topic}-{p} ready", 0.1)

    def delete(self, topic: str, timeout: float = 60) -> None:
        """Delete ``topic`` and wait until no broker has a file of it left (page cache freed)."""
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=60000)
        try:
            admin.delete_topics([topic], timeout_ms=60000)
        finally:
            admin.close()

        def gone() -> bool:
            return not any(d.name.startswith(f"{topic}-") for b in self.brokers if b.log_dir.exists()
                           for d in b.log_dir.iterdir())
        wait_until(gone, timeout, f"{topic} files deleted", 0.1)

    def full_isr(self, topics: dict[str, int]) -> bool:
        return all(sorted(self.state(t, p)["isr"]) == [0, 1, 2] for t, n in topics.items() for p in range(n))


def cpu_seconds(pids: list[int], system_only: bool = False) -> list[float]:
    """User + system CPU seconds (system alone with ``system_only``) of each process so far,
    and of this one last."""
    ticks = os.sysconf("SC_CLK_TCK")
    out = []
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out.append(((0 if system_only else int(fields[11])) + int(fields[12])) / ticks)
    own = os.times()
    out.append((0.0 if system_only else own.user) + own.system)
    return out


def machine_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs so far, from /proc/stat (idle and iowait are not busy)."""
    with open("/proc/stat") as f:
        # user nice system idle iowait irq softirq steal (guest time is counted in user already)
        values = [int(v) for v in f.readline().split()[1:9]]
    return sum(values) - values[3] - values[4], sum(values)


def per_mb(after: list[float], before: list[float], megabytes: float) -> list[float]:
    return [round((a - b) * 1000 / megabytes, 2) for a, b in zip(after, before)]


def usage(pids: list[int]) -> tuple[list[float], list[float], tuple[int, int]]:
    """CPU seconds of each process and this one, their system part, and the machine's jiffies."""
    return cpu_seconds(pids), cpu_seconds(pids, True), machine_jiffies()


def produce_rate(bootstrap: str, topic: str, acks: str, size: int, count: int, partitions: int = 1,
                 pids: tuple[int, ...] = ()) -> tuple[float, tuple, tuple]:
    """Records/s of one producer run, and ``usage`` of ``pids`` when the clock started and stopped."""
    payload = os.urandom(size)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 5, "batch.size": 1000000,
                         "enable.idempotence": False, "queue.buffering.max.messages": 2000000})
    errors = []
    for p in range(partitions):  # connections and metadata before the clock
        producer.produce(topic, payload, partition=p)
    producer.flush(60)
    start_usage = usage(list(pids))
    start = time.perf_counter()
    for i in range(count):
        while True:
            try:
                producer.produce(topic, payload, partition=i % partitions,
                                 on_delivery=lambda err, msg: errors.append(err) if err else None)
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(300)
    elapsed = time.perf_counter() - start
    end_usage = usage(list(pids))
    assert not errors, errors[:3]
    return count / elapsed, start_usage, end_usage


def bench_throughput(bench: Bench, rounds: int, partitions: int = 1) -> list[dict]:
    rows = []
    for size, count in ((100, 200_000), (10_000, 20_000)):
        rf1, rf3, ratios = [], [], []
        cpu_rows: dict[str, list[list[float]]] = {"rf1": [], "rf3": []}
        system_rows: dict[str, list[list[float]]] = {"rf1": [], "rf3": []}
        busy_rows: dict[str, list[float]] = {"rf1": [], "rf3": []}
        for r in range(rounds):
            pair = {}
            order = ["rf1", "rf3"] if r % 2 == 0 else ["rf3", "rf1"]
            cpu, system, busy = {}, {}, {}
            pids = [b.process.pid for b in bench.brokers]
            for kind in order:
                topic = f"tp-{kind}-{size}-{uuid.uuid4().hex[:6]}"
                if kind == "rf1":
                    bench.create(topic, {p: [p % 3] for p in range(partitions)})
                else:
                    bench.create(topic, {p: [(p + k) % 3 for k in range(3)] for p in range(partitions)},
                                 **{"min.insync.replicas": "2"})
                # CPU and the machine's busy share over the timed part only (connections,
                # metadata and the first records come before it)
                pair[kind], (before, system_before, machine_before), (after, system_after, machine_after) = \
                    produce_rate(bench.bootstrap, topic, "1" if kind == "rf1" else "all", size, count, partitions,
                                 tuple(pids))
                # brokers 0 (the leader of a one-partition topic), 1 and 2, client: ms of CPU per MB of values
                megabytes = size * count / 1e6
                cpu[kind] = per_mb(after, before, megabytes)
                cpu_rows[kind].append(cpu[kind])
                system[kind] = per_mb(system_after, system_before, megabytes)
                system_rows[kind].append(system[kind])
                busy[kind] = round((machine_after[0] - machine_before[0])
                                   / max(1, machine_after[1] - machine_before[1]), 2)
                busy_rows[kind].append(busy[kind])
                # Free the page cache this run filled before the next one: on this VM a page
                # the kernel has not used for a while costs about ten times as much to write
                # the first time (docs/performance.md), and RF=3 writes three copies.
                bench.delete(topic)
            rf1.append(pair["rf1"])
            rf3.append(pair["rf3"])
            ratios.append(pair["rf3"] / pair["rf1"])
            print(f"throughput {size} B round {r}: RF=1 acks=1 {pair['rf1']:.0f}/s, RF=3 acks=all "
                  f"{pair['rf3']:.0f}/s, ratio {ratios[-1]:.2f}; CPU ms/MB (broker 0, broker 1, broker 2, "
                  f"client) RF=1 {cpu['rf1']}, RF=3 {cpu['rf3']}; of it system RF=1 {system['rf1']}, "
                  f"RF=3 {system['rf3']}; machine busy RF=1 {busy['rf1']}, RF=3 {busy['rf3']}", flush=True)
        rows.append({"size": size, "rf1_records_s": statistics.median(rf1), "rf3_records_s": statistics.median(rf3),
                     "rf1_mb_s": statistics.median(rf1) * size / 1e6, "rf3_mb_s": statistics.median(rf3) * size / 1e6,
                     "ratio": statistics.median(ratios), "ratios": ratios,
                     "cpu_ms_per_mb": {kind: [statistics.median(c[i] for c in cpu_rows[kind]) for i in range(4)]
                                       for kind in cpu_rows},
                     "system_ms_per_mb": {kind: [statistics.median(c[i] for c in system_rows[kind]) for i in range(4)]
                                          for kind in system_rows},
                     "machine_busy": {kind: statistics.median(busy_rows[kind]) for kind in busy_rows}})
    return rows


def segment_bytes(broker: BrokerProcess, topic: str) -> int:
    d = broker.log_dir / f"{topic}-0"
    return sum(f.stat().st_size for f in d.glob("*.log")) if d.exists() else 0


def bench_catchup(bench: Bench, rounds: int, megabytes: int) -> list[float]:
    rates = []
    for r in range(rounds):
        topic = f"catchup-{uuid.uuid4().hex[:6]}"
        bench.create(topic, {0: [0, 1, 2]})
        follower = bench.brokers[2 if bench.controller() != 2 else 1]
        assert follower.stop() == 0
        size = 100_000
        produce_rate(bench.bootstrap, topic, "1", size, megabytes * 1_000_000 // size)
        leader = bench.brokers[bench.state(topic, 0)["leader"]]
        wait_until(lambda: segment_bytes(leader, topic) >= megabytes * 1_000_000, 120, "leader has it all", 0.1)
        target = segment_bytes(leader, topic)
        behind = target - segment_bytes(follower, topic)
        follower.start(wait=False)
        follower.wait_started()
        marker_seen = time.perf_counter()
        # the broker was started (its log lines say when); count from the "started" line being seen
        wait_until(lambda: segment_bytes(follower, topic) >= target, 600, "follower caught up", 0.02)
        elapsed = time.perf_counter() - marker_seen
        rates.append(behind / elapsed / 1e6)
        print(f"catch-up round {r}: {behind / 1e6:.0f} MB behind, {elapsed:.2f} s, {rates[-1]:.0f} MB/s", flush=True)
        # files gone before the next round, as between throughput runs: its appends then land in
        # the page-cache pages this round freed, not in memory the VM has to back first
        bench.delete(topic, timeout=120)
    return rates


def bench_failover(bench: Bench, rounds: int) -> list[float]:
    times = []
    for r in range(rounds):
        topic = f"failover-{uuid.uuid4().hex[:6]}"
        controller = bench.controller()
        victim = next(b for b in (2, 1, 0) if b != controller)
        others = [b for b in (0, 1, 2) if b != victim]
        bench.create(topic, {0: [victim] + others}, **{"min.insync.replicas": "2"})
        producer = Producer({"bootstrap.servers": bench.bootstrap, "acks": "all", "linger.ms": 0,
                             "message.timeout.ms": 120000, "retry.backoff.ms": 50,
                             "topic.metadata.refresh.interval.ms": 1000})
        acked = []
        for i in range(20):
            producer.produce(topic, b"x", partition=0, on_delivery=lambda e, m: acked.append(e))
            producer.flush(30)
        assert acked and all(e is None for e in acked), acked
        killed = time.perf_counter()
        bench.brokers[victim].kill()
        ok: list[float] = []
        deadline = time.monotonic() + 120
        while not ok and time.monotonic() < deadline:
            producer.produce(topic, b"y", partition=0,
                             on_delivery=lambda e, m: ok.append(time.perf_counter()) if e is None else None)
            producer.flush(120)
        times.append(ok[0] - killed)
        print(f"failover round {r}: first acks=all record acknowledged {times[-1]:.2f} s after kill -9 "
              f"(zookeeper.session.timeout.ms={SESSION_MS})", flush=True)
        bench.brokers[victim].restart()
        wait_until(lambda: bench.full_isr({topic: 1}), 120, "ISR full again", 0.2)
    return times


def bench_shutdown(bench: Bench, rounds: int, partitions: int = 100) -> list[tuple[float, int]]:
    topic = f"shutdown-{uuid.uuid4().hex[:6]}"
    bench.create(topic, {p: [(p + k) % 3 for k in range(3)] for p in range(partitions)})
    results = []
    for r in range(rounds):
        wait_until(lambda: bench.full_isr({topic: partitions}), 120, "ISR full", 0.2)
        leaders = [bench.state(topic, p)["leader"] for p in range(partitions)]
        stopping = max((0, 1, 2), key=leaders.count)
        moved = leaders.count(stopping)
        broker = bench.brokers[stopping]
        start = time.perf_counter()
        broker.process.send_signal(15)

        def gone() -> bool:
            results = [bench.zk.get_async(f"/brokers/topics/{topic}/partitions/{p}/state") for p in range(partitions)]
            return all(json.loads(x.get()[0])["leader"] != stopping for x in results)

        wait_until(gone, 120, "leaderships moved", 0.01)
        elapsed = time.perf_counter() - start
        assert broker.stop() == 0
        results.append((elapsed, moved))
        print(f"shutdown round {r}: {moved} leaderships off broker {stopping} in {elapsed:.2f} s", flush=True)
        broker.start()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--catchup-mb", type=int, default=1024)
    parser.add_argument("--only", nargs="*", default=["throughput", "catchup", "failover", "shutdown"])
    parser.add_argument("--partitions", type=int, default=1,
                        help="throughput: partitions per topic, their leaders spread over the brokers")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="a broker config for all three brokers (repeatable)")
    args = parser.parse_args()
    for item in args.override:
        key, _, value = item.partition("=")
        PROPS[key] = value
    print(f"{datetime.datetime.now().isoformat(timespec='seconds')}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}, overrides {args.override}, partitions {args.partitions}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-replication-") as tmp:
        bench = Bench(pathlib.Path(tmp))
        summary: dict = {}
        try:
            if "throughput" in args.only:
                summary["throughput"] = bench_throughput(bench, args.rounds, args.partitions)
            if "catchup" in args.only:
                summary["catchup_mb_s"] = statistics.median(bench_catchup(bench, args.rounds, args.catchup_mb))
            if "failover" in args.only:
                summary["failover_s"] = statistics.median(bench_failover(bench, args.rounds))
                summary["session_timeout_s"] = SESSION_MS / 1000
            if "shutdown" in args.only:
                res = bench_shutdown(bench, args.rounds)
                summary["shutdown_s"] = statistics.median(t for t, _ in res)
                summary["shutdown_moved"] = [m for _, m in res]
        finally:
            bench.close()
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
