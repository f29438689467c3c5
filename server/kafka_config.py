"""Port of core/src/main/scala/kafka/server/KafkaConfig.scala (with the key sets of
DynamicBrokerConfig.scala that say which broker configs may change at runtime).

Every broker key of Kafka 2.8.2 that kafka-py reads is declared once in ``CONFIG_DEF`` with
Kafka's type, default and validator. ``KafkaConfig(props)`` parses raw properties (strings
from server.properties, ``--override`` arguments or ZooKeeper, or typed Python values),
derives the values Kafka derives (listeners, log.dirs, retention and roll times with their
ms > minutes > hours precedence, the inter-broker listener ...), and runs Kafka's
cross-key checks (``validate_values``). Anything wrong raises ConfigException naming the
key, the value and what is allowed, before the broker starts anything.

Keys kafka-py accepts but does not act on (metrics reporters, replication quotas, ZooKeeper ACLs) are
declared too, so a Kafka server.properties parses unchanged; plug-in classes that would
change behaviour (topic policies, quota callbacks) are refused rather than silently ignored
(``authorizer.class.name`` takes the Kafka names of the authorizers kafka-py ports),
and so are listeners whose security protocol kafka-py does not speak. Keys that are not
declared at all are logged as Kafka logs them: "The configuration 'x' was supplied but
isn't a known config."

Dynamic broker configs (per-broker and cluster-default, kept in ZooKeeper) layer over the
static properties; ``with_dynamic_overrides`` returns a new KafkaConfig with those layers
after checking that only ``DYNAMIC_BROKER_CONFIGS`` are changed.

KRaft mode: a non-empty ``process.roles`` (``broker``, ``controller`` or both) makes the
node use a Raft metadata quorum (``controller.quorum.*``, defined in
kafka_py/raft/raft_config.py and declared here from there) instead of ZooKeeper;
``requires_zookeeper`` / ``uses_self_managed_quorum`` say which. The node's id is
``node.id`` (``broker.id`` follows it), and ``zookeeper.connect`` is not required. Kafka
2.8.2 declares these keys internal (left out of DescribeConfigs unless set) and checks
little about them; the cross-key checks of the KRaft listeners and voters that Kafka 3.0
and 3.1 added are made here too, with their messages, since a node that passes 2.8.2's
checks but fails them cannot join or form a quorum. The metadata log's
``metadata.log.segment.*``, ``metadata.max.retention.*`` and
``metadata.log.max.record.bytes.between.snapshots`` are Kafka 3.0's (2.8.2 has none).
"""
from __future__ import annotations

import enum
import logging
import math
import os
import re
from decimal import Decimal
from typing import Any, Iterable, Mapping, cast

from kafka_py.core.cluster.broker import (
    DEFAULT_SECURITY_PROTOCOL_MAP,
    EndPoint,
    ListenerName,
    SecurityProtocol,
)
from kafka_py.clients.common.errors import InvalidConfigException
from kafka_py.clients.common.replica_selector import REPLICA_SELECTORS as REPLICA_SELECTOR_CLASSES
from kafka_py.core.security.authorizer import (
    AUTHORIZER_CLASSES,
    AUTHORIZER_CONFIG_KEYS,
    METADATA_AUTHORIZER_CLASSES,
    ZOOKEEPER_AUTHORIZER_CLASSES,
)
from kafka_py.log.log_config import (
    ALL_API_VERSIONS,
    ALL_TOPIC_CONFIG_SYNONYMS,
    BROKER_COMPRESSION_OPTIONS,
    CONFIG_DEF as LOG_CONFIG_DEF,
    TOPIC_CONFIG_SYNONYMS,
    ApiVersion,
    ApiVersionValidator,
    LogConfig,
    api_version,
)
from kafka_py.raft import raft_config
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import LOG_OVERHEAD, RECORD_OVERHEAD_V0, TimestampType
from kafka_py.clients.common.utils import properties
from kafka_py.clients.common.config.config_def import (
    ConfigDef,
    ConfigException,
    Importance,
    Password,
    Type,
    at_least,
    between,
    case_insensitive_in_list,
    in_list,
    valid_list,
)
from kafka_py.core.utils.java_limits import INT_MAX, LONG_MAX

logger = logging.getLogger(__name__)

__all__ = [
    "KafkaConfig", "Defaults", "CONFIG_DEF", "DYNAMIC_BROKER_CONFIGS", "PER_BROKER_CONFIGS",
    "DYNAMIC_LOG_CONFIGS", "DYNAMIC_THREAD_POOL_CONFIGS", "LOG_CLEANER_RECONFIGURABLE_CONFIGS",
    "SOCKET_SERVER_RECONFIGURABLE_CONFIGS", "DYNAMIC_LISTENER_CONFIGS", "DYNAMIC_SECURITY_CONFIGS",
    "SUPPORTED_SECURITY_PROTOCOLS",
    "broker_config_synonyms", "ConfigException", "java_double_to_string", "ProcessRole",
]

_DOUBLE_MAX = 1.7976931348623157e308


class Defaults:
    """Kafka 2.8.2's ``object Defaults`` (kafka.server), for the keys declared here."""

    # ZooKeeper
    ZK_SESSION_TIMEOUT_MS = 18000
    ZK_SYNC_TIME_MS = 2000
    ZK_ENABLE_SECURE_ACLS = False
    ZK_MAX_IN_FLIGHT_REQUESTS = 10
    # General
    BROKER_ID_GENERATION_ENABLE = True
    MAX_RESERVED_BROKER_ID = 1000
    BROKER_ID = -1
    MESSAGE_MAX_BYTES = 1024 * 1024 + LOG_OVERHEAD
    NUM_NETWORK_THREADS = 3
    NUM_IO_THREADS = 8
    BACKGROUND_THREADS = 10
    QUEUED_MAX_REQUESTS = 500
    QUEUED_MAX_REQUEST_BYTES = -1
    INITIAL_BROKER_REGISTRATION_TIMEOUT_MS = 60000
    BROKER_HEARTBEAT_INTERVAL_MS = 2000
    BROKER_SESSION_TIMEOUT_MS = 9000
    # KRaft mode
    EMPTY_NODE_ID = -1
    # Kafka 3.0's; 2.8.2 never takes metadata snapshots
    METADATA_SNAPSHOT_MAX_NEW_RECORD_BYTES = 20 * 1024 * 1024
    METADATA_LOG_SEGMENT_MIN_BYTES = 8 * 1024 * 1024
    REQUEST_TIMEOUT_MS = 30000
    CONNECTION_SETUP_TIMEOUT_MS = 10 * 1000
    CONNECTION_SETUP_TIMEOUT_MAX_MS = 30 * 1000
    AUTHORIZER_CLASS_NAME = ""
    # Socket server
    PORT = 9092
    HOST_NAME = ""
    LISTENER_SECURITY_PROTOCOL_MAP = ",".join(
        f"{name.value}:{protocol.name}" for name, protocol in DEFAULT_SECURITY_PROTOCOL_MAP.items())
    SOCKET_SEND_BUFFER_BYTES = 100 * 1024
    SOCKET_RECEIVE_BUFFER_BYTES = 100 * 1024
    SOCKET_REQUEST_MAX_BYTES = 100 * 1024 * 1024
    MAX_CONNECTIONS_PER_IP = INT_MAX
    MAX_CONNECTIONS_PER_IP_OVERRIDES = ""
    MAX_CONNECTIONS = INT_MAX
    MAX_CONNECTION_CREATION_RATE = INT_MAX
    CONNECTIONS_MAX_IDLE_MS = 10 * 60 * 1000
    FAILED_AUTHENTICATION_DELAY_MS = 100
    # Log
    NUM_PARTITIONS = 1
    LOG_DIR = "/tmp/kafka-logs"
    LOG_SEGMENT_BYTES = 1 * 1024 * 1024 * 1024
    LOG_ROLL_HOURS = 24 * 7
    LOG_ROLL_JITTER_HOURS = 0
    LOG_RETENTION_HOURS = 24 * 7
    LOG_RETENTION_BYTES = -1
    LOG_CLEANUP_INTERVAL_MS = 5 * 60 * 1000
    DELETE = "delete"
    COMPACT = "compact"
    LOG_CLEANUP_POLICY = DELETE
    LOG_CLEANER_THREADS = 1
    LOG_CLEANER_IO_MAX_BYTES_PER_SECOND = _DOUBLE_MAX
    LOG_CLEANER_DEDUPE_BUFFER_SIZE = 128 * 1024 * 1024
    LOG_CLEANER_IO_BUFFER_SIZE = 512 * 1024
    LOG_CLEANER_DEDUPE_BUFFER_LOAD_FACTOR = 0.9
    LOG_CLEANER_BACKOFF_MS = 15 * 1000
    LOG_CLEANER_MIN_CLEAN_RATIO = 0.5
    LOG_CLEANER_ENABLE = True
    LOG_CLEANER_DELETE_RETENTION_MS = 24 * 60 * 60 * 1000
    LOG_CLEANER_MIN_COMPACTION_LAG_MS = 0
    LOG_CLEANER_MAX_COMPACTION_LAG_MS = LONG_MAX
    LOG_INDEX_SIZE_MAX_BYTES = 10 * 1024 * 1024
    LOG_INDEX_INTERVAL_BYTES = 4096
    LOG_FLUSH_INTERVAL_MESSAGES = LONG_MAX
    LOG_DELETE_DELAY_MS = 60000
    LOG_FLUSH_SCHEDULER_INTERVAL_MS = LONG_MAX
    LOG_FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS = 60000
    LOG_INITIAL_TASK_DELAY_MS = 30 * 1000
    LOG_FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS = 60000
    LOG_PRE_ALLOCATE_ENABLE = False
    LOG_PREFAULT_BYTES = 16 * 1024 * 1024
    LOG_MESSAGE_TIMESTAMP_TYPE = "CreateTime"
    LOG_MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS = LONG_MAX
    NUM_RECOVERY_THREADS_PER_DATA_DIR = 1
    AUTO_CREATE_TOPICS_ENABLE = True
    MIN_IN_SYNC_REPLICAS = 1
    MESSAGE_DOWN_CONVERSION_ENABLE = True
    # Replication
    CONTROLLER_SOCKET_TIMEOUT_MS = REQUEST_TIMEOUT_MS
    DEFAULT_REPLICATION_FACTOR = 1
    REPLICA_LAG_TIME_MAX_MS = 30000
    REPLICA_SOCKET_TIMEOUT_MS = 30 * 1000
    REPLICA_SOCKET_RECEIVE_BUFFER_BYTES = 64 * 1024
    REPLICA_FETCH_MAX_BYTES = 1024 * 1024
    REPLICA_FETCH_WAIT_MAX_MS = 500
    REPLICA_FETCH_MIN_BYTES = 1
    REPLICA_FETCH_RESPONSE_MAX_BYTES = 10 * 1024 * 1024
    NUM_REPLICA_FETCHERS = 1
    REPLICA_FETCH_BACKOFF_MS = 1000
    REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS = 5000
    FETCH_PURGATORY_PURGE_INTERVAL_REQUESTS = 1000
    PRODUCER_PURGATORY_PURGE_INTERVAL_REQUESTS = 1000
    DELETE_RECORDS_PURGATORY_PURGE_INTERVAL_REQUESTS = 1
    AUTO_LEADER_REBALANCE_ENABLE = True
    LEADER_IMBALANCE_PER_BROKER_PERCENTAGE = 10
    LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS = 300
    UNCLEAN_LEADER_ELECTION_ENABLE = False
    INTER_BROKER_SECURITY_PROTOCOL = SecurityProtocol.PLAINTEXT.name
    INTER_BROKER_PROTOCOL_VERSION = ALL_API_VERSIONS[-1].version
    LOG_MESSAGE_FORMAT_VERSION = INTER_BROKER_PROTOCOL_VERSION
    # Controlled shutdown
    CONTROLLED_SHUTDOWN_MAX_RETRIES = 3
    CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS = 5000
    CONTROLLED_SHUTDOWN_ENABLE = True
    # Group coordinator
    GROUP_MIN_SESSION_TIMEOUT_MS = 6000
    GROUP_MAX_SESSION_TIMEOUT_MS = 1800000
    GROUP_INITIAL_REBALANCE_DELAY_MS = 3000
    GROUP_MAX_SIZE = INT_MAX
    # Offset management (kafka.coordinator.group.OffsetConfig)
    OFFSET_METADATA_MAX_SIZE = 4096
    OFFSETS_LOAD_BUFFER_SIZE = 5 * 1024 * 1024
    OFFSETS_TOPIC_REPLICATION_FACTOR = 3
    OFFSETS_TOPIC_PARTITIONS = 50
    OFFSETS_TOPIC_SEGMENT_BYTES = 100 * 1024 * 1024
    OFFSETS_TOPIC_COMPRESSION_CODEC = 0
    OFFSETS_RETENTION_MINUTES = 7 * 24 * 60
    OFFSETS_RETENTION_CHECK_INTERVAL_MS = 600000
    OFFSET_COMMIT_TIMEOUT_MS = 5000
    OFFSET_COMMIT_REQUIRED_ACKS = -1
    # Transactions (TransactionStateManager, TransactionLog)
    TRANSACTIONAL_ID_EXPIRATION_MS = 7 * 24 * 60 * 60 * 1000
    TRANSACTIONS_MAX_TIMEOUT_MS = 15 * 60 * 1000
    TRANSACTIONS_TOPIC_MIN_ISR = 2
    TRANSACTIONS_LOAD_BUFFER_SIZE = 5 * 1024 * 1024
    TRANSACTIONS_TOPIC_REPLICATION_FACTOR = 3
    TRANSACTIONS_TOPIC_PARTITIONS = 50
    TRANSACTIONS_TOPIC_SEGMENT_BYTES = 100 * 1024 * 1024
    TRANSACTIONS_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS = 10 * 1000
    TRANSACTIONS_REMOVE_EXPIRED_TRANSACTIONAL_ID_CLEANUP_INTERVAL_MS = 60 * 60 * 1000
    # Fetch
    MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS = 1000
    FETCH_MAX_BYTES = 55 * 1024 * 1024
    # Quotas (ClientQuotaManagerConfig, ReplicationQuotaManagerConfig)
    QUOTA_BYTES_PER_SECOND_DEFAULT = LONG_MAX
    NUM_QUOTA_SAMPLES = 11
    QUOTA_WINDOW_SIZE_SECONDS = 1
    DELETE_TOPIC_ENABLE = True
    COMPRESSION_TYPE = "producer"
    # Raft quorum: RaftConfig's defaults, which live in kafka_py/raft/raft_config.py
    QUORUM_VOTERS = raft_config.DEFAULT_QUORUM_VOTERS
    QUORUM_ELECTION_TIMEOUT_MS = raft_config.DEFAULT_QUORUM_ELECTION_TIMEOUT_MS
    QUORUM_FETCH_TIMEOUT_MS = raft_config.DEFAULT_QUORUM_FETCH_TIMEOUT_MS
    QUORUM_ELECTION_BACKOFF_MS = raft_config.DEFAULT_QUORUM_ELECTION_BACKOFF_MAX_MS
    QUORUM_LINGER_MS = raft_config.DEFAULT_QUORUM_LINGER_MS
    QUORUM_REQUEST_TIMEOUT_MS = raft_config.DEFAULT_QUORUM_REQUEST_TIMEOUT_MS
    QUORUM_RETRY_BACKOFF_MS = raft_config.DEFAULT_QUORUM_RETRY_BACKOFF_MS
    # Metrics
    METRIC_NUM_SAMPLES = 2
    METRIC_SAMPLE_WINDOW_MS = 30000
    METRIC_REPORTER_CLASSES = ""
    METRIC_RECORDING_LEVEL = "INFO"
    KAFKA_METRIC_REPORTER_CLASSES = ""
    KAFKA_METRICS_POLLING_INTERVAL_SECONDS = 10


