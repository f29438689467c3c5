"""Port of core/src/main/scala/kafka/admin/TopicCommand.scala (``bin/kafka-topics.sh``).

Create, list, describe, alter (add partitions) and delete topics through the admin API
of a running cluster (kafka-python's KafkaAdminClient), with Kafka 2.8's options,
checks and output:

    Created topic t.
    Topic: t\tTopicId: ...\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: retention.ms=1000
    \tTopic: t\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0

``--zookeeper HOST:PORT[/chroot]`` (deprecated in Kafka 2.8, still accepted there) works on
ZooKeeper directly, as 2.8's ZookeeperTopicService: topics are created with an assignment
computed here (AdminZkClient), listed with " - marked for deletion", described from their
znodes (the leader and ISR from the partition state znodes), given partitions, have their
configs changed with ``--alter --config``/``--delete-config`` (with Kafka's deprecation
warning) and are marked for deletion in /admin/delete_topics. ``--create`` then needs
``--partitions`` and ``--replication-factor`` unless ``--replica-assignment`` is given.

Differences from Kafka's tool, on purpose:

- failures go to stderr (Kafka prints "Error while executing topic command : ..." on
  stdout) and exit with status 1; an unreachable cluster fails after the admin client's
  ``bootstrap.timeout.ms`` (15 s here unless --command-config sets it).

A partition being reassigned is described with its "Adding Replicas" and "Removing
Replicas" (ListPartitionReassignments), and its replication factor is that of its original
replicas, as in Kafka.
"""
from __future__ import annotations

import base64
import logging
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import click

from kafka_py.core.utils.command_line_utils import (
    DEFAULT_BOOTSTRAP_TIMEOUT_MS,
    TOPIC_RESOURCE,
    CommandError,
    ConfigEntry,
    client_configs,
    cluster_brokers,
    connect,
    describe_configs,
    error_message,
    handle_errors,
    load_props,
    run_tool,
    tool_zk_client,
    validate_bootstrap_servers,
)
from kafka_py.core.utils.java_limits import SHORT_MAX

logger = logging.getLogger(__name__)


def _topic() -> Any:
    # Topic's name rules live with the ZooKeeper admin client, whose kazoo import is slow:
    # loaded on first use only, so that --help and usage errors stay quick.
    from kafka_py.core.zk.admin_zk_client import Topic

    return Topic

MIN_IN_SYNC_REPLICAS_CONFIG = "min.insync.replicas"
MESSAGE_FORMAT_VERSION_CONFIG = "message.format.version"
# TOPIC_ALREADY_EXISTS
_TOPIC_EXISTS = 36

Out = Callable[[str], None]


# -- option parsing --------------------------------------------------------------------------

def parse_replica_assignment(text: str) -> dict[int, list[int]]:
    """``0:1,1:2`` → {0: [0, 1], 1: [1, 2]}: partition i gets the i-th colon-separated list."""
    assignment: dict[int, list[int]] = {}
    for i, part in enumerate(text.split(",")):
        try:
            brokers = [int(s.strip()) for s in part.split(":")]
        except ValueError:
            raise CommandError(f"Invalid replica assignment '{text}': broker ids must be integers") from None
        duplicates = sorted({b for b in brokers if brokers.count(b) > 1})
        if duplicates:
            raise CommandError("Partition replica lists may not contain duplicate entries: "
                               + ",".join(map(str, duplicates)))
        assignment[i] = brokers
        if len(brokers) != len(assignment[0]):
            raise CommandError(f"Partition {i} has different replication factor: "
                               f"[{', '.join(map(str, brokers))}]")
    return assignment


def warn_if_colliding(name: str, out: Out) -> None:
    """TopicService.createTopic's warning for a name whose metric names could collide with another's."""
    if _topic().has_collision_chars(name):
        out("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore "
            "('_') could collide. To avoid issues it is best to use either, but not both.")


