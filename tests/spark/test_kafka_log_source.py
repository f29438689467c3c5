"""spark.read.format("kafka-log") over the log dir of a real broker that kafka-python produced to."""
from __future__ import annotations

import json
import os

import pytest

from tests.spark.conftest import CODECS, rows_of, without_headers

CODEC_TOPICS = [f"codec-{c}" for c in CODECS]


def read(spark, path, **options):
    reader = spark.read.format("kafka-log")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(path)


def test_schema_is_spark_kafka_source_schema(spark, produced):
    df = read(spark, produced.log_dir, subscribe="other")
    assert df.schema.simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,"
        "timestamp:timestamp,timestampType:int>")
    with_headers = read(spark, produced.log_dir, subscribe="other", includeHeaders="true")
    assert with_headers.schema.simpleString().endswith(",headers:array<struct<key:string,value:binary>>>")


def test_every_codec_headers_nulls_segments_partitions_read_back_exactly(spark, produced):
    topics = CODEC_TOPICS + ["log-append"]
    # Read while the broker is running: the active segments are being written to.
    df = read(spark, produced.log_dir, subscribe=",".join(topics), includeHeaders="true")
    assert rows_of(df) == produced.rows_for(topics)
    # The data really spans several segments and partitions, and the plan split it per segment.
    segments = [n for n in os.listdir(os.path.join(produced.log_dir, "codec-gzip-0")) if n.endswith(".log")]
    assert len(segments) > 1
    assert df.rdd.getNumPartitions() > len(topics) * 3


def test_log_append_time_rows_carry_the_brokers_timestamp(spark, produced):
    rows = rows_of(read(spark, produced.log_dir, subscribe="log-append"), with_headers=False)
    assert {r.timestamp_type for r in rows} == {1}
    assert rows == without_headers(produced.rows_for(["log-append"]))


def test_without_subscription_every_non_internal_topic_is_planned(produced):
    from kafka_py.spark.kafka_log_data_source import KafkaLogDataSource, kafka_schema

    # The reader Spark builds, asked directly: which input partitions would be read.
    reader = KafkaLogDataSource({"path": produced.log_dir}).reader(kafka_schema())
    topics = {p.value.topic for p in reader.partitions()}
    assert topics == {r.topic for r in produced.rows}
    assert {"codec-none", "log-append", "other"} <= topics


def test_subscribe_pattern_matches_whole_topic_names(spark, produced):
    df = read(spark, produced.log_dir, subscribePattern="codec-(gzip|lz4)")
    assert rows_of(df, with_headers=False) == without_headers(produced.rows_for(["codec-gzip", "codec-lz4"]))
    # "codec" alone matches no whole name.
    assert read(spark, produced.log_dir, subscribePattern="codec").count() == 0


def test_offset_ranges_select_exactly_the_wanted_rows(spark, produced):
    starting = {"codec-zstd": {"0": 37, "1": 100, "2": -2}, "codec-none": {"0": 5, "1": 149, "2": 20}}
    ending = {"codec-zstd": {"0": 41, "1": -1, "2": 3}, "codec-none": {"0": 120, "1": 150, "2": 20}}
    df = read(spark, produced.log_dir, subscribe="codec-zstd,codec-none",
              startingOffsets=json.dumps(starting), endingOffsets=json.dumps(ending))
    latest = {}
    for r in produced.rows:
        latest[(r.topic, r.partition)] = max(latest.get((r.topic, r.partition), 0), r.offset + 1)

    def wanted(r):
        start = starting[r.topic][str(r.partition)]
        end = ending[r.topic][str(r.partition)]
        start = 0 if start == -2 else start
        end = latest[(r.topic, r.partition)] if end == -1 else end
        return start <= r.offset < end

    expected = [r for r in produced.rows_for(["codec-zstd", "codec-none"]) if wanted(r)]
    assert rows_of(df, with_headers=False) == without_headers(expected)


def test_partitions_not_named_in_the_offsets_json_read_from_earliest_to_latest(spark, produced):
    df = read(spark, produced.log_dir, subscribe="codec-lz4", startingOffsets='{"codec-lz4": {"1": 140}}')
    expected = [r for r in produced.rows_for(["codec-lz4"]) if r.partition != 1 or r.offset >= 140]
    assert rows_of(df, with_headers=False) == without_headers(expected)


