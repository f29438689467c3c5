"""Port of raft/src/main/java/org/apache/kafka/raft/metadata/MetaLogRaftShim.java (Kafka 2.8.2),
passing on Kafka 3.0.0's snapshots.

Lets the QuorumController, written against MetaLogManager, run over the raft client: writes
become the client's scheduled appends (the offset of the last record, or Long.MAX_VALUE when
the epoch is no longer led, an offset that never commits), and the client's listener calls
become the MetaLogListener's: each committed batch is handed over as its records with the
batch's last offset, a claimed epoch as this node being the new leader, a resigned epoch as a
renounce. Each batch goes with its epoch, append time and size (``handle_commit_batch``), a
snapshot to load as ``handle_snapshot``, and ``create_snapshot`` is the client's. The
controller's own ``renounce`` resigns the raft leadership (3.x's ``RaftClient.resign``).

The records of the metadata log are ApiMessageAndVersion in MetadataRecordSerde's layout;
``RaftMetadataRecordSerde`` is that serde as the raft client's RecordSerde.
"""
from __future__ import annotations

import logging
from typing import Optional, Sequence

from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.metadata_record_serde import MetadataRecordSerde
from kafka_py.metadata.metalog.meta_log_leader import MetaLogLeader
from kafka_py.metadata.metalog.meta_log_listener import MetaLogListener
from kafka_py.metadata.metalog.meta_log_manager import MetaLogManager
from kafka_py.raft.batch_reader import BatchReader
from kafka_py.raft.raft_client import Listener, RaftClient
from kafka_py.raft.record_serde import ObjectSerializationCache, RecordSerde
from kafka_py.raft.snapshot.snapshot_reader import SnapshotReader
from kafka_py.raft.snapshot.snapshot_writer import SnapshotWriter

logger = logging.getLogger(__name__)


class RaftMetadataRecordSerde(RecordSerde[ApiMessageAndVersion]):
    """MetadataRecordSerde as a RecordSerde: a record is encoded once, in ``record_size``, and
    the bytes are kept in the serialization cache for ``write``."""

    def __init__(self) -> None:
        self._serde = MetadataRecordSerde()

    def record_size(self, data: ApiMessageAndVersion, serialization_cache: ObjectSerializationCache) -> int:
        encoded = self._serde.serialize(data)
        serialization_cache[id(data)] = (data, encoded)
        return len(encoded)

    def write(self, data: ApiMessageAndVersion, serialization_cache: ObjectSerializationCache,
              out: bytearray) -> None:
        cached = serialization_cache.get(id(data))
        # The cached entry holds the record too, so its id cannot have been reused.
        out += cached[1] if cached is not None and cached[0] is data else self._serde.serialize(data)

    def read(self, data: memoryview, size: int) -> ApiMessageAndVersion:
        return self._serde.read(data[:size])


class ListenerShim(Listener[ApiMessageAndVersion]):
    def __init__(self, listener: MetaLogListener, node_id: int) -> None:
        self.listener = listener
        self._node_id = node_id

    def handle_commit(self, reader: BatchReader[ApiMessageAndVersion]) -> None:
        # A follower's reader decodes from the log bytes here, on the raft io thread (as in Kafka).
        try:
            while reader.has_next():
                batch = reader.next()
                self.listener.handle_commit_batch(batch.last_offset(), batch.epoch, batch.append_timestamp,
                                                  batch.size_in_bytes, [record.message for record in batch.records])
        finally:
            reader.close()
        # Known once the reader is closed: past any control batch the reader skipped.
        last_offset = reader.last_offset()
        if last_offset is not None:
            self.listener.handle_commits_read_to(last_offset)

    def handle_snapshot(self, reader: SnapshotReader[ApiMessageAndVersion]) -> None:
        self.listener.handle_snapshot(reader)

    def handle_claim(self, epoch: int) -> None:
        self.listener.handle_new_leader(MetaLogLeader(self._node_id, epoch))

    def handle_resign(self, epoch: int) -> None:
        self.listener.handle_renounce(epoch)

    def __repr__(self) -> str:
        return f"ListenerShim(listener={self.listener})"


class MetaLogRaftShim(MetaLogManager):
    def __init__(self, client: RaftClient[ApiMessageAndVersion], node_id: int) -> None:
        self._client = client
        self._node_id = node_id

    def initialize(self) -> None:
        # The RaftManager initializes the raft client.
        pass

    def register(self, listener: MetaLogListener) -> None:
        self._client.register(ListenerShim(listener, self._node_id))

    def schedule_atomic_write(self, epoch: int, batch: Sequence[ApiMessageAndVersion]) -> int:
        return self._write(epoch, batch, True)

    def schedule_write(self, epoch: int, batch: Sequence[ApiMessageAndVersion]) -> int:
        return self._write(epoch, batch, False)

    def _write(self, epoch: int, batch: Sequence[ApiMessageAndVersion], is_atomic: bool) -> int:
        if is_atomic:
            result = self._client.schedule_atomic_append(int(epoch), list(batch))
        else:
            result = self._client.schedule_append(int(epoch), list(batch))
        if result is None:
            raise ValueError(f"Unable to allocate a buffer for the schedule write operation: epoch {epoch}, "
                             f"batch {list(batch)})")
        return result

    def renounce(self, epoch: int) -> None:
        # Kafka 2.8.2's shim throws UnsupportedOperationException here, so a controller that
        # renounced after an unexpected error stayed inactive while its raft leadership went
        # on: a one-voter quorum never had an active controller again. The raft client resigns
        # instead (Kafka 3.x's resign); the next election, which this node may win, makes a
        # controller that reloads the committed state.
        self._client.resign(epoch)

    def leader(self) -> MetaLogLeader:
        leader_and_epoch = self._client.leader_and_epoch()
        leader_id = leader_and_epoch.leader_id
        return MetaLogLeader(-1 if leader_id is None else leader_id, leader_and_epoch.epoch)

    def node_id(self) -> int:
        return self._node_id

    def create_snapshot(self, committed_offset: int, committed_epoch: int,
                        last_contained_log_time: int) -> Optional[SnapshotWriter[ApiMessageAndVersion]]:
        return self._client.create_snapshot(committed_offset, committed_epoch, last_contained_log_time)
