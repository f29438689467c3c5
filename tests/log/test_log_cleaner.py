"""LogCleaner: the offset map, cleaning a log's segments, tombstones, producer state, crash safety."""
from __future__ import annotations

import hashlib
import os
import struct
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.errors import InvalidRecordException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log import log_files
from kafka_py.log.cleaner_config import DOUBLE_MAX_VALUE
from kafka_py.log.log import Log
from kafka_py.log.log_cleaner import Cleaner, CleanerStats, LogCleaner, Throttler
from kafka_py.log.log_cleaner_manager import (
    LogCleanerManager,
    LogCleaningAborted,
    LogCleaningAbortedException,
    LogToClean,
)
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_segment import LogSegment
from kafka_py.log.offset_map import SkimpyOffsetMap
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.utils.time import MockTime

TP = TopicPartition("compacted", 0)
RETENTION_MS = 1000


# ---------------------------------------------------------------------------- helpers


def compact_config(**kwargs) -> LogConfig:
    kwargs.setdefault("cleanup_policy", "compact")
    kwargs.setdefault("segment_size", 1024)
    kwargs.setdefault("max_index_size", 4096)
    kwargs.setdefault("delete_retention_ms", RETENTION_MS)
    kwargs.setdefault("file_delete_delay_ms", 0)
    return LogConfig(**kwargs)


def open_log(dir, cfg=None, time=None, **kwargs) -> Log:
    return Log(os.path.join(str(dir), str(TP)), cfg or compact_config(), time=time or MockTime(), **kwargs)


def make_cleaner(time, memory: int = 1024 * 1024, check_done=lambda tp: None, io_buffer_size: int = 4096,
                 max_io_buffer_size: int = 1024 * 1024) -> Cleaner:
    return Cleaner(0, SkimpyOffsetMap(memory), io_buffer_size, max_io_buffer_size, 0.9,
                   Throttler(DOUBLE_MAX_VALUE, time=time), time, check_done)


def append(log: Log, pairs, time, compression=CompressionType.NONE, **batch_kwargs):
    """One batch of (key, value) records stamped with the mock clock."""
    ts = time.milliseconds()
    data = build_batch([SimpleRecord(k, v, timestamp=ts) for k, v in pairs], compression=compression, **batch_kwargs)
    return log.append_as_leader(MemoryRecords(bytearray(data)), leader_epoch=0)


def seal(log: Log) -> None:
    """Make everything written cleanable: a new (empty) active segment and the HW at the end."""
    if log.active_segment.size > 0:
        log.roll()
    log.update_high_watermark(log.log_end_offset)


def clean(cleaner: Cleaner, log: Log, first_dirty_offset: int = 0) -> int:
    seal(log)
    end_offset, _ = cleaner.clean(LogToClean(TP, log, first_dirty_offset, log.active_segment.base_offset))
    return end_offset


def read_all(log: Log):
    """(offset, key, value) of every record, as a consumer sees them.

    A fetch returns whole batches, and after cleaning a batch may have lost the record
    at the fetch offset (or all of them), so the next fetch starts after the last batch.
    """
    out = []
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        records = log.read(offset, 4096, min_one_message=True).records
        memory = MemoryRecords(records.read_bytes(0, records.size_in_bytes()))
        next_offset = offset
        for batch in memory.batches(strict=False):
            out.extend((r.offset, r.key, r.value) for r in batch.records() if r.offset >= offset)
            next_offset = batch.next_offset
        if next_offset == offset:
            break
        offset = next_offset
    return out


def disk_size(log: Log) -> int:
    return sum(os.path.getsize(os.path.join(log.dir, n)) for n in os.listdir(log.dir) if n.endswith(".log"))


def latest_by_key(entries):
    latest = {}
    for offset, key, value in entries:
        latest[key] = (offset, value)
    return latest


# ---------------------------------------------------------------------------- SkimpyOffsetMap


