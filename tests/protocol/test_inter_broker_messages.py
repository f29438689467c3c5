"""The ZooKeeper-era inter-broker messages kio lacks: every version round-trips, kio's
own reader agrees with ours, and a few versions match bytes laid out by hand from
Kafka 2.8.2's JSON specs."""
from __future__ import annotations

import struct
import uuid

import pytest
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader as kio_entity_reader

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.codec import read_entity, write_entity
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import (
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    request_schema,
    response_schema,
)
from kafka_py.clients.common.protocol.schema.controlled_shutdown.v0 import ControlledShutdownRequest as CSv0
from kafka_py.clients.common.protocol.schema.controlled_shutdown.v1 import ControlledShutdownResponse as CSRv1
from kafka_py.clients.common.protocol.schema.controlled_shutdown.v1.response import RemainingPartition
from kafka_py.clients.common.protocol.schema.controlled_shutdown.v3 import ControlledShutdownRequest as CSv3
from kafka_py.clients.common.protocol.schema.leader_and_isr.v0 import request as lai_v0
from kafka_py.clients.common.protocol.schema.stop_replica.v3 import request as sr_v3
from kafka_py.clients.common.protocol.schema.update_metadata.v0 import request as um_v0
from kafka_py.clients.common.protocol.schema.update_metadata.v7 import request as um_v7

from .builders import build

INTER_BROKER = {
    ApiKeys.LEADER_AND_ISR: range(0, 6),
    ApiKeys.STOP_REPLICA: range(0, 4),
    ApiKeys.UPDATE_METADATA: range(0, 8),
    ApiKeys.CONTROLLED_SHUTDOWN: range(0, 4),
}
CASES = [(api, v) for api, versions in INTER_BROKER.items() for v in versions]


def case_id(case: tuple[ApiKeys, int]) -> str:
    return f"{case[0].api_name}-v{case[1]}"


def test_every_2_8_2_version_has_classes() -> None:
    for api, versions in INTER_BROKER.items():
        assert api.schema_versions() == versions == api.all_versions()
        assert api.supported_versions() == versions


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_request_round_trip_with_header(case: tuple[ApiKeys, int]) -> None:
    api, version = case
    cls = request_schema(api, version)
    assert cls.__version__ == version and cls.__api_key__ == api.id
    assert cls.__flexible__ == api.is_flexible(version)
    request = build(cls)
    header = RequestHeader.for_request(api, version, correlation_id=91, client_id="controller-0")
    frame = encode_request(header, request)
    assert struct.unpack_from(">i", frame)[0] == len(frame) - 4
    parsed_header, parsed = decode_request(memoryview(frame)[4:])
    assert parsed == request
    assert parsed_header.correlation_id == 91
    assert parsed_header.header_version == api.request_header_version(version)
    # ControlledShutdown v0's header has no client id field at all.
    assert parsed_header.client_id == ("" if parsed_header.header_version == 0 else "controller-0")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_response_round_trip_with_header(case: tuple[ApiKeys, int]) -> None:
    api, version = case
    cls = response_schema(api, version)
    response = build(cls, seed=3)
    header = RequestHeader.for_request(api, version, correlation_id=-5).to_response_header()
    frame = encode_response(header, response)
    parsed_header, parsed = decode_response(memoryview(frame)[4:], api, version)
    assert parsed == response
    assert parsed_header.correlation_id == -5


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_kio_reader_agrees_with_ours(case: tuple[ApiKeys, int]) -> None:
    """Our classes follow kio's conventions closely enough for kio's native reader."""
    api, version = case
    for cls in (request_schema(api, version), response_schema(api, version)):
        entity = build(cls, seed=7)
        data = write_entity(entity)
        ours, our_size = read_entity(cls, data)
        theirs, their_size = kio_entity_reader(cls)(data, 0)
        assert ours == theirs == entity
        assert our_size == their_size == len(data)


def test_controlled_shutdown_v0_layout() -> None:
    header = RequestHeader.for_request(ApiKeys.CONTROLLED_SHUTDOWN, 0, correlation_id=3)
    frame = encode_request(header, CSv0(broker_id=5))
    # size, then header v0 (key, version, correlation id: no client id), then broker id
    assert frame == struct.pack(">ihhii", 12, 7, 0, 3, 5)


