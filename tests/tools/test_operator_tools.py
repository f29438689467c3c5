"""The operator scripts kafka-verifiable-producer.sh, kafka-verifiable-consumer.sh,
kafka-mirror-maker.sh, kafka-replica-verification.sh, kafka-streams-application-reset.sh and
zookeeper-security-migration.sh, run as processes against real brokers and a real ZooKeeper.

One module-scoped pair of clusters serves every test: a two-broker source cluster and a
one-broker target cluster for MirrorMaker, each under its own ZooKeeper chroot.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from tests.integration.broker_harness import BrokerProcess, ROOT, unique_chroot, wait_until

BIN = ROOT / "bin"


@pytest.fixture(scope="module")
def source(zookeeper, tmp_path_factory):
    chroot = unique_chroot("operator-tools-source")
    brokers = [BrokerProcess(tmp_path_factory.mktemp(f"source-{i}"), zookeeper.connect_string, chroot, broker_id=i)
               for i in range(2)]
    for b in brokers:
        b.start(wait=False)
    for b in brokers:
        b.wait_started()
    yield brokers
    for b in brokers:
        if b.running:
            b.stop()


@pytest.fixture(scope="module")
def target(zookeeper, tmp_path_factory):
    b = BrokerProcess(tmp_path_factory.mktemp("target"), zookeeper.connect_string,
                      unique_chroot("operator-tools-target"))
    b.start()
    yield b
    if b.running:
        b.stop()


def bootstrap(brokers) -> str:
    return ",".join(b.bootstrap for b in brokers)


def run(script: str, *args: str, timeout: float = 90, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / script), *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env=dict(os.environ, **(env or {})))


def create_topic(servers: str, name: str, partitions: int = 1, replication: int = 1) -> None:
    admin = KafkaAdminClient(bootstrap_servers=servers)
    try:
        admin.create_topics([NewTopic(name, partitions, replication)])
    finally:
        admin.close()


def events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def read_all(servers: str, topic: str, timeout: float = 30) -> list:
    """Every record of ``topic`` up to its end offsets as they are now (none if it does not exist)."""
    consumer = KafkaConsumer(bootstrap_servers=servers, enable_auto_commit=False)
    records = []
    try:
        partitions = consumer.partitions_for_topic(topic) or set()
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        if not tps:
            return []
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        deadline = time.monotonic() + timeout
        while any(consumer.position(tp) < ends[tp] for tp in tps) and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                records.extend(batch)
    finally:
        consumer.close()
    return records


# -- kafka-verifiable-producer.sh / kafka-verifiable-consumer.sh --------------------------------

def test_verifiable_producer_and_consumer(source):
    servers = bootstrap(source)
    create_topic(servers, "verifiable", partitions=2, replication=2)
    produced = run("kafka-verifiable-producer.sh", "--bootstrap-server", servers, "--topic", "verifiable",
                   "--max-messages", "20", "--value-prefix", "7", "--repeating-keys", "3")
    assert produced.returncode == 0, produced.stderr
    lines = events(produced.stdout)
    names = [e["name"] for e in lines]
    assert names[0] == "startup_complete" and names[-2:] == ["shutdown_complete", "tool_data"], names
    successes = [e for e in lines if e["name"] == "producer_send_success"]
    assert sorted(e["value"] for e in successes) == sorted(f"7.{i}" for i in range(20))
    assert {e["key"] for e in successes} == {"0", "1", "2"}
    assert all(list(e) == ["timestamp", "name", "key", "value", "topic", "partition", "offset"] for e in successes)
    offsets = {(e["partition"], e["offset"]) for e in successes}
    assert len(offsets) == 20 and {p for p, _ in offsets} <= {0, 1}
    assert all(isinstance(e["timestamp"], int) for e in lines)
    tool_data = lines[-1]
    assert (tool_data["sent"], tool_data["acked"], tool_data["target_throughput"]) == (20, 20, -1)
    assert tool_data["avg_throughput"] > 0

    consumed = run("kafka-verifiable-consumer.sh", "--bootstrap-server", servers, "--topic", "verifiable",
                   "--group-id", "verifiable-group", "--max-messages", "20", "--verbose")
    assert consumed.returncode == 0, consumed.stderr
    lines = events(consumed.stdout)
    names = [e["name"] for e in lines]
    assert names[0] == "startup_complete" and names[-1] == "shutdown_complete", names
    assigned = [e for e in lines if e["name"] == "partitions_assigned"]
    assert sorted((p["topic"], p["partition"]) for p in assigned[0]["partitions"]) == [
        ("verifiable", 0), ("verifiable", 1)]
    records = [e for e in lines if e["name"] == "record_data"]
    assert sorted(e["value"] for e in records) == sorted(f"7.{i}" for i in range(20))
    assert {(e["partition"], e["offset"]) for e in records} == offsets
    consumed_events = [e for e in lines if e["name"] == "records_consumed"]
    assert sum(s["count"] for e in consumed_events for s in e["partitions"]) == 20
    for e in consumed_events:
        for summary in e["partitions"]:
            assert set(summary) == {"topic", "partition", "count", "minOffset", "maxOffset"}
            assert summary["maxOffset"] - summary["minOffset"] + 1 == summary["count"]
    commits = [e for e in lines if e["name"] == "offsets_committed"]
    assert commits and all(e["success"] is True and "error" not in e for e in commits)
    last = {}
    for e in commits:
        for o in e["offsets"]:
            last[o["partition"]] = o["offset"]
    ends = {p: max(o for q, o in offsets if q == p) + 1 for p, _ in offsets}
    assert last == ends

    # the group's committed offsets are what the tool said it committed
    admin = KafkaAdminClient(bootstrap_servers=servers)
    try:
        committed = admin.list_group_offsets("verifiable-group")["verifiable-group"]
    finally:
        admin.close()
    assert {tp.partition: om.offset for tp, om in committed.items()} == ends


def test_verifiable_producer_until_signalled(source):
    """--max-messages -1 runs until SIGTERM, then flushes and reports as Kafka's shutdown hook does."""
    servers = bootstrap(source)
    process = subprocess.Popen([str(BIN / "kafka-verifiable-producer.sh"), "--bootstrap-server", servers,
                                "--topic", "verifiable-endless", "--throughput", "50"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        seen = []
        deadline = time.monotonic() + 60
        while len([e for e in seen if e["name"] == "producer_send_success"]) < 5 and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            seen.append(json.loads(line))
        process.send_signal(signal.SIGTERM)
        # the rest through the same buffered reader (communicate() would skip what it holds)
        out = process.stdout.read()
        err = process.stderr.read()
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    lines = seen + events(out)
    assert [e["name"] for e in lines][-2:] == ["shutdown_complete", "tool_data"], err
    acked = sum(1 for e in lines if e["name"] == "producer_send_success")
    assert lines[-1]["acked"] == acked >= 5
    assert lines[-1]["sent"] >= acked and lines[-1]["target_throughput"] == 50


# -- kafka-mirror-maker.sh -----------------------------------------------------------------------

def mirror_configs(tmp_path, source, target, group: str) -> tuple[str, str]:
    consumer = tmp_path / f"{group}-consumer.properties"
    # the broker's smallest session timeout: a killed mirror's members leave the group sooner
    consumer.write_text(f"bootstrap.servers={bootstrap(source)}\ngroup.id={group}\nauto.offset.reset=earliest\n"
                        "session.timeout.ms=6000\nheartbeat.interval.ms=1000\n")
    producer = tmp_path / f"{group}-producer.properties"
    producer.write_text(f"bootstrap.servers={target.bootstrap}\n")
    return str(consumer), str(producer)


def start_mirror(*args: str) -> subprocess.Popen:
    return subprocess.Popen([str(BIN / "kafka-mirror-maker.sh"), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=ROOT)


def produce(servers: str, topic: str, records) -> None:
    producer = KafkaProducer(bootstrap_servers=servers, acks="all")
    try:
        for key, value, headers in records:
            producer.send(topic, key=key, value=value, headers=headers)
        producer.flush()
    finally:
        producer.close()


def stop(process: subprocess.Popen, sig=signal.SIGTERM) -> tuple[int, str]:
    process.send_signal(sig)
    try:
        out, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, out


def test_mirror_maker_survives_a_kill(source, target, tmp_path):
    create_topic(bootstrap(source), "mirror.orders", partitions=2, replication=2)
    create_topic(bootstrap(source), "mirror-skipped", partitions=1)
    create_topic(target.bootstrap, "mirror.orders", partitions=2)

    def batch(start: int, count: int):
        return [(f"k{i % 7}".encode(), f"v{i}".encode(), [("h", f"{i}".encode())]) for i in range(start, start + count)]

    produce(bootstrap(source), "mirror.orders", batch(0, 300))
    produce(bootstrap(source), "mirror-skipped", batch(0, 5))
    consumer_config, producer_config = mirror_configs(tmp_path, source, target, "mirror-group")
    args = ("--consumer.config", consumer_config, "--producer.config", producer_config,
            "--whitelist", "mirror\\.orders", "--num.streams", "2", "--offset.commit.interval.ms", "200")

    first = start_mirror(*args)
    try:
        wait_until(lambda: len(read_all(target.bootstrap, "mirror.orders")) >= 100, 60,
                   "the mirror copied nothing", interval=0.5)
    finally:
        code, first_out = stop(first, signal.SIGKILL)
    assert code == -signal.SIGKILL, first_out

    produce(bootstrap(source), "mirror.orders", batch(300, 200))
    second = start_mirror(*args)
    caught_up = True
    try:
        wait_until(lambda: len({r.value for r in read_all(target.bootstrap, "mirror.orders")}) == 500,
                   90, "the restarted mirror did not catch up", interval=0.5)
    except TimeoutError:
        caught_up = False
    finally:
        code, out = stop(second)
    assert caught_up, f"the restarted mirror did not catch up:\n{first_out}\n-----\n{out}"
    assert code == 0, out
    assert "WARNING: The default partition assignment strategy of the mirror maker will change" in out

    copied = read_all(target.bootstrap, "mirror.orders")
    by_value = {r.value: r for r in copied}
    assert set(by_value) == {f"v{i}".encode() for i in range(500)}  # a kill loses nothing (duplicates allowed)
    for i in range(500):
        r = by_value[f"v{i}".encode()]
        assert r.key == f"k{i % 7}".encode() and r.headers == [("h", f"{i}".encode())]
    # records of one key stay in order: they are copied to one partition by the same stream
    for key in {r.key for r in copied}:
        values = [int(r.value[1:]) for r in sorted((r for r in copied if r.key == key),
                                                   key=lambda r: (r.partition, r.offset))]
        firsts = [v for n, v in enumerate(values) if v not in values[:n]]
        assert firsts == sorted(firsts)
    admin = KafkaAdminClient(bootstrap_servers=target.bootstrap)
    try:
        assert "mirror-skipped" not in admin.list_topics()
    finally:
        admin.close()
    # the clean stop committed everything it copied
    consumer = KafkaConsumer(bootstrap_servers=bootstrap(source), group_id="mirror-group", enable_auto_commit=False)
    try:
        tps = [TopicPartition("mirror.orders", p) for p in (0, 1)]
        ends = consumer.end_offsets(tps)
        assert {tp: consumer.committed(tp) for tp in tps} == ends
    finally:
        consumer.close()


def test_mirror_maker_message_handler(source, target, tmp_path):
    create_topic(bootstrap(source), "handled", partitions=1)
    produce(bootstrap(source), "handled", [(b"a", b"one", []), (None, b"drop", []), (b"c", b"three", [("x", b"y")])])
    consumer_config, producer_config = mirror_configs(tmp_path, source, target, "handler-group")
    mirror = start_mirror("--consumer.config", consumer_config, "--producer.config", producer_config,
                          "--include", "handled", "--message.handler", "tests.tools.mirror_maker_handlers.RenameTopic",
                          "--message.handler.args", "copy-of-", "--abort.on.send.failure", "false")
    try:
        wait_until(lambda: len(read_all(target.bootstrap, "copy-of-handled")) >= 2, 60,
                   "the handler's topic got nothing", interval=0.5)
    finally:
        code, out = stop(mirror)
    assert code == 0, out
    copied = read_all(target.bootstrap, "copy-of-handled")
    assert [(r.key, r.value, r.headers) for r in copied] == [
        (b"a", b"one", [("source-offset", b"0")]), (b"c", b"three", [("x", b"y"), ("source-offset", b"2")])]


def test_mirror_maker_send_failures(source, target, tmp_path):
    """A record the target refuses stops the mirror uncommitted by default; with
    --abort.on.send.failure false it is dropped and the mirror goes on past it."""
    create_topic(bootstrap(source), "mirror-big", partitions=1)
    admin = KafkaAdminClient(bootstrap_servers=target.bootstrap)
    try:
        admin.create_topics([NewTopic("mirror-big", 1, 1, topic_configs={"max.message.bytes": "2000"})])
    finally:
        admin.close()
    produce(bootstrap(source), "mirror-big", [(b"a", b"small", []), (b"b", b"x" * 20000, []), (b"c", b"after", [])])
    consumer_config, producer_config = mirror_configs(tmp_path, source, target, "abort-group")
    args = ("--consumer.config", consumer_config, "--producer.config", producer_config, "--whitelist", "mirror-big",
            "--offset.commit.interval.ms", "100")
    aborting = start_mirror(*args)
    try:
        out, _ = aborting.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        aborting.kill()
        out, _ = aborting.communicate()
    finally:
        if aborting.poll() is None:
            aborting.kill()
            aborting.wait()
    assert aborting.returncode == 255, out
    assert "Error when sending message to topic mirror-big" in out
    # never past the refused record (offset 1): what follows it must be copied again
    assert committed_offsets(bootstrap(source), "abort-group", "mirror-big")[0] in (None, 0, 1)

    skipping = start_mirror(*args, "--abort.on.send.failure", "false")
    try:
        wait_until(lambda: committed_offsets(bootstrap(source), "abort-group", "mirror-big") == {0: 3}, 60,
                   "the mirror did not go past the refused record", interval=0.5)
    finally:
        code, out = stop(skipping)
    assert code == 0, out
    assert "Error when sending message to topic mirror-big" in out
    copied = [r.value for r in read_all(target.bootstrap, "mirror-big")]
    # the first run may have copied "after" already (sent beside the refused record, never
    # committed), so the second copies it again: duplicates, never gaps
    assert set(copied) == {b"small", b"after"} and copied[-1] == b"after"


def test_mirror_maker_needs_its_configs():
    result = run("kafka-mirror-maker.sh", "--whitelist", "x")
    assert result.returncode == 1
    assert "consumer.config" in result.stderr and "Traceback" not in result.stderr


# -- kafka-streams-application-reset.sh ----------------------------------------------------------

def committed_offsets(servers: str, group: str, topic: str) -> dict[int, int]:
    consumer = KafkaConsumer(bootstrap_servers=servers, group_id=group, enable_auto_commit=False)
    try:
        partitions = sorted(consumer.partitions_for_topic(topic) or ())
        return {p: consumer.committed(TopicPartition(topic, p)) for p in partitions}
    finally:
        consumer.close(autocommit=False)


def test_streams_application_reset(source, tmp_path):
    servers = bootstrap(source)
    internal = ["resetapp-KSTREAM-AGGREGATE-STATE-STORE-0000000001-changelog",
                "resetapp-KSTREAM-AGGREGATE-STATE-STORE-0000000001-repartition"]
    kept = ["resetapp-output", "otherapp-store-changelog"]
    for topic in ["resetapp-input", "resetapp-through", *internal, *kept]:
        create_topic(servers, topic, partitions=2 if topic == "resetapp-input" else 1)
    producer = KafkaProducer(bootstrap_servers=servers, acks="all")
    for i in range(10):
        producer.send("resetapp-input", value=b"x", partition=i % 2)
    for i in range(4):
        producer.send("resetapp-through", value=b"y")
    producer.flush()
    producer.close()

    # a running instance of the application: the tool refuses to touch its group
    member = KafkaConsumer(bootstrap_servers=servers, group_id="resetapp", enable_auto_commit=False,
                           auto_offset_reset="earliest")
    try:
        member.subscribe(["resetapp-input"])
        deadline = time.monotonic() + 60
        while not member.assignment() and time.monotonic() < deadline:
            member.poll(timeout_ms=500)
        assert member.assignment()
        member.commit({TopicPartition("resetapp-input", p): OffsetAndMetadata(5, "", -1) for p in (0, 1)})
        refused = run("kafka-streams-application-reset.sh", "--bootstrap-servers", servers, "--application-id",
                      "resetapp", "--input-topics", "resetapp-input")
        assert refused.returncode == 1
        assert refused.stderr.splitlines()[-1].startswith(
            "ERROR: java.lang.IllegalStateException: Consumer group 'resetapp' is still active and has following "
            "members: [(memberId="), refused.stderr
        assert "You can use option '--force' to remove active members from the group." in refused.stderr
    finally:
        member.close(autocommit=False)
    assert committed_offsets(servers, "resetapp", "resetapp-input") == {0: 5, 1: 5}

    args = ("--bootstrap-servers", servers, "--application-id", "resetapp", "--input-topics", "resetapp-input",
            "--intermediate-topics", "resetapp-through,resetapp-missing")
    dry = run("kafka-streams-application-reset.sh", *args, "--to-offset", "2", "--dry-run")
    assert dry.returncode == 1, dry.stderr  # a named topic does not exist
    assert dry.stdout.splitlines() == [
        "----Dry run displays the actions which will be performed when running Streams Reset Tool----",
        "Reset-offsets for input topics [resetapp-input]",
        "Seek-to-end for intermediate topics [resetapp-through, resetapp-missing]",
        "Following intermediate topics are not found, skipping them",
        "Topic:resetapp-missing",
        "Following input topics offsets will be reset to (for consumer group resetapp)",
        "Topic: resetapp-input Partition: 0 Offset: 2",
        "Topic: resetapp-input Partition: 1 Offset: 2",
        "Following intermediate topics offsets will be reset to end (for consumer group resetapp)",
        "Topic: resetapp-through",
        "Done.",
        "Deleting all internal/auto-created topics for application resetapp",
        *(f"Topic: {t}" for t in internal),
        "Done."]
    assert committed_offsets(servers, "resetapp", "resetapp-input") == {0: 5, 1: 5}

    done = run("kafka-streams-application-reset.sh", *args[:-2], "--intermediate-topics", "resetapp-through",
               "--to-offset", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert committed_offsets(servers, "resetapp", "resetapp-input") == {0: 2, 1: 2}
    assert committed_offsets(servers, "resetapp", "resetapp-through") == {0: 4}
    admin = KafkaAdminClient(bootstrap_servers=servers)
    try:
        wait_until(lambda: not set(internal) & set(admin.list_topics()), 30, "internal topics not deleted")
        assert set(kept) <= set(admin.list_topics())
    finally:
        admin.close()

    plan = tmp_path / "plan.csv"
    plan.write_text("resetapp-input,0,1\nresetapp-input,1,100\n")
    from_file = run("kafka-streams-application-reset.sh", "--bootstrap-servers", servers, "--application-id",
                    "resetapp", "--input-topics", "resetapp-input", "--from-file", str(plan))
    assert from_file.returncode == 0, from_file.stderr
    assert "New offset (100) is higher than latest offset. Value will be set to 5" in from_file.stdout
    assert committed_offsets(servers, "resetapp", "resetapp-input") == {0: 1, 1: 5}

    # --force removes the members of a group whose instances are gone
    member = KafkaConsumer(bootstrap_servers=servers, group_id="resetapp", enable_auto_commit=False,
                           session_timeout_ms=30000)
    try:
        member.subscribe(["resetapp-input"])
        deadline = time.monotonic() + 60
        while not member.assignment() and time.monotonic() < deadline:
            member.poll(timeout_ms=500)
        assert member.assignment()
        forced = run("kafka-streams-application-reset.sh", "--bootstrap-servers", servers, "--application-id",
                     "resetapp", "--input-topics", "resetapp-input", "--to-latest", "--force")
    finally:
        member.close(autocommit=False)
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert forced.stdout.splitlines()[0] == "Force deleting all active members in the group: resetapp"
    assert committed_offsets(servers, "resetapp", "resetapp-input") == {0: 5, 1: 5}

    for scenario, expected in ((["--shift-by", "-2"], {0: 3, 1: 3}),
                               (["--to-datetime", "2000-01-01T00:00:00.000"], {0: 0, 1: 0}),
                               (["--by-duration", "PT0S"], {0: 5, 1: 5})):  # no record from now on: the end
        moved = run("kafka-streams-application-reset.sh", "--bootstrap-servers", servers, "--application-id",
                    "resetapp", "--input-topics", "resetapp-input", *scenario)
        assert moved.returncode == 0, moved.stdout + moved.stderr
        assert committed_offsets(servers, "resetapp", "resetapp-input") == expected, scenario

    both = run("kafka-streams-application-reset.sh", "--application-id", "resetapp", "--to-earliest",
               "--to-latest")
    assert both.returncode == 1 and "can't be used with option" in both.stderr


# -- kafka-replica-verification.sh ---------------------------------------------------------------

def test_replica_verification(source):
    servers = bootstrap(source)
    create_topic(servers, "verified", partitions=2, replication=2)
    produce(servers, "verified", [(f"k{i}".encode(), b"v" * 100, []) for i in range(50)])
    process = subprocess.Popen([str(BIN / "kafka-replica-verification.sh"), "--broker-list", servers,
                                "--topic-white-list", "verified", "--time", "-2", "--report-interval-ms", "300",
                                "--max-wait-ms", "200"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    lines = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(" max lag is 0 " in line for line in lines):
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
        process.send_signal(signal.SIGTERM)
        rest = process.stdout.read()
        err = process.stderr.read()
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"
    assert lines and re.fullmatch(stamp + ": verification process is started.", lines[0]), (lines, rest, err)
    reports = [line for line in lines[1:] if " max lag is " in line]
    assert reports, (lines, err)
    # both partitions fetched from both replicas and found equal up to their high watermarks
    assert re.fullmatch(stamp + r": max lag is 0 for partition verified-[01] at offset \d+ among 2 partitions",
                        reports[-1]), (reports[-3:], err[-3000:])
    assert not any("unmatched checksum" in line or "doesn't match" in line for line in lines + rest.splitlines())
    assert code == 0, err


def test_replica_verification_without_topics(source):
    result = run("kafka-replica-verification.sh", "--broker-list", bootstrap(source), "--topic-white-list",
                 "no-such-topic-.*")
    assert result.returncode == 1
    assert "No topics found." in result.stderr


# -- zookeeper-security-migration.sh -------------------------------------------------------------

def test_zookeeper_security_migration(zookeeper, tmp_path):
    from kazoo.client import KazooClient
    from kazoo.security import make_digest_acl_credential

    chroot = unique_chroot("zk-migration")
    admin_zk = KazooClient(hosts=zookeeper.connect_string, auth_data=[("digest", "kafka:kafka-secret")])
    admin_zk.start(timeout=30)
    try:
        for path in ("/brokers/topics/t/partitions/0/state", "/config/topics/t", "/config/users/alice",
                     "/consumers/old-group", "/cluster/id"):
            admin_zk.create(chroot + path, b"{}", makepath=True)
        jaas = tmp_path / "zk_client_jaas.conf"
        jaas.write_text('// the login of the migration tool\nClient {\n'
                        '  org.apache.zookeeper.server.auth.DigestLoginModule required\n'
                        '  username="kafka"\n  password="kafka-secret";\n};\n')
        env = {"KAFKA_OPTS": f"-Djava.security.auth.login.config={jaas}"}
        connect = zookeeper.connect_string + chroot

        secured = run("zookeeper-security-migration.sh", "--zookeeper.acl", "secure", "--zookeeper.connect", connect,
                      env=env)
        assert secured.returncode == 0, secured.stdout + secured.stderr
        assert secured.stdout.startswith("Warning: The following secure root paths do not exist in ZooKeeper: ")
        creator = make_digest_acl_credential("kafka", "kafka-secret")

        def acls(path: str) -> set:
            return {(a.perms, a.id.scheme, a.id.id) for a in admin_zk.get_acls(chroot + path)[0]}

        readable = {(31, "digest", creator), (1, "world", "anyone")}
        private = {(31, "digest", creator)}
        opened = {(31, "world", "anyone")}
        for path in ("", "/brokers", "/brokers/topics/t/partitions/0/state", "/config/topics/t", "/cluster/id",
                     "/admin", "/kafka-acl", "/isr_change_notification"):
            assert acls(path) == readable, path
        assert acls("/config/users") == private and acls("/config/users/alice") == private
        # the old consumers' tree is not Kafka's to lock: it stays open
        assert acls("/consumers/old-group") == opened
        assert admin_zk.exists(chroot + "/controller") is None  # never created

        checked = run("zookeeper-security-migration.sh", "--zookeeper.acl", "secure", "--zookeeper.connect",
                      connect, "--enable.path.check", env=env)
        assert checked.returncode == 1 and checked.stdout.splitlines()[-1] == "Exit the command."

        unsecured = run("zookeeper-security-migration.sh", "--zookeeper.acl", "unsecure", "--zookeeper.connect",
                        connect, env=env)
        assert unsecured.returncode == 0, unsecured.stdout + unsecured.stderr
        for path in ("", "/brokers/topics/t/partitions/0/state", "/config/users/alice", "/admin"):
            assert acls(path) == opened, path

        no_login = run("zookeeper-security-migration.sh", "--zookeeper.acl", "secure", "--zookeeper.connect", connect)
        assert no_login.returncode == 1
        assert "ERROR: No JAAS configuration file has been specified" in no_login.stderr
        jaas.write_text("KafkaServer {\n  org.apache.kafka.common.security.plain.PlainLoginModule required;\n};\n")
        no_section = run("zookeeper-security-migration.sh", "--zookeeper.acl", "secure", "--zookeeper.connect",
                         connect, env=env)
        assert no_section.returncode == 1
        assert f"ERROR: Security isn't enabled, most likely the file isn't set properly: {jaas}" in no_section.stdout
        assert acls("/config/users/alice") == opened  # nothing was touched
    finally:
        admin_zk.stop()
        admin_zk.close()


def test_replica_verification_finds_a_differing_replica(source):
    """A follower whose copy of a batch differs (its stored CRC changed on disk while it was
    down) is reported by the partition, the offset and both checksums. This restarts a broker
    of the module's cluster, so it runs after the other tests that use it."""
    servers = bootstrap(source)
    admin = KafkaAdminClient(bootstrap_servers=servers)
    try:
        admin.create_topics([NewTopic("verified-corrupt", -1, -1, replica_assignments={0: [0, 1]})])
    finally:
        admin.close()
    # the first batch holds offset 0 alone: it is the one changed below
    produce(servers, "verified-corrupt", [(None, b"v0", [])])
    produce(servers, "verified-corrupt", [(None, f"v{i}".encode(), []) for i in range(1, 5)])
    follower = source[1]
    segment = follower.log_dir / "verified-corrupt-0" / "00000000000000000000.log"
    wait_until(lambda: segment.exists() and segment.stat().st_size > 0, 30, "the follower has not copied the batch")
    assert follower.stop() == 0
    data = bytearray(segment.read_bytes())
    crc_at = 8 + 4 + 4 + 1  # base offset, length, partition leader epoch, magic
    original = int.from_bytes(data[crc_at:crc_at + 4], "big")
    data[crc_at:crc_at + 4] = (original ^ 0xFFFFFFFF).to_bytes(4, "big")
    segment.write_bytes(bytes(data))
    follower.start()

    process = subprocess.Popen([str(BIN / "kafka-replica-verification.sh"), "--broker-list", servers,
                                "--topic-white-list", "verified-corrupt", "--time", "-2", "--max-wait-ms", "200"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    lines = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any("unmatched checksum" in line for line in lines):
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    mismatches = [line for line in lines if "unmatched checksum" in line]
    assert mismatches, lines
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}: partition verified-corrupt-0 has unmatched checksum "
                        rf"at offset 0; replica (0|1)'s checksum (\d+); replica (0|1)'s checksum (\d+)", mismatches[0])
    checksums = set(re.findall(r"checksum (\d+)", mismatches[0]))
    assert checksums == {str(original), str(original ^ 0xFFFFFFFF)}
