"""ConnectionQuotas' connection creation rates (KIP-612): the broker's and a listener's rate
make the Acceptor wait, an IP's rate refuses the connection; per-listener limits."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from kafka_py.core.cluster.broker import ListenerName
from kafka_py.network.connection_quotas import ConnectionQuotas, ConnectionThrottledException
from kafka_py.clients.common.config.config_def import ConfigException
from kafka_py.core.utils.java_limits import INT_MAX
from kafka_py.clients.common.utils.time import MockTime


@dataclass(frozen=True)
class RateConfig:
    max_connections_per_ip: int = INT_MAX
    max_connections_per_ip_overrides: object = ""
    max_connections: int = INT_MAX
    max_connection_creation_rate: int = INT_MAX
    inter_broker_listener_name: ListenerName = ListenerName("REPLICATION")
    num_quota_samples: int = 2
    quota_window_size_seconds: int = 1
    originals: dict = field(default_factory=dict)


def test_ip_rate_refuses_connections_over_it_without_counting_them() -> None:
    time = MockTime()
    quotas = ConnectionQuotas(RateConfig(), time)
    quotas.add_listener("PLAINTEXT")
    quotas.update_ip_connection_rate_quota("10.0.0.1", 2)
    assert quotas.inc("PLAINTEXT", "10.0.0.1") and quotas.inc("PLAINTEXT", "10.0.0.1")
    with pytest.raises(ConnectionThrottledException) as e:
        quotas.inc("PLAINTEXT", "10.0.0.1")
    # 3 connections over a 1 s span against 2/s: (3 - 2) / 2 x 1 s.
    assert (e.value.ip, e.value.throttle_time_ms) == ("10.0.0.1", 500)
    assert quotas.get("10.0.0.1") == 2 and quotas.total_count == 2
    assert quotas.inc("PLAINTEXT", "10.0.0.2")  # other addresses are not limited
    time.sleep(2000)  # the windows roll over
    assert quotas.inc("PLAINTEXT", "10.0.0.1")
    # A default for every address, and removing the override falls back to it.
    quotas.update_ip_connection_rate_quota(None, 1)
    quotas.update_ip_connection_rate_quota("10.0.0.1", None)
    assert quotas.connection_rate_for_ip("10.0.0.1") == 1
    assert quotas.inc("PLAINTEXT", "10.0.0.3")
    with pytest.raises(ConnectionThrottledException):
        quotas.inc("PLAINTEXT", "10.0.0.3")
    # A rate of 0 refuses every connection for a whole window.
    quotas.update_ip_connection_rate_quota("10.0.0.4", 0)
    with pytest.raises(ConnectionThrottledException) as e:
        quotas.inc("PLAINTEXT", "10.0.0.4")
    assert e.value.throttle_time_ms == 1000
    quotas.update_ip_connection_rate_quota(None, None)
    for _ in range(5):
        assert quotas.inc("PLAINTEXT", "10.0.0.5")


def _inc_in_thread(quotas: ConnectionQuotas, listener: str, address: str) -> tuple[threading.Thread, list]:
    done: list = []
    thread = threading.Thread(target=lambda: done.append(quotas.inc(listener, address)), daemon=True)
    thread.start()
    return thread, done


def test_broker_rate_makes_the_acceptor_wait_and_changes_at_runtime() -> None:
    time = MockTime()
    quotas = ConnectionQuotas(RateConfig(max_connection_creation_rate=2), time)
    quotas.add_listener("PLAINTEXT")
    assert quotas.inc("PLAINTEXT", "10.0.0.1") and quotas.inc("PLAINTEXT", "10.0.0.2")
    thread, done = _inc_in_thread(quotas, "PLAINTEXT", "10.0.0.3")
    thread.join(0.3)
    assert thread.is_alive() and not done  # waiting out the throttle on the manual clock
    time.sleep(500)
    quotas.wake_waiters()
    thread.join(10)
    assert done == [True] and quotas.total_count == 3
    # Raised at runtime: no more waiting.
    quotas.update_broker_max_connection_rate(INT_MAX)
    for i in range(10):
        assert quotas.inc("PLAINTEXT", f"10.1.0.{i}")


def test_listener_rate_and_max_connections_from_listener_prefixed_keys() -> None:
    time = MockTime()
    config = RateConfig(originals={"listener.name.external.max.connection.creation.rate": "1",
                                   "listener.name.external.max.connections": "2"})
    quotas = ConnectionQuotas(config, time)
    quotas.add_listener("EXTERNAL")
    quotas.add_listener("PLAINTEXT")
    assert quotas.inc("EXTERNAL", "10.0.0.1")
    thread, done = _inc_in_thread(quotas, "EXTERNAL", "10.0.0.1")
    thread.join(0.3)
    assert thread.is_alive()  # over the listener's rate
    for i in range(5):  # the other listener is not limited
        assert quotas.inc("PLAINTEXT", "10.0.0.1")
    time.sleep(2000)
    quotas.wake_waiters()
    thread.join(10)
    assert done == [True]
    # The listener's own max.connections: a third waits for a close.
    time.sleep(2000)
    thread, done = _inc_in_thread(quotas, "EXTERNAL", "10.0.0.2")
    thread.join(0.3)
    assert thread.is_alive()
    quotas.dec("EXTERNAL", "10.0.0.1")
    thread.join(10)
    assert done == [True]


@pytest.mark.parametrize("key, value", [("listener.name.plaintext.max.connection.creation.rate", "-1"),
                                        ("listener.name.plaintext.max.connections", "many")])
def test_bad_listener_values_name_the_key(key, value) -> None:
    quotas = ConnectionQuotas(RateConfig(originals={key: value}), MockTime())
    with pytest.raises(ConfigException, match=key):
        quotas.add_listener("PLAINTEXT")
