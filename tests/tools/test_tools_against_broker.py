"""The bin/ tool scripts against a real broker process and a real ZooKeeper.

Each test runs the scripts as an operator would (subprocesses, stdin/stdout) and checks
their output formats and exit statuses, and checks what they did through the broker.
"""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from tests.integration.broker_harness import BrokerProcess, ROOT, free_port, unique_chroot, wait_until

BIN = ROOT / "bin"

PRODUCER_TOTAL = re.compile(
    r"^(\d+) records sent, \d+\.\d{6} records/sec \(\d+\.\d\d MB/sec\), \d+\.\d\d ms avg latency, "
    r"\d+\.\d\d ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$")
PRODUCER_WINDOW = re.compile(r"^\d+ records sent, \d+\.\d records/sec \(\d+\.\d\d MB/sec\), \d+\.\d ms avg latency, "
                             r"\d+\.\d ms max latency\.$")
CONSUMER_HEADER = ("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
                   "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
CONSUMER_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, "
                           r"\d+\.\d{4}, \d+\.\d{4}, (\d+), \d+\.\d{4}, (\d+), (\d+), \d+\.\d{4}, \d+\.\d{4}$")


@pytest.fixture(scope="module")
def broker(zookeeper, tmp_path_factory):
    b = BrokerProcess(tmp_path_factory.mktemp("tools-broker"), zookeeper.connect_string, unique_chroot())
    b.start()
    yield b
    if b.running:
        assert b.stop() == 0, b.tail()


def run(script: str, *args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / script), *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def topics(broker: BrokerProcess, *args: str) -> subprocess.CompletedProcess:
    return run("kafka-topics.sh", "--bootstrap-server", broker.bootstrap, *args)


def configs(broker: BrokerProcess, *args: str) -> subprocess.CompletedProcess:
    return run("kafka-configs.sh", "--bootstrap-server", broker.bootstrap, *args)


def test_topics_lifecycle(broker):
    created = topics(broker, "--create", "--topic", "tools.orders", "--partitions", "2", "--replication-factor", "1",
                     "--config", "retention.ms=3600000")
    assert created.returncode == 0, created.stderr
    assert created.stdout.splitlines() == [
        "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could "
        "collide. To avoid issues it is best to use either, but not both.",
        "Created topic tools.orders."]

    again = topics(broker, "--create", "--topic", "tools.orders")
    assert again.returncode == 1
    assert again.stderr.strip() == "Error while executing topic command : Topic 'tools.orders' already exists."
    assert "Traceback" not in again.stderr
    assert topics(broker, "--create", "--topic", "tools.orders", "--if-not-exists").returncode == 0

    assert "tools.orders" in topics(broker, "--list").stdout.splitlines()

    altered = topics(broker, "--alter", "--topic", "tools.orders", "--partitions", "3")
    assert altered.returncode == 0, altered.stderr
    described = topics(broker, "--describe", "--topic", "tools.orders")
    assert described.returncode == 0, described.stderr
    lines = described.stdout.splitlines()
    assert re.fullmatch(r"Topic: tools\.orders\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: 3\t"
                        r"ReplicationFactor: 1\tConfigs: retention\.ms=3600000", lines[0]), lines[0]
    assert lines[1:] == [f"\tTopic: tools.orders\tPartition: {p}\tLeader: 0\tReplicas: 0\tIsr: 0" for p in range(3)]
    # one broker: nothing is under-replicated
    assert topics(broker, "--describe", "--topic", "tools.orders", "--under-replicated-partitions").stdout == ""

    shrink = topics(broker, "--alter", "--topic", "tools.orders", "--partitions", "1")
    assert shrink.returncode == 1
    assert shrink.stderr.startswith("Error while executing topic command : ")
    assert "3 partitions" in shrink.stderr

    deleted = topics(broker, "--delete", "--topic", "tools.orders")
    assert deleted.returncode == 0, deleted.stderr
    wait_until(lambda: "tools.orders" not in topics(broker, "--list").stdout.splitlines(), 30,
               "deleted topic still listed")


@pytest.mark.parametrize("action", [["--describe"], ["--delete"], ["--alter", "--partitions", "2"]])
def test_topics_unknown_topic(broker, action):
    result = topics(broker, *action, "--topic", "tools-missing")
    assert result.returncode == 1
    assert result.stderr == "Error while executing topic command : Topic 'tools-missing' does not exist as expected\n"
    quiet = topics(broker, *action, "--topic", "tools-missing", "--if-exists")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def zk_topics(broker: BrokerProcess, *args: str) -> subprocess.CompletedProcess:
    return run("kafka-topics.sh", "--zookeeper", broker.zk_connect, *args)


