"""Port of raft/src/main/java/org/apache/kafka/raft/RaftUtil.java (Kafka 2.8.2), with the
``singletonRequest`` / ``singletonResponse`` builders of VoteRequest.java,
VoteResponse.java, BeginQuorumEpochRequest.java, BeginQuorumEpochResponse.java,
EndQuorumEpochRequest.java, EndQuorumEpochResponse.java and DescribeQuorumRequest.java /
DescribeQuorumResponse.java.

The raft APIs carry kio's message classes of the versions Kafka 2.8.2 speaks: Vote v0,
BeginQuorumEpoch v0, EndQuorumEpoch v0, DescribeQuorum v0 and Fetch v12 (the first Fetch
with ClusterId, LastFetchedEpoch, DivergingEpoch and CurrentLeader). kio is generated from a
newer Kafka; these classes have 2.8.2's wire format, with some fields renamed: Vote's
CandidateEpoch and CandidateId are ``replica_epoch`` and ``replica_id``, Fetch's MaxWaitMs
is ``max_wait`` (a timedelta), its PartitionResponses ``partitions``, its Partition
``partition_index``, its RecordSet ``records`` and its ThrottleTimeMs ``throttle_time``.

Every request names exactly one topic partition, the metadata log's; anything else is
INVALID_REQUEST until raft runs more than one log (multi-raft).
"""
from __future__ import annotations

import datetime
import logging
from typing import Any, Optional, Sequence

from kio.schema.begin_quorum_epoch.v0 import request as begin_request
from kio.schema.begin_quorum_epoch.v0 import response as begin_response
from kio.schema.describe_quorum.v0 import request as describe_request
from kio.schema.describe_quorum.v0 import response as describe_response
from kio.schema.end_quorum_epoch.v0 import request as end_request
from kio.schema.end_quorum_epoch.v0 import response as end_response
from kio.schema.fetch.v12 import request as fetch_request
from kio.schema.fetch.v12 import response as fetch_response
from kio.schema.fetch_snapshot.v0 import request as fetch_snapshot_request
from kio.schema.fetch_snapshot.v0 import response as fetch_snapshot_response
from kio.schema.vote.v0 import request as vote_request
from kio.schema.vote.v0 import response as vote_response

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch

logger = logging.getLogger(__name__)

VoteRequestData = vote_request.VoteRequest
VoteResponseData = vote_response.VoteResponse
BeginQuorumEpochRequestData = begin_request.BeginQuorumEpochRequest
BeginQuorumEpochResponseData = begin_response.BeginQuorumEpochResponse
EndQuorumEpochRequestData = end_request.EndQuorumEpochRequest
EndQuorumEpochResponseData = end_response.EndQuorumEpochResponse
DescribeQuorumRequestData = describe_request.DescribeQuorumRequest
DescribeQuorumResponseData = describe_response.DescribeQuorumResponse
FetchRequestData = fetch_request.FetchRequest
FetchResponseData = fetch_response.FetchResponse
FetchSnapshotRequestData = fetch_snapshot_request.FetchSnapshotRequest
FetchSnapshotResponseData = fetch_snapshot_response.FetchSnapshotResponse

_ZERO = datetime.timedelta(0)


def api_key_of(message: Any) -> ApiKeys:
    return ApiKeys.for_id(int(message.__api_key__))


def error_response(api_key: ApiKeys, error: Errors) -> Any:
    """A response carrying only a top-level error (a request that failed to send, say)."""
    code = error.error_code
    if api_key is ApiKeys.VOTE:
        return VoteResponseData(error_code=code, topics=())
    if api_key is ApiKeys.BEGIN_QUORUM_EPOCH:
        return BeginQuorumEpochResponseData(error_code=code, topics=())
    if api_key is ApiKeys.END_QUORUM_EPOCH:
        return EndQuorumEpochResponseData(error_code=code, topics=())
    if api_key is ApiKeys.FETCH:
        return FetchResponseData(throttle_time=_ZERO, error_code=code, responses=())
    if api_key is ApiKeys.FETCH_SNAPSHOT:
        return FetchSnapshotResponseData(throttle_time=_ZERO, error_code=code, topics=())
    raise ValueError(f"Received response for unexpected request type: {api_key}")


