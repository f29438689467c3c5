"""The broker's metrics in Prometheus's text format, named as the Prometheus JMX exporter's
usual Kafka rules name them: a kafka-py addition with no counterpart in Kafka's source.

Kafka publishes its Yammer metrics as JMX MBeans, and operators scrape them with the
Prometheus JMX exporter (a Java agent) configured with the rules of its example
``kafka-2_0_0.yml`` (``lowercaseOutputName: true``). Those rules turn
``kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t`` into
``kafka_server_brokertopicmetrics_messagesin_total{topic="t"}``. ``jmx_exporter_name`` applies
the same rules to our registry, so dashboards and alerts written for a Kafka broker work
here; docs/operations.md has the table. In rule order:

1. gauges of ``kafka.server`` with tags clientId, topic, partition: ``kafka_server_<type>_<name>``;
   with tags clientId, brokerHost, brokerPort: ``kafka_server_<type>_<name>{clientId,broker="host:port"}``,
   and so the fetcher threads' FetcherStats meters ``kafka_server_fetcherstats_<prefix>_total``
   with those two labels (the exporter's generic rules would garble three tags);
   the client quota metrics ``kafka.server:type=Produce|Fetch|Request|ControllerMutation,
   user=U,client-id=C`` (either tag may be absent): ``kafka_server_quota_<attribute>{resource,
   user,clientId}`` (the exporter's rules cover user and client-id, and client-id alone; user
   alone is this broker's addition in the same form);
   the per-listener, per-processor socket-server metrics:
   ``kafka_server_<type>_<attribute>{listener,networkProcessor}``, a counter for the ``-total``
   ones, and their ``connections`` by client software and by TLS cipher:
   ``kafka_server_socket_server_metrics_connections_software{clientSoftwareName,
   clientSoftwareVersion,listener,networkProcessor}`` and
   ``kafka_server_socket_server_metrics_connections_tls_info{cipher,protocol,listener,
   networkProcessor}`` (the rules of the commonly used Strimzi example config for them); Kafka-metrics attributes of an MBean without tags (``kafka.server:type=Request`` /
   ``exempt-request-time``, transaction-coordinator-metrics): ``kafka_server_<type>_<attribute>``
   (kafka-py's own: the exporter's example rules have none for them);
2. names containing ``Percent``: ``kafka_<domain>_<type>_<prefix>_percent`` (a meter's mean
   rate, a gauge's value), with at most one tag;
3. meters named ``...PerSec``: ``kafka_<domain>_<type>_<prefix>_total``, the count, as a counter;
4. ``kafka.coordinator.<x>`` gauges: ``kafka_coordinator_<x>_<type>_<name>``; other gauges with
   up to two tags: ``kafka_<domain>_<type>_<name>``;
5. histograms, timers and the remaining meters, as a summary without ``_sum``:
   ``<base>_count`` and ``<base>{quantile="0.50"|"0.75"|"0.95"|"0.98"|"0.99"|"0.999"}``.

Names are lower-cased, characters outside ``[a-zA-Z0-9:_]`` become ``_`` and runs of ``_``
collapse to one, as the exporter does. Metrics that no rule matches (more than two tags)
are not exported, as the exporter would drop them; neither are histograms and timers that
have recorded nothing yet (every API has nine, most never used). ``kafka_server_app_info`` (version and
commit id as labels, value 1) is this broker's own addition, and so are gauges whose value is
a name (the exporter drops strings): a StateGauge, such as ZooKeeper's SessionState, has one
sample per state, ``{state="CONNECTED"} 1`` and 0 for the others.

The collector reads every metric when Prometheus scrapes (``prometheus_client`` writes the
text format). ``PrometheusMetricsServer`` serves it on ``GET /metrics`` (anything else: 404)
from a small fixed pool of threads: a flood of scrapes queues up to a bound and the rest are
closed, each connection has a socket timeout so a slow scraper only holds its own worker,
and scrapes that wait while one is being rendered take that rendering.
"""
from __future__ import annotations

import http.server
import logging
import queue
import re
import socket
import threading
import time
from typing import Any, Iterator, Optional

from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.metrics_core import Metric as PromMetric
from prometheus_client.registry import CollectorRegistry

from kafka_py.core.metrics.kafka_metrics_group import default_registry
from kafka_py.core.metrics.yammer import PERCENTILES, Gauge, Histogram, Meter, MetricName, MetricsRegistry, Timer