def test_topics_through_zookeeper(broker):
    """kafka-topics.sh --zookeeper, as 2.8.2's TopicCommand.ZookeeperTopicService (librdkafka's
    test suite creates its topics so): the znodes written and read directly, the broker
    acting on them."""
    created = zk_topics(broker, "--create", "--topic", "zk-orders", "--partitions", "2", "--replication-factor", "1",
                        "--config", "retention.ms=3600000")
    assert created.returncode == 0, created.stderr
    assert created.stdout == "Created topic zk-orders.\n"
    # the controller acts on the znode: the broker leads both partitions
    wait_until(lambda: broker.leads("zk-orders", [0, 1]), 30, "the broker never led zk-orders")
    again = zk_topics(broker, "--create", "--topic", "zk-orders", "--partitions", "1", "--replication-factor", "1")
    assert again.returncode == 1 and again.stderr == ("Error while executing topic command : Topic 'zk-orders' "
                                                      "already exists.\n")
    quiet = zk_topics(broker, "--create", "--topic", "zk-orders", "--partitions", "1", "--replication-factor", "1",
                      "--if-not-exists")
    assert (quiet.returncode, quiet.stdout) == (0, "")
    missing_rf = zk_topics(broker, "--create", "--topic", "zk-other", "--partitions", "1")
    assert missing_rf.returncode == 2 and 'Missing required argument "[replication-factor]"' in missing_rf.stderr

    listed = zk_topics(broker, "--list", "--topic", "zk-.*")
    assert (listed.returncode, listed.stdout) == (0, "zk-orders\n")

    described = zk_topics(broker, "--describe", "--topic", "zk-orders")
    assert described.returncode == 0, described.stderr
    lines = described.stdout.splitlines()
    assert re.fullmatch(r"Topic: zk-orders\tTopicId: [\w-]{22}\tPartitionCount: 2\tReplicationFactor: 1\t"
                        r"Configs: retention\.ms=3600000", lines[0]), lines[0]
    assert lines[1:] == ["\tTopic: zk-orders\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0",
                         "\tTopic: zk-orders\tPartition: 1\tLeader: 0\tReplicas: 0\tIsr: 0"]
    # the same through the broker
    through_broker = topics(broker, "--describe", "--topic", "zk-orders")
    assert through_broker.stdout.splitlines()[1:] == lines[1:]

    altered = zk_topics(broker, "--alter", "--topic", "zk-orders", "--partitions", "3", "--config", "retention.ms=1000",
                        "--delete-config", "retention.ms")
    assert altered.returncode == 0, altered.stderr
    assert altered.stdout.splitlines() == [
        "WARNING: Altering topic configuration from this script has been deprecated and may be removed in future "
        "releases.",
        "         Going forward, please use kafka-configs.sh for this functionality",
        "Updated config for topic zk-orders.",
        "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the "
        "messages will be affected",
        "Adding partitions succeeded!"]
    wait_until(lambda: broker.leads("zk-orders", [0, 1, 2]), 30, "the broker never led the new partition")
    described = zk_topics(broker, "--describe", "--topic", "zk-orders").stdout.splitlines()
    assert "\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: " in described[0] and described[0].endswith("Configs: ")

    deleted = zk_topics(broker, "--delete", "--topic", "zk-orders")
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.splitlines() == ["Topic zk-orders is marked for deletion.",
                                           "Note: This will have no impact if delete.topic.enable is not set to true."]
    wait_until(lambda: "zk-orders" not in zk_topics(broker, "--list").stdout.split(), 30, "zk-orders was not deleted")
    gone = zk_topics(broker, "--describe", "--topic", "zk-orders")
    assert gone.returncode == 1 and "Topic 'zk-orders' does not exist as expected" in gone.stderr
    both = run("kafka-topics.sh", "--zookeeper", broker.zk_connect, "--bootstrap-server", broker.bootstrap, "--list")
    assert both.returncode == 2 and "Only one of --bootstrap-server or --zookeeper must be specified" in both.stderr


def test_topic_configs_through_zookeeper(broker):
    """kafka-configs.sh --zookeeper for topics, as 2.8.2's alterConfigWithZk/describeConfigWithZk:
    the broker picks the change up from /config/changes."""
    created = zk_topics(broker, "--create", "--topic", "zk-configs", "--partitions", "1", "--replication-factor", "1")
    assert created.returncode == 0, created.stderr
    warning = ["Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.",
               "Use --bootstrap-server instead to specify a broker to connect to."]
    altered = run("kafka-configs.sh", "--zookeeper", broker.zk_connect, "--alter", "--entity-type", "topics",
                  "--entity-name", "zk-configs", "--add-config", "retention.ms=1000,cleanup.policy=compact")
    assert altered.returncode == 0, altered.stderr
    assert altered.stdout.splitlines() == warning + ["Completed updating config for entity: topic 'zk-configs'."]
    described = run("kafka-configs.sh", "--zookeeper", broker.zk_connect, "--describe", "--entity-type", "topics",
                    "--entity-name", "zk-configs")
    assert described.returncode == 0, described.stderr
    assert described.stdout.splitlines()[2] in (
        "Configs for topic 'zk-configs' are retention.ms=1000,cleanup.policy=compact",
        "Configs for topic 'zk-configs' are cleanup.policy=compact,retention.ms=1000")
    wait_until(lambda: "retention.ms=1000" in configs(broker, "--describe", "--entity-type", "topics", "--entity-name",
                                                      "zk-configs").stdout, 30, "the broker never saw retention.ms")
    bad = run("kafka-configs.sh", "--zookeeper", broker.zk_connect, "--alter", "--entity-type", "topics",
              "--entity-name", "zk-configs", "--delete-config", "segment.ms")
    assert bad.returncode == 1 and bad.stderr == "Invalid config(s): segment.ms\n"
    missing = run("kafka-configs.sh", "--zookeeper", broker.zk_connect, "--alter", "--entity-type", "topics",
                  "--entity-name", "zk-nothing", "--add-config", "retention.ms=1000")
    assert missing.returncode == 1 and missing.stderr == "Topic 'zk-nothing' does not exist.\n"


