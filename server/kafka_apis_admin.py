"""Port of the admin handlers of core/src/main/scala/kafka/server/KafkaApis.scala (Kafka 2.8.2,
ZooKeeper mode): CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs, AlterConfigs,
IncrementalAlterConfigs and ElectLeaders (handleElectReplicaLeader).

Split from server/kafka_apis.py for size only; KafkaApis dispatches to
``AdminRequestHandlers`` and these build their answers with its helpers.

The handlers do what Kafka's do at the request level (only the active controller's broker
creates, deletes or extends topics -- others answer NOT_CONTROLLER so the admin client
retries there; duplicate names in one request are INVALID_REQUEST) and leave the work to
ZkAdminManager, which writes ZooKeeper and, when the request has a timeout, answers only
once the metadata cache shows the result (or the timeout passes).

With an authorizer, as in Kafka: creating a topic needs Create on the cluster or on the topic
(and its configs are shown only with DescribeConfigs on it), adding partitions Alter, deleting
Delete (and Describe to learn the name of a topic given by id); configs need DescribeConfigs /
AlterConfigs on the topic, or on the cluster for broker and broker-logger resources. A refused
entity gets TOPIC_ or CLUSTER_AUTHORIZATION_FAILED in its own result.
"""
from __future__ import annotations

import dataclasses
import logging
import uuid
from collections import Counter
from typing import TYPE_CHECKING, Any, Mapping, Optional

from kio.schema.alter_configs.v2.response import AlterConfigsResourceResponse, AlterConfigsResponse
from kio.schema.create_partitions.v3.response import CreatePartitionsResponse, CreatePartitionsTopicResult
from kio.schema.create_topics.v7.response import CreatableTopicConfigs, CreatableTopicResult, CreateTopicsResponse
from kio.schema.delete_topics.v6.response import DeletableTopicResult, DeleteTopicsResponse
from kio.schema.describe_configs.v4.response import DescribeConfigsResourceResult, DescribeConfigsResponse
from kio.schema.describe_configs.v4.response import DescribeConfigsResult, DescribeConfigsSynonym
from kio.schema.elect_leaders.v2.response import ElectLeadersResponse, PartitionResult, ReplicaElectionResult
from kio.schema.incremental_alter_configs.v1.response import AlterConfigsResourceResponse as \
    IncrementalAlterConfigsResourceResponse
from kio.schema.incremental_alter_configs.v1.response import IncrementalAlterConfigsResponse

from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.errors import InvalidRequestException, KafkaException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.network.request_channel import Request
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import new_entity, to_version
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafka_py.server.config_admin_manager import reassemble_results
from kafka_py.server.controller_mutation_quota_manager import UNBOUNDED_CONTROLLER_MUTATION_QUOTA
from kafka_py.server.kafka_apis_common import error_response_of, millis
from kafka_py.server.kafka_apis_quotas import with_throttle_time

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.server.kafka_apis import KafkaApis

logger = logging.getLogger(__name__)

_ZERO_UUID = uuid.UUID(int=0)

# ConfigResource.Type ids
_TOPIC = 2
_BROKER = 4
_BROKER_LOGGER = 8
_DEFAULT_CONFIG_SOURCE = 5  # DescribeConfigsResponse.ConfigSource.DEFAULT_CONFIG


def _config_resource_authorized(apis: "KafkaApis", request: Request, operation: AclOperation,
                                resource_type: int, name: str) -> bool:
    """DescribeConfigs / AlterConfigs access: on the cluster for brokers, on the topic for topics."""
    helper = apis.auth_helper
    if resource_type in (_BROKER, _BROKER_LOGGER):
        return helper.authorize(request.context, operation, ResourceType.CLUSTER, CLUSTER_NAME)
    if resource_type == _TOPIC:
        return helper.authorize(request.context, operation, ResourceType.TOPIC, name)
    raise InvalidRequestException(f"Unexpected resource type {resource_type} for resource {name}")


