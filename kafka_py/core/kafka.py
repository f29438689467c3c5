"""Port of core/src/main/scala/kafka/Kafka.scala: the broker's entry point.

    python -m kafka_py.core.kafka config/server.properties [--override key=value ...]

Loads server.properties (``--override`` values win), configures logging
(config/logging.yaml, or the file KAFKA_PY_LOGGING_CONFIG names), builds the server and
starts it: a KafkaRaftServer when ``process.roles`` is set (KRaft mode), else a
KafkaServer on ZooKeeper, as Kafka.buildServer chooses. SIGTERM or SIGINT shuts the broker down cleanly (controlled shutdown, logs
flushed and closed, clean-shutdown marker written) and the process exits 0. An invalid
configuration exits 1 with one line naming the key, before anything starts; a failed
startup exits 1 after stopping what it had started.

When the broker halts (Kafka's Exit.halt: all its log dirs have failed), the process stops the
broker in order without a controlled shutdown, closing every connection, and exits with the
halt's status (1); should that stop take longer than HALT_STOP_TIMEOUT_S, it ends the process
there and then, as Kafka's halt would have at once.

Before anything starts, the process takes the tuning its environment asks for
(kafka_py.tuning.tune_process: KAFKA_PY_CPU_AFFINITY and KAFKA_PY_SCHED_POLICY, off
unless set; KAFKA_PY_GC, the garbage collector's settings), the Python counterpart of the
JVM options Kafka's launcher takes from KAFKA_JVM_PERFORMANCE_OPTS.
"""
from __future__ import annotations

import logging
import signal
import sys
import threading
from typing import Optional, Sequence

import click

from kafka_py.core.utils import crash_points
from kafka_py.clients.common.config.config_def import ConfigException
from kafka_py.core.utils.exit import Exit, halt_process
from kafka_py.core.utils.logging_setup import configure_logging
from kafka_py.core.utils.thread_dump import install_thread_dump_handler
from kafka_py.tuning import TuningError, freeze_startup_objects, tune_process
from kafka_py.tuning.startup_imports import leave_out_test_libraries

logger = logging.getLogger("kafka_py.core.kafka")  # not "__main__" under python -m

USAGE = "USAGE: python -m kafka_py.core.kafka server.properties [--override property=value]*"


# How long an orderly stop after a halt may take before the process just ends.
HALT_STOP_TIMEOUT_S = 30.0


# How often the main thread wakes to run a stop signal's handler that another thread received.
STOP_POLL_INTERVAL_S = 0.5


class _HaltRequest:
    """The first Exit.halt of the process, and the deadline that bounds the stop after it."""

    def __init__(self, stop_requested: threading.Event) -> None:
        self._stop_requested = stop_requested
        self._lock = threading.Lock()
        self.status: Optional[int] = None
        self._deadline: Optional[threading.Timer] = None

    def __call__(self, status_code: int, message: Optional[str]) -> None:
        # Runs on whichever broker thread halts (the LogDirFailureHandler); the main thread
        # does the stopping, so this returns and Exit.halt ends the calling thread.
        with self._lock:
            if self.status is not None:
                return
            self.status = status_code
            self._deadline = threading.Timer(HALT_STOP_TIMEOUT_S, self._halt_now)
            self._deadline.daemon = True
            self._deadline.name = "halt-deadline"
            self._deadline.start()
        logger.critical("Halting Kafka (exit status %d)%s; stopping the broker first", status_code,
                        f": {message}" if message else "")
        self._stop_requested.set()

    def _halt_now(self) -> None:
        logger.critical("The broker did not stop within %.0f s of the halt; exiting now", HALT_STOP_TIMEOUT_S)
        halt_process(self.status if self.status is not None else 1, None)


class _StartupInterrupted(BaseException):
    """A stop signal arrived while the broker was still starting: abandon the startup."""


def get_props_from_args(config_file: str, overrides: Sequence[str]):
    """The broker's KafkaConfig from the file and the ``--override key=value`` arguments."""
    from kafka_py.server.kafka_config import KafkaConfig

    for item in overrides:
        if "=" not in item:
            raise click.UsageError(f"Invalid --override {item!r}: expected property=value")
    return KafkaConfig.from_file(config_file, list(overrides))


