"""Certificates for a test cluster's SSL listeners. Kafka's counterpart is
clients/src/test/java/org/apache/kafka/test/TestSslUtils.java (``generateKeyPair``,
``CertificateBuilder``), which Kafka's own tests use to make their key stores.

``create_pki(directory)`` makes a CA and two certificates it signs, each written as PEM, the
form kafka-py's brokers and every Python client read:

* ``ca.pem``: the CA's certificate, the trust store of brokers and clients;
* ``server.keystore.pem``: the brokers' key and certificate chain in one file (Kafka's PEM
  key store, ``ssl.keystore.type=PEM``), valid for ``127.0.0.1``, ``::1`` and ``localhost``;
* ``client.pem`` and ``client.key``: a client certificate (``CN=client,O=kafka-py``) for a
  listener that requires one (``ssl.client.auth=required``).

Keys are EC P-256 (Kafka's ``generateKeyPair("EC")``): making one takes a millisecond where an
RSA-2048 key takes a tenth of a second, and a cluster makes three on every start.

The certificates come from the ``cryptography`` package, imported only when a cluster with
an SSL listener starts; ``pip install 'kafka-py[testing]'`` installs it.
"""
from __future__ import annotations

import datetime
import ipaddress
import os
import pathlib
from dataclasses import dataclass

CA_NAME = "kafka-py test CA"
SERVER_NAME = "localhost"
CLIENT_DN = "CN=client,O=kafka-py"
# Valid from an hour ago (a clock a little behind this one still accepts them) for 30 days,
# Kafka's CertificateBuilder's default span: long enough for a session-scoped cluster.
VALID_DAYS = 30


@dataclass(frozen=True)
class Pki:
    """Where ``create_pki`` wrote each file."""

    ca_cert: pathlib.Path
    server_keystore: pathlib.Path
    client_cert: pathlib.Path
    client_key: pathlib.Path


def _cryptography():
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError as e:
        raise RuntimeError("an SSL listener needs certificates made with the cryptography package: "
                           "pip install 'kafka-py[testing]' (or pip install cryptography)") from e
    return x509, hashes, serialization, ec, ExtendedKeyUsageOID, NameOID


def generate_key_pair():
    """A new EC P-256 private key (its public key inside)."""
    _, _, _, ec, _, _ = _cryptography()
    return ec.generate_private_key(ec.SECP256R1())


class CertificateBuilder:
    """An X.509 v3 certificate for a key, signed by an issuer (itself for a CA)."""

    def __init__(self, days: int = VALID_DAYS) -> None:
        self.days = days
        self.dns_names: list[str] = []
        self.ip_addresses: list[str] = []
        self.ca = False
        self.usages: list[str] = []

    def san_dns_names(self, *names: str) -> "CertificateBuilder":
        self.dns_names.extend(names)
        return self

    def san_ip_addresses(self, *addresses: str) -> "CertificateBuilder":
        self.ip_addresses.extend(addresses)
        return self

    def certificate_authority(self) -> "CertificateBuilder":
        self.ca = True
        return self

    def extended_key_usage(self, *usages: str) -> "CertificateBuilder":
        """``"server"`` and/or ``"client"``."""
        self.usages.extend(usages)
        return self

    def generate(self, subject: dict[str, str], key, issuer_name=None, issuer_key=None):
        """The certificate of ``key`` for ``subject`` (``{"CN": ..., "O": ...}``), signed by
        ``issuer_key`` under ``issuer_name``, or self-signed when no issuer is given."""
        x509, hashes, _, _, usage_oids, name_oids = _cryptography()
        attributes = {"CN": name_oids.COMMON_NAME, "O": name_oids.ORGANIZATION_NAME}
        name = x509.Name([x509.NameAttribute(attributes[k], v) for k, v in subject.items()])
        now = datetime.datetime.now(datetime.timezone.utc)
        builder = (x509.CertificateBuilder()
                   .subject_name(name)
                   .issuer_name(issuer_name if issuer_name is not None else name)
                   .public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(hours=1))
                   .not_valid_after(now + datetime.timedelta(days=self.days))
                   .add_extension(x509.BasicConstraints(ca=self.ca, path_length=None), critical=True))
        if self.ca:
            builder = builder.add_extension(
                x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                              data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                              encipher_only=False, decipher_only=False), critical=True)
            builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                                            critical=False)
        if self.dns_names or self.ip_addresses:
            names = [x509.DNSName(n) for n in self.dns_names]
            names += [x509.IPAddress(ipaddress.ip_address(a)) for a in self.ip_addresses]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        if self.usages:
            oids = {"server": usage_oids.SERVER_AUTH, "client": usage_oids.CLIENT_AUTH}
            builder = builder.add_extension(x509.ExtendedKeyUsage([oids[u] for u in self.usages]), critical=False)
        if issuer_key is not None:
            # OpenSSL 3 looks the issuer up by this identifier when the chain is built
            builder = builder.add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
        return builder.sign(issuer_key if issuer_key is not None else key, hashes.SHA256())


def _pem(certificate) -> bytes:
    _, _, serialization, _, _, _ = _cryptography()
    return certificate.public_bytes(serialization.Encoding.PEM)


def _key_pem(key) -> bytes:
    _, _, serialization, _, _, _ = _cryptography()
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _write(path: pathlib.Path, data: bytes, private: bool = False) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def create_pki(directory: pathlib.Path) -> Pki:
    """A CA, a server certificate for the loopback addresses and a client certificate, in
    ``directory`` (made if missing)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = generate_key_pair()
    ca = CertificateBuilder().certificate_authority().generate({"CN": CA_NAME}, ca_key)
    server_key = generate_key_pair()
    server = (CertificateBuilder().san_dns_names(SERVER_NAME).san_ip_addresses("127.0.0.1", "::1")
              .extended_key_usage("server", "client")
              .generate({"CN": SERVER_NAME, "O": "kafka-py"}, server_key, ca.subject, ca_key))
    client_key = generate_key_pair()
    client = (CertificateBuilder().extended_key_usage("client")
              .generate({"O": "kafka-py", "CN": "client"}, client_key, ca.subject, ca_key))
    pki = Pki(directory / "ca.pem", directory / "server.keystore.pem", directory / "client.pem",
              directory / "client.key")
    _write(pki.ca_cert, _pem(ca))
    # the key first, then the chain up to the CA: the layout Kafka's PEM key stores have
    _write(pki.server_keystore, _key_pem(server_key) + _pem(server) + _pem(ca), private=True)
    _write(pki.client_cert, _pem(client) + _pem(ca))
    _write(pki.client_key, _key_pem(client_key), private=True)
    return pki
