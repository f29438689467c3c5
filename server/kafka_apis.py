"""Port of core/src/main/scala/kafka/server/KafkaApis.scala (Kafka 2.8.2, ZooKeeper mode),
with the parts of RequestHandlerHelper.scala and AutoTopicCreationManager.scala it uses.

``KafkaApis.handle`` runs on a request handler thread and dispatches on the request's
ApiKeys to one ``handle_*`` method. As Kafka's handlers fill one version-independent
``*Data`` object, each handler constructs its answer with the kio classes of the newest
version of the response this broker speaks, with keyword arguments (the class's own
constructor, or ``new_entity`` where Kafka's field defaults spare naming every field: a
misspelled keyword fails at the call either way). ``Request.build_response_send`` writes
it at the request's version (``to_version`` in kafka_py/clients/common/protocol/entities.py: the fields an
older version lacks are dropped).

A handler that raises is answered as Kafka's ``RequestHandlerHelper.handleError`` does:
with the request's error response (``error_response``, server/kafka_apis_common.py: the error at the top level
and/or on every topic, partition or resource of the request); a closed connection only
for a request type listed in ``CLOSES_CONNECTION_ON_ERROR`` (none is). As Kafka keeps
``getErrorResponse`` on each request class, each handler module declares the error
response of its request types beside their handlers (``@error_response_of(ApiKeys.X)``).

Produce keeps the records of the request a writable memoryview of the request frame
(MemoryRecords over it, no copy) until the log writes them; Fetch answers with the
FileRecords slices the ReplicaManager read, passed as they are into the kio response,
so the network thread sends them from the segment file with sendfile.

The controller's requests (LeaderAndIsr, UpdateMetadata, StopReplica) are refused with
STALE_BROKER_EPOCH when they were meant for an earlier registration of this broker.
The admin APIs (CreateTopics, DeleteTopics, CreatePartitions and the config APIs) are in
server/kafka_apis_admin.py, delegating to ZkAdminManager; the group coordinator APIs
(FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch,
OffsetDelete, DescribeGroups, ListGroups, DeleteGroups) in server/kafka_apis_group.py,
delegating to the GroupCoordinator.

In KRaft mode (server/broker_server.py) the admin APIs that change metadata are not handled
here but forwarded to the active controller (``maybe_forward_to_controller``, KIP-590), topics
are auto-created through the controller, and clients are told a random alive broker as
their controller; ZooKeeper mode leaves ``forwarding_manager`` unset and none of that happens.
"""
from __future__ import annotations

import datetime
import functools
import logging
import random
import struct
import threading
import uuid
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Sequence

from kio.schema.delete_records.v2.response import DeleteRecordsPartitionResult, DeleteRecordsResponse
from kio.schema.delete_records.v2.response import DeleteRecordsTopicResult
from kio.schema.describe_cluster.v0.response import DescribeClusterBroker, DescribeClusterResponse
from kio.schema.fetch.v12.response import AbortedTransaction, EpochEndOffset, FetchableTopicResponse, FetchResponse
from kio.schema.fetch.v12.response import PartitionData as FetchPartitionResponse

from kio.schema.init_producer_id.v4.response import InitProducerIdResponse
from kio.schema.list_offsets.v6.response import ListOffsetsPartitionResponse, ListOffsetsResponse
from kio.schema.list_offsets.v6.response import ListOffsetsTopicResponse
from kio.schema.metadata.v11.response import MetadataResponse, MetadataResponseTopic
from kio.schema.produce.v9.response import PartitionProduceResponse, ProduceResponse, TopicProduceResponse


from kafka_py.clients.fetch_session_handler import FINAL_EPOCH, INVALID_SESSION_ID
from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.errors import (
    ApiException,
    CorruptRecordException,
    InvalidRecordException,
    InvalidRequestException,
    KafkaException,
    UnsupportedCompressionTypeException,
    UnsupportedVersionException,
)
from kafka_py.clients.common.replica_selector import ClientMetadata
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_files import UNKNOWN_OFFSET
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.log.verification_guard import VerificationGuard
from kafka_py.clients.common.record.record_conversion_stats import RecordConversionStats
from kafka_py.network.channel_metadata_registry import client_information_of
from kafka_py.network.request_channel import Request, RequestChannel
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import new_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.schema.offset_for_leader_epoch.v4.response import EpochEndOffset as LeaderEpochEndOffset
from kafka_py.clients.common.protocol.schema.offset_for_leader_epoch.v4.response import OffsetForLeaderEpochResponse
from kafka_py.clients.common.protocol.schema.offset_for_leader_epoch.v4.response import OffsetForLeaderTopicResult
from kafka_py.clients.common.protocol.requests import (
    AUTHORIZED_OPERATIONS_OMITTED,
    CONSUMER_REPLICA_ID,
    DEBUGGING_REPLICA_ID,
    UNKNOWN_BROKER_EPOCH,
    PartitionData,
)
from kafka_py.clients.common.protocol.messages import api_versions_response, unsupported_api_versions_response
from kafka_py.clients.common.protocol.schema_imports import import_schema_module
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    CURRENT_MAGIC_VALUE,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_FLAG_MASK,
)
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.record.lazy_down_conversion_records import LazyDownConversionRecords, has_compatible_magic
from kafka_py.core.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafka_py.server.auth_helper import AuthHelper
from kafka_py.server.broker_features import BrokerFeatures
from kafka_py.server.finalized_feature_cache import FinalizedFeatureCache
from kafka_py.server.delayed_produce import PartitionResponse
from kafka_py.server.kafka_apis_fast_answers import send_metadata_response, send_produce_response
from kafka_py.server.kafka_apis_common import (
    NO_THROTTLE,
    error_response,
    error_response_of,
    millis,
    topics_of,
)
from kafka_py.server.kafka_apis_quotas import QuotaRequestHandlers
from kafka_py.server.fetch_session import (
    MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS,
    FetchManager,
    FetchResponseData,
    FetchSessionCache,
)
from kafka_py.server.api_version_manager import with_features
from kafka_py.server.forwarding_manager import FORWARDED_APIS, ForwardingManager
from kafka_py.server.metadata_cache import is_internal
from kafka_py.server.replica_manager import (
    build_leader_and_isr_response,
    build_stop_replica_response,
    leader_and_isr_partition_states,
    stop_replica_partition_states,
)
from kafka_py.server.replica_manager_types import FetchPartitionData, HostedPartition
from kafka_py.core.utils.java_limits import INT_MAX
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:
    from kafka_py.controller.kafka_controller import KafkaController
    from kafka_py.clients.common.protocol.schema.list_offsets.v0.response import ListOffsetsTopicResponse as ListOffsetsTopicResponseV0
    from kafka_py.core.coordinator.group.group_coordinator import GroupCoordinator
    from kafka_py.core.coordinator.transaction.producer_id_manager import ProducerIdManager, RPCProducerIdManager
    from kafka_py.core.coordinator.transaction.transaction_coordinator import TransactionCoordinator
    from kafka_py.core.security.authorizer.authorizer import Authorizer
    from kafka_py.server.add_partitions_to_txn_manager import AddPartitionsToTxnManager
    from kafka_py.server.kafka_config import KafkaConfig
    from kafka_py.server.metadata.raft_metadata_cache import RaftMetadataCache
    from kafka_py.server.metadata_cache import MetadataCache
    from kafka_py.server.quota_factory import QuotaManagers
    from kafka_py.server.replica_manager import ReplicaManager
    from kafka_py.server.zk_admin_manager import ConfigHelper, ZkAdminManager
    from kafka_py.core.zk.admin_zk_client import AdminZkClient
    from kafka_py.core.zk.kafka_zk_client import KafkaZkClient

logger = logging.getLogger(__name__)

NO_CONTROLLER_ID = -1
ADMIN_CLIENT_ID = "__admin_client"  # AdminUtils.AdminClientId: may write internal topics
INVALID_HIGH_WATERMARK = -1
INVALID_LAST_STABLE_OFFSET = -1
INVALID_LOG_START_OFFSET = -1
UNKNOWN_TIMESTAMP = -1

_NO_DIVERGING_EPOCH = EpochEndOffset()


def _optional_epoch(epoch: Optional[int]) -> Optional[int]:
    return None if epoch is None or int(epoch) < 0 else int(epoch)


# ---------------------------------------------------------------------------- error answers of reads

def _fetch_error_data(error: Errors) -> FetchPartitionData:
    """A partition the fetch cannot read (not authorized, unknown), as the ReplicaManager's reads are."""
    return FetchPartitionData(error, INVALID_HIGH_WATERMARK, INVALID_LOG_START_OFFSET, MemoryRecords.EMPTY)


def _fetch_error_partition(partition: int, error: Errors) -> FetchPartitionResponse:
    return FetchPartitionResponse(partition_index=partition, error_code=error.error_code,
                                  high_watermark=INVALID_HIGH_WATERMARK, last_stable_offset=INVALID_LAST_STABLE_OFFSET,
                                  log_start_offset=INVALID_LOG_START_OFFSET, aborted_transactions=None,
                                  records=MemoryRecords.EMPTY.buffer)


def _list_offsets_partition(partition: int, error: Errors) -> ListOffsetsPartitionResponse:
    return ListOffsetsPartitionResponse(partition_index=partition, error_code=error.error_code,
                                        timestamp=UNKNOWN_TIMESTAMP, offset=UNKNOWN_OFFSET)


# ---------------------------------------------------------------------------- KafkaApis

def _answer_class(module: str, name: str) -> type:
    """The class of an answer only ZooKeeper mode (UpdateMetadata, ControlledShutdown, AlterIsr)
    or an old client (ListOffsets v0) is sent, imported when first used rather than by every
    broker's start (docs/kraft.md, "What the start does"). Through the schema import lock, as
    every first import of a schema module (kafka_py/clients/common/protocol/schema_imports.py)."""
    return getattr(import_schema_module(f"kafka_py.clients.common.protocol.schema.{module}"), name)



def update_features_response(top_level: ApiError, results: Mapping[str, ApiError]) -> Any:
    """UpdateFeaturesResponse.createWithErrors: each message is the ApiError's, or its error's
    default text when it has none (Kafka's ApiError(error) takes the error's message). The
    classes are imported on first use, as a rare admin answer's are."""
    module = import_schema_module("kio.schema.update_features.v0.response")
    return module.UpdateFeaturesResponse(
        throttle_time=datetime.timedelta(0), error_code=top_level.error.error_code,
        error_message=top_level.message_with_fallback(),
        results=tuple(module.UpdatableFeatureResult(feature=name, error_code=error.error.error_code,
                                             error_message=error.message_with_fallback())
                      for name, error in results.items()))


