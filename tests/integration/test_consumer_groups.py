"""Consumer groups against real broker processes: kafka-python KafkaConsumers sharing a
topic through the group coordinator, rebalancing when members leave or die, committed
offsets surviving consumer and broker restarts, and bin/kafka-consumer-groups.sh listing,
describing, resetting and deleting real groups.

The group members of the rebalance test are separate processes (this module run as a
script, ``worker``), so that one can be killed with SIGKILL; each writes what it was
assigned, consumed and committed to a file, with CLOCK_MONOTONIC times, which is shared
by every process on the machine and so orders events across them.
"""
from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import pytest

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata

from tests.integration.broker_harness import ROOT, wait_until
from kafka_py.core.tools.group_subscription import subscribe

# The same tests against a ZooKeeper-mode broker and a KRaft node.
pytestmark = pytest.mark.metadata_modes("zookeeper", "kraft")

TOOL = ROOT / "bin" / "kafka-consumer-groups.sh"
# Within the broker's default group.min.session.timeout.ms (6000) .. max (1800000).
SESSION_TIMEOUT_MS = 6000
HEARTBEAT_INTERVAL_MS = 1000


# -- helpers -----------------------------------------------------------------------------------

def create_topic(broker, topic: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


def produce(broker, topic: str, count: int, partitions: int, start: int = 0,
            timestamps: list[int] | None = None) -> set[tuple[int, int]]:
    """``count`` records spread round-robin over the partitions; their (partition, offset)s."""
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=5)
    try:
        futures = [producer.send(topic, value=f"v-{start + i}".encode(), partition=(start + i) % partitions,
                                 timestamp_ms=None if timestamps is None else timestamps[i])
                   for i in range(count)]
        producer.flush()
        return {(m.partition, m.offset) for m in (f.get(timeout=30) for f in futures)}
    finally:
        producer.close()


def group_consumer(broker, group: str, **kwargs) -> KafkaConsumer:
    kwargs.setdefault("enable_auto_commit", False)
    kwargs.setdefault("auto_offset_reset", "earliest")
    return KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group, session_timeout_ms=SESSION_TIMEOUT_MS,
                         heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS, **kwargs)


def commit_offsets(broker, group: str, offsets: dict[TopicPartition, int]) -> None:
    """A standalone commit (no group membership), as an operator's tool would make."""
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group, enable_auto_commit=False)
    try:
        consumer.commit({tp: OffsetAndMetadata(o, "", -1) for tp, o in offsets.items()})
    finally:
        consumer.close()


def committed(broker, group: str, tps: list[TopicPartition]) -> dict[TopicPartition, int | None]:
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return {tp: consumer.committed(tp) for tp in tps}
    finally:
        consumer.close()


def join_and_poll(consumer: KafkaConsumer, want: int, timeout: float = 30.0) -> dict[TopicPartition, list]:
    """Poll until ``want`` records arrived (the first poll joins the group)."""
    got: dict[TopicPartition, list] = {}
    deadline = time.monotonic() + timeout
    while sum(map(len, got.values())) < want:
        assert time.monotonic() < deadline, f"only {sum(map(len, got.values()))} of {want} records arrived"
        for tp, records in consumer.poll(timeout_ms=500).items():
            got.setdefault(tp, []).extend(records)
    return got


