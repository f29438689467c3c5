"""Port of core/src/main/scala/kafka/admin/ConfigCommand.scala (``bin/kafka-configs.sh``).

Describe and alter the dynamic configs of topics and brokers through the admin API
(DescribeConfigs, IncrementalAlterConfigs), and the quotas and SCRAM credentials of users,
clients and ips, with Kafka 2.8's options and output:

    Dynamic configs for topic t are:
      retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000}
    Completed updating config for topic t.

``--entity-type topics|brokers`` with ``--entity-name`` or ``--entity-default`` (or the
shorthands ``--topic``, ``--broker``, ``--broker-defaults``); ``--add-config
k1=v1,k2=[a,b]`` (square brackets group values holding commas), ``--add-config-file``,
``--delete-config k1,k2``; ``--all`` with ``--describe`` lists every config, not only
the dynamic ones.

Differences from Kafka's tool, on purpose:

- ``--entity-type users|clients|ips`` (and the pair ``users`` + ``clients``) alter and
  describe client quotas (``producer_byte_rate``, ``consumer_byte_rate``,
  ``request_percentage``; ``connection_creation_rate`` for ips) with AlterClientQuotas /
  DescribeClientQuotas (kafka_py/core/admin/client_quota_command.py), and a user's SCRAM
  credentials (``--add-config 'SCRAM-SHA-256=[iterations=8192,password=alice-secret]'``,
  ``--delete-config SCRAM-SHA-256``) with AlterUserScramCredentials /
  DescribeUserScramCredentials, or with ``--zookeeper`` (written to /config/users/<user>
  and announced through /config/changes, as Kafka 2.8's tool does);
- ``--zookeeper`` (deprecated in Kafka 2.8, with its warning) serves topic configs
  (``/config/topics/<topic>``, validated and announced through /config/changes as 2.8's
  ``alterConfigWithZk`` does; described as ``Configs for topic 't' are k=v``), the quotas of
  users, clients and <user, client> pairs (kafka_py/core/admin/client_quota_command.py), SCRAM
  credentials and broker configs (the replication throttle rates at any time, the others only
  while the broker, or for the cluster default every broker, is down, password configs
  encrypted with the ``password.encoder.secret`` given in ``--add-config``, as Kafka's);
  ip quotas too; entity type broker-loggers is refused (with ``--zookeeper`` too: Kafka's
  "Invalid entity type ... with the --zookeeper argument");
- broker configs are altered with IncrementalAlterConfigs (Kafka's tool re-sends the
  whole dynamic config with the older AlterConfigs); the end state is the same, and
  there is no window in which a concurrent change is overwritten;
- every failure is one line on stderr and exit status 1, never a stack trace.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import click

from kafka_py.core.utils.command_line_utils import (
    BROKER_RESOURCE,
    DEFAULT_BOOTSTRAP_TIMEOUT_MS,
    OP_DELETE,
    OP_SET,
    TOPIC_RESOURCE,
    CommandError,
    ConfigEntry,
    altered_configs,
    client_configs,
    cluster_brokers,
    connect,
    describe_configs,
    handle_errors,
    incremental_alter_configs,
    load_props,
    run_tool,
    tool_zk_client,
    validate_bootstrap_servers,
)

logger = logging.getLogger(__name__)

TOPICS = "topics"
BROKERS = "brokers"
BROKER_DEFAULT_ENTITY_NAME = ""
USERS = "users"
CLIENTS = "clients"
IPS = "ips"
SUPPORTED_ENTITY_TYPES = (TOPICS, CLIENTS, USERS, BROKERS, IPS)
ALL_ENTITY_TYPES = ("topics", "clients", "users", "brokers", "broker-loggers", "ips")
MESSAGE_FORMAT_VERSION_CONFIG = "message.format.version"

_DYNAMIC_SOURCE = {TOPICS: "DYNAMIC_TOPIC_CONFIG", BROKERS: "DYNAMIC_BROKER_CONFIG"}
# A separator outside square brackets: what follows holds no ']' before a '[' or the end.
_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"

Out = Callable[[str], None]


def parse_configs_to_be_added(add_config: str | None, add_config_file: str | None = None,
                              out: Out | None = None) -> dict[str, str]:
    """``k1=v1,k2=[v2,v3]`` → {"k1": "v1", "k2": "v2,v3"}, after the file's properties."""
    props: dict[str, str] = {}
    if add_config_file:
        props.update(load_props(add_config_file))
    if add_config is not None:
        pairs = re.split("," + _OUTSIDE_BRACKETS, add_config)
        while pairs and pairs[-1] == "":
            pairs.pop()  # Java's String.split drops trailing empty strings
        split = [re.split(r"\s*=\s*" + _OUTSIDE_BRACKETS, pair) for pair in pairs]
        if not all(len(kv) == 2 for kv in split):
            raise CommandError('Invalid entity config: all configs to be added must be in the format "key=val".')
        for key, value in split:
            props[key.strip()] = re.sub(r"[\[\]]", "", value).strip()
    if MESSAGE_FORMAT_VERSION_CONFIG in props and out is not None:
        out(f"WARNING: The configuration {MESSAGE_FORMAT_VERSION_CONFIG}={props[MESSAGE_FORMAT_VERSION_CONFIG]} "
            "is specified. This configuration will be ignored if the version is newer than the "
            "inter.broker.protocol.version specified in the broker.")
    return props


