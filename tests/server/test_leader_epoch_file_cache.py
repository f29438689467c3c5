"""Tests for server/epoch/leader_epoch_file_cache.py (port of LeaderEpochFileCache.scala),
backed by a real leader-epoch-checkpoint file."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.requests import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
from kafka_py.server.checkpoints.leader_epoch_checkpoint_file import LeaderEpochCheckpointFile
from kafka_py.server.epoch import EpochEntry, LeaderEpochFileCache

TP = TopicPartition("t", 0)
UNDEFINED = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


class Log:
    """Stands in for the log end offset the cache asks for."""

    def __init__(self) -> None:
        self.end_offset = 0


@pytest.fixture
def log():
    return Log()


@pytest.fixture
def checkpoint_path(tmp_path):
    partition_dir = tmp_path / "t-0"
    partition_dir.mkdir()
    return partition_dir / "leader-epoch-checkpoint"


@pytest.fixture
def cache(log, checkpoint_path):
    return LeaderEpochFileCache(TP, lambda: log.end_offset, LeaderEpochCheckpointFile(checkpoint_path))


def reload(log, checkpoint_path) -> LeaderEpochFileCache:
    return LeaderEpochFileCache(TP, lambda: log.end_offset, LeaderEpochCheckpointFile(checkpoint_path))


def entries(*pairs):
    return [EpochEntry(e, o) for e, o in pairs]


def test_empty_cache(cache):
    assert cache.latest_epoch is None
    assert cache.latest_entry is None
    assert cache.earliest_entry is None
    assert cache.previous_epoch is None
    assert not cache.non_empty
    assert cache.epoch_entries == []
    assert cache.end_offset_for(0) == UNDEFINED
    assert cache.end_offset_for(UNDEFINED_EPOCH) == UNDEFINED


def test_assign_and_latest_epoch_answers_log_end_offset(cache, log):
    cache.assign(2, 10)
    log.end_offset = 11
    assert cache.latest_epoch == 2
    assert cache.epoch_entries == entries((2, 10))
    assert cache.end_offset_for(2) == (2, 11)
    log.end_offset = 50
    assert cache.end_offset_for(2) == (2, 50)


def test_assign_flushes_checkpoint(cache, checkpoint_path):
    cache.assign(0, 0)
    cache.assign(3, 100)
    assert checkpoint_path.read_bytes() == b"0\n2\n0 0\n3 100\n"


def test_reassigning_same_epoch_at_later_offset_is_ignored(cache, checkpoint_path):
    cache.assign(2, 6)
    before = checkpoint_path.read_bytes()
    cache.assign(2, 7)
    cache.assign(2, 6)
    assert cache.epoch_entries == entries((2, 6))
    assert checkpoint_path.read_bytes() == before


def test_same_epoch_at_earlier_offset_replaces_entry(cache):
    cache.assign(5, 11)
    cache.assign(6, 12)
    cache.assign(7, 13)
    cache.assign(7, 12)
    # Epoch 6 started at 12 too, so it held no data and is dropped.
    assert cache.epoch_entries == entries((5, 11), (7, 12))
    assert cache.end_offset_for(5) == (5, 12)
    assert cache.end_offset_for(6) == (5, 12)


def test_new_epoch_at_same_offset_replaces_empty_epoch(cache):
    cache.assign(2, 9)
    cache.assign(3, 9)
    assert cache.epoch_entries == entries((3, 9))


def test_new_epoch_at_lower_offset_drops_conflicting_entries(cache):
    cache.assign(2, 6)
    cache.assign(3, 5)
    assert cache.epoch_entries == entries((3, 5))


def test_older_epoch_truncates_newer_entries(cache, log):
    cache.assign(1, 5)
    cache.assign(2, 6)
    cache.assign(1, 7)
    log.end_offset = 8
    assert cache.epoch_entries == entries((1, 7))
    assert cache.latest_epoch == 1
    assert cache.end_offset_for(1) == (1, 8)
    assert cache.end_offset_for(2) == UNDEFINED


def test_negative_epoch_or_offset_rejected(cache):
    with pytest.raises(ValueError, match="invalid partition leader epoch entry"):
        cache.assign(-1, 0)
    with pytest.raises(ValueError):
        cache.assign(0, -5)
    assert cache.epoch_entries == []


def test_end_offset_for_between_and_before_epochs(cache, log):
    cache.assign(0, 10)
    cache.assign(2, 13)
    cache.assign(4, 17)
    log.end_offset = 30
    # A missing epoch answers the largest known epoch below it, ending where the next starts.
    assert cache.end_offset_for(1) == (0, 13)
    assert cache.end_offset_for(2) == (2, 17)
    assert cache.end_offset_for(3) == (2, 17)
    assert cache.end_offset_for(4) == (4, 30)
    assert cache.end_offset_for(5) == UNDEFINED
    assert cache.end_offset_for(UNDEFINED_EPOCH) == UNDEFINED


def test_end_offset_for_epoch_before_first_answers_requested_epoch(cache):
    cache.assign(5, 11)
    cache.assign(6, 12)
    cache.assign(7, 13)
    assert cache.end_offset_for(4) == (4, 11)
    assert cache.end_offset_for(0) == (0, 11)


def test_previous_epoch(cache):
    assert cache.previous_epoch is None
    cache.assign(2, 10)
    assert cache.previous_epoch is None
    cache.assign(4, 15)
    assert cache.previous_epoch == 2
    cache.assign(10, 20)
    assert cache.previous_epoch == 4
    cache.truncate_from_end(18)
    assert cache.previous_epoch == 2


def test_truncate_from_end(cache, checkpoint_path):
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.assign(4, 11)
    cache.truncate_from_end(9)
    assert cache.epoch_entries == entries((2, 6), (3, 8))
    assert checkpoint_path.read_bytes() == b"0\n2\n2 6\n3 8\n"
    # On an epoch boundary the epoch starting there goes too.
    cache.truncate_from_end(8)
    assert cache.epoch_entries == entries((2, 6))


def test_truncate_from_end_past_everything_or_undefined_is_a_no_op(cache):
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.truncate_from_end(100)
    cache.truncate_from_end(UNDEFINED_EPOCH_OFFSET)
    assert cache.epoch_entries == entries((2, 6), (3, 8))


def test_truncate_from_end_clears_all(cache):
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.truncate_from_end(0)
    assert cache.epoch_entries == []


def test_truncate_from_start_moves_covering_epoch_up(cache, checkpoint_path):
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.assign(4, 11)
    cache.truncate_from_start(9)
    assert cache.epoch_entries == entries((3, 9), (4, 11))
    assert checkpoint_path.read_bytes() == b"0\n2\n3 9\n4 11\n"


def test_truncate_from_start_on_boundary_keeps_entry(cache):
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.truncate_from_start(8)
    assert cache.epoch_entries == entries((3, 8))


def test_truncate_from_start_before_first_is_a_no_op(cache, checkpoint_path):
    cache.assign(2, 6)
    cache.assign(3, 8)
    before = checkpoint_path.read_bytes()
    cache.truncate_from_start(5)
    cache.truncate_from_start(UNDEFINED_EPOCH_OFFSET)
    assert cache.epoch_entries == entries((2, 6), (3, 8))
    assert checkpoint_path.read_bytes() == before


def test_truncate_from_start_past_all_keeps_latest_epoch(cache):
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.truncate_from_start(100)
    assert cache.epoch_entries == entries((3, 100))


def test_truncations_on_empty_cache(cache):
    cache.truncate_from_start(7)
    cache.truncate_from_end(7)
    assert cache.epoch_entries == []


def test_clear_and_flush(cache, log, checkpoint_path):
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.clear_and_flush()
    assert cache.epoch_entries == []
    assert checkpoint_path.read_bytes() == b"0\n0\n"
    assert reload(log, checkpoint_path).epoch_entries == []


def test_clear_does_not_flush(cache, log, checkpoint_path):
    cache.assign(2, 6)
    cache.clear()
    assert cache.epoch_entries == []
    assert reload(log, checkpoint_path).epoch_entries == entries((2, 6))


def test_reload_from_file(cache, log, checkpoint_path):
    cache.assign(0, 0)
    cache.assign(1, 5)
    cache.assign(4, 9)
    cache.truncate_from_start(3)
    reloaded = reload(log, checkpoint_path)
    assert reloaded.epoch_entries == entries((0, 3), (1, 5), (4, 9))
    assert reloaded.earliest_entry == EpochEntry(0, 3)
    assert reloaded.latest_entry == EpochEntry(4, 9)


def test_reload_repairs_non_monotonic_checkpoint(log, checkpoint_path):
    # Entries that break monotonicity are resolved as if assigned in file order.
    checkpoint_path.write_bytes(b"0\n3\n1 5\n2 4\n3 10\n")
    reloaded = reload(log, checkpoint_path)
    assert reloaded.epoch_entries == entries((2, 4), (3, 10))


def test_followers_many_leader_changes(cache, log):
    for epoch, offset in [(0, 0), (1, 3), (2, 5), (2, 6), (5, 9)]:
        cache.assign(epoch, offset)
    log.end_offset = 12
    assert cache.epoch_entries == entries((0, 0), (1, 3), (2, 5), (5, 9))
    assert cache.end_offset_for(0) == (0, 3)
    assert cache.end_offset_for(1) == (1, 5)
    assert cache.end_offset_for(3) == (2, 9)
    assert cache.end_offset_for(5) == (5, 12)


# -- model-based ---------------------------------------------------------------------------


class Model:
    """An independent, deliberately naive statement of the cache's rules."""

    def __init__(self) -> None:
        self.entries: list[tuple[int, int]] = []

    def assign(self, epoch: int, offset: int) -> None:
        if self.entries and self.entries[-1][0] == epoch and offset >= self.entries[-1][1]:
            return
        self.entries = [(e, o) for e, o in self.entries if e < epoch and o < offset] + [(epoch, offset)]

    def truncate_from_end(self, end: int) -> None:
        if end >= 0:
            self.entries = [(e, o) for e, o in self.entries if o < end]

    def truncate_from_start(self, start: int) -> None:
        covered = [(e, o) for e, o in self.entries if o <= start]
        if covered:
            self.entries = [(covered[-1][0], start)] + [(e, o) for e, o in self.entries if o > start]

    def end_offset_for(self, epoch: int, leo: int) -> tuple[int, int]:
        if epoch == UNDEFINED_EPOCH or not self.entries:
            return UNDEFINED
        if self.entries[-1][0] == epoch:
            return epoch, leo
        later = [(e, o) for e, o in self.entries if e > epoch]
        if not later:
            return UNDEFINED
        earlier = [(e, o) for e, o in self.entries if e <= epoch]
        return (earlier[-1][0] if earlier else epoch), later[0][1]


