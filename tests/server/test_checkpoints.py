"""Tests for server/checkpoints (ports of CheckpointFile, OffsetCheckpointFile,
LeaderEpochCheckpointFile): Kafka's exact text format, atomic replacement,
and clear errors on malformed files."""
from __future__ import annotations

import os
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.errors import KafkaStorageException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.checkpoints.checkpoint_file import CheckpointFile, split_whitespace
from kafka_py.server.checkpoints.leader_epoch_checkpoint_file import (
    LEADER_EPOCH_CHECKPOINT_FILENAME,
    EpochEntry,
    LeaderEpochCheckpointFile,
)
from kafka_py.server.checkpoints.offset_checkpoint_file import (
    LazyOffsetCheckpoints,
    OffsetCheckpointFile,
)


def test_offset_checkpoint_exact_text_format(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    checkpoint = OffsetCheckpointFile(path)
    checkpoint.write({TopicPartition("foo", 0): 42, TopicPartition("bar-baz", 3): 0})
    assert path.read_bytes() == b"0\n2\nfoo 0 42\nbar-baz 3 0\n"


def test_offset_checkpoint_round_trip(tmp_path):
    checkpoint = OffsetCheckpointFile(tmp_path / "replication-offset-checkpoint")
    offsets = {TopicPartition(f"topic.{i % 3}", i): i * 1_000_000_007 for i in range(20)}
    checkpoint.write(offsets)
    assert checkpoint.read() == offsets
    # A second instance on the same file (as after a restart) sees the same map.
    assert OffsetCheckpointFile(tmp_path / "replication-offset-checkpoint").read() == offsets


def test_offset_checkpoint_rewrite_replaces_content(tmp_path):
    checkpoint = OffsetCheckpointFile(tmp_path / "cp")
    checkpoint.write({TopicPartition("a", 0): 1, TopicPartition("a", 1): 2})
    checkpoint.write({TopicPartition("b", 0): 7})
    assert checkpoint.read() == {TopicPartition("b", 0): 7}
    checkpoint.write({})
    assert (tmp_path / "cp").read_bytes() == b"0\n0\n"
    assert checkpoint.read() == {}


def test_leader_epoch_checkpoint_exact_text_format(tmp_path):
    partition_dir = tmp_path / "t-0"
    partition_dir.mkdir()
    path = LeaderEpochCheckpointFile.new_file(partition_dir)
    assert os.path.basename(path) == LEADER_EPOCH_CHECKPOINT_FILENAME == "leader-epoch-checkpoint"
    checkpoint = LeaderEpochCheckpointFile(path)
    entries = [EpochEntry(0, 0), EpochEntry(1, 250), EpochEntry(5, 2**40)]
    checkpoint.write(entries)
    assert (partition_dir / "leader-epoch-checkpoint").read_bytes() == b"0\n3\n0 0\n1 250\n5 1099511627776\n"
    assert checkpoint.read() == entries


def test_constructor_creates_missing_file_and_empty_reads_empty(tmp_path):
    path = tmp_path / "log-start-offset-checkpoint"
    checkpoint = OffsetCheckpointFile(path)
    assert path.exists() and path.read_bytes() == b""
    assert checkpoint.read() == {}


def test_constructor_does_not_truncate_existing_file(tmp_path):
    path = tmp_path / "cp"
    path.write_bytes(b"0\n1\nt 0 9\n")
    assert OffsetCheckpointFile(path).read() == {TopicPartition("t", 0): 9}


def test_missing_file_reads_empty(tmp_path):
    path = tmp_path / "cp"
    checkpoint = OffsetCheckpointFile(path)
    path.unlink()
    assert checkpoint.read() == {}


def test_version_line_only_reads_empty(tmp_path):
    # Kafka stops at a missing count line rather than failing.
    path = tmp_path / "cp"
    path.write_bytes(b"0\n")
    assert OffsetCheckpointFile(path).read() == {}


def test_reads_windows_line_endings_and_extra_inner_whitespace(tmp_path):
    path = tmp_path / "cp"
    path.write_bytes(b"0\r\n2\r\nt 0 5\r\nu\t\t1   6  \r\n")
    assert OffsetCheckpointFile(path).read() == {TopicPartition("t", 0): 5, TopicPartition("u", 1): 6}


@pytest.mark.parametrize(
    "content, line_number, bad_line",
    [
        (b"0\n1\nt 0\n", 3, "t 0"),  # missing field
        (b"0\n1\nt 0 5 6\n", 3, "t 0 5 6"),  # extra field
        (b"0\n1\nt x 5\n", 3, "t x 5"),  # partition not a number
        (b"0\n1\nt 0 5x\n", 3, "t 0 5x"),  # offset not a number
        (b"0\n1\n t 0 5\n", 3, " t 0 5"),  # leading whitespace makes an empty first field (as Java's split)
        (b"0\n2\nt 0 5\n\n", 4, ""),  # blank line in the entries
        (b"0\n1\nt 2147483648 5\n", 3, "t 2147483648 5"),  # partition beyond int32
        (b"0\n1\nt 0 9223372036854775808\n", 3, "t 0 9223372036854775808"),  # offset beyond int64
        (b"x\n1\nt 0 5\n", 1, "x"),  # version not a number
        (b"0\none\nt 0 5\n", 2, "one"),  # count not a number
        (b"0\n1_0\n", 2, "1_0"),  # Python-only number syntax is still malformed
    ],
)
def test_malformed_offset_checkpoint_names_file_and_line(tmp_path, content, line_number, bad_line):
    path = tmp_path / "cp"
    path.write_bytes(content)
    with pytest.raises(KafkaStorageException) as info:
        OffsetCheckpointFile(path).read()
    message = str(info.value)
    assert "Malformed line in checkpoint file" in message
    assert str(path) in message
    assert f"line {line_number}: '{bad_line}'" in message


def test_malformed_leader_epoch_checkpoint(tmp_path):
    path = tmp_path / "leader-epoch-checkpoint"
    path.write_bytes(b"0\n2\n0 0\n1 2 3\n")
    with pytest.raises(KafkaStorageException, match=r"Malformed line .* line 4: '1 2 3'"):
        LeaderEpochCheckpointFile(path).read()


def test_entry_count_mismatch_is_an_error(tmp_path):
    path = tmp_path / "cp"
    path.write_bytes(b"0\n3\nt 0 5\nt 1 6\n")
    with pytest.raises(KafkaStorageException, match=r"Expected 3 entries in checkpoint file .*found only 2"):
        OffsetCheckpointFile(path).read()


def test_unknown_version_is_an_error(tmp_path):
    path = tmp_path / "cp"
    path.write_bytes(b"1\n0\n")
    with pytest.raises(KafkaStorageException, match=r"Unrecognized version of the checkpoint file .*: 1"):
        OffsetCheckpointFile(path).read()


def test_invalid_utf8_is_an_error(tmp_path):
    path = tmp_path / "cp"
    path.write_bytes(b"0\n1\n\xff 0 5\n")
    with pytest.raises(KafkaStorageException, match="UTF-8"):
        OffsetCheckpointFile(path).read()


def test_read_error_reported_to_log_dir_failure_channel(tmp_path):
    reported = []

    class Channel:
        def maybe_add_offline_log_dir(self, log_dir, msg, e):
            reported.append((log_dir, msg, e))

    partition_dir = tmp_path / "t-0"
    partition_dir.mkdir()
    path = partition_dir / "leader-epoch-checkpoint"
    path.write_bytes(b"0\n1\ngarbage\n")
    with pytest.raises(KafkaStorageException):
        LeaderEpochCheckpointFile(path, Channel()).read()
    # The leader epoch checkpoint lives in a partition dir: its log dir is one level up.
    assert [(d, m) for d, m, _ in reported] == [
        (str(tmp_path), f"Error while reading checkpoint file {path}")
    ]
    assert isinstance(reported[0][2], OSError)


def test_write_error_raises_storage_exception_and_reports(tmp_path):
    reported = []

    class Channel:
        def maybe_add_offline_log_dir(self, log_dir, msg, e):
            reported.append(log_dir)

    path = tmp_path / "cp"
    checkpoint = OffsetCheckpointFile(path, Channel())
    # A directory squatting on the temp file name makes the write fail.
    (tmp_path / "cp.tmp").mkdir()
    with pytest.raises(KafkaStorageException, match="Error while writing to checkpoint file"):
        checkpoint.write({TopicPartition("t", 0): 1})
    assert reported == [str(tmp_path)]
    assert path.read_bytes() == b""


def test_atomic_write_leaves_no_tmp_file(tmp_path):
    checkpoint = OffsetCheckpointFile(tmp_path / "cp")
    for i in range(3):
        checkpoint.write({TopicPartition("t", i): i})
    assert sorted(os.listdir(tmp_path)) == ["cp"]


def test_stale_tmp_file_is_overwritten(tmp_path):
    # A crash between writing the temp file and the rename leaves it behind; the
    # real checkpoint is untouched and the next write replaces the leftover.
    path = tmp_path / "cp"
    path.write_bytes(b"0\n1\nt 0 1\n")
    (tmp_path / "cp.tmp").write_bytes(b"0\n1\nt 0 9999\nhalf-writ")
    checkpoint = OffsetCheckpointFile(path)
    assert checkpoint.read() == {TopicPartition("t", 0): 1}
    checkpoint.write({TopicPartition("t", 0): 2})
    assert checkpoint.read() == {TopicPartition("t", 0): 2}
    assert not (tmp_path / "cp.tmp").exists()


def test_concurrent_writers_never_tear_the_file(tmp_path):
    checkpoint = OffsetCheckpointFile(tmp_path / "cp")
    maps = [{TopicPartition("t", p): w * 1000 + p for p in range(50)} for w in range(4)]
    errors = []

    def writer(offsets):
        try:
            for _ in range(20):
                checkpoint.write(offsets)
                assert checkpoint.read() in maps
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(m,)) for m in maps]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert checkpoint.read() in maps


