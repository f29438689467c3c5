"""Page cache prefaulting for preallocated active segments: a kafka-py addition with no
counterpart in Kafka's source.

Why: appending a batch copies it into the page cache. When the pages that copy lands in
are memory the machine has not used recently, the first write into each of them costs
far more than the copy: on the VMs we measure on (the hypervisor takes free guest memory
back and hands it out again on first touch) about 25 microseconds per 4 KiB page, so a
16 KiB append took ~100 microseconds instead of ~6 (docs/performance.md, "Broker
tuning"). A JVM broker pays that cost in whichever request handler thread writes, on any
core; in kafka-py the copy holds up the interpreter, so the whole broker, Processor
included, waits for it.

What: with ``log.preallocate=true`` a new segment file is created at its full size (a
sparse file; LogSegment and FileRecords track where the data ends). Reading a stretch of
that file beyond the data puts zero-filled pages for it in the page cache, and the later
append only overwrites them. This thread does those reads ahead of each active segment's
end, without the GIL for the length of each read; the appends then find their pages in
place.

How far ahead: a segment is served once its appends pass ``min_window_bytes`` (a
sixteenth of ``log.prefault.bytes``, but at least one read of 1 MiB), so a partition
written slowly costs nothing, and each request fills a window past the current end.
The window doubles, up to ``log.prefault.bytes``, while the appends use up the
previous one within a second, and halves when they are slower, so only partitions
being written fast hold that much of the page cache ahead of their data, and what they
hold is clean memory the kernel may take back at any time. Rolling or closing a segment
trims the file to its data, which drops the pages past it.

Only when the broker is busy: the reads cost CPU on the other CPUs (a page read ahead
costs as much as the append's own first touch, and in some phases more), which only pays
when the broker's own CPU is the bottleneck. When the broker's threads use less than
``BUSY_CORES`` of CPU, its appends touch their pages themselves in time it would have
spent idle, and the CPUs beside it are left to whatever else runs there (on the test VM,
producer clients: with the prefaulter reading regardless, a confluent-kafka producer on
the same machine lost a fifth of its throughput). ``BrokerCpuMonitor`` tells which.

The appending thread only compares its new size with a mark and, past it, queues the
segment (FileRecords.append's ``prefault_mark``, kafka_py/tuning/prefault_mark.py);
everything else happens here.

Hooks: LogManager makes its prefaulter with ``make_prefaulter`` (``NO_PREFAULTER`` when
``log.prefault.bytes`` is 0), starts it for its log dirs (``startup``) and stops it
(``shutdown``), one line each; ``Log._add_segment`` hands each new last segment to
``segment_added``, which finds the prefaulter serving the log's dir, if any.
"""
from __future__ import annotations

import logging
import os
import threading
import time as _time
from collections import OrderedDict
from typing import Callable, Optional

from kafka_py.clients.common.record.file_records import ClosedChannelException, FileRecords
from kafka_py.tuning.prefault_mark import set_prefault_mark
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

# One read per chunk: long enough that the GIL is taken back rarely, short enough that a
# stop request is seen promptly.
CHUNK_BYTES = 1 << 20
# A window consumed within this long was too small: it doubles.
_FAST_CONSUMPTION_NS = 1_000_000_000
# The broker is busy (prefaulting pays) when its threads, the prefaulter's own use left
# out, use this much CPU: most of the one core its Python can use at a time.
BUSY_CORES = 0.8
# BrokerCpuMonitor measures over at least this long.
_CPU_SAMPLE_NS = 250_000_000


