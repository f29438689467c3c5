"""Port of clients/src/main/java/org/apache/kafka/common/security/JaasConfig.java (Kafka 2.8.2):
the one-line JAAS text of ``sasl.jaas.config``.

``<LoginModuleClass> <flag> key="value" key2=value2 ...;`` (one or more modules, each
ending with ``;``). Values may be quoted with double quotes (backslash escapes inside)
or bare tokens. Parsed by a small tokenizer with no regular-expression backtracking, so
any text either parses or raises ValueError naming what is wrong.
"""
from __future__ import annotations

from dataclasses import dataclass, field

PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
_FLAGS = {"required", "requisite", "sufficient", "optional"}


@dataclass
class AppConfigurationEntry:
    login_module_name: str
    control_flag: str
    options: dict[str, str] = field(default_factory=dict)


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) tokens: word, string, '=', ';'."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "=;":
            out.append((c, c))
            i += 1
        elif c == '"':
            i += 1
            buf = []
            while True:
                if i >= n:
                    raise ValueError("unterminated quoted value")
                c = text[i]
                if c == "\\" and i + 1 < n:
                    buf.append(text[i + 1])
                    i += 2
                elif c == '"':
                    i += 1
                    break
                else:
                    buf.append(c)
                    i += 1
            out.append(("string", "".join(buf)))
        else:
            start = i
            while i < n and not text[i].isspace() and text[i] not in '=;"':
                i += 1
            out.append(("word", text[start:i]))
    return out


def parse_jaas_config(text: str) -> list[AppConfigurationEntry]:
    tokens = _tokens(text)
    entries: list[AppConfigurationEntry] = []
    pos = 0
    while pos < len(tokens):
        kind, module = tokens[pos]
        if kind != "word":
            raise ValueError(f"expected a login module class name, found '{module}'")
        if pos + 1 >= len(tokens) or tokens[pos + 1][0] != "word" or tokens[pos + 1][1].lower() not in _FLAGS:
            raise ValueError(f"login module {module} must be followed by a control flag "
                             f"({', '.join(sorted(_FLAGS))})")
        entry = AppConfigurationEntry(module, tokens[pos + 1][1].lower())
        pos += 2
        while True:
            if pos >= len(tokens):
                raise ValueError("JAAS config entry not terminated by semi-colon")
            kind, value = tokens[pos]
            if kind == ";":
                pos += 1
                break
            if kind != "word" or pos + 2 >= len(tokens) or tokens[pos + 1][0] != "=" \
                    or tokens[pos + 2][0] not in ("word", "string"):
                raise ValueError(f"expected key=value in the options of {module}, found '{value}'")
            entry.options[value] = tokens[pos + 2][1]
            pos += 3
        entries.append(entry)
    if not entries:
        raise ValueError("JAAS config has no login module")
    return entries


def plain_users(entries: list[AppConfigurationEntry]) -> dict[str, str]:
    """The ``user_<name>="<password>"`` options of PlainLoginModule entries."""
    users: dict[str, str] = {}
    for entry in entries:
        if entry.login_module_name == PLAIN_LOGIN_MODULE:
            for key, value in entry.options.items():
                if key.startswith("user_"):
                    users[key[len("user_"):]] = value
    return users


def client_credentials(entries: list[AppConfigurationEntry]) -> tuple[str, str] | None:
    """The ``username``/``password`` options (what a broker logs in with to other brokers)."""
    for entry in entries:
        if "username" in entry.options and "password" in entry.options:
            return entry.options["username"], entry.options["password"]
    return None
