"""Port of core/src/main/scala/kafka/server/ApiVersionManager.scala (Kafka 2.8.2):
SimpleApiVersionManager, for the KRaft controller's listener.

Which APIs a listener serves, at which versions, and the ApiVersions answer that says so.
The network layer asks it before a request is parsed: a request of an API the listener does
not serve closes the connection ("Received request api key ... which is not enabled"), one
of a version outside the served range too, except ApiVersions, which is answered (KIP-511).

A ZooKeeper-mode broker's listeners have no manager: what they serve is IMPLEMENTED_APIS and
the supported versions of kafka_py/clients/common/protocol/api_keys.py, as before. A KRaft broker's serve
those and UnregisterBroker (``broker_apis``). The controller listener's
set is the APIs ControllerApis handles (Kafka 2.8.2's handlers and 3.0's additions); where
Kafka 3.0's controller advertises every API whose spec names the controller listener, this
one advertises only what it answers. The raft APIs are served at the versions the raft
client speaks (Fetch v12, the first with the KIP-595 fields; Vote, BeginQuorumEpoch,
EndQuorumEpoch, DescribeQuorum and FetchSnapshot v0); the others at every version 2.8.2
(or 3.0, for AllocateProducerIds) defines and the message classes cover.
"""
from __future__ import annotations

import datetime
import enum
import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from kio.static.primitive import i16, i64

from kafka_py.clients.common.protocol.api_keys import DELEGATION_TOKEN_APIS, IMPLEMENTED_APIS, ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.schema_imports import import_schema_module

logger = logging.getLogger(__name__)


class ListenerType(enum.Enum):
    """ApiMessageType.ListenerType: whose listener a request arrives on."""

    ZK_BROKER = "zkBroker"
    BROKER = "broker"
    CONTROLLER = "controller"


def _raft_versions(api: ApiKeys, version: int) -> range:
    return range(version, version + 1) if version in api.schema_versions() else range(0)


def controller_apis() -> dict[ApiKeys, range]:
    """The APIs the KRaft controller listener serves and their versions."""
    apis = {api: api.schema_versions() for api in (
        ApiKeys.API_VERSIONS, ApiKeys.METADATA, ApiKeys.SASL_HANDSHAKE, ApiKeys.SASL_AUTHENTICATE,
        ApiKeys.ENVELOPE,
        ApiKeys.BROKER_REGISTRATION, ApiKeys.BROKER_HEARTBEAT, ApiKeys.UNREGISTER_BROKER, ApiKeys.ALTER_ISR,
        ApiKeys.CREATE_TOPICS, ApiKeys.DELETE_TOPICS, ApiKeys.CREATE_PARTITIONS, ApiKeys.ELECT_LEADERS,
        ApiKeys.ALTER_CONFIGS, ApiKeys.INCREMENTAL_ALTER_CONFIGS, ApiKeys.ALTER_CLIENT_QUOTAS,
        ApiKeys.ALTER_PARTITION_REASSIGNMENTS, ApiKeys.LIST_PARTITION_REASSIGNMENTS,
        ApiKeys.ALLOCATE_PRODUCER_IDS, ApiKeys.UPDATE_FEATURES,
        ApiKeys.CREATE_ACLS, ApiKeys.DELETE_ACLS, ApiKeys.ALTER_USER_SCRAM_CREDENTIALS)}
    apis[ApiKeys.FETCH] = _raft_versions(ApiKeys.FETCH, 12)
    for api in (ApiKeys.VOTE, ApiKeys.BEGIN_QUORUM_EPOCH, ApiKeys.END_QUORUM_EPOCH, ApiKeys.DESCRIBE_QUORUM,
                ApiKeys.FETCH_SNAPSHOT):
        apis[api] = _raft_versions(api, 0)
    return {api: versions for api, versions in apis.items() if versions}


def broker_apis() -> dict[ApiKeys, range]:
    """The APIs a KRaft broker's listeners serve: the broker's, and UnregisterBroker, which
    2.8.2's spec gives the broker listener (forwarded to the controller) and not the
    ZooKeeper-mode one."""
    # (not the delegation token APIs, which 2.8.2 serves in ZooKeeper mode only)
    apis = {api: api.supported_versions() for api in IMPLEMENTED_APIS if api not in DELEGATION_TOKEN_APIS}
    apis[ApiKeys.UNREGISTER_BROKER] = ApiKeys.UNREGISTER_BROKER.schema_versions()
    return {api: versions for api, versions in apis.items() if versions}