def run(config_file: str, overrides: Sequence[str]) -> int:
    """Start a broker and block until a stop signal has shut it down; the exit status."""
    try:
        config = get_props_from_args(config_file, overrides)
    except ConfigException as e:
        click.echo(f"Invalid broker configuration: {e}", err=True)
        return 1
    except OSError as e:
        click.echo(f"Cannot read broker configuration {config_file}: {e.strerror or e}", err=True)
        return 1

    if config.uses_self_managed_quorum:
        # KRaft mode (process.roles set): Kafka.buildServer's KafkaRaftServer. Building it checks
        # the formatted log dirs, so a refusal is a startup failure like any other.
        from kafka_py.server.kafka_raft_server import KafkaRaftServer

        try:
            server = KafkaRaftServer(config)
        except Exception as e:  # noqa: BLE001
            logger.critical("Exiting Kafka: %s", e)
            click.echo(f"Exiting Kafka: {e}", err=True)
            return 1
    else:
        from kafka_py.server.kafka_server import KafkaServer

        server = KafkaServer(config)
    freeze_startup_objects()  # tuning: kafka_py/tuning/gc_tuning.py
    stop_requested = threading.Event()
    phase = ["starting"]
    halt = _HaltRequest(stop_requested)
    Exit.set_halt_procedure(halt)

    def on_signal(signum: int, _frame: object) -> None:
        name = signal.Signals(signum).name
        if phase[0] == "starting":
            logger.info("Received %s during startup; aborting the startup", name)
            phase[0] = "stopping"
            raise _StartupInterrupted(name)
        if phase[0] == "running":
            logger.info("Received %s; shutting down", name)
            phase[0] = "stopping"
            stop_requested.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        try:
            server.startup()
        except (Exception, _StartupInterrupted) as e:
            # KafkaServer.startup() has already shut down what it started.
            logger.critical("Exiting Kafka: %s", e)
            return 1
        phase[0] = "running"
        if stop_requested.is_set():
            phase[0] = "stopping"
        # Python runs signal handlers on the main thread between bytecodes. A wait without a
        # timeout only returns to bytecode if the kernel happened to interrupt this very
        # thread; a signal taken by any other thread would wait for the next wake-up.
        while not stop_requested.wait(STOP_POLL_INTERVAL_S):
            pass
        phase[0] = "stopping"
        try:
            if config.uses_self_managed_quorum:
                server.shutdown()
            else:
                server.shutdown(controlled_shutdown=halt.status is None)
        except Exception:  # noqa: BLE001
            logger.critical("Halting Kafka.", exc_info=True)
            return 1
        server.await_shutdown()
        return 0 if halt.status is None else halt.status
    except Exception:  # noqa: BLE001
        logger.critical("Exiting Kafka due to fatal exception", exc_info=True)
        return 1
    finally:
        # The deadline, once a halt started it, is left running: should a thread the stop did
        # not end keep the interpreter from exiting, it still ends the process.
        Exit.reset_halt_procedure()


@click.command(context_settings={"help_option_names": ["--help", "-h"]}, help=USAGE)
@click.argument("config_file", type=click.Path(dir_okay=False))
@click.option("--override", "overrides", multiple=True, metavar="property=value",
              help="Optional property that should override values set in server.properties file")
@click.option("--logging-config", "logging_config", default=None, metavar="FILE",
              help="YAML logging configuration (default: config/logging.yaml)")
def main(config_file: str, overrides: tuple[str, ...], logging_config: Optional[str]) -> None:
    leave_out_test_libraries()  # tuning: kafka_py/tuning/startup_imports.py, before kio is imported
    crash_points.arm_from_environment()
    configure_logging(logging_config)
    # kill -3 prints every thread's stack, as it does for the JVM running Kafka.
    install_thread_dump_handler()
    try:
        tune_process()  # before any thread exists, so that every thread inherits it
    except TuningError as e:
        click.echo(str(e), err=True)
        sys.exit(1)
    sys.exit(run(config_file, overrides))


if __name__ == "__main__":
    main()