def test_client_quotas_through_zookeeper(broker):
    """kafka-configs.sh --zookeeper for the quotas of clients, users and <user, client> pairs, in
    their config znodes as 2.8.2's tool writes them; the broker's DescribeClientQuotas sees them."""
    zk = ("--zookeeper", broker.zk_connect)
    altered = run("kafka-configs.sh", *zk, "--alter", "--entity-type", "clients", "--entity-name", "zk-app",
                  "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048")
    assert altered.returncode == 0, altered.stderr
    assert altered.stdout.splitlines()[2:] == ["Completed updating config for entity: client-id 'zk-app'."]
    pair = run("kafka-configs.sh", *zk, "--alter", "--entity-type", "users", "--entity-name", "zk-alice",
               "--entity-type", "clients", "--entity-default", "--add-config", "request_percentage=50")
    assert pair.returncode == 0, pair.stderr
    assert pair.stdout.splitlines()[2:] == [
        "Completed updating config for entity: user-principal 'zk-alice', default client-id."]
    described = run("kafka-configs.sh", *zk, "--describe", "--entity-type", "clients", "--entity-name", "zk-app")
    assert described.returncode == 0, described.stderr
    assert described.stdout.splitlines()[2] in (
        "Configs for client-id 'zk-app' are producer_byte_rate=1024,consumer_byte_rate=2048",
        "Configs for client-id 'zk-app' are consumer_byte_rate=2048,producer_byte_rate=1024")
    described = run("kafka-configs.sh", *zk, "--describe", "--entity-type", "users", "--entity-name", "zk-alice",
                    "--entity-type", "clients")
    assert described.stdout.splitlines()[2:] == [
        "Configs for user-principal 'zk-alice', default client-id are request_percentage=50"]
    wait_until(lambda: "producer_byte_rate=1024" in configs(broker, "--describe", "--entity-type", "clients",
                                                            "--entity-name", "zk-app").stdout, 30,
               "the broker never listed the client's quota")
    deleted = run("kafka-configs.sh", *zk, "--alter", "--entity-type", "clients", "--entity-name", "zk-app",
                  "--delete-config", "producer_byte_rate,request_percentage")
    assert deleted.returncode == 1 and deleted.stderr == "Invalid config(s): request_percentage\n"
    unknown = run("kafka-configs.sh", *zk, "--alter", "--entity-type", "clients", "--entity-name", "zk-app",
                  "--add-config", "retention.ms=5")
    assert unknown.returncode == 1 and unknown.stderr == "Unknown Dynamic Configuration 'retention.ms'.\n"
    ip = run("kafka-configs.sh", *zk, "--alter", "--entity-type", "ips", "--entity-name", "127.0.0.1",
             "--add-config", "connection_creation_rate=10")
    assert ip.returncode == 0, ip.stderr
    assert ip.stdout.splitlines()[2:] == ["Completed updating config for entity: ips '127.0.0.1'."]
    described = run("kafka-configs.sh", *zk, "--describe", "--entity-type", "ips", "--entity-name", "127.0.0.1")
    assert described.stdout.splitlines()[2:] == ["Configs for ips '127.0.0.1' are connection_creation_rate=10"]
    bad_ip = run("kafka-configs.sh", *zk, "--alter", "--entity-type", "ips", "--entity-name", "no-such-host.invalid",
                 "--add-config", "connection_creation_rate=10")
    assert bad_ip.returncode == 1 and bad_ip.stderr == "no-such-host.invalid is not a valid IP or resolvable host.\n"


def test_broker_configs_through_zookeeper(broker):
    """kafka-configs.sh --zookeeper for brokers, as 2.8.2's: a replication throttle rate of the
    running broker, other dynamic configs only for a broker that is down, password configs
    stored encrypted with the password.encoder.secret given."""
    from kafka_py.clients.common.config.config_def import Password
    from kafka_py.core.utils.password_encoder import PasswordEncoder

    zk = ("--zookeeper", broker.zk_connect)
    throttled = run("kafka-configs.sh", *zk, "--alter", "--entity-type", "brokers", "--entity-name", "0",
                    "--add-config", "leader.replication.throttled.rate=1000000")
    assert throttled.returncode == 0, throttled.stderr
    assert throttled.stdout.splitlines()[2:] == ["Completed updating config for entity: brokers '0'."]
    wait_until(lambda: "leader.replication.throttled.rate=1000000" in configs(
        broker, "--describe", "--entity-type", "brokers", "--entity-name", "0").stdout, 30,
        "the broker never saw its throttle")
    running = run("kafka-configs.sh", *zk, "--alter", "--entity-type", "brokers", "--entity-name", "0",
                  "--add-config", "log.cleaner.threads=2")
    assert running.returncode == 1
    assert running.stderr == (
        "requirement failed: --bootstrap-server option must be specified to update broker configs "
        "Set(log.cleaner.threads). when broker 0 is running. Broker configuration updates using ZooKeeper are "
        "supported for bootstrapping before brokers are started to enable encrypted password configs to be "
        "stored in ZooKeeper.\n")
    # broker 7 has not started yet: its key store password goes in encrypted
    key = "listener.name.external.ssl.key.password"
    no_secret = run("kafka-configs.sh", *zk, "--alter", "--entity-type", "brokers", "--entity-name", "7",
                    "--add-config", f"{key}=secret-1")
    assert no_secret.returncode == 1 and no_secret.stderr.startswith(
        f"requirement failed: password.encoder.secret must be specified to update Set({key}).")
    stored = run("kafka-configs.sh", *zk, "--alter", "--entity-type", "brokers", "--entity-name", "7",
                 "--add-config", f"{key}=secret-1,password.encoder.secret=encoder-secret")
    assert stored.returncode == 0, stored.stderr
    described = run("kafka-configs.sh", *zk, "--describe", "--entity-type", "brokers", "--entity-name", "7")
    [line] = described.stdout.splitlines()[2:]
    prefix = f"Configs for brokers '7' are {key}="
    assert line.startswith(prefix) and "secret-1" not in line and "password.encoder" not in line
    assert PasswordEncoder(Password("encoder-secret")).decode(line[len(prefix):]).value == "secret-1"
    cleared = run("kafka-configs.sh", *zk, "--alter", "--entity-type", "brokers", "--entity-name", "0",
                  "--delete-config", "leader.replication.throttled.rate")
    assert cleared.returncode == 0, cleared.stderr


