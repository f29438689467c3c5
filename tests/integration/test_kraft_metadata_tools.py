"""``kafka-dump-log.sh --cluster-metadata-decoder`` and ``kafka-metadata-shell.sh`` over the
metadata log of a real KRaft node: one combined node (``process.roles=broker,controller``,
started as config/kraft/README.md says) is given topics, configs and a deletion by
kafka-python's admin client, stopped, and its ``@metadata-0`` is then read by both tools.
One node for the whole module, so the tests share its log."""
from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import subprocess

import pytest

from tests.integration.broker_harness import ROOT, port_open, wait_until
from tests.integration.kraft_harness import UNFENCED, combined_node_config, read_text, run_tool

TOPIC_ID = re.compile(r"^[A-Za-z0-9_-]{22}$")


@pytest.fixture(scope="module")
def metadata_dir(tmp_path_factory) -> pathlib.Path:
    """The ``@metadata-0`` directory of a stopped combined node that has seen: topics
    ``orders`` (3 partitions, retention.ms) and ``audit`` (compacted), ``orders`` grown to
    4 partitions and its cleanup.policy altered, topic ``scratch`` created and deleted."""
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic

    tmp = tmp_path_factory.mktemp("kraft-metadata-tools")
    config, client_port, log_dir = combined_node_config(tmp)
    cluster_id = run_tool(str(ROOT / "bin" / "kafka-storage.sh"), "random-uuid").stdout.strip()
    formatted = run_tool(str(ROOT / "bin" / "kafka-storage.sh"), "format", "-t", cluster_id, "-c", str(config))
    assert formatted.returncode == 0, formatted

    output = tmp / "server.out"
    with open(output, "wb") as out:
        server = subprocess.Popen([str(ROOT / "bin" / "kafka-server-start.sh"), str(config)], cwd=ROOT,
                                  stdout=out, stderr=subprocess.STDOUT,
                                  env=dict(os.environ, LOG_DIR=str(tmp / "logs")))
    admin = None
    try:
        def serving() -> bool:
            assert server.poll() is None, read_text(output)[-3000:]
            return UNFENCED in read_text(output) and port_open(client_port)

        wait_until(serving, 90, "the combined node did not start")
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{client_port}", request_timeout_ms=20000)
        admin.create_topics([NewTopic("orders", 3, 1, topic_configs={"retention.ms": "3600000"}),
                             NewTopic("audit", 1, 1, topic_configs={"cleanup.policy": "compact"}),
                             NewTopic("scratch", 2, 1)])
        admin.create_partitions({"orders": NewPartitions(4)})
        admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "orders",
                                            configs={"retention.ms": "3600000", "cleanup.policy": "compact"})])
        admin.delete_topics(["scratch"])
        wait_until(lambda: "scratch" not in admin.list_topics(), 30, "the topic was not deleted")
        wait_until(lambda: len(admin.describe_topics(["orders"])[0]["partitions"]) == 4, 30,
                   "the new partition never showed")
    finally:
        if admin is not None:
            admin.close()
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=90)
    assert code == 0, read_text(output)[-3000:]
    directory = log_dir / "@metadata-0"
    assert (directory / "00000000000000000000.log").is_file()
    return directory


def _shell(metadata_dir: pathlib.Path, *command: str) -> str:
    result = run_tool(str(ROOT / "bin" / "kafka-metadata-shell.sh"), "--snapshot", str(metadata_dir), *command)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr  # every record of a real log replays
    return result.stdout


def test_dump_log_decodes_the_metadata_log(metadata_dir):
    segment = metadata_dir / "00000000000000000000.log"
    result = run_tool(str(ROOT / "bin" / "kafka-dump-log.sh"), "--cluster-metadata-decoder", "--files", str(segment))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == [f"Dumping {segment}", "Starting offset: 0"]
    records = [line for line in lines if line.startswith("| ")]
    # the first write of a new leader: its LEADER_CHANGE control record
    leader_changes = [line for line in records if " controlType: LEADER_CHANGE(3)" in line]
    assert leader_changes
    assert ' LeaderChange: {"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}' in leader_changes[0]
    payloads = [json.loads(line.split(" payload: ", 1)[1]) for line in records if " payload: " in line]
    assert len(payloads) + len(leader_changes) == len(records)  # every record decoded
    by_type: dict[str, list[dict]] = {}
    for payload in payloads:
        assert payload["version"] == 0
        by_type.setdefault(payload["type"], []).append(payload["data"])

    (broker,) = by_type["REGISTER_BROKER_RECORD"]
    assert broker["brokerId"] == 1 and broker["endPoints"][0]["name"] == "PLAINTEXT"
    topics = {t["name"]: t["topicId"] for t in by_type["TOPIC_RECORD"]}
    assert set(topics) == {"orders", "audit", "scratch"} and all(TOPIC_ID.match(i) for i in topics.values())
    orders = sorted(p["partitionId"] for p in by_type["PARTITION_RECORD"] if p["topicId"] == topics["orders"])
    assert orders == [0, 1, 2, 3]
    assert {"resourceType": 2, "resourceName": "orders", "name": "retention.ms", "value": "3600000"} \
        in by_type["CONFIG_RECORD"]
    assert {"resourceType": 2, "resourceName": "audit", "name": "cleanup.policy", "value": "compact"} \
        in by_type["CONFIG_RECORD"]
    assert {"resourceType": 2, "resourceName": "orders", "name": "cleanup.policy", "value": "compact"} \
        in by_type["CONFIG_RECORD"]
    assert by_type["REMOVE_TOPIC_RECORD"] == [{"topicId": topics["scratch"]}]
    assert by_type["UNFENCE_BROKER_RECORD"] == [{"id": 1, "epoch": broker["brokerEpoch"]}]
    # the exact line, as Kafka's ClusterMetadataLogMessageParser prints it
    assert any(line.endswith(f' payload: {{"type":"TOPIC_RECORD","version":0,"data":{{"name":"audit",'
                             f'"topicId":"{topics["audit"]}"}}}}') for line in records)


