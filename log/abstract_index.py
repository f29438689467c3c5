"""Port of core/src/main/scala/kafka/log/AbstractIndex.scala, with IndexEntry.scala,
IndexSearchType, CorruptIndexException.scala and kafka.common.IndexOffsetOverflowException.

An index is a file of fixed-size entries, memory-mapped and searched by binary search. A new
(writable) index file is preallocated to ``max_index_size`` rounded down to a whole number of
entries, so appends never grow the file; ``trim_to_valid_size`` (on roll and close) cuts it
back to the entries actually written, and ``resize`` grows it again when an old segment becomes
active. A file that already exists is taken as valid: its entry count is its length divided by
the entry size, exactly as Kafka does (``sanity_check`` is how callers find out otherwise).

Thread safety: mutations, remaps and lookups all hold one re-entrant lock. Kafka lets lookups
run without it because the JVM turns a read past a shrunken mapping into an exception; in
CPython the same read is a SIGBUS that kills the process, so lookups pay for the lock.

Python's ``mmap`` cannot map an empty file, so a zero-length index keeps no mapping at all and
behaves as an index with zero capacity until it is resized.
"""
from __future__ import annotations

import enum
import logging
import mmap
import os
import threading
from dataclasses import dataclass
from typing import Callable

from kafka_py.common.errors import KafkaException

logger = logging.getLogger(__name__)

_INT32_MAX = 2**31 - 1


class CorruptIndexException(KafkaException):
    """An index file fails its sanity check; the caller deletes and rebuilds it."""


class IndexOffsetOverflowException(KafkaException):
    """An offset does not fit the 4-byte relative offset of the index it is appended to."""


class IndexSearchType(enum.Enum):
    """Whether a search compares an entry's key (offset, timestamp) or its value."""

    KEY = 0
    VALUE = 1


@dataclass(frozen=True, slots=True)
class OffsetPosition:
    """An offset index entry: a message offset and the byte position of its batch in the log."""

    offset: int
    position: int

    @property
    def index_key(self) -> int:
        return self.offset

    @property
    def index_value(self) -> int:
        return self.position


@dataclass(frozen=True, slots=True)
class TimestampOffset:
    """A time index entry: every message after ``offset`` has a timestamp above ``timestamp``."""

    timestamp: int
    offset: int

    @property
    def index_key(self) -> int:
        return self.timestamp

    @property
    def index_value(self) -> int:
        return self.offset


def _round_down_to_exact_multiple(number: int, factor: int) -> int:
    # Truncating division, as on the JVM: -1 rounds to 0, not to -factor.
    quotient = abs(number) // factor
    return factor * (quotient if number >= 0 else -quotient)


