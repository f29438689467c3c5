"""Port of core/src/main/scala/kafka/coordinator/group/GroupMetadata.scala (Kafka 2.8.2).

A group's state machine, members and committed offsets.

States and their transitions (``GroupState.valid_previous_states`` is the table Kafka checks
on every ``transition_to``)::

    Empty --join--> PreparingRebalance --all joined / timeout--> CompletingRebalance
      ^                 ^        |                                   |  leader's SyncGroup
      |                 |        +--no member left--> Empty          v  stored
      |                 +--------- join, leave, failure ------- Stable
      +-- any state --> Dead (unloaded, deleted, or empty with no offsets left)

* PreparingRebalance parks JoinGroup requests until every known member has rejoined (or the
  rebalance timeout passes); heartbeats answer REBALANCE_IN_PROGRESS; commits of the previous
  generation are still accepted.
* CompletingRebalance parks SyncGroup requests until the leader sends the assignment.
* Stable answers heartbeats and hands out the stored assignment.
* Empty keeps offsets (for members that come back, or for simple consumers that only commit)
  until they expire.
* Dead is final: the group was unloaded (its partition moved away) or removed.

Offsets are kept with the log offset of the commit record (``CommitRecordMetadataAndOffset``)
so that, when regular and transactional commits mix, the later write wins however compaction
reorders them. Commits on their way to the log are "pending" until the append completes.

Not thread-safe by itself: every access is made holding ``group.lock`` (a reentrant lock,
because completion callbacks run on the thread that already holds it).
"""
from __future__ import annotations

import enum
import logging
import struct
import threading
import uuid
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional, Sequence

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.group.member_metadata import MemberMetadata, MemberSummary, Protocol, plain_protocol_set
from kafka_py.core.coordinator.group.offset_and_metadata import OffsetAndMetadata
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

CONSUMER_PROTOCOL_TYPE = "consumer"  # ConsumerProtocol.PROTOCOL_TYPE
_MEMBER_ID_DELIMITER = "-"


class GroupState(enum.Enum):
    """The five group states; ``str(state)`` is Kafka's name, as DescribeGroups reports it."""

    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"
    EMPTY = "Empty"

    @property
    def valid_previous_states(self) -> frozenset["GroupState"]:
        return _VALID_PREVIOUS_STATES[self]

    def __str__(self) -> str:
        return self.value


PreparingRebalance = GroupState.PREPARING_REBALANCE
CompletingRebalance = GroupState.COMPLETING_REBALANCE
Stable = GroupState.STABLE
Dead = GroupState.DEAD
Empty = GroupState.EMPTY

_VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    PreparingRebalance: frozenset({Stable, CompletingRebalance, Empty}),
    CompletingRebalance: frozenset({PreparingRebalance}),
    Stable: frozenset({CompletingRebalance}),
    Dead: frozenset({Stable, PreparingRebalance, CompletingRebalance, Empty, Dead}),
    Empty: frozenset({PreparingRebalance}),
}


@dataclass(frozen=True, slots=True)
class GroupOverview:
    """A group as ListGroups reports it."""

    group_id: str
    protocol_type: str
    state: str


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """A group as DescribeGroups reports it."""

    state: str
    protocol_type: str
    protocol: str
    members: tuple[MemberSummary, ...]


@dataclass(frozen=True, slots=True)
class CommitRecordMetadataAndOffset:
    """A committed offset and the log offset of the batch that wrote it (None while pending)."""

    appended_batch_offset: Optional[int]
    offset_and_metadata: OffsetAndMetadata

    def older_than(self, that: "CommitRecordMetadataAndOffset") -> bool:
        return self.appended_batch_offset < that.appended_batch_offset


@dataclass(frozen=True, slots=True)
class JoinGroupResponseMember:
    """A member as the leader's JoinGroup response lists it."""

    member_id: str
    group_instance_id: Optional[str]
    metadata: bytes


# GroupCoordinator.NoGeneration and NoLeader (kafka.coordinator.group), here beside JoinGroupResult,
# which group_coordinator.py imports from this module.
NO_GENERATION = -1
NO_LEADER = ""


