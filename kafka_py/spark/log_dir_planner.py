"""Plans a Spark read of Kafka log dirs: which partitions, which offsets, which bytes.

No Kafka counterpart: this is the driver side of the ``kafka-log`` data source, the part of
Spark's KafkaRelation that asks the brokers for offsets, answered from the files the way
Kafka's Log answers them (core/src/main/scala/kafka/log/Log.scala: the log start offset, the
log end offset, and the segment that holds an offset).

A log dir holds one directory per partition, ``<topic>-<partition>``, each with segments
``<20-digit base offset>.log`` and their ``.index``; directories being deleted (``-delete``)
or copied between log dirs (``-future``) are passed over. For each partition the planner finds

* the log start offset: the first segment's base offset, or log-start-offset-checkpoint's
  value when DeleteRecords moved it further;
* the log end offset, by walking the batch headers of the active segment from its last index
  entry and checking the CRC of the last batches: the end of the last complete, CRC-valid
  batch. What lies beyond (a batch being appended right now, or the torn append of a crashed
  broker) is never planned, so it is never read;
* the high watermark, from replication-offset-checkpoint, when ``committedOnly``.

An offset range then becomes byte ranges: the offset index (OffsetIndex.lookup) gives the
position to start at and the position past which every batch is beyond the range, so a narrow
range reads only its own bytes. A range larger than ``maxBytesPerPartition`` is cut at index
entries, which are batch boundaries. Every position taken from an index is checked against
the batch header found there: an index left stale by a crash only costs a longer read.

A live broker's active index is preallocated and its unused entries are zeros; only the
entries before the zeros are used.
"""
from __future__ import annotations

import logging
import os
import struct
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from kafka_py.clients.common.errors import CorruptRecordException, KafkaException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log import log_files
from kafka_py.log.offset_index import OffsetIndex
from kafka_py.clients.common.record.default_record_batch import (
    CURRENT_MAGIC_VALUE,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_BATCH_OVERHEAD,
    DefaultRecordBatch,
)
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile
from kafka_py.spark.options import (
    EARLIEST,
    LATEST,
    KafkaLogOptions,
    KafkaLogOptionsException,
    OffsetSpec,
    Subscription,
    resolve_offset,
)
from kafka_py.spark.replicas import choose_replica, highest_checkpointed_high_watermark, read_broker_id
from kafka_py.spark.segment_reader import KafkaLogDataLossException, SegmentSlice, find_next_valid_batch
from kafka_py.spark.transactions import aborted_ranges, aborted_transactions, last_stable_offset
from kafka_py.core.utils.java_limits import LONG_MAX

logger = logging.getLogger(__name__)

REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"

_HEADER = struct.Struct(">qiibIhiqqqhii")
#: How many batches from the end of the active segment have their CRC checked while looking
#: for the last good one; a torn append spoils one batch, a longer run of bad batches is
#: damage the executors report.
_TAIL_CRC_CHECKS = 16


@dataclass(frozen=True)
class SegmentFile:
    base_offset: int
    log_file: str
    index_file: Optional[str]


@dataclass
class PartitionLog:
    """One partition's directory in a log dir, and what the planner learned about it."""

    topic_partition: TopicPartition
    dir: str
    log_dir: str
    segments: list[SegmentFile]
    log_start_offset: int = 0
    log_end_offset: int = 0
    #: Where the last complete, valid batch of the last segment ends.
    end_position: int = 0
    high_watermark: Optional[int] = None
    #: Which broker the log dir belongs to (its meta.properties), None when it does not say.
    broker_id: Optional[int] = None
    #: This replica's high watermark in its log dir's replication-offset-checkpoint.
    checkpointed_high_watermark: Optional[int] = None
    #: Its files disappeared while it was described (the topic was deleted meanwhile).
    vanished: bool = False
    _tail_known: bool = field(default=False, repr=False)


@dataclass(frozen=True)
class OffsetRange:
    topic_partition: TopicPartition
    from_offset: int
    until_offset: int

    @property
    def size(self) -> int:
        return max(0, self.until_offset - self.from_offset)


