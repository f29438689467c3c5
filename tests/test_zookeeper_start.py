"""bin/zookeeper-server-start.sh brings up a real ZooKeeper that kazoo can use."""
import re

from kazoo.client import KazooClient

from tests.zookeeper_harness import four_letter_word


def test_zookeeper_serves_kazoo(zookeeper):
    client = KazooClient(hosts=zookeeper.connect_string, timeout=15)
    client.start(timeout=15)
    try:
        client.create("/kafka-py-test/node", b"hello", makepath=True)
        data, stat = client.get("/kafka-py-test/node")
        assert data == b"hello"
        # Conditional writes on the znode version, as KafkaZkClient will use them.
        client.set("/kafka-py-test/node", b"v2", version=stat.version)
        assert client.get("/kafka-py-test/node")[0] == b"v2"
    finally:
        client.stop()
        client.close()
    assert b"Zookeeper version" in four_letter_word(zookeeper.port)


def test_zookeeper_logs_to_stdout_and_its_log_dir_in_kafkas_format(zookeeper):
    # What a user sees in the terminal (here captured as zookeeper.out) and in $LOG_DIR,
    # through config/log4j.properties: ZooKeeper's own lines, not slf4j's no-operation notice.
    pattern = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] INFO .* \(org\.apache\.zookeeper\.[\w.$]+\)$", re.M)
    # zookeeper.log rolls every hour (zookeeper.log.yyyy-MM-dd-HH): a ZooKeeper started before
    # the hour has its first lines in the rolled file
    logs = sorted((zookeeper.workdir / "logs").glob("zookeeper.log*"))
    assert zookeeper.workdir / "logs" / "zookeeper.log" in logs
    for text in ((zookeeper.workdir / "zookeeper.out").read_text(errors="replace"),
                 "".join(path.read_text(errors="replace") for path in logs)):
        assert "NOP" not in text, text[:2000]
        assert pattern.search(text), text[:2000]
        assert f"binding to port /127.0.0.1:{zookeeper.port}" in text, text[:2000]
