"""Port of core/src/main/scala/kafka/controller/ReplicaStateMachine.scala (ReplicaStateMachine,
ZkReplicaStateMachine and the ReplicaState objects).

A replica (one broker's copy of one partition) is in one of seven states:

* NewReplica: created during a reassignment; it may only be told to follow.
* OnlineReplica: assigned and its broker is up; it may lead or follow.
* OfflineReplica: its broker (or log directory) is down.
* ReplicaDeletionStarted / ReplicaDeletionSuccessful / ReplicaDeletionIneligible: topic
  deletion sent StopReplica(delete) to it / the broker confirmed / it failed or the broker
  is down, so the deletion waits.
* NonExistentReplica: deleted; it is gone from the assignment cache.

Going offline removes the replica from the ISR in ZooKeeper (conditionally, retrying on a
version clash) and tells the remaining replicas the new ISR; if it was the leader the
partition is left leaderless (-1) for the partition state machine to re-elect.
"""
from __future__ import annotations

import enum
import logging
from itertools import groupby
from typing import TYPE_CHECKING, Any, Sequence

from kafka_py.core.api.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.controller.controller_context import PartitionAndReplica
from kafka_py.controller.partition_state_machine import StateChangeFailedException, init_zk_state_machine
from kafka_py.controller.state_change_logger import StateChangeLogger
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.zk.kafka_zk_client import Code, ControllerMovedException, KafkaZkClient
from kafka_py.core.zk.zk_data import ReplicaAssignment, TopicPartitionStateZNode

if TYPE_CHECKING:
    from kafka_py.controller.controller_channel_manager import ControllerBrokerRequestBatch
    from kafka_py.controller.controller_context import ControllerContext

logger = logging.getLogger(__name__)


class ReplicaState(enum.Enum):
    NEW_REPLICA = 1
    ONLINE_REPLICA = 2
    OFFLINE_REPLICA = 3
    REPLICA_DELETION_STARTED = 4
    REPLICA_DELETION_SUCCESSFUL = 5
    REPLICA_DELETION_INELIGIBLE = 6
    NON_EXISTENT_REPLICA = 7

    @property
    def valid_previous_states(self) -> frozenset["ReplicaState"]:
        return _VALID_PREVIOUS_REPLICA_STATES[self]

    def __str__(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))


NewReplica = ReplicaState.NEW_REPLICA
OnlineReplica = ReplicaState.ONLINE_REPLICA
OfflineReplica = ReplicaState.OFFLINE_REPLICA
ReplicaDeletionStarted = ReplicaState.REPLICA_DELETION_STARTED
ReplicaDeletionSuccessful = ReplicaState.REPLICA_DELETION_SUCCESSFUL
ReplicaDeletionIneligible = ReplicaState.REPLICA_DELETION_INELIGIBLE
NonExistentReplica = ReplicaState.NON_EXISTENT_REPLICA

_VALID_PREVIOUS_REPLICA_STATES = {
    NewReplica: frozenset({NonExistentReplica}),
    OnlineReplica: frozenset({NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible}),
    OfflineReplica: frozenset({NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible}),
    ReplicaDeletionStarted: frozenset({OfflineReplica}),
    ReplicaDeletionSuccessful: frozenset({ReplicaDeletionStarted}),
    ReplicaDeletionIneligible: frozenset({OfflineReplica, ReplicaDeletionStarted}),
    NonExistentReplica: frozenset({ReplicaDeletionSuccessful}),
}


class ReplicaStateMachine:
    def __init__(self, controller_context: "ControllerContext") -> None:
        self.controller_context = controller_context
        self.logger = IdentLogger(logger)

    def startup(self) -> None:
        """Called when this broker becomes controller: every replica on a live broker goes
        online (each gets a LeaderAndIsr with the current state), the rest offline."""
        self.logger.info("Initializing replica state")
        self._initialize_replica_state()
        self.logger.info("Triggering online replica state changes")
        online, offline = self.controller_context.online_and_offline_replicas()
        self.handle_state_changes(online, OnlineReplica)
        self.logger.info("Triggering offline replica state changes")
        self.handle_state_changes(offline, OfflineReplica)
        self.logger.debug("Started replica state machine with initial state -> %s",
                          self.controller_context.replica_states)

    def shutdown(self) -> None:
        self.logger.info("Stopped replica state machine")

    def _initialize_replica_state(self) -> None:
        ctx = self.controller_context
        for tp in ctx.all_partitions():
            for replica_id in ctx.partition_replica_assignment(tp):
                replica = PartitionAndReplica(tp, replica_id)
                if ctx.is_replica_online(replica_id, tp):
                    ctx.put_replica_state(replica, OnlineReplica)
                else:
                    # A broker may have died during the failover; treating its replicas as
                    # ineligible for deletion is the safe side for a topic being deleted.
                    ctx.put_replica_state(replica, ReplicaDeletionIneligible)

    def handle_state_changes(self, replicas: Sequence["PartitionAndReplica"], target_state: ReplicaState) -> None:
        raise NotImplementedError


