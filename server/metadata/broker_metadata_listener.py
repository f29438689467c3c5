"""Port of core/src/main/scala/kafka/server/metadata/BrokerMetadataListener.scala (Kafka 2.8.2),
with RequestHandlerHelper.onLeadershipChange, and Kafka 3.0.0's publishing of config
changes to the live logs and dynamic broker config (BrokerMetadataPublisher.scala).

The broker's MetaLogListener. Committed metadata records arrive in order through
``handle_commits`` (on the MetaLogManager's thread) and are handled one batch at a time on
this listener's own event queue:

1. a ``MetadataImageBuilder`` over the cache's current image takes every record of the
   batch (brokers registered, fenced, unfenced and unregistered; topics and partitions
   created, changed and removed). A record that cannot be applied is logged and skipped,
   the rest of the batch still applies, as in Kafka;
2. the built image replaces the RaftMetadataCache's;
3. if partitions changed, the RaftReplicaManager makes this broker leader or follower of
   the partitions it hosts, and deletes those it no longer does, with the group and
   transaction coordinators told of leaderships won and lost;
4. ConfigRecords go to the CachedConfigRepository as they come; once the batch is
   applied each topic or broker whose configs changed is handed, whole, to the config
   handlers (the topic's logs take the new overrides, the broker its dynamic layer),
   which 2.8.2 did not yet do;
5. QuotaRecords go to the ClientQuotaMetadataManager;
6. ACL and SCRAM records go, once the batch is applied, to the ``publishers`` (Kafka 3.5's
   AclPublisher and ScramPublisher): the broker's StandardAuthorizer and the CredentialCache
   its SASL listeners log users in with;
7. the highest metadata offset seen becomes ``last_offset``: the BrokerLifecycleManager
   reports it in heartbeats, and the controller unfences the broker once it has caught up.

A new leader of the metadata log becomes the image's controller id.

Kafka 3.3.1's broker-metadata-metrics (BrokerServerMetrics) follow the batches: the last
applied record's offset and append time once a batch is handled, a record that cannot be
applied counted as a load error, a failure to publish the batch to the replica manager or
the config handlers as an apply error.

A snapshot (Kafka 3.0.0's handleSnapshot: at startup when the log start has moved past the
broker's position, or after it fetched one) is applied as one batch whose records are the
whole state: everything the current image holds that the snapshot does not (topics, brokers)
is removed, so the image equals the snapshot's, and the replica manager and config handlers
are told of the differences as for any batch.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Sequence

from kafka_py.metadata.api_message_and_version import ApiMessage
from kafka_py.metadata.controller.configuration_control_manager import ConfigResource
from kafka_py.metadata.metalog.meta_log_leader import MetaLogLeader
from kafka_py.metadata.metalog.meta_log_listener import MetaLogListener
from kafka_py.metadata.queue.event_queue import FailureLoggingEvent
from kafka_py.metadata.queue.kafka_event_queue import KafkaEventQueue
from kafka_py.metadata.records.metadata_record_type import MetadataRecordType
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.server.metadata.broker_server_metrics import BrokerServerMetrics
from kafka_py.server.metadata.metadata_brokers import MetadataBroker
from kafka_py.server.metadata.metadata_image import MetadataImageBuilder
from kafka_py.server.metadata.metadata_partitions import MetadataPartition
from kafka_py.server.zk_admin_manager import ConfigResourceType
from kafka_py.core.utils.logging import TRACE, IdentLogger
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:
    # named in an annotation only; the listener is handed the manager, it never loads that module
    from kafka_py.server.raft_replica_manager import RaftReplicaManager

logger = logging.getLogger(__name__)

METADATA_BATCH_PROCESSING_TIME_US = "MetadataBatchProcessingTimeUs"
METADATA_BATCH_SIZES = "MetadataBatchSizes"

GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"
TRANSACTION_STATE_TOPIC_NAME = "__transaction_state"

# Records the broker's image does not hold: features, producer id blocks (the controller's
# own), 2.8.2's AccessControlRecord and delegation tokens (never written), skipped quietly;
# and ACLs and SCRAM credentials, which the publishers take after the batch.
_IGNORED_RECORD_TYPES = frozenset((
    MetadataRecordType.FEATURE_LEVEL_RECORD, MetadataRecordType.REMOVE_FEATURE_LEVEL_RECORD,
    MetadataRecordType.PRODUCER_IDS_RECORD, MetadataRecordType.ACCESS_CONTROL_RECORD,
    MetadataRecordType.DELEGATION_TOKEN_RECORD,
    MetadataRecordType.ACCESS_CONTROL_ENTRY_RECORD, MetadataRecordType.REMOVE_ACCESS_CONTROL_ENTRY_RECORD,
    MetadataRecordType.USER_SCRAM_CREDENTIAL_RECORD, MetadataRecordType.REMOVE_USER_SCRAM_CREDENTIAL_RECORD,
))


def on_leadership_change(group_coordinator: Any, txn_coordinator: Any, updated_leaders: Iterable[Any],
                         updated_followers: Iterable[Any]) -> None:
    """RequestHandlerHelper.onLeadershipChange: the coordinators load the partitions of their
    internal topics this broker now leads and drop the ones it now follows."""
    updated_leaders = list(updated_leaders)
    updated_followers = list(updated_followers)
    if group_coordinator is not None:
        for partition in updated_leaders:
            if partition.topic == GROUP_METADATA_TOPIC_NAME:
                group_coordinator.on_election(partition.partition_id, partition.get_leader_epoch())
        for partition in updated_followers:
            if partition.topic == GROUP_METADATA_TOPIC_NAME:
                group_coordinator.on_resignation(partition.partition_id, partition.get_leader_epoch())
    if txn_coordinator is not None:
        for partition in updated_leaders:
            if partition.topic == TRANSACTION_STATE_TOPIC_NAME:
                txn_coordinator.on_election(partition.partition_id, partition.get_leader_epoch())
        for partition in updated_followers:
            if partition.topic == TRANSACTION_STATE_TOPIC_NAME:
                txn_coordinator.on_resignation(partition.partition_id, partition.get_leader_epoch())


class BrokerMetadataListener(MetaLogListener, KafkaMetricsGroup):
    def __init__(self, broker_id: int, time: Time, metadata_cache: Any, config_repository: Any,
                 group_coordinator: Any = None, replica_manager: Optional[RaftReplicaManager] = None,
                 txn_coordinator: Any = None,
                 thread_name_prefix: Optional[str] = None, client_quota_manager: Any = None,
                 topic_config_handler: Any = None, broker_config_handler: Any = None,
                 broker_metrics: Optional[BrokerServerMetrics] = None) -> None:
        self.broker_id = broker_id
        self.time = time
        # AclPublisher, ScramPublisher (set by the BrokerServer): handed each applied batch or snapshot
        self.publishers: list[Any] = []
        self.metadata_cache = metadata_cache
        self.config_repository = config_repository
        self.group_coordinator = group_coordinator
        self.replica_manager = replica_manager
        self.txn_coordinator = txn_coordinator
        self.client_quota_manager = client_quota_manager
        # Kafka 3.0's publisher: ConfigHandlers that apply changed configs (None: not applied)
        self.topic_config_handler = topic_config_handler
        self.broker_config_handler = broker_config_handler
        self.logger = IdentLogger(logger, f"[BrokerMetadataListener id={broker_id}] ")
        self.batch_processing_time_hist = self.new_histogram(METADATA_BATCH_PROCESSING_TIME_US)
        self.metadata_batch_size_hist = self.new_histogram(METADATA_BATCH_SIZES)
        self.broker_metrics = broker_metrics if broker_metrics is not None else BrokerServerMetrics(time)
        # written only on the event queue's thread; a plain int read is enough elsewhere
        self._highest_metadata_offset = -1
        self.event_queue = KafkaEventQueue(time, self.logger.ident, thread_name_prefix or "")

    def highest_metadata_offset(self) -> int:
        return self._highest_metadata_offset

    # ------------------------------------------------------------------ MetaLogListener

    def handle_commits(self, last_offset: int, messages: Sequence[ApiMessage]) -> None:
        self.event_queue.append(_HandleCommitsEvent(self, last_offset, list(messages)))

    def handle_commit_batch(self, last_offset: int, epoch: int, append_timestamp: int, size_in_bytes: int,
                            messages: Sequence[ApiMessage]) -> None:
        self.event_queue.append(_HandleCommitsEvent(self, last_offset, list(messages), append_timestamp))

    def handle_snapshot(self, reader: Any) -> None:
        self.event_queue.append(_HandleSnapshotEvent(self, reader))

    def exec_commits(self, last_offset: int, messages: Sequence[ApiMessage]) -> None:
        """Handle a batch on the calling thread (for tests, as Kafka's execCommits)."""
        _HandleCommitsEvent(self, last_offset, list(messages)).run()

    def handle_new_leader(self, leader: MetaLogLeader) -> None:
        self.event_queue.append(_HandleNewLeaderEvent(self, leader))

    def begin_shutdown(self) -> None:
        self.event_queue.begin_shutdown("beginShutdown", _ShutdownEvent(self))

    def close(self) -> None:
        self.begin_shutdown()
        self.event_queue.close()

    # ------------------------------------------------------------------ one batch

    def _handle_snapshot(self, reader: Any) -> None:
        try:
            self.logger.info("Loading snapshot %d-%d.", reader.snapshot_id().offset, reader.snapshot_id().epoch)
            records = [record.message for batch in reader for record in batch.records]
            self._handle_commits(reader.last_contained_log_offset(), records, is_snapshot=True,
                                 append_timestamp=reader.last_contained_log_timestamp())
        finally:
            reader.close()

    def _finish_snapshot(self, image_builder: MetadataImageBuilder, records: list[ApiMessage]) -> None:
        """Remove what the snapshot does not hold (Kafka 3.0's MetadataDelta.finishSnapshot)."""
        topic_ids = {record.topic_id for record in records
                     if int(type(record).__api_key__) == MetadataRecordType.TOPIC_RECORD.value}
        broker_ids = {int(record.broker_id) for record in records
                      if int(type(record).__api_key__) == MetadataRecordType.REGISTER_BROKER_RECORD.value}
        prev = self.metadata_cache.current_image()
        for topic_id in prev.partitions.copy_id_map():
            if topic_id not in topic_ids:
                image_builder.partitions_builder().remove_topic_by_id(topic_id)
        for broker in list(prev.brokers):
            if broker.id not in broker_ids:
                image_builder.brokers_builder().remove(broker.id)

    def _handle_commits(self, last_offset: int, records: list[ApiMessage], is_snapshot: bool = False,
                        append_timestamp: int = -1) -> None:
        log = self.logger
        log.debug("Metadata batch %d: handling %d record(s).", last_offset, len(records))
        image_builder = MetadataImageBuilder(self.broker_id, log, self.metadata_cache.current_image())
        start_ns = self.time.nanoseconds()
        self.metadata_batch_size_hist.update(len(records))
        changed_configs: dict[ConfigResource, None] = {}
        for index, record in enumerate(records):
            try:
                if log.isEnabledFor(TRACE):
                    log.log(TRACE, "Metadata batch %d: processing [%d/%d]: %s.", last_offset, index + 1,
                            len(records), record)
                self._handle_message(image_builder, record, last_offset, changed_configs)
            except Exception:  # noqa: BLE001 - one bad record must not stop the batch, as in Kafka
                self.broker_metrics.increment_metadata_load_error_count()
                log.error("Unable to handle record %d in batch ending at offset %d", index, last_offset,
                          exc_info=True)
        if is_snapshot:
            self._finish_snapshot(image_builder, records)
        if image_builder.has_changes():
            new_image = image_builder.build()
            log.debug("Metadata batch %d: creating new metadata image", last_offset)
            self.metadata_cache.image(new_image)
        else:
            log.debug("Metadata batch %d: no new metadata image required.", last_offset)
        if image_builder.has_partition_changes() and self.replica_manager is not None:
            log.debug("Metadata batch %d: applying partition changes", last_offset)
            try:
                self.replica_manager.handle_metadata_records(
                    image_builder, last_offset,
                    lambda leaders, followers: on_leadership_change(self.group_coordinator, self.txn_coordinator,
                                                                    leaders, followers))
            except Exception:
                self.broker_metrics.increment_metadata_apply_error_count()
                raise
        else:
            log.debug("Metadata batch %d: no partition changes found.", last_offset)
        for resource in changed_configs:
            self._publish_config(resource)
        for publisher in self.publishers:
            try:
                publisher.publish(last_offset, records, is_snapshot)
            except Exception:  # noqa: BLE001 - a publisher's failure must not stop the listener
                log.error("Error publishing metadata batch %d to %s", last_offset, publisher.name(), exc_info=True)
        self._highest_metadata_offset = last_offset
        if append_timestamp < 0:
            # a log that does not say when it appended: the last known time stays
            append_timestamp = self.broker_metrics.last_applied_record_timestamp()
        self.broker_metrics.set_last_applied_record(last_offset, append_timestamp)
        delta_us = (self.time.nanoseconds() - start_ns) // 1000
        log.debug("Metadata batch %d: advanced highest metadata offset in %d microseconds.", last_offset, delta_us)
        self.batch_processing_time_hist.update(delta_us)

    def _handle_message(self, image_builder: MetadataImageBuilder, record: ApiMessage, last_offset: int,
                        changed_configs: dict) -> None:
        try:
            record_type = MetadataRecordType.from_id(int(type(record).__api_key__))
        except Exception:  # noqa: BLE001
            raise RuntimeError(f"Unknown metadata record type {getattr(type(record), '__api_key__', None)} in "
                               f"batch ending at offset {last_offset}.") from None
        handler = _HANDLERS.get(record_type)
        if handler is not None:
            handler(self, image_builder, record, changed_configs)
        elif record_type not in _IGNORED_RECORD_TYPES:
            raise RuntimeError(f"Unhandled record {record} with type {record_type.name}")

    def handle_register_broker_record(self, image_builder: MetadataImageBuilder, record: Any) -> None:
        image_builder.brokers_builder().add(MetadataBroker.from_record(record))

    def handle_unregister_broker_record(self, image_builder: MetadataImageBuilder, record: Any) -> None:
        image_builder.brokers_builder().remove(int(record.broker_id))

    def handle_topic_record(self, image_builder: MetadataImageBuilder, record: Any) -> None:
        image_builder.partitions_builder().add_uuid_mapping(str(record.name), record.topic_id)

    def handle_partition_record(self, image_builder: MetadataImageBuilder, record: Any) -> None:
        name = image_builder.topic_id_to_name(record.topic_id)
        if name is None:
            raise RuntimeError(f"Unable to locate topic with ID {record.topic_id}")
        image_builder.partitions_builder().set(MetadataPartition.from_record(name, record))

    def handle_config_record(self, record: Any) -> ConfigResource:
        resource_type = ConfigResourceType.for_id(int(record.resource_type))
        if resource_type is ConfigResourceType.UNKNOWN:
            raise RuntimeError(f"Unable to understand config resource type {int(record.resource_type)}")
        resource = ConfigResource(resource_type, str(record.resource_name))
        self.config_repository.set_config(resource, str(record.name), record.value)
        return resource

    def handle_partition_change_record(self, image_builder: MetadataImageBuilder, record: Any) -> None:
        image_builder.partitions_builder().handle_change(record)

    def handle_fence_broker_record(self, image_builder: MetadataImageBuilder, record: Any) -> None:
        image_builder.brokers_builder().change_fencing(int(record.id), fenced=True)

    def handle_unfence_broker_record(self, image_builder: MetadataImageBuilder, record: Any) -> None:
        image_builder.brokers_builder().change_fencing(int(record.id), fenced=False)

    def handle_remove_topic_record(self, image_builder: MetadataImageBuilder, record: Any) -> None:
        topic_name = image_builder.topic_id_to_name(record.topic_id)
        if topic_name is None:
            raise RuntimeError(f"Unable to locate topic with ID {record.topic_id}")
        self.logger.info("Processing deletion of topic %s with id %s", topic_name, record.topic_id)
        removed = image_builder.partitions_builder().remove_topic_by_id(record.topic_id)
        if self.group_coordinator is not None:
            self.group_coordinator.handle_deleted_partitions([p.to_topic_partition() for p in removed])
        self.config_repository.remove(ConfigResource(ConfigResourceType.TOPIC, topic_name))

    def handle_quota_record(self, record: Any) -> None:
        if self.client_quota_manager is not None:
            self.client_quota_manager.handle_quota_record(record)

    def _publish_config(self, resource: ConfigResource) -> None:
        """Kafka 3.0's BrokerMetadataPublisher: hand the resource's whole config to its handler."""
        try:
            props = self.config_repository.config(resource)
            if resource.type is ConfigResourceType.TOPIC and self.topic_config_handler is not None:
                self.topic_config_handler.process_config_changes(resource.name, props)
            elif resource.type is ConfigResourceType.BROKER and self.broker_config_handler is not None:
                if resource.name == "":
                    self.logger.info("Updating cluster configuration : %s", _loggable(props))
                    self.broker_config_handler.process_config_changes("<default>", props)
                elif resource.name == str(self.broker_id):
                    self.logger.info("Updating broker %s with new configuration : %s", resource.name,
                                     _loggable(props))
                    self.broker_config_handler.process_config_changes(resource.name, props)
        except Exception:  # noqa: BLE001 - a config that does not apply must not stop the listener
            self.broker_metrics.increment_metadata_apply_error_count()
            self.logger.error("Error applying the config change of %s", resource, exc_info=True)

    def _handle_new_leader(self, leader: MetaLogLeader) -> None:
        image_builder = MetadataImageBuilder(self.broker_id, self.logger, self.metadata_cache.current_image())
        image_builder.controller_id(None if leader.node_id < 0 else leader.node_id)
        self.metadata_cache.image(image_builder.build())


def _config(listener: BrokerMetadataListener, _builder: MetadataImageBuilder, record: Any,
            changed_configs: dict) -> None:
    changed_configs[listener.handle_config_record(record)] = None


_HANDLERS: dict[MetadataRecordType, Callable[[BrokerMetadataListener, MetadataImageBuilder, Any, dict], None]] = {
    MetadataRecordType.REGISTER_BROKER_RECORD: lambda s, b, r, c: s.handle_register_broker_record(b, r),
    MetadataRecordType.UNREGISTER_BROKER_RECORD: lambda s, b, r, c: s.handle_unregister_broker_record(b, r),
    MetadataRecordType.FENCE_BROKER_RECORD: lambda s, b, r, c: s.handle_fence_broker_record(b, r),
    MetadataRecordType.UNFENCE_BROKER_RECORD: lambda s, b, r, c: s.handle_unfence_broker_record(b, r),
    MetadataRecordType.TOPIC_RECORD: lambda s, b, r, c: s.handle_topic_record(b, r),
    MetadataRecordType.PARTITION_RECORD: lambda s, b, r, c: s.handle_partition_record(b, r),
    MetadataRecordType.PARTITION_CHANGE_RECORD: lambda s, b, r, c: s.handle_partition_change_record(b, r),
    MetadataRecordType.REMOVE_TOPIC_RECORD: lambda s, b, r, c: s.handle_remove_topic_record(b, r),
    MetadataRecordType.CONFIG_RECORD: _config,
    MetadataRecordType.QUOTA_RECORD: lambda s, b, r, c: s.handle_quota_record(r),
}


class _HandleCommitsEvent(FailureLoggingEvent):
    def __init__(self, listener: BrokerMetadataListener, last_offset: int, records: list[ApiMessage],
                 append_timestamp: int = -1) -> None:
        super().__init__(listener.logger)
        self.listener = listener
        self.last_offset = last_offset
        self.records = records
        self.append_timestamp = append_timestamp

    def run(self) -> None:
        self.listener._handle_commits(self.last_offset, self.records, append_timestamp=self.append_timestamp)


class _HandleSnapshotEvent(FailureLoggingEvent):
    def __init__(self, listener: BrokerMetadataListener, reader: Any) -> None:
        super().__init__(listener.logger)
        self.listener = listener
        self.reader = reader

    def run(self) -> None:
        self.listener._handle_snapshot(self.reader)


class _HandleNewLeaderEvent(FailureLoggingEvent):
    def __init__(self, listener: BrokerMetadataListener, leader: MetaLogLeader) -> None:
        super().__init__(listener.logger)
        self.listener = listener
        self.leader = leader

    def run(self) -> None:
        self.listener._handle_new_leader(self.leader)


class _ShutdownEvent(FailureLoggingEvent):
    def __init__(self, listener: BrokerMetadataListener) -> None:
        super().__init__(listener.logger)
        self.listener = listener

    def run(self) -> None:
        self.listener.remove_metric(METADATA_BATCH_PROCESSING_TIME_US)
        self.listener.remove_metric(METADATA_BATCH_SIZES)
        self.listener.broker_metrics.close()


def _loggable(props: Mapping[str, str]) -> str:
    """A config for the log, passwords hidden (KafkaConfig's sensitive types), as Kafka's
    ConfigUtils.configMapToRedactedString does."""
    from kafka_py.server.kafka_config import KafkaConfig
    from kafka_py.clients.common.config.config_def import Type

    return ",".join(f"{k} -> {'[hidden]' if KafkaConfig.config_type(k) in (None, Type.PASSWORD) else v}"
                    for k, v in sorted(props.items()))


__all__ = ["BrokerMetadataListener", "on_leadership_change", "METADATA_BATCH_PROCESSING_TIME_US",
           "METADATA_BATCH_SIZES"]
