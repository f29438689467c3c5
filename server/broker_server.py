"""Port of core/src/main/scala/kafka/server/BrokerServer.scala (Kafka 2.8.2).

The broker of a KRaft node. It serves clients exactly as a ZooKeeper-mode KafkaServer does,
with the same SocketServer, LogManager, ReplicaManager, group and transaction coordinators,
quota managers, KafkaApis and request handler threads; what changes is where the cluster's
metadata comes from and where changes to it go:

* there is no ZooKeeper client, KafkaController or ZkAdminManager. The metadata arrives as
  committed records of the metadata log: the ``meta_log_manager`` (the Raft shim in
  production) hands them to a BrokerMetadataListener, which builds the RaftMetadataCache's
  images, drives the RaftReplicaManager's leader and follower transitions and applies
  configs and quotas;
* the broker talks to the active controller (RaftControllerNodeProvider: the metadata log's
  leader, at its address in controller.quorum.voters) through BrokerToControllerChannelManagers:
  "heartbeat" (the BrokerLifecycleManager's registration and heartbeats), "alterisr"
  (AlterIsr), "forwarding" (admin requests in Envelopes, KIP-590), "autocreate" (topics
  auto-created by Metadata and FindCoordinator) and "producerids" (AllocateProducerIds,
  Kafka 3.0's RPCProducerIdManager in place of 2.8.2's temporary generator);
* startup registers the broker, waits until it has caught up with the metadata log, only
  then starts the LogManager (so recovery sees the topics' configs), the ReplicaManager and
  the coordinators, applies the partition changes deferred until then, opens the sockets to
  clients and asks to be unfenced;
* shutdown begins with a controlled shutdown through heartbeats (the controller moves this
  broker's leaderships and then lets it go), then stops the components in Kafka's order.

The broker's metrics are a ZooKeeper-mode broker's, its BrokerState gauge read from the
BrokerLifecycleManager; KafkaRaftServer serves them on the node's Prometheus endpoint.

ACLs and SCRAM credentials are metadata records too (Kafka 3.5): the listener's AclPublisher
and ScramPublisher feed them to the StandardAuthorizer and the CredentialCache of the SASL
listeners; CreateAcls, DeleteAcls and AlterUserScramCredentials are forwarded to the controller,
DescribeAcls and DescribeUserScramCredentials answered from what the broker holds.

DescribeConfigs is answered by ConfigHelper over the CachedConfigRepository. Delegation
tokens are not supported (as in 2.8.2).
"""
from __future__ import annotations

import enum
import logging
import socket
import threading
from concurrent.futures import CancelledError, Future
from concurrent.futures import TimeoutError as FutureTimeoutError
from typing import Any, Callable, Mapping, Optional, Sequence, TypeVar

