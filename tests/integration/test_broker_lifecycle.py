"""Starting and stopping a real broker process: registration, cluster id, meta.properties,
configuration errors, and the ApiVersions / Metadata answers of a fresh broker."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from kafka import KafkaAdminClient

from kafka_py.clients.common.protocol.api_keys import IMPLEMENTED_APIS, ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.clients.common.utils import properties
from tests.integration.broker_harness import ROOT, RawClient, wait_until


def test_registration_names_the_bound_port_and_metadata_is_consistent(broker_factory):
    broker = broker_factory(overrides={"listeners": "PLAINTEXT://127.0.0.1:0"})
    broker.start(wait=False)
    wait_until(lambda: broker.registration() is not None, 60, f"not registered:\n{broker.tail()}")
    registration = broker.registration()
    port = registration["port"]
    assert port != 0
    assert registration["endpoints"] == [f"PLAINTEXT://127.0.0.1:{port}"]
    assert registration["host"] == "127.0.0.1"
    assert registration["version"] == 5
    assert registration["listener_security_protocol_map"]["PLAINTEXT"] == "PLAINTEXT"
    broker.port = port
    broker.wait_started()

    zk = broker.zk()
    try:
        cluster_id = __import__("json").loads(zk.get("/cluster/id")[0])["id"]
        assert zk.exists("/controller")
    finally:
        zk.stop()
        zk.close()
    meta = properties.load_file(broker.log_dir / "meta.properties")
    assert meta == {"version": "0", "broker.id": "0", "cluster.id": cluster_id}

    with RawClient(port) as client:
        versions = client.request(ApiKeys.API_VERSIONS, 3, request_schema(ApiKeys.API_VERSIONS, 3)(
            client_software_name="kafka-py-test", client_software_version="1.0"))
        assert versions.error_code == Errors.NONE.error_code
        assert {int(k.api_key) for k in versions.api_keys} == {a.id for a in IMPLEMENTED_APIS}
        metadata = client.request(ApiKeys.METADATA, 9, request_schema(ApiKeys.METADATA, 9)(
            topics=None, allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
            include_topic_authorized_operations=False))
    assert metadata.cluster_id == cluster_id
    assert int(metadata.controller_id) == 0
    assert [(int(b.node_id), b.host, int(b.port)) for b in metadata.brokers] == [(0, "127.0.0.1", port)]
    assert "[KafkaServer id=0] started" in broker.output()

    assert broker.stop() == 0
    # A clean shutdown leaves the marker that lets the next start skip log recovery.
    assert (broker.log_dir / ".kafka_cleanshutdown").exists()
    assert "[KafkaServer id=0] shut down completed" in broker.output()


def test_generated_broker_id_is_kept_across_restarts(broker_factory):
    broker = broker_factory(broker_id=1001, overrides={"broker.id": "-1"})
    broker.start()
    # /brokers/seqid's first value plus reserved.broker.max.id (1000), as Kafka generates it
    assert broker.registration()["port"] == broker.port
    assert properties.load_file(broker.log_dir / "meta.properties")["broker.id"] == "1001"
    assert broker.stop() == 0
    broker.start()
    assert broker.registration() is not None
    assert broker.stop() == 0


def test_refuses_to_join_another_cluster(broker_factory):
    first = broker_factory()
    first.start()
    assert first.stop() == 0
    # The same data directory pointed at another cluster (a fresh chroot) must not start.
    other = broker_factory()
    other.log_dir = first.log_dir
    other.write_config()
    other.start(wait=False)
    code = other.process.wait(timeout=60)
    other.process = None
    assert code == 1
    assert "doesn't match stored clusterId" in other.output()
    assert other.registration() is None


def test_invalid_config_exits_with_one_line_naming_the_key(tmp_path):
    config = tmp_path / "server.properties"
    config.write_text(f"zookeeper.connect=127.0.0.1:1\nlog.dirs={tmp_path / 'logs'}\nnum.io.threads=many\n")
    result = subprocess.run([sys.executable, "-m", "kafka_py.core.kafka", str(config)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "num.io.threads" in lines[0] and "many" in lines[0]

    result = subprocess.run([sys.executable, "-m", "kafka_py.core.kafka", str(config), "--override",
                             "num.io.threads=4", "--override", "socket.request.max.bytes=-3"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "socket.request.max.bytes" in result.stderr


def test_admin_client_sees_the_fresh_broker(broker):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        assert admin.list_topics() == []
    finally:
        admin.close()


def _thread_cpu_lists(pid: int) -> set[str]:
    """Cpus_allowed_list of every thread of the process."""
    lists = set()
    for status in pathlib.Path(f"/proc/{pid}/task").glob("*/status"):
        for line in status.read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                lists.add(line.split(":", 1)[1].strip())
    return lists


def test_broker_threads_run_where_the_launcher_does(broker_factory):
    # the broker does not pin itself to CPUs: every thread, the page cache prefaulter's
    # included, may run on every CPU its launcher may use
    broker = broker_factory().start()
    assert _thread_cpu_lists(broker.process.pid) == _thread_cpu_lists(os.getpid())
    assert "Running on CPU(s)" not in broker.output()


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to pin to one of them")
def test_broker_threads_are_pinned_to_the_cpu_asked_for(broker_factory):
    chosen = max(os.sched_getaffinity(0))
    broker = broker_factory(env={"KAFKA_PY_CPU_AFFINITY": str(chosen)}).start()
    # every thread, the network and request handler pools included, inherited the CPU the
    # launcher chose before starting any of them
    affinities = []
    for task in pathlib.Path(f"/proc/{broker.process.pid}/task").iterdir():
        try:
            affinities.append(frozenset(os.sched_getaffinity(int(task.name))))
        except ProcessLookupError:
            pass  # a thread that ended meanwhile
    assert len(affinities) > 3
    assert set(affinities) == {frozenset({chosen})}
    assert f"Running on CPU(s) {chosen} of" in broker.output()


def _thread_policies(pid: int) -> set[int]:
    """The scheduling policy of every thread of the process."""
    return {os.sched_getscheduler(int(task.name)) for task in pathlib.Path(f"/proc/{pid}/task").iterdir()}


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux scheduling policies")
def test_broker_threads_run_under_sched_batch_when_asked(broker_factory):
    if os.sched_getscheduler(0) != os.SCHED_OTHER:
        pytest.skip("the tests run under a policy the broker would keep")
    batch = broker_factory(env={"KAFKA_PY_SCHED_POLICY": "batch"}).start()
    # every thread, the network and request handler pools included, inherited it
    assert _thread_policies(batch.process.pid) == {os.SCHED_BATCH}
    assert "Scheduling policy SCHED_BATCH" in batch.output()

    # a tuning the user turns on: unset, the policy is left alone
    for value in ("", "none"):
        untouched = broker_factory(env={"KAFKA_PY_SCHED_POLICY": value}).start()
        assert _thread_policies(untouched.process.pid) == {os.SCHED_OTHER}


@pytest.mark.parametrize("variable, value, problem", [
    ("KAFKA_PY_CPU_AFFINITY", "fast", "not a CPU number"),
    ("KAFKA_PY_SCHED_POLICY", "fifo", "is not one of"),
])
def test_bad_launcher_setting_stops_startup_naming_it(tmp_path, variable, value, problem):
    config = tmp_path / "server.properties"
    config.write_text(f"zookeeper.connect=127.0.0.1:1\nlog.dirs={tmp_path / 'logs'}\n")
    result = subprocess.run([sys.executable, "-m", "kafka_py.core.kafka", str(config)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, **{variable: value}))
    assert result.returncode == 1
    assert f"Invalid {variable}" in result.stderr and problem in result.stderr
    assert not (tmp_path / "logs").exists()


def _tgkill(pid: int, tid: int, sig: int) -> None:
    """Signal one thread of another process (what the kernel does when it picks a thread
    other than the main one for a process-directed signal)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    sys_tgkill = 234  # x86-64
    if libc.syscall(sys_tgkill, pid, tid, sig) != 0:
        raise OSError(ctypes.get_errno(), "tgkill")


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the tgkill syscall number is x86-64's")
def test_sigterm_taken_by_a_thread_other_than_the_main_one_still_stops_the_broker(broker_factory):
    import signal

    broker = broker_factory()
    broker.start()
    pid = broker.process.pid
    others = sorted(int(t.name) for t in pathlib.Path(f"/proc/{pid}/task").iterdir() if int(t.name) != pid)
    assert others
    _tgkill(pid, others[len(others) // 2], signal.SIGTERM)
    assert broker.process.wait(timeout=60) == 0
    out = broker.output()
    assert "Received SIGTERM; shutting down" in out and "shut down completed" in out


def test_kill_minus_3_prints_every_threads_stack_and_the_broker_serves_on(broker_factory):
    import signal

    broker = broker_factory()
    broker.start()
    broker.process.send_signal(signal.SIGQUIT)
    wait_until(lambda: broker.output().count("(most recent call first)") >= 2, 30,
               f"no thread dump:\n{broker.tail()}")
    out = broker.output()
    # the main thread waiting to be stopped, and the request handlers by their Kafka names
    assert "stop_requested.wait" in out, out[-3000:]
    assert '"data-plane-kafka-request-handler-0" daemon Thread 0x' in out
    assert broker.process.poll() is None, f"the broker ended after the dump:\n{broker.tail()}"
    with RawClient(broker.port) as client:
        versions = client.request(ApiKeys.API_VERSIONS, 3, request_schema(ApiKeys.API_VERSIONS, 3)(
            client_software_name="kafka-py-test", client_software_version="1.0"))
    assert versions.error_code == Errors.NONE.error_code
    assert broker.stop() == 0


def test_kill_minus_3_again_and_again_under_produce_load_loses_neither_the_broker_nor_a_record(broker_factory):
    """A thread dump must be safe while every thread is busy: one taken from a C signal handler
    walking the other threads' frames (faulthandler's) crashed the broker within a few dozen."""
    import signal

    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    broker = broker_factory()
    broker.start()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks=1, linger_ms=1)
    futures = []
    try:
        for i in range(100):
            for _ in range(50):
                futures.append(producer.send("dumped-under-load", str(len(futures)).encode()))
            dumps = broker.output().count("Full thread dump: ")
            broker.process.send_signal(signal.SIGQUIT)
            wait_until(lambda: broker.output().count("Full thread dump: ") > dumps
                       or broker.process.poll() is not None, 30, f"no thread dump {i + 1}:\n{broker.tail()}")
            assert broker.process.poll() is None, f"the broker died at dump {i + 1}:\n{broker.tail()}"
        producer.flush(60)
        offsets = [f.get(timeout=60).offset for f in futures]
    finally:
        producer.close(5)
    assert sorted(offsets) == list(range(len(futures)))
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, consumer_timeout_ms=10000)
    try:
        tp = TopicPartition("dumped-under-load", 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        values = []
        while len(values) < len(futures):
            batch = consumer.poll(timeout_ms=10000, max_records=5000)
            assert batch, f"only {len(values)} of {len(futures)} records read back"
            values.extend(int(r.value) for r in batch[tp])
    finally:
        consumer.close()
    assert values == list(range(len(futures)))
    assert broker.stop() == 0