#: Security protocols kafka-py's SocketServer can serve: all four of Kafka's.
SUPPORTED_SECURITY_PROTOCOLS: frozenset[SecurityProtocol] = frozenset(SecurityProtocol)

# Plug-in class keys whose Kafka counterparts change what the broker allows; a Python broker
# cannot load the Java class, and ignoring it would drop an operator's policy silently.
_UNSUPPORTED_PLUGIN_KEYS = (
    "create.topic.policy.class.name",
    "alter.config.policy.class.name",
    "client.quota.callback.class",
    "ssl.engine.factory.class",
)


class ProcessRole(enum.Enum):
    """A role of a KRaft node (Kafka's KafkaRaftServer.ProcessRole: BrokerRole, ControllerRole),
    by its name in process.roles."""

    BROKER = "broker"
    CONTROLLER = "controller"


_H, _M, _L = Importance.HIGH, Importance.MEDIUM, Importance.LOW
_IGNORED = "Accepted for compatibility with Kafka's configuration; kafka-py does not use it."


# -- the definition (KafkaConfig.configDef) -------------------------------------------------

CONFIG_DEF: ConfigDef = (
    ConfigDef()
    # ZooKeeper
    .define("zookeeper.connect", Type.STRING, None, None, _H,
            "ZooKeeper connection string host1:port1,host2:port2[/chroot]; required unless process.roles "
            "is set (KRaft mode).")
    .define("zookeeper.session.timeout.ms", Type.INT, Defaults.ZK_SESSION_TIMEOUT_MS, None, _H,
            "ZooKeeper session timeout; the broker's ephemeral znodes vanish after it.")
    .define("zookeeper.connection.timeout.ms", Type.INT, None, None, _H,
            "How long to wait for the ZooKeeper connection; defaults to zookeeper.session.timeout.ms.")
    .define("zookeeper.sync.time.ms", Type.INT, Defaults.ZK_SYNC_TIME_MS, None, _L, _IGNORED)
    .define("zookeeper.set.acl", Type.BOOLEAN, Defaults.ZK_ENABLE_SECURE_ACLS, None, _H,
            "Create znodes with secure ACLs; kafka-py only supports false.")
    .define("zookeeper.max.in.flight.requests", Type.INT, Defaults.ZK_MAX_IN_FLIGHT_REQUESTS, at_least(1), _H,
            "Most unacknowledged requests the ZooKeeper client sends before blocking.")
    # General
    .define("broker.id.generation.enable", Type.BOOLEAN, Defaults.BROKER_ID_GENERATION_ENABLE, None, _M,
            "Let a broker without broker.id take a generated id above reserved.broker.max.id.")
    .define("reserved.broker.max.id", Type.INT, Defaults.MAX_RESERVED_BROKER_ID, at_least(0), _M,
            "Largest broker.id an operator may configure; generated ids start above it.")
    .define("broker.id", Type.INT, Defaults.BROKER_ID, None, _H,
            "This broker's id; -1 asks for a generated one (see broker.id.generation.enable).")
    .define("message.max.bytes", Type.INT, Defaults.MESSAGE_MAX_BYTES, at_least(0), _H,
            "Largest record batch the broker accepts (default of the topic config max.message.bytes).")
    .define("num.network.threads", Type.INT, Defaults.NUM_NETWORK_THREADS, at_least(1), _H,
            "Processor threads per listener, each reading requests and writing responses.")
    .define("num.io.threads", Type.INT, Defaults.NUM_IO_THREADS, at_least(1), _H,
            "Request handler threads that run KafkaApis.")
    .define("num.replica.alter.log.dirs.threads", Type.INT, None, None, _H,
            "The number of threads that move replicas between log directories (AlterReplicaLogDirs); "
            "by default one per directory of log.dirs.")
    .define("background.threads", Type.INT, Defaults.BACKGROUND_THREADS, at_least(1), _H,
            "Threads of the broker's scheduler (retention, flushes, checkpoints).")
    .define("queued.max.requests", Type.INT, Defaults.QUEUED_MAX_REQUESTS, at_least(1), _H,
            "Requests that may wait for a handler before network threads stop reading.")
    .define("queued.max.request.bytes", Type.LONG, Defaults.QUEUED_MAX_REQUEST_BYTES, None, _M,
            "Bytes of queued requests before network threads stop reading; -1 for no limit.")
    .define("request.timeout.ms", Type.INT, Defaults.REQUEST_TIMEOUT_MS, None, _H,
            "How long the broker's own clients (controller, fetchers) wait for a response.")
    .define("socket.connection.setup.timeout.ms", Type.LONG, Defaults.CONNECTION_SETUP_TIMEOUT_MS, None, _M,
            "How long the broker's own clients wait for a connection to be established.")
    .define("socket.connection.setup.timeout.max.ms", Type.LONG, Defaults.CONNECTION_SETUP_TIMEOUT_MAX_MS, None,
            _M, "Upper bound of the exponentially growing connection setup timeout.")
    # KRaft mode: internal keys in Kafka 2.8.2 (its KRaft mode was early access), so DescribeConfigs
    # leaves them out unless set
    .define_internal("process.roles", Type.LIST, [], valid_list("broker", "controller"), _H,
                     "The roles this node plays: broker, controller, or broker,controller for both. Set, it "
                     "runs in KRaft mode (metadata in a Raft quorum of controllers, no ZooKeeper); unset or "
                     "empty, it is a ZooKeeper-based broker.")
    # kafka-py's own key (Kafka 2.8.2 sets a broker's supported features only in its tests):
    # server/broker_features.py
    .define_internal("supported.features", Type.LIST, [], None, _L,
                     "kafka-py only. The features (KIP-584) this node supports, as name:min-max items; "
                     "empty, as in Kafka 2.8.2, which defines no features.")
    .define_internal("node.id", Type.INT, Defaults.EMPTY_NODE_ID, None, _H,
                     "The id of this node in KRaft mode, required there; broker.id takes its value.")
    .define_internal("initial.broker.registration.timeout.ms", Type.INT,
                     Defaults.INITIAL_BROKER_REGISTRATION_TIMEOUT_MS, None, _M,
                     "How long a KRaft broker waits for its first registration with the controller quorum "
                     "before it gives up and exits.")
    .define_internal("broker.heartbeat.interval.ms", Type.INT, Defaults.BROKER_HEARTBEAT_INTERVAL_MS, None, _M,
                     "Time between a KRaft broker's heartbeats to the active controller.")
    .define_internal("broker.session.timeout.ms", Type.INT, Defaults.BROKER_SESSION_TIMEOUT_MS, None, _M,
                     "How long a KRaft broker's lease lasts without a heartbeat before the controller fences it.")
    .define_internal("metadata.log.dir", Type.STRING, None, None, _H,
                     "Directory of the KRaft metadata log; by default the first of log.dirs.")
    .define_internal("controller.listener.names", Type.STRING, None, None, _H,
                     "Comma separated names of the listeners the controllers use; required in KRaft mode. A "
                     "controller listens on them, a broker connects to the controllers through the first.")
    .define_internal("sasl.mechanism.controller.protocol", Type.STRING, "GSSAPI", None, _H,
                     "SASL mechanism used to talk to the controllers.")
    # Kafka 3.0's keys of the metadata log (2.8.2 has none: it keeps the whole log and never
    # snapshots); internal here, so a 2.8.2 DescribeConfigs answer stays the same
    .define_internal("metadata.log.max.record.bytes.between.snapshots", Type.LONG,
                     Defaults.METADATA_SNAPSHOT_MAX_NEW_RECORD_BYTES, at_least(1), _H,
                     "Bytes of the metadata log between the latest snapshot and the high watermark before a "
                     "new snapshot is taken.")
    .define_internal("metadata.log.segment.bytes", Type.INT, Defaults.LOG_SEGMENT_BYTES, at_least(LOG_OVERHEAD), _H,
                     "Size of one metadata log segment.")
    .define_internal("metadata.log.segment.min.bytes", Type.INT, Defaults.METADATA_LOG_SEGMENT_MIN_BYTES,
                     at_least(LOG_OVERHEAD), _H,
                     "Smallest metadata.log.segment.bytes allowed; lower it for tests only.")
    .define_internal("metadata.log.segment.ms", Type.LONG, Defaults.LOG_ROLL_HOURS * 60 * 60 * 1000, None, _H,
                     "Roll a metadata log segment after this long.")
    .define_internal("metadata.max.retention.bytes", Type.LONG, Defaults.LOG_RETENTION_BYTES, None, _H,
                     "Largest combined size of the metadata log and its snapshots before old ones are deleted; "
                     "a soft limit, since a log segment goes only once a snapshot covers it. -1 for no limit.")
    .define_internal("metadata.max.retention.ms", Type.LONG, Defaults.LOG_RETENTION_HOURS * 60 * 60 * 1000, None,
                     _H, "How long a metadata log segment or snapshot is kept; a soft limit, as "
                     "metadata.max.retention.bytes.")
    .define("authorizer.class.name", Type.STRING, Defaults.AUTHORIZER_CLASS_NAME, None, _L,
            "The authorizer: empty for none, kafka.security.authorizer.AclAuthorizer (ACLs in "
            "ZooKeeper) or, in KRaft mode, org.apache.kafka.metadata.authorizer.StandardAuthorizer (ACLs "
            "in the metadata log); both configured by super.users and allow.everyone.if.no.acl.found.")
    # Socket server
    .define("port", Type.INT, Defaults.PORT, None, _H,
            "Deprecated: port of the PLAINTEXT listener when listeners is not set.")
    .define("host.name", Type.STRING, Defaults.HOST_NAME, None, _H,
            "Deprecated: host of the PLAINTEXT listener when listeners is not set.")
    .define("listeners", Type.STRING, None, None, _H,
            "Comma separated listener URIs NAME://host:port; an empty host binds every interface, "
            "port 0 an ephemeral port.")
    .define("advertised.host.name", Type.STRING, None, None, _H,
            "Deprecated: host published in ZooKeeper when advertised.listeners is not set.")
    .define("advertised.port", Type.INT, None, None, _H,
            "Deprecated: port published in ZooKeeper when advertised.listeners is not set.")
    .define("advertised.listeners", Type.STRING, None, None, _H,
            "Listeners published in ZooKeeper for clients and other brokers; defaults to listeners.")
    .define("listener.security.protocol.map", Type.STRING, Defaults.LISTENER_SECURITY_PROTOCOL_MAP, None, _L,
            "Listener name to security protocol, NAME:PROTOCOL pairs separated by commas.")
    .define("control.plane.listener.name", Type.STRING, None, None, _H,
            "Listener reserved for controller requests; unset means they share the data plane.")
    .define("socket.send.buffer.bytes", Type.INT, Defaults.SOCKET_SEND_BUFFER_BYTES, None, _H,
            "SO_SNDBUF of accepted sockets; -1 keeps the OS default.")
    .define("socket.receive.buffer.bytes", Type.INT, Defaults.SOCKET_RECEIVE_BUFFER_BYTES, None, _H,
            "SO_RCVBUF of accepted sockets; -1 keeps the OS default.")
    .define("socket.request.max.bytes", Type.INT, Defaults.SOCKET_REQUEST_MAX_BYTES, at_least(1), _H,
            "Largest request accepted; a larger size prefix closes the connection.")
    .define("max.connections.per.ip", Type.INT, Defaults.MAX_CONNECTIONS_PER_IP, at_least(0), _M,
            "Connections accepted from one address.")
    .define("max.connections.per.ip.overrides", Type.STRING, Defaults.MAX_CONNECTIONS_PER_IP_OVERRIDES, None, _M,
            "Per-address limits as host:count pairs separated by commas.")
    .define("max.connections", Type.INT, Defaults.MAX_CONNECTIONS, at_least(0), _M,
            "Connections accepted by the broker in total.")
    .define("max.connection.creation.rate", Type.INT, Defaults.MAX_CONNECTION_CREATION_RATE, at_least(0), _M,
            "New connections per second a listener accepts.")
    .define("connections.max.idle.ms", Type.LONG, Defaults.CONNECTIONS_MAX_IDLE_MS, None, _M,
            "Idle connections are closed after this long.")
    .define("connection.failed.authentication.delay.ms", Type.INT, Defaults.FAILED_AUTHENTICATION_DELAY_MS,
            at_least(0), _L, "How long a connection that failed to authenticate is held before it is closed.")
    .define("broker.rack", Type.STRING, None, None, _M, "Rack of this broker, published in ZooKeeper.")
    # Log
    .define("num.partitions", Type.INT, Defaults.NUM_PARTITIONS, at_least(1), _M,
            "Partitions of an auto-created topic.")
    .define("log.dir", Type.STRING, Defaults.LOG_DIR, None, _H, "Data directory, used when log.dirs is not set.")
    .define("log.dirs", Type.STRING, None, None, _H,
            "Comma separated data directories; when set, log.dir is ignored.")
    .define("log.segment.bytes", Type.INT, Defaults.LOG_SEGMENT_BYTES, at_least(RECORD_OVERHEAD_V0), _H,
            "Size of one segment file.")
    .define("log.roll.ms", Type.LONG, None, None, _H, "Roll a segment after this long; overrides log.roll.hours.")
    .define("log.roll.hours", Type.INT, Defaults.LOG_ROLL_HOURS, at_least(1), _H,
            "Roll a segment after this many hours (when log.roll.ms is not set).")
    .define("log.roll.jitter.ms", Type.LONG, None, None, _H,
            "Largest random amount taken off the roll time; overrides log.roll.jitter.hours.")
    .define("log.roll.jitter.hours", Type.INT, Defaults.LOG_ROLL_JITTER_HOURS, at_least(0), _H,
            "Roll jitter in hours (when log.roll.jitter.ms is not set).")
    .define("log.retention.ms", Type.LONG, None, None, _H,
            "Keep segments this long; -1 for ever. Takes precedence over minutes and hours.")
    .define("log.retention.minutes", Type.INT, None, None, _H,
            "Retention in minutes (when log.retention.ms is not set); over log.retention.hours.")
    .define("log.retention.hours", Type.INT, Defaults.LOG_RETENTION_HOURS, None, _H,
            "Retention in hours, used when neither log.retention.ms nor minutes is set.")
    .define("log.retention.bytes", Type.LONG, Defaults.LOG_RETENTION_BYTES, None, _H,
            "Largest size of a partition before old segments are deleted; -1 for no limit.")
    .define("log.retention.check.interval.ms", Type.LONG, Defaults.LOG_CLEANUP_INTERVAL_MS, at_least(1), _M,
            "How often the log manager looks for segments to delete.")
    .define("log.cleanup.policy", Type.LIST, Defaults.LOG_CLEANUP_POLICY,
            valid_list(Defaults.COMPACT, Defaults.DELETE), _M,
            "Default cleanup policy of topics: delete, compact or both.")
    .define("log.cleaner.threads", Type.INT, Defaults.LOG_CLEANER_THREADS, at_least(0), _M,
            "Threads compacting logs.")
    .define("log.cleaner.io.max.bytes.per.second", Type.DOUBLE, Defaults.LOG_CLEANER_IO_MAX_BYTES_PER_SECOND,
            None, _M, "Throttle of the cleaner's reads plus writes.")
    .define("log.cleaner.dedupe.buffer.size", Type.LONG, Defaults.LOG_CLEANER_DEDUPE_BUFFER_SIZE, None, _M,
            "Memory for the cleaner's key to offset map, shared by all cleaner threads.")
    .define("log.cleaner.io.buffer.size", Type.INT, Defaults.LOG_CLEANER_IO_BUFFER_SIZE, at_least(0), _M,
            "I/O buffer memory of the cleaner, shared by all cleaner threads.")
    .define("log.cleaner.io.buffer.load.factor", Type.DOUBLE, Defaults.LOG_CLEANER_DEDUPE_BUFFER_LOAD_FACTOR,
            None, _M, "Fill factor of the cleaner's dedupe map.")
    .define("log.cleaner.backoff.ms", Type.LONG, Defaults.LOG_CLEANER_BACKOFF_MS, at_least(0), _M,
            "Sleep of a cleaner thread when no log needs cleaning.")
    .define("log.cleaner.min.cleanable.ratio", Type.DOUBLE, Defaults.LOG_CLEANER_MIN_CLEAN_RATIO, None, _M,
            "Default min.cleanable.dirty.ratio of topics.")
    .define("log.cleaner.enable", Type.BOOLEAN, Defaults.LOG_CLEANER_ENABLE, None, _M,
            "Run the log cleaner (needed by compacted topics, including __consumer_offsets).")
    .define("log.cleaner.delete.retention.ms", Type.LONG, Defaults.LOG_CLEANER_DELETE_RETENTION_MS, None, _M,
            "Default delete.retention.ms of topics.")
    .define("log.cleaner.min.compaction.lag.ms", Type.LONG, Defaults.LOG_CLEANER_MIN_COMPACTION_LAG_MS, None, _M,
            "Default min.compaction.lag.ms of topics.")
    .define("log.cleaner.max.compaction.lag.ms", Type.LONG, Defaults.LOG_CLEANER_MAX_COMPACTION_LAG_MS, None, _M,
            "Default max.compaction.lag.ms of topics.")
    .define("log.index.size.max.bytes", Type.INT, Defaults.LOG_INDEX_SIZE_MAX_BYTES, at_least(4), _M,
            "Size preallocated for each index file.")
    .define("log.index.interval.bytes", Type.INT, Defaults.LOG_INDEX_INTERVAL_BYTES, at_least(0), _M,
            "Bytes of log between offset index entries.")
    .define("log.flush.interval.messages", Type.LONG, Defaults.LOG_FLUSH_INTERVAL_MESSAGES, at_least(1), _H,
            "fsync a log after this many messages.")
    .define("log.segment.delete.delay.ms", Type.LONG, Defaults.LOG_DELETE_DELAY_MS, at_least(0), _H,
            "Delay before a deleted segment's files are removed.")
    .define("log.flush.scheduler.interval.ms", Type.LONG, Defaults.LOG_FLUSH_SCHEDULER_INTERVAL_MS, None, _H,
            "How often the flusher checks whether a log needs an fsync.")
    .define("log.flush.interval.ms", Type.LONG, None, None, _H,
            "fsync a log when this long passed since the last flush; defaults to "
            "log.flush.scheduler.interval.ms.")
    .define("log.flush.offset.checkpoint.interval.ms", Type.INT, Defaults.LOG_FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS,
            at_least(0), _H, "How often recovery points are checkpointed.")
    .define("log.flush.start.offset.checkpoint.interval.ms", Type.INT,
            Defaults.LOG_FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS, at_least(0), _H,
            "How often log start offsets are checkpointed.")
    # Kafka 3.x's internal key of the same name; 2.8 hard-codes the delay (LogManager.InitialTaskDelayMs)
    .define("log.initial.task.delay.ms", Type.LONG, Defaults.LOG_INITIAL_TASK_DELAY_MS, at_least(0), _L,
            "Delay before the log manager's periodic tasks (retention, flush, checkpoints) first run.")
    .define("log.preallocate", Type.BOOLEAN, Defaults.LOG_PRE_ALLOCATE_ENABLE, None, _M,
            "Preallocate new segment files at full size.")
    # kafka-py's own key (no Kafka counterpart): kafka_py/tuning/page_cache_prefaulter.py
    .define("log.prefault.bytes", Type.LONG, Defaults.LOG_PREFAULT_BYTES, at_least(0), _L,
            "kafka-py only. With log.preallocate, how far ahead of each fast-written active segment's end "
            "a background thread fills the page cache, so that appends do not pay for touching new "
            "memory; 0 turns it off.")
    .define("num.recovery.threads.per.data.dir", Type.INT, Defaults.NUM_RECOVERY_THREADS_PER_DATA_DIR,
            at_least(1), _H, "Threads per data directory loading logs at startup and flushing at shutdown.")
    .define("auto.create.topics.enable", Type.BOOLEAN, Defaults.AUTO_CREATE_TOPICS_ENABLE, None, _H,
            "Create a topic when a client asks for metadata of a topic that does not exist.")
    .define("min.insync.replicas", Type.INT, Defaults.MIN_IN_SYNC_REPLICAS, at_least(1), _H,
            "Fewest in-sync replicas for an acks=all produce (default of the topic config).")
    .define("log.message.format.version", Type.STRING, Defaults.LOG_MESSAGE_FORMAT_VERSION, ApiVersionValidator(),
            _M, "Message format the logs write, named by a Kafka version.")
    .define("log.message.timestamp.type", Type.STRING, Defaults.LOG_MESSAGE_TIMESTAMP_TYPE,
            in_list("CreateTime", "LogAppendTime"), _M, "Default message.timestamp.type of topics.")
    .define("log.message.timestamp.difference.max.ms", Type.LONG, Defaults.LOG_MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS,
            None, _M, "Default message.timestamp.difference.max.ms of topics.")
    .define("create.topic.policy.class.name", Type.CLASS, None, None, _L,
            "Kafka's CreateTopicPolicy plug-in; refused by kafka-py.")
    .define("alter.config.policy.class.name", Type.CLASS, None, None, _L,
            "Kafka's AlterConfigPolicy plug-in; refused by kafka-py.")
    .define("log.message.downconversion.enable", Type.BOOLEAN, Defaults.MESSAGE_DOWN_CONVERSION_ENABLE, None, _L,
            "Default message.downconversion.enable of topics.")
    # Replication
    .define("controller.socket.timeout.ms", Type.INT, Defaults.CONTROLLER_SOCKET_TIMEOUT_MS, None, _M,
            "Socket timeout of controller-to-broker channels.")
    .define("default.replication.factor", Type.INT, Defaults.DEFAULT_REPLICATION_FACTOR, None, _M,
            "Replication factor of auto-created topics.")
    .define("replica.lag.time.max.ms", Type.LONG, Defaults.REPLICA_LAG_TIME_MAX_MS, None, _H,
            "A follower that has not caught up for this long leaves the ISR.")
    .define("replica.socket.timeout.ms", Type.INT, Defaults.REPLICA_SOCKET_TIMEOUT_MS, None, _H,
            "Socket timeout of replica fetch requests.")
    .define("replica.socket.receive.buffer.bytes", Type.INT, Defaults.REPLICA_SOCKET_RECEIVE_BUFFER_BYTES, None, _H,
            "SO_RCVBUF of replica fetcher sockets.")
    .define("replica.fetch.max.bytes", Type.INT, Defaults.REPLICA_FETCH_MAX_BYTES, at_least(0), _M,
            "Bytes fetched per partition by a follower.")
    .define("replica.fetch.wait.max.ms", Type.INT, Defaults.REPLICA_FETCH_WAIT_MAX_MS, None, _H,
            "Longest wait of a follower's fetch request.")
    .define("replica.fetch.backoff.ms", Type.INT, Defaults.REPLICA_FETCH_BACKOFF_MS, at_least(0), _M,
            "Sleep after a fetch error.")
    .define("replica.fetch.min.bytes", Type.INT, Defaults.REPLICA_FETCH_MIN_BYTES, None, _H,
            "Least bytes a follower's fetch waits for.")
    .define("replica.fetch.response.max.bytes", Type.INT, Defaults.REPLICA_FETCH_RESPONSE_MAX_BYTES,
            at_least(0), _M, "Bytes fetched in one response by a follower.")
    .define("num.replica.fetchers", Type.INT, Defaults.NUM_REPLICA_FETCHERS, None, _H,
            "Fetcher threads per source broker.")
    .define("replica.high.watermark.checkpoint.interval.ms", Type.LONG,
            Defaults.REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS, None, _H,
            "How often high watermarks are checkpointed.")
    .define("fetch.purgatory.purge.interval.requests", Type.INT, Defaults.FETCH_PURGATORY_PURGE_INTERVAL_REQUESTS,
            None, _M, "Completed delayed fetches tolerated before the purgatory is purged.")
    .define("producer.purgatory.purge.interval.requests", Type.INT,
            Defaults.PRODUCER_PURGATORY_PURGE_INTERVAL_REQUESTS, None, _M,
            "Completed delayed produces tolerated before the purgatory is purged.")
    .define("delete.records.purgatory.purge.interval.requests", Type.INT,
            Defaults.DELETE_RECORDS_PURGATORY_PURGE_INTERVAL_REQUESTS, None, _M,
            "Completed delayed delete-records tolerated before the purgatory is purged.")
    .define("auto.leader.rebalance.enable", Type.BOOLEAN, Defaults.AUTO_LEADER_REBALANCE_ENABLE, None, _H,
            "Let the controller move leadership back to preferred replicas: every "
            "leader.imbalance.check.interval.seconds it elects the preferred replicas of a broker whose share "
            "of partitions led by another broker exceeds leader.imbalance.per.broker.percentage.")
    .define("leader.imbalance.per.broker.percentage", Type.INT, Defaults.LEADER_IMBALANCE_PER_BROKER_PERCENTAGE,
            None, _H, "The share (in percent) of a broker's preferred partitions led by other brokers above "
                      "which the controller moves their leadership back.")
    .define("leader.imbalance.check.interval.seconds", Type.LONG, Defaults.LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS,
            at_least(1), _H, "How often the controller checks the leader balance.")
    .define("unclean.leader.election.enable", Type.BOOLEAN, Defaults.UNCLEAN_LEADER_ELECTION_ENABLE, None, _H,
            "Default unclean.leader.election.enable of topics.")
    .define("security.inter.broker.protocol", Type.STRING, Defaults.INTER_BROKER_SECURITY_PROTOCOL, None, _M,
            "Security protocol between brokers; exclusive with inter.broker.listener.name.")
    .define("inter.broker.protocol.version", Type.STRING, Defaults.INTER_BROKER_PROTOCOL_VERSION,
            ApiVersionValidator(), _M, "Protocol version brokers use with each other.")
    .define("inter.broker.listener.name", Type.STRING, None, None, _M,
            "Listener brokers use with each other; exclusive with security.inter.broker.protocol.")
    .define("replica.selector.class", Type.STRING, None, None, _M,
            "Kafka's ReplicaSelector plug-in; refused by kafka-py.")
    # Security (BrokerSecurityConfigs, SslConfigs, SaslConfigs); each may be given per listener
    # as listener.name.<listener>.<key>, and sasl.jaas.config also per listener and mechanism
    # (listener.name.<listener>.<mechanism>.sasl.jaas.config). kafka_py/clients/common/security reads them.
    .define("ssl.protocol", Type.STRING, "TLSv1.3", None, _M, "TLS protocol family; informational.")
    .define("ssl.provider", Type.STRING, None, None, _M, _IGNORED)
    .define("ssl.enabled.protocols", Type.LIST, "TLSv1.2,TLSv1.3", None, _M,
            "TLS versions a listener accepts (TLSv1.2, TLSv1.3).")
    .define("ssl.cipher.suites", Type.LIST, "", None, _L,
            "TLS 1.2 cipher suites (OpenSSL names); empty means the library's defaults.")
    .define("ssl.keystore.type", Type.STRING, "JKS", None, _M, "Key store format: JKS, PKCS12 or PEM.")
    .define("ssl.keystore.location", Type.STRING, None, None, _H,
            "PEM file holding the listener's private key and certificate chain.")
    .define("ssl.keystore.password", Type.PASSWORD, None, None, _H,
            "Key store password (JKS and PKCS12; none for PEM).")
    .define("ssl.key.password", Type.PASSWORD, None, None, _H,
            "Password of the private key (JKS: its entry's; PEM: of an encrypted key).")
    .define("ssl.keystore.certificate.chain", Type.PASSWORD, None, None, _H,
            "Certificate chain in PEM, inline (instead of ssl.keystore.location).")
    .define("ssl.keystore.key", Type.PASSWORD, None, None, _H, "Private key in PEM, inline.")
    .define("ssl.truststore.type", Type.STRING, "JKS", None, _M, "Trust store format: JKS, PKCS12 or PEM.")
    .define("ssl.truststore.location", Type.STRING, None, None, _H,
            "File of trusted CA certificates, of ssl.truststore.type.")
    .define("ssl.truststore.password", Type.PASSWORD, None, None, _H,
            "Trust store password (JKS and PKCS12; none for PEM).")
    .define("ssl.truststore.certificates", Type.PASSWORD, None, None, _H, "Trusted certificates in PEM, inline.")
    .define("ssl.client.auth", Type.STRING, "none", case_insensitive_in_list("required", "requested", "none"), _M,
            "Whether clients must (required), may (requested) or do not (none) present a certificate.")
    .define("ssl.endpoint.identification.algorithm", Type.STRING, "https", None, _L,
            "Host name verification of the server certificate by inter-broker clients (https or empty).")
    .define("ssl.principal.mapping.rules", Type.STRING, "DEFAULT", None, _L,
            "Rules mapping a client certificate's distinguished name to a user name.")
    .define("ssl.keymanager.algorithm", Type.STRING, "SunX509", None, _L, _IGNORED)
    .define("ssl.trustmanager.algorithm", Type.STRING, "PKIX", None, _L, _IGNORED)
    .define("ssl.secure.random.implementation", Type.STRING, None, None, _L, _IGNORED)
    .define("ssl.engine.factory.class", Type.CLASS, None, None, _L, "Refused by kafka-py.")
    # Password encoder (kafka_py/core/utils/password_encoder.py): dynamic password configs in ZooKeeper
    .define("password.encoder.secret", Type.PASSWORD, None, None, _M,
            "The secret dynamic password configs (a listener's store passwords) are encrypted with in "
            "ZooKeeper. Unset: a dynamic password config is refused.")
    .define("password.encoder.old.secret", Type.PASSWORD, None, None, _M,
            "The secret the dynamic passwords were encrypted with before password.encoder.secret; at startup "
            "they are re-encrypted with the new one.")
    .define("password.encoder.keyfactory.algorithm", Type.STRING, None, None, _L,
            "PBKDF2 algorithm deriving the key: PBKDF2WithHmacSHA512 when unset.")
    .define("password.encoder.cipher.algorithm", Type.STRING, "AES/CBC/PKCS5Padding", None, _L,
            "Cipher of the encrypted passwords (AES/CBC/PKCS5Padding or AES/GCM/NoPadding).")
    .define("password.encoder.key.length", Type.INT, 128, at_least(8), _L, "Key length in bits.")
    .define("password.encoder.iterations", Type.INT, 4096, at_least(1024), _L, "PBKDF2 iteration count.")
    .define("sasl.enabled.mechanisms", Type.LIST, "GSSAPI", None, _M,
            "SASL mechanisms a SASL listener offers (GSSAPI, PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER).")
    .define("sasl.mechanism.inter.broker.protocol", Type.STRING, "GSSAPI", None, _M,
            "SASL mechanism brokers use with each other over a SASL inter-broker listener.")
    # GSSAPI (kafka_py/clients/common/security/kerberos.py)
    .define("sasl.kerberos.service.name", Type.STRING, None, None, _M,
            "The Kerberos service name the broker runs as (the primary of its principal, kafka in "
            "kafka/host@REALM): required when a listener enables GSSAPI.")
    .define("sasl.kerberos.kinit.cmd", Type.STRING, "/usr/bin/kinit", None, _L, _IGNORED)
    .define("sasl.kerberos.ticket.renew.window.factor", Type.DOUBLE, 0.8, None, _L, _IGNORED)
    .define("sasl.kerberos.ticket.renew.jitter", Type.DOUBLE, 0.05, None, _L, _IGNORED)
    .define("sasl.kerberos.min.time.before.relogin", Type.LONG, 60000, None, _L, _IGNORED)
    .define("sasl.kerberos.principal.to.local.rules", Type.LIST, "DEFAULT", None, _M,
            "Rules mapping a client's Kerberos principal to the user name of its KafkaPrincipal, in "
            "Kafka's auth_to_local syntax (RULE:[n:format](match)s/from/to/g/L, DEFAULT), first match wins.")
    .define("sasl.jaas.config", Type.PASSWORD, None, None, _M,
            "JAAS login context: PlainLoginModule users (user_<name>=\"<password>\") and the "
            "broker's own username/password for inter-broker connections.")
    # OAUTHBEARER (kafka_py/clients/common/security/oauthbearer.py): plug-in classes by Python dotted path
    .define("sasl.server.callback.handler.class", Type.CLASS, None, None, _M,
            "A SASL server callback handler, read only as listener.name.<listener>.oauthbearer."
            "sasl.server.callback.handler.class: the Python class (package.module.ClassName) that "
            "validates OAUTHBEARER tokens instead of the unsecured JWS validator.")
    .define("sasl.login.callback.handler.class", Type.CLASS, None, None, _M,
            "The Python class (package.module.ClassName) that gives the broker its own OAUTHBEARER "
            "token for inter-broker connections instead of the unsecured JWS login.")
    .define("sasl.login.class", Type.CLASS, None, None, _L, _IGNORED)
    .define("sasl.login.refresh.window.factor", Type.DOUBLE, 0.8, between(0.5, 1.0), _L,
            "Share of an OAUTHBEARER token's lifetime after which the broker's login takes a new one.")
    .define("sasl.login.refresh.window.jitter", Type.DOUBLE, 0.05, between(0.0, 0.25), _L,
            "Random share of the token's lifetime added to the refresh window factor.")
    .define("sasl.login.refresh.min.period.seconds", Type.SHORT, 60, between(0, 900), _L, _IGNORED)
    .define("sasl.login.refresh.buffer.seconds", Type.SHORT, 300, between(0, 3600), _L, _IGNORED)
    .define("sasl.server.max.receive.size", Type.INT, 524288, at_least(1), _L,
            "Largest frame accepted from a client before it has authenticated.")
    .define("connections.max.reauth.ms", Type.LONG, 0, None, _M,
            "Longest an authenticated SASL session lasts before the client must re-authenticate; 0 means forever.")
    # Delegation tokens (KIP-48, server/delegation_token_manager.py); without a secret key they are off.
    .define("delegation.token.master.key", Type.PASSWORD, None, None, _M,
            "DEPRECATED: an alias for delegation.token.secret.key, used when that is not set.")
    .define("delegation.token.secret.key", Type.PASSWORD, None, None, _M,
            "Secret key that signs and verifies delegation tokens; the same on every broker. "
            "Unset or empty: delegation tokens are disabled.")
    .define("delegation.token.max.lifetime.ms", Type.LONG, 7 * 24 * 60 * 60 * 1000, at_least(1), _M,
            "A token's maximum lifetime, past which it cannot be renewed (7 days).")
    .define("delegation.token.expiry.time.ms", Type.LONG, 24 * 60 * 60 * 1000, at_least(1), _M,
            "How long a token stays valid before it must be renewed (1 day).")
    .define("delegation.token.expiry.check.interval.ms", Type.LONG, 60 * 60 * 1000, at_least(1), _L,
            "How often the controller removes expired tokens (1 hour).")
    # Controlled shutdown
    .define("controlled.shutdown.max.retries", Type.INT, Defaults.CONTROLLED_SHUTDOWN_MAX_RETRIES, None, _M,
            "Attempts at a controlled shutdown before shutting down uncleanly.")
    .define("controlled.shutdown.retry.backoff.ms", Type.LONG, Defaults.CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS, None,
            _M, "Pause between controlled shutdown attempts.")
    .define("controlled.shutdown.enable", Type.BOOLEAN, Defaults.CONTROLLED_SHUTDOWN_ENABLE, None, _M,
            "Move leadership away through the controller before shutting down.")
    # Group coordinator
    .define("group.min.session.timeout.ms", Type.INT, Defaults.GROUP_MIN_SESSION_TIMEOUT_MS, None, _M,
            "Smallest session timeout a consumer may ask for.")
    .define("group.max.session.timeout.ms", Type.INT, Defaults.GROUP_MAX_SESSION_TIMEOUT_MS, None, _M,
            "Largest session timeout a consumer may ask for.")
    .define("group.initial.rebalance.delay.ms", Type.INT, Defaults.GROUP_INITIAL_REBALANCE_DELAY_MS, None, _M,
            "How long an empty group waits for more members before its first rebalance.")
    .define("group.max.size", Type.INT, Defaults.GROUP_MAX_SIZE, at_least(1), _M, "Most members of one group.")
    # Offset management
    .define("offset.metadata.max.bytes", Type.INT, Defaults.OFFSET_METADATA_MAX_SIZE, None, _H,
            "Largest metadata string of a committed offset.")
    .define("offsets.load.buffer.size", Type.INT, Defaults.OFFSETS_LOAD_BUFFER_SIZE, at_least(1), _H,
            "Read size when loading offsets into the cache.")
    .define("offsets.topic.replication.factor", Type.SHORT, Defaults.OFFSETS_TOPIC_REPLICATION_FACTOR,
            at_least(1), _H, "Replication factor of __consumer_offsets.")
    .define("offsets.topic.num.partitions", Type.INT, Defaults.OFFSETS_TOPIC_PARTITIONS, at_least(1), _H,
            "Partitions of __consumer_offsets.")
    .define("offsets.topic.segment.bytes", Type.INT, Defaults.OFFSETS_TOPIC_SEGMENT_BYTES, at_least(1), _H,
            "Segment size of __consumer_offsets.")
    .define("offsets.topic.compression.codec", Type.INT, Defaults.OFFSETS_TOPIC_COMPRESSION_CODEC, between(0, 4),
            _H, "Codec id of offset commits: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd.")
    .define("offsets.retention.minutes", Type.INT, Defaults.OFFSETS_RETENTION_MINUTES, at_least(1), _H,
            "How long committed offsets of an empty group are kept.")
    .define("offsets.retention.check.interval.ms", Type.LONG, Defaults.OFFSETS_RETENTION_CHECK_INTERVAL_MS,
            at_least(1), _H, "How often stale offsets are looked for.")
    .define("offsets.commit.timeout.ms", Type.INT, Defaults.OFFSET_COMMIT_TIMEOUT_MS, at_least(1), _H,
            "How long an offset commit waits for replication.")
    .define("offsets.commit.required.acks", Type.SHORT, Defaults.OFFSET_COMMIT_REQUIRED_ACKS, None, _H,
            "Acks an offset commit needs.")
    .define("delete.topic.enable", Type.BOOLEAN, Defaults.DELETE_TOPIC_ENABLE, None, _H,
            "Allow topics to be deleted.")
    .define("compression.type", Type.STRING, Defaults.COMPRESSION_TYPE, None, _H,
            "Default compression.type of topics: " + ", ".join(BROKER_COMPRESSION_OPTIONS) + ".")
    # Transaction management
    .define("transactional.id.expiration.ms", Type.INT, Defaults.TRANSACTIONAL_ID_EXPIRATION_MS, at_least(1), _H,
            "Idle time after which a transactional id, and a producer id's state, expire.")
    .define("transaction.max.timeout.ms", Type.INT, Defaults.TRANSACTIONS_MAX_TIMEOUT_MS, at_least(1), _H,
            "Largest transaction timeout a producer may ask for.")
    .define("transaction.state.log.min.isr", Type.INT, Defaults.TRANSACTIONS_TOPIC_MIN_ISR, at_least(1), _H,
            "min.insync.replicas of __transaction_state.")
    .define("transaction.state.log.load.buffer.size", Type.INT, Defaults.TRANSACTIONS_LOAD_BUFFER_SIZE,
            at_least(1), _H, "Read size when loading transaction state.")
    .define("transaction.state.log.replication.factor", Type.SHORT, Defaults.TRANSACTIONS_TOPIC_REPLICATION_FACTOR,
            at_least(1), _H, "Replication factor of __transaction_state.")
    .define("transaction.state.log.num.partitions", Type.INT, Defaults.TRANSACTIONS_TOPIC_PARTITIONS, at_least(1),
            _H, "Partitions of __transaction_state.")
    .define("transaction.state.log.segment.bytes", Type.INT, Defaults.TRANSACTIONS_TOPIC_SEGMENT_BYTES,
            at_least(1), _H, "Segment size of __transaction_state.")
    .define("transaction.abort.timed.out.transaction.cleanup.interval.ms", Type.INT,
            Defaults.TRANSACTIONS_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS, at_least(1), _L,
            "How often timed-out transactions are rolled back.")
    .define("transaction.remove.expired.transaction.cleanup.interval.ms", Type.INT,
            Defaults.TRANSACTIONS_REMOVE_EXPIRED_TRANSACTIONAL_ID_CLEANUP_INTERVAL_MS, at_least(1), _L,
            "How often expired transactional ids are removed.")
    # Kafka 3.6's (KIP-890): docs/transactions.md
    .define("transaction.partition.verification.enable", Type.BOOLEAN, True, None, _L,
            "Whether a partition leader asks the transaction coordinator that a partition is part of "
            "the producer's ongoing transaction before taking the transaction's first batch on it.")
    # Fetch
    .define("max.incremental.fetch.session.cache.slots", Type.INT,
            Defaults.MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS, at_least(0), _M,
            "Incremental fetch sessions the broker keeps.")
    .define("fetch.max.bytes", Type.INT, Defaults.FETCH_MAX_BYTES, at_least(1024), _M,
            "Largest fetch response the broker builds.")
    # Metrics: the samples of Kafka-metrics rates and averages (socket-server-metrics); the rest accepted, unused
    .define("metrics.num.samples", Type.INT, Defaults.METRIC_NUM_SAMPLES, at_least(1), _L,
            "Windows the network threads' authentication rates and averages are computed over.")
    .define("metrics.sample.window.ms", Type.LONG, Defaults.METRIC_SAMPLE_WINDOW_MS, at_least(1), _L,
            "Length of each of those windows.")
    .define("metric.reporters", Type.LIST, Defaults.METRIC_REPORTER_CLASSES, None, _L, _IGNORED)
    .define("metrics.recording.level", Type.STRING, Defaults.METRIC_RECORDING_LEVEL, None, _L, _IGNORED)
    .define("kafka.metrics.reporters", Type.LIST, Defaults.KAFKA_METRIC_REPORTER_CLASSES, None, _L, _IGNORED)
    .define("kafka.metrics.polling.interval.secs", Type.INT, Defaults.KAFKA_METRICS_POLLING_INTERVAL_SECONDS,
            at_least(1), _L, _IGNORED)
    # kafka-py's own keys (no Kafka counterpart): kafka_py/core/metrics/prometheus_exporter.py
    .define("kafka.py.metrics.prometheus.port", Type.INT, -1, between(-1, 65535), _M,
            "kafka-py only. Port of the HTTP endpoint serving the broker's metrics in Prometheus's text format "
            "at /metrics, named as the Prometheus JMX exporter names Kafka's; -1 (the default) serves none, 0 any "
            "free port (logged at startup).")
    .define("kafka.py.metrics.prometheus.host", Type.STRING, "0.0.0.0", None, _M,
            "kafka-py only. Address the Prometheus endpoint listens on.")
    .define("kafka.py.metrics.enabled", Type.BOOLEAN, True, None, _L,
            "kafka-py only. Record the per-request metrics (RequestMetrics, ErrorsPerSec, BrokerTopicMetrics); "
            "false skips them, to measure what they cost. Gauges are always served.")
    # Client, controller and replication quotas (server/quota_factory.py)
    .define("quota.producer.default", Type.LONG, Defaults.QUOTA_BYTES_PER_SECOND_DEFAULT, at_least(1), _H,
            "Deprecated: the producer byte rate of every client id without a dynamic quota; prefer "
            "kafka-configs.sh --entity-type clients --entity-default.")
    .define("quota.consumer.default", Type.LONG, Defaults.QUOTA_BYTES_PER_SECOND_DEFAULT, at_least(1), _H,
            "Deprecated: the consumer byte rate of every client id without a dynamic quota; prefer "
            "kafka-configs.sh --entity-type clients --entity-default.")
    .define("quota.window.num", Type.INT, Defaults.NUM_QUOTA_SAMPLES, at_least(1), _L,
            "Samples kept in memory for client quotas (the rate spans at least this many minus one windows).")
    .define("replication.quota.window.num", Type.INT, Defaults.NUM_QUOTA_SAMPLES, at_least(1), _L,
            "Samples kept in memory for replication quotas (server/replication_quota_manager.py).")
    .define("alter.log.dirs.replication.quota.window.num", Type.INT, Defaults.NUM_QUOTA_SAMPLES, at_least(1), _L,
            "Samples kept in memory for the quota of replicas moving between log dirs.")
    .define("controller.quota.window.num", Type.INT, Defaults.NUM_QUOTA_SAMPLES, at_least(1), _L,
            "Samples of controller_mutation_rate quotas: the token bucket holds this many windows' worth.")
    .define("quota.window.size.seconds", Type.INT, Defaults.QUOTA_WINDOW_SIZE_SECONDS, at_least(1), _L,
            "Seconds each client quota sample spans.")
    .define("replication.quota.window.size.seconds", Type.INT, Defaults.QUOTA_WINDOW_SIZE_SECONDS, at_least(1), _L,
            "Seconds each replication quota sample spans.")
    .define("alter.log.dirs.replication.quota.window.size.seconds", Type.INT, Defaults.QUOTA_WINDOW_SIZE_SECONDS,
            at_least(1), _L, "Seconds each sample of the quota of replicas moving between log dirs spans.")
    # Replication throttles (Kafka's DynamicConfig.Broker): dynamic per-broker configs only.
    .define("leader.replication.throttled.rate", Type.LONG, Defaults.QUOTA_BYTES_PER_SECOND_DEFAULT, at_least(0), _M,
            "Bytes per second this broker sends to followers of the replicas listed in the topic config "
            "leader.replication.throttled.replicas. Applied from the broker's own dynamic config "
            "(kafka-configs.sh --entity-type brokers --entity-name <id>), as in Kafka 2.8; a value in "
            "server.properties or a cluster default is not applied.")
    .define("follower.replication.throttled.rate", Type.LONG, Defaults.QUOTA_BYTES_PER_SECOND_DEFAULT, at_least(0),
            _M, "Bytes per second this broker's replica fetchers take for the replicas listed in the topic config "
            "follower.replication.throttled.replicas. Per-broker dynamic config, as "
            "leader.replication.throttled.rate.")
    .define("replica.alter.log.dirs.io.max.bytes.per.second", Type.LONG, Defaults.QUOTA_BYTES_PER_SECOND_DEFAULT,
            at_least(0), _M, "Bytes per second copied while a replica moves between this broker's log dirs. "
            "Per-broker dynamic config, as leader.replication.throttled.rate.")
    .define("controller.quota.window.size.seconds", Type.INT, Defaults.QUOTA_WINDOW_SIZE_SECONDS, at_least(1), _L,
            "Seconds each controller_mutation_rate quota sample spans.")
    .define("client.quota.callback.class", Type.CLASS, None, None, _L,
            "Kafka's ClientQuotaCallback plug-in; refused by kafka-py.")
)
# The controller.quorum.* keys, declared once by RaftConfig (name, default, validator, doc) and
# internal here, as in Kafka 2.8.2.
for _quorum_key in raft_config.CONFIG_DEF.config_keys.values():
    CONFIG_DEF.define_internal(_quorum_key.name, _quorum_key.type, _quorum_key.default_value,
                               _quorum_key.validator, _quorum_key.importance, _quorum_key.documentation)
