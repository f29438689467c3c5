"""Port of core/src/main/scala/kafka/cluster/Broker.scala and EndPoint.scala.

Also holds the small client-side value types those two files lean on, which kafka-py
has nowhere else yet: SecurityProtocol and ListenerName
(clients/.../common/security/auth/SecurityProtocol.java, common/network/ListenerName.java),
Node (common/Node.java), BrokerEndPoint (core/.../kafka/cluster/BrokerEndPoint.scala) and the
feature version ranges a broker advertises (common/feature/SupportedVersionRange.java,
FinalizedVersionRange.java).

A Broker is what /brokers/ids/<id> describes: an id, one EndPoint per listener, an optional
rack and the features it supports. EndPoint strings look like ``PLAINTEXT://host:9092``,
``CLIENT://[::1]:9092`` or ``PLAINTEXT://:9092`` (no host: bind to every interface).
"""
from __future__ import annotations

import enum
import logging
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

logger = logging.getLogger(__name__)


class BrokerEndPointNotAvailableException(Exception):
    """A broker has no end point for the listener asked for (Kafka's kafka.common exception)."""


class SecurityProtocol(enum.Enum):
    """Kafka's security protocols; ``.id`` is the wire id, ``.name`` the config spelling."""

    PLAINTEXT = 0
    SSL = 1
    SASL_PLAINTEXT = 2
    SASL_SSL = 3

    @property
    def id(self) -> int:
        return self.value

    @classmethod
    def for_name(cls, name: str) -> "SecurityProtocol":
        # Kafka upper-cases before looking the name up, so "plaintext" is accepted too.
        try:
            return cls[name.upper()]
        except KeyError:
            raise ValueError(f"No enum constant SecurityProtocol.{name}") from None

    @classmethod
    def for_id(cls, protocol_id: int) -> "SecurityProtocol":
        return cls(protocol_id)


@dataclass(frozen=True, slots=True)
class ListenerName:
    """The name of a listener ("PLAINTEXT", "CLIENT", "REPLICATION", ...)."""

    value: str

    def __post_init__(self) -> None:
        if self.value is None:
            raise ValueError("value should not be null")

    @classmethod
    def normalised(cls, value: str) -> "ListenerName":
        # Listener names are case-insensitive in configs; Kafka stores them upper-cased.
        return cls(value.upper())

    @classmethod
    def for_security_protocol(cls, protocol: SecurityProtocol) -> "ListenerName":
        return cls(protocol.name)

    def __str__(self) -> str:
        return self.value


def _listener_name(name: "ListenerName | str") -> ListenerName:
    return name if isinstance(name, ListenerName) else ListenerName(name)


DEFAULT_SECURITY_PROTOCOL_MAP: dict[ListenerName, SecurityProtocol] = {
    ListenerName.for_security_protocol(sp): sp for sp in SecurityProtocol
}

# listener://host:port, listener://[ipv6]:port or listener://:port. The host part allows what
# Kafka's parser allows (letters, digits, '-', '%', '.', '_' and ':' for IPv6 literals); a
# negative port is accepted because Kafka's own tests use one.
_URI_PARSE = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")
_HOST_PORT_PARSE = re.compile(r"\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)")


