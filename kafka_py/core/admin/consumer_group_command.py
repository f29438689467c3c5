"""Port of core/src/main/scala/kafka/admin/ConsumerGroupCommand.scala (``bin/kafka-consumer-groups.sh``).

Lists, describes, resets the offsets of, and deletes consumer groups through the group
coordinator of a running cluster, with Kafka 2.8's options, checks and output:

    GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID ...
    g               t               0          40              100             60              c-1-4f...   ...

``--list [--state [s1,s2]]``; ``--describe`` (``--group`` repeatable, or ``--all-groups``)
with the offsets view (the default, or ``--offsets``), ``--members [--verbose]`` or
``--state``; ``--reset-offsets`` with one scenario (``--to-earliest``, ``--to-latest``,
``--to-current``, ``--to-offset N``, ``--shift-by N``, ``--to-datetime
YYYY-MM-DDTHH:mm:SS.sss[zone]``, ``--by-duration PnDTnHnMnS``, ``--from-file plan.csv``),
one scope (``--topic t`` / ``--topic t:0,1``, repeatable, or ``--all-topics``) and
``--dry-run`` (the default) or ``--execute``, optionally ``--export`` (CSV); ``--delete``;
``--delete-offsets --group g --topic t``; ``--timeout`` (ms, default 5000) bounds each
call's retries while a coordinator is loading or moving.

The group calls are sent as raw requests over kafka-python's KafkaAdminClient
connections (``ConsumerGroupAdmin``), so that every error code is seen and the
retriable ones are retried as Kafka's admin client retries them; offsets and topic
metadata go through KafkaAdminClient's own methods.

Differences from Kafka's tool, on purpose:

- messages Kafka prints as ``Error: ...`` on stdout go to stderr without the blank line
  before them, and the command then exits with status 1 (Kafka exits 0): a group that
  does not exist, a reset refused because the group is active, a failed deletion.
  The informational notes (no active members, rebalancing) go to stderr as in Kafka
  and leave the status at 0;
- ``--list --state`` accepts state names in any letter case (Kafka 2.8's own help
  example, ``stable,empty``, is refused by its case-sensitive parser);
- ``--delete-offsets`` naming a topic that does not exist reports the partition-level
  error line and exits 1, where Kafka prints "Request succeed ..." above the same
  failed row;
- ``--to-datetime`` and ``--by-duration`` values are checked before connecting;
- rows are printed in a fixed order (groups, then topics and partitions, sorted) where
  Kafka's order follows its hash maps.
"""
from __future__ import annotations

import csv
import io
import logging
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterable, Mapping, Sequence

import click

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.utils.command_line_utils import (
    DEFAULT_BOOTSTRAP_TIMEOUT_MS,
    CommandError,
    client_configs,
    connect,
    handle_errors,
    load_props,
    run_tool,
    validate_bootstrap_servers,
)

logger = logging.getLogger(__name__)

MISSING_COLUMN_VALUE = "-"
DEFAULT_TIMEOUT_MS = 5000
CONSUMER_PROTOCOL_TYPE = "consumer"
RETRY_BACKOFF_S = 0.1

# ConsumerGroupState names, in Kafka's order.
GROUP_STATES = ("Unknown", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty")
INACTIVE_STATES = ("Empty", "Dead")

# Group error codes after which Kafka's admin client looks the coordinator up again and
# retries: COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR.
RETRIABLE_GROUP_ERRORS = frozenset({14, 15, 16})
NONE = 0
INVALID_GROUP_ID = 24
GROUP_AUTHORIZATION_FAILED = 30
NON_EMPTY_GROUP = 68
GROUP_ID_NOT_FOUND = 69
UNKNOWN_TOPIC_OR_PARTITION = 3
TOPIC_AUTHORIZATION_FAILED = 29
GROUP_SUBSCRIBED_TO_TOPIC = 86

Out = Callable[[str], None]


def _err(line: str) -> None:
    click.echo(line, err=True)


# -- errors --------------------------------------------------------------------------------

def kafka_exception_text(error_code: int, message: str | None = None) -> str:
    """What Kafka's ``Throwable.toString`` prints for a response error:
    ``org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.``"""
    from kafka_py.clients.common.protocol.errors import Errors

    try:
        error = Errors.for_code(error_code)
    except (KeyError, ValueError):
        return f"org.apache.kafka.common.errors.UnknownServerException: Unknown error code {error_code}"
    name = error.exception_name or error.name
    return f"org.apache.kafka.common.errors.{name}: {message or error.message}"


def error_message_text(error_code: int, message: str | None = None) -> str:
    """What Kafka's ``Throwable.getMessage`` prints for a response error."""
    from kafka_py.clients.common.protocol.errors import Errors

    if message:
        return message
    try:
        return Errors.for_code(error_code).message
    except (KeyError, ValueError):
        return f"Unknown error code {error_code}"


class GroupApiError(CommandError):
    """A broker error code for a group call; str() is Kafka's exception text."""

    def __init__(self, error_code: int, message: str | None = None) -> None:
        super().__init__(kafka_exception_text(error_code, message))
        self.error_code = error_code


# -- value types ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Node:
    id: int
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port} ({self.id})"


@dataclass(frozen=True)
class MemberDescription:
    """One member of a DescribeGroups answer, its assignment decoded (admin MemberDescription)."""

    consumer_id: str
    group_instance_id: str | None
    client_id: str
    host: str
    assignment: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True)
class ConsumerGroupDescription:
    group_id: str
    is_simple_consumer_group: bool
    members: tuple[MemberDescription, ...]
    partition_assignor: str
    state: str
    coordinator: Node | None


@dataclass(frozen=True)
class ConsumerGroupListing:
    group_id: str
    state: str | None


@dataclass(frozen=True)
class PartitionAssignmentState:
    """One row of the offsets view; None prints as "-"."""

    group: str
    coordinator: Node | None
    topic: str | None
    partition: int | None
    offset: int | None
    lag: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None
    log_end_offset: int | None


@dataclass(frozen=True)
class MemberAssignmentState:
    """One row of the members view."""

    group: str
    consumer_id: str
    host: str
    client_id: str
    group_instance_id: str
    num_partitions: int
    assignment: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class GroupState:
    """The row of the state view."""

    group: str
    coordinator: Node
    assignment_strategy: str
    state: str
    num_members: int


# -- option values -------------------------------------------------------------------------

_DATETIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{1,3})"
    r"(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?)")


