"""Port of core/src/main/scala/kafka/server/ReplicaAlterLogDirsManager.scala (Kafka 2.8.2).

The ReplicaManager's second fetcher manager: ``num.replica.alter.log.dirs.threads``
ReplicaAlterLogDirsThreads (default: one per log dir), named
``ReplicaAlterLogDirsThread-<fetcher id>`` as in Kafka, each copying the partitions whose
fetcher id names it from their current log into their future log. Every partition's
"source broker" is this broker itself (at ``localhost:-1``, never connected to). Its gauges
are Kafka's ``kafka.server:type=ReplicaAlterLogDirsManager,name=MaxLag|MinFetchRate|
FailedPartitionsCount|DeadThreadCount,clientId=ReplicaAlterLogDirs``.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Mapping

from kafka_py.core.cluster.broker import BrokerEndPoint
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.abstract_fetcher_manager import AbstractFetcherManager, InitialFetchState
from kafka_py.server.quota_factory import UNBOUNDED_QUOTA
from kafka_py.server.replica_alter_log_dirs_thread import ReplicaAlterLogDirsThread
from kafka_py.server.replication_quota_manager import ReplicaQuota
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:
    # the replica manager imports this module
    from kafka_py.server.replica_manager import ReplicaManager

logger = logging.getLogger(__name__)


class ReplicaAlterLogDirsManager(AbstractFetcherManager[ReplicaAlterLogDirsThread]):
    def __init__(self, broker_config: Any, replica_manager: ReplicaManager,
                 quota_manager: ReplicaQuota = UNBOUNDED_QUOTA,
                 time: Time = Time.SYSTEM) -> None:
        super().__init__(f"ReplicaAlterLogDirsManager on broker {broker_config.broker_id}", "ReplicaAlterLogDirs",
                         broker_config.num_replica_alter_log_dirs_threads)
        self.broker_config = broker_config
        self.replica_manager = replica_manager
        self.quota_manager = quota_manager
        self.time = time

    def create_fetcher_thread(self, fetcher_id: int, source_broker: BrokerEndPoint) -> ReplicaAlterLogDirsThread:
        return ReplicaAlterLogDirsThread(f"ReplicaAlterLogDirsThread-{fetcher_id}", source_broker,
                                         self.broker_config, self.failed_partitions, self.replica_manager,
                                         self.quota_manager, self.time)

    def _add_partitions_to_fetcher_thread(self, fetcher_thread: ReplicaAlterLogDirsThread,
                                          initial_offset_and_epochs: Mapping[TopicPartition, InitialFetchState]
                                          ) -> None:
        added = fetcher_thread.add_partitions(initial_offset_and_epochs)
        added_offsets = {str(tp): s.init_offset for tp, s in initial_offset_and_epochs.items() if tp in added}
        not_added = sorted(str(tp) for tp in initial_offset_and_epochs if tp not in added)
        if added_offsets:
            self.logger.info("Added log dir fetcher for partitions with initial offsets %s",
                             added_offsets)
        if not_added:
            self.logger.info("Failed to add log dir fetch for partitions %s since the log dir reassignment has "
                             "already completed", ",".join(not_added))

    def shutdown(self) -> None:
        self.logger.info("shutting down")
        self.close_all_fetchers()
        self.remove_metrics()
        self.logger.info("shutdown completed")


def local_broker_end_point(broker_id: int) -> BrokerEndPoint:
    """The "source broker" of every move: this broker, as Kafka names it (never connected to)."""
    return BrokerEndPoint(broker_id, "localhost", -1)


__all__ = ["ReplicaAlterLogDirsManager", "local_broker_end_point"]
