"""Port of the BrokerTopicMetrics and BrokerTopicStats classes of
core/src/main/scala/kafka/server/KafkaRequestHandler.scala (Kafka 2.8.2).

``kafka.server:type=BrokerTopicMetrics,name=...`` meters, for all topics (no tag) and per
topic (``topic=<t>``):

* produce (ReplicaManager.append_records): TotalProduceRequestsPerSec per partition written,
  MessagesInPerSec and BytesInPerSec after a successful append, FailedProduceRequestsPerSec
  when an append fails unexpectedly; BytesRejectedPerSec for batches over max.message.bytes;
* fetch (ReplicaManager.read_from_local_log, KafkaApis): TotalFetchRequestsPerSec and
  FailedFetchRequestsPerSec per partition read, BytesOutPerSec per partition answered to a
  consumer; ReplicationBytesOutPerSec (all topics only) for answers to followers;
* ReplicationBytesInPerSec (all topics only): what this broker's replica fetchers appended;
* ReassignmentBytesInPerSec and ReassignmentBytesOutPerSec (all topics only): the part of the
  replication traffic that goes to replicas being added by a reassignment;
* FetchMessageConversionsPerSec: records converted to message format 0 or 1 for the consumers
  of Fetch v0-v3, counted when the answer has been written; ProduceMessageConversionsPerSec:
  records a produce brought in another message format than the topic's (or in another codec),
  rebuilt by LogValidator before the append (both through KafkaApis.update_record_conversion_stats).

A topic's meters are made on its first use and removed when the broker stops hosting the
topic (``remove_metrics``), so a deleted or moved topic leaves no metric behind. A produce or
fetch naming a partition this broker does not host (a client whose metadata is stale after a
reassignment or a deletion, or asks for a topic it never had) counts for all topics only:
Kafka makes the topic's meters for it too, and nothing ever removes them. All the meters,
every topic's and all topics', share one lock, so the produce path marks the three of the
topic and the three of all topics under one acquisition (``record_produce``, once per
partition), and a fetch its counts likewise: nothing is called while it is held, so no
thread waits on it for long.
"""
from __future__ import annotations

import threading
from typing import Optional

from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup, recording
from kafka_py.core.metrics.yammer import Meter

MESSAGE_IN = "MessagesInPerSec"
BYTES_IN = "BytesInPerSec"
BYTES_OUT = "BytesOutPerSec"
BYTES_REJECTED = "BytesRejectedPerSec"
REPLICATION_BYTES_IN = "ReplicationBytesInPerSec"
REPLICATION_BYTES_OUT = "ReplicationBytesOutPerSec"
REASSIGNMENT_BYTES_IN = "ReassignmentBytesInPerSec"
REASSIGNMENT_BYTES_OUT = "ReassignmentBytesOutPerSec"
FAILED_PRODUCE_REQUESTS = "FailedProduceRequestsPerSec"
FAILED_FETCH_REQUESTS = "FailedFetchRequestsPerSec"
TOTAL_PRODUCE_REQUESTS = "TotalProduceRequestsPerSec"
TOTAL_FETCH_REQUESTS = "TotalFetchRequestsPerSec"
FETCH_MESSAGE_CONVERSIONS = "FetchMessageConversionsPerSec"
PRODUCE_MESSAGE_CONVERSIONS = "ProduceMessageConversionsPerSec"


