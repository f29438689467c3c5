"""bin/kafka-log-to-parquet.sh --stream: killed with SIGKILL mid-stream, restarted from its
checkpoint and stopped with Ctrl-C, then run to the end, the Parquet output holds every record
exactly once.

Each run of the script is a Spark start of its own (about half a minute on two cores), so the
test kills the stream once by default, after its first commit; KAFKA_PY_EXPORT_KILLS=N kills it
N times, each restarted stream again after 4 more commits (KAFKA_PY_EXPORT_KILLS=2: after 1 and
after 5), so that restarts of a killed restart run too. The run after the last kill is stopped
with Ctrl-C after one more commit, and a last run reads to the end."""
from __future__ import annotations

import os
import pathlib
import signal
import subprocess

from tests.integration.broker_harness import wait_until
from tests.spark.conftest import spark_script_env

ROOT = pathlib.Path(__file__).resolve().parents[2]
WAIT_S = 240
KILLS = int(os.environ.get("KAFKA_PY_EXPORT_KILLS", "1"))
SPARK_CONF = ["--master", "local[2]", "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.host=127.0.0.1",
              "--conf", "spark.sql.shuffle.partitions=2"]


def start_export(*args: str, log: pathlib.Path) -> subprocess.Popen:
    env = spark_script_env()
    # A session of its own, as a terminal's foreground job: signals go to the whole group
    # (spark-submit's JVM, the Python driver, its workers).
    return subprocess.Popen([str(ROOT / "bin" / "kafka-log-to-parquet.sh"), "--stream", *args, *SPARK_CONF],
                            cwd=ROOT, env=env, stdout=open(log, "ab"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def batches_in(checkpoint: pathlib.Path, kind: str) -> int:
    d = checkpoint / kind
    return len([n for n in os.listdir(d) if n.isdigit()]) if d.is_dir() else 0


def exported_offsets(spark, output: pathlib.Path) -> list[tuple[str, int, int]]:
    # Through the file sink's log (_spark_metadata): files of a cut-short micro-batch are not in it.
    df = spark.read.parquet(str(output))
    return [(r["topic"], int(r["partition"]), r["offset"]) for r in df.select("topic", "partition", "offset").collect()]


def test_sigkill_mid_stream_then_ctrl_c_then_a_restart_exports_every_record_exactly_once(
        spark, stream_data, tmp_path):
    topic = "killed-export"
    stream_data.create_topic(topic, 2)
    # 300 records a micro-batch, 4 batches past the last kill (after 1, 5, 9, ... commits), so
    # every kill still leaves batches for the next run to plan and commit
    kill_points = [1 + 4 * i for i in range(KILLS)]
    produced = stream_data.produce(topic, 300 * (kill_points[-1] + 3), 2, "snappy")
    stream_data.wait_for_high_watermarks()
    output, checkpoint, log = tmp_path / "out", tmp_path / "checkpoint", tmp_path / "export.log"
    common = ["--checkpoint", str(checkpoint), "--log-dir", stream_data.log_dir, "--output", str(output),
              "--topic", topic, "--max-offsets-per-trigger", "300"]

    def wait_for_commits(process: subprocess.Popen, commits: int) -> None:
        def far_enough() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"the export ended by itself:\n{log.read_text()[-3000:]}")
            return batches_in(checkpoint, "commits") >= commits

        wait_until(far_enough, WAIT_S, f"the stream never reached {commits} committed micro-batches", interval=0.1)

    for kill_after_commits in kill_points:
        process = start_export(*common, "--trigger", "100ms", log=log)
        try:
            wait_for_commits(process, kill_after_commits)
            # A micro-batch planned (its offsets written) but not yet committed, when it can be
            # caught: the hardest point to resume from.
            try:
                wait_until(lambda: batches_in(checkpoint, "offsets") > batches_in(checkpoint, "commits"), 10,
                           "", interval=0.01)
            except TimeoutError:
                pass
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)

    # Restarted from the killed run's checkpoint, the stream goes on; Ctrl-C then stops it
    # between micro-batches, cleanly.
    before_ctrl_c = log.stat().st_size
    process = start_export(*common, "--trigger", "100ms", log=log)
    try:
        wait_for_commits(process, kill_points[-1] + 1)
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=120) == 0, log.read_text()[-3000:]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    text = log.read_text()[before_ctrl_c:]
    assert "Streaming export stopped:" in text
    assert "Traceback" not in text
    so_far = exported_offsets(spark, output)
    assert len(so_far) == len(set(so_far)), "a record was exported twice"
    assert len(so_far) >= 300 * (kill_points[-1] + 1)

    # Run once more to the end of what is there, with records produced meanwhile, now asking
    # the broker for its high watermarks: the offsets in the checkpoint are the same either way.
    produced += stream_data.produce(topic, 50, 2, "none", start=len(produced))
    stream_data.wait_for_high_watermarks()
    process = start_export(*common, "--available-now", "--bootstrap-server", stream_data.broker.bootstrap, log=log)
    assert process.wait(timeout=WAIT_S) == 0, log.read_text()[-3000:]
    rows = exported_offsets(spark, output)
    assert len(rows) == len(set(rows)), "a record was exported twice"
    assert sorted(rows) == sorted((r.topic, r.partition, r.offset) for r in produced)


def test_stream_options_go_with_stream_only(stream_data, tmp_path):
    env = spark_script_env()
    done = subprocess.run([str(ROOT / "bin" / "kafka-log-to-parquet.sh"), "--log-dir", stream_data.log_dir,
                           "--output", str(tmp_path / "o"), "--checkpoint", str(tmp_path / "c")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    # spark-submit passes the driver's stderr on as its stdout.
    assert "Error: --checkpoint go with --stream" in done.stdout + done.stderr
