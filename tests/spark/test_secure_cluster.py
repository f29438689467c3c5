"""The sink and the stream's cluster questions over a SASL_PLAINTEXT listener (PLAIN), and the
sink over an SSL listener.

The ``kafka.*`` security settings (librdkafka's names) reach the sink's producer and the
stream's admin client; a wrong password fails the write with the authentication error instead
of losing rows, and so does a broker certificate the client does not trust. Records are read back with kafka-python on the broker's PLAINTEXT listener."""
from __future__ import annotations

import pathlib

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition as KafkaTopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.spark.cluster_offsets import ClusterAuthenticationException, ClusterOffsets
from tests.integration.broker_harness import BrokerProcess, free_port, unique_chroot, wait_until
from tests.spark.test_kafka_sink import consume_all
from tests.security.certs import make_pki
from tests.spark.test_streaming import message_of

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'user_alice="alice-secret";')


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(pathlib.Path(tmp_path_factory.mktemp("pki")))


@pytest.fixture(scope="module")
def sasl_broker(zookeeper, tmp_path_factory, pki):
    port, ssl_port = free_port(), free_port()
    broker = BrokerProcess(tmp_path_factory.mktemp("sasl-broker"), zookeeper.connect_string, unique_chroot())
    broker.ssl_bootstrap = f"127.0.0.1:{ssl_port}"
    broker.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{broker.port},SASL_PLAINTEXT://127.0.0.1:{port},"
                     f"SSL://127.0.0.1:{ssl_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(pki.server_keystore),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(pki.ca_cert),
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "connection.failed.authentication.delay.ms": "50",
        "auto.create.topics.enable": "false",
    })
    broker.write_config()
    broker.start()
    yield broker, f"127.0.0.1:{port}"
    if broker.running:
        broker.stop()


def everything_in(bootstrap: str, topic: str, partitions: int) -> list:
    """Every record the topic holds: read from the start up to each partition's high watermark."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        tps = [KafkaTopicPartition(topic, p) for p in range(partitions)]
        ends = consumer.end_offsets(tps)
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        records: list = []
        wait_until(lambda: (records.extend(r for batch in consumer.poll(timeout_ms=500).values() for r in batch)
                            or all(consumer.position(tp) >= ends[tp] for tp in tps)),
                   60, f"{topic} not read up to {ends}")
        return records
    finally:
        consumer.close()


def sasl_options(bootstrap: str, password: str = "alice-secret") -> dict:
    return {"kafka.bootstrap.servers": bootstrap, "kafka.security.protocol": "SASL_PLAINTEXT",
            "kafka.sasl.mechanism": "PLAIN", "kafka.sasl.username": "alice", "kafka.sasl.password": password}


def test_the_sink_writes_through_sasl_and_a_wrong_password_fails_the_job(spark, sasl_broker):
    broker, sasl_bootstrap = sasl_broker
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([NewTopic("secure-sink", 2, 1)])
    admin.close()
    df = spark.range(1000).selectExpr("cast(id as string) as key", "concat('v-', cast(id as string)) as value")
    writer = df.write.format("kafka-log").option("topic", "secure-sink").mode("append")
    for k, v in sasl_options(sasl_bootstrap).items():
        writer = writer.option(k, v)
    writer.save()
    records = consume_all(broker.bootstrap, "secure-sink", 2, 1000)
    assert sorted(r.value for r in records) == sorted(b"v-%d" % i for i in range(1000))

    bad = df.limit(10).write.format("kafka-log").option("topic", "secure-sink").mode("append")
    # Without waiting for the records to time out (two minutes by default).
    for k, v in sasl_options(sasl_bootstrap, "wrong").items():
        bad = bad.option(k, v)
    with pytest.raises(Exception) as failure:
        bad.save()
    message = message_of(failure.value)
    assert "The producer can't deliver the 10 record(s) this task sent: _AUTHENTICATION" in message
    assert "Authentication failed" in message
    # Nothing was written by the refused job.
    assert len(everything_in(broker.bootstrap, "secure-sink", 2)) == 1000


def test_the_stream_asks_the_cluster_through_sasl(spark, sasl_broker):
    broker, sasl_bootstrap = sasl_broker
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([NewTopic("secure-stream", 1, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
    for i in range(30):
        producer.send("secure-stream", value=b"s-%d" % i, partition=0)
    producer.flush()
    producer.close()
    # The options a stream gives its admin client, without the prefix.
    config = {k[len("kafka."):]: v for k, v in sasl_options(sasl_bootstrap).items()}
    cluster = ClusterOffsets(config, timeout_s=30)
    try:
        state = cluster.fetch([TopicPartition("secure-stream", 0)])[TopicPartition("secure-stream", 0)]
    finally:
        cluster.close()
    assert (state.leader, state.high_watermark) == (broker.broker_id, 30)

    # A wrong password is a configuration error, named, not a silent fall-back to the
    # checkpointed high watermarks.
    refused = ClusterOffsets({k[len("kafka."):]: v for k, v in sasl_options(sasl_bootstrap, "wrong").items()},
                             timeout_s=3)
    with pytest.raises(ClusterAuthenticationException, match="refused the client: _AUTHENTICATION"):
        refused.fetch([TopicPartition("secure-stream", 0)])

    reader = spark.readStream.format("kafka-log").option("subscribe", "secure-stream")
    for k, v in sasl_options(sasl_bootstrap).items():
        reader = reader.option(k, v)
    query = (reader.load(str(broker.log_dir)).writeStream.format("memory").queryName("secure_stream")
             .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(180)
    finally:
        query.stop()
    assert query.exception() is None
    values = sorted(bytes(r["value"]) for r in spark.sql("select value from secure_stream").collect())
    assert values == sorted(b"s-%d" % i for i in range(30))

    # The query with a wrong password fails, naming why.
    wrong = spark.readStream.format("kafka-log").option("subscribe", "secure-stream")
    for k, v in sasl_options(sasl_bootstrap, "wrong").items():
        wrong = wrong.option(k, v)
    query = (wrong.load(str(broker.log_dir)).writeStream.format("memory").queryName("refused_stream")
             .trigger(availableNow=True).start())
    with pytest.raises(Exception) as failure:
        try:
            query.awaitTermination(180)
        finally:
            query.stop()
    assert "refused the client: _AUTHENTICATION" in message_of(failure.value)


def test_the_sink_writes_over_ssl_and_an_untrusted_certificate_fails_the_job(spark, sasl_broker, pki):
    broker, _ = sasl_broker
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([NewTopic("tls-sink", 1, 1)])
    admin.close()
    df = spark.range(200).selectExpr("concat('t-', cast(id as string)) as value")

    def write(ca: pathlib.Path) -> None:
        (df.write.format("kafka-log").option("topic", "tls-sink").mode("append")
         .option("kafka.bootstrap.servers", broker.ssl_bootstrap).option("kafka.security.protocol", "SSL")
         .option("kafka.ssl.ca.location", str(ca)).save())

    write(pki.ca_cert)
    assert sorted(r.value for r in consume_all(broker.bootstrap, "tls-sink", 1, 200)) == \
        sorted(b"t-%d" % i for i in range(200))
    # The client's own certificate is no CA of the broker's: the handshake fails.
    with pytest.raises(Exception) as failure:
        write(pki.client_cert)
    assert "this task sent: _SSL" in message_of(failure.value)
    assert len(everything_in(broker.bootstrap, "tls-sink", 1)) == 200