# ---- Vote --------------------------------------------------------------------------------------

def vote_request_for(tp: TopicPartition, candidate_epoch: int, candidate_id: int, last_epoch: int,
                     last_epoch_end_offset: int, cluster_id: Optional[str] = None) -> VoteRequestData:
    return VoteRequestData(cluster_id=cluster_id, topics=(vote_request.TopicData(
        topic_name=tp.topic, partitions=(vote_request.PartitionData(
            partition_index=tp.partition, replica_epoch=candidate_epoch, replica_id=candidate_id,
            last_offset_epoch=last_epoch, last_offset=last_epoch_end_offset),)),))


def vote_response_for(top_level_error: Errors, tp: TopicPartition, partition_level_error: Errors,
                      leader_epoch: int, leader_id: int, vote_granted: bool) -> VoteResponseData:
    return VoteResponseData(error_code=top_level_error.error_code, topics=(vote_response.TopicData(
        topic_name=tp.topic, partitions=(vote_response.PartitionData(
            partition_index=tp.partition, error_code=partition_level_error.error_code, leader_id=leader_id,
            leader_epoch=leader_epoch, vote_granted=vote_granted),)),))


# ---- BeginQuorumEpoch --------------------------------------------------------------------------

def begin_quorum_epoch_request_for(tp: TopicPartition, leader_epoch: int, leader_id: int,
                                   cluster_id: Optional[str] = None) -> BeginQuorumEpochRequestData:
    return BeginQuorumEpochRequestData(cluster_id=cluster_id, topics=(begin_request.TopicData(
        topic_name=tp.topic, partitions=(begin_request.PartitionData(
            partition_index=tp.partition, leader_id=leader_id, leader_epoch=leader_epoch),)),))


def begin_quorum_epoch_response_for(top_level_error: Errors, tp: TopicPartition, partition_level_error: Errors,
                                    leader_epoch: int, leader_id: int) -> BeginQuorumEpochResponseData:
    return BeginQuorumEpochResponseData(error_code=top_level_error.error_code, topics=(begin_response.TopicData(
        topic_name=tp.topic, partitions=(begin_response.PartitionData(
            partition_index=tp.partition, error_code=partition_level_error.error_code, leader_id=leader_id,
            leader_epoch=leader_epoch),)),))


# ---- EndQuorumEpoch ----------------------------------------------------------------------------

def end_quorum_epoch_request_for(tp: TopicPartition, leader_epoch: int, leader_id: int,
                                 preferred_successors: Sequence[int],
                                 cluster_id: Optional[str] = None) -> EndQuorumEpochRequestData:
    return EndQuorumEpochRequestData(cluster_id=cluster_id, topics=(end_request.TopicData(
        topic_name=tp.topic, partitions=(end_request.PartitionData(
            partition_index=tp.partition, leader_id=leader_id, leader_epoch=leader_epoch,
            preferred_successors=tuple(preferred_successors)),)),))


def end_quorum_epoch_response_for(top_level_error: Errors, tp: TopicPartition, partition_level_error: Errors,
                                  leader_epoch: int, leader_id: int) -> EndQuorumEpochResponseData:
    return EndQuorumEpochResponseData(error_code=top_level_error.error_code, topics=(end_response.TopicData(
        topic_name=tp.topic, partitions=(end_response.PartitionData(
            partition_index=tp.partition, error_code=partition_level_error.error_code, leader_id=leader_id,
            leader_epoch=leader_epoch),)),))


# ---- DescribeQuorum ----------------------------------------------------------------------------

def describe_quorum_request_for(tp: TopicPartition) -> DescribeQuorumRequestData:
    return DescribeQuorumRequestData(topics=(describe_request.TopicData(
        topic_name=tp.topic, partitions=(describe_request.PartitionData(partition_index=tp.partition),)),))


