"""The pytest plugin (kafka_py.testing.pytest_plugin), run the way a user runs it: pytester
starts a separate pytest process on a small test module, which gets the plugin from its
pytest11 entry point (this project is installed in the environment), as any suite would."""
from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

USER_TESTS = '''
import pytest
from kafka import KafkaConsumer, KafkaProducer


def test_bootstrap_reaches_the_cluster(kafka_bootstrap, kafka_topic):
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    producer.send(kafka_topic, b"one").get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(kafka_topic, bootstrap_servers=kafka_bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=20000)
    assert next(consumer).value == b"one"
    consumer.close()


def test_each_test_gets_a_fresh_topic(kafka_cluster, kafka_topic, request):
    assert kafka_topic not in SEEN
    SEEN.add(kafka_topic)
    assert kafka_cluster.brokers[1].metadata([kafka_topic]).topics[kafka_topic].error_code == 0


def test_the_session_shares_one_cluster(kafka_cluster, kafka_broker):
    CLUSTERS.add(id(kafka_cluster))
    assert len(CLUSTERS) == 1
    assert kafka_broker.node_id == 1 and kafka_broker.bootstrap in kafka_cluster.bootstrap_servers


@pytest.mark.kafka_cluster(brokers=2)
def test_a_marked_test_gets_its_own_cluster(kafka_cluster):
    assert id(kafka_cluster) not in CLUSTERS
    assert sorted(kafka_cluster.brokers[1].metadata().brokers) == [1, 2]


def test_a_failure_reports_the_broker_logs(kafka_cluster):
    assert False, "failing on purpose"


SEEN = set()
CLUSTERS = set()
'''


def test_each_fixture_and_the_log_report(pytester: pytest.Pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", timeout=300)
    result.assert_outcomes(passed=4, failed=1)
    text = result.stdout.str()
    # the failed test's report carries the brokers' recent output
    assert "kafka cluster logs" in text
    assert "----- broker-1" in text and "Transitioning from RECOVERY to RUNNING" in text


def test_under_xdist_each_worker_has_its_cluster(pytester: pytest.Pytester):
    """Two workers, six tests: each worker starts one cluster for its tests, on ports of its
    own (reserved across the workers), and every test produces to its own topic there."""
    pytester.makepyfile(test_user='''
import os
import pytest
from kafka import KafkaProducer


@pytest.mark.parametrize("n", range(6))
def test_produce(kafka_cluster, kafka_topic, n):
    producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap_servers)
    producer.send(kafka_topic, os.environ["PYTEST_XDIST_WORKER"].encode()).get(timeout=30)
    producer.close()
    print("CLUSTER", os.environ["PYTEST_XDIST_WORKER"], kafka_cluster.bootstrap_servers, os.getpid())
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--dist", "load", "-rP",
                                           timeout=300)
    result.assert_outcomes(passed=6)
    seen: dict[str, set[str]] = {}
    for line in result.stdout.lines:
        if line.startswith("CLUSTER "):
            _, worker, bootstrap, _pid = line.split()
            seen.setdefault(worker, set()).add(bootstrap)
    assert sorted(seen) == ["gw0", "gw1"], result.stdout.str()
    # one cluster per worker, and the two never share a port
    assert all(len(bootstraps) == 1 for bootstraps in seen.values()), seen
    assert seen["gw0"] != seen["gw1"]


def test_ini_options_choose_the_shared_cluster(pytester: pytest.Pytester):
    pytester.makeini('''
[pytest]
kafka_cluster_scope = module
kafka_mode = kraft
kafka_brokers = 1
kafka_listener = SASL_PLAINTEXT
kafka_overrides =
    num.partitions=3
    auto.create.topics.enable=true
''')
    pytester.makepyfile(test_user='''
from kafka import KafkaProducer


def test_the_overrides_reach_the_brokers(kafka_cluster):
    assert kafka_cluster.listener == "SASL_PLAINTEXT"
    producer = KafkaProducer(**kafka_cluster.client_config())
    producer.send("auto-created", b"x").get(timeout=30)
    producer.close()
    topic = kafka_cluster.brokers[1].metadata(["auto-created"]).topics["auto-created"]
    assert len(topic.partitions) == 3
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=1)
