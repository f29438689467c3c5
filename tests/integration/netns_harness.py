"""Hosts of a test's own in network namespaces: a hub namespace holding a bridge, and one
namespace per node joined to it by a veth pair, addresses in 10.213.0.0/16 that exist only
inside those namespaces (nothing outside them, loopback included, is touched). ``cut`` sets
the hub end of a node's veth pair down (and makes the other addresses unreachable inside the
node's namespace, so that connects fail at once); ``heal`` undoes it.

Needs root and ``ip netns``; ``can_make_namespaces`` says why not where it cannot run."""
from __future__ import annotations

import ctypes
import os
import random
import shutil
import subprocess
import threading
import uuid

CLONE_NEWNET = 0x40000000
KAFKA_PORT = 9092
ZK_PORT = 2181
_libc = ctypes.CDLL(None, use_errno=True)


def enter_namespace(name: str) -> None:
    """The calling thread (and every thread it starts afterwards) joins network namespace ``name``."""
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns({name})")
    finally:
        os.close(fd)


def run_in_namespace(name: str, fn, *args):
    """``fn(*args)`` in a thread of its own inside namespace ``name``; its result, or its exception."""
    outcome: dict = {}

    def body() -> None:
        try:
            enter_namespace(name)
            outcome["result"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - handed back to the caller
            outcome["error"] = e

    thread = threading.Thread(target=body, name=f"in-{name}", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("result")


def ip(*args: str, namespace: str | None = None) -> None:
    command = ["ip", *(["-n", namespace] if namespace else []), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip()}")


class Network:
    """hub (bridge br0, .254) + one namespace per broker (eth0, .1 .2 .3), all named <prefix>-*."""

    def __init__(self, brokers: int = 3) -> None:
        self.prefix = f"kpy{uuid.uuid4().hex[:6]}"
        self.subnet = f"10.213.{random.randrange(256)}"
        self.hub = f"{self.prefix}-hub"
        self.namespaces = [f"{self.prefix}-b{i}" for i in range(brokers)]
        self.made: list[str] = []

    def address(self, broker_id: int) -> str:
        return f"{self.subnet}.{broker_id + 1}"

    @property
    def hub_address(self) -> str:
        return f"{self.subnet}.254"

    def hub_port(self, broker_id: int) -> str:
        return f"{self.prefix}-h{broker_id}"  # the hub end of broker's veth pair

    def create(self) -> "Network":
        for ns in [self.hub, *self.namespaces]:
            ip("netns", "add", ns)
            self.made.append(ns)
            ip("link", "set", "lo", "up", namespace=ns)
        ip("link", "add", "br0", "type", "bridge", namespace=self.hub)
        ip("addr", "add", f"{self.hub_address}/24", "dev", "br0", namespace=self.hub)
        ip("link", "set", "br0", "up", namespace=self.hub)
        for i, ns in enumerate(self.namespaces):
            ip("link", "add", self.hub_port(i), "netns", self.hub, "type", "veth", "peer", "name", "eth0",
               "netns", ns)
            ip("link", "set", self.hub_port(i), "master", "br0", "up", namespace=self.hub)
            ip("addr", "add", f"{self.address(i)}/24", "dev", "eth0", namespace=ns)
            ip("link", "set", "eth0", "up", namespace=ns)
        return self

    def others(self, broker_id: int) -> list[str]:
        """Every address on the bridge but ``broker_id``'s own."""
        return [self.hub_address] + [self.address(i) for i in range(len(self.namespaces)) if i != broker_id]

    def cut(self, broker_id: int) -> None:
        ip("link", "set", self.hub_port(broker_id), "down", namespace=self.hub)
        # Inside the cut namespace a connect would otherwise wait out ARP (about 3 s) before it
        # fails; a client there that tries another broker first would spend its whole metadata
        # budget that way. Unreachable routes make every such connect fail at once.
        for address in self.others(broker_id):
            ip("route", "add", "unreachable", f"{address}/32", namespace=self.namespaces[broker_id])

    def heal(self, broker_id: int) -> None:
        for address in self.others(broker_id):
            ip("route", "del", "unreachable", f"{address}/32", namespace=self.namespaces[broker_id])
        ip("link", "set", self.hub_port(broker_id), "up", namespace=self.hub)

    def delete(self) -> None:
        for ns in reversed(self.made):  # the veth pairs and the bridge go with them
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        self.made.clear()


def can_make_namespaces() -> str | None:
    """None where this test can run, else why not."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "iproute2's ip is not installed"
    probe = f"kpyprobe{uuid.uuid4().hex[:6]}"
    done = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        return f"`ip netns add` fails here: {done.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=30)
    return None
