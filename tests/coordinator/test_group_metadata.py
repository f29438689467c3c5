"""GroupMetadata and MemberMetadata on their own: the state machine's legal transitions,
protocol selection, members, static members and the offset cache with its expiry rules
(after Kafka's GroupMetadataTest and MemberMetadataTest)."""
from __future__ import annotations

import itertools

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.group.group_metadata import (
    CommitRecordMetadataAndOffset,
    CompletingRebalance,
    Dead,
    Empty,
    GroupMetadata,
    GroupState,
    PreparingRebalance,
    Stable,
    consumer_subscription_topics,
)
from kafka_py.core.coordinator.group.member_metadata import MemberMetadata
from kafka_py.core.coordinator.group.offset_and_metadata import OffsetAndMetadata
from kafka_py.clients.common.utils.time import MockTime
from tests.coordinator.coordinator_harness import subscription

TP = TopicPartition("t", 0)
TP1 = TopicPartition("t", 1)
OTHER = TopicPartition("other", 0)


@pytest.fixture
def time() -> MockTime:
    return MockTime(current_time_ms=1_000_000)


@pytest.fixture
def group(time) -> GroupMetadata:
    return GroupMetadata("g", Empty, time)


def member(member_id: str, protocols=None, instance: str | None = None, protocol_type: str = "consumer",
           rebalance_timeout: int = 30_000) -> MemberMetadata:
    return MemberMetadata(member_id, instance, "client", "/host", rebalance_timeout, 10_000, protocol_type,
                          protocols if protocols is not None else [("range", subscription("t"))])


# ---------------------------------------------------------------------------- state machine

ALLOWED = {
    (Empty, PreparingRebalance), (Stable, PreparingRebalance), (CompletingRebalance, PreparingRebalance),
    (PreparingRebalance, CompletingRebalance), (PreparingRebalance, Empty), (CompletingRebalance, Stable),
    (Empty, Dead), (Stable, Dead), (PreparingRebalance, Dead), (CompletingRebalance, Dead), (Dead, Dead),
}


def _put_in(group: GroupMetadata, state: GroupState) -> None:
    path = {Empty: [], PreparingRebalance: [PreparingRebalance],
            CompletingRebalance: [PreparingRebalance, CompletingRebalance],
            Stable: [PreparingRebalance, CompletingRebalance, Stable], Dead: [Dead]}[state]
    for s in path:
        group.transition_to(s)


@pytest.mark.parametrize("source, target", list(itertools.product(list(GroupState), repeat=2)))
def test_only_kafkas_transitions_are_allowed(time, source, target) -> None:
    group = GroupMetadata("g", Empty, time)
    _put_in(group, source)
    if (source, target) in ALLOWED:
        time.sleep(5)
        group.transition_to(target)
        assert group.is_(target) and group.current_state_timestamp == time.milliseconds()
    else:
        with pytest.raises(RuntimeError, match="should be in the"):
            group.transition_to(target)
        assert group.is_(source)


def test_state_names_are_kafkas() -> None:
    assert [str(s) for s in GroupState] == ["PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty"]


def test_can_rebalance_only_from_stable_completing_or_empty(time) -> None:
    for state in GroupState:
        group = GroupMetadata("g", Empty, time)
        _put_in(group, state)
        assert group.can_rebalance == (state in (Stable, CompletingRebalance, Empty))


# ---------------------------------------------------------------------------- protocols


def test_select_protocol_by_votes_among_protocols_all_members_support(group) -> None:
    group.add(member("m1", [("range", b""), ("roundrobin", b"")]))
    assert group.select_protocol() == "range"
    group.add(member("m2", [("roundrobin", b""), ("range", b"")]))
    group.add(member("m3", [("roundrobin", b""), ("range", b"")]))
    assert group.select_protocol() == "roundrobin"
    # a member that only knows range makes it the only candidate
    group.add(member("m4", [("range", b""), ("sticky", b"")]))
    assert group.select_protocol() == "range"


