"""Port of the log dir handlers of core/src/main/scala/kafka/server/KafkaApis.scala (Kafka
2.8.2): AlterReplicaLogDirs (34, handleAlterReplicaLogDirsRequest) and DescribeLogDirs (35,
handleDescribeLogDirsRequest), versions 0 to 2.

Split from server/kafka_apis.py for size only; KafkaApis dispatches to
``LogDirRequestHandlers``, and the work is the ReplicaManager's (``alter_replica_log_dirs``,
``describe_log_dirs``).

* AlterReplicaLogDirs needs Alter on the cluster; without it every partition of the request
  answers CLUSTER_AUTHORIZATION_FAILED. A partition named twice goes to the dir named last,
  as Kafka's map of the request does. Each partition's own error otherwise: NONE (moving, or
  already there), LOG_DIR_NOT_FOUND, KAFKA_STORAGE_ERROR, REPLICA_NOT_AVAILABLE, ...
* DescribeLogDirs needs Describe on the cluster; without it the answer lists no dirs (Kafka
  answers so, with no error code: version 2 has none at the top). ``topics`` null asks
  about every log of the broker.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Optional

from kafka_py.clients.common.protocol.schema.alter_replica_log_dirs.v2.response import AlterReplicaLogDirPartitionResult
from kafka_py.clients.common.protocol.schema.alter_replica_log_dirs.v2.response import AlterReplicaLogDirsResponse
from kafka_py.clients.common.protocol.schema.alter_replica_log_dirs.v2.response import AlterReplicaLogDirTopicResult
from kafka_py.clients.common.protocol.schema.describe_log_dirs.v2.response import DescribeLogDirsPartition, DescribeLogDirsResponse
from kafka_py.clients.common.protocol.schema.describe_log_dirs.v2.response import DescribeLogDirsResult, DescribeLogDirsTopic

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.network.request_channel import Request
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafka_py.server.kafka_apis_common import error_response_of

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.server.kafka_apis import KafkaApis

logger = logging.getLogger(__name__)


@error_response_of(ApiKeys.ALTER_REPLICA_LOG_DIRS)
def alter_replica_log_dirs_error_response(request: Request, error: Errors, message: Optional[str] = None) -> Any:
    """AlterReplicaLogDirsRequest.getErrorResponse: ``error`` for every partition named."""
    return AlterReplicaLogDirsResponse(throttle_time_ms=0, results=tuple([
        AlterReplicaLogDirTopicResult(topic_name=t.name, partitions=tuple([
            AlterReplicaLogDirPartitionResult(partition_index=p, error_code=error.error_code) for p in t.partitions]))
        for d in request.body.dirs for t in d.topics]))


@error_response_of(ApiKeys.DESCRIBE_LOG_DIRS)
def describe_log_dirs_error_response(request: Request, error: Errors, message: Optional[str] = None) -> Any:
    """DescribeLogDirsRequest.getErrorResponse: no dirs at all."""
    return DescribeLogDirsResponse(throttle_time_ms=0, results=())


class LogDirRequestHandlers:
    """The log dir API handlers of one KafkaApis."""

    def __init__(self, apis: "KafkaApis") -> None:
        self.apis = apis

    def handle_alter_replica_log_dirs_request(self, request: Request) -> None:
        apis = self.apis
        if not apis.auth_helper.authorize(request.context, AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
            apis.send_response(request, alter_replica_log_dirs_error_response(
                request, Errors.CLUSTER_AUTHORIZATION_FAILED, None))
            return
        partition_dirs: dict[TopicPartition, str] = {}
        for log_dir in request.body.dirs:
            for topic in log_dir.topics:
                for partition in topic.partitions:
                    partition_dirs[TopicPartition(topic.name, int(partition))] = log_dir.path
        result = apis.replica_manager.alter_replica_log_dirs(partition_dirs)
        by_topic: dict[str, list[AlterReplicaLogDirPartitionResult]] = {}
        for tp, error in result.items():
            by_topic.setdefault(tp.topic, []).append(
                AlterReplicaLogDirPartitionResult(partition_index=tp.partition, error_code=error.error_code))
        apis.send_response(request, AlterReplicaLogDirsResponse(throttle_time_ms=0, results=tuple([
            AlterReplicaLogDirTopicResult(topic_name=topic, partitions=tuple(partitions))
            for topic, partitions in by_topic.items()])))

    def handle_describe_log_dirs_request(self, request: Request) -> None:
        apis = self.apis
        results: list[DescribeLogDirsResult] = []
        if apis.auth_helper.authorize(request.context, AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
            topics = request.body.topics
            partitions: Optional[set[TopicPartition]] = None
            if topics is not None:
                partitions = {TopicPartition(t.topic, int(p)) for t in topics for p in t.partition_index}
            # the ReplicaManager describes each dir with the response's field names
            results = [DescribeLogDirsResult(
                error_code=r["error_code"].error_code, log_dir=r["log_dir"], topics=tuple([
                    DescribeLogDirsTopic(name=t["name"], partitions=tuple([
                        DescribeLogDirsPartition(**p) for p in t["partitions"]]))
                    for t in r["topics"]]))
                for r in apis.replica_manager.describe_log_dirs(partitions)]
        apis.send_response(request, DescribeLogDirsResponse(throttle_time_ms=0, results=tuple(results)))


__all__ = ["LogDirRequestHandlers", "alter_replica_log_dirs_error_response", "describe_log_dirs_error_response"]
