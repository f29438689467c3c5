"""Port of core/src/main/scala/kafka/server/MetadataCache.scala (the ZkMetadataCache flavour).

Every broker keeps the controller's view of the cluster: which brokers are alive and where
each listener of each broker is, who the controller is, and for every partition its leader,
leader epoch, ISR, replicas and offline replicas. The controller pushes that view with
UpdateMetadata requests; Metadata requests from clients are answered from it.

Reads never lock. The whole state is one immutable ``MetadataSnapshot`` that an update
replaces in one assignment (copy on write), so a reader takes ``self._snapshot`` once and
sees a consistent cluster for the whole of its work; taking it twice could mix two views.
Updates are serialised by a lock, as Kafka's write lock.

UpdateMetadata requests of every version (0-7) are read through
``update_metadata_partition_states`` and ``update_metadata_live_brokers``, which give the
version-neutral view Kafka's UpdateMetadataRequest accessors give (topic names on every
partition state, a listener name on every end point).
"""
from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence

from kafka_py.core.api.leader_and_isr import LeaderAndIsr
from kafka_py.core.cluster.broker import Broker, EndPoint, ListenerName, Node, SecurityProtocol
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import UpdateMetadataPartitionState
from kafka_py.core.utils.logging import IdentLogger

logger = logging.getLogger(__name__)
state_change_logger = logging.getLogger("state.change.logger")

ZERO_UUID = uuid.UUID(int=0)
NO_LEADER_ID = -1

# clients/.../common/internals/Topic.java: the topics the brokers themselves own.
GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"
TRANSACTION_STATE_TOPIC_NAME = "__transaction_state"
INTERNAL_TOPICS = frozenset((GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME))


def is_internal(topic: str) -> bool:
    """Kafka's Topic.isInternal."""
    return topic in INTERNAL_TOPICS


def _listener(name: "ListenerName | str") -> ListenerName:
    return name if isinstance(name, ListenerName) else ListenerName(str(name))


# ---------------------------------------------------------------------------- value types


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """Kafka's MetadataResponsePartition, without a wire version."""

    error: Errors
    partition_index: int
    leader_id: int
    leader_epoch: int
    replica_nodes: tuple[int, ...]
    isr_nodes: tuple[int, ...]
    offline_replicas: tuple[int, ...]

    @property
    def error_code(self) -> int:
        return self.error.code


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """Kafka's MetadataResponseTopic, without a wire version."""

    error: Errors
    name: str
    topic_id: uuid.UUID
    is_internal: bool
    partitions: tuple[PartitionMetadata, ...]

    @property
    def error_code(self) -> int:
        return self.error.code


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """clients/.../common/PartitionInfo.java."""

    topic: str
    partition: int
    leader: Node
    replicas: tuple[Node, ...]
    in_sync_replicas: tuple[Node, ...]
    offline_replicas: tuple[Node, ...]


@dataclass(frozen=True)
class Cluster:
    """clients/.../common/Cluster.java, reduced to what the broker builds from its cache."""

    cluster_id: Optional[str]
    nodes: tuple[Node, ...]
    partitions: tuple[PartitionInfo, ...]
    unauthorized_topics: frozenset = frozenset()
    internal_topics: frozenset = frozenset()
    controller: Optional[Node] = None

    def partitions_for_topic(self, topic: str) -> list[PartitionInfo]:
        return [p for p in self.partitions if p.topic == topic]

    def leader_for(self, tp: TopicPartition) -> Optional[Node]:
        for p in self.partitions:
            if p.topic == tp.topic and p.partition == tp.partition:
                return p.leader
        return None


@dataclass(frozen=True, slots=True)
class MetadataSnapshot:
    """The whole cache; never changed once published (the maps are not mutated after build)."""

    partition_states: Mapping[str, Mapping[int, UpdateMetadataPartitionState]]
    topic_ids: Mapping[str, uuid.UUID]
    controller_id: Optional[int]
    alive_brokers: Mapping[int, Broker]
    alive_nodes: Mapping[int, Mapping[ListenerName, Node]]


_EMPTY_SNAPSHOT = MetadataSnapshot({}, {}, None, {}, {})