class KafkaApisPart:
    """A part of KafkaApis that lives in a module of its own (server/kafka_apis_admin.py,
    kafka_apis_group.py ...), built when first used.

    Kafka's KafkaApis is one class, and the JVM loads the message classes of a request when
    one first arrives. Here importing these parts and the message classes they build was
    about a fifth of what a KRaft node imports at its start (docs/kraft.md, "What the start
    does"), paid before the first produce for requests a broker may never be sent. The import
    goes through the schema import lock (kafka_py/clients/common/protocol/schema_imports.py): a part imports
    message schema modules, which a network thread may be importing at the same moment.
    """

    def __init__(self, module: str, class_name: str) -> None:
        self.module = module
        self.class_name = class_name
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, apis: Optional["KafkaApis"], owner: Optional[type] = None) -> Any:
        if apis is None:
            return self
        with apis._parts_lock:
            part = apis.__dict__.get(self.name)
            if part is None:
                module = import_schema_module(f"kafka_py.server.{self.module}")
                part = getattr(module, self.class_name)(apis)
                # An attribute of the instance hides a non-data descriptor: later lookups of this
                # name find the part without coming here.
                apis.__dict__[self.name] = part
        return part


class KafkaApis:
    """Handles every request the handler threads take off the RequestChannel."""

    # The parts of this class in modules of their own, each imported by the first request it answers.
    _admin = KafkaApisPart("kafka_apis_admin", "AdminRequestHandlers")  # topics, partitions, configs, elections
    _group = KafkaApisPart("kafka_apis_group", "GroupRequestHandlers")  # the group coordinator's APIs
    _txn = KafkaApisPart("kafka_apis_txn", "TxnRequestHandlers")  # the transaction coordinator's APIs
    _security = KafkaApisPart("kafka_apis_security", "SecurityRequestHandlers")  # SASL state errors, SCRAM
    _acls = KafkaApisPart("kafka_apis_acls", "AclRequestHandlers")  # DescribeAcls, CreateAcls, DeleteAcls
    _log_dirs = KafkaApisPart("kafka_apis_log_dirs", "LogDirRequestHandlers")  # AlterReplicaLogDirs, DescribeLogDirs
    _reassignment = KafkaApisPart("kafka_apis_reassignment", "ReassignmentRequestHandlers")  # partition reassignments
    _tokens = KafkaApisPart("kafka_apis_tokens", "DelegationTokenRequestHandlers")  # delegation tokens (KIP-48)

    def __init__(self, request_channel: RequestChannel, replica_manager: ReplicaManager,
                 admin_manager: Optional[ZkAdminManager | ConfigHelper], controller: Optional[KafkaController],
                 zk_client: Optional[KafkaZkClient], broker_id: int, config: KafkaConfig,
                 metadata_cache: MetadataCache | RaftMetadataCache, cluster_id: str, time: Time = Time.SYSTEM,
                 producer_id_manager: Optional[ProducerIdManager | RPCProducerIdManager] = None,
                 admin_zk_client: Optional[AdminZkClient] = None,
                 group_coordinator: Optional[GroupCoordinator] = None, quotas: Optional[QuotaManagers] = None,
                 authorizer: Optional[Authorizer] = None, fetch_manager: Optional[FetchManager] = None) -> None:
        self.request_channel = request_channel
        self.replica_manager = replica_manager
        self.admin_manager = admin_manager
        self.controller = controller
        self.zk_client = zk_client
        self.broker_id = broker_id
        self.config = config
        self.metadata_cache = metadata_cache
        self.cluster_id = cluster_id
        self.time = time
        self.producer_id_manager = producer_id_manager
        self.admin_zk_client = admin_zk_client
        self.group_coordinator = group_coordinator
        # Incremental fetch sessions (server/fetch_session.py): Kafka's KafkaServer makes the
        # FetchManager; one made here by default serves every KafkaApis the same way.
        # A full fetch naming a partition not hosted here makes no session (see
        # FetchSessionCache.maybe_create_session).
        is_hosted = None if replica_manager is None else (
            lambda tp: replica_manager.get_partition(tp) is not HostedPartition.NONE)
        self.fetch_manager = fetch_manager or FetchManager(time, FetchSessionCache(
            config.max_incremental_fetch_session_cache_slots,
            MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS, is_hosted))
        # The transaction coordinator (kafka_py/core/coordinator/transaction), set by KafkaServer.
        self.txn_coordinator: Optional[TransactionCoordinator] = None
        # Transaction verification of produce requests (server/add_partitions_to_txn_manager.py),
        # set by KafkaServer; None: transactional batches are appended unverified, as by Kafka 2.8.
        self.add_partitions_to_txn_manager: Optional[AddPartitionsToTxnManager] = None
        # The client quota managers (server/quota_factory.py), or None: nothing is throttled.
        self.quotas = quotas
        # throttling, and the client quota APIs
        self._quota = QuotaRequestHandlers(self)
        # The configured authorizer, or None: then every check passes (server/auth_helper.py).
        self.authorizer = authorizer
        self.auth_helper = AuthHelper(authorizer)
        self.logger = IdentLogger(logger, f"[KafkaApi-{broker_id}] ")
        # Topics being auto-created by a Metadata request right now (Kafka's inflightTopics):
        # concurrent requests for them answer UNKNOWN_TOPIC_OR_PARTITION instead of racing in ZooKeeper.
        self._inflight_topics: set[str] = set()
        self._inflight_lock = threading.Lock()
        # KRaft mode (server/broker_server.py sets both): admin requests that change metadata go to
        # the active controller in an Envelope (KIP-590), auto-created topics through CreateTopics
        # to it; None in ZooKeeper mode, where this broker handles them itself.
        self.forwarding_manager: Optional[ForwardingManager] = None
        # KRaft: checks the BROKER and BROKER_LOGGER resources of AlterConfigs before forwarding
        self.config_admin_manager: Optional[Any] = None
        # KRaft mode: the SCRAM credentials committed to the metadata log (the SASL listeners' cache)
        self.credential_provider: Optional[Any] = None
        # KRaft mode: the client quotas the metadata log brought, which DescribeClientQuotas lists
        self.client_quota_cache: Optional[Any] = None
        self.auto_topic_creation_manager: Optional[Any] = None
        # ZooKeeper mode: the DelegationTokenManager (server/delegation_token_manager.py), set by KafkaServer
        self.token_manager: Optional[Any] = None
        # KIP-584, set by the servers: the features this broker supports and the cluster's
        # finalized ones, which ApiVersions v3+ answers carry.
        self.broker_features: Optional[BrokerFeatures] = None
        # KRaft mode: the broker listener's API set (server/api_version_manager.py), which
        # ApiVersions lists; None in ZooKeeper mode, where it is IMPLEMENTED_APIS.
        self.api_version_manager: Optional[Any] = None
        self.feature_cache: Optional[FinalizedFeatureCache] = None
        self._handlers: dict[ApiKeys, Callable[[Request], None]] = {
            ApiKeys.PRODUCE: self.handle_produce_request,
            ApiKeys.FETCH: self.handle_fetch_request,
            ApiKeys.LIST_OFFSETS: self.handle_list_offset_request,
            ApiKeys.OFFSET_FOR_LEADER_EPOCH: self.handle_offset_for_leader_epoch_request,
            ApiKeys.METADATA: self.handle_topic_metadata_request,
            ApiKeys.LEADER_AND_ISR: self.handle_leader_and_isr_request,
            ApiKeys.STOP_REPLICA: self.handle_stop_replica_request,
            ApiKeys.UPDATE_METADATA: self.handle_update_metadata_request,
            ApiKeys.CONTROLLED_SHUTDOWN: self.handle_controlled_shutdown_request,
            ApiKeys.ALTER_ISR: self.handle_alter_isr_request,
            ApiKeys.API_VERSIONS: self.handle_api_versions_request,
            ApiKeys.DELETE_RECORDS: self.handle_delete_records_request,
            ApiKeys.INIT_PRODUCER_ID: self.handle_init_producer_id_request,
            ApiKeys.DESCRIBE_CLUSTER: self.handle_describe_cluster,
            ApiKeys.UPDATE_FEATURES: self.handle_update_features,
            ApiKeys.UNREGISTER_BROKER: self.handle_unregister_broker_request,
        }
        # The handlers of the parts in modules of their own (KafkaApisPart): a part is imported
        # by the first request one of its handlers answers.
        self._parts_lock = threading.RLock()
        self._handlers.update(self._part_handlers("_admin", {
            ApiKeys.CREATE_TOPICS: "handle_create_topics_request",
            ApiKeys.DELETE_TOPICS: "handle_delete_topics_request",
            ApiKeys.CREATE_PARTITIONS: "handle_create_partitions_request",
            ApiKeys.DESCRIBE_CONFIGS: "handle_describe_configs_request",
            ApiKeys.ALTER_CONFIGS: "handle_alter_configs_request",
            ApiKeys.INCREMENTAL_ALTER_CONFIGS: "handle_incremental_alter_configs_request",
            ApiKeys.ELECT_LEADERS: "handle_elect_replica_leader",
        }))
        self._handlers.update(self._part_handlers("_group", {
            ApiKeys.FIND_COORDINATOR: "handle_find_coordinator_request",
            ApiKeys.JOIN_GROUP: "handle_join_group_request",
            ApiKeys.SYNC_GROUP: "handle_sync_group_request",
            ApiKeys.HEARTBEAT: "handle_heartbeat_request",
            ApiKeys.LEAVE_GROUP: "handle_leave_group_request",
            ApiKeys.OFFSET_COMMIT: "handle_offset_commit_request",
            ApiKeys.OFFSET_FETCH: "handle_offset_fetch_request",
            ApiKeys.OFFSET_DELETE: "handle_offset_delete_request",
            ApiKeys.DESCRIBE_GROUPS: "handle_describe_groups_request",
            ApiKeys.LIST_GROUPS: "handle_list_groups_request",
            ApiKeys.DELETE_GROUPS: "handle_delete_groups_request",
        }))
        self._handlers.update(self._part_handlers("_txn", {
            ApiKeys.ADD_PARTITIONS_TO_TXN: "handle_add_partitions_to_txn_request",
            ApiKeys.ADD_OFFSETS_TO_TXN: "handle_add_offsets_to_txn_request",
            ApiKeys.END_TXN: "handle_end_txn_request",
            ApiKeys.WRITE_TXN_MARKERS: "handle_write_txn_markers_request",
            ApiKeys.TXN_OFFSET_COMMIT: "handle_txn_offset_commit_request",
            ApiKeys.DESCRIBE_TRANSACTIONS: "handle_describe_transactions_request",
        }))
        self._handlers.update(self._part_handlers("_security", {
            ApiKeys.SASL_HANDSHAKE: "handle_sasl_handshake_request",
            ApiKeys.SASL_AUTHENTICATE: "handle_sasl_authenticate_request",
            ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS: "handle_describe_user_scram_credentials_request",
            ApiKeys.ALTER_USER_SCRAM_CREDENTIALS: "handle_alter_user_scram_credentials_request",
        }))
        self._handlers.update(self._part_handlers("_acls", {
            ApiKeys.DESCRIBE_ACLS: "handle_describe_acls_request",
            ApiKeys.CREATE_ACLS: "handle_create_acls_request",
            ApiKeys.DELETE_ACLS: "handle_delete_acls_request",
        }))
        self._handlers.update({
            ApiKeys.DESCRIBE_CLIENT_QUOTAS: self._quota.handle_describe_client_quotas_request,
            ApiKeys.ALTER_CLIENT_QUOTAS: self._quota.handle_alter_client_quotas_request,
        })
        self._handlers.update(self._part_handlers("_log_dirs", {
            ApiKeys.ALTER_REPLICA_LOG_DIRS: "handle_alter_replica_log_dirs_request",
            ApiKeys.DESCRIBE_LOG_DIRS: "handle_describe_log_dirs_request",
        }))
        self._handlers.update(self._part_handlers("_reassignment", {
            ApiKeys.ALTER_PARTITION_REASSIGNMENTS: "handle_alter_partition_reassignments_request",
            ApiKeys.LIST_PARTITION_REASSIGNMENTS: "handle_list_partition_reassignments_request",
        }))
        self._handlers.update(self._part_handlers("_tokens", {
            ApiKeys.CREATE_DELEGATION_TOKEN: "handle_create_token_request",
            ApiKeys.RENEW_DELEGATION_TOKEN: "handle_renew_token_request",
            ApiKeys.EXPIRE_DELEGATION_TOKEN: "handle_expire_token_request",
            ApiKeys.DESCRIBE_DELEGATION_TOKEN: "handle_describe_tokens_request",
        }))

    def _part_handlers(self, part: str, methods: Mapping[ApiKeys, str]) -> dict[ApiKeys, Callable[[Request], None]]:
        """Handlers by api key that call the method of that name of ``part`` (a KafkaApisPart
        attribute) when a request comes, building the part on the first."""
        return {api: functools.partial(self._call_part, part, method) for api, method in methods.items()}

    def _call_part(self, part: str, method: str, request: Request) -> None:
        getattr(getattr(self, part), method)(request)

    def close(self) -> None:
        self.logger.info("Shutdown complete.")

    # ------------------------------------------------------------------ dispatch

    def handle(self, request: Request) -> None:
        """Answer ``request``; never raises (a failure becomes an error response or a close)."""
        try:
            handler = self._handlers.get(request.api_key)
            if handler is None:
                # The Processor only passes on implemented APIs; this is a broker bug.
                raise InvalidRequestException(f"No handler for request api key {request.api_key!r}")
            if self.forwarding_manager is not None and request.api_key in FORWARDED_APIS:
                self.maybe_forward_to_controller(request)
            else:
                handler(request)
        except Exception as e:  # noqa: BLE001 - the client gets Kafka's error answer
            self.handle_error(request, e)
        finally:
            # Delayed operations completed by this request whose completion had to wait until
            # no lock of ours was held (ReplicaManager's ActionQueue).
            try:
                self.replica_manager.try_complete_actions()
            except Exception:  # noqa: BLE001
                self.logger.exception("Error completing delayed actions")
            if request.api_local_complete_time_ns < 0:
                request.api_local_complete_time_ns = self.time.nanoseconds()

    def maybe_forward_to_controller(self, request: Request) -> None:
        """Kafka's maybeForwardToController in KRaft mode (RaftSupport.maybeForward): the request
        goes to the active controller in an Envelope, and its answer back to the client."""
        if request.api_key in (ApiKeys.ALTER_CONFIGS, ApiKeys.INCREMENTAL_ALTER_CONFIGS) \
                and self.config_admin_manager is not None:
            # this broker's own configs are checked here first (server/config_admin_manager.py)
            self._admin.forward_alter_configs_request(request)
            return

        def response_callback(response: Any) -> None:
            if response is None:
                self.logger.info("The client connection will be closed due to controller responded unsupported "
                                 "version exception during %r forwarding. This could happen when the controller "
                                 "changed after the connection was established.", request)
                self.request_channel.close_connection(request)
            else:
                # the controller's answer carries its own throttle time
                self.send_response_exempt_throttle(request, response)

        forwarding_manager = self.forwarding_manager
        if forwarding_manager is None:
            raise KafkaException("No forwarding manager: this broker is not in KRaft mode")
        forwarding_manager.forward_request(request, self.answering(request, response_callback))

    @property
    def zk_controller(self) -> KafkaController:
        """The controller of ZooKeeper mode, for the handlers of the requests only that mode
        serves (Kafka's MetadataSupport.requireZkOrThrow); a KRaft broker has none."""
        controller = self.controller
        if controller is None:
            raise KafkaException("No ZooKeeper controller: this broker is in KRaft mode")
        return controller

    def controller_id_for_clients(self) -> Optional[int]:
        """MetadataSupport.controllerId: the controller in ZooKeeper mode; in KRaft mode a random
        alive broker, since clients cannot reach the KRaft controllers and any broker forwards."""
        if self.forwarding_manager is not None:
            # (KRaft mode: a RaftMetadataCache, server/metadata/raft_metadata_cache.py)
            return self.metadata_cache.random_alive_broker_id()  # type: ignore[union-attr]
        return self.metadata_cache.get_controller_id()

    def handle_error(self, request: Request, e: BaseException) -> None:
        """RequestHandlerHelper.handleError: the request's error response, or a closed connection."""
        error = Errors.for_exception(e)
        if error is Errors.UNKNOWN_SERVER_ERROR and not isinstance(e, ApiException):
            self.logger.error("Error when handling request: %r", request, exc_info=e)
        else:
            self.logger.debug("Error %s when handling request %r: %s", error.name, request, e)
        response = None
        # A produce with acks=0 expects no answer: a failure is signalled by closing.
        if not (request.api_key is ApiKeys.PRODUCE and int(request.body.acks) == 0):
            try:
                response = error_response(request, error, str(e) or None)
            except Exception:  # noqa: BLE001 - a request too broken to mirror is closed instead
                self.logger.debug("No error response for %r", request, exc_info=True)
        if response is None:
            self.request_channel.close_connection(request)
        else:
            self.send_response(request, response)

    def send_response(self, request: Request, response: Any) -> None:
        """Encode and queue ``response``; callbacks on other threads use this too, so an encoding
        failure closes the connection rather than leaving the client waiting.

        Kafka's sendResponseMaybeThrottle: with ``request_percentage`` quotas set, the request's
        handler time is recorded and an answer over the quota carries its throttle time
        (server/kafka_apis_quotas.py); the APIs brokers send each other are exempt."""
        quotas = self.quotas
        if quotas is not None and quotas.request.quotas_enabled:
            response = self._quota.maybe_throttle_response(request, response)
        self.send_response_exempt_throttle(request, response)

    def send_response_exempt_throttle(self, request: Request, response: Any,
                                      on_complete: Optional[Callable[[Any], None]] = None) -> None:
        """``send_response`` without recording the request against any quota; ``on_complete``
        runs on the network thread once the answer is written."""
        try:
            self.request_channel.send_response(request, response, on_complete)
        except Exception:  # noqa: BLE001
            self.logger.exception("Could not send the response to %r", request)
            self.request_channel.close_connection(request)

    def send_error_response(self, request: Request, error: Errors, message: Optional[str] = None) -> None:
        response = error_response(request, error, message)
        if response is None:
            self.request_channel.close_connection(request)
        else:
            self.send_response(request, response)

    def answering(self, request: Request, callback: Callable[..., None]) -> Callable[..., None]:
        """``callback`` wrapped so that a failure while building its answer still answers the
        request (callbacks run on purgatory and controller threads, where an exception would
        leave the connection muted and the client waiting forever)."""

        def guarded(*args: Any) -> None:
            try:
                callback(*args)
            except Exception as e:  # noqa: BLE001
                self.handle_error(request, e)

        return guarded

    # ------------------------------------------------------------------ ApiVersions

    @staticmethod
    @error_response_of(ApiKeys.API_VERSIONS)
    def api_versions_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return api_versions_response(request.api_version, error)

    def handle_api_versions_request(self, request: Request) -> None:
        if request.context.is_unsupported_api_versions_request:
            # KIP-511: tell the client which ApiVersions versions exist, in a v0 body.
            self.send_response(request, unsupported_api_versions_response())
            return
        if client_information_of(request.api_version, request.body) is None:
            self.send_response(request, api_versions_response(request.api_version, Errors.INVALID_REQUEST))
            return
        if self.api_version_manager is not None:
            response = self.api_version_manager.api_version_response(request.api_version)
        else:
            response = api_versions_response(request.api_version)
        self.send_response(request, self._with_features(response))

    def handle_unregister_broker_request(self, request: Request) -> None:
        """UnregisterBroker is only ever forwarded to the KRaft controller (``handle``); a
        ZooKeeper-mode broker does not accept it at all."""
        raise UnsupportedVersionException("The broker unregistration API is only served in KRaft mode.")

    def _with_features(self, response: Any) -> Any:
        """ApiVersions v3+: the supported features, and the finalized ones with their epoch when
        this broker knows them (ApiVersionManager.apiVersionResponse)."""
        return with_features(response, self.broker_features, self.feature_cache)

    # ------------------------------------------------------------------ UpdateFeatures

    @staticmethod
    @error_response_of(ApiKeys.UPDATE_FEATURES)
    def update_features_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return update_features_response(ApiError(error, message if message is not None else error.message), {})

    def handle_update_features(self, request: Request) -> None:
        """UpdateFeatures (KIP-584): Alter on the cluster; only the active controller changes
        /feature, and only when the IBP enables feature versioning."""
        send = self.answering(request, lambda result: self.send_response(request, update_features_response(
            result, {}) if isinstance(result, ApiError) else update_features_response(ApiError(Errors.NONE), result)))
        if not self.auth_helper.authorize(request.context, AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
            send(ApiError(Errors.CLUSTER_AUTHORIZATION_FAILED, Errors.CLUSTER_AUTHORIZATION_FAILED.message))
        elif self.controller is None or not self.controller.is_active:
            send(ApiError(Errors.NOT_CONTROLLER, Errors.NOT_CONTROLLER.message))
        elif not self.config.is_feature_versioning_supported:
            send(ApiError(Errors.INVALID_REQUEST, "Feature versioning system is disabled."))
        else:
            self.zk_controller.update_features(request.body, send)

    # ------------------------------------------------------------------ Metadata

    @staticmethod
    @error_response_of(ApiKeys.METADATA)
    def metadata_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return new_entity(MetadataResponse, brokers=(), topics=tuple([
            new_entity(MetadataResponseTopic, error_code=error, name=t.name, is_internal=is_internal(t.name or ""),
                       partitions=())
            for t in (request.body.topics or ())]))

    def handle_topic_metadata_request(self, request: Request) -> None:
        body = request.body
        version = request.api_version
        requested = body.topics
        # v0 asks for every topic with an empty list, v1+ with null
        is_all_topics = requested is None or (version == 0 and not requested)
        if not is_all_topics:
            for topic in requested:
                if topic.name is None:
                    raise InvalidRequestException(f"Topic name can not be null for version {version}")
                # (topic ids from v10)
                topic_id = topic.topic_id if version >= 10 else None
                if topic_id is not None and topic_id != uuid.UUID(int=0):
                    raise InvalidRequestException(f"Topic IDs are not supported in requests for version {version}")
        if is_all_topics:
            topics = sorted(self.metadata_cache.get_all_topics())
        else:
            topics = list(dict.fromkeys(t.name for t in requested))
        allow_auto_creation = (bool(self.config.auto_create_topics_enable)
                               and (version < 4 or bool(body.allow_auto_topic_creation)) and not is_all_topics)
        listener = request.context.listener_name
        unauthorized_topic_metadata: list[tuple] = []
        if self.authorizer is not None:
            # Topics the principal may not describe are left out of an all-topics answer and
            # answered TOPIC_AUTHORIZATION_FAILED when named, without saying whether they exist;
            # a missing topic it may not create is refused rather than created.
            helper = self.auth_helper
            describable = helper.filter_by_authorized(request.context, AclOperation.DESCRIBE, ResourceType.TOPIC,
                                                      topics, log_if_denied=not is_all_topics)
            unauthorized = [t for t in topics if t not in describable]
            topics = [t for t in topics if t in describable]
            if topics and allow_auto_creation:
                missing = [t for t in topics if not self.metadata_cache.contains_topic(t)]
                if missing and not helper.authorize(request.context, AclOperation.CREATE, ResourceType.CLUSTER,
                                                    CLUSTER_NAME, log_if_denied=False):
                    creatable = helper.filter_by_authorized(request.context, AclOperation.CREATE,
                                                            ResourceType.TOPIC, missing)
                    refused = {t for t in missing if t not in creatable}
                    topics = [t for t in topics if t not in refused]
                    unauthorized_topic_metadata += [
                        _metadata_topic(Errors.TOPIC_AUTHORIZATION_FAILED, t, is_internal(t), None, [])
                        for t in missing if t in refused]
            if not is_all_topics:
                unauthorized_topic_metadata += [
                    _metadata_topic(Errors.TOPIC_AUTHORIZATION_FAILED, t, False, None, []) for t in unauthorized]
        topic_metadata = self._get_topic_metadata(is_all_topics, allow_auto_creation, topics, listener,
                                                  error_unavailable_endpoints=version == 0,
                                                  error_unavailable_listeners=version >= 6)
        cluster_authorized_operations = AUTHORIZED_OPERATIONS_OMITTED
        if version >= 8:
            if version <= 10 and body.include_cluster_authorized_operations:
                if self.auth_helper.authorize(request.context, AclOperation.DESCRIBE, ResourceType.CLUSTER,
                                              CLUSTER_NAME):
                    cluster_authorized_operations = self.auth_helper.authorized_operations(
                        request, ResourceType.CLUSTER, CLUSTER_NAME)
                else:
                    cluster_authorized_operations = 0
            if body.include_topic_authorized_operations:
                topic_metadata = [t[:5] + (self.auth_helper.authorized_operations(request, ResourceType.TOPIC, t[1]),)
                                  for t in topic_metadata]
        topic_metadata += unauthorized_topic_metadata
        brokers = [(node.id, node.host, node.port, node.rack)
                   for node in sorted(self.metadata_cache.get_alive_broker_nodes(listener), key=lambda n: n.id)]
        if self.forwarding_manager is not None:
            # KRaft mode: any broker forwards, so the "controller" is one of the brokers of this
            # very answer; drawn from the cache again it could be a broker unfenced (or fenced)
            # between the two reads, which the client would have no address for
            controller_id = random.choice(brokers)[0] if brokers else NO_CONTROLLER_ID
        else:
            zk_controller_id = self.controller_id_for_clients()
            controller_id = NO_CONTROLLER_ID if zk_controller_id is None else zk_controller_id
        # sendResponseMaybeThrottle's half before the answer (server/kafka_apis_quotas.py)
        quotas = self.quotas
        throttle_time_ms = (self._quota.request_throttle_time_ms(request)
                            if quotas is not None and quotas.request.quotas_enabled else 0)
        send_metadata_response(self, request, brokers, controller_id, topic_metadata, throttle_time_ms,
                               cluster_authorized_operations)

    def _get_topic_metadata(self, fetch_all_topics: bool, allow_auto_topic_creation: bool, topics: Sequence[str],
                            listener_name: str, error_unavailable_endpoints: bool,
                            error_unavailable_listeners: bool) -> list[tuple]:
        found = self.metadata_cache.get_topic_metadata(topics, listener_name, error_unavailable_endpoints,
                                                       error_unavailable_listeners)
        responses = [_metadata_topic(t.error, t.name, t.is_internal, t.topic_id, [
            (p.error, p.partition_index, p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes,
             p.offline_replicas) for p in sorted(t.partitions, key=_partition_index)])
            for t in found]
        if not topics or len(found) == len(topics) or fetch_all_topics:
            return responses
        known = {t.name for t in found}
        missing = [t for t in topics if t not in known]
        if allow_auto_topic_creation:
            responses.extend(self._auto_create_topics(missing))
        else:
            for topic in missing:
                error = Errors.INVALID_TOPIC_EXCEPTION if not _is_valid_topic(topic) else Errors.UNKNOWN_TOPIC_OR_PARTITION
                responses.append(_metadata_topic(error, topic, is_internal(topic), None, []))
        return responses

    def _auto_create_topics(self, topics: Sequence[str]) -> list[tuple]:
        """AutoTopicCreationManager.createTopics in ZooKeeper mode: write the assignment and answer
        LEADER_NOT_AVAILABLE; the controller elects leaders and the client asks again."""
        responses = []
        for topic in topics:
            if not _is_valid_topic(topic):
                responses.append(_metadata_topic(Errors.INVALID_TOPIC_EXCEPTION, topic, False, None, []))
                continue
            with self._inflight_lock:
                in_flight = topic in self._inflight_topics
                self._inflight_topics.add(topic)
            if in_flight:
                responses.append(_metadata_topic(Errors.UNKNOWN_TOPIC_OR_PARTITION, topic, is_internal(topic),
                                                 None, []))
                continue
            try:
                error = self._create_topic_in_zk(topic)
            finally:
                with self._inflight_lock:
                    self._inflight_topics.discard(topic)
            responses.append(_metadata_topic(error, topic, is_internal(topic), None, []))
        return responses

    def _create_topic_in_zk(self, topic: str) -> Errors:
        configs: dict[str, str] = {}
        if topic == "__consumer_offsets":
            partitions = self.config.offsets_topic_partitions
            replication_factor = self.config.offsets_topic_replication_factor
            if self.group_coordinator is not None:
                configs = dict(self.group_coordinator.offsets_topic_configs())
        elif topic == "__transaction_state":
            partitions = self.config.transaction_topic_partitions
            replication_factor = self.config.transaction_topic_replication_factor
            if self.txn_coordinator is not None:
                configs = self.txn_coordinator.transaction_topic_configs()
        else:
            partitions = int(self.config.num_partitions)
            replication_factor = int(self.config.default_replication_factor)
        if self.auto_topic_creation_manager is not None:
            return self.auto_topic_creation_manager.create_topic(topic, partitions, replication_factor, configs)
        try:
            admin_zk_client = self.admin_zk_client
            if admin_zk_client is None:
                raise KafkaException("No ZooKeeper admin client: this broker is in KRaft mode")
            admin_zk_client.create_topic(topic, partitions, replication_factor, configs)
            self.logger.info("Auto creation of topic %s with %d partitions and replication factor %d is successful",
                             topic, partitions, replication_factor)
        except Exception as e:  # noqa: BLE001 - turned into the topic's error code
            error = Errors.for_exception(e)
            if error is Errors.TOPIC_ALREADY_EXISTS:
                return Errors.LEADER_NOT_AVAILABLE
            if error is Errors.UNKNOWN_SERVER_ERROR:
                self.logger.warning("Auto creation of topic %s failed: %s", topic, e)
            return error
        # Created, but the controller has yet to elect its leaders.
        return Errors.LEADER_NOT_AVAILABLE

    # ------------------------------------------------------------------ Produce

    @staticmethod
    @error_response_of(ApiKeys.PRODUCE)
    def produce_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return new_entity(ProduceResponse, responses=tuple([
            TopicProduceResponse(name=t.name, partition_responses=tuple([
                new_entity(PartitionProduceResponse, index=p.index, error_code=error, base_offset=-1,
                           log_append_time=-1, log_start_offset=-1) for p in t.partition_data]))
            for t in request.body.topic_data]))

    def handle_produce_request(self, request: Request) -> None:
        body = request.body
        version = request.api_version
        acks = int(body.acks)
        transactional_id: Optional[str] = body.transactional_id if version >= 3 else None
        authorized_topics = None
        if self.authorizer is not None:
            # Transactional records need Write on their transactional id; every topic needs Write.
            if _has_transactional_records(body) and (
                    transactional_id is None or not self.auth_helper.authorize(
                        request.context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id)):
                self.send_error_response(request, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
                return
            authorized_topics = self.auth_helper.filter_by_authorized(
                request.context, AclOperation.WRITE, ResourceType.TOPIC, body.topic_data, _name_of)
        early: dict[TopicPartition, PartitionResponse] = {}
        to_append: dict[TopicPartition, MemoryRecords] = {}
        for topic in body.topic_data:
            denied = authorized_topics is not None and topic.name not in authorized_topics
            for partition in topic.partition_data:
                tp = TopicPartition(topic.name, int(partition.index))
                if denied:
                    early[tp] = PartitionResponse(Errors.TOPIC_AUTHORIZATION_FAILED)
                    continue
                if not self.metadata_cache.contains(tp):
                    early[tp] = PartitionResponse(Errors.UNKNOWN_TOPIC_OR_PARTITION)
                    continue
                try:
                    records = _validate_produce_records(version, partition.records)
                except ApiException as e:
                    early[tp] = PartitionResponse(Errors.for_exception(e), error_message=str(e))
                    continue
                to_append[tp] = records

        def send_response_callback(response_status: Mapping[TopicPartition, PartitionResponse]) -> None:
            merged: dict[TopicPartition, PartitionResponse] = dict(response_status)
            merged.update(early)
            # The request's bytes and handler time against the client's quotas (KIP-219: an
            # answer over them carries the throttle time, and the connection is muted as long).
            quotas = self.quotas
            throttle_time_ms = (self._quota.produce_throttle_time_ms(request, acks) if quotas is not None and (
                quotas.produce.quotas_enabled or quotas.request.quotas_enabled) else 0)
            if acks == 0:
                errors = {tp: status.error for tp, status in merged.items() if status.error is not Errors.NONE}
                if errors:
                    # The producer reads no answer: closing the connection makes it refresh metadata.
                    self.logger.info("Closing connection due to error during produce request with correlation id "
                                     "%d from client id %s with ack=0; topic and partition to exceptions: %s",
                                     request.correlation_id, request.header.client_id,
                                     ", ".join(f"{tp} -> {e.exception_name}" for tp, e in errors.items()))
                    self.request_channel.close_connection(request)
                else:
                    self.request_channel.send_no_op_response(request)
                return
            for tp, status in merged.items():
                if status.error is not Errors.NONE:
                    self.logger.debug("Produce request with correlation id %d from client %s on partition %s failed "
                                      "due to %s", request.correlation_id, request.header.client_id, tp,
                                      status.error.exception_name)
            self._send_produce_response(request, merged, throttle_time_ms)

        def append(entries: dict[TopicPartition, MemoryRecords],
                   verification_guards: Optional[Mapping[TopicPartition, VerificationGuard]]) -> None:
            if not entries:
                send_response_callback({})
                return
            self.replica_manager.append_records(
                timeout_ms=millis(body.timeout),
                required_acks=acks,
                internal_topics_allowed=request.header.client_id == ADMIN_CLIENT_ID,
                origin=AppendOrigin.CLIENT,
                entries_per_partition=entries,
                response_callback=self.answering(request, send_response_callback),
                record_conversion_stats_callback=processing_stats_callback,
                verification_guards=verification_guards)

        def processing_stats_callback(stats_by_partition: Mapping[TopicPartition, Optional[RecordConversionStats]]
                                      ) -> None:
            # what converting the records to the topics' message formats cost, per partition
            # (None where the append failed before validating anything)
            for tp, stats in stats_by_partition.items():
                if stats is not None:
                    self.update_record_conversion_stats(request, tp, stats)

        if transactional_id is not None and to_append:
            # Transaction verification (KIP-890, server/kafka_apis_txn.py): the first batch of a
            # transaction on a partition waits for the coordinator's word, and this thread does
            # not; the append is made when the answer comes, on the thread that gets it.
            def verified(refused: Mapping[TopicPartition, PartitionResponse],
                         verification_guards: Optional[Mapping[TopicPartition, VerificationGuard]]) -> None:
                early.update(refused)
                append({tp: r for tp, r in to_append.items() if tp not in refused}, verification_guards)

            self._txn.verify_transactional_produce(transactional_id, to_append,
                                                   self.answering(request, verified))
            return
        append(to_append, None)

    def _send_produce_response(self, request: Request, statuses: Mapping[TopicPartition, PartitionResponse],
                               throttle_time_ms: int = 0) -> None:
        """The answer to a produce; from v3 (every current client) its frame is written
        straight from the statuses, without response objects (server/kafka_apis_fast_answers.py)."""
        if not send_produce_response(self, request, statuses, throttle_time_ms):  # False below v3
            self.send_response_exempt_throttle(request, _produce_response(statuses, throttle_time_ms))

    # ------------------------------------------------------------------ Fetch

    @staticmethod
    @error_response_of(ApiKeys.FETCH)
    def fetch_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return FetchResponse(throttle_time=NO_THROTTLE, error_code=error.error_code, session_id=INVALID_SESSION_ID,
                             responses=tuple([FetchableTopicResponse(topic=t.topic, partitions=tuple([
                                 _fetch_error_partition(p.partition, error) for p in t.partitions]))
                                 for t in request.body.topics]))

    def handle_fetch_request(self, request: Request) -> None:
        body = request.body
        version = request.api_version
        replica_id = int(body.replica_id)
        # what the request asks for, in request order; an incremental fetch's session adds to it
        # (a partition's log start offset from v5, its current leader epoch from v9, its last
        # fetched epoch from v12)
        fetch_data = [(TopicPartition(topic.topic, int(p.partition)), PartitionData(
            int(p.fetch_offset), int(p.log_start_offset) if version >= 5 else -1, int(p.partition_max_bytes),
            _optional_epoch(p.current_leader_epoch) if version >= 9 else None,
            _optional_epoch(p.last_fetched_epoch) if version >= 12 else None))
            for topic in body.topics for p in topic.partitions]
        # (v0-v6 carry no session fields: sessionless)
        to_forget: Sequence[TopicPartition] = ()
        session_id, session_epoch = INVALID_SESSION_ID, FINAL_EPOCH
        if version >= 7:
            if body.forgotten_topics_data:
                to_forget = [TopicPartition(t.topic, int(p)) for t in body.forgotten_topics_data for p in t.partitions]
            session_id, session_epoch = int(body.session_id), int(body.session_epoch)
        fetch_context = self.fetch_manager.new_context(session_id, session_epoch, fetch_data, to_forget,
                                                       replica_id >= 0)
        partitions_to_read = fetch_context.partitions()
        erroneous: list[tuple[TopicPartition, FetchPartitionData]] = []
        interesting: list[tuple[TopicPartition, PartitionData]] = []
        authorized_topics = None
        if self.authorizer is not None:
            # A follower needs ClusterAction; a consumer needs Read on each topic.
            if replica_id >= 0:
                allowed = self.auth_helper.authorize(request.context, AclOperation.CLUSTER_ACTION,
                                                     ResourceType.CLUSTER, CLUSTER_NAME)
                authorized_topics = {tp.topic for tp, _ in partitions_to_read} if allowed else set()
            else:
                authorized_topics = self.auth_helper.filter_by_authorized(
                    request.context, AclOperation.READ, ResourceType.TOPIC, [tp.topic for tp, _ in partitions_to_read])
        contains = self.metadata_cache.contains
        for tp, data in partitions_to_read:
            if authorized_topics is not None and tp.topic not in authorized_topics:
                erroneous.append((tp, _fetch_error_data(Errors.TOPIC_AUTHORIZATION_FAILED)))
            elif not contains(tp):
                erroneous.append((tp, _fetch_error_data(Errors.UNKNOWN_TOPIC_OR_PARTITION)))
            else:
                interesting.append((tp, data))

        # Fetch v0-v3 read message formats v0/v1: what the log holds is converted down, lazily
        # (Kafka's maybeConvertFetchedData), from the offset each partition was asked for
        fetch_offsets = {tp: data.fetch_offset for tp, data in fetch_data} if version <= 3 else None
        on_complete = self._conversion_stats_updater(request) if version <= 3 else None

        def build(answer: FetchResponseData, convert: bool = True) -> FetchResponse:
            """The answer; with ``convert`` False its records stay unconverted (a quota sizes the
            answer from the stored bytes, as Kafka's does, and converting them is not free)."""
            offsets = fetch_offsets if convert else None
            by_topic: dict[str, list[FetchPartitionResponse]] = {}
            for tp, data in answer.partitions:
                by_topic.setdefault(tp.topic, []).append(
                    self._fetch_partition(tp, data, version, offsets, replica_id >= 0))
            return FetchResponse(throttle_time=NO_THROTTLE, error_code=answer.error.error_code,
                                 session_id=answer.session_id, responses=tuple([
                                     FetchableTopicResponse(topic=topic, partitions=tuple(parts))
                                     for topic, parts in by_topic.items()]))

        def process_response_callback(response_partition_data: Sequence[tuple[TopicPartition, FetchPartitionData]]
                                      ) -> None:
            updates = list(response_partition_data)
            updates.extend(erroneous)
            quotas = self.quotas
            if replica_id >= 0 and quotas is not None and quotas.leader.has_throttled_partitions:
                # what throttled replicas are sent counts against leader.replication.throttled.rate
                leader_quota = quotas.leader
                leader_quota.record(sum(len(data.records) for tp, data in response_partition_data
                                        if data.records is not None and leader_quota.is_throttled(tp)))
            if quotas is not None and (quotas.fetch.quotas_enabled or quotas.request.quotas_enabled):
                # A consumer's answer is sized before its session learns what it says: a throttled
                # consumer gets an answer without data (Kafka's getThrottledResponse), after which
                # its session must not think it knows more.
                self._quota.send_fetch_response(
                    request, None if replica_id >= 0 else build(fetch_context.get_response_data(updates), False),
                    lambda: build(fetch_context.get_throttled_response(0)), replica_id,
                    lambda: build(fetch_context.update_and_generate_response_data(updates)), on_complete)
            else:
                self.send_response_exempt_throttle(request,
                                                   build(fetch_context.update_and_generate_response_data(updates)),
                                                   on_complete)

        # (a response limit from v3)
        fetch_max_bytes = min(int(body.max_bytes) if version >= 3 else INT_MAX, int(self.config.fetch_max_bytes))
        if replica_id < 0 and self.quotas is not None and self.quotas.fetch.quotas_enabled:
            fetch_max_bytes = min(fetch_max_bytes, self._quota.fetch_max_bytes_in_quota_window(request))
        fetch_min_bytes = min(int(body.min_bytes), fetch_max_bytes)
        if not interesting:
            process_response_callback([])
            return
        self.replica_manager.fetch_messages(
            timeout_ms=millis(body.max_wait),
            replica_id=replica_id,
            fetch_min_bytes=fetch_min_bytes,
            fetch_max_bytes=fetch_max_bytes,
            hard_max_bytes_limit=version <= 2,
            fetch_infos=interesting,
            # a follower's fetch of a throttled replica is held back while the leader quota is exceeded
            quota=self.quotas.leader if replica_id >= 0 and self.quotas is not None else None,
            response_callback=self.answering(request, process_response_callback),
            isolation_level=int(body.isolation_level) if version >= 4 else 0,  # (from v4)
            client_metadata=self._fetch_client_metadata(request))

    @staticmethod
    def _fetch_client_metadata(request: Request) -> Optional[ClientMetadata]:
        """Fetch v11 on (KIP-392): who asks, and from which rack, for the replica selector; a
        consumer that sends it may also read from a follower."""
        if request.api_version < 11:
            return None
        context = request.context
        return ClientMetadata(request.body.rack_id or "", context.client_id or "", context.client_address,
                              context.principal, context.listener_name)

    def _fetch_partition(self, tp: TopicPartition, data: FetchPartitionData, version: int,
                         fetch_offsets: Optional[Mapping[TopicPartition, int]] = None,
                         from_follower: bool = False) -> FetchPartitionResponse:
        error = data.error
        # Fetch v5 and older clients do not know KAFKA_STORAGE_ERROR; they do retry this one.
        if error is Errors.KAFKA_STORAGE_ERROR and version <= 5:
            error = Errors.NOT_LEADER_OR_FOLLOWER
        if version < 10 and error is Errors.NONE:
            log_config = self.replica_manager.get_log_config(tp)
            if log_config is not None and str(getattr(log_config, "compression_type", "")) == "zstd":
                return _fetch_error_partition(tp.partition, Errors.UNSUPPORTED_COMPRESSION_TYPE)
        # what the response writes: the FileRecords slice or MemoryRecords read, converted records
        # for an old consumer, or a buffer
        records: FileRecords | MemoryRecords | LazyDownConversionRecords | memoryview | bytes = data.records
        if fetch_offsets is not None and error is Errors.NONE and records is not None and len(records):
            try:
                records = self._maybe_down_convert(tp, records, version, fetch_offsets.get(tp, 0), from_follower)
            except UnsupportedVersionException:
                return _fetch_error_partition(tp.partition, Errors.UNSUPPORTED_VERSION)
            except UnsupportedCompressionTypeException:
                return _fetch_error_partition(tp.partition, Errors.UNSUPPORTED_COMPRESSION_TYPE)
            except (CorruptRecordException, InvalidRecordException) as e:
                # (an old client knows CORRUPT_MESSAGE; INVALID_RECORD came later)
                self.logger.warning("Could not down-convert the records of %s from offset %d: %s", tp,
                                    fetch_offsets.get(tp, 0), e)
                return _fetch_error_partition(tp.partition, Errors.CORRUPT_MESSAGE)
        if isinstance(records, MemoryRecords):
            records = records.buffer
        aborted = data.aborted_transactions
        diverging = data.diverging_epoch
        return FetchPartitionResponse(
            partition_index=tp.partition,
            error_code=error.error_code,
            high_watermark=data.high_watermark,
            last_stable_offset=(INVALID_LAST_STABLE_OFFSET if data.last_stable_offset is None
                                else data.last_stable_offset),
            log_start_offset=data.log_start_offset,
            diverging_epoch=_NO_DIVERGING_EPOCH if diverging is None else EpochEndOffset(
                epoch=diverging.leader_epoch, end_offset=diverging.end_offset),
            aborted_transactions=None if aborted is None else tuple([
                AbortedTransaction(producer_id=a.producer_id, first_offset=a.first_offset) for a in aborted]),
            preferred_read_replica=-1 if data.preferred_read_replica is None else data.preferred_read_replica,
            # The FileRecords slice itself: encode_response_chunks keeps it as a file region.
            records=records)

    def _maybe_down_convert(self, tp: TopicPartition, records: Any, version: int, fetch_offset: int,
                            from_follower: bool) -> Any:
        """KafkaApis.maybeConvertFetchedData's conversion: the records as they are when every
        batch is of a format Fetch ``version`` reads (0 for v0-v1, 1 for v2-v3), else a
        LazyDownConversionRecords converting them as the answer is written.
        UnsupportedVersionException when the topic's message.downconversion.enable forbids
        that (for consumers; a follower is always served).

        Kafka decides from the topic's message.format.version whether to look at the batches
        at all; here the batches decide, so a topic whose format was lowered after newer
        batches were written is still converted. The first batch is converted here, on the
        handler thread, so the answer is framed for at least one whole batch."""
        to_magic = MAGIC_VALUE_V0 if version <= 1 else MAGIC_VALUE_V1
        if has_compatible_magic(records, to_magic):
            return records
        if not from_follower:
            log_config = self.replica_manager.get_log_config(tp)
            if log_config is not None and not log_config.message_downconversion_enable:
                self.logger.debug("Conversion to message format %d is disabled for partition %s. Sending "
                                  "unsupported version response.", to_magic, tp)
                raise UnsupportedVersionException(f"Down-conversion of {tp} is disabled")
        return LazyDownConversionRecords(tp, records, to_magic, fetch_offset, self.time)

    def _conversion_stats_updater(self, request: Request) -> Callable[[Any], None]:
        """The callback run once the answer to ``request`` is written (Kafka's
        updateConversionStats): what converting its records cost, by partition."""
        def update_conversion_stats(send: Any) -> None:
            stats_of = getattr(send, "record_conversion_stats", None)
            if stats_of is not None:
                for tp, stats in stats_of().items():
                    self.update_record_conversion_stats(request, tp, stats)
        return update_conversion_stats

    def update_record_conversion_stats(self, request: Request, tp: TopicPartition, stats: Any) -> None:
        """KafkaApis.updateRecordConversionStats: the records converted count in the topic's
        ProduceMessageConversionsPerSec or FetchMessageConversionsPerSec, the time taken and the
        memory held in the request's MessageConversionsTimeMs and TemporaryMemoryBytes. (Kafka
        keeps the last partition's time and memory; here they are summed over the partitions
        of the request.)"""
        count = stats.num_records_converted
        if count > 0:
            self.replica_manager.broker_topic_stats.mark_message_conversions(tp.topic, count,
                                                                             request.api_key is ApiKeys.PRODUCE)
            request.message_conversions_time_ns += stats.conversion_time_nanos
        request.temporary_memory_bytes += stats.temporary_memory_bytes

    # ------------------------------------------------------------------ ListOffsets

    @staticmethod
    @error_response_of(ApiKeys.LIST_OFFSETS)
    def list_offsets_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return ListOffsetsResponse(throttle_time=NO_THROTTLE, topics=tuple([
            ListOffsetsTopicResponse(name=t.name, partitions=tuple([
                _list_offsets_partition(p.partition_index, error) for p in t.partitions]))
            for t in request.body.topics]))

    def handle_list_offset_request(self, request: Request) -> None:
        body = request.body
        version = request.api_version
        if version == 0:
            response_class = _answer_class("list_offsets.v0.response", "ListOffsetsResponse")
            self.send_response(request, response_class(topics=tuple(self._handle_list_offset_request_v0(request))))
            return
        replica_id = int(body.replica_id)
        seen: set[TopicPartition] = set()
        duplicates: set[TopicPartition] = set()
        for topic in body.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.name, int(p.partition_index))
                (duplicates if tp in seen else seen).add(tp)
        fetch_only_from_leader = replica_id != DEBUGGING_REPLICA_ID
        # (v0-v1 read uncommitted; the isolation level from v2)
        isolation_level = ((int(body.isolation_level) if version >= 2 else 0) if replica_id == CONSUMER_REPLICA_ID
                           else None)

        describable = None
        if self.authorizer is not None:
            describable = self.auth_helper.filter_by_authorized(request.context, AclOperation.DESCRIBE,
                                                                ResourceType.TOPIC, body.topics, _name_of)
        topics = []
        unauthorized = []
        for topic in body.topics:
            if describable is not None and topic.name not in describable:
                unauthorized.append(ListOffsetsTopicResponse(name=topic.name, partitions=tuple([
                    _list_offsets_partition(int(p.partition_index), Errors.TOPIC_AUTHORIZATION_FAILED)
                    for p in topic.partitions])))
                continue
            partitions = []
            for p in topic.partitions:
                tp = TopicPartition(topic.name, int(p.partition_index))
                if tp in duplicates:
                    self.logger.debug("OffsetRequest with correlation id %d from client %s on partition %s failed "
                                      "because the partition is duplicated in the request.",
                                      request.correlation_id, request.header.client_id, tp)
                    partitions.append(_list_offsets_partition(tp.partition, Errors.INVALID_REQUEST))
                    continue
                try:
                    found = self.replica_manager.fetch_offset_for_timestamp(
                        tp, int(p.timestamp), isolation_level,
                        _optional_epoch(p.current_leader_epoch) if version >= 4 else None,
                        fetch_only_from_leader)
                except Exception as e:  # noqa: BLE001 - one partition's failure is its error code
                    error = Errors.for_exception(e)
                    if error is Errors.OFFSET_NOT_AVAILABLE and version < 5:
                        error = Errors.LEADER_NOT_AVAILABLE
                    if error is Errors.UNKNOWN_SERVER_ERROR:
                        self.logger.error("Error while responding to offset request", exc_info=e)
                    partitions.append(_list_offsets_partition(tp.partition, error))
                    continue
                if found is None:
                    partitions.append(_list_offsets_partition(tp.partition, Errors.NONE))
                else:
                    partitions.append(ListOffsetsPartitionResponse(
                        partition_index=tp.partition, error_code=Errors.NONE.error_code, timestamp=found.timestamp,
                        offset=found.offset, leader_epoch=-1 if found.leader_epoch is None else found.leader_epoch))
            topics.append(ListOffsetsTopicResponse(name=topic.name, partitions=tuple(partitions)))
        self.send_response(request, ListOffsetsResponse(throttle_time=NO_THROTTLE, topics=tuple(topics + unauthorized)))

    def _handle_list_offset_request_v0(self, request: Request) -> list[ListOffsetsTopicResponseV0]:
        """KafkaApis.handleListOffsetRequestV0: up to ``max_num_offsets`` offsets per partition,
        newest first, from the segments' base offsets and last-modified times (Log's
        ``legacy_fetch_offsets_before``), a consumer's capped at the high watermark."""
        ListOffsetsTopicResponseV0 = _answer_class("list_offsets.v0.response", "ListOffsetsTopicResponse")  # noqa: N806
        ListOffsetsPartitionResponseV0 = _answer_class("list_offsets.v0.response",  # noqa: N806
                                                       "ListOffsetsPartitionResponse")
        body = request.body
        replica_id = int(body.replica_id)
        describable = None
        if self.authorizer is not None:
            describable = self.auth_helper.filter_by_authorized(request.context, AclOperation.DESCRIBE,
                                                                ResourceType.TOPIC, body.topics, _name_of)
        topics = []
        unauthorized = []
        for topic in body.topics:
            if describable is not None and topic.name not in describable:
                unauthorized.append(ListOffsetsTopicResponseV0(name=topic.name, partitions=tuple([
                    ListOffsetsPartitionResponseV0(partition_index=p.partition_index,
                                                   error_code=Errors.TOPIC_AUTHORIZATION_FAILED.error_code)
                    for p in topic.partitions])))
                continue
            partitions = []
            for p in topic.partitions:
                tp = TopicPartition(topic.name, int(p.partition_index))
                try:
                    offsets = self.replica_manager.legacy_fetch_offsets_for_timestamp(
                        tp, int(p.timestamp), int(p.max_num_offsets),
                        is_from_consumer=replica_id == CONSUMER_REPLICA_ID,
                        fetch_only_from_leader=replica_id != DEBUGGING_REPLICA_ID)
                except Exception as e:  # noqa: BLE001 - one partition's failure is its error code
                    error = Errors.for_exception(e)
                    if error in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_LEADER_OR_FOLLOWER,
                                 Errors.KAFKA_STORAGE_ERROR):
                        self.logger.debug("Offset request with correlation id %d from client %s on partition %s "
                                          "failed due to %s", request.correlation_id, request.header.client_id, tp, e)
                    else:
                        self.logger.error("Error while responding to offset request", exc_info=e)
                    partitions.append(ListOffsetsPartitionResponseV0(partition_index=tp.partition,
                                                                     error_code=error.error_code))
                    continue
                partitions.append(ListOffsetsPartitionResponseV0(
                    partition_index=tp.partition, error_code=Errors.NONE.error_code,
                    old_style_offsets=tuple(offsets)))
            topics.append(ListOffsetsTopicResponseV0(name=topic.name, partitions=tuple(partitions)))
        return topics + unauthorized

    # ------------------------------------------------------------------ OffsetForLeaderEpoch

    @staticmethod
    @error_response_of(ApiKeys.OFFSET_FOR_LEADER_EPOCH)
    def offset_for_leader_epoch_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=tuple([
            OffsetForLeaderTopicResult(topic=t.topic, partitions=tuple([
                LeaderEpochEndOffset(error_code=error.error_code, partition=p.partition) for p in t.partitions]))
            for t in request.body.topics]))

    def handle_offset_for_leader_epoch_request(self, request: Request) -> None:
        """Where each asked-for leader epoch ends in this leader's log (KIP-101): the end offset
        of the largest epoch <= the one asked about, with that epoch (v1+).

        As in Kafka 2.8, only the leader answers (NOT_LEADER_OR_FOLLOWER elsewhere), whoever
        asks: followers truncating (v3+ carry their replica_id, which 2.8 does not look at)
        and consumers checking for truncation after a leader change (KIP-320). A
        ``current_leader_epoch`` (v2+) older than this broker's is FENCED_LEADER_EPOCH, a newer
        one UNKNOWN_LEADER_EPOCH; a partition this broker does not host is NOT_LEADER_OR_FOLLOWER
        if the cluster knows it and UNKNOWN_TOPIC_OR_PARTITION otherwise. An epoch older than
        any the leader knows gets leader epoch and end offset -1.
        """
        body = request.body
        authorized = None
        if self.authorizer is not None and not self.auth_helper.authorize(
                request.context, AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME, log_if_denied=False):
            # Not a broker: a consumer checking for truncation needs Describe on the topics.
            authorized = self.auth_helper.filter_by_authorized(request.context, AclOperation.DESCRIBE,
                                                               ResourceType.TOPIC, [t.topic for t in body.topics])
        # (the current leader epoch from v2)
        requested = [(TopicPartition(t.topic, int(p.partition)),
                      int(p.current_leader_epoch) if request.api_version >= 2 else -1,
                      int(p.leader_epoch)) for t in body.topics for p in t.partitions
                     if authorized is None or t.topic in authorized]
        end_offsets = self.replica_manager.last_offset_for_leader_epoch(requested)
        topics = []
        unauthorized = []
        for t in body.topics:
            if authorized is not None and t.topic not in authorized:
                unauthorized.append(OffsetForLeaderTopicResult(topic=t.topic, partitions=tuple([
                    LeaderEpochEndOffset(error_code=Errors.TOPIC_AUTHORIZATION_FAILED.error_code,
                                         partition=int(p.partition)) for p in t.partitions])))
                continue
            partitions = []
            for p in t.partitions:
                answer = end_offsets[TopicPartition(t.topic, int(p.partition))]
                partitions.append(LeaderEpochEndOffset(error_code=answer.error.error_code, partition=int(p.partition),
                                                       leader_epoch=answer.leader_epoch, end_offset=answer.end_offset))
            topics.append(OffsetForLeaderTopicResult(topic=t.topic, partitions=tuple(partitions)))
        topics += unauthorized
        self.send_response(request, OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=tuple(topics)))

    # ------------------------------------------------------------------ DeleteRecords

    @staticmethod
    @error_response_of(ApiKeys.DELETE_RECORDS)
    def delete_records_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return DeleteRecordsResponse(throttle_time=NO_THROTTLE, topics=tuple([
            DeleteRecordsTopicResult(name=t.name, partitions=tuple([DeleteRecordsPartitionResult(
                partition_index=p.partition_index, low_watermark=-1, error_code=error.error_code)
                for p in t.partitions]))
            for t in request.body.topics]))

    def handle_delete_records_request(self, request: Request) -> None:
        body = request.body
        early: dict[TopicPartition, tuple[int, Errors]] = {}
        offsets: dict[TopicPartition, int] = {}
        deletable = None
        if self.authorizer is not None:
            deletable = self.auth_helper.filter_by_authorized(request.context, AclOperation.DELETE,
                                                              ResourceType.TOPIC, body.topics, _name_of)
        for topic in body.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.name, int(p.partition_index))
                if deletable is not None and topic.name not in deletable:
                    early[tp] = (-1, Errors.TOPIC_AUTHORIZATION_FAILED)
                elif not self.metadata_cache.contains(tp):
                    early[tp] = (-1, Errors.UNKNOWN_TOPIC_OR_PARTITION)
                else:
                    offsets[tp] = int(p.offset)

        def send_response_callback(results: Mapping[TopicPartition, Any]) -> None:
            merged = {tp: (r.low_watermark, r.error) for tp, r in results.items()}
            merged.update(early)
            self.send_response(request, DeleteRecordsResponse(throttle_time=NO_THROTTLE, topics=tuple([
                DeleteRecordsTopicResult(name=topic, partitions=tuple([DeleteRecordsPartitionResult(
                    partition_index=index, low_watermark=low_watermark, error_code=error.error_code)
                    for index, (low_watermark, error) in parts]))
                for topic, parts in topics_of(merged.items())])))

        if not offsets:
            send_response_callback({})
        else:
            self.replica_manager.delete_records(millis(body.timeout), offsets,
                                                self.answering(request, send_response_callback))

    # ------------------------------------------------------------------ InitProducerId

    @staticmethod
    @error_response_of(ApiKeys.INIT_PRODUCER_ID)
    def init_producer_id_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return InitProducerIdResponse(throttle_time=NO_THROTTLE, error_code=error.error_code,
                                      producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH)

    def handle_init_producer_id_request(self, request: Request) -> None:
        body = request.body
        if self.authorizer is not None:
            # A transactional producer needs Write on its transactional id; an idempotent one
            # IdempotentWrite on the cluster, or Write on some topic.
            helper = self.auth_helper
            if body.transactional_id is not None:
                if not helper.authorize(request.context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                                        body.transactional_id):
                    self.send_error_response(request, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
                    return
            elif not helper.authorize(request.context, AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER,
                                      CLUSTER_NAME, True, False) and \
                    not helper.authorize_by_resource_type(request.context, AclOperation.WRITE, ResourceType.TOPIC):
                self.send_error_response(request, Errors.CLUSTER_AUTHORIZATION_FAILED)
                return
        producer_id, producer_epoch = NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        if request.api_version >= 3:  # (KIP-360: a producer may send its id and epoch from v3)
            producer_id, producer_epoch = int(body.producer_id), int(body.producer_epoch)
        if (producer_id == NO_PRODUCER_ID) != (producer_epoch == NO_PRODUCER_EPOCH):
            self.send_error_response(request, Errors.INVALID_REQUEST)
            return
        # The transaction coordinator answers, for idempotent producers too (a fresh id, epoch 0).
        self._txn.init_producer_id(request, producer_id, producer_epoch)

    def write_txn_markers(self, markers: Any, callback: Callable[..., None]) -> None:
        """What a WriteTxnMarkers request does, without the request: the transaction coordinator's
        markers for partitions this broker leads (server/kafka_apis_txn.py)."""
        self._txn.write_txn_markers(markers, callback)

    # ------------------------------------------------------------------ DescribeCluster

    @staticmethod
    @error_response_of(ApiKeys.DESCRIBE_CLUSTER)
    def describe_cluster_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return DescribeClusterResponse(throttle_time=NO_THROTTLE, error_code=error.error_code, error_message=message,
                                       cluster_id="", brokers=())

    def handle_describe_cluster(self, request: Request) -> None:
        listener = request.context.listener_name
        controller_id = self.controller_id_for_clients()
        cluster_authorized_operations = AUTHORIZED_OPERATIONS_OMITTED
        if request.body.include_cluster_authorized_operations:
            if self.auth_helper.authorize(request.context, AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
                cluster_authorized_operations = self.auth_helper.authorized_operations(
                    request, ResourceType.CLUSTER, CLUSTER_NAME)
            else:
                cluster_authorized_operations = 0
        self.send_response(request, DescribeClusterResponse(
            throttle_time=NO_THROTTLE, error_code=Errors.NONE.error_code, cluster_id=self.cluster_id,
            controller_id=NO_CONTROLLER_ID if controller_id is None else controller_id,
            brokers=tuple([DescribeClusterBroker(broker_id=n.id, host=n.host, port=n.port, rack=n.rack)
                           for n in sorted(self.metadata_cache.get_alive_broker_nodes(listener), key=lambda n: n.id)]),
            cluster_authorized_operations=cluster_authorized_operations))

    # ------------------------------------------------------------------ from the controller

    def _is_broker_epoch_stale(self, broker_epoch_in_request: int) -> bool:
        # A controller older than KIP-380 sends no epoch. A newer epoch than ours is possible when
        # the controller saw our re-registration before we did; only an older one is stale.
        if broker_epoch_in_request == UNKNOWN_BROKER_EPOCH:
            return False
        return broker_epoch_in_request < self.zk_controller.broker_epoch

    @staticmethod
    @error_response_of(ApiKeys.LEADER_AND_ISR)
    def leader_and_isr_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        states = leader_and_isr_partition_states(request.body)
        return build_leader_and_isr_response(
            request.api_version, error, {TopicPartition(s.topic_name, s.partition_index): error for s in states})

    def handle_leader_and_isr_request(self, request: Request) -> None:
        body = request.body
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        broker_epoch = int(body.broker_epoch) if request.api_version >= 2 else UNKNOWN_BROKER_EPOCH
        if self._is_broker_epoch_stale(broker_epoch):
            self.logger.info("Received LeaderAndIsr request with broker epoch %d smaller than the current broker "
                             "epoch %d", broker_epoch, self.zk_controller.broker_epoch)
            self.send_error_response(request, Errors.STALE_BROKER_EPOCH)
            return
        response = self.replica_manager.become_leader_or_follower(request.correlation_id, body,
                                                                  self._on_leadership_change)
        self.send_response(request, response)

    def _on_leadership_change(self, updated_leaders: Iterable[Any], updated_followers: Iterable[Any]) -> None:
        # RequestHandlerHelper.onLeadershipChange: the group coordinator loads the groups of the
        # __consumer_offsets partitions this broker now leads and drops those it no longer does;
        # the transaction coordinator does the same with __transaction_state.
        if self.txn_coordinator is not None:
            for partition in updated_leaders:
                if partition.topic == "__transaction_state":
                    self.txn_coordinator.on_election(partition.partition_id, partition.get_leader_epoch())
            for partition in updated_followers:
                if partition.topic == "__transaction_state":
                    self.txn_coordinator.on_resignation(partition.partition_id, partition.get_leader_epoch())
        if self.group_coordinator is not None:
            for partition in updated_leaders:
                if partition.topic == "__consumer_offsets":
                    self.group_coordinator.on_election(partition.partition_id, partition.get_leader_epoch())
            for partition in updated_followers:
                if partition.topic == "__consumer_offsets":
                    self.group_coordinator.on_resignation(partition.partition_id, partition.get_leader_epoch())

    @staticmethod
    @error_response_of(ApiKeys.STOP_REPLICA)
    def stop_replica_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return build_stop_replica_response(request.api_version, error,
                                           {tp: error for tp in stop_replica_partition_states(request.body)})

    def handle_stop_replica_request(self, request: Request) -> None:
        body = request.body
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        broker_epoch = int(body.broker_epoch) if request.api_version >= 1 else UNKNOWN_BROKER_EPOCH
        if self._is_broker_epoch_stale(broker_epoch):
            self.logger.info("Received StopReplica request with broker epoch %d smaller than the current broker "
                             "epoch %d", broker_epoch, self.zk_controller.broker_epoch)
            self.send_response(request, build_stop_replica_response(request.api_version,
                                                                    Errors.STALE_BROKER_EPOCH, {}))
            return
        partition_states = stop_replica_partition_states(body)
        result, error = self.replica_manager.stop_replicas(request.correlation_id, int(body.controller_id),
                                                           int(body.controller_epoch), broker_epoch,
                                                           partition_states)
        # A reassignment away from this broker sends no LeaderAndIsr to it, only this: drop
        # the transactional ids of a deleted __transaction_state replica here,
        if self.txn_coordinator is not None:
            for tp, partition_error in result.items():
                state = partition_states.get(tp)
                if (partition_error is Errors.NONE and tp.topic == "__transaction_state" and state is not None
                        and state.delete_partition):
                    self.txn_coordinator.on_resignation(
                        tp.partition, state.leader_epoch if state.leader_epoch >= 0 else None)
        # and the groups of a deleted __consumer_offsets replica.
        if self.group_coordinator is not None:
            for tp, partition_error in result.items():
                state = partition_states.get(tp)
                if (partition_error is Errors.NONE and tp.topic == "__consumer_offsets" and state is not None
                        and state.delete_partition):
                    self.group_coordinator.on_resignation(
                        tp.partition, state.leader_epoch if state.leader_epoch >= 0 else None)
        # Fetch sessions holding a partition that left are closed (server/fetch_session.py).
        self.fetch_manager.cache.remove_sessions_of(tp for tp, e in result.items() if e is Errors.NONE)
        self.send_response(request, build_stop_replica_response(request.api_version, error, result))
        try:
            self.replica_manager.replica_fetcher_manager.shutdown_idle_fetcher_threads()
        except Exception:  # noqa: BLE001 - housekeeping only
            self.logger.exception("Error shutting down idle fetcher threads")

    @staticmethod
    @error_response_of(ApiKeys.UPDATE_METADATA)
    def update_metadata_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return _answer_class("update_metadata.v7.response", "UpdateMetadataResponse")(error_code=error.error_code)

    def handle_update_metadata_request(self, request: Request) -> None:
        UpdateMetadataResponse = _answer_class("update_metadata.v7.response", "UpdateMetadataResponse")  # noqa: N806
        body = request.body
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        broker_epoch = int(body.broker_epoch) if request.api_version >= 5 else UNKNOWN_BROKER_EPOCH
        if self._is_broker_epoch_stale(broker_epoch):
            self.logger.info("Received update metadata request with broker epoch %d smaller than the current broker "
                             "epoch %d", broker_epoch, self.zk_controller.broker_epoch)
            self.send_response(request, UpdateMetadataResponse(error_code=Errors.STALE_BROKER_EPOCH.error_code))
            return
        deleted_partitions = self.replica_manager.maybe_update_metadata_cache(request.correlation_id, body)
        if deleted_partitions and self.group_coordinator is not None:
            self.group_coordinator.handle_deleted_partitions(deleted_partitions)
        from kafka_py.server.zk_admin_manager import ZkAdminManager  # (ZooKeeper mode: UpdateMetadata)
        admin = self.admin_manager
        if isinstance(admin, ZkAdminManager) and admin.has_delayed_topic_operations:
            # CreateTopics/DeleteTopics waiting for these topics' metadata may now complete.
            for topic in {tp.topic for tp in _update_metadata_partitions(body)}:
                admin.try_complete_delayed_topic_operations(topic)
        if self.replica_manager.has_delayed_election_operations:
            # ElectLeaders answers waiting for these leaders may now complete.
            from kafka_py.server.delayed_operation_key import TopicPartitionOperationKey

            for tp in _update_metadata_partitions(body):
                self.replica_manager.try_complete_election(TopicPartitionOperationKey.from_topic_partition(tp))
        self.send_response(request, UpdateMetadataResponse(error_code=Errors.NONE.error_code))

    @staticmethod
    @error_response_of(ApiKeys.CONTROLLED_SHUTDOWN)
    def controlled_shutdown_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return _answer_class("controlled_shutdown.v3.response", "ControlledShutdownResponse")(
            error_code=error.error_code, remaining_partitions=())

    def handle_controlled_shutdown_request(self, request: Request) -> None:
        ControlledShutdownResponse = _answer_class("controlled_shutdown.v3.response",  # noqa: N806
                                                   "ControlledShutdownResponse")
        RemainingPartition = _answer_class("controlled_shutdown.v3.response", "RemainingPartition")  # noqa: N806
        body = request.body
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)

        def controlled_shutdown_callback(result: Any) -> None:
            if isinstance(result, BaseException):
                self.send_error_response(request, Errors.for_exception(result), str(result) or None)
                return
            self.send_response(request, ControlledShutdownResponse(
                error_code=Errors.NONE.error_code,
                remaining_partitions=tuple([RemainingPartition(topic_name=tp.topic, partition_index=tp.partition)
                                            for tp in sorted(result, key=lambda t: (t.topic, t.partition))])))

        broker_epoch = int(body.broker_epoch) if request.api_version >= 2 else UNKNOWN_BROKER_EPOCH
        self.zk_controller.controlled_shutdown(int(body.broker_id), broker_epoch,
                                            self.answering(request, controlled_shutdown_callback))

    @staticmethod
    @error_response_of(ApiKeys.ALTER_ISR)
    def alter_isr_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return _answer_class("alter_isr.v0.response", "AlterIsrResponse")(throttle_time_ms=0, error_code=error.error_code,
                                                                           topics=())

    def handle_alter_isr_request(self, request: Request) -> None:
        """A leader's ISR changes, for the controller: a ClusterAction (any principal passes
        without an authorizer); the controller's broker epoch check refuses a sender that is
        not a live broker's current registration."""
        from kafka_py.server.alter_isr_manager import alter_isr_request_partitions, build_alter_isr_response

        body = request.body
        self.auth_helper.authorize_cluster_operation(request, AclOperation.CLUSTER_ACTION)
        if not self.zk_controller.is_active:
            self.send_response(request, build_alter_isr_response(Errors.NOT_CONTROLLER))
            return
        self.zk_controller.alter_isrs(int(body.broker_id), int(body.broker_epoch),
                                      alter_isr_request_partitions(body),
                                      self.answering(request, lambda result: self.send_response(
                                          request, build_alter_isr_response(result))))

# ---------------------------------------------------------------------------- helpers

def _is_valid_topic(topic: str) -> bool:
    from kafka_py.core.zk.admin_zk_client import Topic

    try:
        Topic.validate(topic)
    except Exception:  # noqa: BLE001 - InvalidTopicException
        return False
    return True


def _name_of(item: Any) -> str:
    return item.name


def _has_transactional_records(body: Any) -> bool:
    """RequestUtils.hasTransactionalRecords: a batch of the request has its transactional bit set."""
    for topic in body.topic_data:
        for partition in topic.partition_data:
            records = partition.records
            if (records is not None and len(records) > ATTRIBUTES_OFFSET + 1
                    and _BATCH_ATTRIBUTES.unpack_from(records, ATTRIBUTES_OFFSET)[0] & TRANSACTIONAL_FLAG_MASK):
                return True
    return False


def _metadata_topic(error: Errors, topic: str, internal: bool, topic_id: Optional[uuid.UUID],
                    partitions: list[tuple]) -> tuple:
    """KafkaApis.metadataResponseTopic: a Metadata answer's topic, as a tuple (the form
    kafka_py/clients/common/protocol/fast_metadata_response.py writes from): (error, name, topic id, is internal,
    partitions, authorized operations), each partition (error, index, leader, leader epoch,
    replicas, ISR, offline replicas)."""
    return (error, topic, topic_id, internal, partitions, AUTHORIZED_OPERATIONS_OMITTED)


def _partition_index(partition: Any) -> int:
    return partition.partition_index


def _produce_response(statuses: Mapping[TopicPartition, PartitionResponse], throttle_time_ms: int = 0
                      ) -> ProduceResponse:
    """A ProduceResponse carrying one answer per partition, grouped by topic, as objects (for
    versions before 3; later versions are written without objects, ``_send_produce_response``)."""
    return new_entity(ProduceResponse, throttle_time=throttle_time_ms, responses=tuple([
        TopicProduceResponse(name=topic, partition_responses=tuple([
            new_entity(PartitionProduceResponse, index=index, error_code=s.error, base_offset=s.base_offset,
                       log_append_time=s.log_append_time, log_start_offset=s.log_start_offset)
            for index, s in partitions]))
        for topic, partitions in topics_of(statuses.items())]))


_BATCH_LENGTH = struct.Struct(">i")
_BATCH_ATTRIBUTES = struct.Struct(">h")


def _validate_produce_records(version: int, records: Any) -> MemoryRecords:
    """ProduceRequest.validateRecords: v3+ carries exactly one magic-2 batch per partition, and
    ZStandard only from v7. The records stay a view of the request buffer.

    Produce v0-v2 carry message sets of format v0/v1, taken as they are, as Kafka takes them
    (it never checked their magic): LogValidator checks them and converts them to the log's
    message format.

    What every producer sends, one well-framed magic-2 batch, is recognised from three
    header fields; anything else is walked batch by batch for the precise error. (The
    batch's own integrity, CRC included, is Log's check, as in Kafka.)"""
    if version < 3:
        return MemoryRecords.EMPTY if records is None else MemoryRecords(records)
    if (records is not None and len(records) >= RECORD_BATCH_OVERHEAD
            and _BATCH_LENGTH.unpack_from(records, LENGTH_OFFSET)[0] + LOG_OVERHEAD == len(records)
            and records[MAGIC_OFFSET] == CURRENT_MAGIC_VALUE
            and (version >= 7 or _BATCH_ATTRIBUTES.unpack_from(records, ATTRIBUTES_OFFSET)[0]
                 & COMPRESSION_CODEC_MASK != CompressionType.ZSTD.id)):
        return MemoryRecords(records)
    if records is None:
        raise InvalidRecordException(f"Produce requests with version {version} must have at least one record batch")
    memory_records = MemoryRecords(records)
    batches = memory_records.batches()
    first = next(batches, None)
    if first is None:
        raise InvalidRecordException(f"Produce requests with version {version} must have at least one record batch")
    if first.magic != CURRENT_MAGIC_VALUE:
        raise InvalidRecordException(f"Produce requests with version {version} are only allowed to contain record "
                                     "batches with magic version 2")
    if version < 7 and first.compression_type is CompressionType.ZSTD:
        raise UnsupportedCompressionTypeException(f"Produce requests with version {version} are not allowed to "
                                                  "use ZStandard compression")
    if next(batches, None) is not None:
        raise InvalidRecordException(f"Produce requests with version {version} are only allowed to contain exactly "
                                     "one record batch")
    return memory_records


def _update_metadata_partitions(body: Any) -> list[TopicPartition]:
    from kafka_py.server.metadata_cache import update_metadata_partition_states

    return [TopicPartition(s.topic_name, s.partition_index) for s in update_metadata_partition_states(body)]


__all__ = ["KafkaApis", "KafkaApisPart"]