def test_offset_map_keeps_latest_offset_per_key_and_forgets_on_clear():
    m = SkimpyOffsetMap(24 * 100)
    assert m.slots == 100
    for i in range(50):
        m.put(b"key-%d" % (i % 10), i)
    assert m.size == 10
    assert [m.get(b"key-%d" % k) for k in range(10)] == [40 + k for k in range(10)]
    assert m.get(b"absent") == -1
    assert m.latest_offset == 49
    assert m.utilization == pytest.approx(0.1)
    m.clear()
    assert (m.size, m.latest_offset, m.get(b"key-3")) == (0, -1, -1)


def test_offset_map_stores_md5_digest_at_kafkas_first_probe_position():
    m = SkimpyOffsetMap(24 * 1000)
    m.put(b"some key", 1234)
    digest = hashlib.md5(b"some key").digest()
    probe = struct.unpack(">i", digest[:4])[0]
    position = (abs(probe) % m.slots) * 24
    assert m._bytes[position:position + 16] == digest
    assert struct.unpack(">q", m._bytes[position + 16:position + 24])[0] == 1234


def test_offset_map_refuses_new_entries_when_full():
    m = SkimpyOffsetMap(24 * 4)
    for i in range(4):
        m.put(b"k%d" % i, i)
    assert [m.get(b"k%d" % i) for i in range(4)] == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        m.put(b"k9", 9)


def test_cleaner_rejects_a_map_too_small_for_one_entry():
    with pytest.raises(ValueError):
        make_cleaner(MockTime(), memory=24)


# ---------------------------------------------------------------------------- cleaning


def test_compaction_shrinks_a_log_with_many_overwrites(tmp_path):
    time = MockTime()
    log = open_log(tmp_path, compact_config(segment_size=4096), time=time)
    for i in range(1500):
        append(log, [(b"key-%d" % (i % 15), b"value-%06d" % i)], time)
    seal(log)
    before = disk_size(log)
    segments_before = log.number_of_segments
    cleaner = make_cleaner(time)
    end = clean(cleaner, log)
    assert end == log.log_end_offset
    # the next clean (after more writes) merges the now small segments into few
    for i in range(1500, 1515):
        append(log, [(b"key-%d" % (i % 15), b"value-%06d" % i)], time)
    clean(cleaner, log, end)
    after = disk_size(log)
    assert after * 20 < before
    assert log.number_of_segments <= 3 < segments_before
    entries = read_all(log)
    assert [(k, v) for _, k, v in entries] == [(b"key-%d" % (i % 15), b"value-%06d" % i) for i in range(1500, 1515)]
    log.close()
    reopened = open_log(tmp_path, compact_config(segment_size=4096), time=time)
    assert read_all(reopened) == entries
    assert disk_size(reopened) == after
    reopened.close()


def test_records_beyond_the_offset_map_are_kept_and_cleaning_resumes_there(tmp_path):
    time = MockTime()
    log = open_log(tmp_path, compact_config(segment_size=300), time=time)
    for i in range(60):
        append(log, [(b"k%02d" % i, b"v")], time)
    for i in range(60):
        append(log, [(b"k%02d" % i, b"w")], time)
    # room for 10 entries at load factor 0.9 -> 9 keys per clean
    cleaner = make_cleaner(time, memory=24 * 10)
    first_dirty = 0
    passes = 0
    while first_dirty < log.log_end_offset:
        end = clean(cleaner, log, first_dirty)
        assert end > first_dirty
        first_dirty = end
        passes += 1
    assert passes > 5
    entries = read_all(log)
    assert [v for _, _, v in entries] == [b"w"] * 60
    assert [o for o, _, _ in entries] == list(range(60, 120))


