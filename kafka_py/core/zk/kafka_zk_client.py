"""Port of core/src/main/scala/kafka/zk/KafkaZkClient.scala, over kazoo, with the part of
core/src/main/scala/kafka/zookeeper/ZooKeeperClient.scala that Kafka keeps between the two.

Layering as in Kafka:

* ``ZooKeeperClient`` turns request objects (``GetDataRequest``, ``SetDataRequest``,
  ``MultiRequest`` ...) into pipelined kazoo calls and answers each with a response carrying a
  ZooKeeper result ``Code``. It owns the registries of ``ZNodeChangeHandler`` /
  ``ZNodeChildChangeHandler`` / ``StateChangeHandler`` and the session life cycle.
* ``KafkaZkClient`` is Kafka's vocabulary on top (register a broker, elect a controller, read
  and conditionally write partition states, ...), with the data formats of ``zk_data``.

Watches follow Kafka's rule: registering a handler sets no watch by itself; a watch is set by a
later exists / get-data (node handlers) or get-children with ``register_watch`` (child handlers)
on that path, which is how Kafka's controller arms them. After a watch fires, this client
re-arms it before calling the handler, so a change made while the handler runs is not missed.

Where kazoo and Kafka's Java client differ:

* kazoo does not re-send watches after a reconnect (the Java client does, with SetWatches).
  On a reconnect within the same session this client re-arms the watch of every registered
  handler and fires the handlers whose znode changed meanwhile, which is what SetWatches gives
  the Java client.
* When a session expires kazoo opens a new session by itself. Kafka's ZooKeeperClient instead
  calls ``before_initializing_session`` on every state handler, builds a new session, then calls
  ``after_initializing_session``. Here a reinitializer thread makes the same two calls around
  kazoo's new session (handlers see the same order), re-arming registered watches before the
  "after" call. Handlers must not assume no request ran on the new session in between.

Handlers are called on kazoo's callback thread (watches) or the reinitializer thread (session
events): like Kafka's, they should hand work to their own queue and return.
"""
from __future__ import annotations