def parse_topic_configs_to_be_added(configs: Sequence[str], out: Out | None = None) -> dict[str, str]:
    """``--config k=v`` values, validated as topic configs (LogConfig.validate) before any
    request is sent, as Kafka's tool does."""
    props: dict[str, str] = {}
    for config in configs:
        pieces = re.split(r"\s*=\s*", config)
        if len(pieces) != 2:
            raise CommandError('Invalid topic config: all configs to be added must be in the format "key=val".')
        props[pieces[0].strip()] = pieces[1].strip()
    from kafka_py.clients.common.errors import InvalidConfigException
    from kafka_py.log.log_config import LogConfig
    from kafka_py.clients.common.config.config_def import ConfigException

    try:
        LogConfig.validate(props)
    except (InvalidConfigException, ConfigException) as e:
        raise CommandError(str(e)) from e
    if MESSAGE_FORMAT_VERSION_CONFIG in props and out is not None:
        out(f"WARNING: The configuration {MESSAGE_FORMAT_VERSION_CONFIG}={props[MESSAGE_FORMAT_VERSION_CONFIG]} "
            "is specified. This configuration will be ignored if the version is newer than the "
            "inter.broker.protocol.version specified in the broker.")
    return props


class IncludeList:
    """kafka.utils.IncludeList: a regular expression (commas mean "or") a name must match whole."""

    def __init__(self, raw: str) -> None:
        regex = raw.strip().replace(",", "|").replace(" ", "")
        regex = re.sub(r"^[\"']+", "", regex)
        regex = re.sub(r"[\"']+$", "", regex)
        try:
            self.pattern = re.compile(regex)
        except re.error as e:
            raise CommandError(f"{raw} is an invalid regex: {e}") from e

    def is_topic_allowed(self, topic: str, exclude_internal_topics: bool) -> bool:
        allowed = self.pattern.fullmatch(topic) is not None
        return allowed and not (_topic().is_internal(topic) and exclude_internal_topics)


def do_get_topics(all_topics: Sequence[str], include: str | None, exclude_internal_topics: bool) -> list[str]:
    topics = sorted(all_topics)
    if include is not None:
        include_list = IncludeList(include)
        return [t for t in topics if include_list.is_topic_allowed(t, exclude_internal_topics)]
    return [t for t in topics if not (exclude_internal_topics and _topic().is_internal(t))]


def ensure_topic_exists(found: Sequence[str], requested: str | None, require_topic_exists: bool) -> None:
    if requested is not None and require_topic_exists and not found:
        raise CommandError(f"Topic '{requested}' does not exist as expected")


@dataclass(frozen=True)
class TopicCommandOptions:
    """The parsed command line; ``check_args`` applies Kafka's combination rules."""

    bootstrap_server: str | None = None
    command_config: str | None = None
    zookeeper: str | None = None
    create: bool = False
    list: bool = False
    describe: bool = False
    alter: bool = False
    delete: bool = False
    topic: str | None = None
    config: tuple[str, ...] = ()
    delete_config: tuple[str, ...] = ()
    partitions: int | None = None
    replication_factor: int | None = None
    replica_assignment: str | None = None
    under_replicated_partitions: bool = False
    unavailable_partitions: bool = False
    under_min_isr_partitions: bool = False
    at_min_isr_partitions: bool = False
    topics_with_overrides: bool = False
    if_exists: bool = False
    if_not_exists: bool = False
    disable_rack_aware: bool = False
    force: bool = False
    exclude_internal: bool = False

    @property
    def actions(self) -> list[str]:
        return [name for name in ("create", "list", "alter", "describe", "delete") if getattr(self, name)]

    @property
    def replica_assignment_map(self) -> dict[int, list[int]] | None:
        if self.replica_assignment:
            return parse_replica_assignment(self.replica_assignment)
        return None

    def check_args(self) -> None:
        def invalid(option: str, given: bool, allowed_actions: set[str]) -> None:
            if given and not set(self.actions) <= allowed_actions:
                used = [a for a in self.actions if a not in allowed_actions]
                raise click.UsageError(f"Option \"--{option}\" can't be used with option \"--{used[0]}\"")

        if len(self.actions) != 1:
            raise click.UsageError(
                "Command must include exactly one action: --list, --describe, --create, --alter or --delete")
        if (self.bootstrap_server is None) == (self.zookeeper is None):
            raise click.UsageError("Only one of --bootstrap-server or --zookeeper must be specified")
        if self.describe and self.if_exists and self.topic is None:
            raise click.UsageError("Missing required argument \"[topic]\"")
        if not self.list and not self.describe and self.topic is None:
            raise click.UsageError("Missing required argument \"[topic]\"")
        if self.create and self.replica_assignment is None and self.zookeeper is not None:
            for name, value in (("partitions", self.partitions), ("replication-factor", self.replication_factor)):
                if value is None:
                    raise click.UsageError(f"Missing required argument \"[{name}]\"")
        if self.alter and self.bootstrap_server is not None:
            if self.config:
                raise click.UsageError(
                    "Option \"--config\" can't be used with option \"--alter\" (the kafka-configs CLI "
                    "supports altering topic configs with a --bootstrap-server option)")
            if self.partitions is None:
                raise click.UsageError("Missing required argument \"[partitions]\"")
        if self.delete_config and self.bootstrap_server is not None:
            raise click.UsageError("Option \"--delete-config\" can't be used with option \"--bootstrap-server\"")
        invalid("delete-config", bool(self.delete_config), {"alter"})
        invalid("config", bool(self.config), {"alter", "create"})
        invalid("partitions", self.partitions is not None, {"alter", "create"})
        invalid("replication-factor", self.replication_factor is not None, {"create"})
        invalid("replica-assignment", self.replica_assignment is not None, {"create", "alter"})
        if self.create and self.replica_assignment is not None and (
                self.partitions is not None or self.replication_factor is not None):
            raise click.UsageError("Option \"--replica-assignment\" can't be used with options "
                                   "\"--partitions\" and \"--replication-factor\"")
        reports = {
            "under-replicated-partitions": self.under_replicated_partitions,
            "unavailable-partitions": self.unavailable_partitions,
            "under-min-isr-partitions": self.under_min_isr_partitions,
            "at-min-isr-partitions": self.at_min_isr_partitions,
        }
        for name, given in reports.items():
            invalid(name, given, {"describe"})
            if given:
                others = [o for o, g in reports.items() if g and o != name]
                if others or self.topics_with_overrides:
                    other = others[0] if others else "topics-with-overrides"
                    raise click.UsageError(f"Option \"--{name}\" can't be used with option \"--{other}\"")
        invalid("topics-with-overrides", self.topics_with_overrides, {"describe"})
        invalid("if-exists", self.if_exists, {"alter", "delete", "describe"})
        invalid("if-not-exists", self.if_not_exists, {"create"})
        invalid("exclude-internal", self.exclude_internal, {"list", "describe"})


