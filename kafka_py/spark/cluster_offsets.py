"""Asks a running Kafka cluster for each partition's leader and high watermark.

No Kafka counterpart: what Spark's Kafka source learns from its consumer (KafkaOffsetReader),
here through an admin client (confluent-kafka's AdminClient: Metadata for the leaders,
ListOffsets with ``read_uncommitted`` for the high watermarks, which is what a broker answers
for the latest offset at that isolation level). With ``kafka.bootstrap.servers`` the
``kafka-log`` stream plans each micro-batch up to these high watermarks, so it sees a record
as soon as the cluster has acknowledged it, instead of after the next write of
``replication-offset-checkpoint``, and reads each partition from its leader's log dir.

A question that fails (the cluster unreachable, a partition without a leader during an
election) is not an error: its partitions come back unknown, and the planner falls back to
the checkpointed high watermarks, which are lower but just as safe. A cluster that refuses
the client (a SASL login refused, a TLS handshake failed) is a configuration error instead:
``ClusterAuthenticationException`` names it and the ``kafka.*`` options to check, rather than
every micro-batch waiting out the timeout and reading behind.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

from kafka_py.clients.common.topic_partition import TopicPartition

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 15.0
#: librdkafka's errors (error_cb) for a cluster that refuses this client's credentials.
_REFUSED = {"_AUTHENTICATION", "_SSL"}


class ClusterAuthenticationException(RuntimeError):
    """The cluster of ``kafka.bootstrap.servers`` refused the client."""


@dataclass(frozen=True)
class PartitionState:
    """What the cluster said about one partition."""

    leader: Optional[int]
    high_watermark: Optional[int]


class ClusterOffsets:
    """One admin client, made on first use (the object itself travels pickled to Spark's
    workers, where it is never used and must not hold a connection)."""

    def __init__(self, kafka_params: Mapping[str, str], timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.config = dict(kafka_params)
        self.timeout_s = timeout_s
        self._admin = None
        self._refused: Optional[str] = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_admin": None}

    def _client(self):
        if self._admin is None:
            from confluent_kafka.admin import AdminClient

            self._admin = AdminClient({**self.config, "error_cb": self._client_error})
        return self._admin

    def _client_error(self, error) -> None:
        if error.name() in _REFUSED:
            self._refused = f"{error.name()} ({error.str()})"

    def _check_refused(self) -> None:
        """After a failed request: serve the client's error callbacks, and fail if the cluster
        refused the client."""
        self._refused = None
        try:
            self._admin.poll(0)
        except Exception:  # noqa: BLE001 - only looking for the reason
            return
        if self._refused is not None:
            raise ClusterAuthenticationException(
                f"The cluster of kafka.bootstrap.servers={self.config.get('bootstrap.servers')} refused the "
                f"client: {self._refused}. Check the options kafka.security.protocol, kafka.sasl.* and "
                f"kafka.ssl.* (librdkafka's names)")

    def fetch(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionState]:
        """Leader and high watermark of each of ``partitions`` the cluster knows."""
        wanted = set(partitions)
        if not wanted:
            return {}
        from confluent_kafka import IsolationLevel
        from confluent_kafka import TopicPartition as ClientPartition
        from confluent_kafka.admin import OffsetSpec

        try:
            metadata = self._client().list_topics(timeout=self.timeout_s)
        except Exception as e:  # noqa: BLE001 - unreachable: fall back to the checkpoints
            self._check_refused()
            logger.warning("Cannot get metadata from %s (%s); using checkpointed high watermarks",
                           self.config.get("bootstrap.servers"), e)
            return {}
        leaders: dict[TopicPartition, Optional[int]] = {}
        for tp in wanted:
            topic = metadata.topics.get(tp.topic)
            if topic is None or topic.error is not None or tp.partition not in topic.partitions:
                continue
            leader = topic.partitions[tp.partition].leader
            leaders[tp] = leader if leader is not None and leader >= 0 else None
        led = [tp for tp, leader in leaders.items() if leader is not None]
        states = {tp: PartitionState(leader, None) for tp, leader in leaders.items()}
        if not led:
            return states
        try:
            futures = self._client().list_offsets(
                {ClientPartition(tp.topic, tp.partition): OffsetSpec.latest() for tp in led},
                isolation_level=IsolationLevel.READ_UNCOMMITTED, request_timeout=self.timeout_s)
        except Exception as e:  # noqa: BLE001
            logger.warning("ListOffsets failed (%s); using checkpointed high watermarks", e)
            return states
        for client_tp, future in futures.items():
            tp = TopicPartition(client_tp.topic, client_tp.partition)
            try:
                states[tp] = PartitionState(leaders.get(tp), future.result().offset)
            except Exception as e:  # noqa: BLE001 - one partition's error (an election) is its own
                logger.info("No high watermark for %s from the cluster (%s)", tp, e)
        return states

    def close(self) -> None:
        self._admin = None
