"""Port of clients/src/main/java/org/apache/kafka/common/protocol/ApiKeys.java (Kafka 2.8.2).

Every API Kafka 2.8.2 defines (and, from Kafka 3.0, DescribeTransactions, key 65, and
AllocateProducerIds, key 67), with the version range 2.8.2's message specs allow
(``oldest_version``/``latest_version``), the first flexible version (KIP-482),
whether it is a ClusterAction (sent only by brokers) and whether a ZooKeeper-mode
broker serves it (the spec's ``"listeners": ["zkBroker", ...]``).

What this broker accepts is narrower: an API must be in ``IMPLEMENTED_APIS``, and
its versions are 2.8.2's range intersected with the versions that have classes: kio's,
and kafka_py.clients.common.protocol.schema's for the APIs and old versions kio lacks (every version of
2.8.2's zkBroker APIs has one).
That is ``min_supported_version``/``max_supported_version``, which the
ApiVersions response advertises and ``is_version_supported`` checks.

Header versions follow Kafka's ApiMessageTypeGenerator: flexible versions use
request header v2 and response header v1, others v1 and v0, except that
ControlledShutdown v0 requests use header v0 (no client id) and ApiVersions
responses always use header v0 so that any client can read them (KIP-511).
"""
from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any

from kio.schema.index import api_key_map as _kio_api_names
from kio.schema.index import schema_name_map as _kio_schemas
from kio.static.constants import EntityType
from kio.static.primitive import i16

from kafka_py.clients.common.protocol.schema.index import schema_index as _local_schemas
from kafka_py.clients.common.protocol.schema_imports import import_schema_module


