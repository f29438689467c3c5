"""The broker's kazoo handler: its waits see readable and writable sockets, time out empty,
take no descriptor, and work for descriptors above 1023 (where select(2) cannot)."""
from __future__ import annotations

import os
import resource
import socket

import pytest

from kafka_py.core.zk.kazoo_handler import PollingThreadingHandler


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_select_reports_readable_and_writable_and_times_out_empty():
    handler = PollingThreadingHandler()
    a, b = socket.socketpair()
    try:
        readable, writable, _ = handler.select([a], [b], [], 0)
        assert readable == [] and writable == [b]
        b.send(b"x")
        readable, writable, _ = handler.select([a, b], [], [], 1.0)
        assert readable == [a] and writable == []
        a.recv(1)
        before = _open_fds()
        assert handler.select([a], [], [], 0.05) == ([], [], [])
        assert _open_fds() == before
    finally:
        a.close()
        b.close()


def test_select_waits_on_descriptors_above_1023():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1100:
        pytest.skip(f"the descriptor limit ({hard}) leaves no room above 1023")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1100), hard))
    fillers = []
    try:
        while True:
            fd = os.open("/dev/null", os.O_RDONLY)
            fillers.append(fd)
            if fd > 1030:
                break
        a, b = socket.socketpair()
        try:
            assert a.fileno() > 1023
            b.send(b"x")
            assert PollingThreadingHandler().select([a], [], [], 1.0)[0] == [a]
        finally:
            a.close()
            b.close()
    finally:
        for fd in fillers:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
