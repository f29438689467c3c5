"""Port of core/src/main/scala/kafka/controller/PartitionStateMachine.scala (PartitionStateMachine,
ZkPartitionStateMachine and the PartitionState objects; the election algorithms and strategies
are in election.py).

A partition is in one of four states:

* NonExistentPartition: never created, or deleted.
* NewPartition: replicas are assigned, no leader/ISR yet.
* OnlinePartition: a leader was elected and written to ZooKeeper.
* OfflinePartition: its leader died.

NewPartition -> OnlinePartition writes the first leader/ISR with a *create* of
/brokers/topics/<t>/partitions/<p>/state (first live replica leads, the live replicas are the
ISR). Online/Offline -> OnlinePartition runs an election and writes the result with a
conditional set on the znode version it read; a version clash means the leader changed the
ISR meanwhile, so that partition is read again and re-elected. Every ZooKeeper write is
fenced on the controller epoch's zkVersion, so a deposed controller cannot write at all.
Successful changes queue LeaderAndIsr requests to the replicas and UpdateMetadata to all live
brokers in the state machine's request batch, which is sent once per ``handle_state_changes``.
"""
from __future__ import annotations

import enum
import logging
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from kafka_py.core.api.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.controller.election import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    Election,
    OfflinePartitionLeaderElectionStrategy,
    PartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
    ReassignPartitionLeaderElectionStrategy,
)
from kafka_py.controller.state_change_logger import StateChangeLogger
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.zk.kafka_zk_client import Code, ControllerMovedException, KafkaZkClient
from kafka_py.core.zk.zk_data import TopicPartitionStateZNode

if TYPE_CHECKING:
    from kafka_py.controller.controller_channel_manager import ControllerBrokerRequestBatch
    from kafka_py.controller.controller_context import ControllerContext
    from kafka_py.controller.replica_state_machine import ZkReplicaStateMachine

logger = logging.getLogger(__name__)


class StateChangeFailedException(KafkaException):
    """A partition or replica could not be moved to the requested state (kafka.common)."""


class PartitionState(enum.Enum):
    NEW_PARTITION = 0
    ONLINE_PARTITION = 1
    OFFLINE_PARTITION = 2
    NON_EXISTENT_PARTITION = 3

    @property
    def valid_previous_states(self) -> frozenset["PartitionState"]:
        return _VALID_PREVIOUS_PARTITION_STATES[self]

    def __str__(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))


_VALID_PREVIOUS_PARTITION_STATES = {
    PartitionState.NEW_PARTITION: frozenset({PartitionState.NON_EXISTENT_PARTITION}),
    PartitionState.ONLINE_PARTITION: frozenset({PartitionState.NEW_PARTITION, PartitionState.ONLINE_PARTITION,
                                                PartitionState.OFFLINE_PARTITION}),
    PartitionState.OFFLINE_PARTITION: frozenset({PartitionState.NEW_PARTITION, PartitionState.ONLINE_PARTITION,
                                                 PartitionState.OFFLINE_PARTITION}),
    PartitionState.NON_EXISTENT_PARTITION: frozenset({PartitionState.OFFLINE_PARTITION}),
}

NewPartition = PartitionState.NEW_PARTITION
OnlinePartition = PartitionState.ONLINE_PARTITION
OfflinePartition = PartitionState.OFFLINE_PARTITION
NonExistentPartition = PartitionState.NON_EXISTENT_PARTITION

# Per partition: the exception that failed it, or the LeaderAndIsr it now has.
ElectionResults = dict[TopicPartition, "Exception | LeaderAndIsr"]


