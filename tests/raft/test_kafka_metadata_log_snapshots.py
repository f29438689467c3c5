"""KafkaMetadataLog with snapshots (Kafka 3.0's KafkaMetadataLogTest): a snapshot at the high
watermark, the log start moved onto it with the segments below deleted, older snapshots
renamed ``.deleted``, reads below the log start refused, positions before it answered
SNAPSHOT, retention by size, a restart that keeps the snapshot, and leftovers of an
unfinished snapshot removed at startup."""
import os

import pytest

from kafka_py.clients.common.errors import OffsetOutOfRangeException
from kafka_py.raft.isolation import Isolation
from kafka_py.core.raft.kafka_metadata_log import METADATA_PARTITION, KafkaMetadataLog, MetadataLogConfig
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.valid_offset_and_epoch import ValidOffsetAndEpochType
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.raft.snapshot import snapshots
from kafka_py.clients.common.utils.time import MockTime

MAX_BATCH = 8 * 1024 * 1024
# Segments roll after about three of the batches below.
SEGMENT_BYTES = 600


def config(**overrides) -> MetadataLogConfig:
    values = dict(log_segment_bytes=SEGMENT_BYTES, log_segment_min_bytes=100, retention_max_bytes=-1,
                  retention_millis=-1, max_batch_size_in_bytes=MAX_BATCH, max_fetch_size_in_bytes=MAX_BATCH,
                  file_delete_delay_ms=0, node_id=1)
    values.update(overrides)
    return MetadataLogConfig(**values)


def open_log(path, **overrides) -> KafkaMetadataLog:
    return KafkaMetadataLog.apply(METADATA_PARTITION, str(path / "@metadata-0"), MockTime(), None, config(**overrides))


def append(log: KafkaMetadataLog, epoch: int, count: int) -> None:
    """``count`` batches of two 80-byte records each."""
    for _ in range(count):
        base = log.end_offset().offset
        records = MemoryRecords(bytearray(build_batch([SimpleRecord(None, b"v" * 80, 0)] * 2, base_offset=base,
                                                      partition_leader_epoch=epoch)))
        log.append_as_leader(records, epoch)


def commit_all(log: KafkaMetadataLog) -> None:
    log.update_high_watermark(LogOffsetMetadata(log.end_offset().offset))


def write_snapshot(log: KafkaMetadataLog, snapshot_id: OffsetAndEpoch, payload: bytes = b"state") -> None:
    writer = log.create_new_snapshot(snapshot_id)
    assert writer is not None
    writer.append(payload)
    writer.freeze()
    writer.close()


@pytest.fixture
def log(tmp_path):
    metadata_log = open_log(tmp_path)
    yield metadata_log
    try:
        metadata_log.close()
    except Exception:  # noqa: BLE001 - a test may have closed it already
        pass


def test_snapshot_cannot_pass_the_high_watermark_or_an_unknown_position(log):
    log.initialize_leader_epoch(1)
    append(log, 1, 3)
    with pytest.raises(ValueError):
        log.create_new_snapshot(OffsetAndEpoch(4, 1))  # nothing is committed yet
    commit_all(log)
    with pytest.raises(ValueError):
        log.create_new_snapshot(OffsetAndEpoch(4, 3))  # no such epoch in the log
    write_snapshot(log, OffsetAndEpoch(4, 1))
    assert log.latest_snapshot_id() == OffsetAndEpoch(4, 1) == log.earliest_snapshot_id()
    assert log.create_new_snapshot(OffsetAndEpoch(4, 1)) is None  # exists already
    # A snapshot alone does not move the log start (Kafka 3.0: only retention does).
    assert log.start_offset() == 0


def test_delete_before_snapshot_moves_the_log_start_and_deletes_segments(log, tmp_path):
    log.initialize_leader_epoch(1)
    append(log, 1, 12)
    commit_all(log)
    segments_before = log.log.number_of_segments
    assert segments_before >= 4
    write_snapshot(log, OffsetAndEpoch(10, 1))
    write_snapshot(log, OffsetAndEpoch(20, 1))
    assert log.delete_before_snapshot(OffsetAndEpoch(20, 1))
    assert log.start_offset() == 20
    assert log.log.number_of_segments < segments_before
    assert log.earliest_snapshot_id() == OffsetAndEpoch(20, 1)
    names = os.listdir(tmp_path / "@metadata-0")
    # the older snapshot is gone (deleted at once here: no scheduler), the new one stays
    assert os.path.basename(snapshots.snapshot_path("", OffsetAndEpoch(10, 1))) not in names
    assert os.path.basename(snapshots.snapshot_path("", OffsetAndEpoch(20, 1))) in names
    # Reads below the log start are refused, as Kafka's Log refuses them.
    with pytest.raises(OffsetOutOfRangeException):
        log.read(4, Isolation.COMMITTED)
    assert log.read(20, Isolation.COMMITTED).records.size_in_bytes > 0
    # A fetcher behind the log start is sent to the snapshot.
    valid = log.validate_offset_and_epoch(4, 1)
    assert valid.type is ValidOffsetAndEpochType.SNAPSHOT and valid.offset_and_epoch == OffsetAndEpoch(20, 1)
    assert log.validate_offset_and_epoch(0, 0).type is ValidOffsetAndEpochType.SNAPSHOT
    assert log.validate_offset_and_epoch(24, 1).type is ValidOffsetAndEpochType.VALID
    # Not past the latest snapshot, and not backwards.
    assert not log.delete_before_snapshot(OffsetAndEpoch(10, 1))


