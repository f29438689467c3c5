"""Port of core/src/main/scala/kafka/tools/MirrorMaker.scala (``bin/kafka-mirror-maker.sh``,
MirrorMaker 1).

Copies the topics matching ``--whitelist`` (``--include`` is the same option under its
newer name) from the cluster of ``--consumer.config`` to the cluster of
``--producer.config``, keeping each record's key, value, headers and timestamp; the target
partition is the producer's choice (by key), as in Kafka's default handler.

``--num.streams`` consumer threads share one group (``group.id`` of the consumer
config) and one producer. No record is lost when the mirror dies: a thread commits the
offsets of what it has consumed only after ``producer.flush()`` has returned, that is
after the target cluster acknowledged every record sent before it (every
``--offset.commit.interval.ms``, before its partitions are revoked, and when it stops).
So a mirror killed with SIGKILL restarts from its last commit and sends again what
followed it (duplicates, never gaps). The producer's defaults are Kafka's no-loss ones:
acks=all, max.in.flight.requests.per.connection=1, delivery.timeout.ms and max.block.ms
at their largest, each overridable (with an info line saying so).

``--abort.on.send.failure true`` (the default) stops the whole mirror at the first record
the target refuses, without committing; ``false`` logs the record, counts it dropped and
goes on.

``--message.handler`` names a class by its Python dotted path (``package.module.Class``);
it is built with the ``--message.handler.args`` string if given, else with no argument,
and its ``handle(record)`` gets a ``BaseConsumerRecord`` and returns the list of
``ProducerRecord`` to send, as Kafka's MirrorMakerMessageHandler. ``--consumer.rebalance.listener``
(with ``--rebalance.listener.args``) likewise names a class with
``on_partitions_revoked(partitions)`` and ``on_partitions_assigned(partitions)``.

SIGTERM or SIGINT shut the mirror down cleanly (each thread flushes and commits, then the
producer closes); a thread that dies otherwise stops the mirror with exit status 255, as
Kafka's ``sys.exit(-1)``.
"""
from __future__ import annotations

import importlib
import logging
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import click
from kafka import TopicPartition
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.structs import OffsetAndMetadata

from kafka_py.core.utils.command_line_utils import (
    CommandError,
    client_configs,
    connect,
    describe_exception,
    handle_errors,
    load_props,
    run_tool,
)
from kafka_py.tools.producer_performance import JAVA_PRODUCER_DEFAULTS
from kafka_py.core.admin.topic_command import IncludeList
from kafka_py.tools.verifiable_consumer import assignor_for

logger = logging.getLogger(__name__)

NO_TIMESTAMP = -1
# Kafka sets delivery.timeout.ms to Int.MaxValue and max.block.ms to Long.MaxValue; the
# Python client waits on threading primitives, whose timeouts stop at about 49 days, so
# both get the largest int (about 24 days), long enough to never expire in practice.
INT_MAX = 2**31 - 1
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state")


