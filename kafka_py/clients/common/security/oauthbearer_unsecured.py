"""Port of clients/src/main/java/org/apache/kafka/common/security/oauthbearer/internals/unsecured/
(Kafka 2.8.2): OAuthBearerUnsecuredJws.java, OAuthBearerValidationUtils.java,
OAuthBearerValidationResult.java, OAuthBearerScopeUtils.java, OAuthBearerIllegalTokenException.java,
OAuthBearerConfigException.java, OAuthBearerUnsecuredValidatorCallbackHandler.java and
OAuthBearerUnsecuredLoginCallbackHandler.java.

Unsecured JSON Web Tokens (RFC 7515 with ``alg`` ``none`` and no signature): what Kafka ships
so that SASL/OAUTHBEARER can be tried without an authorization server. Nothing here is secure:
anyone can write such a token for any subject. A production listener names its own validator
with ``listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class``
(kafka_py/clients/common/security/oauthbearer.py describes the interface).

The validator takes these options of the listener's OAuthBearerLoginModule JAAS entry:
``unsecuredValidatorPrincipalClaimName`` (default ``sub``), ``unsecuredValidatorScopeClaimName``
(default ``scope``), ``unsecuredValidatorRequiredScope`` (space-separated; none by default) and
``unsecuredValidatorAllowableClockSkewMs`` (default 0). A token passes when its principal claim is
a string, ``iat`` (when present) is not after now plus the skew, ``exp`` is present and after now
minus the skew and after ``iat``, and its scope holds every required scope item.

The login side writes such tokens from the ``unsecuredLogin*`` options:
``unsecuredLoginStringClaim_<name>``, ``unsecuredLoginNumberClaim_<name>``,
``unsecuredLoginListClaim_<name>`` (first character is the delimiter),
``unsecuredLoginPrincipalClaimName``, ``unsecuredLoginScopeClaimName``,
``unsecuredLoginLifetimeSeconds`` (default 3600) and ``unsecuredLoginExtension_<name>``.

One deliberate difference: Kafka 2.8.2 decodes the two JSON parts with Java's basic Base64
alphabet, so a token whose encoding happens to hold ``-`` or ``_`` is refused although JWS
uses the URL-safe alphabet (KAFKA-17089, fixed in Kafka 4.1). Here the parts are decoded as
base64url, as every client encodes them; a refusal at random, depending on the bits of
a timestamp, would serve nobody.
"""
from __future__ import annotations

import base64
import binascii
import json
import logging
import math
import re
from typing import Any, Mapping, Optional, Sequence

from kafka_py.clients.common.security.errors import SaslException
from kafka_py.clients.common.security.oauthbearer_callbacks import (
    OAuthBearerExtensionsValidatorCallback,
    OAuthBearerTokenCallback,
    OAuthBearerValidatorCallback,
    SaslExtensionsCallback,
    validate_extensions,
)
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

OAUTHBEARER_MECHANISM = "OAUTHBEARER"
OAUTHBEARER_LOGIN_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


class OAuthBearerConfigException(Exception):
    """A JAAS option of the unsecured validator or login that cannot be used."""


class UnsupportedCallbackException(Exception):
    """javax.security.auth.callback.UnsupportedCallbackException: a callback handler does not
    handle this kind of callback."""

    def __init__(self, callback: Any) -> None:
        super().__init__(type(callback).__name__)
        self.callback = callback


