"""The broker's metrics over its Prometheus endpoint, against a real broker process and real
clients: BrokerTopicMetrics against the records and bytes produced, RequestMetrics counts
against the requests sent, the endpoint's answers to other paths."""
from __future__ import annotations

import concurrent.futures
import http.client
import pathlib
import socket

import pytest
from kafka import KafkaConsumer, KafkaProducer

from kafka_py.core.metrics.prometheus_exporter import parse_exposition
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.messages import request_schema
from tests.integration.broker_harness import BrokerProcess, RawClient, free_port, unique_chroot, wait_until
from kafka_py.core.tools.group_subscription import subscribe

N = 40


@pytest.fixture(scope="module")
def metrics_broker(zookeeper, tmp_path_factory):
    port = free_port()
    broker = BrokerProcess(tmp_path_factory.mktemp("metrics-broker"), zookeeper.connect_string, unique_chroot(),
                           overrides={"kafka.py.metrics.prometheus.port": str(port),
                                      "kafka.py.metrics.prometheus.host": "127.0.0.1"})
    broker.metrics_port = port
    broker.start()
    yield broker
    if broker.running:
        assert broker.stop() == 0, broker.tail()


def scrape(port: int) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        assert response.status == 200
        return parse_exposition(response.read().decode())
    finally:
        conn.close()


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_produce_and_fetch_counts_match_what_was_sent(metrics_broker):
    broker = metrics_broker
    topic = "metrics-produce"
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1, linger_ms=5)
    for i in range(N):
        producer.send(topic, value=b"v%03d" % i + b"x" * 96)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=5000, enable_auto_commit=False)
    received = []
    for message in consumer:
        received.append(message.value)
        if len(received) == N:
            break
    consumer.close()
    assert len(received) == N

    # What the log holds is what arrived on the wire as record batches.
    log_bytes = sum(p.stat().st_size for p in pathlib.Path(broker.log_dir, f"{topic}-0").glob("*.log"))
    wait_until(lambda: value(scrape(broker.metrics_port), "kafka_server_brokertopicmetrics_messagesin_total",
                             topic=topic) == N, 30, "MessagesInPerSec never reached N")
    samples = scrape(broker.metrics_port)
    assert value(samples, "kafka_server_brokertopicmetrics_bytesin_total", topic=topic) == log_bytes
    assert value(samples, "kafka_server_brokertopicmetrics_messagesin_total") >= N
    assert value(samples, "kafka_server_brokertopicmetrics_totalproducerequests_total", topic=topic) >= 1
    assert value(samples, "kafka_server_brokertopicmetrics_totalfetchrequests_total", topic=topic) >= 1
    assert value(samples, "kafka_server_brokertopicmetrics_bytesout_total", topic=topic) >= log_bytes
    assert value(samples, "kafka_server_brokertopicmetrics_failedproducerequests_total", topic=topic) == 0
    produce_count = value(samples, "kafka_network_requestmetrics_totaltimems_count", request="Produce")
    assert produce_count >= 1
    for hist in ("requestqueuetimems", "localtimems", "remotetimems", "responsequeuetimems",
                 "responsesendtimems", "requestbytes", "throttletimems"):
        assert value(samples, f"kafka_network_requestmetrics_{hist}_count", request="Produce") == produce_count
    assert value(samples, "kafka_network_requestmetrics_totaltimems", request="Produce", quantile="0.99") >= 0
    assert value(samples, "kafka_network_requestmetrics_totaltimems_count", request="FetchConsumer") >= 1

    # One Fetch of the whole log: BytesOutPerSec grows by exactly the record bytes it carried.
    before = value(scrape(broker.metrics_port), "kafka_server_brokertopicmetrics_bytesout_total", topic=topic)
    fetch = build_entity(request_schema(ApiKeys.FETCH, 11), {
        "replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
        "session_id": 0, "session_epoch": -1, "topics": [{"topic": topic, "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "log_start_offset": -1,
             "partition_max_bytes": 1 << 20}]}]})
    with RawClient(broker.port) as client:
        records = client.request(ApiKeys.FETCH, 11, fetch).responses[0].partitions[0].records
    assert len(records) == log_bytes
    wait_until(lambda: value(scrape(broker.metrics_port), "kafka_server_brokertopicmetrics_bytesout_total",
                             topic=topic) - before == log_bytes, 30, "BytesOutPerSec did not count the fetch")


