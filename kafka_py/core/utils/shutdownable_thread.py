"""Port of core/src/main/scala/kafka/utils/ShutdownableThread.scala.

A thread that calls ``do_work`` over and over until somebody initiates shutdown. Fetcher
threads, the controller's event thread, the log cleaner and the request purgatory reaper are
all built on it.

Python cannot interrupt a thread blocked in a call, so ``is_interruptible`` is kept for
signature parity only: a subclass whose ``do_work`` blocks must wait on something that its
``initiate_shutdown`` override (or ``pause``) can wake, e.g. a Condition it notifies or a
queue it puts a sentinel in.
"""
from __future__ import annotations

import logging
import threading

from kafka_py.core.utils.logging import IdentLogger


class FatalExitError(Exception):
    """Raised from ``do_work`` to stop the thread at once without logging it as a failure
    (Kafka's FatalExitError; here the exit itself is left to whoever awaits the thread)."""

    def __init__(self, status_code: int = 1) -> None:
        super().__init__(f"Fatal exit with status {status_code}")
        self.status_code = status_code


class ShutdownableThread(threading.Thread):
    def __init__(self, name: str, is_interruptible: bool = True, daemon: bool = False) -> None:
        super().__init__(name=name, daemon=daemon)
        self.is_interruptible = is_interruptible
        # Kafka names a class's logger after the concrete class: every line of this thread, the
        # Starting/Stopped lines of this base included, goes to the subclass's module logger
        # under the ident the subclass gives (``self.logger.ident``)
        self.logger = IdentLogger(logging.getLogger(type(self).__module__), f"[{name}]: ")
        self._shutdown_initiated = threading.Event()
        self._shutdown_complete = threading.Event()
        self._state_lock = threading.Lock()
        self._is_started = False
        self._failure: BaseException | None = None

    # -- control ---------------------------------------------------------------------------

    def shutdown(self) -> None:
        self.initiate_shutdown()
        self.await_shutdown()

    def initiate_shutdown(self) -> bool:
        """Ask the loop to stop after the current ``do_work``; False if it was already asked."""
        with self._state_lock:
            if self._shutdown_initiated.is_set():
                return False
            self.logger.info("Shutting down")
            self._shutdown_initiated.set()
            return True

    def await_shutdown(self) -> None:
        """Wait for the loop to finish; ``initiate_shutdown`` must have been called first."""
        if not self._shutdown_initiated.is_set():
            raise RuntimeError("initiate_shutdown() was not called before await_shutdown()")
        # A thread that was never started has nothing to wait for.
        if self._is_started:
            self._shutdown_complete.wait()
        self.logger.info("Shutdown completed")

    def pause(self, timeout_ms: float) -> bool:
        """Sleep up to ``timeout_ms`` but return early when shutdown is initiated (True then)."""
        return self._shutdown_initiated.wait(timeout_ms / 1000.0)

    # -- state -----------------------------------------------------------------------------

    @property
    def is_running(self) -> bool:
        return not self._shutdown_initiated.is_set()

    @property
    def is_shutdown_initiated(self) -> bool:
        return self._shutdown_initiated.is_set()

    @property
    def is_shutdown_complete(self) -> bool:
        return self._shutdown_complete.is_set()

    @property
    def is_thread_failed(self) -> bool:
        """True when ``do_work`` raised while the thread was still meant to run."""
        return self._failure is not None

    # -- the loop --------------------------------------------------------------------------

    def do_work(self) -> None:
        raise NotImplementedError

    def start(self) -> None:
        # Marked before the OS thread exists so an immediate shutdown() still waits for it.
        self._is_started = True
        super().start()

    def run(self) -> None:
        self.logger.info("Starting")
        try:
            while self.is_running:
                self.do_work()
        except FatalExitError as e:
            self._shutdown_initiated.set()
            self._failure = e
            self.logger.info("Stopped on fatal exit (status %d)", e.status_code)
        except BaseException as e:  # noqa: BLE001 - mirror Kafka's catch of Throwable
            if self.is_running:
                self._failure = e
                self.logger.error("Error due to", exc_info=True)
        finally:
            self._shutdown_complete.set()
        self.logger.info("Stopped")