def test_rewritten_batches_keep_offsets_timestamps_headers_and_codec(tmp_path):
    time = MockTime()
    log = open_log(tmp_path, time=time)
    ts = time.milliseconds()
    data = build_batch([SimpleRecord(b"a", b"1", ts, (("h", b"x"),)), SimpleRecord(b"b", b"2", ts + 5),
                        SimpleRecord(b"c", b"3", ts + 9, (("h2", None),))], compression=CompressionType.GZIP)
    log.append_as_leader(MemoryRecords(bytearray(data)), leader_epoch=0)
    append(log, [(b"b", b"22")], time)
    clean(make_cleaner(time), log)
    batches = [b.load() for s in log.log_segments for b in s.log.batches()]
    first = batches[0]
    assert (first.base_offset, first.last_offset, first.record_count) == (0, 2, 2)
    assert first.compression_type == CompressionType.GZIP and first.is_valid()
    assert first.max_timestamp == ts + 9
    records = list(first.records())
    assert [(r.offset, r.key, r.value, r.timestamp, r.headers) for r in records] == [
        (0, b"a", b"1", ts, (("h", b"x"),)), (2, b"c", b"3", ts + 9, (("h2", None),))]


def test_a_batch_that_keeps_all_its_records_is_copied_byte_for_byte(tmp_path):
    time = MockTime()
    log = open_log(tmp_path, time=time)
    append(log, [(b"a", b"1"), (b"b", b"2")], time, compression=CompressionType.SNAPPY)
    original = log.log_segments[0].log.read_bytes(0, log.log_segments[0].size)
    append(log, [(b"c", b"3")], time)
    clean(make_cleaner(time), log)
    assert log.log_segments[0].log.read_bytes(0, len(original)) == original


def test_batches_larger_than_the_io_buffer_grow_it_for_the_clean(tmp_path):
    time = MockTime()
    log = open_log(tmp_path, compact_config(segment_size=64 * 1024), time=time)
    for i in range(6):
        append(log, [(b"big-%d" % (i % 2), bytes([i]) * 5000)], time)
    cleaner = make_cleaner(time, io_buffer_size=1024)
    clean(cleaner, log)
    assert [(o, k, v[:1]) for o, k, v in read_all(log)] == [(4, b"big-0", b"\x04"), (5, b"big-1", b"\x05")]
    assert cleaner.read_buffer_size == 1024


def test_records_without_a_key_are_dropped_from_the_cleaned_section(tmp_path):
    time = MockTime()
    # written while the topic was not compacted
    log = open_log(tmp_path, compact_config(cleanup_policy="delete"), time=time)
    append(log, [(None, b"no key"), (b"k", b"v")], time)
    log.update_config(compact_config())
    cleaner = make_cleaner(time)
    seal(log)
    _, stats = cleaner.clean(LogToClean(TP, log, 0, log.active_segment.base_offset))
    assert stats.invalid_messages_read == 1
    assert read_all(log) == [(1, b"k", b"v")]


def test_compacted_log_rejects_records_without_key(tmp_path):
    time = MockTime()
    log = open_log(tmp_path, time=time)
    with pytest.raises(InvalidRecordException) as info:
        append(log, [(b"k", b"v"), (None, b"v")], time)
    assert info.value.error_name == "INVALID_RECORD"
    assert log.log_end_offset == 0
    # the check follows the topic's policy as it changes
    log.update_config(compact_config(cleanup_policy="delete"))
    append(log, [(None, b"v")], time)
    assert log.log_end_offset == 1


# ---------------------------------------------------------------------------- tombstones


def set_mtime(segments, ms: int) -> None:
    for segment in segments:
        segment.last_modified = ms


