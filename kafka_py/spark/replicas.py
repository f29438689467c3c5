"""Which replica of a partition a read takes its records from, when several brokers' log dirs are given.

No Kafka counterpart. A cluster keeps a partition on several brokers; given the log dirs of
several brokers, the ``kafka-log`` source reads each partition once, from one of them. Each
log dir says which broker it belongs to in its ``meta.properties`` (``broker.id``, written by
KafkaServer at startup; server/broker_metadata_checkpoint.py reads it), so copies of
one partition in dirs of different brokers are replicas, and two in dirs of one broker are a
mistake in the paths given.

The choice: the leader when the cluster was asked (``kafka.bootstrap.servers``), else the
replica whose ``replication-offset-checkpoint`` holds the highest high watermark, then the one
with the longest log. A replica whose log ends before the offset a read must reach is never
chosen while another reaches it, so the tail of a range never comes from a follower that is
behind; and one whose log starts after the range's start is passed over for one that has it.
"""
from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Optional, Sequence

from kafka_py.server.broker_metadata_checkpoint import BrokerMetadataCheckpoint, RawMetaProperties

if TYPE_CHECKING:
    from kafka_py.spark.log_dir_planner import PartitionLog

logger = logging.getLogger(__name__)

META_PROPERTIES = "meta.properties"


def read_broker_id(log_dir: str) -> Optional[int]:
    """The ``broker.id`` of a log dir's meta.properties, or None when it has none."""
    path = os.path.join(log_dir, META_PROPERTIES)
    if not os.path.exists(path):
        # A copy of a log dir, or one a test wrote: nothing to say (and nothing to warn about).
        return None
    try:
        props = BrokerMetadataCheckpoint(path).read()
    except Exception as e:  # noqa: BLE001 - an unreadable file only loses the broker's name
        logger.warning("Cannot read %s (%s); its partitions belong to no known broker", path, e)
        return None
    if not props:
        return None
    try:
        return RawMetaProperties(props).broker_id
    except Exception as e:  # noqa: BLE001
        logger.warning("%s has no valid broker.id (%s)", path, e)
        return None


def _preference(replica: "PartitionLog", leader: Optional[int]) -> tuple:
    hw = replica.checkpointed_high_watermark
    return (0 if leader is not None and replica.broker_id == leader else 1,
            -(hw if hw is not None else -1),
            -replica.log_end_offset,
            replica.broker_id if replica.broker_id is not None else -1)


def choose_replica(replicas: Sequence["PartitionLog"], leader: Optional[int] = None,
                   from_offset: Optional[int] = None, until_offset: Optional[int] = None) -> "PartitionLog":
    """The replica to read ``[from_offset, until_offset)`` from (see the module docstring)."""
    if len(replicas) == 1:
        return replicas[0]
    ordered = sorted(replicas, key=lambda r: _preference(r, leader))
    reaching = [r for r in ordered if until_offset is None or r.log_end_offset >= until_offset]
    if not reaching:
        # None reaches the end wanted: the longest log, cut by the caller.
        return max(ordered, key=lambda r: r.log_end_offset)
    holding = [r for r in reaching if from_offset is None or r.log_start_offset <= from_offset]
    return (holding or reaching)[0]


def highest_checkpointed_high_watermark(replicas: Sequence["PartitionLog"]) -> Optional[int]:
    """The highest high watermark any replica checkpointed: every record below it was
    committed (a follower's lags the leader's, and the leader's lags its memory)."""
    known = [r.checkpointed_high_watermark for r in replicas if r.checkpointed_high_watermark is not None]
    return max(known) if known else None