def get_date_time(timestamp: str) -> int:
    """Utils.getDateTime: ``YYYY-MM-DDTHH:mm:SS.sss`` with an optional zone (``Z``,
    ``+hh``, ``+hhmm``, ``+hh:mm``; UTC when none) → epoch milliseconds.

    As Java's SimpleDateFormat does, the fraction is a count of milliseconds, so ``.5``
    is 5 ms, and fields out of range (month 13, 25 o'clock) are refused.
    """
    parts = timestamp.split("T")
    if len(parts) < 2:
        raise CommandError("Error parsing timestamp. It does not contain a 'T' according to ISO8601 format")
    text = timestamp
    if not any(c in parts[1] for c in "+-Z"):
        text += "Z"
    match = _DATETIME.fullmatch(text)
    if match is None:
        raise CommandError(f'Unparseable date: "{timestamp}"')
    year, month, day, hour, minute, second, millis = (int(g) for g in match.groups()[:7])
    offset = timedelta(0)
    if match.group(9):
        zone_hours = int(match.group(10))
        zone_minutes = int(match.group(11) or 0)
        if zone_hours > 23 or zone_minutes > 59:
            raise CommandError(f'Unparseable date: "{timestamp}"')
        offset = timedelta(hours=zone_hours, minutes=zone_minutes)
        if match.group(9) == "-":
            offset = -offset
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=timezone(offset))
    except ValueError:
        raise CommandError(f'Unparseable date: "{timestamp}"') from None
    return int(moment.timestamp()) * 1000 + millis


_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?\d+)D)?"
    r"(T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?)(\d+)(?:[.,](\d{0,9}))?S)?)?",
    re.IGNORECASE)


def parse_duration_ms(text: str) -> int:
    """java.time.Duration.parse (``PnDTnHnMn.nS``, e.g. ``PT1H30M``, ``P1D``, ``-PT5M``) → ms."""
    match = _DURATION.fullmatch(text)
    if match is None or match.group(3) == "T" or not any(match.group(i) for i in (2, 4, 5, 7)):
        raise CommandError(f"Text cannot be parsed to a Duration: {text}")
    sign, days, _, hours, minutes, seconds_sign, seconds, fraction = match.groups()
    millis = (int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes or 0) * 60) * 1000
    seconds_ms = int(seconds or 0) * 1000 + int(((fraction or "") + "000")[:3])
    millis += -seconds_ms if seconds_sign == "-" else seconds_ms
    return -millis if sign == "-" else millis


def consumer_group_states_from_string(text: str) -> set[str]:
    """``--state stable,empty`` → {"Stable", "Empty"} (any letter case)."""
    by_lower = {s.lower(): s for s in GROUP_STATES}
    states = {by_lower.get(part.strip().lower(), "Unknown") for part in text.split(",")}
    if "Unknown" in states:
        valid = ", ".join(s for s in GROUP_STATES if s != "Unknown")
        raise click.UsageError(f"Invalid state list '{text}'. Valid states are: {valid}")
    return states


def parse_topic_args(topic_args: Iterable[str]) -> tuple[list[TopicPartition], list[str]]:
    """``--topic t:0,2 --topic u`` → ([t-0, t-2], ["u"]): explicit partitions, and the
    topics whose partitions are all meant (looked up in the cluster)."""
    partitions: list[TopicPartition] = []
    whole_topics: list[str] = []
    for arg in topic_args:
        if ":" in arg:
            topic, _, spec = arg.partition(":")
            try:
                partitions += [TopicPartition(topic, int(p)) for p in spec.split(",")]
            except ValueError:
                raise click.UsageError(f"Invalid partition list in --topic '{arg}': "
                                       "expected topic:partition[,partition...]") from None
        else:
            whole_topics.append(arg)
    return partitions, whole_topics


def parse_reset_plan(text: str, groups: Sequence[str]) -> dict[str, dict[TopicPartition, int]]:
    """A ``--from-file`` CSV: ``topic,partition,offset`` rows when one group was named,
    else ``group,topic,partition,offset`` rows (what ``--export`` writes)."""
    lines = [line for line in text.split("\n") if line.strip()]
    rows = list(csv.reader(lines))

    def is_old_format(row: list[str]) -> bool:
        if len(row) != 3:
            return False
        try:
            int(row[1]), int(row[2])
        except ValueError:
            return False
        return True

    plan: dict[str, dict[TopicPartition, int]] = {}
    single_group = len(groups) == 1 and bool(rows) and is_old_format(rows[0])
    for n, row in enumerate(rows, 1):
        try:
            if single_group:
                group, (topic, partition, offset) = groups[0], row
            else:
                group, topic, partition, offset = row
            plan.setdefault(group, {})[TopicPartition(topic, int(partition))] = int(offset)
        except ValueError:
            expected = "topic,partition,offset" if single_group else "group,topic,partition,offset"
            raise CommandError(f"Invalid reset plan line {n} '{lines[n - 1]}': expected {expected}") from None
    return plan


def export_offsets_to_csv(plan: Mapping[str, Mapping[TopicPartition, int]], single_group: bool) -> str:
    """The ``--export`` CSV: the rows ``parse_reset_plan`` reads back."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for group in plan:
        for tp in sorted(plan[group]):
            offset = plan[group][tp]
            writer.writerow([tp.topic, tp.partition, offset] if single_group
                            else [group, tp.topic, tp.partition, offset])
    return buffer.getvalue()


# -- the reset plan ------------------------------------------------------------------------

@dataclass(frozen=True)
class ResetScenario:
    """Which of Kafka's reset specifications was given, with its value."""

    kind: str  # to-offset | to-earliest | to-latest | to-current | shift-by | to-datetime | by-duration | from-file
    value: int | None = None  # the offset, the shift, or the timestamp in ms


def check_offsets_range(requested: Mapping[TopicPartition, int],
                        log_start_offsets: Mapping[TopicPartition, int | None],
                        log_end_offsets: Mapping[TopicPartition, int | None]
                        ) -> tuple[dict[TopicPartition, int], list[str]]:
    """Clamp requested offsets into [log start, log end]; the warnings say what moved."""
    result: dict[TopicPartition, int] = {}
    warnings: list[str] = []
    for tp, offset in requested.items():
        if tp not in log_end_offsets:
            raise CommandError(f"Unexpected non-existing offset value for topic partition {tp}")
        end = log_end_offsets[tp]
        start = log_start_offsets.get(tp)
        if end is not None and offset > end:
            warnings.append(f"New offset ({offset}) is higher than latest offset for topic partition {tp}. "
                            f"Value will be set to {end}")
            offset = end
        elif start is not None and offset < start:
            warnings.append(f"New offset ({offset}) is lower than earliest offset for topic partition {tp}. "
                            f"Value will be set to {start}")
            offset = start
        result[tp] = offset
    return result, warnings


