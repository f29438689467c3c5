"""ReplicaFetcherThread's request versions follow inter.broker.protocol.version as Kafka 2.8.2's
do (ReplicaFetcherThread.scala's fetchRequestVersion, offsetForLeaderEpochRequestVersion and
listOffsetRequestVersion), and truncation on fetch starts at 2.7-IV1. The thread's requests
and answers over the wire are exercised by tests/integration/test_replication.py."""
from __future__ import annotations

import pytest

from kafka_py.log.log_config import api_version
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.server.replica_fetcher_thread import (
    fetch_request_version,
    is_truncation_on_fetch_supported,
    list_offset_request_version,
    offset_for_leader_epoch_request_version,
)


@pytest.mark.parametrize("ibp, fetch, epoch, list_offsets, on_fetch", [
    ("2.8-IV1", 12, 4, 6, True),
    ("2.8-IV0", 12, 4, 6, True),
    ("2.7-IV1", 12, 3, 5, True),
    ("2.7-IV0", 11, 3, 5, False),
    ("2.6", 11, 3, 5, False),
    ("2.4-IV1", 11, 3, 5, False),
    ("2.3-IV0", 10, 2, 5, False),
    ("2.1-IV1", 8, 2, 4, False),
    ("2.0-IV0", 7, 1, 2, False),
    ("0.11.0-IV2", 5, 0, 2, False),
])
def test_request_versions_follow_the_inter_broker_protocol(ibp, fetch, epoch, list_offsets, on_fetch) -> None:
    version = api_version(ibp)
    assert fetch_request_version(version) == fetch
    assert offset_for_leader_epoch_request_version(version) == epoch
    assert list_offset_request_version(version) == list_offsets
    assert is_truncation_on_fetch_supported(version) is on_fetch


def test_the_versions_sent_from_2_4_on_are_served_by_this_broker() -> None:
    # the oldest protocol kafka-py's controller supports is 2.4-IV1
    for ibp in ("2.4-IV1", "2.6", "2.7-IV1", "2.8-IV1"):
        version = api_version(ibp)
        assert ApiKeys.FETCH.is_version_supported(fetch_request_version(version))
        assert ApiKeys.OFFSET_FOR_LEADER_EPOCH.is_version_supported(offset_for_leader_epoch_request_version(version))
        assert ApiKeys.LIST_OFFSETS.is_version_supported(list_offset_request_version(version))
