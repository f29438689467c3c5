"""Port of core/src/main/scala/kafka/zk/ZkData.scala: every znode path Kafka 2.8.2 uses and the
bytes it stores there.

Each ``...ZNode`` class has Kafka's object name, ``path`` (a property-less static method, as in
Kafka) and, where the znode holds data, ``encode`` / ``decode``. The JSON is Kafka's: compact,
UTF-8, and with the keys in the order a Kafka 2.8.2 broker (built with Scala 2.13, the default
build) writes them. Kafka serialises Scala and Java hash maps with Jackson, so the order is the
maps' iteration order; the small ``_scala_*`` / ``_java_*`` helpers below reproduce those orders,
so a znode written here is byte-identical to one written by Kafka (timestamps aside) and a
``zookeeper-shell get`` of either looks the same. Readers never depend on key order.

Also here, because no other kafka-py module owns them yet:
- ReplicaAssignment (core/.../kafka/controller/ControllerContext.scala) and
  TopicIdReplicaAssignment (nested in ZkData's TopicZNode);
- ConfigType and ConfigEntityName (core/.../kafka/server/DynamicConfigManager.scala);
- Kafka's base64 UUID text form (clients/.../common/Uuid.java, CoreUtils.generateUuidAsBase64),
  used for topic ids and the cluster id.
"""
from __future__ import annotations

import base64
import enum
import functools
import logging
import time as _time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Mapping

from kafka_py.core.api.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_py.core.cluster.broker import (
    Broker,
    EndPoint,
    FinalizedVersionRange,
    ListenerName,
    SecurityProtocol,
    SupportedVersionRange,
)
from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.security.authorizer import acl_entry
from kafka_py.core.security.authorizer.acl import PatternType, ResourcePattern, ResourceType
from kafka_py.core.utils.json import encode_as_bytes, parse_bytes, try_parse_bytes
from kafka_py.clients.common.utils.utils import to_int32

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------
# Reading JSON the way kafka.utils.Json (Jackson) refuses it (the codec is kafka_py/core/utils/json.py)
# ---------------------------------------------------------------------------------------------

def _json_decoder(decode: Callable[..., Any]) -> Callable[..., Any]:
    """A znode decoder whose malformed input raises ValueError, as Kafka's Json refuses it.

    JSON that parses but lacks a field or holds one of the wrong type fails deep in a
    decoder (KeyError, TypeError, AttributeError, IndexError); Kafka's readers throw a
    JsonMappingException or a ClassCastException there. The caller gets one exception type
    for every znode that cannot be read, naming the decoder and the fault."""

    @functools.wraps(decode)
    def decoder(*args: Any) -> Any:
        try:
            return decode(*args)
        except (KeyError, TypeError, AttributeError, IndexError) as e:
            raise ValueError(f"{decode.__qualname__}: malformed znode data ({type(e).__name__}: {e})") from e

    return decoder


@functools.lru_cache(maxsize=65536)
def _java_string_hash(s: str) -> int:
    """java.lang.String.hashCode (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    units = s.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return to_int32(h)


def _scala_table_size_for(capacity: int) -> int:
    return min((1 << (max(capacity - 1, 4).bit_length() - 1)) * 2, 1 << 30)


def _scala_mutable_hash_map(items: Iterable[tuple[str, Any]], initial_entries: int = 0) -> dict[str, Any]:
    """Iteration order of a Scala 2.13 ``mutable.HashMap`` with String keys.

    ``initial_entries`` is the number of pairs the map was built from (``mutable.Map(a, b, ...)``
    sizes its table from that count; ``mutable.Map()`` starts at 16 buckets); later pairs were
    added with ``+=``. Buckets are visited in index order and each bucket is kept sorted by hash.
    """
    items = list(items)
    if initial_entries > 0:
        table_length = _scala_table_size_for(int((initial_entries + 1) / 0.75))
    else:
        table_length = _scala_table_size_for(16)
    seen: set[str] = set()
    for key, _ in items:
        if key in seen:
            continue
        # The table doubles before an insert that would reach the 0.75 load threshold.
        if len(seen) + 1 >= int(table_length * 0.75):
            table_length *= 2
        seen.add(key)

    def position(pair: tuple[str, Any]) -> tuple[int, int]:
        h = _java_string_hash(pair[0])
        improved = to_int32(h ^ ((h & 0xFFFFFFFF) >> 16))
        return improved & (table_length - 1), improved

    return dict(sorted(dict(items).items(), key=position))


def _scala_improve(hcode: int) -> int:
    h = to_int32(hcode + ~to_int32(hcode << 9))
    h = to_int32(h ^ ((h & 0xFFFFFFFF) >> 14))
    h = to_int32(h + to_int32(h << 4))
    return to_int32(h ^ ((h & 0xFFFFFFFF) >> 10))


def _scala_immutable_map(items: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Iteration order of a Scala 2.13 immutable ``Map(...)`` with String keys.

    Up to four entries it is a Map1..Map4 (insertion order); beyond that a CHAMP trie whose
    order follows the improved hash five bits at a time, entries of a node before its sub-nodes.
    """
    pairs = dict(items)
    if len(pairs) <= 4:
        return pairs
    return {key: pairs[key] for key in _scala_immutable_map_order(tuple(pairs))}


