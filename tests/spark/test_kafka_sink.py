"""df.write / writeStream .format("kafka-log"): rows produced to a real broker, read back with kafka-python."""
from __future__ import annotations

import threading

import pytest
from kafka import KafkaConsumer, TopicPartition

from tests.integration.broker_harness import BrokerProcess, unique_chroot, wait_until
from tests.spark.test_streaming import message_of

ROWS = 100_000
WAIT_S = 240


def consume_all(bootstrap: str, topic: str, partitions: int, expected: int) -> list:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest",
                             consumer_timeout_ms=10_000, max_partition_fetch_bytes=4 * 1024 * 1024)
    consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
    records = []
    try:
        for record in consumer:
            records.append(record)
            if len(records) >= expected:
                break
    finally:
        consumer.close()
    return records


def sink_input(spark, rows: int):
    from pyspark.sql import functions as F

    headers = F.array(F.struct(F.lit("n").alias("key"), F.col("id").cast("string").cast("binary").alias("value")),
                      F.struct(F.lit("even").alias("key"),
                               F.when(F.col("id") % 2 == 0, F.lit(b"\x00\xff")).alias("value")))
    return (spark.range(rows)
            .select(F.when(F.col("id") % 10 == 0, F.lit(None)).otherwise(F.concat(F.lit("k-"), F.col("id")))
                    .alias("key"),
                    F.concat(F.lit("value-"), F.col("id").cast("string")).cast("binary").alias("value"),
                    F.when(F.col("id") % 3 == 0, F.lit(None)).otherwise(headers).alias("headers"),
                    (F.col("id") % 3).cast("int").alias("partition")))


def expected_rows(rows: int) -> dict:
    out = {}
    for i in range(rows):
        key = None if i % 10 == 0 else f"k-{i}".encode()
        headers = [] if i % 3 == 0 else [("n", str(i).encode()), ("even", b"\x00\xff" if i % 2 == 0 else None)]
        out[f"value-{i}".encode()] = (key, headers, i % 3)
    return out


def test_a_write_from_another_driver_thread_reaches_the_topic_once_that_thread_activates_the_session(
        spark, stream_data):
    # Spark finds a Python sink through the calling thread's active session, and a new
    # thread has none: kafka_py.spark.activate(spark) is what such a thread calls first.
    from kafka_py.spark import activate

    bootstrap = stream_data.broker.bootstrap
    stream_data.create_topic("sink-from-thread", 1)
    failures: list[BaseException] = []

    def write() -> None:
        try:
            activate(spark)
            (spark.range(20).selectExpr("CAST(id AS STRING) AS value").write.format("kafka-log")
             .option("kafka.bootstrap.servers", bootstrap).option("topic", "sink-from-thread")
             .mode("append").save())
        except BaseException as e:  # noqa: BLE001 - reported by the test thread
            failures.append(e)

    writer = threading.Thread(target=write)
    writer.start()
    writer.join(WAIT_S)
    assert not writer.is_alive()
    assert not failures, failures[0]
    got = consume_all(bootstrap, "sink-from-thread", 1, 20)
    assert sorted(int(r.value) for r in got) == list(range(20))


def test_a_batch_job_and_a_streaming_query_write_100k_rows_with_keys_and_headers(spark, stream_data, tmp_path):
    bootstrap = stream_data.broker.bootstrap
    stream_data.create_topic("sink-batch", 3)
    (sink_input(spark, ROWS).write.format("kafka-log").option("kafka.bootstrap.servers", bootstrap)
     .option("topic", "sink-batch").mode("append").save())
    expected = expected_rows(ROWS)
    got = consume_all(bootstrap, "sink-batch", 3, ROWS)
    assert len(got) == ROWS
    assert {r.value: (r.key, list(r.headers), r.partition) for r in got} == expected

    # A streaming query reads that topic's files and writes it to another through the sink.
    stream_data.create_topic("sink-stream", 3)
    wait_until(lambda: _checkpointed_end(stream_data, "sink-batch") == ROWS, 60, "high watermarks not checkpointed")
    source = (spark.readStream.format("kafka-log").option("subscribe", "sink-batch").option("includeHeaders", "true")
              .option("maxOffsetsPerTrigger", "40000").load(stream_data.log_dir))
    query = (source.select("key", "value", "headers", "partition").writeStream.format("kafka-log")
             .option("kafka.bootstrap.servers", bootstrap).option("topic", "sink-stream")
             .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start())
    assert query.awaitTermination(WAIT_S)
    assert query.exception() is None
    got = consume_all(bootstrap, "sink-stream", 3, ROWS)
    assert len(got) == ROWS
    assert {r.value: (r.key, list(r.headers), r.partition) for r in got} == expected


