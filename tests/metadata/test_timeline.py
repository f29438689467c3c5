"""The timeline collections against a model: a plain dict, set and int, copied whole at
every snapshot. Whatever the sequence of changes, snapshots, reverts and deletions, a read
at any live snapshot's epoch sees the copy taken then, and a revert restores it exactly."""
from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry
from kafka_py.metadata.timeline.timeline_hash_map import TimelineHashMap
from kafka_py.metadata.timeline.timeline_hash_set import TimelineHashSet
from kafka_py.metadata.timeline.timeline_integer import TimelineInteger
from kafka_py.metadata.timeline.timeline_long import TimelineLong
from kafka_py.core.utils.java_limits import LONG_MIN

KEYS = st.integers(0, 7)


class TimelineMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.registry = SnapshotRegistry("[test] ")
        self.map: TimelineHashMap[int, str] = TimelineHashMap(self.registry)
        self.set: TimelineHashSet[int] = TimelineHashSet(self.registry)
        self.integer = TimelineInteger(self.registry)
        self.model_map: dict[int, str] = {}
        self.model_set: set[int] = set()
        self.model_int = 0
        self.snapshots: dict[int, tuple[dict[int, str], set[int], int]] = {}
        self.next_epoch = 0

    @rule(key=KEYS, value=st.text(max_size=3))
    def put(self, key: int, value: str) -> None:
        assert self.map.put(key, value) == self.model_map.get(key)
        self.model_map[key] = value

    @rule(key=KEYS)
    def remove(self, key: int) -> None:
        assert self.map.remove(key) == self.model_map.pop(key, None)

    @rule()
    def clear_map(self) -> None:
        self.map.clear()
        self.model_map.clear()

    @rule(value=KEYS)
    def add(self, value: int) -> None:
        assert self.set.add(value) == (value not in self.model_set)
        self.model_set.add(value)

    @rule(value=KEYS)
    def discard(self, value: int) -> None:
        assert self.set.discard(value) == (value in self.model_set)
        self.model_set.discard(value)

    @rule(value=st.integers(-3, 3))
    def set_integer(self, value: int) -> None:
        self.integer.set(value)
        self.model_int = value

    @rule()
    def increment(self) -> None:
        self.integer.increment()
        self.model_int += 1

    @rule(gap=st.integers(1, 3))
    def create_snapshot(self, gap: int) -> None:
        self.next_epoch += gap
        self.registry.create_snapshot(self.next_epoch)
        self.snapshots[self.next_epoch] = (dict(self.model_map), set(self.model_set),
                                           self.model_int)

    @precondition(lambda self: self.snapshots)
    @rule(data=st.data())
    def revert_to_snapshot(self, data) -> None:
        epoch = data.draw(st.sampled_from(sorted(self.snapshots)))
        self.registry.revert_to_snapshot(epoch)
        model_map, model_set, model_int = self.snapshots[epoch]
        self.model_map, self.model_set, self.model_int = dict(model_map), set(model_set), model_int
        self.snapshots = {e: s for e, s in self.snapshots.items() if e <= epoch}

    @precondition(lambda self: self.snapshots)
    @rule(data=st.data())
    def delete_snapshot(self, data) -> None:
        epoch = data.draw(st.sampled_from(sorted(self.snapshots)))
        self.registry.delete_snapshot(epoch)
        del self.snapshots[epoch]

    @rule(target_epoch=st.integers(0, 40))
    def delete_snapshots_up_to(self, target_epoch: int) -> None:
        self.registry.delete_snapshots_up_to(target_epoch)
        self.snapshots = {e: s for e, s in self.snapshots.items() if e >= target_epoch}

    @invariant()
    def current_state_matches(self) -> None:
        assert dict(self.map) == self.model_map and len(self.map) == len(self.model_map)
        assert set(self.set) == self.model_set and len(self.set) == len(self.model_set)
        assert self.integer.get() == self.model_int
        assert self.registry.epochs_list() == sorted(self.snapshots)
        assert self.registry.latest_epoch() == max(self.snapshots, default=LONG_MIN)

    @invariant()
    def every_snapshot_reads_as_it_was_taken(self) -> None:
        for epoch, (model_map, model_set, model_int) in self.snapshots.items():
            assert self.map.to_dict(epoch) == model_map
            assert self.map.size(epoch) == len(model_map)
            assert self.map.is_empty(epoch) == (not model_map)
            assert sorted(self.map.keys(epoch)) == sorted(model_map)
            for key in range(8):
                assert self.map.get(key, epoch=epoch) == model_map.get(key)
                assert self.map.contains_key(key, epoch) == (key in model_map)
                assert self.set.contains(key, epoch) == (key in model_set)
            assert self.set.to_set(epoch) == model_set
            assert self.set.size(epoch) == len(model_set)
            assert self.integer.get(epoch) == model_int


