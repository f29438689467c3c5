"""A broker with every kind of listener, shared by the security tests of a module.

PLAINTEXT (the harness's readiness checks use it), SSL (client certificates requested),
MTLS (an SSL listener whose per-listener keys require a client certificate and map its DN
with a rule), SASL_PLAINTEXT (PLAIN and SCRAM) and SASL_SSL (SCRAM-SHA-512 and PLAIN). A module marked with
``metadata_modes`` gets it as a ZooKeeper-mode broker or as a KRaft node that is its own quorum
(its CONTROLLER listener beside these).
"""
from __future__ import annotations

import pathlib
from dataclasses import dataclass

import pytest

from tests.integration.broker_harness import free_port
from tests.integration.conftest import AnyBroker, new_broker
from tests.integration.conftest import broker_factory  # noqa: F401 - re-exported fixture
from tests.integration.kraft_harness import listener_overrides
from tests.security.certs import Pki, make_pki

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'user_alice="alice-secret" user_bob="bob-secret";')


@dataclass
class SecureBroker:
    process: AnyBroker
    pki: Pki
    ports: dict[str, int]

    def bootstrap(self, listener: str) -> str:
        return f"127.0.0.1:{self.ports[listener]}"


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Pki:
    return make_pki(pathlib.Path(tmp_path_factory.mktemp("pki")))


@pytest.fixture(scope="module")
def secure_broker(request, metadata_mode, tmp_path_factory, pki):
    protocols = {"SSL": "SSL", "MTLS": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL"}
    ports = {name: free_port() for name in protocols}
    metrics_port = free_port()
    broker = new_broker(request, metadata_mode, tmp_path_factory.mktemp("secure-broker"))
    broker.overrides.update(listener_overrides(broker, {n: (protocols[n], p) for n, p in ports.items()}))
    broker.overrides.update({
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(pki.server_keystore),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(pki.ca_cert),
        "ssl.client.auth": "requested",
        "listener.name.mtls.ssl.client.auth": "required",
        "listener.name.mtls.ssl.principal.mapping.rules": "RULE:^CN=(.*?),OU=(.*?),.*$/$1.$2/L,DEFAULT",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "connection.failed.authentication.delay.ms": "50",
        "sasl.server.max.receive.size": "4096",
        "kafka.py.metrics.prometheus.port": str(metrics_port),
        "kafka.py.metrics.prometheus.host": "127.0.0.1",
    })
    broker.metrics_port = metrics_port
    broker.write_config()
    broker.start()
    yield SecureBroker(broker, pki, ports)
    if broker.running:
        assert broker.stop() == 0, broker.tail()