def tool(broker, *args: str, timeout_ms: int = 30000) -> subprocess.CompletedProcess:
    result = subprocess.run([str(TOOL), "--bootstrap-server", broker.bootstrap, "--timeout", str(timeout_ms), *args],
                            capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def table(stdout: str) -> list[list[str]]:
    """The data rows of the tool's tables (header lines and blank lines dropped)."""
    rows = []
    for line in stdout.splitlines():
        if not line.strip() or line.startswith(("GROUP ", "TOPIC ")):
            continue
        rows.append(line.split())
    return rows


def offsets_view(broker, group: str) -> dict[int, list[str]]:
    """--describe of one group's single topic: partition → the row's columns."""
    result = tool(broker, "--describe", "--group", group)
    assert result.returncode == 0, result.stderr
    return {int(row[2]): row for row in table(result.stdout)}


# -- the worker processes of the rebalance test -------------------------------------------------------

def worker(bootstrap: str, topic: str, group: str, client_id: str, out_path: str, stop_path: str) -> None:
    """A group member: consumes, commits what it consumed after each poll, logs it all."""
    from kafka import ConsumerRebalanceListener
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.errors import CommitFailedError, KafkaError

    out = open(out_path, "a", buffering=1)  # line-buffered: the test reads the file while we run

    def log(*parts: object) -> None:
        out.write(" ".join(str(p) for p in parts) + "\n")

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            log("REVOKE", time.monotonic_ns())

        def on_partitions_assigned(self, assigned):
            log("ASSIGN", time.monotonic_ns(), ",".join(str(p) for p in sorted(tp.partition for tp in assigned)))

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id=client_id,
                             enable_auto_commit=False, auto_offset_reset="earliest",
                             session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
                             max_poll_interval_ms=30000, max_poll_records=50,
                             partition_assignment_strategy=[RangePartitionAssignor])
    subscribe(consumer, [topic], listener=Listener())
    log("STARTED", time.monotonic_ns())
    while not os.path.exists(stop_path):
        batch = consumer.poll(timeout_ms=200)
        if not batch:
            continue
        for tp, records in batch.items():
            for r in records:
                log("REC", time.monotonic_ns(), tp.partition, r.offset)
        offsets = {tp: OffsetAndMetadata(records[-1].offset + 1, "", -1) for tp, records in batch.items()}
        try:
            consumer.commit(offsets)
        except (CommitFailedError, KafkaError) as e:  # a rebalance got in between: nothing was committed
            log("COMMIT-FAILED", time.monotonic_ns(), type(e).__name__)
            continue
        now = time.monotonic_ns()
        for tp, meta in offsets.items():
            log("COMMIT", now, tp.partition, meta.offset)
    consumer.close()  # sends LeaveGroup
    log("CLOSED", time.monotonic_ns())


@dataclass
class Worker:
    name: str
    out_path: pathlib.Path
    stop_path: pathlib.Path
    process: subprocess.Popen
    events: list[tuple] = field(default_factory=list)

    def read(self) -> list[tuple]:
        """The complete lines written so far, parsed."""
        if not self.out_path.exists():
            return []
        text = self.out_path.read_text()
        lines = text.split("\n")[:-1]  # the last piece is empty or a line still being written
        events = []
        for line in lines:
            kind, ns, *rest = line.split()
            if kind == "ASSIGN":
                events.append((kind, int(ns), frozenset(int(p) for p in rest[0].split(",")) if rest else frozenset()))
            elif kind in ("REC", "COMMIT"):
                events.append((kind, int(ns), int(rest[0]), int(rest[1])))
            else:
                events.append((kind, int(ns)))
        self.events = events
        return events

    def assignment(self) -> frozenset[int] | None:
        """What the member owns now: None before its first assignment or while rebalancing."""
        current = None
        for event in self.read():
            if event[0] == "ASSIGN":
                current = event[2]
            elif event[0] in ("REVOKE", "CLOSED"):
                current = None
        return current

    def consumed(self) -> set[tuple[int, int]]:
        return {(e[2], e[3]) for e in self.read() if e[0] == "REC"}

    def stop(self) -> None:
        self.stop_path.touch()
        assert self.process.wait(timeout=60) == 0

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)


def start_worker(tmp_path: pathlib.Path, broker, topic: str, group: str, name: str) -> Worker:
    out_path, stop_path = tmp_path / f"{name}.log", tmp_path / f"{name}.stop"
    with open(tmp_path / f"{name}.err", "wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.integration.test_consumer_groups", "worker", broker.bootstrap, topic, group,
             name, str(out_path), str(stop_path)],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
    return Worker(name, out_path, stop_path, process)


