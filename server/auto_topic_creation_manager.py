"""Port of core/src/main/scala/kafka/server/AutoTopicCreationManager.scala (Kafka 2.8.2), the
path through the controller (``sendCreateTopicRequest``) that a KRaft broker takes.

A Metadata request naming a missing topic (with auto.create.topics.enable), or a
FindCoordinator finding no __consumer_offsets or __transaction_state, asks the active
controller to create the topic with a CreateTopics request on the broker's "autocreate"
channel, and answers at once; the client asks again and finds the topic once the
controller's records have reached this broker. A topic is asked for once while its request
is in flight. KafkaApis picks the partitions, replication factor and configs (the internal
topics' from their coordinators), as in ZooKeeper mode, whose path writes ZooKeeper itself.
"""
from __future__ import annotations

import datetime
import logging
import threading
from typing import Any, Mapping

from kio.schema.create_topics.v7.request import CreatableTopic, CreatableTopicConfig, CreateTopicsRequest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors

logger = logging.getLogger(__name__)


class DefaultAutoTopicCreationManager:
    def __init__(self, config: Any, channel_manager: Any) -> None:
        self.config = config
        self.channel_manager = channel_manager
        self._lock = threading.Lock()
        self._inflight_topics: set[str] = set()

    def start(self) -> None:
        self.channel_manager.start()

    def shutdown(self) -> None:
        self.channel_manager.shutdown()
        with self._lock:
            self._inflight_topics.clear()

    def create_topic(self, topic: str, num_partitions: int, replication_factor: int,
                     configs: Mapping[str, str]) -> Errors:
        """Ask the controller to create ``topic``; the error the client is answered with now."""
        with self._lock:
            if topic in self._inflight_topics:
                return Errors.UNKNOWN_TOPIC_OR_PARTITION
            self._inflight_topics.add(topic)
        request = CreateTopicsRequest(
            topics=(CreatableTopic(name=topic, num_partitions=num_partitions, replication_factor=replication_factor,
                                   assignments=(), configs=tuple(CreatableTopicConfig(name=k, value=v)
                                                                 for k, v in configs.items())),),
            timeout=datetime.timedelta(milliseconds=int(self.config.request_timeout_ms)), validate_only=False)
        self.channel_manager.send_request(ApiKeys.CREATE_TOPICS, request, _Handler(self, topic))
        logger.info("Sent auto-creation request for %s to the active controller.", topic)
        return Errors.UNKNOWN_TOPIC_OR_PARTITION

    def clear_inflight_request(self, topic: str) -> None:
        with self._lock:
            self._inflight_topics.discard(topic)
        logger.debug("Cleared inflight topic creation state for %s", topic)


class _Handler:
    def __init__(self, manager: DefaultAutoTopicCreationManager, topic: str) -> None:
        self.manager = manager
        self.topic = topic

    def on_complete(self, response: Any) -> None:
        logger.debug("Auto topic creation completed for %s.", self.topic)
        self.manager.clear_inflight_request(self.topic)

    def on_timeout(self) -> None:
        logger.debug("Auto topic creation timed out for %s.", self.topic)
        self.manager.clear_inflight_request(self.topic)


__all__ = ["DefaultAutoTopicCreationManager"]
