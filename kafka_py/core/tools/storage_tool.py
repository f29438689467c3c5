"""Port of core/src/main/scala/kafka/tools/StorageTool.scala (``bin/kafka-storage.sh``), with
its TerseFailure (core/.../kafka/tools/TerseFailure.scala).

A KRaft node does not format its storage itself (a blank directory may be a disk that did
not mount); this tool does, before the node's first start::

    bin/kafka-storage.sh random-uuid
    bin/kafka-storage.sh format -t <cluster id> -c config/kraft/server.properties [--ignore-formatted]
    bin/kafka-storage.sh info -c config/kraft/server.properties

- ``random-uuid`` prints a new cluster id: a random Kafka Uuid in its text form, 22
  characters of URL-safe base64.
- ``format`` writes a version-1 ``meta.properties`` (the cluster id and the config's
  node.id) into every directory of log.dirs and metadata.log.dir, creating them, and prints
  ``Formatting <dir>`` for each. It refuses a config without process.roles (a ZooKeeper-mode
  broker formats its own directories), a cluster id that is not a Uuid, and a directory that
  already holds a meta.properties, unless ``--ignore-formatted`` says to skip those.
- ``info`` prints the directories it found, the meta.properties they share and, under
  "Found problem(s):", each directory that is missing, not a directory, not formatted,
  formatted differently from the others or for the other mode; it exits 1 when there is
  a problem.

Output, messages and exit statuses are Kafka's: 0 on success, 1 on a failure (one line on
stderr), on ``info``'s problems and on a command line that does not parse (argparse4j's
status, where click's would be 2). Where Kafka's tool ends in a stack trace (a config that
does not load, an unreadable meta.properties, a ZooKeeper config without a broker id) this
one prints the exception's one line.
"""
from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Sequence, TextIO

import click

from kafka_py.server.broker_metadata_checkpoint import (
    META_PROPERTIES_FILE,
    BrokerMetadataCheckpoint,
    MetaProperties,
    RawMetaProperties,
)
from kafka_py.core.utils.command_line_utils import CommandError, handle_errors, load_props, run_tool
from kafka_py.clients.common.utils import properties

if TYPE_CHECKING:
    from kafka_py.server.kafka_config import KafkaConfig

PROG_NAME = "kafka-storage"


class TerseFailure(CommandError):
    """The command failed in a way its message explains: printed alone, no stack trace."""


def _java_path(directory: str) -> str:
    # How Paths.get(dir).toString prints a directory: no repeated or trailing separators.
    collapsed = re.sub(r"/+", "/", directory)
    return collapsed.rstrip("/") or collapsed


def load_config(path: str) -> "KafkaConfig":
    """The KafkaConfig of a server.properties file (Kafka's ``new KafkaConfig(Utils.loadProps(path))``)."""
    from kafka_py.server.kafka_config import KafkaConfig  # the broker's config pulls in much of the broker

    return KafkaConfig(load_props(path), do_log=False)


def config_to_log_directories(config: "KafkaConfig") -> list[str]:
    """Every directory of log.dirs and metadata.log.dir, sorted, each once."""
    return sorted({*config.log_dirs, config.metadata_log_dir})


def config_to_self_managed_mode(config: "KafkaConfig") -> bool:
    return bool(config.process_roles)


def info_command(stream: TextIO, self_managed_mode: bool, directories: Sequence[str]) -> int:
    """What each directory holds; 1 when any is missing, unformatted or inconsistent."""
    problems: list[str] = []
    found_directories: list[str] = []
    prev_metadata: RawMetaProperties | None = None
    for directory in sorted(directories):
        directory_path = _java_path(directory)
        if not os.path.isdir(directory_path):
            if not os.path.exists(directory_path):
                problems.append(f"{directory_path} does not exist")
            else:
                problems.append(f"{directory_path} is not a directory")
            continue
        found_directories.append(directory_path)
        meta_path = os.path.join(directory_path, META_PROPERTIES_FILE)
        if not os.path.exists(meta_path):
            problems.append(f"{directory_path} is not formatted.")
            continue
        raw = RawMetaProperties(properties.load_file(meta_path))
        cur_metadata: RawMetaProperties | None = raw
        if raw.version not in (0, 1):
            problems.append(f"Unsupported version for {meta_path}: {raw.version}")
            cur_metadata = None
        if prev_metadata is None:
            prev_metadata = cur_metadata
        elif cur_metadata is not None and cur_metadata != prev_metadata:
            problems.append(f"Metadata for {meta_path} was {cur_metadata}, "
                            f"but other directories featured {prev_metadata}")

    if prev_metadata is not None:
        if self_managed_mode:
            if prev_metadata.version == 0:
                problems.append("The kafka configuration file appears to be for a cluster in KRaft mode, but "
                                "the directories are formatted for legacy mode.")
        elif prev_metadata.version == 1:
            problems.append("The kafka configuration file appears to be for a legacy cluster, but "
                            "the directories are formatted for a cluster in KRaft mode.")

    if not directories:
        print("No directories specified.", file=stream)
        return 0
    if found_directories:
        print("Found log directory:" if len(found_directories) == 1 else "Found log directories:", file=stream)
        for directory in found_directories:
            print(f"  {directory}", file=stream)
        print("", file=stream)
    if prev_metadata is not None:
        print(f"Found metadata: {prev_metadata}", file=stream)
        print("", file=stream)
    if problems:
        print("Found problem:" if len(problems) == 1 else "Found problems:", file=stream)
        for problem in problems:
            print(f"  {problem}", file=stream)
        print("", file=stream)
        return 1
    return 0


