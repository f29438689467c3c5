"""PageCachePrefaulter (kafka_py/tuning/page_cache_prefaulter.py) on real, preallocated segment files:
the prefault mark in FileRecords.append (kafka_py/tuning/prefault_mark.py), the fill thread, window adaptation, closed segments,
shutdown, and the Log / LogManager wiring."""
from __future__ import annotations

import logging
import os
import threading
import time as _time

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log import Log
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_manager import LogManager
from kafka_py.tuning.page_cache_prefaulter import NO_PREFAULTER, BrokerCpuMonitor, PageCachePrefaulter
from kafka_py.tuning.prefault_mark import NO_PREFAULT_MARK, PrefaultMark, set_prefault_mark
from kafka_py.clients.common.record.file_records import ClosedChannelException, FileRecords
from kafka_py.core.utils.kafka_scheduler import MockScheduler
from kafka_py.clients.common.utils.time import MockTime
from tests.log.log_test_helpers import make_records, read_all, values_of

KiB = 1024
MiB = 1024 * KiB
THREAD_NAME = "kafka-page-cache-prefaulter"


# ---------------------------------------------------------------------------- helpers


class SpyFileRecords(FileRecords):
    """A real FileRecords that also records every mark the prefaulter sets on it.

    The prefaulter thread sets a new mark (or None) at the end of each fill, so the number of
    recorded marks tells the test when a fill has finished, without sleeping.
    """

    def __init__(self, *args, **kwargs) -> None:
        self.marks: list = []
        super().__init__(*args, **kwargs)
        self.marks.clear()  # the initial NO_PREFAULT_MARK is not one the prefaulter set

    @property
    def prefault_mark(self) -> PrefaultMark:
        return self._spied_mark

    @prefault_mark.setter
    def prefault_mark(self, mark: PrefaultMark) -> None:
        # a moved mark is a new PrefaultMark (set_prefault_mark), so every move passes here
        self._spied_mark = mark
        # after the assignment: once seen here, the mark is in place
        self.marks.append(None if mark is NO_PREFAULT_MARK else mark.size)


def wait_until(predicate, what: str, timeout: float = 10.0) -> None:
    deadline = _time.monotonic() + timeout
    while not predicate():
        if _time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        _time.sleep(0.005)


def start(prefaulter: PageCachePrefaulter, log_dirs=()) -> threading.Thread:
    """Start ``prefaulter`` for ``log_dirs`` and return its thread (the one thread startup() added)."""
    before = set(threading.enumerate())
    prefaulter.startup(log_dirs)
    new = [t for t in threading.enumerate() if t not in before and t.name == THREAD_NAME]
    assert len(new) == 1, new
    return new[0]


def preallocated(path, size: int) -> SpyFileRecords:
    return SpyFileRecords.open(path, file_already_exists=False, init_file_size=size, preallocate=True)


def append_and_wait_for_fill(records: SpyFileRecords, data: bytes) -> None:
    """Append ``data`` (which must reach the current mark) and wait for the fill it requests."""
    marks_before = len(records.marks)
    records.append(data)
    wait_until(lambda: len(records.marks) > marks_before, "the prefaulter to finish a fill")
    assert len(records.marks) == marks_before + 1  # one request, one fill


@pytest.fixture
def prefaulters():
    """Prefaulters made by a test; every one is shut down afterwards, even if the test failed."""
    made: list[PageCachePrefaulter] = []

    def make(*args, **kwargs) -> PageCachePrefaulter:
        # The broker counts as busy unless a test says otherwise: a test process's own CPU
        # use would decide each fill otherwise (BrokerCpuMonitor has tests of its own).
        kwargs.setdefault("broker_busy", lambda: True)
        prefaulter = PageCachePrefaulter(*args, **kwargs)
        made.append(prefaulter)
        return prefaulter

    yield make
    for prefaulter in made:
        prefaulter.shutdown()


@pytest.fixture
def files():
    """FileRecords opened by a test; their descriptors are released afterwards."""
    opened: list[FileRecords] = []

    def track(records: FileRecords) -> FileRecords:
        opened.append(records)
        return records

    yield track
    for records in opened:
        records.close_handlers()


# ---------------------------------------------------------------------------- FileRecords' mark


