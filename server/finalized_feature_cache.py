"""Port of core/src/main/scala/kafka/server/FinalizedFeatureCache.scala (Kafka 2.8.2).

The cluster-wide finalized features (KIP-584) as this broker last saw them, with their epoch:
in ZooKeeper mode the /feature znode's version (kept by FinalizedFeatureChangeListener), in
KRaft mode the metadata log offset of the last feature record (kept by the broker's metadata
listener). ApiVersions answers carry them; the controller reads them to validate updates and
waits on them after writing /feature, so that its UpdateFeatures answer comes only once the
change is visible here.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Optional

from kafka_py.core.cluster.broker import FinalizedVersionRange
from kafka_py.server.broker_features import BrokerFeatures, features_string

logger = logging.getLogger(__name__)


class FeatureCacheUpdateException(RuntimeError):
    pass


@dataclass(frozen=True)
class FinalizedFeaturesAndEpoch:
    features: Mapping[str, FinalizedVersionRange] = field(default_factory=dict)
    epoch: int = -1

    def __str__(self) -> str:
        return f"FinalizedFeaturesAndEpoch(features={features_string(self.features)}, epoch={self.epoch})"


class FinalizedFeatureCache:
    def __init__(self, broker_features: BrokerFeatures) -> None:
        self.broker_features = broker_features
        # Readers take the reference without the lock (one attribute read); writers and waiters
        # go through the condition, so a waiter never misses an update.
        self._features_and_epoch: Optional[FinalizedFeaturesAndEpoch] = None
        self._changed = threading.Condition()

    def get(self) -> Optional[FinalizedFeaturesAndEpoch]:
        return self._features_and_epoch

    def is_empty(self) -> bool:
        return self._features_and_epoch is None

    def wait_until_epoch_or_throw(self, min_expected_epoch: int, timeout_ms: int) -> None:
        if min_expected_epoch < 0:
            raise ValueError(f"Expected minExpectedEpoch >= 0, but {min_expected_epoch} was provided.")
        if timeout_ms < 0:
            raise ValueError(f"Expected timeoutMs >= 0, but {timeout_ms} was provided.")
        deadline = time.monotonic() + timeout_ms / 1000.0
        with self._changed:
            while True:
                current = self._features_and_epoch
                if current is not None and current.epoch >= min_expected_epoch:
                    return
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    epoch = "<none>" if current is None else current.epoch
                    raise TimeoutError(f"Timed out after waiting for {timeout_ms}ms for required condition "
                                       f"to be met. Current epoch: {epoch}.")
                self._changed.wait(remaining)

    def clear(self) -> None:
        with self._changed:
            self._features_and_epoch = None
            self._changed.notify_all()
        logger.info("Cleared cache")

    def update_or_throw(self, latest_features: Mapping[str, FinalizedVersionRange], latest_epoch: int) -> None:
        latest = FinalizedFeaturesAndEpoch(dict(latest_features), latest_epoch)
        with self._changed:
            existing = self._features_and_epoch
            existing_text = "<empty>" if existing is None else str(existing)
            if existing is not None and existing.epoch > latest.epoch:
                raise FeatureCacheUpdateException(
                    f"FinalizedFeatureCache update failed due to invalid epoch in new {latest}. "
                    f"The existing cache contents are {existing_text}.")
            if self.broker_features.incompatible_features(latest.features):
                raise FeatureCacheUpdateException(
                    "FinalizedFeatureCache update failed since feature compatibility checks failed! "
                    f"Supported {features_string(self.broker_features.supported_features)} has "
                    f"incompatibilities with the latest {latest}.")
            self._features_and_epoch = latest
            self._changed.notify_all()
        logger.info("Updated cache from existing %s to latest %s.", existing_text, latest)
