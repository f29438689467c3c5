"""Port of core/src/main/scala/kafka/server/KafkaServer.scala (Kafka 2.8.2, ZooKeeper mode).

``KafkaServer`` builds the broker and starts it in Kafka's order, after first raising the soft
open file descriptor limit to the hard one (as the JVM does for a Kafka broker; every segment
keeps its .log open):

1. the ZooKeeper client (creating the chroot and the top-level paths);
2. the cluster id from /cluster/id (created on first start);
3. meta.properties of every log dir: they must agree, and name this cluster (a broker
   pointed at the wrong ZooKeeper refuses to start rather than mix two clusters' data);
4. the broker id: configured, stored in meta.properties, or generated from /brokers/seqid;
5. the dynamic broker configs stored in ZooKeeper, layered over server.properties;
6. the scheduler, then the LogManager, which loads (and after a crash recovers) every log;
7. the SocketServer, bound (so the real port is known for port 0) but not yet serving;
8. the AlterIsrManager (AlterIsr requests to the controller, or ZooKeeper writes below
   inter.broker.protocol.version 2.7-IV2), then the ReplicaManager;
9. the registration /brokers/ids/<id> (ephemeral, Kafka's JSON) whose czxid is the broker
   epoch, then meta.properties written to every log dir;
10. the KafkaController (every broker runs one; the one that wins /controller leads);
11. ZkAdminManager, the GroupCoordinator (which starts serving the groups of a
    __consumer_offsets partition once a LeaderAndIsr makes this broker its leader), the
    producer id manager, the authorizer (``authorizer.class.name``: its ACLs loaded from
    ZooKeeper), KafkaApis and the request handler threads;
12. the DynamicConfigManager (topic and broker config changes from /config/changes);
13. and only then the SocketServer starts serving requests.

Shutdown undoes this in Kafka's order, starting with a controlled shutdown (the controller
moves leadership off this broker first) and ending with the LogManager writing its
checkpoints and the clean-shutdown marker, the controller, ZooKeeper and the sockets.

A ZooKeeper session expiry is handled by the controller's state-change handler (as in Kafka
2.8): it re-registers /brokers/ids/<id> under the new session, taking a new broker epoch,
and re-runs the controller election.
"""
from __future__ import annotations

import base64
import enum
import logging
import os
import resource
import socket
import threading
import time as _time
import uuid
from typing import TYPE_CHECKING, Any, Optional, TypeVar

from kafka_py.clients.common.utils import app_info_parser
from kafka_py.clients.network_client import NetworkClient
from kafka_py.clients.network_client_utils import await_ready, send_and_receive
from kafka_py.core.cluster.broker import Broker, EndPoint, Node
from kafka_py.clients.common.errors import KafkaException
from kafka_py.controller.kafka_controller import KafkaController
from kafka_py.core.coordinator.group.group_coordinator import GroupCoordinator
from kafka_py.core.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME
from kafka_py.log.log_config import LogConfig, api_version
from kafka_py.log.log_manager import LogManager
from kafka_py.network.channel_builders import inter_broker_client_channel_builder
from kafka_py.network.socket_server import SocketServer
from kafka_py.core.metrics.kafka_metrics_group import default_registry, explicit_metric_name, recording as metrics_recording
from kafka_py.core.metrics.prometheus_exporter import PrometheusMetricsServer
from kafka_py.core.metrics.yammer import MetricName
from kafka_py.server.broker_topic_stats import BrokerTopicStats
from kafka_py.core.security.authorizer import create_authorizer
from kafka_py.clients.common.security.credential_cache import CredentialCache
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.server.alter_isr_manager import AlterIsrManager, create_alter_isr_manager
from kafka_py.server.broker_metadata_checkpoint import (
    META_PROPERTIES_FILE,
    BrokerMetadataCheckpoint,
    ZkMetaProperties,
    check_cluster_id,
    check_zk_meta_properties_version,
    get_broker_metadata_and_offline_dirs,
    get_or_generate_broker_id,
)
from kafka_py.server import quota_factory
from kafka_py.server.config_handler import (
    BrokerConfigHandler,
    ClientIdConfigHandler,
    ConfigHandler,
    IpConfigHandler,
    TopicConfigHandler,
    UserConfigHandler,
)
from kafka_py.server.dynamic_broker_config import DynamicBrokerConfig, DynamicLogConfig
from kafka_py.server.delegation_token_manager import DelegationTokenManager
from kafka_py.server.dynamic_config_manager import DynamicConfigManager
from kafka_py.server.kafka_apis import KafkaApis
from kafka_py.server.kafka_request_handler import DATA_PLANE_THREAD_PREFIX, KafkaRequestHandlerPool
from kafka_py.server.log_dir_failure_channel import LogDirFailureChannel
from kafka_py.server.metadata_cache import MetadataCache
from kafka_py.core.coordinator.transaction.producer_id_manager import ProducerIdManager
from kafka_py.core.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from kafka_py.core.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from kafka_py.server.add_partitions_to_txn_manager import AddPartitionsToTxnManager
from kafka_py.server.api_version_manager import ApiVersionSupplier
from kafka_py.server.broker_features import BrokerFeatures
from kafka_py.server.finalized_feature_cache import FinalizedFeatureCache
from kafka_py.server.finalized_feature_change_listener import FinalizedFeatureChangeListener
from kafka_py.server.replica_manager import ReplicaManager
from kafka_py.server.zk_admin_manager import ZkAdminManager
from kafka_py.core.utils.kafka_scheduler import KafkaScheduler
from kafka_py.clients.common.config.config_def import ConfigException
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.zk.admin_zk_client import AdminZkClient
from kafka_py.core.zk.kafka_zk_client import KafkaZkClient, ZooKeeperClientTimeoutException
from kafka_py.core.zk.zk_data import BrokerInfo, ConfigType

