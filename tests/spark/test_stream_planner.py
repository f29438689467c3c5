"""The streaming reader's offset decisions, called as Spark calls them, over log dirs written here."""
from __future__ import annotations

import shutil

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile
from kafka_py.spark.kafka_log_data_source import KafkaLogDataSource, kafka_schema
from kafka_py.spark.segment_reader import KafkaLogDataLossException
from tests.spark.log_builder import write_partition


def stream_reader(log_dir, **options):
    return KafkaLogDataSource({"path": str(log_dir), **options}).streamReader(kafka_schema())


def checkpoint(log_dir, ends: dict) -> None:
    OffsetCheckpointFile(str(log_dir / "replication-offset-checkpoint")).write(
        {TopicPartition(t, p): o for (t, p), o in ends.items()})


def test_offsets_stop_at_the_checkpointed_high_watermark_and_new_partitions_join(tmp_path):
    write_partition(str(tmp_path), "t", 0, [10] * 5)
    checkpoint(tmp_path, {("t", 0): 30})
    reader = stream_reader(tmp_path, subscribe="t")
    assert reader.initialOffset() == {"t": {"0": 0}}
    assert reader.latestOffset({"t": {"0": 0}}, ReadAllAvailable()) == {"t": {"0": 30}}
    assert reader.latestOffset({"t": {"0": 0}}, ReadMaxRows(7)) == {"t": {"0": 7}}
    write_partition(str(tmp_path), "t", 1, [4])
    checkpoint(tmp_path, {("t", 0): 50, ("t", 1): 4})
    assert reader.latestOffset({"t": {"0": 30}}, ReadAllAvailable()) == {"t": {"0": 50, "1": 4}}
    slices = reader.partitions({"t": {"0": 30}}, {"t": {"0": 50, "1": 4}})
    assert {(p.value.partition, p.value.from_offset, p.value.until_offset) for p in slices} == {(0, 30, 50), (1, 0, 4)}


def test_a_log_that_went_back_is_data_loss_or_read_again_from_its_start(tmp_path):
    write_partition(str(tmp_path), "t", 0, [10] * 5)
    checkpoint(tmp_path, {("t", 0): 50})
    with pytest.raises(KafkaLogDataLossException, match="now ends at offset 50, before offset 80"):
        stream_reader(tmp_path, subscribe="t").latestOffset({"t": {"0": 80}}, ReadAllAvailable())
    lenient = stream_reader(tmp_path, subscribe="t", failOnDataLoss="false")
    # This micro-batch ends at the log's start, so that the next one reads it all again.
    assert lenient.latestOffset({"t": {"0": 80}}, ReadAllAvailable()) == {"t": {"0": 0}}
    assert lenient.partitions({"t": {"0": 80}}, {"t": {"0": 0}}) == []


def test_a_partition_that_disappears_is_data_loss(tmp_path):
    write_partition(str(tmp_path), "t", 0, [10] * 2)
    write_partition(str(tmp_path), "t", 1, [10] * 2)
    checkpoint(tmp_path, {("t", 0): 20, ("t", 1): 20})
    shutil.rmtree(tmp_path / "t-1")
    with pytest.raises(KafkaLogDataLossException, match="Partition t-1 is no longer in"):
        stream_reader(tmp_path, subscribe="t").latestOffset({"t": {"0": 0, "1": 5}}, ReadAllAvailable())
    lenient = stream_reader(tmp_path, subscribe="t", failOnDataLoss="false")
    assert lenient.latestOffset({"t": {"0": 0, "1": 5}}, ReadAllAvailable()) == {"t": {"0": 20}}


