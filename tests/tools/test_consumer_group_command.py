"""kafka-consumer-groups.sh without a broker: option rules, datetime and duration parsing,
the reset plan, CSV plans and the tables it prints."""
from __future__ import annotations

from datetime import datetime, timezone

import click
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.utils.command_line_utils import CommandError
from kafka_py.core.admin.consumer_group_command import (
    ConsumerGroupCommandOptions,
    ConsumerGroupDescription,
    GroupState,
    MemberAssignmentState,
    MemberDescription,
    Node,
    PartitionAssignmentState,
    ResetScenario,
    check_offsets_range,
    collect_group_members,
    collect_group_offsets,
    consumer_group_states_from_string,
    decode_assignment,
    export_offsets_to_csv,
    format_assignment,
    format_delete_offsets_result,
    format_group_states,
    format_members,
    format_offsets,
    format_offsets_to_reset,
    format_state,
    get_date_time,
    kafka_exception_text,
    main,
    parse_duration_ms,
    parse_reset_plan,
    parse_topic_args,
    prepare_offsets_to_reset,
    should_print_member_state,
)

BOOTSTRAP = "localhost:9092"


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def opts(**kwargs) -> ConsumerGroupCommandOptions:
    kwargs.setdefault("bootstrap_server", BOOTSTRAP)
    return ConsumerGroupCommandOptions(**kwargs)


def epoch_ms(*args, tz=timezone.utc, micro_ms: int = 0) -> int:
    return int(datetime(*args, tzinfo=tz).timestamp()) * 1000 + micro_ms


# -- option rules ------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    (dict(bootstrap_server=None, list=True), 'Missing required argument "[bootstrap-server]"'),
    (dict(), "exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets"),
    (dict(list=True, delete=True, all_groups=True), "exactly one action"),
    (dict(describe=True), "Option [describe] takes one of these options: [group], [all-groups]"),
    (dict(describe=True, group=("g",), members=True, state=""), "takes at most one of these options"),
    (dict(describe=True, group=("g",), members=True, offsets=True), "takes at most one of these options"),
    (dict(describe=True, group=("g",), state="Stable"), "Option [describe] does not take a value for [state]"),
    (dict(list=True, members=True), "Option(s) [members] are unavailable"),
    (dict(list=True, verbose=True), "Option(s) [verbose] are unavailable"),
    (dict(delete=True, group=("g",), state=""), "Option(s) [state] are unavailable"),
    (dict(delete=True), "Option [delete] takes one of these options"),
    (dict(delete=True, group=("g",), topic=("t",)), "does not support topic-specific offset deletion"),
    (dict(delete_offsets=True, group=("g",)), "Option [delete-offsets] takes the following options: [group], [topic]"),
    (dict(delete_offsets=True, topic=("t",)), "Option [delete-offsets] takes the following options"),
    (dict(delete_offsets=True, group=("g", "h"), topic=("t",)), "one consumer group at a time"),
    (dict(reset_offsets=True, group=("g",), to_earliest=True, all_topics=True, dry_run=True, execute=True),
     "Option [reset-offsets] only accepts one of [execute] and [dry-run]"),
    (dict(reset_offsets=True, to_earliest=True, all_topics=True), "Option [reset-offsets] takes one of these options"),
    (dict(reset_offsets=True, group=("g",), to_earliest=True, to_offset=3, all_topics=True),
     "Option \"[to-offset]\" can't be used with option \"[to-earliest]\""),
    (dict(reset_offsets=True, group=("g",), shift_by=-1, to_current=True, all_topics=True),
     "Option \"[to-current]\" can't be used with option \"[shift-by]\""),
    (dict(reset_offsets=True, group=("g",), all_topics=True), "requires one of the following scenarios"),
    (dict(reset_offsets=True, group=("g",), to_latest=True), "One of the reset scopes should be defined"),
    (dict(describe=True, group=("g",), all_groups=True),
     "Option \"[group]\" can't be used with option \"[all-groups]\""),
    (dict(list=True, group=("g",)), "Option \"[group]\" can't be used with option \"[list]\""),
    (dict(describe=True, group=("g",), topic=("t",)), "Option \"[topic]\" can't be used with option \"[describe]\""),
    (dict(describe=True, group=("g",), timeout=0), "Option [timeout] must be positive"),
])
def test_invalid_option_combinations(kwargs, message) -> None:
    with pytest.raises(click.UsageError) as info:
        opts(**kwargs).check_args()
    assert message in info.value.message


