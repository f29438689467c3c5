"""Port of core/src/main/scala/kafka/server/BrokerMetadataCheckpoint.scala (with the
meta.properties checks of KafkaServer.scala's and KafkaRaftServer.scala's startup and the
exceptions of kafka.common they raise).

Every log directory holds a ``meta.properties`` saying which broker and cluster its data
belongs to. A ZooKeeper-based broker writes version 0::

    #
    #Tue Jan 02 15:04:05 UTC 2024
    version=0
    cluster.id=<cluster id>
    broker.id=<broker id>

At startup KafkaServer reads the file of every directory: all directories must agree
(else InconsistentBrokerMetadataException, e.g. a directory copied from another broker),
the stored cluster id must be the one in ZooKeeper (InconsistentClusterIdException: the
broker is pointed at the wrong cluster) and the stored broker id the configured one
(InconsistentBrokerIdException). A directory whose file cannot be read is offline, not
fatal, as in Kafka.

A KRaft node (process.roles set) writes nothing itself: ``bin/kafka-storage.sh format``
writes version 1 into every log dir and the metadata log dir::

    #
    #Tue Jan 02 15:04:05 UTC 2024
    version=1
    cluster.id=<cluster id>
    node.id=<node id>

and ``initialize_log_dirs`` (KafkaRaftServer.initializeLogDirs) refuses to start on a dir
without one (not formatted), on dirs that disagree (another cluster's or another node's
data: InconsistentBrokerMetadataException), on version 0, and on a node.id other than the
configured one (InconsistentNodeIdException).
"""
from __future__ import annotations

import logging
import os
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from kafka_py.clients.common.errors import KafkaException
from kafka_py.server.checkpoints.checkpoint_file import atomic_write_bytes
from kafka_py.clients.common.utils import properties
from kafka_py.clients.common.utils.properties import PropertiesParseError
from kafka_py.core.utils.java_limits import INT_MAX, INT_MIN

if TYPE_CHECKING:
    from kafka_py.server.kafka_config import KafkaConfig

logger = logging.getLogger(__name__)

__all__ = [
    "META_PROPERTIES_FILE", "CLUSTER_ID_KEY", "BROKER_ID_KEY", "NODE_ID_KEY", "VERSION_KEY",
    "InconsistentBrokerMetadataException", "InconsistentClusterIdException", "InconsistentBrokerIdException",
    "InconsistentNodeIdException", "RawMetaProperties", "ZkMetaProperties", "MetaProperties",
    "BrokerMetadataCheckpoint", "get_broker_metadata_and_offline_dirs", "check_zk_meta_properties_version",
    "check_cluster_id", "get_or_generate_broker_id", "initialize_log_dirs",
]

META_PROPERTIES_FILE = "meta.properties"
CLUSTER_ID_KEY = "cluster.id"
BROKER_ID_KEY = "broker.id"
NODE_ID_KEY = "node.id"
VERSION_KEY = "version"

_JAVA_INT = re.compile(r"[+-]?[0-9]+\Z")


# kafka.common.* — raised only here and by KafkaServer's startup, so they live with the checks.
class InconsistentBrokerMetadataException(KafkaException):
    """The log directories hold meta.properties files that disagree."""


class InconsistentClusterIdException(KafkaException):
    """meta.properties belongs to another cluster than the one in ZooKeeper."""


class InconsistentBrokerIdException(KafkaException):
    """meta.properties belongs to another broker id than the configured one."""


class InconsistentNodeIdException(KafkaException):
    """A KRaft node's meta.properties belongs to another node.id than the configured one."""


def _scala_option(value: object | None) -> str:
    # Kafka interpolates Option values into its messages; operators grep for that text.
    return "None" if value is None else f"Some({value})"


class RawMetaProperties:
    """The key/value pairs of one meta.properties, with typed access to the known keys."""

    def __init__(self, props: Mapping[str, str] | None = None) -> None:
        self.props: dict[str, str] = dict(props or {})

    @property
    def cluster_id(self) -> str | None:
        return self.props.get(CLUSTER_ID_KEY)

    @cluster_id.setter
    def cluster_id(self, cluster_id: str) -> None:
        self.props[CLUSTER_ID_KEY] = cluster_id

    @property
    def broker_id(self) -> int | None:
        return self._int_value(BROKER_ID_KEY)

    @broker_id.setter
    def broker_id(self, broker_id: int) -> None:
        self.props[BROKER_ID_KEY] = str(broker_id)

    @property
    def node_id(self) -> int | None:
        return self._int_value(NODE_ID_KEY)

    @node_id.setter
    def node_id(self, node_id: int) -> None:
        self.props[NODE_ID_KEY] = str(node_id)

    @property
    def version(self) -> int:
        """0 when the key is missing: version-0 files written by old brokers have none."""
        version = self._int_value(VERSION_KEY)
        return 0 if version is None else version

    @version.setter
    def version(self, version: int) -> None:
        self.props[VERSION_KEY] = str(version)

    def require_version(self, expected_version: int) -> None:
        if self.version != expected_version:
            raise RuntimeError(f"Expected version {expected_version}, but got version {self.version}")

    def _int_value(self, key: str) -> int | None:
        raw = self.props.get(key)
        if raw is None:
            return None
        # Integer.parseInt: an optional sign and digits, nothing else (no spaces, no '_').
        if not _JAVA_INT.match(raw) or not INT_MIN <= int(raw) <= INT_MAX:
            raise RuntimeError(f"Failed to parse {key} property as an int: For input string: \"{raw}\"")
        return int(raw)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RawMetaProperties):
            return NotImplemented
        return self.props == other.props

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return "{" + ", ".join(f"{k}={self.props[k]}" for k in sorted(self.props)) + "}"

    __repr__ = __str__


