"""Port of core/src/main/scala/kafka/controller/KafkaController.scala: the ZooKeeper-era
controller of Kafka 2.8.2.

Every broker runs a KafkaController; the one that creates the ephemeral /controller znode
(bumping /controller_epoch in the same multi-op) is the active controller until its ZooKeeper
session ends. All work happens on the controller-event-thread (ControllerEventManager):
ZooKeeper watches, responses from brokers, the auto-rebalance timer and API calls
(controlled shutdown, leader election, reassignments, AlterIsr) only enqueue events.

On winning the election (``_on_controller_failover``) the controller registers its watches
before reading anything (so no change can slip between the read and the watch), loads the
brokers, topics, assignments and leaders from ZooKeeper into the ControllerContext, starts
one RequestSendThread per live broker, sends every broker an UpdateMetadata with the live
brokers, starts the replica and partition state machines (LeaderAndIsr for every replica,
leaders elected for new and offline partitions) and resumes pending topic deletions,
reassignments and preferred-replica elections.

Every ZooKeeper write the active controller makes is fenced on the zkVersion of
/controller_epoch; a write that fails the fence raises ControllerMovedException, and the
controller then checks /controller and resigns if it lost it.

Also here: the controller events (case classes at the end of the Scala file), the
ZooKeeper handlers and ElectionType (clients' ElectionType.java).
"""
from __future__ import annotations

import enum
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from kafka_py.core.api.leader_and_isr import (
    INITIAL_CONTROLLER_EPOCH,
    INITIAL_CONTROLLER_EPOCH_ZK_VERSION,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
)
from kafka_py.core.cluster.broker import Broker, FinalizedVersionRange
from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.controller.controller_channel_manager import (
    ControllerBrokerRequestBatch,
    ControllerChannelManager,
    IllegalStateException,
    leader_and_isr_partition_errors,
)
from kafka_py.controller.controller_context import ControllerContext, PartitionAndReplica
from kafka_py.controller.controller_event_manager import ControllerEvent, ControllerEventManager
from kafka_py.controller.controller_state import ControllerState
from kafka_py.controller.election import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    OfflinePartitionLeaderElectionStrategy,
    PartitionLeaderElectionAlgorithms,
    PartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
    ReassignPartitionLeaderElectionStrategy,
)
from kafka_py.controller.partition_state_machine import (
    NewPartition,
    OfflinePartition,
    OnlinePartition,
    StateChangeFailedException,
    ZkPartitionStateMachine,
)
from kafka_py.controller.replica_state_machine import (
    NewReplica,
    NonExistentReplica,
    OfflineReplica,
    OnlineReplica,
    ReplicaDeletionIneligible,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
    ZkReplicaStateMachine,
)
from kafka_py.controller.state_change_logger import StateChangeLogger
from kafka_py.controller.topic_deletion_manager import ControllerDeletionClient, TopicDeletionManager
from kafka_py.log.log_config import api_version
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import UNKNOWN_BROKER_EPOCH
from kafka_py.server.broker_features import BrokerFeatures, has_incompatible_features
from kafka_py.server.finalized_feature_cache import FinalizedFeatureCache
from kafka_py.server.finalized_feature_change_listener import FinalizedFeatureChangeListener
from kafka_py.core.utils.crash_points import crash_point
from kafka_py.core.utils.kafka_scheduler import KafkaScheduler
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.zk.kafka_zk_client import (
    Code,
    ControllerMovedException,
    KafkaZkClient,
    StateChangeHandler,
    ZNodeChangeHandler,
    ZNodeChildChangeHandler,
)
from kafka_py.core.zk.zk_data import (
    BrokerIdsZNode,
    BrokerIdZNode,
    BrokerInfo,
    ControllerZNode,
    DeleteTopicsZNode,
    FeatureZNode,
    FeatureZNodeStatus,
    IsrChangeNotificationZNode,
    LogDirEventNotificationZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    ReplicaAssignment,
    StateChangeHandlers,
    TopicIdReplicaAssignment,
    TopicPartitionStateZNode,
    TopicPartitionsZNode,
    TopicsZNode,
    TopicZNode,
    ZkVersion,
)

logger = logging.getLogger(__name__)


class ElectionType(enum.IntEnum):
    PREFERRED = 0
    UNCLEAN = 1


class ElectionTrigger(enum.Enum):
    AUTO_TRIGGERED = "AutoTriggered"
    ZK_TRIGGERED = "ZkTriggered"
    ADMIN_CLIENT_TRIGGERED = "AdminClientTriggered"

    def __str__(self) -> str:
        return self.value


# Callback types. Kafka's Try/Either become "value or exception" / "value or ApiError".
ControlledShutdownCallback = Callable[["set[TopicPartition] | Exception"], None]
ElectLeadersCallback = Callable[["dict[TopicPartition, int | ApiError]"], None]
ListReassignmentsCallback = Callable[["dict[TopicPartition, ReplicaAssignment] | ApiError"], None]
AlterReassignmentsCallback = Callable[["dict[TopicPartition, ApiError] | ApiError"], None]
AlterIsrCallback = Callable[["dict[TopicPartition, Errors | LeaderAndIsr] | Errors"], None]
UpdateFeaturesCallback = Callable[["dict[str, ApiError] | ApiError"], None]


# ---------------------------------------------------------------------------------------------
# Events
# ---------------------------------------------------------------------------------------------

class _Singleton(ControllerEvent):
    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))


class ControllerChange(_Singleton):
    state = ControllerState.CONTROLLER_CHANGE


class Reelect(_Singleton):
    state = ControllerState.CONTROLLER_CHANGE


class RegisterBrokerAndReelect(_Singleton):
    state = ControllerState.CONTROLLER_CHANGE


class Expire(_Singleton):
    state = ControllerState.CONTROLLER_CHANGE


class Startup(_Singleton):
    state = ControllerState.CONTROLLER_CHANGE


class AutoPreferredReplicaLeaderElection(_Singleton):
    state = ControllerState.AUTO_LEADER_BALANCE


class UncleanLeaderElectionEnable(_Singleton):
    state = ControllerState.UNCLEAN_LEADER_ELECTION_ENABLE


class BrokerChange(_Singleton):
    state = ControllerState.BROKER_CHANGE


class TopicChange(_Singleton):
    state = ControllerState.TOPIC_CHANGE


class LogDirEventNotification(_Singleton):
    state = ControllerState.LOG_DIR_CHANGE


class TopicDeletion(_Singleton):
    state = ControllerState.TOPIC_DELETION


class ZkPartitionReassignment(_Singleton):
    state = ControllerState.ALTER_PARTITION_REASSIGNMENT


class IsrChangeNotification(_Singleton):
    state = ControllerState.ISR_CHANGE


@dataclass(frozen=True, eq=False)
class TopicUncleanLeaderElectionEnable(ControllerEvent):
    topic: str
    state = ControllerState.TOPIC_UNCLEAN_LEADER_ELECTION_ENABLE


@dataclass(frozen=True, eq=False)
class ControlledShutdown(ControllerEvent):
    id: int
    broker_epoch: int
    controlled_shutdown_callback: ControlledShutdownCallback
    state = ControllerState.CONTROLLED_SHUTDOWN

    def preempt(self) -> None:
        self.controlled_shutdown_callback(ControllerMovedException("Controller moved to another broker"))


@dataclass(frozen=True, eq=False)
class LeaderAndIsrResponseReceived(ControllerEvent):
    leader_and_isr_response: Any
    broker_id: int
    state = ControllerState.LEADER_AND_ISR_RESPONSE_RECEIVED


@dataclass(frozen=True, eq=False)
class UpdateMetadataResponseReceived(ControllerEvent):
    update_metadata_response: Any
    broker_id: int
    state = ControllerState.UPDATE_METADATA_RESPONSE_RECEIVED


@dataclass(frozen=True, eq=False)
class TopicDeletionStopReplicaResponseReceived(ControllerEvent):
    replica_id: int
    request_error: Errors
    partition_errors: Mapping[TopicPartition, Errors]
    state = ControllerState.TOPIC_DELETION


@dataclass(frozen=True, eq=False)
class BrokerModifications(ControllerEvent):
    broker_id: int
    state = ControllerState.BROKER_CHANGE


@dataclass(frozen=True, eq=False)
class PartitionModifications(ControllerEvent):
    topic: str
    state = ControllerState.TOPIC_CHANGE


@dataclass(frozen=True, eq=False)
class ApiPartitionReassignment(ControllerEvent):
    # None as a target cancels the partition's ongoing reassignment.
    reassignments: Mapping[TopicPartition, "Sequence[int] | None"]
    callback: AlterReassignmentsCallback
    state = ControllerState.ALTER_PARTITION_REASSIGNMENT

    def preempt(self) -> None:
        self.callback(ApiError(Errors.NOT_CONTROLLER))


@dataclass(frozen=True, eq=False)
class PartitionReassignmentIsrChange(ControllerEvent):
    partition: TopicPartition
    state = ControllerState.ALTER_PARTITION_REASSIGNMENT


@dataclass(frozen=True, eq=False)
class AlterIsrReceived(ControllerEvent):
    broker_id: int
    broker_epoch: int
    isrs_to_alter: Mapping[TopicPartition, LeaderAndIsr]
    callback: AlterIsrCallback
    state = ControllerState.ISR_CHANGE


def _no_callback(_: Any) -> None:
    pass


@dataclass(frozen=True, eq=False)
class ReplicaLeaderElection(ControllerEvent):
    partitions_from_admin_client: "set[TopicPartition] | None"
    election_type: ElectionType
    election_trigger: ElectionTrigger
    callback: ElectLeadersCallback = field(default=_no_callback)
    state = ControllerState.MANUAL_LEADER_BALANCE

    def preempt(self) -> None:
        partitions = self.partitions_from_admin_client or set()
        self.callback({p: ApiError(Errors.NOT_CONTROLLER) for p in partitions})


@dataclass(frozen=True, eq=False)
class UpdateFeatures(ControllerEvent):
    request: Any
    callback: UpdateFeaturesCallback
    state = ControllerState.UPDATE_FEATURES

    def preempt(self) -> None:
        self.callback(ApiError(Errors.NOT_CONTROLLER))


@dataclass(frozen=True, eq=False)
class ListPartitionReassignments(ControllerEvent):
    partitions: "set[TopicPartition] | None"
    callback: ListReassignmentsCallback
    state = ControllerState.LIST_PARTITION_REASSIGNMENT

    def preempt(self) -> None:
        self.callback(ApiError(Errors.NOT_CONTROLLER))


# ---------------------------------------------------------------------------------------------
# ZooKeeper handlers: each only enqueues an event
# ---------------------------------------------------------------------------------------------

class BrokerChangeHandler(ZNodeChildChangeHandler):
    def __init__(self, event_manager: ControllerEventManager) -> None:
        super().__init__(BrokerIdsZNode.path(), lambda: event_manager.put(BrokerChange()))


class BrokerModificationsHandler(ZNodeChangeHandler):
    def __init__(self, event_manager: ControllerEventManager, broker_id: int) -> None:
        super().__init__(BrokerIdZNode.path(broker_id),
                         on_data_change=lambda: event_manager.put(BrokerModifications(broker_id)))


class TopicChangeHandler(ZNodeChildChangeHandler):
    def __init__(self, event_manager: ControllerEventManager) -> None:
        super().__init__(TopicsZNode.path(), lambda: event_manager.put(TopicChange()))


class LogDirEventNotificationHandler(ZNodeChildChangeHandler):
    VERSION = 1

    def __init__(self, event_manager: ControllerEventManager) -> None:
        super().__init__(LogDirEventNotificationZNode.path(), lambda: event_manager.put(LogDirEventNotification()))


class PartitionModificationsHandler(ZNodeChangeHandler):
    def __init__(self, event_manager: ControllerEventManager, topic: str) -> None:
        super().__init__(TopicZNode.path(topic), on_data_change=lambda: event_manager.put(PartitionModifications(topic)))


class TopicDeletionHandler(ZNodeChildChangeHandler):
    def __init__(self, event_manager: ControllerEventManager) -> None:
        super().__init__(DeleteTopicsZNode.path(), lambda: event_manager.put(TopicDeletion()))


class PartitionReassignmentHandler(ZNodeChangeHandler):
    def __init__(self, event_manager: ControllerEventManager) -> None:
        super().__init__(ReassignPartitionsZNode.path(), on_creation=lambda: event_manager.put(ZkPartitionReassignment()))


class PartitionReassignmentIsrChangeHandler(ZNodeChangeHandler):
    def __init__(self, event_manager: ControllerEventManager, partition: TopicPartition) -> None:
        super().__init__(TopicPartitionStateZNode.path(partition),
                         on_data_change=lambda: event_manager.put(PartitionReassignmentIsrChange(partition)))


