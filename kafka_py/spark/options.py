"""Options of the ``kafka-log`` Spark data source, parsed and checked.

No Kafka counterpart: the option names and the JSON offsets form are those of Spark's own
Kafka source (KafkaSourceProvider.scala and JsonUtils.scala of spark-sql-kafka-0-10), so a job
moves between reading a broker and reading its files by changing the format and a path.

================== ======================================================================
option             meaning
================== ======================================================================
path / paths       one log dir, or several (``load([...])``, a JSON list or a comma list)
subscribe          topics, comma separated
subscribePattern   a Java-style regular expression that whole topic names match
assign             JSON ``{"topicA": [0, 1]}``: exact partitions
startingOffsets    ``earliest`` (default) or JSON ``{"t": {"0": 23, "1": -2}}``
endingOffsets      ``latest`` (default) or JSON (exclusive; -1 = latest)
includeHeaders     adds the ``headers`` column (default false)
committedOnly      stop at the high watermark of replication-offset-checkpoint (default false)
failOnDataLoss     fail on corrupt batches, deleted segments, offsets gone (default true)
maxBytesPerPartition  split segments into Spark partitions of at most this many bytes
minPartitions      at least this many Spark partitions, splitting large segments further
================== ======================================================================

At most one of subscribe, subscribePattern and assign; with none every topic is read except
the internal ones (``__consumer_offsets``, ``__transaction_state``), which are read only when
named in subscribe or assign, as a consumer's pattern subscription leaves them out.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Mapping, Optional, Union

from kafka_py.common.topic_partition import TopicPartition

EARLIEST = "earliest"
LATEST = "latest"
#: The JSON offsets form's stand-ins for the two ends of a partition.
EARLIEST_OFFSET = -2
LATEST_OFFSET = -1

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})

DEFAULT_MAX_BYTES_PER_PARTITION = 128 * 1024 * 1024

OffsetSpec = Union[str, dict]  # EARLIEST, LATEST, or {TopicPartition: offset}


class KafkaLogOptionsException(ValueError):
    """An option is missing, malformed or not allowed with another."""


def _bool(options: Mapping[str, str], name: str, default: bool) -> bool:
    raw = _get(options, name)
    if raw is None:
        return default
    value = str(raw).strip().lower()
    if value in ("true", "false"):
        return value == "true"
    raise KafkaLogOptionsException(f"Option {name} must be true or false, not {raw!r}")


def _int(options: Mapping[str, str], name: str, default: Optional[int], minimum: int) -> Optional[int]:
    raw = _get(options, name)
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise KafkaLogOptionsException(f"Option {name} must be an integer, not {raw!r}") from None
    if value < minimum:
        raise KafkaLogOptionsException(f"Option {name} must be at least {minimum}, not {value}")
    return value


def _get(options: Mapping[str, str], name: str) -> Optional[str]:
    # Spark's option maps are case-insensitive; a plain dict given by a caller may not be.
    if name in options:
        return options[name]
    lowered = name.lower()
    for key, value in options.items():
        if key.lower() == lowered:
            return value
    return None


def parse_paths(options: Mapping[str, str]) -> list[str]:
    paths: list[str] = []
    for name in ("path", "paths"):
        raw = _get(options, name)
        if raw is None or str(raw).strip() == "":
            continue
        text = str(raw).strip()
        if text.startswith("["):
            try:
                items = json.loads(text)
            except json.JSONDecodeError as e:
                raise KafkaLogOptionsException(f"Option {name} is not a JSON list of paths: {e}") from None
            if not isinstance(items, list) or not all(isinstance(p, str) for p in items):
                raise KafkaLogOptionsException(f"Option {name} must be a JSON list of strings")
        else:
            items = [p.strip() for p in text.split(",")] if name == "paths" else [text]
        paths.extend(p for p in items if p)
    if not paths:
        raise KafkaLogOptionsException(
            "No log dir given: use load(path), load([path, ...]) or option('path', ...) with a "
            "broker's log.dirs entry")
    return list(dict.fromkeys(paths))


def parse_offsets(raw: Optional[str], name: str, default: str) -> OffsetSpec:
    """``earliest`` / ``latest`` or the JSON form ``{"topic": {"0": 23, "1": -2}}``."""
    if raw is None or str(raw).strip() == "":
        return default
    text = str(raw).strip()
    if text.lower() in (EARLIEST, LATEST):
        return text.lower()
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        raise KafkaLogOptionsException(
            f"Option {name} must be earliest, latest or JSON such as "
            f'{{"topicA":{{"0":23,"1":-2}}}}, not {text!r}') from None
    if not isinstance(parsed, dict):
        raise KafkaLogOptionsException(f"Option {name} JSON must be an object of topics, not {text!r}")
    offsets: dict[TopicPartition, int] = {}
    for topic, partitions in parsed.items():
        if not isinstance(partitions, dict):
            raise KafkaLogOptionsException(
                f"Option {name}: topic {topic!r} must map partition numbers to offsets, not {partitions!r}")
        for partition, offset in partitions.items():
            try:
                p = int(partition)
            except (TypeError, ValueError):
                raise KafkaLogOptionsException(
                    f"Option {name}: {partition!r} of topic {topic!r} is not a partition number") from None
            if not isinstance(offset, int) or isinstance(offset, bool) or offset < EARLIEST_OFFSET:
                raise KafkaLogOptionsException(
                    f"Option {name}: offset {offset!r} of {topic}-{p} must be an integer >= -2 "
                    f"(-2 earliest, -1 latest)")
            offsets[TopicPartition(topic, p)] = offset
    return offsets


def _parse_assign(raw: str) -> frozenset[TopicPartition]:
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict) or not all(
            isinstance(v, list) and all(isinstance(p, int) and not isinstance(p, bool) for p in v)
            for v in parsed.values()):
        raise KafkaLogOptionsException(f'Option assign must be JSON such as {{"topicA":[0,1]}}, not {raw!r}')
    return frozenset(TopicPartition(t, p) for t, ps in parsed.items() for p in ps)


@dataclass(frozen=True)
class Subscription:
    """Which partitions to read."""

    topics: Optional[frozenset[str]] = None
    pattern: Optional[str] = None
    assigned: Optional[frozenset[TopicPartition]] = None
    _compiled: Optional[re.Pattern] = field(default=None, compare=False, repr=False)

    @classmethod
    def create(cls, topics=None, pattern: Optional[str] = None, assigned=None) -> "Subscription":
        compiled = None
        if pattern is not None:
            try:
                compiled = re.compile(pattern)
            except re.error as e:
                raise KafkaLogOptionsException(f"Option subscribePattern {pattern!r} is not a regular expression: {e}") from None
        return cls(frozenset(topics) if topics is not None else None, pattern,
                   frozenset(assigned) if assigned is not None else None, compiled)

    def includes(self, tp: TopicPartition) -> bool:
        if self.assigned is not None:
            return tp in self.assigned
        if self.topics is not None:
            return tp.topic in self.topics
        if tp.topic in INTERNAL_TOPICS:
            return False
        if self._compiled is not None:
            # Kafka matches a pattern subscription against the whole topic name.
            return self._compiled.fullmatch(tp.topic) is not None
        return True

    def describe(self) -> str:
        if self.assigned is not None:
            return "assign " + ",".join(sorted(str(tp) for tp in self.assigned))
        if self.topics is not None:
            return "subscribe " + ",".join(sorted(self.topics))
        if self.pattern is not None:
            return f"subscribePattern {self.pattern}"
        return "every topic"


@dataclass(frozen=True)
class KafkaLogOptions:
    paths: tuple[str, ...]
    subscription: Subscription = Subscription()
    starting_offsets: OffsetSpec = EARLIEST
    ending_offsets: OffsetSpec = LATEST
    include_headers: bool = False
    committed_only: bool = False
    fail_on_data_loss: bool = True
    max_bytes_per_partition: int = DEFAULT_MAX_BYTES_PER_PARTITION
    min_partitions: Optional[int] = None

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> "KafkaLogOptions":
        paths = parse_paths(options)
        given = {name: _get(options, name) for name in ("subscribe", "subscribePattern", "assign")}
        given = {k: v for k, v in given.items() if v is not None and str(v).strip() != ""}
        if len(given) > 1:
            raise KafkaLogOptionsException(
                f"Only one of subscribe, subscribePattern and assign may be given, not {sorted(given)}")
        if "subscribe" in given:
            topics = [t.strip() for t in str(given["subscribe"]).split(",") if t.strip()]
            if not topics:
                raise KafkaLogOptionsException("Option subscribe names no topic")
            subscription = Subscription.create(topics=topics)
        elif "subscribePattern" in given:
            subscription = Subscription.create(pattern=str(given["subscribePattern"]))
        elif "assign" in given:
            subscription = Subscription.create(assigned=_parse_assign(str(given["assign"])))
        else:
            subscription = Subscription.create()
        starting = parse_offsets(_get(options, "startingOffsets"), "startingOffsets", EARLIEST)
        ending = parse_offsets(_get(options, "endingOffsets"), "endingOffsets", LATEST)
        # A batch read needs both ends fixed before it starts, as in Spark's Kafka source.
        if starting == LATEST:
            raise KafkaLogOptionsException("startingOffsets can't be latest for a batch read")
        if ending == EARLIEST:
            raise KafkaLogOptionsException("endingOffsets can't be earliest for a batch read")
        if isinstance(starting, dict):
            for tp, offset in starting.items():
                if offset == LATEST_OFFSET:
                    raise KafkaLogOptionsException(f"startingOffsets for {tp} can't be latest (-1) for a batch read")
        if isinstance(ending, dict):
            for tp, offset in ending.items():
                if offset == EARLIEST_OFFSET:
                    raise KafkaLogOptionsException(f"endingOffsets for {tp} can't be earliest (-2) for a batch read")
        return cls(
            paths=tuple(paths),
            subscription=subscription,
            starting_offsets=starting,
            ending_offsets=ending,
            include_headers=_bool(options, "includeHeaders", False),
            committed_only=_bool(options, "committedOnly", False),
            fail_on_data_loss=_bool(options, "failOnDataLoss", True),
            max_bytes_per_partition=_int(options, "maxBytesPerPartition", DEFAULT_MAX_BYTES_PER_PARTITION, 1024),
            min_partitions=_int(options, "minPartitions", None, 1),
        )


def offsets_json(offsets: Mapping[TopicPartition, int]) -> str:
    """The JSON offsets form of ``offsets`` (for startingOffsets / endingOffsets)."""
    nested: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        nested.setdefault(tp.topic, {})[str(tp.partition)] = offsets[tp]
    return json.dumps(nested, separators=(",", ":"))