def describe_quorum_response_for(tp: TopicPartition, leader_id: int, leader_epoch: int, high_watermark: int,
                                 voter_states: dict[int, int], observer_states: dict[int, int]
                                 ) -> DescribeQuorumResponseData:
    def replicas(states: dict[int, int]) -> tuple:
        return tuple(describe_response.ReplicaState(replica_id=node_id, log_end_offset=end_offset)
                     for node_id, end_offset in sorted(states.items()))

    return DescribeQuorumResponseData(error_code=Errors.NONE.error_code, topics=(describe_response.TopicData(
        topic_name=tp.topic, partitions=(describe_response.PartitionData(
            partition_index=tp.partition, error_code=Errors.NONE.error_code, leader_id=leader_id,
            leader_epoch=leader_epoch, high_watermark=high_watermark, current_voters=replicas(voter_states),
            observers=replicas(observer_states)),)),))


def describe_quorum_partition_error_response(request: DescribeQuorumRequestData, error: Errors
                                             ) -> DescribeQuorumResponseData:
    """DescribeQuorumRequest.getPartitionLevelErrorResponse: ``error`` for every partition asked."""
    return DescribeQuorumResponseData(error_code=Errors.NONE.error_code, topics=tuple(
        describe_response.TopicData(topic_name=topic.topic_name, partitions=tuple(
            describe_response.PartitionData(partition_index=p.partition_index, error_code=error.error_code,
                                            leader_id=-1, leader_epoch=-1, high_watermark=-1, current_voters=(),
                                            observers=()) for p in topic.partitions))
        for topic in request.topics))


def describe_quorum_top_level_error_response(error: Errors) -> DescribeQuorumResponseData:
    return DescribeQuorumResponseData(error_code=error.error_code, topics=())


# ---- Fetch -------------------------------------------------------------------------------------

def singleton_fetch_request(tp: TopicPartition, current_leader_epoch: int, fetch_offset: int,
                            last_fetched_epoch: int, replica_id: int, max_wait_ms: int, max_bytes: int,
                            cluster_id: Optional[str]) -> FetchRequestData:
    partition = fetch_request.FetchPartition(
        partition=tp.partition, current_leader_epoch=current_leader_epoch, fetch_offset=fetch_offset,
        last_fetched_epoch=last_fetched_epoch, log_start_offset=-1, partition_max_bytes=0)
    return FetchRequestData(
        cluster_id=cluster_id, replica_id=replica_id, max_wait=datetime.timedelta(milliseconds=max_wait_ms),
        min_bytes=0, max_bytes=max_bytes, topics=(fetch_request.FetchTopic(topic=tp.topic, partitions=(partition,)),),
        forgotten_topics_data=())


def singleton_fetch_response(tp: TopicPartition, top_level_error: Errors, error: Errors, records: Any,
                             log_start_offset: int, high_watermark: int, leader_epoch: int, leader_id: int,
                             diverging_epoch: Optional[OffsetAndEpoch] = None,
                             snapshot_id: Optional[OffsetAndEpoch] = None) -> FetchResponseData:
    """A Fetch response for one partition; ``records`` is the bytes of the batches (or b"").
    ``snapshot_id`` (Kafka 3.0) tells the follower which snapshot to fetch first."""
    diverging = (fetch_response.EpochEndOffset() if diverging_epoch is None else
                 fetch_response.EpochEndOffset(epoch=diverging_epoch.epoch, end_offset=diverging_epoch.offset))
    snapshot = (fetch_response.SnapshotId() if snapshot_id is None else
                fetch_response.SnapshotId(end_offset=snapshot_id.offset, epoch=snapshot_id.epoch))
    partition = fetch_response.PartitionData(
        partition_index=tp.partition, error_code=error.error_code, high_watermark=high_watermark,
        log_start_offset=log_start_offset, diverging_epoch=diverging,
        current_leader=fetch_response.LeaderIdAndEpoch(leader_id=leader_id, leader_epoch=leader_epoch),
        snapshot_id=snapshot, aborted_transactions=None, records=records)
    return FetchResponseData(throttle_time=_ZERO, error_code=top_level_error.error_code, responses=(
        fetch_response.FetchableTopicResponse(topic=tp.topic, partitions=(partition,)),))