class _SegmentIndex:
    """The trustworthy entries of one segment's offset index, searched by offset or position."""

    def __init__(self, segment: SegmentFile, log_size: int) -> None:
        self.segment = segment
        self.index: Optional[OffsetIndex] = None
        self.valid = 0
        path = segment.index_file
        # OffsetIndex creates a missing file, so only open one that is there and non-empty.
        if path is None or not os.path.isfile(path) or os.path.getsize(path) < OffsetIndex.entry_size:
            return
        try:
            self.index = OffsetIndex(path, segment.base_offset, writable=False)
        except (OSError, ValueError, KafkaException) as e:
            logger.warning("Cannot open offset index %s (%s); reading its segment from the start", path, e)
            return
        self.valid = self._count_valid(log_size)

    def close(self) -> None:
        if self.index is not None:
            self.index.close_handler()

    def _entry(self, n: int):
        return self.index.entry(n)

    def _count_valid(self, log_size: int) -> int:
        entries = self.index.entries
        if entries == 0:
            return 0
        base = self.segment.base_offset
        # A preallocated (active) index ends in zero entries, which read as (base offset, 0);
        # they form a suffix, so the first of them is found by bisection. Entry 0 can
        # legitimately be (base, 0) and is always kept.
        lo, hi = 1, entries
        while lo < hi:
            mid = (lo + hi) // 2
            e = self._entry(mid)
            if e.offset == base and e.position == 0:
                hi = mid
            else:
                lo = mid + 1
        valid = lo
        # An index not truncated with its log (a crash) may point past the end of the data.
        lo, hi = 0, valid
        while lo < hi:
            mid = (lo + hi) // 2
            if self._entry(mid).position < log_size:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def floor(self, target_offset: int) -> tuple[int, int]:
        """(offset, position) of the last entry at or below ``target_offset``, else (base, 0)."""
        if self.valid == 0:
            return self.segment.base_offset, 0
        if self.valid == self.index.entries:
            found = self.index.lookup(target_offset)
            return found.offset, found.position
        lo, hi = -1, self.valid - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._entry(mid).offset <= target_offset:
                lo = mid
            else:
                hi = mid - 1
        if lo < 0:
            return self.segment.base_offset, 0
        e = self._entry(lo)
        return e.offset, e.position

    def end_position_for(self, until_offset: int) -> Optional[int]:
        """A position from which every batch holds offsets >= ``until_offset``, or None.

        Entry (o, p) says the data from p on holds offsets up to o and beyond; everything at
        or after the next entry's position holds offsets above o. So the first entry with
        o >= until - 1 is followed by the position wanted.
        """
        lo, hi = 0, self.valid
        while lo < hi:
            mid = (lo + hi) // 2
            if self._entry(mid).offset >= until_offset - 1:
                hi = mid
            else:
                lo = mid + 1
        if lo + 1 < self.valid:
            return self._entry(lo + 1).position
        return None

    def last_position_at_most(self, position: int) -> Optional[int]:
        """The largest entry position <= ``position`` (batch boundaries to cut a range at)."""
        lo, hi = -1, self.valid - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._entry(mid).position <= position:
                lo = mid
            else:
                hi = mid - 1
        return None if lo < 0 else self._entry(lo).position

    def first_position_above(self, position: int) -> Optional[int]:
        lo, hi = 0, self.valid
        while lo < hi:
            mid = (lo + hi) // 2
            if self._entry(mid).position > position:
                hi = mid
            else:
                lo = mid + 1
        return None if lo >= self.valid else self._entry(lo).position


def _open_read_only(path: str) -> FileRecords:
    """A segment opened for reading; close it with ``close_handlers``: ``close`` would also
    fsync and trim it to the size seen at open, while the broker may be appending."""
    return FileRecords.open(path, file_already_exists=True, mutable=False)