@dataclass
class BaseConsumerRecord:
    """kafka.consumer.BaseConsumerRecord: what a message handler is given."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: Optional[bytes]
    value: Optional[bytes]
    headers: list = field(default_factory=list)


@dataclass
class ProducerRecord:
    """org.apache.kafka.clients.producer.ProducerRecord: what a message handler returns
    (partition None: the producer's partitioner decides; timestamp None: the send time)."""

    topic: str
    partition: Optional[int] = None
    timestamp: Optional[int] = None
    key: Optional[bytes] = None
    value: Optional[bytes] = None
    headers: list = field(default_factory=list)


class MirrorMakerMessageHandler:
    """The shape of a message handler: ``handle`` turns one consumed record into the records
    to produce (none, to drop it; several, to fan it out)."""

    def handle(self, record: BaseConsumerRecord) -> list[ProducerRecord]:
        raise NotImplementedError


class DefaultMirrorMakerMessageHandler(MirrorMakerMessageHandler):
    """The same topic, key, value, headers and (when the source has one) timestamp."""

    def handle(self, record: BaseConsumerRecord) -> list[ProducerRecord]:
        timestamp = None if record.timestamp == NO_TIMESTAMP else record.timestamp
        return [ProducerRecord(record.topic, None, timestamp, record.key, record.value, list(record.headers))]


def create_object(dotted: str, args: Optional[str]) -> Any:
    """CoreUtils.createObject: an instance of the class at ``dotted`` (``pkg.module.Class``),
    built with ``args`` when given, else with no argument."""
    module_name, _, class_name = dotted.rpartition(".")
    if not module_name:
        raise CommandError(f"{dotted} is not a class path of the form package.module.Class")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as e:
        raise CommandError(f"Unable to load class {dotted}: {e}") from e
    return cls(args) if args is not None else cls()


def subscription_pattern(whitelist: str) -> str:
    """The whitelist as kafka-python's pattern subscription applies it (``re.match``, a prefix
    match): anchored at the end so that the whole name must match, as Java's Pattern
    subscription requires, and never the internal topics (exclude.internal.topics)."""
    regex = IncludeList(whitelist).pattern.pattern
    internal = "|".join(f"{t}\\Z" for t in INTERNAL_TOPICS)
    return f"(?!{internal})(?:{regex})\\Z"


class MirrorMakerProducer:
    def __init__(self, sync: bool, producer: Any, mirror_maker: "MirrorMaker") -> None:
        self.sync = sync
        self.producer = producer
        self.mirror_maker = mirror_maker

    def send(self, record: ProducerRecord) -> None:
        future = self.producer.send(record.topic, value=record.value, key=record.key,
                                    headers=list(record.headers) or None, partition=record.partition,
                                    timestamp_ms=record.timestamp)
        if self.sync:
            future.get()
        else:
            future.add_errback(self.mirror_maker.on_send_failure, record)

    def flush(self) -> None:
        self.producer.flush()

    def close(self, timeout: Optional[float] = None) -> None:
        self.producer.close(timeout=timeout)


class _InternalRebalanceListener(ConsumerRebalanceListener):
    """Before partitions go to another member, everything consumed from them is flushed to the
    target and committed, so the next owner starts exactly after it."""

    def __init__(self, wrapper: "ConsumerWrapper", custom: Any) -> None:
        self.wrapper = wrapper
        self.custom = custom

    def on_partitions_revoked(self, revoked: Any) -> None:
        self.wrapper.mirror_maker.producer.flush()
        self.wrapper.mirror_maker.commit_offsets(self.wrapper)
        if self.custom is not None:
            self.custom.on_partitions_revoked(revoked)

    def on_partitions_assigned(self, assigned: Any) -> None:
        if self.custom is not None:
            self.custom.on_partitions_assigned(assigned)


class ConsumerWrapper:
    """One stream's consumer and the offsets after the records it has handed out."""

    def __init__(self, consumer: Any, mirror_maker: "MirrorMaker", custom_listener: Any, whitelist: str) -> None:
        self.consumer = consumer
        self.mirror_maker = mirror_maker
        self.custom_listener = custom_listener
        self.whitelist = whitelist
        self.offsets: dict[Any, int] = {}
        self._pending: list = []

    def init(self) -> None:
        from kafka_py.core.tools.group_subscription import subscribe

        subscribe(self.consumer, pattern=subscription_pattern(self.whitelist),
                  listener=_InternalRebalanceListener(self, self.custom_listener))

    def receive(self) -> Optional[Any]:
        """The next record, or None when a poll of one second brought nothing."""
        if not self._pending:
            batches = self.consumer.poll(timeout_ms=1000)
            self._pending = [r for records in batches.values() for r in records]
            self._pending.reverse()
            if not self._pending:
                return None
        record = self._pending.pop()
        self.offsets[TopicPartition(record.topic, record.partition)] = record.offset + 1
        return record

    def commit(self) -> None:
        if self.offsets:
            self.consumer.commit({tp: OffsetAndMetadata(o, "", -1) for tp, o in self.offsets.items()})
        self.offsets.clear()

    def close(self) -> None:
        # the offsets were committed (or must not be) by the thread; no auto-commit on close
        self.consumer.close(autocommit=False)


class MirrorMakerThread(threading.Thread):
    def __init__(self, mirror_maker: "MirrorMaker", wrapper: ConsumerWrapper, thread_id: int) -> None:
        super().__init__(name=f"mirrormaker-thread-{thread_id}", daemon=True)
        self.mirror_maker = mirror_maker
        self.wrapper = wrapper
        self.shutting_down = threading.Event()
        self.stopped = threading.Event()
        self.last_offset_commit = time.monotonic()

    def run(self) -> None:
        mm = self.mirror_maker
        logger.info("[%s] Starting mirror maker thread %s", self.name, self.name)
        try:
            self.wrapper.init()
            while not mm.exiting_on_send_failure and not self.shutting_down.is_set():
                data = self.wrapper.receive()
                if data is not None:
                    for record in mm.message_handler.handle(to_base_consumer_record(data)):
                        mm.producer.send(record)
                self.maybe_flush_and_commit_offsets()
        except Exception as e:  # noqa: BLE001 - Kafka's fatal path: the whole mirror stops
            if not (self.shutting_down.is_set() or mm.exiting_on_send_failure):
                mm.exiting_on_send_failure = True
                logger.critical("[%s] Mirror maker thread failure due to %s", self.name, describe_exception(e),
                                exc_info=True)
        finally:
            try:
                logger.info("[%s] Flushing producer.", self.name)
                mm.producer.flush()
                # skipped when a send failed: what was not acknowledged must be consumed again
                logger.info("[%s] Committing consumer offsets.", self.name)
                mm.commit_offsets(self.wrapper)
            except Exception as e:  # noqa: BLE001 - swallowed as CoreUtils.swallow does, after logging
                logger.warning("[%s] %s", self.name, describe_exception(e))
            logger.info("[%s] Shutting down consumer connectors.", self.name)
            try:
                self.wrapper.close()
            except Exception as e:  # noqa: BLE001
                logger.warning("[%s] %s", self.name, describe_exception(e))
            self.stopped.set()
            logger.info("[%s] Mirror maker thread stopped", self.name)
            if not mm.is_shutting_down.is_set():
                logger.critical("[%s] Mirror maker thread exited abnormally, stopping the whole mirror maker.",
                                self.name)
                mm.abnormal_exit.set()
                mm.done.set()

    def maybe_flush_and_commit_offsets(self) -> None:
        if (time.monotonic() - self.last_offset_commit) * 1000 > self.mirror_maker.offset_commit_interval_ms:
            self.mirror_maker.producer.flush()
            self.mirror_maker.commit_offsets(self.wrapper)
            self.last_offset_commit = time.monotonic()

    def shutdown(self) -> None:
        logger.info("[%s] %s shutting down", self.name, self.name)
        self.shutting_down.set()

    def await_shutdown(self) -> None:
        self.stopped.wait()
        logger.info("[%s] Mirror maker thread shutdown complete", self.name)


def to_base_consumer_record(r: Any) -> BaseConsumerRecord:
    return BaseConsumerRecord(r.topic, r.partition, r.offset, r.timestamp, r.timestamp_type, r.key, r.value,
                              list(r.headers or ()))


class MirrorMaker:
    def __init__(self, offset_commit_interval_ms: int, abort_on_send_failure: bool,
                 message_handler: MirrorMakerMessageHandler) -> None:
        self.offset_commit_interval_ms = offset_commit_interval_ms
        self.abort_on_send_failure = abort_on_send_failure
        self.message_handler = message_handler
        self.producer: Optional[MirrorMakerProducer] = None
        self.threads: list[MirrorMakerThread] = []
        self.exiting_on_send_failure = False
        self.is_shutting_down = threading.Event()
        self.abnormal_exit = threading.Event()
        # set when the mirror has finished: a clean shutdown done, or a thread's abnormal exit
        self.done = threading.Event()
        self.num_dropped_messages = 0
        self._dropped_lock = threading.Lock()
        self.last_successful_commit_time = -1

    def on_send_failure(self, record: ProducerRecord, e: BaseException) -> None:
        # ErrorLoggingCallback's words: the producer has given up on this record
        logger.error("Error when sending message to topic %s with key: %s, value: %s with error: %s",
                     record.topic, "null" if record.key is None else f"{len(record.key)} bytes",
                     "null" if record.value is None else f"{len(record.value)} bytes", describe_exception(e))
        if self.abort_on_send_failure:
            logger.info("Closing producer due to send failure.")
            self.exiting_on_send_failure = True
        with self._dropped_lock:
            self.num_dropped_messages += 1

    def commit_offsets(self, wrapper: ConsumerWrapper) -> None:
        import kafka.errors as Errors

        if self.exiting_on_send_failure:
            logger.info("Exiting on send failure, skip committing offsets.")
            return
        retry = 0
        while True:
            try:
                wrapper.commit()
                self.last_successful_commit_time = int(time.time() * 1000)
                return
            except Errors.KafkaTimeoutError:
                retry += 1
                logger.warning("Failed to commit offsets because the offset commit request processing can not be "
                               "completed in time. Last successful offset commit timestamp=%d, retry count=%d",
                               self.last_successful_commit_time, retry)
                if retry >= 10 or self.is_shutting_down.is_set() and retry >= 3:
                    raise
                time.sleep(0.1)
            except (Errors.CommitFailedError, Errors.RebalanceInProgressError, Errors.IllegalGenerationError,
                    Errors.UnknownMemberIdError):
                logger.warning("Failed to commit offsets because the consumer group has rebalanced and assigned "
                               "partitions to another instance. If you see this regularly, it could indicate that "
                               "you need to either increase the consumer's session.timeout.ms or reduce the number "
                               "of records handled on each iteration with max.poll.records")
                wrapper.offsets.clear()
                return

    def clean_shutdown(self) -> None:
        if self.is_shutting_down.is_set():
            return
        self.is_shutting_down.set()
        logger.info("Start clean shutdown.")
        logger.info("Shutting down consumer threads.")
        for t in self.threads:
            t.shutdown()
        for t in self.threads:
            t.await_shutdown()
        logger.info("Closing producer.")
        if self.producer is not None:
            self.producer.close()
        logger.info("Kafka mirror maker shutdown successfully")
        self.done.set()


def maybe_set_default_property(props: dict[str, str], name: str, default: str) -> None:
    value = props.setdefault(name, default)
    if value != default:
        logger.info("Property %s is overridden to %s - data loss or message reordering is possible.", name, value)


def consumer_configs(props: Mapping[str, str], client_id: str) -> dict[str, Any]:
    from kafka import KafkaConsumer

    props = dict(props)
    strategies = [s for s in props.pop("partition.assignment.strategy",
                                       "org.apache.kafka.clients.consumer.RangeAssignor").split(",") if s.strip()]
    props["client.id"] = client_id
    configs = client_configs(props, KafkaConsumer)
    configs["partition_assignment_strategy"] = tuple(assignor_for(s) for s in strategies)
    return configs


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
               help="This tool helps to continuously copy data between two Kafka clusters.")
