"""Port of shell/src/main/java/org/apache/kafka/shell/MetadataNodeManager.java.

Replays metadata records into the shell's tree, as Kafka 2.8.2 builds it:

* ``/brokers/<id>/registration`` (the RegisterBrokerRecord's ``toString``) and
  ``/brokers/<id>/isFenced`` (``true`` at registration, then as fence and unfence records
  say); an UnregisterBrokerRecord removes ``/brokers/<id>``;
* ``/topics/<name>/id`` and ``/topics/<name>/name``; the same directory is also
  ``/topicIds/<id>``, and holds the partitions, ``<partition>/data`` being the
  PartitionRecord as pretty JSON (a PartitionChangeRecord is applied to it: a new ISR, a
  new leader with the leader epoch bumped, and always the partition epoch bumped);
  a RemoveTopicRecord removes both names;
* ``/configs/topic/<name>/<key>`` and ``/configs/broker/<id>/<key>`` (the value; a
  ConfigRecord with a null value deletes the key);
* ``/metadataQuorum/offset`` (the last offset of the last batch read) and
  ``/metadataQuorum/leader`` (the last LEADER_CHANGE control record's leader and epoch);
* ``/local/version`` and ``/local/commitId`` (of this tool).

Kafka 2.8.2's shell handles only the records above and logs "Unhandled metadata record
type" for the others; this log also holds records of Kafka 3.0 (the controller here
follows 3.0), so those are shown the way Kafka's later shells show them:
``/client-quotas/<entity type>/<entity name>/<key>`` (QuotaRecord; ``<default>`` for a
default entity), ``/producerIds/{lastBlockBrokerId,lastBlockBrokerEpoch,nextBlockStartId}``
(ProducerIdsRecord), ``/features/<name>`` (FeatureLevelRecord as pretty JSON, removed by
RemoveFeatureLevelRecord), and ``<default>`` as the directory of the cluster-wide broker
configs (resource name ""). Records the shell does not show (ACLs, delegation tokens,
SCRAM credentials) are skipped with an error logged, as Kafka skips an unhandled record.

Kafka runs the replay and the commands on one event queue so that the raft client's
thread and the shell's never touch the tree at once. Here the whole log is read before
the first command, on the one thread that then runs the commands, so ``visit`` calls its
visitor directly.
"""
from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any, Callable

from kafka_py.metadata.metadata_json_converters import (
    java_double_to_string,
    message_to_string,
    read_json,
    to_pretty_string,
    uuid_to_string,
    write_json,
)
from kafka_py.metadata.records.metadata_record_type import MetadataRecordType
from kafka_py.metadata.records.partition_record.v0 import PartitionRecord
from kafka_py.shell.metadata_node import DirectoryNode
from kafka_py.clients.common.utils import app_info_parser

logger = logging.getLogger(__name__)

# PartitionChangeRecord's Leader when the leader does not change.
NO_LEADER_CHANGE = -2

# ConfigResource.Type ids the shell shows, and the directory of each.
_CONFIG_RESOURCE_TYPES = {4: "broker", 2: "topic"}


@dataclasses.dataclass
class Data:
    """The tree and the shell's working directory."""

    root: DirectoryNode = dataclasses.field(default_factory=DirectoryNode)
    working_directory: str = "/"


class LogListener:
    """What the reader of the log calls: Kafka's RaftClient.Listener / MetaLogListener."""

    def __init__(self, manager: MetadataNodeManager) -> None:
        self._manager = manager

    def handle_commits(self, last_offset: int, messages: list[Any]) -> None:
        """A batch of metadata records ending at ``last_offset``."""
        data = self._manager.data
        logger.debug("handleCommits %s at offset %d", messages, last_offset)
        data.root.mkdirs("metadataQuorum").create("offset").set_contents(str(last_offset))
        for message in messages:
            self._manager.handle_message(message)

    def handle_new_leader(self, leader_id: int, epoch: int) -> None:
        """A LEADER_CHANGE control record (2.8.2's MetaLogLeader)."""
        logger.debug("handleNewLeader %d epoch %d", leader_id, epoch)
        self._manager.data.root.mkdirs("metadataQuorum").create("leader").set_contents(
            f"MetaLogLeader(nodeId={leader_id}, epoch={epoch})")

    def begin_shutdown(self) -> None:
        logger.debug("MetaLogListener sent beginShutdown")


