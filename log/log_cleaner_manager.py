"""Port of core/src/main/scala/kafka/log/LogCleanerManager.scala.

Bookkeeping for the log cleaner, shared by its threads under one lock:

* the ``cleaner-offset-checkpoint`` file of each log directory, holding for
  every compacted partition the first offset not yet cleaned (the start of the
  "dirty" section);
* the cleaning state of each partition: absent (idle), in progress, aborted
  (a truncation or deletion wants it to stop), or paused N times;
* which log to clean next: the compacted log whose cleanable ("dirty") bytes
  make up the largest share of it, provided that share exceeds the topic's
  ``min.cleanable.dirty.ratio`` or ``max.compaction.lag.ms`` demands a clean;
* partitions that failed with an unexpected error, which are left alone.

State transitions (as Kafka's)::

    None -> InProgress -> None                      (a clean or deletion run)
    InProgress -> Aborted -> Paused(1)              (abort_and_pause_cleaning while running)
    None -> Paused(1) -> ... Paused(n) -> ... None  (pause / resume, counted)

``LogToClean`` lives here (Kafka keeps it in LogCleaner.scala) so that the
manager and the cleaner can both use it without importing each other.
"""
from __future__ import annotations

import functools
import logging
import os
import threading
from dataclasses import dataclass
from time import monotonic as _monotonic
from typing import Dict, Iterable, List, Mapping, Optional, Set, Tuple

from kafka_py.clients.common.errors import KafkaException, KafkaStorageException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log import Log
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

__all__ = [
    "LogCleanerManager", "LogToClean", "OffsetsToClean", "PreCleanStats", "LogCleaningState",
    "LogCleaningInProgress", "LogCleaningAborted", "LogCleaningPaused", "LogCleaningException",
    "LogCleaningAbortedException", "CLEANER_OFFSET_CHECKPOINT_FILE",
]

CLEANER_OFFSET_CHECKPOINT_FILE = "cleaner-offset-checkpoint"


class LogCleaningAbortedException(KafkaException):
    """Kafka's kafka.common.LogCleaningAbortedException: a clean stopped because its partition was aborted."""


class LogCleaningException(KafkaException):
    """An unexpected failure while cleaning ``log``; the cleaner marks its partition uncleanable."""

    def __init__(self, log, message: str, cause: Optional[BaseException] = None):
        super().__init__(message)
        self.log = log
        self.__cause__ = cause


class LogCleaningState:
    """Base of the cleaning states."""


class _InProgress(LogCleaningState):
    def __repr__(self) -> str:
        return "LogCleaningInProgress"


class _Aborted(LogCleaningState):
    def __repr__(self) -> str:
        return "LogCleaningAborted"


LogCleaningInProgress = _InProgress()
LogCleaningAborted = _Aborted()


@dataclass(frozen=True)
class LogCleaningPaused(LogCleaningState):
    paused_count: int


@dataclass(frozen=True)
class OffsetsToClean:
    """The cleanable range [first_dirty_offset, first_uncleanable_dirty_offset) of a log.

    ``force_update_checkpoint`` means the checkpointed offset was invalid and should be
    replaced by ``first_dirty_offset``.
    """

    first_dirty_offset: int
    first_uncleanable_dirty_offset: int
    force_update_checkpoint: bool = False


class PreCleanStats:
    """What the selection of a log to clean saw (Kafka's PreCleanStats)."""

    def __init__(self) -> None:
        self.max_compaction_delay_ms = 0
        self.delayed_partitions = 0
        self.cleanable_partitions = 0

    def update_max_compaction_delay(self, delay_ms: int) -> None:
        self.max_compaction_delay_ms = max(self.max_compaction_delay_ms, delay_ms)
        if delay_ms > 0:
            self.delayed_partitions += 1

    def record_cleanable_partitions(self, num_of_cleanables: int) -> None:
        self.cleanable_partitions = num_of_cleanables