ops = st.lists(
    st.one_of(
        st.tuples(st.just("assign"), st.integers(0, 12), st.integers(0, 60)),
        st.tuples(st.just("end"), st.integers(-1, 60)),
        st.tuples(st.just("start"), st.integers(-1, 60)),
        st.tuples(st.just("clear")),
    ),
    max_size=40,
)


@settings(max_examples=80, deadline=None)
@given(ops=ops, probes=st.lists(st.integers(-1, 14), min_size=1, max_size=5))
def test_cache_matches_model(tmp_path_factory, ops, probes):
    partition_dir = tmp_path_factory.mktemp("t-0")
    path = partition_dir / "leader-epoch-checkpoint"
    log = Log()
    log.end_offset = 61
    cache = reload(log, path)
    model = Model()
    for op in ops:
        if op[0] == "assign":
            cache.assign(op[1], op[2])
            model.assign(op[1], op[2])
        elif op[0] == "end":
            cache.truncate_from_end(op[1])
            model.truncate_from_end(op[1])
        elif op[0] == "start":
            cache.truncate_from_start(op[1])
            model.truncate_from_start(op[1])
        else:
            cache.clear_and_flush()
            model.entries = []
        got = [(e.epoch, e.start_offset) for e in cache.epoch_entries]
        assert got == model.entries
        # Strictly increasing in both epoch and offset.
        assert all(a[0] < b[0] and a[1] < b[1] for a, b in zip(got, got[1:]))
    for epoch in probes:
        assert cache.end_offset_for(epoch) == model.end_offset_for(epoch, log.end_offset)
    # Every change was flushed: a fresh cache from the file agrees.
    if ops:
        assert reload(log, path).epoch_entries == cache.epoch_entries


