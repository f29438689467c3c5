"""Port of the SCRAM-credential part of core/src/main/scala/kafka/admin/ConfigCommand.scala
(Kafka 2.8.2): ``kafka-configs.sh --entity-type users`` adding, deleting and describing
a user's SCRAM-SHA-256 / SCRAM-SHA-512 credentials.

``--add-config 'SCRAM-SHA-512=[iterations=8192,password=secret]'`` (iterations default to
4096) and ``--delete-config SCRAM-SHA-512``. Two routes, as in Kafka 2.8:

* ``--zookeeper``: the tool salts the password itself, writes /config/users/<user> in
  ScramCredentialUtils' form and announces the change under /config/changes, so every
  broker reloads the user without a restart.
* ``--bootstrap-server``: AlterUserScramCredentials carries the salt and salted password
  (never the password); DescribeUserScramCredentials lists mechanisms and iterations.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from kafka_py.clients.common.security.sanitizer import desanitize, sanitize
from kafka_py.clients.common.security.scram import (
    ScramFormatter,
    ScramMechanism,
    credential_from_string,
    credential_to_string,
    secure_random_bytes,
)
from kafka_py.core.utils.command_line_utils import AdminTarget, CommandError

DEFAULT_ITERATIONS = 4096
MECHANISM_IDS = {ScramMechanism.SCRAM_SHA_256: 1, ScramMechanism.SCRAM_SHA_512: 2}


def parse_scram_additions(to_add: Mapping[str, str]) -> dict[ScramMechanism, tuple[int, str]]:
    """``{"SCRAM-SHA-256": "iterations=8192,password=x"}`` → {mechanism: (iterations, password)}."""
    result = {}
    for key, value in to_add.items():
        mechanism = ScramMechanism.for_mechanism_name(key)
        if mechanism is None:
            raise CommandError(f"Invalid config {key} for users: kafka-py accepts only SCRAM credentials "
                               f"({', '.join(ScramMechanism.mechanism_names())}); it keeps no quotas")
        fields = {}
        for part in value.split(","):
            k, sep, v = part.partition("=")
            if not sep:
                raise CommandError(f"Invalid credential config {key}: expected [iterations=N,]password=P")
            fields[k.strip()] = v
        if "password" not in fields:
            raise CommandError(f"Invalid credential config {key}: password is required")
        try:
            iterations = int(fields.get("iterations", DEFAULT_ITERATIONS))
        except ValueError:
            raise CommandError(f"Invalid credential config {key}: iterations must be an integer") from None
        if iterations < mechanism.min_iterations:
            raise CommandError(f"Iterations {iterations} is less than the minimum {mechanism.min_iterations} "
                               f"required for {key}")
        result[mechanism] = (iterations, fields["password"])
    return result


def _check_deletions(to_delete: Sequence[str]) -> list[ScramMechanism]:
    mechanisms = []
    for key in to_delete:
        mechanism = ScramMechanism.for_mechanism_name(key)
        if mechanism is None:
            raise CommandError(f"Invalid config {key} for users: only SCRAM credentials can be deleted")
        mechanisms.append(mechanism)
    return mechanisms


def run(opts: Any, to_add: Mapping[str, str], to_delete: Sequence[str], command_config: Mapping[str, str],
        out: Callable[[str], None]) -> None:
    names = opts.entity_names
    user = names[0] if names else None
    if user == "":
        raise CommandError("SCRAM credentials are per user; --entity-default is not supported for them")
    if opts.zookeeper is not None:
        _run_with_zookeeper(opts.zookeeper, opts.alter, user, to_add, to_delete, out)
    else:
        _run_with_admin(opts.bootstrap_server, opts.alter, user, to_add, to_delete, command_config, out)


# ---- through ZooKeeper -------------------------------------------------------------------

def _run_with_zookeeper(zookeeper: str, alter: bool, user: str | None, to_add: Mapping[str, str],
                        to_delete: Sequence[str], out: Callable[[str], None]) -> None:
    from kafka_py.core.zk.admin_zk_client import AdminZkClient
    from kafka_py.core.zk.kafka_zk_client import KafkaZkClient
    from kafka_py.core.zk.zk_data import ConfigType

    zk = KafkaZkClient(zookeeper, session_timeout_ms=30000, connection_timeout_ms=30000,
                       create_chroot_if_missing=False)
    try:
        if alter:
            additions = parse_scram_additions(to_add)
            deletions = _check_deletions(to_delete)
            config = dict(zk.get_entity_configs(ConfigType.USER, sanitize(user)))
            for mechanism in deletions:
                config.pop(mechanism.mechanism_name, None)
            for mechanism, (iterations, password) in additions.items():
                credential = ScramFormatter(mechanism).generate_credential(password, iterations)
                config[mechanism.mechanism_name] = credential_to_string(credential)
            AdminZkClient(zk).change_configs(ConfigType.USER, sanitize(user), config)
            out(f"Completed updating config for entity: user-principal '{user}'.")
            return
        users = [sanitize(user)] if user else zk.get_all_entities_with_config(ConfigType.USER)
        for sanitized in users:
            config = zk.get_entity_configs(ConfigType.USER, sanitized)
            shown = []
            for key, value in sorted(config.items()):
                if ScramMechanism.for_mechanism_name(key) is not None:
                    try:
                        shown.append(f"{key}=iterations={credential_from_string(value).iterations}")
                    except ValueError:
                        shown.append(f"{key}=<invalid>")
            out(f"Configs for user-principal '{desanitize(sanitized)}' are {','.join(shown)}")
    finally:
        zk.close()


# ---- through a broker --------------------------------------------------------------------

def _send(bootstrap_server: str, command_config: Mapping[str, str], api_key: Any, body: Any) -> Any:
    return AdminTarget(bootstrap_server, command_config).send("kafka-configs", api_key, 0, body)


def _run_with_admin(bootstrap_server: str, alter: bool, user: str | None, to_add: Mapping[str, str],
                    to_delete: Sequence[str], command_config: Mapping[str, str],
                    out: Callable[[str], None]) -> None:
    from kio.schema.alter_user_scram_credentials.v0 import request as alter_request
    from kio.schema.describe_user_scram_credentials.v0 import request as describe_request
    from kio.static.primitive import i8, i32

    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.errors import Errors

    if alter:
        additions = parse_scram_additions(to_add)
        deletions = _check_deletions(to_delete)
        upsertions = []
        for mechanism, (iterations, password) in additions.items():
            salt = secure_random_bytes()
            salted = ScramFormatter(mechanism).salted_password(password, salt, iterations)
            upsertions.append(alter_request.ScramCredentialUpsertion(
                name=user, mechanism=i8(MECHANISM_IDS[mechanism]), iterations=i32(iterations), salt=salt,
                salted_password=salted))
        body = alter_request.AlterUserScramCredentialsRequest(
            deletions=tuple(alter_request.ScramCredentialDeletion(name=user, mechanism=i8(MECHANISM_IDS[m]))
                            for m in deletions),
            upsertions=tuple(upsertions))
        response = _send(bootstrap_server, command_config, ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, body)
        for result in response.results:
            error = Errors.for_code(int(result.error_code)) if hasattr(Errors, "for_code") else None
            if int(result.error_code) != 0:
                raise CommandError(f"Error altering SCRAM credentials of user {result.user}: "
                                   f"{error.name if error else int(result.error_code)}: {result.error_message}")
        out(f"Completed updating config for user {user}.")
        return
    users = None if user is None else (describe_request.UserName(name=user),)
    response = _send(bootstrap_server, command_config, ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS,
                     describe_request.DescribeUserScramCredentialsRequest(users=users))
    names = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
    for result in response.results:
        if int(result.error_code) != 0:
            raise CommandError(f"Error describing SCRAM credentials of user {result.user}: {result.error_message}")
        shown = ",".join(f"{names.get(int(c.mechanism), c.mechanism)}=iterations={int(c.iterations)}"
                         for c in result.credential_infos)
        out(f"SCRAM credential configs for user-principal '{result.user}' are {shown}")
