"""Tests for log/producer_state_manager.py (port of ProducerStateManager.scala).

Batches are a small local stand-in with the RecordBatch attributes the
manager reads; snapshot files are checked byte for byte against Kafka's
layout built here with struct and crc32c.
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.errors import (
    InvalidProducerEpochException,
    InvalidRecordException,
    InvalidTxnStateException,
    OutOfOrderSequenceException,
    TransactionCoordinatorFencedException,
)
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.record.control_record_type import ControlRecordType, EndTransactionMarker
from kafka_py.log.log_offset_metadata import LogOffsetMetadata
from kafka_py.log.producer_state_manager import (
    AppendOrigin,
    BatchMetadata,
    CompletedTxn,
    CorruptSnapshotException,
    ProducerStateEntry,
    ProducerStateManager,
    producer_snapshot_file,
)
from kafka_py.clients.common.record.default_record_batch import increment_sequence
from kafka_py.core.utils.java_limits import INT_MAX

TP = TopicPartition("t", 0)
NOW = 1_000_000
EXPIRATION_MS = 60 * 60 * 1000


@dataclass(frozen=True)
class Record:
    key: bytes | None
    value: bytes | None
    timestamp: int


@dataclass(frozen=True)
class Batch:
    """The RecordBatch attributes ProducerStateManager reads."""

    producer_id: int
    producer_epoch: int
    base_sequence: int
    base_offset: int
    record_count: int = 1
    max_timestamp: int = NOW
    is_transactional: bool = False
    is_control_batch: bool = False
    records: tuple = field(default=())

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.record_count - 1

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == -1:
            return -1
        return increment_sequence(self.base_sequence, self.record_count - 1)

    def __iter__(self):
        return iter(self.records)


def marker_batch(producer_id, epoch, offset, control_type=ControlRecordType.COMMIT, coordinator_epoch=0, ts=NOW):
    marker = EndTransactionMarker(control_type, coordinator_epoch)
    record = Record(marker.record_key(), marker.serialize_value(), ts)
    return Batch(producer_id, epoch, -1, offset, 1, ts, True, True, (record,))


@pytest.fixture
def psm(tmp_path):
    return ProducerStateManager(TP, tmp_path, EXPIRATION_MS)


def append(psm, batch, origin=AppendOrigin.CLIENT, first_offset_metadata=None):
    info = psm.prepare_update(batch.producer_id, origin)
    completed = info.append(batch, first_offset_metadata)
    psm.update(info)
    if completed is not None:
        psm.complete_txn(completed)
    psm.update_map_end_offset(batch.last_offset + 1)
    return completed


def append_seq(psm, pid, epoch, seq, offset, ts=NOW, transactional=False, origin=AppendOrigin.CLIENT):
    return append(psm, Batch(pid, epoch, seq, offset, 1, ts, transactional), origin)


def snapshot_entry_bytes(pid, epoch, last_seq, last_offset, offset_delta, ts, coordinator_epoch, txn_first):
    return struct.pack(">qhiqiqiq", pid, epoch, last_seq, last_offset, offset_delta, ts, coordinator_epoch, txn_first)


def snapshot_bytes(*entries: bytes) -> bytes:
    body = struct.pack(">i", len(entries)) + b"".join(entries)
    return struct.pack(">hI", 1, crc32c.crc32c(body)) + body


# -- sequence and epoch validation ------------------------------------------------------


def test_in_order_sequences_accepted(psm):
    append(psm, Batch(1, 0, 0, 0, record_count=3))
    append(psm, Batch(1, 0, 3, 3, record_count=2))
    entry = psm.last_entry(1)
    assert (entry.first_seq, entry.last_seq) == (0, 4)
    assert (entry.first_data_offset, entry.last_data_offset) == (0, 4)
    assert entry.producer_epoch == 0
    assert psm.map_end_offset == 5


def test_sequence_gap_rejected(psm):
    append_seq(psm, 1, 0, 0, 0)
    with pytest.raises(OutOfOrderSequenceException, match="Out of order sequence number") as info:
        append_seq(psm, 1, 0, 2, 1)
    assert info.value.error_name == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert psm.last_entry(1).last_seq == 0


def test_repeated_sequence_is_out_of_order_when_appended(psm):
    # Duplicates are caught by find_duplicate_batch before append; appending one is a sequence error.
    append_seq(psm, 1, 0, 0, 0)
    append_seq(psm, 1, 0, 1, 1)
    with pytest.raises(OutOfOrderSequenceException):
        append_seq(psm, 1, 0, 1, 2)


def test_unknown_producer_may_start_at_any_sequence(psm):
    append_seq(psm, 1, 3, 57, 0)
    assert psm.last_entry(1).last_seq == 57
    append_seq(psm, 1, 3, 58, 1)
    assert psm.last_entry(1).last_seq == 58


def test_epoch_bump_resets_sequence(psm):
    append_seq(psm, 1, 0, 0, 0)
    append_seq(psm, 1, 0, 1, 1)
    with pytest.raises(OutOfOrderSequenceException, match="Invalid sequence number for new epoch"):
        append_seq(psm, 1, 1, 2, 2)
    append_seq(psm, 1, 1, 0, 2)
    entry = psm.last_entry(1)
    assert entry.producer_epoch == 1
    # The old epoch's batches are gone: only the new one is retained.
    assert list(entry.batch_metadata) == [BatchMetadata(0, 2, 0, NOW)]


@pytest.mark.parametrize("origin", [AppendOrigin.CLIENT, AppendOrigin.COORDINATOR])
def test_older_epoch_fenced(psm, origin):
    append_seq(psm, 1, 5, 0, 0)
    with pytest.raises(InvalidProducerEpochException, match="smaller than the last seen epoch 5") as info:
        append_seq(psm, 1, 4, 1, 1, origin=origin)
    assert info.value.error_name == "INVALID_PRODUCER_EPOCH"
    assert psm.last_entry(1).producer_epoch == 5


def test_replication_accepts_older_epoch_and_gaps(psm):
    append_seq(psm, 1, 5, 0, 0)
    append_seq(psm, 1, 4, 10, 1, origin=AppendOrigin.REPLICATION)
    append_seq(psm, 1, 4, 42, 2, origin=AppendOrigin.REPLICATION)
    entry = psm.last_entry(1)
    assert (entry.producer_epoch, entry.last_seq) == (4, 42)


def test_coordinator_origin_skips_sequence_checks(psm):
    append_seq(psm, 1, 0, 0, 0, origin=AppendOrigin.COORDINATOR)
    append_seq(psm, 1, 0, 7, 1, origin=AppendOrigin.COORDINATOR)
    assert psm.last_entry(1).last_seq == 7


def test_sequence_wraps_after_int32_max(psm):
    append_seq(psm, 1, 15, INT_MAX, 735, origin=AppendOrigin.REPLICATION)
    append_seq(psm, 1, 15, 0, 1235)
    entry = psm.last_entry(1)
    assert (entry.first_seq, entry.last_seq) == (INT_MAX, 0)


def test_sequence_must_wrap_to_zero(psm):
    append_seq(psm, 1, 15, INT_MAX, 735, origin=AppendOrigin.REPLICATION)
    with pytest.raises(OutOfOrderSequenceException):
        append_seq(psm, 1, 15, 1, 736)


def test_batch_spanning_wraparound(psm):
    info = psm.prepare_update(1, AppendOrigin.REPLICATION)
    info.append_data_batch(15, INT_MAX - 10, 9, NOW, LogOffsetMetadata(2000), 2020, False)
    assert psm.last_entry(1) is None
    psm.update(info)
    entry = psm.last_entry(1)
    assert (entry.first_seq, entry.last_seq) == (INT_MAX - 10, 9)
    assert (entry.first_data_offset, entry.last_data_offset) == (2000, 2020)


def test_rejected_append_leaves_state_untouched(psm):
    append_seq(psm, 1, 0, 0, 0)
    info = psm.prepare_update(1, AppendOrigin.CLIENT)
    info.append(Batch(1, 0, 1, 1))
    with pytest.raises(OutOfOrderSequenceException):
        info.append(Batch(1, 0, 5, 2))
    # The half-validated request was never passed to update().
    entry = psm.last_entry(1)
    assert list(entry.batch_metadata) == [BatchMetadata(0, 0, 0, NOW)]


def test_prepare_update_validates_against_pending_batches(psm):
    append(psm, Batch(1, 0, 10, 0), origin=AppendOrigin.REPLICATION)
    info = psm.prepare_update(1, AppendOrigin.CLIENT)
    info.append(Batch(1, 1, 0, 1, record_count=1))
    info.append(Batch(1, 1, 1, 2, record_count=2))
    # Checked against the batches of this same request, not only the stored state.
    with pytest.raises(OutOfOrderSequenceException):
        info.append(Batch(1, 1, 1, 4))
    with pytest.raises(OutOfOrderSequenceException):
        info.append(Batch(1, 1, 4, 4))
    assert psm.last_entry(1).last_seq == 10
    psm.update(info)
    assert (psm.last_entry(1).producer_epoch, psm.last_entry(1).last_seq) == (1, 2)


def test_unknown_producer_request_is_not_sequence_checked(psm):
    # With no stored epoch every batch of the request is accepted (Kafka 2.8's checkSequence).
    info = psm.prepare_update(1, AppendOrigin.CLIENT)
    info.append(Batch(1, 0, 0, 0, record_count=2))
    info.append(Batch(1, 0, 9, 2))
    psm.update(info)
    assert psm.last_entry(1).last_seq == 9


def test_update_rejects_no_producer_id(psm):
    info = psm.prepare_update(-1, AppendOrigin.CLIENT)
    with pytest.raises(ValueError, match="Invalid producer id -1"):
        psm.update(info)


# -- duplicates ------------------------------------------------------------------------------


def test_find_duplicate_batch_among_last_five(psm):
    batches = [Batch(1, 0, i * 2, 100 + i * 2, record_count=2) for i in range(7)]
    for b in batches:
        append(psm, b)
    entry = psm.last_entry(1)
    assert len(entry.batch_metadata) == ProducerStateEntry.NUM_BATCHES_TO_RETAIN
    for b in batches[2:]:
        dup = entry.find_duplicate_batch(b)
        assert dup == BatchMetadata(b.last_sequence, b.last_offset, 1, NOW)
        assert (dup.first_seq, dup.first_offset) == (b.base_sequence, b.base_offset)
    # Evicted batches and different ranges are not duplicates.
    assert entry.find_duplicate_batch(batches[0]) is None
    assert entry.find_duplicate_batch(batches[1]) is None
    assert entry.find_duplicate_batch(Batch(1, 0, 4, 0, record_count=3)) is None
    # Same range under another epoch is not a duplicate either.
    assert entry.find_duplicate_batch(Batch(1, 1, 12, 0, record_count=2)) is None


def test_duplicate_detection_across_wraparound(psm):
    append(psm, Batch(1, 0, INT_MAX - 1, 0, record_count=4), origin=AppendOrigin.REPLICATION)
    dup = psm.last_entry(1).find_duplicate_batch(Batch(1, 0, INT_MAX - 1, 50, record_count=4))
    # Sequences MAX-1, MAX, 0, 1.
    assert dup is not None and (dup.first_seq, dup.last_seq) == (INT_MAX - 1, 1)


# -- transactions ----------------------------------------------------------------------------


def test_transaction_lifecycle_and_first_unstable_offset(psm):
    assert psm.first_unstable_offset is None
    first = LogOffsetMetadata(10, 0, 4096)
    append(psm, Batch(1, 0, 0, 10, is_transactional=True), first_offset_metadata=first)
    append_seq(psm, 2, 0, 0, 11, transactional=True)
    append_seq(psm, 1, 0, 1, 12, transactional=True)
    # The cached metadata (with its segment position) is what the LSO uses.
    assert psm.first_unstable_offset == first
    assert psm.first_undecided_offset == 10
    assert psm.last_entry(1).current_txn_first_offset == 10

    info = psm.prepare_update(1, AppendOrigin.COORDINATOR)
    completed = info.append(marker_batch(1, 0, 13, ControlRecordType.COMMIT))
    assert completed == CompletedTxn(1, 10, 13, False)
    # Producer 2's open transaction holds the LSO back.
    assert psm.last_stable_offset(completed) == 11
    psm.update(info)
    psm.complete_txn(completed)
    psm.update_map_end_offset(14)
    assert psm.last_entry(1).current_txn_first_offset is None
    assert psm.first_undecided_offset == 11
    assert psm.first_unstable_offset.message_offset == 10  # marker not yet replicated

    completed2 = append(psm, marker_batch(2, 0, 14, ControlRecordType.ABORT), origin=AppendOrigin.COORDINATOR)
    assert completed2 == CompletedTxn(2, 11, 14, True)
    assert psm.first_undecided_offset is None
    psm.on_high_watermark_updated(14)
    assert psm.first_unstable_offset.message_offset == 11
    psm.on_high_watermark_updated(15)
    assert psm.first_unstable_offset is None
    assert not psm.is_empty  # producers are still known


def test_last_stable_offset_without_other_transactions(psm):
    append_seq(psm, 1, 0, 0, 5, transactional=True)
    info = psm.prepare_update(1, AppendOrigin.COORDINATOR)
    completed = info.append(marker_batch(1, 0, 6))
    assert psm.last_stable_offset(completed) == 7


def test_non_transactional_write_during_transaction(psm):
    append_seq(psm, 1, 0, 0, 0, transactional=True)
    with pytest.raises(InvalidTxnStateException):
        append_seq(psm, 1, 0, 1, 1, transactional=False)


def test_marker_without_data_completes_nothing(psm):
    completed = append(psm, marker_batch(1, 2, 27), origin=AppendOrigin.COORDINATOR)
    assert completed is None
    entry = psm.last_entry(1)
    assert (entry.producer_epoch, entry.last_seq, entry.last_data_offset) == (2, -1, -1)
    # Fencing still works with only a marker left, and the producer must restart at 0.
    with pytest.raises(InvalidProducerEpochException):
        append_seq(psm, 1, 0, 0, 28)
    with pytest.raises(OutOfOrderSequenceException):
        append_seq(psm, 1, 2, 17, 28)
    append_seq(psm, 1, 2, 0, 28)
    assert psm.last_entry(1).last_seq == 0


def test_marker_bumps_epoch_and_clears_sequences(psm):
    append_seq(psm, 1, 0, 0, 0)
    append(psm, marker_batch(1, 1, 1, ControlRecordType.ABORT), origin=AppendOrigin.COORDINATOR)
    entry = psm.last_entry(1)
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (1, -1, -1)
    with pytest.raises(OutOfOrderSequenceException):
        append_seq(psm, 1, 1, 1, 2)
    append_seq(psm, 1, 1, 0, 2)
    assert psm.last_entry(1).first_seq == 0


def test_marker_with_old_epoch_rejected(psm):
    append_seq(psm, 1, 3, 0, 0, transactional=True)
    with pytest.raises(InvalidProducerEpochException):
        append(psm, marker_batch(1, 2, 1), origin=AppendOrigin.COORDINATOR)


def test_coordinator_fencing(psm):
    append_seq(psm, 1, 0, 0, 0, transactional=True)
    append(psm, marker_batch(1, 0, 1, coordinator_epoch=3), origin=AppendOrigin.COORDINATOR)
    append_seq(psm, 1, 0, 1, 2, transactional=True)
    with pytest.raises(TransactionCoordinatorFencedException):
        append(psm, marker_batch(1, 0, 3, coordinator_epoch=2), origin=AppendOrigin.COORDINATOR)
    # A follower takes what the leader wrote.
    completed = append(psm, marker_batch(1, 0, 3, coordinator_epoch=2), origin=AppendOrigin.REPLICATION)
    assert completed == CompletedTxn(1, 2, 3, False)


def test_empty_control_batch_is_ignored(psm):
    append_seq(psm, 1, 0, 0, 0, transactional=True)
    empty = Batch(1, 0, -1, 15, is_transactional=True, is_control_batch=True)
    assert append(psm, empty, origin=AppendOrigin.REPLICATION) is None
    assert psm.last_entry(1).current_txn_first_offset == 0


def test_malformed_marker_rejected(psm):
    bad = Batch(1, 0, -1, 0, is_control_batch=True, records=(Record(b"\x00\x00\x00\x01", b"\x00", NOW),))
    info = psm.prepare_update(1, AppendOrigin.REPLICATION)
    with pytest.raises(InvalidRecordException, match="end transaction marker"):
        info.append(bad)


def test_complete_unknown_transaction_raises(psm):
    with pytest.raises(ValueError, match="which was not started"):
        psm.complete_txn(CompletedTxn(1, 5, 6, False))


# -- snapshots --------------------------------------------------------------------------------


def build_mixed_state(psm):
    append(psm, Batch(1, 0, 0, 0, record_count=3, max_timestamp=900))
    append(psm, Batch(1, 0, 3, 10, record_count=2, max_timestamp=1000))
    append_seq(psm, 7, 2, 0, 12, ts=1100, transactional=True)
    append(psm, marker_batch(9, 3, 13, coordinator_epoch=5, ts=1200), origin=AppendOrigin.COORDINATOR)


def test_snapshot_bytes_exact(psm, tmp_path):
    build_mixed_state(psm)
    psm.take_snapshot()
    path = tmp_path / "00000000000000000014.snapshot"
    assert psm.latest_snapshot_offset == 14
    assert path.read_bytes() == snapshot_bytes(
        snapshot_entry_bytes(1, 0, 4, 11, 1, 1000, -1, -1),
        snapshot_entry_bytes(7, 2, 0, 12, 0, 1100, -1, 12),
        snapshot_entry_bytes(9, 3, -1, -1, 0, 1200, 5, -1),
    )
    assert sorted(os.listdir(tmp_path)) == ["00000000000000000014.snapshot"]


def test_empty_snapshot_bytes(psm, tmp_path):
    psm.update_map_end_offset(3)
    psm.take_snapshot()
    assert (tmp_path / "00000000000000000003.snapshot").read_bytes() == snapshot_bytes()


def test_snapshot_round_trip_via_reload(psm, tmp_path):
    build_mixed_state(psm)
    psm.take_snapshot()
    reloaded = ProducerStateManager(TP, tmp_path, EXPIRATION_MS)
    reloaded.truncate_and_reload(0, 14, 1300)
    assert reloaded.map_end_offset == 14
    producers = reloaded.active_producers
    assert sorted(producers) == [1, 7, 9]
    # Only the last batch of each producer is persisted.
    assert list(producers[1].batch_metadata) == [BatchMetadata(4, 11, 1, 1000)]
    assert producers[7].current_txn_first_offset == 12
    assert producers[9] == ProducerStateEntry(9, (), 3, 5, 1200, None)
    assert reloaded.first_unstable_offset.message_offset == 12
    # Validation continues where the snapshot left off.
    append_seq(reloaded, 1, 0, 5, 14)
    with pytest.raises(OutOfOrderSequenceException):
        append_seq(reloaded, 1, 0, 7, 15)
    with pytest.raises(TransactionCoordinatorFencedException):
        append(reloaded, marker_batch(9, 3, 16, coordinator_epoch=4), origin=AppendOrigin.COORDINATOR)


def test_read_snapshot_parses_kafka_bytes(tmp_path):
    path = tmp_path / "00000000000000000100.snapshot"
    path.write_bytes(snapshot_bytes(snapshot_entry_bytes(42, 7, 99, 98, 4, 555, 2, -1)))
    assert ProducerStateManager.read_snapshot(path) == [
        ProducerStateEntry(42, [BatchMetadata(99, 98, 4, 555)], 7, 2, 555, None)
    ]


@pytest.mark.parametrize(
    "corrupt",
    [
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: data[: len(data) // 2], id="truncated"),
        pytest.param(lambda data: data[:20] + bytes([data[20] ^ 0x25]) + data[21:], id="bit-flip"),
        pytest.param(lambda data: b"\x00\x02" + data[2:], id="unknown-version"),
        pytest.param(lambda data: data + b"\x00", id="trailing-byte"),
    ],
)
def test_corrupt_snapshot_falls_back_to_previous(psm, tmp_path, corrupt):
    append_seq(psm, 1, 0, 0, 0)
    psm.take_snapshot()
    append_seq(psm, 1, 0, 1, 1)
    psm.take_snapshot()
    latest = tmp_path / "00000000000000000002.snapshot"
    latest.write_bytes(corrupt(latest.read_bytes()))
    with pytest.raises(CorruptSnapshotException):
        ProducerStateManager.read_snapshot(latest)

    reloaded = ProducerStateManager(TP, tmp_path, EXPIRATION_MS)
    reloaded.truncate_and_reload(0, 20, NOW)
    assert not latest.exists()
    assert reloaded.active_producers[1].last_data_offset == 0
    assert reloaded.map_end_offset == 1
    assert reloaded.latest_snapshot_offset == 1


def test_corrupt_crc_message(tmp_path):
    path = tmp_path / "00000000000000000001.snapshot"
    data = bytearray(snapshot_bytes(snapshot_entry_bytes(1, 0, 0, 0, 0, 0, -1, -1)))
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptSnapshotException, match=r"CRC is no longer valid"):
        ProducerStateManager.read_snapshot(path)


def test_take_snapshot_skipped_when_offset_unchanged(psm, tmp_path):
    append_seq(psm, 1, 0, 0, 0)
    psm.take_snapshot()
    psm.take_snapshot()
    assert os.listdir(tmp_path) == ["00000000000000000001.snapshot"]
    append_seq(psm, 1, 0, 1, 1)
    psm.take_snapshot()
    assert sorted(os.listdir(tmp_path)) == ["00000000000000000001.snapshot", "00000000000000000002.snapshot"]


def test_truncate_and_reload_removes_out_of_range_snapshots(psm, tmp_path):
    for i in range(5):
        append_seq(psm, 1, 0, i, i)
        psm.take_snapshot()
    assert (psm.oldest_snapshot_offset, psm.latest_snapshot_offset) == (1, 5)
    psm.truncate_and_reload(1, 3, NOW)
    assert (psm.oldest_snapshot_offset, psm.latest_snapshot_offset) == (2, 3)
    assert sorted(ProducerStateManager.offset_from_file(f) for f in os.listdir(tmp_path)) == [2, 3]
    # State comes from the snapshot at 3: the producer's last sequence is 2.
    assert psm.map_end_offset == 3
    assert psm.last_entry(1).last_seq == 2
    append_seq(psm, 1, 0, 3, 3)


def test_truncate_and_reload_without_snapshot_starts_at_log_start(psm):
    append_seq(psm, 1, 0, 0, 10)
    psm.truncate_and_reload(5, 8, NOW)
    assert psm.active_producers == {}
    assert psm.map_end_offset == 5


def test_truncate_and_reload_at_map_end_keeps_state(psm):
    append_seq(psm, 1, 0, 0, 0)
    append_seq(psm, 1, 0, 1, 1)
    psm.truncate_and_reload(0, 2, NOW)
    assert psm.last_entry(1).last_seq == 1


def test_reload_drops_expired_producers(psm, tmp_path):
    append_seq(psm, 1, 0, 0, 0, ts=0)
    append_seq(psm, 2, 0, 0, 1, ts=0, transactional=True)
    append_seq(psm, 3, 0, 0, 2, ts=EXPIRATION_MS)
    psm.take_snapshot()
    reloaded = ProducerStateManager(TP, tmp_path, EXPIRATION_MS)
    reloaded.truncate_and_reload(0, 3, EXPIRATION_MS + 1)
    # 1 is idle past the timeout; 2 has an open transaction; 3 is recent.
    assert sorted(reloaded.active_producers) == [2, 3]


def test_remove_expired_producers(psm):
    append_seq(psm, 1, 0, 0, 0, ts=100)
    append_seq(psm, 2, 0, 0, 1, ts=200)
    append_seq(psm, 3, 0, 0, 2, ts=0, transactional=True)
    psm.remove_expired_producers(100 + EXPIRATION_MS - 1)
    assert sorted(psm.active_producers) == [1, 2, 3]
    psm.remove_expired_producers(100 + EXPIRATION_MS)
    assert sorted(psm.active_producers) == [2, 3]
    psm.remove_expired_producers(10 * EXPIRATION_MS)
    assert sorted(psm.active_producers) == [3]


def test_delete_snapshots_before(psm, tmp_path):
    for i in range(3):
        append_seq(psm, 1, 0, i, i)
        psm.take_snapshot()
    psm.delete_snapshots_before(2)
    assert sorted(os.listdir(tmp_path)) == ["00000000000000000002.snapshot", "00000000000000000003.snapshot"]
    assert psm.oldest_snapshot_offset == 2
    psm.delete_snapshots_before(4)
    assert os.listdir(tmp_path) == []
    assert psm.latest_snapshot_offset is None


def test_truncate_fully_and_start_at(psm, tmp_path):
    append_seq(psm, 1, 0, 0, 0, transactional=True)
    psm.take_snapshot()
    psm.truncate_fully_and_start_at(50)
    assert psm.is_empty
    assert psm.first_unstable_offset is None
    assert psm.map_end_offset == 50
    assert os.listdir(tmp_path) == []
    assert psm.latest_snapshot_offset is None


def test_snapshots_found_on_startup(tmp_path):
    for offset in (3, 17, 9):
        open(producer_snapshot_file(str(tmp_path), offset), "wb").close()
    (tmp_path / "00000000000000000020.snapshot.tmp").write_bytes(b"")
    (tmp_path / "00000000000000000000.log").write_bytes(b"")
    psm = ProducerStateManager(TP, tmp_path)
    assert (psm.oldest_snapshot_offset, psm.latest_snapshot_offset) == (3, 17)
    assert psm.fetch_snapshot(9) == producer_snapshot_file(str(tmp_path), 9)
    assert psm.fetch_snapshot(10) is None


def test_remove_stray_snapshots_keeps_clean_shutdown_snapshot(tmp_path):
    for offset in (5, 2, 42):
        open(producer_snapshot_file(str(tmp_path), offset), "wb").close()
    psm = ProducerStateManager(TP, tmp_path)
    psm.remove_stray_snapshots([5])
    assert (psm.oldest_snapshot_offset, psm.latest_snapshot_offset) == (5, 42)
    assert sorted(s.offset for s in ProducerStateManager.list_snapshot_files(tmp_path)) == [5, 42]


def test_remove_all_stray_snapshots(tmp_path):
    for offset in (5, 2, 42):
        open(producer_snapshot_file(str(tmp_path), offset), "wb").close()
    psm = ProducerStateManager(TP, tmp_path)
    psm.remove_stray_snapshots([42])
    assert [s.offset for s in ProducerStateManager.list_snapshot_files(tmp_path)] == [42]


def test_update_parent_dir(psm, tmp_path):
    append_seq(psm, 1, 0, 0, 0)
    psm.take_snapshot()
    moved = tmp_path.parent / (tmp_path.name + ".moved")
    os.rename(tmp_path, moved)
    psm.update_parent_dir(moved)
    assert psm.fetch_snapshot(1) == os.path.join(str(moved), "00000000000000000001.snapshot")
    psm.delete_snapshots_before(2)
    assert os.listdir(moved) == []


def test_file_name_helpers(tmp_path):
    path = producer_snapshot_file(str(tmp_path), 1234)
    assert os.path.basename(path) == "00000000000000001234.snapshot"
    assert ProducerStateManager.is_snapshot_file(path)
    assert not ProducerStateManager.is_snapshot_file(path + ".tmp")
    assert not ProducerStateManager.is_snapshot_file(str(tmp_path / "00000000000000001234.log"))
    assert ProducerStateManager.offset_from_file(path) == 1234


# -- model-based: random producer streams ---------------------------------------------------


class ProducerModel:
    """Kafka's client-side sequence rules for one producer, stated plainly."""

    def __init__(self) -> None:
        self.epoch = -1  # -1: unknown producer
        self.last_seq = -1
        self.batches: list[tuple[int, int, int]] = []  # (epoch, first_seq, last_seq), newest last

    def check(self, epoch: int, first_seq: int, stored_epoch: int) -> type[Exception] | None:
        """``self`` is the state including earlier batches of the request; ``stored_epoch`` the state before it."""
        if epoch < self.epoch:
            return InvalidProducerEpochException
        if epoch != self.epoch:
            return None if first_seq == 0 or self.epoch == -1 else OutOfOrderSequenceException
        if stored_epoch == -1:
            return None
        # After a marker bumped the epoch there is no last sequence (-1): only 0 follows.
        in_sequence = first_seq == self.last_seq + 1 or (first_seq == 0 and self.last_seq == INT_MAX)
        return None if in_sequence else OutOfOrderSequenceException

    def copy(self) -> "ProducerModel":
        other = ProducerModel()
        other.epoch, other.last_seq, other.batches = self.epoch, self.last_seq, list(self.batches)
        return other

    def apply(self, epoch: int, first_seq: int, last_seq: int) -> None:
        if epoch != self.epoch:
            self.batches = []
        self.epoch = epoch
        self.last_seq = last_seq
        self.batches = (self.batches + [(epoch, first_seq, last_seq)])[-5:]

    def apply_marker(self, epoch: int) -> None:
        if epoch != self.epoch:
            self.batches = []
            self.last_seq = -1
        self.epoch = epoch


