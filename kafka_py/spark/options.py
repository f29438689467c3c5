"""Options of the ``kafka-log`` Spark data source, parsed and checked.

No Kafka counterpart: the option names and the JSON offsets form are those of Spark's own
Kafka source (KafkaSourceProvider.scala and JsonUtils.scala of spark-sql-kafka-0-10), so a job
moves between reading a broker and reading its files by changing the format and a path.

================== ======================================================================
option             meaning
================== ======================================================================
path / paths       one log dir, or several (``load([...])``, a JSON list or a comma list)
readFrom           ``logDirs`` (the default when a path is given) or ``brokers`` (the default
                   without one: Fetch requests to each partition's leader, through
                   ``kafka.bootstrap.servers``; kafka_py/spark/broker_reader.py)
subscribe          topics, comma separated
subscribePattern   a Java-style regular expression that whole topic names match
assign             JSON ``{"topicA": [0, 1]}``: exact partitions
startingOffsets    ``earliest`` (default) or JSON ``{"t": {"0": 23, "1": -2}}``
endingOffsets      ``latest`` (default) or JSON (exclusive; -1 = latest)
includeHeaders     adds the ``headers`` column (default false)
committedOnly      stop at the high watermark of replication-offset-checkpoint (default false)
kafka.isolation.level  ``read_committed``: stop at the last stable offset and drop the records
                   of aborted transactions (kafka_py/spark/transactions.py); default
                   ``read_uncommitted``, as a consumer's
failOnDataLoss     fail on corrupt batches, deleted segments, offsets gone (default true)
maxBytesPerPartition  split segments into Spark partitions of at most this many bytes
minPartitions      at least this many Spark partitions, splitting large segments further
startingOffsetsByTimestamp, endingOffsetsByTimestamp, startingTimestamp, endingTimestamp,
startingOffsetsByTimestampStrategy
                   offsets by timestamp, as Spark's Kafka source has them (brokers only:
                   answered by ListOffsets)
================== ======================================================================

At most one of subscribe, subscribePattern and assign; with none every topic is read except
the internal ones (``__consumer_offsets``, ``__transaction_state``), which are read only when
named in subscribe or assign, as a consumer's pattern subscription leaves them out.

A streaming read (``readStream``) takes the same options except endingOffsets, and those of
Spark's Kafka source for micro-batches:

======================== ================================================================
maxOffsetsPerTrigger     at most this many offsets per micro-batch, shared over partitions
minOffsetsPerTrigger     wait for at least this many new offsets before a micro-batch ...
maxTriggerDelay          ... but no longer than this (default 15m)
kafka.bootstrap.servers  ask the cluster for high watermarks and leaders (ListOffsets)
kafka.*                  passed on to that admin client
======================== ================================================================

A name that is none of these is an error that names it, so a typo is not silently ignored.
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Union

from kafka_py.clients.common.topic_partition import TopicPartition

EARLIEST = "earliest"
LATEST = "latest"
#: The JSON offsets form's stand-ins for the two ends of a partition.
EARLIEST_OFFSET = -2
LATEST_OFFSET = -1

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})

DEFAULT_MAX_BYTES_PER_PARTITION = 128 * 1024 * 1024
DEFAULT_MAX_TRIGGER_DELAY_MS = 15 * 60 * 1000

#: The option name prefix of settings passed on to a Kafka client (Spark's "kafka." prefix).
KAFKA_PREFIX = "kafka."
BOOTSTRAP_SERVERS = KAFKA_PREFIX + "bootstrap.servers"
READ_COMMITTED = "read_committed"
READ_UNCOMMITTED = "read_uncommitted"

_COMMON_OPTIONS = ("path", "paths", "subscribe", "subscribePattern", "assign", "startingOffsets",
                   "includeHeaders", "failOnDataLoss", "maxBytesPerPartition", "minPartitions",
                   "committedOnly", "readFrom", "startingOffsetsByTimestamp", "startingTimestamp",
                   "startingOffsetsByTimestampStrategy")
BATCH_OPTIONS = frozenset(_COMMON_OPTIONS + ("endingOffsets", "endingOffsetsByTimestamp", "endingTimestamp"))
STREAM_OPTIONS = frozenset(_COMMON_OPTIONS + ("maxOffsetsPerTrigger", "minOffsetsPerTrigger",
                                              "maxTriggerDelay"))
_ONLY_FOR = {
    **{name.lower(): "it is for streaming reads (readStream) only" for name in STREAM_OPTIONS - BATCH_OPTIONS},
    **{name.lower(): "it is for batch reads only; a stream reads on until it is stopped"
       for name in BATCH_OPTIONS - STREAM_OPTIONS},
}
#: Options of Spark's Kafka source that this source does not offer, and why.
_NOT_OFFERED = {
    "kafkaconsumer.polltimeoutms": "the source has no consumer to poll; kafka.default.api.timeout.ms bounds "
                                   "how long a read through the brokers retries",
    "fetchoffset.numretries": "kafka.default.api.timeout.ms bounds how long offsets are asked for",
    "fetchoffset.retryintervalms": "kafka.retry.backoff.ms is the wait between retries",
    "groupidprefix": "the source joins no consumer group",
}
_CANONICAL = {name.lower(): name for name in BATCH_OPTIONS | STREAM_OPTIONS | {
    "kafkaConsumer.pollTimeoutMs", "fetchOffset.numRetries", "fetchOffset.retryIntervalMs", "groupIdPrefix"}}
#: readFrom's values: the log dirs' segment files, or Fetch requests to the brokers.
LOG_DIRS = "logDirs"
BROKERS = "brokers"
#: Options that only one of the two read paths has.
_LOG_DIRS_ONLY = ("maxBytesPerPartition",)
_BROKERS_ONLY = ("startingOffsetsByTimestamp", "endingOffsetsByTimestamp", "startingTimestamp", "endingTimestamp",
                 "startingOffsetsByTimestampStrategy")

OffsetSpec = Union[str, dict]  # EARLIEST, LATEST, or {TopicPartition: offset}


def resolve_offset(spec: OffsetSpec, tp: Any, earliest: int, latest: int, default: str) -> int:
    """The offset ``spec`` gives ``tp`` in a log from ``earliest`` to ``latest``: a JSON spec's
    own (-2 earliest, -1 latest), ``default`` for a partition it does not name."""
    if isinstance(spec, dict):
        value = spec.get(tp, EARLIEST_OFFSET if default == EARLIEST else LATEST_OFFSET)
    else:
        value = EARLIEST_OFFSET if spec == EARLIEST else LATEST_OFFSET
    if value == EARLIEST_OFFSET:
        return earliest
    if value == LATEST_OFFSET:
        return latest
    return value


class KafkaLogOptionsException(ValueError):
    """An option is missing, malformed or not allowed with another."""


def parse_bool(options: Mapping[str, str], name: str, default: bool) -> bool:
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


def check_option_names(options: Mapping[str, str], known: frozenset[str], what: str,
                       allow_kafka_prefix: bool = True) -> None:
    """Refuse every option name that is not in ``known`` (case-insensitively, as Spark's option
    maps are) nor, when ``allow_kafka_prefix``, a ``kafka.`` client setting."""
    lowered = {name.lower(): name for name in known}
    for name in options:
        key = str(name).lower()
        if key in lowered or (allow_kafka_prefix and key.startswith(KAFKA_PREFIX) and len(key) > len(KAFKA_PREFIX)):
            continue
        # Spark lower-cases the names it hands a data source: name the option as documented.
        shown = _CANONICAL.get(key, name)
        if key in _ONLY_FOR:
            raise KafkaLogOptionsException(f"Option {shown} is not for {what}: {_ONLY_FOR[key]}")
        if key in _NOT_OFFERED:
            raise KafkaLogOptionsException(f"Option {shown} is not supported by {what}: {_NOT_OFFERED[key]}")
        close = difflib.get_close_matches(key, list(lowered), n=1, cutoff=0.75)
        hint = f" (did you mean {lowered[close[0]]}?)" if close else ""
        raise KafkaLogOptionsException(
            f"Unknown option {name} for {what}{hint}; its options are {', '.join(sorted(known))}"
            + (" and kafka.* client settings" if allow_kafka_prefix else ""))


def kafka_params(options: Mapping[str, str]) -> dict[str, str]:
    """The ``kafka.``-prefixed options, without the prefix (Kafka client settings)."""
    return {str(k)[len(KAFKA_PREFIX):]: str(v) for k, v in options.items()
            if str(k).lower().startswith(KAFKA_PREFIX) and len(str(k)) > len(KAFKA_PREFIX)}


_DURATION = re.compile(r"^\s*(\d+)\s*(us|ms|s|m|min|h|d)?\s*$", re.I)
_DURATION_MS = {"us": 0.001, "ms": 1, None: 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000,
                "d": 86_400_000}


def parse_duration_ms(raw: str, name: str) -> int:
    """A Spark time string (``500ms``, ``10s``, ``15m``, ``1h``; a bare number is ms) in ms."""
    match = _DURATION.match(str(raw))
    if match is None:
        raise KafkaLogOptionsException(
            f"Option {name} must be a duration such as 500ms, 10s, 15m or 1h, not {raw!r}")
    unit = match.group(2).lower() if match.group(2) else None
    return int(int(match.group(1)) * _DURATION_MS[unit])


def _get(options: Mapping[str, str], name: str) -> Optional[str]:
    # Spark's option maps are case-insensitive; a plain dict given by a caller may not be.
    if name in options:
        return options[name]
    lowered = name.lower()
    for key, value in options.items():
        if key.lower() == lowered:
            return value
    return None


def parse_paths(options: Mapping[str, str], required: bool = True) -> list[str]:
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
    if not paths and required:
        raise KafkaLogOptionsException(
            "No log dir given: use load(path), load([path, ...]) or option('path', ...) with a "
            "broker's log.dirs entry, or option('kafka.bootstrap.servers', ...) to read through the brokers")
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


def parse_timestamps(raw: Optional[str], name: str) -> Optional[dict[TopicPartition, int]]:
    """The JSON form ``{"topic": {"0": 1700000000000}}`` of startingOffsetsByTimestamp and
    endingOffsetsByTimestamp: epoch milliseconds per partition."""
    if raw is None or str(raw).strip() == "":
        return None
    text = str(raw).strip()
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        raise KafkaLogOptionsException(
            f'Option {name} must be JSON such as {{"topicA":{{"0":1700000000000}}}}, not {text!r}')
    timestamps: dict[TopicPartition, int] = {}
    for topic, partitions in parsed.items():
        if not isinstance(partitions, dict):
            raise KafkaLogOptionsException(
                f"Option {name}: topic {topic!r} must map partition numbers to timestamps, not {partitions!r}")
        for partition, ts in partitions.items():
            try:
                p = int(partition)
            except (TypeError, ValueError):
                raise KafkaLogOptionsException(
                    f"Option {name}: {partition!r} of topic {topic!r} is not a partition number") from None
            if not isinstance(ts, int) or isinstance(ts, bool) or ts < 0:
                raise KafkaLogOptionsException(
                    f"Option {name}: timestamp {ts!r} of {topic}-{p} must be epoch milliseconds (an integer >= 0)")
            timestamps[TopicPartition(topic, p)] = ts
    return timestamps


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
    #: Streaming only: admission control of each micro-batch.
    max_offsets_per_trigger: Optional[int] = None
    min_offsets_per_trigger: Optional[int] = None
    max_trigger_delay_ms: int = DEFAULT_MAX_TRIGGER_DELAY_MS
    #: kafka.* settings without the prefix; ``bootstrap.servers`` among them makes the
    #: planner ask the cluster for high watermarks and leaders.
    kafka: tuple[tuple[str, str], ...] = ()
    #: ``kafka.isolation.level=read_committed``: read to the last stable offset, without the
    #: records of aborted transactions.
    read_committed: bool = False
    #: LOG_DIRS or BROKERS (``readFrom``)
    read_from: str = LOG_DIRS
    #: Offsets by timestamp (brokers only): one timestamp for every partition
    #: (startingTimestamp / endingTimestamp, which win) or per partition
    #: (startingOffsetsByTimestamp / endingOffsetsByTimestamp).
    starting_timestamps: Union[None, int, dict] = None
    ending_timestamps: Union[None, int, dict] = None
    #: What a starting timestamp that no record reaches gives: "error" (Spark's default) or "latest".
    starting_timestamp_strategy: str = "error"

    @property
    def through_brokers(self) -> bool:
        return self.read_from == BROKERS

    @property
    def bootstrap_servers(self) -> Optional[str]:
        return dict(self.kafka).get("bootstrap.servers")

    @classmethod
    def parse(cls, options: Mapping[str, str], streaming: bool = False) -> "KafkaLogOptions":
        what = "the kafka-log streaming source" if streaming else "the kafka-log source"
        check_option_names(options, STREAM_OPTIONS if streaming else BATCH_OPTIONS, what)
        paths = parse_paths(options, required=False)
        bootstrap = _get(options, BOOTSTRAP_SERVERS)
        has_bootstrap = bootstrap is not None and str(bootstrap).strip() != ""
        read_from_raw = _get(options, "readFrom")
        if read_from_raw is None or str(read_from_raw).strip() == "":
            read_from = LOG_DIRS if paths or not has_bootstrap else BROKERS
        else:
            by_name = {LOG_DIRS.lower(): LOG_DIRS, BROKERS: BROKERS}
            read_from = by_name.get(str(read_from_raw).strip().lower())
            if read_from is None:
                raise KafkaLogOptionsException(
                    f"Option readFrom is {read_from_raw!r}; it is {LOG_DIRS} (segment files by path) or {BROKERS} "
                    f"(Fetch requests through kafka.bootstrap.servers)")
        if read_from == LOG_DIRS:
            paths = parse_paths(options, required=True)
            for name in _BROKERS_ONLY:
                if _get(options, name) is not None:
                    raise KafkaLogOptionsException(
                        f"Option {name} needs a read through the brokers (answered by ListOffsets): give "
                        f"kafka.bootstrap.servers and no path, or readFrom=brokers")
        else:
            if not has_bootstrap:
                raise KafkaLogOptionsException(
                    f"Option {BOOTSTRAP_SERVERS} must be set to read through the brokers (readFrom={BROKERS})")
            for name in _LOG_DIRS_ONLY:
                if _get(options, name) is not None:
                    raise KafkaLogOptionsException(
                        f"Option {name} is for reads of log dirs; a read through the brokers makes one Spark "
                        f"partition per topic-partition, or more with minPartitions")
            if _get(options, "committedOnly") is not None and not parse_bool(options, "committedOnly", True):
                raise KafkaLogOptionsException(
                    "Option committedOnly can't be false for a read through the brokers: a broker serves "
                    "consumers only records below the high watermark")
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
        committed_only = parse_bool(options, "committedOnly", streaming or read_from == BROKERS)
        if streaming:
            ending: OffsetSpec = LATEST
            if not committed_only:
                raise KafkaLogOptionsException(
                    "Option committedOnly can't be false for a streaming read: a stream reads only "
                    "records below the high watermark, which no leader change can truncate")
        else:
            ending = parse_offsets(_get(options, "endingOffsets"), "endingOffsets", LATEST)
            # A batch read needs both ends fixed before it starts, as in Spark's Kafka source.
            if starting == LATEST:
                raise KafkaLogOptionsException("startingOffsets can't be latest for a batch read")
            if ending == EARLIEST:
                raise KafkaLogOptionsException("endingOffsets can't be earliest for a batch read")
            if isinstance(starting, dict):
                for tp, offset in starting.items():
                    if offset == LATEST_OFFSET:
                        raise KafkaLogOptionsException(
                            f"startingOffsets for {tp} can't be latest (-1) for a batch read")
            if isinstance(ending, dict):
                for tp, offset in ending.items():
                    if offset == EARLIEST_OFFSET:
                        raise KafkaLogOptionsException(
                            f"endingOffsets for {tp} can't be earliest (-2) for a batch read")
        max_per_trigger = _int(options, "maxOffsetsPerTrigger", None, 1)
        min_per_trigger = _int(options, "minOffsetsPerTrigger", None, 1)
        if max_per_trigger is not None and min_per_trigger is not None and min_per_trigger > max_per_trigger:
            raise KafkaLogOptionsException(
                f"Option minOffsetsPerTrigger ({min_per_trigger}) can't be greater than "
                f"maxOffsetsPerTrigger ({max_per_trigger})")
        delay_raw = _get(options, "maxTriggerDelay")
        if delay_raw is not None and min_per_trigger is None:
            raise KafkaLogOptionsException("Option maxTriggerDelay goes with minOffsetsPerTrigger, which is not set")
        delay_ms = DEFAULT_MAX_TRIGGER_DELAY_MS if delay_raw is None else parse_duration_ms(delay_raw, "maxTriggerDelay")
        kafka = kafka_params(options)
        if "bootstrap.servers" in kafka and not kafka["bootstrap.servers"].strip():
            raise KafkaLogOptionsException(f"Option {BOOTSTRAP_SERVERS} is empty")
        # a consumer setting, read here rather than handed to the admin client
        isolation = kafka.pop("isolation.level", READ_UNCOMMITTED).strip().lower()
        if isolation not in (READ_COMMITTED, READ_UNCOMMITTED):
            raise KafkaLogOptionsException(
                f"Option {KAFKA_PREFIX}isolation.level is {isolation!r}; it is {READ_COMMITTED} or {READ_UNCOMMITTED}")
        starting_ts: Union[None, int, dict] = parse_timestamps(
            _get(options, "startingOffsetsByTimestamp"), "startingOffsetsByTimestamp")
        if _get(options, "startingTimestamp") is not None:
            starting_ts = _int(options, "startingTimestamp", None, 0)
        ending_ts: Union[None, int, dict] = None
        if not streaming:
            ending_ts = parse_timestamps(_get(options, "endingOffsetsByTimestamp"), "endingOffsetsByTimestamp")
            if _get(options, "endingTimestamp") is not None:
                ending_ts = _int(options, "endingTimestamp", None, 0)
        strategy = str(_get(options, "startingOffsetsByTimestampStrategy") or "error").strip().lower()
        if strategy not in ("error", "latest"):
            raise KafkaLogOptionsException(
                f"Option startingOffsetsByTimestampStrategy is {strategy!r}; it is error or latest")
        return cls(
            read_from=read_from,
            starting_timestamps=starting_ts,
            ending_timestamps=ending_ts,
            starting_timestamp_strategy=strategy,
            paths=tuple(paths),
            subscription=subscription,
            starting_offsets=starting,
            ending_offsets=ending,
            include_headers=parse_bool(options, "includeHeaders", False),
            committed_only=committed_only,
            fail_on_data_loss=parse_bool(options, "failOnDataLoss", True),
            max_bytes_per_partition=_int(options, "maxBytesPerPartition", DEFAULT_MAX_BYTES_PER_PARTITION, 1024),
            min_partitions=_int(options, "minPartitions", None, 1),
            max_offsets_per_trigger=max_per_trigger,
            min_offsets_per_trigger=min_per_trigger,
            max_trigger_delay_ms=delay_ms,
            kafka=tuple(sorted(kafka.items())),
            read_committed=isolation == READ_COMMITTED,
        )


def offsets_json(offsets: Mapping[TopicPartition, int]) -> str:
    """The JSON offsets form of ``offsets`` (for startingOffsets / endingOffsets)."""
    nested: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        nested.setdefault(tp.topic, {})[str(tp.partition)] = offsets[tp]
    return json.dumps(nested, separators=(",", ":"))
