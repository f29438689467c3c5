"""After metadata/src/main/java/org/apache/kafka/image/loader/MetadataLoader.java (Kafka 3.5.0),
reduced to what a KRaft controller node needs from it.

The QuorumController keeps the cluster's state for writing it; the node's own services that
read metadata (its StandardAuthorizer and the CredentialCache of its SASL listeners) are fed
separately, as Kafka 3.5's ControllerServer feeds its publishers from the MetadataLoader: this
MetaLogListener reads the committed batches and snapshots of the metadata log and hands each
to its publishers (AclPublisher, ScramPublisher) on its own event queue, so the log's thread
never waits on them. Only committed records arrive here, so an uncommitted ACL or credential
is never used, even on the active controller.

Once the log read (``handle_commits_read_to``, control batches included) or a snapshot loaded
reaches the log's high watermark (``high_watermark``, the raft client's), the loader has caught up, and it tells the publishers that have a ``caught_up``:
the authorizer then decides for everyone. Kafka's loader holds its publishers back until
then; these get every batch as it commits, as the broker's listener gives them.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Optional, Sequence

from kafka_py.metadata.api_message_and_version import ApiMessage
from kafka_py.metadata.metalog.meta_log_listener import MetaLogListener
from kafka_py.metadata.queue.event_queue import FailureLoggingEvent
from kafka_py.metadata.queue.kafka_event_queue import KafkaEventQueue
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)


class MetadataLoader(MetaLogListener):
    def __init__(self, node_id: int, time: Time, publishers: Sequence[Any],
                 thread_name_prefix: str = "",
                 high_watermark: Optional[Callable[[], Optional[int]]] = None) -> None:
        self.publishers = list(publishers)
        # None: every publish is caught up (a log with no high watermark to reach)
        self._high_watermark = high_watermark
        self.caught_up = False
        self.logger = IdentLogger(logger, f"[MetadataLoader id={node_id}] ")
        self.event_queue = KafkaEventQueue(time, self.logger.ident, f"{thread_name_prefix}metadata-loader-")
        # written only on the event queue's thread
        self.last_offset = -1

    def handle_commits(self, last_offset: int, messages: Sequence[ApiMessage]) -> None:
        records = list(messages)
        self.event_queue.append(_PublishEvent(self, last_offset, lambda: records, False))

    def handle_commits_read_to(self, last_offset: int) -> None:
        if not self.caught_up:
            self.event_queue.append(_CaughtUpCheckEvent(self, last_offset))

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
        for publisher in self.publishers:
            close = getattr(publisher, "close", None)
            if close is not None:
                close()

    def _publish(self, last_offset: int, records: list[ApiMessage], is_snapshot: bool) -> None:
        for publisher in self.publishers:
            try:
                publisher.publish(last_offset, records, is_snapshot)
            except Exception:  # noqa: BLE001 - one publisher's failure must not stop the others
                self.logger.error("Error publishing the metadata up to offset %d to %s", last_offset,
                                  publisher.name(), exc_info=True)
        self.last_offset = last_offset
        if not self.caught_up and (is_snapshot or self._high_watermark is None):
            self._maybe_caught_up(last_offset)

    def _maybe_caught_up(self, last_offset: int) -> None:
        if self.caught_up:
            return
        if self._high_watermark is not None:
            high_watermark = self._high_watermark()
            if high_watermark is None or last_offset + 1 < high_watermark:
                self.logger.debug("Caught up to offset %d of high watermark %s", last_offset, high_watermark)
                return
        self.caught_up = True
        self.logger.info("Caught up with the metadata log at offset %d", last_offset)
        for publisher in self.publishers:
            caught_up = getattr(publisher, "caught_up", None)
            if caught_up is None:
                continue
            try:
                caught_up(last_offset)
            except Exception:  # noqa: BLE001 - as for publish
                self.logger.error("Error telling %s that the metadata is caught up", publisher.name(), exc_info=True)


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


class _CaughtUpCheckEvent(FailureLoggingEvent):
    def __init__(self, loader: MetadataLoader, last_offset: int) -> None:
        super().__init__(loader.logger)
        self.loader = loader
        self.last_offset = last_offset

    def run(self) -> None:
        self.loader._maybe_caught_up(self.last_offset)

    def __str__(self) -> str:
        return f"caughtUpCheck[{self.last_offset}]"


__all__ = ["MetadataLoader"]
