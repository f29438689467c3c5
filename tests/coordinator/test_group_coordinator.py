"""GroupCoordinator over real logs (tests/coordinator/coordinator_harness.py): the join/sync/
heartbeat protocol with Kafka's error codes, rebalances on join, leave and session expiry,
static membership, offsets of group members and of simple consumers, and the group state
surviving a resignation/election and a whole new coordinator on the same log."""
from __future__ import annotations

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.group.group_coordinator import MemberIdentity
from kafka_py.core.coordinator.group.group_metadata import CompletingRebalance, PreparingRebalance, Stable
from kafka_py.core.coordinator.group.group_metadata_manager import (
    GroupMetadataKey,
    read_group_message_value,
    read_message_key,
)
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.memory_records import MemoryRecords
from tests.coordinator.coordinator_harness import (
    DEFAULT_REBALANCE_TIMEOUT_MS,
    DEFAULT_SESSION_TIMEOUT_MS,
    PROTOCOL_TYPE,
    assignment,
    subscription,
)

G = "group"
TP0 = TopicPartition("t", 0)
TP1 = TopicPartition("t", 1)


def log_records(harness, group_id: str = G) -> list[tuple[object, bytes | None]]:
    """(parsed key, value) of every record in the group's __consumer_offsets partition."""
    log = harness.offsets_log(group_id)
    data = log.read(log.log_start_offset, 1 << 24).records
    records = MemoryRecords(data.read_bytes(0, data.size_in_bytes()))
    return [(read_message_key(r.key), r.value) for b in records.batches() for r in b]


# ---------------------------------------------------------------------------- joining


def test_member_id_required_then_join_sync_and_stable(harness) -> None:
    first = harness.join(G, require_known_member_id=True).value
    assert first.error is Errors.MEMBER_ID_REQUIRED and first.member_id.startswith("client-")
    assert harness.coordinator.group_manager.get_group(G).is_pending_member(first.member_id)

    joined = harness.join(G, first.member_id, require_known_member_id=True).value
    assert joined.error is Errors.NONE and joined.member_id == first.member_id
    assert joined.generation_id == 1 and joined.leader_id == first.member_id
    assert joined.protocol_type == PROTOCOL_TYPE and joined.protocol_name == "range"
    assert [(m.member_id, m.metadata) for m in joined.members] == [(first.member_id, subscription("t"))]
    assert harness.state(G) == "CompletingRebalance"

    synced = harness.sync(G, 1, joined.member_id, {joined.member_id: assignment({"t": [0, 1]})},
                          protocol_type=PROTOCOL_TYPE, protocol_name="range").value
    assert synced.error is Errors.NONE and synced.member_assignment == assignment({"t": [0, 1]})
    assert (synced.protocol_type, synced.protocol_name) == (PROTOCOL_TYPE, "range")
    assert harness.state(G) == "Stable"
    assert harness.heartbeat(G, joined.member_id, 1) is Errors.NONE


def test_group_record_is_written_on_sync(harness) -> None:
    member_id, generation = harness.join_and_sync_single(G)
    [(key, value)] = log_records(harness)
    assert isinstance(key, GroupMetadataKey) and key.key == G
    stored = read_group_message_value(G, value, harness.time)
    assert stored.generation_id == generation and stored.get(member_id).assignment == assignment({"t": [0]})


@pytest.mark.parametrize("session_timeout_ms", [5999, 1_800_001])
def test_session_timeout_outside_the_brokers_bounds(harness, session_timeout_ms) -> None:
    result = harness.join(G, session_timeout_ms=session_timeout_ms).value
    assert result.error is Errors.INVALID_SESSION_TIMEOUT
    assert harness.coordinator.group_manager.get_group(G) is None


def test_join_with_a_member_id_for_an_unknown_group(harness) -> None:
    assert harness.join(G, "ghost").value.error is Errors.UNKNOWN_MEMBER_ID