@pytest.mark.parametrize("kwargs", [
    dict(list=True),
    dict(list=True, state=""),
    dict(list=True, state="stable,empty"),
    dict(describe=True, all_groups=True),
    dict(describe=True, group=("a", "b"), members=True, verbose=True),
    dict(describe=True, group=("a",), state=""),
    dict(delete=True, all_groups=True),
    dict(delete_offsets=True, group=("g",), topic=("t", "u:0,1")),
    dict(reset_offsets=True, group=("g",), to_earliest=True, topic=("t",), execute=True),
    dict(reset_offsets=True, all_groups=True, shift_by=-2, all_topics=True, dry_run=True),
    dict(reset_offsets=True, group=("g",), from_file="plan.csv"),
])
def test_valid_option_combinations(kwargs) -> None:
    opts(**kwargs).check_args()


def test_dry_run_is_the_default() -> None:
    assert opts(reset_offsets=True).dry_run_only
    assert opts(reset_offsets=True, dry_run=True).dry_run_only
    assert not opts(reset_offsets=True, execute=True).dry_run_only


def test_reset_scenario_values() -> None:
    assert opts(to_offset=7).reset_scenario() == ResetScenario("to-offset", 7)
    assert opts(shift_by=-3).reset_scenario() == ResetScenario("shift-by", -3)
    assert opts(to_latest=True).reset_scenario() == ResetScenario("to-latest")
    assert opts(to_datetime="2019-01-01T00:00:00.000").reset_scenario() == ResetScenario(
        "to-datetime", epoch_ms(2019, 1, 1))
    assert opts(by_duration="PT1H").reset_scenario(now_ms=10_000_000) == ResetScenario("by-duration", 6_400_000)


def run_cli(*args: str):
    return CliRunner().invoke(main, list(args), prog_name="kafka-consumer-groups.sh")


def test_cli_usage_errors_need_no_broker() -> None:
    result = run_cli("--list")
    assert result.exit_code == 2 and 'Missing required argument "[bootstrap-server]"' in result.output
    result = run_cli("--bootstrap-server", "nohostport", "--list")
    assert result.exit_code == 2 and "valid host:port" in result.output
    # --state takes an optional value: bare before another option, a value after it
    result = run_cli("--bootstrap-server", BOOTSTRAP, "--describe", "--group", "g", "--state", "stable")
    assert result.exit_code == 2 and "does not take a value for [state]" in result.output
    result = run_cli("--bootstrap-server", BOOTSTRAP, "--list", "--state", "bogus")
    assert result.exit_code == 2
    assert "Invalid state list 'bogus'. Valid states are: PreparingRebalance, CompletingRebalance, Stable, " \
           "Dead, Empty" in result.output
    result = run_cli("--bootstrap-server", BOOTSTRAP, "--reset-offsets", "--group", "g", "--topic", "t",
                     "--to-datetime", "yesterday")
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == (
        "Error: Executing consumer group command failed due to Error parsing timestamp. It does not contain a "
        "'T' according to ISO8601 format")
    assert "Traceback" not in result.output