def parse_configs_to_be_deleted(delete_config: Sequence[str]) -> list[str]:
    """``--delete-config`` values, each a comma-separated list of names."""
    return [name.strip() for value in delete_config for name in value.split(",") if name.strip()]


def format_config_entry(entry: ConfigEntry) -> str:
    synonyms = ", ".join(f"{s.source}:{s.name}={_java_str(s.value)}" for s in entry.synonyms)
    return (f"  {entry.name}={_java_str(entry.value)} sensitive={str(entry.is_sensitive).lower()} "
            f"synonyms={{{synonyms}}}")


def _java_str(value: str | None) -> str:
    return "null" if value is None else value


@dataclass(frozen=True)
class ConfigCommandOptions:
    bootstrap_server: str | None = None
    command_config: str | None = None
    zookeeper: str | None = None
    alter: bool = False
    describe: bool = False
    all: bool = False
    entity_type: tuple[str, ...] = ()
    entity_name: tuple[str, ...] = ()
    entity_default: bool = False
    add_config: str | None = None
    add_config_file: str | None = None
    delete_config: tuple[str, ...] = ()
    force: bool = False
    topic: str | None = None
    broker: str | None = None
    broker_defaults: bool = False
    broker_logger: str | None = None
    client: str | None = None
    client_defaults: bool = False
    user: str | None = None
    user_defaults: bool = False
    ip: str | None = None
    ip_defaults: bool = False
    argv: tuple[str, ...] = ()

    def _entity_flags(self) -> list[tuple[str, str]]:
        named = [(self.topic, "topics"), (self.client, "clients"), (self.user, "users"),
                 (self.broker, "brokers"), (self.broker_logger, "broker-loggers"), (self.ip, "ips")]
        return [(value, kind) for value, kind in named if value is not None]

    def _default_flags(self) -> list[str]:
        flags = [(self.client_defaults, "clients"), (self.user_defaults, "users"),
                 (self.broker_defaults, "brokers"), (self.ip_defaults, "ips")]
        return [kind for given, kind in flags if given]

    @property
    def entity_types(self) -> list[str]:
        return list(self.entity_type) + [k for _, k in self._entity_flags()] + self._default_flags()

    @property
    def entity_names(self) -> list[str]:
        # joptsimple keeps the command-line order of --entity-name and --entity-default, which
        # pairs them with the --entity-type values (users alice, clients <default>); click keeps
        # each option's values apart, so the order comes from the command line itself.
        names = list(self.entity_name)
        if self.entity_default:
            order = [a for a in self.argv if a == "--entity-default" or a.startswith("--entity-name")]
            if order and len(order) == len(names) + order.count("--entity-default"):
                given = iter(names)
                names = [BROKER_DEFAULT_ENTITY_NAME if a == "--entity-default" else next(given) for a in order]
            else:
                names.append(BROKER_DEFAULT_ENTITY_NAME)
        names += [v for v, _ in self._entity_flags()]
        names += [BROKER_DEFAULT_ENTITY_NAME for _ in self._default_flags()]
        return names

    def check_args(self) -> None:
        if int(self.alter) + int(self.describe) != 1:
            raise click.UsageError("Command must include exactly one action: --describe, --alter")
        if self.describe and (self.add_config is not None or self.delete_config or self.add_config_file):
            raise click.UsageError("Option \"--describe\" can't be used with options \"--add-config\", "
                                   "\"--delete-config\"")
        types = self.entity_types
        duplicates = sorted({t for t in types if types.count(t) > 1})
        if duplicates:
            raise CommandError(f"Duplicate entity type(s) specified: {','.join(duplicates)}")
        for entity_type in types:
            if entity_type not in SUPPORTED_ENTITY_TYPES:
                raise CommandError(
                    f"Invalid entity type {entity_type}, the entity type must be one of "
                    f"{','.join(SUPPORTED_ENTITY_TYPES)} with the "
                    f"{'--bootstrap-server' if self.bootstrap_server is not None else '--zookeeper'} argument")
        if not types:
            raise CommandError("At least one entity type must be specified")
        if len(types) > 1 and set(types) != {USERS, CLIENTS}:
            raise CommandError("Only 'users' and 'clients' entity types may be specified together")
        if (self.entity_name or self.entity_type or self.entity_default) and (
                self._entity_flags() or self._default_flags()):
            raise CommandError("--entity-{type,name,default} should not be used in conjunction with specific "
                               "entity flags")
        if self.bootstrap_server is None and self.zookeeper is None:
            raise CommandError("One of the required --bootstrap-server or --zookeeper arguments must be specified")
        if self.bootstrap_server is not None and self.zookeeper is not None:
            raise CommandError("Only one of --bootstrap-server or --zookeeper must be specified")
        names = self.entity_names
        has_entity_name = any(names)
        has_entity_default = any(n == "" for n in names)
        if has_entity_name and BROKERS in types:
            for broker_id in [n for n in names if n]:
                try:
                    int(broker_id)
                except ValueError:
                    raise CommandError(f"The entity name for {types[0]} must be a valid integer broker id, "
                                       f"but it is: {broker_id}") from None
        if self.alter:
            if set(types) & {BROKERS, USERS, CLIENTS, IPS}:
                if not has_entity_name and not has_entity_default:
                    raise CommandError("an entity-name or default entity must be specified with --alter of "
                                       "users, clients, brokers or ips")
            elif not has_entity_name:
                raise CommandError(f"an entity name must be specified with --alter of {','.join(types)}")
            if self.add_config is not None and self.add_config_file is not None:
                raise CommandError("Only one of --add-config or --add-config-file must be specified")
            if self.add_config is None and self.add_config_file is None and not self.delete_config:
                raise CommandError("At least one of --add-config, --add-config-file, or --delete-config must be "
                                   "specified with --alter")
            if len(types) != len(names):
                raise CommandError("An entity name must be specified for every entity type")