def test_append_reaching_the_mark_calls_the_listener(tmp_path, files):
    fr = files(FileRecords.open(tmp_path / "m.log"))
    calls = []
    set_prefault_mark(fr, 100, calls.append)

    fr.append(b"x" * 60)
    assert calls == []  # below the mark
    fr.append(b"x" * 40)
    assert calls == [fr]  # exactly at the mark: called with the FileRecords itself
    fr.append(b"x" * 10)
    assert calls == [fr, fr]  # past it, every append calls until the mark moves

    set_prefault_mark(fr, 1000, calls.append)
    fr.append(b"x" * 10)
    assert len(calls) == 2  # moved beyond the size: quiet again
    fr.append(b"x" * 880)
    assert len(calls) == 3 and fr.size_in_bytes() == 1000

    set_prefault_mark(fr, None, None)
    fr.append(b"x" * 5000)
    assert len(calls) == 3  # no mark, no calls

    # A mark without a listener is no mark either.
    set_prefault_mark(fr, 10, None)
    fr.append(b"x")
    assert len(calls) == 3


def test_slices_never_call_the_listener(tmp_path, files):
    fr = files(FileRecords.open(tmp_path / "s.log"))
    calls = []
    fr.append(b"y" * 100)
    set_prefault_mark(fr, 50, calls.append)
    piece = fr.slice(0, 100)

    # A slice is read-only: it refuses appends, so it never reaches a mark ...
    with pytest.raises(ValueError):
        piece.append(b"z" * 100)
    # ... even one set on the slice itself.
    set_prefault_mark(piece, 0, calls.append)
    with pytest.raises(ValueError):
        piece.append(b"z")
    assert calls == []
    assert fr.size_in_bytes() == 100
    # The FileRecords the slice came from keeps its own mark.
    fr.append(b"y")
    assert calls == [fr]


def test_a_file_records_without_a_mark_shares_no_prefault_mark(tmp_path, files):
    fr = files(FileRecords.open(tmp_path / "n.log"))
    fr.append(b"x" * 100)
    # no mark object made per FileRecords or per slice (a fetch makes slices)
    assert fr.prefault_mark is NO_PREFAULT_MARK
    assert fr.slice(0, 50).prefault_mark is NO_PREFAULT_MARK

    set_prefault_mark(fr, 100, print)
    first = fr.prefault_mark
    assert (first.size, first.listener) == (100, print)
    set_prefault_mark(fr, 200, print)
    # a moved mark is a new one: an append never sees one mark's size with another's listener
    assert fr.prefault_mark is not first and first.size == 100 and fr.prefault_mark.size == 200
    set_prefault_mark(fr, None, print)
    assert fr.prefault_mark is NO_PREFAULT_MARK


def test_prefault_mark_appended_calls_its_listener_from_its_size_on():
    calls = []
    mark = PrefaultMark(10, calls.append)
    mark.appended("records", 9)
    assert calls == []
    mark.appended("records", 10)
    mark.appended("records", 11)
    assert calls == ["records", "records"]
    NO_PREFAULT_MARK.appended("records", 2**62)  # no append reaches it


# ---------------------------------------------------------------------------- watch / fill


@pytest.mark.parametrize("kind", ["plain", "reopened_preallocated"])
def test_segment_not_preallocated_past_its_data_is_not_served(tmp_path, prefaulters, files, kind):
    if kind == "plain":
        plain = files(SpyFileRecords.open(tmp_path / "plain.log"))
    else:
        # A preallocated file opened again (as after a restart) counts its whole length as data.
        FileRecords.open(tmp_path / "plain.log", init_file_size=1 * MiB, preallocate=True).close_handlers()
        plain = files(SpyFileRecords.open(tmp_path / "plain.log", file_already_exists=True,
                                          init_file_size=1 * MiB, preallocate=True))
    assert plain.channel_size() == plain.size_in_bytes()
    # A preallocated segment watched alongside shows when the thread has run.
    canary = files(preallocated(tmp_path / "canary.log", 8 * MiB))
    prefaulter = prefaulters(2 * MiB, chunk_bytes=256 * KiB, time=MockTime())
    start(prefaulter)

    prefaulter.watch(plain)
    prefaulter.watch(canary)
    assert plain.marks == []  # no mark set
    plain.append(os.urandom(1 * MiB))  # well past the first mark it would have had
    size_on_disk = os.path.getsize(plain.file)
    append_and_wait_for_fill(canary, bytes(prefaulter.min_window_bytes))

    # Requests are served oldest first, so had the plain file queued anything it would be done
    # by now: everything filled is the canary's first window.
    assert prefaulter.bytes_filled == prefaulter.min_window_bytes
    assert plain.marks == []
    assert os.path.getsize(plain.file) == size_on_disk


