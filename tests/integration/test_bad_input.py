"""Bad input on raw sockets against a real broker: garbage, oversized and truncated frames,
unknown APIs and versions, a produce with a corrupt CRC, unknown topics, and requests this
broker cannot serve yet. Each gets Kafka's error code or a closed connection; other clients
carry on, the broker keeps running and no log is damaged."""
from __future__ import annotations

import json
import socket
import struct

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.protocol.entities import build_entity
from tests.integration.broker_harness import RawClient, wait_until

TOPIC = "guarded"
SOCKET_REQUEST_MAX_BYTES = 104857600  # the broker default


def req(api: ApiKeys, version: int, **values):
    """A request of ``api``/``version`` from field values (nested entities as dicts)."""
    cls = request_schema(api, version)
    unknown = set(values) - set(cls.__dataclass_fields__)
    assert not unknown, f"{cls.__name__} v{version} has no fields {unknown}"
    return build_entity(cls, values)


def produce_request(records: bytes, topic: str = TOPIC, partition: int = 0, acks: int = -1,
                    transactional_id: str | None = None):
    return req(ApiKeys.PRODUCE, 8, transactional_id=transactional_id, acks=acks, timeout=30000,
               topic_data=[{"name": topic, "partition_data": [{"index": partition, "records": records}]}])


def partition_response(response):
    [topic] = response.responses
    [partition] = topic.partition_responses
    return partition


@pytest.fixture(scope="module", autouse=True)
def guarded_topic(broker):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    try:
        for i in range(10):
            producer.send(TOPIC, value=f"good-{i}".encode())
        producer.flush()
    finally:
        producer.close()


@pytest.fixture(autouse=True)
def broker_stays_healthy(broker):
    """After every test: the broker runs, serves a new client, and its log is intact."""
    yield
    assert broker.running, broker.tail()
    with RawClient(broker.port) as client:
        response = client.request(ApiKeys.API_VERSIONS, 3, req(ApiKeys.API_VERSIONS, 3,
                                                               client_software_name="after",
                                                               client_software_version="1"))
        assert response.error_code == Errors.NONE.error_code
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap)
    tp = TopicPartition(TOPIC, 0)
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]
        values = []
        while len(values) < end:
            batch = consumer.poll(timeout_ms=10000)
            assert batch, "log unreadable"
            values.extend(r.value for r in batch[tp])
    finally:
        consumer.close()
    assert values[:10] == [f"good-{i}".encode() for i in range(10)]


def api_versions_ok(broker) -> bool:
    with RawClient(broker.port) as client:
        response = client.request(ApiKeys.API_VERSIONS, 0, req(ApiKeys.API_VERSIONS, 0))
        return response.error_code == Errors.NONE.error_code


def test_garbage_bytes_close_only_that_connection(broker):
    with RawClient(broker.port, timeout=10) as bystander, RawClient(broker.port, timeout=10) as bad:
        bad.send_bytes(struct.pack(">i", 12) + b"\x7f\xff" + b"\xde\xad\xbe\xef" * 2 + b"\x00\x01")
        assert bad.closed_by_broker()
        # a connection opened before the garbage still works
        response = bystander.request(ApiKeys.API_VERSIONS, 0, req(ApiKeys.API_VERSIONS, 0))
        assert response.error_code == Errors.NONE.error_code


@pytest.mark.parametrize("size", [SOCKET_REQUEST_MAX_BYTES + 1, 2**31 - 1, -1, 0])
def test_size_prefix_out_of_range_closes_the_connection(broker, size):
    with RawClient(broker.port, timeout=10) as bad:
        bad.send_bytes(struct.pack(">i", size) + b"\x00" * 16)
        assert bad.closed_by_broker()
    assert api_versions_ok(broker)


