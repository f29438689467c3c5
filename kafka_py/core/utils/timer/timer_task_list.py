"""Port of core/src/main/scala/kafka/utils/timer/TimerTaskList.scala.

A ``TimerTaskList`` is one bucket of a timing wheel: a circular doubly-linked list of
``TimerTaskEntry`` around a sentinel root, plus the bucket's expiration time. Linking and
unlinking are O(1), which is why cancelling one of a million delayed operations is cheap.

All buckets of one timer share one ``AtomicInteger`` (kafka_py.core.utils.atomic_integer) to
count their live entries (``SystemTimer.size``).
"""
from __future__ import annotations

import heapq
import threading
import weakref
from time import monotonic as _monotonic
from typing import Callable

from kafka_py.core.utils.atomic_integer import AtomicInteger
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.utils.timer.timer_task import TimerTask


class TimerTaskEntry:
    """The link that places one ``TimerTask`` in one bucket at one expiration time."""

    __slots__ = ("timer_task", "expiration_ms", "list", "next", "prev", "_lock")

    def __init__(self, timer_task: TimerTask | None, expiration_ms: int) -> None:
        self.timer_task = timer_task
        self.expiration_ms = expiration_ms
        # The bucket holding this entry, or None; read without a lock by remove(), which
        # re-checks under the bucket's lock.
        self.list: TimerTaskList | None = None
        self.next: TimerTaskEntry | None = None
        self.prev: TimerTaskEntry | None = None
        self._lock = threading.Lock()
        if timer_task is not None:
            timer_task.set_timer_task_entry(self)

    @property
    def cancelled(self) -> bool:
        """True once the task was cancelled or re-added under a newer entry."""
        return self.timer_task.get_timer_task_entry() is not self

    def remove(self) -> None:
        current = self.list
        # A flush may be moving this entry between buckets while we look; keep unlinking from
        # whatever bucket it is in until it is in none.
        while current is not None:
            current.remove(self)
            current = self.list

    def __lt__(self, other: "TimerTaskEntry") -> bool:
        return self.expiration_ms < other.expiration_ms


class TimerTaskList:
    """One timing-wheel bucket."""

    def __init__(self, task_counter: AtomicInteger) -> None:
        self._task_counter = task_counter
        self._lock = threading.Lock()
        self._root = TimerTaskEntry(None, -1)
        self._root.next = self._root
        self._root.prev = self._root
        self._expiration = -1
        self._expiration_lock = threading.Lock()

    def set_expiration(self, expiration_ms: int) -> bool:
        """Set the bucket's expiration; True when it changed, i.e. the bucket is being reused
        for a new wheel round and must be queued again."""
        with self._expiration_lock:
            previous = self._expiration
            self._expiration = expiration_ms
            return previous != expiration_ms

    def get_expiration(self) -> int:
        return self._expiration

    def foreach(self, f: Callable[[TimerTask], None]) -> None:
        """Apply ``f`` to each live (not cancelled) task in the bucket."""
        with self._lock:
            entry = self._root.next
            while entry is not self._root:
                next_entry = entry.next
                if not entry.cancelled:
                    f(entry.timer_task)
                entry = next_entry

    def add(self, entry: TimerTaskEntry) -> None:
        while True:
            # Unlink from any other bucket first, outside our lock: holding two bucket locks
            # at once here could deadlock against a remove going the other way.
            entry.remove()
            with self._lock:
                with entry._lock:
                    if entry.list is not None:
                        continue
                    tail = self._root.prev
                    entry.next = self._root
                    entry.prev = tail
                    entry.list = self
                    tail.next = entry
                    self._root.prev = entry
                    self._task_counter.increment_and_get()
                # A cancel racing a flush can miss an entry that is between buckets (its
                # remove() sees no list). cancel() detaches the task before removing, so
                # checking once linked closes the gap: either we see the entry cancelled here,
                # or the cancel's remove() finds it linked. Kafka leaves such an entry in place
                # until its bucket expires, over-counting ``size`` meanwhile.
                if entry.cancelled:
                    self._unlink(entry)
                return

    def remove(self, entry: TimerTaskEntry) -> None:
        with self._lock:
            self._unlink(entry)

    def _unlink(self, entry: TimerTaskEntry) -> None:
        # Caller holds self._lock.
        with entry._lock:
            if entry.list is self:
                entry.next.prev = entry.prev
                entry.prev.next = entry.next
                entry.next = None
                entry.prev = None
                entry.list = None
                self._task_counter.decrement_and_get()

    def flush(self, f: Callable[[TimerTaskEntry], None]) -> None:
        """Empty the bucket, then hand every entry it held to ``f`` (re-insert or run)."""
        taken: list[TimerTaskEntry] = []
        with self._lock:
            head = self._root.next
            while head is not self._root:
                self._unlink(head)
                taken.append(head)
                head = self._root.next
            self.set_expiration(-1)
        # f runs after the bucket lock is released so that re-inserting into another bucket
        # never holds two bucket locks. A cancel() meanwhile finds the entry in no bucket;
        # the re-insert then either sees it cancelled or, in add(), unlinks it again.
        for entry in taken:
            f(entry)

    def __len__(self) -> int:
        with self._lock:
            n = 0
            entry = self._root.next
            while entry is not self._root:
                n += 1
                entry = entry.next
            return n


class DelayQueue:
    """The queue of non-empty buckets ordered by expiration (Java's ``DelayQueue`` of
    ``TimerTaskList``): ``poll`` hands out a bucket only once its expiration has passed on
    ``time``'s monotonic clock, blocking on a Condition rather than polling.

    A bucket is offered only when its expiration changes (see ``TimingWheel.add``) and is
    flushed (expiration back to -1) only after it was polled, so each bucket is in the heap at
    most once and its key does not change while it is there.
    """

    def __init__(self, time: Time) -> None:
        self._time = time
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[int, int, TimerTaskList]] = []
        self._seq = 0
        self._woken = False
        # A manual clock (MockTime) moves without any real time passing; let it wake pollers
        # so a thread blocked in poll() sees buckets that just came due.
        add_listener = getattr(time, "add_listener", None)
        if add_listener is not None:
            ref = weakref.ref(self)

            def on_clock_moved() -> None:
                queue = ref()
                if queue is not None:
                    queue._notify()

            add_listener(on_clock_moved)

    def offer(self, bucket: TimerTaskList) -> None:
        with self._cond:
            self._seq += 1
            heapq.heappush(self._heap, (bucket.get_expiration(), self._seq, bucket))
            if self._heap[0][2] is bucket:
                self._cond.notify_all()

    def poll(self, timeout_ms: float = 0) -> TimerTaskList | None:
        """The earliest bucket whose expiration has passed, waiting up to ``timeout_ms`` of
        real time for one; None on timeout or when ``wakeup()`` is called."""
        deadline = _monotonic() + max(timeout_ms, 0) / 1000.0
        with self._cond:
            while True:
                wait_s = deadline - _monotonic()
                if self._heap:
                    delay_ms = self._heap[0][0] - self._time.hi_res_milliseconds()
                    if delay_ms <= 0:
                        return heapq.heappop(self._heap)[2]
                    wait_s = min(wait_s, delay_ms / 1000.0)
                if self._woken:
                    self._woken = False
                    return None
                if deadline - _monotonic() <= 0:
                    return None
                self._cond.wait(wait_s)

    def wakeup(self) -> None:
        """Make one blocked (or the next) ``poll`` return None early."""
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    def _notify(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._heap)