def test_fill_ahead_stays_in_the_file_and_leaves_its_content_alone(tmp_path, prefaulters, files):
    capacity = 8 * MiB
    fr = files(preallocated(tmp_path / "00000000000000000000.log", capacity))
    # A frozen clock: every request counts as fast, so the window grows quickly and the
    # fills reach the end of the file in a few steps.
    prefaulter = prefaulters(2 * MiB, chunk_bytes=256 * KiB, time=MockTime())
    assert prefaulter.min_window_bytes == 256 * KiB
    start(prefaulter)
    prefaulter.watch(fr)
    assert fr.marks == [256 * KiB]  # first served once this much is appended

    written = bytearray()
    first_fill_start = None
    for _ in range(100):
        mark = fr.marks[-1]
        if mark is None:
            break
        size = fr.size_in_bytes()
        assert size < mark < capacity
        # Append exactly up to the mark: each fill then starts where the last one stopped.
        data = os.urandom(mark - size)
        written += data
        append_and_wait_for_fill(fr, data)
        if first_fill_start is None:
            first_fill_start = fr.size_in_bytes()
        filled_to = first_fill_start + prefaulter.bytes_filled
        assert fr.size_in_bytes() <= filled_to <= capacity
        assert fr.marks[-1] is None or fr.size_in_bytes() < fr.marks[-1] <= filled_to
    else:
        pytest.fail("the fills never reached the end of the file")

    # The last fill reached the end of the file, and nothing was read twice or past it.
    assert prefaulter.bytes_filled == capacity - first_fill_start
    assert fr.size_in_bytes() == len(written) < capacity
    # Appends past the last mark request nothing more.
    fr.append(b"tail")
    written += b"tail"
    fd = fr.acquire_channel()
    try:
        assert os.fstat(fd).st_size == capacity  # reading ahead did not change the file's length
        assert os.pread(fd, len(written), 0) == bytes(written)
        rest = os.pread(fd, capacity, len(written))
        assert len(rest) == capacity - len(written) and rest.count(0) == len(rest)  # still zeros
    finally:
        fr.release_channel()
    assert fr.read_bytes(0, len(written)) == bytes(written)
    assert prefaulter.bytes_filled == capacity - first_fill_start


def test_window_doubles_while_fast_and_halves_when_slow(tmp_path, prefaulters, files):
    clock = MockTime()
    fr = files(preallocated(tmp_path / "w.log", 8 * MiB))
    prefaulter = prefaulters(1 * MiB, chunk_bytes=64 * KiB, time=clock)
    assert prefaulter.min_window_bytes == 64 * KiB
    start(prefaulter)
    prefaulter.watch(fr)

    # Each step waits ``gap_ms`` on the clock, then appends past everything filled so far:
    # the fill then starts at the new end, so the bytes it reads are exactly its window.
    steps = [  # (gap since the previous request, expected window)
        (0, 64 * KiB),        # first request: the minimum
        (100, 128 * KiB),     # fast: doubles ...
        (100, 256 * KiB),
        (999, 512 * KiB),     # (just under a second is still fast)
        (100, 1 * MiB),
        (100, 1 * MiB),       # ... up to max_window_bytes
        (1000, 512 * KiB),    # slow: halves ...
        (5000, 256 * KiB),
        (2000, 128 * KiB),
        (2000, 64 * KiB),
        (2000, 64 * KiB),     # ... not below the minimum
        (10, 128 * KiB),      # fast again: doubles
    ]
    filled_to = 0
    for i, (gap_ms, window) in enumerate(steps):
        clock.advance(gap_ms)
        size = fr.size_in_bytes()
        new_size = max(filled_to + 4 * KiB, fr.marks[-1])
        before = prefaulter.bytes_filled
        append_and_wait_for_fill(fr, bytes(new_size - size))
        assert prefaulter.bytes_filled - before == window, f"step {i}"
        filled_to = new_size + window


