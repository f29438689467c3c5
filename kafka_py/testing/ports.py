"""Free TCP ports for the processes of a test cluster, without races between test processes.

The usual trick (bind port 0, read the port, close the socket) leaves a window in which
another pytest-xdist worker, doing the same, gets the same port from the kernel before
either broker binds it. Here a port is *reserved* first: on Linux by binding the abstract
Unix socket ``kafka-py-testing-port-<port>`` (a name only one socket on the machine can
hold, gone when the socket is closed or its process dies, and no file left behind);
elsewhere by an exclusive ``flock`` on ``<tmp>/kafka-py-testing-ports/<port>.lock``. The
test process holds it until the cluster releases the port, and every fixture on the
machine takes the reservation before it tries the port, so two never pick the same one.

Ports come from below the kernel's ephemeral range (``ip_local_port_range``): the
kernel hands ports of that range to outgoing connections (clients of the cluster among
them), which could take a reserved port between the reservation and the broker's bind.
"""
from __future__ import annotations

import errno
import fcntl
import os
import random
import socket
import sys
import tempfile
from typing import Optional

LOCK_DIR = os.path.join(tempfile.gettempdir(), "kafka-py-testing-ports")
# Below Linux's default ephemeral range (32768-60999), above the well-known services.
DEFAULT_RANGE = (20000, 32767)


def _candidate_range() -> tuple[int, int]:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, _high = (int(x) for x in f.read().split())
    except (OSError, ValueError):
        return DEFAULT_RANGE
    if low - 1 - 10000 >= 1000:
        return 10000, low - 1
    return DEFAULT_RANGE


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # the same option the broker's acceptor sets, so a port in TIME_WAIT counts as free
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class PortReservation:
    """One reserved port: its abstract socket (or lock file) is held until ``release``."""

    def __init__(self, port: int, holder) -> None:
        self.port = port
        self._holder = holder

    def release(self) -> None:
        if self._holder is not None:
            # closing drops the name (or the lock)
            if isinstance(self._holder, int):
                os.close(self._holder)
            else:
                self._holder.close()
            self._holder = None

    def __repr__(self) -> str:
        return f"PortReservation({self.port})"


def _hold_abstract_name(port: int):
    """The bound abstract socket naming ``port``, or None when another process holds it."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(f"\0kafka-py-testing-port-{port}")
    except OSError as e:
        s.close()
        if e.errno == errno.EADDRINUSE:
            return None
        raise
    return s


def _hold_lock_file(port: int) -> Optional[int]:
    os.makedirs(LOCK_DIR, exist_ok=True)
    fd = os.open(os.path.join(LOCK_DIR, f"{port}.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        os.close(fd)
        if e.errno in (errno.EAGAIN, errno.EACCES):
            return None
        raise
    return fd


def reserve_port(attempts: int = 200) -> PortReservation:
    """A port no other fixture holds and nothing listens on, reserved for the caller."""
    hold = _hold_abstract_name if sys.platform.startswith("linux") else _hold_lock_file
    low, high = _candidate_range()
    rng = random.Random()  # seeded from the OS: workers forked alike still differ
    for _ in range(attempts):
        port = rng.randint(low, high)
        holder = hold(port)
        if holder is None:
            continue
        reservation = PortReservation(port, holder)
        if _bindable(port):
            return reservation
        reservation.release()
    raise RuntimeError(f"no free port found in {attempts} attempts")
