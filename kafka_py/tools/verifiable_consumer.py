"""Port of tools/src/main/java/org/apache/kafka/tools/VerifiableConsumer.java
(``bin/kafka-verifiable-consumer.sh``).

A group member of ``--group-id`` subscribed to ``--topic`` that prints what happens to
it as JSON lines on stdout, the events and fields Kafka's system tests parse
(tests/kafkatest/services/verifiable_consumer.py):

    {"timestamp":...,"name":"startup_complete"}
    {"timestamp":...,"name":"partitions_revoked","partitions":[{"topic":"t","partition":0}]}
    {"timestamp":...,"name":"partitions_assigned","partitions":[{"topic":"t","partition":0}]}
    {"timestamp":...,"name":"records_consumed","count":5,
     "partitions":[{"topic":"t","partition":0,"count":5,"minOffset":0,"maxOffset":4}]}
    {"timestamp":...,"name":"record_data","key":null,"value":"0","topic":"t","partition":0,"offset":0}
    {"timestamp":...,"name":"offsets_committed","offsets":[{"topic":"t","partition":0,"offset":5}],
     "success":true}            (with "error":"..." and success false when the commit failed)
    {"timestamp":...,"name":"shutdown_complete"}

``record_data`` lines come with ``--verbose``. Without ``--enable-autocommit`` the tool
commits, after each poll, the offsets after the records it has just printed (synchronously,
as Kafka's tool does from the command line). ``--max-messages`` stops it after that many
records; SIGTERM or SIGINT wake it up, and it closes the consumer (leaving the group) before
``shutdown_complete``.

``--assignment-strategy`` takes Kafka's assignor class names (RangeAssignor, the default,
RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor) and uses kafka-python's
assignor of the same protocol name.
"""
from __future__ import annotations

import logging
import signal
import sys
import threading
from typing import Any, Mapping, Optional

import click
from kafka.consumer.subscription_state import ConsumerRebalanceListener

from kafka_py.core.utils.command_line_utils import (
    CommandError,
    client_configs,
    connect,
    handle_errors,
    load_props,
    run_tool,
)
from kafka_py.core.tools.group_subscription import subscribe
from kafka_py.tools.verifiable_producer import EventPrinter, exception_message

logger = logging.getLogger(__name__)

RANGE_ASSIGNOR = "org.apache.kafka.clients.consumer.RangeAssignor"


def assignor_for(name: str) -> Any:
    """kafka-python's assignor for Kafka's assignor class name (or its simple name)."""
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    assignors = {"RangeAssignor": RangePartitionAssignor, "RoundRobinAssignor": RoundRobinPartitionAssignor,
                 "StickyAssignor": StickyPartitionAssignor,
                 "CooperativeStickyAssignor": CooperativeStickyAssignor}
    simple = name.strip().rsplit(".", 1)[-1]
    if simple not in assignors:
        raise CommandError(f"Invalid value {name} for configuration partition.assignment.strategy: Class {name} "
                           "cannot be found")
    return assignors[simple]


def consumer_configs(props: Mapping[str, str]) -> dict[str, Any]:
    from kafka import KafkaConsumer

    props = dict(props)
    strategies = [s for s in props.pop("partition.assignment.strategy", RANGE_ASSIGNOR).split(",") if s.strip()]
    configs = client_configs(props, KafkaConsumer)
    configs["partition_assignment_strategy"] = tuple(assignor_for(s) for s in strategies)
    return configs


def _partitions(tps: Any) -> list[dict[str, Any]]:
    return [{"topic": tp.topic, "partition": tp.partition} for tp in tps]


class _RebalanceEvents(ConsumerRebalanceListener):
    """Hands kafka-python's rebalance callbacks to the tool (Kafka's tool is its own listener;
    kafka-python wants an instance of its listener class)."""

    def __init__(self, tool: "VerifiableConsumer") -> None:
        self.tool = tool

    def on_partitions_revoked(self, revoked: Any) -> None:
        self.tool.on_partitions_revoked(revoked)

    def on_partitions_assigned(self, assigned: Any) -> None:
        self.tool.on_partitions_assigned(assigned)


