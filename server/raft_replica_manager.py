"""Port of core/src/main/scala/kafka/server/RaftReplicaManager.scala and
RaftReplicaChangeDelegate.scala (Kafka 2.8.2).

The ReplicaManager of a KRaft broker. No controller sends it LeaderAndIsr or StopReplica;
instead the BrokerMetadataListener hands it each batch of committed metadata records as a
``MetadataImageBuilder`` (``handle_metadata_records``), whose partitions builder knows
which of this broker's partitions the batch changed (PartitionRecord, PartitionChangeRecord)
and which it removed (RemoveTopicRecord, or a reassignment away from this broker):

* a changed partition whose leader is this broker becomes leader through
  ``Partition.make_leader``, with the leader epoch, ISR and replicas of the record (the
  partition epoch stands where ZooKeeper's zkVersion stood, so AlterIsr names it);
* any other changed partition becomes a follower of the record's leader
  (``Partition.make_follower``), and the replica fetcher manager fetches it from that
  leader, starting at the log end (truncation happens on fetch);
* a removed partition is stopped and its log deleted.

Until the broker has caught up with the metadata log and started its LogManager, changes
are *deferred*: the partitions are created without logs and marked ``Deferred``, and
``end_metadata_change_deferral`` (called by BrokerServer once startup has reached that
point) applies them all from the current image at once. Removals are never deferred.

Topic config overrides come from the metadata log's ConfigRecords (the
CachedConfigRepository) instead of ZooKeeper.

Kafka 2.8.2 decides a partition ``is_new`` by looking for its *new* state among the
previous image's partitions, which is never there once anything changed; here a partition
is new when the previous image did not have it, which is what the flag means.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional

from kafka_py.core.cluster.partition import Partition
from kafka_py.clients.common.errors import KafkaStorageException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.checkpoints.offset_checkpoint_file import LazyOffsetCheckpoints
from kafka_py.server.epoch.leader_epoch_file_cache import deferred_flushes
from kafka_py.server.metadata.metadata_brokers import MetadataBrokers
from kafka_py.server.metadata.metadata_image import MetadataImage, MetadataImageBuilder
from kafka_py.server.metadata.metadata_partitions import MetadataPartition
from kafka_py.server.metadata.raft_metadata_cache import RaftMetadataCache
from kafka_py.server.abstract_fetcher_manager import InitialFetchState
from kafka_py.server.replica_manager import ReplicaManager
from kafka_py.server.replica_manager_types import HostedPartition

logger = logging.getLogger(__name__)
state_change_logger = logging.getLogger("state.change.logger")

OnLeadershipChange = Callable[[Iterable[Partition], Iterable[Partition]], None]


@dataclass(frozen=True, eq=False, slots=True)
class Deferred(HostedPartition):
    """HostedPartition.Deferred: a partition whose metadata changes wait for the end of the
    deferral. It serves no requests (NOT_LEADER_OR_FOLLOWER) until then."""

    partition: Partition
    is_new: bool


class RaftReplicaManager(ReplicaManager):
    # Its metrics keep ReplicaManager's names (kafka.server:type=ReplicaManager), which Kafka 3
    # uses in both modes, rather than 2.8.2's class-named type=RaftReplicaManager: dashboards
    # and alerts work unchanged on a KRaft broker.
    metrics_type_name = "ReplicaManager"
    # the KRaft metadata cache, as Kafka's RaftReplicaManager has it (the base class names the
    # ZooKeeper mode's MetadataCache; the two have no common base here)
    metadata_cache: RaftMetadataCache  # type: ignore[assignment]

    def __init__(self, config: Any, time: Any, scheduler: Any, log_manager: Any, metadata_cache: Any,
                 log_dir_failure_channel: Any = None, *, config_repository: Any, **kwargs: Any) -> None:
        if config.requires_zookeeper:
            raise ValueError("Cannot use RaftReplicaManager when using ZooKeeper")
        super().__init__(config, time, None, scheduler, log_manager, metadata_cache, log_dir_failure_channel,
                         **kwargs)
        self.config_repository = config_repository
        # Changes wait until the broker has caught up and started its logs (see the module doc).
        self._deferring_metadata_changes = True
        state_change_logger.debug("%sMetadata changes are initially being deferred", self._state_change_ident)

    # -- topic configs come from the metadata log

    def fetch_topic_config(self, topic: str) -> Optional[dict[str, str]]:
        return self.config_repository.topic_config(topic)

    # ------------------------------------------------------------------ deferral

    def begin_metadata_change_deferral(self) -> None:
        with self._replica_state_change_lock:
            self._deferring_metadata_changes = True
            state_change_logger.info("%sMetadata changes are now being deferred", self._state_change_ident)

    @property
    def deferring_metadata_changes(self) -> bool:
        return self._deferring_metadata_changes

    def _deferred_partitions(self) -> list[Deferred]:
        with self._all_partitions_lock:
            return [h for h in self._all_partitions.values() if isinstance(h, Deferred)]

    def mark_partition_deferred(self, partition: Partition, is_new: bool) -> None:
        with self._replica_state_change_lock:
            with self._all_partitions_lock:
                self._all_partitions[partition.topic_partition] = Deferred(partition, is_new)

    def _mark_online(self, partition: Partition) -> None:
        with self._all_partitions_lock:
            self._all_partitions[partition.topic_partition] = HostedPartition.Online(partition)

    @staticmethod
    def _cached_state(image: MetadataImage, partition: Partition) -> MetadataPartition:
        state = image.partitions.topic_partition(partition.topic, partition.partition_id)
        if state is None:
            raise RuntimeError("Partition has metadata changes but does not exist in the metadata cache: "
                               f"{partition.topic_partition}")
        return state

    def end_metadata_change_deferral(self, on_leadership_change: OnLeadershipChange) -> None:
        """Apply every deferred change from the current image, then stop deferring."""
        start_ms = self.time.milliseconds()
        made_leader: set[Partition] = set()
        made_follower: set[Partition] = set()
        with self._replica_state_change_lock:
            state_change_logger.info("%sApplying deferred metadata changes", self._state_change_ident)
            hw_checkpoints = LazyOffsetCheckpoints(self.high_watermark_checkpoints)
            image = self.metadata_cache.current_image()
            deferred = self._deferred_partitions()
            try:
                leader_states: dict[Partition, MetadataPartition] = {}
                follower_states: dict[Partition, MetadataPartition] = {}
                already_existing: set[TopicPartition] = set()
                for d in deferred:
                    state = self._cached_state(image, d.partition)
                    if state.leader_id == self.local_broker_id:
                        leader_states[d.partition] = state
                    else:
                        follower_states[d.partition] = state
                    if not d.is_new:
                        already_existing.add(d.partition.topic_partition)
                # the leader epoch checkpoints these changes write, together at the end (as a
                # LeaderAndIsr's in ZooKeeper mode), not one fsync per partition
                with deferred_flushes():
                    if leader_states:
                        made_leader = self.make_leaders(already_existing, leader_states, hw_checkpoints, None)
                    if follower_states:
                        made_follower = self.make_followers(already_existing, image.brokers, follower_states,
                                                            hw_checkpoints, None)
                # whatever did not go offline on the way is online now
                for d in deferred:
                    with self._all_partitions_lock:
                        if isinstance(self._all_partitions.get(d.partition.topic_partition), Deferred):
                            self._all_partitions[d.partition.topic_partition] = HostedPartition.Online(d.partition)
                self.start_high_watermark_check_point_thread()
                # leaders too: a replica being moved between log dirs resumes its copy whatever
                # its role (Kafka 2.8.2 passed only followers; 3.x passes every changed partition)
                self.maybe_add_log_dir_fetchers(made_leader | made_follower, hw_checkpoints)
                self.replica_fetcher_manager.shutdown_idle_fetcher_threads()
                self.replica_alter_log_dirs_manager.shutdown_idle_fetcher_threads()
                if made_leader or made_follower:
                    on_leadership_change(made_leader, made_follower)
            except Exception:
                for d in deferred:
                    state_change_logger.error("%sApply deferred partition %s: error while applying deferred "
                                              "metadata.", self._state_change_ident, d.partition.topic_partition,
                                              exc_info=True)
                state_change_logger.info("%sApplied %d deferred partitions prior to the error: %d leader(s) and %d "
                                         "follower(s)", self._state_change_ident, len(made_leader) + len(made_follower),
                                         len(made_leader), len(made_follower))
                raise
            self._deferring_metadata_changes = False
        state_change_logger.info("%sApplied %d deferred partitions: %d leader(s) and %d follower(s) in %d ms",
                                 self._state_change_ident, len(made_leader) + len(made_follower), len(made_leader),
                                 len(made_follower), self.time.milliseconds() - start_ms)
        state_change_logger.info("%sMetadata changes are no longer being deferred", self._state_change_ident)

    # ------------------------------------------------------------------ a batch of records

    def handle_metadata_records(self, image_builder: MetadataImageBuilder, metadata_offset: int,
                                on_leadership_change: OnLeadershipChange) -> None:
        start_ms = self.time.milliseconds()
        builder = image_builder.partitions_builder()
        prev_partitions = image_builder.prev_image.partitions
        ident = self._state_change_ident
        with self._replica_state_change_lock:
            local_changed = builder.local_changed()
            local_removed = builder.local_removed()
            state_change_logger.info("%sMetadata batch %d: %d local partition(s) changed, %d local partition(s) "
                                     "removed.", ident, metadata_offset, len(local_changed), len(local_removed))
            if self._deferring_metadata_changes:
                to_defer: dict[Partition, bool] = {}
                for state in local_changed:
                    tp = state.to_topic_partition()
                    hosted = self.get_partition(tp)
                    if hosted is HostedPartition.OFFLINE:
                        state_change_logger.warning(
                            "%sIgnoring handlePartitionChanges at %d for partition %s as the local replica for the "
                            "partition is in an offline log directory", ident, metadata_offset, tp)
                        continue
                    if isinstance(hosted, Deferred):
                        to_defer[hosted.partition] = hosted.is_new
                    elif isinstance(hosted, HostedPartition.Online):
                        to_defer[hosted.partition] = prev_partitions.topic_partition(tp.topic, tp.partition) is None
                    else:
                        to_defer[Partition.create(tp, self.time, self)] = \
                            prev_partitions.topic_partition(tp.topic, tp.partition) is None
                state_change_logger.info("%sDeferring metadata changes for %d partition(s)", ident, len(to_defer))
                if to_defer:
                    self.make_deferred(to_defer, metadata_offset)
            else:
                to_be_leader: dict[Partition, MetadataPartition] = {}
                to_be_follower: dict[Partition, MetadataPartition] = {}
                for state in local_changed:
                    tp = state.to_topic_partition()
                    hosted = self.get_partition(tp)
                    if hosted is HostedPartition.OFFLINE:
                        state_change_logger.warning(
                            "%sIgnoring handlePartitionChanges at %d for partition %s as the local replica for the "
                            "partition is in an offline log directory", ident, metadata_offset, tp)
                        continue
                    if isinstance(hosted, Deferred):
                        raise RuntimeError("There should never be deferred partition metadata when we aren't "
                                           f"deferring changes: {tp}")
                    if isinstance(hosted, HostedPartition.Online):
                        partition = hosted.partition
                    else:
                        partition = Partition.create(tp, self.time, self)
                        with self._all_partitions_lock:
                            existing = self._all_partitions.get(tp)
                            if isinstance(existing, HostedPartition.Online):
                                partition = existing.partition
                            else:
                                self._all_partitions[tp] = HostedPartition.Online(partition)
                    if state.leader_id == self.local_broker_id:
                        to_be_leader[partition] = state
                    else:
                        to_be_follower[partition] = state
                previously_existing = {s.to_topic_partition() for s in local_changed
                                       if prev_partitions.topic_partition(s.topic_name, s.partition_index) is not None}
                hw_checkpoints = LazyOffsetCheckpoints(self.high_watermark_checkpoints)
                # the batch's leader epoch checkpoints, written together before it counts as applied
                with deferred_flushes():
                    became_leader = (self.make_leaders(previously_existing, to_be_leader, hw_checkpoints,
                                                       metadata_offset) if to_be_leader else set())
                    became_follower = (self.make_followers(previously_existing, image_builder.brokers(),
                                                           to_be_follower, hw_checkpoints, metadata_offset)
                                       if to_be_follower else set())
                for state in local_changed:
                    tp = state.to_topic_partition()
                    # a Partition made above whose log could not be created (disk failure) is offline
                    if self.local_log(tp) is None and self.get_partition(tp) is not HostedPartition.NONE:
                        self.mark_partition_offline(tp)
                self.start_high_watermark_check_point_thread()
                self.maybe_add_log_dir_fetchers(became_leader | became_follower, hw_checkpoints)
                self.replica_fetcher_manager.shutdown_idle_fetcher_threads()
                self.replica_alter_log_dirs_manager.shutdown_idle_fetcher_threads()
                on_leadership_change(became_leader, became_follower)
                state_change_logger.info("%sMetadata batch %d: applied %d partitions: %d leader(s) and %d "
                                         "follower(s)", ident, metadata_offset,
                                         len(became_leader) + len(became_follower), len(became_leader),
                                         len(became_follower))
            if local_removed:
                # removals are applied at once, even while other changes are deferred; a
                # deferred partition is forgotten here (the base class only drops online ones)
                with self._all_partitions_lock:
                    for state in local_removed:
                        entry = self._all_partitions.get(state.to_topic_partition())
                        if isinstance(entry, Deferred):
                            del self._all_partitions[state.to_topic_partition()]
                errors = self._stop_partitions({s.to_topic_partition(): True for s in local_removed})
                for tp, e in errors.items():
                    if isinstance(e, KafkaStorageException):
                        state_change_logger.error("%sMetadata batch %d: unable to delete %s as the local replica "
                                                  "for the partition is in an offline log directory", ident,
                                                  metadata_offset, tp)
                    else:
                        state_change_logger.error("%sMetadata batch %d: unable to delete %s due to an unexpected %s "
                                                  "exception: %s", ident, metadata_offset, tp, type(e).__name__, e)
        state_change_logger.info("%sMetadata batch %d: handled replica changes in %d ms", ident, metadata_offset,
                                 self.time.milliseconds() - start_ms)

    # ------------------------------------------------------------------ RaftReplicaChangeDelegate

    def make_deferred(self, partitions_new_map: Mapping[Partition, bool], metadata_offset: int) -> None:
        self.replica_fetcher_manager.remove_fetcher_for_partitions({p.topic_partition for p in partitions_new_map})
        state_change_logger.info("%sMetadata batch %d: as part of become-deferred request, stopped any fetchers "
                                 "for %d partitions", self._state_change_ident, metadata_offset,
                                 len(partitions_new_map))
        for partition, is_new in partitions_new_map.items():
            self.mark_partition_deferred(partition, is_new)
        self.replica_fetcher_manager.shutdown_idle_fetcher_threads()
        self.replica_alter_log_dirs_manager.shutdown_idle_fetcher_threads()

    @staticmethod
    def _log_prefix(metadata_offset: Optional[int], kind: str, tp: TopicPartition) -> str:
        if metadata_offset is None:
            return f"Apply deferred {kind} partition {tp}"
        return f"Metadata batch {metadata_offset} {tp}"

    def make_leaders(self, prev_partitions_already_existing: set[TopicPartition],
                     partition_states: Mapping[Partition, MetadataPartition], hw_checkpoints: Any,
                     metadata_offset: Optional[int]) -> set[Partition]:
        ident = self._state_change_ident
        top = ("Metadata batch <multiple deferred>" if metadata_offset is None
               else f"Metadata batch {metadata_offset}")
        made: set[Partition] = set()
        try:
            self.replica_fetcher_manager.remove_fetcher_for_partitions({p.topic_partition for p in partition_states})
            state_change_logger.info("%s%s: stopped %d fetcher(s)", ident, top, len(partition_states))
            for partition, state in partition_states.items():
                tp = partition.topic_partition
                prefix = self._log_prefix(metadata_offset, "leader", tp)
                try:
                    is_new = tp not in prev_partitions_already_existing
                    if partition.make_leader(state.to_leader_and_isr_partition_state(is_new), hw_checkpoints):
                        made.add(partition)
                    else:
                        state_change_logger.info("%s%s: skipped the become-leader state change since it is already "
                                                 "the leader.", ident, prefix)
                except KafkaStorageException as e:
                    state_change_logger.error("%s%s: unable to make leader because the replica for the partition is "
                                              "offline due to disk error %s", ident, prefix, e)
                    self.logger.error("Error while making broker the leader for partition %s in dir %s", tp,
                                      self.get_log_dir(tp), exc_info=e)
                    self.mark_partition_offline(tp)
        except Exception:
            state_change_logger.error("%s%s: error while processing batch.", ident, top, exc_info=True)
            raise
        return made

    def make_followers(self, prev_partitions_already_existing: set[TopicPartition], current_brokers: MetadataBrokers,
                       partition_states: Mapping[Partition, MetadataPartition], hw_checkpoints: Any,
                       metadata_offset: Optional[int]) -> set[Partition]:
        ident = self._state_change_ident
        top = ("Metadata batch <multiple deferred>" if metadata_offset is None
               else f"Metadata batch {metadata_offset}")
        made: set[Partition] = set()
        # every registered broker, fenced or not, may lead
        brokers_by_id = {b.id: b for b in current_brokers.iterator()}
        try:
            for partition, state in partition_states.items():
                tp = partition.topic_partition
                prefix = self._log_prefix(metadata_offset, "follower", tp)
                is_new = tp not in prev_partitions_already_existing
                try:
                    if state.leader_id not in brokers_by_id:
                        state_change_logger.error("%s%s: cannot become follower since the new leader %d is "
                                                  "unavailable.", ident, prefix, state.leader_id)
                        # the log must exist all the same, or its HW would drop out of the checkpoint (KAFKA-1647)
                        partition.create_log_if_not_exists(is_new, False, hw_checkpoints)
                    elif partition.make_follower(state.to_leader_and_isr_partition_state(is_new), hw_checkpoints):
                        made.add(partition)
                    else:
                        state_change_logger.info("%s%s: skipped the become-follower state change since the new "
                                                 "leader %d is the same as the old leader.", ident, prefix,
                                                 state.leader_id)
                except KafkaStorageException as e:
                    state_change_logger.error("%s%s: unable to complete the become-follower state change since the "
                                              "replica for the partition is offline due to disk error %s", ident,
                                              prefix, e)
                    self.logger.error("Error while making broker the follower with leader %d in dir %s",
                                      state.leader_id, self.get_log_dir(tp), exc_info=e)
                    self.mark_partition_offline(tp)
            if made:
                self.replica_fetcher_manager.remove_fetcher_for_partitions({p.topic_partition for p in made})
                state_change_logger.info("%s%s: stopped followers for %d partitions", ident, top, len(made))
                for partition in made:
                    self._complete_delayed_fetch_or_produce_requests(partition.topic_partition)
                if not self.is_shutting_down.is_set():
                    listener = self.config.inter_broker_listener_name
                    fetch_states = {}
                    for partition in made:
                        # (a follower made from a metadata image knows its leader's id)
                        leader_id: int = partition.leader_replica_id_opt  # type: ignore[assignment]
                        leader = brokers_by_id[leader_id].broker_end_point(listener)
                        log = partition.local_log_or_exception()
                        fetch_states[partition.topic_partition] = InitialFetchState(
                            leader, partition.get_leader_epoch(), self.initial_fetch_offset(log))
                        if metadata_offset is None:
                            self._mark_online(partition)
                    self.replica_fetcher_manager.add_fetcher_for_partitions(fetch_states)
        except Exception:
            state_change_logger.error("%s%s: error while processing batch", ident, top, exc_info=True)
            raise
        return made


__all__ = ["RaftReplicaManager", "Deferred"]
