"""Java key and trust stores made with the JDK's ``keytool`` (the Java runtime Debian's zookeeper
package brings) and ``openssl``, around the CA of tests/security/certs.py.

``make_java_stores(dir, pki)`` writes, for the broker (CN=localhost, SAN localhost/127.0.0.1):

* ``broker.jks``: a key pair made by ``keytool -genkeypair`` in a JKS store, its certificate
  signed by the test CA and imported back with the CA as one chain (``-importcert``); the
  key is kept under its own password (``KEY_PASSWORD``), the store under ``STORE_PASSWORD``;
* ``broker.p12``: the same entry converted by ``keytool -importkeystore`` to PKCS12 (one
  password, ``STORE_PASSWORD``, for the file and the key);
* ``broker-renewed.p12``: a second key and certificate with the same subject and names, as an
  operator's renewed certificate (``openssl pkcs12 -export``, ``STORE_PASSWORD``);
* ``broker-other-password.p12``: a third one under ``OTHER_PASSWORD``;
* ``truststore.jks`` and ``truststore.p12``: the CA as a trusted certificate entry
  (``keytool -importcert``, ``TRUST_PASSWORD``);

and for a client (the client certificate of certs.py): ``client.p12`` (``openssl pkcs12
-export``, ``STORE_PASSWORD``).
"""
from __future__ import annotations

import pathlib
import subprocess
from dataclasses import dataclass

from tests.security.certs import Pki

STORE_PASSWORD = "store-secret"
KEY_PASSWORD = "key-secret"
TRUST_PASSWORD = "trust-secret"
OTHER_PASSWORD = "other-secret"
BROKER_SUBJECT = "/CN=localhost"
BROKER_EXTENSIONS = "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n"
# A JVM per keytool run is most of these stores' cost: the client compiler only and the
# serial collector start it sooner.
_KEYTOOL = ["keytool", "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"]


@dataclass
class JavaStores:
    broker_jks: pathlib.Path
    broker_p12: pathlib.Path
    broker_renewed_p12: pathlib.Path
    broker_other_password_p12: pathlib.Path
    truststore_jks: pathlib.Path
    truststore_p12: pathlib.Path
    client_p12: pathlib.Path


def _start(args: list[str], cwd: pathlib.Path) -> subprocess.Popen:
    return subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait(process: subprocess.Popen) -> None:
    output, _ = process.communicate(timeout=180)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(process.args)} failed: {output}")


def _run(args: list[str], cwd: pathlib.Path) -> None:
    _wait(_start(args, cwd))


def _openssl_p12(d: pathlib.Path, pki: Pki, name: str, password: str) -> pathlib.Path:
    """A new broker key and certificate (the same subject and names) in a PKCS12 store."""
    _run(["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
          f"{name}.csr", "-subj", BROKER_SUBJECT], d)
    (d / f"{name}.ext").write_text(BROKER_EXTENSIONS)
    _sign(d, pki, name)
    _run(["openssl", "pkcs12", "-export", "-in", f"{name}.crt", "-inkey", f"{name}.key", "-certfile",
          str(pki.ca_cert), "-name", "broker", "-out", f"{name}.p12", "-passout", f"pass:{password}"], d)
    return d / f"{name}.p12"


def _sign(d: pathlib.Path, pki: Pki, name: str) -> None:
    (d / f"{name}.ext").write_text(BROKER_EXTENSIONS)
    _run(["openssl", "x509", "-req", "-in", f"{name}.csr", "-CA", str(pki.ca_cert), "-CAkey",
          str(pki.ca_cert.with_name("ca.key")), "-CAcreateserial", "-out", f"{name}.crt", "-days", "2",
          "-sha256", "-extfile", f"{name}.ext"], d)


def make_java_stores(d: pathlib.Path, pki: Pki) -> JavaStores:
    d.mkdir(parents=True, exist_ok=True)
    # The trust stores are made while the broker's key store is.
    trust = [_start([*_KEYTOOL, "-importcert", "-alias", "ca", "-file", str(pki.ca_cert), "-noprompt", "-keystore",
                     name, "-storetype", store_type, "-storepass", TRUST_PASSWORD], d)
             for store_type, name in (("JKS", "truststore.jks"), ("PKCS12", "truststore.p12"))]
    jks = ["-keystore", "broker.jks", "-storetype", "JKS", "-storepass", STORE_PASSWORD, "-keypass", KEY_PASSWORD]
    _run([*_KEYTOOL, "-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
          "-dname", BROKER_SUBJECT[1:], *jks], d)
    _run([*_KEYTOOL, "-certreq", "-alias", "broker", "-file", "broker.csr", *jks], d)
    _sign(d, pki, "broker")
    # the CA's reply: the signed certificate and the CA, one chain
    (d / "broker-chain.crt").write_text((d / "broker.crt").read_text() + pki.ca_cert.read_text())
    _run([*_KEYTOOL, "-importcert", "-alias", "broker", "-file", "broker-chain.crt", "-noprompt", *jks], d)
    p12 = _start([*_KEYTOOL, "-importkeystore", "-srckeystore", "broker.jks", "-srcstoretype", "JKS",
                  "-srcstorepass", STORE_PASSWORD, "-srcalias", "broker", "-srckeypass", KEY_PASSWORD,
                  "-destkeystore", "broker.p12", "-deststoretype", "PKCS12", "-deststorepass", STORE_PASSWORD,
                  "-destkeypass", STORE_PASSWORD, "-noprompt"], d)
    renewed = _openssl_p12(d, pki, "broker-renewed", STORE_PASSWORD)
    other = _openssl_p12(d, pki, "broker-other-password", OTHER_PASSWORD)
    _run(["openssl", "pkcs12", "-export", "-in", str(pki.client_cert), "-inkey", str(pki.client_key),
          "-certfile", str(pki.ca_cert), "-name", "client", "-out", "client.p12",
          "-passout", f"pass:{STORE_PASSWORD}"], d)
    for process in (*trust, p12):
        _wait(process)
    return JavaStores(d / "broker.jks", d / "broker.p12", renewed, other, d / "truststore.jks",
                      d / "truststore.p12", d / "client.p12")