def test_tombstones_survive_until_delete_retention_has_passed_since_they_became_clean(tmp_path):
    time = MockTime()
    log = open_log(tmp_path, compact_config(segment_size=100), time=time)
    append(log, [(b"gone", b"12345678")], time)
    append(log, [(b"kept", b"12345678")], time)
    append(log, [(b"gone", None)], time)
    seal(log)
    t1 = time.milliseconds()
    set_mtime(log.log_segments, t1)
    cleaner = make_cleaner(time)
    end = clean(cleaner, log)
    assert [(k, v) for _, k, v in read_all(log)] == [(b"kept", b"12345678"), (b"gone", None)]

    # two more cleans, the clean section's head written delete.retention.ms later
    time.sleep(RETENTION_MS + 1)
    append(log, [(b"filler", b"x" * 20)], time)
    seal(log)
    set_mtime([log.log_segments[-2]], time.milliseconds())
    end = clean(cleaner, log, end)
    assert (b"gone", None) in [(k, v) for _, k, v in read_all(log)]
    append(log, [(b"filler", b"y" * 20)], time)
    seal(log)
    set_mtime([log.log_segments[-2]], time.milliseconds())
    clean(cleaner, log, end)
    assert [(k, v) for _, k, v in read_all(log)] == [(b"kept", b"12345678"), (b"filler", b"y" * 20)]


# ---------------------------------------------------------------------------- the property


def batch_of_size(key: bytes, size: int, ts: int) -> MemoryRecords:
    """A one-record batch of exactly ``size`` bytes."""
    length = size - len(build_batch([SimpleRecord(key, b"", ts)]))
    while True:
        data = build_batch([SimpleRecord(key, b"f" * length, ts)])
        if len(data) == size:
            return MemoryRecords(bytearray(data))
        length -= len(data) - size


ops_strategy = st.lists(
    st.tuples(st.integers(0, 7), st.one_of(st.none(), st.binary(min_size=0, max_size=12)), st.integers(1, 3)),
    min_size=1, max_size=45)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops_strategy, segment_size=st.sampled_from([200, 350, 900]),
       compression=st.sampled_from([CompressionType.NONE, CompressionType.GZIP]))
def test_cleaning_keeps_exactly_the_latest_value_of_every_key(ops, segment_size, compression):
    """After cleaning, each key reads as its latest value; tombstones go once delete.retention.ms has passed.

    ``ops`` are (key, value or None = tombstone, batch size) with batches of 1-3 records.
    Segment ages are the mock clock's, written to the files' mtimes as a disk would.
    """
    with tempfile.TemporaryDirectory() as dir:
        time = MockTime()
        log = open_log(dir, compact_config(segment_size=segment_size), time=time)
        original = {}
        i = 0
        while i < len(ops):
            batch = ops[i:i + ops[i][2]]
            i += len(batch)
            info = append(log, [(b"k%d" % k, v) for k, v, _ in batch], time, compression=compression)
            for n, (k, v, _) in enumerate(batch):
                original[info.first_offset.message_offset + n] = (b"k%d" % k, v)
            time.sleep(1)
        seal(log)
        t1 = time.milliseconds()
        set_mtime(log.log_segments[:-1], t1)
        expected = latest_by_key((o, k, v) for o, (k, v) in sorted(original.items()))
        cleaner = make_cleaner(time)

        def check(end: int, tombstones_expired: bool) -> None:
            entries = read_all(log)
            offsets = [o for o, _, _ in entries]
            assert offsets == sorted(set(offsets))
            for offset, key, value in entries:
                if key.startswith(b"k"):
                    assert original[offset] == (key, value)
            cleaned_keys = [k for o, k, _ in entries if o < end]
            assert len(cleaned_keys) == len(set(cleaned_keys))
            latest = latest_by_key(entries)
            for key, (offset, value) in expected.items():
                if value is None and tombstones_expired:
                    assert key not in latest
                else:
                    assert latest[key] == (offset, value)

        end = clean(cleaner, log)
        assert end == log.log_end_offset
        check(end, tombstones_expired=False)

        # Tombstones expire against the clean section's newest segment: a filler written
        # delete.retention.ms later must first become clean (second pass), then the next pass
        # may drop them. The fillers nearly fill a segment, so they are never merged with
        # segments holding tombstones.
        for n in range(2):
            if n == 0:
                time.sleep(RETENTION_MS + 1)
            log.append_as_leader(batch_of_size(b"filler", segment_size - 60, time.milliseconds()), leader_epoch=0)
            seal(log)
            set_mtime([log.log_segments[-2]], time.milliseconds())
            end = clean(cleaner, log, end)
            check(end, tombstones_expired=(n == 1))
        final = read_all(log)
        log.close()
        reopened = open_log(dir, compact_config(segment_size=segment_size), time=time)
        assert read_all(reopened) == final
        reopened.close()


