"""spark.readStream.format("kafka-log") over a real broker's log dir, produced to by kafka-python.

Every wait is bounded; nothing here asserts a timing."""
from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import threading
import time

import pytest
from kafka import KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType

from tests.integration.broker_harness import wait_until

WAIT_S = 180
ROOT = pathlib.Path(__file__).resolve().parents[2]


def message_of(exc: BaseException) -> str:
    """The whole text of an error (a StreamingQueryException's str() is cut short)."""
    get_message = getattr(exc, "getMessage", None)
    return (get_message() if callable(get_message) else "") + "\n" + str(exc)


def stream_reader(spark, log_dir, **options):
    reader = spark.readStream.format("kafka-log")
    for k, v in options.items():
        reader = reader.option(k, str(v))
    return reader.load(log_dir)


class BatchCollector:
    """foreachBatch target: the (batch id, topic, partition, offset) of every row, in order."""

    def __init__(self) -> None:
        self.batches: list[tuple[int, list[tuple[str, int, int]]]] = []
        self.lock = threading.Lock()

    def __call__(self, df, batch_id: int) -> None:
        rows = [(r["topic"], r["partition"], r["offset"]) for r in df.select("topic", "partition", "offset").collect()]
        with self.lock:
            self.batches.append((batch_id, rows))

    @property
    def rows(self) -> list[tuple[str, int, int]]:
        with self.lock:
            return [row for _, rows in self.batches for row in rows]