class VerifiableConsumer:
    def __init__(self, consumer: Any, printer: EventPrinter, topic: str, max_messages: int,
                 use_auto_commit: bool, use_async_commit: bool, verbose: bool) -> None:
        self.consumer = consumer
        self.printer = printer
        self.topic = topic
        self.max_messages = max_messages
        self.use_auto_commit = use_auto_commit
        self.use_async_commit = use_async_commit
        self.verbose = verbose
        self.consumed_messages = 0
        self.closing = threading.Event()

    # ConsumerRebalanceListener
    def on_partitions_revoked(self, revoked: Any) -> None:
        self.printer.print_json("partitions_revoked", partitions=_partitions(revoked))

    def on_partitions_assigned(self, assigned: Any) -> None:
        self.printer.print_json("partitions_assigned", partitions=_partitions(assigned))

    def has_message_limit(self) -> bool:
        return self.max_messages >= 0

    def is_finished(self) -> bool:
        return self.has_message_limit() and self.consumed_messages >= self.max_messages

    def on_records_received(self, records: Mapping[Any, list]) -> dict[Any, Any]:
        from kafka.structs import OffsetAndMetadata

        offsets: dict[Any, Any] = {}
        summaries = []
        for tp, partition_records in records.items():
            if self.has_message_limit() and self.consumed_messages + len(partition_records) > self.max_messages:
                partition_records = partition_records[:self.max_messages - self.consumed_messages]
            if not partition_records:
                continue
            min_offset = partition_records[0].offset
            max_offset = partition_records[-1].offset
            offsets[tp] = OffsetAndMetadata(max_offset + 1, "", -1)
            summaries.append({"topic": tp.topic, "partition": tp.partition, "count": len(partition_records),
                              "minOffset": min_offset, "maxOffset": max_offset})
            if self.verbose:
                for record in partition_records:
                    self.printer.print_json(
                        "record_data",
                        key=None if record.key is None else record.key.decode("utf-8", errors="replace"),
                        value=None if record.value is None else record.value.decode("utf-8", errors="replace"),
                        topic=record.topic, partition=record.partition, offset=record.offset)
            self.consumed_messages += len(partition_records)
            if self.is_finished():
                break
        self.printer.print_json("records_consumed", count=sum(len(r) for r in records.values()),
                                partitions=summaries)
        return offsets

    def on_complete(self, offsets: Mapping[Any, Any], exception: Optional[BaseException]) -> None:
        committed = [{"topic": tp.topic, "partition": tp.partition, "offset": om.offset}
                     for tp, om in offsets.items()]
        if exception is None:
            self.printer.print_json("offsets_committed", offsets=committed, success=True)
        else:
            self.printer.print_json("offsets_committed", offsets=committed, error=exception_message(exception),
                                    success=False)

    def commit_sync(self, offsets: Mapping[Any, Any]) -> None:
        try:
            self.consumer.commit(dict(offsets))
        except Exception as e:  # noqa: BLE001 - a failed commit is an event, the consumer goes on
            self.on_complete(offsets, e)
        else:
            self.on_complete(offsets, None)

    def _async_done(self, offsets: Mapping[Any, Any], response: Any) -> None:
        self.on_complete(offsets, response if isinstance(response, BaseException) else None)

    def run(self) -> None:
        try:
            self.printer.print_json("startup_complete")
            subscribe(self.consumer, topics=[self.topic], listener=_RebalanceEvents(self))
            while not self.is_finished() and not self.closing.is_set():
                # a bounded poll stands in for the Java consumer's wakeup(): a signal sets
                # ``closing``, and the loop sees it within a poll
                records = self.consumer.poll(timeout_ms=500)
                if self.closing.is_set() and not records:
                    break
                offsets = self.on_records_received(records) if records else {}
                if not records:
                    continue
                if not self.use_auto_commit and offsets:
                    if self.use_async_commit:
                        self.consumer.commit_async(offsets, self._async_done)
                    else:
                        self.commit_sync(offsets)
        except Exception:  # noqa: BLE001 - to the log, not stdout, as Kafka's tool does
            logger.exception("Error during processing, terminating consumer process: ")
        finally:
            try:
                self.consumer.close(autocommit=self.use_auto_commit)
            finally:
                self.printer.print_json("shutdown_complete")

    def close(self) -> None:
        self.closing.set()


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
               help="This tool consumes messages from a specific topic and emits consumer events (e.g. group "
                    "rebalances, received messages, and offsets committed) as JSON objects to STDOUT.")
