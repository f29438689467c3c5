"""Port of clients/src/main/java/org/apache/kafka/common/security/kerberos/ (Kafka 2.8.2):
KerberosName.java, KerberosRule.java, KerberosShortNamer.java and KerberosLogin.java, with
the GSSAPI SaslServer and SaslClient the JDK gives Kafka (RFC 4752) and the GSSAPI parts of
authenticator/SaslServerAuthenticator.java and SaslServerCallbackHandler.java.

* ``KerberosName``: ``primary/host@REALM`` split into its parts.
* ``KerberosShortNamer``: ``sasl.kerberos.principal.to.local.rules`` (Kafka's auth_to_local
  syntax, ``RULE:[n:format](match)s/from/to/g/L`` and ``DEFAULT``); a client's principal is
  mapped to the user name of its KafkaPrincipal by the first rule that applies.
* ``KerberosLogin``: the broker's own principal and keytab, from the listener's
  ``com.sun.security.auth.module.Krb5LoginModule`` JAAS entry, made into acceptor credentials
  once per listener. The keytab is given to MIT Kerberos through the GSS-API credential store
  (``gss_acquire_cred_from``), never through KRB5_KTNAME, so listeners and brokers in one
  process or machine each use their own.
* ``GssapiSaslServer``: one connection's exchange. The client's GSS-API tokens establish the
  security context (the broker answers with the AP-REP under mutual authentication); then the
  broker offers, in a wrapped 4-byte message, no security layer only; the client's wrapped
  answer (the layer it chose, its buffer size, an authorization id) ends the exchange. As in
  Kafka's SaslServerCallbackHandler, the authorization id the client asks for is not taken:
  the connection is the principal the ticket was issued to.
* ``GssapiSaslClient``: the same exchange from the other end, for a broker connecting to
  another broker's GSSAPI listener (``sasl.mechanism.inter.broker.protocol=GSSAPI``) with
  the tickets ``KerberosLogin.login_initiator`` takes from the keytab.

python-gssapi (over MIT Kerberos' libgssapi_krb5) is imported only when a listener enables
GSSAPI, so a broker without it starts as long as GSSAPI is not enabled.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import re
from typing import Any, Optional, Sequence

from kafka_py.clients.common.security.errors import SaslException
from kafka_py.clients.common.security.jaas_config import AppConfigurationEntry

logger = logging.getLogger(__name__)

GSSAPI_MECHANISM = "GSSAPI"
KRB5_LOGIN_MODULE = "com.sun.security.auth.module.Krb5LoginModule"

# The security layers of RFC 4752's negotiation message (a bit mask in its first octet).
NO_SECURITY_LAYER = 1
INTEGRITY_LAYER = 2
CONFIDENTIALITY_LAYER = 4
# What the broker says its receive buffer is; with no security layer it bounds nothing, and
# the JDK's GSSAPI server says the same.
MAX_RECEIVE_BUFFER = 65536


class NoMatchingRule(Exception):
    """No principal.to.local rule maps the name (Kafka's KerberosShortNamer.NoMatchingRule)."""


class ServiceNameError(ValueError):
    """No service name in the JAAS entry nor in sasl.kerberos.service.name, or two different ones."""


class BadFormatString(ValueError):
    """A rule's format names a component the principal does not have."""


# ---- KerberosName ------------------------------------------------------------------------

_NAME_PARSER = re.compile(r"([^/@]*)(/([^/@]*))?@([^/@]*)")


class KerberosName:
    """A principal: ``service_name`` (its primary), ``host_name`` and ``realm`` (both may be None)."""

    def __init__(self, service_name: str, host_name: Optional[str], realm: Optional[str]) -> None:
        if service_name is None:
            raise ValueError("serviceName must not be null")
        self.service_name = service_name
        self.host_name = host_name
        self.realm = realm

    @classmethod
    def parse(cls, principal_name: str) -> "KerberosName":
        match = _NAME_PARSER.fullmatch(principal_name)
        if match is None:
            if "@" in principal_name:
                raise ValueError(f"Malformed Kerberos name: {principal_name}")
            return cls(principal_name, None, None)
        return cls(match.group(1), match.group(3), match.group(4))

    def __str__(self) -> str:
        text = self.service_name
        if self.host_name is not None:
            text += "/" + self.host_name
        if self.realm is not None:
            text += "@" + self.realm
        return text

    def __repr__(self) -> str:
        return f"KerberosName({self})"


# ---- KerberosRule ------------------------------------------------------------------------

_PARAMETER = re.compile(r"([^$]*)(\$(\d*))?")
_NON_SIMPLE = re.compile(r"[/@]")


def _python_replacement(java: str) -> str:
    """A java.util.regex replacement string (``$1``, ``\\$``) as re.sub takes it (``\\g<1>``)."""
    out = []
    i = 0
    while i < len(java):
        c = java[i]
        if c == "\\" and i + 1 < len(java):
            out.append(java[i + 1].replace("\\", "\\\\"))
            i += 2
        elif c == "$" and i + 1 < len(java) and java[i + 1].isdigit():
            j = i + 1
            while j < len(java) and java[j].isdigit():
                j += 1
            out.append(f"\\g<{java[i + 1:j]}>")
            i = j
        else:
            out.append("\\\\" if c == "\\" else c)
            i += 1
    return "".join(out)


class KerberosRule:
    """One rule: DEFAULT (a principal of the default realm is its primary), or
    ``RULE:[n:format](match)s/from/to/g/L|U`` for principals of n components."""

    def __init__(self, default_realm: str, num_of_components: Optional[int] = None, format: Optional[str] = None,
                 match: Optional[str] = None, from_pattern: Optional[str] = None, to_pattern: Optional[str] = None,
                 repeat: bool = False, to_lower_case: bool = False, to_upper_case: bool = False) -> None:
        self.default_realm = default_realm
        self.is_default = num_of_components is None
        self.num_of_components = num_of_components or 0
        self.format = format
        self._match_text = match
        self.match = re.compile(match) if match is not None else None
        self._from_text = from_pattern
        self.from_pattern = re.compile(from_pattern) if from_pattern is not None else None
        self.to_pattern = to_pattern
        self._replacement = _python_replacement(to_pattern or "")
        self.repeat = repeat
        self.to_lower_case = to_lower_case
        self.to_upper_case = to_upper_case

    def __str__(self) -> str:
        if self.is_default:
            return "DEFAULT"
        text = f"RULE:[{self.num_of_components}:{self.format}]"
        if self._match_text is not None:
            text += f"({self._match_text})"
        if self._from_text is not None:
            text += f"s/{self._from_text}/{self.to_pattern}/" + ("g" if self.repeat else "")
        if self.to_lower_case:
            text += "/L"
        if self.to_upper_case:
            text += "/U"
        return text

    __repr__ = __str__

    @staticmethod
    def replace_parameters(format: str, params: Sequence[str]) -> str:
        """``format`` with ``$0`` (the realm), ``$1``... (the components) filled in."""
        result = []
        start = 0
        while start < len(format):
            match = _PARAMETER.match(format, start)
            result.append(match.group(1))
            number = match.group(3)
            if number is not None:
                if number == "":
                    raise BadFormatString(f"bad format in username mapping in {format}")
                index = int(number)
                if index >= len(params):
                    raise BadFormatString(f"index {index} from {format} is outside of the valid range 0 to "
                                          f"{len(params) - 1}")
                result.append(params[index])
            if match.end() == start:  # a lone '$' at the end
                break
            start = match.end()
        return "".join(result)

    def apply(self, params: Sequence[str]) -> Optional[str]:
        """The short name, or None when this rule does not apply. ``params``: realm, then the
        principal's components."""
        result = None
        if self.is_default:
            if self.default_realm == params[0]:
                result = params[1]
        elif len(params) - 1 == self.num_of_components:
            base = self.replace_parameters(self.format or "", params)
            if self.match is None or self.match.fullmatch(base):
                if self.from_pattern is None:
                    result = base
                else:
                    result = self.from_pattern.sub(self._replacement, base, count=0 if self.repeat else 1)
        if result is not None and _NON_SIMPLE.search(result):
            raise NoMatchingRule(f"Non-simple name {result} after auth_to_local rule {self}")
        if result is not None and self.to_lower_case:
            result = result.lower()
        elif result is not None and self.to_upper_case:
            result = result.upper()
        return result


# ---- KerberosShortNamer ------------------------------------------------------------------

_RULE_PARSER = re.compile(
    r"((DEFAULT)|((RULE:\[(\d*):([^\]]*)\](\(([^)]*)\))?(s/([^/]*)/([^/]*)/(g)?)?/?(L|U)?)))")


class KerberosShortNamer:
    """The principal.to.local rules of a listener, in order."""

    def __init__(self, rules: list[KerberosRule]) -> None:
        self.principal_to_local_rules = rules

    @classmethod
    def from_unparsed_rules(cls, default_realm: str, rules: Optional[Sequence[str]]) -> "KerberosShortNamer":
        """ValueError naming the rule that does not parse."""
        texts = list(rules) if rules is not None else ["DEFAULT"]
        parsed = []
        for rule in texts:
            match = _RULE_PARSER.match(rule)
            if match is None:
                raise ValueError(f"Invalid rule: {rule}")
            if match.end() != len(rule):
                raise ValueError(f"Invalid rule: `{rule}`, unmatched substring: `{rule[match.end():]}`")
            if match.group(2) is not None:
                parsed.append(KerberosRule(default_realm))
                continue
            if not match.group(5):
                raise ValueError(f"Invalid rule: `{rule}`, no number of components")
            try:
                parsed.append(KerberosRule(default_realm, int(match.group(5)), match.group(6), match.group(8),
                                           match.group(10), match.group(11), match.group(12) == "g",
                                           match.group(13) == "L", match.group(13) == "U"))
            except re.error as e:
                raise ValueError(f"Invalid rule: `{rule}`, bad regular expression: {e}") from None
        return cls(parsed)

    def short_name(self, name: KerberosName) -> str:
        if name.host_name is None:
            if name.realm is None:  # already a simple name
                return name.service_name
            params = [name.realm, name.service_name]
        else:
            params = [name.realm or "", name.service_name, name.host_name]
        for rule in self.principal_to_local_rules:
            result = rule.apply(params)
            if result is not None:
                return result
        raise NoMatchingRule(f"No rules apply to {name}, rules {self.principal_to_local_rules}")

    def __str__(self) -> str:
        return f"KerberosShortNamer(principalToLocalRules = {self.principal_to_local_rules})"


def default_kerberos_realm() -> str:
    """The default realm of the krb5.conf this process reads (KRB5_CONFIG), "" when there is
    none, as Kafka's SaslChannelBuilder falls back to."""
    path = ctypes.util.find_library("krb5")
    if path is None:
        return ""
    try:
        lib = ctypes.CDLL(path)
        context = ctypes.c_void_p()
        if lib.krb5_init_context(ctypes.byref(context)) != 0:
            return ""
        try:
            realm = ctypes.c_char_p()
            if lib.krb5_get_default_realm(context, ctypes.byref(realm)) != 0:
                return ""
            value = realm.value.decode("utf-8", "replace") if realm.value else ""
            lib.krb5_free_default_realm(context, realm)
            return value
        finally:
            lib.krb5_free_context(context)
    except (OSError, AttributeError):
        return ""


# ---- KerberosLogin -----------------------------------------------------------------------

def _gssapi() -> Any:
    try:
        import gssapi
    except ImportError as e:
        raise ImportError("SASL/GSSAPI needs the python-gssapi package (pip install gssapi) over MIT "
                          f"Kerberos: {e}") from None
    return gssapi


def _true(value: Optional[str]) -> bool:
    return (value or "").strip().lower() == "true"


class KerberosLogin:
    """The broker's Kerberos identity on one listener: its principal, its keytab, and the
    acceptor credentials made from them.

    ``configure`` checks the JAAS entry (ValueError saying what is wrong), ``login`` reads
    the keytab (an error when it has no key of the principal)."""

    def __init__(self, entries: list[AppConfigurationEntry], configured_service_name: Optional[str]) -> None:
        krb5 = [e for e in entries if e.login_module_name == KRB5_LOGIN_MODULE]
        if not krb5:
            raise ValueError(f"GSSAPI needs a {KRB5_LOGIN_MODULE} entry")
        options = krb5[0].options
        if not _true(options.get("useKeyTab")):
            raise ValueError("the broker's Krb5LoginModule needs useKeyTab=true and keyTab=\"<path>\" "
                             "(kafka-py does not read ticket caches for its own identity)")
        self.keytab = options.get("keyTab")
        if not self.keytab:
            raise ValueError("the Krb5LoginModule entry has no keyTab")
        self.principal = options.get("principal")
        if not self.principal or self.principal == "*":
            raise ValueError("the Krb5LoginModule entry has no principal")
        self.service_name = self.get_service_name(options.get("serviceName"), configured_service_name)
        self.credentials: Any = None
        self.initiator_credentials: Any = None

    @staticmethod
    def get_service_name(jaas_service_name: Optional[str], configured: Optional[str]) -> str:
        if jaas_service_name and configured and jaas_service_name != configured:
            raise ServiceNameError(f"Conflicting serviceName values found in JAAS and Kafka configs value in JAAS "
                             f"file {jaas_service_name}, value in Kafka config {configured}")
        name = jaas_service_name or configured
        if not name:
            raise ServiceNameError("No serviceName defined in either JAAS or Kafka config")
        return name

    def login(self) -> Any:
        """The acceptor credentials of the principal, from the keytab (through the credential store)."""
        if not os.access(self.keytab, os.R_OK):
            raise ValueError(f"the keytab {self.keytab} cannot be read")
        gssapi = _gssapi()
        name = gssapi.Name(self.principal, gssapi.NameType.kerberos_principal)
        try:
            self.credentials = gssapi.Credentials(name=name, usage="accept",
                                                  store={b"keytab": os.fsencode(self.keytab)})
        except gssapi.exceptions.GSSError as e:
            raise ValueError(f"no key of {self.principal} in the keytab {self.keytab}: {e}") from None
        logger.info("Successfully logged in as %s with keytab %s", self.principal, self.keytab)
        return self.credentials

    def login_initiator(self) -> Any:
        """Credentials to connect with (another broker's GSSAPI listener): the principal's
        tickets, taken from the keytab into a credential cache in memory of this login alone;
        MIT Kerberos takes a new ticket from the keytab when the one it holds expires, which
        is what KerberosLogin's refresh thread does in Kafka."""
        if not os.access(self.keytab, os.R_OK):
            raise ValueError(f"the keytab {self.keytab} cannot be read")
        gssapi = _gssapi()
        name = gssapi.Name(self.principal, gssapi.NameType.kerberos_principal)
        store = {b"client_keytab": os.fsencode(self.keytab),
                 b"ccache": f"MEMORY:kafka-py-{id(self):x}-{os.getpid()}".encode()}
        try:
            self.initiator_credentials = gssapi.Credentials(name=name, usage="initiate", store=store)
            self.initiator_credentials.lifetime  # the first ticket now: a bad keytab stops the start
        except gssapi.exceptions.GSSError as e:
            raise ValueError(f"{self.principal} cannot log in with the keytab {self.keytab}: {e}") from None
        logger.info("Successfully logged in as %s with keytab %s to connect to other brokers", self.principal,
                    self.keytab)
        return self.initiator_credentials

    def sasl_client(self, host: str) -> "GssapiSaslClient":
        """A client exchange with the service ``<service name>/<host>``."""
        return GssapiSaslClient(self.initiator_credentials, self.service_name, host, self.principal)

    @property
    def kerberos_name(self) -> KerberosName:
        return KerberosName.parse(self.principal)


# ---- the GSSAPI SaslServer ---------------------------------------------------------------

class GssapiSaslServer:
    """One connection's SASL/GSSAPI exchange on the accepting side (RFC 4752), with
    ``evaluate_response(token) -> challenge``, ``complete`` and ``authorization_id`` (the
    client principal's short name)."""

    _CONTEXT, _EMPTY_RESPONSE, _SECURITY_LAYER, _DONE = range(4)

    def __init__(self, credentials: Any, short_namer: KerberosShortNamer) -> None:
        self._gssapi = _gssapi()
        self._context = self._gssapi.SecurityContext(creds=credentials, usage="accept")
        self._short_namer = short_namer
        self._stage = self._CONTEXT
        self.complete = False
        self.authentication_id: Optional[str] = None
        self.authorization_id: Optional[str] = None

    def evaluate_response(self, token: bytes) -> bytes:
        try:
            if self._stage == self._CONTEXT:
                return self._establish(token)
            if self._stage == self._EMPTY_RESPONSE:
                if token:
                    raise SaslException("GSSAPI: the client answered the context's last token with data")
                return self._offer_security_layers()
            if self._stage == self._SECURITY_LAYER:
                return self._choose_security_layer(token)
        except self._gssapi.exceptions.GSSError as e:
            raise SaslException(f"GSSAPI failure: {e}") from None
        raise SaslException("GSSAPI: the exchange is already complete")

    def _establish(self, token: bytes) -> bytes:
        if not token:
            raise SaslException("GSSAPI: empty initial token")
        out = self._context.step(token)
        if not self._context.complete:
            return out or b""
        self.authentication_id = str(self._context.initiator_name)
        if out:
            # Mutual authentication: the AP-REP goes first; the client's empty answer follows.
            self._stage = self._EMPTY_RESPONSE
            return out
        return self._offer_security_layers()

    def _offer_security_layers(self) -> bytes:
        offer = bytes([NO_SECURITY_LAYER]) + MAX_RECEIVE_BUFFER.to_bytes(3, "big")
        self._stage = self._SECURITY_LAYER
        return self._context.wrap(offer, False).message

    def _choose_security_layer(self, token: bytes) -> bytes:
        answer = self._context.unwrap(token).message
        if len(answer) < 4:
            raise SaslException("GSSAPI: the client's security layer message is too short")
        if answer[0] != NO_SECURITY_LAYER:
            raise SaslException(f"GSSAPI: the client chose security layers {answer[0]:#x}, only "
                                f"{NO_SECURITY_LAYER:#x} (none) was offered")
        requested = answer[4:].decode("utf-8", "replace") if len(answer) > 4 else self.authentication_id
        logger.info("Successfully authenticated client: authenticationID=%s; authorizationID=%s.",
                    self.authentication_id, requested)
        try:
            self.authorization_id = self._short_namer.short_name(KerberosName.parse(self.authentication_id))
        except (NoMatchingRule, BadFormatString, ValueError) as e:
            raise SaslException(f"Failed to set name for '{self.authentication_id}' based on Kerberos "
                                f"authentication rules: {e}") from None
        self._stage = self._DONE
        self.complete = True
        return b""


class KerberosClientLogin:
    """A client's Kerberos identity (a tool's ``--command-config``, a Java client's
    ``sasl.jaas.config`` with Krb5LoginModule): the tickets of a keytab (``useKeyTab=true``,
    ``keyTab``, ``principal``), or those a ``kinit`` left in the user's ticket cache
    (``useTicketCache=true``, KRB5CCNAME or the default cache), as Kafka's clients take them.

    ``configure`` errors are ValueError saying what is wrong; ``login_initiator`` takes the
    credentials (ValueError when there are none)."""

    def __init__(self, entries: list[AppConfigurationEntry], configured_service_name: Optional[str]) -> None:
        krb5 = [e for e in entries if e.login_module_name == KRB5_LOGIN_MODULE]
        if not krb5:
            raise ValueError(f"GSSAPI needs a {KRB5_LOGIN_MODULE} entry")
        options = krb5[0].options
        self.use_keytab = _true(options.get("useKeyTab"))
        self.keytab = options.get("keyTab")
        self.principal = options.get("principal") or ""
        if self.use_keytab and (not self.keytab or not self.principal):
            raise ValueError("Krb5LoginModule with useKeyTab=true needs keyTab=\"<path>\" and principal=\"<name>\"")
        if not self.use_keytab and not _true(options.get("useTicketCache")):
            raise ValueError("Krb5LoginModule needs useKeyTab=true (with keyTab and principal) or "
                             "useTicketCache=true (tickets from kinit)")
        self.service_name = KerberosLogin.get_service_name(options.get("serviceName"), configured_service_name)
        self.initiator_credentials: Any = None

    def login_initiator(self) -> Any:
        gssapi = _gssapi()
        try:
            if self.use_keytab:
                if not os.access(self.keytab, os.R_OK):
                    raise ValueError(f"the keytab {self.keytab} cannot be read")
                name = gssapi.Name(self.principal, gssapi.NameType.kerberos_principal)
                store = {b"client_keytab": os.fsencode(self.keytab),
                         b"ccache": f"MEMORY:kafka-py-client-{id(self):x}-{os.getpid()}".encode()}
                credentials = gssapi.Credentials(name=name, usage="initiate", store=store)
            else:
                name = gssapi.Name(self.principal, gssapi.NameType.kerberos_principal) if self.principal else None
                credentials = gssapi.Credentials(name=name, usage="initiate")
            credentials.lifetime  # a ticket now: no credentials is an error here, not at the first request
        except gssapi.exceptions.GSSError as e:
            where = f"the keytab {self.keytab}" if self.use_keytab else "the ticket cache (kinit first)"
            raise ValueError(f"no Kerberos credentials{f' of {self.principal}' if self.principal else ''} "
                             f"in {where}: {e}") from None
        self.principal = str(credentials.name)
        self.initiator_credentials = credentials
        return credentials

    def store_in(self, ccache: str) -> None:
        """Write the credentials to the credential cache ``ccache`` (a clients library that reads
        KRB5CCNAME, such as kafka-python's GSSAPI, then finds them)."""
        self.initiator_credentials.store(store={b"ccache": ccache.encode()}, usage="initiate", overwrite=True,
                                         set_default=True)

    def sasl_client(self, host: str) -> "GssapiSaslClient":
        return GssapiSaslClient(self.initiator_credentials, self.service_name, host, self.principal)


class GssapiSaslClient:
    """The client side of RFC 4752, as a broker runs it against another broker's listener:
    ``evaluate_challenge(challenge) -> token`` (None when there is nothing more to send)."""

    def __init__(self, credentials: Any, service_name: str, host: str, authorization_id: str) -> None:
        gssapi = _gssapi()
        self._gssapi = gssapi
        target = gssapi.Name(f"{service_name}@{host}", gssapi.NameType.hostbased_service)
        flags = [gssapi.RequirementFlag.mutual_authentication, gssapi.RequirementFlag.out_of_sequence_detection]
        self._context = gssapi.SecurityContext(name=target, creds=credentials, usage="initiate", flags=flags)
        self._authorization_id = authorization_id.encode("utf-8")
        self._answered = False
        self.complete = False

    def evaluate_challenge(self, challenge: Optional[bytes]) -> Optional[bytes]:
        try:
            if challenge is None:
                return self._context.step(None)
            if not self._context.complete:
                # the server's context tokens; the empty answer after its last one
                return self._context.step(challenge) or b""
            if not self._answered:
                offer = self._context.unwrap(challenge).message
                if len(offer) < 4 or not offer[0] & NO_SECURITY_LAYER:
                    raise SaslException("GSSAPI: the server does not offer to go without a security layer")
                self._answered = True
                answer = bytes([NO_SECURITY_LAYER]) + offer[1:4] + self._authorization_id
                return self._context.wrap(answer, False).message
        except self._gssapi.exceptions.GSSError as e:
            raise SaslException(f"GSSAPI failure: {e}") from None
        self.complete = True
        return None


class GssapiServerConfig:
    """A listener's GSSAPI: its logged-in KerberosLogin and its short namer."""

    def __init__(self, login: KerberosLogin, short_namer: KerberosShortNamer) -> None:
        self.login = login
        self.short_namer = short_namer

    def new_server(self) -> GssapiSaslServer:
        return GssapiSaslServer(self.login.credentials, self.short_namer)