# -- descriptions ----------------------------------------------------------------------------

def format_topic_id(topic_id: Any) -> str | None:
    """Kafka prints a Uuid as URL-safe base64 without padding; the zero id is not printed."""
    if topic_id is None:
        return None
    if isinstance(topic_id, uuid.UUID):
        raw = topic_id.bytes
    else:
        text = str(topic_id)
        try:
            raw = uuid.UUID(text).bytes
        except ValueError:
            return text or None  # already Kafka's base64 form
    if raw == bytes(16):
        return None
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@dataclass(frozen=True)
class PartitionInfo:
    """TopicPartitionInfo: a partition's leader (None when it has none), replicas and ISR."""

    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True)
class Reassignment:
    """A partition's ongoing reassignment (Kafka's admin PartitionReassignment)."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]


def get_replication_factor(info: PartitionInfo, reassignment: Reassignment | None) -> int:
    """The original replica count while a reassignment is still changing the partition's
    replicas (one may have completed since it was listed: then the replicas as they are)."""
    if reassignment is not None and set(info.replicas) & (set(reassignment.adding_replicas)
                                                          | set(reassignment.removing_replicas)):
        return len([r for r in reassignment.replicas if r not in reassignment.adding_replicas])
    return len(info.replicas)


@dataclass(frozen=True)
class TopicDescription:
    topic: str
    topic_id: str | None
    num_partitions: int
    replication_factor: int
    config: tuple[ConfigEntry, ...]
    marked_for_deletion: bool = False

    def description(self) -> str:
        configs = ",".join(f"{e.name}={e.value}" for e in self.config if not e.is_default)
        line = f"Topic: {self.topic}"
        if self.topic_id:
            line += f"\tTopicId: {self.topic_id}"
        line += f"\tPartitionCount: {self.num_partitions}"
        line += f"\tReplicationFactor: {self.replication_factor}"
        line += f"\tConfigs: {configs}"
        if self.marked_for_deletion:
            line += "\tMarkedForDeletion: true"
        return line


@dataclass(frozen=True)
class PartitionDescription:
    topic: str
    info: PartitionInfo
    config: tuple[ConfigEntry, ...] | None
    marked_for_deletion: bool = False
    reassignment: Reassignment | None = None

    @property
    def min_isr_count(self) -> int | None:
        for entry in self.config or ():
            if entry.name == MIN_IN_SYNC_REPLICAS_CONFIG and entry.value is not None:
                return int(entry.value)
        return None

    @property
    def has_leader(self) -> bool:
        return self.info.leader is not None

    def is_under_replicated(self) -> bool:
        return get_replication_factor(self.info, self.reassignment) - len(self.info.isr) > 0

    def is_under_min_isr(self) -> bool:
        min_isr = self.min_isr_count
        return not self.has_leader or (min_isr is not None and len(self.info.isr) < min_isr)

    def is_at_min_isr_partitions(self) -> bool:
        return self.min_isr_count == len(self.info.isr)

    def has_unavailable_partitions(self, live_brokers: set[int]) -> bool:
        return not self.has_leader or self.info.leader not in live_brokers

    def description(self) -> str:
        leader = str(self.info.leader) if self.has_leader else "none"
        line = (f"\tTopic: {self.topic}\tPartition: {self.info.partition}\tLeader: {leader}"
                f"\tReplicas: {','.join(map(str, self.info.replicas))}"
                f"\tIsr: {','.join(map(str, self.info.isr))}")
        if self.reassignment is not None:
            line += (f"\tAdding Replicas: {','.join(map(str, self.reassignment.adding_replicas))}"
                     f"\tRemoving Replicas: {','.join(map(str, self.reassignment.removing_replicas))}")
        if self.marked_for_deletion:
            line += "\tMarkedForDeletion: true"
        return line


class DescribeOptions:
    """Which lines --describe prints given the report filters."""

    def __init__(self, opts: TopicCommandOptions, live_brokers: set[int]) -> None:
        self.opts = opts
        self.live_brokers = live_brokers
        self.describe_configs = not (opts.unavailable_partitions or opts.under_replicated_partitions
                                     or opts.under_min_isr_partitions or opts.at_min_isr_partitions)
        self.describe_partitions = not opts.topics_with_overrides

    def should_print_topic_partition(self, desc: PartitionDescription) -> bool:
        o = self.opts
        return (self.describe_configs
                or (o.under_replicated_partitions and desc.is_under_replicated())
                or (o.unavailable_partitions and desc.has_unavailable_partitions(self.live_brokers))
                or (o.under_min_isr_partitions and desc.is_under_min_isr())
                or (o.at_min_isr_partitions and desc.is_at_min_isr_partitions()))


def partition_infos(topic_metadata: Mapping[str, Any]) -> list[PartitionInfo]:
    """TopicPartitionInfo from one topic of kafka-python's describe_topics answer."""
    infos = []
    for p in topic_metadata.get("partitions") or ():
        leader = p.get("leader_id", -1)
        infos.append(PartitionInfo(
            partition=p["partition_index"],
            leader=leader if leader is not None and leader >= 0 else None,
            replicas=tuple(p.get("replica_nodes") or ()),
            isr=tuple(p.get("isr_nodes") or ()),
        ))
    return sorted(infos, key=lambda i: i.partition)


