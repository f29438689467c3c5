"""Port of the group coordinator handlers of core/src/main/scala/kafka/server/KafkaApis.scala
(Kafka 2.8.2, ZooKeeper mode): FindCoordinator, JoinGroup, SyncGroup,
Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, OffsetDelete, DescribeGroups, ListGroups
and DeleteGroups.

Split from server/kafka_apis.py for size only; KafkaApis dispatches to
``GroupRequestHandlers``. The handlers translate requests of any supported version into
GroupCoordinator calls and its results back into the response of the request's version;
the coordinator answers JoinGroup, SyncGroup, Heartbeat and LeaveGroup through callbacks
that may run later on another thread (a parked join answered when the rebalance
completes), so those callbacks are guarded with ``KafkaApis.answering``.

With an authorizer, as in Kafka: the group rounds (JoinGroup, SyncGroup, Heartbeat,
LeaveGroup) and OffsetCommit need Read on the group, OffsetFetch, DescribeGroups and
FindCoordinator Describe, DeleteGroups and OffsetDelete Delete; the topics of OffsetCommit
and OffsetDelete need Read and those of OffsetFetch Describe (offsets of other topics are
refused per partition, or left out of an all-partitions answer). ListGroups lists every
group to principals that may Describe the cluster, the describable groups to the others.

FindCoordinator creates __consumer_offsets on first use (as Kafka's AutoTopicCreationManager
does, with the coordinator's topic configs) and answers COORDINATOR_NOT_AVAILABLE until the
partition of the group has a live leader. A transactional id (key type 1) is found the same
way in __transaction_state (created with the transaction coordinator's topic configs).
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional

from kio.schema.delete_groups.v2.response import DeletableGroupResult, DeleteGroupsResponse
from kio.schema.describe_groups.v5.response import DescribedGroup, DescribedGroupMember, DescribeGroupsResponse
from kio.schema.find_coordinator.v3.response import FindCoordinatorResponse
from kio.schema.heartbeat.v4.response import HeartbeatResponse
from kio.schema.join_group.v7.response import JoinGroupResponse, JoinGroupResponseMember
from kio.schema.leave_group.v4.response import LeaveGroupResponse, MemberResponse
from kio.schema.list_groups.v4.response import ListedGroup, ListGroupsResponse
from kio.schema.offset_commit.v8.response import OffsetCommitResponse, OffsetCommitResponsePartition
from kio.schema.offset_commit.v8.response import OffsetCommitResponseTopic
from kio.schema.offset_delete.v0.response import OffsetDeleteResponse, OffsetDeleteResponsePartition
from kio.schema.offset_delete.v0.response import OffsetDeleteResponseTopic
from kio.schema.offset_fetch.v7.response import OffsetFetchResponse, OffsetFetchResponsePartition
from kio.schema.offset_fetch.v7.response import OffsetFetchResponseTopic
from kio.schema.sync_group.v5.response import SyncGroupResponse

from kafka_py.clients.common.errors import InvalidRequestException, UnsupportedVersionException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.group.group_coordinator import LeaveGroupResult, MemberIdentity
from kafka_py.core.coordinator.group.group_metadata import JoinGroupResult, SyncGroupResult
from kafka_py.core.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME
from kafka_py.core.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC_NAME
from kafka_py.core.coordinator.group.offset_and_metadata import NO_METADATA, OffsetAndMetadata
from kafka_py.network.request_channel import Request
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import new_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import AUTHORIZED_OPERATIONS_OMITTED
from kafka_py.core.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafka_py.server.kafka_apis_common import (
    NO_THROTTLE,
    error_response,
    error_response_of,
    millis,
    partition_errors_by_topic,
    topics_of,
)
from kafka_py.clients.common.record.default_record_batch import NO_PARTITION_LEADER_EPOCH
from kafka_py.core.utils.logging import IdentLogger

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.server.kafka_apis import KafkaApis

logger = logging.getLogger(__name__)

COORDINATOR_TYPE_GROUP = 0
COORDINATOR_TYPE_TRANSACTION = 1
NO_NODE_ID = -1
DEFAULT_RETENTION_TIME = -1  # OffsetCommitRequest.DEFAULT_RETENTION_TIME
DEFAULT_TIMESTAMP = -1  # OffsetCommitRequest.DEFAULT_TIMESTAMP


class GroupRequestHandlers:
    """The group coordinator API handlers of one KafkaApis."""

    def __init__(self, apis: "KafkaApis") -> None:
        self.apis = apis
        self.logger = IdentLogger(logger, apis.logger.ident)

    @property
    def _coordinator(self) -> Any:
        return self.apis.group_coordinator

    def _send(self, request: Request, response: Any) -> None:
        self.apis.send_response(request, response)

    def _authorize_group(self, request: Request, operation: AclOperation, group_id: str) -> bool:
        return self.apis.auth_helper.authorize(request.context, operation, ResourceType.GROUP, group_id)

    def _no_coordinator(self, request: Request) -> bool:
        """Without a coordinator (a KafkaApis built without one) no broker coordinates anything."""
        if self._coordinator is None:
            self.apis.send_error_response(request, Errors.COORDINATOR_NOT_AVAILABLE)
            return True
        return False

    # ------------------------------------------------------------------ FindCoordinator

    @staticmethod
    @error_response_of(ApiKeys.FIND_COORDINATOR)
    def find_coordinator_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return new_entity(FindCoordinatorResponse, error_code=error, error_message=message, node_id=NO_NODE_ID,
                          host="", port=-1)

    def handle_find_coordinator_request(self, request: Request) -> None:
        body = request.body
        # (v0 finds group coordinators only; the key type from v1)
        key_type = int(body.key_type) if request.api_version >= 1 else COORDINATOR_TYPE_GROUP
        key = body.key
        helper = self.apis.auth_helper
        if key_type == COORDINATOR_TYPE_GROUP and not helper.authorize(
                request.context, AclOperation.DESCRIBE, ResourceType.GROUP, key):
            self.apis.send_error_response(request, Errors.GROUP_AUTHORIZATION_FAILED)
            return
        if key_type == COORDINATOR_TYPE_TRANSACTION and not helper.authorize(
                request.context, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key):
            self.apis.send_error_response(request, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            return

        def send(error: Errors, node: Any = None) -> None:
            self._send(request, new_entity(FindCoordinatorResponse, error_code=error, error_message=error.message,
                                           node_id=NO_NODE_ID if node is None else node.id,
                                           host="" if node is None else node.host,
                                           port=-1 if node is None else node.port))

        if key_type == COORDINATOR_TYPE_GROUP:
            if self._coordinator is None:
                send(Errors.COORDINATOR_NOT_AVAILABLE)
                return
            partition = self._coordinator.partition_for(key)
            internal_topic = GROUP_METADATA_TOPIC_NAME
        elif key_type == COORDINATOR_TYPE_TRANSACTION:
            txn_coordinator = self.apis.txn_coordinator
            if txn_coordinator is None:
                send(Errors.COORDINATOR_NOT_AVAILABLE)
                return
            partition = txn_coordinator.partition_for(key)
            internal_topic = TRANSACTION_STATE_TOPIC_NAME
        else:
            raise InvalidRequestException(f"Unknown coordinator type received: {key_type}")

        listener = request.context.listener_name
        metadata_cache = self.apis.metadata_cache
        topic_metadata = metadata_cache.get_topic_metadata([internal_topic], listener)
        if not topic_metadata:
            # first use: create the topic; the client asks again once its leaders are elected
            self.apis._auto_create_topics([internal_topic])
            send(Errors.COORDINATOR_NOT_AVAILABLE)
            return
        topic = topic_metadata[0]
        if topic.error is not Errors.NONE:
            send(Errors.COORDINATOR_NOT_AVAILABLE)
            return
        node = None
        for p in topic.partitions:
            if p.partition_index == partition and p.leader_id != NO_NODE_ID:
                broker = metadata_cache.get_alive_broker(p.leader_id)
                node = None if broker is None else broker.get_node(listener)
                break
        if node is None or not node.host:
            send(Errors.COORDINATOR_NOT_AVAILABLE)
        else:
            send(Errors.NONE, node)

    # ------------------------------------------------------------------ JoinGroup

    @staticmethod
    @error_response_of(ApiKeys.JOIN_GROUP)
    def join_group_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return new_entity(JoinGroupResponse, error_code=error, generation_id=-1,
                          protocol_name=None if request.api_version >= 7 else "", leader="", member_id="")

    def handle_join_group_request(self, request: Request) -> None:
        if self._no_coordinator(request):
            return
        body = request.body
        version = request.api_version

        def send_response_callback(result: JoinGroupResult) -> None:
            protocol_name = result.protocol_name if version >= 7 else (result.protocol_name or "")
            self._send(request, new_entity(
                JoinGroupResponse,
                error_code=result.error,
                generation_id=result.generation_id,
                protocol_type=result.protocol_type,
                protocol_name=protocol_name,
                leader=result.leader_id or "",
                member_id=result.member_id,
                members=tuple([JoinGroupResponseMember(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                                       metadata=m.metadata) for m in result.members])))

        if not self._authorize_group(request, AclOperation.READ, body.group_id):
            send_response_callback(JoinGroupResult.error_result("", Errors.GROUP_AUTHORIZATION_FAILED))
            return
        group_instance_id = body.group_instance_id if version >= 5 else None  # (KIP-345, v5)
        # KIP-394: only v4+ clients understand MEMBER_ID_REQUIRED, and static members never
        # need it (their instance id identifies them)
        require_known_member_id = version >= 4 and group_instance_id is None
        session_timeout_ms = millis(body.session_timeout)
        # v0 has no rebalance timeout: the session timeout bounds the rebalance too
        rebalance_timeout_ms = millis(body.rebalance_timeout) if version >= 1 else session_timeout_ms
        protocols = [(p.name, bytes(p.metadata)) for p in body.protocols]
        self._coordinator.handle_join_group(
            body.group_id, body.member_id, group_instance_id, require_known_member_id,
            request.header.client_id or "", "/" + str(request.context.client_address), rebalance_timeout_ms,
            session_timeout_ms, body.protocol_type, protocols, self.apis.answering(request, send_response_callback))

    # ------------------------------------------------------------------ SyncGroup

    @staticmethod
    @error_response_of(ApiKeys.SYNC_GROUP)
    def sync_group_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return new_entity(SyncGroupResponse, error_code=error)

    def handle_sync_group_request(self, request: Request) -> None:
        if self._no_coordinator(request):
            return
        body = request.body
        version = request.api_version

        def send_response_callback(result: SyncGroupResult) -> None:
            self._send(request, new_entity(SyncGroupResponse, error_code=result.error,
                                           protocol_type=result.protocol_type, protocol_name=result.protocol_name,
                                           assignment=result.member_assignment))

        protocol_type = body.protocol_type if version >= 5 else None
        protocol_name = body.protocol_name if version >= 5 else None
        if version >= 5 and (protocol_type is None or protocol_name is None):
            # mandatory from v5
            send_response_callback(SyncGroupResult.error_result(Errors.INCONSISTENT_GROUP_PROTOCOL))
            return
        if not self._authorize_group(request, AclOperation.READ, body.group_id):
            send_response_callback(SyncGroupResult.error_result(Errors.GROUP_AUTHORIZATION_FAILED))
            return
        assignment = {a.member_id: bytes(a.assignment) for a in body.assignments}
        self._coordinator.handle_sync_group(
            body.group_id, int(body.generation_id), body.member_id, protocol_type, protocol_name,
            body.group_instance_id if version >= 3 else None, assignment,
            self.apis.answering(request, send_response_callback))

    # ------------------------------------------------------------------ Heartbeat

    @staticmethod
    @error_response_of(ApiKeys.HEARTBEAT)
    def heartbeat_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return HeartbeatResponse(throttle_time=NO_THROTTLE, error_code=error.error_code)

    def handle_heartbeat_request(self, request: Request) -> None:
        if self._no_coordinator(request):
            return
        body = request.body

        def send_response_callback(error: Errors) -> None:
            self._send(request, HeartbeatResponse(throttle_time=NO_THROTTLE, error_code=error.error_code))

        if not self._authorize_group(request, AclOperation.READ, body.group_id):
            send_response_callback(Errors.GROUP_AUTHORIZATION_FAILED)
            return
        group_instance_id = body.group_instance_id if request.api_version >= 3 else None
        self._coordinator.handle_heartbeat(body.group_id, body.member_id, group_instance_id,
                                           int(body.generation_id), self.apis.answering(request,
                                                                                        send_response_callback))

    # ------------------------------------------------------------------ LeaveGroup

    @staticmethod
    @error_response_of(ApiKeys.LEAVE_GROUP)
    def leave_group_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return LeaveGroupResponse(throttle_time=NO_THROTTLE, error_code=error.error_code, members=())

    def handle_leave_group_request(self, request: Request) -> None:
        if self._no_coordinator(request):
            return
        body = request.body
        version = request.api_version
        if version <= 2:
            members = [MemberIdentity(body.member_id)]
        else:
            members = [MemberIdentity(m.member_id, m.group_instance_id) for m in body.members]

        def send_response_callback(result: LeaveGroupResult) -> None:
            if version <= 2:
                # single-member versions carry the member's error at the top
                error = result.top_level_error
                if error is Errors.NONE:
                    error = next((m.error for m in result.member_responses if m.error is not Errors.NONE),
                                 Errors.NONE)
                self._send(request, LeaveGroupResponse(throttle_time=NO_THROTTLE, error_code=error.error_code,
                                                       members=()))
            else:
                self._send(request, LeaveGroupResponse(
                    throttle_time=NO_THROTTLE, error_code=result.top_level_error.error_code, members=tuple([
                        MemberResponse(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                       error_code=m.error.error_code) for m in result.member_responses])))

        if not self._authorize_group(request, AclOperation.READ, body.group_id):
            self._send(request, LeaveGroupResponse(throttle_time=NO_THROTTLE,
                                                   error_code=Errors.GROUP_AUTHORIZATION_FAILED.error_code,
                                                   members=()))
            return
        self._coordinator.handle_leave_group(body.group_id, members,
                                             self.apis.answering(request, send_response_callback))

    # ------------------------------------------------------------------ OffsetCommit

    @staticmethod
    @error_response_of(ApiKeys.OFFSET_COMMIT)
    def offset_commit_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return _offset_commit_response((TopicPartition(t.name, int(p.partition_index)), error)
                                       for t in request.body.topics for p in t.partitions)

    def handle_offset_commit_request(self, request: Request) -> None:
        # version 0 stores offsets in ZooKeeper and needs no coordinator
        if request.api_version > 0 and self._no_coordinator(request):
            return
        body = request.body
        helper = self.apis.auth_helper
        if not self._authorize_group(request, AclOperation.READ, body.group_id):
            self.apis.send_error_response(request, Errors.GROUP_AUTHORIZATION_FAILED)
            return
        readable = None
        if self.apis.authorizer is not None:
            readable = helper.filter_by_authorized(request.context, AclOperation.READ, ResourceType.TOPIC,
                                                   [t.name for t in body.topics])
        non_existing_topic_errors: dict[TopicPartition, Errors] = {}
        to_commit: dict[TopicPartition, Any] = {}
        for topic in body.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.name, int(p.partition_index))
                if readable is not None and topic.name not in readable:
                    non_existing_topic_errors[tp] = Errors.TOPIC_AUTHORIZATION_FAILED
                elif not self.apis.metadata_cache.contains(tp):
                    non_existing_topic_errors[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    to_commit[tp] = p

        def send_response_callback(commit_status: dict[TopicPartition, Errors]) -> None:
            combined = {**commit_status, **non_existing_topic_errors}
            for tp, error in combined.items():
                if error is not Errors.NONE:
                    self.logger.debug("Offset commit request with correlation id %d from client %s on partition %s "
                                      "failed due to %s", request.correlation_id,
                                      request.header.client_id, tp, error.exception_name)
            self._send(request, _offset_commit_response(combined.items()))

        if not to_commit:
            send_response_callback({})
            return
        if request.api_version == 0:
            send_response_callback(self._commit_offsets_to_zookeeper(body.group_id, to_commit))
            return
        version = request.api_version
        current_timestamp = self.apis.time.milliseconds()
        retention_ms = millis(body.retention_time) if 2 <= version <= 4 else DEFAULT_RETENTION_TIME
        # v1-v4 may set a retention: those commits expire at a fixed time (old semantics);
        # otherwise retention follows the group (offsets.retention.minutes after it empties)
        expire_timestamp = None if retention_ms == DEFAULT_RETENTION_TIME else current_timestamp + retention_ms
        # (partitions' leader epochs from v6; v1 alone names each partition's commit time)
        offsets = offsets_to_commit(to_commit, current_timestamp, expire_timestamp, version >= 6, version == 1)
        self._coordinator.handle_commit_offsets(
            body.group_id, body.member_id, body.group_instance_id if version >= 7 else None,
            int(body.generation_id_or_member_epoch) if version >= 1 else -1, offsets,
            self.apis.answering(request, send_response_callback))

    def _commit_offsets_to_zookeeper(self, group_id: str, to_commit: dict[TopicPartition, Any]
                                     ) -> dict[TopicPartition, Errors]:
        """OffsetCommit v0, as 2.8 still accepts it: each offset is written to ZooKeeper's
        ``/consumers/<group>/offsets/<topic>/<partition>``, whatever the group coordinator knows
        of the group (nothing is appended to __consumer_offsets)."""
        zk_client = self._zk_client_or_unsupported("Version 0 offset commit requests")
        max_size = self.apis.config.offset_metadata_max_size
        results: dict[TopicPartition, Errors] = {}
        for tp, p in to_commit.items():
            metadata = p.committed_metadata
            if metadata is not None and len(metadata) > max_size:
                results[tp] = Errors.OFFSET_METADATA_TOO_LARGE
                continue
            try:
                zk_client.set_or_create_consumer_offset(group_id, tp, int(p.committed_offset))
                results[tp] = Errors.NONE
            except Exception as e:  # noqa: BLE001 - one partition's failure is its error code
                results[tp] = Errors.for_exception(e)
        return results

    def _zk_client_or_unsupported(self, what: str) -> Any:
        """The ZooKeeper client; a KRaft broker has none and refuses what needs it, as Kafka 3.0 does."""
        zk_client = self.apis.zk_client
        if zk_client is None:
            raise UnsupportedVersionException(f"Unsupported when using a Raft-based metadata quorum: {what}")
        return zk_client

    # ------------------------------------------------------------------ OffsetFetch

    @staticmethod
    @error_response_of(ApiKeys.OFFSET_FETCH)
    def offset_fetch_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        # v2+ has a top-level error and then lists no partitions; v1 can only say it per partition
        topics = () if request.api_version >= 2 else tuple([
            OffsetFetchResponseTopic(name=t.name, partitions=tuple([
                new_entity(OffsetFetchResponsePartition, partition_index=p, committed_offset=-1, metadata="",
                           error_code=error)
                for p in t.partition_indexes])) for t in (request.body.topics or ())])
        return OffsetFetchResponse(throttle_time=NO_THROTTLE, error_code=error.error_code, topics=topics)

    def handle_offset_fetch_request(self, request: Request) -> None:
        if request.api_version == 0:
            self._send(request, self._fetch_offsets_from_zookeeper(request))
            return
        if self._no_coordinator(request):
            return
        body = request.body
        # v7's require_stable waits for pending transactional commits; without transactions
        # every commit settles with its append, so this is simply passed on
        require_stable = request.api_version >= 7 and bool(body.require_stable)
        helper = self.apis.auth_helper
        if not self._authorize_group(request, AclOperation.DESCRIBE, body.group_id):
            self.apis.send_response(request, error_response(request, Errors.GROUP_AUTHORIZATION_FAILED))
            return
        unauthorized: list[TopicPartition] = []
        if body.topics is None:
            error, partition_data = self._coordinator.handle_fetch_offsets(body.group_id, require_stable)
            if error is Errors.NONE and self.apis.authorizer is not None:
                # offsets of topics the principal may not describe are not shown at all
                describable = helper.filter_by_authorized(request.context, AclOperation.DESCRIBE,
                                                          ResourceType.TOPIC, [tp.topic for tp in partition_data])
                partition_data = {tp: d for tp, d in partition_data.items() if tp.topic in describable}
        else:
            partitions = [TopicPartition(t.name, int(i)) for t in body.topics for i in t.partition_indexes]
            if self.apis.authorizer is not None:
                describable = helper.filter_by_authorized(request.context, AclOperation.DESCRIBE,
                                                          ResourceType.TOPIC, [tp.topic for tp in partitions])
                unauthorized = [tp for tp in partitions if tp.topic not in describable]
                partitions = [tp for tp in partitions if tp.topic in describable]
            error, partition_data = self._coordinator.handle_fetch_offsets(body.group_id, require_stable,
                                                                           partitions)
        if error is not Errors.NONE:
            self.apis.send_response(request, error_response(request, error))
            return
        if unauthorized:
            # OffsetFetchResponse.UNAUTHORIZED_PARTITION
            partition_data = dict(partition_data)
            for tp in unauthorized:
                partition_data[tp] = (-1, None, "", Errors.TOPIC_AUTHORIZATION_FAILED)
        self._send(request, _offset_fetch_response(partition_data))

    def _fetch_offsets_from_zookeeper(self, request: Request) -> OffsetFetchResponse:
        """OffsetFetch v0: the offsets OffsetCommit v0 wrote to ZooKeeper (a partition without
        one is UNKNOWN_TOPIC_OR_PARTITION, as Kafka's OffsetFetchResponse.UNKNOWN_PARTITION)."""
        body = request.body
        if not self._authorize_group(request, AclOperation.DESCRIBE, body.group_id):
            return error_response(request, Errors.GROUP_AUTHORIZATION_FAILED)
        zk_client = self._zk_client_or_unsupported("Version 0 offset fetch requests")
        partitions = [TopicPartition(t.name, int(i)) for t in body.topics for i in t.partition_indexes]
        describable = None
        if self.apis.authorizer is not None:
            describable = self.apis.auth_helper.filter_by_authorized(
                request.context, AclOperation.DESCRIBE, ResourceType.TOPIC, [tp.topic for tp in partitions])
        partition_data: dict[TopicPartition, tuple[int, Optional[int], str, Errors]] = {}
        for tp in partitions:
            if describable is not None and tp.topic not in describable:
                partition_data[tp] = (-1, None, "", Errors.TOPIC_AUTHORIZATION_FAILED)
                continue
            try:
                offset = (zk_client.get_consumer_offset(body.group_id, tp)
                          if self.apis.metadata_cache.contains(tp) else None)
                partition_data[tp] = ((-1, None, "", Errors.UNKNOWN_TOPIC_OR_PARTITION) if offset is None
                                      else (offset, None, "", Errors.NONE))
            except Exception as e:  # noqa: BLE001 - one partition's failure is its error code
                partition_data[tp] = (-1, None, "", Errors.for_exception(e))
        return _offset_fetch_response(partition_data)

    # ------------------------------------------------------------------ OffsetDelete

    @staticmethod
    @error_response_of(ApiKeys.OFFSET_DELETE)
    def offset_delete_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return _offset_delete_response(error, ())

    def handle_offset_delete_request(self, request: Request) -> None:
        if self._no_coordinator(request):
            return
        body = request.body
        if not self._authorize_group(request, AclOperation.DELETE, body.group_id):
            self._send(request, _offset_delete_response(Errors.GROUP_AUTHORIZATION_FAILED, ()))
            return
        readable = None
        if self.apis.authorizer is not None:
            readable = self.apis.auth_helper.filter_by_authorized(request.context, AclOperation.READ,
                                                                  ResourceType.TOPIC, [t.name for t in body.topics])
        partition_errors: dict[TopicPartition, Errors] = {}
        partitions: list[TopicPartition] = []
        for topic in body.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.name, int(p.partition_index))
                if readable is not None and topic.name not in readable:
                    partition_errors[tp] = Errors.TOPIC_AUTHORIZATION_FAILED
                elif not self.apis.metadata_cache.contains(tp):
                    partition_errors[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    partitions.append(tp)
        group_error, errors = self._coordinator.handle_delete_offsets(body.group_id, partitions)
        if group_error is not Errors.NONE:
            self._send(request, _offset_delete_response(group_error, ()))
            return
        partition_errors.update(errors)
        self._send(request, _offset_delete_response(Errors.NONE, partition_errors.items()))

    # ------------------------------------------------------------------ DescribeGroups

    @staticmethod
    @error_response_of(ApiKeys.DESCRIBE_GROUPS)
    def describe_groups_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return DescribeGroupsResponse(throttle_time=NO_THROTTLE, groups=tuple([
            _described_group_error(g, error) for g in request.body.groups]))

    def handle_describe_groups_request(self, request: Request) -> None:
        if self._no_coordinator(request):
            return
        body = request.body
        include_authorized_operations = request.api_version >= 3 and bool(body.include_authorized_operations)
        groups = []
        for group_id in body.groups:
            if not self._authorize_group(request, AclOperation.DESCRIBE, group_id):
                groups.append(_described_group_error(group_id, Errors.GROUP_AUTHORIZATION_FAILED))
                continue
            error, summary = self._coordinator.handle_describe_group(group_id)
            authorized_operations = AUTHORIZED_OPERATIONS_OMITTED
            if request.api_version >= 3 and error is Errors.NONE and include_authorized_operations:
                authorized_operations = self.apis.auth_helper.authorized_operations(
                    request, ResourceType.GROUP, group_id)
            groups.append(DescribedGroup(
                error_code=error.error_code, group_id=group_id, group_state=summary.state,
                protocol_type=summary.protocol_type, protocol_data=summary.protocol,
                members=tuple([DescribedGroupMember(
                    member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                    client_host=m.client_host, member_metadata=m.metadata, member_assignment=m.assignment)
                    for m in summary.members]),
                authorized_operations=authorized_operations))
        self._send(request, DescribeGroupsResponse(throttle_time=NO_THROTTLE, groups=tuple(groups)))

    # ------------------------------------------------------------------ ListGroups

    @staticmethod
    @error_response_of(ApiKeys.LIST_GROUPS)
    def list_groups_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return ListGroupsResponse(throttle_time=NO_THROTTLE, error_code=error.error_code, groups=())

    def handle_list_groups_request(self, request: Request) -> None:
        if self._no_coordinator(request):
            return
        states = (request.body.states_filter if request.api_version >= 4 else None) or ()  # (KIP-518, v4)
        error, groups = self._coordinator.handle_list_groups(states)
        helper = self.apis.auth_helper
        if not helper.authorize(request.context, AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
            groups = [g for g in groups if self._authorize_group(request, AclOperation.DESCRIBE, g.group_id)]
        self._send(request, ListGroupsResponse(throttle_time=NO_THROTTLE, error_code=error.error_code, groups=tuple([
            ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state) for g in groups])))

    # ------------------------------------------------------------------ DeleteGroups

    @staticmethod
    @error_response_of(ApiKeys.DELETE_GROUPS)
    def delete_groups_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return DeleteGroupsResponse(throttle_time=NO_THROTTLE, results=tuple([
            DeletableGroupResult(group_id=g, error_code=error.error_code) for g in request.body.groups_names]))

    def handle_delete_groups_request(self, request: Request) -> None:
        if self._no_coordinator(request):
            return
        groups = list(dict.fromkeys(request.body.groups_names))
        authorized = [g for g in groups if self._authorize_group(request, AclOperation.DELETE, g)]
        results = {g: Errors.GROUP_AUTHORIZATION_FAILED for g in groups}
        if authorized:
            results.update(self._coordinator.handle_delete_groups(authorized))
        self._send(request, DeleteGroupsResponse(throttle_time=NO_THROTTLE, results=tuple([
            DeletableGroupResult(group_id=g, error_code=results[g].error_code) for g in groups])))


def _offset_commit_response(errors: Iterable[tuple[TopicPartition, Errors]]) -> OffsetCommitResponse:
    return OffsetCommitResponse(throttle_time=NO_THROTTLE, topics=partition_errors_by_topic(
        OffsetCommitResponseTopic, OffsetCommitResponsePartition, errors))


def _offset_fetch_response(partition_data: Mapping[TopicPartition, tuple[int, Optional[int], str, Errors]]
                           ) -> OffsetFetchResponse:
    """Each partition's (offset, leader epoch, metadata, error), grouped by topic."""
    return OffsetFetchResponse(
        throttle_time=NO_THROTTLE, error_code=Errors.NONE.error_code, topics=tuple([
            OffsetFetchResponseTopic(name=topic, partitions=tuple([
                OffsetFetchResponsePartition(
                    partition_index=index, committed_offset=offset,
                    committed_leader_epoch=NO_PARTITION_LEADER_EPOCH if epoch is None else epoch,
                    metadata=metadata, error_code=partition_error.error_code)
                for index, (offset, epoch, metadata, partition_error) in parts]))
            for topic, parts in topics_of(partition_data.items())]))


def _offset_delete_response(error: Errors, errors: Iterable[tuple[TopicPartition, Errors]]) -> OffsetDeleteResponse:
    return OffsetDeleteResponse(error_code=error.error_code, throttle_time=NO_THROTTLE,
                                topics=partition_errors_by_topic(OffsetDeleteResponseTopic,
                                                                 OffsetDeleteResponsePartition, errors))


def _described_group_error(group_id: str, error: Errors) -> DescribedGroup:
    return DescribedGroup(error_code=error.error_code, group_id=group_id, group_state="", protocol_type="",
                          protocol_data="", members=())


def offsets_to_commit(partitions: dict[TopicPartition, Any], commit_timestamp: int,
                      expire_timestamp: Optional[int], with_leader_epochs: bool,
                      with_commit_timestamps: bool) -> dict[TopicPartition, OffsetAndMetadata]:
    """The OffsetAndMetadata of each partition of an OffsetCommit or TxnOffsetCommit request,
    whose version has the partitions' ``committed_leader_epoch`` (``with_leader_epochs``) and
    ``commit_timestamp`` (``with_commit_timestamps``: OffsetCommit v1 may name each partition's
    commit time) or not."""
    offsets = {}
    for tp, p in partitions.items():
        leader_epoch = int(p.committed_leader_epoch) if with_leader_epochs else NO_PARTITION_LEADER_EPOCH
        metadata = p.committed_metadata
        explicit_timestamp = int(p.commit_timestamp) if with_commit_timestamps else DEFAULT_TIMESTAMP
        offsets[tp] = OffsetAndMetadata(
            offset=int(p.committed_offset),
            leader_epoch=None if leader_epoch == NO_PARTITION_LEADER_EPOCH else leader_epoch,
            metadata=NO_METADATA if metadata is None else metadata,
            commit_timestamp=commit_timestamp if explicit_timestamp == DEFAULT_TIMESTAMP else explicit_timestamp,
            expire_timestamp=expire_timestamp)
    return offsets


__all__ = ["GroupRequestHandlers"]
