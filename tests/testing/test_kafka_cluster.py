"""KafkaCluster, the context manager of kafka_py.testing: real brokers reached by the three
Python clients users have, fault injection, and nothing left behind, also when the test
process is killed -9."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import types

import pytest

from kafka_py.testing import KafkaCluster
from kafka_py.testing.cluster import _LauncherProcess, wait_until


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill 0; /proc says whether it is one
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        # gone between the two looks: /proc answers ESRCH to a read of a process reaped
        # after its file was opened
        return False


def port_bindable(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture(scope="module")
def cluster():
    with KafkaCluster(brokers=1) as c:
        yield c


def test_kafka_python_round_trip(cluster):
    from kafka import KafkaConsumer, KafkaProducer

    topic = cluster.create_topic(partitions=2)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    for i in range(10):
        producer.send(topic, f"m{i}".encode(), partition=i % 2)
    producer.flush(timeout=30)
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=cluster.bootstrap_servers, auto_offset_reset="earliest",
                             group_id="g", consumer_timeout_ms=15000)
    values = set()
    for message in consumer:
        values.add(message.value)
        if len(values) == 10:
            break
    consumer.close()
    assert values == {f"m{i}".encode() for i in range(10)}


def test_confluent_kafka_round_trip(cluster):
    from confluent_kafka import Consumer, Producer

    topic = cluster.create_topic()
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    delivered = []
    producer.produce(topic, b"from librdkafka", on_delivery=lambda err, msg: delivered.append(err))
    assert producer.flush(30) == 0
    assert delivered == [None]
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "c",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        message = None
        deadline = time.monotonic() + 30
        while message is None and time.monotonic() < deadline:
            message = consumer.poll(1.0)
        assert message is not None and message.error() is None
        assert message.value() == b"from librdkafka"
    finally:
        consumer.close()


def test_aiokafka_round_trip(cluster):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    topic = cluster.create_topic()

    async def round_trip() -> bytes:
        producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
        await producer.start()
        try:
            await producer.send_and_wait(topic, b"from asyncio")
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=cluster.bootstrap_servers,
                                    auto_offset_reset="earliest", group_id="a")
        await consumer.start()
        try:
            message = await asyncio.wait_for(consumer.getone(), 30)
            return message.value
        finally:
            await consumer.stop()

    assert asyncio.run(round_trip()) == b"from asyncio"


def test_topics_are_created_in_sync_and_deleted(cluster):
    topic = cluster.create_topic(partitions=3, config={"retention.ms": 60000})
    info = cluster.brokers[1].metadata([topic]).topics[topic]
    assert sorted(p.partition for p in info.partitions) == [0, 1, 2]
    assert all(p.leader == 1 and p.isr == [1] for p in info.partitions)
    cluster.delete_topic(topic)
    assert cluster.brokers[1].metadata([topic]).topics[topic].error_code == 3  # UNKNOWN_TOPIC_OR_PARTITION


def test_fault_injection_on_three_brokers():
    from kafka import KafkaProducer

    with KafkaCluster(brokers=3) as cluster:
        topic = cluster.create_topic(partitions=1, replication_factor=3)
        leader = cluster.brokers[1].metadata([topic]).topics[topic].partitions[0].leader
        victim = next(b for b in (1, 2, 3) if b != leader)

        assert cluster.kill(victim) == -signal.SIGKILL
        cluster.wait_for_isr(topic, isr_size=2)
        producer = KafkaProducer(bootstrap_servers=cluster.brokers[leader].bootstrap, acks="all")
        producer.send(topic, b"with a replica down").get(timeout=30)

        cluster.start(victim)
        cluster.wait_for_isr(topic)  # all three again
        isr = cluster.brokers[leader].metadata([topic]).topics[topic].partitions[0].isr
        assert sorted(isr) == [1, 2, 3]

        # a clean stop exits 0; the broker comes back on the same ports and data
        assert cluster.stop(victim) == 0
        cluster.start(victim)

        # a paused broker accepts connections (the kernel does) but answers nothing
        cluster.pause(victim)
        with socket.create_connection(("127.0.0.1", cluster.brokers[victim].client_port), timeout=1) as s:
            s.sendall(b"\x00\x00\x00\x0c\x00\x12\x00\x00\x00\x00\x00\x01\x00\x02id")  # ApiVersions v0
            with pytest.raises(socket.timeout):
                s.recv(4)
        cluster.resume(victim)
        assert victim in cluster.brokers[victim].metadata().brokers
        producer.send(topic, b"after the faults").get(timeout=30)
        producer.close()
        assert "Transitioning from RECOVERY to RUNNING" in cluster.logs()


def test_zookeeper_mode_runs_its_own_zookeeper():
    from kafka import KafkaProducer

    with KafkaCluster(brokers=1, mode="zookeeper") as cluster:
        zk_pid = cluster.zookeeper.pid
        assert pid_alive(zk_pid)
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1)
        producer.send("zk-mode", b"x").get(timeout=30)
        producer.close()
        assert "[KafkaServer id=1] started" in cluster.logs()
    assert not pid_alive(zk_pid)


def test_exit_leaves_no_process_port_or_directory():
    with KafkaCluster(brokers=1) as cluster:
        pids = [b.pid for b in cluster.brokers.values()]
        ports = [b.client_port for b in cluster.brokers.values()] + [b.port("controller")
                                                                      for b in cluster.brokers.values()]
        workdir = cluster.workdir
        assert all(pid_alive(pid) for pid in pids) and workdir.is_dir()
    assert not any(pid_alive(pid) for pid in pids)
    assert all(port_bindable(port) for port in ports)
    assert not workdir.exists()


OWNER = '''
import json, sys, time
from kafka_py.testing import KafkaCluster
cluster = KafkaCluster(brokers=1, mode=sys.argv[1]).__enter__()
from kafka_py.testing.cluster import _LauncherProcess
pids = [b.pid for b in cluster.brokers.values()] + [_LauncherProcess.get().process.pid]
if cluster.zookeeper is not None:
    pids.append(cluster.zookeeper.pid)
print(json.dumps([pids, str(cluster.workdir)]), flush=True)
time.sleep(600)
'''


@pytest.mark.parametrize("mode", ["kraft", "zookeeper"])
def test_processes_die_with_a_killed_test_process(mode):
    """The test process killed -9 (no atexit, no teardown): its brokers, ZooKeeper and
    launcher still go (the launcher sees its stdin end; its children get PR_SET_PDEATHSIG),
    and so does the cluster's directory."""
    owner = subprocess.Popen([sys.executable, "-c", OWNER, mode], stdout=subprocess.PIPE, text=True)
    try:
        line = owner.stdout.readline()
        assert line, "the owner process did not start its cluster"
        pids, workdir = json.loads(line)
        assert all(pid_alive(pid) for pid in pids) and os.path.isdir(workdir)
    finally:
        owner.kill()
        owner.wait()
        owner.stdout.close()
    wait_until(lambda: not any(pid_alive(pid) for pid in pids), 30,
               lambda: f"still alive: {[p for p in pids if pid_alive(p)]}")
    # the launcher removes the directories of the clusters it served before it exits
    wait_until(lambda: not os.path.exists(workdir), 30, f"{workdir} left behind")


