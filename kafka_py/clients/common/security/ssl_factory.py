"""Port of clients/src/main/java/org/apache/kafka/common/security/ssl/SslFactory.java and
DefaultSslEngineFactory.java (Kafka 2.8.2): an ``ssl.SSLContext`` from a listener's
``ssl.*`` configuration, and its replacement when the key store changes at runtime.

Store types, as Kafka reads them (``ssl.keystore.type`` / ``ssl.truststore.type``,
JKS by default):

* ``JKS``: a Java key store, read with pyjks; the store password checks the file's
  integrity, the private key is recovered with ``ssl.key.password`` (the store password
  when unset). A trust store without ``ssl.truststore.password`` is read without the
  integrity check, as Java does.
* ``PKCS12``: read with ``cryptography`` (``pkcs12.load_pkcs12``); one password protects
  the file and the key, as in the stores keytool and openssl write.
* ``PEM``: a file holding the private key and the certificate chain
  (``ssl.keystore.location``, the key encrypted under ``ssl.key.password`` or not), or the
  same inline (``ssl.keystore.certificate.chain`` and ``ssl.keystore.key``); trusted
  certificates from ``ssl.truststore.location`` or ``ssl.truststore.certificates``. PEM
  stores take no store password.

Java 9 and later read a PKCS12 file named as JKS and the other way round, so a store is
recognised by its first bytes too: a file of the other binary format is read as that.

Python's ``ssl`` module takes PEM only, so every store is turned into PEM in memory: the
trusted certificates go to ``load_verify_locations(cadata=...)``, the key and its chain
through an anonymous in-memory file (see ``_load_key_and_chain``). Renegotiation is
refused (``OP_NO_RENEGOTIATION``): it would let a client restart a handshake under a
connection the broker already authenticated. Every problem is a ConfigException naming
the key, raised at startup, or, for a dynamic update, when the update is validated.
"""
from __future__ import annotations

import os
import re
import ssl
import tempfile
from dataclasses import dataclass, field
from typing import Any, Optional

from kafka_py.clients.common.security.listener_config import ListenerSecurityConfig
from kafka_py.clients.common.config.config_def import ConfigException

PEM_TYPE = "PEM"
STORE_TYPES = ("JKS", "PKCS12", PEM_TYPE)

#: SslConfigs.RECONFIGURABLE_CONFIGS: the keys a listener's stores may be changed with at runtime.
RECONFIGURABLE_CONFIGS: frozenset[str] = frozenset({
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates",
})

_PROTOCOLS = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}

_JKS_MAGIC = b"\xfe\xed\xfe\xed"
_JCEKS_MAGIC = b"\xce\xce\xce\xce"
_PEM_PRIVATE_KEY = re.compile(r"-----BEGIN ((?:ENCRYPTED |RSA |EC |DSA )?PRIVATE KEY)-----.*?-----END \1-----",
                              re.DOTALL)
