"""Port of core/src/main/scala/kafka/admin/DelegationTokenCommand.scala (Kafka 2.8.2,
``bin/kafka-delegation-tokens.sh``): create, renew, expire and describe delegation tokens
(KIP-48) through a broker.

    bin/kafka-delegation-tokens.sh --bootstrap-server host:port --command-config client.properties
        --create --max-life-time-period -1 [--renewer-principal User:bob ...]
        --renew --hmac <base64 HMAC> --renew-time-period -1
        --expire --hmac <base64 HMAC> --expiry-time-period -1
        --describe [--owner-principal User:alice ...]

Token requests are refused on PLAINTEXT listeners and over token logins, so
``--command-config`` names a SASL (or two-way TLS) login, for example::

    security.protocol=SASL_PLAINTEXT
    sasl.mechanism=SCRAM-SHA-256
    sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
        username="alice" password="alice-secret";

The output is Kafka's, line for line: what is being called, then the token table (token id,
base64 HMAC, owner, renewers, and the issue, expiry and maximum dates as
``yyyy-MM-dd'T'HH:mm`` in local time), or ``Error while executing delegation token command :
<message>`` and exit status 1 when the broker answers an error.

The requests go over the tools' own connection (kafka_py/clients/network_client.py secured
by ``--command-config``, see command_line_utils.admin_channel_builder) to the first
``--bootstrap-server`` entry, at version 2 of each API (Kafka 2.8.2's newest).
"""
from __future__ import annotations

import base64
import binascii
import datetime
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import click

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.utils.command_line_utils import (
    AdminTarget,
    CommandError,
    load_props,
    print_usage_and_die,
    run_tool,
    validate_bootstrap_servers,
)

TOKEN_API_VERSION = 2
CLIENT_ID = "delegation-token-command"
HELP = "This tool helps to create, renew, expire, or describe delegation tokens."

Out = Callable[[str], None]


def format_date(timestamp_ms: int) -> str:
    """SimpleDateFormat("yyyy-MM-dd'T'HH:mm") in the local time zone."""
    return datetime.datetime.fromtimestamp(timestamp_ms / 1000).strftime("%Y-%m-%dT%H:%M")


def java_list(items: Sequence[str]) -> str:
    """A Java List's toString: ``[a, b]``."""
    return "[" + ", ".join(items) + "]"


def parse_principal(text: str) -> tuple[str, str]:
    """SecurityUtils.parseKafkaPrincipal: ``type:name`` split at the first colon."""
    text = text.strip()
    if ":" not in text:
        raise CommandError(f"expected a string in format principalType:principalName but got {text}")
    principal_type, _, name = text.partition(":")
    return principal_type, name


@dataclass(frozen=True)
class TokenRow:
    """One token as the table shows it (Kafka's DelegationToken and its TokenInformation)."""

    token_id: str
    hmac: bytes
    owner: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    expiry_timestamp: int
    max_timestamp: int

    @classmethod
    def of_described(cls, token: Any) -> "TokenRow":
        return cls(token.token_id, bytes(token.hmac), f"{token.principal_type}:{token.principal_name}",
                   tuple(f"{r.principal_type}:{r.principal_name}" for r in token.renewers),
                   _millis(token.issue_timestamp), _millis(token.expiry_timestamp), _millis(token.max_timestamp))


def print_tokens(tokens: Sequence[TokenRow], out: Out) -> None:
    """DelegationTokenCommand.printToken: an empty line and the header, then each token's row
    followed by a line break (Kafka prints "\\n" before each row and a newline after it)."""
    row = "{:<15} {:<30} {:<15} {:<25} {:<15} {:<15} {:<15}"
    text = "\n" + row.format("TOKENID", "HMAC", "OWNER", "RENEWERS", "ISSUEDATE", "EXPIRYDATE", "MAXDATE")
    for token in tokens:
        text += "\n" + row.format(
            token.token_id, base64.b64encode(token.hmac).decode("ascii"), token.owner, java_list(token.renewers),
            format_date(token.issue_timestamp), format_date(token.expiry_timestamp),
            format_date(token.max_timestamp)) + "\n"
    out(text.removesuffix("\n"))


def _millis(value: Any) -> int:
    """A kio timestamp (an aware datetime) or int as milliseconds since the epoch."""
    if isinstance(value, datetime.datetime):
        return round(value.timestamp() * 1000)
    return int(value)


