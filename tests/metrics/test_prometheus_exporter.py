"""The JMX exporter's names for our registry, and the HTTP endpoint's behaviour under bad input."""
from __future__ import annotations

import concurrent.futures
import http.client
import socket
import threading
import time

import pytest

from kafka_py.core.metrics.kafka_metrics_group import explicit_metric_name
from kafka_py.core.metrics.prometheus_exporter import (
    PrometheusMetricsServer, jmx_exporter_name, parse_exposition, safe_name)
from kafka_py.core.metrics.yammer import MetricName, MetricsRegistry


def name(group, type_, n, **tags):
    return explicit_metric_name(group, type_, n, tags)


@pytest.mark.parametrize("metric, kind, family, exported_kind, labels", [
    (name("kafka.server", "BrokerTopicMetrics", "MessagesInPerSec", topic="t"), "meter",
     "kafka_server_brokertopicmetrics_messagesin", "counter", {"topic": "t"}),
    (name("kafka.server", "BrokerTopicMetrics", "BytesInPerSec"), "meter",
     "kafka_server_brokertopicmetrics_bytesin", "counter", {}),
    (name("kafka.network", "RequestMetrics", "TotalTimeMs", request="Produce"), "histogram",
     "kafka_network_requestmetrics_totaltimems", "summary", {"request": "Produce"}),
    (name("kafka.network", "RequestMetrics", "RequestsPerSec", request="Fetch", version="11"), "meter",
     "kafka_network_requestmetrics_requests", "counter", {"request": "Fetch", "version": "11"}),
    (name("kafka.network", "RequestMetrics", "ErrorsPerSec", request="Produce", error="NONE"), "meter",
     "kafka_network_requestmetrics_errors", "counter", {"request": "Produce", "error": "NONE"}),
    (name("kafka.server", "ReplicaManager", "UnderReplicatedPartitions"), "gauge",
     "kafka_server_replicamanager_underreplicatedpartitions", "gauge", {}),
    (name("kafka.controller", "KafkaController", "ActiveControllerCount"), "gauge",
     "kafka_controller_kafkacontroller_activecontrollercount", "gauge", {}),
    (name("kafka.controller", "ControllerStats", "LeaderElectionRateAndTimeMs"), "timer",
     "kafka_controller_controllerstats_leaderelectionrateandtimems", "summary", {}),
    (name("kafka.log", "Log", "Size", topic="t", partition="0"), "gauge",
     "kafka_log_log_size", "gauge", {"topic": "t", "partition": "0"}),
    (name("kafka.network", "SocketServer", "NetworkProcessorAvgIdlePercent"), "gauge",
     "kafka_network_socketserver_networkprocessoravgidle_percent", "gauge", {}),
    (name("kafka.network", "Processor", "IdlePercent", networkProcessor="0"), "gauge",
     "kafka_network_processor_idle_percent", "gauge", {"networkProcessor": "0"}),
    (name("kafka.server", "KafkaRequestHandlerPool", "RequestHandlerAvgIdlePercent"), "meter",
     "kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent", "gauge", {}),
    (name("kafka.server", "DelayedOperationPurgatory", "PurgatorySize", delayedOperation="Produce"), "gauge",
     "kafka_server_delayedoperationpurgatory_purgatorysize", "gauge", {"delayedOperation": "Produce"}),
    (name("kafka.server", "ReplicaFetcherManager", "MaxLag", clientId="Replica"), "gauge",
     "kafka_server_replicafetchermanager_maxlag", "gauge", {"clientId": "Replica"}),
    (name("kafka.server", "FetcherLagMetrics", "ConsumerLag", clientId="ReplicaFetcherThread-0-1",
          topic="t", partition="0"), "gauge",
     "kafka_server_fetcherlagmetrics_consumerlag", "gauge",
     {"clientId": "ReplicaFetcherThread-0-1", "topic": "t", "partition": "0"}),
    (name("kafka.coordinator.group", "GroupMetadataManager", "NumGroups"), "gauge",
     "kafka_coordinator_group_groupmetadatamanager_numgroups", "gauge", {}),
    (name("kafka.log", "LogCleanerManager", "max-dirty-percent"), "gauge",
     "kafka_log_logcleanermanager_max_dirty_percent", "gauge", {}),
    (name("kafka.server", "SessionExpireListener", "ZooKeeperExpiresPerSec"), "meter",
     "kafka_server_sessionexpirelistener_zookeeperexpires", "counter", {}),
    (MetricName("kafka.server", "socket-server-metrics", "", None,
                "kafka.server:type=socket-server-metrics,listener=PLAINTEXT,networkProcessor=0",
                (("listener", "PLAINTEXT"), ("networkProcessor", "0")), attribute="connection-count"), "gauge",
     "kafka_server_socket_server_metrics_connection_count", "gauge", {"listener": "PLAINTEXT", "networkProcessor": "0"}),
    (MetricName("kafka.server", "transaction-coordinator-metrics", "", None,
                "kafka.server:type=transaction-coordinator-metrics", (), attribute="partition-load-time-max"), "gauge",
     "kafka_server_transaction_coordinator_metrics_partition_load_time_max", "gauge", {}),
    (MetricName("kafka.server", "socket-server-metrics", "", None,
                "kafka.server:type=socket-server-metrics,listener=SASL_PLAINTEXT,networkProcessor=3",
                (("listener", "SASL_PLAINTEXT"), ("networkProcessor", "3")), attribute="failed-authentication-total"),
     "gauge", "kafka_server_socket_server_metrics_failed_authentication", "counter",
     {"listener": "SASL_PLAINTEXT", "networkProcessor": "3"}),
    (MetricName("kafka.server", "socket-server-metrics", "", None,
                "kafka.server:type=socket-server-metrics,listener=SSL,networkProcessor=0",
                (("listener", "SSL"), ("networkProcessor", "0")), attribute="successful-authentication-rate"),
     "gauge", "kafka_server_socket_server_metrics_successful_authentication_rate", "gauge",
     {"listener": "SSL", "networkProcessor": "0"}),
    (MetricName("kafka.server", "socket-server-metrics", "", None,
                "kafka.server:type=socket-server-metrics,listener=PLAINTEXT,networkProcessor=1",
                (("listener", "PLAINTEXT"), ("networkProcessor", "1")), attribute="incoming-byte-total"),
     "gauge", "kafka_server_socket_server_metrics_incoming_byte", "counter",
     {"listener": "PLAINTEXT", "networkProcessor": "1"}),
    (MetricName("kafka.server", "socket-server-metrics", "", None,
                "kafka.server:type=socket-server-metrics,listener=PLAINTEXT,networkProcessor=1",
                (("listener", "PLAINTEXT"), ("networkProcessor", "1")), attribute="io-waittime-total"),
     "gauge", "kafka_server_socket_server_metrics_io_waittime", "counter",
     {"listener": "PLAINTEXT", "networkProcessor": "1"}),
    (MetricName("kafka.server", "socket-server-metrics", "", None,
                "kafka.server:type=socket-server-metrics,clientSoftwareName=kafka-python,"
                "clientSoftwareVersion=3.0.12,listener=PLAINTEXT,networkProcessor=1",
                (("clientSoftwareName", "kafka-python"), ("clientSoftwareVersion", "3.0.12"),
                 ("listener", "PLAINTEXT"), ("networkProcessor", "1")), attribute="connections"),
     "gauge", "kafka_server_socket_server_metrics_connections_software", "gauge",
     {"clientSoftwareName": "kafka-python", "clientSoftwareVersion": "3.0.12", "listener": "PLAINTEXT",
      "networkProcessor": "1"}),
    (MetricName("kafka.server", "socket-server-metrics", "", None,
                "kafka.server:type=socket-server-metrics,cipher=TLS_AES_256_GCM_SHA384,protocol=TLSv1.3,"
                "listener=SSL,networkProcessor=0",
                (("cipher", "TLS_AES_256_GCM_SHA384"), ("protocol", "TLSv1.3"), ("listener", "SSL"),
                 ("networkProcessor", "0")), attribute="connections"),
     "gauge", "kafka_server_socket_server_metrics_connections_tls_info", "gauge",
     {"cipher": "TLS_AES_256_GCM_SHA384", "protocol": "TLSv1.3", "listener": "SSL", "networkProcessor": "0"}),
    (MetricName("kafka.server", "Request", "", None, "kafka.server:type=Request", (),
                attribute="exempt-request-time"), "gauge", "kafka_server_request_exempt_request_time", "gauge", {}),
    (MetricName("kafka.server", "LeaderReplication", "", None, "kafka.server:type=LeaderReplication", (),
                attribute="byte-rate"), "gauge", "kafka_server_leaderreplication_byte_rate", "gauge", {}),
    (name("kafka.network", "SocketServer", "ExpiredConnectionsKilledCount"), "gauge",
     "kafka_network_socketserver_expiredconnectionskilledcount", "gauge", {}),
    # the quota rules of kafka-2_0_0.yml: user and client-id, client-id alone (and user alone)
    (MetricName("kafka.server", "Produce", "", None, "kafka.server:type=Produce,user=alice,client-id=c1",
                (("user", "alice"), ("client-id", "c1")), attribute="throttle-time"), "gauge",
     "kafka_server_quota_throttle_time", "gauge", {"resource": "Produce", "user": "alice", "clientId": "c1"}),
    (MetricName("kafka.server", "Fetch", "", None, "kafka.server:type=Fetch,client-id=c1",
                (("client-id", "c1"),), attribute="byte-rate"), "gauge",
     "kafka_server_quota_byte_rate", "gauge", {"resource": "Fetch", "clientId": "c1"}),
    (MetricName("kafka.server", "Request", "", None, "kafka.server:type=Request,user=bob",
                (("user", "bob"),), attribute="request-time"), "gauge",
     "kafka_server_quota_request_time", "gauge", {"resource": "Request", "user": "bob"}),
    (MetricName("kafka.server", "ControllerMutation", "", None, "kafka.server:type=ControllerMutation,client-id=c",
                (("client-id", "c"),), attribute="mutation-rate"), "gauge",
     "kafka_server_quota_mutation_rate", "gauge", {"resource": "ControllerMutation", "clientId": "c"}),
    # FetcherStats: the two labels of the exporter's clientId/brokerHost/brokerPort rule
    (name("kafka.server", "FetcherStats", "BytesPerSec", clientId="ReplicaFetcherThread-0-1",
          brokerHost="h1", brokerPort="9092"), "meter",
     "kafka_server_fetcherstats_bytes", "counter", {"clientId": "ReplicaFetcherThread-0-1", "broker": "h1:9092"}),
    (name("kafka.server", "SessionExpireListener", "SessionState"), "gauge",
     "kafka_server_sessionexpirelistener_sessionstate", "gauge", {}),
])
def test_names_follow_the_jmx_exporter_kafka_rules(metric, kind, family, exported_kind, labels):
    exported = jmx_exporter_name(metric, kind)
    assert exported is not None
    assert (exported.family, exported.kind, exported.labels) == (family, exported_kind, labels)


