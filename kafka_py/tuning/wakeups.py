"""Network-thread wake-ups: only when needed, and batched per handler thread. A kafka-py
addition with no counterpart in Kafka's source, where Processor.enqueueResponse wakes the
selector for every response.

A Processor asleep in select is woken by an eventfd write when a response is queued for
it. That system call hands the GIL to the network thread it wakes, and the writer then
waits for the GIL until that thread blocks again, often after it has written the response.
So a Processor's ``ProcessorWakeups`` wakes it only while it may be asleep in select, and
only once a poll; and a handler that answers several requests in a row (the follower
fetches one leader append completes) first builds every answer inside
``call_with_deferred_wakeups`` and then wakes each Processor once.

Hooks, one line each: the Processor makes its ``ProcessorWakeups``, ``enqueue_response``
calls ``response_queued``, ``poll`` calls ``poll_starting`` before the select and
``poll_ended`` after it; ``ReplicaManager.append_records`` wakes the fetches an append
completes inside ``call_with_deferred_wakeups``.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Sized, TypeVar

_T = TypeVar("_T")
_deferred = threading.local()


class ProcessorWakeups:
    """When one Processor's selector is woken for the responses queued for it (``wakeup``:
    the Processor's own wake-up, an eventfd write)."""

    __slots__ = ("_wakeup", "_polling", "_woken")

    def __init__(self, wakeup: Callable[[], None]) -> None:
        self._wakeup = wakeup
        # True while the Processor may be blocked in select.
        self._polling = False
        # A wake-up has been sent during the current poll: later responses need none.
        self._woken = False

    def response_queued(self) -> None:
        """From ``enqueue_response``, after the response is queued."""
        # Only a thread that may be asleep in select needs the wake-up (an eventfd write
        # and a spurious poll return otherwise, for every response), and only once per
        # poll: handlers answering a batch of requests while the Processor waits for the
        # GIL would otherwise each make a system call that releases the GIL.
        # poll_starting clears ``_woken`` before it raises ``_polling`` and the Processor
        # looks at its queue one last time: either that look sees the response, or this
        # read sees the flag and, if no one has yet, wakes it.
        if self._polling and not self._woken:
            if defer_wakeup(self):  # woken once its caller is done
                return
            self._woken = True
            self._wakeup()

    def wake_if_polling(self) -> None:
        """``response_queued``'s wake-up, for responses queued earlier (the end of
        ``call_with_deferred_wakeups``)."""
        if self._polling and not self._woken:
            self._woken = True
            self._wakeup()

    def poll_starting(self, response_queue: Sized) -> bool:
        """Before the Processor's select: responses queued from now on wake it. True if
        ``response_queue`` already holds some (then the select must not block)."""
        self._woken = False
        self._polling = True
        return bool(response_queue)

    def poll_ended(self) -> None:
        """After the Processor's select, whatever it raised."""
        self._polling = False


def defer_wakeup(wakeups: Any) -> bool:
    """From ``ProcessorWakeups.response_queued``: True if this thread is inside
    ``call_with_deferred_wakeups`` and ``wakeups`` will be woken when it ends (then the
    caller does not wake it)."""
    pending = getattr(_deferred, "processors", None)
    if pending is None:
        return False
    if wakeups not in pending:
        pending.append(wakeups)
    return True


def call_with_deferred_wakeups(fn: Callable[[], _T]) -> _T:
    """``fn()``; the Processors responses queued by it must wake are woken once, after it."""
    if getattr(_deferred, "processors", None) is not None:
        return fn()  # nested: the outer call wakes them
    pending: list = []
    _deferred.processors = pending
    try:
        return fn()
    finally:
        _deferred.processors = None
        for wakeups in pending:
            # the check response_queued makes, now that every response is queued
            wakeups.wake_if_polling()


__all__ = ["ProcessorWakeups", "call_with_deferred_wakeups", "defer_wakeup"]
