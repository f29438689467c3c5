"""Port of the delegation token handlers of core/src/main/scala/kafka/server/KafkaApis.scala
(Kafka 2.8.2): CreateDelegationToken, RenewDelegationToken, ExpireDelegationToken and
DescribeDelegationToken (KIP-48), delegating to the DelegationTokenManager
(server/delegation_token_manager.py).

Who may do what, as in 2.8.2:

* none of the four is answered on a PLAINTEXT listener, on an SSL listener whose client
  presented no certificate (one-way TLS: the principal is ANONYMOUS), or on a connection that
  itself logged in with a token: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED. A token must not be
  able to mint or prolong tokens;
* any other authenticated principal may create a token for itself, naming renewers (User
  principals only, else INVALID_PRINCIPAL_TYPE); no ACL is checked;
* renew and expire are for the token's owner and renewers (DELEGATION_TOKEN_OWNER_MISMATCH
  otherwise); the token is named by its HMAC (DELEGATION_TOKEN_NOT_FOUND for an HMAC no token
  has) and must not have expired (DELEGATION_TOKEN_EXPIRED);
* describe shows a principal the tokens it owns or renews, and others' only with Describe on
  the ``DelegationToken`` resource named by the token id. (The CreateTokens and DescribeTokens
  operations on User resources came with Kafka 3.3; 2.8.2 has neither.)

Without a secret key (``delegation.token.secret.key`` or ``delegation.token.master.key``)
every request answers DELEGATION_TOKEN_AUTH_DISABLED.

In KRaft mode Kafka 2.8.2's broker does not serve these APIs at all (their specs name only the
zkBroker listener): it does not advertise them in ApiVersions and closes the connection of a
client that sends one. This broker does the same (docs/kraft.md).
"""
from __future__ import annotations

from typing import Any, Optional

from kio.schema.create_delegation_token.v2.response import CreateDelegationTokenResponse
from kio.schema.describe_delegation_token.v2.response import (
    DescribedDelegationToken,
    DescribedDelegationTokenRenewer,
    DescribeDelegationTokenResponse,
)
from kio.schema.expire_delegation_token.v2.response import ExpireDelegationTokenResponse
from kio.schema.renew_delegation_token.v2.response import RenewDelegationTokenResponse

from kafka_py.core.cluster.broker import SecurityProtocol
from kafka_py.network.request_channel import ANONYMOUS_PRINCIPAL, Request
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import millis_to_datetime
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.security.authorizer.acl import AclOperation, ResourceType
from kafka_py.clients.common.security.kafka_principal import USER_TYPE, is_token_authenticated, principal_type_and_name
from kafka_py.server.delegation_token_manager import ERROR_TIMESTAMP, filter_token
from kafka_py.server.kafka_apis_common import NO_THROTTLE, error_response_of, millis

def create_token_response(error: Errors, owner: str, issue_timestamp: int = -1, expiry_timestamp: int = -1,
                          max_timestamp: int = -1, token_id: str = "", hmac: bytes = b"") -> Any:
    """CreateDelegationTokenResponse.prepareResponse."""
    principal_type, principal_name = principal_type_and_name(owner)
    return CreateDelegationTokenResponse(
        error_code=error.error_code, principal_type=principal_type, principal_name=principal_name,
        issue_timestamp=millis_to_datetime(issue_timestamp), expiry_timestamp=millis_to_datetime(expiry_timestamp),
        max_timestamp=millis_to_datetime(max_timestamp), token_id=token_id, hmac=hmac, throttle_time=NO_THROTTLE)


def _expiry_response(response_class: type, error: Errors, expiry_timestamp: int) -> Any:
    return response_class(error_code=error.error_code, expiry_timestamp=millis_to_datetime(expiry_timestamp),
                          throttle_time=NO_THROTTLE)


def describe_tokens_response(error: Errors, tokens: Any = ()) -> Any:
    described = []
    for token in tokens:
        info = token.token_info
        owner_type, owner_name = principal_type_and_name(info.owner)
        described.append(DescribedDelegationToken(
            principal_type=owner_type, principal_name=owner_name, issue_timestamp=info.issue_timestamp,
            expiry_timestamp=info.expiry_timestamp, max_timestamp=info.max_timestamp, token_id=info.token_id,
            hmac=token.hmac, renewers=tuple(
                DescribedDelegationTokenRenewer(principal_type=t, principal_name=n)
                for t, n in map(principal_type_and_name, info.renewers))))
    return DescribeDelegationTokenResponse(error_code=error.error_code, tokens=tuple(described),
                                           throttle_time=NO_THROTTLE)


