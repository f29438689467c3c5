"""Port of core/src/main/scala/kafka/admin/ReassignPartitionsCommand.scala (Kafka 2.8.2):
``bin/kafka-reassign-partitions.sh``, which moves partitions between brokers.

Exactly one action:

* ``--generate --topics-to-move-json-file F --broker-list 1,2,3``: print the current
  assignment of the topics in F (``{"version":1,"topics":[{"topic":"t"}]}``) and a proposed
  one over the listed brokers (Kafka's replica placement, rack-aware unless
  ``--disable-rack-aware``). Nothing is changed.
* ``--execute --reassignment-json-file F``: start the reassignments of F
  (``{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2,3]}]}``, with an
  optional ``"log_dirs"`` list per partition naming a log dir per replica, or ``"any"``)
  through AlterPartitionReassignments; it prints the current assignment first, to save for a
  rollback. ``--throttle B`` limits the traffic of the moving replicas to B bytes/s: the
  brokers involved get ``leader.replication.throttled.rate`` and
  ``follower.replication.throttled.rate``, the topics ``leader.replication.throttled.replicas``
  (the current replicas) and ``follower.replication.throttled.replicas`` (the new ones).
  ``--replica-alter-log-dirs-throttle B`` sets ``replica.alter.log.dirs.io.max.bytes.per.second``
  on the brokers moving replicas between log dirs. With reassignments already running,
  ``--additional`` is needed (and also serves to change the throttle of a running one).
* ``--verify --reassignment-json-file F``: say of each partition of F whether its
  reassignment is complete; once no reassignment is running in the cluster, remove the
  throttles (every live broker's and those of F's topics) unless ``--preserve-throttles``.
* ``--cancel --reassignment-json-file F``: cancel the running reassignments of F's partitions
  (their replicas go back to what they were), then remove the throttles likewise.
* ``--list``: the running reassignments, with the replicas being added and removed.

``--zookeeper host:port[/chroot]`` instead of ``--bootstrap-server`` (deprecated in Kafka
2.8, with its warnings) serves ``--generate``, ``--execute`` and ``--verify`` through
ZooKeeper as 2.8.2's tool does: the assignment read from the topic znodes, the reassignment
written to /admin/reassign_partitions (refused while that znode exists), throttles set and
cleared in the config znodes, and no log dir moves (they need ``--bootstrap-server``).

Output, JSON formats and messages are Kafka 2.8.2's. Differences, on purpose: failures are
one line on stderr with exit status 1, never a stack trace.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from collections.abc import Sized
from typing import Any, Callable, Iterable, Mapping, Sequence

import click

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.utils.command_line_utils import (
    BROKER_RESOURCE,
    DEFAULT_BOOTSTRAP_TIMEOUT_MS,
    OP_DELETE,
    OP_SET,
    TOPIC_RESOURCE,
    AdminCommandFailedException,
    CommandError,
    client_configs,
    connect,
    error_message,
    handle_errors,
    incremental_alter_configs,
    load_props,
    run_tool,
    send_admin_request,
    tool_zk_client,
    validate_bootstrap_servers,
)

logger = logging.getLogger(__name__)

HELP_TEXT = "This tool helps to move topic partitions between replicas."
ANY_LOG_DIR = "any"
EARLIEST_VERSION = 1
EARLIEST_TOPICS_JSON_VERSION = 1

# Throttles set on each broker involved, and on each topic moved.
BROKER_LEVEL_LEADER_THROTTLE = "leader.replication.throttled.rate"
BROKER_LEVEL_FOLLOWER_THROTTLE = "follower.replication.throttled.rate"
BROKER_LEVEL_LOG_DIR_THROTTLE = "replica.alter.log.dirs.io.max.bytes.per.second"
BROKER_LEVEL_THROTTLES = (BROKER_LEVEL_LEADER_THROTTLE, BROKER_LEVEL_FOLLOWER_THROTTLE, BROKER_LEVEL_LOG_DIR_THROTTLE)
TOPIC_LEVEL_LEADER_THROTTLE = "leader.replication.throttled.replicas"
TOPIC_LEVEL_FOLLOWER_THROTTLE = "follower.replication.throttled.replicas"
TOPIC_LEVEL_THROTTLES = (TOPIC_LEVEL_LEADER_THROTTLE, TOPIC_LEVEL_FOLLOWER_THROTTLE)

CANNOT_EXECUTE_BECAUSE_OF_EXISTING_MESSAGE = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override this and "
    "create a new partition assignment in addition to the existing one. The --additional flag can also be used "
    "to change the throttle by resubmitting the current reassignment.")
YOU_MUST_RUN_VERIFY_PERIODICALLY_MESSAGE = (
    "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is "
    "removed.")

Out = Callable[[str], None]


class TerseReassignmentFailureException(CommandError):
    """A failure Kafka reports with its message only."""


@dataclass(frozen=True, order=True)
class TopicPartitionReplica:
    topic: str
    partition: int
    broker_id: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}-{self.broker_id}"


def compare_key_replica(r: TopicPartitionReplica) -> tuple[int, str, int]:
    """Kafka sorts replicas by broker, then topic, then partition."""
    return (r.broker_id, r.topic, r.partition)


@dataclass(frozen=True)
class PartitionReassignmentState:
    current_replicas: tuple[int, ...]
    target_replicas: tuple[int, ...]
    done: bool


@dataclass(frozen=True)
class PartitionReassignment:
    """One running reassignment (ListPartitionReassignments): all replicas, those being added
    and those being removed."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]


@dataclass(frozen=True)
class PartitionMove:
    sources: frozenset[int]
    destinations: frozenset[int]


# Where a replica stands in a move between log dirs.
@dataclass(frozen=True)
class MissingReplicaMoveState:
    target_log_dir: str
    done = False


@dataclass(frozen=True)
class MissingLogDirMoveState:
    target_log_dir: str
    done = False


@dataclass(frozen=True)
class ActiveMoveState:
    current_log_dir: str
    target_log_dir: str
    future_log_dir: str
    done = False


@dataclass(frozen=True)
class CancelledMoveState:
    current_log_dir: str
    target_log_dir: str
    done = True


@dataclass(frozen=True)
class CompletedMoveState:
    target_log_dir: str
    done = True


LogDirMoveState = Any
MoveMap = dict[str, dict[int, PartitionMove]]


def _duplicates(items: Iterable[Any]) -> list[Any]:
    """CoreUtils.duplicates: the items seen more than once, each once, in first-seen order."""
    seen: set[Any] = set()
    dups: list[Any] = []
    for item in items:
        if item in seen and item not in dups:
            dups.append(item)
        seen.add(item)
    return dups


def _join(items: Iterable[Any]) -> str:
    return ",".join(str(i) for i in items)


def _plural(items: Sized) -> str:
    return "" if len(items) == 1 else "s"


# -- JSON ------------------------------------------------------------------------------------

def _load_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        raise AdminCommandFailedException(f"The input string is not a valid JSON: {e}") from None


def _json_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise AdminCommandFailedException(f"Expected an integer for {what}, found {json.dumps(value)}")
    return value


