"""Port of core/src/main/scala/kafka/controller/TopicDeletionManager.scala.

Deleting a topic, as Kafka 2.8 does it:

1. An admin creates /admin/delete_topics/<topic> (DeleteTopics request, kafka-topics.sh).
2. The controller's child watch fires; the topic is queued for deletion (with
   delete.topic.enable=false the marker is simply removed and nothing else happens).
3. Deletion starts: the partitions go Offline -> NonExistent, UpdateMetadata tells every
   broker the topic's leader is -2 (being deleted), each live replica goes OfflineReplica
   (StopReplica without delete, so followers stop fetching) and then ReplicaDeletionStarted
   (StopReplica with deletePartition=true, so the broker deletes the log).
4. Each StopReplica response moves its replicas to ReplicaDeletionSuccessful, or on an error
   to ReplicaDeletionIneligible. A replica on a dead broker is ineligible at once, and the
   topic waits until that broker comes back (or a reassignment of the topic finishes).
5. When every replica is ReplicaDeletionSuccessful the controller removes the replicas from
   its cache and deletes /brokers/topics/<topic>, /config/topics/<topic> and the
   /admin/delete_topics marker; that is the only place a topic znode is ever deleted.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Iterable

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.controller.partition_state_machine import NonExistentPartition, OfflinePartition
from kafka_py.controller.replica_state_machine import (
    NonExistentReplica,
    OfflineReplica,
    ReplicaDeletionIneligible,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
)
from kafka_py.core.utils.logging import IdentLogger

if TYPE_CHECKING:
    from kafka_py.controller.controller_context import ControllerContext, PartitionAndReplica
    from kafka_py.controller.kafka_controller import KafkaController
    from kafka_py.controller.partition_state_machine import PartitionStateMachine
    from kafka_py.controller.replica_state_machine import ReplicaStateMachine
    from kafka_py.core.zk.kafka_zk_client import KafkaZkClient

logger = logging.getLogger(__name__)


class DeletionClient:
    """What the deletion manager needs from the world outside the controller context."""

    def delete_topic(self, topic: str, epoch_zk_version: int) -> None:
        raise NotImplementedError

    def delete_topic_deletions(self, topics: Iterable[str], epoch_zk_version: int) -> None:
        raise NotImplementedError

    def mute_partition_modifications(self, topic: str) -> None:
        raise NotImplementedError

    def send_metadata_update(self, partitions: Iterable[TopicPartition]) -> None:
        raise NotImplementedError


class ControllerDeletionClient(DeletionClient):
    def __init__(self, controller: "KafkaController", zk_client: "KafkaZkClient") -> None:
        self.controller = controller
        self.zk_client = zk_client

    def delete_topic(self, topic: str, epoch_zk_version: int) -> None:
        # Topic znode first: once it is gone the topic no longer exists for anybody, and a
        # leftover config or marker is harmless (the next controller cleans markers up).
        self.zk_client.delete_topic_znode(topic, epoch_zk_version)
        self.zk_client.delete_topic_configs([topic], epoch_zk_version)
        self.zk_client.delete_topic_deletions([topic], epoch_zk_version)

    def delete_topic_deletions(self, topics: Iterable[str], epoch_zk_version: int) -> None:
        self.zk_client.delete_topic_deletions(list(topics), epoch_zk_version)

    def mute_partition_modifications(self, topic: str) -> None:
        self.controller.unregister_partition_modifications_handlers([topic])

    def send_metadata_update(self, partitions: Iterable[TopicPartition]) -> None:
        self.controller.send_update_metadata_request(
            sorted(self.controller.controller_context.live_or_shutting_down_broker_ids), set(partitions))


class TopicDeletionManager:
    def __init__(self, config: Any, controller_context: "ControllerContext",
                 replica_state_machine: "ReplicaStateMachine", partition_state_machine: "PartitionStateMachine",
                 client: DeletionClient) -> None:
        self.config = config
        self.controller_context = controller_context
        self.replica_state_machine = replica_state_machine
        self.partition_state_machine = partition_state_machine
        self.client = client
        self.is_delete_topic_enabled: bool = bool(config.delete_topic_enable)
        self.logger = IdentLogger(logger, f"[Topic Deletion Manager {config.broker_id}] ")

    def init(self, initial_topics_to_be_deleted: set[str], initial_topics_ineligible_for_deletion: set[str]) -> None:
        self.logger.info("Initializing manager with initial deletions: %s, initial ineligible deletions: %s",
                         sorted(initial_topics_to_be_deleted), sorted(initial_topics_ineligible_for_deletion))
        ctx = self.controller_context
        if self.is_delete_topic_enabled:
            ctx.queue_topic_deletion(initial_topics_to_be_deleted)
            ctx.topics_ineligible_for_deletion.update(initial_topics_ineligible_for_deletion & ctx.topics_to_be_deleted)
        else:
            self.logger.info("Removing %s since delete topic is disabled",
                             sorted(initial_topics_to_be_deleted))
            self.client.delete_topic_deletions(sorted(initial_topics_to_be_deleted), ctx.epoch_zk_version)

    def try_topic_deletion(self) -> None:
        if self.is_delete_topic_enabled:
            self._resume_deletions()

    def enqueue_topics_for_deletion(self, topics: set[str]) -> None:
        if self.is_delete_topic_enabled:
            self.controller_context.queue_topic_deletion(topics)
            self._resume_deletions()

    def resume_deletion_for_topics(self, topics: Iterable[str] = ()) -> None:
        """A broker holding replicas of these topics came back, or their reassignment ended."""
        if not self.is_delete_topic_enabled:
            return
        to_resume = set(topics) & self.controller_context.topics_to_be_deleted
        if to_resume:
            self.controller_context.topics_ineligible_for_deletion -= to_resume
            self._resume_deletions()

    def fail_replica_deletion(self, replicas: Iterable["PartitionAndReplica"]) -> None:
        """A StopReplica(delete) failed for these replicas, or their broker died: park the topic."""
        if not self.is_delete_topic_enabled:
            return
        failed = [r for r in replicas if self.is_topic_queued_up_for_deletion(r.topic)]
        if failed:
            topics = {r.topic for r in failed}
            self.logger.debug("Deletion failed for replicas %s. Halting deletion for topics %s",
                              ",".join(map(str, failed)), sorted(topics))
            self.replica_state_machine.handle_state_changes(failed, ReplicaDeletionIneligible)
            self.mark_topic_ineligible_for_deletion(topics, reason=lambda: "replica deletion failure")
            self._resume_deletions()

    def mark_topic_ineligible_for_deletion(self, topics: Iterable[str], reason: Callable[[], str] | str) -> None:
        if not self.is_delete_topic_enabled:
            return
        newly_halted = self.controller_context.topics_to_be_deleted & set(topics)
        self.controller_context.topics_ineligible_for_deletion |= newly_halted
        if newly_halted:
            why = reason() if callable(reason) else reason
            self.logger.info("Halted deletion of topics %s due to %s", ",".join(sorted(newly_halted)), why)

    def _is_topic_ineligible_for_deletion(self, topic: str) -> bool:
        if self.is_delete_topic_enabled:
            return topic in self.controller_context.topics_ineligible_for_deletion
        return True

    def _is_topic_deletion_in_progress(self, topic: str) -> bool:
        if self.is_delete_topic_enabled:
            return self.controller_context.is_any_replica_in_state(topic, ReplicaDeletionStarted)
        return False

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        if self.is_delete_topic_enabled:
            return self.controller_context.is_topic_queued_up_for_deletion(topic)
        return False

    def complete_replica_deletion(self, replicas: Iterable["PartitionAndReplica"]) -> None:
        deleted = [r for r in replicas if self.is_topic_queued_up_for_deletion(r.topic)]
        self.logger.debug("Deletion successfully completed for replicas %s", ",".join(map(str, deleted)))
        self.replica_state_machine.handle_state_changes(deleted, ReplicaDeletionSuccessful)
        self._resume_deletions()

    def _is_topic_eligible_for_deletion(self, topic: str) -> bool:
        return (self.controller_context.is_topic_queued_up_for_deletion(topic)
                and not self._is_topic_deletion_in_progress(topic)
                and not self._is_topic_ineligible_for_deletion(topic))

    def _retry_deletion_for_ineligible_replicas(self, topics: set[str]) -> None:
        failed = [r for t in sorted(topics) for r in self.controller_context.replicas_in_state(t, ReplicaDeletionIneligible)]
        self.logger.debug("Retrying deletion of topics %s since replicas %s were not successfully deleted",
                          ",".join(sorted(topics)), ",".join(map(str, failed)))
        self.replica_state_machine.handle_state_changes(failed, OfflineReplica)

    def _complete_delete_topic(self, topic: str) -> None:
        # Stop watching the topic znode first, so that a topic auto-created again under the same
        # name is seen as a new topic rather than as a partition change of the old one.
        self.client.mute_partition_modifications(topic)
        deleted_replicas = self.controller_context.replicas_in_state(topic, ReplicaDeletionSuccessful)
        self.replica_state_machine.handle_state_changes(deleted_replicas, NonExistentReplica)
        self.client.delete_topic(topic, self.controller_context.epoch_zk_version)
        self.controller_context.remove_topic(topic)

    def _on_topic_deletion(self, topics: set[str]) -> None:
        ctx = self.controller_context
        unseen = topics - ctx.topics_with_deletion_started
        if unseen:
            unseen_partitions = [p for t in sorted(unseen) for p in ctx.partitions_for_topic(t)]
            self.partition_state_machine.handle_state_changes(unseen_partitions, OfflinePartition)
            self.partition_state_machine.handle_state_changes(unseen_partitions, NonExistentPartition)
            # Only after the partition state changes, so the offline-partition count is right.
            ctx.begin_topic_deletion(unseen)
        # Leader -2 in this UpdateMetadata makes brokers stop serving the topic.
        self.client.send_metadata_update([p for t in sorted(topics) for p in ctx.partitions_for_topic(t)])
        self._on_partition_deletion(topics)

    def _on_partition_deletion(self, topics_to_be_deleted: set[str]) -> None:
        ctx = self.controller_context
        all_dead_replicas: list[PartitionAndReplica] = []
        all_replicas_for_deletion_retry: list[PartitionAndReplica] = []
        ineligible: set[str] = set()
        for topic in sorted(topics_to_be_deleted):
            replicas = ctx.replicas_for_topic(topic)
            alive = [r for r in replicas if ctx.is_replica_online(r.replica, r.topic_partition)]
            dead = [r for r in replicas if not ctx.is_replica_online(r.replica, r.topic_partition)]
            successfully_deleted = set(ctx.replicas_in_state(topic, ReplicaDeletionSuccessful))
            all_dead_replicas.extend(dead)
            all_replicas_for_deletion_retry.extend(r for r in alive if r not in successfully_deleted)
            if dead:
                self.logger.debug("Dead Replicas (%s) found for topic %s", ",".join(map(str, dead)), topic)
                ineligible.add(topic)
        self.replica_state_machine.handle_state_changes(all_dead_replicas, ReplicaDeletionIneligible)
        # OfflineReplica first: StopReplica without delete makes followers stop fetching before
        # any replica's log is deleted.
        self.replica_state_machine.handle_state_changes(all_replicas_for_deletion_retry, OfflineReplica)
        self.replica_state_machine.handle_state_changes(all_replicas_for_deletion_retry, ReplicaDeletionStarted)
        if ineligible:
            self.mark_topic_ineligible_for_deletion(ineligible, reason="offline replicas")

    def _resume_deletions(self) -> None:
        ctx = self.controller_context
        queued = set(ctx.topics_to_be_deleted)
        eligible_for_retry: set[str] = set()
        eligible_for_deletion: set[str] = set()
        if queued:
            self.logger.info("Handling deletion for topics %s", ",".join(sorted(queued)))
        for topic in sorted(queued):
            if ctx.are_all_replicas_in_state(topic, ReplicaDeletionSuccessful):
                self._complete_delete_topic(topic)
                self.logger.info("Deletion of topic %s successfully completed", topic)
            elif not ctx.is_any_replica_in_state(topic, ReplicaDeletionStarted):
                # Nothing in flight and not all done: either deletion never started or some
                # replica failed, in which case it is retried.
                if ctx.is_any_replica_in_state(topic, ReplicaDeletionIneligible):
                    eligible_for_retry.add(topic)
            if self._is_topic_eligible_for_deletion(topic):
                self.logger.info("Deletion of topic %s (re)started", topic)
                eligible_for_deletion.add(topic)
        if eligible_for_retry:
            self._retry_deletion_for_ineligible_replicas(eligible_for_retry)
        if eligible_for_deletion:
            self._on_topic_deletion(eligible_for_deletion)