# ---------------------------------------------------------------------------- producer state


def test_last_batch_of_an_active_producer_is_kept_as_an_empty_batch(tmp_path):
    time = MockTime()
    log = open_log(tmp_path, time=time)
    append(log, [(b"a", b"1"), (b"b", b"1")], time, producer_id=7, producer_epoch=3, base_sequence=0)
    append(log, [(b"a", b"2"), (b"b", b"2")], time)
    # an older batch of another producer, wholly superseded, does go
    clean(make_cleaner(time), log)
    batches = [b for s in log.log_segments for b in s.log.batches()]
    kept = batches[0]
    assert (kept.producer_id, kept.producer_epoch, kept.base_sequence, kept.last_sequence) == (7, 3, 0, 1)
    assert (kept.base_offset, kept.last_offset, kept.record_count) == (0, 1, 0)
    assert read_all(log) == [(2, b"a", b"2"), (3, b"b", b"2")]
    log.close()
    # the producer's sequence survives a restart that rebuilds state from the log
    for name in os.listdir(log.dir):
        if name.endswith(".snapshot"):
            os.remove(os.path.join(log.dir, name))
    reopened = open_log(tmp_path, time=time, had_clean_shutdown=False)
    entry = reopened.active_producers[7]
    assert (entry.producer_epoch, entry.last_seq) == (3, 1)
    append(reopened, [(b"c", b"3")], time, producer_id=7, producer_epoch=3, base_sequence=2)
    reopened.close()


def test_superseded_batches_of_a_producer_go_once_it_has_written_later(tmp_path):
    time = MockTime()
    log = open_log(tmp_path, time=time)
    append(log, [(b"a", b"1")], time, producer_id=7, producer_epoch=0, base_sequence=0)
    append(log, [(b"b", b"1")], time, producer_id=7, producer_epoch=0, base_sequence=1)
    append(log, [(b"a", b"2")], time)
    clean(make_cleaner(time), log)
    batches = [(b.base_offset, b.record_count) for s in log.log_segments for b in s.log.batches()]
    assert batches == [(1, 1), (2, 1)]


# ---------------------------------------------------------------------------- abort and crashes


def test_an_aborted_clean_leaves_the_log_alone_and_no_cleaned_files(tmp_path):
    time = MockTime()
    log = open_log(tmp_path, compact_config(segment_size=200), time=time)
    for i in range(30):
        append(log, [(b"k%d" % (i % 3), b"v%d" % i)], time)
    seal(log)
    before = read_all(log)
    manager = LogCleanerManager([str(tmp_path)], {TP: log})
    manager.set_cleaning_state(TP, LogCleaningAborted)
    cleaner = make_cleaner(time, check_done=manager.check_cleaning_aborted)
    with pytest.raises(LogCleaningAbortedException):
        cleaner.clean(LogToClean(TP, log, 0, log.active_segment.base_offset))
    assert read_all(log) == before
    assert not [n for n in os.listdir(log.dir) if n.endswith(log_files.CLEANED_FILE_SUFFIX)]


