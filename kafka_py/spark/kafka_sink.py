"""``df.write.format("kafka-log")`` and ``writeStream``: a DataFrame's rows produced to a Kafka cluster.

No Kafka counterpart: the sink of Spark's Kafka connector (KafkaWriter, KafkaWriteTask and
KafkaSourceProvider's sink options in spark-sql-kafka-0-10), for PySpark without that JVM
package. The rows go through a producer (confluent-kafka, librdkafka), so the broker writes
them into its log as it does any client's records.

Columns, as in Spark's Kafka sink:

========== ============================================ ==========================================
column     type                                         meaning
========== ============================================ ==========================================
value      string or binary                             required; null is a tombstone
key        string or binary                             optional
topic      string                                       required unless the ``topic`` option is set
partition  int                                          optional; null or absent: the producer's
                                                        partitioner (by key)
headers    array<struct<key: string, value: binary>>    optional
========== ============================================ ==========================================

Other columns are ignored. Options: ``topic`` (overrides the column), and ``kafka.*`` settings
passed to the producer without the prefix (``kafka.bootstrap.servers`` required,
``kafka.acks``, ``kafka.compression.type``, ``kafka.enable.idempotence``, ...). The producer is
idempotent unless ``kafka.enable.idempotence`` is false or ``kafka.acks`` is not ``all``.

At-least-once: a task hands Spark its commit message only after every record it sent is
acknowledged; a record the cluster refuses, or that times out (``kafka.delivery.timeout.ms``),
fails the task with the broker's error. A retried task or micro-batch sends its records again.

Each executor process keeps one producer per configuration (``ProducerCache``) and reuses it
for every task it runs, since connecting and fetching metadata per task would cost more than
writing a small task's rows.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Iterator, Mapping, Optional

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    StringType,
    StructType,
)

from kafka_py.spark.options import KafkaLogOptionsException, check_option_names, kafka_params

logger = logging.getLogger(__name__)

SINK_OPTIONS = frozenset({"topic"})
#: What Spark itself adds to a streaming sink's options.
STREAM_SINK_OPTIONS = SINK_OPTIONS | {"checkpointLocation"}
#: librdkafka's names of the errors that Kafka's protocol calls UNKNOWN_TOPIC_OR_PARTITION (the
#: broker's answer, and the client's own when metadata has no such topic).
_UNKNOWN_TOPIC = {"UNKNOWN_TOPIC_OR_PART", "_UNKNOWN_TOPIC", "_UNKNOWN_PARTITION"}
#: How long one flush waits before looking again; the producer's delivery timeout is what
#: bounds the whole wait.
_FLUSH_POLL_S = 1.0
#: Errors named in a failure message at most.
_ERRORS_SHOWN = 3


class KafkaSinkException(RuntimeError):
    """Records were not acknowledged by the cluster."""


@dataclass(frozen=True)
class KafkaSinkOptions:
    topic: Optional[str]
    producer_config: tuple[tuple[str, str], ...]

    @classmethod
    def parse(cls, options: Mapping[str, str], streaming: bool = False) -> "KafkaSinkOptions":
        check_option_names(options, STREAM_SINK_OPTIONS if streaming else SINK_OPTIONS, "the kafka-log sink")
        config = kafka_params(options)
        if not config.get("bootstrap.servers", "").strip():
            raise KafkaLogOptionsException(
                "Option kafka.bootstrap.servers must be set for the kafka-log sink: the cluster to "
                "produce to, e.g. host1:9092,host2:9092")
        lowered = {k.lower(): v for k, v in options.items()}
        topic = lowered.get("topic")
        if topic is not None and not str(topic).strip():
            raise KafkaLogOptionsException("Option topic is empty")
        acks = config.get("acks", "all").strip().lower()
        if "enable.idempotence" not in config:
            # As Kafka's producer: idempotent by default, unless acks says not to wait for all.
            config["enable.idempotence"] = "true" if acks in ("all", "-1") else "false"
        config.setdefault("acks", "all")
        # librdkafka's default (100,000 messages) fills within a few ms at Spark's rates, and a
        # full queue means waiting on delivery reports; a deeper one lets batches build up.
        config.setdefault("queue.buffering.max.messages", "1000000")
        return cls(topic, tuple(sorted(config.items())))


_HEADERS_TYPE = ArrayType(StructType().add("key", StringType()).add("value", BinaryType()))


def check_sink_schema(schema: StructType, options: KafkaSinkOptions) -> None:
    """Refuse a DataFrame the sink can't write, naming the column (Spark's sink's checks)."""
    fields = {f.name.lower(): f for f in schema.fields}
    value = fields.get("value")
    if value is None:
        raise KafkaLogOptionsException(
            f"Required attribute 'value' not found: the kafka-log sink writes a column 'value' (string or "
            f"binary); the DataFrame has {', '.join(f.name for f in schema.fields)}")
    for name in ("value", "key"):
        f = fields.get(name)
        if f is not None and not isinstance(f.dataType, (StringType, BinaryType)):
            raise KafkaLogOptionsException(
                f"Column '{f.name}' must be string or binary for the kafka-log sink, not {f.dataType.simpleString()}")
    topic = fields.get("topic")
    if topic is None and options.topic is None:
        raise KafkaLogOptionsException(
            "Topic not found: the kafka-log sink needs a 'topic' column (string) or the option topic")
    if topic is not None and options.topic is None and not isinstance(topic.dataType, StringType):
        raise KafkaLogOptionsException(
            f"Column 'topic' must be string for the kafka-log sink, not {topic.dataType.simpleString()}")
    partition = fields.get("partition")
    if partition is not None and not isinstance(partition.dataType, IntegerType):
        raise KafkaLogOptionsException(
            f"Column 'partition' must be int for the kafka-log sink, not {partition.dataType.simpleString()}")
    headers = fields.get("headers")
    if headers is not None and headers.dataType.simpleString() != _HEADERS_TYPE.simpleString():
        raise KafkaLogOptionsException(
            f"Column 'headers' must be {_HEADERS_TYPE.simpleString()} for the kafka-log sink, not "
            f"{headers.dataType.simpleString()}")