def build_metadata_properties(cluster_id_str: str, config: "KafkaConfig") -> MetaProperties:
    """The meta.properties to write: the cluster id must be a Kafka Uuid, the node id set."""
    from kafka_py.core.zk.zk_data import uuid_from_base64, uuid_to_base64

    try:
        effective_cluster_id = uuid_from_base64(cluster_id_str)
    except ValueError as e:
        raise TerseFailure(f"Cluster ID string {cluster_id_str} does not appear to be a valid UUID: {e}") from None
    if config.node_id < 0:
        raise TerseFailure("The node.id must be set to a non-negative integer.")
    return MetaProperties(uuid_to_base64(effective_cluster_id), config.node_id)


def format_command(stream: TextIO, directories: Sequence[str], meta_properties: MetaProperties,
                   ignore_formatted: bool) -> int:
    """Write ``meta_properties`` into each directory that has no meta.properties yet."""
    if not directories:
        raise TerseFailure("No log directories found in the configuration.")
    unformatted_directories = []
    for directory in directories:
        if not os.path.isdir(directory) or not os.path.exists(os.path.join(directory, META_PROPERTIES_FILE)):
            unformatted_directories.append(directory)
        elif not ignore_formatted:
            # Nothing is written then: a half-formatted node is worse than an unformatted one.
            raise TerseFailure(f"Log directory {directory} is already formatted. "
                               "Use --ignore-formatted to ignore this directory and format the others.")
    if not unformatted_directories:
        print("All of the log directories are already formatted.", file=stream)
    for directory in unformatted_directories:
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            raise TerseFailure(f"Unable to create storage directory {directory}: {e.strerror or e}") from None
        checkpoint = BrokerMetadataCheckpoint(os.path.join(directory, META_PROPERTIES_FILE))
        checkpoint.write(meta_properties.to_properties())
        print(f"Formatting {directory}", file=stream)
    return 0


# -- the command line ------------------------------------------------------------------------

_CONFIG_OPTION = click.option("--config", "-c", "config", required=True, metavar="CONFIG",
                              help="The Kafka configuration file to use.")


@click.group(name=PROG_NAME, help="The Kafka storage tool.",
             context_settings={"help_option_names": ["-h", "--help"]})
def storage_tool() -> None:
    pass


@storage_tool.command("info", help="Get information about the Kafka log directories on this node.")
@_CONFIG_OPTION
@handle_errors()
def info(config: str) -> int:
    kafka_config = load_config(config)
    directories = config_to_log_directories(kafka_config)
    return info_command(sys.stdout, config_to_self_managed_mode(kafka_config), directories)


@storage_tool.command("format", help="Format the Kafka log directories on this node.")
@_CONFIG_OPTION
@click.option("--cluster-id", "-t", "cluster_id", required=True, metavar="CLUSTER_ID",
              help="The cluster ID to use.")
@click.option("--ignore-formatted", "-g", "ignore_formatted", is_flag=True,
              help="Skip the directories that are already formatted and format the others.")
@handle_errors()
def format_(config: str, cluster_id: str, ignore_formatted: bool) -> int:
    kafka_config = load_config(config)
    directories = config_to_log_directories(kafka_config)
    meta_properties = build_metadata_properties(cluster_id, kafka_config)
    if not config_to_self_managed_mode(kafka_config):
        raise TerseFailure("The kafka configuration file appears to be for a legacy cluster. "
                           "Formatting is only supported for clusters in KRaft mode.")
    return format_command(sys.stdout, directories, meta_properties, ignore_formatted)


@storage_tool.command("random-uuid", help="Print a random UUID.")
def random_uuid_command() -> int:
    from kafka_py.core.zk.zk_data import random_uuid, uuid_to_base64

    click.echo(uuid_to_base64(random_uuid()))
    return 0


def main(args: Sequence[str] | None = None, prog_name: str = "kafka-storage.sh") -> int:
    """Run the tool; its exit status. A command line that does not parse is status 1, as
    argparse4j's parseArgsOrFail ends Kafka's tool."""
    try:
        result = storage_tool.main(args=list(args) if args is not None else None, prog_name=prog_name,
                                   standalone_mode=False)
    except click.UsageError as e:
        e.show()
        return 1
    except click.ClickException as e:
        e.show()
        return e.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        return 1
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    run_tool(main, "kafka-storage.sh")