def format_as_reassignment_json(partitions: Mapping[TopicPartition, Sequence[int]],
                                replica_log_dirs: Mapping[TopicPartitionReplica, str]) -> str:
    """The reassignment JSON Kafka writes: partitions sorted, every replica's log dir ("any"
    unless given), compact."""
    return json.dumps({"version": EARLIEST_VERSION, "partitions": [
        {"topic": tp.topic, "partition": tp.partition, "replicas": list(partitions[tp]),
         "log_dirs": [replica_log_dirs.get(TopicPartitionReplica(tp.topic, tp.partition, r), ANY_LOG_DIR)
                      for r in partitions[tp]]}
        for tp in sorted(partitions)]}, separators=(",", ":"))


def parse_topics_data(text: str) -> list[str]:
    """The topics of a --topics-to-move-json-file."""
    data = _load_json(text)
    if not isinstance(data, dict):
        raise AdminCommandFailedException("The topics to move JSON must be an object")
    version = _json_int(data.get("version", EARLIEST_TOPICS_JSON_VERSION), "version")
    if version != 1:
        raise AdminCommandFailedException(f"Not supported version field value {version}")
    topics = []
    for entry in data.get("topics") or ():
        topic = entry.get("topic") if isinstance(entry, dict) else None
        if not isinstance(topic, str):
            raise AdminCommandFailedException(f"Each entry of \"topics\" needs a \"topic\" string: {json.dumps(entry)}")
        topics.append(topic)
    return topics


def parse_partition_reassignment_data(text: str) -> tuple[list[tuple[TopicPartition, list[int]]],
                                                           dict[TopicPartitionReplica, str]]:
    """The partitions of a --reassignment-json-file, in file order and not de-duplicated (so
    duplicates can be refused), and the log dirs named for replicas (``any`` left out)."""
    data = _load_json(text)
    if not isinstance(data, dict):
        raise AdminCommandFailedException("The reassignment JSON must be an object")
    version = _json_int(data.get("version", EARLIEST_VERSION), "version")
    if version != 1:
        raise AdminCommandFailedException(f"Not supported version field value {version}")
    partitions: list[tuple[TopicPartition, list[int]]] = []
    log_dirs: dict[TopicPartitionReplica, str] = {}
    for entry in data.get("partitions") or ():
        if not isinstance(entry, dict) or not isinstance(entry.get("topic"), str):
            raise AdminCommandFailedException(f"Each partition needs a \"topic\" string: {json.dumps(entry)}")
        topic = entry["topic"]
        partition = _json_int(entry.get("partition"), f"the partition of {json.dumps(entry)}")
        replicas_value = entry.get("replicas")
        if not isinstance(replicas_value, list):
            raise AdminCommandFailedException(f"Each partition needs a \"replicas\" list: {json.dumps(entry)}")
        replicas = [_json_int(r, f"a replica of {topic}-{partition}") for r in replicas_value]
        dirs = entry.get("log_dirs")
        if dirs is None:
            dirs = [ANY_LOG_DIR] * len(replicas)
        if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
            raise AdminCommandFailedException(f"\"log_dirs\" must be a list of strings: {json.dumps(entry)}")
        if len(replicas) != len(dirs):
            raise AdminCommandFailedException(
                f"Size of replicas list {_scala_seq(replicas)} is different from size of log dirs list "
                f"{_scala_seq(dirs)} for partition {topic}-{partition}")
        tp = TopicPartition(topic, partition)
        partitions.append((tp, replicas))
        for replica, log_dir in zip(replicas, dirs):
            if log_dir != ANY_LOG_DIR:
                log_dirs[TopicPartitionReplica(topic, partition, replica)] = log_dir
    return partitions, log_dirs


def _scala_seq(items: Sequence[Any]) -> str:
    return f"List({', '.join(str(i) for i in items)})"


def parse_generate_assignment_args(text: str, broker_list: str) -> tuple[list[int], list[str]]:
    try:
        brokers = [int(b) for b in broker_list.split(",")]
    except ValueError:
        raise AdminCommandFailedException(f"Invalid broker list {broker_list}: expected ids like 0,1,2") from None
    duplicates = _duplicates(brokers)
    if duplicates:
        raise AdminCommandFailedException(f"Broker list contains duplicate entries: {_join(duplicates)}")
    topics = parse_topics_data(text)
    duplicate_topics = _duplicates(topics)
    if duplicate_topics:
        raise AdminCommandFailedException(
            f"List of topics to reassign contains duplicate entries: {_join(duplicate_topics)}")
    return brokers, topics


def parse_execute_assignment_args(text: str) -> tuple[dict[TopicPartition, list[int]],
                                                       dict[TopicPartitionReplica, str]]:
    partitions, log_dirs = parse_partition_reassignment_data(text)
    if not partitions:
        raise AdminCommandFailedException("Partition reassignment list cannot be empty")
    if any(not replicas for _, replicas in partitions):
        raise AdminCommandFailedException("Partition replica list cannot be empty")
    duplicate_partitions = _duplicates(tp for tp, _ in partitions)
    if duplicate_partitions:
        raise AdminCommandFailedException(
            f"Partition reassignment contains duplicate topic partitions: {_join(duplicate_partitions)}")
    duplicate_entries = [(tp, _duplicates(replicas)) for tp, replicas in partitions if _duplicates(replicas)]
    if duplicate_entries:
        message = ". ".join(f"{tp} contains multiple entries for {_join(dups)}" for tp, dups in duplicate_entries)
        raise AdminCommandFailedException(f"Partition replica lists may not contain duplicate entries: {message}")
    return dict(partitions), log_dirs


# -- calculations ----------------------------------------------------------------------------

def calculate_assignment(current: Mapping[TopicPartition, Sequence[int]],
                         broker_metadatas: Sequence[Any]) -> dict[TopicPartition, list[int]]:
    """A new assignment of each topic's partitions over ``broker_metadatas``, with the
    replication factor of its first partition (AdminUtils.assignReplicasToBrokers)."""
    from kafka_py.core.zk.admin_zk_client import AdminUtils

    by_topic: dict[str, dict[TopicPartition, Sequence[int]]] = {}
    for tp, replicas in current.items():
        by_topic.setdefault(tp.topic, {})[tp] = replicas
    proposed: dict[TopicPartition, list[int]] = {}
    for topic, assignment in by_topic.items():
        replication_factor = len(next(iter(assignment.values())))
        try:
            placed = AdminUtils.assign_replicas_to_brokers(broker_metadatas, len(assignment), replication_factor)
        except Exception as e:  # noqa: BLE001 - InvalidReplicationFactor and friends, as one line
            raise AdminCommandFailedException(str(e)) from None
        for partition, replicas in placed.items():
            proposed[TopicPartition(topic, partition)] = list(replicas)
    return proposed


def calculate_current_move_map(current_reassignments: Mapping[TopicPartition, PartitionReassignment]) -> MoveMap:
    move_map: MoveMap = {}
    for tp, reassignment in current_reassignments.items():
        # the replicas being added are part of the replica list while a reassignment runs
        sources = frozenset(r for r in reassignment.replicas if r not in reassignment.adding_replicas)
        move_map.setdefault(tp.topic, {})[tp.partition] = PartitionMove(sources,
                                                                         frozenset(reassignment.adding_replicas))
    return move_map


