"""Old consumers against a real broker, served by lazy down-conversion (Fetch v0-v3): librdkafka
speaking the protocol of Kafka 0.9.0 (``api.version.request=false``,
``broker.version.fallback=0.9.0``: Produce v1 and Fetch v1, message format 0) round-trips keyed
records with every codec, and it and kafka-python pinned to 0.10.0 and 0.10.1 (Fetch v2 and v3,
format 1) read what a current (and a transactional) producer wrote; a raw Fetch v3 of several
MB gets every message whole and in order; ``message.downconversion.enable=false`` answers
UNSUPPORTED_VERSION and zstd UNSUPPORTED_COMPRESSION_TYPE; the conversion metrics on the
Prometheus endpoint; and Burrow (Debian's package: Sarama's ListOffsets v0, Fetch v2 of
``__consumer_offsets``) reporting a group's lag.

(librdkafka has no 0.10.0 mode without ApiVersions: a ``broker.version.fallback`` of 0.10 or
more turns ApiVersions back on, and with them the current protocol; hence kafka-python for 0.10.)"""
from __future__ import annotations

import http.client
import json
import pathlib
import shutil
import struct
import subprocess
import time
import uuid

import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_py.core.metrics.prometheus_exporter import parse_exposition
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.clients.common.record.abstract_legacy_record_batch import legacy_batches
from tests.integration.broker_harness import BrokerProcess, RawClient, free_port, unique_chroot, wait_until

confluent_kafka = pytest.importorskip("confluent_kafka")

CODECS = ["none", "gzip", "snappy", "lz4"]
# kafka-python pinned to old brokers: Fetch v2 and v3 (message format 1)
KAFKA_PYTHON_OLD = [(0, 10, 0), (0, 10, 1)]


def _metrics_broker(zookeeper, workdir: pathlib.Path) -> BrokerProcess:
    port = free_port()
    broker = BrokerProcess(workdir, zookeeper.connect_string, unique_chroot(),
                           overrides={"kafka.py.metrics.prometheus.port": str(port),
                                      "kafka.py.metrics.prometheus.host": "127.0.0.1"})
    broker.metrics_port = port
    return broker


@pytest.fixture(scope="module")
def broker(zookeeper, tmp_path_factory):
    b = _metrics_broker(zookeeper, tmp_path_factory.mktemp("down-conversion-broker"))
    b.start()
    yield b
    if b.running:
        assert b.stop() == 0, b.tail()


@pytest.fixture(scope="module")
def admin(broker):
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    yield client
    client.close()


def _topic(admin, prefix: str, partitions: int = 1, configs: dict | None = None) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs or {})])
    return name


OLD_RDKAFKA = {"api.version.request": False, "broker.version.fallback": "0.9.0"}


def _produce(broker, topic: str, records: list[tuple[bytes, bytes]], **config) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5, **config})
    errors: list = []
    for key, value in records:
        producer.produce(topic, value=value, key=key,
                         on_delivery=lambda err, _msg: errors.append(err) if err is not None else None)
    assert producer.flush(60) == 0
    assert errors == []


def _consume(broker, topic: str, expected: int, partitions: int = 1, timeout: float = 60, **config) -> list:
    """Every message of ``topic`` from the beginning, by a consumer group of its own:
    (partition, offset, key, value) in the order received."""
    consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": uuid.uuid4().hex,
                                         "auto.offset.reset": "earliest", "enable.auto.commit": False, **config})
    got = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + timeout
        while len(got) < expected and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            assert message.error() is None, message.error()
            got.append((message.partition(), message.offset(), message.key(), message.value()))
    finally:
        consumer.close()
    return got


def _consume_kafka_python(broker, topic: str, expected: int, api_version: tuple, partitions: int = 1) -> list:
    """What kafka-python pinned to ``api_version`` reads of ``topic`` from the beginning."""
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, api_version=api_version, consumer_timeout_ms=10_000,
                             max_partition_fetch_bytes=4 << 20)
    got = []
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        consumer.seek_to_beginning()
        for message in consumer:
            got.append((message.partition, message.offset, message.key, message.value))
            if len(got) >= expected:
                break
    finally:
        consumer.close()
    return got


