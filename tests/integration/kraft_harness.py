"""Real KRaft controller processes for integration tests (beside broker_harness.py's
ZooKeeper-mode brokers).

A ``KRaftControllerProcess`` is one ``process.roles=controller`` node: its properties, its dir
formatted with ``kafka-storage format``, and a ``python -m kafka_py.core.kafka`` process (what
``bin/kafka-server-start.sh`` runs), both forked from the test process's launcher
(kafka_py/testing/cluster.py's ``launch``), which has the broker's modules loaded already. Readiness is a condition: the process logged "Kafka Server
started" and its controller port accepts connections. Ports and processes are broker_harness's:
reserved across test processes, and dying with the test process. ``KRaftQuorum`` holds the voters of one
quorum and asks them, over the wire, who leads (DescribeQuorum: only the leader answers it).
"""
from __future__ import annotations

import pathlib
import re
import subprocess
from typing import Optional

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.raft import raft_util
from kafka_py.core.raft.kafka_metadata_log import METADATA_PARTITION
from kafka_py.testing.cluster import launch
from tests.integration.broker_harness import (ROOT, NodeProcess, RawClient, ServesMetadata, free_port, port_open,
                                              wait_until)

STARTED_MARKER = b"Kafka Server started"
# A broker (or a combined node) is serving once the controller unfenced it.
UNFENCED = "Transitioning from RECOVERY to RUNNING"


def run_tool(*args: str, stdin: Optional[str] = None) -> subprocess.CompletedProcess:
    """A bin/ script or other command run from the repository, its output captured."""
    return subprocess.run(list(args), cwd=ROOT, capture_output=True, text=True, timeout=120, input=stdin)


def read_text(path: pathlib.Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def combined_node_config(tmp_path: pathlib.Path) -> tuple[pathlib.Path, int, pathlib.Path]:
    """config/kraft/server.properties with free ports and its log dir under ``tmp_path``:
    (the config file, the client port, the log dir)."""
    client_port, controller_port = free_port(), free_port()
    log_dir = tmp_path / "kraft-combined-logs"
    text = (ROOT / "config" / "kraft" / "server.properties").read_text()
    text = text.replace("/tmp/kraft-combined-logs", str(log_dir))
    text = re.sub(r"\b9092\b", str(client_port), text)
    text = re.sub(r"\b9093\b", str(controller_port), text)
    config = tmp_path / "server.properties"
    config.write_text(text)
    return config, client_port, log_dir


class KRaftControllerProcess(NodeProcess):
    """One ``process.roles=controller`` node (see the module docstring)."""

    kind = "controller"

    def __init__(self, workdir: pathlib.Path, node_id: int, port: int, voters: str,
                 overrides: Optional[dict[str, str]] = None, env: Optional[dict[str, str]] = None) -> None:
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.node_id = node_id
        self.port = port
        self.voters = voters
        self.log_dir = self.workdir / "kraft-logs"
        self.config_path = self.workdir / "controller.properties"
        self.output_path = self.workdir / "controller.out"
        self.logs_dir = self.workdir / "logs"
        self.overrides = dict(overrides or {})
        self.env = dict(env or {})
        self.process = None
        self.write_config()

    def properties(self) -> dict[str, str]:
        props = {
            "process.roles": "controller",
            "node.id": str(self.node_id),
            "controller.quorum.voters": self.voters,
            "listeners": f"CONTROLLER://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.log_dir),
            "num.network.threads": "2",
            "num.io.threads": "2",
            "controller.quorum.election.timeout.ms": "1000",
            "controller.quorum.fetch.timeout.ms": "2000",
        }
        props.update(self.overrides)
        return props

    def write_config(self) -> None:
        self.config_path.write_text("".join(f"{k}={v}\n" for k, v in self.properties().items()))

    def format(self, cluster_id: str) -> str:
        """``kafka-storage format`` of this node's dirs (the tool's module, forked from the
        launcher as the node itself is); what the tool printed."""
        out = self.workdir / "format.out"
        out.unlink(missing_ok=True)
        code = launch("kafka_py.core.tools.storage_tool", ["format", "-t", cluster_id, "-c", self.config_path],
                      out, cwd=ROOT).wait(timeout=120)
        text = read_text(out)
        if code != 0:
            raise RuntimeError(f"formatting node {self.node_id} failed ({code}): {text}")
        return text

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 60.0, wait: bool = True) -> "KRaftControllerProcess":
        self._run_offset = self.output_path.stat().st_size if self.output_path.exists() else 0
        # forked from the launcher and gone with the test process, as broker_harness's brokers
        self.process = launch("kafka_py.core.kafka", [self.config_path], self.output_path, cwd=ROOT,
                              env=dict(PYTHONUNBUFFERED="1", LOG_DIR=str(self.logs_dir), **self.env))
        if wait:
            self.wait_started(timeout)
        return self

    def wait_started(self, timeout: float = 60.0) -> None:
        def ready() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"controller exited with {self.process.returncode}:\n{self.tail()}")
            return STARTED_MARKER in self.run_output()

        wait_until(ready, timeout, f"controller {self.node_id} did not start:\n{self.tail()}")
        wait_until(lambda: port_open(self.port), timeout, "controller port not open")

    def wait_exit(self, timeout: float = 60.0) -> int:
        return self.process.wait(timeout=timeout)

    # ------------------------------------------------------------------ the wire

    def request(self, api_key: ApiKeys, version: int, body, timeout: float = 10.0):
        with RawClient(self.port, timeout=timeout) as client:
            return client.request(api_key, version, body)

    def describe_quorum(self):
        return self.request(ApiKeys.DESCRIBE_QUORUM, 0, raft_util.describe_quorum_request_for(METADATA_PARTITION))

    def quorum_view(self) -> Optional[tuple[int, int, dict[int, int]]]:
        """(leader id, epoch, voter id -> log end offset) if this node leads, else None (also when
        it does not answer)."""
        try:
            response = self.describe_quorum()
        except OSError:
            return None
        if int(response.error_code) != Errors.NONE.error_code or not response.topics:
            return None
        partition = response.topics[0].partitions[0]
        if int(partition.error_code) != Errors.NONE.error_code or int(partition.leader_id) != self.node_id:
            return None
        return (int(partition.leader_id), int(partition.leader_epoch),
                {int(v.replica_id): int(v.log_end_offset) for v in partition.current_voters})


