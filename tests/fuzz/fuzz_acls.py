"""Fuzz target: AclAuthorizer's decisions over any set of ACLs, against a brute-force reading
of Kafka's rules (kafka_py/core/security/authorizer/acl_authorizer.py).

The authorizer answers from an index (_AclIndex: LITERAL patterns by name, PREFIXED ones by
their lengths, entries split by principal and permission, decisions remembered per index);
the reference here walks every pattern and entry for each question, as Kafka's
AclAuthorizer.authorize reads its ACL cache. The input is a program: each step either adds
an entry to a resource pattern, removes a pattern's entries, or asks a question (principal,
host, operation, resource type, name). Names come from a small alphabet with the wildcard
``*`` and a non-ASCII letter, so literal names, prefixes and the wildcard collide often.

Contract: every answer equals the reference's; and the index's (resource type -> patterns)
view equals the set of patterns that still hold entries.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from kafka_py.core.security.authorizer.acl import (
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from kafka_py.core.security.authorizer.acl_authorizer import AclAuthorizer, VersionedAcls, canonical_host

_NAME_CHARS = "ab*é"
_PRINCIPALS = ("User:alice", "User:bob", "User:*")
# as an ACL may name them (both IPv4 forms of one address, IPv6, any) ...
_ACL_HOSTS = ("*", "10.0.0.1", "::ffff:10.0.0.1", "10.0.0.2", "::1", "0:0:0:0:0:0:0:1")
# ... and as a connection's address arrives (the canonical text)
_CLIENT_HOSTS = ("10.0.0.1", "10.0.0.2", "::1")
_OPERATIONS = tuple(op for op in AclOperation if op not in (AclOperation.UNKNOWN, AclOperation.ANY))
_ASKED = tuple(op for op in _OPERATIONS if op is not AclOperation.ALL)
_PERMISSIONS = (AclPermissionType.ALLOW, AclPermissionType.DENY)
_TYPES = (ResourceType.TOPIC, ResourceType.GROUP)
_PATTERNS = (PatternType.LITERAL, PatternType.PREFIXED)
# Kafka's AclOperation: an Allow of any of these also allows DESCRIBE (DESCRIBE_CONFIGS)
_IMPLIES = {
    AclOperation.DESCRIBE: {AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER},
    AclOperation.DESCRIBE_CONFIGS: {AclOperation.ALTER_CONFIGS},
}


class _Reader:
    """Bytes as small choices; past the end every choice is 0 and ``done`` is set."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.position = 0

    @property
    def done(self) -> bool:
        return self.position >= len(self.data)

    def byte(self) -> int:
        if self.done:
            return 0
        value = self.data[self.position]
        self.position += 1
        return value

    def pick(self, choices):
        return choices[self.byte() % len(choices)]

    def name(self) -> str:
        length = self.byte() % 5
        return "".join(self.pick(_NAME_CHARS) for _ in range(length))


def _pattern_matches(pattern: ResourcePattern, resource_type: ResourceType, name: str) -> bool:
    if pattern.resource_type is not resource_type:
        return False
    if pattern.pattern_type is PatternType.LITERAL:
        return pattern.name == name or pattern.name == "*"
    # a PREFIXED pattern of the empty name matches nothing (Kafka looks prefixes up by their
    # first character on)
    return pattern.name != "" and name.startswith(pattern.name)


def _reference(acls: dict, allow_if_none: bool, principal: str, host: str, operation: AclOperation,
               resource_type: ResourceType, name: str) -> bool:
    entries = [e for pattern, held in acls.items() if _pattern_matches(pattern, resource_type, name) for e in held]
    if not entries:
        return allow_if_none

    def applies(entry: AccessControlEntry) -> bool:
        return (entry.principal in (principal, "User:*")
                and (entry.host == "*" or canonical_host(entry.host) == host))

    for entry in entries:
        if (entry.permission_type is AclPermissionType.DENY and applies(entry)
                and entry.operation in (operation, AclOperation.ALL)):
            return False
    allowed_by = {operation, AclOperation.ALL} | _IMPLIES.get(operation, set())
    return any(entry.permission_type is AclPermissionType.ALLOW and applies(entry)
               and entry.operation in allowed_by for entry in entries)


def _steps(reader: _Reader) -> Iterator[tuple]:
    while not reader.done:
        kind = reader.byte() % 4
        pattern = ResourcePattern(reader.pick(_TYPES), reader.name(), reader.pick(_PATTERNS))
        if kind in (0, 1):
            yield ("add", pattern, AccessControlEntry(reader.pick(_PRINCIPALS), reader.pick(_ACL_HOSTS),
                                                      reader.pick(_OPERATIONS), reader.pick(_PERMISSIONS)))
        elif kind == 2:
            yield ("remove", pattern, None)
        else:
            yield ("ask", pattern, (reader.pick(_PRINCIPALS[:2]), reader.pick(_CLIENT_HOSTS), reader.pick(_ASKED)))


def one_input(data: bytes) -> None:
    if not data:
        return
    authorizer = AclAuthorizer()
    authorizer.should_allow_everyone_if_no_acl_is_found = bool(data[0] & 1)
    acls: dict[ResourcePattern, frozenset] = {}
    version = 0
    for kind, pattern, detail in _steps(_Reader(data[1:])):
        if kind == "add":
            acls[pattern] = acls.get(pattern, frozenset()) | {detail}
        elif kind == "remove":
            acls.pop(pattern, None)
        else:
            principal, host, operation = detail
            got = authorizer._acls_allow(principal, host, operation, pattern.resource_type, pattern.name)
            want = _reference(acls, authorizer.should_allow_everyone_if_no_acl_is_found, principal, host,
                              operation, pattern.resource_type, pattern.name)
            if got != want:
                raise AssertionError(f"{principal}@{host} {operation.name} on {pattern.resource_type.name} "
                                     f"{pattern.name!r}: authorizer says {got}, Kafka's rules say {want}; "
                                     f"ACLs {acls}")
            continue
        version += 1
        authorizer._index = authorizer._index.updated(pattern, VersionedAcls(acls.get(pattern, frozenset()),
                                                                             version))
    held = {pattern for pattern, versioned in authorizer._index.acls.items() if versioned.acls}
    if held != set(acls):
        raise AssertionError(f"the index holds {held}, the ACLs are {set(acls)}")


def _program(*steps: Iterable[int]) -> bytes:
    return bytes(b for step in steps for b in step)


def seeds() -> Iterable[tuple[str, bytes]]:
    # add: kind, type, name length + chars, pattern, principal, host, operation, permission
    allow_read_prefixed = (0, 0, 2, 0, 1, 1, 0, 0, 1, 0)      # TOPIC "ab" PREFIXED alice * READ ALLOW
    deny_all_literal_star = (0, 0, 1, 2, 0, 2, 1, 0, 1)       # TOPIC "*" LITERAL User:* 10.0.0.1 ALL DENY
    ask_alice_abb = (3, 0, 3, 0, 1, 1, 0, 0, 0, 5)            # TOPIC "abb": alice 10.0.0.1 DESCRIBE?
    remove_star = (2, 0, 1, 2, 0)
    yield "allow-then-ask", _program((0,), allow_read_prefixed, ask_alice_abb)
    yield "deny-wins", _program((0,), allow_read_prefixed, deny_all_literal_star, ask_alice_abb)
    yield "removed-deny", _program((0,), allow_read_prefixed, deny_all_literal_star, remove_star, ask_alice_abb)
    yield "no-acls-allow-everyone", _program((1,), ask_alice_abb)