# -- datetime and duration -------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("2019-01-01T00:00:00.000", epoch_ms(2019, 1, 1)),
    ("2019-01-01T00:00:00.000Z", epoch_ms(2019, 1, 1)),
    ("2020-02-29T23:59:59.999", epoch_ms(2020, 2, 29, 23, 59, 59, micro_ms=999)),
    ("2019-01-01T00:00:00.000+01:00", epoch_ms(2018, 12, 31, 23)),
    ("2019-01-01T00:00:00.000+0100", epoch_ms(2018, 12, 31, 23)),
    ("2019-01-01T00:00:00.000+01", epoch_ms(2018, 12, 31, 23)),
    ("2019-01-01T10:00:00.000-05:30", epoch_ms(2019, 1, 1, 15, 30)),
    # SimpleDateFormat reads the fraction as a number of milliseconds
    ("2019-01-01T00:00:00.5", epoch_ms(2019, 1, 1, micro_ms=5)),
    ("1970-01-01T00:00:00.000", 0),
])
def test_get_date_time(text, expected) -> None:
    assert get_date_time(text) == expected


@pytest.mark.parametrize("text, message", [
    ("2019-01-01", "does not contain a 'T'"),
    ("2019-01-01T00:00:00", "Unparseable date"),  # the milliseconds are required
    ("2019-13-01T00:00:00.000", "Unparseable date"),
    ("2019-02-29T00:00:00.000", "Unparseable date"),
    ("2019-01-01T24:00:00.000", "Unparseable date"),
    ("2019-01-01T00:60:00.000", "Unparseable date"),
    ("2019-01-01T00:00:00.000+24:00", "Unparseable date"),
    ("2019-01-01T00:00:00.0000", "Unparseable date"),
    ("2019-01-01T00:00:00.000Q", "Unparseable date"),
])
def test_bad_date_times(text, message) -> None:
    with pytest.raises(CommandError, match=message):
        get_date_time(text)


@pytest.mark.parametrize("text, expected", [
    ("PT1H", 3_600_000),
    ("PT30M", 1_800_000),
    ("P1D", 86_400_000),
    ("P1DT2H3M4.5S", 86_400_000 + 2 * 3_600_000 + 3 * 60_000 + 4_500),
    ("pt0.25s", 250),
    ("-PT5M", -300_000),
    ("PT-5M", -300_000),
    ("PT1H-30M", 1_800_000),
    ("PT-0.5S", -500),
])
def test_parse_duration(text, expected) -> None:
    assert parse_duration_ms(text) == expected


@pytest.mark.parametrize("text", ["P", "PT", "1H", "P1H", "PT1D", "P1DT", "", "PT1.S1"])
def test_bad_durations(text) -> None:
    with pytest.raises(CommandError, match="cannot be parsed to a Duration"):
        parse_duration_ms(text)


def test_group_states_parse_in_any_case() -> None:
    assert consumer_group_states_from_string("stable, Empty,PREPARINGREBALANCE") == {
        "Stable", "Empty", "PreparingRebalance"}
    with pytest.raises(click.UsageError, match="Invalid state list 'Stable,unknown'"):
        consumer_group_states_from_string("Stable,unknown")


def test_topic_args() -> None:
    assert parse_topic_args(["t:0,2", "u", "v:1"]) == ([tp("t", 0), tp("t", 2), tp("v", 1)], ["u"])
    with pytest.raises(click.UsageError, match="Invalid partition list"):
        parse_topic_args(["t:a"])


# -- the reset plan ----------------------------------------------------------------------------------

PARTS = [tp("t", 0), tp("t", 1), tp("u", 0)]
START = {tp("t", 0): 10, tp("t", 1): 0, tp("u", 0): 5}
END = {tp("t", 0): 100, tp("t", 1): 50, tp("u", 0): 5}


def plan(kind: str, value=None, partitions=PARTS, **kwargs):
    kwargs.setdefault("committed", {})
    return prepare_offsets_to_reset(ResetScenario(kind, value), partitions, log_start_offsets=START,
                                    log_end_offsets=END, **kwargs)


def test_to_earliest_and_latest() -> None:
    assert plan("to-earliest") == (START, [])
    assert plan("to-latest") == (END, [])
    with pytest.raises(click.UsageError, match="Error getting ending offset of topic partition: v-0"):
        plan("to-latest", partitions=[tp("v", 0)])


