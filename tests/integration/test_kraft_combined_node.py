"""A KRaft cluster of one combined node (``process.roles=broker,controller``), no ZooKeeper
anywhere: started as config/kraft/README.md says, and through ``bin/kafka-quickstart.sh
--kraft``; stock kafka-python clients administer, produce and consume through it."""
from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess

from tests.integration.broker_harness import ROOT, port_open, wait_until
from tests.integration.kraft_harness import UNFENCED, combined_node_config, read_text, run_tool

def _java_processes_naming(path: pathlib.Path) -> list[int]:
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if args and args[0].endswith(b"java") and any(str(path).encode() in a for a in args):
                found.append(int(entry.name))
    return found


def test_a_combined_node_started_as_the_kraft_readme_says_serves_clients(tmp_path):
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
    from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic

    config, port, log_dir = combined_node_config(tmp_path)
    cluster_id = run_tool(str(ROOT / "bin" / "kafka-storage.sh"), "random-uuid").stdout.strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", cluster_id), cluster_id
    formatted = run_tool(str(ROOT / "bin" / "kafka-storage.sh"), "format", "-t", cluster_id, "-c", str(config))
    assert formatted.returncode == 0 and f"Formatting {log_dir}" in formatted.stdout, formatted
    meta = (log_dir / "meta.properties").read_text()
    assert f"cluster.id={cluster_id}" in meta and "node.id=1" in meta and "version=1" in meta

    output = tmp_path / "server.out"
    with open(output, "wb") as out:
        server = subprocess.Popen([str(ROOT / "bin" / "kafka-server-start.sh"), str(config)], cwd=ROOT,
                                  stdout=out, stderr=subprocess.STDOUT,
                                  env=dict(os.environ, LOG_DIR=str(tmp_path / "logs")))
    admin = producer = consumer = None
    try:
        def serving() -> bool:
            assert server.poll() is None, read_text(output)[-3000:]
            return UNFENCED in read_text(output) and port_open(port)

        wait_until(serving, 90, "the combined node did not start")
        assert not _java_processes_naming(config)
        bootstrap = f"127.0.0.1:{port}"
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=20000)
        admin.create_topics([NewTopic("kraft-demo", 3, 1, topic_configs={"retention.ms": "3600000"})])
        assert "kraft-demo" in admin.list_topics()
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        for i in range(60):
            producer.send("kraft-demo", b"v%d" % i, partition=i % 3)
        producer.flush(timeout=30)
        consumer = KafkaConsumer("kraft-demo", bootstrap_servers=bootstrap, group_id="kraft-group",
                                 auto_offset_reset="earliest", consumer_timeout_ms=10000)
        values = sorted(int(r.value[1:]) for r in consumer)
        assert values == list(range(60))
        consumer.commit()
        committed = {tp: consumer.committed(tp) for tp in consumer.assignment()}
        assert sum(committed.values()) == 60, committed
        consumer.close()
        consumer = None

        admin.create_partitions({"kraft-demo": NewPartitions(5)})
        wait_until(lambda: len(admin.describe_topics(["kraft-demo"])[0]["partitions"]) == 5, 30,
                   "the new partitions never showed")
        configs = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "kraft-demo")])
        assert "'retention.ms': {'value': '3600000'" in str(configs)

        admin.delete_topics(["kraft-demo"])
        wait_until(lambda: "kraft-demo" not in admin.list_topics(), 30, "the topic was not deleted")
        wait_until(lambda: not any(p.name.startswith("kraft-demo-") and not p.name.endswith("-delete")
                                   for p in log_dir.iterdir()), 30, "the topic's logs stayed")
    finally:
        for client in (consumer, producer, admin):
            if client is not None:
                client.close()
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=90)
    assert code == 0, read_text(output)[-3000:]
    assert (log_dir / ".kafka_cleanshutdown").exists()
    assert "Traceback" not in read_text(output), read_text(output)[-5000:]


def test_quickstart_kraft_formats_once_and_serves_without_zookeeper(tmp_path):
    from kafka import KafkaConsumer, KafkaProducer

    config, port, log_dir = combined_node_config(tmp_path)
    quickstart = ROOT / "bin" / "kafka-quickstart.sh"
    env = dict(os.environ, LOG_DIR=str(tmp_path / "logs"))

    def run_once(log: pathlib.Path, value: bytes) -> str:
        process = subprocess.Popen(["bash", "-c", f"exec '{quickstart}' --kraft '{config}' > '{log}' 2>&1"],
                                   env=env, start_new_session=True)
        try:
            def serving() -> bool:
                assert process.poll() is None, read_text(log)[-3000:]
                return UNFENCED in read_text(log) and port_open(port)

            wait_until(serving, 90, "the quickstart's node did not start")
            assert not _java_processes_naming(config), "KRaft mode started a JVM"
            producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{port}", acks="all")
            try:
                producer.send("quickstart", value).get(timeout=30)
            finally:
                producer.close()
            # SIGTERM (what a terminal's Ctrl-C does to the script): the node stops cleanly
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=90)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
        return read_text(log)

    first = run_once(tmp_path / "first.log", b"one")
    assert f"Formatting {log_dir}" in first
    assert "zookeeper" not in first.lower().replace("zookeeper.", "")  # no ZooKeeper started or named
    cluster_id = re.search(r"cluster\.id=(\S+)", (log_dir / "meta.properties").read_text()).group(1)
    assert (log_dir / ".kafka_cleanshutdown").exists()

    second = run_once(tmp_path / "second.log", b"two")
    assert "All of the log directories are already formatted." in second
    assert f"cluster.id={cluster_id}" in (log_dir / "meta.properties").read_text()

    # both runs' records are there: the second run served the first's data
    third = subprocess.Popen(["bash", "-c", f"exec '{quickstart}' --kraft '{config}' > '{tmp_path / 'third.log'}' 2>&1"],
                             env=env, start_new_session=True)
    try:
        wait_until(lambda: UNFENCED in read_text(tmp_path / "third.log") and port_open(port), 90,
                   "the quickstart's node did not start a third time")
        consumer = KafkaConsumer("quickstart", bootstrap_servers=f"127.0.0.1:{port}",
                                 auto_offset_reset="earliest", consumer_timeout_ms=10000)
        try:
            assert [r.value for r in consumer] == [b"one", b"two"]
        finally:
            consumer.close()
    finally:
        os.killpg(third.pid, signal.SIGTERM)
        try:
            third.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(third.pid, signal.SIGKILL)