def _check(error_code: int) -> None:
    error = Errors.for_code(int(error_code))
    if error is not Errors.NONE:
        raise CommandError(error.message)


class DelegationTokenCommand:
    def __init__(self, target: AdminTarget, out: Out = click.echo) -> None:
        self.target = target
        self.out = out

    def _send(self, api: ApiKeys, body: Any) -> Any:
        from kafka_py.clients.common.protocol.entities import build_entity
        from kafka_py.clients.common.protocol.messages import request_schema

        return self.target.send(CLIENT_ID, api, TOKEN_API_VERSION,
                                build_entity(request_schema(api, TOKEN_API_VERSION), body))

    def create_token(self, renewers: Sequence[str], max_life_time_ms: int) -> Any:
        principals = [parse_principal(r) for r in renewers]
        self.out(f"Calling create token operation with renewers :{java_list([f'{t}:{n}' for t, n in principals])}"
                 f" , max-life-time-period :{max_life_time_ms}")
        response = self._send(ApiKeys.CREATE_DELEGATION_TOKEN, {
            "renewers": [{"principal_type": t, "principal_name": n} for t, n in principals],
            "max_lifetime": max_life_time_ms})
        _check(response.error_code)
        self.out(f"Created delegation token with tokenId : {response.token_id}")
        owner = f"{response.principal_type}:{response.principal_name}"
        token = TokenRow(response.token_id, bytes(response.hmac), owner, tuple(f"{t}:{n}" for t, n in principals),
                         _millis(response.issue_timestamp), _millis(response.expiry_timestamp),
                         _millis(response.max_timestamp))
        print_tokens([token], self.out)
        return token

    def renew_token(self, hmac: str, renew_time_period_ms: int) -> int:
        self.out(f"Calling renew token operation with hmac :{hmac} , renew-time-period :{renew_time_period_ms}")
        response = self._send(ApiKeys.RENEW_DELEGATION_TOKEN, {"hmac": _decode_hmac(hmac),
                                                                "renew_period": renew_time_period_ms})
        _check(response.error_code)
        expiry = _millis(response.expiry_timestamp)
        self.out(f"Completed renew operation. New expiry date : {format_date(expiry)}")
        return expiry

    def expire_token(self, hmac: str, expiry_time_period_ms: int) -> int:
        self.out(f"Calling expire token operation with hmac :{hmac} , expire-time-period : {expiry_time_period_ms}")
        response = self._send(ApiKeys.EXPIRE_DELEGATION_TOKEN, {"hmac": _decode_hmac(hmac),
                                                                 "expiry_time_period": expiry_time_period_ms})
        _check(response.error_code)
        expiry = _millis(response.expiry_timestamp)
        self.out(f"Completed expire operation. New expiry date : {format_date(expiry)}")
        return expiry

    def describe_token(self, owners: Sequence[str] | None) -> list[TokenRow]:
        principals = None if owners is None else [parse_principal(o) for o in owners]
        if principals is None:
            self.out("Calling describe token operation for current user.")
        else:
            self.out(f"Calling describe token operation for owners :{java_list([f'{t}:{n}' for t, n in principals])}")
        response = self._send(ApiKeys.DESCRIBE_DELEGATION_TOKEN, {
            "owners": None if principals is None else [{"principal_type": t, "principal_name": n}
                                                       for t, n in principals]})
        _check(response.error_code)
        tokens = [TokenRow.of_described(t) for t in response.tokens]
        self.out(f"Total number of tokens : {len(tokens)}")
        print_tokens(tokens, self.out)
        return tokens


def _decode_hmac(text: str) -> bytes:
    try:
        return base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError) as e:
        raise CommandError(f"Illegal base64 character in --hmac: {e}") from None


_ACTIONS = ("create", "renew", "expire", "describe")
# DelegationTokenCommandOptions.checkArgs: the options each action refuses
_INVALID_WITH = {
    "create": ("hmac", "renew_time_period", "expiry_time_period", "owner_principal"),
    "renew": ("renewer_principal", "max_life_time_period", "expiry_time_period", "owner_principal"),
    "expire": ("renew", "max_life_time_period", "renew_time_period", "owner_principal"),
    "describe": ("renew_time_period", "max_life_time_period", "hmac", "expiry_time_period"),
}


