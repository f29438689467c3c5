"""Port of core/src/main/scala/kafka/server/metadata/ClientQuotaCache.scala (Kafka 2.8.2).

The client quotas a KRaft broker has applied from the metadata log's QuotaRecords, kept by
entity so that the broker answers DescribeClientQuotas itself, as Kafka 3.0's KafkaApis does
from its metadata image (ZooKeeper mode reads the quota znodes instead).

An entity is a tuple of (entity type, name) pairs, the user before the client id, a name of
None being the default entity of its type: ``(("user", "alice"), ("client-id", None))``. Next
to the entities and their values, three indexes map each part (a user, a client id or an ip,
named or default) to the entities holding it, which is what the lookups by filter use.
"""
from __future__ import annotations

import threading
from typing import Iterable, Optional

from kafka_py.clients.common.errors import InvalidRequestException, UnsupportedVersionException

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
ENTITY_TYPES = (USER, CLIENT_ID, IP)

Entity = tuple[tuple[str, Optional[str]], ...]


class QuotaMatch:
    """How a filter component matches its part: a name exactly, the default entity, or any
    named or default entity of the type."""

    EXACT = "exact"
    DEFAULT = "default"
    TYPE = "type"

    def __init__(self, kind: str, name: Optional[str] = None) -> None:
        self.kind = kind
        self.name = name

    @classmethod
    def exact(cls, name: str) -> "QuotaMatch":
        return cls(cls.EXACT, name)

    @classmethod
    def default(cls) -> "QuotaMatch":
        return cls(cls.DEFAULT)

    @classmethod
    def of_type(cls) -> "QuotaMatch":
        return cls(cls.TYPE)


def quota_entity(parts: dict[str, Optional[str]]) -> Entity:
    """The cache's entity for a record's {entity type: name or None}."""
    return tuple((t, parts[t]) for t in ENTITY_TYPES if t in parts)


class ClientQuotaCache:
    def __init__(self) -> None:
        self._quota_cache: dict[Entity, dict[str, float]] = {}
        # (entity type) -> (name or None for the default) -> the entities holding that part
        self._indexes: dict[str, dict[Optional[str], set[Entity]]] = {t: {} for t in ENTITY_TYPES}
        # written by the metadata listener's thread, read by the request handlers
        self._lock = threading.Lock()

    def describe_client_quotas(self, filters: Iterable[tuple[str, QuotaMatch]], strict: bool
                               ) -> dict[Entity, dict[str, float]]:
        """The entities ``filters`` (entity type, match) select, with their quota values. With
        ``strict``, only entities with no part beyond the filtered types."""
        entity_filters: dict[str, QuotaMatch] = {}
        for entity_type, match in filters:
            if entity_type in entity_filters:
                raise InvalidRequestException(f"Duplicate {entity_type} filter component entity type")
            if entity_type == "":
                raise InvalidRequestException("Unexpected empty filter component entity type")
            if entity_type not in ENTITY_TYPES:
                raise UnsupportedVersionException(f"Custom entity type {entity_type} not supported")
            entity_filters[entity_type] = match
        with self._lock:
            if not entity_filters:
                # Kafka 2.8's cache answered no filter with nothing; Kafka 3.0's image answers it
                # (as ZooKeeper mode does) with every entity unless strict, which leaves none.
                matching = set() if strict else set(self._quota_cache)
            elif IP in entity_filters:
                if len(entity_filters) > 1:
                    raise InvalidRequestException("Invalid entity filter component combination, IP filter component "
                                                  "should not be used with user or clientId filter component.")
                matching = self._index_matches(IP, entity_filters[IP])
            else:
                user_match, client_match = entity_filters.get(USER), entity_filters.get(CLIENT_ID)
                if user_match is not None and client_match is not None:
                    matching = self._index_matches(USER, user_match) & self._index_matches(CLIENT_ID, client_match)
                elif user_match is not None:
                    matching = self._index_matches(USER, user_match)
                else:
                    # (the filters name a user, a client id or an IP: here the client id)
                    matching = self._index_matches(CLIENT_ID, client_match)  # type: ignore[arg-type]
                if strict:
                    # an entity of a user and a client id only when both were filtered
                    matching = {e for e in matching
                                if len(e) == 1 or (user_match is not None and client_match is not None)}
            return {entity: dict(self._quota_cache.get(entity, {})) for entity in matching}

    def _index_matches(self, entity_type: str, match: QuotaMatch) -> set[Entity]:
        index = self._indexes[entity_type]
        if match.kind == QuotaMatch.EXACT:
            return set(index.get(match.name, ()))
        if match.kind == QuotaMatch.DEFAULT:
            return set(index.get(None, ()))
        return set().union(*index.values())

    def update_quota_cache(self, entity: Entity, key: str, value: float, remove: bool) -> None:
        """Set (or with ``remove`` drop) one quota of ``entity``; an entity left with no quota
        leaves the indexes. Keys are not validated: the controller did that."""
        with self._lock:
            values = self._quota_cache.setdefault(entity, {})
            remove_from_index = False
            if remove:
                values.pop(key, None)
                if not values:
                    del self._quota_cache[entity]
                    remove_from_index = True
            else:
                values[key] = value
            for entity_type, name in entity:
                index = self._indexes[entity_type]
                if remove_from_index:
                    holders = index.get(name)
                    if holders is not None:
                        holders.discard(entity)
                        if not holders:
                            del index[name]
                else:
                    index.setdefault(name, set()).add(entity)


__all__ = ["ClientQuotaCache", "QuotaMatch", "quota_entity"]