def partitions_owned_once(workers: list[Worker], partitions: int) -> bool:
    """Every partition owned by exactly one of ``workers``, and every worker owning some."""
    owned = [w.assignment() for w in workers]
    if any(not a for a in owned):
        return False
    flat = [p for a in owned for p in a]
    return sorted(flat) == list(range(partitions))


def members_view(broker, group: str) -> dict[str, set[int]]:
    """--describe --members --verbose: client id → the partitions of the one topic its member owns."""
    result = tool(broker, "--describe", "--group", group, "--members", "--verbose")
    assert result.returncode == 0, result.stderr
    members = {}
    for row in table(result.stdout):
        assignment = " ".join(row[5:])
        found = re.fullmatch(r"[^(]+\(([\d,]+)\)", assignment)
        members[row[3]] = {int(p) for p in found.group(1).split(",")} if found else set()
    return members


def wait_for_members(broker, group: str, count: int, partitions: int, timeout: float = 60.0) -> dict[str, set[int]]:
    """Until the coordinator reports ``count`` members, each partition owned by exactly one."""
    seen: dict[str, set[int]] = {}

    def settled() -> bool:
        nonlocal seen
        seen = members_view(broker, group)
        flat = sorted(p for ps in seen.values() for p in ps)
        return len(seen) == count and flat == list(range(partitions)) and all(seen.values())

    wait_until(settled, timeout, f"group {group} never settled on {count} members: {seen}", interval=0.5)
    return seen


# -- the rebalance test ---------------------------------------------------------------------------------

def test_three_members_share_partitions_and_survive_leave_and_crash(broker, tmp_path):
    topic, group, partitions = "rebalance", "rebalance-group", 6
    create_topic(broker, topic, partitions)
    produced = produce(broker, topic, 300, partitions)

    workers = [start_worker(tmp_path, broker, topic, group, f"member-{i}") for i in range(3)]
    try:
        wait_until(lambda: partitions_owned_once(workers, partitions), 60,
                   "three members never owned the six partitions between them", interval=0.2)
        assert sorted(len(w.assignment()) for w in workers) == [2, 2, 2]
        members = wait_for_members(broker, group, 3, partitions)
        assert {name: frozenset(ps) for name, ps in members.items()} == {w.name: w.assignment() for w in workers}

        def all_consumed() -> bool:
            return produced <= set().union(*(w.consumed() for w in workers))

        wait_until(all_consumed, 60, "the first records were not all consumed", interval=0.2)

        # A member leaves cleanly: LeaveGroup, and the other two take its partitions.
        leaving, crashing, last = workers
        leaving.stop()
        wait_until(lambda: partitions_owned_once([crashing, last], partitions), 60,
                   "the partitions of the member that left were not handed over", interval=0.2)
        assert sorted(len(w.assignment()) for w in (crashing, last)) == [3, 3]
        members = wait_for_members(broker, group, 2, partitions)
        assert {name: frozenset(ps) for name, ps in members.items()} == {
            w.name: w.assignment() for w in (crashing, last)}
        produced |= produce(broker, topic, 300, partitions, start=300)
        wait_until(all_consumed, 60, "records produced after the leave were not all consumed", interval=0.2)

        # A member dies: no LeaveGroup, so its session must time out first.
        produced |= produce(broker, topic, 120, partitions, start=600)
        crashing.kill()
        wait_until(lambda: last.assignment() == frozenset(range(partitions)), 60,
                   "the dead member's partitions were not handed over", interval=0.2)
        assert wait_for_members(broker, group, 1, partitions) == {last.name: set(range(partitions))}
        produced |= produce(broker, topic, 300, partitions, start=720)
        wait_until(all_consumed, 60, "records produced after the crash were not all consumed", interval=0.2)
        last.stop()
    finally:
        for w in workers:
            if w.process.poll() is None:
                w.process.kill()
                w.process.wait()

    # At least once: every produced record was consumed by some member.
    events = [e for w in workers for e in w.read()]
    consumed = {(e[2], e[3]) for e in events if e[0] == "REC"}
    assert produced <= consumed
    # ... and none after its commit: once a commit of offset c for a partition was
    # acknowledged, no member was handed a record of that partition below c.
    commits = sorted((e[1], e[2], e[3]) for e in events if e[0] == "COMMIT")
    redelivered = []
    for kind, at, partition, offset in (e for e in events if e[0] == "REC"):
        floor = max((c for t, p, c in commits if p == partition and t < at), default=0)
        if offset < floor:
            redelivered.append((partition, offset, floor))
    assert not redelivered, f"records consumed again after their commit: {redelivered[:5]}"
    # every partition ends fully committed, as the tool shows for the now empty group
    result = tool(broker, "--describe", "--group", group)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == f"Consumer group '{group}' has no active members."
    rows = {int(r[2]): r for r in table(result.stdout)}
    assert sorted(rows) == list(range(partitions))
    for row in rows.values():
        assert row[3] == row[4] and row[5] == "0" and row[6:] == ["-", "-", "-"], row


