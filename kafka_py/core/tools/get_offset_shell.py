"""Port of core/src/main/scala/kafka/tools/GetOffsetShell.scala
(``bin/kafka-run-class.sh kafka.tools.GetOffsetShell``).

``bin/kafka-run-class.sh kafka.tools.GetOffsetShell --broker-list host:port --topic t
[--partitions 0,1] [--time -1|-2|<timestamp>]`` prints one line per partition of the
topic, ``topic:partition:offset``, sorted by partition: with ``--time -1`` (the default)
the log end offset, with ``-2`` the log start offset, with a timestamp (ms since the
epoch) the offset of the first record at or after it, or nothing after the second colon
when no record is that recent. The offsets come from ListOffsets requests sent by a
consumer (kafka-python's), as Kafka's tool asks its KafkaConsumer.

Errors go to stderr as Kafka's tool writes them: ``Topic t does not exist`` (exit 1),
``Error: partition 9 does not exist`` for a requested partition the topic lacks, ``Error:
partition 2 does not have a leader. Skip getting offsets`` for an offline one (the other
partitions are still printed).

Differences from Kafka's tool, on purpose:

- ``--bootstrap-server`` is taken as a synonym of ``--broker-list`` (the name Kafka's tools
  use since 2.x, and this tool's from Kafka 3.0 on), and ``--command-config`` passes client
  properties (security) to the consumer, as in Kafka 3.0;
- a failure to reach the cluster is one line on stderr and exit status 1, never a stack trace.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import click

from kafka_py.clients.common.protocol.requests import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from kafka_py.core.utils.command_line_utils import (
    DEFAULT_BOOTSTRAP_TIMEOUT_MS,
    client_configs,
    connect,
    handle_errors,
    load_props,
    print_usage_and_die,
    run_tool,
    validate_port_or_die,
)

CLIENT_ID = "GetOffsetShell"
HELP = "An interactive shell for getting topic offsets."

Out = Callable[[str], None]


def parse_partitions(text: str) -> set[int]:
    if not text:
        return set()
    try:
        return {int(p) for p in text.split(",")}
    except ValueError:
        raise GetOffsetShellExit(
            f"--partitions expects a comma separated list of numeric partition ids, but received: {text}") from None


class GetOffsetShellExit(Exception):
    """A message for stderr, then exit status 1."""


def get_offsets(consumer: Any, topic: str, partition_ids: set[int], timestamp: int, out: Out, err: Out) -> None:
    from kafka import TopicPartition

    if topic not in consumer.topics():  # Metadata for every topic: nothing is created
        raise GetOffsetShellExit(f"Topic {topic} does not exist")
    cluster = consumer._client.cluster
    known = set(cluster.partitions_for_topic(topic) or ())
    wanted = sorted(known if not partition_ids else known & partition_ids)
    if not wanted:
        if not partition_ids:
            raise GetOffsetShellExit(f"Topic {topic} has 0 partitions")
        raise GetOffsetShellExit(f"Topic {topic} does not have any of the requested partitions "
                                 f"{','.join(str(p) for p in sorted(partition_ids))}")
    for missing in sorted(partition_ids - known):
        err(f"Error: partition {missing} does not exist")
    partitions = []
    for p in wanted:
        leader = cluster.leader_for_partition(TopicPartition(topic, p))
        if leader is None or leader < 0:
            err(f"Error: partition {p} does not have a leader. Skip getting offsets")
        else:
            partitions.append(TopicPartition(topic, p))
    offsets: Mapping[Any, Any]
    if not partitions:
        offsets = {}
    elif timestamp == EARLIEST_TIMESTAMP:
        offsets = consumer.beginning_offsets(partitions)
    elif timestamp == LATEST_TIMESTAMP:
        offsets = consumer.end_offsets(partitions)
    elif timestamp < 0:
        # what Kafka's consumer.offsetsForTimes refuses
        raise GetOffsetShellExit(f"The target time for partition {partitions[0].topic}-{partitions[0].partition} "
                                 f"is {timestamp}. The target time cannot be negative.")
    else:
        found = consumer.offsets_for_times({tp: timestamp for tp in partitions})
        offsets = {tp: (None if found.get(tp) is None else found[tp].offset) for tp in partitions}
    for tp in sorted(offsets, key=lambda tp: tp.partition):
        offset = offsets[tp]
        out(f"{topic}:{tp.partition}:{'' if offset is None else offset}")


def connect_consumer(broker_list: str, command_config: Mapping[str, str]) -> Any:
    from kafka import KafkaConsumer

    props = {"bootstrap.timeout.ms": str(DEFAULT_BOOTSTRAP_TIMEOUT_MS), "client.id": CLIENT_ID,
             **command_config, "bootstrap.servers": broker_list}
    configs = client_configs(props, KafkaConsumer)
    configs.update(enable_auto_commit=False, group_id=None)
    return connect(KafkaConsumer, configs)


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120}, help=HELP)
@click.option("--broker-list", metavar="<hostname:port,...,hostname:port>",
              help="REQUIRED: The list of hostname and port of the server to connect to.")
@click.option("--bootstrap-server", metavar="<hostname:port,...,hostname:port>",
              help="The same as --broker-list.")
@click.option("--topic", metavar="<topic>", help="REQUIRED: The topic to get offset from.")
@click.option("--partitions", metavar="<partition ids>", default="",
              help="comma separated list of partition ids. If not specified, it will find offsets for all "
                   "partitions")
@click.option("--time", "time_", metavar="<timestamp/-1(latest)/-2(earliest)>", default=str(LATEST_TIMESTAMP),
              help="timestamp of the offsets before that. [Note: No offset is returned, if the timestamp greater "
                   "than recently commited record timestamp is given.]")
@click.option("--command-config", metavar="<config file>",
              help="Property file containing configs to be passed to the consumer.")
@click.option("--offsets", metavar="<count>", help="DEPRECATED AND IGNORED: number of offsets returned")
@click.option("--max-wait-ms", metavar="<ms>",
              help="DEPRECATED AND IGNORED: The max amount of time each fetch request waits.")
@handle_errors()
def main(broker_list: str | None, bootstrap_server: str | None, topic: str | None, partitions: str, time_: str,
         command_config: str | None, offsets: str | None, max_wait_ms: str | None) -> None:
    given = [broker_list, bootstrap_server, topic, command_config, offsets, max_wait_ms]
    if all(v is None for v in given) and partitions == "" and time_ == str(LATEST_TIMESTAMP):
        print_usage_and_die(HELP)
    if broker_list is None and bootstrap_server is None:
        print_usage_and_die('Missing required argument "[broker-list]"')
    if topic is None:
        print_usage_and_die('Missing required argument "[topic]"')
    if broker_list is not None and bootstrap_server is not None:
        print_usage_and_die("Only one of --broker-list or --bootstrap-server must be specified")
    servers = ",".join(validate_port_or_die(broker_list or bootstrap_server or ""))
    for name, value in (("offsets", offsets), ("max-wait-ms", max_wait_ms)):
        if value is not None and not value.strip().lstrip("-").isdigit():
            print_usage_and_die(f"Cannot parse argument '{value}' of option {name}")
    try:
        timestamp = int(time_)
    except ValueError:
        print_usage_and_die(f"Cannot parse argument '{time_}' of option time")
    try:
        wanted = parse_partitions(partitions)
        props = load_props(command_config) if command_config else {}
        consumer = connect_consumer(servers, props)
        try:
            get_offsets(consumer, topic, wanted, timestamp, click.echo, lambda line: click.echo(line, err=True))
        finally:
            consumer.close()
    except GetOffsetShellExit as e:
        click.echo(str(e), err=True)
        raise click.exceptions.Exit(1)


if __name__ == "__main__":
    run_tool(main, "kafka-run-class.sh kafka.tools.GetOffsetShell")