def test_controlled_shutdown_v3_layout() -> None:
    assert write_entity(CSv3(broker_id=5, broker_epoch=42)) == struct.pack(">iqB", 5, 42, 0)
    assert CSv3(broker_id=1).broker_epoch == -1


def test_controlled_shutdown_response_v1_layout() -> None:
    response = CSRv1(
        error_code=ErrorCode.none,
        remaining_partitions=(RemainingPartition(topic_name="ab", partition_index=4),),
    )
    assert write_entity(response) == struct.pack(">hih2si", 0, 1, 2, b"ab", 4)


def test_leader_and_isr_v0_layout() -> None:
    request = lai_v0.LeaderAndIsrRequest(
        controller_id=1,
        controller_epoch=2,
        ungrouped_partition_states=(
            lai_v0.LeaderAndIsrPartitionState(
                topic_name="t", partition_index=0, controller_epoch=2, leader=1,
                leader_epoch=9, isr=(1, 2), zk_version=4, replicas=(1, 2, 3),
            ),
        ),
        live_leaders=(lai_v0.LeaderAndIsrLiveLeader(broker_id=1, host_name="h", port=9092),),
    )
    expected = (
        struct.pack(">ii", 1, 2)
        + struct.pack(">i", 1)  # partition states
        + struct.pack(">h1siiii", 1, b"t", 0, 2, 1, 9)
        + struct.pack(">iii", 2, 1, 2)  # isr
        + struct.pack(">i", 4)  # zk version
        + struct.pack(">iiii", 3, 1, 2, 3)  # replicas
        + struct.pack(">i", 1)  # live leaders
        + struct.pack(">ih1si", 1, 1, b"h", 9092)
    )
    assert write_entity(request) == expected
    assert read_entity(lai_v0.LeaderAndIsrRequest, expected)[0] == request


def test_stop_replica_v3_layout_is_compact() -> None:
    request = sr_v3.StopReplicaRequest(
        controller_id=1,
        controller_epoch=2,
        broker_epoch=3,
        topic_states=(
            sr_v3.StopReplicaTopicState(
                topic_name="tp",
                partition_states=(
                    sr_v3.StopReplicaPartitionState(partition_index=6, delete_partition=True),
                ),
            ),
        ),
    )
    expected = (
        struct.pack(">iiq", 1, 2, 3)
        + bytes([2])  # one topic (compact length + 1)
        + bytes([3]) + b"tp"
        + bytes([2])  # one partition
        + struct.pack(">ii?", 6, -1, True) + bytes([0])  # leader epoch defaults to -1
        + bytes([0])  # topic tagged fields
        + bytes([0])  # request tagged fields
    )
    assert write_entity(request) == expected
    assert read_entity(sr_v3.StopReplicaRequest, expected)[0] == request


def test_update_metadata_v0_layout() -> None:
    request = um_v0.UpdateMetadataRequest(
        controller_id=0,
        controller_epoch=1,
        ungrouped_partition_states=(),
        live_brokers=(um_v0.UpdateMetadataBroker(id=2, v0_host="b", v0_port=9093),),
    )
    expected = struct.pack(">iiii" + "ih1si", 0, 1, 0, 1, 2, 1, b"b", 9093)
    assert write_entity(request) == expected


def test_update_metadata_v7_null_rack_and_topic_id() -> None:
    broker = um_v7.UpdateMetadataBroker(
        id=1,
        endpoints=(um_v7.UpdateMetadataEndpoint(port=1, host="h", listener="PLAINTEXT",
                                                security_protocol=0),),
        rack=None,
    )
    topic_id = uuid.uuid4()
    request = um_v7.UpdateMetadataRequest(
        controller_id=0,
        controller_epoch=1,
        broker_epoch=77,
        topic_states=(um_v7.UpdateMetadataTopicState(topic_name="t", topic_id=topic_id,
                                                     partition_states=()),),
        live_brokers=(broker,),
    )
    data = write_entity(request)
    assert topic_id.bytes in data
    parsed = read_entity(um_v7.UpdateMetadataRequest, data)[0]
    assert parsed == request
    assert parsed.live_brokers[0].rack is None
