"""The checks bin/kafka-quickstart.sh makes before it starts anything (no Kafka counterpart).

That ZooKeeper's port and the broker's listener ports are free and that no process holds
the lock of a broker log dir, and, when one is taken, which process holds it. Kafka has no
quickstart script, and its broker finds a taken port or a locked directory only when it
starts, after ZooKeeper has (or has not) come up.

    python -m kafka_py.bin.quickstart_check config/zookeeper.properties config/server.properties
    python -m kafka_py.bin.quickstart_check --kraft config/kraft/server.properties

prints one line per port or directory in use, on stderr, and exits 1 if there is one.
The holders are found in /proc: a listening TCP socket's inode in ``/proc/net/tcp`` and
``tcp6`` and the process with a descriptor on it; a lock in ``/proc/locks`` (the broker
takes an exclusive ``flock`` on ``<log dir>/.lock``, LogManager's FileLock).
"""
from __future__ import annotations

import errno
import fcntl
import os
import re
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from kafka_py.clients.common.utils import properties

LOCK_FILE = ".lock"
DEFAULT_LISTENERS = "PLAINTEXT://:9092"
DEFAULT_LOG_DIR = "/tmp/kafka-logs"
_TCP_LISTEN = "0A"
_LISTENER = re.compile(r"^\s*([A-Za-z0-9_]+)://(\[[^\]]*\]|[^:]*):(\d+)\s*$")


@dataclass(frozen=True)
class Endpoint:
    what: str  # e.g. "ZooKeeper's clientPort"
    host: str
    port: int