class ApiKeys(enum.IntEnum):
    """Kafka's API keys. ``ApiKeys(3) is ApiKeys.METADATA``; ``.api_name == "Metadata"``."""

    id: int
    api_name: str
    oldest_version: int
    latest_version: int
    first_flexible_version: int | None
    cluster_action: bool
    zk_broker: bool

    def __new__(
        cls,
        api_id: int,
        api_name: str,
        oldest_version: int,
        latest_version: int,
        first_flexible_version: int | None,
        cluster_action: bool,
        zk_broker: bool,
    ) -> ApiKeys:
        member = int.__new__(cls, api_id)
        member._value_ = api_id
        member.id = api_id
        member.api_name = api_name
        member.oldest_version = oldest_version
        member.latest_version = latest_version
        member.first_flexible_version = first_flexible_version
        member.cluster_action = cluster_action
        member.zk_broker = zk_broker
        return member

    # (id, name, oldest, latest, first flexible version, cluster action, zkBroker listener)
    PRODUCE = (0, "Produce", 0, 9, 9, False, True)
    FETCH = (1, "Fetch", 0, 12, 12, False, True)
    LIST_OFFSETS = (2, "ListOffsets", 0, 6, 6, False, True)
    METADATA = (3, "Metadata", 0, 11, 9, False, True)
    LEADER_AND_ISR = (4, "LeaderAndIsr", 0, 5, 4, True, True)
    STOP_REPLICA = (5, "StopReplica", 0, 3, 2, True, True)
    UPDATE_METADATA = (6, "UpdateMetadata", 0, 7, 6, True, True)
    CONTROLLED_SHUTDOWN = (7, "ControlledShutdown", 0, 3, 3, True, True)
    OFFSET_COMMIT = (8, "OffsetCommit", 0, 8, 8, False, True)
    OFFSET_FETCH = (9, "OffsetFetch", 0, 7, 6, False, True)
    FIND_COORDINATOR = (10, "FindCoordinator", 0, 3, 3, False, True)
    JOIN_GROUP = (11, "JoinGroup", 0, 7, 6, False, True)
    HEARTBEAT = (12, "Heartbeat", 0, 4, 4, False, True)
    LEAVE_GROUP = (13, "LeaveGroup", 0, 4, 4, False, True)
    SYNC_GROUP = (14, "SyncGroup", 0, 5, 4, False, True)
    DESCRIBE_GROUPS = (15, "DescribeGroups", 0, 5, 5, False, True)
    LIST_GROUPS = (16, "ListGroups", 0, 4, 3, False, True)
    SASL_HANDSHAKE = (17, "SaslHandshake", 0, 1, None, False, True)
    API_VERSIONS = (18, "ApiVersions", 0, 3, 3, False, True)
    CREATE_TOPICS = (19, "CreateTopics", 0, 7, 5, False, True)
    DELETE_TOPICS = (20, "DeleteTopics", 0, 6, 4, False, True)
    DELETE_RECORDS = (21, "DeleteRecords", 0, 2, 2, False, True)
    INIT_PRODUCER_ID = (22, "InitProducerId", 0, 4, 2, False, True)
    OFFSET_FOR_LEADER_EPOCH = (23, "OffsetForLeaderEpoch", 0, 4, 4, False, True)
    ADD_PARTITIONS_TO_TXN = (24, "AddPartitionsToTxn", 0, 3, 3, False, True)
    ADD_OFFSETS_TO_TXN = (25, "AddOffsetsToTxn", 0, 3, 3, False, True)
    END_TXN = (26, "EndTxn", 0, 3, 3, False, True)
    WRITE_TXN_MARKERS = (27, "WriteTxnMarkers", 0, 1, 1, True, True)
    TXN_OFFSET_COMMIT = (28, "TxnOffsetCommit", 0, 3, 3, False, True)
    DESCRIBE_ACLS = (29, "DescribeAcls", 0, 2, 2, False, True)
    CREATE_ACLS = (30, "CreateAcls", 0, 2, 2, False, True)
    DELETE_ACLS = (31, "DeleteAcls", 0, 2, 2, False, True)
    DESCRIBE_CONFIGS = (32, "DescribeConfigs", 0, 4, 4, False, True)
    ALTER_CONFIGS = (33, "AlterConfigs", 0, 2, 2, False, True)
    ALTER_REPLICA_LOG_DIRS = (34, "AlterReplicaLogDirs", 0, 2, 2, False, True)
    DESCRIBE_LOG_DIRS = (35, "DescribeLogDirs", 0, 2, 2, False, True)
    SASL_AUTHENTICATE = (36, "SaslAuthenticate", 0, 2, 2, False, True)
    CREATE_PARTITIONS = (37, "CreatePartitions", 0, 3, 2, False, True)
    CREATE_DELEGATION_TOKEN = (38, "CreateDelegationToken", 0, 2, 2, False, True)
    RENEW_DELEGATION_TOKEN = (39, "RenewDelegationToken", 0, 2, 2, False, True)
    EXPIRE_DELEGATION_TOKEN = (40, "ExpireDelegationToken", 0, 2, 2, False, True)
    DESCRIBE_DELEGATION_TOKEN = (41, "DescribeDelegationToken", 0, 2, 2, False, True)
    DELETE_GROUPS = (42, "DeleteGroups", 0, 2, 2, False, True)
    ELECT_LEADERS = (43, "ElectLeaders", 0, 2, 2, False, True)
    INCREMENTAL_ALTER_CONFIGS = (44, "IncrementalAlterConfigs", 0, 1, 1, False, True)
    ALTER_PARTITION_REASSIGNMENTS = (45, "AlterPartitionReassignments", 0, 0, 0, False, True)
    LIST_PARTITION_REASSIGNMENTS = (46, "ListPartitionReassignments", 0, 0, 0, False, True)
    OFFSET_DELETE = (47, "OffsetDelete", 0, 0, None, False, True)
    DESCRIBE_CLIENT_QUOTAS = (48, "DescribeClientQuotas", 0, 1, 1, False, True)
    ALTER_CLIENT_QUOTAS = (49, "AlterClientQuotas", 0, 1, 1, False, True)
    DESCRIBE_USER_SCRAM_CREDENTIALS = (50, "DescribeUserScramCredentials", 0, 0, 0, False, True)
    ALTER_USER_SCRAM_CREDENTIALS = (51, "AlterUserScramCredentials", 0, 0, 0, False, True)
    VOTE = (52, "Vote", 0, 0, 0, True, False)
    BEGIN_QUORUM_EPOCH = (53, "BeginQuorumEpoch", 0, 0, None, True, False)
    END_QUORUM_EPOCH = (54, "EndQuorumEpoch", 0, 0, None, True, False)
    DESCRIBE_QUORUM = (55, "DescribeQuorum", 0, 0, 0, True, False)
    ALTER_ISR = (56, "AlterIsr", 0, 0, 0, True, True)
    UPDATE_FEATURES = (57, "UpdateFeatures", 0, 0, 0, False, True)
    ENVELOPE = (58, "Envelope", 0, 0, 0, True, False)
    FETCH_SNAPSHOT = (59, "FetchSnapshot", 0, 0, 0, False, False)
    DESCRIBE_CLUSTER = (60, "DescribeCluster", 0, 0, 0, False, True)
    DESCRIBE_PRODUCERS = (61, "DescribeProducers", 0, 0, 0, False, True)
    BROKER_REGISTRATION = (62, "BrokerRegistration", 0, 0, 0, True, False)
    BROKER_HEARTBEAT = (63, "BrokerHeartbeat", 0, 0, 0, True, False)
    UNREGISTER_BROKER = (64, "UnregisterBroker", 0, 0, 0, False, False)
    # Kafka 3.0's (KIP-664), the one later API served here: a partition leader asks the
    # transaction coordinator with it whether a partition is part of a producer's ongoing
    # transaction before taking the transaction's first batch (docs/transactions.md).
    DESCRIBE_TRANSACTIONS = (65, "DescribeTransactions", 0, 0, 0, False, True)
    # Kafka 3.0's (KIP-730): a KRaft broker asks the active controller for a block of producer
    # ids with it. Only the KRaft controller listener serves it here (server/api_version_manager.py).
    ALLOCATE_PRODUCER_IDS = (67, "AllocateProducerIds", 0, 0, 0, True, False)

    @classmethod
    def for_id(cls, api_id: int) -> ApiKeys:
        """The API with this key; ValueError if Kafka 2.8.2 has none."""
        try:
            return cls(api_id)
        except ValueError:
            raise ValueError(f"Unexpected api key: {api_id}") from None

    @classmethod
    def has_id(cls, api_id: int) -> bool:
        return api_id in cls._value2member_map_

    def all_versions(self) -> range:
        """Every version Kafka 2.8.2 defines for this API."""
        return range(self.oldest_version, self.latest_version + 1)

    def is_flexible(self, api_version: int) -> bool:
        first = self.first_flexible_version
        return first is not None and api_version >= first

    def request_header_version(self, api_version: int) -> int:
        # Defined for any version, supported or not: the header of a request with a
        # too-new version must still parse so the broker can answer it.
        if self is ApiKeys.CONTROLLED_SHUTDOWN and api_version == 0:
            return 0
        return 2 if self.is_flexible(api_version) else 1

    def response_header_version(self, api_version: int) -> int:
        if self is ApiKeys.API_VERSIONS:
            return 0
        return 1 if self.is_flexible(api_version) else 0

    @property
    def implemented(self) -> bool:
        """Whether this broker handles the API at all."""
        return self in IMPLEMENTED_APIS

    @property
    def min_supported_version(self) -> int | None:
        supported = _SUPPORTED_RANGES.get(self)
        return supported.start if supported else None

    @property
    def max_supported_version(self) -> int | None:
        supported = _SUPPORTED_RANGES.get(self)
        return supported[-1] if supported else None

    def supported_versions(self) -> range:
        """The versions this broker parses and answers (empty when not implemented)."""
        return _SUPPORTED_RANGES.get(self, range(0))

    def is_version_supported(self, api_version: int) -> bool:
        return api_version in self.supported_versions()

    def schema_versions(self) -> range:
        """Versions of 2.8.2 for which message classes exist, implemented or not."""
        return _SCHEMA_RANGES.get(self, range(0))


