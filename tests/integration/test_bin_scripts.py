"""bin/kafka-server-start.sh (-daemon, --override), bin/kafka-server-stop.sh and
bin/zookeeper-server-stop.sh."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.integration.broker_harness import ROOT, wait_until


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
    """A process whose command line reads like a server's (``... kafka_py.kafka <config>``), so the
    stop scripts select it, without starting one."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", marker, config])


@pytest.mark.parametrize("script, marker, nothing", [
    ("kafka-server-stop.sh", "kafka_py.kafka", "No kafka server to stop"),
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