def test_a_request_queued_during_a_fill_neither_fills_nor_grows_the_window(tmp_path, prefaulters, files):
    # The thread is not started: the test takes each queued request itself, so that an
    # append can be made "during" a fill, between taking the request and filling.
    clock = MockTime()
    fr = files(preallocated(tmp_path / "s.log", 8 * MiB))
    prefaulter = prefaulters(1 * MiB, chunk_bytes=64 * KiB, time=clock)
    buffer = memoryview(bytearray(64 * KiB))
    prefaulter.watch(fr)

    def serve() -> int:
        """Take every queued request and fill for it; the bytes filled."""
        before = prefaulter.bytes_filled
        while prefaulter._pending:
            _, state = prefaulter._pending.popitem(last=False)
            prefaulter._fill(state, buffer)
        return prefaulter.bytes_filled - before

    fr.append(bytes(fr.marks[-1] if fr.marks else 64 * KiB))
    assert serve() == 64 * KiB  # the first window
    clock.advance(100)
    fr.append(bytes(fr.marks[-1] - fr.size_in_bytes()))
    [(_, state)] = prefaulter._pending.items()
    prefaulter._pending.clear()
    fr.append(bytes(4 * KiB))   # an append while that request is being filled queues it again
    prefaulter._fill(state, buffer)
    assert state.window == 128 * KiB  # the fast request doubled it
    clock.advance(5000)
    # the second request asked for nothing the fill did not serve: no read, no doubling
    assert serve() == 0
    assert state.window == 128 * KiB
    # the next real request, five seconds later, halves the window as slow writers should
    marks = len(fr.marks)
    fr.append(bytes(max(4 * KiB, fr.marks[-1] - fr.size_in_bytes())))
    serve()  # (its halved window lies within what is already filled: nothing more to read)
    assert state.window == 64 * KiB
    assert len(fr.marks) == marks + 1 and fr.marks[-1] == state.mark > fr.size_in_bytes() - 64 * KiB


def test_no_fill_while_the_broker_has_cpu_to_spare(tmp_path, prefaulters, files):
    busy = [False]
    fr = files(preallocated(tmp_path / "idle.log", 8 * MiB))
    prefaulter = prefaulters(1 * MiB, chunk_bytes=64 * KiB, time=MockTime(), broker_busy=lambda: busy[0])
    start(prefaulter)
    prefaulter.watch(fr)
    append_and_wait_for_fill(fr, bytes(64 * KiB))
    # passed over: nothing read, and asked again half a window further on
    assert prefaulter.bytes_filled == 0 and prefaulter.requests_skipped == 1
    assert fr.marks[-1] == 64 * KiB + 32 * KiB
    busy[0] = True
    append_and_wait_for_fill(fr, bytes(32 * KiB))
    assert prefaulter.bytes_filled == 64 * KiB  # busy now: the window past the new end
    assert prefaulter.requests_skipped == 1


class _Clocks:
    """Process and thread CPU seconds and a monotonic clock, moved by the test."""

    def __init__(self) -> None:
        self.process = 10.0
        self.thread = 1.0
        self.wall_ns = 5_000_000_000

    def monitor(self) -> BrokerCpuMonitor:
        return BrokerCpuMonitor(process_cpu=lambda: self.process, thread_cpu=lambda: self.thread,
                                wall_ns=lambda: self.wall_ns)


def test_broker_cpu_monitor_counts_the_other_threads_over_a_quarter_second():
    clocks = _Clocks()
    busy = clocks.monitor()
    assert busy() is False  # the first call only takes a sample
    # 0.5 s: the other threads used 0.45 s of CPU (0.9 cores); this thread's own 0.3 s is left out
    clocks.wall_ns += 500_000_000
    clocks.process += 0.75
    clocks.thread += 0.3
    assert busy() is True and abs(busy.cores - 0.9) < 1e-9
    # within a quarter second nothing is measured again, however the clocks moved
    clocks.wall_ns += 100_000_000
    clocks.process += 0.001
    assert busy() is True
    # the next quarter second and more: 0.05 s of the others' CPU in 0.35 s is idle
    clocks.wall_ns += 250_000_000
    clocks.process += 0.049
    assert busy() is False and busy.cores < 0.2
    # only this thread busy (the prefaulter itself): still idle
    clocks.wall_ns += 1_000_000_000
    clocks.process += 0.9
    clocks.thread += 0.9
    assert busy() is False