class LogToClean:
    """A candidate for cleaning with its byte counts; ordered by ``cleanable_ratio``."""

    def __init__(self, topic_partition: TopicPartition, log, first_dirty_offset: int, uncleanable_offset: int,
                 need_compaction_now: bool = False):
        self.topic_partition = topic_partition
        self.log = log
        self.first_dirty_offset = first_dirty_offset
        self.uncleanable_offset = uncleanable_offset
        self.need_compaction_now = need_compaction_now
        self.clean_bytes = sum(s.size for s in log.log_segments_range(-1, first_dirty_offset))
        self.first_uncleanable_offset, self.cleanable_bytes = LogCleanerManager.calculate_cleanable_bytes(
            log, first_dirty_offset, uncleanable_offset)
        self.total_bytes = self.clean_bytes + self.cleanable_bytes
        self.cleanable_ratio = self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0

    def __lt__(self, other: "LogToClean") -> bool:
        return self.cleanable_ratio < other.cleanable_ratio

    def __repr__(self) -> str:
        return (f"LogToClean({self.topic_partition}, firstDirtyOffset={self.first_dirty_offset}, "
                f"firstUncleanableOffset={self.first_uncleanable_offset}, cleanableRatio={self.cleanable_ratio:.3f})")


class LogCleanerManager(KafkaMetricsGroup):
    """Cleaning state of every partition and the cleaner checkpoints of every log directory.

    ``logs`` is the LogManager's live mapping TopicPartition -> Log (read, never modified here).

    Gauges ``kafka.log:type=LogCleanerManager``: uncleanable-partitions-count and
    uncleanable-bytes per ``logDirectory``, max-dirty-percent (the dirtiest compacted log's
    cleanable ratio at the last selection), time-since-last-run-ms; ``remove_metrics`` at
    the cleaner's shutdown.
    """

    metrics_group = "kafka.log"
    metrics_type_name = "LogCleanerManager"

    offset_checkpoint_file = CLEANER_OFFSET_CHECKPOINT_FILE

    def __init__(self, log_dirs: Iterable[str], logs: Mapping[TopicPartition, Log],
                 log_dir_failure_channel=None):
        # imported here: kafka_py.server depends on kafka_py.log, not the other way round at import time
        from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile

        self.log_dirs: List[str] = [os.path.abspath(os.fspath(d)) for d in log_dirs]
        self.logs = logs
        self.log_dir_failure_channel = log_dir_failure_channel
        self._checkpoints: Dict[str, OffsetCheckpointFile] = {
            d: OffsetCheckpointFile(os.path.join(d, CLEANER_OFFSET_CHECKPOINT_FILE), log_dir_failure_channel)
            for d in self.log_dirs}
        self._in_progress: Dict[TopicPartition, LogCleaningState] = {}
        self._uncleanable_partitions: Dict[str, Set[TopicPartition]] = {}
        self._lock = threading.RLock()
        self._paused_cleaning_cond = threading.Condition(self._lock)
        # notified whenever a checkpoint file is rewritten
        self._checkpoint_cond = threading.Condition(self._lock)
        self.dirtiest_log_cleanable_ratio = 0.0
        self.time_of_last_run = 0
        self._gauges: list = []
        for d in self.log_dirs:
            tags = {"logDirectory": d}
            self._gauges.append(("uncleanable-partitions-count", tags, self.replace_gauge(
                "uncleanable-partitions-count", functools.partial(self._uncleanable_partitions_count, d), tags)))
            self._gauges.append(("uncleanable-bytes", tags, self.replace_gauge(
                "uncleanable-bytes", functools.partial(self._uncleanable_bytes, d), tags)))
        self._gauges.append(("max-dirty-percent", None, self.replace_gauge(
            "max-dirty-percent", lambda: int(100 * self.dirtiest_log_cleanable_ratio))))
        self._gauges.append(("time-since-last-run-ms", None, self.replace_gauge(
            "time-since-last-run-ms", lambda: Time.SYSTEM.milliseconds() - self.time_of_last_run)))

    def _uncleanable_partitions_count(self, log_dir: str) -> int:
        return len(self.uncleanable_partitions(log_dir))

    def _uncleanable_bytes(self, log_dir: str) -> int:
        """The cleanable bytes of this directory's partitions the cleaner gave up on."""
        with self._lock:
            partitions = self._uncleanable_partitions.get(log_dir)
            if not partitions:
                return 0
            last_clean = self.all_cleaner_checkpoints()
            now = Time.SYSTEM.milliseconds()
            total = 0
            for tp in list(partitions):
                log = self.logs.get(tp)
                if log is None:
                    continue
                try:
                    offsets = self.cleanable_offsets(log, last_clean.get(tp), now)
                    total += self.calculate_cleanable_bytes(log, offsets.first_dirty_offset,
                                                            offsets.first_uncleanable_dirty_offset)[1]
                except Exception:  # noqa: BLE001 - a gauge: a log gone offline counts as nothing
                    continue
            return total

    def remove_metrics(self) -> None:
        for name, tags, gauge in self._gauges:
            self.remove_metric_if_same(name, gauge, tags)
        self._gauges = []

    def _logs_snapshot(self) -> List[Tuple[TopicPartition, Log]]:
        # the LogManager adds and removes logs from other threads; copy before iterating
        return list(self.logs.items())

    # ------------------------------------------------------------------ checkpoints

    def all_cleaner_checkpoints(self) -> Dict[TopicPartition, int]:
        """The first dirty offset of every partition with a checkpoint, across all directories."""
        with self._lock:
            result: Dict[TopicPartition, int] = {}
            for checkpoint in list(self._checkpoints.values()):
                try:
                    result.update(checkpoint.read())
                except KafkaStorageException as e:
                    logger.error("Failed to access checkpoint file %s in dir %s: %s",
                                 os.path.basename(checkpoint.file), os.path.dirname(checkpoint.file), e)
            return result

    def update_checkpoints(self, data_dir: str, partition_to_update_or_add: Optional[Tuple[TopicPartition, int]] = None,
                           partition_to_remove: Optional[TopicPartition] = None) -> None:
        """Rewrite ``data_dir``'s checkpoint, dropping partitions that no longer have a log."""
        with self._lock:
            checkpoint = self._checkpoints.get(os.path.abspath(data_dir))
            if checkpoint is None:
                return
            try:
                live = set(tp for tp, _ in self._logs_snapshot())
                updated = {tp: offset for tp, offset in checkpoint.read().items() if tp in live}
                if partition_to_remove is not None:
                    updated.pop(partition_to_remove, None)
                if partition_to_update_or_add is not None:
                    tp, offset = partition_to_update_or_add
                    updated[tp] = offset
                checkpoint.write(updated)
                self._checkpoint_cond.notify_all()
            except KafkaStorageException as e:
                logger.error("Failed to access checkpoint file %s in dir %s: %s",
                             os.path.basename(checkpoint.file), os.path.dirname(checkpoint.file), e)

    def await_checkpoint(self, topic_partition: TopicPartition, offset: int, max_wait_ms: int) -> bool:
        """Wait up to ``max_wait_ms`` for the partition's checkpoint to reach ``offset``; True if it did."""
        deadline = _monotonic() + max_wait_ms / 1000.0
        with self._lock:
            while True:
                if self.all_cleaner_checkpoints().get(topic_partition, -1) >= offset:
                    return True
                remaining = deadline - _monotonic()
                if remaining <= 0:
                    return False
                self._checkpoint_cond.wait(remaining)

    def alter_checkpoint_dir(self, topic_partition: TopicPartition, source_log_dir: str, dest_log_dir: str) -> None:
        """Move a partition's checkpoint entry (and uncleanable mark) when its log changes directory."""
        source_log_dir = os.path.abspath(source_log_dir)
        dest_log_dir = os.path.abspath(dest_log_dir)
        with self._lock:
            try:
                checkpoint = self._checkpoints.get(source_log_dir)
                offset = checkpoint.read().get(topic_partition) if checkpoint is not None else None
                if offset is not None:
                    logger.debug("Removing the partition offset data in checkpoint file for '%s' from %s directory.",
                                 topic_partition, source_log_dir)
                    self.update_checkpoints(source_log_dir, partition_to_remove=topic_partition)
                    logger.debug("Adding the partition offset data in checkpoint file for '%s' to %s directory.",
                                 topic_partition, dest_log_dir)
                    self.update_checkpoints(dest_log_dir, partition_to_update_or_add=(topic_partition, offset))
            except KafkaStorageException as e:
                logger.error("Failed to access checkpoint file in dir %s: %s", source_log_dir, e)
            source_uncleanable = self._uncleanable_partitions.get(source_log_dir, set())
            if topic_partition in source_uncleanable:
                source_uncleanable.discard(topic_partition)
                self.mark_partition_uncleanable(dest_log_dir, topic_partition)

    def handle_log_dir_failure(self, dir: str) -> None:
        logger.warning("Stopping cleaning logs in dir %s", dir)
        with self._lock:
            self._checkpoints = {d: c for d, c in self._checkpoints.items() if d != os.path.abspath(dir)}

    def maybe_truncate_checkpoint(self, data_dir: str, topic_partition: TopicPartition, offset: int) -> None:
        """Lower the partition's checkpoint to ``offset`` if it is beyond it (the log was truncated)."""
        with self._lock:
            log = self.logs.get(topic_partition)
            if log is None or not log.config.compact:
                return
            checkpoint = self._checkpoints.get(os.path.abspath(data_dir))
            if checkpoint is None:
                return
            existing = checkpoint.read()
            if existing.get(topic_partition, 0) > offset:
                existing[topic_partition] = offset
                checkpoint.write(existing)

    # ------------------------------------------------------------------ choosing a log

    def grab_filthiest_compacted_log(self, time, pre_clean_stats: Optional[PreCleanStats] = None
                                     ) -> Optional[LogToClean]:
        """Pick the compacted log most in need of cleaning and mark it in progress; None if none qualifies."""
        if pre_clean_stats is None:
            pre_clean_stats = PreCleanStats()
        with self._lock:
            now = time.milliseconds()
            self.time_of_last_run = now
            last_clean = self.all_cleaner_checkpoints()
            dirty_logs: List[LogToClean] = []
            for topic_partition, log in self._logs_snapshot():
                if not log.config.compact:
                    continue
                if topic_partition in self._in_progress or self._is_uncleanable_partition(log, topic_partition):
                    continue
                try:
                    offsets_to_clean = self.cleanable_offsets(log, last_clean.get(topic_partition), now)
                    # an invalid checkpoint (truncation, corruption) is replaced now so it is not reported again
                    if offsets_to_clean.force_update_checkpoint:
                        self.update_checkpoints(log.parent_dir, partition_to_update_or_add=(
                            topic_partition, offsets_to_clean.first_dirty_offset))
                    compaction_delay_ms = self.max_compaction_delay(log, offsets_to_clean.first_dirty_offset, now)
                    pre_clean_stats.update_max_compaction_delay(compaction_delay_ms)
                    to_clean = LogToClean(topic_partition, log, offsets_to_clean.first_dirty_offset,
                                          offsets_to_clean.first_uncleanable_dirty_offset, compaction_delay_ms > 0)
                except Exception as e:  # noqa: BLE001 - reported against this log only
                    raise LogCleaningException(
                        log, f"Failed to calculate log cleaning stats for partition {topic_partition}", e) from e
                if to_clean.total_bytes > 0:
                    dirty_logs.append(to_clean)

            self.dirtiest_log_cleanable_ratio = max(dirty_logs).cleanable_ratio if dirty_logs else 0.0
            cleanable_logs = [
                ltc for ltc in dirty_logs
                if (ltc.need_compaction_now and ltc.cleanable_bytes > 0)
                or ltc.cleanable_ratio > ltc.log.config.min_cleanable_ratio]
            if not cleanable_logs:
                return None
            pre_clean_stats.record_cleanable_partitions(len(cleanable_logs))
            filthiest = max(cleanable_logs)
            self._in_progress[filthiest.topic_partition] = LogCleaningInProgress
            return filthiest

    def pause_cleaning_for_non_compacted_partitions(self) -> List[Tuple[TopicPartition, Log]]:
        """Pause the non-compacted logs not otherwise busy and return them, for the retention task.

        Holding them paused keeps a cleaner thread off a log whose policy changes to compact
        while retention is deleting its segments.
        """
        with self._lock:
            deletable = [(tp, log) for tp, log in self._logs_snapshot()
                         if not log.config.compact and tp not in self._in_progress]
            for tp, _ in deletable:
                self._in_progress[tp] = LogCleaningPaused(1)
            return deletable

    def deletable_logs(self) -> List[Tuple[TopicPartition, Log]]:
        """Compacted logs not otherwise busy, marked in progress for the cleaner thread's retention pass.

        Logs without the delete policy are included: they may still hold segments below the log
        start offset.
        """
        with self._lock:
            to_clean = [(tp, log) for tp, log in self._logs_snapshot()
                        if tp not in self._in_progress and log.config.compact
                        and not self._is_uncleanable_partition(log, tp)]
            for tp, _ in to_clean:
                self._in_progress[tp] = LogCleaningInProgress
            return to_clean

    # ------------------------------------------------------------------ abort, pause, resume

    def abort_cleaning(self, topic_partition: TopicPartition) -> None:
        """Stop a running clean of the partition (waiting for it), leaving it free to be cleaned again."""
        with self._lock:
            self.abort_and_pause_cleaning(topic_partition)
            self.resume_cleaning([topic_partition])

    def abort_and_pause_cleaning(self, topic_partition: TopicPartition) -> None:
        """Stop any running clean of the partition and keep it from being cleaned until resumed.

        Blocks until the cleaner thread has noticed the abort (doneCleaning moves it to paused).
        Pauses nest: each call needs its own ``resume_cleaning``.
        """
        with self._lock:
            state = self._in_progress.get(topic_partition)
            if state is None:
                self._in_progress[topic_partition] = LogCleaningPaused(1)
            elif state is LogCleaningInProgress:
                self._in_progress[topic_partition] = LogCleaningAborted
            elif isinstance(state, LogCleaningPaused):
                self._in_progress[topic_partition] = LogCleaningPaused(state.paused_count + 1)
            else:
                raise RuntimeError(f"Compaction for partition {topic_partition} cannot be aborted and paused since "
                                   f"it is in {state} state.")
            while not self._is_cleaning_in_state_paused(topic_partition):
                self._paused_cleaning_cond.wait(0.1)

    def resume_cleaning(self, topic_partitions: Iterable[TopicPartition]) -> None:
        """Undo one pause of each partition."""
        with self._lock:
            for topic_partition in topic_partitions:
                state = self._in_progress.get(topic_partition)
                if state is None:
                    raise RuntimeError(f"Compaction for partition {topic_partition} cannot be resumed since it is "
                                       "not paused.")
                if isinstance(state, LogCleaningPaused) and state.paused_count == 1:
                    del self._in_progress[topic_partition]
                elif isinstance(state, LogCleaningPaused) and state.paused_count > 1:
                    self._in_progress[topic_partition] = LogCleaningPaused(state.paused_count - 1)
                else:
                    raise RuntimeError(f"Compaction for partition {topic_partition} cannot be resumed since it is "
                                       f"in {state} state.")

    def _is_cleaning_in_state_paused(self, topic_partition: TopicPartition) -> bool:
        return isinstance(self._in_progress.get(topic_partition), LogCleaningPaused)

    def check_cleaning_aborted(self, topic_partition: TopicPartition) -> None:
        """Raise LogCleaningAbortedException if someone asked to abort the partition's clean."""
        with self._lock:
            if self._in_progress.get(topic_partition) is LogCleaningAborted:
                raise LogCleaningAbortedException()

    def cleaning_state(self, topic_partition: TopicPartition) -> Optional[LogCleaningState]:
        with self._lock:
            return self._in_progress.get(topic_partition)

    def set_cleaning_state(self, topic_partition: TopicPartition, state: LogCleaningState) -> None:
        with self._lock:
            self._in_progress[topic_partition] = state

    # ------------------------------------------------------------------ completion

    def done_cleaning(self, topic_partition: TopicPartition, data_dir: str, end_offset: int) -> None:
        """A clean finished (or stopped): checkpoint ``end_offset`` unless it was aborted."""
        with self._lock:
            state = self._in_progress.get(topic_partition)
            if state is LogCleaningInProgress:
                self.update_checkpoints(data_dir, partition_to_update_or_add=(topic_partition, end_offset))
                del self._in_progress[topic_partition]
            elif state is LogCleaningAborted:
                self._in_progress[topic_partition] = LogCleaningPaused(1)
                self._paused_cleaning_cond.notify_all()
            elif state is None:
                raise RuntimeError(f"State for partition {topic_partition} should exist.")
            else:
                raise RuntimeError(f"In-progress partition {topic_partition} cannot be in {state} state.")

    def done_deleting(self, topic_partitions: Iterable[TopicPartition]) -> None:
        with self._lock:
            for topic_partition in topic_partitions:
                state = self._in_progress.get(topic_partition)
                if state is LogCleaningInProgress:
                    del self._in_progress[topic_partition]
                elif state is LogCleaningAborted:
                    self._in_progress[topic_partition] = LogCleaningPaused(1)
                    self._paused_cleaning_cond.notify_all()
                elif state is None:
                    raise RuntimeError(f"State for partition {topic_partition} should exist.")
                else:
                    raise RuntimeError(f"In-progress partition {topic_partition} cannot be in {state} state.")

    # ------------------------------------------------------------------ uncleanable partitions

    def uncleanable_partitions(self, log_dir: str) -> Set[TopicPartition]:
        with self._lock:
            return set(self._uncleanable_partitions.get(os.path.abspath(log_dir), ()))

    def mark_partition_uncleanable(self, log_dir: str, partition: TopicPartition) -> None:
        with self._lock:
            self._uncleanable_partitions.setdefault(os.path.abspath(log_dir), set()).add(partition)

    def _is_uncleanable_partition(self, log, topic_partition: TopicPartition) -> bool:
        with self._lock:
            return topic_partition in self._uncleanable_partitions.get(log.parent_dir, ())

    # ------------------------------------------------------------------ Kafka's companion object

    @staticmethod
    def is_compact_and_delete(log) -> bool:
        return log.config.compact and log.config.delete

    @staticmethod
    def max_compaction_delay(log, first_dirty_offset: int, now: int) -> int:
        """How far past ``max.compaction.lag.ms`` the oldest dirty non-active segment is (0 if not past)."""
        dirty_non_active = log.non_active_log_segments_from(first_dirty_offset)
        first_batch_timestamps = [ts for ts in (s.get_first_batch_timestamp() for s in dirty_non_active) if ts > 0]
        earliest = min(first_batch_timestamps) if first_batch_timestamps else LONG_MAX
        clean_until_time = now - max(log.config.max_compaction_lag_ms, 0)
        return clean_until_time - earliest if earliest < clean_until_time else 0

    @staticmethod
    def cleanable_offsets(log, last_clean_offset: Optional[int], now: int) -> OffsetsToClean:
        """The range of the log that may be cleaned now.

        The dirty section starts at the checkpoint (or the log start offset when the
        checkpoint is missing or no longer inside the log). It ends before the first
        unstable offset (open transactions), before the active segment, and before the
        first segment holding records younger than ``min.compaction.lag.ms``.
        """
        log_start_offset = log.log_start_offset
        checkpoint_dirty_offset = log_start_offset if last_clean_offset is None else last_clean_offset
        if checkpoint_dirty_offset < log_start_offset:
            # with compact,delete retention moves the start past the checkpoint all the time
            if not LogCleanerManager.is_compact_and_delete(log):
                logger.warning("Resetting first dirty offset of %s to log start offset %d since the checkpointed "
                               "offset %d is invalid.", log.name, log_start_offset, checkpoint_dirty_offset)
            first_dirty_offset, force_update_checkpoint = log_start_offset, True
        elif checkpoint_dirty_offset > log.log_end_offset:
            # the end of the log was lost (corruption, unclean truncation): clean it all again
            logger.warning("The last checkpoint dirty offset for partition %s is %d, which is larger than the log "
                           "end offset %d. Resetting to the log start offset %d.", log.name, checkpoint_dirty_offset,
                           log.log_end_offset, log_start_offset)
            first_dirty_offset, force_update_checkpoint = log_start_offset, True
        else:
            first_dirty_offset, force_update_checkpoint = checkpoint_dirty_offset, False

        min_compaction_lag_ms = max(log.config.min_compaction_lag_ms, 0)
        candidates = [log.active_segment.base_offset]
        first_unstable_offset = log.first_unstable_offset
        if first_unstable_offset is not None:
            candidates.append(first_unstable_offset)
        if min_compaction_lag_ms > 0:
            for segment in log.non_active_log_segments_from(first_dirty_offset):
                is_uncleanable = segment.largest_timestamp > now - min_compaction_lag_ms
                logger.debug("Checking if log segment may be cleaned: log='%s' segment.baseOffset=%d "
                             "segment.largestTimestamp=%d; now - compactionLag=%d; is uncleanable=%s", log.name,
                             segment.base_offset, segment.largest_timestamp, now - min_compaction_lag_ms,
                             is_uncleanable)
                if is_uncleanable:
                    candidates.append(segment.base_offset)
                    break
        first_uncleanable_dirty_offset = min(candidates)
        logger.debug("Finding range of cleanable offsets for log=%s. Last clean offset=%s now=%d => "
                     "firstDirtyOffset=%d firstUncleanableOffset=%d activeSegment.baseOffset=%d", log.name,
                     last_clean_offset, now, first_dirty_offset, first_uncleanable_dirty_offset,
                     log.active_segment.base_offset)
        return OffsetsToClean(first_dirty_offset, max(first_dirty_offset, first_uncleanable_dirty_offset),
                              force_update_checkpoint)

    @staticmethod
    def calculate_cleanable_bytes(log, first_dirty_offset: int, uncleanable_offset: int) -> Tuple[int, int]:
        """(base offset of the first uncleanable segment, bytes of the segments between the dirty start and it)."""
        non_active = log.non_active_log_segments_from(uncleanable_offset)
        first_uncleanable_segment = non_active[0] if non_active else log.active_segment
        first_uncleanable_offset = first_uncleanable_segment.base_offset
        cleanable_bytes = sum(s.size for s in log.log_segments_range(min(first_dirty_offset, first_uncleanable_offset),
                                                                     first_uncleanable_offset))
        return first_uncleanable_offset, cleanable_bytes