def calculate_proposed_move_map(current_reassignments: Mapping[TopicPartition, PartitionReassignment],
                                proposed_parts: Mapping[TopicPartition, Sequence[int]],
                                current_parts: Mapping[TopicPartition, Sequence[int]]) -> MoveMap:
    move_map = calculate_current_move_map(current_reassignments)
    for tp, replicas in proposed_parts.items():
        part_moves = move_map.setdefault(tp.topic, {})
        existing = part_moves.get(tp.partition)
        if existing is not None:
            sources = existing.sources
        else:
            if tp not in current_parts:
                raise AdminCommandFailedException(f"Trying to reassign a topic partition {tp} with 0 replicas")
            sources = frozenset(current_parts[tp])
        part_moves[tp.partition] = PartitionMove(sources, frozenset(r for r in replicas if r not in sources))
    return move_map


def calculate_leader_throttles(move_map: MoveMap) -> dict[str, str]:
    """Every current replica of a moving partition, as partition:broker (sorted as strings, as
    Kafka's TreeSet of them)."""
    return {topic: ",".join(sorted({f"{p}:{s}" for p, move in moves.items() for s in move.sources}))
            for topic, moves in move_map.items()}


def calculate_follower_throttles(move_map: MoveMap) -> dict[str, str]:
    """Every new replica of a moving partition, as partition:broker."""
    return {topic: ",".join(sorted({f"{p}:{d}" for p, move in moves.items() for d in move.destinations
                                    if d not in move.sources}))
            for topic, moves in move_map.items()}


def calculate_reassigning_brokers(move_map: MoveMap) -> set[int]:
    return {b for moves in move_map.values() for move in moves.values() for b in move.sources | move.destinations}


def calculate_moving_brokers(replica_moves: Iterable[TopicPartitionReplica]) -> set[int]:
    return {r.broker_id for r in replica_moves}


# -- text --------------------------------------------------------------------------------------

def partition_reassignment_states_to_string(states: Mapping[TopicPartition, PartitionReassignmentState]) -> str:
    lines = ["Status of partition reassignment:"]
    for tp in sorted(states):
        state = states[tp]
        if state.done:
            if state.current_replicas == state.target_replicas:
                lines.append(f"Reassignment of partition {tp} is complete.")
            else:
                lines.append(f"There is no active reassignment of partition {tp}, but replica set is "
                             f"{_join(state.current_replicas)} rather than {_join(state.target_replicas)}.")
        else:
            lines.append(f"Reassignment of partition {tp} is still in progress.")
    return "\n".join(lines)


def replica_move_states_to_string(states: Mapping[TopicPartitionReplica, LogDirMoveState]) -> str:
    lines = []
    for replica in sorted(states, key=compare_key_replica):
        state = states[replica]
        where = f"{replica.topic}-{replica.partition}"
        if isinstance(state, MissingLogDirMoveState):
            lines.append(f"Partition {where} is not found in any live log dir on broker {replica.broker_id}. There "
                         "is likely an offline log directory on the broker.")
        elif isinstance(state, MissingReplicaMoveState):
            lines.append(f"Partition {where} cannot be found in any live log directory on broker "
                         f"{replica.broker_id}.")
        elif isinstance(state, ActiveMoveState):
            if state.target_log_dir == state.future_log_dir:
                lines.append(f"Reassignment of replica {replica} is still in progress.")
            else:
                lines.append(f"Partition {where} on broker {replica.broker_id} is being moved to log dir "
                             f"{state.future_log_dir} instead of {state.target_log_dir}.")
        elif isinstance(state, CancelledMoveState):
            lines.append(f"Partition {where} on broker {replica.broker_id} is not being moved from log dir "
                         f"{state.current_log_dir} to {state.target_log_dir}.")
        else:
            lines.append(f"Reassignment of replica {replica} completed successfully.")
    return "\n".join(lines)


def cur_reassignments_to_string(reassignments: Mapping[TopicPartition, PartitionReassignment]) -> str:
    lines = []
    for tp in sorted(reassignments):
        r = reassignments[tp]
        adding = f" adding: {_join(r.adding_replicas)}." if r.adding_replicas else ""
        removing = f" removing: {_join(r.removing_replicas)}." if r.removing_replicas else ""
        lines.append(f"{tp}: replicas: {_join(r.replicas)}.{adding}{removing}")
    if not lines:
        return "No partition reassignments found."
    return "Current partition reassignments:\n" + "\n".join(lines)


def current_partition_replica_assignment_to_string(proposed_parts: Mapping[TopicPartition, Sequence[int]],
                                                   current_parts: Mapping[TopicPartition, Sequence[int]]) -> str:
    current = {tp: r for tp, r in current_parts.items() if tp in proposed_parts}
    return (f"Current partition replica assignment\n\n{format_as_reassignment_json(current, {})}\n\n"
            "Save this to use as the --reassignment-json-file option during rollback")


# -- the cluster -----------------------------------------------------------------------------

