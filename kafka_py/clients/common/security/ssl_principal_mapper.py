"""Port of clients/src/main/java/org/apache/kafka/common/security/ssl/SslPrincipalMapper.java
(Kafka 2.8.2), with the distinguished-name formatting Java's
``X500Principal.getName()`` (RFC 2253) gives it.

``ssl.principal.mapping.rules`` is a list of rules, tried in order, the first that
matches wins:

* ``DEFAULT``: the whole distinguished name is the user name.
* ``RULE:<regex>/<replacement>/`` optionally followed by ``L`` or ``U`` (lower or upper
  case the result). The regex must match the whole DN; ``$1``... in the replacement
  are its groups.

A DN no rule matches is an error (the connection is refused), as in Kafka.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

# Python's ssl module names attributes by their long OpenSSL names; Java's RFC 2253 output
# uses these keywords, and the dotted OID for anything else.
_RFC2253_KEYWORDS = {
    "commonName": "CN",
    "countryName": "C",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "streetAddress": "STREET",
    "domainComponent": "DC",
    "userId": "UID",
}
_OIDS = {"emailAddress": "1.2.840.113549.1.9.1", "serialNumber": "2.5.4.5", "title": "2.5.4.12",
         "surname": "2.5.4.4", "givenName": "2.5.4.42", "initials": "2.5.4.43",
         "pseudonym": "2.5.4.65", "generationQualifier": "2.5.4.44", "dnQualifier": "2.5.4.46"}


class NoMatchingRule(Exception):
    pass


def _escape(value: str) -> str:
    out = []
    for i, c in enumerate(value):
        if c in ',+"\\<>;' or (c == "#" and i == 0) or (c == " " and (i == 0 or i == len(value) - 1)):
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def _hex_der_string(value: str) -> str:
    # Attributes without a keyword come out as '#' and the DER of an IA5String (tag 0x16).
    data = value.encode("utf-8")
    return "#16" + format(len(data), "02x") + data.hex()


def distinguished_name(subject: Any) -> str:
    """The RFC 2253 name of ``getpeercert()['subject']`` (RDNs in ASN.1 order), most
    specific first as Java prints it."""
    rdns = []
    for rdn in reversed(subject):
        parts = []
        for name, value in rdn:
            keyword = _RFC2253_KEYWORDS.get(name)
            if keyword is not None:
                parts.append(f"{keyword}={_escape(value)}")
            else:
                parts.append(f"{_OIDS.get(name, name)}={_hex_der_string(value)}")
        rdns.append("+".join(parts))
    return ",".join(rdns)


@dataclass(frozen=True)
class Rule:
    pattern: Optional[re.Pattern]  # None: DEFAULT
    replacement: str = ""
    to_lower: bool = False
    to_upper: bool = False

    def apply(self, dn: str) -> Optional[str]:
        if self.pattern is None:
            return dn
        match = self.pattern.fullmatch(dn)
        if match is None:
            return None
        # Java's Matcher.replaceAll uses $1 for groups.
        result = re.sub(r"\$(\d+)", lambda m: match.group(int(m.group(1))) or "", self.replacement)
        if self.to_lower:
            result = result.lower()
        elif self.to_upper:
            result = result.upper()
        return result


_RULE = re.compile(r"\s*RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?)\s*(?:,|$)|\s*DEFAULT\s*(?:,|$)")


def parse_rules(text: str) -> list[Rule]:
    """ValueError on text that is not a list of rules."""
    rules = []
    pos = 0
    text = text.strip()
    if not text:
        return [Rule(None)]
    while pos < len(text):
        match = _RULE.match(text, pos)
        if match is None or match.end() == pos:
            raise ValueError(f"Invalid rule: {text[pos:]}")
        if match.group(0).strip().rstrip(",").strip() == "DEFAULT":
            rules.append(Rule(None))
        else:
            try:
                pattern = re.compile(match.group(1))
            except re.error as e:
                raise ValueError(f"Invalid rule: bad regular expression {match.group(1)!r}: {e}") from None
            flag = match.group(3)
            rules.append(Rule(pattern, match.group(2), flag == "L", flag == "U"))
        pos = match.end()
    return rules


class SslPrincipalMapper:
    def __init__(self, rules_text: str = "DEFAULT") -> None:
        self.rules = parse_rules(rules_text)

    def get_name(self, dn: str) -> str:
        for rule in self.rules:
            name = rule.apply(dn)
            if name is not None:
                return name
        raise NoMatchingRule(f"No rules apply to {dn}, rules {self.rules}")
