"""``KafkaCluster``: real kafka-py brokers for a test, started and stopped by a context manager.

    with KafkaCluster(brokers=1) as cluster:
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)

A cluster is real processes over real sockets: brokers (``python -m kafka_py.core.kafka``, the
code ``bin/kafka-server-start.sh`` runs) in KRaft mode by default, each formatted with
``kafka-storage format`` first, or in ZooKeeper mode with a ZooKeeper (Debian's, as
``bin/zookeeper-server-start.sh`` runs it) started for the cluster alone. Everything lives
under one temporary directory, removed on exit, and every process dies with the test
process (see launcher.py). Ports are reserved across test processes (ports.py).

The listener clients use is PLAINTEXT, SSL (certificates made for the cluster by
ssl_utils.py), SASL_PLAINTEXT or SASL_SSL (SCRAM-SHA-256 and SCRAM-SHA-512, with a user the
cluster creates once its brokers run); ``client_config`` gives each client library's settings
to reach it.

The brokers run with settings for tests, not for production: one network thread and two
request handlers, internal topics with few partitions and at most three replicas, no group
rebalance delay, and short heartbeats, so that a killed broker is fenced within a few
seconds. ``overrides`` wins over all of them.

This module imports only the standard library: the pytest plugin loads it in every test
run, and a test that starts a cluster should not pay for the broker's imports twice.
"""
from __future__ import annotations

import atexit
import base64
import json
import os
import pathlib
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from typing import Callable, Iterable, Mapping, Optional, Sequence

import kafka_py.testing.class_data as class_data
from kafka_py.testing.ports import PortReservation, reserve_port
from kafka_py.testing.wire import (
    NONE_ERROR,
    SCRAM_HASHES,
    TOPIC_ALREADY_EXISTS,
    UNKNOWN_TOPIC_OR_PARTITION,
    WireClient,
)

KRAFT, ZOOKEEPER = "kraft", "zookeeper"
# the security protocols of the client listener a cluster can have
LISTENERS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SCRAM_MECHANISMS = tuple(SCRAM_HASHES)
# Kafka's SaslSetup.createScramCredentials gives its test users this many iterations too
SCRAM_ITERATIONS = 4096
# the client libraries ``client_config`` speaks for
CLIENTS = ("kafka-python", "confluent-kafka", "aiokafka")
# Debian's zookeeper package, as bin/kafka-env.sh names its jars.
ZOOKEEPER_CLASSPATH = class_data.ZOOKEEPER_CLASSPATH
KRAFT_READY_MARKER = b"Transitioning from RECOVERY to RUNNING"
STARTUP_FAILED_MARKER = b"Exiting Kafka"