@functools.lru_cache(maxsize=256)
def _scala_immutable_map_order(keys: tuple[str, ...]) -> tuple[str, ...]:
    # Depends on the keys alone, and the same few key sets (a partition state's, a broker
    # registration's) are encoded thousands of times.
    hashes = {key: _scala_improve(_java_string_hash(key)) & 0xFFFFFFFF for key in keys}

    def order(keys: list[str], shift: int) -> list[str]:
        if shift >= 32:
            return keys
        buckets: dict[int, list[str]] = {}
        for key in keys:
            buckets.setdefault((hashes[key] >> shift) & 31, []).append(key)
        payload = [ks[0] for _, ks in sorted(buckets.items()) if len(ks) == 1]
        nested = [k for _, ks in sorted(buckets.items()) if len(ks) > 1 for k in order(ks, shift + 5)]
        return payload + nested

    return tuple(order(list(keys), 0))


def _java_hash_map(items: Iterable[tuple[str, Any]], concurrent: bool = False) -> dict[str, Any]:
    """Iteration order of a java.util.HashMap (or, with ``concurrent``, the ConcurrentHashMap
    inside java.util.Properties) with String keys: bucket index order, insertion order within."""
    pairs = dict(items)
    table_length = 16
    while (len(pairs) >= table_length * 0.75) if concurrent else (len(pairs) > table_length * 0.75):
        table_length *= 2

    def bucket(key: str) -> int:
        h = _java_string_hash(key)
        return (h ^ ((h & 0xFFFFFFFF) >> 16)) & 0x7FFFFFFF & (table_length - 1)

    return {key: pairs[key] for key in sorted(pairs, key=bucket)}


# ---------------------------------------------------------------------------------------------
# Kafka's UUIDs in text form (base64url, no padding)
# ---------------------------------------------------------------------------------------------

ZERO_UUID = uuid.UUID(int=0)
# Kafka reserves (0, 1) as a sentinel; random ids never take it or the zero id.
_SENTINEL_UUID = uuid.UUID(int=1)


def uuid_to_base64(value: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


_BASE64_URL_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _base64_url_decode(text: str) -> bytes:
    """java.util.Base64's URL decoder, as strict: Python's own skips characters outside the
    alphabet and takes '+' and '/' as well, so a mistyped id would decode to some other id."""
    body = text.rstrip("=")
    for index, ch in enumerate(text):
        if ch == "=" and index < len(body):
            raise ValueError(f"Input byte array has incorrect ending byte at {index}")
        if ch != "=" and ch not in _BASE64_URL_ALPHABET:
            # Java reads the string as ISO-8859-1: what is not Latin-1 arrives as '?'
            raise ValueError(f"Illegal base64 character {ord(ch) if ord(ch) < 256 else ord('?'):x}")
    padding = len(text) - len(body)
    if len(body) % 4 == 1:
        raise ValueError("Last unit does not have enough valid bits")
    if padding and (len(text) % 4 != 0 or len(body) % 4 == 0):
        raise ValueError("Input byte array has wrong 4-byte ending unit")
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))


