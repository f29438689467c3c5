"""Port of core/src/main/scala/kafka/server/DelayedOperation.scala.

A ``DelayedOperation`` is a request the broker cannot answer yet (a produce waiting for
acks=all, a fetch waiting for min bytes, a join waiting for the rest of the group). A
``DelayedOperationPurgatory`` holds such operations in two places at once:

* watcher lists, one per key (a partition, a group, ...), so that whoever changes the state
  behind a key calls ``check_and_complete(key)`` and the operations waiting on it get another
  chance to complete;
* a ``SystemTimer``, so that an operation nobody completes expires after ``delay_ms``: an
  expiration reaper thread advances the timer, which runs the operation's ``run()``, i.e.
  ``force_complete()`` followed by ``on_expiration()``.

Completion is exactly-once whichever path gets there first: ``force_complete`` flips a flag
under a lock and only the caller that flipped it runs ``on_complete``.

Completed operations are dropped from the timer at once (``cancel``) and from the watcher
lists of every key they were watched under (Kafka leaves them in the lists of keys nobody
checks until a purge; an expired join of a group nobody uses any more, or a produce to a
deleted partition, would keep its group or records alive until then). The reaper still
purges by the estimated number of completed-but-watched operations (``purge_interval``), for
an operation completed while it was being put on its lists.
"""
from __future__ import annotations

import logging
import threading
from abc import abstractmethod
from typing import Any, Callable, Hashable, Iterable

from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.core.utils.atomic_integer import AtomicInteger
from kafka_py.core.utils.shutdownable_thread import ShutdownableThread
from kafka_py.core.utils.timer import SystemTimer, Timer, TimerTask

logger = logging.getLogger(__name__)


class DelayedOperation(TimerTask):
    """Subclasses implement ``try_complete``, ``on_complete`` and ``on_expiration``.

    ``try_complete`` checks whether the operation can finish now and, if so, returns
    ``self.force_complete()``. The purgatory always calls it holding ``self.lock``; pass a
    shared ``lock`` (e.g. a group's lock) when ``try_complete`` must run under it anyway.
    """

    def __init__(self, delay_ms: int, lock: Any = None) -> None:
        super().__init__(delay_ms)
        self._completed = False
        self._completed_lock = threading.Lock()
        # (purgatory, keys) once watched: completion takes the operation off those lists.
        self._watched_in: tuple[Any, list] | None = None
        # Reentrant by default: try_complete -> force_complete -> on_complete may well come
        # back into code that takes the same lock.
        self.lock = lock if lock is not None else threading.RLock()

    def force_complete(self) -> bool:
        """Complete the operation if nobody has yet; True only for the one caller that did.

        Reached from ``try_complete`` once the condition holds, or from ``run`` on expiry;
        both can race from different threads, hence the flag.
        """
        with self._completed_lock:
            if self._completed:
                return False
            self._completed = True
        # Completed operations have no business in the timer or the watcher lists any more.
        self.cancel()
        watched = self._watched_in
        if watched is not None:
            self._watched_in = None
            watched[0]._unwatch(self, watched[1])
        self.on_complete()
        return True

    @property
    def is_completed(self) -> bool:
        return self._completed

    @abstractmethod
    def on_expiration(self) -> None:
        """Called (after ``on_complete``) when the operation completed because it expired."""

    @abstractmethod
    def on_complete(self) -> None:
        """The completion logic; runs exactly once, from ``force_complete``."""

    @abstractmethod
    def try_complete(self) -> bool:
        """If the operation can complete now, ``return self.force_complete()``; else False."""

    def safe_try_complete_or_else(self, f: Callable[[], None]) -> bool:
        """Under ``self.lock``: try to complete; if that fails, run ``f`` and try once more.

        The purgatory passes "watch under every key" as ``f``. Holding the operation's lock
        across the watch and the second check means no ``check_and_complete`` can slip in
        between them holding this lock, which is what keeps a caller that holds other locks
        from deadlocking against one completing this operation.
        """
        with self.lock:
            if self.try_complete():
                return True
            f()
            return self.try_complete()

    def safe_try_complete(self) -> bool:
        with self.lock:
            return self.try_complete()

    def run(self) -> None:
        """The timer's expiration path."""
        if self.force_complete():
            self.on_expiration()