@click.option("--bootstrap-server", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
              help="REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to. "
                   "Comma-separated list of Kafka brokers in the form HOST1:PORT1,HOST2:PORT2,...")
@click.option("--broker-list", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
              help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.")
@click.option("--topic", required=True, metavar="TOPIC", help="Consumes messages from this topic.")
@click.option("--group-id", required=True, metavar="GROUP_ID",
              help="The groupId shared among members of the consumer group")
@click.option("--group-instance-id", metavar="GROUP_INSTANCE_ID", help="A unique identifier of the consumer instance")
@click.option("--max-messages", type=int, default=-1, show_default=True, metavar="MAX-MESSAGES",
              help="Consume this many messages. If -1 (the default), the consumer will consume until the process "
                   "is killed externally")
@click.option("--session-timeout", type=int, default=30000, show_default=True, metavar="TIMEOUT_MS",
              help="Set the consumer's session timeout")
@click.option("--verbose", is_flag=True, help="Enable to log individual consumed records")
@click.option("--enable-autocommit", is_flag=True, help="Enable offset auto-commit on consumer")
@click.option("--reset-policy", default="earliest", show_default=True,
              help="Set reset policy (must be either 'earliest', 'latest', or 'none'")
@click.option("--assignment-strategy", default=RANGE_ASSIGNOR, show_default=True,
              help="Set assignment strategy (e.g. org.apache.kafka.clients.consumer.RoundRobinAssignor)")
@click.option("--consumer.config", "consumer_config", metavar="CONFIG_FILE",
              help="Consumer config properties file (config options shared with command line parameters will be "
                   "overridden).")
@handle_errors()
def main(bootstrap_server: Optional[str], broker_list: Optional[str], topic: str, group_id: str,
         group_instance_id: Optional[str], max_messages: int, session_timeout: int, verbose: bool,
         enable_autocommit: bool, reset_policy: str, assignment_strategy: str,
         consumer_config: Optional[str]) -> None:
    if bootstrap_server is not None and broker_list is not None:
        raise click.UsageError("argument --broker-list: not allowed with argument --bootstrap-server")
    servers = bootstrap_server or broker_list
    if servers is None:
        click.echo(click.get_current_context().get_help())
        return
    props = load_props(consumer_config) if consumer_config else {}
    props["group.id"] = group_id
    if group_instance_id is not None:
        props["group.instance.id"] = group_instance_id
    props.update({"bootstrap.servers": servers, "enable.auto.commit": "true" if enable_autocommit else "false",
                  "auto.offset.reset": reset_policy, "session.timeout.ms": str(session_timeout),
                  "partition.assignment.strategy": assignment_strategy})
    if reset_policy not in ("earliest", "latest", "none"):
        raise CommandError(f"Invalid value {reset_policy} for configuration auto.offset.reset: String must be one "
                           "of: latest, earliest, none")
    from kafka import KafkaConsumer

    consumer = connect(KafkaConsumer, consumer_configs(props))
    tool = VerifiableConsumer(consumer, EventPrinter(sys.stdout), topic, max_messages, enable_autocommit, False,
                              verbose)
    signal.signal(signal.SIGTERM, lambda signum, frame: tool.close())
    signal.signal(signal.SIGINT, lambda signum, frame: tool.close())
    tool.run()


if __name__ == "__main__":
    run_tool(main, "kafka-verifiable-consumer.sh")