def process_description(pid: int) -> str:
    """``pid 1234 (java org.apache...QuorumPeerMain /x/zookeeper.properties)``: the pid and its
    command line, without a JVM's options and class path, which would hide what it runs."""
    try:
        args = [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        args = []
    shown: list[str] = []
    skip_next = False
    for arg in args:
        if skip_next:
            skip_next = False
        elif arg in ("-cp", "-classpath", "--class-path"):
            skip_next = True
        elif not (arg.startswith("-D") or arg.startswith("-X")):
            shown.append(arg)
    command = " ".join(shown)
    if len(command) > 300:
        command = command[:147] + " ... " + command[-148:]
    return f"pid {pid} ({command})" if command else f"pid {pid}"


# -- ports -----------------------------------------------------------------------------------

def port_in_use(host: str, port: int) -> bool:
    """Whether a listening socket already has ``host:port`` (binding it fails as the server's
    own bind would; SO_REUSEADDR, as servers set it, so that closed connections do not count)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return True
            raise
    return False


def _listening_socket_inodes(port: int) -> set[str]:
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != _TCP_LISTEN:
                continue
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def _pids_with_open(targets: set[str]) -> list[int]:
    """Processes with a descriptor whose link is one of ``targets`` (e.g. ``socket:[123]``)."""
    pids: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            for fd in os.scandir(f"/proc/{entry.name}/fd"):
                try:
                    if os.readlink(fd.path) in targets:
                        pids.append(int(entry.name))
                        break
                except OSError:
                    continue
        except OSError:  # gone, or not ours to look at
            continue
    return sorted(pids)


def port_holders(port: int) -> list[int]:
    """The processes listening on ``port`` (any address)."""
    inodes = _listening_socket_inodes(port)
    if not inodes:
        return []
    return _pids_with_open({f"socket:[{inode}]" for inode in inodes})


# -- log dir locks ---------------------------------------------------------------------------

def lock_held(path: Path) -> bool:
    """Whether another open file holds a ``flock`` on ``path`` (taking it and letting it go at
    once, as the broker would try to take it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def lock_holders(path: Path) -> list[int]:
    """The processes with a lock on ``path``, from /proc/locks (device and inode match)."""
    try:
        st = os.stat(path)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return []
    want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    pids: set[int] = set()
    for line in lines:
        fields = line.split()
        if "->" in fields:  # a waiter, not a holder
            continue
        if len(fields) < 6:
            continue
        try:
            major, minor, inode = fields[5].split(":")
            if (int(major, 16), int(minor, 16), int(inode)) == want:
                pids.add(int(fields[4]))
        except ValueError:
            continue
    return sorted(pids)


# -- what the configs name -------------------------------------------------------------------

def zookeeper_endpoint(zk_props: dict[str, str], config: str) -> Endpoint:
    port = int(zk_props.get("clientPort", "2181"))
    host = zk_props.get("clientPortAddress", "").strip()
    return Endpoint(f"ZooKeeper's clientPort in {config}", host, port)


def broker_endpoints(server_props: dict[str, str], config: str) -> list[Endpoint]:
    listeners = server_props.get("listeners")
    if listeners is None:
        port = server_props.get("port")
        listeners = DEFAULT_LISTENERS if port is None else \
            f"PLAINTEXT://{server_props.get('host.name', '')}:{port}"
    out = []
    for listener in filter(None, (x.strip() for x in listeners.split(","))):
        match = _LISTENER.match(listener)
        if not match:
            continue  # the broker itself names a malformed listener when it starts
        name, host, port = match.groups()
        out.append(Endpoint(f"the broker's listener {name} in {config}", host.strip("[]"), int(port)))
    return out


def broker_log_dirs(server_props: dict[str, str]) -> list[Path]:
    dirs = server_props.get("log.dirs") or server_props.get("log.dir") or DEFAULT_LOG_DIR
    return [Path(d.strip()) for d in dirs.split(",") if d.strip()]


def _bind_address(host: str) -> str:
    if host in ("", "0.0.0.0", "::"):
        return host
    try:
        return socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)[0][4][0]
    except socket.gaierror:
        return host


def _holders_text(pids: Iterable[int]) -> str:
    described = [process_description(p) for p in pids]
    return ", ".join(described) if described else "a process this user cannot see"


def problems(zookeeper_config: str | None, server_config: str) -> list[str]:
    """One line for each port in use and each locked log dir the configs name (no
    ZooKeeper config: a KRaft node, whose listeners include its controller listener)."""
    server_props = properties.load_file(server_config)
    endpoints = broker_endpoints(server_props, server_config)
    if zookeeper_config is not None:
        endpoints.insert(0, zookeeper_endpoint(properties.load_file(zookeeper_config), zookeeper_config))
    found = []
    for endpoint in endpoints:
        address = _bind_address(endpoint.host)
        try:
            taken = port_in_use(address, endpoint.port)
        except OSError:
            continue  # an address this machine does not have: the server reports it itself
        if taken:
            found.append(f"port {endpoint.port} ({endpoint.what}) is in use by "
                         f"{_holders_text(port_holders(endpoint.port))}")
    log_dirs = broker_log_dirs(server_props)
    metadata_log_dir = server_props.get("metadata.log.dir", "").strip()
    if metadata_log_dir and Path(metadata_log_dir) not in log_dirs:
        log_dirs.append(Path(metadata_log_dir))
    for log_dir in log_dirs:
        lock = log_dir / LOCK_FILE
        if lock_held(lock):
            found.append(f"log dir {log_dir} ({server_config}) is locked ({lock}) by "
                         f"{_holders_text(lock_holders(lock))}")
    return found


def formatted_cluster_id(server_config: str) -> str | None:
    """The cluster id in the meta.properties of the first of the config's log dirs (and
    metadata.log.dir) that has one: a quickstart formats the rest with it, not a new one."""
    server_props = properties.load_file(server_config)
    dirs = broker_log_dirs(server_props)
    metadata_log_dir = server_props.get("metadata.log.dir", "").strip()
    if metadata_log_dir:
        dirs.insert(0, Path(metadata_log_dir))
    for log_dir in dirs:
        meta = log_dir / "meta.properties"
        if meta.is_file():
            cluster_id = properties.load_file(str(meta)).get("cluster.id")
            if cluster_id:
                return cluster_id
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 2 and args[0] == "--cluster-id":
        # the quickstart's question: which cluster id the KRaft node's dirs already have
        cluster_id = formatted_cluster_id(args[1])
        if cluster_id:
            print(cluster_id)
        return 0
    kraft = len(args) == 2 and args[0] == "--kraft"
    if len(args) != 2:
        print("USAGE: python -m kafka_py.bin.quickstart_check zookeeper.properties server.properties\n"
              "       python -m kafka_py.bin.quickstart_check --kraft server.properties", file=sys.stderr)
        return 2
    try:
        found = problems(None, args[1]) if kraft else problems(args[0], args[1])
    except (OSError, ValueError) as e:
        print(f"Cannot read the configs: {e}", file=sys.stderr)
        return 1
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
