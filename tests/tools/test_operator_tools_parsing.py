"""The operator tools' pure parts, without a broker: MirrorMaker's topic pattern and message
handler, the streams resetter's reset plan and internal-topic names, the ZooKeeper
migration's JAAS and KAFKA_OPTS reading, and the verifiable consumer's assignors."""
from __future__ import annotations

import re

import pytest

from kafka_py.core.utils.command_line_utils import CommandError
from kafka_py.core.tools.mirror_maker import (
    BaseConsumerRecord,
    DefaultMirrorMakerMessageHandler,
    ProducerRecord,
    create_object,
    subscription_pattern,
)
from kafka_py.core.tools.streams_resetter import JavaException, matches_internal_topic_format, parse_reset_plan
from kafka_py.tools.verifiable_consumer import assignor_for
from kafka_py.core.admin.zk_security_migrator import jaas_sections, system_properties, zk_digest_login


@pytest.mark.parametrize("whitelist, topic, mirrored", [
    ("orders.*", "orders", True),
    ("orders.*", "orders-eu", True),
    ("orders", "orders-eu", False),  # the whole name must match, as Java's Pattern subscription
    ("a,b", "b", True),  # commas mean "or"
    ("'a, b'", "b", True),  # quotes and spaces from a properties file are dropped
    (".*", "__consumer_offsets", False),  # never the internal topics
    (".*", "__transaction_state", False),
    (".*", "__consumer_offsets-copy", True),
])
def test_subscription_pattern(whitelist, topic, mirrored):
    # kafka-python matches the pattern with re.match
    assert (re.compile(subscription_pattern(whitelist)).match(topic) is not None) is mirrored


def test_invalid_whitelist():
    with pytest.raises(CommandError, match="is an invalid regex"):
        subscription_pattern("orders[")


def test_default_handler_keeps_the_record():
    record = BaseConsumerRecord("t", 3, 42, 1700000000000, 0, b"k", b"v", [("h", b"1")])
    assert DefaultMirrorMakerMessageHandler().handle(record) == [
        ProducerRecord("t", None, 1700000000000, b"k", b"v", [("h", b"1")])]
    no_time = BaseConsumerRecord("t", 0, 0, -1, 0, None, None, [])
    assert DefaultMirrorMakerMessageHandler().handle(no_time)[0].timestamp is None


def test_create_object_by_class_path():
    handler = create_object("tests.tools.mirror_maker_handlers.RenameTopic", "copy-")
    assert handler.prefix == "copy-"
    with pytest.raises(CommandError, match="Unable to load class"):
        create_object("tests.tools.mirror_maker_handlers.NoSuchHandler", None)
    with pytest.raises(CommandError, match="package.module.Class"):
        create_object("RenameTopic", None)


def test_reset_plan():
    assert parse_reset_plan("t,0,5\nt,1,7\n") == {("t", 0): 5, ("t", 1): 7}
    with pytest.raises(JavaException, match="It is empty"):
        parse_reset_plan("")
    with pytest.raises(JavaException, match="TOPIC,PARTITION,OFFSET"):
        parse_reset_plan("t,0\n")
    with pytest.raises(JavaException) as e:
        parse_reset_plan("t,zero,5")
    assert str(e.value).startswith("java.lang.NumberFormatException: ")


@pytest.mark.parametrize("topic, internal", [
    ("app-KSTREAM-AGGREGATE-STATE-STORE-0000000001-changelog", True),
    ("app-KSTREAM-AGGREGATE-STATE-STORE-0000000001-repartition", True),
    ("app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic", True),
    ("app-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000012-topic", True),
    ("app-store-subscription-registration-topic", True),
    ("app-output", False),
    ("app-changelog-archive", False),
])
def test_internal_topic_names(topic, internal):
    assert matches_internal_topic_format(topic) is internal


def test_jaas_file_sections(tmp_path):
    jaas = tmp_path / "jaas.conf"
    jaas.write_text("/* brokers */\nKafkaServer {\n  org.apache.kafka.common.security.plain.PlainLoginModule "
                    "required username=\"admin\" password=\"a\";\n};\n// ZooKeeper\nClient {\n"
                    "  org.apache.zookeeper.server.auth.DigestLoginModule required\n  username=\"zk\"\n"
                    "  password=\"zk-secret\";\n};\n")
    assert set(jaas_sections(jaas.read_text())) == {"KafkaServer", "Client"}
    assert zk_digest_login(str(jaas), "Client") == ("zk", "zk-secret")
    assert zk_digest_login(str(jaas), "ZkClient") is None
    assert zk_digest_login(str(tmp_path / "missing.conf"), "Client") is None


def test_system_properties_from_kafka_opts():
    props = system_properties("-Xmx1G -Djava.security.auth.login.config=/etc/jaas.conf "
                              "-Dzookeeper.sasl.clientconfig=ZkClient -verbose")
    assert props == {"java.security.auth.login.config": "/etc/jaas.conf", "zookeeper.sasl.clientconfig": "ZkClient"}


def test_assignors_by_kafka_class_name():
    assert assignor_for("org.apache.kafka.clients.consumer.RangeAssignor").name == "range"
    assert assignor_for("RoundRobinAssignor").name == "roundrobin"
    assert assignor_for("org.apache.kafka.clients.consumer.CooperativeStickyAssignor").name == "cooperative-sticky"
    with pytest.raises(CommandError, match="cannot be found"):
        assignor_for("com.example.MyAssignor")