def wait_until(condition: Callable[[], bool], timeout: float, message: Callable[[], str] | str,
               interval: float = 0.02) -> None:
    """Poll ``condition`` until it holds; a process's log or a port offers no event to wait on."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(message() if callable(message) else message)
        time.sleep(interval)


# ---------------------------------------------------------------------------- the launcher

class _LauncherProcess:
    """This test process's launcher (launcher.py): one per process, started on first use."""

    _lock = threading.Lock()
    _current: Optional["_LauncherProcess"] = None

    def __init__(self) -> None:
        self.exits: dict[int, int] = {}
        self.started: dict[str, int] = {}
        self._cond = threading.Condition()
        self._tags = 0
        self.ready = threading.Event()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kafka_py.testing.launcher", str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, start_new_session=True,
            env=dict(os.environ, PYTHONUNBUFFERED="1"), close_fds=True)
        self._reader = threading.Thread(target=self._read, name="kafka-py-testing-launcher", daemon=True)
        self._reader.start()

    @classmethod
    def get(cls) -> "_LauncherProcess":
        with cls._lock:
            if cls._current is None or cls._current.process.poll() is not None:
                cls._current = _LauncherProcess()
            return cls._current

    @classmethod
    def shutdown(cls) -> None:
        with cls._lock:
            launcher, cls._current = cls._current, None
        if launcher is not None:
            launcher.close()

    def _read(self) -> None:
        for line in self.process.stdout:
            message = json.loads(line)
            with self._cond:
                if "ready" in message:
                    self.ready.set()
                elif "started" in message:
                    self.started[message["tag"]] = message["started"]
                    # A pid is reused once the system has gone round its pids (32,768 on
                    # many machines, soon passed by a test suite): an exit recorded for an
                    # earlier child of that pid is not this child's.
                    self.exits.pop(message["started"], None)
                elif "exit" in message:
                    self.exits[message["exit"]] = message["code"]
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def spawn(self, request: dict, timeout: float = 60.0) -> int:
        """Ask for a child; its pid."""
        with self._cond:
            self._tags += 1
            tag = request["tag"] = f"t{self._tags}"
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
            deadline = time.monotonic() + timeout
            while tag not in self.started:
                if self.process.poll() is not None:
                    raise RuntimeError(f"the cluster launcher exited with {self.process.returncode}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("the cluster launcher did not start a process")
                self._cond.wait(min(remaining, 0.5))
            return self.started.pop(tag)

    def tell(self, request: dict) -> None:
        """A request that has no answer (a directory to own or disown)."""
        with self._cond:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()

    def exit_code(self, pid: int) -> Optional[int]:
        with self._cond:
            return self.exits.get(pid)

    def wait_exit(self, pid: int, timeout: float) -> Optional[int]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while pid not in self.exits:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.process.poll() is not None:
                    return self.exits.get(pid)
                self._cond.wait(min(remaining, 0.5))
            return self.exits[pid]

    def close(self) -> None:
        # the launcher takes the end of its stdin as the end of the test process
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self._reader.join(timeout=5)


atexit.register(_LauncherProcess.shutdown)


class LaunchedProcess:
    """A process this test process's launcher forked, with the part of ``subprocess.Popen``'s
    interface tests use on a broker: ``pid``, ``returncode``, ``poll``, ``wait``,
    ``send_signal``, ``terminate`` and ``kill``. Its parent is the launcher, which reaps it
    and reports its exit code (negative for a signal, as Popen's)."""

    def __init__(self, launcher: _LauncherProcess, pid: int) -> None:
        self._launcher = launcher
        self.pid = pid
        self.returncode: Optional[int] = None

    def poll(self) -> Optional[int]:
        if self.returncode is None:
            code = self._launcher.exit_code(self.pid)
            if code is None and self._launcher.process.poll() is not None:
                code = -signal.SIGKILL  # the launcher's death took its children with it
            self.returncode = code
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        if self.poll() is None:
            self._launcher.wait_exit(self.pid, 1e9 if timeout is None else timeout)
            if self.poll() is None:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass  # ended a moment ago; the launcher reports it

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def launch(module: str, args: Sequence[str], out: pathlib.Path | str, env: Optional[Mapping[str, str]] = None,
           cwd: Optional[pathlib.Path | str] = None) -> LaunchedProcess:
    """``python -m module args`` forked from this process's launcher, on the broker's modules
    it has loaded already: a broker (``kafka_py.core.kafka``) starts without a second or two of
    imports. Its output goes to ``out`` (appended); ``env`` is added to the launcher's
    environment, the test process's as it was when the launcher started. For a process that
    needs more than that (resource limits, a network namespace), ``subprocess.Popen`` with
    ``launcher.dies_with_this_process`` as its ``preexec_fn``."""
    launcher = _LauncherProcess.get()
    open(out, "ab").close()  # there before this returns: a test reads it while the child starts
    request: dict = {"op": "run", "module": module, "args": [str(a) for a in args], "out": str(out),
                     "env": dict(env or {})}
    if cwd is not None:
        request["cwd"] = str(cwd)
    return LaunchedProcess(launcher, launcher.spawn(request))


def prewarm() -> None:
    """Start this process's launcher now (its imports take a second or two) so the first
    cluster does not wait for them; the pytest plugin calls it once tests that use a
    cluster are collected."""
    _LauncherProcess.get()


# ---------------------------------------------------------------------------- processes

class _Process:
    """One process of the cluster, a child of the launcher."""

    def __init__(self, name: str, workdir: pathlib.Path) -> None:
        self.name = name
        self.workdir = workdir
        self.output_path = workdir / f"{name}.out"
        self.pid: Optional[int] = None
        self.paused = False
        self._run_offset = 0

    def _spawn(self, request: dict) -> None:
        self._run_offset = self.output_path.stat().st_size if self.output_path.exists() else 0
        request["out"] = str(self.output_path)
        self.pid = _LauncherProcess.get().spawn(request)
        self.paused = False

    @property
    def running(self) -> bool:
        return self.pid is not None and _LauncherProcess.get().exit_code(self.pid) is None

    @property
    def exit_code(self) -> Optional[int]:
        return None if self.pid is None else _LauncherProcess.get().exit_code(self.pid)

    def run_output(self) -> bytes:
        try:
            with open(self.output_path, "rb") as f:
                f.seek(self._run_offset)
                return f.read()
        except FileNotFoundError:
            return b""

    def tail(self, lines: int = 50) -> str:
        try:
            text = self.output_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def send_signal(self, sig: int) -> None:
        if self.pid is not None and self.running:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> Optional[int]:
        """Send ``sig`` and wait for the exit (SIGKILL after ``timeout``); the exit code."""
        if self.pid is None:
            return None
        if self.paused and sig != signal.SIGKILL:
            self.send_signal(signal.SIGCONT)  # a stopped process would never handle the signal
        self.send_signal(sig)
        launcher = _LauncherProcess.get()
        code = launcher.wait_exit(self.pid, timeout)
        if code is None:
            self.send_signal(signal.SIGKILL)
            code = launcher.wait_exit(self.pid, 30.0)
        self.pid = None
        self.paused = False
        return code


class BrokerNode(_Process):
    """One broker (in KRaft mode a node with the broker role, maybe a controller as well)."""

    def __init__(self, cluster: "KafkaCluster", node_id: int, workdir: pathlib.Path, controller: bool) -> None:
        super().__init__(f"broker-{node_id}", workdir)
        self.cluster = cluster
        self.node_id = node_id
        self.controller = controller
        self.log_dir = workdir / "data"
        self.config_path = workdir / "server.properties"
        self.logs_dir = workdir / "logs"
        self.reservations: dict[str, PortReservation] = {}

    def port(self, name: str) -> int:
        if name not in self.reservations:
            self.reservations[name] = reserve_port()
        return self.reservations[name].port

    @property
    def client_port(self) -> int:
        return self.port("client")

    @property
    def admin_port(self) -> int:
        """The PLAINTEXT port the cluster itself talks to (the client port, for PLAINTEXT)."""
        return self.port("internal") if self.cluster.listener != "PLAINTEXT" else self.client_port

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.client_port}"

    def start(self) -> None:
        self._spawn({"op": "run", "module": "kafka_py.core.kafka", "args": [str(self.config_path)],
                     "env": {"LOG_DIR": str(self.logs_dir), "PYTHONUNBUFFERED": "1"}})

    def startup_finished(self) -> bool:
        """True once the broker serves; raises if it died or gave up starting."""
        output = self.run_output()
        code = self.exit_code
        if code is not None or STARTUP_FAILED_MARKER in output:
            raise RuntimeError(f"broker {self.node_id} failed to start (exit code {code}):\n{self.tail()}")
        if self.cluster.mode == KRAFT:
            return KRAFT_READY_MARKER in output
        return f"[KafkaServer id={self.node_id}] started".encode() in output

    def metadata(self, topics: Optional[Iterable[str]] = ()):
        with WireClient("127.0.0.1", self.admin_port) as client:
            return client.metadata(topics)

    def release_ports(self) -> None:
        for reservation in self.reservations.values():
            reservation.release()
        self.reservations.clear()


