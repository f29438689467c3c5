"""Port of core/src/main/scala/kafka/admin/BrokerApiVersionsCommand.scala, with the text of
clients/src/main/java/org/apache/kafka/clients/NodeApiVersions.java
(``bin/kafka-broker-api-versions.sh``).

``bin/kafka-broker-api-versions.sh --bootstrap-server host:port [--command-config file]``
finds every broker of the cluster with a Metadata request to the bootstrap servers, asks
each for its ApiVersions and prints them as Kafka's tool does, one API a line, with the latest
version usable by a client of Kafka 2.8.2 (this project's ApiKeys)::

    127.0.0.1:9092 (id: 0 rack: null) -> (
    	Produce(0): 0 to 9 [usable: 9],
    	Fetch(1): 0 to 12 [usable: 12],
    	...
    	DescribeProducers(61): UNSUPPORTED,
    	...
    )

An API of ZooKeeper-mode brokers that a broker does not offer reads ``UNSUPPORTED``; an API
key the client does not know reads ``UNKNOWN(key)``. A broker that does not answer gets
``<broker> -> ERROR: <the failure>`` and the others are still listed.

Differences from Kafka's tool, on purpose:

- brokers are printed by id (Kafka prints them in the order of a Scala Map, by id only for
  clusters of up to four brokers);
- a cluster that cannot be reached is one line on stderr and exit status 1 after the
  connection timeout, where Kafka's tool retries Metadata forever.
"""
from __future__ import annotations

from typing import Any, Mapping

import click

from kafka_py.clients.common.protocol.requests import CLIENT_SOFTWARE_NAME, CLIENT_SOFTWARE_VERSION
from kafka_py.core.admin.broker_connections import BrokerConnections, BrokerNode
from kafka_py.core.utils.command_line_utils import (
    CommandError,
    describe_exception,
    handle_errors,
    load_props,
    print_usage_and_die,
    run_tool,
    validate_port_or_die,
)

HELP = "This tool helps to retrieve broker version information."


def api_version_text(api_key: int, min_version: int, max_version: int) -> str:
    """NodeApiVersions.apiVersionToText: ``Name(key): min to max [usable: v]``."""
    from kafka_py.clients.common.protocol.api_keys import ApiKeys

    api = ApiKeys(api_key) if ApiKeys.has_id(api_key) else None
    head = f"{api.api_name}({api_key}): " if api is not None else f"UNKNOWN({api_key}): "
    versions = str(min_version) if min_version == max_version else f"{min_version} to {max_version}"
    if api is None:
        return head + versions
    if api.latest_version < min_version:
        usable = " [unusable: node too new]"
    elif max_version < api.oldest_version:
        usable = " [unusable: node too old]"
    else:
        usable = f" [usable: {min(api.latest_version, max_version)}]"
    return head + versions + usable


def node_api_versions_text(versions: Mapping[int, tuple[int, int]], line_breaks: bool = True) -> str:
    """NodeApiVersions.toString(lineBreaks): every API the node offers and every API of a
    ZooKeeper-mode broker it does not (``UNSUPPORTED``), by key."""
    from kafka_py.clients.common.protocol.api_keys import ApiKeys

    texts = {key: api_version_text(key, low, high) for key, (low, high) in versions.items()}
    for api in ApiKeys:
        if api.zk_broker and api.id not in texts:
            texts[api.id] = f"{api.api_name}({api.id}): UNSUPPORTED"
    separator = ",\n\t" if line_breaks else ", "
    body = separator.join(texts[key] for key in sorted(texts))
    return f"(\n\t{body}\n)" if line_breaks else f"({body})"


def broker_api_versions(connections: BrokerConnections, broker: BrokerNode) -> dict[int, tuple[int, int]]:
    """The (min, max) version of each API the broker offers; raises on an error code."""
    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.errors import Errors

    version = ApiKeys.API_VERSIONS.latest_version
    for _ in range(2):
        response = connections.send(broker.address, ApiKeys.API_VERSIONS, version,
                                    {"client_software_name": CLIENT_SOFTWARE_NAME,
                                     "client_software_version": CLIENT_SOFTWARE_VERSION})
        error = Errors.for_code(int(response.error_code))
        offered = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in response.api_keys}
        if error is Errors.UNSUPPORTED_VERSION and ApiKeys.API_VERSIONS.id in offered and version > 0:
            # an older broker answers with the versions of ApiVersions it knows (KIP-511)
            version = min(offered[ApiKeys.API_VERSIONS.id][1], version - 1)
            continue
        if error is not Errors.NONE:
            raise CommandError(f"org.apache.kafka.common.errors.{error.exception_name}: {error.default_message}")
        return offered
    raise CommandError("org.apache.kafka.common.errors.UnsupportedVersionException: "
                       "The version of API is not supported.")


def execute(bootstrap_server: str, command_config: Mapping[str, str], out: Any = None) -> None:
    out = out or click.echo
    servers = validate_port_or_die(bootstrap_server)
    with BrokerConnections(servers, command_config, "broker-api-versions") as connections:
        brokers = connections.metadata([]).brokers
        for broker_id in sorted(brokers):
            broker = brokers[broker_id]
            try:
                text = node_api_versions_text(broker_api_versions(connections, broker))
            except Exception as e:  # one broker that fails to answer is its line of the output
                out(f"{broker} -> ERROR: {describe_exception(e)}")
                continue
            out(f"{broker} -> {text}")


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120}, help=HELP)
@click.option("--bootstrap-server", metavar="<server(s) to use for bootstrapping>",
              help="REQUIRED: The server to connect to.")
@click.option("--command-config", metavar="<command config property file>",
              help="A property file containing configs to be passed to Admin Client.")
@handle_errors()
def main(bootstrap_server: str | None, command_config: str | None) -> None:
    if bootstrap_server is None and command_config is None:
        print_usage_and_die(HELP)
    if bootstrap_server is None:
        print_usage_and_die('Missing required argument "[bootstrap-server]"')
    props = load_props(command_config) if command_config else {}
    execute(bootstrap_server, props)


if __name__ == "__main__":
    run_tool(main, "kafka-broker-api-versions.sh")