def describe_lines(opts: TopicCommandOptions, topic: str, topic_id: Any, partitions: Sequence[PartitionInfo],
                   config: Sequence[ConfigEntry], live_brokers: set[int],
                   reassignments: Mapping[int, Reassignment] | None = None) -> list[str]:
    """The lines --describe prints for one topic (``reassignments``: by partition)."""
    reassignments = reassignments or {}
    describe = DescribeOptions(opts, live_brokers)
    config = tuple(config)
    lines: list[str] = []
    if describe.describe_configs and partitions:
        has_non_default = any(not e.is_default for e in config)
        if not opts.topics_with_overrides or has_non_default:
            lines.append(TopicDescription(
                topic, format_topic_id(topic_id), len(partitions),
                get_replication_factor(partitions[0], reassignments.get(partitions[0].partition)),
                config).description())
    if describe.describe_partitions:
        for info in partitions:
            desc = PartitionDescription(topic, info, config, reassignment=reassignments.get(info.partition))
            if describe.should_print_topic_partition(desc):
                lines.append(desc.description())
    return lines


# -- the service -----------------------------------------------------------------------------

@dataclass
class AdminClientTopicService:
    """TopicCommand.AdminClientTopicService over kafka-python's KafkaAdminClient."""

    admin: Any
    out: Out = field(default=click.echo)

    @classmethod
    def create(cls, bootstrap_server: str, command_config: Mapping[str, str]) -> "AdminClientTopicService":
        from kafka import KafkaAdminClient

        props = {"bootstrap.timeout.ms": str(DEFAULT_BOOTSTRAP_TIMEOUT_MS), **command_config,
                 "bootstrap.servers": bootstrap_server}
        configs = client_configs(props, KafkaAdminClient)
        configs.setdefault("client_id", "kafka-topics")
        return cls(connect(KafkaAdminClient, configs))

    def close(self) -> None:
        self.admin.close()

    def get_topics(self, include: str | None, exclude_internal_topics: bool = False) -> list[str]:
        return do_get_topics(self.admin.list_topics(), include, exclude_internal_topics)

    def create_topic(self, opts: TopicCommandOptions) -> None:
        name = opts.topic
        assert name is not None
        warn_if_colliding(name, self.out)
        configs = parse_topic_configs_to_be_added(opts.config, self.out)
        rf = opts.replication_factor
        if rf is not None and not 1 <= rf <= SHORT_MAX:
            raise CommandError(f"The replication factor must be between 1 and {SHORT_MAX} inclusive")
        if opts.partitions is not None and opts.partitions < 1:
            raise CommandError("The partitions must be greater than 0")
        spec: dict[str, Any] = {"configs": configs}
        assignment = opts.replica_assignment_map
        if assignment is not None:
            spec["assignments"] = assignment
        else:
            spec["num_partitions"] = opts.partitions if opts.partitions is not None else -1
            spec["replication_factor"] = rf if rf is not None else -1
        result = self.admin.create_topics({name: spec}, raise_errors=False)
        for topic in result.get("topics", ()):
            code = topic.get("error_code", 0)
            if code == _TOPIC_EXISTS and opts.if_not_exists:
                return
            if code:
                raise CommandError(error_message(code, topic.get("error_message")))
        self.out(f"Created topic {name}.")

    def list_topics(self, opts: TopicCommandOptions) -> None:
        self.out("\n".join(self.get_topics(opts.topic, opts.exclude_internal)))

    def alter_topic(self, opts: TopicCommandOptions) -> None:
        topics = self.get_topics(opts.topic, opts.exclude_internal)
        ensure_topic_exists(topics, opts.topic, not opts.if_exists)
        if not topics:
            return
        assignment = opts.replica_assignment_map
        requests: dict[str, Any] = {}
        if assignment is not None:
            current = {t["name"]: len(t.get("partitions") or ()) for t in self.admin.describe_topics(topics)}
        for name in topics:
            if assignment is not None:
                start = current.get(name, 0)
                new_assignments = [replicas for p, replicas in sorted(assignment.items()) if p >= start]
                requests[name] = {"count": opts.partitions, "assignments": new_assignments}
            else:
                requests[name] = opts.partitions
        response = self.admin.create_partitions(requests, raise_errors=False)
        for result in response.results:
            if result.error_code:
                raise CommandError(error_message(result.error_code, result.error_message))

    def describe_topic(self, opts: TopicCommandOptions) -> None:
        topics = self.get_topics(opts.topic, opts.exclude_internal)
        ensure_topic_exists(topics, opts.topic, not opts.if_exists)
        if not topics:
            return
        live_brokers = set(cluster_brokers(self.admin))
        metadata = {t["name"]: t for t in self.admin.describe_topics(topics)}
        reassignments = self.list_all_reassignments(metadata.values())
        for name in topics:
            topic = metadata.get(name)
            if topic is None or topic.get("error_code"):
                if topic is not None and not opts.if_exists:
                    raise CommandError(error_message(topic["error_code"]))
                continue
            config = describe_configs(self.admin, TOPIC_RESOURCE, name)
            for line in describe_lines(opts, name, topic.get("topic_id"), partition_infos(topic), config,
                                       live_brokers, reassignments.get(name)):
                self.out(line)

    def list_all_reassignments(self, topics: Any) -> dict[str, dict[int, Reassignment]]:
        """The ongoing reassignments of the described partitions, by topic and partition; none
        when the cluster cannot say (Kafka logs that and describes without them)."""
        from kafka import TopicPartition as KafkaTopicPartition

        wanted = [KafkaTopicPartition(t["name"], p["partition_index"]) for t in topics if not t.get("error_code")
                  for p in t.get("partitions") or ()]
        if not wanted:
            return {}
        try:
            listed = self.admin.list_partition_reassignments(wanted)
        except Exception as e:  # noqa: BLE001 - an older broker, or no Describe on the cluster
            logger.debug("Couldn't query reassignments through the AdminClient API: %s", e)
            return {}
        result: dict[str, dict[int, Reassignment]] = {}
        for tp, r in listed.items():
            result.setdefault(tp.topic, {})[tp.partition] = Reassignment(
                tuple(r["replicas"]), tuple(r["adding_replicas"]), tuple(r["removing_replicas"]))
        return result

    def delete_topic(self, opts: TopicCommandOptions) -> None:
        topics = self.get_topics(opts.topic, opts.exclude_internal)
        ensure_topic_exists(topics, opts.topic, not opts.if_exists)
        if not topics:
            return
        result = self.admin.delete_topics(topics, raise_errors=False)
        for topic in result.get("topics", ()):
            code = topic.get("error_code", 0)
            if code:
                raise CommandError(error_message(code, topic.get("error_message")))


