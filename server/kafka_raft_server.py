"""Port of core/src/main/scala/kafka/server/KafkaRaftServer.scala (Kafka 2.8.2).

A KRaft node: no ZooKeeper; the cluster's metadata lives in the Raft quorum of
``controller.quorum.voters``. What it runs follows ``process.roles``:

* always the RaftManager of the metadata partition ``@metadata-0`` (KafkaRaftServer.MetadataTopic)
  in ``metadata.log.dir`` (else the first of ``log.dirs``): a voter takes part in elections,
  anything else only follows the log;
* ``controller``: a ControllerServer, its QuorumController writing to that log through the
  MetaLogRaftShim, serving the controller listeners;
* ``broker``: a BrokerServer reading the metadata log.

Before anything is built, every log dir and the metadata log dir must have been formatted with
``bin/kafka-storage.sh`` and agree on the cluster id and this node's id (initialize_log_dirs):
a KRaft node never formats a directory itself.

Startup order is Kafka's: the RaftManager, then the controller, then the broker; shutdown
stops the broker first, then the RaftManager (a leader resigns, so the other controllers elect
at once), then the controller.

The node's metrics (the process's one registry: the raft client's raft-metrics, the
controller's kafka.controller metrics, the broker's as a ZooKeeper-mode broker has them) are
served on one Prometheus endpoint per process with ``kafka.py.metrics.prometheus.port``, as
KafkaServer serves them. It starts first, so a node still electing a leader or catching up
with the metadata log can already be watched, and stops first.
"""
from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Optional

from kafka_py.clients.common.errors import KafkaException
from kafka_py.core.metrics.kafka_metrics_group import default_registry, recording as metrics_recording
from kafka_py.core.metrics.yammer import MetricName
from kafka_py.core.raft.kafka_metadata_log import METADATA_PARTITION, METADATA_TOPIC
from kafka_py.raft.metadata.meta_log_raft_shim import MetaLogRaftShim, RaftMetadataRecordSerde
from kafka_py.core.raft.raft_manager import KafkaRaftManager
from kafka_py.server.broker_metadata_checkpoint import initialize_log_dirs
from kafka_py.server.kafka_config import ProcessRole
from kafka_py.clients.common.utils import app_info_parser
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:
    from kafka_py.core.metrics.prometheus_exporter import PrometheusMetricsServer

logger = logging.getLogger(__name__)

# KafkaBroker.STARTED_MESSAGE
STARTED_MESSAGE = "Kafka Server started"


class KafkaRaftServer:
    MetadataTopic = METADATA_TOPIC
    MetadataPartition = METADATA_PARTITION

    def __init__(self, config: Any, time: Time = Time.SYSTEM, thread_name_prefix: Optional[str] = None) -> None:
        self.config = config
        self.time = time
        self.thread_name_prefix = thread_name_prefix
        self.logger = IdentLogger(logger, "")
        self.prometheus_metrics_server: Optional[PrometheusMetricsServer] = None
        metrics_recording.enabled = bool(config.metrics_enabled)
        # Refuses unformatted or mismatched dirs before anything is built.
        self.meta_props, self.offline_dirs = initialize_log_dirs(config)
        self.controller_quorum_voters = list(config.quorum_voters)
        self.broker: Optional[Any] = None
        self.controller: Optional[Any] = None
        self._broker_server_class = None
        if ProcessRole.BROKER in config.process_roles:
            # Checked before the raft manager opens the metadata log: a node that cannot run its
            # broker role must not start half of itself.
            self._broker_server_class = _broker_server_class()
        self.raft_manager = KafkaRaftManager(self.meta_props, config, RaftMetadataRecordSerde(), METADATA_PARTITION,
                                             time, thread_name_prefix)
        self.meta_log_shim = MetaLogRaftShim(self.raft_manager.kafka_raft_client, config.node_id)
        try:
            if self._broker_server_class is not None:
                self.broker = self._broker_server_class(
                    config, self.meta_props, self.meta_log_shim, time, thread_name_prefix=thread_name_prefix,
                    initial_offline_dirs=self.offline_dirs,
                    controller_quorum_voters_future=self.controller_quorum_voters)
            if ProcessRole.CONTROLLER in config.process_roles:
                from kafka_py.server.controller_server import ControllerServer

                self.controller = ControllerServer(self.meta_props, config, self.meta_log_shim, self.raft_manager,
                                                   time, thread_name_prefix, self.controller_quorum_voters)
        except BaseException:
            self.raft_manager.shutdown()
            raise
        self._shutdown_complete = threading.Event()
        self._shutdown_complete.set()

    def startup(self) -> None:
        self._shutdown_complete.clear()
        try:
            self._start_metrics_reporting()
            self.raft_manager.startup()
            if self.controller is not None:
                self.controller.startup()
            if self.broker is not None:
                self.broker.startup()
        except BaseException:
            self.shutdown()
            raise
        self.logger.info(STARTED_MESSAGE)

    def _start_metrics_reporting(self) -> None:
        """app-info and, with kafka.py.metrics.prometheus.port, the Prometheus endpoint
        (kafka_py/core/metrics/prometheus_exporter.py) over the process's registry."""
        config = self.config
        node_id = str(config.node_id)
        registry = default_registry()
        start_ms = self.time.milliseconds()
        registry.new_gauge(MetricName("kafka.server", "app-info", "", None, f"kafka.server:type=app-info,id={node_id}",
                                      (("id", node_id),), attribute="start-time-ms"), lambda: start_ms)
        if config.prometheus_port >= 0:
            # Imported only here: prometheus_client and http.server are a node's start's
            # cost only when the endpoint is on (docs/kraft.md, "What the start does").
            from kafka_py.core.metrics.prometheus_exporter import PrometheusMetricsServer

            self.prometheus_metrics_server = PrometheusMetricsServer(
                config.prometheus_host, config.prometheus_port, registry,
                {"id": node_id, "version": app_info_parser.get_version(),
                 "commit_id": app_info_parser.get_commit_id()})
            self.prometheus_metrics_server.startup()

    def shutdown(self) -> None:
        try:
            if self.prometheus_metrics_server is not None:
                self._swallow(self.prometheus_metrics_server.shutdown)
                self.prometheus_metrics_server = None
            if self.broker is not None:
                self._swallow(self.broker.shutdown)
            self._swallow(self.raft_manager.shutdown)
            if self.controller is not None:
                self._swallow(self.controller.shutdown)
        finally:
            self._shutdown_complete.set()

    def await_shutdown(self, timeout_s: Optional[float] = None) -> bool:
        if self.broker is not None:
            self.broker.await_shutdown(timeout_s)
        if self.controller is not None:
            self.controller.await_shutdown(timeout_s)
        return self._shutdown_complete.wait(timeout_s)

    def _swallow(self, action: Any) -> None:
        try:
            action()
        except Exception:  # noqa: BLE001 - CoreUtils.swallow
            self.logger.exception("Error while shutting down %s", getattr(action, "__qualname__", action))


def _broker_server_class() -> type:
    """server/broker_server.py's BrokerServer; a clear refusal while it does not exist."""
    try:
        from kafka_py.server.broker_server import BrokerServer
    except ModuleNotFoundError as e:
        if e.name != "kafka_py.server.broker_server":
            raise
        raise KafkaException("process.roles includes broker, but this kafka-py has no KRaft broker yet "
                             "(server/broker_server.py); run a controller-only node (process.roles=controller) "
                             "or a ZooKeeper-mode broker (no process.roles)") from None
    return BrokerServer


__all__ = ["KafkaRaftServer", "STARTED_MESSAGE"]