logger = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^a-zA-Z0-9:_]")
_UNDERSCORES = re.compile(r"_+")
_QUANTILE_LABELS = tuple((q, "0." + attr[: -len("thPercentile")]) for q, attr in PERCENTILES)
# The tags of the client quota managers' metrics (ClientQuotaManager's user and client-id, empty ones left out).
_QUOTA_TAGS = (("user", "client-id"), ("client-id",), ("user",))
# socket-server-metrics' ``connections`` by client software and by TLS cipher: the family suffix
# the exporter's rules for them give (Strimzi's kafka-metrics.yaml, among others).
_CONNECTIONS_TAGS = {
    ("clientSoftwareName", "clientSoftwareVersion", "listener", "networkProcessor"): "connections_software",
    ("cipher", "protocol", "listener", "networkProcessor"): "connections_tls_info",
}


def safe_name(name: str) -> str:
    """The JMX exporter's safeName (then lower-cased, for lowercaseOutputName)."""
    name = _UNDERSCORES.sub("_", _UNSAFE.sub("_", name))
    if name and name[0].isdigit():
        name = "_" + name
    return name.lower()


def _safe_label(name: str) -> str:
    return _UNDERSCORES.sub("_", _UNSAFE.sub("_", name))


class ExportedName:
    """Where one registry metric lands: a family name, its type, and the labels of its samples."""

    __slots__ = ("family", "kind", "labels", "attribute")

    def __init__(self, family: str, kind: str, labels: dict[str, str], attribute: str) -> None:
        self.family = family      # e.g. kafka_server_brokertopicmetrics_messagesin
        self.kind = kind          # counter | gauge | summary
        self.labels = labels
        self.attribute = attribute  # Count | Value | MeanRate | percentiles


def jmx_exporter_name(name: MetricName, kind: str) -> Optional[ExportedName]:
    """The exported name of a registry metric of ``kind`` (gauge, meter, histogram, timer)."""
    group = name.group
    if not group.startswith("kafka."):
        return None
    domain = group[len("kafka."):]
    tags = name.tags
    keys = tuple(k for k, _ in tags)
    values = [v for _, v in tags]
    labels = {_safe_label(k): v for k, v in tags}
    simple_domain = "." not in domain and domain != ""

    # Kafka-metrics (not Yammer) attributes: socket-server-metrics, the quota metrics, app-info,
    # and those of an MBean without tags (transaction-coordinator-metrics, exempt-request-time).
    if name.attribute is not None:
        if group == "kafka.server" and name.attribute == "connections" and keys in _CONNECTIONS_TAGS:
            return ExportedName(safe_name(f"kafka_server_{name.type}_{_CONNECTIONS_TAGS[keys]}"), "gauge",
                                labels, "Value")
        if group == "kafka.server" and keys == ("listener", "networkProcessor"):
            if name.attribute.endswith("-total"):
                return ExportedName(safe_name(f"kafka_server_{name.type}_{name.attribute[:-len('-total')]}"),
                                    "counter", labels, "Count")
            return ExportedName(safe_name(f"kafka_server_{name.type}_{name.attribute}"), "gauge", labels, "Value")
        if group == "kafka.server" and keys in _QUOTA_TAGS:
            quota_labels = {"resource": name.type}
            for k, v in tags:
                quota_labels["clientId" if k == "client-id" else k] = v
            return ExportedName(safe_name(f"kafka_server_quota_{name.attribute}"), "gauge", quota_labels, "Value")
        if group == "kafka.server" and name.type == "app-info":
            return ExportedName(safe_name(f"kafka_server_app_info_{name.attribute}"), "gauge", labels, "Value")
        if group == "kafka.server" and not keys:
            # transaction-coordinator-metrics, the Request quota's exempt-request-time
            return ExportedName(safe_name(f"kafka_server_{name.type}_{name.attribute}"), "gauge", labels, "Value")
        return None

    if kind == "gauge":
        if group == "kafka.server" and keys == ("clientId", "topic", "partition"):
            return ExportedName(safe_name(f"kafka_server_{name.type}_{name.name}"), "gauge", labels, "Value")
        if group == "kafka.server" and keys == ("clientId", "brokerHost", "brokerPort"):
            return ExportedName(safe_name(f"kafka_server_{name.type}_{name.name}"), "gauge",
                                {"clientId": values[0], "broker": f"{values[1]}:{values[2]}"}, "Value")
    if kind == "meter" and group == "kafka.server" and keys == ("clientId", "brokerHost", "brokerPort"):
        per_sec = name.name.rfind("PerSec")
        if per_sec > 0:
            return ExportedName(safe_name(f"kafka_server_{name.type}_{name.name[:per_sec]}"), "counter",
                                {"clientId": values[0], "broker": f"{values[1]}:{values[2]}"}, "Count")
    percent_at = name.name.rfind("Percent")
    if simple_domain and percent_at > 0 and len(tags) <= 1 and kind in ("gauge", "meter"):
        if kind == "meter" and not tags:
            return ExportedName(safe_name(f"kafka_{domain}_{name.type}_{name.name[:percent_at]}_percent"),
                                "gauge", labels, "MeanRate")
        if kind == "gauge":
            return ExportedName(safe_name(f"kafka_{domain}_{name.type}_{name.name[:percent_at]}_percent"),
                                "gauge", labels, "Value")
    if len(tags) > 2:
        return None
    if kind == "meter" and simple_domain:
        per_sec = name.name.rfind("PerSec")
        if per_sec > 0:
            return ExportedName(safe_name(f"kafka_{domain}_{name.type}_{name.name[:per_sec]}"), "counter",
                                labels, "Count")
    if kind == "gauge":
        if domain.startswith("coordinator.") and not tags:
            return ExportedName(safe_name(f"kafka_coordinator_{domain[len('coordinator.'):]}_{name.type}_{name.name}"),
                                "gauge", labels, "Value")
        if simple_domain:
            return ExportedName(safe_name(f"kafka_{domain}_{name.type}_{name.name}"), "gauge", labels, "Value")
        return None
    if simple_domain:
        return ExportedName(safe_name(f"kafka_{domain}_{name.type}_{name.name}"), "summary", labels, "Count")
    return None