def test_maybe_clean_applies_the_retention_size(tmp_path):
    log = open_log(tmp_path, retention_max_bytes=1)
    try:
        log.initialize_leader_epoch(1)
        append(log, 1, 12)
        commit_all(log)
        write_snapshot(log, OffsetAndEpoch(8, 1))
        assert not log.maybe_clean()  # one snapshot is always kept
        write_snapshot(log, OffsetAndEpoch(16, 1))
        write_snapshot(log, OffsetAndEpoch(24, 1))
        assert log.maybe_clean()
        assert log.start_offset() == 24
        assert log.snapshot_count() == 1 and log.latest_snapshot_id() == OffsetAndEpoch(24, 1)
    finally:
        log.close()


def test_restart_keeps_the_snapshot_and_the_moved_start(tmp_path):
    log = open_log(tmp_path)
    log.initialize_leader_epoch(1)
    append(log, 1, 12)
    commit_all(log)
    write_snapshot(log, OffsetAndEpoch(12, 1), b"the state at 12")
    assert log.delete_before_snapshot(OffsetAndEpoch(12, 1))
    end_offset = log.end_offset().offset
    log.close()

    again = open_log(tmp_path)
    try:
        assert again.latest_snapshot_id() == OffsetAndEpoch(12, 1)
        # The log starts at its first remaining segment, no later than the snapshot.
        assert 0 < again.start_offset() <= 12
        assert again.end_offset().offset == end_offset
        reader = again.read_snapshot(OffsetAndEpoch(12, 1))
        assert reader.slice(0, 100) == b"the state at 12"
        assert again.validate_offset_and_epoch(0, 0).type is ValidOffsetAndEpochType.SNAPSHOT
    finally:
        again.close()


def test_unfinished_and_deleted_snapshots_are_removed_at_startup(tmp_path):
    log = open_log(tmp_path)
    log.initialize_leader_epoch(1)
    append(log, 1, 3)
    commit_all(log)
    write_snapshot(log, OffsetAndEpoch(4, 1))
    log_dir = str(tmp_path / "@metadata-0")
    # a crash while a snapshot was written, and one while an old one was being deleted
    torn = snapshots.create_temp_file(log_dir, OffsetAndEpoch(6, 1))
    with open(torn, "wb") as f:
        f.write(b"\x00\x00\x00")
    stale = snapshots.delete_rename(snapshots.snapshot_path(log_dir, OffsetAndEpoch(2, 1)), OffsetAndEpoch(2, 1))
    open(stale, "wb").close()
    log.close()

    again = open_log(tmp_path)
    try:
        assert again.latest_snapshot_id() == OffsetAndEpoch(4, 1) == again.earliest_snapshot_id()
        names = os.listdir(log_dir)
        assert os.path.basename(torn) not in names and os.path.basename(stale) not in names
    finally:
        again.close()


def test_truncate_to_latest_snapshot_past_the_log_end(log):
    """A follower that fetched a snapshot beyond its log: the log restarts at the snapshot."""
    log.initialize_leader_epoch(1)
    append(log, 1, 2)
    commit_all(log)
    writer = log.store_snapshot(OffsetAndEpoch(50, 3))
    writer.append(b"fetched")
    writer.freeze()
    writer.close()
    assert log.truncate_to_latest_snapshot()
    assert log.start_offset() == log.end_offset().offset == 50
    assert log.high_watermark().offset == 50
    assert log.last_fetched_epoch() == 3
    # Records past the snapshot, in its epoch: nothing more to truncate.
    log.initialize_leader_epoch(3)
    append(log, 3, 1)
    assert not log.truncate_to_latest_snapshot()
    assert log.end_offset().offset == 52