del _quorum_key


# -- dynamic broker configs (DynamicBrokerConfig.scala and the Reconfigurables it lists) ------

#: Broker keys that supply topic-config defaults and may change at runtime (DynamicLogConfig).
#: log.message.format.version is left out, as in Kafka, because every broker must support
#: a format before any may write it.
DYNAMIC_LOG_CONFIGS: frozenset[str] = frozenset(TOPIC_CONFIG_SYNONYMS.values()) - {"log.message.format.version"}
#: LogCleaner.ReconfigurableConfigs, restricted to keys declared here.
LOG_CLEANER_RECONFIGURABLE_CONFIGS: frozenset[str] = frozenset({
    "log.cleaner.threads", "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.load.factor",
    "log.cleaner.io.buffer.size", "message.max.bytes", "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.backoff.ms",
})
#: DynamicThreadPool.ReconfigurableConfigs.
DYNAMIC_THREAD_POOL_CONFIGS: frozenset[str] = frozenset({
    "num.io.threads", "num.network.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir",
    "background.threads",
})
#: DynamicBrokerConfig.DynamicSecurityConfigs (SslConfigs.RECONFIGURABLE_CONFIGS): a listener's key
#: and trust stores, changed only with the listener prefix (listener.name.<l>.ssl.keystore.location).
DYNAMIC_SECURITY_CONFIGS: frozenset[str] = frozenset({
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates",
})
#: DynamicListenerConfig.ReconfigurableConfigs without the SSL/SASL keys kafka-py does not declare.
DYNAMIC_LISTENER_CONFIGS: frozenset[str] = frozenset({
    "advertised.listeners", "listeners", "listener.security.protocol.map",
    "max.connections", "max.connection.creation.rate",
})
#: SocketServer.ReconfigurableConfigs.
SOCKET_SERVER_RECONFIGURABLE_CONFIGS: frozenset[str] = frozenset({
    "max.connections.per.ip", "max.connections.per.ip.overrides", "max.connections", "max.connection.creation.rate",
})
#: DynamicConfig.Broker: the replication throttles, applied by the BrokerConfigHandler.
DYNAMIC_REPLICATION_QUOTA_CONFIGS: frozenset[str] = frozenset({
    "leader.replication.throttled.rate", "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
})
#: Every broker key that may be changed at runtime (Kafka's DynamicBrokerConfig.AllDynamicConfigs).
DYNAMIC_BROKER_CONFIGS: frozenset[str] = (
    DYNAMIC_LOG_CONFIGS | LOG_CLEANER_RECONFIGURABLE_CONFIGS | DYNAMIC_THREAD_POOL_CONFIGS
    | frozenset({"metric.reporters"}) | DYNAMIC_LISTENER_CONFIGS | SOCKET_SERVER_RECONFIGURABLE_CONFIGS
    | DYNAMIC_REPLICATION_QUOTA_CONFIGS | DYNAMIC_SECURITY_CONFIGS
)
#: Dynamic keys that only make sense for one broker, never as a cluster-wide default.
PER_BROKER_CONFIGS: frozenset[str] = (DYNAMIC_LISTENER_CONFIGS | DYNAMIC_SECURITY_CONFIGS) - {
    "max.connections", "max.connection.creation.rate"}

