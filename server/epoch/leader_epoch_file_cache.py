"""Port of core/src/main/scala/kafka/server/epoch/LeaderEpochFileCache.scala.

The cache maps each leader epoch to the first offset written in it. Entries
are kept strictly increasing in both epoch and start offset; any assignment
that would break that drops the conflicting newer entries first (they can
only describe data that has since been truncated). Every change is written
through to the partition's leader-epoch-checkpoint file.
"""
from __future__ import annotations

import bisect
import contextlib
import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.requests import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
from kafka_py.core.utils.logging import IdentLogger

if TYPE_CHECKING:
    from kafka_py.server.checkpoints.leader_epoch_checkpoint_file import LeaderEpochCheckpoint

logger = logging.getLogger(__name__)

# Per thread: the caches whose checkpoint a deferred_flushes() block still has to write.
_deferred = threading.local()



@dataclass(frozen=True, slots=True)
class EpochEntry:
    """The first offset (``start_offset``) written under leader ``epoch``."""

    epoch: int
    start_offset: int

    def __str__(self) -> str:
        return f"EpochEntry(epoch={self.epoch}, startOffset={self.start_offset})"


class LeaderEpochFileCache:
    """Leader epoch -> start offset entries of one replica, backed by a checkpoint.

    ``log_end_offset`` answers the end offset of the latest epoch. One
    re-entrant lock guards the entries and the checkpoint write, so the file
    always matches some state the cache was in.
    """

    def __init__(
        self,
        topic_partition: TopicPartition,
        log_end_offset: Callable[[], int],
        checkpoint: "LeaderEpochCheckpoint",
    ):
        self.topic_partition = topic_partition
        self._log_end_offset = log_end_offset
        self._checkpoint = checkpoint
        self._lock = threading.RLock()
        # Sorted by epoch; because start offsets are kept monotonic too, also by offset.
        self._entries: list[EpochEntry] = []
        # A change not yet in the checkpoint file (see deferred_flushes)
        self._flush_pending = False
        # A truncation made while the log was loading and not yet written (see truncate_from_end)
        self._truncation_unwritten = False
        self.logger = IdentLogger(logger, f"[LeaderEpochCache {topic_partition}] ")
        with self._lock:
            read = checkpoint.read()
            for entry in read:
                self._assign(entry)
            # What the file holds: a write of the same entries is skipped (a broker restarted
            # with an unchanged leader epoch writes nothing, where it rewrote every partition's file).
            self._on_disk: tuple[EpochEntry, ...] | None = tuple(read)

    # -- updates ---------------------------------------------------------------

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset``; flushes when the cache changes."""
        entry = EpochEntry(epoch, start_offset)
        with self._lock:
            if self._assign(entry):
                self.logger.debug(
                    "Appended new epoch entry %s. Cache now contains %d entries.",
                    entry, len(self._entries),
                )
                self._flush()

    def _assign(self, entry: EpochEntry) -> bool:
        if entry.epoch < 0 or entry.start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry {entry}")
        latest = self._entries[-1] if self._entries else None
        # Re-assigning the latest epoch at the same or a later offset changes
        # nothing: the epoch's first offset is fixed once assigned.
        if latest is not None and entry.epoch == latest.epoch and entry.start_offset >= latest.start_offset:
            return False
        self._maybe_truncate_non_monotonic_entries(entry)
        self._entries.append(entry)
        return True

    def _maybe_truncate_non_monotonic_entries(self, new_entry: EpochEntry) -> None:
        removed = self._remove_from_end(
            lambda e: e.epoch >= new_entry.epoch or e.start_offset >= new_entry.start_offset
        )
        # A single removed entry at the same start offset means the epoch was
        # bumped before anything was written in it: expected, not worth a warning.
        if len(removed) > 1 or (removed and removed[0].start_offset != new_entry.start_offset):
            self.logger.warning(
                "New epoch entry %s caused truncation of conflicting entries %s. "
                "Cache now contains %d entries.",
                new_entry, [str(e) for e in removed], len(self._entries),
            )

    def _remove_from_end(self, predicate: Callable[[EpochEntry], bool]) -> list[EpochEntry]:
        removed: list[EpochEntry] = []
        while self._entries and predicate(self._entries[-1]):
            removed.append(self._entries.pop())
        return removed

    def _remove_from_start(self, predicate: Callable[[EpochEntry], bool]) -> list[EpochEntry]:
        count = 0
        while count < len(self._entries) and predicate(self._entries[count]):
            count += 1
        removed = self._entries[:count]
        del self._entries[:count]
        return removed

    def truncate_from_end(self, end_offset: int, write: bool = True) -> None:
        """Drop every entry whose start offset is >= ``end_offset``.

        ``write=False`` is for the truncations a log makes while it loads (Log's constructor):
        the file keeps the dropped entries for now, and the next of these writes the cache:
        any later change of it, Log.flush before it moves the recovery point, and the first
        append (write_unwritten_truncation). Until one of them, a restart finds the same
        entries at or past the same end and drops them again. The empty partitions of a broker
        restarted with an unchanged leader epoch never write: their epoch is dropped here (it
        starts at their end) and assigned again, at the same offset, by the LeaderAndIsr that
        follows, leaving the file as it was; Kafka writes it twice.
        """
        with self._lock:
            if end_offset >= 0 and self._entries and self._entries[-1].start_offset >= end_offset:
                removed = self._remove_from_end(lambda e: e.start_offset >= end_offset)
                self._flush(write)
                self.logger.debug(
                    "Cleared entries %s from epoch cache after truncating to end offset %d, "
                    "leaving %d entries in the cache.",
                    [str(e) for e in removed], end_offset, len(self._entries),
                )

    def truncate_from_start(self, start_offset: int, write: bool = True) -> None:
        """Drop entries wholly before ``start_offset``, keeping the epoch that covers it.

        The last entry starting at or before ``start_offset`` is kept with its
        start moved up to ``start_offset``, so the epoch of the new first
        offset stays known; an entry starting exactly at ``start_offset`` is
        therefore retained unchanged. ``write`` as for truncate_from_end.
        """
        with self._lock:
            removed = self._remove_from_start(lambda e: e.start_offset <= start_offset)
            if removed:
                updated_first = EpochEntry(removed[-1].epoch, start_offset)
                self._entries.insert(0, updated_first)
                self._flush(write)
                self.logger.debug(
                    "Cleared entries %s and rewrote first entry %s after truncating to start "
                    "offset %d, leaving %d in the cache.",
                    [str(e) for e in removed], updated_first, start_offset,
                    len(self._entries),
                )

    def clear_and_flush(self) -> None:
        with self._lock:
            self._entries.clear()
            self._flush()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _flush(self, write: bool = True) -> None:
        if not write:
            self._truncation_unwritten = True
            return
        caches = getattr(_deferred, "caches", None)
        if caches is not None:
            # inside deferred_flushes() on this thread: written with the others at its end
            self._flush_pending = True
            caches[id(self)] = self
            return
        self._write()

    def _write(self) -> None:
        """Write the entries, unless the file holds them already (under the lock)."""
        entries = tuple(self._entries)
        if entries != self._on_disk:
            self._on_disk = None
            self._checkpoint.write(list(entries))
            self._on_disk = entries
        self._written()

    def _written(self) -> None:
        self._flush_pending = False
        self._truncation_unwritten = False

    def flush_pending(self) -> None:
        """Write a change still waiting in a deferred_flushes() block of another thread, or
        a truncation made while loading, now. Log.flush calls it before advancing the
        recovery point: a recovery point is never durable past data whose epoch is not
        (recovery would not assign it again)."""
        if self._flush_pending or self._truncation_unwritten:
            with self._lock:
                if self._flush_pending or self._truncation_unwritten:
                    self._write()

    def write_unwritten_truncation(self) -> None:
        """Before the log's first append after loading: the file must not keep entries that
        start at or past the end the records now go to (after a crash they would claim
        those records for an epoch they do not belong to)."""
        if self._truncation_unwritten:
            with self._lock:
                if self._truncation_unwritten:
                    self._write()

    # -- queries ---------------------------------------------------------------

    @property
    def non_empty(self) -> bool:
        with self._lock:
            return bool(self._entries)

    @property
    def latest_entry(self) -> EpochEntry | None:
        with self._lock:
            return self._entries[-1] if self._entries else None

    @property
    def latest_epoch(self) -> int | None:
        """The epoch of the newest entry, or None for an empty cache."""
        entry = self.latest_entry
        return None if entry is None else entry.epoch

    @property
    def previous_epoch(self) -> int | None:
        """The epoch of the entry before the newest one, if any."""
        with self._lock:
            return self._entries[-2].epoch if len(self._entries) >= 2 else None

    @property
    def earliest_entry(self) -> EpochEntry | None:
        with self._lock:
            return self._entries[0] if self._entries else None

    @property
    def epoch_entries(self) -> list[EpochEntry]:
        with self._lock:
            return list(self._entries)

    def end_offset_for(self, requested_epoch: int) -> tuple[int, int]:
        """(epoch, end offset) for an OffsetsForLeaderEpoch request.

        The epoch answered is the largest known epoch <= ``requested_epoch``
        and the end offset is the start offset of the next known epoch, or the
        log end offset when the latest epoch is asked for. An epoch older than
        every entry answers the requested epoch with the first entry's start
        offset (the older data is gone, so the follower should start there).
        ``UNDEFINED_EPOCH`` or an epoch beyond the latest answers
        ``(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)``.
        """
        with self._lock:
            if requested_epoch == UNDEFINED_EPOCH:
                # A bootstrapping follower, or one on a message format without leader epochs.
                result = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
            elif self._entries and self._entries[-1].epoch == requested_epoch:
                # Still being written to, so it ends at the log end offset.
                result = (requested_epoch, self._log_end_offset())
            else:
                epochs = [e.epoch for e in self._entries]
                higher_index = bisect.bisect_right(epochs, requested_epoch)
                if higher_index == len(epochs):
                    result = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
                elif higher_index == 0:
                    result = (requested_epoch, self._entries[0].start_offset)
                else:
                    floor_entry = self._entries[higher_index - 1]
                    result = (floor_entry.epoch, self._entries[higher_index].start_offset)
            self.logger.debug(
                "Processed end offset request for epoch %d and returning epoch %d with end "
                "offset %d from epoch cache of size %d",
                requested_epoch, result[0], result[1], len(self._entries),
            )
            return result

    def __repr__(self) -> str:
        return f"LeaderEpochFileCache({self.topic_partition}, {self.epoch_entries})"


@contextlib.contextmanager
def deferred_flushes():
    """Within the block, checkpoint writes of the caches this thread changes wait for its end,
    where they are written together (write_checkpoints_together) before it returns.

    A LeaderAndIsr making thousands of partitions leaders changes as many caches, each of
    which Kafka writes and fsyncs on the spot. Here the request's changes become durable
    together at the end of its handling, before it is answered; until then
    LeaderEpochFileCache.flush_pending (Log.flush) writes a cache's change itself, so no
    recovery point passes data whose epoch is not durable. Nested blocks join the outer one.
    """
    if getattr(_deferred, "caches", None) is not None:
        yield
        return
    _deferred.caches = {}
    try:
        yield
    finally:
        caches = list(_deferred.caches.values())
        _deferred.caches = None
        try:
            _flush_together(caches)
        except Exception:  # noqa: BLE001 - as a failed flush in Kafka's makeLeaders: the log dir
            # failure channel has taken the directory offline; caches left pending retry on Log.flush
            logger.error("Error while writing %d leader epoch checkpoints", len(caches), exc_info=True)


def _flush_together(caches: list["LeaderEpochFileCache"]) -> None:
    from kafka_py.server.checkpoints.checkpoint_file import CheckpointFile, write_checkpoints_together

    if not caches:
        return
    # Every cache's lock for the write: no change can come between a snapshot and its file.
    held = []
    try:
        for cache in caches:
            cache._lock.acquire()
            held.append(cache)
        together = []
        for cache in caches:
            if not cache._flush_pending:
                continue
            file = getattr(cache._checkpoint, "checkpoint", None)
            entries = tuple(cache._entries)
            if entries == cache._on_disk:
                cache._written()
            elif isinstance(file, CheckpointFile):
                together.append((cache, file, file.encode(entries), entries))
                cache._on_disk = None
            else:
                cache._write()
        write_checkpoints_together([(file, data) for _, file, data, _ in together])
        for cache, _, _, entries in together:
            cache._on_disk = entries
            cache._written()
    finally:
        for cache in held:
            cache._lock.release()
