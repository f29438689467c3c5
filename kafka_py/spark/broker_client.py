"""The Kafka protocol client of the ``kafka-log`` source's reads through the brokers.

No Kafka counterpart as one file: the requests Spark's Kafka source makes through its Java
clients (KafkaOffsetReaderAdmin asks for partitions and offsets, KafkaDataConsumer fetches
records), made here with kafka-py's own NetworkClient (kafka_py/clients/network_client.py,
one connection per broker through kafka_py/tools/broker_connections.BrokerConnections):

* ApiVersions, once per connection, before anything else is sent on it;
* Metadata for the topics, their partitions and each partition's leader;
* ListOffsets for the earliest and latest offsets, the latter at the read's isolation
  level (the high watermark, or the last stable offset under ``read_committed``), and for the
  offsets of timestamps, sent to each partition's leader;
* Fetch (the consumer's replica id -1, outside any fetch session) of one partition,
  written and read by the broker's own codec (kafka_py.clients.common.protocol.fast_fetch_request and
  fast_fetch_response) so that the records of the answer stay a view of the one buffer the
  answer was read into: the executor's Arrow conversion (kafka_py/spark/arrow_records.py)
  takes the batches from there, with no record object on the way.

Versions are negotiated as the Java client's NodeApiVersions does: each request goes at the
newest version that both this client (``CLIENT_VERSIONS``: Metadata 1-11, ListOffsets 1-6,
Fetch 0-12, the versions of Kafka 2.8.2 down to those of Kafka 0.10.1) and the broker the
connection leads to support. A broker without a version in common for an API fails the read
naming the API and both ranges; ``read_committed`` needs the isolation level of ListOffsets v2
and Fetch v4 (Kafka 0.11, KIP-98), and says so against an older broker. Below Metadata v4 a
request cannot forbid creating the topics it names, so there every topic is asked for and the
named ones picked out: a read never creates a topic, whatever the broker's
``auto.create.topics.enable``. A Fetch below v4 may be answered in message format v0 or v1
(the broker converts down for clients that old), which the executor decodes message by message.

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
import struct
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from kafka_py.clients.network_client import PreparedRequest
from kafka_py.clients.common.errors import InvalidRequestException, KafkaException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors

logger = logging.getLogger(__name__)

#: The (oldest, newest) version of each API that this client writes and reads. The oldest are
#: Kafka 0.10.1's: ListOffsets v1 is the first with timestamps (KIP-79), and Metadata v1 the
#: first whose null topic list means every topic.
CLIENT_VERSIONS: dict[ApiKeys, tuple[int, int]] = {
    ApiKeys.METADATA: (1, 11),
    ApiKeys.LIST_OFFSETS: (1, 6),
    ApiKeys.FETCH: (0, 12),
}
#: The oldest versions that carry an isolation level (Kafka 0.11, KIP-98): what a
#: ``read_committed`` read needs.
READ_COMMITTED_VERSIONS: dict[ApiKeys, int] = {ApiKeys.LIST_OFFSETS: 2, ApiKeys.FETCH: 4}
#: Metadata from this version on can say not to create the topics it names.
NO_AUTO_CREATE_METADATA_VERSION = 4
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


class KafkaLogUnsupportedVersionException(KafkaLogBrokerException):
    """A broker and this client have no version of an API in common (the Java client's
    UnsupportedVersionException): retrying does not cure it."""


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

    def __init__(self, version: int, tp: TopicPartition, offset: int, leader_epoch: int, max_wait_ms: int,
                 max_bytes: int, isolation_level: int) -> None:
        self.version = version
        self.tp = tp
        self.offset = offset
        self.leader_epoch = leader_epoch
        self.max_wait_ms = max_wait_ms
        self.max_bytes = max_bytes
        self.isolation_level = isolation_level

    def encode_frame(self, correlation_id: int, client_id: Optional[str]) -> bytes:
        from kafka_py.clients.common.protocol.fast_fetch_request import encode_fetch_request

        # session id 0, epoch -1: a full fetch outside any fetch session; min bytes 1: answer
        # as soon as there is anything
        partition = (self.tp.partition, self.leader_epoch, self.offset, -1, -1, self.max_bytes)
        return encode_fetch_request(self.version, correlation_id, client_id, CONSUMER_REPLICA_ID,
                                    self.max_wait_ms, 1, self.max_bytes, self.isolation_level, 0, -1,
                                    [(self.tp.topic, [partition])])

    def read_response(self, body: memoryview) -> Any:
        from kafka_py.clients.common.protocol.fast_fetch_response import read_fetch_response

        return read_fetch_response(self.version, body)


class _ApiVersionsOne(PreparedRequest):
    """An ApiVersions request of ``version``, whose answer is read as Kafka's clients read it:
    an answer carrying an error is in the layout of v0 whatever was asked (a broker sends
    UNSUPPORTED_VERSION that way to a client newer than itself, KIP-511)."""

    def __init__(self, version: int) -> None:
        self.version = version

    def encode_frame(self, correlation_id: int, client_id: Optional[str]) -> bytes:
        from kafka_py.clients.common.protocol.entities import build_entity
        from kafka_py.clients.common.protocol.headers import RequestHeader
        from kafka_py.clients.common.protocol.messages import encode_request, request_schema
        from kafka_py.clients.common.protocol.requests import CLIENT_SOFTWARE_NAME, CLIENT_SOFTWARE_VERSION

        header = RequestHeader.for_request(ApiKeys.API_VERSIONS, self.version, correlation_id, client_id)
        body = build_entity(request_schema(ApiKeys.API_VERSIONS, self.version), {
            "client_software_name": CLIENT_SOFTWARE_NAME, "client_software_version": CLIENT_SOFTWARE_VERSION})
        return encode_request(header, body)

    def read_response(self, body: memoryview) -> Any:
        from kafka_py.clients.common.protocol.messages import parse_response

        error_code = int.from_bytes(body[:2], "big", signed=True) if len(body) >= 2 else 0
        return parse_response(ApiKeys.API_VERSIONS, 0 if error_code else self.version, body)


class BrokerClient:
    """Connections to a cluster's brokers and the requests a read makes; one thread at a time."""

    def __init__(self, config: BrokerClientConfig) -> None:
        from kafka_py.core.admin.broker_connections import BrokerConnections

        self.config = config
        props = config.security_properties()
        props.setdefault("client.id", CLIENT_ID)
        self._connections = BrokerConnections(config.bootstrap_servers, props, CLIENT_ID)
        self._connections.request_timeout_ms = config.setting("request.timeout.ms")
        self._connections.connect_timeout_ms = config.setting("socket.connection.setup.timeout.ms")
        self.brokers: dict[int, str] = {}
        self.partitions: dict[TopicPartition, PartitionInfo] = {}
        # what each connection's ApiVersions answered, by address; gone with the connection
        self._api_versions: dict[str, dict[int, tuple[int, int]]] = {}
        self.lock = threading.Lock()

    def __getstate__(self) -> dict:
        # A stream's reader, and this client with it, travels pickled to Spark's workers: the
        # connections stay behind, and a copy makes its own when it is used.
        return {"config": self.config}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["config"])

    def close(self) -> None:
        self._connections.close()
        self._api_versions.clear()

    # ------------------------------------------------------------------ versions

    def api_versions(self, address: str) -> dict[int, tuple[int, int]]:
        """The (oldest, newest) version of each API the broker at ``address`` serves, by API
        key, as its ApiVersions answered on the current connection (asked on its first use)."""
        offered = self._api_versions.get(address)
        if offered is None:
            offered = self._ask_api_versions(address)
            self._api_versions[address] = offered
        return offered

    def _ask_api_versions(self, address: str) -> dict[int, tuple[int, int]]:
        version = ApiKeys.API_VERSIONS.latest_version
        for _ in range(2):
            response = self._exchange(address, ApiKeys.API_VERSIONS, version, _ApiVersionsOne(version))
            error = Errors.for_code(int(response.error_code))
            offered = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in response.api_keys}
            if error is Errors.UNSUPPORTED_VERSION and version > 0:
                # a broker older than this client names the ApiVersions versions it knows (KIP-511);
                # one that does not is asked with v0, which every broker since Kafka 0.10 answers
                version = max(0, min(offered.get(ApiKeys.API_VERSIONS.id, (0, 0))[1], version - 1))
                continue
            if error is not Errors.NONE:
                raise KafkaLogBrokerException(f"The broker at {address} answered ApiVersions with {error.name}")
            logger.debug("Broker at %s serves %s", address, offered)
            return offered
        raise KafkaLogUnsupportedVersionException(
            f"The broker at {address} ({self.config.describe()}) answered no version of ApiVersions")

    def usable_version(self, address: str, api: ApiKeys, read_committed: bool = False) -> int:
        """The version of ``api`` to send to the broker at ``address``: the newest that it and
        this client both support (and that carries the isolation level, for ``read_committed``)."""
        oldest, newest = CLIENT_VERSIONS[api]
        offered = self.api_versions(address).get(api.id)
        if offered is None:
            raise KafkaLogUnsupportedVersionException(
                f"The broker at {address} ({self.config.describe()}) does not serve {api.api_name} (this client "
                f"reads through versions {oldest} to {newest} of it)")
        version = min(newest, offered[1])
        if version < max(oldest, offered[0]):
            raise KafkaLogUnsupportedVersionException(
                f"The broker at {address} ({self.config.describe()}) serves {api.api_name} versions {offered[0]} "
                f"to {offered[1]}, and this client versions {oldest} to {newest}: no version in common")
        needed = READ_COMMITTED_VERSIONS.get(api) if read_committed else None
        if needed is not None and version < needed:
            raise KafkaLogUnsupportedVersionException(
                f"kafka.isolation.level=read_committed needs {api.api_name} version {needed} or later (Kafka 0.11), "
                f"and the broker at {address} ({self.config.describe()}) serves versions {offered[0]} to "
                f"{offered[1]}")
        return version

    # ------------------------------------------------------------------ requests

    def _exchange(self, address: str, api_key: ApiKeys, version: int, body: Any) -> Any:
        """One request on the connection to ``address``. A failure ends that connection, and
        what its ApiVersions said with it: the next connection may lead to a broker restarted
        at another version."""
        try:
            return self._connections.send(address, api_key, version, body)
        except BaseException:
            self._api_versions.pop(address, None)
            raise

    def _send_any(self, api_key: ApiKeys, values: Callable[[int], Any]) -> Any:
        """Send to the first bootstrap server or known broker that answers; ``values`` makes
        the request's body for the version negotiated with that broker."""
        from kafka_py.clients.common.security.errors import AuthenticationException
        from kafka_py.core.utils.command_line_utils import CommandError

        failures = []
        addresses = list(dict.fromkeys([*self.config.bootstrap_servers, *self.brokers.values()]))
        for address in addresses:
            try:
                version = self.usable_version(address, api_key)
                return self._exchange(address, api_key, version, values(version))
            except AuthenticationException as e:
                raise self._refused(address, e) from None
            except CommandError as e:
                raise KafkaLogClientConfigException(f"A kafka.* security option can't be used: {e}") from None
            except (OSError, ValueError) as e:
                failures.append(f"{address}: {e}")
        raise KafkaLogBrokerException(
            f"No broker of {self.config.describe()} answered ({'; '.join(failures)})")

    def _send(self, address: str, api_key: ApiKeys, values: Callable[[int], Any], read_committed: bool = False) -> Any:
        from kafka_py.clients.common.security.errors import AuthenticationException
        from kafka_py.core.utils.command_line_utils import CommandError

        try:
            version = self.usable_version(address, api_key, read_committed)
            return self._exchange(address, api_key, version, values(version))
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

        def request(version: int) -> dict:
            # below v4 naming a topic may create it: ask for every topic then
            named = topics is not None and version >= NO_AUTO_CREATE_METADATA_VERSION
            return {"topics": [{"name": t} for t in topics] if named else None,
                    "allow_auto_topic_creation": False, "include_cluster_authorized_operations": False,
                    "include_topic_authorized_operations": False}

        response = self._send_any(ApiKeys.METADATA, request)
        wanted = None if topics is None else set(topics)
        brokers = {int(b.node_id): f"{b.host}:{int(b.port)}" for b in response.brokers}
        found: dict[str, TopicInfo] = {}
        with self.lock:
            self.brokers.update(brokers)
            for topic in response.topics:
                if wanted is not None and str(topic.name) not in wanted:
                    continue
                partitions = {int(p.partition_index): PartitionInfo(int(p.leader_id),
                                                                     int(getattr(p, "leader_epoch", -1)),
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
                body = {"replica_id": CONSUMER_REPLICA_ID, "isolation_level": isolation_level,
                        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}
                try:
                    response = self._send(address, ApiKeys.LIST_OFFSETS, lambda _version: body,
                                          read_committed=isolation_level == READ_COMMITTED_LEVEL)
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
        leader = self.leader(tp)
        if leader is None:
            raise OSError(f"{tp} has no leader")
        broker_id, address, epoch = leader
        max_wait_ms = self.config.setting("fetch.max.wait.ms")
        max_bytes = self.config.setting("max.partition.fetch.bytes")
        try:
            answer = self._send(address, ApiKeys.FETCH,
                                lambda version: _FetchOne(version, tp, offset, -1, max_wait_ms, max_bytes,
                                                          isolation_level),
                                read_committed=isolation_level == READ_COMMITTED_LEVEL)
        except OSError as e:
            raise OSError(f"broker {broker_id} at {address}: {e}") from e
        except KafkaLogClientConfigException:
            raise
        except (ValueError, struct.error, IndexError, InvalidRequestException) as e:
            # An answer that does not parse has cost its connection (BrokerConnections.send drops
            # it): the reader retries on a new one, as after a connection that failed.
            raise OSError(f"broker {broker_id} at {address} sent a Fetch answer that does not parse: {e}") from e
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