def test_the_shell_lists_and_shows_the_tree(metadata_dir):
    assert _shell(metadata_dir, "ls", "/").split() == [
        "brokers", "configs", "local", "metadataQuorum", "topicIds", "topics"]
    assert _shell(metadata_dir, "ls", "/topics").split() == ["audit", "orders"]
    assert _shell(metadata_dir, "ls", "/topics/orders").split() == ["0", "1", "2", "3", "id", "name"]
    topic_id = _shell(metadata_dir, "cat", "/topics/orders/id").strip()
    assert TOPIC_ID.match(topic_id)
    data = json.loads(_shell(metadata_dir, "cat", "/topics/orders/0/data"))
    assert data["partitionId"] == 0 and data["topicId"] == topic_id and data["replicas"] == [1]
    assert _shell(metadata_dir, "cat", f"/topicIds/{topic_id}/3/data") == \
        _shell(metadata_dir, "cat", "/topics/orders/3/data")
    assert _shell(metadata_dir, "cat", "/configs/topic/orders/cleanup.policy") == "compact\n"
    assert _shell(metadata_dir, "cat", "/configs/topic/audit/cleanup.policy") == "compact\n"


def test_the_shell_finds_and_draws_trees(metadata_dir):
    found = _shell(metadata_dir, "find", "/").splitlines()
    assert found[0] == "/"
    for path in ("/brokers/1/isFenced", "/brokers/1/registration", "/topics/audit/0/data",
                 "/configs/topic/orders/retention.ms", "/metadataQuorum/leader", "/local/version"):
        assert path in found
    assert not any("scratch" in path for path in found)
    tree = _shell(metadata_dir, "tree", "/brokers").splitlines()
    assert tree[0] == "1:"
    assert tree[1:3] == ["  isFenced:", "    true"]  # a node that stopped is fenced at last
    assert tree[3] == "  registration:"
    assert tree[4].startswith("    RegisterBrokerRecord(brokerId=1, incarnationId=")
    assert "endPoints=[BrokerEndpoint(name='PLAINTEXT', host='localhost', port=" in tree[4]


def test_the_shell_reports_bad_commands_and_goes_on(metadata_dir):
    assert _shell(metadata_dir, "ls", "/topics/scratch") == "ls: /topics/scratch: no such file or directory.\n"
    assert _shell(metadata_dir, "cat", "/topics") == "cat: /topics: Is a directory\n"
    assert _shell(metadata_dir, "nope") == "invalid choice: 'nope' (choose from 'cat', 'find', 'ls', 'tree')\n"
    segment = _shell(metadata_dir / "00000000000000000000.log", "ls", "/topics")
    assert segment.split() == ["audit", "orders"]


def test_the_interactive_shell_reads_commands_from_stdin(metadata_dir):
    result = run_tool(str(ROOT / "bin" / "kafka-metadata-shell.sh"), "--snapshot", str(metadata_dir),
                  stdin="pwd\ncd /topics\npwd\nls\ncd orders\npwd\ncat name\ncd /nope\nbogus\nls /x\ncd ..\n"
                        "pwd\nhistory 2\nexit\nls\n")
    assert result.returncode == 0, result.stderr
    head, *answers = result.stdout.split(">> ")
    assert head == "Loading...\nStarting...\n[ Kafka Metadata Shell ]\n"
    assert answers[:14] == [
        "/\n", "", "/topics\n", "audit\norders\n", "", "/topics/orders\n", "orders\n",
        "cd: /nope: no such directory.\n",
        "invalid choice: 'bogus' (choose from 'cat', 'cd', 'exit', 'find', 'help', 'history', 'ls', 'man', "
        "'pwd', 'tree')\n",
        "ls: /x: no such file or directory.\n", "", "/topics\n", "   11  pwd\n   12  history 2\n", ""]
    assert len(answers) == 14  # exit ended it: the ls after it never ran
