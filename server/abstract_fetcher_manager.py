"""Port of core/src/main/scala/kafka/server/AbstractFetcherManager.scala (Kafka 2.8.2).

The manager owns the fetcher threads, one per (source broker, fetcher id). A partition's
fetcher id is ``abs(31 * hash(topic) + partition) % num_fetchers`` with Java's
String.hashCode, exactly as Kafka computes it, so partitions spread over the
``num.replica.fetchers`` threads per leader the same way on every broker.

* ``add_fetcher_for_partitions`` groups the partitions by (leader, fetcher id), reuses the
  thread for that key when it still talks to the same end point (a broker that moved to
  another address gets a new thread), starts one otherwise, and adds the partitions to it;
* ``remove_fetcher_for_partitions`` takes partitions off every thread and returns the states
  they had;
* ``shutdown_idle_fetcher_threads`` stops the threads left without partitions (after each
  LeaderAndIsr and StopReplica);
* ``resize_thread_pool`` moves every partition to the thread its new fetcher id names;
* ``close_all_fetchers`` stops them all, asking every one to stop before waiting for any.

Its gauges, ``kafka.server:type=<the manager's class>,name=...,clientId=<client id>``:
MaxLag (the largest FetcherLagMetrics lag of all its threads' partitions), MinFetchRate
(the lowest one-minute fetch request rate of its threads), FailedPartitionsCount and
DeadThreadCount; ``remove_metrics`` takes them away when the manager shuts down.

One lock (``_lock``, Kafka's ``lock synchronized``) serialises these; each thread guards
its own partitions with its partition_map_lock.
"""
from __future__ import annotations

import abc
import logging
import threading
from dataclasses import dataclass
from typing import Generic, Iterable, Mapping, Optional, TypeVar

from kafka_py.core.cluster.broker import BrokerEndPoint
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.group.group_metadata_manager import java_string_hash_code
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.server.abstract_fetcher_thread import AbstractFetcherThread, FailedPartitions, PartitionFetchState
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.utils import to_int32, utils_abs


T = TypeVar("T", bound=AbstractFetcherThread)


@dataclass(frozen=True, slots=True)
class InitialFetchState:
    """Where a fetcher starts on a partition: the leader, its epoch and the first offset (no
    leader: its broker has no endpoint on the inter-broker listener, and no fetcher is made)."""

    leader: Optional[BrokerEndPoint]
    current_leader_epoch: int
    init_offset: int


@dataclass(frozen=True, slots=True)
class BrokerAndFetcherId:
    broker: BrokerEndPoint
    fetcher_id: int


@dataclass(frozen=True, slots=True)
class BrokerIdAndFetcherId:
    broker_id: int
    fetcher_id: int


def fetcher_id_for(topic_partition: TopicPartition, num_fetchers: int) -> int:
    """Kafka's ``getFetcherId``: ``Utils.abs(31 * topic.hashCode() + partition) % numFetchers``,
    in Java's 32-bit arithmetic."""
    return utils_abs(to_int32(31 * java_string_hash_code(topic_partition.topic) + topic_partition.partition)) \
        % num_fetchers


