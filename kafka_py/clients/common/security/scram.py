"""Port of clients/src/main/java/org/apache/kafka/common/security/scram/internals/
(ScramMechanism.java, ScramFormatter.java, ScramMessages.java, ScramSaslServer.java,
ScramSaslClient.java) and ScramCredentialUtils.java (Kafka 2.8.2): SCRAM-SHA-256 and
SCRAM-SHA-512 (RFC 5802, RFC 7677).

Everything here is pure: message parsing and formatting, the key derivations, and the
server and client state machines that turn one token into the next. Sockets and frames
are the authenticator's business (sasl_server_authenticator.py).

A stored credential is what Kafka keeps in ZooKeeper under ``/config/users/<user>``:
``salt=<base64>,stored_key=<base64>,server_key=<base64>,iterations=<n>``. The password
itself is never stored; the server checks a client's proof against ``stored_key`` and
proves itself with ``server_key``.
"""
from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Callable, Optional

from kafka_py.clients.common.security.errors import SaslAuthenticationException


class ScramMechanism(enum.Enum):
    SCRAM_SHA_256 = ("SCRAM-SHA-256", "sha256", 4096)
    SCRAM_SHA_512 = ("SCRAM-SHA-512", "sha512", 4096)

    def __init__(self, mechanism_name: str, hash_name: str, min_iterations: int) -> None:
        self.mechanism_name = mechanism_name
        self.hash_name = hash_name
        self.min_iterations = min_iterations

    @classmethod
    def for_mechanism_name(cls, name: str) -> Optional["ScramMechanism"]:
        for m in cls:
            if m.mechanism_name == name:
                return m
        return None

    @classmethod
    def mechanism_names(cls) -> list[str]:
        return [m.mechanism_name for m in cls]


#: AlterUserScramCredentials refuses more (Kafka's ScramMechanism max iterations).
MAX_ITERATIONS = 16384


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


# ---- ScramCredentialUtils -----------------------------------------------------------------

def credential_to_string(credential: ScramCredential) -> str:
    b64 = lambda b: base64.b64encode(b).decode("ascii")  # noqa: E731
    return (f"salt={b64(credential.salt)},stored_key={b64(credential.stored_key)},"
            f"server_key={b64(credential.server_key)},iterations={credential.iterations}")


def credential_from_string(text: str) -> ScramCredential:
    """ValueError when ``text`` is not a stored credential."""
    fields = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"Invalid credential {text!r}")
        fields[key.strip()] = value.strip()
    missing = {"salt", "stored_key", "server_key", "iterations"} - fields.keys()
    if missing:
        raise ValueError(f"Invalid credential: missing {sorted(missing)}")
    try:
        return ScramCredential(base64.b64decode(fields["salt"], validate=True),
                               base64.b64decode(fields["stored_key"], validate=True),
                               base64.b64decode(fields["server_key"], validate=True),
                               int(fields["iterations"]))
    except (ValueError, base64.binascii.Error) as e:
        raise ValueError(f"Invalid credential: {e}") from None


# ---- ScramFormatter -----------------------------------------------------------------------

class ScramFormatter:
    """The RFC 5802 functions for one hash."""

    def __init__(self, mechanism: ScramMechanism) -> None:
        self.mechanism = mechanism
        self._hash = mechanism.hash_name

    def hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self._hash).digest()

    def hash(self, data: bytes) -> bytes:
        return hashlib.new(self._hash, data).digest()

    def hi(self, password: bytes, salt: bytes, iterations: int) -> bytes:
        # Hi() of RFC 5802 is PBKDF2 with HMAC and one block; hashlib's is in C.
        return hashlib.pbkdf2_hmac(self._hash, password, salt, iterations)

    def salted_password(self, password: str, salt: bytes, iterations: int) -> bytes:
        # SASLprep is skipped, as in Kafka: the password's UTF-8 bytes are used as they are.
        return self.hi(password.encode("utf-8"), salt, iterations)

    def client_key(self, salted_password: bytes) -> bytes:
        return self.hmac(salted_password, b"Client Key")

    def server_key(self, salted_password: bytes) -> bytes:
        return self.hmac(salted_password, b"Server Key")

    def stored_key(self, client_key: bytes) -> bytes:
        return self.hash(client_key)

    def generate_credential(self, password: str, iterations: int, salt: Optional[bytes] = None) -> ScramCredential:
        salt = salt if salt is not None else secure_random_bytes()
        salted = self.salted_password(password, salt, iterations)
        client_key = self.client_key(salted)
        return ScramCredential(salt, self.stored_key(client_key), self.server_key(salted), iterations)

    @staticmethod
    def auth_message(client_first_bare: str, server_first: str, client_final_without_proof: str) -> bytes:
        return f"{client_first_bare},{server_first},{client_final_without_proof}".encode("utf-8")

    def client_proof(self, salted_password: bytes, auth_message: bytes) -> bytes:
        client_key = self.client_key(salted_password)
        signature = self.hmac(self.stored_key(client_key), auth_message)
        return _xor(client_key, signature)

    def verify_client_proof(self, credential: ScramCredential, auth_message: bytes, proof: bytes) -> bool:
        signature = self.hmac(credential.stored_key, auth_message)
        if len(proof) != len(signature):
            return False
        computed_stored_key = self.hash(_xor(proof, signature))
        return hmac.compare_digest(computed_stored_key, credential.stored_key)

    def server_signature(self, server_key: bytes, auth_message: bytes) -> bytes:
        return self.hmac(server_key, auth_message)


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