class IsrChangeNotificationHandler(ZNodeChildChangeHandler):
    VERSION = 1

    def __init__(self, event_manager: ControllerEventManager) -> None:
        super().__init__(IsrChangeNotificationZNode.path(), lambda: event_manager.put(IsrChangeNotification()))


class PreferredReplicaElectionHandler(ZNodeChangeHandler):
    def __init__(self, event_manager: ControllerEventManager) -> None:
        super().__init__(PreferredReplicaElectionZNode.path(), on_creation=lambda: event_manager.put(
            ReplicaLeaderElection(None, ElectionType.PREFERRED, ElectionTrigger.ZK_TRIGGERED)))


class ControllerChangeHandler(ZNodeChangeHandler):
    def __init__(self, event_manager: ControllerEventManager) -> None:
        super().__init__(ControllerZNode.path(),
                         on_creation=lambda: event_manager.put(ControllerChange()),
                         on_deletion=lambda: event_manager.put(Reelect()),
                         on_data_change=lambda: event_manager.put(ControllerChange()))


# ---------------------------------------------------------------------------------------------
# The controller
# ---------------------------------------------------------------------------------------------

class KafkaController(KafkaMetricsGroup):
    def __init__(self, config: Any, zk_client: KafkaZkClient, time: Time = Time.SYSTEM,
                 initial_broker_info: BrokerInfo | None = None, initial_broker_epoch: int = UNKNOWN_BROKER_EPOCH,
                 thread_name_prefix: str | None = None, broker_features: BrokerFeatures | None = None,
                 feature_cache: FinalizedFeatureCache | None = None) -> None:
        self.config = config
        self.zk_client = zk_client
        # KIP-584: what this broker supports, and the cluster's finalized features as this
        # broker's FinalizedFeatureChangeListener last read them from /feature.
        # A controller made without its broker's cache (alone, as in its own tests) keeps one
        # itself: its writes to /feature wait for the cache to show them.
        self.broker_features = broker_features if broker_features is not None else BrokerFeatures.create_default()
        self._own_feature_change_listener: FinalizedFeatureChangeListener | None = None
        if feature_cache is None:
            feature_cache = FinalizedFeatureCache(self.broker_features)
            self._own_feature_change_listener = FinalizedFeatureChangeListener(feature_cache, zk_client)
        self.feature_cache = feature_cache
        self.time = time
        self.logger = IdentLogger(logger, f"[Controller id={config.broker_id}] ")
        self._broker_info = initial_broker_info
        self._broker_epoch = initial_broker_epoch
        # Brokers of a 2.7-IV2+ cluster report ISR changes with AlterIsr (server/alter_isr_manager.py);
        # older ones write the state znode themselves and announce it in /isr_change_notification.
        self._is_alter_isr_enabled = (config.inter_broker_protocol_version >= api_version("2.7-IV2")
                                      and ApiKeys.ALTER_ISR.implemented)
        self.state_change_logger = StateChangeLogger(config.broker_id, in_controller_context=True)
        self.controller_context = ControllerContext()
        self.controller_channel_manager = ControllerChannelManager(
            self.controller_context, config, time, self.state_change_logger, thread_name_prefix)
        # Its own scheduler, so it can start and stop with controllership independently of the broker's.
        self.kafka_scheduler = KafkaScheduler(1, thread_name_prefix="controller-scheduler-")
        # Removes expired delegation tokens while this broker is the controller (use_token_manager).
        self.token_manager: Any = None
        self._token_clean_scheduler = KafkaScheduler(1, thread_name_prefix="delegation-token-cleaner")
        self.event_manager = ControllerEventManager(config.broker_id, self, time,
                                                    self.controller_context.stats.rate_and_time_metrics)
        self.broker_request_batch = self._new_batch()
        self.replica_state_machine = ZkReplicaStateMachine(config, self.state_change_logger, self.controller_context,
                                                           zk_client, self._new_batch())
        self.partition_state_machine = ZkPartitionStateMachine(config, self.state_change_logger,
                                                               self.controller_context, zk_client, self._new_batch())
        self.topic_deletion_manager = TopicDeletionManager(config, self.controller_context, self.replica_state_machine,
                                                           self.partition_state_machine,
                                                           ControllerDeletionClient(self, zk_client))

        self._controller_change_handler = ControllerChangeHandler(self.event_manager)
        self._broker_change_handler = BrokerChangeHandler(self.event_manager)
        self._broker_modifications_handlers: dict[int, BrokerModificationsHandler] = {}
        self._topic_change_handler = TopicChangeHandler(self.event_manager)
        self._topic_deletion_handler = TopicDeletionHandler(self.event_manager)
        self._partition_modifications_handlers: dict[str, PartitionModificationsHandler] = {}
        self._partition_reassignment_handler = PartitionReassignmentHandler(self.event_manager)
        self._preferred_replica_election_handler = PreferredReplicaElectionHandler(self.event_manager)
        self._isr_change_notification_handler = IsrChangeNotificationHandler(self.event_manager)
        self._log_dir_event_notification_handler = LogDirEventNotificationHandler(self.event_manager)

        self._active_controller_id = -1
        # Metric values, refreshed after every event (Kafka exposes them as gauges).
        self.offline_partition_count = 0
        self.preferred_replica_imbalance_count = 0
        self.global_topic_count = 0
        self.global_partition_count = 0
        self.topics_to_delete_count = 0
        self.replicas_to_delete_count = 0
        self.ineligible_topics_to_delete_count = 0
        self.ineligible_replicas_to_delete_count = 0
        self._register_metrics()

        # (what a processing method returns is not used)
        self._dispatch: dict[type, Callable[[Any], object]] = {
            AutoPreferredReplicaLeaderElection: lambda e: self._process_auto_preferred_replica_leader_election(),
            ReplicaLeaderElection: lambda e: self._process_replica_leader_election(
                e.partitions_from_admin_client, e.election_type, e.election_trigger, e.callback),
            UncleanLeaderElectionEnable: lambda e: self._process_unclean_leader_election_enable(),
            TopicUncleanLeaderElectionEnable: lambda e: self._process_topic_unclean_leader_election_enable(e.topic),
            ControlledShutdown: lambda e: self._process_controlled_shutdown(
                e.id, e.broker_epoch, e.controlled_shutdown_callback),
            LeaderAndIsrResponseReceived: lambda e: self._process_leader_and_isr_response_received(
                e.leader_and_isr_response, e.broker_id),
            UpdateMetadataResponseReceived: lambda e: self._process_update_metadata_response_received(
                e.update_metadata_response, e.broker_id),
            TopicDeletionStopReplicaResponseReceived: lambda e: self._process_topic_deletion_stop_replica_response_received(
                e.replica_id, e.request_error, e.partition_errors),
            BrokerChange: lambda e: self._process_broker_change(),
            BrokerModifications: lambda e: self._process_broker_modification(e.broker_id),
            ControllerChange: lambda e: self._process_controller_change(),
            Reelect: lambda e: self._process_reelect(),
            RegisterBrokerAndReelect: lambda e: self._process_register_broker_and_reelect(),
            Expire: lambda e: self._process_expire(),
            TopicChange: lambda e: self._process_topic_change(),
            LogDirEventNotification: lambda e: self._process_log_dir_event_notification(),
            PartitionModifications: lambda e: self._process_partition_modifications(e.topic),
            TopicDeletion: lambda e: self._process_topic_deletion(),
            ApiPartitionReassignment: lambda e: self._process_api_partition_reassignment(e.reassignments, e.callback),
            ZkPartitionReassignment: lambda e: self._process_zk_partition_reassignment(),
            ListPartitionReassignments: lambda e: self._process_list_partition_reassignments(e.partitions, e.callback),
            PartitionReassignmentIsrChange: lambda e: self._process_partition_reassignment_isr_change(e.partition),
            IsrChangeNotification: lambda e: self._process_isr_change_notification(),
            UpdateFeatures: lambda e: self._process_feature_updates(e.request, e.callback),
            AlterIsrReceived: lambda e: self._process_alter_isr(e.broker_id, e.broker_epoch, e.isrs_to_alter,
                                                                e.callback),
            Startup: lambda e: self._process_startup(),
        }

    def _new_batch(self) -> ControllerBrokerRequestBatch:
        return ControllerBrokerRequestBatch(self.config, self.controller_channel_manager, self.event_manager,
                                            self.controller_context, self.state_change_logger)

    # -- public API -------------------------------------------------------------------------

    @property
    def is_active(self) -> bool:
        return self._active_controller_id == self.config.broker_id

    @property
    def active_controller_id(self) -> int:
        return self._active_controller_id

    @property
    def broker_epoch(self) -> int:
        return self._broker_epoch

    @property
    def epoch(self) -> int:
        return self.controller_context.epoch

    @property
    def state(self) -> ControllerState:
        return self.event_manager.state

    def startup(self) -> None:
        """Register for session expiry and start the event thread with a Startup event; this
        does not make the broker controller, it enters the election."""
        if self._own_feature_change_listener is not None and self.config.is_feature_versioning_supported:
            self._own_feature_change_listener.init_or_throw(self.config.zk_connection_timeout_ms)
        def before_initializing_session() -> None:
            queued = self.event_manager.clear_and_put(Expire())
            # Hold back the new session until the old one's state is gone, so nothing queued
            # under the old session runs under the new one. The wait gives up if the event
            # thread is gone (the controller was shut down).
            while not queued.await_processing(0.5):
                if not self.event_manager.thread.is_alive():
                    break

        self.zk_client.register_state_change_handler(StateChangeHandler(
            StateChangeHandlers.CONTROLLER_HANDLER,
            before_initializing_session=before_initializing_session,
            after_initializing_session=lambda: self.event_manager.put(RegisterBrokerAndReelect())))
        self.event_manager.put(Startup())
        self.event_manager.start()

    def shutdown(self) -> None:
        self.zk_client.unregister_state_change_handler(StateChangeHandlers.CONTROLLER_HANDLER)
        self.event_manager.close()
        self._on_controller_resignation()
        if self._own_feature_change_listener is not None and self._own_feature_change_listener.is_listener_initiated:
            self._own_feature_change_listener.close()
        for name in self._GAUGES:
            self.remove_metric(name)

    _GAUGES = ("ActiveControllerCount", "OfflinePartitionsCount", "PreferredReplicaImbalanceCount",
               "ControllerState", "GlobalTopicCount", "GlobalPartitionCount", "TopicsToDeleteCount",
               "ReplicasToDeleteCount", "TopicsIneligibleToDeleteCount", "ReplicasIneligibleToDeleteCount")

    def _register_metrics(self) -> None:
        """``kafka.controller:type=KafkaController`` gauges: whether this broker is the active
        controller, and the counts the event thread refreshes after every event (0 on a
        broker that is not the controller)."""
        self.new_gauge("ActiveControllerCount", lambda: 1 if self.is_active else 0)
        self.new_gauge("OfflinePartitionsCount", lambda: self.offline_partition_count)
        self.new_gauge("PreferredReplicaImbalanceCount", lambda: self.preferred_replica_imbalance_count)
        self.new_gauge("ControllerState", lambda: self.event_manager.state.value)
        self.new_gauge("GlobalTopicCount", lambda: self.global_topic_count)
        self.new_gauge("GlobalPartitionCount", lambda: self.global_partition_count)
        self.new_gauge("TopicsToDeleteCount", lambda: self.topics_to_delete_count)
        self.new_gauge("ReplicasToDeleteCount", lambda: self.replicas_to_delete_count)
        self.new_gauge("TopicsIneligibleToDeleteCount", lambda: self.ineligible_topics_to_delete_count)
        self.new_gauge("ReplicasIneligibleToDeleteCount", lambda: self.ineligible_replicas_to_delete_count)

    def controlled_shutdown(self, id: int, broker_epoch: int, callback: ControlledShutdownCallback) -> None:
        """Move leadership off broker ``id`` before it stops; ``callback`` gets the partitions it
        still leads, or the exception that failed the request."""
        self.event_manager.put(ControlledShutdown(id, broker_epoch, callback))

    def update_broker_info(self, new_broker_info: BrokerInfo) -> None:
        self._broker_info = new_broker_info
        self.zk_client.update_broker_info(new_broker_info)

    def enable_default_unclean_leader_election(self) -> None:
        self.event_manager.put(UncleanLeaderElectionEnable())

    def use_dynamic_config(self, current_config: Callable[[], Any]) -> None:
        """Read dynamic broker defaults (unclean.leader.election.enable) through
        ``current_config`` (DynamicBrokerConfig's current KafkaConfig) when electing leaders."""
        self.partition_state_machine.current_config = current_config

    def use_token_manager(self, token_manager: Any) -> None:
        """The DelegationTokenManager whose expired tokens the active controller removes, every
        ``delegation.token.expiry.check.interval.ms``, on a scheduler of its own (Kafka's
        tokenCleanScheduler), started on failover and stopped on resignation."""
        self.token_manager = token_manager

    def _start_token_expiry_check(self) -> None:
        if self.token_manager is None or not self.config.token_auth_enabled or self._token_clean_scheduler.is_started:
            return
        self.logger.info("starting the token expiry check scheduler")
        self._token_clean_scheduler.startup()
        self._token_clean_scheduler.schedule("delete-expired-tokens", self.token_manager.expire_tokens,
                                             period_ms=self.config.delegation_token_expiry_check_interval_ms)

    def enable_topic_unclean_leader_election(self, topic: str) -> None:
        if self.is_active:
            self.event_manager.put(TopicUncleanLeaderElectionEnable(topic))

    def elect_leaders(self, partitions: set[TopicPartition], election_type: ElectionType,
                      callback: ElectLeadersCallback) -> None:
        self.event_manager.put(ReplicaLeaderElection(set(partitions), election_type,
                                                     ElectionTrigger.ADMIN_CLIENT_TRIGGERED, callback))

    def list_partition_reassignments(self, partitions: set[TopicPartition] | None,
                                     callback: ListReassignmentsCallback) -> None:
        self.event_manager.put(ListPartitionReassignments(partitions, callback))

    def alter_partition_reassignments(self, partitions: Mapping[TopicPartition, Sequence[int] | None],
                                      callback: AlterReassignmentsCallback) -> None:
        self.event_manager.put(ApiPartitionReassignment(dict(partitions), callback))

    def alter_isrs(self, broker_id: int, broker_epoch: int, isrs_to_alter: Mapping[TopicPartition, LeaderAndIsr],
                   callback: AlterIsrCallback) -> None:
        """A leader's proposed ISR changes (AlterIsr); each LeaderAndIsr carries the leader
        epoch and the zkVersion the leader last saw."""
        self.event_manager.put(AlterIsrReceived(broker_id, broker_epoch, dict(isrs_to_alter), callback))

    # -- becoming and ceasing to be controller ------------------------------------------------

    def _on_controller_failover(self) -> None:
        ctx = self.controller_context
        self._maybe_setup_feature_versioning()
        self.logger.info("Registering handlers")
        # Watches first, reads second: a change between the two then still fires an event.
        for handler in (self._broker_change_handler, self._topic_change_handler, self._topic_deletion_handler,
                        self._log_dir_event_notification_handler, self._isr_change_notification_handler):
            self.zk_client.register_znode_child_change_handler(handler)
        for change_handler in (self._preferred_replica_election_handler, self._partition_reassignment_handler):
            self.zk_client.register_znode_change_handler_and_check_existence(change_handler)

        self.logger.info("Deleting log dir event notifications")
        self.zk_client.delete_log_dir_event_notifications(ctx.epoch_zk_version)
        self.logger.info("Deleting isr change notifications")
        self.zk_client.delete_isr_change_notifications(ctx.epoch_zk_version)
        self.logger.info("Initializing controller context")
        self._initialize_controller_context()
        self.logger.info("Fetching topic deletions in progress")
        topics_to_be_deleted, topics_ineligible_for_deletion = self._fetch_topic_deletions_in_progress()
        self.logger.info("Initializing topic deletion manager")
        self.topic_deletion_manager.init(topics_to_be_deleted, topics_ineligible_for_deletion)

        # Brokers need the live-broker list before they can act on the LeaderAndIsr requests
        # the state machines are about to send.
        self.logger.info("Sending update metadata request")
        self.send_update_metadata_request(sorted(ctx.live_or_shutting_down_broker_ids), set())

        self.replica_state_machine.startup()
        self.partition_state_machine.startup()
        self.logger.info("Ready to serve as the new controller with epoch %d", self.epoch)

        self._initialize_partition_reassignments()
        self.topic_deletion_manager.try_topic_deletion()
        pending = self._fetch_pending_preferred_replica_elections()
        self._on_replica_election(pending, ElectionType.PREFERRED, ElectionTrigger.ZK_TRIGGERED)
        self.logger.info("Starting the controller scheduler")
        self.kafka_scheduler.startup()
        if self.config.auto_leader_rebalance_enable:
            self._schedule_auto_leader_rebalance_task(delay_ms=5000)
        self._start_token_expiry_check()

    # -- feature versioning (KIP-584) ----------------------------------------------------------

    def _create_feature_znode(self, new_node: FeatureZNode) -> int:
        self.logger.info("Creating FeatureZNode at path: %s with contents: %s", FeatureZNode.path(), new_node)
        self.zk_client.create_feature_znode(new_node)
        _, version = self.zk_client.get_data_and_version(FeatureZNode.path())
        return version

    def _update_feature_znode(self, updated_node: FeatureZNode) -> int:
        self.logger.info("Updating FeatureZNode at path: %s with contents: %s", FeatureZNode.path(), updated_node)
        return self.zk_client.update_feature_znode(updated_node)

    def _enable_feature_versioning(self) -> None:
        """IBP >= 2.7: /feature is made enabled. A new cluster (no znode) starts with every
        supported feature finalized; a cluster upgraded from an older IBP (a disabled znode)
        starts with none, for the operator to finalize; an enabled znode is left as it is.
        Each write is waited for in this broker's cache, so the controller then validates
        updates against what it wrote."""
        data, version = self.zk_client.get_data_and_version(FeatureZNode.path())
        if version == ZkVersion.UNKNOWN_VERSION:
            new_version = self._create_feature_znode(
                FeatureZNode(FeatureZNodeStatus.ENABLED, self.broker_features.default_finalized_features()))
            self.feature_cache.wait_until_epoch_or_throw(new_version, self.config.zk_connection_timeout_ms)
            return
        existing = FeatureZNode.decode(data)
        if existing.status is FeatureZNodeStatus.ENABLED:
            features = existing.features
        else:
            if existing.features:
                self.logger.warning("FeatureZNode at path: %s with disabled status contains non-empty features: %s",
                                    FeatureZNode.path(), dict(existing.features))
            features = {}
        new_node = FeatureZNode(FeatureZNodeStatus.ENABLED, features)
        if new_node != existing:
            new_version = self._update_feature_znode(new_node)
            self.feature_cache.wait_until_epoch_or_throw(new_version, self.config.zk_connection_timeout_ms)

    def _disable_feature_versioning(self) -> None:
        """IBP < 2.7: /feature is made disabled with no features. No wait: brokers of such an
        IBP do not watch the znode."""
        new_node = FeatureZNode(FeatureZNodeStatus.DISABLED, {})
        data, version = self.zk_client.get_data_and_version(FeatureZNode.path())
        if version == ZkVersion.UNKNOWN_VERSION:
            self._create_feature_znode(new_node)
            return
        existing = FeatureZNode.decode(data)
        if existing.status is FeatureZNodeStatus.DISABLED and existing.features:
            self.logger.warning("FeatureZNode at path: %s with disabled status contains non-empty features: %s",
                                FeatureZNode.path(), dict(existing.features))
        if new_node != existing:
            self._update_feature_znode(new_node)

    def _maybe_setup_feature_versioning(self) -> None:
        if self.config.is_feature_versioning_supported:
            self._enable_feature_versioning()
        else:
            self._disable_feature_versioning()

    def _partition_on_feature_compatibility(self, brokers_and_epochs: Mapping[Broker, int]
                                            ) -> tuple[dict[Broker, int], dict[Broker, int]]:
        """Brokers that can run the finalized features, and those that cannot (never any while
        versioning is disabled or nothing is finalized)."""
        finalized = self.feature_cache.get()
        compatible: dict[Broker, int] = {}
        incompatible: dict[Broker, int] = {}
        for broker, epoch in brokers_and_epochs.items():
            if (not self.config.is_feature_versioning_supported or finalized is None
                    or not has_incompatible_features(broker.features, finalized.features)):
                compatible[broker] = epoch
            else:
                incompatible[broker] = epoch
        return compatible, incompatible

    def update_features(self, request: Any, callback: UpdateFeaturesCallback) -> None:
        """UpdateFeatures (KIP-584); ``callback`` gets an ApiError for the whole request or a map
        of feature name to ApiError."""
        self.event_manager.put(UpdateFeatures(request, callback))

    def _new_finalized_version_range_or_incompatibility_error(
            self, feature: str, max_version_level: int) -> FinalizedVersionRange | ApiError:
        supported = self.broker_features.supported_features.get(feature)
        if supported is None:
            return ApiError(Errors.INVALID_REQUEST, "Could not apply finalized feature update because the "
                                                    "provided feature is not supported.")
        if max_version_level < supported.min_version:
            return ApiError(Errors.INVALID_REQUEST, "Could not apply finalized feature update because the "
                                                    f"provided maxVersionLevel:{max_version_level} is lower than "
                                                    f"the supported minVersion:{supported.min_version}.")
        new_range = FinalizedVersionRange(supported.min_version, max_version_level)
        incompatible = [b for b in self.controller_context.live_or_shutting_down_brokers
                        if has_incompatible_features(b.features, {feature: new_range})]
        if incompatible:
            return ApiError(Errors.INVALID_REQUEST, "Could not apply finalized feature update because brokers "
                                                    "were found to have incompatible versions for the feature.")
        return new_range

    def _validate_feature_update(self, update: Any, existing: FinalizedVersionRange | None
                                 ) -> FinalizedVersionRange | None | ApiError:
        """The feature's new finalized range, None to delete it, or why the update is refused."""
        feature = update.feature
        level = int(update.max_version_level)
        if not feature:
            return ApiError(Errors.INVALID_REQUEST, "Feature name can not be empty.")
        if update.allow_downgrade and level < 1:  # UpdateFeaturesRequest.isDeleteRequest
            if existing is None:
                return ApiError(Errors.INVALID_REQUEST, "Can not delete non-existing finalized feature.")
            return None
        if level < 1:
            return ApiError(Errors.INVALID_REQUEST, f"Can not provide maxVersionLevel: {level} less than 1 without "
                                                    "setting the allowDowngrade flag to true in the request.")
        if existing is not None:
            if level == existing.max_version_level:
                verb = "downgrade" if update.allow_downgrade else "upgrade"
                return ApiError(Errors.INVALID_REQUEST,
                                f"Can not {verb} a finalized feature from existing "
                                f"maxVersionLevel:{existing.max_version_level} to the same value.")
            if level < existing.max_version_level and not update.allow_downgrade:
                return ApiError(Errors.INVALID_REQUEST,
                                "Can not downgrade finalized feature from existing maxVersionLevel:"
                                f"{existing.max_version_level} to provided maxVersionLevel:{level} without "
                                "setting the allowDowngrade flag in the request.")
            if update.allow_downgrade and level > existing.max_version_level:
                return ApiError(Errors.INVALID_REQUEST,
                                f"When the allowDowngrade flag set in the request, the provided maxVersionLevel:{level}"
                                f" can not be greater than existing maxVersionLevel:{existing.max_version_level}.")
            if level < existing.min_version_level:
                return ApiError(Errors.INVALID_REQUEST,
                                f"Can not downgrade finalized feature to maxVersionLevel:{level} because it's lower "
                                f"than the existing minVersionLevel:{existing.min_version_level}.")
        return self._new_finalized_version_range_or_incompatibility_error(feature, level)

    def _process_feature_updates(self, request: Any, callback: UpdateFeaturesCallback) -> None:
        if not self.is_active:
            callback(ApiError(Errors.NOT_CONTROLLER))
            return
        cached = self.feature_cache.get()
        existing_features = dict(cached.features) if cached is not None else {}
        target_features = dict(existing_features)
        errors: dict[str, ApiError] = {}
        # Each update is judged alone against the features as they were: valid ones change
        # the target, invalid ones leave it and carry their error.
        for update in request.feature_updates:
            outcome = self._validate_feature_update(update, existing_features.get(update.feature))
            if isinstance(outcome, ApiError):
                errors[update.feature] = outcome
                continue
            if outcome is None:
                target_features.pop(update.feature, None)
            else:
                target_features[update.feature] = outcome
            errors[update.feature] = ApiError(Errors.NONE)
        try:
            if existing_features != target_features:
                new_version = self._update_feature_znode(FeatureZNode(FeatureZNodeStatus.ENABLED, target_features))
                self.feature_cache.wait_until_epoch_or_throw(new_version, int(request.timeout.total_seconds() * 1000))
        except Exception as e:  # noqa: BLE001 - the valid updates failed as a whole; say so per feature
            self.logger.warning("Processing of feature updates: %s failed due to error: %s", request, e)
            for feature, api_error in errors.items():
                if api_error.error is Errors.NONE:
                    errors[feature] = ApiError(Errors.FEATURE_UPDATE_FAILED)
        finally:
            callback(errors)

    def _schedule_auto_leader_rebalance_task(self, delay_ms: int) -> None:
        self.kafka_scheduler.schedule_once("auto-leader-rebalance-task",
                                           lambda: self.event_manager.put(AutoPreferredReplicaLeaderElection()),
                                           delay_ms=delay_ms)

    def _on_controller_resignation(self) -> None:
        self.logger.debug("Resigning")
        zk = self.zk_client
        zk.unregister_znode_child_change_handler(self._isr_change_notification_handler.path)
        zk.unregister_znode_change_handler(self._partition_reassignment_handler.path)
        zk.unregister_znode_change_handler(self._preferred_replica_election_handler.path)
        zk.unregister_znode_child_change_handler(self._log_dir_event_notification_handler.path)
        self._unregister_broker_modifications_handler(list(self._broker_modifications_handlers))

        self.kafka_scheduler.shutdown()
        if self._token_clean_scheduler.is_started:
            self._token_clean_scheduler.shutdown()
        self.offline_partition_count = 0
        self.preferred_replica_imbalance_count = 0
        self.global_topic_count = 0
        self.global_partition_count = 0
        self.topics_to_delete_count = 0
        self.replicas_to_delete_count = 0
        self.ineligible_topics_to_delete_count = 0
        self.ineligible_replicas_to_delete_count = 0

        self._unregister_partition_reassignment_isr_change_handlers()
        self.partition_state_machine.shutdown()
        zk.unregister_znode_child_change_handler(self._topic_change_handler.path)
        self.unregister_partition_modifications_handlers(list(self._partition_modifications_handlers))
        zk.unregister_znode_child_change_handler(self._topic_deletion_handler.path)
        self.replica_state_machine.shutdown()
        zk.unregister_znode_child_change_handler(self._broker_change_handler.path)

        self.controller_channel_manager.shutdown()
        self.controller_context.reset_context()
        self.logger.info("Resigned")

    def _initialize_controller_context(self) -> None:
        ctx = self.controller_context
        ctx.set_live_brokers(self.zk_client.get_all_broker_and_epochs_in_cluster())
        self.logger.info("Initialized broker epochs cache: %s", ctx.live_broker_id_and_epochs)
        ctx.set_all_topics(self.zk_client.get_all_topics_in_cluster(register_watch=True))
        self._register_partition_modifications_handlers(sorted(ctx.all_topics))
        assignments = self.zk_client.get_replica_assignment_and_topic_id_for_topics(sorted(ctx.all_topics))
        self._process_topic_ids(assignments)
        for tira in sorted(assignments, key=lambda a: a.topic):
            for tp, assignment in sorted(tira.assignment.items()):
                ctx.update_partition_full_replica_assignment(tp, assignment)
                if assignment.is_being_reassigned():
                    ctx.partitions_being_reassigned.add(tp)
        ctx.clear_partition_leadership_info()
        ctx.shutting_down_broker_ids.clear()
        self._register_broker_modifications_handler(sorted(ctx.live_or_shutting_down_broker_ids))
        self._update_leader_and_isr_cache()
        self.controller_channel_manager.startup()
        self.logger.info("Currently active brokers in the cluster: %s", sorted(ctx.live_broker_ids))
        self.logger.info("Currently shutting brokers in the cluster: %s",
                         sorted(ctx.shutting_down_broker_ids))
        self.logger.info("Current list of topics in the cluster: %s", sorted(ctx.all_topics))

    def _fetch_pending_preferred_replica_elections(self) -> set[TopicPartition]:
        ctx = self.controller_context
        undergoing = self.zk_client.get_preferred_replica_election()
        completed = set()
        for partition in undergoing:
            replicas = ctx.partition_replica_assignment(partition)
            leadership = ctx.partition_leadership_info(partition)
            if not replicas or (leadership is not None and leadership.leader_and_isr.leader == replicas[0]):
                completed.add(partition)
        pending_ignoring_deletion = undergoing - completed
        skipped = {p for p in pending_ignoring_deletion if self.topic_deletion_manager.is_topic_queued_up_for_deletion(p.topic)}
        pending = pending_ignoring_deletion - skipped
        self.logger.info("Partitions undergoing preferred replica election: %s", _tps(undergoing))
        self.logger.info("Partitions that completed preferred replica election: %s", _tps(completed))
        self.logger.info("Skipping preferred replica election for partitions due to topic deletion: %s",
                         _tps(skipped))
        self.logger.info("Resuming preferred replica election for partitions: %s", _tps(pending))
        return pending

    def _initialize_partition_reassignments(self) -> None:
        # Reassignments written to ZooKeeper during the failover supplant API-started ones.
        zk_partitions_resumed = self._process_zk_partition_reassignment()
        self._maybe_resume_reassignments(lambda tp, _: tp not in zk_partitions_resumed)

    def _fetch_topic_deletions_in_progress(self) -> tuple[set[str], set[str]]:
        ctx = self.controller_context
        topics_to_be_deleted = set(self.zk_client.get_topic_deletions())
        topics_with_offline_replicas = {
            topic for topic in ctx.all_topics
            if any(not ctx.is_replica_online(r.replica, r.topic_partition) for r in ctx.replicas_for_topic(topic))}
        topics_being_reassigned = {tp.topic for tp in ctx.partitions_being_reassigned}
        ineligible = topics_with_offline_replicas | topics_being_reassigned
        self.logger.info("List of topics to be deleted: %s", ",".join(sorted(topics_to_be_deleted)))
        self.logger.info("List of topics ineligible for deletion: %s", ",".join(sorted(ineligible)))
        return topics_to_be_deleted, ineligible

    def _update_leader_and_isr_cache(self, partitions: Sequence[TopicPartition] | None = None) -> None:
        if partitions is None:
            partitions = self.controller_context.all_partitions()
        for partition, leadership in self.zk_client.get_topic_partition_states(list(partitions)).items():
            self.controller_context.put_partition_leadership_info(partition, leadership)

    # -- broker membership --------------------------------------------------------------------

    def _on_broker_log_dir_failure(self, broker_ids: Sequence[int]) -> None:
        # LeaderAndIsr to every replica on those brokers: the ones on a failed log dir answer
        # KAFKA_STORAGE_ERROR, which marks them offline.
        self.logger.info("Handling log directory failure for brokers %s", ",".join(map(str, broker_ids)))
        replicas = self.controller_context.replicas_on_brokers(broker_ids)
        self.replica_state_machine.handle_state_changes(replicas, OnlineReplica)

    def _on_broker_startup(self, new_brokers: Sequence[int]) -> None:
        ctx = self.controller_context
        self.logger.info("New broker startup callback for %s", ",".join(map(str, new_brokers)))
        for broker_id in new_brokers:
            ctx.replicas_on_offline_dirs.pop(broker_id, None)
        new_brokers_set = set(new_brokers)
        existing_brokers = ctx.live_or_shutting_down_broker_ids - new_brokers_set
        # Existing brokers only learn about the new ones; the new ones get every partition state.
        self.send_update_metadata_request(sorted(existing_brokers), set())
        self.send_update_metadata_request(list(new_brokers), ctx.partitions_with_leaders())
        replicas_on_new_brokers = ctx.replicas_on_brokers(new_brokers_set)
        self.replica_state_machine.handle_state_changes(replicas_on_new_brokers, OnlineReplica)
        self.partition_state_machine.trigger_online_partition_state_change()
        self._maybe_resume_reassignments(
            lambda _, assignment: any(r in new_brokers_set for r in assignment.target_replicas))
        for_deletion = [r for r in replicas_on_new_brokers
                        if self.topic_deletion_manager.is_topic_queued_up_for_deletion(r.topic)]
        if for_deletion:
            self.logger.info("Some replicas %s for topics scheduled for deletion %s are on the newly restarted brokers "
                             "%s. Signaling restart of topic deletion for these topics",
                             ",".join(map(str, for_deletion)), ",".join(sorted(ctx.topics_to_be_deleted)),
                             ",".join(map(str, new_brokers)))
            self.topic_deletion_manager.resume_deletion_for_topics({r.topic for r in for_deletion})
        self._register_broker_modifications_handler(new_brokers)

    def _maybe_resume_reassignments(self, should_resume: Callable[[TopicPartition, ReplicaAssignment], bool]) -> None:
        for tp in sorted(self.controller_context.partitions_being_reassigned):
            assignment = self.controller_context.partition_full_replica_assignment(tp)
            if should_resume(tp, assignment):
                self._on_partition_reassignment(tp, assignment)

    def _register_broker_modifications_handler(self, broker_ids: Iterable[int]) -> None:
        broker_ids = list(broker_ids)
        self.logger.debug("Register BrokerModifications handler for %s", broker_ids)
        for broker_id in broker_ids:
            handler = BrokerModificationsHandler(self.event_manager, broker_id)
            self.zk_client.register_znode_change_handler_and_check_existence(handler)
            self._broker_modifications_handlers[broker_id] = handler

    def _unregister_broker_modifications_handler(self, broker_ids: Iterable[int]) -> None:
        broker_ids = list(broker_ids)
        self.logger.debug("Unregister BrokerModifications handler for %s", broker_ids)
        for broker_id in broker_ids:
            handler = self._broker_modifications_handlers.pop(broker_id, None)
            if handler is not None:
                self.zk_client.unregister_znode_change_handler(handler.path)

    def _on_broker_failure(self, dead_brokers: Sequence[int]) -> None:
        ctx = self.controller_context
        self.logger.info("Broker failure callback for %s", ",".join(map(str, dead_brokers)))
        for broker_id in dead_brokers:
            ctx.replicas_on_offline_dirs.pop(broker_id, None)
        were_shutting_down = [b for b in dead_brokers if b in ctx.shutting_down_broker_ids]
        ctx.shutting_down_broker_ids.difference_update(were_shutting_down)
        if were_shutting_down:
            self.logger.info("Removed %s from list of shutting down brokers.",
                             ",".join(map(str, were_shutting_down)))
        self._on_replicas_become_offline(ctx.replicas_on_brokers(dead_brokers))
        self._unregister_broker_modifications_handler(dead_brokers)

    def _on_broker_update(self, updated_broker_id: int) -> None:
        self.logger.info("Broker info update callback for %d", updated_broker_id)
        self.send_update_metadata_request(sorted(self.controller_context.live_or_shutting_down_broker_ids), set())

    def _on_replicas_become_offline(self, new_offline_replicas: Iterable[PartitionAndReplica]) -> None:
        ctx = self.controller_context
        new_offline_replicas = list(new_offline_replicas)
        for_deletion = [r for r in new_offline_replicas if self.topic_deletion_manager.is_topic_queued_up_for_deletion(r.topic)]
        not_for_deletion = [r for r in new_offline_replicas
                            if not self.topic_deletion_manager.is_topic_queued_up_for_deletion(r.topic)]
        partitions_with_offline_leader = sorted(ctx.partitions_with_offline_leader())
        self.partition_state_machine.handle_state_changes(partitions_with_offline_leader, OfflinePartition)
        self.partition_state_machine.trigger_online_partition_state_change()
        self.replica_state_machine.handle_state_changes(not_for_deletion, OfflineReplica)
        if for_deletion:
            # Otherwise those replicas would stay ReplicaDeletionStarted for ever and the topic
            # deletion could never be retried.
            self.topic_deletion_manager.fail_replica_deletion(for_deletion)
        # Leader elections above already told every broker; otherwise tell them who is offline.
        if not partitions_with_offline_leader:
            self.send_update_metadata_request(sorted(ctx.live_or_shutting_down_broker_ids), set())

    def _on_new_partition_creation(self, new_partitions: Iterable[TopicPartition]) -> None:
        new_partitions = sorted(new_partitions)
        self.logger.info("New partition creation callback for %s", _tps(new_partitions))
        ctx = self.controller_context
        self.partition_state_machine.handle_state_changes(new_partitions, NewPartition)
        self.replica_state_machine.handle_state_changes(ctx.replicas_for_partition(new_partitions), NewReplica)
        self.partition_state_machine.handle_state_changes(new_partitions, OnlinePartition,
                                                          OfflinePartitionLeaderElectionStrategy(False))
        self.replica_state_machine.handle_state_changes(ctx.replicas_for_partition(new_partitions), OnlineReplica)

    # -- reassignment -------------------------------------------------------------------------

    def _on_partition_reassignment(self, topic_partition: TopicPartition, reassignment: ReplicaAssignment) -> None:
        """Move a partition to ``reassignment.target_replicas``: first add the target replicas
        and let them catch up (phase A, re-run on every ISR change), then, once the whole
        target set is in the ISR, elect a leader among them, drop the removed replicas and
        write the final assignment (phase B). ZooKeeper is updated before memory so that a new
        controller can resume from it."""
        self.topic_deletion_manager.mark_topic_ineligible_for_deletion({topic_partition.topic},
                                                                       reason="topic reassignment in progress")
        self._update_current_reassignment(topic_partition, reassignment)
        crash_point("controller.reassignment.after_adding_replicas")
        adding = reassignment.adding_replicas
        removing = reassignment.removing_replicas
        if not self._is_reassignment_complete(topic_partition, reassignment):
            self._update_leader_epoch_and_send_request(topic_partition, reassignment)
            self._start_new_replicas_for_reassigned_partition(topic_partition, adding)
        else:
            self.replica_state_machine.handle_state_changes([PartitionAndReplica(topic_partition, r) for r in adding],
                                                            OnlineReplica)
            completed = ReplicaAssignment(reassignment.target_replicas)
            self.controller_context.update_partition_full_replica_assignment(topic_partition, completed)
            self._move_reassigned_partition_leader_if_required(topic_partition, completed)
            crash_point("controller.reassignment.after_leader_moved")
            self._stop_removed_replicas_of_reassigned_partition(topic_partition, removing)
            self._update_replica_assignment_for_partition(topic_partition, completed)
            self._remove_partition_from_reassigning_partitions(topic_partition, completed)
            self.send_update_metadata_request(sorted(self.controller_context.live_or_shutting_down_broker_ids),
                                              {topic_partition})
            self.topic_deletion_manager.resume_deletion_for_topics({topic_partition.topic})

    def _update_current_reassignment(self, topic_partition: TopicPartition, reassignment: ReplicaAssignment) -> None:
        ctx = self.controller_context
        current = ctx.partition_full_replica_assignment(topic_partition)
        if current != reassignment:
            self.logger.debug("Updating assignment of partition %s from %s to %s", topic_partition,
                              current, reassignment)
            self._update_replica_assignment_for_partition(topic_partition, reassignment)
            ctx.update_partition_full_replica_assignment(topic_partition, reassignment)
            # Replacing a reassignment in flight may leave replicas it was adding unneeded.
            unneeded = [r for r in current.replicas if r not in reassignment.replicas]
            if unneeded:
                self._stop_removed_replicas_of_reassigned_partition(topic_partition, unneeded)
        if not self._is_alter_isr_enabled:
            self.zk_client.register_znode_change_handler(
                PartitionReassignmentIsrChangeHandler(self.event_manager, topic_partition))
        ctx.partitions_being_reassigned.add(topic_partition)

    def _maybe_trigger_partition_reassignment(
            self, reassignments: Mapping[TopicPartition, ReplicaAssignment]) -> dict[TopicPartition, ApiError]:
        results: dict[TopicPartition, ApiError] = {}
        for tp, reassignment in reassignments.items():
            if self.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic):
                self.logger.info("Skipping reassignment of %s since the topic is currently being deleted",
                                 tp)
                results[tp] = ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
            elif self.controller_context.partition_replica_assignment(tp):
                try:
                    self._on_partition_reassignment(tp, reassignment)
                    results[tp] = ApiError.NONE  # type: ignore[attr-defined]
                except ControllerMovedException:
                    self.logger.info("Failed completing reassignment of partition %s because controller has moved to "
                                     "another broker", tp)
                    raise
                except Exception:  # noqa: BLE001
                    self.logger.exception("Error completing reassignment of partition %s", tp)
                    results[tp] = ApiError(Errors.UNKNOWN_SERVER_ERROR)
            else:
                results[tp] = ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
        return results

    def _on_replica_election(self, partitions: set[TopicPartition], election_type: ElectionType,
                             election_trigger: ElectionTrigger) -> dict[TopicPartition, Exception | LeaderAndIsr]:
        self.logger.info("Starting replica leader election (%s) for partitions %s triggered by %s",
                         election_type.name, _tps(partitions), election_trigger)
        try:
            strategy: PartitionLeaderElectionStrategy
            if election_type is ElectionType.PREFERRED:
                strategy = PreferredReplicaPartitionLeaderElectionStrategy()
            else:
                # Unclean only when an admin asked for it explicitly.
                strategy = OfflinePartitionLeaderElectionStrategy(
                    allow_unclean=election_trigger is ElectionTrigger.ADMIN_CLIENT_TRIGGERED)
            results = self.partition_state_machine.handle_state_changes(sorted(partitions), OnlinePartition, strategy)
            if election_trigger is not ElectionTrigger.ADMIN_CLIENT_TRIGGERED:
                for tp, result in results.items():
                    if isinstance(result, ControllerMovedException):
                        self.logger.info("Error completing replica leader election (%s) for partition %s because "
                                         "controller has moved to another broker.", election_type.name, tp)
                        raise result
                    if isinstance(result, Exception):
                        self.logger.error("Error completing replica leader election (%s) for partition %s: %s",
                                          election_type.name, tp, result)
            return results
        finally:
            if election_trigger is not ElectionTrigger.ADMIN_CLIENT_TRIGGERED:
                self._remove_partitions_from_preferred_replica_election(
                    partitions, election_trigger is ElectionTrigger.AUTO_TRIGGERED)

    def _is_reassignment_complete(self, partition: TopicPartition, assignment: ReplicaAssignment) -> bool:
        if not assignment.is_being_reassigned():
            return True
        leadership = self.zk_client.get_topic_partition_states([partition]).get(partition)
        return leadership is not None and set(assignment.target_replicas) <= set(leadership.leader_and_isr.isr)

    def _move_reassigned_partition_leader_if_required(self, topic_partition: TopicPartition,
                                                      new_assignment: ReplicaAssignment) -> None:
        ctx = self.controller_context
        reassigned = new_assignment.replicas
        leadership = ctx.partition_leadership_info(topic_partition)
        current_leader = leadership.leader_and_isr.leader if leadership is not None else LeaderAndIsr.NO_LEADER
        if current_leader not in reassigned:
            self.logger.info("Leader %d for partition %s being reassigned, is not in the new list of replicas %s. "
                             "Re-electing leader", current_leader, topic_partition, list(reassigned))
            self.partition_state_machine.handle_state_changes([topic_partition], OnlinePartition,
                                                              ReassignPartitionLeaderElectionStrategy())
        elif ctx.is_replica_online(current_leader, topic_partition):
            self.logger.info("Leader %d for partition %s being reassigned, is already in the new list of replicas %s "
                             "and is alive", current_leader, topic_partition, list(reassigned))
            self._update_leader_epoch_and_send_request(topic_partition, new_assignment)
        else:
            self.logger.info("Leader %d for partition %s being reassigned, is already in the new list of replicas %s "
                             "but is dead", current_leader, topic_partition, list(reassigned))
            self.partition_state_machine.handle_state_changes([topic_partition], OnlinePartition,
                                                              ReassignPartitionLeaderElectionStrategy())

    def _stop_removed_replicas_of_reassigned_partition(self, topic_partition: TopicPartition,
                                                       removed_replicas: Sequence[int]) -> None:
        replicas = [PartitionAndReplica(topic_partition, r) for r in removed_replicas]
        self.replica_state_machine.handle_state_changes(replicas, OfflineReplica)
        self.replica_state_machine.handle_state_changes(replicas, ReplicaDeletionStarted)
        self.replica_state_machine.handle_state_changes(replicas, ReplicaDeletionSuccessful)
        self.replica_state_machine.handle_state_changes(replicas, NonExistentReplica)

    def _update_replica_assignment_for_partition(self, topic_partition: TopicPartition,
                                                 assignment: ReplicaAssignment) -> None:
        ctx = self.controller_context
        topic_assignment = ctx.partition_full_replica_assignment_for_topic(topic_partition.topic)
        topic_assignment[topic_partition] = assignment
        response = self.zk_client.set_topic_assignment_raw(topic_partition.topic,
                                                           ctx.topic_ids.get(topic_partition.topic),
                                                           topic_assignment, ctx.epoch_zk_version)
        if response.result_code == Code.OK:
            self.logger.info("Successfully updated assignment of partition %s to %s", topic_partition,
                             assignment)
        elif response.result_code == Code.NONODE:
            raise IllegalStateException(f"Failed to update assignment for {topic_partition} since the topic has no "
                                        "current assignment")
        else:
            raise KafkaException(str(response.result_exception))

    def _start_new_replicas_for_reassigned_partition(self, topic_partition: TopicPartition,
                                                     new_replicas: Sequence[int]) -> None:
        for replica in new_replicas:
            self.replica_state_machine.handle_state_changes([PartitionAndReplica(topic_partition, replica)], NewReplica)

    def _update_leader_epoch_and_send_request(self, topic_partition: TopicPartition,
                                              assignment: ReplicaAssignment) -> None:
        state_change_log = self.state_change_logger.with_controller_epoch(self.controller_context.epoch)
        updated = self._update_leader_epoch(topic_partition)
        if updated is None:
            state_change_log.error(f"Failed to send LeaderAndIsr request with new replica assignment {assignment} to "
                                   f"leader for partition being reassigned {topic_partition}")
            return
        try:
            self.broker_request_batch.new_batch()
            # Original replicas keep is_new=False so a replica on an offline log dir is not
            # silently recreated elsewhere; the added ones may be created anywhere.
            self.broker_request_batch.add_leader_and_isr_request_for_brokers(
                assignment.origin_replicas, topic_partition, updated, assignment, is_new=False)
            self.broker_request_batch.add_leader_and_isr_request_for_brokers(
                assignment.adding_replicas, topic_partition, updated, assignment, is_new=True)
            self.broker_request_batch.send_requests_to_brokers(self.controller_context.epoch)
        except IllegalStateException as e:
            self._handle_illegal_state(e)
        state_change_log.info(f"Sent LeaderAndIsr request {updated} with new replica assignment {assignment} to "
                              f"leader {updated.leader_and_isr.leader} for partition being reassigned {topic_partition}")

    def _register_partition_modifications_handlers(self, topics: Sequence[str]) -> None:
        for topic in topics:
            self._partition_modifications_handlers[topic] = PartitionModificationsHandler(self.event_manager, topic)
        for handler in self._partition_modifications_handlers.values():
            self.zk_client.register_znode_change_handler(handler)

    def unregister_partition_modifications_handlers(self, topics: Sequence[str]) -> None:
        for topic in topics:
            handler = self._partition_modifications_handlers.pop(topic, None)
            if handler is not None:
                self.zk_client.unregister_znode_change_handler(handler.path)

    def _unregister_partition_reassignment_isr_change_handlers(self) -> None:
        if not self._is_alter_isr_enabled:
            for tp in self.controller_context.partitions_being_reassigned:
                self.zk_client.unregister_znode_change_handler(TopicPartitionStateZNode.path(tp))

    def _remove_partition_from_reassigning_partitions(self, topic_partition: TopicPartition,
                                                      assignment: ReplicaAssignment) -> None:
        ctx = self.controller_context
        if topic_partition not in ctx.partitions_being_reassigned:
            raise IllegalStateException("Cannot remove a reassigning partition because it is not present in memory")
        if not self._is_alter_isr_enabled:
            self.zk_client.unregister_znode_change_handler(TopicPartitionStateZNode.path(topic_partition))
        self._maybe_remove_from_zk_reassignment(
            lambda tp, replicas: tp == topic_partition and tuple(replicas) == tuple(assignment.replicas))
        ctx.partitions_being_reassigned.discard(topic_partition)

    def _maybe_remove_from_zk_reassignment(self, should_remove: Callable[[TopicPartition, Sequence[int]], bool]) -> None:
        if not self.zk_client.reassign_partitions_in_progress():
            return
        reassigning = self.zk_client.get_partition_reassignment()
        removing = {tp: r for tp, r in reassigning.items() if should_remove(tp, r)}
        remaining = {tp: r for tp, r in reassigning.items() if not should_remove(tp, r)}
        self.logger.info("Removing partitions %s from the list of reassigned partitions in zookeeper",
                         _tps(removing))
        if not remaining:
            self.logger.info("No more partitions need to be reassigned. Deleting zk path %s",
                             ReassignPartitionsZNode.path())
            self.zk_client.delete_partition_reassignment(self.controller_context.epoch_zk_version)
            # The handler fires on creation only; this re-arms it for the next reassignment.
            self.event_manager.put(ZkPartitionReassignment())
        else:
            self.zk_client.set_or_create_partition_reassignment(remaining, self.controller_context.epoch_zk_version)

    def _remove_partitions_from_preferred_replica_election(self, partitions: Iterable[TopicPartition],
                                                           is_triggered_by_auto_rebalance: bool) -> None:
        ctx = self.controller_context
        for partition in partitions:
            leadership = ctx.partition_leadership_info(partition)
            replicas = ctx.partition_replica_assignment(partition)
            if leadership is None or not replicas:
                continue
            current_leader = leadership.leader_and_isr.leader
            if current_leader == replicas[0]:
                self.logger.info("Partition %s completed preferred replica leader election. New leader is %d",
                                 partition, replicas[0])
            else:
                self.logger.warning("Partition %s failed to complete preferred replica leader election to %d. Leader is "
                                    "still %d", partition, replicas[0], current_leader)
        if not is_triggered_by_auto_rebalance:
            self.zk_client.delete_preferred_replica_election(ctx.epoch_zk_version)
            # The handler fires on creation only; this re-arms it for the next election.
            self.event_manager.put(ReplicaLeaderElection(None, ElectionType.PREFERRED, ElectionTrigger.ZK_TRIGGERED))

    def send_update_metadata_request(self, brokers: Sequence[int], partitions: Iterable[TopicPartition]) -> None:
        try:
            self.broker_request_batch.new_batch()
            self.broker_request_batch.add_update_metadata_request_for_brokers(brokers, partitions)
            self.broker_request_batch.send_requests_to_brokers(self.epoch)
        except IllegalStateException as e:
            self._handle_illegal_state(e)

    def _update_leader_epoch(self, partition: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        """Bump the leader epoch without changing leader or ISR, so the leader accepts a new
        LeaderAndIsr carrying a changed replica list."""
        self.logger.debug("Updating leader epoch for partition %s", partition)
        while True:
            leadership = self.zk_client.get_topic_partition_states([partition]).get(partition)
            if leadership is None:
                raise IllegalStateException(
                    f"Cannot update leader epoch for partition {partition} as leaderAndIsr path is empty. This could "
                    "mean we somehow tried to reassign a partition that doesn't exist")
            if leadership.controller_epoch > self.epoch:
                raise StateChangeFailedException(
                    "Leader and isr path written by another controller. This probably means the current controller "
                    f"with epoch {self.epoch} went through a soft failure and another controller was elected with "
                    f"epoch {leadership.controller_epoch}. Aborting state change by this controller")
            new_leader_and_isr = leadership.leader_and_isr.new_epoch_and_zk_version()
            result = self.zk_client.update_leader_and_isr({partition: new_leader_and_isr}, self.epoch,
                                                          self.controller_context.epoch_zk_version)
            written = result.finished_partitions.get(partition)
            if written is None:
                continue  # lost a version race with the leader; read again
            if isinstance(written, Exception):
                raise written
            updated = LeaderIsrAndControllerEpoch(written, self.epoch)
            self.controller_context.put_partition_leadership_info(partition, updated)
            self.logger.info("Updated leader epoch for partition %s to %d, zkVersion=%d", partition,
                             written.leader_epoch, written.zk_version)
            return updated

    # -- automatic leader rebalance -----------------------------------------------------------

    def _check_and_trigger_auto_leader_rebalance(self) -> None:
        ctx = self.controller_context
        by_preferred: dict[int, dict[TopicPartition, tuple[int, ...]]] = {}
        for tp in ctx.all_partitions():
            if self.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic):
                continue
            replicas = ctx.partition_replica_assignment(tp)
            if replicas:
                by_preferred.setdefault(replicas[0], {})[tp] = replicas
        for leader_broker, partitions in by_preferred.items():
            not_on_preferred = [tp for tp in partitions
                                if (info := ctx.partition_leadership_info(tp)) is not None
                                and info.leader_and_isr.leader != leader_broker]
            imbalance_ratio = len(not_on_preferred) / len(partitions)
            if imbalance_ratio > self.config.leader_imbalance_per_broker_percentage / 100:
                candidates = {tp for tp in not_on_preferred
                              if not ctx.partitions_being_reassigned
                              and not self.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic)
                              and tp.topic in ctx.all_topics
                              and self._can_preferred_replica_be_leader(tp)}
                self._on_replica_election(candidates, ElectionType.PREFERRED, ElectionTrigger.AUTO_TRIGGERED)

    def _can_preferred_replica_be_leader(self, tp: TopicPartition) -> bool:
        ctx = self.controller_context
        assignment = ctx.partition_replica_assignment(tp)
        live = {r for r in assignment if ctx.is_replica_online(r, tp)}
        info = ctx.partition_leadership_info(tp)
        isr = info.leader_and_isr.isr if info is not None else ()
        return PartitionLeaderElectionAlgorithms.preferred_replica_partition_leader_election(assignment, isr, live) is not None

    def _process_auto_preferred_replica_leader_election(self) -> None:
        if not self.is_active:
            return
        try:
            self.logger.info("Processing automatic preferred replica leader election")
            self._check_and_trigger_auto_leader_rebalance()
        finally:
            self._schedule_auto_leader_rebalance_task(self.config.leader_imbalance_check_interval_seconds * 1000)

    def _process_unclean_leader_election_enable(self) -> None:
        if not self.is_active:
            return
        self.logger.info("Unclean leader election has been enabled by default")
        self.partition_state_machine.trigger_online_partition_state_change()

    def _process_topic_unclean_leader_election_enable(self, topic: str) -> None:
        if not self.is_active:
            return
        self.logger.info("Unclean leader election has been enabled for topic %s", topic)
        self.partition_state_machine.trigger_online_partition_state_change(topic)

    # -- controlled shutdown ------------------------------------------------------------------

    def _process_controlled_shutdown(self, id: int, broker_epoch: int, callback: ControlledShutdownCallback) -> None:
        try:
            result: set[TopicPartition] | Exception = self._do_controlled_shutdown(id, broker_epoch)
        except Exception as e:  # noqa: BLE001 - the requester gets the failure
            result = e
        callback(result)

    def _do_controlled_shutdown(self, id: int, broker_epoch: int) -> set[TopicPartition]:
        ctx = self.controller_context
        if not self.is_active:
            raise ControllerMovedException("Controller moved to another broker. Aborting controlled shutdown")
        if broker_epoch != UNKNOWN_BROKER_EPOCH:
            cached = ctx.live_broker_id_and_epochs.get(id)
            if cached is not None and broker_epoch < cached:
                message = (f"Received controlled shutdown request from an old broker epoch {broker_epoch} for broker "
                           f"{id}. Current broker epoch is {cached}.")
                self.logger.info("%s", message)
                raise Errors.STALE_BROKER_EPOCH.exception_class(message)
        self.logger.info("Shutting down broker %d", id)
        if id not in ctx.live_or_shutting_down_broker_ids:
            raise Errors.BROKER_NOT_AVAILABLE.exception_class(f"Broker id {id} does not exist.")
        ctx.shutting_down_broker_ids.add(id)
        self.logger.debug("All shutting down brokers: %s", sorted(ctx.shutting_down_broker_ids))
        self.logger.debug("Live brokers: %s", sorted(ctx.live_broker_ids))
        to_act_on = sorted(p for p in ctx.partitions_on_broker(id)
                           if len(ctx.partition_replica_assignment(p)) > 1
                           and ctx.partition_leadership_info(p) is not None
                           and not self.topic_deletion_manager.is_topic_queued_up_for_deletion(p.topic))
        # (each has its leadership info: see the filter above)
        leaders = {p: ctx.partition_leadership_info(p).leader_and_isr.leader  # type: ignore[union-attr]
                   for p in to_act_on}
        led = [p for p in to_act_on if leaders[p] == id]
        followed = [p for p in to_act_on if leaders[p] != id]
        self.partition_state_machine.handle_state_changes(led, OnlinePartition,
                                                          ControlledShutdownPartitionLeaderElectionStrategy())
        try:
            self.broker_request_batch.new_batch()
            for p in followed:
                self.broker_request_batch.add_stop_replica_request_for_brokers([id], p, delete_partition=False)
            self.broker_request_batch.send_requests_to_brokers(self.epoch)
        except IllegalStateException as e:
            self._handle_illegal_state(e)
        # A follower leaves the ISR in ZooKeeper and its leader is told.
        self.replica_state_machine.handle_state_changes([PartitionAndReplica(p, id) for p in followed], OfflineReplica)
        return ctx.partition_leaders_on_broker(id)

    # -- responses from brokers -----------------------------------------------------------------

    def _process_update_metadata_response_received(self, response: Any, broker_id: int) -> None:
        if not self.is_active:
            return
        error = Errors.for_code(response.error_code)
        if error is not Errors.NONE:
            self.state_change_logger.error(f"Received error {error.name} in UpdateMetadata response {response} from "
                                           f"broker {broker_id}")

    def _process_leader_and_isr_response_received(self, response: Any, broker_id: int) -> None:
        if not self.is_active:
            return
        ctx = self.controller_context
        error = Errors.for_code(response.error_code)
        if error is not Errors.NONE:
            self.state_change_logger.error(f"Received error {error.name} in LeaderAndIsr response {response} from "
                                           f"broker {broker_id}")
            return
        offline: list[TopicPartition] = []
        online: list[TopicPartition] = []
        for tp, partition_error in leader_and_isr_partition_errors(response, ctx.topic_names).items():
            if partition_error is Errors.KAFKA_STORAGE_ERROR:
                offline.append(tp)
            elif partition_error is Errors.NONE:
                online.append(tp)
        previous = set(ctx.replicas_on_offline_dirs.get(broker_id, set()))
        current = (previous - set(online)) | set(offline)
        ctx.replicas_on_offline_dirs[broker_id] = current
        newly_offline = current - previous
        if newly_offline:
            self.state_change_logger.info(f"Mark replicas {_tps(newly_offline)} on broker {broker_id} as offline")
            self._on_replicas_become_offline([PartitionAndReplica(tp, broker_id) for tp in sorted(newly_offline)])

    def _process_topic_deletion_stop_replica_response_received(self, replica_id: int, request_error: Errors,
                                                               partition_errors: Mapping[TopicPartition, Errors]) -> None:
        if not self.is_active:
            return
        self.logger.debug("Delete topic callback invoked on StopReplica response received from broker %d: request "
                          "error = %s, partition errors = %s", replica_id, request_error, partition_errors)
        if request_error is not Errors.NONE:
            in_error = set(partition_errors)
        else:
            in_error = {tp for tp, e in partition_errors.items() if e is not Errors.NONE}
        replicas_in_error = [PartitionAndReplica(tp, replica_id) for tp in sorted(in_error)]
        self.topic_deletion_manager.fail_replica_deletion(replicas_in_error)
        if len(replicas_in_error) != len(partition_errors):
            deleted = sorted(set(partition_errors) - in_error)
            self.topic_deletion_manager.complete_replica_deletion([PartitionAndReplica(tp, replica_id) for tp in deleted])

    # -- election -------------------------------------------------------------------------------

    def _process_startup(self) -> None:
        self.zk_client.register_znode_change_handler_and_check_existence(self._controller_change_handler)
        self._elect()

    def _update_metrics(self) -> None:
        ctx = self.controller_context
        active = self.is_active
        self.offline_partition_count = ctx.offline_partition_count if active else 0
        self.preferred_replica_imbalance_count = ctx.preferred_replica_imbalance_count if active else 0
        self.global_topic_count = len(ctx.all_topics) if active else 0
        self.global_partition_count = ctx.partition_with_leaders_count if active else 0
        self.topics_to_delete_count = len(ctx.topics_to_be_deleted) if active else 0
        self.replicas_to_delete_count = sum(
            1 for t in ctx.topics_to_be_deleted for r in ctx.replicas_for_topic(t)
            if ctx.replica_states.get(r) is not ReplicaDeletionSuccessful) if active else 0
        self.ineligible_topics_to_delete_count = len(ctx.topics_ineligible_for_deletion) if active else 0
        self.ineligible_replicas_to_delete_count = sum(
            1 for t in ctx.topics_to_be_deleted for r in ctx.replicas_for_topic(t)
            if ctx.replica_states.get(r) is ReplicaDeletionIneligible) if active else 0

    def _handle_illegal_state(self, e: IllegalStateException) -> None:
        # An inconsistent controller must not keep acting: resign and let another take over.
        self.logger.error("Forcing the controller to resign")
        self.broker_request_batch.clear()
        self._trigger_controller_move()
        raise e

    def _trigger_controller_move(self) -> None:
        self._active_controller_id = self.zk_client.get_controller_id() or -1
        if not self.is_active:
            self.logger.warning("Controller has already moved when trying to trigger controller movement")
            return
        try:
            expected_epoch_zk_version = self.controller_context.epoch_zk_version
            self._active_controller_id = -1
            self._on_controller_resignation()
            self.zk_client.delete_controller(expected_epoch_zk_version)
        except ControllerMovedException:
            self.logger.warning("Controller has already moved when trying to trigger controller movement")

    def _maybe_resign(self) -> None:
        was_active = self.is_active
        self.zk_client.register_znode_change_handler_and_check_existence(self._controller_change_handler)
        controller_id = self.zk_client.get_controller_id()
        self._active_controller_id = -1 if controller_id is None else controller_id
        if was_active and not self.is_active:
            self._on_controller_resignation()

    def _elect(self) -> None:
        registration = self.zk_client.get_controller_id_and_owner()
        if registration is not None and registration[0] == self.config.broker_id \
                and registration[1] != self.zk_client.session_id:
            # /controller names this broker but another session holds it: an earlier run of
            # this broker that ended without closing its session (kill -9). Kafka 2.8 takes
            # it for its own win and acts as an active controller it never became. Here the
            # broker waits instead: ZooKeeper deletes the znode when that session expires
            # (within zookeeper.session.timeout.ms), and the deletion's Reelect elects anew.
            self.logger.warning(
                "%s names this broker but is held by ZooKeeper session 0x%x, not this broker's session "
                "0x%x: a leftover of an earlier run of broker %d. Waiting for ZooKeeper to expire that "
                "session (up to %d ms); its deletion starts a new election", ControllerZNode.path(),
                registration[1], self.zk_client.session_id or 0, self.config.broker_id,
                self.zk_client.stale_session_wait_ms)
            self._active_controller_id = -1
            return
        self._active_controller_id = -1 if registration is None else registration[0]
        # A Reelect racing with another broker's win (or our own) must not try to create
        # /controller again: the ephemeral create would fail forever.
        if self._active_controller_id != -1:
            self.logger.debug("Broker %d has been elected as the controller, so stopping the election process.",
                              self._active_controller_id)
            return
        try:
            epoch, epoch_zk_version = self.zk_client.register_controller_and_increment_controller_epoch(
                self.config.broker_id)
            self.controller_context.epoch = epoch
            self.controller_context.epoch_zk_version = epoch_zk_version
            self._active_controller_id = self.config.broker_id
            self.logger.info("%d successfully elected as the controller. Epoch incremented to %d and epoch zk version is "
                             "now %d", self.config.broker_id, epoch, epoch_zk_version)
            self._on_controller_failover()
        except ControllerMovedException as e:
            self._maybe_resign()
            if self._active_controller_id != -1:
                self.logger.debug("Broker %d was elected as controller instead of broker %d",
                                  self._active_controller_id, self.config.broker_id, exc_info=e)
            else:
                self.logger.warning("A controller has been elected but just resigned, this will result in another round "
                                    "of election", exc_info=e)
        except Exception:  # noqa: BLE001 - an unusable controller must hand over at once
            self.logger.exception("Error while electing or becoming controller on broker %d. Trigger controller "
                                  "movement immediately", self.config.broker_id)
            self._trigger_controller_move()

    # -- ZooKeeper-triggered events ---------------------------------------------------------------

    def _process_broker_change(self) -> None:
        if not self.is_active:
            return
        ctx = self.controller_context
        cur_broker_and_epochs = self.zk_client.get_all_broker_and_epochs_in_cluster()
        cur_epochs = {b.id: e for b, e in cur_broker_and_epochs.items()}
        cur_ids = set(cur_epochs)
        known_ids = ctx.live_or_shutting_down_broker_ids
        known_epochs = ctx.live_broker_id_and_epochs
        new_ids = cur_ids - known_ids
        dead_ids = known_ids - cur_ids
        # Same id, newer registration: the broker restarted between two watch events.
        bounced_ids = {b for b in cur_ids & known_ids if cur_epochs[b] > known_epochs[b]}
        new_brokers = {b: e for b, e in cur_broker_and_epochs.items() if b.id in new_ids}
        bounced_brokers = {b: e for b, e in cur_broker_and_epochs.items() if b.id in bounced_ids}
        self.logger.info("Newly added brokers: %s, deleted brokers: %s, bounced brokers: %s, all live brokers: %s",
                         _ids(new_ids), _ids(dead_ids), _ids(bounced_ids), _ids(cur_ids))

        for broker in new_brokers:
            self.controller_channel_manager.add_broker(broker)
        for broker_id in bounced_ids:
            self.controller_channel_manager.remove_broker(broker_id)
        for broker in bounced_brokers:
            self.controller_channel_manager.add_broker(broker)
        for broker_id in dead_ids:
            self.controller_channel_manager.remove_broker(broker_id)

        if new_ids:
            # A broker that cannot run the finalized features is not made live (KIP-584).
            compatible, incompatible = self._partition_on_feature_compatibility(new_brokers)
            if incompatible:
                self.logger.warning("Ignoring registration of new brokers due to incompatibilities with finalized "
                                    "features: %s", _ids(b.id for b in incompatible))
            ctx.add_live_brokers(compatible)
            # Only the brokers made live: the others get no requests from this controller.
            self._on_broker_startup(sorted(b.id for b in compatible))
        if bounced_ids:
            ctx.remove_live_brokers(bounced_ids)
            self._on_broker_failure(sorted(bounced_ids))
            compatible, incompatible = self._partition_on_feature_compatibility(bounced_brokers)
            if incompatible:
                self.logger.warning("Ignoring registration of bounced brokers due to incompatibilities with finalized "
                                    "features: %s", _ids(b.id for b in incompatible))
            ctx.add_live_brokers(compatible)
            self._on_broker_startup(sorted(b.id for b in compatible))
        if dead_ids:
            ctx.remove_live_brokers(dead_ids)
            self._on_broker_failure(sorted(dead_ids))
        if new_ids or dead_ids or bounced_ids:
            self.logger.info("Updated broker epochs cache: %s", ctx.live_broker_id_and_epochs)

    def _process_broker_modification(self, broker_id: int) -> None:
        if not self.is_active:
            return
        new_metadata = self.zk_client.get_broker(broker_id)
        old_metadata = self.controller_context.live_or_shutting_down_broker(broker_id)
        if new_metadata is not None and old_metadata is not None:
            if (new_metadata.end_points != old_metadata.end_points
                    or dict(old_metadata.features) != dict(new_metadata.features)):
                self.logger.info("Updated broker metadata: %s -> %s", old_metadata, new_metadata)
                self.controller_context.update_broker_metadata(old_metadata, new_metadata)
                self._on_broker_update(broker_id)

    def _process_topic_change(self) -> None:
        if not self.is_active:
            return
        ctx = self.controller_context
        topics = self.zk_client.get_all_topics_in_cluster(register_watch=True)
        new_topics = topics - ctx.all_topics
        deleted_topics = ctx.all_topics - topics
        ctx.set_all_topics(topics)
        self._register_partition_modifications_handlers(sorted(new_topics))
        added = self.zk_client.get_replica_assignment_and_topic_id_for_topics(sorted(new_topics))
        for topic in sorted(deleted_topics):
            ctx.remove_topic(topic)
        self._process_topic_ids(added)
        new_partitions: list[TopicPartition] = []
        for tira in sorted(added, key=lambda a: a.topic):
            for tp, assignment in sorted(tira.assignment.items()):
                ctx.update_partition_full_replica_assignment(tp, assignment)
                new_partitions.append(tp)
        self.logger.info("New topics: [%s], deleted topics: [%s], new partition replica assignment [%s]",
                         ",".join(sorted(new_topics)), ",".join(sorted(deleted_topics)),
                         ", ".join(f"{t.topic}: {dict((str(tp), list(a.replicas)) for tp, a in t.assignment.items())}"
                              for t in added))
        if new_partitions:
            self._on_new_partition_creation(new_partitions)

    def _process_topic_ids(self, topic_id_assignments: set[TopicIdReplicaAssignment]) -> None:
        # An IBP 2.8 controller gives every topic an id; below that it keeps whatever ids the
        # znodes already carry, so a downgrade does not lose them.
        if self.config.uses_topic_id:
            with_ids = {t for t in topic_id_assignments if t.topic_id is not None}
            without_ids = [t for t in topic_id_assignments if t.topic_id is None]
            updated = with_ids | self.zk_client.set_topic_ids(without_ids, self.controller_context.epoch_zk_version)
        else:
            updated = topic_id_assignments
        for tira in updated:
            if tira.topic_id is not None:
                self.controller_context.add_topic_id(tira.topic, tira.topic_id)

    def _process_log_dir_event_notification(self) -> None:
        if not self.is_active:
            return
        sequence_numbers = self.zk_client.get_all_log_dir_event_notifications()
        try:
            broker_ids = self.zk_client.get_broker_ids_from_log_dir_events(sequence_numbers)
            self._on_broker_log_dir_failure(broker_ids)
        finally:
            self.zk_client.delete_log_dir_event_notifications(self.controller_context.epoch_zk_version,
                                                              sequence_numbers)

    def _process_partition_modifications(self, topic: str) -> None:
        if not self.is_active:
            return
        ctx = self.controller_context
        assignment = self.zk_client.get_full_replica_assignment_for_topics([topic])
        to_be_added = {tp: a for tp, a in assignment.items() if not ctx.partition_replica_assignment(tp)}
        if self.topic_deletion_manager.is_topic_queued_up_for_deletion(topic):
            if to_be_added:
                self.logger.warning("Skipping adding partitions %s for topic %s since it is currently being deleted",
                                    ",".join(str(tp.partition) for tp in sorted(to_be_added)), topic)
                self._restore_partition_replica_assignment(topic, assignment)
            else:
                # Seen after the assignment was restored by the branch above.
                self.logger.info("Ignoring partition change during topic deletion as no new partitions are added")
        elif to_be_added:
            self.logger.info("New partitions to be added %s",
                             {str(tp): list(a.replicas) for tp, a in sorted(to_be_added.items())})
            for tp, a in sorted(to_be_added.items()):
                ctx.update_partition_full_replica_assignment(tp, a)
            self._on_new_partition_creation(to_be_added)

    def _restore_partition_replica_assignment(self, topic: str,
                                              new_assignment: Mapping[TopicPartition, ReplicaAssignment]) -> None:
        self.logger.info("Restoring the partition replica assignment for topic %s", topic)
        existing_partitions = set(self.zk_client.get_children(TopicPartitionsZNode.path(topic)))
        existing = {tp: self.controller_context.partition_full_replica_assignment(tp)
                    for tp in new_assignment if str(tp.partition) in existing_partitions}
        self.zk_client.set_topic_assignment(topic, self.controller_context.topic_ids.get(topic), existing,
                                            self.controller_context.epoch_zk_version)

    def _process_topic_deletion(self) -> None:
        if not self.is_active:
            return
        ctx = self.controller_context
        topics_to_be_deleted = set(self.zk_client.get_topic_deletions())
        self.logger.debug("Delete topics listener fired for topics %s to be deleted",
                          ",".join(sorted(topics_to_be_deleted)))
        non_existent = topics_to_be_deleted - ctx.all_topics
        if non_existent:
            self.logger.warning("Ignoring request to delete non-existing topics %s",
                                ",".join(sorted(non_existent)))
            self.zk_client.delete_topic_deletions(sorted(non_existent), ctx.epoch_zk_version)
        topics_to_be_deleted -= non_existent
        if self.config.delete_topic_enable:
            if topics_to_be_deleted:
                self.logger.info("Starting topic deletion for topics %s",
                                 ",".join(sorted(topics_to_be_deleted)))
                reassigning_topics = {tp.topic for tp in ctx.partitions_being_reassigned}
                for topic in sorted(topics_to_be_deleted & reassigning_topics):
                    self.topic_deletion_manager.mark_topic_ineligible_for_deletion(
                        {topic}, reason="topic reassignment in progress")
                self.topic_deletion_manager.enqueue_topics_for_deletion(topics_to_be_deleted)
        else:
            self.logger.info("Removing %s since delete topic is disabled",
                             ",".join(sorted(topics_to_be_deleted)))
            self.zk_client.delete_topic_deletions(sorted(topics_to_be_deleted), ctx.epoch_zk_version)

    def _process_zk_partition_reassignment(self) -> set[TopicPartition]:
        # Registering the handler with an exists both arms the watch and tells us whether a
        # reassignment is waiting.
        if not (self.is_active and self.zk_client.register_znode_change_handler_and_check_existence(
                self._partition_reassignment_handler)):
            return set()
        results: dict[TopicPartition, ApiError] = {}
        to_reassign: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, target in self.zk_client.get_partition_reassignment().items():
            context = self._maybe_build_reassignment(tp, target)
            if context is None:
                results[tp] = ApiError(Errors.NO_REASSIGNMENT_IN_PROGRESS)
            else:
                to_reassign[tp] = context
        results.update(self._maybe_trigger_partition_reassignment(to_reassign))
        failed = {tp: e for tp, e in results.items() if not e.is_success()}
        if failed:
            self.logger.warning("Failed reassignment through zk with the following errors: %s", failed)
            self._maybe_remove_from_zk_reassignment(lambda tp, _: tp in failed)
        return {tp for tp, e in results.items() if e.is_success()}

    def _process_api_partition_reassignment(self, reassignments: Mapping[TopicPartition, Sequence[int] | None],
                                            callback: AlterReassignmentsCallback) -> None:
        if not self.is_active:
            callback(ApiError(Errors.NOT_CONTROLLER))
            return
        results: dict[TopicPartition, ApiError] = {}
        to_reassign: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, target in reassignments.items():
            error = self._validate_replicas(tp, target) if target is not None else None
            if error is not None:
                results[tp] = error
                continue
            context = self._maybe_build_reassignment(tp, target)
            if context is None:
                results[tp] = ApiError(Errors.NO_REASSIGNMENT_IN_PROGRESS)
            else:
                to_reassign[tp] = context
        # The latest reassignment wins, whichever way it came.
        self._maybe_remove_from_zk_reassignment(lambda tp, _: tp in to_reassign)
        results.update(self._maybe_trigger_partition_reassignment(to_reassign))
        callback(results)

    def _validate_replicas(self, topic_partition: TopicPartition, replicas: Sequence[int]) -> ApiError | None:
        if not replicas:
            return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "Empty replica list specified in partition reassignment.")
        if len(replicas) != len(set(replicas)):
            return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT,
                            f"Duplicate replica ids in partition reassignment replica list: {list(replicas)}")
        if any(r < 0 for r in replicas):
            return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, f"Invalid broker id in replica list: {list(replicas)}")
        current = self.controller_context.partition_full_replica_assignment(topic_partition)
        new_assignment = current.reassign_to(replicas)
        if not set(new_assignment.adding_replicas) <= self.controller_context.live_broker_ids:
            return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT,
                            f"Replica assignment has brokers that are not alive. Replica list: "
                            f"{list(new_assignment.adding_replicas)}, live broker list: "
                            f"{sorted(self.controller_context.live_broker_ids)}")
        return None

    def _maybe_build_reassignment(self, topic_partition: TopicPartition,
                                  target_replicas: Sequence[int] | None) -> ReplicaAssignment | None:
        assignment = self.controller_context.partition_full_replica_assignment(topic_partition)
        if assignment.is_being_reassigned():
            # No target cancels: go back to the original replicas.
            target = target_replicas if target_replicas is not None else assignment.origin_replicas
            return assignment.reassign_to(target)
        if target_replicas is None:
            return None
        return assignment.reassign_to(target_replicas)

    def _process_partition_reassignment_isr_change(self, topic_partition: TopicPartition) -> None:
        if not self.is_active:
            return
        if topic_partition in self.controller_context.partitions_being_reassigned:
            self._maybe_complete_reassignment(topic_partition)

    def _maybe_complete_reassignment(self, topic_partition: TopicPartition) -> None:
        reassignment = self.controller_context.partition_full_replica_assignment(topic_partition)
        if self._is_reassignment_complete(topic_partition, reassignment):
            self.logger.info("Target replicas %s have all caught up with the leader for reassigning partition %s",
                             list(reassignment.target_replicas), topic_partition)
            self._on_partition_reassignment(topic_partition, reassignment)

    def _process_list_partition_reassignments(self, partitions: set[TopicPartition] | None,
                                              callback: ListReassignmentsCallback) -> None:
        if not self.is_active:
            callback(ApiError(Errors.NOT_CONTROLLER))
            return
        ctx = self.controller_context
        to_list = partitions if partitions is not None else set(ctx.partitions_being_reassigned)
        results = {}
        for tp in to_list:
            assignment = ctx.partition_full_replica_assignment(tp)
            if assignment.is_being_reassigned():
                results[tp] = assignment
        callback(results)

    def _process_isr_change_notification(self) -> None:
        if not self.is_active:
            return
        ctx = self.controller_context
        sequence_numbers = self.zk_client.get_all_isr_change_notifications()
        try:
            partitions = self.zk_client.get_partitions_from_isr_change_notifications(sequence_numbers)
            if partitions:
                partitions = list(dict.fromkeys(partitions))
                self._update_leader_and_isr_cache(partitions)
                self.send_update_metadata_request(sorted(ctx.live_or_shutting_down_broker_ids), set(partitions))
                for tp in partitions:
                    if tp in ctx.partitions_being_reassigned:
                        self._maybe_complete_reassignment(tp)
        finally:
            self.zk_client.delete_isr_change_notifications(ctx.epoch_zk_version, sequence_numbers)

    def _process_replica_leader_election(self, partitions_from_admin_client: set[TopicPartition] | None,
                                         election_type: ElectionType, election_trigger: ElectionTrigger,
                                         callback: ElectLeadersCallback) -> None:
        ctx = self.controller_context
        if not self.is_active:
            callback({p: ApiError(Errors.NOT_CONTROLLER) for p in (partitions_from_admin_client or set())})
            return
        if not (election_trigger is ElectionTrigger.ADMIN_CLIENT_TRIGGERED
                or self.zk_client.register_znode_change_handler_and_check_existence(
                    self._preferred_replica_election_handler)):
            return
        if partitions_from_admin_client is not None:
            partitions = set(partitions_from_admin_client)
        else:
            partitions = self.zk_client.get_preferred_replica_election()
        all_partitions = set(ctx.all_partitions())
        known = {p for p in partitions if p in all_partitions}
        unknown = partitions - known
        for p in sorted(unknown):
            self.logger.info("Skipping replica leader election (%s) for partition %s by %s since it doesn't exist.",
                             election_type.name, p, election_trigger)
        being_deleted = {p for p in known if self.topic_deletion_manager.is_topic_queued_up_for_deletion(p.topic)}
        live = known - being_deleted
        if being_deleted:
            self.logger.warning("Skipping replica leader election (%s) for partitions %s by %s since the respective "
                                "topics are being deleted", election_type.name, _tps(being_deleted),
                                election_trigger)
        electable: set[TopicPartition] = set()
        already_valid: set[TopicPartition] = set()
        for p in live:
            info = ctx.partition_leadership_info(p)
            current_leader = info.leader_and_isr.leader if info is not None else LeaderAndIsr.NO_LEADER
            if election_type is ElectionType.PREFERRED:
                needs = current_leader != ctx.partition_replica_assignment(p)[0]
            else:
                needs = current_leader == LeaderAndIsr.NO_LEADER or current_leader not in ctx.live_broker_ids
            (electable if needs else already_valid).add(p)

        results: dict[TopicPartition, int | ApiError] = {}
        for p, result in self._on_replica_election(electable, election_type, election_trigger).items():
            if isinstance(result, LeaderAndIsr):
                results[p] = result.leader
            elif isinstance(result, StateChangeFailedException):
                error = (Errors.PREFERRED_LEADER_NOT_AVAILABLE if election_type is ElectionType.PREFERRED
                         else Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE)
                results[p] = ApiError(error, str(result))
            else:
                results[p] = ApiError.from_throwable(result)
        for p in already_valid:
            results[p] = ApiError(Errors.ELECTION_NOT_NEEDED)
        for p in being_deleted:
            results[p] = ApiError(Errors.INVALID_TOPIC_EXCEPTION, "The topic is being deleted")
        for p in unknown:
            results[p] = ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
        self.logger.debug("Waiting for any successful result for election type (%s) by %s for partitions: %s",
                          election_type.name, election_trigger, results)
        callback(results)

    def _process_alter_isr(self, broker_id: int, broker_epoch: int, isrs_to_alter: Mapping[TopicPartition, LeaderAndIsr],
                           callback: AlterIsrCallback) -> None:
        ctx = self.controller_context
        if not self.is_active:
            callback(Errors.NOT_CONTROLLER)
            return
        known_epoch = ctx.live_broker_id_and_epochs.get(broker_id)
        if known_epoch is None:
            self.logger.info("Ignoring AlterIsr due to unknown broker %d", broker_id)
            callback(Errors.STALE_BROKER_EPOCH)
            return
        if known_epoch != broker_epoch:
            self.logger.info("Ignoring AlterIsr due to stale broker epoch %d for broker %d", broker_epoch,
                             broker_id)
            callback(Errors.STALE_BROKER_EPOCH)
            return
        responses: dict[TopicPartition, Errors | LeaderAndIsr] = {}
        try:
            adjusted: dict[TopicPartition, LeaderAndIsr] = {}
            for tp, new_leader_and_isr in isrs_to_alter.items():
                info = ctx.partition_leadership_info(tp)
                if info is None:
                    responses[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                    continue
                current = info.leader_and_isr
                # Checks beyond 2.8.2's ZooKeeper controller come from its KRaft controller
                # (ReplicationControlManager.alterIsr): only the current leader, in exactly the
                # current epoch, may propose an ISR of distinct assigned replicas that keeps it;
                # otherwise a request with the right zkVersion could write anything.
                if new_leader_and_isr.leader_epoch != current.leader_epoch:
                    responses[tp] = Errors.FENCED_LEADER_EPOCH
                elif new_leader_and_isr.leader != current.leader:
                    self.logger.info("Rejecting AlterIsr from broker %d for partition %s led by %d",
                                     broker_id, tp, current.leader)
                    responses[tp] = Errors.INVALID_REQUEST
                elif not _is_valid_isr(new_leader_and_isr, ctx.partition_replica_assignment(tp)):
                    self.logger.info("Rejecting AlterIsr from broker %d for partition %s: ISR %s is not a set of "
                                     "assigned replicas %s including the leader", broker_id, tp,
                                     list(new_leader_and_isr.isr), list(ctx.partition_replica_assignment(tp)))
                    responses[tp] = Errors.INVALID_REQUEST
                elif new_leader_and_isr.equals_ignore_zk(current):
                    # already the state: answer with it, so a retried request is idempotent
                    responses[tp] = current
                else:
                    adjusted[tp] = new_leader_and_isr
            update = self.zk_client.update_leader_and_isr(adjusted, ctx.epoch, ctx.epoch_zk_version)
            successful: list[TopicPartition] = []
            for tp, result in update.finished_partitions.items():
                if isinstance(result, LeaderAndIsr):
                    responses[tp] = result
                    successful.append(tp)
                else:
                    self.logger.error("Failed to update ISR for partition %s: %s", tp, result)
                    responses[tp] = Errors.for_exception(result)
            for tp in update.partitions_to_retry:
                self.logger.info("Failed to update ISR to %s for partition %s, bad ZK version.",
                                 adjusted[tp], tp)
                responses[tp] = Errors.INVALID_UPDATE_VERSION
            self._update_leader_and_isr_cache(successful)
            self.send_update_metadata_request(sorted(ctx.live_or_shutting_down_broker_ids), set(isrs_to_alter))
        except ControllerMovedException:
            raise
        except Exception:  # noqa: BLE001
            self.logger.exception("Error when processing AlterIsr for partitions: %s", _tps(isrs_to_alter))
            callback(Errors.UNKNOWN_SERVER_ERROR)
            return
        callback(responses)
        for tp, response in responses.items():
            if tp in ctx.partitions_being_reassigned and isinstance(response, LeaderAndIsr):
                self._maybe_complete_reassignment(tp)

    def _process_controller_change(self) -> None:
        self._maybe_resign()

    def _process_reelect(self) -> None:
        self._maybe_resign()
        self._elect()

    def _process_register_broker_and_reelect(self) -> None:
        if self._broker_info is not None:
            self._broker_epoch = self.zk_client.register_broker(self._broker_info)
        self._process_reelect()

    def _process_expire(self) -> None:
        self._active_controller_id = -1
        self._on_controller_resignation()

    # -- ControllerEventProcessor -------------------------------------------------------------------

    def process(self, event: ControllerEvent) -> None:
        try:
            handler = self._dispatch.get(type(event))
            if handler is not None:
                handler(event)
            elif hasattr(event, "process"):
                # Test and tool events that carry their own behaviour (Kafka's MockEvent).
                event.process()
            else:
                self.logger.error("Unexpected event %r", event)
        except ControllerMovedException:
            self.logger.info("Controller moved to another broker when processing %r.", event,
                             exc_info=True)
            self._maybe_resign()
        except Exception:  # noqa: BLE001 - one failed event must not stop the controller
            self.logger.exception("Error processing event %r", event)
        finally:
            self._update_metrics()

    def preempt(self, event: ControllerEvent) -> None:
        event.preempt()


def _is_valid_isr(leader_and_isr: LeaderAndIsr, assignment: Sequence[int]) -> bool:
    isr = leader_and_isr.isr
    return (len(set(isr)) == len(isr) and set(isr) <= set(assignment)
            and leader_and_isr.leader in isr)


def _tps(partitions: Iterable[TopicPartition]) -> str:
    return ",".join(str(p) for p in sorted(partitions))


def _ids(ids: Iterable[int]) -> str:
    return ",".join(str(i) for i in sorted(ids))
