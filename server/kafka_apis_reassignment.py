"""Port of the partition reassignment handlers of core/src/main/scala/kafka/server/KafkaApis.scala
(Kafka 2.8.2): AlterPartitionReassignments (45) and ListPartitionReassignments (46), version 0
(KIP-455).

Split from server/kafka_apis.py for size only; KafkaApis dispatches to
``ReassignmentRequestHandlers``.

Both go to the controller (controller/kafka_controller.py), whose event thread answers
through a callback:

* Alter needs Alter on the cluster, List needs Describe on it; without it the answer is
  CLUSTER_AUTHORIZATION_FAILED at the top level (through KafkaApis' error response).
* A broker that is not the controller answers NOT_CONTROLLER at the top level; admin
  clients send these requests to the controller they learnt from Metadata and retry.
* Alter answers each partition: NONE once the reassignment has started (it completes later,
  when the new replicas are in the ISR), INVALID_REPLICA_ASSIGNMENT for an empty replica list,
  duplicate or negative ids, or a new replica on a broker that is not alive,
  UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist (or whose topic is being
  deleted), NO_REASSIGNMENT_IN_PROGRESS for a cancellation (null replicas) of a partition that
  is not being reassigned. A rejected partition changes nothing.
* List answers every ongoing reassignment (or those among the partitions named) with its
  full replica set and the replicas being added and removed.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Mapping, Optional

from kio.schema.alter_partition_reassignments.v0.response import AlterPartitionReassignmentsResponse
from kio.schema.alter_partition_reassignments.v0.response import ReassignablePartitionResponse
from kio.schema.alter_partition_reassignments.v0.response import ReassignableTopicResponse
from kio.schema.list_partition_reassignments.v0.response import ListPartitionReassignmentsResponse
from kio.schema.list_partition_reassignments.v0.response import OngoingPartitionReassignment
from kio.schema.list_partition_reassignments.v0.response import OngoingTopicReassignment

from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.network.request_channel import Request
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.security.authorizer.acl import AclOperation
from kafka_py.server.kafka_apis_common import NO_THROTTLE, error_response_of

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.server.kafka_apis import KafkaApis

logger = logging.getLogger(__name__)


def _message(error: ApiError) -> str | None:
    """What Kafka's ApiError carries: the given message, else the error's own (none for NONE)."""
    if error.message is not None or error.error is Errors.NONE:
        return error.message
    return error.error.message


def _by_topic(items: Mapping[TopicPartition, Any]) -> list[tuple[str, list[tuple[int, Any]]]]:
    by_topic: dict[str, list[tuple[int, Any]]] = {}
    for tp in sorted(items):
        by_topic.setdefault(tp.topic, []).append((tp.partition, items[tp]))
    return list(by_topic.items())


class ReassignmentRequestHandlers:
    """The partition reassignment API handlers of one KafkaApis."""

    def __init__(self, apis: "KafkaApis") -> None:
        self.apis = apis

    @staticmethod
    @error_response_of(ApiKeys.ALTER_PARTITION_REASSIGNMENTS)
    def alter_partition_reassignments_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        # the error at the top and on every partition named (AlterPartitionReassignmentsRequest.getErrorResponse)
        return AlterPartitionReassignmentsResponse(
            throttle_time=NO_THROTTLE, error_code=error.error_code, error_message=message, responses=tuple([
                ReassignableTopicResponse(name=t.name, partitions=tuple([ReassignablePartitionResponse(
                    partition_index=p.partition_index, error_code=error.error_code, error_message=message)
                    for p in t.partitions]))
                for t in request.body.topics]))

    def handle_alter_partition_reassignments_request(self, request: Request) -> None:
        apis = self.apis
        apis.auth_helper.authorize_cluster_operation(request, AclOperation.ALTER)
        reassignments: dict[TopicPartition, list[int] | None] = {}
        for topic in request.body.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.name, int(p.partition_index))
                # null replicas cancels the partition's reassignment
                reassignments[tp] = None if p.replicas is None else [int(r) for r in p.replicas]

        def send_response_callback(result: "dict[TopicPartition, ApiError] | ApiError") -> None:
            if isinstance(result, ApiError):
                response = AlterPartitionReassignmentsResponse(
                    throttle_time=NO_THROTTLE, error_code=result.error.error_code, error_message=_message(result),
                    responses=())
            else:
                response = AlterPartitionReassignmentsResponse(
                    throttle_time=NO_THROTTLE, error_code=Errors.NONE.error_code, error_message=None, responses=tuple([
                        ReassignableTopicResponse(name=topic, partitions=tuple([ReassignablePartitionResponse(
                            partition_index=partition, error_code=error.error.error_code,
                            error_message=_message(error)) for partition, error in partitions]))
                        for topic, partitions in _by_topic(result)]))
            apis.send_response(request, response)

        apis.zk_controller.alter_partition_reassignments(reassignments,
                                                         apis.answering(request, send_response_callback))

    @staticmethod
    @error_response_of(ApiKeys.LIST_PARTITION_REASSIGNMENTS)
    def list_partition_reassignments_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return ListPartitionReassignmentsResponse(throttle_time=NO_THROTTLE, error_code=error.error_code,
                                                  error_message=message, topics=())

    def handle_list_partition_reassignments_request(self, request: Request) -> None:
        apis = self.apis
        apis.auth_helper.authorize_cluster_operation(request, AclOperation.DESCRIBE)
        topics = request.body.topics
        partitions = None if topics is None else {
            TopicPartition(t.name, int(p)) for t in topics for p in t.partition_indexes}

        def send_response_callback(result: Any) -> None:
            if isinstance(result, ApiError):
                response = ListPartitionReassignmentsResponse(
                    throttle_time=NO_THROTTLE, error_code=result.error.error_code, error_message=_message(result),
                    topics=())
            else:
                response = ListPartitionReassignmentsResponse(
                    throttle_time=NO_THROTTLE, error_code=Errors.NONE.error_code, error_message=None, topics=tuple([
                        OngoingTopicReassignment(name=topic, partitions=tuple([OngoingPartitionReassignment(
                            partition_index=partition, replicas=tuple(assignment.replicas),
                            adding_replicas=tuple(assignment.adding_replicas),
                            removing_replicas=tuple(assignment.removing_replicas))
                            for partition, assignment in entries]))
                        for topic, entries in _by_topic(result)]))
            apis.send_response(request, response)

        apis.zk_controller.list_partition_reassignments(partitions, apis.answering(request, send_response_callback))


__all__ = ["ReassignmentRequestHandlers"]
