"""The Prometheus endpoint of KRaft nodes, against real processes: a quorum of two
controller-only nodes and one combined node (broker and controller), and a broker-only node,
each with its own ``kafka.py.metrics.prometheus.port``. Each endpoint is scraped over HTTP:
one voter reports ActiveControllerCount 1, the raft metrics agree with DescribeQuorum, the
controller counts follow a topic created and deleted and a broker that stops, the brokers'
BrokerTopicMetrics count what was produced (the combined node's one endpoint serving both
roles), and a real Prometheus scrapes a KRaft node and answers a PromQL query."""
from __future__ import annotations

import http.client
import json
import shutil
import subprocess
import urllib.parse
import urllib.request

import pytest

from kafka_py.core.metrics.prometheus_exporter import parse_exposition
from kafka_py.clients.common.protocol.errors import Errors
from tests.integration.broker_harness import free_port, port_open, wait_until
from tests.integration.kraft_harness import KRaftControllerProcess, KRaftQuorum

SESSION_TIMEOUT_MS = 4000
WAIT_S = 60

ACTIVE = "kafka_controller_kafkacontroller_activecontrollercount"
TOPICS = "kafka_controller_kafkacontroller_globaltopiccount"
PARTITIONS = "kafka_controller_kafkacontroller_globalpartitioncount"


class CombinedVoter(KRaftControllerProcess):
    """A ``process.roles=broker,controller`` voter: ``port`` is its controller listener (the
    one DescribeQuorum goes to), ``client_port`` its broker listener."""

    def __init__(self, *args, **kwargs) -> None:
        self.client_port = free_port()
        super().__init__(*args, **kwargs)

    def properties(self) -> dict[str, str]:
        props = super().properties()
        props.update({
            "process.roles": "broker,controller",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.client_port},CONTROLLER://127.0.0.1:{self.port}",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "offsets.topic.replication.factor": "1",
            "broker.heartbeat.interval.ms": "500",
        })
        props.update(self.overrides)
        return props

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.client_port}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("kraft-metrics")
    quorum = KRaftQuorum(base, overrides={"broker.session.timeout.ms": str(SESSION_TIMEOUT_MS)})
    third = quorum.nodes[2]
    quorum.nodes[2] = CombinedVoter(base / "combined-3", third.node_id, third.port, third.voters,
                                    dict(third.overrides))
    quorum.format()
    (broker,) = quorum.add_brokers(base, 1, overrides={"broker.heartbeat.interval.ms": "500",
                                                       "offsets.topic.replication.factor": "1"})
    for node in quorum.nodes:
        node.metrics_port = free_port()
        node.overrides.update({"kafka.py.metrics.prometheus.port": str(node.metrics_port),
                               "kafka.py.metrics.prometheus.host": "127.0.0.1"})
        node.write_config()
    try:
        quorum.start()
        quorum.wait_for_leader(WAIT_S)
        yield quorum, quorum.nodes[2], broker
    finally:
        quorum.stop()


def scrape(node) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", node.metrics_port, timeout=30)
    try:
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        assert response.status == 200
        return parse_exposition(response.read().decode())
    finally:
        conn.close()


def value(samples: dict, name: str, **labels: str):
    return samples.get((name, tuple(sorted(labels.items()))))


def wait_for(condition, what: str, found: list) -> None:
    """wait_until, naming what ``condition`` last saw in ``found`` when it never holds."""
    try:
        wait_until(condition, WAIT_S, what, interval=0.2)
    except TimeoutError:
        raise AssertionError(f"{what}; last seen: {found}") from None


def voters(quorum):
    return quorum.nodes[:3]


def describe(quorum) -> tuple[int, int, int]:
    """(leader id, epoch, high watermark) from the leader's DescribeQuorum answer."""
    for node in voters(quorum):
        if not node.running:
            continue
        try:
            response = node.describe_quorum()
        except OSError:
            continue
        partition = response.topics[0].partitions[0] if response.topics else None
        if (int(response.error_code) == Errors.NONE.error_code and partition is not None
                and int(partition.error_code) == Errors.NONE.error_code and int(partition.leader_id) == node.node_id):
            return int(partition.leader_id), int(partition.leader_epoch), int(partition.high_watermark)
    raise AssertionError("no voter answered DescribeQuorum as the leader")


def admin_of(*brokers):
    from kafka import KafkaAdminClient

    return KafkaAdminClient(bootstrap_servers=",".join(b.bootstrap for b in brokers), request_timeout_ms=30000)


def leader_node(quorum):
    leader_id = describe(quorum)[0]
    return quorum.node(leader_id)


