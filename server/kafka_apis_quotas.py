"""Port of the client quota parts of core/src/main/scala/kafka/server/KafkaApis.scala and
RequestHelper.scala (``sendResponseMaybeThrottle``), and the quota half of ZkAdminManager.scala
(Kafka 2.8.2): throttling answers by client quotas, DescribeClientQuotas (key 48) and
AlterClientQuotas (key 49).

Throttling (KIP-219). Every answer a handler sends through ``KafkaApis.send_response`` passes
``maybe_throttle_response``: the request's handler thread time is recorded against the
client's ``request_percentage`` quota and, when that is exceeded, the answer carries the
throttle time in its ``throttle_time_ms`` and the connection is muted for as long
(``ClientQuotaManager.throttle``, queued before the answer itself). The requests brokers send
each other (ClusterAction APIs) are exempt. Produce and Fetch record their bytes against
``producer_byte_rate`` / ``consumer_byte_rate`` as well, in ``produce_throttle_time_ms`` and
``send_fetch_response``; the larger of the two throttle times wins, as in Kafka. A throttled
consumer fetch is answered with no data (the bytes it would have carried are taken back from
its rate), a follower's fetch is never throttled.

DescribeClientQuotas and AlterClientQuotas read and write the quota configs in ZooKeeper
(/config/users/<user>, /config/clients/<client-id>, /config/users/<user>/clients/<client-id>,
/config/ips/<ip>), as Kafka 2.8's ZkAdminManager does; every broker's DynamicConfigManager
then applies a change through /config/changes. A KRaft broker, with no ZooKeeper, forwards
AlterClientQuotas to the controller and answers DescribeClientQuotas from the quotas the
metadata log brought it (server/metadata/client_quota_cache.py), as Kafka 3.0 does. Unlike Kafka 2.8 (whose ZooKeeper path
stored any number), a quota must be greater than 0 (INVALID_REQUEST, as later Kafka answers).
"""
from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import logging
import socket
from typing import Any, Callable, Iterable, Mapping, Optional

from kio.schema.alter_client_quotas.v1.response import AlterClientQuotasResponse
from kio.schema.alter_client_quotas.v1.response import EntityData as AlteredEntity
from kio.schema.alter_client_quotas.v1.response import EntryData as AlteredEntry
from kio.schema.describe_client_quotas.v1.response import DescribeClientQuotasResponse, ValueData
from kio.schema.describe_client_quotas.v1.response import EntityData as DescribedEntity
from kio.schema.describe_client_quotas.v1.response import EntryData as DescribedEntry

from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.errors import InvalidRequestException, UnsupportedVersionException
from kafka_py.network.request_channel import Request, SendResponse
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.security.sanitizer import desanitize, sanitize
from kafka_py.server.config_handler import (
    CONSUMER_BYTE_RATE_OVERRIDE_CONFIG,
    CONTROLLER_MUTATION_RATE_OVERRIDE_CONFIG,
    IP_CONNECTION_RATE_OVERRIDE_CONFIG,
    PRODUCER_BYTE_RATE_OVERRIDE_CONFIG,
    REQUEST_PERCENTAGE_OVERRIDE_CONFIG,
)
from kafka_py.server.kafka_apis_common import NO_THROTTLE, error_response_of
from kafka_py.server.kafka_config import java_double_to_string
from kafka_py.core.utils.java_limits import INT_MAX, LONG_MAX
from kafka_py.core.zk.zk_data import ConfigEntityName, ConfigType

logger = logging.getLogger(__name__)

# ClientQuotaEntity's entity types.
USER = "user"
CLIENT_ID = "client-id"
IP = "ip"

# DescribeClientQuotasRequest's match types.
MATCH_TYPE_EXACT = 0
MATCH_TYPE_DEFAULT = 1
MATCH_TYPE_SPECIFIED = 2

