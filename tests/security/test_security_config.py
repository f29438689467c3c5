"""Security configuration: errors that stop startup name the key, and the principal a TLS
listener gives a client certificate (an in-process SocketServer, its request queue read directly)."""
from __future__ import annotations

import pathlib
import socket
import ssl

import pytest

from kafka_py.network.socket_server import SocketServer
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.clients.common.config.config_def import ConfigException
from tests.network.conftest import api_versions_frame
from tests.security.certs import CLIENT_DN, make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(pathlib.Path(tmp_path_factory.mktemp("pki")))


def _config(**props: str) -> KafkaConfig:
    return KafkaConfig({"zookeeper.connect": "127.0.0.1:1", **props}, do_log=False)


def _startup_error(config: KafkaConfig) -> ConfigException:
    server = SocketServer(config)
    try:
        with pytest.raises(ConfigException) as info:
            server.startup(start_processing_requests=False)
        return info.value
    finally:
        server.shutdown()


def test_config_errors_name_the_key(pki, tmp_path) -> None:
    ssl_listener = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"}
    assert _startup_error(_config(**ssl_listener)).name == "ssl.keystore.location"
    error = _startup_error(_config(**ssl_listener, **{"ssl.keystore.location": str(pki.server_keystore)}))
    assert error.name == "ssl.keystore.type" and "PEM" in str(error)
    pem = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.server_keystore)}
    error = _startup_error(_config(**ssl_listener, **{**pem, "ssl.keystore.location": str(tmp_path / "missing")}))
    assert error.name == "ssl.keystore.location"
    error = _startup_error(_config(**ssl_listener, **pem, **{"listener.name.ssl.ssl.client.auth": "required"}))
    assert error.name == "ssl.truststore.location"
    error = _startup_error(_config(**ssl_listener, **pem, **{"ssl.enabled.protocols": "TLSv1.2,SSLv3"}))
    assert error.name == "ssl.enabled.protocols"
    error = _startup_error(_config(**ssl_listener, **pem, **{"listener.name.ssl.ssl.principal.mapping.rules": "X"}))
    assert error.name == "listener.name.ssl.ssl.principal.mapping.rules"
    sasl = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"}
    # the default mechanism, GSSAPI, needs the broker's Krb5LoginModule entry
    error = _startup_error(_config(**sasl))
    assert error.name == "listener.name.sasl_plaintext.gssapi.sasl.jaas.config" and "Krb5LoginModule" in str(error)
    error = _startup_error(_config(**sasl, **{"sasl.enabled.mechanisms": "PLAIN"}))
    assert error.name == "listener.name.sasl_plaintext.plain.sasl.jaas.config"
    error = _startup_error(_config(**sasl, **{"sasl.enabled.mechanisms": "PLAIN",
                                              "sasl.jaas.config": "PlainLoginModule user_a=b"}))
    assert error.name == "sasl.jaas.config" and "[hidden]" in str(error) and "user_a" not in str(error)



def test_inter_broker_client_config_errors_name_the_key(pki) -> None:
    """The broker's own side of a TLS/SASL inter-broker listener is checked at startup too."""
    pem = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.server_keystore),
           "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_cert)}
    internal = {"listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_SSL",
                "inter.broker.listener.name": "INTERNAL", "sasl.enabled.mechanisms": "SCRAM-SHA-512", **pem}
    # the default mechanism (GSSAPI) is not among those the listener enables
    error = _startup_error(_config(**internal))
    assert error.name == "sasl.mechanism.inter.broker.protocol" and "sasl.enabled.mechanisms" in str(error)
    scram = {**internal, "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512"}
    error = _startup_error(_config(**scram))
    assert error.name == "listener.name.internal.scram-sha-512.sasl.jaas.config"
    no_password = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="broker";'
    error = _startup_error(_config(**scram, **{"listener.name.internal.scram-sha-512.sasl.jaas.config": no_password}))
    assert error.name == "listener.name.internal.scram-sha-512.sasl.jaas.config" and "password" in str(error)
    assert "[hidden]" in str(error) and 'username="broker"' not in str(error)
    ssl_internal = {**internal, "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SSL",
                    "listener.name.internal.ssl.endpoint.identification.algorithm": "ldaps"}
    error = _startup_error(_config(**ssl_internal))
    assert error.name == "listener.name.internal.ssl.endpoint.identification.algorithm"


@pytest.mark.parametrize("rules, principal", [
    ("DEFAULT", "User:" + CLIENT_DN),
    ("RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/U", "User:ALICE@ENG"),
])
def test_client_certificate_principal_on_the_request_context(pki, rules, principal) -> None:
    config = _config(**{"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", "ssl.keystore.type": "PEM",
                        "ssl.keystore.location": str(pki.server_keystore), "ssl.truststore.type": "PEM",
                        "ssl.truststore.location": str(pki.ca_cert), "ssl.client.auth": "required",
                        "listener.name.ssl.ssl.principal.mapping.rules": rules})
    server = SocketServer(config)
    server.startup()
    try:
        context = ssl.create_default_context(cafile=str(pki.ca_cert))
        context.load_cert_chain(str(pki.client_cert), str(pki.client_key))
        with socket.create_connection(("127.0.0.1", server.bound_port("SSL")), timeout=15) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                tls.sendall(api_versions_frame(1))
                request = server.request_channel.receive_request(15000)
        assert request is not None
        assert request.context.principal == principal
        assert request.context.security_protocol == "SSL"
    finally:
        server.shutdown()