@click.option("--consumer.config", "consumer_config", metavar="<config file>",
              help="Embedded consumer config for consuming from the source cluster.")
@click.option("--new.consumer", "new_consumer", is_flag=True,
              help="DEPRECATED Use new consumer in mirror maker (this is the default so this option will be "
                   "removed in a future version).")
@click.option("--producer.config", "producer_config", metavar="<config file>", help="Embedded producer config.")
@click.option("--num.streams", "num_streams", type=click.IntRange(min=1), default=1, show_default=True,
              metavar="<Number of threads>", help="Number of consumption streams.")
@click.option("--whitelist", "--include", "whitelist", metavar="<Java regex (String)>",
              help="Whitelist of topics to mirror.")
@click.option("--offset.commit.interval.ms", "offset_commit_interval_ms", type=int, default=60000,
              show_default=True, metavar="<offset commit interval in millisecond>", help="Offset commit interval in ms.")
@click.option("--consumer.rebalance.listener", "rebalance_listener", metavar="<A custom rebalance listener>",
              help="The consumer rebalance listener to use for mirror maker consumer (a Python class path).")
@click.option("--rebalance.listener.args", "rebalance_listener_args",
              metavar="<Arguments passed to custom rebalance listener constructor as a string.>",
              help="Arguments used by custom rebalance listener for mirror maker consumer.")
