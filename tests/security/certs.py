"""A test CA and certificates made with the ``openssl`` command line tool.

``make_pki(dir)`` writes a CA, a server certificate for 127.0.0.1/localhost and a client
certificate (CN=alice,OU=eng,O=kafka-py,C=US), each key next to its certificate, and a
PEM key store per party (key + certificate chain in one file, as Kafka's PEM key stores).
``issue_server_keystore(pki, name)`` issues another key and certificate with the server's
subject and names from the same CA, as a second broker's or a renewed key store.
"""
from __future__ import annotations

import pathlib
import subprocess
from dataclasses import dataclass

CLIENT_SUBJECT = "/C=US/O=kafka-py/OU=eng/CN=alice"
CLIENT_DN = "CN=alice,OU=eng,O=kafka-py,C=US"
SERVER_EXTENSIONS = "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n"


@dataclass
class Pki:
    ca_cert: pathlib.Path
    server_cert: pathlib.Path
    server_key: pathlib.Path
    server_keystore: pathlib.Path
    client_cert: pathlib.Path
    client_key: pathlib.Path
    client_keystore: pathlib.Path


def _run(*args: str, cwd: pathlib.Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _issue(d: pathlib.Path, name: str, subject: str, extensions: str) -> None:
    _run("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
         "-subj", subject, cwd=d)
    (d / f"{name}.ext").write_text(extensions)
    _run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
         "-out", f"{name}.crt", "-days", "2", "-sha256", "-extfile", f"{name}.ext", cwd=d)
    (d / f"{name}.keystore.pem").write_text((d / f"{name}.key").read_text() + (d / f"{name}.crt").read_text())


def make_pki(d: pathlib.Path) -> Pki:
    d.mkdir(parents=True, exist_ok=True)
    _run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
         "-subj", "/CN=kafka-py-test-ca", cwd=d)
    _issue(d, "server", "/CN=localhost", SERVER_EXTENSIONS)
    _issue(d, "client", CLIENT_SUBJECT, "extendedKeyUsage=clientAuth\n")
    return Pki(d / "ca.crt", d / "server.crt", d / "server.key", d / "server.keystore.pem",
               d / "client.crt", d / "client.key", d / "client.keystore.pem")



def issue_server_keystore(pki: Pki, name: str) -> pathlib.Path:
    """A new PEM key store (``<name>.keystore.pem`` beside the CA) with the server's subject and
    names, signed by ``pki``'s CA."""
    _issue(pki.ca_cert.parent, name, "/CN=localhost", SERVER_EXTENSIONS)
    return pki.ca_cert.parent / f"{name}.keystore.pem"