@dataclass(frozen=True)
class ZkMetaProperties:
    """What a ZooKeeper-based broker stores: version 0, its cluster id and broker id."""

    cluster_id: str
    broker_id: int

    def to_properties(self) -> dict[str, str]:
        raw = RawMetaProperties()
        raw.version = 0
        raw.cluster_id = self.cluster_id
        raw.broker_id = self.broker_id
        return raw.props

    def __str__(self) -> str:
        return f"ZkMetaProperties(brokerId={self.broker_id}, clusterId={self.cluster_id})"


@dataclass(frozen=True)
class MetaProperties:
    """Version 1 (KRaft) meta.properties: cluster id and node id. A ZooKeeper-based broker
    refuses such a directory (check_zk_meta_properties_version); the type is kept so the
    format is documented and tools can tell the two apart."""

    cluster_id: str
    node_id: int

    @classmethod
    def parse(cls, raw: RawMetaProperties) -> "MetaProperties":
        raw.require_version(1)
        return cls(_require(CLUSTER_ID_KEY, raw.cluster_id), _require(NODE_ID_KEY, raw.node_id))

    def to_properties(self) -> dict[str, str]:
        raw = RawMetaProperties()
        raw.version = 1
        raw.cluster_id = self.cluster_id
        raw.node_id = self.node_id
        return raw.props

    def __str__(self) -> str:
        return f"MetaProperties(clusterId={self.cluster_id}, nodeId={self.node_id})"


def _require(key: str, value):
    if value is None:
        raise RuntimeError(f"Failed to find required property {key}.")
    return value


class BrokerMetadataCheckpoint:
    """Reads and atomically writes one meta.properties file."""

    def __init__(self, file: str | os.PathLike[str]) -> None:
        self.file = os.fspath(file)
        self._lock = threading.Lock()

    def write(self, props: Mapping[str, str]) -> None:
        """Write through ``<file>.tmp`` + fsync + rename, so a crash never leaves half a file."""
        with self._lock:
            try:
                atomic_write_bytes(self.file, properties.store(props, "").encode("ascii"))
            except OSError:
                logger.error("Failed to write meta.properties due to", exc_info=True)
                raise

    def read(self) -> dict[str, str] | None:
        """The properties, or None when the file does not exist. OSError when it cannot be read."""
        try:
            os.remove(self.file + ".tmp")  # left by a write that crashed before its rename
        except FileNotFoundError:
            pass
        absolute_path = os.path.abspath(self.file)
        with self._lock:
            try:
                return properties.load_file(absolute_path)
            except FileNotFoundError:
                logger.warning("No meta.properties file under dir %s", absolute_path)
                return None
            except PropertiesParseError:
                raise  # the caller names the file and the line; no traceback for a bad file
            except Exception:
                logger.error("Failed to read meta.properties file under dir %s", absolute_path, exc_info=True)
                raise


def get_broker_metadata_and_offline_dirs(log_dirs: Iterable[str], ignore_missing: bool
                                         ) -> tuple[RawMetaProperties, list[str]]:
    """The meta.properties shared by all readable log dirs, and the dirs that could not be read.

    Raises InconsistentBrokerMetadataException when two dirs disagree, and (unless
    ``ignore_missing``) KafkaException when a dir has no file.
    """
    log_dirs = list(log_dirs)
    if not log_dirs:
        raise ValueError("Must have at least one log dir to read meta.properties")
    found: dict[str, dict[str, str]] = {}
    offline_dirs: list[str] = []
    for log_dir in log_dirs:
        checkpoint_file = os.path.join(log_dir, META_PROPERTIES_FILE)
        try:
            props = BrokerMetadataCheckpoint(checkpoint_file).read()
        except OSError:
            offline_dirs.append(log_dir)
            logger.error("Failed to read %s", checkpoint_file, exc_info=True)
            continue
        except PropertiesParseError as e:
            # readable but not a properties file (Kafka's loadProps throws too): startup stops
            raise KafkaException(f"Failed to read {checkpoint_file}: {e}") from None
        if props is not None:
            found[log_dir] = props
        elif not ignore_missing:
            raise KafkaException(f"No `meta.properties` found in {log_dir} "
                                 "(have you run `kafka-storage.sh` to format the directory?)")
    if not found:
        return RawMetaProperties(), offline_dirs
    distinct = []
    for props in found.values():
        if props not in distinct:
            distinct.append(props)
    if len(distinct) > 1:
        listing = "".join(f"- {log_dir} -> {RawMetaProperties(props)}\n" for log_dir, props in found.items())
        raise InconsistentBrokerMetadataException(
            "BrokerMetadata is not consistent across log.dirs. This could happen if multiple brokers shared a "
            "log directory (log.dirs) or partial data was manually copied from another broker. Found:\n" + listing)
    return RawMetaProperties(next(iter(found.values()))), offline_dirs


