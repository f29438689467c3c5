"""Port of core/src/main/scala/kafka/admin/LogDirsCommand.scala (``bin/kafka-log-dirs.sh``).

Which log dirs each broker has, and the size and lag of every replica in them, from the
brokers' DescribeLogDirs answers (kafka-python's KafkaAdminClient connections, secured by
``--command-config``):

    kafka-log-dirs.sh --bootstrap-server h:9092 --describe [--broker-list 0,1] [--topic-list t1,t2]

prints Kafka's two lines and its JSON (version 1), one object per broker and log dir:

    Querying brokers for log directories information
    Received log directory information from brokers 0
    {"version":1,"brokers":[{"broker":0,"logDirs":[{"logDir":"/data/a","error":null,
     "partitions":[{"partition":"t-0","size":1234,"offsetLag":0,"isFuture":false}]}]}]}

``error`` is the Java class name of a dir's error (``org.apache.kafka.common.errors.
KafkaStorageException`` for an offline dir). Without ``--broker-list`` every live broker is
asked; ``--topic-list`` keeps only those topics' partitions.

Differences from Kafka's tool, on purpose: brokers come out in id order, dirs in each
broker's ``log.dirs`` order and partitions by topic and partition (Kafka prints them in the
order of its hash maps); a ``--broker-list`` id that is not a live broker fails at once,
naming it (Kafka's admin client waits for it until its timeout); failures are one line on
stderr and exit status 1.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Mapping, Sequence

import click

from kafka_py.core.utils.command_line_utils import (
    DEFAULT_BOOTSTRAP_TIMEOUT_MS,
    CommandError,
    client_configs,
    cluster_brokers,
    connect,
    handle_errors,
    load_props,
    print_usage_and_die,
    run_tool,
    send_admin_request,
    validate_bootstrap_servers,
)

HELP = "This tool helps to query log directory usage on the specified brokers."
_ERRORS_PACKAGE = "org.apache.kafka.common.errors."

Out = Callable[[str], None]


def parse_broker_list(text: str) -> list[int]:
    try:
        return [int(b) for b in text.split(",") if b]
    except ValueError:
        raise CommandError(f"Invalid broker list: {text} (expected broker ids like 0,1,2)") from None


def error_class_name(error_code: int) -> Any:
    """The Java class name of a log dir's error, as Kafka's tool prints it; None for no error."""
    if error_code == 0:
        return None
    from kafka_py.clients.common.protocol.errors import Errors

    error = Errors.for_code(error_code)
    return _ERRORS_PACKAGE + (error.exception_name or "UnknownServerException")


def format_as_json(log_dirs_by_broker: Sequence[tuple[int, Sequence[Any]]], topics: set[str]) -> str:
    """Kafka's JSON for the DescribeLogDirs results of each broker."""
    brokers = []
    for broker_id, results in log_dirs_by_broker:
        log_dirs = []
        for result in results:
            replicas = sorted(((topic.name, p.partition_index, p.is_future_key), p)
                              for topic in result.topics or () if not topics or topic.name in topics
                              for p in topic.partitions)
            partitions = [{"partition": f"{name}-{index}", "size": p.partition_size, "offsetLag": p.offset_lag,
                           "isFuture": bool(is_future)} for (name, index, is_future), p in replicas]
            log_dirs.append({"logDir": result.log_dir, "error": error_class_name(result.error_code),
                             "partitions": partitions})
        brokers.append({"broker": broker_id, "logDirs": log_dirs})
    return json.dumps({"version": 1, "brokers": brokers}, separators=(",", ":"), ensure_ascii=False)


def describe_log_dirs(admin: Any, broker_id: int) -> Sequence[Any]:
    """One broker's DescribeLogDirs answer for every partition (topics null)."""
    from kafka.protocol.admin import DescribeLogDirsRequest

    return send_admin_request(admin, DescribeLogDirsRequest(topics=None), node_id=broker_id).results


def describe_brokers(admin: Any, broker_list: str | None, topic_list: str, out: Out) -> None:
    topics = {t for t in topic_list.split(",") if t}
    live = cluster_brokers(admin)
    if broker_list is not None:
        brokers = parse_broker_list(broker_list)
        missing = [b for b in brokers if b not in live]
        if missing:
            raise CommandError(f"Broker(s) {','.join(map(str, missing))} not found in the cluster (live brokers: "
                               f"{','.join(map(str, sorted(live)))})")
    else:
        brokers = sorted(live)
    out("Querying brokers for log directories information")
    results = [(b, describe_log_dirs(admin, b)) for b in brokers]
    out(f"Received log directory information from brokers {','.join(map(str, brokers))}")
    out(format_as_json(sorted(results, key=lambda r: r[0]), topics))


def create_admin_client(bootstrap_server: str, command_config: Mapping[str, str]) -> Any:
    from kafka import KafkaAdminClient

    props = {"bootstrap.timeout.ms": str(DEFAULT_BOOTSTRAP_TIMEOUT_MS), "client.id": "log-dirs-tool",
             **command_config, "bootstrap.servers": bootstrap_server}
    return connect(KafkaAdminClient, client_configs(props, KafkaAdminClient))


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120}, help=HELP)
@click.option("--bootstrap-server", metavar="<The server(s) to use for bootstrapping>",
              help="REQUIRED: the server(s) to use for bootstrapping")
@click.option("--command-config", metavar="<Admin client property file>",
              help="Property file containing configs to be passed to Admin Client.")
@click.option("--describe", is_flag=True, help="Describe the specified log directories on the specified brokers.")
@click.option("--topic-list", metavar="<Topic list>", default="", show_default=False,
              help='The list of topics to be queried in the form "topic1,topic2,topic3". All topics will be '
                   "queried if no topic list is specified (default: )")
@click.option("--broker-list", metavar="<Broker list>",
              help='The list of brokers to be queried in the form "0,1,2". All brokers in the cluster will be '
                   "queried if no broker list is specified")
@handle_errors()
def main(bootstrap_server: str | None, command_config: str | None, describe: bool, topic_list: str,
         broker_list: str | None) -> None:
    ctx = click.get_current_context()
    if not any(v is not None and v is not False and v != "" for v in ctx.params.values()):
        print_usage_and_die(HELP)
    if bootstrap_server is None:
        print_usage_and_die('Missing required argument "[bootstrap-server]"')
    if not describe:
        print_usage_and_die('Missing required argument "[describe]"')
    validate_bootstrap_servers(bootstrap_server)
    if broker_list is not None:
        parse_broker_list(broker_list)
    props = load_props(command_config) if command_config else {}
    admin = create_admin_client(bootstrap_server, props)
    try:
        describe_brokers(admin, broker_list, topic_list, click.echo)
    finally:
        admin.close()


if __name__ == "__main__":
    run_tool(main, "kafka-log-dirs.sh")
