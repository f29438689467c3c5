"""Port of metadata/src/main/java/org/apache/kafka/controller/ClientQuotaControlManager.java
(Kafka 3.0.0; 2.8.2's is the same but for quota keys checked by type), with a
describe that the 2.8.2 controller left to the brokers.

The client quotas by entity: a user, a client id, a user and client id, or an IP (a None
name is that type's default entity). alterClientQuotas checks each entity and its keys
(the keys of Kafka's QuotaConfigs for that entity kind, integral values for the LONG
ones) and writes one QuotaRecord per changed key; removing a key is a record with
``remove`` set. ``ClientQuotaEntity`` and ``ClientQuotaAlteration`` are the clients'
org.apache.kafka.common.quota classes.

``iterator(epoch)`` is Kafka 3.0.0's: the records a snapshot holds for this state.
"""
from __future__ import annotations

import ipaddress
import math
import socket
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Sequence

from kafka_py.clients.common.api_error import ApiError
from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.controller.controller_result import ControllerResult
from kafka_py.metadata.records.quota_record.v0 import EntityData, QuotaRecord
from kafka_py.metadata.timeline.snapshot_registry import SnapshotRegistry
from kafka_py.metadata.timeline.timeline_hash_map import TimelineHashMap
from kafka_py.clients.common.protocol.errors import Errors

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"

# clients/.../common/config/internals/QuotaConfigs.java: the keys and their types
_LONG, _DOUBLE, _INT = "LONG", "DOUBLE", "INT"
USER_CLIENT_QUOTA_CONFIGS: Mapping[str, str] = {
    "producer_byte_rate": _LONG,
    "consumer_byte_rate": _LONG,
    "request_percentage": _DOUBLE,
    "controller_mutation_rate": _DOUBLE,
}
IP_QUOTA_CONFIGS: Mapping[str, str] = {"connection_creation_rate": _INT}

# DescribeClientQuotas' match types
MATCH_TYPE_EXACT = 0
MATCH_TYPE_DEFAULT = 1
MATCH_TYPE_SPECIFIED = 2


@dataclass(frozen=True, slots=True)
class ClientQuotaEntity:
    """Entity type -> name (None for the default), kept as sorted pairs so it hashes."""

    entries: tuple[tuple[str, str | None], ...]

    @classmethod
    def of(cls, entries: Mapping[str, str | None]) -> ClientQuotaEntity:
        return cls(tuple(sorted(entries.items())))

    def as_dict(self) -> dict[str, str | None]:
        return dict(self.entries)

    def __str__(self) -> str:
        return "ClientQuotaEntity(entries={" + ", ".join(f"{k}={v}" for k, v in self.entries) + "})"


@dataclass(frozen=True, slots=True)
class ClientQuotaAlteration:
    entity: ClientQuotaEntity
    # (key, value); a None value removes the key
    ops: tuple[tuple[str, float | None], ...]


def _is_valid_ip_entity(ip: str | None) -> bool:
    if ip is None:
        return True
    try:
        ipaddress.ip_address(ip)
        return True
    except ValueError:
        pass
    try:
        socket.getaddrinfo(ip, None)
        return True
    except OSError:
        return False