class ZooKeeperNode(_Process):
    def __init__(self, workdir: pathlib.Path) -> None:
        super().__init__("zookeeper", workdir)
        self.reservation = reserve_port()
        self.config_path = workdir / "zookeeper.properties"

    @property
    def port(self) -> int:
        return self.reservation.port

    def start(self) -> None:
        from kafka_py.config import config_path

        missing = [jar for jar in ZOOKEEPER_CLASSPATH if not os.path.exists(jar)]
        if missing or shutil.which("java") is None:
            raise RuntimeError("ZooKeeper mode needs Debian's zookeeper package (apt-get install zookeeper): "
                               f"missing {', '.join(missing) or 'java'}")
        self.config_path.write_text(
            f"dataDir={self.workdir / 'data'}\nclientPort={self.port}\nclientPortAddress=127.0.0.1\n"
            "maxClientCnxns=0\nadmin.enableServer=false\ntickTime=500\n4lw.commands.whitelist=srvr,ruok\n")
        logs = self.workdir / "logs"
        # ZOOKEEPER_JVM_OPTIONS, and the class-data archive of ZooKeeper's classes
        # (kafka_py/testing/class_data.py), made in the background the first time
        archive = class_data.zookeeper_archive()
        if not archive.exists():
            class_data.start_making_zookeeper_archive()
        argv = ["java", *class_data.ZOOKEEPER_JVM_OPTIONS, *class_data.sharing_options(archive),
                f"-Dzookeeper.log.dir={logs}", f"-Dkafka.logs.dir={logs}",
                f"-Dlog4j.configuration=file:{config_path('log4j.properties')}",
                "-Dzookeeper.admin.enableServer=false", "-cp", ":".join(ZOOKEEPER_CLASSPATH),
                class_data.ZOOKEEPER_MAIN, str(self.config_path)]
        self._spawn({"op": "exec", "argv": argv, "env": {"LOG_DIR": str(logs)}})

    def check_alive(self) -> None:
        if self.pid is not None and self.exit_code is not None:
            raise RuntimeError(f"zookeeper exited with {self.exit_code}:\n{self.tail()}")


