"""AbstractFetcherManager (server/abstract_fetcher_manager.py): one running thread per (source
broker, fetcher id), reused while the broker keeps its address, replaced when it moves,
stopped when idle. The threads here have nothing to fetch (their build_fetch finds no
partition ready), so they only wait on their condition between rounds."""
from __future__ import annotations

import pytest

from kafka_py.core.cluster.broker import BrokerEndPoint
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.abstract_fetcher_manager import (
    AbstractFetcherManager,
    BrokerIdAndFetcherId,
    InitialFetchState,
    fetcher_id_for,
)
from kafka_py.server.abstract_fetcher_thread import AbstractFetcherThread, ReplicaState, ResultWithPartitions


class IdleFetcherThread(AbstractFetcherThread):
    is_offset_for_leader_epoch_supported = True
    is_truncation_on_fetch_supported = True

    def build_fetch(self, partition_map):
        return ResultWithPartitions(None, frozenset())

    def latest_epoch(self, tp):
        return 0  # a log that knows its epochs: added partitions start out fetching

    def process_partition_data(self, *args): raise AssertionError("nothing is fetched")
    def truncate(self, *args): raise AssertionError("nothing is truncated")
    def truncate_fully_and_start_at(self, *args): raise AssertionError("nothing is truncated")
    def log_start_offset(self, tp): return 0
    def log_end_offset(self, tp): return 0
    def end_offset_for_epoch(self, tp, epoch): return None
    def fetch_epoch_end_offsets(self, partitions): return {}
    def fetch_from_leader(self, request): return {}
    def fetch_earliest_offset_from_leader(self, tp, epoch): return 0
    def fetch_latest_offset_from_leader(self, tp, epoch): return 0


class Manager(AbstractFetcherManager[IdleFetcherThread]):
    def create_fetcher_thread(self, fetcher_id, source_broker):
        return IdleFetcherThread(f"Fetcher-{fetcher_id}-{source_broker.id}", "test", source_broker,
                                 self.failed_partitions, fetch_back_off_ms=10)


@pytest.fixture
def manager():
    m = Manager("test fetchers", "test", num_fetchers=2)
    yield m
    m.close_all_fetchers()


B1 = BrokerEndPoint(1, "127.0.0.1", 9001)
B2 = BrokerEndPoint(2, "127.0.0.1", 9002)


def partitions_with_fetcher_ids(ids: set[int], count: int = 2) -> list[TopicPartition]:
    found: dict[int, list[TopicPartition]] = {}
    p = 0
    while any(len(found.get(i, [])) < count for i in ids):
        tp = TopicPartition("t", p)
        found.setdefault(fetcher_id_for(tp, 2), []).append(tp)
        p += 1
    return [tp for i in sorted(ids) for tp in found[i][:count]]


def test_one_thread_per_leader_and_fetcher_id(manager) -> None:
    tps = partitions_with_fetcher_ids({0, 1})
    manager.add_fetcher_for_partitions({tp: InitialFetchState(B1, 3, 10) for tp in tps})
    manager.add_fetcher_for_partitions({TopicPartition("u", 0): InitialFetchState(B2, 1, 0)})
    keys = set(manager.fetcher_thread_map)
    assert {k for k in keys if k.broker_id == 1} == {BrokerIdAndFetcherId(1, 0), BrokerIdAndFetcherId(1, 1)}
    assert len([k for k in keys if k.broker_id == 2]) == 1
    for tp in tps:
        thread = manager.get_fetcher(tp)
        assert thread is manager.fetcher_thread_map[BrokerIdAndFetcherId(1, manager.get_fetcher_id(tp))]
        state = thread.fetch_state(tp)
        assert (state.fetch_offset, state.current_leader_epoch, state.state) == (10, 3, ReplicaState.FETCHING)
    assert all(t.is_alive() for t in manager.fetcher_thread_map.values())


def test_a_broker_at_a_new_address_gets_a_new_thread(manager) -> None:
    [tp] = partitions_with_fetcher_ids({0}, count=1)
    manager.add_fetcher_for_partitions({tp: InitialFetchState(B1, 3, 10)})
    first = manager.get_fetcher(tp)
    manager.add_fetcher_for_partitions({tp: InitialFetchState(B1, 3, 10)})
    assert manager.get_fetcher(tp) is first  # same broker, same address: reused, state kept
    moved = BrokerEndPoint(1, "127.0.0.1", 9101)
    manager.add_fetcher_for_partitions({tp: InitialFetchState(moved, 4, 10)})
    second = manager.get_fetcher(tp)
    assert second is not first and second.source_broker == moved and second.is_alive()
    assert first.is_shutdown_complete


def test_removed_partitions_leave_idle_threads_to_be_stopped(manager) -> None:
    tps = partitions_with_fetcher_ids({0, 1}, count=1)
    manager.add_fetcher_for_partitions({tp: InitialFetchState(B1, 3, 10) for tp in tps})
    manager.failed_partitions.add(tps[0])
    threads = list(manager.fetcher_thread_map.values())
    removed = manager.remove_fetcher_for_partitions({tps[0]})
    assert set(removed) == {tps[0]} and removed[tps[0]].fetch_offset == 10
    assert not manager.failed_partitions.contains(tps[0])
    manager.shutdown_idle_fetcher_threads()
    assert list(manager.fetcher_thread_map) == [BrokerIdAndFetcherId(1, fetcher_id_for(tps[1], 2))]
    manager.close_all_fetchers()
    assert not manager.fetcher_thread_map
    assert all(t.is_shutdown_complete for t in threads)


def test_resizing_the_pool_places_every_partition_by_its_new_fetcher_id(manager) -> None:
    tps = [TopicPartition("t", p) for p in range(8)]
    manager.add_fetcher_for_partitions({tp: InitialFetchState(B1, 3, 10 + tp.partition) for tp in tps})
    manager.resize_thread_pool(3)
    assert {k.fetcher_id for k in manager.fetcher_thread_map} == {fetcher_id_for(tp, 3) for tp in tps}
    for tp in tps:
        assert manager.get_fetcher(tp) is manager.fetcher_thread_map[BrokerIdAndFetcherId(1, fetcher_id_for(tp, 3))]
        assert manager.get_fetcher(tp).fetch_state(tp).fetch_offset == 10 + tp.partition