class AbstractIndex:
    """Entry-format agnostic part of OffsetIndex and TimeIndex."""

    #: Bytes per entry, set by each subclass.
    entry_size: int = 0

    def __init__(self, file: str | os.PathLike, base_offset: int, max_index_size: int = -1,
                 writable: bool = True) -> None:
        self._file = os.fspath(file)
        self.base_offset = base_offset
        self.max_index_size = max_index_size
        self.writable = writable
        self._lock = threading.RLock()
        # The last N entries are searched first: nearly every lookup (tailing consumers,
        # in-sync followers) lands there, and those pages stay in the page cache.
        self._warm_entries = 8192 // self.entry_size

        newly_created = False
        try:
            fd = os.open(self._file, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            newly_created = True
            os.close(fd)
        except FileExistsError:
            pass
        if newly_created and max_index_size < self.entry_size:
            os.unlink(self._file)
            raise ValueError(f"Invalid max index size: {max_index_size}")

        with open(self._file, "r+b" if (writable or newly_created) else "rb") as f:
            if newly_created:
                f.truncate(_round_down_to_exact_multiple(max_index_size, self.entry_size))
            self._length = os.fstat(f.fileno()).st_size
            self._mmap = self._map(f, self._length, writable)
        self._max_entries = self._length // self.entry_size
        self._entries = 0 if newly_created else self._length // self.entry_size

    # -- properties ------------------------------------------------------------------------

    @property
    def file(self) -> str:
        return self._file

    @property
    def entries(self) -> int:
        return self._entries

    @property
    def max_entries(self) -> int:
        return self._max_entries

    @property
    def length(self) -> int:
        """Current length of the index file (preallocated space included)."""
        return self._length

    @property
    def size_in_bytes(self) -> int:
        """Bytes actually used by entries."""
        return self.entry_size * self._entries

    def is_full(self) -> bool:
        return self._entries >= self._max_entries

    def update_parent_dir(self, parent_dir: str | os.PathLike) -> None:
        self._file = os.path.join(os.fspath(parent_dir), os.path.basename(self._file))

    # -- file lifecycle --------------------------------------------------------------------

    def resize(self, new_size: int) -> bool:
        """Set the file and mapping to ``new_size`` rounded down to whole entries, keeping the
        entries written so far. Returns False when the size is already that."""
        with self._lock:
            rounded = _round_down_to_exact_multiple(new_size, self.entry_size)
            if self._length == rounded:
                logger.debug("Index %s was not resized because it already has size %d", self._file, rounded)
                return False
            if rounded < self._entries * self.entry_size:
                raise ValueError(f"Cannot resize index {self._file} to {rounded} bytes: it holds "
                                 f"{self._entries} entries of {self.entry_size} bytes")
            with open(self._file, "r+b") as f:
                self._close_mapping()
                f.truncate(rounded)
                self._length = rounded
                self._mmap = self._map(f, rounded, True)
            self._max_entries = rounded // self.entry_size
            logger.debug("Resized %s to %d, position is %d and limit is %d", self._file, rounded,
                         self._entries * self.entry_size, rounded)
            return True

    def rename_to(self, path: str | os.PathLike) -> None:
        try:
            os.replace(self._file, path)
        finally:
            self._file = os.fspath(path)

    def flush(self) -> None:
        with self._lock:
            if self._mmap is not None:
                self._mmap.flush()

    def delete_if_exists(self) -> bool:
        """Unmap and delete the file; False if there was no file."""
        self.close_handler()
        try:
            os.unlink(self._file)
            return True
        except FileNotFoundError:
            return False

    def trim_to_valid_size(self) -> None:
        """Cut the preallocated tail so the file holds exactly the written entries."""
        with self._lock:
            self.resize(self.entry_size * self._entries)

    def close(self) -> None:
        self.trim_to_valid_size()
        self.close_handler()

    def close_handler(self) -> None:
        """Release the mapping now rather than whenever the garbage collector gets to it."""
        with self._lock:
            self._close_mapping()

    def reset(self) -> None:
        """Remove all entries and grow the file back to ``max_index_size``."""
        self.truncate()
        self.resize(self.max_index_size)

    # -- to be provided by subclasses ------------------------------------------------------

    def sanity_check(self) -> None:
        raise NotImplementedError

    def truncate(self) -> None:
        """Remove all entries."""
        raise NotImplementedError

    def truncate_to(self, offset: int) -> None:
        """Remove every entry whose offset is >= ``offset``; a larger offset changes nothing."""
        raise NotImplementedError

    # -- offsets ---------------------------------------------------------------------------

    def relative_offset(self, offset: int) -> int:
        relative = offset - self.base_offset
        if relative < 0 or relative > _INT32_MAX:
            raise IndexOffsetOverflowException(f"Integer overflow for offset: {offset} ({self._file})")
        return relative

    def can_append_offset(self, offset: int) -> bool:
        return 0 <= offset - self.base_offset <= _INT32_MAX

    # -- search ----------------------------------------------------------------------------

    def _largest_lower_bound_slot_for(self, target: int, key_at: Callable[[mmap.mmap, int], int]) -> int:
        """Slot of the largest entry <= target, or -1 (empty index or every entry larger)."""
        return self._index_slot_range_for(target, key_at)[0]

    def _smallest_upper_bound_slot_for(self, target: int, key_at: Callable[[mmap.mmap, int], int]) -> int:
        """Slot of the smallest entry >= target, or -1 when there is none."""
        return self._index_slot_range_for(target, key_at)[1]

    def _index_slot_range_for(self, target: int, key_at: Callable[[mmap.mmap, int], int]) -> tuple[int, int]:
        # Caller holds the lock; key_at reads the compared field (key or value) of slot n.
        entries = self._entries
        if entries == 0:
            return -1, -1
        mm = self._mmap
        last = entries - 1

        def binary_search(lo: int, hi: int) -> tuple[int, int]:
            while lo < hi:
                mid = (lo + hi + 1) >> 1
                found = key_at(mm, mid)
                if found > target:
                    hi = mid - 1
                elif found < target:
                    lo = mid
                else:
                    return mid, mid
            return lo, (-1 if lo == last else lo + 1)

        first_hot_entry = max(0, last - self._warm_entries)
        if key_at(mm, first_hot_entry) < target:
            return binary_search(first_hot_entry, last)
        if key_at(mm, 0) > target:
            return -1, 0
        return binary_search(0, first_hot_entry)

    # -- helpers ---------------------------------------------------------------------------

    @staticmethod
    def _map(f, length: int, writable: bool) -> mmap.mmap | None:
        if length == 0:
            return None
        access = mmap.ACCESS_WRITE if writable else mmap.ACCESS_READ
        return mmap.mmap(f.fileno(), length, access=access)

    def _close_mapping(self) -> None:
        mm = self._mmap
        self._mmap = None
        if mm is not None:
            try:
                mm.close()
            except Exception:  # noqa: BLE001 - a failed unmap must not fail a close
                logger.error("Error unmapping index %s", self._file, exc_info=True)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(file={self._file!r}, base_offset={self.base_offset}, "
                f"entries={self._entries}, max_entries={self._max_entries})")
