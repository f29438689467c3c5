"""Kerberos principal names and sasl.kerberos.principal.to.local.rules (kafka_py/clients/common/security/kerberos.py),
without a KDC: parsing, Kafka's rule syntax, and what a rule makes of a principal."""
from __future__ import annotations

import subprocess
import sys

import pytest

from kafka_py.clients.common.security.kerberos import KerberosName, KerberosShortNamer, NoMatchingRule


def _short(rules: list[str], principal: str, realm: str = "EXAMPLE.COM") -> str:
    return KerberosShortNamer.from_unparsed_rules(realm, rules).short_name(KerberosName.parse(principal))


def test_names_split_into_primary_host_and_realm() -> None:
    name = KerberosName.parse("kafka/broker1.example.com@EXAMPLE.COM")
    assert (name.service_name, name.host_name, name.realm) == ("kafka", "broker1.example.com", "EXAMPLE.COM")
    name = KerberosName.parse("alice@EXAMPLE.COM")
    assert (name.service_name, name.host_name, name.realm) == ("alice", None, "EXAMPLE.COM")
    name = KerberosName.parse("alice")
    assert (name.service_name, name.host_name, name.realm) == ("alice", None, None)
    assert str(KerberosName.parse("kafka/h@R")) == "kafka/h@R"
    with pytest.raises(ValueError):
        KerberosName.parse("a/b/c@R")
    with pytest.raises(ValueError):
        KerberosName.parse("a@b@R")


def test_default_maps_principals_of_the_default_realm_only() -> None:
    assert _short(["DEFAULT"], "alice@EXAMPLE.COM") == "alice"
    assert _short(["DEFAULT"], "kafka/host@EXAMPLE.COM") == "kafka"
    assert _short(["DEFAULT"], "plain") == "plain"  # a simple name stays as it is
    with pytest.raises(NoMatchingRule):
        _short(["DEFAULT"], "alice@OTHER.ORG")
    assert KerberosShortNamer.from_unparsed_rules("EXAMPLE.COM", None).short_name(
        KerberosName.parse("bob@EXAMPLE.COM")) == "bob"


def test_rules_format_match_substitute_and_change_case() -> None:
    strip_prefix = ["RULE:[1:$1](Svc\\..*)s/Svc\\.(.*)/$1/g", "RULE:[2:$1](Svc\\..*)s/Svc\\.(.*)/$1/g", "DEFAULT"]
    assert _short(strip_prefix, "Svc.orders@EXAMPLE.COM") == "orders"
    assert _short(strip_prefix, "Svc.orders/node7@EXAMPLE.COM") == "orders"
    assert _short(strip_prefix, "carol/node7@EXAMPLE.COM") == "carol"
    # the realm as $0, another realm's principal through a matching rule
    other = ["RULE:[1:$1@$0](.*@PARTNER\\.ORG)s/@.*//", "DEFAULT"]
    assert _short(other, "dave@PARTNER.ORG") == "dave"
    # both components
    assert _short(["RULE:[2:$1-$2]"], "etl/worker3@EXAMPLE.COM") == "etl-worker3"
    # first replacement only, or all with g
    assert _short(["RULE:[1:$1]s/x/y/"], "xax@EXAMPLE.COM") == "yax"
    assert _short(["RULE:[1:$1]s/x/y/g"], "xax@EXAMPLE.COM") == "yay"
    # case
    assert _short(["RULE:[1:$1]/L"], "Frank@EXAMPLE.COM") == "frank"
    assert _short(["RULE:[1:$1]/U"], "Frank@EXAMPLE.COM") == "FRANK"
    assert _short(["RULE:[2:$1](Abc.*)s/Abc/Xyz/g/L"], "AbcTeamAbc/h@OTHER.ORG") == "xyzteamxyz"
    # a rule for another number of components does not apply; the next one does
    assert _short(["RULE:[2:$1]", "RULE:[1:$1]/U"], "gina@EXAMPLE.COM") == "GINA"
    # a rule that leaves / or @ in the name fails the mapping
    with pytest.raises(NoMatchingRule):
        _short(["RULE:[1:$1@$0]"], "henry@EXAMPLE.COM")
    with pytest.raises(NoMatchingRule):
        _short(["RULE:[2:$1](nomatch)"], "ivy/h@EXAMPLE.COM")


@pytest.mark.parametrize("rule", ["default", "DEFAUL", "DEFAULT/L", "DEFAULT/g", "rule:[1:$1]", "RULE:[1:$1]/L/U",
                                  "RULE:[1:$1]/LU", "RULE:[1:$1/L", "RULE:[1:$1]/l", "RULE:[2:$1](A.*)s/A/B/L/g",
                                  "RULE:[:$1]", "RULE:[1:$1](unclosed[)"])
def test_rules_that_do_not_parse(rule: str) -> None:
    with pytest.raises(ValueError):
        KerberosShortNamer.from_unparsed_rules("EXAMPLE.COM", [rule])


def test_the_broker_needs_no_gssapi_package_without_gssapi() -> None:
    """With python-gssapi hidden, a SASL listener of PLAIN is still built; one of GSSAPI is
    refused at startup naming its JAAS key and the missing package."""
    script = """
import sys
sys.modules["gssapi"] = None  # an import of it fails as if it were not installed
from kafka_py.network.socket_server import SocketServer
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.clients.common.config.config_def import ConfigException
base = {"zookeeper.connect": "127.0.0.1:1", "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"}
plain = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_a="b";'
server = SocketServer(KafkaConfig({**base, "sasl.enabled.mechanisms": "PLAIN", "sasl.jaas.config": plain}, do_log=False))
server.startup(start_processing_requests=False)
server.shutdown()
krb5 = ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/dev/null" '
        'principal="kafka/localhost@EXAMPLE.COM";')
server = SocketServer(KafkaConfig({**base, "sasl.enabled.mechanisms": "GSSAPI", "sasl.kerberos.service.name": "kafka",
                                   "sasl.jaas.config": krb5}, do_log=False))
try:
    server.startup(start_processing_requests=False)
except ConfigException as e:
    print("refused:", e.name, e)
finally:
    server.shutdown()
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "refused: sasl.jaas.config" in result.stdout and "gssapi" in result.stdout, result.stdout