def prepare_offsets_to_reset(scenario: ResetScenario, partitions: Sequence[TopicPartition], *,
                             committed: Mapping[TopicPartition, int],
                             log_start_offsets: Mapping[TopicPartition, int | None],
                             log_end_offsets: Mapping[TopicPartition, int | None],
                             timestamp_offsets: Mapping[TopicPartition, int | None] | None = None,
                             file_plan: Mapping[TopicPartition, int] | None = None,
                             ) -> tuple[dict[TopicPartition, int], list[str]]:
    """The new offset of every partition for one group, and the range warnings.

    ``committed`` holds the group's committed offsets; ``timestamp_offsets`` the first
    offset at or after the scenario's timestamp (None: no such record, so the log end).
    """

    def needed(offsets: Mapping[TopicPartition, int | None], tp: TopicPartition, what: str) -> int:
        value = offsets.get(tp)
        if value is None:
            raise click.UsageError(f"Error getting {what} of topic partition: {tp}")
        return value

    kind = scenario.kind
    if kind == "to-offset":
        assert scenario.value is not None
        return check_offsets_range({tp: scenario.value for tp in partitions}, log_start_offsets, log_end_offsets)
    if kind == "to-earliest":
        return {tp: needed(log_start_offsets, tp, "starting offset") for tp in partitions}, []
    if kind == "to-latest":
        return {tp: needed(log_end_offsets, tp, "ending offset") for tp in partitions}, []
    if kind == "shift-by":
        assert scenario.value is not None
        requested = {}
        for tp in partitions:
            if tp not in committed:
                raise click.UsageError(
                    f"Cannot shift offset for partition {tp} since there is no current committed offset")
            requested[tp] = committed[tp] + scenario.value
        return check_offsets_range(requested, log_start_offsets, log_end_offsets)
    if kind in ("to-datetime", "by-duration"):
        offsets = timestamp_offsets or {}
        plan = {}
        for tp in partitions:
            found = offsets.get(tp)
            plan[tp] = found if found is not None and found >= 0 else needed(
                log_end_offsets, tp, "offset by timestamp")
        return plan, []
    if kind == "from-file":
        return check_offsets_range(dict(file_plan or {}), log_start_offsets, log_end_offsets)
    if kind == "to-current":
        return {tp: committed[tp] if tp in committed else needed(log_end_offsets, tp, "ending offset")
                for tp in partitions}, []
    raise click.UsageError(f"Unknown reset scenario {kind}")


# -- output --------------------------------------------------------------------------------

def _cell(value: Any) -> str:
    return MISSING_COLUMN_VALUE if value is None else str(value)


def should_print_member_state(group: str, state: str | None, num_rows: int | None, err: Out) -> bool:
    """Kafka's notes before a group's table; True when there are rows to print.

    A group that does not exist is reported with an ``Error:`` line (the caller's exit
    status becomes 1); an empty or rebalancing group only gets a note.
    """
    if num_rows is None:
        err(f"Error: The consumer group '{group}' does not exist.")
        return False
    if state == "Dead":
        err(f"Error: Consumer group '{group}' does not exist.")
    elif state == "Empty":
        err(f"Consumer group '{group}' has no active members.")
    elif state in ("PreparingRebalance", "CompletingRebalance"):
        err(f"Warning: Consumer group '{group}' is rebalancing.")
    elif state != "Stable":
        raise CommandError(f"Expected a valid consumer group state, but found '{state or 'NONE'}'.")
    return state != "Dead" and num_rows > 0


def format_offsets(rows: Sequence[PartitionAssignmentState]) -> list[str]:
    """The offsets view of one group: a blank line, the header, one line per partition."""
    group_w = max([15] + [len(r.group) for r in rows])
    topic_w = max([15] + [len(_cell(r.topic)) for r in rows])
    consumer_w = max([15] + [len(_cell(r.consumer_id)) for r in rows])
    host_w = max([15] + [len(_cell(r.host)) for r in rows])

    def line(*cells: Any) -> str:
        g, t, p, o, e, lag, c, h, client = (_cell(x) for x in cells)
        return (f"{g:<{group_w}} {t:<{topic_w}} {p:<10} {o:<15} {e:<15} {lag:<15} "
                f"{c:<{consumer_w}} {h:<{host_w}} {client}")

    lines = ["", line("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID",
                      "HOST", "CLIENT-ID")]
    for r in rows:
        lines.append(line(r.group, r.topic, r.partition, r.offset, r.log_end_offset, r.lag, r.consumer_id,
                          r.host, r.client_id))
    return lines


def format_assignment(assignment: Sequence[TopicPartition]) -> str:
    """``t(0,2), u(1)``: partitions grouped by topic; "-" for none."""
    if not assignment:
        return MISSING_COLUMN_VALUE
    by_topic: dict[str, list[int]] = {}
    for tp in assignment:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ", ".join(sorted(f"{t}({','.join(str(p) for p in sorted(ps))})" for t, ps in by_topic.items()))


