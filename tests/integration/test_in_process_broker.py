"""A broker running in this process, for what only its insides show:

* the hot paths: a produce request's records are written from the request buffer itself
  (offsets assigned in place, no copy), and a fetch response carries the segment's
  FileRecords slice as its own chunk, sent with sendfile, so fetched bytes are never read
  into Python;
* ZooKeeper session expiry: the broker registers again under the new session (a new
  broker epoch) and goes on serving.
"""
from __future__ import annotations

import json
import queue
import socket

import pytest
from kazoo.client import KazooClient

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.network.request_channel import Request, RequestContext, SendResponse
from kafka_py.network.send import MultiRecordsSend
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import decode_response, encode_request, request_schema
from kafka_py.clients.common.record.default_record_batch import DefaultRecordBatch, SimpleRecord, build_batch
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.server.kafka_server import KafkaServer
from tests.integration.broker_harness import free_port, unique_chroot, wait_until

TOPIC = "zero-copy"


class CapturingProcessor:
    """Stands where a network Processor would: receives the responses handlers send."""

    id = 10_000

    def __init__(self) -> None:
        self.responses: queue.Queue = queue.Queue()

    def enqueue_response(self, response) -> None:
        self.responses.put(response)


@pytest.fixture(scope="module")
def server(zookeeper, tmp_path_factory):
    config = KafkaConfig({
        "broker.id": "0", "listeners": f"PLAINTEXT://127.0.0.1:{free_port()}",
        "log.dirs": str(tmp_path_factory.mktemp("zero-copy-logs")),
        "zookeeper.connect": f"{zookeeper.connect_string}{unique_chroot()}",
        "num.network.threads": "1", "num.io.threads": "2", "controlled.shutdown.enable": "false",
    }, do_log=False)
    server = KafkaServer(config)
    server.startup()
    # ready for clients once the controller's first UpdateMetadata has arrived
    wait_until(lambda: server.metadata_cache.has_alive_broker(0), 30, "no metadata from the controller")
    yield server
    server.shutdown()


@pytest.fixture(scope="module")
def processor(server):
    capture = CapturingProcessor()
    server.socket_server.request_channel.add_processor(capture)
    yield capture
    server.socket_server.request_channel.remove_processor(capture.id)


def handle(server, processor, api: ApiKeys, version: int, values: dict, frame_type=bytearray):
    request_body = build_entity(request_schema(api, version), values)
    header = RequestHeader.for_request(api, version, 42, "zero-copy-test")
    frame = frame_type(encode_request(header, request_body)[4:])
    context = RequestContext(header, "127.0.0.1:1-127.0.0.1:2-0", "127.0.0.1")
    request = Request(processor.id, context, 0, memoryview(frame))
    server.data_plane_request_processor.handle(request)
    return frame, processor.responses.get(timeout=30)


def test_produce_assigns_offsets_in_the_request_buffer(server, processor):
    # the topic exists and has a leader before the first produce
    _, response = handle(server, processor, ApiKeys.CREATE_TOPICS, 7, {
        "topics": [{"name": TOPIC, "num_partitions": 1, "replication_factor": 1}], "timeout": 30000})
    [created] = _decode(response.response_send, ApiKeys.CREATE_TOPICS, 7).topics
    assert created.error_code == Errors.NONE.error_code, created
    wait_until(lambda: server.replica_manager.online_partition(TopicPartition(TOPIC, 0)) is not None, 30,
               "topic not created")

    for round_ in range(2):
        batch = build_batch([SimpleRecord(f"k{i}".encode(), f"v{round_}-{i}".encode(), 1_700_000_000_000)
                             for i in range(5)])
        frame, response = handle(server, processor, ApiKeys.PRODUCE, 8, {
            "acks": -1, "timeout": 30000,
            "topic_data": [{"name": TOPIC, "partition_data": [{"index": 0, "records": batch}]}]})
        send = response.response_send
        body = _decode(send, ApiKeys.PRODUCE, 8)
        partition = body.responses[0].partition_responses[0]
        assert partition.error_code == Errors.NONE.error_code
        assert int(partition.base_offset) == round_ * 5
        # The batch in the request frame itself now carries the assigned offset: the log
        # wrote the bytes it received, not a copy.
        # (base offset and leader epoch, bytes 0-16, are rewritten; the rest is unchanged)
        start = bytes(frame).index(batch[16:]) - 16
        written = DefaultRecordBatch(memoryview(frame)[start:start + len(batch)])
        assert written.base_offset == round_ * 5


