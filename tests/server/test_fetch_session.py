"""Fetch sessions on the broker (server/fetch_session.py) as Kafka 2.8.2's FetchSession.scala
keeps them: the cache's eviction rules (stale, privileged, by size), the four fetch contexts,
and a client's FetchSessionHandler (kafka_py/clients/fetch_session_handler.py) talking to a
FetchManager for many rounds, seeing what a sessionless client sees."""
from __future__ import annotations

import random
from collections import OrderedDict

import pytest

from kafka_py.clients.fetch_session_handler import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    FetchMetadata,
    FetchSessionHandler,
    next_epoch,
)
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.metrics.kafka_metrics_group import default_registry, explicit_metric_name
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import PartitionData
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.server.fetch_session import (
    CachedPartition,
    FetchManager,
    FetchSessionCache,
    FullFetchContext,
    IncrementalFetchContext,
    SessionErrorContext,
    SessionlessFetchContext,
)
from kafka_py.server.replica_manager_types import FetchPartitionData
from kafka_py.clients.common.utils.time import MockTime

FOO0, FOO1, BAR0 = TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 0)
SOME_RECORDS = b"x" * 70  # only the length matters to a session


def dummy_partitions(size: int) -> "OrderedDict[TopicPartition, CachedPartition]":
    return OrderedDict((TopicPartition("test", i), CachedPartition(TopicPartition("test", i), PartitionData(0, 0, 100)))
                       for i in range(size))


def assert_cache_contains(cache: FetchSessionCache, *session_ids: int) -> None:
    for session_id in session_ids:
        assert cache.get(session_id) is not None, f"session {session_id} is missing"
    assert cache.size == len(session_ids)


def answer(hw: int, log_start: int = 0, records: bytes = b"", error: Errors = Errors.NONE,
           diverging=None) -> FetchPartitionData:
    return FetchPartitionData(error, hw, log_start, MemoryRecords(records) if records else MemoryRecords.EMPTY,
                              diverging_epoch=diverging, last_stable_offset=hw)


# ---------------------------------------------------------------------------- the cache


def test_new_session_ids_are_positive_and_unused() -> None:
    cache = FetchSessionCache(3, 100)
    for _ in range(10_000):
        assert cache.new_session_id() > 0


def test_a_full_cache_evicts_stale_then_smaller_old_sessions_and_followers_evict_consumers() -> None:
    cache = FetchSessionCache(3, 100)
    id1 = cache.maybe_create_session(0, False, 10, lambda: dummy_partitions(10))
    id2 = cache.maybe_create_session(10, False, 20, lambda: dummy_partitions(20))
    id3 = cache.maybe_create_session(20, False, 30, lambda: dummy_partitions(30))
    # full, and nothing is stale or old enough to be evicted by a consumer
    assert cache.maybe_create_session(30, False, 40, lambda: dummy_partitions(40)) == INVALID_SESSION_ID
    assert cache.maybe_create_session(40, False, 5, lambda: dummy_partitions(5)) == INVALID_SESSION_ID
    assert_cache_contains(cache, id1, id2, id3)
    # id2 unused for more than 100 ms: stale, evicted by anyone
    cache.touch(cache.get(id1), 200)
    id4 = cache.maybe_create_session(210, False, 11, lambda: dummy_partitions(11))
    assert_cache_contains(cache, id1, id3, id4)
    cache.touch(cache.get(id1), 400)
    cache.touch(cache.get(id3), 390)
    cache.touch(cache.get(id4), 400)
    # nothing stale: the smallest session old enough (id1, 10 partitions) goes for a bigger one
    id5 = cache.maybe_create_session(410, False, 50, lambda: dummy_partitions(50))
    assert_cache_contains(cache, id3, id4, id5)
    # a smaller one evicts nothing
    assert cache.maybe_create_session(410, False, 5, lambda: dummy_partitions(5)) == INVALID_SESSION_ID
    # a follower's (privileged) session evicts the smallest consumer session, however young
    id6 = cache.maybe_create_session(410, True, 5, lambda: dummy_partitions(5))
    assert_cache_contains(cache, id3, id5, id6)
    assert cache.evictions_meter.count == 3