def test_empty_group_id_is_invalid_for_membership_apis(harness) -> None:
    assert harness.join("").value.error is Errors.INVALID_GROUP_ID
    assert harness.heartbeat("", "m", 1) is Errors.INVALID_GROUP_ID
    # offsets of the empty group id are allowed (old clients)
    assert harness.commit("", {TP0: 1}) == {TP0: Errors.NONE}


@pytest.mark.parametrize("protocol_type, protocols", [
    ("", [("range", b"")]),       # no protocol type
    (PROTOCOL_TYPE, []),          # no protocols
])
def test_first_member_needs_a_protocol_type_and_protocols(harness, protocol_type, protocols) -> None:
    result = harness.join(G, protocols=protocols, protocol_type=protocol_type).value
    assert result.error is Errors.INCONSISTENT_GROUP_PROTOCOL and result.member_id == ""


def test_later_members_must_share_protocol_type_and_a_protocol(harness) -> None:
    harness.join_and_sync_single(G)
    assert harness.join(G, protocol_type="connect").value.error is Errors.INCONSISTENT_GROUP_PROTOCOL
    assert harness.join(G, protocols=[("roundrobin", b"")]).value.error is Errors.INCONSISTENT_GROUP_PROTOCOL
    # the group itself is untouched
    assert harness.state(G) == "Stable"


def test_group_max_size(make_harness) -> None:
    harness = make_harness(group_max_size="1")
    harness.join_and_sync_single(G)
    result = harness.join(G).value
    assert result.error is Errors.GROUP_MAX_SIZE_REACHED and result.member_id == ""
    assert harness.coordinator.group_manager.get_group(G).size == 1


# ---------------------------------------------------------------------------- coordinator ownership


def _group_on_partition(harness, partition: int) -> str:
    return next(g for g in (f"group-{i}" for i in range(1000)) if harness.partition_of(g) == partition)


def test_not_coordinator_for_groups_of_partitions_led_elsewhere(make_harness) -> None:
    harness = make_harness(num_partitions=2, lead=False)
    harness.lead(0)
    foreign = _group_on_partition(harness, 1)
    assert harness.join(foreign).value.error is Errors.NOT_COORDINATOR
    assert harness.heartbeat(foreign, "m", 1) is Errors.NOT_COORDINATOR
    assert harness.commit(foreign, {TP0: 3}) == {TP0: Errors.NOT_COORDINATOR}
    error, _ = harness.coordinator.handle_fetch_offsets(foreign, False, [TP0])
    assert error is Errors.NOT_COORDINATOR
    local = _group_on_partition(harness, 0)
    assert harness.join(local).value.error is Errors.NONE


def test_load_in_progress(make_harness) -> None:
    harness = make_harness(lead=False)
    assert harness.manager.add_loading_partition(0)
    assert harness.join(G).value.error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    # heartbeats pass blindly, syncs are told to rejoin (older clients do not know the error)
    assert harness.heartbeat(G, "m", 1) is Errors.NONE
    assert harness.sync(G, 1, "m").value.error is Errors.REBALANCE_IN_PROGRESS
    assert harness.commit(G, {TP0: 1}) == {TP0: Errors.COORDINATOR_LOAD_IN_PROGRESS}
    error, _ = harness.coordinator.handle_list_groups()
    assert error is Errors.COORDINATOR_LOAD_IN_PROGRESS


def test_inactive_coordinator_is_not_available(harness) -> None:
    harness.coordinator.shutdown()
    assert harness.join(G).value.error is Errors.COORDINATOR_NOT_AVAILABLE
    assert harness.coordinator.handle_list_groups() == (Errors.COORDINATOR_NOT_AVAILABLE, [])


# ---------------------------------------------------------------------------- heartbeats and sync errors


def test_heartbeat_errors(harness) -> None:
    assert harness.heartbeat(G, "nobody", 1) is Errors.UNKNOWN_MEMBER_ID  # no such group
    member_id, generation = harness.join_and_sync_single(G)
    assert harness.heartbeat(G, "nobody", generation) is Errors.UNKNOWN_MEMBER_ID
    assert harness.heartbeat(G, member_id, generation + 1) is Errors.ILLEGAL_GENERATION
    assert harness.heartbeat(G, member_id, generation - 1) is Errors.ILLEGAL_GENERATION
    assert harness.heartbeat(G, member_id, generation) is Errors.NONE