class ReassignAdmin:
    """What the tool asks of the cluster, over kafka-python's KafkaAdminClient (the answers'
    error messages are kept, which its public methods drop)."""

    def __init__(self, admin: Any) -> None:
        self.admin = admin

    @classmethod
    def create(cls, bootstrap_server: str, command_config: Mapping[str, str]) -> "ReassignAdmin":
        from kafka import KafkaAdminClient

        props = {"bootstrap.timeout.ms": str(DEFAULT_BOOTSTRAP_TIMEOUT_MS), **command_config,
                 "bootstrap.servers": bootstrap_server}
        configs = client_configs(props, KafkaAdminClient)
        configs.setdefault("client_id", "reassign-partitions-tool")
        return cls(connect(KafkaAdminClient, configs))

    def close(self) -> None:
        self.admin.close()

    def _to_controller(self, request: Any) -> Any:
        import kafka.errors as kafka_errors

        admin = self.admin

        def top_level(response: Any) -> Iterable[Any]:
            yield kafka_errors.for_code(response.error_code)

        response = admin._manager.run(admin._send_request_to_controller, request, top_level, False)
        if response.error_code:
            raise CommandError(f"Error: {error_message(response.error_code, response.error_message)}")
        return response

    def list_partition_reassignments(self, partitions: Iterable[TopicPartition] | None = None
                                     ) -> dict[TopicPartition, PartitionReassignment]:
        from kafka.protocol.admin import ListPartitionReassignmentsRequest

        topics = None
        if partitions is not None:
            by_topic: dict[str, list[int]] = {}
            for tp in partitions:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            topics = [ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics(
                name=t, partition_indexes=sorted(ps)) for t, ps in sorted(by_topic.items())]
        response = self._to_controller(ListPartitionReassignmentsRequest(timeout_ms=30000, topics=topics))
        return {TopicPartition(t.name, p.partition_index): PartitionReassignment(
            tuple(p.replicas), tuple(p.adding_replicas), tuple(p.removing_replicas))
            for t in response.topics for p in t.partitions}

    def alter_partition_reassignments(self, reassignments: Mapping[TopicPartition, Sequence[int] | None]
                                      ) -> dict[TopicPartition, str]:
        """Start (or, for None, cancel) reassignments; the message of each partition that failed."""
        from kafka.protocol.admin import AlterPartitionReassignmentsRequest

        topic_class = AlterPartitionReassignmentsRequest.ReassignableTopic
        partition_class = topic_class.ReassignablePartition
        by_topic: dict[str, list[Any]] = {}
        for tp in sorted(reassignments):
            replicas = reassignments[tp]
            by_topic.setdefault(tp.topic, []).append(partition_class(
                partition_index=tp.partition, replicas=None if replicas is None else list(replicas)))
        request = AlterPartitionReassignmentsRequest(timeout_ms=30000, topics=[
            topic_class(name=topic, partitions=parts) for topic, parts in by_topic.items()])
        response = self._to_controller(request)
        errors = {}
        for topic in response.responses:
            for p in topic.partitions:
                if p.error_code:
                    errors[TopicPartition(topic.name, p.partition_index)] = error_message(p.error_code,
                                                                                         p.error_message)
        return errors

    def replica_assignment_for_topics(self, topics: Sequence[str]) -> dict[TopicPartition, list[int]]:
        """Every partition's replicas; an error (an unknown topic) fails the command."""
        result: dict[TopicPartition, list[int]] = {}
        for topic in self.admin.describe_topics(list(topics)):
            if topic.get("error_code"):
                raise AdminCommandFailedException(error_message(topic["error_code"]))
            for p in topic.get("partitions") or ():
                result[TopicPartition(topic["name"], p["partition_index"])] = list(p.get("replica_nodes") or ())
        return result

    def replica_assignment_for_partitions(self, partitions: Iterable[TopicPartition]
                                          ) -> dict[TopicPartition, list[int]]:
        wanted = set(partitions)
        current = self.replica_assignment_for_topics(sorted({tp.topic for tp in wanted}))
        return {tp: r for tp, r in current.items() if tp in wanted}

    def describe_topics_or_none(self, topics: Iterable[str]) -> dict[str, dict[int, list[int]] | None]:
        """Each topic's partitions' replicas; None for a topic that does not exist."""
        result: dict[str, dict[int, list[int]] | None] = {}
        names = sorted(set(topics))
        if not names:
            return result
        for topic in self.admin.describe_topics(names):
            if topic.get("error_code"):
                result[topic["name"]] = None
            else:
                result[topic["name"]] = {p["partition_index"]: list(p.get("replica_nodes") or ())
                                         for p in topic.get("partitions") or ()}
        return result

    def cluster_nodes(self) -> dict[int, str | None]:
        """Live brokers and their racks (Admin.describeCluster)."""
        from kafka.protocol.metadata import MetadataRequest

        response = send_admin_request(self.admin, MetadataRequest(topics=[], allow_auto_topic_creation=False))
        return {b.node_id: getattr(b, "rack", None) for b in response.brokers}

    def incremental_alter_configs(self, resource_type: int, name: str,
                                  ops: Sequence[tuple[str, int, str | None]]) -> None:
        incremental_alter_configs(self.admin, resource_type, name, ops)

    def alter_replica_log_dirs(self, assignment: Mapping[TopicPartitionReplica, str]) -> set[TopicPartitionReplica]:
        """The replicas whose move was started; a replica not (yet) on its broker is skipped."""
        import kafka.errors as kafka_errors
        from kafka import TopicPartitionReplica as KafkaReplica

        results = self.admin.alter_replica_log_dirs(
            {KafkaReplica(r.topic, r.partition, r.broker_id): d for r, d in assignment.items()})
        started = set()
        for replica, error in results.items():
            ours = TopicPartitionReplica(replica.topic, replica.partition, replica.broker_id)
            if error is kafka_errors.NoError:
                started.add(ours)
            elif error is not kafka_errors.ReplicaNotAvailableError:
                raise AdminCommandFailedException(f"Failed to alter dir for {ours}: {error.__name__}")
        return started

    def describe_replica_log_dirs(self, replicas: Iterable[TopicPartitionReplica]
                                  ) -> dict[TopicPartitionReplica, tuple[str | None, str | None]]:
        """(current log dir, future log dir) of each replica its broker holds."""
        by_broker: dict[int, list[TopicPartitionReplica]] = {}
        for r in replicas:
            by_broker.setdefault(r.broker_id, []).append(r)
        result: dict[TopicPartitionReplica, tuple[str | None, str | None]] = {}
        for broker, wanted in by_broker.items():
            topic_partitions: dict[str, list[int]] = {}
            for r in wanted:
                topic_partitions.setdefault(r.topic, []).append(r.partition)
            [answer] = self.admin.describe_log_dirs(topic_partitions, brokers=[broker])
            found: dict[TopicPartitionReplica, list[str | None]] = {}
            for log_dir in answer["log_dirs"]:
                if log_dir.get("error_code"):
                    continue
                for topic in log_dir.get("topics") or ():
                    for p in topic.get("partitions") or ():
                        replica = TopicPartitionReplica(topic["name"], p["partition_index"], broker)
                        slot = found.setdefault(replica, [None, None])
                        slot[1 if p.get("is_future_key") else 0] = log_dir["log_dir"]
            for r in wanted:
                if r in found:
                    result[r] = (found[r][0], found[r][1])
        return result


# -- the actions -----------------------------------------------------------------------------

def generate_assignment(admin: ReassignAdmin, topics_json: str, broker_list: str, enable_rack_awareness: bool,
                        out: Out = click.echo
                        ) -> tuple[dict[TopicPartition, list[int]], dict[TopicPartition, list[int]]]:
    from kafka_py.core.zk.admin_zk_client import BrokerMetadata

    brokers, topics = parse_generate_assignment_args(topics_json, broker_list)
    current = admin.replica_assignment_for_topics(topics)
    wanted = set(brokers)
    nodes = {b: rack for b, rack in admin.cluster_nodes().items() if b in wanted}
    metadatas = [BrokerMetadata(b, rack if enable_rack_awareness else None) for b, rack in sorted(nodes.items())]
    rackless = sum(1 for m in metadatas if m.rack is None)
    if enable_rack_awareness and rackless not in (0, len(metadatas)):
        raise AdminCommandFailedException("Not all brokers have rack information. Add --disable-rack-aware in "
                                          "command line to make replica assignment without rack information.")
    proposed = calculate_assignment(current, metadatas)
    out(f"Current partition replica assignment\n{format_as_reassignment_json(current, {})}\n")
    out(f"Proposed partition reassignment configuration\n{format_as_reassignment_json(proposed, {})}")
    return proposed, current


def verify_broker_ids(admin: ReassignAdmin, brokers: Iterable[int]) -> None:
    known = set(admin.cluster_nodes())
    for broker in sorted(set(brokers)):
        if broker not in known:
            raise AdminCommandFailedException(f"Unknown broker id {broker}")