def run_available_now(spark, df, checkpoint, collector=None):
    collector = collector or BatchCollector()
    query = (df.writeStream.foreachBatch(collector).option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(WAIT_S), "the AvailableNow query did not finish"
    finally:
        query.stop()
    if query.exception() is not None:
        raise query.exception()
    return collector


def test_max_offsets_per_trigger_caps_every_micro_batch_and_reads_each_record_once_in_order(
        spark, stream_data, tmp_path):
    stream_data.create_topic("capped", 3)
    # 3,000 records at most 700 a micro-batch: at least five micro-batches, each one costing a
    # Spark job, so few records make the point as well as many
    produced = stream_data.produce("capped", 3_000, 3, "lz4")
    stream_data.wait_for_high_watermarks()
    df = stream_reader(spark, stream_data.log_dir, subscribe="capped", maxOffsetsPerTrigger=700)
    collector = run_available_now(spark, df, tmp_path / "checkpoint")
    sizes = [len(rows) for _, rows in collector.batches]
    assert all(size <= 700 for size in sizes), sizes
    assert len([s for s in sizes if s]) >= 5
    rows = collector.rows
    assert sorted(rows) == sorted((r.topic, r.partition, r.offset) for r in produced)
    assert len(rows) == len(set(rows)) == 3_000
    for partition in range(3):
        offsets = [o for _, p, o in rows if p == partition]
        assert offsets == sorted(offsets)
    # Started again from its checkpoint, the query finds nothing new.
    assert run_available_now(spark, df, tmp_path / "checkpoint").rows == []


def test_trigger_once_reads_everything_in_one_micro_batch(spark, stream_data, tmp_path):
    stream_data.create_topic("once", 2)
    stream_data.produce("once", 300, 2, "none")
    stream_data.wait_for_high_watermarks()
    collector = BatchCollector()
    df = stream_reader(spark, stream_data.log_dir, subscribe="once", maxOffsetsPerTrigger=50)
    query = (df.writeStream.foreachBatch(collector).option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(once=True).start())
    assert query.awaitTermination(WAIT_S)
    assert [len(rows) for _, rows in collector.batches if rows] == [300]


def test_starting_offsets_latest_and_json(spark, stream_data, tmp_path):
    stream_data.create_topic("starts", 2)
    stream_data.produce("starts", 100, 2, "none")
    stream_data.wait_for_high_watermarks()
    latest = run_available_now(spark, stream_reader(spark, stream_data.log_dir, subscribe="starts",
                                                    startingOffsets="latest"), tmp_path / "latest")
    assert latest.rows == []
    specific = run_available_now(spark, stream_reader(
        spark, stream_data.log_dir, subscribe="starts", startingOffsets='{"starts": {"0": 40, "1": -1}}'),
        tmp_path / "json")
    assert sorted(specific.rows) == [("starts", 0, o) for o in range(40, 50)]
    # The checkpoint holds the offsets in Spark's Kafka source form.
    offsets_dir = tmp_path / "json" / "offsets"
    last = max((n for n in os.listdir(offsets_dir) if n.isdigit()), key=int)
    assert json.loads((offsets_dir / last).read_text().splitlines()[-1]) == {"starts": {"0": 50, "1": 50}}


def test_a_latest_start_survives_a_first_micro_batch_that_never_commits(spark, stream_data, tmp_path):
    stream_data.create_topic("pinned", 2)
    stream_data.produce("pinned", 100, 2, "none")
    stream_data.wait_for_high_watermarks()
    planned, release = threading.Event(), threading.Event()

    def first_batch_dies(df, batch_id):
        planned.set()
        release.wait(WAIT_S)
        raise RuntimeError("the first micro-batch dies before it commits")

    cp = tmp_path / "cp"
    df = stream_reader(spark, stream_data.log_dir, subscribe="pinned", startingOffsets="latest")
    query = df.writeStream.foreachBatch(first_batch_dies).option("checkpointLocation", str(cp)).start()
    try:
        assert planned.wait(WAIT_S), "the first micro-batch did not start"
        after_start = stream_data.produce("pinned", 200, 2, "none", start=100)
        stream_data.wait_for_high_watermarks()
        release.set()
        with pytest.raises(Exception, match="dies before it commits"):
            query.awaitTermination(WAIT_S)
    finally:
        release.set()
        query.stop()
    assert (cp / "offsets" / "0").exists() and not (cp / "commits" / "0").exists()
    later = stream_data.produce("pinned", 50, 2, "none", start=300)
    stream_data.wait_for_high_watermarks()
    rows = run_available_now(spark, df, cp).rows
    assert sorted(rows) == sorted((r.topic, r.partition, r.offset) for r in after_start + later)


@pytest.mark.parametrize("high_watermarks", ["checkpoint", "bootstrap servers"])
def test_records_produced_while_the_stream_runs_all_arrive_with_new_topics_and_partitions(
        spark, stream_data, tmp_path, high_watermarks):
    prefix = "live-cp" if high_watermarks == "checkpoint" else "live-bs"
    first, later = f"{prefix}-a", f"{prefix}-b"
    stream_data.create_topic(first, 2)
    acknowledged = {(r.topic, r.partition, r.offset) for r in stream_data.produce(first, 200, 2, "none")}
    options = {"subscribePattern": f"{prefix}-.*", "maxOffsetsPerTrigger": 700}
    if high_watermarks == "bootstrap servers":
        options["kafka.bootstrap.servers"] = stream_data.broker.bootstrap
    df = stream_reader(spark, stream_data.log_dir, **options)
    table = f"live_{high_watermarks.split()[0]}"
    query = (df.writeStream.format("memory").queryName(table).option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(processingTime="300 milliseconds").start())
    lock = threading.Lock()

    def produce_in_background():
        producer = KafkaProducer(bootstrap_servers=stream_data.broker.bootstrap, acks="all", linger_ms=2)
        try:
            for i in range(2000):
                md = producer.send(first, value=b"v%d" % i, partition=i % 2).get(timeout=30)
                with lock:
                    acknowledged.add((md.topic, md.partition, md.offset))
        finally:
            producer.close()

    background = threading.Thread(target=produce_in_background)
    background.start()
    try:
        # A topic the pattern selects, created after the stream started.
        stream_data.create_topic(later, 1)
        made = stream_data.produce(later, 150, 1, "gzip")
        # A partition added to a topic the stream reads (kafka-topics.sh --alter): read from offset 0.
        altered = subprocess.run([str(ROOT / "bin" / "kafka-topics.sh"), "--bootstrap-server",
                                  stream_data.broker.bootstrap, "--alter", "--topic", first, "--partitions", "3"],
                                 capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert altered.returncode == 0, altered.stderr
        wait_until(lambda: os.path.isdir(os.path.join(stream_data.log_dir, f"{first}-2")), 30, "no new partition")
        producer = KafkaProducer(bootstrap_servers=stream_data.broker.bootstrap, acks="all")
        added = [producer.send(first, value=b"added-%d" % i, partition=2).get(timeout=30) for i in range(120)]
        producer.close()
        background.join(timeout=WAIT_S)
        assert not background.is_alive()
        with lock:
            acknowledged.update((r.topic, r.partition, r.offset) for r in made)
            acknowledged.update((md.topic, md.partition, md.offset) for md in added)
            expected = set(acknowledged)

        def seen() -> list:
            if query.exception() is not None:
                raise query.exception()
            return [(r["topic"], r["partition"], r["offset"])
                    for r in spark.sql(f"select topic, partition, offset from {table}").collect()]

        wait_until(lambda: set(seen()) >= expected, WAIT_S, "acknowledged records never reached the sink",
                   interval=0.5)
    finally:
        query.stop()
    rows = seen()
    assert len(rows) == len(set(rows)), "a record arrived twice"
    assert set(rows) == expected
    assert sorted(o for t, p, o in rows if (t, p) == (first, 2)) == list(range(120))
    assert len([r for r in rows if r[0] == later]) == 150


def test_min_offsets_per_trigger_holds_micro_batches_back_until_enough_wait_or_the_delay_passes(
        spark, stream_data, tmp_path):
    stream_data.create_topic("held", 1)
    stream_data.create_topic("held-delay", 1)
    held, delayed = BatchCollector(), BatchCollector()
    queries = [
        stream_reader(spark, stream_data.log_dir, subscribe="held", minOffsetsPerTrigger=100,
                      maxTriggerDelay="10m", **{"kafka.bootstrap.servers": stream_data.broker.bootstrap})
        .writeStream.foreachBatch(held).option("checkpointLocation", str(tmp_path / "held"))
        .trigger(processingTime="200 milliseconds").start(),
        stream_reader(spark, stream_data.log_dir, subscribe="held-delay", minOffsetsPerTrigger=1000,
                      maxTriggerDelay="1s", **{"kafka.bootstrap.servers": stream_data.broker.bootstrap})
        .writeStream.foreachBatch(delayed).option("checkpointLocation", str(tmp_path / "delayed"))
        .trigger(processingTime="200 milliseconds").start(),
    ]

    def rows_of(collector) -> list:
        for q in queries:
            if q.exception() is not None:
                raise q.exception()
        return collector.rows

    try:
        stream_data.produce("held", 30, 1, "none")
        # Fewer than minOffsetsPerTrigger wait, and maxTriggerDelay is far: nothing is read
        # while many triggers pass ...
        time.sleep(3)
        assert rows_of(held) == []
        # ... until enough wait: then the first micro-batch holds them and at least 100 rows
        # (what arrives after it waits for the next 100).
        stream_data.produce("held", 80, 1, "none", start=30)
        wait_until(lambda: len(rows_of(held)) >= 100, WAIT_S, "the held-back records never came", interval=0.3)
        first = next(rows for _, rows in held.batches if rows)
        assert len(first) >= 100 and sorted(o for _, _, o in first) == list(range(len(first)))

        # Far fewer than minOffsetsPerTrigger, but maxTriggerDelay passes: read.
        stream_data.produce("held-delay", 10, 1, "none")
        wait_until(lambda: len(rows_of(delayed)) >= 10, WAIT_S, "maxTriggerDelay never released them",
                   interval=0.3)
        assert sorted(o for _, _, o in rows_of(delayed)) == list(range(10))
    finally:
        for q in queries:
            q.stop()


def test_retention_deleting_unread_segments_is_data_loss(spark, stream_data, tmp_path):
    topic = "lossy"
    stream_data.create_topic(topic, 1, **{"segment.bytes": "1024"})
    stream_data.produce(topic, 50, 1, "none")
    stream_data.wait_for_high_watermarks()
    checkpoint = tmp_path / "cp"
    df = stream_reader(spark, stream_data.log_dir, subscribe=topic)
    assert len(run_available_now(spark, df, checkpoint).rows) == 50
    stream_data.produce(topic, 500, 1, "none", start=50)
    stream_data.wait_for_high_watermarks()
    # Retention removes every closed segment, most of them never read by the stream.
    stream_data.admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={"retention.ms": "1"})])
    partition_dir = os.path.join(stream_data.log_dir, f"{topic}-0")

    def first_segment_base() -> int:
        return min(int(n[:-4]) for n in os.listdir(partition_dir) if n.endswith(".log"))

    wait_until(lambda: first_segment_base() > 100, WAIT_S, "retention deleted nothing")
    log_start = first_segment_base()

    # Retention goes on while the stream plans (with retention.ms=1 it takes the active
    # segment too, in a later pass), so the log may start later than seen here.
    with pytest.raises(Exception) as failure:
        run_available_now(spark, df, checkpoint)
    message = message_of(failure.value)
    lost = re.search(rf"Offsets 50 to (\d+) of {topic}-0 were deleted", message)
    assert lost is not None, message
    assert log_start <= int(lost.group(1)) + 1 <= 550
    assert "failOnDataLoss" in message

    lenient = stream_reader(spark, stream_data.log_dir, subscribe=topic, failOnDataLoss="false")
    rows = run_available_now(spark, lenient, checkpoint).rows
    offsets = sorted(o for _, _, o in rows)
    # what was still there when it read, from the log start on, each record once
    first = offsets[0] if offsets else 550
    assert first >= log_start
    assert offsets == list(range(first, 550))


