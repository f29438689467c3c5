"""Port of metadata/src/main/java/org/apache/kafka/queue/EventQueue.java.

What an event queue offers (KafkaEventQueue is the one implementation) and the small
pieces that go with it: the Event itself, the deadline functions that deferred and
deadline events are scheduled with, and the two exceptions an event can be failed with
when it does not run: TimeoutException (its deadline passed first, or the queue shut down
before it was due) and RejectedExecutionException (the queue was already shutting down
when the event came).

Times are monotonic nanoseconds of the queue's Time (``time.nanoseconds()``).
"""
from __future__ import annotations

import abc
import enum
import logging
from dataclasses import dataclass
from typing import Callable

from kafka_py.clients.common.errors import ApiException, KafkaException

# Takes the deadline of the event the new one replaces (same tag), or None, and gives the
# new event's deadline, or None for none.
DeadlineCalculator = Callable[[int | None], int | None]


class TimeoutException(ApiException):
    """clients/.../common/errors/TimeoutException.java: the event did not start in time."""

    error_name = "REQUEST_TIMED_OUT"


class RejectedExecutionException(KafkaException):
    """java.util.concurrent.RejectedExecutionException: the queue is shutting down."""


class Event(abc.ABC):
    @abc.abstractmethod
    def run(self) -> None:
        """Do the event's work, on the queue's thread."""

    def handle_exception(self, e: BaseException) -> None:
        """Called instead of (or after a failed) ``run``: ``e`` is what ``run`` raised, a
        TimeoutException if the event's deadline came first, or a
        RejectedExecutionException if the queue was shutting down when it was added."""


class FailureLoggingEvent(Event):
    """An event whose failures are logged."""

    def __init__(self, log: logging.Logger | logging.LoggerAdapter) -> None:
        self.log = log

    def handle_exception(self, e: BaseException) -> None:
        if isinstance(e, RejectedExecutionException):
            self.log.info("Not processing %s because the event queue is closed.", self)
        else:
            self.log.error("Unexpected error handling %s", self, exc_info=e)

    def __str__(self) -> str:
        return type(self).__name__


class VoidEvent(Event):
    """An event that does nothing: the default clean-up event of a shutdown."""

    def run(self) -> None:
        pass



@dataclass(frozen=True, slots=True)
class NoDeadlineFunction:
    def __call__(self, ignored: int | None) -> int | None:
        return None


NO_DEADLINE = NoDeadlineFunction()


@dataclass(frozen=True, slots=True)
class DeadlineFunction:
    """A fixed deadline, whatever the replaced event's was."""

    deadline_ns: int

    def __call__(self, ignored: int | None) -> int | None:
        return self.deadline_ns


@dataclass(frozen=True, slots=True)
class EarliestDeadlineFunction:
    """The earlier of the replaced event's deadline and ``new_deadline_ns``."""

    new_deadline_ns: int

    def __call__(self, prev_deadline_ns: int | None) -> int | None:
        if prev_deadline_ns is None:
            return self.new_deadline_ns
        return min(prev_deadline_ns, self.new_deadline_ns)


class EventInsertionType(enum.Enum):
    PREPEND = enum.auto()
    APPEND = enum.auto()
    DEFERRED = enum.auto()


class EventQueue(abc.ABC):
    def prepend(self, event: Event) -> None:
        """Put ``event`` in front of every queued event."""
        self.enqueue(EventInsertionType.PREPEND, None, NO_DEADLINE, event)

    def append(self, event: Event) -> None:
        """Put ``event`` after every queued event."""
        self.enqueue(EventInsertionType.APPEND, None, NO_DEADLINE, event)

    def append_with_deadline(self, deadline_ns: int, event: Event) -> None:
        """Append ``event``; if it has not started by ``deadline_ns`` it is dropped and
        handed a TimeoutException."""
        self.enqueue(EventInsertionType.APPEND, None, DeadlineFunction(deadline_ns), event)

    def schedule_deferred(self, tag: str | None, deadline_ns_calculator: DeadlineCalculator,
                          event: Event) -> None:
        """Run ``event`` once the deadline the calculator gives has come. A tagged event
        replaces (cancels) a queued one with the same tag; the calculator is given the
        replaced event's deadline. Events due within a few nanoseconds of each other may
        run in any order."""
        self.enqueue(EventInsertionType.DEFERRED, tag, deadline_ns_calculator, event)

    @abc.abstractmethod
    def cancel_deferred(self, tag: str) -> None:
        """Drop the queued event with ``tag``, if there is one; it is not run or told."""

    @abc.abstractmethod
    def enqueue(self, insertion_type: EventInsertionType, tag: str | None,
                deadline_ns_calculator: DeadlineCalculator, event: Event) -> None:
        """Add ``event``: first (PREPEND), last (APPEND) or at its deadline (DEFERRED).
        For PREPEND and APPEND a deadline, if the calculator gives one, is the time by
        which the event must have started."""

    @abc.abstractmethod
    def begin_shutdown(self, source: str, cleanup_event: Event | None = None,
                       timeout_ns: int = 0) -> None:
        """Start shutting down: refuse new events; run what is queued, but time out, once
        ``timeout_ns`` has passed, every event still waiting for a deadline (deferred
        events included); then run ``cleanup_event`` and end the thread."""

    def wakeup(self) -> None:
        """Make the queue look at the clock again (for tests that move a MockTime)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Shut down with no timeout and wait for the queue's thread to end."""