class BrokerTopicMetrics(KafkaMetricsGroup):
    """The meters of one topic, or of all topics (``name is None``)."""

    metrics_group = "kafka.server"
    metrics_type_name = "BrokerTopicMetrics"

    def __init__(self, name: Optional[str], lock: Optional[threading.Lock] = None) -> None:
        self.topic = name
        self.tags = {} if name is None else {"topic": name}
        # BrokerTopicStats hands every topic the all-topics lock
        self.lock = lock if lock is not None else threading.Lock()
        lock = self.lock

        def meter(metric: str, event_type: str) -> Meter:
            return self.new_meter(metric, event_type, self.tags, lock)

        self.messages_in_rate = meter(MESSAGE_IN, "messages")
        self.bytes_in_rate = meter(BYTES_IN, "bytes")
        self.bytes_out_rate = meter(BYTES_OUT, "bytes")
        self.bytes_rejected_rate = meter(BYTES_REJECTED, "bytes")
        self.failed_produce_request_rate = meter(FAILED_PRODUCE_REQUESTS, "requests")
        self.failed_fetch_request_rate = meter(FAILED_FETCH_REQUESTS, "requests")
        self.total_produce_request_rate = meter(TOTAL_PRODUCE_REQUESTS, "requests")
        self.total_fetch_request_rate = meter(TOTAL_FETCH_REQUESTS, "requests")
        self.fetch_message_conversions_rate = meter(FETCH_MESSAGE_CONVERSIONS, "requests")
        self.produce_message_conversions_rate = meter(PRODUCE_MESSAGE_CONVERSIONS, "requests")
        self._names = [MESSAGE_IN, BYTES_IN, BYTES_OUT, BYTES_REJECTED, FAILED_PRODUCE_REQUESTS,
                       FAILED_FETCH_REQUESTS, TOTAL_PRODUCE_REQUESTS, TOTAL_FETCH_REQUESTS,
                       FETCH_MESSAGE_CONVERSIONS, PRODUCE_MESSAGE_CONVERSIONS]
        self.replication_bytes_in_rate: Optional[Meter] = None
        self.replication_bytes_out_rate: Optional[Meter] = None
        self.reassignment_bytes_in_rate: Optional[Meter] = None
        self.reassignment_bytes_out_rate: Optional[Meter] = None
        if name is None:
            self.replication_bytes_in_rate = meter(REPLICATION_BYTES_IN, "bytes")
            self.replication_bytes_out_rate = meter(REPLICATION_BYTES_OUT, "bytes")
            self.reassignment_bytes_in_rate = meter(REASSIGNMENT_BYTES_IN, "bytes")
            self.reassignment_bytes_out_rate = meter(REASSIGNMENT_BYTES_OUT, "bytes")
            self._names += [REPLICATION_BYTES_IN, REPLICATION_BYTES_OUT, REASSIGNMENT_BYTES_IN,
                            REASSIGNMENT_BYTES_OUT]

    def record_produce(self, messages: int, size: int) -> None:
        """One partition's successful append: a produce request, its messages and bytes."""
        with self.lock:
            self.total_produce_request_rate.count += 1
            self.messages_in_rate.count += messages
            self.bytes_in_rate.count += size

    def close(self) -> None:
        for name in self._names:
            self.remove_metric(name, self.tags)


