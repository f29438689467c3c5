"""A broker in the test process, for tests that look at everything it still holds.

Tests that walk the process's objects (tests/leak_finder.py) run one KafkaServer here, with
real ZooKeeper and real sockets, and every client in a child process (``ClientWorker``,
tests/integration/client_worker.py), so that what a client keeps about a topic (metadata,
metrics, buffers) is not mistaken for the broker's. Other brokers of the same cluster, if
any, are broker processes (tests/integration/broker_harness.py).
"""
from __future__ import annotations

import contextlib
import gc
import logging
import os
import pathlib
import subprocess
import sys
import types
from typing import Any, Iterable, Iterator, Mapping, Optional

from kafka_py.log.log_manager import LogManager
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.server.kafka_server import KafkaServer
from tests.integration.broker_harness import ROOT, free_port, wait_until

# Kafka's LogManager starts its background tasks (retention, checkpoints, the deletion of
# ``-delete`` directories) 30 s after startup; these tests do not wait that long for them.
INITIAL_TASK_DELAY_MS = 1000

_SHARED_TYPES = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                 types.CodeType, types.FrameType)

# The checkpoint files of a log dir that name partitions (one "topic partition value" line each).
CHECKPOINT_FILES = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                    "log-start-offset-checkpoint", "cleaner-offset-checkpoint")


class ClientWorker:
    """kafka-python clients in a child process (tests/integration/client_worker.py): one
    command a call, which must answer ``ok``."""

    def __init__(self, bootstrap: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.integration.client_worker", bootstrap], cwd=ROOT,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def call(self, *args: object) -> None:
        self.process.stdin.write(" ".join(map(str, args)) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        assert answer.startswith("ok"), f"{args}: {answer or 'client worker exited'}"

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class _QuickTasksServer(KafkaServer):
    """A KafkaServer whose log manager's background tasks first run ``INITIAL_TASK_DELAY_MS``
    after startup rather than 30 s; everything else is the broker's own."""

    def _create_log_manager(self, initial_offline_dirs: list[str]) -> LogManager:
        manager = super()._create_log_manager(initial_offline_dirs)
        manager.initial_task_delay_ms = INITIAL_TASK_DELAY_MS
        return manager


# The loggers of a broker (its modules', the state change and request loggers, its
# ZooKeeper client's).
BROKER_LOGGERS = ("kafka_py", "state.change.logger", "kafka", "kazoo")


@contextlib.contextmanager
def in_process_broker(zk_connect: str, workdir: os.PathLike, broker_id: int = 0,
                      overrides: Optional[Mapping[str, str]] = None) -> Iterator[KafkaServer]:
    """A KafkaServer in this process on a free port, started, and shut down at the end;
    ``zk_connect`` includes the cluster's chroot. Its log dir is ``<workdir>/kafka-logs``,
    and it logs to ``<workdir>/server.log``, as a broker process does, and not into
    pytest's log capture, which keeps every record, and so every partition a record
    names, until the test ends."""
    workdir = pathlib.Path(workdir)
    props = {
        "broker.id": str(broker_id), "listeners": f"PLAINTEXT://127.0.0.1:{free_port()}",
        "log.dirs": str(workdir / "kafka-logs"), "zookeeper.connect": zk_connect,
        "num.network.threads": "1", "num.io.threads": "2", "controlled.shutdown.enable": "false",
        "group.initial.rebalance.delay.ms": "0",
        # a removed log's ``-delete`` directory goes 200 ms after its removal (the broker's
        # name of file.delete.delay.ms; 0 would have the deletion task run without a pause)
        "log.segment.delete.delay.ms": "200",
        "log.cleaner.enable": "true",
        # a client's metadata refresh must not bring a topic back
        "auto.create.topics.enable": "false",
    }
    props.update(overrides or {})
    # pytest attaches its capture to the root logger and to every logger that does not
    # propagate: the broker's loggers hang from a logger of their own instead, outside
    # logging's registry, whose only handler is the file (at the root's level).
    handler = logging.FileHandler(workdir / "server.log")
    handler.setFormatter(logging.Formatter("[%(asctime)s] %(levelname)s %(message)s (%(name)s)"))
    sink = logging.Logger("in-process-broker", logging.getLogger().getEffectiveLevel())
    sink.addHandler(handler)
    loggers = [logging.getLogger(name) for name in BROKER_LOGGERS]
    parents = [logger.parent for logger in loggers]
    for logger in loggers:
        logger.parent = sink
    logging.Logger.manager._clear_cache()
    server = None
    try:
        server = _QuickTasksServer(KafkaConfig(props, do_log=False))
        server.startup()
        wait_until(lambda: server.metadata_cache.has_alive_broker(broker_id), 30,
                   "no metadata from the controller")
        yield server
    finally:
        if server is not None:
            server.shutdown()
        for logger, parent in zip(loggers, parents):
            logger.parent = parent
        logging.Logger.manager._clear_cache()
        handler.close()


def log_dirs_of(server: KafkaServer, marker: str) -> list[str]:
    """The names in the broker's log dirs (partition dirs, ``-delete`` dirs) containing ``marker``."""
    return [name for d in server.config.log_dirs for name in os.listdir(d) if marker in name]


def checkpoint_lines_of(server: KafkaServer, marker: str) -> list[str]:
    """The lines of the broker's checkpoint files (``CHECKPOINT_FILES``) containing ``marker``,
    each prefixed with its file's name."""
    found = []
    for d in server.config.log_dirs:
        for name in CHECKPOINT_FILES:
            path = os.path.join(d, name)
            if os.path.exists(path):
                with open(path) as f:
                    found += [f"{name}: {line.strip()}" for line in f if marker in line]
    return found


def reachable_from(roots: Iterable[Any]) -> list[Any]:
    """Every object the collector can reach from ``roots``: the state a broker rightly keeps
    about a partition that left it (the metadata cache's view of the cluster, say), for
    tests/leak_finder.py to ignore."""
    seen: dict[int, Any] = {}
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen[id(obj)] = obj
        # not through classes, functions and modules: from there everything is reachable
        if not isinstance(obj, _SHARED_TYPES):
            stack.extend(r for r in gc.get_referents(obj) if not isinstance(r, _SHARED_TYPES))
    return list(seen.values())


__all__ = ["BROKER_LOGGERS", "CHECKPOINT_FILES", "ClientWorker", "INITIAL_TASK_DELAY_MS", "checkpoint_lines_of",
           "in_process_broker", "log_dirs_of", "reachable_from"]
