"""ConnectionQuotas: per-IP limits and overrides, the broker limit, the inter-broker allowance."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from kafka_py.core.cluster.broker import ListenerName
from kafka_py.clients.common.errors import KafkaException
from kafka_py.network.connection_quotas import (
    ConnectionQuotas,
    TooManyConnectionsException,
    normalize_address,
    parse_max_connections_per_ip_overrides,
)
from kafka_py.core.utils.java_limits import INT_MAX


@dataclass(frozen=True)
class QuotaConfig:
    max_connections_per_ip: int = INT_MAX
    max_connections_per_ip_overrides: object = ""
    max_connections: int = INT_MAX
    inter_broker_listener_name: ListenerName = ListenerName("REPLICATION")
    max_connection_creation_rate: int = INT_MAX
    num_quota_samples: int = 11
    quota_window_size_seconds: int = 1
    originals: dict = field(default_factory=dict)


def test_per_ip_limit_counts_then_rejects() -> None:
    quotas = ConnectionQuotas(QuotaConfig(max_connections_per_ip=2))
    quotas.add_listener("PLAINTEXT")
    assert quotas.inc("PLAINTEXT", "10.0.0.1")
    assert quotas.inc("PLAINTEXT", "10.0.0.1")
    with pytest.raises(TooManyConnectionsException) as e:
        quotas.inc("PLAINTEXT", "10.0.0.1")
    assert (e.value.ip, e.value.count) == ("10.0.0.1", 2)
    # The rejected connection is counted until its close is.
    assert quotas.get("10.0.0.1") == 3
    quotas.dec("PLAINTEXT", "10.0.0.1")
    assert quotas.get("10.0.0.1") == 2
    assert quotas.inc("PLAINTEXT", "10.0.0.2")
    for _ in range(2):
        quotas.dec("PLAINTEXT", "10.0.0.1")
    assert quotas.get("10.0.0.1") == 0
    quotas.dec("PLAINTEXT", "10.0.0.1")  # logged, not raised
    assert quotas.total_count == 1


def test_overrides_parse_and_apply() -> None:
    assert parse_max_connections_per_ip_overrides("127.0.0.1:5, localhost:7,[::1]:3") == {
        "127.0.0.1": 7, "::1": 3}
    assert parse_max_connections_per_ip_overrides({"10.1.1.1": "4"}) == {"10.1.1.1": 4}
    assert parse_max_connections_per_ip_overrides("") == {}
    with pytest.raises(KafkaException, match="no-such-host.invalid"):
        parse_max_connections_per_ip_overrides("no-such-host.invalid:3")
    quotas = ConnectionQuotas(QuotaConfig(max_connections_per_ip=1,
                                          max_connections_per_ip_overrides="10.0.0.9:0,10.0.0.8:3"))
    with pytest.raises(TooManyConnectionsException):
        quotas.inc("PLAINTEXT", "10.0.0.9")
    for _ in range(3):
        quotas.inc("PLAINTEXT", "10.0.0.8")
    with pytest.raises(TooManyConnectionsException):
        quotas.inc("PLAINTEXT", "10.0.0.8")


def test_ipv4_mapped_addresses_count_as_ipv4() -> None:
    assert normalize_address("::ffff:127.0.0.1") == "127.0.0.1"
    assert normalize_address("::1") == "::1"
    assert normalize_address("fe80::1%eth0") == "fe80::1"


def test_broker_limit_blocks_until_a_connection_closes() -> None:
    quotas = ConnectionQuotas(QuotaConfig(max_connections=2))
    quotas.add_listener("PLAINTEXT")
    quotas.inc("PLAINTEXT", "10.0.0.1")
    quotas.inc("PLAINTEXT", "10.0.0.2")
    entered, returned = threading.Event(), threading.Event()

    def third():
        entered.set()
        quotas.inc("PLAINTEXT", "10.0.0.3")
        returned.set()

    thread = threading.Thread(target=third)
    thread.start()
    assert entered.wait(10)
    assert quotas.get("10.0.0.3") == 0
    quotas.dec("PLAINTEXT", "10.0.0.1")
    assert returned.wait(10)
    thread.join(10)
    assert quotas.get("10.0.0.3") == 1 and quotas.total_count == 2


def test_waiting_for_a_slot_gives_up_when_told() -> None:
    quotas = ConnectionQuotas(QuotaConfig(max_connections=1))
    quotas.inc("PLAINTEXT", "10.0.0.1")
    keep_waiting = True
    result = []
    thread = threading.Thread(
        target=lambda: result.append(quotas.inc("PLAINTEXT", "10.0.0.2", lambda: keep_waiting)))
    thread.start()
    keep_waiting = False
    quotas.wake_waiters()
    thread.join(10)
    assert result == [False]
    assert quotas.get("10.0.0.2") == 0


def test_inter_broker_listener_may_exceed_the_broker_limit() -> None:
    quotas = ConnectionQuotas(QuotaConfig(max_connections=1))
    for listener in ("PLAINTEXT", "REPLICATION"):
        quotas.add_listener(listener)
    quotas.inc("PLAINTEXT", "10.0.0.1")
    assert quotas.inc("REPLICATION", "10.0.0.2")  # would block on any other listener
    assert quotas.max_connections_exceeded("PLAINTEXT")
    assert not quotas.max_connections_exceeded("REPLICATION")
    quotas.dec("PLAINTEXT", "10.0.0.1")
    assert not quotas.max_connections_exceeded("PLAINTEXT")


def test_dynamic_updates() -> None:
    config = QuotaConfig(max_connections_per_ip=1)
    quotas = ConnectionQuotas(config)
    quotas.inc("PLAINTEXT", "10.0.0.1")
    quotas.update_max_connections_per_ip(2, "")
    quotas.inc("PLAINTEXT", "10.0.0.1")
    quotas.update_broker_max_connections(5)
    assert not quotas.max_connections_exceeded("PLAINTEXT")
    with pytest.raises(TooManyConnectionsException):
        quotas.inc("PLAINTEXT", "10.0.0.1")
