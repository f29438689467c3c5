"""A PySpark data source over Kafka segment files, and the jobs built on it (no Kafka counterpart).

``register(spark)`` makes ``spark.read.format("kafka-log").load(log_dir)`` available: a
broker's log dirs (kafka-py's, or any Kafka 2.x broker's) read in parallel into a DataFrame
with the schema of Spark's Kafka source, without a broker in the way. The jobs
``kafka_py.spark.export_job`` (topics to Parquet, incrementally) and
``kafka_py.spark.summary_job`` (a table per topic-partition) run on ``local[*]`` or a cluster.
See docs/spark.md.

Importing this package needs neither pyspark nor pyarrow; ``register`` needs both.
"""
from __future__ import annotations

FORMAT_NAME = "kafka-log"


def register(spark, check_workers: bool = True) -> None:
    """Register the ``kafka-log`` format with ``spark`` (a SparkSession).

    The source's Python workers run the interpreter ``worker_python.worker_python`` picks: the
    driver's own on a local master when PYSPARK_PYTHON and spark.pyspark.python are unset,
    else the configured one, checked to import kafka_py (``check_workers``); a failed check
    raises ``KafkaLogSetupException`` naming what to set.
    """
    from kafka_py.spark.kafka_log_data_source import KafkaLogDataSource
    from kafka_py.spark.worker_python import worker_python

    python = worker_python(spark, check=check_workers)
    sc = spark.sparkContext
    # Spark stamps the interpreter into the registered source's function when it is
    # registered; the session's own default (used by the caller's UDFs) is left as it was.
    previous = sc.pythonExec
    sc.pythonExec = python
    try:
        spark.dataSource.register(KafkaLogDataSource)
    finally:
        sc.pythonExec = previous
    activate(spark)


def activate(spark) -> None:
    """Make ``spark`` the active session of the calling thread, for writes in ``kafka-log``.

    Spark looks a Python data source up for a write (``df.write.format(...)``,
    ``writeStream.format(...).start()``) through the calling thread's active session in the
    JVM rather than the DataFrame's, and a Python thread other than the one that built the
    session has none: its write fails with DATA_SOURCE_NOT_FOUND although the format is
    registered. Reads find the format either way.
    """
    spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)


__all__ = ["FORMAT_NAME", "activate", "register"]