def format_address(host: str, port: int) -> str:
    """Kafka's Utils.formatAddress: IPv6 literals get brackets so the port stays unambiguous."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass(frozen=True, slots=True)
class EndPoint:
    """One listener of a broker: where it is reachable and with which security protocol."""

    host: str | None
    port: int
    listener_name: ListenerName
    security_protocol: SecurityProtocol

    @classmethod
    def create_end_point(
        cls,
        connection_string: str,
        security_protocol_map: Mapping[ListenerName, SecurityProtocol] | None = None,
    ) -> "EndPoint":
        """Parse ``LISTENER://host:port``. Without a protocol map the listener name must be a
        security protocol name, as in Kafka when ``listener.security.protocol.map`` is unset."""
        protocol_map = DEFAULT_SECURITY_PROTOCOL_MAP if security_protocol_map is None else security_protocol_map
        match = _URI_PARSE.fullmatch(connection_string)
        if match is None:
            raise ValueError(f"Unable to parse {connection_string} to a broker endpoint")
        listener_name = ListenerName.normalised(match.group(1))
        protocol = protocol_map.get(listener_name)
        if protocol is None:
            raise ValueError(f"No security protocol defined for listener {listener_name.value}")
        host = match.group(2) or None
        return cls(host, int(match.group(3)), listener_name, protocol)

    @property
    def connection_string(self) -> str:
        host_port = f":{self.port}" if self.host is None else format_address(self.host, self.port)
        return f"{self.listener_name.value}://{host_port}"

    def __str__(self) -> str:
        return (f"EndPoint({self.host},{self.port},{self.listener_name.value},"
                f"{self.security_protocol.name})")


@dataclass(frozen=True, slots=True)
class Node:
    """A broker as clients see it through one listener (common/Node.java)."""

    id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def id_string(self) -> str:
        return str(self.id)

    def is_empty(self) -> bool:
        return self.host is None or self.host == "" or self.port < 0


@dataclass(frozen=True, slots=True)
class BrokerEndPoint:
    """Id, host and port of a broker over one listener (what replica fetchers connect to)."""

    id: int
    host: str
    port: int

    @classmethod
    def create_broker_end_point(cls, broker_id: int, connection_string: str) -> "BrokerEndPoint":
        """Parse ``host:port`` or ``[ipv6]:port``."""
        match = _HOST_PORT_PARSE.fullmatch(connection_string)
        if match is None:
            raise ValueError(f"Unable to parse {connection_string} to a broker endpoint")
        return cls(broker_id, match.group(1), int(match.group(2)))

    @property
    def connection_string(self) -> str:
        return format_address(self.host, self.port)


@dataclass(frozen=True, slots=True)
class SupportedVersionRange:
    """Versions of a feature a broker can run; JSON keys ``min_version`` / ``max_version``."""

    min_version: int
    max_version: int

    def __post_init__(self) -> None:
        if self.min_version < 1 or self.max_version < 1 or self.max_version < self.min_version:
            raise ValueError(f"Expected 1 <= min_version <= max_version, got {self.min_version}, {self.max_version}")

    def to_map(self) -> dict[str, int]:
        return {"min_version": self.min_version, "max_version": self.max_version}

    @classmethod
    def from_map(cls, version_range: Mapping[str, int]) -> "SupportedVersionRange":
        return cls(int(_value_or_throw("min_version", version_range)),
                   int(_value_or_throw("max_version", version_range)))


@dataclass(frozen=True, slots=True)
class FinalizedVersionRange:
    """Cluster-wide finalized version levels; JSON keys ``min_version_level`` / ``max_version_level``."""

    min_version_level: int
    max_version_level: int

    def __post_init__(self) -> None:
        if (self.min_version_level < 1 or self.max_version_level < 1
                or self.max_version_level < self.min_version_level):
            raise ValueError("Expected 1 <= min_version_level <= max_version_level, got "
                             f"{self.min_version_level}, {self.max_version_level}")

    def to_map(self) -> dict[str, int]:
        return {"min_version_level": self.min_version_level, "max_version_level": self.max_version_level}

    @classmethod
    def from_map(cls, version_range: Mapping[str, int]) -> "FinalizedVersionRange":
        return cls(int(_value_or_throw("min_version_level", version_range)),
                   int(_value_or_throw("max_version_level", version_range)))


def _value_or_throw(key: str, version_range: Mapping[str, int]) -> int:
    if key not in version_range:
        raise ValueError(f"{key} absent in [{version_range}]")
    return version_range[key]


def features_to_map(features: Mapping[str, SupportedVersionRange | FinalizedVersionRange]) -> dict[str, dict[str, int]]:
    return {name: version_range.to_map() for name, version_range in features.items()}


@dataclass(frozen=True)
class Broker:
    """A Kafka broker: id, end points (one per listener name), optional rack, supported features."""

    id: int
    end_points: tuple[EndPoint, ...]
    rack: str | None = None
    features: Mapping[str, SupportedVersionRange] = field(default_factory=dict)
    # the end points by listener name, made from end_points
    _end_points_map: dict[ListenerName, EndPoint] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        end_points = tuple(self.end_points)
        object.__setattr__(self, "end_points", end_points)
        by_listener = {end_point.listener_name: end_point for end_point in end_points}
        if len(by_listener) != len(end_points):
            raise ValueError("There is more than one end point with the same listener name: "
                             + ",".join(str(e) for e in end_points))
        object.__setattr__(self, "_end_points_map", by_listener)
        object.__setattr__(self, "features", dict(self.features))

    # Features are a mapping (unhashable); brokers are hashed on their identity and addresses,
    # which is what the controller uses them for as map keys.
    def __hash__(self) -> int:
        return hash((self.id, self.end_points, self.rack))

    @classmethod
    def of(cls, id: int, host: str, port: int, listener_name: ListenerName | str,
           protocol: SecurityProtocol) -> "Broker":
        """A broker with a single end point (Kafka's auxiliary constructor)."""
        return cls(id, (EndPoint(host, port, _listener_name(listener_name), protocol),), None)

    def get_node(self, listener_name: ListenerName | str) -> Node | None:
        end_point = self._end_points_map.get(_listener_name(listener_name))
        if end_point is None:
            return None
        # (an end point's host is None where its listener names none; passed on as Kafka does)
        return Node(self.id, end_point.host, end_point.port, self.rack)  # type: ignore[arg-type]

    def node(self, listener_name: ListenerName | str) -> Node:
        node = self.get_node(listener_name)
        if node is None:
            raise BrokerEndPointNotAvailableException(
                f"End point with listener name {_listener_name(listener_name).value} not found for broker {self.id}")
        return node

    def end_point(self, listener_name: ListenerName | str) -> EndPoint:
        end_point = self._end_points_map.get(_listener_name(listener_name))
        if end_point is None:
            raise BrokerEndPointNotAvailableException(
                f"End point with listener name {_listener_name(listener_name).value} not found for broker {self.id}")
        return end_point

    def broker_end_point(self, listener_name: ListenerName | str) -> BrokerEndPoint:
        end_point = self.end_point(listener_name)
        # (as in get_node)
        return BrokerEndPoint(self.id, end_point.host, end_point.port)  # type: ignore[arg-type]

    def __str__(self) -> str:
        end_points = ",".join(str(e) for e in self.end_points)
        return f"{self.id} : ({end_points}) : {self.rack} : {features_to_map(self.features)}"


def parse_end_points(listeners: str | Iterable[str],
                     security_protocol_map: Mapping[ListenerName, SecurityProtocol] | None = None,
                     ) -> list[EndPoint]:
    """Parse a ``listeners`` / ``advertised.listeners`` value (comma separated) into end points."""
    items = listeners.split(",") if isinstance(listeners, str) else list(listeners)
    return [EndPoint.create_end_point(item.strip(), security_protocol_map) for item in items if item.strip()]
