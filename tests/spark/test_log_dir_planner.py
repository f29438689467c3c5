"""Planning (offsets to byte ranges through the offset index) and reading slices, on log dirs
written in Kafka's layout by tests/spark/log_builder.py; no Spark needed."""
from __future__ import annotations

import os
import struct

import pytest

pytest.importorskip("pyarrow")

from kafka_py.clients.common.topic_partition import TopicPartition  # noqa: E402
from kafka_py.clients.common.record.compression import CompressionType  # noqa: E402
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch  # noqa: E402
from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile  # noqa: E402
from kafka_py.spark.log_dir_planner import LogDirPlanner  # noqa: E402
from kafka_py.spark.options import KafkaLogOptions, KafkaLogOptionsException  # noqa: E402
from kafka_py.spark.segment_reader import KafkaLogDataLossException, ReadStats, read_slice  # noqa: E402
from tests.spark.log_builder import write_partition  # noqa: E402


def plan(log_dir, **options):
    opts = KafkaLogOptions.parse({"path": str(log_dir), **{k: str(v) for k, v in options.items()}})
    return LogDirPlanner(opts.paths).plan(opts), opts


def read_all(slices, include_headers=False, fail_on_data_loss=True, stats=None):
    rows = []
    for s in slices:
        for rb in read_slice(s, include_headers=include_headers, fail_on_data_loss=fail_on_data_loss, stats=stats):
            d = rb.to_pydict()
            ts = rb.column(5).cast("int64").to_pylist()
            rows.extend(zip(d["topic"], d["partition"], d["offset"], d["key"], d["value"], [t // 1000 for t in ts]))
    return sorted(rows)


def expected(topic, partition, written, lo=0, hi=2**62):
    return sorted((topic, partition, o, k, v, ts) for o, k, v, ts, _h in written.rows(lo, hi))


def test_a_narrow_offset_range_reads_only_its_own_bytes(tmp_path):
    w = write_partition(str(tmp_path), "t", 0, [5] * 2000, segment_bytes=10**8)
    assert len(w.segments) == 1
    slices, _ = plan(tmp_path, startingOffsets='{"t":{"0":5000}}', endingOffsets='{"t":{"0":5010}}')
    assert len(slices) == 1
    segment_size = os.path.getsize(w.segments[0])
    assert slices[0].size_in_bytes < 4096 < segment_size
    stats = ReadStats()
    assert read_all(slices, stats=stats) == expected("t", 0, w, 5000, 5010)
    assert stats.bytes_read < 4096


def test_ranges_across_segments_plan_only_the_segments_that_hold_them(tmp_path):
    w = write_partition(str(tmp_path), "t", 0, [7] * 300, segment_bytes=8000)
    assert len(w.segments) > 10
    slices, _ = plan(tmp_path, startingOffsets='{"t":{"0":700}}', endingOffsets='{"t":{"0":1100}}')
    holding = {b.file for b in w.batches if b.last_offset >= 700 and b.base_offset < 1100}
    assert {s.file for s in slices} == holding
    assert read_all(slices) == expected("t", 0, w, 700, 1100)
    everything, _ = plan(tmp_path)
    assert read_all(everything) == expected("t", 0, w)


def test_a_live_brokers_preallocated_index_is_used_up_to_its_zeros(tmp_path):
    w = write_partition(str(tmp_path), "t", 0, [4] * 1500, segment_bytes=10**8, live_index=True)
    index = w.segments[0].replace(".log", ".index")
    assert os.path.getsize(index) == 1024 * 1024  # preallocated, mostly zeros
    slices, _ = plan(tmp_path, startingOffsets='{"t":{"0":4000}}', endingOffsets='{"t":{"0":4003}}')
    assert slices[0].size_in_bytes < 4096
    assert read_all(slices) == expected("t", 0, w, 4000, 4003)


def test_large_segments_are_cut_at_batch_boundaries(tmp_path):
    w = write_partition(str(tmp_path), "t", 0, [6] * 1200, segment_bytes=400_000, compression=CompressionType.LZ4)
    slices, _ = plan(tmp_path, maxBytesPerPartition=20_000)
    boundaries = {(b.file, b.position) for b in w.batches}
    assert len(slices) > len(w.segments) * 3
    for s in slices:
        assert (s.file, s.start_position) in boundaries
        assert s.size_in_bytes <= 20_000 + max(b.size for b in w.batches)
    assert read_all(slices) == expected("t", 0, w)
    fewer, _ = plan(tmp_path, minPartitions=40)
    assert len(fewer) >= 40
    assert read_all(fewer) == expected("t", 0, w)


def test_torn_tails_of_the_active_segment_are_ignored(tmp_path):
    w = write_partition(str(tmp_path), "t", 0, [5] * 50, segment_bytes=3000)
    last = w.segments[-1]
    good = expected("t", 0, w)
    next_batch = build_batch([SimpleRecord(b"k", b"v" * 50, 1)] * 3, base_offset=250)
    for tail in (next_batch[:40],                                     # header cut short
                 next_batch[:-7],                                     # body cut short
                 next_batch[:-1] + bytes([next_batch[-1] ^ 0xFF]),    # whole length, bad CRC
                 bytes(4096)):                                        # preallocated zeros
        with open(last, "rb") as f:
            original = f.read()
        with open(last, "ab") as f:
            f.write(tail)
        slices, _ = plan(tmp_path)
        logs = LogDirPlanner([str(tmp_path)]).partition_logs()
        LogDirPlanner([str(tmp_path)]).describe(logs.values())
        assert logs[TopicPartition("t", 0)].log_end_offset == 250
        assert read_all(slices) == good
        with open(last, "wb") as f:
            f.write(original)


def test_a_preallocated_active_segment_ends_at_its_data_without_a_torn_tail_warning(tmp_path, caplog):
    # A live broker with log.preallocate: the active segment is its full size, zeros (a hole)
    # after the data.
    w = write_partition(str(tmp_path), "t", 0, [5] * 50, segment_bytes=3000)
    last = w.segments[-1]
    data_end = os.path.getsize(last)
    os.truncate(last, 64 * 1024 * 1024)
    good = expected("t", 0, w)
    with caplog.at_level("INFO", logger="kafka_py.spark.log_dir_planner"):
        slices, _ = plan(tmp_path)
        logs = LogDirPlanner([str(tmp_path)]).partition_logs()
        LogDirPlanner([str(tmp_path)]).describe(logs.values())
    assert logs[TopicPartition("t", 0)].log_end_offset == 250
    assert logs[TopicPartition("t", 0)].end_position == data_end
    assert read_all(slices) == good
    assert "incomplete append" not in caplog.text

    # a torn batch before the zeros is still an incomplete append, and says so
    caplog.clear()
    with open(last, "r+b") as f:
        f.seek(data_end)
        f.write(build_batch([SimpleRecord(b"k", b"v" * 50, 1)] * 3, base_offset=250)[:-7])
    with caplog.at_level("INFO", logger="kafka_py.spark.log_dir_planner"):
        slices, _ = plan(tmp_path)
    assert read_all(slices) == good
    assert "incomplete append" in caplog.text


def test_torn_tail_seen_by_the_reader_is_ignored_only_at_the_end_of_the_partition(tmp_path):
    w = write_partition(str(tmp_path), "t", 0, [5] * 40, segment_bytes=10**6)
    slices, _ = plan(tmp_path)
    (s,) = slices
    with open(s.file, "ab") as f:
        f.write(build_batch([SimpleRecord(b"k", b"v", 1)], base_offset=200)[:-3])
    grown = type(s)(s.topic, s.partition, s.file, s.start_position, os.path.getsize(s.file),
                    s.from_offset, s.until_offset, True)
    stats = ReadStats()
    assert read_all([grown], stats=stats) == expected("t", 0, w)
    assert stats.torn_tail_bytes > 0
    not_tail = type(s)(*[getattr(grown, f) for f in ("topic", "partition", "file", "start_position",
                                                     "end_position", "from_offset", "until_offset")], False)
    with pytest.raises(KafkaLogDataLossException, match=f"{s.file} at position {s.end_position}"):
        read_all([not_tail])


def corrupt_byte(path, position):
    with open(path, "r+b") as f:
        f.seek(position)
        b = f.read(1)
        f.seek(position)
        f.write(bytes([b[0] ^ 0x5A]))


def test_a_corrupt_batch_is_reported_with_file_and_position_or_skipped(tmp_path):
    w = write_partition(str(tmp_path), "t", 0, [5] * 60, segment_bytes=4000)
    victim = [b for b in w.batches if b.file == w.segments[1]][2]
    corrupt_byte(victim.file, victim.position + victim.size - 5)  # inside the records: CRC fails
    slices, _ = plan(tmp_path)
    with pytest.raises(KafkaLogDataLossException) as info:
        read_all(slices)
    assert f"Corrupt record batch in {victim.file} at position {victim.position}" in str(info.value)
    assert "failOnDataLoss" in str(info.value)
    stats = ReadStats()
    got = read_all(slices, fail_on_data_loss=False, stats=stats)
    lost = {r[0] for r in victim.records}
    assert got == [r for r in expected("t", 0, w) if r[2] not in lost]
    assert stats.skipped_batches == 1


def test_a_batch_with_a_garbage_length_is_stepped_over_by_its_successors_crc(tmp_path):
    w = write_partition(str(tmp_path), "t", 0, [5] * 60, segment_bytes=100_000)
    victim = w.batches[20]
    with open(victim.file, "r+b") as f:
        f.seek(victim.position + 8)
        f.write(struct.pack(">i", 2_000_000_000))
    slices, _ = plan(tmp_path)
    with pytest.raises(KafkaLogDataLossException, match=f"at position {victim.position}"):
        read_all(slices)
    got = read_all(slices, fail_on_data_loss=False)
    lost = {r[0] for r in victim.records}
    assert got == [r for r in expected("t", 0, w) if r[2] not in lost]


def test_committed_only_stops_at_the_checkpointed_high_watermark(tmp_path):
    a = write_partition(str(tmp_path), "t", 0, [5] * 30, segment_bytes=2000)
    b = write_partition(str(tmp_path), "t", 1, [5] * 30, segment_bytes=2000)
    write_partition(str(tmp_path), "t", 2, [5] * 30, segment_bytes=2000)
    OffsetCheckpointFile(str(tmp_path / "replication-offset-checkpoint")).write(
        {TopicPartition("t", 0): 77, TopicPartition("t", 1): 150})
    slices, _ = plan(tmp_path, committedOnly="true")
    # t-2 has no high watermark: nothing of it is known to be committed.
    assert read_all(slices) == sorted(expected("t", 0, a, 0, 77) + expected("t", 1, b))
    slices, _ = plan(tmp_path, committedOnly="true", endingOffsets='{"t":{"0":100}}')
    assert max(r[2] for r in read_all(slices) if r[1] == 0) == 76


def test_earliest_is_the_log_start_offset_and_offsets_before_it_are_data_loss(tmp_path):
    w = write_partition(str(tmp_path), "t", 0, [5] * 20, segment_bytes=1500, start_offset=1000)
    OffsetCheckpointFile(str(tmp_path / "log-start-offset-checkpoint")).write({TopicPartition("t", 0): 1032})
    slices, _ = plan(tmp_path)
    assert read_all(slices) == expected("t", 0, w, 1032)
    with pytest.raises(KafkaLogDataLossException, match="below its log start offset 1032"):
        plan(tmp_path, startingOffsets='{"t":{"0":1010}}')
    slices, _ = plan(tmp_path, startingOffsets='{"t":{"0":1010}}', failOnDataLoss="false")
    assert read_all(slices) == expected("t", 0, w, 1032)


def test_partition_discovery(tmp_path):
    write_partition(str(tmp_path), "t", 0, [2])
    write_partition(str(tmp_path), "__consumer_offsets", 0, [2])
    os.makedirs(tmp_path / "t-1.0123456789abcdef0123456789abcdef-delete")
    os.makedirs(tmp_path / "t-0.0123456789abcdef0123456789abcdef-future")
    os.makedirs(tmp_path / "not a partition")
    planner = LogDirPlanner([str(tmp_path)])
    assert set(planner.partition_logs()) == {TopicPartition("t", 0)}
    opts = KafkaLogOptions.parse({"path": str(tmp_path), "subscribe": "__consumer_offsets"})
    assert set(planner.partition_logs(opts.subscription)) == {TopicPartition("__consumer_offsets", 0)}
    other = tmp_path / "other-dir"
    write_partition(str(other), "t", 0, [2])
    with pytest.raises(KafkaLogOptionsException, match="is in both"):
        LogDirPlanner([str(tmp_path), str(other)]).partition_logs()
    with pytest.raises(KafkaLogOptionsException, match="partition's directory"):
        LogDirPlanner([str(tmp_path / "t-0")]).partition_logs()


def test_an_index_pointing_past_the_data_is_not_trusted(tmp_path):
    w = write_partition(str(tmp_path), "t", 0, [5] * 200, segment_bytes=10**6)
    # Cut the log as a crash would, leaving the index with entries beyond its end.
    keep = w.batches[100]
    with open(w.segments[0], "r+b") as f:
        f.truncate(keep.position)
    slices, _ = plan(tmp_path, startingOffsets='{"t":{"0":480}}')
    assert read_all(slices) == expected("t", 0, w, 480, keep.base_offset)


def test_a_segment_deleted_after_planning_is_data_loss(tmp_path):
    w = write_partition(str(tmp_path), "t", 0, [5] * 40, segment_bytes=2000)
    slices, _ = plan(tmp_path)
    gone = slices[0].file
    os.remove(gone)  # as retention deletes it while the job runs
    with pytest.raises(KafkaLogDataLossException, match=f"Segment file {gone} of t-0 no longer exists"):
        read_all(slices)
    survivors = {b.base_offset for b in w.batches if b.file != gone}
    assert {r[2] for r in read_all(slices, fail_on_data_loss=False)} == {
        o for b in w.batches if b.base_offset in survivors for o in range(b.base_offset, b.last_offset + 1)}


def test_a_torn_batch_at_the_last_index_entry_leaves_the_data_before_it(tmp_path):
    from kafka_py.log.offset_index import OffsetIndex

    w = write_partition(str(tmp_path), "t", 0, [5] * 100, segment_bytes=10**6)
    index = OffsetIndex(w.segments[0].replace(".log", ".index"), 0, writable=False)
    last_entry = index.entry(index.entries - 1)
    index.close_handler()
    torn = next(b for b in w.batches if b.position == last_entry.position)
    with open(w.segments[0], "r+b") as f:
        f.truncate(torn.position + torn.size - 10)
    logs = LogDirPlanner([str(tmp_path)]).partition_logs()
    LogDirPlanner([str(tmp_path)]).describe(logs.values())
    assert logs[TopicPartition("t", 0)].log_end_offset == torn.base_offset
    slices, _ = plan(tmp_path)
    assert read_all(slices) == expected("t", 0, w, 0, torn.base_offset)