def test_truncated_frames(broker):
    # the size says 100 bytes, 10 arrive, then the client stops sending
    with RawClient(broker.port, timeout=10) as bad:
        bad.send_bytes(struct.pack(">i", 100) + b"\x00\x03\x00\x09" + b"\x00" * 6)
        bad.sock.shutdown(socket.SHUT_WR)
        assert bad.closed_by_broker()
    # a whole frame whose body stops half-way through a Metadata v9 request
    header_and_body = b"\x00\x03\x00\x09\x00\x00\x00\x07\x00\x04test\x00" + b"\x05\x07ab"
    with RawClient(broker.port, timeout=10) as bad:
        bad.send_bytes(struct.pack(">i", len(header_and_body)) + header_and_body)
        assert bad.closed_by_broker()
    assert api_versions_ok(broker)


def test_unknown_api_key_and_unsupported_version(broker):
    with RawClient(broker.port, timeout=10) as bad:
        # api key 999, version 0, correlation id 1, no client id
        bad.send_bytes(struct.pack(">ihhih", 10, 999, 0, 1, -1))
        assert bad.closed_by_broker()
    with RawClient(broker.port, timeout=10) as bad:
        # a well-formed header (v2: flexible versions end it with tagged fields) of a version
        # that does not exist
        bad.send_bytes(struct.pack(">ihhihb", 11, ApiKeys.METADATA.id, 99, 1, -1, 0))
        assert bad.closed_by_broker()
    # an API this broker does not serve at all (DescribeProducers)
    with RawClient(broker.port, timeout=10) as bad:
        bad.send_bytes(struct.pack(">ihhihb", 11, ApiKeys.DESCRIBE_PRODUCERS.id, 0, 1, -1, 0))
        assert bad.closed_by_broker()
    # ApiVersions of an unknown version is answered (KIP-511) with the versions it supports
    with RawClient(broker.port, timeout=10) as client:
        # (a flexible version: request header v2, whose tagged fields end the header)
        client.send_bytes(struct.pack(">ihhihb", 11, ApiKeys.API_VERSIONS.id, 99, 7, -1, 0))
        from kafka_py.clients.common.protocol.messages import decode_response

        header, response = decode_response(client.receive_frame(), ApiKeys.API_VERSIONS, 0)
        assert header.correlation_id == 7
        assert response.error_code == Errors.UNSUPPORTED_VERSION.error_code
        [entry] = response.api_keys
        assert (int(entry.api_key), int(entry.min_version), int(entry.max_version)) == (18, 0, 3)


def test_produce_with_corrupt_crc_is_refused_and_log_undamaged(broker):
    batch = bytearray(build_batch([SimpleRecord(b"k", b"corrupt-me", 1_700_000_000_000)]))
    batch[-3] ^= 0xFF  # inside the CRC-covered records
    with RawClient(broker.port) as client:
        before = _end_offset(client)
        response = client.request(ApiKeys.PRODUCE, 8, produce_request(bytes(batch)))
        assert partition_response(response).error_code == Errors.CORRUPT_MESSAGE.error_code
        assert _end_offset(client) == before
        # the same connection can go on producing good data, at the next offset
        good = build_batch([SimpleRecord(None, b"fine", 1_700_000_000_000)])
        response = client.request(ApiKeys.PRODUCE, 8, produce_request(good))
        assert partition_response(response).error_code == Errors.NONE.error_code
        assert int(partition_response(response).base_offset) == before


def test_produce_with_garbage_records_or_two_batches(broker):
    batch = build_batch([SimpleRecord(None, b"x", 1_700_000_000_000)])
    with RawClient(broker.port) as client:
        before = _end_offset(client)
        for records, error in ((b"\x00" * 7, Errors.INVALID_RECORD),
                               (batch + batch, Errors.INVALID_RECORD),
                               (batch[:40], Errors.INVALID_RECORD)):
            response = client.request(ApiKeys.PRODUCE, 8, produce_request(records))
            assert partition_response(response).error_code in (error.error_code,
                                                               Errors.CORRUPT_MESSAGE.error_code)
        assert _end_offset(client) == before


