"""ClientQuotaControlManager, after Kafka's ClientQuotaControlManagerTest."""
from __future__ import annotations

from kafka_py.metadata.controller.client_quota_control_manager import (
    ClientQuotaAlteration,
    ClientQuotaControlManager,
    ClientQuotaEntity,
)
from kafka_py.metadata.timeline.snapshot_registry import SnapshotRegistry
from kafka_py.clients.common.protocol.errors import Errors


def entity(**entries) -> ClientQuotaEntity:
    return ClientQuotaEntity.of({k.replace("_", "-"): v for k, v in entries.items()})


def alter(manager, *alterations):
    result = manager.alter_client_quotas([ClientQuotaAlteration(e, tuple(ops.items()))
                                          for e, ops in alterations])
    for record in result.records:
        manager.replay(record.message)
    return {e: error.error for e, error in result.response.items()}


def test_set_change_and_remove():
    manager = ClientQuotaControlManager(SnapshotRegistry())
    alice = entity(user="alice")
    assert alter(manager, (alice, {"producer_byte_rate": 100.0, "request_percentage": 1.5})) == \
        {alice: Errors.NONE}
    assert manager.describe(alice) == {"producer_byte_rate": 100.0, "request_percentage": 1.5}
    alter(manager, (alice, {"producer_byte_rate": None}))
    assert manager.describe(alice) == {"request_percentage": 1.5}
    alter(manager, (alice, {"request_percentage": None}))
    assert manager.describe(alice) == {}
    assert alice not in manager.client_quota_data


def test_invalid_entities_and_keys():
    manager = ClientQuotaControlManager(SnapshotRegistry())
    cases = [
        (ClientQuotaEntity.of({}), {"producer_byte_rate": 1.0}),
        (entity(user="a", ip="1.2.3.4"), {"connection_creation_rate": 1.0}),
        (ClientQuotaEntity.of({"group": "g"}), {"producer_byte_rate": 1.0}),
        (entity(user=""), {"producer_byte_rate": 1.0}),
        (entity(user="b"), {"producer_byte_rate": 1.5}),      # LONG key, fractional value
        (entity(user="c"), {"connection_creation_rate": 1.0}),  # an ip key for a user
        (entity(ip="not an ip !"), {"connection_creation_rate": 1.0}),
        (entity(user="d"), {"producer_byte_rate": -5.0}),     # a quota must be greater than 0
        (entity(user="e"), {"request_percentage": 0.0}),
        (entity(ip="10.0.0.2"), {"connection_creation_rate": -1.0}),
    ]
    for e, ops in cases:
        assert alter(manager, (e, ops)) == {e: Errors.INVALID_REQUEST}
    assert len(manager.client_quota_data) == 0
    assert alter(manager, (entity(ip="10.0.0.1"), {"connection_creation_rate": 5.0})) == \
        {entity(ip="10.0.0.1"): Errors.NONE}


def test_describe_with_filters():
    manager = ClientQuotaControlManager(SnapshotRegistry())
    alter(manager, (entity(user="alice"), {"producer_byte_rate": 1.0}),
          (entity(user=None), {"producer_byte_rate": 2.0}),
          (entity(user="bob", client_id="app"), {"consumer_byte_rate": 3.0}))
    specified = manager.describe_client_quotas([("user", 2, None)], strict=False)
    assert set(specified) == {entity(user="alice"), entity(user="bob", client_id="app")}
    strict = manager.describe_client_quotas([("user", 2, None)], strict=True)
    assert set(strict) == {entity(user="alice")}
    assert set(manager.describe_client_quotas([("user", 1, None)], strict=True)) == \
        {entity(user=None)}
    assert set(manager.describe_client_quotas([("user", 0, "bob")], strict=False)) == \
        {entity(user="bob", client_id="app")}
