"""Port of core/src/main/scala/kafka/admin/PreferredReplicaLeaderElectionCommand.scala
(``bin/kafka-preferred-replica-election.sh``), deprecated in Kafka 2.8 in favour of
``kafka-leader-election.sh`` but still shipped.

Two ways, as in 2.8:

* ``--bootstrap-server``: a preferred ElectLeaders through the admin client (the partitions of
  ``--path-to-json-file``, or all of them), with this tool's own wording of the answer:

      Successfully completed preferred leader election for partitions foo-0
      Preferred replica already elected for partitions foo-1
      Error completing preferred leader election for partition: foo-2: org.apache.kafka.common.errors...

* ``--zookeeper`` (deprecated): writes ``/admin/preferred_replica_election`` with the partitions
  that exist (all of them without a JSON file) and leaves; the controller watches that znode,
  elects the preferred replicas and deletes it. A znode still there means an election is in
  progress, and the tool refuses to start another.

Failures end the tool with one line on stderr and status 1 (Kafka's tool throws). As with
kafka-leader-election.sh, the "already elected" line names the partitions that needed no
election (Kafka 2.8.2 prints the elected ones there).
"""
from __future__ import annotations

import logging
import os
from typing import Iterable

import click

from kafka_py.clients.common.errors import AdminOperationException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.utils.command_line_utils import (
    LOG_LEVEL_ENV,
    AdminCommandFailedException,
    CommandError,
    handle_errors,
    load_props,
    run_tool,
    validate_bootstrap_servers,
)
from kafka_py.core.admin.leader_election_command import (
    ELECTION_TYPES,
    ElectionOutcome,
    Out,
    admin_client,
    call_elect_leaders,
    parse_replica_election_data,
    print_usage_and_die,
    read_json_file,
)

ZK_TIMEOUT_MS = 30_000
DEPRECATION = "This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405"


def parse_preferred_replica_election_data(text: str) -> set[TopicPartition]:
    return parse_replica_election_data(text, "Preferred replica election data",
                                       missing_partitions="Preferred replica election data is empty")


def scala_set(partitions: Iterable[TopicPartition]) -> str:
    """A Scala immutable Set as Kafka prints it: Set(a, b) up to four elements, HashSet(...) beyond."""
    items = sorted(partitions)
    return f"{'Set' if len(items) <= 4 else 'HashSet'}({', '.join(map(str, items))})"


# -- through ZooKeeper -----------------------------------------------------------------------

def write_preferred_replica_election_data(zk: object, partitions: set[TopicPartition], out: Out) -> None:
    from kazoo.exceptions import NodeExistsError

    try:
        zk.create_preferred_replica_election(sorted(partitions))  # type: ignore[attr-defined]
        out(f"Created preferred replica election path with {','.join(map(str, sorted(partitions)))}")
    except NodeExistsError:
        in_progress = zk.get_preferred_replica_election()  # type: ignore[attr-defined]
        raise AdminOperationException("Preferred replica leader election currently in progress for "
                                      f"{','.join(map(str, sorted(in_progress)))}. Aborting operation") from None


def elect_through_zookeeper(zookeeper: str, partitions_from_user: set[TopicPartition] | None, out: Out) -> None:
    """ZkCommand.electPreferredLeaders."""
    from kafka_py.core.zk.kafka_zk_client import KafkaZkClient

    if not os.environ.get(LOG_LEVEL_ENV, "").strip():
        # kazoo's reconnect warnings would bury the one line that matters, as kafka-python's do
        logging.getLogger("kazoo").setLevel(logging.CRITICAL + 1)
    try:
        zk = KafkaZkClient(zookeeper, session_timeout_ms=ZK_TIMEOUT_MS, connection_timeout_ms=ZK_TIMEOUT_MS,
                           create_chroot_if_missing=False, name="preferred-replica-election")
    except Exception as e:  # noqa: BLE001 - one line, whatever kazoo raises
        raise AdminCommandFailedException(f"Admin command failed: unable to connect to ZooKeeper at {zookeeper}: "
                                          f"{e}") from e
    try:
        if partitions_from_user is None:
            valid, invalid = zk.get_all_partitions(), set()
        else:
            existing = {TopicPartition(topic, p)
                        for topic, ps in zk.get_partitions_for_topics({tp.topic for tp in partitions_from_user}).items()
                        for p in ps}
            valid = {tp for tp in partitions_from_user if tp in existing}
            invalid = partitions_from_user - valid
        write_preferred_replica_election_data(zk, valid, out)
        out(f"Successfully started preferred replica election for partitions {scala_set(valid)}")
        for tp in sorted(invalid):
            out(f"Skipping preferred replica leader election for partition {tp} since it doesn't exist.")
    except (CommandError, AdminOperationException) as e:
        raise AdminCommandFailedException(f"Admin command failed: {e}") from e
    except Exception as e:  # noqa: BLE001 - Kafka wraps every failure the same way
        raise AdminCommandFailedException(f"Admin command failed: {type(e).__name__}: {e}") from e
    finally:
        zk.close()