class Watchers:
    """The operations watched under one key.

    Operations are tried without holding this list's lock: ``try_complete`` may call back
    into the purgatory (even for the same key), and holding the lock there would deadlock.
    Kafka uses a lock-free queue for the same reason; here a snapshot is iterated and the
    removals applied afterwards, keyed by identity so operations need not be hashable.
    """

    def __init__(self, key: Hashable, remove_key_if_empty: Callable[[Hashable, "Watchers"], None]) -> None:
        self.key = key
        self._remove_key_if_empty = remove_key_if_empty
        self._lock = threading.Lock()
        # id(op) -> op; insertion-ordered, O(1) removal. The dict holds the operation, so its
        # id cannot be reused while the entry exists.
        self._operations: dict[int, DelayedOperation] = {}

    def count_watched(self) -> int:
        return len(self._operations)

    @property
    def is_empty(self) -> bool:
        return not self._operations

    def watch(self, operation: DelayedOperation) -> None:
        with self._lock:
            self._operations[id(operation)] = operation

    def _snapshot(self) -> list[DelayedOperation]:
        with self._lock:
            return list(self._operations.values())

    def _discard(self, operations: Iterable[DelayedOperation]) -> None:
        with self._lock:
            for op in operations:
                if self._operations.get(id(op)) is op:
                    del self._operations[id(op)]

    def try_complete_watched(self) -> int:
        """Try every watched operation; returns how many this call completed."""
        completed = 0
        done: list[DelayedOperation] = []
        for op in self._snapshot():
            if op.is_completed:
                # Completed elsewhere (another key, or expiry): just stop watching it.
                done.append(op)
            elif op.safe_try_complete():
                done.append(op)
                completed += 1
        if done:
            self._discard(done)
        if self.is_empty:
            self._remove_key_if_empty(self.key, self)
        return completed

    def cancel(self) -> list[DelayedOperation]:
        with self._lock:
            cancelled = list(self._operations.values())
            self._operations.clear()
        for op in cancelled:
            op.cancel()
        return cancelled

    def purge_completed(self) -> int:
        with self._lock:
            stale = [key for key, op in self._operations.items() if op.is_completed]
            for key in stale:
                del self._operations[key]
        if self.is_empty:
            self._remove_key_if_empty(self.key, self)
        return len(stale)


class WatcherList:
    """One shard of the key -> Watchers map, with the lock that makes "find or create the
    Watchers and add to it" atomic against "drop the Watchers of a key once it is empty"."""

    __slots__ = ("watchers_by_key", "watchers_lock")

    def __init__(self) -> None:
        self.watchers_by_key: dict[Hashable, Watchers] = {}
        self.watchers_lock = threading.Lock()

    def all_watchers(self) -> list[Watchers]:
        with self.watchers_lock:
            return list(self.watchers_by_key.values())

    def remove(self, key: Hashable) -> Watchers | None:
        """Drop ``key``'s Watchers (the caller holds ``watchers_lock``). A shard left empty gets
        a new empty dict: a dict never gives back the table its first key made it allocate,
        and with 512 shards per purgatory, keys that come and go (one per topic created or
        deleted) would otherwise leave a table behind in every shard they ever touched."""
        watchers = self.watchers_by_key.pop(key, None)
        if not self.watchers_by_key:
            self.watchers_by_key = {}
        return watchers


