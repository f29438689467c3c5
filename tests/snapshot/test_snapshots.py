"""The snapshot files of KIP-630 (Kafka 3.0's SnapshotsTest, FileRawSnapshotTest,
SnapshotWriterReaderTest): names, a write frozen by an atomic rename, the header and footer
control batches, reading back what was written, and an unfinished ``.part`` file."""
import os

import pytest

from kafka_py.raft.control_record_utils import (
    SNAPSHOT_FOOTER_TYPE,
    SNAPSHOT_HEADER_TYPE,
    control_record_type_id,
    deserialized_snapshot_footer_record,
    deserialized_snapshot_header_record,
)
from kafka_py.raft.internals.string_serde import StringSerde
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.raft.snapshot import snapshots
from kafka_py.raft.snapshot.file_raw_snapshot_reader import FileRawSnapshotReader
from kafka_py.raft.snapshot.file_raw_snapshot_writer import FileRawSnapshotWriter
from kafka_py.raft.snapshot.snapshot_reader import SnapshotReader
from kafka_py.raft.snapshot.snapshot_writer import SnapshotWriter
from kafka_py.clients.common.utils.time import MockTime


def test_file_names_round_trip():
    snapshot_id = OffsetAndEpoch(42, 3)
    path = snapshots.snapshot_path("/d", snapshot_id)
    assert os.path.basename(path) == "00000000000000000042-0000000003.checkpoint"
    parsed = snapshots.parse(path)
    assert parsed.snapshot_id == snapshot_id and not parsed.partial and not parsed.deleted
    deleted = snapshots.parse(snapshots.delete_rename(path, snapshot_id))
    assert deleted.deleted and deleted.snapshot_id == snapshot_id
    partial = snapshots.parse("/d/00000000000000000042-0000000003-123.checkpoint.part")
    assert partial.partial and partial.snapshot_id == snapshot_id
    assert snapshots.parse("/d/00000000000000000000.log") is None
    assert snapshots.parse("/d/leader-epoch-checkpoint") is None
    assert snapshots.parse("/d/garbage.checkpoint") is None


def test_raw_writer_is_invisible_until_frozen_and_read_only_after(tmp_path):
    snapshot_id = OffsetAndEpoch(10, 2)
    writer = FileRawSnapshotWriter.create(str(tmp_path), snapshot_id)
    writer.append(b"\x01\x02\x03")
    writer.append(b"\x04")
    assert writer.size_in_bytes() == 4
    final = snapshots.snapshot_path(str(tmp_path), snapshot_id)
    assert not os.path.exists(final)
    assert [n for n in os.listdir(tmp_path) if n.endswith(snapshots.PARTIAL_SUFFIX)]
    writer.freeze()
    writer.close()
    assert os.path.exists(final)
    assert not [n for n in os.listdir(tmp_path) if n.endswith(snapshots.PARTIAL_SUFFIX)]
    assert not os.access(final, os.W_OK) or os.geteuid() == 0
    with pytest.raises(RuntimeError):
        writer.append(b"x")
    reader = FileRawSnapshotReader.open(str(tmp_path), snapshot_id)
    assert reader.size_in_bytes() == 4
    assert reader.slice(1, 2) == b"\x02\x03"
    assert reader.slice(3, 100) == b"\x04"
    reader.close()


def test_raw_writer_closed_without_freeze_leaves_nothing(tmp_path):
    writer = FileRawSnapshotWriter.create(str(tmp_path), OffsetAndEpoch(5, 1))
    writer.append(b"abc")
    writer.close()
    assert os.listdir(tmp_path) == []


def test_snapshot_writer_and_reader_round_trip(tmp_path):
    snapshot_id = OffsetAndEpoch(100, 4)
    time = MockTime()
    batches = [[f"r{i}-{j}" for j in range(i % 5 + 1)] for i in range(40)]
    writer = SnapshotWriter.create_with_header(lambda: FileRawSnapshotWriter.create(str(tmp_path), snapshot_id),
                                               256, time, 123456, CompressionType.NONE, StringSerde())
    for records in batches:
        writer.append(records)
    writer.freeze()
    writer.close()
    assert writer.last_contained_log_offset() == 99 and writer.last_contained_log_epoch() == 4

    raw = FileRawSnapshotReader.open(str(tmp_path), snapshot_id)
    file_batches = list(raw.records().batches())
    # header first, footer last, both control batches; the data batches in between, small
    # enough for the 256-byte limit, so the records span several batches
    assert file_batches[0].is_control_batch and file_batches[-1].is_control_batch
    header_record = next(iter(file_batches[0].records()))
    assert control_record_type_id(header_record) == SNAPSHOT_HEADER_TYPE
    assert deserialized_snapshot_header_record(header_record).last_contained_log_timestamp == 123456
    footer_record = next(iter(file_batches[-1].records()))
    assert control_record_type_id(footer_record) == SNAPSHOT_FOOTER_TYPE
    assert deserialized_snapshot_footer_record(footer_record).version == 0
    assert len(file_batches) > 3
    assert all(b.partition_leader_epoch == 4 for b in file_batches)
    offsets = [b.base_offset for b in file_batches]
    assert offsets == sorted(offsets) and offsets[0] == 0
    for b in file_batches:
        b.ensure_valid()

    reader = SnapshotReader.of(raw, StringSerde(), 1 << 20)
    assert reader.snapshot_id() == snapshot_id
    read = [record for batch in reader for record in batch.records]
    assert read == [r for records in batches for r in records]
    raw.close()


def test_snapshot_writer_refuses_appends_after_freeze(tmp_path):
    writer = SnapshotWriter.create_with_header(
        lambda: FileRawSnapshotWriter.create(str(tmp_path), OffsetAndEpoch(3, 1)), 1024, MockTime(), 0,
        CompressionType.NONE, StringSerde())
    writer.append(["a"])
    writer.freeze()
    with pytest.raises(RuntimeError):
        writer.append(["b"])
    writer.close()


def test_create_with_header_passes_on_no_writer():
    assert SnapshotWriter.create_with_header(lambda: None, 1024, MockTime(), 0, CompressionType.NONE,
                                             StringSerde()) is None
