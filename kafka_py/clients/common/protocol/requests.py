"""Port of the constants of clients/src/main/java/org/apache/kafka/common/requests
(Kafka 2.8.2) that the broker and its tools share: ApiVersionsRequest.java,
ListOffsetsRequest.java, FetchRequest.java, AbstractControlRequest.java,
OffsetsForLeaderEpochResponse.java and MetadataResponse.java / DescribeGroupsResponse.java;
of the partition states of LeaderAndIsrRequest.java and UpdateMetadataRequest.java; of
FetchRequest.PartitionData; and of the per-partition answer of OffsetsForLeaderEpoch
(OffsetForLeaderEpochResponseData.EpochEndOffset, which a fetch's diverging epoch reuses).

Kafka keeps these on the request and response classes; kio's message classes have no
room for them, so they live here, one home each, and every module imports them.

The partition states are Kafka's generated LeaderAndIsrPartitionState and
UpdateMetadataPartitionState (LeaderAndIsrRequestData, UpdateMetadataRequestData) with
the topic name always set, independent of the request version: the controller fills
them in to build its requests (controller_channel_manager.py), the broker reads a
request's partitions into them (replica_manager.py, metadata_cache.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from typing import Optional

from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.utils.java_limits import INT_MIN

# ApiVersionsRequest.Builder: the client software an ApiVersions request names (KIP-511),
# sent by the inter-broker SASL client and by kafka-broker-api-versions. Kafka's are
# "apache-kafka-java" and AppInfoParser.getVersion().
CLIENT_SOFTWARE_NAME = "kafka-py"
CLIENT_SOFTWARE_VERSION = "2.8.2"

# ListOffsetsRequest: the special target timestamps.
EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1

# FetchRequest / ListOffsetsRequest: the replica id a consumer's request carries, and the
# one a debugging consumer's carries (it may read from a follower; kafka.api.Request's
# DebuggingConsumerId).
CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2

# AbstractControlRequest: a control request from a controller that sent no broker epoch.
UNKNOWN_BROKER_EPOCH = -1

# OffsetsForLeaderEpochResponse: no such epoch, no end offset known for it.
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1

# MetadataResponse / DescribeGroupsResponse: authorized operations not asked for.
AUTHORIZED_OPERATIONS_OMITTED = INT_MIN


@dataclass(frozen=True, slots=True)
class LeaderAndIsrPartitionState:
    """One partition of a LeaderAndIsr request, any version. The kio request classes can be
    passed to Partition directly too."""

    topic_name: str
    partition_index: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    is_new: bool = False


@dataclass(frozen=True, slots=True)
class UpdateMetadataPartitionState:
    """One partition of an UpdateMetadata request, any version: its state as the controller
    last sent it."""

    topic_name: str
    partition_index: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class PartitionData:
    """FetchRequest.PartitionData: where and how much to read from one partition.

    ``current_leader_epoch`` / ``last_fetched_epoch``: None (or -1) when the fetcher sent none.
    """

    fetch_offset: int
    log_start_offset: int
    max_bytes: int
    current_leader_epoch: Optional[int] = None
    last_fetched_epoch: Optional[int] = None


@dataclass(frozen=True, slots=True)
class EpochEndOffset:
    """OffsetForLeaderEpoch's per-partition answer (and a fetch's diverging epoch)."""

    error: Errors = Errors.NONE
    partition: int = -1
    leader_epoch: int = UNDEFINED_EPOCH
    end_offset: int = UNDEFINED_EPOCH_OFFSET

    @property
    def error_code(self) -> int:
        return self.error.code


__all__ = ["EARLIEST_TIMESTAMP", "LATEST_TIMESTAMP", "CONSUMER_REPLICA_ID", "DEBUGGING_REPLICA_ID",
           "UNKNOWN_BROKER_EPOCH", "UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET", "AUTHORIZED_OPERATIONS_OMITTED",
           "LeaderAndIsrPartitionState", "UpdateMetadataPartitionState", "PartitionData", "EpochEndOffset"]