def _requests(broker, api: str, version: int) -> float:
    return _value(_scrape(broker.metrics_port), "kafka_network_requestmetrics_requests_total", request=api,
                  version=str(version))


def _keyed(count: int, prefix: str = "") -> list[tuple[bytes, bytes]]:
    return [(f"{prefix}key-{i % 17}".encode(), f"{prefix}value-{i:05d}".encode() + b"x" * (i % 50))
            for i in range(count)]


def _in_order_per_partition(got: list, sent: list[tuple[bytes, bytes]]) -> None:
    """Every record sent arrived once; per partition, offsets 0, 1, 2 ... and the records of a
    key in the order they were sent."""
    assert sorted((k, v) for _p, _o, k, v in got) == sorted(sent)
    by_partition: dict[int, list] = {}
    for partition, offset, key, value in got:
        by_partition.setdefault(partition, []).append((offset, key, value))
    for messages in by_partition.values():
        assert [o for o, _, _ in messages] == list(range(len(messages)))
    sent_by_key: dict[bytes, list[bytes]] = {}
    for key, value in sent:
        sent_by_key.setdefault(key, []).append(value)
    received_by_key: dict[bytes, list[bytes]] = {}
    for _p, _o, key, value in sorted(got, key=lambda m: (m[0], m[1])):
        received_by_key.setdefault(key, []).append(value)
    assert received_by_key == sent_by_key


@pytest.mark.parametrize("codec", CODECS)
def test_librdkafka_on_the_0_9_protocol_round_trips_keyed_records_in_order(broker, admin, codec) -> None:
    """Produce v1 (format 0 message sets, converted up for the log) and Fetch v1 (the log's v2
    batches converted down to format 0), as the broker's request counts show."""
    topic = _topic(admin, f"rdkafka-09-{codec}", partitions=3)
    sent = _keyed(600)
    produce_v1, fetch_v1 = _requests(broker, "Produce", 1), _requests(broker, "Fetch", 1)
    _produce(broker, topic, sent, **OLD_RDKAFKA, **{"compression.codec": codec})
    got = _consume(broker, topic, len(sent), **OLD_RDKAFKA)
    _in_order_per_partition(got, sent)
    assert _requests(broker, "Produce", 1) > produce_v1 and _requests(broker, "Fetch", 1) > fetch_v1
    # and a current consumer reads the same
    _in_order_per_partition(_consume(broker, topic, len(sent)), sent)


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4"])
def test_old_consumers_read_what_a_current_producer_wrote(broker, admin, codec) -> None:
    """v2 batches with headers, written by an idempotent producer (producer ids and sequences
    the old formats cannot hold), read back by both old protocols."""
    topic = _topic(admin, f"current-to-old-{codec}", partitions=2)
    sent = _keyed(500, prefix="n")
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5,
                                         "enable.idempotence": True, "compression.codec": codec})
    for key, value in sent:
        producer.produce(topic, value=value, key=key, headers=[("h", b"dropped by the old formats")])
    assert producer.flush(60) == 0
    _in_order_per_partition(_consume(broker, topic, len(sent), **OLD_RDKAFKA), sent)
    for api_version in KAFKA_PYTHON_OLD:
        _in_order_per_partition(_consume_kafka_python(broker, topic, len(sent), api_version, partitions=2), sent)


def test_old_consumers_see_aborted_transactions_and_no_markers(broker, admin) -> None:
    """A transaction committed, one aborted, one committed: an old consumer has no isolation
    level and reads all three (as from Kafka); the commit and abort markers take offsets that
    no message is delivered at."""
    topic = _topic(admin, "txn-to-old")
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap,
                                         "transactional.id": f"txn-{uuid.uuid4().hex[:8]}"})
    producer.init_transactions(30)
    expected = []
    for round_, commit in enumerate([True, False, True]):
        producer.begin_transaction()
        for i in range(5):
            value = f"r{round_}-{i}".encode()
            producer.produce(topic, value=value, key=b"k")
            expected.append(value)
        producer.flush(30)
        (producer.commit_transaction if commit else producer.abort_transaction)(30)
    old_readers = [_consume(broker, topic, len(expected), **OLD_RDKAFKA)]
    old_readers += [_consume_kafka_python(broker, topic, len(expected), v) for v in KAFKA_PYTHON_OLD]
    for got in old_readers:
        assert [v for *_, v in got] == expected
        # 5 records, a marker, 5 records, a marker, 5 records
        assert [o for _p, o, _k, _v in got] == [*range(0, 5), *range(6, 11), *range(12, 17)]
    # a read_committed current consumer does not see the aborted ones
    committed = _consume(broker, topic, 10, timeout=20, **{"isolation.level": "read_committed"})
    assert [v for *_, v in committed] == expected[:5] + expected[10:]