@dataclass
class ZookeeperTopicService:
    """TopicCommand.ZookeeperTopicService: the topics' znodes read and written directly."""

    zk_client: Any
    out: Out = field(default=click.echo)

    @classmethod
    def create(cls, zookeeper: str) -> "ZookeeperTopicService":
        return cls(tool_zk_client(zookeeper, "kafka-topics", CommandError))

    def close(self) -> None:
        self.zk_client.close()

    def _admin_zk_client(self) -> Any:
        from kafka_py.core.zk.admin_zk_client import AdminZkClient

        return AdminZkClient(self.zk_client)

    def get_topics(self, include: str | None, exclude_internal_topics: bool = False) -> list[str]:
        return do_get_topics(sorted(self.zk_client.get_all_topics_in_cluster()), include, exclude_internal_topics)

    def create_topic(self, opts: TopicCommandOptions) -> None:
        from kafka_py.clients.common.errors import TopicExistsException
        from kafka_py.core.zk.admin_zk_client import RackAwareMode

        name = opts.topic
        assert name is not None
        warn_if_colliding(name, self.out)
        configs = parse_topic_configs_to_be_added(opts.config, self.out)
        admin = self._admin_zk_client()
        try:
            assignment = opts.replica_assignment_map
            if assignment is not None:
                admin.create_topic_with_assignment(name, configs, assignment)
            else:
                assert opts.partitions is not None and opts.replication_factor is not None
                admin.create_topic(name, opts.partitions, opts.replication_factor, configs,
                                   RackAwareMode.DISABLED if opts.disable_rack_aware else RackAwareMode.ENFORCED)
            self.out(f"Created topic {name}.")
        except TopicExistsException as e:
            if not opts.if_not_exists:
                raise CommandError(str(e)) from e

    def list_topics(self, opts: TopicCommandOptions) -> None:
        for topic in self.get_topics(opts.topic, opts.exclude_internal):
            if self.zk_client.is_topic_marked_for_deletion(topic):
                self.out(f"{topic} - marked for deletion")
            else:
                self.out(topic)

    def alter_topic(self, opts: TopicCommandOptions) -> None:
        from kafka_py.core.zk.zk_data import ConfigType

        topics = self.get_topics(opts.topic, opts.exclude_internal)
        ensure_topic_exists(topics, opts.topic, not opts.if_exists)
        admin = self._admin_zk_client()
        to_add = parse_topic_configs_to_be_added(opts.config, self.out) if opts.config else {}
        to_delete = parse_topic_configs_to_be_deleted(opts.delete_config)
        for topic in topics:
            configs = dict(admin.fetch_entity_config(ConfigType.TOPIC, topic))
            if opts.config or opts.delete_config:
                self.out("WARNING: Altering topic configuration from this script has been deprecated and may be "
                         "removed in future releases.")
                self.out("         Going forward, please use kafka-configs.sh for this functionality")
                configs.update(to_add)
                for name in to_delete:
                    configs.pop(name, None)
                admin.change_topic_config(topic, configs)
                self.out(f"Updated config for topic {topic}.")
            if opts.partitions is not None:
                if _topic().is_internal(topic):
                    raise CommandError(f"The number of partitions for the internal topic {topic} cannot be changed.")
                self.out("WARNING: If partitions are increased for a topic that has a key, the partition logic or "
                         "ordering of the messages will be affected")
                existing = {tp.partition: a for tp, a in
                            self.zk_client.get_full_replica_assignment_for_topics({topic}).items()}
                if not existing:
                    raise CommandError(f"The topic {topic} does not exist")
                assignment = opts.replica_assignment_map or {}
                new_assignment = {p: r for p, r in sorted(assignment.items())[len(existing):]}
                admin.add_partitions(topic, existing, admin.get_broker_metadatas(), opts.partitions,
                                     new_assignment or None)
                self.out("Adding partitions succeeded!")

    def describe_topic(self, opts: TopicCommandOptions) -> None:
        from kafka_py.clients.common.topic_partition import TopicPartition
        from kafka_py.core.zk.zk_data import ConfigType

        topics = self.get_topics(opts.topic, opts.exclude_internal)
        ensure_topic_exists(topics, opts.topic, not opts.if_exists)
        live_brokers = {b.id for b in self.zk_client.get_all_brokers_in_cluster()}
        describe = DescribeOptions(opts, live_brokers)
        admin = self._admin_zk_client()
        for topic in topics:
            found = next(iter(self.zk_client.get_replica_assignment_and_topic_id_for_topics({topic})), None)
            if found is None or not found.assignment:
                self.out(f"Topic {topic} doesn't exist!")
                continue
            marked = self.zk_client.is_topic_marked_for_deletion(topic)
            assignment = sorted(found.assignment.items(), key=lambda item: item[0].partition)
            if describe.describe_configs:
                configs = admin.fetch_entity_config(ConfigType.TOPIC, topic)
                if not opts.topics_with_overrides or configs:
                    config = tuple(ConfigEntry(k, v, "TOPIC_CONFIG", False, False) for k, v in configs.items())
                    self.out(TopicDescription(topic, format_topic_id(found.topic_id), len(assignment),
                                              len(assignment[0][1].replicas), config, marked).description())
            if describe.describe_partitions:
                states = self.zk_client.get_topic_partition_states([tp for tp, _ in assignment])
                for tp, replicas in assignment:
                    state = states.get(TopicPartition(topic, tp.partition))
                    leader_and_isr = state.leader_and_isr if state is not None else None
                    leader = leader_and_isr.leader if leader_and_isr is not None else -1
                    info = PartitionInfo(tp.partition, leader if leader >= 0 else None, tuple(replicas.replicas),
                                         tuple(leader_and_isr.isr) if leader_and_isr is not None else ())
                    desc = PartitionDescription(topic, info, None, marked)
                    if describe.should_print_topic_partition(desc):
                        self.out(desc.description())

    def delete_topic(self, opts: TopicCommandOptions) -> None:
        from kazoo.exceptions import NodeExistsError

        topics = self.get_topics(opts.topic, opts.exclude_internal)
        ensure_topic_exists(topics, opts.topic, not opts.if_exists)
        for topic in topics:
            if _topic().is_internal(topic):
                raise CommandError(f"Topic {topic} is a kafka internal topic and is not allowed to be marked for "
                                   "deletion.")
            try:
                self.zk_client.create_delete_topic_path(topic)
            except NodeExistsError:
                self.out(f"Topic {topic} is already marked for deletion.")
                continue
            except Exception as e:  # noqa: BLE001 - Kafka wraps whatever failed
                raise CommandError(f"Error while deleting topic {topic}: {e}") from e
            self.out(f"Topic {topic} is marked for deletion.")
            self.out("Note: This will have no impact if delete.topic.enable is not set to true.")