def test_a_young_privileged_session_is_not_evicted_by_anything_but_staleness() -> None:
    cache = FetchSessionCache(1, 100)
    follower = cache.maybe_create_session(0, True, 1, lambda: dummy_partitions(1))
    assert cache.maybe_create_session(10, True, 50, lambda: dummy_partitions(50)) == INVALID_SESSION_ID
    assert cache.maybe_create_session(10, False, 50, lambda: dummy_partitions(50)) == INVALID_SESSION_ID
    # older than eviction_ms and touched since: a bigger privileged session may evict it,
    cache.touch(cache.get(follower), 150)
    assert cache.maybe_create_session(160, False, 50, lambda: dummy_partitions(50)) == INVALID_SESSION_ID
    bigger = cache.maybe_create_session(160, True, 50, lambda: dummy_partitions(50))
    assert_cache_contains(cache, bigger)
    # and anything may evict a stale one
    consumer = cache.maybe_create_session(300, False, 1, lambda: dummy_partitions(1))
    assert_cache_contains(cache, consumer)


def test_the_cache_counts_partitions_as_sessions_are_resized_and_removed() -> None:
    cache = FetchSessionCache(2, 100)
    assert (cache.total_partitions, cache.size, cache.evictions_meter.count) == (0, 0, 0)
    id1 = cache.maybe_create_session(0, False, 2, lambda: dummy_partitions(2))
    id2 = cache.maybe_create_session(0, False, 4, lambda: dummy_partitions(4))
    assert_cache_contains(cache, id1, id2)
    assert cache.total_partitions == 6
    session1, session2 = cache.get(id1), cache.get(id2)
    cache.touch(session1, 200)
    cache.touch(session2, 200)
    id3 = cache.maybe_create_session(200, False, 5, lambda: dummy_partitions(5))
    assert_cache_contains(cache, id2, id3)
    assert (cache.total_partitions, cache.evictions_meter.count) == (9, 1)
    assert cache.remove_by_id(id3) is not None
    assert cache.remove_by_id(id3) is None
    assert_cache_contains(cache, id2)
    assert cache.total_partitions == 4
    session2.partition_map.popitem(last=False)
    assert (session2.size, session2.cached_size) == (3, 4)
    cache.touch(session2, session2.last_used_ms)
    assert cache.total_partitions == 3


def test_no_slots_no_sessions() -> None:
    cache = FetchSessionCache(0, 100)
    manager = FetchManager(MockTime(), cache)
    context = manager.new_context(INVALID_SESSION_ID, INITIAL_EPOCH, [(FOO0, PartitionData(0, 0, 100))], (), True)
    assert context.update_and_generate_response_data([(FOO0, answer(5))]).session_id == INVALID_SESSION_ID
    assert cache.size == 0


def test_the_cache_metrics_have_kafkas_names() -> None:
    cache = FetchSessionCache(5, 100)
    cache.maybe_create_session(0, False, 3, lambda: dummy_partitions(3))
    registry = default_registry()

    def metric(name: str):
        return registry.get(explicit_metric_name("kafka.server", "FetchSessionCache", name))

    assert metric("NumIncrementalFetchSessions").value() == 1
    assert metric("NumIncrementalFetchPartitionsCached").value() == 3
    assert metric("IncrementalFetchSessionEvictionsPerSec") is cache.evictions_meter


def test_session_order_skips_stale_entries_and_stays_small() -> None:
    cache = FetchSessionCache(10, 100)
    session_id = cache.maybe_create_session(0, False, 1, lambda: dummy_partitions(1))
    for now in range(1, 5_000):
        cache.touch(cache.get(session_id), now)
    assert len(cache._last_used._heap) < 200
    assert cache._last_used.first() == ((4_999, session_id), session_id)


# ---------------------------------------------------------------------------- contexts


@pytest.fixture
def manager() -> FetchManager:
    return FetchManager(MockTime(), FetchSessionCache(10, 1000))


def request_of(*partitions: tuple[TopicPartition, int]) -> list:
    return [(tp, PartitionData(offset, 0, 100, 1, None)) for tp, offset in partitions]


