"""Port of core/src/main/scala/kafka/log/TransactionIndex.scala (Kafka 2.8.2), with AbortedTxn
and TxnIndexSearchResult.

Each segment may have a ``.txnindex`` file listing the transactions that were aborted by a
marker in that segment. An entry is 34 bytes, big-endian, Kafka's layout::

    version             int16   (0)
    producer_id         int64
    first_offset        int64   first offset of the transaction (maybe in an earlier segment)
    last_offset         int64   offset of the ABORT marker
    last_stable_offset  int64   the partition's LSO once the abort completed

Entries are appended in increasing ``last_offset`` order. A ``read_committed`` fetch asks the
index of the segment it reads (and of later segments, until an entry's last stable offset
reaches the end of the fetched range) which aborted transactions overlap the fetched
offsets, so the consumer can drop their records.

The file exists only once something was aborted in the segment. Unlike Kafka, which keeps a
FileChannel open per index, this keeps no descriptor: the broker holds tens of thousands of
segments and one descriptor each (the ``.log``). The entries are kept in memory as the raw
34-byte records (loaded on first use); a write appends to the file through a short-lived
descriptor and ``flush`` fsyncs it.

Writes are not thread safe, as in Kafka: the Log makes them under its lock. Reads need no
lock: the in-memory entries are an immutable ``bytes`` replaced on every change, so a fetch
searching the index while the Log appends or truncates sees one consistent version.
"""
from __future__ import annotations

import bisect
import os
import struct
import threading
from dataclasses import dataclass
from typing import Iterator, List, Optional

from kafka_py.clients.common.errors import KafkaException
from kafka_py.log.abstract_index import CorruptIndexException
from kafka_py.clients.common.utils.utils import write_fully

__all__ = ["AbortedTxn", "TransactionIndex", "TxnIndexSearchResult"]

_ENTRY = struct.Struct(">hqqqq")
ABORTED_TXN_TOTAL_SIZE = _ENTRY.size  # 34
ABORTED_TXN_CURRENT_VERSION = 0
_LAST_OFFSET_AT = 2 + 8 + 8
_LONG = struct.Struct(">q")


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """One entry of a transaction index; also what a Fetch response lists for read_committed
    consumers (``producer_id`` and ``first_offset``, FetchResponse.AbortedTransaction)."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    version: int = ABORTED_TXN_CURRENT_VERSION

    @classmethod
    def of(cls, completed_txn, last_stable_offset: int) -> "AbortedTxn":
        return cls(completed_txn.producer_id, completed_txn.first_offset, completed_txn.last_offset,
                   last_stable_offset)

    def to_bytes(self) -> bytes:
        return _ENTRY.pack(self.version, self.producer_id, self.first_offset, self.last_offset,
                           self.last_stable_offset)

    @classmethod
    def from_bytes(cls, data, position: int = 0) -> "AbortedTxn":
        version, producer_id, first_offset, last_offset, lso = _ENTRY.unpack_from(data, position)
        return cls(producer_id, first_offset, last_offset, lso, version)

    def __str__(self) -> str:
        return (f"AbortedTxn(version={self.version}, producerId={self.producer_id}, firstOffset={self.first_offset}, "
                f"lastOffset={self.last_offset}, lastStableOffset={self.last_stable_offset})")


@dataclass(frozen=True, slots=True)
class TxnIndexSearchResult:
    aborted_transactions: List[AbortedTxn]
    # True when a later segment cannot hold an aborted transaction overlapping the range
    is_complete: bool


class _LastOffsets:
    """The last offsets of the raw entries, as a sequence ``bisect`` can search."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def __len__(self) -> int:
        return len(self._data) // ABORTED_TXN_TOTAL_SIZE

    def __getitem__(self, i: int) -> int:
        return _LONG.unpack_from(self._data, i * ABORTED_TXN_TOTAL_SIZE + _LAST_OFFSET_AT)[0]


