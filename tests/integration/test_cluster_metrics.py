"""Replication and controller metrics of a three-broker cluster, read from each broker's
Prometheus endpoint: a killed follower shows up as ISR shrinks and under-replicated
partitions on the leader and goes away as ISR expands when it is back; fetchers report
their lag and the replication bytes; exactly one broker is the active controller, and
another one once it is killed."""
from __future__ import annotations

import pytest
from kafka import KafkaProducer

from tests.integration.broker_harness import BrokerProcess, free_port, unique_chroot, wait_until
from tests.integration.replicated_cluster import CLUSTER_PROPS, ReplicatedCluster
from tests.integration.test_metrics import scrape, value

WAIT = 90.0
TOPIC = "cluster-metrics"

# The leader drops a follower that stopped fetching after replica.lag.time.max.ms (1 s) as
# soon as records wait for it, well before the controller learns of the dead broker from
# its ZooKeeper session (8 s): the shrink is the leader's own, as IsrShrinksPerSec counts.
PROPS = dict(CLUSTER_PROPS, **{"replica.lag.time.max.ms": "1000", "zookeeper.session.timeout.ms": "8000"})


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    chroot = unique_chroot("cluster-metrics")
    brokers = []
    for i in range(3):
        port = free_port()
        b = BrokerProcess(tmp_path_factory.mktemp(f"cm-broker{i}-"), zookeeper.connect_string, chroot, i,
                          overrides=dict(PROPS, **{"kafka.py.metrics.prometheus.port": str(port),
                                                   "kafka.py.metrics.prometheus.host": "127.0.0.1"}))
        b.metrics_port = port
        brokers.append(b)
    c = ReplicatedCluster(brokers).start()
    yield c
    for b in brokers:
        if b.running:
            b.stop()
    c.close()


def metric(broker: BrokerProcess, name: str, **labels: str) -> float:
    return value(scrape(broker.metrics_port), name, **labels)


def produce(cluster: ReplicatedCluster, n: int, acks=1) -> None:
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap(), acks=acks, retries=5)
    try:
        for i in range(n):
            producer.send(TOPIC, value=b"r%04d" % i + b"x" * 100)
        producer.flush(30)
    finally:
        producer.close()


def test_follower_death_shrinks_and_its_return_expands_the_isr(cluster):
    controller = cluster.wait_controller()
    # leader and follower both other than the controller, so that only the follower dies
    others = [i for i in range(3) if i != controller]
    leader_id, follower_id = others
    cluster.create_topic(TOPIC, {0: [leader_id, follower_id, controller]})
    cluster.wait_fully_replicated(TOPIC, 1)
    leader, follower = cluster.broker(leader_id), cluster.broker(follower_id)
    produce(cluster, 20, acks="all")

    # the follower's fetcher: replication bytes in, its lag per partition, MaxLag
    wait_until(lambda: metric(follower, "kafka_server_brokertopicmetrics_replicationbytesin_total") > 0, WAIT,
               "the follower counted no replication bytes in")
    samples = scrape(follower.metrics_port)
    lag_samples = [k for k in samples if k[0] == "kafka_server_fetcherlagmetrics_consumerlag"
                   and ("topic", TOPIC) in k[1]]
    assert lag_samples, sorted(k for k in samples if "fetcher" in k[0])
    assert dict(lag_samples[0][1])["clientId"].startswith("ReplicaFetcherThread-")
    assert ("kafka_server_replicafetchermanager_maxlag", (("clientId", "Replica"),)) in samples
    assert ("kafka_server_replicafetchermanager_minfetchrate", (("clientId", "Replica"),)) in samples
    assert value(samples, "kafka_server_brokertopicmetrics_replicationbytesout_total") >= 0

    # its fetcher thread's FetcherStats (clientId, brokerHost, brokerPort: exported as clientId
    # and broker="host:port"): the fetches it sent the leader and the record bytes it got back
    def fetcher_stat(name: str) -> float:
        return sum(v for (n, labels), v in scrape(follower.metrics_port).items()
                   if n == name and dict(labels)["broker"].endswith(f":{leader.port}")
                   and dict(labels)["clientId"].startswith("ReplicaFetcherThread-"))

    fetches, fetched = (fetcher_stat("kafka_server_fetcherstats_requests_total"),
                        fetcher_stat("kafka_server_fetcherstats_bytes_total"))
    assert fetches > 0 and fetched > 0
    produce(cluster, 5, acks="all")
    wait_until(lambda: fetcher_stat("kafka_server_fetcherstats_bytes_total") > fetched, WAIT,
               "the follower's FetcherStats BytesPerSec did not grow")
    assert fetcher_stat("kafka_server_fetcherstats_requests_total") > fetches
    wait_until(lambda: metric(leader, "kafka_server_brokertopicmetrics_replicationbytesout_total") > 0, WAIT,
               "the leader counted no replication bytes out")
    assert metric(leader, "kafka_server_replicamanager_underreplicatedpartitions") == 0

    shrinks = metric(leader, "kafka_server_replicamanager_isrshrinks_total")
    expands = metric(leader, "kafka_server_replicamanager_isrexpands_total")
    follower.kill()
    # records the dead follower will not fetch make it fall out of sync
    produce(cluster, 5)
    wait_until(lambda: metric(leader, "kafka_server_replicamanager_isrshrinks_total") > shrinks, WAIT,
               "the leader never counted an ISR shrink")
    wait_until(lambda: metric(leader, "kafka_server_replicamanager_underreplicatedpartitions") > 0, WAIT,
               "the leader never reported an under-replicated partition")

    follower.restart(WAIT)
    wait_until(lambda: metric(leader, "kafka_server_replicamanager_isrexpands_total") > expands, WAIT,
               "the leader never counted an ISR expansion")
    wait_until(lambda: metric(leader, "kafka_server_replicamanager_underreplicatedpartitions") == 0, WAIT,
               "the partition stayed under-replicated")
    cluster.wait_fully_replicated(TOPIC, 1)
    assert metric(leader, "kafka_server_replicamanager_failedisrupdates_total") == 0


