"""``read_committed`` over log dirs: the last stable offset of a partition from its files, and
the aborted transactions a read must drop.

No single Kafka counterpart: a broker keeps the last stable offset in memory (its producer
state, ProducerStateManager.scala) and hands a ``read_committed`` consumer the aborted
transactions of the fetched range from the transaction index (Log.collectAbortedTransactions);
the consumer then drops their batches (Fetcher.java). The ``kafka-log`` source does both from
the files, on the driver:

* the last stable offset below a bound (the high watermark or the log end): the open
  transactions of the newest producer snapshot (``<offset>.snapshot``, each producer's
  ``current_txn_first_offset``) at or below the bound, followed forward batch header by batch
  header (a transactional data batch opens its producer's transaction, a control batch closes
  it) up to the bound; the earliest first offset still open, else the bound. A transaction
  whose marker lies at or past the bound is still open there, as it is for a broker until the
  high watermark passes its marker;
* the aborted transactions: every entry of the partition's ``.txnindex`` files (producer id,
  first offset, offset of the ABORT marker), handed to each slice that overlaps them; the
  executor drops a transactional batch of that producer whose offsets lie between the two.
"""
from __future__ import annotations

import logging
import os
from typing import Iterable, Optional

from kafka_py.clients.common.errors import CorruptRecordException
from kafka_py.log import log_files
from kafka_py.log.producer_state_manager import CorruptSnapshotException, ProducerStateManager
from kafka_py.log.transaction_index import AbortedTxn, TransactionIndex
from kafka_py.clients.common.record.file_records import FileRecords

logger = logging.getLogger(__name__)

#: (producer id, first offset, last offset) of an aborted transaction, as a slice carries it.
AbortedRange = tuple[int, int, int]


def aborted_transactions(log) -> list[AbortedTxn]:
    """Every aborted transaction of the partition's transaction indexes, by marker offset."""
    found: list[AbortedTxn] = []
    for segment in log.segments:
        path = log_files.transaction_index_file(log.dir, segment.base_offset)
        if os.path.exists(path):
            found.extend(TransactionIndex(segment.base_offset, path).all_aborted_txns)
    found.sort(key=lambda t: t.last_offset)
    return found


def aborted_ranges(aborted: Iterable[AbortedTxn], from_offset: int, until_offset: int) -> tuple[AbortedRange, ...]:
    """The aborted transactions with a batch possibly in ``[from_offset, until_offset)``."""
    return tuple((t.producer_id, t.first_offset, t.last_offset) for t in aborted
                 if t.last_offset >= from_offset and t.first_offset < until_offset)


def is_aborted(aborted: tuple[AbortedRange, ...], producer_id: int, base_offset: int) -> bool:
    for pid, first, last in aborted:
        if pid == producer_id and first <= base_offset <= last:
            return True
    return False


def _newest_snapshot(log, bound: int) -> tuple[int, dict[int, int]]:
    """(offset, producer id -> first offset of its open transaction) of the newest readable
    producer snapshot at or below ``bound``; (log start, {}) without one."""
    snapshots = []
    for name in os.listdir(log.dir):
        if name.endswith(log_files.PRODUCER_SNAPSHOT_FILE_SUFFIX):
            try:
                offset = log_files.offset_from_file_name(name)
            except ValueError:
                continue
            if log.log_start_offset <= offset <= bound:
                snapshots.append((offset, os.path.join(log.dir, name)))
    for offset, path in sorted(snapshots, reverse=True):
        try:
            entries = ProducerStateManager.read_snapshot(path)
        except (CorruptSnapshotException, OSError) as e:
            logger.info("Skipping producer snapshot %s: %s", path, e)
            continue
        return offset, {e.producer_id: e.current_txn_first_offset for e in entries
                        if e.current_txn_first_offset is not None}
    return log.log_start_offset, {}


def last_stable_offset(log, bound: int) -> int:
    """The partition's last stable offset when only offsets below ``bound`` count as written."""
    start, open_txns = _newest_snapshot(log, bound)
    segments = log.segments
    for i, segment in enumerate(segments):
        next_base = segments[i + 1].base_offset if i + 1 < len(segments) else None
        if next_base is not None and next_base <= start:
            continue
        if segment.base_offset >= bound:
            break
        # read only, closed with close_handlers: the broker may be appending to it
        records = FileRecords.open(segment.log_file, file_already_exists=True, mutable=False)
        try:
            try:
                for batch in records.batches_from(0):
                    if batch.last_offset < start:
                        continue
                    if batch.last_offset >= bound:
                        break
                    if batch.producer_id >= 0 and batch.is_transactional:
                        if batch.is_control_batch:
                            open_txns.pop(batch.producer_id, None)
                        else:
                            open_txns.setdefault(batch.producer_id, batch.base_offset)
            except CorruptRecordException:
                pass  # a torn tail: nothing past it is below the bound anyway
        finally:
            records.close_handlers()
    return min([bound, *open_txns.values()])


__all__ = ["AbortedRange", "aborted_ranges", "aborted_transactions", "is_aborted", "last_stable_offset"]
