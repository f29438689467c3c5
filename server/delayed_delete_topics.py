"""Port of core/src/main/scala/kafka/server/DelayedDeleteTopics.scala.

DeleteTopics only marks topics in /admin/delete_topics; the controller deletes them and
then drops them from every broker's metadata cache. A request with a timeout waits here,
keyed by ``TopicKey(topic)``, until this broker's cache no longer has any of its topics.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.delayed_operation import DelayedOperation

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.server.zk_admin_manager import ZkAdminManager

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeleteTopicMetadata:
    topic: str
    error: Errors = Errors.NONE

    @classmethod
    def of_exception(cls, topic: str, e: BaseException) -> "DeleteTopicMetadata":
        return cls(topic, Errors.for_exception(e))


class DelayedDeleteTopics(DelayedOperation):
    """Completes once no topic that was marked without error is left in the cache."""

    def __init__(self, delay_ms: int, delete_metadata: Sequence[DeleteTopicMetadata],
                 admin_manager: "ZkAdminManager",
                 response_callback: Callable[[dict[str, Errors]], None]) -> None:
        super().__init__(delay_ms)
        self.delete_metadata = list(delete_metadata)
        self.admin_manager = admin_manager
        self.response_callback = response_callback

    def try_complete(self) -> bool:
        existing = sum(1 for m in self.delete_metadata if m.error is Errors.NONE and self._topic_exists(m.topic))
        if existing == 0:
            logger.debug("All topics have been deleted or have errors, completing the delayed operation")
            return self.force_complete()
        logger.debug("%d topics still exist, not completing the delayed operation", existing)
        return False

    def on_complete(self) -> None:
        results = {}
        for metadata in self.delete_metadata:
            if metadata.error is Errors.NONE and self._topic_exists(metadata.topic):
                results[metadata.topic] = Errors.REQUEST_TIMED_OUT
            else:
                results[metadata.topic] = metadata.error
        self.response_callback(results)

    def on_expiration(self) -> None:
        pass

    def _topic_exists(self, topic: str) -> bool:
        return self.admin_manager.metadata_cache.contains(topic)