class PartitionStateMachine:
    def __init__(self, controller_context: "ControllerContext") -> None:
        self.controller_context = controller_context
        self.logger = IdentLogger(logger)

    def startup(self) -> None:
        """Called when this broker becomes controller: derive every partition's state from the
        leadership just read from ZooKeeper, then try to bring new and offline ones online."""
        self.logger.info("Initializing partition state")
        self._initialize_partition_state()
        self.logger.info("Triggering online partition state changes")
        self.trigger_online_partition_state_change()
        self.logger.debug("Started partition state machine with initial state -> %s",
                          self.controller_context.partition_states)

    def shutdown(self) -> None:
        self.logger.info("Stopped partition state machine")

    def trigger_online_partition_state_change(self, topic: str | None = None) -> ElectionResults:
        partitions = self.controller_context.partitions_in_states({OfflinePartition, NewPartition}, topic)
        return self._trigger_online_state_change_for_partitions(partitions)

    def _trigger_online_state_change_for_partitions(self, partitions: Iterable[TopicPartition]) -> ElectionResults:
        # Topics queued for deletion stay down: electing a leader would only resurrect them.
        to_trigger = [p for p in partitions if not self.controller_context.is_topic_queued_up_for_deletion(p.topic)]
        return self.handle_state_changes(to_trigger, OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))

    def _initialize_partition_state(self) -> None:
        for tp in self.controller_context.all_partitions():
            leadership = self.controller_context.partition_leadership_info(tp)
            if leadership is None:
                self.controller_context.put_partition_state(tp, NewPartition)
            elif self.controller_context.is_replica_online(leadership.leader_and_isr.leader, tp):
                self.controller_context.put_partition_state(tp, OnlinePartition)
            else:
                self.controller_context.put_partition_state(tp, OfflinePartition)

    def handle_state_changes(self, partitions: Sequence[TopicPartition], target_state: PartitionState,
                             leader_election_strategy: PartitionLeaderElectionStrategy | None = None,
                             ) -> ElectionResults:
        raise NotImplementedError


def init_zk_state_machine(machine: "ZkPartitionStateMachine | ZkReplicaStateMachine", name: str, config: Any,
                          state_change_logger: StateChangeLogger, zk_client: "KafkaZkClient",
                          controller_broker_request_batch: "ControllerBrokerRequestBatch") -> None:
    """The construction ZkPartitionStateMachine and ZkReplicaStateMachine share: both take the
    same five parameters, keep the same fields and log as ``[<name> controllerId=<id>] ``."""
    machine.config = config
    machine.state_change_logger = state_change_logger
    machine.zk_client = zk_client
    machine.controller_broker_request_batch = controller_broker_request_batch
    machine.controller_id = config.broker_id
    machine.logger.ident = f"[{name} controllerId={machine.controller_id}] "