def test_a_topic_stored_in_format_1_is_sent_as_it_is_to_fetch_v3_and_converted_for_fetch_v1(broker, admin) -> None:
    """message.format.version 0.10.0: the log holds format 1 entries, which Fetch v2-v3 read as
    they are (no conversion counted) and Fetch v0-v1 get rebuilt in format 0."""
    topic = _topic(admin, "format-1", configs={"message.format.version": "0.10.0"})
    sent = _keyed(300, prefix="f1-")
    _produce(broker, topic, sent, **{"compression.codec": "gzip"})
    # the producer's format 2 batches were rebuilt in format 1 before the append
    assert _value(_scrape(broker.metrics_port), "kafka_server_brokertopicmetrics_producemessageconversions_total",
                  topic=topic) == len(sent)
    conversions = "kafka_server_brokertopicmetrics_fetchmessageconversions_total"
    _in_order_per_partition(_consume_kafka_python(broker, topic, len(sent), (0, 10, 1)), sent)
    assert _value(_scrape(broker.metrics_port), conversions, topic=topic) == 0
    _in_order_per_partition(_consume(broker, topic, len(sent), **OLD_RDKAFKA), sent)
    wait_until(lambda: _value(_scrape(broker.metrics_port), conversions, topic=topic) >= len(sent), 30,
               "the conversion to format 0 was not counted")
    _in_order_per_partition(_consume(broker, topic, len(sent)), sent)


def _fetch_v3(port: int, topic: str, offset: int, partition_max_bytes: int) -> tuple[int, bytes]:
    fetch = build_entity(request_schema(ApiKeys.FETCH, 3), {
        "replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 64 << 20, "topics": [
            {"topic": topic, "partitions": [{"partition": 0, "fetch_offset": offset,
                                             "partition_max_bytes": partition_max_bytes}]}]})
    with RawClient(port) as client:
        partition = client.request(ApiKeys.FETCH, 3, fetch).responses[0].partitions[0]
    return partition.error_code, bytes(partition.records or b"")


def _messages(data: bytes) -> tuple[list, bytes]:
    """(offset, key, value) of each whole legacy message (inner ones of a wrapper included), and
    what follows the last whole entry (a partial message or an overflow entry)."""
    out = []
    pos = 0
    while pos + 12 <= len(data):
        offset, length = struct.unpack_from(">qi", data, pos)
        if offset < 0 or pos + 12 + length > len(data):
            break
        for batch in legacy_batches(data[pos:pos + 12 + length]):
            batch.ensure_valid()
            assert batch.magic == 1
            out.extend((r.offset, r.key, r.value) for r in batch.records())
        pos += 12 + length
    return out, data[pos:]


def _produce_large(broker, topic: str, count: int, value_size: int, codec: str = "none") -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20,
                                         "batch.size": 64 * 1024, "compression.codec": codec})
    for i in range(count):
        producer.produce(topic, key=b"%d" % i, value=b"%08d" % i + b"v" * (value_size - 8))
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0


def test_a_fetch_of_several_megabytes_arrives_whole_and_in_order(broker, admin) -> None:
    """8 MB of 64 KiB batches, read with one Fetch v3 of 8 MB: dozens of chunks converted on the
    way out; every whole message is there, in offset order from 0, and what follows the last
    one is a partial message or an overflow entry, never a wrong one. Then an old librdkafka
    consumer reads all of it."""
    topic = _topic(admin, "large-fetch")
    count, value_size = 80_000, 100
    _produce_large(broker, topic, count, value_size)
    error, data = _fetch_v3(broker.port, topic, 0, 8 << 20)
    assert error == Errors.NONE.error_code
    assert len(data) == 8 << 20
    got, tail = _messages(data)
    assert len(got) > 40_000  # about 8 MB of format 1 messages, many 128 KiB chunks
    assert [o for o, _, _ in got] == list(range(len(got)))
    assert all(key == b"%d" % o and value[:8] == b"%08d" % o for o, key, value in got)
    assert len(tail) < 12 + 22 + 8 + value_size or struct.unpack_from(">q", tail)[0] == -1
    # from the middle of a batch: the records before the fetch offset are left out
    error, data = _fetch_v3(broker.port, topic, 12_345, 1 << 20)
    got, _tail = _messages(data)
    assert error == Errors.NONE.error_code and got[0][0] == 12_345
    assert [o for o, _, _ in got] == list(range(12_345, 12_345 + len(got)))

    received = _consume(broker, topic, count, timeout=180, **OLD_RDKAFKA)
    assert [o for _p, o, _k, _v in received] == list(range(count))


