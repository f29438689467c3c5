"""Port of the client-quota part of core/src/main/scala/kafka/admin/ConfigCommand.scala (Kafka
2.8.2): ``kafka-configs.sh --entity-type users|clients|ips`` with ``--bootstrap-server``.

    kafka-configs.sh --bootstrap-server h:9092 --alter --entity-type users --entity-name alice \\
        --entity-type clients --entity-name app \\
        --add-config producer_byte_rate=1048576,consumer_byte_rate=2097152,request_percentage=50
    kafka-configs.sh --bootstrap-server h:9092 --describe --entity-type clients --entity-default
    kafka-configs.sh --bootstrap-server h:9092 --alter --entity-type users --entity-name alice \\
        --delete-config producer_byte_rate

Quota keys are altered with AlterClientQuotas and described with DescribeClientQuotas
(strict filters, as Kafka's tool builds them: ``--entity-type users`` alone describes user
entities without a client id). ``--entity-default`` (or ``--user-defaults`` /
``--client-defaults``) names the ``<default>`` entity. For users, SCRAM credential keys go to
the SCRAM path (kafka_py/core/admin/user_scram_command.py); one command cannot alter both, as in
Kafka. Output lines are Kafka's:

    Quota configs for user-principal 'alice', client-id 'app' are producer_byte_rate=1048576.0
    Completed updating config for user alice.

With ``--zookeeper`` (deprecated in Kafka 2.8) the quotas of users, clients and <user, client>
pairs are read from and written to their config znodes (/config/users/<user>,
/config/clients/<client>, /config/users/<user>/clients/<client>, ``<default>`` for a default
entity) as 2.8.2's ``alterConfigWithZk`` and ``describeConfigWithZk`` do:

    Configs for user-principal 'alice', client-id 'app' are producer_byte_rate=1048576
    Completed updating config for entity: user-principal 'alice', client-id 'app'.

ips likewise (/config/ips/<ip>, ``ips '10.0.0.1'``); a user's SCRAM credentials take the SCRAM
path.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

from kafka_py.server.kafka_config import java_double_to_string
from kafka_py.core.utils.command_line_utils import AdminTarget, CommandError, altered_configs, tool_zk_client

USERS = "users"
CLIENTS = "clients"
IPS = "ips"
QUOTA_ENTITY_TYPES = {USERS: "user", CLIENTS: "client-id", IPS: "ip"}
_ENTITY_LABELS = {"user": "user-principal", "client-id": "client-id", "ip": "ip"}
USER_CLIENT_QUOTA_KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage",
                          "controller_mutation_rate")
IP_QUOTA_KEYS = ("connection_creation_rate",)
SCRAM_KEYS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
# DescribeClientQuotasRequest's match types.
_EXACT, _DEFAULT, _SPECIFIED = 0, 1, 2

Out = Callable[[str], None]


def _send(target: AdminTarget, api_key: Any, version: int, values: Mapping[str, Any]) -> Any:
    from kafka_py.clients.common.protocol.messages import request_schema
    from kafka_py.clients.common.protocol.entities import build_entity

    return target.send("kafka-configs", api_key, version, build_entity(request_schema(api_key, version), values))


def _components(entity_types: Sequence[str], entity_names: Sequence[str]) -> list[dict[str, Any]]:
    """ClientQuotaFilter components: a named entity, the default (""), or any (no name given)."""
    if len(entity_names) > len(entity_types):
        raise CommandError("More entity names specified than entity types")
    components = []
    for i, entity_type in enumerate(entity_types):
        quota_type = QUOTA_ENTITY_TYPES.get(entity_type)
        if quota_type is None:
            raise CommandError(f"Unexpected entity type {entity_type}")
        name = entity_names[i] if i < len(entity_names) else None
        if name is None:
            components.append({"entity_type": quota_type, "match_type": _SPECIFIED, "match": None})
        elif name == "":
            components.append({"entity_type": quota_type, "match_type": _DEFAULT, "match": None})
        else:
            components.append({"entity_type": quota_type, "match_type": _EXACT, "match": name})
    return components


def describe_quotas(target: AdminTarget, entity_types: Sequence[str], entity_names: Sequence[str]
                    ) -> list[tuple[dict[str, Optional[str]], dict[str, float]]]:
    """Every quota entity matching the types and names (ClientQuotaFilter.containsOnly)."""
    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.errors import Errors

    response = _send(target, ApiKeys.DESCRIBE_CLIENT_QUOTAS, 1,
                     {"components": _components(entity_types, entity_names), "strict": True})
    if int(response.error_code) != 0:
        raise CommandError(f"Error describing client quotas: {Errors.for_code(int(response.error_code)).name}: "
                           f"{response.error_message}")
    result = []
    for entry in response.entries or ():
        entity = {e.entity_type: e.entity_name for e in entry.entity}
        result.append((entity, {v.key: float(v.value) for v in entry.values}))
    return result


def _entity_text(entity: Mapping[str, Optional[str]]) -> str:
    parts = []
    for entity_type in ("user", "client-id", "ip"):
        if entity_type in entity:
            name = entity[entity_type]
            label = _ENTITY_LABELS[entity_type]
            parts.append(f"{label} '{name}'" if name is not None else f"the default {label}")
    return ", ".join(parts)


def describe(target: AdminTarget, entity_types: Sequence[str], entity_names: Sequence[str], out: Out) -> None:
    entries = describe_quotas(target, entity_types, entity_names)
    for entity, values in sorted(entries, key=lambda e: _entity_text(e[0])):
        text = ", ".join(f"{k}={java_double_to_string(v)}" for k, v in values.items())
        out(f"Quota configs for {_entity_text(entity)} are {text}")
    # SCRAM credentials are per user: shown for users alone, not for defaults.
    if list(entity_types) == [USERS] and "" not in entity_names:
        _describe_scram(target, entity_names, out)


def _describe_scram(target: AdminTarget, users: Sequence[str], out: Out) -> None:
    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.errors import Errors

    names = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
    response = _send(target, ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, 0,
                     {"users": [{"name": u} for u in users] if users else None})
    for result in response.results:
        if int(result.error_code) != 0:
            error = Errors.for_code(int(result.error_code))
            out(f"Error retrieving SCRAM credential configs for user-principal '{result.user}': "
                f"{error.exception_name}: {result.error_message}")
            continue
        shown = ", ".join(f"{names.get(int(c.mechanism), c.mechanism)}=iterations={int(c.iterations)}"
                          for c in result.credential_infos)
        out(f"SCRAM credential configs for user-principal '{result.user}' are {shown}")


def alter(target: AdminTarget, entity_types: Sequence[str], entity_names: Sequence[str],
          to_add: Mapping[str, str], to_delete: Sequence[str]) -> None:
    """AlterClientQuotas of one entity; deleting a key it does not have is an error, as in Kafka."""
    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.errors import Errors

    if len(entity_types) != len(entity_names):
        raise CommandError("Exactly one entity name must be specified for every entity type")
    existing = describe_quotas(target, entity_types, entity_names)
    old = existing[0][1] if existing else {}
    invalid = [k for k in to_delete if k not in old]
    if invalid:
        raise CommandError(f"Invalid config(s): {','.join(invalid)}")
    ops = []
    for key, value in to_add.items():
        try:
            number = float(value)
        except ValueError:
            raise CommandError(f"Cannot parse quota configuration value for {key}: {value}") from None
        ops.append({"key": key, "value": number, "remove": False})
    ops += [{"key": key, "value": 0.0, "remove": True} for key in to_delete]
    entity = [{"entity_type": QUOTA_ENTITY_TYPES[t], "entity_name": n or None}
              for t, n in zip(entity_types, entity_names)]
    response = _send(target, ApiKeys.ALTER_CLIENT_QUOTAS, 1,
                     {"entries": [{"entity": entity, "ops": ops}], "validate_only": False})
    for entry in response.entries:
        if int(entry.error_code) != 0:
            error = Errors.for_code(int(entry.error_code))
            raise CommandError(f"Error while altering client quotas: {error.exception_name}: {entry.error_message}")


def run(opts: Any, to_add: Mapping[str, str], to_delete: Sequence[str], command_config: Mapping[str, str],
        out: Out) -> None:
    """``kafka-configs.sh`` for users, clients and ips."""
    types = list(opts.entity_types)
    names = list(opts.entity_names)
    keys = list(to_add) + list(to_delete)
    scram = [k for k in keys if k in SCRAM_KEYS]
    quota_keys = IP_QUOTA_KEYS if types == [IPS] else USER_CLIENT_QUOTA_KEYS
    quota = [k for k in keys if k in quota_keys]
    unknown = [k for k in keys if k not in scram and k not in quota]
    if opts.zookeeper is not None:
        if types == [USERS] and scram and not quota and not unknown and opts.alter:
            from kafka_py.core.admin import user_scram_command
            user_scram_command.run(opts, to_add, to_delete, command_config, out)
            return
        if scram and opts.alter:
            raise CommandError(f"Cannot alter both quota and SCRAM credential configs simultaneously for "
                               f"'{USERS}' using --zookeeper.")
        if unknown:
            raise CommandError(f"Unknown Dynamic Configuration '{unknown[0]}'.")
        quotas_with_zk(opts.zookeeper, types, names, bool(opts.alter), to_add, to_delete, out)
        return
    target = AdminTarget(opts.bootstrap_server, command_config)
    if opts.describe:
        describe(target, types, names, out)
        return
    if types == [IPS]:
        if scram or unknown:
            raise CommandError(f"Only connection quota configs can be added for '{IPS}' using --bootstrap-server. "
                               f"Unexpected config names: {','.join(scram + unknown)}")
    elif CLIENTS in types:
        if scram or unknown:
            raise CommandError(f"Only quota configs can be added for '{CLIENTS}' using --bootstrap-server. "
                               f"Unexpected config names: {','.join(scram + unknown)}")
    else:
        if unknown:
            raise CommandError(f"Only quota and SCRAM credential configs can be added for '{USERS}' using "
                               f"--bootstrap-server. Unexpected config names: {','.join(unknown)}")
        if scram:
            if "" in names:
                raise CommandError("The use of --entity-default or --user-defaults is not allowed with User SCRAM "
                                   "Credentials using --bootstrap-server.")
            if quota:
                raise CommandError(f"Cannot alter both quota and SCRAM credential configs simultaneously for "
                                   f"'{USERS}' using --bootstrap-server.")
            from kafka_py.core.admin import user_scram_command
            user_scram_command.run(opts, to_add, to_delete, command_config, out)
            return
    alter(target, types, names, to_add, to_delete)
    if names[0]:
        out(f"Completed updating config for {types[0][:-1]} {names[0]}.")
    else:
        out(f"Completed updating default config for {types[0]} in the cluster.")


# ---- through ZooKeeper (--zookeeper) -------------------------------------------------------

_DEFAULT_ENTITY = "<default>"  # ConfigEntityName.Default
_ZK_LABELS = {USERS: "user-principal", CLIENTS: "client-id", IPS: "ips"}


def _zk_entity_text(entity_type: str, sanitized: str) -> str:
    """ConfigCommand.Entity.toString: ``user-principal 'alice'``, ``default client-id``,
    ``ips '10.0.0.1'``."""
    from kafka_py.clients.common.security.sanitizer import desanitize

    label = _ZK_LABELS[entity_type]
    if sanitized == _DEFAULT_ENTITY:
        return f"default {label}"
    return f"{label} '{sanitized if entity_type == IPS else desanitize(sanitized)}'"


def _is_valid_ip_entity(ip: str) -> bool:
    """AdminZkClient.isValidIpEntity: the default entity, or an address (or host) that resolves."""
    import socket

    if ip == _DEFAULT_ENTITY:
        return True
    try:
        socket.getaddrinfo(ip, None)
    except (OSError, UnicodeError):
        return False
    return True


def _shown(key: str, value: str) -> str:
    """A config value as described: a SCRAM credential by its iteration count only (its salt
    and keys stay in ZooKeeper)."""
    if key not in SCRAM_KEYS:
        return value
    from kafka_py.clients.common.security.scram import credential_from_string

    try:
        return f"iterations={credential_from_string(value).iterations}"
    except ValueError:
        return "<invalid>"


def quotas_with_zk(zookeeper: str, types: Sequence[str], names: Sequence[str], alter: bool,
                   to_add: Mapping[str, str], to_delete: Sequence[str], out: Out) -> None:
    """The quota configs of users, clients, <user, client> pairs or ips in their config znodes (and,
    described, a user's SCRAM credentials)."""
    from kafka_py.clients.common.security.sanitizer import sanitize
    from kafka_py.core.zk.admin_zk_client import AdminZkClient

    by_type = dict(zip(types, list(names) + [None] * (len(types) - len(names))))

    def sanitized(entity_type: str) -> str | None:
        name = by_type.get(entity_type)
        if name is None:
            return None
        if name == "":
            return _DEFAULT_ENTITY
        return name if entity_type == IPS else sanitize(name)

    # a <user, client> pair lives under the user: /config/users/<user>/clients/<client>
    root_type = USERS if USERS in by_type else (IPS if IPS in by_type else CLIENTS)
    child_type = CLIENTS if root_type == USERS and CLIENTS in by_type else None
    zk = tool_zk_client(zookeeper, "kafka-configs")
    try:
        admin = AdminZkClient(zk)
        roots = [sanitized(root_type)] if sanitized(root_type) is not None else \
            sorted(zk.get_all_entities_with_config(root_type))
        entities: list[tuple[str, str | None]] = []
        for root in roots:
            if child_type is None:
                entities.append((root, None))
            elif sanitized(child_type) is not None:
                entities.append((root, sanitized(child_type)))
            else:
                children = zk.get_all_entities_with_config(f"{root_type}/{root}/{child_type}")
                entities += [(root, c) for c in sorted(children)]
        for root, child in entities:
            full_name = root if child is None else f"{root}/{child_type}/{child}"
            text = _zk_entity_text(root_type, root) + ("" if child is None else ", " + _zk_entity_text(CLIENTS, child))
            configs = dict(admin.fetch_entity_config(root_type, full_name))
            if alter:
                configs = altered_configs(configs, to_add, to_delete)
                if root_type == IPS and not _is_valid_ip_entity(root):
                    raise CommandError(f"{root} is not a valid IP or resolvable host.")
                admin.change_configs(root_type, full_name, configs)
                out(f"Completed updating config for entity: {text}.")
            elif configs or not (root_type == USERS and by_type.get(USERS) is None and child_type is None):
                # all users described: the user znodes holding only <user, client> quotas are left out
                out(f"Configs for {text} are {','.join(f'{k}={_shown(k, v)}' for k, v in configs.items())}")
    finally:
        zk.close()