def test_closed_or_trimmed_segment_does_not_stop_the_thread(tmp_path, prefaulters, files, caplog):
    caplog.set_level(logging.WARNING, logger="kafka_py.tuning.page_cache_prefaulter")
    closed = files(preallocated(tmp_path / "closed.log", 4 * MiB))
    trimmed = files(preallocated(tmp_path / "trimmed.log", 4 * MiB))
    other = files(preallocated(tmp_path / "other.log", 4 * MiB))
    prefaulter = prefaulters(2 * MiB, chunk_bytes=256 * KiB, time=MockTime())
    for fr in (closed, trimmed, other):
        prefaulter.watch(fr)

    # Requests queued before the thread runs, then the segments go away under them:
    # closed (deleted or shut down) and trimmed (rolled).
    closed.append(bytes(256 * KiB))
    trimmed.append(bytes(256 * KiB))
    closed.close()
    trimmed.trim()
    assert os.path.getsize(closed.file) == os.path.getsize(trimmed.file) == 256 * KiB
    thread = start(prefaulter)

    append_and_wait_for_fill(other, bytes(256 * KiB))
    # Requests are taken oldest first, so both dead segments were dealt with before ``other``:
    # the closed one skipped, the trimmed one (nothing left past its data) no longer served.
    assert trimmed.marks[-1] is None
    assert prefaulter.bytes_filled == 256 * KiB  # all of it for ``other``
    assert thread.is_alive()
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    with pytest.raises(ClosedChannelException):
        closed.append(b"more")
    trimmed.append(bytes(256 * KiB))  # no mark: no request

    # A segment closed after it has been filled: the thread goes on serving the others.
    append_and_wait_for_fill(other, bytes(other.marks[-1] - other.size_in_bytes()))
    other.close()
    late = files(preallocated(tmp_path / "late.log", 4 * MiB))
    prefaulter.watch(late)
    filled = prefaulter.bytes_filled
    append_and_wait_for_fill(late, bytes(256 * KiB))
    assert prefaulter.bytes_filled == filled + 256 * KiB
    assert thread.is_alive()
    assert os.path.getsize(other.file) == other.size_in_bytes()
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_shutdown_stops_and_joins_the_thread(tmp_path, prefaulters, files):
    prefaulter = prefaulters(1 * MiB, time=MockTime())
    thread = start(prefaulter)
    assert thread.is_alive() and thread.daemon
    prefaulter.shutdown()
    assert not thread.is_alive()  # joined
    prefaulter.shutdown()  # again: nothing to do

    # Appends past the mark after shutdown still work; nothing is filled.
    fr = files(preallocated(tmp_path / "after.log", 4 * MiB))
    prefaulter.watch(fr)
    fr.append(bytes(2 * MiB))
    assert fr.size_in_bytes() == 2 * MiB
    assert prefaulter.bytes_filled == 0


def test_shutdown_without_startup_is_safe(prefaulters):
    before = set(threading.enumerate())
    prefaulter = prefaulters(1 * MiB)
    prefaulter.shutdown()
    prefaulter.shutdown()
    assert set(threading.enumerate()) <= before  # no thread was ever started


def test_max_window_must_be_positive():
    for bad in (0, -1):
        with pytest.raises(ValueError):
            PageCachePrefaulter(bad)


# ---------------------------------------------------------------------------- Log / LogManager