def max_wait_ms(request: FetchRequestData) -> int:
    return int(request.max_wait.total_seconds() * 1000)


# ---- topic partition checks --------------------------------------------------------------------

def _has_one(topics: Sequence[Any], name_of: Any, partitions_of: Any, index_of: Any, tp: TopicPartition) -> bool:
    if len(topics) != 1 or name_of(topics[0]) != tp.topic:
        return False
    partitions = partitions_of(topics[0])
    return len(partitions) == 1 and index_of(partitions[0]) == tp.partition


def has_valid_topic_partition(data: Any, tp: TopicPartition) -> bool:
    """True if ``data`` (any raft request or response) is about ``tp`` and nothing else."""
    if isinstance(data, FetchSnapshotRequestData):
        return _has_one(data.topics, lambda t: t.name, lambda t: t.partitions, lambda p: p.partition, tp)
    if isinstance(data, FetchRequestData):
        return _has_one(data.topics, lambda t: t.topic, lambda t: t.partitions, lambda p: p.partition, tp)
    if isinstance(data, FetchResponseData):
        return _has_one(data.responses, lambda t: t.topic, lambda t: t.partitions, lambda p: p.partition_index, tp)
    return _has_one(data.topics, lambda t: t.topic_name, lambda t: t.partitions, lambda p: p.partition_index, tp)


def error_of(code: Any) -> Errors:
    """The Errors member of a kio error code."""
    return Errors.for_code(int(code))


# ---- FetchSnapshot (Kafka 3.0's FetchSnapshotResponse.singleton) --------------------------------

def fetch_snapshot_partition_response(tp: TopicPartition, error: Errors, leader_epoch: int,
                                      leader_id: int, snapshot_id: Optional[OffsetAndEpoch] = None,
                                      size: int = -1, position: int = -1,
                                      unaligned_records: bytes = b"") -> FetchSnapshotResponseData:
    """A FetchSnapshot answer with one partition carrying ``error`` and the current leader, and,
    on success, the snapshot's id and size and the chunk at ``position``."""
    r = fetch_snapshot_response
    snapshot = (r.SnapshotId(end_offset=-1, epoch=-1) if snapshot_id is None else
                r.SnapshotId(end_offset=snapshot_id.offset, epoch=snapshot_id.epoch))
    return FetchSnapshotResponseData(throttle_time=_ZERO, error_code=Errors.NONE.error_code, topics=(
        r.TopicSnapshot(name=tp.topic, partitions=(r.PartitionSnapshot(
            index=tp.partition, error_code=error.error_code, snapshot_id=snapshot,
            current_leader=r.LeaderIdAndEpoch(leader_id=leader_id, leader_epoch=leader_epoch),
            size=size, position=position, unaligned_records=unaligned_records),)),))


def singleton_fetch_snapshot_request(cluster_id: str, tp: TopicPartition, replica_id: int, current_leader_epoch: int,
                                     snapshot_id: OffsetAndEpoch, position: int,
                                     max_bytes: int) -> FetchSnapshotRequestData:
    """Kafka 3.0's FetchSnapshotRequest.singleton: the chunk of ``snapshot_id`` at ``position``."""
    q = fetch_snapshot_request
    partition = q.PartitionSnapshot(partition=tp.partition, current_leader_epoch=current_leader_epoch,
                                    snapshot_id=q.SnapshotId(end_offset=snapshot_id.offset, epoch=snapshot_id.epoch),
                                    position=position)
    return FetchSnapshotRequestData(cluster_id=cluster_id, replica_id=replica_id, max_bytes=max_bytes,
                                    topics=(q.TopicSnapshot(name=tp.topic, partitions=(partition,)),))
