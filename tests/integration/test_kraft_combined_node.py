"""A KRaft cluster of one combined node (``process.roles=broker,controller``), no ZooKeeper
anywhere: started as config/kraft/README.md says, and through ``bin/kafka-quickstart.sh
--kraft``; stock kafka-python clients administer, produce and consume through it."""
from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess

from tests.integration.broker_harness import ROOT, free_port, port_open, wait_until

UNFENCED = "Transitioning from RECOVERY to RUNNING"


def _combined_config(tmp_path: pathlib.Path) -> tuple[pathlib.Path, int, pathlib.Path]:
    """config/kraft/server.properties with free ports and a log dir under ``tmp_path``."""
    client_port, controller_port = free_port(), free_port()
    log_dir = tmp_path / "kraft-combined-logs"
    text = (ROOT / "config" / "kraft" / "server.properties").read_text()
    text = text.replace("/tmp/kraft-combined-logs", str(log_dir))
    text = re.sub(r"\b9092\b", str(client_port), text)
    text = re.sub(r"\b9093\b", str(controller_port), text)
    config = tmp_path / "server.properties"
    config.write_text(text)
    return config, client_port, log_dir


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), cwd=ROOT, capture_output=True, text=True, timeout=120)


def _read(path: pathlib.Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


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

    config, port, log_dir = _combined_config(tmp_path)
    cluster_id = _run(str(ROOT / "bin" / "kafka-storage.sh"), "random-uuid").stdout.strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", cluster_id), cluster_id
    formatted = _run(str(ROOT / "bin" / "kafka-storage.sh"), "format", "-t", cluster_id, "-c", str(config))
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
            assert server.poll() is None, _read(output)[-3000:]
            return UNFENCED in _read(output) and port_open(port)

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
    assert code == 0, _read(output)[-3000:]
    assert (log_dir / ".kafka_cleanshutdown").exists()
    assert "Traceback" not in _read(output), _read(output)[-5000:]


def test_quickstart_kraft_formats_once_and_serves_without_zookeeper(tmp_path):
    from kafka import KafkaConsumer, KafkaProducer

    config, port, log_dir = _combined_config(tmp_path)
    quickstart = ROOT / "bin" / "kafka-quickstart.sh"
    env = dict(os.environ, LOG_DIR=str(tmp_path / "logs"))

    def run_once(log: pathlib.Path, value: bytes) -> str:
        process = subprocess.Popen(["bash", "-c", f"exec '{quickstart}' --kraft '{config}' > '{log}' 2>&1"],
                                   env=env, start_new_session=True)
        try:
            def serving() -> bool:
                assert process.poll() is None, _read(log)[-3000:]
                return UNFENCED in _read(log) and port_open(port)

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
        return _read(log)

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
        wait_until(lambda: UNFENCED in _read(tmp_path / "third.log") and port_open(port), 90,
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
