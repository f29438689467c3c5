"""KafkaMetadataLog over a real Log in a temporary dir (Kafka's KafkaMetadataLogTest): appends
as leader and follower, reads bounded by the log end or the high watermark, the epoch
lookups the log reconciliation uses, truncation to a diverging epoch, and a reopen."""
import pytest

from kafka_py.clients.common.errors import InvalidRecordException, OffsetOutOfRangeException
from kafka_py.raft.isolation import Isolation
from kafka_py.core.raft.kafka_metadata_log import METADATA_PARTITION, KafkaMetadataLog
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.core.raft.segment_position import SegmentPosition
from kafka_py.raft.valid_offset_and_epoch import ValidOffsetAndEpochType
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.utils.time import MockTime

MAX_BATCH = 8 * 1024 * 1024


def open_log(path) -> KafkaMetadataLog:
    return KafkaMetadataLog.apply(METADATA_PARTITION, str(path / "@metadata-0"), MockTime(), None,
                                  max_batch_size_in_bytes=MAX_BATCH, max_fetch_size_in_bytes=MAX_BATCH)


def batch(base_offset: int, epoch: int, *values: bytes) -> MemoryRecords:
    return MemoryRecords(bytearray(build_batch([SimpleRecord(None, v, 0) for v in values],
                                               base_offset=base_offset, partition_leader_epoch=epoch)))


def values_of(records: MemoryRecords) -> list[tuple[int, int, bytes]]:
    return [(r.offset, b.partition_leader_epoch, r.value) for b in records.batches() for r in b.records()]


@pytest.fixture
def log(tmp_path):
    metadata_log = open_log(tmp_path)
    yield metadata_log
    try:
        metadata_log.close()
    except Exception:  # noqa: BLE001 - a test may have closed it already
        pass


def append_epochs(log: KafkaMetadataLog, *epochs_and_values) -> None:
    for epoch, values in epochs_and_values:
        log.initialize_leader_epoch(epoch)
        log.append_as_leader(batch(log.end_offset().offset, epoch, *values), epoch)


def test_append_as_leader_and_read(log):
    log.initialize_leader_epoch(1)
    info = log.append_as_leader(batch(0, 1, b"a", b"b", b"c"), 1)
    assert (info.first_offset, info.last_offset) == (0, 2)
    info = log.append_as_leader(batch(3, 1, b"d"), 1)
    assert (info.first_offset, info.last_offset) == (3, 3)
    assert log.end_offset().offset == 4
    assert isinstance(log.end_offset().metadata, SegmentPosition)
    assert log.last_fetched_epoch() == 1
    read = log.read(0, Isolation.UNCOMMITTED)
    assert values_of(read.records) == [(0, 1, b"a"), (1, 1, b"b"), (2, 1, b"c"), (3, 1, b"d")]
    assert read.start_offset_metadata.offset == 0
    # From inside a batch: the whole batch holding the offset comes back.
    assert [o for o, _, _ in values_of(log.read(1, Isolation.UNCOMMITTED).records)] == [0, 1, 2, 3]
    assert log.read(4, Isolation.UNCOMMITTED).records.size_in_bytes == 0
    with pytest.raises(OffsetOutOfRangeException):
        log.read(5, Isolation.UNCOMMITTED)


def test_append_as_leader_refuses_a_batch_of_another_epoch(log):
    log.initialize_leader_epoch(2)
    with pytest.raises(InvalidRecordException):
        log.append_as_leader(batch(0, 1, b"a"), 2)
    assert log.end_offset().offset == 0
    with pytest.raises(ValueError):
        log.append_as_leader(MemoryRecords.EMPTY, 2)


