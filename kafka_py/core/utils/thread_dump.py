"""kill -3 (SIGQUIT) prints every thread's stack and the process goes on: kafka-py's
counterpart of the JVM's thread dump, which Kafka's source leaves to the JVM.

``faulthandler.register(SIGQUIT, all_threads=True)`` is not used for this: its dump walks the
other threads' frames from inside the C signal handler without holding the GIL, so a thread
that returns from a function meanwhile can free the frame being read, and the broker dies of
SIGSEGV. Under produce load that happens within a few dozen signals. Here the dump is a
Python signal handler instead. It runs on the main thread between two bytecodes, holding the
GIL, so every frame it reads stays alive while it reads it. The price is that a main thread
stuck inside C code that keeps the GIL would delay the dump. The broker's main thread only
waits on an Event, which a signal interrupts.

The handler may run while the main thread is anywhere, holding any lock. So it takes none:
it reads the thread table without ``threading.enumerate()`` (whose lock ``Thread.start``
holds), and it writes to the file descriptor rather than through ``sys.stderr``, whose buffer
refuses a reentrant write.
"""
from __future__ import annotations

import gc
import signal
import sys
import threading
import traceback
from types import FrameType
from typing import Optional

from kafka_py.clients.common.utils.utils import write_fully


def format_thread_dump(own_frame: Optional[FrameType] = None) -> str:
    """Every Python thread's stack, innermost call first, each headed by its name and id. The
    calling thread's stack starts at ``own_frame`` when given (a signal handler passes the frame
    it interrupted, so that the dump's own calls are left out)."""
    # CPython 3.11's _current_frames holds the interpreter's thread-list lock while it makes
    # a frame object for each thread. If one of those allocations starts a collection that
    # frees a threading.local caught in a reference cycle, the local's cleanup takes the same
    # lock and the thread waits on itself forever (seen with a Spark session's threads in the
    # process). No collection can start while the collector is off.
    collecting = gc.isenabled()
    gc.disable()
    try:
        frames = sys._current_frames()
    finally:
        if collecting:
            gc.enable()
    if own_frame is not None:
        frames[threading.get_ident()] = own_frame
    # First every stack as it is now, with no I/O: reading source lines releases the GIL and
    # lets the other threads move on, so the lines are looked up only once all are taken.
    stacks = {ident: traceback.StackSummary.extract(traceback.walk_stack(frame), lookup_lines=False)
              for ident, frame in frames.items()}
    # a copy of the table Thread.start fills in; copying a dict under the GIL is atomic
    threads = dict(getattr(threading, "_active", {}))
    out = [f"Full thread dump: {len(stacks)} threads"]
    for ident, stack in stacks.items():
        thread = threads.get(ident)
        name = f'"{thread.name}"{" daemon" if thread.daemon else ""} ' if thread is not None else ""
        out.append(f"\n{name}Thread 0x{ident:016x} (most recent call first):")
        for entry in stack:
            out.append(f'  File "{entry.filename}", line {entry.lineno}, in {entry.name}')
            if entry.line:
                out.append(f"    {entry.line}")
    return "\n".join(out) + "\n"


def _stderr_fd() -> int:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # no stderr, or not a real file
        return 2


def install_thread_dump_handler(fd: Optional[int] = None) -> None:
    """From now on SIGQUIT writes ``format_thread_dump()`` to ``fd`` (default: standard error's).
    Call it from the main thread, as ``signal.signal`` requires."""
    target = _stderr_fd() if fd is None else fd

    def dump(signum: int, frame: Optional[FrameType]) -> None:
        try:
            write_fully(target, format_thread_dump(frame).encode("utf-8", "replace"))
        except OSError:
            pass  # nowhere to write the dump: the broker must go on all the same

    signal.signal(signal.SIGQUIT, dump)


__all__ = ["format_thread_dump", "install_thread_dump_handler"]