class OAuthBearerValidationResult:
    """Success, or a failure with its description and, for a scope failure, the scope wanted."""

    __slots__ = ("success", "failure_description", "failure_scope", "failure_open_id_config")

    def __init__(self, success: bool, failure_description: Optional[str] = None,
                 failure_scope: Optional[str] = None, failure_open_id_config: Optional[str] = None) -> None:
        if success and (failure_scope is not None or failure_open_id_config is not None):
            raise ValueError("success was indicated but failure scope/OpenIdConfig were provided")
        self.success = success
        self.failure_description = failure_description
        self.failure_scope = failure_scope
        self.failure_open_id_config = failure_open_id_config

    @classmethod
    def new_success(cls) -> "OAuthBearerValidationResult":
        return cls(True)

    @classmethod
    def new_failure(cls, description: str, scope: Optional[str] = None,
                    open_id_config: Optional[str] = None) -> "OAuthBearerValidationResult":
        return cls(False, description, scope, open_id_config)

    def throw_exception_if_failed(self) -> None:
        if not self.success:
            raise OAuthBearerIllegalTokenException(self)


class OAuthBearerIllegalTokenException(Exception):
    def __init__(self, reason: OAuthBearerValidationResult) -> None:
        if reason.success:
            raise ValueError("The reason indicates success; it must instead indicate failure")
        super().__init__(reason.failure_description)
        self.reason = reason


def _failure(description: str) -> OAuthBearerIllegalTokenException:
    return OAuthBearerIllegalTokenException(OAuthBearerValidationResult.new_failure(description))


# ---- scope -------------------------------------------------------------------------------------

# RFC 6749 section 3.3: a scope token is printable ASCII without space, '"' or '\'.
_SCOPE_ITEM = re.compile(r"[\x21\x23-\x5B\x5D-\x7E]+")


def is_valid_scope_item(item: str) -> bool:
    return _SCOPE_ITEM.fullmatch(item) is not None


def parse_scope(space_delimited_scope: str) -> list[str]:
    """OAuthBearerScopeUtils.parseScope: the scope items of a space-separated list."""
    items = []
    for item in space_delimited_scope.split(" "):
        if item:
            if not is_valid_scope_item(item):
                raise OAuthBearerConfigException(f"Invalid scope value: {item}")
            items.append(item)
    return items


# ---- the token ---------------------------------------------------------------------------------

def _java_type_name(value: Any) -> str:
    """The simple Java class name Jackson would have given a claim's value (for messages)."""
    if isinstance(value, str):
        return "String"
    if isinstance(value, int):
        return "Integer" if -2 ** 31 <= value < 2 ** 31 else "Long"
    if isinstance(value, float):
        return "Double"
    if isinstance(value, list):
        return "ArrayList"
    return type(value).__name__