import collections
import contextlib
import enum
import logging
import queue
import threading
import time as _time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from kazoo.client import KazooClient
from kazoo.exceptions import (
    EXCEPTIONS,
    NodeExistsError,
    RolledBackError,
    RuntimeInconsistency,
    ZookeeperError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import EventType, KazooState, KeeperState, ZnodeStat
from kazoo.retry import KazooRetry

from kafka_py.core.api.leader_and_isr import (
    INITIAL_CONTROLLER_EPOCH,
    INITIAL_CONTROLLER_EPOCH_ZK_VERSION,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
)
from kafka_py.core.cluster.broker import Broker
from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup, explicit_metric_name
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.zk.kazoo_handler import PollingThreadingHandler
from kafka_py.core.security.authorizer.acl_entry import RESOURCE_TYPES
from kafka_py.core.zk.zk_data import (
    BrokerIdsZNode,
    BrokerIdZNode,
    BrokerInfo,
    BrokerSequenceIdZNode,
    ClusterIdZNode,
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityChangeNotificationZNode,
    ConfigEntityTypeZNode,
    ConfigEntityZNode,
    ConfigType,
    ConsumerOffset,
    ControllerEpochZNode,
    ControllerZNode,
    DeleteTopicsTopicZNode,
    DeleteTopicsZNode,
    DelegationTokenChangeNotificationSequenceZNode,
    DelegationTokenChangeNotificationZNode,
    DelegationTokenInfoZNode,
    DelegationTokensZNode,
    FeatureZNode,
    IsrChangeNotificationSequenceZNode,
    IsrChangeNotificationZNode,
    LogDirEventNotificationSequenceZNode,
    LogDirEventNotificationZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    ReplicaAssignment,
    ResourceZNode,
    TopicIdReplicaAssignment,
    TopicPartitionStateZNode,
    TopicPartitionsZNode,
    TopicPartitionZNode,
    TopicsZNode,
    TopicZNode,
    ZkAclChangeStore,
    ZkAclStore,
    ZkData,
    ZkVersion,
    random_uuid,
)

from kafka_py.clients.common.errors import ControllerMovedException  # noqa: E402  (re-exported)

logger = logging.getLogger(__name__)

# What KafkaZkClient.stale_session_wait_ms adds to the session timeout: two of ZooKeeper's
# ticks at its default tickTime (3000 ms, which config/zookeeper.properties keeps), the
# granularity at which it expires sessions.
STALE_SESSION_MARGIN_MS = 6000


class ZooKeeperClientException(KafkaException):
    pass


class ZooKeeperClientExpiredException(ZooKeeperClientException):
    pass


class ZooKeeperClientAuthFailedException(ZooKeeperClientException):
    pass


class BrokerIdInUseException(NodeExistsError):
    """/brokers/ids/<id> is held by a live broker (its session outlived its timeout)."""


class ZooKeeperClientTimeoutException(ZooKeeperClientException):
    pass


class Code(enum.IntEnum):
    """ZooKeeper's result codes (org.apache.zookeeper.KeeperException.Code)."""

    OK = 0
    SYSTEMERROR = -1
    RUNTIMEINCONSISTENCY = -2
    DATAINCONSISTENCY = -3
    CONNECTIONLOSS = -4
    MARSHALLINGERROR = -5
    UNIMPLEMENTED = -6
    OPERATIONTIMEOUT = -7
    BADARGUMENTS = -8
    UNKNOWNSESSION = -12
    NEWCONFIGNOQUORUM = -13
    RECONFIGINPROGRESS = -14
    APIERROR = -100
    NONODE = -101
    NOAUTH = -102
    BADVERSION = -103
    NOCHILDRENFOREPHEMERALS = -108
    NODEEXISTS = -110
    NOTEMPTY = -111
    SESSIONEXPIRED = -112
    INVALIDCALLBACK = -113
    INVALIDACL = -114
    AUTHFAILED = -115
    SESSIONMOVED = -118
    NOTREADONLY = -119
    EPHEMERALONLOCALSESSION = -120
    NOWATCHER = -121
    REQUESTTIMEOUT = -122
    RECONFIGDISABLED = -123
    SESSIONCLOSEDREQUIRESASLAUTH = -124
    QUOTAEXCEEDED = -125
    THROTTLEDOP = -127


def _code_of(exc: BaseException) -> Code:
    try:
        return Code(getattr(exc, "code", Code.SYSTEMERROR))
    except ValueError:
        return Code.SYSTEMERROR


def keeper_exception(code: Code, path: str | None = None) -> ZookeeperError:
    """The kazoo exception for a result code (Kafka's ``KeeperException.create(code, path)``)."""
    exc_type = EXCEPTIONS[int(code)] if int(code) in EXCEPTIONS else ZookeeperError
    return exc_type(f"KeeperErrorCode = {code.name}" + (f" for {path}" if path else ""))


class CreateMode(enum.Enum):
    PERSISTENT = (False, False)
    EPHEMERAL = (True, False)
    PERSISTENT_SEQUENTIAL = (False, True)
    EPHEMERAL_SEQUENTIAL = (True, True)

    @property
    def ephemeral(self) -> bool:
        return self.value[0]

    @property
    def sequential(self) -> bool:
        return self.value[1]


# ---------------------------------------------------------------------------------------------
# Handlers (Kafka's StateChangeHandler / ZNodeChangeHandler / ZNodeChildChangeHandler traits)
# ---------------------------------------------------------------------------------------------

# a handler's callback; what it returns is ignored (the controller's return the event they queue)
Callback = Callable[[], object]

class StateChangeHandler:
    """Told about session expiry. Subclass and override, or pass callables."""

    def __init__(self, name: str, before_initializing_session: Callback | None = None,
                 after_initializing_session: Callback | None = None,
                 on_auth_failure: Callback | None = None) -> None:
        self.name = name
        self._before = before_initializing_session
        self._after = after_initializing_session
        self._auth = on_auth_failure

    def before_initializing_session(self) -> None:
        if self._before:
            self._before()

    def after_initializing_session(self) -> None:
        if self._after:
            self._after()

    def on_auth_failure(self) -> None:
        if self._auth:
            self._auth()


class ZNodeChangeHandler:
    """Told when the znode at ``path`` is created, deleted or has its data changed."""

    def __init__(self, path: str, on_creation: Callback | None = None,
                 on_deletion: Callback | None = None,
                 on_data_change: Callback | None = None) -> None:
        self.path = path
        self._on_creation = on_creation
        self._on_deletion = on_deletion
        self._on_data_change = on_data_change

    def handle_creation(self) -> None:
        if self._on_creation:
            self._on_creation()

    def handle_deletion(self) -> None:
        if self._on_deletion:
            self._on_deletion()

    def handle_data_change(self) -> None:
        if self._on_data_change:
            self._on_data_change()


class ZNodeChildChangeHandler:
    """Told when the children of the znode at ``path`` change."""

    def __init__(self, path: str, on_child_change: Callback | None = None) -> None:
        self.path = path
        self._on_child_change = on_child_change

    def handle_child_change(self) -> None:
        if self._on_child_change:
            self._on_child_change()


# ---------------------------------------------------------------------------------------------
# Requests and responses
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CreateOp:
    path: str
    data: bytes | None
    acl: Sequence[Any]
    create_mode: CreateMode


@dataclass(frozen=True)
class DeleteOp:
    path: str
    version: int


@dataclass(frozen=True)
class SetDataOp:
    path: str
    data: bytes
    version: int


@dataclass(frozen=True)
class CheckOp:
    path: str
    version: int


ZkOp = CreateOp | DeleteOp | SetDataOp | CheckOp


@dataclass(frozen=True)
class ZkOpResult:
    """One op of a multi and its raw kazoo result: created path (create), ZnodeStat (set data),
    True (delete, check), or the kazoo exception of a failed or rolled-back op."""

    zk_op: ZkOp
    raw_op_result: Any


@dataclass(frozen=True)
class CreateRequest:
    path: str
    data: bytes | None
    acl: Sequence[Any]
    create_mode: CreateMode
    ctx: Any = None


@dataclass(frozen=True)
class DeleteRequest:
    path: str
    version: int
    ctx: Any = None


@dataclass(frozen=True)
class ExistsRequest:
    path: str
    ctx: Any = None


@dataclass(frozen=True)
class GetDataRequest:
    path: str
    ctx: Any = None


@dataclass(frozen=True)
class SetDataRequest:
    path: str
    data: bytes
    version: int
    ctx: Any = None


@dataclass(frozen=True)
class GetChildrenRequest:
    path: str
    register_watch: bool
    ctx: Any = None


@dataclass(frozen=True)
class MultiRequest:
    zk_ops: Sequence[ZkOp]
    ctx: Any = None

    @property
    def path(self) -> None:
        return None


AsyncRequest = (CreateRequest | DeleteRequest | ExistsRequest | GetDataRequest | SetDataRequest
                | GetChildrenRequest | MultiRequest)


@dataclass
class AsyncResponse:
    result_code: Code
    path: str | None
    ctx: Any
    error: ZookeeperError | None = field(default=None, repr=False)

    @property
    def result_exception(self) -> ZookeeperError | None:
        if self.result_code == Code.OK:
            return None
        return self.error if self.error is not None else keeper_exception(self.result_code, self.path)

    def maybe_throw(self) -> None:
        if self.result_code != Code.OK:
            raise self.result_exception  # type: ignore[misc]


@dataclass
class CreateResponse(AsyncResponse):
    name: str | None = None


@dataclass
class DeleteResponse(AsyncResponse):
    pass


@dataclass
class ExistsResponse(AsyncResponse):
    stat: ZnodeStat | None = None


@dataclass
class GetDataResponse(AsyncResponse):
    data: bytes | None = None
    stat: ZnodeStat | None = None


@dataclass
class SetDataResponse(AsyncResponse):
    stat: ZnodeStat | None = None


@dataclass
class GetChildrenResponse(AsyncResponse):
    children: list[str] = field(default_factory=list)
    stat: ZnodeStat | None = None


@dataclass
class MultiResponse(AsyncResponse):
    zk_op_results: list[ZkOpResult] | None = None


def parse_chroot(connect_string: str) -> tuple[str, str | None]:
    """Split ``host:port,host:port/chroot`` into the host list and the chroot (or None)."""
    index = connect_string.find("/")
    if index > 0:
        return connect_string[:index], connect_string[index:]
    return connect_string, None


# ---------------------------------------------------------------------------------------------
# ZooKeeperClient
# ---------------------------------------------------------------------------------------------

_UNSEEN = object()


class ZooKeeperClientMetrics(KafkaMetricsGroup):
    """Kafka's ZooKeeperClient metrics: ``kafka.server:type=ZooKeeperClientMetrics,
    name=ZooKeeperRequestLatencyMs`` (a histogram of each request's time to its answer) and the
    session state meters ``kafka.server:type=SessionExpireListener,name=ZooKeeper<X>PerSec``
    (Expires, Disconnects, SyncConnects, AuthFailures; ReadOnlyConnects and
    SaslAuthentications exist and stay at 0 here). One set per process, as Kafka's.

    Each ZooKeeperClient registers ``kafka.server:type=SessionExpireListener,name=SessionState``
    itself (``session_state_name``): the state of its connection under the name Java's
    ``ZooKeeper.States`` gives it (the newest client of a process holds the name, and takes it
    away when it closes, as Kafka's removes it)."""

    def __init__(self) -> None:
        registry = self.metrics_registry
        self.latency = registry.new_histogram(
            explicit_metric_name("kafka.server", "ZooKeeperClientMetrics", "ZooKeeperRequestLatencyMs"))

        def meter(name: str) -> Any:
            return registry.new_meter(explicit_metric_name("kafka.server", "SessionExpireListener", name), "events")

        self.sync_connects = meter("ZooKeeperSyncConnectsPerSec")
        self.disconnects = meter("ZooKeeperDisconnectsPerSec")
        self.expires = meter("ZooKeeperExpiresPerSec")
        self.auth_failures = meter("ZooKeeperAuthFailuresPerSec")
        self.read_only_connects = meter("ZooKeeperReadOnlyConnectsPerSec")
        self.sasl_authentications = meter("ZooKeeperSaslAuthenticationsPerSec")

    def time_request(self, async_result: Any) -> None:
        """Record the request's latency when kazoo's connection thread sets its answer."""
        start = _time.monotonic_ns()
        latency = self.latency
        async_result.rawlink(lambda _result: latency.update((_time.monotonic_ns() - start) / 1e6))


# Java's ZooKeeper.States, what Kafka's SessionState gauge shows.
ZOOKEEPER_STATES = ("CONNECTING", "ASSOCIATING", "CONNECTED", "CONNECTEDREADONLY", "CLOSED", "AUTH_FAILED",
                    "NOT_CONNECTED")
# kazoo's KeeperState -> ZooKeeper.States. A Java client whose session expired is CLOSED
# (Kafka then makes a new one, CONNECTING); kazoo's keeps going and says EXPIRED_SESSION.
_JAVA_STATES = {KeeperState.CONNECTING: "CONNECTING", KeeperState.CONNECTED: "CONNECTED",
                KeeperState.CONNECTED_RO: "CONNECTEDREADONLY", KeeperState.AUTH_FAILED: "AUTH_FAILED",
                KeeperState.EXPIRED_SESSION: "CLOSED", KeeperState.CLOSED: "CLOSED"}
SESSION_STATE_METRIC = explicit_metric_name("kafka.server", "SessionExpireListener", "SessionState")

_zk_client_metrics: "ZooKeeperClientMetrics | None" = None


def zookeeper_client_metrics() -> ZooKeeperClientMetrics:
    global _zk_client_metrics
    if _zk_client_metrics is None:
        _zk_client_metrics = ZooKeeperClientMetrics()
    return _zk_client_metrics


class ZooKeeperClient:
    """Pipelined requests, watch handlers and session life cycle over one kazoo client."""

    RETRY_BACKOFF_MS = 1000

    def __init__(self, connect_string: str, session_timeout_ms: int, connection_timeout_ms: int,
                 max_in_flight_requests: int = 10, time: Time = Time.SYSTEM, name: str | None = None) -> None:
        self.logger = IdentLogger(logger, f"[ZooKeeperClient {name}] " if name else "[ZooKeeperClient] ")
        self._connect_string = connect_string
        self._time = time
        self._max_in_flight = max(1, max_in_flight_requests)
        self._handlers_lock = threading.RLock()
        self._znode_change_handlers: dict[str, ZNodeChangeHandler] = {}
        self._znode_child_change_handlers: dict[str, ZNodeChildChangeHandler] = {}
        self._state_change_handlers: dict[str, StateChangeHandler] = {}
        # Last stat seen by a watched read of each path (None: the znode was absent). A reconnect
        # compares against these to tell which watches would have fired while disconnected.
        self._node_stats: dict[str, ZnodeStat | None] = {}
        self._child_stats: dict[str, ZnodeStat | None] = {}
        self._state = threading.Condition()
        self._connected = False
        self._closing = False
        self._auth_failed = False
        self._session_id: int | None = None
        self._before_init_called = False
        self._session_events: queue.SimpleQueue = queue.SimpleQueue()
        # Per thread: the monotonic deadline (ms) of a requests_bounded_by block, else absent.
        self._deadlines = threading.local()
        self._metrics = zookeeper_client_metrics()

        self.logger.info("Initializing a new session to %s.", connect_string)
        # Reconnect forever with short backoff: the broker must come back as soon as ZooKeeper does.
        retry = KazooRetry(max_tries=-1, delay=0.1, backoff=2, max_delay=1.0)
        self._zk = KazooClient(hosts=connect_string, timeout=session_timeout_ms / 1000.0,
                               connection_retry=retry, handler=PollingThreadingHandler(),
                               logger=logging.getLogger("kazoo.client"))
        self._zk.add_listener(self._on_state_change)
        registry = self._metrics.metrics_registry
        registry.remove_metric(SESSION_STATE_METRIC)
        self._session_state_gauge = registry.new_state_gauge(SESSION_STATE_METRIC, self.session_state_name,
                                                             ZOOKEEPER_STATES)
        prefix = "".join(name.split()) + "-" if name else ""
        self._reinitializer = threading.Thread(target=self._run_reinitializer, daemon=True,
                                               name=f"zk-client-{prefix}reinit")
        self._reinitializer.start()
        try:
            self._zk.start(timeout=connection_timeout_ms / 1000.0)
        except Exception as e:
            self.close()
            raise ZooKeeperClientTimeoutException(
                f"Timed out waiting for connection to {connect_string}: {e}") from e
        self.logger.info("Connected.")

    # -- state ---------------------------------------------------------------------------

    @property
    def connection_state(self) -> str:
        return self._zk.client_state

    def session_state_name(self) -> str:
        """The connection's state as Java's ZooKeeper.States names it (Kafka's SessionState)."""
        if self._closing:
            return "CLOSED"
        return _JAVA_STATES.get(self._zk.client_state, "NOT_CONNECTED")

    @property
    def session_id(self) -> int | None:
        client_id = self._zk.client_id
        return client_id[0] if client_id else self._session_id

    @property
    def current_zookeeper(self) -> KazooClient:
        """The kazoo client (tests use it to reach the session id and password)."""
        return self._zk

    @contextlib.contextmanager
    def requests_bounded_by(self, timeout_ms: int) -> Iterator[None]:
        """Within this block, this thread waits at most ``timeout_ms`` in all for the connection
        and for replies; past that a request raises ZooKeeperClientTimeoutException.

        Every other wait of this client is unbounded, as Kafka's is: a broker keeps retrying
        until ZooKeeper is back. A broker that is stopping must not (its controlled shutdown
        looks up the controller in ZooKeeper). A request given up on stays queued in the
        session; it is answered or dropped when the connection comes back or the client closes.
        """
        previous = getattr(self._deadlines, "deadline_ms", None)
        deadline = self._time.hi_res_milliseconds() + timeout_ms
        self._deadlines.deadline_ms = deadline if previous is None else min(previous, deadline)
        try:
            yield
        finally:
            self._deadlines.deadline_ms = previous

    def _remaining_ms(self) -> float | None:
        """Time left in this thread's requests_bounded_by block (None: unbounded)."""
        deadline = getattr(self._deadlines, "deadline_ms", None)
        return None if deadline is None else deadline - self._time.hi_res_milliseconds()

    def wait_until_connected(self, timeout_ms: int | None = None) -> None:
        bounded = self._remaining_ms()
        if bounded is not None:
            timeout_ms = bounded if timeout_ms is None else min(timeout_ms, bounded)
        deadline = None if timeout_ms is None else self._time.hi_res_milliseconds() + timeout_ms
        with self._state:
            while not self._connected:
                if self._closing:
                    raise ZooKeeperClientExpiredException("Client closed while waiting for connection")
                if self._auth_failed:
                    raise ZooKeeperClientAuthFailedException("Auth failed either before or while waiting for connection")
                remaining = None if deadline is None else (deadline - self._time.hi_res_milliseconds()) / 1000.0
                if remaining is not None and remaining <= 0:
                    raise ZooKeeperClientTimeoutException(
                        f"Timed out waiting for connection while in state: {self._zk.client_state}")
                # Woken by the state listener; the bound only keeps a close() from being missed.
                self._state.wait(1.0 if remaining is None else min(remaining, 1.0))

    def _on_state_change(self, state: str) -> None:
        # Runs on kazoo's connection thread: must not block, so session work is queued.
        if state == KazooState.CONNECTED:
            self._metrics.sync_connects.mark()
            client_id = self._zk.client_id
            with self._state:
                self._connected = True
                self._state.notify_all()
            self._session_events.put(("connected", client_id[0] if client_id else None))
        elif state == KazooState.SUSPENDED:
            self._metrics.disconnects.mark()
            with self._state:
                self._connected = False
        elif state == KazooState.LOST:
            with self._state:
                self._connected = False
                closing = self._closing
                if self._zk.client_state == KeeperState.AUTH_FAILED:
                    self._auth_failed = True
                self._state.notify_all()
            if not closing:
                kind = "auth_failed" if self._auth_failed else "expired"
                (self._metrics.auth_failures if self._auth_failed else self._metrics.expires).mark()
                self._session_events.put((kind, None))

    def _run_reinitializer(self) -> None:
        while True:
            kind, session_id = self._session_events.get()
            if kind == "stop":
                return
            try:
                if kind == "expired":
                    self.logger.info("Session expired.")
                    self._call_before_initializing_session()
                elif kind == "auth_failed":
                    self.logger.error("Auth failed.")
                    for handler in self._state_handlers():
                        self._safely(handler.name, handler.on_auth_failure)
                elif kind == "connected":
                    self._on_connected(session_id)
            except ZooKeeperClientException:
                if not self._closing:
                    self.logger.exception("Error handling session event %s", kind)
            except Exception:
                self.logger.exception("Error handling session event %s", kind)

    def _on_connected(self, session_id: int | None) -> None:
        if self._session_id is None:
            self._session_id = session_id
        elif session_id == self._session_id:
            # Same session, new connection: kazoo dropped its watches, so set them again and
            # report what changed meanwhile (the Java client's SetWatches does the same).
            self._rearm_watches(fire=True)
        else:
            self.logger.info("New session 0x%x replaces expired session 0x%x.",
                             session_id or 0, self._session_id)
            self._call_before_initializing_session()
            self._session_id = session_id
            self._rearm_watches(fire=False)
            self._before_init_called = False
            for handler in self._state_handlers():
                self._safely(handler.name, handler.after_initializing_session)

    def _call_before_initializing_session(self) -> None:
        if self._before_init_called:
            return
        self._before_init_called = True
        for handler in self._state_handlers():
            self._safely(handler.name, handler.before_initializing_session)

    def _state_handlers(self) -> list[StateChangeHandler]:
        with self._handlers_lock:
            return list(self._state_change_handlers.values())

    def _safely(self, name: str, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:
            self.logger.exception("Uncaught error in handler %s", name)

    # -- handler registry -------------------------------------------------------------------

    def register_znode_change_handler(self, handler: ZNodeChangeHandler) -> None:
        with self._handlers_lock:
            self._znode_change_handlers[handler.path] = handler

    def unregister_znode_change_handler(self, path: str) -> None:
        with self._handlers_lock:
            self._znode_change_handlers.pop(path, None)
            self._node_stats.pop(path, None)

    def register_znode_child_change_handler(self, handler: ZNodeChildChangeHandler) -> None:
        with self._handlers_lock:
            self._znode_child_change_handlers[handler.path] = handler

    def unregister_znode_child_change_handler(self, path: str) -> None:
        with self._handlers_lock:
            self._znode_child_change_handlers.pop(path, None)
            self._child_stats.pop(path, None)

    def register_state_change_handler(self, handler: StateChangeHandler | None) -> None:
        if handler is not None:
            with self._handlers_lock:
                self._state_change_handlers[handler.name] = handler

    def unregister_state_change_handler(self, name: str) -> None:
        with self._handlers_lock:
            self._state_change_handlers.pop(name, None)

    # -- watches ----------------------------------------------------------------------------

    def _should_watch(self, request: AsyncRequest) -> bool:
        with self._handlers_lock:
            if isinstance(request, GetChildrenRequest):
                return request.register_watch and request.path in self._znode_child_change_handlers
            return request.path in self._znode_change_handlers

    def _process_data_watch(self, event: Any) -> None:
        if event.type == EventType.NONE:
            return  # connection-state notice from kazoo; watches are re-armed on reconnect
        with self._handlers_lock:
            handler = self._znode_change_handlers.get(event.path)
        if handler is None:
            return
        self._rearm(ExistsRequest(event.path))
        if event.type == EventType.CREATED:
            self._safely(event.path, handler.handle_creation)
        elif event.type == EventType.DELETED:
            self._safely(event.path, handler.handle_deletion)
        elif event.type == EventType.CHANGED:
            self._safely(event.path, handler.handle_data_change)

    def _process_child_watch(self, event: Any) -> None:
        # A deleted parent ends its child watch without a child event, as in ZooKeeper itself.
        if event.type != EventType.CHILD:
            return
        with self._handlers_lock:
            handler = self._znode_child_change_handlers.get(event.path)
        if handler is None:
            return
        self._rearm(GetChildrenRequest(event.path, register_watch=True))
        self._safely(event.path, handler.handle_child_change)

    def _rearm(self, request: AsyncRequest) -> None:
        # Waits for the reply (kazoo's connection thread delivers it, so this cannot deadlock the
        # callback thread): once the handler runs, any later change is certain to fire again.
        # If the connection is down the reconnect path re-arms instead.
        try:
            async_result, watched = self._send(request)
            self._metrics.time_request(async_result)
            self._complete(request, async_result, watched)
        except Exception:
            self.logger.exception("Could not re-arm the watch on %s", request.path)

    def _rearm_watches(self, fire: bool) -> None:
        with self._handlers_lock:
            node_handlers = dict(self._znode_change_handlers)
            child_handlers = dict(self._znode_child_change_handlers)
            old_node_stats = {p: self._node_stats.get(p, _UNSEEN) for p in node_handlers}
            old_child_stats = {p: self._child_stats.get(p, _UNSEEN) for p in child_handlers}
        requests: list[AsyncRequest] = [ExistsRequest(p) for p in node_handlers]
        requests += [GetChildrenRequest(p, register_watch=True) for p in child_handlers]
        responses = self.handle_requests_until_connected(requests)
        if not fire:
            return
        for request, response in zip(requests, responses):
            path = request.path
            if isinstance(request, ExistsRequest):
                old = old_node_stats[path]
                if old is _UNSEEN or response.result_code not in (Code.OK, Code.NONODE):
                    continue
                new = response.stat
                handler = node_handlers[path]
                if old is None and new is not None:
                    self._safely(path, handler.handle_creation)
                elif old is not None and new is None:
                    self._safely(path, handler.handle_deletion)
                elif old is not None and new is not None and (old.mzxid != new.mzxid or old.czxid != new.czxid):
                    self._safely(path, handler.handle_data_change)
            else:
                old = old_child_stats[path]
                if old is _UNSEEN or old is None or response.result_code != Code.OK:
                    continue
                if response.stat.pzxid != old.pzxid or response.stat.czxid != old.czxid:
                    self._safely(path, child_handlers[path].handle_child_change)

    # -- requests ---------------------------------------------------------------------------

    def handle_request(self, request: AsyncRequest) -> AsyncResponse:
        return self.handle_requests([request])[0]

    def handle_requests(self, requests: Sequence[AsyncRequest]) -> list[AsyncResponse]:
        """Send all requests pipelined (at most max.in.flight at once); responses in request order."""
        responses: list[AsyncResponse | None] = [None] * len(requests)
        in_flight: collections.deque = collections.deque()
        for index, request in enumerate(requests):
            if len(in_flight) >= self._max_in_flight:
                done_index, done_request, async_result, watched = in_flight.popleft()
                responses[done_index] = self._complete(done_request, async_result, watched)
            async_result, watched = self._send(request)
            self._metrics.time_request(async_result)
            in_flight.append((index, request, async_result, watched))
        while in_flight:
            done_index, done_request, async_result, watched = in_flight.popleft()
            responses[done_index] = self._complete(done_request, async_result, watched)
        return responses  # type: ignore[return-value]

    def handle_requests_until_connected(self, requests: Sequence[AsyncRequest]) -> list[AsyncResponse]:
        """handle_requests, re-sending those lost with the connection once it is back."""
        responses: list[AsyncResponse | None] = [None] * len(requests)
        remaining = list(enumerate(requests))
        while remaining:
            batch = self.handle_requests([request for _, request in remaining])
            retry = []
            for (index, request), response in zip(remaining, batch):
                if response.result_code == Code.CONNECTIONLOSS:
                    retry.append((index, request))
                else:
                    responses[index] = response
            remaining = retry
            if remaining:
                self.wait_until_connected()
        return responses  # type: ignore[return-value]

    def _send(self, request: AsyncRequest) -> tuple[Any, bool]:
        zk = self._zk
        if isinstance(request, ExistsRequest):
            watched = self._should_watch(request)
            return zk.exists_async(request.path, watch=self._process_data_watch if watched else None), watched
        if isinstance(request, GetDataRequest):
            watched = self._should_watch(request)
            return zk.get_async(request.path, watch=self._process_data_watch if watched else None), watched
        if isinstance(request, GetChildrenRequest):
            watched = self._should_watch(request)
            return zk.get_children_async(request.path, watch=self._process_child_watch if watched else None,
                                         include_data=True), watched
        if isinstance(request, CreateRequest):
            return zk.create_async(request.path, request.data, acl=list(request.acl),
                                   ephemeral=request.create_mode.ephemeral,
                                   sequence=request.create_mode.sequential), False
        if isinstance(request, SetDataRequest):
            return zk.set_async(request.path, request.data, version=request.version), False
        if isinstance(request, DeleteRequest):
            return zk.delete_async(request.path, version=request.version), False
        if isinstance(request, MultiRequest):
            transaction = zk.transaction()
            for op in request.zk_ops:
                if isinstance(op, CreateOp):
                    transaction.create(op.path, op.data if op.data is not None else b"", acl=list(op.acl),
                                       ephemeral=op.create_mode.ephemeral, sequence=op.create_mode.sequential)
                elif isinstance(op, SetDataOp):
                    transaction.set_data(op.path, op.data, version=op.version)
                elif isinstance(op, DeleteOp):
                    transaction.delete(op.path, version=op.version)
                elif isinstance(op, CheckOp):
                    transaction.check(op.path, op.version)
                else:
                    raise TypeError(f"not a ZooKeeper op: {op!r}")
            return transaction.commit_async(), False
        raise TypeError(f"not a ZooKeeper request: {request!r}")

    def _complete(self, request: AsyncRequest, async_result: Any, watched: bool) -> AsyncResponse:
        value: Any = None
        error: ZookeeperError | None = None
        remaining_ms = self._remaining_ms()
        try:
            if remaining_ms is None:
                value = async_result.get()
            else:
                # kazoo queues a request while disconnected and answers it only once connected
                value = async_result.get(timeout=max(0.0, remaining_ms) / 1000.0)
        except ZookeeperError as e:
            error = e
        except KazooTimeoutError as e:
            raise ZooKeeperClientTimeoutException(
                f"No reply to a request on {request.path} in time, in state: {self._zk.client_state}") from e
        code = Code.OK if error is None else _code_of(error)
        path, ctx = request.path, request.ctx
        if isinstance(request, ExistsRequest):
            if error is None and value is None:
                code = Code.NONODE
            if watched and code in (Code.OK, Code.NONODE):
                self._remember(self._node_stats, self._znode_change_handlers, path, value)
            return ExistsResponse(code, path, ctx, error, stat=value)
        if isinstance(request, GetDataRequest):
            data, stat = value if error is None else (None, None)
            if watched and code == Code.OK:
                self._remember(self._node_stats, self._znode_change_handlers, path, stat)
            return GetDataResponse(code, path, ctx, error, data=data, stat=stat)
        if isinstance(request, GetChildrenRequest):
            children, stat = value if error is None else ([], None)
            if watched and code == Code.OK:
                self._remember(self._child_stats, self._znode_child_change_handlers, path, stat)
            return GetChildrenResponse(code, path, ctx, error, children=list(children), stat=stat)
        if isinstance(request, CreateRequest):
            return CreateResponse(code, path, ctx, error, name=value)
        if isinstance(request, SetDataRequest):
            return SetDataResponse(code, path, ctx, error, stat=value)
        if isinstance(request, DeleteRequest):
            return DeleteResponse(code, path, ctx, error)
        # MultiRequest: a failed multi reports, per op, the error that failed it and
        # "rolled back" / "runtime inconsistency" for the ops around it.
        if error is not None:
            return MultiResponse(code, None, ctx, error, zk_op_results=None)
        results = [ZkOpResult(op, raw) for op, raw in zip(request.zk_ops, value)]
        for result in results:
            raw = result.raw_op_result
            if isinstance(raw, ZookeeperError) and not isinstance(raw, (RolledBackError, RuntimeInconsistency)):
                return MultiResponse(_code_of(raw), result.zk_op.path, ctx, raw, zk_op_results=results)
        return MultiResponse(Code.OK, None, ctx, None, zk_op_results=results)

    def _remember(self, stats: dict[str, ZnodeStat | None], handlers: Mapping[str, Any], path: str,
                  stat: ZnodeStat | None) -> None:
        # Only while the path's handler is registered: its unregistering may have come
        # between the watched read's send and its reply, and a stat kept after that would
        # name a deleted topic's znode for the rest of the broker's life.
        with self._handlers_lock:
            if path in handlers:
                stats[path] = stat

    # -- close ------------------------------------------------------------------------------

    def close(self) -> None:
        self.logger.info("Closing.")
        with self._state:
            self._closing = True
            self._state.notify_all()
        self._session_events.put(("stop", None))
        if threading.current_thread() is not self._reinitializer:
            self._reinitializer.join(timeout=30)
        with self._handlers_lock:
            self._znode_change_handlers.clear()
            self._znode_child_change_handlers.clear()
            self._state_change_handlers.clear()
        try:
            self._zk.stop()
        finally:
            self._zk.close()
            registry = self._metrics.metrics_registry
            if registry.get(SESSION_STATE_METRIC) is self._session_state_gauge:
                registry.remove_metric(SESSION_STATE_METRIC)
        self.logger.info("Closed.")


# ---------------------------------------------------------------------------------------------
# KafkaZkClient
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class UpdateLeaderAndIsrResult:
    """Per partition: the written LeaderAndIsr (with its new zk_version) or the exception that
    failed it; partitions whose write lost a version race are listed for a retry."""

    finished_partitions: Mapping[TopicPartition, LeaderAndIsr | Exception]
    partitions_to_retry: Sequence[TopicPartition]


class KafkaZkClient:
    """Kafka's operations on ZooKeeper. ``expected_controller_epoch_zk_version`` arguments fence
    a write on the version of /controller_epoch, so a deposed controller's write fails with
    ControllerMovedException (-1 writes unfenced)."""

    def __init__(self, connect_string: str, is_secure: bool = False, session_timeout_ms: int = 18000,
                 connection_timeout_ms: int | None = None, max_in_flight_requests: int = 10,
                 time: Time = Time.SYSTEM, name: str | None = None,
                 create_chroot_if_missing: bool = True) -> None:
        connection_timeout_ms = session_timeout_ms if connection_timeout_ms is None else connection_timeout_ms
        hosts, chroot = parse_chroot(connect_string)
        if chroot is not None and chroot != "/" and create_chroot_if_missing:
            # A chrooted client cannot create its own root; a short-lived client on the bare
            # hosts does it first, as KafkaServer.initZkClient does.
            root_client = KafkaZkClient(hosts, is_secure, session_timeout_ms, connection_timeout_ms,
                                        max_in_flight_requests, time, name, create_chroot_if_missing=False)
            try:
                root_client.make_sure_persistent_path_exists(chroot.rstrip("/"))
                logger.info("Created zookeeper path %s", chroot)
            finally:
                root_client.close()
        self._is_secure = is_secure
        self._time = time
        self._session_timeout_ms = session_timeout_ms
        self._zk_client = ZooKeeperClient(connect_string, session_timeout_ms, connection_timeout_ms,
                                          max_in_flight_requests, time, name)
        # Session that created our broker registration: a later NODEEXISTS owned by it is our
        # own leftover from before an expiry (ZOOKEEPER-2985 / KAFKA-7165), not another broker.
        self._current_zookeeper_session_id: int | None = -1

    @property
    def secure(self) -> bool:
        return self._is_secure

    @property
    def zookeeper_client(self) -> ZooKeeperClient:
        return self._zk_client

    def requests_bounded_by(self, timeout_ms: int):
        """ZooKeeperClient.requests_bounded_by: bound this thread's waits in a ``with`` block."""
        return self._zk_client.requests_bounded_by(timeout_ms)

    @property
    def current_zookeeper(self) -> KazooClient:
        return self._zk_client.current_zookeeper

    @property
    def session_id(self) -> int | None:
        return self._zk_client.session_id

    def _default_acls(self, path: str) -> list:
        return ZkData.default_acls(self._is_secure, path)

    # -- plumbing ---------------------------------------------------------------------------

    def _retry_request_until_connected(self, request: AsyncRequest,
                                       expected_controller_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> Any:
        return self._retry_requests_until_connected([request], expected_controller_zk_version)[0]

    def _retry_requests_until_connected(self, requests: Sequence[AsyncRequest],
                                        expected_controller_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> list:
        if expected_controller_zk_version == ZkVersion.MATCH_ANY_VERSION:
            return self._zk_client.handle_requests_until_connected(requests)
        if expected_controller_zk_version >= 0:
            wrapped = [_wrap_request_with_controller_epoch_check(r, expected_controller_zk_version) for r in requests]
            return [_unwrap_response_with_controller_epoch_check(r)
                    for r in self._zk_client.handle_requests_until_connected(wrapped)]
        raise ValueError(f"Expected controller epoch zkVersion {expected_controller_zk_version} should be "
                         f"non-negative or equal to {ZkVersion.MATCH_ANY_VERSION}")

    def create_recursive(self, path: str, data: bytes | None = None, throw_if_path_exists: bool = True) -> None:
        """Create ``path`` (persistent) and any missing parents; NodeExistsError if it exists and
        ``throw_if_path_exists``."""

        def parent_path(p: str) -> str:
            index = p.rfind("/")
            if index == -1:
                raise ValueError(f"Invalid path {p}")
            return p[:index]

        def create_parents(p: str) -> None:
            if p == "":
                return
            request = CreateRequest(p, None, self._default_acls(p), CreateMode.PERSISTENT)
            response = self._retry_request_until_connected(request)
            if response.result_code == Code.NONODE:
                create_parents(parent_path(p))
                response = self._retry_request_until_connected(request)
            if response.result_code not in (Code.OK, Code.NODEEXISTS):
                response.maybe_throw()

        request = CreateRequest(path, data, self._default_acls(path), CreateMode.PERSISTENT)
        response = self._retry_request_until_connected(request)
        if throw_if_path_exists and response.result_code == Code.NODEEXISTS:
            response.maybe_throw()
        elif response.result_code == Code.NONODE:
            create_parents(parent_path(path))
            response = self._retry_request_until_connected(request)
            if throw_if_path_exists or response.result_code != Code.NODEEXISTS:
                response.maybe_throw()
        elif response.result_code != Code.NODEEXISTS:
            response.maybe_throw()

    def make_sure_persistent_path_exists(self, path: str) -> None:
        self.create_recursive(path, None, throw_if_path_exists=False)

    def create_top_level_paths(self) -> None:
        for path in ZkData.PERSISTENT_ZK_PATHS:
            self.make_sure_persistent_path_exists(path)

    def create_sequential_persistent_path(self, path: str, data: bytes) -> str:
        """Create ``path`` + a 10-digit sequence number; returns the created path."""
        response = self._retry_request_until_connected(
            CreateRequest(path, data, self._default_acls(path), CreateMode.PERSISTENT_SEQUENTIAL))
        response.maybe_throw()
        return response.name

    def path_exists(self, path: str) -> bool:
        response = self._retry_request_until_connected(ExistsRequest(path))
        if response.result_code == Code.OK:
            return True
        if response.result_code == Code.NONODE:
            return False
        raise response.result_exception

    def get_data_and_stat(self, path: str) -> tuple[bytes | None, ZnodeStat | None]:
        response = self._retry_request_until_connected(GetDataRequest(path))
        if response.result_code == Code.OK:
            return response.data, response.stat
        if response.result_code == Code.NONODE:
            return None, None
        raise response.result_exception

    def get_data_and_version(self, path: str) -> tuple[bytes | None, int]:
        data, stat = self.get_data_and_stat(path)
        return data, (ZkVersion.UNKNOWN_VERSION if stat is None else stat.version)

    def get_children(self, path: str) -> list[str]:
        """Children of ``path`` ([] when it does not exist); arms a registered child handler."""
        response = self._retry_request_until_connected(GetChildrenRequest(path, register_watch=True))
        if response.result_code == Code.OK:
            return response.children
        if response.result_code == Code.NONODE:
            return []
        raise response.result_exception

    def conditional_update_path(
        self, path: str, data: bytes, expect_version: int,
        optional_checker: Callable[["KafkaZkClient", str, bytes], tuple[bool, int]] | None = None,
    ) -> tuple[bool, int]:
        """Set data if the znode is at ``expect_version``: (True, new version) or
        (False, UNKNOWN_VERSION); on a version clash ``optional_checker`` may decide instead
        (e.g. the data already written by an earlier attempt whose reply was lost)."""
        response = self._retry_request_until_connected(SetDataRequest(path, data, expect_version))
        if response.result_code == Code.OK:
            logger.debug("Conditional update of path %s with expected version %d succeeded, new version %d",
                         path, expect_version, response.stat.version)
            return True, response.stat.version
        if response.result_code == Code.BADVERSION:
            if optional_checker is not None:
                return optional_checker(self, path, data)
            logger.debug("Conditional update of path %s with expected version %d failed: bad version",
                         path, expect_version)
            return False, ZkVersion.UNKNOWN_VERSION
        if response.result_code == Code.NONODE:
            logger.debug("Conditional update of path %s failed: no node", path)
            return False, ZkVersion.UNKNOWN_VERSION
        raise response.result_exception

    def delete_recursive(self, path: str,
                         expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> bool:
        response = self._retry_request_until_connected(GetChildrenRequest(path, register_watch=True))
        if response.result_code == Code.OK:
            for child in response.children:
                self.delete_recursive(f"{path}/{child}", expected_controller_epoch_zk_version)
            delete = self._retry_request_until_connected(DeleteRequest(path, ZkVersion.MATCH_ANY_VERSION),
                                                         expected_controller_epoch_zk_version)
            if delete.result_code not in (Code.OK, Code.NONODE):
                raise delete.result_exception
            return True
        if response.result_code == Code.NONODE:
            return False
        raise response.result_exception

    def delete_path(self, path: str, expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION,
                    recursive_delete: bool = True) -> None:
        if recursive_delete:
            self.delete_recursive(path, expected_controller_epoch_zk_version)
            return
        response = self._retry_request_until_connected(DeleteRequest(path, ZkVersion.MATCH_ANY_VERSION),
                                                       expected_controller_epoch_zk_version)
        if response.result_code not in (Code.OK, Code.NONODE):
            raise response.result_exception

    # -- cluster id, broker ids, broker registration ---------------------------------------

    def get_cluster_id(self) -> str | None:
        response = self._retry_request_until_connected(GetDataRequest(ClusterIdZNode.path()))
        if response.result_code == Code.OK:
            return ClusterIdZNode.from_json(response.data)
        if response.result_code == Code.NONODE:
            return None
        raise response.result_exception

    def create_or_get_cluster_id(self, proposed_cluster_id: str) -> str:
        """Store ``proposed_cluster_id`` unless a cluster id exists; returns the one in force."""
        try:
            self.create_recursive(ClusterIdZNode.path(), ClusterIdZNode.to_json(proposed_cluster_id))
            return proposed_cluster_id
        except NodeExistsError:
            cluster_id = self.get_cluster_id()
            if cluster_id is None:
                raise KafkaException("Failed to get cluster id from Zookeeper. This can happen if "
                                     "/cluster/id is deleted from Zookeeper.") from None
            return cluster_id

    def generate_broker_sequence_id(self) -> int:
        """Next value of the broker id sequence: each empty write bumps /brokers/seqid's version.
        (KafkaServer adds reserved.broker.max.id to get a generated broker.id.)"""
        while True:
            response = self._retry_request_until_connected(
                SetDataRequest(BrokerSequenceIdZNode.path(), b"", ZkVersion.MATCH_ANY_VERSION))
            if response.result_code == Code.OK:
                return response.stat.version
            if response.result_code != Code.NONODE:
                raise response.result_exception
            self.create_recursive(BrokerSequenceIdZNode.path(), b"", throw_if_path_exists=False)

    def register_broker(self, broker_info: BrokerInfo) -> int:
        """Create the ephemeral /brokers/ids/<id>; returns the broker epoch (the znode's czxid).

        Unlike Kafka 2.8, a registration held by another ZooKeeper session does not fail
        startup at once: see ``_wait_for_stale_ephemeral_owner``. Only one still held after
        that session could have expired (a live broker with this id) raises
        BrokerIdInUseException, naming that broker's endpoints.
        """
        path = broker_info.path
        deadline_ns = self._time.nanoseconds() + self.stale_session_wait_ms * 1_000_000
        while True:
            try:
                stat = self._checked_ephemeral_create(path, broker_info.to_json_bytes(self._time.milliseconds()))
                break
            except NodeExistsError:
                self._wait_for_stale_ephemeral_owner(
                    path, deadline_ns, lambda holder: self._broker_id_in_use(broker_info.broker.id, holder))
        logger.info("Registered broker %d at path %s with addresses: %s, czxid (broker epoch): %d",
                    broker_info.broker.id, path,
                    ",".join(e.connection_string for e in broker_info.broker.end_points), stat.czxid)
        return stat.czxid

    @property
    def stale_session_wait_ms(self) -> int:
        """How long an ephemeral znode held by another session may be a dead process's
        leftover: our session timeout (the one a previous run of this broker asked for) plus
        ZooKeeper's expiry granularity. ZooKeeper expires sessions in buckets of one tick
        and raises a timeout below two ticks to two ticks, so a margin of two ticks also
        covers a session that asked for less than ZooKeeper granted it."""
        return self._session_timeout_ms + STALE_SESSION_MARGIN_MS

    def _ephemeral_holder(self, path: str) -> GetDataResponse | None:
        """The znode at ``path`` with its stat (whose ephemeralOwner is the holding session),
        or None when it is gone."""
        response = self._retry_request_until_connected(GetDataRequest(path))
        if response.result_code == Code.NONODE:
            return None
        response.maybe_throw()
        return response

    def _wait_for_stale_ephemeral_owner(self, path: str, deadline_ns: int,
                                        in_use: Callable[[GetDataResponse], Exception]) -> None:
        """Wait until the ephemeral znode at ``path`` that another session holds goes away, or
        raise ``in_use(holder)`` once ``deadline_ns`` (monotonic) has passed with it still held.

        A process killed without closing its ZooKeeper session (kill -9, an OOM kill, a
        power cut) leaves its ephemeral znodes until ZooKeeper expires the session, and a
        ZooKeeper restarted from its data dir restores that session with a fresh timeout.
        Kafka 2.8 refuses to start on such a leftover; a broker restarted at once (or a
        quickstart that stops ZooKeeper with the broker) then never gets past it. Waiting
        for the deletion instead costs at most the session timeout and needs nobody's help.
        """
        holder = self._ephemeral_holder(path)
        if holder is None:
            return
        remaining_ms = (deadline_ns - self._time.nanoseconds()) // 1_000_000
        if remaining_ms <= 0:
            raise in_use(holder)
        logger.warning(
            "%s is held by ZooKeeper session 0x%x, not this client's session 0x%x (data: %s). A process "
            "that ended without closing its session (kill -9, a crash) leaves its ephemeral znodes until "
            "ZooKeeper expires that session; waiting up to %d ms for it to go before taking the holder "
            "for a live process", path, holder.stat.ephemeralOwner, self.session_id or 0,
            bytes(holder.data).decode("utf-8", "replace"), remaining_ms)
        gone = threading.Event()
        handler = ZNodeChangeHandler(path, on_deletion=gone.set)
        self._zk_client.register_znode_change_handler(handler)
        try:
            # Armed after registration, so a deletion between our read and now is not missed.
            if self.path_exists(path):
                gone.wait(remaining_ms / 1000.0)
        finally:
            self._zk_client.unregister_znode_change_handler(path)
        if gone.is_set():
            logger.info("%s went away (session 0x%x expired or closed); creating it again", path,
                        holder.stat.ephemeralOwner)

    @staticmethod
    def _broker_id_in_use(broker_id: int, holder: GetDataResponse) -> BrokerIdInUseException:
        try:
            broker = BrokerIdZNode.decode(broker_id, holder.data).broker
            endpoints = ",".join(e.connection_string for e in broker.end_points)
        except Exception:  # noqa: BLE001 - the message still names the raw data
            endpoints = bytes(holder.data).decode("utf-8", "replace")
        return BrokerIdInUseException(
            f"broker.id {broker_id} is in use by another live broker with endpoints {endpoints} "
            f"(its registration {BrokerIdZNode.path(broker_id)} is held by ZooKeeper session "
            f"0x{holder.stat.ephemeralOwner:x}, which outlived its session timeout, so it is no dead broker's "
            "leftover). Stop that broker or give this one another broker.id.")

    def update_broker_info(self, broker_info: BrokerInfo) -> None:
        response = self._retry_request_until_connected(
            SetDataRequest(broker_info.path, broker_info.to_json_bytes(self._time.milliseconds()),
                           ZkVersion.MATCH_ANY_VERSION))
        response.maybe_throw()
        logger.info("Updated broker %d at path %s with addresses: %s", broker_info.broker.id, broker_info.path,
                    [str(e) for e in broker_info.broker.end_points])

    def get_all_brokers_in_cluster(self) -> list[Broker]:
        return list(self.get_all_broker_and_epochs_in_cluster())

    def get_all_broker_and_epochs_in_cluster(self) -> dict[Broker, int]:
        broker_ids = self.get_sorted_broker_list()
        responses = self._retry_requests_until_connected(
            [GetDataRequest(BrokerIdZNode.path(b), ctx=b) for b in broker_ids])
        brokers: dict[Broker, int] = {}
        for response in responses:
            if response.result_code == Code.OK:
                brokers[BrokerIdZNode.decode(response.ctx, response.data).broker] = response.stat.czxid
            elif response.result_code != Code.NONODE:
                raise response.result_exception
        return brokers

    def get_broker(self, broker_id: int) -> Broker | None:
        response = self._retry_request_until_connected(GetDataRequest(BrokerIdZNode.path(broker_id)))
        if response.result_code == Code.OK:
            return BrokerIdZNode.decode(broker_id, response.data).broker
        if response.result_code == Code.NONODE:
            return None
        raise response.result_exception

    def get_sorted_broker_list(self) -> list[int]:
        return sorted(int(child) for child in self.get_children(BrokerIdsZNode.path()))

    def _checked_ephemeral_create(self, path: str, data: bytes) -> ZnodeStat:
        logger.info("Creating %s (is it secure? %s)", path, self._is_secure)
        stat = self._checked_ephemeral_create0(path, data)
        logger.info("Stat of the created znode at %s is: %s", path, stat)
        return stat

    def _checked_ephemeral_create0(self, path: str, data: bytes) -> ZnodeStat:
        # Create empty then set the data in one multi, as Kafka does: the resulting znode has
        # version 1 and the stat of the set carries the creation's czxid.
        response = self._retry_request_until_connected(MultiRequest([
            CreateOp(path, None, self._default_acls(path), CreateMode.EPHEMERAL),
            SetDataOp(path, data, 0),
        ]))
        if response.result_code == Code.OK:
            stat = response.zk_op_results[1].raw_op_result
        elif response.result_code == Code.NODEEXISTS:
            stat = self._get_after_node_exists(path, data)
        else:
            logger.error("Error while creating ephemeral at %s with return code: %s", path,
                         response.result_code.name)
            raise response.result_exception
        self._current_zookeeper_session_id = self._zk_client.session_id
        return stat

    def _get_after_node_exists(self, path: str, data: bytes) -> ZnodeStat:
        response = self._retry_request_until_connected(GetDataRequest(path))
        if response.result_code == Code.NONODE:
            logger.info("The ephemeral node at %s went away while reading it, attempting create() again", path)
            return self._checked_ephemeral_create0(path, data)
        if response.result_code != Code.OK:
            logger.error("Error while creating ephemeral at %s as it already exists and error getting the "
                         "node data due to %s", path, response.result_code.name)
            raise response.result_exception
        owner = response.stat.ephemeralOwner
        session_id = self._zk_client.session_id
        if owner == self._current_zookeeper_session_id and session_id != self._current_zookeeper_session_id:
            logger.info("Was not possible to create the ephemeral at %s, node already exists and owner '%s' does "
                        "not match current session '%s', trying to delete and re-create it with the newest "
                        "Zookeeper session", path, owner, session_id)
            delete = self._retry_request_until_connected(DeleteRequest(path, ZkVersion.MATCH_ANY_VERSION))
            if delete.result_code not in (Code.OK, Code.NONODE):
                logger.error("Error while deleting ephemeral node at %s with return code: %s", path,
                             delete.result_code.name)
                raise delete.result_exception
            return self._checked_ephemeral_create0(path, data)
        if owner != session_id:
            logger.error("Error while creating ephemeral at %s, node already exists and owner '%s' does not "
                         "match current session '%s'", path, owner, session_id)
            raise keeper_exception(Code.NODEEXISTS, path)
        return response.stat

    # -- controller ----------------------------------------------------------------------------

    def register_controller_and_increment_controller_epoch(self, controller_id: int) -> tuple[int, int]:
        """Create /controller for ``controller_id`` and bump /controller_epoch in one multi.

        Returns (new controller epoch, /controller_epoch zk version). Raises
        ControllerMovedException when another broker won the election or bumped the epoch first.
        """
        timestamp = self._time.milliseconds()
        current = self.get_controller_epoch()
        if current is not None:
            cur_epoch, cur_epoch_zk_version = current[0], current[1].version
        else:
            cur_epoch, cur_epoch_zk_version = self._maybe_create_controller_epoch_znode()
        new_controller_epoch = cur_epoch + 1
        logger.debug("Try to create %s and increment controller epoch to %d with expected controller epoch "
                     "zkVersion %d", ControllerZNode.path(), new_controller_epoch, cur_epoch_zk_version)

        response = self._retry_request_until_connected(MultiRequest([
            CreateOp(ControllerZNode.path(), ControllerZNode.encode(controller_id, timestamp),
                     self._default_acls(ControllerZNode.path()), CreateMode.EPHEMERAL),
            SetDataOp(ControllerEpochZNode.path(), ControllerEpochZNode.encode(new_controller_epoch),
                      cur_epoch_zk_version),
        ]))
        if response.result_code == Code.OK:
            return new_controller_epoch, response.zk_op_results[1].raw_op_result.version
        if response.result_code in (Code.NODEEXISTS, Code.BADVERSION):
            # The multi may have succeeded with its reply lost and been retried; only this
            # broker's id in /controller with exactly our epoch proves the win.
            current_controller_id = self.get_controller_id()
            if current_controller_id is None:
                raise ControllerMovedException(
                    f"The ephemeral node at {ControllerZNode.path()} went away while checking whether the "
                    "controller election succeeds. Aborting controller startup procedure")
            if current_controller_id == controller_id:
                epoch_and_stat = self.get_controller_epoch()
                if epoch_and_stat is None:
                    raise RuntimeError(f"{ControllerEpochZNode.path()} existed before but goes away while "
                                       "trying to read it")
                if epoch_and_stat[0] == new_controller_epoch:
                    return new_controller_epoch, epoch_and_stat[1].version
            raise ControllerMovedException("Controller moved to another broker. Aborting controller startup procedure")
        raise response.result_exception

    def _maybe_create_controller_epoch_znode(self) -> tuple[int, int]:
        response = self.create_controller_epoch_raw(INITIAL_CONTROLLER_EPOCH)
        if response.result_code == Code.OK:
            logger.info("Successfully created %s with initial epoch %d", ControllerEpochZNode.path(),
                        INITIAL_CONTROLLER_EPOCH)
            return INITIAL_CONTROLLER_EPOCH, INITIAL_CONTROLLER_EPOCH_ZK_VERSION
        if response.result_code == Code.NODEEXISTS:
            current = self.get_controller_epoch()
            if current is None:
                raise RuntimeError(f"{ControllerEpochZNode.path()} existed before but goes away while trying to read it")
            return current[0], current[1].version
        raise response.result_exception

    def get_controller_id_and_owner(self) -> tuple[int, int] | None:
        """(the controller's broker id, the ZooKeeper session holding /controller), or None."""
        holder = self._ephemeral_holder(ControllerZNode.path())
        if holder is None:
            return None
        return ControllerZNode.decode(holder.data), holder.stat.ephemeralOwner

    def get_controller_id(self) -> int | None:
        response = self._retry_request_until_connected(GetDataRequest(ControllerZNode.path()))
        if response.result_code == Code.OK:
            return ControllerZNode.decode(response.data)
        if response.result_code == Code.NONODE:
            return None
        raise response.result_exception

    def delete_controller(self, expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> None:
        self._retry_request_until_connected(DeleteRequest(ControllerZNode.path(), ZkVersion.MATCH_ANY_VERSION),
                                            expected_controller_epoch_zk_version)

    def get_controller_epoch(self) -> tuple[int, ZnodeStat] | None:
        response = self._retry_request_until_connected(GetDataRequest(ControllerEpochZNode.path()))
        if response.result_code == Code.OK:
            return ControllerEpochZNode.decode(response.data), response.stat
        if response.result_code == Code.NONODE:
            return None
        raise response.result_exception

    def set_controller_epoch_raw(self, epoch: int, epoch_zk_version: int) -> SetDataResponse:
        return self._retry_request_until_connected(
            SetDataRequest(ControllerEpochZNode.path(), ControllerEpochZNode.encode(epoch), epoch_zk_version))

    def create_controller_epoch_raw(self, epoch: int) -> CreateResponse:
        return self._retry_request_until_connected(
            CreateRequest(ControllerEpochZNode.path(), ControllerEpochZNode.encode(epoch),
                          self._default_acls(ControllerEpochZNode.path()), CreateMode.PERSISTENT))

    # -- topics and assignments -----------------------------------------------------------------

    def get_all_topics_in_cluster(self, register_watch: bool = False) -> set[str]:
        response = self._retry_request_until_connected(GetChildrenRequest(TopicsZNode.path(), register_watch))
        if response.result_code == Code.OK:
            return set(response.children)
        if response.result_code == Code.NONODE:
            return set()
        raise response.result_exception

    def topic_exists(self, topic: str) -> bool:
        return self.path_exists(TopicZNode.path(topic))

    def create_topic_assignment(self, topic: str, topic_id: uuid.UUID | None,
                                assignment: Mapping[TopicPartition, Iterable[int]]) -> None:
        """Create /brokers/topics/<topic>; NodeExistsError if the topic exists."""
        persisted = {tp: ReplicaAssignment(tuple(replicas)) for tp, replicas in assignment.items()}
        self.create_recursive(TopicZNode.path(topic), TopicZNode.encode(topic_id, persisted))

    def create_topic_assignments(self, assignments: Mapping[str, tuple[uuid.UUID | None,
                                                                    Mapping[TopicPartition, Iterable[int]]]],
                                 ) -> dict[str, Exception | None]:
        """create_topic_assignment for many topics, pipelined. Per topic None, or the error
        (NodeExistsError if the topic exists)."""
        requests = []
        for topic, (topic_id, assignment) in assignments.items():
            persisted = {tp: ReplicaAssignment(tuple(replicas)) for tp, replicas in assignment.items()}
            path = TopicZNode.path(topic)
            requests.append(CreateRequest(path, TopicZNode.encode(topic_id, persisted), self._default_acls(path),
                                          CreateMode.PERSISTENT, ctx=topic))
        errors: dict[str, Exception | None] = {}
        for response in self._retry_requests_until_connected(requests):
            topic = response.ctx
            if response.result_code == Code.OK:
                errors[topic] = None
            elif response.result_code == Code.NONODE:
                # /brokers/topics itself is missing: the one-topic way creates the parents
                try:
                    self.create_topic_assignment(topic, *assignments[topic])
                    errors[topic] = None
                except Exception as e:  # noqa: BLE001 - reported per topic
                    errors[topic] = e
            else:
                errors[topic] = response.result_exception
        return errors

    def set_topic_assignment_raw(self, topic: str, topic_id: uuid.UUID | None,
                                 assignment: Mapping[TopicPartition, ReplicaAssignment],
                                 expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION,
                                 ) -> SetDataResponse:
        return self._retry_request_until_connected(
            SetDataRequest(TopicZNode.path(topic), TopicZNode.encode(topic_id, assignment),
                           ZkVersion.MATCH_ANY_VERSION),
            expected_controller_epoch_zk_version)

    def set_topic_assignment(self, topic: str, topic_id: uuid.UUID | None,
                             assignment: Mapping[TopicPartition, ReplicaAssignment],
                             expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> None:
        self.set_topic_assignment_raw(topic, topic_id, assignment, expected_controller_epoch_zk_version).maybe_throw()

    def set_topic_ids(self, topic_id_replica_assignments: Iterable[TopicIdReplicaAssignment],
                      expected_controller_epoch_zk_version: int) -> set[TopicIdReplicaAssignment]:
        """Give topics created without an id (by pre-2.8 tools) a fresh topic id."""
        updated = set()
        for tira in topic_id_replica_assignments:
            if tira.topic_id is not None:
                raise ValueError(f"TopicIdReplicaAssignment for {tira.topic} already contains a topic ID.")
            updated.add(TopicIdReplicaAssignment(tira.topic, random_uuid(), tira.assignment))
        requests = [SetDataRequest(TopicZNode.path(t.topic), TopicZNode.encode(t.topic_id, t.assignment),
                                   ZkVersion.MATCH_ANY_VERSION) for t in updated]
        self._retry_requests_until_connected(requests, expected_controller_epoch_zk_version)
        return updated

    def _get_topic_znodes(self, topics: Iterable[str]) -> list[GetDataResponse]:
        return self._retry_requests_until_connected([GetDataRequest(TopicZNode.path(t), ctx=t) for t in topics])

    def get_topic_ids_for_topics(self, topics: Iterable[str]) -> dict[str, uuid.UUID]:
        result = {}
        for response in self._get_topic_znodes(topics):
            if response.result_code == Code.OK:
                decoded = TopicZNode.decode(response.ctx, response.data)
                if decoded.topic_id is not None:
                    result[decoded.topic] = decoded.topic_id
            elif response.result_code != Code.NONODE:
                raise response.result_exception
        return result

    def get_replica_assignment_and_topic_id_for_topics(self, topics: Iterable[str]) -> set[TopicIdReplicaAssignment]:
        result = set()
        for response in self._get_topic_znodes(topics):
            if response.result_code == Code.OK:
                result.add(TopicZNode.decode(response.ctx, response.data))
            elif response.result_code == Code.NONODE:
                result.add(TopicIdReplicaAssignment(response.ctx, None, {}))
            else:
                raise response.result_exception
        return result

    def get_full_replica_assignment_for_topics(self, topics: Iterable[str]) -> dict[TopicPartition, ReplicaAssignment]:
        result: dict[TopicPartition, ReplicaAssignment] = {}
        for response in self._get_topic_znodes(topics):
            if response.result_code == Code.OK:
                result.update(TopicZNode.decode(response.ctx, response.data).assignment)
            elif response.result_code != Code.NONODE:
                raise response.result_exception
        return result

    def get_replica_assignment_for_topics(self, topics: Iterable[str]) -> dict[TopicPartition, tuple[int, ...]]:
        return {tp: ra.replicas for tp, ra in self.get_full_replica_assignment_for_topics(topics).items()}

    def get_partition_assignment_for_topics(self, topics: Iterable[str]) -> dict[str, dict[int, ReplicaAssignment]]:
        result: dict[str, dict[int, ReplicaAssignment]] = {}
        for response in self._get_topic_znodes(topics):
            if response.result_code == Code.OK:
                assignment = TopicZNode.decode(response.ctx, response.data).assignment
                result[response.ctx] = {tp.partition: ra for tp, ra in assignment.items()}
            elif response.result_code != Code.NONODE:
                raise response.result_exception
        return result

    def get_partitions_for_topics(self, topics: Iterable[str]) -> dict[str, list[int]]:
        return {topic: sorted(partitions)
                for topic, partitions in self.get_partition_assignment_for_topics(topics).items()}

    def get_topic_partition_count(self, topic: str) -> int | None:
        assignment = self.get_replica_assignment_for_topics([topic])
        return len(assignment) if assignment else None

    def get_replicas_for_partition(self, topic_partition: TopicPartition) -> tuple[int, ...]:
        return self.get_replica_assignment_for_topics([topic_partition.topic]).get(topic_partition, ())

    def get_all_partitions(self) -> set[TopicPartition]:
        partitions = set()
        for topic in self.get_children(TopicsZNode.path()):
            # The partitions path may be missing while the topic is being deleted.
            for p in self.get_children(TopicPartitionsZNode.path(topic)):
                partitions.add(TopicPartition(topic, int(p)))
        return partitions

    # -- partition state --------------------------------------------------------------------------

    def get_topic_partition_states_raw(self, partitions: Sequence[TopicPartition]) -> list[GetDataResponse]:
        return self._retry_requests_until_connected(
            [GetDataRequest(TopicPartitionStateZNode.path(tp), ctx=tp) for tp in partitions])

    def set_topic_partition_states_raw(self, leader_isr_and_controller_epochs: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
                                       expected_controller_epoch_zk_version: int) -> list[SetDataResponse]:
        """Write each state conditionally on its LeaderAndIsr.zk_version."""
        requests = [SetDataRequest(TopicPartitionStateZNode.path(tp), TopicPartitionStateZNode.encode(state),
                                   state.leader_and_isr.zk_version, ctx=tp)
                    for tp, state in leader_isr_and_controller_epochs.items()]
        return self._retry_requests_until_connected(requests, expected_controller_epoch_zk_version)

    # Partitions whose znodes one multi creates (two creates each, about 350 bytes): far below
    # ZooKeeper's 1 MB request limit (jute.maxbuffer).
    PARTITIONS_PER_MULTI = 250

    def create_topic_partition_states_raw(self, leader_isr_and_controller_epochs: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
                                          expected_controller_epoch_zk_version: int) -> list[CreateResponse]:
        """Create /brokers/topics/<t>/partitions/<p> and its state child for each partition.

        Kafka sends one (controller-epoch-checked) create per znode: two round trips' worth of
        ZooKeeper requests per partition, 20,000 for a topic creation of 10,000 partitions.
        Here the partitions of one topic go in multis of PARTITIONS_PER_MULTI (the epoch
        check, then both creates of each partition): one transaction for all of them. A
        multi that fails (a znode left by an earlier attempt, say) is redone partition by
        partition, as Kafka does it, for the answer of each."""
        states = leader_isr_and_controller_epochs
        topics = list(dict.fromkeys(tp.topic for tp in states))
        # Parents first; NODEEXISTS on them is expected and ignored.
        self._retry_requests_until_connected(
            [CreateRequest(TopicPartitionsZNode.path(t), None, self._default_acls(TopicPartitionsZNode.path(t)),
                           CreateMode.PERSISTENT, ctx=t) for t in topics],
            expected_controller_epoch_zk_version)
        by_topic: dict[str, list[TopicPartition]] = {}
        for tp in states:
            by_topic.setdefault(tp.topic, []).append(tp)
        check = ([CheckOp(ControllerEpochZNode.path(), expected_controller_epoch_zk_version)]
                 if expected_controller_epoch_zk_version >= 0 else [])
        multis = []
        for tps in by_topic.values():
            for i in range(0, len(tps), self.PARTITIONS_PER_MULTI):
                chunk = tps[i:i + self.PARTITIONS_PER_MULTI]
                ops: list[ZkOp] = list(check)
                for tp in chunk:
                    partition_path = TopicPartitionZNode.path(tp)
                    state_path = TopicPartitionStateZNode.path(tp)
                    ops.append(CreateOp(partition_path, None, self._default_acls(partition_path), CreateMode.PERSISTENT))
                    ops.append(CreateOp(state_path, TopicPartitionStateZNode.encode(states[tp]),
                                        self._default_acls(state_path), CreateMode.PERSISTENT))
                multis.append(MultiRequest(ops, ctx=chunk))
        created: dict[TopicPartition, CreateResponse] = {}
        one_by_one: list[TopicPartition] = []
        for multi, response in zip(multis, self._zk_client.handle_requests_until_connected(multis)):
            if response.result_code == Code.OK:
                for tp in multi.ctx:
                    path = TopicPartitionStateZNode.path(tp)
                    created[tp] = CreateResponse(Code.OK, path, tp, None, name=path)
                continue
            if check and response.zk_op_results is not None:
                raw_check = response.zk_op_results[0].raw_op_result
                if isinstance(raw_check, ZookeeperError) and _code_of(raw_check) == Code.BADVERSION:
                    raise ControllerMovedException(
                        f"Controller epoch zkVersion check fails. Expected zkVersion = "
                        f"{expected_controller_epoch_zk_version}")
            one_by_one.extend(multi.ctx)
        if one_by_one:
            self._retry_requests_until_connected(
                [CreateRequest(TopicPartitionZNode.path(tp), None, self._default_acls(TopicPartitionZNode.path(tp)),
                               CreateMode.PERSISTENT, ctx=tp) for tp in one_by_one],
                expected_controller_epoch_zk_version)
            requests = [CreateRequest(TopicPartitionStateZNode.path(tp), TopicPartitionStateZNode.encode(states[tp]),
                                      self._default_acls(TopicPartitionStateZNode.path(tp)), CreateMode.PERSISTENT,
                                      ctx=tp) for tp in one_by_one]
            for response in self._retry_requests_until_connected(requests, expected_controller_epoch_zk_version):
                created[response.ctx] = response
        return [created[tp] for tp in states]

    def create_topic_partition_states(self, leader_isr_and_controller_epochs: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
                                      expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION,
                                      ) -> dict[TopicPartition, tuple[bool, int]]:
        """Create state znodes: per partition (True, 0) or (False, UNKNOWN_VERSION) when it existed.
        Other errors raise."""
        result = {}
        for response in self.create_topic_partition_states_raw(leader_isr_and_controller_epochs,
                                                               expected_controller_epoch_zk_version):
            if response.result_code == Code.OK:
                result[response.ctx] = (True, 0)
            elif response.result_code == Code.NODEEXISTS:
                result[response.ctx] = (False, ZkVersion.UNKNOWN_VERSION)
            else:
                raise response.result_exception
        return result

    def set_topic_partition_states(self, leader_isr_and_controller_epochs: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
                                   expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION,
                                   ) -> dict[TopicPartition, tuple[bool, int]]:
        """Conditional writes: per partition (True, new zk version) or (False, UNKNOWN_VERSION)
        on a stale version or a missing znode. Other errors raise."""
        result = {}
        for response in self.set_topic_partition_states_raw(leader_isr_and_controller_epochs,
                                                            expected_controller_epoch_zk_version):
            if response.result_code == Code.OK:
                result[response.ctx] = (True, response.stat.version)
            elif response.result_code in (Code.BADVERSION, Code.NONODE):
                result[response.ctx] = (False, ZkVersion.UNKNOWN_VERSION)
            else:
                raise response.result_exception
        return result

    def update_leader_and_isr(self, leader_and_isrs: Mapping[TopicPartition, LeaderAndIsr], controller_epoch: int,
                              expected_controller_epoch_zk_version: int) -> UpdateLeaderAndIsrResult:
        states = {tp: LeaderIsrAndControllerEpoch(lai, controller_epoch) for tp, lai in leader_and_isrs.items()}
        try:
            responses = self.set_topic_partition_states_raw(states, expected_controller_epoch_zk_version)
        except ControllerMovedException:
            raise
        except Exception as e:
            return UpdateLeaderAndIsrResult({tp: e for tp in leader_and_isrs}, [])
        finished: dict[TopicPartition, LeaderAndIsr | Exception] = {}
        to_retry: list[TopicPartition] = []
        for response in responses:
            tp = response.ctx
            if response.result_code == Code.OK:
                finished[tp] = leader_and_isrs[tp].with_zk_version(response.stat.version)
            elif response.result_code == Code.BADVERSION:
                to_retry.append(tp)
            else:
                finished[tp] = response.result_exception
        return UpdateLeaderAndIsrResult(finished, to_retry)

    def get_topic_partition_states(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        result = {}
        for response in self.get_topic_partition_states_raw(partitions):
            if response.result_code == Code.OK:
                state = TopicPartitionStateZNode.decode(response.data, response.stat)
                if state is not None:
                    result[response.ctx] = state
            elif response.result_code != Code.NONODE:
                raise response.result_exception
        return result

    def get_topic_partition_state(self, partition: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        response = self.get_topic_partition_states_raw([partition])[0]
        if response.result_code == Code.OK:
            return TopicPartitionStateZNode.decode(response.data, response.stat)
        if response.result_code == Code.NONODE:
            return None
        raise response.result_exception

    def get_leader_and_isr(self, partition: TopicPartition) -> LeaderAndIsr | None:
        state = self.get_topic_partition_state(partition)
        return None if state is None else state.leader_and_isr

    def get_leader_for_partition(self, partition: TopicPartition) -> int | None:
        state = self.get_topic_partition_state(partition)
        return None if state is None else state.leader_and_isr.leader

    def get_in_sync_replicas_for_partition(self, partition: TopicPartition) -> tuple[int, ...] | None:
        state = self.get_topic_partition_state(partition)
        return None if state is None else state.leader_and_isr.isr

    def get_epoch_for_partition(self, partition: TopicPartition) -> int | None:
        state = self.get_topic_partition_state(partition)
        return None if state is None else state.leader_and_isr.leader_epoch

    # -- topic deletion ---------------------------------------------------------------------------

    def create_delete_topic_path(self, topic: str) -> None:
        """Mark ``topic`` for deletion; NodeExistsError when it already is."""
        self.create_recursive(DeleteTopicsTopicZNode.path(topic))

    def is_topic_marked_for_deletion(self, topic: str) -> bool:
        return self.path_exists(DeleteTopicsTopicZNode.path(topic))

    def get_topic_deletions(self) -> list[str]:
        response = self._retry_request_until_connected(GetChildrenRequest(DeleteTopicsZNode.path(), register_watch=True))
        if response.result_code == Code.OK:
            return response.children
        if response.result_code == Code.NONODE:
            return []
        raise response.result_exception

    def delete_topic_deletions(self, topics: Iterable[str],
                               expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> None:
        self._retry_requests_until_connected(
            [DeleteRequest(DeleteTopicsTopicZNode.path(t), ZkVersion.MATCH_ANY_VERSION) for t in topics],
            expected_controller_epoch_zk_version)

    def delete_topic_deletion_flag(self, topic: str,
                                   expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> None:
        self.delete_topic_deletions([topic], expected_controller_epoch_zk_version)

    def delete_topic_znode(self, topic: str,
                           expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> None:
        self.delete_recursive(TopicZNode.path(topic), expected_controller_epoch_zk_version)

    def delete_topic_configs(self, topics: Iterable[str],
                             expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> None:
        self._retry_requests_until_connected(
            [DeleteRequest(ConfigEntityZNode.path(ConfigType.TOPIC, t), ZkVersion.MATCH_ANY_VERSION) for t in topics],
            expected_controller_epoch_zk_version)

    def delete_topic_config(self, topic: str,
                            expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> None:
        self.delete_topic_configs([topic], expected_controller_epoch_zk_version)

    # -- configs ------------------------------------------------------------------------------------

    def get_entity_configs(self, root_entity_type: str, sanitized_entity_name: str) -> dict[str, str]:
        response = self._retry_request_until_connected(
            GetDataRequest(ConfigEntityZNode.path(root_entity_type, sanitized_entity_name)))
        if response.result_code == Code.OK:
            return ConfigEntityZNode.decode(response.data)
        if response.result_code == Code.NONODE:
            return {}
        raise response.result_exception

    def get_entities_configs(self, root_entity_type: str, sanitized_entity_names: Iterable[str]) -> dict[str, dict[str, str]]:
        """Kafka's getEntitiesConfigs: the config of each entity, read pipelined ({} when absent)."""
        names = list(dict.fromkeys(sanitized_entity_names))
        responses = self._retry_requests_until_connected(
            [GetDataRequest(ConfigEntityZNode.path(root_entity_type, name), ctx=name) for name in names])
        configs: dict[str, dict[str, str]] = {}
        for response in responses:
            if response.result_code == Code.OK:
                configs[response.ctx] = ConfigEntityZNode.decode(response.data)
            elif response.result_code == Code.NONODE:
                configs[response.ctx] = {}
            else:
                raise response.result_exception
        return configs

    def set_or_create_entity_configs(self, root_entity_type: str, sanitized_entity_name: str,
                                     config: Mapping[str, Any]) -> None:
        """Write the config znode, creating it if needed. Concurrent writers: last one wins."""
        path = ConfigEntityZNode.path(root_entity_type, sanitized_entity_name)
        data = ConfigEntityZNode.encode(config)
        response = self._retry_request_until_connected(SetDataRequest(path, data, ZkVersion.MATCH_ANY_VERSION))
        if response.result_code != Code.NONODE:
            response.maybe_throw()
            return
        try:
            self.create_recursive(path, data)
        except NodeExistsError:
            # Created by someone else between our set and create: overwrite as the last writer.
            self._retry_request_until_connected(
                SetDataRequest(path, data, ZkVersion.MATCH_ANY_VERSION)).maybe_throw()

    def set_or_create_entities_configs(self, root_entity_type: str, configs: Mapping[str, Mapping[str, Any]]
                                       ) -> dict[str, Exception | None]:
        """set_or_create_entity_configs for many entities, pipelined: every set at once, then
        every create the sets found missing at once. Per entity None, or the error."""
        data = {name: ConfigEntityZNode.encode(config) for name, config in configs.items()}
        path = {name: ConfigEntityZNode.path(root_entity_type, name) for name in configs}
        errors: dict[str, Exception | None] = {}
        missing = []
        for response in self._retry_requests_until_connected(
                [SetDataRequest(path[n], data[n], ZkVersion.MATCH_ANY_VERSION, ctx=n) for n in configs]):
            if response.result_code == Code.NONODE:
                missing.append(response.ctx)
            else:
                errors[response.ctx] = response.result_exception if response.result_code != Code.OK else None
        one_by_one = []
        for response in self._retry_requests_until_connected(
                [CreateRequest(path[n], data[n], self._default_acls(path[n]), CreateMode.PERSISTENT, ctx=n)
                 for n in missing]):
            if response.result_code == Code.OK:
                errors[response.ctx] = None
            else:
                # a missing parent, or created by someone else meanwhile: the one-entity way
                one_by_one.append(response.ctx)
        for name in one_by_one:
            try:
                self.set_or_create_entity_configs(root_entity_type, name, configs[name])
                errors[name] = None
            except Exception as e:  # noqa: BLE001 - reported per entity
                errors[name] = e
        return errors

    def get_all_entities_with_config(self, entity_type: str) -> list[str]:
        return self.get_children(ConfigEntityTypeZNode.path(entity_type))

    def get_topic_configs_raw(self, topics: Iterable[str]) -> list[GetDataResponse]:
        return self._retry_requests_until_connected(
            [GetDataRequest(ConfigEntityZNode.path(ConfigType.TOPIC, t), ctx=t) for t in topics])

    def get_log_configs(self, topics: Iterable[str], config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Exception]]:
        """Each topic's LogConfig (broker defaults ``config`` + its overrides) and the failures."""
        from kafka_py.log.log_config import LogConfig

        topics = list(topics)
        log_configs: dict[str, Any] = {}
        failed: dict[str, Exception] = {}
        try:
            responses = self.get_topic_configs_raw(topics)
        except Exception as e:
            return {}, {t: e for t in topics}
        for response in responses:
            topic = response.ctx
            try:
                if response.result_code == Code.OK:
                    log_configs[topic] = LogConfig.from_props(config, ConfigEntityZNode.decode(response.data))
                elif response.result_code == Code.NONODE:
                    log_configs[topic] = LogConfig.from_props(config, {})
                else:
                    failed[topic] = response.result_exception
            except Exception as e:
                failed[topic] = e
        return log_configs, failed

    def create_config_change_notification(self, sanitized_entity_path: str) -> str:
        """Add /config/changes/config_change_<seq> naming ``sanitized_entity_path`` (e.g.
        "topics/foo"); returns the created path."""
        self.make_sure_persistent_path_exists(ConfigEntityChangeNotificationZNode.path())
        path = ConfigEntityChangeNotificationSequenceZNode.create_path()
        response = self._retry_request_until_connected(
            CreateRequest(path, ConfigEntityChangeNotificationSequenceZNode.encode(sanitized_entity_path),
                          self._default_acls(path), CreateMode.PERSISTENT_SEQUENTIAL))
        response.maybe_throw()
        return response.name

    def get_config_change_notifications(self) -> list[str]:
        """Names (not paths) of the pending config change notifications, oldest first."""
        return sorted(self.get_children(ConfigEntityChangeNotificationZNode.path()))

    # -- notifications from brokers to the controller ------------------------------------------

    def propagate_isr_changes(self, isr_change_set: Iterable[TopicPartition]) -> str:
        path = self.create_sequential_persistent_path(IsrChangeNotificationSequenceZNode.path(),
                                                      IsrChangeNotificationSequenceZNode.encode(isr_change_set))
        logger.debug("Added %s for ISR changes", path)
        return path

    def get_all_isr_change_notifications(self) -> list[str]:
        """Sequence numbers (not names) of pending ISR change notifications."""
        response = self._retry_request_until_connected(
            GetChildrenRequest(IsrChangeNotificationZNode.path(), register_watch=True))
        if response.result_code == Code.OK:
            return [IsrChangeNotificationSequenceZNode.sequence_number(c) for c in response.children]
        if response.result_code == Code.NONODE:
            return []
        raise response.result_exception

    def get_partitions_from_isr_change_notifications(self, sequence_numbers: Iterable[str]) -> list[TopicPartition]:
        responses = self._retry_requests_until_connected(
            [GetDataRequest(IsrChangeNotificationSequenceZNode.path(s)) for s in sequence_numbers])
        partitions: list[TopicPartition] = []
        for response in responses:
            if response.result_code == Code.OK:
                partitions.extend(IsrChangeNotificationSequenceZNode.decode(response.data))
            elif response.result_code != Code.NONODE:
                raise response.result_exception
        return partitions

    def delete_isr_change_notifications(self, expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION,
                                        sequence_numbers: Iterable[str] | None = None) -> None:
        """Delete the given notifications, or all of them when ``sequence_numbers`` is None."""
        if sequence_numbers is None:
            response = self._retry_request_until_connected(
                GetChildrenRequest(IsrChangeNotificationZNode.path(), register_watch=True))
            if response.result_code == Code.NONODE:
                return
            response.maybe_throw()
            sequence_numbers = [IsrChangeNotificationSequenceZNode.sequence_number(c) for c in response.children]
        self._retry_requests_until_connected(
            [DeleteRequest(IsrChangeNotificationSequenceZNode.path(s), ZkVersion.MATCH_ANY_VERSION)
             for s in sequence_numbers], expected_controller_epoch_zk_version)

    def propagate_log_dir_event(self, broker_id: int) -> str:
        path = self.create_sequential_persistent_path(
            f"{LogDirEventNotificationZNode.path()}/{LogDirEventNotificationSequenceZNode.SEQUENCE_NUMBER_PREFIX}",
            LogDirEventNotificationSequenceZNode.encode(broker_id))
        logger.debug("Added %s for broker %d", path, broker_id)
        return path

    def get_all_log_dir_event_notifications(self) -> list[str]:
        response = self._retry_request_until_connected(
            GetChildrenRequest(LogDirEventNotificationZNode.path(), register_watch=True))
        if response.result_code == Code.OK:
            return [LogDirEventNotificationSequenceZNode.sequence_number(c) for c in response.children]
        if response.result_code == Code.NONODE:
            return []
        raise response.result_exception

    def get_broker_ids_from_log_dir_events(self, sequence_numbers: Iterable[str]) -> list[int]:
        responses = self._retry_requests_until_connected(
            [GetDataRequest(LogDirEventNotificationSequenceZNode.path(s)) for s in sequence_numbers])
        broker_ids = []
        for response in responses:
            if response.result_code == Code.OK:
                broker_id = LogDirEventNotificationSequenceZNode.decode(response.data)
                if broker_id is not None:
                    broker_ids.append(broker_id)
            elif response.result_code != Code.NONODE:
                raise response.result_exception
        return broker_ids

    def delete_log_dir_event_notifications(self, expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION,
                                           sequence_numbers: Iterable[str] | None = None) -> None:
        if sequence_numbers is None:
            response = self._retry_request_until_connected(
                GetChildrenRequest(LogDirEventNotificationZNode.path(), register_watch=True))
            if response.result_code == Code.NONODE:
                return
            response.maybe_throw()
            sequence_numbers = [LogDirEventNotificationSequenceZNode.sequence_number(c) for c in response.children]
        self._retry_requests_until_connected(
            [DeleteRequest(LogDirEventNotificationSequenceZNode.path(s), ZkVersion.MATCH_ANY_VERSION)
             for s in sequence_numbers], expected_controller_epoch_zk_version)

    # -- reassignment and preferred replica election (ZooKeeper-initiated, pre-2.4 tools) ----

    def get_partition_reassignment(self) -> dict[TopicPartition, tuple[int, ...]]:
        response = self._retry_request_until_connected(GetDataRequest(ReassignPartitionsZNode.path()))
        if response.result_code == Code.OK:
            try:
                return ReassignPartitionsZNode.decode(response.data)
            except ValueError as e:
                logger.warning("Ignoring partition reassignment due to invalid json: %s", e)
                return {}
        if response.result_code == Code.NONODE:
            return {}
        raise response.result_exception

    def set_or_create_partition_reassignment(self, reassignment: Mapping[TopicPartition, Iterable[int]],
                                             expected_controller_epoch_zk_version: int) -> None:
        data = ReassignPartitionsZNode.encode(reassignment)
        path = ReassignPartitionsZNode.path()
        response = self._retry_request_until_connected(SetDataRequest(path, data, ZkVersion.MATCH_ANY_VERSION),
                                                       expected_controller_epoch_zk_version)
        if response.result_code == Code.NONODE:
            self._retry_request_until_connected(
                CreateRequest(path, data, self._default_acls(path), CreateMode.PERSISTENT),
                expected_controller_epoch_zk_version).maybe_throw()
        else:
            response.maybe_throw()

    def create_partition_reassignment(self, reassignment: Mapping[TopicPartition, Iterable[int]]) -> None:
        self.create_recursive(ReassignPartitionsZNode.path(), ReassignPartitionsZNode.encode(reassignment))

    def delete_partition_reassignment(self, expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> None:
        self.delete_path(ReassignPartitionsZNode.path(), expected_controller_epoch_zk_version)

    def reassign_partitions_in_progress(self) -> bool:
        return self.path_exists(ReassignPartitionsZNode.path())

    def create_preferred_replica_election(self, partitions: Iterable[TopicPartition]) -> None:
        self.create_recursive(PreferredReplicaElectionZNode.path(), PreferredReplicaElectionZNode.encode(partitions))

    def get_preferred_replica_election(self) -> set[TopicPartition]:
        response = self._retry_request_until_connected(GetDataRequest(PreferredReplicaElectionZNode.path()))
        if response.result_code == Code.OK:
            return PreferredReplicaElectionZNode.decode(response.data)
        if response.result_code == Code.NONODE:
            return set()
        raise response.result_exception

    def delete_preferred_replica_election(self, expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> None:
        self._retry_request_until_connected(
            DeleteRequest(PreferredReplicaElectionZNode.path(), ZkVersion.MATCH_ANY_VERSION),
            expected_controller_epoch_zk_version)

    # -- features ---------------------------------------------------------------------------------

    def create_feature_znode(self, node: FeatureZNode) -> None:
        self._retry_request_until_connected(
            CreateRequest(FeatureZNode.path(), FeatureZNode.encode(node), self._default_acls(FeatureZNode.path()),
                          CreateMode.PERSISTENT)).maybe_throw()

    def update_feature_znode(self, node: FeatureZNode) -> int:
        response = self._retry_request_until_connected(
            SetDataRequest(FeatureZNode.path(), FeatureZNode.encode(node), ZkVersion.MATCH_ANY_VERSION))
        response.maybe_throw()
        return response.stat.version

    def delete_feature_znode(self) -> None:
        self.delete_path(FeatureZNode.path(), ZkVersion.MATCH_ANY_VERSION, recursive_delete=False)

    def get_feature_znode(self) -> tuple[FeatureZNode | None, int]:
        data, version = self.get_data_and_version(FeatureZNode.path())
        return (None if data is None else FeatureZNode.decode(data)), version

    # -- old consumer offsets -----------------------------------------------------------------

    # -- ACLs (kafka.security.authorizer.AclAuthorizer) --------------------------------------

    # -- delegation tokens (DelegationTokenManager) --------------------------------------------

    def create_delegation_token_paths(self) -> None:
        self.create_recursive(DelegationTokenChangeNotificationZNode.path(), throw_if_path_exists=False)
        self.create_recursive(DelegationTokensZNode.path(), throw_if_path_exists=False)

    def create_token_change_notification(self, token_id: str) -> None:
        """Tell every broker that ``token_id`` changed (or is gone): a sequential znode under
        /delegation_token/token_changes holding the id."""
        path = DelegationTokenChangeNotificationSequenceZNode.create_path()
        response = self._retry_request_until_connected(
            CreateRequest(path, DelegationTokenChangeNotificationSequenceZNode.encode(token_id),
                          self._default_acls(path), CreateMode.PERSISTENT_SEQUENTIAL))
        response.maybe_throw()

    def set_or_create_delegation_token(self, token: Any) -> None:
        """Write the token's znode: set it if it exists, create it otherwise."""
        path = DelegationTokenInfoZNode.path(token.token_info.token_id)
        data = DelegationTokenInfoZNode.encode(token)
        response = self._retry_request_until_connected(SetDataRequest(path, data, ZkVersion.MATCH_ANY_VERSION))
        if response.result_code == Code.NONODE:
            self._retry_request_until_connected(
                CreateRequest(path, data, self._default_acls(path), CreateMode.PERSISTENT)).maybe_throw()
        else:
            response.maybe_throw()

    def get_delegation_token_info(self, token_id: str) -> Any:
        """The TokenInformation stored for ``token_id``, or None when there is none (or it
        cannot be read)."""
        response = self._retry_request_until_connected(GetDataRequest(DelegationTokenInfoZNode.path(token_id)))
        if response.result_code == Code.OK:
            return DelegationTokenInfoZNode.decode(response.data)
        if response.result_code == Code.NONODE:
            return None
        raise response.result_exception

    def delete_delegation_token(self, token_id: str) -> bool:
        return self.delete_recursive(DelegationTokenInfoZNode.path(token_id))

    def create_acl_paths(self) -> None:
        """The ACL roots, one child per resource type under each, and the change roots."""
        for store in ZkAclStore.stores():
            self.create_recursive(store.acl_path, throw_if_path_exists=False)
            for resource_type in sorted(RESOURCE_TYPES, key=lambda t: t.code):
                self.create_recursive(store.path(resource_type), throw_if_path_exists=False)
        for change_store in ZkAclChangeStore.stores():
            self.create_recursive(change_store.acl_change_path, throw_if_path_exists=False)

    def get_versioned_acls_for_resource(self, resource: Any) -> Any:
        """The entries of a resource pattern and its znode version (NO_ACLS when absent)."""
        from kafka_py.core.security.authorizer.acl_authorizer import NO_ACLS

        response = self._retry_request_until_connected(GetDataRequest(ResourceZNode.path(resource)))
        if response.result_code == Code.OK:
            return ResourceZNode.decode(response.data, response.stat.version)
        if response.result_code == Code.NONODE:
            return NO_ACLS
        raise response.result_exception

    def conditional_set_acls_for_resource(self, resource: Any, acls: Iterable[Any],
                                          expected_version: int) -> tuple[bool, int]:
        """Overwrite the resource's entries if its znode is still at ``expected_version``."""
        if expected_version < 0:
            raise ValueError(f"Invalid version {expected_version} provided for conditional update")
        response = self._retry_request_until_connected(
            SetDataRequest(ResourceZNode.path(resource), ResourceZNode.encode(acls), expected_version))
        if response.result_code == Code.OK:
            return True, response.stat.version
        if response.result_code in (Code.NONODE, Code.BADVERSION):
            return False, ZkVersion.UNKNOWN_VERSION
        raise response.result_exception

    def create_acls_for_resource_if_not_exists(self, resource: Any, acls: Iterable[Any]) -> tuple[bool, int]:
        path = ResourceZNode.path(resource)
        response = self._retry_request_until_connected(
            CreateRequest(path, ResourceZNode.encode(acls), self._default_acls(path), CreateMode.PERSISTENT))
        if response.result_code == Code.OK:
            return True, 0
        if response.result_code == Code.NODEEXISTS:
            return False, ZkVersion.UNKNOWN_VERSION
        raise response.result_exception

    def conditional_delete(self, resource: Any, expected_version: int) -> bool:
        """Delete the resource's znode if still at ``expected_version`` (or already gone)."""
        response = self._retry_request_until_connected(DeleteRequest(ResourceZNode.path(resource), expected_version))
        if response.result_code in (Code.OK, Code.NONODE):
            return True
        if response.result_code == Code.BADVERSION:
            return False
        raise response.result_exception

    def create_acl_change_notification(self, resource: Any) -> None:
        change_store = ZkAclStore.of(resource.pattern_type).change_store
        path = change_store.create_path
        response = self._retry_request_until_connected(
            CreateRequest(path, change_store.encode(resource), self._default_acls(path),
                          CreateMode.PERSISTENT_SEQUENTIAL))
        response.maybe_throw()

    def delete_acl_change_notifications(self) -> None:
        for change_store in ZkAclChangeStore.stores():
            response = self._retry_request_until_connected(
                GetChildrenRequest(change_store.acl_change_path, register_watch=True))
            if response.result_code == Code.OK:
                deletes = self._retry_requests_until_connected(
                    [DeleteRequest(f"{change_store.acl_change_path}/{child}", ZkVersion.MATCH_ANY_VERSION)
                     for child in response.children])
                for delete in deletes:
                    if delete.result_code != Code.NONODE:
                        delete.maybe_throw()
            elif response.result_code != Code.NONODE:
                response.maybe_throw()

    def get_resource_types(self, pattern_type: Any) -> list[str]:
        return self.get_children(ZkAclStore.of(pattern_type).acl_path)

    def get_resource_names(self, pattern_type: Any, resource_type: Any) -> list[str]:
        return self.get_children(ZkAclStore.of(pattern_type).path(resource_type))

    def delete_resource(self, resource: Any) -> bool:
        return self.delete_recursive(ResourceZNode.path(resource))

    def resource_exists(self, resource: Any) -> bool:
        return self.path_exists(ResourceZNode.path(resource))

    def get_consumer_offset(self, group: str, topic_partition: TopicPartition) -> int | None:
        response = self._retry_request_until_connected(
            GetDataRequest(ConsumerOffset.path(group, topic_partition.topic, topic_partition.partition)))
        if response.result_code == Code.OK:
            return ConsumerOffset.decode(response.data)
        if response.result_code == Code.NONODE:
            return None
        raise response.result_exception

    def set_or_create_consumer_offset(self, group: str, topic_partition: TopicPartition, offset: int) -> None:
        path = ConsumerOffset.path(group, topic_partition.topic, topic_partition.partition)
        response = self._retry_request_until_connected(
            SetDataRequest(path, ConsumerOffset.encode(offset), ZkVersion.MATCH_ANY_VERSION))
        if response.result_code == Code.NONODE:
            self.create_recursive(path, ConsumerOffset.encode(offset))
        else:
            response.maybe_throw()

    # -- watches and session handlers -----------------------------------------------------------

    def register_znode_change_handler_and_check_existence(self, handler: ZNodeChangeHandler) -> bool:
        """Register ``handler`` and arm its watch with an exists; returns whether the znode exists."""
        self._zk_client.register_znode_change_handler(handler)
        response = self._retry_request_until_connected(ExistsRequest(handler.path))
        if response.result_code == Code.OK:
            return True
        if response.result_code == Code.NONODE:
            return False
        raise response.result_exception

    def register_znode_change_handler(self, handler: ZNodeChangeHandler) -> None:
        self._zk_client.register_znode_change_handler(handler)

    def unregister_znode_change_handler(self, path: str) -> None:
        self._zk_client.unregister_znode_change_handler(path)

    def register_znode_child_change_handler(self, handler: ZNodeChildChangeHandler) -> None:
        self._zk_client.register_znode_child_change_handler(handler)

    def unregister_znode_child_change_handler(self, path: str) -> None:
        self._zk_client.unregister_znode_child_change_handler(path)

    def register_state_change_handler(self, handler: StateChangeHandler) -> None:
        self._zk_client.register_state_change_handler(handler)

    def unregister_state_change_handler(self, name: str) -> None:
        self._zk_client.unregister_state_change_handler(name)

    def close(self) -> None:
        self._zk_client.close()

    def __enter__(self) -> "KafkaZkClient":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _wrap_request_with_controller_epoch_check(request: AsyncRequest, expected_controller_zk_version: int) -> MultiRequest:
    # The check op makes the write conditional on /controller_epoch's version: a controller that
    # lost its election (the epoch znode moved on) cannot change anything.
    check = CheckOp(ControllerEpochZNode.path(), expected_controller_zk_version)
    if isinstance(request, CreateRequest):
        return MultiRequest([check, CreateOp(request.path, request.data, request.acl, request.create_mode)], request.ctx)
    if isinstance(request, DeleteRequest):
        return MultiRequest([check, DeleteOp(request.path, request.version)], request.ctx)
    if isinstance(request, SetDataRequest):
        return MultiRequest([check, SetDataOp(request.path, request.data, request.version)], request.ctx)
    raise RuntimeError(f"{request} does not need controller epoch check")


def _unwrap_response_with_controller_epoch_check(response: MultiResponse) -> AsyncResponse:
    if response.zk_op_results is None:
        raise response.result_exception or keeper_exception(response.result_code)
    (check_result, op_result) = response.zk_op_results
    raw_check = check_result.raw_op_result
    if isinstance(raw_check, ZookeeperError) and not isinstance(raw_check, (RolledBackError, RuntimeInconsistency)):
        if _code_of(raw_check) == Code.BADVERSION:
            raise ControllerMovedException(
                f"Controller epoch zkVersion check fails. Expected zkVersion = {check_result.zk_op.version}")
        raise raw_check
    op, raw = op_result.zk_op, op_result.raw_op_result
    code, ctx = response.result_code, response.ctx
    error = raw if isinstance(raw, ZookeeperError) else None
    if isinstance(op, CreateOp):
        return CreateResponse(code, op.path, ctx, error, name=raw if isinstance(raw, str) else None)
    if isinstance(op, DeleteOp):
        return DeleteResponse(code, op.path, ctx, error)
    if isinstance(op, SetDataOp):
        return SetDataResponse(code, op.path, ctx, error, stat=raw if isinstance(raw, ZnodeStat) else None)
    raise RuntimeError(f"Unexpected zkOp: {op}")
