"""A real ZooKeeper server for tests, started through bin/zookeeper-server-start.sh.

Each server gets a free port and its own data directory, so tests never touch a
ZooKeeper an operator is running on 2181. The port is reserved and the process tied to the
test process as the brokers' are (tests/integration/broker_harness.py).
"""
from __future__ import annotations

import os
import pathlib
import signal
import socket
import subprocess
import time

from kafka_py.testing import class_data
from kafka_py.testing.launcher import dies_with_this_process
from tests.integration.broker_harness import free_port

ROOT = pathlib.Path(__file__).resolve().parents[1]


def four_letter_word(port: int, word: bytes = b"srvr", timeout: float = 1.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(word)
        chunks = []
        while chunk := s.recv(4096):
            chunks.append(chunk)
        return b"".join(chunks)


class ZooKeeperServer:
    def __init__(self, workdir: pathlib.Path):
        self.workdir = pathlib.Path(workdir)
        self.port = free_port()
        self.data_dir = self.workdir / "zookeeper-data"
        self.config = self.workdir / "zookeeper.properties"
        self.process: subprocess.Popen | None = None

    @property
    def connect_string(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> "ZooKeeperServer":
        self.config.write_text(
            f"dataDir={self.data_dir}\nclientPort={self.port}\nclientPortAddress=127.0.0.1\n"
            "maxClientCnxns=0\nadmin.enableServer=false\ntickTime=500\n"
            "4lw.commands.whitelist=srvr,ruok\n"
        )
        # the class-data archive kafka_py.testing's ZooKeepers map (kafka_py/testing/class_data.py)
        archive = class_data.zookeeper_archive()
        if not archive.exists():
            class_data.start_making_zookeeper_archive()
        env = dict(os.environ, LOG_DIR=str(self.workdir / "logs"),
                   KAFKA_OPTS=" ".join(class_data.sharing_options(archive)))
        self.process = subprocess.Popen(
            [str(ROOT / "bin" / "zookeeper-server-start.sh"), str(self.config)],
            stdout=open(self.workdir / "zookeeper.out", "wb"), stderr=subprocess.STDOUT,
            env=env, start_new_session=True, preexec_fn=dies_with_this_process(),
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"zookeeper exited: {(self.workdir / 'zookeeper.out').read_text()}")
            try:
                if b"Mode: standalone" in four_letter_word(self.port):
                    return self
            except OSError:
                pass
            time.sleep(0.1)  # polling a port that has no event to wait on
        self.stop()
        raise TimeoutError(f"zookeeper did not start on port {self.port}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None
