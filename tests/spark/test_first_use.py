"""The first snippet of docs/spark.md, run as written in a fresh Python process.

Nothing tells Spark which interpreter its workers run (no PYSPARK_PYTHON, and the first
``python3`` on PATH is the system's, which has no kafka_py): ``register`` must make the
source work anyway, from the repository root and from anywhere else. The only change to the
snippet is the log dir path."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

from tests.spark.conftest import TEST_JVM_OPTIONS
from tests.spark.log_builder import write_partition

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC_LOG_DIR = "/tmp/kafka-logs"


def first_python_snippet() -> str:
    text = (ROOT / "docs" / "spark.md").read_text()
    snippet = re.search(r"^```python\n(.*?)^```", text, re.S | re.M).group(1)
    assert "SparkSession.builder.master(\"local[*]\").getOrCreate()" in snippet
    assert "register(spark)" in snippet and DOC_LOG_DIR in snippet
    return snippet


def environment_without_worker_python() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYTHONPATH", "VIRTUAL_ENV")}
    # The system's python3 first: what Spark finds when nothing says otherwise.
    env["PATH"] = "/usr/bin:/bin:" + env.get("PATH", "")
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    # Only how the driver's JVM compiles (tests/spark/conftest.py), not how Spark is set up.
    env["PYSPARK_SUBMIT_ARGS"] = f"--driver-java-options {TEST_JVM_OPTIONS} pyspark-shell"
    return env


@pytest.fixture(scope="module")
def doc_log_dir(tmp_path_factory) -> pathlib.Path:
    log_dir = tmp_path_factory.mktemp("first-use") / "kafka-logs"
    log_dir.mkdir()
    write_partition(str(log_dir), "orders", 0, [100] * 15)
    write_partition(str(log_dir), "orders", 1, [10] * 4)
    write_partition(str(log_dir), "payments", 0, [7] * 3)
    return log_dir


@pytest.mark.parametrize("where", ["repository root", "elsewhere"])
def test_the_first_snippet_of_the_docs_runs_as_written(doc_log_dir, tmp_path, where):
    if not os.path.exists("/usr/bin/python3"):
        pytest.skip("no system python3 to stand for Spark's default worker interpreter")
    script = tmp_path / "snippet.py"
    script.write_text(first_python_snippet().replace(DOC_LOG_DIR, str(doc_log_dir)))
    cwd = ROOT if where == "repository root" else tmp_path
    done = subprocess.run([sys.executable, str(script)], cwd=cwd, env=environment_without_worker_python(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    rows = [line.split("|")[1:-1] for line in done.stdout.splitlines() if re.match(r"^\|\s*\w", line)]
    table = [[c.strip() for c in row] for row in rows]
    assert table == [["topic", "partition", "count"], ["orders", "0", "500"], ["orders", "1", "40"],
                     ["payments", "0", "21"]]


def test_a_worker_python_without_kafka_py_is_refused_with_what_to_set(doc_log_dir, tmp_path):
    if not os.path.exists("/usr/bin/python3"):
        pytest.skip("no system python3 without kafka_py")
    script = tmp_path / "snippet.py"
    script.write_text(first_python_snippet().replace(DOC_LOG_DIR, str(doc_log_dir)))
    env = dict(environment_without_worker_python(), PYSPARK_PYTHON="/usr/bin/python3")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("kafka_py.spark.worker_python.KafkaLogSetupException: Spark's Python workers "
                           "run /usr/bin/python3")
    assert "No module named 'kafka_py'" in last
    assert f"PYSPARK_PYTHON={sys.executable}" in last
