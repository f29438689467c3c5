"""The Kafka protocol client of the ``kafka-log`` source's reads through the brokers.

No Kafka counterpart as one file: the requests Spark's Kafka source makes through its Java
clients (KafkaOffsetReaderAdmin asks for partitions and offsets, KafkaDataConsumer fetches
records), made here with kafka-py's own NetworkClient (kafka_py/clients/network_client.py,
one connection per broker through kafka_py/tools/broker_connections.BrokerConnections):

* Metadata (v9) for the topics, their partitions and each partition's leader;
* ListOffsets (v5) for the earliest and latest offsets, the latter at the read's isolation
  level (the high watermark, or the last stable offset under ``read_committed``), and for the
  offsets of timestamps, sent to each partition's leader;
* Fetch (v11, the consumer's replica id -1, outside any fetch session) of one partition,
  written and read by the broker's own codec (kafka_py.tuning.fast_paths) so that the
  records of the answer stay a view of the one buffer the answer was read into: the
  executor's Arrow conversion (kafka_py/spark/arrow_records.py) takes the batches from
  there, with no record object on the way.

Settings are the Java client's, ``kafka.``-prefixed in the source's options (Spark passes
them to its consumer the same way): ``security.protocol``, ``ssl.*`` (JKS, PKCS12 or PEM
stores), ``sasl.mechanism`` and ``sasl.jaas.config`` (PLAIN, SCRAM-SHA-256/512,
OAUTHBEARER), ``request.timeout.ms``, ``socket.connection.setup.timeout.ms``,
``default.api.timeout.ms``, ``max.partition.fetch.bytes``, ``fetch.max.wait.ms``,
``client.id``. librdkafka's names that the stream's admin client and the sink take
(``sasl.username`` / ``sasl.password``, ``ssl.ca.location``) are accepted too, so one set of
options serves the source and the sink.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from kafka_py.clients.network_client import PreparedRequest
from kafka_py.common.errors import KafkaException
from kafka_py.common.topic_partition import TopicPartition
from kafka_py.protocol.errors import Errors

logger = logging.getLogger(__name__)

METADATA_VERSION = 9
LIST_OFFSETS_VERSION = 5
FETCH_VERSION = 11
#: The replica id of a consumer's Fetch and ListOffsets.
CONSUMER_REPLICA_ID = -1
EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
READ_UNCOMMITTED_LEVEL = 0
READ_COMMITTED_LEVEL = 1

#: The Java consumer's defaults, except max.partition.fetch.bytes: one Spark task reads one
#: partition, so a larger answer per request costs nothing and saves round trips.
DEFAULTS = {
    "request.timeout.ms": 30000,
    "socket.connection.setup.timeout.ms": 10000,
    "default.api.timeout.ms": 60000,
    "max.partition.fetch.bytes": 8 * 1024 * 1024,
    "fetch.max.wait.ms": 500,
    "retry.backoff.ms": 100,
}
CLIENT_ID = "kafka-log-source"

#: Errors after which a partition's leader is asked for again (Kafka's consumer refreshes its
#: metadata on these, RetriableException subclasses of a moved or not yet elected leader).
LEADER_ERRORS = frozenset({
    Errors.NOT_LEADER_OR_FOLLOWER, Errors.LEADER_NOT_AVAILABLE, Errors.FENCED_LEADER_EPOCH,
    Errors.UNKNOWN_LEADER_EPOCH, Errors.REPLICA_NOT_AVAILABLE, Errors.KAFKA_STORAGE_ERROR,
    Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.OFFSET_NOT_AVAILABLE, Errors.NOT_ENOUGH_REPLICAS,
    Errors.REQUEST_TIMED_OUT,
})


class KafkaLogBrokerException(KafkaException):
    """The cluster could not answer what a read needs: unreachable past the timeout, a refused
    login, or an error that retrying does not cure."""


class KafkaLogClientConfigException(ValueError):
    """A ``kafka.*`` client setting the source cannot use."""


@dataclass(frozen=True)
class BrokerClientConfig:
    """What an executor needs to reach the cluster; hashable, so each executor process keeps
    one client per configuration (``client_for``)."""

    bootstrap_servers: tuple[str, ...]
    params: tuple[tuple[str, str], ...] = ()

    @classmethod
    def create(cls, kafka_params: Mapping[str, str]) -> "BrokerClientConfig":
        raw = str(kafka_params.get("bootstrap.servers") or "").strip()
        servers = tuple(s.strip() for s in raw.split(",") if s.strip())
        if not servers:
            raise KafkaLogClientConfigException("Option kafka.bootstrap.servers must name at least one broker "
                                                "(host:port) to read through the brokers")
        for server in servers:
            host, sep, port = server.rpartition(":")
            if not sep or not host or not port.isdigit():
                raise KafkaLogClientConfigException(
                    f"Option kafka.bootstrap.servers: {server!r} is not host:port")
        config = cls(servers, tuple(sorted((str(k), str(v)) for k, v in kafka_params.items()
                                           if k != "bootstrap.servers")))
        for key in DEFAULTS:
            config.setting(key)
        config.security_properties()
        return config

    def setting(self, key: str) -> int:
        value = dict(self.params).get(key)
        if value is None:
            return DEFAULTS[key]
        try:
            number = int(value.strip())
        except ValueError:
            raise KafkaLogClientConfigException(f"Option kafka.{key} must be a number, not {value!r}") from None
        if number < 0:
            raise KafkaLogClientConfigException(f"Option kafka.{key} must not be negative, not {number}")
        return number

    def security_properties(self) -> dict[str, str]:
        """The Java client's security settings, librdkafka's names translated."""
        props = dict(self.params)
        if "sasl.username" in props and "sasl.jaas.config" not in props:
            mechanism = (props.get("sasl.mechanism") or "PLAIN").strip().upper()
            module = ("org.apache.kafka.common.security.scram.ScramLoginModule" if mechanism.startswith("SCRAM")
                      else "org.apache.kafka.common.security.plain.PlainLoginModule")
            user = props["sasl.username"].replace("\\", "\\\\").replace('"', '\\"')
            password = props.get("sasl.password", "").replace("\\", "\\\\").replace('"', '\\"')
            props["sasl.jaas.config"] = f'{module} required username="{user}" password="{password}";'
        if "ssl.ca.location" in props and "ssl.truststore.location" not in props:
            props["ssl.truststore.type"] = "PEM"
            props["ssl.truststore.location"] = props["ssl.ca.location"]
        if "security.protocol" in props:
            props["security.protocol"] = props["security.protocol"].strip().upper()
        if "ssl.endpoint.identification.algorithm" in props and \
                props["ssl.endpoint.identification.algorithm"].strip().lower() == "none":
            props["ssl.endpoint.identification.algorithm"] = ""
        return props

    def describe(self) -> str:
        return f"kafka.bootstrap.servers={','.join(self.bootstrap_servers)}"


@dataclass(frozen=True)
class PartitionInfo:
    leader: int  # -1: no leader now
    leader_epoch: int
    error_code: int


@dataclass(frozen=True)
class TopicInfo:
    error_code: int
    partitions: dict[int, PartitionInfo]


class _FetchOne(PreparedRequest):
    """A sessionless consumer Fetch of one partition (see the module docstring)."""

    def __init__(self, tp: TopicPartition, offset: int, leader_epoch: int, max_wait_ms: int, max_bytes: int,
                 isolation_level: int) -> None:
        self.tp = tp
        self.offset = offset
        self.leader_epoch = leader_epoch
        self.max_wait_ms = max_wait_ms
        self.max_bytes = max_bytes
        self.isolation_level = isolation_level

    def encode_frame(self, correlation_id: int, client_id: Optional[str]) -> bytes:
        from kafka_py.tuning.fast_paths import encode_fetch_request

        # session id 0, epoch -1: a full fetch outside any fetch session; min bytes 1: answer
        # as soon as there is anything
        partition = (self.tp.partition, self.leader_epoch, self.offset, -1, -1, self.max_bytes)
        return encode_fetch_request(FETCH_VERSION, correlation_id, client_id, CONSUMER_REPLICA_ID,
                                    self.max_wait_ms, 1, self.max_bytes, self.isolation_level, 0, -1,
                                    [(self.tp.topic, [partition])])

    def read_response(self, body: memoryview) -> Any:
        from kafka_py.tuning.fast_paths import read_fetch_response

        return read_fetch_response(FETCH_VERSION, body)


class BrokerClient:
    """Connections to a cluster's brokers and the requests a read makes; one thread at a time."""

    def __init__(self, config: BrokerClientConfig) -> None:
        from kafka_py.tools.broker_connections import BrokerConnections

        self.config = config
        props = config.security_properties()
        props.setdefault("client.id", CLIENT_ID)
        self._connections = BrokerConnections(config.bootstrap_servers, props, CLIENT_ID)
        self._connections.request_timeout_ms = config.setting("request.timeout.ms")
        self._connections.connect_timeout_ms = config.setting("socket.connection.setup.timeout.ms")
        self.brokers: dict[int, str] = {}
        self.partitions: dict[TopicPartition, PartitionInfo] = {}
        self.lock = threading.Lock()

    def __getstate__(self) -> dict:
        # A stream's reader, and this client with it, travels pickled to Spark's workers: the
        # connections stay behind, and a copy makes its own when it is used.
        return {"config": self.config}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["config"])

    def close(self) -> None:
        self._connections.close()

    # ------------------------------------------------------------------ requests

    def _send_any(self, api_key: Any, version: int, values: Mapping[str, Any]) -> Any:
        """Send to the first bootstrap server or known broker that answers."""
        from kafka_py.security.errors import AuthenticationException
        from kafka_py.tools.command_line_utils import CommandError

        failures = []
        addresses = list(dict.fromkeys([*self.config.bootstrap_servers, *self.brokers.values()]))
        for address in addresses:
            try:
                return self._connections.send(address, api_key, version, values)
            except AuthenticationException as e:
                raise self._refused(address, e) from None
            except CommandError as e:
                raise KafkaLogClientConfigException(f"A kafka.* security option can't be used: {e}") from None
            except (OSError, ValueError) as e:
                failures.append(f"{address}: {e}")
        raise KafkaLogBrokerException(
            f"No broker of {self.config.describe()} answered ({'; '.join(failures)})")

    def _send(self, address: str, api_key: Any, version: int, body: Any) -> Any:
        from kafka_py.security.errors import AuthenticationException
        from kafka_py.tools.command_line_utils import CommandError

        try:
            return self._connections.send(address, api_key, version, body)
        except AuthenticationException as e:
            raise self._refused(address, e) from None
        except CommandError as e:
            raise KafkaLogClientConfigException(f"A kafka.* security option can't be used: {e}") from None

    def _refused(self, address: str, e: BaseException) -> KafkaLogBrokerException:
        return KafkaLogBrokerException(
            f"The broker at {address} ({self.config.describe()}) refused the client: {e}. Check the options "
            f"kafka.security.protocol, kafka.sasl.* and kafka.ssl.*")

    def metadata(self, topics: Optional[Sequence[str]]) -> dict[str, TopicInfo]:
        """The topics (None: every topic), never creating one; the leaders are remembered."""
        from kafka_py.protocol.api_keys import ApiKeys

        response = self._send_any(ApiKeys.METADATA, METADATA_VERSION, {
            "topics": None if topics is None else [{"name": t} for t in topics],
            "allow_auto_topic_creation": False, "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False})
        brokers = {int(b.node_id): f"{b.host}:{int(b.port)}" for b in response.brokers}
        found: dict[str, TopicInfo] = {}
        with self.lock:
            self.brokers.update(brokers)
            for topic in response.topics:
                partitions = {int(p.partition_index): PartitionInfo(int(p.leader_id), int(p.leader_epoch),
                                                                     int(p.error_code))
                              for p in topic.partitions}
                found[str(topic.name)] = TopicInfo(int(topic.error_code), partitions)
                for index, info in partitions.items():
                    self.partitions[TopicPartition(str(topic.name), index)] = info
        return found

    def leader(self, tp: TopicPartition, refresh: bool = False) -> Optional[tuple[int, str, int]]:
        """(broker id, address, leader epoch) of ``tp``'s leader, or None while it has none."""
        info = None if refresh else self.partitions.get(tp)
        if info is None or info.leader < 0 or info.leader not in self.brokers:
            self.metadata([tp.topic])
            info = self.partitions.get(tp)
        if info is None or info.leader < 0 or info.leader not in self.brokers:
            return None
        return info.leader, self.brokers[info.leader], info.leader_epoch

    def deadline(self) -> float:
        return time.monotonic() + self.config.setting("default.api.timeout.ms") / 1000.0

    def backoff(self) -> None:
        time.sleep(self.config.setting("retry.backoff.ms") / 1000.0)

    def list_offsets(self, timestamps: Mapping[TopicPartition, int], isolation_level: int,
                     skip_leaderless: bool = False) -> dict[TopicPartition, tuple[int, int]]:
        """(offset, timestamp) of each partition for its timestamp (-2 earliest, -1 latest);
        offset -1 where no record has that timestamp or a later one. Leader moves are followed
        until ``default.api.timeout.ms``; other errors raise. With ``skip_leaderless`` a
        partition that Metadata says has no leader is left out instead of waited for."""
        from kafka_py.protocol.api_keys import ApiKeys

        pending = dict(timestamps)
        result: dict[TopicPartition, tuple[int, int]] = {}
        deadline = self.deadline()
        refresh = False
        last_problem = ""
        skipped: list[TopicPartition] = []
        while pending:
            by_leader: dict[tuple[int, str], list[TopicPartition]] = {}
            for tp in pending:
                leader = self.leader(tp, refresh)
                if leader is None:
                    last_problem = f"{tp} has no leader"
                    if skip_leaderless:
                        skipped.append(tp)
                    continue
                by_leader.setdefault((leader[0], leader[1]), []).append(tp)
            refresh = False
            for tp in skipped:
                del pending[tp]
            skipped.clear()
            for (broker_id, address), tps in by_leader.items():
                topics: dict[str, list] = {}
                for tp in tps:
                    topics.setdefault(tp.topic, []).append({
                        "partition_index": tp.partition, "current_leader_epoch": -1, "timestamp": pending[tp]})
                try:
                    response = self._send(address, ApiKeys.LIST_OFFSETS, LIST_OFFSETS_VERSION, {
                        "replica_id": CONSUMER_REPLICA_ID, "isolation_level": isolation_level,
                        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]})
                except (OSError, ValueError) as e:
                    last_problem = f"ListOffsets to broker {broker_id} at {address} failed: {e}"
                    refresh = True
                    continue
                for topic in response.topics:
                    for p in topic.partitions:
                        tp = TopicPartition(str(topic.name), int(p.partition_index))
                        if tp not in pending:
                            continue
                        error = Errors.for_code(int(p.error_code))
                        if error is Errors.NONE:
                            result[tp] = (int(p.offset), int(p.timestamp))
                            del pending[tp]
                        elif error in LEADER_ERRORS:
                            last_problem = f"ListOffsets of {tp} from broker {broker_id}: {error.name}"
                            refresh = True
                        else:
                            raise KafkaLogBrokerException(
                                f"ListOffsets of {tp} from broker {broker_id} at {address} failed: {error.name}")
            if pending:
                if time.monotonic() >= deadline:
                    raise KafkaLogBrokerException(
                        f"No offsets for {', '.join(str(tp) for tp in sorted(pending))} from {self.config.describe()} "
                        f"within kafka.default.api.timeout.ms={self.config.setting('default.api.timeout.ms')} "
                        f"(last: {last_problem})")
                refresh = True
                self.backoff()
        return result

    def fetch(self, tp: TopicPartition, offset: int, isolation_level: int) -> tuple[int, Any]:
        """One Fetch of ``tp`` from ``offset`` to its leader: (leader id, the partition's answer).
        OSError when the connection fails; KafkaLogBrokerException while it has no leader."""
        from kafka_py.protocol.api_keys import ApiKeys

        leader = self.leader(tp)
        if leader is None:
            raise OSError(f"{tp} has no leader")
        broker_id, address, epoch = leader
        request = _FetchOne(tp, offset, -1, self.config.setting("fetch.max.wait.ms"),
                            self.config.setting("max.partition.fetch.bytes"), isolation_level)
        answer = self._send(address, ApiKeys.FETCH, FETCH_VERSION, request)
        if answer.error_code:
            return broker_id, _TopLevelError(answer.error_code)
        for topic, partitions in answer.responses:
            if topic != tp.topic:
                continue
            for p in partitions:
                if p.partition_index == tp.partition:
                    return broker_id, p
        raise KafkaLogBrokerException(f"The Fetch answer of broker {broker_id} at {address} lacks {tp}")

    def fetched_end(self, tp: TopicPartition, offset: int, isolation_level: int) -> Optional[int]:
        """The high watermark (last stable offset under read_committed) a Fetch answer of the
        leader reports, or None when it gives none: a second opinion on ListOffsets' latest,
        which some Kafka-compatible brokers answer lower (tansu 0.6)."""
        try:
            _broker, answer = self.fetch(tp, max(offset, 0), isolation_level)
        except (OSError, ValueError, KafkaLogBrokerException):
            return None
        if answer.error_code:
            return None
        if isolation_level == READ_COMMITTED_LEVEL and answer.last_stable_offset >= 0:
            return answer.last_stable_offset
        return answer.high_watermark if answer.high_watermark >= 0 else None

    def forget_leader(self, tp: TopicPartition) -> None:
        with self.lock:
            self.partitions.pop(tp, None)


class _TopLevelError:
    """A Fetch answer refused as a whole, shaped as a partition's answer."""

    def __init__(self, error_code: int) -> None:
        self.error_code = error_code
        self.high_watermark = -1
        self.last_stable_offset = -1
        self.log_start_offset = -1
        self.aborted_transactions = None
        self.records = None


_CLIENTS: dict[BrokerClientConfig, BrokerClient] = {}
_CLIENTS_LOCK = threading.Lock()


def client_for(config: BrokerClientConfig) -> BrokerClient:
    """The executor process's client of ``config``, made on first use and kept: Spark reuses
    its Python workers for task after task, and each keeps its connections."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(config)
        if client is None:
            client = _CLIENTS[config] = BrokerClient(config)
        return client


def drop_client(config: BrokerClientConfig) -> None:
    with _CLIENTS_LOCK:
        client = _CLIENTS.pop(config, None)
    if client is not None:
        client.close()
