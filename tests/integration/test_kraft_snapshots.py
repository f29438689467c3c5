"""KRaft metadata snapshots end to end (KIP-630): a combined node with a small
``metadata.log.max.record.bytes.between.snapshots`` writes snapshots while topics are created
and deleted, the metadata log's start moves onto one and old segments go; after a restart
the controller and the broker load the snapshot, replay the log after it, and serve the same
topics."""
from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess

from tests.integration.broker_harness import ROOT, port_open, wait_until
from tests.integration.kraft_harness import UNFENCED, combined_node_config, read_text, run_tool

SNAPSHOT_SETTINGS = """
metadata.log.max.record.bytes.between.snapshots=1500
metadata.log.segment.min.bytes=1024
metadata.log.segment.bytes=4096
metadata.max.retention.bytes=1
"""


def _start(config: pathlib.Path, output: pathlib.Path, tmp_path: pathlib.Path) -> subprocess.Popen:
    with open(output, "ab") as out:
        return subprocess.Popen([str(ROOT / "bin" / "kafka-server-start.sh"), str(config)], cwd=ROOT,
                                stdout=out, stderr=subprocess.STDOUT,
                                env=dict(os.environ, LOG_DIR=str(tmp_path / "logs")))


def _stop(server: subprocess.Popen) -> int:
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
    return server.wait(timeout=90)


def _metadata_files(metadata_dir: pathlib.Path) -> tuple[list[int], list[str]]:
    """(base offsets of the segments, names of the frozen snapshots)."""
    names = os.listdir(metadata_dir)
    segments = sorted(int(n[:-4]) for n in names if re.fullmatch(r"\d{20}\.log", n))
    checkpoints = sorted(n for n in names if n.endswith(".checkpoint"))
    return segments, checkpoints


def test_combined_node_snapshots_its_metadata_and_restarts_from_a_snapshot(tmp_path):
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    config, port, log_dir = combined_node_config(tmp_path)
    config.write_text(config.read_text() + SNAPSHOT_SETTINGS)
    cluster_id = run_tool(str(ROOT / "bin" / "kafka-storage.sh"), "random-uuid").stdout.strip()
    assert run_tool(str(ROOT / "bin" / "kafka-storage.sh"), "format", "-t", cluster_id, "-c", str(config)).returncode == 0
    metadata_dir = log_dir / "@metadata-0"
    output = tmp_path / "server.out"

    server = _start(config, output, tmp_path)
    admin = None
    kept = [f"kept-{i}" for i in range(4)]
    try:
        def serving() -> bool:
            assert server.poll() is None, read_text(output)[-3000:]
            return UNFENCED in read_text(output) and port_open(port)

        wait_until(serving, 90, "the combined node did not start")
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}", request_timeout_ms=20000)
        admin.create_topics([NewTopic(name, 2, 1) for name in kept])

        # Churn until a snapshot exists and the log no longer starts at 0 (bounded).
        moved = False
        for i in range(300):
            name = f"churn-{i}"
            admin.create_topics([NewTopic(name, 1, 1)])
            admin.delete_topics([name])
            segments, checkpoints = _metadata_files(metadata_dir)
            if checkpoints and segments and segments[0] > 0:
                moved = True
                break
        assert moved, (_metadata_files(metadata_dir), read_text(output)[-3000:])
        wait_until(lambda: not any(n.startswith("churn-") for n in admin.list_topics()), 30,
                   "the churned topics were not all deleted")
        topics_before = sorted(t for t in admin.list_topics() if not t.startswith("__"))
        assert topics_before == sorted(kept)
        admin.close()
        admin = None
    finally:
        if admin is not None:
            admin.close()
        code = _stop(server)
    assert code == 0, read_text(output)[-3000:]
    segments, checkpoints = _metadata_files(metadata_dir)
    assert checkpoints and segments[0] > 0
    text_before_restart = read_text(output)
    assert "Generating a snapshot" in text_before_restart

    server = _start(config, output, tmp_path)
    admin = None
    try:
        def serving_again() -> bool:
            assert server.poll() is None, read_text(output)[-3000:]
            return read_text(output).count(UNFENCED) >= 2 and port_open(port)

        wait_until(serving_again, 90, "the restarted node did not start")
        restart_log = read_text(output)[len(text_before_restart):]
        # both the controller and the broker started from the snapshot, not from offset 0
        assert "Starting to replay snapshot" in restart_log, restart_log[-3000:]
        assert "Loading snapshot" in restart_log, restart_log[-3000:]
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}", request_timeout_ms=20000)
        wait_until(lambda: sorted(t for t in admin.list_topics() if not t.startswith("__")) == sorted(kept), 30,
                   "the restarted node does not serve the same topics")
        described = admin.describe_topics(kept)
        assert all(len(t["partitions"]) == 2 for t in described), described
        # and it still takes changes
        admin.create_topics([NewTopic("after-restart", 1, 1)])
        wait_until(lambda: "after-restart" in admin.list_topics(), 30, "a topic created after the restart")
    finally:
        if admin is not None:
            admin.close()
        code = _stop(server)
    assert code == 0, read_text(output)[-3000:]
    assert "Traceback" not in read_text(output), read_text(output)[-5000:]
