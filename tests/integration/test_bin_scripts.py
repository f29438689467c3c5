"""bin/kafka-server-start.sh (-daemon, --override) and bin/kafka-server-stop.sh."""
from __future__ import annotations

import os
import subprocess

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
    subprocess.run([str(ROOT / "bin" / "kafka-server-start.sh"), "-daemon", str(broker.config_path),
                    "--override", "num.io.threads=3"], check=True, env=env, timeout=120)
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
