"""Crash recovery of a Log: torn tails, garbage, damaged or missing indexes, stray files.

A "crash" is ``Log.close_handlers()``: file handles go away without the trims,
index sealing and producer snapshot of a clean close, leaving the files as a
killed broker would (the page cache holds everything written).
"""
from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.errors import KafkaStorageException
from kafka_py.log import log_files
from kafka_py.log.log import Log
from kafka_py.clients.common.utils.time import MockTime
from tests.log.log_test_helpers import config, make_records, read_all, segment_files

CFG = dict(segment_size=1024, max_index_size=4096, index_interval=128, retention_ms=-1)


def open_log(dir, clean=False, recovery_point=0, **kwargs) -> Log:
    return Log(str(dir), config(**{**CFG, **kwargs.pop("cfg", {})}), time=MockTime(), had_clean_shutdown=clean,
               recovery_point=recovery_point, **kwargs)


def fill(log: Log, n: int, seed: int = 0, epoch_every: int = 0):
    """Append ``n`` batches of 1-4 records; returns [(first offset, last offset, values)] per batch."""
    rnd = random.Random(seed)
    batches = []
    for i in range(n):
        values = [b"%d-%d-" % (i, j) + bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 40)))
                  for j in range(rnd.randrange(1, 5))]
        epoch = i // epoch_every if epoch_every else 0
        info = log.append_as_leader(make_records(values), leader_epoch=epoch)
        batches.append((info.first_offset.message_offset, info.last_offset, values))
    return batches


def entries_of(batches):
    return [(first + j, None, v) for first, _, values in batches for j, v in enumerate(values)]


def crash(log: Log) -> None:
    log.close_handlers()


def batch_extents(path: str):
    """(start, end) byte ranges of the batches in a segment file, read from the length fields."""
    data = open(path, "rb").read()
    out, pos = [], 0
    while pos + 12 <= len(data):
        size = int.from_bytes(data[pos + 8:pos + 12], "big") + 12
        out.append((pos, pos + size))
        pos += size
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(min_value=0.0, max_value=1.0), flushed_active=st.booleans())
def test_torn_active_segment_keeps_every_complete_batch(tmp_path_factory, cut, flushed_active):
    dir = tmp_path_factory.mktemp("torn") / "t-0"
    log = open_log(dir)
    batches = fill(log, 40, seed=1)
    active = log.active_segment
    assert log.number_of_segments > 2
    # after a roll Kafka has flushed the old segments; start recovery there (or from 0)
    recovery_point = active.base_offset if flushed_active else 0
    path = active.log.file
    crash(log)
    size = os.path.getsize(path)
    cut_at = int(size * cut)
    os.truncate(path, cut_at)

    complete = batch_extents_before(path, cut_at)
    kept_in_active = len(complete)
    kept_bytes = sum(end - start for start, end in complete)
    survivors = [b for b in batches if b[0] < active.base_offset]
    survivors += [b for b in batches if b[0] >= active.base_offset][:kept_in_active]

    log = open_log(dir, recovery_point=recovery_point)
    expected_end = survivors[-1][1] + 1 if survivors else 0
    assert log.log_end_offset == expected_end
    assert read_all(log) == entries_of(survivors)
    assert os.path.getsize(path) == kept_bytes
    # offsets continue right after the last complete batch
    info = log.append_as_leader(make_records([b"after"]), leader_epoch=0)
    assert info.first_offset.message_offset == expected_end
    assert read_all(log)[-1] == (expected_end, None, b"after")
    log.close()


def batch_extents_before(path, cut_at):
    return [(s, e) for s, e in batch_extents(path) if e <= cut_at]


@pytest.mark.parametrize("garbage", [
    b"\x00" * 5,                                   # shorter than a length field
    b"\x00" * 100,                                 # a zero length: not a batch
    os.urandom(300),                               # noise
    (0).to_bytes(8, "big") + (10**6).to_bytes(4, "big") + b"\x00" * 60,   # a length past the end
])
def test_garbage_after_the_last_batch_is_dropped(tmp_path, garbage):
    dir = tmp_path / "t-0"
    log = open_log(dir)
    batches = fill(log, 10, seed=2)
    path = log.active_segment.log.file
    good = os.path.getsize(path)
    crash(log)
    with open(path, "ab") as f:
        f.write(garbage)
    log = open_log(dir)
    assert read_all(log) == entries_of(batches)
    assert os.path.getsize(path) == good
    assert log.log_end_offset == batches[-1][1] + 1
    log.close()


