"""TimeIndex against Kafka's on-disk format and a simple model."""
from __future__ import annotations

import bisect
import os
import struct
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.errors import InvalidOffsetException
from kafka_py.log.abstract_index import CorruptIndexException
from kafka_py.log.time_index import NO_TIMESTAMP, TimeIndex, TimestampOffset

BASE = 100
NAME = "00000000000000000100.timeindex"


def _open(tmp_path, max_size=30 * 12, **kw) -> TimeIndex:
    return TimeIndex(tmp_path / NAME, BASE, max_size, **kw)


def _model_lookup(entries: list[tuple[int, int]], target: int) -> TimestampOffset:
    timestamps = [t for t, _ in entries]
    i = bisect.bisect_right(timestamps, target) - 1
    return TimestampOffset(NO_TIMESTAMP, BASE) if i < 0 else TimestampOffset(*entries[i])


# Strictly increasing timestamps paired with strictly increasing offsets >= BASE.
entries_strategy = st.lists(st.tuples(st.integers(0, 10**12), st.integers(BASE, BASE + 10**6)), max_size=25).map(
    lambda pairs: list(zip(sorted({t for t, _ in pairs}), sorted({o for _, o in pairs})))
)


def test_new_time_index_is_preallocated(tmp_path):
    idx = _open(tmp_path, max_size=100)
    assert os.path.getsize(idx.file) == 96
    assert idx.max_entries == 8
    assert idx.entries == 0
    assert idx.last_entry == TimestampOffset(NO_TIMESTAMP, BASE)
    assert idx.lookup(10**12) == TimestampOffset(NO_TIMESTAMP, BASE)
    idx.close()


def test_file_bytes_are_kafka_format(tmp_path):
    idx = _open(tmp_path)
    pairs = [(1_600_000_000_000, BASE), (1_600_000_000_005, BASE + 7), (2**62, BASE + 2**31 - 1)]
    for ts, off in pairs:
        idx.maybe_append(ts, off)
    idx.close()
    expected = b"".join(struct.pack(">qi", ts, off - BASE) for ts, off in pairs)
    assert (tmp_path / NAME).read_bytes() == expected


def test_maybe_append_ignores_timestamps_that_do_not_grow(tmp_path):
    idx = _open(tmp_path)
    idx.maybe_append(NO_TIMESTAMP, BASE)  # batches without timestamps never get an entry
    assert idx.entries == 0
    idx.maybe_append(1000, BASE + 1)
    idx.maybe_append(1000, BASE + 1)  # the same entry again, as on roll/close: ignored
    idx.maybe_append(1000, BASE + 5)  # same timestamp, later offset: ignored
    assert idx.entries == 1
    assert idx.last_entry == TimestampOffset(1000, BASE + 1)
    with pytest.raises(RuntimeError):
        idx.maybe_append(999, BASE + 6)
    with pytest.raises(InvalidOffsetException):
        idx.maybe_append(2000, BASE)
    idx.maybe_append(2000, BASE + 9)
    assert idx.entries == 2
    assert idx.last_entry == TimestampOffset(2000, BASE + 9)
    idx.close()


def test_last_slot_is_reserved_for_roll(tmp_path):
    idx = _open(tmp_path, max_size=3 * 12)
    idx.maybe_append(10, BASE)
    assert not idx.is_full()
    idx.maybe_append(20, BASE + 1)
    assert idx.is_full()  # 2 of 3 slots used: the last is held back
    with pytest.raises(ValueError, match="full time index"):
        idx.maybe_append(30, BASE + 2)
    idx.maybe_append(30, BASE + 2, skip_full_check=True)
    assert idx.entries == 3
    assert idx.lookup(35) == TimestampOffset(30, BASE + 2)
    idx.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=entries_strategy, targets=st.lists(st.integers(-5, 10**12 + 5), max_size=30))
