"""What the Spark jobs of kafka_py/spark share: building the session, common CLI options.

No Kafka counterpart. ``build_session`` gives a SparkSession with the ``kafka-log`` format
registered. Run through bin/kafka-log-to-parquet.sh or bin/kafka-log-summary.sh, the master
comes from spark-submit's ``--master``; run with ``python -m``, from the job's own
``--master`` (default ``local[*]``). Nothing else differs between a laptop and a cluster.
"""
from __future__ import annotations

import contextlib
import os
import sys
from typing import Iterable, Optional

import click

PROGRESS_CHOICES = ("bar", "spark", "none")

#: Where a batch export (bin/kafka-log-to-parquet.sh without --stream) keeps the offsets it
#: exported, in its output directory; a streaming export refuses an output that holds one.
STATE_FILE_NAME = "_kafka_log_export_state.json"


def build_session(app_name: str, master: Optional[str] = None, conf: Iterable[tuple[str, str]] = (),
                  progress: str = "bar"):
    """A SparkSession for a job (an existing one is reused) with ``kafka-log`` registered."""
    from pyspark.sql import SparkSession

    from kafka_py.spark import register

    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    if master is None or master.startswith("local"):
        # Local workers must run this interpreter (the one that has kafka_py); on a cluster
        # the executors' Python comes from PYSPARK_PYTHON or spark.pyspark.python.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = builder.config("spark.ui.showConsoleProgress", "true" if progress == "spark" else "false")
    # Spark's INFO lines would bury the table and the progress (overridable with --conf).
    builder = builder.config("spark.log.level", "WARN")
    for key, value in conf:
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    register(spark)
    return spark


def progress_context(spark, label: str, progress: str):
    """The progress display of a job's actions (``--progress``)."""
    if progress == "bar":
        from kafka_py.spark.progress import StageProgressBar

        return StageProgressBar(spark.sparkContext, label)
    return contextlib.nullcontext()


def parse_conf(values: Iterable[str]) -> list[tuple[str, str]]:
    pairs = []
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"--conf takes key=value, not {item!r}")
        pairs.append((key.strip(), value))
    return pairs


def common_options(fn):
    """--log-dir, --topic, --topic-pattern, --committed-only, --master, --conf, --progress."""
    options = [
        click.option("--log-dir", "log_dirs", multiple=True, required=True,
                     help="A broker log dir (an entry of log.dirs); repeat for several."),
        click.option("--topic", "topics", multiple=True, help="A topic to read; repeat for several (default: all)."),
        click.option("--topic-pattern", default=None, help="A regular expression whole topic names match."),
        click.option("--committed-only/--no-committed-only", default=False, show_default=True,
                     help="Stop at each partition's high watermark (replication-offset-checkpoint)."),
        click.option("--fail-on-data-loss/--no-fail-on-data-loss", default=True, show_default=True,
                     help="Fail on corrupt batches or missing offsets, or skip them with a warning."),
        click.option("--master", default=None,
                     help="Spark master, e.g. local[*] or spark://host:7077 (default: spark-submit's, else local[*])."),
        click.option("--conf", "conf", multiple=True, help="A Spark setting key=value; repeat for several."),
        click.option("--progress", type=click.Choice(PROGRESS_CHOICES), default="bar", show_default=True,
                     help="Own stage progress bar, Spark's console progress bar, or nothing."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def default_master(master: Optional[str]) -> Optional[str]:
    """The master to set: the given one; none under spark-submit, whose JVM (reached through
    PYSPARK_GATEWAY_PORT) already has spark.master; else local[*]."""
    if master:
        return master
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        return None
    return "local[*]"


def drop_script_dir_from_path(script: str) -> None:
    """spark-submit runs a job file as a script, which puts kafka_py/spark itself first on
    sys.path; its modules would then also import as top-level names (``options``...)."""
    here = os.path.dirname(os.path.abspath(script))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]


def user_error(exc: BaseException) -> Optional[str]:
    """The message of a kafka-log option or data-loss error, also when it reached the driver
    wrapped in a Spark exception (planning and reading run in Python workers), else None."""
    text = str(exc)
    for name in ("KafkaLogOptionsException", "KafkaLogDataLossException"):
        marker = f"{name}: "
        at = text.rfind(marker)
        if at >= 0:
            return text[at + len(marker):].strip().splitlines()[0]
    return None
