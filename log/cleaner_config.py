"""Port of core/src/main/scala/kafka/log/CleanerConfig.scala.

The broker-wide settings of the log cleaner (the ``log.cleaner.*`` properties
that are not per-topic). Per-topic knobs (``min.cleanable.dirty.ratio``,
``delete.retention.ms``, compaction lags) live in LogConfig.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

__all__ = ["CleanerConfig"]

# Java's Double.MaxValue: Kafka's "no throttle" default for log.cleaner.io.max.bytes.per.second.
DOUBLE_MAX_VALUE = sys.float_info.max


@dataclass(frozen=True)
class CleanerConfig:
    """Kafka's CleanerConfig; defaults are that class's defaults (not the broker's property defaults).

    ``dedupe_buffer_size`` is shared by all ``num_threads`` threads, as is ``io_buffer_size``
    (each thread gets half of its share for reads and half for writes).
    """

    num_threads: int = 1
    dedupe_buffer_size: int = 4 * 1024 * 1024
    dedupe_buffer_load_factor: float = 0.9
    io_buffer_size: int = 1024 * 1024
    max_message_size: int = 32 * 1024 * 1024
    max_io_bytes_per_second: float = DOUBLE_MAX_VALUE
    back_off_ms: int = 15 * 1000
    enable_cleaner: bool = True
    hash_algorithm: str = "MD5"
