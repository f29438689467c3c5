"""OffsetIndex against Kafka's on-disk format and a simple sorted-list model."""
from __future__ import annotations

import bisect
import os
import random
import struct
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.errors import InvalidOffsetException
from kafka_py.log.abstract_index import CorruptIndexException, IndexOffsetOverflowException
from kafka_py.log.offset_index import OffsetIndex, OffsetPosition

BASE = 45


def _open(tmp_path, name="00000000000000000045.index", base=BASE, max_size=30 * 8, **kw) -> OffsetIndex:
    return OffsetIndex(tmp_path / name, base, max_size, **kw)


def _model_lookup(entries: list[tuple[int, int]], target: int) -> OffsetPosition:
    offsets = [o for o, _ in entries]
    i = bisect.bisect_right(offsets, target) - 1
    return OffsetPosition(BASE, 0) if i < 0 else OffsetPosition(*entries[i])


# Sorted distinct offsets >= BASE, paired with increasing positions.
entries_strategy = st.lists(st.integers(min_value=BASE, max_value=BASE + 10_000), unique=True,
                            max_size=40).map(sorted).map(lambda offs: [(o, i * 37) for i, o in enumerate(offs)])


def test_new_index_is_preallocated_to_whole_entries(tmp_path):
    idx = _open(tmp_path, max_size=100)
    assert os.path.getsize(idx.file) == 96
    assert idx.length == 96
    assert idx.max_entries == 12
    assert idx.entries == 0
    assert idx.last_offset == BASE
    assert idx.lookup(1000) == OffsetPosition(BASE, 0)
    idx.close()


def test_invalid_max_index_size_for_new_file(tmp_path):
    with pytest.raises(ValueError, match="Invalid max index size"):
        OffsetIndex(tmp_path / "x.index", 0, 7)
    assert not (tmp_path / "x.index").exists()


def test_file_bytes_are_kafka_format(tmp_path):
    idx = _open(tmp_path)
    pairs = [(BASE, 0), (BASE + 3, 4150), (BASE + 70_000, 2**31 - 1)]
    for offset, position in pairs:
        idx.append(offset, position)
    idx.close()
    expected = b"".join(struct.pack(">ii", o - BASE, p) for o, p in pairs)
    assert (tmp_path / "00000000000000000045.index").read_bytes() == expected


def test_reopen_reads_entries_from_disk(tmp_path):
    idx = _open(tmp_path)
    pairs = [(BASE + i * 5, i * 100) for i in range(10)]
    for o, p in pairs:
        idx.append(o, p)
    idx.close()

    reopened = _open(tmp_path)
    assert reopened.entries == 10
    assert reopened.max_entries == 10  # trimmed on close: exactly full
    assert reopened.is_full()
    assert reopened.last_offset == pairs[-1][0]
    assert [reopened.entry(i) for i in range(10)] == [OffsetPosition(o, p) for o, p in pairs]
    reopened.sanity_check()
    # Becoming active again: room to grow, entries kept.
    assert reopened.resize(30 * 8) is True
    assert reopened.max_entries == 30 and reopened.entries == 10
    reopened.append(BASE + 1000, 5000)
    assert reopened.lookup(BASE + 2000) == OffsetPosition(BASE + 1000, 5000)
    reopened.close()


def test_reopen_of_untrimmed_file_counts_every_slot(tmp_path):
    # Kafka assumes an existing file is all entries; an unclean shutdown leaves zeroed slots
    # that recovery must rebuild.
    idx = _open(tmp_path, max_size=80)
    idx.append(BASE + 1, 10)
    idx.flush()
    idx.close_handler()
    reopened = _open(tmp_path, max_size=80)
    assert reopened.entries == 10
    assert reopened.entry(0) == OffsetPosition(BASE + 1, 10)
    assert reopened.entry(9) == OffsetPosition(BASE, 0)
    reopened.close_handler()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=entries_strategy, targets=st.lists(st.integers(min_value=0, max_value=BASE + 11_000), max_size=30))
def test_lookup_matches_model(tmp_path, entries, targets):
    path = tmp_path / f"{uuid.uuid4().hex}.index"
    idx = OffsetIndex(path, BASE, 64 * 8)
    for o, p in entries:
        idx.append(o, p)
    for target in targets + [o for o, _ in entries]:
        assert idx.lookup(target) == _model_lookup(entries, target)
    idx.close()
    reopened = OffsetIndex(path, BASE, 64 * 8)
    for target in targets:
        assert reopened.lookup(target) == _model_lookup(entries, target)
    reopened.delete_if_exists()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=entries_strategy, truncate_at=st.integers(min_value=0, max_value=BASE + 11_000))
