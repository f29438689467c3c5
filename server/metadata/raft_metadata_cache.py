"""Port of core/src/main/scala/kafka/server/metadata/RaftMetadataCache.scala (Kafka 2.8.2).

A KRaft broker's metadata cache: the current ``MetadataImage``, which the
BrokerMetadataListener replaces after each batch of committed metadata records. It answers
the questions the ZooKeeper-mode ``MetadataCache`` (server/metadata_cache.py) answers, in
the same shapes (``TopicMetadata``, ``PartitionMetadata``, ``Cluster``), so KafkaApis'
Metadata, FindCoordinator and DescribeCluster handlers, the ReplicaManager and Partition
work with either cache unchanged.

Reads take no lock: each takes ``self._current_image`` once and works on that one image
(taking it twice could mix two views of the cluster). Replacing the image is serialised by
a lock, as Kafka's.

Kafka's RaftMetadataCache also accepts UpdateMetadata requests (for the bridge release);
a KRaft broker never receives one, so that is left out here.
"""
from __future__ import annotations

import logging
import threading
from typing import Iterable, Optional, Sequence

from kafka_py.core.cluster.broker import ListenerName, Node
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import UpdateMetadataPartitionState
from kafka_py.server.metadata.metadata_brokers import MetadataBroker
from kafka_py.server.metadata.metadata_image import MetadataImage
from kafka_py.server.metadata_cache import (
    NO_LEADER_ID,
    NO_NODE,
    ZERO_UUID,
    Cluster,
    PartitionInfo,
    PartitionMetadata,
    TopicMetadata,
    is_internal,
)
from kafka_py.core.utils.logging import IdentLogger

logger = logging.getLogger(__name__)


def _listener_value(listener_name: "ListenerName | str") -> str:
    return listener_name.value if isinstance(listener_name, ListenerName) else str(listener_name)