# -- committed offsets across restarts -------------------------------------------------------------

def first_offsets(consumer: KafkaConsumer, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
    """The offset of the first record each partition hands the (re)joined consumer."""
    first: dict[TopicPartition, int] = {}
    deadline = time.monotonic() + 30
    while len(first) < len(tps):
        assert time.monotonic() < deadline, f"no records from {set(tps) - set(first)}"
        for tp, records in consumer.poll(timeout_ms=500).items():
            first.setdefault(tp, records[0].offset)
    return first


def test_committed_offsets_survive_consumer_and_broker_restarts(broker_factory):
    broker = broker_factory()
    broker.start()
    topic, group = "resume", "resume-group"
    tps = [TopicPartition(topic, p) for p in range(3)]
    create_topic(broker, topic, 3)
    produce(broker, topic, 90, 3)

    consumer = group_consumer(broker, group)
    subscribe(consumer, [topic])
    join_and_poll(consumer, 1)
    expected = {tps[0]: 11, tps[1]: 12, tps[2]: 13}
    consumer.commit({tp: OffsetAndMetadata(o, "", -1) for tp, o in expected.items()})
    consumer.close()

    def resume_and_advance(step: int) -> dict[TopicPartition, int]:
        """A new member of the group starts exactly at the committed offsets, then commits further."""
        c = group_consumer(broker, group)
        try:
            subscribe(c, [topic])
            assert first_offsets(c, tps) == expected
            assert {tp: c.committed(tp) for tp in tps} == expected
            advanced = {tp: o + step for tp, o in expected.items()}
            c.commit({tp: OffsetAndMetadata(o, "", -1) for tp, o in advanced.items()})
            return advanced
        finally:
            c.close()

    expected = resume_and_advance(5)  # consumer restart

    assert broker.stop() == 0  # clean broker restart
    broker.start()
    expected = resume_and_advance(4)

    broker.kill()  # kill -9: the coordinator reloads from __consumer_offsets after recovery
    broker.restart()
    assert committed(broker, group, tps) == expected
    view = offsets_view(broker, group)
    assert {p: int(row[3]) for p, row in view.items()} == {tp.partition: o for tp, o in expected.items()}
    assert {p: int(row[5]) for p, row in view.items()} == {tp.partition: 30 - o for tp, o in expected.items()}
    expected = resume_and_advance(1)
    assert broker.stop() == 0


# -- the tool against real groups --------------------------------------------------------------------

def test_list_and_describe_an_active_group(broker):
    topic, group = "described", "described-group"
    tps = [TopicPartition(topic, p) for p in range(3)]
    create_topic(broker, topic, 3)
    produce(broker, topic, 30, 3)
    consumer = group_consumer(broker, group, client_id="describer")
    try:
        subscribe(consumer, [topic])
        join_and_poll(consumer, 30)
        consumer.commit({tps[0]: OffsetAndMetadata(4, "", -1), tps[1]: OffsetAndMetadata(7, "", -1),
                         tps[2]: OffsetAndMetadata(10, "", -1)})

        listed = tool(broker, "--list")
        assert listed.returncode == 0, listed.stderr
        assert group in listed.stdout.splitlines()
        with_state = tool(broker, "--list", "--state")
        assert [group, "Stable"] in [line.split() for line in with_state.stdout.splitlines()]
        assert with_state.stdout.splitlines()[0].split() == ["GROUP", "STATE"]
        only_empty = tool(broker, "--list", "--state", "empty")
        assert group not in only_empty.stdout

        result = tool(broker, "--describe", "--group", group)
        assert result.returncode == 0 and result.stderr == ""
        lines = result.stdout.splitlines()
        assert lines[0] == "" and lines[1].split() == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET",
                                                       "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"]
        rows = {int(r[2]): r for r in table(result.stdout)}
        assert {p: r[3:6] for p, r in rows.items()} == {0: ["4", "10", "6"], 1: ["7", "10", "3"], 2: ["10", "10", "0"]}
        member_ids = {r[6] for r in rows.values()}
        assert len(member_ids) == 1 and member_ids.pop().startswith("describer")
        assert {tuple(r[7:]) for r in rows.values()} == {("/127.0.0.1", "describer")}
        assert all(r[0] == group and r[1] == topic for r in rows.values())

        members = tool(broker, "--describe", "--group", group, "--members", "--verbose")
        assert members.returncode == 0, members.stderr
        (row,) = table(members.stdout)
        assert row[2:] == ["/127.0.0.1", "describer", "3", f"{topic}(0,1,2)"]
        assert members.stdout.splitlines()[1].split() == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID",
                                                          "#PARTITIONS", "ASSIGNMENT"]

        state = tool(broker, "--describe", "--group", group, "--state")
        assert state.returncode == 0, state.stderr
        assert table(state.stdout) == [[group, "127.0.0.1:" + str(broker.port), "(0)", "range", "Stable", "1"]]

        # an active group's offsets cannot be reset
        refused = tool(broker, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
        assert refused.returncode == 1
        assert refused.stderr.strip() == (f"Error: Assignments can only be reset if the group '{group}' is inactive, "
                                          "but the current state is Stable.")
        # ... nor can an active group be deleted
        not_empty = tool(broker, "--delete", "--group", group)
        assert not_empty.returncode == 1
        assert not_empty.stderr.splitlines() == [
            "Error: Deletion of some consumer groups failed:",
            f"* Group '{group}' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: "
            "The group is not empty."]
    finally:
        consumer.close()
    assert committed(broker, group, tps) == {tps[0]: 4, tps[1]: 7, tps[2]: 10}
    wait_for_state(broker, group, "Empty")

    # once the member has left, the offsets remain, owned by nobody
    result = tool(broker, "--describe", "--group", group)
    assert result.returncode == 0
    assert result.stderr.strip() == f"Consumer group '{group}' has no active members."
    assert [r[6:] for r in table(result.stdout)] == [["-", "-", "-"]] * 3
    state = tool(broker, "--describe", "--group", group, "--state")
    assert table(state.stdout)[0][1:] == [f"127.0.0.1:{broker.port}", "(0)", "Empty", "0"]
    assert [group, "Empty"] in [line.split() for line in tool(broker, "--list", "--state", "Empty").stdout.splitlines()]

    missing = tool(broker, "--describe", "--group", "no-such-group")
    assert missing.returncode == 1
    assert missing.stderr.strip() == "Error: Consumer group 'no-such-group' does not exist."
    assert missing.stdout == ""


def wait_for_state(broker, group: str, state: str) -> None:
    """The coordinator completes a leave through its purgatory, so the state follows shortly."""
    def reached() -> bool:
        rows = table(tool(broker, "--describe", "--group", group, "--state").stdout)
        return bool(rows) and rows[0][-2] == state  # the strategy column is blank when Empty

    wait_until(reached, 30, f"group {group} never became {state}", interval=0.2)


def reset(broker, group: str, *args: str) -> dict[int, int]:
    """--reset-offsets; the plan table as partition → new offset."""
    result = tool(broker, "--reset-offsets", "--group", group, *args)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].split() == ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]
    return {int(r[2]): int(r[3]) for r in table(result.stdout)}


