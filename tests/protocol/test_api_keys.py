"""ApiKeys: Kafka 2.8.2's APIs and versions, what the broker serves, header versions."""
from __future__ import annotations

import pytest
from kio.index import load_request_schema, load_response_schema

from kafka_py.clients.common.protocol.api_keys import IMPLEMENTED_APIS, ApiKeys, api_versions_response_keys
from kafka_py.clients.common.protocol.messages import request_schema, response_schema


def test_every_2_8_2_api_key_and_describe_transactions() -> None:
    # 2.8.2's 0-64, and Kafka 3.0's DescribeTransactions (65), served for transaction verification,
    # and AllocateProducerIds (67), served by the KRaft controller
    assert [api.id for api in ApiKeys] == list(range(0, 66)) + [67]
    assert ApiKeys.for_id(67) is ApiKeys.ALLOCATE_PRODUCER_IDS and not ApiKeys.ALLOCATE_PRODUCER_IDS.implemented
    assert ApiKeys.for_id(3) is ApiKeys.METADATA
    assert ApiKeys.METADATA.api_name == "Metadata"
    assert ApiKeys.ALTER_ISR.id == 56  # its 2.8.2 name; later Kafkas call it AlterPartition
    assert ApiKeys.for_id(65) is ApiKeys.DESCRIBE_TRANSACTIONS
    assert ApiKeys.DESCRIBE_TRANSACTIONS.implemented
    assert ApiKeys.DESCRIBE_TRANSACTIONS.supported_versions() == range(0, 1)
    assert ApiKeys.DESCRIBE_TRANSACTIONS.request_header_version(0) == 2  # flexible from v0
    assert not ApiKeys.has_id(66)
    with pytest.raises(ValueError, match="Unexpected api key: 66"):
        ApiKeys.for_id(66)


@pytest.mark.parametrize(
    "api, latest, first_flexible",
    [
        (ApiKeys.PRODUCE, 9, 9),
        (ApiKeys.FETCH, 12, 12),
        (ApiKeys.METADATA, 11, 9),
        (ApiKeys.LEADER_AND_ISR, 5, 4),
        (ApiKeys.STOP_REPLICA, 3, 2),
        (ApiKeys.UPDATE_METADATA, 7, 6),
        (ApiKeys.CONTROLLED_SHUTDOWN, 3, 3),
        (ApiKeys.API_VERSIONS, 3, 3),
        (ApiKeys.SASL_HANDSHAKE, 1, None),
        (ApiKeys.OFFSET_DELETE, 0, None),
        (ApiKeys.DESCRIBE_CLUSTER, 0, 0),
    ],
)
def test_2_8_2_version_ranges(api, latest, first_flexible) -> None:
    assert api.oldest_version == 0
    assert api.latest_version == latest
    assert api.first_flexible_version == first_flexible


def test_cluster_actions() -> None:
    assert {a for a in ApiKeys if a.cluster_action} >= {
        ApiKeys.LEADER_AND_ISR, ApiKeys.STOP_REPLICA, ApiKeys.UPDATE_METADATA,
        ApiKeys.CONTROLLED_SHUTDOWN, ApiKeys.WRITE_TXN_MARKERS,
    }
    assert not ApiKeys.PRODUCE.cluster_action


def test_implemented_apis_are_served_by_a_zk_broker() -> None:
    assert len(IMPLEMENTED_APIS) >= 46
    assert ApiKeys.ELECT_LEADERS in IMPLEMENTED_APIS
    for api in IMPLEMENTED_APIS:
        assert api.implemented and api.zk_broker
        assert api.supported_versions(), api
    assert ApiKeys.DESCRIBE_DELEGATION_TOKEN.supported_versions() == range(0, 3)
    assert not ApiKeys.DESCRIBE_PRODUCERS.implemented
    assert not ApiKeys.DESCRIBE_PRODUCERS.supported_versions()
    assert not ApiKeys.DESCRIBE_PRODUCERS.is_version_supported(0)


@pytest.mark.parametrize(
    "api, low, high",
    [
        # all of 2.8.2's: kio starts these above 2.8.2's oldest version (KIP-896),
        # the older ones are generated in kafka_py.clients.common.protocol.schema
        (ApiKeys.PRODUCE, 0, 9),
        (ApiKeys.FETCH, 0, 12),
        (ApiKeys.LIST_OFFSETS, 0, 6),
        (ApiKeys.OFFSET_COMMIT, 0, 8),
        (ApiKeys.OFFSET_FETCH, 0, 7),
        (ApiKeys.CREATE_TOPICS, 0, 7),
        (ApiKeys.DELETE_TOPICS, 0, 6),
        (ApiKeys.DESCRIBE_CONFIGS, 0, 4),
        # kio knows newer ones, capped at 2.8.2's
        (ApiKeys.METADATA, 0, 11),
        (ApiKeys.API_VERSIONS, 0, 3),
        (ApiKeys.DESCRIBE_CLUSTER, 0, 0),
        (ApiKeys.LEADER_AND_ISR, 0, 5),
        (ApiKeys.CONTROLLED_SHUTDOWN, 0, 3),
        # all of 2.8.2's, generated here since kio has only 2-4
        (ApiKeys.OFFSET_FOR_LEADER_EPOCH, 0, 4),
        # and since kio lacks version 0 of the ACL APIs
        (ApiKeys.DESCRIBE_ACLS, 0, 2),
        (ApiKeys.CREATE_ACLS, 0, 2),
        (ApiKeys.DELETE_ACLS, 0, 2),
    ],
)
def test_supported_range_is_2_8_2s(api, low, high) -> None:
    assert api.supported_versions() == range(low, high + 1)
    assert api.min_supported_version == low and api.max_supported_version == high
    assert api.is_version_supported(low) and api.is_version_supported(high)
    assert not api.is_version_supported(low - 1) and not api.is_version_supported(high + 1)