@dataclass(frozen=True, slots=True)
class JoinGroupResult:
    """The answer to a JoinGroup (GroupCoordinator.scala's JoinGroupResult). ``members`` is
    filled for the leader only; protocol type and name are None when there is none yet."""

    members: tuple[JoinGroupResponseMember, ...]
    member_id: str
    generation_id: int
    protocol_type: Optional[str]
    protocol_name: Optional[str]
    leader_id: Optional[str]
    error: Errors

    @classmethod
    def error_result(cls, member_id: str, error: Errors) -> "JoinGroupResult":
        return cls((), member_id, NO_GENERATION, None, None, NO_LEADER, error)


@dataclass(frozen=True, slots=True)
class SyncGroupResult:
    """The answer to a SyncGroup: the member's assignment, or an error with none."""

    protocol_type: Optional[str]
    protocol_name: Optional[str]
    member_assignment: bytes
    error: Errors

    @classmethod
    def error_result(cls, error: Errors) -> "SyncGroupResult":
        return cls(None, None, b"", error)


def consumer_subscription_topics(metadata: bytes) -> frozenset[str]:
    """The topics of a consumer protocol Subscription, read with the v0 schema (version int16,
    then the topic array), which every later version extends at the end. Raises ValueError on
    metadata that does not parse."""
    try:
        (count,) = struct.unpack_from(">i", metadata, 2)
        if count < 0:
            raise ValueError("null topic array")
        position = 6
        topics = []
        for _ in range(count):
            (length,) = struct.unpack_from(">h", metadata, position)
            position += 2
            if length < 0 or position + length > len(metadata):
                raise ValueError("bad topic name length")
            topics.append(bytes(metadata[position:position + length]).decode("utf-8"))
            position += length
        return frozenset(topics)
    except (struct.error, UnicodeDecodeError) as e:
        raise ValueError(str(e)) from e