def _number(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    return None


class KafkaMetricsCollector:
    """A prometheus_client collector over a Yammer-style registry."""

    def __init__(self, registry: MetricsRegistry, app_info: Optional[dict[str, str]] = None) -> None:
        self.registry = registry
        self.app_info = app_info
        # Mapping a name costs a few regex substitutions; metrics live long, so remember it.
        self._names: dict[tuple[MetricName, str], Optional[ExportedName]] = {}

    def _exported(self, name: MetricName, kind: str) -> Optional[ExportedName]:
        key = (name, kind)
        try:
            return self._names[key]
        except KeyError:
            exported = self._names[key] = jmx_exporter_name(name, kind)
            if len(self._names) > 200_000:  # names of removed metrics (deleted topics)
                self._names.clear()
            return exported

    def collect(self) -> Iterator[PromMetric]:
        families: dict[str, PromMetric] = {}

        def family(exported: ExportedName, name: MetricName) -> PromMetric:
            fam = families.get(exported.family)
            if fam is None:
                doc = f"{name.group}:type={name.type},name={name.name or name.attribute} {exported.attribute}"
                fam = families[exported.family] = PromMetric(exported.family, doc, exported.kind)
            return fam

        if self.app_info is not None:
            info = families["kafka_server_app_info"] = PromMetric(
                "kafka_server_app_info", "kafka.server:type=app-info version and commit id", "gauge")
            info.add_sample("kafka_server_app_info", dict(self.app_info), 1.0)

        for name, metric in self.registry.all_metrics():
            kind = metric.kind
            exported = self._exported(name, kind)
            if exported is None:
                continue
            try:
                if isinstance(metric, Gauge):
                    raw = metric.value()
                    value = _number(raw)
                    if value is None:
                        if isinstance(raw, str):
                            fam = family(exported, name)
                            states = getattr(metric, "states", ())
                            for state in states if raw in states else (*states, raw):
                                fam.add_sample(exported.family, {**exported.labels, "state": state},
                                               1.0 if state == raw else 0.0)
                        continue
                    sample = exported.family + "_total" if exported.kind == "counter" else exported.family
                    family(exported, name).add_sample(sample, exported.labels, value)
                elif isinstance(metric, Meter):
                    fam = family(exported, name)
                    if exported.attribute == "MeanRate":
                        fam.add_sample(exported.family, exported.labels, metric.mean_rate())
                    elif exported.kind == "counter":
                        fam.add_sample(exported.family + "_total", exported.labels, float(metric.count))
                    else:
                        fam.add_sample(exported.family + "_count", exported.labels, float(metric.count))
                elif isinstance(metric, (Histogram, Timer)):
                    histogram = metric.histogram if isinstance(metric, Timer) else metric
                    snapshot = histogram.snapshot()
                    if histogram.count == 0:
                        # Kafka registers every API's nine histograms; one never updated has
                        # nothing to say yet, and leaving it out keeps a scrape small.
                        continue
                    fam = family(exported, name)
                    for q, label in _QUANTILE_LABELS:
                        fam.add_sample(exported.family, {**exported.labels, "quantile": label}, snapshot.value(q))
                    fam.add_sample(exported.family + "_count", exported.labels, float(histogram.count))
            except Exception:  # noqa: BLE001 - a gauge of something closed meanwhile: skip it
                logger.debug("Could not read metric %r", name, exc_info=True)
        return iter(families.values())


class PrometheusMetricsServer:
    """``GET /metrics`` over HTTP on ``host:port`` (0: any free port), in its own threads."""

    WORKERS = 2
    QUEUED_CONNECTIONS = 64
    SOCKET_TIMEOUT_S = 10.0

    def __init__(self, host: str, port: int, registry: Optional[MetricsRegistry] = None,
                 app_info: Optional[dict[str, str]] = None, thread_name_prefix: str = "") -> None:
        self.host = host
        self.requested_port = port
        self.collector = KafkaMetricsCollector(registry or default_registry(), app_info)
        self._prom_registry = CollectorRegistry(auto_describe=False)
        self._prom_registry.register(self.collector)
        self._render_lock = threading.Lock()
        self._rendered: tuple[float, bytes] = (0.0, b"")
        self._prefix = thread_name_prefix
        self._server: Optional[_HttpServer] = None
        self._threads: list[threading.Thread] = []

    # ---- rendering --------------------------------------------------------------
    def render(self) -> bytes:
        """The text format; callers that waited while another rendering ran take its result."""
        asked = time.monotonic()
        with self._render_lock:
            rendered_at, body = self._rendered
            if rendered_at >= asked:
                return body
            body = generate_latest(self._prom_registry)
            self._rendered = (time.monotonic(), body)
            return body

    # ---- lifecycle --------------------------------------------------------------
    def startup(self) -> None:
        server = _HttpServer((self.host, self.requested_port), self, self.QUEUED_CONNECTIONS)
        self._server = server
        serve = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.5},
                                 name=f"{self._prefix}prometheus-metrics-acceptor", daemon=True)
        self._threads = [serve] + [
            threading.Thread(target=server.work, name=f"{self._prefix}prometheus-metrics-worker-{i}", daemon=True)
            for i in range(self.WORKERS)]
        for t in self._threads:
            t.start()
        logger.info("Prometheus metrics endpoint listening on http://%s:%d/metrics", self.host or "0.0.0.0",
                    self.port)

    @property
    def port(self) -> int:
        return self._server.server_address[1] if self._server is not None else self.requested_port

    def shutdown(self) -> None:
        server = self._server
        if server is None:
            return
        self._server = None
        server.shutdown()
        server.stop_workers(self.WORKERS)
        server.server_close()
        for t in self._threads:
            t.join(timeout=5)
        self._threads = []


