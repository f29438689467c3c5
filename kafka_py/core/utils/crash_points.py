"""Named points inside the broker's multi-step writes where a test can make the process die.

No Kafka counterpart. Kafka's recovery code (``Log.loadSegments`` and its swap completion,
``LogManager.loadLogs``, the checkpoint readers, the coordinators' loading of their logs)
exists for a process that stopped between two steps of a write: a segment rolled but not
flushed, a cleaned segment renamed ``.swap`` while the old ones still exist, a directory
renamed ``-delete`` before the checkpoints forget it. A kill -9 from outside lands at such
a step only by luck; a crash point lands there every time.

The environment variable ``KAFKA_PY_CRASH_POINT`` names one point, read when this module
is imported and again when a broker starts (``arm_from_environment``: a broker forked from a
process that had imported this module already, as the test launcher forks them, has an
environment of its own): ``log.roll.after_new_segment`` makes the first pass through that point
end the process, ``log.roll.after_new_segment@3`` the third. The process ends with
``os._exit(137)`` (what a shell reports for kill -9), after one line on stderr naming the
point, and without running anything else: no shutdown, no flush, no ``finally`` block, as
a SIGKILL. Unset, every point is a call that compares one module global with None and
returns; the points sit at the named steps of rare operations (a roll, a clean, a
checkpoint), never per record.

``POINTS`` lists every point with the recovery code a crash there exercises;
docs/operations.md ("Crash points") says the same for operators, and
tests/integration/test_crash_points.py crashes a broker at each.
"""
from __future__ import annotations

import os
import threading
from typing import Optional

ENV_VAR = "KAFKA_PY_CRASH_POINT"
# What a shell reports for a process killed by SIGKILL (128 + 9).
EXIT_CODE = 137

# name -> the recovery that a crash at the point leaves to the next start
POINTS: dict[str, str] = {
    "log.roll.after_producer_snapshot":
        "a producer snapshot at the new segment's base offset, no segment there yet: "
        "ProducerStateManager.remove_stray_snapshots keeps it only as the newest snapshot past every segment",
    "log.roll.after_new_segment":
        "an empty new active segment, the old one unflushed and its indexes untrimmed: Log._recover_log",
    "index.resize.after_file_truncate":
        "an index file cut to its entries (or grown) while its mapping still has the old length: "
        "LogSegment.sanity_check and, past the recovery point, LogSegment.recover",
    "log_segment.recover.after_index_reset":
        "a crash during recovery itself, the indexes of a segment emptied and the log not yet re-read: "
        "the next start recovers the same segment again",
    "cleaner.after_cleaned_segment_written":
        "a complete .cleaned segment beside the segments it replaces: "
        "Log._remove_temp_files_and_collect_swap_files deletes it",
    "log.replace_segments.after_swap_rename":
        "the cleaned segment renamed .swap, the old segments untouched: Log._complete_swap_operations",
    "log.replace_segments.after_old_segments_renamed":
        "the old segments renamed .deleted, the cleaned one still .swap: the .deleted files are removed and "
        "Log._complete_swap_operations renames the .swap",
    "log.delete_segment_files.after_rename":
        "segments renamed .deleted (retention, truncation or a swap) and not yet removed: "
        "Log._remove_temp_files_and_collect_swap_files",
    "producer_state.snapshot.before_rename":
        "a producer snapshot written to its .tmp file, not renamed: the .tmp file is removed at load",
    "checkpoint.recovery-point-offset-checkpoint.before_rename":
        "a checkpoint written to its .tmp file, not renamed over the old one: LogManager.load_logs reads the old",
    "checkpoint.log-start-offset-checkpoint.before_rename":
        "as above, for the log start offsets",
    "checkpoint.replication-offset-checkpoint.before_rename":
        "as above, for the high watermarks ReplicaManager reads at startup",
    "checkpoint.cleaner-offset-checkpoint.before_rename":
        "as above, for where the cleaner stopped: LogCleanerManager reads the old one and cleans again",
    "checkpoint.leader-epoch-checkpoint.before_rename":
        "as above, for a partition's leader epochs: LeaderEpochFileCache and Log recovery",
    "log_manager.async_delete.after_rename":
        "a log directory renamed -delete whose topic the checkpoints still list: LogManager.load_logs queues it "
        "for deletion and the controller resumes the topic's deletion",
    "log.delete.after_segments_deleted":
        "a -delete directory whose segments are gone and whose other files are not: LogManager.load_logs",
    "log_manager.replace_future.after_future_renamed":
        "a moved log renamed to the partition's name while the source directory still has it too: "
        "LogManager.load_logs finds the partition in two log dirs, keeps one copy and deletes the other",
    "log_manager.replace_future.after_source_renamed":
        "the source of a move renamed -delete before the checkpoints were rewritten: LogManager.load_logs",
    "group_metadata_manager.store_offsets.after_append":
        "offset commits appended to __consumer_offsets, the group's cache and the client not told: "
        "GroupMetadataManager loads the commits from the log",
    "transaction_state_manager.append.after_append":
        "a transaction state appended to __transaction_state, the coordinator's cache not updated: "
        "TransactionStateManager loads the state and completes or aborts the transaction",
    "controller.reassignment.after_adding_replicas":
        "a reassignment's full replica set written to ZooKeeper, no LeaderAndIsr sent: the next controller "
        "resumes it from the topic's znode",
    "controller.reassignment.after_leader_moved":
        "a reassignment's leader moved to a target replica, the removed replicas not yet stopped and the "
        "final assignment not written: the next controller completes it",
}


def _parse(value: Optional[str]) -> tuple[Optional[str], int]:
    if not value:
        return None, 0
    name, _, hit = value.partition("@")
    return name, int(hit) if hit else 1


_armed_name, _armed_hit = _parse(os.environ.get(ENV_VAR))
_hits = 0
_hits_lock = threading.Lock()


def arm_from_environment() -> None:
    """Arm the point ``KAFKA_PY_CRASH_POINT`` names now, with no pass through it counted yet."""
    global _armed_name, _armed_hit, _hits
    _armed_name, _armed_hit = _parse(os.environ.get(ENV_VAR))
    _hits = 0


def armed() -> bool:
    """Whether some point is armed in this process (to skip building a point's name)."""
    return _armed_name is not None


def crash_point(*name_parts: str) -> None:
    """End the process here when the armed point is this one (its parts joined with dots)."""
    global _hits
    if _armed_name is None:
        return
    name = ".".join(name_parts)
    if name != _armed_name:
        return
    with _hits_lock:
        _hits += 1
        hit = _hits
    if hit < _armed_hit:
        return
    # Straight to the descriptor: no buffer of this process survives os._exit.
    os.write(2, f"crash point {name} reached (hit {hit}): exiting with {EXIT_CODE}\n".encode())
    os._exit(EXIT_CODE)