class ApiVersionManager(ABC):
    listener_type: ListenerType

    @property
    @abstractmethod
    def enabled_apis(self) -> Mapping[ApiKeys, range]:
        ...

    def is_api_enabled(self, api: ApiKeys) -> bool:
        return api in self.enabled_apis

    def supported_versions(self, api: ApiKeys) -> range:
        return self.enabled_apis.get(api, range(0))

    def api_version_response(self, version: int, throttle_time_ms: int = 0,
                             error: Errors = Errors.NONE) -> Any:
        """The ApiVersions answer of ``version`` listing the enabled APIs (v0 when it carries an error,
        as kafka_py.clients.common.protocol.messages.api_versions_response does)."""
        if error is not Errors.NONE:
            version = 0
        module = import_schema_module(f"kio.schema.api_versions.v{version}.response")
        keys = tuple(module.ApiVersion(api_key=i16(api.id), min_version=i16(versions.start),
                                       max_version=i16(versions[-1]))
                     for api, versions in sorted(self.enabled_apis.items()))
        values: dict[str, Any] = {"error_code": error.error_code, "api_keys": keys}
        if "throttle_time" in {f.name for f in fields(module.ApiVersionsResponse)}:
            values["throttle_time"] = datetime.timedelta(milliseconds=throttle_time_ms)
        return module.ApiVersionsResponse(**values)


def with_features(response: Any, broker_features: Any, feature_cache: Any) -> Any:
    """An ApiVersions response of v3 or later with the broker's supported features, and the
    finalized ones with their epoch once the broker knows them (Kafka's
    ApiVersionsResponse.apiVersionsResponse with features); older versions carry none."""
    if broker_features is None or not hasattr(response, "supported_features"):
        return response
    module = import_schema_module(f"kio.schema.api_versions.v{type(response).__version__}.response")
    supported = tuple(module.SupportedFeatureKey(name=name, min_version=i16(r.min_version),
                                                 max_version=i16(r.max_version))
                      for name, r in broker_features.supported_features.items())
    finalized = feature_cache.get() if feature_cache is not None else None
    if finalized is None:
        return replace(response, supported_features=supported)
    return replace(response, supported_features=supported, finalized_features_epoch=i64(finalized.epoch),
                   finalized_features=tuple(module.FinalizedFeatureKey(
                       name=name, max_version_level=i16(r.max_version_level),
                       min_version_level=i16(r.min_version_level)) for name, r in finalized.features.items()))


class ApiVersionSupplier:
    """What a broker's listeners answer ApiVersions with, before authentication (a SASL
    listener's SaslServerAuthenticator) as after it (KafkaApis): the listener's API set (its
    ApiVersionManager's, or the broker's IMPLEMENTED_APIS) and the broker's features. Kafka
    2.8 hands the same supplier to its SaslChannelBuilder."""

    def __init__(self, api_version_manager: Any, broker_features: Any, feature_cache: Any) -> None:
        self.api_version_manager = api_version_manager
        self.broker_features = broker_features
        self.feature_cache = feature_cache

    def __call__(self, version: int, error: Errors = Errors.NONE) -> Any:
        from kafka_py.clients.common.protocol.messages import api_versions_response

        if self.api_version_manager is not None:
            response = self.api_version_manager.api_version_response(version, error=error)
        else:
            response = api_versions_response(version, error)
        return response if error is not Errors.NONE else with_features(response, self.broker_features,
                                                                        self.feature_cache)


class SimpleApiVersionManager(ApiVersionManager):
    def __init__(self, listener_type: ListenerType, enabled_apis: Mapping[ApiKeys, range] | None = None) -> None:
        if enabled_apis is None:
            if listener_type is not ListenerType.CONTROLLER:
                raise ValueError(f"No default API set for the {listener_type.value} listener")
            enabled_apis = controller_apis()
        self.listener_type = listener_type
        self._enabled_apis = dict(enabled_apis)

    @property
    def enabled_apis(self) -> Mapping[ApiKeys, range]:
        return self._enabled_apis