# The APIs this broker serves; extend as handlers land in KafkaApis.
IMPLEMENTED_APIS: frozenset[ApiKeys] = frozenset({
    ApiKeys.PRODUCE,
    ApiKeys.FETCH,
    ApiKeys.LIST_OFFSETS,
    ApiKeys.METADATA,
    ApiKeys.LEADER_AND_ISR,
    ApiKeys.STOP_REPLICA,
    ApiKeys.UPDATE_METADATA,
    ApiKeys.CONTROLLED_SHUTDOWN,
    ApiKeys.OFFSET_COMMIT,
    ApiKeys.OFFSET_FETCH,
    ApiKeys.FIND_COORDINATOR,
    ApiKeys.JOIN_GROUP,
    ApiKeys.HEARTBEAT,
    ApiKeys.LEAVE_GROUP,
    ApiKeys.SYNC_GROUP,
    ApiKeys.DESCRIBE_GROUPS,
    ApiKeys.LIST_GROUPS,
    ApiKeys.API_VERSIONS,
    ApiKeys.CREATE_TOPICS,
    ApiKeys.DELETE_TOPICS,
    ApiKeys.DELETE_RECORDS,
    ApiKeys.INIT_PRODUCER_ID,
    ApiKeys.ADD_PARTITIONS_TO_TXN,
    ApiKeys.ADD_OFFSETS_TO_TXN,
    ApiKeys.END_TXN,
    ApiKeys.WRITE_TXN_MARKERS,
    ApiKeys.TXN_OFFSET_COMMIT,
    ApiKeys.DESCRIBE_CONFIGS,
    ApiKeys.ALTER_CONFIGS,
    ApiKeys.CREATE_PARTITIONS,
    ApiKeys.DELETE_GROUPS,
    ApiKeys.INCREMENTAL_ALTER_CONFIGS,
    ApiKeys.ELECT_LEADERS,
    ApiKeys.ALTER_PARTITION_REASSIGNMENTS,
    ApiKeys.LIST_PARTITION_REASSIGNMENTS,
    ApiKeys.ALTER_REPLICA_LOG_DIRS,
    ApiKeys.DESCRIBE_LOG_DIRS,
    ApiKeys.OFFSET_DELETE,
    ApiKeys.DESCRIBE_CLUSTER,
    ApiKeys.OFFSET_FOR_LEADER_EPOCH,
    ApiKeys.ALTER_ISR,
    ApiKeys.SASL_HANDSHAKE,
    ApiKeys.SASL_AUTHENTICATE,
    ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS,
    ApiKeys.ALTER_USER_SCRAM_CREDENTIALS,
    ApiKeys.DESCRIBE_ACLS,
    ApiKeys.CREATE_ACLS,
    ApiKeys.DELETE_ACLS,
    ApiKeys.DESCRIBE_CLIENT_QUOTAS,
    ApiKeys.ALTER_CLIENT_QUOTAS,
    ApiKeys.DESCRIBE_TRANSACTIONS,
    ApiKeys.CREATE_DELEGATION_TOKEN,
    ApiKeys.RENEW_DELEGATION_TOKEN,
    ApiKeys.EXPIRE_DELEGATION_TOKEN,
    ApiKeys.DESCRIBE_DELEGATION_TOKEN,
    ApiKeys.UPDATE_FEATURES,
})