def test_request_counts_per_type_match_the_requests_sent(metrics_broker):
    broker = metrics_broker
    name = "kafka_network_requestmetrics_requests_total"
    before = scrape(broker.metrics_port)
    metadata = request_schema(ApiKeys.METADATA, 9)(
        topics=(), allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
        include_topic_authorized_operations=False)
    versions = request_schema(ApiKeys.API_VERSIONS, 3)(client_software_name="metrics-test",
                                                       client_software_version="1")
    with RawClient(broker.port, client_id="metrics-test") as client:
        for _ in range(7):
            client.request(ApiKeys.METADATA, 9, metadata)
        for _ in range(3):
            client.request(ApiKeys.API_VERSIONS, 3, versions)

    def counted() -> bool:
        after = scrape(broker.metrics_port)
        return (value(after, name, request="Metadata", version="9") - value(before, name, request="Metadata", version="9") == 7
                and value(after, name, request="ApiVersions", version="3")
                - value(before, name, request="ApiVersions", version="3") == 3)

    wait_until(counted, 30, "RequestsPerSec did not count the requests sent")
    after = scrape(broker.metrics_port)
    assert (value(after, "kafka_network_requestmetrics_errors_total", request="ApiVersions", error="NONE")
            - value(before, "kafka_network_requestmetrics_errors_total", request="ApiVersions", error="NONE")) == 3


def test_broker_gauges_are_served(metrics_broker):
    samples = scrape(metrics_broker.metrics_port)
    assert value(samples, "kafka_server_kafkaserver_brokerstate") == 3  # RUNNING
    assert 0.0 <= value(samples, "kafka_network_socketserver_networkprocessoravgidle_percent") <= 1.0
    assert 0.0 <= value(samples, "kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent") <= 1.0
    assert any(n == "kafka_server_app_info" for n, _ in samples)
    assert any(n == "kafka_server_socket_server_metrics_connection_count" for n, _ in samples)
    # nothing made the acceptor wait for a network thread: its blocked time is counted, and 0
    assert samples[("kafka_network_acceptor_acceptorblockedpercent_count", (("listener", "PLAINTEXT"),))] == 0


def test_other_paths_are_404_and_the_broker_serves_on(metrics_broker):
    conn = http.client.HTTPConnection("127.0.0.1", metrics_broker.metrics_port, timeout=10)
    conn.request("GET", "/")
    assert conn.getresponse().status == 404
    conn.close()
    assert metrics_broker.knows_itself()


def test_slow_and_flooding_scrapers_do_not_hold_up_clients(metrics_broker):
    """Scrapers that never read their answer, half-sent requests and a flood of concurrent
    scrapes, all at once: the broker keeps serving produce and fetch, and a well-behaved
    scrape still gets its answer."""
    broker = metrics_broker
    topic = "metrics-slow-scrapers"
    stalled = []
    try:
        for i in range(4):  # twice the exporter's workers
            sock = socket.create_connection(("127.0.0.1", broker.metrics_port), timeout=10)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            # half of them ask and never read the answer, half never finish asking
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" if i % 2 == 0 else b"GET /metr")
            stalled.append(sock)

        def scrape_size() -> int:
            # queued behind the stalled ones until the exporter's socket timeout frees its workers
            conn = http.client.HTTPConnection("127.0.0.1", broker.metrics_port, timeout=90)
            try:
                conn.request("GET", "/metrics")
                response = conn.getresponse()
                return len(response.read()) if response.status == 200 else -response.status
            finally:
                conn.close()

        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            flood = [pool.submit(scrape_size) for _ in range(48)]
            producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1)
            try:
                for i in range(N):
                    producer.send(topic, value=b"slow-%03d" % i).get(timeout=30)
            finally:
                producer.close()
            sizes = [f.result(timeout=120) for f in flood]
        assert all(size > 0 for size in sizes), sizes

        consumer = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                                 consumer_timeout_ms=10000, enable_auto_commit=False)
        try:
            received = [m.value for _, m in zip(range(N), consumer)]
        finally:
            consumer.close()
        assert received == [b"slow-%03d" % i for i in range(N)]
        assert value(scrape(broker.metrics_port), "kafka_server_brokertopicmetrics_messagesin_total",
                     topic=topic) == N
    finally:
        for sock in stalled:
            sock.close()


