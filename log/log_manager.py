"""Port of core/src/main/scala/kafka/log/LogManager.scala.

The LogManager owns every partition log of the broker across its ``log.dirs``:
it locks each directory (``.lock``), loads all logs at startup (one thread pool
of ``num.recovery.threads.per.data.dir`` threads per directory, recovery only
after an unclean shutdown), creates and asynchronously deletes logs, and runs
the background tasks Kafka runs, under Kafka's names:

* ``kafka-log-retention``: delete segments past retention (``cleanup_logs``)
* ``kafka-log-flusher``: flush logs idle longer than ``flush.ms``
* ``kafka-recovery-point-checkpoint``: write ``recovery-point-offset-checkpoint``
* ``kafka-log-start-offset-checkpoint``: write ``log-start-offset-checkpoint``
* ``kafka-delete-logs``: remove directories renamed ``<tp>.<uuid>-delete``

A clean shutdown flushes and closes every log, writes both checkpoints and
then ``.kafka_cleanshutdown`` in each directory; startup deletes the marker as
soon as it has read it, so a crash during loading still counts as unclean.

With ``log.cleaner.enable`` (a CleanerConfig given to the constructor) the
LogManager starts the LogCleaner after loading and stops it first at shutdown.
As in Kafka, the retention task (``cleanup_logs``) then handles only logs
without ``compact`` in their cleanup.policy; retention of compacted logs
(``compact,delete``, and segments below the log start offset) runs in the
cleaner threads, so it never races a clean of the same log. Without a
cleaner, compacted logs get no retention at all, again as in Kafka.
Truncation and deletion of a log stop any clean of it first.

With several ``log.dirs``, a new log goes to the live dir holding the fewest logs (Kafka's
nextLogDirs), or to the dir AlterReplicaLogDirs named for it (``maybe_update_preferred_log_dir``).
A replica moving to another dir has a second, *future* log there (``<tp>.<uuid>-future``,
loaded again after a restart); ``replace_current_with_future_log`` swaps it in once it has
caught up, and the move keeps the partition's cleaning paused meanwhile
(``pause_cleaning_for_move``).

A log dir whose disk failed (``handle_log_dir_failure``, called by the ReplicaManager's
LogDirFailureHandler) loses its logs, checkpoints and lock, so that none of the tasks above
touch it again; when it was the last live dir the broker halts (Exit.halt), as in Kafka.
"""
from __future__ import annotations

import collections
import fcntl
import logging
import os
import resource
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Mapping, Optional

from kafka_py.clients.common.errors import KafkaException, KafkaStorageException, LogDirNotFoundException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log import log_files
from kafka_py.log.cleaner_config import CleanerConfig
from kafka_py.log.log import PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS, Log
from kafka_py.log.log_cleaner import LogCleaner
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_files import CLEAN_SHUTDOWN_FILE, DELETE_DIR_SUFFIX
from kafka_py.tuning import page_cache_prefaulter
from kafka_py.core.utils.atomic_integer import AtomicInteger
from kafka_py.core.utils.crash_points import crash_point
from kafka_py.core.utils.exit import Exit
from kafka_py.core.utils.java_limits import LONG_MAX
# The KRaft metadata partition (KafkaRaftServer.MetadataTopic) is the raft client's, never loaded here.
from kafka_py.core.raft.kafka_metadata_log import METADATA_TOPIC

if TYPE_CHECKING:
    from kafka_py.server.broker_topic_stats import BrokerTopicStats
    from kafka_py.server.kafka_config import KafkaConfig
    from kafka_py.server.log_dir_failure_channel import LogDirFailureChannel
    from kafka_py.core.utils.kafka_scheduler import Scheduler
    from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

RECOVERY_POINT_CHECKPOINT_FILE = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT_FILE = "log-start-offset-checkpoint"
LOCK_FILE = ".lock"
INITIAL_TASK_DELAY_MS = 30 * 1000
# Descriptors a serving broker needs besides its segments' .log files and what is already open
# when the logs are loaded: client, replication and controller connections, the files opened
# briefly to map an index or write a checkpoint.
OPEN_FILE_HEADROOM = 256
# Logs one loading job of a directory's thread pool loads in a row (see load_logs).
LOAD_CHUNK_LOGS = 256


