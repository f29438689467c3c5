"""Port of the security handlers of core/src/main/scala/kafka/server/KafkaApis.scala and the
SCRAM half of ZkAdminManager.scala (Kafka 2.8.2): SaslHandshake and SaslAuthenticate on
a connection that is already past authentication, DescribeUserScramCredentials and
AlterUserScramCredentials.

SASL exchanges themselves never reach the handlers (network/secure_selector.py runs them
in the network thread); a SaslHandshake or SaslAuthenticate that does arrive here came
on a PLAINTEXT or SSL listener, or after authentication, and is answered with
ILLEGAL_SASL_STATE, as Kafka does.

Describing credentials needs Describe on the cluster, altering them Alter, when an authorizer
is configured.

In KRaft mode AlterUserScramCredentials is forwarded to the controller (its
ScramControlManager writes the records) and DescribeUserScramCredentials reads the broker's
CredentialCache, which the ScramPublisher keeps equal to the committed records.

In ZooKeeper mode, SCRAM credentials live at /config/users/<sanitized user>, one key per
mechanism, in ScramCredentialUtils' text form; a change is announced through
/config/changes so every broker's credential cache picks it up. Unlike Kafka 2.8, any
broker (not only the controller) applies AlterUserScramCredentials: each alteration is
one znode write guarded by ZooKeeper itself.
"""
from __future__ import annotations

import datetime
from typing import Any, Optional

from kio.schema.alter_user_scram_credentials.v0.response import AlterUserScramCredentialsResponse
from kio.schema.alter_user_scram_credentials.v0.response import AlterUserScramCredentialsResult
from kio.schema.describe_user_scram_credentials.v0.response import CredentialInfo
from kio.schema.describe_user_scram_credentials.v0.response import DescribeUserScramCredentialsResponse
from kio.schema.describe_user_scram_credentials.v0.response import DescribeUserScramCredentialsResult
from kio.schema.sasl_authenticate.v2.response import SaslAuthenticateResponse
from kio.schema.sasl_handshake.v1.response import SaslHandshakeResponse

from kafka_py.clients.common.api_error import ApiError
from kafka_py.network.request_channel import Request
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafka_py.clients.common.security.sanitizer import desanitize, sanitize
from kafka_py.clients.common.security.scram import (
    MAX_ITERATIONS,
    ScramCredential,
    ScramFormatter,
    ScramMechanism,
    credential_from_string,
    credential_to_string,
)
from kafka_py.server.kafka_apis_common import NO_THROTTLE, error_response_of
from kafka_py.core.zk.zk_data import ConfigType

# The mechanism bytes of the admin API (org.apache.kafka.clients.admin.ScramMechanism).
MECHANISM_TYPES = {1: ScramMechanism.SCRAM_SHA_256, 2: ScramMechanism.SCRAM_SHA_512}
MECHANISM_IDS = {m: i for i, m in MECHANISM_TYPES.items()}


