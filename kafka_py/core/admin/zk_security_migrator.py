"""Port of core/src/main/scala/kafka/admin/ZkSecurityMigrator.scala
(``bin/zookeeper-security-migration.sh``).

Sets the ZooKeeper ACLs of Kafka's znodes for ``--zookeeper.acl secure`` (the creator has
every right, everyone else may read, and nobody else may read the sensitive paths
``/config/users``, ``/config/brokers`` and ``/delegation_token``), or opens them again for
``--zookeeper.acl unsecure``: the root of ``--zookeeper.connect`` (its chroot, if any)
alone, then every secure root path of Kafka (``/admin``, ``/brokers``, ``/cluster``,
``/config``, ``/controller``, ``/controller_epoch``, ``/isr_change_notification``,
``/latest_producer_id_block``, ``/log_dir_event_notification``, ``/delegation_token``,
``/kafka-acl``, ``/kafka-acl-extended``...) and everything below it, the missing ones created
first (``/controller`` only when it exists). The ACLs are those a broker with
``zookeeper.set.acl`` gives the znodes it creates (kafka_py.core.zk.zk_data.ZkData.default_acls).

The tool must know who it is to ZooKeeper, as Kafka's does: either a JAAS file, named as
Kafka's scripts name it in ``KAFKA_OPTS`` (``-Djava.security.auth.login.config=<file>``),
whose ``Client`` section (or the one ``-Dzookeeper.sasl.clientconfig`` names) holds the
login, or a TLS client certificate (``--zk-tls-config-file`` with
``zookeeper.ssl.client.enable=true`` and a ``zookeeper.ssl.keystore.location``). The
ZooKeeper clients of kafka-py do not speak SASL, so the ``username`` and ``password`` of
that JAAS section (ZooKeeper's DigestLoginModule) are presented with ZooKeeper's
``digest`` scheme; the "creator" of the secure ACLs is then ``digest:<username>:<hash>``. A
TLS configuration is read from PEM files (``zookeeper.ssl.keystore.type`` PEM: the key and
its certificate chain in one file; the trust store a PEM file of CA certificates).
"""
from __future__ import annotations

import logging
import os
import re
import shlex
import sys
import traceback
from typing import Any, Optional

import click

from kafka_py.core.utils.command_line_utils import load_props, run_tool

logger = logging.getLogger(__name__)

USAGE = ("ZooKeeper Migration Tool Help. This tool updates the ACLs of znodes as part of the process of setting up "
         "ZooKeeper authentication.")
TLS_CONFIG_FILE_OPTION = "zk-tls-config-file"
JAVA_LOGIN_CONFIG_PARAM = "java.security.auth.login.config"
ZK_SASL_CLIENT_CONFIG = "zookeeper.sasl.clientconfig"
ZK_SASL_CLIENT = "zookeeper.sasl.client"
# KafkaConfig.ZkSslConfigToSystemPropertyMap's keys: the only ones read from the TLS file
ZK_SSL_CONFIGS = ("zookeeper.ssl.client.enable", "zookeeper.clientCnxnSocket", "zookeeper.ssl.keystore.location",
                  "zookeeper.ssl.keystore.password", "zookeeper.ssl.keystore.type",
                  "zookeeper.ssl.truststore.location", "zookeeper.ssl.truststore.password",
                  "zookeeper.ssl.truststore.type", "zookeeper.ssl.protocol", "zookeeper.ssl.enabled.protocols",
                  "zookeeper.ssl.cipher.suites", "zookeeper.ssl.endpoint.identification.enable",
                  "zookeeper.ssl.crl.enable", "zookeeper.ssl.ocsp.enable")


class IncorrectConfiguration(Exception):
    """Kafka's IllegalArgumentException("Incorrect configuration")."""


def system_properties(kafka_opts: Optional[str] = None) -> dict[str, str]:
    """The ``-Dname=value`` options of KAFKA_OPTS: the JVM system properties Kafka's tool reads."""
    text = os.environ.get("KAFKA_OPTS", "") if kafka_opts is None else kafka_opts
    props = {}
    for word in shlex.split(text):
        if word.startswith("-D"):
            name, _, value = word[2:].partition("=")
            props[name] = value
    return props