# ---------------------------------------------------------------------------- request views


def _request_version(request: Any) -> int:
    version: Any = getattr(type(request), "__version__", None)
    if version is None:
        version = getattr(request, "version", 7)
    return int(version)


def update_metadata_partition_states(request: Any) -> Iterator[UpdateMetadataPartitionState]:
    """Kafka's UpdateMetadataRequest.partitionStates(): flattened, each with its topic name."""

    def convert(topic: str, state: Any) -> UpdateMetadataPartitionState:
        return UpdateMetadataPartitionState(
            topic_name=topic,
            partition_index=int(state.partition_index),
            controller_epoch=int(state.controller_epoch),
            leader=int(state.leader),
            leader_epoch=int(state.leader_epoch),
            isr=tuple(int(i) for i in state.isr),
            zk_version=int(state.zk_version),
            replicas=tuple(int(r) for r in state.replicas),
            offline_replicas=tuple(int(r) for r in getattr(state, "offline_replicas", ())),
        )

    topic_states = getattr(request, "topic_states", None)
    if topic_states is not None:
        for topic_state in topic_states:
            for state in topic_state.partition_states:
                yield convert(topic_state.topic_name, state)
    else:
        for state in getattr(request, "ungrouped_partition_states", ()):
            yield convert(state.topic_name, state)


def update_metadata_topic_ids(request: Any) -> dict[str, uuid.UUID]:
    """Topic ids sent with the request (version 7 and later); the zero UUID means none."""
    ids = {}
    for topic_state in getattr(request, "topic_states", None) or ():
        topic_id = getattr(topic_state, "topic_id", None)
        if topic_id is not None and topic_id != ZERO_UUID:
            ids[topic_state.topic_name] = topic_id
    return ids


def update_metadata_live_brokers(request: Any) -> list[Broker]:
    """The live brokers of the request, every end point named by its listener.

    Version 0 names one PLAINTEXT address per broker; versions 1-2 name end points by
    security protocol only, which is then also the listener name (as Kafka fills it in).
    """
    brokers = []
    for live in request.live_brokers:
        end_points: list[EndPoint] = []
        if hasattr(live, "v0_host"):
            protocol = SecurityProtocol.PLAINTEXT
            end_points.append(EndPoint(live.v0_host, int(live.v0_port),
                                       ListenerName.for_security_protocol(protocol), protocol))
        else:
            for ep in live.endpoints:
                protocol = SecurityProtocol.for_id(int(ep.security_protocol))
                listener = getattr(ep, "listener", "") or protocol.name
                end_points.append(EndPoint(ep.host, int(ep.port), ListenerName(listener), protocol))
        brokers.append(Broker(int(live.id), tuple(end_points), getattr(live, "rack", None)))
    return brokers


# ---------------------------------------------------------------------------- the cache


