"""Port of core/src/main/scala/kafka/tools/StreamsResetter.java
(``bin/kafka-streams-application-reset.sh``).

Resets a Kafka Streams application so that it processes its input again. The application's
consumer group is its ``--application-id``; the tool

* refuses while the group has members (a running instance would commit over the reset),
  unless ``--force`` removes them first;
* commits, for the partitions of ``--input-topics``, the offsets the chosen scenario gives:
  ``--to-earliest`` (the default), ``--to-latest``, ``--to-offset N``, ``--shift-by N``,
  ``--to-datetime YYYY-MM-DDTHH:mm:SS.sss``, ``--by-duration PnDTnHnMnS`` or ``--from-file``
  (CSV lines ``topic,partition,offset``); offsets out of the log's range are moved to its
  start or end, with Kafka's message;
* commits the end offsets for ``--intermediate-topics``;
* deletes the application's internal topics: those named ``<application-id>-...`` ending
  in ``-changelog``, ``-repartition`` or one of the foreign-key join suffixes (all of them,
  or only those ``--internal-topics`` names, which must be among them, as Kafka 3.0 added).

``--dry-run`` prints what would be done and changes nothing. ``--config-file`` holds client
properties for the admin client and the consumer. Messages and exit statuses are Kafka's:
1 when an input or intermediate topic does not exist (the others are still reset) or on
an error (``ERROR: <exception>`` on stderr).
"""
from __future__ import annotations

import re
import sys
import time
from typing import Any, Callable, Mapping, Optional, Sequence

import click

from kafka_py.core.utils.command_line_utils import (
    CommandError,
    client_configs,
    connect,
    describe_exception,
    load_props,
    run_tool,
)

EXIT_CODE_SUCCESS = 0
EXIT_CODE_ERROR = 1

USAGE = (
    "This tool helps to quickly reset an application in order to reprocess its data from scratch.\n"
    "* This tool resets offsets of input topics to the earliest available offset and it skips to the end of "
    "intermediate topics (topics that are input and output topics, e.g., used by deprecated through() method).\n"
    "* This tool deletes the internal topics that were created by Kafka Streams (topics starting with "
    "\"<application.id>-\").\n"
    "You do not need to specify internal topics because the tool finds them automatically.\n"
    "* This tool will not delete output topics (if you want to delete them, you need to do it yourself with the "
    "bin/kafka-topics.sh command).\n"
    "* This tool will not clean up the local state on the stream application instances (the persisted stores "
    "used to cache aggregation results).\n"
    "You need to call KafkaStreams#cleanUp() in your application or manually delete them from the directory "
    "specified by \"state.dir\" configuration (${java.io.tmpdir}/kafka-streams/<application.id> by default).\n"
    "* When long session timeout has been configured, active members could take longer to get expired on the "
    "broker thus blocking the reset job to complete. Use the \"--force\" option could remove those left-over "
    "members immediately. Make sure to stop all stream applications when this option is specified to avoid "
    "unexpected disruptions.\n\n"
    "*** Important! You will get wrong output if you don't clean up the local stores after running the reset "
    "tool!\n")

_FK_JOIN_TOPICS = (re.compile(r".+-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-\d+-topic"),
                   re.compile(r".+-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-\d+-topic"))


class JavaException(Exception):
    """An error reported the way Kafka's tool prints a Java exception (``ERROR: <class>: <message>``)."""

    def __init__(self, java_class: str, message: str) -> None:
        super().__init__(message)
        self.java_class = java_class

    def __str__(self) -> str:
        return f"{self.java_class}: {self.args[0]}"


def matches_internal_topic_format(topic: str) -> bool:
    return (topic.endswith("-changelog") or topic.endswith("-repartition")
            or topic.endswith("-subscription-registration-topic") or topic.endswith("-subscription-response-topic")
            or any(p.fullmatch(topic) for p in _FK_JOIN_TOPICS))


