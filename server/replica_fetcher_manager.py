"""Port of core/src/main/scala/kafka/server/ReplicaFetcherManager.scala (Kafka 2.8.2).

The ReplicaManager's fetcher manager: ``num.replica.fetchers`` ReplicaFetcherThreads per
leader broker, named ``ReplicaFetcherThread-<fetcher id>-<leader id>`` as in Kafka.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Optional

from kafka_py.core.cluster.broker import BrokerEndPoint
from kafka_py.server.abstract_fetcher_manager import AbstractFetcherManager
from kafka_py.server.quota_factory import UNBOUNDED_QUOTA
from kafka_py.server.replica_fetcher_thread import ReplicaFetcherThread
from kafka_py.server.replication_quota_manager import ReplicaQuota
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:
    # the replica manager imports this module
    from kafka_py.server.replica_manager import ReplicaManager

logger = logging.getLogger(__name__)


class ReplicaFetcherManager(AbstractFetcherManager[ReplicaFetcherThread]):
    def __init__(self, broker_config: Any, replica_manager: ReplicaManager, time: Time = Time.SYSTEM,
                 thread_name_prefix: Optional[str] = None, quota_manager: ReplicaQuota = UNBOUNDED_QUOTA) -> None:
        super().__init__(f"ReplicaFetcherManager on broker {broker_config.broker_id}", "Replica",
                         broker_config.num_replica_fetchers)
        self.broker_config = broker_config
        self.replica_manager = replica_manager
        self.time = time
        self.thread_name_prefix = thread_name_prefix
        self.quota_manager = quota_manager

    def create_fetcher_thread(self, fetcher_id: int, source_broker: BrokerEndPoint) -> ReplicaFetcherThread:
        prefix = f"{self.thread_name_prefix}:" if self.thread_name_prefix else ""
        thread_name = f"{prefix}ReplicaFetcherThread-{fetcher_id}-{source_broker.id}"
        return ReplicaFetcherThread(thread_name, fetcher_id, source_broker, self.broker_config,
                                    self.failed_partitions, self.replica_manager, self.time, self.quota_manager)

    def shutdown(self) -> None:
        self.logger.info("shutting down")
        self.close_all_fetchers()
        self.remove_metrics()
        self.logger.info("shutdown completed")


__all__ = ["ReplicaFetcherManager"]