class RaftMetadataCache:
    """The metadata cache of a broker whose metadata comes from the KRaft metadata log."""

    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self.logger = IdentLogger(logger, f"[MetadataCache brokerId={broker_id}] ")
        self._lock = threading.Lock()
        self._current_image = MetadataImage()

    # ------------------------------------------------------------------ the image

    def current_image(self) -> MetadataImage:
        return self._current_image

    def image(self, new_image: MetadataImage) -> None:
        with self._lock:
            self._current_image = new_image

    # ------------------------------------------------------------------ lookups

    @staticmethod
    def _has_alive_endpoint(image: MetadataImage, broker_id: int, listener: str) -> bool:
        broker = image.brokers.alive_broker(broker_id)
        return broker is not None and listener in broker.endpoints

    @staticmethod
    def _get_alive_endpoint(image: MetadataImage, broker_id: int, listener: str) -> Optional[Node]:
        broker = image.brokers.alive_broker(broker_id)
        return None if broker is None else broker.endpoints.get(listener)

    def _maybe_filter_alive_replicas(self, image: MetadataImage, brokers: Sequence[int], listener: str,
                                     filter_unavailable_endpoints: bool) -> tuple[int, ...]:
        if not filter_unavailable_endpoints:
            return tuple(brokers)
        return tuple(b for b in brokers if self._has_alive_endpoint(image, b, listener))

    def _get_partition_metadata(self, image: MetadataImage, topic: str, listener: str,
                                error_unavailable_endpoints: bool,
                                error_unavailable_listeners: bool) -> Optional[list[PartitionMetadata]]:
        partitions = list(image.partitions.topic_partitions(topic))
        if not partitions:
            return None
        result = []
        for partition in partitions:
            filtered_replicas = self._maybe_filter_alive_replicas(image, partition.replicas, listener,
                                                                  error_unavailable_endpoints)
            filtered_isr = self._maybe_filter_alive_replicas(image, partition.isr, listener,
                                                             error_unavailable_endpoints)
            leader = self._get_alive_endpoint(image, partition.leader_id, listener)
            if leader is None:
                if image.alive_broker(partition.leader_id) is None:
                    self.logger.debug("Error while fetching metadata for %s: leader not available",
                                      partition.to_topic_partition())
                    error = Errors.LEADER_NOT_AVAILABLE
                else:
                    self.logger.debug("Error while fetching metadata for %s: listener %s not found on leader %d",
                                      partition.to_topic_partition(), listener, partition.leader_id)
                    error = Errors.LISTENER_NOT_FOUND if error_unavailable_listeners else Errors.LEADER_NOT_AVAILABLE
                result.append(PartitionMetadata(error, partition.partition_index, NO_LEADER_ID,
                                                partition.leader_epoch, filtered_replicas, filtered_isr,
                                                partition.offline_replicas))
            else:
                if (len(filtered_replicas) < len(partition.replicas)
                        or len(filtered_isr) < len(partition.isr)):
                    error = Errors.REPLICA_NOT_AVAILABLE
                else:
                    error = Errors.NONE
                result.append(PartitionMetadata(error, partition.partition_index, leader.id,
                                                partition.leader_epoch, filtered_replicas, filtered_isr,
                                                partition.offline_replicas))
        return result

    def get_topic_metadata(self, topics: Iterable[str], listener_name: "ListenerName | str",
                           error_unavailable_endpoints: bool = False,
                           error_unavailable_listeners: bool = False) -> list[TopicMetadata]:
        image = self._current_image
        listener = _listener_value(listener_name)
        result = []
        for topic in topics:
            partitions = self._get_partition_metadata(image, topic, listener, error_unavailable_endpoints,
                                                      error_unavailable_listeners)
            if partitions is not None:
                topic_id = image.topic_name_to_id(topic)
                result.append(TopicMetadata(Errors.NONE, topic, ZERO_UUID if topic_id is None else topic_id,
                                            is_internal(topic), tuple(partitions)))
        return result

    def get_all_topics(self) -> set[str]:
        return set(self._current_image.partitions.all_topic_names())

    def get_all_partitions(self) -> set[TopicPartition]:
        return {p.to_topic_partition() for p in self._current_image.partitions.all_partitions()}

    def get_non_existing_topics(self, topics: Iterable[str]) -> set[str]:
        known = self._current_image.partitions.all_topic_names()
        return {t for t in topics if t not in known}

    def get_alive_broker(self, broker_id: int) -> Optional[MetadataBroker]:
        return self._current_image.brokers.alive_broker(broker_id)

    def get_alive_brokers(self) -> list[MetadataBroker]:
        return list(self._current_image.brokers.alive_brokers())

    def has_alive_broker(self, broker_id: int) -> bool:
        return self._current_image.brokers.alive_broker(broker_id) is not None

    def get_alive_broker_nodes(self, listener_name: "ListenerName | str") -> list[Node]:
        listener = _listener_value(listener_name)
        return [b.endpoints[listener] for b in self._current_image.brokers.alive_brokers() if listener in b.endpoints]

    def get_partition_info(self, topic: "str | TopicPartition",
                           partition_id: Optional[int] = None) -> Optional[UpdateMetadataPartitionState]:
        """The partition in UpdateMetadata's shape; there is no controller epoch or zkVersion in
        KRaft, so both are -1 as in Kafka."""
        if isinstance(topic, TopicPartition):
            partition_id = topic.partition
            topic = topic.topic
        # (a topic name comes with its partition id)
        partition = self._current_image.partitions.topic_partition(topic, partition_id)  # type: ignore[arg-type]
        if partition is None:
            return None
        return UpdateMetadataPartitionState(
            topic_name=partition.topic_name, partition_index=partition.partition_index, controller_epoch=-1,
            leader=partition.leader_id, leader_epoch=partition.leader_epoch, isr=partition.isr, zk_version=-1,
            replicas=partition.replicas, offline_replicas=partition.offline_replicas)

    def num_partitions(self, topic: str) -> Optional[int]:
        return self._current_image.partitions.num_topic_partitions(topic)

    def get_partition_leader_endpoint(self, topic: str, partition_id: int,
                                      listener_name: "ListenerName | str") -> Optional[Node]:
        image = self._current_image
        partition = image.partitions.topic_partition(topic, partition_id)
        if partition is None:
            return None
        broker = image.alive_broker(partition.leader_id)
        node = None if broker is None else broker.endpoints.get(_listener_value(listener_name))
        return NO_NODE if node is None else node

    def get_partition_replica_endpoints(self, tp: TopicPartition,
                                        listener_name: "ListenerName | str") -> dict[int, Node]:
        image = self._current_image
        partition = image.partitions.topic_partition(tp.topic, tp.partition)
        if partition is None:
            return {}
        listener = _listener_value(listener_name)
        result = {}
        for replica_id in partition.replicas:
            broker = image.alive_broker(replica_id)
            node = None if broker is None else broker.endpoints.get(listener)
            if node is not None and not node.is_empty():
                result[replica_id] = node
        return result

    def get_controller_id(self) -> Optional[int]:
        """The node leading the metadata log (a controller, not a broker). Clients are told a
        random alive broker instead (KafkaApis' controller id in KRaft mode)."""
        return self._current_image.controller_id

    def random_alive_broker_id(self) -> Optional[int]:
        return self._current_image.brokers.random_alive_broker_id()

    def get_cluster_metadata(self, cluster_id: Optional[str], listener_name: "ListenerName | str") -> Cluster:
        image = self._current_image
        listener = _listener_value(listener_name)
        nodes: dict[int, Node] = {}
        for broker in image.brokers.alive_brokers():
            node = broker.endpoints.get(listener)
            if node is not None:
                nodes[broker.id] = node

        def node_of(broker_id: int) -> Node:
            found = nodes.get(broker_id)
            return found if found is not None else Node(broker_id, "", -1)

        partitions = tuple(PartitionInfo(p.topic_name, p.partition_index, node_of(p.leader_id),
                                         tuple(node_of(r) for r in p.replicas), tuple(node_of(r) for r in p.isr),
                                         tuple(node_of(r) for r in p.offline_replicas))
                           for p in image.partitions.all_partitions())
        internal = frozenset(t for t in image.partitions.all_topic_names() if is_internal(t))
        controller_id = image.controller_id
        return Cluster(cluster_id, tuple(nodes.values()), partitions, frozenset(), internal,
                       node_of(-1 if controller_id is None else controller_id))

    def contains_topic(self, topic: str) -> bool:
        return self._current_image.partitions.contains(topic)

    def contains(self, topic_or_partition: "str | TopicPartition") -> bool:
        return self._current_image.contains(topic_or_partition)

    def __contains__(self, item: "str | TopicPartition") -> bool:
        return self.contains(item)


__all__ = ["RaftMetadataCache"]