def test_metrics_with_more_than_two_tags_are_not_exported():
    metric = name("kafka.log", "Log", "Size", topic="t", partition="0", **{"is-future": "true"})
    assert jmx_exporter_name(metric, "gauge") is None
    # a Kafka-metrics attribute whose tags no rule knows matches none either
    other = MetricName("kafka.server", "Request", "", None, "kafka.server:type=Request,queue=q",
                       (("queue", "q"),), attribute="queue-size")
    assert jmx_exporter_name(other, "gauge") is None


def test_counters_and_state_gauges_in_a_scrape():
    registry = MetricsRegistry(start_ticker=False)
    tags = (("listener", "SASL_PLAINTEXT"), ("networkProcessor", "2"))
    mbean = "kafka.server:type=socket-server-metrics,listener=SASL_PLAINTEXT,networkProcessor=2"
    registry.new_gauge(MetricName("kafka.server", "socket-server-metrics", "", None, mbean, tags,
                                  attribute="failed-authentication-total"), lambda: 3.0)
    state = ["CONNECTED"]
    registry.new_state_gauge(name("kafka.server", "SessionExpireListener", "SessionState"), lambda: state[0],
                             ("CONNECTING", "CONNECTED", "CLOSED"))
    server = PrometheusMetricsServer("127.0.0.1", 0, registry)
    text = server.render().decode()
    assert "# TYPE kafka_server_socket_server_metrics_failed_authentication_total counter" in text
    samples = parse_exposition(text)
    assert samples[("kafka_server_socket_server_metrics_failed_authentication_total",
                    (("listener", "SASL_PLAINTEXT"), ("networkProcessor", "2")))] == 3
    state_samples = {dict(labels)["state"]: v for (n, labels), v in samples.items()
                     if n == "kafka_server_sessionexpirelistener_sessionstate"}
    assert state_samples == {"CONNECTING": 0, "CONNECTED": 1, "CLOSED": 0}
    state[0] = "ASSOCIATING"  # a state the gauge did not list still shows
    time.sleep(0.01)
    samples = parse_exposition(server.render().decode())
    assert samples[("kafka_server_sessionexpirelistener_sessionstate", (("state", "ASSOCIATING"),))] == 1
    assert samples[("kafka_server_sessionexpirelistener_sessionstate", (("state", "CONNECTED"),))] == 0


