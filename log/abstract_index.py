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

File descriptors: as in Kafka's AbstractIndex, the file is open only while it is created,
mapped, resized or remapped; the mapping holds no descriptor, so a segment costs one descriptor
(its ``.log``) however many indexes it has loaded. Python's ``mmap.mmap`` keeps a duplicate of
the descriptor for the mapping's life (for its own ``resize`` and ``size``; 3.13's
``trackfd=False`` drops it), which on a broker with tens of thousands of segments exhausts the
descriptor limit. ``FileMapping`` therefore maps with the C library's ``mmap`` and exposes the
pages as a ``memoryview``. A shared mapping stays valid after its descriptor is closed, ``msync``
(``flush``) needs only the address, and a resize reopens the file, unmaps, truncates and maps
again. Linux only, as the rest of the broker (epoll, sendfile, /proc).

An empty file cannot be mapped (``mmap`` of length 0 fails), so a zero-length index keeps no
mapping at all and behaves as an index with zero capacity until it is resized.

A full disk: the preallocated file is sparse, as Kafka's, and the first store into a page
the file system cannot give a block to is a SIGBUS, which the JVM turns into an exception
but which kills a CPython process with no word in its log. So before an append writes into a
page no entry has used yet, ``_ensure_backed`` asks the file system for that page
(``posix_fallocate``, one page at a time: once per 512 offset-index entries): a full disk is
then an OSError from the append, and the broker takes the log dir offline as it does for a
failed segment write.
"""
from __future__ import annotations

import ctypes
import enum
import logging
import mmap
import os
import threading
from dataclasses import dataclass
from typing import Callable

from kafka_py.clients.common.errors import KafkaException
from kafka_py.core.utils.crash_points import crash_point
from kafka_py.core.utils.java_limits import INT_MAX

logger = logging.getLogger(__name__)


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


# The C library's mapping calls, for FileMapping. off_t is a C long on Linux (64 bits on 64-bit
# systems); the offset passed is always 0.
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
_libc.munmap.restype = ctypes.c_int
_libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
_libc.msync.restype = ctypes.c_int
_libc.msync.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_libc.madvise.restype = ctypes.c_int
_libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_MADV_RANDOM = getattr(mmap, "MADV_RANDOM", 1)
_MAP_FAILED = ctypes.c_void_p(-1).value
_PAGE_SIZE = mmap.PAGESIZE
_MS_SYNC = 4  # <sys/mman.h> on Linux; Python's mmap.flush() uses the same flag

# A memoryview straight over the mapped pages (CPython's stable API); it owns nothing, so
# FileMapping releases it before unmapping and a late access raises instead of faulting.
_memoryview_from_memory = ctypes.pythonapi.PyMemoryView_FromMemory
_memoryview_from_memory.restype = ctypes.py_object
_memoryview_from_memory.argtypes = (ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int)
_PYBUF_READ = 0x100
_PYBUF_WRITE = 0x200


def _raise_errno(call: str, path: str) -> None:
    code = ctypes.get_errno()
    raise OSError(code, f"{call} of {path} failed: {os.strerror(code)}")


class FileMapping:
    """A shared mapping of the first ``length`` bytes of a file that keeps no descriptor open.

    ``view`` is a byte ``memoryview`` of the mapped pages (read-only unless ``writable``); the
    caller may close the descriptor it mapped from as soon as the constructor returns. Not
    thread safe: the owning index serialises every use under its lock.
    """

    __slots__ = ("_address", "_length", "_path", "view")

    def __init__(self, fd: int, length: int, writable: bool, path: str = "") -> None:
        prot = mmap.PROT_READ | (mmap.PROT_WRITE if writable else 0)
        address = _libc.mmap(None, length, prot, mmap.MAP_SHARED, fd, 0)
        if address is None or address == _MAP_FAILED:
            _raise_errno("mmap", path)
        # An index is read by binary search, a page here and there: no read-ahead around a
        # faulting page. It matters most for the preallocated, sparse index a crash leaves
        # behind: every page read there is a hole the kernel zero-fills, and read-ahead made
        # reading its last entry cost a millisecond (tens of seconds over 10,000 logs).
        _libc.madvise(address, length, _MADV_RANDOM)
        self._address = address
        self._length = length
        self._path = path
        self.view: memoryview | None = _memoryview_from_memory(
            address, length, _PYBUF_WRITE if writable else _PYBUF_READ)

    @property
    def length(self) -> int:
        return self._length

    def flush(self) -> None:
        """Write dirty pages back to the file (msync needs the address only, not a descriptor)."""
        if self.view is not None and _libc.msync(self._address, self._length, _MS_SYNC) != 0:
            _raise_errno("msync", self._path)

    def close(self) -> None:
        view = self.view
        if view is None:
            return
        # release() refuses (BufferError) while a buffer taken from the view is still held;
        # the pages then stay mapped: leaking them is safe, unmapping under a reader is not.
        view.release()
        self.view = None
        if _libc.munmap(self._address, self._length) != 0:
            _raise_errno("munmap", self._path)

    def __del__(self) -> None:
        # An index dropped without close() (a failed load, a test) must not leak its mapping.
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing can be raised from a finaliser
            pass


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
            # A new file is sized and mapped through the descriptor that created it.
            fd = os.open(self._file, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            newly_created = True
        except FileExistsError:
            fd = None
        if fd is not None and max_index_size < self.entry_size:  # (a new file)
            os.close(fd)
            os.unlink(self._file)
            raise ValueError(f"Invalid max index size: {max_index_size}")

        # The file is open only while it is sized and mapped (Kafka's AbstractIndex closes its
        # RandomAccessFile in a finally block right after mapping); the mapping outlives it.
        self._mapping: FileMapping | None = None
        # The mapped entries. None (typed as a view, so the hot paths that read and write
        # entries need no check) only while the index is empty and unmapped or closed, when no
        # entry is read or written.
        self._mmap: memoryview = None  # type: ignore[assignment]
        # the bytes up to which the file's pages are allocated (_ensure_backed)
        self._backed_to = 0
        if fd is None:
            fd = os.open(self._file, os.O_RDWR if writable else os.O_RDONLY)
        with os.fdopen(fd, "r+b" if (writable or newly_created) else "rb", buffering=0) as f:
            if newly_created:
                f.truncate(_round_down_to_exact_multiple(max_index_size, self.entry_size))
            self._length = os.fstat(f.fileno()).st_size
            self._map(f, self._length, writable)
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
            # Growing or shrinking the file needs a descriptor: reopen, unmap, resize, map again
            # and close, so the index holds no descriptor between calls.
            with open(self._file, "r+b") as f:
                self._close_mapping()
                f.truncate(rounded)
                crash_point("index.resize.after_file_truncate")
                self._length = rounded
                self._map(f, rounded, True)
            self._max_entries = rounded // self.entry_size
            logger.debug("Resized %s to %d, position is %d and limit is %d", self._file, rounded,
                         self._entries * self.entry_size, rounded)
            return True

    def rename_to(self, path: str | os.PathLike) -> None:
        # A rename acts on the path; the mapping follows the inode and needs no descriptor.
        try:
            os.replace(self._file, path)
        finally:
            self._file = os.fspath(path)

    def flush(self) -> None:
        with self._lock:
            if self._mapping is not None:
                self._mapping.flush()

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

    def _offset_at(self, mm, n: int) -> int:
        """The absolute offset of slot ``n`` (a key in OffsetIndex, a value in TimeIndex)."""
        raise NotImplementedError

    def _truncate_to_entries(self, entries: int) -> None:
        """Keep the first ``entries`` entries and reload the cached last entry."""
        raise NotImplementedError

    # -- truncation ------------------------------------------------------------------------

    def truncate(self) -> None:
        """Remove all entries."""
        self._truncate_to_entries(0)

    def truncate_to(self, offset: int) -> None:
        """Remove every entry whose offset is >= ``offset``; a larger offset changes nothing."""
        with self._lock:
            slot = self._largest_lower_bound_slot_for(offset, self._offset_at)
            # No entry <= offset: drop everything. An entry exactly at offset goes too, since
            # truncation removes offsets >= offset. Otherwise keep up to that entry.
            if slot < 0:
                new_entries = 0
            elif self._offset_at(self._mmap, slot) == offset:
                new_entries = slot
            else:
                new_entries = slot + 1
            self._truncate_to_entries(new_entries)

    # -- offsets ---------------------------------------------------------------------------

    def relative_offset(self, offset: int) -> int:
        relative = offset - self.base_offset
        if relative < 0 or relative > INT_MAX:
            raise IndexOffsetOverflowException(f"Integer overflow for offset: {offset} ({self._file})")
        return relative

    def can_append_offset(self, offset: int) -> bool:
        return 0 <= offset - self.base_offset <= INT_MAX

    # -- search ----------------------------------------------------------------------------

    def _largest_lower_bound_slot_for(self, target: int, key_at: Callable[[memoryview, int], int]) -> int:
        """Slot of the largest entry <= target, or -1 (empty index or every entry larger)."""
        return self._index_slot_range_for(target, key_at)[0]

    def _smallest_upper_bound_slot_for(self, target: int, key_at: Callable[[memoryview, int], int]) -> int:
        """Slot of the smallest entry >= target, or -1 when there is none."""
        return self._index_slot_range_for(target, key_at)[1]

    def _index_slot_range_for(self, target: int, key_at: Callable[[memoryview, int], int]) -> tuple[int, int]:
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

    def _ensure_backed(self, end: int) -> None:
        """Have the file system allocate the index's pages up to byte ``end`` before an entry
        is stored there (see the module docstring); OSError when it cannot. Callers hold the
        lock and call only when ``end`` is past ``_backed_to``, which stays true while entries
        are truncated (the file keeps its blocks) and starts again at 0 when the file is
        mapped anew."""
        # pages holding entries have their blocks already
        backed = max(self._backed_to, -(-self._entries * self.entry_size // _PAGE_SIZE) * _PAGE_SIZE)
        if end <= backed:
            return
        stop = min(self._length, -(-end // _PAGE_SIZE) * _PAGE_SIZE)
        fd = os.open(self._file, os.O_RDWR)
        try:
            os.posix_fallocate(fd, backed, stop - backed)
        finally:
            os.close(fd)
        self._backed_to = stop

    def _map(self, f, length: int, writable: bool) -> None:
        # Caller holds the lock (or is the constructor) and closes ``f`` afterwards.
        self._backed_to = 0  # a new or resized file: its holes are known again from the entries
        if length == 0:
            return
        mapping = self._mapping = FileMapping(f.fileno(), length, writable, self._file)
        view = mapping.view
        assert view is not None  # (None only once the mapping is closed)
        self._mmap = view

    def _close_mapping(self) -> None:
        mapping = self._mapping
        self._mapping = None
        self._mmap = None  # type: ignore[assignment]  # (closed: see __init__)
        if mapping is not None:
            try:
                mapping.close()
            except Exception:  # noqa: BLE001 - a failed unmap must not fail a close
                logger.error("Error unmapping index %s", self._file, exc_info=True)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(file={self._file!r}, base_offset={self.base_offset}, "
                f"entries={self._entries}, max_entries={self._max_entries})")