def test_downconversion_disabled_and_zstd_are_refused_with_kafkas_error_codes(broker, admin) -> None:
    disabled = _topic(admin, "no-downconversion", configs={"message.downconversion.enable": "false"})
    _produce(broker, disabled, _keyed(10))
    assert _fetch_v3(broker.port, disabled, 0, 1 << 20)[0] == Errors.UNSUPPORTED_VERSION.error_code
    # a current consumer is not converted for and reads on
    assert len(_consume(broker, disabled, 10)) == 10

    zstd = _topic(admin, "zstd-to-old")
    _produce(broker, zstd, _keyed(10), **{"compression.codec": "zstd"})
    assert _fetch_v3(broker.port, zstd, 0, 1 << 20)[0] == Errors.UNSUPPORTED_COMPRESSION_TYPE.error_code


def _scrape(port: int) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        assert response.status == 200
        return parse_exposition(response.read().decode())
    finally:
        conn.close()


def _value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_conversion_metrics_count_what_an_old_consumer_was_sent(zookeeper, tmp_path) -> None:
    """A broker of its own, so that its few Fetch requests are all the histograms hold:
    FetchMessageConversionsPerSec (the topic's and all topics') counts the records converted,
    MessageConversionsTimeMs and TemporaryMemoryBytes of request=Fetch hold the conversion of
    a 2 MB fetch; a current consumer's fetch converts nothing."""
    broker = _metrics_broker(zookeeper, tmp_path)
    broker.start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        try:
            topic = _topic(admin, "conversion-metrics")
            plain = _topic(admin, "no-conversion")
        finally:
            admin.close()
        _produce_large(broker, topic, 20_000, 100)
        _produce(broker, plain, _keyed(50))
        _consume(broker, plain, 50)
        samples = _scrape(broker.metrics_port)
        assert _value(samples, "kafka_server_brokertopicmetrics_fetchmessageconversions_total", topic=plain) == 0
        # produced in the topic's own format and codec: nothing rebuilt on the way in either
        assert _value(samples, "kafka_server_brokertopicmetrics_producemessageconversions_total", topic=plain) == 0
        assert ("kafka_server_brokertopicmetrics_producemessageconversions_total", (("topic", plain),)) in samples

        error, data = _fetch_v3(broker.port, topic, 0, 2 << 20)
        assert error == Errors.NONE.error_code
        sent = len(_messages(data)[0])
        name = "kafka_server_brokertopicmetrics_fetchmessageconversions_total"
        # counted once the answer is written: the broker may still be finishing when the client has it
        wait_until(lambda: _value(_scrape(broker.metrics_port), name, topic=topic) >= sent, 30,
                   "FetchMessageConversionsPerSec did not count the conversion")
        samples = _scrape(broker.metrics_port)
        converted = _value(samples, name, topic=topic)
        # the records of the chunks written: what the client got whole, and the cut one after
        assert sent <= converted < sent + 2_000
        assert _value(samples, name) == converted
        assert _value(samples, "kafka_server_brokertopicmetrics_producemessageconversions_total", topic=topic) == 0
        # the 2 MB conversion is the largest of the few Fetch requests: it is at the top quantile
        assert _value(samples, "kafka_network_requestmetrics_messageconversionstimems", request="Fetch",
                      quantile="0.999") >= 1
        # the stored bytes of the chunks converted: more than half the 2 MB read (format 1 is
        # larger, so the answer ran out before the last stored bytes were converted)
        assert _value(samples, "kafka_network_requestmetrics_temporarymemorybytes", request="Fetch",
                      quantile="0.999") >= 1 << 20
        assert _value(samples, "kafka_network_requestmetrics_messageconversionstimems", request="FetchConsumer",
                      quantile="0.999") >= 1
    finally:
        assert broker.stop() == 0, broker.tail()


