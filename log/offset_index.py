"""Port of core/src/main/scala/kafka/log/OffsetIndex.scala.

A sparse map from offsets to byte positions in one log segment. Each 8-byte entry is a 4-byte
big-endian offset relative to the segment's base offset and a 4-byte big-endian position in
the segment's .log file; entries are appended in strictly increasing offset order (and, since
the log only grows, increasing position), so both columns can be binary searched.

The file carries no checksum: after an unclean shutdown it is rebuilt from the log.
"""
from __future__ import annotations

import logging
import os
import struct

from kafka_py.clients.common.errors import InvalidOffsetException
from kafka_py.log.abstract_index import (
    AbstractIndex,
    CorruptIndexException,
    IndexOffsetOverflowException,
    OffsetPosition,
)

__all__ = ["OffsetIndex", "OffsetPosition", "CorruptIndexException", "IndexOffsetOverflowException"]

logger = logging.getLogger(__name__)

_ENTRY = struct.Struct(">ii")
_INT = struct.Struct(">i")
_unpack_entry = _ENTRY.unpack_from
_unpack_int = _INT.unpack_from
_pack_entry = _ENTRY.pack_into


class OffsetIndex(AbstractIndex):
    entry_size = 8

    def __init__(self, file: str | os.PathLike, base_offset: int, max_index_size: int = -1,
                 writable: bool = True) -> None:
        super().__init__(file, base_offset, max_index_size, writable)
        self._last_offset = self._last_entry().offset
        logger.debug("Loaded index file %s with maxEntries = %d, maxIndexSize = %d, entries = %d, "
                     "lastOffset = %d, file position = %d", self.file, self.max_entries, max_index_size,
                     self._entries, self._last_offset, self._entries * self.entry_size)

    # The compared field of slot n, for the searches in AbstractIndex.
    def _offset_at(self, mm, n: int) -> int:
        return self.base_offset + _unpack_int(mm, n * 8)[0]

    @staticmethod
    def _position_at(mm, n: int) -> int:
        return _unpack_int(mm, n * 8 + 4)[0]

    def _parse_entry(self, mm, n: int) -> OffsetPosition:
        relative, position = _unpack_entry(mm, n * 8)
        return OffsetPosition(self.base_offset + relative, position)

    def _last_entry(self) -> OffsetPosition:
        with self._lock:
            if self._entries == 0:
                return OffsetPosition(self.base_offset, 0)
            return self._parse_entry(self._mmap, self._entries - 1)

    @property
    def last_offset(self) -> int:
        return self._last_offset

    @property
    def last_entry(self) -> OffsetPosition:
        return self._last_entry()

    def lookup(self, target_offset: int) -> OffsetPosition:
        """The entry with the largest offset <= ``target_offset``, or (base_offset, 0) when the
        index is empty or every entry is larger."""
        with self._lock:
            slot = self._largest_lower_bound_slot_for(target_offset, self._offset_at)
            if slot == -1:
                return OffsetPosition(self.base_offset, 0)
            return self._parse_entry(self._mmap, slot)

    def fetch_upper_bound_offset(self, fetch_offset_position: OffsetPosition,
                                 fetch_size: int) -> OffsetPosition | None:
        """An entry whose position is at or past the end of a fetch of ``fetch_size`` bytes from
        ``fetch_offset_position``: an offset certainly outside the fetched range (not the first)."""
        with self._lock:
            slot = self._smallest_upper_bound_slot_for(fetch_offset_position.position + fetch_size,
                                                       self._position_at)
            if slot == -1:
                return None
            return self._parse_entry(self._mmap, slot)

    def entry(self, n: int) -> OffsetPosition:
        """The n-th entry, with its absolute offset."""
        with self._lock:
            if n >= self._entries or n < 0:
                raise ValueError(f"Attempt to fetch the {n}th entry from index {self.file}, "
                                 f"which has size {self._entries}.")
            return self._parse_entry(self._mmap, n)

    def append(self, offset: int, position: int) -> None:
        """Add an entry; ``offset`` must exceed every offset already in the index."""
        with self._lock:
            if self.is_full():
                raise ValueError(f"Attempt to append to a full index (size = {self._entries}).")
            if self._entries == 0 or offset > self._last_offset:
                relative = self.relative_offset(offset)
                if (self._entries + 1) * 8 > self._backed_to:
                    self._ensure_backed((self._entries + 1) * 8)
                _pack_entry(self._mmap, self._entries * 8, relative, position)
                self._entries += 1
                self._last_offset = offset
            else:
                raise InvalidOffsetException(
                    f"Attempt to append an offset ({offset}) to position {self._entries} no larger than "
                    f"the last offset appended ({self._last_offset}) to {self.file}.")

    def _truncate_to_entries(self, entries: int) -> None:
        with self._lock:
            self._entries = entries
            self._last_offset = self._last_entry().offset
            logger.debug("Truncated index %s to %d entries; position is now %d and last offset is now %d",
                         self.file, entries, entries * self.entry_size, self._last_offset)

    def sanity_check(self) -> None:
        if self._entries != 0 and self._last_offset < self.base_offset:
            raise CorruptIndexException(
                f"Corrupt index found, index file ({self.file}) has non-zero size but the last offset "
                f"is {self._last_offset} which is less than the base offset {self.base_offset}.")
        if self.length % self.entry_size != 0:
            raise CorruptIndexException(
                f"Index file {self.file} is corrupt, found {self.length} bytes which is neither positive "
                f"nor a multiple of {self.entry_size}.")