class BrokerCpuMonitor:
    """Whether the broker's threads, other than the calling one, have kept a core busy lately.

    Called from the prefaulter's thread only: the process's CPU time less that thread's own,
    over the last quarter of a second or more (re-measured when that much has passed)."""

    def __init__(self, busy_cores: float = BUSY_CORES,
                 process_cpu: Callable[[], float] = _time.process_time,
                 thread_cpu: Callable[[], float] = _time.thread_time,
                 wall_ns: Callable[[], int] = _time.monotonic_ns) -> None:
        self.busy_cores = busy_cores
        self._process_cpu = process_cpu
        self._thread_cpu = thread_cpu
        self._wall_ns = wall_ns
        self._sampled_ns: Optional[int] = None
        self._sampled_cpu = 0.0
        self.cores = 0.0

    def _others_cpu(self) -> float:
        return self._process_cpu() - self._thread_cpu()

    def __call__(self) -> bool:
        now = self._wall_ns()
        if self._sampled_ns is None:
            self._sampled_ns, self._sampled_cpu = now, self._others_cpu()
            return False  # nothing measured yet
        if now - self._sampled_ns >= _CPU_SAMPLE_NS:
            cpu = self._others_cpu()
            self.cores = (cpu - self._sampled_cpu) / ((now - self._sampled_ns) / 1e9)
            self._sampled_ns, self._sampled_cpu = now, cpu
        return self.cores >= self.busy_cores


class _SegmentState:
    """What the prefaulter knows of one active segment."""

    __slots__ = ("records", "filled_to", "window", "mark", "last_request_ns", "_request")

    def __init__(self, records: FileRecords, window: int, request: Callable[["_SegmentState"], None]) -> None:
        self.records = records
        self.filled_to = 0
        self.window = window
        self.mark = window
        self.last_request_ns: Optional[int] = None
        self._request = request
        set_prefault_mark(records, self.mark, self._on_mark)

    def _on_mark(self, _records: FileRecords) -> None:
        self._request(self)

    def move_mark(self, mark: int) -> None:
        """The size at which the appends ask for the next fill (FileRecords' prefault mark)."""
        self.mark = mark
        set_prefault_mark(self.records, mark, self._on_mark)


# The running prefaulter of each log dir (absolute path).
_SERVING: dict[str, "PageCachePrefaulter"] = {}
_SERVING_LOCK = threading.Lock()


def segment_added(log, segment) -> None:
    """Log._add_segment's hook: a segment that is now the log's last goes to the prefaulter
    serving the log's dir (it passes over segments not preallocated past their data)."""
    prefaulter = _SERVING.get(log.parent_dir)
    if prefaulter is not None and segment is log.log_segments[-1]:
        prefaulter.watch(segment.log)