if TYPE_CHECKING:
    from kafka_py.server.kafka_config import KafkaConfig

logger = logging.getLogger(__name__)



class BrokerState(enum.IntEnum):
    """metadata/BrokerState.java: what the broker is doing, as its metric reports it."""

    NOT_RUNNING = 0
    STARTING = 1
    RECOVERY = 2
    RUNNING = 3
    PENDING_CONTROLLED_SHUTDOWN = 6
    SHUTTING_DOWN = 7


class GenerateBrokerIdException(KafkaException):
    pass


def controlled_shutdown_request_version(inter_broker_protocol_version) -> int:
    """The ControlledShutdown version Kafka 2.8's broker sends for its protocol version."""
    if inter_broker_protocol_version < api_version("0.9.0"):
        return 0
    if inter_broker_protocol_version < api_version("2.2-IV0"):
        return 1
    if inter_broker_protocol_version < api_version("2.4-IV1"):
        return 2
    return 3


def raise_open_file_limit() -> tuple[int, int]:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit and log both; returns them.

    A broker keeps one descriptor per segment open (its .log) besides its sockets, so a broker
    with a few thousand segments needs far more than the 1024 a login shell usually allows. A
    Kafka broker gets the hard limit without asking, because the JVM raises the soft limit when
    it starts (HotSpot's MaxFDLimit, on by default); a Python process has to do it itself.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard
    if hard == resource.RLIM_INFINITY:
        # Linux refuses a soft limit above fs.nr_open even when the hard limit is unlimited.
        try:
            with open("/proc/sys/fs/nr_open") as f:
                target = int(f.read())
        except (OSError, ValueError):
            target = soft
    previous = soft
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (OSError, ValueError) as e:
            logger.warning("Could not raise the open file descriptor limit from %d to %d: %s", soft, target, e)

    def shown(limit: int) -> str:
        return "unlimited" if limit == resource.RLIM_INFINITY else str(limit)

    if soft != previous:
        logger.info("Open file descriptor limit: soft %s, hard %s (soft limit raised from %s)", shown(soft),
                    shown(hard), shown(previous))
    else:
        logger.info("Open file descriptor limit: soft %s, hard %s", shown(soft), shown(hard))
    return soft, hard


_C = TypeVar("_C")


def _started(component: Optional[_C], name: str) -> _C:
    """``component``, one of the broker's parts that ``KafkaServer.startup()`` makes; a
    KafkaException naming it when the broker has not made it (not started, or its startup
    failed before it)."""
    if component is None:
        raise KafkaException(f"The broker has no {name}: KafkaServer.startup() has not created it")
    return component


def generate_uuid_as_base64() -> str:
    """CoreUtils.generateUuidAsBase64: a random UUID, URL-safe base64 without padding (22 chars)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")


class KafkaServer:
    """One broker: start it with ``startup()``, stop it with ``shutdown()``."""

    def __init__(self, config: KafkaConfig, time: Time = Time.SYSTEM, thread_name_prefix: Optional[str] = None) -> None:
        self.config = config
        self.time = time
        self.thread_name_prefix = thread_name_prefix
        self.broker_state = BrokerState.NOT_RUNNING
        self._startup_complete = threading.Event()
        self._is_starting_up = False
        self._is_shutting_down = threading.Event()
        self._shutdown_latch = threading.Event()
        self._shutdown_latch.set()
        self._lock = threading.Lock()
        self.logger = IdentLogger(logger, "")
        # Controlled shutdown attempts that gave up waiting for ZooKeeper (for the final log line).
        self._zookeeper_unreachable_attempts = 0

        self.zk_client: Optional[KafkaZkClient] = None
        self.cluster_id: Optional[str] = None
        self.dynamic_config: Optional[DynamicBrokerConfig] = None
        self.kafka_scheduler: Optional[KafkaScheduler] = None
        self.log_dir_failure_channel: Optional[LogDirFailureChannel] = None
        self.log_manager: Optional[LogManager] = None
        self.metadata_cache: Optional[MetadataCache] = None
        self.socket_server: Optional[SocketServer] = None
        self.alter_isr_manager: Optional[AlterIsrManager] = None
        self.replica_manager: Optional[ReplicaManager] = None
        self.broker_info: Optional[BrokerInfo] = None
        self.kafka_controller: Optional[KafkaController] = None
        # KIP-584: this broker's supported features, and the cluster's finalized ones kept equal to
        # /feature by the change listener (started only when the IBP enables feature versioning).
        self.broker_features = BrokerFeatures.from_config(config)
        self.feature_cache = FinalizedFeatureCache(self.broker_features)
        self.feature_change_listener: Optional[FinalizedFeatureChangeListener] = None
        self.token_manager: Optional[DelegationTokenManager] = None
        self.admin_manager: Optional[ZkAdminManager] = None
        self.group_coordinator: Optional[GroupCoordinator] = None
        self.producer_id_manager: Optional[ProducerIdManager] = None
        self.transaction_coordinator: Optional[TransactionCoordinator] = None
        self.add_partitions_to_txn_manager: Optional[AddPartitionsToTxnManager] = None
        self.data_plane_request_processor: Optional[KafkaApis] = None
        self.data_plane_request_handler_pool: Optional[KafkaRequestHandlerPool] = None
        self.dynamic_config_manager: Optional[DynamicConfigManager] = None
        self.quota_managers: Optional[quota_factory.QuotaManagers] = None
        self.prometheus_metrics_server: Optional[PrometheusMetricsServer] = None
        self.broker_topic_stats = BrokerTopicStats()
        self.authorizer: Optional[Any] = None
        self._broker_metadata_checkpoints: dict[str, BrokerMetadataCheckpoint] = {
            d: BrokerMetadataCheckpoint(os.path.join(d, META_PROPERTIES_FILE)) for d in config.log_dirs}

    # ------------------------------------------------------------------ startup

    def startup(self) -> None:
        """Start the broker; on any failure, shut down what was started and re-raise."""
        try:
            self.logger.info("starting")
            if self._is_shutting_down.is_set():
                raise KafkaException("Kafka server is still shutting down, cannot re-start!")
            if self._startup_complete.is_set():
                return
            with self._lock:
                if self._is_starting_up:
                    return
                self._is_starting_up = True
            self.broker_state = BrokerState.STARTING
            # Before anything holds descriptors: the logs loaded below keep one open per segment.
            raise_open_file_limit()
            zk_client = self._init_zk_client()

            # Before registering: a broker that cannot run the cluster's finalized features learns
            # it here and stops, and the first ApiVersions answer already carries them.
            self.feature_change_listener = FinalizedFeatureChangeListener(self.feature_cache, zk_client)
            if self.config.is_feature_versioning_supported:
                self.feature_change_listener.init_or_throw(self.config.zk_connection_timeout_ms)

            self.cluster_id = zk_client.get_cluster_id() or zk_client.create_or_get_cluster_id(
                generate_uuid_as_base64())
            self.logger.info("Cluster ID = %s", self.cluster_id)

            preloaded, initial_offline_dirs = get_broker_metadata_and_offline_dirs(self.config.log_dirs,
                                                                                   ignore_missing=True)
            check_zk_meta_properties_version(preloaded)
            check_cluster_id(preloaded, self.cluster_id)

            self.config.broker_id = get_or_generate_broker_id(
                preloaded, self.config.broker_id, self.config.broker_id_generation_enable, self._generate_broker_id)
            self.logger.ident = f"[KafkaServer id={self.config.broker_id}] "

            # The dynamic layers in ZooKeeper apply from the start; later changes arrive through
            # the DynamicConfigManager.
            self.dynamic_config = DynamicBrokerConfig(self.config)
            # the broker's own clients reach the reconfigurable channel builders through it
            self.config.dynamic_config = self.dynamic_config
            metrics_recording.enabled = bool(self.config.metrics_enabled)
            self.dynamic_config.initialize(zk_client)
            self.config = self.dynamic_config.current_kafka_config
            config = self.config

            # The client quota managers (produce, fetch and request quotas); the quotas themselves
            # arrive through the DynamicConfigManager below.
            self.quota_managers = quota_factory.instantiate(config, self.time, self.thread_name_prefix or "")

            self.kafka_scheduler = KafkaScheduler(config.background_threads)
            self.kafka_scheduler.startup()

            # One channel for every I/O failure under a log dir, from startup on (dirs that fail
            # to load are reported there too); the ReplicaManager's handler thread drains it.
            self.log_dir_failure_channel = LogDirFailureChannel(len(config.log_dirs))
            self.log_manager = self._create_log_manager(initial_offline_dirs)
            self.broker_state = BrokerState.RECOVERY
            self.log_manager.startup(self._topic_config_overrides())

            self.metadata_cache = MetadataCache.zk_metadata_cache(config.broker_id)

            # Bound now so the registration can name the real port; requests are served only
            # once everything behind the sockets is ready.
            self.credential_provider = CredentialCache()
            self.socket_server = SocketServer(
                config, self.time, credential_provider=self.credential_provider,
                api_version_supplier=ApiVersionSupplier(None, self.broker_features, self.feature_cache))
            self.socket_server.startup(start_processing_requests=False)

            # How leaders change their ISR: AlterIsr to the controller, or (IBP < 2.7-IV2) their own
            # ZooKeeper writes. The broker epoch is the controller's, known once registered below.
            self.alter_isr_manager = create_alter_isr_manager(
                config, self.metadata_cache, self.kafka_scheduler, self.time, zk_client,
                lambda: self.kafka_controller.broker_epoch if self.kafka_controller is not None else -1,
                self.thread_name_prefix)
            self.alter_isr_manager.start()

            self.replica_manager = ReplicaManager(config, self.time, zk_client, self.kafka_scheduler,
                                                  self.log_manager, self.metadata_cache,
                                                  self.log_dir_failure_channel,
                                                  is_shutting_down=self._is_shutting_down,
                                                  alter_isr_manager=self.alter_isr_manager,
                                                  broker_topic_stats=self.broker_topic_stats,
                                                  quota_managers=self.quota_managers,
                                                  thread_name_prefix=self.thread_name_prefix)
            self.replica_manager.startup()

            self.broker_info = self.create_broker_info()
            broker_epoch = zk_client.register_broker(self.broker_info)
            self._checkpoint_broker_metadata(ZkMetaProperties(self.cluster_id, config.broker_id))

            # Delegation tokens (KIP-48): the tokens in ZooKeeper loaded into the cache SCRAM
            # logins with tokenauth=true are checked against, kept current by token_changes.
            self.token_manager = DelegationTokenManager(config, self.credential_provider.token_cache, self.time,
                                                        zk_client)
            self.token_manager.startup()

            self.kafka_controller = KafkaController(config, zk_client, self.time, self.broker_info,
                                                    broker_epoch, self.thread_name_prefix,
                                                    broker_features=self.broker_features,
                                                    feature_cache=self.feature_cache)
            # Elections read dynamic broker defaults (unclean.leader.election.enable) as they are now.
            dynamic_config = self.dynamic_config
            self.kafka_controller.use_dynamic_config(lambda: dynamic_config.current_kafka_config)
            # the active controller removes expired delegation tokens
            self.kafka_controller.use_token_manager(self.token_manager)
            self.kafka_controller.startup()

            self.admin_manager = self._create_admin_manager()

            # The partition count of an existing __consumer_offsets wins over the config: the
            # group -> partition mapping must not change under existing groups.
            self.group_coordinator = GroupCoordinator.create(config, self.replica_manager, self.time)
            self.group_coordinator.startup(self._group_metadata_topic_partition_count)

            # The transaction coordinator, with its producer id manager (which claims its first
            # block of ids now, as Kafka's does at startup). As for groups, the partition count of
            # an existing __transaction_state wins over the config.
            self.producer_id_manager = ProducerIdManager(config.broker_id, zk_client)
            self.transaction_coordinator = TransactionCoordinator.create(
                config, self.replica_manager, self.producer_id_manager, self.metadata_cache, self.time)
            self.transaction_coordinator.startup(self._transaction_topic_partition_count)

            # The authorizer (authorizer.class.name) gets every broker config; it watches the ACL
            # change paths and loads every ACL from ZooKeeper before a request is served.
            authorizer_class_name = (config.get("authorizer.class.name") or "").strip()
            if authorizer_class_name:
                self.authorizer = create_authorizer(authorizer_class_name)
                self.authorizer.configure(config.originals)
                self.authorizer.start(self.broker_info)

            self.data_plane_request_processor = KafkaApis(
                self.socket_server.data_plane_request_channel, self.replica_manager, self.admin_manager,
                self.kafka_controller, zk_client, config.broker_id, config, self.metadata_cache,
                self.cluster_id, self.time, producer_id_manager=self.producer_id_manager,
                admin_zk_client=AdminZkClient(zk_client), group_coordinator=self.group_coordinator, quotas=self.quota_managers,
                authorizer=self.authorizer)
            self.data_plane_request_processor.txn_coordinator = self.transaction_coordinator
            self.data_plane_request_processor.token_manager = self.token_manager
            self.data_plane_request_processor.broker_features = self.broker_features
            self.data_plane_request_processor.feature_cache = self.feature_cache
            # markers for this broker's own partitions are appended without a request to itself
            self.transaction_coordinator.txn_marker_channel_manager.local_marker_writer = \
                self.data_plane_request_processor.write_txn_markers
            # a transaction's first batch on a partition is verified with its coordinator (KIP-890)
            if config.transaction_partition_verification_enable:
                self.add_partitions_to_txn_manager = AddPartitionsToTxnManager(
                    config, self.metadata_cache, self.transaction_coordinator, self.time)
                self.data_plane_request_processor.add_partitions_to_txn_manager = self.add_partitions_to_txn_manager
            self.data_plane_request_handler_pool = KafkaRequestHandlerPool(
                config.broker_id, self.socket_server.data_plane_request_channel, self.data_plane_request_processor,
                self.time, config.num_io_threads, "RequestHandlerAvgIdlePercent", DATA_PLANE_THREAD_PREFIX)

            self.dynamic_config.add_broker_reconfigurable(
                DynamicLogConfig(self.log_manager, self.kafka_controller.enable_default_unclean_leader_election))
            if self.log_manager.cleaner is not None:
                self.dynamic_config.add_broker_reconfigurable(self.log_manager.cleaner)
            # max.connections.per.ip(.overrides), max.connections, max.connection.creation.rate
            self.dynamic_config.add_broker_reconfigurable(self.socket_server)
            config_handlers: dict[str, ConfigHandler] = {
                ConfigType.TOPIC: TopicConfigHandler(self.log_manager, config, self.quota_managers,
                                                     self.kafka_controller),
                ConfigType.BROKER: BrokerConfigHandler(self.dynamic_config, self.quota_managers),
                ConfigType.USER: UserConfigHandler(self.credential_provider, self.quota_managers),
                ConfigType.CLIENT: ClientIdConfigHandler(self.quota_managers),
                ConfigType.IP: IpConfigHandler(self.socket_server.connection_quotas),
            }
            self.dynamic_config_manager = DynamicConfigManager(zk_client, config_handlers, time=self.time)
            self.dynamic_config_manager.startup()

            self._start_metrics_reporting()
            self.socket_server.start_processing_requests()

            self.broker_state = BrokerState.RUNNING
            self._shutdown_latch.clear()
            self._startup_complete.set()
            self._is_starting_up = False
            self.logger.info("started")
        except BaseException as e:
            # A configuration error names its key and the problem; its stack says nothing more.
            self.logger.critical("Fatal error during KafkaServer startup. Prepare to shutdown",
                                 exc_info=None if isinstance(e, ConfigException) else e)
            self._is_starting_up = False
            self._shutdown_started_components()
            raise

    def _start_metrics_reporting(self) -> None:
        """The broker's own gauges (BrokerState, app-info) and, with kafka.py.metrics.prometheus.port,
        the Prometheus endpoint (kafka_py/core/metrics/prometheus_exporter.py)."""
        config = self.config
        broker_id = str(config.broker_id)
        registry = default_registry()
        registry.new_gauge(explicit_metric_name("kafka.server", "KafkaServer", "BrokerState"),
                           lambda: int(self.broker_state))
        start_ms = self.time.milliseconds()
        registry.new_gauge(MetricName("kafka.server", "app-info", "", None, f"kafka.server:type=app-info,id={broker_id}",
                                      (("id", broker_id),), attribute="start-time-ms"), lambda: start_ms)
        if config.prometheus_port >= 0:
            self.prometheus_metrics_server = PrometheusMetricsServer(
                config.prometheus_host, config.prometheus_port, registry,
                {"id": broker_id, "version": app_info_parser.get_version(),
                 "commit_id": app_info_parser.get_commit_id()})
            self.prometheus_metrics_server.startup()

    def _init_zk_client(self) -> KafkaZkClient:
        config = self.config
        zk_connect = config.zk_connect
        if zk_connect is None:  # KafkaConfig requires it of a ZooKeeper-mode broker
            raise ConfigException("zookeeper.connect", full_message=(
                "Missing required configuration `zookeeper.connect` which has no default value."))
        self.logger.info("Connecting to zookeeper on %s", zk_connect)
        # KafkaZkClient creates the chroot itself (a short-lived client on the bare hosts).
        self.zk_client = zk_client = KafkaZkClient(zk_connect, False, config.zk_session_timeout_ms,
                                                   config.zk_connection_timeout_ms, config.zk_max_in_flight_requests,
                                                   self.time, name="Kafka server")
        zk_client.create_top_level_paths()
        return zk_client

    def _generate_broker_id(self) -> int:
        try:
            zk_client = _started(self.zk_client, "ZooKeeper client")
            return zk_client.generate_broker_sequence_id() + self.config.max_reserved_broker_id
        except Exception as e:
            self.logger.error("Failed to generate broker.id due to", exc_info=e)
            raise GenerateBrokerIdException("Failed to generate broker.id") from e

    def _create_log_manager(self, initial_offline_dirs: list[str]) -> LogManager:
        return LogManager.apply(self.config, initial_offline_dirs, _started(self.kafka_scheduler, "scheduler"),
                                self.time, _started(self.log_dir_failure_channel, "log dir failure channel"))

    def _topic_config_overrides(self) -> dict[str, dict[str, str]]:
        """Every topic's config overrides from ZooKeeper, for the logs loaded at startup."""
        known = set(LogConfig.config_names())
        zk_client = _started(self.zk_client, "ZooKeeper client")
        overrides = AdminZkClient(zk_client).fetch_all_entity_configs(ConfigType.TOPIC)
        topics = zk_client.get_all_topics_in_cluster()
        return {topic: {k: v for k, v in config.items() if k in known}
                for topic, config in overrides.items() if topic in topics and config}

    def _group_metadata_topic_partition_count(self) -> int:
        count = _started(self.zk_client, "ZooKeeper client").get_topic_partition_count(GROUP_METADATA_TOPIC_NAME)
        return int(self.config.offsets_topic_partitions) if count is None else count

    def _transaction_topic_partition_count(self) -> int:
        count = _started(self.zk_client, "ZooKeeper client").get_topic_partition_count(TRANSACTION_STATE_TOPIC_NAME)
        return int(self.config.transaction_topic_partitions) if count is None else count

    def _create_admin_manager(self) -> ZkAdminManager:
        zk_client = _started(self.zk_client, "ZooKeeper client")
        return ZkAdminManager(self.config, self.metadata_cache, zk_client, AdminZkClient(zk_client),
                              self.time, dynamic_config=self.dynamic_config)

    def create_broker_info(self) -> BrokerInfo:
        config = self.config
        end_points = [f"{e.host}:{e.port}" for e in config.advertised_listeners]
        for broker in _started(self.zk_client, "ZooKeeper client").get_all_brokers_in_cluster():
            if broker.id == config.broker_id:
                continue
            common = [f"{e.host}:{e.port}" for e in broker.end_points if f"{e.host}:{e.port}" in end_points
                      and e.port != 0]
            if common:
                raise KafkaException(f"Configured end points {','.join(common)} in advertised listeners are "
                                     f"already registered by broker {broker.id}")
        listeners = []
        for end_point in config.advertised_listeners:
            if end_point.port == 0:
                socket_server = _started(self.socket_server, "socket server")
                end_point = EndPoint(end_point.host, socket_server.bound_port(end_point.listener_name.value),
                                     end_point.listener_name, end_point.security_protocol)
            if end_point.host is None or not end_point.host.strip():
                end_point = EndPoint(socket.getfqdn(), end_point.port, end_point.listener_name,
                                     end_point.security_protocol)
            listeners.append(end_point)
        return BrokerInfo(Broker(config.broker_id, tuple(listeners), config.rack,
                                 self.broker_features.supported_features), BrokerInfo.CURRENT_VERSION, jmx_port=-1)

    def _checkpoint_broker_metadata(self, broker_metadata: ZkMetaProperties) -> None:
        log_manager = _started(self.log_manager, "log manager")
        for log_dir in self.config.log_dirs:
            if log_manager.is_log_dir_online(os.path.abspath(log_dir)):
                self._broker_metadata_checkpoints[log_dir].write(broker_metadata.to_properties())

    # ------------------------------------------------------------------ controlled shutdown

    def _controlled_shutdown(self) -> None:
        """Ask the controller to move this broker's leaderships elsewhere before stopping, so
        clients fail over at once instead of waiting for the session to expire."""
        config = self.config
        if not config.controlled_shutdown_enable:
            return
        self.logger.info("Starting controlled shutdown")
        self.broker_state = BrokerState.PENDING_CONTROLLED_SHUTDOWN
        self._zookeeper_unreachable_attempts = 0
        retries = int(config.controlled_shutdown_max_retries)
        if not self._do_controlled_shutdown(retries):
            if self._zookeeper_unreachable_attempts == retries:
                # Without ZooKeeper there is no controller to ask: every attempt gave up after
                # zookeeper.connection.timeout.ms, so this broker stops still leading its partitions.
                self.logger.warning("Proceeding to do an unclean shutdown as all the controlled shutdown attempts "
                                    "failed: ZooKeeper was not reachable within zookeeper.connection.timeout.ms "
                                    "(%d ms) in any of %d attempts, so the controller could not be found and no "
                                    "leadership was moved off this broker",
                                    config.zk_connection_timeout_ms, retries)
            else:
                self.logger.warning("Proceeding to do an unclean shutdown as all the controlled shutdown attempts "
                                    "failed")

    def _controller_from_zookeeper(self) -> Optional[Broker]:
        """The controller's registration, or None. Each lookup waits at most
        zookeeper.connection.timeout.ms for ZooKeeper (ZooKeeperClientTimeoutException past it):
        a stopping broker must not wait for a ZooKeeper that may never come back."""
        zk_client = _started(self.zk_client, "ZooKeeper client")
        with zk_client.requests_bounded_by(self.config.zk_connection_timeout_ms):
            controller_id = zk_client.get_controller_id()
            return None if controller_id is None else zk_client.get_broker(controller_id)

    def _do_controlled_shutdown(self, retries: int) -> bool:
        """Ask the controller, up to ``retries`` times, to move leadership off this broker.

        One NetworkClient (the broker's blocking client) to the controller serves every
        attempt; it is replaced when the controller moves or after a connection failure, as
        in Kafka's controlledShutdown."""
        config = self.config
        remaining_retries = retries
        network_client: Optional[NetworkClient] = None
        prev_controller: Optional[Broker] = None
        io_exception = False
        try:
            while remaining_retries > 0:
                remaining_retries -= 1
                try:
                    controller = self._controller_from_zookeeper()
                    if controller is None:
                        self.logger.info("No controller registered in ZooKeeper, or its registration is gone")
                    elif network_client is None or io_exception or controller != prev_controller:
                        io_exception = False
                        if network_client is not None:
                            network_client.close()
                        prev_controller = controller
                        node = controller.node(config.inter_broker_listener_name)
                        # a bind-all listener registers no host; such a broker is on this machine
                        network_client = NetworkClient(Node(node.id, node.host or "localhost", node.port),
                                                       str(config.broker_id), config.request_timeout_ms,
                                                       time=self.time,
                                                       channel_builder=inter_broker_client_channel_builder(config))
                    if controller is not None and network_client is not None:
                        try:
                            response = self._send_controlled_shutdown(network_client)
                        except OSError:
                            io_exception = True
                            raise
                        error = Errors.for_code(int(response.error_code))
                        remaining = getattr(response, "remaining_partitions", ())
                        if error is Errors.NONE and not remaining:
                            self.logger.info("Controlled shutdown succeeded")
                            return True
                        if remaining:
                            self.logger.info("Remaining partitions to move: %s",
                                             ", ".join(f"{p.topic_name}-{p.partition_index}" for p in remaining))
                        self.logger.info("Error from controller: %s", error.name)
                        if error is Errors.NONE and self._is_last_live_broker():
                            # No retry can find these partitions another leader: do not wait out the backoffs.
                            self.logger.info("No other broker is alive to lead the remaining partitions; shutting "
                                             "down without further controlled shutdown attempts")
                            return True
                except ZooKeeperClientTimeoutException as e:
                    self._zookeeper_unreachable_attempts += 1
                    self.logger.warning("Controller lookup for controlled shutdown gave up after "
                                        "zookeeper.connection.timeout.ms (%d ms): %s",
                                        config.zk_connection_timeout_ms, e)
                except Exception as e:  # noqa: BLE001 - retried below
                    self.logger.warning("Error during controlled shutdown, possibly because leader movement took "
                                        "longer than the configured controller.socket.timeout.ms and/or "
                                        "request.timeout.ms: %s", e)
                if remaining_retries > 0:
                    _time.sleep(config.controlled_shutdown_retry_backoff_ms / 1000.0)
                    self.logger.info("Retrying controlled shutdown (%d retries remaining)",
                                     remaining_retries)
            return False
        finally:
            if network_client is not None:
                network_client.close()

    def _is_last_live_broker(self) -> bool:
        zk_client = _started(self.zk_client, "ZooKeeper client")
        with zk_client.requests_bounded_by(self.config.zk_connection_timeout_ms):
            return zk_client.get_sorted_broker_list() == [self.config.broker_id]

    def _send_controlled_shutdown(self, network_client: NetworkClient) -> Any:
        """One ControlledShutdown request to the controller: connect within
        controller.socket.timeout.ms, then wait for the answer within request.timeout.ms."""
        config = self.config
        socket_timeout_ms = config.controller_socket_timeout_ms
        if not await_ready(network_client, socket_timeout_ms):
            raise socket.timeout(f"Failed to connect within {socket_timeout_ms} ms")
        api = ApiKeys.CONTROLLED_SHUTDOWN
        version = controlled_shutdown_request_version(config.inter_broker_protocol_version)
        broker_epoch = _started(self.kafka_controller, "controller").broker_epoch
        request = build_entity(request_schema(api, version),
                               {"broker_id": config.broker_id, "broker_epoch": broker_epoch})
        return send_and_receive(network_client, api, version, request).response_body

    # ------------------------------------------------------------------ shutdown

    def shutdown(self, controlled_shutdown: bool = True) -> None:
        """Stop the broker in Kafka's order; safe to call more than once, and after a failed startup.

        ``controlled_shutdown=False`` skips asking the controller to move leaderships first:
        for a broker stopping because all its log dirs failed, whose partitions are offline
        already and which Kafka would halt without a word to the controller.
        """
        self.logger.info("shutting down")
        if self._is_starting_up:
            raise KafkaException("Kafka server is still starting up, cannot shut down!")
        if self._shutdown_latch.is_set() or self._is_shutting_down.is_set():
            return
        self._is_shutting_down.set()
        try:
            if controlled_shutdown:
                self._swallow(self._controlled_shutdown)
            self._shutdown_started_components()
        finally:
            self._is_shutting_down.clear()
            self._startup_complete.clear()
            self._shutdown_latch.set()
        self.logger.info("shut down completed")

    def _shutdown_started_components(self) -> None:
        self.broker_state = BrokerState.SHUTTING_DOWN
        if self.dynamic_config_manager is not None:
            self._swallow(self.dynamic_config_manager.shutdown)
        # No new requests from here on; the sockets themselves close last.
        if self.prometheus_metrics_server is not None:
            self._swallow(self.prometheus_metrics_server.shutdown)
            self.prometheus_metrics_server = None
        if self.socket_server is not None:
            self._swallow(self.socket_server.stop_processing_requests)
        if self.data_plane_request_handler_pool is not None:
            self._swallow(self.data_plane_request_handler_pool.shutdown)
        # produce requests still waiting for their coordinator's answer are answered
        if self.add_partitions_to_txn_manager is not None:
            self._swallow(self.add_partitions_to_txn_manager.shutdown)
        if self.kafka_scheduler is not None:
            self._swallow(self.kafka_scheduler.shutdown)
        if self.data_plane_request_processor is not None:
            self._swallow(self.data_plane_request_processor.close)
        if self.authorizer is not None:
            self._swallow(self.authorizer.close)
        if self.admin_manager is not None:
            self._swallow(self.admin_manager.shutdown)
        # it shuts its producer id manager down too
        if self.transaction_coordinator is not None:
            self._swallow(self.transaction_coordinator.shutdown)
        elif self.producer_id_manager is not None:
            self._swallow(self.producer_id_manager.shutdown)
        if self.group_coordinator is not None:
            self._swallow(self.group_coordinator.shutdown)
        if self.replica_manager is not None:
            self._swallow(self.replica_manager.shutdown)
        if self.quota_managers is not None:
            self._swallow(self.quota_managers.shutdown)
        if self.alter_isr_manager is not None:
            self._swallow(self.alter_isr_manager.shutdown)
        self._swallow(self.broker_topic_stats.close)
        # Last of the data path: flushes, checkpoints and the clean-shutdown marker.
        if self.log_manager is not None:
            self._swallow(self.log_manager.shutdown)
        if self.kafka_controller is not None:
            self._swallow(self.kafka_controller.shutdown)
        if self.token_manager is not None:
            self._swallow(self.token_manager.shutdown)
        if self.feature_change_listener is not None and self.feature_change_listener.is_listener_initiated:
            self._swallow(self.feature_change_listener.close)
        if self.zk_client is not None:
            self._swallow(self.zk_client.close)
        # A controlled-shutdown answer may still be on its way out; sockets go last.
        if self.socket_server is not None:
            self._swallow(self.socket_server.shutdown)
        if self.dynamic_config is not None:
            self._swallow(self.dynamic_config.clear)
        self.broker_state = BrokerState.NOT_RUNNING

    def _swallow(self, action: Any) -> None:
        try:
            action()
        except Exception:  # noqa: BLE001 - CoreUtils.swallow: one failure must not stop the rest
            self.logger.exception("Error while shutting down %s", getattr(action, "__qualname__",
                                                                                        action))

    def await_shutdown(self, timeout_s: Optional[float] = None) -> bool:
        """Wait until ``shutdown()`` has completed (Kafka's awaitShutdown)."""
        return self._shutdown_latch.wait(timeout_s)

    # ------------------------------------------------------------------ views

    def bound_port(self, listener_name: str = "PLAINTEXT") -> int:
        return _started(self.socket_server, "socket server").bound_port(listener_name)

    @property
    def startup_complete(self) -> bool:
        return self._startup_complete.is_set()


__all__ = ["KafkaServer", "BrokerState", "generate_uuid_as_base64"]
