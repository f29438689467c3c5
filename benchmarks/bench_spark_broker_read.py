"""The ``kafka-log`` Spark source read through the brokers, against the log-dir read and a consumer.

No Kafka counterpart. Starts a kafka-py broker (kafka_py.testing, KRaft), produces ``--records``
records of ``--value-bytes`` bytes into a topic of ``--partitions`` partitions with
confluent-kafka, waits until the high watermark is checkpointed, then measures in one run:

* ``spark log dirs``: ``spark.read.format("kafka-log").load(<the broker's log dir>)``;
* ``spark brokers``: the same read with ``kafka.bootstrap.servers`` and no path, each Spark task
  fetching its partition from the leader (kafka_py/spark/broker_reader.py);
* ``1 process``: the executors' code of each path (segment_reader.read_slice,
  broker_reader.read_broker_slice) run one slice after another in this process, without Spark;
* ``confluent-kafka``: one consumer in this process (librdkafka, ``consume(10000)`` batches,
  every partition assigned from its start) reading the topic to its end, touching each
  message's value, the way a plain Python job would read it.

Both Spark reads are first checked to find every record (``count()``), then timed
materialising every column (``write.format("noop")``) on ``--master`` (``local[2]``), best of
``--runs`` after a warm-up run. Run::

    .venv/bin/python benchmarks/bench_spark_broker_read.py [--records 1000000] [--value-bytes 100]
        [--partitions 2] [--compression none] [--runs 3] [--master local[2]]
"""
from __future__ import annotations

import argparse
import os
import sys
import time


def produce(bootstrap: str, topic: str, records: int, value_bytes: int, partitions: int, compression: str) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 262144,
                         "compression.type": compression, "queue.buffering.max.messages": 1_000_000})
    value = os.urandom(value_bytes)
    for i in range(records):
        while True:
            try:
                producer.produce(topic, value=value, key=b"key-%09d" % i, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10000 == 0:
            producer.poll(0)
    producer.flush(300)


def bench_spark(spark, options: dict, path, runs: int, records: int) -> float:
    def load():
        reader = spark.read.format("kafka-log")
        for key, value in options.items():
            reader = reader.option(key, value)
        return reader.load(path) if path else reader.load()

    counted = load().count()
    if counted != records:
        raise SystemExit(f"the read with {options} found {counted:,} records, not {records:,}")
    best = float("inf")
    for run in range(runs + 1):
        df = load()
        start = time.perf_counter()
        df.write.format("noop").mode("overwrite").save()
        elapsed = time.perf_counter() - start
        if run:  # the first run warms the JVM and the Python workers
            best = min(best, elapsed)
    return best


def bench_executor_code(bootstrap: str, log_dir: str, topic: str, records: int, runs: int) -> tuple[float, float]:
    """The executors' code of both paths in this process, without Spark: (log dirs, brokers)."""
    from kafka_py.spark.broker_planner import BrokerPlanner
    from kafka_py.spark.broker_reader import read_broker_slice
    from kafka_py.spark.log_dir_planner import LogDirPlanner
    from kafka_py.spark.options import KafkaLogOptions
    from kafka_py.spark.segment_reader import read_slice

    file_options = KafkaLogOptions.parse({"path": log_dir, "subscribe": topic})
    file_slices = LogDirPlanner(file_options.paths).plan(file_options)
    planner = BrokerPlanner(KafkaLogOptions.parse({"kafka.bootstrap.servers": bootstrap, "subscribe": topic}))
    broker_slices = planner.plan()
    planner.close()
    best = [float("inf"), float("inf")]
    for run in range(runs + 1):
        for i, read in enumerate((lambda: (b for s in file_slices for b in read_slice(s)),
                                  lambda: (b for s in broker_slices for b in read_broker_slice(s)))):
            start = time.perf_counter()
            count = sum(batch.num_rows for batch in read())
            elapsed = time.perf_counter() - start
            if count != records:
                raise SystemExit(f"the executor code read {count:,} records, not {records:,}")
            if run:
                best[i] = min(best[i], elapsed)
    return best[0], best[1]


def bench_consumer(bootstrap: str, topic: str, partitions: int, records: int) -> float:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-spark-broker-read",
                         "enable.auto.commit": False, "fetch.max.bytes": 52428800,
                         "max.partition.fetch.bytes": 8388608})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    start = time.perf_counter()
    count = 0
    size = 0
    deadline = time.monotonic() + 600
    while count < records and time.monotonic() < deadline:
        for message in consumer.consume(10000, timeout=1.0):
            if message.error() is None:
                count += 1
                size += len(message.value())
    elapsed = time.perf_counter() - start
    consumer.close()
    if count < records:
        raise SystemExit(f"the consumer read {count} of {records} records within 600 s")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--compression", default="none")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()

    from kafka.admin import KafkaAdminClient, NewTopic
    from pyspark.sql import SparkSession

    from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile
    from kafka_py.spark import register
    from kafka_py.testing import KafkaCluster
    from kafka_py.testing.cluster import wait_until

    topic = "bench-broker-read"
    with KafkaCluster(1, overrides={"replica.high.watermark.checkpoint.interval.ms": 200,
                                    "log.segment.bytes": 256 * 1024 * 1024}) as cluster:
        bootstrap = cluster.bootstrap_servers
        log_dir = str(cluster.brokers[1].log_dir)
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        admin.create_topics([NewTopic(topic, args.partitions, 1, topic_configs={"retention.ms": "-1"})])
        admin.close()
        start = time.perf_counter()
        produce(bootstrap, topic, args.records, args.value_bytes, args.partitions, args.compression)
        print(f"produced {args.records:,} records in {time.perf_counter() - start:.1f} s", file=sys.stderr)

        def checkpointed() -> bool:
            path = os.path.join(log_dir, "replication-offset-checkpoint")
            if not os.path.exists(path):
                return False
            return sum(OffsetCheckpointFile(path).read().get(tp, 0) for tp in
                       OffsetCheckpointFile(path).read() if tp.topic == topic) >= args.records

        wait_until(checkpointed, 120, "the high watermark was never checkpointed")

        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        spark = (SparkSession.builder.master(args.master).appName("bench-spark-broker-read")
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                 .config("spark.driver.memory", "2g").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)
        try:
            results = [
                ("spark log dirs", bench_spark(spark, {"subscribe": topic}, log_dir, args.runs, args.records)),
                ("spark brokers", bench_spark(spark, {"subscribe": topic, "kafka.bootstrap.servers": bootstrap},
                                              None, args.runs, args.records)),
            ]
        finally:
            spark.stop()
        files, brokers = bench_executor_code(bootstrap, log_dir, topic, args.records, args.runs)
        results.append(("1 process: log dirs", files))
        results.append(("1 process: brokers", brokers))
        results.append(("confluent-kafka consumer", bench_consumer(bootstrap, topic, args.partitions, args.records)))

    print(f"{args.records:,} records of {args.value_bytes} B, {args.partitions} partitions, "
          f"compression {args.compression}, {args.master}, best of {args.runs}")
    print(f"{'read':<26} {'seconds':>8} {'records/s':>12}")
    base = results[0][1]
    for name, seconds in results:
        print(f"{name:<26} {seconds:>8.2f} {args.records / seconds:>12,.0f}   ({base / seconds:.0%} of the log-dir read)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