def active_controllers(cluster: ReplicatedCluster) -> dict[int, float]:
    return {b.broker_id: metric(b, "kafka_controller_kafkacontroller_activecontrollercount")
            for b in cluster.brokers if b.running}


def test_exactly_one_active_controller_and_another_after_it_dies(cluster):
    controller = cluster.wait_controller()
    wait_until(lambda: active_controllers(cluster) == {i: (1.0 if i == controller else 0.0) for i in range(3)},
               WAIT, f"ActiveControllerCount is not 1 on broker {controller} only: {active_controllers(cluster)}")
    samples = scrape(cluster.broker(controller).metrics_port)
    # the controller's view of the cluster (the topic of the test before, __consumer_offsets maybe)
    assert value(samples, "kafka_controller_kafkacontroller_globaltopiccount") >= 1
    assert value(samples, "kafka_controller_kafkacontroller_globalpartitioncount") >= 1
    assert value(samples, "kafka_controller_kafkacontroller_offlinepartitionscount") == 0
    assert value(samples, "kafka_controller_controllerstats_leaderelectionrateandtimems_count") >= 1
    assert value(samples, "kafka_controller_controllereventmanager_eventqueuetimems_count") >= 1
    other = scrape(cluster.broker((controller + 1) % 3).metrics_port)
    assert value(other, "kafka_controller_kafkacontroller_globaltopiccount") == 0

    cluster.broker(controller).kill()
    successor = cluster.wait_controller(exclude=controller)
    wait_until(lambda: active_controllers(cluster) == {i: (1.0 if i == successor else 0.0)
                                                       for i in range(3) if i != controller},
               WAIT, f"ActiveControllerCount is not 1 on broker {successor} only: {active_controllers(cluster)}")
    cluster.broker(controller).restart(WAIT)
    cluster.wait_fully_replicated(TOPIC, 1)
    assert sum(active_controllers(cluster).values()) == 1


def test_every_query_of_the_grafana_dashboard_names_an_exported_metric(cluster):
    """config/grafana-dashboard.json asks only for what these brokers export, once they
    have had traffic, broker changes (the tests before), a log flush and a client under a
    quota (which makes the quota metrics exist)."""
    import json
    import pathlib
    import re

    from tests.integration.test_client_quotas import alter_ok

    client = "dashboard-client"
    alter_ok(cluster.broker(0), [({"client-id": client}, {"producer_byte_rate": 10**9, "request_percentage": 10**4})])
    for b in cluster.brokers:
        line = f"Changing Request quota for client-id {client}"
        wait_until(lambda: line in b.output(), 30, f"broker {b.broker_id} never logged {line!r}")
    cluster.create_topic("cluster-metrics-flushed", {0: [0, 1, 2]}, flush_messages="1")
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap(), acks="all", client_id=client)
    producer.send("cluster-metrics-flushed", value=b"x").get(timeout=30)
    producer.close()
    dashboard = json.loads((pathlib.Path(__file__).resolve().parents[2] / "config" / "grafana-dashboard.json")
                           .read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert len(exprs) >= 25
    wanted = {name for e in exprs for name in re.findall(r"\b(kafka_[a-z0-9_]+)", e)}
    for needed in ("kafka_server_replicamanager_underreplicatedpartitions", "kafka_server_replicamanager_isrshrinks_total",
                   "kafka_network_requestmetrics_totaltimems", "kafka_controller_kafkacontroller_activecontrollercount",
                   "kafka_server_delayedoperationpurgatory_purgatorysize",
                   "kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent",
                   "kafka_server_quota_throttle_time", "kafka_server_socket_server_metrics_failed_authentication_total",
                   "kafka_server_fetcherstats_bytes_total", "kafka_server_sessionexpirelistener_sessionstate",
                   "kafka_server_socket_server_metrics_incoming_byte_total",
                   "kafka_server_socket_server_metrics_connections_software"):
        assert needed in wanted, needed

    def missing() -> set:
        exported = {name for b in cluster.brokers if b.running for name, _ in scrape(b.metrics_port)}
        return wanted - exported

    wait_until(lambda: not missing(), 30, f"the dashboard asks for metrics the brokers do not export: {missing()}")