def test_reset_offsets_every_scenario(broker, tmp_path):
    topic, group = "resettable", "reset-group"
    tps = [TopicPartition(topic, p) for p in range(3)]
    create_topic(broker, topic, 3)
    # record i of each partition is stamped base + i * 1,000 s
    base = int(time.time() * 1000) - 10_000_000
    produce(broker, topic, 30, 3, timestamps=[base + (i // 3) * 1_000_000 for i in range(30)])
    commit_offsets(broker, group, {tps[0]: 4, tps[1]: 7, tps[2]: 10})
    start = {tps[0]: 4, tps[1]: 7, tps[2]: 10}

    def now() -> dict[TopicPartition, int | None]:
        return committed(broker, group, tps)

    # dry run is the default, and changes nothing
    result = tool(broker, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest")
    assert result.returncode == 0
    assert result.stderr.startswith("WARN: No action will be performed as the --execute option is missing.")
    assert {int(r[2]): int(r[3]) for r in table(result.stdout)} == {0: 0, 1: 0, 2: 0}
    assert reset(broker, group, "--topic", topic, "--to-latest", "--dry-run") == {0: 10, 1: 10, 2: 10}
    assert now() == start

    assert reset(broker, group, "--topic", topic, "--to-earliest", "--execute") == {0: 0, 1: 0, 2: 0}
    assert now() == {tp: 0 for tp in tps}
    assert reset(broker, group, "--all-topics", "--to-latest", "--execute") == {0: 10, 1: 10, 2: 10}
    assert now() == {tp: 10 for tp in tps}
    assert reset(broker, group, "--topic", f"{topic}:0,1", "--to-offset", "5", "--execute") == {0: 5, 1: 5}
    assert now() == {tps[0]: 5, tps[1]: 5, tps[2]: 10}
    # beyond the log end is clamped to it
    assert reset(broker, group, "--topic", f"{topic}:2", "--to-offset", "99", "--execute") == {2: 10}
    assert reset(broker, group, "--all-topics", "--shift-by", "-2", "--execute") == {0: 3, 1: 3, 2: 8}
    assert now() == {tps[0]: 3, tps[1]: 3, tps[2]: 8}
    assert reset(broker, group, "--all-topics", "--shift-by", "-7", "--execute") == {0: 0, 1: 0, 2: 1}
    assert reset(broker, group, "--topic", topic, "--to-current", "--dry-run") == {0: 0, 1: 0, 2: 1}

    sixth = datetime.fromtimestamp((base + 6 * 1_000_000) / 1000, tz=timezone.utc)
    text = sixth.strftime("%Y-%m-%dT%H:%M:%S.") + f"{sixth.microsecond // 1000:03d}"
    assert reset(broker, group, "--topic", topic, "--to-datetime", text, "--execute") == {0: 6, 1: 6, 2: 6}
    assert now() == {tp: 6 for tp in tps}
    # with a zone: the same instant written in UTC+02:00
    local = sixth.astimezone(timezone(timedelta(hours=2)))
    zoned = local.strftime("%Y-%m-%dT%H:%M:%S.") + f"{local.microsecond // 1000:03d}+02:00"
    assert reset(broker, group, "--topic", topic, "--to-datetime", zoned, "--dry-run") == {0: 6, 1: 6, 2: 6}
    # after the last record: the log end
    assert reset(broker, group, "--topic", topic, "--to-datetime", "2999-01-01T00:00:00.000", "--dry-run") == {
        0: 10, 1: 10, 2: 10}
    # records 6.. were at most 4,000 s old when produced, record 5 was 5,000 s old: the test
    # may take up to 500 s to get here
    assert reset(broker, group, "--topic", topic, "--by-duration", "PT4500S", "--execute") == {0: 6, 1: 6, 2: 6}

    # --export writes the plan --from-file reads back
    exported = tool(broker, "--reset-offsets", "--group", group, "--topic", topic, "--to-offset", "2", "--export")
    assert exported.returncode == 0
    assert exported.stdout == f"{topic},0,2\n{topic},1,2\n{topic},2,2\n\n"
    plan = tmp_path / "plan.csv"
    plan.write_text(exported.stdout)
    assert now() == {tp: 6 for tp in tps}
    assert reset(broker, group, "--from-file", str(plan), "--execute") == {0: 2, 1: 2, 2: 2}
    assert now() == {tp: 2 for tp in tps}

    # a group nobody ever used can be given offsets too
    fresh = "fresh-group"
    assert reset(broker, fresh, "--topic", f"{topic}:1", "--to-offset", "3", "--execute") == {1: 3}
    assert committed(broker, fresh, tps) == {tps[0]: None, tps[1]: 3, tps[2]: None}

    unknown = tool(broker, "--reset-offsets", "--group", group, "--topic", "no-such-topic", "--to-earliest")
    assert unknown.returncode == 1
    assert unknown.stderr.strip().splitlines()[-1] == (
        "Error: Executing consumer group command failed due to "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this "
        "topic-partition.")


def test_delete_offsets_and_groups(broker):
    topic, other, group = "deletable", "deletable-other", "delete-group"
    create_topic(broker, topic, 2)
    create_topic(broker, other, 1)
    produce(broker, topic, 10, 2)
    produce(broker, other, 5, 1)
    commit_offsets(broker, group, {TopicPartition(topic, 0): 3, TopicPartition(topic, 1): 4,
                                   TopicPartition(other, 0): 5})

    result = tool(broker, "--delete-offsets", "--group", group, "--topic", f"{topic}:1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"Request succeed for deleting offsets with topic {topic}:1 group {group}",
        "",
        f"{'TOPIC':<30} {'PARTITION':<15} {'STATUS':<15}",
        f"{topic:<30} {'1':<15} {'Successful':<15}"]
    assert committed(broker, group, [TopicPartition(topic, 0), TopicPartition(topic, 1)]) == {
        TopicPartition(topic, 0): 3, TopicPartition(topic, 1): None}

    result = tool(broker, "--delete-offsets", "--group", group, "--topic", other, "--topic", "no-such-topic")
    assert result.returncode == 1
    assert result.stderr.strip() == "Error: Encounter some partition level error, see the follow-up details:"
    rows = table(result.stdout)
    assert ["no-such-topic", "Not", "Provided", "Error:", "This", "server", "does", "not", "host", "this",
            "topic-partition."] in rows
    assert committed(broker, group, [TopicPartition(other, 0)]) == {TopicPartition(other, 0): None}

    gone = tool(broker, "--delete-offsets", "--group", "never-was", "--topic", topic)
    assert gone.returncode == 1
    assert gone.stderr.strip() == "Error: 'never-was' does not exist."

    deleted = tool(broker, "--delete", "--group", group)
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.strip() == f"Deletion of requested consumer groups ('{group}') was successful."
    assert group not in tool(broker, "--list").stdout.splitlines()
    assert committed(broker, group, [TopicPartition(topic, 0)]) == {TopicPartition(topic, 0): None}

    again = tool(broker, "--delete", "--group", group)
    assert again.returncode == 1
    assert again.stderr.splitlines()[-1] == (
        f"* Group '{group}' could not be deleted due to: org.apache.kafka.common.errors.GroupIdNotFoundException: "
        "The group id does not exist.")


if __name__ == "__main__" and len(sys.argv) == 8 and sys.argv[1] == "worker":
    worker(*sys.argv[2:])