def test_batch_with_bad_crc_after_valid_ones_is_dropped(tmp_path):
    dir = tmp_path / "t-0"
    log = open_log(dir)
    batches = fill(log, 5, seed=3)
    path = log.active_segment.log.file
    good = os.path.getsize(path)
    crash(log)
    bad = bytearray(make_records([b"bad"], base_offset=batches[-1][1] + 1).buffer)
    bad[-1] ^= 0xFF
    with open(path, "ab") as f:
        f.write(bad)
    log = open_log(dir)
    assert read_all(log) == entries_of(batches) and os.path.getsize(path) == good
    log.close()


@pytest.mark.parametrize("back", [1, 1000])
def test_batch_whose_offsets_go_back_is_dropped(tmp_path, back):
    """A valid batch whose offsets precede the batch before it (or the segment's base) is no
    continuation of the log: recovery cuts the segment there, as at any invalid batch."""
    dir = tmp_path / "t-0"
    log = open_log(dir)
    batches = fill(log, 5, seed=4, epoch_every=2)
    path = log.active_segment.log.file
    good = os.path.getsize(path)
    crash(log)
    behind = make_records([b"behind"], base_offset=batches[-1][1] + 1 - back, partition_leader_epoch=9)
    with open(path, "ab") as f:
        f.write(bytes(behind.buffer))
    log = open_log(dir)
    assert read_all(log) == entries_of(batches) and os.path.getsize(path) == good
    assert log.latest_epoch == 2
    log.close()


def test_batch_beyond_the_segments_relative_offsets_refuses_the_log(tmp_path):
    """Offsets a segment's 4-byte relative offsets cannot hold: Kafka splits such a segment (a
    repair for pre-v2 message formats, not ported); the log is refused naming the file."""
    dir = tmp_path / "t-0"
    log = open_log(dir)
    fill(log, 2, seed=5)
    path = log.active_segment.log.file
    crash(log)
    with open(path, "ab") as f:
        f.write(bytes(make_records([b"far"], base_offset=1 << 34).buffer))
    with pytest.raises(KafkaStorageException, match="00000000000000000000.log"):
        open_log(dir)


def test_corruption_in_an_old_unflushed_segment_drops_everything_after_it(tmp_path):
    dir = tmp_path / "t-0"
    log = open_log(dir)
    batches = fill(log, 40, seed=4)
    segments = list(log.log_segments)
    victim = segments[1]
    crash(log)
    extents = batch_extents(victim.log.file)
    start, _ = extents[2]
    with open(victim.log.file, "r+b") as f:  # flip a byte inside batch #2's CRC-covered bytes
        f.seek(start + 30)
        b = f.read(1)
        f.seek(start + 30)
        f.write(bytes([b[0] ^ 0x55]))
    log = open_log(dir, recovery_point=0)
    survivors = [b for b in batches if b[0] < victim.base_offset]
    survivors += [b for b in batches if b[0] >= victim.base_offset][:2]
    assert read_all(log) == entries_of(survivors)
    assert [s.base_offset for s in log.log_segments] == [segments[0].base_offset, victim.base_offset]
    assert segment_files(str(dir), ".log") == [os.path.basename(segments[0].log.file),
                                               os.path.basename(victim.log.file)]
    assert log.log_end_offset == survivors[-1][1] + 1
    log.close()


