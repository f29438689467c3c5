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


def register(spark) -> None:
    """Register the ``kafka-log`` format with ``spark`` (a SparkSession)."""
    from kafka_py.spark.kafka_log_data_source import KafkaLogDataSource

    spark.dataSource.register(KafkaLogDataSource)


__all__ = ["FORMAT_NAME", "register"]