def test_truncate_to_matches_model(tmp_path, entries, truncate_at):
    idx = OffsetIndex(tmp_path / f"{uuid.uuid4().hex}.index", BASE, 64 * 8)
    for o, p in entries:
        idx.append(o, p)
    idx.truncate_to(truncate_at)
    kept = [(o, p) for o, p in entries if o < truncate_at]
    assert idx.entries == len(kept)
    assert [idx.entry(i) for i in range(idx.entries)] == [OffsetPosition(o, p) for o, p in kept]
    assert idx.last_offset == (kept[-1][0] if kept else BASE)
    # Appends continue after the truncation point.
    idx.append(max([o for o, _ in kept], default=BASE - 1) + 1, 99_999)
    idx.delete_if_exists()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=entries_strategy, start=st.integers(min_value=0, max_value=2000),
       size=st.integers(min_value=0, max_value=2000))
def test_fetch_upper_bound_offset_matches_model(tmp_path, entries, start, size):
    idx = OffsetIndex(tmp_path / f"{uuid.uuid4().hex}.index", BASE, 64 * 8)
    for o, p in entries:
        idx.append(o, p)
    found = idx.fetch_upper_bound_offset(OffsetPosition(0, start), size)
    # Like Kafka's, the answer is *an* entry at or past the end of the fetch range, not always
    # the first: an entry exactly at the end of the range may be passed over for the next one.
    upper = [OffsetPosition(o, p) for o, p in entries if p >= start + size]
    strictly_after = [e for e in upper if e.position > start + size]
    if found is None:
        assert not strictly_after
    else:
        assert found in upper[:2]
        assert found == upper[0] or upper[0].position == start + size
    idx.delete_if_exists()


def test_large_index_lookups_cross_warm_and_cold_sections(tmp_path):
    # 3000 entries: more than the 1024-entry warm section, so both search branches run.
    idx = OffsetIndex(tmp_path / "big.index", BASE, 3000 * 8)
    entries = [(BASE + 3 * i, 11 * i) for i in range(3000)]
    for o, p in entries:
        idx.append(o, p)
    rng = random.Random(7)
    for target in [BASE - 1, BASE, BASE + 8999, BASE + 9000] + [rng.randrange(BASE, BASE + 9100) for _ in range(500)]:
        assert idx.lookup(target) == _model_lookup(entries, target)
    idx.close()


def test_append_rejects_non_increasing_offsets(tmp_path):
    idx = _open(tmp_path)
    idx.append(BASE + 10, 0)
    with pytest.raises(InvalidOffsetException):
        idx.append(BASE + 10, 10)
    with pytest.raises(InvalidOffsetException):
        idx.append(BASE + 9, 10)
    assert idx.entries == 1
    idx.close()


def test_append_rejects_offsets_outside_relative_range(tmp_path):
    idx = _open(tmp_path)
    with pytest.raises(IndexOffsetOverflowException):
        idx.append(BASE - 1, 0)
    with pytest.raises(IndexOffsetOverflowException):
        idx.append(BASE + 2**31, 0)
    assert idx.entries == 0
    assert idx.can_append_offset(BASE + 2**31 - 1)
    assert not idx.can_append_offset(BASE + 2**31)
    idx.append(BASE + 2**31 - 1, 0)
    assert idx.lookup(BASE + 2**40) == OffsetPosition(BASE + 2**31 - 1, 0)
    idx.close()


def test_full_index_rejects_appends(tmp_path):
    idx = _open(tmp_path, max_size=4 * 8)
    for i in range(4):
        assert not idx.is_full()
        idx.append(BASE + i, i)
    assert idx.is_full()
    with pytest.raises(ValueError, match="full index"):
        idx.append(BASE + 10, 10)
    idx.close()


def test_trim_resize_and_reset(tmp_path):
    idx = _open(tmp_path, max_size=10 * 8)
    for i in range(3):
        idx.append(BASE + i, i * 10)
    idx.trim_to_valid_size()
    assert idx.length == 24 and os.path.getsize(idx.file) == 24
    assert idx.is_full()
    assert idx.resize(24) is False
    with pytest.raises(ValueError):
        idx.resize(8)  # would drop written entries
    assert idx.resize(10 * 8 + 5) is True
    assert idx.length == 80 and idx.max_entries == 10 and idx.entries == 3
    assert idx.lookup(BASE + 2) == OffsetPosition(BASE + 2, 20)
    idx.reset()
    assert idx.entries == 0 and idx.length == 80
    assert idx.lookup(BASE + 2) == OffsetPosition(BASE, 0)
    idx.append(BASE, 0)
    idx.close()
    assert os.path.getsize(idx.file) == 8