_LISTENER_CONFIG = re.compile(r"listener\.name\.[^.]*\.(.*)\Z")


def broker_config_synonyms(name: str, match_listener_override: bool = False) -> list[str]:
    """Broker keys that set the same thing as ``name``, highest precedence first
    (DynamicBrokerConfig.brokerConfigSynonyms); DescribeConfigs reports them."""
    if name in ("log.roll.ms", "log.roll.hours"):
        return ["log.roll.ms", "log.roll.hours"]
    if name in ("log.roll.jitter.ms", "log.roll.jitter.hours"):
        return ["log.roll.jitter.ms", "log.roll.jitter.hours"]
    if name == "log.flush.interval.ms":
        return ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
    if name in ("log.retention.ms", "log.retention.minutes", "log.retention.hours"):
        return ["log.retention.ms", "log.retention.minutes", "log.retention.hours"]
    match = _LISTENER_CONFIG.match(name)
    if match and match_listener_override:
        return [name, match.group(1)]
    return [name]


# -- small parsers of Kafka's CoreUtils -----------------------------------------------------

_CSV_SPLIT = re.compile(r"\s*,\s*")
# A whole listener URI, as Scala's regex extractor demands in EndPoint.createEndPoint.
_LISTENER_URI = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)\Z")
_VALID_HOST_CHARACTERS = re.compile(r"[0-9a-zA-Z\-%._:]*\Z")


