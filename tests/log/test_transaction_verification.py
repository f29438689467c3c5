"""Transaction verification on the partition side (KIP-890 part 1): the guard a leader keeps
while the coordinator is asked, and the log's refusal of a transaction's first batch without
it (log/verification_guard.py, Log.maybe_start_transaction_verification, Log.append_as_leader)."""
from __future__ import annotations

import pytest

from kafka_py.clients.common.errors import InvalidTxnStateException, OutOfOrderSequenceException
from kafka_py.log.log import Log
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.log.verification_guard import SENTINEL, VerificationGuard, VerificationStateEntry
from kafka_py.clients.common.record.control_record_type import ControlRecordType, EndTransactionMarker
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.utils.time import MockTime
from tests.log.log_test_helpers import config, make_records

PID = 7


def open_log(tmp_path) -> Log:
    return Log(str(tmp_path / "verified-0"), config(), time=MockTime())


def batch(value: bytes, sequence: int, epoch: int = 0, producer_id: int = PID, transactional: bool = True):
    return make_records([(None, value)], producer_id=producer_id, producer_epoch=epoch, base_sequence=sequence,
                        is_transactional=transactional)


def append(log: Log, records, guard):
    return log.append_as_leader(records, leader_epoch=0, origin=AppendOrigin.CLIENT, verification_guard=guard)


def marker(log: Log, commit: bool, epoch: int = 0, producer_id: int = PID) -> None:
    records = MemoryRecords.with_end_transaction_marker(
        0, 1_000, 0, producer_id, epoch,
        EndTransactionMarker(ControlRecordType.COMMIT if commit else ControlRecordType.ABORT, 1))
    log.append_as_leader(records, leader_epoch=0, origin=AppendOrigin.COORDINATOR)


def test_a_guard_verifies_only_itself_and_the_sentinel_nothing() -> None:
    a, b = VerificationGuard(), VerificationGuard()
    assert a.verify(a) and not a.verify(b) and not a.verify(SENTINEL) and not a.verify(None)
    assert not SENTINEL.verify(SENTINEL)
    assert a.value != b.value


def test_the_entry_keeps_the_lowest_sequence_of_its_epoch() -> None:
    entry = VerificationStateEntry(0, 5, 1)
    entry.maybe_update_lowest_sequence_and_epoch(9, 1)
    assert (entry.lowest_sequence, entry.epoch) == (5, 1)
    entry.maybe_update_lowest_sequence_and_epoch(2, 1)
    assert entry.lowest_sequence == 2
    entry.maybe_update_lowest_sequence_and_epoch(0, 0)  # an older epoch changes nothing
    assert (entry.lowest_sequence, entry.epoch) == (2, 1)
    entry.maybe_update_lowest_sequence_and_epoch(7, 2)  # a newer one starts over
    assert (entry.lowest_sequence, entry.epoch) == (7, 2)


def test_a_first_transactional_batch_without_its_guard_is_refused_and_nothing_moves(tmp_path) -> None:
    log = open_log(tmp_path)
    with pytest.raises(InvalidTxnStateException):
        append(log, batch(b"stray", 0), SENTINEL)
    assert log.log_end_offset == 0
    log.update_high_watermark(log.log_end_offset)
    assert log.first_unstable_offset is None and log.last_stable_offset == 0
    # another verification's guard is no better
    log.maybe_start_transaction_verification(PID, 0, 0)
    with pytest.raises(InvalidTxnStateException):
        append(log, batch(b"stray", 0), VerificationGuard())
    assert log.log_end_offset == 0
    # without verification (None) the log appends as Kafka 2.8 does
    append(log, batch(b"unchecked", 0), None)
    assert log.log_end_offset == 1


def test_the_verified_first_batch_opens_the_transaction_and_later_ones_need_no_guard(tmp_path) -> None:
    log = open_log(tmp_path)
    guard = log.maybe_start_transaction_verification(PID, 0, 0)
    assert guard is not SENTINEL and log.verification_guard(PID) is guard
    # a retry of the same batch before the answer shares the verification
    assert log.maybe_start_transaction_verification(PID, 0, 0) is guard
    append(log, batch(b"first", 0), guard)
    assert log.first_unstable_offset == 0
    assert log.verification_guard(PID) is SENTINEL  # used up
    # the transaction is open here at this epoch: nothing to verify
    assert log.has_ongoing_transaction(PID, 0)
    assert log.maybe_start_transaction_verification(PID, 1, 0) is SENTINEL
    append(log, batch(b"second", 1), SENTINEL)
    assert log.log_end_offset == 2
    # a newer epoch of the producer is not this transaction
    assert not log.has_ongoing_transaction(PID, 1)
    with pytest.raises(InvalidTxnStateException):
        append(log, batch(b"newer", 0, epoch=1), SENTINEL)
    # non-transactional and other producers' idempotent batches are not concerned
    append(log, batch(b"plain", 0, producer_id=PID + 1, transactional=False), SENTINEL)
    assert log.log_end_offset == 3


def test_a_marker_between_the_verification_and_the_append_voids_the_guard(tmp_path) -> None:
    """The coordinator said yes, then the transaction was aborted (its marker written here)
    before the batch arrived: the batch must not open a transaction nobody will end."""
    log = open_log(tmp_path)
    guard = log.maybe_start_transaction_verification(PID, 0, 0)
    marker(log, commit=False)
    assert log.verification_guard(PID) is SENTINEL
    with pytest.raises(InvalidTxnStateException):
        append(log, batch(b"late", 0), guard)
    assert log.log_end_offset == 1  # the marker only
    log.update_high_watermark(log.log_end_offset)
    assert log.last_stable_offset == 1


def test_a_higher_sequence_waits_for_the_lowest_one_being_verified(tmp_path) -> None:
    log = open_log(tmp_path)
    guard = log.maybe_start_transaction_verification(PID, 0, 0)
    # sequence 5 verified too (the same guard), but 0 is still out
    assert log.maybe_start_transaction_verification(PID, 5, 0) is guard
    with pytest.raises(OutOfOrderSequenceException):
        append(log, batch(b"ahead", 5), guard)
    assert log.log_end_offset == 0
    append(log, batch(b"first", 0), guard)
    assert log.log_end_offset == 1


def test_stale_verifications_expire_with_idle_producers(tmp_path) -> None:
    log = open_log(tmp_path)
    log.maybe_start_transaction_verification(PID, 0, 0)
    psm = log.producer_state_manager
    psm.remove_expired_producers(log.time.milliseconds())
    assert psm.verification_state_entry(PID) is not None
    psm.remove_expired_producers(log.time.milliseconds() + psm.max_producer_id_expiration_ms)
    assert psm.verification_state_entry(PID) is None