def _checkpointed_end(data, topic: str) -> int:
    import os

    from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile

    path = os.path.join(data.log_dir, "replication-offset-checkpoint")
    if not os.path.exists(path):
        return 0
    return sum(o for tp, o in OffsetCheckpointFile(path).read().items() if tp.topic == topic)


def test_a_topic_that_does_not_exist_fails_with_unknown_topic_or_partition(spark, stream_data):
    df = spark.createDataFrame([("k", "v")], "key string, value string")
    with pytest.raises(Exception) as failure:
        (df.write.format("kafka-log").option("kafka.bootstrap.servers", stream_data.broker.bootstrap)
         .option("topic", "no-such-topic")
         # How long librdkafka waits for a topic to appear before giving up on it (default 30 s).
         .option("kafka.topic.metadata.propagation.max.ms", "2000")
         .mode("append").save())
    message = message_of(failure.value)
    assert "KafkaSinkException" in message
    assert "UNKNOWN_TOPIC_OR_PARTITION" in message
    assert "topic no-such-topic" in message


def test_a_broker_stopped_mid_write_fails_the_task(spark, zookeeper, tmp_path):
    from pyspark.sql import functions as F

    broker = BrokerProcess(tmp_path / "broker", zookeeper.connect_string, unique_chroot())
    broker.start()
    try:
        from kafka.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        admin.create_topics([NewTopic("doomed", 1, 1)])
        admin.close()
        df = spark.range(3_000_000).select(F.col("id").cast("string").alias("value"))
        segment = broker.log_dir / "doomed-0" / "00000000000000000000.log"
        killed = threading.Event()

        def kill_once_records_arrive() -> None:
            # The write runs on the main thread (a Python data source write started from
            # another thread is not found by Spark 4.3); the broker is killed from here.
            try:
                wait_until(lambda: segment.exists() and segment.stat().st_size > 100_000, WAIT_S,
                           "the write never reached the broker")
            finally:
                broker.kill()
                killed.set()

        killer = threading.Thread(target=kill_once_records_arrive)
        killer.start()
        outcome = {}
        try:
            (df.write.format("kafka-log").option("kafka.bootstrap.servers", broker.bootstrap)
             .option("topic", "doomed").option("kafka.delivery.timeout.ms", "5000").mode("append").save())
            outcome["result"] = "succeeded"
        except Exception as e:  # noqa: BLE001 - the failure is what the test looks at
            outcome["result"] = message_of(e)
        killer.join(timeout=WAIT_S)
        assert killed.is_set()
    finally:
        if broker.running:
            broker.stop()
    assert outcome["result"] != "succeeded"
    assert "were not acknowledged by the cluster" in outcome["result"]


def test_bad_sink_input_names_the_column_or_option(spark, stream_data):
    from pyspark.sql import functions as F

    bootstrap = stream_data.broker.bootstrap
    df = spark.range(3).select(F.col("id").alias("value"), F.lit("t").alias("topic"))

    def failure_of(frame, **options) -> str:
        writer = frame.write.format("kafka-log").mode("append")
        for k, v in options.items():
            writer = writer.option(k.replace("_", "."), v)
        with pytest.raises(Exception) as e:
            writer.save()
        return message_of(e.value)

    assert "Column 'value' must be string or binary for the kafka-log sink, not bigint" in failure_of(
        df, kafka_bootstrap_servers=bootstrap)
    assert "Required attribute 'value' not found" in failure_of(df.select("topic"), kafka_bootstrap_servers=bootstrap)
    assert "Option kafka.bootstrap.servers must be set" in failure_of(df.select(F.col("value").cast("string")),
                                                                      topic="t")
    assert "Unknown option topics for the kafka-log sink" in failure_of(
        df.select(F.col("value").cast("string")), kafka_bootstrap_servers=bootstrap, topics="t")
    assert "Column 'partition' must be int" in failure_of(
        df.select(F.col("value").cast("string"), F.lit("x").alias("partition")), kafka_bootstrap_servers=bootstrap,
        topic="t")