def _option(name: str) -> str:
    return "[" + name.replace("_", "-") + "]"


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120}, help=HELP)
@click.option("--bootstrap-server", metavar="<String>", help="REQUIRED: server(s) to use for bootstrapping.")
@click.option("--command-config", metavar="<String>",
              help="REQUIRED: A property file containing configs to be passed to Admin Client. Token management "
                   "operations are allowed in secure mode only. This config file is used to pass security "
                   "related configs.")
@click.option("--create", is_flag=True,
              help="Create a new delegation token. Use --renewer-principal option to pass renewers principals.")
@click.option("--renew", is_flag=True,
              help="Renew delegation token. Use --renew-time-period option to set renew time period.")
@click.option("--expire", is_flag=True,
              help="Expire delegation token. Use --expiry-time-period option to expire the token.")
@click.option("--describe", is_flag=True,
              help="Describe delegation tokens for the given principals. Use --owner-principal to pass "
                   "owner/renewer principals. If --owner-principal option is not supplied, all the user owned "
                   "tokens and tokens where user have Describe permission will be returned.")
@click.option("--owner-principal", multiple=True, metavar="<String>",
              help="owner is a kafka principal. It is should be in principalType:name format.")
@click.option("--renewer-principal", multiple=True, metavar="<String>",
              help="renewer is a kafka principal. It is should be in principalType:name format.")
@click.option("--max-life-time-period", type=int, metavar="<Long>",
              help="Max life period for the token in milliseconds. If the value is -1, then token max life time "
                   "will default to a server side config value (delegation.token.max.lifetime.ms).")
@click.option("--renew-time-period", type=int, metavar="<Long>",
              help="Renew time period in milliseconds. If the value is -1, then the renew time period will "
                   "default to a server side config value (delegation.token.expiry.time.ms).")
@click.option("--expiry-time-period", type=int, metavar="<Long>",
              help="Expiry time period in milliseconds. If the value is -1, then the token will get invalidated "
                   "immediately.")
@click.option("--hmac", metavar="<String>", help="HMAC of the delegation token")
def main(bootstrap_server: str | None, command_config: str | None, create: bool, renew: bool, expire: bool,
         describe: bool, owner_principal: tuple[str, ...], renewer_principal: tuple[str, ...],
         max_life_time_period: int | None, renew_time_period: int | None, expiry_time_period: int | None,
         hmac: str | None) -> None:
    given = {"create": create, "renew": renew, "expire": expire, "describe": describe,
             "owner_principal": bool(owner_principal), "renewer_principal": bool(renewer_principal),
             "max_life_time_period": max_life_time_period is not None,
             "renew_time_period": renew_time_period is not None,
             "expiry_time_period": expiry_time_period is not None, "hmac": hmac is not None}
    if sum(given[a] for a in _ACTIONS) != 1:
        print_usage_and_die("Command must include exactly one action: --create, --renew, --expire or --describe")
    action = next(a for a in _ACTIONS if given[a])
    for name, value in (("bootstrap-server", bootstrap_server), ("command-config", command_config)):
        if value is None:
            print_usage_and_die(f'Missing required argument "[{name}]"')
    required = {"create": ("max_life_time_period",), "renew": ("hmac", "renew_time_period"),
                "expire": ("hmac", "expiry_time_period"), "describe": ()}[action]
    for name in required:
        if not given[name]:
            print_usage_and_die(f'Missing required argument "{_option(name)}"')
    for name in _INVALID_WITH[action]:
        if given[name]:
            print_usage_and_die(f'Option "{_option(action)}" can\'t be used with option "{_option(name)}"')

    try:
        validate_bootstrap_servers(bootstrap_server)
        command = DelegationTokenCommand(AdminTarget(bootstrap_server, load_props(command_config)))
        if action == "create":
            command.create_token(renewer_principal, max_life_time_period)
        elif action == "renew":
            command.renew_token(hmac, renew_time_period)
        elif action == "expire":
            command.expire_token(hmac, expiry_time_period)
        else:
            command.describe_token(list(owner_principal) if owner_principal else None)
    except Exception as e:  # noqa: BLE001 - Kafka's tool prints the message and exits 1
        click.echo(f"Error while executing delegation token command : {e}")
        raise click.exceptions.Exit(1)


if __name__ == "__main__":
    run_tool(main, "kafka-delegation-tokens.sh")