def test_delete_records_past_the_stream_is_data_loss(spark, stream_data, tmp_path):
    from kafka import TopicPartition as KafkaTopicPartition

    topic = "trimmed"
    stream_data.create_topic(topic, 1)
    stream_data.produce(topic, 50, 1, "none")
    stream_data.wait_for_high_watermarks()
    checkpoint = tmp_path / "cp"
    df = stream_reader(spark, stream_data.log_dir, subscribe=topic)
    assert len(run_available_now(spark, df, checkpoint).rows) == 50
    stream_data.produce(topic, 100, 1, "none", start=50)
    stream_data.wait_for_high_watermarks()
    # Inside the active segment: only log-start-offset-checkpoint tells the files about it.
    stream_data.admin.delete_records({KafkaTopicPartition(topic, 0): 120})
    start_file = os.path.join(stream_data.log_dir, "log-start-offset-checkpoint")
    # (written every 200 ms here, the first time 30 s after the broker started, as Kafka does)
    wait_until(lambda: os.path.exists(start_file) and f"{topic} 0 120" in open(start_file).read(), WAIT_S,
               "the new log start offset was never checkpointed")

    with pytest.raises(Exception) as failure:
        run_available_now(spark, df, checkpoint)
    message = message_of(failure.value)
    assert f"Offsets 50 to 119 of {topic}-0 were deleted" in message
    assert "failOnDataLoss" in message

    lenient = stream_reader(spark, stream_data.log_dir, subscribe=topic, failOnDataLoss="false")
    rows = run_available_now(spark, lenient, checkpoint).rows
    assert sorted(o for _, _, o in rows) == list(range(120, 150))