def jaas_sections(text: str) -> dict[str, str]:
    """The sections of a JAAS file (``Name { module flag options; ... };``), each its body."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"(?m)//.*$", "", text)
    return {m.group(1): m.group(2) for m in re.finditer(r"([\w.-]+)\s*\{([^{}]*)\}\s*;", text)}


def zk_digest_login(jaas_file: str, section: str) -> Optional[tuple[str, str]]:
    """The username and password of the JAAS file's ``section``, or None when it has none
    (JaasUtils.isZkSaslEnabled is false)."""
    from kafka_py.clients.common.security.jaas_config import parse_jaas_config

    try:
        with open(jaas_file, encoding="utf-8") as f:
            body = jaas_sections(f.read()).get(section)
    except OSError:
        return None
    if body is None:
        return None
    try:
        entries = parse_jaas_config(body)
    except ValueError:
        return None
    for entry in entries:
        if "username" in entry.options and "password" in entry.options:
            return entry.options["username"], entry.options["password"]
    return None


def zk_tls_client_config(path: str) -> dict[str, str]:
    props = load_props(path)
    found = {k: v for k, v in props.items() if k in ZK_SSL_CONFIGS}
    logger.info("Found %d ZooKeeper client configuration properties in file %s", len(found), path)
    for key in found:
        logger.info("Setting %s", key)
    return found


def tls_client_auth_enabled(config: dict[str, str]) -> bool:
    """KafkaConfig.zkTlsClientAuthEnabled: TLS on, with a key store to authenticate with."""
    return (config.get("zookeeper.ssl.client.enable", "false").strip().lower() == "true"
            and bool(config.get("zookeeper.ssl.keystore.location")))


def kazoo_tls_arguments(config: dict[str, str]) -> dict[str, Any]:
    for kind in ("keystore", "truststore"):
        store_type = config.get(f"zookeeper.ssl.{kind}.type", "PEM").strip().upper()
        if config.get(f"zookeeper.ssl.{kind}.location") and store_type != "PEM":
            raise IncorrectConfiguration(f"zookeeper.ssl.{kind}.type {store_type}: kafka-py reads PEM files for "
                                         "ZooKeeper TLS")
    key = config["zookeeper.ssl.keystore.location"]
    args: dict[str, Any] = {"use_ssl": True, "certfile": key, "keyfile": key,
                            "verify_certs": bool(config.get("zookeeper.ssl.truststore.location"))}
    if config.get("zookeeper.ssl.keystore.password"):
        args["keyfile_password"] = config["zookeeper.ssl.keystore.password"]
    if config.get("zookeeper.ssl.truststore.location"):
        args["ca"] = config["zookeeper.ssl.truststore.location"]
    return args


class ZkSecurityMigrator:
    def __init__(self, zk: Any, secure: bool, out: Any = print) -> None:
        self.zk = zk
        self.secure = secure
        self.out = out

    def default_acls(self, path: str) -> list:
        from kafka_py.core.zk.zk_data import ZkData

        return ZkData.default_acls(self.secure, path)

    def set_acls_recursively(self, roots: list[str]) -> None:
        """Set the ACLs of ``roots`` and of everything below them, one tree level at a time with
        the calls of a level in flight together (Kafka's tool chains asynchronous calls too)."""
        from kazoo.exceptions import NoNodeError

        level = list(roots)
        while level:
            set_calls = [(path, self.zk.set_acls_async(path, self.default_acls(path))) for path in level]
            child_calls = [(path, self.zk.get_children_async(path)) for path in level]
            for path, call in set_calls:
                try:
                    call.get()
                    logger.info("Successfully set ACLs for %s", path)
                except NoNodeError:
                    logger.warning("Znode is gone, it could be have been legitimately deleted: %s", path)
            next_level = []
            for path, call in child_calls:
                try:
                    children = call.get()
                except NoNodeError:
                    logger.warning("Node is gone, it could be have been legitimately deleted: %s", path)
                    continue
                next_level.extend(f"/{c}" if path == "/" else f"{path}/{c}" for c in sorted(children))
            level = next_level

    def make_sure_persistent_path_exists(self, path: str) -> None:
        from kazoo.exceptions import NodeExistsError

        parts = [p for p in path.split("/") if p]
        current = ""
        for part in parts:
            current += "/" + part
            if self.zk.exists(current) is None:
                try:
                    self.zk.create(current, b"", acl=self.default_acls(current))
                except NodeExistsError:
                    pass

    def check_path_existence_and_maybe_exit(self, enable_path_check: bool) -> bool:
        from kafka_py.core.zk.zk_data import ZkData

        missing = [p for p in ZkData.SECURE_ROOT_PATHS if self.zk.exists(p) is None]
        if missing:
            self.out(f"Warning: The following secure root paths do not exist in ZooKeeper: {','.join(missing)}")
            self.out("That might be due to an incorrect chroot is specified when executing the command.")
            if enable_path_check:
                self.out("Exit the command.")
                return False
        return True

    def run(self, enable_path_check: bool) -> int:
        from kafka_py.core.zk.zk_data import ControllerZNode, ZkData

        self.set_acls_recursively_root_only()
        if not self.check_path_existence_and_maybe_exit(enable_path_check):
            return 1
        roots = []
        for path in ZkData.SECURE_ROOT_PATHS:
            if path == ControllerZNode.path() and self.zk.exists(path) is None:
                logger.debug("Ignoring to set ACL for %s, because it doesn't exist", path)
                continue
            self.make_sure_persistent_path_exists(path)
            roots.append(path)
        # a root below another root is reached from it already
        roots = [r for r in roots if not any(r != o and r.startswith(o + "/") for o in roots)]
        self.set_acls_recursively(roots)
        return 0

    def set_acls_recursively_root_only(self) -> None:
        logger.info("Setting ACL for path /")
        self.zk.set_acls("/", self.default_acls("/"))


@click.command(context_settings={"help_option_names": ["--help"], "max_content_width": 120}, help=USAGE)
@click.option("--zookeeper.acl", "zookeeper_acl", metavar="<String>",
              help="Indicates whether to make the Kafka znodes in ZooKeeper secure or unsecure. The options are "
                   "'secure' and 'unsecure'")
@click.option("--zookeeper.connect", "zookeeper_connect", default="localhost:2181", show_default=True,
              metavar="<String>", help="Sets the ZooKeeper connect string (ensemble). This parameter takes a "
                                       "comma-separated list of host:port pairs.")
@click.option("--zookeeper.session.timeout", "session_timeout", type=int, default=30000, show_default=True,
              metavar="<Integer>", help="Sets the ZooKeeper session timeout.")
@click.option("--zookeeper.connection.timeout", "connection_timeout", type=int, default=30000, show_default=True,
              metavar="<Integer>", help="Sets the ZooKeeper connection timeout.")
@click.option("--enable.path.check", "enable_path_check", is_flag=True,
              help="Checks if all the root paths exist in ZooKeeper before migration. If not, exit the command.")
@click.option("--zk-tls-config-file", "zk_tls_config_file", metavar="<String: ZooKeeper TLS configuration>",
              help="Identifies the file where ZooKeeper client TLS connectivity properties are defined.  Any "
                   "properties other than " + ", ".join(ZK_SSL_CONFIGS) + " are ignored.")
def main(zookeeper_acl: Optional[str], zookeeper_connect: str, session_timeout: int, connection_timeout: int,
         enable_path_check: bool, zk_tls_config_file: Optional[str]) -> None:
    ctx = click.get_current_context()
    if len(sys.argv) <= 1:
        click.echo(USAGE, err=True)
        click.echo(ctx.get_help(), err=True)
        ctx.exit(1)
    try:
        status = _run(zookeeper_acl, zookeeper_connect, session_timeout, connection_timeout, enable_path_check,
                      zk_tls_config_file)
    except IncorrectConfiguration as e:
        click.echo(f"java.lang.IllegalArgumentException: {e}", err=True)
        status = 1
    except Exception as e:  # noqa: BLE001 - Kafka's tool prints the failure and exits 1
        traceback.print_exception(e, file=sys.stderr)
        status = 1
    ctx.exit(status)


def _run(zookeeper_acl: Optional[str], zookeeper_connect: str, session_timeout: int, connection_timeout: int,
         enable_path_check: bool, zk_tls_config_file: Optional[str]) -> int:
    ctx = click.get_current_context()
    sys_props = system_properties()
    jaas_file = sys_props.get(JAVA_LOGIN_CONFIG_PARAM)
    tls_config = zk_tls_client_config(zk_tls_config_file) if zk_tls_config_file else {}
    tls_auth = tls_client_auth_enabled(tls_config)
    if jaas_file is None and not tls_auth:
        click.echo("ERROR: No JAAS configuration file has been specified and no TLS client certificate has been "
                   f"specified. Please make sure that you set the system property {JAVA_LOGIN_CONFIG_PARAM} or "
                   f"provide a ZooKeeper client TLS configuration via --{TLS_CONFIG_FILE_OPTION} <filename> "
                   "identifying at least zookeeper.ssl.client.enable, zookeeper.clientCnxnSocket, and "
                   "zookeeper.ssl.keystore.location", err=True)
        raise IncorrectConfiguration("Incorrect configuration")
    login = None
    if not tls_auth:
        sasl_enabled = sys_props.get(ZK_SASL_CLIENT, "true").strip().lower() == "true"
        login = zk_digest_login(jaas_file, sys_props.get(ZK_SASL_CLIENT_CONFIG, "Client")) if sasl_enabled else None
        if login is None:
            click.echo(f"ERROR: Security isn't enabled, most likely the file isn't set properly: {jaas_file}")
            raise IncorrectConfiguration("Incorrect configuration")
    if zookeeper_acl == "secure":
        logger.info("zookeeper.acl option is secure")
        secure = True
    elif zookeeper_acl == "unsecure":
        logger.info("zookeeper.acl option is unsecure")
        secure = False
    else:
        click.echo(USAGE, err=True)
        click.echo(ctx.get_help(), err=True)
        return 1

    from kazoo.client import KazooClient

    kwargs: dict[str, Any] = {"hosts": zookeeper_connect, "timeout": session_timeout / 1000}
    if tls_auth:
        kwargs.update(kazoo_tls_arguments(tls_config))
    if login is not None:
        kwargs["auth_data"] = [("digest", f"{login[0]}:{login[1]}")]
    zk = KazooClient(**kwargs)
    zk.start(timeout=connection_timeout / 1000)
    try:
        return ZkSecurityMigrator(zk, secure).run(enable_path_check)
    finally:
        zk.stop()
        zk.close()


if __name__ == "__main__":
    run_tool(main, "zookeeper-security-migration.sh")