def parse_reset_plan(text: str) -> dict[tuple[str, int], int]:
    """The ``--from-file`` CSV: one ``TOPIC,PARTITION,OFFSET`` a line."""
    if not text:
        raise JavaException("java.text.ParseException", "Error parsing reset plan CSV file. It is empty,")
    lines = text.split("\n")
    while lines and lines[-1] == "":
        lines.pop()  # String.split drops trailing empty strings
    plan: dict[tuple[str, int], int] = {}
    for line in lines:
        parts = line.split(",")
        if len(parts) != 3:
            raise JavaException("java.text.ParseException",
                                "Reset plan CSV file is not following the format `TOPIC,PARTITION,OFFSET`.")
        try:
            plan[(parts[0], int(parts[1]))] = int(parts[2])
        except ValueError as e:
            raise JavaException("java.lang.NumberFormatException", str(e)) from None
    return plan


def member_text(member: Any) -> str:
    """MemberDescription.toString, as Kafka's refusal lists the active members."""
    partitions = ",".join(f"{tp.topic}-{tp.partition}" for tp in member.assignment)
    return (f"(memberId={member.consumer_id}, groupInstanceId={member.group_instance_id or 'null'}, "
            f"clientId={member.client_id}, host={member.host}, assignment=(topicPartitions={partitions}))")


