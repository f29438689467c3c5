"""Port of core/src/main/scala/kafka/coordinator/group/OffsetConfig.scala and the GroupConfig
case class of GroupCoordinator.scala (Kafka 2.8.2).

``OffsetConfig`` carries the ``offsets.*`` broker settings the GroupMetadataManager needs
(retention, how the __consumer_offsets topic is created, how commits are acknowledged);
``GroupConfig`` the ``group.*`` settings the GroupCoordinator checks joins against.
Both are built from a KafkaConfig with ``from_kafka_config``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.core.utils.java_limits import INT_MAX


@dataclass(frozen=True)
class OffsetConfig:
    """Offset management settings; field defaults are Kafka's."""

    max_metadata_size: int = 4096
    load_buffer_size: int = 5 * 1024 * 1024
    offsets_retention_ms: int = 24 * 60 * 60 * 1000
    offsets_retention_check_interval_ms: int = 600_000
    offsets_topic_num_partitions: int = 50
    offsets_topic_segment_bytes: int = 100 * 1024 * 1024
    offsets_topic_replication_factor: int = 3
    offsets_topic_compression_codec: CompressionType = CompressionType.NONE
    offset_commit_timeout_ms: int = 5000
    offset_commit_required_acks: int = -1

    @classmethod
    def from_kafka_config(cls, config: Any) -> "OffsetConfig":
        """GroupCoordinator.offsetConfig: offsets.retention.minutes becomes milliseconds here."""
        return cls(
            max_metadata_size=int(config.offset_metadata_max_size),
            load_buffer_size=int(config.offsets_load_buffer_size),
            offsets_retention_ms=int(config.offsets_retention_minutes) * 60 * 1000,
            offsets_retention_check_interval_ms=int(config.offsets_retention_check_interval_ms),
            offsets_topic_num_partitions=int(config.offsets_topic_partitions),
            offsets_topic_segment_bytes=int(config.offsets_topic_segment_bytes),
            offsets_topic_replication_factor=int(config.offsets_topic_replication_factor),
            offsets_topic_compression_codec=CompressionType(int(config.offsets_topic_compression_codec)),
            offset_commit_timeout_ms=int(config.offset_commit_timeout_ms),
            offset_commit_required_acks=int(config.offset_commit_required_acks),
        )


@dataclass(frozen=True)
class GroupConfig:
    """Group membership limits (GroupCoordinator.scala's GroupConfig); defaults are Kafka's."""

    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1_800_000
    group_max_size: int = INT_MAX
    group_initial_rebalance_delay_ms: int = 3000

    @classmethod
    def from_kafka_config(cls, config: Any) -> "GroupConfig":
        return cls(
            group_min_session_timeout_ms=int(config.group_min_session_timeout_ms),
            group_max_session_timeout_ms=int(config.group_max_session_timeout_ms),
            group_max_size=int(config.group_max_size),
            group_initial_rebalance_delay_ms=int(config.group_initial_rebalance_delay),
        )


__all__ = ["GroupConfig", "OffsetConfig"]