class GroupMetadata:
    """Membership and offsets of one group."""

    def __init__(self, group_id: str, initial_state: GroupState, time: Time) -> None:
        self.group_id = group_id
        self.time = time
        self.lock = threading.RLock()
        self._state = initial_state
        self.current_state_timestamp: Optional[int] = time.milliseconds()
        self.protocol_type: Optional[str] = None
        self.protocol_name: Optional[str] = None
        self.generation_id = 0
        self._leader_id: Optional[str] = None
        # insertion-ordered: "the first remaining member" becomes leader, as Kafka's HashMap
        # iteration order would pick some member; order here is at least deterministic
        self._members: dict[str, MemberMetadata] = {}
        self._static_members: dict[str, str] = {}  # group.instance.id -> member.id
        self._pending_members: set[str] = set()
        self._num_members_awaiting_join = 0
        self._supported_protocols: Counter[str] = Counter()
        self._offsets: dict[TopicPartition, CommitRecordMetadataAndOffset] = {}
        self._pending_offset_commits: dict[TopicPartition, OffsetAndMetadata] = {}
        self._pending_transactional_offset_commits: dict[int, dict[TopicPartition, CommitRecordMetadataAndOffset]] = {}
        self._received_transactional_offset_commits = False
        self._received_consumer_offset_commits = False
        self._pending_sync_members: set[str] = set()
        # For consumer groups, the union of the members' subscriptions; None when unknown.
        self._subscribed_topics: Optional[frozenset[str]] = None
        self.new_member_added = False

    # ------------------------------------------------------------------ loading

    @classmethod
    def load_group(cls, group_id: str, initial_state: GroupState, generation_id: int, protocol_type: Optional[str],
                   protocol_name: Optional[str], leader_id: Optional[str], current_state_timestamp: Optional[int],
                   members: Iterable[MemberMetadata], time: Time) -> "GroupMetadata":
        """A group as read back from its GroupMetadataValue record."""
        group = cls(group_id, initial_state, time)
        group.generation_id = generation_id
        group.protocol_type = protocol_type if protocol_type else None
        group.protocol_name = protocol_name
        group._leader_id = leader_id
        group.current_state_timestamp = current_state_timestamp
        for member in members:
            group.add(member, None)
            if member.is_static_member:
                group.add_static_member(member.group_instance_id, member.member_id)
            logger.info("Loaded member %r in group %s with generation %d.", member, group_id, group.generation_id)
        group._subscribed_topics = group.compute_subscribed_topics()
        return group

    # ------------------------------------------------------------------ simple views

    def is_(self, state: GroupState) -> bool:
        return self._state is state

    def not_(self, state: GroupState) -> bool:
        return self._state is not state

    def has(self, member_id: Optional[str]) -> bool:
        return member_id in self._members

    def get(self, member_id: str) -> MemberMetadata:
        return self._members[member_id]

    @property
    def size(self) -> int:
        return len(self._members)

    def is_leader(self, member_id: str) -> bool:
        return self._leader_id is not None and self._leader_id == member_id

    @property
    def leader_or_null(self) -> Optional[str]:
        return self._leader_id

    @property
    def current_state_timestamp_or_default(self) -> int:
        return -1 if self.current_state_timestamp is None else self.current_state_timestamp

    @property
    def is_consumer_group(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    @property
    def current_state(self) -> GroupState:
        return self._state

    # ------------------------------------------------------------------ members

    def add(self, member: MemberMetadata, callback: Optional[Callable] = None) -> None:
        if not self._members:
            self.protocol_type = member.protocol_type
        if self.protocol_type != member.protocol_type:
            raise AssertionError(f"Member protocol type {member.protocol_type} differs from the group's "
                                 f"{self.protocol_type}")
        if not self.supports_protocols(member.protocol_type, plain_protocol_set(member.supported_protocols)):
            raise AssertionError("Member does not support the group's protocols")
        if self._leader_id is None:
            self._leader_id = member.member_id
        self._members[member.member_id] = member
        for name, _ in member.supported_protocols:
            self._supported_protocols[name] += 1
        member.awaiting_join_callback = callback
        if member.is_awaiting_join:
            self._num_members_awaiting_join += 1

    def remove(self, member_id: str) -> None:
        member = self._members.pop(member_id, None)
        if member is not None:
            for name, _ in member.supported_protocols:
                self._supported_protocols[name] -= 1
            if member.is_awaiting_join:
                self._num_members_awaiting_join -= 1
            if member.group_instance_id is not None:
                self._static_members.pop(member.group_instance_id, None)
        if self.is_leader(member_id):
            self._leader_id = next(iter(self._members), None)
        self._pending_sync_members.discard(member_id)

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else promote some member that did. False when the
        group has no leader or no member rejoined."""
        if self._leader_id is None:
            return False
        current_leader = self.get(self._leader_id)
        if current_leader.is_awaiting_join:
            return True
        for member_id, member in self._members.items():
            if member.is_awaiting_join:
                self._leader_id = member_id
                logger.info("Group leader [member.id: %s, group.instance.id: %s] failed to join before rebalance "
                            "timeout, while new leader %r was elected.", current_leader.member_id,
                            current_leader.group_instance_id, member)
                return True
        logger.info("Group leader [member.id: %s, group.instance.id: %s] failed to join before rebalance timeout, "
                    "and the group couldn't proceed to next generation because no member joined.",
                    current_leader.member_id, current_leader.group_instance_id)
        return False

    def replace_group_instance(self, old_member_id: str, new_member_id: str,
                               group_instance_id: Optional[str]) -> MemberMetadata:
        """A static member rejoined without its member id: give its metadata the new id (and
        fence whatever request the old id still has parked)."""
        if group_instance_id is None:
            raise ValueError("unexpected null group.instance.id in replaceGroupInstance")
        old_member = self._members.pop(old_member_id, None)
        if old_member is None:
            raise ValueError(f"Cannot replace non-existing member id {old_member_id}")
        # the duplicate instance must stop at once, whichever request it is waiting on
        self.maybe_invoke_join_callback(old_member, JoinGroupResult.error_result(old_member_id,
                                                                                 Errors.FENCED_INSTANCE_ID))
        self.maybe_invoke_sync_callback(old_member, SyncGroupResult.error_result(Errors.FENCED_INSTANCE_ID))
        old_member.member_id = new_member_id
        self._members[new_member_id] = old_member
        if self.is_leader(old_member_id):
            self._leader_id = new_member_id
        self.add_static_member(group_instance_id, new_member_id)
        return old_member

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self._pending_members and not self.has(member_id)

    def add_pending_member(self, member_id: str) -> bool:
        added = member_id not in self._pending_members
        self._pending_members.add(member_id)
        return added

    def remove_pending_member(self, member_id: str) -> bool:
        if member_id in self._pending_members:
            self._pending_members.discard(member_id)
            return True
        return False

    def has_static_member(self, group_instance_id: Optional[str]) -> bool:
        return group_instance_id is not None and group_instance_id in self._static_members

    def get_static_member_id(self, group_instance_id: Optional[str]) -> str:
        if group_instance_id is None:
            raise ValueError("unexpected null group.instance.id in getStaticMemberId")
        return self._static_members[group_instance_id]

    def add_static_member(self, group_instance_id: Optional[str], new_member_id: str) -> None:
        if group_instance_id is None:
            raise ValueError("unexpected null group.instance.id in addStaticMember")
        self._static_members[group_instance_id] = new_member_id

    def add_pending_sync_member(self, member_id: str) -> bool:
        if not self.has(member_id):
            raise RuntimeError(f"Attempt to add a pending sync for member {member_id} which is not a member of "
                               "the group")
        added = member_id not in self._pending_sync_members
        self._pending_sync_members.add(member_id)
        return added

    def remove_pending_sync_member(self, member_id: str) -> bool:
        if not self.has(member_id):
            raise RuntimeError(f"Attempt to remove a pending sync for member {member_id} which is not a member of "
                               "the group")
        if member_id in self._pending_sync_members:
            self._pending_sync_members.discard(member_id)
            return True
        return False

    @property
    def has_received_sync_from_all_members(self) -> bool:
        return not self._pending_sync_members

    @property
    def all_pending_sync_members(self) -> frozenset[str]:
        return frozenset(self._pending_sync_members)

    def clear_pending_sync_members(self) -> None:
        self._pending_sync_members.clear()

    def not_yet_rejoined_members(self) -> dict[str, MemberMetadata]:
        return {mid: m for mid, m in self._members.items() if not m.is_awaiting_join}

    @property
    def has_all_members_joined(self) -> bool:
        return len(self._members) == self._num_members_awaiting_join and not self._pending_members

    @property
    def all_members(self) -> list[str]:
        return list(self._members)

    @property
    def all_static_members(self) -> list[str]:
        return list(self._static_members)

    @property
    def all_dynamic_members(self) -> set[str]:
        return set(self._members) - set(self._static_members.values())

    @property
    def num_pending(self) -> int:
        return len(self._pending_members)

    @property
    def num_awaiting(self) -> int:
        return self._num_members_awaiting_join

    @property
    def all_member_metadata(self) -> list[MemberMetadata]:
        return list(self._members.values())

    @property
    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self._members.values()), default=0)

    def generate_member_id(self, client_id: str, group_instance_id: Optional[str]) -> str:
        prefix = client_id if group_instance_id is None else group_instance_id
        return prefix + _MEMBER_ID_DELIMITER + str(uuid.uuid4())

    def is_static_member_fenced(self, member_id: str, group_instance_id: Optional[str], operation: str) -> bool:
        """True when ``group_instance_id`` is a known static member registered under another member id."""
        if self.has_static_member(group_instance_id) and self.get_static_member_id(group_instance_id) != member_id:
            logger.error("given member.id %s is identified as a known static member %s, but not matching the "
                         "expected member.id %s during %s, will respond with instance fenced error", member_id,
                         group_instance_id, self.get_static_member_id(group_instance_id), operation)
            return True
        return False

    @property
    def can_rebalance(self) -> bool:
        return self._state in PreparingRebalance.valid_previous_states

    def transition_to(self, group_state: GroupState) -> None:
        self._assert_valid_transition(group_state)
        self._state = group_state
        self.current_state_timestamp = self.time.milliseconds()

    def select_protocol(self) -> str:
        """The protocol every member supports that gets the most first-preference votes."""
        if not self._members:
            raise RuntimeError("Cannot select protocol for empty group")
        candidates = self._candidate_protocols()
        votes = Counter(member.vote(candidates) for member in self._members.values())
        # ties go to the protocol that reached the top count first, deterministically
        return max(votes.items(), key=lambda kv: kv[1])[0]

    def _candidate_protocols(self) -> set[str]:
        n = len(self._members)
        return {name for name, count in self._supported_protocols.items() if count == n}

    def supports_protocols(self, member_protocol_type: str, member_protocols: frozenset[str] | set[str]) -> bool:
        if self.is_(Empty):
            return bool(member_protocol_type) and bool(member_protocols)
        return (self.protocol_type == member_protocol_type
                and any(self._supported_protocols[p] == len(self._members) for p in member_protocols))

    @property
    def subscribed_topics(self) -> Optional[frozenset[str]]:
        return self._subscribed_topics

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """When the subscriptions are unknown, assume subscribed (the safe answer)."""
        return True if self._subscribed_topics is None else topic in self._subscribed_topics

    def compute_subscribed_topics(self) -> Optional[frozenset[str]]:
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self._members:
            return frozenset()
        if self.protocol_name is None:
            return None
        try:
            topics: set[str] = set()
            for member in self._members.values():
                topics |= consumer_subscription_topics(member.metadata(self.protocol_name))
            return frozenset(topics)
        except ValueError as e:
            # A client's metadata that does not parse: one line naming why, no traceback (Kafka
            # attaches the SchemaException's stack, which says nothing about the client).
            logger.warning("Failed to parse Consumer Protocol %s:%s of group %s. Consumer group coordinator is not "
                           "aware of the subscribed topics. (%s)", CONSUMER_PROTOCOL_TYPE, self.protocol_name,
                           self.group_id, e)
            return None

    def update_member(self, member: MemberMetadata, protocols: Sequence[Protocol],
                      callback: Optional[Callable]) -> None:
        for name, _ in member.supported_protocols:
            self._supported_protocols[name] -= 1
        for name, _ in protocols:
            self._supported_protocols[name] += 1
        member.supported_protocols = list(protocols)
        if callback is not None and not member.is_awaiting_join:
            self._num_members_awaiting_join += 1
        elif callback is None and member.is_awaiting_join:
            self._num_members_awaiting_join -= 1
        member.awaiting_join_callback = callback

    def maybe_invoke_join_callback(self, member: MemberMetadata, join_group_result) -> None:
        if member.is_awaiting_join:
            callback = member.awaiting_join_callback
            member.awaiting_join_callback = None
            self._num_members_awaiting_join -= 1
            callback(join_group_result)

    def maybe_invoke_sync_callback(self, member: MemberMetadata, sync_group_result) -> bool:
        """True if the member had a parked SyncGroup, now answered."""
        if member.is_awaiting_sync:
            callback = member.awaiting_sync_callback
            member.awaiting_sync_callback = None
            callback(sync_group_result)
            return True
        return False

    def init_next_generation(self) -> None:
        self.generation_id += 1
        if self._members:
            self.protocol_name = self.select_protocol()
            self._subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(CompletingRebalance)
        else:
            self.protocol_name = None
            self._subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(Empty)
        self._received_consumer_offset_commits = False
        self._received_transactional_offset_commits = False
        self.clear_pending_sync_members()

    def current_member_metadata(self) -> list[JoinGroupResponseMember]:
        if self.is_(Dead) or self.is_(PreparingRebalance):
            raise RuntimeError(f"Cannot obtain member metadata for group in state {self._state}")
        return [JoinGroupResponseMember(member_id, m.group_instance_id, m.metadata(self.protocol_name))
                for member_id, m in self._members.items()]

    def summary(self) -> GroupSummary:
        if self.is_(Stable):
            protocol = self.protocol_name
            if protocol is None:
                raise RuntimeError("Invalid null group protocol for stable group")
            members = tuple(m.summary(protocol) for m in self._members.values())
            return GroupSummary(str(self._state), self.protocol_type or "", protocol, members)
        members = tuple(m.summary_no_metadata() for m in self._members.values())
        return GroupSummary(str(self._state), self.protocol_type or "", "", members)

    def overview(self) -> GroupOverview:
        return GroupOverview(self.group_id, self.protocol_type or "", str(self._state))

    # ------------------------------------------------------------------ offsets

    def initialize_offsets(self, offsets: Mapping[TopicPartition, CommitRecordMetadataAndOffset],
                           pending_txn_offsets: Mapping[int, Mapping[TopicPartition, CommitRecordMetadataAndOffset]]
                           ) -> None:
        self._offsets.update(offsets)
        for producer_id, pending in pending_txn_offsets.items():
            self._pending_transactional_offset_commits[producer_id] = dict(pending)

    def on_offset_commit_append(self, topic_partition: TopicPartition,
                                offset_with_commit_record_metadata: CommitRecordMetadataAndOffset) -> None:
        if topic_partition in self._pending_offset_commits:
            if offset_with_commit_record_metadata.appended_batch_offset is None:
                raise RuntimeError("Cannot complete offset commit write without providing the metadata of the record "
                                   "in the log.")
            current = self._offsets.get(topic_partition)
            if current is None or current.older_than(offset_with_commit_record_metadata):
                self._offsets[topic_partition] = offset_with_commit_record_metadata
        staged = self._pending_offset_commits.get(topic_partition)
        if staged is not None and staged == offset_with_commit_record_metadata.offset_and_metadata:
            del self._pending_offset_commits[topic_partition]
        # otherwise the partition was deleted meanwhile (removeOffsets dropped the pending entry)

    def fail_pending_offset_write(self, topic_partition: TopicPartition, offset: OffsetAndMetadata) -> None:
        if self._pending_offset_commits.get(topic_partition) == offset:
            del self._pending_offset_commits[topic_partition]

    def prepare_offset_commit(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        self._received_consumer_offset_commits = True
        self._pending_offset_commits.update(offsets)

    def prepare_txn_offset_commit(self, producer_id: int, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        self._received_transactional_offset_commits = True
        producer_offsets = self._pending_transactional_offset_commits.setdefault(producer_id, {})
        for tp, offset_and_metadata in offsets.items():
            producer_offsets[tp] = CommitRecordMetadataAndOffset(None, offset_and_metadata)

    @property
    def has_received_consistent_offset_commits(self) -> bool:
        return not self._received_consumer_offset_commits or not self._received_transactional_offset_commits

    def fail_pending_txn_offset_commit(self, producer_id: int, topic_partition: TopicPartition) -> None:
        pending = self._pending_transactional_offset_commits.get(producer_id)
        if pending is not None:
            pending.pop(topic_partition, None)
            if not pending:
                del self._pending_transactional_offset_commits[producer_id]

    def on_txn_offset_commit_append(self, producer_id: int, topic_partition: TopicPartition,
                                    commit_record_metadata_and_offset: CommitRecordMetadataAndOffset) -> None:
        pending = self._pending_transactional_offset_commits.get(producer_id)
        if pending is not None:
            current = pending.get(topic_partition)
            appended = commit_record_metadata_and_offset
            if current is not None and current.offset_and_metadata == appended.offset_and_metadata:
                pending[topic_partition] = appended

    def complete_pending_txn_offset_commit(self, producer_id: int, is_commit: bool) -> None:
        pending = self._pending_transactional_offset_commits.pop(producer_id, None)
        if not is_commit or pending is None:
            return
        for tp, commit in pending.items():
            if commit.appended_batch_offset is None:
                raise RuntimeError(f"Trying to complete a transactional offset commit for producerId {producer_id} "
                                   f"and groupId {self.group_id} even though the offset commit record itself hasn't "
                                   "been appended to the log.")
            current = self._offsets.get(tp)
            if current is None or current.older_than(commit):
                self._offsets[tp] = commit

    @property
    def active_producers(self) -> set[int]:
        return set(self._pending_transactional_offset_commits)

    def has_pending_offset_commits_from_producer(self, producer_id: int) -> bool:
        return producer_id in self._pending_transactional_offset_commits

    def has_pending_offset_commits_for_topic_partition(self, topic_partition: TopicPartition) -> bool:
        return (topic_partition in self._pending_offset_commits
                or any(topic_partition in p for p in self._pending_transactional_offset_commits.values()))

    def remove_all_offsets(self) -> dict[TopicPartition, OffsetAndMetadata]:
        return self.remove_offsets(list(self._offsets))

    def remove_offsets(self, topic_partitions: Iterable[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata]:
        removed: dict[TopicPartition, OffsetAndMetadata] = {}
        for tp in topic_partitions:
            self._pending_offset_commits.pop(tp, None)
            for pending in self._pending_transactional_offset_commits.values():
                pending.pop(tp, None)
            commit = self._offsets.pop(tp, None)
            if commit is not None:
                removed[tp] = commit.offset_and_metadata
        return removed

    def remove_expired_offsets(self, current_timestamp: int, offset_retention_ms: int
                               ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Drop and return the offsets whose retention has run out (Kafka 2.1+ semantics, KIP-211):
        an empty group's offsets expire ``offset_retention_ms`` after it became empty; a stable
        consumer group's offsets of topics nobody subscribes to any more expire that long after
        their last commit; a simple consumer's (no protocol type) likewise after their commit.
        An offset committed with an explicit expire timestamp (old clients) expires then."""

        def expired(base_timestamp: Callable[[CommitRecordMetadataAndOffset], int],
                    subscribed_topics: frozenset[str] = frozenset()) -> dict[TopicPartition, OffsetAndMetadata]:
            result = {}
            for tp, commit in self._offsets.items():
                if tp.topic in subscribed_topics or tp in self._pending_offset_commits:
                    continue
                expire_timestamp = commit.offset_and_metadata.expire_timestamp
                if expire_timestamp is None:
                    is_expired = current_timestamp - base_timestamp(commit) >= offset_retention_ms
                else:
                    is_expired = current_timestamp >= expire_timestamp
                if is_expired:
                    result[tp] = commit.offset_and_metadata
            return result

        if self.protocol_type is not None and self.is_(Empty):
            # without a state timestamp (a record from before 2.1) fall back to the commit time
            state_timestamp = self.current_state_timestamp
            expired_offsets = expired(lambda c: state_timestamp if state_timestamp is not None
                                      else c.offset_and_metadata.commit_timestamp)
        elif (self.protocol_type == CONSUMER_PROTOCOL_TYPE and self._subscribed_topics is not None
              and self.is_(Stable)):
            expired_offsets = expired(lambda c: c.offset_and_metadata.commit_timestamp, self._subscribed_topics)
        elif self.protocol_type is None:
            expired_offsets = expired(lambda c: c.offset_and_metadata.commit_timestamp)
        else:
            expired_offsets = {}
        if expired_offsets:
            logger.debug("Expired offsets from group '%s': %s", self.group_id, list(expired_offsets))
        for tp in expired_offsets:
            del self._offsets[tp]
        return expired_offsets

    @property
    def all_offsets(self) -> dict[TopicPartition, OffsetAndMetadata]:
        return {tp: c.offset_and_metadata for tp, c in self._offsets.items()}

    def offset(self, topic_partition: TopicPartition) -> Optional[OffsetAndMetadata]:
        commit = self._offsets.get(topic_partition)
        return None if commit is None else commit.offset_and_metadata

    def offset_with_record_metadata(self, topic_partition: TopicPartition) -> Optional[CommitRecordMetadataAndOffset]:
        return self._offsets.get(topic_partition)

    @property
    def num_offsets(self) -> int:
        return len(self._offsets)

    @property
    def has_offsets(self) -> bool:
        return bool(self._offsets or self._pending_offset_commits or self._pending_transactional_offset_commits)

    def _assert_valid_transition(self, target_state: GroupState) -> None:
        if self._state not in target_state.valid_previous_states:
            raise RuntimeError(
                f"Group {self.group_id} should be in the "
                f"{','.join(sorted(str(s) for s in target_state.valid_previous_states))} states before moving to "
                f"{target_state} state. Instead it is in {self._state} state")

    def __repr__(self) -> str:
        return (f"GroupMetadata(groupId={self.group_id}, generation={self.generation_id}, "
                f"protocolType={self.protocol_type}, currentState={self._state}, members={self._members})")


__all__ = [
    "CONSUMER_PROTOCOL_TYPE",
    "CommitRecordMetadataAndOffset",
    "CompletingRebalance",
    "Dead",
    "Empty",
    "GroupMetadata",
    "GroupOverview",
    "GroupState",
    "GroupSummary",
    "JoinGroupResponseMember",
    "PreparingRebalance",
    "Stable",
    "JoinGroupResult",
    "NO_GENERATION",
    "NO_LEADER",
    "SyncGroupResult",
    "consumer_subscription_topics",
]
