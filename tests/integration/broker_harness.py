"""Real kafka-py broker processes for integration tests.

Each ``BrokerProcess`` runs ``python -m kafka_py.core.kafka`` with its own server.properties,
log dir and listener port, against the session's ZooKeeper under a chroot that is unique
to its cluster (so clusters of different tests never see each other's topics). Readiness
is a condition, never a fixed sleep: the process logged "[KafkaServer id=N] started", its
/brokers/ids/N znode exists and its port accepts connections.

Ports and processes come the way kafka_py.testing's clusters get theirs: ``free_port``
reserves a port across the test processes of the machine (kafka_py/testing/ports.py), and a
broker is forked from the test process's launcher (``launch``, kafka_py/testing/cluster.py),
which has the broker's modules loaded already, so a start costs no imports; it dies with the
test process, also when that process is killed -9. A broker with a ``preexec_fn`` (resource
limits, say) is a ``python -m kafka_py.core.kafka`` process of its own, tied to the test process
the same way (``dies_with_this_process``, kafka_py/testing/launcher.py).
"""
from __future__ import annotations

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import uuid
from typing import Callable, Optional

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from kafka_py.testing.cluster import LaunchedProcess, launch
from kafka_py.testing.launcher import dies_with_this_process
from kafka_py.testing.ports import PortReservation, reserve_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Held until the test process ends: a broker keeps its port across restarts, and no other
# test process may take it while the broker is down.
_RESERVED_PORTS: list[PortReservation] = []


def free_port() -> int:
    """A port for a broker of this test process, reserved for it against every other test
    process on the machine, and below the ephemeral range outgoing connections draw from."""
    reservation = reserve_port()
    _RESERVED_PORTS.append(reservation)
    return reservation.port