class KRaftBrokerProcess(KRaftControllerProcess):
    """One ``process.roles=broker`` node of a KRaft cluster: clients on ``port``, the
    controllers reached through the quorum's voters. Ready once the controller has
    unfenced it (it registered and caught up with the metadata log)."""

    kind = "broker"

    UNFENCED_MARKER = b"Transitioning from RECOVERY to RUNNING"

    def properties(self) -> dict[str, str]:
        props = {
            "process.roles": "broker",
            "node.id": str(self.node_id),
            "controller.quorum.voters": self.voters,
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "inter.broker.listener.name": "PLAINTEXT",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.log_dir),
            "num.network.threads": "2",
            "num.io.threads": "4",
            "offsets.topic.replication.factor": "3",
            "transaction.state.log.replication.factor": "3",
            "group.initial.rebalance.delay.ms": "0",
        }
        props.update(self.overrides)
        return props

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def wait_started(self, timeout: float = 60.0) -> None:
        def ready() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"broker exited with {self.process.returncode}:\n{self.tail()}")
            return self.UNFENCED_MARKER in self.run_output()

        wait_until(ready, timeout, f"broker {self.node_id} was not unfenced:\n{self.tail()}")
        wait_until(lambda: port_open(self.port), timeout, "broker port not open")


class KRaftCombinedProcess(KRaftBrokerProcess, ServesMetadata):
    """A ``process.roles=broker,controller`` node that is its quorum's only voter: a whole
    KRaft cluster in one process, with the interface of broker_harness's ``BrokerProcess`` so
    that a client-facing test module runs unchanged against either (``broker_id``,
    ``bootstrap``, ``log_dir``, ``overrides``, ``start``/``stop``/``kill``/``restart``,
    ``metadata``/``leads``). Its log dir is formatted with ``bin/kafka-storage.sh`` before
    the first start."""

    def __init__(self, workdir: pathlib.Path, broker_id: int = 0, port: Optional[int] = None,
                 overrides: Optional[dict[str, str]] = None, env: Optional[dict[str, str]] = None) -> None:
        self.controller_port = free_port()
        super().__init__(workdir, broker_id, port if port is not None else free_port(),
                         f"{broker_id}@127.0.0.1:{self.controller_port}", overrides, env)
        self.output_path = self.workdir / "broker.out"
        self.cluster_id = random_uuid_text()
        self.formatted = False

    @property
    def broker_id(self) -> int:
        return self.node_id

    def properties(self) -> dict[str, str]:
        props = {
            "process.roles": "broker,controller",
            "node.id": str(self.node_id),
            "controller.quorum.voters": self.voters,
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "inter.broker.listener.name": "PLAINTEXT",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.log_dir),
            "num.network.threads": "2",
            "num.io.threads": "4",
            "num.partitions": "1",
            "default.replication.factor": "1",
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
        }
        props.update(self.overrides)
        return props

    def start(self, timeout: float = 60.0, wait: bool = True) -> "KRaftCombinedProcess":
        self.write_config()
        if not self.formatted:
            self.format(self.cluster_id)
            self.formatted = True
        return super().start(timeout, wait)

    def wait_started(self, timeout: float = 60.0) -> None:
        super().wait_started(timeout)
        # Unfenced is not yet served: the broker's own metadata must list it first.
        wait_until(self.knows_itself, timeout, "broker metadata never listed the broker")

    def restart(self, timeout: float = 60.0) -> "KRaftCombinedProcess":
        # No ephemeral registration to wait out: the controller fences by heartbeats.
        return self.start(timeout)