def test_safe_name_collapses_and_lowercases():
    assert safe_name("kafka_server_app-info__Start") == "kafka_server_app_info_start"


@pytest.fixture
def endpoint():
    registry = MetricsRegistry(start_ticker=False)
    registry.new_meter(name("kafka.server", "BrokerTopicMetrics", "MessagesInPerSec", topic="t")).mark(7)
    hist = registry.new_histogram(name("kafka.network", "RequestMetrics", "TotalTimeMs", request="Produce"))
    for v in range(1, 101):
        hist.update(v)
    registry.new_gauge(name("kafka.server", "ReplicaManager", "LeaderCount"), lambda: 4)

    def broken():
        raise RuntimeError("closed log")

    registry.new_gauge(name("kafka.log", "Log", "Size", topic="gone", partition="0"), broken)
    server = PrometheusMetricsServer("127.0.0.1", 0, registry, {"id": "0", "version": "2.8.2", "commit_id": "c"})
    server.startup()
    yield server, registry
    server.shutdown()


def get(port, path, timeout=10.0):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def test_scrape_serves_the_text_format(endpoint):
    server, _ = endpoint
    status, text = get(server.port, "/metrics")
    assert status == 200
    samples = parse_exposition(text)
    assert samples[("kafka_server_brokertopicmetrics_messagesin_total", (("topic", "t"),))] == 7
    assert samples[("kafka_network_requestmetrics_totaltimems_count", (("request", "Produce"),))] == 100
    assert samples[("kafka_network_requestmetrics_totaltimems",
                    (("quantile", "0.99"), ("request", "Produce")))] == pytest.approx(99.99)
    assert samples[("kafka_server_replicamanager_leadercount", ())] == 4
    assert samples[("kafka_server_app_info", (("commit_id", "c"), ("id", "0"), ("version", "2.8.2")))] == 1
    assert "gone" not in text  # a gauge that fails to read is left out, the rest is served