def test_committed_reads_stop_at_the_high_watermark(log):
    append_epochs(log, (1, [b"a", b"b"]), (1, [b"c"]))
    assert log.high_watermark().offset == 0
    assert log.read(0, Isolation.COMMITTED).records.size_in_bytes == 0
    log.update_high_watermark(LogOffsetMetadata(2))
    # Only whole batches below the high watermark.
    assert values_of(log.read(0, Isolation.COMMITTED).records) == [(0, 1, b"a"), (1, 1, b"b")]
    end = log.end_offset()
    log.update_high_watermark(end)
    assert log.high_watermark() == end
    assert [v for _, _, v in values_of(log.read(0, Isolation.COMMITTED).records)] == [b"a", b"b", b"c"]
    # Never beyond the log end.
    log.update_high_watermark(LogOffsetMetadata(100))
    assert log.high_watermark().offset == 3


def test_append_as_follower_keeps_the_leaders_offsets_and_epochs(log):
    log.append_as_follower(batch(0, 1, b"a", b"b"))
    log.append_as_follower(batch(2, 3, b"c"))
    assert log.end_offset().offset == 3
    assert log.last_fetched_epoch() == 3
    assert values_of(log.read(0, Isolation.UNCOMMITTED).records) == [(0, 1, b"a"), (1, 1, b"b"), (2, 3, b"c")]
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(2, 1)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(2, 1)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(3, 3)
    assert log.end_offset_for_epoch(7) == OffsetAndEpoch(3, 3)


def test_truncate_to_a_diverging_epoch(log):
    # This follower wrote epoch 2 at 3..4 as a leader that lost its leadership; the new leader
    # has epoch 1 up to 3 and then epoch 3.
    append_epochs(log, (1, [b"a", b"b", b"c"]), (2, [b"x", b"y"]))
    validation = log.validate_offset_and_epoch(5, 2)
    assert validation.type is ValidOffsetAndEpochType.VALID
    # The leader's view, as its fetch answer would say: epoch 1 ends at 3.
    truncated = log.truncate_to_end_offset(OffsetAndEpoch(3, 1))
    assert truncated == 3
    assert log.end_offset().offset == 3
    assert log.last_fetched_epoch() == 1
    assert [v for _, _, v in values_of(log.read(0, Isolation.UNCOMMITTED).records)] == [b"a", b"b", b"c"]
    # The fetch position (5, epoch 2) no longer exists here.
    validation = log.validate_offset_and_epoch(5, 2)
    assert validation.type is ValidOffsetAndEpochType.DIVERGING
    assert validation.offset_and_epoch == OffsetAndEpoch(3, 1)
    log.append_as_follower(batch(3, 3, b"z"))
    assert values_of(log.read(3, Isolation.UNCOMMITTED).records) == [(3, 3, b"z")]


def test_flush_and_reopen(tmp_path):
    log = open_log(tmp_path)
    append_epochs(log, (1, [b"a"]), (2, [b"b", b"c"]))
    log.update_high_watermark(LogOffsetMetadata(3))
    assert log.last_flushed_offset() == 0
    log.flush()
    assert log.last_flushed_offset() == 3
    log.close()

    reopened = open_log(tmp_path)
    try:
        assert reopened.end_offset().offset == 3
        assert reopened.last_fetched_epoch() == 2
        assert reopened.end_offset_for_epoch(1) == OffsetAndEpoch(1, 1)
        assert values_of(reopened.read(0, Isolation.UNCOMMITTED).records) == [(0, 1, b"a"), (1, 2, b"b"),
                                                                                (2, 2, b"c")]
        # The high watermark is not kept on disk: the quorum establishes it again.
        assert reopened.high_watermark().offset == 0
        append_epochs(reopened, (4, [b"d"]))
        assert reopened.end_offset_for_epoch(2) == OffsetAndEpoch(3, 2)
        assert reopened.end_offset_for_epoch(4) == OffsetAndEpoch(4, 4)
    finally:
        reopened.close()
    assert (tmp_path / "@metadata-0" / "00000000000000000000.log").exists()
    assert (tmp_path / "@metadata-0" / "leader-epoch-checkpoint").exists()
