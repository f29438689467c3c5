"""Soak: a kafka-py broker under steady load and topic churn for N minutes; does it grow?

Starts a real ZooKeeper (``bin/zookeeper-server-start.sh``) and one broker process
(``python -m kafka_py.core.kafka``, replication factor 1), then runs at once, for ``--minutes``
(default 60):

* steady load: a confluent-kafka producer sends ``--rate`` records/s (100-byte values,
  acks=all, idempotent) to ``--topics`` topics of 4 partitions, and a consumer group reads
  them back and commits;
* churn: every ``--churn-seconds`` a 2-partition topic is created, one record produced to
  each partition, read back by a consumer of a group of its own with committed offsets,
  and the topic deleted; the next one starts once the deletion has completed.

Every minute it prints the broker's anonymous RSS, file-backed RSS, open descriptors and
threads (from /proc/<pid>), and the records and topics done so far; at the end the
least-squares slope of each over the minutes after ``--warmup-minutes`` (per hour), and
whether the load kept up. The goal: anonymous RSS slope <= 1 MB per hour, descriptors and
threads flat.

Usage::

    .venv/bin/python benchmarks/soak_broker.py [--minutes 60] [--json out.json]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import shutil
import signal
import sys
import tempfile
import threading
import time
import uuid

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from tests.integration.broker_harness import BrokerProcess, unique_chroot  # noqa: E402
from tests.zookeeper_harness import ZooKeeperServer  # noqa: E402


def sample(pid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key == "RssAnon":
                out["rss_anon_mb"] = int(value.split()[0]) / 1024
            elif key == "RssFile":
                out["rss_file_mb"] = int(value.split()[0]) / 1024
            elif key == "Threads":
                out["threads"] = int(value)
    out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return out


def slope_per_hour(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (minute, value) points, per hour."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in points) / sxx * 60


class Load:
    def __init__(self, bootstrap: str, topics: list[str], rate: int) -> None:
        self.bootstrap = bootstrap
        self.topics = topics
        self.rate = rate
        self.stop = threading.Event()
        self.produced = 0
        self.consumed = 0
        self.errors: list[str] = []

    def produce(self) -> None:
        producer = Producer({"bootstrap.servers": self.bootstrap, "acks": "all", "enable.idempotence": True,
                             "linger.ms": 5})
        value = b"x" * 100

        def delivered(err, _msg) -> None:
            if err is not None:
                self.errors.append(str(err))
            else:
                self.produced += 1

        tick = 0.1
        per_tick = max(1, int(self.rate * tick))
        next_at = time.monotonic()
        i = 0
        while not self.stop.is_set():
            for _ in range(per_tick):
                producer.produce(self.topics[i % len(self.topics)], value, on_delivery=delivered)
                i += 1
            producer.poll(0)
            next_at += tick
            self.stop.wait(max(0.0, next_at - time.monotonic()))
        producer.flush(30)

    def consume(self) -> None:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "soak-steady",
                             "auto.offset.reset": "earliest", "enable.auto.commit": True})
        consumer.subscribe(self.topics)
        try:
            while not self.stop.is_set():
                for message in consumer.consume(500, 0.5):
                    if message.error() is None:
                        self.consumed += 1
        finally:
            consumer.close()


class Churn:
    """Create, use and delete 2-partition topics, one at a time."""

    def __init__(self, bootstrap: str, every_s: float) -> None:
        self.bootstrap = bootstrap
        self.every_s = every_s
        self.stop = threading.Event()
        self.done = 0
        self.errors: list[str] = []
        self.admin = AdminClient({"bootstrap.servers": bootstrap})

    def _topic_exists(self, topic: str) -> bool:
        return topic in self.admin.list_topics(timeout=30).topics

    def _wait(self, condition, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not self.stop.is_set():
            if condition():
                return True
            time.sleep(0.2)
        return False

    def one(self, n: int) -> None:
        topic = f"churn-{uuid.uuid4().hex[:8]}-{n}"
        self.admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
        producer = Producer({"bootstrap.servers": self.bootstrap, "acks": "all", "enable.idempotence": True})
        for p in range(2):
            producer.produce(topic, b"churn", partition=p)
        if producer.flush(30):
            raise KafkaException(f"churn records to {topic} not delivered")
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": f"{topic}-group",
                             "auto.offset.reset": "earliest", "enable.auto.commit": False})
        try:
            consumer.assign([TopicPartition(topic, p, 0) for p in range(2)])
            got = 0
            deadline = time.monotonic() + 30
            while got < 2 and time.monotonic() < deadline:
                got += sum(1 for m in consumer.consume(10, 0.5) if m.error() is None)
            consumer.commit(asynchronous=False)
        finally:
            consumer.close()
        self.admin.delete_topics([topic])[topic].result(30)
        if not self._wait(lambda: not self._topic_exists(topic), 60):
            raise KafkaException(f"{topic} not deleted")
        self.done += 1

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                self.one(n)
            except Exception as e:  # noqa: BLE001 - counted and printed, the soak goes on
                self.errors.append(repr(e))
            n += 1
            self.stop.wait(max(0.0, self.every_s - (time.monotonic() - started)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--warmup-minutes", type=float, default=None,
                        help="minutes left out of the slopes (default: a sixth of the run, at least 2)")
    parser.add_argument("--rate", type=int, default=500, help="steady records/s")
    parser.add_argument("--topics", type=int, default=4)
    parser.add_argument("--churn-seconds", type=float, default=3.0, help="one topic create/delete cycle per this")
    parser.add_argument("--dir", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    warmup = args.warmup_minutes if args.warmup_minutes is not None else max(2.0, args.minutes / 6)

    workdir = pathlib.Path(args.dir or tempfile.mkdtemp(prefix="soak-"))
    (workdir / "zookeeper").mkdir(parents=True, exist_ok=True)
    zk = ZooKeeperServer(workdir / "zookeeper").start()
    broker = BrokerProcess(workdir / "broker", zk.connect_string, unique_chroot("soak"),
                           overrides={"num.partitions": "4", "file.delete.delay.ms": "1000",
                                      "log.segment.bytes": str(16 << 20), "log.retention.bytes": str(64 << 20),
                                      "log.retention.check.interval.ms": "30000"})
    broker.start(timeout=120)
    pid = broker.process.pid
    steady_topics = [f"steady-{i}" for i in range(args.topics)]
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(t, 4, 1) for t in steady_topics]).values():
        f.result(30)
    load = Load(broker.bootstrap, steady_topics, args.rate)
    churn = Churn(broker.bootstrap, args.churn_seconds)
    threads = [threading.Thread(target=load.produce, daemon=True), threading.Thread(target=load.consume, daemon=True),
               threading.Thread(target=churn.run, daemon=True)]
    for t in threads:
        t.start()
    samples = []
    print(f"soak: {args.minutes} min, broker pid {pid}, {args.rate} records/s to {args.topics} topics, "
          f"a topic created and deleted every {args.churn_seconds} s; warm-up {warmup} min", flush=True)
    print("minute  rss_anon_mb  rss_file_mb  fds  threads  produced  consumed  churned  errors", flush=True)
    start = time.monotonic()
    try:
        minute = 0
        while minute < args.minutes:
            minute += 1
            time.sleep(max(0.0, start + minute * 60 - time.monotonic()))
            if broker.process.poll() is not None:
                raise RuntimeError(f"broker exited:\n{broker.tail()}")
            s = sample(pid)
            s.update(minute=minute, produced=load.produced, consumed=load.consumed, churned=churn.done,
                     errors=len(load.errors) + len(churn.errors))
            samples.append(s)
            print(f"{minute:6d}  {s['rss_anon_mb']:11.1f}  {s['rss_file_mb']:11.1f}  {s['fds']:3d}  {s['threads']:7d}"
                  f"  {s['produced']:8d}  {s['consumed']:8d}  {s['churned']:7d}  {s['errors']:6d}", flush=True)
    finally:
        load.stop.set()
        churn.stop.set()
        for t in threads:
            t.join(60)
        code = broker.stop(timeout=300) if broker.running else None
        zk.stop()
    after = [s for s in samples if s["minute"] > warmup]
    slopes = {key: round(slope_per_hour([(s["minute"], s[key]) for s in after]), 2)
              for key in ("rss_anon_mb", "rss_file_mb", "fds", "threads")}
    summary = {
        "date": datetime.datetime.now().isoformat(timespec="minutes"), "cpus": os.cpu_count(),
        "minutes": args.minutes, "warmup_minutes": warmup, "rate": args.rate, "churn_seconds": args.churn_seconds,
        "slopes_per_hour_after_warmup": slopes,
        "produced": load.produced, "consumed": load.consumed, "churned_topics": churn.done,
        "errors": (load.errors + churn.errors)[:10], "broker_exit_code": code,
        "first": samples[0] if samples else None, "last": samples[-1] if samples else None,
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"summary": summary, "samples": samples}, indent=1))
    if args.dir is None:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    main()