def test_select_protocol_of_an_empty_group_fails(group) -> None:
    with pytest.raises(RuntimeError):
        group.select_protocol()


def test_supports_protocols(group) -> None:
    # an empty group takes any non-empty protocol type with at least one protocol
    assert group.supports_protocols("consumer", {"range"})
    assert not group.supports_protocols("", {"range"})
    assert not group.supports_protocols("consumer", set())
    group.add(member("m1", [("range", b""), ("roundrobin", b"")]))
    group.transition_to(PreparingRebalance)
    assert group.supports_protocols("consumer", {"roundrobin", "sticky"})
    assert not group.supports_protocols("consumer", {"sticky"})
    assert not group.supports_protocols("connect", {"range"})


def test_member_matches_and_votes() -> None:
    m = member("m1", [("range", b"a"), ("roundrobin", b"b")])
    assert m.matches([("range", b"a"), ("roundrobin", b"b")])
    assert not m.matches([("roundrobin", b"b"), ("range", b"a")])
    assert not m.matches([("range", b"x"), ("roundrobin", b"b")])
    assert not m.matches([("range", b"a")])
    assert m.vote({"roundrobin", "sticky"}) == "roundrobin"
    with pytest.raises(ValueError):
        m.vote({"sticky"})
    assert m.metadata("roundrobin") == b"b"
    with pytest.raises(ValueError):
        m.metadata("sticky")


def test_heartbeat_satisfaction_rules() -> None:
    m = member("m1")
    assert not m.has_satisfied_heartbeat
    m.awaiting_join_callback = lambda r: None
    assert m.has_satisfied_heartbeat  # parked requests keep a member alive...
    m.is_new = True
    assert not m.has_satisfied_heartbeat  # ...but not a new member stuck in its first join
    m.heartbeat_satisfied = True
    assert m.has_satisfied_heartbeat


# ---------------------------------------------------------------------------- members


def test_first_member_sets_protocol_type_and_leader(group) -> None:
    group.add(member("m1"))
    group.add(member("m2"))
    assert group.protocol_type == "consumer" and group.is_leader("m1") and group.size == 2
    group.remove("m1")
    assert group.is_leader("m2")
    group.remove("m2")
    assert group.leader_or_null is None


def test_awaiting_join_counts_and_all_joined(group) -> None:
    calls = []
    group.add(member("m1"), calls.append)
    group.add(member("m2"))
    assert group.num_awaiting == 1 and not group.has_all_members_joined
    group.update_member(group.get("m2"), [("range", b"")], calls.append)
    assert group.num_awaiting == 2 and group.has_all_members_joined
    group.add_pending_member("p1")
    assert not group.has_all_members_joined and group.is_pending_member("p1")
    group.remove_pending_member("p1")
    group.maybe_invoke_join_callback(group.get("m1"), "answer")
    assert calls == ["answer"] and group.num_awaiting == 1
    group.maybe_invoke_join_callback(group.get("m1"), "again")
    assert calls == ["answer"]  # answered once only


def test_new_leader_is_elected_among_rejoined_members(group) -> None:
    group.add(member("m1"))
    group.add(member("m2"), lambda r: None)
    assert group.is_leader("m1")
    assert group.maybe_elect_new_joined_leader() and group.is_leader("m2")
    lonely = GroupMetadata("h", Empty, group.time)
    lonely.add(member("x"))
    assert not lonely.maybe_elect_new_joined_leader() and lonely.is_leader("x")


def test_static_member_replacement_fences_the_old_instance(group) -> None:
    answers = []
    old = member("old", instance="i1")
    group.add(old, answers.append)
    group.add_static_member("i1", "old")
    replaced = group.replace_group_instance("old", "new", "i1")
    assert replaced is old and old.member_id == "new"
    assert group.has("new") and not group.has("old") and group.is_leader("new")
    assert group.get_static_member_id("i1") == "new"
    (fenced,) = answers
    assert fenced.error.name == "FENCED_INSTANCE_ID" and fenced.member_id == "old"
    assert group.is_static_member_fenced("old", "i1", "test")
    assert not group.is_static_member_fenced("new", "i1", "test")
    assert not group.is_static_member_fenced("anything", None, "test")
    group.remove("new")
    assert not group.has_static_member("i1")