class ConfigCommand:
    """The describe and alter operations over one connected admin client."""

    def __init__(self, admin: Any, out: Out = click.echo) -> None:
        self.admin = admin
        self.out = out

    def get_resource_config(self, entity_type: str, entity_name: str, describe_all: bool) -> list[ConfigEntry]:
        if entity_type == TOPICS:
            if entity_name:
                from kafka_py.clients.common.errors import InvalidTopicException
                from kafka_py.core.zk.admin_zk_client import Topic

                try:
                    Topic.validate(entity_name)
                except InvalidTopicException as e:
                    raise CommandError(str(e)) from e
            resource, dynamic_source = TOPIC_RESOURCE, _DYNAMIC_SOURCE[TOPICS]
        elif entity_type == BROKERS:
            if entity_name == BROKER_DEFAULT_ENTITY_NAME:
                dynamic_source = "DYNAMIC_DEFAULT_BROKER_CONFIG"
            else:
                try:
                    int(entity_name)
                except ValueError:
                    raise CommandError(f"The entity name for {entity_type} must be a valid integer broker id, "
                                       f"found: {entity_name}") from None
                dynamic_source = _DYNAMIC_SOURCE[BROKERS]
            resource = BROKER_RESOURCE
        else:
            raise CommandError(f"Invalid entity type: {entity_type}")
        entries = describe_configs(self.admin, resource, entity_name, include_synonyms=True)
        if describe_all:
            return entries
        return [e for e in entries if e.source == dynamic_source]

    def describe(self, entity_type: str, entity_name: str | None, describe_all: bool) -> None:
        if entity_name is not None:
            entities = [entity_name]
        elif entity_type == TOPICS:
            entities = sorted(self.admin.list_topics())
        else:
            ids = sorted(cluster_brokers(self.admin))
            entities = [str(i) for i in ids] + [BROKER_DEFAULT_ENTITY_NAME]
        for entity in entities:
            if entity_type == BROKERS and entity == BROKER_DEFAULT_ENTITY_NAME:
                self.out(f"Default configs for {entity_type} in the cluster are:")
            else:
                source = "All" if describe_all else "Dynamic"
                self.out(f"{source} configs for {entity_type[:-1]} {entity} are:")
            for entry in self.get_resource_config(entity_type, entity, describe_all):
                self.out(format_config_entry(entry))

    def alter(self, entity_type: str, entity_name: str, to_add: Mapping[str, str], to_delete: Sequence[str]) -> None:
        old = {e.name for e in self.get_resource_config(entity_type, entity_name, describe_all=False)}
        invalid = [name for name in to_delete if name not in old]
        if invalid:
            raise CommandError(f"Invalid config(s): {','.join(invalid)}")
        ops = [(k, OP_SET, v) for k, v in to_add.items()] + [(k, OP_DELETE, None) for k in to_delete]
        resource = TOPIC_RESOURCE if entity_type == TOPICS else BROKER_RESOURCE
        incremental_alter_configs(self.admin, resource, entity_name, ops)
        if entity_name:
            self.out(f"Completed updating config for {entity_type[:-1]} {entity_name}.")
        else:
            self.out(f"Completed updating default config for {entity_type} in the cluster.")