def check_zk_meta_properties_version(raw: RawMetaProperties) -> None:
    """A ZooKeeper-based broker only understands version 0."""
    if raw.version != 0:
        raise RuntimeError(f"Found unexpected version in loaded `meta.properties`: {raw}. Zk-based brokers only "
                           "support version 0 (which is implicit when the `version` field is missing).")


def check_cluster_id(raw: RawMetaProperties, cluster_id: str) -> None:
    """The stored cluster id, if any, must be the cluster's id in ZooKeeper."""
    if raw.cluster_id is not None and raw.cluster_id != cluster_id:
        raise InconsistentClusterIdException(
            f"The Cluster ID {cluster_id} doesn't match stored clusterId {_scala_option(raw.cluster_id)} in "
            "meta.properties. The broker is trying to join the wrong cluster. Configured zookeeper.connect may be "
            "wrong.")


def get_or_generate_broker_id(raw: RawMetaProperties, broker_id: int, broker_id_generation_enable: bool,
                              generate_broker_id: Callable[[], int]) -> int:
    """KafkaServer.getOrGenerateBrokerId: a configured id must match the stored one; without a
    configured id the stored one is used, else (when enabled) ``generate_broker_id()``."""
    stored = raw.broker_id
    if broker_id >= 0 and stored is not None and stored != broker_id:
        raise InconsistentBrokerIdException(
            f"Configured broker.id {broker_id} doesn't match stored broker.id {_scala_option(stored)} in "
            "meta.properties. If you moved your data, make sure your configured broker.id matches. If you intend "
            "to create a new broker, you should remove all data in your data directories (log.dirs).")
    if stored is not None:
        return stored
    if broker_id < 0 and broker_id_generation_enable:
        return generate_broker_id()
    return broker_id


def initialize_log_dirs(config: "KafkaConfig") -> tuple[MetaProperties, list[str]]:
    """KafkaRaftServer.initializeLogDirs: the version-1 meta.properties that every log dir and
    the metadata log dir of a KRaft node agree on, and the dirs that could not be read.

    Unlike a ZooKeeper-based broker, a KRaft node never formats a directory itself: a blank
    one may be a disk that failed to mount, and a controller starting on an empty metadata
    log could win an election and lose the cluster's metadata. So each dir must hold a
    meta.properties (KafkaException naming kafka-storage.sh otherwise), all must agree
    (InconsistentBrokerMetadataException), the metadata log dir must be readable, and the
    stored node.id must be the configured one (InconsistentNodeIdException).
    """
    from kafka_py.clients.common.topic_partition import TopicPartition
    from kafka_py.log.log_files import log_dir_name
    from kafka_py.log.log_manager import METADATA_TOPIC

    log_dirs = list(dict.fromkeys([*config.log_dirs, config.metadata_log_dir]))
    raw, offline_dirs = get_broker_metadata_and_offline_dirs(log_dirs, ignore_missing=False)
    if config.metadata_log_dir in offline_dirs:
        raise KafkaException("Cannot start server since `meta.properties` could not be loaded from "
                             f"{config.metadata_log_dir}")
    # The metadata log lives in metadata.log.dir only; a copy elsewhere means the dirs were mixed up.
    metadata_partition_dir_name = log_dir_name(TopicPartition(METADATA_TOPIC, 0))
    for log_dir in log_dirs:
        if log_dir in offline_dirs or log_dir == config.metadata_log_dir:
            continue
        metadata_dir = os.path.join(log_dir, metadata_partition_dir_name)
        if os.path.exists(metadata_dir):
            raise KafkaException(f"Found unexpected metadata location in data directory `{metadata_dir}` "
                                 f"(the configured metadata directory is {config.metadata_log_dir}).")
    meta_properties = MetaProperties.parse(raw)
    if config.node_id != meta_properties.node_id:
        # Kafka's message, but for the key it names: it says controller.id, a key no config has.
        raise InconsistentNodeIdException(
            f"Configured node.id `{config.node_id}` doesn't match stored node.id `{meta_properties.node_id}' in "
            "meta.properties. If you moved your data, make sure your configured node.id matches. If you intend "
            "to create a new broker, you should remove all data in your data directories (log.dirs).")
    return meta_properties, offline_dirs
