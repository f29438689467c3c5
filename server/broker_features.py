"""Port of core/src/main/scala/kafka/server/BrokerFeatures.scala (Kafka 2.8.2).

The features this broker supports (KIP-584) and the check of a cluster's finalized features
against them. Kafka 2.8.2 defines no features, so a broker supports none unless the internal
``supported.features`` key names some (``name:min-max`` items, a kafka-py key: Kafka sets a
broker's supported features only from its own tests, through ``setSupportedFeatures``). With
it, operators and tests can exercise UpdateFeatures, ``kafka-features.sh`` and the
compatibility checks end to end.
"""
from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Mapping

from kafka_py.core.cluster.broker import FinalizedVersionRange, SupportedVersionRange
from kafka_py.clients.common.config.config_def import ConfigException

logger = logging.getLogger(__name__)

SUPPORTED_FEATURES_CONFIG = "supported.features"

_FEATURE_ITEM = re.compile(r"([^:\s]+):(\d+)-(\d+)")


def parse_supported_features(items: Iterable[str]) -> dict[str, SupportedVersionRange]:
    """``["name:1-3", ...]`` as the supported features; ConfigException names the bad item."""
    features: dict[str, SupportedVersionRange] = {}
    for item in items:
        item = item.strip()
        if not item:
            continue
        match = _FEATURE_ITEM.fullmatch(item)
        try:
            if match is None:
                raise ValueError("expected name:min-max")
            name = match.group(1)
            if name in features:
                raise ValueError(f"feature {name} given twice")
            features[name] = SupportedVersionRange(int(match.group(2)), int(match.group(3)))
        except ValueError as e:
            raise ConfigException(SUPPORTED_FEATURES_CONFIG, item, str(e)) from None
    return features


def _is_incompatible(finalized: FinalizedVersionRange, supported: SupportedVersionRange) -> bool:
    """FinalizedVersionRange.isIncompatibleWith: finalized levels outside what is supported."""
    return (finalized.min_version_level < supported.min_version
            or finalized.max_version_level > supported.max_version)


def range_string(version_range: SupportedVersionRange | FinalizedVersionRange) -> str:
    """BaseVersionRange.toString, as Kafka's log lines and the tools print a range."""
    if isinstance(version_range, SupportedVersionRange):
        return f"SupportedVersionRange[min_version:{version_range.min_version}, " \
               f"max_version:{version_range.max_version}]"
    return f"FinalizedVersionRange[min_version_level:{version_range.min_version_level}, " \
           f"max_version_level:{version_range.max_version_level}]"


def features_string(features: Mapping[str, SupportedVersionRange | FinalizedVersionRange]) -> str:
    """Features.toString: ``Features{(name -> range), ...}``."""
    return "Features{%s}" % ", ".join(f"({name} -> {range_string(r)})" for name, r in features.items())


class BrokerFeatures:
    def __init__(self, supported_features: Mapping[str, SupportedVersionRange]) -> None:
        self._lock = threading.Lock()
        self._supported_features = dict(supported_features)

    @classmethod
    def create_default(cls) -> "BrokerFeatures":
        return cls({})

    @classmethod
    def from_config(cls, config) -> "BrokerFeatures":
        return cls(parse_supported_features(config.get(SUPPORTED_FEATURES_CONFIG) or []))

    @property
    def supported_features(self) -> dict[str, SupportedVersionRange]:
        with self._lock:
            return dict(self._supported_features)

    def set_supported_features(self, features: Mapping[str, SupportedVersionRange]) -> None:
        with self._lock:
            self._supported_features = dict(features)

    def default_finalized_features(self) -> dict[str, FinalizedVersionRange]:
        """Every supported feature finalized at its whole supported range: what a new cluster's
        first controller writes to /feature."""
        return {name: FinalizedVersionRange(r.min_version, r.max_version)
                for name, r in self.supported_features.items()}

    def incompatible_features(self, finalized: Mapping[str, FinalizedVersionRange]) -> dict[str, FinalizedVersionRange]:
        return incompatible_features(self.supported_features, finalized, log_incompatibilities=True)


def has_incompatible_features(supported: Mapping[str, SupportedVersionRange],
                              finalized: Mapping[str, FinalizedVersionRange]) -> bool:
    return bool(incompatible_features(supported, finalized, log_incompatibilities=False))


def incompatible_features(supported: Mapping[str, SupportedVersionRange],
                          finalized: Mapping[str, FinalizedVersionRange],
                          log_incompatibilities: bool) -> dict[str, FinalizedVersionRange]:
    """The finalized features a broker with ``supported`` cannot run: unknown to it, or finalized
    at levels outside its range."""
    incompatible: dict[str, FinalizedVersionRange] = {}
    reasons: list[str] = []
    for name, levels in finalized.items():
        versions = supported.get(name)
        if versions is None:
            reasons.append(f"{{feature={name}, reason='Unsupported feature'}}")
        elif _is_incompatible(levels, versions):
            reasons.append(f"{{feature={name}, reason='{range_string(levels)} is incompatible with "
                           f"{range_string(versions)}'}}")
        else:
            continue
        incompatible[name] = levels
    if log_incompatibilities and reasons:
        logger.warning("Feature incompatibilities seen: %s", ", ".join(reasons))
    return incompatible