def test_unknown_topic_everywhere(broker):
    with RawClient(broker.port) as client:
        batch = build_batch([SimpleRecord(None, b"x", 1_700_000_000_000)])
        response = client.request(ApiKeys.PRODUCE, 8, produce_request(batch, topic="no-such-topic"))
        assert partition_response(response).error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.error_code

        response = client.request(ApiKeys.FETCH, 11, req(
            ApiKeys.FETCH, 11, max_wait=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0, session_id=0,
            session_epoch=-1, topics=[{"topic": "no-such-topic", "partitions": [
                {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}],
            forgotten_topics_data=[], rack_id=""))
        [topic] = response.responses
        assert topic.partitions[0].error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.error_code

        response = client.request(ApiKeys.LIST_OFFSETS, 5, req(
            ApiKeys.LIST_OFFSETS, 5, replica_id=-1, isolation_level=0,
            topics=[{"name": "no-such-topic", "partitions": [{"partition_index": 0, "timestamp": -1}]}]))
        assert response.topics[0].partitions[0].error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.error_code

        response = client.request(ApiKeys.METADATA, 9, req(
            ApiKeys.METADATA, 9, topics=[{"name": "no-such-topic"}, {"name": "bad/name"}],
            allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
            include_topic_authorized_operations=False))
        errors = {t.name: t.error_code for t in response.topics}
        assert errors == {"no-such-topic": Errors.UNKNOWN_TOPIC_OR_PARTITION.error_code,
                          "bad/name": Errors.INVALID_TOPIC_EXCEPTION.error_code}


def test_idempotent_produce_acknowledges_duplicates_and_rejects_gaps(broker):
    with RawClient(broker.port) as client:
        init = client.request(ApiKeys.INIT_PRODUCER_ID, 4, req(
            ApiKeys.INIT_PRODUCER_ID, 4, transactional_id=None, transaction_timeout=60000))
        assert init.error_code == Errors.NONE.error_code
        producer_id, epoch = int(init.producer_id), int(init.producer_epoch)
        assert producer_id >= 0 and epoch == 0

        def batch(sequence: int) -> bytes:
            return build_batch([SimpleRecord(None, f"idem-{sequence}".encode(), 1_700_000_000_000)],
                               producer_id=producer_id, producer_epoch=epoch, base_sequence=sequence)

        first = partition_response(client.request(ApiKeys.PRODUCE, 8, produce_request(batch(0))))
        assert first.error_code == Errors.NONE.error_code
        end = _end_offset(client)
        # a retry of the same batch: acknowledged with the original offset, not appended again
        retry = partition_response(client.request(ApiKeys.PRODUCE, 8, produce_request(batch(0))))
        assert retry.error_code == Errors.NONE.error_code
        assert int(retry.base_offset) == int(first.base_offset)
        assert _end_offset(client) == end
        gap = partition_response(client.request(ApiKeys.PRODUCE, 8, produce_request(batch(5))))
        assert gap.error_code == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.error_code
        assert _end_offset(client) == end


def test_requests_for_later_features_answer_errors(broker):
    with RawClient(broker.port) as client:
        # (transactions' bad input: tests/integration/test_transactions.py)
        # an incremental fetch names a session this broker never created
        response = client.request(ApiKeys.FETCH, 11, req(
            ApiKeys.FETCH, 11, max_wait=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0, session_id=123,
            session_epoch=4, topics=[], forgotten_topics_data=[], rack_id=""))
        assert response.error_code == Errors.FETCH_SESSION_ID_NOT_FOUND.error_code


def test_describe_cluster(broker):
    with RawClient(broker.port) as client:
        response = client.request(ApiKeys.DESCRIBE_CLUSTER, 0, req(
            ApiKeys.DESCRIBE_CLUSTER, 0, include_cluster_authorized_operations=False))
    assert response.error_code == Errors.NONE.error_code
    assert int(response.controller_id) == 0
    assert [(int(b.broker_id), b.host, int(b.port)) for b in response.brokers] == [(0, "127.0.0.1", broker.port)]
    zk = broker.zk()
    try:
        assert response.cluster_id == json.loads(zk.get("/cluster/id")[0])["id"]
    finally:
        zk.stop()
        zk.close()


def _end_offset(client: RawClient) -> int:
    response = client.request(ApiKeys.LIST_OFFSETS, 5, req(
        ApiKeys.LIST_OFFSETS, 5, replica_id=-1, isolation_level=0,
        topics=[{"name": TOPIC, "partitions": [{"partition_index": 0, "timestamp": -1}]}]))
    partition = response.topics[0].partitions[0]
    assert partition.error_code == Errors.NONE.error_code
    return int(partition.offset)


def test_acl_apis_without_an_authorizer_answer_security_disabled(broker):
    import sys

    create = request_schema(ApiKeys.CREATE_ACLS, 2)
    creation = sys.modules[create.__module__].AclCreation(
        resource_type=2, resource_name="t", resource_pattern_type=3, principal="User:a", host="*", operation=3,
        permission_type=3)
    describe = request_schema(ApiKeys.DESCRIBE_ACLS, 2)
    delete = request_schema(ApiKeys.DELETE_ACLS, 2)
    delete_filter = sys.modules[delete.__module__].DeleteAclsFilter(
        resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1, principal_filter=None,
        host_filter=None, operation=1, permission_type=1)
    disabled = Errors.SECURITY_DISABLED.error_code
    with RawClient(broker.port) as client:
        created = client.request(ApiKeys.CREATE_ACLS, 2, create(creations=(creation, creation)))
        assert [int(r.error_code) for r in created.results] == [disabled, disabled]
        described = client.request(ApiKeys.DESCRIBE_ACLS, 2, describe(
            resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1, principal_filter=None,
            host_filter=None, operation=1, permission_type=1))
        assert (int(described.error_code), described.error_message) == (
            disabled, "No Authorizer is configured on the broker")
        deleted = client.request(ApiKeys.DELETE_ACLS, 2, delete(filters=(delete_filter,)))
        assert [int(r.error_code) for r in deleted.filter_results] == [disabled]


def test_a_request_failing_as_a_whole_gets_its_error_response_on_an_open_connection(broker):
    """A DescribeClientQuotas whose filter the admin manager refuses fails as a whole: it is
    answered with the request's error response (the error at the top level, entries null), as
    Kafka's handleError answers, and the same connection serves the requests after it."""

    def describe(*components):
        return req(ApiKeys.DESCRIBE_CLIENT_QUOTAS, 1, strict=False, components=[
            {"entity_type": t, "match_type": m, "match": n} for t, m, n in components])

    with RawClient(broker.port, timeout=10) as client:
        duplicate = client.request(ApiKeys.DESCRIBE_CLIENT_QUOTAS, 1, describe(("user", 0, "a"), ("user", 1, None)))
        assert (duplicate.error_code, duplicate.error_message, duplicate.entries) == (
            Errors.INVALID_REQUEST.error_code, "Duplicate user filter component entity type", None)
        custom = client.request(ApiKeys.DESCRIBE_CLIENT_QUOTAS, 0, req(
            ApiKeys.DESCRIBE_CLIENT_QUOTAS, 0, strict=True,
            components=[{"entity_type": "group", "match_type": 2, "match": None}]))
        assert (custom.error_code, custom.error_message, custom.entries) == (
            Errors.UNSUPPORTED_VERSION.error_code, "Custom entity type 'group' not supported", None)
        described = client.request(ApiKeys.DESCRIBE_CLIENT_QUOTAS, 1, describe(("user", 2, None)))
        assert described.error_code == Errors.NONE.error_code
        response = client.request(ApiKeys.API_VERSIONS, 0, req(ApiKeys.API_VERSIONS, 0))
        assert response.error_code == Errors.NONE.error_code


# ---------------------------------------------------------------------------------------------
# Input that once reached an uncaught exception: each gets Kafka's error code, the broker logs
# no traceback (and no ERROR) for it, and nothing is appended.

class BrokerOutput:
    """The broker's output from now on, to check what one test's requests made it log."""

    def __init__(self, broker) -> None:
        self.broker = broker
        self.start = len(broker.output())

    def new(self) -> str:
        return self.broker.output()[self.start:]

    def assert_quiet(self) -> None:
        new = self.new()
        assert "Traceback" not in new, new
        assert not [line for line in new.splitlines() if " ERROR " in line], new


def _timestamp_overflow_batch() -> bytes:
    """Two records of deltas 0 and 1 under a base timestamp of Long.MAX_VALUE: the second
    record's timestamp is one past what a long holds."""
    from kafka_py.clients.common.record.default_record_batch import (
        ATTRIBUTES_OFFSET, BASE_TIMESTAMP_OFFSET, CRC_OFFSET, MAX_TIMESTAMP_OFFSET)
    from kafka_py.core.utils.java_limits import LONG_MAX
    import crc32c

    batch = bytearray(build_batch([SimpleRecord(None, b"a", 1_000), SimpleRecord(None, b"b", 1_001)]))
    struct.pack_into(">qq", batch, BASE_TIMESTAMP_OFFSET, LONG_MAX, LONG_MAX)
    assert MAX_TIMESTAMP_OFFSET == BASE_TIMESTAMP_OFFSET + 8
    struct.pack_into(">I", batch, CRC_OFFSET, crc32c.crc32c(bytes(batch[ATTRIBUTES_OFFSET:])))
    return bytes(batch)


def test_produce_with_a_timestamp_beyond_a_long_is_refused(broker):
    output = BrokerOutput(broker)
    with RawClient(broker.port) as client:
        before = _end_offset(client)
        partition = partition_response(client.request(ApiKeys.PRODUCE, 8,
                                                      produce_request(_timestamp_overflow_batch())))
        assert partition.error_code == Errors.INVALID_TIMESTAMP.error_code
        assert [int(e.batch_index) for e in partition.record_errors] == [1]
        assert _end_offset(client) == before
    output.assert_quiet()


def test_write_txn_markers_without_a_producer_id_is_refused(broker):
    output = BrokerOutput(broker)
    with RawClient(broker.port) as client:
        before = _end_offset(client)
        response = client.request(ApiKeys.WRITE_TXN_MARKERS, 1, req(
            ApiKeys.WRITE_TXN_MARKERS, 1, markers=[{
                "producer_id": -1, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 0,
                "topics": [{"name": TOPIC, "partition_indexes": [0]}]}]))
        [marker] = response.markers
        assert int(marker.producer_id) == -1
        [topic] = marker.topics
        assert [(int(p.partition_index), int(p.error_code)) for p in topic.partitions] == [
            (0, Errors.CORRUPT_MESSAGE.error_code)]
        assert _end_offset(client) == before
    output.assert_quiet()
    assert "WARN" in output.new()


def _wait_for_group_coordinator(client: RawClient, group: str) -> None:
    # the first lookup creates __consumer_offsets; the coordinator is there once it is loaded
    wait_until(lambda: client.request(ApiKeys.FIND_COORDINATOR, 2, req(
        ApiKeys.FIND_COORDINATOR, 2, key=group, key_type=0)).error_code == Errors.NONE.error_code,
        30, "no group coordinator", interval=0.2)


def test_pending_member_rejoining_with_a_group_instance_id_is_unknown(broker):
    output = BrokerOutput(broker)

    def join(member_id: str, group_instance_id: str | None):
        return req(ApiKeys.JOIN_GROUP, 5, group_id="pending-then-static", session_timeout=10000,
                   rebalance_timeout=10000, member_id=member_id, group_instance_id=group_instance_id,
                   protocol_type="consumer", protocols=[{"name": "range", "metadata": b""}])

    with RawClient(broker.port) as client:
        _wait_for_group_coordinator(client, "pending-then-static")
        first = client.request(ApiKeys.JOIN_GROUP, 5, join("", None))
        assert first.error_code == Errors.MEMBER_ID_REQUIRED.error_code
        rejoin = client.request(ApiKeys.JOIN_GROUP, 5, join(first.member_id, "instance-1"))
        assert rejoin.error_code == Errors.UNKNOWN_MEMBER_ID.error_code
        # the pending member may still join as the dynamic member it was told to be
        joined = client.request(ApiKeys.JOIN_GROUP, 5, join(first.member_id, None))
        assert joined.error_code == Errors.NONE.error_code
        assert joined.member_id == first.member_id
    output.assert_quiet()
    assert "WARN" in output.new()


BAD_TOPIC_NAMES = ["a\x00b", "x/../y", "..", "", "bad/name", "a" * 250]


@pytest.mark.parametrize("name", BAD_TOPIC_NAMES, ids=["nul", "dotdot-path", "dotdot", "empty", "slash", "long"])
def test_every_api_naming_a_topic_refuses_an_invalid_name(broker, name):
    """Kafka's answer per API for a name Topic.validate refuses: INVALID_TOPIC_EXCEPTION where
    Kafka validates the name (CreateTopics, DescribeConfigs, Metadata), UNKNOWN_TOPIC_OR_PARTITION
    where it looks the topic up (no such topic can exist). Nothing reaches ZooKeeper or disk."""
    group = "bad-topic-names"
    with RawClient(broker.port) as client:
        _wait_for_group_coordinator(client, group)
    output = BrokerOutput(broker)
    zk_before, disk_before = _topic_znodes(broker), sorted(p.name for p in broker.log_dir.iterdir())
    invalid = Errors.INVALID_TOPIC_EXCEPTION.error_code
    unknown = Errors.UNKNOWN_TOPIC_OR_PARTITION.error_code
    with RawClient(broker.port) as client:
        created = client.request(ApiKeys.CREATE_TOPICS, 5, req(
            ApiKeys.CREATE_TOPICS, 5, timeout=10000, validate_only=False, topics=[
                {"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}]))
        assert [int(t.error_code) for t in created.topics] == [invalid]

        partitions = client.request(ApiKeys.CREATE_PARTITIONS, 2, req(
            ApiKeys.CREATE_PARTITIONS, 2, timeout=10000, validate_only=False,
            topics=[{"name": name, "count": 3, "assignments": None}]))
        assert [int(r.error_code) for r in partitions.results] == [unknown]

        deleted = client.request(ApiKeys.DELETE_TOPICS, 5, req(
            ApiKeys.DELETE_TOPICS, 5, topic_names=[name], timeout=10000))
        assert [int(r.error_code) for r in deleted.responses] == [unknown]

        described = client.request(ApiKeys.DESCRIBE_CONFIGS, 3, req(
            ApiKeys.DESCRIBE_CONFIGS, 3, include_synonyms=False, include_documentation=False,
            resources=[{"resource_type": 2, "resource_name": name, "configuration_keys": None}]))
        assert [int(r.error_code) for r in described.results] == [invalid]

        altered = client.request(ApiKeys.ALTER_CONFIGS, 1, req(
            ApiKeys.ALTER_CONFIGS, 1, validate_only=False, resources=[
                {"resource_type": 2, "resource_name": name, "configs": [{"name": "retention.ms", "value": "1000"}]}]))
        assert [int(r.error_code) for r in altered.responses] == [unknown]

        incremental = client.request(ApiKeys.INCREMENTAL_ALTER_CONFIGS, 1, req(
            ApiKeys.INCREMENTAL_ALTER_CONFIGS, 1, validate_only=False, resources=[
                {"resource_type": 2, "resource_name": name,
                 "configs": [{"name": "retention.ms", "config_operation": 0, "value": "1000"}]}]))
        assert [int(r.error_code) for r in incremental.responses] == [unknown]

        reassigned = client.request(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, 0, req(
            ApiKeys.ALTER_PARTITION_REASSIGNMENTS, 0, timeout=10000, topics=[
                {"name": name, "partitions": [{"partition_index": 0, "replicas": [0]}]}]))
        assert int(reassigned.error_code) == Errors.NONE.error_code
        assert [int(p.error_code) for t in reassigned.responses for p in t.partitions] == [unknown]

        listed = client.request(ApiKeys.LIST_PARTITION_REASSIGNMENTS, 0, req(
            ApiKeys.LIST_PARTITION_REASSIGNMENTS, 0, timeout=10000,
            topics=[{"name": name, "partition_indexes": [0]}]))
        assert int(listed.error_code) == Errors.NONE.error_code and not listed.topics

        elected = client.request(ApiKeys.ELECT_LEADERS, 2, req(
            ApiKeys.ELECT_LEADERS, 2, election_type=0, timeout=10000,
            topic_partitions=[{"topic": name, "partitions": [0]}]))
        assert [int(p.error_code) for t in elected.replica_election_results for p in t.partition_result] == [unknown]

        records = client.request(ApiKeys.DELETE_RECORDS, 2, req(
            ApiKeys.DELETE_RECORDS, 2, timeout=10000,
            topics=[{"name": name, "partitions": [{"partition_index": 0, "offset": 0}]}]))
        assert [int(p.error_code) for t in records.topics for p in t.partitions] == [unknown]

        committed = client.request(ApiKeys.OFFSET_COMMIT, 8, req(
            ApiKeys.OFFSET_COMMIT, 8, group_id=group, generation_id_or_member_epoch=-1, member_id="",
            group_instance_id=None, topics=[{"name": name, "partitions": [
                {"partition_index": 0, "committed_offset": 0, "committed_leader_epoch": -1,
                 "committed_metadata": None}]}]))
        assert [int(p.error_code) for t in committed.topics for p in t.partitions] == [unknown]

        offsets_deleted = client.request(ApiKeys.OFFSET_DELETE, 0, req(
            ApiKeys.OFFSET_DELETE, 0, group_id=group, topics=[{"name": name, "partitions": [{"partition_index": 0}]}]))
        # (the group has no offsets, so the group's error answers the whole request, as in Kafka)
        assert (int(offsets_deleted.error_code), offsets_deleted.topics) == (Errors.GROUP_ID_NOT_FOUND.error_code, ())

        txn_committed = client.request(ApiKeys.TXN_OFFSET_COMMIT, 3, req(
            ApiKeys.TXN_OFFSET_COMMIT, 3, transactional_id="bad-topic-names", group_id=group, producer_id=1,
            producer_epoch=0, generation_id=-1, member_id="", group_instance_id=None,
            topics=[{"name": name, "partitions": [{"partition_index": 0, "committed_offset": 0,
                                                   "committed_leader_epoch": -1, "committed_metadata": None}]}]))
        assert [int(p.error_code) for t in txn_committed.topics for p in t.partitions] == [unknown]

        added = client.request(ApiKeys.ADD_PARTITIONS_TO_TXN, 1, req(
            ApiKeys.ADD_PARTITIONS_TO_TXN, 1, v3_and_below_transactional_id="bad-topic-names",
            v3_and_below_producer_id=1, v3_and_below_producer_epoch=0,
            v3_and_below_topics=[{"name": name, "partitions": [0]}]))
        assert [int(p.partition_error_code) for t in added.results_by_topic_v3_and_below
                for p in t.results_by_partition] == [unknown]

        moved = client.request(ApiKeys.ALTER_REPLICA_LOG_DIRS, 1, req(
            ApiKeys.ALTER_REPLICA_LOG_DIRS, 1, dirs=[{"path": str(broker.log_dir), "topics": [
                {"name": name, "partitions": [0]}]}]))
        assert [int(p.error_code) for t in moved.results for p in t.partitions] in (
            [unknown], [Errors.INVALID_TOPIC_EXCEPTION.error_code])

        produced = client.request(ApiKeys.PRODUCE, 8, produce_request(
            build_batch([SimpleRecord(None, b"x", 1_700_000_000_000)]), topic=name))
        assert partition_response(produced).error_code == unknown

        metadata = client.request(ApiKeys.METADATA, 9, req(
            ApiKeys.METADATA, 9, topics=[{"name": name}], allow_auto_topic_creation=True,
            include_cluster_authorized_operations=False, include_topic_authorized_operations=False))
        assert [int(t.error_code) for t in metadata.topics] == [invalid]
    output.assert_quiet()
    assert _topic_znodes(broker) == zk_before
    assert sorted(p.name for p in broker.log_dir.iterdir()) == disk_before


def _topic_znodes(broker) -> dict[str, list[str]]:
    """The znodes a topic name could reach: its assignment, config, deletion and reassignment."""
    zk = broker.zk()
    try:
        return {path: sorted(zk.get_children(path)) if zk.exists(path) else []
                for path in ("/brokers/topics", "/config/topics", "/admin/delete_topics", "/admin")}
    finally:
        zk.stop()
        zk.close()
