"""Port of core/src/main/scala/kafka/admin/LeaderElectionCommand.scala
(``bin/kafka-leader-election.sh``).

Asks the controller (ElectLeaders, through kafka-python's admin client) for preferred or
unclean leader elections of the partitions named by ``--topic``/``--partition``, by a JSON
file (``--path-to-json-file``, Kafka's ``{"partitions": [{"topic": "foo", "partition": 1}]}``)
or of every partition (``--all-topic-partitions``: the request names none, and the broker
answers only for the partitions that needed an election), and prints Kafka's lines:

    Successfully completed leader election (PREFERRED) for partitions foo-0, foo-1
    Valid replica already elected for partitions foo-2
    Error completing leader election (UNCLEAN) for partition: foo-3: org.apache.kafka.common.errors.EligibleLeadersNotAvailableException: ...

Failures end the tool with one line on stderr and exit status 1 (Kafka's tool throws and the
JVM prints the stack trace): bad options, a bad JSON file, the cluster out of reach, a refused
authorization ("Not authorized to perform leader election" on stdout first, as Kafka), and
"<n> replica(s) could not be elected" after the per-partition error lines. Kafka 2.8.2 prints
the *elected* partitions on its "Valid replica already elected" line (a bug fixed in later
releases); this tool prints the partitions whose leader was already valid.

The helpers here (the JSON file, the admin request and the answer's lines) also serve
``kafka-preferred-replica-election.sh`` (preferred_replica_leader_election_command.py).
"""
from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, NoReturn

import click

from kafka_py.clients.common.errors import AdminOperationException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.utils.command_line_utils import (
    DEFAULT_BOOTSTRAP_TIMEOUT_MS,
    AdminCommandFailedException,
    CommandError,
    client_configs,
    connect,
    handle_errors,
    load_props,
    run_tool,
    validate_bootstrap_servers,
)

logger = logging.getLogger(__name__)

# ElectionType (clients' org.apache.kafka.common.ElectionType): name -> wire value
ELECTION_TYPES = {"PREFERRED": 0, "UNCLEAN": 1}
DEFAULT_TIMEOUT_MS = 30_000
_ELECTION_NOT_NEEDED = 84
_CLUSTER_AUTHORIZATION_FAILED = 31
_NOT_CONTROLLER = 41

Out = Callable[[str], None]


# -- input -----------------------------------------------------------------------------------

def parse_replica_election_data(text: str, what: str = "Replica election data",
                                missing_partitions: str | None = None) -> set[TopicPartition]:
    """The partitions of Kafka's election JSON, ``{"partitions": [{"topic": t, "partition": p}, ...]}``.

    Kafka's messages: "... is empty" for text that is not JSON, "... is missing "partitions"
    field" (the preferred-replica tool says "is empty" there too), "... contains duplicate
    partitions: t-0"."""
    try:
        js = json.loads(text)
    except ValueError:
        js = None
    if js is None:
        raise AdminOperationException(f"{what} is empty")
    if not isinstance(js, dict) or "partitions" not in js:
        raise AdminOperationException(missing_partitions or f'{what} is missing "partitions" field')
    raw = js["partitions"]
    if not isinstance(raw, list):
        raise AdminOperationException(f'{what}: "partitions" must be an array of {{"topic": ..., "partition": ...}}')
    partitions = []
    for entry in raw:
        topic = entry.get("topic") if isinstance(entry, dict) else None
        partition = entry.get("partition") if isinstance(entry, dict) else None
        if not isinstance(topic, str) or isinstance(partition, bool) or not isinstance(partition, int):
            raise AdminOperationException(f'{what}: each partition needs a "topic" string and a "partition" '
                                          f"integer, got {json.dumps(entry)}")
        partitions.append(TopicPartition(topic, partition))
    duplicates = [tp for tp, n in Counter(partitions).items() if n > 1]
    if duplicates:
        raise AdminOperationException(f"{what} contains duplicate partitions: {','.join(map(str, duplicates))}")
    return set(partitions)


def read_json_file(path: str) -> str:
    """Utils.readFileAsString."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise CommandError(f"Unable to read {path}: {e.strerror or e}") from e


def print_usage_and_die(message: str | None = None) -> NoReturn:
    """CommandLineUtils.printUsageAndDie: the message and the tool's help on stderr, status 1."""
    ctx = click.get_current_context()
    if message:
        click.echo(message, err=True)
    click.echo(ctx.get_help(), err=True)
    ctx.exit(1)
    raise AssertionError("unreachable")


# -- the admin request -----------------------------------------------------------------------