@pytest.mark.parametrize("which", [".index", ".timeindex", "both"])
def test_missing_indexes_of_an_old_segment_are_rebuilt_even_after_clean_shutdown(tmp_path, which):
    dir = tmp_path / "t-0"
    log = open_log(dir)
    now = 10**12
    values = []
    for i in range(30):
        log.append_as_leader(make_records([b"v%03d" % i + b"." * 40], timestamp=now + i), leader_epoch=0)
        values.append(b"v%03d" % i + b"." * 40)
    first = log.log_segments[0]
    entries = [first.offset_index.entry(n) for n in range(first.offset_index.entries)]
    log.close()
    for suffix in ([".index", ".timeindex"] if which == "both" else [which]):
        os.remove(os.path.join(str(dir), log_files.filename_prefix_from_offset(0) + suffix))
    log = open_log(dir, clean=True, recovery_point=30)
    seg = log.log_segments[0]
    assert os.path.exists(seg.lazy_offset_index.file) and os.path.exists(seg.lazy_time_index.file)
    assert [seg.offset_index.entry(n) for n in range(seg.offset_index.entries)] == entries
    assert [v for _, _, v in read_all(log)] == values
    assert log.fetch_offset_by_timestamp(now + 3).offset == 3
    assert seg.largest_timestamp == now + seg.read_next_offset() - 1
    log.close()


def test_corrupt_offset_index_is_rebuilt(tmp_path):
    dir = tmp_path / "t-0"
    log = open_log(dir)
    batches = fill(log, 30, seed=5)
    log.close()
    index = os.path.join(str(dir), log_files.filename_prefix_from_offset(0) + ".index")
    with open(index, "wb") as f:
        f.write(b"\xff" * 64)  # relative offsets of -1: entries before the base offset
    log = open_log(dir, clean=True, recovery_point=10**6)
    assert read_all(log) == entries_of(batches)
    seg = log.log_segments[0]
    assert all(seg.offset_index.entry(n).offset >= 0 for n in range(seg.offset_index.entries))
    log.close()


def test_index_of_odd_length_is_rebuilt(tmp_path):
    dir = tmp_path / "t-0"
    log = open_log(dir)
    batches = fill(log, 30, seed=6)
    log.close()
    index = os.path.join(str(dir), log_files.filename_prefix_from_offset(0) + ".timeindex")
    with open(index, "ab") as f:
        f.write(b"\x01\x02\x03")
    log = open_log(dir, clean=True, recovery_point=10**6)
    assert read_all(log) == entries_of(batches)
    assert os.path.getsize(index) % 12 == 0
    log.close()


def test_stray_and_temporary_files_are_cleaned_up_at_load(tmp_path):
    dir = tmp_path / "t-0"
    log = open_log(dir)
    batches = fill(log, 30, seed=7)
    log.close()
    d = str(dir)
    strays = ["00000000000000000999.log.deleted", "00000000000000000999.index.deleted",
              "00000000000000000500.log.cleaned", "leader-epoch-checkpoint.tmp",
              "00000000000000007777.index", "00000000000000007777.timeindex"]
    for name in strays:
        with open(os.path.join(d, name), "wb") as f:
            f.write(b"junk")
    log = open_log(dir, clean=True, recovery_point=10**6)
    left = set(os.listdir(d))
    assert not left & set(strays)
    assert read_all(log) == entries_of(batches)
    log.close()


def test_interrupted_swap_is_completed(tmp_path):
    """A .swap log (a replacement built by cleaning/splitting) replaces the segment it covers."""
    dir = tmp_path / "t-0"
    log = open_log(dir)
    fill(log, 30, seed=8)
    first = log.log_segments[0]
    base, next_base = first.base_offset, log.log_segments[1].base_offset
    log.close()
    d = str(dir)
    # the replacement: the same offsets with different values
    with open(log_files.log_file(d, base, ".swap"), "wb") as f:
        for offset in range(base, next_base):
            f.write(make_records([b"swapped-%d" % offset], base_offset=offset).buffer.tobytes())
    log = open_log(dir, clean=True, recovery_point=10**6)
    assert not any(name.endswith(".swap") for name in os.listdir(d))
    head = read_all(log)[: next_base - base]
    assert [v for _, _, v in head] == [b"swapped-%d" % o for o in range(base, next_base)]
    log.close()


