"""Fixtures of the Spark data source tests: one local SparkSession and one real broker per
session, with topics produced through kafka-python in every codec, headers, null keys and
values, small segments and several partitions."""
from __future__ import annotations

import dataclasses
import os
import pathlib
import shutil
import sys

import pytest

pyspark = pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from kafka import KafkaProducer  # noqa: E402
from kafka.admin import KafkaAdminClient, NewTopic  # noqa: E402

from tests.integration.broker_harness import BrokerProcess, unique_chroot, wait_until  # noqa: E402
from tests.spark import class_archive  # noqa: E402

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
SEGMENT_BYTES = 3000
BASE_TIMESTAMP = 1_700_000_000_000

#: JVM options of every Spark driver these tests start (the ``spark`` fixture's session,
#: bin/kafka-log-*.sh through spark-submit, the docs' snippet in a fresh Python): the JIT's
#: first tier only. Such a JVM lives a minute or two and runs little of its own code hot, so
#: the optimizing compiler's threads only take CPU from the tests; on two cores a Spark start
#: and its first job take about half as long without them.
#: The options go as one ``@file`` word with the class-data archive's (tests/spark/class_archive.py),
#: whose making starts here, in the background, the first time.
TEST_JVM_OPTIONS = class_archive.jvm_options("-XX:TieredStopAtLevel=1")
class_archive.start_making("-XX:TieredStopAtLevel=1")


def spark_script_env(**extra: str) -> dict[str, str]:
    """The environment of a bin/kafka-log-*.sh run: Spark on the loopback address, and
    TEST_JVM_OPTIONS for the driver (through the scripts' KAFKA_LOG_SPARK_SUBMIT_OPTS)."""
    return dict(os.environ, SPARK_LOCAL_IP="127.0.0.1",
                KAFKA_LOG_SPARK_SUBMIT_OPTS=f"--driver-java-options {TEST_JVM_OPTIONS}", **extra)


@dataclasses.dataclass(frozen=True)
class Produced:
    """One record as produced, in the data source's column order (timestamp in epoch ms)."""

    key: bytes | None
    value: bytes | None
    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    headers: tuple | None


