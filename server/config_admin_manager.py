"""Port of core/src/main/scala/kafka/server/ConfigAdminManager.scala (Kafka 3.5.0), the
preprocessing half, for a KRaft broker.

A KRaft broker forwards AlterConfigs and IncrementalAlterConfigs to the active controller,
which stores the changes as ConfigRecords. The controller cannot judge a change to a broker's
own dynamic config (a listener's key store it cannot open, a thread count out of range), so
the broker that receives the request checks the BROKER resources first, as Kafka 3.5 does:
such a resource must name this broker (or none, for the cluster default), and the config it
would leave must pass DynamicBrokerConfig's validation, reconfigurable components included.
BROKER_LOGGER resources (log levels, which are not stored anywhere) are applied here and
never forwarded. What fails gets its error here; the rest goes to the controller, and the
two answers are put back together in the request's order.

In ZooKeeper mode ZkAdminManager validates and stores in one step, and none of this is used.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Sequence

from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.errors import ApiException, InvalidRequestException
from kafka_py.metadata.controller.configuration_control_manager import ConfigResource
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.dynamic_broker_config import DynamicBrokerConfig
from kafka_py.server.kafka_config import CONFIG_DEF as BROKER_CONFIG_DEF
from kafka_py.server.zk_admin_manager import (
    AlterConfigOpType,
    ConfigResourceType,
    ZkAdminManager,
    alter_log_level_configs,
)
from kafka_py.core.utils.logging import IdentLogger

logger = logging.getLogger(__name__)

_BROKER = ConfigResourceType.BROKER.value
_TOPIC = ConfigResourceType.TOPIC.value
_BROKER_LOGGER = ConfigResourceType.BROKER_LOGGER.value


class ConfigAdminManager:
    def __init__(self, node_id: int, dynamic_config: DynamicBrokerConfig, config_repository: Any) -> None:
        self.node_id = node_id
        self.dynamic_config = dynamic_config
        self.config_repository = config_repository
        self.logger = IdentLogger(logger, f"[ConfigAdminManager[nodeId={node_id}]: ")

    def preprocess(self, resources: Sequence[Any], incremental: bool, validate_only: bool,
                   authorize_cluster: Callable[[], bool]) -> dict[int, ApiError]:
        """The answers of the resources (by position in ``resources``) settled here; the others
        go to the controller. ``authorize_cluster``: may the requester alter the cluster's
        configs (asked for BROKER_LOGGER only; the rest are authorized where they are stored).
        ``validate_only``: a log level is checked, not set."""
        results: dict[int, ApiError] = {}
        seen: dict[tuple[int, str], int] = {}
        for index, resource in enumerate(resources):
            key = (int(resource.resource_type), resource.resource_name)
            if key in seen:
                for i in (seen[key], index):
                    results[i] = ApiError(Errors.INVALID_REQUEST, "Each resource must appear at most once.")
            seen[key] = index
        for index, resource in enumerate(resources):
            if index in results:
                continue
            try:
                self._preprocess_one(resource, incremental, validate_only, authorize_cluster)
                if int(resource.resource_type) == _BROKER_LOGGER:
                    results[index] = ApiError.NONE  # type: ignore[attr-defined]
            except Exception as e:  # noqa: BLE001 - the resource's answer
                error = ApiError.from_throwable(e)
                self.logger.info("Error preprocessing %salterConfigs request on %s %s: %s",
                                 "incremental" if incremental else "", resource.resource_type,
                                 resource.resource_name, error)
                results[index] = error
        return results

    def _preprocess_one(self, resource: Any, incremental: bool, validate_only: bool,
                        authorize_cluster: Callable[[], bool]) -> None:
        names = [c.name for c in resource.configs]
        if len(set(names)) != len(names):
            raise InvalidRequestException("Error due to duplicate config keys")
        null_updates = [c.name for c in resource.configs if c.value is None
                        and (not incremental or int(c.config_operation) != AlterConfigOpType.DELETE)]
        if null_updates:
            raise InvalidRequestException(f"Null value not supported for : {', '.join(null_updates)}")
        resource_type = int(resource.resource_type)
        if resource_type == _BROKER_LOGGER and incremental:
            if not authorize_cluster():
                raise Errors.CLUSTER_AUTHORIZATION_FAILED.exception_class(Errors.CLUSTER_AUTHORIZATION_FAILED.message)
            self.validate_resource_name_is_current_node_id(resource.resource_name)
            ops = [ZkAdminManager._normalize_op(c) for c in resource.configs]
            ZkAdminManager._validate_log_level_configs(ops)
            if not validate_only:
                self._alter_log_level_configs(ops)
        elif resource_type == _BROKER:
            if resource.resource_name:
                self.validate_resource_name_is_current_node_id(resource.resource_name)
            self._validate_broker_config_change(resource, incremental)
        elif resource_type != _TOPIC:
            # (legacy AlterConfigs has no BROKER_LOGGER either)
            raise InvalidRequestException(f"Unknown resource type {resource_type}")

    def validate_resource_name_is_current_node_id(self, name: str) -> None:
        try:
            node_id = int(name)
        except ValueError:
            raise InvalidRequestException(f"Node id must be an integer, but it is: {name}") from None
        if node_id != self.node_id:
            raise InvalidRequestException(f"Unexpected broker id, expected {self.node_id}, but received {name}")

    def _validate_broker_config_change(self, resource: Any, incremental: bool) -> None:
        per_broker_config = bool(resource.resource_name)
        if incremental:
            persistent = self.config_repository.config(ConfigResource(ConfigResourceType.BROKER,
                                                                      resource.resource_name))
            props = self.dynamic_config.from_persistent_props(persistent, per_broker_config)
            ops = [ZkAdminManager._normalize_op(c) for c in resource.configs]
            ZkAdminManager._prepare_incremental_configs(ops, props, BROKER_CONFIG_DEF.config_keys)
        else:
            # legacy AlterConfigs replaces the resource's whole config with the one given
            props = {c.name: c.value for c in resource.configs}
        try:
            self.dynamic_config.validate(props, per_broker_config)
        except ApiException:
            raise
        except Exception as e:  # noqa: BLE001 - Kafka's answer for a config that cannot be applied
            raise InvalidRequestException(str(e)) from None

    def _alter_log_level_configs(self, ops: Sequence[tuple[str, AlterConfigOpType, Any]]) -> None:
        alter_log_level_configs(self.logger, ops)

def reassemble_results(resources: Sequence[Any], preprocessed: Mapping[int, ApiError],
                       forwarded: Mapping[tuple[int, str], ApiError]) -> list[tuple[Any, ApiError]]:
    """Every resource of the request with its answer, in the request's order: the preprocessed
    ones' own, the others' from the controller (UNKNOWN_SERVER_ERROR for one it left out)."""
    out = []
    for index, resource in enumerate(resources):
        error = preprocessed.get(index)
        if error is None:
            error = forwarded.get((int(resource.resource_type), resource.resource_name))
        if error is None:
            error = ApiError(Errors.UNKNOWN_SERVER_ERROR, "The controller did not answer for this resource")
        out.append((resource, error))
    return out


__all__ = ["ConfigAdminManager", "reassemble_results"]
