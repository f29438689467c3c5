"""Port of clients/src/main/java/org/apache/kafka/common/security/ssl/SslFactory.java and
DefaultSslEngineFactory.java (Kafka 2.8.2): an ``ssl.SSLContext`` from a listener's
``ssl.*`` configuration.

Key and trust stores are PEM (``ssl.keystore.type=PEM``): a file holding the private
key and the certificate chain (``ssl.keystore.location``, the key optionally encrypted
with ``ssl.key.password``), or the same inline (``ssl.keystore.certificate.chain`` and
``ssl.keystore.key``); trusted certificates from ``ssl.truststore.location`` or
``ssl.truststore.certificates``. Renegotiation is refused (``OP_NO_RENEGOTIATION``):
it would let a client restart a handshake under a connection the broker already
authenticated. Every problem is a ConfigException naming the key, raised at startup.
"""
from __future__ import annotations

import os
import ssl
import tempfile
from typing import Optional

from kafka_py.security.listener_config import ListenerSecurityConfig

_PROTOCOLS = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


def _load_inline_cert_chain(context: ssl.SSLContext, chain: str, key: str, password: Optional[str]) -> None:
    # load_cert_chain reads files only: write the PEM to a private temporary file for
    # the duration of the call.
    fd, path = tempfile.mkstemp(prefix="kafka-py-keystore-", suffix=".pem")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(key.strip() + "\n" + chain.strip() + "\n")
        context.load_cert_chain(path, password=password)
    finally:
        os.unlink(path)


def _configure_protocols(context: ssl.SSLContext, config: ListenerSecurityConfig) -> None:
    protocols = config.get("ssl.enabled.protocols") or []
    unknown = [p for p in protocols if p not in _PROTOCOLS]
    if unknown or not protocols:
        raise config.error("ssl.enabled.protocols",
                           f"unknown TLS versions {unknown}; allowed: {', '.join(_PROTOCOLS)}" if unknown
                           else "at least one TLS version must be enabled")
    versions = sorted(_PROTOCOLS[p] for p in protocols)
    context.minimum_version = versions[0]
    context.maximum_version = versions[-1]


def _configure_ciphers(context: ssl.SSLContext, config: ListenerSecurityConfig) -> None:
    suites = [s for s in (config.get("ssl.cipher.suites") or []) if s]
    # TLS 1.3 suites (TLS_AES_...) are not selectable through Python's ssl module; they
    # stay enabled. The rest are OpenSSL names of TLS 1.2 suites.
    tls12 = [s for s in suites if not s.startswith("TLS_AES_") and not s.startswith("TLS_CHACHA20_")]
    if tls12:
        try:
            context.set_ciphers(":".join(tls12))
        except ssl.SSLError as e:
            raise config.error("ssl.cipher.suites", f"no usable cipher suite ({e}); use OpenSSL names") from None


def _configure_trust(context: ssl.SSLContext, config: ListenerSecurityConfig, required: bool) -> bool:
    location = config.get_string("ssl.truststore.location")
    inline = config.get_string("ssl.truststore.certificates")
    if location is None and inline is None:
        if required:
            raise config.error("ssl.truststore.location",
                               "a trust store is needed to verify client certificates "
                               "(ssl.client.auth is requested or required)")
        return False
    if config.get_string("ssl.truststore.type") != "PEM":
        raise config.error("ssl.truststore.type", "kafka-py reads PEM trust stores only; set ssl.truststore.type=PEM")
    try:
        if location is not None:
            context.load_verify_locations(cafile=location)
        else:
            context.load_verify_locations(cadata=inline)
    except (OSError, ssl.SSLError, ValueError) as e:
        key = "ssl.truststore.location" if location is not None else "ssl.truststore.certificates"
        raise config.error(key, f"cannot load trusted certificates: {e}",
                           show_value=location is not None) from None
    return True


def _configure_key_store(context: ssl.SSLContext, config: ListenerSecurityConfig, required: bool) -> None:
    location = config.get_string("ssl.keystore.location")
    chain = config.get_string("ssl.keystore.certificate.chain")
    key = config.get_string("ssl.keystore.key")
    if location is None and chain is None and key is None:
        if required:
            raise config.error("ssl.keystore.location", "an SSL listener needs a key store "
                               "(ssl.keystore.location, or ssl.keystore.certificate.chain and ssl.keystore.key)")
        return
    if config.get_string("ssl.keystore.type") != "PEM":
        raise config.error("ssl.keystore.type", "kafka-py reads PEM key stores only; set ssl.keystore.type=PEM")
    password = config.get_string("ssl.key.password")
    try:
        if location is not None:
            context.load_cert_chain(location, password=password)
        else:
            if chain is None or key is None:
                missing = "ssl.keystore.key" if key is None else "ssl.keystore.certificate.chain"
                raise config.error(missing, "inline PEM key stores need both ssl.keystore.certificate.chain "
                                   "and ssl.keystore.key", show_value=False)
            _load_inline_cert_chain(context, chain, key, password)
    except (OSError, ssl.SSLError, ValueError) as e:
        name = "ssl.keystore.location" if location is not None else "ssl.keystore.key"
        raise config.error(name, f"cannot load the private key and certificate chain: {e}",
                           show_value=location is not None) from None


def create_server_context(config: ListenerSecurityConfig) -> ssl.SSLContext:
    """The SSLContext of an SSL or SASL_SSL listener."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.options |= ssl.OP_NO_RENEGOTIATION | ssl.OP_NO_COMPRESSION
    _configure_protocols(context, config)
    _configure_ciphers(context, config)
    _configure_key_store(context, config, required=True)
    client_auth = (config.get_string("ssl.client.auth") or "none").lower()
    has_trust = _configure_trust(context, config, required=client_auth != "none")
    context.verify_mode = _CLIENT_AUTH[client_auth] if has_trust else ssl.CERT_NONE
    return context


def create_client_context(config: ListenerSecurityConfig) -> ssl.SSLContext:
    """The SSLContext a broker connects to other brokers with (inter-broker listener)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.options |= ssl.OP_NO_RENEGOTIATION | ssl.OP_NO_COMPRESSION
    _configure_protocols(context, config)
    _configure_ciphers(context, config)
    _configure_key_store(context, config, required=False)
    if not _configure_trust(context, config, required=False):
        context.load_default_certs()
    # https: the server's certificate must name the host connected to (the host the other
    # broker registered for the listener); empty: any certificate the trust store vouches for.
    algorithm = (config.get_string("ssl.endpoint.identification.algorithm") or "").strip()
    if algorithm and algorithm.lower() != "https":
        raise config.error("ssl.endpoint.identification.algorithm",
                           "kafka-py knows https (check the server's host name) or an empty value (do not)")
    context.verify_mode = ssl.CERT_REQUIRED
    context.check_hostname = bool(algorithm)
    return context
