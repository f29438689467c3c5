"""Port of core/src/main/scala/kafka/server/ControllerServer.scala (Kafka 2.8.2).

The controller half of a KRaft node (``process.roles`` holding ``controller``). It starts, in
Kafka's order:

1. the SocketServer of the controller listeners (``controller.listener.names``), bound but not
   yet serving, answering only the controller's APIs (server/api_version_manager.py);
2. the QuorumController over the metadata log (a MetaLogManager: the MetaLogRaftShim over the
   RaftManager's raft client), with the broker defaults for new topics and the broker session
   timeout;
3. the authorizer (``authorizer.class.name``: the StandardAuthorizer, whose ACL changes go to
   this QuorumController) and a MetadataLoader that hands committed ACLs and SCRAM credentials
   to it and to the CredentialCache of the controller's SASL listeners (Kafka 3.5);
4. the client quota managers, ControllerApis and its request handler pool
   (``num.io.threads`` threads);
5. and then the sockets start serving.

Shutdown stops the sockets from taking requests, begins the controller's shutdown, closes the
sockets, the handler pool, the quota managers and the controller. The RaftManager is not the
ControllerServer's: KafkaRaftServer builds it, starts it before and shuts it down around this.
"""
from __future__ import annotations

import enum
import logging
import threading
from typing import Any, Optional

from kafka_py.core.cluster.broker import Node
from kafka_py.clients.common.errors import KafkaException
from kafka_py.log.log_config import CONFIG_DEF as LOG_CONFIG_DEF
from kafka_py.metadata.controller.quorum_controller import QuorumController
from kafka_py.metadata.controller.quorum_controller_metrics import QuorumControllerMetrics
from kafka_py.metadata.metalog.meta_log_manager import MetaLogManager
from kafka_py.network.socket_server import SocketServer
from kafka_py.raft.raft_config import quorum_voter_strings_to_nodes
from kafka_py.core.raft.raft_manager import KafkaRaftManager
from kafka_py.core.security.authorizer import create_authorizer
from kafka_py.clients.common.security.credential_cache import CredentialCache
from kafka_py.metadata.version_range import VersionRange
from kafka_py.server import quota_factory
from kafka_py.server.api_version_manager import ListenerType, SimpleApiVersionManager
from kafka_py.server.broker_features import BrokerFeatures
from kafka_py.server.controller_apis import ControllerApis
from kafka_py.server.kafka_config import CONFIG_DEF as KAFKA_CONFIG_DEF
from kafka_py.server.kafka_request_handler import DATA_PLANE_THREAD_PREFIX, KafkaRequestHandlerPool
from kafka_py.server.metadata.acl_publisher import AclPublisher
from kafka_py.server.metadata.metadata_loader import MetadataLoader
from kafka_py.server.metadata.scram_publisher import ScramPublisher
from kafka_py.server.zk_admin_manager import ConfigResourceType
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

_NS_PER_MS = 1_000_000


class ProcessStatus(enum.Enum):
    """Server.scala's ProcessStatus."""

    SHUTDOWN = "SHUTDOWN"
    STARTING = "STARTING"
    STARTED = "STARTED"
    SHUTTING_DOWN = "SHUTTING_DOWN"