def topic_configs_with_zk(zookeeper: str, topic: str | None, alter: bool, to_add: Mapping[str, str],
                          to_delete: Sequence[str], out: Out) -> None:
    """ConfigCommand.alterConfigWithZk and describeConfigWithZk for topics: the override znode
    read, changed and written back whole (AdminZkClient validates it and announces the change)."""
    from kafka_py.core.zk.admin_zk_client import AdminZkClient
    from kafka_py.core.zk.zk_data import ConfigType

    zk_client = tool_zk_client(zookeeper, "kafka-configs")
    try:
        admin = AdminZkClient(zk_client)
        if alter:
            assert topic is not None
            configs = altered_configs(admin.fetch_entity_config(ConfigType.TOPIC, topic), to_add, to_delete)
            try:
                admin.change_configs(ConfigType.TOPIC, topic, configs)
            except CommandError:
                raise
            except Exception as e:  # noqa: BLE001 - Kafka's message, not the exception's class
                raise CommandError(str(e)) from e
            out(f"Completed updating config for entity: topic '{topic}'.")
            return
        topics = [topic] if topic else sorted(zk_client.get_all_entities_with_config(ConfigType.TOPIC))
        for name in topics:
            configs = admin.fetch_entity_config(ConfigType.TOPIC, name)
            out(f"Configs for topic '{name}' are {','.join(f'{k}={v}' for k, v in configs.items())}")
    finally:
        zk_client.close()


# ConfigCommand.BrokerConfigsUpdatableUsingZooKeeperWhileBrokerRunning
BROKER_CONFIGS_UPDATABLE_USING_ZOOKEEPER_WHILE_BROKER_RUNNING = (
    "leader.replication.throttled.rate", "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second")
_DEFAULT_ENTITY = "<default>"  # ConfigEntityName.Default


def _scala_set(names: Sequence[str]) -> str:
    return f"Set({', '.join(names)})"