class SecurityRequestHandlers:
    def __init__(self, apis: Any) -> None:
        self.apis = apis

    # ---- SASL on a connection past authentication ----------------------------------------
    @staticmethod
    @error_response_of(ApiKeys.SASL_HANDSHAKE)
    def sasl_handshake_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        # the error code alone, no mechanisms (SaslHandshakeRequest.getErrorResponse)
        return SaslHandshakeResponse(error_code=error.error_code, mechanisms=())

    def handle_sasl_handshake_request(self, request: Any) -> None:
        self.apis.send_response(request, SaslHandshakeResponse(error_code=Errors.ILLEGAL_SASL_STATE.error_code,
                                                               mechanisms=()))

    @staticmethod
    @error_response_of(ApiKeys.SASL_AUTHENTICATE)
    def sasl_authenticate_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        return SaslAuthenticateResponse(error_code=error.error_code, error_message=ApiError.of(error, message).message,
                                        auth_bytes=b"", session_lifetime=datetime.timedelta(0))

    def handle_sasl_authenticate_request(self, request: Any) -> None:
        self.apis.send_response(request, SaslAuthenticateResponse(
            error_code=Errors.ILLEGAL_SASL_STATE.error_code,
            error_message="SaslAuthenticate request received after successful authentication",
            auth_bytes=b"", session_lifetime=datetime.timedelta(0)))

    # ---- SCRAM credentials ---------------------------------------------------------------
    def _user_config(self, user: str) -> dict[str, str]:
        return dict(self.apis.zk_client.get_entity_configs(ConfigType.USER, sanitize(user)))

    def _cluster_authorized(self, request: Any, operation: AclOperation) -> bool:
        return self.apis.auth_helper.authorize(request.context, operation, ResourceType.CLUSTER, CLUSTER_NAME)

    @staticmethod
    @error_response_of(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS)
    def describe_user_scram_credentials_error_response(request: Request, error: Errors,
                                                        message: Optional[str]) -> Any:
        # the error at the top level, no results
        return DescribeUserScramCredentialsResponse(throttle_time=NO_THROTTLE, error_code=error.error_code,
                                                    error_message=ApiError.of(error, message).message, results=())

    def handle_describe_user_scram_credentials_request(self, request: Any) -> None:
        if not self._cluster_authorized(request, AclOperation.DESCRIBE):
            self.apis.send_error_response(request, Errors.CLUSTER_AUTHORIZATION_FAILED)
            return
        requested = request.body.users
        if requested is None or len(requested) == 0:
            names = self._all_scram_users()
            explicit = False
        else:
            names = [u.name for u in requested]
            explicit = True
        results = []
        seen: set[str] = set()
        duplicates = {n for n in names if names.count(n) > 1}
        for name in names:
            if name in seen:
                continue
            seen.add(name)
            if name in duplicates:
                results.append(DescribeUserScramCredentialsResult(
                    user=name, error_code=Errors.DUPLICATE_RESOURCE.error_code,
                    error_message=f"Cannot describe SCRAM credentials for the same user twice in a single request: "
                                  f"{name}", credential_infos=()))
                continue
            infos = [CredentialInfo(mechanism=mechanism_id, iterations=iterations)
                     for mechanism_id, iterations in self._credential_iterations(name).items()]
            if infos:
                results.append(DescribeUserScramCredentialsResult(
                    user=name, error_code=Errors.NONE.error_code, error_message=None, credential_infos=tuple(infos)))
            elif explicit:
                results.append(DescribeUserScramCredentialsResult(
                    user=name, error_code=Errors.RESOURCE_NOT_FOUND.error_code,
                    error_message=f"Attempt to describe a user credential that does not exist: {name}",
                    credential_infos=()))
        self.apis.send_response(request, DescribeUserScramCredentialsResponse(
            throttle_time=NO_THROTTLE, error_code=Errors.NONE.error_code, error_message=None, results=tuple(results)))

    def _all_scram_users(self) -> list[str]:
        cache = self.apis.credential_provider
        if self.apis.zk_client is None and cache is not None:
            # KRaft mode: the users with a credential in the metadata log
            return sorted({user for mechanism in MECHANISM_TYPES.values()
                           for user in cache.users(mechanism.mechanism_name)})
        return [desanitize(u) for u in self.apis.zk_client.get_all_entities_with_config(ConfigType.USER)]

    def _credential_iterations(self, name: str) -> dict[int, int]:
        """The user's credentials: mechanism type -> iterations."""
        cache = self.apis.credential_provider
        result = {}
        if self.apis.zk_client is None and cache is not None:
            for mechanism_id, mechanism in MECHANISM_TYPES.items():
                credential = cache.get(mechanism.mechanism_name, name)
                if credential is not None:
                    result[mechanism_id] = credential.iterations
            return result
        config = self._user_config(name)
        for mechanism_id, mechanism in MECHANISM_TYPES.items():
            text = config.get(mechanism.mechanism_name)
            if text is None:
                continue
            try:
                result[mechanism_id] = credential_from_string(text).iterations
            except ValueError:
                continue
        return result

    @staticmethod
    @error_response_of(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS)
    def alter_user_scram_credentials_error_response(request: Request, error: Errors,
                                                     message: Optional[str]) -> Any:
        # every user the request names, once and sorted, with the error
        body = request.body
        users = sorted({d.name for d in body.deletions} | {u.name for u in body.upsertions})
        text = ApiError.of(error, message).message
        return AlterUserScramCredentialsResponse(throttle_time=NO_THROTTLE, results=tuple([
            AlterUserScramCredentialsResult(user=user, error_code=error.error_code, error_message=text)
            for user in users]))

    def handle_alter_user_scram_credentials_request(self, request: Any) -> None:
        body = request.body
        if not self._cluster_authorized(request, AclOperation.ALTER):
            self.apis.send_error_response(request, Errors.CLUSTER_AUTHORIZATION_FAILED)
            return
        operations = [(d.name, "delete", d) for d in body.deletions] + [(u.name, "upsert", u) for u in body.upsertions]
        users = [name for name, _, _ in operations]
        errors: dict[str, tuple[Errors, str]] = {}
        for name, kind, op in operations:
            if name in errors:
                continue
            if not name:
                errors[name] = (Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
            elif int(op.mechanism) not in MECHANISM_TYPES:
                errors[name] = (Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
            elif sum(1 for n, _, o in operations if n == name and int(o.mechanism) == int(op.mechanism)) > 1:
                errors[name] = (Errors.DUPLICATE_RESOURCE,
                                "A user credential cannot be altered twice in the same request")
            elif kind == "upsert":
                mechanism = MECHANISM_TYPES[int(op.mechanism)]
                if int(op.iterations) < mechanism.min_iterations:
                    errors[name] = (Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
                elif int(op.iterations) > MAX_ITERATIONS:
                    errors[name] = (Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
                elif not op.salt or not op.salted_password:
                    errors[name] = (Errors.UNACCEPTABLE_CREDENTIAL, "Salt and salted password must not be empty")
        # Per user: read its config once, apply its operations, write it once.
        for user in dict.fromkeys(users):
            if user in errors:
                continue
            config = self._user_config(user)
            failed = None
            for name, kind, op in operations:
                if name != user:
                    continue
                mechanism = MECHANISM_TYPES[int(op.mechanism)]
                if kind == "delete":
                    if mechanism.mechanism_name not in config:
                        failed = (Errors.RESOURCE_NOT_FOUND,
                                  "Attempt to delete a user credential that does not exist")
                        break
                    del config[mechanism.mechanism_name]
                else:
                    formatter = ScramFormatter(mechanism)
                    salted = bytes(op.salted_password)
                    credential = ScramCredential(bytes(op.salt), formatter.stored_key(formatter.client_key(salted)),
                                                 formatter.server_key(salted), int(op.iterations))
                    config[mechanism.mechanism_name] = credential_to_string(credential)
            if failed is not None:
                errors[user] = failed
                continue
            self.apis.admin_zk_client.change_configs(ConfigType.USER, sanitize(user), config)
        results = []
        for user in dict.fromkeys(users):
            error, message = errors.get(user, (Errors.NONE, None))
            results.append(AlterUserScramCredentialsResult(user=user, error_code=error.error_code,
                                                           error_message=message))
        self.apis.send_response(request, AlterUserScramCredentialsResponse(throttle_time=NO_THROTTLE,
                                                                           results=tuple(results)))
