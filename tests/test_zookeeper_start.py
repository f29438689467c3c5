"""bin/zookeeper-server-start.sh brings up a real ZooKeeper that kazoo can use."""
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