def test_sessionless_and_full_fetches(manager: FetchManager) -> None:
    request = request_of((FOO0, 0), (FOO1, 10))
    sessionless = manager.new_context(INVALID_SESSION_ID, FINAL_EPOCH, request, (), False)
    assert isinstance(sessionless, SessionlessFetchContext)
    assert sessionless.partitions() == request
    assert sessionless.get_fetch_offset(FOO1) == 10
    updates = [(FOO0, answer(5)), (FOO1, answer(12))]
    assert sessionless.update_and_generate_response_data(updates) == (Errors.NONE, INVALID_SESSION_ID, updates)
    assert manager.cache.size == 0

    full = manager.new_context(INVALID_SESSION_ID, INITIAL_EPOCH, request, (), False)
    assert isinstance(full, FullFetchContext)
    # sizing the answer creates nothing
    assert full.get_response_data(updates).session_id == INVALID_SESSION_ID
    assert manager.cache.size == 0
    error, session_id, partitions = full.update_and_generate_response_data(updates)
    assert (error, partitions) == (Errors.NONE, updates)
    session = manager.cache.get(session_id)
    assert session.epoch == 1 and not session.privileged
    assert [(tp, c.fetch_offset, c.high_watermark) for tp, c in session.partition_map.items()] == [
        (FOO0, 0, 5), (FOO1, 10, 12)]

    # a full fetch naming the session closes it (epoch 0 makes a new one, -1 none)
    again = manager.new_context(session_id, INITIAL_EPOCH, request, (), True)
    assert manager.cache.get(session_id) is None
    new_id = again.update_and_generate_response_data(updates).session_id
    assert manager.cache.get(new_id).privileged
    closing = manager.new_context(new_id, FINAL_EPOCH, request, (), True)
    assert isinstance(closing, SessionlessFetchContext) and manager.cache.size == 0


def test_unknown_session_and_wrong_epoch_are_kafkas_errors(manager: FetchManager) -> None:
    unknown = manager.new_context(1234, 1, request_of((FOO0, 0)), (), False)
    assert isinstance(unknown, SessionErrorContext) and unknown.partitions() == []
    assert unknown.update_and_generate_response_data([]) == (Errors.FETCH_SESSION_ID_NOT_FOUND, INVALID_SESSION_ID,
                                                             [])
    full = manager.new_context(INVALID_SESSION_ID, INITIAL_EPOCH, request_of((FOO0, 0)), (), False)
    session_id = full.update_and_generate_response_data([(FOO0, answer(5))]).session_id
    for epoch in (2, 7, -5):
        wrong = manager.new_context(session_id, epoch, [], (), False)
        assert wrong.update_and_generate_response_data([]).error is Errors.INVALID_FETCH_SESSION_EPOCH
    # the session itself is untouched by wrong requests
    assert manager.cache.get(session_id).epoch == 1
    assert isinstance(manager.new_context(session_id, 1, [], (), False), IncrementalFetchContext)


def test_incremental_fetches_answer_only_what_changed(manager: FetchManager) -> None:
    full = manager.new_context(INVALID_SESSION_ID, INITIAL_EPOCH, request_of((FOO0, 0), (FOO1, 10), (BAR0, 20)),
                               (), False)
    session_id = full.update_and_generate_response_data(
        [(FOO0, answer(5)), (FOO1, answer(10)), (BAR0, answer(20))]).session_id

    # nothing sent: every partition implied, read at its cached offset
    context = manager.new_context(session_id, 1, [], (), False)
    assert [(tp, d.fetch_offset) for tp, d in context.partitions()] == [(FOO0, 0), (FOO1, 10), (BAR0, 20)]
    updates = [(FOO0, answer(5, records=SOME_RECORDS)), (FOO1, answer(11)), (BAR0, answer(20))]
    # sizing changes nothing: asked twice, the same answer
    assert context.get_response_data(updates) == context.get_response_data(updates)
    error, same_id, partitions = context.update_and_generate_response_data(updates)
    assert (error, same_id) == (Errors.NONE, session_id)
    # records on foo-0, a new high watermark on foo-1; bar-0 has nothing new
    assert [tp for tp, _ in partitions] == [FOO0, FOO1]
    # answered partitions move to the end of the session: bar-0 is read first next time
    assert list(manager.cache.get(session_id).partition_map) == [BAR0, FOO0, FOO1]

    # foo-0 moves on, bar-0 is forgotten; an error, a log start offset and a diverging epoch always go out
    context = manager.new_context(session_id, 2, request_of((FOO0, 3)), [BAR0], False)
    assert [(tp, d.fetch_offset) for tp, d in context.partitions()] == [(FOO0, 3), (FOO1, 10)]
    assert context.get_fetch_offset(FOO0) == 3 and context.get_fetch_offset(BAR0) is None
    error, _, partitions = context.update_and_generate_response_data(
        [(FOO0, answer(5, error=Errors.NOT_LEADER_OR_FOLLOWER)), (FOO1, answer(11))])
    assert [tp for tp, _ in partitions] == [FOO0]
    context = manager.new_context(session_id, 3, [], (), False)
    _, _, partitions = context.update_and_generate_response_data([(FOO0, answer(5)), (FOO1, answer(11, 4))])
    # foo-0's error went away: its high watermark goes out again even though it did not change
    assert [tp for tp, _ in partitions] == [FOO0, FOO1]
    context = manager.new_context(session_id, 4, [], (), False)
    _, _, partitions = context.update_and_generate_response_data(
        [(FOO0, answer(5)), (FOO1, answer(11, 4, diverging=object()))])
    assert [tp for tp, _ in partitions] == [FOO1]

    # forgetting every partition closes the session
    context = manager.new_context(session_id, 5, [], [FOO0, FOO1], False)
    assert isinstance(context, SessionlessFetchContext)
    assert manager.cache.get(session_id) is None