def test_to_offset_is_clamped_into_the_log() -> None:
    offsets, warnings = plan("to-offset", 20)
    assert offsets == {tp("t", 0): 20, tp("t", 1): 20, tp("u", 0): 5}
    assert warnings == ["New offset (20) is higher than latest offset for topic partition u-0. Value will be set to 5"]
    offsets, warnings = plan("to-offset", 3)
    assert offsets == {tp("t", 0): 10, tp("t", 1): 3, tp("u", 0): 5}
    assert warnings == [
        "New offset (3) is lower than earliest offset for topic partition t-0. Value will be set to 10",
        "New offset (3) is lower than earliest offset for topic partition u-0. Value will be set to 5"]


def test_shift_by_moves_the_committed_offsets() -> None:
    committed = {tp("t", 0): 40, tp("t", 1): 49, tp("u", 0): 5}
    offsets, warnings = plan("shift-by", 2, committed=committed)
    assert offsets == {tp("t", 0): 42, tp("t", 1): 50, tp("u", 0): 5}
    assert len(warnings) == 2
    assert plan("shift-by", -35, committed=committed)[0] == {tp("t", 0): 10, tp("t", 1): 14, tp("u", 0): 5}
    with pytest.raises(click.UsageError, match="Cannot shift offset for partition u-0 since there is no current "
                                               "committed offset"):
        plan("shift-by", 1, committed={tp("t", 0): 1, tp("t", 1): 1})


def test_to_current_keeps_commits_and_starts_the_rest_at_the_end() -> None:
    assert plan("to-current", committed={tp("t", 1): 7})[0] == {tp("t", 0): 100, tp("t", 1): 7, tp("u", 0): 5}


def test_to_datetime_falls_back_to_the_log_end() -> None:
    found = {tp("t", 0): 33, tp("t", 1): -1, tp("u", 0): None}
    for kind in ("to-datetime", "by-duration"):
        assert plan(kind, 1234, timestamp_offsets=found)[0] == {tp("t", 0): 33, tp("t", 1): 50, tp("u", 0): 5}


def test_from_file_plan_is_clamped() -> None:
    offsets, warnings = plan("from-file", partitions=[], file_plan={tp("t", 0): 0, tp("t", 1): 30})
    assert offsets == {tp("t", 0): 10, tp("t", 1): 30}
    assert len(warnings) == 1
    with pytest.raises(CommandError, match="Unexpected non-existing offset value for topic partition v-0"):
        plan("from-file", partitions=[], file_plan={tp("v", 0): 1})


def test_check_offsets_range_with_unknown_start() -> None:
    assert check_offsets_range({tp("t", 0): -5}, {}, {tp("t", 0): 9}) == ({tp("t", 0): -5}, [])


# -- CSV plans ---------------------------------------------------------------------------------------

def test_export_and_parse_single_group() -> None:
    reset = {"g": {tp("t", 1): 5, tp("t", 0): 7}}
    text = export_offsets_to_csv(reset, single_group=True)
    assert text == "t,0,7\nt,1,5\n"
    assert parse_reset_plan(text, ["g"]) == reset


def test_export_and_parse_several_groups() -> None:
    reset = {"g": {tp("t", 0): 7}, "h,1": {tp("u", 2): 0}}
    text = export_offsets_to_csv(reset, single_group=False)
    assert text == 'g,t,0,7\n"h,1",u,2,0\n'
    assert parse_reset_plan(text, ["g", "h,1"]) == reset
    # one --group with a file in the four-column form still reads the group column
    assert parse_reset_plan("g,t,0,7\n", ["g"]) == {"g": {tp("t", 0): 7}}


def test_bad_reset_plan() -> None:
    with pytest.raises(CommandError, match="Invalid reset plan line 2 't,x,1'"):
        parse_reset_plan("t,0,1\nt,x,1\n", ["g"])
    with pytest.raises(CommandError, match="expected group,topic,partition,offset"):
        parse_reset_plan("t,0\n", ["g"])


names = st.text(alphabet="abcXYZ019._-,\" ", min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(names, st.dictionaries(st.tuples(names, st.integers(0, 99)), st.integers(0, 2**40),
                                              min_size=1, max_size=4), min_size=2, max_size=4))
