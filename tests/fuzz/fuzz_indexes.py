"""Fuzz target: a segment's index files as a log opens them: the offset index (.index), the
time index (.timeindex) and the transaction index (.txnindex). The first byte picks the
index; the rest is the file.

Contract: sanity_check passes or raises CorruptIndexException (the log then rebuilds the
index from its segment); the transaction index may also refuse an entry of an unknown
version with KafkaException. An index that passed its sanity check answers every lookup.
"""
from __future__ import annotations

import os
from typing import Iterable

from tests.fuzz.harness import scratch_dir

from kafka_py.clients.common.errors import KafkaException
from kafka_py.log.abstract_index import CorruptIndexException
from kafka_py.log.offset_index import OffsetIndex
from kafka_py.log.time_index import TimeIndex
from kafka_py.log.transaction_index import TransactionIndex

_BASE_OFFSET = 100
_ROOT = scratch_dir("indexes")
_FILES = [os.path.join(_ROOT, f"00000000000000000100{suffix}") for suffix in (".index", ".timeindex", ".txnindex")]


def one_input(data: bytes) -> None:
    if not data:
        return
    kind = data[0] % 3
    path = _FILES[kind]
    with open(path, "wb") as f:
        f.write(data[1:])
    if kind == 2:
        index = TransactionIndex(_BASE_OFFSET, path)
        try:
            index.sanity_check()
            index.all_aborted_txns
            for fetch_offset in (0, _BASE_OFFSET, _BASE_OFFSET + 10, 1 << 40):
                index.collect_aborted_txns(fetch_offset, fetch_offset + 50)
        except (CorruptIndexException, KafkaException):
            pass
        finally:
            index.close()
        return
    index = OffsetIndex(path, _BASE_OFFSET, writable=False) if kind == 0 else TimeIndex(path, _BASE_OFFSET,
                                                                                        writable=False)
    try:
        try:
            index.sanity_check()
        except CorruptIndexException:
            return
        for n in range(index.entries):
            index.entry(n)
        index.last_entry
        if kind == 0:
            for target in (0, _BASE_OFFSET, _BASE_OFFSET + 7, 1 << 40):
                position = index.lookup(target)
                index.fetch_upper_bound_offset(position, 4096)
        else:
            for target in (-1, 0, 1_700_000_000_000, 1 << 62):
                index.lookup(target)
    finally:
        index.close_handler()


def seeds() -> Iterable[tuple[str, bytes]]:
    from kafka_py.log.transaction_index import AbortedTxn

    offsets, times, txns = scratch_dir("index-seeds"), None, None
    offset_path = os.path.join(offsets, "00000000000000000100.index")
    time_path = os.path.join(offsets, "00000000000000000100.timeindex")
    txn_path = os.path.join(offsets, "00000000000000000100.txnindex")
    offset_index = OffsetIndex(offset_path, _BASE_OFFSET, max_index_size=1024)
    time_index = TimeIndex(time_path, _BASE_OFFSET, max_index_size=1200)
    for i in range(5):
        offset_index.append(_BASE_OFFSET + 10 * i, 400 * i)
        time_index.maybe_append(1_700_000_000_000 + i, _BASE_OFFSET + 10 * i)
    offset_index.close()
    time_index.close()
    txn_index = TransactionIndex(_BASE_OFFSET, txn_path)
    txn_index.append(AbortedTxn(producer_id=5, first_offset=100, last_offset=120, last_stable_offset=121))
    txn_index.append(AbortedTxn(producer_id=6, first_offset=110, last_offset=130, last_stable_offset=131))
    txn_index.flush()
    txn_index.close()
    for kind, path in enumerate((offset_path, time_path, txn_path)):
        with open(path, "rb") as f:
            yield os.path.basename(path).rsplit(".", 1)[1], bytes([kind]) + f.read()