class ClientQuotaControlManager:
    def __init__(self, snapshot_registry: SnapshotRegistry) -> None:
        self.snapshot_registry = snapshot_registry
        self.client_quota_data: TimelineHashMap[ClientQuotaEntity, TimelineHashMap[str, float]] = \
            TimelineHashMap(snapshot_registry)

    def alter_client_quotas(self, alterations: Iterable[ClientQuotaAlteration]
                            ) -> ControllerResult[dict[ClientQuotaEntity, ApiError]]:
        records: list[ApiMessageAndVersion] = []
        results: dict[ClientQuotaEntity, ApiError] = {}
        for alteration in alterations:
            changes: dict[str, float | None] = {}
            duplicate = None
            for key, value in alteration.ops:
                if key in changes:
                    duplicate = key
                else:
                    changes[key] = value
            if duplicate is not None:
                results[alteration.entity] = ApiError(
                    Errors.INVALID_REQUEST, f"Duplicate quota key {duplicate} not updating "
                                            f"quota for this entity {alteration.entity}")
            elif alteration.entity in results:
                results[alteration.entity] = ApiError(
                    Errors.INVALID_REQUEST, f"Ignoring duplicate entity {alteration.entity}")
            else:
                results[alteration.entity] = self._alter_client_quota_entity(
                    alteration.entity, changes, records)
        return ControllerResult.atomic_of(records, results)

    def _alter_client_quota_entity(self, entity: ClientQuotaEntity,
                                   changes: Mapping[str, float | None],
                                   records: list[ApiMessageAndVersion]) -> ApiError:
        validated: dict[str, str | None] = {}
        error = self._validate_entity(entity, validated)
        if not error.is_success():
            return error
        config_keys: dict[str, str] = {}
        error = self._config_keys_for_entity_type(validated, config_keys)
        if not error.is_success():
            return error

        def entity_data() -> tuple[EntityData, ...]:
            return tuple(EntityData(entity_type=t, entity_name=n) for t, n in sorted(validated.items()))

        current = self.client_quota_data.get(entity)
        current_quotas = {} if current is None else current.to_dict()
        new_records = []
        for key, value in changes.items():
            if value is None:
                if key in current_quotas:
                    new_records.append(ApiMessageAndVersion.of(QuotaRecord(
                        entity=entity_data(), key=key, value=0.0, remove=True)))
                continue
            error = self._validate_quota_key_value(config_keys, key, value)
            if not error.is_success():
                return error
            if current_quotas.get(key) != value:
                new_records.append(ApiMessageAndVersion.of(QuotaRecord(
                    entity=entity_data(), key=key, value=float(value), remove=False)))
        records.extend(new_records)
        return ApiError.NONE  # type: ignore[attr-defined]

    @staticmethod
    def _validate_entity(entity: ClientQuotaEntity, validated: dict[str, str | None]) -> ApiError:
        if not entity.entries:
            return ApiError(Errors.INVALID_REQUEST, "Invalid empty client quota entity")
        for entity_type, entity_name in entity.entries:
            if entity_type in validated:
                return ApiError(Errors.INVALID_REQUEST,
                                f"Invalid client quota entity, duplicate entity entry {entity_type}")
            if entity_type not in (USER, CLIENT_ID, IP):
                return ApiError(Errors.INVALID_REQUEST,
                                f"Unhandled client quota entity type: {entity_type}")
            validated[entity_type] = entity_name
            if entity_name is not None and entity_name == "":
                return ApiError(Errors.INVALID_REQUEST, f"Empty {entity_type} not supported")
        return ApiError.NONE  # type: ignore[attr-defined]

    @staticmethod
    def _config_keys_for_entity_type(entity: Mapping[str, str | None],
                                     output: dict[str, str]) -> ApiError:
        has_user, has_client, has_ip = USER in entity, CLIENT_ID in entity, IP in entity
        if has_ip:
            if has_user or has_client:
                return ApiError(Errors.INVALID_REQUEST, "Invalid quota entity combination, IP "
                                                        "entity should not be combined with User or ClientId")
            if not _is_valid_ip_entity(entity[IP]):
                return ApiError(Errors.INVALID_REQUEST,
                                f"{entity[IP]} is not a valid IP or resolvable host.")
            output.update(IP_QUOTA_CONFIGS)
        elif has_user or has_client:
            output.update(USER_CLIENT_QUOTA_CONFIGS)
        else:
            return ApiError(Errors.INVALID_REQUEST, "Invalid empty client quota entity")
        return ApiError.NONE  # type: ignore[attr-defined]

    @staticmethod
    def _validate_quota_key_value(valid_keys: Mapping[str, str], key: str,
                                  value: float) -> ApiError:
        config_type = valid_keys.get(key)
        if config_type is None:
            return ApiError(Errors.INVALID_REQUEST, f"Invalid configuration key {key}")
        if not math.isfinite(value):
            return ApiError(Errors.INVALID_REQUEST, f"Configuration {key} must be finite")
        # A quota of 0 or less would hold its clients to nothing (or less) once the brokers
        # apply it: refused, as Kafka 3.5's controller does (KAFKA-14943) and this broker's
        # ZooKeeper mode.
        if value <= 0.0:
            return ApiError(Errors.INVALID_REQUEST, f"Quota {key} must be greater than 0")
        if config_type in (_LONG, _INT):
            epsilon = 1e-6
            if abs(float(int(value + epsilon)) - value) > epsilon:
                return ApiError(Errors.INVALID_REQUEST, f"Configuration {key} must be a Long value")
        return ApiError.NONE  # type: ignore[attr-defined]

    def iterator(self, epoch: int) -> Iterator[list[ApiMessageAndVersion]]:
        """The records that rebuild the quotas as of ``epoch`` (Kafka 3.0's
        ClientQuotaControlIterator): one batch of QuotaRecords per entity."""
        for entity, quotas in sorted(self.client_quota_data.items(epoch), key=lambda e: str(e[0].entries)):
            entity_data = tuple(EntityData(entity_type=t, entity_name=n) for t, n in entity.entries)
            yield [ApiMessageAndVersion.of(QuotaRecord(entity=entity_data, key=key, value=float(value), remove=False))
                   for key, value in sorted(quotas.items(epoch))]

    def replay(self, record: QuotaRecord) -> None:
        entity = ClientQuotaEntity.of({e.entity_type: e.entity_name for e in record.entity})
        quotas = self.client_quota_data.get(entity)
        if quotas is None:
            quotas = TimelineHashMap(self.snapshot_registry)
            self.client_quota_data.put(entity, quotas)
        if record.remove:
            quotas.remove(record.key)
            if quotas.is_empty():
                self.client_quota_data.remove(entity)
        else:
            quotas.put(record.key, float(record.value))

    # -- reads ---------------------------------------------------------------------------

    def describe(self, entity: ClientQuotaEntity, epoch: int | None = None) -> dict[str, float]:
        kwargs = {} if epoch is None else {"epoch": epoch}
        quotas = self.client_quota_data.get(entity, **kwargs)
        if quotas is None:
            return {}
        return quotas.to_dict(**({} if epoch is None else {"epoch": epoch}))

    def describe_client_quotas(self, components: Sequence[tuple[str, int, str | None]],
                               strict: bool, epoch: int | None = None
                               ) -> dict[ClientQuotaEntity, dict[str, float]]:
        """The quotas of the entities matching the DescribeClientQuotas filter: each
        component is (entity type, match type, match); ``strict`` excludes entities with
        types the filter does not name."""
        kwargs = {} if epoch is None else {"epoch": epoch}
        results = {}
        for entity in self.client_quota_data.keys(**kwargs):
            entries = entity.as_dict()
            if strict and set(entries) != {c[0] for c in components}:
                continue
            if all(self._matches(entries, component) for component in components):
                quotas = self.describe(entity, epoch)
                if quotas:
                    results[entity] = quotas
        return results

    @staticmethod
    def _matches(entries: Mapping[str, str | None], component: tuple[str, int, str | None]) -> bool:
        entity_type, match_type, match = component
        if entity_type not in entries:
            return False
        name = entries[entity_type]
        if match_type == MATCH_TYPE_EXACT:
            return name == match
        if match_type == MATCH_TYPE_DEFAULT:
            return name is None
        return name is not None