def modify_topic_throttles(admin: ReassignAdmin, leader_throttles: Mapping[str, str],
                           follower_throttles: Mapping[str, str]) -> None:
    for topic in sorted(set(leader_throttles) | set(follower_throttles)):
        ops = []
        if topic in leader_throttles:
            ops.append((TOPIC_LEVEL_LEADER_THROTTLE, OP_SET, leader_throttles[topic]))
        if topic in follower_throttles:
            ops.append((TOPIC_LEVEL_FOLLOWER_THROTTLE, OP_SET, follower_throttles[topic]))
        if ops:
            admin.incremental_alter_configs(TOPIC_RESOURCE, topic, ops)


def modify_inter_broker_throttle(admin: ReassignAdmin, reassigning_brokers: Iterable[int], throttle: int,
                                 out: Out) -> None:
    if throttle < 0:
        return
    for broker in sorted(reassigning_brokers):
        admin.incremental_alter_configs(BROKER_RESOURCE, str(broker), [
            (BROKER_LEVEL_LEADER_THROTTLE, OP_SET, str(throttle)),
            (BROKER_LEVEL_FOLLOWER_THROTTLE, OP_SET, str(throttle))])
    out(f"The inter-broker throttle limit was set to {throttle} B/s")


def modify_log_dir_throttle(admin: ReassignAdmin, moving_brokers: Iterable[int], throttle: int, out: Out) -> None:
    if throttle < 0:
        return
    for broker in sorted(moving_brokers):
        admin.incremental_alter_configs(BROKER_RESOURCE, str(broker),
                                        [(BROKER_LEVEL_LOG_DIR_THROTTLE, OP_SET, str(throttle))])
    out(f"The replica-alter-dir throttle limit was set to {throttle} B/s")


def execute_moves(admin: ReassignAdmin, proposed_replicas: Mapping[TopicPartitionReplica, str], timeout_ms: int,
                  out: Out, clock: Callable[[], float] = time.monotonic,
                  sleep: Callable[[float], None] = time.sleep) -> None:
    """Start each replica's move to its log dir, retrying those whose broker does not hold the
    replica yet (it arrives with the reassignment) until ``timeout_ms``."""
    deadline = clock() + timeout_ms / 1000.0
    pending = dict(proposed_replicas)
    while True:
        completed = admin.alter_replica_log_dirs(pending)
        if completed:
            out(f"Successfully started log directory move{_plural(completed)} for: "
                f"{_join(sorted(completed, key=compare_key_replica))}")
        for replica in completed:
            pending.pop(replica, None)
        if not pending:
            return
        if clock() >= deadline:
            raise TerseReassignmentFailureException(
                f"Timed out before log directory move{_plural(pending)} could be started for: "
                f"{_join(sorted(pending, key=compare_key_replica))}")
        sleep(0.1)


def execute_assignment(admin: ReassignAdmin, additional: bool, reassignment_json: str,
                       inter_broker_throttle: int = -1, log_dir_throttle: int = -1, timeout_ms: int = 10000,
                       out: Out = click.echo) -> None:
    proposed_parts, proposed_replicas = parse_execute_assignment_args(reassignment_json)
    current_reassignments = admin.list_partition_reassignments()
    # an existing reassignment needs --additional: a surprise avoided
    if not additional and current_reassignments:
        raise TerseReassignmentFailureException(CANNOT_EXECUTE_BECAUSE_OF_EXISTING_MESSAGE)
    verify_broker_ids(admin, {r for replicas in proposed_parts.values() for r in replicas})
    current_parts = admin.replica_assignment_for_partitions(proposed_parts)
    out(current_partition_replica_assignment_to_string(proposed_parts, current_parts))
    if inter_broker_throttle >= 0 or log_dir_throttle >= 0:
        out(YOU_MUST_RUN_VERIFY_PERIODICALLY_MESSAGE)
        if inter_broker_throttle >= 0:
            move_map = calculate_proposed_move_map(current_reassignments, proposed_parts, current_parts)
            modify_topic_throttles(admin, calculate_leader_throttles(move_map), calculate_follower_throttles(move_map))
            modify_inter_broker_throttle(admin, calculate_reassigning_brokers(move_map), inter_broker_throttle, out)
        if log_dir_throttle >= 0:
            modify_log_dir_throttle(admin, calculate_moving_brokers(proposed_replicas), log_dir_throttle, out)
    errors = admin.alter_partition_reassignments(proposed_parts)
    if errors:
        raise TerseReassignmentFailureException("Error reassigning partition(s):\n" + "\n".join(
            f"{tp}: {errors[tp]}" for tp in sorted(errors)))
    out(f"Successfully started partition reassignment{_plural(proposed_parts)} for "
        f"{_join(sorted(proposed_parts))}")
    if proposed_replicas:
        execute_moves(admin, proposed_replicas, timeout_ms, out)


def find_partition_reassignment_states(admin: ReassignAdmin, targets: Sequence[tuple[TopicPartition, Sequence[int]]]
                                       ) -> tuple[dict[TopicPartition, PartitionReassignmentState], bool]:
    """Each target's state (running, or done with the replicas it has now), and whether any
    reassignment at all is running in the cluster."""
    current = admin.list_partition_reassignments()
    states: dict[TopicPartition, PartitionReassignmentState] = {}
    not_found = [(tp, target) for tp, target in targets if tp not in current]
    descriptions = admin.describe_topics_or_none(tp.topic for tp, _ in not_found)
    for tp, target in targets:
        if tp in current:
            states[tp] = PartitionReassignmentState(current[tp].replicas, tuple(target), False)
        else:
            partitions = descriptions.get(tp.topic)
            replicas = tuple((partitions or {}).get(tp.partition, ()))
            states[tp] = PartitionReassignmentState(replicas, tuple(target), True)
    return states, bool(current)


def find_log_dir_move_states(admin: ReassignAdmin, target_moves: Mapping[TopicPartitionReplica, str]
                             ) -> dict[TopicPartitionReplica, LogDirMoveState]:
    if not target_moves:
        return {}
    infos = admin.describe_replica_log_dirs(target_moves)
    states: dict[TopicPartitionReplica, LogDirMoveState] = {}
    for replica, target in target_moves.items():
        info = infos.get(replica)
        if info is None:
            states[replica] = MissingReplicaMoveState(target)
        else:
            current_dir, future_dir = info
            if current_dir is None:
                states[replica] = MissingLogDirMoveState(target)
            elif future_dir is None:
                states[replica] = (CompletedMoveState(target) if current_dir == target
                                   else CancelledMoveState(current_dir, target))
            else:
                states[replica] = ActiveMoveState(current_dir, target, future_dir)
    return states