#: Client errors (librdkafka's error_cb) after which no record can be delivered: the task
#: fails at once, as Kafka's producer fails sends on an AuthenticationException, instead of
#: waiting for every record to time out.
_FATAL_CLIENT_ERRORS = {"_AUTHENTICATION", "_SSL"}


class DeliveryErrors:
    """Failed deliveries reported by the producer's callback, for the task that is running,
    and what the client reported about its connections (``client_error``, librdkafka's
    error_cb): the reason a delivery timed out, such as a refused SASL login."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.count = 0
        self.first: list[str] = []
        self.names: set[str] = set()
        self.client: Optional[str] = None
        self.fatal: Optional[str] = None

    def client_error(self, error) -> None:
        text = f"{error.name()} ({error.str()})"
        self.client = text
        if error.fatal() or error.name() in _FATAL_CLIENT_ERRORS:
            self.fatal = text

    @property
    def failed(self) -> bool:
        return bool(self.count) or self.fatal is not None

    def __call__(self, error, message) -> None:
        if error is None:
            return
        self.count += 1
        name = error.name()
        self.names.add(name)
        if len(self.first) < _ERRORS_SHOWN:
            kafka_name = "UNKNOWN_TOPIC_OR_PARTITION" if name in _UNKNOWN_TOPIC else name
            self.first.append(f"{kafka_name} ({error.str()}) for topic {message.topic()} "
                              f"partition {message.partition()}")


class ProducerCache:
    """One producer per configuration per executor process, reused across tasks."""

    _lock = threading.Lock()
    _producers: dict[tuple, tuple] = {}

    @classmethod
    def get(cls, config: tuple[tuple[str, str], ...]):
        with cls._lock:
            entry = cls._producers.get(config)
            if entry is None:
                from confluent_kafka import Producer

                errors = DeliveryErrors()
                # Only failed deliveries call back: the successes are counted by the queue
                # emptying, which spares a Python call per record.
                entry = (Producer({**dict(config), "on_delivery": errors, "delivery.report.only.error": True,
                                   "error_cb": errors.client_error}),
                         errors)
                cls._producers[config] = entry
            return entry

    @classmethod
    def discard(cls, config: tuple[tuple[str, str], ...]) -> None:
        """Drop a producer after a failed task: what it still holds belongs to no task now."""
        with cls._lock:
            entry = cls._producers.pop(config, None)
        if entry is not None:
            producer, _ = entry
            try:
                producer.purge()
                producer.flush(0)
            except Exception:  # noqa: BLE001 - it is being thrown away
                pass


@dataclass
class KafkaSinkCommitMessage(WriterCommitMessage):
    records: int


class KafkaWriteTask:
    """Produces one task's rows and waits until every one is acknowledged."""

    def __init__(self, options: KafkaSinkOptions) -> None:
        self.options = options

    def run(self, batches: Iterator[pa.RecordBatch]) -> KafkaSinkCommitMessage:
        producer, errors = ProducerCache.get(self.options.producer_config)
        errors.reset()
        sent = 0
        try:
            for batch in batches:
                sent += self._produce_batch(producer, batch, errors)
            while producer.flush(_FLUSH_POLL_S) > 0:
                if errors.failed:
                    break
            if errors.failed:
                self._fail(sent, errors)
        except BaseException:
            ProducerCache.discard(self.options.producer_config)
            raise
        return KafkaSinkCommitMessage(sent)

    def _produce_batch(self, producer, batch: pa.RecordBatch, errors: DeliveryErrors) -> int:
        names = {name.lower(): i for i, name in enumerate(batch.schema.names)}
        n = batch.num_rows
        values = batch.column(names["value"]).to_pylist()
        keys = batch.column(names["key"]).to_pylist() if "key" in names else [None] * n
        if self.options.topic is not None:
            topics = [self.options.topic] * n
        else:
            topics = batch.column(names["topic"]).to_pylist()
            if None in topics:
                raise KafkaSinkException(
                    "Null topic present in the data: set the option topic, or give every row a topic")
        # -1 is librdkafka's "no partition given": the partitioner picks one by key.
        partitions = ([-1 if p is None else p for p in batch.column(names["partition"]).to_pylist()]
                      if "partition" in names else [-1] * n)
        headers = batch.column(names["headers"]).to_pylist() if "headers" in names else None
        produce = producer.produce
        i = 0
        # The loops are written out per case because they run once per row: a keyword
        # argument dict per record would cost more than the produce call itself.
        while i < n:
            try:
                if headers is None:
                    while i < n:
                        produce(topics[i], values[i], keys[i], partitions[i])
                        i += 1
                else:
                    while i < n:
                        h = headers[i]
                        if h:
                            produce(topics[i], values[i], keys[i], partitions[i],
                                    headers=[(e["key"], e["value"]) for e in h])
                        else:
                            produce(topics[i], values[i], keys[i], partitions[i])
                        i += 1
            except BufferError:
                # The producer's queue is full: let deliveries drain it. A short wait: with
                # only errors reported, poll has nothing to return early for.
                producer.poll(0.002)
                if errors.failed:
                    self._fail(i, errors)
        producer.poll(0)
        return n

    @staticmethod
    def _fail(sent: int, errors: DeliveryErrors) -> None:
        if errors.fatal is not None and not errors.count:
            raise KafkaSinkException(
                f"The producer can't deliver the {sent} record(s) this task sent: {errors.fatal}")
        message = (f"{errors.count} record(s) were not acknowledged by the cluster (of {sent} sent by this task): "
                   + "; ".join(errors.first))
        if errors.client is not None:
            message += f"; the client last reported {errors.client}"
        raise KafkaSinkException(message)


class KafkaLogBatchWriter(DataSourceArrowWriter):
    def __init__(self, options: KafkaSinkOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaSinkCommitMessage:
        return KafkaWriteTask(self.options).run(iterator)

    def commit(self, messages) -> None:
        total = sum(m.records for m in messages if isinstance(m, KafkaSinkCommitMessage))
        logger.info("kafka-log sink: %d records acknowledged", total)

    def abort(self, messages) -> None:
        logger.warning("kafka-log sink: the write failed; records of its finished tasks stay in the topics")


class KafkaLogStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: KafkaSinkOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaSinkCommitMessage:
        return KafkaWriteTask(self.options).run(iterator)

    def commit(self, messages, batchId: int) -> None:
        total = sum(m.records for m in messages if isinstance(m, KafkaSinkCommitMessage))
        logger.info("kafka-log sink: micro-batch %d, %d records acknowledged", batchId, total)

    def abort(self, messages, batchId: int) -> None:
        logger.warning("kafka-log sink: micro-batch %d failed; it is sent again when it is re-run", batchId)