@st.composite
def request_plan(draw):
    """A list of steps: ('produce', [(epoch_delta, seq_kind, count), ...]), ('marker', delta), ('snapshot',)."""
    batch = st.tuples(
        st.sampled_from([0, 0, 0, 0, 1, -1]),
        st.sampled_from(["next", "next", "next", "zero", "gap", "repeat", "any"]),
        st.integers(1, 4),
    )
    step = st.one_of(
        st.tuples(st.just("produce"), st.lists(batch, min_size=1, max_size=3)),
        st.tuples(st.just("marker"), st.sampled_from([0, 1])),
        st.tuples(st.just("snapshot")),
    )
    start = st.one_of(st.none(), st.tuples(st.integers(0, 3), st.sampled_from([0, 5, INT_MAX - 3])))
    return draw(st.lists(step, min_size=1, max_size=25)), draw(start)


@settings(max_examples=60, deadline=None)
@given(plan=request_plan(), data=st.data())
def test_random_sequence_streams_match_model(tmp_path_factory, plan, data):
    steps, start = plan
    log_dir = tmp_path_factory.mktemp("p")
    psm = ProducerStateManager(TP, log_dir, EXPIRATION_MS)
    model = ProducerModel()
    pid = 77
    next_offset = 0
    if start is not None:
        # A first batch replicated in, so the stream can start anywhere.
        first = Batch(pid, start[0], start[1], next_offset, 1)
        append(psm, first, origin=AppendOrigin.REPLICATION)
        model.apply(start[0], start[1], first.last_sequence)
        next_offset += 1

    for step in steps:
        if step[0] == "snapshot":
            psm.take_snapshot()
            psm = ProducerStateManager(TP, log_dir, EXPIRATION_MS)
            psm.truncate_and_reload(0, next_offset, NOW)
            # Only the newest batch survives a snapshot.
            model.batches = model.batches[-1:]
            continue
        if step[0] == "marker":
            epoch = max(model.epoch + step[1], 0)
            append(psm, marker_batch(pid, epoch, next_offset), origin=AppendOrigin.COORDINATOR)
            model.apply_marker(epoch)
            next_offset += 1
            continue

        info = psm.prepare_update(pid, AppendOrigin.CLIENT)
        pending = model.copy()
        expected_error = None
        offset = next_offset
        for epoch_delta, kind, count in step[1]:
            epoch = max(pending.epoch + epoch_delta, 0)
            last = pending.last_seq
            seq = {
                "next": 0 if last in (-1, INT_MAX) else last + 1,
                "zero": 0,
                "gap": (last + 2) % INT_MAX,
                "repeat": max(last, 0),
                "any": data.draw(st.integers(0, INT_MAX)),
            }[kind]
            batch = Batch(pid, epoch, seq, offset, count)
            entry = psm.last_entry(pid)
            dup = None if entry is None else entry.find_duplicate_batch(batch)
            model_dup = next(
                (b for b in model.batches if b == (epoch, seq, batch.last_sequence)), None
            )
            assert (dup is not None) == (model_dup is not None)
            expected_error = pending.check(epoch, seq, model.epoch)
            if expected_error is not None:
                with pytest.raises(expected_error):
                    info.append(batch)
                break
            info.append(batch)
            pending.apply(epoch, seq, batch.last_sequence)
            offset += count
        if expected_error is None:
            psm.update(info)
            psm.update_map_end_offset(offset)
            model = pending
            next_offset = offset
        entry = psm.last_entry(pid)
        if entry is None:
            assert model.epoch == -1
            continue
        assert entry.producer_epoch == model.epoch
        assert entry.last_seq == model.last_seq
        assert [(entry.producer_epoch, b.first_seq, b.last_seq) for b in entry.batch_metadata] == model.batches