def clear_all_throttles(admin: ReassignAdmin, target_parts: Sequence[tuple[TopicPartition, Sequence[int]]],
                        out: Out) -> None:
    """Remove the broker throttles of every live broker (and of the target replicas' brokers)
    and the topic throttles of the target topics: which brokers an earlier reassignment
    involved is not known any more."""
    live = set(admin.cluster_nodes())
    brokers = live | {r for _, replicas in target_parts for r in replicas}
    out(f"Clearing broker-level throttles on broker{_plural(brokers)} {_join(sorted(brokers))}")
    for broker in sorted(brokers):
        if broker in live:  # a broker that is not there cannot answer for its config
            admin.incremental_alter_configs(BROKER_RESOURCE, str(broker),
                                            [(t, OP_DELETE, None) for t in BROKER_LEVEL_THROTTLES])
    topics = {tp.topic for tp, _ in target_parts}
    out(f"Clearing topic-level throttles on topic{_plural(topics)} {_join(sorted(topics))}")
    for topic in sorted(topics):
        admin.incremental_alter_configs(TOPIC_RESOURCE, topic, [(t, OP_DELETE, None) for t in TOPIC_LEVEL_THROTTLES])


@dataclass(frozen=True)
class VerifyAssignmentResult:
    part_states: Mapping[TopicPartition, PartitionReassignmentState]
    parts_ongoing: bool = False
    move_states: Mapping[TopicPartitionReplica, LogDirMoveState] | None = None
    moves_ongoing: bool = False


def verify_assignment(admin: ReassignAdmin, reassignment_json: str, preserve_throttles: bool,
                      out: Out = click.echo) -> VerifyAssignmentResult:
    target_parts, target_log_dirs = parse_partition_reassignment_data(reassignment_json)
    part_states, parts_ongoing = find_partition_reassignment_states(admin, target_parts)
    out(partition_reassignment_states_to_string(part_states))
    move_states = find_log_dir_move_states(admin, target_log_dirs)
    out(replica_move_states_to_string(move_states))
    moves_ongoing = not all(s.done for s in move_states.values())
    if not parts_ongoing and not moves_ongoing and not preserve_throttles:
        clear_all_throttles(admin, target_parts, out)
    return VerifyAssignmentResult(part_states, parts_ongoing, move_states, moves_ongoing)


def cancel_assignment(admin: ReassignAdmin, reassignment_json: str, preserve_throttles: bool,
                      timeout_ms: int = 10000, out: Out = click.echo
                      ) -> tuple[set[TopicPartition], set[TopicPartitionReplica]]:
    target_parts, target_replicas = parse_partition_reassignment_data(reassignment_json)
    target_set = {tp for tp, _ in target_parts}
    reassigning = {tp for tp, r in admin.list_partition_reassignments(target_set).items()
                   if r.adding_replicas or r.removing_replicas}
    if reassigning:
        errors = admin.alter_partition_reassignments({tp: None for tp in reassigning})
        if errors:
            raise TerseReassignmentFailureException(
                f"Error cancelling partition reassignment{_plural(errors)} for:\n" + "\n".join(
                    f"{tp}: {errors[tp]}" for tp in sorted(errors)))
        out(f"Successfully cancelled partition reassignment{_plural(reassigning)} for: {_join(sorted(reassigning))}")
    else:
        out("None of the specified partition reassignments are active.")
    moving = {r: s.current_log_dir for r, s in find_log_dir_move_states(admin, target_replicas).items()
              if isinstance(s, ActiveMoveState)}
    if not moving:
        out("None of the specified partition moves are active.")
    else:
        # moving them back to where they are stops the moves
        execute_moves(admin, moving, timeout_ms, out)
    if not preserve_throttles:
        clear_all_throttles(admin, target_parts, out)
    return reassigning, set(moving)


def list_reassignments(admin: ReassignAdmin, out: Out = click.echo) -> None:
    out(cur_reassignments_to_string(admin.list_partition_reassignments()))


# -- the command line ------------------------------------------------------------------------

ACTIONS = ("generate", "execute", "verify", "cancel", "list")
REQUIRED_ARGS = {
    "verify": ("reassignment_json_file",),
    "generate": ("topics_to_move_json_file", "broker_list"),
    "execute": ("reassignment_json_file",),
    "cancel": ("reassignment_json_file",),
    "list": (),
}
PERMITTED_ARGS = {
    "verify": ("bootstrap_server", "command_config", "preserve_throttles", "zookeeper"),
    "generate": ("bootstrap_server", "broker_list", "command_config", "disable_rack_aware", "zookeeper"),
    "execute": ("additional", "bootstrap_server", "command_config", "throttle", "replica_alter_log_dirs_throttle",
                "timeout", "zookeeper"),
    "cancel": ("bootstrap_server", "command_config", "preserve_throttles", "timeout"),
    "list": ("bootstrap_server", "command_config"),
}
_DEFAULTS = {"throttle": -1, "replica_alter_log_dirs_throttle": -1, "timeout": 10000}
# what the --zookeeper mode cannot do
BOOTSTRAP_SERVER_ONLY_ARGS = ("additional", "cancel", "command_config", "replica_alter_log_dirs_throttle", "list",
                              "timeout")


def _option(name: str) -> str:
    return name.replace("_", "-")


def check_args(action_flags: Mapping[str, bool], values: Mapping[str, Any]) -> str:
    """Kafka's validateAndParseArgs: one action, its required arguments, nothing it cannot use."""
    chosen = [a for a in ACTIONS if action_flags.get(a)]
    if len(chosen) != 1:
        raise click.UsageError("Command must include exactly one action: "
                               + ", ".join(f"--{a}" for a in ACTIONS))
    action = chosen[0]
    if values.get("zookeeper") is None and values.get("bootstrap_server") is None:
        raise click.UsageError("Please specify --bootstrap-server")
    for name in REQUIRED_ARGS[action]:
        if values.get(name) is None:
            raise click.UsageError(f"Missing required argument \"[{_option(name)}]\"")

    def given(name: str) -> bool:
        value = action_flags.get(name) if name in ACTIONS else values.get(name)
        return value not in (None, False) and not (name in _DEFAULTS and value == _DEFAULTS[name])

    for name in values:
        if given(name) and name not in REQUIRED_ARGS[action] and name not in PERMITTED_ARGS[action]:
            raise click.UsageError(f"Option \"[{_option(name)}]\" can't be used with action \"[{action}]\"")
    if values.get("bootstrap_server") is None:
        for name in BOOTSTRAP_SERVER_ONLY_ARGS:
            if given(name):
                raise CommandError(f"You must specify --bootstrap-server when using \"[{_option(name)}]\"")
    return action


def _read_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise AdminCommandFailedException(f"Unable to read {path}: {e.strerror or e}") from None


def run(action: str, values: Mapping[str, Any], admin_factory: Callable[[], ReassignAdmin],
        out: Out = click.echo) -> None:
    # files and arguments are read before the cluster is: a typo fails at once
    reassignment_json = _read_file(values["reassignment_json_file"]) if values.get("reassignment_json_file") else ""
    topics_json = _read_file(values["topics_to_move_json_file"]) if action == "generate" else ""
    if action == "execute":
        parse_execute_assignment_args(reassignment_json)
    elif action in ("verify", "cancel"):
        parse_partition_reassignment_data(reassignment_json)
    elif action == "generate":
        parse_generate_assignment_args(topics_json, values["broker_list"])
    admin = admin_factory()
    try:
        if action == "verify":
            verify_assignment(admin, reassignment_json, bool(values.get("preserve_throttles")), out)
        elif action == "generate":
            generate_assignment(admin, topics_json, values["broker_list"], not values.get("disable_rack_aware"), out)
        elif action == "execute":
            execute_assignment(admin, bool(values.get("additional")), reassignment_json,
                               int(values.get("throttle", -1)), int(values.get("replica_alter_log_dirs_throttle", -1)),
                               int(values.get("timeout", 10000)), out)
        elif action == "cancel":
            cancel_assignment(admin, reassignment_json, bool(values.get("preserve_throttles")),
                              int(values.get("timeout", 10000)), out)
        else:
            list_reassignments(admin, out)
    finally:
        admin.close()