def test_export_parse_round_trip(groups) -> None:
    reset = {g: {tp(t, p): o for (t, p), o in offsets.items()} for g, offsets in groups.items()}
    assert parse_reset_plan(export_offsets_to_csv(reset, single_group=False), list(reset)) == reset


# -- output ------------------------------------------------------------------------------------------

COORDINATOR = Node(0, "127.0.0.1", 9092)


def test_offsets_view_lines() -> None:
    rows = [
        PartitionAssignmentState("g", COORDINATOR, "t", 0, 40, 60, "c-1-abc", "/127.0.0.1", "c-1", 100),
        PartitionAssignmentState("g", COORDINATOR, "t", 1, None, None, "-", "-", "-", 7),
    ]
    assert format_offsets(rows) == [
        "",
        "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     "
        "HOST            CLIENT-ID",
        "g               t               0          40              100             60              c-1-abc         "
        "/127.0.0.1      c-1",
        "g               t               1          -               7               -               -               "
        "-               -",
    ]


def test_offsets_view_widens_for_long_names() -> None:
    group = "a-rather-long-group-name"
    rows = [PartitionAssignmentState(group, None, "topic", 0, 1, 0, "consumer-" + "x" * 30, "/10.0.0.1", "c", 1)]
    header, line = format_offsets(rows)[1:]
    assert header.startswith(f"{'GROUP':<{len(group)}} TOPIC ")
    assert line.startswith(f"{group} topic ")
    assert line.index("/10.0.0.1") == header.index("HOST")


def test_collect_group_offsets_rows_and_lag() -> None:
    description = ConsumerGroupDescription("g", False, (
        MemberDescription("m-small", None, "c2", "/h2", (tp("t", 5),)),
        MemberDescription("m-big", None, "c1", "/h1", (tp("u", 1), tp("t", 0), tp("t", 2))),
        MemberDescription("m-idle", None, "c3", "/h3", ()),
    ), "range", "Stable", COORDINATOR)
    committed = {tp("t", 0): 3, tp("t", 2): 10, tp("old", 0): 4, tp("t", 5): 1}
    log_end = {tp("t", 0): 10, tp("t", 2): 10, tp("u", 1): 8, tp("old", 0): None, tp("t", 5): 2}
    rows = collect_group_offsets(description, committed, log_end)
    assert [(r.topic, r.partition, r.consumer_id, r.offset, r.log_end_offset, r.lag) for r in rows] == [
        ("t", 0, "m-big", 3, 10, 7),
        ("u", 1, "m-big", None, 8, None),
        ("t", 2, "m-big", 10, 10, 0),
        ("t", 5, "m-small", 1, 2, 1),
        ("old", 0, "-", 4, None, None),
    ]
    assert rows[-1].host == "-" and rows[-1].client_id == "-"
    assert rows[0].host == "/h1" and rows[0].client_id == "c1"


def test_members_view() -> None:
    description = ConsumerGroupDescription("g", False, (
        MemberDescription("m1", None, "c1", "/127.0.0.1", (tp("t", 2), tp("u", 0), tp("t", 0))),
        MemberDescription("m2", None, "c2", "/127.0.0.1", ()),
    ), "range", "Stable", COORDINATOR)
    lines = format_members(collect_group_members(description, verbose=True), verbose=True)
    assert lines == [
        "",
        "GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT",
        "g               m1              /127.0.0.1      c1              3               t(0,2), u(0)",
        "g               m2              /127.0.0.1      c2              0               -",
    ]
    plain = format_members(collect_group_members(description, verbose=False), verbose=False)
    assert plain[1] == "GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     "
    assert plain[2] == "g               m1              /127.0.0.1      c1              3               "


def test_members_view_with_static_members() -> None:
    rows = [MemberAssignmentState("g", "m1", "/h", "c", "instance-1", 1, ()),
            MemberAssignmentState("g", "m2", "/h", "c", "", 0, ())]
    lines = format_members(rows, verbose=False)
    assert lines[1] == ("GROUP           CONSUMER-ID     GROUP-INSTANCE-ID HOST            CLIENT-ID       "
                        "#PARTITIONS     ")
    assert lines[2].split() == ["g", "m1", "instance-1", "/h", "c", "1"]
    assert lines[3] == ("g               m2                                /h              c               "
                        "0               ")