class FileLock:
    """Kafka's kafka.utils.FileLock: an exclusive ``flock`` on a file, held for the process's life."""

    def __init__(self, file: str):
        self.file = file
        self._fd: Optional[int] = os.open(file, os.O_RDWR | os.O_CREAT, 0o644)

    def try_lock(self) -> bool:
        try:
            # (the descriptor is None only after destroy, and a destroyed lock is not tried again)
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # type: ignore[arg-type]
            return True
        except BlockingIOError:
            return False

    def unlock(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def destroy(self) -> None:
        if self._fd is not None:
            try:
                self.unlock()
            finally:
                os.close(self._fd)
                self._fd = None


class LogManager:
    """Creation, loading, retention, flushing and deletion of all the broker's logs."""

    def __init__(self, log_dirs: Iterable[str], initial_default_config: LogConfig, *,
                 initial_offline_dirs: Iterable[str] = (),
                 default_props: Optional[Mapping[str, object]] = None,
                 topic_config_overrides: Optional[Mapping[str, Mapping[str, object]]] = None,
                 recovery_threads_per_data_dir: int = 1,
                 flush_check_ms: int = LONG_MAX,
                 flush_recovery_offset_checkpoint_ms: int = 60000,
                 flush_start_offset_checkpoint_ms: int = 60000,
                 retention_check_ms: int = 300000,
                 max_pid_expiration_ms: int = 604800000,
                 scheduler: Optional[Scheduler] = None, time: Optional[Time] = None,
                 log_dir_failure_channel: Optional[LogDirFailureChannel] = None,
                 broker_topic_stats: Optional[BrokerTopicStats] = None,
                 initial_task_delay_ms: int = INITIAL_TASK_DELAY_MS,
                 cleaner_config: Optional[CleanerConfig] = None,
                 prefault_bytes: int = 0):
        """``default_props`` are the broker's log defaults as topic-config names (``segment.bytes`` ...),
        the base that per-topic overrides are applied to; ``topic_config_overrides`` maps topic -> overrides.
        ``cleaner_config`` is the broker's LogCleaner.cleaner_config(KafkaConfig); without one there is
        no cleaner. ``prefault_bytes`` (``log.prefault.bytes``, kafka-py's own) is how far ahead of a
        preallocated active segment's end the page cache may be filled; 0 turns that off.
        """
        from kafka_py.clients.common.utils.time import Time

        self.log_dirs: List[str] = [os.path.abspath(os.fspath(d)) for d in log_dirs]
        self._initial_offline_dirs = {os.path.abspath(os.fspath(d)) for d in initial_offline_dirs}
        self._current_default_config = initial_default_config
        self._default_props: Dict[str, object] = dict(default_props or {})
        self._topic_overrides: Dict[str, Dict[str, object]] = {
            t: dict(o) for t, o in (topic_config_overrides or {}).items()}
        self._num_recovery_threads_per_data_dir = recovery_threads_per_data_dir
        self.flush_check_ms = flush_check_ms
        self.flush_recovery_offset_checkpoint_ms = flush_recovery_offset_checkpoint_ms
        self.flush_start_offset_checkpoint_ms = flush_start_offset_checkpoint_ms
        self.retention_check_ms = retention_check_ms
        self.max_pid_expiration_ms = max_pid_expiration_ms
        self.scheduler = scheduler
        self.time = time if time is not None else Time.SYSTEM
        self.log_dir_failure_channel = log_dir_failure_channel
        self.broker_topic_stats = broker_topic_stats
        self.initial_task_delay_ms = initial_task_delay_ms
        self.cleaner_config = cleaner_config if cleaner_config is not None else CleanerConfig(enable_cleaner=False)
        self._cleaner: Optional[LogCleaner] = None
        self.page_cache_prefaulter = page_cache_prefaulter.make_prefaulter(prefault_bytes, self.time)  # tuning

        self._log_creation_or_deletion_lock = threading.RLock()
        self._current_logs: Dict[TopicPartition, Log] = {}
        self._future_logs: Dict[TopicPartition, Log] = {}
        # (log, time it was queued), oldest first
        self._logs_to_be_deleted: collections.deque = collections.deque()
        self._preferred_log_dirs: Dict[TopicPartition, str] = {}
        # partitions moving between log dirs, whose cleaning the move keeps paused
        self._cleaning_paused_for_move: set = set()
        self._live_log_dirs: List[str] = self._create_and_validate_log_dirs(self.log_dirs)
        self._dir_locks: List[FileLock] = self._lock_log_dirs(self._live_log_dirs)
        self._recovery_point_checkpoints = {d: self._offset_checkpoint(d, RECOVERY_POINT_CHECKPOINT_FILE)
                                            for d in self._live_log_dirs}
        self._log_start_offset_checkpoints = {d: self._offset_checkpoint(d, LOG_START_OFFSET_CHECKPOINT_FILE)
                                              for d in self._live_log_dirs}
        self._scheduled_tasks: list = []
        self._shut_down = False
        # while load_logs runs: each partition directory's ctime as loading found it
        self._dir_change_ns_before_load: Dict[str, int] = {}

    @classmethod
    def apply(cls, config: "KafkaConfig", initial_offline_dirs: list[str], scheduler: Scheduler, time: Time,
              log_dir_failure_channel: "LogDirFailureChannel") -> "LogManager":
        """Kafka's ``LogManager.apply``: the broker's LogManager from its KafkaConfig (both
        KafkaServer and BrokerServer build it this way)."""
        return cls(
            config.log_dirs, config.default_log_config(),
            initial_offline_dirs=initial_offline_dirs,
            default_props=config.log_config_defaults(),
            recovery_threads_per_data_dir=config.num_recovery_threads_per_data_dir,
            flush_check_ms=config.log_flush_scheduler_interval_ms,
            flush_recovery_offset_checkpoint_ms=config.log_flush_offset_checkpoint_interval_ms,
            flush_start_offset_checkpoint_ms=config.log_flush_start_offset_checkpoint_interval_ms,
            retention_check_ms=config.log_cleanup_interval_ms,
            initial_task_delay_ms=config.log_initial_task_delay_ms,
            max_pid_expiration_ms=config.transactional_id_expiration_ms,
            scheduler=scheduler, time=time,
            log_dir_failure_channel=log_dir_failure_channel,
            cleaner_config=LogCleaner.cleaner_config(config),
            prefault_bytes=config.log_prefault_bytes)

    def _offset_checkpoint(self, dir: str, name: str):
        # imported here: kafka_py.server depends on kafka_py.log, not the other way round at import time
        from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile

        return OffsetCheckpointFile(os.path.join(dir, name), self.log_dir_failure_channel)

    # ------------------------------------------------------------------ directories

    def _create_and_validate_log_dirs(self, dirs: List[str]) -> List[str]:
        live: List[str] = []
        canonical = set()
        for dir in dirs:
            try:
                if dir in self._initial_offline_dirs:
                    raise OSError(f"Failed to load {dir} during broker startup")
                if not os.path.exists(dir):
                    logger.info("Log directory %s not found, creating it.", dir)
                    os.makedirs(dir, exist_ok=True)
                if not os.path.isdir(dir) or not os.access(dir, os.R_OK):
                    raise OSError(f"{dir} is not a readable log directory.")
                real = os.path.realpath(dir)
                if real in canonical:
                    raise KafkaException(f"Duplicate log directory found: {', '.join(dirs)}")
                canonical.add(real)
                live.append(dir)
            except OSError as e:
                self._add_offline_dir(dir, f"Failed to create or validate data directory {dir}", e)
        if not live:
            raise KafkaException(f"Shutdown broker because none of the specified log dirs from "
                                 f"{', '.join(dirs)} can be created or validated")
        return live

    def _lock_log_dirs(self, dirs: List[str]) -> List[FileLock]:
        locks: List[FileLock] = []
        for dir in dirs:
            try:
                lock = FileLock(os.path.join(dir, LOCK_FILE))
                if not lock.try_lock():
                    lock.destroy()
                    for held in locks:
                        held.destroy()
                    raise KafkaException(f"Failed to acquire lock on file .lock in {dir}. A Kafka instance in "
                                         "another process or thread is using this directory.")
                locks.append(lock)
            except OSError as e:
                self._add_offline_dir(dir, f"Disk error while locking directory {dir}", e)
        return locks

    def _add_offline_dir(self, dir: str, msg: str, e: BaseException) -> None:
        if self.log_dir_failure_channel is not None:
            self.log_dir_failure_channel.maybe_add_offline_log_dir(dir, msg, e)
        else:
            logger.error("%s: %s", msg, e)

    @property
    def live_log_dirs(self) -> List[str]:
        return list(self._live_log_dirs)

    @property
    def offline_log_dirs(self) -> List[str]:
        live = set(self._live_log_dirs)
        return [d for d in self.log_dirs if d not in live]

    def is_log_dir_online(self, log_dir: str) -> bool:
        log_dir = os.path.abspath(log_dir)
        if log_dir not in self.log_dirs:
            raise LogDirNotFoundException(f"Log dir {log_dir} is not found in the config.")
        return log_dir in self._live_log_dirs

    def handle_log_dir_failure(self, dir: str) -> None:
        """Stop serving every log in ``dir`` (its disk failed)."""
        dir = os.path.abspath(dir)
        logger.warning("Stopping serving logs in dir %s", dir)
        with self._log_creation_or_deletion_lock:
            if dir in self._live_log_dirs:
                self._live_log_dirs.remove(dir)
            if not self._live_log_dirs:
                # nothing left to serve: Kafka halts here, and so does Exit's procedure (the
                # entry point's stops the broker in order first); it raises if it returns
                msg = f"Shutdown broker because all log dirs in {', '.join(self.log_dirs)} have failed"
                logger.critical("%s", msg)
                Exit.halt(1, msg)
            self._recovery_point_checkpoints.pop(dir, None)
            if self._cleaner is not None:
                self._cleaner.handle_log_dir_failure(dir)
            self._log_start_offset_checkpoints.pop(dir, None)
            offline = []
            for logs in (self._current_logs, self._future_logs):
                for tp, log in list(logs.items()):
                    if log.parent_dir == dir:
                        logs.pop(tp, None)
                        log.close_handlers()
                        offline.append(tp)
                        if logs is self._future_logs:
                            # the move into this dir is over
                            self._end_cleaning_pause_for_move(tp)
            logger.warning("Logs for partitions %s are offline due to failure on log directory %s",
                           ",".join(map(str, offline)), dir)
            for lock in [lk for lk in self._dir_locks if os.path.dirname(lk.file) == dir]:
                try:
                    lock.destroy()
                except OSError:
                    pass
                self._dir_locks.remove(lock)

    # ------------------------------------------------------------------ configs

    @property
    def current_default_config(self):
        return self._current_default_config

    def reconfigure_default_log_config(self, log_config, default_props: Optional[Mapping[str, object]] = None) -> None:
        self._current_default_config = log_config
        if default_props is not None:
            self._default_props = dict(default_props)

    def fetch_log_config(self, topic: str):
        """The topic's LogConfig: the broker defaults with its overrides applied."""
        overrides = self._topic_overrides.get(topic)
        if not overrides:
            return self._current_default_config
        defaults = self._default_props or self._current_default_config.values()
        return LogConfig.from_props(defaults, overrides)

    def update_topic_config(self, topic: str, overrides: Mapping[str, object], only_if_hosted: bool = False,
                            force: bool = False) -> None:
        """Per-topic config changed: remember the overrides and reconfigure its logs.

        Overrides are kept only for topics with logs here (they are dropped with the topic's
        last log): ``only_if_hosted`` (a config change notification, which reaches every
        broker) forgets the overrides of a topic this broker has no log of, where a log
        about to be created (Partition) remembers them first. Unchanged overrides change
        nothing (every partition created calls this), unless ``force``: the broker defaults
        under them changed.
        """
        with self._log_creation_or_deletion_lock:
            if not force and dict(overrides) == self._topic_overrides.get(topic, {}):
                return
            logs = self.logs_by_topic(topic)
            if overrides and (logs or not only_if_hosted):
                self._topic_overrides[topic] = dict(overrides)
            else:
                self._topic_overrides.pop(topic, None)
            config = self.fetch_log_config(topic)
            for log in logs:
                log.update_config(config)

    def _forget_topics_without_logs(self, topics: Iterable[str]) -> None:
        """Drop the overrides of those of ``topics`` that have no log here any more."""
        with self._log_creation_or_deletion_lock:
            candidates = {t for t in topics if t in self._topic_overrides}
            if not candidates:
                return
            for logs in (self._current_logs, self._future_logs):
                for tp in logs:
                    candidates.discard(tp.topic)
            for topic in candidates:
                del self._topic_overrides[topic]

    # ------------------------------------------------------------------ loading

    def _load_log(self, log_dir: str, had_clean_shutdown: bool, recovery_points: Mapping[TopicPartition, int],
                  log_start_offsets: Mapping[TopicPartition, int]) -> Log:
        topic_partition = log_files.parse_topic_partition_name(log_dir)
        config = self.fetch_log_config(topic_partition.topic)
        # before loading writes into the directory (see _keep_one_of_duplicate_logs)
        changed_ns = os.stat(log_dir).st_ctime_ns
        log = Log(log_dir, config,
                  log_start_offset=log_start_offsets.get(topic_partition, 0),
                  recovery_point=recovery_points.get(topic_partition, 0),
                  scheduler=self.scheduler, time=self.time,
                  max_producer_id_expiration_ms=self.max_pid_expiration_ms,
                  producer_id_expiration_check_interval_ms=PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS,
                  topic_partition=topic_partition,
                  log_dir_failure_channel=self.log_dir_failure_channel,
                  had_clean_shutdown=had_clean_shutdown,
                  broker_topic_stats=self.broker_topic_stats)
        if log_dir.endswith(DELETE_DIR_SUFFIX):
            self._add_log_to_be_deleted(log)
        else:
            with self._log_creation_or_deletion_lock:
                self._dir_change_ns_before_load[log.dir] = changed_ns
                logs = self._future_logs if log.is_future else self._current_logs
                previous = logs.get(topic_partition)
                if previous is None:
                    logs[topic_partition] = log
                elif log.is_future:
                    raise RuntimeError(f"Duplicate log directories found: {log.dir}, {previous.dir}")
                else:
                    self._keep_one_of_duplicate_logs(topic_partition, previous, log)
        return log

    def _keep_one_of_duplicate_logs(self, topic_partition: TopicPartition, previous: Log, log: Log) -> None:
        """Two log dirs both hold ``<tp>``: a restart after replace_current_with_future_log renamed the
        caught-up future log to the partition's name and stopped before the source was renamed
        ``-delete`` (a crash, or the source's disk failing at that step). Kafka 2.8 through 3.x refuse
        to start here and leave the choice to the operator. The swap runs only once the future log
        has caught up with the current one, under the partition's lock, so at that moment both
        copies held the same records; keeping either loses nothing, and the other is renamed
        ``-delete`` and deleted like any replaced log. Called with the log creation lock held.

        Which copy stays:
        * the larger log end offset: after the swap only the new current log (the former future)
          takes appends, so a longer copy holds every record of the shorter one and the newer ones;
          a copy that lost an unflushed tail in a power failure is the shorter one too;
        * on a tie, the copy whose directory changed last before this start (its ctime): the
          rename that made the future log ``<tp>`` is the last change to either directory, so
          this keeps the copy the swap had promoted and finishes the move the operator asked
          for, where keeping the other would silently undo it. The checkpoints cannot tell the
          two apart: each dir's checkpoints list the partition, the future log's included, with
          offsets that differ only by when each copy was last flushed;
        * on a tie again (timestamps coarser than the gap, a restore that reset them), the copy in
          the dir listed first in ``log.dirs``: both are then equal in every way that matters."""
        def rank(candidate: Log) -> tuple:
            dir_order = self.log_dirs.index(candidate.parent_dir) if candidate.parent_dir in self.log_dirs \
                else len(self.log_dirs)
            return (candidate.log_end_offset, self._dir_change_ns_before_load.get(candidate.dir, 0), -dir_order)

        kept, dropped = (previous, log) if rank(previous) >= rank(log) else (log, previous)
        dropped_dir = dropped.dir
        logger.warning("Duplicate log directories for %s are found in both %s and %s, as a crash or a log dir "
                       "failure while replacing the current replica with the future replica leaves them. Keeping "
                       "%s (log end offset %d) and deleting %s (log end offset %d).", topic_partition, previous.dir,
                       log.dir, kept.dir, kept.log_end_offset, dropped_dir, dropped.log_end_offset)
        dropped.rename_dir(log_files.log_delete_dir_name(topic_partition))
        # The rename took the partition's gauges away if the dropped copy, loaded last, held them.
        kept.new_metrics()
        self._current_logs[topic_partition] = kept
        self._add_log_to_be_deleted(dropped)

    def load_logs(self) -> None:
        """Load every log of every live directory, recovering them if the last shutdown was unclean."""
        # imported here: kafka_py.server depends on kafka_py.log, not the other way round at import time
        from kafka_py.server.epoch.leader_epoch_file_cache import deferred_flushes

        logger.info("Loading logs from log dirs %s", self._live_log_dirs)
        start_ms = self.time.hi_res_milliseconds()
        self._check_open_file_limit()
        pools: List[ThreadPoolExecutor] = []
        jobs: List[Future[None]] = []
        offline: List[tuple] = []
        total = 0
        try:
            for dir in list(self._live_log_dirs):
                try:
                    pool = ThreadPoolExecutor(max_workers=max(1, self._num_recovery_threads_per_data_dir),
                                              thread_name_prefix="log-recovery-" + os.path.basename(dir))
                    pools.append(pool)
                    clean_shutdown_file = os.path.join(dir, CLEAN_SHUTDOWN_FILE)
                    had_clean_shutdown = os.path.exists(clean_shutdown_file)
                    if had_clean_shutdown:
                        logger.info("Skipping recovery for all logs in %s since clean shutdown file was found", dir)
                        # Delete it now: a crash while loading must count as unclean next time (KAFKA-10471).
                        log_files.delete_file_if_exists(clean_shutdown_file)
                    else:
                        logger.info("Attempting recovery for all logs in %s since no clean shutdown file was found",
                                    dir)
                    try:
                        recovery_points = self._recovery_point_checkpoints[dir].read()
                    except Exception as e:  # noqa: BLE001 - a bad checkpoint only costs recovery time
                        logger.warning("Error occurred while reading recovery-point-offset-checkpoint file of "
                                       "directory %s, resetting the recovery checkpoint to 0: %s", dir, e)
                        recovery_points = {}
                    try:
                        log_start_offsets = self._log_start_offset_checkpoints[dir].read()
                    except Exception as e:  # noqa: BLE001
                        logger.warning("Error occurred while reading log-start-offset-checkpoint file of directory "
                                       "%s, resetting to the base offset of the first segment: %s", dir, e)
                        log_start_offsets = {}

                    logs_to_load = []
                    for name in sorted(os.listdir(dir)):
                        path = os.path.join(dir, name)
                        if os.path.isdir(path) and log_files.parse_topic_partition_name(path).topic != METADATA_TOPIC:
                            logs_to_load.append(path)
                    total += len(logs_to_load)
                    counter = AtomicInteger()
                    recovered_segments = AtomicInteger()
                    recovered_logs = AtomicInteger()
                    dir_start_ms = self.time.hi_res_milliseconds()
                    if not logs_to_load:
                        logger.info("Loaded 0 logs in %s in 0ms", dir)

                    def load_one(log_dir: str, dir=dir, had_clean_shutdown=had_clean_shutdown,
                                 recovery_points=recovery_points, log_start_offsets=log_start_offsets,
                                 counter=counter, n=len(logs_to_load), recovered_segments=recovered_segments,
                                 recovered_logs=recovered_logs, dir_start_ms=dir_start_ms) -> None:
                        try:
                            begin = self.time.hi_res_milliseconds()
                            log = self._load_log(log_dir, had_clean_shutdown, recovery_points, log_start_offsets)
                            if log.recovered_segments:
                                recovered_logs.increment_and_get()
                                recovered_segments.add_and_get(log.recovered_segments)
                            done = counter.increment_and_get()
                            logger.info("Completed load of %s with %d segments in %dms (%d/%d loaded in %s)", log,
                                        log.number_of_segments, self.time.hi_res_milliseconds() - begin, done, n,
                                        dir)
                            if done == n:
                                # The directory's summary: a clean restart recovers nothing; after a
                                # crash, only the segments past each log's recovery point.
                                logger.info("Loaded %d logs in %s in %dms (%s shutdown): recovered %d segments of "
                                            "%d logs", n, dir, self.time.hi_res_milliseconds() - dir_start_ms,
                                            "clean" if had_clean_shutdown else "unclean", recovered_segments.get(),
                                            recovered_logs.get())
                        except (OSError, KafkaStorageException) as e:
                            offline.append((dir, e))
                            logger.error("Error while loading log dir %s", dir, exc_info=True)

                    def load_chunk(log_dirs: List[str]) -> None:
                        # Loading rewrites the leader epoch checkpoint of every log whose last
                        # epoch starts at its end (an empty log's, say): written per chunk
                        # together, not one fsync pair each, before loading returns.
                        with deferred_flushes():
                            for log_dir in log_dirs:
                                load_one(log_dir)

                    jobs.extend(pool.submit(load_chunk, logs_to_load[i:i + LOAD_CHUNK_LOGS])
                                for i in range(0, len(logs_to_load), LOAD_CHUNK_LOGS))
                except OSError as e:
                    offline.append((dir, e))
                    logger.error("Error while loading log dir %s", dir, exc_info=True)
            for job in jobs:
                job.result()
            for dir, error in offline:
                self._add_offline_dir(dir, f"Error while loading log dir {dir}", error)
        finally:
            for pool in pools:
                pool.shutdown(wait=True)
            self._dir_change_ns_before_load.clear()
        elapsed_ms = self.time.hi_res_milliseconds() - start_ms
        logger.info("Loaded %d logs in %dms.", total, elapsed_ms)
        # Kafka's earlier wording of the same, which operators' tooling may still look for.
        logger.info("Logs loading complete in %d ms.", elapsed_ms)

    def _check_open_file_limit(self) -> None:
        """Say before loading, not after the first "Too many open files", when the segments
        found cannot all be open within this process's descriptor limit: each segment keeps
        its .log file open for as long as the broker runs."""
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        segments = sum(_count_segment_files(d) for d in self._live_log_dirs)
        already_open = _open_descriptor_count()
        needed = segments + already_open + OPEN_FILE_HEADROOM
        logger.info("Found %d segment files in %d log dirs; open file descriptor limit %s.", segments,
                    len(self._live_log_dirs), "unlimited" if soft == resource.RLIM_INFINITY else soft)
        if soft != resource.RLIM_INFINITY and needed > soft:
            logger.error("Open file descriptor limit too low: found %d segments, which need %d descriptors "
                         "(one per segment, %d already open, %d for connections and other files), but the "
                         "limit is %d (hard limit %s). Loading or serving will fail with 'Too many open files'; "
                         "raise the limit (ulimit -n, or LimitNOFILE= in a systemd unit).", segments, needed,
                         already_open, OPEN_FILE_HEADROOM, soft,
                         "unlimited" if hard == resource.RLIM_INFINITY else hard)

    def startup(self, topic_config_overrides: Optional[Mapping[str, Mapping[str, object]]] = None) -> None:
        """Load all logs, then schedule the background tasks."""
        if topic_config_overrides:
            for topic, overrides in topic_config_overrides.items():
                self._topic_overrides[topic] = dict(overrides)
        self.page_cache_prefaulter.startup(self._live_log_dirs)  # tuning: kafka_py/tuning
        self.load_logs()
        # The overrides given are every topic's of the cluster; only those of topics with logs
        # here are of use (a log created later reads its topic's from ZooKeeper).
        self._forget_topics_without_logs(list(topic_config_overrides or ()))
        if self.scheduler is not None:
            delay = self.initial_task_delay_ms
            logger.info("Starting log cleanup with a period of %d ms.", self.retention_check_ms)
            self._scheduled_tasks.append(self.scheduler.schedule(
                "kafka-log-retention", self.cleanup_logs, delay_ms=delay, period_ms=self.retention_check_ms))
            logger.info("Starting log flusher with a default period of %d ms.", self.flush_check_ms)
            self._scheduled_tasks.append(self.scheduler.schedule(
                "kafka-log-flusher", self.flush_dirty_logs, delay_ms=delay, period_ms=self.flush_check_ms))
            self._scheduled_tasks.append(self.scheduler.schedule(
                "kafka-recovery-point-checkpoint", self.checkpoint_log_recovery_offsets, delay_ms=delay,
                period_ms=self.flush_recovery_offset_checkpoint_ms))
            self._scheduled_tasks.append(self.scheduler.schedule(
                "kafka-log-start-offset-checkpoint", self.checkpoint_log_start_offsets, delay_ms=delay,
                period_ms=self.flush_start_offset_checkpoint_ms))
            # one-shot: each run schedules the next at the time the next deletion is due
            self.scheduler.schedule("kafka-delete-logs", self._delete_logs, delay_ms=delay)
        if self.cleaner_config.enable_cleaner:
            self._cleaner = LogCleaner(self.cleaner_config, self._live_log_dirs, self._current_logs,
                                       self.log_dir_failure_channel, time=self.time)
            self._cleaner.startup()

    def shutdown(self) -> None:
        """Flush and close every log; in each directory where that worked, write checkpoints and the clean marker."""
        logger.info("Shutting down.")
        self._shut_down = True
        # the prefaulter and the cleaner first: neither may be working on segments being closed
        self.page_cache_prefaulter.shutdown()  # tuning: kafka_py/tuning
        if self._cleaner is not None:
            try:
                self._cleaner.shutdown()
            except Exception:  # noqa: BLE001 - closing the logs matters more
                logger.warning("Error while shutting down the log cleaner", exc_info=True)
        for task in self._scheduled_tasks:
            try:
                task.cancel()
            except Exception:  # noqa: BLE001
                pass
        self._scheduled_tasks.clear()
        logs_by_dir = self._logs_by_dir()
        pools: List[ThreadPoolExecutor] = []
        jobs: Dict[str, list] = {}
        try:
            for dir in list(self._live_log_dirs):
                logger.debug("Flushing and closing logs at %s", dir)
                pool = ThreadPoolExecutor(max_workers=max(1, self._num_recovery_threads_per_data_dir))
                pools.append(pool)

                def flush_and_close(log: Log) -> None:
                    # flushing first makes the recovery point the log end offset
                    log.flush()
                    log.close()

                jobs[dir] = [pool.submit(flush_and_close, log) for log in logs_by_dir.get(dir, {}).values()]
            for dir, dir_jobs in jobs.items():
                failed = False
                for job in dir_jobs:
                    try:
                        job.result()
                    except Exception as e:  # noqa: BLE001 - other logs still get closed
                        failed = True
                        logger.warning("There was an error in one of the threads during LogManager shutdown: %s", e)
                if failed:
                    continue
                logs = logs_by_dir.get(dir, {})
                logger.debug("Updating recovery points at %s", dir)
                self._checkpoint_recovery_offsets_in_dir(dir, logs)
                logger.debug("Updating log start offsets at %s", dir)
                self._checkpoint_log_start_offsets_in_dir(dir, logs)
                logger.debug("Writing clean shutdown marker at %s", dir)
                try:
                    with open(os.path.join(dir, CLEAN_SHUTDOWN_FILE), "x"):
                        pass
                except OSError as e:
                    logger.warning("Could not write clean shutdown marker in %s: %s", dir, e)
        finally:
            for pool in pools:
                pool.shutdown(wait=True)
            # the directories are unlocked whether or not closing worked
            for lock in self._dir_locks:
                try:
                    lock.destroy()
                except OSError:
                    pass
            self._dir_locks = []
        logger.info("Shutdown complete.")

    # ------------------------------------------------------------------ truncation

    def truncate_to(self, partition_offsets: Mapping[TopicPartition, int], is_future: bool = False) -> None:
        """Truncate each log to its offset; a clean of a log losing sealed segments is stopped first."""
        affected_dirs = set()
        for tp, offset in partition_offsets.items():
            log = (self._future_logs if is_future else self._current_logs).get(tp)
            if log is None:
                continue
            # the cleaner may be rewriting segments this truncation removes
            need_to_stop_cleaner = offset < log.active_segment.base_offset and not is_future
            if need_to_stop_cleaner:
                self.abort_and_pause_cleaning(tp)
            try:
                if log.truncate_to(offset):
                    affected_dirs.add(log.parent_dir)
                if need_to_stop_cleaner:
                    self._maybe_truncate_cleaner_checkpoint_to_active_segment_base_offset(log, tp)
            finally:
                if need_to_stop_cleaner:
                    self.resume_cleaning(tp)
        for dir in affected_dirs:
            self.checkpoint_recovery_offsets_in_dir(dir)

    def truncate_fully_and_start_at(self, topic_partition: TopicPartition, new_offset: int,
                                    is_future: bool = False) -> None:
        log = (self._future_logs if is_future else self._current_logs).get(topic_partition)
        if log is not None:
            if not is_future:
                self.abort_and_pause_cleaning(topic_partition)
            try:
                log.truncate_fully_and_start_at(new_offset)
                if not is_future:
                    self._maybe_truncate_cleaner_checkpoint_to_active_segment_base_offset(log, topic_partition)
            finally:
                if not is_future:
                    self.resume_cleaning(topic_partition)
            self.checkpoint_recovery_offsets_in_dir(log.parent_dir)

    # ------------------------------------------------------------------ the cleaner

    @property
    def cleaner(self) -> Optional[LogCleaner]:
        return self._cleaner

    def abort_and_pause_cleaning(self, topic_partition: TopicPartition) -> None:
        """Stop any clean of the partition (waiting for it) and keep it from being cleaned until resumed."""
        if self._cleaner is not None:
            self._cleaner.abort_and_pause_cleaning(topic_partition)

    def resume_cleaning(self, topic_partition: TopicPartition) -> None:
        if self._cleaner is not None:
            self._cleaner.resume_cleaning([topic_partition])

    def pause_cleaning_for_move(self, topic_partition: TopicPartition) -> None:
        """No clean of a partition while it moves to another log dir. Pauses nest, and Kafka
        pauses again at every LeaderAndIsr during a move but resumes once when it ends,
        leaving such a partition uncleaned until a restart; here a move holds one pause,
        however often it is asked for, released when the move ends or is given up."""
        with self._log_creation_or_deletion_lock:
            if topic_partition in self._cleaning_paused_for_move:
                return
            self._cleaning_paused_for_move.add(topic_partition)
        self.abort_and_pause_cleaning(topic_partition)

    def _end_cleaning_pause_for_move(self, topic_partition: TopicPartition) -> None:
        with self._log_creation_or_deletion_lock:
            if topic_partition not in self._cleaning_paused_for_move:
                return
            self._cleaning_paused_for_move.discard(topic_partition)
        if self._cleaner is not None:
            try:
                self._cleaner.resume_cleaning([topic_partition])
            except RuntimeError:  # the partition's cleaning state went with its deleted log
                pass

    def _maybe_truncate_cleaner_checkpoint_to_active_segment_base_offset(self, log: Log,
                                                                        topic_partition: TopicPartition) -> None:
        # a checkpoint beyond the truncation point would make the cleaner skip rewritten data
        if self._cleaner is not None:
            self._cleaner.maybe_truncate_checkpoint(log.parent_dir, topic_partition, log.active_segment.base_offset)

    # ------------------------------------------------------------------ checkpoints

    def checkpoint_log_recovery_offsets(self) -> None:
        by_dir = self._logs_by_dir()
        for dir in list(self._live_log_dirs):
            self._checkpoint_recovery_offsets_in_dir(dir, by_dir.get(dir, {}))

    def checkpoint_log_start_offsets(self) -> None:
        by_dir = self._logs_by_dir()
        for dir in list(self._live_log_dirs):
            self._checkpoint_log_start_offsets_in_dir(dir, by_dir.get(dir, {}))

    def checkpoint_recovery_offsets_in_dir(self, dir: str) -> None:
        self._checkpoint_recovery_offsets_in_dir(dir, self._logs_by_dir().get(dir, {}))

    def _checkpoint_recovery_offsets_in_dir(self, dir: str, logs: Mapping[TopicPartition, Log]) -> None:
        checkpoint = self._recovery_point_checkpoints.get(dir)
        if checkpoint is None:
            return
        try:
            checkpoint.write({tp: log.recovery_point for tp, log in logs.items()})
        except KafkaStorageException as e:
            logger.error("Disk error while writing recovery offsets checkpoint in directory %s: %s", dir, e)
        except OSError as e:
            self._add_offline_dir(dir, f"Disk error while writing recovery offsets checkpoint in directory {dir}", e)

    def _checkpoint_log_start_offsets_in_dir(self, dir: str, logs: Mapping[TopicPartition, Log]) -> None:
        checkpoint = self._log_start_offset_checkpoints.get(dir)
        if checkpoint is None:
            return
        try:
            # only offsets the segments alone would not restore are worth writing
            checkpoint.write({tp: log.log_start_offset for tp, log in logs.items()
                              if log.log_segments and log.log_start_offset > log.log_segments[0].base_offset})
        except KafkaStorageException as e:
            logger.error("Disk error while writing log start offsets checkpoint in directory %s: %s", dir, e)
        except OSError as e:
            self._add_offline_dir(dir, f"Disk error while writing log start offsets checkpoint in directory {dir}", e)

    # ------------------------------------------------------------------ lookup and creation

    def get_log(self, topic_partition: TopicPartition, is_future: bool = False) -> Optional[Log]:
        return (self._future_logs if is_future else self._current_logs).get(topic_partition)

    def maybe_update_preferred_log_dir(self, topic_partition: TopicPartition, log_dir: str) -> None:
        log_dir = os.path.abspath(log_dir)
        current = self.get_log(topic_partition)
        future = self.get_log(topic_partition, is_future=True)
        if (current is None or current.parent_dir != log_dir) and (future is None or future.parent_dir != log_dir):
            self._preferred_log_dirs[topic_partition] = log_dir

    def get_or_create_log(self, topic_partition: TopicPartition, config=None, is_new: bool = False,
                          is_future: bool = False) -> Log:
        """The partition's log, created in the least loaded directory if it does not exist yet."""
        with self._log_creation_or_deletion_lock:
            existing = self.get_log(topic_partition, is_future)
            if existing is not None:
                return existing
            if not is_new and self.offline_log_dirs:
                raise KafkaStorageException(f"Can not create log for {topic_partition} because log directories "
                                            f"{','.join(self.offline_log_dirs)} are offline")
            preferred = self._preferred_log_dirs.get(topic_partition)
            if is_future:
                if preferred is None:
                    raise RuntimeError(f"Can not create the future log for {topic_partition} without having a "
                                       "preferred log directory")
                current = self.get_log(topic_partition)
                if current is not None and current.parent_dir == preferred:
                    raise RuntimeError(f"Can not create the future log for {topic_partition} in the current log "
                                       "directory of this partition")
            candidates = [preferred] if preferred is not None else self._next_log_dirs()
            name = (log_files.log_future_dir_name(topic_partition) if is_future
                    else log_files.log_dir_name(topic_partition))
            log_dir = None
            errors = []
            for parent in candidates:
                if parent not in self._live_log_dirs:
                    errors.append(f"Can not create log {name} because log directory {parent} is offline")
                    continue
                path = os.path.join(parent, name)
                try:
                    os.makedirs(path, exist_ok=True)
                    log_dir = path
                    break
                except OSError as e:
                    msg = f"Error while creating log for {name} in dir {parent}"
                    self._add_offline_dir(parent, msg, e)
                    errors.append(msg)
            if log_dir is None:
                raise KafkaStorageException("No log directories available. Tried " + ", ".join(candidates)
                                            + (f" ({'; '.join(errors)})" if errors else ""))
            if config is None:
                config = self.fetch_log_config(topic_partition.topic)
            log = Log(log_dir, config, log_start_offset=0, recovery_point=0, scheduler=self.scheduler,
                      time=self.time, max_producer_id_expiration_ms=self.max_pid_expiration_ms,
                      producer_id_expiration_check_interval_ms=PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS,
                      topic_partition=topic_partition, log_dir_failure_channel=self.log_dir_failure_channel,
                      broker_topic_stats=self.broker_topic_stats)
            (self._future_logs if is_future else self._current_logs)[topic_partition] = log
            logger.info("Created log for partition %s in %s", topic_partition, log_dir)
            self._preferred_log_dirs.pop(topic_partition, None)
            return log

    def _next_log_dirs(self) -> List[str]:
        """Live directories, fewest partitions first (Kafka counts logs, not bytes)."""
        if len(self._live_log_dirs) == 1:
            return [self._live_log_dirs[0]]
        counts = {d: 0 for d in self._live_log_dirs}
        for log in self.all_logs():
            if log.parent_dir in counts:
                counts[log.parent_dir] += 1
        return sorted(counts, key=lambda d: counts[d])

    def replace_current_with_future_log(self, topic_partition: TopicPartition) -> None:
        """The future log has caught up: it becomes the partition's log (its directory renamed
        ``<tp>``), and the old one is renamed ``-delete`` and queued for deletion. Both
        directories' checkpoints are rewritten, so a restart finds one log of the partition."""
        with self._log_creation_or_deletion_lock:
            source_log = self._current_logs.get(topic_partition)
            dest_log = self._future_logs.get(topic_partition)
            logger.info("Attempting to replace current log %s with %s for %s", source_log, dest_log, topic_partition)
            if source_log is None:
                raise KafkaStorageException(f"The current replica for {topic_partition} is offline")
            if dest_log is None:
                raise KafkaStorageException(f"The future replica for {topic_partition} is offline")
            dest_log.rename_dir(log_files.log_dir_name(topic_partition))
            crash_point("log_manager.replace_future.after_future_renamed")
            dest_log.update_high_watermark(source_log.high_watermark)
            # from here on the renamed future log is the partition's log
            del self._future_logs[topic_partition]
            self._current_logs[topic_partition] = dest_log
            if self._cleaner is not None:
                self._cleaner.alter_checkpoint_dir(topic_partition, source_log.parent_dir, dest_log.parent_dir)
            self._end_cleaning_pause_for_move(topic_partition)
            try:
                source_log.rename_dir(log_files.log_delete_dir_name(topic_partition))
                crash_point("log_manager.replace_future.after_source_renamed")
                source_log.close()
                source_dir = source_log.parent_dir
                logs = self._logs_by_dir().get(source_dir, {})
                self._checkpoint_recovery_offsets_in_dir(source_dir, logs)
                self._checkpoint_log_start_offsets_in_dir(source_dir, logs)
                source_log.remove_log_metrics()
                self._add_log_to_be_deleted(source_log)
            except KafkaStorageException:
                # its dir failed: no longer among the logs, so the failure handling will not close it
                source_log.close_handlers()
                source_log.remove_log_metrics()
                raise
            dest_dir = dest_log.parent_dir
            logs = self._logs_by_dir().get(dest_dir, {})
            self._checkpoint_recovery_offsets_in_dir(dest_dir, logs)
            self._checkpoint_log_start_offsets_in_dir(dest_dir, logs)
            logger.info("The current replica is successfully replaced with the future replica for %s",
                        topic_partition)

    # ------------------------------------------------------------------ deletion

    def _add_log_to_be_deleted(self, log: Log) -> None:
        self._logs_to_be_deleted.append((log, self.time.milliseconds()))

    @property
    def has_logs_to_be_deleted(self) -> bool:
        return bool(self._logs_to_be_deleted)

    def _delete_logs(self) -> None:
        """Delete queued ``-delete`` directories whose delay has passed, then reschedule for the next one."""
        next_delay_ms = 0
        try:
            while True:
                if self._logs_to_be_deleted:
                    _, scheduled_ms = self._logs_to_be_deleted[0]
                    next_delay_ms = (scheduled_ms + self._current_default_config.file_delete_delay_ms
                                     - self.time.milliseconds())
                else:
                    next_delay_ms = self._current_default_config.file_delete_delay_ms
                if next_delay_ms > 0 or not self._logs_to_be_deleted:
                    break
                removed_log, _ = self._logs_to_be_deleted.popleft()
                try:
                    removed_log.delete()
                    logger.info("Deleted log for partition %s in %s.", removed_log.topic_partition, removed_log.dir)
                except KafkaStorageException:
                    logger.error("Exception while deleting %s in dir %s.", removed_log, removed_log.parent_dir,
                                 exc_info=True)
        except Exception:  # noqa: BLE001 - the task must keep rescheduling itself
            logger.error("Exception in kafka-delete-logs thread.", exc_info=True)
        finally:
            if self.scheduler is not None and not self._shut_down:
                try:
                    self.scheduler.schedule("kafka-delete-logs", self._delete_logs, delay_ms=max(0, next_delay_ms))
                except Exception:  # noqa: BLE001
                    if self.scheduler.is_started:
                        logger.error("Failed to schedule next delete in kafka-delete-logs thread", exc_info=True)

    def async_delete(self, topic_partition: TopicPartition, is_future: bool = False,
                     checkpoint: bool = True) -> Optional[Log]:
        """Take the log out of service and rename its directory ``<tp>.<uuid>-delete`` for kafka-delete-logs."""
        with self._log_creation_or_deletion_lock:
            removed = (self._future_logs if is_future else self._current_logs).pop(topic_partition, None)
        if removed is None:
            if self.offline_log_dirs:
                raise KafkaStorageException(
                    f"Failed to delete log for {'future ' if is_future else ''}{topic_partition} because it may be "
                    f"in one of the offline directories {','.join(self.offline_log_dirs)}")
            return None
        # no clean may still be writing into the directory about to be renamed
        if self._cleaner is not None and not is_future:
            self._cleaner.abort_cleaning(topic_partition)
            if checkpoint:
                self._cleaner.update_checkpoints(removed.parent_dir, partition_to_remove=topic_partition)
        removed.rename_dir(log_files.log_delete_dir_name(topic_partition))
        crash_point("log_manager.async_delete.after_rename")
        if is_future:
            # a move given up (or its partition deleted)
            self._end_cleaning_pause_for_move(topic_partition)
        if checkpoint:
            dir = removed.parent_dir
            logs = self._logs_by_dir().get(dir, {})
            self._checkpoint_recovery_offsets_in_dir(dir, logs)
            self._checkpoint_log_start_offsets_in_dir(dir, logs)
        self._add_log_to_be_deleted(removed)
        logger.info("Log for partition %s is renamed to %s and is scheduled for deletion", removed.topic_partition,
                    removed.dir)
        if checkpoint:
            self._forget_topics_without_logs((topic_partition.topic,))
        return removed

    def async_delete_partitions(self, topic_partitions: Iterable[TopicPartition],
                                error_handler: Callable[[TopicPartition, BaseException], None]) -> None:
        """Kafka's asyncDelete(Set[TopicPartition], errorHandler): delete many, checkpoint each dir once."""
        topic_partitions = list(topic_partitions)
        dirs = set()
        for tp in topic_partitions:
            try:
                for is_future in (False, True):
                    log = self.get_log(tp, is_future)
                    if log is not None:
                        dirs.add(log.parent_dir)
                        self.async_delete(tp, is_future=is_future, checkpoint=False)
            except Exception as e:  # noqa: BLE001 - reported per partition
                error_handler(tp, e)
        self._forget_topics_without_logs({tp.topic for tp in topic_partitions})
        by_dir = self._logs_by_dir()
        for dir in dirs:
            if self._cleaner is not None:
                # drops the checkpoint entries of the partitions just deleted
                self._cleaner.update_checkpoints(dir)
            logs = by_dir.get(dir, {})
            self._checkpoint_recovery_offsets_in_dir(dir, logs)
            self._checkpoint_log_start_offsets_in_dir(dir, logs)

    # ------------------------------------------------------------------ background work

    def cleanup_logs(self) -> int:
        """Retention for every non-compacted log (see the module docstring); returns the segments deleted."""
        logger.debug("Beginning log cleanup...")
        total = 0
        start_ms = self.time.milliseconds()
        if self._cleaner is not None:
            # paused, so that a switch of cleanup.policy to compact cannot start a clean under our feet
            deletable_logs = self._cleaner.pause_cleaning_for_non_compacted_partitions()
        else:
            deletable_logs = [(tp, log) for tp, log in list(self._current_logs.items()) if not log.config.compact]
        try:
            for tp, log in deletable_logs:
                try:
                    total += log.delete_old_segments()
                    future = self._future_logs.get(tp)
                    if future is not None:
                        total += future.delete_old_segments()
                except KafkaStorageException:
                    logger.error("Error while cleaning up log %s", log.name, exc_info=True)
        finally:
            if self._cleaner is not None:
                self._cleaner.resume_cleaning([tp for tp, _ in deletable_logs])
        logger.debug("Log cleanup completed. %d files deleted in %d seconds", total,
                     (self.time.milliseconds() - start_ms) // 1000)
        return total

    def flush_dirty_logs(self) -> None:
        """Flush each log that has gone ``flush.ms`` without a flush."""
        for tp, log in list(self._current_logs.items()) + list(self._future_logs.items()):
            try:
                if self.time.milliseconds() - log.last_flush_time >= log.config.flush_ms:
                    log.flush()
            except Exception:  # noqa: BLE001 - one bad log must not stop the others being flushed
                logger.error("Error flushing topic %s", tp.topic, exc_info=True)

    # ------------------------------------------------------------------ views

    def all_logs(self) -> List[Log]:
        return list(self._current_logs.values()) + list(self._future_logs.values())

    def logs_by_topic(self, topic: str) -> List[Log]:
        return [log for tp, log in list(self._current_logs.items()) + list(self._future_logs.items())
                if tp.topic == topic]

    def _logs_by_dir(self) -> Dict[str, Dict[TopicPartition, Log]]:
        by_dir: Dict[str, Dict[TopicPartition, Log]] = {}
        for logs in (self._current_logs, self._future_logs):
            for tp, log in list(logs.items()):
                by_dir.setdefault(log.parent_dir, {})[tp] = log
        return by_dir

    def logs_in_dir(self, dir: str) -> Dict[TopicPartition, Log]:
        return self._logs_by_dir().get(os.path.abspath(dir), {})


def _count_segment_files(log_dir: str) -> int:
    """The .log files in the partition directories of ``log_dir`` that loading would open."""
    count = 0
    try:
        with os.scandir(log_dir) as partitions:
            for partition in partitions:
                if not partition.is_dir() or partition.name.startswith(METADATA_TOPIC + "-"):
                    continue
                with os.scandir(partition.path) as files:
                    count += sum(1 for f in files if f.name.endswith(log_files.LOG_FILE_SUFFIX))
    except OSError:  # an unreadable dir fails (and is reported) when it is loaded
        pass
    return count


def _open_descriptor_count() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # no /proc: count nothing rather than guess
        return 0
