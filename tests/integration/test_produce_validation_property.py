"""One bad producer must not poison a partition.

Produce requests are built from arbitrary bytes and from valid batches that were then
damaged (codec bits, timestamp type, control and transactional flags, record count,
last offset delta, length, truncation, payload bytes, the records inside a compressed
payload), mostly with the CRC recomputed so that only the validator's record walk can
tell. They go to a real broker over a raw socket. Afterwards:

* every refused batch left the log end offset where it was;
* every accepted batch is read back, record for record, by kafka-python's consumer and
  by librdkafka's (confluent-kafka), from the start of the partition, with no error.

KAFKA_PY_POISON_EXAMPLES sets how many requests hypothesis tries (default 300).
"""
from __future__ import annotations

import os
import struct
import time

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.record.compression import CompressionType, compress
from kafka_py.clients.common.record.default_record_batch import (
    DefaultRecordBatch,
    SimpleRecord,
    assemble_batch,
    build_batch,
    write_record,
)
from tests.integration.broker_harness import RawClient
from tests.integration.test_bad_input import partition_response, produce_request

confluent_kafka = pytest.importorskip("confluent_kafka")

TOPIC = "poison"
EXAMPLES = int(os.environ.get("KAFKA_PY_POISON_EXAMPLES", "300"))
NOW = int(time.time() * 1000)
CODECS = list(CompressionType)

_records = st.lists(
    st.tuples(st.one_of(st.none(), st.binary(max_size=12)),
              st.one_of(st.none(), st.binary(max_size=60)),
              st.lists(st.tuples(st.text(max_size=4), st.one_of(st.none(), st.binary(max_size=6))), max_size=2),
              st.integers(-5, 50)),
    min_size=1, max_size=12)

_MUTATIONS = ["codec", "timestamp_type", "control", "transactional", "count", "last_offset_delta", "length",
              "truncate", "extend", "payload_byte", "inner_byte", "inner_count", "none"]


def _recrc(data: bytearray) -> None:
    if len(data) >= 61:
        struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))


@st.composite
def damaged_batches(draw) -> bytes:
    records = draw(_records)
    codec = draw(st.sampled_from(CODECS))
    base_ts = NOW - 1000
    simple = [SimpleRecord(k, v, timestamp=base_ts + d, headers=tuple(h)) for k, v, h, d in records]
    mutation = draw(st.sampled_from(_MUTATIONS))
    if mutation in ("inner_byte", "inner_count"):
        # the records themselves damaged, then compressed properly
        body = bytearray()
        for i, (k, v, h, d) in enumerate(records):
            write_record(body, i, d, k, v, tuple(h))
        count = len(records)
        if mutation == "inner_byte" and body:
            body[draw(st.integers(0, len(body) - 1))] ^= draw(st.integers(1, 255))
        else:
            count = draw(st.integers(0, count + 3))
        return assemble_batch(bytes(body), base_offset=0, last_offset_delta=max(count - 1, 0),
                              record_count=count, base_timestamp=base_ts,
                              max_timestamp=base_ts + max(d for *_, d in records), compression=codec)
    data = bytearray(build_batch(simple, compression=codec))
    if mutation == "codec":
        data[22] = (data[22] & 0xF8) | draw(st.integers(0, 7))
    elif mutation == "timestamp_type":
        data[22] ^= 0x08
    elif mutation == "control":
        data[22] ^= 0x20
    elif mutation == "transactional":
        data[22] ^= 0x10
    elif mutation == "count":
        struct.pack_into(">i", data, 57, draw(st.integers(-2, len(records) + 3)))
    elif mutation == "last_offset_delta":
        struct.pack_into(">i", data, 23, draw(st.integers(-2, len(records) + 3)))
    elif mutation == "length":
        struct.pack_into(">i", data, 8, struct.unpack_from(">i", data, 8)[0] + draw(st.integers(-8, 8)))
    elif mutation == "truncate":
        del data[len(data) - draw(st.integers(1, min(20, len(data) - 1))):]
        if draw(st.booleans()):
            struct.pack_into(">i", data, 8, len(data) - 12)
    elif mutation == "extend":
        data += draw(st.binary(min_size=1, max_size=20))
        if draw(st.booleans()):
            struct.pack_into(">i", data, 8, len(data) - 12)
    elif mutation == "payload_byte" and len(data) > 61:
        data[draw(st.integers(61, len(data) - 1))] ^= draw(st.integers(1, 255))
    if mutation != "none" and draw(st.integers(0, 9)) < 9:
        _recrc(data)
    return bytes(data)


