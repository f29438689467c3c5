"""ReentrantReadWriteLock's hand-overs: a release wakes the threads waiting on it (a writer
behind readers, readers behind a writer), and re-entry and the refused upgrade behave as in
Java; releases with nobody waiting wake nobody (they skip the Condition's notify)."""
from __future__ import annotations

import threading

import pytest

from kafka_py.core.utils.reentrant_read_write_lock import ReentrantReadWriteLock

WAIT_S = 10.0


def _started(target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def _until(predicate) -> None:
    deadline = threading.Event()
    for _ in range(10_000):
        if predicate():
            return
        deadline.wait(0.001)
    raise AssertionError("condition not reached")


def test_the_last_reader_out_wakes_a_waiting_writer() -> None:
    lock = ReentrantReadWriteLock()
    lock.acquire_read()
    lock.acquire_read()  # re-entered
    written = threading.Event()

    def writer() -> None:
        with lock.write():
            written.set()

    thread = _started(writer)
    _until(lambda: lock._waiting == 1)
    lock.release_read()
    assert not written.wait(0.05)  # still one hold
    lock.release_read()
    assert written.wait(WAIT_S)
    thread.join(WAIT_S)
    assert lock._waiting == 0


def test_a_writer_s_release_wakes_the_readers_behind_it() -> None:
    lock = ReentrantReadWriteLock()
    lock.acquire_write()
    read = threading.Barrier(3)

    def reader() -> None:
        with lock.read():
            read.wait(WAIT_S)

    threads = [_started(reader), _started(reader)]
    _until(lambda: lock._waiting == 2)
    lock.release_write()
    read.wait(WAIT_S)
    for thread in threads:
        thread.join(WAIT_S)
    assert lock._waiting == 0 and not lock._readers


def test_reentry_and_the_refused_upgrade() -> None:
    lock = ReentrantReadWriteLock()
    with lock.write():
        with lock.read():
            with lock.write():
                assert lock.is_write_locked_by_current_thread()
    assert not lock.is_write_locked_by_current_thread()
    with lock.read():
        with pytest.raises(RuntimeError):
            lock.acquire_write()
    assert not lock._readers and lock._writer is None
