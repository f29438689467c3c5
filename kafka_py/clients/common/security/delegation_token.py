"""Port of clients/src/main/java/org/apache/kafka/common/security/token/delegation/
(TokenInformation.java, DelegationToken.java and internals/DelegationTokenCache.java,
Kafka 2.8.2): delegation tokens (KIP-48) as the broker holds them in memory.

A token is its ``TokenInformation`` (id, owner, renewers, issue, expiry and maximum
timestamps) and its HMAC, the token id signed with the cluster's secret key; the HMAC,
base64-encoded, is the password a client logs in with (SCRAM, user name the token id,
extension ``tokenauth=true``).

``DelegationTokenCache`` is what the SCRAM server looks tokens up in while a client logs in
(network threads) and what the DelegationTokenManager (server/delegation_token_manager.py)
fills from ZooKeeper: the token of each id, its SCRAM credentials per mechanism, and the
HMAC -> id map that RenewDelegationToken and ExpireDelegationToken find a token by. One lock
guards the maps; every operation is brief and does no I/O.
"""
from __future__ import annotations

import base64
import threading
from dataclasses import dataclass, field
from typing import Mapping, Optional

from kafka_py.clients.common.security.scram import ScramCredential, ScramMechanism


@dataclass(frozen=True)
class TokenInformation:
    """One token's facts. Principals are ``type:name`` text. A renewal or an expiry request
    makes a new TokenInformation with the new ``expiry_timestamp`` (Kafka sets the field in
    place; a frozen value lets network threads read a token while it changes)."""

    token_id: str
    owner: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    max_timestamp: int
    expiry_timestamp: int

    def owner_or_renewer(self, principal: str) -> bool:
        return self.owner == principal or principal in self.renewers

    def is_expired(self, now_ms: int) -> bool:
        """Past its expiry or its maximum lifetime (the manager's test before any renewal)."""
        return self.max_timestamp < now_ms or self.expiry_timestamp < now_ms


@dataclass(frozen=True)
class DelegationToken:
    token_info: TokenInformation
    hmac: bytes = field(repr=False)

    @property
    def hmac_as_base64_string(self) -> str:
        return base64.b64encode(self.hmac).decode("ascii")


class DelegationTokenCache:
    """Every live token the broker knows, with what logins and renewals look it up by."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, TokenInformation] = {}
        # base64 HMAC -> token id (renew and expire name a token by its HMAC), and back
        self._hmac_token_ids: dict[str, str] = {}
        self._token_id_hmacs: dict[str, str] = {}
        # mechanism name -> token id -> the SCRAM credential derived from the token's HMAC
        self._credentials: dict[str, dict[str, ScramCredential]] = {m.mechanism_name: {} for m in ScramMechanism}

    def credential(self, mechanism: str, token_id: str) -> Optional[ScramCredential]:
        with self._lock:
            return self._credentials.get(mechanism, {}).get(token_id)

    def owner(self, token_id: str) -> Optional[str]:
        """The owner's name (without its type), as Kafka's SCRAM callback handler names it."""
        with self._lock:
            token = self._tokens.get(token_id)
        return None if token is None else token.owner.partition(":")[2]

    def update_cache(self, token: DelegationToken, scram_credentials: Mapping[str, ScramCredential]) -> None:
        info = token.token_info
        hmac = token.hmac_as_base64_string
        with self._lock:
            self._tokens[info.token_id] = info
            for mechanism, credentials in self._credentials.items():
                credential = scram_credentials.get(mechanism)
                if credential is None:
                    credentials.pop(info.token_id, None)
                else:
                    credentials[info.token_id] = credential
            self._hmac_token_ids[hmac] = info.token_id
            self._token_id_hmacs[info.token_id] = hmac

    def remove_cache(self, token_id: str) -> None:
        with self._lock:
            if self._tokens.pop(token_id, None) is not None:
                hmac = self._token_id_hmacs.pop(token_id, None)
                if hmac is not None:
                    self._hmac_token_ids.pop(hmac, None)
            for credentials in self._credentials.values():
                credentials.pop(token_id, None)

    def token_for_hmac(self, base64_hmac: str) -> Optional[TokenInformation]:
        with self._lock:
            token_id = self._hmac_token_ids.get(base64_hmac)
            return None if token_id is None else self._tokens.get(token_id)

    def token(self, token_id: str) -> Optional[TokenInformation]:
        with self._lock:
            return self._tokens.get(token_id)

    def tokens(self) -> list[TokenInformation]:
        with self._lock:
            return list(self._tokens.values())


__all__ = ["DelegationToken", "DelegationTokenCache", "TokenInformation"]