@st.composite
def arbitrary_batches(draw) -> bytes:
    """Bytes with a plausible magic-2 header (or none at all) and a matching CRC."""
    data = bytearray(draw(st.binary(min_size=0, max_size=160)))
    if len(data) >= 61 and draw(st.booleans()):
        struct.pack_into(">qiib", data, 0, 0, len(data) - 12, -1, 2)
        struct.pack_into(">h", data, 21, draw(st.integers(0, 4)))
        _recrc(data)
    return bytes(data)


def _leo(consumer: KafkaConsumer, tp: TopicPartition) -> int:
    return consumer.end_offsets([tp])[tp]


@pytest.fixture(scope="module")
def poison_topic(broker):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
    finally:
        admin.close()
    return TOPIC


def _read_with_kafka_python(broker, tp: TopicPartition, end: int) -> dict[int, tuple]:
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False,
                             consumer_timeout_ms=10_000)
    try:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        out: dict[int, tuple] = {}
        deadline = time.monotonic() + 60
        while len(out) < end and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=1000, max_records=10_000).values():
                for r in batch:
                    out[r.offset] = (r.key, r.value, [(k, v) for k, v in r.headers])
        return out
    finally:
        consumer.close()


def _read_with_librdkafka(broker, end: int) -> dict[int, tuple]:
    consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "poison-reader",
                                         "enable.auto.commit": False, "enable.partition.eof": True})
    try:
        consumer.assign([confluent_kafka.TopicPartition(TOPIC, 0, 0)])
        out: dict[int, tuple] = {}
        errors = []
        deadline = time.monotonic() + 60
        while len(out) < end and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() != confluent_kafka.KafkaError._PARTITION_EOF:
                    errors.append(str(msg.error()))
                continue
            out[msg.offset()] = (msg.key(), msg.value(), [(k, v) for k, v in (msg.headers() or [])])
        assert not errors, errors
        return out
    finally:
        consumer.close()


def test_no_batch_poisons_the_partition(broker, poison_topic):
    tp = TopicPartition(TOPIC, 0)
    expected: dict[int, tuple] = {}
    outcomes = {"accepted": 0, "refused": 0}
    probe = KafkaConsumer(bootstrap_servers=broker.bootstrap)
    client = RawClient(broker.port)
    try:
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(st.one_of(damaged_batches(), damaged_batches(), arbitrary_batches()))
        def send_one(records: bytes) -> None:
            nonlocal client
            before = _leo(probe, tp)
            try:
                response = partition_response(
                    client.request(ApiKeys.PRODUCE, 8, produce_request(records, topic=TOPIC)))
                error = response.error_code
            except (ConnectionError, OSError, struct.error):
                # Kafka closes the connection for some malformed requests; that is an answer too.
                client.close()
                client = RawClient(broker.port)
                error = -1
            after = _leo(probe, tp)
            if error != Errors.NONE.error_code:
                outcomes["refused"] += 1
                assert after == before, f"a refused batch moved the log end offset {before} -> {after}"
                return
            outcomes["accepted"] += 1
            batch = DefaultRecordBatch(records)
            assert after == before + batch.record_count
            for i, r in enumerate(batch.records()):
                expected[before + i] = (r.key, r.value, [(k, v) for k, v in r.headers])

        send_one()
    finally:
        client.close()
        probe.close()
    probe = KafkaConsumer(bootstrap_servers=broker.bootstrap)
    try:
        end = _leo(probe, tp)
    finally:
        probe.close()
    assert sorted(expected) == list(range(end)), "accepted batches must account for every offset"
    assert outcomes["refused"] > 0 and outcomes["accepted"] > 0, outcomes
    assert _read_with_kafka_python(broker, tp, end) == expected
    # confluent-kafka hands header keys over as C strings: a key is cut at its first NUL.
    assert _read_with_librdkafka(broker, end) == {
        o: (k, v, [(hk.split("\x00")[0], hv) for hk, hv in h]) for o, (k, v, h) in expected.items()}