def test_sync_errors(harness) -> None:
    assert harness.sync(G, 1, "nobody").value.error is Errors.UNKNOWN_MEMBER_ID  # no such group
    member_id, generation = harness.join_and_sync_single(G)
    assert harness.sync(G, generation, "nobody").value.error is Errors.UNKNOWN_MEMBER_ID
    assert harness.sync(G, generation + 1, member_id).value.error is Errors.ILLEGAL_GENERATION
    assert harness.sync(G, generation, member_id, protocol_type="connect").value.error is \
        Errors.INCONSISTENT_GROUP_PROTOCOL
    assert harness.sync(G, generation, member_id, protocol_name="roundrobin").value.error is \
        Errors.INCONSISTENT_GROUP_PROTOCOL
    # a stable group hands out the stored assignment again
    again = harness.sync(G, generation, member_id).value
    assert again.error is Errors.NONE and again.member_assignment == assignment({"t": [0]})


# ---------------------------------------------------------------------------- rebalances


def _two_member_group(harness) -> tuple[str, str, int]:
    """m1 (leader) and m2 in a Stable generation; returns (m1, m2, generation)."""
    m1, _ = harness.join_and_sync_single(G)
    join2 = harness.join(G, client_id="second")
    assert not join2.done  # parked until the leader rejoins
    assert harness.heartbeat(G, m1, 1) is Errors.REBALANCE_IN_PROGRESS
    rejoin1 = harness.join(G, m1)
    first, second = rejoin1.value, join2.value
    assert first.error is Errors.NONE and second.error is Errors.NONE
    assert first.generation_id == second.generation_id == 2
    assert first.leader_id == second.leader_id == m1
    assert {m.member_id for m in first.members} == {m1, second.member_id} and second.members == ()
    m2 = second.member_id
    follower_sync = harness.sync(G, 2, m2)
    assert not follower_sync.done  # waits for the leader's assignment
    leader_sync = harness.sync(G, 2, m1, {m1: assignment({"t": [0]}), m2: assignment({"t": [1]})})
    assert leader_sync.value.member_assignment == assignment({"t": [0]})
    assert follower_sync.value.member_assignment == assignment({"t": [1]})
    assert harness.state(G) == "Stable"
    return m1, m2, 2


def test_new_member_triggers_a_rebalance_that_splits_partitions(harness) -> None:
    _two_member_group(harness)


def test_commit_in_completing_rebalance_is_rebalance_in_progress(harness) -> None:
    m1, _ = harness.join_and_sync_single(G)
    harness.join(G, client_id="second")
    joined = harness.join(G, m1).value
    assert harness.coordinator.group_manager.get_group(G).is_(CompletingRebalance)
    assert harness.commit(G, {TP0: 1}, m1, joined.generation_id) == {TP0: Errors.REBALANCE_IN_PROGRESS}
    # the previous generation's commit is refused
    assert harness.commit(G, {TP0: 1}, m1, 1) == {TP0: Errors.ILLEGAL_GENERATION}


def test_leave_group_rebalances_the_rest(harness) -> None:
    m1, m2, generation = _two_member_group(harness)
    result = harness.leave(G, MemberIdentity(m2))
    assert result.top_level_error is Errors.NONE and [r.error for r in result.member_responses] == [Errors.NONE]
    assert harness.coordinator.group_manager.get_group(G).is_(PreparingRebalance)
    assert harness.heartbeat(G, m1, generation) is Errors.REBALANCE_IN_PROGRESS
    rejoined = harness.join(G, m1).value
    assert rejoined.generation_id == generation + 1 and [m.member_id for m in rejoined.members] == [m1]