def test_configs_describe_and_alter(broker):
    assert topics(broker, "--create", "--topic", "tools-configs").returncode == 0
    entity = ["--entity-type", "topics", "--entity-name", "tools-configs"]

    added = configs(broker, *entity, "--alter", "--add-config", "retention.ms=60000,cleanup.policy=[compact,delete]")
    assert added.returncode == 0, added.stderr
    assert added.stdout == "Completed updating config for topic tools-configs.\n"
    described = configs(broker, *entity, "--describe")
    lines = described.stdout.splitlines()
    assert lines[0] == "Dynamic configs for topic tools-configs are:"
    assert sorted(line.split(" sensitive=")[0] for line in lines[1:]) == [
        "  cleanup.policy=compact,delete", "  retention.ms=60000"]
    assert all(" sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:" in line for line in lines[1:])

    removed = configs(broker, "--topic", "tools-configs", "--alter", "--delete-config", "retention.ms")
    assert removed.returncode == 0, removed.stderr
    lines = configs(broker, *entity, "--describe").stdout.splitlines()
    assert [line.split("=")[0] for line in lines[1:]] == ["  cleanup.policy"]

    missing = configs(broker, *entity, "--alter", "--delete-config", "retention.ms")
    assert (missing.returncode, missing.stderr) == (1, "Invalid config(s): retention.ms\n")
    bad = configs(broker, *entity, "--alter", "--add-config", "retention.ms=soon")
    assert bad.returncode == 1 and "retention.ms" in bad.stderr and "Traceback" not in bad.stderr

    brokers = ["--entity-type", "brokers", "--entity-default"]
    assert configs(broker, *brokers, "--alter", "--add-config", "log.retention.ms=7200000").stdout == (
        "Completed updating default config for brokers in the cluster.\n")
    lines = configs(broker, *brokers, "--describe").stdout.splitlines()
    assert lines[0] == "Default configs for brokers in the cluster are:"
    assert lines[1].startswith("  log.retention.ms=7200000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:")
    assert configs(broker, *brokers, "--alter", "--delete-config", "log.retention.ms").returncode == 0
    assert configs(broker, "--broker", "0", "--describe", "--all").stdout.startswith("All configs for broker 0 are:\n")