# -- the --zookeeper mode (deprecated in 2.8) -------------------------------------------------

ZK_RESULTS_MAY_BE_INCOMPLETE_MESSAGE = ("Warning: because you are using the deprecated --zookeeper option, the "
                                        "results may be incomplete.  Use --bootstrap-server instead for more "
                                        "accurate results.")
ZK_NEEDS_BOOTSTRAP_FOR_LOG_DIRS_MESSAGE = ("bootstrap-server needs to be provided when replica reassignments are "
                                           "present.")


class ZkReassign:
    """The ZooKeeper reads and writes of the --zookeeper mode."""

    def __init__(self, zk_client: Any) -> None:
        from kafka_py.core.zk.admin_zk_client import AdminZkClient

        self.zk_client = zk_client
        self.admin_zk_client = AdminZkClient(zk_client)

    @classmethod
    def create(cls, zookeeper: str) -> "ZkReassign":
        return cls(tool_zk_client(zookeeper, "reassign-partitions", AdminCommandFailedException))

    def close(self) -> None:
        self.zk_client.close()

    def replica_assignment_for_topics(self, topics: Iterable[str]) -> dict[TopicPartition, list[int]]:
        return {tp: list(replicas)
                for tp, replicas in self.zk_client.get_replica_assignment_for_topics(set(topics)).items()}

    def set_topic_configs(self, topic: str, changes: Mapping[str, str | None]) -> None:
        """Set (a value) or remove (None) topic configs; the znode is written only on a change."""
        from kafka_py.core.zk.zk_data import ConfigType

        configs = dict(self.admin_zk_client.fetch_entity_config(ConfigType.TOPIC, topic))
        updated = {k: v for k, v in {**configs, **changes}.items() if v is not None}
        if updated != configs:
            self.admin_zk_client.change_topic_config(topic, updated)

    def set_broker_configs(self, broker: int, changes: Mapping[str, str | None]) -> None:
        from kafka_py.core.zk.zk_data import ConfigType

        configs = dict(self.admin_zk_client.fetch_entity_config(ConfigType.BROKER, str(broker)))
        updated = {k: v for k, v in {**configs, **changes}.items() if v is not None}
        if updated != configs:
            self.admin_zk_client.change_broker_config([broker], updated)


def zk_generate_assignment(zk: ZkReassign, topics_json: str, broker_list: str, enable_rack_awareness: bool,
                           out: Out = click.echo) -> None:
    from kafka_py.core.zk.admin_zk_client import RackAwareMode

    brokers, topics = parse_generate_assignment_args(topics_json, broker_list)
    current = zk.replica_assignment_for_topics(topics)
    try:
        metadatas = zk.admin_zk_client.get_broker_metadatas(
            RackAwareMode.ENFORCED if enable_rack_awareness else RackAwareMode.DISABLED, brokers)
    except Exception as e:  # noqa: BLE001 - AdminOperationException's message, as one line
        raise AdminCommandFailedException(str(e)) from None
    proposed = calculate_assignment(current, metadatas)
    out(f"Current partition replica assignment\n{format_as_reassignment_json(current, {})}\n")
    out(f"Proposed partition reassignment configuration\n{format_as_reassignment_json(proposed, {})}")


def zk_execute_assignment(zk: ZkReassign, reassignment_json: str, inter_broker_throttle: int = -1,
                          out: Out = click.echo) -> None:
    proposed_parts, proposed_replicas = parse_execute_assignment_args(reassignment_json)
    if proposed_replicas:
        raise AdminCommandFailedException(ZK_NEEDS_BOOTSTRAP_FOR_LOG_DIRS_MESSAGE)
    topics = {tp.topic for tp in proposed_parts}
    existing = zk.replica_assignment_for_topics(topics)
    missing = [tp for tp in proposed_parts if tp not in existing]
    if missing:
        raise AdminCommandFailedException(f"The proposed assignment contains non-existent partitions: "
                                          f"{_scala_seq(missing)}")
    live = set(zk.zk_client.get_sorted_broker_list())
    unknown = sorted({r for replicas in proposed_parts.values() for r in replicas} - live)
    if unknown:
        raise AdminCommandFailedException("The proposed assignment contains non-existent brokerIDs: "
                                          + ",".join(map(str, unknown)))
    # only reassignments started through the znode are seen: the limit of the ZooKeeper API
    if zk.zk_client.reassign_partitions_in_progress():
        raise TerseReassignmentFailureException(CANNOT_EXECUTE_BECAUSE_OF_EXISTING_MESSAGE)
    out(current_partition_replica_assignment_to_string(proposed_parts, existing))
    if inter_broker_throttle >= 0:
        out(YOU_MUST_RUN_VERIFY_PERIODICALLY_MESSAGE)
        move_map = calculate_proposed_move_map({}, proposed_parts, existing)
        leader, follower = calculate_leader_throttles(move_map), calculate_follower_throttles(move_map)
        for topic in sorted(set(leader) | set(follower)):
            changes = {}
            if topic in leader:
                changes[TOPIC_LEVEL_LEADER_THROTTLE] = leader[topic]
            if topic in follower:
                changes[TOPIC_LEVEL_FOLLOWER_THROTTLE] = follower[topic]
            zk.set_topic_configs(topic, changes)
        for broker in sorted(calculate_reassigning_brokers(move_map)):
            zk.set_broker_configs(broker, {BROKER_LEVEL_LEADER_THROTTLE: str(inter_broker_throttle),
                                           BROKER_LEVEL_FOLLOWER_THROTTLE: str(inter_broker_throttle)})
        out(f"The inter-broker throttle limit was set to {inter_broker_throttle} B/s")
    zk.zk_client.create_partition_reassignment(proposed_parts)
    out(f"Successfully started partition reassignment{_plural(proposed_parts)} for "
        f"{_join(sorted(proposed_parts))}")