def test_one_endpoint_per_node_and_one_active_controller(cluster):
    quorum, combined, broker = cluster
    leader_id = describe(quorum)[0]
    actives = {node.node_id: value(scrape(node), ACTIVE) for node in voters(quorum)}
    assert actives == {node.node_id: (1.0 if node.node_id == leader_id else 0.0) for node in voters(quorum)}
    broker_samples = scrape(broker)
    # a broker-only node has no controller, but every node has its raft client and app-info
    assert value(broker_samples, ACTIVE) is None
    assert value(broker_samples, "kafka_server_raft_metrics_current_leader") == leader_id
    assert [dict(labels)["id"] for name, labels in broker_samples if name == "kafka_server_app_info"] == [
        str(broker.node_id)]
    # the broker's metrics, as a ZooKeeper-mode broker serves them, on the broker-only node and
    # on the combined node's single endpoint beside its controller's
    for node in (broker, combined):
        wait_until(lambda: value(scrape(node), "kafka_server_kafkaserver_brokerstate") == 3, WAIT_S,
                   f"node {node.node_id} never reported BrokerState RUNNING")
        samples = scrape(node)
        assert value(samples, "kafka_server_replicamanager_partitioncount") is not None
        assert any(name == "kafka_server_socket_server_metrics_connection_count"
                   and dict(labels)["listener"] == "PLAINTEXT" for name, labels in samples)
    assert value(scrape(combined), ACTIVE) is not None
    for node in voters(quorum):
        wait_until(lambda: (value(scrape(node), "kafka_controller_kafkacontroller_activebrokercount"),
                            value(scrape(node), "kafka_controller_kafkacontroller_fencedbrokercount")) == (2, 0),
                   WAIT_S, f"voter {node.node_id} never counted both brokers unfenced")
    controller_only = scrape(quorum.nodes[0])
    assert value(controller_only, "kafka_server_kafkaserver_brokerstate") is None


def test_raft_metrics_agree_with_describe_quorum(cluster):
    quorum, _combined, broker = cluster
    found: list = []

    def agree() -> bool:
        leader_id, epoch, high_watermark = describe(quorum)
        leader_samples = scrape(quorum.node(leader_id))
        seen = (value(leader_samples, "kafka_server_raft_metrics_current_epoch"),
                value(leader_samples, "kafka_server_raft_metrics_high_watermark"))
        again = describe(quorum)
        found[:] = [(leader_id, epoch, high_watermark), seen, again]
        return again == (leader_id, epoch, high_watermark) and seen == (epoch, high_watermark)

    wait_for(agree, "raft metrics never matched DescribeQuorum", found)
    leader_id, epoch, _ = found[0]
    for node in quorum.nodes:
        samples = scrape(node)
        assert value(samples, "kafka_server_raft_metrics_current_leader") == leader_id
        assert value(samples, "kafka_server_raft_metrics_current_epoch") == epoch
        state = "leader" if node.node_id == leader_id else "follower"
        assert value(samples, "kafka_server_raft_metrics_current_state", state=state) == 1
        assert value(samples, "kafka_server_raft_metrics_current_state", state="candidate") == 0
        assert value(samples, "kafka_server_raft_metrics_log_end_offset") >= 1


def test_controller_counts_follow_a_topic_created_and_deleted(cluster):
    from kafka.admin import NewTopic

    quorum, combined, broker = cluster
    before = {node.node_id: (value(scrape(node), TOPICS), value(scrape(node), PARTITIONS)) for node in voters(quorum)}
    admin = admin_of(broker, combined)
    try:
        admin.create_topics([NewTopic("kraft-metrics-counted", 3, 1)])

        def every_voter_counts(delta_topics: int, delta_partitions: int) -> bool:
            return all((value(scrape(node), TOPICS), value(scrape(node), PARTITIONS))
                       == (before[node.node_id][0] + delta_topics, before[node.node_id][1] + delta_partitions)
                       for node in voters(quorum))

        wait_until(lambda: every_voter_counts(1, 3), WAIT_S, "the voters never counted the new topic")
        admin.delete_topics(["kraft-metrics-counted"])
        wait_until(lambda: every_voter_counts(0, 0), WAIT_S, "the voters never counted the topic deleted")
    finally:
        admin.close()
    # the controller writes and commits; the broker applies the same records
    found: list = []

    def caught_up() -> bool:
        high_watermark = describe(quorum)[2]
        leader = scrape(leader_node(quorum))
        applied = value(scrape(broker), "kafka_server_broker_metadata_metrics_last_applied_record_offset")
        found[:] = [high_watermark, value(leader, "kafka_controller_kafkacontroller_lastcommittedrecordoffset"),
                    applied]
        return found[1] == found[2] == high_watermark - 1

    wait_for(caught_up, "(high watermark, committed, broker applied) never agreed", found)
    broker_samples = scrape(broker)
    assert value(broker_samples, "kafka_server_broker_metadata_metrics_last_applied_record_lag_ms") >= 0
    assert value(broker_samples, "kafka_server_broker_metadata_metrics_metadata_load_error_count") == 0
    assert value(broker_samples, "kafka_server_broker_metadata_metrics_metadata_apply_error_count") == 0