@dataclass(frozen=True)
class ElectionError:
    """A partition's failed election, printed as Java prints the exception Kafka's admin
    client makes of the error code (its class name, then the broker's message)."""

    error_code: int
    message: str | None

    def __str__(self) -> str:
        from kafka_py.clients.common.protocol.errors import Errors

        try:
            error = Errors.for_code(self.error_code)
        except (KeyError, ValueError):
            return f"org.apache.kafka.common.errors.UnknownServerException: Unknown error code {self.error_code}"
        name = error.exception_name or "UnknownServerException"
        return f"org.apache.kafka.common.errors.{name}: {self.message or error.message or error.name}"


def admin_client(bootstrap_server: str, admin_config: Mapping[str, str], client_id: str,
                 timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Any:
    """kafka-python's KafkaAdminClient with the ``--admin.config`` properties; its requests
    wait longer than the election itself, so the broker's REQUEST_TIMED_OUT arrives first."""
    from kafka import KafkaAdminClient

    props = {"bootstrap.timeout.ms": str(DEFAULT_BOOTSTRAP_TIMEOUT_MS), **admin_config,
             "bootstrap.servers": bootstrap_server}
    configs = client_configs(props, KafkaAdminClient)
    configs.setdefault("client_id", client_id)
    configs["request_timeout_ms"] = max(int(configs.get("request_timeout_ms", 0) or 0), timeout_ms + 15_000)
    return connect(KafkaAdminClient, configs)


def elect_leaders_request(admin: Any, election_type: int, partitions: Iterable[TopicPartition] | None,
                          timeout_ms: int = DEFAULT_TIMEOUT_MS) -> dict[TopicPartition, ElectionError | None]:
    """Admin.electLeaders: one ElectLeaders request to the controller (``partitions`` None: all
    of them); each partition's error, or None where the election succeeded.

    AdminCommandFailedException for a refused authorization (after printing Kafka's line) or
    another top-level error; kafka-python's errors (timeouts, no controller) pass through."""
    import kafka.errors as kafka_errors
    from kafka.protocol.admin import ElectionType, ElectLeadersRequest

    topic_partitions = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(partitions):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        topic_partitions = list(by_topic.items())
    request = ElectLeadersRequest(election_type=ElectionType(election_type), topic_partitions=topic_partitions,
                                  timeout_ms=timeout_ms)

    def response_errors(response: Any) -> Iterable[Any]:
        # what kafka-python checks: NOT_CONTROLLER makes it find the controller and ask again
        if getattr(response, "error_code", 0):
            yield kafka_errors.for_code(response.error_code)
        for result in response.replica_election_results:
            for partition in result.partition_result:
                if partition.error_code == _NOT_CONTROLLER:
                    yield kafka_errors.for_code(partition.error_code)

    response = admin._manager.run(admin._send_request_to_controller, request, response_errors, False, ())
    top = int(getattr(response, "error_code", 0) or 0)
    if top == _CLUSTER_AUTHORIZATION_FAILED:
        raise AdminCommandFailedException("Not authorized to perform leader election")
    if top:
        raise AdminCommandFailedException(str(ElectionError(top, None)))
    results: dict[TopicPartition, ElectionError | None] = {}
    for result in response.replica_election_results:
        for partition in result.partition_result:
            tp = TopicPartition(result.topic, int(partition.partition_id))
            code = int(partition.error_code)
            results[tp] = ElectionError(code, partition.error_message) if code else None
    return results


def call_elect_leaders(admin: Any, election_type: int, partitions: set[TopicPartition] | None,
                       out: Out, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> dict[TopicPartition, ElectionError | None]:
    """``elect_leaders_request`` with Kafka's lines for a timeout and a refused authorization."""
    import kafka.errors as kafka_errors

    try:
        return elect_leaders_request(admin, election_type, partitions, timeout_ms)
    except AdminCommandFailedException as e:
        if str(e) == "Not authorized to perform leader election":
            out(str(e))
        raise
    except (kafka_errors.KafkaTimeoutError, kafka_errors.RequestTimedOutError) as e:
        out("Timeout waiting for election results")
        raise AdminCommandFailedException("Timeout waiting for election results") from e


@dataclass
class ElectionOutcome:
    succeeded: list[TopicPartition] = field(default_factory=list)
    noop: list[TopicPartition] = field(default_factory=list)
    failed: dict[TopicPartition, ElectionError] = field(default_factory=dict)

    @classmethod
    def of(cls, results: Mapping[TopicPartition, ElectionError | None]) -> "ElectionOutcome":
        outcome = cls()
        for tp in sorted(results):
            error = results[tp]
            if error is None:
                outcome.succeeded.append(tp)
            elif error.error_code == _ELECTION_NOT_NEEDED:
                outcome.noop.append(tp)
            else:
                outcome.failed[tp] = error
        return outcome


def report(outcome: ElectionOutcome, election_type: str, out: Out) -> None:
    """LeaderElectionCommand's lines; AdminCommandFailedException when any election failed."""
    if outcome.succeeded:
        out(f"Successfully completed leader election ({election_type}) for partitions "
            f"{', '.join(map(str, outcome.succeeded))}")
    if outcome.noop:
        out(f"Valid replica already elected for partitions {', '.join(map(str, outcome.noop))}")
    if outcome.failed:
        for tp, error in outcome.failed.items():
            out(f"Error completing leader election ({election_type}) for partition: {tp}: {error}")
        raise AdminCommandFailedException(f"{len(outcome.failed)} replica(s) could not be elected")


# -- the command -----------------------------------------------------------------------------

def validate(bootstrap_server: str | None, election_type: str | None, topic: str | None, partition: int | None,
             all_topic_partitions: bool, path_to_json_file: str | None) -> None:
    """LeaderElectionCommand.validate, with its messages (option names without dashes, as
    joptsimple names them)."""
    missing = []
    if bootstrap_server is None:
        missing.insert(0, "bootstrap-server")
    if election_type is None:
        missing.insert(0, "election-type")
    if missing:
        raise AdminCommandFailedException(f"Missing required option(s): {', '.join(missing)}")
    given = sum([topic is not None, all_topic_partitions, path_to_json_file is not None])
    if given != 1:
        raise AdminCommandFailedException("One and only one of the following options is required: "
                                          "topic, all-topic-partitions, path-to-json-file")
    if topic is not None and partition is None:
        raise AdminCommandFailedException("Missing required option(s): partition")
    if topic is None and partition is not None:
        raise AdminCommandFailedException("Option partition is only allowed if topic is used")


_HELP = ("This tool attempts to elect a new leader for a set of topic partitions. The type of elections "
         "supported are preferred replicas and unclean replicas.")


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120}, help=_HELP)
@click.option("--bootstrap-server", metavar="<host:port>",
              help="A hostname and port for the broker to connect to, in the form host:port. Multiple comma "
                   "separated URLs can be given. REQUIRED.")
