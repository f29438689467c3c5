"""Port of clients/src/main/java/org/apache/kafka/common/config/ConfigDef.java (with
ConfigException.java), reduced to what the broker needs.

A ConfigDef declares each key once: its type, default, validator, importance and
documentation. ``parse`` turns raw properties (strings from a .properties file or ZooKeeper,
or already-typed Python values) into typed values, validating each, and raises a
ConfigException naming the key, the value and what is allowed. LogConfig uses it for topic
configs; KafkaConfig for broker configs.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from kafka_py.clients.common.errors import InvalidConfigException
from kafka_py.core.utils.java_limits import INT_MAX, INT_MIN, LONG_MAX, LONG_MIN, SHORT_MAX, SHORT_MIN

__all__ = [
    "ConfigDef", "ConfigKey", "ConfigException", "Type", "Importance", "NO_DEFAULT_VALUE", "Password",
    "Validator", "Range", "ValidString", "CaseInsensitiveValidString", "ValidList", "NonEmptyString",
    "NonNullValidator", "LambdaValidator", "at_least", "between", "in_list", "case_insensitive_in_list",
    "valid_list", "non_empty_string", "lambda_validator",
]

_INTEGER_RE = re.compile(r"[+-]?\d+\Z")
_COMMA_WITH_WHITESPACE = re.compile(r"\s*,\s*")


class ConfigException(InvalidConfigException):
    """A configuration value that cannot be used. ``name`` and ``value`` identify it."""

    def __init__(self, name: str, value: Any = None, message: str | None = None, *,
                 full_message: str | None = None) -> None:
        self.name = name
        self.value = value
        if full_message is None:
            full_message = f"Invalid value {_display(value)} for configuration {name}"
            if message:
                full_message += f": {message}"
        super().__init__(full_message)


def _display(value: Any) -> str:
    if value is None:
        return "null"  # as Java prints a value that is not set
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_display(v) for v in value)
    return str(value)


class Type(enum.Enum):
    BOOLEAN = "boolean"
    STRING = "string"
    INT = "int"
    SHORT = "short"
    LONG = "long"
    DOUBLE = "double"
    LIST = "list"
    CLASS = "class"
    PASSWORD = "password"


class Importance(enum.Enum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT_VALUE"


#: Marks a key that must be given: parse() fails when it is missing.
NO_DEFAULT_VALUE: Any = _NoDefault()


@dataclass(frozen=True)
class Password:
    """A secret that never shows in logs or error messages."""

    value: str

    def __str__(self) -> str:
        return "[hidden]"

    __repr__ = __str__


# -- validators -----------------------------------------------------------------------------

class Validator:
    """Checks a parsed value; ``str(validator)`` describes the allowed values."""

    def ensure_valid(self, name: str, value: Any) -> None:
        raise NotImplementedError

    def __str__(self) -> str:
        return ""


class Range(Validator):
    def __init__(self, min_value: float | None = None, max_value: float | None = None) -> None:
        self.min = min_value
        self.max = max_value

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigException(name, None, "Value must be non-null")
        if self.min is not None and value < self.min:
            raise ConfigException(name, value, f"Value must be at least {self.min}")
        if self.max is not None and value > self.max:
            raise ConfigException(name, value, f"Value must be no more than {self.max}")

    def __str__(self) -> str:
        if self.min is None and self.max is None:
            return "[...]"
        if self.min is None:
            return f"[...,{self.max}]"
        if self.max is None:
            return f"[{self.min},...]"
        return f"[{self.min},...,{self.max}]"


class ValidString(Validator):
    def __init__(self, valid_strings: Iterable[str]) -> None:
        self.valid_strings = list(valid_strings)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value not in self.valid_strings:
            raise ConfigException(name, value, f"String must be one of: {', '.join(self.valid_strings)}")

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid_strings) + "]"


class CaseInsensitiveValidString(Validator):
    def __init__(self, valid_strings: Iterable[str]) -> None:
        self.valid_strings = list(valid_strings)
        self._upper = {s.upper() for s in self.valid_strings}

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None or str(value).upper() not in self._upper:
            raise ConfigException(name, value, "String must be one of (case insensitive): "
                                  + ", ".join(self.valid_strings))

    def __str__(self) -> str:
        return "(case insensitive) [" + ", ".join(self.valid_strings) + "]"


class ValidList(Validator):
    """Every element of a LIST value must be one of the given strings."""

    def __init__(self, valid_strings: Iterable[str]) -> None:
        self._valid = ValidString(valid_strings)

    def ensure_valid(self, name: str, value: Any) -> None:
        for element in value or ():
            self._valid.ensure_valid(name, element)

    def __str__(self) -> str:
        return str(self._valid)


class NonNullValidator(Validator):
    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigException(name, None, "entry must be non null")

    def __str__(self) -> str:
        return "non-null value"


class NonEmptyString(Validator):
    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None or not str(value).strip():
            raise ConfigException(name, value, "String may not be empty")

    def __str__(self) -> str:
        return "non-empty string"


class LambdaValidator(Validator):
    """A custom check: ``check(name, value)`` raises ConfigException; ``description`` says what is
    allowed."""

    def __init__(self, check: Callable[[str, Any], None], description: str) -> None:
        self._check = check
        self._description = description

    def ensure_valid(self, name: str, value: Any) -> None:
        self._check(name, value)

    def __str__(self) -> str:
        return self._description


def at_least(min_value: float) -> Range:
    return Range(min_value, None)


def between(min_value: float, max_value: float) -> Range:
    return Range(min_value, max_value)


def in_list(*valid_strings: str) -> ValidString:
    return ValidString(valid_strings)


def case_insensitive_in_list(*valid_strings: str) -> CaseInsensitiveValidString:
    return CaseInsensitiveValidString(valid_strings)


def valid_list(*valid_strings: str) -> ValidList:
    return ValidList(valid_strings)


def non_empty_string() -> NonEmptyString:
    return NonEmptyString()


def lambda_validator(check: Callable[[str, Any], None], description: str) -> LambdaValidator:
    return LambdaValidator(check, description)


# -- keys and the definition --------------------------------------------------------------

@dataclass(frozen=True)
class ConfigKey:
    name: str
    type: Type
    default_value: Any
    validator: Validator | None
    importance: Importance
    documentation: str
    #: Declared with define_internal: parsed like any key, but left out of what DescribeConfigs lists.
    internal_config: bool = False

    @property
    def has_default(self) -> bool:
        return self.default_value is not NO_DEFAULT_VALUE


class ConfigDef:
    def __init__(self, base: "ConfigDef | None" = None) -> None:
        self._keys: dict[str, ConfigKey] = dict(base._keys) if base is not None else {}

    def define(self, name: str, type: Type, default_value: Any = NO_DEFAULT_VALUE,
               validator: Validator | None = None, importance: Importance = Importance.MEDIUM,
               documentation: str = "", *, internal_config: bool = False) -> "ConfigDef":
        """Declare a key; returns self so definitions chain, as in Kafka."""
        if name in self._keys:
            raise ValueError(f"Configuration {name} is defined twice.")
        parsed_default = default_value
        if default_value is not NO_DEFAULT_VALUE and default_value is not None:
            parsed_default = self.parse_type(name, default_value, type)
        # Defaults go through the validator too, so a bad definition fails at import time.
        if validator is not None and default_value is not NO_DEFAULT_VALUE:
            validator.ensure_valid(name, parsed_default)
        self._keys[name] = ConfigKey(name, type, parsed_default, validator, importance, documentation,
                                     internal_config)
        return self

    def define_internal(self, name: str, type: Type, default_value: Any = NO_DEFAULT_VALUE,
                        validator: Validator | None = None, importance: Importance = Importance.MEDIUM,
                        documentation: str = "") -> "ConfigDef":
        """Declare a key that is not part of the public configuration (ConfigDef.defineInternal):
        it parses and validates as any other, but describing a config leaves it out unless set."""
        return self.define(name, type, default_value, validator, importance, documentation, internal_config=True)

    @property
    def config_keys(self) -> Mapping[str, ConfigKey]:
        return self._keys

    def names(self) -> set[str]:
        return set(self._keys)

    def default_values(self) -> dict[str, Any]:
        return {k.name: k.default_value for k in self._keys.values() if k.has_default}

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Typed, validated values for every defined key; keys that are not defined are ignored
        (callers that must reject them check names first)."""
        return {name: self.parse_value(key, props[name] if name in props else NO_DEFAULT_VALUE, name in props)
                for name, key in self._keys.items()}

    def parse_value(self, key: ConfigKey, value: Any, is_set: bool) -> Any:
        if is_set:
            parsed = self.parse_type(key.name, value, key.type) if value is not None else None
        elif not key.has_default:
            raise ConfigException(key.name, full_message=(
                f'Missing required configuration "{key.name}" which has no default value.'))
        else:
            parsed = key.default_value
        if key.validator is not None:
            key.validator.ensure_valid(key.name, parsed)
        return parsed

    @staticmethod
    def parse_type(name: str, value: Any, type: Type) -> Any:
        """Convert a raw value (usually a string) to ``type``; ConfigException when it cannot be."""
        if type is Type.BOOLEAN:
            if isinstance(value, bool):
                return value
            if isinstance(value, str):
                lowered = value.strip().lower()
                if lowered == "true":
                    return True
                if lowered == "false":
                    return False
            raise ConfigException(name, value, "Expected value to be either true or false")
        if type is Type.STRING:
            if isinstance(value, str):
                return value.strip()
            raise ConfigException(name, value, f"Expected value to be a string, but it was a {_type_name(value)}")
        if type in (Type.INT, Type.SHORT, Type.LONG):
            bounds, label = {
                Type.INT: ((INT_MIN, INT_MAX), "a 32-bit integer"),
                Type.SHORT: ((SHORT_MIN, SHORT_MAX), "a 16-bit integer"),
                Type.LONG: ((LONG_MIN, LONG_MAX), "a 64-bit integer"),
            }[type]
            if isinstance(value, int) and not isinstance(value, bool):
                parsed = value
            elif isinstance(value, str) and _INTEGER_RE.match(value.strip()):
                parsed = int(value.strip())
            elif isinstance(value, str):
                raise ConfigException(name, value, f"Not a number of type {type.name}")
            else:
                raise ConfigException(name, value, f"Expected value to be {label}, but it was a {_type_name(value)}")
            if not bounds[0] <= parsed <= bounds[1]:
                raise ConfigException(name, value, f"Expected value to be {label}, but it is out of range")
            return parsed
        if type is Type.DOUBLE:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
            if isinstance(value, str):
                try:
                    return float(value.strip())
                except ValueError:
                    raise ConfigException(name, value, f"Not a number of type {type.name}") from None
            raise ConfigException(name, value, f"Expected value to be a double, but it was a {_type_name(value)}")
        if type is Type.LIST:
            if isinstance(value, (list, tuple)):
                return [str(v) if not isinstance(v, str) else v for v in value]
            if isinstance(value, str):
                trimmed = value.strip()
                return [] if not trimmed else _COMMA_WITH_WHITESPACE.split(trimmed)
            raise ConfigException(name, value, "Expected a comma separated list.")
        if type is Type.PASSWORD:
            if isinstance(value, Password):
                return value
            if isinstance(value, str):
                return Password(value.strip())
            raise ConfigException(name, value, "Expected value to be a string, but it was a "
                                  f"{_type_name(value)}")
        if type is Type.CLASS:
            # Class names stay names: the broker resolves the few it supports itself.
            if isinstance(value, str):
                return value.strip()
            if callable(value):
                return value
            raise ConfigException(name, value, "Expected a Class instance or class name.")
        raise ValueError(f"Unknown type {type}")

    @staticmethod
    def convert_to_string(value: Any, type: Type | None) -> str | None:
        """The .properties form of a parsed value (what DescribeConfigs reports)."""
        if value is None:
            return None
        if type is Type.BOOLEAN or isinstance(value, bool):
            return "true" if value else "false"
        if type is Type.LIST or isinstance(value, (list, tuple)):
            return ",".join(str(v) for v in value)
        if type is Type.PASSWORD:
            return None
        if type is Type.DOUBLE:
            return repr(float(value))
        if type is Type.CLASS and not isinstance(value, str):
            return getattr(value, "__qualname__", str(value))
        return str(value)

    def to_rst(self) -> str:
        """A reference table of the public keys, for docs (internal ones are left out, as Kafka's toRst does)."""
        lines = []
        for key in sorted(self._keys.values(), key=lambda k: k.name):
            if key.internal_config:
                continue
            lines.append(f"``{key.name}``")
            lines.append(f"  {key.documentation}")
            lines.append(f"  * Type: {key.type.value}")
            default = "" if not key.has_default else self.convert_to_string(key.default_value, key.type)
            lines.append(f"  * Default: {default}")
            if key.validator is not None and str(key.validator):
                lines.append(f"  * Valid Values: {key.validator}")
            lines.append(f"  * Importance: {key.importance.value}")
            lines.append("")
        return "\n".join(lines)


def _type_name(value: Any) -> str:
    return type(value).__name__