# ---------------------------------------------------------------------------- the cluster

def _check_scram_value(what: str, value: str) -> None:
    # kafka-configs' --add-config syntax separates its entries with commas and brackets
    if not value or any(c in value for c in ",[]=") or value != value.strip():
        raise ValueError(f"{what} must be non-empty, without ',', '[', ']', '=' or surrounding spaces: {value!r}")


class KafkaCluster:
    """Brokers for a test: a context manager, ``bootstrap_servers`` once entered.

    * ``brokers``: how many brokers.
    * ``mode``: ``"kraft"`` (no ZooKeeper; ``controllers`` of the brokers are also the
      quorum's voters: one for fewer than three brokers, three otherwise) or ``"zookeeper"``
      (a ZooKeeper started for this cluster; Debian's zookeeper package must be installed).
    * ``overrides``: broker properties for every broker; ``broker_overrides``: per broker id.
    * ``listener``: the security protocol of the listener clients use: ``PLAINTEXT``,
      ``SSL``, ``SASL_PLAINTEXT`` or ``SASL_SSL``. Another than PLAINTEXT gets a PLAINTEXT
      listener beside it (``INTERNAL``) on which the brokers talk to each other and the
      cluster to them. SSL uses certificates made for the cluster (``pki``: the CA in
      ``pki.ca_cert``); SASL enables SCRAM-SHA-256 and SCRAM-SHA-512 and creates the user
      ``sasl_username`` with ``sasl_password`` (a random one unless given) for both;
      ``sasl_mechanism`` is the one ``client_config`` names.
    * ``temp_dir``: where the cluster's directory is made (removed on exit).
    """

    def __init__(self, brokers: int = 1, mode: str = KRAFT, *, controllers: Optional[int] = None,
                 overrides: Optional[Mapping[str, object]] = None,
                 broker_overrides: Optional[Mapping[int, Mapping[str, object]]] = None,
                 listener: str = "PLAINTEXT", sasl_mechanism: str = "SCRAM-SHA-512",
                 sasl_username: str = "kafka-py", sasl_password: Optional[str] = None,
                 temp_dir: Optional[str] = None, start_timeout: float = 60.0) -> None:
        if brokers < 1:
            raise ValueError("a cluster has at least one broker")
        if mode not in (KRAFT, ZOOKEEPER):
            raise ValueError(f"mode must be {KRAFT!r} or {ZOOKEEPER!r}, not {mode!r}")
        if listener not in LISTENERS:
            raise ValueError(f"listener must be one of {', '.join(LISTENERS)}, not {listener!r}")
        if sasl_mechanism not in SCRAM_MECHANISMS:
            raise ValueError(f"sasl_mechanism must be one of {', '.join(SCRAM_MECHANISMS)}, not {sasl_mechanism!r}")
        _check_scram_value("sasl_username", sasl_username)
        if sasl_password is not None:
            _check_scram_value("sasl_password", sasl_password)
        self.broker_count = brokers
        self.mode = mode
        self.controller_count = controllers if controllers is not None else (1 if brokers < 3 else 3)
        if mode == KRAFT and not 1 <= self.controller_count <= brokers:
            raise ValueError("controllers must be between 1 and the number of brokers")
        self.overrides = {k: str(v) for k, v in (overrides or {}).items()}
        self.broker_overrides = {int(b): {k: str(v) for k, v in o.items()} for b, o in (broker_overrides or {}).items()}
        self.listener = listener
        self.sasl_mechanism = sasl_mechanism
        self.sasl_username = sasl_username
        self.sasl_password = sasl_password if sasl_password is not None else secrets.token_hex(12)
        self.pki = None  # ssl_utils.Pki once started, for an SSL or SASL_SSL listener
        self.temp_dir = temp_dir
        self.start_timeout = start_timeout
        self.workdir: Optional[pathlib.Path] = None
        self.brokers: dict[int, BrokerNode] = {}
        self.zookeeper: Optional[ZooKeeperNode] = None
        self.cluster_id: Optional[str] = None
        self._topics = 0

    # ------------------------------------------------------------------ the context manager

    def __enter__(self) -> "KafkaCluster":
        self.start_cluster()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers.values() if b.pid is not None) or \
            ",".join(b.bootstrap for b in self.brokers.values())

    def start_cluster(self) -> None:
        launcher = _LauncherProcess.get()  # its imports overlap with the work below
        self.workdir = pathlib.Path(tempfile.mkdtemp(prefix="kafka-py-cluster-", dir=self.temp_dir))
        # removed by the launcher should this process die without closing the cluster
        launcher.tell({"op": "own", "path": str(self.workdir)})
        try:
            for node_id in range(1, self.broker_count + 1):
                workdir = self.workdir / f"broker-{node_id}"
                workdir.mkdir()
                self.brokers[node_id] = BrokerNode(self, node_id, workdir, self.mode == KRAFT
                                                   and node_id <= self.controller_count)
            if self.mode == ZOOKEEPER:
                zk_dir = self.workdir / "zookeeper"
                zk_dir.mkdir()
                self.zookeeper = ZooKeeperNode(zk_dir)
                self.zookeeper.start()
            if self.uses_ssl:
                from kafka_py.testing.ssl_utils import create_pki

                self.pki = create_pki(self.workdir / "pki")
            for broker in self.brokers.values():
                broker.config_path.write_text("".join(f"{k}={v}\n" for k, v in self.broker_properties(broker).items()))
            launcher.ready.wait(self.start_timeout)
            if self.mode == KRAFT:
                self._format()
            for broker in self.brokers.values():
                broker.start()
            self.wait_for_brokers(self.brokers.values(), self.start_timeout)
            if self.uses_sasl:
                self.create_scram_credentials(self.sasl_username, self.sasl_password)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Kill every process of the cluster and remove its directory. A test cluster's data
        is thrown away, so nothing waits for a clean shutdown (``stop`` does one)."""
        for broker in self.brokers.values():
            broker.stop(signal.SIGKILL)
        if self.zookeeper is not None:
            self.zookeeper.stop(signal.SIGKILL)
            self.zookeeper.reservation.release()
        for broker in self.brokers.values():
            broker.release_ports()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            launcher = _LauncherProcess._current
            if launcher is not None and launcher.process.poll() is None:
                launcher.tell({"op": "disown", "path": str(self.workdir)})
            self.workdir = None

    # ------------------------------------------------------------------ configuration

    def broker_properties(self, broker: BrokerNode) -> dict[str, str]:
        replication = str(min(self.broker_count, 3))
        listeners = {"CLIENT" if self.listener != "PLAINTEXT" else "PLAINTEXT": broker.client_port}
        protocols = {"PLAINTEXT": "PLAINTEXT"}
        if self.listener != "PLAINTEXT":
            listeners["INTERNAL"] = broker.admin_port
            protocols = {"CLIENT": self.listener, "INTERNAL": "PLAINTEXT"}
        inter_broker = "INTERNAL" if self.listener != "PLAINTEXT" else "PLAINTEXT"
        security = {}
        if self.uses_ssl:
            security.update({
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": str(self.pki.server_keystore),
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(self.pki.ca_cert),
            })
        if self.uses_sasl:
            security["sasl.enabled.mechanisms"] = ",".join(SCRAM_MECHANISMS)
        advertised = ",".join(f"{name}://127.0.0.1:{port}" for name, port in listeners.items())
        if self.mode == KRAFT:
            # a broker-only node does not listen on it, but reaches the controllers through it
            protocols["CONTROLLER"] = "PLAINTEXT"
        if broker.controller:
            listeners["CONTROLLER"] = broker.port("controller")
        props = {
            "listeners": ",".join(f"{name}://127.0.0.1:{port}" for name, port in listeners.items()),
            "advertised.listeners": advertised,
            "listener.security.protocol.map": ",".join(f"{k}:{v}" for k, v in protocols.items()),
            "inter.broker.listener.name": inter_broker,
            "log.dirs": str(broker.log_dir),
            "num.network.threads": "1",
            "num.io.threads": "2",
            "num.recovery.threads.per.data.dir": "1",
            "num.partitions": "1",
            "default.replication.factor": "1",
            "offsets.topic.replication.factor": replication,
            "offsets.topic.num.partitions": "5",
            "transaction.state.log.replication.factor": replication,
            "transaction.state.log.num.partitions": "5",
            "transaction.state.log.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            **security,
        }
        if self.mode == KRAFT:
            voters = ",".join(f"{b.node_id}@127.0.0.1:{b.port('controller')}"
                              for b in self.brokers.values() if b.controller)
            props.update({
                "process.roles": "broker,controller" if broker.controller else "broker",
                "node.id": str(broker.node_id),
                "controller.quorum.voters": voters,
                "controller.listener.names": "CONTROLLER",
                # A lone voter elects itself at once; several elect one within a few tenths of
                # a second instead of Kafka's one to two seconds.
                "controller.quorum.election.timeout.ms": "300",
                "controller.quorum.election.backoff.max.ms": "300",
                "controller.quorum.fetch.timeout.ms": "1000",
                # a killed broker is fenced (its leaderships moved) after 3 s, not 9 s
                "broker.heartbeat.interval.ms": "500",
                "broker.session.timeout.ms": "3000",
            })
        else:
            props.update({
                "broker.id": str(broker.node_id),
                "zookeeper.connect": f"127.0.0.1:{self.zookeeper.port}",
                # a killed broker's registration goes after 4 s
                "zookeeper.session.timeout.ms": "4000",
                # The brokers start beside their ZooKeeper, not after it: on a busy machine the
                # JVM may listen only after the 4 s the connection timeout would default to.
                "zookeeper.connection.timeout.ms": str(int(self.start_timeout * 1000)),
                "controlled.shutdown.retry.backoff.ms": "200",
            })
        props.update(self.overrides)
        props.update(self.broker_overrides.get(broker.node_id, {}))
        return props

    def _format(self) -> None:
        """``kafka-storage format`` of every node with one new cluster id, in parallel."""
        raw = uuid.uuid4().bytes
        self.cluster_id = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        launcher = _LauncherProcess.get()
        pids = []
        for broker in self.brokers.values():
            out = broker.workdir / "format.out"
            pids.append((broker, out, launcher.spawn({
                "op": "run", "module": "kafka_py.core.tools.storage_tool", "out": str(out),
                "args": ["format", "-t", self.cluster_id, "-c", str(broker.config_path)]})))
        for broker, out, pid in pids:
            code = launcher.wait_exit(pid, self.start_timeout)
            if code != 0:
                raise RuntimeError(f"formatting broker {broker.node_id} failed ({code}): {out.read_text()}")

    # ------------------------------------------------------------------ security

    @property
    def uses_ssl(self) -> bool:
        return self.listener in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.listener.startswith("SASL_")

    def ssl_context(self):
        """An ``ssl.SSLContext`` that trusts the cluster's CA (aiokafka takes one); None for a
        listener without TLS."""
        if not self.uses_ssl:
            return None
        import ssl

        return ssl.create_default_context(cafile=str(self.pki.ca_cert))

    def client_config(self, client: str = "kafka-python") -> dict[str, object]:
        """The settings a client library needs to reach the cluster over its listener:
        ``"kafka-python"`` (and aiokafka's names, with ``"aiokafka"``: an ``ssl_context``
        rather than a CA file) or ``"confluent-kafka"`` (librdkafka's dotted names)."""
        if client not in CLIENTS:
            raise ValueError(f"client must be one of {', '.join(CLIENTS)}, not {client!r}")
        if client == "confluent-kafka":
            config: dict[str, object] = {"bootstrap.servers": self.bootstrap_servers,
                                         "security.protocol": self.listener}
            if self.uses_ssl:
                config["ssl.ca.location"] = str(self.pki.ca_cert)
            if self.uses_sasl:
                config.update({"sasl.mechanism": self.sasl_mechanism, "sasl.username": self.sasl_username,
                               "sasl.password": self.sasl_password})
            return config
        config = {"bootstrap_servers": self.bootstrap_servers, "security_protocol": self.listener}
        if self.uses_ssl:
            if client == "aiokafka":
                config["ssl_context"] = self.ssl_context()
            else:
                config["ssl_cafile"] = str(self.pki.ca_cert)
        if self.uses_sasl:
            config.update({"sasl_mechanism": self.sasl_mechanism, "sasl_plain_username": self.sasl_username,
                           "sasl_plain_password": self.sasl_password})
        return config

    def create_scram_credentials(self, username: str, password: str, timeout: Optional[float] = None) -> None:
        """Give ``username`` SCRAM-SHA-256 and SCRAM-SHA-512 credentials for ``password``, as
        Kafka's SaslSetup.createScramCredentials does for its tests: with ``kafka-configs``
        through the brokers (AlterUserScramCredentials) in KRaft mode, straight into
        ZooKeeper (``--zookeeper``) in ZooKeeper mode. Returns once every running broker
        accepts a SCRAM login of the user on the client listener."""
        _check_scram_value("username", username)
        _check_scram_value("password", password)
        if not self.uses_sasl:
            raise RuntimeError(f"the cluster's listener is {self.listener}: SCRAM users need SASL_PLAINTEXT or SASL_SSL")
        timeout = timeout or self.start_timeout
        if self.mode == ZOOKEEPER:
            target = ["--zookeeper", f"127.0.0.1:{self.zookeeper.port}"]
        else:
            target = ["--bootstrap-server", ",".join(f"127.0.0.1:{b.admin_port}" for b in self._live_brokers())]
        credentials = ",".join(f"{m}=[iterations={SCRAM_ITERATIONS},password={password}]" for m in SCRAM_MECHANISMS)
        out = self.workdir / "kafka-configs.out"
        launcher = _LauncherProcess.get()
        pid = launcher.spawn({"op": "run", "module": "kafka_py.core.admin.config_command", "out": str(out),
                              "args": [*target, "--alter", "--add-config", credentials,
                                       "--entity-type", "users", "--entity-name", username]})
        code = launcher.wait_exit(pid, timeout)
        if code != 0:
            raise RuntimeError(f"creating the SCRAM user {username} failed ({code}): {out.read_text()}")
        refused: dict[int, object] = {}

        def everyone_accepts() -> bool:
            for broker in self._live_brokers():
                try:
                    with WireClient("127.0.0.1", broker.client_port, ssl_context=self.ssl_context()) as c:
                        error, message = c.scram_login(self.sasl_mechanism, username, password)
                except OSError as e:  # a refused login ends with the broker closing the connection
                    error, message = None, e
                if error != NONE_ERROR:
                    refused[broker.node_id] = message
                    return False
            return True

        wait_until(everyone_accepts, timeout, lambda: f"the SCRAM user {username} cannot log in: {refused}",
                   interval=0.1)

    # ------------------------------------------------------------------ readiness

    def wait_for_brokers(self, brokers: Iterable[BrokerNode], timeout: float) -> None:
        """Wait until each of ``brokers`` serves and every running broker's Metadata lists
        every running broker."""
        brokers = list(brokers)
        deadline = time.monotonic() + timeout

        def started() -> bool:
            if self.zookeeper is not None:
                self.zookeeper.check_alive()
            return all(b.startup_finished() for b in brokers)

        wait_until(started, timeout, lambda: f"brokers did not start in {timeout} s:\n{self.logs()}")
        running = {b.node_id for b in self.brokers.values() if b.running and not b.paused}

        def all_known() -> bool:
            for broker in self.brokers.values():
                if broker.node_id not in running:
                    continue
                broker.startup_finished()
                try:
                    if set(broker.metadata().brokers) < running:
                        return False
                except OSError:
                    return False
            return True

        wait_until(all_known, max(deadline - time.monotonic(), 1.0),
                   lambda: f"the brokers never saw each other:\n{self.logs()}")

    # ------------------------------------------------------------------ fault injection

    def _broker(self, broker_id: int) -> BrokerNode:
        try:
            return self.brokers[broker_id]
        except KeyError:
            raise KeyError(f"no broker {broker_id}: the brokers are {sorted(self.brokers)}") from None

    def kill(self, broker_id: int) -> Optional[int]:
        """SIGKILL a broker (a crash); its exit code."""
        return self._broker(broker_id).stop(signal.SIGKILL)

    def stop(self, broker_id: int, timeout: float = 60.0) -> Optional[int]:
        """Stop a broker cleanly (SIGTERM: a controlled shutdown); its exit code."""
        return self._broker(broker_id).stop(signal.SIGTERM, timeout)

    def start(self, broker_id: int, timeout: Optional[float] = None) -> None:
        """Start a stopped or killed broker again on its ports and data, and wait until it serves."""
        broker = self._broker(broker_id)
        if broker.running:
            raise RuntimeError(f"broker {broker_id} is running")
        broker.start()
        self.wait_for_brokers([broker], timeout or self.start_timeout)

    def restart(self, broker_id: int, timeout: Optional[float] = None) -> None:
        self.stop(broker_id)
        self.start(broker_id, timeout)

    def pause(self, broker_id: int) -> None:
        """SIGSTOP a broker: it holds its connections and answers nothing (a hung process)."""
        broker = self._broker(broker_id)
        broker.send_signal(signal.SIGSTOP)
        broker.paused = True

    def resume(self, broker_id: int) -> None:
        broker = self._broker(broker_id)
        broker.send_signal(signal.SIGCONT)
        broker.paused = False

    def kill_zookeeper(self) -> None:
        if self.zookeeper is not None:
            self.zookeeper.stop(signal.SIGKILL)

    # ------------------------------------------------------------------ topics

    def _live_brokers(self) -> list[BrokerNode]:
        live = [b for b in self.brokers.values() if b.running and not b.paused]
        if not live:
            raise RuntimeError("no broker of the cluster is running")
        return live

    def _admin(self, action: Callable[[WireClient], object], timeout: float) -> object:
        """Run ``action`` against the live brokers in turn until one answers."""
        deadline = time.monotonic() + timeout
        last: Optional[BaseException] = None
        while time.monotonic() < deadline:
            for broker in self._live_brokers():
                try:
                    with WireClient("127.0.0.1", broker.admin_port, timeout=max(1.0, deadline - time.monotonic())) as c:
                        return action(c)
                except OSError as e:
                    last = e
            time.sleep(0.1)
        raise TimeoutError(f"no broker answered: {last}")

    def create_topic(self, name: Optional[str] = None, partitions: int = 1, replication_factor: Optional[int] = None,
                     config: Optional[Mapping[str, object]] = None, timeout: float = 30.0) -> str:
        """Create a topic (a fresh name when none is given) and wait until every partition
        has a leader and a full ISR on every running broker; the topic's name."""
        if name is None:
            self._topics += 1
            name = f"topic-{self._topics}-{uuid.uuid4().hex[:8]}"
        rf = replication_factor if replication_factor is not None else min(self.broker_count, 3)
        settings = {k: str(v) for k, v in (config or {}).items()}
        deadline = time.monotonic() + timeout

        def create(client: WireClient) -> tuple[int, Optional[str]]:
            return client.create_topic(name, partitions, rf, settings, int(timeout * 1000))

        while True:
            error, message = self._admin(create, timeout)
            if error == NONE_ERROR:
                break
            if error == TOPIC_ALREADY_EXISTS:
                raise ValueError(f"topic {name} already exists")
            # Retried while the cluster settles: NOT_CONTROLLER (41) while a controller is
            # elected, REQUEST_TIMED_OUT (7), INVALID_REPLICATION_FACTOR (38) while brokers
            # are still registering.
            if time.monotonic() > deadline or error not in (41, 7, 38):
                raise RuntimeError(f"creating topic {name} failed with error {error}: {message}")
            time.sleep(0.1)
        self.wait_for_isr(name, timeout=max(1.0, deadline - time.monotonic()))
        return name

    def delete_topic(self, name: str, timeout: float = 30.0) -> None:
        """Delete a topic and wait until no running broker lists it."""
        error = self._admin(lambda c: c.delete_topic(name, int(timeout * 1000)), timeout)
        if error not in (NONE_ERROR, UNKNOWN_TOPIC_OR_PARTITION):
            raise RuntimeError(f"deleting topic {name} failed with error {error}")

        def gone() -> bool:
            for broker in self._live_brokers():
                topic = broker.metadata([name]).topics.get(name)
                if topic is not None and topic.error_code != UNKNOWN_TOPIC_OR_PARTITION:
                    return False
            return True

        wait_until(gone, timeout, f"topic {name} still listed")

    def wait_for_isr(self, topic: str, partitions: Optional[Sequence[int]] = None, isr_size: Optional[int] = None,
                     timeout: float = 30.0) -> None:
        """Wait until each partition of ``topic`` (or of ``partitions``) has a leader and an
        ISR of ``isr_size`` replicas (all its replicas unless given), as every running broker
        sees it."""
        state: list[str] = []

        def in_sync() -> bool:
            for broker in self._live_brokers():
                try:
                    info = broker.metadata([topic]).topics.get(topic)
                except OSError as e:
                    state[:] = [f"broker {broker.node_id}: {e}"]
                    return False
                if info is None or info.error_code != NONE_ERROR or not info.partitions:
                    state[:] = [f"broker {broker.node_id}: {info}"]
                    return False
                for p in info.partitions:
                    if partitions is not None and p.partition not in partitions:
                        continue
                    want = isr_size if isr_size is not None else len(p.replicas)
                    if p.leader < 0 or len(p.isr) < want:
                        state[:] = [f"broker {broker.node_id}: {p}"]
                        return False
            return True

        wait_until(in_sync, timeout, lambda: f"ISR of {topic} not reached: {state}", interval=0.05)

    # ------------------------------------------------------------------ logs

    def logs(self, lines: int = 50) -> str:
        """The last ``lines`` lines of every process's output, for a failed test's report."""
        parts = []
        for process in [*self.brokers.values(), *([self.zookeeper] if self.zookeeper else [])]:
            parts.append(f"----- {process.name} (pid {process.pid}) -----\n{process.tail(lines)}")
        return "\n".join(parts)
