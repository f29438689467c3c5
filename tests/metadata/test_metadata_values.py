"""The small values of org.apache.kafka.metadata: equality, copies, and Kafka's strings."""
from __future__ import annotations

import uuid

import pytest

from kafka_py.core.cluster.broker import EndPoint
from kafka_py.metadata.broker_heartbeat_reply import BrokerHeartbeatReply
from kafka_py.metadata.broker_registration import BrokerRegistration, listeners_to_map
from kafka_py.metadata.broker_registration_reply import BrokerRegistrationReply
from kafka_py.metadata.broker_state import BrokerState
from kafka_py.metadata.feature_map import FeatureMap
from kafka_py.metadata.feature_map_and_epoch import FeatureMapAndEpoch
from kafka_py.metadata.usable_broker import UsableBroker
from kafka_py.metadata.version_range import VersionRange

INCARNATION = uuid.UUID(int=0x3F4E)


def test_version_range() -> None:
    assert str(VersionRange(1, 1)) == "1" and str(VersionRange(1, 3)) == "1-3"
    assert str(VersionRange.ALL) == "0+"
    assert VersionRange(1, 4).contains(VersionRange(2, 4))
    assert not VersionRange(1, 4).contains(VersionRange(0, 2))
    assert VersionRange.ALL.contains(VersionRange(0, 32767))


def test_feature_map_copies_its_input() -> None:
    features = {"metadata.version": VersionRange(1, 2)}
    feature_map = FeatureMap(features)
    features["other"] = VersionRange(0, 0)
    assert feature_map.get("other") is None
    assert feature_map == FeatureMap({"metadata.version": VersionRange(1, 2)})
    assert hash(feature_map) == hash(FeatureMap({"metadata.version": VersionRange(1, 2)}))
    assert str(FeatureMap({"b": VersionRange(1, 1), "a": VersionRange(0, 5)})) == "{a: 0-5, b: 1}"
    with pytest.raises(TypeError):
        feature_map.features["x"] = VersionRange(0, 0)  # type: ignore[index]
    assert str(FeatureMapAndEpoch(feature_map, 7)) == "{map={metadata.version: 1-2}, epoch=7}"


def test_broker_registration() -> None:
    listeners = listeners_to_map([EndPoint.create_end_point("PLAINTEXT://host:9092")])
    registration = BrokerRegistration(1, 10, INCARNATION, listeners,
                                      {"f": VersionRange(1, 2)}, "rack0", fenced=True)
    listeners["OTHER"] = listeners["PLAINTEXT"]
    assert list(registration.listeners) == ["PLAINTEXT"]
    unfenced = registration.clone_with_fencing(False)
    assert not unfenced.fenced and registration.fenced
    assert unfenced == BrokerRegistration(1, 10, INCARNATION, {"PLAINTEXT": listeners["PLAINTEXT"]},
                                          {"f": VersionRange(1, 2)}, "rack0", fenced=False)
    assert unfenced != registration and hash(unfenced.clone_with_fencing(True)) == hash(registration)
    assert str(registration) == (
        "BrokerRegistration(id=1, epoch=10, incarnationId=00000000-0000-0000-0000-000000003f4e, "
        "listeners=[EndPoint(host,9092,PLAINTEXT,PLAINTEXT)], supportedFeatures={f: 1-2}, "
        "rack=rack0, fenced=True)")


def test_broker_state_values_are_kafkas() -> None:
    assert [(s.name, s.value) for s in BrokerState] == [
        ("NOT_RUNNING", 0), ("STARTING", 1), ("RECOVERY", 2), ("RUNNING", 3),
        ("PENDING_CONTROLLED_SHUTDOWN", 6), ("SHUTTING_DOWN", 7), ("UNKNOWN", 127)]
    assert BrokerState.from_value(3) is BrokerState.RUNNING
    assert BrokerState.from_value(4) is BrokerState.UNKNOWN


def test_replies_and_usable_broker_are_values() -> None:
    assert BrokerRegistrationReply(5) == BrokerRegistrationReply(5) != BrokerRegistrationReply(6)
    reply = BrokerHeartbeatReply(is_caught_up=True, is_fenced=False, in_controlled_shutdown=False,
                                 should_shut_down=False)
    assert reply != BrokerHeartbeatReply(True, False, False, True)
    assert {UsableBroker(1, None), UsableBroker(1, None), UsableBroker(1, "r")} == {
        UsableBroker(1, None), UsableBroker(1, "r")}
