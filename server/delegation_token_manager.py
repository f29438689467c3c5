"""Port of core/src/main/scala/kafka/server/DelegationTokenManager.scala (Kafka 2.8.2):
delegation tokens (KIP-48) in ZooKeeper mode.

A token is created by an authenticated user (its owner) and lets a client log in as that
owner with SCRAM: the token id is the user name, the token's HMAC (HmacSHA512 of the id,
keyed by ``delegation.token.secret.key``, or its alias ``delegation.token.master.key``) in
base64 the password, and the SCRAM extension ``tokenauth=true`` says it is a token.

Where things live:

* ``/delegation_token/tokens/<tokenId>``: the token's information in Kafka's JSON (version,
  sanitized owner and renewers, issue, max and expiry timestamps, id). The HMAC is never
  stored: every broker computes it from the shared secret key.
* ``/delegation_token/token_changes/token_change_<seq>``: a token id that was created, renewed,
  expired or removed. Every broker's ZkNodeChangeNotificationListener rereads that token and
  updates its DelegationTokenCache (kafka_py/clients/common/security/delegation_token.py) or drops it, so a
  token created through one broker logs in on all of them.
* the cache: each token's information, its SCRAM credentials (one per mechanism, derived from
  the base64 HMAC with the mechanism's minimum iterations and a fresh salt, so the stored
  keys never leave the broker), and the HMAC -> id map renew and expire look tokens up in.

Without a secret key tokens are disabled: create, renew and expire answer
DELEGATION_TOKEN_AUTH_DISABLED and nothing is read from or written to ZooKeeper.

Expired tokens (past ``delegation.token.expiry.time.ms`` since their issue or last renewal,
or past ``delegation.token.max.lifetime.ms``) are removed by ``expire_tokens``, which the
active controller runs every ``delegation.token.expiry.check.interval.ms``
(controller/kafka_controller.py), as Kafka's controller does.

One lock orders every change this broker makes and every notification it applies, as in
Kafka; it is never held by a network thread (logins read the cache only).
"""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac as _hmac
import logging
import threading
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from kafka_py.core.common.zk_node_change_notification_listener import ZkNodeChangeNotificationListener
from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.security.authorizer.acl import parse_kafka_principal
from kafka_py.clients.common.security.delegation_token import DelegationToken, DelegationTokenCache, TokenInformation
from kafka_py.clients.common.security.sanitizer import desanitize, sanitize
from kafka_py.clients.common.security.scram import ScramCredential, ScramFormatter, ScramMechanism
from kafka_py.core.utils.json import parse_bytes
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.zk.zk_data import (
    DelegationTokenChangeNotificationSequenceZNode,
    DelegationTokenChangeNotificationZNode,
    DelegationTokensZNode,
    _scala_immutable_map,
    uuid_to_base64,
)

logger = logging.getLogger(__name__)

DEFAULT_HMAC_ALGORITHM = "HmacSHA512"
OWNER_KEY = "owner"
RENEWERS_KEY = "renewers"
ISSUE_TIMESTAMP_KEY = "issueTimestamp"
MAX_TIMESTAMP_KEY = "maxTimestamp"
EXPIRY_TIMESTAMP_KEY = "expiryTimestamp"
TOKEN_ID_KEY = "tokenId"
VERSION_KEY = "version"
CURRENT_VERSION = 1
#: What renew and expire answer as the expiry timestamp when they fail.
ERROR_TIMESTAMP = -1


# ---------------------------------------------------------------------------- pure functions

def create_hmac(token_id: str, secret_key: bytes) -> bytes:
    """HmacSHA512 of the token id's UTF-8 bytes, keyed by the secret key's UTF-8 bytes."""
    return _hmac.new(secret_key, token_id.encode("utf-8"), hashlib.sha512).digest()


def create_base64_hmac(token_id: str, secret_key: bytes) -> str:
    return base64.b64encode(create_hmac(token_id, secret_key)).decode("ascii")


def generate_token_id() -> str:
    """CoreUtils.generateUuidAsBase64: a random UUID in URL-safe base64 without padding."""
    return uuid_to_base64(uuid.uuid4())


