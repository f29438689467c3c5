"""bin/kafka-server-start.sh (-daemon, --override), bin/kafka-server-stop.sh,
bin/zookeeper-server-stop.sh and bin/kafka-quickstart.sh."""
from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from tests.integration.broker_harness import ROOT, BrokerProcess, free_port, wait_until


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie has exited too
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] != "Z"


def test_daemon_start_with_override_then_stop(broker_factory, tmp_path):
    broker = broker_factory()
    env = dict(os.environ, LOG_DIR=str(tmp_path / "logs"))
    # started with the file named relatively, stopped below by its absolute path
    subprocess.run([str(ROOT / "bin" / "kafka-server-start.sh"), "-daemon", broker.config_path.name,
                    "--override", "num.io.threads=3"], check=True, env=env, timeout=120,
                   cwd=broker.config_path.parent)
    pid = int((tmp_path / "logs" / "kafkaServer.pid").read_text())
    output = tmp_path / "logs" / "kafkaServer.out"

    def logged() -> str:
        # the daemon's shell creates the file just after writing the pid file
        return output.read_text(errors="replace") if output.exists() else ""

    try:
        wait_until(lambda: "[KafkaServer id=0] started" in logged(), 60,
                   "daemon broker did not start")
        wait_until(lambda: broker.registration() is not None, 30, "daemon broker not registered")
        assert "num.io.threads = 3" in logged()
        result = subprocess.run([str(ROOT / "bin" / "kafka-server-stop.sh"), str(broker.config_path)],
                                env=env, timeout=60, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
        wait_until(lambda: not _running(pid), 60, "broker did not stop on SIGTERM")
    finally:
        if _running(pid):
            os.kill(pid, 9)
    assert "[KafkaServer id=0] shut down completed" in logged()
    assert (broker.log_dir / ".kafka_cleanshutdown").exists()
    # nothing left to stop
    result = subprocess.run([str(ROOT / "bin" / "kafka-server-stop.sh"), str(broker.config_path)],
                            env=env, timeout=60, capture_output=True, text=True)
    assert result.returncode == 1 and "No kafka server to stop" in result.stdout


def _fake_server(marker: str, config: str) -> subprocess.Popen:
    """A process whose command line reads like a server's (``... kafka_py.core.kafka <config>``), so the
    stop scripts select it, without starting one."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", marker, config])


@pytest.mark.parametrize("script, marker, nothing", [
    ("kafka-server-stop.sh", "kafka_py.core.kafka", "No kafka server to stop"),
    ("zookeeper-server-stop.sh", "org.apache.zookeeper.server.quorum.QuorumPeerMain", "No zookeeper server to stop"),
])
def test_stop_script_with_a_config_file_stops_only_the_server_started_with_it(tmp_path, script, marker, nothing):
    (tmp_path / "conf").mkdir()
    a, b = tmp_path / "conf" / "a.properties", tmp_path / "conf" / "b.properties"
    a.write_text("")
    b.write_text("")
    servers = {a: _fake_server(marker, str(a)), b: _fake_server(marker, str(b))}
    stop = str(ROOT / "bin" / script)
    try:
        # the file named relatively (from its own directory) is the same file
        first = subprocess.run([stop, "a.properties"], cwd=tmp_path / "conf", capture_output=True, text=True,
                               timeout=60)
        assert first.returncode == 0, first.stdout + first.stderr
        assert servers[a].wait(timeout=30) == -signal.SIGTERM
        assert servers[b].poll() is None, "a server started with another config file was stopped"
        # $SIGNAL picks the signal, as in Kafka's script
        second = subprocess.run([stop, str(tmp_path / "conf" / ".." / "conf" / "b.properties")],
                                env=dict(os.environ, SIGNAL="KILL"), capture_output=True, text=True, timeout=60)
        assert second.returncode == 0, second.stdout + second.stderr
        assert servers[b].wait(timeout=30) == -signal.SIGKILL
        none_left = subprocess.run([stop, str(a)], capture_output=True, text=True, timeout=60)
        assert (none_left.returncode, none_left.stdout) == (1, f"{nothing}\n")
    finally:
        for process in servers.values():
            if process.poll() is None:
                process.kill()
                process.wait()


# -- bin/kafka-quickstart.sh -----------------------------------------------------------------

ZOOKEEPER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"


def _pids_with_argument(argument: str, marker: str) -> list[int]:
    """The running servers (``marker``: the broker's module, ZooKeeper's main class) given ``argument``."""
    pids = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argument.encode() in args and marker.encode() in args and _running(int(entry.name)):
                pids.append(int(entry.name))
    return pids


def _quickstart_configs(tmp_path: pathlib.Path, zk_tick_time: str = "tickTime=500\n",
                        **broker_overrides: str) -> tuple[pathlib.Path, BrokerProcess]:
    zk_port = free_port()
    zk_config = tmp_path / "zookeeper.properties"
    zk_config.write_text(f"dataDir={tmp_path / 'zookeeper'}\nclientPort={zk_port}\nclientPortAddress=127.0.0.1\n"
                         f"maxClientCnxns=0\nadmin.enableServer=false\n{zk_tick_time}")
    broker = BrokerProcess(tmp_path / "broker", f"127.0.0.1:{zk_port}", "", overrides=broker_overrides)
    return zk_config, broker


def test_quickstart_refuses_a_second_run_then_ctrl_c_through_a_pipe_stops_both(tmp_path):
    zk_config, broker = _quickstart_configs(tmp_path)
    quickstart = ROOT / "bin" / "kafka-quickstart.sh"
    log = tmp_path / "quickstart.log"
    log.write_text("")
    env = dict(os.environ, LOG_DIR=str(tmp_path / "logs"))
    # as typed in a terminal: the script and tee in one process group, which Ctrl-C signals.
    # SIGINT at its default, as a terminal's shell leaves it: a suite started in the
    # background of a non-interactive shell inherits it ignored, and bash cannot trap a
    # signal that was ignored when it started.
    first = subprocess.Popen(
        ["bash", "-c", f"'{quickstart}' '{zk_config}' '{broker.config_path}' 2>&1 | tee '{log}'"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    zk_pids: list[int] = []
    broker_pids: list[int] = []
    try:
        wait_until(lambda: "[KafkaServer id=0] started" in log.read_text(errors="replace"), 90,
                   "the quickstart's broker did not start")
        zk_pids = _pids_with_argument(str(zk_config), ZOOKEEPER_MAIN)
        broker_pids = _pids_with_argument(str(broker.config_path), "kafka_py.core.kafka")
        assert len(zk_pids) == 1 and len(broker_pids) == 1, (zk_pids, broker_pids)
        text = log.read_text(errors="replace")
        assert f"INFO binding to port /127.0.0.1:{broker.zk_hosts.split(':')[1]}" in text  # ZooKeeper's own log

        # A second quickstart with the same configs starts nothing and names what holds them.
        second = subprocess.run([str(quickstart), str(zk_config), str(broker.config_path)], env=env,
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 1, second.stdout + second.stderr
        lines = second.stderr.splitlines()
        zk_port = broker.zk_hosts.split(":")[1]
        assert any(line.startswith(f"port {zk_port} (ZooKeeper's clientPort") and f"pid {zk_pids[0]} (java" in line
                   and "QuorumPeerMain" in line for line in lines), lines
        assert any(line.startswith(f"port {broker.port} (the broker's listener PLAINTEXT")
                   and f"pid {broker_pids[0]} (" in line and "kafka_py.core.kafka" in line for line in lines), lines
        assert any(line.startswith(f"log dir {broker.log_dir} ") and f"is locked ({broker.log_dir}/.lock) by pid "
                   f"{broker_pids[0]} (" in line for line in lines), lines
        assert "zookeeper is serving" not in second.stdout + second.stderr
        assert _pids_with_argument(str(zk_config), ZOOKEEPER_MAIN) == zk_pids

        # Ctrl-C: SIGINT to the pipeline's process group stops tee too, and with it the
        # script's output; the broker and then ZooKeeper are stopped all the same.
        os.killpg(first.pid, signal.SIGINT)
        first.wait(timeout=120)
        wait_until(lambda: not any(_running(p) for p in zk_pids + broker_pids), 60,
                   "the quickstart left a server running")
        assert (broker.log_dir / ".kafka_cleanshutdown").exists(), "the broker was not shut down cleanly"
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
        for pid in zk_pids + broker_pids:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def test_quickstart_stops_zookeeper_and_fails_when_the_broker_does(tmp_path):
    zk_config, broker = _quickstart_configs(tmp_path, **{"num.io.threads": "0"})
    result = subprocess.run([str(ROOT / "bin" / "kafka-quickstart.sh"), str(zk_config), str(broker.config_path)],
                            env=dict(os.environ, LOG_DIR=str(tmp_path / "logs")), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "num.io.threads" in result.stdout + result.stderr
    assert "the broker exited with status 1" in result.stderr
    wait_until(lambda: not _pids_with_argument(str(zk_config), ZOOKEEPER_MAIN), 30, "ZooKeeper was left running")


def _start_quickstart(quickstart: pathlib.Path, zk_config: pathlib.Path, broker: BrokerProcess,
                      log: pathlib.Path, env: dict[str, str]) -> subprocess.Popen:
    log.write_text("")
    return subprocess.Popen(
        ["bash", "-c", f"'{quickstart}' '{zk_config}' '{broker.config_path}' >> '{log}' 2>&1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)


def test_quickstart_serves_again_after_its_broker_was_killed(tmp_path):
    """kill -9 of the quickstart's broker leaves its session (and /brokers/ids/0) in
    ZooKeeper's data dir; the next quickstart's broker waits for that session to expire
    instead of exiting on NODEEXISTS, and serves."""
    from kafka import KafkaProducer

    # As shipped: ZooKeeper's default tick (3 s) and the broker's default session timeout.
    zk_config, broker = _quickstart_configs(tmp_path, zk_tick_time="",
                                            **{"zookeeper.session.timeout.ms": "18000"})
    quickstart = ROOT / "bin" / "kafka-quickstart.sh"
    env = dict(os.environ, LOG_DIR=str(tmp_path / "logs"))
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = _start_quickstart(quickstart, zk_config, broker, first_log, env)
    second = None
    try:
        wait_until(lambda: "[KafkaServer id=0] started" in first_log.read_text(errors="replace"), 90,
                   "the quickstart's broker did not start")
        broker_pids = _pids_with_argument(str(broker.config_path), "kafka_py.core.kafka")
        assert len(broker_pids) == 1, broker_pids
        os.kill(broker_pids[0], signal.SIGKILL)
        # The quickstart stops ZooKeeper when its broker exits; the dead session stays on disk.
        assert first.wait(timeout=60) != 0
        wait_until(lambda: not _pids_with_argument(str(zk_config), ZOOKEEPER_MAIN), 30, "ZooKeeper still running")

        second = _start_quickstart(quickstart, zk_config, broker, second_log, env)
        producer = None
        deadline = time.monotonic() + 40

        def acked() -> bool:
            nonlocal producer
            text = second_log.read_text(errors="replace")
            assert second.poll() is None, f"the second quickstart exited:\n{text[-3000:]}"
            if "[KafkaServer id=0] started" not in text:
                return False
            if producer is None:
                producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1, request_timeout_ms=5000,
                                         max_block_ms=5000)
            metadata = producer.send("after-the-crash", b"served").get(timeout=max(1.0, deadline - time.monotonic()))
            return metadata.offset == 0

        try:
            wait_until(acked, 40, "no record acked within 40 s of the second quickstart")
        finally:
            if producer is not None:
                producer.close(timeout=5)
        text = second_log.read_text(errors="replace")
        # It said why it waited, naming the holder's session and data.
        assert "/brokers/ids/0 is held by ZooKeeper session 0x" in text, text[-3000:]
        assert f"PLAINTEXT://127.0.0.1:{broker.port}" in text
        assert "went away (session 0x" in text
        os.killpg(second.pid, signal.SIGINT)
        second.wait(timeout=120)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
        for pid in (_pids_with_argument(str(zk_config), ZOOKEEPER_MAIN)
                    + _pids_with_argument(str(broker.config_path), "kafka_py.core.kafka")):
            os.kill(pid, signal.SIGKILL)


def test_a_second_live_broker_with_the_same_id_is_refused_naming_the_first(broker_factory):
    first = broker_factory().start()
    duplicate = broker_factory(chroot=first.chroot)
    duplicate.start(wait=False)
    # It waits out a session timeout plus a margin for the registration to be a leftover.
    code = duplicate.process.wait(timeout=120)
    output = duplicate.output()
    assert code != 0, output[-3000:]
    assert (f"broker.id 0 is in use by another live broker with endpoints PLAINTEXT://127.0.0.1:{first.port}"
            in output), output[-3000:]
    # The first broker keeps its registration and serves.
    assert first.registration()["endpoints"] == [f"PLAINTEXT://127.0.0.1:{first.port}"]
    assert first.knows_itself()
