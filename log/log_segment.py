"""Port of core/src/main/scala/kafka/log/LogSegment.scala (and LazyIndex.scala).

A segment is one ``.log`` file of record batches (a FileRecords) plus its two
sparse indexes: ``.index`` (offset -> file position) and ``.timeindex``
(timestamp -> offset), and the ``.txnindex`` of the transactions aborted in it
(log/transaction_index.py; the file exists only once there is one). Every offset in the segment is >= its base offset and
< the base offset of the next segment, and fits the indexes' 4-byte relative
offsets.

Not thread safe: the owning Log calls the mutating methods under its lock.
``read`` may run concurrently with ``append`` because it only looks at bytes
below a position the Log has already published.
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Callable, Generic, Optional, TypeVar

from kafka_py.clients.common.errors import (
    CorruptRecordException,
    InvalidRecordException,
    LogSegmentOffsetOverflowException,
)
from kafka_py.log import log_files
from kafka_py.log.abstract_index import AbstractIndex
from kafka_py.log.log_append_info import RollParams
from kafka_py.log.log_offset_metadata import FetchDataInfo, LogOffsetMetadata
from kafka_py.log.offset_index import OffsetIndex
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.log.time_index import TimeIndex
from kafka_py.log.transaction_index import AbortedTxn, TransactionIndex, TxnIndexSearchResult
from kafka_py.clients.common.record.default_record_batch import NO_TIMESTAMP
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.core.utils.crash_points import crash_point
from kafka_py.core.utils.java_limits import INT_MAX, LONG_MAX, LONG_MIN

logger = logging.getLogger(__name__)


T = TypeVar("T", bound=AbstractIndex)


class LazyIndex(Generic[T]):
    """An index whose file is opened (and mmapped) only when first used.

    A broker with thousands of segments would otherwise map every index at
    startup. Until loaded, renames and deletes act on the path alone.
    """

    __slots__ = ("_file", "_loader", "_index", "_lock")

    def __init__(self, file: str, loader: Callable[[str], T]):
        self._file = file
        self._loader = loader
        self._index: Optional[T] = None
        self._lock = threading.Lock()

    @classmethod
    def for_offset(cls, file: str, base_offset: int, max_index_size: int = -1,
                   writable: bool = True) -> LazyIndex[OffsetIndex]:
        return LazyIndex(file, lambda f: OffsetIndex(f, base_offset, max_index_size, writable))

    @classmethod
    def for_time(cls, file: str, base_offset: int, max_index_size: int = -1,
                 writable: bool = True) -> LazyIndex[TimeIndex]:
        return LazyIndex(file, lambda f: TimeIndex(f, base_offset, max_index_size, writable))

    @property
    def file(self) -> str:
        return self._file

    @property
    def is_loaded(self) -> bool:
        return self._index is not None

    def get(self) -> T:
        index = self._index
        if index is None:
            with self._lock:
                if self._index is None:
                    self._index = self._loader(self._file)
                index = self._index
        return index

    def update_parent_dir(self, parent_dir: str) -> None:
        # the directory itself was renamed: only the remembered paths change
        with self._lock:
            if self._index is not None:
                self._index.update_parent_dir(parent_dir)
            self._file = os.path.join(parent_dir, os.path.basename(self._file))

    def rename_to(self, file: str) -> None:
        with self._lock:
            if self._index is not None:
                self._index.rename_to(file)
            elif os.path.exists(self._file):
                os.replace(self._file, file)
            self._file = file

    def delete_if_exists(self) -> bool:
        with self._lock:
            if self._index is not None:
                return bool(self._index.delete_if_exists())
            return log_files.delete_file_if_exists(self._file)

    def close(self) -> None:
        with self._lock:
            if self._index is not None:
                self._index.close()
            elif not os.path.exists(self._file):
                # Never used (a segment rolled and closed without appends): leave a valid empty
                # index behind, or the next start would take the missing file for damage.
                with open(self._file, "ab"):
                    pass

    def close_handler(self) -> None:
        with self._lock:
            if self._index is not None:
                self._index.close_handler()


class LogSegment:
    """One segment of a partition's log: records plus offset and time indexes."""

    def __init__(self, log, lazy_offset_index: LazyIndex, lazy_time_index: LazyIndex, base_offset: int,
                 index_interval_bytes: int, roll_jitter_ms: int, time,
                 txn_index: Optional[TransactionIndex] = None):
        self.log = log
        self.lazy_offset_index = lazy_offset_index
        self.lazy_time_index = lazy_time_index
        if txn_index is None:
            # beside the .log file, with the same suffix (.cleaned, .swap)
            head, _, suffix = log.file.rpartition(log_files.LOG_FILE_SUFFIX)
            txn_index = TransactionIndex(base_offset, head + log_files.TXN_INDEX_FILE_SUFFIX + suffix)
        self.txn_index = txn_index
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.roll_jitter_ms = roll_jitter_ms
        self.time = time
        self._created = time.milliseconds()
        # bytes appended since the last sparse index entry
        self._bytes_since_last_index_entry = 0
        # the timestamp that time-based rolling measures from; None until known
        self._rolling_based_timestamp: Optional[int] = None
        self._max_timestamp_so_far: Optional[int] = None
        self._offset_of_max_timestamp_so_far: Optional[int] = None

    # -- indexes ----------------------------------------------------------------------

    @property
    def offset_index(self):
        return self.lazy_offset_index.get()

    @property
    def time_index(self):
        return self.lazy_time_index.get()

    def resize_indexes(self, size: int) -> None:
        self.offset_index.resize(size)
        self.time_index.resize(size)

    def sanity_check(self, time_index_file_newly_created: bool) -> None:
        """Raise FileNotFoundError if the offset index is missing, CorruptIndexException if an index is damaged.

        Kafka 2.8 only checks that the offset index exists and leaves the content
        to recovery; we also run the indexes' own checks so that a damaged index of
        a segment below the recovery point is rebuilt rather than trusted. A
        missing time index of a non-empty segment counts as missing too, so that
        recovery rebuilds its entries (Kafka leaves such a time index empty); a
        segment of format v0, which has no timestamps, is recovered once for
        nothing, to the same empty index.
        """
        if not os.path.exists(self.lazy_offset_index.file):
            raise FileNotFoundError(f"Offset index file {os.path.abspath(self.lazy_offset_index.file)} does not exist")
        if time_index_file_newly_created:
            self.time_index.resize(0)
            if self.log.size_in_bytes() > 0:
                raise FileNotFoundError(
                    f"Time index file {os.path.abspath(self.lazy_time_index.file)} does not exist")
        self.offset_index.sanity_check()
        self.time_index.sanity_check()
        self.txn_index.sanity_check()

    # -- timestamps -------------------------------------------------------------------

    @property
    def max_timestamp_so_far(self) -> int:
        ts = self._max_timestamp_so_far
        if ts is None:
            ts = self._max_timestamp_so_far = self.time_index.last_entry.timestamp
        return ts

    @max_timestamp_so_far.setter
    def max_timestamp_so_far(self, value: int) -> None:
        self._max_timestamp_so_far = value

    @property
    def offset_of_max_timestamp_so_far(self) -> int:
        off = self._offset_of_max_timestamp_so_far
        if off is None:
            off = self._offset_of_max_timestamp_so_far = self.time_index.last_entry.offset
        return off

    @offset_of_max_timestamp_so_far.setter
    def offset_of_max_timestamp_so_far(self, value: int) -> None:
        self._offset_of_max_timestamp_so_far = value

    @property
    def size(self) -> int:
        return self.log.size_in_bytes()

    def can_convert_to_relative_offset(self, offset: int) -> bool:
        relative = offset - self.base_offset
        return 0 <= relative <= INT_MAX

    def _ensure_offset_in_range(self, offset: int) -> None:
        if not self.can_convert_to_relative_offset(offset):
            raise LogSegmentOffsetOverflowException(
                f"Detected offset overflow at offset {offset} in segment {self}", self, offset)

    # -- rolling ----------------------------------------------------------------------

    def should_roll(self, roll_params: RollParams) -> bool:
        """Roll when full (bytes or either index), too old (segment.ms less jitter), or when the
        new offsets would not fit the 4-byte relative offsets of this segment's indexes."""
        size = self.log.size_in_bytes()
        if size > roll_params.max_segment_bytes - roll_params.messages_size:
            return True
        if size > 0 and (self.time_waited_for_roll(roll_params.now, roll_params.max_timestamp_in_messages)
                         > roll_params.max_segment_ms - self.roll_jitter_ms):
            return True
        relative = roll_params.max_offset_in_messages - self.base_offset
        # the lazy indexes read directly, not through the properties: this runs at every append
        return (self.lazy_offset_index.get().is_full() or self.lazy_time_index.get().is_full()
                or relative < 0 or relative > INT_MAX)

    def _load_first_batch_timestamp(self) -> None:
        if self._rolling_based_timestamp is None:
            for batch in self.log.batches():
                self._rolling_based_timestamp = batch.max_timestamp
                break

    def time_waited_for_roll(self, now: int, message_timestamp: int) -> int:
        """How long this segment has been open: by the first batch's timestamp when it has one, else wall clock."""
        t = self._rolling_based_timestamp
        if t is None:  # known after the first batch: the roll check of every append skips the call
            self._load_first_batch_timestamp()
            t = self._rolling_based_timestamp
        if t is not None and t >= 0:
            return message_timestamp - t
        return now - self._created

    def get_first_batch_timestamp(self) -> int:
        self._load_first_batch_timestamp()
        t = self._rolling_based_timestamp
        return t if t is not None and t >= 0 else LONG_MAX

    # -- append -----------------------------------------------------------------------

    def append(self, largest_offset: int, largest_timestamp: int, shallow_offset_of_max_timestamp: int,
               records: MemoryRecords) -> None:
        """Append already validated, offset-assigned batches; add a sparse index entry when due.

        The caller holds the Log lock.
        """
        size = records.size_in_bytes
        if size <= 0:
            return
        log = self.log
        physical_position = log.size_in_bytes()
        if physical_position == 0:
            self._rolling_based_timestamp = largest_timestamp
        relative = largest_offset - self.base_offset
        if relative < 0 or relative > INT_MAX:
            self._ensure_offset_in_range(largest_offset)
        log.append(records)
        max_ts = self._max_timestamp_so_far
        if max_ts is None:
            max_ts = self.max_timestamp_so_far
        if largest_timestamp > max_ts:
            self._max_timestamp_so_far = largest_timestamp
            self._offset_of_max_timestamp_so_far = shallow_offset_of_max_timestamp
        if self._bytes_since_last_index_entry > self.index_interval_bytes:
            self.offset_index.append(largest_offset, physical_position)
            self.time_index.maybe_append(self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far)
            self._bytes_since_last_index_entry = 0
        self._bytes_since_last_index_entry += size

    def update_txn_index(self, completed_txn, last_stable_offset: int) -> None:
        """Record ``completed_txn`` in the transaction index if it was aborted. The caller holds the Log lock."""
        if completed_txn.is_aborted:
            logger.debug("Writing aborted transaction %s to transaction index, last stable offset is %d",
                         completed_txn, last_stable_offset)
            self.txn_index.append(AbortedTxn.of(completed_txn, last_stable_offset))

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        return self.txn_index.collect_aborted_txns(fetch_offset, upper_bound_offset)

    def append_from_file(self, records, start: int) -> int:
        """Copy whole batches from another FileRecords starting at ``start`` until one would overflow.

        Returns the bytes appended. Used to split a segment whose offsets overflow.
        """
        position = start
        end = records.size_in_bytes()
        while position < end:
            to_append = 0
            max_ts = LONG_MIN
            offset_of_max_ts = LONG_MIN
            max_offset = LONG_MIN
            for batch in records.batches_from(position):
                if not self.can_convert_to_relative_offset(batch.last_offset):
                    break
                if to_append and to_append + batch.size_in_bytes >= 1024 * 1024:
                    break
                if batch.max_timestamp > max_ts:
                    max_ts = batch.max_timestamp
                    offset_of_max_ts = batch.last_offset
                max_offset = batch.last_offset
                to_append += batch.size_in_bytes
            if to_append == 0:
                break
            data = records.read_bytes(position, to_append)
            self.append(max_offset, max_ts, offset_of_max_ts, MemoryRecords(bytearray(data)))
            position += to_append
        return position - start

    # -- read -------------------------------------------------------------------------

    def translate_offset(self, offset: int, starting_file_position: int = 0):
        """Position and size of the first batch holding an offset >= ``offset``, or None."""
        mapping = self.offset_index.lookup(offset)
        position = mapping.position
        if starting_file_position > position:
            position = starting_file_position
        return self.log.search_for_offset_with_size(offset, position)

    def read(self, start_offset: int, max_size: int, max_position: Optional[int] = None,
             min_one_message: bool = False) -> Optional[FetchDataInfo]:
        """Batches from the first one holding an offset >= ``start_offset``, as a FileRecords slice.

        At most ``max_size`` bytes (or the whole first batch with ``min_one_message``),
        never past ``max_position``. None if no batch holds such an offset.
        """
        if max_size < 0:
            raise ValueError(f"Invalid max size {max_size} for log read from segment {self.log}")
        if max_position is None:
            max_position = self.log.size_in_bytes()
        start_offset_and_size = self.translate_offset(start_offset)
        if start_offset_and_size is None:
            return None
        start_position = start_offset_and_size.position
        offset_metadata = LogOffsetMetadata(start_offset, self.base_offset, start_position)
        adjusted_max_size = max(max_size, start_offset_and_size.size) if min_one_message else max_size
        if adjusted_max_size == 0:
            return FetchDataInfo(offset_metadata, MemoryRecords.EMPTY)
        fetch_size = min(max_position - start_position, adjusted_max_size)
        if fetch_size < 0:
            fetch_size = 0
        return FetchDataInfo(offset_metadata, self.log.slice(start_position, fetch_size),
                             first_entry_incomplete=adjusted_max_size < start_offset_and_size.size)

    def fetch_upper_bound_offset(self, start_offset_position, fetch_size: int) -> Optional[int]:
        found = self.offset_index.fetch_upper_bound_offset(start_offset_position, fetch_size)
        return None if found is None else found.offset

    # -- recovery ---------------------------------------------------------------------

    def recover(self, producer_state_manager, leader_epoch_cache=None) -> int:
        """Rebuild both indexes from the log and cut off everything after the last valid batch.

        A torn tail (a batch cut short by a crash) ends the scan quietly; a batch
        that fails its CRC or header checks ends it with a warning. Returns the
        number of bytes truncated.
        """
        offset_index = self.offset_index
        time_index = self.time_index
        offset_index.reset()
        time_index.reset()
        self.txn_index.reset()
        crash_point("log_segment.recover.after_index_reset")
        valid_bytes = 0
        last_index_entry = 0
        self._max_timestamp_so_far = NO_TIMESTAMP
        self._offset_of_max_timestamp_so_far = None
        interval = self.index_interval_bytes
        # Offsets only grow through a log, from the segment's base offset on (every append and
        # the cleaner keep it so); a batch that goes back is no continuation of what precedes
        # it. Kafka would fail the log's load on it (an index append or a leader epoch out of
        # order); it is treated as invalid data, the segment cut before it.
        next_offset = self.base_offset
        try:
            for batch in self.log.batches():
                batch.ensure_valid()
                if batch.base_offset < next_offset:
                    raise CorruptRecordException(
                        f"batch offsets [{batch.base_offset}, {batch.last_offset}] do not follow offset "
                        f"{next_offset - 1}")
                last_offset = batch.last_offset
                next_offset = last_offset + 1
                self._ensure_offset_in_range(last_offset)
                max_ts = batch.max_timestamp
                if max_ts > self._max_timestamp_so_far:
                    self._max_timestamp_so_far = max_ts
                    self._offset_of_max_timestamp_so_far = last_offset
                if valid_bytes - last_index_entry > interval:
                    offset_index.append(last_offset, valid_bytes)
                    time_index.maybe_append(self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far)
                    last_index_entry = valid_bytes
                valid_bytes += batch.size_in_bytes
                if leader_epoch_cache is not None:
                    epoch = batch.partition_leader_epoch
                    if epoch >= 0:
                        latest = leader_epoch_cache.latest_epoch
                        if latest is None or epoch > latest:
                            leader_epoch_cache.assign(epoch, batch.base_offset)
                self._update_producer_state(producer_state_manager, batch, self)
        except (CorruptRecordException, InvalidRecordException) as e:
            logger.warning("Found invalid messages in log segment %s at byte offset %d: %s.",
                           os.path.abspath(self.log.file), valid_bytes, e)
        truncated = self.log.size_in_bytes() - valid_bytes
        if truncated > 0:
            logger.debug("Truncated %d invalid bytes at the end of segment %s during recovery",
                         truncated, os.path.abspath(self.log.file))
        self.log.truncate_to(valid_bytes)
        offset_index.trim_to_valid_size()
        # A cleanly closed segment always ends its time index with its largest timestamp; do the same.
        if self._offset_of_max_timestamp_so_far is None:
            self._offset_of_max_timestamp_so_far = time_index.last_entry.offset
        time_index.maybe_append(self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far, True)
        time_index.trim_to_valid_size()
        self._bytes_since_last_index_entry = valid_bytes - last_index_entry
        return truncated

    @staticmethod
    def _update_producer_state(producer_state_manager, batch, segment: Optional["LogSegment"] = None) -> None:
        if batch.producer_id >= 0:
            append_info = producer_state_manager.prepare_update(batch.producer_id, AppendOrigin.REPLICATION)
            completed_txn = append_info.append(batch, None)
            producer_state_manager.update(append_info)
            if completed_txn is not None:
                if segment is not None:
                    segment.update_txn_index(completed_txn, producer_state_manager.last_stable_offset(completed_txn))
                producer_state_manager.complete_txn(completed_txn)
        producer_state_manager.update_map_end_offset(batch.last_offset + 1)

    def _load_largest_timestamp(self) -> None:
        last_entry = self.time_index.last_entry
        self._max_timestamp_so_far = last_entry.timestamp
        self._offset_of_max_timestamp_so_far = last_entry.offset
        position = self.offset_index.lookup(last_entry.offset).position
        after = self.log.largest_timestamp_after(position)
        if after.timestamp > last_entry.timestamp:
            self._max_timestamp_so_far = after.timestamp
            self._offset_of_max_timestamp_so_far = after.offset

    def has_overflow(self) -> bool:
        next_offset = self.read_next_offset()
        return next_offset > self.base_offset and not self.can_convert_to_relative_offset(next_offset - 1)

    # -- truncation -------------------------------------------------------------------

    def truncate_to(self, offset: int) -> int:
        """Remove every batch holding offsets >= ``offset`` (whole batches); returns bytes removed."""
        mapping = self.translate_offset(offset)
        offset_index = self.offset_index
        time_index = self.time_index
        offset_index.truncate_to(offset)
        time_index.truncate_to(offset)
        self.txn_index.truncate_to(offset)
        # the segment may become the active one again; give its indexes room to grow
        offset_index.resize(offset_index.max_index_size)
        time_index.resize(time_index.max_index_size)
        bytes_truncated = 0 if mapping is None else self.log.truncate_to(mapping.position)
        if self.log.size_in_bytes() == 0:
            self._created = self.time.milliseconds()
            self._rolling_based_timestamp = None
        self._bytes_since_last_index_entry = 0
        if self.max_timestamp_so_far >= 0:
            self._load_largest_timestamp()
        return bytes_truncated

    def read_next_offset(self) -> int:
        """The offset after the last batch, found by scanning from the last index entry (not cheap)."""
        fetch_data = self.read(self.offset_index.last_offset, self.log.size_in_bytes())
        if fetch_data is None:
            return self.base_offset
        next_offset = self.base_offset
        records = fetch_data.records
        for batch in records.batches():
            next_offset = batch.next_offset
        return next_offset

    # -- lifecycle --------------------------------------------------------------------

    def flush(self) -> None:
        self.log.flush()
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def update_parent_dir(self, dir: str) -> None:
        self.log.update_parent_dir(dir)
        self.lazy_offset_index.update_parent_dir(dir)
        self.lazy_time_index.update_parent_dir(dir)
        self.txn_index.update_parent_dir(dir)

    def change_file_suffixes(self, old_suffix: str, new_suffix: str) -> None:
        self.log.rename_to(log_files.replace_suffix(self.log.file, old_suffix, new_suffix))
        self.lazy_offset_index.rename_to(log_files.replace_suffix(self.lazy_offset_index.file, old_suffix, new_suffix))
        self.lazy_time_index.rename_to(log_files.replace_suffix(self.lazy_time_index.file, old_suffix, new_suffix))
        self.txn_index.rename_to(log_files.replace_suffix(self.txn_index.file, old_suffix, new_suffix))

    def on_become_inactive_segment(self) -> None:
        """Seal the segment: record its largest timestamp in the time index and trim files to their content."""
        self.time_index.maybe_append(self.max_timestamp_so_far, self.offset_of_max_timestamp_so_far, True)
        self.offset_index.trim_to_valid_size()
        self.time_index.trim_to_valid_size()
        self.log.trim()

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: Optional[int] = None):
        """The first batch with a timestamp >= ``timestamp`` at an offset >= ``starting_offset``
        as a TimestampAndOffset, or None."""
        if starting_offset is None:
            starting_offset = self.base_offset
        timestamp_offset = self.time_index.lookup(timestamp)
        position = self.offset_index.lookup(max(timestamp_offset.offset, starting_offset)).position
        return self.log.search_for_timestamp(timestamp, position, starting_offset)

    def close(self) -> None:
        if self._max_timestamp_so_far is not None or self._offset_of_max_timestamp_so_far is not None:
            _swallow(lambda: self.time_index.maybe_append(self.max_timestamp_so_far,
                                                          self.offset_of_max_timestamp_so_far, True))
        _swallow(self.lazy_offset_index.close)
        _swallow(self.lazy_time_index.close)
        _swallow(self.txn_index.flush)
        _swallow(self.log.close)

    def close_handlers(self) -> None:
        _swallow(self.lazy_offset_index.close_handler)
        _swallow(self.lazy_time_index.close_handler)
        _swallow(self.log.close_handlers)

    def delete_if_exists(self) -> None:
        errors = []
        for kind, fn, file in (("log", self.log.delete_if_exists, self.log.file),
                               ("offset index", self.lazy_offset_index.delete_if_exists, self.lazy_offset_index.file),
                               ("time index", self.lazy_time_index.delete_if_exists, self.lazy_time_index.file),
                               ("transaction index", self.txn_index.delete_if_exists, self.txn_index.file)):
            try:
                if fn():
                    logger.info("Deleted %s %s.", kind, os.path.abspath(file))
                elif kind != "transaction index":  # most segments never had one
                    logger.info("Failed to delete %s %s because it does not exist.", kind, os.path.abspath(file))
            except OSError as e:
                errors.append(OSError(f"Delete of {kind} {os.path.abspath(file)} failed: {e}"))
        if errors:
            raise errors[0]

    @property
    def last_modified(self) -> int:
        try:
            return int(os.stat(self.log.file).st_mtime * 1000)
        except FileNotFoundError:
            return 0

    @last_modified.setter
    def last_modified(self, ms: int) -> None:
        seconds = ms / 1000.0
        for file in (self.log.file, self.lazy_offset_index.file, self.lazy_time_index.file):
            if os.path.exists(file):
                os.utime(file, (seconds, seconds))

    @property
    def largest_record_timestamp(self) -> Optional[int]:
        ts = self.max_timestamp_so_far
        return ts if ts >= 0 else None

    @property
    def largest_timestamp(self) -> int:
        """The largest record timestamp, or the file's mtime when no record carries one (retention uses this)."""
        ts = self.max_timestamp_so_far
        return ts if ts >= 0 else self.last_modified

    def __repr__(self) -> str:
        return (f"LogSegment(baseOffset={self.base_offset}, size={self.size}, "
                f"lastModifiedTime={self.last_modified}, largestRecordTimestamp={self.largest_record_timestamp})")

    # -- the companion object's: opening a segment by its files' names ------------------

    @classmethod
    def open(cls, dir: str, base_offset: int, config, time, file_already_exists: bool = False,
             init_file_size: int = 0, preallocate: bool = False, file_suffix: str = "") -> "LogSegment":
        max_index_size = config.max_index_size
        return cls(
            FileRecords.open(log_files.log_file(dir, base_offset, file_suffix), file_already_exists,
                             init_file_size, preallocate),
            LazyIndex.for_offset(log_files.offset_index_file(dir, base_offset, file_suffix), base_offset, max_index_size),
            LazyIndex.for_time(log_files.time_index_file(dir, base_offset, file_suffix), base_offset, max_index_size),
            base_offset,
            index_interval_bytes=config.index_interval,
            roll_jitter_ms=config.random_segment_jitter(),
            time=time,
            txn_index=TransactionIndex(base_offset, log_files.transaction_index_file(dir, base_offset, file_suffix)),
        )


def _swallow(fn: Callable[[], object]) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001 - closing must go on for the other files
        logger.warning("Error while closing segment resource", exc_info=True)


def delete_if_exists(dir: str, base_offset: int, file_suffix: str = "") -> None:
    """LogSegment.deleteIfExists(dir, baseOffset, fileSuffix) of Kafka's companion object: a
    segment's files removed by name, without opening them."""
    log_files.delete_file_if_exists(log_files.offset_index_file(dir, base_offset, file_suffix))
    log_files.delete_file_if_exists(log_files.time_index_file(dir, base_offset, file_suffix))
    log_files.delete_file_if_exists(log_files.transaction_index_file(dir, base_offset, file_suffix))
    log_files.delete_file_if_exists(log_files.log_file(dir, base_offset, file_suffix))