class TransactionIndex:
    """The aborted transactions whose ABORT markers lie in one segment."""

    def __init__(self, start_offset: int, file: str) -> None:
        self.start_offset = start_offset
        self._file = os.fspath(file)
        self._entries: Optional[bytes] = None
        self._lock = threading.Lock()
        self._dirty = False

    # -- file --------------------------------------------------------------------------

    @property
    def file(self) -> str:
        return self._file

    def _load(self) -> bytes:
        entries = self._entries
        if entries is None:
            with self._lock:
                if self._entries is None:
                    try:
                        with open(self._file, "rb") as f:
                            data = f.read()
                    except FileNotFoundError:
                        data = b""
                    except OSError as e:
                        raise KafkaException(f"Failed to read from the transaction index {self._file}") from e
                    # a torn last entry (a crash mid-append) is not an entry
                    whole = len(data) - len(data) % ABORTED_TXN_TOTAL_SIZE
                    self._entries = bytes(data[:whole])
                entries = self._entries
        return entries

    def append(self, aborted_txn: AbortedTxn) -> None:
        entries = self._load()
        count = len(entries) // ABORTED_TXN_TOTAL_SIZE
        if count:
            last = _LONG.unpack_from(entries, (count - 1) * ABORTED_TXN_TOTAL_SIZE + _LAST_OFFSET_AT)[0]
            if last >= aborted_txn.last_offset:
                raise ValueError(f"The last offset of appended transactions must increase sequentially, but "
                                 f"{aborted_txn.last_offset} is not greater than current last offset {last} of index "
                                 f"{os.path.abspath(self._file)}")
        data = aborted_txn.to_bytes()
        fd = os.open(self._file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            if os.fstat(fd).st_size != len(entries):
                # a torn entry left by a crash: cut it off before appending after it
                os.ftruncate(fd, len(entries))
            write_fully(fd, data)
        finally:
            os.close(fd)
        self._entries = entries + data
        self._dirty = True

    def flush(self) -> None:
        if not self._dirty:
            return
        try:
            fd = os.open(self._file, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self._dirty = False

    def update_parent_dir(self, parent_dir: str) -> None:
        self._file = os.path.join(parent_dir, os.path.basename(self._file))

    def delete_if_exists(self) -> bool:
        self.close()
        try:
            os.remove(self._file)
            return True
        except FileNotFoundError:
            return False

    def reset(self) -> None:
        """Remove every entry (recovery rebuilds the index from the log)."""
        self._entries = b""
        self._dirty = False
        if os.path.exists(self._file):
            os.truncate(self._file, 0)

    def close(self) -> None:
        # nothing is held open; what was appended is synced by flush() (Log.flush, segment close)
        pass

    def rename_to(self, file: str) -> None:
        try:
            if os.path.exists(self._file):
                os.replace(self._file, file)
        finally:
            self._file = os.fspath(file)

    def truncate_to(self, offset: int) -> None:
        """Drop the entries of transactions aborted at or after ``offset``."""
        entries = self._load()
        i = bisect.bisect_left(_LastOffsets(entries), offset)
        keep = i * ABORTED_TXN_TOTAL_SIZE
        if keep < len(entries):
            os.truncate(self._file, keep)
            self._entries = entries[:keep]

    # -- reads -------------------------------------------------------------------------

    def _iterate(self, start: int = 0) -> Iterator[AbortedTxn]:
        entries = self._load()
        size = len(entries) - len(entries) % ABORTED_TXN_TOTAL_SIZE
        for position in range(start * ABORTED_TXN_TOTAL_SIZE, size, ABORTED_TXN_TOTAL_SIZE):
            txn = AbortedTxn.from_bytes(entries, position)
            if txn.version > ABORTED_TXN_CURRENT_VERSION:
                raise KafkaException(f"Unexpected aborted transaction version {txn.version} in transaction index "
                                     f"{os.path.abspath(self._file)}, current version is "
                                     f"{ABORTED_TXN_CURRENT_VERSION}")
            yield txn

    @property
    def all_aborted_txns(self) -> List[AbortedTxn]:
        return list(self._iterate())

    @property
    def is_empty(self) -> bool:
        return not self._load()

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        """The aborted transactions overlapping [fetch_offset, upper_bound_offset), and whether the
        search is complete (an entry's last stable offset reached the upper bound) or must go on
        in the next segment."""
        entries = self._load()
        if not entries:
            return TxnIndexSearchResult([], False)
        # Entries are ordered by last offset; those ending before the fetch offset neither overlap
        # the range nor, their last stable offset being at most last offset + 1, end the search.
        start = bisect.bisect_left(_LastOffsets(entries), fetch_offset)
        aborted: List[AbortedTxn] = []
        for txn in self._iterate(start):
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound_offset:
                aborted.append(txn)
            if txn.last_stable_offset >= upper_bound_offset:
                return TxnIndexSearchResult(aborted, True)
        return TxnIndexSearchResult(aborted, False)

    def sanity_check(self) -> None:
        """CorruptIndexException if an entry ends below the segment's base offset."""
        for txn in self._iterate():
            if txn.last_offset < self.start_offset:
                raise CorruptIndexException(f"Last offset of aborted transaction {txn} in index "
                                            f"{os.path.abspath(self._file)} is less than start offset "
                                            f"{self.start_offset}")

    def __repr__(self) -> str:
        return f"TransactionIndex(file={self._file}, startOffset={self.start_offset})"
