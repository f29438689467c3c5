"""Port of raft/src/main/java/org/apache/kafka/raft/RaftConfig.java (Kafka 2.8.2), with the
definitions of its keys that KafkaConfig.scala carries.

The ``controller.quorum.*`` settings: the voters as ``{id}@{host}:{port},...`` and the
timeouts that drive elections, fetching and the leader's append linger. A voter whose
address is ``0.0.0.0:0`` is known by id only (its address comes from elsewhere later).

``RaftConfig.from_props`` parses a properties mapping with Kafka's defaults; a value that
cannot be used raises ConfigException naming the key, the value and what is allowed. Kafka
2.8.2 declares the timing keys without validators; here they must be at least 0, since a
negative timeout cannot mean anything, and a voter id may appear only once.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from kafka_py.clients.common.config.config_def import ConfigDef, ConfigException, Importance, Type, Validator, at_least

logger = logging.getLogger(__name__)

QUORUM_PREFIX = "controller.quorum."

QUORUM_VOTERS_CONFIG = QUORUM_PREFIX + "voters"
QUORUM_VOTERS_DOC = ("Map of id/endpoint information for the set of voters in a comma-separated list of "
                     "`{id}@{host}:{port}` entries. For example: `1@localhost:9092,2@localhost:9093,3@localhost:9094`")
DEFAULT_QUORUM_VOTERS: list[str] = []

QUORUM_ELECTION_TIMEOUT_MS_CONFIG = QUORUM_PREFIX + "election.timeout.ms"
QUORUM_ELECTION_TIMEOUT_MS_DOC = ("Maximum time in milliseconds to wait without being able to fetch from the leader "
                                  "before triggering a new election")
DEFAULT_QUORUM_ELECTION_TIMEOUT_MS = 1_000

QUORUM_FETCH_TIMEOUT_MS_CONFIG = QUORUM_PREFIX + "fetch.timeout.ms"
QUORUM_FETCH_TIMEOUT_MS_DOC = ("Maximum time without a successful fetch from the current leader before becoming a "
                               "candidate and triggering a election for voters; Maximum time without receiving fetch "
                               "from a majority of the quorum before asking around to see if there's a new epoch for "
                               "leader")
DEFAULT_QUORUM_FETCH_TIMEOUT_MS = 2_000

QUORUM_ELECTION_BACKOFF_MAX_MS_CONFIG = QUORUM_PREFIX + "election.backoff.max.ms"
QUORUM_ELECTION_BACKOFF_MAX_MS_DOC = ("Maximum time in milliseconds before starting new elections. This is used in the "
                                      "binary exponential backoff mechanism that helps prevent gridlocked elections")
DEFAULT_QUORUM_ELECTION_BACKOFF_MAX_MS = 1_000

QUORUM_LINGER_MS_CONFIG = QUORUM_PREFIX + "append.linger.ms"
QUORUM_LINGER_MS_DOC = ("The duration in milliseconds that the leader will wait for writes to accumulate before "
                        "flushing them to disk.")
DEFAULT_QUORUM_LINGER_MS = 25

QUORUM_REQUEST_TIMEOUT_MS_CONFIG = QUORUM_PREFIX + "request.timeout.ms"
QUORUM_REQUEST_TIMEOUT_MS_DOC = ("The configuration controls the maximum amount of time the client will wait for the "
                                 "response of a request. If the response is not received before the timeout elapses "
                                 "the client will resend the request if necessary or fail the request if retries are "
                                 "exhausted.")
DEFAULT_QUORUM_REQUEST_TIMEOUT_MS = 2_000

QUORUM_RETRY_BACKOFF_MS_CONFIG = QUORUM_PREFIX + "retry.backoff.ms"
QUORUM_RETRY_BACKOFF_MS_DOC = ("The amount of time to wait before attempting to retry a failed request to a given "
                               "topic partition. This avoids repeatedly sending requests in a tight loop under some "
                               "failure scenarios.")
DEFAULT_QUORUM_RETRY_BACKOFF_MS = 20

# Utils.HOST_PORT_PATTERN: an optional [bracketed] IPv6 host, then the port after the last colon.
_HOST_PORT = re.compile(r".*?\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)\Z")
_ENTRY_FORM = "Each entry should be in the form `{id}@{host}:{port}`."


class AddressSpec:
    """Where a voter can be reached, if known."""


@dataclass(frozen=True, slots=True)
class InetAddressSpec(AddressSpec):
    host: str
    port: int

    def __post_init__(self) -> None:
        if (self.host, self.port) == NON_ROUTABLE_ADDRESS:
            raise ValueError(f"Invalid address: {self.host}:{self.port}")


class UnknownAddressSpec(AddressSpec):
    def __repr__(self) -> str:
        return "UnknownAddressSpec"


# A non-routable address names a voter without saying where it is.
NON_ROUTABLE_ADDRESS = ("0.0.0.0", 0)
UNKNOWN_ADDRESS_SPEC_INSTANCE = UnknownAddressSpec()


def parse_voter_connections(voter_entries: Sequence[str]) -> dict[int, AddressSpec]:
    voters: dict[int, AddressSpec] = {}
    for entry in voter_entries:
        parts = entry.split("@")
        if len(parts) != 2:
            raise ConfigException(QUORUM_VOTERS_CONFIG, ",".join(voter_entries),
                                  f"Entry `{entry}` is malformed. {_ENTRY_FORM}")
        id_string, address = parts
        try:
            voter_id = int(id_string.strip())
        except ValueError:
            raise ConfigException(QUORUM_VOTERS_CONFIG, ",".join(voter_entries),
                                  f"Failed to parse voter ID as an integer from {id_string}") from None
        if voter_id < 0:
            raise ConfigException(QUORUM_VOTERS_CONFIG, ",".join(voter_entries),
                                  f"Voter ID {voter_id} must be non-negative")
        match = _HOST_PORT.match(address)
        if match is None or not match.group(1):
            # As Utils.getHost: without a ``host:port`` shape there is no host to take.
            raise ConfigException(QUORUM_VOTERS_CONFIG, ",".join(voter_entries),
                                  f"Failed to parse host name from entry {entry}. {_ENTRY_FORM}")
        host, port = match.group(1), int(match.group(2))
        if port > 65535:
            raise ConfigException(QUORUM_VOTERS_CONFIG, ",".join(voter_entries),
                                  f"Port {port} of entry {entry} is out of range [0, 65535]")
        if voter_id in voters:
            raise ConfigException(QUORUM_VOTERS_CONFIG, ",".join(voter_entries),
                                  f"Voter ID {voter_id} is listed more than once")
        if (host, port) == NON_ROUTABLE_ADDRESS:
            voters[voter_id] = UNKNOWN_ADDRESS_SPEC_INSTANCE
        else:
            voters[voter_id] = InetAddressSpec(host, port)
    return voters


class ControllerQuorumVotersValidator(Validator):
    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigException(name, None, "Value must be non-null")
        parse_voter_connections(value)

    def __str__(self) -> str:
        return "non-empty list"


CONFIG_DEF = (
    ConfigDef()
    .define(QUORUM_VOTERS_CONFIG, Type.LIST, DEFAULT_QUORUM_VOTERS, ControllerQuorumVotersValidator(),
            Importance.HIGH, QUORUM_VOTERS_DOC)
    .define(QUORUM_ELECTION_TIMEOUT_MS_CONFIG, Type.INT, DEFAULT_QUORUM_ELECTION_TIMEOUT_MS, at_least(0),
            Importance.HIGH, QUORUM_ELECTION_TIMEOUT_MS_DOC)
    .define(QUORUM_FETCH_TIMEOUT_MS_CONFIG, Type.INT, DEFAULT_QUORUM_FETCH_TIMEOUT_MS, at_least(0),
            Importance.HIGH, QUORUM_FETCH_TIMEOUT_MS_DOC)
    .define(QUORUM_ELECTION_BACKOFF_MAX_MS_CONFIG, Type.INT, DEFAULT_QUORUM_ELECTION_BACKOFF_MAX_MS, at_least(0),
            Importance.HIGH, QUORUM_ELECTION_BACKOFF_MAX_MS_DOC)
    .define(QUORUM_LINGER_MS_CONFIG, Type.INT, DEFAULT_QUORUM_LINGER_MS, at_least(0),
            Importance.MEDIUM, QUORUM_LINGER_MS_DOC)
    .define(QUORUM_REQUEST_TIMEOUT_MS_CONFIG, Type.INT, DEFAULT_QUORUM_REQUEST_TIMEOUT_MS, at_least(0),
            Importance.MEDIUM, QUORUM_REQUEST_TIMEOUT_MS_DOC)
    .define(QUORUM_RETRY_BACKOFF_MS_CONFIG, Type.INT, DEFAULT_QUORUM_RETRY_BACKOFF_MS, at_least(0),
            Importance.LOW, QUORUM_RETRY_BACKOFF_MS_DOC)
)


@dataclass(frozen=True)
class RaftConfig:
    voter_connections: Mapping[int, AddressSpec]
    request_timeout_ms: int = DEFAULT_QUORUM_REQUEST_TIMEOUT_MS
    retry_backoff_ms: int = DEFAULT_QUORUM_RETRY_BACKOFF_MS
    election_timeout_ms: int = DEFAULT_QUORUM_ELECTION_TIMEOUT_MS
    election_backoff_max_ms: int = DEFAULT_QUORUM_ELECTION_BACKOFF_MAX_MS
    fetch_timeout_ms: int = DEFAULT_QUORUM_FETCH_TIMEOUT_MS
    append_linger_ms: int = DEFAULT_QUORUM_LINGER_MS

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> "RaftConfig":
        """Parse the ``controller.quorum.*`` keys of a broker's properties (others are ignored)."""
        values = CONFIG_DEF.parse(props)
        return cls(
            voter_connections=parse_voter_connections(values[QUORUM_VOTERS_CONFIG]),
            request_timeout_ms=values[QUORUM_REQUEST_TIMEOUT_MS_CONFIG],
            retry_backoff_ms=values[QUORUM_RETRY_BACKOFF_MS_CONFIG],
            election_timeout_ms=values[QUORUM_ELECTION_TIMEOUT_MS_CONFIG],
            election_backoff_max_ms=values[QUORUM_ELECTION_BACKOFF_MAX_MS_CONFIG],
            fetch_timeout_ms=values[QUORUM_FETCH_TIMEOUT_MS_CONFIG],
            append_linger_ms=values[QUORUM_LINGER_MS_CONFIG],
        )

    def quorum_voter_ids(self) -> frozenset[int]:
        return frozenset(self.voter_connections)

    def quorum_voter_connections(self) -> Mapping[int, AddressSpec]:
        return self.voter_connections


def quorum_voter_strings_to_nodes(voters: Sequence[str]) -> list[tuple[int, str, int]]:
    """(id, host, port) of each voter with a known address (RaftConfig.quorumVoterStringsToNodes)."""
    return [(voter_id, spec.host, spec.port) for voter_id, spec in parse_voter_connections(voters).items()
            if isinstance(spec, InetAddressSpec)]


def voter_connections_for(voters: Mapping[int, Optional[tuple[str, int]]]) -> dict[int, AddressSpec]:
    """Address specs for voters given as id -> (host, port), None meaning unknown (tests, tools)."""
    return {voter_id: UNKNOWN_ADDRESS_SPEC_INSTANCE if address is None or tuple(address) == NON_ROUTABLE_ADDRESS
            else InetAddressSpec(address[0], address[1]) for voter_id, address in voters.items()}