def test_a_request_that_lost_the_race_for_its_session_gets_invalid_epoch(manager: FetchManager) -> None:
    full = manager.new_context(INVALID_SESSION_ID, INITIAL_EPOCH, request_of((FOO0, 0)), (), False)
    session_id = full.update_and_generate_response_data([(FOO0, answer(5))]).session_id
    first = manager.new_context(session_id, 1, [], (), False)
    second = manager.new_context(session_id, 2, [], (), False)  # sent before the first was answered
    assert first.update_and_generate_response_data([(FOO0, answer(6))]) == (
        Errors.INVALID_FETCH_SESSION_EPOCH, session_id, [])
    assert first.get_throttled_response(100).error is Errors.INVALID_FETCH_SESSION_EPOCH
    assert second.get_throttled_response(100) == (Errors.NONE, session_id, [])
    assert second.update_and_generate_response_data([(FOO0, answer(6))]).partitions == [(FOO0, answer(6))]


def test_cached_request_data_follows_the_requests(manager: FetchManager) -> None:
    request = [(FOO0, PartitionData(0, 0, 100, None, None)), (FOO1, PartitionData(10, 0, 100, 1, 1))]
    full = manager.new_context(INVALID_SESSION_ID, INITIAL_EPOCH, request, (), False)
    session_id = full.update_and_generate_response_data([(FOO0, answer(0)), (FOO1, answer(10))]).session_id
    assert manager.new_context(session_id, 1, [], (), False).partitions() == request
    changed = [(FOO0, PartitionData(0, 0, 100, 6, 5)), (FOO1, PartitionData(10, 0, 100, None, None))]
    assert manager.new_context(session_id, 2, changed, (), False).partitions() == changed


def test_sessions_holding_a_partition_that_left_are_closed(manager: FetchManager) -> None:
    def session_of(*tps: TopicPartition, follower: bool = False) -> int:
        full = manager.new_context(INVALID_SESSION_ID, INITIAL_EPOCH, request_of(*((tp, 0) for tp in tps)), (),
                                   follower)
        return full.update_and_generate_response_data([(tp, answer(5)) for tp in tps]).session_id

    consumer, follower, other = session_of(FOO0, FOO1), session_of(FOO1, BAR0, follower=True), session_of(BAR0)
    in_flight = manager.new_context(follower, 1, [], (), True)
    assert manager.cache.total_partitions == 5

    assert manager.cache.remove_sessions_of([]) == 0
    assert manager.cache.remove_sessions_of({FOO1, TopicPartition("gone", 0)}) == 2
    assert_cache_contains(manager.cache, other)
    assert manager.cache.total_partitions == 1
    # a fetch already under way is answered; the next one starts over with a full fetch
    assert in_flight.update_and_generate_response_data([(FOO1, answer(6)), (BAR0, answer(5))]).partitions == [
        (FOO1, answer(6))]
    for session_id, epoch in ((consumer, 1), (follower, 2)):
        context = manager.new_context(session_id, epoch, [], (), False)
        assert context.update_and_generate_response_data([]).error is Errors.FETCH_SESSION_ID_NOT_FOUND
    assert manager.cache.size == 1 and manager.cache.get(other).epoch == 1