def test_leader_epochs_past_the_recovered_end_are_dropped(tmp_path):
    dir = tmp_path / "t-0"
    log = open_log(dir)
    fill(log, 20, seed=9, epoch_every=5)  # epochs 0..3
    assert log.latest_epoch == 3
    active = log.active_segment
    path = active.log.file
    crash(log)
    os.truncate(path, 0)  # the whole active segment is lost
    log = open_log(dir)
    assert log.log_end_offset == active.base_offset
    last_epoch = log.latest_epoch
    assert last_epoch is not None and last_epoch <= 3
    for entry in log.leader_epoch_cache.epoch_entries:
        assert entry.start_offset < log.log_end_offset
    log.close()


def test_producer_state_after_crash_covers_only_surviving_batches(tmp_path):
    dir = tmp_path / "t-0"
    log = open_log(dir)
    pid = dict(producer_id=99, producer_epoch=0)
    log.append_as_leader(make_records([b"a"], base_sequence=0, **pid), leader_epoch=0)
    log.append_as_leader(make_records([b"b"], base_sequence=1, **pid), leader_epoch=0)
    path = log.active_segment.log.file
    crash(log)
    extents = batch_extents(path)
    os.truncate(path, extents[1][0] + 20)  # tear the second batch
    log = open_log(dir)
    assert log.log_end_offset == 1
    dup = log.append_as_leader(make_records([b"a"], base_sequence=0, **pid), leader_epoch=0)
    assert dup.last_offset == 0 and log.log_end_offset == 1     # still known: a duplicate
    retry = log.append_as_leader(make_records([b"b"], base_sequence=1, **pid), leader_epoch=0)
    assert retry.first_offset.message_offset == 1 and log.log_end_offset == 2  # lost: written again
    log.close()


def test_log_start_offset_beyond_surviving_data_restarts_the_log(tmp_path):
    dir = tmp_path / "t-0"
    log = open_log(dir)
    fill(log, 10, seed=10)
    leo = log.log_end_offset
    log.close()
    for name in os.listdir(str(dir)):
        if name.endswith((".log", ".index", ".timeindex")):
            os.remove(os.path.join(str(dir), name))
    log = open_log(dir, log_start_offset=leo, recovery_point=leo)
    assert log.log_start_offset == leo == log.log_end_offset
    info = log.append_as_leader(make_records([b"x"]), leader_epoch=0)
    assert info.first_offset.message_offset == leo
    log.close()


def test_recovery_point_after_clean_and_unclean_load(tmp_path):
    dir = tmp_path / "t-0"
    log = open_log(dir)
    fill(log, 10, seed=11)
    leo = log.log_end_offset
    log.close()
    clean = open_log(dir, clean=True, recovery_point=0)
    assert clean.recovery_point == leo  # a clean shutdown flushed everything
    clean.close()
    unclean = open_log(dir, clean=False, recovery_point=3)
    assert unclean.recovery_point == 3  # only a flush may advance it
    unclean.close()


def test_leader_epochs_dropped_while_loading_are_written_before_the_next_append(tmp_path):
    # Loading drops the entries at or past the log's end without writing the file (a restart
    # drops them again); records appended under an older epoch must not be left behind an
    # entry that claims them for a newer one.
    dir = tmp_path / "t-0"
    log = open_log(dir)
    fill(log, 20, seed=9, epoch_every=5)  # epochs 0..3
    end = log.log_end_offset
    log.leader_epoch_cache.assign(4, end)  # a leadership that wrote nothing
    crash(log)
    checkpoint = dir / log_files.LEADER_EPOCH_CHECKPOINT_FILE
    before = checkpoint.read_text()
    log = open_log(dir)
    assert checkpoint.read_text() == before and "4 %d" % end in before
    assert log.latest_epoch == 3
    crash(log)
    log = open_log(dir)  # dropped again
    assert log.latest_epoch == 3 and log.log_end_offset == end
    log.append_as_leader(make_records([b"older epoch"]), leader_epoch=3)
    assert "4 %d" % end not in checkpoint.read_text()
    crash(log)
    log = open_log(dir)
    assert log.log_end_offset == end + 1
    assert log.latest_epoch == 3 and log.end_offset_for_epoch(3) == (end + 1, 3)
    log.close()