# QuotaConfigs: the keys of user and client-id entities and of ip entities, with their types.
USER_CLIENT_QUOTA_CONFIGS: dict[str, str] = {
    PRODUCER_BYTE_RATE_OVERRIDE_CONFIG: "LONG",
    CONSUMER_BYTE_RATE_OVERRIDE_CONFIG: "LONG",
    REQUEST_PERCENTAGE_OVERRIDE_CONFIG: "DOUBLE",
    CONTROLLER_MUTATION_RATE_OVERRIDE_CONFIG: "DOUBLE",
}
IP_QUOTA_CONFIGS: dict[str, str] = {IP_CONNECTION_RATE_OVERRIDE_CONFIG: "INT"}
_EPSILON = 1e-6


def with_throttle_time(response: Any, throttle_time_ms: int) -> Any:
    """``response`` with its throttle time set (kio responses are frozen dataclasses; a version
    without the field is returned unchanged: the muted connection throttles that client anyway)."""
    fields = getattr(type(response), "__dataclass_fields__", {})
    if "throttle_time" in fields:
        return dataclasses.replace(response, throttle_time=datetime.timedelta(milliseconds=throttle_time_ms))
    if "throttle_time_ms" in fields:
        return dataclasses.replace(response, throttle_time_ms=type(response.throttle_time_ms)(throttle_time_ms))
    return response


def _altered_entry(error: Errors, message: Optional[str], entity: Iterable[tuple[str, Optional[str]]]) -> AlteredEntry:
    return AlteredEntry(error_code=error.error_code, error_message=message, entity=tuple([
        AlteredEntity(entity_type=t, entity_name=n) for t, n in entity]))