def secure_random_bytes(n: int = 24) -> bytes:
    return secrets.token_bytes(n)


def secure_random_nonce() -> str:
    # Printable and free of ',' (RFC 5802 nonce), as Kafka's base-36 random strings are.
    return secrets.token_urlsafe(24).replace("-", "a").replace("_", "b")


def sasl_name(username: str) -> str:
    """RFC 5802 saslname: ',' and '=' escaped."""
    return username.replace("=", "=3D").replace(",", "=2C")


def username_from_sasl_name(name: str) -> str:
    if re.search(r"=(?!2C|3D)", name):
        raise SaslAuthenticationException("Invalid username: " + name)
    return name.replace("=2C", ",").replace("=3D", "=")


# ---- ScramMessages ------------------------------------------------------------------------

_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"  # RFC 5802 "printable": no ','
_CLIENT_FIRST = re.compile(
    r"n,(?:a=(?P<authzid>[^,]*))?,n=(?P<saslname>[^,]*),r=(?P<nonce>" + _PRINTABLE + r")(?P<extensions>(?:,[^,]*)*)")
_SERVER_FIRST = re.compile(r"(?:m=[^,]*,)?r=(?P<nonce>" + _PRINTABLE + r"),s=(?P<salt>[A-Za-z0-9+/=]+),"
                           r"i=(?P<iterations>[0-9]+)(?:,.*)?")
_CLIENT_FINAL = re.compile(r"c=(?P<binding>[A-Za-z0-9+/=]+),r=(?P<nonce>" + _PRINTABLE + r")"
                           r"(?P<extensions>(?:,[a-oq-zA-Z]=[^,]*)*),p=(?P<proof>[A-Za-z0-9+/=]+)")
_SERVER_FINAL = re.compile(r"(?:e=(?P<error>[^,]*)|v=(?P<signature>[A-Za-z0-9+/=]+))(?:,.*)?")


def _text(message: bytes) -> str:
    try:
        return bytes(message).decode("utf-8")
    except UnicodeDecodeError:
        raise SaslAuthenticationException("Invalid SCRAM message: not UTF-8") from None