def parse_topic_configs_to_be_deleted(names: Sequence[str]) -> list[str]:
    """``--delete-config`` names, which must be topic config names (LogConfig.validateNames)."""
    from kafka_py.log.log_config import LogConfig

    names = [n.strip() for n in names]
    known = set(LogConfig.config_names())
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CommandError(f"Unknown topic config name: {unknown[0]}")
    return names


def run(opts: TopicCommandOptions, service_factory: Callable[[], Any]) -> None:
    service = service_factory()
    try:
        if opts.create:
            service.create_topic(opts)
        elif opts.alter:
            service.alter_topic(opts)
        elif opts.list:
            service.list_topics(opts)
        elif opts.describe:
            service.describe_topic(opts)
        elif opts.delete:
            service.delete_topic(opts)
    finally:
        service.close()


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
               help="This tool helps to create, delete, describe, or change a topic.")
@click.option("--bootstrap-server", metavar="<server to connect to>",
              help="REQUIRED: The Kafka server to connect to.")
@click.option("--command-config", metavar="<command config property file>",
              help="Property file containing configs to be passed to the admin client (Kafka's client property "
                   "names, e.g. request.timeout.ms, bootstrap.timeout.ms).")
@click.option("--zookeeper", metavar="<hosts>",
              help="DEPRECATED, The connection string for the zookeeper connection in the form host:port. Multiple "
                   "hosts can be given to allow fail-over.")