from kafka_py.core.cluster.broker import Broker, EndPoint, ListenerName, SecurityProtocol
from kafka_py.clients.common.errors import KafkaException
from kafka_py.core.coordinator.group.group_coordinator import GroupCoordinator
from kafka_py.core.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME
from kafka_py.core.coordinator.transaction.producer_id_manager import RPCProducerIdManager
from kafka_py.core.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from kafka_py.core.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_manager import LogManager
from kafka_py.metadata.broker_state import BrokerState
from kafka_py.metadata.version_range import VersionRange
from kafka_py.core.metrics.kafka_metrics_group import default_registry, explicit_metric_name
from kafka_py.network.channel_builders import create_client_channel_builder
from kafka_py.network.socket_server import SocketServer
from kafka_py.core.security.authorizer import create_authorizer
from kafka_py.clients.common.security.credential_cache import CredentialCache
from kafka_py.server import quota_factory
from kafka_py.server.add_partitions_to_txn_manager import AddPartitionsToTxnManager
from kafka_py.server.alter_isr_manager import DefaultAlterIsrManager
from kafka_py.server.auto_topic_creation_manager import DefaultAutoTopicCreationManager
from kafka_py.server.api_version_manager import (
    ApiVersionSupplier,
    ListenerType,
    SimpleApiVersionManager,
    broker_apis,
)
from kafka_py.server.broker_features import BrokerFeatures
from kafka_py.server.broker_lifecycle_manager import BrokerLifecycleManager, listener_entries
from kafka_py.server.broker_to_controller_channel_manager import (
    BrokerToControllerChannelManager,
    NetworkClientControllerConnection,
    RaftControllerNodeProvider,
    quorum_voter_strings_to_nodes,
)
from kafka_py.server.broker_topic_stats import BrokerTopicStats
from kafka_py.server.config_handler import BrokerConfigHandler, TopicConfigHandler
from kafka_py.server.dynamic_broker_config import DynamicBrokerConfig, DynamicLogConfig
from kafka_py.server.finalized_feature_cache import FinalizedFeatureCache
from kafka_py.server.forwarding_manager import ForwardingManagerImpl
from kafka_py.server.kafka_apis import KafkaApis, error_response
from kafka_py.server.kafka_request_handler import DATA_PLANE_THREAD_PREFIX, KafkaRequestHandlerPool
from kafka_py.server.log_dir_failure_channel import LogDirFailureChannel
from kafka_py.server.metadata.broker_metadata_listener import BrokerMetadataListener, on_leadership_change
from kafka_py.server.config_admin_manager import ConfigAdminManager
from kafka_py.server.metadata.acl_publisher import AclPublisher
from kafka_py.server.metadata.client_quota_cache import ClientQuotaCache
from kafka_py.server.metadata.client_quota_metadata_manager import ClientQuotaMetadataManager
from kafka_py.server.metadata.config_repository import CachedConfigRepository
from kafka_py.server.metadata.feature_publisher import FeaturePublisher
from kafka_py.server.metadata.raft_metadata_cache import RaftMetadataCache
from kafka_py.server.metadata.scram_publisher import ScramPublisher
from kafka_py.server.raft_replica_manager import RaftReplicaManager
from kafka_py.server.zk_admin_manager import ConfigHelper
from kafka_py.core.utils.kafka_scheduler import KafkaScheduler
from kafka_py.clients.common.config.config_def import ConfigException
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.zk.zk_data import BrokerInfo

logger = logging.getLogger(__name__)

# How long a forwarded or auto-creating request may wait for a controller (Kafka's 60 s).
FORWARDING_RETRY_TIMEOUT_MS = 60_000
# How long shutdown waits for the controller to approve a controlled shutdown (Kafka's 5 min).
CONTROLLED_SHUTDOWN_TIMEOUT_S = 300
# KafkaBroker's gauge of the broker's state, under a ZooKeeper-mode broker's name.
BROKER_STATE_METRIC = explicit_metric_name("kafka.server", "KafkaServer", "BrokerState")


class ProcessStatus(enum.Enum):
    """Server.ProcessStatus."""

    SHUTDOWN = "SHUTDOWN"
    STARTING = "STARTING"
    STARTED = "STARTED"
    SHUTTING_DOWN = "SHUTTING_DOWN"


# A factory of the connection a channel to the controller sends through (by channel name);
# tests pass one that reaches a controller in the same process.
ControllerConnectionFactory = Callable[[str], Any]

_C = TypeVar("_C")


def _started(component: Optional[_C], name: str) -> _C:
    """``component``, one of the broker's parts that ``BrokerServer.startup()`` makes; a
    KafkaException naming it when the broker has not made it (not started, or its startup
    failed before it)."""
    if component is None:
        raise KafkaException(f"The broker has no {name}: BrokerServer.startup() has not created it")
    return component