# ---------------------------------------------------------------------------------- Burrow

BURROW = shutil.which("Burrow")
GROUP_LAG = 2_400


def _burrow_config(config_dir: pathlib.Path, broker, zookeeper_connect: str, http_port: int) -> None:
    """Burrow with a Sarama client of Kafka 0.10.0: Metadata v0, ListOffsets v0 for the
    partitions' log end offsets, and a consumer of __consumer_offsets on Fetch v2, which reads
    the coordinator's v2 batches converted to message format 1."""
    (config_dir / "burrow.toml").write_text(f"""
[general]
pidfile="{config_dir}/burrow.pid"
access-control-allow-origin="*"

[logging]
filename="{config_dir}/burrow.log"
level="info"

[zookeeper]
servers=["{zookeeper_connect}"]
timeout=6
root-path="/burrow-{uuid.uuid4().hex[:8]}"

[client-profile.old]
client-id="burrow-lagchecker"
kafka-version="0.10.0"

[cluster.local]
class-name="kafka"
servers=["{broker.bootstrap}"]
client-profile="old"
topic-refresh=5
offset-refresh=1

[consumer.local]
class-name="kafka"
cluster="local"
servers=["{broker.bootstrap}"]
client-profile="old"
start-latest=false
offsets-topic="__consumer_offsets"
group-whitelist=""

[httpserver.default]
address="127.0.0.1:{http_port}"

[storage.default]
class-name="inmemory"
workers=4
intervals=10
expire-group=604800
min-distance=1
""")


def _burrow_get(port: int, path: str):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, json.loads(response.read().decode() or "null")
    except (OSError, ValueError):
        return None, None
    finally:
        conn.close()


@pytest.mark.skipif(BURROW is None, reason="Debian's burrow package is not installed (apt-get install burrow)")
def test_burrow_reports_the_lag_of_a_group_2400_records_behind(broker, admin, zookeeper, tmp_path) -> None:
    topic = _topic(admin, "burrow")
    produced = 3_000
    _produce(broker, topic, _keyed(produced))
    group = f"burrow-group-{uuid.uuid4().hex[:8]}"
    consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group,
                                         "enable.auto.commit": False})
    try:
        # committed twice, a while apart: Burrow evaluates a group from the offsets it has seen
        for committed in (produced - GROUP_LAG - 100, produced - GROUP_LAG):
            consumer.commit(offsets=[confluent_kafka.TopicPartition(topic, 0, committed)], asynchronous=False)
    finally:
        consumer.close()

    http_port = free_port()
    _burrow_config(tmp_path, broker, zookeeper.connect_string, http_port)
    process = subprocess.Popen([BURROW, "-config-dir", str(tmp_path)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        seen: dict = {}

        def lag_known() -> bool:
            status, body = _burrow_get(http_port, f"/v3/kafka/local/consumer/{group}/lag")
            seen["last"] = (status, body)
            if status != 200 or not body or body.get("error"):
                return False
            partitions = body["status"].get("partitions") or []
            return bool(partitions) and partitions[0].get("end", {}).get("offset") == produced - GROUP_LAG \
                and body["status"].get("totallag") == GROUP_LAG

        wait_until(lag_known, 120, lambda: f"Burrow's last answer: {seen.get('last')}; log: "
                   f"{(tmp_path / 'burrow.log').read_text(errors='replace')[-3000:] if (tmp_path / 'burrow.log').exists() else ''}",
                   interval=1.0)
        _status, body = seen["last"]
        assert body["status"]["totallag"] == GROUP_LAG
        [partition] = body["status"]["partitions"]
        assert (partition["topic"], partition["partition"], partition["current_lag"]) == (topic, 0, GROUP_LAG)
        # the broker's log end as Burrow read it with ListOffsets v0
        status, offsets = _burrow_get(http_port, f"/v3/kafka/local/topic/{topic}")
        assert status == 200 and offsets["offsets"] == [produced]
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)