def to_json_compatible_map(token: DelegationToken) -> dict[str, Any]:
    """The token znode's JSON object, keys in the order Kafka's Scala map writes them."""
    info = token.token_info
    return _scala_immutable_map([
        (VERSION_KEY, CURRENT_VERSION),
        (OWNER_KEY, sanitize(info.owner)),
        (RENEWERS_KEY, [sanitize(r) for r in info.renewers]),
        (ISSUE_TIMESTAMP_KEY, info.issue_timestamp),
        (MAX_TIMESTAMP_KEY, info.max_timestamp),
        (EXPIRY_TIMESTAMP_KEY, info.expiry_timestamp),
        (TOKEN_ID_KEY, info.token_id),
    ])


def token_information_from_bytes(data: Optional[bytes]) -> Optional[TokenInformation]:
    """A token znode's data as TokenInformation; None for no data or data that is not JSON,
    ValueError for JSON of another version or without the fields (Kafka's require)."""
    js = parse_bytes(data)
    if js is None:
        return None
    try:
        if int(js[VERSION_KEY]) != CURRENT_VERSION:
            raise ValueError(f"unsupported delegation token version {js[VERSION_KEY]}")
        return TokenInformation(
            token_id=str(js[TOKEN_ID_KEY]),
            owner=parse_kafka_principal(desanitize(str(js[OWNER_KEY]))),
            renewers=tuple(parse_kafka_principal(desanitize(str(r))) for r in js[RENEWERS_KEY]),
            issue_timestamp=int(js[ISSUE_TIMESTAMP_KEY]),
            max_timestamp=int(js[MAX_TIMESTAMP_KEY]),
            expiry_timestamp=int(js[EXPIRY_TIMESTAMP_KEY]))
    except (KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"malformed delegation token data ({type(e).__name__}: {e})") from None


def filter_token(requested_principal: str, owners: Optional[Sequence[str]], token: TokenInformation,
                 authorize_token: Callable[[str], bool]) -> bool:
    """Whether DescribeDelegationToken shows ``token`` to ``requested_principal``: only tokens
    of the owners asked for (as owner or renewer; None: every owner), and of those the ones
    the principal owns or renews, or may Describe through a DelegationToken ACL."""
    if owners is not None and not any(token.owner_or_renewer(owner) for owner in owners):
        return False
    if token.owner_or_renewer(requested_principal):
        return True
    return authorize_token(token.token_id)


def prepare_scram_credentials(hmac_string: str) -> dict[str, ScramCredential]:
    """The token's SCRAM credential for every mechanism: its base64 HMAC as the password,
    the mechanism's minimum iterations."""
    return {mechanism.mechanism_name: ScramFormatter(mechanism).generate_credential(hmac_string,
                                                                                    mechanism.min_iterations)
            for mechanism in ScramMechanism}


@dataclass(frozen=True)
class CreateTokenResult:
    issue_timestamp: int
    expiry_timestamp: int
    max_timestamp: int
    token_id: str
    hmac: bytes
    error: Errors


# ---------------------------------------------------------------------------- the manager

