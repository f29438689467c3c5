"""Port of core/src/main/scala/kafka/server/QuotaFactory.scala (Kafka 2.8.2):
the quota managers a broker keeps, built from its config.

* ``fetch``: ``consumer_byte_rate`` (ClientQuotaManager of QuotaType.FETCH);
* ``produce``: ``producer_byte_rate`` (QuotaType.PRODUCE);
* ``request``: ``request_percentage`` (ClientRequestQuotaManager);
* ``controller_mutation``: ``controller_mutation_rate``, partitions created or deleted per
  second (ControllerMutationQuotaManager, KIP-599);
* ``leader``, ``follower``, ``alter_log_dirs``: the replication throttles
  (``leader.replication.throttled.rate``, ``follower.replication.throttled.rate``,
  ``replica.alter.log.dirs.io.max.bytes.per.second``; ReplicationQuotaManager), sampled over
  ``replication.quota.window.num`` x ``replication.quota.window.size.seconds`` (the
  ``alter.log.dirs.replication.quota.*`` pair for the last).

The first three sample ``quota.window.num`` windows of ``quota.window.size.seconds``; the
controller mutation bucket holds ``controller.quota.window.num`` x
``controller.quota.window.size.seconds`` seconds' worth. The static
per-client-id defaults ``quota.producer.default`` / ``quota.consumer.default`` (deprecated
in Kafka since 0.11) still apply when set.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.client_quota_manager import ClientQuotaManager, ClientQuotaManagerConfig, QuotaType
from kafka_py.server.client_request_quota_manager import ClientRequestQuotaManager
from kafka_py.server.controller_mutation_quota_manager import ControllerMutationQuotaManager
from kafka_py.server.replication_quota_manager import (
    ALTER_LOG_DIRS_REPLICATION,
    FOLLOWER_REPLICATION,
    LEADER_REPLICATION,
    ReplicaQuota,
    ReplicationQuotaManager,
    ReplicationQuotaManagerConfig,
)
from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)


class UnboundedQuota(ReplicaQuota):
    """The replication quota that never throttles: fetchers and reads without a throttle."""

    def record(self, value: int) -> None:
        pass

    def is_throttled(self, topic_partition: TopicPartition) -> bool:
        return False

    def is_quota_exceeded(self) -> bool:
        return False


UNBOUNDED_QUOTA = UnboundedQuota()


@dataclass
class QuotaManagers:
    fetch: ClientQuotaManager
    produce: ClientQuotaManager
    request: ClientRequestQuotaManager
    controller_mutation: ControllerMutationQuotaManager
    leader: ReplicationQuotaManager
    follower: ReplicationQuotaManager
    alter_log_dirs: ReplicationQuotaManager

    def shutdown(self) -> None:
        self.fetch.shutdown()
        self.produce.shutdown()
        self.request.shutdown()
        self.controller_mutation.shutdown()
        self.leader.shutdown()
        self.follower.shutdown()
        self.alter_log_dirs.shutdown()


def client_produce_config(cfg: Any) -> ClientQuotaManagerConfig:
    if cfg.producer_quota_bytes_per_second_default != LONG_MAX:
        logger.warning("quota.producer.default has been deprecated in 0.11.0.0 and will be removed in a future "
                       "release. Use dynamic quota defaults instead.")
    return ClientQuotaManagerConfig(cfg.producer_quota_bytes_per_second_default, cfg.num_quota_samples,
                                    cfg.quota_window_size_seconds)


def client_fetch_config(cfg: Any) -> ClientQuotaManagerConfig:
    if cfg.consumer_quota_bytes_per_second_default != LONG_MAX:
        logger.warning("quota.consumer.default has been deprecated in 0.11.0.0 and will be removed in a future "
                       "release. Use dynamic quota defaults instead.")
    return ClientQuotaManagerConfig(cfg.consumer_quota_bytes_per_second_default, cfg.num_quota_samples,
                                    cfg.quota_window_size_seconds)


def client_request_config(cfg: Any) -> ClientQuotaManagerConfig:
    return ClientQuotaManagerConfig(num_quota_samples=cfg.num_quota_samples,
                                    quota_window_size_seconds=cfg.quota_window_size_seconds)


def client_controller_quota_config(cfg: Any) -> ClientQuotaManagerConfig:
    return ClientQuotaManagerConfig(num_quota_samples=cfg.num_controller_quota_samples,
                                    quota_window_size_seconds=cfg.controller_quota_window_size_seconds)


def replication_config(cfg: Any) -> ReplicationQuotaManagerConfig:
    return ReplicationQuotaManagerConfig(num_quota_samples=cfg.num_replication_quota_samples,
                                         quota_window_size_seconds=cfg.replication_quota_window_size_seconds)


def alter_log_dirs_replication_config(cfg: Any) -> ReplicationQuotaManagerConfig:
    return ReplicationQuotaManagerConfig(
        num_quota_samples=cfg.num_alter_log_dirs_replication_quota_samples,
        quota_window_size_seconds=cfg.alter_log_dirs_replication_quota_window_size_seconds)


def instantiate(cfg: Any, time: Time = Time.SYSTEM, thread_name_prefix: str = "") -> QuotaManagers:
    return QuotaManagers(
        fetch=ClientQuotaManager(client_fetch_config(cfg), QuotaType.FETCH, time, thread_name_prefix),
        produce=ClientQuotaManager(client_produce_config(cfg), QuotaType.PRODUCE, time, thread_name_prefix),
        request=ClientRequestQuotaManager(client_request_config(cfg), time, thread_name_prefix),
        controller_mutation=ControllerMutationQuotaManager(client_controller_quota_config(cfg), time,
                                                           thread_name_prefix),
        leader=ReplicationQuotaManager(replication_config(cfg), LEADER_REPLICATION, time),
        follower=ReplicationQuotaManager(replication_config(cfg), FOLLOWER_REPLICATION, time),
        alter_log_dirs=ReplicationQuotaManager(alter_log_dirs_replication_config(cfg), ALTER_LOG_DIRS_REPLICATION,
                                               time),
    )