def test_replica_manager_gauges(metrics_broker):
    samples = scrape(metrics_broker.metrics_port)
    leaders = value(samples, "kafka_server_replicamanager_leadercount")
    assert leaders >= 1  # the produce test's topic at least
    assert value(samples, "kafka_server_replicamanager_partitioncount") >= leaders
    assert value(samples, "kafka_server_replicamanager_underreplicatedpartitions") == 0
    assert value(samples, "kafka_server_replicamanager_offlinereplicacount") == 0


def test_kafka_log_files_each_get_their_loggers_lines(metrics_broker):
    """config/logging.yaml's files under $LOG_DIR (the harness gives each broker its own):
    the controller's election in controller.log, LeaderAndIsr in state-change.log, the
    broker's own lines in server.log and stdout."""
    broker = metrics_broker
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1)
    producer.send("metrics-log-files", value=b"x").get(timeout=30)
    producer.close()
    logs = broker.logs_dir

    def text(name: str) -> str:
        # with the files rolled at the top of the hour (name.yyyy-MM-dd-HH): a broker started
        # before it has its first lines there
        return "".join(path.read_text(errors="replace") for path in sorted(logs.glob(name + "*")))

    wait_until(lambda: "Handling LeaderAndIsr request" in text("state-change.log")
               and "metrics-log-files" in text("state-change.log"), 30,
               f"no LeaderAndIsr line in state-change.log: {sorted(p.name for p in logs.iterdir())}")
    controller = text("controller.log")
    assert "0 successfully elected as the controller" in controller
    assert "(kafka_py.controller.kafka_controller)" in controller
    # a thread's own lines, its base class's Starting included, go to its class's module
    # logger under its prefix: the controller's event thread is in controller.log
    assert ("[ControllerEventThread controllerId=0] Starting (kafka_py.controller.controller_event_manager)"
            in controller)
    server = text("server.log")
    assert "[KafkaServer id=0] started (kafka_py.server.kafka_server)" in server
    assert ("[SocketServer brokerId=0] Started socket server acceptors and processors "
            "(kafka_py.network.socket_server)") in server
    assert "[KafkaServer id=0] started" in broker.output()
    # as in Kafka 2.8.2's log4j.properties (additivity=false): state changes and the
    # controller's lines (at TRACE) only in their own files
    assert "(state.change.logger)" not in server and "(state.change.logger)" not in broker.output()
    assert "successfully elected as the controller" not in server
    assert "(kafka_py.controller." not in server and "(kafka_py.controller." not in broker.output()
    # the request logger is at WARN: no "Completed request" lines by default
    assert "Completed request" not in text("kafka-request.log")


