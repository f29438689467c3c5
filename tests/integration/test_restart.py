"""A broker restarted in the middle of a test, cleanly (SIGTERM) and by kill -9: every
acknowledged record is still there afterwards and new records continue the offsets."""
from __future__ import annotations

import threading

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic


def create_topic(broker, topic: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


def read_partition(broker, tp: TopicPartition) -> list:
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap)
    try:
        end = consumer.end_offsets([tp])[tp]
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        records = []
        while len(records) < end:
            batch = consumer.poll(timeout_ms=20000)
            if not batch:
                break
            records.extend(batch.get(tp, []))
        return records
    finally:
        consumer.close()


# log.preallocate (as config/server.properties ships it): active segments are created at
# full size, zeros after the data, and the page cache prefaulter reads ahead in them.
SEGMENT_BYTES = 8 * 1024 * 1024
PREALLOCATION = pytest.mark.parametrize("preallocate", [False, True], ids=["plain", "preallocated"])


def broker_for(broker_factory, preallocate: bool):
    return broker_factory(overrides={"log.preallocate": str(preallocate).lower(),
                                     "log.segment.bytes": str(SEGMENT_BYTES)})


def segment_sizes(broker, topic: str) -> list[int]:
    return [p.stat().st_size for p in broker.log_dir.glob(f"{topic}-*/*.log")]


def produce(broker, topic: str, values: list[bytes], partition: int = 0) -> list[int]:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    try:
        futures = [producer.send(topic, value=v, partition=partition) for v in values]
        producer.flush()
        return [f.get(timeout=30).offset for f in futures]
    finally:
        producer.close()


@PREALLOCATION
def test_clean_restart_keeps_records_and_offsets_continue(broker_factory, preallocate):
    broker = broker_for(broker_factory, preallocate)
    broker.start()
    create_topic(broker, "durable", 2)
    first = [f"a-{i}".encode() for i in range(300)]
    assert produce(broker, "durable", first) == list(range(300))
    assert produce(broker, "durable", [b"p1"], partition=1) == [0]
    assert (segment_sizes(broker, "durable") == [SEGMENT_BYTES] * 2) == preallocate

    assert broker.stop() == 0
    # a clean shutdown trims preallocated segments to their data
    assert all(0 < size < SEGMENT_BYTES for size in segment_sizes(broker, "durable"))
    assert (broker.log_dir / ".kafka_cleanshutdown").exists()
    broker.start()
    # The marker is consumed at startup: a crash from now on must recover.
    assert not (broker.log_dir / ".kafka_cleanshutdown").exists()

    tp = TopicPartition("durable", 0)
    assert [r.value for r in read_partition(broker, tp)] == first
    assert produce(broker, "durable", [b"after-restart"]) == [300]
    assert [r.value for r in read_partition(broker, TopicPartition("durable", 1))] == [b"p1"]
    assert broker.stop() == 0


@PREALLOCATION
def test_kill_9_mid_stream_keeps_every_acknowledged_record(broker_factory, preallocate):
    broker = broker_for(broker_factory, preallocate)
    broker.start()
    create_topic(broker, "crashy", 1)
    tp = TopicPartition("crashy", 0)
    acknowledged: dict[int, bytes] = {}
    lock = threading.Lock()
    stop = threading.Event()
    enough = threading.Event()

    def keep_producing() -> None:
        # Short timeouts: once the broker is killed, what is still in flight fails quickly, so
        # the producer closes cleanly.
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=5, retries=0,
                                 delivery_timeout_ms=3000, request_timeout_ms=2000, max_block_ms=2000)
        i = 0
        try:
            while not stop.is_set():
                value = f"v-{i}".encode()

                def on_ack(metadata, value=value) -> None:
                    with lock:
                        acknowledged[metadata.offset] = value
                        if len(acknowledged) >= 2000:
                            enough.set()

                producer.send("crashy", value=value).add_callback(on_ack)
                i += 1
                if i % 100 == 0:
                    producer.flush(timeout=10)
        except Exception:  # noqa: BLE001 - the broker is gone; sends fail from here on
            pass
        finally:
            producer.close(timeout=20)

    thread = threading.Thread(target=keep_producing)
    thread.start()
    assert enough.wait(60), "producer made no progress"
    broker.kill()  # mid-stream: no flush, no checkpoints, no clean-shutdown marker
    stop.set()
    thread.join(60)
    assert not (broker.log_dir / ".kafka_cleanshutdown").exists()
    # a preallocated active segment is left at full size, zeros after the data: recovery
    # must stop at them
    assert (SEGMENT_BYTES in segment_sizes(broker, "crashy")) == preallocate

    broker.restart()
    records = read_partition(broker, tp)
    stored = {r.offset: r.value for r in records}
    with lock:
        missing = {o: v for o, v in acknowledged.items() if stored.get(o) != v}
    assert not missing, f"{len(missing)} acknowledged records lost, e.g. {list(missing.items())[:3]}"
    # offsets are dense and new records continue after the recovered end
    assert [r.offset for r in records] == list(range(len(records)))
    assert produce(broker, "crashy", [b"after-crash"]) == [len(records)]
    assert broker.stop() == 0
