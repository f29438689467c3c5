"""Port of the listener-prefix lookups of clients/src/main/java/org/apache/kafka/common/network/ChannelBuilders.java
and ListenerName.java (Kafka 2.8.2): which value of a security key a listener uses.

A security key (``ssl.*``, ``sasl.*``) may be given for one listener only, as
``listener.name.<listener in lower case>.<key>``; that value wins over the broker-wide
one. ``sasl.jaas.config`` is looked up per listener *and* mechanism first
(``listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config``), as Kafka's broker does.
"""
from __future__ import annotations

from typing import Any, Mapping

from kafka_py.clients.common.config.config_def import ConfigDef, ConfigException, Password


def listener_config_prefix(listener_name: str) -> str:
    return f"listener.name.{listener_name.lower()}."


class ListenerSecurityConfig:
    """The security keys as one listener sees them, parsed with the broker's ConfigDef types."""

    def __init__(self, listener_name: str, originals: Mapping[str, Any], config_def: ConfigDef,
                 values: Mapping[str, Any]) -> None:
        self.listener_name = listener_name
        self.prefix = listener_config_prefix(listener_name)
        self._originals = originals
        self._config_def = config_def
        self._values = values

    @classmethod
    def for_listener(cls, config: Any, listener_name: str) -> "ListenerSecurityConfig":
        from kafka_py.server.kafka_config import CONFIG_DEF
        return cls(listener_name, config.originals, CONFIG_DEF, config.values())

    @property
    def originals(self) -> Mapping[str, Any]:
        """The broker's keys as given, prefixed ones included."""
        return self._originals

    @property
    def values(self) -> Mapping[str, Any]:
        """The broker-wide parsed values (no listener prefix applied)."""
        return self._values

    def key_name(self, key: str) -> str:
        """The key that supplies the value (the prefixed one when set), for error messages."""
        return self.prefix + key if self.prefix + key in self._originals else key

    def get(self, key: str) -> Any:
        prefixed = self.prefix + key
        if prefixed in self._originals:
            config_key = self._config_def.config_keys[key]
            try:
                return self._config_def.parse_value(config_key, self._originals[prefixed], True)
            except ConfigException as e:
                raise ConfigException(prefixed, self._originals[prefixed], str(e)) from None
        return self._values.get(key)

    def get_for_mechanism(self, key: str, mechanism: str) -> Any:
        """``listener.name.<listener>.<mechanism>.<key>`` when set, else ``get(key)`` (Kafka reads
        connections.max.reauth.ms, among others, per listener and mechanism)."""
        specific = f"{self.prefix}{mechanism.lower()}.{key}"
        if specific in self._originals:
            try:
                return self._config_def.parse_value(self._config_def.config_keys[key], self._originals[specific], True)
            except ConfigException as e:
                raise ConfigException(specific, self._originals[specific], str(e)) from None
        return self.get(key)

    def get_string(self, key: str) -> str | None:
        value = self.get(key)
        if isinstance(value, Password):
            return value.value
        return value

    def jaas_config(self, mechanism: str | None) -> tuple[str, str] | None:
        """(key, text) of the JAAS config for ``mechanism`` on this listener, most specific first."""
        candidates = []
        if mechanism:
            candidates.append(f"{self.prefix}{mechanism.lower()}.sasl.jaas.config")
        candidates.append(self.prefix + "sasl.jaas.config")
        for key in candidates:
            value = self._originals.get(key)
            if value is not None:
                return key, value.value if isinstance(value, Password) else str(value)
        value = self._values.get("sasl.jaas.config")
        if value is not None:
            return "sasl.jaas.config", value.value if isinstance(value, Password) else str(value)
        return None

    def error(self, key: str, message: str, show_value: bool = True) -> ConfigException:
        name = self.key_name(key)
        value = self.get(key) if show_value else "[hidden]"
        return ConfigException(name, value, f"listener {self.listener_name}: {message}")