def test_log_purgatory_group_and_zookeeper_metrics(metrics_broker):
    broker = metrics_broker
    topic = "metrics-log-gauges"
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1)
    for i in range(7):
        producer.send(topic, value=b"%d" % i)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id="metrics-group",
                             auto_offset_reset="earliest", consumer_timeout_ms=5000, enable_auto_commit=False)
    subscribe(consumer, [topic])
    got = 0
    for _ in consumer:
        got += 1
        if got == 7:
            break
    consumer.commit()
    consumer.close()

    samples = scrape(broker.metrics_port)
    assert value(samples, "kafka_log_log_logendoffset", topic=topic, partition="0") == 7
    assert value(samples, "kafka_log_log_logstartoffset", topic=topic, partition="0") == 0
    assert value(samples, "kafka_log_log_numlogsegments", topic=topic, partition="0") == 1
    log_bytes = sum(p.stat().st_size for p in pathlib.Path(broker.log_dir, f"{topic}-0").glob("*.log"))
    assert value(samples, "kafka_log_log_size", topic=topic, partition="0") == log_bytes
    for operation in ("Produce", "Fetch", "DeleteRecords", "ElectLeader", "Heartbeat", "Rebalance"):
        assert ("kafka_server_delayedoperationpurgatory_purgatorysize",
                (("delayedOperation", operation),)) in samples, operation
        assert ("kafka_server_delayedoperationpurgatory_numdelayedoperations",
                (("delayedOperation", operation),)) in samples, operation
    assert value(samples, "kafka_coordinator_group_groupmetadatamanager_numgroups") >= 1
    assert value(samples, "kafka_coordinator_group_groupmetadatamanager_numoffsets") >= 1
    assert value(samples, "kafka_coordinator_group_groupmetadatamanager_numgroupsempty") >= 1
    assert value(samples, "kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms_count") > 0
    assert value(samples, "kafka_server_sessionexpirelistener_zookeepersyncconnects_total") >= 1
    assert value(samples, "kafka_server_sessionexpirelistener_zookeeperexpires_total") == 0
    # the log cleaner runs (log.cleaner.enable defaults to true) and reports its gauges
    assert ("kafka_log_logcleaner_max_buffer_utilization_percent", ()) in samples
    assert ("kafka_log_logcleanermanager_max_dirty_percent", ()) in samples
    assert value(samples, "kafka_log_logcleaner_deadthreadcount") == 0
    uncleanable = ("kafka_log_logcleanermanager_uncleanable_partitions_count",
                   (("logDirectory", str(pathlib.Path(broker.log_dir).resolve())),))
    assert samples[uncleanable] == 0

    # a deleted topic's log takes its gauges with it
    log_end_key = ("kafka_log_log_logendoffset", (("partition", "0"), ("topic", topic)))
    assert log_end_key in samples
    from kafka.admin import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.delete_topics([topic], timeout_ms=30000)
    finally:
        admin.close()
    wait_until(lambda: log_end_key not in scrape(broker.metrics_port), 60, "the deleted topic's Log gauges stayed")