def test_broker_topic_metrics_count_what_was_produced(cluster):
    from kafka import KafkaProducer
    from kafka.admin import NewTopic

    quorum, combined, broker = cluster
    topic = "kraft-metrics-produce"
    admin = admin_of(broker, combined)
    try:
        # one partition on each broker, so both endpoints count their share
        admin.create_topics([NewTopic(topic, -1, -1, replica_assignments={0: [broker.node_id],
                                                                          1: [combined.node_id]})])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1, retries=10)
    try:
        for i in range(20):
            producer.send(topic, value=b"v%02d" % i, partition=i % 2).get(timeout=60)
    finally:
        producer.close()
    counted = {node.node_id: value(scrape(node), "kafka_server_brokertopicmetrics_messagesin_total", topic=topic)
               for node in (broker, combined)}
    assert counted == {broker.node_id: 10, combined.node_id: 10}
    # the request metrics too: every record went in its own Produce request to its leader
    for node in (broker, combined):
        produce_requests = sum(v for (name, labels), v in scrape(node).items()
                               if name == "kafka_network_requestmetrics_requests_total"
                               and dict(labels).get("request") == "Produce")
        assert produce_requests >= 10


def test_a_real_prometheus_scrapes_a_kraft_node(cluster, tmp_path):
    """Debian's Prometheus scrapes the combined node; a PromQL query of a controller metric
    answers the value the endpoint serves."""
    binary = shutil.which("prometheus")
    assert binary, "Debian's prometheus package is needed (bin/run-tests.sh installs it)"
    _quorum, combined, _broker = cluster
    expected = value(scrape(combined), PARTITIONS)
    config = tmp_path / "prometheus.yml"
    config.write_text(f"""global:
  scrape_interval: 1s
scrape_configs:
  - job_name: kraft
    static_configs: [{{targets: ["127.0.0.1:{combined.metrics_port}"]}}]
""")
    port = free_port()
    output = open(tmp_path / "prometheus.out", "wb")
    process = subprocess.Popen([binary, f"--config.file={config}", f"--web.listen-address=127.0.0.1:{port}",
                                f"--storage.tsdb.path={tmp_path / 'data'}"], stdout=output, stderr=subprocess.STDOUT)
    query = urllib.parse.quote(PARTITIONS)
    found: list = []

    def stored() -> bool:
        if process.poll() is not None:
            raise RuntimeError((tmp_path / "prometheus.out").read_text(errors="replace")[-3000:])
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/query?query={query}", timeout=5) as r:
                answer = json.load(r)
        except OSError:
            return False
        found[:] = answer.get("data", {}).get("result", [])
        return bool(found)

    try:
        wait_until(stored, 60, "Prometheus never stored the controller's metric", interval=0.5)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        output.close()
    assert found[0]["metric"]["job"] == "kraft"
    assert float(found[0]["value"][1]) == expected


def test_a_stopped_broker_is_fenced_its_partitions_offline_and_its_endpoint_gone(cluster):
    from kafka.admin import NewTopic

    quorum, combined, broker = cluster
    topic = "kraft-metrics-offline"
    admin = admin_of(combined)
    try:
        admin.create_topics([NewTopic(topic, -1, -1, replica_assignments={0: [broker.node_id],
                                                                          1: [broker.node_id]})])
        # what goes offline with the broker: every partition whose only replica it is (the two
        # just created among them, once the node the admin client asks has them in its metadata)
        def partitions_only_on_broker() -> int:
            return sum(1 for t in admin.describe_topics() for p in t["partitions"]
                       if list(p["replica_nodes"]) == [broker.node_id])

        counted: list = []
        wait_until(lambda: counted.append(partitions_only_on_broker()) or counted[-1] >= 2, WAIT_S,
                   lambda: f"the new topic's partitions never listed on broker {broker.node_id} alone: {counted[-1:]}")
        only_on_broker = counted[-1]
    finally:
        admin.close()
    offline = "kafka_controller_kafkacontroller_offlinepartitionscount"
    before = value(scrape(leader_node(quorum)), offline)
    assert broker.stop() == 0, broker.tail()
    assert not port_open(broker.metrics_port)
    found: list = []

    def fenced() -> bool:
        samples = scrape(leader_node(quorum))
        found[:] = [value(samples, "kafka_controller_kafkacontroller_fencedbrokercount"),
                    value(samples, "kafka_controller_kafkacontroller_activebrokercount"), value(samples, offline)]
        return found == [1, 1, before + only_on_broker]

    wait_for(fenced, "(fenced, active, offline) never came", found)
