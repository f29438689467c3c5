"""kafka_py/core/utils/exit.py (Kafka's Exit) and the halt procedure of the broker's entry point.

The default procedures end the process, so those cases run in a child interpreter.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from kafka_py.core.utils.exit import Exit
from kafka_py.core.utils.shutdownable_thread import FatalExitError
from tests.zookeeper_harness import ROOT


def run_python(code: str) -> subprocess.CompletedProcess:
    # bounded: a child that did not end by itself fails the test instead of hanging it
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


def test_halt_runs_the_procedure_and_never_returns() -> None:
    calls = []
    Exit.set_halt_procedure(lambda status, message: calls.append((status, message)))
    try:
        with pytest.raises(FatalExitError) as raised:
            Exit.halt(1, "all log dirs failed")
    finally:
        Exit.reset_halt_procedure()
    assert calls == [(1, "all log dirs failed")]
    assert raised.value.status_code == 1


def test_default_halt_ends_the_process_with_its_status_and_the_log_flushed() -> None:
    result = run_python("""
        import logging, sys, threading, time
        logging.basicConfig(stream=sys.stdout, level=logging.INFO)
        logging.getLogger("test").critical("the reason")
        # a non-daemon thread would keep a normal exit waiting; a halt does not wait for it
        threading.Thread(target=time.sleep, args=(3600,)).start()
        from kafka_py.core.utils.exit import Exit
        Exit.halt(3)
        print("not reached")
    """)
    assert result.returncode == 3, result.stderr
    assert "the reason" in result.stdout and "not reached" not in result.stdout


def test_entry_point_halt_ends_the_process_when_the_stop_does_not_finish() -> None:
    """kafka_py.core.kafka's procedure asks for an orderly stop; a stop that hangs is cut short."""
    result = run_python("""
        import logging, sys, threading, time
        logging.basicConfig(stream=sys.stdout, level=logging.INFO)
        import kafka_py.core.kafka as entry
        entry.HALT_STOP_TIMEOUT_S = 0.5
        stop_requested = threading.Event()
        halt = entry._HaltRequest(stop_requested)
        halt(1, "Shutdown broker because all log dirs in /x have failed")
        assert stop_requested.is_set() and halt.status == 1
        halt(2, "a second halt changes nothing")
        assert halt.status == 1
        # the stop never finishes: the deadline must end the process
        threading.Thread(target=time.sleep, args=(3600,)).start()
    """)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "did not stop within" in result.stdout