def encode_broker_passwords(to_add: dict[str, str], per_broker_config: bool) -> dict[str, str]:
    """ConfigCommand.preProcessBrokerConfigs: the password.encoder.* keys are taken out (never
    stored), the rest validated as a dynamic broker layer, and password configs encrypted with
    password.encoder.secret."""
    from kafka_py.server.dynamic_broker_config import is_password_config
    from kafka_py.server.kafka_config import KafkaConfig
    from kafka_py.clients.common.config.config_def import ConfigException
    from kafka_py.clients.common.config.config_def import Password

    encoder_configs = {k: to_add.pop(k) for k in list(to_add) if k.startswith("password.encoder.")}
    try:
        KafkaConfig.validate_dynamic_configs(to_add, per_broker_config)
    except ConfigException as e:
        raise CommandError(str(e)) from e
    passwords = [k for k in to_add if is_password_config(k)]
    if passwords:
        if "password.encoder.secret" not in encoder_configs:
            # Scala's require(): "requirement failed: " and the message
            raise CommandError("requirement failed: password.encoder.secret must be specified to update "
                               f"{_scala_set(passwords)}. Other password encoder configs like cipher algorithm and "
                               "iterations may also be specified to override the default encoding parameters. "
                               "Password encoder configs will not be persisted in ZooKeeper.")
        from kafka_py.core.utils.password_encoder import PasswordEncoder

        encoder = PasswordEncoder(Password(encoder_configs["password.encoder.secret"]),
                                  encoder_configs.get("password.encoder.keyfactory.algorithm"),
                                  encoder_configs.get("password.encoder.cipher.algorithm", "AES/CBC/PKCS5Padding"),
                                  int(encoder_configs.get("password.encoder.key.length", 128)),
                                  int(encoder_configs.get("password.encoder.iterations", 4096)))
        for name in passwords:
            to_add[name] = encoder.encode(Password(to_add[name]))
    return to_add


def broker_configs_with_zk(zookeeper: str, broker: str | None, alter: bool, to_add: Mapping[str, str],
                           to_delete: Sequence[str], out: Out) -> None:
    """ConfigCommand.alterConfigWithZk and describeConfigWithZk for brokers: the replication
    throttle rates may change at any time; other dynamic configs only while the broker (or, for
    the cluster default, every broker) is down, which is how encrypted password configs get
    into ZooKeeper before a broker's first start."""
    from kafka_py.core.zk.admin_zk_client import AdminZkClient
    from kafka_py.core.zk.zk_data import ConfigType

    zk_client = tool_zk_client(zookeeper, "kafka-configs")

    def text(name: str) -> str:
        return "default brokers" if name == _DEFAULT_ENTITY else f"brokers '{name}'"

    try:
        admin = AdminZkClient(zk_client)
        if alter:
            assert broker is not None
            name = _DEFAULT_ENTITY if broker == BROKER_DEFAULT_ENTITY_NAME else broker
            additions = dict(to_add)
            dynamic = [k for k in additions if k not in BROKER_CONFIGS_UPDATABLE_USING_ZOOKEEPER_WHILE_BROKER_RUNNING]
            if dynamic:
                per_broker = name != _DEFAULT_ENTITY
                error = f"--bootstrap-server option must be specified to update broker configs {_scala_set(dynamic)}."
                info = ("Broker configuration updates using ZooKeeper are supported for bootstrapping before brokers "
                        "are started to enable encrypted password configs to be stored in ZooKeeper.")
                if per_broker and zk_client.get_broker(int(name)) is not None:
                    raise CommandError(f"requirement failed: {error} when broker {name} is running. {info}")
                if not per_broker and zk_client.get_all_brokers_in_cluster():
                    raise CommandError(f"requirement failed: {error} for default cluster if any broker is running. "
                                       f"{info}")
                additions = encode_broker_passwords(additions, per_broker)
            configs = altered_configs(admin.fetch_entity_config(ConfigType.BROKER, name), additions, to_delete)
            admin.change_configs(ConfigType.BROKER, name, configs)
            out(f"Completed updating config for entity: {text(name)}.")
            return
        if broker is None:
            names = sorted(zk_client.get_all_entities_with_config(ConfigType.BROKER))
        else:
            names = [_DEFAULT_ENTITY if broker == BROKER_DEFAULT_ENTITY_NAME else broker]
        for name in names:
            configs = admin.fetch_entity_config(ConfigType.BROKER, name)
            out(f"Configs for {text(name)} are {','.join(f'{k}={v}' for k, v in configs.items())}")
    finally:
        zk_client.close()


def connect_admin(bootstrap_server: str, command_config: Mapping[str, str]) -> Any:
    from kafka import KafkaAdminClient

    props = {"bootstrap.timeout.ms": str(DEFAULT_BOOTSTRAP_TIMEOUT_MS), **command_config,
             "bootstrap.servers": bootstrap_server}
    configs = client_configs(props, KafkaAdminClient)
    configs.setdefault("client_id", "kafka-configs")
    return connect(KafkaAdminClient, configs)


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
               help="This tool helps to manipulate and describe entity config for a topic, client, user, broker or ip.")
@click.option("--bootstrap-server", metavar="<server to connect to>",
              help="The Kafka server to connect to. REQUIRED.")