def run_into_closed_pipe(script: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Runs a tool whose stdout reader has already gone, as after ``| head``: its every
    write to stdout fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([str(BIN / script), *args], stdin=subprocess.DEVNULL, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=timeout, cwd=ROOT)
    finally:
        os.close(write_end)


def test_tools_piped_into_a_reader_that_left_exit_quietly(broker):
    assert topics(broker, "--create", "--topic", "tools-piped").returncode == 0
    produced = run("kafka-console-producer.sh", "--bootstrap-server", broker.bootstrap, "--topic", "tools-piped",
                   stdin="".join(f"{i}\n" for i in range(20)))
    assert produced.returncode == 0, produced.stderr
    bootstrap = ["--bootstrap-server", broker.bootstrap]
    for command in [
        ("kafka-configs.sh", *bootstrap, "--entity-type", "topics", "--entity-name", "tools-piped",
         "--describe", "--all"),
        ("kafka-topics.sh", *bootstrap, "--describe", "--topic", "tools-piped"),
        ("kafka-consumer-groups.sh", *bootstrap, "--list"),
        ("kafka-consumer-perf-test.sh", *bootstrap, "--topic", "tools-piped", "--messages", "20"),
    ]:
        result = run_into_closed_pipe(*command)
        assert (result.returncode, result.stderr) == (0, ""), command
    # Kafka's console consumer says why it stops, then reports its count as usual.
    consumed = run_into_closed_pipe("kafka-console-consumer.sh", *bootstrap, "--topic", "tools-piped",
                                    "--from-beginning", "--max-messages", "20", "--timeout-ms", "20000")
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stderr.splitlines() == ["Unable to write to standard out, closing consumer.",
                                            "Processed a total of 1 messages"]


def test_console_producer_to_console_consumer_with_keys_and_headers(broker):
    assert topics(broker, "--create", "--topic", "tools-console", "--partitions", "1").returncode == 0
    lines = "".join(f"trace:{i},app:tools\tkey-{i}\tvalue {i}\n" for i in range(5))
    produced = run("kafka-console-producer.sh", "--bootstrap-server", broker.bootstrap, "--topic", "tools-console",
                   "--property", "parse.key=true", "--property", "parse.headers=true", "--compression-codec",
                   "--request-required-acks", "all", stdin=lines)
    assert produced.returncode == 0, produced.stderr
    produced = run("kafka-console-producer.sh", "--bootstrap-server", broker.bootstrap, "--topic", "tools-console",
                   "--property", "parse.key=true", "--property", "key.separator=:", "--sync",
                   stdin="last:the end\n")
    assert produced.returncode == 0, produced.stderr

    consumed = run("kafka-console-consumer.sh", "--bootstrap-server", broker.bootstrap, "--topic", "tools-console",
                   "--from-beginning", "--max-messages", "6", "--property", "print.key=true", "--property",
                   "print.headers=true", "--property", "print.offset=true", "--property", "print.timestamp=true")
    assert consumed.returncode == 0, consumed.stderr
    rows = [line.split("\t") for line in consumed.stdout.splitlines()]
    assert [r[0].split(":")[0] for r in rows] == ["CreateTime"] * 6
    assert [r[1:] for r in rows] == (
        [[f"Offset:{i}", f"trace:{i},app:tools", f"key-{i}", f"value {i}"] for i in range(5)]
        + [["Offset:5", "NO_HEADERS", "last", "the end"]])
    assert consumed.stderr.endswith("Processed a total of 6 messages\n")

    one = run("kafka-console-consumer.sh", "--bootstrap-server", broker.bootstrap, "--topic", "tools-console",
              "--partition", "0", "--offset", "3", "--max-messages", "2", "--property", "print.key=true",
              "--property", "key.separator=|")
    assert one.returncode == 0, one.stderr
    assert one.stdout == "key-3|value 3\nkey-4|value 4\n"

    matched = run("kafka-console-consumer.sh", "--bootstrap-server", broker.bootstrap, "--whitelist",
                  "tools-cons.*", "--from-beginning", "--max-messages", "6")
    assert matched.returncode == 0, matched.stderr
    assert matched.stdout.splitlines() == [f"value {i}" for i in range(5)] + ["the end"]


def console_consumer_groups(broker: BrokerProcess) -> set[str]:
    listed = run("kafka-consumer-groups.sh", "--bootstrap-server", broker.bootstrap, "--list")
    assert listed.returncode == 0, listed.stderr
    return {g for g in listed.stdout.split() if re.fullmatch(r"console-consumer-\d{1,5}", g)}


def test_console_consumer_without_a_group_joins_a_throw_away_one(broker):
    assert topics(broker, "--create", "--topic", "tools-groupless").returncode == 0
    before = console_consumer_groups(broker)
    consumer = subprocess.Popen(
        [str(BIN / "kafka-console-consumer.sh"), "--bootstrap-server", broker.bootstrap, "--topic", "tools-groupless",
         "--max-messages", "1", "--timeout-ms", "60000"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        wait_until(lambda: console_consumer_groups(broker) - before, 60, "no console-consumer-N group appeared")
        (group,) = console_consumer_groups(broker) - before
        wait_until(lambda: "tools-groupless" in run(
            "kafka-consumer-groups.sh", "--bootstrap-server", broker.bootstrap, "--describe", "--group", group,
            "--members", "--verbose").stdout, 60, "the consumer was given no partition")
        produced = run("kafka-console-producer.sh", "--bootstrap-server", broker.bootstrap, "--topic",
                       "tools-groupless", stdin="hello\n")
        assert produced.returncode == 0, produced.stderr
        out, err = consumer.communicate(timeout=60)
    finally:
        if consumer.poll() is None:
            consumer.kill()
            consumer.communicate()
    assert consumer.returncode == 0, err
    assert out == "hello\n"
    # its offsets were not committed: the throw-away group is not meant to be used again
    offsets = run("kafka-consumer-groups.sh", "--bootstrap-server", broker.bootstrap, "--describe", "--group", group)
    assert "tools-groupless" not in offsets.stdout, offsets.stdout

    idle = run("kafka-console-consumer.sh", "--bootstrap-server", broker.bootstrap, "--topic", "tools-console",
               "--partition", "0", "--offset", "latest", "--timeout-ms", "1000")
    assert (idle.returncode, idle.stdout) == (0, "")
    assert idle.stderr.endswith("Processed a total of 0 messages\n")


def test_console_producer_refuses_a_line_without_key(broker):
    result = run("kafka-console-producer.sh", "--bootstrap-server", broker.bootstrap, "--topic", "tools-console-bad",
                 "--property", "parse.key=true", stdin="no separator here\n")
    assert result.returncode == 1
    assert result.stderr == "No key separator found on line number 1: 'no separator here'\n"


def perf_consumer_groups(broker: BrokerProcess) -> set[str]:
    listed = run("kafka-consumer-groups.sh", "--bootstrap-server", broker.bootstrap, "--list")
    assert listed.returncode == 0, listed.stderr
    return {g for g in listed.stdout.split() if re.fullmatch(r"perf-consumer-\d{1,5}", g)}


@pytest.mark.parametrize("name, mode, acks", [
    ("tools-perf", [], "1"),
    ("tools-perf-pipeline", ["--pipeline", "--connections", "3", "--window", "4"], "all"),
    ("tools-perf-acks0", ["--pipeline", "--connections", "2"], "0"),
])
def test_producer_perf_test_then_consumer_perf_test(broker, name, mode, acks):
    topic = name
    assert topics(broker, "--create", "--topic", topic, "--partitions", "2").returncode == 0
    produced = run("kafka-producer-perf-test.sh", "--topic", topic, "--num-records", "2000", "--record-size", "100",
                   "--throughput", "-1", *mode, "--producer-props", f"bootstrap.servers={broker.bootstrap}",
                   f"acks={acks}", "batch.size=4096")
    assert produced.returncode == 0, produced.stderr
    lines = produced.stdout.splitlines()
    assert all(PRODUCER_WINDOW.match(line) for line in lines[:-1]), lines
    match = PRODUCER_TOTAL.match(lines[-1])
    assert match, lines[-1]
    assert int(match.group(1)) == 2000

    groups_before = perf_consumer_groups(broker)
    # --timeout bounds the silence before the first record too, which includes joining the new
    # group: generous, as a loaded machine can take seconds to join (the run ends at 2,000 anyway)
    consumed = run("kafka-consumer-perf-test.sh", "--bootstrap-server", broker.bootstrap, "--topic", topic,
                   "--messages", "2000", "--timeout", "30000")
    assert consumed.returncode == 0, consumed.stderr
    assert len(consumed.stdout.splitlines()) == 2, consumed.stdout
    header, line = consumed.stdout.splitlines()
    assert header == CONSUMER_HEADER
    match = CONSUMER_LINE.match(line)
    assert match, line
    assert int(match.group(1)) == 2000
    assert line.split(", ")[2] == f"{2000 * 100 / 1024 / 1024:.4f}"
    # It consumed in a group of its own, perf-consumer-N as Kafka's, which committed on close.
    (group,) = perf_consumer_groups(broker) - groups_before
    described = run("kafka-consumer-groups.sh", "--bootstrap-server", broker.bootstrap, "--describe", "--group", group)
    rows = [line.split() for line in described.stdout.splitlines() if f" {topic} " in f" {line} "]
    assert sum(int(row[3]) for row in rows) == 2000, described.stdout


def test_producer_perf_test_prints_windows_while_running(broker):
    assert topics(broker, "--create", "--topic", "tools-perf-slow").returncode == 0
    # a throttled run of about 6 s: one 5-second window line, then the totals
    produced = run("kafka-producer-perf-test.sh", "--topic", "tools-perf-slow", "--num-records", "3000",
                   "--record-size", "10", "--throughput", "500", "--pipeline", "--connections", "1",
                   "--producer-props", f"bootstrap.servers={broker.bootstrap}", "batch.size=500")
    assert produced.returncode == 0, produced.stderr
    lines = produced.stdout.splitlines()
    assert len(lines) >= 2 and all(PRODUCER_WINDOW.match(line) for line in lines[:-1]), lines
    assert PRODUCER_TOTAL.match(lines[-1]).group(1) == "3000"


def test_every_tool_reports_a_missing_broker_in_one_line(tmp_path):
    address = f"127.0.0.1:{free_port()}"
    props = tmp_path / "client.properties"
    props.write_text("bootstrap.timeout.ms=1000\n")
    offsets = tmp_path / "offsets.json"
    offsets.write_text('{"partitions": [{"topic": "t", "partition": 0, "offset": 1}], "version": 1}')
    commands = [
        ("kafka-topics.sh", "--bootstrap-server", address, "--list", "--command-config", str(props)),
        ("kafka-configs.sh", "--bootstrap-server", address, "--describe", "--entity-type", "topics",
         "--command-config", str(props)),
        ("kafka-console-producer.sh", "--bootstrap-server", address, "--topic", "t", "--producer.config", str(props)),
        ("kafka-console-consumer.sh", "--bootstrap-server", address, "--topic", "t", "--consumer.config", str(props)),
        ("kafka-producer-perf-test.sh", "--topic", "t", "--num-records", "1", "--record-size", "1", "--throughput",
         "-1", "--producer.config", str(props), "--producer-props", f"bootstrap.servers={address}"),
        ("kafka-consumer-perf-test.sh", "--bootstrap-server", address, "--topic", "t", "--messages", "1",
         "--consumer.config", str(props), "--hide-header"),
        ("kafka-delete-records.sh", "--bootstrap-server", address, "--offset-json-file", str(offsets),
         "--command-config", str(props)),
        ("kafka-broker-api-versions.sh", "--bootstrap-server", address, "--command-config", str(props)),
        ("kafka-run-class.sh", "kafka.tools.GetOffsetShell", "--broker-list", address, "--topic", "t",
         "--command-config", str(props)),
    ]
    procs = [subprocess.Popen([str(BIN / c[0]), *c[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT) for c in commands]
    for command, proc in zip(commands, procs):
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 1, (command, out, err)
        assert err.count("\n") == 1, (command, err)
        assert f"Unable to connect to the bootstrap server(s) {address}" in err


# -- kafka-delete-records.sh, kafka-run-class.sh kafka.tools.GetOffsetShell ---------------------

UNKNOWN_PARTITION = ("org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host "
                     "this topic-partition.")
OUT_OF_RANGE = ("org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested offset is not within the "
                "range of offsets maintained by the server.")


def get_offsets(broker: BrokerProcess, topic: str, *args: str) -> subprocess.CompletedProcess:
    return run("kafka-run-class.sh", "kafka.tools.GetOffsetShell", "--broker-list", broker.bootstrap,
               "--topic", topic, *args)


def delete_records(broker: BrokerProcess, path, entries: list[dict]) -> subprocess.CompletedProcess:
    path.write_text(json.dumps({"partitions": entries, "version": 1}))
    return run("kafka-delete-records.sh", "--bootstrap-server", broker.bootstrap, "--offset-json-file", str(path))


def test_get_offset_shell_and_delete_records(broker, tmp_path):
    from kafka import KafkaProducer

    topic = "tools-trim"
    # The records carry timestamps from 2023: with the default 7-day retention, the broker's
    # periodic retention check would delete them (moving the log start to 10) whenever it
    # happens to run during this test.
    assert topics(broker, "--create", "--topic", topic, "--partitions", "2",
                  "--config", "retention.ms=-1").returncode == 0
    base = 1_700_000_000_000
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
    try:
        for p in range(2):
            for i in range(10):
                producer.send(topic, b"v%d" % i, partition=p, timestamp_ms=base + i * 1000)
        producer.flush(timeout=30)
    finally:
        producer.close()

    latest = get_offsets(broker, topic)
    assert (latest.returncode, latest.stdout, latest.stderr) == (0, f"{topic}:0:10\n{topic}:1:10\n", "")
    assert get_offsets(broker, topic, "--time", "-2").stdout == f"{topic}:0:0\n{topic}:1:0\n"
    # the first record at or after a timestamp; none that recent: an empty offset
    assert get_offsets(broker, topic, "--time", str(base + 3500), "--partitions", "1").stdout == f"{topic}:1:4\n"
    assert get_offsets(broker, topic, "--time", str(base + 60000)).stdout == f"{topic}:0:\n{topic}:1:\n"

    deleted = delete_records(broker, tmp_path / "offsets.json", [
        {"topic": topic, "partition": 0, "offset": 4}, {"topic": topic, "partition": 1, "offset": -1},
        {"topic": topic, "partition": 2, "offset": 1}, {"topic": "tools-no-such-topic", "partition": 0, "offset": 1}])
    assert (deleted.returncode, deleted.stderr) == (0, "")
    assert deleted.stdout.splitlines() == [
        "Executing records delete operation",
        "Records delete operation completed:",
        f"partition: {topic}-0\tlow_watermark: 4",
        f"partition: {topic}-1\tlow_watermark: 10",  # -1: up to the high watermark
        f"partition: {topic}-2\terror: {UNKNOWN_PARTITION}",
        f"partition: tools-no-such-topic-0\terror: {UNKNOWN_PARTITION}"]
    assert get_offsets(broker, topic, "--time", "-2").stdout == f"{topic}:0:4\n{topic}:1:10\n"
    consumed = run("kafka-console-consumer.sh", "--bootstrap-server", broker.bootstrap, "--topic", topic,
                   "--partition", "0", "--offset", "earliest", "--max-messages", "1")
    assert consumed.stdout == "v4\n", consumed.stderr

    # past the high watermark: the partition's error, nothing deleted
    beyond = delete_records(broker, tmp_path / "beyond.json", [{"topic": topic, "partition": 0, "offset": 11}])
    assert beyond.returncode == 0
    assert beyond.stdout.splitlines()[2:] == [f"partition: {topic}-0\terror: {OUT_OF_RANGE}"]
    assert get_offsets(broker, topic, "--time", "-2", "--partitions", "0").stdout == f"{topic}:0:4\n"


def test_get_offset_shell_bad_input(broker):
    assert topics(broker, "--create", "--topic", "tools-offsets", "--partitions", "2").returncode == 0
    some = get_offsets(broker, "tools-offsets", "--partitions", "1,7")
    assert (some.returncode, some.stdout, some.stderr) == (
        0, "tools-offsets:1:0\n", "Error: partition 7 does not exist\n")
    for args, message in [
        (("--partitions", "7"), "Topic tools-offsets does not have any of the requested partitions 7"),
        (("--partitions", "1,x"), "--partitions expects a comma separated list of numeric partition ids, but "
                                  "received: 1,x"),
        (("--time", "-3"), "The target time for partition tools-offsets-0 is -3. The target time cannot be "
                           "negative."),
    ]:
        result = get_offsets(broker, "tools-offsets", *args)
        assert (result.returncode, result.stdout, result.stderr) == (1, "", message + "\n"), args
    missing = get_offsets(broker, "tools-no-such-topic")
    assert (missing.returncode, missing.stderr) == (1, "Topic tools-no-such-topic does not exist\n")
    assert "tools-no-such-topic" not in topics(broker, "--list").stdout.split()  # not created by asking

    no_topic = run("kafka-run-class.sh", "kafka.tools.GetOffsetShell", "--bootstrap-server", broker.bootstrap)
    assert no_topic.returncode == 1
    assert no_topic.stderr.splitlines()[0] == 'Missing required argument "[topic]"'
    unknown = run("kafka-run-class.sh", "kafka.tools.NoSuchTool", "--help")
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert unknown.stderr.splitlines()[:2] == ["Error: Could not find or load main class kafka.tools.NoSuchTool",
                                               "Caused by: java.lang.ClassNotFoundException: kafka.tools.NoSuchTool"]
    assert "kafka.tools.GetOffsetShell" in unknown.stderr
    # a class with a bin/ script runs it
    listed = run("kafka-run-class.sh", "kafka.admin.TopicCommand", "--bootstrap-server", broker.bootstrap, "--list")
    assert listed.returncode == 0 and "tools-offsets" in listed.stdout.split()


def test_broker_api_versions(broker):
    result = run("kafka-broker-api-versions.sh", "--bootstrap-server", broker.bootstrap)
    assert (result.returncode, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[0] == f"{broker.bootstrap} (id: 0 rack: null) -> ("
    expected = []
    for api in sorted((a for a in ApiKeys if a.zk_broker or a.implemented), key=lambda a: a.id):
        low, high = api.min_supported_version, api.max_supported_version
        if low is None:
            expected.append(f"{api.api_name}({api.id}): UNSUPPORTED")
        else:
            versions = str(low) if low == high else f"{low} to {high}"
            expected.append(f"{api.api_name}({api.id}): {versions} [usable: {high}]")
    assert lines[1:-1] == ["\t" + line + "," for line in expected[:-1]] + ["\t" + expected[-1]]
    assert lines[-1] == ")"
    assert "\tProduce(0): 0 to 9 [usable: 9]," in lines


# -- zookeeper-shell.sh -------------------------------------------------------------------------

def json_lines(lines):
    """The JSON documents among a ZooKeeperMain transcript: its watcher thread prints
    "WatchedEvent state:SyncConnected ..." whenever the session comes up, which may be after the
    answer to the command."""
    return [json.loads(line) for line in lines if line.startswith("{")]


def test_zookeeper_shell_one_command_and_interactive(broker):
    registration = run("zookeeper-shell.sh", broker.zk_connect, "get", "/brokers/ids/0")
    assert registration.returncode == 0, registration.stderr
    out = registration.stdout.splitlines()
    assert out[0] == f"Connecting to {broker.zk_connect}"
    assert json_lines(out)[-1]["port"] == broker.port
    assert registration.stderr == ""  # the client's INFO lines and its exit line stay quiet

    missing = run("zookeeper-shell.sh", broker.zk_connect, "get", "/no/such/node")
    assert missing.returncode == 1
    assert "Node does not exist: /no/such/node" in missing.stderr

    session = run("zookeeper-shell.sh", broker.zk_connect, stdin="ls /brokers/ids\nget /controller\n")
    assert session.returncode == 0, session.stderr
    out = session.stdout.splitlines()
    assert "Welcome to ZooKeeper!" in out and "[0]" in out
    assert json_lines(out)[-1]["brokerid"] == 0

    usage = run("zookeeper-shell.sh")
    assert (usage.returncode, usage.stdout) == (
        1, f"USAGE: {BIN / 'zookeeper-shell.sh'} zookeeper_host:port[/path] [args...]\n")
    tls = run("zookeeper-shell.sh", broker.zk_connect, "-zk-tls-config-file", "zk-tls.properties", "ls", "/")
    assert tls.returncode == 1 and "-zk-tls-config-file is not supported" in tls.stderr


# -- dynamic configs that take effect without a restart -----------------------------------------

@pytest.mark.parametrize("entity", [["--topic", "tools-min-isr"], ["--entity-type", "brokers", "--entity-default"]])
def test_min_insync_replicas_changed_at_runtime(broker, entity):
    from kafka import KafkaProducer
    from kafka.errors import NotEnoughReplicasError

    topic = "tools-min-isr"
    created = topics(broker, "--create", "--topic", topic, "--if-not-exists")
    assert created.returncode == 0, created.stderr
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", retries=0)

    def accepted(value: bytes) -> bool:
        try:
            return producer.send(topic, value).get(timeout=30).offset >= 0
        except NotEnoughReplicasError:
            return False

    try:
        assert accepted(b"before")
        assert configs(broker, *entity, "--alter", "--add-config", "min.insync.replicas=2").returncode == 0
        # one replica in the ISR, two wanted: acks=all is refused once the broker has read the
        # change (it reaches the broker through ZooKeeper's change notification, not at once)
        wait_until(lambda: not accepted(b"refused?"), 30, "min.insync.replicas=2 never took effect")
        assert not accepted(b"refused")
        assert configs(broker, *entity, "--alter", "--delete-config", "min.insync.replicas").returncode == 0
        wait_until(lambda: accepted(b"after"), 30, "the default min.insync.replicas never came back")
    finally:
        producer.close()


def test_a_broker_that_does_not_answer_and_a_partition_without_leader(broker, tmp_path):
    import signal

    # a second broker of the cluster, stopped with SIGSTOP: registered, listed by Metadata, silent
    silent = BrokerProcess(tmp_path / "silent", broker.zk_hosts, broker.chroot, broker_id=1,
                           overrides={"zookeeper.session.timeout.ms": "60000"})
    silent.start()
    props = tmp_path / "admin.properties"
    props.write_text("request.timeout.ms=2000\n")
    try:
        wait_until(lambda: "(id: 1 rack: null) -> (" in run("kafka-broker-api-versions.sh", "--bootstrap-server",
                                                             broker.bootstrap).stdout, 60, "broker 1 is not listed")
        # partition 1 on the second broker alone, offline once it has stopped
        assert topics(broker, "--create", "--topic", "tools-half", "--replica-assignment", "0,1").returncode == 0
        os.kill(silent.process.pid, signal.SIGSTOP)
        try:
            result = run("kafka-broker-api-versions.sh", "--bootstrap-server", broker.bootstrap, "--command-config",
                         str(props))
        finally:
            os.kill(silent.process.pid, signal.SIGCONT)
    finally:
        assert silent.stop() == 0, silent.tail()
    assert (result.returncode, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[0] == f"{broker.bootstrap} (id: 0 rack: null) -> (" and lines[-2] == ")"
    assert lines[-1].startswith(f"{silent.bootstrap} (id: 1 rack: null) -> ERROR: "), lines[-1]
    assert "request timeout" in lines[-1]

    half = get_offsets(broker, "tools-half")
    assert (half.returncode, half.stdout, half.stderr) == (
        0, "tools-half:0:0\n", "Error: partition 1 does not have a leader. Skip getting offsets\n")