class StreamsResetter:
    def __init__(self, application_id: str, bootstrap_servers: str, input_topics: Sequence[str],
                 intermediate_topics: Sequence[str], internal_topics: Sequence[str], scenario: tuple[str, Any],
                 dry_run: bool, force: bool, config: Mapping[str, str],
                 out: Callable[[str], None] = click.echo) -> None:
        self.application_id = application_id
        self.bootstrap_servers = bootstrap_servers
        self.input_topics = list(input_topics)
        self.intermediate_topics = list(intermediate_topics)
        self.internal_topics = list(internal_topics)
        self.scenario = scenario
        self.dry_run = dry_run
        self.force = force
        self.config = dict(config)
        self.out = out
        self.all_topics: list[str] = []

    def run(self) -> int:
        from kafka import KafkaAdminClient

        from kafka_py.core.admin.consumer_group_command import ConsumerGroupAdmin

        props = {**self.config, "bootstrap.servers": self.bootstrap_servers}
        admin = connect(KafkaAdminClient, client_configs(props, KafkaAdminClient))
        try:
            self.maybe_delete_active_consumers(ConsumerGroupAdmin(admin, 10_000), admin)
            self.all_topics = sorted(admin.list_topics())
            if self.dry_run:
                self.out("----Dry run displays the actions which will be performed when running Streams Reset "
                         "Tool----")
            exit_code = self.maybe_reset_input_and_seek_to_end_intermediate_topic_offsets()
            self.maybe_delete_internal_topics(admin)
            return exit_code
        finally:
            admin.close()

    # -- the group must be empty ---------------------------------------------------------------

    def maybe_delete_active_consumers(self, groups: Any, admin: Any) -> None:
        description = groups.describe_consumer_group(self.application_id)
        members = list(description.members)
        if not members:
            return
        if self.force:
            from kafka.admin import MemberToRemove

            self.out(f"Force deleting all active members in the group: {self.application_id}")
            admin.remove_group_members(self.application_id, [
                MemberToRemove(member_id=m.consumer_id, group_instance_id=m.group_instance_id) for m in members])
            return
        raise JavaException(
            "java.lang.IllegalStateException",
            f"Consumer group '{self.application_id}' is still active and has following members: "
            f"[{', '.join(member_text(m) for m in members)}]. Make sure to stop all running application instances "
            "before running the reset tool. You can use option '--force' to remove active members from the group.")

    # -- offsets ---------------------------------------------------------------------------------

    def maybe_reset_input_and_seek_to_end_intermediate_topic_offsets(self) -> int:
        if not self.input_topics and not self.intermediate_topics:
            self.out("No input or intermediate topics specified. Skipping seek.")
            return EXIT_CODE_SUCCESS
        if self.input_topics:
            self.out(f"Reset-offsets for input topics [{', '.join(self.input_topics)}]")
        if self.intermediate_topics:
            self.out(f"Seek-to-end for intermediate topics [{', '.join(self.intermediate_topics)}]")
        status = EXIT_CODE_SUCCESS
        missing_input = [t for t in self.input_topics if t not in self.all_topics]
        missing_intermediate = [t for t in self.intermediate_topics if t not in self.all_topics]
        if missing_input:
            self.out("Following input topics are not found, skipping them")
            for t in missing_input:
                self.out(f"Topic: {t}")
            status = EXIT_CODE_ERROR
        if missing_intermediate:
            self.out("Following intermediate topics are not found, skipping them")
            for t in missing_intermediate:
                self.out(f"Topic:{t}")
            status = EXIT_CODE_ERROR
        to_subscribe = sorted({t for t in self.input_topics + self.intermediate_topics if t in self.all_topics})
        if not to_subscribe:
            return status

        from kafka import KafkaConsumer, TopicPartition

        props = {**self.config, "bootstrap.servers": self.bootstrap_servers, "group.id": self.application_id,
                 "enable.auto.commit": "false"}
        client = connect(KafkaConsumer, client_configs(props, KafkaConsumer))
        try:
            partitions = [TopicPartition(t, p) for t in to_subscribe for p in sorted(client.partitions_for_topic(t)
                                                                                   or ())]
            client.assign(partitions)
            inputs = [tp for tp in partitions if tp.topic in self.input_topics]
            intermediates = [tp for tp in partitions if tp.topic not in self.input_topics]
            self.maybe_reset(client, inputs)
            self.maybe_seek_to_end(client, intermediates)
            if not self.dry_run:
                positions = {tp: client.position(tp) for tp in partitions}
                from kafka.structs import OffsetAndMetadata

                client.commit({tp: OffsetAndMetadata(o, "", -1) for tp, o in positions.items()})
        finally:
            client.close(autocommit=False)
        self.out("Done.")
        return status

    def maybe_seek_to_end(self, client: Any, partitions: list) -> None:
        if partitions:
            self.out(f"Following intermediate topics offsets will be reset to end (for consumer group "
                     f"{self.application_id})")
            for topic in sorted({tp.topic for tp in partitions}):
                self.out(f"Topic: {topic}")
            client.seek_to_end(*partitions)

    def maybe_reset(self, client: Any, partitions: list) -> None:
        if not partitions:
            return
        self.out(f"Following input topics offsets will be reset to (for consumer group {self.application_id})")
        kind, value = self.scenario
        if kind == "to-offset":
            self.seek_checked(client, partitions, {tp: value for tp in partitions})
        elif kind == "to-latest":
            client.seek_to_end(*partitions)
        elif kind == "shift-by":
            self.seek_checked(client, partitions, {tp: client.position(tp) + value for tp in partitions})
        elif kind in ("to-datetime", "by-duration"):
            timestamp = value if kind == "to-datetime" else int(time.time() * 1000) - value
            found = client.offsets_for_times({tp: timestamp for tp in partitions})
            ends = client.end_offsets(partitions)
            for tp in partitions:
                # no record at or after the time: the log end, where the next record will be
                client.seek(tp, found[tp].offset if found.get(tp) is not None else ends[tp])
        elif kind == "from-file":
            plan = value
            wanted = {}
            for tp in partitions:
                if (tp.topic, tp.partition) not in plan:
                    raise JavaException("java.lang.IllegalArgumentException",
                                        f"The reset plan names no offset for {tp.topic}-{tp.partition}")
                wanted[tp] = plan[(tp.topic, tp.partition)]
            self.seek_checked(client, partitions, wanted)
        else:
            client.seek_to_beginning(*partitions)
        for tp in partitions:
            self.out(f"Topic: {tp.topic} Partition: {tp.partition} Offset: {client.position(tp)}")

    def seek_checked(self, client: Any, partitions: list, wanted: Mapping[Any, int]) -> None:
        """checkOffsetRange: an offset past the end goes to the end, one before the start to the start."""
        ends = client.end_offsets(partitions)
        beginnings = client.beginning_offsets(partitions)
        for tp in partitions:
            offset = wanted[tp]
            if offset >= ends[tp]:
                self.out(f"New offset ({offset}) is higher than latest offset. Value will be set to {ends[tp]}")
                offset = ends[tp]
            elif offset <= beginnings[tp]:
                if offset < beginnings[tp]:
                    self.out(f"New offset ({offset}) is lower than earliest offset. Value will be set to "
                             f"{beginnings[tp]}")
                offset = beginnings[tp]
            client.seek(tp, offset)

    # -- internal topics -------------------------------------------------------------------------

    def is_inferred_internal_topic(self, topic: str) -> bool:
        return (topic not in self.input_topics and topic not in self.intermediate_topics
                and topic.startswith(self.application_id + "-") and matches_internal_topic_format(topic))

    def maybe_delete_internal_topics(self, admin: Any) -> None:
        inferred = [t for t in self.all_topics if self.is_inferred_internal_topic(t)]
        if self.internal_topics:
            unknown = [t for t in self.internal_topics if t not in inferred]
            if unknown:
                raise JavaException(
                    "java.lang.IllegalArgumentException",
                    "Invalid topic specified in the --internal-topics option. Ensure that the topics specified are "
                    "all internal topics. Do a dry run without the --internal-topics option to see the list of all "
                    "internal topics that can be deleted.")
            topics = [t for t in inferred if t in self.internal_topics]
        else:
            topics = inferred
        self.out(f"Deleting all internal/auto-created topics for application {self.application_id}")
        if self.dry_run:
            for t in topics:
                self.out(f"Topic: {t}")
        elif topics:
            self.do_delete(topics, admin)
        self.out("Done.")

    def do_delete(self, topics: list[str], admin: Any) -> None:
        import kafka.errors as Errors

        try:
            admin.delete_topics(topics, timeout_ms=30_000)
        except Errors.KafkaError as e:
            click.echo(f"ERROR: deleting topics {topics}: {describe_exception(e)}", err=True)
            raise JavaException("java.lang.RuntimeException",
                                "Encountered an error deleting one or more topics") from e


