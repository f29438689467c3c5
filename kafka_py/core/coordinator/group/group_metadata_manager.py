"""Port of core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala (Kafka 2.8.2).

The GroupMetadataManager keeps the groups this broker coordinates and their committed
offsets, and makes them durable in the compacted internal topic __consumer_offsets:

* a group belongs to partition ``abs(hashCode(group id)) % offsets.topic.num.partitions``
  (Java's String.hashCode and Kafka's Utils.abs, so every Kafka client and broker agrees);
  this broker coordinates the groups of the __consumer_offsets partitions it leads;
* an offset commit is one record per partition (key OffsetCommitKey, value
  OffsetCommitValue), a group's membership after each rebalance one record (key
  GroupMetadataKey, value GroupMetadataValue) -- Kafka's own binary formats, see
  group_metadata_schemas.py -- appended through ``ReplicaManager.append_records`` as the
  coordinator (so internal-topic writes are allowed) with ``offsets.commit.required.acks``;
  the cache changes and the client is answered only once the append completes;
* deleting a group or offset appends tombstones (null values) that compaction later drops;
* on becoming leader of a partition the manager reads that partition's log from the start
  (last value per key wins, tombstones remove) on its one scheduler thread, answering
  COORDINATOR_LOAD_IN_PROGRESS for the partition's groups meanwhile; on losing the
  leadership it drops them from the cache. Leader epochs order racing load and unload;
* every ``offsets.retention.check.interval.ms`` expired offsets are removed (see
  GroupMetadata.remove_expired_offsets) and empty groups without offsets become Dead.

Lock order: ``partition_lock`` before any group's lock.
"""
from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.group.group_metadata import (
    CONSUMER_PROTOCOL_TYPE,
    CommitRecordMetadataAndOffset,
    Dead,
    Empty,
    GroupMetadata,
    GroupState,
    Stable,
)
from kafka_py.core.coordinator.group.group_metadata_schemas import GroupMetadataKey as GroupMetadataKeyData
from kafka_py.core.coordinator.group.group_metadata_schemas import (
    GroupMetadataValue,
    MemberMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    Readable,
    read_version,
    to_version_prefixed_bytes,
)
from kafka_py.core.coordinator.group.member_metadata import MemberMetadata
from kafka_py.core.coordinator.group.offset_and_metadata import OffsetAndMetadata
from kafka_py.core.coordinator.group.offset_config import OffsetConfig
from kafka_py.log.log_offset_metadata import FetchIsolation
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.clients.common.protocol.codec import SchemaException
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.record.control_record_type import ControlRecordType
from kafka_py.clients.common.record.default_record_batch import (
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    SimpleRecord,
)
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.core.utils.crash_points import crash_point
from kafka_py.core.utils.kafka_scheduler import KafkaScheduler, Scheduler
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time
from kafka_py.clients.common.utils.utils import utils_abs

logger = logging.getLogger(__name__)

GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"
INVALID_OFFSET = -1  # OffsetFetchResponse.INVALID_OFFSET
DEFAULT_TIMESTAMP = -1  # OffsetCommitRequest.DEFAULT_TIMESTAMP


# ---------------------------------------------------------------------------- hashing