def test_bad_options_fail_with_a_clear_message(spark, produced):
    from pyspark.errors import PySparkException

    cases = [
        ({"startingOffsets": "latest"}, "startingOffsets can't be latest"),
        ({"endingOffsets": '{"other": {"0": -2}}'}, "can't be earliest"),
        ({"subscribe": "other", "subscribePattern": "o.*"}, "Only one of subscribe"),
        ({"subscribe": "other", "startingOffsets": '{"nope": {"0": 1}}'}, "nope-0"),
        ({"subscribe": "other", "startingOffsets": '{"other": {"0": 10}}', "endingOffsets": '{"other": {"0": 5}}'},
         "Beginning offset 10 is after the ending offset 5"),
        ({"includeHeaders": "maybe"}, "includeHeaders must be true or false"),
    ]
    for options, message in cases:
        with pytest.raises(PySparkException) as info:
            read(spark, produced.log_dir, **options).count()
        assert message in str(info.value), (options, str(info.value)[-2000:])
    with pytest.raises(PySparkException, match="does not exist"):
        read(spark, produced.log_dir + "-missing").count()


def test_committed_only_reads_to_the_high_watermark(spark, produced, tmp_path):
    from kafka_py.clients.common.topic_partition import TopicPartition
    from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile

    produced.wait_for_high_watermarks()
    everything = read(spark, produced.log_dir, subscribe="codec-snappy", committedOnly="true")
    assert rows_of(everything, with_headers=False) == without_headers(produced.rows_for(["codec-snappy"]))
    # A copy whose checkpoint says less is committed: partition 0 up to 77, 2 not at all.
    copy = produced.copy_log_dir(tmp_path / "logs", ["codec-snappy"])
    OffsetCheckpointFile(str(copy / "replication-offset-checkpoint")).write(
        {TopicPartition("codec-snappy", 0): 77, TopicPartition("codec-snappy", 1): 150})
    df = read(spark, str(copy), subscribe="codec-snappy", committedOnly="true")
    expected = [r for r in produced.rows_for(["codec-snappy"])
                if (r.partition == 0 and r.offset < 77) or r.partition == 1]
    assert rows_of(df, with_headers=False) == without_headers(expected)


def _batches(path):
    from kafka_py.clients.common.record.file_records import FileRecords

    records = FileRecords.open(path, file_already_exists=True, mutable=False)
    try:
        return [(b.position, b.size_in_bytes, b.base_offset, b.last_offset) for b in records.batches()]
    finally:
        records.close()


def _segments(partition_dir):
    return sorted(os.path.join(partition_dir, n) for n in os.listdir(partition_dir) if n.endswith(".log"))


def test_torn_tail_on_the_active_segment_is_ignored(spark, produced, tmp_path):
    copy = produced.copy_log_dir(tmp_path / "logs", ["codec-gzip"])
    active = _segments(copy / "codec-gzip-2")[-1]
    position, size, _, _ = _batches(active)[-1]
    with open(active, "rb") as f:
        f.seek(position)
        last_batch = f.read(size)
    with open(active, "ab") as f:
        f.write(last_batch[: size // 2])  # an append cut off by a crash
    df = read(spark, str(copy), subscribe="codec-gzip", includeHeaders="true")
    assert rows_of(df) == produced.rows_for(["codec-gzip"])


def test_a_corrupt_batch_is_reported_with_its_file_and_position(spark, produced, tmp_path):
    from pyspark.errors import PySparkException

    copy = produced.copy_log_dir(tmp_path / "logs", ["codec-none"])
    segment = _segments(copy / "codec-none-1")[0]
    position, size, first, last = _batches(segment)[1]
    with open(segment, "r+b") as f:
        f.seek(position + size - 3)
        byte = f.read(1)
        f.seek(position + size - 3)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(PySparkException) as info:
        read(spark, str(copy), subscribe="codec-none").count()
    assert f"Corrupt record batch in {segment} at position {position}" in str(info.value)
    skipped = read(spark, str(copy), subscribe="codec-none", failOnDataLoss="false")
    expected = [r for r in produced.rows_for(["codec-none"]) if not (r.partition == 1 and first <= r.offset <= last)]
    assert rows_of(skipped, with_headers=False) == without_headers(expected)
