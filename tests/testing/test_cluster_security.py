"""KafkaCluster's SSL and SASL/SCRAM listeners: certificates made for the cluster and a SCRAM
user it creates (through the brokers in KRaft mode, into ZooKeeper in ZooKeeper mode), reached
by kafka-python, confluent-kafka and aiokafka with the settings ``client_config`` gives."""
from __future__ import annotations

import asyncio
import socket
import ssl
import struct
import time

import pytest

from kafka_py.testing import KafkaCluster
from kafka_py.testing.wire import NONE_ERROR, SASL_AUTHENTICATION_FAILED, WireClient


def kafka_python_round_trip(cluster: KafkaCluster, topic: str, value: bytes) -> list[bytes]:
    from kafka import KafkaConsumer, KafkaProducer

    producer = KafkaProducer(acks="all", **cluster.client_config())
    try:
        producer.send(topic, value).get(timeout=30)
    finally:
        producer.close()
    consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=20000,
                             **cluster.client_config())
    try:
        return [next(consumer).value]
    finally:
        consumer.close()


def confluent_round_trip(cluster: KafkaCluster, topic: str, value: bytes) -> list[bytes]:
    from confluent_kafka import Consumer, Producer

    producer = Producer(cluster.client_config("confluent-kafka"))
    errors = []
    producer.produce(topic, value, on_delivery=lambda err, _msg: errors.append(err))
    assert producer.flush(30) == 0 and errors == [None], errors
    consumer = Consumer({**cluster.client_config("confluent-kafka"), "group.id": "confluent",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None:
                assert message.error() is None, message.error()
                return [message.value()]
        return []
    finally:
        consumer.close()


def aiokafka_round_trip(cluster: KafkaCluster, topic: str, value: bytes) -> list[bytes]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def run() -> list[bytes]:
        producer = AIOKafkaProducer(**cluster.client_config("aiokafka"))
        await producer.start()
        try:
            await producer.send_and_wait(topic, value)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, auto_offset_reset="earliest", group_id="aio",
                                    **cluster.client_config("aiokafka"))
        await consumer.start()
        try:
            return [(await asyncio.wait_for(consumer.getone(), 30)).value]
        finally:
            await consumer.stop()

    return asyncio.run(run())


def plaintext_api_versions_answered(port: int) -> bool:
    """Whether a plain ApiVersions v0 request on ``port`` gets an answer."""
    request = struct.pack(">hhih", 18, 0, 1, 2) + b"id"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(struct.pack(">i", len(request)) + request)
        try:
            head = s.recv(4)
        except (ConnectionError, socket.timeout):
            return False
        return len(head) == 4


def test_ssl_listener_with_the_clusters_certificates():
    with KafkaCluster(listener="SSL") as cluster:
        assert kafka_python_round_trip(cluster, cluster.create_topic(), b"over tls") == [b"over tls"]
        assert confluent_round_trip(cluster, cluster.create_topic(), b"rdkafka over tls") == [b"rdkafka over tls"]
        assert aiokafka_round_trip(cluster, cluster.create_topic(), b"aio over tls") == [b"aio over tls"]
        port = cluster.brokers[1].client_port
        # the client port speaks TLS only: a plain request is not answered
        assert not plaintext_api_versions_answered(port)
        # a client that does not trust the cluster's CA refuses the broker's certificate
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with pytest.raises(ssl.SSLCertVerificationError):
                ssl.create_default_context().wrap_socket(raw, server_hostname="127.0.0.1")
        # the certificate names the loopback address and localhost, so hostnames are checked
        with WireClient("localhost", port, ssl_context=cluster.ssl_context()) as client:
            assert client.metadata().brokers[1] == ("127.0.0.1", port)


def test_ssl_client_certificate_for_a_listener_that_requires_one():
    with KafkaCluster(listener="SSL", overrides={"ssl.client.auth": "required"}) as cluster:
        port = cluster.brokers[1].client_port
        # without a certificate: TLS 1.3 reports the refusal after the client's handshake
        with pytest.raises((ssl.SSLError, ConnectionError)):
            with WireClient("127.0.0.1", port, ssl_context=cluster.ssl_context()) as client:
                client.metadata()
        with_certificate = cluster.ssl_context()
        with_certificate.load_cert_chain(cluster.pki.client_cert, cluster.pki.client_key)
        with WireClient("127.0.0.1", port, ssl_context=with_certificate) as client:
            assert client.metadata().brokers[1] == ("127.0.0.1", port)


@pytest.mark.parametrize("mode, listener", [("kraft", "SASL_SSL"), ("zookeeper", "SASL_PLAINTEXT")])
def test_sasl_scram_listener_with_a_created_user(mode, listener):
    with KafkaCluster(mode=mode, listener=listener, sasl_username="alice", sasl_password="alice-secret") as cluster:
        config = cluster.client_config()
        assert config["security_protocol"] == listener and config["sasl_plain_username"] == "alice"
        assert kafka_python_round_trip(cluster, cluster.create_topic(), b"as alice") == [b"as alice"]
        assert confluent_round_trip(cluster, cluster.create_topic(), b"rdkafka as alice") == [b"rdkafka as alice"]
        assert aiokafka_round_trip(cluster, cluster.create_topic(), b"aio as alice") == [b"aio as alice"]

        port = cluster.brokers[1].client_port
        # the user has both SCRAM mechanisms; a wrong password or an unknown user is refused
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            with WireClient("127.0.0.1", port, ssl_context=cluster.ssl_context()) as client:
                assert client.scram_login(mechanism, "alice", "alice-secret") == (NONE_ERROR, None)
        for user, password in (("alice", "wrong"), ("mallory", "alice-secret")):
            with WireClient("127.0.0.1", port, ssl_context=cluster.ssl_context()) as client:
                assert client.scram_login("SCRAM-SHA-256", user, password)[0] == SASL_AUTHENTICATION_FAILED

        # another user, created on the running cluster
        cluster.create_scram_credentials("bob", "bob-secret")
        with WireClient("127.0.0.1", port, ssl_context=cluster.ssl_context()) as client:
            assert client.scram_login("SCRAM-SHA-512", "bob", "bob-secret") == (NONE_ERROR, None)


def test_bad_security_options_are_refused_before_anything_starts():
    with pytest.raises(ValueError, match="listener"):
        KafkaCluster(listener="SASL_GSSAPI")
    with pytest.raises(ValueError, match="sasl_mechanism"):
        KafkaCluster(listener="SASL_SSL", sasl_mechanism="PLAIN")
    with pytest.raises(ValueError, match="sasl_password"):
        KafkaCluster(listener="SASL_SSL", sasl_password="a,b")
    with pytest.raises(ValueError, match="client"):
        KafkaCluster().client_config("java")
