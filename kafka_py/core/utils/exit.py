"""Port of core/src/main/scala/kafka/utils/Exit.scala and clients/.../common/utils/Exit.java
(Kafka 2.8.2): ``exit`` and ``halt`` through procedures that the entry point and tests can
replace.

Kafka's default halt is ``Runtime.halt``: the process ends at once, without shutdown hooks.
Here the default is ``os._exit`` after flushing the log handlers, so that the line saying
why reaches the log. The broker's entry point (kafka_py/core/kafka.py) installs a procedure that
stops the broker in order instead, with a deadline after which it does ``os._exit``; such a
procedure returns, and ``halt`` then raises FatalExitError so that the thread that called it
stops where it is (Kafka's ``halt`` never returns either).
"""
from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Callable, Optional

from kafka_py.core.utils.shutdownable_thread import FatalExitError

Procedure = Callable[[int, Optional[str]], None]


def _flush_log_handlers() -> None:
    # os._exit skips every buffer: what the last lines say is the reason the broker stopped
    for handler in list(logging.getLogger().handlers):
        try:
            handler.flush()
        except Exception:  # noqa: BLE001 - exiting matters more than one handler
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass


def halt_process(status_code: int, message: Optional[str] = None) -> None:
    """End the process now with ``status_code`` (the default halt procedure)."""
    _flush_log_handlers()
    os._exit(status_code)


def _default_exit(status_code: int, message: Optional[str]) -> None:
    sys.exit(status_code)


class Exit:
    """Process-wide exit and halt procedures (Kafka's ``Exit`` object)."""

    _lock = threading.Lock()
    _halt_procedure: Procedure = staticmethod(halt_process)
    _exit_procedure: Procedure = staticmethod(_default_exit)

    @classmethod
    def halt(cls, status_code: int, message: Optional[str] = None) -> None:
        """Stop the process with ``status_code``; raises FatalExitError if the procedure returns."""
        with cls._lock:
            procedure = cls._halt_procedure
        procedure(status_code, message)
        raise FatalExitError(status_code)

    @classmethod
    def exit(cls, status_code: int, message: Optional[str] = None) -> None:
        with cls._lock:
            procedure = cls._exit_procedure
        procedure(status_code, message)
        raise FatalExitError(status_code)

    @classmethod
    def set_halt_procedure(cls, procedure: Procedure) -> None:
        with cls._lock:
            cls._halt_procedure = procedure

    @classmethod
    def reset_halt_procedure(cls) -> None:
        with cls._lock:
            cls._halt_procedure = halt_process

    @classmethod
    def set_exit_procedure(cls, procedure: Procedure) -> None:
        with cls._lock:
            cls._exit_procedure = procedure

    @classmethod
    def reset_exit_procedure(cls) -> None:
        with cls._lock:
            cls._exit_procedure = _default_exit


__all__ = ["Exit", "Procedure", "halt_process"]