@click.option("--list", "list_", is_flag=True, help="List all available topics.")
@click.option("--create", is_flag=True, help="Create a new topic.")
@click.option("--delete", is_flag=True, help="Delete a topic")
@click.option("--alter", is_flag=True, help="Alter the number of partitions and replica assignment for the topic.")
@click.option("--describe", is_flag=True, help="List details for the given topics.")
@click.option("--topic", metavar="<topic>",
              help="The topic to create, alter, describe or delete. It also accepts a regular expression, "
                   "except for --create option.")
@click.option("--config", multiple=True, metavar="<name=value>",
              help="A topic configuration override for the topic being created (repeatable).")
@click.option("--delete-config", multiple=True, metavar="<name>",
              help="A topic configuration override to be removed for an existing topic (repeatable); only with "
                   "--zookeeper and --alter.")
@click.option("--partitions", type=int, metavar="<# of partitions>",
              help="The number of partitions for the topic being created or altered. If not supplied for "
                   "create, defaults to the cluster default.")
@click.option("--replication-factor", type=int, metavar="<replication factor>",
              help="The replication factor for each partition in the topic being created. If not supplied, "
                   "defaults to the cluster default.")
@click.option("--replica-assignment", metavar="<broker_id_for_part1_replica1:broker_id_for_part1_replica2,...>",
              help="A list of manual partition-to-broker assignments for the topic being created or altered.")