TIED_OWNER = '''
import subprocess, sys, threading
from kafka_py.testing.launcher import dies_with_this_process
tied = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], preexec_fn=dies_with_this_process())
from_thread = []
threading.Thread(target=lambda: from_thread.append(dies_with_this_process())).start()
while not from_thread:
    threading.Event().wait(0.01)
print(tied.pid, from_thread[0] is None, flush=True)
threading.Event().wait(600)
'''


def test_a_child_tied_with_dies_with_this_process_goes_with_a_killed_parent():
    """The test harnesses' own broker processes (tests/integration/broker_harness.py) are tied
    this way to the test process that started them."""
    owner = subprocess.Popen([sys.executable, "-c", TIED_OWNER], stdout=subprocess.PIPE, text=True)
    try:
        line = owner.stdout.readline()
        assert line, "the owner process did not start its child"
        pid, untied_from_thread = line.split()
        # from another thread than the main one nothing is tied (the kernel would tie the
        # child to that thread's life, not the process's)
        assert untied_from_thread == "True"
        assert pid_alive(int(pid))
    finally:
        owner.kill()
        owner.wait()
        owner.stdout.close()
    wait_until(lambda: not pid_alive(int(pid)), 30, f"child {pid} outlived its killed parent")


def test_a_reused_pid_does_not_inherit_an_earlier_childs_exit():
    """The launcher's messages in the order it sends them (a child started, reaped, and a later
    child given the same pid, as happens once the system's pids wrap): the later child is not
    taken for exited, and its own exit is recorded. The reader is the client's own, fed through
    a real pipe."""
    read_fd, write_fd = os.pipe()
    launcher = _LauncherProcess.__new__(_LauncherProcess)
    launcher.exits, launcher.started = {}, {}
    launcher._cond, launcher.ready = threading.Condition(), threading.Event()
    with os.fdopen(read_fd, "rb") as stdout, os.fdopen(write_fd, "wb") as feed:
        launcher.process = types.SimpleNamespace(stdout=stdout)
        reader = threading.Thread(target=launcher._read, daemon=True)
        reader.start()

        def send(message: dict) -> None:
            feed.write((json.dumps(message) + "\n").encode())
            feed.flush()

        send({"started": 4242, "tag": "t1"})
        send({"exit": 4242, "code": 0})
        wait_until(lambda: launcher.exit_code(4242) == 0, 10, "the first child's exit")
        send({"started": 4242, "tag": "t2"})
        wait_until(lambda: "t2" in launcher.started, 10, "the second child's start")
        assert launcher.exit_code(4242) is None
        send({"exit": 4242, "code": 3})
        wait_until(lambda: launcher.exit_code(4242) == 3, 10, "the second child's exit")
    reader.join(10)
    assert not reader.is_alive()