# -- through the admin client ----------------------------------------------------------------

def elect_through_admin(bootstrap_server: str, admin_config: dict[str, str],
                        partitions_from_user: set[TopicPartition] | None, out: Out) -> None:
    """AdminClientCommand.electPreferredLeaders."""
    admin = admin_client(bootstrap_server, admin_config, "kafka-preferred-replica-election")
    try:
        results = call_elect_leaders(admin, ELECTION_TYPES["PREFERRED"], partitions_from_user, out)
    finally:
        admin.close()
    outcome = ElectionOutcome.of(results)
    if outcome.succeeded:
        out(f"Successfully completed preferred leader election for partitions {', '.join(map(str, outcome.succeeded))}")
    if outcome.noop:
        out(f"Preferred replica already elected for partitions {', '.join(map(str, outcome.noop))}")
    if outcome.failed:
        for tp, error in outcome.failed.items():
            out(f"Error completing preferred leader election for partition: {tp}: {error}")
        raise AdminCommandFailedException(f"{len(outcome.failed)} preferred replica(s) could not be elected")


_HELP = ("This tool helps to causes leadership for each partition to be transferred back to the 'preferred "
         "replica', it can be used to balance leadership among the servers.")


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120}, help=_HELP)
@click.option("--path-to-json-file", metavar="<list of partitions for which preferred replica leader election needs "
                                              "to be triggered>",
              help='The JSON file with the list of partitions for which preferred replica leader election should be '
                   'done, in the following format - {"partitions": [{"topic": "foo", "partition": 1}, '
                   '{"topic": "foobar", "partition": 2}]} Defaults to all existing partitions')
@click.option("--zookeeper", metavar="<urls>",
              help="DEPRECATED. The connection string for the zookeeper connection in the form host:port. Multiple "
                   "URLS can be given to allow fail-over. Replaced by --bootstrap-server, REQUIRED unless "
                   "--bootstrap-server is given.")
@click.option("--bootstrap-server", metavar="<host:port>",
              help="A hostname and port for the broker to connect to, in the form host:port. Multiple comma-separated "
                   "URLs can be given. REQUIRED unless --zookeeper is given.")
@click.option("--admin.config", "admin_config", metavar="<config file>",
              help="Admin client config properties file to pass to the admin client when --bootstrap-server is "
                   "given.")
@click.pass_context
@handle_errors()
def main(ctx: click.Context, path_to_json_file: str | None, zookeeper: str | None, bootstrap_server: str | None,
         admin_config: str | None) -> None:
    click.echo(DEPRECATION)
    if not any(v for v in ctx.params.values()):
        print_usage_and_die(_HELP)
    if zookeeper is not None and bootstrap_server is not None:
        raise click.UsageError("Option(s) [zookeeper, bootstrap-server] are mutually exclusive")
    if zookeeper is None and bootstrap_server is None:
        print_usage_and_die("Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided")
    if admin_config is not None and bootstrap_server is None:
        raise click.UsageError("Option admin.config is only allowed with --bootstrap-server")
    partitions = (parse_preferred_replica_election_data(read_json_file(path_to_json_file))
                  if path_to_json_file is not None else None)
    if zookeeper is not None:
        click.echo("Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.")
        click.echo("Use --bootstrap-server instead to specify a broker to connect to.")
        elect_through_zookeeper(zookeeper, partitions, click.echo)
    else:
        assert bootstrap_server is not None
        validate_bootstrap_servers(bootstrap_server)
        props = load_props(admin_config) if admin_config else {}
        elect_through_admin(bootstrap_server, props, partitions, click.echo)


if __name__ == "__main__":
    run_tool(main, "kafka-preferred-replica-election.sh")