def uuid_from_base64(text: str) -> uuid.UUID:
    """Kafka's Uuid.fromString, with its messages for text that is not a Uuid."""
    if len(text) > 24:
        raise ValueError(f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID")
    raw = _base64_url_decode(text)
    if len(raw) != 16:
        raise ValueError(f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to the "
                         "expected 16 bytes of a base64-encoded UUID")
    return uuid.UUID(bytes=raw)


def random_uuid() -> uuid.UUID:
    """Kafka's Uuid.randomUuid (used for topic ids)."""
    while True:
        value = uuid.uuid4()
        if value not in (ZERO_UUID, _SENTINEL_UUID):
            return value


def generate_uuid_as_base64() -> str:
    """Kafka's CoreUtils.generateUuidAsBase64 (used for a new cluster id)."""
    return uuid_to_base64(uuid.uuid4())


# ---------------------------------------------------------------------------------------------
# Value types
# ---------------------------------------------------------------------------------------------

def _diff(left: Iterable[int], right: Iterable[int]) -> tuple[int, ...]:
    """Scala's Seq.diff: multiset difference keeping the order of ``left``."""
    remaining = list(right)
    out = []
    for item in left:
        if item in remaining:
            remaining.remove(item)
        else:
            out.append(item)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ReplicaAssignment:
    """Replicas of a partition; while a reassignment runs, ``replicas`` holds the union of the
    original and target sets and the adding/removing lists say which is which."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    # no replicas (below)
    EMPTY: ClassVar[ReplicaAssignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "replicas", tuple(self.replicas))
        object.__setattr__(self, "adding_replicas", tuple(self.adding_replicas))
        object.__setattr__(self, "removing_replicas", tuple(self.removing_replicas))

    @property
    def origin_replicas(self) -> tuple[int, ...]:
        return _diff(self.replicas, self.adding_replicas)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        return _diff(self.replicas, self.removing_replicas)

    def is_being_reassigned(self) -> bool:
        return bool(self.adding_replicas or self.removing_replicas)

    def reassign_to(self, target: Iterable[int]) -> "ReplicaAssignment":
        target = tuple(target)
        full = tuple(dict.fromkeys(target + self.origin_replicas))
        return ReplicaAssignment(full, _diff(full, self.origin_replicas), _diff(full, target))

    def remove_replica(self, replica: int) -> "ReplicaAssignment":
        return ReplicaAssignment(
            tuple(r for r in self.replicas if r != replica),
            tuple(r for r in self.adding_replicas if r != replica),
            tuple(r for r in self.removing_replicas if r != replica),
        )

    def __str__(self) -> str:
        return (f"ReplicaAssignment(replicas={','.join(map(str, self.replicas))}, "
                f"addingReplicas={','.join(map(str, self.adding_replicas))}, "
                f"removingReplicas={','.join(map(str, self.removing_replicas))})")


ReplicaAssignment.EMPTY = ReplicaAssignment(())


@dataclass(frozen=True)
class TopicIdReplicaAssignment:
    topic: str
    topic_id: uuid.UUID | None
    assignment: Mapping[TopicPartition, ReplicaAssignment] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash((self.topic, self.topic_id))


class ConfigType:
    TOPIC = "topics"
    CLIENT = "clients"
    USER = "users"
    BROKER = "brokers"
    IP = "ips"
    ALL = (TOPIC, CLIENT, USER, BROKER, IP)


class ConfigEntityName:
    DEFAULT = "<default>"


# ---------------------------------------------------------------------------------------------
# Znodes
# ---------------------------------------------------------------------------------------------

class ControllerZNode:
    """/controller: ephemeral, names the active controller."""

    @staticmethod
    def path() -> str:
        return "/controller"

    @staticmethod
    def encode(broker_id: int, timestamp: int) -> bytes:
        return encode_as_bytes({"version": 1, "brokerid": broker_id, "timestamp": str(timestamp)})

    @staticmethod
    @_json_decoder
    def decode(data: bytes | None) -> int | None:
        js = parse_bytes(data)
        return None if js is None else int(js["brokerid"])


class ControllerEpochZNode:
    """/controller_epoch: the epoch as a bare decimal string (not JSON)."""

    @staticmethod
    def path() -> str:
        return "/controller_epoch"

    @staticmethod
    def encode(epoch: int) -> bytes:
        return str(epoch).encode("utf-8")

    @staticmethod
    @_json_decoder
    def decode(data: bytes) -> int:
        return int(bytes(data).decode("utf-8"))


class ConfigZNode:
    @staticmethod
    def path() -> str:
        return "/config"


class BrokersZNode:
    @staticmethod
    def path() -> str:
        return "/brokers"


class BrokerIdsZNode:
    @staticmethod
    def path() -> str:
        return f"{BrokersZNode.path()}/ids"


@dataclass(frozen=True)
class BrokerInfo:
    """A broker registration: the Broker plus the JSON version and JMX port it is written with."""

    broker: Broker
    version: int = 5
    jmx_port: int = -1

    # Version 5 (features) is what an inter.broker.protocol.version >= 2.7 broker writes;
    # kafka-py always runs the 2.8 protocol.
    CURRENT_VERSION = 5

    @property
    def path(self) -> str:
        return BrokerIdZNode.path(self.broker.id)

    def to_json_bytes(self, timestamp: int | None = None) -> bytes:
        return BrokerIdZNode.encode_broker_info(self, timestamp)


class BrokerIdZNode:
    """/brokers/ids/<id>: ephemeral broker registration (JSON versions 1 to 5)."""

    HOST_KEY = "host"
    PORT_KEY = "port"
    VERSION_KEY = "version"
    ENDPOINTS_KEY = "endpoints"
    RACK_KEY = "rack"
    JMX_PORT_KEY = "jmx_port"
    LISTENER_SECURITY_PROTOCOL_MAP_KEY = "listener_security_protocol_map"
    TIMESTAMP_KEY = "timestamp"
    FEATURES_KEY = "features"

    @staticmethod
    def path(broker_id: int) -> str:
        return f"{BrokerIdsZNode.path()}/{broker_id}"

    @staticmethod
    def encode(version: int, host: str | None, port: int, advertised_end_points: Iterable[EndPoint],
               jmx_port: int, rack: str | None, features: Mapping[str, SupportedVersionRange],
               timestamp: int | None = None) -> bytes:
        """The top-level host/port are the first PLAINTEXT end point's, for old clients."""
        end_points = list(advertised_end_points)
        if timestamp is None:
            timestamp = int(_time.time() * 1000)
        items: list[tuple[str, Any]] = [
            (BrokerIdZNode.VERSION_KEY, version),
            (BrokerIdZNode.HOST_KEY, host),
            (BrokerIdZNode.PORT_KEY, port),
            (BrokerIdZNode.ENDPOINTS_KEY, [e.connection_string for e in end_points]),
            (BrokerIdZNode.JMX_PORT_KEY, jmx_port),
            (BrokerIdZNode.TIMESTAMP_KEY, str(timestamp)),
        ]
        initial = len(items)
        if rack is not None and version >= 3:
            items.append((BrokerIdZNode.RACK_KEY, rack))
        if version >= 4:
            items.append((BrokerIdZNode.LISTENER_SECURITY_PROTOCOL_MAP_KEY, _scala_immutable_map(
                (e.listener_name.value, e.security_protocol.name) for e in end_points)))
        if version >= 5:
            items.append((BrokerIdZNode.FEATURES_KEY, _java_hash_map(
                (name, vr.to_map()) for name, vr in features.items())))
        return encode_as_bytes(_scala_mutable_hash_map(items, initial_entries=initial))

    @staticmethod
    def encode_broker_info(broker_info: BrokerInfo, timestamp: int | None = None) -> bytes:
        broker = broker_info.broker
        plaintext = next((e for e in broker.end_points if e.security_protocol is SecurityProtocol.PLAINTEXT), None)
        host, port = (plaintext.host, plaintext.port) if plaintext is not None else (None, -1)
        return BrokerIdZNode.encode(broker_info.version, host, port, broker.end_points, broker_info.jmx_port,
                                    broker.rack, broker.features, timestamp)

    @staticmethod
    @_json_decoder
    def decode(broker_id: int, data: bytes) -> BrokerInfo:
        try:
            info = try_parse_bytes(data)
        except ValueError as e:
            raise KafkaException(f"Failed to parse ZooKeeper registration for broker {broker_id}: "
                                 f"{_utf8(data)}") from e
        version = int(info[BrokerIdZNode.VERSION_KEY])
        jmx_port = int(info[BrokerIdZNode.JMX_PORT_KEY])
        if version < 1:
            raise KafkaException(f"Unsupported version of broker registration: {_utf8(data)}")
        if version == 1:
            end_points = [EndPoint(info[BrokerIdZNode.HOST_KEY], int(info[BrokerIdZNode.PORT_KEY]),
                                   ListenerName.for_security_protocol(SecurityProtocol.PLAINTEXT),
                                   SecurityProtocol.PLAINTEXT)]
        else:
            raw_map = info.get(BrokerIdZNode.LISTENER_SECURITY_PROTOCOL_MAP_KEY)
            protocol_map = None if raw_map is None else {
                ListenerName(name): SecurityProtocol.for_name(protocol) for name, protocol in raw_map.items()}
            end_points = [EndPoint.create_end_point(s, protocol_map) for s in info[BrokerIdZNode.ENDPOINTS_KEY]]
        rack = info.get(BrokerIdZNode.RACK_KEY)
        features = {name: SupportedVersionRange.from_map(vr)
                    for name, vr in (info.get(BrokerIdZNode.FEATURES_KEY) or {}).items()}
        return BrokerInfo(Broker(broker_id, tuple(end_points), rack, features), version, jmx_port)


class TopicsZNode:
    @staticmethod
    def path() -> str:
        return f"{BrokersZNode.path()}/topics"


class TopicZNode:
    """/brokers/topics/<topic>: replica assignment (JSON version 3 since Kafka 2.8, with topic_id)."""

    @staticmethod
    def path(topic: str) -> str:
        return f"{TopicsZNode.path()}/{topic}"

    @staticmethod
    def encode(topic_id: uuid.UUID | None, assignment: Mapping[TopicPartition, ReplicaAssignment]) -> bytes:
        replicas: list[tuple[str, list[int]]] = []
        adding: list[tuple[str, list[int]]] = []
        removing: list[tuple[str, list[int]]] = []
        for tp, ra in assignment.items():
            key = str(tp.partition)
            replicas.append((key, list(ra.replicas)))
            if ra.adding_replicas:
                adding.append((key, list(ra.adding_replicas)))
            if ra.removing_replicas:
                removing.append((key, list(ra.removing_replicas)))
        items: list[tuple[str, Any]] = [
            ("version", 3),
            ("partitions", _scala_mutable_hash_map(replicas)),
            ("adding_replicas", _scala_mutable_hash_map(adding)),
            ("removing_replicas", _scala_mutable_hash_map(removing)),
        ]
        if topic_id is not None:
            items.append(("topic_id", uuid_to_base64(topic_id)))
        return encode_as_bytes(_scala_mutable_hash_map(items, initial_entries=4))

    @staticmethod
    @_json_decoder
    def decode(topic: str, data: bytes | None) -> TopicIdReplicaAssignment:
        js = parse_bytes(data)
        if js is None:
            return TopicIdReplicaAssignment(topic, None, {})
        topic_id = js.get("topic_id")
        adding = js.get("adding_replicas") or {}
        removing = js.get("removing_replicas") or {}
        partitions = js.get("partitions") or {}
        assignment = {
            TopicPartition(topic, int(p)): ReplicaAssignment(
                tuple(replicas), tuple(adding.get(p, ())), tuple(removing.get(p, ())))
            for p, replicas in partitions.items()
        }
        return TopicIdReplicaAssignment(topic, None if topic_id is None else uuid_from_base64(topic_id),
                                        assignment)


class TopicPartitionsZNode:
    @staticmethod
    def path(topic: str) -> str:
        return f"{TopicZNode.path(topic)}/partitions"


class TopicPartitionZNode:
    @staticmethod
    def path(partition: TopicPartition) -> str:
        return f"{TopicPartitionsZNode.path(partition.topic)}/{partition.partition}"


class TopicPartitionStateZNode:
    """/brokers/topics/<t>/partitions/<p>/state: leader, leader epoch, ISR, controller epoch."""

    @staticmethod
    def path(partition: TopicPartition) -> str:
        return f"{TopicPartitionZNode.path(partition)}/state"

    @staticmethod
    def encode(leader_isr_and_controller_epoch: LeaderIsrAndControllerEpoch) -> bytes:
        lai = leader_isr_and_controller_epoch.leader_and_isr
        return encode_as_bytes(_scala_immutable_map([
            ("version", 1),
            ("leader", lai.leader),
            ("leader_epoch", lai.leader_epoch),
            ("controller_epoch", leader_isr_and_controller_epoch.controller_epoch),
            ("isr", list(lai.isr)),
        ]))

    @staticmethod
    @_json_decoder
    def decode(data: bytes | None, stat: Any) -> LeaderIsrAndControllerEpoch | None:
        """``stat`` is the znode's Stat (its ``version`` becomes the LeaderAndIsr zk_version)."""
        js = parse_bytes(data)
        if js is None:
            return None
        leader_and_isr = LeaderAndIsr(int(js["leader"]), int(js["leader_epoch"]),
                                      tuple(int(r) for r in js["isr"]), stat.version)
        return LeaderIsrAndControllerEpoch(leader_and_isr, int(js["controller_epoch"]))


class ConfigEntityTypeZNode:
    @staticmethod
    def path(entity_type: str) -> str:
        return f"{ConfigZNode.path()}/{entity_type}"


def _config_value(value: Any) -> str:
    # Properties hold strings; spell booleans the way Kafka's configs do.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class ConfigEntityZNode:
    """/config/<entity type>/<entity name>: ``{"version":1,"config":{...}}`` with string values."""

    @staticmethod
    def path(entity_type: str, entity_name: str) -> str:
        return f"{ConfigEntityTypeZNode.path(entity_type)}/{entity_name}"

    @staticmethod
    def encode(config: Mapping[str, Any]) -> bytes:
        props = _java_hash_map(((str(k), _config_value(v)) for k, v in config.items()), concurrent=True)
        return encode_as_bytes({"version": 1, "config": props})

    @staticmethod
    @_json_decoder
    def decode(data: bytes | None) -> dict[str, str]:
        js = parse_bytes(data)
        if not isinstance(js, dict):
            return {}
        config = js.get("config")
        if not isinstance(config, dict):
            return {}
        return {k: v if isinstance(v, str) else _config_value(v) for k, v in config.items()}


class ConfigEntityChangeNotificationZNode:
    @staticmethod
    def path() -> str:
        return f"{ConfigZNode.path()}/changes"


class ConfigEntityChangeNotificationSequenceZNode:
    """/config/changes/config_change_<10-digit sequence>: which entity's config changed."""

    SEQUENCE_NUMBER_PREFIX = "config_change_"

    @staticmethod
    def create_path() -> str:
        return f"{ConfigEntityChangeNotificationZNode.path()}/{ConfigEntityChangeNotificationSequenceZNode.SEQUENCE_NUMBER_PREFIX}"

    @staticmethod
    def encode(sanitized_entity_path: str) -> bytes:
        return encode_as_bytes({"version": 2, "entity_path": sanitized_entity_path})

    @staticmethod
    @_json_decoder
    def decode(data: bytes | None) -> dict[str, Any] | None:
        """The raw notification (version 1: entity_type + entity_name; version 2: entity_path)."""
        js = parse_bytes(data)
        return js if isinstance(js, dict) else None


class IsrChangeNotificationZNode:
    @staticmethod
    def path() -> str:
        return "/isr_change_notification"


class IsrChangeNotificationSequenceZNode:
    """/isr_change_notification/isr_change_<seq>: partitions whose ISR a leader changed."""

    SEQUENCE_NUMBER_PREFIX = "isr_change_"
    VERSION = 1  # Kafka's IsrChangeNotificationHandler.Version

    @staticmethod
    def path(sequence_number: str = "") -> str:
        return (f"{IsrChangeNotificationZNode.path()}/"
                f"{IsrChangeNotificationSequenceZNode.SEQUENCE_NUMBER_PREFIX}{sequence_number}")

    @staticmethod
    def encode(partitions: Iterable[TopicPartition]) -> bytes:
        return encode_as_bytes({
            "version": IsrChangeNotificationSequenceZNode.VERSION,
            "partitions": [{"topic": tp.topic, "partition": tp.partition} for tp in partitions],
        })

    @staticmethod
    @_json_decoder
    def decode(data: bytes | None) -> set[TopicPartition]:
        js = parse_bytes(data)
        if js is None:
            return set()
        return {TopicPartition(p["topic"], int(p["partition"])) for p in js["partitions"]}

    @staticmethod
    def sequence_number(path: str) -> str:
        prefix = IsrChangeNotificationSequenceZNode.SEQUENCE_NUMBER_PREFIX
        return path[path.rfind(prefix) + len(prefix):]


class LogDirEventNotificationZNode:
    @staticmethod
    def path() -> str:
        return "/log_dir_event_notification"


class LogDirEventNotificationSequenceZNode:
    """/log_dir_event_notification/log_dir_event_<seq>: a broker reports a failed log dir."""

    SEQUENCE_NUMBER_PREFIX = "log_dir_event_"
    LOG_DIR_FAILURE_EVENT = 1

    @staticmethod
    def path(sequence_number: str) -> str:
        return (f"{LogDirEventNotificationZNode.path()}/"
                f"{LogDirEventNotificationSequenceZNode.SEQUENCE_NUMBER_PREFIX}{sequence_number}")

    @staticmethod
    def encode(broker_id: int) -> bytes:
        return encode_as_bytes({"version": 1, "broker": broker_id,
                                "event": LogDirEventNotificationSequenceZNode.LOG_DIR_FAILURE_EVENT})

    @staticmethod
    @_json_decoder
    def decode(data: bytes | None) -> int | None:
        js = parse_bytes(data)
        return None if js is None else int(js["broker"])

    @staticmethod
    def sequence_number(path: str) -> str:
        prefix = LogDirEventNotificationSequenceZNode.SEQUENCE_NUMBER_PREFIX
        return path[path.rfind(prefix) + len(prefix):]


class AdminZNode:
    @staticmethod
    def path() -> str:
        return "/admin"


class DeleteTopicsZNode:
    @staticmethod
    def path() -> str:
        return f"{AdminZNode.path()}/delete_topics"


class DeleteTopicsTopicZNode:
    @staticmethod
    def path(topic: str) -> str:
        return f"{DeleteTopicsZNode.path()}/{topic}"


class ReassignPartitionsZNode:
    """/admin/reassign_partitions: the pre-2.4 way to ask for a reassignment (still honoured)."""

    @staticmethod
    def path() -> str:
        return f"{AdminZNode.path()}/reassign_partitions"

    @staticmethod
    def encode(reassignment: Mapping[TopicPartition, Iterable[int]]) -> bytes:
        return encode_as_bytes({"version": 1, "partitions": [
            {"topic": tp.topic, "partition": tp.partition, "replicas": list(replicas)}
            for tp, replicas in reassignment.items()]})

    @staticmethod
    @_json_decoder
    def decode(data: bytes) -> dict[TopicPartition, tuple[int, ...]]:
        """Raises ValueError on malformed JSON (Kafka returns a Left)."""
        try:
            js = try_parse_bytes(data)
            return {TopicPartition(p["topic"], int(p["partition"])): tuple(int(r) for r in p["replicas"])
                    for p in js["partitions"]}
        except (KeyError, TypeError) as e:
            raise ValueError(f"invalid reassignment JSON: {_utf8(data)}") from e


class PreferredReplicaElectionZNode:
    @staticmethod
    def path() -> str:
        return f"{AdminZNode.path()}/preferred_replica_election"

    @staticmethod
    def encode(partitions: Iterable[TopicPartition]) -> bytes:
        return encode_as_bytes({"version": 1, "partitions": [
            {"topic": tp.topic, "partition": tp.partition} for tp in partitions]})

    @staticmethod
    @_json_decoder
    def decode(data: bytes | None) -> set[TopicPartition]:
        js = parse_bytes(data)
        if js is None:
            return set()
        return {TopicPartition(p["topic"], int(p["partition"])) for p in js["partitions"]}


class ConsumerPathZNode:
    """/consumers: the old (ZooKeeper-based) consumer's root, still created by brokers."""

    @staticmethod
    def path() -> str:
        return "/consumers"


class ConsumerOffset:
    @staticmethod
    def path(group: str, topic: str, partition: int) -> str:
        return f"{ConsumerPathZNode.path()}/{group}/offsets/{topic}/{partition}"

    @staticmethod
    def encode(offset: int) -> bytes:
        return str(offset).encode("utf-8")

    @staticmethod
    @_json_decoder
    def decode(data: bytes | None) -> int | None:
        return None if data is None else int(bytes(data).decode("utf-8"))


class ZkVersion:
    MATCH_ANY_VERSION = -1  # a conditional write with this version matches any version
    UNKNOWN_VERSION = -2  # what reads report for a missing znode (never a real version)


class StateChangeHandlers:
    CONTROLLER_HANDLER = "controller-state-change-handler"

    @staticmethod
    def zk_node_change_listener_handler(seq_node_root: str) -> str:
        return f"change-notification-{seq_node_root}"


# ---------------------------------------------------------------------------------------------
# ACLs (kafka.security.authorizer.AclAuthorizer)
#
# LITERAL patterns live under /kafka-acl/<ResourceType>/<name>, every other specific pattern
# type under /kafka-acl-extended/<pattern type in lower case>/<ResourceType>/<name>; each znode
# holds all the entries of its pattern as JSON (kafka_py.core.security.authorizer.acl_entry). A change
# to one is announced by a sequential acl_changes_<seq> under /kafka-acl-changes (LITERAL:
# "<ResourceType>:<name>", the pre-2.0 text form) or /kafka-acl-extended-changes (JSON naming the
# pattern), which every broker's authorizer watches.
# ---------------------------------------------------------------------------------------------

class ZkAclStore:
    """Where the ACLs of one pattern type live (``ZkAclStore(pattern_type)`` picks the store)."""

    pattern_type: PatternType = PatternType.UNKNOWN
    acl_path: str = ""

    def path(self, resource_type: ResourceType, resource_name: str | None = None) -> str:
        base = f"{self.acl_path}/{resource_type.pascal_name}"
        return base if resource_name is None else f"{base}/{resource_name}"

    @property
    def change_store(self) -> "ZkAclChangeStore":
        raise NotImplementedError

    @staticmethod
    def stores() -> tuple["ZkAclStore", ...]:
        return (LITERAL_ACL_STORE, PREFIXED_ACL_STORE)

    @staticmethod
    def of(pattern_type: PatternType) -> "ZkAclStore":
        for store in ZkAclStore.stores():
            if store.pattern_type is pattern_type:
                return store
        raise KafkaException(f"Invalid pattern type: {pattern_type}")

    @staticmethod
    def secure_paths() -> tuple[str, ...]:
        paths: list[str] = []
        for store in ZkAclStore.stores():
            paths += [store.acl_path, store.change_store.acl_change_path]
        return tuple(dict.fromkeys(paths))


class LiteralAclStore(ZkAclStore):
    ACL_PATH = "/kafka-acl"

    def __init__(self) -> None:
        self.pattern_type = PatternType.LITERAL
        self.acl_path = self.ACL_PATH

    @property
    def change_store(self) -> "ZkAclChangeStore":
        return LITERAL_ACL_CHANGE_STORE


class ExtendedAclZNode:
    @staticmethod
    def path() -> str:
        return "/kafka-acl-extended"


class ExtendedAclStore(ZkAclStore):
    def __init__(self, pattern_type: PatternType) -> None:
        if pattern_type is PatternType.LITERAL:
            raise ValueError("Literal pattern types are not supported")
        self.pattern_type = pattern_type
        self.acl_path = f"{ExtendedAclZNode.path()}/{pattern_type.name.lower()}"

    @property
    def change_store(self) -> "ZkAclChangeStore":
        return EXTENDED_ACL_CHANGE_STORE


class ZkAclChangeStore:
    SEQUENCE_NUMBER_PREFIX = "acl_changes_"
    acl_change_path: str = ""

    @property
    def create_path(self) -> str:
        return f"{self.acl_change_path}/{self.SEQUENCE_NUMBER_PREFIX}"

    def encode(self, resource: ResourcePattern) -> bytes:
        raise NotImplementedError

    @_json_decoder
    def decode(self, data: bytes) -> ResourcePattern:
        raise NotImplementedError

    @staticmethod
    def stores() -> tuple["ZkAclChangeStore", ...]:
        return (LITERAL_ACL_CHANGE_STORE, EXTENDED_ACL_CHANGE_STORE)


class LiteralAclChangeStore(ZkAclChangeStore):
    ACL_CHANGE_PATH = "/kafka-acl-changes"
    acl_change_path = ACL_CHANGE_PATH

    def encode(self, resource: ResourcePattern) -> bytes:
        if resource.pattern_type is not PatternType.LITERAL:
            raise ValueError("Only literal resource patterns can be encoded")
        # The constant's name (TOPIC), as ResourceType.toString writes it.
        return f"{resource.resource_type.name}:{resource.name}".encode("utf-8")

    @_json_decoder
    def decode(self, data: bytes) -> ResourcePattern:
        text = bytes(data).decode("utf-8")
        resource_type, sep, name = text.partition(":")
        if not sep:
            raise ValueError(f"expected a string in format ResourceType:ResourceName but got {text}")
        return ResourcePattern(ResourceType.from_string(resource_type), name, PatternType.LITERAL)


class ExtendedAclChangeStore(ZkAclChangeStore):
    ACL_CHANGE_PATH = "/kafka-acl-extended-changes"
    acl_change_path = ACL_CHANGE_PATH
    CURRENT_VERSION = 1  # ExtendedAclChangeEvent.currentVersion

    def encode(self, resource: ResourcePattern) -> bytes:
        if resource.pattern_type is PatternType.LITERAL:
            raise ValueError("Literal pattern types are not supported")
        # ExtendedAclChangeEvent, as Jackson writes the bean: its properties in declaration order.
        return encode_as_bytes({"version": self.CURRENT_VERSION, "resourceType": resource.resource_type.name,
                                "name": resource.name, "patternType": resource.pattern_type.name})

    @_json_decoder
    def decode(self, data: bytes) -> ResourcePattern:
        try:
            event = try_parse_bytes(data)
        except ValueError as e:
            raise ValueError(f"Failed to parse ACL change event: {e}") from e
        if not isinstance(event, dict):
            raise ValueError("Failed to parse ACL change event")
        if int(event.get("version", 0)) > self.CURRENT_VERSION:
            raise ValueError(f"Acl change event received for unsupported version: {event.get('version')}")
        resource_type = ResourceType.from_string(str(event.get("resourceType")))
        pattern_type = PatternType.from_string(str(event.get("patternType")))
        if resource_type.is_unknown or pattern_type.is_unknown or not isinstance(event.get("name"), str):
            raise ValueError(f"Failed to convert ACL change event to resource: {event}")
        return ResourcePattern(resource_type, event["name"], pattern_type)


class ResourceZNode:
    """The znode of one resource pattern and its JSON (AclEntry's)."""

    @staticmethod
    def path(resource: ResourcePattern) -> str:
        return ZkAclStore.of(resource.pattern_type).path(resource.resource_type, resource.name)

    @staticmethod
    def encode(acls: Iterable[Any]) -> bytes:
        return acl_entry.to_bytes(acls)

    @staticmethod
    @_json_decoder
    def decode(data: bytes | None, version: int) -> Any:
        from kafka_py.core.security.authorizer.acl_authorizer import VersionedAcls

        return VersionedAcls(acl_entry.from_bytes(data), version)


LITERAL_ACL_CHANGE_STORE = LiteralAclChangeStore()
EXTENDED_ACL_CHANGE_STORE = ExtendedAclChangeStore()
LITERAL_ACL_STORE: ZkAclStore = LiteralAclStore()
PREFIXED_ACL_STORE: ZkAclStore = ExtendedAclStore(PatternType.PREFIXED)


class ClusterZNode:
    @staticmethod
    def path() -> str:
        return "/cluster"


class ClusterIdZNode:
    """/cluster/id: ``{"version":"1","id":"<22-char base64 uuid>"}`` (the version is a string)."""

    @staticmethod
    def path() -> str:
        return f"{ClusterZNode.path()}/id"

    @staticmethod
    def to_json(cluster_id: str) -> bytes:
        return encode_as_bytes({"version": "1", "id": cluster_id})

    @staticmethod
    @_json_decoder
    def from_json(data: bytes | None) -> str:
        js = parse_bytes(data)
        if js is None:
            raise KafkaException(f"Failed to parse the cluster id json {data!r}")
        return str(js["id"])


class BrokerSequenceIdZNode:
    """/brokers/seqid: empty data; its znode version is the broker id sequence."""

    @staticmethod
    def path() -> str:
        return f"{BrokersZNode.path()}/seqid"


class ProducerIdBlockZNode:
    """/latest_producer_id_block: the last producer id block a broker claimed
    (JSON from core/.../kafka/coordinator/transaction/ProducerIdManager.scala)."""

    CURRENT_VERSION = 1

    @staticmethod
    def path() -> str:
        return "/latest_producer_id_block"

    @staticmethod
    def encode(broker_id: int, block_start: int, block_end: int) -> bytes:
        return encode_as_bytes({"version": ProducerIdBlockZNode.CURRENT_VERSION, "broker": broker_id,
                                "block_start": str(block_start), "block_end": str(block_end)})

    @staticmethod
    @_json_decoder
    def decode(data: bytes | None) -> tuple[int, int, int] | None:
        """(broker id, block start, block end), both ends inclusive."""
        js = parse_bytes(data)
        if js is None:
            return None
        return int(js["broker"]), int(js["block_start"]), int(js["block_end"])


class DelegationTokenAuthZNode:
    @staticmethod
    def path() -> str:
        return "/delegation_token"


class DelegationTokenChangeNotificationZNode:
    @staticmethod
    def path() -> str:
        return f"{DelegationTokenAuthZNode.path()}/token_changes"


class DelegationTokenChangeNotificationSequenceZNode:
    """/delegation_token/token_changes/token_change_<seq>: a token was created, changed or
    removed; the data is its id, and every broker rereads that token."""

    SEQUENCE_NUMBER_PREFIX = "token_change_"

    @staticmethod
    def create_path() -> str:
        return f"{DelegationTokenChangeNotificationZNode.path()}/{DelegationTokenChangeNotificationSequenceZNode.SEQUENCE_NUMBER_PREFIX}"

    @staticmethod
    def encode(token_id: str) -> bytes:
        return token_id.encode("utf-8")

    @staticmethod
    def decode(data: bytes) -> str:
        return bytes(data).decode("utf-8")


class DelegationTokensZNode:
    @staticmethod
    def path() -> str:
        return f"{DelegationTokenAuthZNode.path()}/tokens"


class DelegationTokenInfoZNode:
    """/delegation_token/tokens/<tokenId>: one token's information in DelegationTokenManager's
    JSON (the HMAC is never stored: every broker derives it from the shared secret key)."""

    @staticmethod
    def path(token_id: str) -> str:
        return f"{DelegationTokensZNode.path()}/{token_id}"

    @staticmethod
    def encode(token: Any) -> bytes:
        from kafka_py.server.delegation_token_manager import to_json_compatible_map

        return encode_as_bytes(to_json_compatible_map(token))

    @staticmethod
    def decode(data: bytes | None) -> Any:
        from kafka_py.server.delegation_token_manager import token_information_from_bytes

        return token_information_from_bytes(data)


class FeatureZNodeStatus(enum.IntEnum):
    DISABLED = 0
    ENABLED = 1


@dataclass(frozen=True)
class FeatureZNode:
    """/feature: cluster-wide finalized feature versions (KIP-584)."""

    status: FeatureZNodeStatus
    features: Mapping[str, FinalizedVersionRange] = field(default_factory=dict)

    V1 = 1
    CURRENT_VERSION = V1

    @staticmethod
    def path() -> str:
        return "/feature"

    @staticmethod
    def encode(node: "FeatureZNode") -> bytes:
        features = _java_hash_map((name, vr.to_map()) for name, vr in node.features.items())
        return encode_as_bytes(_scala_mutable_hash_map(
            [("version", FeatureZNode.CURRENT_VERSION), ("status", int(node.status)), ("features", features)],
            initial_entries=3))

    @staticmethod
    @_json_decoder
    def decode(data: bytes) -> "FeatureZNode":
        """Raises ValueError when the data is not a valid feature znode."""
        try:
            js = try_parse_bytes(data)
        except ValueError as e:
            raise ValueError(f"Failed to parse feature information: {_utf8(data)}") from e
        version = int(js["version"])
        if version < FeatureZNode.V1:
            raise ValueError(f"Unsupported version: {version} of feature information: {_utf8(data)}")
        features = js.get("features")
        if features is None:
            raise ValueError(f"Features map can not be absent in: {_utf8(data)}")
        status = js.get("status")
        if status is None:
            raise ValueError(f"Status can not be absent in feature information: {_utf8(data)}")
        try:
            status = FeatureZNodeStatus(int(status))
        except ValueError:
            raise ValueError(f"Malformed status: {status} found in feature information: {_utf8(data)}") from None
        try:
            finalized = {name: FinalizedVersionRange.from_map(vr) for name, vr in features.items()}
        except (ValueError, TypeError, AttributeError) as e:
            raise ValueError(f"Unable to convert to finalized features from map: {features}") from e
        return FeatureZNode(status, finalized)


def _utf8(data: bytes | None) -> str:
    return "null" if data is None else bytes(data).decode("utf-8", errors="replace")


class ZkData:
    # Every top-level path Kafka owns; secure ACLs are applied below these.
    SECURE_ROOT_PATHS = (
        AdminZNode.path(), BrokersZNode.path(), ClusterZNode.path(), ConfigZNode.path(),
        ControllerZNode.path(), ControllerEpochZNode.path(), IsrChangeNotificationZNode.path(),
        ProducerIdBlockZNode.path(), LogDirEventNotificationZNode.path(), DelegationTokenAuthZNode.path(),
        ExtendedAclZNode.path(),
        LiteralAclStore.ACL_PATH, LiteralAclChangeStore.ACL_CHANGE_PATH,
        f"{ExtendedAclZNode.path()}/prefixed", ExtendedAclChangeStore.ACL_CHANGE_PATH,
    )

    # Persistent paths a broker makes sure exist at startup (KafkaZkClient.createTopLevelPaths).
    PERSISTENT_ZK_PATHS = (
        ConsumerPathZNode.path(),
        BrokerIdsZNode.path(),
        TopicsZNode.path(),
        ConfigEntityChangeNotificationZNode.path(),
        DeleteTopicsZNode.path(),
        BrokerSequenceIdZNode.path(),
        IsrChangeNotificationZNode.path(),
        ProducerIdBlockZNode.path(),
        LogDirEventNotificationZNode.path(),
    ) + tuple(ConfigEntityTypeZNode.path(t) for t in ConfigType.ALL)

    SENSITIVE_ROOT_PATHS = (
        ConfigEntityTypeZNode.path(ConfigType.USER),
        ConfigEntityTypeZNode.path(ConfigType.BROKER),
        DelegationTokensZNode.path(),
    )

    @staticmethod
    def sensitive_path(path: str | None) -> bool:
        return path is not None and any(path.startswith(p) for p in ZkData.SENSITIVE_ROOT_PATHS)

    @staticmethod
    def default_acls(is_secure: bool, path: str) -> list:
        """ACLs for a new znode: open unless ``zookeeper.set.acl``; the old consumer path stays
        open either way since consumers of every principal write below it."""
        from kazoo.security import CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE

        if is_secure and path != ConsumerPathZNode.path():
            acls = list(CREATOR_ALL_ACL)
            if not ZkData.sensitive_path(path):
                acls.extend(READ_ACL_UNSAFE)
            return acls
        return list(OPEN_ACL_UNSAFE)