# -- real record batches (kafka_py.clients.common.record, once present) ------------------------------------


def test_real_batches_from_record_module(psm):
    drb = pytest.importorskip("kafka_py.clients.common.record.default_record_batch")
    data = drb.DefaultRecordBatch(
        drb.build_batch(
            [drb.SimpleRecord(b"k", b"v", timestamp=5), drb.SimpleRecord(b"k", b"w", timestamp=6)],
            base_offset=0,
            producer_id=3,
            producer_epoch=1,
            base_sequence=0,
            is_transactional=True,
        )
    )
    marker = EndTransactionMarker(ControlRecordType.ABORT, 4)
    control = drb.DefaultRecordBatch(
        drb.build_batch(
            [drb.SimpleRecord(marker.record_key(), marker.serialize_value(), timestamp=7)],
            base_offset=2,
            producer_id=3,
            producer_epoch=1,
            is_transactional=True,
            is_control_batch=True,
        )
    )
    assert append(psm, data) is None
    assert psm.first_undecided_offset == 0
    assert psm.last_entry(3).find_duplicate_batch(data) == BatchMetadata(1, 1, 1, 6)
    assert append(psm, control, origin=AppendOrigin.COORDINATOR) == CompletedTxn(3, 0, 2, True)
    entry = psm.last_entry(3)
    assert (entry.coordinator_epoch, entry.last_timestamp, entry.current_txn_first_offset) == (4, 7, None)