def _convert(value: Any) -> Any:
    """A JSON value as Kafka keeps it: numbers stay numbers, arrays become lists of their
    elements' text, anything else becomes its text."""
    if isinstance(value, list):
        return [_as_text(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            float(value)
        except OverflowError:  # beyond any double: Java's doubleValue() gives an infinity
            return math.inf if value > 0 else -math.inf
        return value
    if isinstance(value, float):
        return value
    return _as_text(value)


def _as_text(value: Any) -> str:
    # Jackson's JsonNode.asText: strings as they are, true/false/null as words, numbers as
    # written, containers as empty text.
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return ""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not a JSON number: {name}")


def to_map(split: str) -> dict[str, Any]:
    """One Base64URL-encoded JSON object of a compact serialization, its values converted."""
    try:
        raw = base64.urlsafe_b64decode(split + "=" * (-len(split) % 4))
    except (binascii.Error, ValueError):
        raise _failure("malformed Base64 URL encoded value") from None
    try:
        node = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _failure("malformed JSON") from None
    if not isinstance(node, dict):
        return {}  # Jackson iterates no fields of a scalar, an array or null: an empty map
    return {key: _convert(value) for key, value in node.items()}


_LONG_MAX, _LONG_MIN = 2 ** 63 - 1, -2 ** 63


def _seconds_to_ms(value: float) -> int:
    # Math.round: halves go up, NaN is 0, beyond a long it saturates
    ms = float(value) * 1000
    if math.isnan(ms):
        return 0
    if math.isinf(ms):
        return _LONG_MAX if ms > 0 else _LONG_MIN
    return max(_LONG_MIN, min(_LONG_MAX, int(math.floor(ms + 0.5))))


class OAuthBearerUnsecuredJws:
    """An unsecured JWS compact serialization, parsed (OAuthBearerToken): ``value``,
    ``principal_name``, ``scope``, ``lifetime_ms`` (the ``exp`` claim in ms since the epoch),
    ``start_time_ms`` (``iat``, or None)."""

    def __init__(self, compact_serialization: str, principal_claim_name: str, scope_claim_name: str) -> None:
        self.value = compact_serialization
        if ".." in compact_serialization:
            raise _failure("Malformed compact serialization contains '..'")
        splits = compact_serialization.split(".")
        # Java's String.split drops trailing empty strings; one trailing dot is put back
        while splits and splits[-1] == "":
            splits.pop()
        if compact_serialization.endswith("."):
            splits.append("")
        if len(splits) != 3:
            raise _failure("Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values")
        self.splits = splits
        self.header = to_map(splits[0])
        self.claims = to_map(splits[1])
        alg = self.header.get("alg")
        if alg is None:
            # (Kafka throws a NullPointerException here, which ends the connection without an
            # answer; an invalid token is the answer it meant)
            raise _failure("JWS header must have an Algorithm value")
        if str(alg) != "none":
            raise _failure("Unsecured JWS must have 'none' for an algorithm")
        if splits[2]:
            raise _failure("Unsecured JWS must not contain a digital signature")
        self.principal_claim_name = principal_claim_name.strip()
        if not self.principal_claim_name:
            raise ValueError("Must specify a non-blank principal claim name")
        self.scope_claim_name = scope_claim_name.strip()
        if not self.scope_claim_name:
            raise ValueError("Must specify a non-blank scope claim name")
        self.scope = self._calculate_scope()
        expiration = self.expiration_time()
        if expiration is None:
            raise _failure("No expiration time in JWT")
        self.lifetime_ms = _seconds_to_ms(expiration)
        principal = self.claim(self.principal_claim_name, str)
        if principal is None or not principal.strip():
            raise _failure("No principal name in JWT claim: " + self.principal_claim_name)
        self.principal_name = principal
        issued_at = self.claim("iat", float)
        self.start_time_ms = None if issued_at is None else _seconds_to_ms(issued_at)

    def raw_claim(self, name: str) -> Any:
        return self.claims.get(name)

    def is_claim_type(self, name: str, kind: type) -> bool:
        value = self.raw_claim(name)
        if value is None:
            return False
        return _is_of(value, kind)

    def claim(self, name: str, kind: type) -> Any:
        """The claim when of ``kind`` (str, float for any number, list), None when absent."""
        value = self.raw_claim(name)
        if value is None or _is_of(value, kind):
            return value
        raise _failure(f"The '{name}' claim was not of type {_KIND_NAMES[kind]}: {_java_type_name(value)}")

    def expiration_time(self) -> Optional[float]:
        return self.claim("exp", float)

    def issued_at(self) -> Optional[float]:
        return self.claim("iat", float)

    def subject(self) -> Optional[str]:
        return self.claim("sub", str)

    def _calculate_scope(self) -> frozenset[str]:
        if self.is_claim_type(self.scope_claim_name, str):
            value = self.claim(self.scope_claim_name, str).strip()
            return frozenset([value]) if value else frozenset()
        items = self.claim(self.scope_claim_name, list)
        if not items:
            return frozenset()
        return frozenset(item.strip() for item in items if item is not None and item.strip())

    def __repr__(self) -> str:
        return f"OAuthBearerUnsecuredJws(principal={self.principal_name}, claims={self.claims})"


_KIND_NAMES = {str: "String", float: "Number", list: "List"}


def _is_of(value: Any, kind: type) -> bool:
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


# ---- validation --------------------------------------------------------------------------------

def _java_float(value: float) -> str:
    return f"{float(value):f}"  # String.format's %f: six decimals


def validate_claim_for_existence_and_type(jwt: OAuthBearerUnsecuredJws, required: bool, claim_name: str,
                                          *allowed: type) -> OAuthBearerValidationResult:
    value = jwt.raw_claim(claim_name)
    if value is None:
        return (OAuthBearerValidationResult.new_failure(f"Required claim missing: {claim_name}") if required
                else OAuthBearerValidationResult.new_success())
    if any(_is_of(value, kind) for kind in allowed):
        return OAuthBearerValidationResult.new_success()
    return OAuthBearerValidationResult.new_failure(
        f"The {claim_name} claim had the incorrect type: {_java_type_name(value)}")


def _confirm_non_negative(skew_ms: int) -> int:
    if skew_ms < 0:
        raise OAuthBearerConfigException(f"Allowable clock skew must not be negative: {skew_ms}")
    return skew_ms


def validate_issued_at(jwt: OAuthBearerUnsecuredJws, required: bool, when_ms: int,
                       skew_ms: int) -> OAuthBearerValidationResult:
    try:
        value = jwt.issued_at()
    except OAuthBearerIllegalTokenException as e:
        return e.reason
    if value is None:
        return (OAuthBearerValidationResult.new_failure("Required claim missing: iat") if required
                else OAuthBearerValidationResult.new_success())
    if 1000 * float(value) > when_ms + _confirm_non_negative(skew_ms):
        return OAuthBearerValidationResult.new_failure(
            f"The Issued At value ({_java_float(value)} seconds) was after the indicated time ({when_ms} ms) plus "
            f"allowable clock skew ({skew_ms} ms)")
    return OAuthBearerValidationResult.new_success()


def validate_expiration_time(jwt: OAuthBearerUnsecuredJws, when_ms: int, skew_ms: int) -> OAuthBearerValidationResult:
    try:
        value = jwt.expiration_time()
    except OAuthBearerIllegalTokenException as e:
        return e.reason
    if value is None:
        return OAuthBearerValidationResult.new_failure("Required claim missing: exp")
    if when_ms - _confirm_non_negative(skew_ms) >= 1000 * float(value):
        return OAuthBearerValidationResult.new_failure(
            f"The indicated time ({when_ms} ms) minus allowable clock skew ({skew_ms} ms) was on or after the "
            f"Expiration Time value ({_java_float(value)} seconds)")
    return OAuthBearerValidationResult.new_success()


def validate_time_consistency(jwt: OAuthBearerUnsecuredJws) -> OAuthBearerValidationResult:
    try:
        issued_at = jwt.issued_at()
        expiration = jwt.expiration_time()
    except OAuthBearerIllegalTokenException as e:
        return e.reason
    if expiration is not None and issued_at is not None and float(expiration) <= float(issued_at):
        return OAuthBearerValidationResult.new_failure(
            f"The Expiration Time time ({_java_float(expiration)} seconds) was not after the Issued At time "
            f"({_java_float(issued_at)} seconds)")
    return OAuthBearerValidationResult.new_success()


def _java_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(items) + "]"


def validate_scope(token: Any, required_scope: Sequence[str]) -> OAuthBearerValidationResult:
    token_scope = token.scope
    if not required_scope:
        return OAuthBearerValidationResult.new_success()
    for item in required_scope:
        if item not in token_scope:
            # (Kafka's message, its spelling included.)
            return OAuthBearerValidationResult.new_failure(
                f"The provided scope ({_java_list(sorted(token_scope))}) was mising a required scope ({item}).  "
                f"All required scope elements: {_java_list(required_scope)}",
                _java_list(required_scope), None)
    return OAuthBearerValidationResult.new_success()


# ---- the callback handlers ---------------------------------------------------------------------

def _single_entry_options(sasl_mechanism: str, jaas_config_entries: Sequence[Any]) -> dict[str, str]:
    if sasl_mechanism != OAUTHBEARER_MECHANISM:
        raise ValueError(f"Unexpected SASL mechanism: {sasl_mechanism}")
    if len(jaas_config_entries) != 1 or jaas_config_entries[0] is None:
        raise ValueError(f"Must supply exactly 1 non-null JAAS mechanism configuration "
                         f"(size was {len(jaas_config_entries)})")
    return dict(jaas_config_entries[0].options)


class OAuthBearerUnsecuredValidatorCallbackHandler:
    """The broker's default OAUTHBEARER validator: unsecured JWS tokens checked against the
    ``unsecuredValidator*`` options. Every extension the client sends is accepted."""

    PRINCIPAL_CLAIM_NAME_OPTION = "unsecuredValidatorPrincipalClaimName"
    SCOPE_CLAIM_NAME_OPTION = "unsecuredValidatorScopeClaimName"
    REQUIRED_SCOPE_OPTION = "unsecuredValidatorRequiredScope"
    ALLOWABLE_CLOCK_SKEW_MILLIS_OPTION = "unsecuredValidatorAllowableClockSkewMs"

    def __init__(self, time: Time = Time.SYSTEM) -> None:
        self._time = time
        self._options: Optional[dict[str, str]] = None

    @property
    def configured(self) -> bool:
        return self._options is not None

    def configure(self, configs: Mapping[str, Any], sasl_mechanism: str, jaas_config_entries: Sequence[Any]) -> None:
        self._options = _single_entry_options(sasl_mechanism, jaas_config_entries)
        # Bad options stop the listener at start rather than failing every client later.
        self.principal_claim_name()
        self.scope_claim_name()
        self.required_scope()
        self.allowable_clock_skew_ms()

    def handle(self, callbacks: Sequence[Any]) -> None:
        if not self.configured:
            raise RuntimeError("Callback handler not configured")
        for callback in callbacks:
            if isinstance(callback, OAuthBearerValidatorCallback):
                try:
                    self._handle_validator_callback(callback)
                except OAuthBearerIllegalTokenException as e:
                    reason = e.reason
                    callback.error("insufficient_scope" if reason.failure_scope is not None else "invalid_token",
                                   reason.failure_scope, reason.failure_open_id_config)
            elif isinstance(callback, OAuthBearerExtensionsValidatorCallback):
                for name in callback.input_extensions:
                    callback.valid(name)
            else:
                raise UnsupportedCallbackException(callback)

    def close(self) -> None:
        pass

    def _handle_validator_callback(self, callback: Any) -> None:
        token_value = callback.token_value
        if token_value is None:
            raise ValueError("Callback missing required token value")
        principal_claim_name = self.principal_claim_name()
        skew_ms = self.allowable_clock_skew_ms()
        jws = OAuthBearerUnsecuredJws(token_value, principal_claim_name, self.scope_claim_name())
        now = self._time.milliseconds()
        validate_claim_for_existence_and_type(jws, True, principal_claim_name, str).throw_exception_if_failed()
        validate_issued_at(jws, False, now, skew_ms).throw_exception_if_failed()
        validate_expiration_time(jws, now, skew_ms).throw_exception_if_failed()
        validate_time_consistency(jws).throw_exception_if_failed()
        validate_scope(jws, self.required_scope()).throw_exception_if_failed()
        logger.info("Successfully validated token with principal %s: %s", jws.principal_name, jws.claims)
        callback.token = jws

    def _option(self, key: str) -> Optional[str]:
        if self._options is None:
            raise RuntimeError("Callback handler not configured")
        return self._options.get(key)

    def principal_claim_name(self) -> str:
        value = self._option(self.PRINCIPAL_CLAIM_NAME_OPTION)
        return value.strip() if value and value.strip() else "sub"

    def scope_claim_name(self) -> str:
        value = self._option(self.SCOPE_CLAIM_NAME_OPTION)
        return value.strip() if value and value.strip() else "scope"

    def required_scope(self) -> list[str]:
        value = self._option(self.REQUIRED_SCOPE_OPTION)
        return parse_scope(value.strip()) if value and value.strip() else []

    def allowable_clock_skew_ms(self) -> int:
        value = self._option(self.ALLOWABLE_CLOCK_SKEW_MILLIS_OPTION)
        if value is None or not value.strip():
            return 0
        try:
            skew = int(value.strip())
        except ValueError:
            raise OAuthBearerConfigException(f"For input string: \"{value.strip()}\"") from None
        if not -2 ** 31 <= skew < 2 ** 31:
            raise OAuthBearerConfigException(f"For input string: \"{value.strip()}\"")
        if skew < 0:
            raise OAuthBearerConfigException(f"Allowable clock skew millis must not be negative: {value}")
        return skew


def _json_escape(text: str) -> str:
    # Kafka escapes only '"' and '\' (in that order, as it does)
    return text.replace('"', '\\"').replace("\\", "\\\\")


def _json_number(value: float) -> str:
    # Kafka writes Java's Double.toString (1.7E9 style); any JSON number reads the same
    return repr(float(value))


class OAuthBearerUnsecuredLoginCallbackHandler:
    """Writes the unsecured JWS a client (here: a broker connecting to another, or a tool)
    logs in with, from the ``unsecuredLogin*`` options, and the SASL extensions of the
    ``unsecuredLoginExtension_<name>`` options."""

    OPTION_PREFIX = "unsecuredLogin"
    PRINCIPAL_CLAIM_NAME_OPTION = OPTION_PREFIX + "PrincipalClaimName"
    LIFETIME_SECONDS_OPTION = OPTION_PREFIX + "LifetimeSeconds"
    SCOPE_CLAIM_NAME_OPTION = OPTION_PREFIX + "ScopeClaimName"
    STRING_CLAIM_PREFIX = OPTION_PREFIX + "StringClaim_"
    NUMBER_CLAIM_PREFIX = OPTION_PREFIX + "NumberClaim_"
    LIST_CLAIM_PREFIX = OPTION_PREFIX + "ListClaim_"
    EXTENSION_PREFIX = OPTION_PREFIX + "Extension_"
    RESERVED_CLAIMS = frozenset(("iat", "exp"))

    def __init__(self, time: Time = Time.SYSTEM) -> None:
        self._time = time
        self._options: Optional[dict[str, str]] = None

    def configure(self, configs: Mapping[str, Any], sasl_mechanism: str, jaas_config_entries: Sequence[Any]) -> None:
        self._options = _single_entry_options(sasl_mechanism, jaas_config_entries)

    def handle(self, callbacks: Sequence[Any]) -> None:
        if self._options is None:
            raise RuntimeError("Callback handler not configured")
        for callback in callbacks:
            if isinstance(callback, OAuthBearerTokenCallback):
                callback.token = self.token()
            elif isinstance(callback, SaslExtensionsCallback):
                callback.extensions = self.extensions()
            else:
                raise UnsupportedCallbackException(callback)

    def close(self) -> None:
        pass

    def _option(self, key: str, default: Optional[str] = None) -> Optional[str]:
        if self._options is None:
            raise RuntimeError("Callback handler not configured")
        value = self._options.get(key)
        return default if value is None else value

    def token(self) -> Optional[OAuthBearerUnsecuredJws]:
        """A new token, valid from now for ``unsecuredLoginLifetimeSeconds``; None when the
        JAAS entry has no options (a login that cannot be used for client connections)."""
        options = self._options or {}
        if not options:
            logger.debug("Token not provided, this login cannot be used to establish client connections")
            return None
        if all(name.startswith(self.EXTENSION_PREFIX) for name in options):
            raise OAuthBearerConfigException("Extensions provided in login context without a token")
        principal_claim_name = (self._option(self.PRINCIPAL_CLAIM_NAME_OPTION) or "").strip() or "sub"
        scope_claim_name = (self._option(self.SCOPE_CLAIM_NAME_OPTION) or "").strip() or "scope"
        header = '{"alg":"none"}'
        lifetime = self._option(self.LIFETIME_SECONDS_OPTION, "3600")
        if not re.fullmatch(r"[+-]?[0-9]+", lifetime):  # Long.parseLong: no blanks
            raise OAuthBearerConfigException(f"For input string: \"{lifetime}\"")
        lifetime_seconds = int(lifetime)
        now_seconds = self._time.milliseconds() / 1000.0
        claims = "{%s,%s%s}" % (self._number_text("exp", now_seconds + lifetime_seconds),
                                self._number_text("iat", now_seconds), self._other_claims_text())
        serialization = "%s.%s." % (_b64url(header), _b64url(claims))
        try:
            jws = OAuthBearerUnsecuredJws(serialization, principal_claim_name, scope_claim_name)
        except OAuthBearerIllegalTokenException as e:
            # the principal claim is missing or empty
            raise OAuthBearerConfigException(str(e)) from None
        logger.info("Retrieved token with principal %s", jws.principal_name)
        return jws

    def extensions(self) -> dict[str, str]:
        extensions = {key[len(self.EXTENSION_PREFIX):]: value for key, value in (self._options or {}).items()
                      if key.startswith(self.EXTENSION_PREFIX)}
        try:
            validate_extensions(extensions)
        except SaslException as e:
            raise OAuthBearerConfigException(str(e)) from None
        return extensions

    def _other_claims_text(self) -> str:
        parts = []
        for key, value in (self._options or {}).items():
            for prefix in (self.STRING_CLAIM_PREFIX, self.NUMBER_CLAIM_PREFIX, self.LIST_CLAIM_PREFIX):
                if key.startswith(prefix) and len(key) > len(prefix):
                    name = key[len(prefix):]
                    if name in self.RESERVED_CLAIMS:
                        raise OAuthBearerConfigException(f"Cannot explicitly set the '{name}' claim")
                    if prefix is self.STRING_CLAIM_PREFIX:
                        parts.append(f'"{_json_escape(name)}":"{_json_escape(value)}"')
                    elif prefix is self.NUMBER_CLAIM_PREFIX:
                        try:
                            number = float(value)
                        except ValueError:
                            raise OAuthBearerConfigException(f"For input string: \"{value}\"") from None
                        if not math.isfinite(number):  # no JSON for NaN or the infinities
                            raise OAuthBearerConfigException(f"Not a finite number: {value}")
                        parts.append(self._number_text(name, number))
                    else:
                        parts.append(f'"{_json_escape(name)}":{_list_json_text(value)}')
        return "".join("," + part for part in parts)

    @staticmethod
    def _number_text(name: str, value: float) -> str:
        return f'"{_json_escape(name)}":{_json_number(value)}'


def _list_json_text(value: str) -> str:
    """``unsecuredLoginListClaim_<name>`` values: the first character is the delimiter."""
    if len(value) <= 1:
        return "[]"
    delimiter, text = value[0], value[1:]
    elements = text.split(delimiter)
    # Java's split drops trailing empty strings
    while len(elements) > 1 and elements[-1] == "":
        elements.pop()
    items = [f'"{_json_escape(e)}"' for e in elements]
    if text.startswith(delimiter) or text.endswith(delimiter) or delimiter * 2 in text:
        items.append('""')
    return "[" + ",".join(items) + "]"


def _b64url(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode("utf-8")).rstrip(b"=").decode("ascii")


__all__ = [
    "OAUTHBEARER_MECHANISM", "OAUTHBEARER_LOGIN_MODULE", "OAuthBearerConfigException", "OAuthBearerIllegalTokenException",
    "OAuthBearerUnsecuredJws", "OAuthBearerUnsecuredLoginCallbackHandler", "OAuthBearerUnsecuredValidatorCallbackHandler",
    "OAuthBearerValidationResult", "UnsupportedCallbackException", "parse_scope",
]