def java_string_hash_code(s: str) -> int:
    """Java's ``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, in
    wrapping 32-bit signed arithmetic. Characters beyond the BMP count as two code units
    (their surrogate pair), as in Java."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


# ---------------------------------------------------------------------------- parsed keys


@dataclass(frozen=True, slots=True)
class GroupTopicPartition:
    group: str
    topic_partition: TopicPartition

    def __str__(self) -> str:
        return f"[{self.group},{self.topic_partition.topic},{self.topic_partition.partition}]"


@dataclass(frozen=True, slots=True)
class OffsetKey:
    """A parsed offset commit key (key schema version 0 or 1)."""

    version: int
    key: GroupTopicPartition

    def __str__(self) -> str:
        return str(self.key)


@dataclass(frozen=True, slots=True)
class GroupMetadataKey:
    """A parsed group metadata key (key schema version 2)."""

    version: int
    key: str

    def __str__(self) -> str:
        return self.key


BaseKey = Union[OffsetKey, GroupMetadataKey]


# ---------------------------------------------------------------------------- record formats


def offset_commit_key(group_id: str, topic_partition: TopicPartition) -> bytes:
    return to_version_prefixed_bytes(OffsetCommitKey.HIGHEST_SUPPORTED_VERSION,
                                     OffsetCommitKey(group_id, topic_partition.topic, topic_partition.partition))


def group_metadata_key(group_id: str) -> bytes:
    return to_version_prefixed_bytes(GroupMetadataKeyData.HIGHEST_SUPPORTED_VERSION, GroupMetadataKeyData(group_id))


def offset_commit_value(offset_and_metadata: OffsetAndMetadata, version: Optional[int] = None) -> bytes:
    """The value of an offset commit record. A 2.8 broker (inter.broker.protocol.version 2.1+)
    writes v3, or v1 when the commit carries an explicit expire timestamp (only v1 has one)."""
    if version is None:
        version = 1 if offset_and_metadata.expire_timestamp is not None else 3
    leader_epoch = offset_and_metadata.leader_epoch
    expire_timestamp = offset_and_metadata.expire_timestamp
    return to_version_prefixed_bytes(version, OffsetCommitValue(
        offset=offset_and_metadata.offset,
        metadata=offset_and_metadata.metadata,
        commit_timestamp=offset_and_metadata.commit_timestamp,
        leader_epoch=NO_PARTITION_LEADER_EPOCH if leader_epoch is None else leader_epoch,
        expire_timestamp=DEFAULT_TIMESTAMP if expire_timestamp is None else expire_timestamp))


def group_metadata_value(group: GroupMetadata, assignment: Mapping[str, bytes], version: int = 3) -> bytes:
    """The value of a group metadata record (v3 for a 2.8 broker: IBP 2.3+)."""
    members = []
    for member in group.all_member_metadata:
        if group.protocol_name is None:
            raise RuntimeError("Attempted to write non-empty group metadata with no defined protocol.")
        if member.member_id not in assignment:
            raise RuntimeError(f"Attempted to write member {member.member_id} of group {group.group_id} with no "
                               "assignment.")
        members.append(MemberMetadataValue(
            member_id=member.member_id, client_id=member.client_id, client_host=member.client_host,
            session_timeout=member.session_timeout_ms, subscription=member.metadata(group.protocol_name),
            assignment=bytes(assignment[member.member_id]), rebalance_timeout=member.rebalance_timeout_ms,
            group_instance_id=member.group_instance_id))
    return to_version_prefixed_bytes(version, GroupMetadataValue(
        protocol_type=group.protocol_type or "", generation=group.generation_id, protocol=group.protocol_name,
        leader=group.leader_or_null, members=tuple(members),
        current_state_timestamp=group.current_state_timestamp_or_default))


def read_message_key(buffer) -> BaseKey:
    version, reader = read_version(buffer)
    if OffsetCommitKey.LOWEST_SUPPORTED_VERSION <= version <= OffsetCommitKey.HIGHEST_SUPPORTED_VERSION:
        key = OffsetCommitKey.read(reader, version)
        return OffsetKey(version, GroupTopicPartition(key.group, TopicPartition(key.topic, key.partition)))
    if GroupMetadataKeyData.LOWEST_SUPPORTED_VERSION <= version <= GroupMetadataKeyData.HIGHEST_SUPPORTED_VERSION:
        return GroupMetadataKey(version, GroupMetadataKeyData.read(reader, version).group)
    raise SchemaException(f"Unknown group metadata message version: {version}")


def read_offset_message_value(buffer) -> Optional[OffsetAndMetadata]:
    """The committed offset of a record value; None for a tombstone."""
    if buffer is None:
        return None
    version, reader = read_version(buffer)
    if not OffsetCommitValue.LOWEST_SUPPORTED_VERSION <= version <= OffsetCommitValue.HIGHEST_SUPPORTED_VERSION:
        raise SchemaException(f"Unknown offset message version: {version}")
    value = OffsetCommitValue.read(reader, version)
    return OffsetAndMetadata(
        offset=value.offset,
        leader_epoch=None if value.leader_epoch == NO_PARTITION_LEADER_EPOCH else value.leader_epoch,
        metadata=value.metadata,
        commit_timestamp=value.commit_timestamp,
        expire_timestamp=None if value.expire_timestamp == DEFAULT_TIMESTAMP else value.expire_timestamp)


def read_group_message_value(group_id: str, buffer, time: Time) -> Optional[GroupMetadata]:
    """The group of a record value (Stable with members, else Empty); None for a tombstone."""
    if buffer is None:
        return None
    version, reader = read_version(buffer)
    if not GroupMetadataValue.LOWEST_SUPPORTED_VERSION <= version <= GroupMetadataValue.HIGHEST_SUPPORTED_VERSION:
        raise SchemaException(f"Unknown group metadata message version: {version}")
    value = GroupMetadataValue.read(reader, version)
    members = [MemberMetadata(
        member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
        client_host=m.client_host,
        # v0 had no rebalance timeout: the session timeout served as both
        rebalance_timeout_ms=m.session_timeout if version == 0 else m.rebalance_timeout,
        session_timeout_ms=m.session_timeout, protocol_type=value.protocol_type,
        supported_protocols=[(value.protocol, m.subscription)], assignment=m.assignment) for m in value.members]
    try:
        return GroupMetadata.load_group(
            group_id=group_id, initial_state=Stable if members else Empty, generation_id=value.generation,
            protocol_type=value.protocol_type, protocol_name=value.protocol, leader_id=value.leader,
            current_state_timestamp=None if value.current_state_timestamp == -1 else value.current_state_timestamp,
            members=members, time=time)
    except AssertionError as e:
        # members a group cannot hold together (GroupMetadata.add's checks, which Kafka's
        # loading trips over too): a record that cannot be read, like a malformed one
        raise SchemaException(f"Group {group_id} cannot be loaded from its metadata record: {e}") from None


def _consumer_assignment_partitions(assignment: bytes) -> tuple[list[TopicPartition], bytes]:
    """ConsumerProtocol.deserializeAssignment, reduced to the partitions and user data."""
    reader = Readable(assignment)
    reader.int16()  # version; every version starts with the v0 fields
    partitions = []
    for _ in range(reader.array_length("assigned_partitions")):
        topic = reader.string("topic")
        for _ in range(reader.array_length("partitions")):
            partitions.append(TopicPartition(topic, reader.int32()))
    user_data = b""
    length = reader.int32() if reader.position + 4 <= len(assignment) else -1
    if length > 0:
        user_data = assignment[reader.position:reader.position + length]
    return partitions, user_data


def format_record_key_and_value(key: Optional[bytes], value: Optional[bytes]) -> tuple[str, str]:
    """GroupMetadataManager.formatRecordKeyAndValue: a __consumer_offsets record as text, for
    kafka-dump-log.sh --offsets-decoder."""
    if key is None:
        raise ValueError("Failed to decode message using offset topic decoder (message had a missing key)")
    parsed = read_message_key(key)
    if isinstance(parsed, OffsetKey):
        tp = parsed.key.topic_partition
        key_string = f"offset_commit::group={parsed.key.group},partition={tp}"
        offset = read_offset_message_value(value)
        if offset is None:
            return key_string, "<DELETE>"
        if not offset.metadata:
            return key_string, f"offset={offset.offset}"
        return key_string, f"offset={offset.offset},metadata={offset.metadata}"
    key_string = f"group_metadata::group={parsed.key}"
    group = read_group_message_value(parsed.key, value, Time.SYSTEM)
    if group is None:
        return key_string, "<DELETE>"
    protocol_type = group.protocol_type or ""
    assignments = []
    for member in group.all_member_metadata:
        if protocol_type == CONSUMER_PROTOCOL_TYPE:
            partitions, user_data = _consumer_assignment_partitions(member.assignment)
            listed = "[" + ", ".join(str(tp) for tp in partitions) + "]"
            assignments.append(f"{member.member_id}={listed}" + (f":{user_data.hex().upper()}" if user_data else ""))
        else:
            assignments.append(f"{member.member_id}={bytes(member.assignment).hex().upper()}")
    return key_string, json.dumps({"protocolType": protocol_type, "protocol": group.protocol_name,
                                   "generationId": group.generation_id,
                                   "assignment": "{" + ",".join(assignments) + "}"}, separators=(",", ":"))


def _records_size(records: Any) -> int:
    size = records.size_in_bytes
    return size() if callable(size) else size


# ---------------------------------------------------------------------------- the manager


class GroupMetadataManager(KafkaMetricsGroup):
    """The cache of groups and offsets for the __consumer_offsets partitions this broker leads.

    Gauges ``kafka.coordinator.group:type=GroupMetadataManager``: NumGroups, NumOffsets and
    NumGroups<State> for each group state, read on scrape; removed at shutdown."""

    def __init__(self, broker_id: int, config: OffsetConfig, replica_manager: Any, time: Time = Time.SYSTEM,
                 scheduler: Optional[Scheduler] = None) -> None:
        self.broker_id = broker_id
        self.config = config
        self.replica_manager = replica_manager
        self.time = time
        self.compression_type = config.offsets_topic_compression_codec
        self._group_metadata_cache: dict[str, GroupMetadata] = {}
        self._cache_lock = threading.Lock()
        # guards the loading and owned partition sets; taken before any group lock
        self.partition_lock = threading.RLock()
        self._loading_partitions: set[int] = set()
        self._owned_partitions: set[int] = set()
        self._shutting_down = threading.Event()
        self.group_metadata_topic_partition_count = config.offsets_topic_num_partitions
        # one thread: loads and unloads of a partition run in the order they were scheduled
        self.scheduler: Scheduler = scheduler if scheduler is not None else KafkaScheduler(
            1, thread_name_prefix="group-metadata-manager-")
        # producer id -> groups with open transactional offset commits of that producer
        self._open_groups_for_producer: dict[int, set[str]] = {}
        self._open_groups_lock = threading.Lock()
        # the newest leader epoch seen per partition, to tell racing LeaderAndIsr apart
        self.epoch_for_partition_id: dict[int, int] = {}
        self._epoch_lock = threading.Lock()
        self.logger = IdentLogger(logger, f"[GroupMetadataManager brokerId={broker_id}] ")
        self._gauges = [(name, self.replace_gauge(name, read)) for name, read in self._gauge_reads()]

    def _gauge_reads(self) -> list:
        def num_offsets() -> int:
            total = 0
            for group in self.current_groups:
                with group.lock:
                    total += group.num_offsets
            return total

        def in_state(state: GroupState) -> Callable[[], int]:
            return lambda: sum(1 for g in self.current_groups if g.current_state is state)

        reads = [("NumOffsets", num_offsets), ("NumGroups", lambda: len(self._group_metadata_cache))]
        reads += [(f"NumGroups{state.value}", in_state(state)) for state in GroupState]
        return reads

    # ------------------------------------------------------------------ lifecycle

    def startup(self, retrieve_group_metadata_topic_partition_count: Callable[[], int],
                enable_metadata_expiration: bool = True) -> None:
        self.group_metadata_topic_partition_count = int(retrieve_group_metadata_topic_partition_count())
        self.scheduler.startup()
        if enable_metadata_expiration:
            self.scheduler.schedule("delete-expired-group-metadata", self.cleanup_group_metadata,
                                    delay_ms=0, period_ms=self.config.offsets_retention_check_interval_ms)

    def shutdown(self) -> None:
        self._shutting_down.set()
        for name, gauge in self._gauges:
            self.remove_metric_if_same(name, gauge)
        if self.scheduler.is_started:
            self.scheduler.shutdown()

    # ------------------------------------------------------------------ ownership

    @property
    def current_groups(self) -> list[GroupMetadata]:
        with self._cache_lock:
            return list(self._group_metadata_cache.values())

    def is_partition_owned(self, partition: int) -> bool:
        with self.partition_lock:
            return partition in self._owned_partitions

    def is_partition_loading(self, partition: int) -> bool:
        with self.partition_lock:
            return partition in self._loading_partitions

    def partition_for(self, group_id: str) -> int:
        return utils_abs(java_string_hash_code(group_id)) % self.group_metadata_topic_partition_count

    def is_group_local(self, group_id: str) -> bool:
        return self.is_partition_owned(self.partition_for(group_id))

    def is_group_loading(self, group_id: str) -> bool:
        return self.is_partition_loading(self.partition_for(group_id))

    @property
    def is_loading(self) -> bool:
        with self.partition_lock:
            return bool(self._loading_partitions)

    def group_not_exists(self, group_id: str) -> bool:
        """True iff this broker owns the group's partition and has no live group of that id."""
        with self.partition_lock:
            if not self.is_group_local(group_id):
                return False
            group = self.get_group(group_id)
            if group is None:
                return True
            with group.lock:
                return group.is_(Dead)

    def add_partition_ownership(self, partition: int) -> None:
        """For tests: own ``partition`` without loading it."""
        with self.partition_lock:
            self._owned_partitions.add(partition)

    def add_loading_partition(self, partition: int) -> bool:
        """Mark ``partition`` loading; False if it is already owned (loaded) or loading."""
        with self.partition_lock:
            if partition in self._owned_partitions or partition in self._loading_partitions:
                return False
            self._loading_partitions.add(partition)
            return True

    # ------------------------------------------------------------------ the cache

    def get_group(self, group_id: str) -> Optional[GroupMetadata]:
        with self._cache_lock:
            return self._group_metadata_cache.get(group_id)

    def get_or_maybe_create_group(self, group_id: str, create_if_not_exist: bool) -> Optional[GroupMetadata]:
        with self._cache_lock:
            group = self._group_metadata_cache.get(group_id)
            if group is None and create_if_not_exist:
                group = GroupMetadata(group_id, Empty, self.time)
                self._group_metadata_cache[group_id] = group
            return group

    def add_group(self, group: GroupMetadata) -> GroupMetadata:
        """Cache ``group`` unless one of its id is cached already; returns the cached one."""
        with self._cache_lock:
            return self._group_metadata_cache.setdefault(group.group_id, group)

    def _remove_cached_group(self, group: GroupMetadata) -> bool:
        with self._cache_lock:
            if self._group_metadata_cache.get(group.group_id) is group:
                del self._group_metadata_cache[group.group_id]
                return True
            return False

    def _get_magic(self, partition: int) -> Optional[int]:
        """The record format of a local __consumer_offsets replica; None when not hosted here."""
        log = self.replica_manager.local_log(TopicPartition(GROUP_METADATA_TOPIC_NAME, partition))
        return None if log is None else 2

    # ------------------------------------------------------------------ writes

    def store_group(self, group: GroupMetadata, group_assignment: Mapping[str, bytes],
                    response_callback: Callable[[Errors], None]) -> None:
        """Append the group's metadata record; ``response_callback`` gets the outcome, mapped
        to the errors a JoinGroup/SyncGroup client understands."""
        partition = self.partition_for(group.group_id)
        if self._get_magic(partition) is None:
            response_callback(Errors.NOT_COORDINATOR)
            return
        timestamp = self.time.milliseconds()
        key = group_metadata_key(group.group_id)
        value = group_metadata_value(group, group_assignment)
        records = MemoryRecords.with_records([SimpleRecord(key, value, timestamp)], compression=self.compression_type)
        group_metadata_partition = TopicPartition(GROUP_METADATA_TOPIC_NAME, partition)
        generation_id = group.generation_id

        def put_cache_callback(response_status: Mapping[TopicPartition, Any]) -> None:
            if len(response_status) != 1 or group_metadata_partition not in response_status:
                raise RuntimeError(f"Append status {dict(response_status)} should only have one partition "
                                   f"{group_metadata_partition}")
            status = response_status[group_metadata_partition]
            error = status.error
            if error is Errors.NONE:
                response_error = Errors.NONE
            else:
                self.logger.debug("Metadata from group %s with generation %d failed when appending to log due to %s",
                                  group.group_id, generation_id, error.exception_name)
                if error in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_ENOUGH_REPLICAS,
                             Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
                    response_error = Errors.COORDINATOR_NOT_AVAILABLE
                elif error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
                    response_error = Errors.NOT_COORDINATOR
                elif error is Errors.REQUEST_TIMED_OUT:
                    response_error = Errors.REBALANCE_IN_PROGRESS
                elif error in (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE, Errors.INVALID_FETCH_SIZE):
                    self.logger.error("Appending metadata message for group %s generation %d failed due to %s, "
                                      "returning UNKNOWN error code to the client", group.group_id,
                                      generation_id, error.exception_name)
                    response_error = Errors.UNKNOWN_SERVER_ERROR
                else:
                    self.logger.error("Appending metadata message for group %s generation %d failed due to unexpected "
                                      "error: %s", group.group_id, generation_id, error.exception_name)
                    response_error = error
            response_callback(response_error)

        self._append_for_group(group, {group_metadata_partition: records}, put_cache_callback)

    def _append_for_group(self, group: GroupMetadata, records: Mapping[TopicPartition, MemoryRecords],
                          callback: Callable[[Mapping[TopicPartition, Any]], None]) -> None:
        # The group's lock doubles as the delayed produce's lock: the callback takes it anyway.
        self.replica_manager.append_records(
            timeout_ms=self.config.offset_commit_timeout_ms,
            required_acks=self.config.offset_commit_required_acks,
            internal_topics_allowed=True,
            origin=AppendOrigin.COORDINATOR,
            entries_per_partition=records,
            response_callback=callback,
            delayed_produce_lock=group.lock)

    def _validate_offset_metadata_length(self, metadata: Optional[str]) -> bool:
        # Java's String.length: UTF-16 code units
        return metadata is None or len(metadata.encode("utf-16-le", "surrogatepass")) // 2 <= \
            self.config.max_metadata_size

    def store_offsets(self, group: GroupMetadata, consumer_id: str,
                      offset_metadata: Mapping[TopicPartition, OffsetAndMetadata],
                      response_callback: Callable[[dict[TopicPartition, Errors]], None],
                      producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH) -> None:
        """Append the commits, then cache them and answer with a per-partition error."""
        filtered = {tp: oam for tp, oam in offset_metadata.items()
                    if self._validate_offset_metadata_length(oam.metadata)}
        with group.lock:
            if not group.has_received_consistent_offset_commits:
                self.logger.warning("group: %s with leader: %s has received offset commits from consumers as well as "
                                    "transactional producers. Mixing both types of offset commits will generally result "
                                    "in surprises and should be avoided.", group.group_id,
                                    group.leader_or_null)
        is_txn_offset_commit = producer_id != NO_PRODUCER_ID
        if not filtered:
            response_callback({tp: Errors.OFFSET_METADATA_TOO_LARGE for tp in offset_metadata})
            return
        partition = self.partition_for(group.group_id)
        if self._get_magic(partition) is None:
            response_callback({tp: Errors.NOT_COORDINATOR for tp in offset_metadata})
            return
        timestamp = self.time.milliseconds()
        records = [SimpleRecord(offset_commit_key(group.group_id, tp), offset_commit_value(oam), timestamp)
                   for tp, oam in filtered.items()]
        offset_topic_partition = TopicPartition(GROUP_METADATA_TOPIC_NAME, partition)
        entries = {offset_topic_partition: MemoryRecords.with_records(
            records, compression=self.compression_type, producer_id=producer_id, producer_epoch=producer_epoch,
            base_sequence=0 if is_txn_offset_commit else NO_SEQUENCE, is_transactional=is_txn_offset_commit)}

        def put_cache_callback(response_status: Mapping[TopicPartition, Any]) -> None:
            if len(response_status) != 1 or offset_topic_partition not in response_status:
                raise RuntimeError(f"Append status {dict(response_status)} should only have one partition "
                                   f"{offset_topic_partition}")
            status = response_status[offset_topic_partition]
            if status.error is Errors.NONE:
                crash_point("group_metadata_manager.store_offsets.after_append")
            with group.lock:
                if status.error is Errors.NONE:
                    if not group.is_(Dead):
                        for tp, oam in filtered.items():
                            commit = CommitRecordMetadataAndOffset(status.base_offset, oam)
                            if is_txn_offset_commit:
                                group.on_txn_offset_commit_append(producer_id, tp, commit)
                            else:
                                group.on_offset_commit_append(tp, commit)
                    response_error = Errors.NONE
                else:
                    if not group.is_(Dead):
                        if not group.has_pending_offset_commits_from_producer(producer_id):
                            self._remove_producer_group(producer_id, group.group_id)
                        for tp, oam in filtered.items():
                            if is_txn_offset_commit:
                                group.fail_pending_txn_offset_commit(producer_id, tp)
                            else:
                                group.fail_pending_offset_write(tp, oam)
                    self.logger.debug("Offset commit %s from group %s, consumer %s with generation %d failed when "
                                      "appending to log due to %s", filtered, group.group_id,
                                      consumer_id, group.generation_id, status.error.exception_name)
                    error = status.error
                    if error in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_ENOUGH_REPLICAS,
                                 Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
                        response_error = Errors.COORDINATOR_NOT_AVAILABLE
                    elif error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
                        response_error = Errors.NOT_COORDINATOR
                    elif error in (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE,
                                   Errors.INVALID_FETCH_SIZE):
                        response_error = Errors.INVALID_COMMIT_OFFSET_SIZE
                    else:
                        response_error = error
            response_callback({tp: response_error if self._validate_offset_metadata_length(oam.metadata)
                               else Errors.OFFSET_METADATA_TOO_LARGE for tp, oam in offset_metadata.items()})

        # Only what is appended is pending (Kafka stages the unfiltered map, leaving an
        # oversized commit pending for good: it then never expires and stays "unstable").
        with group.lock:
            if is_txn_offset_commit:
                self._add_producer_group(producer_id, group.group_id)
                group.prepare_txn_offset_commit(producer_id, filtered)
            else:
                group.prepare_offset_commit(filtered)
        self._append_for_group(group, entries, put_cache_callback)

    # ------------------------------------------------------------------ reads

    def get_offsets(self, group_id: str, require_stable: bool,
                    topic_partitions: Optional[Sequence[TopicPartition]] = None
                    ) -> dict[TopicPartition, tuple[int, Optional[int], str, Errors]]:
        """(offset, leader epoch, metadata, error) per partition; all the group's committed
        partitions when ``topic_partitions`` is None. Never returns a stale offset: an unknown
        group or partition gets offset -1."""
        unknown = (INVALID_OFFSET, None, "", Errors.NONE)
        group = self.get_group(group_id)
        if group is None:
            return {tp: unknown for tp in topic_partitions or ()}
        with group.lock:
            if group.is_(Dead):
                return {tp: unknown for tp in topic_partitions or ()}
            wanted = list(group.all_offsets) if topic_partitions is None else topic_partitions
            result = {}
            for tp in wanted:
                if require_stable and group.has_pending_offset_commits_for_topic_partition(tp):
                    result[tp] = (INVALID_OFFSET, None, "", Errors.UNSTABLE_OFFSET_COMMIT)
                    continue
                oam = group.offset(tp)
                result[tp] = unknown if oam is None else (oam.offset, oam.leader_epoch, oam.metadata, Errors.NONE)
            return result

    # ------------------------------------------------------------------ loading

    def schedule_load_group_and_offsets(self, offsets_partition: int, coordinator_epoch: int,
                                        on_group_loaded: Callable[[GroupMetadata], None]) -> None:
        topic_partition = TopicPartition(GROUP_METADATA_TOPIC_NAME, offsets_partition)
        self.logger.info("Scheduling loading of offsets and group metadata from %s for epoch %d",
                         topic_partition, coordinator_epoch)
        start_ms = self.time.milliseconds()
        self.scheduler.schedule(str(topic_partition), lambda: self.load_groups_and_offsets(
            topic_partition, coordinator_epoch, on_group_loaded, start_ms))

    def load_groups_and_offsets(self, topic_partition: TopicPartition, coordinator_epoch: int,
                                on_group_loaded: Callable[[GroupMetadata], None], start_ms: int) -> None:
        if not self._maybe_update_coordinator_epoch(topic_partition.partition, coordinator_epoch):
            self.logger.info("Not loading offsets and group metadata for %s in epoch %d since current epoch is %s",
                             topic_partition, coordinator_epoch,
                             self.epoch_for_partition_id.get(topic_partition.partition))
            return
        if not self.add_loading_partition(topic_partition.partition):
            self.logger.info("Already loading offsets and group metadata from %s", topic_partition)
            return
        try:
            scheduler_time_ms = self.time.milliseconds() - start_ms
            self.logger.debug("Started loading offsets and group metadata from %s for epoch %d",
                              topic_partition, coordinator_epoch)
            self._do_load_groups_and_offsets(topic_partition, on_group_loaded)
            total_ms = self.time.milliseconds() - start_ms
            self.logger.info("Finished loading offsets and group metadata from %s in %d milliseconds for epoch %d, of "
                             "which %d milliseconds was spent in the scheduler.", topic_partition,
                             total_ms, coordinator_epoch, scheduler_time_ms)
        except Exception:  # noqa: BLE001 - the partition is owned regardless, as in Kafka
            self.logger.exception("Error loading offsets from %s", topic_partition)
        finally:
            with self.partition_lock:
                self._owned_partitions.add(topic_partition.partition)
                self._loading_partitions.discard(topic_partition.partition)

    def _do_load_groups_and_offsets(self, topic_partition: TopicPartition,
                                    on_group_loaded: Callable[[GroupMetadata], None]) -> None:
        def log_end_offset() -> int:
            # -1 once the leadership moved away mid-load: that ends the loop
            end = self.replica_manager.get_log_end_offset(topic_partition)
            return -1 if end is None else end

        log = self.replica_manager.get_log(topic_partition)
        if log is None:
            self.logger.warning("Attempted to load offsets and group metadata from %s, but found no log",
                                topic_partition)
            return
        loaded_offsets: dict[GroupTopicPartition, CommitRecordMetadataAndOffset] = {}
        pending_offsets: dict[int, dict[GroupTopicPartition, CommitRecordMetadataAndOffset]] = {}
        loaded_groups: dict[str, GroupMetadata] = {}
        removed_groups: set[str] = set()
        buffer = bytearray(0)
        curr_offset = log.log_start_offset
        read_at_least_one_record = True
        while curr_offset < log_end_offset() and read_at_least_one_record and not self._shutting_down.is_set():
            fetch_data_info = log.read(curr_offset, max_length=self.config.load_buffer_size,
                                       isolation=FetchIsolation.LOG_END, min_one_message=True)
            records = fetch_data_info.records
            size = _records_size(records)
            read_at_least_one_record = size > 0
            if isinstance(records, MemoryRecords):
                mem_records = records
            else:
                # min_one_message may hand back more than the load buffer: grow it so we progress
                needed = max(self.config.load_buffer_size, size)
                if len(buffer) < needed:
                    if self.config.load_buffer_size < needed:
                        self.logger.warning("Loaded offsets and group metadata from %s with buffer larger (%d bytes) "
                                            "than configured offsets.load.buffer.size (%d bytes)",
                                            topic_partition, needed, self.config.load_buffer_size)
                    buffer = bytearray(needed)
                mem_records = records.read_into(buffer, 0)
            for batch in mem_records.batches():
                is_txn_offset_commit = batch.is_transactional
                if batch.is_control_batch:
                    record = next(iter(batch), None)
                    if record is not None:
                        if ControlRecordType.parse(record.key) is ControlRecordType.COMMIT:
                            for gtp, commit in pending_offsets.get(batch.producer_id, {}).items():
                                current = loaded_offsets.get(gtp)
                                if current is None or current.older_than(commit):
                                    loaded_offsets[gtp] = commit
                        pending_offsets.pop(batch.producer_id, None)
                else:
                    batch_base_offset: Optional[int] = None
                    for record in batch:
                        if record.key is None:
                            raise RuntimeError("Group metadata/offset entry key should not be null")
                        if batch_base_offset is None:
                            batch_base_offset = record.offset
                        base_key = read_message_key(record.key)
                        if isinstance(base_key, OffsetKey):
                            if is_txn_offset_commit:
                                pending_offsets.setdefault(batch.producer_id, {})
                            gtp = base_key.key
                            if record.value is None:
                                if is_txn_offset_commit:
                                    pending_offsets[batch.producer_id].pop(gtp, None)
                                else:
                                    loaded_offsets.pop(gtp, None)
                            else:
                                commit = CommitRecordMetadataAndOffset(batch_base_offset,
                                                                       read_offset_message_value(record.value))
                                if is_txn_offset_commit:
                                    pending_offsets[batch.producer_id][gtp] = commit
                                else:
                                    loaded_offsets[gtp] = commit
                        else:
                            group_id = base_key.key
                            group = read_group_message_value(group_id, record.value, self.time)
                            if group is not None:
                                removed_groups.discard(group_id)
                                loaded_groups[group_id] = group
                            else:
                                loaded_groups.pop(group_id, None)
                                removed_groups.add(group_id)
                curr_offset = batch.next_offset

        offsets_by_group: dict[str, dict[TopicPartition, CommitRecordMetadataAndOffset]] = {}
        for gtp, commit in loaded_offsets.items():
            offsets_by_group.setdefault(gtp.group, {})[gtp.topic_partition] = commit
        group_offsets = {g: o for g, o in offsets_by_group.items() if g in loaded_groups}
        empty_group_offsets = {g: o for g, o in offsets_by_group.items() if g not in loaded_groups}

        pending_offsets_by_group: dict[str, dict[int, dict[TopicPartition, CommitRecordMetadataAndOffset]]] = {}
        for producer_id, producer_offsets in pending_offsets.items():
            for gtp in producer_offsets:
                self._add_producer_group(producer_id, gtp.group)
            for gtp, commit in producer_offsets.items():
                pending_offsets_by_group.setdefault(gtp.group, {}).setdefault(producer_id, {})[
                    gtp.topic_partition] = commit
        pending_group_offsets = {g: o for g, o in pending_offsets_by_group.items() if g in loaded_groups}
        pending_empty_group_offsets = {g: o for g, o in pending_offsets_by_group.items() if g not in loaded_groups}

        for group in loaded_groups.values():
            offsets = group_offsets.get(group.group_id, {})
            pending = pending_group_offsets.get(group.group_id, {})
            self.logger.debug("Loaded group metadata %r with offsets %s and pending offsets %s", group,
                              offsets, pending)
            self._load_group(group, offsets, pending)
            on_group_loaded(group)

        # groups that only store offsets (no member ever joined, or all left long ago)
        for group_id in list(dict.fromkeys([*empty_group_offsets, *pending_empty_group_offsets])):
            group = GroupMetadata(group_id, Empty, self.time)
            offsets = empty_group_offsets.get(group_id, {})
            pending = pending_empty_group_offsets.get(group_id, {})
            self.logger.debug("Loaded group metadata %r with offsets %s and pending offsets %s", group,
                              offsets, pending)
            self._load_group(group, offsets, pending)
            on_group_loaded(group)

        for group_id in removed_groups:
            # a group removed in the log but cached is a bug, unless it lives on as offsets only
            if self.get_group(group_id) is not None and group_id not in empty_group_offsets:
                raise RuntimeError(f"Unexpected unload of active group {group_id} while loading partition "
                                   f"{topic_partition}")

    def _load_group(self, group: GroupMetadata, offsets: Mapping[TopicPartition, CommitRecordMetadataAndOffset],
                    pending_transactional_offsets: Mapping[int, Mapping[TopicPartition, CommitRecordMetadataAndOffset]]
                    ) -> None:
        # offsets go in before the group is visible, so no client sees it without them
        group.initialize_offsets(offsets, pending_transactional_offsets)
        current_group = self.add_group(group)
        if group is not current_group:
            self.logger.debug("Attempt to load group %s from log with generation %d failed because there is already a "
                              "cached group with generation %d", group.group_id, group.generation_id,
                              current_group.generation_id)

    # ------------------------------------------------------------------ unloading

    def remove_groups_for_partition(self, offsets_partition: int, coordinator_epoch: Optional[int],
                                    on_group_unloaded: Callable[[GroupMetadata], None]) -> None:
        topic_partition = TopicPartition(GROUP_METADATA_TOPIC_NAME, offsets_partition)
        self.logger.info("Scheduling unloading of offsets and group metadata from %s", topic_partition)
        self.scheduler.schedule(str(topic_partition), lambda: self.remove_groups_and_offsets(
            topic_partition, coordinator_epoch, on_group_unloaded))

    def remove_groups_and_offsets(self, topic_partition: TopicPartition, coordinator_epoch: Optional[int],
                                  on_group_unloaded: Callable[[GroupMetadata], None]) -> None:
        offsets_partition = topic_partition.partition
        if not self._maybe_update_coordinator_epoch(offsets_partition, coordinator_epoch):
            self.logger.info("Not removing offsets and group metadata for %s in epoch %s since current epoch is %s",
                             topic_partition, coordinator_epoch,
                             self.epoch_for_partition_id.get(offsets_partition))
            return
        num_offsets_removed = 0
        num_groups_removed = 0
        self.logger.debug("Started unloading offsets and group metadata for %s for coordinator epoch %s",
                          topic_partition, coordinator_epoch)
        # under the partition lock, so no request can find the partition owned and then miss
        # the group that is being removed
        with self.partition_lock:
            self._owned_partitions.discard(offsets_partition)
            self._loading_partitions.discard(offsets_partition)
            for group in self.current_groups:
                if self.partition_for(group.group_id) == offsets_partition:
                    on_group_unloaded(group)
                    self._remove_cached_group(group)
                    self._remove_group_from_all_producers(group.group_id)
                    num_groups_removed += 1
                    num_offsets_removed += group.num_offsets
        self.logger.info("Finished unloading %s for coordinator epoch %s. Removed %d cached offsets and %d cached "
                         "groups.", topic_partition, coordinator_epoch, num_offsets_removed,
                         num_groups_removed)

    def _maybe_update_coordinator_epoch(self, partition_id: int, epoch: Optional[int]) -> bool:
        """Remember ``epoch`` if newer; True when ``epoch`` is None or at least the newest seen."""
        with self._epoch_lock:
            current = self.epoch_for_partition_id.get(partition_id)
            if current is None:
                if epoch is not None:
                    self.epoch_for_partition_id[partition_id] = epoch
                updated = epoch
            else:
                if epoch is not None and epoch > current:
                    self.epoch_for_partition_id[partition_id] = epoch
                updated = self.epoch_for_partition_id[partition_id]
        return epoch is None or epoch == updated

    # ------------------------------------------------------------------ expiry and deletion

    def cleanup_group_metadata(self, groups: Optional[Iterable[GroupMetadata]] = None,
                               selector: Optional[Callable[[GroupMetadata], Mapping[TopicPartition,
                                                                                    OffsetAndMetadata]]] = None) -> int:
        """Remove offsets chosen by ``selector`` (called under each group's lock) from ``groups``
        and append their tombstones; an Empty group left without offsets becomes Dead and gets
        a tombstone too. With no arguments: the periodic expiry over every cached group.
        Returns how many offsets were removed."""
        if groups is None:
            current_timestamp = self.time.milliseconds()
            removed = self.cleanup_group_metadata(
                self.current_groups,
                lambda g: g.remove_expired_offsets(current_timestamp, self.config.offsets_retention_ms))
            if removed > 0:
                self.logger.info("Removed %d expired offsets in %d milliseconds.", removed,
                                 self.time.milliseconds() - current_timestamp)
            return removed

        offsets_removed = 0
        for group in groups:
            group_id = group.group_id
            with group.lock:
                removed_offsets = selector(group)
                if group.is_(Empty) and not group.has_offsets:
                    self.logger.info("Group %s transitioned to Dead in generation %d", group_id,
                                     group.generation_id)
                    group.transition_to(Dead)
                group_is_dead = group.is_(Dead)
                generation = group.generation_id
            offsets_partition = self.partition_for(group_id)
            append_partition = TopicPartition(GROUP_METADATA_TOPIC_NAME, offsets_partition)
            if self._get_magic(offsets_partition) is None:
                self.logger.info("BrokerId %d is no longer a coordinator for the group %s. Proceeding cleanup for other "
                                 "alive groups", self.broker_id, group_id)
                continue
            partition = self.replica_manager.online_partition(append_partition)
            if partition is None:
                continue
            timestamp = self.time.milliseconds()
            tombstones = [SimpleRecord(offset_commit_key(group_id, tp), None, timestamp) for tp in removed_offsets]
            # a group that never had a generation only stored offsets: it has no record to delete
            if group_is_dead and self._remove_cached_group(group) and generation > 0:
                tombstones.append(SimpleRecord(group_metadata_key(group_id), None, timestamp))
            if not tombstones:
                continue
            try:
                # no acks needed: a lost tombstone is written again on the next purge
                records = MemoryRecords.with_records(tombstones, compression=self.compression_type)
                partition.append_records_to_leader(records, AppendOrigin.COORDINATOR, 0)
                offsets_removed += len(removed_offsets)
            except Exception:  # noqa: BLE001 - the other groups are still cleaned up
                self.logger.exception("Failed to append %d tombstones to %s for expired/deleted offsets and/or "
                                      "metadata for group %s.", len(tombstones), append_partition,
                                      group_id)
        return offsets_removed

    # ------------------------------------------------------------------ transactions

    def schedule_handle_txn_completion(self, producer_id: int, completed_partitions: set[int],
                                       is_commit: bool) -> None:
        # on the scheduler: it takes group locks, and the marker write may complete under one
        self.scheduler.schedule(f"handleTxnCompletion-{producer_id}", lambda: self.handle_txn_completion(
            producer_id, completed_partitions, is_commit))

    def handle_txn_completion(self, producer_id: int, completed_partitions: set[int], is_commit: bool) -> None:
        for group_id in self._groups_belonging_to_partitions(producer_id, completed_partitions):
            group = self.get_group(group_id)
            if group is None:
                self.logger.info("Group %s has moved away from %d after transaction marker was written but before the "
                                 "cache was updated. The cache on the new group owner will be updated instead.",
                                 group_id, self.broker_id)
                continue
            with group.lock:
                if not group.is_(Dead):
                    group.complete_pending_txn_offset_commit(producer_id, is_commit)
                    self._remove_producer_group(producer_id, group_id)

    def _add_producer_group(self, producer_id: int, group_id: str) -> None:
        with self._open_groups_lock:
            self._open_groups_for_producer.setdefault(producer_id, set()).add(group_id)

    def _remove_producer_group(self, producer_id: int, group_id: str) -> None:
        with self._open_groups_lock:
            groups = self._open_groups_for_producer.setdefault(producer_id, set())
            groups.discard(group_id)
            if not groups:
                del self._open_groups_for_producer[producer_id]

    def _groups_belonging_to_partitions(self, producer_id: int, partitions: set[int]) -> set[str]:
        with self._open_groups_lock:
            return {g for g in self._open_groups_for_producer.get(producer_id, ())
                    if self.partition_for(g) in partitions}

    def _remove_group_from_all_producers(self, group_id: str) -> None:
        with self._open_groups_lock:
            for groups in self._open_groups_for_producer.values():
                groups.discard(group_id)

    def is_group_open_for_producer(self, producer_id: int, group_id: str) -> bool:
        with self._open_groups_lock:
            return group_id in self._open_groups_for_producer.get(producer_id, ())


__all__ = [
    "GROUP_METADATA_TOPIC_NAME",
    "GroupMetadataKey",
    "GroupMetadataManager",
    "GroupTopicPartition",
    "OffsetKey",
    "format_record_key_and_value",
    "group_metadata_key",
    "group_metadata_value",
    "java_string_hash_code",
    "offset_commit_key",
    "offset_commit_value",
    "read_group_message_value",
    "read_message_key",
    "read_offset_message_value",
]
