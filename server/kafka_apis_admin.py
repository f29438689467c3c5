"""Port of the admin handlers of core/src/main/scala/kafka/server/KafkaApis.scala (Kafka 2.8.2,
ZooKeeper mode): CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs, AlterConfigs
and IncrementalAlterConfigs.

Split from server/kafka_apis.py for size only; KafkaApis dispatches to
``AdminRequestHandlers`` and these build their answers with its helpers.

The handlers do what Kafka's do at the request level (only the active controller's broker
creates, deletes or extends topics -- others answer NOT_CONTROLLER so the admin client
retries there; duplicate names in one request are INVALID_REQUEST) and leave the work to
ZkAdminManager, which writes ZooKeeper and, when the request has a timeout, answers only
once the metadata cache shows the result (or the timeout passes).
"""
from __future__ import annotations

import logging
import uuid
from collections import Counter
from typing import TYPE_CHECKING, Any, Mapping

from kafka_py.common.errors import InvalidRequestException
from kafka_py.network.request_channel import Request
from kafka_py.protocol.errors import Errors
from kafka_py.server.kafka_apis import _field, _millis, build_response

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.server.kafka_apis import KafkaApis

logger = logging.getLogger(__name__)

_ZERO_UUID = uuid.UUID(int=0)

# ConfigResource.Type ids
_TOPIC = 2
_BROKER = 4
_BROKER_LOGGER = 8