_PEM_CERTIFICATE = re.compile(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", re.DOTALL)
_WRONG_STORE_PASSWORD = "Keystore was tampered with, or password was incorrect"


# ---- the stores ---------------------------------------------------------------------------

@dataclass
class SecurityStore:
    """A key or trust store as loaded (DefaultSslEngineFactory.SecurityStore): its certificates
    (a key store's chain, leaf first; a trust store's trusted certificates), a key store's
    private key, and the file's modification time when it came from a file."""
    type: str
    path: Optional[str]
    certificates: list[Any]
    private_key: Any = None
    last_modified_ns: Optional[int] = field(default=None, compare=False)

    def modified(self) -> bool:
        """Changed on disk since it was loaded (a store rewritten in place under the same name)."""
        if self.path is None:
            return False
        modified = _last_modified_ns(self.path)
        return modified is not None and modified != self.last_modified_ns

    def certificates_pem(self) -> str:
        from cryptography.hazmat.primitives.serialization import Encoding
        return "".join(c.public_bytes(Encoding.PEM).decode("ascii") for c in self.certificates)

    def __repr__(self) -> str:
        return f"SecurityStore(type={self.type}, path={self.path})"


def _last_modified_ns(path: str) -> Optional[int]:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _read_store_file(config: ListenerSecurityConfig, location_key: str, path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise config.error(location_key, f"cannot read the store file: {e.strerror or e}") from None


def _binary_format(data: bytes) -> Optional[str]:
    """JKS or PKCS12 by the file's first bytes (a store declared as either is read as what it
    is, see the module's docstring); None for anything else."""
    if data[:4] in (_JKS_MAGIC, _JCEKS_MAGIC):
        return "JKS"
    if data[:1] == b"\x30":  # a DER SEQUENCE: the PFX structure of PKCS #12
        return "PKCS12"
    return None


def _not_binary_store(config: ListenerSecurityConfig, type_key: str, data: bytes, declared: str) -> ConfigException:
    if data.lstrip()[:11] == b"-----BEGIN ":
        return config.error(type_key, f"the store file is PEM, not {declared}; set {config.key_name(type_key)}=PEM")
    return config.error(type_key, f"the store file is not a {declared} store")


def _load_jks(config: ListenerSecurityConfig, is_key_store: bool, data: bytes, password: Optional[str],
              key_password: Optional[str]) -> tuple[list[Any], Any]:
    kind = "keystore" if is_key_store else "truststore"
    try:
        import jks
    except ImportError:
        raise config.error(f"ssl.{kind}.type", "JKS stores need the pyjks package (pip install pyjks)") from None
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_der_private_key

    try:
        store = jks.KeyStore.loads(data, password, try_decrypt_keys=False)
    except jks.util.KeystoreSignatureException:
        raise config.error(f"ssl.{kind}.password", _WRONG_STORE_PASSWORD, show_value=False) from None
    except Exception as e:  # noqa: BLE001 - pyjks raises struct and format errors of several kinds
        raise config.error(f"ssl.{kind}.location", f"not a readable JKS store: {e}") from None
    try:
        if not is_key_store:
            # Java's trust managers trust the certificate entries and the leaf of each key entry.
            ders = [entry.cert for _, entry in sorted(store.certs.items())]
            ders += [entry.cert_chain[0][1] for _, entry in sorted(store.private_keys.items()) if entry.cert_chain]
            return [x509.load_der_x509_certificate(d) for d in ders], None
        if not store.private_keys:
            raise config.error("ssl.keystore.location", "the key store holds no private key entry")
        alias, entry = sorted(store.private_keys.items())[0]
        recover_key = "ssl.key.password" if key_password is not None else "ssl.keystore.password"
        recover_with = key_password if key_password is not None else password
        if recover_with is None:
            raise config.error(recover_key, f"a password is needed to recover the key of entry {alias}")
        try:
            entry.decrypt(recover_with)
        except jks.util.DecryptionFailureException:
            raise config.error(recover_key, f"Cannot recover key of entry {alias}: the password is wrong",
                               show_value=False) from None
        key = load_der_private_key(entry.pkey_pkcs8, None)
        return [x509.load_der_x509_certificate(der) for _, der in entry.cert_chain], key
    except (ValueError, jks.util.UnsupportedKeyFormatException) as e:
        raise config.error(f"ssl.{kind}.location", f"an entry of the JKS store cannot be read: {e}") from None


def _load_pkcs12(config: ListenerSecurityConfig, is_key_store: bool, data: bytes, password: Optional[str],
                 key_password: Optional[str]) -> tuple[list[Any], Any]:
    from cryptography.hazmat.primitives.serialization import pkcs12

    kind = "keystore" if is_key_store else "truststore"
    try:
        store = pkcs12.load_pkcs12(data, password.encode("utf-8") if password is not None else None)
    except ValueError:
        if password is None:
            raise config.error(f"ssl.{kind}.password", "the PKCS12 store is protected: set the store's password",
                               show_value=False) from None
        raise config.error(f"ssl.{kind}.password", f"{_WRONG_STORE_PASSWORD} (or the file is not PKCS12)",
                           show_value=False) from None
    certificates = ([store.cert.certificate] if store.cert is not None else []) + \
        [c.certificate for c in store.additional_certs]
    if not is_key_store:
        return certificates, None
    if store.key is None or store.cert is None:
        raise config.error("ssl.keystore.location", "the key store holds no private key entry")
    if key_password is not None and key_password != password:
        # A PKCS12 store made by keytool or openssl encrypts its key under the store password;
        # a different key password cannot recover it (Java's key manager fails the same way).
        raise config.error("ssl.key.password", "Cannot recover key: a PKCS12 key store keeps its key under "
                           "ssl.keystore.password", show_value=False)
    return certificates, store.key


def _load_pem_certificates(config: ListenerSecurityConfig, key: str, text: str, show_value: bool) -> list[Any]:
    from cryptography import x509
    blocks = _PEM_CERTIFICATE.findall(text)
    if not blocks:
        raise config.error(key, "no PEM certificate (-----BEGIN CERTIFICATE-----) found", show_value=show_value)
    try:
        return [x509.load_pem_x509_certificate(b.encode("ascii")) for b in blocks]
    except ValueError as e:
        raise config.error(key, f"a certificate cannot be read: {e}", show_value=show_value) from None


def _load_pem_key(config: ListenerSecurityConfig, key: str, text: str, key_password: Optional[str],
                  show_value: bool) -> Any:
    from cryptography.hazmat.primitives.serialization import load_pem_private_key
    match = _PEM_PRIVATE_KEY.search(text)
    if match is None:
        raise config.error(key, "no PEM private key (-----BEGIN PRIVATE KEY-----) found", show_value=show_value)
    block = match.group(0).encode("ascii")
    encrypted = match.group(1).startswith("ENCRYPTED") or b"Proc-Type: 4,ENCRYPTED" in block
    if encrypted and key_password is None:
        raise config.error("ssl.key.password", "the PEM private key is encrypted: set its password")
    try:
        return load_pem_private_key(block, key_password.encode("utf-8") if encrypted else None)
    except ValueError as e:
        if encrypted:
            raise config.error("ssl.key.password", "Cannot recover key: the password is wrong",
                               show_value=False) from None
        raise config.error(key, f"the private key cannot be read: {e}", show_value=show_value) from None


def create_keystore(config: ListenerSecurityConfig) -> Optional[SecurityStore]:
    """The key store the listener's settings name (DefaultSslEngineFactory.createKeystore), None when
    none is set. The checks of combinations are Kafka's, in Kafka's order."""
    store_type = (config.get_string("ssl.keystore.type") or "JKS").strip().upper()
    path = config.get_string("ssl.keystore.location")
    password = config.get_string("ssl.keystore.password")
    key_password = config.get_string("ssl.key.password")
    inline_key = config.get_string("ssl.keystore.key")
    inline_chain = config.get_string("ssl.keystore.certificate.chain")
    if store_type not in STORE_TYPES:
        raise config.error("ssl.keystore.type", f"unknown key store type; kafka-py reads {', '.join(STORE_TYPES)}")
    if inline_key is not None:
        if store_type != PEM_TYPE:
            raise config.error("ssl.keystore.type", f"SSL private key can be specified only for PEM, but key store "
                               f"type is {store_type}")
        if inline_chain is None:
            raise config.error("ssl.keystore.certificate.chain", "SSL private key is specified, but certificate "
                               "chain is not specified", show_value=False)
        if path is not None:
            raise config.error("ssl.keystore.location", "Both SSL key store location and separate private key "
                               "are specified")
        if password is not None:
            raise config.error("ssl.keystore.password", "SSL key store password cannot be specified with PEM "
                               "format, only key password may be specified", show_value=False)
        chain = _load_pem_certificates(config, "ssl.keystore.certificate.chain", inline_chain, False)
        key = _load_pem_key(config, "ssl.keystore.key", inline_key, key_password, False)
        return SecurityStore(PEM_TYPE, None, chain, key)
    if inline_chain is not None:
        raise config.error("ssl.keystore.key", "SSL certificate chain is specified, but private key is not "
                           "specified", show_value=False)
    if path is None:
        if password is not None:
            raise config.error("ssl.keystore.password", "SSL key store is not specified, but key store password "
                               "is specified", show_value=False)
        return None
    modified = _last_modified_ns(path)
    data = _read_store_file(config, "ssl.keystore.location", path)
    if store_type == PEM_TYPE:
        if password is not None:
            raise config.error("ssl.keystore.password", "SSL key store password cannot be specified with PEM "
                               "format, only key password may be specified", show_value=False)
        text = data.decode("utf-8", errors="replace")
        chain = _load_pem_certificates(config, "ssl.keystore.location", text, True)
        key = _load_pem_key(config, "ssl.keystore.location", text, key_password, True)
        return SecurityStore(PEM_TYPE, path, chain, key, modified)
    actual = _binary_format(data)
    if actual is None:
        raise _not_binary_store(config, "ssl.keystore.type", data, store_type)
    if password is None:
        raise config.error("ssl.keystore.password", "SSL key store is specified, but key store password is not "
                           "specified")
    if actual == "JKS":
        chain, key = _load_jks(config, True, data, password, key_password)
    else:
        chain, key = _load_pkcs12(config, True, data, password, key_password)
    return SecurityStore(store_type, path, chain, key, modified)


def create_truststore(config: ListenerSecurityConfig) -> Optional[SecurityStore]:
    """The trust store the listener's settings name (DefaultSslEngineFactory.createTruststore), None
    when none is set."""
    store_type = (config.get_string("ssl.truststore.type") or "JKS").strip().upper()
    path = config.get_string("ssl.truststore.location")
    password = config.get_string("ssl.truststore.password")
    inline = config.get_string("ssl.truststore.certificates")
    if store_type not in STORE_TYPES:
        raise config.error("ssl.truststore.type", f"unknown trust store type; kafka-py reads {', '.join(STORE_TYPES)}")
    if inline is not None:
        if store_type != PEM_TYPE:
            raise config.error("ssl.truststore.type", "SSL trust store certs can be specified only for PEM, but "
                               f"trust store type is {store_type}")
        if path is not None:
            raise config.error("ssl.truststore.location", "Both SSL trust store location and separate trust "
                               "certificates are specified")
        if password is not None:
            raise config.error("ssl.truststore.password", "SSL trust store password cannot be specified for PEM "
                               "format", show_value=False)
        return SecurityStore(PEM_TYPE, None, _load_pem_certificates(config, "ssl.truststore.certificates", inline,
                                                                    False))
    if path is None:
        if password is not None:
            raise config.error("ssl.truststore.password", "SSL trust store is not specified, but trust store "
                               "password is specified", show_value=False)
        return None
    modified = _last_modified_ns(path)
    data = _read_store_file(config, "ssl.truststore.location", path)
    if store_type == PEM_TYPE:
        if password is not None:
            raise config.error("ssl.truststore.password", "SSL trust store password cannot be specified for PEM "
                               "format", show_value=False)
        certificates = _load_pem_certificates(config, "ssl.truststore.location",
                                              data.decode("utf-8", errors="replace"), True)
        return SecurityStore(PEM_TYPE, path, certificates, None, modified)
    actual = _binary_format(data)
    if actual is None:
        raise _not_binary_store(config, "ssl.truststore.type", data, store_type)
    if actual == "JKS":
        certificates, _ = _load_jks(config, False, data, password, None)
    else:
        certificates, _ = _load_pkcs12(config, False, data, password, None)
    if not certificates:
        raise config.error("ssl.truststore.location", "the trust store holds no certificate")
    return SecurityStore(store_type, path, certificates, None, modified)


# ---- the SSLContext -----------------------------------------------------------------------

def _load_key_and_chain(context: ssl.SSLContext, store: SecurityStore) -> None:
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
    pem = store.private_key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    pem += store.certificates_pem().encode("ascii")
    # SSLContext.load_cert_chain reads a file by name only. An anonymous memory file
    # (memfd, reached through /proc/self/fd) keeps the clear key off every disk; where
    # there is none, a temporary file created 0600 serves for the duration of the call.
    fd = -1
    if hasattr(os, "memfd_create"):
        try:
            fd = os.memfd_create("kafka-py-keystore", os.MFD_CLOEXEC)
        except OSError:
            fd = -1
    if fd >= 0:
        try:
            os.write(fd, pem)
            path = f"/proc/self/fd/{fd}"
            if os.path.exists(path):
                context.load_cert_chain(path)
                return
        finally:
            os.close(fd)
    fd, path = tempfile.mkstemp(prefix="kafka-py-keystore-", suffix=".pem")  # mkstemp creates it 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        context.load_cert_chain(path)
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


def _apply_stores(context: ssl.SSLContext, config: ListenerSecurityConfig, keystore: Optional[SecurityStore],
                  truststore: Optional[SecurityStore]) -> None:
    if keystore is not None:
        key = "ssl.keystore.location" if keystore.path is not None else "ssl.keystore.key"
        try:
            _load_key_and_chain(context, keystore)
        except (OSError, ssl.SSLError, ValueError) as e:
            raise config.error(key, f"the private key and certificate chain cannot be used: {e}",
                               show_value=keystore.path is not None) from None
    if truststore is not None:
        key = "ssl.truststore.location" if truststore.path is not None else "ssl.truststore.certificates"
        try:
            context.load_verify_locations(cadata=truststore.certificates_pem())
        except (ssl.SSLError, ValueError) as e:
            raise config.error(key, f"cannot load trusted certificates: {e}",
                               show_value=truststore.path is not None) from None


class DefaultSslEngineFactory:
    """One listener's (or client's) TLS settings made into an SSLContext, with the stores it was
    made from. ``mode`` is "server" (a listener) or "client" (a broker's or tool's own connections)."""

    def __init__(self, config: ListenerSecurityConfig, mode: str) -> None:
        self.mode = mode
        self.configs = {k: config.get_string(k) for k in RECONFIGURABLE_CONFIGS}
        self.keystore = create_keystore(config)
        self.truststore = create_truststore(config)
        if mode == "server":
            self.context = self._server_context(config)
        else:
            self.context = self._client_context(config)

    def _server_context(self, config: ListenerSecurityConfig) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.options |= ssl.OP_NO_RENEGOTIATION | ssl.OP_NO_COMPRESSION
        _configure_protocols(context, config)
        _configure_ciphers(context, config)
        if self.keystore is None:
            raise config.error("ssl.keystore.location", "an SSL listener needs a key store (ssl.keystore.location, "
                               "or ssl.keystore.certificate.chain and ssl.keystore.key)")
        client_auth = (config.get_string("ssl.client.auth") or "none").lower()
        if self.truststore is None and client_auth != "none":
            raise config.error("ssl.truststore.location", "a trust store is needed to verify client certificates "
                               "(ssl.client.auth is requested or required)")
        _apply_stores(context, config, self.keystore, self.truststore)
        context.verify_mode = _CLIENT_AUTH[client_auth] if self.truststore is not None else ssl.CERT_NONE
        return context

    def _client_context(self, config: ListenerSecurityConfig) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.options |= ssl.OP_NO_RENEGOTIATION | ssl.OP_NO_COMPRESSION
        _configure_protocols(context, config)
        _configure_ciphers(context, config)
        _apply_stores(context, config, self.keystore, self.truststore)
        if self.truststore is None:
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

    def should_be_rebuilt(self, config: ListenerSecurityConfig) -> bool:
        """A store setting changed, or a store file was rewritten since it was loaded."""
        if {k: config.get_string(k) for k in RECONFIGURABLE_CONFIGS} != self.configs:
            return True
        return any(store is not None and store.modified() for store in (self.keystore, self.truststore))


def _subject_alt_names(certificate: Any) -> set[str]:
    from cryptography import x509
    try:
        extension = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        return set()
    return {f"{type(name).__name__}:{name.value}" for name in extension.value}


def ensure_compatible(new_store: SecurityStore, old_store: SecurityStore) -> None:
    """SslFactory.CertificateEntries.ensureCompatible: a listener's new certificate must keep the
    subject and at least the subject alternative names of the one it replaces, so clients that
    verified the old one by name accept the new one."""
    old, new = old_store.certificates[0], new_store.certificates[0]
    if old.subject != new.subject:
        raise ValueError("Keystore DistinguishedName does not match: "
                         f"existing={{DN={old.subject.rfc4514_string()}}}, new={{DN={new.subject.rfc4514_string()}}}")
    old_names, new_names = _subject_alt_names(old), _subject_alt_names(new)
    if not old_names <= new_names:
        raise ValueError("Keystore SubjectAltNames do not match: "
                         f"existing={{SAN={sorted(old_names)}}}, new={{SAN={sorted(new_names)}}}")


class SslFactory:
    """The SSLContext of one listener (or client) and its replacement at runtime
    (SslFactory.validateReconfiguration / reconfigure). Connections take ``context`` when they
    are made, so a replacement reaches new connections only; those already open keep theirs."""

    def __init__(self, config: ListenerSecurityConfig, mode: str) -> None:
        self.mode = mode
        self.ssl_engine_factory = DefaultSslEngineFactory(config, mode)

    @property
    def context(self) -> ssl.SSLContext:
        return self.ssl_engine_factory.context

    def create_new_ssl_engine_factory(self, config: ListenerSecurityConfig) -> DefaultSslEngineFactory:
        """The factory ``config`` makes, checked against the current one; the current one when
        nothing changed. ConfigException (Kafka's message) when the new stores cannot replace it."""
        current = self.ssl_engine_factory
        if not current.should_be_rebuilt(config):
            return current
        try:
            new = DefaultSslEngineFactory(config, self.mode)
        except ConfigException as e:
            raise ConfigException(e.name, e.value, f"Validation of dynamic config update of SSLFactory failed: "
                                  f"{e}") from None
        problem = None
        if current.keystore is None and new.keystore is not None:
            problem = "Cannot add SSL keystore to an existing listener for which no keystore was configured."
        elif current.keystore is not None and new.keystore is None:
            problem = "Cannot remove the SSL keystore from an existing listener for which a keystore was configured."
        elif current.truststore is None and new.truststore is not None:
            problem = "Cannot add SSL truststore to an existing listener for which no truststore was configured."
        if problem is None and current.keystore is not None:
            try:
                ensure_compatible(new.keystore, current.keystore)
            except ValueError as e:
                problem = str(e)
        if problem is not None:
            name = config.key_name("ssl.keystore.location")
            raise ConfigException(name, config.get_string("ssl.keystore.location"),
                                  f"Validation of dynamic config update of SSLFactory failed: {problem}")
        return new

    def validate_reconfiguration(self, config: ListenerSecurityConfig) -> None:
        self.create_new_ssl_engine_factory(config)

    def configs_changed(self, config: ListenerSecurityConfig) -> bool:
        """The store settings differ from the current ones (a file rewritten in place does not count)."""
        return {k: config.get_string(k) for k in RECONFIGURABLE_CONFIGS} != self.ssl_engine_factory.configs

    def reconfigure(self, config: ListenerSecurityConfig) -> bool:
        """Take the new stores; whether anything changed."""
        new = self.create_new_ssl_engine_factory(config)
        if new is self.ssl_engine_factory:
            return False
        self.ssl_engine_factory = new
        return True


def create_server_context(config: ListenerSecurityConfig) -> ssl.SSLContext:
    """The SSLContext of an SSL or SASL_SSL listener."""
    return DefaultSslEngineFactory(config, "server").context


def create_client_context(config: ListenerSecurityConfig) -> ssl.SSLContext:
    """The SSLContext a broker (or a tool) connects to a broker's TLS listener with."""
    return DefaultSslEngineFactory(config, "client").context
