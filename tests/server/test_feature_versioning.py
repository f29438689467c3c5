"""BrokerFeatures, FinalizedFeatureCache and the KRaft broker's FeaturePublisher (KIP-584) as
plain objects: the compatibility rules, the cache's epoch order and waits, the supported.features
key's parsing, and the finalized features a batch of metadata records (or a snapshot) leaves."""
from __future__ import annotations

import threading

import pytest

from kafka_py.core.cluster.broker import FinalizedVersionRange, SupportedVersionRange
from kafka_py.metadata.records.feature_level_record.v0 import FeatureLevelRecord
from kafka_py.metadata.records.remove_feature_level_record.v0 import RemoveFeatureLevelRecord
from kafka_py.server.broker_features import BrokerFeatures, has_incompatible_features, parse_supported_features
from kafka_py.server.finalized_feature_cache import FeatureCacheUpdateException, FinalizedFeatureCache
from kafka_py.server.metadata.feature_publisher import FeaturePublisher
from kafka_py.clients.common.config.config_def import ConfigException

SUPPORTED = {"a": SupportedVersionRange(1, 3), "b": SupportedVersionRange(2, 4)}


def test_parse_supported_features():
    assert parse_supported_features([" a:1-3", "b:2-4 ", ""]) == SUPPORTED
    for bad in ("a", "a:3-1", "a:0-2", "a:1-x", "a:1-2:3"):
        with pytest.raises(ConfigException, match="supported.features"):
            parse_supported_features([bad])
    with pytest.raises(ConfigException, match="given twice"):
        parse_supported_features(["a:1-2", "a:1-3"])


@pytest.mark.parametrize("finalized, incompatible", [
    ({}, False),
    ({"a": FinalizedVersionRange(1, 3)}, False),
    ({"a": FinalizedVersionRange(2, 2), "b": FinalizedVersionRange(2, 4)}, False),
    ({"a": FinalizedVersionRange(1, 4)}, True),   # above the supported max
    ({"b": FinalizedVersionRange(1, 4)}, True),   # below the supported min
    ({"c": FinalizedVersionRange(1, 1)}, True),   # unknown here
])
def test_compatibility(finalized, incompatible):
    assert has_incompatible_features(SUPPORTED, finalized) is incompatible
    assert bool(BrokerFeatures(SUPPORTED).incompatible_features(finalized)) is incompatible


def test_default_finalized_features_are_the_whole_supported_ranges():
    assert BrokerFeatures(SUPPORTED).default_finalized_features() == {
        "a": FinalizedVersionRange(1, 3), "b": FinalizedVersionRange(2, 4)}
    assert BrokerFeatures.create_default().default_finalized_features() == {}


def test_cache_refuses_an_older_epoch_and_incompatible_features():
    cache = FinalizedFeatureCache(BrokerFeatures(SUPPORTED))
    assert cache.is_empty()
    cache.update_or_throw({"a": FinalizedVersionRange(1, 2)}, 5)
    with pytest.raises(FeatureCacheUpdateException, match="invalid epoch"):
        cache.update_or_throw({"a": FinalizedVersionRange(1, 3)}, 4)
    with pytest.raises(FeatureCacheUpdateException, match="feature compatibility checks failed"):
        cache.update_or_throw({"a": FinalizedVersionRange(1, 9)}, 6)
    assert cache.get().epoch == 5 and cache.get().features == {"a": FinalizedVersionRange(1, 2)}
    cache.update_or_throw({}, 5)  # the same epoch again is taken
    cache.clear()
    assert cache.get() is None


def test_wait_until_epoch():
    cache = FinalizedFeatureCache(BrokerFeatures(SUPPORTED))
    with pytest.raises(TimeoutError, match="Current epoch: <none>"):
        cache.wait_until_epoch_or_throw(1, 10)
    with pytest.raises(ValueError):
        cache.wait_until_epoch_or_throw(-1, 10)
    updater = threading.Timer(0.05, lambda: cache.update_or_throw({"a": FinalizedVersionRange(1, 1)}, 3))
    updater.start()
    try:
        cache.wait_until_epoch_or_throw(3, 30_000)  # woken by the update, long before the timeout
    finally:
        updater.join(10)
    assert cache.get().epoch == 3


def test_feature_publisher_batches_and_snapshots():
    cache = FinalizedFeatureCache(BrokerFeatures(SUPPORTED))
    publisher = FeaturePublisher("broker", 0, cache)
    publisher.publish(10, [FeatureLevelRecord(name="a", min_feature_level=1, max_feature_level=2)])
    assert (cache.get().features, cache.get().epoch) == ({"a": FinalizedVersionRange(1, 2)}, 10)
    publisher.publish(11, [])  # nothing about features: the epoch stays that of the last change
    assert cache.get().epoch == 10
    publisher.publish(12, [FeatureLevelRecord(name="b", min_feature_level=2, max_feature_level=3),
                           RemoveFeatureLevelRecord(name="a")])
    assert (cache.get().features, cache.get().epoch) == ({"b": FinalizedVersionRange(2, 3)}, 12)
    # a record this broker cannot run is logged and left out, the cache keeps what it had
    publisher.publish(13, [FeatureLevelRecord(name="c", min_feature_level=1, max_feature_level=1)])
    assert cache.get().epoch == 12
    # a snapshot holds every finalized feature: what it lacks is gone
    publisher.publish(20, [FeatureLevelRecord(name="a", min_feature_level=1, max_feature_level=3)], is_snapshot=True)
    assert (cache.get().features, cache.get().epoch) == ({"a": FinalizedVersionRange(1, 3)}, 20)
