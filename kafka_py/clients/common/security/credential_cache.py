"""Port of clients/src/main/java/org/apache/kafka/common/security/authenticator/CredentialCache.java
(Kafka 2.8.2): the SCRAM credentials of every user, per mechanism, as the broker last
read them from ZooKeeper (``/config/users/<user>``).

Network threads read it during authentication; the config-change thread writes it when
a user's znode changes, or, in KRaft mode, the ScramPublisher when UserScramCredentialRecords
and RemoveUserScramCredentialRecords commit (``update_credential``, ``remove_credentials``,
``load`` for a snapshot). A lock guards the maps: readers are brief and never block on I/O.

As Kafka's CredentialProvider it also holds the DelegationTokenCache
(kafka_py/clients/common/security/delegation_token.py), the tokens a SCRAM login with ``tokenauth=true``
is checked against; the DelegationTokenManager fills it.
"""
from __future__ import annotations

import logging
import threading
from typing import Mapping, Optional

from kafka_py.clients.common.security.delegation_token import DelegationTokenCache
from kafka_py.clients.common.security.scram import ScramCredential, ScramMechanism, TokenCredential, credential_from_string

logger = logging.getLogger(__name__)


class CredentialCache:
    def __init__(self, token_cache: Optional[DelegationTokenCache] = None) -> None:
        self._lock = threading.Lock()
        self._credentials: dict[str, dict[str, ScramCredential]] = {m.mechanism_name: {} for m in ScramMechanism}
        self.token_cache = token_cache if token_cache is not None else DelegationTokenCache()

    def token_credential(self, mechanism: str, token_id: str) -> Optional[TokenCredential]:
        """What a ``tokenauth`` login as ``token_id`` is checked against (Kafka's
        ScramServerCallbackHandler): None for a token this broker does not know."""
        token = self.token_cache.token(token_id)
        if token is None:
            return None
        return TokenCredential(token.owner.partition(":")[2], self.token_cache.credential(mechanism, token_id),
                               token.expiry_timestamp)

    def get(self, mechanism: str, username: str) -> Optional[ScramCredential]:
        with self._lock:
            return self._credentials.get(mechanism, {}).get(username)

    def update_user(self, username: str, config: Mapping[str, str]) -> None:
        """Replace ``username``'s credentials with those in its user config (ScramCredentialUtils
        .updateCache): a mechanism absent from the config is removed."""
        parsed: dict[str, Optional[ScramCredential]] = {}
        for mechanism in ScramMechanism.mechanism_names():
            text = config.get(mechanism)
            if text is None:
                parsed[mechanism] = None
                continue
            try:
                parsed[mechanism] = credential_from_string(str(text))
            except ValueError as e:
                logger.error("Invalid %s credential of user %s in ZooKeeper: %s", mechanism, username, e)
                parsed[mechanism] = None
        with self._lock:
            for mechanism, credential in parsed.items():
                if credential is None:
                    self._credentials[mechanism].pop(username, None)
                else:
                    self._credentials[mechanism][username] = credential

    def update_credential(self, mechanism: str, username: str, credential: ScramCredential) -> None:
        with self._lock:
            self._credentials.setdefault(mechanism, {})[username] = credential

    def remove_credentials(self, mechanism: str, username: str) -> None:
        with self._lock:
            self._credentials.get(mechanism, {}).pop(username, None)

    def load(self, credentials: Mapping[tuple[str, str], ScramCredential]) -> None:
        """Replace every credential with ``credentials``: (mechanism, user) -> credential."""
        fresh: dict[str, dict[str, ScramCredential]] = {m.mechanism_name: {} for m in ScramMechanism}
        for (mechanism, username), credential in credentials.items():
            fresh.setdefault(mechanism, {})[username] = credential
        with self._lock:
            self._credentials = fresh

    def users(self, mechanism: str) -> list[str]:
        with self._lock:
            return sorted(self._credentials.get(mechanism, {}))
