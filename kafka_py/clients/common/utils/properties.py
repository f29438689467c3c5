"""Port of clients/src/main/java/org/apache/kafka/common/utils/Utils.java ``loadProps``
and core/src/main/scala/kafka/utils/CommandLineUtils.scala ``parseKeyValueArgs``, with the
java.util.Properties text format they rest on.

Kafka loads server.properties with ``Properties.load``, writes meta.properties with
``Properties.store`` and splits ``--override key=value`` arguments at the first ``=``.
This module gives the same results for the same text, so a file a Kafka broker accepts
means the same thing here:

- a logical line may continue over several natural lines: an odd number of backslashes
  at the end of a line joins the next one, whose leading whitespace is dropped;
- lines whose first non-blank character is ``#`` or ``!`` are comments (a continuation
  line is never a comment, and a comment line never continues);
- the key ends at the first unescaped ``=``, ``:`` or whitespace; whitespace and at most
  one ``=``/``:`` separate it from the value;
- ``\\t \\n \\r \\f \\uXXXX`` are escapes, a backslash before any other character stands
  for that character.
"""
from __future__ import annotations

import os
import re
import time
from typing import Iterable, Iterator, Mapping

__all__ = [
    "PropertiesParseError", "load", "load_file", "logical_lines", "store", "store_file",
    "parse_key_value_args",
]

_WHITESPACE = " \t\f"
_NATURAL_LINE_END = re.compile(r"\r\n|\r|\n")
_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_HEX = "0123456789ABCDEF"


class PropertiesParseError(ValueError):
    """Text that Properties.load would reject (only a malformed ``\\uXXXX`` escape)."""

    def __init__(self, message: str, line_number: int) -> None:
        super().__init__(f"line {line_number}: {message}")
        self.line_number = line_number


def _ends_with_odd_backslashes(text: str) -> bool:
    count = len(text) - len(text.rstrip("\\"))
    return count % 2 == 1


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first natural line number, logical line) for every non-blank, non-comment line."""
    natural = _NATURAL_LINE_END.split(text)
    index = 0
    while index < len(natural):
        line_number = index + 1
        line = natural[index].lstrip(_WHITESPACE)
        index += 1
        if not line or line[0] in "#!":
            continue
        parts = [line]
        while _ends_with_odd_backslashes(parts[-1]):
            parts[-1] = parts[-1][:-1]
            if index >= len(natural):
                break  # a backslash at the end of the file is simply dropped
            following = natural[index].lstrip(_WHITESPACE)
            index += 1
            if not following:
                break  # a blank continuation line ends the logical line
            parts.append(following)
        yield line_number, "".join(parts)


def _unescape(text: str, line_number: int) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        if i >= n:
            break
        c = text[i]
        i += 1
        if c == "u":
            digits = text[i:i + 4]
            if len(digits) != 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise PropertiesParseError("Malformed \\uxxxx encoding.", line_number)
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_SIMPLE_ESCAPES.get(c, c))
    result = "".join(out)
    # \uXXXX escapes are UTF-16 code units; join surrogate pairs into one code point.
    if any("\ud800" <= ch <= "\udfff" for ch in result):
        result = result.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return result


def _split_key_value(line: str) -> tuple[str, str]:
    limit = len(line)
    key_len = 0
    value_start = limit
    has_separator = False
    preceding_backslash = False
    while key_len < limit:
        c = line[key_len]
        if not preceding_backslash and c in "=:":
            value_start = key_len + 1
            has_separator = True
            break
        if not preceding_backslash and c in _WHITESPACE:
            value_start = key_len + 1
            break
        preceding_backslash = (not preceding_backslash) if c == "\\" else False
        key_len += 1
    while value_start < limit:
        c = line[value_start]
        if c not in _WHITESPACE:
            if not has_separator and c in "=:":
                has_separator = True
            else:
                break
        value_start += 1
    return line[:key_len], line[value_start:]


def load(text: str) -> dict[str, str]:
    """The properties in ``text``; a key given twice keeps its last value, in first-seen order."""
    props: dict[str, str] = {}
    for line_number, line in logical_lines(text):
        raw_key, raw_value = _split_key_value(line)
        props[_unescape(raw_key, line_number)] = _unescape(raw_value, line_number)
    return props


def load_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a .properties file (Kafka's Utils.loadProps).

    Java reads these files as ISO-8859-1; files written by editors today are usually
    UTF-8, so UTF-8 is tried first and Latin-1 (which never fails) is the fallback.
    """
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return load(text)


def _escape(text: str, escape_space: bool) -> str:
    out: list[str] = []
    for index, c in enumerate(text):
        code = ord(c)
        if 61 < code < 127:
            out.append("\\\\" if c == "\\" else c)
        elif c == " ":
            out.append("\\ " if index == 0 or escape_space else " ")
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif c in "=:#!":
            out.append("\\" + c)
        elif code < 0x20 or code > 0x7E:
            # Java strings are UTF-16: characters beyond the BMP become two escapes.
            for unit in _utf16_units(code):
                out.append("\\u" + "".join(_HEX[(unit >> shift) & 0xF] for shift in (12, 8, 4, 0)))
        else:
            out.append(c)
    return "".join(out)


def _utf16_units(code: int) -> tuple[int, ...]:
    if code < 0x10000:
        return (code,)
    code -= 0x10000
    return (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))


def _comment_lines(comments: str) -> list[str]:
    lines = _NATURAL_LINE_END.split(comments)
    # Like Java, a comment line that already starts with a comment character keeps it.
    return ["#" + _escape_comment(lines[0])] + [
        ("" if line[:1] in ("#", "!") else "#") + _escape_comment(line) for line in lines[1:]]


def _escape_comment(line: str) -> str:
    out = []
    for c in line:
        code = ord(c)
        if code > 0x7E or code < 0x20:
            out.extend("\\u" + "".join(_HEX[(u >> s) & 0xF] for s in (12, 8, 4, 0)) for u in _utf16_units(code))
        else:
            out.append(c)
    return "".join(out)


def store(props: Mapping[str, str], comments: str | None = None, *, timestamp: float | None = None,
          include_date: bool = True) -> str:
    """The text Properties.store writes: optional comment lines, a ``#<date>`` line, then
    ``key=value`` lines, ASCII only (other characters as ``\\uXXXX``)."""
    lines: list[str] = []
    if comments is not None:
        lines.extend(_comment_lines(comments))
    if include_date:
        # java.util.Date.toString(): "EEE MMM dd HH:mm:ss zzz yyyy"
        stamp = time.localtime(time.time() if timestamp is None else timestamp)
        lines.append("#" + time.strftime("%a %b %d %H:%M:%S %Z %Y", stamp))
    for key, value in props.items():
        lines.append(_escape(str(key), True) + "=" + _escape(str(value), False))
    return "".join(line + "\n" for line in lines)


def store_file(path: str | os.PathLike[str], props: Mapping[str, str], comments: str | None = None) -> None:
    """Write ``props`` to ``path`` as Properties.store would (not atomic; see callers that need it)."""
    with open(path, "w", encoding="ascii", newline="") as f:
        f.write(store(props, comments))


def parse_key_value_args(args: Iterable[str], accept_missing_value: bool = True) -> dict[str, str]:
    """``key=value`` strings to a dict, splitting at the first ``=`` (CommandLineUtils).

    A missing or empty value gives "" when ``accept_missing_value``, else ValueError.
    """
    props: dict[str, str] = {}
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep or not value:
            if not accept_missing_value:
                raise ValueError(f"Missing value for key {key}")
            props[key] = ""
        else:
            props[key] = value
    return props