class MetadataNodeManager:
    """Maintains the in-memory metadata tree for the metadata shell."""

    def __init__(self) -> None:
        self.data = Data()
        self._log_listener = LogListener(self)

    def setup(self) -> None:
        directory = self.data.root.mkdirs("local")
        directory.create("version").set_contents(app_info_parser.get_version())
        directory.create("commitId").set_contents(app_info_parser.get_commit_id())

    def log_listener(self) -> LogListener:
        return self._log_listener

    def close(self) -> None:
        pass

    def visit(self, consumer: Callable[[Data], None]) -> None:
        consumer(self.data)

    def handle_message(self, message: Any) -> None:
        try:
            record_type = MetadataRecordType.from_id(int(type(message).__api_key__))
            self.handle_commit_impl(record_type, message)
        except Exception as e:
            # One record the tree cannot take must not lose the rest of the log.
            logger.error("Error processing record of type %s: %s", int(type(message).__api_key__), e)
            logger.debug("the record: %s", message, exc_info=True)

    def handle_commit_impl(self, record_type: MetadataRecordType, message: Any) -> None:
        root = self.data.root
        if record_type is MetadataRecordType.REGISTER_BROKER_RECORD:
            broker = root.mkdirs("brokers", str(message.broker_id))
            broker.create("registration").set_contents(message_to_string(message))
            broker.create("isFenced").set_contents("true")
        elif record_type is MetadataRecordType.UNREGISTER_BROKER_RECORD:
            root.rmrf("brokers", str(message.broker_id))
        elif record_type is MetadataRecordType.TOPIC_RECORD:
            topic_id = uuid_to_string(message.topic_id)
            topic = root.mkdirs("topics").mkdirs(message.name)
            topic.create("id").set_contents(topic_id)
            topic.create("name").set_contents(message.name)
            root.mkdirs("topicIds").add_child(topic_id, topic)
        elif record_type is MetadataRecordType.PARTITION_RECORD:
            topic = root.mkdirs("topicIds").mkdirs(uuid_to_string(message.topic_id))
            partition = topic.mkdirs(str(message.partition_id))
            partition.create("data").set_contents(to_pretty_string(write_json(message)))
        elif record_type is MetadataRecordType.CONFIG_RECORD:
            type_string = _CONFIG_RESOURCE_TYPES.get(message.resource_type)
            if type_string is None:
                raise RuntimeError("Error processing CONFIG_RECORD: Can't handle ConfigResource.Type "
                                   f"{message.resource_type}")
            config = root.mkdirs("configs").mkdirs(type_string).mkdirs(message.resource_name or "<default>")
            if message.value is None:
                config.rmrf(message.name)
            else:
                config.create(message.name).set_contents(message.value)
        elif record_type is MetadataRecordType.PARTITION_CHANGE_RECORD:
            file = root.file("topicIds", uuid_to_string(message.topic_id), str(message.partition_id), "data")
            partition = read_json(json.loads(file.contents() or "{}"), PartitionRecord)
            changes: dict[str, Any] = {"partition_epoch": partition.partition_epoch + 1}
            if message.isr is not None:
                changes["isr"] = tuple(message.isr)
            if message.leader != NO_LEADER_CHANGE:
                changes["leader"] = message.leader
                changes["leader_epoch"] = partition.leader_epoch + 1
            # 3.0's replica fields, which 2.8.2's record lacks: a reassignment's steps.
            for name in ("replicas", "removing_replicas", "adding_replicas"):
                value = getattr(message, name, None)
                if value is not None:
                    changes[name] = tuple(value)
            partition = dataclasses.replace(partition, **changes)
            file.set_contents(to_pretty_string(write_json(partition)))
        elif record_type is MetadataRecordType.FENCE_BROKER_RECORD:
            root.mkdirs("brokers", str(message.id)).create("isFenced").set_contents("true")
        elif record_type is MetadataRecordType.UNFENCE_BROKER_RECORD:
            root.mkdirs("brokers", str(message.id)).create("isFenced").set_contents("false")
        elif record_type is MetadataRecordType.REMOVE_TOPIC_RECORD:
            topic_id = uuid_to_string(message.topic_id)
            name = root.directory("topicIds", topic_id).file("name").contents()
            root.rmrf("topics", name)
            root.rmrf("topicIds", topic_id)
        elif record_type is MetadataRecordType.QUOTA_RECORD:
            node = root
            for directory in client_quota_record_directories(message.entity):
                node = node.mkdirs(directory)
            if message.remove:
                node.rmrf(message.key)
            else:
                node.create(message.key).set_contents(java_double_to_string(message.value))
        elif record_type is MetadataRecordType.PRODUCER_IDS_RECORD:
            producer_ids = root.mkdirs("producerIds")
            producer_ids.create("lastBlockBrokerId").set_contents(str(message.broker_id))
            producer_ids.create("lastBlockBrokerEpoch").set_contents(str(message.broker_epoch))
            producer_ids.create("nextBlockStartId").set_contents(str(message.producer_ids_end))
        elif record_type is MetadataRecordType.FEATURE_LEVEL_RECORD:
            root.mkdirs("features").create(message.name).set_contents(to_pretty_string(write_json(message)))
        elif record_type is MetadataRecordType.REMOVE_FEATURE_LEVEL_RECORD:
            root.mkdirs("features").rmrf(message.name)
        elif record_type is MetadataRecordType.ACCESS_CONTROL_ENTRY_RECORD:
            root.mkdirs("acl", "id").create(str(message.id)).set_contents(to_pretty_string(write_json(message)))
        elif record_type is MetadataRecordType.REMOVE_ACCESS_CONTROL_ENTRY_RECORD:
            root.mkdirs("acl", "id").rmrf(str(message.id))
        elif record_type is MetadataRecordType.USER_SCRAM_CREDENTIAL_RECORD:
            # the iterations only: the salt and keys stay out of a browsable tree
            root.mkdirs("user-scram", message.name).create(str(message.mechanism)).set_contents(
                f"iterations={message.iterations}")
        elif record_type is MetadataRecordType.REMOVE_USER_SCRAM_CREDENTIAL_RECORD:
            root.mkdirs("user-scram", message.name).rmrf(str(message.mechanism))
        else:
            raise RuntimeError("Unhandled metadata record type")


def client_quota_record_directories(entity: Any) -> list[str]:
    """``client-quotas`` then each entity type and name, by type name (a null name is the
    default entity, ``<default>``)."""
    result = ["client-quotas"]
    for entity_data in sorted(entity, key=lambda e: e.entity_type):
        result.append(entity_data.entity_type)
        result.append("<default>" if entity_data.entity_name is None else entity_data.entity_name)
    return result
