"""kafka_py/bin/quickstart_check.py: the ports and log dir locks bin/kafka-quickstart.sh checks
first, and the processes it names as their holders (sockets and locks of this test process)."""
from __future__ import annotations

import fcntl
import os
import pathlib
import socket
import subprocess
import sys
import time

from kafka_py.bin.quickstart_check import (
    broker_endpoints,
    broker_log_dirs,
    lock_held,
    lock_holders,
    main,
    port_holders,
    port_in_use,
    problems,
    process_description,
)


def _listening(host: str = "127.0.0.1") -> socket.socket:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, 0))
    s.listen()
    return s


def test_a_listening_port_is_in_use_and_its_holder_is_found() -> None:
    with _listening() as s:
        port = s.getsockname()[1]
        assert port_in_use("127.0.0.1", port)
        assert port_in_use("", port)  # the wildcard address a server would bind conflicts too
        assert os.getpid() in port_holders(port)
    assert not port_in_use("127.0.0.1", port)
    assert port_holders(port) == []


def test_a_connection_left_in_time_wait_does_not_count_as_in_use() -> None:
    with _listening() as server:
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = server.accept()
        accepted.close()  # the server side closes first: its end waits in TIME_WAIT
        client.close()
    assert not port_in_use("127.0.0.1", port)


def test_a_flocked_log_dir_is_held_and_its_holder_is_found(tmp_path) -> None:
    lock = tmp_path / ".lock"
    assert not lock_held(lock)  # no file: nothing holds it
    lock.write_text("")
    assert not lock_held(lock)
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as LogManager's FileLock takes it
        assert lock_held(lock)
        assert lock_holders(lock) == [os.getpid()]
        assert lock_held(lock)  # looking did not release it
    finally:
        os.close(fd)
    assert not lock_held(lock)
    assert lock_holders(lock) == []


def test_what_the_configs_name() -> None:
    assert [(e.host, e.port) for e in broker_endpoints({}, "s")] == [("", 9092)]
    assert [(e.host, e.port) for e in broker_endpoints(
        {"listeners": "PLAINTEXT://localhost:9093, SSL://[::1]:9094,INTERNAL://:9095"}, "s")] == [
        ("localhost", 9093), ("::1", 9094), ("", 9095)]
    assert [(e.host, e.port) for e in broker_endpoints({"port": "9099", "host.name": "h"}, "s")] == [("h", 9099)]
    assert [str(d) for d in broker_log_dirs({})] == ["/tmp/kafka-logs"]
    assert [str(d) for d in broker_log_dirs({"log.dir": "/a"})] == ["/a"]
    assert [str(d) for d in broker_log_dirs({"log.dirs": "/a, /b", "log.dir": "/c"})] == ["/a", "/b"]


def test_problems_name_the_taken_port_and_the_locked_dir_with_their_holder(tmp_path) -> None:
    log_dir = tmp_path / "kafka-logs"
    log_dir.mkdir()
    (log_dir / ".lock").write_text("")
    zk_config, server_config = tmp_path / "zookeeper.properties", tmp_path / "server.properties"
    with _listening() as zk, _listening() as free_later:
        free_port = free_later.getsockname()[1]
        free_later.close()
        zk_config.write_text(f"clientPort={zk.getsockname()[1]}\nclientPortAddress=127.0.0.1\n")
        server_config.write_text(f"listeners=PLAINTEXT://127.0.0.1:{free_port}\nlog.dirs={log_dir}\n")
        fd = os.open(log_dir / ".lock", os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            found = problems(str(zk_config), str(server_config))
        finally:
            os.close(fd)
        me = f"pid {os.getpid()} ("
        assert len(found) == 2, found
        assert found[0].startswith(f"port {zk.getsockname()[1]} (ZooKeeper's clientPort in {zk_config}) is in use by "
                                   f"{me}")
        assert found[1].startswith(f"log dir {log_dir} ({server_config}) is locked ({log_dir}/.lock) by {me}")
    assert problems(str(zk_config), str(server_config)) == []
    assert main([str(zk_config), str(server_config)]) == 0


def test_the_command_exits_1_and_says_so_on_stderr(tmp_path) -> None:
    with _listening() as s:
        port = s.getsockname()[1]
        zk_config, server_config = tmp_path / "zk.properties", tmp_path / "server.properties"
        zk_config.write_text(f"clientPort={port}\n")
        server_config.write_text(f"log.dirs={tmp_path / 'logs'}\nlisteners=PLAINTEXT://127.0.0.1:1\n")
        result = subprocess.run([sys.executable, "-m", "kafka_py.bin.quickstart_check", str(zk_config),
                                 str(server_config)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"port {port} (ZooKeeper's clientPort")


def test_a_jvm_is_described_by_its_main_class_and_arguments() -> None:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "-Dsome.option=1", "-cp",
                                "/a.jar:/b.jar", "org.example.Main", "/x/zookeeper.properties"])
    try:
        deadline = time.monotonic() + 10
        while not pathlib.Path(f"/proc/{process.pid}/cmdline").read_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)  # until the exec has set its command line
        described = process_description(process.pid)
    finally:
        process.kill()
        process.wait()
    assert described == (f"pid {process.pid} ({sys.executable} -c import time; time.sleep(30) org.example.Main "
                         "/x/zookeeper.properties)")


def test_a_kraft_node_is_checked_without_zookeeper_and_its_metadata_log_dir_too(tmp_path) -> None:
    log_dir, metadata_dir = tmp_path / "logs", tmp_path / "metadata"
    metadata_dir.mkdir()
    (metadata_dir / ".lock").write_text("")
    server_config = tmp_path / "server.properties"
    with _listening() as controller:
        port = controller.getsockname()[1]
        server_config.write_text(f"process.roles=broker,controller\nlisteners=CONTROLLER://127.0.0.1:"
                                 f"{port}\nlog.dirs={log_dir}\nmetadata.log.dir={metadata_dir}\n")
        fd = os.open(metadata_dir / ".lock", os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            found = problems(None, str(server_config))
        finally:
            os.close(fd)
    assert len(found) == 2, found
    assert found[0].startswith(f"port {port} (the broker's listener CONTROLLER in ")
    assert found[1].startswith(f"log dir {metadata_dir} ")
    assert main(["--kraft", str(server_config)]) == 0


def test_the_cluster_id_of_a_formatted_kraft_node_is_found_for_the_rest_of_its_dirs(tmp_path, capsys) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    second.mkdir()
    server_config = tmp_path / "server.properties"
    server_config.write_text(f"process.roles=broker,controller\nlog.dirs={first},{second}\n")
    assert main(["--cluster-id", str(server_config)]) == 0
    assert capsys.readouterr().out == ""  # nothing formatted yet: the quickstart makes a new id
    (second / "meta.properties").write_text("version=1\ncluster.id=ZRqnX7WtQJm3nUhxJ7Kk6g\nnode.id=1\n")
    assert main(["--cluster-id", str(server_config)]) == 0
    assert capsys.readouterr().out == "ZRqnX7WtQJm3nUhxJ7Kk6g\n"
