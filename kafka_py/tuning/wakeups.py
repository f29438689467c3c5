"""Network-thread wake-ups batched per handler thread.

A Processor asleep in select is woken by an eventfd write when a response is queued for
it (``Processor.enqueue_response``). That system call hands the GIL to the network thread
it wakes, and the writer then waits for the GIL until that thread blocks again, often
after it has written the response. A handler that answers several requests in a row (the
follower fetches one leader append completes) first builds every answer inside
``call_with_deferred_wakeups`` and then wakes each Processor once.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, TypeVar

_T = TypeVar("_T")
_deferred = threading.local()


def defer_wakeup(processor: Any) -> bool:
    """From ``enqueue_response``: True if this thread is inside ``call_with_deferred_wakeups``
    and ``processor`` will be woken when it ends (then the caller does not wake it)."""
    processors = getattr(_deferred, "processors", None)
    if processors is None:
        return False
    if processor not in processors:
        processors.append(processor)
    return True


def call_with_deferred_wakeups(fn: Callable[[], _T]) -> _T:
    """``fn()``; the Processors responses queued by it must wake are woken once, after it."""
    if getattr(_deferred, "processors", None) is not None:
        return fn()  # nested: the outer call wakes them
    processors: list = []
    _deferred.processors = processors
    try:
        return fn()
    finally:
        _deferred.processors = None
        for processor in processors:
            # the check enqueue_response makes, now that every response is queued
            processor.wake_if_polling()


__all__ = ["call_with_deferred_wakeups", "defer_wakeup"]