class BrokerTopicStats:
    """All-topics metrics plus each topic's, made on first use."""

    def __init__(self) -> None:
        all_topics = self.all_topics_stats = BrokerTopicMetrics(None)
        # the meters only the all-topics metrics have (BrokerTopicMetrics makes them for no topic)
        assert all_topics.replication_bytes_in_rate is not None \
            and all_topics.replication_bytes_out_rate is not None \
            and all_topics.reassignment_bytes_in_rate is not None \
            and all_topics.reassignment_bytes_out_rate is not None
        self._replication_bytes_in_rate: Meter = all_topics.replication_bytes_in_rate
        self._replication_bytes_out_rate: Meter = all_topics.replication_bytes_out_rate
        self._reassignment_bytes_in_rate: Meter = all_topics.reassignment_bytes_in_rate
        self._reassignment_bytes_out_rate: Meter = all_topics.reassignment_bytes_out_rate
        self._stats: dict[str, BrokerTopicMetrics] = {}
        self._lock = threading.Lock()

    def topic_stats(self, topic: str) -> BrokerTopicMetrics:
        stats = self._stats.get(topic)
        if stats is None:
            with self._lock:
                stats = self._stats.get(topic)
                if stats is None:
                    stats = self._stats[topic] = BrokerTopicMetrics(topic, self.all_topics_stats.lock)
        return stats

    # ---- what the produce and fetch paths call ------------------------------------
    def record_produce(self, topic: str, messages: int, size: int) -> None:
        if recording.enabled:
            # BrokerTopicMetrics.record_produce, written out for the topic and for all topics:
            # this runs for every partition of every produce
            stats = self._stats.get(topic)
            if stats is None:
                stats = self.topic_stats(topic)
            all_topics = self.all_topics_stats
            with all_topics.lock:  # the topic's lock too
                stats.total_produce_request_rate.count += 1
                stats.messages_in_rate.count += messages
                stats.bytes_in_rate.count += size
                all_topics.total_produce_request_rate.count += 1
                all_topics.messages_in_rate.count += messages
                all_topics.bytes_in_rate.count += size

    def mark_produce_request(self, topic: Optional[str]) -> None:
        """A produce to a partition that did not append (the successful case: record_produce);
        ``topic`` None for a partition not hosted here (all topics only)."""
        if recording.enabled:
            if topic is not None:
                self.topic_stats(topic).total_produce_request_rate.mark()
            self.all_topics_stats.total_produce_request_rate.mark()

    def mark_failed_produce(self, topic: str) -> None:
        if recording.enabled:
            self.topic_stats(topic).failed_produce_request_rate.mark()
            self.all_topics_stats.failed_produce_request_rate.mark()

    def mark_bytes_rejected(self, topic: str, size: int) -> None:
        if recording.enabled:
            self.topic_stats(topic).bytes_rejected_rate.mark(size)
            self.all_topics_stats.bytes_rejected_rate.mark(size)

    def mark_fetch_request(self, topic: Optional[str]) -> None:
        """A partition read; ``topic`` None for a partition not hosted here (all topics only)."""
        if recording.enabled:
            all_topics = self.all_topics_stats
            if topic is not None:
                stats = self._stats.get(topic)
                if stats is None:
                    stats = self.topic_stats(topic)
                with all_topics.lock:  # the topic's lock too
                    stats.total_fetch_request_rate.count += 1
                    all_topics.total_fetch_request_rate.count += 1
            else:
                with all_topics.lock:
                    all_topics.total_fetch_request_rate.count += 1

    def mark_failed_fetch(self, topic: str) -> None:
        if recording.enabled:
            self.topic_stats(topic).failed_fetch_request_rate.mark()
            self.all_topics_stats.failed_fetch_request_rate.mark()

    def mark_message_conversions(self, topic: str, count: int, produce: bool) -> None:
        """Records converted between message formats: for a produce (ProduceMessageConversionsPerSec)
        or for a fetch (FetchMessageConversionsPerSec)."""
        if recording.enabled:
            stats = self.topic_stats(topic)
            all_topics = self.all_topics_stats
            if produce:
                stats.produce_message_conversions_rate.mark(count)
                all_topics.produce_message_conversions_rate.mark(count)
            else:
                stats.fetch_message_conversions_rate.mark(count)
                all_topics.fetch_message_conversions_rate.mark(count)

    def update_replication_bytes_in(self, value: int) -> None:
        if recording.enabled:
            self._replication_bytes_in_rate.mark(value)

    def update_reassignment_bytes_in(self, value: int) -> None:
        if recording.enabled:
            self._reassignment_bytes_in_rate.mark(value)

    def update_bytes_out(self, topic: str, is_follower: bool, value: int, is_reassignment: bool = False) -> None:
        """BrokerTopicStats.updateBytesOut: followers' fetches count as replication, those of
        replicas being added by a reassignment as reassignment too."""
        if not recording.enabled:
            return
        if is_follower:
            if is_reassignment:
                self._reassignment_bytes_out_rate.mark(value)
            self._replication_bytes_out_rate.mark(value)
        else:
            stats = self._stats.get(topic)
            if stats is None:
                stats = self.topic_stats(topic)
            all_topics = self.all_topics_stats
            with all_topics.lock:  # the topic's lock too
                stats.bytes_out_rate.count += value
                all_topics.bytes_out_rate.count += value

    # ---- lifecycle --------------------------------------------------------------
    def remove_metrics(self, topic: str) -> None:
        with self._lock:
            stats = self._stats.pop(topic, None)
        if stats is not None:
            stats.close()

    def close(self) -> None:
        self.all_topics_stats.close()
        with self._lock:
            stats = list(self._stats.values())
            self._stats.clear()
        for s in stats:
            s.close()


__all__ = ["BrokerTopicMetrics", "BrokerTopicStats"]