def test_fetch_response_carries_the_segment_file_region(server, processor):
    _, response = handle(server, processor, ApiKeys.FETCH, 11, {
        "max_wait": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0, "session_id": 0,
        "session_epoch": -1, "topics": [{"topic": TOPIC, "partitions": [
            {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}],
        "forgotten_topics_data": [], "rack_id": ""})
    assert isinstance(response, SendResponse)
    send = response.response_send
    assert isinstance(send, MultiRecordsSend)
    regions = [c for c in send._chunks if isinstance(c, FileRecords)]
    assert len(regions) == 1, send._chunks
    assert not any(isinstance(c, (bytes, bytearray, memoryview)) and len(c) > 1000 for c in send._chunks)

    body = _decode(send, ApiKeys.FETCH, 11)
    partition = body.responses[0].partitions[0]
    assert partition.error_code == Errors.NONE.error_code
    assert int(partition.high_watermark) == 10
    values = [r.value for batch in MemoryRecords(bytes(partition.records)).batches() for r in batch]
    assert values == [f"v{r}-{i}".encode() for r in range(2) for i in range(5)]


def test_session_expiry_registers_the_broker_again(server, processor, zookeeper):
    zk_client = server.zk_client
    old_epoch = server.kafka_controller.broker_epoch
    session_id, password = zk_client.current_zookeeper.client_id
    # A second client on the same session, closed, ends that session for ZooKeeper: the
    # broker's client sees it expire (the standard way to expire a session on purpose).
    intruder = KazooClient(hosts=zookeeper.connect_string, client_id=(session_id, password))
    intruder.start(timeout=10)
    intruder.stop()
    intruder.close()

    wait_until(lambda: server.kafka_controller.broker_epoch > old_epoch, 30, "broker did not register again")
    data, stat = zk_client.current_zookeeper.get("/brokers/ids/0")
    assert stat.czxid == server.kafka_controller.broker_epoch
    assert stat.ephemeralOwner == zk_client.current_zookeeper.client_id[0] != session_id
    assert json.loads(data)["endpoints"] == [f"PLAINTEXT://127.0.0.1:{server.bound_port()}"]
    # elected again, and controller requests with the new epoch are accepted
    wait_until(lambda: server.kafka_controller.is_active, 30, "controller not re-elected")

    batch = build_batch([SimpleRecord(None, b"after-expiry", 1_700_000_000_000)])
    def produced() -> bool:
        _, response = handle(server, processor, ApiKeys.PRODUCE, 8, {
            "acks": -1, "timeout": 30000,
            "topic_data": [{"name": TOPIC, "partition_data": [{"index": 0, "records": batch}]}]})
        partition = _decode(response.response_send, ApiKeys.PRODUCE, 8).responses[0].partition_responses[0]
        return partition.error_code == Errors.NONE.error_code and int(partition.base_offset) == 10

    wait_until(produced, 30, "broker does not serve after the session expiry", interval=0.2)


def _decode(send, api: ApiKeys, version: int):
    """Write the Send to a socket pair the way the Processor does and parse what arrives."""
    left, right = socket.socketpair()
    try:
        right.settimeout(10)
        while not send.completed:  # small responses: the socket buffer takes them whole
            send.write_to(left)
        received = bytearray()
        while len(received) < send.size:
            received += right.recv(send.size - len(received))
    finally:
        left.close()
        right.close()
    _, body = decode_response(bytes(received[4:]), api, version)
    return body