@click.option("--command-config", metavar="<command config property file>",
              help="Property file containing configs to be passed to the admin client.")
@click.option("--zookeeper", metavar="<urls>",
              help="DEPRECATED. The connection string for the zookeeper connection in the form host:port[/chroot]; "
                   "any entity type but broker-loggers.")
@click.option("--alter", is_flag=True, help="Alter the configuration for the entity.")
@click.option("--describe", is_flag=True, help="List configs for the given entity.")
@click.option("--all", "all_", is_flag=True,
              help="List all configs for the given topic or broker entity (includes static configuration "
                   "when the entity type is brokers)")
@click.option("--entity-type", multiple=True, metavar="<topics|clients|users|brokers|ips>",
              help="Type of entity (topics/clients/users/brokers/ips)")
@click.option("--entity-name", multiple=True, metavar="<name>",
              help="Name of entity (topic name/client id/user principal name/broker id/ip)")
@click.option("--entity-default", is_flag=True,
              help="Default entity name for clients/users/brokers/ips (applies to corresponding entity type in "
                   "command line)")
@click.option("--add-config", metavar="<k1=v1,k2=[v1,v2],k3=v3>",
              help="Key Value pairs of configs to add. Square brackets can be used to group values which "
                   "contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'.")
@click.option("--add-config-file", metavar="<file>",
              help="Path to a properties file with configs to add.")
@click.option("--delete-config", multiple=True, metavar="<k1,k2>", help="config keys to remove 'k1,k2'")
@click.option("--force", is_flag=True, help="Suppress console prompts")
@click.option("--topic", metavar="<topic>", help="The topic's name.")
@click.option("--broker", metavar="<broker id>", help="The broker's ID.")
@click.option("--broker-defaults", is_flag=True, help="The config defaults for all brokers.")
@click.option("--broker-logger", hidden=True)
@click.option("--client", metavar="<client-id>", help="The client's ID.")
@click.option("--client-defaults", is_flag=True, help="The config defaults for all clients.")
@click.option("--user", metavar="<user-principal>", help="The user's principal name.")
@click.option("--user-defaults", is_flag=True, help="The config defaults for all users.")
@click.option("--ip", metavar="<ip>", help="The IP address.")
@click.option("--ip-defaults", is_flag=True, help="The config defaults for all IPs.")
@handle_errors()
def main(all_: bool, **kwargs: Any) -> None:
    import sys

    opts = ConfigCommandOptions(all=all_, argv=tuple(sys.argv[1:]), **kwargs)
    opts.check_args()
    to_add: dict[str, str] = {}
    to_delete: list[str] = []
    if opts.alter:
        to_add = parse_configs_to_be_added(opts.add_config, opts.add_config_file, click.echo)
        to_delete = parse_configs_to_be_deleted(opts.delete_config)
    command_config = load_props(opts.command_config) if opts.command_config else {}
    if opts.zookeeper is not None:
        click.echo("Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.")
        click.echo("Use --bootstrap-server instead to specify a broker to connect to.")
        if opts.entity_types[0] == TOPICS:
            names = opts.entity_names
            topic_configs_with_zk(opts.zookeeper, names[0] if names else None, opts.alter, to_add, to_delete,
                                  click.echo)
            return
        if opts.entity_types[0] == BROKERS:
            names = opts.entity_names
            broker_configs_with_zk(opts.zookeeper, names[0] if names else None, opts.alter, to_add, to_delete,
                                   click.echo)
            return
    if opts.entity_types[0] in (USERS, CLIENTS, IPS):
        from kafka_py.core.admin import client_quota_command
        if opts.bootstrap_server is not None:
            validate_bootstrap_servers(opts.bootstrap_server)
        client_quota_command.run(opts, to_add, to_delete, command_config, click.echo)
        return
    assert opts.bootstrap_server is not None
    validate_bootstrap_servers(opts.bootstrap_server)
    admin = connect_admin(opts.bootstrap_server, command_config)
    try:
        command = ConfigCommand(admin)
        entity_type = opts.entity_types[0]
        names = opts.entity_names
        if opts.alter:
            command.alter(entity_type, names[0], to_add, to_delete)
        else:
            command.describe(entity_type, names[0] if names else None, opts.all)
    finally:
        admin.close()


if __name__ == "__main__":
    run_tool(main, "kafka-configs.sh")
