"""Log and transactions: markers appended as the coordinator, the last stable offset, the
transaction index and read_committed reads, recovery and truncation of the index, and the
cleaner's handling of aborted data (after Kafka's LogTest and LogCleanerTest transaction cases)."""
from __future__ import annotations

import os

import pytest

from kafka_py.clients.common.errors import InvalidRecordException, TransactionCoordinatorFencedException
from kafka_py.log import log_files
from kafka_py.log.log import FetchIsolation, Log
from kafka_py.log.log_cleaner_manager import LogToClean
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.log.transaction_index import AbortedTxn, TransactionIndex
from kafka_py.clients.common.record.control_record_type import ControlRecordType, EndTransactionMarker
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.utils.time import MockTime
from tests.log.log_test_helpers import config, decode, make_records, read_all
from tests.log.test_log_cleaner import compact_config, make_cleaner

COORDINATOR_EPOCH = 5


class Producer:
    """A transactional producer writing straight into a Log, and its coordinator's markers."""

    def __init__(self, log: Log, producer_id: int, epoch: int = 0):
        self.log = log
        self.producer_id = producer_id
        self.epoch = epoch
        self.sequence = 0

    def send(self, *values: bytes, transactional: bool = True, keys=None):
        pairs = [(None if keys is None else keys[i], v) for i, v in enumerate(values)]
        records = make_records(pairs, producer_id=self.producer_id, producer_epoch=self.epoch,
                               base_sequence=self.sequence, is_transactional=transactional)
        self.sequence += len(values)
        return self.log.append_as_leader(records, leader_epoch=0, origin=AppendOrigin.CLIENT)

    def end(self, commit: bool, coordinator_epoch: int = COORDINATOR_EPOCH):
        marker = EndTransactionMarker(ControlRecordType.COMMIT if commit else ControlRecordType.ABORT,
                                      coordinator_epoch)
        records = MemoryRecords.with_end_transaction_marker(0, 1_000, 0, self.producer_id, self.epoch, marker)
        return self.log.append_as_leader(records, leader_epoch=0, origin=AppendOrigin.COORDINATOR)


def open_log(tmp_path, cfg=None, **kwargs) -> Log:
    return Log(str(tmp_path / "txn-0"), cfg or config(), time=MockTime(), **kwargs)


def advance_hw(log: Log) -> None:
    log.update_high_watermark(log.log_end_offset)


def committed_values(log: Log, start: int = 0):
    """What a read_committed consumer keeps: records below the LSO minus aborted transactions'."""
    out = []
    offset = start
    while offset < log.last_stable_offset:
        info = log.read(offset, 1 << 20, FetchIsolation.TXN_COMMITTED, min_one_message=True)
        assert info.aborted_transactions is not None
        aborted = sorted(info.aborted_transactions, key=lambda a: a.first_offset)
        data = info.records.read_bytes(0, info.records.size_in_bytes()) if hasattr(info.records, "read_bytes") \
            else bytes(info.records.buffer)
        batches = list(MemoryRecords(bytearray(data)).batches(strict=False))
        if not batches:
            break
        aborted_producers: set = set()
        for batch in batches:
            for a in aborted:
                if a.first_offset <= batch.base_offset and a.producer_id == batch.producer_id:
                    aborted_producers.add(a.producer_id)
            if batch.is_control_batch:
                aborted_producers.discard(batch.producer_id)
            elif batch.producer_id not in aborted_producers or not batch.is_transactional:
                out.extend(r.value for r in batch.records() if r.offset >= offset)
            offset = batch.last_offset + 1
    return out


# ---------------------------------------------------------------------------- markers and the LSO


def test_open_transaction_holds_the_lso_and_a_commit_releases_it(tmp_path):
    log = open_log(tmp_path)
    p = Producer(log, 1)
    p.send(b"a", b"b")
    log.append_as_leader(make_records([b"plain"]), leader_epoch=0)
    advance_hw(log)
    assert log.high_watermark == 3 and log.last_stable_offset == 0
    # read_committed stops at the LSO: nothing yet
    info = log.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED)
    assert decode(info.records) == [] and info.aborted_transactions == []
    p.end(commit=True)
    # the marker is not yet replicated: the transaction stays unstable until the HW passes it
    assert log.last_stable_offset == 0
    advance_hw(log)
    assert log.last_stable_offset == log.log_end_offset == 4
    assert committed_values(log) == [b"a", b"b", b"plain"]
    assert not os.path.exists(log_files.transaction_index_file(log.dir, 0))