class MetadataCache:
    """ZkMetadataCache: the broker's copy of the controller's cluster metadata."""

    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self._snapshot: MetadataSnapshot = _EMPTY_SNAPSHOT
        self._partition_metadata_lock = threading.Lock()
        self.logger = IdentLogger(logger, f"[MetadataCache brokerId={broker_id}] ")
        self._state_change_ident = f"[Broker id={broker_id}] "

    # -- zk-flavour factory, as MetadataCache.zkMetadataCache
    @classmethod
    def zk_metadata_cache(cls, broker_id: int) -> "MetadataCache":
        return cls(broker_id)

    # ------------------------------------------------------------------ lookups

    @staticmethod
    def _has_alive_endpoint(snapshot: MetadataSnapshot, broker_id: int, listener: ListenerName) -> bool:
        nodes = snapshot.alive_nodes.get(broker_id)
        return nodes is not None and listener in nodes

    @staticmethod
    def _get_alive_endpoint(snapshot: MetadataSnapshot, broker_id: int, listener: ListenerName) -> Optional[Node]:
        nodes = snapshot.alive_nodes.get(broker_id)
        return None if nodes is None else nodes.get(listener)

    def _maybe_filter_alive_replicas(self, snapshot: MetadataSnapshot, brokers: Sequence[int],
                                     listener: ListenerName, filter_unavailable_endpoints: bool) -> tuple[int, ...]:
        if not filter_unavailable_endpoints:
            return tuple(brokers)
        return tuple(b for b in brokers if self._has_alive_endpoint(snapshot, b, listener))

    def _get_partition_metadata(self, snapshot: MetadataSnapshot, topic: str, listener: ListenerName,
                                error_unavailable_endpoints: bool,
                                error_unavailable_listeners: bool) -> Optional[list[PartitionMetadata]]:
        partitions = snapshot.partition_states.get(topic)
        if partitions is None:
            return None
        result = []
        for partition_id, state in partitions.items():
            leader_id = state.leader
            maybe_leader = self._get_alive_endpoint(snapshot, leader_id, listener)
            replicas = state.replicas
            filtered_replicas = self._maybe_filter_alive_replicas(snapshot, replicas, listener,
                                                                  error_unavailable_endpoints)
            isr = state.isr
            filtered_isr = self._maybe_filter_alive_replicas(snapshot, isr, listener, error_unavailable_endpoints)
            if maybe_leader is None:
                if leader_id not in snapshot.alive_brokers:
                    self.logger.debug("Error while fetching metadata for %s-%d: leader not available",
                                      topic, partition_id)
                    error = Errors.LEADER_NOT_AVAILABLE
                else:
                    self.logger.debug("Error while fetching metadata for %s-%d: listener %s not found on leader %d",
                                      topic, partition_id, listener, leader_id)
                    error = Errors.LISTENER_NOT_FOUND if error_unavailable_listeners else Errors.LEADER_NOT_AVAILABLE
                result.append(PartitionMetadata(error, partition_id, NO_LEADER_ID, state.leader_epoch,
                                                filtered_replicas, filtered_isr, state.offline_replicas))
            else:
                if len(filtered_replicas) < len(replicas) or len(filtered_isr) < len(isr):
                    # v0 clients are told that some replica addresses are missing from the answer
                    error = Errors.REPLICA_NOT_AVAILABLE
                else:
                    error = Errors.NONE
                result.append(PartitionMetadata(error, partition_id, maybe_leader.id, state.leader_epoch,
                                                filtered_replicas, filtered_isr, state.offline_replicas))
        return result

    def get_topic_metadata(self, topics: Iterable[str], listener_name: "ListenerName | str",
                           error_unavailable_endpoints: bool = False,
                           error_unavailable_listeners: bool = False) -> list[TopicMetadata]:
        """Metadata of those ``topics`` the cache knows (unknown ones are left out, as Kafka).

        ``error_unavailable_endpoints`` (Metadata v0) drops replicas without an address on the
        listener and flags REPLICA_NOT_AVAILABLE; ``error_unavailable_listeners`` (v6+) answers
        LISTENER_NOT_FOUND rather than LEADER_NOT_AVAILABLE when the leader lacks the listener.
        """
        snapshot = self._snapshot
        listener = _listener(listener_name)
        result = []
        for topic in topics:
            partitions = self._get_partition_metadata(snapshot, topic, listener, error_unavailable_endpoints,
                                                      error_unavailable_listeners)
            if partitions is not None:
                result.append(TopicMetadata(Errors.NONE, topic, snapshot.topic_ids.get(topic, ZERO_UUID),
                                            is_internal(topic), tuple(partitions)))
        return result

    def get_all_topics(self) -> set[str]:
        return set(self._snapshot.partition_states)

    def get_all_partitions(self) -> set[TopicPartition]:
        return {TopicPartition(topic, p) for topic, states in self._snapshot.partition_states.items()
                for p in states}

    @staticmethod
    def _all_partition_states(snapshot: MetadataSnapshot) -> dict[TopicPartition, UpdateMetadataPartitionState]:
        return {TopicPartition(topic, p): state for topic, states in snapshot.partition_states.items()
                for p, state in states.items()}

    def get_non_existing_topics(self, topics: Iterable[str]) -> set[str]:
        known = self._snapshot.partition_states
        return {t for t in topics if t not in known}

    def get_alive_broker(self, broker_id: int) -> Optional[Broker]:
        return self._snapshot.alive_brokers.get(broker_id)

    def get_alive_brokers(self) -> list[Broker]:
        return list(self._snapshot.alive_brokers.values())

    def has_alive_broker(self, broker_id: int) -> bool:
        return broker_id in self._snapshot.alive_brokers

    def get_alive_broker_nodes(self, listener_name: "ListenerName | str") -> list[Node]:
        """Each alive broker's address on ``listener_name`` (brokers without it are left out)."""
        listener = _listener(listener_name)
        nodes = []
        for by_listener in self._snapshot.alive_nodes.values():
            node = by_listener.get(listener)
            if node is not None:
                nodes.append(node)
        return nodes

    def get_partition_info(self, topic: "str | TopicPartition",
                           partition_id: Optional[int] = None) -> Optional[UpdateMetadataPartitionState]:
        if isinstance(topic, TopicPartition):
            partition_id = topic.partition
            topic = topic.topic
        states = self._snapshot.partition_states.get(topic)
        # (a topic name comes with its partition id)
        return None if states is None else states.get(partition_id)  # type: ignore[arg-type]

    def num_partitions(self, topic: str) -> Optional[int]:
        states = self._snapshot.partition_states.get(topic)
        return None if states is None else len(states)

    def get_partition_leader_endpoint(self, topic: str, partition_id: int,
                                      listener_name: "ListenerName | str") -> Optional[Node]:
        """None if the partition is unknown; a node with no address if its leader is not reachable
        on the listener (Kafka's Node.noNode); the leader's address otherwise."""
        snapshot = self._snapshot
        states = snapshot.partition_states.get(topic)
        state = None if states is None else states.get(partition_id)
        if state is None:
            return None
        nodes = snapshot.alive_nodes.get(state.leader)
        node = None if nodes is None else nodes.get(_listener(listener_name))
        return node if node is not None else NO_NODE

    def get_partition_replica_endpoints(self, tp: TopicPartition,
                                        listener_name: "ListenerName | str") -> dict[int, Node]:
        snapshot = self._snapshot
        states = snapshot.partition_states.get(tp.topic)
        state = None if states is None else states.get(tp.partition)
        if state is None:
            return {}
        listener = _listener(listener_name)
        result = {}
        for replica_id in state.replicas:
            broker = snapshot.alive_brokers.get(replica_id)
            node = broker.get_node(listener) if broker is not None else None
            if node is not None and not node.is_empty():
                result[replica_id] = node
        return result

    def get_controller_id(self) -> Optional[int]:
        return self._snapshot.controller_id

    def get_cluster_metadata(self, cluster_id: Optional[str], listener_name: "ListenerName | str") -> Cluster:
        snapshot = self._snapshot
        listener = _listener(listener_name)
        nodes: dict[int, Node] = {}
        for broker_id, by_listener in snapshot.alive_nodes.items():
            alive = by_listener.get(listener)
            if alive is not None:
                nodes[broker_id] = alive

        def node(broker_id: int) -> Node:
            found = nodes.get(broker_id)
            return found if found is not None else Node(broker_id, "", -1)

        partitions = tuple(
            PartitionInfo(tp.topic, tp.partition, node(state.leader), tuple(node(r) for r in state.replicas),
                          tuple(node(r) for r in state.isr), tuple(node(r) for r in state.offline_replicas))
            for tp, state in self._all_partition_states(snapshot).items()
            if state.leader != LeaderAndIsr.LEADER_DURING_DELETE)
        internal = frozenset(t for t in snapshot.partition_states if is_internal(t))
        controller = None if snapshot.controller_id is None else node(snapshot.controller_id)
        return Cluster(cluster_id, tuple(nodes.values()), partitions, frozenset(), internal, controller)

    def contains_topic(self, topic: str) -> bool:
        return topic in self._snapshot.partition_states

    def contains(self, topic_or_partition: "str | TopicPartition") -> bool:
        """Kafka's two ``contains`` overloads: a topic name or a TopicPartition."""
        if isinstance(topic_or_partition, TopicPartition):
            return self.get_partition_info(topic_or_partition) is not None
        return self.contains_topic(topic_or_partition)

    def __contains__(self, item: "str | TopicPartition") -> bool:
        return self.contains(item)

    # ------------------------------------------------------------------ update

    def update_metadata(self, correlation_id: int, update_metadata_request: Any) -> list[TopicPartition]:
        """Apply an UpdateMetadata request; returns the partitions it deleted.

        Live brokers and the controller id are replaced; partition states are merged into
        the previous ones (the controller sends partial updates), and a partition whose
        leader is LeaderDuringDelete (-2) is removed.
        """
        request = update_metadata_request
        with self._partition_metadata_lock:
            old = self._snapshot
            controller_id = int(request.controller_id)
            controller_epoch = int(request.controller_epoch)
            controller_id_opt = None if controller_id < 0 else controller_id

            alive_brokers: dict[int, Broker] = {}
            alive_nodes: dict[int, dict[ListenerName, Node]] = {}
            for broker in update_metadata_live_brokers(request):
                alive_brokers[broker.id] = broker
                # (an end point's host is None where its listener names none; kept as Kafka keeps it)
                alive_nodes[broker.id] = {ep.listener_name: Node(broker.id, ep.host, ep.port,  # type: ignore[arg-type]
                                                                 broker.rack)
                                          for ep in broker.end_points}
            own = alive_nodes.get(self.broker_id)
            if own is not None:
                listeners = set(own)
                if any(set(nodes) != listeners for nodes in alive_nodes.values()):
                    self.logger.error("Listeners are not identical across brokers: %s", alive_nodes)

            topic_ids = dict(old.topic_ids)
            topic_ids.update(update_metadata_topic_ids(request))

            new_states = list(update_metadata_partition_states(request))
            deleted: list[TopicPartition] = []
            if not new_states:
                self._snapshot = MetadataSnapshot(old.partition_states, topic_ids, controller_id_opt,
                                                  alive_brokers, alive_nodes)
                return deleted

            # copy one level deep: the inner maps of the old snapshot stay untouched for its readers
            partition_states: dict[str, dict[int, UpdateMetadataPartitionState]] = {
                topic: dict(states) for topic, states in old.partition_states.items()}
            trace = state_change_logger.isEnabledFor(logging.DEBUG)
            for state in new_states:
                tp = TopicPartition(state.topic_name, state.partition_index)
                if state.leader == LeaderAndIsr.LEADER_DURING_DELETE:
                    infos = partition_states.get(tp.topic)
                    if infos is not None:
                        infos.pop(tp.partition, None)
                        if not infos:
                            del partition_states[tp.topic]
                            topic_ids.pop(tp.topic, None)
                    deleted.append(tp)
                    if trace:
                        state_change_logger.debug(
                            "%sDeleted partition %s from metadata cache in response to UpdateMetadata request sent "
                            "by controller %d epoch %d with correlation id %d", self._state_change_ident, tp,
                            controller_id, controller_epoch, correlation_id)
                else:
                    partition_states.setdefault(tp.topic, {})[tp.partition] = state
                    if trace:
                        state_change_logger.debug(
                            "%sCached leader info %s for partition %s in response to UpdateMetadata request sent "
                            "by controller %d epoch %d with correlation id %d", self._state_change_ident, state, tp,
                            controller_id, controller_epoch, correlation_id)
            state_change_logger.info(
                "%sAdd %d partitions and deleted %d partitions from metadata cache in response to UpdateMetadata "
                "request sent by controller %d epoch %d with correlation id %d", self._state_change_ident,
                len(new_states) - len(deleted), len(deleted), controller_id, controller_epoch, correlation_id)
            self._snapshot = MetadataSnapshot(partition_states, topic_ids, controller_id_opt, alive_brokers,
                                              alive_nodes)
            return deleted


# Kafka's Node.noNode(): a leader known but not reachable on the listener asked for.
NO_NODE = Node(-1, "", -1)

__all__ = [
    "MetadataCache", "MetadataSnapshot", "TopicMetadata", "PartitionMetadata",
    "PartitionInfo", "Cluster", "NO_NODE", "NO_LEADER_ID", "ZERO_UUID", "INTERNAL_TOPICS", "is_internal",
    "update_metadata_partition_states", "update_metadata_live_brokers", "update_metadata_topic_ids",
]