def _b64decode(value: str, what: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (ValueError, base64.binascii.Error):
        raise SaslAuthenticationException(f"Invalid SCRAM message: {what} is not base64") from None


@dataclass(frozen=True)
class ClientFirstMessage:
    sasl_name: str
    nonce: str
    authorization_id: str
    extensions: dict[str, str]

    @property
    def gs2_header(self) -> str:
        return "n," + (f"a={self.authorization_id}" if self.authorization_id else "") + ","

    def client_first_message_bare(self) -> str:
        ext = "".join(f",{k}={v}" for k, v in self.extensions.items())
        return f"n={self.sasl_name},r={self.nonce}{ext}"

    def to_bytes(self) -> bytes:
        return (self.gs2_header + self.client_first_message_bare()).encode("utf-8")

    @classmethod
    def parse(cls, message: bytes) -> "ClientFirstMessage":
        match = _CLIENT_FIRST.fullmatch(_text(message))
        if match is None:
            raise SaslAuthenticationException("Invalid SCRAM client first message format")
        extensions = {}
        for part in match.group("extensions").split(",")[1:]:
            key, sep, value = part.partition("=")
            if not sep or not key:
                raise SaslAuthenticationException("Invalid SCRAM client first message extensions")
            extensions[key] = value
        return cls(match.group("saslname"), match.group("nonce"), match.group("authzid") or "", extensions)


@dataclass(frozen=True)
class ServerFirstMessage:
    nonce: str
    salt: bytes
    iterations: int

    def to_message(self) -> str:
        return f"r={self.nonce},s={base64.b64encode(self.salt).decode('ascii')},i={self.iterations}"

    @classmethod
    def parse(cls, message: bytes) -> "ServerFirstMessage":
        match = _SERVER_FIRST.fullmatch(_text(message))
        if match is None:
            raise SaslAuthenticationException("Invalid SCRAM server first message format")
        return cls(match.group("nonce"), _b64decode(match.group("salt"), "salt"), int(match.group("iterations")))


@dataclass(frozen=True)
class ClientFinalMessage:
    channel_binding: bytes
    nonce: str
    proof: bytes
    without_proof: str

    @classmethod
    def parse(cls, message: bytes) -> "ClientFinalMessage":
        text = _text(message)
        match = _CLIENT_FINAL.fullmatch(text)
        if match is None:
            raise SaslAuthenticationException("Invalid SCRAM client final message format")
        without_proof = text[:match.start("proof") - len(",p=")]
        return cls(_b64decode(match.group("binding"), "channel binding"), match.group("nonce"),
                   _b64decode(match.group("proof"), "proof"), without_proof)


@dataclass(frozen=True)
class ServerFinalMessage:
    error: Optional[str]
    server_signature: Optional[bytes]

    def to_bytes(self) -> bytes:
        if self.error is not None:
            return f"e={self.error}".encode("utf-8")
        return b"v=" + base64.b64encode(self.server_signature)

    @classmethod
    def parse(cls, message: bytes) -> "ServerFinalMessage":
        match = _SERVER_FINAL.fullmatch(_text(message))
        if match is None:
            raise SaslAuthenticationException("Invalid SCRAM server final message format")
        if match.group("error") is not None:
            return cls(match.group("error"), None)
        return cls(None, _b64decode(match.group("signature"), "server signature"))


# ---- ScramSaslServer ----------------------------------------------------------------------

#: The SCRAM extension a client sets to log in with a delegation token (ScramLoginModule.TOKEN_AUTH_CONFIG).
TOKEN_AUTH_EXTENSION = "tokenauth"


@dataclass(frozen=True)
class TokenCredential:
    """What a tokenauth login needs of a delegation token (Kafka's DelegationTokenCredentialCallback):
    the owner's name, the SCRAM credential derived from the token's HMAC, and its expiry."""

    owner_name: str
    credential: Optional[ScramCredential]
    expiry_timestamp_ms: int


class ScramSaslServer:
    """The server side of one exchange: client-first → server-first, client-final → server-final.

    ``credential_lookup(user)`` returns the user's stored credential for this mechanism
    (None for an unknown user). Any failure raises SaslAuthenticationException; the
    message a client sees never says whether the user exists.
    """

    def __init__(self, mechanism: ScramMechanism,
                 credential_lookup: Callable[[str], Optional[ScramCredential]],
                 token_lookup: Optional[Callable[[str], Optional[TokenCredential]]] = None) -> None:
        self.mechanism = mechanism
        self.mechanism_name = mechanism.mechanism_name
        self._formatter = ScramFormatter(mechanism)
        self._lookup = credential_lookup
        # Delegation tokens (KIP-48): a login with the ``tokenauth=true`` extension names a token
        # id as its user; None when this listener knows no tokens.
        self._token_lookup = token_lookup
        self.token_authenticated = False
        # The token's expiry (ms since the epoch) when one was used: it bounds the session.
        self.token_expiry_timestamp_ms: Optional[int] = None
        self._state = "RECEIVE_CLIENT_FIRST_MESSAGE"
        self._client_first: Optional[ClientFirstMessage] = None
        self._server_first: Optional[ServerFirstMessage] = None
        self._credential: Optional[ScramCredential] = None
        self.authorization_id: Optional[str] = None
        self.complete = False

    def _invalid_credentials(self) -> SaslAuthenticationException:
        return SaslAuthenticationException(
            "Authentication failed during authentication due to invalid credentials with SASL "
            f"mechanism {self.mechanism_name}")

    def evaluate_response(self, response: bytes) -> bytes:
        try:
            if self._state == "RECEIVE_CLIENT_FIRST_MESSAGE":
                return self._client_first_message(response)
            if self._state == "RECEIVE_CLIENT_FINAL_MESSAGE":
                return self._client_final_message(response)
            raise SaslAuthenticationException(f"Unexpected SCRAM message in state {self._state}")
        except SaslAuthenticationException:
            self._state = "FAILED"
            raise

    def _client_first_message(self, response: bytes) -> bytes:
        first = ClientFirstMessage.parse(response)
        username = username_from_sasl_name(first.sasl_name)
        if first.extensions.get(TOKEN_AUTH_EXTENSION, "").lower() == "true":
            # The user name is a token id and the password the token's HMAC; the connection
            # is then its owner's. An unknown or expired token is refused like a bad password.
            token = self._token_lookup(username) if self._token_lookup is not None else None
            if token is None:
                raise self._invalid_credentials()
            authorization_id = token.owner_name
            credential = token.credential
            self.token_authenticated = True
            self.token_expiry_timestamp_ms = token.expiry_timestamp_ms
        else:
            authorization_id = username
            credential = self._lookup(username)
        if credential is None:
            raise self._invalid_credentials()
        if first.authorization_id and first.authorization_id != username:
            raise SaslAuthenticationException(
                "Authentication failed: Client requested an authorization id that is different from username")
        if credential.iterations < self.mechanism.min_iterations:
            raise SaslAuthenticationException(
                f"Iterations {credential.iterations} is less than the minimum "
                f"{self.mechanism.min_iterations} for {self.mechanism_name}")
        self._client_first = first
        self._credential = credential
        self.authorization_id = authorization_id
        self._server_first = ServerFirstMessage(first.nonce + secure_random_nonce(), credential.salt,
                                                credential.iterations)
        self._state = "RECEIVE_CLIENT_FINAL_MESSAGE"
        return self._server_first.to_message().encode("utf-8")

    def _client_final_message(self, response: bytes) -> bytes:
        final = ClientFinalMessage.parse(response)
        if final.nonce != self._server_first.nonce:
            raise SaslAuthenticationException("Invalid client nonce in the final client message.")
        if final.channel_binding != self._client_first.gs2_header.encode("utf-8"):
            raise SaslAuthenticationException("Invalid channel binding in the final client message.")
        auth_message = ScramFormatter.auth_message(self._client_first.client_first_message_bare(),
                                                   self._server_first.to_message(), final.without_proof)
        if not self._formatter.verify_client_proof(self._credential, auth_message, final.proof):
            raise self._invalid_credentials()
        signature = self._formatter.server_signature(self._credential.server_key, auth_message)
        self._state = "COMPLETE"
        self.complete = True
        return ServerFinalMessage(None, signature).to_bytes()


# ---- ScramSaslClient (a broker logging in to another broker) -------------------------------

class ScramSaslClient:
    def __init__(self, mechanism: ScramMechanism, username: str, password: str,
                 extensions: Optional[dict[str, str]] = None) -> None:
        self.mechanism = mechanism
        self._formatter = ScramFormatter(mechanism)
        self._username = username
        self._password = password
        # SCRAM extensions of the client-first message (``tokenauth=true`` for a delegation token)
        self._extensions = dict(extensions or {})
        self._client_first: Optional[ClientFirstMessage] = None
        self._auth_message: Optional[bytes] = None
        self._salted: Optional[bytes] = None
        self.complete = False

    def first_message(self) -> bytes:
        self._client_first = ClientFirstMessage(sasl_name(self._username), secure_random_nonce(), "",
                                                dict(self._extensions))
        return self._client_first.to_bytes()

    def final_message(self, server_first_bytes: bytes) -> bytes:
        server_first = ServerFirstMessage.parse(server_first_bytes)
        if not server_first.nonce.startswith(self._client_first.nonce):
            raise SaslAuthenticationException("Invalid server nonce: does not start with client nonce")
        if server_first.iterations < self.mechanism.min_iterations:
            raise SaslAuthenticationException("Requested iterations below the mechanism's minimum")
        self._salted = self._formatter.salted_password(self._password, server_first.salt, server_first.iterations)
        binding = base64.b64encode(self._client_first.gs2_header.encode("utf-8")).decode("ascii")
        without_proof = f"c={binding},r={server_first.nonce}"
        self._auth_message = ScramFormatter.auth_message(self._client_first.client_first_message_bare(),
                                                         server_first.to_message(), without_proof)
        proof = self._formatter.client_proof(self._salted, self._auth_message)
        return f"{without_proof},p={base64.b64encode(proof).decode('ascii')}".encode("utf-8")

    def verify_server_final(self, server_final_bytes: bytes) -> None:
        final = ServerFinalMessage.parse(server_final_bytes)
        if final.error is not None:
            raise SaslAuthenticationException(f"Sasl authentication using {self.mechanism.mechanism_name} "
                                              f"failed with error: {final.error}")
        expected = self._formatter.server_signature(self._formatter.server_key(self._salted), self._auth_message)
        if not hmac.compare_digest(expected, final.server_signature):
            raise SaslAuthenticationException("Invalid server signature in server final message")
        self.complete = True