def test_abort_is_indexed_and_reported_to_read_committed_fetches(tmp_path):
    log = open_log(tmp_path)
    p1, p2 = Producer(log, 1), Producer(log, 2)
    p1.send(b"x1")            # 0
    p2.send(b"y1")            # 1
    p1.send(b"x2")            # 2
    p1.end(commit=False)      # 3: abort of p1's [0, 3]; LSO then is p2's first offset 1
    p2.send(b"y2")            # 4
    p2.end(commit=True)       # 5
    advance_hw(log)
    assert log.last_stable_offset == 6
    index = TransactionIndex(0, log_files.transaction_index_file(log.dir, 0))
    assert index.all_aborted_txns == [AbortedTxn(1, 0, 3, 1)]
    info = log.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED)
    assert [(a.producer_id, a.first_offset) for a in info.aborted_transactions] == [(1, 0)]
    # read_uncommitted sees everything, read_committed drops the aborted records
    markers = b"\x00\x00\x00\x00\x00\x05"  # version 0, coordinator epoch 5
    assert [v for _, _, v in read_all(log, 0, FetchIsolation.HIGH_WATERMARK)] == [b"x1", b"y1", b"x2", markers,
                                                                                  b"y2", markers]
    assert committed_values(log) == [b"y1", b"y2"]
    # a fetch starting after the abort marker has nothing aborted to drop
    assert log.read(4, 1 << 20, FetchIsolation.TXN_COMMITTED).aborted_transactions == []


def test_aborted_transaction_spanning_segments_is_found_from_the_earlier_segment(tmp_path):
    log = open_log(tmp_path)
    p = Producer(log, 7)
    p.send(b"a")              # 0, segment 0
    log.roll()
    p.send(b"b")              # 1, segment 1
    p.end(commit=False)       # 2, marker in segment 1
    log.append_as_leader(make_records([b"c"]), leader_epoch=0)  # 3
    advance_hw(log)
    # the abort is indexed in the segment of its marker, and found by a fetch from segment 0
    assert TransactionIndex(1, log_files.transaction_index_file(log.dir, 1)).all_aborted_txns == [
        AbortedTxn(7, 0, 2, 3)]
    info = log.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED)
    assert [(a.producer_id, a.first_offset) for a in info.aborted_transactions] == [(7, 0)]
    assert committed_values(log) == [b"c"]
    assert [(t.producer_id, t.first_offset) for t in log.collect_aborted_transactions(0, 4)] == [(7, 0)]


def test_only_the_coordinator_writes_markers_and_a_stale_coordinator_is_fenced(tmp_path):
    log = open_log(tmp_path)
    p = Producer(log, 3)
    p.send(b"a")
    marker = EndTransactionMarker(ControlRecordType.COMMIT, COORDINATOR_EPOCH)
    client_marker = MemoryRecords.with_end_transaction_marker(0, 1, 0, 3, 0, marker)
    with pytest.raises(InvalidRecordException):
        log.append_as_leader(client_marker, leader_epoch=0, origin=AppendOrigin.CLIENT)
    p.end(commit=True)
    p.send(b"b")
    # a coordinator from an older epoch (a zombie after failover) cannot end the transaction
    with pytest.raises(TransactionCoordinatorFencedException):
        p.end(commit=False, coordinator_epoch=COORDINATOR_EPOCH - 1)
    assert log.log_end_offset == 3


def test_ongoing_transaction_survives_a_clean_restart(tmp_path):
    log = open_log(tmp_path)
    p = Producer(log, 9)
    log.append_as_leader(make_records([b"before"]), leader_epoch=0)
    p.send(b"open")
    advance_hw(log)
    assert log.last_stable_offset == 1
    log.close()
    reopened = open_log(tmp_path, recovery_point=log.log_end_offset)
    reopened.update_high_watermark(reopened.log_end_offset)
    assert reopened.last_stable_offset == 1
    Producer(reopened, 9).end(commit=False)
    advance_hw(reopened)
    assert reopened.last_stable_offset == reopened.log_end_offset
    assert committed_values(reopened) == [b"before"]


def test_recovery_after_a_crash_rebuilds_the_transaction_index(tmp_path):
    cfg = config(segment_size=400)
    log = open_log(tmp_path, cfg)
    producers = [Producer(log, pid) for pid in (1, 2, 3)]
    for round_ in range(6):
        for p in producers:
            p.send(b"r%d-%d" % (round_, p.producer_id))
        for i, p in enumerate(producers):
            p.end(commit=(round_ + i) % 2 == 0)
    advance_hw(log)
    assert log.number_of_segments > 2
    expected = {s.base_offset: s.txn_index.all_aborted_txns for s in log.log_segments}
    assert sum(len(v) for v in expected.values()) == 9
    expected_values = committed_values(log)
    end = log.log_end_offset
    # a crash: no clean shutdown, nothing flushed, the indexes gone
    for segment in log.log_segments:
        segment.close_handlers()
    for name in os.listdir(log.dir):
        if name.endswith(".txnindex") or name.endswith(".snapshot"):
            os.remove(os.path.join(log.dir, name))
    recovered = open_log(tmp_path, cfg, recovery_point=0, had_clean_shutdown=False)
    assert recovered.log_end_offset == end
    recovered.update_high_watermark(end)
    assert {s.base_offset: s.txn_index.all_aborted_txns for s in recovered.log_segments} == expected
    assert committed_values(recovered) == expected_values