def _batch_header_at(records: FileRecords, position: int) -> Optional[tuple]:
    """The header at ``position`` if it can start a v2 batch there, else None."""
    head = records.read_bytes(position, RECORD_BATCH_OVERHEAD)
    if len(head) < RECORD_BATCH_OVERHEAD or head[MAGIC_OFFSET] != CURRENT_MAGIC_VALUE:
        return None
    header = _HEADER.unpack_from(head, 0)
    if LOG_OVERHEAD + header[1] < RECORD_BATCH_OVERHEAD:
        return None
    return header


class LogDirPlanner:
    """Finds the partitions of some log dirs and plans reads of them as SegmentSlices."""

    def __init__(self, log_dirs: Sequence[str]) -> None:
        self.log_dirs = [os.path.abspath(d) for d in log_dirs]
        for d in self.log_dirs:
            if not os.path.isdir(d):
                raise KafkaLogOptionsException(f"Log dir {d} does not exist or is not a directory")
        self.broker_ids: dict[str, Optional[int]] = {d: read_broker_id(d) for d in self.log_dirs}

    # ------------------------------------------------------------------ discovery

    def replica_logs(self, subscription: Subscription = Subscription()) -> dict[TopicPartition, list[PartitionLog]]:
        """Every partition directory of the log dirs that ``subscription`` selects, per
        partition one per broker (its replicas, when the dirs of several brokers are given)."""
        found: dict[TopicPartition, list[PartitionLog]] = {}
        for log_dir in self.log_dirs:
            looks_like_partition = any(n.endswith(log_files.LOG_FILE_SUFFIX) for n in os.listdir(log_dir))
            if looks_like_partition:
                raise KafkaLogOptionsException(
                    f"{log_dir} holds segment files: it is a partition's directory; give the log dir "
                    f"that contains it ({os.path.dirname(log_dir)})")
            broker_id = self.broker_ids[log_dir]
            for name in sorted(os.listdir(log_dir)):
                path = os.path.join(log_dir, name)
                if not os.path.isdir(path):
                    continue
                if name.endswith(log_files.DELETE_DIR_SUFFIX) or name.endswith(log_files.FUTURE_DIR_SUFFIX):
                    continue
                try:
                    tp = log_files.parse_topic_partition_name(path)
                except KafkaException:
                    logger.debug("Skipping %s: not a topic-partition directory", path)
                    continue
                if not subscription.includes(tp):
                    continue
                replicas = found.setdefault(tp, [])
                for other in replicas:
                    if other.broker_id == broker_id:
                        owner = (f"both of broker {broker_id}" if broker_id is not None
                                 else "neither of which names its broker in meta.properties")
                        raise KafkaLogOptionsException(
                            f"Partition {tp} is in both {other.log_dir} and {log_dir}, {owner}: a broker "
                            f"holds one copy of a partition, so give each broker's log dirs once (replicas "
                            f"are told apart by the broker.id of each log dir's meta.properties)")
                replicas.append(PartitionLog(tp, path, log_dir, self._segments(path), broker_id=broker_id))
        return found

    def partition_logs(self, subscription: Subscription = Subscription(),
                       fail_on_data_loss: bool = True) -> dict[TopicPartition, PartitionLog]:
        """One described replica per partition that ``subscription`` selects: the only one, or
        the one ``replicas.choose_replica`` prefers (highest checkpointed high watermark)."""
        chosen: dict[TopicPartition, PartitionLog] = {}
        for tp, replicas in self.replica_logs(subscription).items():
            self.describe(replicas, fail_on_data_loss=fail_on_data_loss)
            alive = [r for r in replicas if not r.vanished]
            if alive:
                chosen[tp] = choose_replica(alive)
        return chosen

    @staticmethod
    def _segments(partition_dir: str) -> list[SegmentFile]:
        segments = []
        for name in os.listdir(partition_dir):
            # Only plain "<offset>.log": .log.deleted, .log.cleaned and .log.swap are files in
            # transit that the broker's recovery resolves.
            if not name.endswith(log_files.LOG_FILE_SUFFIX):
                continue
            try:
                base = log_files.offset_from_file_name(name)
            except ValueError:
                continue
            index = log_files.offset_index_file(partition_dir, base)
            segments.append(SegmentFile(base, os.path.join(partition_dir, name),
                                        index if os.path.exists(index) else None))
        segments.sort(key=lambda s: s.base_offset)
        return segments

    # ------------------------------------------------------------------ offsets

    def describe(self, logs: Iterable[PartitionLog], committed_only: bool = False,
                 fail_on_data_loss: bool = True) -> list[TopicPartition]:
        """Fill in log start/end offsets and checkpointed high watermarks of ``logs`` (and, with
        ``committed_only``, each one's own high watermark); returns the partitions whose files
        vanished meanwhile (only without ``fail_on_data_loss``)."""
        logs = list(logs)
        vanished: list[TopicPartition] = []
        start_checkpoints: dict[str, dict[TopicPartition, int]] = {}
        hw_checkpoints: dict[str, dict[TopicPartition, int]] = {}
        for log in logs:
            if log.log_dir not in start_checkpoints:
                start_checkpoints[log.log_dir] = self._read_checkpoint(log.log_dir, LOG_START_OFFSET_CHECKPOINT)
                hw_checkpoints[log.log_dir] = self._read_checkpoint(log.log_dir, REPLICATION_OFFSET_CHECKPOINT)
            try:
                self._describe_tail(log)
            except FileNotFoundError as e:
                # The topic was deleted (its directory renamed to -delete) since it was listed.
                _vanished(log.topic_partition, e, fail_on_data_loss)
                log.vanished = True
                vanished.append(log.topic_partition)
                continue
            first_base = log.segments[0].base_offset if log.segments else 0
            checkpointed_start = start_checkpoints[log.log_dir].get(log.topic_partition, first_base)
            log.log_start_offset = min(max(first_base, checkpointed_start), log.log_end_offset)
            log.checkpointed_high_watermark = hw_checkpoints[log.log_dir].get(log.topic_partition)
            if committed_only:
                set_committed_end(log, [log])
        return vanished

    @staticmethod
    def _read_checkpoint(log_dir: str, name: str) -> dict[TopicPartition, int]:
        path = os.path.join(log_dir, name)
        if not os.path.exists(path):
            return {}
        try:
            return OffsetCheckpointFile(path).read()
        except Exception as e:  # noqa: BLE001 - a bad checkpoint must not hide the data
            logger.warning("Cannot read %s (%s); ignoring it", path, e)
            return {}

    def _describe_tail(self, log: PartitionLog) -> None:
        if log._tail_known:
            return
        log._tail_known = True
        if not log.segments:
            log.log_end_offset = 0
            log.end_position = 0
            return
        last = log.segments[-1]
        records = _open_read_only(last.log_file)
        index = _SegmentIndex(last, records.size_in_bytes())
        try:
            size = records.size_in_bytes()
            _, start = index.floor(LONG_MAX)
            if start and _batch_header_at(records, start) is None:
                start = 0
            found = self._last_valid_batch_end(records, start, size)
            if found is None and start:
                # Nothing valid after the last index entry: the end is before it.
                found = self._last_valid_batch_end(records, 0, size)
            end_position, next_offset = found if found is not None else (0, last.base_offset)
            if end_position < size and not records.is_zero_filled_from(end_position):
                logger.info("%s: ignoring %d bytes after position %d of %s (an incomplete append)",
                            log.topic_partition, size - end_position, end_position, last.log_file)
            log.end_position = end_position
            log.log_end_offset = max(next_offset, last.base_offset)
        finally:
            index.close()
            records.close_handlers()

    def _last_valid_batch_end(self, records: FileRecords, start: int, size: int) -> Optional[tuple[int, int]]:
        """(end position, next offset) of the last complete, CRC-valid batch from ``start``."""
        complete = self._walk_headers(records, start, size)
        for position, batch_size, batch_next in reversed(complete[-_TAIL_CRC_CHECKS:]):
            if DefaultRecordBatch(records.read_bytes(position, batch_size)).is_valid():
                return position + batch_size, batch_next
        if len(complete) > _TAIL_CRC_CHECKS:
            # Too many bad batches at the tail to be one torn append: keep them all in the
            # plan, so that reading them reports the damage.
            position, batch_size, batch_next = complete[-1]
            return position + batch_size, batch_next
        return None

    @staticmethod
    def _walk_headers(records: FileRecords, start: int, size: int) -> list[tuple[int, int, int]]:
        """(position, size, next offset) of each complete batch from ``start``, stepping over
        damaged headers when valid batches follow them."""
        complete: list[tuple[int, int, int]] = []
        position = start
        while position < size:
            try:
                for batch in records.batches_from(position):
                    complete.append((batch.position, batch.size_in_bytes, batch.next_offset))
                return complete
            except CorruptRecordException:
                bad = complete[-1][0] + complete[-1][1] if complete else position
                if records.is_zero_filled_from(bad):
                    # A preallocated segment's unused space (log.preallocate): the data ends here.
                    return complete
                resume = find_next_valid_batch(records, bad, size)
                if resume is None:
                    return complete
                position = resume
        return complete

    # ------------------------------------------------------------------ planning

    def resolve_ranges(self, logs: dict[TopicPartition, PartitionLog], options: KafkaLogOptions) -> list[OffsetRange]:
        """The offset range to read of each partition, as Spark's Kafka source resolves it."""
        for name, spec in (("startingOffsets", options.starting_offsets), ("endingOffsets", options.ending_offsets)):
            if isinstance(spec, dict):
                unknown = sorted(str(tp) for tp in spec if tp not in logs)
                if unknown:
                    raise KafkaLogOptionsException(
                        f"{name} names partitions that are not read ({', '.join(unknown)}): they are not in "
                        f"{', '.join(self.log_dirs)} or not selected by {options.subscription.describe()}")
        ranges = []
        for tp in sorted(logs):
            log = logs[tp]
            latest = log.high_watermark if options.committed_only else log.log_end_offset
            if options.read_committed:
                latest = max(log.log_start_offset, last_stable_offset(log, latest))
            earliest = log.log_start_offset
            start = resolve_offset(options.starting_offsets, tp, earliest, latest, EARLIEST)
            until = resolve_offset(options.ending_offsets, tp, earliest, latest, LATEST)
            if start > until:
                raise KafkaLogOptionsException(
                    f"Beginning offset {start} is after the ending offset {until} for topic {tp.topic} "
                    f"partition {tp.partition}")
            if start < earliest:
                message = (f"Starting offset {start} of {tp} is below its log start offset {earliest}: "
                           f"offsets {start} to {earliest - 1} are no longer in {log.dir}")
                if options.fail_on_data_loss:
                    raise KafkaLogDataLossException(
                        message + ". Some data may have been lost; set the option failOnDataLoss to false "
                        "to read from the log start offset instead.")
                logger.warning("%s; reading from %d (failOnDataLoss=false)", message, earliest)
                start = earliest
            if until > latest:
                logger.warning("Ending offset %d of %s is beyond its %s %d; reading to %d", until, tp,
                               "last stable offset" if options.read_committed else
                               "high watermark" if options.committed_only else "log end offset", latest, latest)
                until = latest
            ranges.append(OffsetRange(tp, start, max(start, until)))
        return ranges

    def chosen_logs(self, options: KafkaLogOptions) -> dict[TopicPartition, PartitionLog]:
        """The replica of each selected partition that a read of ``options`` uses, described."""
        replicas = self.replica_logs(options.subscription)
        self.describe([r for rs in replicas.values() for r in rs], fail_on_data_loss=options.fail_on_data_loss)
        chosen: dict[TopicPartition, PartitionLog] = {}
        for tp, candidates in replicas.items():
            alive = [r for r in candidates if not r.vanished]
            if not alive:
                continue
            start = _explicit(options.starting_offsets, tp)
            until = _explicit(options.ending_offsets, tp)
            if until is None:
                # "latest": the end of the partition, so that no replica behind it is chosen.
                until = max(r.log_end_offset for r in alive)
                hw = highest_checkpointed_high_watermark(alive)
                if options.committed_only and hw is not None:
                    until = min(until, hw)
            log = choose_replica(alive, from_offset=start, until_offset=until)
            if options.committed_only:
                set_committed_end(log, alive)
            chosen[tp] = log
        return chosen

    def plan(self, options: KafkaLogOptions) -> list[SegmentSlice]:
        """Slices covering exactly the records ``options`` asks for, ready to read in parallel."""
        logs = self.chosen_logs(options)
        ranges = self.resolve_ranges(logs, options)
        return self.plan_ranges(logs, ranges, options.fail_on_data_loss, options.max_bytes_per_partition,
                                options.min_partitions, options.read_committed)

    def plan_ranges(self, logs: dict[TopicPartition, PartitionLog], ranges: Sequence[OffsetRange],
                    fail_on_data_loss: bool = True, max_bytes_per_partition: int = 128 * 1024 * 1024,
                    min_partitions: Optional[int] = None, read_committed: bool = False) -> list[SegmentSlice]:
        """Slices covering the offset ``ranges``, each read from ``logs[its partition]``; with
        ``read_committed`` each carries the aborted transactions it must drop."""
        pieces: list[tuple[PartitionLog, int, int, int, bool, OffsetRange]] = []
        for r in ranges:
            if r.size == 0:
                continue
            pieces.extend(self._segment_ranges(logs[r.topic_partition], r, fail_on_data_loss))
        total = sum(end - start for _, _, start, end, _, _ in pieces)
        max_bytes = max_bytes_per_partition
        if min_partitions and total:
            max_bytes = max(1, min(max_bytes, -(-total // min_partitions)))
        slices: list[SegmentSlice] = []
        aborted_by_log: dict[int, list] = {}
        for log, seg_index, start, end, is_tail, r in pieces:
            aborted: tuple = ()
            if read_committed:
                if id(log) not in aborted_by_log:
                    aborted_by_log[id(log)] = aborted_transactions(log)
                aborted = aborted_ranges(aborted_by_log[id(log)], r.from_offset, r.until_offset)
            slices.extend(self._split(log, seg_index, start, end, is_tail, r, max_bytes, aborted))
        logger.info("Planned %d slices (%d bytes) over %d partitions of %s", len(slices), total,
                    len(ranges), ", ".join(self.log_dirs))
        return slices

    def _segment_ranges(self, log: PartitionLog, r: OffsetRange, fail_on_data_loss: bool = True) -> list[tuple]:
        """(log, segment number, start position, end position, is_tail, range) per segment
        that holds offsets of ``r``."""
        out: list[tuple] = []
        segments = log.segments
        for i, seg in enumerate(segments):
            is_last = i == len(segments) - 1
            next_base = None if is_last else segments[i + 1].base_offset
            if seg.base_offset >= r.until_offset:
                break
            if next_base is not None and next_base <= r.from_offset:
                continue
            try:
                self._segment_range(log, i, r, out)
            except FileNotFoundError as e:
                # Retention or the cleaner removed the segment between listing and planning.
                _vanished(log.topic_partition, e, fail_on_data_loss)
        return out

    def _segment_range(self, log: PartitionLog, i: int, r: OffsetRange, out: list) -> None:
        """Append the byte range of segment ``i`` that holds the offsets of ``r`` to ``out``."""
        segments = log.segments
        seg = segments[i]
        is_last = i == len(segments) - 1
        next_base = None if is_last else segments[i + 1].base_offset
        size = log.end_position if is_last else os.path.getsize(seg.log_file)
        if size == 0:
            return
        records = _open_read_only(seg.log_file)
        index = _SegmentIndex(seg, size)
        try:
            start = 0
            if r.from_offset > seg.base_offset:
                _, start = index.floor(r.from_offset)
                header = _batch_header_at(records, start) if start else None
                if start and (header is None or header[0] > r.from_offset):
                    logger.warning("Offset index %s points to no batch of offset %d at %d; "
                                   "reading its segment from the start", seg.index_file, r.from_offset, start)
                    start = 0
            end = size
            if next_base is None or r.until_offset < next_base:
                bound = index.end_position_for(r.until_offset)
                if bound is not None and start < bound < size:
                    header = _batch_header_at(records, bound)
                    if header is not None and header[0] >= r.until_offset:
                        end = bound
                    else:
                        logger.warning("Offset index %s points to no batch past offset %d at %d; "
                                       "reading to the end of its segment", seg.index_file,
                                       r.until_offset - 1, bound)
            if start < end:
                out.append((log, i, start, end, is_last and end == size, r))
        finally:
            index.close()
            records.close_handlers()

    def _split(self, log: PartitionLog, seg_index: int, start: int, end: int, is_tail: bool,
               r: OffsetRange, max_bytes: int, aborted: tuple = ()) -> list[SegmentSlice]:
        seg = log.segments[seg_index]
        tp = log.topic_partition

        def make(a: int, b: int, tail: bool) -> SegmentSlice:
            return SegmentSlice(tp.topic, tp.partition, seg.log_file, a, b, r.from_offset, r.until_offset, tail,
                                aborted)

        if end - start <= max_bytes:
            return [make(start, end, is_tail)]
        cuts = [start]
        records = _open_read_only(seg.log_file)
        index = _SegmentIndex(seg, end)
        try:
            if index.valid == 0:
                logger.info("%s has no offset index entries to cut it at; it is read as one slice", seg.log_file)
            while index.valid and end - cuts[-1] > max_bytes:
                cut = index.last_position_at_most(cuts[-1] + max_bytes)
                if cut is None or cut <= cuts[-1]:
                    cut = index.first_position_above(cuts[-1])
                if cut is None or cut >= end:
                    break
                if _batch_header_at(records, cut) is None:
                    logger.warning("Offset index %s points to no batch at %d; not cutting there", seg.index_file, cut)
                    break
                cuts.append(cut)
        finally:
            index.close()
            records.close_handlers()
        cuts.append(end)
        return [make(a, b, is_tail and b == end) for a, b in zip(cuts, cuts[1:])]


def _explicit(spec: OffsetSpec, tp: TopicPartition) -> Optional[int]:
    """The offset ``spec`` names for ``tp``, when it names a real one (not -2 / -1)."""
    if isinstance(spec, dict):
        value = spec.get(tp)
        if value is not None and value >= 0:
            return value
    return None


def set_committed_end(log: PartitionLog, replicas: Sequence[PartitionLog]) -> None:
    """``log.high_watermark``: the highest high watermark any of ``replicas`` checkpointed,
    cut to what ``log`` holds."""
    hw = highest_checkpointed_high_watermark(replicas)
    if hw is None:
        logger.warning("No high watermark for %s in %s: nothing of it counts as committed",
                       log.topic_partition, os.path.join(log.log_dir, REPLICATION_OFFSET_CHECKPOINT))
        hw = log.log_start_offset
    log.high_watermark = max(log.log_start_offset, min(hw, log.log_end_offset))


def _vanished(tp: TopicPartition, error: OSError, fail_on_data_loss: bool) -> None:
    message = (f"Files of {tp} disappeared while the read was planned ({error.filename}): the topic "
               f"was deleted or retention removed segments")
    if fail_on_data_loss:
        raise KafkaLogDataLossException(
            message + ". Some data may have been lost; set the option failOnDataLoss to false to "
            "read the rest.")
    logger.warning("%s; not reading %s (failOnDataLoss=false)", message, tp)


def plan_read(options: KafkaLogOptions) -> list[SegmentSlice]:
    """The slices of a read of ``options`` (LogDirPlanner.plan over its paths)."""
    return LogDirPlanner(options.paths).plan(options)