class ZkPartitionStateMachine(PartitionStateMachine):
    # set by init_zk_state_machine (above)
    config: Any
    state_change_logger: StateChangeLogger
    zk_client: KafkaZkClient
    controller_broker_request_batch: ControllerBrokerRequestBatch
    controller_id: int

    def __init__(self, config: Any, state_change_logger: StateChangeLogger, controller_context: "ControllerContext",
                 zk_client: "KafkaZkClient", controller_broker_request_batch: "ControllerBrokerRequestBatch") -> None:
        super().__init__(controller_context)
        init_zk_state_machine(self, "PartitionStateMachine", config, state_change_logger, zk_client,
                              controller_broker_request_batch)
        # The broker config as it is now: unclean.leader.election.enable is a dynamic broker
        # default, and Kafka's KafkaConfig always reads the current dynamic value. The
        # controller points this at DynamicBrokerConfig when it has one.
        self.current_config: Callable[[], Any] = lambda: self.config

    def handle_state_changes(self, partitions: Sequence[TopicPartition], target_state: PartitionState,
                             leader_election_strategy: PartitionLeaderElectionStrategy | None = None,
                             ) -> ElectionResults:
        partitions = list(partitions)
        if not partitions:
            return {}
        try:
            self.controller_broker_request_batch.new_batch()
            result = self._do_handle_state_changes(partitions, target_state, leader_election_strategy)
            self.controller_broker_request_batch.send_requests_to_brokers(self.controller_context.epoch)
            return result
        except ControllerMovedException:
            self.logger.error("Controller moved to another broker when moving some partitions to %s state",
                              target_state, exc_info=True)
            raise
        except Exception as e:  # noqa: BLE001 - report per partition, as Kafka does
            self.logger.error("Error while moving some partitions to %s state", target_state,
                              exc_info=True)
            return {p: e for p in partitions}

    def _do_handle_state_changes(self, partitions: list[TopicPartition], target_state: PartitionState,
                                 strategy: PartitionLeaderElectionStrategy | None) -> ElectionResults:
        ctx = self.controller_context
        state_change_log = self.state_change_logger.with_controller_epoch(ctx.epoch)
        for p in partitions:
            ctx.put_partition_state_if_not_exists(p, NonExistentPartition)
        valid, invalid = ctx.check_valid_partition_state_change(partitions, target_state)
        for p in invalid:
            self._log_invalid_transition(p, target_state)

        if target_state is NewPartition:
            for p in valid:
                state_change_log.info(f"Changed partition {p} state from {ctx.partition_state(p)} to {target_state} "
                                      f"with assigned replicas {','.join(map(str, ctx.partition_replica_assignment(p)))}")
                ctx.put_partition_state(p, NewPartition)
            return {}
        if target_state is OnlinePartition:
            uninitialized = [p for p in valid if ctx.partition_state(p) is NewPartition]
            to_elect = [p for p in valid if ctx.partition_state(p) in (OfflinePartition, OnlinePartition)]
            if uninitialized:
                for p in self._initialize_leader_and_isr_for_partitions(uninitialized):
                    leadership = ctx.partition_leadership_info(p)
                    state_change_log.info(f"Changed partition {p} from {ctx.partition_state(p)} to {target_state} "
                                          f"with state {leadership.leader_and_isr if leadership else None}")
                    ctx.put_partition_state(p, OnlinePartition)
            if not to_elect:
                return {}
            if strategy is None:
                raise ValueError("Election strategy is a required field when the target state is OnlinePartition")
            results = self._elect_leader_for_partitions(to_elect, strategy)
            for p, result in results.items():
                if isinstance(result, LeaderAndIsr):
                    state_change_log.info(f"Changed partition {p} from {ctx.partition_state(p)} to {target_state} "
                                          f"with state {result}")
                    ctx.put_partition_state(p, OnlinePartition)
            return results
        # OfflinePartition and NonExistentPartition only change the in-memory state.
        for p in valid:
            if state_change_log.is_trace_enabled:
                state_change_log.trace(f"Changed partition {p} state from {ctx.partition_state(p)} to {target_state}")
            ctx.put_partition_state(p, target_state)
        return {}

    def _initialize_leader_and_isr_for_partitions(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        ctx = self.controller_context
        successful: list[TopicPartition] = []
        with_live: list[tuple[TopicPartition, tuple[int, ...]]] = []
        for p in partitions:
            replicas = ctx.partition_replica_assignment(p)
            live = tuple(r for r in replicas if ctx.is_replica_online(r, p))
            if live:
                with_live.append((p, live))
            else:
                fail = StateChangeFailedException(
                    f"Controller {self.controller_id} epoch {ctx.epoch} encountered error during state change of "
                    f"partition {p} from New to Online, assigned replicas are [{','.join(map(str, replicas))}], "
                    f"live brokers are [{sorted(ctx.live_broker_ids)}]. No assigned replica is alive.")
                self._log_failed_state_change(p, NewPartition, OnlinePartition, fail)
        states = {p: LeaderIsrAndControllerEpoch(LeaderAndIsr.of(live[0], live), ctx.epoch) for p, live in with_live}
        if not states:
            return successful
        try:
            responses = self.zk_client.create_topic_partition_states_raw(states, ctx.epoch_zk_version)
        except ControllerMovedException:
            self.logger.error("Controller moved to another broker when trying to create the topic partition state znode",
                              exc_info=True)
            raise
        except Exception as e:  # noqa: BLE001
            for p in states:
                self._log_failed_state_change(p, ctx.partition_state(p), NewPartition, e)
            return successful
        for response in responses:
            p = response.ctx
            state = states[p]
            if response.result_code == Code.OK:
                ctx.put_partition_leadership_info(p, state)
                self.controller_broker_request_batch.add_leader_and_isr_request_for_brokers(
                    state.leader_and_isr.isr, p, state, ctx.partition_full_replica_assignment(p), is_new=True)
                successful.append(p)
            else:
                self._log_failed_state_change(p, NewPartition, OnlinePartition, response.result_exception)
        return successful

    def _elect_leader_for_partitions(self, partitions: list[TopicPartition],
                                     strategy: PartitionLeaderElectionStrategy) -> ElectionResults:
        remaining = partitions
        finished_elections: ElectionResults = {}
        while remaining:
            finished, remaining = self._do_elect_leader_for_partitions(remaining, strategy)
            for p, result in finished.items():
                if isinstance(result, Exception):
                    self._log_failed_state_change(p, self.controller_context.partition_state(p), OnlinePartition,
                                                  result)
            finished_elections.update(finished)
            if remaining:
                self.logger.info("Retrying leader election with strategy %s for partitions %s",
                                 strategy, [str(p) for p in remaining])
        return finished_elections

    def _do_elect_leader_for_partitions(self, partitions: list[TopicPartition],
                                        strategy: PartitionLeaderElectionStrategy,
                                        ) -> tuple[ElectionResults, list[TopicPartition]]:
        ctx = self.controller_context
        try:
            responses = self.zk_client.get_topic_partition_states_raw(partitions)
        except Exception as e:  # noqa: BLE001
            return {p: e for p in partitions}, []
        failed: ElectionResults = {}
        valid_leader_and_isrs: list[tuple[TopicPartition, LeaderAndIsr]] = []
        for response in responses:
            p = response.ctx
            current_state = ctx.partition_state(p)
            if response.result_code == Code.OK:
                leadership = TopicPartitionStateZNode.decode(response.data, response.stat)
                if leadership is None:
                    failed[p] = StateChangeFailedException(
                        f"LeaderAndIsr information doesn't exist for partition {p} in {current_state} state")
                elif leadership.controller_epoch > ctx.epoch:
                    failed[p] = StateChangeFailedException(
                        f"Aborted leader election for partition {p} since the LeaderAndIsr path was already "
                        f"written by another controller. This probably means that the current controller "
                        f"{self.controller_id} went through a soft failure and another controller was elected "
                        f"with epoch {leadership.controller_epoch}.")
                else:
                    valid_leader_and_isrs.append((p, leadership.leader_and_isr))
            elif response.result_code == Code.NONODE:
                failed[p] = StateChangeFailedException(
                    f"LeaderAndIsr information doesn't exist for partition {p} in {current_state} state")
            else:
                # (a result code other than OK and NONODE comes with its exception)
                failed[p] = response.result_exception  # type: ignore[assignment]
        if not valid_leader_and_isrs:
            return failed, []

        if isinstance(strategy, OfflinePartitionLeaderElectionStrategy):
            states = self._collect_unclean_leader_election_state(valid_leader_and_isrs, strategy.allow_unclean)
            results = Election.leader_for_offline(ctx, states)
        elif isinstance(strategy, ReassignPartitionLeaderElectionStrategy):
            results = Election.leader_for_reassign(ctx, valid_leader_and_isrs)
        elif isinstance(strategy, PreferredReplicaPartitionLeaderElectionStrategy):
            results = Election.leader_for_preferred_replica(ctx, valid_leader_and_isrs)
        elif isinstance(strategy, ControlledShutdownPartitionLeaderElectionStrategy):
            results = Election.leader_for_controlled_shutdown(ctx, valid_leader_and_isrs)
        else:
            raise ValueError(f"unknown election strategy {strategy}")

        recipients: dict[TopicPartition, tuple[int, ...]] = {}
        adjusted: dict[TopicPartition, LeaderAndIsr] = {}
        for result in results:
            if result.leader_and_isr is None:
                failed[result.topic_partition] = StateChangeFailedException(
                    f"Failed to elect leader for partition {result.topic_partition} under strategy {strategy}")
            else:
                recipients[result.topic_partition] = result.live_replicas
                adjusted[result.topic_partition] = result.leader_and_isr
        if not adjusted:
            return failed, []
        update = self.zk_client.update_leader_and_isr(adjusted, ctx.epoch, ctx.epoch_zk_version)
        for p, written in update.finished_partitions.items():
            if isinstance(written, LeaderAndIsr):
                leadership = LeaderIsrAndControllerEpoch(written, ctx.epoch)
                ctx.put_partition_leadership_info(p, leadership)
                self.controller_broker_request_batch.add_leader_and_isr_request_for_brokers(
                    recipients[p], p, leadership, ctx.partition_full_replica_assignment(p), is_new=False)
        for p in update.partitions_to_retry:
            self.logger.debug("Controller failed to elect leader for partition %s. Attempted to write state %s, but "
                              "failed with bad ZK version. This will be retried.", p, adjusted[p])
        finished: ElectionResults = dict(update.finished_partitions)
        finished.update(failed)
        return finished, list(update.partitions_to_retry)

    def _collect_unclean_leader_election_state(
            self, leader_and_isrs: list[tuple[TopicPartition, LeaderAndIsr]], allow_unclean: bool,
    ) -> list[tuple[TopicPartition, LeaderAndIsr | None, bool]]:
        """Which of these partitions may elect a leader outside the ISR: those with no live ISR
        member whose topic (or the broker default) enables unclean election, or all of them
        when ``allow_unclean`` (an admin's explicit unclean election)."""
        ctx = self.controller_context
        without_live_isr = []
        with_live_isr = []
        for p, lai in leader_and_isrs:
            if any(ctx.is_replica_online(r, p) for r in lai.isr):
                with_live_isr.append((p, lai))
            else:
                without_live_isr.append((p, lai))
        result: list[tuple[TopicPartition, LeaderAndIsr | None, bool]] = []
        if allow_unclean:
            result.extend((p, lai, True) for p, lai in without_live_isr)
        elif without_live_isr:
            topics = {p.topic for p, _ in without_live_isr}
            log_configs, failures = self.zk_client.get_log_configs(topics, self.current_config().log_config_defaults())
            for p, lai in without_live_isr:
                if p.topic in failures:
                    self._log_failed_state_change(p, ctx.partition_state(p), OnlinePartition, failures[p.topic])
                    result.append((p, None, False))
                else:
                    result.append((p, lai, bool(log_configs[p.topic].unclean_leader_election_enable)))
        result.extend((p, lai, False) for p, lai in with_live_isr)
        return result

    def _log_invalid_transition(self, partition: TopicPartition, target_state: PartitionState) -> None:
        current_state = self.controller_context.partition_state(partition)
        e = StateChangeFailedException(
            f"Partition {partition} should be in one of "
            f"{','.join(str(s) for s in sorted(target_state.valid_previous_states, key=lambda s: s.value))} states "
            f"before moving to {target_state} state. Instead it is in {current_state} state")
        self._log_failed_state_change(partition, current_state, target_state, e)

    def _log_failed_state_change(self, partition: TopicPartition, current_state: PartitionState,
                                 target_state: PartitionState, error: BaseException | None) -> None:
        self.state_change_logger.with_controller_epoch(self.controller_context.epoch).error(
            f"Controller {self.controller_id} epoch {self.controller_context.epoch} failed to change state for "
            f"partition {partition} from {current_state} to {target_state}: {error}")
