"""Fuzz target: the tokens a client sends to a SASL listener, on the server side: one
SASL/PLAIN token, or a SCRAM-SHA-256/512 exchange (client-first, then client-final).

The first byte picks the mechanism (0 PLAIN, 1 SCRAM-SHA-256, 2 SCRAM-SHA-512); for SCRAM
the next two bytes are the length of the client-first message, and the rest is the
client-final message. The server's nonce is fixed so that a mutated client-final can get
past the nonce check to the proof.

Contract: every token is answered with a challenge or refused with
SaslAuthenticationException (the SaslServerAuthenticator answers SASL_AUTHENTICATION_FAILED
and closes the connection); a completed exchange names the user that authenticated.
"""
from __future__ import annotations

import struct
from typing import Iterable

from kafka_py.clients.common.security import scram
from kafka_py.clients.common.security.errors import SaslAuthenticationException
from kafka_py.clients.common.security.plain import PlainSaslServer, plain_client_token
from kafka_py.clients.common.security.scram import ScramMechanism, ScramSaslClient, ScramSaslServer

_USER, _PASSWORD = "alice", "alice-secret"
_SERVER_NONCE = "fuzzservernonce"
_SALT = b"fuzz-salt-fuzz-salt"
_MECHANISMS = (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)
_CREDENTIALS = {m: scram.ScramFormatter(m).generate_credential(_PASSWORD, m.min_iterations, _SALT)
                for m in _MECHANISMS}
# A fixed server nonce: a random one would leave the proof beyond any mutation's reach.
scram.secure_random_nonce = lambda: _SERVER_NONCE


def one_input(data: bytes) -> None:
    if not data:
        return
    mechanism = data[0] % 3
    try:
        if mechanism == 0:
            server = PlainSaslServer({_USER: _PASSWORD})
            server.evaluate_response(data[1:])
        else:
            scram_mechanism = _MECHANISMS[mechanism - 1]
            server = ScramSaslServer(scram_mechanism, {_USER: _CREDENTIALS[scram_mechanism]}.get)
            (first_length,) = struct.unpack_from(">H", data, 1) if len(data) >= 3 else (0,)
            server.evaluate_response(data[3:3 + first_length])
            server.evaluate_response(data[3 + first_length:])
    except SaslAuthenticationException:
        return
    if not server.complete or server.authorization_id != _USER:
        raise AssertionError(f"exchange ended complete={server.complete} as {server.authorization_id!r}")


def seeds() -> Iterable[tuple[str, bytes]]:
    yield "plain", b"\x00" + plain_client_token(_USER, _PASSWORD)
    yield "plain-authzid", b"\x00" + _USER.encode() + plain_client_token(_USER, _PASSWORD)
    yield "plain-wrong-password", b"\x00" + plain_client_token(_USER, "nope")
    for index, mechanism in enumerate(_MECHANISMS, start=1):
        client = ScramSaslClient(mechanism, _USER, _PASSWORD)
        first = client.first_message()
        server = ScramSaslServer(mechanism, {_USER: _CREDENTIALS[mechanism]}.get)
        server_first = server.evaluate_response(first)
        final = client.final_message(server_first)
        name = mechanism.mechanism_name.lower()
        yield name, bytes([index]) + struct.pack(">H", len(first)) + first + final
        yield f"{name}-first-only", bytes([index]) + struct.pack(">H", len(first)) + first