class DelayedOperationPurgatory(KafkaMetricsGroup):
    """Bookkeeping for delayed operations of one kind ("Produce", "Fetch", "Rebalance", ...).

    Gauges ``kafka.server:type=DelayedOperationPurgatory,name=PurgatorySize|NumDelayedOperations,
    delayedOperation=<purgatory name>``: the watch lists' total size and the operations waiting
    in the timer, read on scrape; removed at shutdown."""

    # Sharding the key map spreads lock contention between request threads.
    SHARDS = 512

    def __init__(self, purgatory_name: str, timeout_timer: Timer | None = None, broker_id: int = 0,
                 purge_interval: int = 1000, reaper_enabled: bool = True,
                 timer_enabled: bool = True) -> None:
        self.purgatory_name = purgatory_name
        self._timeout_timer = timeout_timer if timeout_timer is not None else SystemTimer(purgatory_name)
        self.broker_id = broker_id
        self.purge_interval = purge_interval
        self.reaper_enabled = reaper_enabled
        self.timer_enabled = timer_enabled
        self._watcher_lists = [WatcherList() for _ in range(self.SHARDS)]
        # Operations ever put on watch lists minus those known purged; together with the timer
        # size it estimates how many completed operations still sit in watcher lists.
        self._estimated_total_operations = AtomicInteger(0)
        self._expiration_reaper = ExpiredOperationReaper(self)
        if reaper_enabled:
            self._expiration_reaper.start()
        self._metric_tags = {"delayedOperation": purgatory_name}
        self._gauges = [(name, self.replace_gauge(name, read, self._metric_tags))
                        for name, read in (("PurgatorySize", self.watched), ("NumDelayedOperations", self.num_delayed))]

    def _watcher_list(self, key: Hashable) -> WatcherList:
        return self._watcher_lists[hash(key) % len(self._watcher_lists)]

    def try_complete_else_watch(self, operation: DelayedOperation, watch_keys: Iterable[Hashable]) -> bool:
        """Complete ``operation`` now if it can be; otherwise watch it under every key and put
        it on the timer. True iff this call completed it.

        The check runs twice: once before watching (cheap exit for the common case) and once
        after it is on every key's list, under the operation's lock. A state change between
        the two either is seen by the second check or finds the operation already watched and
        completes it through ``check_and_complete``: no wake-up is lost. If another thread
        completes it in between, the stale watch entries are purged later.
        """
        keys = list(watch_keys)
        if not keys:
            raise ValueError("The watch key list can't be empty")

        def watch_all() -> None:
            operation._watched_in = (self, keys)
            for key in keys:
                self._watch_for_operation(key, operation)
            self._estimated_total_operations.increment_and_get()

        if operation.safe_try_complete_or_else(watch_all):
            # (completed by the second check, after watching: force_complete unwatched it)
            return True

        if not operation.is_completed:
            if self.timer_enabled:
                self._timeout_timer.add(operation)
            # Completed by another thread while being added: make sure it leaves the timer.
            if operation.is_completed:
                operation.cancel()
        return False

    def check_and_complete(self, key: Hashable) -> int:
        """Give the operations watched under ``key`` a chance to complete; returns how many
        completed. Call it without holding locks an operation's ``try_complete`` may need."""
        wl = self._watcher_lists[hash(key) % self.SHARDS]  # _watcher_list, inline: every append, three times
        # Every append checks three purgatories that mostly watch nothing. An empty shard
        # read without its lock is as good as the locked lookup: an operation being added
        # concurrently re-checks itself once it is watched (try_complete_else_watch).
        if not wl.watchers_by_key:
            return 0
        with wl.watchers_lock:
            watchers = wl.watchers_by_key.get(key)
        if watchers is None:
            return 0
        return watchers.try_complete_watched()

    def watched(self) -> int:
        """Total size of all watch lists (an operation on n keys counts n times, and completed
        operations count until purged)."""
        return sum(w.count_watched() for wl in self._watcher_lists for w in wl.all_watchers())

    def num_delayed(self) -> int:
        """Operations waiting in the timer."""
        return self._timeout_timer.size

    def cancel_for_key(self, key: Hashable) -> list[DelayedOperation]:
        """Stop watching ``key`` and take its operations off the timer, uncompleted (used
        when a partition leaves this broker); returns them."""
        wl = self._watcher_list(key)
        with wl.watchers_lock:
            watchers = wl.remove(key)
        if watchers is None:
            return []
        return watchers.cancel()

    def _watch_for_operation(self, key: Hashable, operation: DelayedOperation) -> None:
        wl = self._watcher_list(key)
        # Add under the shard lock so the Watchers cannot be dropped as empty in between.
        with wl.watchers_lock:
            watchers = wl.watchers_by_key.get(key)
            if watchers is None:
                watchers = Watchers(key, self._remove_key_if_empty)
                wl.watchers_by_key[key] = watchers
            watchers.watch(operation)

    def _unwatch(self, operation: DelayedOperation, keys: Iterable[Hashable]) -> None:
        """Take a completed operation off the watcher list of each key, dropping lists left empty."""
        for key in keys:
            wl = self._watcher_list(key)
            with wl.watchers_lock:
                watchers = wl.watchers_by_key.get(key)
                if watchers is None:
                    continue
                watchers._discard((operation,))
                if watchers.is_empty:
                    wl.remove(key)

    def _remove_key_if_empty(self, key: Hashable, watchers: Watchers) -> None:
        wl = self._watcher_list(key)
        with wl.watchers_lock:
            # The key may already map to a newer Watchers; that one is not ours to drop.
            if wl.watchers_by_key.get(key) is not watchers:
                return
            if watchers.is_empty:
                wl.remove(key)

    def advance_clock(self, timeout_ms: int) -> None:
        """Expire due operations (waiting up to ``timeout_ms`` for one) and purge completed
        operations from watcher lists once enough have piled up."""
        self._timeout_timer.advance_clock(timeout_ms)
        delayed = self.num_delayed()
        if self._estimated_total_operations.get() - delayed > self.purge_interval:
            # Reset the estimate before purging: operations completing during the purge then
            # leave it slightly high, never low, so no purge is skipped for good.
            self._estimated_total_operations.get_and_set(delayed)
            logger.debug("Begin purging watch lists of %s", self.purgatory_name)
            purged = sum(w.purge_completed() for wl in self._watcher_lists for w in wl.all_watchers())
            logger.debug("Purged %d elements from watch lists of %s", purged, self.purgatory_name)

    def shutdown(self) -> None:
        for name, gauge in self._gauges:
            self.remove_metric_if_same(name, gauge, self._metric_tags)
        if self.reaper_enabled:
            self._expiration_reaper.shutdown()
        self._timeout_timer.shutdown()


class ExpiredOperationReaper(ShutdownableThread):
    """Advances the purgatory's timer so due operations expire, and triggers purges."""

    def __init__(self, purgatory: DelayedOperationPurgatory) -> None:
        # Daemon: a purgatory that was never shut down must not keep the interpreter alive.
        super().__init__(f"ExpirationReaper-{purgatory.broker_id}-{purgatory.purgatory_name}",
                         is_interruptible=False, daemon=True)
        self._purgatory = purgatory

    def do_work(self) -> None:
        self._purgatory.advance_clock(200)

    def initiate_shutdown(self) -> bool:
        initiated = super().initiate_shutdown()
        # Cut short the up-to-200 ms wait in advance_clock so shutdown does not lag.
        self._purgatory._timeout_timer.wakeup()
        return initiated