# The delegation token APIs (KIP-48). 2.8.2's specs give them the zkBroker listener alone (the
# tokens live in ZooKeeper): a KRaft broker neither lists them nor reads a request of one
# (server/api_version_manager.py's broker_apis).
DELEGATION_TOKEN_APIS: frozenset[ApiKeys] = frozenset({
    ApiKeys.CREATE_DELEGATION_TOKEN,
    ApiKeys.RENEW_DELEGATION_TOKEN,
    ApiKeys.EXPIRE_DELEGATION_TOKEN,
    ApiKeys.DESCRIBE_DELEGATION_TOKEN,
})


def _schema_range(api: ApiKeys) -> range:
    """2.8.2's versions intersected with those that have request and response classes
    (kafka_py.clients.common.protocol.schema's, or kio's for the versions it has)."""
    available = set(_local_schemas.get(api.id, ()))
    name = _kio_api_names.get(api.id)
    by_version = _kio_schemas.get(name, {}) if name else {}
    available.update(
        version for version, entities in by_version.items()
        if EntityType.request in entities and EntityType.response in entities
    )
    versions = [v for v in api.all_versions() if v in available]
    if not versions:
        return range(0)
    # Both sources hold contiguous ranges; guard the assumption anyway.
    if versions != list(range(versions[0], versions[-1] + 1)):
        raise AssertionError(f"non-contiguous message versions for {api.name}: {versions}")
    return range(versions[0], versions[-1] + 1)


_SCHEMA_RANGES: dict[ApiKeys, range] = {api: _schema_range(api) for api in ApiKeys}
_SUPPORTED_RANGES: dict[ApiKeys, range] = {
    api: _SCHEMA_RANGES[api] for api in IMPLEMENTED_APIS if _SCHEMA_RANGES[api]
}


def api_versions_response_keys(
    response_version: int, apis: Iterable[ApiKeys] | None = None
) -> tuple[Any, ...]:
    """The ``api_keys`` entries of an ApiVersions response of ``response_version``.

    kio's ``ApiVersion`` objects, one per API with supported versions, by key;
    ``apis`` defaults to every implemented API.
    """
    module = import_schema_module(f"kio.schema.api_versions.v{response_version}.response")
    chosen = IMPLEMENTED_APIS if apis is None else apis
    return tuple(
        module.ApiVersion(
            api_key=i16(api.id),
            min_version=i16(api.supported_versions().start),
            max_version=i16(api.supported_versions()[-1]),
        )
        for api in sorted(chosen)
        if api.supported_versions()
    )