def rows_of(df, with_headers: bool = True) -> list[Produced]:
    """The DataFrame's rows as Produced, sorted, with the timestamp read as epoch ms exactly."""
    from pyspark.sql import functions as F

    cols = [F.col("key"), F.col("value"), F.col("topic"), F.col("partition"), F.col("offset"),
            F.unix_micros("timestamp").alias("ts_us"), F.col("timestampType")]
    if with_headers:
        cols.append(F.col("headers"))
    out = []
    for r in df.select(*cols).collect():
        headers = None
        if with_headers and r["headers"] is not None:
            headers = tuple((h["key"], None if h["value"] is None else bytes(h["value"])) for h in r["headers"])
        out.append(Produced(
            None if r["key"] is None else bytes(r["key"]),
            None if r["value"] is None else bytes(r["value"]),
            r["topic"], r["partition"], r["offset"], r["ts_us"] // 1000, r["timestampType"], headers))
    return sorted(out, key=sort_key)


def sort_key(p: Produced):
    return (p.topic, p.partition, p.offset)


def without_headers(rows: list[Produced]) -> list[Produced]:
    return [dataclasses.replace(r, headers=None) for r in rows]


def record_content(i: int, topic: str) -> tuple:
    """Key, value and headers of the i-th record of a topic: nulls, empties, unicode, sizes."""
    key = None if i % 7 == 0 else f"key-{topic}-{i}".encode()
    if i % 11 == 0 and key is not None:  # a producer refuses a record with neither
        value = None
    elif i % 13 == 0:
        value = b""
    else:
        value = (f"value-{i}-ü-" * (i % 23 + 1)).encode()
    headers = [] if i % 3 else [("trace", f"t{i}".encode()), ("ünï", b""), ("bin", b"\x00\xff")]
    return key, value, headers


class ProducedData:
    def __init__(self, broker: BrokerProcess) -> None:
        self.broker = broker
        self.rows: list[Produced] = []
        self.admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)

    @property
    def log_dir(self) -> str:
        return str(self.broker.log_dir)

    def create_topic(self, name: str, partitions: int, **configs: str) -> None:
        # The records carry fixed timestamps long past: time-based retention must not delete them.
        configs = {"retention.ms": "-1", **configs}
        self.admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs)])

    def produce(self, topic: str, count: int, partitions: int, codec: str, start: int = 0,
                log_append_time: bool = False) -> list[Produced]:
        producer = KafkaProducer(bootstrap_servers=self.broker.bootstrap,
                                 compression_type=None if codec == "none" else codec,
                                 linger_ms=5, batch_size=1024)
        try:
            pending = []
            for i in range(start, start + count):
                key, value, headers = record_content(i, topic)
                ts = BASE_TIMESTAMP + i * 7
                future = producer.send(topic, key=key, value=value, headers=headers,
                                       partition=i % partitions, timestamp_ms=ts)
                pending.append((key, value, headers, future))
            producer.flush()
            made = []
            for key, value, headers, future in pending:
                md = future.get(timeout=30)
                # With LogAppendTime the broker's time comes back in the produce response.
                made.append(Produced(key, value, md.topic, md.partition, md.offset, md.timestamp,
                                     1 if log_append_time else 0, tuple(headers) if headers else None))
        finally:
            producer.close()
        self.rows.extend(made)
        return made

    def rows_for(self, topics) -> list[Produced]:
        return sorted((r for r in self.rows if r.topic in set(topics)), key=sort_key)

    def wait_for_high_watermarks(self) -> None:
        """Until replication-offset-checkpoint holds every partition's end offset."""
        from kafka_py.clients.common.topic_partition import TopicPartition
        from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile

        ends: dict = {}
        for r in self.rows:
            tp = TopicPartition(r.topic, r.partition)
            ends[tp] = max(ends.get(tp, 0), r.offset + 1)
        path = os.path.join(self.log_dir, "replication-offset-checkpoint")

        def caught_up() -> bool:
            if not os.path.exists(path):
                return False
            hw = OffsetCheckpointFile(path).read()
            return all(hw.get(tp, -1) >= end for tp, end in ends.items())

        wait_until(caught_up, 30, "replication-offset-checkpoint never caught up with the produced records")

    def copy_log_dir(self, dest: pathlib.Path, topics) -> pathlib.Path:
        """A private copy of some topics' partition dirs (for tests that damage files)."""
        dest.mkdir(parents=True, exist_ok=True)
        for name in os.listdir(self.log_dir):
            src = os.path.join(self.log_dir, name)
            if os.path.isdir(src) and name.rsplit("-", 1)[0] in set(topics):
                shutil.copytree(src, dest / name)
            elif name.endswith("checkpoint"):
                shutil.copy(src, dest / name)
        return dest


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    from kafka_py.spark import register

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session = (SparkSession.builder.master("local[2]").appName("kafka-py-spark-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.pyspark.python", sys.executable)
               .config("spark.pyspark.driver.python", sys.executable)
               .config("spark.driver.extraJavaOptions", TEST_JVM_OPTIONS)
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _spark_active_in_the_test_thread(request):
    """Each test that uses ``spark`` starts with it active in its thread's JVM counterpart:
    Spark finds the kafka-log sink through that (kafka_py.spark.activate), and which JVM
    thread serves pytest's thread can change over a worker's life."""
    if "spark" in request.fixturenames:
        from kafka_py.spark import activate

        activate(request.getfixturevalue("spark"))
    yield


@pytest.fixture(scope="session")
def spark_broker(zookeeper, tmp_path_factory):
    broker = BrokerProcess(tmp_path_factory.mktemp("spark-broker"), zookeeper.connect_string, unique_chroot(),
                           overrides={"replica.high.watermark.checkpoint.interval.ms": "200",
                                      "log.index.interval.bytes": "1024"})
    broker.start()
    yield broker
    if broker.running:
        broker.stop()


@pytest.fixture(scope="session")
def produced(spark_broker) -> ProducedData:
    """Topics codec-<codec> (3 partitions, 3000-byte segments) and log-append (LogAppendTime)."""
    data = ProducedData(spark_broker)
    for codec in CODECS:
        data.create_topic(f"codec-{codec}", 3, **{"segment.bytes": str(SEGMENT_BYTES)})
    data.create_topic("log-append", 1, **{"message.timestamp.type": "LogAppendTime"})
    data.create_topic("other", 1)
    for codec in CODECS:
        data.produce(f"codec-{codec}", 450, 3, codec)
    data.produce("log-append", 40, 1, "none", log_append_time=True)
    data.produce("other", 25, 1, "lz4")
    yield data
    data.admin.close()


@pytest.fixture(scope="session")
def stream_broker(zookeeper, tmp_path_factory):
    """A broker for the streaming source and sink tests: high watermarks and log start offsets
    checkpointed every 200 ms, retention checked every 300 ms (from 200 ms after startup), no topic
    created by producing to it."""
    broker = BrokerProcess(tmp_path_factory.mktemp("stream-broker"), zookeeper.connect_string, unique_chroot(),
                           overrides={"replica.high.watermark.checkpoint.interval.ms": "200",
                                      "log.flush.start.offset.checkpoint.interval.ms": "200",
                                      "log.initial.task.delay.ms": "200",
                                      "log.retention.check.interval.ms": "300",
                                      "log.index.interval.bytes": "1024",
                                      "auto.create.topics.enable": "false"})
    broker.start()
    yield broker
    if broker.running:
        broker.stop()


@pytest.fixture(scope="session")
def stream_data(stream_broker) -> ProducedData:
    data = ProducedData(stream_broker)
    yield data
    data.admin.close()