def test_a_write_of_the_entries_the_file_holds_is_skipped(log, checkpoint_path):
    cache = reload(log, checkpoint_path)
    cache.assign(0, 0)
    inode = checkpoint_path.stat().st_ino  # every write renames a new file over the old one
    cache = reload(log, checkpoint_path)
    cache.truncate_from_end(0, write=False)  # as a log that loads empty drops its epoch
    assert cache.epoch_entries == [] and checkpoint_path.stat().st_ino == inode
    assert reload(log, checkpoint_path).epoch_entries == entries((0, 0))
    cache.assign(0, 0)  # the same epoch again (a restart's LeaderAndIsr): the file holds it already
    assert checkpoint_path.stat().st_ino == inode
    cache.assign(1, 0)
    assert checkpoint_path.stat().st_ino != inode
    assert reload(log, checkpoint_path).epoch_entries == entries((1, 0))


def test_an_unwritten_truncation_is_written_by_flush_pending_or_before_an_append(log, checkpoint_path):
    for write_it in (LeaderEpochFileCache.flush_pending, LeaderEpochFileCache.write_unwritten_truncation):
        LeaderEpochCheckpointFile(checkpoint_path).write(entries((0, 0), (1, 10), (2, 20)))
        cache = reload(log, checkpoint_path)
        cache.truncate_from_end(20, write=False)
        cache.truncate_from_start(5, write=False)
        assert reload(log, checkpoint_path).epoch_entries == entries((0, 0), (1, 10), (2, 20))
        write_it(cache)
        assert reload(log, checkpoint_path).epoch_entries == entries((0, 5), (1, 10))


def test_an_unwritten_truncation_goes_with_the_next_change(log, checkpoint_path):
    cache = reload(log, checkpoint_path)
    for epoch, offset in [(0, 0), (1, 10), (2, 20)]:
        cache.assign(epoch, offset)
    cache = reload(log, checkpoint_path)
    cache.truncate_from_end(15, write=False)
    cache.assign(3, 15)
    assert reload(log, checkpoint_path).epoch_entries == entries((0, 0), (1, 10), (3, 15))