def test_batch_leave_reports_each_member(harness) -> None:
    m1, m2, _ = _two_member_group(harness)
    result = harness.leave(G, MemberIdentity(m1), MemberIdentity("ghost"), MemberIdentity(m2))
    assert [(r.member_id, r.error) for r in result.member_responses] == [
        (m1, Errors.NONE), ("ghost", Errors.UNKNOWN_MEMBER_ID), (m2, Errors.NONE)]
    # nobody left to rejoin: the rebalance completes at once into an empty generation
    assert harness.state(G) == "Empty"
    unknown_group = harness.leave("other", MemberIdentity("x"))
    assert [r.error for r in unknown_group.member_responses] == [Errors.UNKNOWN_MEMBER_ID]


def test_session_expiry_removes_a_silent_member(harness) -> None:
    m1, m2, generation = _two_member_group(harness)
    for _ in range(3):
        harness.tick(DEFAULT_SESSION_TIMEOUT_MS // 2)
        assert harness.heartbeat(G, m1, generation) in (Errors.NONE, Errors.REBALANCE_IN_PROGRESS)
    group = harness.coordinator.group_manager.get_group(G)
    assert not group.has(m2) and group.has(m1)
    rejoined = harness.join(G, m1).value
    assert [m.member_id for m in rejoined.members] == [m1]


def test_members_that_do_not_rejoin_are_dropped_at_the_rebalance_timeout(harness) -> None:
    m1, m2, generation = _two_member_group(harness)
    harness.join(G, client_id="third")  # triggers a rebalance; parked
    rejoin = harness.join(G, m1)
    assert not rejoin.done
    # m2 keeps heartbeating (so its session stays alive) but never rejoins
    elapsed = 0
    while not rejoin.done:
        harness.tick(1000)
        elapsed += 1000
        harness.heartbeat(G, m2, generation)
        assert elapsed <= DEFAULT_REBALANCE_TIMEOUT_MS
    joined = rejoin.value
    assert joined.error is Errors.NONE and joined.generation_id == generation + 1
    assert m2 not in {m.member_id for m in joined.members} and len(joined.members) == 2


def test_members_that_never_sync_are_removed(harness) -> None:
    m1, m2, generation = _two_member_group(harness)
    join1, join2 = harness.join(G, m1, protocols=[("range", subscription("t", "u"))]), harness.join(G, m2)
    assert join1.value.generation_id == join2.value.generation_id == generation + 1
    # only the leader syncs; m2 stays silent past the rebalance timeout
    harness.sync(G, generation + 1, m1, {m1: b"a", m2: b"b"})
    for _ in range(DEFAULT_REBALANCE_TIMEOUT_MS // 5000 + 1):
        harness.tick(5000)
        harness.heartbeat(G, m1, generation + 1)
    group = harness.coordinator.group_manager.get_group(G)
    assert not group.has(m2) and group.is_(PreparingRebalance)


def test_pending_member_expires_if_it_never_rejoins(harness) -> None:
    pending = harness.join(G, require_known_member_id=True).value.member_id
    harness.tick(DEFAULT_SESSION_TIMEOUT_MS)
    assert not harness.coordinator.group_manager.get_group(G).is_pending_member(pending)
    assert harness.join(G, pending, require_known_member_id=True).value.error is Errors.UNKNOWN_MEMBER_ID


def test_initial_rebalance_delay_gathers_members_into_one_generation(make_harness) -> None:
    harness = make_harness(group_initial_rebalance_delay_ms="3000")
    first = harness.join(G)
    harness.tick(2000)
    second = harness.join(G)
    harness.tick(2000)  # the first delay ran out, but a member arrived: wait another round
    assert not first.done and not second.done
    harness.tick(3000)
    assert first.value.generation_id == second.value.generation_id == 1
    assert len(first.value.members) == 2


# ---------------------------------------------------------------------------- static membership


def test_static_member_rejoin_takes_over_without_rebalance_and_fences_the_old_id(harness) -> None:
    old_id, generation = harness.join_and_sync_single(G, group_instance_id="instance-1")
    assert old_id.startswith("instance-1-")
    rejoined = harness.join(G, group_instance_id="instance-1").value
    assert rejoined.error is Errors.NONE and rejoined.member_id != old_id
    assert rejoined.generation_id == generation  # no rebalance
    assert rejoined.leader_id == old_id  # the old id is named leader so no new assignment is made
    assert harness.state(G) == "Stable"
    assert harness.heartbeat(G, old_id, generation, "instance-1") is Errors.FENCED_INSTANCE_ID
    assert harness.heartbeat(G, rejoined.member_id, generation, "instance-1") is Errors.NONE
    assert harness.sync(G, generation, old_id, group_instance_id="instance-1").value.error is \
        Errors.FENCED_INSTANCE_ID
    assert harness.commit(G, {TP0: 1}, old_id, generation, "instance-1") == {TP0: Errors.FENCED_INSTANCE_ID}
    left = harness.leave(G, MemberIdentity(old_id, "instance-1"))
    assert [r.error for r in left.member_responses] == [Errors.FENCED_INSTANCE_ID]
    # the new id's assignment is the old one's
    synced = harness.sync(G, generation, rejoined.member_id, group_instance_id="instance-1").value
    assert synced.member_assignment == assignment({"t": [0]})


def test_static_member_with_unknown_instance_id_must_reset(harness) -> None:
    member_id, generation = harness.join_and_sync_single(G)
    result = harness.join(G, member_id, group_instance_id="never-seen").value
    assert result.error is Errors.UNKNOWN_MEMBER_ID


def test_a_static_member_without_heartbeats_leaves_at_session_timeout(harness) -> None:
    member_id, generation = harness.join_and_sync_single(G, group_instance_id="inst")
    harness.tick(DEFAULT_SESSION_TIMEOUT_MS + 1)
    assert not harness.coordinator.group_manager.get_group(G).has(member_id)


# ---------------------------------------------------------------------------- offsets


def test_member_commit_and_fetch(harness) -> None:
    member_id, generation = harness.join_and_sync_single(G)
    assert harness.commit(G, {TP0: 10, TP1: 20}, member_id, generation, metadata="m") == {
        TP0: Errors.NONE, TP1: Errors.NONE}
    assert harness.fetch(G, [TP0, TP1, TopicPartition("t", 2)]) == {TP0: 10, TP1: 20, TopicPartition("t", 2): -1}
    assert harness.fetch(G) == {TP0: 10, TP1: 20}  # all partitions
    error, data = harness.coordinator.handle_fetch_offsets(G, True, [TP0])
    assert data[TP0] == (10, None, "m", Errors.NONE)


def test_commit_errors_for_members(harness) -> None:
    member_id, generation = harness.join_and_sync_single(G)
    assert harness.commit(G, {TP0: 1}, "nobody", generation) == {TP0: Errors.UNKNOWN_MEMBER_ID}
    assert harness.commit(G, {TP0: 1}, member_id, generation + 1) == {TP0: Errors.ILLEGAL_GENERATION}
    # a generation for a group this coordinator does not know
    assert harness.commit("unknown-group", {TP0: 1}, "m", 3) == {TP0: Errors.ILLEGAL_GENERATION}
    too_long = "x" * 4097
    assert harness.commit(G, {TP0: 1}, member_id, generation, metadata=too_long) == {
        TP0: Errors.OFFSET_METADATA_TOO_LARGE}
    assert harness.fetch(G, [TP0]) == {TP0: -1}
    # the refused commit is not left pending (a stable fetch would call it unstable forever)
    assert harness.coordinator.handle_fetch_offsets(G, True, [TP0])[1][TP0][3] is Errors.NONE


def test_simple_consumer_commits_without_membership(harness) -> None:
    assert harness.commit("simple", {TP0: 7}) == {TP0: Errors.NONE}
    assert harness.fetch("simple", [TP0]) == {TP0: 7}
    group = harness.coordinator.group_manager.get_group("simple")
    assert group.generation_id == 0 and group.protocol_type is None
    # a group managed by Kafka refuses commits without generation from strangers
    member_id, generation = harness.join_and_sync_single(G)
    assert harness.commit(G, {TP0: 1}) == {TP0: Errors.UNKNOWN_MEMBER_ID}


def test_fetch_for_unknown_group_is_no_offsets(harness) -> None:
    assert harness.fetch("never", [TP0]) == {TP0: -1}
    assert harness.fetch("never") == {}


# ---------------------------------------------------------------------------- loading and unloading


def test_resignation_unloads_and_election_reloads(harness) -> None:
    member_id, generation = harness.join_and_sync_single(G)
    harness.commit(G, {TP0: 42}, member_id, generation)
    harness.commit("simple", {TP1: 5})

    harness.coordinator.on_resignation(0, 2)
    assert harness.coordinator.group_manager.get_group(G) is None
    assert harness.join(G).value.error is Errors.NOT_COORDINATOR

    harness.coordinator.on_election(0, 3)
    assert harness.fetch(G, [TP0]) == {TP0: 42} and harness.fetch("simple") == {TP1: 5}
    error, summary = harness.coordinator.handle_describe_group(G)
    assert summary.state == "Stable" and [m.member_id for m in summary.members] == [member_id]
    # the loaded member is known: its heartbeat works, and its session is running again
    assert harness.heartbeat(G, member_id, generation) is Errors.NONE
    harness.tick(DEFAULT_SESSION_TIMEOUT_MS + 1)
    assert harness.state(G) == "Empty"


def test_stale_unload_is_ignored(harness) -> None:
    harness.commit("simple", {TP0: 1})
    harness.coordinator.on_election(0, 5)
    harness.coordinator.on_resignation(0, 4)  # from an older LeaderAndIsr: ignored
    assert harness.fetch("simple", [TP0]) == {TP0: 1}


def test_unload_answers_parked_joins_with_not_coordinator(harness) -> None:
    m1, _ = harness.join_and_sync_single(G)
    parked = harness.join(G, client_id="second")
    harness.coordinator.on_resignation(0, 2)
    assert parked.value.error is Errors.NOT_COORDINATOR


@pytest.mark.parametrize("codec", ["0", "1", "4"])
def test_a_new_coordinator_reads_everything_back_from_the_log(make_harness, tmp_path, codec) -> None:
    log_dir = str(tmp_path / "shared-logs")
    first = make_harness(log_dir, offsets_topic_compression_codec=codec)
    m1, m2, generation = _two_member_group(first)
    first.commit(G, {TP0: 100, TP1: 200}, m1, generation)
    first.commit(G, {TP0: 150}, m2, generation)
    first.commit("simple", {TP0: 9})
    first.commit("deleted-offsets", {TP0: 3})
    first.coordinator.handle_delete_groups(["deleted-offsets"])
    first.close()

    second = make_harness(log_dir)
    stored = second.offsets_log(G).read(0, 1 << 20).records
    batches = MemoryRecords(stored.read_bytes(0, stored.size_in_bytes())).batches()
    assert {b.compression_type for b in batches} == {CompressionType(int(codec))}
    assert second.fetch(G) == {TP0: 150, TP1: 200}
    assert second.fetch("simple") == {TP0: 9}
    assert second.coordinator.group_manager.get_group("deleted-offsets") is None
    group = second.coordinator.group_manager.get_group(G)
    assert group.is_(Stable) and group.generation_id == generation and set(group.all_members) == {m1, m2}
    assert group.get(m2).assignment == assignment({"t": [1]}) and group.is_leader(m1)


# ---------------------------------------------------------------------------- deletion and expiry


def test_delete_groups(harness) -> None:
    member_id, generation = harness.join_and_sync_single(G)
    harness.commit(G, {TP0: 1}, member_id, generation)
    assert harness.coordinator.handle_delete_groups([G]) == {G: Errors.NON_EMPTY_GROUP}
    harness.leave(G, MemberIdentity(member_id))
    assert harness.state(G) == "Empty"
    assert harness.coordinator.handle_delete_groups([G, "nope", ""]) == {
        G: Errors.NONE, "nope": Errors.GROUP_ID_NOT_FOUND, "": Errors.GROUP_ID_NOT_FOUND}
    assert harness.coordinator.handle_delete_groups([G]) == {G: Errors.GROUP_ID_NOT_FOUND}
    assert harness.fetch(G, [TP0]) == {TP0: -1}
    # tombstones for the offset and the group are in the log
    tail = log_records(harness)[-2:]
    assert [v for _, v in tail] == [None, None]
    assert {str(k) for k, _ in tail} == {G, f"[{G},t,0]"}


def test_delete_offsets(harness) -> None:
    member_id, generation = harness.join_and_sync_single(G)  # subscribed to "t"
    other = TopicPartition("other", 0)
    harness.commit(G, {TP0: 1, other: 2}, member_id, generation)
    error, errors = harness.coordinator.handle_delete_offsets(G, [TP0, other])
    assert error is Errors.NONE and errors == {TP0: Errors.GROUP_SUBSCRIBED_TO_TOPIC, other: Errors.NONE}
    assert harness.fetch(G) == {TP0: 1}
    assert harness.coordinator.handle_delete_offsets("nope", [TP0]) == (Errors.GROUP_ID_NOT_FOUND, {})
    harness.commit("simple", {TP0: 4})
    assert harness.coordinator.handle_delete_offsets("simple", [TP0]) == (Errors.NONE, {TP0: Errors.NONE})


def test_offsets_of_an_empty_group_expire_retention_after_it_emptied(make_harness) -> None:
    harness = make_harness(offsets_retention_minutes="1", offsets_retention_check_interval_ms="1000")
    member_id, generation = harness.join_and_sync_single(G)
    harness.commit(G, {TP0: 5}, member_id, generation)
    for _ in range(14):  # 70 s: past the commit's retention, but the member is alive and subscribed to t
        assert harness.heartbeat(G, member_id, generation) is Errors.NONE
        harness.tick(5_000)
    assert harness.fetch(G) == {TP0: 5}
    harness.leave(G, MemberIdentity(member_id))
    harness.tick(59_000)
    assert harness.fetch(G) == {TP0: 5}
    harness.tick(2_000)
    assert harness.fetch(G) == {}
    # with no offsets left the empty group is gone, with a tombstone for its metadata
    assert harness.coordinator.group_manager.get_group(G) is None
    key, value = log_records(harness)[-1]
    assert isinstance(key, GroupMetadataKey) and key.key == G and value is None


def test_simple_consumer_offsets_expire_after_commit_plus_retention(make_harness) -> None:
    harness = make_harness(offsets_retention_minutes="1", offsets_retention_check_interval_ms="1000")
    harness.commit("simple", {TP0: 5})
    harness.tick(30_000)
    harness.commit("simple", {TP1: 6})
    harness.tick(31_000)
    assert harness.fetch("simple") == {TP1: 6}
    harness.tick(30_000)
    assert harness.fetch("simple") == {}
    assert harness.coordinator.group_manager.get_group("simple") is None


# ---------------------------------------------------------------------------- listing


def test_list_and_describe(harness) -> None:
    member_id, _ = harness.join_and_sync_single(G, client_id="lister")
    harness.commit("simple", {TP0: 1})
    error, groups = harness.coordinator.handle_list_groups()
    assert error is Errors.NONE
    assert {(g.group_id, g.protocol_type, g.state) for g in groups} == {(G, "consumer", "Stable"),
                                                                       ("simple", "", "Empty")}
    _, only_stable = harness.coordinator.handle_list_groups(["Stable"])
    assert [g.group_id for g in only_stable] == [G]
    error, summary = harness.coordinator.handle_describe_group(G)
    (m,) = summary.members
    assert (summary.protocol_type, summary.protocol) == ("consumer", "range")
    assert (m.member_id, m.client_id, m.client_host) == (member_id, "lister", "/127.0.0.1")
    assert m.assignment == assignment({"t": [0]}) and m.metadata == subscription("t")
    assert harness.coordinator.handle_describe_group("absent")[1].state == "Dead"