def test_other_paths_are_404(endpoint):
    server, _ = endpoint
    for path in ("/", "/metricsx", "/admin", "/../etc/passwd"):
        assert get(server.port, path)[0] == 404
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/metrics", body=b"x")
    assert conn.getresponse().status == 501
    conn.close()


def test_garbage_and_half_requests_do_not_stop_the_endpoint(endpoint):
    server, _ = endpoint
    for payload in (b"\x00\xff garbage\r\n\r\n", b"GET", b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"a" * 70000):
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            s.settimeout(10)
            try:
                while s.recv(65536):
                    pass
            except OSError:
                pass
    assert get(server.port, "/metrics")[0] == 200


def test_a_flood_of_concurrent_scrapes_is_survived(endpoint):
    server, registry = endpoint
    for i in range(1000):  # enough series that a rendering takes a while
        registry.new_gauge(name("kafka.log", "Log", "LogEndOffset", topic="flood", partition=str(i)), lambda: 1)
    results: list[int] = []

    def scrape(_):
        try:
            return get(server.port, "/metrics", timeout=30)[0]
        except OSError:
            return -1  # closed unanswered: the queue of connections was full

    with concurrent.futures.ThreadPoolExecutor(max_workers=48) as pool:
        results = list(pool.map(scrape, range(300)))
    assert results.count(200) > 0
    assert set(results) <= {200, -1}
    assert get(server.port, "/metrics")[0] == 200


def test_slow_scrapers_do_not_block_updates_or_other_scrapes(endpoint):
    server, registry = endpoint
    meter = registry.new_meter(name("kafka.server", "BrokerTopicMetrics", "MessagesInPerSec", topic="t"))
    slow = []
    for _ in range(2):  # as many as there are workers: each holds one without reading
        s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never finishes its headers
        slow.append(s)
    try:
        marked = threading.Event()

        def mark():
            for _ in range(10_000):
                meter.mark()
            marked.set()

        threading.Thread(target=mark).start()
        assert marked.wait(10)
        # The workers are held by the slow clients until their socket timeout; a new scrape waits
        # for one of them and is then answered.
        status, text = get(server.port, "/metrics", timeout=server.SOCKET_TIMEOUT_S + 20)
        assert status == 200
        assert parse_exposition(text)[("kafka_server_brokertopicmetrics_messagesin_total", (("topic", "t"),))] == 10_007
    finally:
        for s in slow:
            s.close()


def test_shutdown_frees_the_port(endpoint):
    server, _ = endpoint
    port = server.port
    server.shutdown()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            break
        time.sleep(0.05)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
