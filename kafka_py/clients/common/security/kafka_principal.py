"""Port of clients/src/main/java/org/apache/kafka/common/security/auth/KafkaPrincipal.java
(Kafka 2.8.2): who a connection authenticated as.

The broker passes principals around as their text, ``type:name`` (``User:alice``), and
compares them as text (the authorizer, the ACL entries, renewers of delegation tokens).
``KafkaPrincipal`` is that text with Kafka's one extra fact about it: whether the
connection logged in with a delegation token (KIP-48). As in Kafka, the flag takes no part
in equality or hashing: ``User:alice`` logged in with her password and ``User:alice``
logged in with her token are the same principal to every ACL, yet a token-authenticated
one may not create, renew, expire or describe tokens.
"""
from __future__ import annotations

USER_TYPE = "User"


class KafkaPrincipal(str):
    """``type:name`` text carrying ``token_authenticated``."""

    token_authenticated: bool

    def __new__(cls, principal_type: str, name: str, token_authenticated: bool = False) -> "KafkaPrincipal":
        principal = super().__new__(cls, f"{principal_type}:{name}")
        principal.token_authenticated = token_authenticated
        return principal

    @property
    def principal_type(self) -> str:
        return self.partition(":")[0]

    @property
    def name(self) -> str:
        return self.partition(":")[2]


def is_token_authenticated(principal: str) -> bool:
    """Whether ``principal`` (a KafkaPrincipal or plain ``type:name`` text) logged in with a
    delegation token; plain text never did."""
    return bool(getattr(principal, "token_authenticated", False))


def principal_type_and_name(principal: str) -> tuple[str, str]:
    """``User:alice`` as ("User", "alice"): split at the first colon, as SecurityUtils does."""
    principal_type, _, name = principal.partition(":")
    return principal_type, name


__all__ = ["USER_TYPE", "KafkaPrincipal", "is_token_authenticated", "principal_type_and_name"]