@click.option("--admin.config", "admin_config", metavar="<config file>",
              help="Configuration properties files to pass to the admin client")
@click.option("--path-to-json-file", metavar="<Path to JSON file>",
              help='The JSON file with the list of partition for which leader elections should be performed. '
                   'This is an example format. {"partitions": [{"topic": "foo", "partition": 1}, '
                   '{"topic": "foobar", "partition": 2}]} Not allowed if --all-topic-partitions or --topic flags '
                   'are specified.')
@click.option("--topic", metavar="<topic name>",
              help="Name of topic for which to perform an election. Not allowed if --path-to-json-file or "
                   "--all-topic-partitions is specified.")
@click.option("--partition", type=int, metavar="<partition id>",
              help="Partition id for which to perform an election. REQUIRED if --topic is specified.")
@click.option("--all-topic-partitions", is_flag=True,
              help="Perform election on all of the eligible topic partitions based on the type of election (see "
                   "the --election-type flag). Not allowed if --topic or --path-to-json-file is specified.")
@click.option("--election-type", type=click.Choice(["preferred", "unclean"], case_sensitive=False),
              metavar="<election type>",
              help='Type of election to attempt. Possible values are "preferred" for preferred leader election or '
                   '"unclean" for unclean leader election. If preferred election is selection, the election is only '
                   "performed if the current leader is not the preferred leader for the topic partition. If unclean "
                   "election is selected, the election is only performed if there are no leader for the topic "
                   "partition. REQUIRED.")
@click.pass_context
@handle_errors()
def main(ctx: click.Context, bootstrap_server: str | None, admin_config: str | None, path_to_json_file: str | None,
         topic: str | None, partition: int | None, all_topic_partitions: bool, election_type: str | None) -> None:
    if not any(v for k, v in ctx.params.items()):
        print_usage_and_die(_HELP)
    validate(bootstrap_server, election_type, topic, partition, all_topic_partitions, path_to_json_file)
    assert bootstrap_server is not None and election_type is not None
    validate_bootstrap_servers(bootstrap_server)
    kind = election_type.upper()
    partitions: set[TopicPartition] | None = None
    if path_to_json_file is not None:
        partitions = parse_replica_election_data(read_json_file(path_to_json_file))
    elif topic is not None:
        assert partition is not None
        partitions = {TopicPartition(topic, partition)}
    props = load_props(admin_config) if admin_config else {}
    admin = admin_client(bootstrap_server, props, "kafka-leader-election")
    try:
        results = call_elect_leaders(admin, ELECTION_TYPES[kind], partitions, click.echo)
    finally:
        admin.close()
    report(ElectionOutcome.of(results), kind, click.echo)


if __name__ == "__main__":
    run_tool(main, "kafka-leader-election.sh")
