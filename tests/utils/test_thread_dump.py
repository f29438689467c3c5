"""kill -3 prints every thread's stack and the process goes on (kafka_py/core/utils/thread_dump.py)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

from kafka_py.core.utils.thread_dump import format_thread_dump, install_thread_dump_handler


def park_until(event: threading.Event) -> None:
    event.wait(30)


@pytest.fixture
def parked_thread():
    release = threading.Event()
    thread = threading.Thread(target=park_until, args=(release,), name="parked-for-the-dump", daemon=True)
    thread.start()
    yield thread
    release.set()
    thread.join(10)


def section(dump: str, header_start: str) -> str:
    """The lines of the one thread whose header starts with ``header_start``."""
    parts = [p for p in dump.split("\n\n") if p.startswith(header_start)]
    assert len(parts) == 1, dump
    return parts[0]


def test_every_thread_appears_with_its_name_and_its_stack_innermost_first(parked_thread):
    dump = format_thread_dump()
    assert dump.startswith(f"Full thread dump: {len(sys._current_frames())} threads")
    parked = section(dump, '"parked-for-the-dump" daemon Thread 0x')
    assert "(most recent call first)" in parked
    lines = [line for line in parked.splitlines() if line.startswith("  File ")]
    names = [line.rsplit(" in ", 1)[1] for line in lines]
    # waiting inside Event.wait, called from park_until, called from Thread.run
    assert names.index("wait") < names.index("park_until") < names.index("run"), parked
    assert "    event.wait(30)" in parked  # the source line under its frame
    main = section(dump, f'"{threading.current_thread().name}" Thread 0x')
    assert "test_every_thread_appears_with_its_name_and_its_stack_innermost_first" in main


def test_the_calling_threads_stack_starts_at_the_frame_given():
    def interrupted_here():
        return sys._getframe()

    dump = format_thread_dump(interrupted_here())
    main = section(dump, f'"{threading.current_thread().name}" Thread 0x')
    first_frame = main.splitlines()[1]
    assert first_frame.endswith(", in interrupted_here"), main
    assert ", in format_thread_dump" not in main


def test_sigquit_writes_the_dump_to_the_descriptor_and_the_process_goes_on(parked_thread):
    read_end, write_end = os.pipe()
    previous = signal.getsignal(signal.SIGQUIT)
    try:
        install_thread_dump_handler(write_end)
        os.kill(os.getpid(), signal.SIGQUIT)
        # the handler runs on this (main) thread at the next bytecode; this line runs after it
        os.close(write_end)
        write_end = -1
        chunks = []
        while chunk := os.read(read_end, 1 << 16):
            chunks.append(chunk)
    finally:
        signal.signal(signal.SIGQUIT, previous)
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
    dump = b"".join(chunks).decode()
    assert dump.startswith("Full thread dump: ")
    assert '"parked-for-the-dump" daemon Thread 0x' in dump
    main = section(dump, f'"{threading.current_thread().name}" Thread 0x')
    # the handler's own calls are not in the dump: the main thread's stack starts in this test
    assert main.splitlines()[1].endswith(", in test_sigquit_writes_the_dump_to_the_descriptor_and_the_process_goes_on")
    assert parked_thread.is_alive()


def test_a_collection_during_the_dump_does_not_hang_it():
    # A collection that starts while the interpreter's thread list is locked and frees a
    # threading.local in a cycle used to deadlock the dump. The collector's threshold of 1 and a
    # fresh cycle before each dump make the first frame object the dump creates start one.
    program = textwrap.dedent("""
        import gc, threading
        from kafka_py.core.utils.thread_dump import format_thread_dump

        class Holder:
            pass

        def park(event):
            event.wait()

        gc.set_threshold(1)
        for _ in range(50):
            release = threading.Event()
            parked = threading.Thread(target=park, args=(release,))
            parked.start()
            gc.disable()
            holder = Holder()
            holder.local = threading.local()
            holder.itself = holder
            del holder
            gc.enable()
            dump = format_thread_dump()
            release.set()
            parked.join()
        print(dump.count("Thread 0x"))
    """)
    try:
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("format_thread_dump hung while a collection freed a threading.local")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"  # the main thread and the parked one
