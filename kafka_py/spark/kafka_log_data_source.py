"""The ``kafka-log`` Spark data source: a broker's log dirs read as Spark's Kafka source reads a topic.

No Kafka counterpart: a PySpark Python Data Source (pyspark.sql.datasource, Spark 4) whose
rows have exactly the schema of Spark's Kafka source (KafkaRecordToRowConverter.scala of
spark-sql-kafka-0-10)::

    key binary, value binary, topic string, partition int, offset long,
    timestamp timestamp, timestampType int[, headers array<struct<key string, value binary>>]

Usage::

    from kafka_py.spark import register
    register(spark)
    df = (spark.read.format("kafka-log")
          .option("subscribe", "orders")
          .option("startingOffsets", '{"orders": {"0": 1000}}')
          .load("/var/lib/kafka/data"))

The DataSourceReader is built where Spark plans the scan. Reading log dirs (a path given),
``partitions()`` lists them and plans one input partition per segment (or per byte range of a
large one) with kafka_py/spark/log_dir_planner.py, and each executor's ``read()``
(kafka_py/spark/segment_reader.py) reads its byte range by path. Reading through the brokers
(``kafka.bootstrap.servers`` and no path, or ``readFrom=brokers``), ``partitions()`` asks the
cluster (kafka_py/spark/broker_planner.py) and plans one input partition per topic-partition's
offset range, which the executor fetches from the partition's leader
(kafka_py/spark/broker_reader.py). Either way ``read()`` yields pyarrow RecordBatches that
Spark takes as they are. The options are listed in kafka_py/spark/options.py and docs/spark.md.
"""
from __future__ import annotations

import logging
from typing import Iterator

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kafka_py.spark.log_dir_planner import LogDirPlanner
from kafka_py.spark.options import KafkaLogOptions, KafkaLogOptionsException, parse_bool
from kafka_py.spark.partition_reader import read_input_partition
from kafka_py.spark.segment_reader import SegmentSlice

logger = logging.getLogger(__name__)

FORMAT_NAME = "kafka-log"

HEADERS_TYPE = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))


def kafka_schema(include_headers: bool = False) -> StructType:
    """Spark's Kafka source schema (with the ``headers`` column when ``include_headers``)."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        fields.append(StructField("headers", HEADERS_TYPE))
    return StructType(fields)


class KafkaLogInputPartition(InputPartition):
    """One SegmentSlice: the unit of parallel work, pickled to the executor that reads it."""

    def __init__(self, segment_slice: SegmentSlice) -> None:
        super().__init__(segment_slice)


class KafkaLogDataSource(DataSource):
    """``spark.read.format("kafka-log").load(log_dir)``."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> StructType:
        # Called for batch and streaming reads alike: only the option that shapes the schema
        # is read here; reader() and streamReader() check all of them.
        return kafka_schema(parse_bool(self.options, "includeHeaders", False))

    def reader(self, schema: StructType) -> "KafkaLogDataSourceReader":
        options = KafkaLogOptions.parse(self.options)
        _check_schema(schema, options)
        return KafkaLogDataSourceReader(options)

    def writer(self, schema: StructType, overwrite: bool):
        from kafka_py.spark.kafka_sink import KafkaLogBatchWriter

        return KafkaLogBatchWriter(self._sink_options(schema, overwrite, streaming=False))

    def streamWriter(self, schema: StructType, overwrite: bool):
        from kafka_py.spark.kafka_sink import KafkaLogStreamWriter

        return KafkaLogStreamWriter(self._sink_options(schema, overwrite, streaming=True))

    def _sink_options(self, schema: StructType, overwrite: bool, streaming: bool):
        from kafka_py.spark.kafka_sink import KafkaSinkOptions, check_sink_schema

        if overwrite:
            raise KafkaLogOptionsException(
                "The kafka-log sink only appends to topics: use mode('append') (or the default for streams)")
        options = KafkaSinkOptions.parse(self.options, streaming)
        check_sink_schema(schema, options)
        return options

    def streamReader(self, schema: StructType) -> "DataSourceStreamReader":
        import pyspark

        # latestOffset(start, limit), ReadLimit and Trigger.AvailableNow came with PySpark 4.2.
        if tuple(int(x) for x in pyspark.__version__.split(".")[:2]) < (4, 2):
            raise KafkaLogOptionsException(
                f"readStream.format('kafka-log') needs PySpark 4.2 or later; this is {pyspark.__version__}")
        from kafka_py.spark.stream_reader import KafkaLogStreamReader

        options = KafkaLogOptions.parse(self.options, streaming=True)
        _check_schema(schema, options)
        return KafkaLogStreamReader(options)


def _check_schema(schema: StructType, options: KafkaLogOptions) -> None:
    expected = kafka_schema(options.include_headers)
    if [f.name for f in schema.fields] != [f.name for f in expected.fields]:
        raise KafkaLogOptionsException(
            f"The kafka-log source has a fixed schema ({expected.simpleString()}); "
            f"a different one was given: {schema.simpleString()}")


class KafkaLogDataSourceReader(DataSourceReader):
    def __init__(self, options: KafkaLogOptions) -> None:
        self.options = options

    def partitions(self) -> list[InputPartition]:
        if self.options.through_brokers:
            from kafka_py.spark.broker_planner import BrokerPlanner

            planner = BrokerPlanner(self.options)
            try:
                slices = planner.plan()
            finally:
                planner.close()
        else:
            slices = LogDirPlanner(self.options.paths).plan(self.options)
        return [KafkaLogInputPartition(s) for s in slices]

    def read(self, partition: InputPartition) -> Iterator:
        # An empty plan still gets one task: Spark 4.0 passes it None, later versions
        # InputPartition(None).
        yield from read_input_partition(partition, self.options)

