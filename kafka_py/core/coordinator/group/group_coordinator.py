"""Port of core/src/main/scala/kafka/coordinator/group/GroupCoordinator.scala (Kafka 2.8.2).

The GroupCoordinator runs the group membership protocol and offset management for the
groups whose __consumer_offsets partition this broker leads (GroupMetadataManager keeps
them and their offsets).

One rebalance, as a client sees it:

1. **JoinGroup** from every member. The first join of an Empty group moves it to
   PreparingRebalance and parks the request in an InitialDelayedJoin
   (``group.initial.rebalance.delay.ms``, so members starting together join one
   generation); later rebalances use a DelayedJoin that completes once every known member
   has rejoined, or at the rebalance timeout (members that did not rejoin are dropped).
   A v4+ client without a member id is first answered MEMBER_ID_REQUIRED with a fresh id
   and must join again with it ("pending" member until then).
2. On completion the generation id goes up, a protocol every member supports is chosen by
   vote, the group moves to CompletingRebalance and every parked JoinGroup is answered --
   the leader's with all members' metadata, so it can compute the assignment.
3. **SyncGroup** from every member: followers' requests are parked until the leader's
   arrives with the assignment, which is written to __consumer_offsets; once stored the
   group is Stable and every member gets its share. Members that never sync within the
   rebalance timeout are removed (DelayedSync) and the group rebalances again.
4. **Heartbeat** keeps a member's session alive (DelayedHeartbeat per member); a session
   that expires removes the member and triggers a rebalance. While a rebalance is being
   prepared, heartbeats answer REBALANCE_IN_PROGRESS, which makes the client rejoin.
5. **LeaveGroup** removes members at once (and rebalances the rest).

Static members (``group.instance.id``, KIP-345) keep their identity across restarts: a
rejoin with the same instance id takes over the old member's place without a rebalance when
nothing else changed, and requests with the instance id but a stale member id are fenced
(FENCED_INSTANCE_ID).

Locking: every group operation runs under the group's lock; the delayed operations use the
same lock, and so do the appends of the group's records (delayed_produce_lock).
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.group.delayed_heartbeat import DelayedHeartbeat
from kafka_py.core.coordinator.group.delayed_join import DelayedJoin, InitialDelayedJoin
from kafka_py.core.coordinator.group.delayed_sync import DelayedSync
from kafka_py.core.coordinator.group.group_metadata import (
    CompletingRebalance,
    Dead,
    Empty,
    GroupMetadata,
    GroupOverview,
    GroupSummary,
    JoinGroupResult,
    PreparingRebalance,
    Stable,
    SyncGroupResult,
)
from kafka_py.core.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, GroupMetadataManager
from kafka_py.core.coordinator.group.member_metadata import MemberMetadata, Protocol, plain_protocol_set
from kafka_py.core.coordinator.group.offset_and_metadata import OffsetAndMetadata
from kafka_py.core.coordinator.group.offset_config import GroupConfig, OffsetConfig
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.delayed_operation import DelayedOperationPurgatory
from kafka_py.server.delayed_operation_key import GroupJoinKey, GroupSyncKey, MemberKey
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

UNKNOWN_MEMBER_ID = ""  # JoinGroupRequest.UNKNOWN_MEMBER_ID
NO_STATE = ""
NO_PROTOCOL_TYPE = ""
NO_PROTOCOL = ""
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000
EMPTY_GROUP = GroupSummary(NO_STATE, NO_PROTOCOL_TYPE, NO_PROTOCOL, ())
DEAD_GROUP = GroupSummary(str(Dead), NO_PROTOCOL_TYPE, NO_PROTOCOL, ())

JoinCallback = Callable[[JoinGroupResult], None]
SyncCallback = Callable[[SyncGroupResult], None]


@dataclass(frozen=True, slots=True)
class MemberIdentity:
    """One member of a LeaveGroup request (v3+ batches several)."""

    member_id: str
    group_instance_id: Optional[str] = None


@dataclass(frozen=True, slots=True)
class LeaveMemberResponse:
    member_id: str
    group_instance_id: Optional[str]
    error: Errors


@dataclass(frozen=True, slots=True)
class LeaveGroupResult:
    top_level_error: Errors
    member_responses: tuple[LeaveMemberResponse, ...]


def _member_leave_error(identity: MemberIdentity, error: Errors) -> LeaveMemberResponse:
    return LeaveMemberResponse(identity.member_id, identity.group_instance_id, error)


class GroupCoordinator:
    """Group membership and offset management for the groups this broker coordinates."""

    def __init__(self, broker_id: int, group_config: GroupConfig, offset_config: OffsetConfig,
                 group_manager: GroupMetadataManager, heartbeat_purgatory: DelayedOperationPurgatory,
                 rebalance_purgatory: DelayedOperationPurgatory, time: Time = Time.SYSTEM) -> None:
        self.broker_id = broker_id
        self.group_config = group_config
        self.offset_config = offset_config
        self.group_manager = group_manager
        self.heartbeat_purgatory = heartbeat_purgatory
        self.rebalance_purgatory = rebalance_purgatory
        self.time = time
        self._is_active = threading.Event()
        self.logger = IdentLogger(logger, f"[GroupCoordinator {broker_id}]: ")

    @classmethod
    def create(cls, config: Any, replica_manager: Any, time: Time = Time.SYSTEM,
               heartbeat_purgatory: Optional[DelayedOperationPurgatory] = None,
               rebalance_purgatory: Optional[DelayedOperationPurgatory] = None,
               scheduler: Any = None) -> "GroupCoordinator":
        """GroupCoordinator.apply: the coordinator of a broker with KafkaConfig ``config``."""
        broker_id = int(config.broker_id)
        offset_config = OffsetConfig.from_kafka_config(config)
        group_config = GroupConfig.from_kafka_config(config)
        if heartbeat_purgatory is None:
            heartbeat_purgatory = DelayedOperationPurgatory("Heartbeat", broker_id=broker_id)
        if rebalance_purgatory is None:
            rebalance_purgatory = DelayedOperationPurgatory("Rebalance", broker_id=broker_id)
        manager = GroupMetadataManager(broker_id, offset_config, replica_manager, time, scheduler)
        return cls(broker_id, group_config, offset_config, manager, heartbeat_purgatory, rebalance_purgatory, time)

    def offsets_topic_configs(self) -> dict[str, str]:
        """Topic configs of __consumer_offsets when this broker creates it."""
        return {"cleanup.policy": "compact",
                "segment.bytes": str(self.offset_config.offsets_topic_segment_bytes),
                "compression.type": "producer"}

    # ------------------------------------------------------------------ lifecycle

    def startup(self, retrieve_group_metadata_topic_partition_count: Callable[[], int],
                enable_metadata_expiration: bool = True) -> None:
        self.logger.info("Starting up.")
        self.group_manager.startup(retrieve_group_metadata_topic_partition_count, enable_metadata_expiration)
        self._is_active.set()
        self.logger.info("Startup complete.")

    def shutdown(self) -> None:
        self.logger.info("Shutting down.")
        self._is_active.clear()
        self.group_manager.shutdown()
        self.heartbeat_purgatory.shutdown()
        self.rebalance_purgatory.shutdown()
        self.logger.info("Shutdown complete.")

    @property
    def is_active(self) -> bool:
        return self._is_active.is_set()

    # ------------------------------------------------------------------ JoinGroup

    def _accept_joining_member(self, group: GroupMetadata, member: str) -> bool:
        state = group.current_state
        if state in (Empty, Dead):
            return True
        if state is PreparingRebalance:
            # Count the members already rejoined, not the group's size: the size may exceed a
            # lowered group.max.size, and counting joins lets the last rejoiners be the ones
            # turned away.
            return ((group.has(member) and group.get(member).is_awaiting_join)
                    or group.num_awaiting < self.group_config.group_max_size)
        # CompletingRebalance, Stable: members not rejoined are dropped on the next
        # completion, so the group's size is the measure here
        return group.has(member) or group.size < self.group_config.group_max_size

    def handle_join_group(self, group_id: str, member_id: str, group_instance_id: Optional[str],
                          require_known_member_id: bool, client_id: str, client_host: str,
                          rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                          protocols: Sequence[Protocol], response_callback: JoinCallback) -> None:
        error = self._validate_group_status(group_id, ApiKeys.JOIN_GROUP)
        if error is not None:
            response_callback(JoinGroupResult.error_result(member_id, error))
            return
        if not (self.group_config.group_min_session_timeout_ms <= session_timeout_ms
                <= self.group_config.group_max_session_timeout_ms):
            response_callback(JoinGroupResult.error_result(member_id, Errors.INVALID_SESSION_TIMEOUT))
            return
        is_unknown_member = member_id == UNKNOWN_MEMBER_ID
        # only a member without an id may create the group; an id for a group we do not know
        # is a member from another life of the group
        group = self.group_manager.get_or_maybe_create_group(group_id, is_unknown_member)
        if group is None:
            response_callback(JoinGroupResult.error_result(member_id, Errors.UNKNOWN_MEMBER_ID))
            return
        with group.lock:
            if not self._accept_joining_member(group, member_id):
                group.remove(member_id)
                response_callback(JoinGroupResult.error_result(UNKNOWN_MEMBER_ID, Errors.GROUP_MAX_SIZE_REACHED))
            elif is_unknown_member:
                self._do_unknown_join_group(group, group_instance_id, require_known_member_id, client_id,
                                            client_host, rebalance_timeout_ms, session_timeout_ms, protocol_type,
                                            protocols, response_callback)
            else:
                self._do_join_group(group, member_id, group_instance_id, client_id, client_host,
                                    rebalance_timeout_ms, session_timeout_ms, protocol_type, protocols,
                                    response_callback)
            if group.is_(PreparingRebalance):
                self.rebalance_purgatory.check_and_complete(GroupJoinKey(group.group_id))

    def _do_unknown_join_group(self, group: GroupMetadata, group_instance_id: Optional[str],
                               require_known_member_id: bool, client_id: str, client_host: str,
                               rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                               protocols: Sequence[Protocol], response_callback: JoinCallback) -> None:
        with group.lock:
            if group.is_(Dead):
                # removed from the cache by another thread (unloaded, deleted): find the
                # coordinator again and rejoin
                response_callback(JoinGroupResult.error_result(UNKNOWN_MEMBER_ID, Errors.COORDINATOR_NOT_AVAILABLE))
            elif not group.supports_protocols(protocol_type, plain_protocol_set(protocols)):
                response_callback(JoinGroupResult.error_result(UNKNOWN_MEMBER_ID, Errors.INCONSISTENT_GROUP_PROTOCOL))
            else:
                new_member_id = group.generate_member_id(client_id, group_instance_id)
                if group.has_static_member(group_instance_id):
                    self._update_static_member_and_rebalance(group, new_member_id, group_instance_id, protocols,
                                                             response_callback)
                elif require_known_member_id:
                    # KIP-394: hand out the id first, count the member only when it comes back with it
                    self.logger.debug("Dynamic member with unknown member id joins group %s in %s state. Created a new "
                                      "member id %s and request the member to rejoin with this id.",
                                      group.group_id, group.current_state, new_member_id)
                    group.add_pending_member(new_member_id)
                    self._add_pending_member_expiration(group, new_member_id, session_timeout_ms)
                    response_callback(JoinGroupResult.error_result(new_member_id, Errors.MEMBER_ID_REQUIRED))
                else:
                    self.logger.info("%s Member with unknown member id joins group %s in %s state. Created a new member "
                                     "id %s for this member and add to the group.",
                                     "Static" if group_instance_id is not None else "Dynamic", group.group_id,
                                     group.current_state, new_member_id)
                    self._add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, new_member_id,
                                                   group_instance_id, client_id, client_host, protocol_type,
                                                   protocols, group, response_callback)

    def _do_join_group(self, group: GroupMetadata, member_id: str, group_instance_id: Optional[str], client_id: str,
                       client_host: str, rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                       protocols: Sequence[Protocol], response_callback: JoinCallback) -> None:
        with group.lock:
            if group.is_(Dead):
                response_callback(JoinGroupResult.error_result(member_id, Errors.COORDINATOR_NOT_AVAILABLE))
            elif not group.supports_protocols(protocol_type, plain_protocol_set(protocols)):
                response_callback(JoinGroupResult.error_result(member_id, Errors.INCONSISTENT_GROUP_PROTOCOL))
            elif group.is_pending_member(member_id):
                if group_instance_id is not None:
                    # Only dynamic members are made pending, so this is a client's mistake, not
                    # the coordinator's: Kafka (2.8 to 3.9) throws IllegalStateException and
                    # answers UNKNOWN_SERVER_ERROR. It is answered here as Kafka's
                    # validateCurrentMember (3.x) answers a member id that the instance id does
                    # not map to: FENCED_INSTANCE_ID when another member holds the instance id,
                    # UNKNOWN_MEMBER_ID otherwise. The pending member is left as it was.
                    error = (Errors.FENCED_INSTANCE_ID if group.has_static_member(group_instance_id)
                             else Errors.UNKNOWN_MEMBER_ID)
                    self.logger.warning("Pending dynamic member %s of group %s rejoined with group instance id %s; "
                                        "answering %s", member_id, group.group_id, group_instance_id, error.name)
                    response_callback(JoinGroupResult.error_result(member_id, error))
                    return
                self.logger.debug("Dynamic Member with specific member id %s joins group %s in %s state. Adding to the "
                                  "group now.", member_id, group.group_id, group.current_state)
                self._add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, member_id, group_instance_id,
                                               client_id, client_host, protocol_type, protocols, group,
                                               response_callback)
            else:
                group_instance_id_not_found = (group_instance_id is not None
                                               and not group.has_static_member(group_instance_id))
                if group.is_static_member_fenced(member_id, group_instance_id, "join-group"):
                    response_callback(JoinGroupResult.error_result(member_id, Errors.FENCED_INSTANCE_ID))
                elif not group.has(member_id) or group_instance_id_not_found:
                    # an unknown dynamic id, or a static member we do not know: start over
                    response_callback(JoinGroupResult.error_result(member_id, Errors.UNKNOWN_MEMBER_ID))
                else:
                    member = group.get(member_id)
                    state = group.current_state
                    if state is PreparingRebalance:
                        self._update_member_and_rebalance(
                            group, member, protocols, f"Member {member.member_id} joining group during {state}",
                            response_callback)
                    elif state is CompletingRebalance:
                        if member.matches(protocols):
                            # a repeat (the first answer was lost): answer with this generation again
                            response_callback(JoinGroupResult(
                                members=tuple(group.current_member_metadata()) if group.is_leader(member_id) else (),
                                member_id=member_id, generation_id=group.generation_id,
                                protocol_type=group.protocol_type, protocol_name=group.protocol_name,
                                leader_id=group.leader_or_null, error=Errors.NONE))
                        else:
                            self._update_member_and_rebalance(
                                group, member, protocols,
                                f"Updating metadata for member {member.member_id} during {state}", response_callback)
                    elif state is Stable:
                        if group.is_leader(member_id):
                            # the leader rejoining is how a client asks for a new assignment
                            # (e.g. its subscribed topics gained partitions)
                            self._update_member_and_rebalance(
                                group, member, protocols, f"leader {member.member_id} re-joining group during {state}",
                                response_callback)
                        elif not member.matches(protocols):
                            self._update_member_and_rebalance(
                                group, member, protocols,
                                f"Updating metadata for member {member.member_id} during {state}", response_callback)
                        else:
                            # a follower with unchanged metadata: it may sync with this generation
                            response_callback(JoinGroupResult(
                                members=(), member_id=member_id, generation_id=group.generation_id,
                                protocol_type=group.protocol_type, protocol_name=group.protocol_name,
                                leader_id=group.leader_or_null, error=Errors.NONE))
                    else:
                        self.logger.warning("Attempt to add rejoining member %s of group %s in unexpected group state %s",
                                            member_id, group.group_id, state)
                        response_callback(JoinGroupResult.error_result(member_id, Errors.UNKNOWN_MEMBER_ID))

    # ------------------------------------------------------------------ SyncGroup

    def handle_sync_group(self, group_id: str, generation: int, member_id: str, protocol_type: Optional[str],
                          protocol_name: Optional[str], group_instance_id: Optional[str],
                          group_assignment: Mapping[str, bytes], response_callback: SyncCallback) -> None:
        error = self._validate_group_status(group_id, ApiKeys.SYNC_GROUP)
        if error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
            # the rebalance under way was lost with the old coordinator; REBALANCE_IN_PROGRESS
            # sends the member back to JoinGroup (older clients do not know the loading error)
            response_callback(SyncGroupResult.error_result(Errors.REBALANCE_IN_PROGRESS))
            return
        if error is not None:
            response_callback(SyncGroupResult.error_result(error))
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            response_callback(SyncGroupResult.error_result(Errors.UNKNOWN_MEMBER_ID))
            return
        self._do_sync_group(group, generation, member_id, protocol_type, protocol_name, group_instance_id,
                            group_assignment, response_callback)

    def _do_sync_group(self, group: GroupMetadata, generation_id: int, member_id: str, protocol_type: Optional[str],
                       protocol_name: Optional[str], group_instance_id: Optional[str],
                       group_assignment: Mapping[str, bytes], response_callback: SyncCallback) -> None:
        with group.lock:
            if group.is_(Dead):
                response_callback(SyncGroupResult.error_result(Errors.COORDINATOR_NOT_AVAILABLE))
            elif group.is_static_member_fenced(member_id, group_instance_id, "sync-group"):
                response_callback(SyncGroupResult.error_result(Errors.FENCED_INSTANCE_ID))
            elif not group.has(member_id):
                response_callback(SyncGroupResult.error_result(Errors.UNKNOWN_MEMBER_ID))
            elif generation_id != group.generation_id:
                response_callback(SyncGroupResult.error_result(Errors.ILLEGAL_GENERATION))
            elif protocol_type is not None and group.protocol_type != protocol_type:
                response_callback(SyncGroupResult.error_result(Errors.INCONSISTENT_GROUP_PROTOCOL))
            elif protocol_name is not None and group.protocol_name != protocol_name:
                response_callback(SyncGroupResult.error_result(Errors.INCONSISTENT_GROUP_PROTOCOL))
            else:
                state = group.current_state
                if state is Empty:
                    response_callback(SyncGroupResult.error_result(Errors.UNKNOWN_MEMBER_ID))
                elif state is PreparingRebalance:
                    response_callback(SyncGroupResult.error_result(Errors.REBALANCE_IN_PROGRESS))
                elif state is CompletingRebalance:
                    group.get(member_id).awaiting_sync_callback = response_callback
                    self._remove_pending_sync_member(group, member_id)
                    if group.is_leader(member_id):
                        self.logger.info("Assignment received from leader for group %s for generation %d. The group has "
                                         "%d members, %d of which are static.", group.group_id,
                                         group.generation_id, group.size, len(group.all_static_members))
                        missing = [m for m in group.all_members if m not in group_assignment]
                        assignment = dict(group_assignment)
                        for m in missing:
                            assignment[m] = b""
                        if missing:
                            self.logger.warning("Setting empty assignments for members %s of %s for generation %d",
                                                missing, group.group_id, group.generation_id)

                        def on_stored(error: Errors) -> None:
                            with group.lock:
                                # a join may have started another rebalance meanwhile: only the
                                # generation this assignment was made for may become Stable
                                if group.is_(CompletingRebalance) and generation_id == group.generation_id:
                                    if error is not Errors.NONE:
                                        self._reset_and_propagate_assignment_error(group, error)
                                        self._maybe_prepare_rebalance(
                                            group, f"error when storing group assignment during SyncGroup "
                                                   f"(member: {member_id})")
                                    else:
                                        self._set_and_propagate_assignment(group, assignment)
                                        group.transition_to(Stable)

                        self.group_manager.store_group(group, assignment, on_stored)
                elif state is Stable:
                    self._remove_pending_sync_member(group, member_id)
                    member = group.get(member_id)
                    response_callback(SyncGroupResult(group.protocol_type, group.protocol_name, member.assignment,
                                                      Errors.NONE))
                    self._complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
                else:
                    raise RuntimeError(f"Reached unexpected condition for Dead group {group.group_id}")

    # ------------------------------------------------------------------ LeaveGroup

    def handle_leave_group(self, group_id: str, leaving_members: Sequence[MemberIdentity],
                           response_callback: Callable[[LeaveGroupResult], None]) -> None:
        error = self._validate_group_status(group_id, ApiKeys.LEAVE_GROUP)
        if error is not None:
            response_callback(LeaveGroupResult(error, ()))
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            response_callback(LeaveGroupResult(Errors.NONE, tuple(
                _member_leave_error(m, Errors.UNKNOWN_MEMBER_ID) for m in leaving_members)))
            return
        with group.lock:
            if group.is_(Dead):
                response_callback(LeaveGroupResult(Errors.COORDINATOR_NOT_AVAILABLE, ()))
                return
            member_errors = []
            for leaving in leaving_members:
                member_id = leaving.member_id
                instance_id = leaving.group_instance_id
                if member_id != UNKNOWN_MEMBER_ID and group.is_static_member_fenced(member_id, instance_id,
                                                                                   "leave-group"):
                    member_errors.append(_member_leave_error(leaving, Errors.FENCED_INSTANCE_ID))
                elif group.is_pending_member(member_id):
                    if instance_id is not None:
                        raise RuntimeError(f"the static member {instance_id} was not expected to be leaving from "
                                           f"pending member bucket with member id {member_id}")
                    self.logger.info("Pending member %s is leaving group %s.", member_id,
                                     group.group_id)
                    self._remove_pending_member_and_update_group(group, member_id)
                    self.heartbeat_purgatory.check_and_complete(MemberKey(group.group_id, member_id))
                    member_errors.append(_member_leave_error(leaving, Errors.NONE))
                elif not group.has(member_id) and not group.has_static_member(instance_id):
                    member_errors.append(_member_leave_error(leaving, Errors.UNKNOWN_MEMBER_ID))
                else:
                    if group.has_static_member(instance_id):
                        member = group.get(group.get_static_member_id(instance_id))
                    else:
                        member = group.get(member_id)
                    self._remove_heartbeat_for_leaving_member(group, member)
                    self.logger.info("Member[group.instance.id %s, member.id %s] in group %s has left, removing it from "
                                     "the group", member.group_instance_id, member.member_id,
                                     group.group_id)
                    self._remove_member_and_update_group(group, member, f"removing member {member_id} on LeaveGroup")
                    member_errors.append(_member_leave_error(leaving, Errors.NONE))
            response_callback(LeaveGroupResult(Errors.NONE, tuple(member_errors)))

    # ------------------------------------------------------------------ DeleteGroups, OffsetDelete

    def handle_delete_groups(self, group_ids: Iterable[str]) -> dict[str, Errors]:
        group_errors: dict[str, Errors] = {}
        eligible: list[GroupMetadata] = []
        for group_id in group_ids:
            error = self._validate_group_status(group_id, ApiKeys.DELETE_GROUPS)
            if error is not None:
                group_errors[group_id] = error
                continue
            group = self.group_manager.get_group(group_id)
            if group is None:
                group_errors[group_id] = (Errors.GROUP_ID_NOT_FOUND if self.group_manager.group_not_exists(group_id)
                                          else Errors.NOT_COORDINATOR)
                continue
            with group.lock:
                state = group.current_state
                if state is Empty:
                    group.transition_to(Dead)
                    eligible.append(group)
                elif state is not Dead:
                    group_errors[group_id] = Errors.NON_EMPTY_GROUP
            if state is Dead:
                # asked outside the group's lock: the partition lock comes first
                group_errors[group_id] = (Errors.GROUP_ID_NOT_FOUND if self.group_manager.group_not_exists(group_id)
                                          else Errors.NOT_COORDINATOR)
        if eligible:
            offsets_removed = self.group_manager.cleanup_group_metadata(eligible, lambda g: g.remove_all_offsets())
            for group in eligible:
                group_errors[group.group_id] = Errors.NONE
            self.logger.info("The following groups were deleted: %s. A total of %d offsets were removed.",
                             ", ".join(g.group_id for g in eligible), offsets_removed)
        return group_errors

    def handle_delete_offsets(self, group_id: str, partitions: Sequence[TopicPartition]
                              ) -> tuple[Errors, dict[TopicPartition, Errors]]:
        group_error = Errors.NONE
        partition_errors: dict[TopicPartition, Errors] = {}
        eligible: list[TopicPartition] = []
        error = self._validate_group_status(group_id, ApiKeys.OFFSET_DELETE)
        if error is not None:
            return error, {}
        group = self.group_manager.get_group(group_id)
        if group is None:
            return (Errors.GROUP_ID_NOT_FOUND if self.group_manager.group_not_exists(group_id)
                    else Errors.NOT_COORDINATOR), {}
        with group.lock:
            state = group.current_state
            if state is Dead:
                pass
            elif state is Empty:
                eligible = list(partitions)
            elif group.is_consumer_group:
                # offsets of topics the members still consume cannot go
                for tp in partitions:
                    if group.is_subscribed_to_topic(tp.topic):
                        partition_errors[tp] = Errors.GROUP_SUBSCRIBED_TO_TOPIC
                    else:
                        eligible.append(tp)
            else:
                group_error = Errors.NON_EMPTY_GROUP
        if state is Dead:
            # asked outside the group's lock: the partition lock comes first
            group_error = (Errors.GROUP_ID_NOT_FOUND if self.group_manager.group_not_exists(group_id)
                           else Errors.NOT_COORDINATOR)
        if eligible:
            offsets_removed = self.group_manager.cleanup_group_metadata([group], lambda g: g.remove_offsets(eligible))
            for tp in eligible:
                partition_errors[tp] = Errors.NONE
            self.logger.info("The following offsets of the group %s were deleted: %s. A total of %d offsets were "
                             "removed.", group_id, ", ".join(str(tp) for tp in eligible), offsets_removed)
        if group_error is not Errors.NONE:
            return group_error, {}
        return group_error, partition_errors

    # ------------------------------------------------------------------ Heartbeat

    def handle_heartbeat(self, group_id: str, member_id: str, group_instance_id: Optional[str], generation_id: int,
                         response_callback: Callable[[Errors], None]) -> None:
        error = self._validate_group_status(group_id, ApiKeys.HEARTBEAT)
        if error is not None:
            # while loading, a heartbeat cannot be judged: let it pass
            response_callback(Errors.NONE if error is Errors.COORDINATOR_LOAD_IN_PROGRESS else error)
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            response_callback(Errors.UNKNOWN_MEMBER_ID)
            return
        with group.lock:
            if group.is_(Dead):
                response_callback(Errors.COORDINATOR_NOT_AVAILABLE)
            elif group.is_static_member_fenced(member_id, group_instance_id, "heartbeat"):
                response_callback(Errors.FENCED_INSTANCE_ID)
            elif not group.has(member_id):
                response_callback(Errors.UNKNOWN_MEMBER_ID)
            elif generation_id != group.generation_id:
                response_callback(Errors.ILLEGAL_GENERATION)
            else:
                state = group.current_state
                if state is Empty:
                    response_callback(Errors.UNKNOWN_MEMBER_ID)
                elif state in (CompletingRebalance, Stable):
                    # a heartbeat right after the JoinGroup answer counts as a normal one
                    self._complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
                    response_callback(Errors.NONE)
                elif state is PreparingRebalance:
                    self._complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
                    response_callback(Errors.REBALANCE_IN_PROGRESS)
                else:
                    raise RuntimeError(f"Reached unexpected condition for Dead group {group_id}")

    # ------------------------------------------------------------------ OffsetCommit

    def handle_txn_commit_offsets(self, group_id: str, producer_id: int, producer_epoch: int, member_id: str,
                                  group_instance_id: Optional[str], generation_id: int,
                                  offset_metadata: Mapping[TopicPartition, OffsetAndMetadata],
                                  response_callback: Callable[[dict[TopicPartition, Errors]], None]) -> None:
        error = self._validate_group_status(group_id, ApiKeys.TXN_OFFSET_COMMIT)
        if error is not None:
            response_callback({tp: error for tp in offset_metadata})
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            group = self.group_manager.add_group(GroupMetadata(group_id, Empty, self.time))
        with group.lock:
            if group.is_(Dead):
                response_callback({tp: Errors.COORDINATOR_NOT_AVAILABLE for tp in offset_metadata})
            elif group.is_static_member_fenced(member_id, group_instance_id, "txn-commit-offsets"):
                response_callback({tp: Errors.FENCED_INSTANCE_ID for tp in offset_metadata})
            elif member_id != UNKNOWN_MEMBER_ID and not group.has(member_id):
                response_callback({tp: Errors.UNKNOWN_MEMBER_ID for tp in offset_metadata})
            elif generation_id >= 0 and generation_id != group.generation_id:
                response_callback({tp: Errors.ILLEGAL_GENERATION for tp in offset_metadata})
            else:
                self.group_manager.store_offsets(group, member_id, offset_metadata, response_callback, producer_id,
                                                 producer_epoch)

    def handle_commit_offsets(self, group_id: str, member_id: str, group_instance_id: Optional[str],
                              generation_id: int, offset_metadata: Mapping[TopicPartition, OffsetAndMetadata],
                              response_callback: Callable[[dict[TopicPartition, Errors]], None]) -> None:
        error = self._validate_group_status(group_id, ApiKeys.OFFSET_COMMIT)
        if error is not None:
            response_callback({tp: error for tp in offset_metadata})
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            if generation_id < 0:
                # a simple consumer: Kafka only stores its offsets, no membership
                group = self.group_manager.add_group(GroupMetadata(group_id, Empty, self.time))
                self._do_commit_offsets(group, member_id, group_instance_id, generation_id, offset_metadata,
                                        response_callback)
            else:
                # a member of a generation this coordinator never saw
                response_callback({tp: Errors.ILLEGAL_GENERATION for tp in offset_metadata})
            return
        self._do_commit_offsets(group, member_id, group_instance_id, generation_id, offset_metadata,
                                response_callback)

    def _do_commit_offsets(self, group: GroupMetadata, member_id: str, group_instance_id: Optional[str],
                           generation_id: int, offset_metadata: Mapping[TopicPartition, OffsetAndMetadata],
                           response_callback: Callable[[dict[TopicPartition, Errors]], None]) -> None:
        with group.lock:
            if group.is_(Dead):
                response_callback({tp: Errors.COORDINATOR_NOT_AVAILABLE for tp in offset_metadata})
            elif group.is_static_member_fenced(member_id, group_instance_id, "commit-offsets"):
                response_callback({tp: Errors.FENCED_INSTANCE_ID for tp in offset_metadata})
            elif generation_id < 0 and group.is_(Empty):
                # the group only uses Kafka to store offsets
                self.group_manager.store_offsets(group, member_id, offset_metadata, response_callback)
            elif not group.has(member_id):
                response_callback({tp: Errors.UNKNOWN_MEMBER_ID for tp in offset_metadata})
            elif generation_id != group.generation_id:
                response_callback({tp: Errors.ILLEGAL_GENERATION for tp in offset_metadata})
            else:
                state = group.current_state
                if state in (Stable, PreparingRebalance):
                    # commits during PreparingRebalance are still accepted: the member learns
                    # of the rebalance from its next heartbeat
                    self._complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
                    self.group_manager.store_offsets(group, member_id, offset_metadata, response_callback)
                elif state is CompletingRebalance:
                    # the member has this generation's JoinGroup answer but not its assignment yet
                    response_callback({tp: Errors.REBALANCE_IN_PROGRESS for tp in offset_metadata})
                else:
                    raise RuntimeError(f"Logic error: unexpected group state {state}")

    def schedule_handle_txn_completion(self, producer_id: int, offsets_partitions: Iterable[TopicPartition],
                                       is_commit: bool) -> None:
        partitions = set()
        for tp in offsets_partitions:
            if tp.topic != GROUP_METADATA_TOPIC_NAME:
                raise ValueError(f"{tp} is not a partition of {GROUP_METADATA_TOPIC_NAME}")
            partitions.add(tp.partition)
        self.group_manager.schedule_handle_txn_completion(producer_id, partitions, is_commit)

    # ------------------------------------------------------------------ OffsetFetch, ListGroups, DescribeGroups

    def handle_fetch_offsets(self, group_id: str, require_stable: bool,
                             partitions: Optional[Sequence[TopicPartition]] = None
                             ) -> tuple[Errors, dict[TopicPartition, tuple[int, Optional[int], str, Errors]]]:
        error = self._validate_group_status(group_id, ApiKeys.OFFSET_FETCH)
        if error is not None:
            return error, {}
        # offsets are answered in any group state: simple consumers have no membership at all
        return Errors.NONE, self.group_manager.get_offsets(group_id, require_stable, partitions)

    def handle_list_groups(self, states: Iterable[str] = ()) -> tuple[Errors, list[GroupOverview]]:
        if not self.is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE, []
        error = Errors.COORDINATOR_LOAD_IN_PROGRESS if self.group_manager.is_loading else Errors.NONE
        wanted = set(states)
        overviews = []
        for group in self.group_manager.current_groups:
            with group.lock:
                overview = group.overview()
            if not wanted or overview.state in wanted:
                overviews.append(overview)
        return error, overviews

    def handle_describe_group(self, group_id: str) -> tuple[Errors, GroupSummary]:
        error = self._validate_group_status(group_id, ApiKeys.DESCRIBE_GROUPS)
        if error is not None:
            return error, EMPTY_GROUP
        group = self.group_manager.get_group(group_id)
        if group is None:
            return Errors.NONE, DEAD_GROUP
        with group.lock:
            return Errors.NONE, group.summary()

    def handle_deleted_partitions(self, topic_partitions: Sequence[TopicPartition]) -> None:
        removed = self.group_manager.cleanup_group_metadata(self.group_manager.current_groups,
                                                            lambda g: g.remove_offsets(topic_partitions))
        self.logger.info("Removed %d offsets associated with deleted partitions: %s.", removed,
                         ", ".join(str(tp) for tp in topic_partitions))

    # ------------------------------------------------------------------ validation

    @staticmethod
    def _is_valid_group_id(group_id: Optional[str], api: ApiKeys) -> bool:
        if api in (ApiKeys.OFFSET_COMMIT, ApiKeys.OFFSET_FETCH, ApiKeys.DESCRIBE_GROUPS, ApiKeys.DELETE_GROUPS):
            # the empty group id is kept for old offset-only clients and to inspect/delete it
            return group_id is not None
        return group_id is not None and group_id != ""

    def _validate_group_status(self, group_id: Optional[str], api: ApiKeys) -> Optional[Errors]:
        """None when the group id is valid and its partition is loaded here; else the error."""
        if not self._is_valid_group_id(group_id, api):
            return Errors.INVALID_GROUP_ID
        if not self.is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if self.group_manager.is_group_loading(group_id):
            return Errors.COORDINATOR_LOAD_IN_PROGRESS
        if not self.group_manager.is_group_local(group_id):
            return Errors.NOT_COORDINATOR
        return None

    # ------------------------------------------------------------------ partition moves

    def _on_group_unloaded(self, group: GroupMetadata) -> None:
        with group.lock:
            self.logger.info("Unloading group metadata for %s with generation %d", group.group_id,
                             group.generation_id)
            previous_state = group.current_state
            group.transition_to(Dead)
            if previous_state is PreparingRebalance:
                for member in group.all_member_metadata:
                    group.maybe_invoke_join_callback(member, JoinGroupResult.error_result(member.member_id,
                                                                                          Errors.NOT_COORDINATOR))
                self.rebalance_purgatory.check_and_complete(GroupJoinKey(group.group_id))
            elif previous_state in (Stable, CompletingRebalance):
                for member in group.all_member_metadata:
                    group.maybe_invoke_sync_callback(member, SyncGroupResult.error_result(Errors.NOT_COORDINATOR))
                    self.heartbeat_purgatory.check_and_complete(MemberKey(group.group_id, member.member_id))
            self._remove_sync_expiration(group)

    def _on_group_loaded(self, group: GroupMetadata) -> None:
        with group.lock:
            self.logger.info("Loading group metadata for %s with generation %d", group.group_id,
                             group.generation_id)
            if not (group.is_(Stable) or group.is_(Empty)):
                raise AssertionError(f"Loaded group {group.group_id} in state {group.current_state}")
            if self._group_is_over_capacity(group):
                self.prepare_rebalance(group, f"Freshly-loaded group is over capacity "
                                              f"({self.group_config.group_max_size}). Rebalancing in order to give a "
                                              "chance for consumers to commit offsets")
            for member in group.all_member_metadata:
                self._complete_and_schedule_next_heartbeat_expiration(group, member)

    def on_election(self, offset_topic_partition_id: int, coordinator_epoch: int) -> None:
        """This broker now leads the partition: load its groups and start serving them."""
        self.logger.info("Elected as the group coordinator for partition %d in epoch %d",
                         offset_topic_partition_id, coordinator_epoch)
        self.group_manager.schedule_load_group_and_offsets(offset_topic_partition_id, coordinator_epoch,
                                                           self._on_group_loaded)

    def on_resignation(self, offset_topic_partition_id: int, coordinator_epoch: Optional[int]) -> None:
        """This broker no longer leads the partition: drop its groups."""
        self.logger.info("Resigned as the group coordinator for partition %d in epoch %s",
                         offset_topic_partition_id, coordinator_epoch)
        self.group_manager.remove_groups_for_partition(offset_topic_partition_id, coordinator_epoch,
                                                       self._on_group_unloaded)

    # ------------------------------------------------------------------ assignment propagation

    def _set_and_propagate_assignment(self, group: GroupMetadata, assignment: Mapping[str, bytes]) -> None:
        assert group.is_(CompletingRebalance)
        for member in group.all_member_metadata:
            member.assignment = assignment[member.member_id]
        self._propagate_assignment(group, Errors.NONE)

    def _reset_and_propagate_assignment_error(self, group: GroupMetadata, error: Errors) -> None:
        assert group.is_(CompletingRebalance)
        for member in group.all_member_metadata:
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: GroupMetadata, error: Errors) -> None:
        if error is Errors.NONE:
            protocol_type, protocol_name = group.protocol_type, group.protocol_name
        else:
            protocol_type, protocol_name = None, None
        for member in group.all_member_metadata:
            if not member.assignment and error is Errors.NONE:
                self.logger.warning("Sending empty assignment to member %s of %s for generation %d with no errors",
                                    member.member_id, group.group_id, group.generation_id)
            if group.maybe_invoke_sync_callback(member, SyncGroupResult(protocol_type, protocol_name,
                                                                        member.assignment, error)):
                # a session that expired while the member waited on its sync was ignored: start
                # the member's session afresh now that it has its answer
                self._complete_and_schedule_next_heartbeat_expiration(group, member)

    # ------------------------------------------------------------------ heartbeats and members

    def _complete_and_schedule_next_heartbeat_expiration(self, group: GroupMetadata, member: MemberMetadata) -> None:
        self._complete_and_schedule_next_expiration(group, member, member.session_timeout_ms)

    def _complete_and_schedule_next_expiration(self, group: GroupMetadata, member: MemberMetadata,
                                               timeout_ms: int) -> None:
        member_key = MemberKey(group.group_id, member.member_id)
        member.heartbeat_satisfied = True
        self.heartbeat_purgatory.check_and_complete(member_key)
        member.heartbeat_satisfied = False
        delayed_heartbeat = DelayedHeartbeat(self, group, member.member_id, False, timeout_ms)
        self.heartbeat_purgatory.try_complete_else_watch(delayed_heartbeat, [member_key])

    def _add_pending_member_expiration(self, group: GroupMetadata, pending_member_id: str, timeout_ms: int) -> None:
        key = MemberKey(group.group_id, pending_member_id)
        self.heartbeat_purgatory.try_complete_else_watch(
            DelayedHeartbeat(self, group, pending_member_id, True, timeout_ms), [key])

    def _remove_heartbeat_for_leaving_member(self, group: GroupMetadata, member: MemberMetadata) -> None:
        member.is_leaving = True
        self.heartbeat_purgatory.check_and_complete(MemberKey(group.group_id, member.member_id))

    def _add_member_and_rebalance(self, rebalance_timeout_ms: int, session_timeout_ms: int, member_id: str,
                                  group_instance_id: Optional[str], client_id: str, client_host: str,
                                  protocol_type: str, protocols: Sequence[Protocol], group: GroupMetadata,
                                  callback: JoinCallback) -> None:
        member = MemberMetadata(member_id, group_instance_id, client_id, client_host, rebalance_timeout_ms,
                                session_timeout_ms, protocol_type, protocols)
        member.is_new = True
        # new members of a first generation may stretch the initial delay
        if group.is_(PreparingRebalance) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member, callback)
        # A new member cannot heartbeat (it has no id yet) and its muted socket hides a
        # disconnect, so its parked join times out on its own; a client still there retries.
        self._complete_and_schedule_next_expiration(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        if member.is_static_member:
            self.logger.info("Adding new static member %s to group %s with member id %s.",
                             group_instance_id, group.group_id, member_id)
            group.add_static_member(group_instance_id, member_id)
        else:
            group.remove_pending_member(member_id)
        self._maybe_prepare_rebalance(group, f"Adding new member {member_id} with group instance id "
                                             f"{group_instance_id}")

    def _update_static_member_and_rebalance(self, group: GroupMetadata, new_member_id: str,
                                            group_instance_id: Optional[str], protocols: Sequence[Protocol],
                                            response_callback: JoinCallback) -> None:
        old_member_id = group.get_static_member_id(group_instance_id)
        self.logger.info("Static member %s of group %s with unknown member id rejoins, assigning new member id %s, while "
                         "old member id %s will be removed.", group_instance_id, group.group_id,
                         new_member_id, old_member_id)
        current_leader = group.leader_or_null
        member = group.replace_group_instance(old_member_id, new_member_id, group_instance_id)
        # the old id's heartbeat expires without effect: the group no longer has that id
        self._complete_and_schedule_next_heartbeat_expiration(group, member)
        known_static_member = group.get(new_member_id)
        old_protocols = list(known_static_member.supported_protocols)
        group.update_member(known_static_member, protocols, response_callback)
        state = group.current_state
        if state is Stable:
            # no rebalance unless the group's protocol would change; the new id is persisted
            selected_protocol_of_next_generation = group.select_protocol()
            if group.protocol_name == selected_protocol_of_next_generation:
                self.logger.info("Static member which joins during Stable stage and doesn't affect selectProtocol will "
                                 "not trigger rebalance.")
                group_assignment = {m.member_id: m.assignment for m in group.all_member_metadata}

                def on_stored(error: Errors) -> None:
                    with group.lock:
                        if error is not Errors.NONE:
                            self.logger.warning("Failed to persist metadata for group %s: %s",
                                                group.group_id, error.message)
                            # undo: the old member id is the one on record
                            group.update_member(known_static_member, old_protocols, None)
                            old_member = group.replace_group_instance(new_member_id, old_member_id,
                                                                      group_instance_id)
                            self._complete_and_schedule_next_heartbeat_expiration(group, old_member)
                            response_callback(JoinGroupResult(
                                members=(), member_id=UNKNOWN_MEMBER_ID, generation_id=group.generation_id,
                                protocol_type=group.protocol_type, protocol_name=group.protocol_name,
                                leader_id=current_leader, error=error))
                        else:
                            # The old leader id is returned on purpose: the rejoined member must
                            # not believe itself leader and compute an assignment that a Stable
                            # group would never distribute.
                            group.maybe_invoke_join_callback(member, JoinGroupResult(
                                members=(), member_id=new_member_id, generation_id=group.generation_id,
                                protocol_type=group.protocol_type, protocol_name=group.protocol_name,
                                leader_id=current_leader, error=Errors.NONE))

                self.group_manager.store_group(group, group_assignment, on_stored)
            else:
                self._maybe_prepare_rebalance(
                    group, f"Group's selectedProtocol will change because static member {member.member_id} with "
                           f"instance id {group_instance_id} joined with change of protocol")
        elif state is CompletingRebalance:
            # the leader may already be computing an assignment for the old member id
            self.prepare_rebalance(group, f"Updating metadata for static member {member.member_id} with instance "
                                          f"id {group_instance_id}")
        elif state in (Empty, Dead):
            raise RuntimeError(f"Group {group.group_id} was not supposed to be in the state {state} when the unknown "
                               f"static member {group_instance_id} rejoins.")
        # PreparingRebalance: the join simply waits with the others

    def _update_member_and_rebalance(self, group: GroupMetadata, member: MemberMetadata,
                                     protocols: Sequence[Protocol], reason: str, callback: JoinCallback) -> None:
        group.update_member(member, protocols, callback)
        self._maybe_prepare_rebalance(group, reason)

    def _maybe_prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        with group.lock:
            if group.can_rebalance:
                self.prepare_rebalance(group, reason)

    def prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        # members waiting on a sync of the generation being abandoned must rejoin
        if group.is_(CompletingRebalance):
            self._reset_and_propagate_assignment_error(group, Errors.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(group)
        if group.is_(Empty):
            delay = self.group_config.group_initial_rebalance_delay_ms
            delayed_rebalance: DelayedJoin = InitialDelayedJoin(
                self, self.rebalance_purgatory, group, delay, delay, max(group.rebalance_timeout_ms - delay, 0))
        else:
            delayed_rebalance = DelayedJoin(self, group, group.rebalance_timeout_ms)
        group.transition_to(PreparingRebalance)
        self.logger.info("Preparing to rebalance group %s in state %s with old generation %d (%s-%d) (reason: %s)",
                         group.group_id, group.current_state, group.generation_id,
                         GROUP_METADATA_TOPIC_NAME, self.partition_for(group.group_id), reason)
        self.rebalance_purgatory.try_complete_else_watch(delayed_rebalance, [GroupJoinKey(group.group_id)])

    def _remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata, reason: str) -> None:
        # A new member may still have its first join parked: answer it before it goes, so a
        # client that is still alive rejoins.
        group.maybe_invoke_join_callback(member, JoinGroupResult.error_result(UNKNOWN_MEMBER_ID,
                                                                              Errors.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        state = group.current_state
        if state in (Stable, CompletingRebalance):
            self._maybe_prepare_rebalance(group, reason)
        elif state is PreparingRebalance:
            self.rebalance_purgatory.check_and_complete(GroupJoinKey(group.group_id))

    def _remove_pending_member_and_update_group(self, group: GroupMetadata, member_id: str) -> None:
        group.remove_pending_member(member_id)
        if group.is_(PreparingRebalance):
            self.rebalance_purgatory.check_and_complete(GroupJoinKey(group.group_id))

    # ------------------------------------------------------------------ delayed operation callbacks

    def try_complete_join(self, group: GroupMetadata, force_complete: Callable[[], bool]) -> bool:
        with group.lock:
            return force_complete() if group.has_all_members_joined else False

    def on_complete_join(self, group: GroupMetadata) -> None:
        with group.lock:
            not_yet_rejoined_dynamic = {mid: m for mid, m in group.not_yet_rejoined_members().items()
                                        if not m.is_static_member}
            if not_yet_rejoined_dynamic:
                self.logger.info("Group %s removed dynamic members who haven't joined: %s",
                                 group.group_id, set(not_yet_rejoined_dynamic))
                for failed_member in not_yet_rejoined_dynamic.values():
                    self._remove_heartbeat_for_leaving_member(group, failed_member)
                    group.remove(failed_member.member_id)
            if group.is_(Dead):
                self.logger.info("Group %s is dead, skipping rebalance stage", group.group_id)
            elif not group.maybe_elect_new_joined_leader() and group.all_members:
                # nobody rejoined (only static members remain): wait another round until their
                # sessions expire
                self.logger.error("Group %s could not complete rebalance because no members rejoined",
                                  group.group_id)
                self.rebalance_purgatory.try_complete_else_watch(DelayedJoin(self, group, group.rebalance_timeout_ms),
                                                                 [GroupJoinKey(group.group_id)])
            else:
                group.init_next_generation()
                if group.is_(Empty):
                    self.logger.info("Group %s with generation %d is now empty (%s-%d)", group.group_id,
                                     group.generation_id, GROUP_METADATA_TOPIC_NAME, self.partition_for(group.group_id))

                    def on_stored(error: Errors) -> None:
                        if error is not Errors.NONE:
                            # harmless: the previous generation comes back after a failover and
                            # its members, long gone, simply time out
                            self.logger.warning("Failed to write empty metadata for group %s: %s",
                                                group.group_id, error.message)

                    self.group_manager.store_group(group, {}, on_stored)
                else:
                    self.logger.info("Stabilized group %s generation %d (%s-%d) with %d members",
                                     group.group_id, group.generation_id, GROUP_METADATA_TOPIC_NAME,
                                     self.partition_for(group.group_id), group.size)
                    for member in group.all_member_metadata:
                        join_result = JoinGroupResult(
                            members=tuple(group.current_member_metadata()) if group.is_leader(member.member_id)
                            else (),
                            member_id=member.member_id, generation_id=group.generation_id,
                            protocol_type=group.protocol_type, protocol_name=group.protocol_name,
                            leader_id=group.leader_or_null, error=Errors.NONE)
                        group.maybe_invoke_join_callback(member, join_result)
                        self._complete_and_schedule_next_heartbeat_expiration(group, member)
                        member.is_new = False
                        group.add_pending_sync_member(member.member_id)
                    self._schedule_pending_sync(group)

    def _remove_pending_sync_member(self, group: GroupMetadata, member_id: str) -> None:
        group.remove_pending_sync_member(member_id)
        self._maybe_complete_sync_expiration(group)

    def _remove_sync_expiration(self, group: GroupMetadata) -> None:
        group.clear_pending_sync_members()
        self._maybe_complete_sync_expiration(group)

    def _maybe_complete_sync_expiration(self, group: GroupMetadata) -> None:
        self.rebalance_purgatory.check_and_complete(GroupSyncKey(group.group_id))

    def _schedule_pending_sync(self, group: GroupMetadata) -> None:
        delayed_sync = DelayedSync(self, group, group.generation_id, group.rebalance_timeout_ms)
        self.rebalance_purgatory.try_complete_else_watch(delayed_sync, [GroupSyncKey(group.group_id)])

    def try_complete_pending_sync(self, group: GroupMetadata, generation_id: int,
                                  force_complete: Callable[[], bool]) -> bool:
        with group.lock:
            if generation_id != group.generation_id:
                return force_complete()
            if group.current_state in (Dead, Empty, PreparingRebalance):
                return force_complete()
            if group.has_received_sync_from_all_members:
                return force_complete()
            return False

    def on_expire_pending_sync(self, group: GroupMetadata, generation_id: int) -> None:
        with group.lock:
            if generation_id != group.generation_id:
                self.logger.error("Received unexpected notification of sync expiration for %s with an old generation %d "
                                  "while the group has %d.", group.group_id, generation_id,
                                  group.generation_id)
            elif group.current_state in (Dead, Empty, PreparingRebalance):
                self.logger.error("Received unexpected notification of sync expiration after group %s already "
                                  "transitioned to the %s state.", group.group_id, group.current_state)
            elif not group.has_received_sync_from_all_members:
                pending_sync_members = group.all_pending_sync_members
                for member_id in pending_sync_members:
                    member = group.get(member_id)
                    self._remove_heartbeat_for_leaving_member(group, member)
                    group.remove(member_id)
                self.logger.debug("Group %s removed members who haven't sent their sync request: %s",
                                  group.group_id, set(pending_sync_members))
                self.prepare_rebalance(group, f"Removing {set(pending_sync_members)} on pending sync request "
                                              "expiration")

    def try_complete_heartbeat(self, group: GroupMetadata, member_id: str, is_pending: bool,
                               force_complete: Callable[[], bool]) -> bool:
        with group.lock:
            if group.is_(Dead):
                # unloaded or deleted: nothing left to watch
                return force_complete()
            if is_pending:
                # the pending member came back with its id and is a member now
                return force_complete() if group.has(member_id) else False
            if self.should_complete_non_pending_heartbeat(group, member_id):
                return force_complete()
            return False

    def should_complete_non_pending_heartbeat(self, group: GroupMetadata, member_id: str) -> bool:
        if group.has(member_id):
            member = group.get(member_id)
            return member.has_satisfied_heartbeat or member.is_leaving
        self.logger.info("Member id %s was not found in %s during heartbeat completion check",
                         member_id, group.group_id)
        return True

    def on_expire_heartbeat(self, group: GroupMetadata, member_id: str, is_pending: bool) -> None:
        with group.lock:
            if group.is_(Dead):
                self.logger.info("Received notification of heartbeat expiration for member %s after group %s had "
                                 "already been unloaded or deleted.", member_id, group.group_id)
            elif is_pending:
                self.logger.info("Pending member %s in group %s has been removed after session timeout expiration.",
                                 member_id, group.group_id)
                self._remove_pending_member_and_update_group(group, member_id)
            elif not group.has(member_id):
                self.logger.debug("Member %s has already been removed from the group.", member_id)
            else:
                member = group.get(member_id)
                if not member.has_satisfied_heartbeat:
                    self.logger.info("Member %s in group %s has failed, removing it from the group",
                                     member.member_id, group.group_id)
                    self._remove_member_and_update_group(group, member, f"removing member {member.member_id} on "
                                                                        "heartbeat expiration")

    # ------------------------------------------------------------------ misc

    def partition_for(self, group: str) -> int:
        return self.group_manager.partition_for(group)

    def _group_is_over_capacity(self, group: GroupMetadata) -> bool:
        return group.size > self.group_config.group_max_size


__all__ = [
    "DEAD_GROUP",
    "EMPTY_GROUP",
    "GroupCoordinator",
    "JoinGroupResult",
    "LeaveGroupResult",
    "LeaveMemberResponse",
    "MemberIdentity",
    "SyncGroupResult",
    "UNKNOWN_MEMBER_ID",
]