class AbstractFetcherManager(KafkaMetricsGroup, Generic[T], abc.ABC):
    def __init__(self, name: str, client_id: str, num_fetchers: int) -> None:
        self.name = name
        self.client_id = client_id
        # (source broker id, fetcher id) -> thread
        self.fetcher_thread_map: dict[BrokerIdAndFetcherId, T] = {}
        self._lock = threading.RLock()
        self._num_fetchers_per_broker = num_fetchers
        self.failed_partitions = FailedPartitions()
        # named after the concrete manager's module, as Kafka's Logging names its logger after
        # the concrete class (ReplicaFetcherManager's lines, the shared ones included)
        self.logger = IdentLogger(logging.getLogger(type(self).__module__), f"[{name}] ")
        self._metric_tags = {"clientId": client_id}
        self.new_gauge("MaxLag", self._max_lag, self._metric_tags)
        self.new_gauge("MinFetchRate", self._min_fetch_rate, self._metric_tags)
        self.new_gauge("FailedPartitionsCount", lambda: self.failed_partitions.size(), self._metric_tags)
        self.new_gauge("DeadThreadCount", lambda: self.dead_thread_count, self._metric_tags)

    _GAUGES = ("MaxLag", "MinFetchRate", "FailedPartitionsCount", "DeadThreadCount")

    def _threads(self) -> list:
        with self._lock:
            return list(self.fetcher_thread_map.values())

    def _max_lag(self) -> int:
        lag = 0
        for thread in self._threads():
            for metrics in list(thread.fetcher_lag_stats.stats.values()):
                if metrics.lag > lag:
                    lag = metrics.lag
        return lag

    def _min_fetch_rate(self) -> float:
        rates = [thread.fetcher_stats.request_rate.one_minute_rate() for thread in self._threads()]
        return min(rates) if rates else 0.0

    def remove_metrics(self) -> None:
        for name in self._GAUGES:
            self.remove_metric(name, self._metric_tags)

    @abc.abstractmethod
    def create_fetcher_thread(self, fetcher_id: int, source_broker: BrokerEndPoint) -> T: ...

    # ------------------------------------------------------------------ views

    @property
    def dead_thread_count(self) -> int:
        with self._lock:
            return sum(1 for t in self.fetcher_thread_map.values() if t.is_thread_failed)

    def get_fetcher(self, topic_partition: TopicPartition) -> Optional[T]:
        with self._lock:
            for thread in self.fetcher_thread_map.values():
                if thread.fetch_state(topic_partition) is not None:
                    return thread
            return None

    def get_fetcher_id(self, topic_partition: TopicPartition) -> int:
        with self._lock:
            return fetcher_id_for(topic_partition, self._num_fetchers_per_broker)

    # ------------------------------------------------------------------ changes

    def resize_thread_pool(self, new_size: int) -> None:
        with self._lock:
            current_size = self._num_fetchers_per_broker
            self.logger.info("Resizing fetcher thread pool size from %d to %d", current_size, new_size)
            self._num_fetchers_per_broker = new_size
            if new_size != current_size:
                # every partition is placed again by its hash, as new ones will be
                for key, thread in list(self.fetcher_thread_map.items()):
                    partition_states = self.remove_fetcher_for_partitions(thread.partitions)
                    if key.fetcher_id >= new_size:
                        thread.shutdown()
                    self.add_fetcher_for_partitions({
                        tp: InitialFetchState(thread.source_broker, state.current_leader_epoch, state.fetch_offset)
                        for tp, state in partition_states.items()})
            self.shutdown_idle_fetcher_threads()

    def add_fetcher_for_partitions(self, partition_and_offsets: Mapping[TopicPartition, InitialFetchState]) -> None:
        with self._lock:
            partitions_per_fetcher: dict[BrokerAndFetcherId, dict[TopicPartition, InitialFetchState]] = {}
            for tp, initial in partition_and_offsets.items():
                if initial.leader is None:
                    self.logger.warning("No end point for the leader of %s; it will not be fetched", tp)
                    continue
                key = BrokerAndFetcherId(initial.leader, self.get_fetcher_id(tp))
                partitions_per_fetcher.setdefault(key, {})[tp] = initial

            for broker_and_fetcher_id, initial_fetch_offsets in partitions_per_fetcher.items():
                broker = broker_and_fetcher_id.broker
                thread_key = BrokerIdAndFetcherId(broker.id, broker_and_fetcher_id.fetcher_id)
                fetcher_thread = self.fetcher_thread_map.get(thread_key)
                if fetcher_thread is not None and (fetcher_thread.source_broker != broker
                                                   or fetcher_thread.is_shutdown_initiated):
                    # same broker id at a new address (its thread cannot follow it there), or a
                    # thread that stopped on a fatal error: replace it
                    fetcher_thread.shutdown()
                    fetcher_thread = None
                if fetcher_thread is None:
                    fetcher_thread = self._add_and_start_fetcher_thread(broker_and_fetcher_id, thread_key)
                self._add_partitions_to_fetcher_thread(fetcher_thread, initial_fetch_offsets)

    def _add_and_start_fetcher_thread(self, broker_and_fetcher_id: BrokerAndFetcherId,
                                      key: BrokerIdAndFetcherId) -> T:
        thread = self.create_fetcher_thread(broker_and_fetcher_id.fetcher_id, broker_and_fetcher_id.broker)
        self.fetcher_thread_map[key] = thread
        thread.start()
        return thread

    def _add_partitions_to_fetcher_thread(self, fetcher_thread: T,
                                          initial_offset_and_epochs: Mapping[TopicPartition, InitialFetchState]) -> None:
        fetcher_thread.add_partitions(initial_offset_and_epochs)
        self.logger.info("Added fetcher to broker %d for partitions %s", fetcher_thread.source_broker.id,
                         {str(tp): (s.current_leader_epoch, s.init_offset) for tp, s in initial_offset_and_epochs.items()})

    def remove_fetcher_for_partitions(self, partitions: Iterable[TopicPartition]
                                      ) -> dict[TopicPartition, PartitionFetchState]:
        partitions = set(partitions)
        fetch_states: dict[TopicPartition, PartitionFetchState] = {}
        with self._lock:
            for fetcher in self.fetcher_thread_map.values():
                fetch_states.update(fetcher.remove_partitions(partitions))
            self.failed_partitions.remove_all(partitions)
        if partitions:
            self.logger.info("Removed fetcher for partitions %s", ",".join(sorted(map(str, partitions))))
        return fetch_states

    def mark_partitions_for_truncation(self, broker_id: int, topic_partition: TopicPartition,
                                       truncation_offset: int) -> None:
        """The partition's log was truncated under its fetcher (a future log's current log): the
        thread fetching it from ``broker_id`` truncates to ``truncation_offset`` at most."""
        with self._lock:
            fetcher = self.fetcher_thread_map.get(BrokerIdAndFetcherId(broker_id, self.get_fetcher_id(topic_partition)))
            if fetcher is not None:
                fetcher.mark_partitions_for_truncation(topic_partition, truncation_offset)

    def shutdown_idle_fetcher_threads(self) -> None:
        with self._lock:
            for key, fetcher in list(self.fetcher_thread_map.items()):
                if fetcher.partition_count <= 0:
                    fetcher.shutdown()
                    del self.fetcher_thread_map[key]

    def close_all_fetchers(self) -> None:
        with self._lock:
            # ask all to stop first, so they wind down together rather than one after another
            for fetcher in self.fetcher_thread_map.values():
                fetcher.initiate_shutdown()
            for fetcher in self.fetcher_thread_map.values():
                fetcher.shutdown()
            self.fetcher_thread_map.clear()


__all__ = ["AbstractFetcherManager", "BrokerAndFetcherId", "BrokerIdAndFetcherId", "fetcher_id_for"]