def test_generated_member_ids_start_with_client_or_instance_id(group) -> None:
    assert group.generate_member_id("client-a", None).startswith("client-a-")
    assert group.generate_member_id("client-a", "inst").startswith("inst-")
    assert group.generate_member_id("c", None) != group.generate_member_id("c", None)


def test_init_next_generation(group, time) -> None:
    group.add(member("m1", [("range", subscription("t", "u"))]))
    group.transition_to(PreparingRebalance)
    group.init_next_generation()
    assert group.generation_id == 1 and group.is_(CompletingRebalance) and group.protocol_name == "range"
    assert group.subscribed_topics == {"t", "u"} and group.is_subscribed_to_topic("u")
    assert not group.is_subscribed_to_topic("v")
    group.remove("m1")
    group.transition_to(PreparingRebalance)
    group.init_next_generation()
    assert group.generation_id == 2 and group.is_(Empty) and group.protocol_name is None
    assert group.subscribed_topics == frozenset()


def test_unparsable_subscriptions_leave_topics_unknown(group) -> None:
    group.add(member("m1", [("range", b"\x00")]))
    group.transition_to(PreparingRebalance)
    group.init_next_generation()
    assert group.subscribed_topics is None and group.is_subscribed_to_topic("anything")


def test_consumer_subscription_topics_reads_v0_prefix_of_any_version() -> None:
    assert consumer_subscription_topics(subscription("a", "b")) == {"a", "b"}
    # a v1 subscription carries owned partitions after the v0 fields
    v1 = b"\x00\x01" + subscription("a")[2:] + b"\x00\x00\x00\x00"
    assert consumer_subscription_topics(v1) == {"a"}
    with pytest.raises(ValueError):
        consumer_subscription_topics(b"\x00\x00\x00\x00\x00\x05\x00")


def test_summary_only_shows_metadata_when_stable(group) -> None:
    group.add(member("m1"), lambda r: None)
    group.transition_to(PreparingRebalance)
    summary = group.summary()
    assert summary.state == "PreparingRebalance" and summary.protocol == ""
    assert summary.members[0].metadata == b""
    group.init_next_generation()
    group.transition_to(Stable)
    summary = group.summary()
    assert summary.state == "Stable" and summary.protocol == "range"
    assert summary.members[0].metadata == subscription("t")
    assert group.overview().state == "Stable" and group.overview().protocol_type == "consumer"


# ---------------------------------------------------------------------------- offsets


def commit(offset: int, timestamp: int = 0, expire: int | None = None) -> OffsetAndMetadata:
    return OffsetAndMetadata(offset, None, "", timestamp, expire)


def test_offset_commit_becomes_visible_on_append(group) -> None:
    group.prepare_offset_commit({TP: commit(37)})
    assert group.offset(TP) is None and group.has_offsets
    assert group.has_pending_offset_commits_for_topic_partition(TP)
    group.on_offset_commit_append(TP, CommitRecordMetadataAndOffset(10, commit(37)))
    assert group.offset(TP).offset == 37
    assert not group.has_pending_offset_commits_for_topic_partition(TP)


def test_failed_offset_write_leaves_the_previous_offset(group) -> None:
    group.prepare_offset_commit({TP: commit(37)})
    group.on_offset_commit_append(TP, CommitRecordMetadataAndOffset(10, commit(37)))
    group.prepare_offset_commit({TP: commit(59)})
    group.fail_pending_offset_write(TP, commit(59))
    assert group.offset(TP).offset == 37 and not group.has_pending_offset_commits_for_topic_partition(TP)


def test_older_commit_record_does_not_replace_a_newer_one(group) -> None:
    group.prepare_offset_commit({TP: commit(1)})
    group.prepare_offset_commit({TP: commit(2)})
    group.on_offset_commit_append(TP, CommitRecordMetadataAndOffset(20, commit(2)))
    group.on_offset_commit_append(TP, CommitRecordMetadataAndOffset(10, commit(1)))
    assert group.offset(TP).offset == 2