def test_every_version_of_every_zk_broker_api_has_classes() -> None:
    for api in ApiKeys:
        if api.zk_broker:
            assert api.schema_versions() == api.all_versions(), api
        if api.implemented:
            assert api.supported_versions() == api.all_versions(), api


def test_generated_old_versions_name_and_type_fields_as_kio_does() -> None:
    """A handler's answer, built with kio's newest classes, converts to an old version by field
    name: each field the generated oldest versions share with kio's oldest must match it."""
    import dataclasses
    import typing

    def structs(cls: type, out: dict[str, type]) -> dict[str, type]:
        out.setdefault(cls.__name__, cls)
        for f in dataclasses.fields(cls):
            pending = [f.type]
            while pending:
                t = pending.pop()
                if dataclasses.is_dataclass(t) and t.__name__ not in out:
                    structs(t, out)
                pending.extend(typing.get_args(t))
        return out

    compared = 0
    for api in ApiKeys:
        versions = api.schema_versions()
        generated = [v for v in versions if request_schema(api, v).__module__.startswith("kafka_py.")]
        kio_versions = [v for v in versions if not request_schema(api, v).__module__.startswith("kafka_py.")]
        if not generated or not kio_versions:
            continue
        for schema in (request_schema, response_schema):
            ours = structs(schema(api, generated[-1]), {})
            theirs = structs(schema(api, kio_versions[0]), {})
            for name, cls in ours.items():
                assert name in theirs, (api, name)
                their_fields = {f.name: f for f in dataclasses.fields(theirs[name])}
                for f in dataclasses.fields(cls):
                    twin = their_fields.get(f.name)
                    if twin is None:
                        # fields of old versions only; any other is a name kio spells otherwise
                        assert f.name in ("max_num_offsets", "old_style_offsets", "commit_timestamp",
                                          "is_default"), (api, name, f.name)
                        continue
                    assert f.metadata.get("kafka_type") == twin.metadata.get("kafka_type"), (api, name, f.name)
                    assert (type(None) in typing.get_args(f.type)) == (
                        type(None) in typing.get_args(twin.type)), (api, name, f.name)
                    compared += 1
    assert compared > 50


def test_supported_versions_have_classes_with_matching_flexibility() -> None:
    for api in ApiKeys:
        for version in api.schema_versions():
            for cls in (request_schema(api, version), response_schema(api, version)):
                assert cls.__api_key__ == api.id and cls.__version__ == version
                assert cls.__flexible__ == api.is_flexible(version), (api, version)


def test_kio_classes_used_where_kio_has_them() -> None:
    assert request_schema(ApiKeys.METADATA, 4) is load_request_schema(3, 4)
    assert response_schema(ApiKeys.PRODUCE, 9) is load_response_schema(0, 9)
    assert request_schema(ApiKeys.LEADER_AND_ISR, 2).__module__ == (
        "kafka_py.clients.common.protocol.schema.leader_and_isr.v2.request"
    )


def test_header_versions() -> None:
    assert ApiKeys.CONTROLLED_SHUTDOWN.request_header_version(0) == 0
    assert ApiKeys.CONTROLLED_SHUTDOWN.request_header_version(1) == 1
    assert ApiKeys.CONTROLLED_SHUTDOWN.request_header_version(3) == 2
    assert ApiKeys.FETCH.response_header_version(11) == 0
    assert ApiKeys.FETCH.response_header_version(12) == 1
    for version in range(0, 5):
        assert ApiKeys.API_VERSIONS.response_header_version(version) == 0
    assert ApiKeys.API_VERSIONS.request_header_version(3) == 2
    # defined beyond the known range so unsupported requests still parse
    assert ApiKeys.METADATA.request_header_version(50) == 2
    assert ApiKeys.SASL_HANDSHAKE.request_header_version(1) == 1


def test_api_versions_response_keys() -> None:
    keys = api_versions_response_keys(3)
    assert [k.api_key for k in keys] == sorted(api.id for api in IMPLEMENTED_APIS)
    by_key = {k.api_key: (k.min_version, k.max_version) for k in keys}
    assert by_key[0] == (0, 9)
    assert by_key[2] == (0, 6)
    assert by_key[18] == (0, 3)
    assert by_key[4] == (0, 5)
    assert type(keys[0]).__module__ == "kio.schema.api_versions.v3.response"
    only = api_versions_response_keys(0, [ApiKeys.API_VERSIONS, ApiKeys.DESCRIBE_PRODUCERS])
    assert [(k.api_key, k.min_version, k.max_version) for k in only] == [(18, 0, 3)]