class BrokerServer:
    """A Kafka broker that runs in KRaft (Kafka Raft) mode."""

    def __init__(self, config: Any, meta_properties: Any, meta_log_manager: Any, time: Time = Time.SYSTEM,
                 metrics: Any = None, thread_name_prefix: Optional[str] = None,
                 initial_offline_dirs: Sequence[str] = (),
                 controller_quorum_voters_future: "Future | Sequence[str] | None" = None,
                 supported_features: Optional[Mapping[str, VersionRange]] = None, *,
                 controller_connection_factory: Optional[ControllerConnectionFactory] = None) -> None:
        self.config = config
        self.meta_properties = meta_properties
        self.meta_log_manager = meta_log_manager
        self.time = time
        self.metrics = metrics
        self.thread_name_prefix = thread_name_prefix
        self.initial_offline_dirs = list(initial_offline_dirs)
        self.controller_quorum_voters_future = controller_quorum_voters_future
        # KIP-584: what this broker supports (registered with the controller) and the cluster's
        # finalized features from the metadata log (in ApiVersions answers).
        self.broker_features = BrokerFeatures.from_config(config)
        if supported_features is None:
            supported_features = {name: VersionRange(r.min_version, r.max_version)
                                  for name, r in self.broker_features.supported_features.items()}
        self.supported_features: dict[str, VersionRange] = dict(supported_features)
        self.feature_cache = FinalizedFeatureCache(self.broker_features)
        self.controller_connection_factory = controller_connection_factory
        self.logger = IdentLogger(logger, f"[BrokerServer id={config.node_id}] ")

        self.lifecycle_manager = BrokerLifecycleManager(config, time, thread_name_prefix)
        self._is_shutting_down = threading.Event()
        self._lock = threading.Condition()
        self.status = ProcessStatus.SHUTDOWN

        self.cluster_id: str = str(meta_properties.cluster_id)
        self.config_repository = CachedConfigRepository()
        self.broker_topic_stats: Optional[BrokerTopicStats] = None
        self.kafka_scheduler: Optional[KafkaScheduler] = None
        self.quota_managers: Optional[quota_factory.QuotaManagers] = None
        self.log_dir_failure_channel: Optional[LogDirFailureChannel] = None
        self.log_manager: Optional[LogManager] = None
        self.metadata_cache: Optional[RaftMetadataCache] = None
        self.credential_provider: Optional[CredentialCache] = None
        self.forwarding_manager: Optional[ForwardingManagerImpl] = None
        self.socket_server: Optional[SocketServer] = None
        self.alter_isr_manager: Optional[DefaultAlterIsrManager] = None
        self.replica_manager: Optional[RaftReplicaManager] = None
        self.group_coordinator: Optional[GroupCoordinator] = None
        self.producer_id_manager: Optional[RPCProducerIdManager] = None
        self.transaction_coordinator: Optional[TransactionCoordinator] = None
        self.auto_topic_creation_manager: Optional[DefaultAutoTopicCreationManager] = None
        self.dynamic_config: Optional[DynamicBrokerConfig] = None
        self.broker_metadata_listener: Optional[BrokerMetadataListener] = None
        self.authorizer: Any = None
        self.acl_publisher: Optional[AclPublisher] = None
        self.data_plane_request_processor: Optional[KafkaApis] = None
        self.add_partitions_to_txn_manager: Optional[AddPartitionsToTxnManager] = None
        self.data_plane_request_handler_pool: Optional[KafkaRequestHandlerPool] = None

    def _maybe_change_status(self, from_status: ProcessStatus, to_status: ProcessStatus) -> bool:
        with self._lock:
            if self.status is not from_status:
                return False
            self.status = to_status
            if to_status is ProcessStatus.SHUTTING_DOWN:
                self._is_shutting_down.set()
            elif to_status is ProcessStatus.SHUTDOWN:
                self._is_shutting_down.clear()
                self._lock.notify_all()
            return True

    # ------------------------------------------------------------------ the channels to the controller

    def _controller_nodes(self) -> list:
        voters = self.controller_quorum_voters_future
        if isinstance(voters, Future):
            voters = voters.result()
        if voters is None:
            voters = self.config.quorum_voters
        return quorum_voter_strings_to_nodes(voters)

    def _controller_connection(self, channel_name: str) -> Any:
        if self.controller_connection_factory is not None:
            return self.controller_connection_factory(channel_name)
        config = self.config
        listener = config.controller_listener_names[0]
        protocol = config.listener_security_protocol_map.get(ListenerName(listener), SecurityProtocol.PLAINTEXT)
        channel_builder = create_client_channel_builder(config, listener, protocol,
                                                        config.sasl_mechanism_controller_protocol)
        return NetworkClientControllerConnection(f"broker-{config.node_id}-{channel_name}",
                                                 config.controller_socket_timeout_ms, config.request_timeout_ms,
                                                 self.time, channel_builder)

    def _channel_manager(self, provider: RaftControllerNodeProvider, channel_name: str,
                         retry_timeout_ms: float) -> BrokerToControllerChannelManager:
        return BrokerToControllerChannelManager(provider, self.time, self.config, channel_name,
                                                self.thread_name_prefix, retry_timeout_ms,
                                                connection=self._controller_connection(channel_name))

    # ------------------------------------------------------------------ startup

    def startup(self) -> None:
        if not self._maybe_change_status(ProcessStatus.SHUTDOWN, ProcessStatus.STARTING):
            return
        try:
            self.logger.info("Starting broker")
            config = self.config

            self.kafka_scheduler = KafkaScheduler(config.background_threads)
            self.kafka_scheduler.startup()
            default_registry().new_gauge(BROKER_STATE_METRIC, lambda: int(self.lifecycle_manager.state()))
            self.broker_topic_stats = BrokerTopicStats()
            self.quota_managers = quota_factory.instantiate(config, self.time, self.thread_name_prefix or "")
            self.log_dir_failure_channel = LogDirFailureChannel(len(config.log_dirs))
            # Created, not started: recovery waits until the broker has caught up with the
            # metadata log and knows the topics' configs.
            self.log_manager = self._create_log_manager()
            self.metadata_cache = RaftMetadataCache(config.node_id)
            self.credential_provider = CredentialCache()

            provider = RaftControllerNodeProvider.create(self.meta_log_manager, config, self._controller_nodes())

            self.forwarding_manager = ForwardingManagerImpl(
                self._channel_manager(provider, "forwarding", FORWARDING_RETRY_TIMEOUT_MS), error_response)
            self.forwarding_manager.start()

            # Bound now so the registration can name the real ports; requests are served only
            # once the broker has caught up and everything behind the sockets is ready.
            self.api_version_manager = SimpleApiVersionManager(ListenerType.BROKER, broker_apis())
            self.socket_server = SocketServer(config, self.time, credential_provider=self.credential_provider,
                                              api_version_manager=self.api_version_manager,
                                              api_version_supplier=ApiVersionSupplier(
                                                  self.api_version_manager, self.broker_features, self.feature_cache))
            self.socket_server.startup(start_processing_requests=False, data_plane_listeners=self._broker_listeners())

            self.alter_isr_manager = DefaultAlterIsrManager(
                self._channel_manager(provider, "alterisr", float("inf")), self.kafka_scheduler, self.time,
                config.node_id, self.lifecycle_manager.broker_epoch)
            self.alter_isr_manager.start()

            self.replica_manager = RaftReplicaManager(
                config, self.time, self.kafka_scheduler, self.log_manager, self.metadata_cache,
                self.log_dir_failure_channel, config_repository=self.config_repository,
                is_shutting_down=self._is_shutting_down, alter_isr_manager=self.alter_isr_manager,
                broker_topic_stats=self.broker_topic_stats, quota_managers=self.quota_managers,
                thread_name_prefix=self.thread_name_prefix)

            # Created now, started once the replica manager is.
            self.group_coordinator = GroupCoordinator.create(config, self.replica_manager, self.time)
            self.producer_id_manager = RPCProducerIdManager(
                config.node_id, self.lifecycle_manager.broker_epoch,
                self._channel_manager(provider, "producerids", FORWARDING_RETRY_TIMEOUT_MS),
                config.request_timeout_ms)
            self.producer_id_manager.controller_channel.start()
            self.transaction_coordinator = TransactionCoordinator.create(
                config, self.replica_manager, self.producer_id_manager, self.metadata_cache, self.time)

            self.auto_topic_creation_manager = DefaultAutoTopicCreationManager(
                config, self._channel_manager(provider, "autocreate", FORWARDING_RETRY_TIMEOUT_MS))
            self.auto_topic_creation_manager.start()

            # The dynamic layers come from ConfigRecords; the reconfigurables are in place before
            # the listener applies the first of them.
            self.dynamic_config = DynamicBrokerConfig(config)
            # the replica fetchers, made from here on, share its inter-broker client channel builder
            config.dynamic_config = self.dynamic_config
            self.dynamic_config.add_broker_reconfigurable(DynamicLogConfig(self.log_manager))
            if self.log_manager.cleaner is not None:
                self.dynamic_config.add_broker_reconfigurable(self.log_manager.cleaner)
            self.dynamic_config.add_broker_reconfigurable(self.socket_server)

            self.client_quota_cache = ClientQuotaCache()
            self.broker_metadata_listener = BrokerMetadataListener(
                config.node_id, self.time, self.metadata_cache, self.config_repository, self.group_coordinator,
                self.replica_manager, self.transaction_coordinator, self.thread_name_prefix,
                ClientQuotaMetadataManager(self.quota_managers, self.socket_server.connection_quotas,
                                           self.client_quota_cache),
                topic_config_handler=TopicConfigHandler(self.log_manager, config, self.quota_managers),
                broker_config_handler=BrokerConfigHandler(self.dynamic_config, self.quota_managers))

            network_listeners = self._registration_listeners()
            self.lifecycle_manager.start(
                self.broker_metadata_listener.highest_metadata_offset,
                self._channel_manager(provider, "heartbeat", config.broker_session_timeout_ms),
                self.cluster_id, listener_entries(network_listeners), self.supported_features)

            # The authorizer and the credential cache exist before the first records arrive: the
            # ACLs and SCRAM credentials are records, which the publishers hand them.
            authorizer_class_name = (config.get("authorizer.class.name") or "").strip()
            if authorizer_class_name:
                self.authorizer = create_authorizer(authorizer_class_name)
                self.authorizer.configure(config.originals)
            self.acl_publisher = AclPublisher("broker", config.node_id, self.authorizer)
            self.broker_metadata_listener.publishers = [
                self.acl_publisher,
                ScramPublisher("broker", config.node_id, self.credential_provider),
                FeaturePublisher("broker", config.node_id, self.feature_cache)]

            # From here on the committed metadata records arrive.
            self.meta_log_manager.register(self.broker_metadata_listener)

            end_points = tuple(EndPoint(host, port, ListenerName(name), SecurityProtocol.for_id(protocol))
                               for name, host, port, protocol in network_listeners)
            if not any(e.listener_name == config.inter_broker_listener_name for e in end_points):
                raise KafkaException(f"Unable to find inter-broker listener {config.inter_broker_listener_name.value}"
                                     f". Found listener(s): {', '.join(e.listener_name.value for e in end_points)}")
            # per end point, done when the authorizer can decide for its listener (StandardAuthorizer.start)
            authorizer_futures: Mapping[EndPoint, Future[None]] = {}
            if self.authorizer is not None:
                authorizer_futures = self.authorizer.start(BrokerInfo(Broker(config.node_id, end_points, config.rack),
                                                                      BrokerInfo.CURRENT_VERSION, jmx_port=-1)) or {}

            self.data_plane_request_processor = KafkaApis(
                self.socket_server.data_plane_request_channel, self.replica_manager,
                ConfigHelper(self.metadata_cache, self.dynamic_config, self.config_repository), None, None,
                config.node_id, config, self.metadata_cache, self.cluster_id, self.time,
                producer_id_manager=self.producer_id_manager, group_coordinator=self.group_coordinator,
                quotas=self.quota_managers, authorizer=self.authorizer)
            apis = self.data_plane_request_processor
            apis.txn_coordinator = self.transaction_coordinator
            apis.forwarding_manager = self.forwarding_manager
            # this broker's own dynamic configs are checked here before they are forwarded
            apis.config_admin_manager = ConfigAdminManager(config.node_id, self.dynamic_config,
                                                           self.config_repository)
            # DescribeUserScramCredentials is answered from the credentials the metadata log holds
            apis.credential_provider = self.credential_provider
            # DescribeClientQuotas is answered from the quotas the metadata log holds
            apis.client_quota_cache = self.client_quota_cache
            apis.auto_topic_creation_manager = self.auto_topic_creation_manager
            apis.api_version_manager = self.api_version_manager
            apis.broker_features = self.broker_features
            apis.feature_cache = self.feature_cache
            # a transaction's first batch on a partition is verified with its coordinator (KIP-890)
            if config.transaction_partition_verification_enable:
                self.add_partitions_to_txn_manager = AddPartitionsToTxnManager(
                    config, self.metadata_cache, self.transaction_coordinator, self.time)
                apis.add_partitions_to_txn_manager = self.add_partitions_to_txn_manager
            # markers for this broker's own partitions are appended without a request to itself
            self.transaction_coordinator.txn_marker_channel_manager.local_marker_writer = apis.write_txn_markers
            self.data_plane_request_handler_pool = KafkaRequestHandlerPool(
                config.node_id, self.socket_server.data_plane_request_channel, apis, self.time,
                config.num_io_threads, "RequestHandlerAvgIdlePercent", DATA_PLANE_THREAD_PREFIX)

            # Block until the controller says this broker has caught up with the metadata log
            # (a registration that never succeeds cancels the wait).
            try:
                self.lifecycle_manager.initial_catch_up_future.result()
            except CancelledError:
                raise KafkaException("The broker could not register with the controller quorum within "
                                     f"initial.broker.registration.timeout.ms "
                                     f"({config.initial_registration_timeout_ms} ms)") from None
            # Caught up: the ACLs read so far are every committed one, so the authorizer decides
            # for everyone, and the listeners waiting on it may open.
            self.acl_publisher.caught_up(self.broker_metadata_listener.highest_metadata_offset())
            for end_point, future in authorizer_futures.items():
                try:
                    future.result()
                except Exception as e:
                    raise KafkaException(f"The authorizer is not ready for listener "
                                         f"{end_point.listener_name.value}: {e}") from e
            # Recovery from an unclean shutdown, if any, with the topics' configs now known.
            self.log_manager.startup(self._topic_config_overrides())
            self.replica_manager.startup()
            self.replica_manager.start_high_watermark_check_point_thread()
            self.group_coordinator.startup(lambda: self._internal_topic_partition_count(
                GROUP_METADATA_TOPIC_NAME, config.offsets_topic_partitions))
            self.transaction_coordinator.startup(lambda: self._internal_topic_partition_count(
                TRANSACTION_STATE_TOPIC_NAME, config.transaction_topic_partitions))
            # The partition changes seen while catching up, now that their services run.
            self.replica_manager.end_metadata_change_deferral(
                lambda leaders, followers: on_leadership_change(self.group_coordinator,
                                                                self.transaction_coordinator, leaders, followers))

            self.socket_server.start_processing_requests()
            # Ready: the controller may unfence this broker.
            self.lifecycle_manager.set_ready_to_unfence()
            self._maybe_change_status(ProcessStatus.STARTING, ProcessStatus.STARTED)
            self.logger.info("started")
        except BaseException as e:
            self._maybe_change_status(ProcessStatus.STARTING, ProcessStatus.STARTED)
            self.logger.critical("Fatal error during broker startup. Prepare to shutdown",
                                 exc_info=None if isinstance(e, ConfigException) else e)
            self.shutdown()
            raise

    def _broker_listeners(self) -> list[EndPoint]:
        """The listeners this broker binds: every one but the controllers' (a combined node's
        ControllerServer binds those)."""
        return [e for e in self.config.listeners if e.listener_name.value not in self.config.controller_listener_names]

    def _registration_listeners(self) -> list[tuple[str, str, int, int]]:
        """The advertised listeners with their bound ports: (name, host, port, protocol id)."""
        socket_server = _started(self.socket_server, "socket server")
        result = []
        for end_point in self.config.advertised_listeners:
            name = end_point.listener_name.value
            host = end_point.host
            if host is None or not host.strip():
                host = socket.getfqdn()
            result.append((name, host, socket_server.bound_port(name), end_point.security_protocol.id))
        return result

    def _create_log_manager(self) -> LogManager:
        return LogManager.apply(self.config, self.initial_offline_dirs, _started(self.kafka_scheduler, "scheduler"),
                                self.time, _started(self.log_dir_failure_channel, "log dir failure channel"))

    def _topic_config_overrides(self) -> dict[str, dict[str, str]]:
        """Every known topic's config overrides from the metadata log, for the logs loaded now."""
        known = set(LogConfig.config_names())
        result = {}
        for topic in _started(self.metadata_cache, "metadata cache").get_all_topics():
            overrides = {k: v for k, v in self.config_repository.topic_config(topic).items() if k in known}
            if overrides:
                result[topic] = overrides
        return result

    def _internal_topic_partition_count(self, topic: str, configured: int) -> int:
        count = _started(self.metadata_cache, "metadata cache").num_partitions(topic)
        return int(configured) if count is None else count

    # ------------------------------------------------------------------ shutdown

    def shutdown(self) -> None:
        if not self._maybe_change_status(ProcessStatus.STARTED, ProcessStatus.SHUTTING_DOWN):
            return
        try:
            self.logger.info("shutting down")
            if self.config.controlled_shutdown_enable and self.broker_metadata_listener is not None:
                # No more metadata: this broker must not be added to more ISRs meanwhile.
                self.broker_metadata_listener.begin_shutdown()
                self.lifecycle_manager.begin_controlled_shutdown()
                try:
                    self.lifecycle_manager.controlled_shutdown_future.result(timeout=CONTROLLED_SHUTDOWN_TIMEOUT_S)
                except FutureTimeoutError:
                    self.logger.error("Timed out waiting for the controller to approve controlled shutdown")
                except BaseException:  # noqa: BLE001 - shutdown goes on
                    self.logger.error("Got unexpected exception waiting for controlled shutdown future",
                                      exc_info=True)
            self.lifecycle_manager.begin_shutdown()

            # No new requests from here on; the sockets themselves close last.
            if self.socket_server is not None:
                self._swallow(self.socket_server.stop_processing_requests)
            if self.data_plane_request_handler_pool is not None:
                self._swallow(self.data_plane_request_handler_pool.shutdown)
            if self.kafka_scheduler is not None:
                self._swallow(self.kafka_scheduler.shutdown)
            if self.data_plane_request_processor is not None:
                self._swallow(self.data_plane_request_processor.close)
            if self.authorizer is not None:
                self._swallow(self.authorizer.close)
            if self.broker_metadata_listener is not None:
                self._swallow(self.broker_metadata_listener.close)
            # it shuts its producer id manager down too
            if self.transaction_coordinator is not None:
                self._swallow(self.transaction_coordinator.shutdown)
            if self.producer_id_manager is not None:
                self._swallow(self.producer_id_manager.controller_channel.shutdown)
            if self.group_coordinator is not None:
                self._swallow(self.group_coordinator.shutdown)
            if self.replica_manager is not None:
                self._swallow(self.replica_manager.shutdown)
            if self.alter_isr_manager is not None:
                self._swallow(self.alter_isr_manager.shutdown)
            if self.forwarding_manager is not None:
                self._swallow(self.forwarding_manager.shutdown)
            if self.auto_topic_creation_manager is not None:
                self._swallow(self.auto_topic_creation_manager.shutdown)
            if self.add_partitions_to_txn_manager is not None:
                self._swallow(self.add_partitions_to_txn_manager.shutdown)
            # Last of the data path: flushes, checkpoints and the clean-shutdown marker.
            if self.log_manager is not None:
                self._swallow(self.log_manager.shutdown)
            if self.quota_managers is not None:
                self._swallow(self.quota_managers.shutdown)
            if self.socket_server is not None:
                self._swallow(self.socket_server.shutdown)
            if self.broker_topic_stats is not None:
                self._swallow(self.broker_topic_stats.close)
            if self.dynamic_config is not None:
                self._swallow(self.dynamic_config.clear)
            self._is_shutting_down.clear()
            self._swallow(self.lifecycle_manager.close)
            default_registry().remove_metric(BROKER_STATE_METRIC)
            self.logger.info("shut down completed")
        except BaseException as e:
            self.logger.critical("Fatal error during broker shutdown.", exc_info=e)
            raise
        finally:
            self._maybe_change_status(ProcessStatus.SHUTTING_DOWN, ProcessStatus.SHUTDOWN)

    def _swallow(self, action: Callable[[], Any]) -> None:
        try:
            action()
        except Exception:  # noqa: BLE001 - CoreUtils.swallow: one failure must not stop the rest
            self.logger.exception("Error while shutting down %s", getattr(action, "__qualname__", action))

    def await_shutdown(self, timeout_s: Optional[float] = None) -> bool:
        """Wait until the broker is shut down (Kafka's awaitShutdown); False on timeout."""
        with self._lock:
            return self._lock.wait_for(lambda: self.status is ProcessStatus.SHUTDOWN, timeout_s)

    # ------------------------------------------------------------------ views

    def bound_port(self, listener_name: str = "PLAINTEXT") -> int:
        return _started(self.socket_server, "socket server").bound_port(listener_name)

    def current_state(self) -> BrokerState:
        return self.lifecycle_manager.state()


__all__ = ["BrokerServer", "ProcessStatus"]
