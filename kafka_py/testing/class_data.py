"""A class-data sharing archive for the ZooKeeper JVMs the fixtures start.

No Kafka counterpart: a start-up cut for test fixtures. A JVM spends most of a ZooKeeper
start loading and verifying its classes; a dynamic CDS archive of them (JDK 13+: written by
``-XX:ArchiveClassesAtExit`` as a JVM exits, mapped by ``-XX:SharedArchiveFile`` from then
on) takes a ZooKeeper start to serving from about 1.0 to 0.65 s on two cores.

The archive is made once per machine, per JDK and ZooKeeper jar, in the user's cache
directory (``$XDG_CACHE_HOME`` or ``~/.cache``, then ``kafka-py/class-data``), by a
ZooKeeper run of its own on a free loopback port (``make_zookeeper_archive``), which the first fixture that finds no archive starts in the background (that fixture's
ZooKeeper starts without one). It is written under a temporary name and renamed when
complete. The JVMs name it whether it exists yet or not: ``-Xlog:cds*=off`` keeps a missing
or unusable archive (another JDK, say) silent, the classes then loaded as usual.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ZOOKEEPER_CLASSPATH = ("/usr/share/java/zookeeper.jar", "/usr/share/java/slf4j-log4j12.jar",
                       "/usr/share/java/log4j-1.2.jar")
ZOOKEEPER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
# What the fixtures' ZooKeeper JVMs run with: a test's ZooKeeper holds a few znodes, and the
# JVM starts faster with a small heap and without the optimizing compiler's warm-up.
ZOOKEEPER_JVM_OPTIONS = ("-Xmx128M", "-Xms32M", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
# How long the archive's ZooKeeper run may take to serve
MAKE_TIMEOUT_S = 120.0


def cache_dir() -> pathlib.Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(pathlib.Path.home() / ".cache")
    return pathlib.Path(base) / "kafka-py" / "class-data"


def _stamp(path: str) -> str:
    real = os.path.realpath(path)
    try:
        return f"{real}:{os.stat(real).st_mtime_ns}"
    except OSError:
        return f"{real}:-"


def zookeeper_archive() -> pathlib.Path:
    """Where the archive of this JDK and ZooKeeper jar is (or will be)."""
    key = hashlib.sha1("|".join([_stamp(shutil.which("java") or "java"),
                                 *map(_stamp, ZOOKEEPER_CLASSPATH)]).encode()).hexdigest()[:16]
    return cache_dir() / f"zookeeper-{key}.jsa"


def sharing_options(archive: pathlib.Path) -> list[str]:
    return ["-Xlog:cds*=off", f"-XX:SharedArchiveFile={archive}"]


def start_making_zookeeper_archive() -> None:
    """Starts making the archive in the background, unless it exists or another process is
    making it; returns at once."""
    if zookeeper_archive().exists():
        return
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        lock = open(directory / "zookeeper.lock", "w")
    except OSError:
        return  # no cache directory to keep it in: the JVMs do without
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return
    # The child inherits the locked descriptor and holds the lock until it is done.
    # (-c, not -m: the package's __init__ imports this module before runpy would run it)
    code = "import sys; from kafka_py.testing.class_data import main; sys.exit(main())"
    subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(lock.fileno(),),
                     start_new_session=True, close_fds=True)
    lock.close()


def _serving(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
            sock.sendall(b"srvr")
            return b"Mode:" in sock.recv(4096)
    except OSError:
        return False


def make_zookeeper_archive() -> bool:
    """One ZooKeeper run that writes the archive as it exits; True if the archive is there."""
    target = zookeeper_archive()
    if target.exists():
        return True
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    with tempfile.TemporaryDirectory(prefix="kafka-py-class-data-") as work:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        config = pathlib.Path(work) / "zookeeper.properties"
        config.write_text(f"dataDir={work}/data\nclientPort={port}\nclientPortAddress=127.0.0.1\n"
                          "admin.enableServer=false\ntickTime=500\n4lw.commands.whitelist=srvr\n")
        argv = ["java", *ZOOKEEPER_JVM_OPTIONS, f"-XX:ArchiveClassesAtExit={temporary}",
                "-Dzookeeper.admin.enableServer=false", "-Dzookeeper.log.dir=" + work,
                "-cp", ":".join(ZOOKEEPER_CLASSPATH), ZOOKEEPER_MAIN, str(config)]
        process = subprocess.Popen(argv, cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + MAKE_TIMEOUT_S
            while not _serving(port):
                if process.poll() is not None or time.monotonic() > deadline:
                    return False
                time.sleep(0.05)  # a port to poll: nothing to wait on
            # SIGTERM: the JVM's orderly exit, which writes the archive
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=MAKE_TIMEOUT_S)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    if temporary.exists() and temporary.stat().st_size > 0:
        os.replace(temporary, target)
    temporary.unlink(missing_ok=True)
    return target.exists()


def main() -> int:
    return 0 if make_zookeeper_archive() else 1