def test_truncation_drops_index_entries_of_truncated_aborts(tmp_path):
    log = open_log(tmp_path)
    p = Producer(log, 4)
    p.send(b"a")
    p.end(commit=False)       # 1
    p.send(b"b")
    p.end(commit=False)       # 3
    assert [t.last_offset for t in log.active_segment.txn_index.all_aborted_txns] == [1, 3]
    log.truncate_to(3)
    assert [t.last_offset for t in log.active_segment.txn_index.all_aborted_txns] == [1]
    # the truncated transaction is open again (its marker is gone): the LSO waits on it
    advance_hw(log)
    assert log.last_stable_offset == 2
    p.end(commit=False)
    advance_hw(log)
    assert [t.last_offset for t in TransactionIndex(0, log_files.transaction_index_file(log.dir, 0))
            .all_aborted_txns] == [1, 3]


def test_deleted_segments_take_their_transaction_index_with_them(tmp_path):
    log = open_log(tmp_path, config(file_delete_delay_ms=0))
    p = Producer(log, 4)
    p.send(b"a")
    p.end(commit=False)
    log.roll()
    log.append_as_leader(make_records([b"b"]), leader_epoch=0)
    advance_hw(log)
    assert os.path.exists(log_files.transaction_index_file(log.dir, 0))
    log.maybe_increment_log_start_offset(2)
    log.delete_old_segments()
    assert not os.path.exists(log_files.transaction_index_file(log.dir, 0))
    assert not any(n.startswith("00000000000000000000.") for n in os.listdir(log.dir))


# ---------------------------------------------------------------------------- the cleaner


def _txn_batch(pairs, producer_id, epoch, sequence):
    return MemoryRecords(bytearray(build_batch([SimpleRecord(k, v, timestamp=1) for k, v in pairs],
                                               producer_id=producer_id, producer_epoch=epoch,
                                               base_sequence=sequence, is_transactional=True)))


def test_cleaner_removes_aborted_records_and_keeps_the_abort_in_the_cleaned_index(tmp_path):
    time = MockTime()
    log = Log(str(tmp_path / "compacted-0"), compact_config(), time=time)
    log.append_as_leader(MemoryRecords(bytearray(build_batch([SimpleRecord(b"k1", b"v1", timestamp=1)]))), 0)
    log.append_as_leader(_txn_batch([(b"k1", b"aborted"), (b"k2", b"aborted")], 11, 0, 0), 0)
    p = Producer(log, 11)
    p.end(commit=False)
    log.append_as_leader(_txn_batch([(b"k3", b"committed")], 12, 0, 0), 0)
    Producer(log, 12).end(commit=True)
    log.roll()
    advance_hw(log)
    cleaner = make_cleaner(time)
    cleaner.clean(LogToClean(log.topic_partition, log, 0, log.active_segment.base_offset))
    kept = [(k, v) for _, k, v in read_all(log, 0, FetchIsolation.LOG_END)]
    # the aborted records are gone whatever their keys; k1's committed value stays
    assert (b"k1", b"v1") in kept and (b"k3", b"committed") in kept
    assert b"aborted" not in [v for _, v in kept]
    # within this clean the abort marker stays (its transaction had a batch here) and the
    # cleaned segment's index keeps the abort, as Kafka's cleaner does
    assert log.log_segments[0].txn_index.all_aborted_txns == [AbortedTxn(11, 1, 3, 4)]
    assert committed_values(log) == [b"v1", b"committed"]
    # Once the producer has expired (its last batch need not stay for its sequence numbers),
    # cleans past the delete horizon drop the emptied batch, then the marker and its entry.
    time.sleep(log.max_producer_id_expiration_ms + 1)
    log._expire_producers()
    for _ in range(2):
        cleaner.do_clean(LogToClean(log.topic_partition, log, 0, log.active_segment.base_offset),
                         delete_horizon_ms=time.milliseconds() + 10**9)
    assert log.log_segments[0].txn_index.all_aborted_txns == []
    assert [o for o, _, _ in read_all(log, 0, FetchIsolation.LOG_END)] == [0, 4, 5]  # v1, k3 and its commit
    assert committed_values(log) == [b"v1", b"committed"]
