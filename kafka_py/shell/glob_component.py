"""Port of shell/src/main/java/org/apache/kafka/shell/GlobComponent.java.

One path component of a glob: ``*`` and ``?``, ``{a,b}`` groups (not nested), ``\\``
escaping the next character. A component without any of them is a literal, matched by
name without a directory scan. A malformed glob (an unterminated or nested group) is
taken literally, as in Kafka.
"""
from __future__ import annotations

import logging
import re
from typing import Optional

logger = logging.getLogger(__name__)

_REGEX_SPECIAL = set("$()+.[]^{|")
_GLOB_SPECIAL = set("*?\\{}")


def to_regular_expression(glob: str) -> Optional[str]:
    """The regular expression of ``glob``, or None when it can match only itself;
    ValueError when it is malformed."""
    output = ["^"]
    literal = True
    processing_group = False
    i = 0
    while i < len(glob):
        c = glob[i]
        i += 1
        if c == "?":
            literal = False
            output.append(".")
        elif c == "*":
            literal = False
            output.append(".*")
        elif c == "\\":
            if i == len(glob):
                output.append("\\\\")
            else:
                nxt = glob[i]
                i += 1
                output.append(re.escape(nxt) if nxt in _GLOB_SPECIAL or nxt in _REGEX_SPECIAL else nxt)
        elif c == "{":
            if processing_group:
                raise ValueError("Can't nest glob groups.")
            literal = False
            output.append("(?:(?:")
            processing_group = True
        elif c == "," and processing_group:
            literal = False
            output.append(")|(?:")
        elif c == "}" and processing_group:
            literal = False
            output.append("))")
            processing_group = False
        else:
            output.append(re.escape(c) if c in _REGEX_SPECIAL else c)
    if processing_group:
        raise ValueError("Unterminated glob group.")
    if literal:
        return None
    output.append("$")
    return "".join(output)


class GlobComponent:
    def __init__(self, component: str) -> None:
        self._component = component
        pattern = None
        try:
            regular_expression = to_regular_expression(component)
            if regular_expression is not None:
                pattern = re.compile(regular_expression, re.S)
        except ValueError as e:
            logger.debug("Invalid glob pattern: %s", e)
        self._pattern = pattern

    def component(self) -> str:
        return self._component

    def literal(self) -> bool:
        return self._pattern is None

    def matches(self, node_name: str) -> bool:
        if self._pattern is None:
            return self._component == node_name
        return self._pattern.match(node_name) is not None
