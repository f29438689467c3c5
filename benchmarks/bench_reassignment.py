"""Partition reassignment benchmark: two kafka-py brokers and one ZooKeeper on this machine.

    .venv/bin/python benchmarks/bench_reassignment.py [--mb 1024] [--throttled-mb 1024] \
        [--throttle 10000000] [--rounds 1] [--only unthrottled throttled] [--override key=value ...]

A topic of one partition on broker 0 gets ``--mb`` MB (10,000-byte values from confluent-kafka,
acks=1), then ``bin/kafka-reassign-partitions.sh --execute`` moves it to broker 1, as an
operator would. Figures:

* ``unthrottled``: MB/s from the tool's start to the reassignment's end (the partition's
  znode lists only broker 1: the new replica caught up, joined the ISR, took the leadership,
  and broker 0's replica was removed), over the bytes of segment files moved.
* ``throttled``: the same with ``--throttle`` B/s (``leader.replication.throttled.rate`` and
  ``follower.replication.throttled.rate`` on both brokers, the topic's throttled replicas as
  the tool sets them), over ``--throttled-mb`` MB; then ``--verify`` removes the throttles.
  Besides the whole move, the rate broker 1's log grew at is sampled every 0.5 s and the
  median of its 5-second slopes reported (the steady rate, without the first fetches, which
  the quota lets through before it has measured anything).

Brokers are the test harness's (``tests/integration/broker_harness.py``), with their default
``replica.fetch.max.bytes`` (1 MiB) and 256 MiB segments; ``--override`` adds broker configs.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import statistics
import subprocess
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

PROPS = {"auto.leader.rebalance.enable": "false", "log.segment.bytes": str(256 << 20),
         "replica.lag.time.max.ms": "30000"}
VALUE = 10_000


class Bench:
    def __init__(self, workdir: pathlib.Path, overrides: dict[str, str]) -> None:
        (workdir / "zk").mkdir()
        self.workdir = workdir
        self.zookeeper = ZooKeeperServer(workdir / "zk").start()
        chroot = unique_chroot("bench-reassignment")
        self.brokers = [BrokerProcess(workdir / f"broker{i}", self.zookeeper.connect_string, chroot, i,
                                      overrides=dict(PROPS, **overrides)) for i in range(2)]
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
        return ",".join(b.bootstrap for b in self.brokers)

    def replicas(self, topic: str) -> tuple[list[int], bool]:
        znode = json.loads(self.zk.get(f"/brokers/topics/{topic}")[0])
        return znode["partitions"]["0"], bool(znode.get("adding_replicas") or znode.get("removing_replicas"))

    def create(self, topic: str) -> None:
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=60000)
        try:
            admin.create_topics([NewTopic(topic, replica_assignments={0: [0]})], timeout_ms=60000)
        finally:
            admin.close()
        wait_until(lambda: self.zk.exists(f"/brokers/topics/{topic}/partitions/0/state") is not None, 60,
                   f"{topic} ready", 0.1)

    def tool(self, *args: str) -> str:
        done = subprocess.run([str(ROOT / "bin" / "kafka-reassign-partitions.sh"), "--bootstrap-server",
                               self.bootstrap, *args], capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"kafka-reassign-partitions.sh {' '.join(args)} failed: {done.stdout}{done.stderr}")
        return done.stdout


def produce(bootstrap: str, topic: str, megabytes: int) -> None:
    payload = os.urandom(VALUE)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 5, "batch.size": 1000000,
                         "enable.idempotence": False, "queue.buffering.max.messages": 2000000})
    errors: list = []
    for _ in range(megabytes * 1_000_000 // VALUE):
        while True:
            try:
                producer.produce(topic, payload, partition=0,
                                 on_delivery=lambda err, msg: errors.append(err) if err else None)
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(600)
    assert not errors, errors[:3]


def segment_bytes(broker: BrokerProcess, topic: str) -> int:
    d = broker.log_dir / f"{topic}-0"
    try:
        return sum(f.stat().st_size for f in d.glob("*.log")) if d.exists() else 0
    except FileNotFoundError:  # a segment renamed for deletion this very moment
        return 0


def steady_rate(samples: list[tuple[float, int]], span: float = 5.0) -> float | None:
    """Median of the growth rates over ``span``-second stretches, in MB/s."""
    slopes = []
    j = 0
    for i, (t0, b0) in enumerate(samples):
        while j < len(samples) and samples[j][0] < t0 + span:
            j += 1
        if j == len(samples):
            break
        t1, b1 = samples[j]
        slopes.append((b1 - b0) / (t1 - t0) / 1e6)
    return statistics.median(slopes) if slopes else None


def move(bench: Bench, megabytes: int, throttle: int | None, workdir: pathlib.Path) -> dict:
    topic = f"moved-{uuid.uuid4().hex[:6]}"
    bench.create(topic)
    produce(bench.bootstrap, topic, megabytes)
    source, target = bench.brokers
    wait_until(lambda: segment_bytes(source, topic) >= megabytes * 1_000_000, 300, "the data is on broker 0", 0.1)
    size = segment_bytes(source, topic)
    plan = workdir / f"{topic}.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [1]}]}))
    args = ["--execute", "--reassignment-json-file", str(plan)]
    if throttle is not None:
        args += ["--throttle", str(throttle)]
    samples: list[tuple[float, int]] = []
    start = time.perf_counter()
    bench.tool(*args)
    deadline = time.monotonic() + max(600.0, 3 * megabytes * 1e6 / (throttle or 50e6))
    caught_up = None
    while bench.replicas(topic) != ([1], False):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{topic} was not moved: {bench.replicas(topic)}")
        now, copied = time.perf_counter(), segment_bytes(target, topic)
        samples.append((now, copied))
        if caught_up is None and copied >= size:
            caught_up = now
        time.sleep(0.5 if throttle is not None else 0.05)
    elapsed = time.perf_counter() - start
    verified = bench.tool("--verify", "--reassignment-json-file", str(plan))
    assert "is complete" in verified, verified
    result = {"mb": round(size / 1e6), "seconds": round(elapsed, 2), "mb_s": round(size / elapsed / 1e6, 1)}
    if caught_up is not None:
        # from the tool's start to the new replica holding every byte (its log, before the
        # controller's last steps)
        result["copy_mb_s"] = round(size / (caught_up - start) / 1e6, 1)
    if throttle is not None:
        steady = steady_rate(samples)
        result["steady_mb_s"] = None if steady is None else round(steady, 2)
        result["throttle_mb_s"] = throttle / 1e6
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--throttled-mb", type=int, default=1024)
    parser.add_argument("--throttle", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=["unthrottled", "throttled"])
    parser.add_argument("--override", nargs="*", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    overrides = dict(o.split("=", 1) for o in args.override)
    print(f"{datetime.datetime.now().isoformat(timespec='seconds')}, {os.cpu_count()} CPUs", flush=True)
    summary: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-reassignment-") as tmp:
        bench = Bench(pathlib.Path(tmp), overrides)
        try:
            for name in args.only:
                rounds = []
                for r in range(args.rounds):
                    if name == "unthrottled":
                        result = move(bench, args.mb, None, pathlib.Path(tmp))
                    else:
                        result = move(bench, args.throttled_mb, args.throttle, pathlib.Path(tmp))
                    print(f"{name} round {r}: {result}", flush=True)
                    rounds.append(result)
                summary[name] = rounds
        finally:
            bench.close()
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