class QuotaRequestHandlers:
    """Client quota throttling and the quota admin APIs, for KafkaApis."""

    def __init__(self, apis: Any) -> None:
        self.apis = apis

    # ------------------------------------------------------------------ throttling

    def _throttle(self, manager: Any, request: Any, throttle_time_ms: int) -> None:
        manager.throttle(request, throttle_time_ms, self.apis.request_channel.send_response)

    def request_throttle_time_ms(self, request: Any) -> int:
        """sendResponseMaybeThrottle's half before the answer: record the request's handler time
        against ``request_percentage`` and, if over, mute the connection; the throttle time."""
        quotas = self.apis.quotas
        if request.api_key.cluster_action:
            quotas.request.maybe_record_exempt(request)
            return 0
        throttle_time_ms = quotas.request.maybe_record_and_get_throttle_time_ms(
            request, self.apis.time.hi_res_milliseconds())
        request.api_throttle_time_ms = throttle_time_ms
        self._throttle(quotas.request, request, throttle_time_ms)
        return throttle_time_ms

    def maybe_throttle_response(self, request: Any, response: Any) -> Any:
        throttle_time_ms = self.request_throttle_time_ms(request)
        return with_throttle_time(response, throttle_time_ms) if throttle_time_ms > 0 else response

    def produce_throttle_time_ms(self, request: Any, acks: int) -> int:
        """The produce callback's quotas: the request's bytes against ``producer_byte_rate`` and
        (unless acks=0) its handler time against ``request_percentage``; the larger throttle
        mutes the connection."""
        quotas = self.apis.quotas
        time_ms = self.apis.time.hi_res_milliseconds()
        bandwidth_ms = quotas.produce.maybe_record_and_get_throttle_time_ms(request, request.size_in_bytes, time_ms)
        request_ms = 0 if acks == 0 else quotas.request.maybe_record_and_get_throttle_time_ms(request, time_ms)
        max_ms = max(bandwidth_ms, request_ms)
        if max_ms > 0:
            request.api_throttle_time_ms = max_ms
            if bandwidth_ms > request_ms:
                self._throttle(quotas.produce, request, bandwidth_ms)
            else:
                self._throttle(quotas.request, request, request_ms)
        return max_ms

    def fetch_max_bytes_in_quota_window(self, request: Any) -> int:
        """A consumer fetch never asks for more than its byte rate allows in one quota span."""
        context = request.context
        limit = self.apis.quotas.fetch.get_max_value_in_quota_window(context.principal, context.client_id or "")
        return int(min(limit, INT_MAX))

    def send_fetch_response(self, request: Any, response: Any, empty_response: Any, replica_id: int,
                            commit: Optional[Callable[[], Any]] = None,
                            on_complete: Optional[Callable[[Any], None]] = None) -> None:
        """Answer a fetch: a follower's exempt, a consumer's recorded against its byte rate and
        request quota; a throttled consumer gets ``empty_response`` (or what it returns, when it
        is a callable) with the throttle time. With ``commit``, ``response`` is only sized, and
        an answer that is not throttled is what ``commit()`` returns: the same answer, built
        once the fetch session has taken it in (server/fetch_session.py). ``on_complete`` runs
        once an answer with data is written (the conversion statistics of Fetch v0-v3)."""
        quotas = self.apis.quotas
        if replica_id >= 0:
            quotas.request.maybe_record_exempt(request)
            self.apis.send_response_exempt_throttle(request, response if commit is None else commit(), on_complete)
            return
        send = request.build_response_send(response)
        time_ms = self.apis.time.hi_res_milliseconds()
        request_ms = quotas.request.maybe_record_and_get_throttle_time_ms(request, time_ms)
        bandwidth_ms = quotas.fetch.maybe_record_and_get_throttle_time_ms(request, send.size, time_ms)
        max_ms = max(bandwidth_ms, request_ms)
        if max_ms <= 0:
            if commit is not None:
                send = request.build_response_send(commit())
            self.apis.request_channel.send_response(SendResponse(request, send, None, on_complete))
            return
        request.api_throttle_time_ms = max_ms
        # The client gets no data, so the bytes must not count against it.
        quotas.fetch.unrecord_quota_sensor(request, send.size, time_ms)
        if bandwidth_ms > request_ms:
            self._throttle(quotas.fetch, request, bandwidth_ms)
        else:
            self._throttle(quotas.request, request, request_ms)
        if callable(empty_response):
            empty_response = empty_response()
        self.apis.send_response_exempt_throttle(request, with_throttle_time(empty_response, max_ms))

    # ------------------------------------------------------------------ DescribeClientQuotas

    def _authorized(self, request: Any, operation: str) -> bool:
        """DescribeConfigs (or AlterConfigs) on the cluster, when an authorizer is configured."""
        helper = getattr(self.apis, "auth_helper", None)
        if helper is None or getattr(self.apis, "authorizer", None) is None:
            return True
        from kafka_py.core.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType

        return helper.authorize(request.context, getattr(AclOperation, operation), ResourceType.CLUSTER, CLUSTER_NAME)

    @staticmethod
    @error_response_of(ApiKeys.DESCRIBE_CLIENT_QUOTAS)
    def describe_client_quotas_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        # the error at the top level, entries null (DescribeClientQuotasRequest.getErrorResponse)
        return DescribeClientQuotasResponse(throttle_time=NO_THROTTLE, error_code=error.error_code,
                                            error_message=ApiError.of(error, message).message, entries=None)

    def handle_describe_client_quotas_request(self, request: Any) -> None:
        if not self._authorized(request, "DESCRIBE_CONFIGS"):
            self.apis.send_error_response(request, Errors.CLUSTER_AUTHORIZATION_FAILED)
            return
        components = [(c.entity_type, int(c.match_type), c.match) for c in request.body.components]
        # A filter the admin manager refuses fails the request as a whole: KafkaApis.handle_error
        # answers with the error response above.
        result = self.describe_client_quotas(components, bool(request.body.strict))
        entries = tuple([DescribedEntry(entity=tuple([DescribedEntity(entity_type=t, entity_name=n) for t, n in entity]),
                                        values=tuple([ValueData(key=k, value=v) for k, v in sorted(values.items())]))
                         for entity, values in sorted(result.items(), key=lambda e: [(t, n or "") for t, n in e[0]])])
        self.apis.send_response(request, DescribeClientQuotasResponse(
            throttle_time=NO_THROTTLE, error_code=Errors.NONE.error_code, error_message=None, entries=entries))

    def describe_client_quotas(self, components: Iterable[tuple[str, int, Optional[str]]], strict: bool
                               ) -> dict[tuple[tuple[str, Optional[str]], ...], dict[str, float]]:
        """ZkAdminManager.describeClientQuotas: entity -> its quota values. ``components`` are
        (entity type, match type, match); an entity is a tuple of (type, name or None for the default)."""
        user_c = client_c = ip_c = None
        for entity_type, match_type, match in components:
            component: tuple[bool, Optional[str]]
            if match_type == MATCH_TYPE_EXACT:
                if match is None:
                    raise InvalidRequestException(f"Filter component of entity type {entity_type} matches a null "
                                                  "name exactly")
                component = (True, match)
            elif match_type == MATCH_TYPE_DEFAULT:
                component = (True, None)
            elif match_type == MATCH_TYPE_SPECIFIED:
                component = (False, None)
            else:
                raise InvalidRequestException(f"Unexpected match type: {match_type}")
            if entity_type == USER:
                if user_c is not None:
                    raise InvalidRequestException("Duplicate user filter component entity type")
                user_c = component
            elif entity_type == CLIENT_ID:
                if client_c is not None:
                    raise InvalidRequestException("Duplicate client filter component entity type")
                client_c = component
            elif entity_type == IP:
                if ip_c is not None:
                    raise InvalidRequestException("Duplicate ip filter component entity type")
                ip_c = component
            elif entity_type == "":
                raise InvalidRequestException("Unexpected empty filter component entity type")
            else:
                raise UnsupportedVersionException(f"Custom entity type '{entity_type}' not supported")
        if (user_c is not None or client_c is not None) and ip_c is not None:
            raise InvalidRequestException("Invalid entity filter component combination, IP filter component should "
                                          "not be used with user or clientId filter component.")
        if self.apis.zk_client is None:
            return self._describe_from_metadata(user_c, client_c, ip_c, strict)
        result: dict[tuple[tuple[str, Optional[str]], ...], dict[str, float]] = {}
        if ip_c is None:
            result.update(self._describe_user_client_quotas(user_c, client_c, strict))
        if user_c is None and client_c is None:
            result.update(self._describe_ip_quotas(ip_c, strict))
        return result

    def _describe_from_metadata(self, user_c: Any, client_c: Any, ip_c: Any, strict: bool) -> dict:
        """KRaft mode: the quotas this broker applied from the metadata log's QuotaRecords (its
        ClientQuotaCache), as Kafka 3.0's broker answers from its metadata image."""
        from kafka_py.server.metadata.client_quota_cache import QuotaMatch

        cache = self.apis.client_quota_cache
        if cache is None:
            return {}

        def match(component: Any) -> QuotaMatch:
            exact, name = component
            if not exact:
                return QuotaMatch.of_type()
            return QuotaMatch.default() if name is None else QuotaMatch.exact(name)

        filters = [(t, match(c)) for t, c in ((USER, user_c), (CLIENT_ID, client_c), (IP, ip_c)) if c is not None]
        return {entity: values for entity, values in cache.describe_client_quotas(filters, strict).items() if values}

    def _fetch(self, config_type: str, path: str) -> dict[str, str]:
        return dict(self.apis.admin_zk_client.fetch_entity_config(config_type, path))

    def _fetch_all(self, config_type: str) -> dict[str, dict[str, str]]:
        return self.apis.admin_zk_client.fetch_all_entity_configs(config_type)

    @staticmethod
    def _sanitized(name: Optional[str]) -> str:
        return ConfigEntityName.DEFAULT if name is None else sanitize(name)

    @staticmethod
    def _desanitized(name: str) -> Optional[str]:
        return None if name == ConfigEntityName.DEFAULT else desanitize(name)

    @staticmethod
    def _values(entity: Any, props: Mapping[str, str], keys: Mapping[str, str]) -> dict[str, float]:
        values = {}
        for key, raw in props.items():
            if key not in keys:
                continue
            try:
                values[key] = float(raw)
            except (TypeError, ValueError):
                logger.error("Unexpected client quota configuration value of %s: %s -> %s", entity, key, raw)
        return values

    def _describe_user_client_quotas(self, user_c: Any, client_c: Any, strict: bool) -> dict:
        exact_user = user_c is not None and user_c[0]
        exact_client = client_c is not None and client_c[0]
        user = user_c[1] if exact_user else None
        client = client_c[1] if exact_client else None
        exclude_user = strict and user_c is None
        exclude_client = strict and client_c is None
        entries: dict[tuple[Any, Any], dict[str, str]] = {}
        # (None, x): no such part; ("", None): the default entity; (name,): a named one.
        if exact_user and exclude_client:
            entries[((user,), None)] = self._fetch(ConfigType.USER, self._sanitized(user))
        elif not exclude_user and not exact_client:
            for name, props in self._fetch_all(ConfigType.USER).items():
                entries[((self._desanitized(name),), None)] = props
        if exclude_user and exact_client:
            entries[(None, (client,))] = self._fetch(ConfigType.CLIENT, self._sanitized(client))
        elif not exact_user and not exclude_client:
            for name, props in self._fetch_all(ConfigType.CLIENT).items():
                entries[(None, (self._desanitized(name),))] = props
        if exact_user and exact_client:
            entries[((user,), (client,))] = self._fetch(
                ConfigType.USER, f"{self._sanitized(user)}/{ConfigType.CLIENT}/{self._sanitized(client)}")
        elif not exclude_user and not exclude_client:
            zk = self.apis.zk_client
            for sanitized_user in zk.get_all_entities_with_config(ConfigType.USER):
                for sanitized_client in zk.get_children(f"/config/{ConfigType.USER}/{sanitized_user}/"
                                                        f"{ConfigType.CLIENT}"):
                    props = self._fetch(ConfigType.USER, f"{sanitized_user}/{ConfigType.CLIENT}/{sanitized_client}")
                    entries[((self._desanitized(sanitized_user),), (self._desanitized(sanitized_client),))] = props

        def matches(component: Any, name: Optional[tuple]) -> bool:
            if component is None:
                return name is None or not strict
            exact, match = component
            if exact:
                return name is not None and name[0] == match
            return name is not None

        result = {}
        for (u, c), props in entries.items():
            entity = tuple(e for e in ((USER, u[0]) if u else None, (CLIENT_ID, c[0]) if c else None) if e)
            values = self._values(entity, props, USER_CLIENT_QUOTA_CONFIGS)
            if values and matches(user_c, u) and matches(client_c, c):
                result[entity] = values
        return result

    def _describe_ip_quotas(self, ip_c: Any, strict: bool) -> dict:
        exact_ip = ip_c is not None and ip_c[0]
        all_ips = (ip_c is not None and not ip_c[0]) or (ip_c is None and not strict)
        entries: dict[Optional[str], dict[str, str]] = {}
        if exact_ip:
            entries[ip_c[1]] = self._fetch(ConfigType.IP, self._sanitized(ip_c[1]))
        elif all_ips:
            for name, props in self._fetch_all(ConfigType.IP).items():
                entries[self._desanitized(name)] = props
        result = {}
        for ip, props in entries.items():
            entity = ((IP, ip),)
            values = self._values(entity, props, IP_QUOTA_CONFIGS)
            if values:
                result[entity] = values
        return result

    # ------------------------------------------------------------------ AlterClientQuotas

    @staticmethod
    @error_response_of(ApiKeys.ALTER_CLIENT_QUOTAS)
    def alter_client_quotas_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        # the error on every entry, with the error's own text rather than the exception's
        # (AlterClientQuotasRequest.getErrorResponse)
        return AlterClientQuotasResponse(throttle_time=NO_THROTTLE, entries=tuple([
            _altered_entry(error, error.message, [(e.entity_type, e.entity_name) for e in entry.entity])
            for entry in request.body.entries]))

    def handle_alter_client_quotas_request(self, request: Any) -> None:
        body = request.body
        if not self._authorized(request, "ALTER_CONFIGS"):
            self.apis.send_error_response(request, Errors.CLUSTER_AUTHORIZATION_FAILED)
            return
        results = []
        for entry in body.entries:
            entity = [(e.entity_type, e.entity_name) for e in entry.entity]
            ops = [(op.key, None if op.remove else float(op.value)) for op in entry.ops]
            try:
                self.alter_entity_quotas(entity, ops, bool(body.validate_only))
                error, message = Errors.NONE, None
            except Exception as e:  # noqa: BLE001 - the error of this entry only
                error = Errors.for_exception(e)
                message = str(e) or None
                if error is Errors.UNKNOWN_SERVER_ERROR:
                    logger.exception("Error encountered while updating client quotas of %s", entity)
                else:
                    logger.info("Error encountered while updating client quotas of %s: %s", entity, e)
            results.append(_altered_entry(error, message, entity))
        self.apis.send_response(request, AlterClientQuotasResponse(throttle_time=NO_THROTTLE, entries=tuple(results)))

    def alter_entity_quotas(self, entity: list[tuple[str, Optional[str]]], ops: list[tuple[str, Optional[float]]],
                            validate_only: bool) -> None:
        """ZkAdminManager.alterClientQuotas for one entity: ``ops`` are (key, value or None to remove)."""
        if not entity:
            raise InvalidRequestException("Invalid empty client quota entity")
        user = client = ip = None
        ip_name: Optional[str] = None
        for entity_type, entity_name in entity:
            sanitized = self._sanitized(entity_name)
            if entity_type == USER:
                user = sanitized
            elif entity_type == CLIENT_ID:
                client = sanitized
            elif entity_type == IP:
                ip, ip_name = sanitized, entity_name
            else:
                raise InvalidRequestException(f"Unhandled client quota entity type: {entity_type}")
            if entity_name is not None and entity_name == "":
                raise InvalidRequestException(f"Empty {entity_type} not supported")
        if ip is not None:
            if user is not None or client is not None:
                raise InvalidRequestException("Invalid quota entity combination, IP entity should not be used with "
                                              "user/client ID entity.")
            if ip_name is not None and not _is_valid_ip_entity(ip_name):
                raise InvalidRequestException(f"{ip} is not a valid IP or resolvable host.")
            path, config_type, keys = ip, ConfigType.IP, IP_QUOTA_CONFIGS
        elif user is not None and client is not None:
            path, config_type, keys = f"{user}/{ConfigType.CLIENT}/{client}", ConfigType.USER, USER_CLIENT_QUOTA_CONFIGS
        elif user is not None:
            path, config_type, keys = user, ConfigType.USER, USER_CLIENT_QUOTA_CONFIGS
        elif client is not None:
            path, config_type, keys = client, ConfigType.CLIENT, USER_CLIENT_QUOTA_CONFIGS
        else:
            raise InvalidRequestException("Invalid client quota entity")
        props = self._fetch(config_type, path)
        for key, value in ops:
            if value is None:
                props.pop(key, None)
                continue
            key_type = keys.get(key)
            if key_type is None:
                raise InvalidRequestException(f"Invalid configuration key {key}")
            if value != value or value in (float("inf"), float("-inf")):
                raise InvalidRequestException(f"Configuration {key} must be a number")
            if key_type == "INT" and value < 0:
                raise InvalidRequestException(f"Quota {key} must be at least 0")
            if key_type != "INT" and value <= 0:
                raise InvalidRequestException(f"Quota {key} must be greater than 0")
            if key_type == "DOUBLE":
                props[key] = java_double_to_string(value)
                continue
            limit = INT_MAX if key_type == "INT" else LONG_MAX
            int_value = min(int(value + _EPSILON), limit)
            if abs(int_value - value) > _EPSILON:
                raise InvalidRequestException(f"Configuration {key} must be a {key_type} value")
            props[key] = str(int_value)
        if not validate_only:
            self.apis.admin_zk_client.change_configs(config_type, path, props)


def _is_valid_ip_entity(ip: str) -> bool:
    try:
        ipaddress.ip_address(ip)
        return True
    except ValueError:
        pass
    try:
        socket.gethostbyname(ip)
        return True
    except (OSError, UnicodeError):
        return False
