"""Port of metadata/src/main/java/org/apache/kafka/controller/StripedReplicaPlacer.java
(Kafka 3.0.0). It replaces 2.8.2's SimpleReplicaPlacementPolicy, which picked brokers at
random and ignored racks.

Goals, in order: spread each partition's replicas over as many racks as possible, spread
replicas evenly over brokers, prefer unfenced brokers. Constraints: never two replicas
of a partition on one broker, and the leader (first replica) always unfenced.

Racks are visited round robin from an offset that moves on by one per partition, and
within a rack brokers are visited round robin too, unfenced ones first; random starting
offsets (and a reshuffle once every unfenced broker has led once) keep repeated
placements from landing on the same brokers. Racks with unfenced brokers sort before
racks with only fenced ones, which is what lets the leader search stop.
"""
from __future__ import annotations

import random
from typing import Iterator

from kafka_py.clients.common.errors import InvalidReplicationFactorException
from kafka_py.metadata.controller.replica_placer import ReplicaPlacer
from kafka_py.metadata.usable_broker import UsableBroker


class BrokerList:
    """Brokers visited round robin; an iteration epoch ends when each has been returned."""

    def __init__(self) -> None:
        self.brokers: list[int] = []
        self._index = 0
        self._offset = 0
        self._epoch = 0

    def add(self, broker: int) -> BrokerList:
        self.brokers.append(broker)
        return self

    def initialize(self, rng: random.Random) -> None:
        if self.brokers:
            self.brokers.sort()
            self._offset = rng.randrange(len(self.brokers))

    def shuffle(self, rng: random.Random) -> None:
        rng.shuffle(self.brokers)

    def size(self) -> int:
        return len(self.brokers)

    def next(self, epoch: int) -> int:
        """The next broker in iteration ``epoch``, or -1 when all have been returned."""
        if not self.brokers:
            return -1
        if self._epoch != epoch:
            self._epoch = epoch
            self._index = 0
            self._offset = (self._offset + 1) % len(self.brokers)
        if self._index >= len(self.brokers):
            return -1
        broker = self.brokers[(self._index + self._offset) % len(self.brokers)]
        self._index += 1
        return broker


class Rack:
    def __init__(self) -> None:
        self.fenced = BrokerList()
        self.unfenced = BrokerList()

    def initialize(self, rng: random.Random) -> None:
        self.fenced.initialize(rng)
        self.unfenced.initialize(rng)

    def shuffle(self, rng: random.Random) -> None:
        self.fenced.shuffle(rng)
        self.unfenced.shuffle(rng)

    def next_unfenced(self, epoch: int) -> int:
        return self.unfenced.next(epoch)

    def next(self, epoch: int) -> int:
        result = self.unfenced.next(epoch)
        return result if result >= 0 else self.fenced.next(epoch)


def _rack_sort_key(name: str | None) -> tuple[int, str]:
    # no rack sorts first, as Kafka's OptionalStringComparator puts Optional.empty first
    return (0, "") if name is None else (1, name)


class RackList:
    def __init__(self, rng: random.Random, iterator: Iterator[UsableBroker]) -> None:
        self._rng = rng
        self._racks: dict[str | None, Rack] = {}
        total = unfenced = 0
        for broker in iterator:
            rack = self._racks.get(broker.rack)
            if rack is None:
                rack = self._racks[broker.rack] = Rack()
            if broker.fenced:
                rack.fenced.add(broker.id)
            else:
                unfenced += 1
                rack.unfenced.add(broker.id)
            total += 1
        for rack in self._racks.values():
            rack.initialize(rng)
        # racks with an unfenced broker first, each group in name order
        self.rack_names: list[str | None] = sorted(
            self._racks, key=lambda n: (self._racks[n].unfenced.size() == 0, _rack_sort_key(n)))
        self.num_total_brokers = total
        self.num_unfenced_brokers = unfenced
        self._epoch = 0
        self._offset = rng.randrange(len(self.rack_names)) if self.rack_names else 0

    def place(self, replication_factor: int) -> list[int]:
        _throw_if_non_positive(replication_factor)
        _throw_if_too_few_brokers(replication_factor, self.num_total_brokers)
        _throw_if_no_unfenced(self.num_unfenced_brokers)
        # Once every unfenced broker has led a partition in this epoch, reshuffle so the
        # next round does not repeat the last one (not with one broker: nothing to vary).
        if self._epoch == self.num_unfenced_brokers and self.num_unfenced_brokers > 1:
            self.shuffle()
            self._epoch = 0
        if self._offset == len(self.rack_names):
            self._offset = 0
        n = len(self.rack_names)
        brokers: list[int] = []
        # The leader: the first unfenced broker from the starting rack on. Bounded: some
        # rack has an unfenced broker left in this epoch, as epoch < unfenced count.
        first_rack_index = self._offset
        for _ in range(n * (self.num_total_brokers + 1)):
            result = self._racks[self.rack_names[first_rack_index]].next_unfenced(self._epoch)
            if result >= 0:
                brokers.append(result)
                break
            first_rack_index = (first_rack_index + 1) % n
        else:
            raise InvalidReplicationFactorException("All brokers are currently fenced.")
        # The followers: one per rack in turn, skipping the leader's rack on the first pass.
        rack_index = self._offset
        for _ in range(1, replication_factor):
            result = -1
            # Bounded: each full pass over the racks returns at least one unused broker,
            # as there are at least replication_factor brokers in all.
            for _ in range(n * (self.num_total_brokers + 1)):
                if rack_index == first_rack_index:
                    first_rack_index = -1
                else:
                    result = self._racks[self.rack_names[rack_index]].next(self._epoch)
                rack_index = (rack_index + 1) % n
                if result >= 0:
                    break
            if result < 0:
                raise InvalidReplicationFactorException(
                    f"Unable to place {replication_factor} replicas on "
                    f"{self.num_total_brokers} broker(s).")
            brokers.append(result)
        self._epoch += 1
        self._offset += 1
        return brokers

    def shuffle(self) -> None:
        self._rng.shuffle(self.rack_names)
        for rack in self._racks.values():
            rack.shuffle(self._rng)


def _throw_if_non_positive(replication_factor: int) -> None:
    if replication_factor <= 0:
        raise InvalidReplicationFactorException(
            f"Invalid replication factor {replication_factor}: the replication factor must "
            f"be positive.")


def _throw_if_no_unfenced(num_unfenced: int) -> None:
    if num_unfenced == 0:
        raise InvalidReplicationFactorException("All brokers are currently fenced.")


def _throw_if_too_few_brokers(replication_factor: int, num_total_brokers: int) -> None:
    if replication_factor > num_total_brokers:
        raise InvalidReplicationFactorException(
            f"The target replication factor of {replication_factor} cannot be reached "
            f"because only {num_total_brokers} broker(s) are registered.")


class StripedReplicaPlacer(ReplicaPlacer):
    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng if rng is not None else random.Random()

    def place(self, start_partition: int, num_partitions: int, replication_factor: int,
              iterator: Iterator[UsableBroker]) -> list[list[int]]:
        rack_list = RackList(self.rng, iterator)
        _throw_if_non_positive(replication_factor)
        _throw_if_no_unfenced(rack_list.num_unfenced_brokers)
        _throw_if_too_few_brokers(replication_factor, rack_list.num_total_brokers)
        return [rack_list.place(replication_factor) for _ in range(num_partitions)]