class ControllerServer:
    def __init__(self, meta_properties: Any, config: Any, meta_log_manager: MetaLogManager,
                 raft_manager: KafkaRaftManager, time: Time = Time.SYSTEM, thread_name_prefix: Optional[str] = None,
                 controller_quorum_voters: Optional[list[str]] = None) -> None:
        self.meta_properties = meta_properties
        self.config = config
        self.meta_log_manager = meta_log_manager
        self.raft_manager = raft_manager
        self.time = time
        self.thread_name_prefix = thread_name_prefix
        self.controller_quorum_voters = (list(controller_quorum_voters) if controller_quorum_voters is not None
                                         else list(config.quorum_voters))
        self.logger = IdentLogger(logger, "")
        self._lock = threading.Condition(threading.Lock())
        self.status = ProcessStatus.SHUTDOWN
        self.authorizer: Optional[Any] = None
        self.credential_provider: Optional[CredentialCache] = None
        self.socket_server: Optional[SocketServer] = None
        self.controller: Optional[QuorumController] = None
        # KIP-584: the features this controller lets the cluster finalize (FeatureControlManager)
        self.supported_features: dict[str, VersionRange] = {
            name: VersionRange(r.min_version, r.max_version)
            for name, r in BrokerFeatures.from_config(config).supported_features.items()}
        self.quota_managers: Optional[quota_factory.QuotaManagers] = None
        self.controller_apis: Optional[ControllerApis] = None
        self.controller_apis_handler_pool: Optional[KafkaRequestHandlerPool] = None
        self.metadata_loader: Optional[MetadataLoader] = None

    def _maybe_change_status(self, from_status: ProcessStatus, to_status: ProcessStatus) -> bool:
        with self._lock:
            if self.status is not from_status:
                return False
            self.status = to_status
            if to_status is ProcessStatus.SHUTDOWN:
                self._lock.notify_all()
            return True

    @property
    def cluster_id(self) -> str:
        return str(self.meta_properties.cluster_id)

    def startup(self) -> None:
        if not self._maybe_change_status(ProcessStatus.SHUTDOWN, ProcessStatus.STARTING):
            return
        try:
            self.logger.ident = f"[ControllerServer id={self.config.node_id}] "
            self.logger.info("Starting controller")
            self._maybe_change_status(ProcessStatus.STARTING, ProcessStatus.STARTED)
            config = self.config

            api_version_manager = SimpleApiVersionManager(ListenerType.CONTROLLER)
            self.credential_provider = CredentialCache()
            self.socket_server = SocketServer(config, self.time, credential_provider=self.credential_provider,
                                              api_version_manager=api_version_manager)
            self.socket_server.startup(start_processing_requests=False,
                                       data_plane_listeners=config.controller_listeners)

            config_defs = {ConfigResourceType.BROKER: KAFKA_CONFIG_DEF, ConfigResourceType.TOPIC: LOG_CONFIG_DEF}
            self.controller = QuorumController(
                config.node_id, self.meta_log_manager, time=self.time,
                thread_name_prefix=self.thread_name_prefix or "", config_defs=config_defs,
                supported_features=self.supported_features,
                default_replication_factor=int(config.default_replication_factor),
                default_num_partitions=int(config.num_partitions),
                session_timeout_ns=int(config.broker_session_timeout_ms) * _NS_PER_MS,
                controller_metrics=QuorumControllerMetrics(time=self.time),
                snapshot_max_new_record_bytes=int(config.metadata_snapshot_max_new_record_bytes),
                static_config={k: str(v) for k, v in config.originals.items() if v is not None})

            authorizer_class_name = (config.get("authorizer.class.name") or "").strip()
            if authorizer_class_name:
                self.authorizer = create_authorizer(authorizer_class_name)
                self.authorizer.configure(config.originals)
                if hasattr(self.authorizer, "set_acl_mutator"):
                    self.authorizer.set_acl_mutator(self.controller)
            self.metadata_loader = MetadataLoader(
                config.node_id, self.time,
                [AclPublisher("controller", config.node_id, self.authorizer),
                 ScramPublisher("controller", config.node_id, self.credential_provider)],
                self.thread_name_prefix or "", high_watermark=self.raft_manager.kafka_raft_client.high_watermark)
            self.meta_log_manager.register(self.metadata_loader)

            self.quota_managers = quota_factory.instantiate(config, self.time, self.thread_name_prefix or "")
            controller_nodes = [Node(node_id, host, port)
                                for node_id, host, port in quorum_voter_strings_to_nodes(self.controller_quorum_voters)]
            self.controller_apis = ControllerApis(self.socket_server.data_plane_request_channel, self.authorizer,
                                                  self.quota_managers, self.time, self.supported_features,
                                                  self.controller, self.raft_manager, config, self.meta_properties,
                                                  controller_nodes, api_version_manager)
            self.controller_apis_handler_pool = KafkaRequestHandlerPool(
                config.node_id, self.socket_server.data_plane_request_channel, self.controller_apis, self.time,
                config.num_io_threads, "RequestHandlerAvgIdlePercent", DATA_PLANE_THREAD_PREFIX)
            self.socket_server.start_processing_requests()
        except BaseException as e:
            self._maybe_change_status(ProcessStatus.STARTING, ProcessStatus.STARTED)
            self.logger.critical("Fatal error during controller startup. Prepare to shutdown", exc_info=e)
            self.shutdown()
            raise

    def shutdown(self) -> None:
        if not self._maybe_change_status(ProcessStatus.STARTED, ProcessStatus.SHUTTING_DOWN):
            return
        try:
            self.logger.info("shutting down")
            if self.socket_server is not None:
                self._swallow(self.socket_server.stop_processing_requests)
            if self.controller is not None:
                self.controller.begin_shutdown()
            if self.socket_server is not None:
                self._swallow(self.socket_server.shutdown)
            if self.controller_apis_handler_pool is not None:
                self._swallow(self.controller_apis_handler_pool.shutdown)
            if self.quota_managers is not None:
                self._swallow(self.quota_managers.shutdown)
            if self.controller is not None:
                self.controller.close()
            if self.metadata_loader is not None:
                self._swallow(self.metadata_loader.close)
            if self.authorizer is not None:
                self._swallow(self.authorizer.close)
        except BaseException as e:
            self.logger.critical("Fatal error during controller shutdown.", exc_info=e)
            raise
        finally:
            self._maybe_change_status(ProcessStatus.SHUTTING_DOWN, ProcessStatus.SHUTDOWN)

    def await_shutdown(self, timeout_s: Optional[float] = None) -> bool:
        with self._lock:
            return self._lock.wait_for(lambda: self.status is ProcessStatus.SHUTDOWN, timeout_s)

    def bound_port(self, listener_name: Optional[str] = None) -> int:
        """The port a controller listener is bound to (the first one's by default)."""
        if listener_name is None:
            listener_name = self.config.controller_listener_names[0]
        socket_server = self.socket_server
        if socket_server is None:
            raise KafkaException("The controller has not started: no listener is bound")
        return socket_server.bound_port(listener_name)

    def _swallow(self, action: Any) -> None:
        try:
            action()
        except Exception:  # noqa: BLE001 - CoreUtils.swallow: one failure must not stop the rest
            self.logger.exception("Error while shutting down %s", getattr(action, "__qualname__", action))


__all__ = ["ControllerServer", "ProcessStatus"]