TestTimelineAgainstModel = TimelineMachine.TestCase
TestTimelineAgainstModel.settings = settings(max_examples=150, stateful_step_count=40,
                                             deadline=None)


def test_empty_registry() -> None:
    registry = SnapshotRegistry()
    assert registry.latest_epoch() == LONG_MIN
    assert registry.epochs_list() == []
    with pytest.raises(ValueError, match="No snapshot for epoch 0. Snapshot epochs are: $"):
        registry.get_snapshot(0)


def test_snapshot_epochs_must_increase() -> None:
    registry = SnapshotRegistry()
    registry.create_snapshot(2)
    with pytest.raises(ValueError, match="already a snapshot with epoch 2"):
        registry.create_snapshot(2)
    assert registry.get_or_create_snapshot(2) is registry.get_snapshot(2)
    registry.get_or_create_snapshot(5)
    assert registry.epochs_list() == [2, 5]
    assert registry.has_snapshot(5) and not registry.has_snapshot(3)


def test_reading_a_snapshot_while_the_map_changes() -> None:
    registry = SnapshotRegistry()
    timeline = TimelineHashMap(registry)
    for i in range(10):
        timeline[i] = str(i)
    registry.create_snapshot(1)
    seen = []
    for key, value in timeline.items(1):
        seen.append((key, value))
        timeline.pop(key)             # the past does not move under the reader
        timeline[key + 100] = "new"
    assert sorted(seen) == [(i, str(i)) for i in range(10)]
    assert sorted(timeline) == list(range(100, 110))
    for key in list(timeline):        # and the current state can be emptied while read
        del timeline[key]
    assert timeline.to_dict(1) == {i: str(i) for i in range(10)} and not timeline


def test_mapping_protocol() -> None:
    registry = SnapshotRegistry()
    timeline: TimelineHashMap[str, int] = TimelineHashMap(registry)
    timeline.update(a=1, b=2)
    assert timeline == {"a": 1, "b": 2} and "a" in timeline and "z" not in timeline
    assert timeline.get("z", 7) == 7 and timeline.setdefault("c", 3) == 3
    assert timeline.pop("a") == 1
    with pytest.raises(KeyError):
        del timeline["a"]
    with pytest.raises(ValueError):
        timeline["x"] = None
    registry.create_snapshot(10)
    timeline["b"] = 20
    assert timeline.get("b", epoch=10) == 2 and timeline["b"] == 20
    assert sorted(timeline.values(10)) == [2, 3]
    registry.reset()
    assert registry.epochs_list() == [] and not timeline


def test_timeline_long_is_a_timeline_integer_with_its_own_equality() -> None:
    registry = SnapshotRegistry()
    counter = TimelineLong(registry)
    counter.set(2**40)
    registry.create_snapshot(3)
    counter.decrement()
    assert counter.get(3) == 2**40 and counter.get() == 2**40 - 1
    assert counter != TimelineInteger(registry) and str(counter) == str(2**40 - 1)
    registry.revert_to_snapshot(3)
    assert counter.get() == 2**40