def test_bad_input_names_the_option(spark, stream_data, tmp_path):
    stream_data.create_topic("bad-input", 1)
    stream_data.produce("bad-input", 10, 1, "none")
    stream_data.wait_for_high_watermarks()

    def failure_of(**options) -> str:
        with pytest.raises(Exception) as e:
            run_available_now(spark, stream_reader(spark, stream_data.log_dir, **options), tmp_path / "x")
        return message_of(e.value)

    # Spark hands a data source its option names lower-cased.
    assert "Unknown option maxoffsetpertrigger for the kafka-log streaming source (did you mean " \
           "maxOffsetsPerTrigger?)" in failure_of(subscribe="bad-input", maxOffsetPerTrigger=10)
    assert "Option startingOffsets must be earliest, latest or JSON" in failure_of(
        subscribe="bad-input", startingOffsets='{"bad-input": {"0": 1}')
    assert "Option endingOffsets is not for the kafka-log streaming source" in failure_of(
        subscribe="bad-input", endingOffsets="latest")

    # A checkpoint made by a query of other topics.
    checkpoint = tmp_path / "other-topics"
    run_available_now(spark, stream_reader(spark, stream_data.log_dir, subscribe="bad-input"), checkpoint)
    stream_data.create_topic("bad-input-2", 1)
    stream_data.produce("bad-input-2", 5, 1, "none")
    with pytest.raises(Exception) as e:
        run_available_now(spark, stream_reader(spark, stream_data.log_dir, subscribe="bad-input-2"), checkpoint)
    assert ("The checkpoint holds offsets of bad-input-0, which subscribe bad-input-2 does not select"
            in message_of(e.value))


def test_latency_option_parsing_is_strict():
    from kafka_py.spark.options import KafkaLogOptions, KafkaLogOptionsException

    parsed = KafkaLogOptions.parse({"path": "/x", "minOffsetsPerTrigger": "5", "maxTriggerDelay": "2s"},
                                   streaming=True)
    assert (parsed.min_offsets_per_trigger, parsed.max_trigger_delay_ms) == (5, 2000)
    with pytest.raises(KafkaLogOptionsException, match="maxTriggerDelay must be a duration"):
        KafkaLogOptions.parse({"path": "/x", "minOffsetsPerTrigger": "5", "maxTriggerDelay": "soon"}, streaming=True)
    with pytest.raises(KafkaLogOptionsException, match="committedOnly can't be false"):
        KafkaLogOptions.parse({"path": "/x", "committedOnly": "false"}, streaming=True)
    time.monotonic()  # the module's clock is the one TriggerDelay is fed with