def _config_authorization_error(resource_type: int) -> Errors:
    return Errors.TOPIC_AUTHORIZATION_FAILED if resource_type == _TOPIC else Errors.CLUSTER_AUTHORIZATION_FAILED


class AdminRequestHandlers:
    """The admin API handlers of one KafkaApis."""

    def __init__(self, apis: "KafkaApis") -> None:
        self.apis = apis

    @property
    def _admin(self) -> Any:
        return self.apis.admin_manager

    def _controller_is_active(self) -> bool:
        return bool(self.apis.zk_controller.is_active)

    # ------------------------------------------------------------------ controller mutation quota

    def _controller_mutation_quota(self, request: Request, strict_since_version: int) -> Any:
        """The request's ``controller_mutation_rate`` quota (server/controller_mutation_quota_manager.py):
        strict from ``strict_since_version`` on, permissive before, unbounded without quotas."""
        quotas = self.apis.quotas
        if quotas is None:
            return UNBOUNDED_CONTROLLER_MUTATION_QUOTA
        return quotas.controller_mutation.new_quota_for(request, strict_since_version)

    def _send_response_with_controller_quota(self, quota: Any, request: Request, response: Any) -> None:
        """Kafka's sendResponseMaybeThrottleWithControllerQuota: the answer carries the larger of
        the mutation quota's throttle time and the request quota's, and the connection is muted
        by the manager whose time is larger."""
        apis = self.apis
        quotas = apis.quotas
        controller_ms = quota.throttle_time()
        if quotas is None or (controller_ms <= 0 and not quotas.request.quotas_enabled):
            apis.send_response(request, response)
            return
        request_ms = quotas.request.maybe_record_and_get_throttle_time_ms(request, apis.time.hi_res_milliseconds())
        max_ms = max(controller_ms, request_ms)
        if max_ms > 0:
            request.api_throttle_time_ms = max_ms
            manager = quotas.controller_mutation if controller_ms > request_ms else quotas.request
            manager.throttle(request, controller_ms if controller_ms > request_ms else request_ms,
                             apis.request_channel.send_response)
            response = with_throttle_time(response, max_ms)
        apis.send_response_exempt_throttle(request, response)

    # ------------------------------------------------------------------ CreateTopics

    @staticmethod
    @error_response_of(ApiKeys.CREATE_TOPICS)
    def create_topics_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return new_entity(CreateTopicsResponse, topics=tuple([
            new_entity(CreatableTopicResult, name=t.name, error_code=error, error_message=message, num_partitions=-1,
                       replication_factor=-1) for t in request.body.topics]))

    def handle_create_topics_request(self, request: Request) -> None:
        body = request.body
        apis = self.apis
        topics = list(body.topics)
        results: dict[str, dict[str, Any]] = {}
        for topic in topics:
            results.setdefault(topic.name, {"name": topic.name, "error_code": Errors.NONE, "error_message": None})

        quota = self._controller_mutation_quota(request, strict_since_version=6)

        def send(values: Mapping[str, Mapping[str, Any]]) -> None:
            self._send_response_with_controller_quota(
                quota, request, new_entity(CreateTopicsResponse, topics=tuple([
                    new_entity(CreatableTopicResult, **result) for result in values.values()])))

        if not self._controller_is_active():
            for result in results.values():
                result["error_code"] = Errors.NOT_CONTROLLER
            send(results)
            return
        counts = Counter(t.name for t in topics)
        creatable = None
        describable: "bool | set[str]" = True
        if apis.authorizer is not None:
            helper = apis.auth_helper
            names = [t.name for t in topics]
            if not helper.authorize(request.context, AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME,
                                    log_if_denied=False):
                creatable = helper.filter_by_authorized(request.context, AclOperation.CREATE, ResourceType.TOPIC,
                                                        names)
            describable = helper.filter_by_authorized(request.context, AclOperation.DESCRIBE_CONFIGS,
                                                      ResourceType.TOPIC, names, log_if_denied=False)
        to_create = {}
        for topic in topics:
            if counts[topic.name] > 1:
                results[topic.name].update(error_code=Errors.INVALID_REQUEST,
                                           error_message="Found multiple entries for this topic.")
            elif creatable is not None and topic.name not in creatable:
                results[topic.name].update(error_code=Errors.TOPIC_AUTHORIZATION_FAILED,
                                           error_message="Authorization failed.")
            else:
                to_create[topic.name] = topic
            if not isinstance(describable, bool) and topic.name not in describable:  # (True: all)
                results[topic.name]["topic_config_error_code"] = Errors.TOPIC_AUTHORIZATION_FAILED.error_code

        def handle_create_topics_results(created: Mapping[str, Any]) -> None:
            for name, result in created.items():
                entry = results[name]
                entry["error_code"] = result.error
                entry["error_message"] = result.message
                if result.error is Errors.NONE:
                    entry.update(num_partitions=result.num_partitions, replication_factor=result.replication_factor,
                                 topic_id=result.topic_id or _ZERO_UUID,
                                 configs=tuple([new_entity(
                                     CreatableTopicConfigs, name=c.name, value=c.value, read_only=c.read_only,
                                     config_source=int(c.config_source), is_sensitive=c.is_sensitive)
                                     for c in result.configs]))
                else:
                    # A failed create reports no configs or metadata.
                    entry.update(num_partitions=-1, replication_factor=-1, configs=(), topic_config_error_code=0)
            send(results)

        if not to_create:
            send(results)
            return
        validate_only = request.api_version >= 1 and bool(body.validate_only)  # (from v1)
        self._admin.create_topics(millis(body.timeout), validate_only, to_create,
                                  describable, self.apis.answering(request, handle_create_topics_results), quota)

    # ------------------------------------------------------------------ DeleteTopics

    @staticmethod
    @error_response_of(ApiKeys.DELETE_TOPICS)
    def delete_topics_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        body = request.body
        # (v6 names topics by name or id)
        names = list(body.topic_names) if request.api_version <= 5 else [t.name for t in body.topics]
        return new_entity(DeleteTopicsResponse, responses=tuple([
            new_entity(DeletableTopicResult, name=n, error_code=error, error_message=message) for n in names]))

    def handle_delete_topics_request(self, request: Request) -> None:
        body = request.body
        apis = self.apis
        version = request.api_version
        if version >= 6:  # (topics by name or id)
            requested = [(t.name, t.topic_id or _ZERO_UUID) for t in body.topics]
        else:
            requested = [(name, _ZERO_UUID) for name in body.topic_names]
        results: list[dict[str, Any]] = []

        quota = self._controller_mutation_quota(request, strict_since_version=5)

        def send() -> None:
            self._send_response_with_controller_quota(
                quota, request, new_entity(DeleteTopicsResponse, responses=tuple([
                    new_entity(DeletableTopicResult, **result) for result in results])))

        if not self._controller_is_active():
            results.extend({"name": n, "topic_id": i, "error_code": Errors.NOT_CONTROLLER} for n, i in requested)
            send()
            return
        if not apis.config.delete_topic_enable:
            error = Errors.INVALID_REQUEST if version < 3 else Errors.TOPIC_DELETION_DISABLED
            results.extend({"name": n, "topic_id": i, "error_code": error} for n, i in requested)
            send()
            return
        to_delete: list[str] = []
        by_name: dict[str, dict[str, Any]] = {}
        resolved = []
        for name, topic_id in requested:
            if name is not None and topic_id != _ZERO_UUID:
                raise InvalidRequestException("Topic name and topic ID can not both be specified.")
            if topic_id != _ZERO_UUID:
                name = apis.zk_controller.controller_context.topic_name(topic_id)
            resolved.append((name, topic_id))
        describable = deletable = None
        if apis.authorizer is not None:
            named = [name for name, _ in resolved if name is not None]
            helper = apis.auth_helper
            describable = helper.filter_by_authorized(request.context, AclOperation.DESCRIBE, ResourceType.TOPIC,
                                                      named)
            deletable = helper.filter_by_authorized(request.context, AclOperation.DELETE, ResourceType.TOPIC, named)
        for name, topic_id in resolved:
            result = {"name": name, "topic_id": topic_id, "error_code": Errors.NONE}
            results.append(result)
            if name is None:
                result["error_code"] = Errors.UNKNOWN_TOPIC_ID
            elif describable is not None and topic_id != _ZERO_UUID and name not in describable:
                # the name of a topic the client may not describe is not disclosed
                result.update(name=None, error_code=Errors.TOPIC_AUTHORIZATION_FAILED)
            elif deletable is not None and name not in deletable:
                result["error_code"] = Errors.TOPIC_AUTHORIZATION_FAILED
            elif not apis.metadata_cache.contains_topic(name):
                result["error_code"] = Errors.UNKNOWN_TOPIC_OR_PARTITION
            else:
                by_name[name] = result
                to_delete.append(name)
        if not to_delete:
            send()
            return

        def handle_delete_topics_results(errors: Mapping[str, Errors]) -> None:
            for name, error in errors.items():
                if name in by_name:
                    by_name[name]["error_code"] = error
            send()

        self._admin.delete_topics(millis(body.timeout), to_delete,
                                  self.apis.answering(request, handle_delete_topics_results), quota)

    # ------------------------------------------------------------------ CreatePartitions

    @staticmethod
    @error_response_of(ApiKeys.CREATE_PARTITIONS)
    def create_partitions_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return new_entity(CreatePartitionsResponse, results=tuple([
            new_entity(CreatePartitionsTopicResult, name=t.name, error_code=error, error_message=message)
            for t in request.body.topics]))

    def handle_create_partitions_request(self, request: Request) -> None:
        body = request.body
        apis = self.apis

        quota = self._controller_mutation_quota(request, strict_since_version=3)

        def send(results: Mapping[str, Any]) -> None:
            self._send_response_with_controller_quota(quota, request, new_entity(
                CreatePartitionsResponse, results=tuple([
                    new_entity(CreatePartitionsTopicResult, name=name, error_code=error.error,
                               error_message=error.message)
                    for name, error in results.items()])))

        if not self._controller_is_active():
            send({t.name: ApiError(Errors.NOT_CONTROLLER) for t in body.topics})
            return
        counts = Counter(t.name for t in body.topics)
        errors = {name: ApiError(Errors.INVALID_REQUEST, "Duplicate topic in request.")
                  for name, n in counts.items() if n > 1}
        valid = [t for t in body.topics if counts[t.name] == 1]
        if apis.authorizer is not None:
            valid, unauthorized = apis.auth_helper.partition_seq_by_authorized(
                request.context, AclOperation.ALTER, ResourceType.TOPIC, valid, lambda t: t.name)
            errors.update({t.name: ApiError(Errors.TOPIC_AUTHORIZATION_FAILED, "The topic authorization is failed.")
                           for t in unauthorized})
        deletion = apis.zk_controller.topic_deletion_manager
        queued = {t.name for t in valid if deletion.is_topic_queued_up_for_deletion(t.name)}
        errors.update({name: ApiError(Errors.INVALID_TOPIC_EXCEPTION, "The topic is queued for deletion.")
                       for name in queued})
        valid = [t for t in valid if t.name not in queued]
        if not valid:
            send(errors)
            return
        self._admin.create_partitions(millis(body.timeout), valid, bool(body.validate_only),
                                      self.apis.answering(request, lambda result: send({**result, **errors})), quota)

    # ------------------------------------------------------------------ configs

    @staticmethod
    @error_response_of(ApiKeys.DESCRIBE_CONFIGS)
    def describe_configs_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return new_entity(DescribeConfigsResponse, results=tuple([
            new_entity(DescribeConfigsResult, error_code=error, error_message=message, resource_type=r.resource_type,
                       resource_name=r.resource_name, configs=()) for r in request.body.resources]))

    def handle_describe_configs_request(self, request: Request) -> None:
        body = request.body
        for resource in body.resources:
            if int(resource.resource_type) not in (_TOPIC, _BROKER, _BROKER_LOGGER):
                raise InvalidRequestException(f"Unexpected resource type {int(resource.resource_type)} for resource "
                                              f"{resource.resource_name}")
        resources = list(body.resources)
        refused = []
        if self.apis.authorizer is not None:
            allowed = [_config_resource_authorized(self.apis, request, AclOperation.DESCRIBE_CONFIGS,
                                                   int(r.resource_type), r.resource_name) for r in resources]
            refused = [r for r, ok in zip(resources, allowed) if not ok]
            resources = [r for r, ok in zip(resources, allowed) if ok]
        results = self._admin.describe_configs(
            resources, request.api_version >= 1 and bool(body.include_synonyms),
            request.api_version >= 3 and bool(body.include_documentation)) if resources else []
        refused_results = [new_entity(DescribeConfigsResult, error_code=_config_authorization_error(
            int(r.resource_type)), error_message=None, resource_type=int(r.resource_type),
            resource_name=r.resource_name, configs=()) for r in refused]
        response = new_entity(DescribeConfigsResponse, results=tuple([
            new_entity(DescribeConfigsResult, error_code=r.error, error_message=r.error_message,
                       resource_type=int(r.resource_type), resource_name=r.resource_name, configs=tuple([
                           new_entity(DescribeConfigsResourceResult, name=c.name, value=c.value,
                                      read_only=c.read_only, config_source=int(c.config_source),
                                      is_sensitive=c.is_sensitive, config_type=int(c.config_type),
                                      documentation=c.documentation, synonyms=tuple([
                                          new_entity(DescribeConfigsSynonym, name=s.name, value=s.value,
                                                     source=int(s.source)) for s in c.synonyms]))
                           for c in r.configs]))
            for r in results] + refused_results))
        if request.api_version == 0:
            response = _describe_configs_response_v0(response)
        self.apis.send_response(request, response)

    @staticmethod
    @error_response_of(ApiKeys.ALTER_CONFIGS, ApiKeys.INCREMENTAL_ALTER_CONFIGS)
    def alter_configs_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        response, resource_response = _alter_configs_classes(request)
        return new_entity(response, responses=tuple([
            new_entity(resource_response, error_code=error, error_message=message, resource_type=r.resource_type,
                       resource_name=r.resource_name) for r in request.body.resources]))

    def handle_alter_configs_request(self, request: Request) -> None:
        body = request.body
        resources: dict[tuple[int, str], dict[str, Any]] = {}
        for resource in body.resources:
            resource_type = int(resource.resource_type)
            if resource_type == _BROKER_LOGGER:
                raise InvalidRequestException("AlterConfigs is deprecated and does not support the resource type "
                                              "BROKER_LOGGER")
            if resource_type not in (_TOPIC, _BROKER):
                raise InvalidRequestException(f"Unexpected resource type {resource_type}")
            resources[(resource_type, resource.resource_name)] = {c.name: c.value for c in resource.configs}
        refused = self._refused_config_resources(request, resources)
        results = self._admin.alter_configs(resources, bool(body.validate_only)) if resources else {}
        self._send_alter_configs_response(request, {**results, **refused})

    def handle_incremental_alter_configs_request(self, request: Request) -> None:
        body = request.body
        resources: dict[tuple[int, str], list[tuple[str, int, Any]]] = {}
        for resource in body.resources:
            resource_type = int(resource.resource_type)
            if resource_type not in (_TOPIC, _BROKER, _BROKER_LOGGER):
                raise InvalidRequestException(f"Unexpected resource type {resource_type}")
            resources[(resource_type, resource.resource_name)] = [
                (c.name, int(c.config_operation), c.value) for c in resource.configs]
        refused = self._refused_config_resources(request, resources)
        results = self._admin.incremental_alter_configs(resources, bool(body.validate_only)) if resources else {}
        self._send_alter_configs_response(request, {**results, **refused})

    def forward_alter_configs_request(self, request: Request) -> None:
        """KRaft mode (Kafka 3.5's handleIncrementalAlterConfigsRequest with forwarding): the
        resources this broker settles itself (ConfigAdminManager.preprocess) are answered here,
        the rest forwarded to the controller in a request of their own, and the two answers
        sent back as one, in the request's order."""
        apis = self.apis
        body = request.body
        incremental = request.api_key is ApiKeys.INCREMENTAL_ALTER_CONFIGS
        resources = list(body.resources)
        config_admin_manager = apis.config_admin_manager
        if config_admin_manager is None:
            raise KafkaException("No config admin manager: this broker is not in KRaft mode")
        preprocessed = config_admin_manager.preprocess(
            resources, incremental, bool(body.validate_only),
            lambda: _config_resource_authorized(apis, request, AclOperation.ALTER_CONFIGS, _BROKER_LOGGER, ""))
        remaining = tuple(r for i, r in enumerate(resources) if i not in preprocessed)

        def send(forwarded: Mapping[tuple[int, str], Any]) -> None:
            response, resource_response = _alter_configs_classes(request)
            apis.send_response(request, new_entity(response, responses=tuple([
                new_entity(resource_response, error_code=error.error, error_message=error.message,
                           resource_type=resource.resource_type, resource_name=resource.resource_name)
                for resource, error in reassemble_results(resources, preprocessed, forwarded)])))

        if not remaining:
            send({})
            return

        def on_controller_answer(answer: Any) -> None:
            if answer is None:
                apis.request_channel.close_connection(request)
                return
            send({(int(r.resource_type), r.resource_name): ApiError(Errors.for_code(int(r.error_code)), r.error_message)
                  for r in answer.responses})

        # the request as received when nothing was settled here, else one of the rest only
        forwarded_body = None if len(remaining) == len(resources) else dataclasses.replace(body, resources=remaining)
        forwarding_manager = apis.forwarding_manager
        if forwarding_manager is None:
            raise KafkaException("No forwarding manager: this broker is not in KRaft mode")
        forwarding_manager.forward_request(request, apis.answering(request, on_controller_answer),
                                           request_body=forwarded_body)

    def _refused_config_resources(self, request: Request, resources: dict[tuple[int, str], Any]) -> dict:
        """Take the resources the requester may not AlterConfigs out of ``resources``; their
        answers (TOPIC_ or CLUSTER_AUTHORIZATION_FAILED) by resource."""
        if self.apis.authorizer is None:
            return {}
        refused = {}
        for key in list(resources):
            resource_type, name = key
            if not _config_resource_authorized(self.apis, request, AclOperation.ALTER_CONFIGS, resource_type, name):
                refused[key] = ApiError(_config_authorization_error(resource_type), None)
                del resources[key]
        return refused

    def _send_alter_configs_response(self, request: Request, results: Mapping[tuple[int, str], Any]) -> None:
        response, resource_response = _alter_configs_classes(request)
        self.apis.send_response(request, new_entity(response, responses=tuple([
            new_entity(resource_response, error_code=error.error, error_message=error.message,
                       resource_type=resource_type, resource_name=name)
            for (resource_type, name), error in results.items()])))

    # ------------------------------------------------------------------ ElectLeaders

    @staticmethod
    @error_response_of(ApiKeys.ELECT_LEADERS)
    def elect_leaders_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        # every partition the request names, with the error and its message (ElectLeadersRequest.getErrorResponse)
        return new_entity(ElectLeadersResponse, error_code=error, replica_election_results=tuple([
            ReplicaElectionResult(topic=t.topic, partition_result=tuple([
                new_entity(PartitionResult, partition_id=p, error_code=error, error_message=message)
                for p in t.partitions]))
            for t in (request.body.topic_partitions or ())]))

    def handle_elect_replica_leader(self, request: Request) -> None:
        """ElectLeaders: Alter on the cluster; the controller elects (only the active one
        does: elsewhere every partition answers NOT_CONTROLLER, so the admin client asks the
        controller), and the answer waits in the replica manager's ElectLeader purgatory until
        this broker's metadata shows the new leaders. A request naming no partitions (null)
        means every partition, and is answered only with those that needed an election."""
        apis = self.apis
        body = request.body
        all_partitions = body.topic_partitions is None
        requested = election_request_partitions(body)

        def send_response_callback(error: ApiError, results: Mapping[TopicPartition, ApiError]) -> None:
            if all_partitions:
                results = {tp: e for tp, e in results.items() if e.error is not Errors.ELECTION_NOT_NEEDED}
            by_topic: dict[str, list[PartitionResult]] = {}
            for tp, e in results.items():
                by_topic.setdefault(tp.topic, []).append(
                    new_entity(PartitionResult, partition_id=tp.partition, error_code=e.error, error_message=e.message))
            apis.send_response(request, new_entity(
                ElectLeadersResponse, error_code=error.error, replica_election_results=tuple([
                    ReplicaElectionResult(topic=topic, partition_result=tuple(partitions))
                    for topic, partitions in by_topic.items()])))

        if not apis.auth_helper.authorize(request.context, AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
            error = ApiError(Errors.CLUSTER_AUTHORIZATION_FAILED, None)
            send_response_callback(error, {tp: error for tp in requested})
            return
        election_type = election_request_type(request.api_version, body)
        partitions = apis.metadata_cache.get_all_partitions() if all_partitions else requested
        apis.replica_manager.elect_leaders(
            apis.controller, partitions, election_type,
            apis.answering(request, lambda results: send_response_callback(ApiError.NONE, results)),  # type: ignore[attr-defined]
            millis(body.timeout))


def _alter_configs_classes(request: Request) -> tuple[type, type]:
    """The response class and its resource struct of an AlterConfigs or IncrementalAlterConfigs
    request (both answer with the same shape)."""
    if request.api_key is ApiKeys.INCREMENTAL_ALTER_CONFIGS:
        return IncrementalAlterConfigsResponse, IncrementalAlterConfigsResourceResponse
    return AlterConfigsResponse, AlterConfigsResourceResponse


def election_request_partitions(body: Any) -> set[TopicPartition]:
    """The partitions an ElectLeaders request names (none when it asks for all of them)."""
    if body.topic_partitions is None:
        return set()
    return {TopicPartition(t.topic, int(p)) for t in body.topic_partitions for p in t.partitions}


def election_request_type(version: int, body: Any) -> Any:
    """The request's ElectionType: PREFERRED for v0, which has no field for it; an unknown
    value is an InvalidRequestException (INVALID_REQUEST), as 2.8.2's KRaft controller
    answers (its ZooKeeper broker fails on it with UNKNOWN_SERVER_ERROR)."""
    from kafka_py.controller.kafka_controller import ElectionType

    if version == 0:
        return ElectionType.PREFERRED
    value = int(body.election_type)
    try:
        return ElectionType(value)
    except ValueError:
        raise InvalidRequestException(f"Unknown election type {value}") from None


def _describe_configs_response_v0(response: Any) -> Any:
    """A DescribeConfigs answer as version 0 writes it: ``is_default`` in place of the config
    source that version 1 brought (Kafka's v0 reader maps it back to DEFAULT_CONFIG)."""
    v0 = to_version(response, 0)
    return dataclasses.replace(v0, results=tuple([
        dataclasses.replace(result, configs=tuple([
            dataclasses.replace(config, is_default=int(source.config_source) == _DEFAULT_CONFIG_SOURCE)
            for config, source in zip(result.configs, full.configs)]))
        for result, full in zip(v0.results, response.results)]))


__all__ = ["AdminRequestHandlers", "election_request_partitions", "election_request_type"]