def _values(options: Sequence[str]) -> list[str]:
    """joptsimple's withValuesSeparatedBy(','): repeated options and comma lists alike."""
    return [v for option in options for v in option.split(",") if v]


SCENARIOS = ("to_offset", "to_datetime", "by_duration", "to_earliest", "to_latest", "from_file", "shift_by")


@click.command(context_settings={"help_option_names": ["--help"], "max_content_width": 120}, help=USAGE)
@click.option("--application-id", metavar="<String: id>", help="REQUIRED: The Kafka Streams application ID "
              "(application.id).")
@click.option("--bootstrap-servers", default="localhost:9092", show_default=True, metavar="<String: urls>",
              help="Comma-separated list of broker urls with format: HOST1:PORT1,HOST2:PORT2")
@click.option("--input-topics", multiple=True, metavar="<String: list>",
              help="Comma-separated list of user input topics. For these topics, the tool will reset the offset to "
                   "the earliest available offset.")
@click.option("--intermediate-topics", multiple=True, metavar="<String: list>",
              help="Comma-separated list of intermediate user topics (topics that are input and output topics, e.g., "
                   "used in the deprecated through() method). For these topics, the tool will skip to the end.")
@click.option("--internal-topics", multiple=True, metavar="<String: list>",
              help="Comma-separated list of internal topics to delete. Must be a subset of the internal topics "
                   "marked for deletion by the default behaviour (do a dry-run without this option to view these "
                   "topics).")
@click.option("--to-offset", type=int, metavar="<Long>", help="Reset offsets to a specific offset.")
@click.option("--to-datetime", metavar="<String>",
              help="Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'")
@click.option("--by-duration", metavar="<String>",
              help="Reset offsets to offset by duration from current timestamp. Format: 'PnDTnHnMnS'")