def wait_until(condition: Callable[[], bool], timeout: float, message: str | Callable[[], str],
               interval: float = 0.05) -> None:
    """Poll ``condition`` until it holds (for things that offer no event to wait on). ``message``
    may be a function, to say what was last seen when the wait fails."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return
        if time.monotonic() > deadline:
            raise TimeoutError(message() if callable(message) else message)
        time.sleep(interval)


def read_znode(zk: KazooClient, path: str):
    """``zk.get(path)``, or None when the znode is not there. One read: a znode checked with
    exists() may be gone by the get() after it (a session expiring takes its ephemerals)."""
    try:
        return zk.get(path)
    except NoNodeError:
        return None


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class ServesMetadata:
    """What a test asks any broker over the wire, whichever way it keeps its metadata
    (ZooKeeper-mode ``BrokerProcess`` or a KRaft node): needs ``port`` and ``broker_id``."""

    port: int
    broker_id: int

    def metadata(self, topics: tuple[str, ...] = ()):
        """This broker's own Metadata (v9) answer for ``topics`` (none: brokers only)."""
        from kafka_py.clients.common.protocol.api_keys import ApiKeys
        from kafka_py.clients.common.protocol.entities import build_entity
        from kafka_py.clients.common.protocol.messages import request_schema

        request = build_entity(request_schema(ApiKeys.METADATA, 9), {
            "topics": [{"name": t} for t in topics], "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False})
        with RawClient(self.port, timeout=10) as client:
            return client.request(ApiKeys.METADATA, 9, request)

    def knows_itself(self) -> bool:
        return any(int(b.node_id) == self.broker_id for b in self.metadata().brokers)

    def leads(self, topic: str, partitions: list[int]) -> bool:
        """Whether this broker's own Metadata names it the leader of each of ``partitions``: its
        LeaderAndIsr for them is done (the controller sends it before the UpdateMetadata that
        this reflects), which the partition-state znode alone does not say."""
        led = {int(p.partition_index) for t in self.metadata((topic,)).topics
               if t.name == topic and int(t.error_code) == 0
               for p in t.partitions if int(p.error_code) == 0 and int(p.leader_id) == self.broker_id}
        return set(partitions) <= led



class NodeProcess:
    """What a test's broker or controller process has, whichever harness made it: the process
    (forked from the launcher, or one of its own), the output file it appends to across
    restarts (``_run_offset``: where this run's lines begin), and the ways to end it."""

    process: Optional[subprocess.Popen | LaunchedProcess] = None
    output_path: pathlib.Path
    _output = None  # the output file, held open for a process of its own
    _run_offset = 0
    kind = "broker"

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM (a clean shutdown); returns the exit status."""
        return self._signal_and_wait(signal.SIGTERM, timeout)

    def kill(self) -> int:
        """SIGKILL: no shutdown at all, as a crash."""
        return self._signal_and_wait(signal.SIGKILL, 30.0)

    def _signal_and_wait(self, sig: int, timeout: float) -> int:
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # kill -3 first: the broker prints every thread's stack, which says where it hung.
            self.process.send_signal(signal.SIGQUIT)
            try:
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            self.process.kill()
            code = self.process.wait()
            raise RuntimeError(f"{self.kind} did not stop within {timeout}s:\n{self.tail(400)}")
        finally:
            self.process = None
            if self._output is not None:
                self._output.close()
                self._output = None
        return code

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def run_output(self) -> bytes:
        """What this run of the process wrote."""
        with open(self.output_path, "rb") as f:
            f.seek(self._run_offset)
            return f.read()

    def output(self) -> str:
        return self.output_path.read_text(errors="replace") if self.output_path.exists() else ""

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.output().splitlines()[-lines:])


class BrokerProcess(NodeProcess, ServesMetadata):
    """One broker process; start, stop (SIGTERM), kill (SIGKILL) and restart it."""

    def __init__(self, workdir: pathlib.Path, zk_connect: str, chroot: str, broker_id: int = 0,
                 port: Optional[int] = None, overrides: Optional[dict[str, str]] = None,
                 env: Optional[dict[str, str]] = None,
                 preexec_fn: Optional[Callable[[], None]] = None) -> None:
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.zk_hosts = zk_connect
        self.chroot = chroot
        self.broker_id = broker_id
        self.port = port if port is not None else free_port()
        self.log_dir = self.workdir / "kafka-logs"
        self.config_path = self.workdir / "server.properties"
        self.output_path = self.workdir / "broker.out"
        self.logs_dir = self.workdir / "logs"
        self.overrides = dict(overrides or {})
        self.env = dict(env or {})
        # Run in the child before the broker starts (resource limits, say), on every start.
        self.preexec_fn = preexec_fn
        self.process = None
        self.write_config()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def zk_connect(self) -> str:
        return f"{self.zk_hosts}{self.chroot}"

    def properties(self) -> dict[str, str]:
        props = {
            "broker.id": str(self.broker_id),
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(self.log_dir),
            "zookeeper.connect": self.zk_connect,
            # Short enough that a killed broker's registration goes away quickly.
            "zookeeper.session.timeout.ms": "4000",
            "num.network.threads": "2",
            "num.io.threads": "4",
            "num.partitions": "1",
            "default.replication.factor": "1",
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            # Alone in its cluster: nothing to move at shutdown, so no retries to wait out.
            "controlled.shutdown.retry.backoff.ms": "200",
        }
        props.update(self.overrides)
        return props

    def write_config(self) -> None:
        self.config_path.write_text("".join(f"{k}={v}\n" for k, v in self.properties().items()))

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 60.0, wait: bool = True) -> "BrokerProcess":
        # Only this run's lines count: the output file is appended across restarts.
        self._run_offset = self.output_path.stat().st_size if self.output_path.exists() else 0
        # Kafka's log files (server.log, controller.log, state-change.log...) per broker.
        env = dict(PYTHONUNBUFFERED="1", LOG_DIR=str(self.logs_dir), **self.env)
        if self.preexec_fn is None:
            self.process = launch("kafka_py.core.kafka", [self.config_path], self.output_path, env=env, cwd=ROOT)
        else:
            # something to run in the child first: a process of its own, not a fork of the launcher
            self._output = open(self.output_path, "ab")
            self.process = subprocess.Popen(
                [sys.executable, "-m", "kafka_py.core.kafka", str(self.config_path)],
                cwd=ROOT, stdout=self._output, stderr=subprocess.STDOUT, env=dict(os.environ, **env),
                preexec_fn=dies_with_this_process(self.preexec_fn))
        if wait:
            self.wait_started(timeout)
        return self

    def wait_started(self, timeout: float = 60.0) -> None:
        marker = f"[KafkaServer id={self.broker_id}] started".encode()
        start_offset = self._run_offset

        def ready() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"broker exited with {self.process.returncode}:\n{self.tail()}")
            with open(self.output_path, "rb") as f:
                f.seek(start_offset)
                return marker in f.read()

        wait_until(ready, timeout, f"broker {self.broker_id} did not start:\n{self.tail()}")
        wait_until(lambda: self.registration() is not None, timeout, "broker not registered in ZooKeeper")
        wait_until(lambda: port_open(self.port), timeout, "broker port not open")
        # Serving requests starts before the controller's first UpdateMetadata arrives; until
        # then Metadata lists no brokers and admin requests see an empty cluster.
        wait_until(self.knows_itself, timeout, "broker metadata never listed the broker")

    def restart(self, timeout: float = 60.0) -> "BrokerProcess":
        # A killed broker's ephemeral registration lives until its session expires; a new
        # process would wait for that before registering, so waiting here bounds it once.
        wait_until(lambda: self.registration() is None, 30.0, "old broker registration did not expire")
        return self.start(timeout)

    # ------------------------------------------------------------------ inspection

    def zk(self) -> KazooClient:
        client = KazooClient(hosts=self.zk_connect, timeout=10.0)
        client.start(timeout=10.0)
        return client

    def registration(self) -> Optional[dict]:
        # Through the bare hosts: the chroot may not exist yet.
        client = KazooClient(hosts=self.zk_hosts, timeout=10.0)
        client.start(timeout=10.0)
        path = f"{self.chroot}/brokers/ids/{self.broker_id}"
        try:
            found = read_znode(client, path)  # never there, or its session expired this very moment
            return None if found is None else json.loads(found[0])
        finally:
            client.stop()
            client.close()



def unique_chroot(prefix: str = "kafka-py-test") -> str:
    return f"/{prefix}-{uuid.uuid4().hex[:12]}"


class RawClient:
    """A blocking connection speaking the wire protocol through kafka_py.clients.common.protocol, for tests
    that send what no well-behaved client would."""

    def __init__(self, port: int, timeout: float = 30.0, client_id: str = "raw-test-client",
                 host: str = "127.0.0.1") -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.client_id = client_id
        self._correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "RawClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send_bytes(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, api_key, version: int, request) -> int:
        from kafka_py.clients.common.protocol.headers import RequestHeader
        from kafka_py.clients.common.protocol.messages import encode_request

        self._correlation_id += 1
        header = RequestHeader.for_request(api_key, version, self._correlation_id, self.client_id)
        self.sock.sendall(encode_request(header, request))
        return self._correlation_id

    def receive_frame(self) -> bytes:
        size = int.from_bytes(self._recv_exactly(4), "big", signed=True)
        return self._recv_exactly(size)

    def receive(self, api_key, version: int):
        from kafka_py.clients.common.protocol.messages import decode_response

        header, response = decode_response(self.receive_frame(), api_key, version)
        assert header.correlation_id == self._correlation_id
        return response

    def request(self, api_key, version: int, request):
        self.send(api_key, version, request)
        return self.receive(api_key, version)

    def _recv_exactly(self, size: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            chunk = self.sock.recv(size - len(chunks))
            if not chunk:
                raise ConnectionError("connection closed by the broker")
            chunks += chunk
        return bytes(chunks)

    def closed_by_broker(self) -> bool:
        """True once the broker has closed this connection (EOF or reset within the timeout)."""
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False
