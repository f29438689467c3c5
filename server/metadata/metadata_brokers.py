"""Port of core/src/main/scala/kafka/server/metadata/MetadataBrokers.scala (Kafka 2.8.2).

The brokers of a KRaft broker's MetadataImage: every registered broker, fenced or not,
with its address on each listener. ``MetadataBroker`` answers the calls the rest of the
broker makes on a ZooKeeper-era ``Broker`` from the metadata cache (``get_node``,
``broker_end_point``), so ReplicaManager, the group APIs and the channel to the controller
use either without knowing which cache they read.

An image is never changed once built: a ``MetadataBrokersBuilder`` copies the previous
map, changes the copy, and builds a new ``MetadataBrokers``.
"""
from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Optional

from kafka_py.core.cluster.broker import BrokerEndPoint, BrokerEndPointNotAvailableException, ListenerName, Node

logger = logging.getLogger(__name__)


def _listener_value(listener_name: "ListenerName | str") -> str:
    return listener_name.value if isinstance(listener_name, ListenerName) else str(listener_name)


@dataclass(frozen=True, eq=True)
class MetadataBroker:
    """One registered broker: its listeners' addresses by listener name, and whether the
    controller has fenced it (a fenced broker is not alive for clients or for leadership)."""

    id: int
    rack: Optional[str]
    endpoints: Mapping[str, Node] = field(hash=False)
    fenced: bool

    @classmethod
    def from_record(cls, record: Any) -> "MetadataBroker":
        """A RegisterBrokerRecord's broker; registered brokers start fenced."""
        broker_id = int(record.broker_id)
        rack = record.rack
        endpoints = {str(ep.name): Node(broker_id, str(ep.host), int(ep.port), rack) for ep in record.end_points}
        return cls(broker_id, rack, endpoints, fenced=True)

    def with_fencing(self, fenced: bool) -> "MetadataBroker":
        return MetadataBroker(self.id, self.rack, self.endpoints, fenced)

    # -- what the ZooKeeper-era Broker offers the rest of the broker

    def get_node(self, listener_name: "ListenerName | str") -> Optional[Node]:
        return self.endpoints.get(_listener_value(listener_name))

    def node(self, listener_name: "ListenerName | str") -> Node:
        node = self.get_node(listener_name)
        if node is None:
            raise BrokerEndPointNotAvailableException(
                f"End point with listener name {_listener_value(listener_name)} not found for broker {self.id}")
        return node

    def broker_end_point(self, listener_name: "ListenerName | str") -> BrokerEndPoint:
        node = self.node(listener_name)
        return BrokerEndPoint(node.id, node.host, node.port)

    def __hash__(self) -> int:
        return hash((self.id, self.rack, self.fenced, tuple(sorted(self.endpoints.items()))))


class MetadataBrokersBuilder:
    """Changes to the previous image's brokers, built into a new MetadataBrokers."""

    def __init__(self, log: Any, prev_brokers: "MetadataBrokers") -> None:
        self.log = log
        self._new_broker_map: dict[int, MetadataBroker] = prev_brokers.clone_broker_map()

    def add(self, broker: MetadataBroker) -> None:
        self._new_broker_map[broker.id] = broker

    def change_fencing(self, broker_id: int, fenced: bool) -> None:
        broker = self._new_broker_map.get(broker_id)
        if broker is None:
            raise RuntimeError(f"Unknown broker id {broker_id}")
        self._new_broker_map[broker_id] = broker.with_fencing(fenced)

    def remove(self, broker_id: int) -> None:
        self._new_broker_map.pop(broker_id, None)

    def get(self, broker_id: int) -> Optional[MetadataBroker]:
        return self._new_broker_map.get(broker_id)

    def build(self) -> "MetadataBrokers":
        result = MetadataBrokers.of(self.log, self._new_broker_map)
        # the built image owns the map from here on: a later change needs a new builder
        self._new_broker_map = dict(self._new_broker_map)
        return result


class MetadataBrokers:
    """Every registered broker by id, and the list of the unfenced (alive) ones."""

    __slots__ = ("_alive_brokers", "_broker_map")

    def __init__(self, alive_brokers: tuple[MetadataBroker, ...], broker_map: Mapping[int, MetadataBroker]) -> None:
        self._alive_brokers = alive_brokers
        self._broker_map = broker_map

    @classmethod
    def empty(cls) -> "MetadataBrokers":
        return cls((), {})

    @classmethod
    def of(cls, log: Any, broker_map: Mapping[int, MetadataBroker]) -> "MetadataBrokers":
        alive = tuple(b for b in broker_map.values() if not b.fenced)
        listener_sets = {frozenset(b.endpoints) for b in alive}
        if len(listener_sets) > 1:
            (log or logger).error("Listeners are not identical across alive brokers. %s",
                                  [f"{b.id}: {', '.join(b.endpoints)}" for b in alive])
        return cls(alive, broker_map)

    def size(self) -> int:
        return len(self._broker_map)

    def __iter__(self) -> Iterator[MetadataBroker]:
        return iter(self._broker_map.values())

    def iterator(self) -> Iterator[MetadataBroker]:
        return iter(self._broker_map.values())

    def clone_broker_map(self) -> dict[int, MetadataBroker]:
        return dict(self._broker_map)

    def alive_broker(self, broker_id: int) -> Optional[MetadataBroker]:
        broker = self._broker_map.get(broker_id)
        return None if broker is None or broker.fenced else broker

    def random_alive_broker_id(self) -> Optional[int]:
        if not self._alive_brokers:
            return None
        return random.choice(self._alive_brokers).id

    def alive_brokers(self) -> tuple[MetadataBroker, ...]:
        return self._alive_brokers

    def get(self, broker_id: int) -> Optional[MetadataBroker]:
        return self._broker_map.get(broker_id)

    def __repr__(self) -> str:
        return f"MetadataBrokers({sorted(self._broker_map)}, alive={sorted(b.id for b in self._alive_brokers)})"


__all__ = ["MetadataBroker", "MetadataBrokersBuilder", "MetadataBrokers"]