def _parse_csv_list(value: str | None) -> list[str]:
    if not value:
        return []
    return [v for v in _CSV_SPLIT.split(value) if v != ""]


def _parse_csv_map(name: str, value: str) -> dict[str, str]:
    """CoreUtils.parseCsvMap: "k1:v1,k2:v2", each entry split at its last colon."""
    result: dict[str, str] = {}
    if value == "":
        return result
    for entry in _CSV_SPLIT.split(value):
        key, sep, val = entry.rpartition(":")
        if not sep:
            raise ConfigException(name, value, f"Error parsing configuration property '{name}': "
                                  f"entry '{entry}' is not of the form key:value")
        result[key.strip()] = val.strip()
    return result


def _java_string(value: Any) -> str:
    """How Java prints a config value in the "KafkaConfig values:" block."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_java_string(v) for v in value) + "]"
    if isinstance(value, float):
        return java_double_to_string(value)
    if isinstance(value, Password):
        return "[hidden]"
    return str(value)


def java_double_to_string(value: float) -> str:
    """Java's Double.toString, as Kafka prints doubles (configs, quotas): plain decimals in [1e-3, 1e7), otherwise d.dddE<exp>."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0.0"
    if 1e-3 <= abs(value) < 1e7:
        text = repr(value)
        return text if "." in text or "e" in text else text + ".0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    digit_text = "".join(map(str, digits))
    # (an int for a finite value; a NaN or an infinity fails here, as it did untyped)
    point_exponent = len(digit_text) - 1 + cast(int, exponent)
    mantissa = digit_text[0] + "." + (digit_text[1:] or "0")
    return ("-" if sign else "") + f"{mantissa}E{point_exponent}"


def _unknown_keys(props: Mapping[str, Any]) -> list[str]:
    unknown = []
    for key in props:
        if key in CONFIG_DEF.config_keys or key in AUTHORIZER_CONFIG_KEYS:
            continue
        match = _LISTENER_CONFIG.match(key)
        if match and (match.group(1) in CONFIG_DEF.config_keys
                      or match.group(1).endswith(".sasl.jaas.config")):
            continue
        unknown.append(key)
    return unknown


# -- the config -----------------------------------------------------------------------------

