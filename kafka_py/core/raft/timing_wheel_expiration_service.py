"""Port of core/src/main/scala/kafka/raft/TimingWheelExpirationService.scala (Kafka 2.8.2).

The raft client's ExpirationService on the broker's timing wheel (kafka_py/core/utils/timer, the
SystemTimer the purgatories use): each future is also a TimerTask of its timeout, failed with
REQUEST_TIMED_OUT when the wheel reaches it, and taken off the wheel as soon as it completes
some other way, so completed waits leave nothing behind. The ``raft-expiration-reaper``
thread advances the wheel, waking at least every 200 ms to notice a shutdown.
"""
from __future__ import annotations

import logging

from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.raft.expiration_service import ExpirationService
from kafka_py.raft.internals.completable_future import CompletableFuture
from kafka_py.core.utils.shutdownable_thread import ShutdownableThread
from kafka_py.core.utils.timer.system_timer import Timer
from kafka_py.core.utils.timer.timer_task import TimerTask

logger = logging.getLogger(__name__)

WORK_TIMEOUT_MS = 200


class TimerTaskCompletableFuture(CompletableFuture, TimerTask):
    def __init__(self, delay_ms: int) -> None:
        CompletableFuture.__init__(self)
        TimerTask.__init__(self, delay_ms)

    def run(self) -> None:
        self.complete_exceptionally(Errors.REQUEST_TIMED_OUT.exception(
            f"Future failed to be completed before timeout of {self.delay_ms} ms was reached"))


class _ExpiredOperationReaper(ShutdownableThread):
    def __init__(self, timer: Timer) -> None:
        super().__init__("raft-expiration-reaper", is_interruptible=False, daemon=True)
        self._timer = timer

    def do_work(self) -> None:
        self._timer.advance_clock(WORK_TIMEOUT_MS)

    def initiate_shutdown(self) -> bool:
        started = super().initiate_shutdown()
        # The reaper may be waiting on the wheel's delay queue: wake it to see the shutdown.
        self._timer.wakeup()
        return started


class TimingWheelExpirationService(ExpirationService):
    def __init__(self, timer: Timer) -> None:
        self._timer = timer
        self._expiration_reaper = _ExpiredOperationReaper(timer)
        self._expiration_reaper.start()

    def fail_after(self, timeout_ms: int) -> CompletableFuture:
        future = TimerTaskCompletableFuture(timeout_ms)
        # Completed (by the timer or by its owner): off the wheel.
        future.when_complete(lambda _value, _exception: future.cancel())
        self._timer.add(future)
        return future

    def shutdown(self) -> None:
        self._expiration_reaper.shutdown()
        self._timer.shutdown()