def test_transactional_commit_is_visible_only_after_commit_marker(group) -> None:
    group.prepare_txn_offset_commit(7, {TP: commit(5)})
    group.on_txn_offset_commit_append(7, TP, CommitRecordMetadataAndOffset(3, commit(5)))
    assert group.offset(TP) is None and group.has_pending_offset_commits_from_producer(7)
    group.complete_pending_txn_offset_commit(7, is_commit=True)
    assert group.offset(TP).offset == 5 and not group.has_pending_offset_commits_from_producer(7)
    group.prepare_txn_offset_commit(8, {TP1: commit(9)})
    group.complete_pending_txn_offset_commit(8, is_commit=False)
    assert group.offset(TP1) is None


def test_remove_offsets(group) -> None:
    group.initialize_offsets({TP: CommitRecordMetadataAndOffset(1, commit(1)),
                              TP1: CommitRecordMetadataAndOffset(2, commit(2))}, {})
    assert group.remove_offsets([TP, OTHER]) == {TP: commit(1)}
    assert group.all_offsets == {TP1: commit(2)}
    assert group.remove_all_offsets() == {TP1: commit(2)} and not group.has_offsets


def test_empty_group_offsets_expire_retention_after_it_became_empty(group, time) -> None:
    group.protocol_type = "consumer"
    group.initialize_offsets({TP: CommitRecordMetadataAndOffset(1, commit(1, timestamp=0))}, {})
    became_empty = group.current_state_timestamp
    # long after the commit but not long enough after the group emptied: kept
    assert group.remove_expired_offsets(became_empty + 999, 1000) == {}
    assert group.remove_expired_offsets(became_empty + 1000, 1000) == {TP: commit(1)}
    assert group.num_offsets == 0


def test_simple_consumer_offsets_expire_retention_after_their_commit(group) -> None:
    group.initialize_offsets({TP: CommitRecordMetadataAndOffset(1, commit(1, timestamp=500)),
                              TP1: CommitRecordMetadataAndOffset(2, commit(2, timestamp=900))}, {})
    assert group.protocol_type is None
    assert group.remove_expired_offsets(1499, 1000) == {}
    assert group.remove_expired_offsets(1500, 1000) == {TP: commit(1, timestamp=500)}
    assert group.all_offsets == {TP1: commit(2, timestamp=900)}


def test_explicit_expire_timestamp_wins(group) -> None:
    group.initialize_offsets({TP: CommitRecordMetadataAndOffset(1, commit(1, timestamp=0, expire=100))}, {})
    assert group.remove_expired_offsets(99, 10**9) == {}
    assert set(group.remove_expired_offsets(100, 10**9)) == {TP}


def test_stable_consumer_group_keeps_offsets_of_subscribed_topics(group, time) -> None:
    group.add(member("m1", [("range", subscription("t"))]))
    group.transition_to(PreparingRebalance)
    group.init_next_generation()
    group.transition_to(Stable)
    group.initialize_offsets({TP: CommitRecordMetadataAndOffset(1, commit(1)),
                              OTHER: CommitRecordMetadataAndOffset(2, commit(2))}, {})
    assert group.remove_expired_offsets(10_000, 1000) == {OTHER: commit(2)}
    assert set(group.all_offsets) == {TP}


def test_rebalancing_group_and_pending_commits_never_expire(group) -> None:
    group.add(member("m1"))
    group.transition_to(PreparingRebalance)
    group.initialize_offsets({TP: CommitRecordMetadataAndOffset(1, commit(1))}, {})
    assert group.remove_expired_offsets(10**9, 1) == {}
    simple = GroupMetadata("s", Empty, group.time)
    simple.initialize_offsets({TP: CommitRecordMetadataAndOffset(1, commit(1))}, {})
    simple.prepare_offset_commit({TP: commit(2)})
    assert simple.remove_expired_offsets(10**9, 1) == {}