def test_generic_checkpoint_file_with_custom_formatter(tmp_path):
    class Words:
        def to_line(self, entry):
            return entry

        def from_line(self, line):
            return line if line.isalpha() else None

    checkpoint = CheckpointFile(tmp_path / "words", 3, Words())
    checkpoint.write(["alpha", "beta"])
    assert (tmp_path / "words").read_bytes() == b"3\n2\nalpha\nbeta\n"
    assert checkpoint.read() == ["alpha", "beta"]


def test_lazy_offset_checkpoints(tmp_path):
    d1, d2 = tmp_path / "d1", tmp_path / "d2"
    d1.mkdir()
    d2.mkdir()
    c1 = OffsetCheckpointFile(d1 / "cp")
    c2 = OffsetCheckpointFile(d2 / "cp")
    c1.write({TopicPartition("t", 0): 5})
    c2.write({TopicPartition("t", 1): 6})
    lazy = LazyOffsetCheckpoints({str(d1): c1, str(d2): c2})
    assert lazy.fetch(str(d1), TopicPartition("t", 0)) == 5
    assert lazy.fetch(str(d1), TopicPartition("t", 1)) is None
    # Loaded once: later writes are not seen, as with Kafka's lazy val.
    c2.write({TopicPartition("t", 1): 7})
    assert lazy.fetch(str(d2), TopicPartition("t", 1)) == 7
    c2.write({TopicPartition("t", 1): 8})
    assert lazy.fetch(str(d2), TopicPartition("t", 1)) == 7
    with pytest.raises(ValueError, match="No checkpoint file for log dir"):
        lazy.fetch(str(tmp_path), TopicPartition("t", 0))


