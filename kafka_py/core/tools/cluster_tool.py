"""Port of core/src/main/scala/kafka/tools/ClusterTool.scala (Kafka 2.8.2,
``bin/kafka-cluster.sh``): the cluster's id, and the unregistration of a broker.

    bin/kafka-cluster.sh cluster-id --bootstrap-server localhost:9092
    Cluster ID: WZEKwK-bS62oT3ZOSU0dgw
    bin/kafka-cluster.sh unregister --bootstrap-server localhost:9092 --id 3
    Broker 3 is no longer registered.

``cluster-id`` reads DescribeCluster. ``unregister`` sends
UnregisterBroker (API 64), which only a KRaft cluster serves: its broker forwards it to the
active controller, which removes the broker's registration (a fenced broker's, or one that is
gone for good). Against a ZooKeeper-mode cluster, whose brokers do not list the API in their
ApiVersions answer, the tool says "The target cluster does not support the broker
unregistration API." as Kafka's does. ``--config`` (``-c``) names the admin client's
properties file; without ``--bootstrap-server`` (``-b``) there or on the command line the tool
ends with "Please specify --bootstrap-server." and status 1. An error from the controller (an
unknown broker id, say) ends it with the exception's line on stderr and status 1.
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

from kafka_py.core.utils.command_line_utils import (
    AdminTarget,
    CommandError,
    describe_exception,
    load_props,
    run_tool,
)

Out = Callable[[str], None]


class TerseFailure(CommandError):
    """Kafka's TerseFailure: a message for the user, no stack trace."""


def parser(prog: str = "kafka-cluster") -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog=prog, description="The Kafka cluster tool.")
    commands = root.add_subparsers(dest="command", metavar="{cluster-id,unregister}")
    cluster_id = commands.add_parser("cluster-id", help="Get information about the ID of a cluster.")
    unregister = commands.add_parser("unregister", help="Unregister a broker..")
    for sub in (cluster_id, unregister):
        sub.add_argument("--bootstrap-server", "-b", dest="bootstrap_server",
                         help="A list of host/port pairs to use for establishing the connection to the kafka cluster.")
        sub.add_argument("--config", "-c", dest="config",
                         help="A property file containing configs to passed to AdminClient.")
    unregister.add_argument("--id", "-i", dest="id", type=int, help="The ID of the broker to unregister.")
    return root


def cluster_id_command(target: AdminTarget, out: Out) -> None:
    from kio.schema.describe_cluster.v0.request import DescribeClusterRequest

    from kafka_py.clients.common.protocol.api_keys import ApiKeys

    response = target.send("kafka-cluster", ApiKeys.DESCRIBE_CLUSTER, 0,
                           DescribeClusterRequest(include_cluster_authorized_operations=False))
    if response.error_code:
        from kafka_py.core.admin.feature_command import exception_text

        raise CommandError(exception_text(int(response.error_code), response.error_message))
    cluster_id = response.cluster_id
    if cluster_id is None:
        out("No cluster ID found. The Kafka version is probably too old.")
    else:
        out(f"Cluster ID: {cluster_id}")


def unregister_command(target: AdminTarget, broker_id: int, out: Out) -> None:
    from kio.schema.api_versions.v0.request import ApiVersionsRequest
    from kio.schema.unregister_broker.v0.request import UnregisterBrokerRequest
    from kio.static.primitive import i32

    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.core.admin.feature_command import exception_text

    versions = target.send("kafka-cluster", ApiKeys.API_VERSIONS, 0, ApiVersionsRequest())
    if ApiKeys.UNREGISTER_BROKER.id not in {int(k.api_key) for k in versions.api_keys}:
        out("The target cluster does not support the broker unregistration API.")
        return
    response = target.send("kafka-cluster", ApiKeys.UNREGISTER_BROKER, 0,
                           UnregisterBrokerRequest(broker_id=i32(broker_id)))
    if response.error_code:
        raise CommandError(exception_text(int(response.error_code), response.error_message))
    out(f"Broker {broker_id} is no longer registered.")


def main(argv: Sequence[str] | None = None, prog_name: str = "kafka-cluster") -> int:
    args = parser(prog_name).parse_args(argv)
    if args.command is None:
        parser(prog_name).print_usage(sys.stderr)
        print(f"{prog_name}: error: too few arguments", file=sys.stderr)
        return 1
    try:
        props: dict[str, str] = load_props(args.config) if args.config else {}
        if args.bootstrap_server:
            props["bootstrap.servers"] = args.bootstrap_server
        if not props.get("bootstrap.servers"):
            raise TerseFailure("Please specify --bootstrap-server.")
        target = AdminTarget(props["bootstrap.servers"], props)
        if args.command == "cluster-id":
            cluster_id_command(target, print)
        else:
            if args.id is None:
                raise TerseFailure("Please specify --id.")
            unregister_command(target, args.id, print)
    except Exception as e:  # noqa: BLE001 - one line for the user, as the tools do
        print(describe_exception(e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    run_tool(main, "kafka-cluster")