def test_a_full_fetch_naming_a_partition_not_hosted_makes_no_session() -> None:
    hosted = {FOO0, FOO1}
    cache = FetchSessionCache(10, 1000, is_hosted=hosted.__contains__)
    manager = FetchManager(MockTime(), cache)

    def full(*tps: TopicPartition) -> FullFetchContext:
        return manager.new_context(INVALID_SESSION_ID, INITIAL_EPOCH, request_of(*((tp, 0) for tp in tps)), (), False)

    # a client with stale metadata: answered in full, without a session
    updates = [(FOO0, answer(5)), (BAR0, answer(-1, error=Errors.NOT_LEADER_OR_FOLLOWER))]
    assert full(FOO0, BAR0).update_and_generate_response_data(updates) == (Errors.NONE, INVALID_SESSION_ID, updates)
    # a partition that leaves while the fetch is read: the session is not made...
    context = full(FOO0, FOO1)
    hosted.discard(FOO1)
    cache.remove_sessions_of([FOO1])
    assert context.update_and_generate_response_data([(FOO0, answer(5)), (FOO1, answer(5))]).session_id == 0
    # ...and one made before it left is closed when it leaves
    session_id = full(FOO0).update_and_generate_response_data([(FOO0, answer(5))]).session_id
    assert cache.get(session_id) is not None
    hosted.discard(FOO0)
    cache.remove_sessions_of([FOO0])
    assert cache.size == 0


# ---------------------------------------------------------------------------- the client side


def test_handler_builds_full_then_incremental_fetches() -> None:
    handler = FetchSessionHandler(1)
    builder = handler.new_builder()
    builder.add(FOO0, PartitionData(0, 0, 100))
    builder.add(FOO1, PartitionData(10, 0, 100))
    data = builder.build()
    assert data.metadata == FetchMetadata.INITIAL and list(data.to_send) == [FOO0, FOO1] and data.to_forget == []
    assert handler.handle_response(Errors.NONE, 123, 0, [FOO0, FOO1])
    assert handler.next_metadata == FetchMetadata(123, 1)

    builder = handler.new_builder()
    builder.add(BAR0, PartitionData(5, 0, 100))  # added
    builder.add(FOO0, PartitionData(0, 0, 100))  # unchanged
    data = builder.build()  # foo-1 is no longer wanted
    assert (list(data.to_send), data.to_forget, list(data.session_partitions)) == ([BAR0], [FOO1], [FOO0, BAR0])
    assert data.metadata == FetchMetadata(123, 1)
    # an incremental answer may leave partitions out, never add others
    assert handler.handle_response(Errors.NONE, 123, 0, [BAR0])
    assert handler.next_metadata == FetchMetadata(123, 2)

    builder = handler.new_builder()
    builder.add(FOO0, PartitionData(7, 0, 100))  # altered
    builder.add(BAR0, PartitionData(5, 0, 100))
    data = builder.build()
    assert (list(data.to_send), data.to_forget) == ([FOO0], [])
    assert not handler.handle_response(Errors.NONE, 123, 0, [FOO1])
    assert handler.next_metadata == FetchMetadata(123, INITIAL_EPOCH)


def test_handler_starts_over_after_errors() -> None:
    handler = FetchSessionHandler(1)
    builder = handler.new_builder()
    builder.add(FOO0, PartitionData(0, 0, 100))
    builder.build()
    # a full answer must hold every partition
    assert not handler.handle_response(Errors.NONE, 5, 0, [])
    assert handler.next_metadata == FetchMetadata.INITIAL
    builder = handler.new_builder()
    builder.add(FOO0, PartitionData(0, 0, 100))
    builder.build()
    assert handler.handle_response(Errors.NONE, 5, 0, [FOO0])
    handler.new_builder().build()
    assert not handler.handle_response(Errors.INVALID_FETCH_SESSION_EPOCH, 5, 0, [])
    assert handler.next_metadata == FetchMetadata(5, INITIAL_EPOCH)
    assert not handler.handle_response(Errors.FETCH_SESSION_ID_NOT_FOUND, 0, 0, [])
    assert handler.next_metadata == FetchMetadata.INITIAL
    handler.next_metadata = FetchMetadata(5, 3)
    handler.handle_error(ConnectionError("gone"))
    assert handler.next_metadata == FetchMetadata(5, INITIAL_EPOCH)
    # a full answer without a session: full fetches from then on
    builder = handler.new_builder()
    builder.add(FOO0, PartitionData(0, 0, 100))
    assert builder.build().metadata == FetchMetadata(5, INITIAL_EPOCH)
    assert handler.handle_response(Errors.NONE, INVALID_SESSION_ID, 0, [FOO0])
    assert handler.next_metadata == FetchMetadata.INITIAL