@click.option("--to-earliest", is_flag=True, help="Reset offsets to earliest offset.")
@click.option("--to-latest", is_flag=True, help="Reset offsets to latest offset.")
@click.option("--from-file", metavar="<String>", help="Reset offsets to values defined in CSV file.")
@click.option("--shift-by", type=int, metavar="<Long: number-of-offsets>",
              help="Reset offsets shifting current offset by 'n', where 'n' can be positive or negative")
@click.option("--config-file", metavar="<String: file name>",
              help="Property file containing configs to be passed to admin clients and embedded consumer.")
@click.option("--force", is_flag=True,
              help="Force the removal of members of the consumer group (intended to remove stopped members if a "
                   "long session timeout was used). Make sure to shut down all stream applications when this option "
                   "is specified to avoid unexpected rebalances.")
@click.option("--execute", is_flag=True, help="Execute the command.")
@click.option("--dry-run", is_flag=True,
              help="Display the actions that would be performed without executing the reset commands.")
@click.option("--zookeeper", metavar="<String>",
              help="Zookeeper option is deprecated by bootstrap.servers, as the reset tool would no longer access "
                   "Zookeeper directly.")
def main(application_id: Optional[str], bootstrap_servers: str, input_topics: tuple[str, ...],
         intermediate_topics: tuple[str, ...], internal_topics: tuple[str, ...], to_offset: Optional[int],
         to_datetime: Optional[str], by_duration: Optional[str], to_earliest: bool, to_latest: bool,
         from_file: Optional[str], shift_by: Optional[int], config_file: Optional[str], force: bool, execute: bool,
         dry_run: bool, zookeeper: Optional[str]) -> None:
    ctx = click.get_current_context()

    def usage_and_die(message: str) -> None:
        click.echo(message, err=True)
        click.echo(ctx.get_help(), err=True)
        ctx.exit(1)

    if len(sys.argv) <= 1:
        usage_and_die(USAGE)
    if application_id is None:
        usage_and_die("Missing required option(s) [application-id]")
    if execute and dry_run:
        usage_and_die("Only one of --dry-run and --execute can be specified")
    given = {name: ctx.params[name] for name in SCENARIOS
             if ctx.params[name] not in (None, False)}
    if len(given) > 1:
        first, *others = sorted(given)
        usage_and_die(f"Option \"{first.replace('_', '-')}\" can't be used with option "
                      f"\"{others[0].replace('_', '-')}\"")
    status = EXIT_CODE_ERROR
    try:
        from kafka_py.core.admin.consumer_group_command import get_date_time, parse_duration_ms

        scenario: tuple[str, Any] = ("to-earliest", None)
        if to_offset is not None:
            scenario = ("to-offset", to_offset)
        elif to_latest:
            scenario = ("to-latest", None)
        elif shift_by is not None:
            scenario = ("shift-by", shift_by)
        elif to_datetime is not None:
            scenario = ("to-datetime", get_date_time(to_datetime))
        elif by_duration is not None:
            scenario = ("by-duration", parse_duration_ms(by_duration))
        elif from_file is not None:
            try:
                with open(from_file, encoding="utf-8") as f:
                    scenario = ("from-file", parse_reset_plan(f.read()))
            except OSError as e:
                raise JavaException("java.nio.file.NoSuchFileException", f"{from_file}: {e.strerror}") from None
        config = load_props(config_file) if config_file else {}
        status = StreamsResetter(application_id, bootstrap_servers, _values(input_topics),
                                 _values(intermediate_topics), _values(internal_topics), scenario, dry_run, force,
                                 config).run()
    except JavaException as e:
        click.echo(f"ERROR: {e}", err=True)
    except CommandError as e:
        click.echo(f"ERROR: {describe_exception(e)}", err=True)
    except Exception as e:  # noqa: BLE001 - Kafka's tool reports any failure as ERROR: and exits 1
        click.echo(f"ERROR: {describe_exception(e)}", err=True)
    ctx.exit(status)


if __name__ == "__main__":
    run_tool(main, "kafka-streams-application-reset.sh")
