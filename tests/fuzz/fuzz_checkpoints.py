"""Fuzz target: the small text files a log dir keeps: an offset checkpoint
(recovery-point-offset-checkpoint, log-start-offset-checkpoint, replication-offset-checkpoint,
cleaner-offset-checkpoint), a partition's leader-epoch-checkpoint, and meta.properties. The
first byte picks the file; the rest is its content.

Contract: a checkpoint reads, or its read raises KafkaStorageException naming the file (its
log dir goes offline, as in Kafka); meta.properties reads, or the dir is listed as offline,
or a property that does not parse raises RuntimeError or KafkaException naming it (startup
stops with that line).
"""
from __future__ import annotations

import os
from typing import Iterable

from tests.fuzz.harness import scratch_dir

from kafka_py.clients.common.errors import KafkaException, KafkaStorageException
from kafka_py.server.broker_metadata_checkpoint import (
    check_zk_meta_properties_version,
    get_broker_metadata_and_offline_dirs,
)
from kafka_py.server.checkpoints.leader_epoch_checkpoint_file import LeaderEpochCheckpointFile
from kafka_py.server.checkpoints.offset_checkpoint_file import OffsetCheckpointFile

_ROOT = scratch_dir("checkpoints")
_PARTITION_DIR = os.path.join(_ROOT, "topic-0")
os.makedirs(_PARTITION_DIR, exist_ok=True)
_OFFSETS = os.path.join(_ROOT, "recovery-point-offset-checkpoint")
_EPOCHS = os.path.join(_PARTITION_DIR, "leader-epoch-checkpoint")
_META = os.path.join(_ROOT, "meta.properties")


def one_input(data: bytes) -> None:
    if not data:
        return
    kind = data[0] % 3
    path = (_OFFSETS, _EPOCHS, _META)[kind]
    with open(path, "wb") as f:
        f.write(data[1:])
    if kind == 0:
        try:
            OffsetCheckpointFile(path).read()
        except KafkaStorageException:
            pass
    elif kind == 1:
        try:
            LeaderEpochCheckpointFile(path).read()
        except KafkaStorageException:
            pass
    else:
        try:
            raw, offline = get_broker_metadata_and_offline_dirs([_ROOT], ignore_missing=True)
            if not offline:
                check_zk_meta_properties_version(raw)
                raw.broker_id, raw.node_id, raw.cluster_id
        except (RuntimeError, KafkaException):
            pass


def seeds() -> Iterable[tuple[str, bytes]]:
    from kafka_py.clients.common.topic_partition import TopicPartition
    from kafka_py.server.broker_metadata_checkpoint import BrokerMetadataCheckpoint
    from kafka_py.server.epoch.leader_epoch_file_cache import EpochEntry

    directory = scratch_dir("checkpoint-seeds")
    offsets = os.path.join(directory, "offsets")
    OffsetCheckpointFile(offsets).write({TopicPartition("topic", 0): 42, TopicPartition("other.topic", 3): 7})
    os.makedirs(os.path.join(directory, "p-0"))
    epochs = os.path.join(directory, "p-0", "leader-epoch-checkpoint")
    LeaderEpochCheckpointFile(epochs).write([EpochEntry(0, 0), EpochEntry(3, 120)])
    meta = os.path.join(directory, "meta.properties")
    BrokerMetadataCheckpoint(meta).write({"version": "0", "broker.id": "0", "cluster.id": "fuzz-cluster-id"})
    for kind, path in enumerate((offsets, epochs, meta)):
        with open(path, "rb") as f:
            yield os.path.basename(path), bytes([kind]) + f.read()
    yield "meta-v1", bytes([2]) + b"version=1\nnode.id=3\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\n"