def random_uuid_text() -> str:
    """A cluster id as ``kafka-storage.sh random-uuid`` prints one, made in this process."""
    from kafka_py.core.zk.zk_data import random_uuid, uuid_to_base64

    return uuid_to_base64(random_uuid())


class KRaftQuorum:
    def __init__(self, base: pathlib.Path, size: int = 3, overrides: Optional[dict[str, str]] = None) -> None:
        ports = [free_port() for _ in range(size)]
        voters = ",".join(f"{i}@127.0.0.1:{port}" for i, port in enumerate(ports, 1))
        self.nodes = [KRaftControllerProcess(base / f"controller-{i}", i, port, voters, overrides)
                      for i, port in enumerate(ports, 1)]
        self.cluster_id = random_uuid_text()

    def format(self) -> None:
        for node in self.nodes:
            node.format(self.cluster_id)

    def start(self) -> None:
        for node in self.nodes:
            node.start(wait=False)
        for node in self.nodes:
            node.wait_started()

    def node(self, node_id: int) -> KRaftControllerProcess:
        return next(n for n in self.nodes if n.node_id == node_id)

    def leaders(self) -> list[tuple[int, int, dict[int, int]]]:
        return [view for view in (n.quorum_view() for n in self.nodes
                                  if n.running and not isinstance(n, KRaftBrokerProcess)) if view is not None]

    def wait_for_leader(self, timeout: float, min_epoch: int = 0) -> tuple[int, int, dict[int, int]]:
        """The one leader of an epoch of at least ``min_epoch``, once exactly one running node claims it."""
        found: list = []

        def one_leader() -> bool:
            views = [v for v in self.leaders() if v[1] >= min_epoch]
            found[:] = views
            return len(views) == 1

        wait_until(one_leader, timeout, f"no single leader of epoch >= {min_epoch}: {found}\n" +
                   "\n".join(n.tail(15) for n in self.nodes), interval=0.1)
        return found[0]

    def add_brokers(self, base: pathlib.Path, count: int, overrides: Optional[dict[str, str]] = None
                    ) -> list[KRaftBrokerProcess]:
        """``count`` broker-only nodes (ids after the voters'), formatted with the quorum's cluster id."""
        voters = self.nodes[0].voters
        first = len(self.nodes) + 1
        brokers = [KRaftBrokerProcess(base / f"broker-{i}", i, free_port(), voters, overrides)
                   for i in range(first, first + count)]
        for broker in brokers:
            broker.format(self.cluster_id)
        self.nodes.extend(brokers)
        return brokers

    def stop(self) -> None:
        # every node with the broker role first (combined voters too): its controlled shutdown
        # needs a controller quorum that can still commit, and waits for one up to 5 minutes:
        # a combined voter left without a majority of voters alive is killed instead
        majority = len(self.nodes[0].voters.split(",")) // 2 + 1
        for node in sorted(self.nodes, key=lambda n: "broker" not in n.properties()["process.roles"]):
            if not node.running:
                continue
            roles = node.properties()["process.roles"]
            voters_alive = sum(1 for n in self.nodes if n.running and "controller" in n.properties()["process.roles"])
            try:
                if "broker" in roles and "controller" in roles and voters_alive < majority:
                    node.kill()
                else:
                    node.stop(timeout=30)
            except RuntimeError:
                pass


def listener_overrides(broker, listeners: dict[str, tuple[str, int]]) -> dict[str, str]:
    """``listeners`` and ``listener.security.protocol.map`` giving ``broker`` (either mode) the
    named listeners (name -> (security protocol, port)) beside its PLAINTEXT one, which the
    harness's readiness checks and the inter-broker traffic use; a KRaft node keeps its
    CONTROLLER listener too, which is never advertised to clients."""
    names = [f"PLAINTEXT://127.0.0.1:{broker.port}"] + [f"{n}://127.0.0.1:{p}" for n, (_, p) in listeners.items()]
    protocols = ["PLAINTEXT:PLAINTEXT"] + [f"{n}:{protocol}" for n, (protocol, _) in listeners.items()]
    if isinstance(broker, KRaftBrokerProcess):
        protocols.append("CONTROLLER:PLAINTEXT")
        if isinstance(broker, KRaftCombinedProcess):
            names.append(f"CONTROLLER://127.0.0.1:{broker.controller_port}")
    return {"listeners": ",".join(names), "listener.security.protocol.map": ",".join(protocols)}