def test_assignment_text() -> None:
    assert format_assignment([]) == "-"
    assert format_assignment([tp("b", 3), tp("a", 1), tp("b", 1)]) == "a(1), b(1,3)"


def test_state_view() -> None:
    assert format_state(GroupState("g", COORDINATOR, "range", "Stable", 3)) == [
        "",
        "GROUP                     COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS",
        "g                         127.0.0.1:9092 (0)        range                Stable          3",
    ]
    long = Node(12, "broker-with-a-long-hostname.example", 9092)
    lines = format_state(GroupState("g", long, "", "Empty", 0))
    width = len(str(long))
    assert lines[1].startswith(f"{'GROUP':<{width}} COORDINATOR (ID)")
    assert lines[2] == f"{'g':<{width}} {str(long)} {'':<20} {'Empty':<15} 0"


def test_list_with_states() -> None:
    assert format_group_states([("g", "Stable"), ("another-group-name", "Empty")]) == [
        "GROUP              STATE", "g                  Stable", "another-group-name Empty"]
    assert format_group_states([]) == ["GROUP           STATE"]


def test_reset_plan_table() -> None:
    assert format_offsets_to_reset({}) == []
    lines = format_offsets_to_reset({"g": {tp("t", 1): 5, tp("t", 0): 0}, "h": {}})
    assert lines == [
        "",
        "GROUP                          TOPIC                          PARTITION  NEW-OFFSET     ",
        "g                              t                              0          0              ",
        "g                              t                              1          5              ",
    ]


def test_delete_offsets_table() -> None:
    lines = format_delete_offsets_result({tp("t", 1): None, tp("gone", -1): "This server does not host this "
                                                                            "topic-partition.",
                                          tp("t", 0): "The group is not empty."})
    assert lines == [
        "",
        "TOPIC                          PARTITION       STATUS         ",
        "gone                           Not Provided    Error: This server does not host this topic-partition.",
        "t                              0               Error: The group is not empty.",
        "t                              1               Successful     ",
    ]


@pytest.mark.parametrize("state, rows, printed, note", [
    ("Stable", 2, True, None),
    ("Stable", 0, False, None),
    ("Empty", 3, True, "Consumer group 'g' has no active members."),
    ("Empty", 0, False, "Consumer group 'g' has no active members."),
    ("PreparingRebalance", 1, True, "Warning: Consumer group 'g' is rebalancing."),
    ("CompletingRebalance", 1, True, "Warning: Consumer group 'g' is rebalancing."),
    ("Dead", 0, False, "Error: Consumer group 'g' does not exist."),
    (None, None, False, "Error: The consumer group 'g' does not exist."),
])
def test_group_state_notes(state, rows, printed, note) -> None:
    notes: list[str] = []
    assert should_print_member_state("g", state, rows, notes.append) is printed
    assert notes == ([note] if note else [])


def test_unknown_state_is_an_error() -> None:
    with pytest.raises(CommandError, match="Expected a valid consumer group state, but found 'Bogus'"):
        should_print_member_state("g", "Bogus", 1, print)


def test_kafka_exception_text() -> None:
    assert kafka_exception_text(68) == "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty."
    assert kafka_exception_text(69, "gone") == "org.apache.kafka.common.errors.GroupIdNotFoundException: gone"


def test_decode_assignment() -> None:
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as Assignment

    raw = Assignment(version=0, assigned_partitions=[Assignment.TopicPartition(topic="t", partitions=[2, 0]),
                                                     Assignment.TopicPartition(topic="a", partitions=[1])],
                     user_data=b"").encode()
    assert decode_assignment(raw) == (tp("a", 1), tp("t", 0), tp("t", 2))
    assert decode_assignment(b"") == ()
    assert decode_assignment(b"\x00\x00\xff") == ()