def test_available_now_never_passes_the_ends_found_when_it_was_prepared(tmp_path):
    write_partition(str(tmp_path), "t", 0, [10] * 2)
    checkpoint(tmp_path, {("t", 0): 20})
    reader = stream_reader(tmp_path, subscribe="t", maxOffsetsPerTrigger="15")
    reader.prepareForTriggerAvailableNow()
    write_partition(str(tmp_path), "t", 1, [10])
    checkpoint(tmp_path, {("t", 0): 20, ("t", 1): 10})
    assert reader.latestOffset({"t": {"0": 0}}, ReadMaxRows(15)) == {"t": {"0": 15}}
    assert reader.latestOffset({"t": {"0": 15}}, ReadMaxRows(15)) == {"t": {"0": 20}}
    assert reader.latestOffset({"t": {"0": 20}}, ReadMaxRows(15)) == {"t": {"0": 20}}


def test_latest_is_resolved_once_and_pinned_as_the_first_micro_batch_end(tmp_path):
    # Records up to the high watermark are there; moving it acknowledges more.
    write_partition(str(tmp_path), "t", 0, [10] * 4)
    checkpoint(tmp_path, {("t", 0): 20})
    reader = stream_reader(tmp_path, subscribe="t", startingOffsets="latest")
    initial = reader.initialOffset()
    assert initial == {"t": {"0": 20}}
    # Records arrive between Spark's calls.
    checkpoint(tmp_path, {("t", 0): 30})
    # The first micro-batch ends where it starts, so that Spark writes the initial offsets to
    # the checkpoint's offset log; Spark's second initialOffset (the first micro-batch's start)
    # gives the same offsets.
    assert reader.latestOffset(initial, ReadAllAvailable()) == initial
    assert reader.initialOffset() == initial
    assert reader.partitions(reader.initialOffset(), initial) == []
    assert reader.latestOffset(initial, ReadAllAvailable()) == {"t": {"0": 30}}

    # Killed before the first micro-batch committed, the query starts again: a new reader
    # resolves latest anew; Spark runs the first micro-batch again up to the pinned offsets
    # (nothing), and the next one reads everything produced since the first start.
    checkpoint(tmp_path, {("t", 0): 40})
    restarted = stream_reader(tmp_path, subscribe="t", startingOffsets="latest")
    assert restarted.partitions(restarted.initialOffset(), initial) == []
    end = restarted.latestOffset(initial, ReadAllAvailable())
    assert end == {"t": {"0": 40}}
    slices = restarted.partitions(initial, end)
    assert [(p.value.from_offset, p.value.until_offset) for p in slices] == [(20, 40)]


def test_earliest_is_not_held_back_for_pinning(tmp_path):
    write_partition(str(tmp_path), "t", 0, [10] * 2)
    checkpoint(tmp_path, {("t", 0): 20})
    reader = stream_reader(tmp_path, subscribe="t")
    initial = reader.initialOffset()
    assert reader.latestOffset(initial, ReadAllAvailable()) == {"t": {"0": 20}}


def test_the_pinned_first_micro_batch_run_again_reads_nothing_even_if_latest_went_lower(tmp_path):
    write_partition(str(tmp_path), "t", 0, [10] * 4)
    checkpoint(tmp_path, {("t", 0): 30})
    first = stream_reader(tmp_path, subscribe="t", startingOffsets="latest")
    pinned = first.initialOffset()
    assert first.latestOffset(pinned, ReadAllAvailable()) == pinned == {"t": {"0": 30}}
    # Restarted when the high watermark it finds is lower (a replica's lagging checkpoint):
    # the first micro-batch, run again from the new initial offsets to the pinned ones, reads
    # nothing from before the query's start; the next one starts at the pinned offsets.
    checkpoint(tmp_path, {("t", 0): 10})
    restarted = stream_reader(tmp_path, subscribe="t", startingOffsets="latest")
    assert restarted.initialOffset() == {"t": {"0": 10}}
    assert restarted.partitions(restarted.initialOffset(), pinned) == []
    checkpoint(tmp_path, {("t", 0): 40})
    end = restarted.latestOffset(pinned, ReadAllAvailable())
    assert end == {"t": {"0": 40}}
    assert [(p.value.from_offset, p.value.until_offset) for p in restarted.partitions(pinned, end)] == [(30, 40)]
