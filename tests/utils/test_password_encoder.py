"""kafka_py/core/utils/password_encoder.py, and how DynamicBrokerConfig keeps dynamic passwords with it.

The two encoded values below were written by Java's SecretKeyFactory and Cipher as Kafka
2.8.2's PasswordEncoder uses them (PBKDF2WithHmacSHA512, a 256-byte salt, 4096 iterations,
a 128-bit AES key, CBC with PKCS5 padding and GCM), secret "s3cret", password "store-sécret".
"""
from __future__ import annotations

import pytest

from kafka_py.server.dynamic_broker_config import DynamicBrokerConfig, is_password_config
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.clients.common.config.config_def import ConfigException, Password
from kafka_py.core.utils.password_encoder import PasswordEncoder, _parse_csv_map

JAVA_CBC = (
    "keyFactoryAlgorithm:PBKDF2WithHmacSHA512,"
    "cipherAlgorithm:AES/CBC/PKCS5Padding,"
    "keyLength:128,"
    "salt:6W73PnH1F0WKRaW9kfZx1krsmjo1eB5jLxcgkHGVFMuylZiRtoZuYaE5E16QG9ZbD4I5J+rpivj0MXvGUHs"
    "xf1uk0RDCOA3i+s09Vp4J5qMkNPzRfyIs6ZBrv/u83Kijxpj9vsjlu9idA9dhyXrD/7Y7v5PyXnaw2E7ZWZqnIzr"
    "2xodgKXdEDcwChNirT6Hc8pcexIzjCa9Un46TzwsFaNw5OCMtkKpzW1+sACHRcqPTZix1Zc/q8jlWsc64muNbKUn"
    "wV0A/GVxJO0L9mncrxP+dCW7r+1qfFWrtBP7lOVI3nWr/WgG4CNFip9xbIR5o3trUHkTw3JTOJNhaSbpt9g==,"
    "iterations:4096,"
    "encryptedPassword:bD6x/CY+Cf1/qrxqXjxtgg==,"
    "passwordLength:12,"
    "initializationVector:CK9VgcrOJtKNZyqhfJp/uQ=="
)
JAVA_GCM = (
    "keyFactoryAlgorithm:PBKDF2WithHmacSHA512,"
    "cipherAlgorithm:AES/GCM/NoPadding,"
    "keyLength:128,"
    "salt:6N24CVkyprL5IgpEOubi9O6jEcb0Zpz4Ak3Qx45gIGiS/RCuiOjJ6UdNr0hBz6Jj2nSSUv3hCxywGyOmSMw"
    "npB5b+F+OP6sxUC5jP21ERQ0HcMAfH6Zew3mo4dZHid477z3V4y3S6ObJ74/u1xbHKZf+kcH/jRPPvkvW3NBbmlE"
    "vJMIN5jO2BwjbuaBDwwo/vhvLqQZ8HtsmPCmQ3HUz/cXEuHDj12IcLSq2qF1gK+hDwZrDwfhHnB2JBKgtcxzE9RH"
    "U46rVSygZdcAhGgmG/LzYcrUqPbC+G1m6L6v5AD0pAxkpK0Uu81j5LekpBk5lqUYDIIv3HutKHs/AJlp7Cw==,"
    "iterations:4096,"
    "encryptedPassword:SkwX9PsyqCLnd1m53DbykGyfl3N07IGV6B3xxQU=,"
    "passwordLength:12,"
    "initializationVector:Kp1yu8bMyDG76aQj,"
    "authenticationTagLength:128"
)


def test_decodes_what_java_encoded() -> None:
    encoder = PasswordEncoder(Password("s3cret"))
    assert encoder.decode(JAVA_CBC).value == "store-sécret"
    assert encoder.decode(JAVA_GCM).value == "store-sécret"
    with pytest.raises(ConfigException, match="could not be decoded"):
        PasswordEncoder(Password("another secret")).decode(JAVA_CBC)


@pytest.mark.parametrize("cipher, key_length", [("AES/CBC/PKCS5Padding", 128), ("AES/GCM/NoPadding", 256)])
def test_encoded_passwords_carry_their_parameters(cipher, key_length) -> None:
    encoder = PasswordEncoder(Password("s3cret"), None, cipher, key_length, 2048)
    encoded = encoder.encode(Password("p@ss:word,1"))
    fields = _parse_csv_map(encoded)
    assert fields["keyFactoryAlgorithm"] == "PBKDF2WithHmacSHA512" and fields["cipherAlgorithm"] == cipher
    assert fields["keyLength"] == str(key_length) and fields["iterations"] == "2048"
    assert fields["passwordLength"] == "11" and "p@ss" not in encoded
    assert encoder.encode(Password("p@ss:word,1")) != encoded  # a fresh salt and IV each time
    # decoding follows the stored parameters, not the decoder's own settings
    assert PasswordEncoder(Password("s3cret")).decode(encoded).value == "p@ss:word,1"
    tampered = encoded.replace(f"passwordLength:{fields['passwordLength']}", "passwordLength:12")
    with pytest.raises(ConfigException, match="sanity check"):
        encoder.decode(tampered)


def test_bad_settings_and_values_are_config_errors() -> None:
    with pytest.raises(ConfigException) as info:
        PasswordEncoder(Password("s"), "PBKDF2WithMD5")
    assert info.value.name == "password.encoder.keyfactory.algorithm"
    with pytest.raises(ConfigException) as info:
        PasswordEncoder(Password("s"), None, "DES/CBC/PKCS5Padding")
    assert info.value.name == "password.encoder.cipher.algorithm"
    with pytest.raises(ConfigException, match="could not be decoded"):
        PasswordEncoder(Password("s")).decode("keyFactoryAlgorithm:PBKDF2WithHmacSHA512,salt:%%%")


def _dynamic_config(**props: str) -> DynamicBrokerConfig:
    return DynamicBrokerConfig(KafkaConfig({"zookeeper.connect": "127.0.0.1:1", **props}, do_log=False))


def test_dynamic_passwords_are_encrypted_for_zookeeper() -> None:
    name = "listener.name.ssl.ssl.keystore.password"
    assert is_password_config(name) and not is_password_config("listener.name.ssl.ssl.keystore.location")
    props = {name: "store-secret", "listener.name.ssl.ssl.keystore.location": "/etc/kafka/broker.p12"}
    with pytest.raises(ConfigException, match="Password encoder secret not configured") as info:
        _dynamic_config().to_persistent_props(props, per_broker_config=True)
    assert info.value.name == name and "store-secret" not in str(info.value)

    dynamic = _dynamic_config(**{"password.encoder.secret": "s3cret"})
    with pytest.raises(ConfigException, match="only at broker level"):
        dynamic.to_persistent_props(props, per_broker_config=False)
    persistent = dynamic.to_persistent_props(props, per_broker_config=True)
    assert "encryptedPassword:" in persistent[name] and "store-secret" not in persistent[name]
    assert persistent["listener.name.ssl.ssl.keystore.location"] == "/etc/kafka/broker.p12"
    assert dynamic.from_persistent_props(persistent, per_broker_config=True) == props
    # what another secret encrypted is dropped (and logged), the rest is kept
    other = _dynamic_config(**{"password.encoder.secret": "not-it"})
    assert other.from_persistent_props(persistent, per_broker_config=True) == {
        "listener.name.ssl.ssl.keystore.location": "/etc/kafka/broker.p12"}
    # and a Java broker's value reads
    assert dynamic.from_persistent_props({name: JAVA_CBC}, per_broker_config=True) == {name: "store-sécret"}