class KafkaConfig:
    """A broker's validated configuration; attributes are Kafka's names in snake_case.

    ``props`` are the static properties; ``dynamic_broker_configs`` and
    ``dynamic_default_configs`` are the per-broker and cluster-default dynamic layers (see
    ``with_dynamic_overrides``), which take precedence in that order.
    """

    def __init__(self, props: Mapping[str, Any], do_log: bool = True, *,
                 dynamic_broker_configs: Mapping[str, Any] | None = None,
                 dynamic_default_configs: Mapping[str, Any] | None = None) -> None:
        # A None value means "not set", as a key missing from java.util.Properties.
        self._static: dict[str, Any] = {str(k): v for k, v in props.items() if v is not None}
        self._dynamic_default: dict[str, Any] = {
            str(k): v for k, v in (dynamic_default_configs or {}).items() if v is not None}
        self._dynamic_broker: dict[str, Any] = {
            str(k): v for k, v in (dynamic_broker_configs or {}).items() if v is not None}
        self._originals: dict[str, Any] = {**self._static, **self._dynamic_default, **self._dynamic_broker}

        if do_log:
            self.log_unused()
        self._values: dict[str, Any] = CONFIG_DEF.parse(self._originals)
        if do_log:
            self.log_all()
        self._init_attributes()
        self.validate_values()
        # The running broker's DynamicBrokerConfig (Kafka's KafkaConfig.dynamicConfig), set by the
        # server that owns this config and carried to the configs its dynamic updates make: the
        # broker's own clients find through it the reconfigurable channel builders they share.
        self.dynamic_config: Any = None

    # -- construction ----------------------------------------------------------------------

    @classmethod
    def from_props(cls, props: Mapping[str, Any], overrides: Mapping[str, Any] | None = None,
                   do_log: bool = True) -> "KafkaConfig":
        return cls({**props, **(overrides or {})}, do_log)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], overrides: Iterable[str] = (),
                  do_log: bool = True) -> "KafkaConfig":
        """Load a server.properties file and apply ``key=value`` overrides (the strings given
        to ``--override`` on the command line), as kafka.Kafka.getPropsFromArgs does."""
        try:
            props = properties.load_file(path)
        except properties.PropertiesParseError as e:
            raise ConfigException(str(path), full_message=f"Cannot parse {path}: {e}") from None
        props.update(properties.parse_key_value_args(overrides))
        return cls(props, do_log)

    def with_dynamic_overrides(self, per_broker: Mapping[str, Any] | None = None,
                               cluster_default: Mapping[str, Any] | None = None,
                               do_log: bool = False) -> "KafkaConfig":
        """A new KafkaConfig with these dynamic layers over the same static properties.

        Each mapping given replaces that whole layer (as a ZooKeeper config znode holds
        the whole layer); None keeps the current one. Only DYNAMIC_BROKER_CONFIGS may
        appear, per-broker-only keys may not be cluster defaults, and thread pools may
        change by at most a factor of two at a time, as Kafka's DynamicBrokerConfig checks.
        """
        broker_layer = dict(self._dynamic_broker if per_broker is None else per_broker)
        default_layer = dict(self._dynamic_default if cluster_default is None else cluster_default)
        self.validate_dynamic_configs(broker_layer, per_broker=True)
        self.validate_dynamic_configs(default_layer, per_broker=False)
        new_config = KafkaConfig(self._static, do_log, dynamic_broker_configs=broker_layer,
                                 dynamic_default_configs=default_layer)
        # A generated broker id exists only on the running config, never in the properties.
        new_config.broker_id = self.broker_id
        new_config.dynamic_config = self.dynamic_config
        self._validate_reconfiguration(new_config)
        return new_config

    @staticmethod
    def validate_dynamic_configs(props: Mapping[str, Any], per_broker: bool) -> None:
        """Names (and values) of one dynamic layer (DynamicBrokerConfig.validateConfigs)."""
        names = {_base_name(k) for k in props}
        non_dynamic = sorted(n for n in names if n not in DYNAMIC_BROKER_CONFIGS)
        if non_dynamic:
            raise ConfigException(non_dynamic[0], props.get(non_dynamic[0]),
                                  f"Cannot update these configs dynamically: {non_dynamic}")
        unprefixed = sorted(k for k in props if k in DYNAMIC_SECURITY_CONFIGS)
        if unprefixed:
            raise ConfigException(unprefixed[0], "[hidden]", "These security configs can be dynamically updated "
                                  f"only per-listener using the listener prefix: {unprefixed}")
        if not per_broker:
            broker_only = sorted(n for n in names if n in PER_BROKER_CONFIGS)
            if broker_only:
                raise ConfigException(broker_only[0], props.get(broker_only[0]),
                                      "Cannot update these configs at default cluster level, "
                                      f"broker id must be specified: {broker_only}")
        for key, value in props.items():
            config_key = CONFIG_DEF.config_keys.get(_base_name(key))
            if config_key is not None and value is not None:
                CONFIG_DEF.parse_value(config_key, value, True)

    def _validate_reconfiguration(self, new_config: "KafkaConfig") -> None:
        for name in sorted(DYNAMIC_THREAD_POOL_CONFIGS):
            old_value, new_value = self._values[name], new_config._values[name]
            if new_value == old_value:
                continue
            problem = f"Dynamic thread count update validation failed for {name}={new_value}"
            if new_value <= 0:
                raise ConfigException(name, new_value, f"{problem}, value should be at least 1")
            if new_value < old_value // 2:
                raise ConfigException(name, new_value,
                                      f"{problem}, value should be at least half the current value {old_value}")
            if new_value > old_value * 2:
                raise ConfigException(name, new_value, f"{problem}, value should not be greater than "
                                      f"double the current value {old_value}")
        for listener, protocol in self.listener_security_protocol_map.items():
            if listener in {e.listener_name for e in new_config.listeners} and \
                    listener in {e.listener_name for e in self.listeners} and \
                    new_config.listener_security_protocol_map.get(listener) != protocol:
                raise ConfigException("listener.security.protocol.map",
                                      new_config.get("listener.security.protocol.map"),
                                      f"Security protocol cannot be updated for existing listener {listener.value}")

    # -- derived attributes (the vals and defs of Kafka's class) ----------------------------

    def _init_attributes(self) -> None:
        v = self._values
        # ZooKeeper
        self.zk_connect: str | None = v["zookeeper.connect"]
        self.zk_session_timeout_ms: int = v["zookeeper.session.timeout.ms"]
        self.zk_connection_timeout_ms: int = (v["zookeeper.connection.timeout.ms"]
                                              if v["zookeeper.connection.timeout.ms"] is not None
                                              else self.zk_session_timeout_ms)
        self.zk_sync_time_ms: int = v["zookeeper.sync.time.ms"]
        self.zk_enable_secure_acls: bool = v["zookeeper.set.acl"]
        self.zk_max_in_flight_requests: int = v["zookeeper.max.in.flight.requests"]

        # General
        self.broker_id_generation_enable: bool = v["broker.id.generation.enable"]
        self.max_reserved_broker_id: int = v["reserved.broker.max.id"]
        #: Mutable, as in Kafka: KafkaServer replaces -1 with the id stored in meta.properties
        #: or generated in ZooKeeper. A node.id, when set, is the broker id too.
        self.broker_id: int = v["node.id"] if v["node.id"] >= 0 else v["broker.id"]
        #: The id of a KRaft node; as in Kafka it falls back to broker.id, so the two always agree.
        self.node_id: int = self.broker_id
        self.process_roles: frozenset[ProcessRole] = self._parse_process_roles()
        self.initial_registration_timeout_ms: int = v["initial.broker.registration.timeout.ms"]
        self.broker_heartbeat_interval_ms: int = v["broker.heartbeat.interval.ms"]
        self.broker_session_timeout_ms: int = v["broker.session.timeout.ms"]
        self.num_network_threads: int = v["num.network.threads"]
        self.background_threads: int = v["background.threads"]
        self.queued_max_requests: int = v["queued.max.requests"]
        self.queued_max_bytes: int = v["queued.max.request.bytes"]
        self.num_io_threads: int = v["num.io.threads"]
        self.message_max_bytes: int = v["message.max.bytes"]
        self.request_timeout_ms: int = v["request.timeout.ms"]
        self.connection_setup_timeout_ms: int = v["socket.connection.setup.timeout.ms"]
        self.connection_setup_timeout_max_ms: int = v["socket.connection.setup.timeout.max.ms"]

        # Socket server
        self.host_name: str = v["host.name"]
        self.port: int = v["port"]
        self.advertised_host_name: str = (v["advertised.host.name"] if v["advertised.host.name"] is not None
                                          else self.host_name)
        self.advertised_port: int = v["advertised.port"] if v["advertised.port"] is not None else self.port
        self.socket_send_buffer_bytes: int = v["socket.send.buffer.bytes"]
        self.socket_receive_buffer_bytes: int = v["socket.receive.buffer.bytes"]
        self.socket_request_max_bytes: int = v["socket.request.max.bytes"]
        self.max_connections_per_ip: int = v["max.connections.per.ip"]
        self.max_connections_per_ip_overrides: dict[str, int] = self._parse_max_connections_per_ip_overrides()
        self.max_connections: int = v["max.connections"]
        self.max_connection_creation_rate: int = v["max.connection.creation.rate"]
        self.connections_max_idle_ms: int = v["connections.max.idle.ms"]
        self.failed_authentication_delay_ms: int = v["connection.failed.authentication.delay.ms"]
        self.rack: str | None = v["broker.rack"]
        self.listener_security_protocol_map: dict[ListenerName, SecurityProtocol] = \
            self._parse_listener_security_protocol_map()
        # Normalised as listener names are, so "controller" names the listener CONTROLLER://.
        self.controller_listener_names: list[str] = [
            ListenerName.normalised(n).value for n in _parse_csv_list(v["controller.listener.names"])]
        self.sasl_mechanism_controller_protocol: str = v["sasl.mechanism.controller.protocol"]
        self.listeners: list[EndPoint] = self._parse_listeners()
        self.advertised_listeners: list[EndPoint] = self._parse_advertised_listeners()
        self.inter_broker_listener_name, self.inter_broker_security_protocol = \
            self._inter_broker_listener_name_and_security_protocol()
        self.control_plane_listener_name, self.control_plane_security_protocol = \
            self._control_plane_listener_name_and_security_protocol()
        self.sasl_mechanism_inter_broker_protocol: str = v["sasl.mechanism.inter.broker.protocol"]
        # Delegation tokens: the secret key, or its 2.x alias when it is not set
        secret = v["delegation.token.secret.key"]
        self.delegation_token_secret_key: Password | None = (
            secret if secret is not None else v["delegation.token.master.key"])
        self.token_auth_enabled: bool = (self.delegation_token_secret_key is not None
                                         and bool(self.delegation_token_secret_key.value))
        self.delegation_token_max_life_ms: int = v["delegation.token.max.lifetime.ms"]
        self.delegation_token_expiry_time_ms: int = v["delegation.token.expiry.time.ms"]
        self.delegation_token_expiry_check_interval_ms: int = v["delegation.token.expiry.check.interval.ms"]

        # Log
        self.auto_create_topics_enable: bool = v["auto.create.topics.enable"]
        self.num_partitions: int = v["num.partitions"]
        self.log_dirs: list[str] = _parse_csv_list(
            v["log.dirs"] if v["log.dirs"] is not None else v["log.dir"])
        self.log_segment_bytes: int = v["log.segment.bytes"]
        self.log_flush_interval_messages: int = v["log.flush.interval.messages"]
        self.log_cleaner_threads: int = v["log.cleaner.threads"]
        self.num_recovery_threads_per_data_dir: int = v["num.recovery.threads.per.data.dir"]
        self.log_flush_scheduler_interval_ms: int = v["log.flush.scheduler.interval.ms"]
        self.log_flush_offset_checkpoint_interval_ms: int = v["log.flush.offset.checkpoint.interval.ms"]
        self.log_flush_start_offset_checkpoint_interval_ms: int = v["log.flush.start.offset.checkpoint.interval.ms"]
        self.log_initial_task_delay_ms: int = v["log.initial.task.delay.ms"]
        self.log_cleanup_interval_ms: int = v["log.retention.check.interval.ms"]
        self.log_cleanup_policy: list[str] = [p.lower() for p in v["log.cleanup.policy"]]
        self.offsets_retention_minutes: int = v["offsets.retention.minutes"]
        self.offsets_retention_check_interval_ms: int = v["offsets.retention.check.interval.ms"]
        self.log_retention_bytes: int = v["log.retention.bytes"]
        self.log_cleaner_dedupe_buffer_size: int = v["log.cleaner.dedupe.buffer.size"]
        self.log_cleaner_dedupe_buffer_load_factor: float = v["log.cleaner.io.buffer.load.factor"]
        self.log_cleaner_io_buffer_size: int = v["log.cleaner.io.buffer.size"]
        self.log_cleaner_io_max_bytes_per_second: float = v["log.cleaner.io.max.bytes.per.second"]
        self.log_cleaner_delete_retention_ms: int = v["log.cleaner.delete.retention.ms"]
        self.log_cleaner_min_compaction_lag_ms: int = v["log.cleaner.min.compaction.lag.ms"]
        self.log_cleaner_max_compaction_lag_ms: int = v["log.cleaner.max.compaction.lag.ms"]
        self.log_cleaner_backoff_ms: int = v["log.cleaner.backoff.ms"]
        self.log_cleaner_min_clean_ratio: float = v["log.cleaner.min.cleanable.ratio"]
        self.log_cleaner_enable: bool = v["log.cleaner.enable"]
        self.log_index_size_max_bytes: int = v["log.index.size.max.bytes"]
        self.log_index_interval_bytes: int = v["log.index.interval.bytes"]
        self.log_delete_delay_ms: int = v["log.segment.delete.delay.ms"]
        self.log_roll_time_millis: int = (v["log.roll.ms"] if v["log.roll.ms"] is not None
                                          else 60 * 60 * 1000 * v["log.roll.hours"])
        self.log_roll_time_jitter_millis: int = (v["log.roll.jitter.ms"] if v["log.roll.jitter.ms"] is not None
                                                 else 60 * 60 * 1000 * v["log.roll.jitter.hours"])
        self.log_flush_interval_ms: int = (v["log.flush.interval.ms"] if v["log.flush.interval.ms"] is not None
                                           else self.log_flush_scheduler_interval_ms)
        self.log_retention_time_millis: int = self._log_retention_time_millis()
        self.min_insync_replicas: int = v["min.insync.replicas"]
        self.log_pre_allocate_enable: bool = v["log.preallocate"]
        self.log_prefault_bytes: int = v["log.prefault.bytes"]
        # The string as given is kept: "0.10.0" and the ApiVersion it resolves to differ.
        self.log_message_format_version_string: str = v["log.message.format.version"]
        self.log_message_format_version: ApiVersion = api_version(self.log_message_format_version_string)
        self.log_message_timestamp_type: TimestampType = TimestampType.for_name(v["log.message.timestamp.type"])
        self.log_message_timestamp_difference_max_ms: int = v["log.message.timestamp.difference.max.ms"]
        self.log_message_down_conversion_enable: bool = v["log.message.downconversion.enable"]

        # Replication
        self.controller_socket_timeout_ms: int = v["controller.socket.timeout.ms"]
        self.default_replication_factor: int = v["default.replication.factor"]
        self.replica_lag_time_max_ms: int = v["replica.lag.time.max.ms"]
        self.replica_socket_timeout_ms: int = v["replica.socket.timeout.ms"]
        self.replica_socket_receive_buffer_bytes: int = v["replica.socket.receive.buffer.bytes"]
        self.replica_fetch_max_bytes: int = v["replica.fetch.max.bytes"]
        self.replica_fetch_wait_max_ms: int = v["replica.fetch.wait.max.ms"]
        self.replica_fetch_min_bytes: int = v["replica.fetch.min.bytes"]
        self.replica_fetch_response_max_bytes: int = v["replica.fetch.response.max.bytes"]
        self.replica_fetch_backoff_ms: int = v["replica.fetch.backoff.ms"]
        self.num_replica_fetchers: int = v["num.replica.fetchers"]
        self.replica_high_watermark_checkpoint_interval_ms: int = v["replica.high.watermark.checkpoint.interval.ms"]
        self.fetch_purgatory_purge_interval_requests: int = v["fetch.purgatory.purge.interval.requests"]
        self.producer_purgatory_purge_interval_requests: int = v["producer.purgatory.purge.interval.requests"]
        self.delete_records_purgatory_purge_interval_requests: int = \
            v["delete.records.purgatory.purge.interval.requests"]
        self.auto_leader_rebalance_enable: bool = v["auto.leader.rebalance.enable"]
        self.leader_imbalance_per_broker_percentage: int = v["leader.imbalance.per.broker.percentage"]
        self.leader_imbalance_check_interval_seconds: int = v["leader.imbalance.check.interval.seconds"]
        self.unclean_leader_election_enable: bool = v["unclean.leader.election.enable"]
        self.inter_broker_protocol_version_string: str = v["inter.broker.protocol.version"]
        self.inter_broker_protocol_version: ApiVersion = api_version(self.inter_broker_protocol_version_string)

        # Controlled shutdown
        self.controlled_shutdown_max_retries: int = v["controlled.shutdown.max.retries"]
        self.controlled_shutdown_retry_backoff_ms: int = v["controlled.shutdown.retry.backoff.ms"]
        self.controlled_shutdown_enable: bool = v["controlled.shutdown.enable"]

        # Group coordinator
        self.group_min_session_timeout_ms: int = v["group.min.session.timeout.ms"]
        self.group_max_session_timeout_ms: int = v["group.max.session.timeout.ms"]
        self.group_initial_rebalance_delay: int = v["group.initial.rebalance.delay.ms"]
        self.group_max_size: int = v["group.max.size"]

        # Offset management
        self.offset_metadata_max_size: int = v["offset.metadata.max.bytes"]
        self.offsets_load_buffer_size: int = v["offsets.load.buffer.size"]
        self.offsets_topic_replication_factor: int = v["offsets.topic.replication.factor"]
        self.offsets_topic_partitions: int = v["offsets.topic.num.partitions"]
        self.offset_commit_timeout_ms: int = v["offsets.commit.timeout.ms"]
        self.offset_commit_required_acks: int = v["offsets.commit.required.acks"]
        self.offsets_topic_segment_bytes: int = v["offsets.topic.segment.bytes"]
        self.offsets_topic_compression_codec: CompressionType = CompressionType(v["offsets.topic.compression.codec"])

        # Transaction management
        self.transactional_id_expiration_ms: int = v["transactional.id.expiration.ms"]
        self.transaction_max_timeout_ms: int = v["transaction.max.timeout.ms"]
        self.transaction_topic_min_isr: int = v["transaction.state.log.min.isr"]
        self.transactions_load_buffer_size: int = v["transaction.state.log.load.buffer.size"]
        self.transaction_topic_replication_factor: int = v["transaction.state.log.replication.factor"]
        self.transaction_topic_partitions: int = v["transaction.state.log.num.partitions"]
        self.transaction_topic_segment_bytes: int = v["transaction.state.log.segment.bytes"]
        self.transaction_abort_timed_out_transaction_cleanup_interval_ms: int = \
            v["transaction.abort.timed.out.transaction.cleanup.interval.ms"]
        self.transaction_remove_expired_transactional_id_cleanup_interval_ms: int = \
            v["transaction.remove.expired.transaction.cleanup.interval.ms"]
        self.transaction_partition_verification_enable: bool = v["transaction.partition.verification.enable"]

        # Metrics (read so DescribeConfigs and the values dump show them; unused) and client quotas.
        self.metric_num_samples: int = v["metrics.num.samples"]
        self.metric_sample_window_ms: int = v["metrics.sample.window.ms"]
        self.metric_recording_level: str = v["metrics.recording.level"]
        self.prometheus_port: int = v["kafka.py.metrics.prometheus.port"]
        self.prometheus_host: str = v["kafka.py.metrics.prometheus.host"]
        self.metrics_enabled: bool = v["kafka.py.metrics.enabled"]
        self.producer_quota_bytes_per_second_default: int = v["quota.producer.default"]
        self.consumer_quota_bytes_per_second_default: int = v["quota.consumer.default"]
        self.num_quota_samples: int = v["quota.window.num"]
        self.quota_window_size_seconds: int = v["quota.window.size.seconds"]
        self.num_controller_quota_samples: int = v["controller.quota.window.num"]
        self.controller_quota_window_size_seconds: int = v["controller.quota.window.size.seconds"]
        self.num_replication_quota_samples: int = v["replication.quota.window.num"]
        self.replication_quota_window_size_seconds: int = v["replication.quota.window.size.seconds"]
        self.num_alter_log_dirs_replication_quota_samples: int = v["alter.log.dirs.replication.quota.window.num"]
        self.alter_log_dirs_replication_quota_window_size_seconds: int = \
            v["alter.log.dirs.replication.quota.window.size.seconds"]

        # Fetch
        self.max_incremental_fetch_session_cache_slots: int = v["max.incremental.fetch.session.cache.slots"]
        self.fetch_max_bytes: int = v["fetch.max.bytes"]

        self.delete_topic_enable: bool = v["delete.topic.enable"]
        self.compression_type: str = v["compression.type"]

        # Raft quorum (KRaft mode); kafka_py/raft/raft_config.py parses the voters
        self.quorum_voters: list[str] = v[raft_config.QUORUM_VOTERS_CONFIG]
        self.quorum_election_timeout_ms: int = v[raft_config.QUORUM_ELECTION_TIMEOUT_MS_CONFIG]
        self.quorum_fetch_timeout_ms: int = v[raft_config.QUORUM_FETCH_TIMEOUT_MS_CONFIG]
        self.quorum_election_backoff_ms: int = v[raft_config.QUORUM_ELECTION_BACKOFF_MAX_MS_CONFIG]
        self.quorum_linger_ms: int = v[raft_config.QUORUM_LINGER_MS_CONFIG]
        self.quorum_request_timeout_ms: int = v[raft_config.QUORUM_REQUEST_TIMEOUT_MS_CONFIG]
        self.quorum_retry_backoff_ms: int = v[raft_config.QUORUM_RETRY_BACKOFF_MS_CONFIG]

        # The metadata log (Kafka 3.0's keys)
        self.metadata_snapshot_max_new_record_bytes: int = v["metadata.log.max.record.bytes.between.snapshots"]
        self.metadata_log_segment_bytes: int = v["metadata.log.segment.bytes"]
        self.metadata_log_segment_min_bytes: int = v["metadata.log.segment.min.bytes"]
        self.metadata_log_segment_millis: int = v["metadata.log.segment.ms"]
        self.metadata_retention_bytes: int = v["metadata.max.retention.bytes"]
        self.metadata_retention_millis: int = v["metadata.max.retention.ms"]

    def _parse_process_roles(self) -> frozenset[ProcessRole]:
        # Each name is one of broker, controller (the key's validator); a name given twice is refused.
        names = [n.strip() for n in self._values["process.roles"]]
        if len(set(names)) != len(names):
            raise ConfigException("process.roles", names,
                                  f"Duplicate role names found in `process.roles`: {', '.join(names)}")
        return frozenset(ProcessRole(n) for n in names)

    def _log_retention_time_millis(self) -> int:
        v = self._values
        if v["log.retention.ms"] is not None:
            millis = v["log.retention.ms"]
        elif v["log.retention.minutes"] is not None:
            millis = 60 * 1000 * v["log.retention.minutes"]
        else:
            millis = 60 * 60 * 1000 * v["log.retention.hours"]
        # Any negative retention means "keep for ever".
        return -1 if millis < 0 else millis

    def _parse_max_connections_per_ip_overrides(self) -> dict[str, int]:
        name = "max.connections.per.ip.overrides"
        raw = self._values[name]
        result = {}
        for host, count in _parse_csv_map(name, raw).items():
            try:
                result[host] = int(count)
            except ValueError:
                raise ConfigException(name, raw, f"Error parsing configuration property '{name}': "
                                      f"connection count '{count}' of {host} is not an integer") from None
        return result

    def _parse_listener_security_protocol_map(self) -> dict[ListenerName, SecurityProtocol]:
        name = "listener.security.protocol.map"
        raw = self._values[name]
        result: dict[ListenerName, SecurityProtocol] = {}
        for listener, protocol in _parse_csv_map(name, raw).items():
            result[ListenerName.normalised(listener)] = self._security_protocol(protocol, name, raw)
        return result

    @staticmethod
    def _security_protocol(protocol_name: str, config_name: str, raw: Any) -> SecurityProtocol:
        try:
            return SecurityProtocol.for_name(protocol_name)
        except ValueError:
            raise ConfigException(config_name, raw,
                                  f"Invalid security protocol `{protocol_name}` defined in {config_name}; "
                                  f"valid protocols are {', '.join(p.name for p in SecurityProtocol)}") from None

    def _listener_list_to_end_points(self, name: str, listeners: str, require_distinct_ports: bool) -> list[EndPoint]:
        """CoreUtils.listenerListToEndPoints, raising ConfigException naming ``name``."""
        end_points = []
        for item in _parse_csv_list(listeners):
            try:
                if not _LISTENER_URI.match(item):
                    raise ValueError(f"Unable to parse {item} to a broker endpoint")
                end_point = EndPoint.create_end_point(item, self.listener_security_protocol_map)
            except ValueError as e:
                raise ConfigException(name, listeners, f"Error creating broker listeners from '{listeners}': {e}. "
                                      "Listeners look like NAME://host:port, NAME://[ipv6]:port or NAME://:port, "
                                      "NAME being a listener of listener.security.protocol.map") from None
            if not 0 <= end_point.port <= 65535:
                raise ConfigException(name, listeners, f"Port {end_point.port} of listener "
                                      f"{end_point.listener_name.value} must be between 0 and 65535")
            end_points.append(end_point)
        names = [e.listener_name for e in end_points]
        if len(set(names)) != len(names):
            raise ConfigException(name, listeners, f"Each listener must have a different name, listeners: {listeners}")
        if require_distinct_ports:
            ports = [e.port for e in end_points if e.port != 0]  # port 0 picks a free port each time
            if len(set(ports)) != len(ports):
                raise ConfigException(name, listeners,
                                      f"Each listener must have a different port, listeners: {listeners}")
        return end_points

    def _parse_listeners(self) -> list[EndPoint]:
        raw = self._values["listeners"]
        if raw is not None:
            return self._listener_list_to_end_points("listeners", raw, True)
        # Neither listeners nor anything else: Kafka's backward-compatible host.name/port listener.
        return self._listener_list_to_end_points("listeners", f"PLAINTEXT://{self.host_name}:{self.port}", True)

    def _parse_advertised_listeners(self) -> list[EndPoint]:
        raw = self._values["advertised.listeners"]
        if raw is not None:
            return self._listener_list_to_end_points("advertised.listeners", raw, False)
        if self._values["advertised.host.name"] is not None or self._values["advertised.port"] is not None:
            return self._listener_list_to_end_points(
                "advertised.listeners", f"PLAINTEXT://{self.advertised_host_name}:{self.advertised_port}", False)
        # Clients never talk to the controllers: a controller listener is never advertised.
        return [e for e in self.listeners if e.listener_name.value not in self.controller_listener_names]

    def _inter_broker_listener_name_and_security_protocol(self) -> tuple[ListenerName, SecurityProtocol]:
        name = self._values["inter.broker.listener.name"]
        if name is not None:
            if "security.inter.broker.protocol" in self._originals:
                raise ConfigException("inter.broker.listener.name", name,
                                      "Only one of inter.broker.listener.name and security.inter.broker.protocol "
                                      "should be set.")
            listener_name = ListenerName.normalised(name)
            protocol = self.listener_security_protocol_map.get(listener_name)
            if protocol is None:
                raise ConfigException("inter.broker.listener.name", name,
                                      f"Listener with name {listener_name.value} defined in "
                                      "inter.broker.listener.name not found in listener.security.protocol.map.")
            return listener_name, protocol
        raw = self._values["security.inter.broker.protocol"]
        protocol = self._security_protocol(raw, "security.inter.broker.protocol", raw)
        return ListenerName.for_security_protocol(protocol), protocol

    def _control_plane_listener_name_and_security_protocol(
            self) -> tuple[ListenerName | None, SecurityProtocol | None]:
        name = self._values["control.plane.listener.name"]
        if name is None:
            return None, None
        listener_name = ListenerName.normalised(name)
        protocol = self.listener_security_protocol_map.get(listener_name)
        if protocol is None:
            raise ConfigException("control.plane.listener.name", name,
                                  f"Listener with {listener_name.value} defined in control.plane.listener.name "
                                  "not found in listener.security.protocol.map.")
        return listener_name, protocol

    # -- derived views --------------------------------------------------------------------

    @property
    def producer_id_expiration_ms(self) -> int:
        """How long an idle producer id's state is kept. Kafka 2.8 has no
        producer.id.expiration.ms (that key came in 3.0); LogManager passes
        transactional.id.expiration.ms, and so does kafka-py."""
        return self.transactional_id_expiration_ms

    @property
    def num_replica_alter_log_dirs_threads(self) -> int:
        value = self._values["num.replica.alter.log.dirs.threads"]
        return value if value is not None else len(self.log_dirs)

    @property
    def uses_topic_id(self) -> bool:
        return self.inter_broker_protocol_version >= api_version("2.8-IV0")

    @property
    def is_feature_versioning_supported(self) -> bool:
        return self.inter_broker_protocol_version >= api_version("2.7-IV0")

    @property
    def control_plane_listener(self) -> EndPoint | None:
        if self.control_plane_listener_name is None:
            return None
        return next(e for e in self.listeners if e.listener_name == self.control_plane_listener_name)

    @property
    def data_plane_listeners(self) -> list[EndPoint]:
        """The listeners of client and broker requests: neither the control plane's nor the KRaft controller's."""
        return [e for e in self.listeners if e.listener_name != self.control_plane_listener_name
                and e.listener_name.value not in self.controller_listener_names]

    @property
    def controller_listeners(self) -> list[EndPoint]:
        """The listeners named in controller.listener.names, in the order of ``listeners``."""
        return [e for e in self.listeners if e.listener_name.value in self.controller_listener_names]

    @property
    def requires_zookeeper(self) -> bool:
        """A ZooKeeper-based broker: process.roles is empty."""
        return not self.process_roles

    @property
    def uses_self_managed_quorum(self) -> bool:
        """A KRaft node: its metadata lives in the Raft quorum of controller.quorum.voters."""
        return bool(self.process_roles)

    @property
    def metadata_log_dir(self) -> str:
        """Where the KRaft metadata log lives: metadata.log.dir, else the first of log.dirs."""
        configured = self._values["metadata.log.dir"]
        return configured if configured is not None else self.log_dirs[0]

    # -- access to values (AbstractConfig) ------------------------------------------------

    def get(self, name: str) -> Any:
        """The parsed value of a declared key (KeyError for an undeclared one)."""
        if name not in self._values:
            raise KeyError(f"Unknown configuration '{name}'")
        return self._values[name]

    def values(self) -> dict[str, Any]:
        """Every declared key with its effective parsed value (dynamic layers included)."""
        return dict(self._values)

    def non_internal_values(self) -> dict[str, Any]:
        """``values()`` without the keys declared internal (AbstractConfig.nonInternalValues)."""
        keys = CONFIG_DEF.config_keys
        return {name: value for name, value in self._values.items() if not keys[name].internal_config}

    @property
    def originals(self) -> dict[str, Any]:
        """The properties as supplied: static, then cluster-default, then per-broker dynamic."""
        return dict(self._originals)

    def originals_strings(self) -> dict[str, str]:
        return {k: v if isinstance(v, str) else _properties_string(k, v) for k, v in self._originals.items()}

    @property
    def static_originals(self) -> dict[str, Any]:
        return dict(self._static)

    @property
    def dynamic_broker_configs(self) -> dict[str, Any]:
        return dict(self._dynamic_broker)

    @property
    def dynamic_default_configs(self) -> dict[str, Any]:
        return dict(self._dynamic_default)

    def value_as_string(self, name: str) -> str | None:
        """The value of ``name`` as DescribeConfigs reports it (None for an unset key)."""
        key = CONFIG_DEF.config_keys[name]
        return ConfigDef.convert_to_string(self._values[name], key.type)

    def config_source(self, name: str) -> str:
        """Where the value of ``name`` comes from, as Kafka's DescribeConfigs names sources."""
        if name in self._dynamic_broker:
            return "DYNAMIC_BROKER_CONFIG"
        if name in self._dynamic_default:
            return "DYNAMIC_DEFAULT_BROKER_CONFIG"
        if name in self._static:
            return "STATIC_BROKER_CONFIG"
        return "DEFAULT_CONFIG"

    @staticmethod
    def config_names() -> list[str]:
        return sorted(CONFIG_DEF.names())

    @staticmethod
    def config_type(name: str) -> Type | None:
        key = CONFIG_DEF.config_keys.get(name)
        if key is None:
            key = CONFIG_DEF.config_keys.get(broker_config_synonyms(name, True)[-1])
        return key.type if key is not None else None

    @staticmethod
    def is_dynamic(name: str) -> bool:
        return _base_name(name) in DYNAMIC_BROKER_CONFIGS

    # -- topic defaults -------------------------------------------------------------------

    def log_config_defaults(self) -> dict[str, Any]:
        """Topic config name -> the broker's default for it (LogConfig.extractLogConfigMap),
        ready for ``LogConfig.from_props(defaults, topic_overrides)``."""
        return {
            "segment.bytes": self.log_segment_bytes,
            "segment.ms": self.log_roll_time_millis,
            "segment.jitter.ms": self.log_roll_time_jitter_millis,
            "segment.index.bytes": self.log_index_size_max_bytes,
            "flush.messages": self.log_flush_interval_messages,
            "flush.ms": self.log_flush_interval_ms,
            "retention.bytes": self.log_retention_bytes,
            "retention.ms": self.log_retention_time_millis,
            "max.message.bytes": self.message_max_bytes,
            "index.interval.bytes": self.log_index_interval_bytes,
            "delete.retention.ms": self.log_cleaner_delete_retention_ms,
            "min.compaction.lag.ms": self.log_cleaner_min_compaction_lag_ms,
            "max.compaction.lag.ms": self.log_cleaner_max_compaction_lag_ms,
            "file.delete.delay.ms": self.log_delete_delay_ms,
            "min.cleanable.dirty.ratio": self.log_cleaner_min_clean_ratio,
            "cleanup.policy": list(self.log_cleanup_policy),
            "min.insync.replicas": self.min_insync_replicas,
            # Kafka matches broker codecs case-insensitively; topic configs are lower case.
            "compression.type": self.compression_type.lower(),
            "unclean.leader.election.enable": self.unclean_leader_election_enable,
            "preallocate": self.log_pre_allocate_enable,
            "message.format.version": self.log_message_format_version.version,
            "message.timestamp.type": self.log_message_timestamp_type.type_name,
            "message.timestamp.difference.max.ms": self.log_message_timestamp_difference_max_ms,
            "message.downconversion.enable": self.log_message_down_conversion_enable,
        }

    def default_log_config(self) -> LogConfig:
        """The LogConfig of a topic without overrides."""
        return LogConfig.from_props(self.log_config_defaults())

    # -- validation (KafkaConfig.validateValues) ------------------------------------------

    def validate_values(self) -> None:
        v = self._values
        # Kafka 3.1's check: 2.8.2 silently takes node.id over a different broker.id.
        if "node.id" in self._originals and "broker.id" in self._originals and v["node.id"] != v["broker.id"]:
            raise ConfigException("node.id", v["node.id"], "You must set `node.id` to the same value as "
                                  f"`broker.id` ({v['broker.id']}).")
        if self.requires_zookeeper:
            if self.zk_connect is None:
                raise ConfigException("zookeeper.connect", full_message=(
                    "Missing required configuration `zookeeper.connect` which has no default value."))
            if self.broker_id_generation_enable:
                if not -1 <= self.broker_id <= self.max_reserved_broker_id:
                    raise ConfigException("broker.id", self.broker_id,
                                          "broker.id must be greater than or equal to -1 and not greater than "
                                          f"reserved.broker.max.id ({self.max_reserved_broker_id})")
            elif self.broker_id < 0:
                raise ConfigException("broker.id", self.broker_id, "broker.id must be greater than or equal to 0 "
                                      "(broker.id.generation.enable is false)")
        elif self.node_id < 0:
            # KRaft mode has no ZooKeeper to generate an id from: the node must be told its id.
            message = ("Missing configuration `node.id` which is required when `process.roles` is defined "
                       "(i.e. when running in KRaft mode).")
            if "node.id" in self._originals:
                raise ConfigException("node.id", v["node.id"], message)
            if "broker.id" in self._originals:
                raise ConfigException("broker.id", self.broker_id, message)
            raise ConfigException("node.id", full_message=message)
        if self.log_roll_time_millis < 1:
            name = "log.roll.ms" if v["log.roll.ms"] is not None else "log.roll.hours"
            raise ConfigException(name, v[name], "log.roll.ms must be greater than or equal to 1")
        if self.log_roll_time_jitter_millis < 0:
            raise ConfigException("log.roll.jitter.ms", v["log.roll.jitter.ms"],
                                  "log.roll.jitter.ms must be greater than or equal to 0")
        if not (self.log_retention_time_millis >= 1 or self.log_retention_time_millis == -1):
            name = next(n for n in ("log.retention.ms", "log.retention.minutes", "log.retention.hours")
                        if v[n] is not None)
            raise ConfigException(name, v[name],
                                  "log.retention.ms must be unlimited (-1) or, greater than or equal to 1")
        if not self.log_dirs:
            name = "log.dirs" if v["log.dirs"] is not None else "log.dir"
            raise ConfigException(name, v[name], "At least one log directory must be defined via log.dirs or log.dir.")
        if v["num.replica.alter.log.dirs.threads"] is not None and v["num.replica.alter.log.dirs.threads"] < 1:
            # Kafka takes any number and fails with a division by zero at the first move
            raise ConfigException("num.replica.alter.log.dirs.threads", v["num.replica.alter.log.dirs.threads"],
                                  "Value must be at least 1")
        # Integer division as in Kafka; with no cleaner thread there is no buffer to share.
        if self.log_cleaner_threads > 0 and \
                self.log_cleaner_dedupe_buffer_size // self.log_cleaner_threads <= 1024 * 1024:
            raise ConfigException("log.cleaner.dedupe.buffer.size", self.log_cleaner_dedupe_buffer_size,
                                  "log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.")
        if self.replica_fetch_wait_max_ms > self.replica_socket_timeout_ms:
            raise ConfigException("replica.fetch.wait.max.ms", self.replica_fetch_wait_max_ms,
                                  "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms "
                                  f"({self.replica_socket_timeout_ms}) to prevent unnecessary socket timeouts")
        if self.replica_fetch_wait_max_ms > self.replica_lag_time_max_ms:
            raise ConfigException("replica.fetch.wait.max.ms", self.replica_fetch_wait_max_ms,
                                  "replica.fetch.wait.max.ms should always be less than or equal to "
                                  f"replica.lag.time.max.ms ({self.replica_lag_time_max_ms}) to prevent frequent "
                                  "changes in ISR")
        if not -1 <= self.offset_commit_required_acks <= self.offsets_topic_replication_factor:
            raise ConfigException("offsets.commit.required.acks", self.offset_commit_required_acks,
                                  "offsets.commit.required.acks must be greater or equal -1 and less or equal to "
                                  f"offsets.topic.replication.factor ({self.offsets_topic_replication_factor})")
        if self.compression_type.lower() not in BROKER_COMPRESSION_OPTIONS:
            raise ConfigException("compression.type", self.compression_type,
                                  f"compression.type : {self.compression_type} is not valid. Valid options are "
                                  + ",".join(BROKER_COMPRESSION_OPTIONS))

        self._validate_listeners()

        record_version = self.log_message_format_version.record_version
        if self.inter_broker_protocol_version.record_version < record_version:
            minimum = next(a for a in ALL_API_VERSIONS if a.record_version == record_version)
            raise ConfigException("log.message.format.version", self.log_message_format_version_string,
                                  f"log.message.format.version {self.log_message_format_version_string} can only "
                                  "be used when inter.broker.protocol.version is set to version "
                                  f"{minimum.short_version} or higher")
        if self.offsets_topic_compression_codec is CompressionType.ZSTD and \
                self.inter_broker_protocol_version.record_version < api_version("2.1-IV0").record_version:
            raise ConfigException("offsets.topic.compression.codec", int(self.offsets_topic_compression_codec),
                                  "offsets.topic.compression.codec zstd can only be used when "
                                  "inter.broker.protocol.version is set to version 2.1 or higher")
        if 0 < self.queued_max_bytes < self.socket_request_max_bytes:
            raise ConfigException("queued.max.request.bytes", self.queued_max_bytes,
                                  "queued.max.request.bytes must be larger or equal to socket.request.max.bytes "
                                  f"({self.socket_request_max_bytes})")
        if self.max_connections_per_ip == 0 and not self.max_connections_per_ip_overrides:
            raise ConfigException("max.connections.per.ip", 0, "max.connections.per.ip can be set to zero only if "
                                  "max.connections.per.ip.overrides property is set.")
        invalid = [a for a in self.max_connections_per_ip_overrides if not _VALID_HOST_CHARACTERS.match(a)]
        if invalid:
            raise ConfigException("max.connections.per.ip.overrides", v["max.connections.per.ip.overrides"],
                                  "max.connections.per.ip.overrides contains invalid addresses : " + ",".join(invalid))
        if self.connections_max_idle_ms >= 0 and self.failed_authentication_delay_ms >= self.connections_max_idle_ms:
            raise ConfigException("connection.failed.authentication.delay.ms", self.failed_authentication_delay_ms,
                                  "connection.failed.authentication.delay.ms should always be less than "
                                  f"connections.max.idle.ms={self.connections_max_idle_ms} to prevent failed "
                                  "authentication responses from timing out")

        self._validate_unsupported()
        self._validate_topic_defaults()

    def _validate_listeners(self) -> None:
        advertised_names = [e.listener_name for e in self.advertised_listeners]
        listener_names = [e.listener_name for e in self.listeners]
        if self.uses_self_managed_quorum:
            self._validate_kraft_quorum_and_listeners()
        # A controller-only node serves no clients and no replicas: it needs no inter-broker listener.
        if not self.process_roles or ProcessRole.BROKER in self.process_roles:
            if self.inter_broker_listener_name not in advertised_names:
                raise ConfigException("inter.broker.listener.name", self.inter_broker_listener_name.value,
                                      "inter.broker.listener.name must be a listener name defined in "
                                      "advertised.listeners. The valid options based on currently configured "
                                      "listeners are " + ",".join(n.value for n in advertised_names))
            if not set(advertised_names) <= set(listener_names):
                raise ConfigException("advertised.listeners", self._values["advertised.listeners"],
                                      "advertised.listeners listener names must be equal to or a subset of the ones "
                                      "defined in listeners. Found " + ",".join(n.value for n in advertised_names)
                                      + ". The valid options based on the current configuration are "
                                      + ",".join(n.value for n in listener_names))
        if any(e.host == "0.0.0.0" for e in self.advertised_listeners):
            raise ConfigException("advertised.listeners", ",".join(e.connection_string
                                                                   for e in self.advertised_listeners),
                                  "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. "
                                  "Use a routable IP address.")
        advertised_controller_names = [n.value for n in advertised_names if n.value in self.controller_listener_names]
        if advertised_controller_names:
            raise ConfigException("advertised.listeners",
                                  ",".join(e.connection_string for e in self.advertised_listeners),
                                  "advertised.listeners cannot contain any of controller.listener.names ("
                                  + ",".join(advertised_controller_names) + "): clients only talk to brokers, "
                                  "never to the KRaft controllers")
        if self.control_plane_listener_name is not None:
            if self.control_plane_listener_name not in advertised_names:
                raise ConfigException("control.plane.listener.name", self.control_plane_listener_name.value,
                                      "control.plane.listener.name must be a listener name defined in "
                                      "advertised.listeners. The valid options based on currently configured "
                                      "listeners are " + ",".join(n.value for n in advertised_names))
            if self.control_plane_listener_name == self.inter_broker_listener_name:
                raise ConfigException("control.plane.listener.name", self.control_plane_listener_name.value,
                                      "control.plane.listener.name, when defined, should have a different value "
                                      "from the inter broker listener name. Currently they both have the value "
                                      f"{self.control_plane_listener_name.value}")
        # A SASL inter-broker listener: its mechanism must be one the listener enables, and the
        # broker needs its own credentials; network/channel_builders.py checks both
        # (create_client_channel_builder) when the SocketServer starts, naming the key.
        for end_point in self.listeners:
            if end_point.security_protocol not in SUPPORTED_SECURITY_PROTOCOLS:
                raise ConfigException("listeners", ",".join(e.connection_string for e in self.listeners),
                                      f"listener {end_point.listener_name.value} uses security protocol "
                                      f"{end_point.security_protocol.name}, which kafka-py does not support; "
                                      "supported: " + ", ".join(sorted(p.name for p in SUPPORTED_SECURITY_PROTOCOLS)))

    def _validate_kraft_quorum_and_listeners(self) -> None:
        """What a KRaft node needs of controller.quorum.voters and its listeners to join the
        quorum: Kafka 2.8.2 checks none of it at startup (a mistake shows later as a node that
        cannot reach or form the quorum); the checks and their messages are Kafka 3.0's and 3.1's."""
        roles = self.process_roles
        voters_value = ",".join(self.quorum_voters)
        voter_ids = set(raft_config.parse_voter_connections(self.quorum_voters))
        listeners_value = ",".join(e.connection_string for e in self.listeners)
        listener_name_values = [e.listener_name.value for e in self.listeners]
        names_value = self._values["controller.listener.names"]
        if not voter_ids:
            raise ConfigException(raft_config.QUORUM_VOTERS_CONFIG, voters_value,
                                  "If using process.roles, controller.quorum.voters must contain a parseable set "
                                  "of voters (`{id}@{host}:{port}` entries separated by commas).")
        if self.control_plane_listener_name is not None:
            raise ConfigException("control.plane.listener.name", self.control_plane_listener_name.value,
                                  "control.plane.listener.name is not supported in KRaft mode. KRaft uses "
                                  "controller.listener.names instead.")
        if ProcessRole.CONTROLLER in roles:
            if self.node_id not in voter_ids:
                raise ConfigException("node.id", self.node_id,
                                      "If process.roles contains the 'controller' role, the node id "
                                      f"{self.node_id} must be included in the set of voters "
                                      f"controller.quorum.voters={voters_value}")
            if not self.controller_listeners:
                raise ConfigException("controller.listener.names", names_value,
                                      "controller.listener.names must contain at least one value appearing in the "
                                      "'listeners' configuration when running the KRaft controller role; listeners "
                                      f"are {listeners_value}")
            missing = [n for n in self.controller_listener_names if n not in listener_name_values]
            if missing:
                raise ConfigException("controller.listener.names", names_value,
                                      "controller.listener.names must only contain values appearing in the "
                                      "'listeners' configuration when running the KRaft controller role; "
                                      f"{','.join(missing)} is not one of {','.join(listener_name_values)}")
            if ProcessRole.BROKER not in roles and self.advertised_listeners:
                source = "advertised.listeners" if self._values["advertised.listeners"] is not None else "listeners"
                raise ConfigException(source, ",".join(e.connection_string for e in self.advertised_listeners),
                                      f"The {source} config must only contain KRaft controller listeners from "
                                      "controller.listener.names when process.roles=controller")
        else:
            if self.node_id in voter_ids:
                raise ConfigException("node.id", self.node_id,
                                      "If process.roles contains just the 'broker' role, the node id "
                                      f"{self.node_id} must not be included in the set of voters "
                                      f"controller.quorum.voters={voters_value}")
            if not self.controller_listener_names:
                raise ConfigException("controller.listener.names", names_value,
                                      "controller.listener.names must contain at least one value when running "
                                      "KRaft with just the broker role (the listener name it reaches the "
                                      "controllers by)")
            if self.controller_listeners:
                raise ConfigException("listeners", listeners_value,
                                      "controller.listener.names must not contain a value appearing in the "
                                      "'listeners' configuration when running KRaft with just the broker role; "
                                      "found " + ",".join(e.listener_name.value for e in self.controller_listeners))
            for name in self.controller_listener_names:
                if ListenerName(name) not in self.listener_security_protocol_map:
                    raise ConfigException("controller.listener.names", names_value,
                                          f"Controller listener with name {name} defined in "
                                          "controller.listener.names not found in listener.security.protocol.map "
                                          "(a broker must know the security protocol of the controllers' listener)")
        if ProcessRole.BROKER in roles and not self.advertised_listeners:
            raise ConfigException("listeners", listeners_value,
                                  "There must be at least one advertised listener. Perhaps all listeners appear "
                                  "in controller.listener.names?")

    def _validate_unsupported(self) -> None:
        for name in _UNSUPPORTED_PLUGIN_KEYS:
            value = self._values[name]
            if value:
                raise ConfigException(name, value, f"kafka-py cannot load plug-in classes; {name} must be unset")
        selector = self._values["replica.selector.class"]
        if selector and selector.strip() not in REPLICA_SELECTOR_CLASSES:
            raise ConfigException("replica.selector.class", selector,
                                  "kafka-py cannot load plug-in classes; the replica selectors it has are "
                                  + ", ".join(REPLICA_SELECTOR_CLASSES))
        authorizer = self._values["authorizer.class.name"]
        if authorizer and authorizer.strip() not in AUTHORIZER_CLASSES:
            raise ConfigException("authorizer.class.name", authorizer,
                                  "kafka-py cannot load plug-in classes; the authorizers it has are "
                                  + ", ".join(sorted(AUTHORIZER_CLASSES)))
        # Each authorizer keeps its ACLs where its mode keeps metadata; starting one in the other
        # mode would serve an empty (or unreachable) ACL store, so the node does not start.
        if authorizer and self.process_roles and authorizer.strip() in ZOOKEEPER_AUTHORIZER_CLASSES:
            raise ConfigException("authorizer.class.name", authorizer,
                                  "this authorizer keeps its ACLs in ZooKeeper, which a KRaft node (process.roles "
                                  "set) does not use; use org.apache.kafka.metadata.authorizer.StandardAuthorizer, "
                                  "whose ACLs are records of the metadata log")
        if authorizer and not self.process_roles and authorizer.strip() in METADATA_AUTHORIZER_CLASSES:
            raise ConfigException("authorizer.class.name", authorizer,
                                  "this authorizer keeps its ACLs in the KRaft metadata log and needs "
                                  "process.roles; a ZooKeeper-mode broker uses kafka.security.authorizer.AclAuthorizer")
        if self.zk_enable_secure_acls:
            raise ConfigException("zookeeper.set.acl", True,
                                  "kafka-py does not create secure ZooKeeper ACLs; allowed value: false")

    def _validate_topic_defaults(self) -> None:
        # Kafka only finds these when LogManager builds the default LogConfig; checking here
        # stops a bad default before anything starts, and names the broker key the operator set.
        defaults = self.log_config_defaults()
        for topic_key, value in defaults.items():
            key = LOG_CONFIG_DEF.config_keys[topic_key]
            if key.validator is None:
                continue
            broker_key = self._broker_key_for(topic_key)
            key.validator.ensure_valid(broker_key, ConfigDef.parse_type(broker_key, value, key.type))
        try:
            LogConfig.validate_values(defaults)
        except InvalidConfigException as e:
            raise ConfigException("log.cleaner.min.compaction.lag.ms", self.log_cleaner_min_compaction_lag_ms,
                                  f"must not exceed log.cleaner.max.compaction.lag.ms "
                                  f"({self.log_cleaner_max_compaction_lag_ms}): {e}") from None

    def _broker_key_for(self, topic_key: str) -> str:
        """The broker key that supplied the default of ``topic_key``: the first synonym set,
        else the one of highest precedence."""
        synonyms = [s.name for s in ALL_TOPIC_CONFIG_SYNONYMS[topic_key]]
        return next((s for s in synonyms if s in self._originals), synonyms[0])

    # -- logging (AbstractConfig.logAll / logUnused) --------------------------------------

    def log_all(self) -> None:
        """Log every value at INFO in Kafka's "KafkaConfig values:" block."""
        lines = [f"{type(self).__name__} values: "]
        lines.extend(f"\t{name} = {_java_string(self._values[name])}" for name in sorted(self._values))
        logger.info("\n".join(lines))

    def log_unused(self) -> None:
        for key in _unknown_keys(self._originals):
            logger.warning("The configuration '%s' was supplied but isn't a known config.", key)

    def unknown_keys(self) -> list[str]:
        """Supplied keys that no broker config declares."""
        return _unknown_keys(self._originals)

    # -- misc -----------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KafkaConfig):
            return NotImplemented
        return (self._static, self._dynamic_default, self._dynamic_broker, self.broker_id) == \
            (other._static, other._dynamic_default, other._dynamic_broker, other.broker_id)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        listeners = ",".join(e.connection_string for e in self.listeners)
        return f"KafkaConfig(broker.id={self.broker_id}, listeners={listeners}, log.dirs={','.join(self.log_dirs)})"


def _base_name(name: str) -> str:
    match = _LISTENER_CONFIG.match(name)
    return match.group(1) if match else name


def _properties_string(name: str, value: Any) -> str:
    key = CONFIG_DEF.config_keys.get(_base_name(name))
    text = ConfigDef.convert_to_string(value, key.type if key is not None else None)
    return "" if text is None else text