def test_lookup_matches_model_and_survives_reopen(tmp_path, entries, targets):
    path = tmp_path / f"{uuid.uuid4().hex}.timeindex"
    idx = TimeIndex(path, BASE, 64 * 12)
    for ts, off in entries:
        idx.maybe_append(ts, off)
    assert idx.entries == len(entries)
    for target in targets + [t for t, _ in entries]:
        assert idx.lookup(target) == _model_lookup(entries, target)
    idx.close()
    reopened = TimeIndex(path, BASE, 64 * 12)
    assert reopened.entries == len(entries)
    assert reopened.last_entry == (TimestampOffset(*entries[-1]) if entries else TimestampOffset(NO_TIMESTAMP, BASE))
    for target in targets:
        assert reopened.lookup(target) == _model_lookup(entries, target)
    reopened.sanity_check()
    reopened.delete_if_exists()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=entries_strategy, truncate_at=st.integers(0, BASE + 10**6 + 5))
def test_truncate_to_matches_model(tmp_path, entries, truncate_at):
    idx = TimeIndex(tmp_path / f"{uuid.uuid4().hex}.timeindex", BASE, 64 * 12)
    for ts, off in entries:
        idx.maybe_append(ts, off)
    idx.truncate_to(truncate_at)
    kept = [(t, o) for t, o in entries if o < truncate_at]
    assert [idx.entry(i) for i in range(idx.entries)] == [TimestampOffset(t, o) for t, o in kept]
    assert idx.last_entry == (TimestampOffset(*kept[-1]) if kept else TimestampOffset(NO_TIMESTAMP, BASE))
    idx.delete_if_exists()


def test_truncate_and_resize(tmp_path):
    idx = _open(tmp_path, max_size=10 * 12)
    for i in range(4):
        idx.maybe_append(1000 + i, BASE + 2 * i)
    idx.trim_to_valid_size()
    assert os.path.getsize(idx.file) == 48
    assert idx.resize(10 * 12) is True
    assert idx.last_entry == TimestampOffset(1003, BASE + 6)
    idx.truncate()
    assert idx.entries == 0 and idx.last_entry == TimestampOffset(NO_TIMESTAMP, BASE)
    idx.maybe_append(5, BASE)
    idx.reset()
    assert idx.entries == 0 and idx.length == 120
    idx.close()
    assert os.path.getsize(idx.file) == 0


def test_reopen_finds_last_entry_from_file(tmp_path):
    idx = _open(tmp_path)
    idx.maybe_append(500, BASE + 3)
    idx.maybe_append(900, BASE + 8)
    idx.close()
    reopened = _open(tmp_path)
    assert reopened.entries == 2
    assert reopened.last_entry == TimestampOffset(900, BASE + 8)
    assert reopened.entry(0) == TimestampOffset(500, BASE + 3)
    with pytest.raises(ValueError):
        reopened.entry(2)
    reopened.close_handler()


def test_zero_length_file(tmp_path):
    (tmp_path / NAME).write_bytes(b"")
    idx = _open(tmp_path)
    assert idx.entries == 0 and idx.max_entries == 0
    assert idx.last_entry == TimestampOffset(NO_TIMESTAMP, BASE)
    assert idx.lookup(5) == TimestampOffset(NO_TIMESTAMP, BASE)
    idx.sanity_check()
    assert idx.resize(5 * 12)
    idx.maybe_append(5, BASE + 1)
    assert idx.lookup(6) == TimestampOffset(5, BASE + 1)
    idx.close()


def test_sanity_check_length_not_multiple_of_entry_size(tmp_path):
    (tmp_path / NAME).write_bytes(struct.pack(">qi", 10, 1) + b"\x01\x02\x03")
    idx = _open(tmp_path)
    with pytest.raises(CorruptIndexException, match="multiple of 12"):
        idx.sanity_check()
    idx.close_handler()


def test_sanity_check_timestamps_going_backwards(tmp_path):
    (tmp_path / NAME).write_bytes(struct.pack(">qi", 10, 1) + struct.pack(">qi", 5, 2))
    idx = _open(tmp_path)
    with pytest.raises(CorruptIndexException, match="less than the first timestamp"):
        idx.sanity_check()
    idx.close_handler()


def test_sanity_check_offset_below_base(tmp_path):
    (tmp_path / NAME).write_bytes(struct.pack(">qi", 10, 1) + struct.pack(">qi", 20, -5))
    idx = _open(tmp_path)
    with pytest.raises(CorruptIndexException, match="less than the first offset"):
        idx.sanity_check()
    idx.close_handler()