@click.option("--message.handler", "message_handler", metavar="<A custom message handler>",
              help="Message handler which will process every record in-between consumer and producer (a Python "
                   "class path, package.module.Class).")
@click.option("--message.handler.args", "message_handler_args",
              metavar="<Arguments passed to message handler constructor.>",
              help="Arguments used by custom message handler for mirror maker.")
@click.option("--abort.on.send.failure", "abort_on_send_failure", default="true", show_default=True,
              metavar="<Stop the entire mirror maker when a send failure occurs>",
              help="Configure the mirror maker to exit on a failed send.")
@handle_errors()
def main(consumer_config: Optional[str], new_consumer: bool, producer_config: Optional[str], num_streams: int,
         whitelist: Optional[str], offset_commit_interval_ms: int, rebalance_listener: Optional[str],
         rebalance_listener_args: Optional[str], message_handler: Optional[str],
         message_handler_args: Optional[str], abort_on_send_failure: str) -> None:
    logger.info("Starting mirror maker")
    missing = [name for name, value in (("consumer.config", consumer_config), ("producer.config", producer_config))
               if value is None]
    if missing:
        ctx = click.get_current_context()
        click.echo(f"Missing required argument \"[{missing[0]}]\"", err=True)
        click.echo(ctx.get_help(), err=True)
        ctx.exit(1)
    consumer_props = load_props(consumer_config)
    if whitelist is None:
        logger.error("whitelist must be specified")
        raise click.exceptions.Exit(1)
    if "partition.assignment.strategy" not in consumer_props:
        click.echo("WARNING: The default partition assignment strategy of the mirror maker will change from 'range' "
                   "to 'roundrobin' in an upcoming release (so that better load balancing can be achieved). If you "
                   "prefer to make this switch in advance of that release add the following to the corresponding "
                   "config: 'partition.assignment.strategy=org.apache.kafka.clients.consumer.RoundRobinAssignor'",
                   err=True)
    IncludeList(whitelist)  # an invalid regex stops the mirror before it connects

    handler = (create_object(message_handler, message_handler_args) if message_handler
               else DefaultMirrorMakerMessageHandler())
    listener = create_object(rebalance_listener, rebalance_listener_args) if rebalance_listener else None
    mm = MirrorMaker(offset_commit_interval_ms, abort_on_send_failure.strip().lower() == "true", handler)

    from kafka import KafkaConsumer, KafkaProducer

    # the Java producer's defaults where kafka-python's differ (no idempotence: a refused record
    # must not make the producer unusable for the records after it)
    producer_props = {**JAVA_PRODUCER_DEFAULTS, **load_props(producer_config)}
    sync = producer_props.pop("producer.type", "async") == "sync"
    maybe_set_default_property(producer_props, "delivery.timeout.ms", str(INT_MAX))
    maybe_set_default_property(producer_props, "max.block.ms", str(INT_MAX))
    maybe_set_default_property(producer_props, "acks", "all")
    maybe_set_default_property(producer_props, "max.in.flight.requests.per.connection", "1")
    mm.producer = MirrorMakerProducer(sync, connect(KafkaProducer, client_configs(producer_props, KafkaProducer)),
                                      mm)

    # auto-commit would commit offsets of records the target has not acknowledged
    maybe_set_default_property(consumer_props, "enable.auto.commit", "false")
    group_id = consumer_props.get("group.id")
    for i in range(num_streams):
        consumer = connect(KafkaConsumer, consumer_configs(consumer_props, f"{group_id}-{i}"))
        mm.threads.append(MirrorMakerThread(mm, ConsumerWrapper(consumer, mm, listener, whitelist), i))

    def on_signal(signum: int, frame: Any) -> None:
        # the shutdown runs off the signal handler, which must return for the main thread to go on
        threading.Thread(target=mm.clean_shutdown, name="MirrorMakerShutdownHook", daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    for t in mm.threads:
        t.start()
    # The main thread waits for the end (in bounded waits, so that it stays free to run the
    # signal handlers): a clean shutdown, or one thread's abnormal exit.
    while not mm.done.wait(1.0):
        pass
    if mm.abnormal_exit.is_set() and not mm.is_shutting_down.is_set():
        for t in mm.threads:
            t.shutdown()
        for t in mm.threads:
            t.await_shutdown()
        mm.producer.close(timeout=0 if mm.exiting_on_send_failure else None)
        raise click.exceptions.Exit(255)


if __name__ == "__main__":
    run_tool(main, "kafka-mirror-maker.sh")
