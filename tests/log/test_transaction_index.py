"""TransactionIndex: the .txnindex file of aborted transactions (after Kafka's TransactionIndexTest)."""
from __future__ import annotations

import os
import struct

import pytest

from kafka_py.log.abstract_index import CorruptIndexException
from kafka_py.log.producer_state_manager import CompletedTxn
from kafka_py.log.transaction_index import ABORTED_TXN_TOTAL_SIZE, AbortedTxn, TransactionIndex


def _index(tmp_path, start_offset=0, name="00000000000000000000.txnindex"):
    return TransactionIndex(start_offset, str(tmp_path / name))


def test_entries_are_kafkas_34_byte_layout_and_survive_reopen(tmp_path):
    index = _index(tmp_path)
    assert not os.path.exists(index.file)  # created by the first abort only
    txns = [AbortedTxn(0, 0, 10, 11), AbortedTxn(1, 5, 15, 13), AbortedTxn(0, 18, 35, 25)]
    for t in txns:
        index.append(t)
    index.flush()
    with open(index.file, "rb") as f:
        data = f.read()
    assert len(data) == 3 * ABORTED_TXN_TOTAL_SIZE == 102
    assert struct.unpack_from(">hqqqq", data, 34) == (0, 1, 5, 15, 13)
    assert TransactionIndex(0, index.file).all_aborted_txns == txns


def test_append_must_increase_last_offset(tmp_path):
    index = _index(tmp_path)
    index.append(AbortedTxn(0, 0, 10, 11))
    with pytest.raises(ValueError):
        index.append(AbortedTxn(1, 5, 10, 13))
    assert index.all_aborted_txns == [AbortedTxn(0, 0, 10, 11)]


def test_collect_aborted_txns_and_completion(tmp_path):
    index = _index(tmp_path)
    txns = [AbortedTxn(0, 0, 10, 2), AbortedTxn(1, 5, 15, 16), AbortedTxn(2, 18, 35, 25),
            AbortedTxn(3, 32, 50, 40)]
    for t in txns:
        index.append(t)
    # overlapping [0, 32): the first three; the fourth starts at 32, and its LSO 40 ends the search
    result = index.collect_aborted_txns(0, 32)
    assert result.aborted_transactions == txns[:3] and result.is_complete
    # [0, 51): every entry, and none says the range ends in this segment
    result = index.collect_aborted_txns(0, 51)
    assert result.aborted_transactions == txns and not result.is_complete
    # [0, 16): an entry with LSO >= 16 ends the search
    result = index.collect_aborted_txns(0, 16)
    assert result.aborted_transactions == txns[:2] and result.is_complete
    # starting past the first transactions
    result = index.collect_aborted_txns(16, 33)
    assert result.aborted_transactions == [txns[2], txns[3]] and result.is_complete
    assert index.collect_aborted_txns(51, 60).aborted_transactions == []


def test_truncate_to_drops_later_aborts_and_appends_continue(tmp_path):
    index = _index(tmp_path)
    txns = [AbortedTxn(0, 0, 10, 11), AbortedTxn(1, 5, 15, 16), AbortedTxn(2, 18, 35, 36)]
    for t in txns:
        index.append(t)
    index.truncate_to(15)
    assert index.all_aborted_txns == txns[:1]
    assert os.path.getsize(index.file) == ABORTED_TXN_TOTAL_SIZE
    index.append(AbortedTxn(1, 12, 14, 15))
    assert TransactionIndex(0, index.file).all_aborted_txns == [txns[0], AbortedTxn(1, 12, 14, 15)]


def test_reset_rename_and_delete(tmp_path):
    index = _index(tmp_path)
    index.append(AbortedTxn(0, 0, 10, 11))
    index.reset()
    assert index.all_aborted_txns == [] and os.path.getsize(index.file) == 0
    index.append(AbortedTxn(0, 0, 10, 11))
    new_file = str(tmp_path / "00000000000000000000.txnindex.deleted")
    index.rename_to(new_file)
    assert index.file == new_file and os.path.exists(new_file)
    assert index.delete_if_exists() and not os.path.exists(new_file)
    assert not index.delete_if_exists()


def test_torn_trailing_entry_is_ignored_and_overwritten(tmp_path):
    index = _index(tmp_path)
    index.append(AbortedTxn(0, 0, 10, 11))
    with open(index.file, "ab") as f:
        f.write(b"\x00" * 20)  # a crash mid-append
    reopened = TransactionIndex(0, index.file)
    assert reopened.all_aborted_txns == [AbortedTxn(0, 0, 10, 11)]
    reopened.append(AbortedTxn(1, 12, 20, 21))
    assert os.path.getsize(index.file) == 2 * ABORTED_TXN_TOTAL_SIZE
    assert TransactionIndex(0, index.file).all_aborted_txns == [AbortedTxn(0, 0, 10, 11), AbortedTxn(1, 12, 20, 21)]


def test_sanity_check_refuses_entries_below_the_base_offset(tmp_path):
    index = _index(tmp_path, start_offset=100, name="00000000000000000100.txnindex")
    index.append(AbortedTxn(0, 0, 10, 11))
    with pytest.raises(CorruptIndexException):
        TransactionIndex(100, index.file).sanity_check()


def test_unknown_version_is_an_error(tmp_path):
    index = _index(tmp_path)
    with open(index.file, "wb") as f:
        f.write(struct.pack(">hqqqq", 1, 0, 0, 10, 11))
    with pytest.raises(Exception, match="version"):
        index.all_aborted_txns


def test_aborted_txn_from_completed_txn():
    txn = AbortedTxn.of(CompletedTxn(7, 100, 150, True), 151)
    assert (txn.producer_id, txn.first_offset, txn.last_offset, txn.last_stable_offset) == (7, 100, 150, 151)
    assert AbortedTxn.from_bytes(txn.to_bytes()) == txn