def test_errors_per_sec_of_answers_written_without_objects(metrics_broker):
    """Produce v3+ and Metadata answers are written straight from values; their ErrorsPerSec
    still counts each topic's and partition's error."""
    from kafka_py.clients.common.protocol.entities import build_entity

    broker = metrics_broker
    topic = "metrics-errors"
    errors = "kafka_network_requestmetrics_errors_total"
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1)
    producer.send(topic, value=b"x").get(timeout=30)
    before = scrape(broker.metrics_port)
    for _ in range(3):
        producer.send(topic, value=b"y").get(timeout=30)
    producer.close()
    produced = scrape(broker.metrics_port)
    metadata = build_entity(request_schema(ApiKeys.METADATA, 9), {
        "topics": [{"name": topic}, {"name": "metrics-errors-missing"}], "allow_auto_topic_creation": False,
        "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False})
    with RawClient(broker.port, client_id="metrics-test") as client:
        for _ in range(2):
            client.request(ApiKeys.METADATA, 9, metadata)

    def delta(request: str, error: str) -> float:
        # Metadata from after the producer is gone (it asks for metadata too)
        base = before if request == "Produce" else produced
        return (value(scrape(broker.metrics_port), errors, request=request, error=error)
                - value(base, errors, request=request, error=error))

    wait_until(lambda: delta("Metadata", "UNKNOWN_TOPIC_OR_PARTITION") == 2, 30,
               "Metadata's UNKNOWN_TOPIC_OR_PARTITION not counted")
    # each answer: the topic and its one partition without error
    assert delta("Metadata", "NONE") == 4
    # one partition per produce request, each without error
    assert delta("Produce", "NONE") == 3


def test_a_real_prometheus_scrapes_the_broker(metrics_broker, tmp_path):
    """Debian's Prometheus, on a temporary config and port, scrapes the endpoint; the value it
    stores, read back through its HTTP query API, is the broker's."""
    import json
    import shutil
    import subprocess
    import urllib.parse
    import urllib.request

    binary = shutil.which("prometheus")
    assert binary, "Debian's prometheus package is needed (bin/run-tests.sh installs it)"
    broker = metrics_broker
    topic = "metrics-prometheus"
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1)
    for i in range(5):
        producer.send(topic, value=b"%d" % i)
    producer.flush(30)
    producer.close()
    wait_until(lambda: value(scrape(broker.metrics_port), "kafka_server_brokertopicmetrics_messagesin_total",
                             topic=topic) == 5, 30, "the broker did not count the 5 records")

    config = tmp_path / "prometheus.yml"
    config.write_text(f"""global:
  scrape_interval: 1s
scrape_configs:
  - job_name: kafka
    static_configs: [{{targets: ["127.0.0.1:{broker.metrics_port}"]}}]
""")
    port = free_port()
    output = open(tmp_path / "prometheus.out", "wb")
    process = subprocess.Popen([binary, f"--config.file={config}", f"--web.listen-address=127.0.0.1:{port}",
                                f"--storage.tsdb.path={tmp_path / 'data'}"], stdout=output, stderr=subprocess.STDOUT)
    query = urllib.parse.quote(f'kafka_server_brokertopicmetrics_messagesin_total{{topic="{topic}"}}')
    found: list = []

    def stored() -> bool:
        if process.poll() is not None:
            raise RuntimeError((tmp_path / "prometheus.out").read_text(errors="replace")[-3000:])
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/query?query={query}", timeout=5) as r:
                answer = json.load(r)
        except OSError:
            return False
        results = answer.get("data", {}).get("result", [])
        if results:
            found.append(results[0])
        return bool(results)

    try:
        wait_until(stored, 60, "Prometheus never stored the broker's metric", interval=0.5)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        output.close()
    result = found[0]
    assert result["metric"]["job"] == "kafka" and result["metric"]["topic"] == topic
    assert float(result["value"][1]) == 5


def test_zookeeper_session_state_reads_connected(metrics_broker):
    """kafka.server:type=SessionExpireListener,name=SessionState: one sample per state of Java's
    ZooKeeper.States, 1 for the broker's connected session."""
    samples = scrape(metrics_broker.metrics_port)
    states = {dict(labels)["state"]: v for (n, labels), v in samples.items()
              if n == "kafka_server_sessionexpirelistener_sessionstate"}
    assert states["CONNECTED"] == 1
    assert sum(states.values()) == 1 and {"CONNECTING", "CLOSED", "AUTH_FAILED"} <= set(states)


def test_client_quota_metrics_of_a_throttled_client(metrics_broker):
    """A client id held to producer_byte_rate, request_percentage and controller_mutation_rate:
    Kafka's kafka.server:type=Produce|Request|ControllerMutation,client-id=.. metrics, exported
    as kafka_server_quota_<attribute>{resource,clientId}, show its rates and the throttle time
    its answers carried."""
    from tests.integration.test_client_quotas import PROBE_TOPIC, alter_ok, create_topic, probe
    from tests.integration.test_controller_mutation_quota import _create, _throttle_ms

    broker = metrics_broker
    client = "metrics-throttled"
    create_topic(broker, PROBE_TOPIC)
    # a probe (200 KB) over 10 windows of 1 s is 20,000 bytes/s: twice the producer quota
    alter_ok(broker, [({"client-id": client}, {"producer_byte_rate": 10_000, "request_percentage": 1000,
                                               "controller_mutation_rate": 0.1})])
    for quota in ("Produce", "Request", "ControllerMutation"):
        line = f"Changing {quota} quota for client-id {client}"
        wait_until(lambda: line in broker.output(), 30, f"the broker never logged {line!r}")
    size, throttle_ms = probe(broker, client)
    assert throttle_ms > 0
    # 3 partitions from a bucket of 11 windows x 0.1: 1.9 short, 19 s to win back (v5: served anyway)
    errors, response = _create(broker, 5, {"metrics-quota-topic": 3}, client_id=client)
    assert errors == {"metrics-quota-topic": 0}
    mutation_throttle_ms = _throttle_ms(response)
    assert mutation_throttle_ms > 10_000

    def quota(attribute: str, resource: str) -> float:
        return scrape(broker.metrics_port).get(
            (f"kafka_server_quota_{attribute}", (("clientId", client), ("resource", resource))), float("nan"))

    wait_until(lambda: quota("throttle_time", "Produce") == throttle_ms, 30,
               f"Produce throttle-time {quota('throttle_time', 'Produce')} is not {throttle_ms}")
    assert 0 < quota("byte_rate", "Produce") <= size / 10  # the bytes over (at least) the 10 windows
    assert quota("request_time", "Request") > 0
    assert quota("throttle_time", "ControllerMutation") == mutation_throttle_ms
    assert quota("tokens", "ControllerMutation") < 0
    assert quota("mutation_rate", "ControllerMutation") > 0


def _listener_sum(samples: dict, family: str, listener: str = "PLAINTEXT") -> float:
    """A socket-server metric summed over the listener's network threads."""
    return sum(v for (name, labels), v in samples.items()
               if name == family and dict(labels).get("listener") == listener)


def test_socket_server_byte_metrics_count_the_frames_on_the_wire(metrics_broker):
    """Kafka's Selector metrics of the listener (socket-server-metrics, per network thread):
    incoming-byte-total and outgoing-byte-total against the bytes of the frames a client sent
    and read, response-total (requests read) and request-total (responses written) against
    the requests, the connection counts, and the windowed rates and ratios in their ranges."""
    from kafka_py.clients.common.protocol.headers import RequestHeader
    from kafka_py.clients.common.protocol.messages import encode_request

    broker = metrics_broker
    prefix = "kafka_server_socket_server_metrics_"
    totals = ("incoming_byte_total", "outgoing_byte_total", "response_total", "request_total",
              "connection_creation_total", "connection_close_total", "network_io_total", "select_total")
    before = scrape(broker.metrics_port)
    metadata = request_schema(ApiKeys.METADATA, 9)(
        topics=(), allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
        include_topic_authorized_operations=False)
    sent = received = 0
    n = 5
    with RawClient(broker.port, client_id="selector-metrics") as client:
        for i in range(n):
            header = RequestHeader.for_request(ApiKeys.METADATA, 9, i + 1, client.client_id)
            frame = encode_request(header, metadata)
            client._correlation_id = i + 1
            client.send_bytes(frame)
            sent += len(frame)
            received += 4 + len(client.receive_frame())

    def grown(name: str) -> float:
        return _listener_sum(scrape(broker.metrics_port), prefix + name) - _listener_sum(before, prefix + name)

    # the closed connection is counted once the network thread has seen the close
    wait_until(lambda: grown("connection_close_total") >= 1, 30, "connection-close-total never counted the close")
    after = scrape(broker.metrics_port)

    def diff(name: str) -> float:
        return _listener_sum(after, prefix + name) - _listener_sum(before, prefix + name)

    assert diff("incoming_byte_total") == sent
    assert diff("outgoing_byte_total") == received
    assert diff("response_total") == n
    assert diff("request_total") == n
    assert diff("connection_creation_total") == 1
    assert diff("connection_close_total") == 1
    assert diff("network_io_total") >= 2 * n       # at least one read and one write per request
    assert diff("select_total") >= n
    for name in ("incoming_byte_rate", "outgoing_byte_rate", "response_rate", "request_rate", "network_io_rate",
                 "select_rate"):
        assert _listener_sum(after, prefix + name) > 0, name
    for name in ("io_wait_ratio", "io_ratio"):
        for (family, labels), v in after.items():
            if family == prefix + name:
                assert 0.0 <= v <= 1.0, (name, labels, v)
    assert any(family == prefix + "request_size_max" and v >= 0 for (family, _), v in after.items())
    assert _listener_sum(after, prefix + "iotime_total") > 0
    assert _listener_sum(after, prefix + "io_waittime_total") > 0
    for name in totals:
        assert any(family == prefix + name[:-len("_total")] + "_total" for family, _ in after), name


def _connections_by_software(samples: dict) -> dict:
    """socket-server-metrics connections by (clientSoftwareName, clientSoftwareVersion), summed
    over the PLAINTEXT listener's network threads."""
    counts: dict = {}
    for (name, labels), v in samples.items():
        if name == "kafka_server_socket_server_metrics_connections_software":
            tags = dict(labels)
            assert tags["listener"] == "PLAINTEXT" and "networkProcessor" in tags
            key = (tags["clientSoftwareName"], tags["clientSoftwareVersion"])
            counts[key] = counts.get(key, 0.0) + v
    return counts


def test_connections_are_counted_by_client_software(metrics_broker):
    """KIP-511: a kafka-python and a confluent-kafka client connected at the same time are
    counted under the software name and version their ApiVersions request gives, and no
    longer once they have closed; a connection that sends ApiVersions twice with other values
    moves from one count to the other."""
    import confluent_kafka
    import kafka

    broker = metrics_broker
    python_key = ("kafka-python", kafka.__version__)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, client_id="software-python")
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap, "client.id": "software-confluent"})
    try:
        assert consumer.topics() is not None
        assert producer.list_topics(timeout=30) is not None
        wait_until(lambda: {name for name, _ in _connections_by_software(scrape(broker.metrics_port))
                            if name.startswith("confluent-kafka")}, 30, "confluent-kafka's connections never counted")
        counts = _connections_by_software(scrape(broker.metrics_port))
        assert counts.get(python_key, 0) >= 1, counts
        (confluent_key,) = [key for key in counts if key[0].startswith("confluent-kafka") and counts[key] >= 1]
        assert confluent_key[1].startswith(confluent_kafka.version()[0]), confluent_key
    finally:
        consumer.close()
        producer.close()
    wait_until(lambda: _connections_by_software(scrape(broker.metrics_port)).get(python_key) == 0
               and _connections_by_software(scrape(broker.metrics_port)).get(confluent_key) == 0, 30,
               "the closed clients' connections are still counted")

    def versions(name: str, version: str):
        return request_schema(ApiKeys.API_VERSIONS, 3)(client_software_name=name, client_software_version=version)

    first, second = ("software-test", "1.0"), ("software-test", "2.0-rc1")
    with RawClient(broker.port, client_id="software-test") as client:
        client.request(ApiKeys.API_VERSIONS, 3, versions(*first))
        assert _connections_by_software(scrape(broker.metrics_port)).get(first) == 1
        client.request(ApiKeys.API_VERSIONS, 3, versions(*second))
        counts = _connections_by_software(scrape(broker.metrics_port))
        assert (counts.get(first), counts.get(second)) == (0, 1)
        # an invalid name (KafkaApis answers INVALID_REQUEST) leaves the count where it was
        client.send(ApiKeys.API_VERSIONS, 3, versions("not valid!", "1"))
        client.receive_frame()  # a v0 body with the error, as Kafka answers it
        assert _connections_by_software(scrape(broker.metrics_port)).get(second) == 1
    wait_until(lambda: _connections_by_software(scrape(broker.metrics_port)).get(second) == 0, 30,
               "the raw client's connection is still counted")


def test_exempt_request_time_of_the_requests_brokers_send_each_other(metrics_broker):
    """With a request quota in force, the controller's requests (LeaderAndIsr, UpdateMetadata
    for a new topic) are exempt, and their handler time shows in Kafka's
    kafka.server:type=Request / exempt-request-time."""
    from tests.integration.test_client_quotas import alter_ok, create_topic

    broker = metrics_broker
    client = "metrics-exempt"
    alter_ok(broker, [({"client-id": client}, {"request_percentage": 500})])
    line = f"Changing Request quota for client-id {client}"
    wait_until(lambda: line in broker.output(), 30, f"the broker never logged {line!r}")
    create_topic(broker, "metrics-exempt-topic")
    wait_until(lambda: value(scrape(broker.metrics_port), "kafka_server_request_exempt_request_time") > 0, 30,
               "exempt-request-time stayed at 0 after the controller's requests")