class AdminRequestHandlers:
    """The admin API handlers of one KafkaApis."""

    def __init__(self, apis: "KafkaApis") -> None:
        self.apis = apis

    @property
    def _admin(self) -> Any:
        return self.apis.admin_manager

    def _controller_is_active(self) -> bool:
        return bool(self.apis.controller.is_active)

    # ------------------------------------------------------------------ CreateTopics

    def handle_create_topics_request(self, request: Request) -> None:
        body = request.body
        apis = self.apis
        topics = list(body.topics)
        results: dict[str, dict[str, Any]] = {}
        for topic in topics:
            results.setdefault(topic.name, {"name": topic.name, "error_code": Errors.NONE, "error_message": None})

        def send(values: Mapping[str, Mapping[str, Any]]) -> None:
            apis.send_response(request, build_response(request, {"throttle_time": 0, "topics": list(values.values())}))

        if not self._controller_is_active():
            for result in results.values():
                result["error_code"] = Errors.NOT_CONTROLLER
            send(results)
            return
        counts = Counter(t.name for t in topics)
        to_create = {}
        for topic in topics:
            if counts[topic.name] > 1:
                results[topic.name].update(error_code=Errors.INVALID_REQUEST,
                                           error_message="Found multiple entries for this topic.")
            else:
                to_create[topic.name] = topic

        def handle_create_topics_results(created: Mapping[str, Any]) -> None:
            for name, result in created.items():
                entry = results[name]
                entry["error_code"] = result.error
                entry["error_message"] = result.message
                if result.error is Errors.NONE:
                    entry.update(num_partitions=result.num_partitions, replication_factor=result.replication_factor,
                                 topic_id=result.topic_id or _ZERO_UUID,
                                 configs=[{"name": c.name, "value": c.value, "read_only": c.read_only,
                                           "config_source": int(c.config_source), "is_sensitive": c.is_sensitive}
                                          for c in result.configs])
                else:
                    # A failed create reports no configs or metadata.
                    entry.update(num_partitions=-1, replication_factor=-1, configs=(), topic_config_error_code=0)
            send(results)

        if not to_create:
            send(results)
            return
        self._admin.create_topics(_millis(body.timeout), bool(_field(body, "validate_only", False)), to_create,
                                  True, self.apis.answering(request, handle_create_topics_results))

    # ------------------------------------------------------------------ DeleteTopics

    def handle_delete_topics_request(self, request: Request) -> None:
        body = request.body
        apis = self.apis
        version = request.api_version
        if _field(body, "topics") is not None:
            requested = [(t.name, t.topic_id or _ZERO_UUID) for t in body.topics]
        else:
            requested = [(name, _ZERO_UUID) for name in body.topic_names]
        results: list[dict[str, Any]] = []

        def send() -> None:
            apis.send_response(request, build_response(request, {"throttle_time": 0, "responses": results}))

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
        for name, topic_id in requested:
            if name is not None and topic_id != _ZERO_UUID:
                raise InvalidRequestException("Topic name and topic ID can not both be specified.")
            if topic_id != _ZERO_UUID:
                name = apis.controller.controller_context.topic_name(topic_id)
            result = {"name": name, "topic_id": topic_id, "error_code": Errors.NONE}
            results.append(result)
            if name is None:
                result["error_code"] = Errors.UNKNOWN_TOPIC_ID
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

        self._admin.delete_topics(_millis(body.timeout), to_delete,
                                  self.apis.answering(request, handle_delete_topics_results))

    # ------------------------------------------------------------------ CreatePartitions

    def handle_create_partitions_request(self, request: Request) -> None:
        body = request.body
        apis = self.apis

        def send(results: Mapping[str, Any]) -> None:
            apis.send_response(request, build_response(request, {"throttle_time": 0, "results": [
                {"name": name, "error_code": error.error, "error_message": error.message}
                for name, error in results.items()]}))

        from kafka_py.server.delayed_create_partitions import ApiError

        if not self._controller_is_active():
            send({t.name: ApiError(Errors.NOT_CONTROLLER) for t in body.topics})
            return
        counts = Counter(t.name for t in body.topics)
        errors = {name: ApiError(Errors.INVALID_REQUEST, "Duplicate topic in request.")
                  for name, n in counts.items() if n > 1}
        valid = [t for t in body.topics if counts[t.name] == 1]
        deletion = apis.controller.topic_deletion_manager
        queued = {t.name for t in valid if deletion.is_topic_queued_up_for_deletion(t.name)}
        errors.update({name: ApiError(Errors.INVALID_TOPIC_EXCEPTION, "The topic is queued for deletion.")
                       for name in queued})
        valid = [t for t in valid if t.name not in queued]
        if not valid:
            send(errors)
            return
        self._admin.create_partitions(_millis(body.timeout), valid, bool(body.validate_only),
                                      self.apis.answering(request, lambda result: send({**result, **errors})))

    # ------------------------------------------------------------------ configs

    def handle_describe_configs_request(self, request: Request) -> None:
        body = request.body
        for resource in body.resources:
            if int(resource.resource_type) not in (_TOPIC, _BROKER, _BROKER_LOGGER):
                raise InvalidRequestException(f"Unexpected resource type {int(resource.resource_type)} for resource "
                                              f"{resource.resource_name}")
        results = self._admin.describe_configs(list(body.resources), bool(_field(body, "include_synonyms", False)),
                                               bool(_field(body, "include_documentation", False)))
        self.apis.send_response(request, build_response(request, {"throttle_time": 0, "results": [
            {"error_code": r.error, "error_message": r.error_message, "resource_type": int(r.resource_type),
             "resource_name": r.resource_name,
             "configs": [{"name": c.name, "value": c.value, "read_only": c.read_only,
                          "config_source": int(c.config_source), "is_sensitive": c.is_sensitive,
                          "is_default": c.is_default, "config_type": int(c.config_type),
                          "documentation": c.documentation,
                          "synonyms": [{"name": s.name, "value": s.value, "source": int(s.source)}
                                       for s in c.synonyms]} for c in r.configs]}
            for r in results]}))

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
        results = self._admin.alter_configs(resources, bool(body.validate_only))
        self._send_alter_configs_response(request, results)

    def handle_incremental_alter_configs_request(self, request: Request) -> None:
        body = request.body
        resources: dict[tuple[int, str], list[tuple[str, int, Any]]] = {}
        for resource in body.resources:
            resource_type = int(resource.resource_type)
            if resource_type not in (_TOPIC, _BROKER, _BROKER_LOGGER):
                raise InvalidRequestException(f"Unexpected resource type {resource_type}")
            resources[(resource_type, resource.resource_name)] = [
                (c.name, int(c.config_operation), c.value) for c in resource.configs]
        results = self._admin.incremental_alter_configs(resources, bool(body.validate_only))
        self._send_alter_configs_response(request, results)

    def _send_alter_configs_response(self, request: Request, results: Mapping[tuple[int, str], Any]) -> None:
        self.apis.send_response(request, build_response(request, {"throttle_time": 0, "responses": [
            {"error_code": error.error, "error_message": error.message, "resource_type": resource_type,
             "resource_name": name} for (resource_type, name), error in results.items()]}))


__all__ = ["AdminRequestHandlers"]
