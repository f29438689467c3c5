"""Port of core/src/main/scala/kafka/server/DelayedCreatePartitions.scala.

CreateTopics and CreatePartitions only write ZooKeeper; the controller then elects leaders
and tells every broker through UpdateMetadata. A request with a timeout waits here, in the
admin manager's "topic" purgatory keyed by ``TopicKey(topic)``, until this broker's
metadata cache shows a leader for every partition it created, or the timeout passes.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, NamedTuple, Sequence

from kafka_py.core.api.leader_and_isr import LeaderAndIsr
from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.delayed_operation import DelayedOperation

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.server.zk_admin_manager import ZkAdminManager

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CreatePartitionsMetadata:
    """What a create-topic or create-partitions request did to one topic: the partitions that
    must get a leader before it is answered, or the error it already has."""

    topic: str
    partitions: frozenset[int] = field(default_factory=frozenset)
    error: ApiError = ApiError.NONE  # type: ignore[attr-defined]

    @classmethod
    def of_error(cls, topic: str, error: "ApiError | Errors | BaseException") -> "CreatePartitionsMetadata":
        if isinstance(error, Errors):
            error = ApiError(error)
        elif isinstance(error, BaseException):
            error = ApiError.from_throwable(error)
        return cls(topic, frozenset(), error)


class DelayedCreatePartitions(DelayedOperation):
    """Completes once every partition of every successful topic has a leader in the cache."""

    def __init__(self, delay_ms: int, create_metadata: Sequence[CreatePartitionsMetadata],
                 admin_manager: "ZkAdminManager",
                 response_callback: Callable[[dict[str, ApiError]], None]) -> None:
        super().__init__(delay_ms)
        self.create_metadata = list(create_metadata)
        self.admin_manager = admin_manager
        self.response_callback = response_callback
        # Topics all of whose partitions have been seen with a leader. Kafka counts the
        # leaderless partitions of every topic on every check, and a check comes with each
        # topic's first UpdateMetadata: for a request creating 100 topics of 100 partitions,
        # a million lookups. A topic seen complete is not looked at again; the answer
        # (on_complete) still counts them all.
        self._topics_with_leaders: set[str] = set()

    def try_complete(self) -> bool:
        for m in self.create_metadata:
            if not m.error.is_success() or m.topic in self._topics_with_leaders:
                continue
            if any(self._is_missing_leader(m.topic, p) for p in m.partitions):
                logger.debug("Partitions of %s do not all have a leader, not completing the delayed operation",
                             m.topic)
                return False
            self._topics_with_leaders.add(m.topic)
        logger.debug("All partitions have a leader, completing the delayed operation")
        return self.force_complete()

    def on_complete(self) -> None:
        results: dict[str, ApiError] = {}
        for metadata in self.create_metadata:
            # A topic that failed up front keeps its error; one still missing a leader now
            # (we got here by expiry) timed out.
            if metadata.error.is_success() and self._missing_leader_count(metadata.topic, metadata.partitions) > 0:
                results[metadata.topic] = ApiError(Errors.REQUEST_TIMED_OUT)
            else:
                results[metadata.topic] = metadata.error
        self.response_callback(results)

    def on_expiration(self) -> None:
        pass

    def _missing_leader_count(self, topic: str, partitions: frozenset[int]) -> int:
        return sum(1 for p in partitions if self._is_missing_leader(topic, p))

    def _is_missing_leader(self, topic: str, partition: int) -> bool:
        info = self.admin_manager.metadata_cache.get_partition_info(topic, partition)
        return info is None or info.leader == LeaderAndIsr.NO_LEADER
