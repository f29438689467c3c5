"""Port of core/src/main/scala/kafka/server/metadata/ClientQuotaMetadataManager.scala
(Kafka 2.8.2).

Applies the QuotaRecords of the metadata log to the broker's quota managers: a
``connection_creation_rate`` of an IP (or the IP default) to the ConnectionQuotas, and a
byte-rate, request-percentage or mutation-rate quota of a user, a client id, or a user and
client id (each possibly the default) to the produce, fetch, request or controller mutation
quota manager, with names sanitized as the ZooKeeper path names them. ZooKeeper mode
reaches the same managers through server/config_handler.py.

Every quota applied also goes to the ClientQuotaCache (client_quota_cache.py), from which the
broker answers DescribeClientQuotas.
"""
from __future__ import annotations

import ipaddress
import logging
import socket
from typing import Any, Optional

from kafka_py.clients.common.sensor import Quota
from kafka_py.clients.common.security.sanitizer import desanitize, sanitize
from kafka_py.server.metadata.client_quota_cache import ClientQuotaCache, quota_entity
from kafka_py.server.config_handler import (
    CONSUMER_BYTE_RATE_OVERRIDE_CONFIG,
    CONTROLLER_MUTATION_RATE_OVERRIDE_CONFIG,
    IP_CONNECTION_RATE_OVERRIDE_CONFIG,
    PRODUCER_BYTE_RATE_OVERRIDE_CONFIG,
    REQUEST_PERCENTAGE_OVERRIDE_CONFIG,
)
from kafka_py.core.zk.zk_data import ConfigEntityName

logger = logging.getLogger(__name__)

# ClientQuotaEntity's entity types
USER = "user"
CLIENT_ID = "client-id"
IP = "ip"


class ClientQuotaMetadataManager:
    def __init__(self, quota_managers: Any, connection_quotas: Any,
                 quota_cache: Optional[ClientQuotaCache] = None) -> None:
        self.quota_managers = quota_managers
        self.connection_quotas = connection_quotas
        self.quota_cache = quota_cache if quota_cache is not None else ClientQuotaCache()

    def handle_quota_record(self, quota_record: Any) -> None:
        entity = {str(e.entity_type): e.entity_name for e in quota_record.entity}
        if IP in entity:
            self.handle_ip_quota(entity[IP], quota_record)
        elif USER in entity or CLIENT_ID in entity:
            # None names the default entity of its type; an absent type is no part of the entity
            default = ConfigEntityName.DEFAULT
            sanitized_user = None
            sanitized_client_id = None
            if USER in entity:
                sanitized_user = default if entity[USER] is None else sanitize(entity[USER])
            if CLIENT_ID in entity:
                sanitized_client_id = default if entity[CLIENT_ID] is None else sanitize(entity[CLIENT_ID])
            self.handle_user_client_quota(sanitized_user, sanitized_client_id, quota_record)
        else:
            logger.warning("Ignoring unsupported quota entity %s", quota_record.entity)

    def handle_ip_quota(self, ip: Optional[str], quota_record: Any) -> None:
        address = None
        if ip is not None:
            try:
                address = str(ipaddress.ip_address(ip))
            except ValueError:
                try:
                    address = socket.gethostbyname(ip)
                except OSError as e:
                    raise ValueError(f"Unable to resolve address {ip}") from e
        # the connection quotas only know the connection creation rate
        if quota_record.key != IP_CONNECTION_RATE_OVERRIDE_CONFIG:
            logger.warning("Ignoring unexpected quota key %s for entity ip %s", quota_record.key, ip)
            return
        self.quota_cache.update_quota_cache(quota_entity({IP: ip}), quota_record.key, float(quota_record.value),
                                            bool(quota_record.remove))
        value = None if quota_record.remove else int(quota_record.value)
        if self.connection_quotas is not None:
            self.connection_quotas.update_ip_connection_rate_quota(address, value)

    def handle_user_client_quota(self, sanitized_user: Optional[str], sanitized_client_id: Optional[str],
                                 quota_record: Any) -> None:
        managers = self.quota_managers
        by_key = {
            CONSUMER_BYTE_RATE_OVERRIDE_CONFIG: managers.fetch,
            PRODUCER_BYTE_RATE_OVERRIDE_CONFIG: managers.produce,
            REQUEST_PERCENTAGE_OVERRIDE_CONFIG: managers.request,
            CONTROLLER_MUTATION_RATE_OVERRIDE_CONFIG: managers.controller_mutation,
        }
        manager = by_key.get(quota_record.key)
        if manager is None:
            logger.warning("Ignoring unexpected quota key %s for entity user=%s client-id=%s", quota_record.key,
                           sanitized_user, sanitized_client_id)
            return
        quota = None if quota_record.remove else Quota.upper_bound(float(quota_record.value))
        client_id = None if sanitized_client_id is None else desanitize(sanitized_client_id)
        manager.update_quota(sanitized_user, client_id, sanitized_client_id, quota)
        parts: dict[str, Optional[str]] = {}
        if sanitized_user is not None:
            parts[USER] = None if sanitized_user == ConfigEntityName.DEFAULT else desanitize(sanitized_user)
        if sanitized_client_id is not None:
            parts[CLIENT_ID] = client_id if sanitized_client_id != ConfigEntityName.DEFAULT else None
        self.quota_cache.update_quota_cache(quota_entity(parts), quota_record.key, float(quota_record.value),
                                            bool(quota_record.remove))


__all__ = ["ClientQuotaMetadataManager"]