class DelegationTokenRequestHandlers:
    def __init__(self, apis: Any) -> None:
        self.apis = apis

    @property
    def token_manager(self) -> Any:
        return self.apis.token_manager

    def allow_token_requests(self, request: Request) -> bool:
        """KafkaApis.allowTokenRequests: not over a token, plaintext or one-way TLS."""
        context = request.context
        protocol = context.security_protocol  # the listener's protocol name
        return not (is_token_authenticated(context.principal) or protocol == SecurityProtocol.PLAINTEXT.name
                    or (protocol == SecurityProtocol.SSL.name and context.principal == ANONYMOUS_PRINCIPAL))

    def _served(self, request: Request) -> bool:
        """False (and the connection closed) without a token manager: a KRaft broker, where
        2.8.2 has no such API (its listeners refuse these requests before they get here)."""
        if self.token_manager is None:
            self.apis.logger.info("Closing connection %s: received request api key %s which is not enabled",
                                  request.context.connection_id, request.api_key.name)
            self.apis.request_channel.close_connection(request)
            return False
        return True

    # ---- CreateDelegationToken -----------------------------------------------------------
    @staticmethod
    @error_response_of(ApiKeys.CREATE_DELEGATION_TOKEN)
    def create_token_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return create_token_response(error, ANONYMOUS_PRINCIPAL)

    def handle_create_token_request(self, request: Request) -> None:
        if not self._served(request):
            return
        principal = request.context.principal
        if not self.allow_token_requests(request):
            self.apis.send_response(request, create_token_response(Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
                                                                   principal))
            return
        renewers = [f"{r.principal_type}:{r.principal_name}" for r in request.body.renewers]
        if any(r.principal_type != USER_TYPE for r in request.body.renewers):
            self.apis.send_response(request, create_token_response(Errors.INVALID_PRINCIPAL_TYPE, principal))
            return
        result = self.token_manager.create_token(principal, renewers, millis(request.body.max_lifetime))
        self.apis.send_response(request, create_token_response(
            result.error, principal, result.issue_timestamp, result.expiry_timestamp, result.max_timestamp,
            result.token_id, result.hmac))

    # ---- RenewDelegationToken ------------------------------------------------------------
    @staticmethod
    @error_response_of(ApiKeys.RENEW_DELEGATION_TOKEN)
    def renew_token_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return _expiry_response(RenewDelegationTokenResponse, error, ERROR_TIMESTAMP)

    def handle_renew_token_request(self, request: Request) -> None:
        if not self._served(request):
            return
        if not self.allow_token_requests(request):
            error, expiry = Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, ERROR_TIMESTAMP
        else:
            error, expiry = self.token_manager.renew_token(request.context.principal, bytes(request.body.hmac),
                                                           millis(request.body.renew_period))
        self.apis.send_response(request, _expiry_response(RenewDelegationTokenResponse, error, expiry))

    # ---- ExpireDelegationToken -----------------------------------------------------------
    @staticmethod
    @error_response_of(ApiKeys.EXPIRE_DELEGATION_TOKEN)
    def expire_token_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return _expiry_response(ExpireDelegationTokenResponse, error, ERROR_TIMESTAMP)

    def handle_expire_token_request(self, request: Request) -> None:
        if not self._served(request):
            return
        if not self.allow_token_requests(request):
            error, expiry = Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, ERROR_TIMESTAMP
        else:
            error, expiry = self.token_manager.expire_token(request.context.principal, bytes(request.body.hmac),
                                                            millis(request.body.expiry_time_period))
        self.apis.send_response(request, _expiry_response(ExpireDelegationTokenResponse, error, expiry))

    # ---- DescribeDelegationToken ---------------------------------------------------------
    @staticmethod
    @error_response_of(ApiKeys.DESCRIBE_DELEGATION_TOKEN)
    def describe_tokens_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return describe_tokens_response(error)

    def handle_describe_tokens_request(self, request: Request) -> None:
        if not self._served(request):
            return
        if not self.allow_token_requests(request):
            self.apis.send_response(request, describe_tokens_response(Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED))
            return
        if not self.apis.config.token_auth_enabled:
            self.apis.send_response(request, describe_tokens_response(Errors.DELEGATION_TOKEN_AUTH_DISABLED))
            return
        requested = request.body.owners
        if requested is not None and len(requested) == 0:
            # an empty list asks for no owner's tokens
            self.apis.send_response(request, describe_tokens_response(Errors.NONE))
            return
        owners = None if requested is None else [f"{o.principal_type}:{o.principal_name}" for o in requested]
        principal = request.context.principal

        def authorize_token(token_id: str) -> bool:
            return self.apis.auth_helper.authorize(request.context, AclOperation.DESCRIBE,
                                                   ResourceType.DELEGATION_TOKEN, token_id)

        tokens = self.token_manager.get_tokens(lambda info: filter_token(principal, owners, info, authorize_token))
        self.apis.send_response(request, describe_tokens_response(Errors.NONE, tokens))


__all__ = ["DelegationTokenRequestHandlers", "create_token_response",
           "describe_tokens_response"]