class DelegationTokenManager:
    def __init__(self, config: Any, token_cache: DelegationTokenCache, time: Time, zk_client: Any) -> None:
        self.config = config
        self.token_cache = token_cache
        self.time = time
        self.zk_client = zk_client
        self.logger = IdentLogger(logger, f"[Token Manager on Broker {config.broker_id}]: ")
        key = config.delegation_token_secret_key.value if config.token_auth_enabled else None
        self.secret_key: Optional[bytes] = key.encode("utf-8") if key else None
        self.token_max_lifetime: int = config.delegation_token_max_life_ms
        self.default_token_renew_time: int = config.delegation_token_expiry_time_ms
        self.token_remover_scan_interval: int = config.delegation_token_expiry_check_interval_ms
        self._lock = threading.RLock()
        self._token_change_listener: Optional[ZkNodeChangeNotificationListener] = None

    @property
    def token_auth_enabled(self) -> bool:
        return bool(self.config.token_auth_enabled)

    def startup(self) -> None:
        if self.token_auth_enabled:
            self.zk_client.create_delegation_token_paths()
            self._load_cache()
            self._token_change_listener = ZkNodeChangeNotificationListener(
                self.zk_client, DelegationTokenChangeNotificationZNode.path(),
                DelegationTokenChangeNotificationSequenceZNode.SEQUENCE_NUMBER_PREFIX,
                _TokenChangedNotificationHandler(self), time=self.time)
            self._token_change_listener.init()

    def shutdown(self) -> None:
        if self._token_change_listener is not None:
            self._token_change_listener.close()
            self._token_change_listener = None

    def _create_hmac(self, token_id: str) -> bytes:
        """The token's HMAC under this broker's secret key. Every caller runs with token auth
        enabled (the requests check it, and without it nothing is loaded into the cache), where
        the key is set; Kafka's createHmac would fail on its null key otherwise."""
        if self.secret_key is None:
            raise KafkaException("Delegation token authentication is disabled: no delegation.token.secret.key")
        return create_hmac(token_id, self.secret_key)

    # -- the cache -----------------------------------------------------------------------------

    def _load_cache(self) -> None:
        with self._lock:
            token_ids = self.zk_client.get_children(DelegationTokensZNode.path())
            self.logger.info("Loading the token cache. Total token count: %d", len(token_ids))
            for token_id in token_ids:
                try:
                    token = self._get_token_from_zk(token_id)
                    if token is not None:
                        self._update_cache(token)
                except Exception:  # noqa: BLE001 - one unreadable token must not hide the others
                    self.logger.exception("Error while getting Token for tokenId: %s", token_id)

    def _get_token_from_zk(self, token_id: str) -> Optional[DelegationToken]:
        info = self.zk_client.get_delegation_token_info(token_id)
        if info is None:
            return None
        return DelegationToken(info, self._create_hmac(token_id))

    def _update_cache(self, token: DelegationToken) -> None:
        self.token_cache.update_cache(token, prepare_scram_credentials(token.hmac_as_base64_string))

    def _update_token(self, token: DelegationToken) -> None:
        """Store the token, cache it here, then tell the other brokers."""
        self.zk_client.set_or_create_delegation_token(token)
        self._update_cache(token)
        self.zk_client.create_token_change_notification(token.token_info.token_id)

    def _remove_token(self, token_id: str) -> None:
        self.zk_client.delete_delegation_token(token_id)
        self.token_cache.remove_cache(token_id)
        self.zk_client.create_token_change_notification(token_id)

    # -- the requests --------------------------------------------------------------------------

    def create_token(self, owner: str, renewers: Sequence[str], max_life_time_ms: int) -> CreateTokenResult:
        if not self.token_auth_enabled:
            return CreateTokenResult(-1, -1, -1, "", b"", Errors.DELEGATION_TOKEN_AUTH_DISABLED)
        with self._lock:
            token_id = generate_token_id()
            issue_timestamp = self.time.milliseconds()
            max_life_time = (self.token_max_lifetime if max_life_time_ms <= 0
                             else min(max_life_time_ms, self.token_max_lifetime))
            max_timestamp = issue_timestamp + max_life_time
            expiry_timestamp = min(max_timestamp, issue_timestamp + self.default_token_renew_time)
            info = TokenInformation(token_id, str(owner), tuple(str(r) for r in renewers), issue_timestamp,
                                    max_timestamp, expiry_timestamp)
            hmac = self._create_hmac(token_id)
            self._update_token(DelegationToken(info, hmac))
            self.logger.info("Created a delegation token: %s for owner: %s", token_id, owner)
            return CreateTokenResult(issue_timestamp, expiry_timestamp, max_timestamp, token_id, hmac, Errors.NONE)

    def _token_to_change(self, principal: str, hmac: bytes) -> tuple[Errors, Any, int]:
        """(error, the token, now) for a renewal or an expiry by ``principal``: the token of
        the HMAC, which must exist, be the principal's to renew and not be expired yet.
        Called under the lock."""
        info = self._token_for_hmac(hmac)
        if info is None:
            return Errors.DELEGATION_TOKEN_NOT_FOUND, None, -1
        now = self.time.milliseconds()
        if not self._allowed_to_renew(principal, info):
            return Errors.DELEGATION_TOKEN_OWNER_MISMATCH, info, now
        if info.is_expired(now):
            return Errors.DELEGATION_TOKEN_EXPIRED, info, now
        return Errors.NONE, info, now

    def renew_token(self, principal: str, hmac: bytes, renew_life_time_ms: int) -> tuple[Errors, int]:
        """(error, the new expiry timestamp or ERROR_TIMESTAMP)."""
        if not self.token_auth_enabled:
            return Errors.DELEGATION_TOKEN_AUTH_DISABLED, ERROR_TIMESTAMP
        with self._lock:
            error, info, now = self._token_to_change(principal, hmac)
            if error is not Errors.NONE:
                return error, ERROR_TIMESTAMP
            renew_life_time = self.default_token_renew_time if renew_life_time_ms < 0 else renew_life_time_ms
            expiry_timestamp = min(info.max_timestamp, now + renew_life_time)
            self._update_token(DelegationToken(dataclasses.replace(info, expiry_timestamp=expiry_timestamp),
                                               bytes(hmac)))
            self.logger.info("Delegation token renewed for token: %s for owner: %s", info.token_id, info.owner)
            return Errors.NONE, expiry_timestamp

    def expire_token(self, principal: str, hmac: bytes, expire_life_time_ms: int) -> tuple[Errors, int]:
        """(error, the new expiry timestamp, now when the token was removed at once, or
        ERROR_TIMESTAMP). A negative period removes the token now."""
        if not self.token_auth_enabled:
            return Errors.DELEGATION_TOKEN_AUTH_DISABLED, ERROR_TIMESTAMP
        with self._lock:
            error, info, now = self._token_to_change(principal, hmac)
            if error is not Errors.NONE:
                return error, ERROR_TIMESTAMP
            if expire_life_time_ms < 0:
                self._remove_token(info.token_id)
                self.logger.info("Token expired for token: %s for owner: %s", info.token_id, info.owner)
                return Errors.NONE, now
            expiry_timestamp = min(info.max_timestamp, now + expire_life_time_ms)
            self._update_token(DelegationToken(dataclasses.replace(info, expiry_timestamp=expiry_timestamp),
                                               bytes(hmac)))
            self.logger.info("Updated expiry time for token: %s for owner: %s", info.token_id, info.owner)
            return Errors.NONE, expiry_timestamp

    def expire_tokens(self) -> None:
        """Remove every token past its expiry or maximum lifetime (the controller's periodic task)."""
        with self._lock:
            for info in self.get_all_token_information():
                if info.is_expired(self.time.milliseconds()):
                    self.logger.info("Delegation token expired for token: %s for owner: %s", info.token_id,
                                     info.owner)
                    self._remove_token(info.token_id)

    def _token_for_hmac(self, hmac: bytes) -> Optional[TokenInformation]:
        return self.token_cache.token_for_hmac(base64.b64encode(bytes(hmac)).decode("ascii"))

    @staticmethod
    def _allowed_to_renew(principal: str, info: TokenInformation) -> bool:
        return principal == info.owner or principal in info.renewers

    def get_token(self, token_id: str) -> Optional[DelegationToken]:
        info = self.token_cache.token(token_id)
        return None if info is None else DelegationToken(info, self._create_hmac(info.token_id))

    def get_all_token_information(self) -> list[TokenInformation]:
        return self.token_cache.tokens()

    def get_tokens(self, eligible: Callable[[TokenInformation], bool]) -> list[DelegationToken]:
        return [DelegationToken(info, self._create_hmac(info.token_id))
                for info in self.get_all_token_information() if eligible(info)]

    # -- notifications from other brokers ------------------------------------------------------

    def process_token_change(self, token_id: str) -> None:
        with self._lock:
            self.logger.info("Processing Token Notification for tokenId: %s", token_id)
            token = self._get_token_from_zk(token_id)
            if token is None:
                self.token_cache.remove_cache(token_id)
            else:
                self._update_cache(token)


class _TokenChangedNotificationHandler:
    """The token change listener's handler: the notification's data is a token id."""

    def __init__(self, manager: DelegationTokenManager) -> None:
        self._manager = manager

    def process_notification(self, notification_message: bytes) -> None:
        self._manager.process_token_change(DelegationTokenChangeNotificationSequenceZNode.decode(notification_message))


__all__ = [
    "CURRENT_VERSION", "CreateTokenResult", "DelegationTokenManager", "ERROR_TIMESTAMP", "create_base64_hmac",
    "create_hmac", "filter_token", "generate_token_id", "prepare_scram_credentials", "to_json_compatible_map",
    "token_information_from_bytes",
]