def test_split_whitespace_matches_java():
    assert split_whitespace("a b") == ["a", "b"]
    assert split_whitespace("a b  ") == ["a", "b"]
    assert split_whitespace(" a") == ["", "a"]
    assert split_whitespace("") == [""]
    assert split_whitespace("a\x0bb\x0cc") == ["a", "b", "c"]
    # Non-ASCII spaces are not whitespace to java.util.regex's \s.
    assert split_whitespace("a\u00a0b") == ["a\u00a0b"]


topics = st.text(
    alphabet=st.characters(whitelist_categories=("Lu", "Ll", "Nd"), whitelist_characters="._-"),
    min_size=1,
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(
    offsets=st.dictionaries(
        st.builds(TopicPartition, topics, st.integers(0, 2**31 - 1)),
        st.integers(-(2**63), 2**63 - 1),
        max_size=20,
    )
)
def test_offset_checkpoint_round_trip_property(tmp_path_factory, offsets):
    path = tmp_path_factory.mktemp("cp") / "cp"
    checkpoint = OffsetCheckpointFile(path)
    checkpoint.write(offsets)
    assert checkpoint.read() == offsets
    lines = path.read_text("utf-8").split("\n")
    assert lines[0] == "0" and lines[1] == str(len(offsets)) and lines[-1] == ""


def test_a_checkpoint_created_empty_reads_its_writes_however_written(tmp_path):
    # A checkpoint the constructor created reads as empty without opening the file, until
    # it is written, one by one or together with others.
    from kafka_py.server.checkpoints.checkpoint_file import SYNCFS_MIN_FILES, write_checkpoints_together

    alone = LeaderEpochCheckpointFile(tmp_path / "alone")
    assert alone.read() == []
    alone.write([EpochEntry(3, 7)])
    assert alone.read() == [EpochEntry(3, 7)]
    many = [LeaderEpochCheckpointFile(tmp_path / f"p-{i}") for i in range(SYNCFS_MIN_FILES + 1)]
    assert all(c.read() == [] for c in many)
    write_checkpoints_together([(c.checkpoint, c.checkpoint.encode([EpochEntry(i, i)])) for i, c in enumerate(many)])
    assert [c.read() for c in many] == [[EpochEntry(i, i)] for i in range(len(many))]
    assert LeaderEpochCheckpointFile(tmp_path / "p-1").read() == [EpochEntry(1, 1)]


def test_leader_epoch_checkpoint_is_created_by_its_first_write(tmp_path):
    path = tmp_path / "leader-epoch-checkpoint"
    checkpoint = LeaderEpochCheckpointFile(path)
    assert not path.exists()
    assert checkpoint.read() == []
    checkpoint.write([EpochEntry(2, 40)])
    assert sorted(os.listdir(tmp_path)) == ["leader-epoch-checkpoint"]
    assert path.read_bytes() == b"0\n1\n2 40\n"
    assert LeaderEpochCheckpointFile(path).read() == [EpochEntry(2, 40)]