def test_log_with_prefaulter_keeps_every_record(tmp_path, prefaulters):
    cfg = LogConfig(segment_size=4 * MiB, preallocate=True)
    prefaulter = prefaulters(2 * MiB, chunk_bytes=256 * KiB)
    start(prefaulter, [tmp_path])  # serves the logs in tmp_path
    log_dir = tmp_path / "topic-0"
    log = Log(str(log_dir), cfg, time=MockTime())
    try:
        first = log.active_segment
        assert os.path.getsize(first.log.file) == 4 * MiB  # preallocated

        expected = []
        while first.size < 600 * KiB:  # past the first mark (256 KiB)
            values = [os.urandom(1000) for _ in range(50)]
            log.append_as_leader(make_records(values), leader_epoch=0)
            expected += values
        wait_until(lambda: prefaulter.bytes_filled >= 256 * KiB, "the active segment to be filled ahead")
        assert os.path.getsize(first.log.file) == 4 * MiB  # filling ahead does not grow it

        log.roll()
        assert log.active_segment is not first
        # The rolled segment was trimmed to its data.
        assert os.path.getsize(first.log.file) == first.size == first.log.size_in_bytes()
        assert os.path.getsize(log.active_segment.log.file) == 4 * MiB
        more = [os.urandom(1000) for _ in range(300)]
        for i in range(0, len(more), 50):
            log.append_as_leader(make_records(more[i:i + 50]), leader_epoch=0)
        expected += more
        assert values_of(read_all(log, start=0)) == expected
        end_offset = log.log_end_offset
        assert end_offset == len(expected)
    finally:
        log.close()
    # close() trims the active segment too
    assert os.path.getsize(log.active_segment.log.file) == log.active_segment.size

    reopened = Log(str(log_dir), cfg, time=MockTime())
    try:
        assert reopened.log_end_offset == end_offset
        assert values_of(read_all(reopened, start=0)) == expected
    finally:
        reopened.close()


@pytest.fixture
def manager_env(tmp_path):
    clock = MockTime()
    scheduler = MockScheduler(clock)
    managers: list[LogManager] = []

    def make(config: LogConfig, **kwargs) -> LogManager:
        manager = LogManager([str(tmp_path / f"data{len(managers)}")], config, scheduler=scheduler, time=clock,
                             **kwargs)
        managers.append(manager)
        return manager

    yield make
    for manager in managers:
        if manager._dir_locks:
            manager.shutdown()
    scheduler.shutdown()


def test_log_manager_without_prefault_bytes_has_no_prefaulter(manager_env):
    before = set(threading.enumerate())
    manager = manager_env(LogConfig(retention_ms=-1, preallocate=True), prefault_bytes=0)
    assert manager.page_cache_prefaulter is NO_PREFAULTER
    manager.startup()
    assert not [t for t in threading.enumerate() if t not in before and t.name == THREAD_NAME]
    manager.shutdown()


def test_log_manager_runs_its_prefaulter_between_startup_and_shutdown(manager_env):
    cfg = LogConfig(retention_ms=-1, preallocate=True, segment_size=4 * MiB)
    manager = manager_env(cfg, prefault_bytes=2 * MiB)
    prefaulter = manager.page_cache_prefaulter
    assert isinstance(prefaulter, PageCachePrefaulter)
    assert prefaulter.max_window_bytes == 2 * MiB

    before = set(threading.enumerate())
    manager.startup()
    [thread] = [t for t in threading.enumerate() if t not in before and t.name == THREAD_NAME]
    assert thread.is_alive()

    log = manager.get_or_create_log(TopicPartition("orders", 0))
    segment = log.active_segment
    assert os.path.getsize(segment.log.file) == 4 * MiB
    expected = []
    while segment.size < prefaulter.min_window_bytes:
        values = [os.urandom(1000) for _ in range(100)]
        log.append_as_leader(make_records(values), leader_epoch=0)
        expected += values
    # Filled, or passed over because this test process leaves its CPU idle (BrokerCpuMonitor):
    # either way the request reached the manager's prefaulter thread.
    wait_until(lambda: prefaulter.bytes_filled + prefaulter.requests_skipped > 0,
               "the manager's prefaulter to take the request")

    manager.shutdown()
    assert not thread.is_alive()
    # shutdown closed the log, trimming its active segment
    assert os.path.getsize(segment.log.file) == segment.size
    reopened = Log(log.dir, cfg, time=MockTime())
    try:
        assert reopened.log_end_offset == len(expected)
        assert values_of(read_all(reopened, start=0)) == expected
    finally:
        reopened.close()