def format_members(rows: Sequence[MemberAssignmentState], verbose: bool) -> list[str]:
    """The members view of one group (with GROUP-INSTANCE-ID when any member is static)."""
    group_w = max([15] + [len(r.group) for r in rows])
    consumer_w = max([15] + [len(r.consumer_id) for r in rows])
    instance_w = max([17] + [len(r.group_instance_id) for r in rows])
    host_w = max([15] + [len(r.host) for r in rows])
    client_w = max([15] + [len(r.client_id) for r in rows])
    with_instance = any(r.group_instance_id for r in rows)

    def line(group: str, consumer: str, instance: str, host: str, client: str, count: Any, assignment: str) -> str:
        text = f"{group:<{group_w}} {consumer:<{consumer_w}} "
        if with_instance:
            text += f"{instance:<{instance_w}} "
        text += f"{host:<{host_w}} {client:<{client_w}} {str(count):<15} "
        return text + assignment if verbose else text

    lines = ["", line("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                      "ASSIGNMENT")]
    for r in rows:
        lines.append(line(r.group, r.consumer_id, r.group_instance_id, r.host, r.client_id, r.num_partitions,
                          format_assignment(r.assignment)))
    return lines


def format_state(state: GroupState) -> list[str]:
    """The state view of one group."""
    coordinator = str(state.coordinator)
    width = max(25, len(coordinator))
    return ["",
            f"{'GROUP':<{width}} {'COORDINATOR (ID)':<25} {'ASSIGNMENT-STRATEGY':<20} {'STATE':<15} #MEMBERS",
            f"{state.group:<{width}} {coordinator:<25} {state.assignment_strategy:<20} {state.state:<15} "
            f"{state.num_members}"]


def format_group_states(listings: Sequence[tuple[str, str]]) -> list[str]:
    """``--list --state``: GROUP and STATE columns."""
    width = max([15] + [len(g) for g, _ in listings])
    return [f"{'GROUP':<{width}} STATE"] + [f"{g:<{width}} {s}" for g, s in listings]


def format_offsets_to_reset(plan: Mapping[str, Mapping[TopicPartition, int]]) -> list[str]:
    """The reset plan table (dry run and execute alike)."""
    if not plan:
        return []
    lines = ["", f"{'GROUP':<30} {'TOPIC':<30} {'PARTITION':<10} {'NEW-OFFSET':<15}"]
    for group, offsets in plan.items():
        for tp in sorted(offsets):
            lines.append(f"{group:<30} {tp.topic:<30} {tp.partition:<10} {offsets[tp]:<15}")
    return lines


def format_delete_offsets_result(results: Mapping[TopicPartition, str | None]) -> list[str]:
    """TOPIC / PARTITION / STATUS per partition; partition -1 is a topic that was not found."""
    lines = ["", f"{'TOPIC':<30} {'PARTITION':<15} {'STATUS':<15}"]
    for tp in sorted(results, key=lambda t: t.topic + str(t.partition)):
        error = results[tp]
        partition = str(tp.partition) if tp.partition >= 0 else "Not Provided"
        status = f"Error: {error}" if error is not None else "Successful"
        lines.append(f"{tp.topic:<30} {partition:<15} {status:<15}")
    return lines


def collect_group_offsets(description: ConsumerGroupDescription, committed: Mapping[TopicPartition, int],
                          log_end_offsets: Mapping[TopicPartition, int | None]) -> list[PartitionAssignmentState]:
    """The offsets-view rows: assigned partitions member by member (largest assignment
    first), then committed partitions no member owns, with "-" for the member columns."""
    group = description.group_id
    coordinator = description.coordinator

    def row(tp: TopicPartition, consumer_id: str, host: str, client_id: str) -> PartitionAssignmentState:
        offset = committed.get(tp)
        end = log_end_offsets.get(tp)
        lag = end - offset if offset is not None and offset != -1 and end is not None else None
        return PartitionAssignmentState(group, coordinator, tp.topic, tp.partition, offset, lag, consumer_id,
                                        host, client_id, end)

    rows: list[PartitionAssignmentState] = []
    assigned: set[TopicPartition] = set()
    members = sorted((m for m in description.members if m.assignment), key=lambda m: -len(m.assignment))
    for member in members:
        for tp in sorted(member.assignment, key=lambda t: (t.partition, t.topic)):
            assigned.add(tp)
            rows.append(row(tp, member.consumer_id, member.host, member.client_id))
    for tp in sorted(committed):
        if tp not in assigned:
            rows.append(row(tp, MISSING_COLUMN_VALUE, MISSING_COLUMN_VALUE, MISSING_COLUMN_VALUE))
    return rows


def collect_group_members(description: ConsumerGroupDescription, verbose: bool) -> list[MemberAssignmentState]:
    return [MemberAssignmentState(description.group_id, m.consumer_id, m.host, m.client_id,
                                  m.group_instance_id or "", len(m.assignment),
                                  tuple(m.assignment) if verbose else ())
            for m in description.members]


# -- options -------------------------------------------------------------------------------

RESET_SCENARIOS = ("to-offset", "to-datetime", "by-duration", "to-earliest", "to-latest", "to-current",
                   "shift-by", "from-file")


@dataclass(frozen=True)
class ConsumerGroupCommandOptions:
    """The parsed command line; ``check_args`` applies Kafka's combination rules."""

    bootstrap_server: str | None = None
    command_config: str | None = None
    group: tuple[str, ...] = ()
    topic: tuple[str, ...] = ()
    all_topics: bool = False
    list: bool = False
    describe: bool = False
    all_groups: bool = False
    delete: bool = False
    timeout: int = DEFAULT_TIMEOUT_MS
    reset_offsets: bool = False
    delete_offsets: bool = False
    dry_run: bool = False
    execute: bool = False
    export: bool = False
    to_offset: int | None = None
    from_file: str | None = None
    to_datetime: str | None = None
    by_duration: str | None = None
    to_earliest: bool = False
    to_latest: bool = False
    to_current: bool = False
    shift_by: int | None = None
    members: bool = False
    verbose: bool = False
    offsets: bool = False
    # None: not given; "": given without a value; else the comma-separated states.
    state: str | None = None

    def has(self, name: str) -> bool:
        value = getattr(self, name.replace("-", "_"))
        if isinstance(value, bool):
            return value
        if isinstance(value, tuple):
            return bool(value)
        return value is not None

    @property
    def actions(self) -> list[str]:
        return [a for a in ("list", "describe", "delete", "reset-offsets", "delete-offsets") if self.has(a)]

    @property
    def reset_scenarios(self) -> list[str]:
        return [s for s in RESET_SCENARIOS if self.has(s)]

    @property
    def dry_run_only(self) -> bool:
        return self.dry_run or not self.execute

    def reset_scenario(self, now_ms: int | None = None) -> ResetScenario:
        kind = self.reset_scenarios[0]
        if kind == "to-offset":
            return ResetScenario(kind, self.to_offset)
        if kind == "shift-by":
            return ResetScenario(kind, self.shift_by)
        if kind == "to-datetime":
            assert self.to_datetime is not None
            return ResetScenario(kind, get_date_time(self.to_datetime))
        if kind == "by-duration":
            assert self.by_duration is not None
            now = int(time.time() * 1000) if now_ms is None else now_ms
            return ResetScenario(kind, now - parse_duration_ms(self.by_duration))
        return ResetScenario(kind)

    def check_args(self) -> None:
        def usage(message: str) -> None:
            raise click.UsageError(message)

        def check_invalid(used: str, invalid: Iterable[str]) -> None:
            if self.has(used):
                for other in invalid:
                    if self.has(other):
                        usage(f'Option "[{used}]" can\'t be used with option "[{other}]"')

        if self.bootstrap_server is None:
            usage('Missing required argument "[bootstrap-server]"')
        for option, allowed in (("members", ("describe",)), ("verbose", ("describe",)),
                                ("offsets", ("describe",)), ("state", ("describe", "list"))):
            if self.has(option) and not any(self.has(a) for a in allowed):
                usage(f"Option(s) [{option}] are unavailable given other options on the command line")
        if self.describe:
            if not self.group and not self.all_groups:
                usage("Option [describe] takes one of these options: [group], [all-groups]")
            if sum(map(self.has, ("members", "offsets", "state"))) > 1:
                usage("Option [describe] takes at most one of these options: [members], [offsets], [state]")
            if self.state:
                usage("Option [describe] does not take a value for [state]")
        if self.delete:
            if not self.group and not self.all_groups:
                usage("Option [delete] takes one of these options: [group], [all-groups]")
            if self.topic:
                usage("The consumer does not support topic-specific offset deletion from a consumer group.")
        if self.delete_offsets and (not self.group or not self.topic):
            usage("Option [delete-offsets] takes the following options: [group], [topic]")
        if self.reset_offsets:
            if self.dry_run and self.execute:
                usage("Option [reset-offsets] only accepts one of [execute] and [dry-run]")
            if not self.group and not self.all_groups:
                usage("Option [reset-offsets] takes one of these options: [group], [all-groups]")
            for scenario in RESET_SCENARIOS:
                check_invalid(scenario, [s for s in RESET_SCENARIOS if s != scenario])
        check_invalid("group", ["all-groups"])
        check_invalid("group", ["list"])
        check_invalid("topic", ["list", "describe"])
        if len(self.actions) != 1:
            usage("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, "
                  "--delete-offsets")
        if self.reset_offsets:
            if not self.reset_scenarios:
                usage("Option '[reset-offsets]' requires one of the following scenarios: "
                      + ", ".join(f"[{s}]" for s in RESET_SCENARIOS))
            if not self.all_topics and not self.topic and not self.from_file:
                usage("One of the reset scopes should be defined: --all-topics, --topic.")
        if self.delete_offsets and len(self.group) > 1:
            usage("Option [delete-offsets] supports one consumer group at a time")
        if self.timeout <= 0:
            usage(f"Option [timeout] must be positive (got {self.timeout})")


# -- the group admin calls -----------------------------------------------------------------

def _deadline(timeout_ms: int) -> float:
    return time.monotonic() + timeout_ms / 1000


class ConsumerGroupAdmin:
    """The group calls of Kafka's Admin client over one kafka-python KafkaAdminClient.

    Each call finds the group's coordinator, sends the request there and, on a
    retriable answer (coordinator loading, not available, moved) or a lost connection,
    finds the coordinator again and retries until the call's timeout, as Kafka's admin
    client does. Other error codes are raised as GroupApiError.
    """

    def __init__(self, admin: Any, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
        self.admin = admin
        self.timeout_ms = timeout_ms

    @classmethod
    def create(cls, bootstrap_server: str, command_config: Mapping[str, str],
               timeout_ms: int = DEFAULT_TIMEOUT_MS) -> "ConsumerGroupAdmin":
        from kafka import KafkaAdminClient

        props = {"bootstrap.timeout.ms": str(max(DEFAULT_BOOTSTRAP_TIMEOUT_MS, timeout_ms)), **command_config,
                 "bootstrap.servers": bootstrap_server}
        configs = client_configs(props, KafkaAdminClient)
        configs.setdefault("client_id", "kafka-consumer-groups")
        return cls(connect(KafkaAdminClient, configs), timeout_ms)

    def close(self) -> None:
        self.admin.close()

    # ---------------------------------------------------------------- plumbing

    def _send(self, request: Any, node_id: int | None = None) -> Any:
        manager = self.admin._manager

        async def send() -> Any:
            return await manager.send(request, node_id=node_id, request_timeout_ms=self.timeout_ms)

        return manager.run(send)

    def _retrying(self, call_name: str, attempt: Callable[[], Any]) -> Any:
        """Run ``attempt`` until it returns; retriable failures are retried until the timeout."""
        import kafka.errors as kafka_errors

        deadline = _deadline(self.timeout_ms)
        tries = 0
        while True:
            tries += 1
            try:
                return attempt()
            except GroupApiError as e:
                if e.error_code not in RETRIABLE_GROUP_ERRORS:
                    raise
                last: Exception = e
            except kafka_errors.KafkaError as e:
                if not getattr(e, "retriable", False):
                    raise
                last = e
            if time.monotonic() + RETRY_BACKOFF_S > deadline:
                raise CommandError(
                    f"org.apache.kafka.common.errors.TimeoutException: Call(callName={call_name}) timed out "
                    f"after {tries} attempt(s); last error: {last}") from last
            # the backoff of Kafka's admin client (retry.backoff.ms) between attempts
            time.sleep(RETRY_BACKOFF_S)

    def find_coordinator(self, group_id: str) -> Node:
        from kafka.protocol.metadata import FindCoordinatorRequest

        response = self._send(FindCoordinatorRequest(key=group_id, key_type=0, max_version=3))
        if response.error_code:
            raise GroupApiError(response.error_code, getattr(response, "error_message", None))
        return Node(response.node_id, response.host, response.port)

    # ---------------------------------------------------------------- groups

    def list_consumer_groups(self) -> list[ConsumerGroupListing]:
        """Every consumer group of every broker (protocol type "consumer" or none)."""

        def attempt() -> list[ConsumerGroupListing]:
            from kafka.protocol.admin import ListGroupsRequest

            listings: dict[str, ConsumerGroupListing] = {}
            for broker in self.admin._manager.cluster.brokers():
                response = self._send(ListGroupsRequest(max_version=4), broker.node_id)
                if response.error_code:
                    raise GroupApiError(response.error_code)
                for g in response.groups:
                    if g.protocol_type in (CONSUMER_PROTOCOL_TYPE, ""):
                        state = getattr(g, "group_state", None) or None
                        listings[g.group_id] = ConsumerGroupListing(g.group_id, state)
            return [listings[g] for g in sorted(listings)]

        return self._retrying("listConsumerGroups", attempt)

    def describe_consumer_group(self, group_id: str) -> ConsumerGroupDescription:
        from kafka.protocol.admin import DescribeGroupsRequest

        def attempt() -> ConsumerGroupDescription:
            coordinator = self.find_coordinator(group_id)
            response = self._send(DescribeGroupsRequest(groups=[group_id], include_authorized_operations=False),
                                  coordinator.id)
            described = [g for g in response.groups if g.group_id == group_id]
            if len(response.groups) != 1 or not described:
                raise CommandError(
                    "org.apache.kafka.common.errors.InvalidGroupIdException: DescribeConsumerGroup request for "
                    f"GroupId: {group_id} returned {[g.group_id for g in response.groups]}")
            group = described[0]
            if group.error_code:
                raise GroupApiError(group.error_code, getattr(group, "error_message", None))
            if group.protocol_type not in (CONSUMER_PROTOCOL_TYPE, ""):
                raise CommandError(f"GroupId {group_id} is not a consumer group ({group.protocol_type}).")
            members = tuple(MemberDescription(
                consumer_id=m.member_id,
                group_instance_id=getattr(m, "group_instance_id", None),
                client_id=m.client_id,
                host=m.client_host,
                assignment=decode_assignment(m.member_assignment)) for m in group.members)
            return ConsumerGroupDescription(group_id, group.protocol_type == "", members, group.protocol_data,
                                            group.group_state, coordinator)

        return self._retrying("describeConsumerGroups", attempt)

    def list_consumer_group_offsets(self, group_id: str) -> dict[TopicPartition, int]:
        """The group's committed offsets (partitions without one are left out)."""
        from kafka.protocol.consumer import OffsetFetchRequest

        def attempt() -> dict[TopicPartition, int]:
            coordinator = self.find_coordinator(group_id)
            response = self._send(OffsetFetchRequest(group_id=group_id, topics=None, require_stable=False,
                                                     min_version=2, max_version=7), coordinator.id)
            if response.error_code:
                raise GroupApiError(response.error_code)
            offsets: dict[TopicPartition, int] = {}
            for topic in response.topics:
                for p in topic.partitions:
                    if p.error_code:
                        raise GroupApiError(p.error_code)
                    if p.committed_offset >= 0:
                        offsets[TopicPartition(topic.name, p.partition_index)] = p.committed_offset
            return offsets

        return self._retrying("listConsumerGroupOffsets", attempt)

    def alter_consumer_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit ``offsets`` for the group as a standalone (generation-less) OffsetCommit."""
        if not offsets:
            return
        from kafka import KafkaAdminClient
        from kafka.structs import OffsetAndMetadata
        from kafka.structs import TopicPartition as KafkaTopicPartition

        request = KafkaAdminClient._alter_group_offsets_request(group_id, {
            KafkaTopicPartition(tp.topic, tp.partition): OffsetAndMetadata(offset, "", None)
            for tp, offset in offsets.items()})

        def attempt() -> None:
            coordinator = self.find_coordinator(group_id)
            response = self._send(request, coordinator.id)
            codes = [p.error_code for t in response.topics for p in t.partitions if p.error_code]
            retriable = [c for c in codes if c in RETRIABLE_GROUP_ERRORS]
            if retriable:
                raise GroupApiError(retriable[0])
            if codes:
                raise GroupApiError(codes[0])

        self._retrying("alterConsumerGroupOffsets", attempt)

    def delete_consumer_groups(self, group_ids: Sequence[str]) -> dict[str, int]:
        """Delete each group; its error code (0 when deleted)."""
        from kafka.protocol.admin import DeleteGroupsRequest

        results: dict[str, int] = {}
        for group_id in group_ids:
            def attempt(group_id: str = group_id) -> int:
                coordinator = self.find_coordinator(group_id)
                response = self._send(DeleteGroupsRequest(groups_names=[group_id]), coordinator.id)
                code = next((r.error_code for r in response.results if r.group_id == group_id), NONE)
                if code in RETRIABLE_GROUP_ERRORS:
                    raise GroupApiError(code)
                return code

            results[group_id] = self._retrying("deleteConsumerGroups", attempt)
        return results

    def delete_consumer_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition]
                                      ) -> tuple[int, dict[TopicPartition, int]]:
        """OffsetDelete: the top-level error code and each partition's."""
        from kafka import KafkaAdminClient
        from kafka.structs import TopicPartition as KafkaTopicPartition

        request = KafkaAdminClient._delete_group_offsets_request(
            group_id, [KafkaTopicPartition(tp.topic, tp.partition) for tp in partitions])

        def attempt() -> tuple[int, dict[TopicPartition, int]]:
            coordinator = self.find_coordinator(group_id)
            response = self._send(request, coordinator.id)
            if response.error_code in RETRIABLE_GROUP_ERRORS:
                raise GroupApiError(response.error_code)
            return response.error_code, {TopicPartition(t.name, p.partition_index): p.error_code
                                         for t in response.topics for p in t.partitions}

        return self._retrying("deleteConsumerGroupOffsets", attempt)

    # ---------------------------------------------------------------- topics and offsets

    def topic_partitions(self, topic: str) -> list[TopicPartition]:
        """The partitions of ``topic``; GroupApiError (UNKNOWN_TOPIC_OR_PARTITION) if none."""
        def attempt() -> list[TopicPartition]:
            for t in self.admin.describe_topics([topic]):
                if t.get("name") != topic:
                    continue
                if t.get("error_code"):
                    raise GroupApiError(t["error_code"])
                return sorted(TopicPartition(topic, p["partition_index"]) for p in t.get("partitions") or ())
            raise GroupApiError(UNKNOWN_TOPIC_OR_PARTITION)

        return self._retrying("describeTopics", attempt)

    def list_offsets(self, partitions: Iterable[TopicPartition], spec: Any) -> dict[TopicPartition, int | None]:
        """ListOffsets for each partition: ``spec`` is an OffsetSpec or a timestamp (ms).

        A partition whose lookup fails maps to None (Kafka's LogOffsetResult.Unknown); a
        timestamp with no record at or after it gives -1.
        """
        import kafka.errors as kafka_errors
        from kafka.structs import TopicPartition as KafkaTopicPartition

        wanted = sorted(set(partitions))
        if not wanted:
            return {}

        def lookup(tps: Sequence[TopicPartition]) -> dict[TopicPartition, int | None]:
            answer = self.admin.list_partition_offsets(
                {KafkaTopicPartition(tp.topic, tp.partition): spec for tp in tps}, timeout_ms=self.timeout_ms)
            return {TopicPartition(k.topic, k.partition): v.offset for k, v in answer.items()}

        try:
            found = lookup(wanted)
        except kafka_errors.KafkaError:
            # one unknown partition fails the whole request: look the others up one by one
            found = {}
            for tp in wanted:
                try:
                    found.update(lookup([tp]))
                except kafka_errors.KafkaError as e:
                    logger.debug("no offset for %s: %s", tp, e)
        return {tp: found.get(tp) for tp in wanted}


def decode_assignment(raw: Any) -> tuple[TopicPartition, ...]:
    """The partitions of a ConsumerProtocol assignment (empty bytes: nothing assigned)."""
    if not raw:
        return ()
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    try:
        assignment = ConsumerProtocolAssignment.decode(bytes(raw))
    except Exception:  # a non-consumer or corrupt assignment shows as no partitions
        logger.debug("undecodable member assignment", exc_info=True)
        return ()
    return tuple(sorted(TopicPartition(t.topic, p) for t in assignment.assigned_partitions for p in t.partitions))


# -- the service ---------------------------------------------------------------------------

@dataclass
class ConsumerGroupService:
    """ConsumerGroupCommand.ConsumerGroupService: one action over a ConsumerGroupAdmin.

    ``failed`` turns true when an ``Error:`` line was printed; the command then exits 1.
    """

    opts: ConsumerGroupCommandOptions
    admin: ConsumerGroupAdmin
    out: Out = field(default=click.echo)
    err: Out = field(default=_err)
    failed: bool = False

    def error(self, message: str) -> None:
        self.failed = True
        self.err(f"Error: {message}")

    def _notes(self, group: str, state: str | None, num_rows: int | None) -> bool:
        def err(line: str) -> None:
            if line.startswith("Error: "):
                self.failed = True
            self.err(line)

        return should_print_member_state(group, state, num_rows, err)

    def close(self) -> None:
        self.admin.close()

    def group_ids(self) -> list[str]:
        if self.opts.all_groups:
            return [g.group_id for g in self.admin.list_consumer_groups()]
        return list(dict.fromkeys(self.opts.group))

    # ---------------------------------------------------------------- list

    def list_groups(self) -> None:
        if self.opts.state is None:
            for listing in self.admin.list_consumer_groups():
                self.out(listing.group_id)
            return
        wanted = consumer_group_states_from_string(self.opts.state) if self.opts.state else set()
        rows = []
        for listing in self.admin.list_consumer_groups():
            state = listing.state
            if state is None:  # a broker without ListGroups v4 sends no states
                state = self.admin.describe_consumer_group(listing.group_id).state
            if not wanted or state in wanted:
                rows.append((listing.group_id, state))
        for line in format_group_states(rows):
            self.out(line)

    # ---------------------------------------------------------------- describe

    def describe_groups(self) -> None:
        groups = sorted(self.group_ids())
        descriptions = {g: self.admin.describe_consumer_group(g) for g in groups}
        if self.opts.members:
            for g, description in descriptions.items():
                rows = collect_group_members(description, self.opts.verbose)
                if self._notes(g, description.state, len(rows)):
                    for line in format_members(rows, self.opts.verbose):
                        self.out(line)
        elif self.opts.state is not None:
            for g, description in descriptions.items():
                if self._notes(g, description.state, 1):
                    assert description.coordinator is not None
                    state = GroupState(g, description.coordinator, description.partition_assignor,
                                       description.state, len(description.members))
                    for line in format_state(state):
                        self.out(line)
        else:
            from kafka.admin import OffsetSpec

            for g, description in descriptions.items():
                committed = self.admin.list_consumer_group_offsets(g)
                partitions = set(committed) | {tp for m in description.members for tp in m.assignment}
                log_end = self.admin.list_offsets(partitions, OffsetSpec.LATEST)
                rows = collect_group_offsets(description, committed, log_end)
                if self._notes(g, description.state, len(rows)):
                    for line in format_offsets(rows):
                        self.out(line)

    # ---------------------------------------------------------------- reset

    def partitions_to_reset(self, group_id: str) -> list[TopicPartition]:
        if self.opts.all_topics:
            return sorted(self.admin.list_consumer_group_offsets(group_id))
        if self.opts.topic:
            explicit, whole_topics = parse_topic_args(self.opts.topic)
            partitions = list(explicit)
            for topic in whole_topics:
                partitions += self.admin.topic_partitions(topic)
            return list(dict.fromkeys(partitions))
        return []  # --from-file: the file names the partitions

    def prepare_offsets_to_reset(self, group_id: str, partitions: Sequence[TopicPartition],
                                 scenario: ResetScenario,
                                 file_plan: Mapping[str, Mapping[TopicPartition, int]] | None
                                 ) -> dict[TopicPartition, int]:
        from kafka.admin import OffsetSpec

        group_file_plan: Mapping[TopicPartition, int] | None = None
        if scenario.kind == "from-file":
            assert file_plan is not None
            if group_id not in file_plan:
                self.error(f"No reset plan for group {group_id} found")
                return {}
            group_file_plan = file_plan[group_id]
            partitions = sorted(group_file_plan)
        committed: Mapping[TopicPartition, int] = {}
        if scenario.kind in ("shift-by", "to-current"):
            committed = self.admin.list_consumer_group_offsets(group_id)
        need_start = scenario.kind in ("to-offset", "to-earliest", "shift-by", "from-file")
        need_end = scenario.kind != "to-earliest"
        log_start = self.admin.list_offsets(partitions, OffsetSpec.EARLIEST) if need_start else {}
        log_end = self.admin.list_offsets(partitions, OffsetSpec.LATEST) if need_end else {}
        timestamp_offsets = None
        if scenario.kind in ("to-datetime", "by-duration"):
            assert scenario.value is not None
            timestamp_offsets = self.admin.list_offsets(partitions, scenario.value)
        plan, warnings = prepare_offsets_to_reset(
            scenario, partitions, committed=committed, log_start_offsets=log_start, log_end_offsets=log_end,
            timestamp_offsets=timestamp_offsets, file_plan=group_file_plan)
        for warning in warnings:
            logger.warning(warning)
        return plan

    def reset_offsets(self) -> dict[str, dict[TopicPartition, int]]:
        scenario = self.opts.reset_scenario()
        file_plan = None
        if scenario.kind == "from-file":
            assert self.opts.from_file is not None
            try:
                with open(self.opts.from_file, encoding="utf-8") as f:
                    text = f.read()
            except OSError as e:
                raise CommandError(f"Unable to read reset plan {self.opts.from_file}: {e.strerror or e}") from e
            file_plan = parse_reset_plan(text, self.opts.group)
        result: dict[str, dict[TopicPartition, int]] = {}
        for group_id in self.group_ids():
            state = self.admin.describe_consumer_group(group_id).state
            if state not in INACTIVE_STATES:
                self.error(f"Assignments can only be reset if the group '{group_id}' is inactive, but the "
                           f"current state is {state}.")
                result[group_id] = {}
                continue
            partitions = self.partitions_to_reset(group_id)
            plan = self.prepare_offsets_to_reset(group_id, partitions, scenario, file_plan)
            if not self.opts.dry_run_only:
                self.admin.alter_consumer_group_offsets(group_id, plan)
            result[group_id] = plan
        return result

    # ---------------------------------------------------------------- delete

    def delete_groups(self) -> dict[str, int]:
        results = self.admin.delete_consumer_groups(self.group_ids())
        succeeded = [g for g, code in results.items() if code == NONE]
        failed = {g: code for g, code in results.items() if code != NONE}

        def quoted(groups: Sequence[str]) -> str:
            return ", ".join(f"'{g}'" for g in groups)

        if not failed:
            self.out(f"Deletion of requested consumer groups ({quoted(succeeded)}) was successful.")
        else:
            self.error("Deletion of some consumer groups failed:")
            for group, code in failed.items():
                self.err(f"* Group '{group}' could not be deleted due to: {kafka_exception_text(code)}")
            if succeeded:
                self.out("")
                self.out(f"These consumer groups were deleted successfully: {quoted(succeeded)}")
        return results

    def delete_offsets(self) -> None:
        group_id = self.opts.group[0]
        topics = list(self.opts.topic)
        explicit, whole_topics = parse_topic_args(topics)
        results: dict[TopicPartition, str | None] = {}
        partitions = list(explicit)
        for topic in whole_topics:
            try:
                partitions += self.admin.topic_partitions(topic)
            except GroupApiError as e:
                results[TopicPartition(topic, -1)] = error_message_text(e.error_code)
        top_level, partition_codes = NONE, {}
        if partitions:
            top_level, partition_codes = self.admin.delete_consumer_group_offsets(group_id, partitions)
        if top_level == NONE and any(results.values()):
            top_level = UNKNOWN_TOPIC_OR_PARTITION  # Kafka's admin fails the call for a missing topic
        for tp in partitions:
            code = partition_codes.get(tp, top_level)
            results[tp] = error_message_text(code) if code != NONE else None
        if top_level == NONE:
            self.out(f"Request succeed for deleting offsets with topic {', '.join(topics)} group {group_id}")
        elif top_level == INVALID_GROUP_ID:
            self.error(f"'{group_id}' is not valid.")
        elif top_level == GROUP_ID_NOT_FOUND:
            self.error(f"'{group_id}' does not exist.")
        elif top_level == GROUP_AUTHORIZATION_FAILED:
            self.error(f"Access to '{group_id}' is not authorized.")
        elif top_level == NON_EMPTY_GROUP:
            self.error(f"Deleting offsets of a consumer group '{group_id}' is forbidden if the group is not empty.")
        elif top_level in (GROUP_SUBSCRIBED_TO_TOPIC, TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION):
            self.error("Encounter some partition level error, see the follow-up details:")
        else:
            self.error(f"Encounter some unknown error: {kafka_exception_text(top_level)}")
        if any(results.values()):
            self.failed = True
        for line in format_delete_offsets_result(results):
            self.out(line)


def run(opts: ConsumerGroupCommandOptions, service: ConsumerGroupService) -> bool:
    """Carry out the one action; False when an error was reported."""
    try:
        if opts.list:
            service.list_groups()
        elif opts.describe:
            service.describe_groups()
        elif opts.delete:
            service.delete_groups()
        elif opts.reset_offsets:
            plan = service.reset_offsets()
            if opts.export:
                service.out(export_offsets_to_csv(plan, single_group=len(opts.group) == 1))
            else:
                for line in format_offsets_to_reset(plan):
                    service.out(line)
        elif opts.delete_offsets:
            service.delete_offsets()
    finally:
        service.close()
    return not service.failed


NO_EXECUTE_WARNING = (
    "WARN: No action will be performed as the --execute option is missing.In a future major release, the default "
    "behavior of this command will be to prompt the user before executing the reset rather than doing a dry run. "
    "You should add the --dry-run option explicitly if you are scripting this command and want to keep the "
    "current default behavior without prompting.")


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
               help="This tool helps to list all consumer groups, describe a consumer group, delete consumer group "
                    "info, or reset consumer group offsets.")
@click.option("--bootstrap-server", metavar="<server to connect to>", help="REQUIRED: The server(s) to connect to.")
@click.option("--command-config", metavar="<command config property file>",
              help="Property file containing configs to be passed to the admin client (Kafka's client property "
                   "names).")
@click.option("--group", multiple=True, metavar="<consumer group>",
              help="The consumer group we wish to act on (repeatable).")
@click.option("--topic", multiple=True, metavar="<topic>",
              help="The topic whose consumer group information should be deleted or topic whose should be included "
                   "in the reset offset process. In reset-offsets, partitions can be given as topic1:0,1,2. "
                   "Repeatable.")
@click.option("--all-topics", is_flag=True,
              help="Consider all topics assigned to a group in the reset-offsets process.")
@click.option("--list", "list_", is_flag=True, help="List all consumer groups.")
@click.option("--describe", is_flag=True,
              help="Describe consumer group and list offset lag (number of messages not yet processed) related to "
                   "given group.")
@click.option("--all-groups", is_flag=True, help="Apply to all consumer groups.")
@click.option("--delete", is_flag=True,
              help="Pass in groups to delete topic partition offsets and ownership information over the entire "
                   "consumer group. For instance --group g1 --group g2")
@click.option("--timeout", type=int, default=DEFAULT_TIMEOUT_MS, show_default=True, metavar="<timeout (ms)>",
              help="How long (ms) each call may wait for a group coordinator that is loading or moving.")
@click.option("--reset-offsets", is_flag=True,
              help="Reset offsets of consumer group; the group must be inactive. --dry-run (the default) shows the "
                   "plan, --execute commits it. One scenario: --to-datetime, --by-duration, --to-earliest, "
                   "--to-latest, --shift-by, --from-file, --to-current, --to-offset; one scope: --all-topics or "
                   "--topic (not needed with --from-file).")
@click.option("--delete-offsets", is_flag=True,
              help="Delete offsets of consumer group. Supports one consumer group at the time, and multiple topics.")
@click.option("--dry-run", is_flag=True, help="Only show results without executing changes on Consumer Groups.")
@click.option("--execute", is_flag=True, help="Execute operation. Supported operations: reset-offsets.")
@click.option("--export", is_flag=True, help="Export operation execution to a CSV file (on stdout).")
@click.option("--to-offset", type=int, metavar="<offset>", help="Reset offsets to a specific offset.")
@click.option("--from-file", metavar="<path to CSV file>", help="Reset offsets to values defined in CSV file.")
@click.option("--to-datetime", metavar="<datetime>",
              help="Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'")
@click.option("--by-duration", metavar="<duration>",
              help="Reset offsets to offset by duration from current timestamp. Format: 'PnDTnHnMnS'")
@click.option("--to-earliest", is_flag=True, help="Reset offsets to earliest offset.")
@click.option("--to-latest", is_flag=True, help="Reset offsets to latest offset.")
@click.option("--to-current", is_flag=True, help="Reset offsets to current offset.")
@click.option("--shift-by", type=int, metavar="<number-of-offsets>",
              help="Reset offsets shifting current offset by 'n', where 'n' can be positive or negative.")
@click.option("--members", is_flag=True, help="Describe members of the group (with --describe).")
@click.option("--verbose", is_flag=True,
              help="Provide additional information, if any, when describing the group (the assignment of each "
                   "member with --members).")
@click.option("--offsets", is_flag=True,
              help="Describe the group and list all topic partitions in the group along with their offset lag "
                   "(the default of --describe).")
@click.option("--state", is_flag=False, flag_value="", default=None, metavar="[states]",
              help="With --describe, the state of the group. With --list, the state of all groups, or only the "
                   "groups in the given comma-separated states (e.g. stable,empty).")
@handle_errors("Error: Executing consumer group command failed due to ")
def main(list_: bool, **kwargs: Any) -> None:
    opts = ConsumerGroupCommandOptions(list=list_, **kwargs)
    opts.check_args()
    assert opts.bootstrap_server is not None
    validate_bootstrap_servers(opts.bootstrap_server)
    if opts.list and opts.state:
        consumer_group_states_from_string(opts.state)
    if opts.reset_offsets:
        opts.reset_scenario()  # refuse a bad datetime or duration before connecting
        if not opts.dry_run and not opts.execute:
            _err(NO_EXECUTE_WARNING)
    command_config = load_props(opts.command_config) if opts.command_config else {}
    admin = ConsumerGroupAdmin.create(opts.bootstrap_server, command_config, opts.timeout)
    if not run(opts, ConsumerGroupService(opts, admin)):
        raise click.exceptions.Exit(1)


if __name__ == "__main__":
    run_tool(main, "kafka-consumer-groups.sh")
