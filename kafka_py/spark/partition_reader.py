"""Reads one input partition of the ``kafka-log`` Spark data source, by whichever path planned it.

No Kafka counterpart (Spark's KafkaSourceRDD.compute), and the executor side. The batch reader (kafka_py/spark/kafka_log_data_source.py) and the stream reader
(kafka_py/spark/stream_reader.py) both hand their partitions here: a ``SegmentSlice`` is read
from the segment file (kafka_py/spark/segment_reader.py), a ``BrokerSlice`` from the partition's
leader (kafka_py/spark/broker_reader.py, imported only by executors that get one).
"""
from __future__ import annotations

from typing import Iterator

from pyspark.sql.datasource import InputPartition

from kafka_py.spark.options import KafkaLogOptions
from kafka_py.spark.segment_reader import SegmentSlice, read_slice


def read_input_partition(partition: InputPartition, options: KafkaLogOptions) -> Iterator:
    """The Arrow record batches of one input partition of either read path."""
    value = getattr(partition, "value", None)
    if isinstance(value, SegmentSlice):
        yield from read_slice(value, include_headers=options.include_headers,
                              fail_on_data_loss=options.fail_on_data_loss)
        return
    from kafka_py.spark.broker_reader import BrokerSlice, read_broker_slice

    if isinstance(value, BrokerSlice):
        yield from read_broker_slice(value, include_headers=options.include_headers,
                                     fail_on_data_loss=options.fail_on_data_loss)
