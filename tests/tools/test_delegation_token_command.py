"""kafka-delegation-tokens.sh without a broker: its option checks (Kafka's
DelegationTokenCommandOptions.checkArgs) and its token table. Against a broker:
tests/security/test_delegation_tokens.py."""
from __future__ import annotations

import datetime

import pytest
from click.testing import CliRunner

from kafka_py.core.admin.delegation_token_command import TokenRow, format_date, main, print_tokens

TARGET = ("--bootstrap-server", "127.0.0.1:1", "--command-config", "/nonexistent.properties")


@pytest.mark.parametrize("args, message", [
    ((*TARGET,), "Command must include exactly one action: --create, --renew, --expire or --describe"),
    ((*TARGET, "--create", "--describe"), "Command must include exactly one action"),
    (("--create", "--max-life-time-period", "-1"), 'Missing required argument "[bootstrap-server]"'),
    (("--bootstrap-server", "h:1", "--describe"), 'Missing required argument "[command-config]"'),
    ((*TARGET, "--create"), 'Missing required argument "[max-life-time-period]"'),
    ((*TARGET, "--renew", "--hmac", "x"), 'Missing required argument "[renew-time-period]"'),
    ((*TARGET, "--expire", "--expiry-time-period", "-1"), 'Missing required argument "[hmac]"'),
    ((*TARGET, "--create", "--max-life-time-period", "-1", "--hmac", "x"),
     'Option "[create]" can\'t be used with option "[hmac]"'),
    ((*TARGET, "--renew", "--hmac", "x", "--renew-time-period", "1", "--owner-principal", "User:a"),
     'Option "[renew]" can\'t be used with option "[owner-principal]"'),
    ((*TARGET, "--describe", "--max-life-time-period", "1"),
     'Option "[describe]" can\'t be used with option "[max-life-time-period]"'),
])
def test_option_checks(args, message) -> None:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 1
    assert message in result.output


def test_a_missing_command_config_is_the_tools_error_line() -> None:
    result = CliRunner().invoke(main, [*TARGET, "--describe"])
    assert result.exit_code == 1
    assert result.output.startswith("Error while executing delegation token command : ")


def test_token_table_is_kafkas() -> None:
    issue = int(datetime.datetime(2026, 12, 7, 15, 10).timestamp() * 1000)
    lines: list[str] = []
    print_tokens([TokenRow("tok", b"\x01\x02", "User:alice", ("User:bob", "User:carol"), issue, issue + 60_000,
                           issue + 120_000)], lines.append)
    text = "\n".join(lines)
    assert text.split("\n") == [
        "",
        f"{'TOKENID':<15} {'HMAC':<30} {'OWNER':<15} {'RENEWERS':<25} {'ISSUEDATE':<15} {'EXPIRYDATE':<15} "
        f"{'MAXDATE':<15}",
        f"{'tok':<15} {'AQI=':<30} {'User:alice':<15} {'[User:bob, User:carol]':<25} {'2026-12-07T15:10':<15} "
        f"{'2026-12-07T15:11':<15} {'2026-12-07T15:12':<15}",
    ]
    assert format_date(issue) == "2026-12-07T15:10"