def test_epochs_wrap_to_one_and_final_stays_final() -> None:
    assert next_epoch(INITIAL_EPOCH) == 1
    assert next_epoch(2**31 - 1) == 1
    assert next_epoch(FINAL_EPOCH) == FINAL_EPOCH


def test_a_session_client_sees_what_a_sessionless_client_sees() -> None:
    """Many rounds of a client with a session against a broker whose partitions change at
    random (records, high watermarks, log start offsets, errors), the client moving its fetch
    offsets and changing its partition set; after each answer, what the client knows of each
    partition equals what a sessionless fetch would have told it. Evictions (a one-slot
    cache, a rival session) and lost answers happen along the way."""
    rng = random.Random(20261125)
    time = MockTime()
    cache = FetchSessionCache(1, 1000)
    manager = FetchManager(time, cache)
    partitions = [TopicPartition(t, p) for t in ("a", "b") for p in range(4)]
    log_end = {tp: 0 for tp in partitions}
    log_start = {tp: 0 for tp in partitions}
    failing: set[TopicPartition] = set()
    handler = FetchSessionHandler(0)
    wanted = set(partitions[:5])
    position = {tp: 0 for tp in partitions}
    known_hw: dict[TopicPartition, int] = {}
    known_log_start: dict[TopicPartition, int] = {}
    errors_seen = 0
    answers_leaving_partitions_out = 0
    for round_ in range(600):
        time.advance(rng.choice((1, 1, 1, 400, 1500)))
        for tp in partitions:
            if rng.random() < 0.3:
                log_end[tp] += rng.randrange(1, 4)
            if rng.random() < 0.05:
                log_start[tp] = min(log_end[tp], log_start[tp] + 1)
        failing = {tp for tp in partitions if rng.random() < 0.05}
        if rng.random() < 0.1:
            wanted ^= {rng.choice(partitions)}
        if rng.random() < 0.05:
            # a rival client's session takes the only slot when ours is evictable
            rival = manager.new_context(INVALID_SESSION_ID, INITIAL_EPOCH, request_of(*[(tp, 0) for tp in partitions]),
                                        (), True)
            rival.update_and_generate_response_data([(tp, answer(0)) for tp in partitions])

        builder = handler.new_builder()
        for tp in sorted(wanted):
            builder.add(tp, PartitionData(max(position[tp], log_start[tp]), 0, 100, 1, None))
        data = builder.build()
        forgotten = data.to_forget
        context = manager.new_context(data.metadata.session_id, data.metadata.epoch, list(data.to_send.items()),
                                      forgotten, False)
        updates = []
        for tp, req in context.partitions():
            if tp in failing:
                updates.append((tp, answer(-1, -1, error=Errors.NOT_LEADER_OR_FOLLOWER)))
            else:
                records = SOME_RECORDS if req.fetch_offset < log_end[tp] else b""
                updates.append((tp, answer(log_end[tp], log_start[tp], records)))
        response = context.update_and_generate_response_data(updates)
        if rng.random() < 0.03:
            handler.handle_error(TimeoutError("the answer was lost"))
            continue
        if not handler.handle_response(response.error, response.session_id, 0, [tp for tp, _ in response.partitions]):
            errors_seen += 1
            assert response.error in (Errors.NONE, Errors.FETCH_SESSION_ID_NOT_FOUND)
            continue
        answers_leaving_partitions_out += len(response.partitions) < len(data.session_partitions)
        for tp, resp in response.partitions:
            if resp.error is Errors.NONE:
                known_hw[tp] = resp.high_watermark
                known_log_start[tp] = resp.log_start_offset
                if len(resp.records):
                    position[tp] = log_end[tp]
            else:
                known_hw.pop(tp, None)
        # what a sessionless fetch of the same partitions says now
        for tp in data.session_partitions:
            if tp in failing:
                assert tp not in known_hw, (round_, tp)
            else:
                assert known_hw.get(tp) == log_end[tp], (round_, tp)
                assert known_log_start.get(tp) == log_start[tp], (round_, tp)
                assert position[tp] == log_end[tp], (round_, tp)
    # sessions were made, lost to the rival or to errors, and made again
    assert cache.evictions_meter.count > 0
    assert errors_seen > 0
    assert answers_leaving_partitions_out > 100