def build_crash_scenario(tmp_path):
    """A log with overwrites, and the cleaned replacement of its first segments written but not swapped in."""
    time = MockTime()
    cfg = compact_config(segment_size=400)
    log = open_log(tmp_path, cfg, time=time)
    for i in range(40):
        # overwritten keys, and keys written once so that every segment keeps something
        key = b"k%d" % (i % 4) if i % 2 == 0 else b"u%d" % i
        append(log, [(key, b"v%03d" % i)], time)
    seal(log)
    expected = latest_by_key(read_all(log))
    cleaner = make_cleaner(time)
    stats = CleanerStats(time)
    group = list(log.log_segments[:3])
    cleaner.build_offset_map(log, 0, log.active_segment.base_offset, cleaner.offset_map, stats)
    cleaned = LogCleaner.create_new_cleaned_segment(log, group[0].base_offset)
    for segment in group:
        cleaner.clean_into(TP, segment.log, cleaned, cleaner.offset_map, True, cfg.max_message_size,
                           _txn_metadata(), {}, stats)
    cleaned.on_become_inactive_segment()
    cleaned.flush()
    return time, cfg, log, group, cleaned, expected


def _txn_metadata():
    from kafka_py.log.log_cleaner import CleanedTransactionMetadata
    return CleanedTransactionMetadata()


def crash(log: Log, *segments: LogSegment) -> None:
    """Drop every open file as a killed process would: no flush, no snapshot, no renames."""
    log.close_handlers()
    for segment in segments:
        segment.close_handlers()


def names(dir: str, suffix: str):
    return sorted(n for n in os.listdir(dir) if n.endswith(suffix))


def test_crash_after_writing_the_cleaned_segment_keeps_the_old_segments(tmp_path):
    time, cfg, log, group, cleaned, expected = build_crash_scenario(tmp_path)
    before = read_all(log)
    assert names(log.dir, ".log.cleaned") == [log_files.log_file_name(group[0].base_offset, ".cleaned")]
    crash(log, cleaned)
    reopened = open_log(tmp_path, cfg, time=time, had_clean_shutdown=False)
    assert not names(reopened.dir, ".cleaned")
    assert read_all(reopened) == before
    assert latest_by_key(read_all(reopened)) == expected
    reopened.close()


@pytest.mark.parametrize("old_segments_renamed", [0, 1, 3])
def test_crash_mid_swap_is_completed_on_load(tmp_path, old_segments_renamed):
    time, cfg, log, group, cleaned, expected = build_crash_scenario(tmp_path)
    # the first steps of Log.replace_segments: new files to .swap, then old ones to .deleted
    cleaned.change_file_suffixes(log_files.CLEANED_FILE_SUFFIX, log_files.SWAP_FILE_SUFFIX)
    for segment in group[:old_segments_renamed]:
        segment.change_file_suffixes("", log_files.DELETED_FILE_SUFFIX)
    assert names(log.dir, ".log.swap")
    crash(log, cleaned)
    reopened = open_log(tmp_path, cfg, time=time, had_clean_shutdown=False)
    for suffix in (".swap", ".deleted", ".cleaned"):
        assert not names(reopened.dir, suffix)
    entries = read_all(reopened)
    assert [o for o, _, _ in entries] == sorted(set(o for o, _, _ in entries))
    assert latest_by_key(entries) == expected
    # the swapped-in segment replaced the whole group: nothing older than the cleaned data survives
    assert len(entries) < 40
    assert reopened.log_end_offset == 40
    reopened.close()


def test_replace_segments_swaps_in_the_cleaned_segment_and_deletes_the_old_files(tmp_path):
    time, cfg, log, group, cleaned, expected = build_crash_scenario(tmp_path)
    old_files = [os.path.basename(s.log.file) for s in group[1:]]
    log.replace_segments([cleaned], group)
    assert log.log_segments[0] is cleaned
    assert os.path.basename(cleaned.log.file) == log_files.log_file_name(group[0].base_offset)
    assert not set(old_files) & set(os.listdir(log.dir))
    assert not names(log.dir, ".swap") and not names(log.dir, ".cleaned") and not names(log.dir, ".deleted")
    assert latest_by_key(read_all(log)) == expected
    log.close()
