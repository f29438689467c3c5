"""Chooses the interpreter Spark's Python workers run for the ``kafka-log`` source, and checks it.

No Kafka counterpart. Spark runs the Python side of a data source (planning on the driver,
reading and writing on the executors) in worker processes started with ``PYSPARK_PYTHON``
(or ``spark.pyspark.python`` under spark-submit), and with plain ``python3`` from PATH when
neither is set: not the virtualenv the driver runs in, so those workers cannot import
kafka_py. ``worker_python`` settles which interpreter the source's workers use:

* one named by ``PYSPARK_PYTHON`` or ``spark.pyspark.python`` is used as it is, after checking
  that it can import the source (a subprocess on a local master, a one-task Spark job on a
  cluster);
* with nothing set and a local master, the driver's own interpreter: it has imported kafka_py
  already, and local workers run on the same machine;
* with nothing set and a cluster master, Spark's default, checked like a named one.

A check that fails raises ``KafkaLogSetupException`` saying what to set.
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
from typing import Optional

logger = logging.getLogger(__name__)

#: What a worker must be able to import: the reader's executor side pulls in the broker's
#: record and log modules (mapped into kafka_py by setup.py), pyarrow and, for the sink,
#: confluent_kafka lazily; this covers the first two.
_PROBE_IMPORTS = "import kafka_py.spark.segment_reader"
_PROBE_TIMEOUT_S = 120


class KafkaLogSetupException(RuntimeError):
    """Spark's Python workers cannot run the kafka-log source."""


def _configured_python(spark) -> Optional[str]:
    conf = spark.sparkContext.getConf()
    return conf.get("spark.pyspark.python", None) or os.environ.get("PYSPARK_PYTHON") or None


def _is_local(spark) -> bool:
    return spark.sparkContext.master.startswith("local")


def _same_interpreter(python: str) -> bool:
    try:
        resolved = python if os.path.sep in python else None
        if resolved is None:
            from shutil import which

            resolved = which(python)
        return resolved is not None and os.path.realpath(resolved) == os.path.realpath(sys.executable)
    except OSError:
        return False


def _local_import_error(python: str) -> Optional[str]:
    """Why ``python`` cannot import the source on this machine, or None when it can."""
    if _same_interpreter(python):
        return None
    try:
        done = subprocess.run([python, "-c", _PROBE_IMPORTS], capture_output=True, text=True,
                              timeout=_PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{type(e).__name__}: {e}"
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {done.returncode}"


def _cluster_import_error(spark, python: str) -> Optional[str]:
    """Why an executor's ``python`` cannot import the source, or None (a one-task job)."""
    # The probe must not be pickled by reference to a kafka_py module: the point is to find
    # out whether the executor can import one. A function whose module is not importable is
    # pickled by value.
    probe = eval(  # noqa: S307 - a constant expression, compiled to get a module-less function
        "lambda _: __import__('importlib').import_module('kafka_py.spark.segment_reader') and None",
        {"__name__": "kafka_py_worker_probe"})

    def checked(_):
        try:
            probe(_)
            return None
        except BaseException as e:  # noqa: BLE001 - the reason is the answer
            return f"{type(e).__name__}: {e}"

    checked.__module__ = "kafka_py_worker_probe"
    sc = spark.sparkContext
    previous = sc.pythonExec
    sc.pythonExec = python
    try:
        results = sc.parallelize([0], 1).map(checked).collect()
    except Exception as e:  # noqa: BLE001 - a worker that cannot even start is the same answer
        text = str(e)
        marker = "Error: "
        return text[text.rfind(marker) - 30:].splitlines()[0] if marker in text else text.splitlines()[0]
    finally:
        sc.pythonExec = previous
    return results[0] if results else None


def worker_python(spark, check: bool = True) -> str:
    """The interpreter the kafka-log source's workers run (see the module docstring)."""
    configured = _configured_python(spark)
    local = _is_local(spark)
    if configured is None and local:
        return sys.executable
    python = configured or spark.sparkContext.pythonExec
    if not check:
        return python
    error = _local_import_error(python) if local else _cluster_import_error(spark, python)
    if error is not None:
        origin = ("as PYSPARK_PYTHON or spark.pyspark.python says" if configured
                  else "Spark's default when neither PYSPARK_PYTHON nor spark.pyspark.python is set")
        raise KafkaLogSetupException(
            f"Spark's Python workers run {python} ({origin}), which cannot import kafka_py's Spark "
            f"source: {error}. Set PYSPARK_PYTHON (before the SparkSession is created) or the Spark "
            f"setting spark.pyspark.python to an interpreter that has kafka-py and its spark extra "
            f"installed on every node, e.g. PYSPARK_PYTHON={sys.executable}")
    return python
