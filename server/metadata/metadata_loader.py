"""After metadata/src/main/java/org/apache/kafka/image/loader/MetadataLoader.java (Kafka 3.5.0),
reduced to what a KRaft controller node needs from it.

The QuorumController keeps the cluster's state for writing it; the node's own services that
read metadata (its StandardAuthorizer and the CredentialCache of its SASL listeners) are fed
separately, as Kafka 3.5's ControllerServer feeds its publishers from the MetadataLoader: this
MetaLogListener reads the committed batches and snapshots of the metadata log and hands each
to its publishers (AclPublisher, ScramPublisher) on its own event queue, so the log's thread
never waits on them. Only committed records arrive here, so an uncommitted ACL or credential
is never used, even on the active controller.
"""
from __future__ import annotations

import logging
from typing import Any, Sequence

from kafka_py.metadata.api_message_and_version import ApiMessage
from kafka_py.metadata.metalog.meta_log_listener import MetaLogListener
from kafka_py.metadata.queue.event_queue import FailureLoggingEvent
from kafka_py.metadata.queue.kafka_event_queue import KafkaEventQueue
from kafka_py.utils.logging import IdentLogger
from kafka_py.utils.time import Time

logger = logging.getLogger(__name__)


class MetadataLoader(MetaLogListener):
    def __init__(self, node_id: int, time: Time, publishers: Sequence[Any],
                 thread_name_prefix: str = "") -> None:
        self.publishers = list(publishers)
        self.logger = IdentLogger(logger, f"[MetadataLoader id={node_id}] ")
        self.event_queue = KafkaEventQueue(time, self.logger.ident, f"{thread_name_prefix}metadata-loader-")
        # written only on the event queue's thread
        self.last_offset = -1

    def handle_commits(self, last_offset: int, messages: Sequence[ApiMessage]) -> None:
        records = list(messages)
        self.event_queue.append(_PublishEvent(self, last_offset, lambda: records, False))

    def handle_snapshot(self, reader: Any) -> None:
        def read() -> list[ApiMessage]:
            try:
                self.logger.info("Loading snapshot %d-%d.", reader.snapshot_id().offset, reader.snapshot_id().epoch)
                return [record.message for batch in reader for record in batch.records]
            finally:
                reader.close()

        self.event_queue.append(_PublishEvent(self, reader.last_contained_log_offset(), read, True))

    def begin_shutdown(self) -> None:
        self.event_queue.begin_shutdown("MetadataLoader.beginShutdown")

    def close(self) -> None:
        self.begin_shutdown()
        self.event_queue.close()

    def _publish(self, last_offset: int, records: list[ApiMessage], is_snapshot: bool) -> None:
        for publisher in self.publishers:
            try:
                publisher.publish(last_offset, records, is_snapshot)
            except Exception:  # noqa: BLE001 - one publisher's failure must not stop the others
                self.logger.error("Error publishing the metadata up to offset %d to %s", last_offset,
                                  publisher.name(), exc_info=True)
        self.last_offset = last_offset


class _PublishEvent(FailureLoggingEvent):
    def __init__(self, loader: MetadataLoader, last_offset: int, records: Any, is_snapshot: bool) -> None:
        super().__init__(loader.logger)
        self.loader = loader
        self.last_offset = last_offset
        self.records = records
        self.is_snapshot = is_snapshot

    def run(self) -> None:
        self.loader._publish(self.last_offset, self.records(), self.is_snapshot)

    def __str__(self) -> str:
        return f"{'snapshot' if self.is_snapshot else 'commits'}[{self.last_offset}]"


__all__ = ["MetadataLoader"]