class ZkReplicaStateMachine(ReplicaStateMachine):
    # set by init_zk_state_machine (controller/partition_state_machine.py)
    config: Any
    state_change_logger: StateChangeLogger
    zk_client: KafkaZkClient
    controller_broker_request_batch: ControllerBrokerRequestBatch
    controller_id: int

    def __init__(self, config: Any, state_change_logger: StateChangeLogger, controller_context: "ControllerContext",
                 zk_client: "KafkaZkClient", controller_broker_request_batch: "ControllerBrokerRequestBatch") -> None:
        super().__init__(controller_context)
        init_zk_state_machine(self, "ReplicaStateMachine", config, state_change_logger, zk_client,
                              controller_broker_request_batch)

    def handle_state_changes(self, replicas: Sequence["PartitionAndReplica"], target_state: ReplicaState) -> None:
        replicas = list(replicas)
        if not replicas:
            return
        try:
            self.controller_broker_request_batch.new_batch()
            by_broker = sorted(replicas, key=lambda r: r.replica)
            for replica_id, group in groupby(by_broker, key=lambda r: r.replica):
                self._do_handle_state_changes(replica_id, list(group), target_state)
            self.controller_broker_request_batch.send_requests_to_brokers(self.controller_context.epoch)
        except ControllerMovedException:
            self.logger.error("Controller moved to another broker when moving some replicas to %s state",
                              target_state, exc_info=True)
            raise
        except Exception:  # noqa: BLE001 - logged; the caller carries on, as in Kafka
            self.logger.error("Error while moving some replicas to %s state", target_state,
                              exc_info=True)

    def _do_handle_state_changes(self, replica_id: int, replicas: list["PartitionAndReplica"],
                                 target_state: ReplicaState) -> None:
        ctx = self.controller_context
        batch = self.controller_broker_request_batch
        state_logger = self.state_change_logger.with_controller_epoch(ctx.epoch)
        trace = state_logger.is_trace_enabled
        for replica in replicas:
            ctx.put_replica_state_if_not_exists(replica, NonExistentReplica)
        valid, invalid = ctx.check_valid_replica_state_change(replicas, target_state)
        for replica in invalid:
            self._log_invalid_transition(replica, target_state)

        if target_state is NewReplica:
            for replica in valid:
                partition = replica.topic_partition
                current_state = ctx.replica_state(replica)
                leadership = ctx.partition_leadership_info(partition)
                if leadership is not None:
                    if leadership.leader_and_isr.leader == replica_id:
                        self._log_failed_state_change(replica, current_state, OfflineReplica, StateChangeFailedException(
                            f"Replica {replica_id} for partition {partition} cannot be moved to NewReplica state as "
                            "it is being requested to become leader"))
                        continue
                    batch.add_leader_and_isr_request_for_brokers(
                        [replica_id], partition, leadership, ctx.partition_full_replica_assignment(partition),
                        is_new=True)
                if trace:
                    self._log_successful_transition(state_logger, replica_id, partition, current_state, NewReplica)
                ctx.put_replica_state(replica, NewReplica)

        elif target_state is OnlineReplica:
            for replica in valid:
                partition = replica.topic_partition
                current_state = ctx.replica_state(replica)
                if current_state is NewReplica:
                    assignment = ctx.partition_full_replica_assignment(partition)
                    if replica_id not in assignment.replicas:
                        self.logger.error("Adding replica (%d) that is not part of the assignment %s",
                                          replica_id, assignment)
                        ctx.update_partition_full_replica_assignment(partition, ReplicaAssignment(
                            assignment.replicas + (replica_id,), assignment.adding_replicas,
                            assignment.removing_replicas))
                else:
                    leadership = ctx.partition_leadership_info(partition)
                    if leadership is not None:
                        batch.add_leader_and_isr_request_for_brokers(
                            [replica_id], partition, leadership, ctx.partition_full_replica_assignment(partition),
                            is_new=False)
                if trace:
                    self._log_successful_transition(state_logger, replica_id, partition, current_state, OnlineReplica)
                ctx.put_replica_state(replica, OnlineReplica)

        elif target_state is OfflineReplica:
            for replica in valid:
                batch.add_stop_replica_request_for_brokers([replica_id], replica.topic_partition, delete_partition=False)
            with_leadership = [r for r in valid if ctx.partition_leadership_info(r.topic_partition) is not None]
            without_leadership = [r for r in valid if ctx.partition_leadership_info(r.topic_partition) is None]
            updated = self._remove_replicas_from_isr(replica_id, [r.topic_partition for r in with_leadership])
            for partition, leadership in updated.items():
                state_logger.info(f"Partition {partition} state changed to {leadership} after removing replica "
                                  f"{replica_id} from the ISR as part of transition to {OfflineReplica}")
                if not ctx.is_topic_queued_up_for_deletion(partition.topic):
                    recipients = [r for r in ctx.partition_replica_assignment(partition) if r != replica_id]
                    batch.add_leader_and_isr_request_for_brokers(
                        recipients, partition, leadership, ctx.partition_full_replica_assignment(partition),
                        is_new=False)
                replica = PartitionAndReplica(partition, replica_id)
                if trace:
                    self._log_successful_transition(state_logger, replica_id, partition, ctx.replica_state(replica),
                                                    OfflineReplica)
                ctx.put_replica_state(replica, OfflineReplica)
            for replica in without_leadership:
                if trace:
                    self._log_successful_transition(state_logger, replica_id, replica.topic_partition,
                                                    ctx.replica_state(replica), OfflineReplica)
                batch.add_update_metadata_request_for_brokers(sorted(ctx.live_or_shutting_down_broker_ids),
                                                              [replica.topic_partition])
                ctx.put_replica_state(replica, OfflineReplica)

        elif target_state is ReplicaDeletionStarted:
            for replica in valid:
                if trace:
                    self._log_successful_transition(state_logger, replica_id, replica.topic_partition,
                                                    ctx.replica_state(replica), ReplicaDeletionStarted)
                ctx.put_replica_state(replica, ReplicaDeletionStarted)
                batch.add_stop_replica_request_for_brokers([replica_id], replica.topic_partition, delete_partition=True)

        elif target_state in (ReplicaDeletionIneligible, ReplicaDeletionSuccessful):
            for replica in valid:
                if trace:
                    self._log_successful_transition(state_logger, replica_id, replica.topic_partition,
                                                    ctx.replica_state(replica), target_state)
                ctx.put_replica_state(replica, target_state)

        elif target_state is NonExistentReplica:
            for replica in valid:
                current_state = ctx.replica_state(replica)
                new_assignment = ctx.partition_full_replica_assignment(replica.topic_partition).remove_replica(
                    replica.replica)
                ctx.update_partition_full_replica_assignment(replica.topic_partition, new_assignment)
                if trace:
                    self._log_successful_transition(state_logger, replica_id, replica.topic_partition, current_state,
                                                    NonExistentReplica)
                ctx.remove_replica_state(replica)

    def _remove_replicas_from_isr(self, replica_id: int,
                                  partitions: list[TopicPartition]) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        results: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        remaining = partitions
        while remaining:
            finished, remaining = self._do_remove_replicas_from_isr(replica_id, remaining)
            for partition, result in finished.items():
                if isinstance(result, Exception):
                    replica = PartitionAndReplica(partition, replica_id)
                    self._log_failed_state_change(replica, self.controller_context.replica_state(replica),
                                                  OfflineReplica, result)
                else:
                    results[partition] = result
        return results

    def _do_remove_replicas_from_isr(
            self, replica_id: int, partitions: list[TopicPartition],
    ) -> tuple[dict[TopicPartition, "Exception | LeaderIsrAndControllerEpoch"], list[TopicPartition]]:
        ctx = self.controller_context
        leader_and_isrs, without_state = self._get_topic_partition_states_from_zk(partitions)
        adjusted: dict[TopicPartition, LeaderAndIsr] = {}
        unchanged: dict[TopicPartition, "Exception | LeaderAndIsr"] = {}
        for partition, result in leader_and_isrs.items():
            if isinstance(result, LeaderAndIsr) and replica_id in result.isr:
                new_leader = LeaderAndIsr.NO_LEADER if replica_id == result.leader else result.leader
                # The last ISR member stays in the ISR: an empty ISR would lose track of which
                # replica has all the data, which unclean election must not forget.
                new_isr = result.isr if len(result.isr) == 1 else tuple(r for r in result.isr if r != replica_id)
                adjusted[partition] = result.new_leader_and_isr(new_leader, new_isr)
            else:
                unchanged[partition] = result
        update = self.zk_client.update_leader_and_isr(adjusted, ctx.epoch, ctx.epoch_zk_version)

        results: dict[TopicPartition, "Exception | LeaderIsrAndControllerEpoch"] = {}
        for partition in without_state:
            if not ctx.is_topic_queued_up_for_deletion(partition.topic):
                results[partition] = StateChangeFailedException(
                    f"Failed to change state of replica {replica_id} for partition {partition} since the leader "
                    "and isr path in zookeeper is empty")
        merged: dict[TopicPartition, "Exception | LeaderAndIsr"] = dict(unchanged)
        merged.update(update.finished_partitions)
        for partition, result in merged.items():
            if isinstance(result, LeaderAndIsr):
                leadership = LeaderIsrAndControllerEpoch(result, ctx.epoch)
                ctx.put_partition_leadership_info(partition, leadership)
                results[partition] = leadership
            else:
                results[partition] = result
        for partition in update.partitions_to_retry:
            self.logger.debug("Controller failed to remove replica %d from ISR of partition %s. Attempted to write "
                              "state %s, but failed with bad ZK version. This will be retried.",
                              replica_id, partition, adjusted[partition])
        return results, list(update.partitions_to_retry)

    def _get_topic_partition_states_from_zk(
            self, partitions: list[TopicPartition],
    ) -> tuple[dict[TopicPartition, "Exception | LeaderAndIsr"], list[TopicPartition]]:
        try:
            responses = self.zk_client.get_topic_partition_states_raw(partitions)
        except Exception as e:  # noqa: BLE001
            return {p: e for p in partitions}, []
        without_state: list[TopicPartition] = []
        result: dict[TopicPartition, "Exception | LeaderAndIsr"] = {}
        for response in responses:
            partition = response.ctx
            if response.result_code == Code.OK:
                leadership = TopicPartitionStateZNode.decode(response.data, response.stat)
                if leadership is None:
                    without_state.append(partition)
                elif leadership.controller_epoch > self.controller_context.epoch:
                    result[partition] = StateChangeFailedException(
                        "Leader and isr path written by another controller. This probably means the current "
                        f"controller with epoch {self.controller_context.epoch} went through a soft failure and "
                        f"another controller was elected with epoch {leadership.controller_epoch}. Aborting state "
                        "change by this controller")
                else:
                    result[partition] = leadership.leader_and_isr
            elif response.result_code == Code.NONODE:
                without_state.append(partition)
            else:
                # (a result code other than OK and NONODE comes with its exception)
                result[partition] = response.result_exception  # type: ignore[assignment]
        return result, without_state

    def _log_successful_transition(self, state_logger: StateChangeLogger, replica_id: int, partition: TopicPartition,
                                   current_state: ReplicaState, target_state: ReplicaState) -> None:
        state_logger.trace(f"Changed state of replica {replica_id} for partition {partition} from {current_state} "
                           f"to {target_state}")

    def _log_invalid_transition(self, replica: "PartitionAndReplica", target_state: ReplicaState) -> None:
        current_state = self.controller_context.replica_state(replica)
        e = StateChangeFailedException(
            f"Replica {replica} should be in the "
            f"{','.join(str(s) for s in sorted(target_state.valid_previous_states, key=lambda s: s.value))} states "
            f"before moving to {target_state} state. Instead it is in {current_state} state")
        self._log_failed_state_change(replica, current_state, target_state, e)

    def _log_failed_state_change(self, replica: "PartitionAndReplica", current_state: ReplicaState,
                                 target_state: ReplicaState, error: BaseException | None) -> None:
        self.state_change_logger.with_controller_epoch(self.controller_context.epoch).error(
            f"Controller {self.controller_id} epoch {self.controller_context.epoch} initiated state change of replica "
            f"{replica.replica} for partition {replica.topic_partition} from {current_state} to {target_state} "
            f"failed: {error}")
