"""The connections gauges' bookkeeping: a connection's client software and cipher move its
count, a gauge at zero stays until a full suite needs its room, and binding registers the
gauges that already exist."""
from __future__ import annotations

from types import SimpleNamespace

from kafka_py.network.channel_metadata_registry import (
    EMPTY_CLIENT_INFORMATION,
    ChannelMetadataRegistry,
    CipherInformation,
    ClientInformation,
    IntGaugeSuite,
    client_information_of,
)


def test_registering_moves_a_connection_and_closing_takes_it_off() -> None:
    clients: IntGaugeSuite = IntGaugeSuite("clients")
    ciphers: IntGaugeSuite = IntGaugeSuite("sslCiphers")
    registered: dict = {}
    clients.bind(lambda key, read: registered.__setitem__(key, read), registered.pop)
    a = ChannelMetadataRegistry(clients, ciphers)
    b = ChannelMetadataRegistry(clients, ciphers)
    for channel in (a, b):
        channel.register_client_information(EMPTY_CLIENT_INFORMATION)
    assert clients.value(EMPTY_CLIENT_INFORMATION) == 2
    python = ClientInformation("kafka-python", "3.0.12")
    a.register_client_information(python)
    a.register_client_information(python)  # the same again: no change
    assert clients.values() == {EMPTY_CLIENT_INFORMATION: 1, python: 1}
    other = ClientInformation("kafka-python", "3.1.0")
    a.register_client_information(other)  # a second ApiVersions with another version
    assert clients.values() == {EMPTY_CLIENT_INFORMATION: 1, python: 0, other: 1}
    # the gauges read the counts; the one at zero is still registered
    assert {key: read() for key, read in registered.items()} == clients.values()
    b.register_cipher_information(CipherInformation.of("TLS_AES_128_GCM_SHA256", "TLSv1.3"))
    a.close()
    b.close()
    assert set(clients.values().values()) == {0}
    assert ciphers.values() == {CipherInformation("TLS_AES_128_GCM_SHA256", "TLSv1.3"): 0}
    clients.close()
    assert registered == {}


def test_a_full_suite_makes_room_from_gauges_at_zero_only() -> None:
    suite: IntGaugeSuite = IntGaugeSuite("clients", max_entries=2)
    removed: list = []
    suite.increment("a")
    suite.increment("b")
    added: list = []
    suite.bind(lambda key, read: added.append(key), removed.append)
    assert added == ["a", "b"]
    suite.increment("c")  # full, nothing at zero: not counted
    assert suite.value("c") == 0 and "c" not in suite.values()
    suite.decrement("a")
    suite.increment("c")
    assert removed == ["a"] and suite.values() == {"b": 1, "c": 1}
    suite.decrement("c")
    suite.increment("c")  # back from zero: no longer removable
    suite.decrement("b")
    suite.increment("d")
    assert removed == ["a", "b"] and suite.values() == {"c": 1, "d": 1}


def test_client_information_of_an_api_versions_request() -> None:
    def body(name: str, version: str) -> SimpleNamespace:
        return SimpleNamespace(client_software_name=name, client_software_version=version)

    assert client_information_of(3, body("confluent-kafka-python", "2.16.1-rdkafka-2.16.1")) == \
        ClientInformation("confluent-kafka-python", "2.16.1-rdkafka-2.16.1")
    assert client_information_of(3, body("bad name", "1")) is None
    assert client_information_of(3, body("x", "")) is None
    assert client_information_of(3, body("-x", "1")) is None
    # before v3 nothing is named
    assert client_information_of(2, SimpleNamespace()) == EMPTY_CLIENT_INFORMATION