@click.option("--under-replicated-partitions", is_flag=True,
              help="if set when describing topics, only show under replicated partitions")
@click.option("--unavailable-partitions", is_flag=True,
              help="if set when describing topics, only show partitions whose leader is not available")
@click.option("--under-min-isr-partitions", is_flag=True,
              help="if set when describing topics, only show partitions whose isr count is less than the "
                   "configured minimum.")
@click.option("--at-min-isr-partitions", is_flag=True,
              help="if set when describing topics, only show partitions whose isr count is equal to the "
                   "configured minimum.")
@click.option("--topics-with-overrides", is_flag=True,
              help="if set when describing topics, only show topics that have overridden configs")
@click.option("--if-exists", is_flag=True,
              help="if set when altering or deleting or describing topics, the action will only execute if "
                   "the topic exists.")
@click.option("--if-not-exists", is_flag=True,
              help="if set when creating topics, the action will only execute if the topic does not already "
                   "exist.")
@click.option("--disable-rack-aware", is_flag=True, help="Disable rack aware replica assignment")
@click.option("--force", is_flag=True, help="Suppress console prompts")
@click.option("--exclude-internal", is_flag=True,
              help="exclude internal topics when running list or describe command. The internal topics will "
                   "be listed by default")
@handle_errors("Error while executing topic command : ")
def main(list_: bool, **kwargs: Any) -> None:
    opts = TopicCommandOptions(list=list_, **kwargs)
    opts.check_args()
    if opts.bootstrap_server is not None:
        validate_bootstrap_servers(opts.bootstrap_server)
    if opts.create or opts.alter:
        # refuse bad configs and assignments before waiting on a connection
        parse_topic_configs_to_be_added(opts.config)
        _ = opts.replica_assignment_map
    if opts.zookeeper is not None:
        zookeeper = opts.zookeeper
        run(opts, lambda: ZookeeperTopicService.create(zookeeper))
        return
    command_config = load_props(opts.command_config) if opts.command_config else {}
    run(opts, lambda: AdminClientTopicService.create(opts.bootstrap_server, command_config))


if __name__ == "__main__":
    run_tool(main, "kafka-topics.sh")