class _Handler(http.server.BaseHTTPRequestHandler):
    server: "_HttpServer"
    # One request per connection: a scraper holding a kept-alive connection would hold a worker.
    protocol_version = "HTTP/1.0"
    timeout = PrometheusMetricsServer.SOCKET_TIMEOUT_S

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        if path != "/metrics":
            self._answer(404, b"Not Found: the metrics are at /metrics\n", "text/plain; charset=utf-8")
            return
        try:
            body = self.server.exporter.render()
        except Exception:  # noqa: BLE001
            logger.exception("Could not render the metrics")
            self._answer(500, b"Internal Server Error\n", "text/plain; charset=utf-8")
            return
        self._answer(200, body, CONTENT_TYPE_LATEST)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(404 if self.path.split("?", 1)[0] != "/metrics" else 200, b"", "text/plain")

    def _answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - no access log
        logger.debug("%s - %s", self.address_string(), format % args)


class _HttpServer(http.server.HTTPServer):
    """An HTTPServer that hands accepted connections to a fixed pool instead of a thread each."""

    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], exporter: PrometheusMetricsServer, queued: int) -> None:
        self.exporter = exporter
        self._connections: "queue.Queue[Optional[tuple[socket.socket, Any]]]" = queue.Queue(queued)
        super().__init__(address, _Handler)

    def process_request(self, request: socket.socket, client_address: Any) -> None:
        try:
            self._connections.put_nowait((request, client_address))
        except queue.Full:
            # A flood: this connection is closed unanswered rather than queued without bound.
            self.shutdown_request(request)

    def work(self) -> None:
        while True:
            item = self._connections.get()
            if item is None:
                return
            request, client_address = item
            try:
                request.settimeout(PrometheusMetricsServer.SOCKET_TIMEOUT_S)
                self.finish_request(request, client_address)
            except Exception:  # noqa: BLE001 - a broken scrape ends its own connection only
                logger.debug("Metrics request from %s failed", client_address, exc_info=True)
            finally:
                self.shutdown_request(request)

    def stop_workers(self, n: int) -> None:
        # Queued connections are dropped; one sentinel per worker stops it.
        while True:
            try:
                item = self._connections.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self.shutdown_request(item[0])
        for _ in range(n):
            self._connections.put(None)


def parse_exposition(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Samples of a text-format scrape by (name, sorted labels): for tests and tools."""
    from prometheus_client.parser import text_string_to_metric_families

    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for fam in text_string_to_metric_families(text):
        for sample in fam.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


__all__ = ["KafkaMetricsCollector", "PrometheusMetricsServer", "jmx_exporter_name", "parse_exposition", "safe_name"]
