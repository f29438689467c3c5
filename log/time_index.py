"""Port of core/src/main/scala/kafka/log/TimeIndex.scala.

A sparse map from timestamps to offsets in one log segment. Each 12-byte entry is an 8-byte
big-endian timestamp and a 4-byte big-endian offset relative to the segment's base offset. An
entry (T, O) promises that every message with a timestamp above T sits after offset O, so both
columns only ever increase and either can be binary searched.

The last slot of the file is held back from ordinary appends: when a segment is rolled or
closed, one final entry for its largest timestamp must always fit (``skip_full_check``).
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
    TimestampOffset,
)
from kafka_py.clients.common.record.default_record_batch import NO_TIMESTAMP

__all__ = ["TimeIndex", "TimestampOffset", "CorruptIndexException", "IndexOffsetOverflowException"]

logger = logging.getLogger(__name__)


_ENTRY = struct.Struct(">qi")
_LONG = struct.Struct(">q")
_INT = struct.Struct(">i")
_unpack_entry = _ENTRY.unpack_from
_unpack_long = _LONG.unpack_from
_unpack_int = _INT.unpack_from
_pack_entry = _ENTRY.pack_into


class TimeIndex(AbstractIndex):
    entry_size = 12

    def __init__(self, file: str | os.PathLike, base_offset: int, max_index_size: int = -1,
                 writable: bool = True) -> None:
        super().__init__(file, base_offset, max_index_size, writable)
        self._last_entry = self._last_entry_from_index_file()
        logger.debug("Loaded index file %s with maxEntries = %d, maxIndexSize = %d, entries = %d, "
                     "lastOffset = %s, file position = %d", self.file, self.max_entries, max_index_size,
                     self._entries, self._last_entry, self._entries * self.entry_size)

    def is_full(self) -> bool:
        # One slot stays free for the entry written when the segment is rolled or closed.
        return self._entries >= self._max_entries - 1

    @staticmethod
    def _timestamp_at(mm, n: int) -> int:
        return _unpack_long(mm, n * 12)[0]

    def _offset_at(self, mm, n: int) -> int:
        return self.base_offset + _unpack_int(mm, n * 12 + 8)[0]

    def _parse_entry(self, mm, n: int) -> TimestampOffset:
        timestamp, relative = _unpack_entry(mm, n * 12)
        return TimestampOffset(timestamp, self.base_offset + relative)

    @property
    def last_entry(self) -> TimestampOffset:
        return self._last_entry

    def _last_entry_from_index_file(self) -> TimestampOffset:
        with self._lock:
            if self._entries == 0:
                return TimestampOffset(NO_TIMESTAMP, self.base_offset)
            return self._parse_entry(self._mmap, self._entries - 1)

    def entry(self, n: int) -> TimestampOffset:
        with self._lock:
            if n >= self._entries or n < 0:
                raise ValueError(f"Attempt to fetch the {n}th entry from time index {self.file} "
                                 f"which has size {self._entries}.")
            return self._parse_entry(self._mmap, n)

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        """Append (timestamp, offset) if ``timestamp`` is larger than the last one indexed.

        A repeat of the last entry is ignored (closing or rolling a segment re-offers it), and
        so is any entry whose timestamp is not larger; an offset or timestamp going backwards is
        a bug in the caller and raises.
        """
        with self._lock:
            if not skip_full_check and self.is_full():
                raise ValueError(f"Attempt to append to a full time index (size = {self._entries}).")
            last = self._last_entry
            if self._entries != 0 and offset < last.offset:
                raise InvalidOffsetException(
                    f"Attempt to append an offset ({offset}) to slot {self._entries} no larger than the "
                    f"last offset appended ({last.offset}) to {self.file}.")
            if self._entries != 0 and timestamp < last.timestamp:
                raise RuntimeError(
                    f"Attempt to append a timestamp ({timestamp}) to slot {self._entries} no larger than "
                    f"the last timestamp appended ({last.timestamp}) to {self.file}.")
            # Batches without timestamps (NO_TIMESTAMP) never get here as "larger", so a log of
            # such batches has an empty time index.
            if timestamp > last.timestamp:
                relative = self.relative_offset(offset)
                if (self._entries + 1) * 12 > self._backed_to:
                    self._ensure_backed((self._entries + 1) * 12)
                _pack_entry(self._mmap, self._entries * 12, timestamp, relative)
                self._entries += 1
                self._last_entry = TimestampOffset(timestamp, offset)

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """The entry with the largest timestamp <= ``target_timestamp``, or
        (NO_TIMESTAMP, base_offset) when there is none."""
        with self._lock:
            slot = self._largest_lower_bound_slot_for(target_timestamp, self._timestamp_at)
            if slot == -1:
                return TimestampOffset(NO_TIMESTAMP, self.base_offset)
            return self._parse_entry(self._mmap, slot)

    def resize(self, new_size: int) -> bool:
        with self._lock:
            if super().resize(new_size):
                self._last_entry = self._last_entry_from_index_file()
                return True
            return False

    def _truncate_to_entries(self, entries: int) -> None:
        with self._lock:
            self._entries = entries
            self._last_entry = self._last_entry_from_index_file()
            logger.debug("Truncated index %s to %d entries; position is now %d and last entry is now %s",
                         self.file, entries, entries * self.entry_size, self._last_entry)

    def sanity_check(self) -> None:
        last = self._last_entry
        if self._entries != 0:
            with self._lock:
                first_timestamp = self._timestamp_at(self._mmap, 0)
            if last.timestamp < first_timestamp:
                raise CorruptIndexException(
                    f"Corrupt time index found, time index file ({self.file}) has non-zero size but the "
                    f"last timestamp is {last.timestamp} which is less than the first timestamp "
                    f"{first_timestamp}")
            if last.offset < self.base_offset:
                raise CorruptIndexException(
                    f"Corrupt time index found, time index file ({self.file}) has non-zero size but the "
                    f"last offset is {last.offset} which is less than the first offset {self.base_offset}")
        if self.length % self.entry_size != 0:
            raise CorruptIndexException(
                f"Time index file {self.file} is corrupt, found {self.length} bytes which is neither "
                f"positive nor a multiple of {self.entry_size}.")