def test_zero_length_file(tmp_path):
    path = tmp_path / "00000000000000000045.index"
    path.write_bytes(b"")
    idx = OffsetIndex(path, BASE, 10 * 8)
    assert idx.entries == 0 and idx.max_entries == 0 and idx.length == 0
    assert idx.is_full()
    assert idx.lookup(BASE + 5) == OffsetPosition(BASE, 0)
    assert idx.fetch_upper_bound_offset(OffsetPosition(BASE, 0), 100) is None
    idx.truncate_to(BASE)
    idx.sanity_check()
    idx.flush()
    with pytest.raises(ValueError):
        idx.append(BASE, 0)
    assert idx.resize(10 * 8)
    idx.append(BASE + 1, 7)
    assert idx.lookup(BASE + 5) == OffsetPosition(BASE + 1, 7)
    idx.close()


def test_sanity_check_length_not_multiple_of_entry_size(tmp_path):
    path = tmp_path / "00000000000000000045.index"
    path.write_bytes(struct.pack(">ii", 1, 0) + b"\x00" * 9)
    idx = OffsetIndex(path, BASE, 80)
    assert idx.entries == 2
    with pytest.raises(CorruptIndexException, match="multiple of 8"):
        idx.sanity_check()
    idx.close_handler()


def test_sanity_check_last_offset_below_base(tmp_path):
    path = tmp_path / "00000000000000000045.index"
    path.write_bytes(struct.pack(">ii", 1, 0) + struct.pack(">ii", -1, 10))
    idx = OffsetIndex(path, BASE, 80)
    with pytest.raises(CorruptIndexException, match="less than the base offset"):
        idx.sanity_check()
    idx.close_handler()


def test_entry_out_of_range(tmp_path):
    idx = _open(tmp_path)
    idx.append(BASE, 0)
    assert idx.entry(0) == OffsetPosition(BASE, 0)
    with pytest.raises(ValueError):
        idx.entry(1)
    idx.close()


def test_read_only_index(tmp_path):
    idx = _open(tmp_path)
    idx.append(BASE + 2, 40)
    idx.close()
    ro = _open(tmp_path, writable=False)
    assert ro.lookup(BASE + 9) == OffsetPosition(BASE + 2, 40)
    ro.sanity_check()
    ro.close_handler()


def test_rename_delete_and_parent_dir(tmp_path):
    idx = _open(tmp_path)
    idx.append(BASE, 0)
    target = tmp_path / "00000000000000000045.index.deleted"
    idx.rename_to(target)
    assert idx.file == str(target) and target.exists()
    assert idx.lookup(BASE) == OffsetPosition(BASE, 0)
    assert idx.delete_if_exists() is True
    assert not target.exists()
    assert idx.delete_if_exists() is False
    other = tmp_path / "moved"
    idx.update_parent_dir(other)
    assert idx.file == str(other / "00000000000000000045.index.deleted")


def test_an_append_on_a_full_file_system_raises_enospc_instead_of_a_sigbus(tmp_path):
    """The preallocated index is sparse: a store into a page the file system has no block for
    would be a SIGBUS that kills the broker without a word. An append that needs a new page on
    a full tmpfs raises OSError (ENOSPC) instead, and the index keeps what it had."""
    import errno
    import subprocess

    from tests.integration.test_log_dir_failure import mount_tmpfs, unmount

    mount = tmp_path / "small-tmpfs"
    mount_tmpfs(mount)  # TMPFS_SIZE; skips where mounting is not permitted
    try:
        index = OffsetIndex(mount / "00000000000000000000.index", base_offset=0, max_index_size=1 << 20)
        per_page = os.sysconf("SC_PAGE_SIZE") // 8
        for i in range(per_page):  # the first page, backed before anything fills the disk
            index.append(i, i * 100)
        # fill the rest of the file system
        subprocess.run(["dd", "if=/dev/zero", f"of={mount / 'filler'}", "bs=1M"], capture_output=True)
        with pytest.raises(OSError) as raised:
            index.append(per_page, per_page * 100)
        assert raised.value.errno == errno.ENOSPC
        assert index.entries == per_page
        assert index.lookup(per_page - 1) == OffsetPosition(per_page - 1, (per_page - 1) * 100)
        index.close_handler()
    finally:
        unmount(mount)