class PageCachePrefaulter:
    """One thread filling the page cache ahead of the active segments' ends."""

    def __init__(self, max_window_bytes: int, time: Time = Time.SYSTEM,
                 chunk_bytes: int = CHUNK_BYTES, broker_busy: Optional[Callable[[], bool]] = None) -> None:
        """``broker_busy``: asked (on the prefaulter's thread) before each fill; a
        BrokerCpuMonitor unless given."""
        if max_window_bytes <= 0:
            raise ValueError(f"max_window_bytes must be positive, not {max_window_bytes}")
        if chunk_bytes <= 0:
            raise ValueError(f"chunk_bytes must be positive, not {chunk_bytes}")
        self._broker_busy = broker_busy
        self.max_window_bytes = max_window_bytes
        self.chunk_bytes = min(chunk_bytes, max_window_bytes)
        # A segment is first served once it holds this much: slow partitions never are.
        self.min_window_bytes = max(self.chunk_bytes, max_window_bytes // 16)
        self._time = time
        self._cond = threading.Condition(threading.Lock())
        self._pending: OrderedDict[int, _SegmentState] = OrderedDict()
        self._stopped = False
        self._thread: Optional[threading.Thread] = None
        self.bytes_filled = 0
        self._log_dirs: tuple[str, ...] = ()
        # Requests passed over because the broker had CPU to spare.
        self.requests_skipped = 0

    # ---- the appending side -------------------------------------------------------
    def watch(self, records: FileRecords) -> None:
        """Serve ``records`` (a new active segment) if it is preallocated past its data."""
        try:
            if records.channel_size() <= records.size_in_bytes():
                return
        except (OSError, ClosedChannelException):
            return
        # Sets the first mark; the segment keeps the state alive through that mark's listener.
        _SegmentState(records, self.min_window_bytes, self._request)

    def _request(self, state: _SegmentState) -> None:
        # Called by FileRecords.append past the mark; the mark moves only once the fill
        # is done, so appends until then call again, and the dict keeps one entry.
        with self._cond:
            if id(state) not in self._pending:
                self._pending[id(state)] = state
                self._cond.notify()

    # ---- the thread ---------------------------------------------------------------
    def startup(self, log_dirs=()) -> None:
        """Start the thread and serve the logs in ``log_dirs`` from now on."""
        self._thread = threading.Thread(target=self._run, name="kafka-page-cache-prefaulter", daemon=True)
        self._thread.start()
        self._log_dirs = tuple(os.path.abspath(d) for d in log_dirs)
        with _SERVING_LOCK:
            for log_dir in self._log_dirs:
                _SERVING[log_dir] = self

    def shutdown(self) -> None:
        with _SERVING_LOCK:
            for log_dir in self._log_dirs:
                if _SERVING.get(log_dir) is self:
                    del _SERVING[log_dir]
        with self._cond:
            self._stopped = True
            self._pending.clear()
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        if self._broker_busy is None:
            # made here: it measures the other threads against this one's own CPU time
            self._broker_busy = BrokerCpuMonitor()
            self._broker_busy()
        buffer = bytearray(self.chunk_bytes)
        while True:
            with self._cond:
                while not self._pending and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                _, state = self._pending.popitem(last=False)
            try:
                self._fill(state, memoryview(buffer))
            except ClosedChannelException:
                pass  # rolled away or deleted meanwhile: nothing left to serve
            except OSError as e:
                # A read error here loses nothing (the append path reports its own); stop
                # serving this segment rather than retrying on every append.
                logger.warning("Could not prefault %s: %s", state.records.file, e)
                set_prefault_mark(state.records, None, None)
            except Exception:  # noqa: BLE001 - this thread must outlive any one segment
                logger.exception("Error prefaulting %s", state.records.file)
                set_prefault_mark(state.records, None, None)

    def _fill(self, state: _SegmentState, buffer: memoryview) -> None:
        records = state.records
        if records.size_in_bytes() < state.mark:
            # Queued again by appends that passed the previous mark while that fill ran:
            # the fill that just finished has served them.
            return
        if not self._broker_busy():
            # The appends may touch their pages themselves: the broker has CPU to spare.
            # Asked again when they have used half a window more.
            self.requests_skipped += 1
            state.move_mark(records.size_in_bytes() + state.window // 2)
            return
        now = self._time.nanoseconds()
        if state.last_request_ns is not None:
            if now - state.last_request_ns < _FAST_CONSUMPTION_NS:
                state.window = min(state.window * 2, self.max_window_bytes)
            else:
                state.window = max(state.window // 2, self.min_window_bytes)
        state.last_request_ns = now
        fd = records.acquire_channel()
        try:
            capacity = os.fstat(fd).st_size
            position = max(state.filled_to, records.size_in_bytes())
            target = min(records.size_in_bytes() + state.window, capacity)
            while position < target and not self._stopped:
                length = min(len(buffer), target - position)
                read = os.preadv(fd, [buffer[:length]], position)
                if read <= 0:
                    break  # trimmed under us: the segment is no longer active
                position += read
                self.bytes_filled += read
        finally:
            records.release_channel()
        state.filled_to = position
        if position >= capacity:
            # all of it is in the page cache: no more requests (a queued one finds size < mark)
            state.mark = capacity + 1
            set_prefault_mark(records, None, None)
        else:
            state.move_mark(position - state.window // 2)


class _NoPrefaulter:
    """The prefaulter of a LogManager with ``log.prefault.bytes=0``: starts no thread, serves
    nothing."""

    def startup(self, log_dirs=()) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def __repr__(self) -> str:
        return "NO_PREFAULTER"


NO_PREFAULTER = _NoPrefaulter()


def make_prefaulter(prefault_bytes: int, time: Time = Time.SYSTEM):
    """LogManager's prefaulter: a PageCachePrefaulter filling up to ``prefault_bytes``
    (``log.prefault.bytes``) ahead of each fast-written active segment, or ``NO_PREFAULTER``
    when that is 0 or less."""
    return PageCachePrefaulter(prefault_bytes, time=time) if prefault_bytes > 0 else NO_PREFAULTER
