"""The ``kafka-log`` source as a stream, and its sink, against their batch and client baselines.

No Kafka counterpart. Three measurements, each against its baseline in the same run:

* ``read``: ``readStream`` with Trigger.AvailableNow into the ``noop`` sink over a log dir of
  ``--records`` 100-byte records (written by benchmarks/bench_spark_read.py's writer, two
  partitions, with a replication-offset-checkpoint at their ends), against
  ``spark.read`` of the same files into ``noop``; best of ``--runs`` each, alternating;
* ``latency``: a broker (kafka-py, started here with a ZooKeeper), a producer sending
  ``--latency-rate`` records/s with acks=all, and a stream with a 1 s trigger and
  ``kafka.bootstrap.servers``; per record, the time from its acknowledgement (librdkafka's
  delivery report) to the moment its row is in the driver (foreachBatch, after collect):
  p50, p99, max;
* ``sink``: ``--sink-rows`` rows of 100-byte values written with ``df.write.format("kafka-log")``
  into one partition of that broker (acks=all, idempotent, as the sink's defaults), timed after
  a 20,000-row warm-up write in two tasks (Python workers started, producers connected), against
  /work/shared/tools/kbench.py's producers (acks=all) in the same run: confluent-kafka, the
  goal's baseline, and kafka-python, the other maintained client (``--kbench-clients``).

Run from the repository root::

    .venv/bin/python benchmarks/bench_spark_streaming.py [--records 10000000] [--runs 3] \\
        [--latency-seconds 60] [--latency-rate 200] [--sink-rows 1000000] [--only read,latency,sink] \\
        [--sink-option kafka.linger.ms=20] [--kbench-clients confluent,kafka-python]
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KBENCH = pathlib.Path("/work/shared/tools/kbench.py")


def session(master: str):
    from pyspark.sql import SparkSession

    from kafka_py.spark import register

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (SparkSession.builder.master(master).appName("bench-spark-streaming")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.sql.shuffle.partitions", "2")
             .config("spark.log.level", "WARN").getOrCreate())
    register(spark)
    return spark


# ---------------------------------------------------------------------------- read

def write_log_dir(log_dir: str, records: int) -> None:
    from benchmarks.bench_spark_read import write_topic
    from kafka_py.clients.common.topic_partition import TopicPartition
    from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile

    per_partition = records // 2
    if not os.path.isdir(os.path.join(log_dir, "stream-100b-0")):
        os.makedirs(log_dir, exist_ok=True)
        tmp = tempfile.mkdtemp(dir=log_dir)
        for p in range(2):
            write_topic(tmp, "stream-100b", per_partition, 100)
            os.rename(os.path.join(tmp, "stream-100b-0"), os.path.join(log_dir, f"stream-100b-{p}"))
        os.rmdir(tmp)
    OffsetCheckpointFile(os.path.join(log_dir, "replication-offset-checkpoint")).write(
        {TopicPartition("stream-100b", p): per_partition for p in range(2)})


def bench_read(spark, log_dir: str, runs: int) -> dict:
    def batch() -> float:
        start = time.perf_counter()
        spark.read.format("kafka-log").option("subscribe", "stream-100b").load(log_dir) \
            .write.format("noop").mode("overwrite").save()
        return time.perf_counter() - start

    def stream(n: int) -> float:
        checkpoint = tempfile.mkdtemp(prefix="bench-stream-cp-")
        df = spark.readStream.format("kafka-log").option("subscribe", "stream-100b").load(log_dir)
        start = time.perf_counter()
        query = df.writeStream.format("noop").option("checkpointLocation", checkpoint) \
            .trigger(availableNow=True).start()
        query.awaitTermination()
        seconds = time.perf_counter() - start
        rows = sum(p["numInputRows"] for p in query.recentProgress)
        if rows != n:
            raise RuntimeError(f"the stream read {rows} rows, not {n}")
        return seconds

    n = spark.read.format("kafka-log").option("subscribe", "stream-100b").load(log_dir).count()
    batch()  # warm-up: JIT, Python workers
    batch_s, stream_s = [], []
    for _ in range(runs):
        stream_s.append(stream(n))
        batch_s.append(batch())
    return {"records": n, "batch_s": batch_s, "stream_s": stream_s,
            "batch_records_per_s": n / min(batch_s), "stream_records_per_s": n / min(stream_s),
            "stream_over_batch": min(batch_s) / min(stream_s)}


# ---------------------------------------------------------------------------- a broker

class Cluster:
    def __init__(self, workdir: pathlib.Path) -> None:
        from tests.integration.broker_harness import BrokerProcess, unique_chroot
        from tests.zookeeper_harness import ZooKeeperServer

        (workdir / "zk").mkdir(parents=True, exist_ok=True)
        self.zk = ZooKeeperServer(workdir / "zk").start()
        self.broker = BrokerProcess(workdir / "broker", self.zk.connect_string, unique_chroot()).start()

    def create_topic(self, name: str, partitions: int) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.broker.bootstrap})
        for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
            f.result(30)

    def stop(self) -> None:
        self.broker.stop()
        self.zk.stop()


def bench_latency(spark, cluster: Cluster, seconds: float, rate: int) -> dict:
    from confluent_kafka import Producer

    topic = "latency"
    cluster.create_topic(topic, 2)
    acked: dict[tuple[int, int], float] = {}
    seen: dict[tuple[int, int], float] = {}
    lock = threading.Lock()

    def on_row_batch(df, _batch_id) -> None:
        rows = df.select("partition", "offset").collect()
        now = time.time()
        with lock:
            for r in rows:
                seen.setdefault((r["partition"], r["offset"]), now)

    df = (spark.readStream.format("kafka-log").option("subscribe", topic)
          .option("kafka.bootstrap.servers", cluster.broker.bootstrap).load(str(cluster.broker.log_dir)))
    query = (df.writeStream.foreachBatch(on_row_batch).option("checkpointLocation", tempfile.mkdtemp())
             .trigger(processingTime="1 second").start())

    def delivered(err, msg) -> None:
        if err is None:
            with lock:
                acked[(msg.partition(), msg.offset())] = time.time()

    producer = Producer({"bootstrap.servers": cluster.broker.bootstrap, "acks": "all", "linger.ms": 0,
                         "on_delivery": delivered})
    value = os.urandom(100)
    try:
        start = time.monotonic()
        sent = 0
        while time.monotonic() - start < seconds:
            producer.produce(topic, value, partition=sent % 2)
            sent += 1
            producer.poll(0)
            time.sleep(max(0.0, start + sent / rate - time.monotonic()))
        producer.flush(30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with lock:
                if all(k in seen for k in acked):
                    break
            time.sleep(0.2)
    finally:
        query.stop()
    with lock:
        latencies = sorted((seen[k] - t) * 1000 for k, t in acked.items() if k in seen)
        missing = len([k for k in acked if k not in seen])
    return {"records": len(acked), "missing": missing,
            "p50_ms": statistics.median(latencies),
            "p99_ms": latencies[int(0.99 * (len(latencies) - 1))], "max_ms": latencies[-1]}


# ---------------------------------------------------------------------------- sink

def run_kbench(bootstrap: str, client: str, rows: int) -> dict:
    done = subprocess.run([sys.executable, str(KBENCH), bootstrap, "--client", client,
                           "--n", str(rows), "--size", "100", "--acks", "all", "--lat-n", "10"],
                          capture_output=True, text=True, timeout=900)
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    return json.loads(line[-1]) if line else {"error": done.stderr[-2000:]}


def bench_sink(spark, cluster: Cluster, rows: int, options: dict, clients: list[str]) -> dict:
    from pyspark.sql import functions as F

    topic = "sink-100b"
    cluster.create_topic(topic, 1)
    def values(n: int):
        return spark.range(0, n, 1, 2).select(F.expr("unhex(repeat('ab', 100))").alias("value"))

    df = values(rows).cache()
    df.count()
    writer = (df.write.format("kafka-log").option("kafka.bootstrap.servers", cluster.broker.bootstrap)
              .option("topic", topic).mode("append"))
    for key, value in options.items():
        writer = writer.option(key, value)
    # Warm-up, as kbench's own timing starts after its producer exists: the Python workers
    # start and import the sink (pyarrow, confluent-kafka), the producers connect.
    warm = (values(20_000).write.format("kafka-log").option("kafka.bootstrap.servers", cluster.broker.bootstrap)
            .option("topic", topic).mode("append"))
    for key, value in options.items():
        warm = warm.option(key, value)
    warm.save()
    start = time.perf_counter()
    writer.save()
    sink_s = time.perf_counter() - start
    result = {"rows": rows, "options": options, "sink_s": sink_s, "sink_records_per_s": rows / sink_s}
    if KBENCH.exists():
        # The sink's goal is against confluent-kafka; other clients (kafka-python) show what
        # choosing the producer library is worth.
        for client in clients:
            kbench = run_kbench(cluster.broker.bootstrap, client, rows)
            result.setdefault("kbench", {})[client] = kbench
            produce_rate = kbench.get("produce_rps")
            if produce_rate:
                result.setdefault("kbench_produce_records_per_s", {})[client] = produce_rate
                result.setdefault("sink_over_kbench", {})[client] = result["sink_records_per_s"] / produce_rate
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency-seconds", type=float, default=60)
    parser.add_argument("--latency-rate", type=int, default=200)
    parser.add_argument("--sink-rows", type=int, default=1_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--dir", default="/tmp/bench-spark-streaming")
    parser.add_argument("--only", default="read,latency,sink")
    parser.add_argument("--kbench-clients", default="confluent,kafka-python",
                        help="kbench's producers to run against the sink, comma-separated")
    parser.add_argument("--sink-option", action="append", default=[],
                        help="An extra sink option key=value (e.g. kafka.linger.ms=20); repeat for several.")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    workdir = pathlib.Path(args.dir)
    workdir.mkdir(parents=True, exist_ok=True)
    results: dict = {"master": args.master, "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    if "read" in parts:
        write_log_dir(str(workdir / "read-logs"), args.records)
    spark = session(args.master)
    try:
        if "read" in parts:
            results["read"] = bench_read(spark, str(workdir / "read-logs"), args.runs)
            print(json.dumps({"read": results["read"]}), flush=True)
        if parts & {"latency", "sink"}:
            cluster = Cluster(pathlib.Path(tempfile.mkdtemp(prefix="cluster-", dir=workdir)))
            try:
                if "latency" in parts:
                    results["latency"] = bench_latency(spark, cluster, args.latency_seconds, args.latency_rate)
                    print(json.dumps({"latency": results["latency"]}), flush=True)
                if "sink" in parts:
                    results["sink"] = bench_sink(spark, cluster, args.sink_rows,
                                                 dict(o.split("=", 1) for o in args.sink_option),
                                                 args.kbench_clients.split(","))
                    print(json.dumps({"sink": results["sink"]}), flush=True)
            finally:
                cluster.stop()
    finally:
        spark.stop()
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