def zk_verify_assignment(zk: ZkReassign, reassignment_json: str, preserve_throttles: bool,
                         out: Out = click.echo) -> VerifyAssignmentResult:
    target_parts, target_log_dirs = parse_partition_reassignment_data(reassignment_json)
    if target_log_dirs:
        raise AdminCommandFailedException(ZK_NEEDS_BOOTSTRAP_FOR_LOG_DIRS_MESSAGE)
    out(ZK_RESULTS_MAY_BE_INCOMPLETE_MESSAGE)
    being_reassigned = zk.zk_client.get_partition_reassignment()
    states: dict[TopicPartition, PartitionReassignmentState] = {}
    current = zk.replica_assignment_for_topics({tp.topic for tp, _ in target_parts})
    for tp, target in target_parts:
        states[tp] = PartitionReassignmentState(tuple(current.get(tp, ())), tuple(target), tp not in being_reassigned)
    out(partition_reassignment_states_to_string(states))
    parts_ongoing = bool(being_reassigned)
    if not parts_ongoing and not preserve_throttles:
        live = set(zk.zk_client.get_sorted_broker_list())
        brokers = live | {r for _, replicas in target_parts for r in replicas}
        out(f"Clearing broker-level throttles on broker{_plural(brokers)} {_join(sorted(brokers))}")
        for broker in sorted(brokers):
            zk.set_broker_configs(broker, {t: None for t in BROKER_LEVEL_THROTTLES})
        topics = {tp.topic for tp, _ in target_parts}
        out(f"Clearing topic-level throttles on topic{_plural(topics)} {_join(sorted(topics))}")
        for topic in sorted(topics):
            zk.set_topic_configs(topic, {t: None for t in TOPIC_LEVEL_THROTTLES})
    return VerifyAssignmentResult(states, parts_ongoing)


def run_with_zk(action: str, values: Mapping[str, Any], zk_factory: Callable[[], ZkReassign],
                out: Out = click.echo) -> None:
    reassignment_json = _read_file(values["reassignment_json_file"]) if values.get("reassignment_json_file") else ""
    topics_json = _read_file(values["topics_to_move_json_file"]) if action == "generate" else ""
    if action == "execute":
        parse_execute_assignment_args(reassignment_json)
    elif action == "verify":
        parse_partition_reassignment_data(reassignment_json)
    else:
        parse_generate_assignment_args(topics_json, values["broker_list"])
    zk = zk_factory()
    try:
        if action == "verify":
            zk_verify_assignment(zk, reassignment_json, bool(values.get("preserve_throttles")), out)
        elif action == "generate":
            zk_generate_assignment(zk, topics_json, values["broker_list"], not values.get("disable_rack_aware"), out)
        else:
            zk_execute_assignment(zk, reassignment_json, int(values.get("throttle", -1)), out)
    finally:
        zk.close()


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120}, help=HELP_TEXT)
@click.option("--verify", is_flag=True,
              help="Verify if the reassignment completed as specified by the --reassignment-json-file option. If "
                   "there is a throttle engaged for the replicas specified, and the rebalance has completed, the "
                   "throttle will be removed")
@click.option("--generate", is_flag=True,
              help="Generate a candidate partition reassignment configuration. Note that this only generates a "
                   "candidate assignment, it does not execute it.")
@click.option("--execute", is_flag=True,
              help="Kick off the reassignment as specified by the --reassignment-json-file option.")
@click.option("--cancel", is_flag=True, help="Cancel an active reassignment.")
@click.option("--list", "list_", is_flag=True, help="List all active partition reassignments.")
@click.option("--bootstrap-server", metavar="<Server(s) to use for bootstrapping>",
              help="REQUIRED: the server(s) to use for bootstrapping.")
@click.option("--command-config", metavar="<Admin client property file>",
              help="Property file containing configs to be passed to Admin Client.")
@click.option("--zookeeper", metavar="<urls>",
              help="DEPRECATED: The connection string for the zookeeper connection in the form host:port. Multiple "
                   "URLS can be given to allow fail-over. Please use --bootstrap-server instead.")
@click.option("--reassignment-json-file", metavar="<manual assignment json file path>",
              help="The JSON file with the partition reassignment configuration. The format to use is - "
                   '{"partitions": [{"topic": "foo", "partition": 1, "replicas": [1,2,3], '
                   '"log_dirs": ["dir1","dir2","dir3"] }], "version":1}. Note that "log_dirs" is optional. When it '
                   "is specified, its length must equal the length of the replicas list. The value in this list can "
                   'be either "any" or the absolution path of the log directory on the broker. If absolute log '
                   "directory path is specified, the replica will be moved to the specified log directory on the "
                   "broker.")
@click.option("--topics-to-move-json-file", metavar="<topics to reassign json file path>",
              help="Generate a reassignment configuration to move the partitions of the specified topics to the "
                   "list of brokers specified by the --broker-list option. The format to use is - "
                   '{"topics": [{"topic": "foo"},{"topic": "foo1"}], "version":1}')
@click.option("--broker-list", metavar="<brokerlist>",
              help='The list of brokers to which the partitions need to be reassigned in the form "0,1,2". This is '
                   "required if --topics-to-move-json-file is used to generate reassignment configuration")
@click.option("--disable-rack-aware", is_flag=True, help="Disable rack aware replica assignment")
@click.option("--throttle", type=int, default=-1, metavar="<throttle>",
              help="The movement of partitions between brokers will be throttled to this value (bytes/sec). This "
                   "option can be included with --execute when a reassignment is started, and it can be altered by "
                   "resubmitting the current reassignment along with the --additional flag. The throttle rate "
                   "should be at least 1 KB/s.")
@click.option("--replica-alter-log-dirs-throttle", type=int, default=-1, metavar="<replicaAlterLogDirsThrottle>",
              help="The movement of replicas between log directories on the same broker will be throttled to this "
                   "value (bytes/sec). This option can be included with --execute when a reassignment is started, "
                   "and it can be altered by resubmitting the current reassignment along with the --additional "
                   "flag. The throttle rate should be at least 1 KB/s.")
@click.option("--timeout", type=int, default=10000, metavar="<timeout>",
              help="The maximum time in ms to wait for log directory replica assignment to begin.")
@click.option("--additional", is_flag=True,
              help="Execute this reassignment in addition to any other ongoing ones. This option can also be used "
                   "to change the throttle of an ongoing reassignment.")
@click.option("--preserve-throttles", is_flag=True, help="Do not modify broker or topic throttles.")
@handle_errors()
def main(verify: bool, generate: bool, execute: bool, cancel: bool, list_: bool, **values: Any) -> None:
    try:
        action = check_args({"generate": generate, "execute": execute, "verify": verify, "cancel": cancel,
                             "list": list_}, values)
        if values.get("bootstrap_server") is None:
            click.echo("Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka.")
            zookeeper = values["zookeeper"]
            run_with_zk(action, values, lambda: ZkReassign.create(zookeeper))
            return
        if values.get("zookeeper") is not None:
            click.echo("Warning: ignoring deprecated --zookeeper option because --bootstrap-server was specified.  "
                       "The --zookeeper option will be removed in a future version of Kafka.")
        validate_bootstrap_servers(values["bootstrap_server"])
        command_config = load_props(values["command_config"]) if values.get("command_config") else {}
        run(action, values, lambda: ReassignAdmin.create(values["bootstrap_server"], command_config))
    except AdminCommandFailedException as e:
        # ReassignPartitionsCommand.main prints "Error: " + getMessage
        raise CommandError(f"Error: {e}") from e


if __name__ == "__main__":
    run_tool(main, "kafka-reassign-partitions.sh")
