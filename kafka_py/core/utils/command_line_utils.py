"""Port of core/src/main/scala/kafka/utils/CommandLineUtils.scala and ToolsUtils.scala:
what the command-line tools share.

- Java client properties (``bootstrap.servers``, ``acks``, ``linger.ms`` ...) given with
  ``--producer-property``, ``--command-config`` and friends are turned into the keyword
  arguments of kafka-python 3's clients (``client_configs``), so the tools take Kafka's
  names while running on kafka-python.
- Failures end a tool with one line on stderr and a non-zero exit status
  (``CommandError``, ``handle_errors``), never a traceback: a broker that cannot be
  reached, a topic that does not exist, a broker error code with its message.
- Every tool starts through ``run_tool``; a reader of its output that goes away
  (``kafka-dump-log.sh ... | head``) ends it quietly with status 0, as a Kafka tool,
  whose PrintStream swallows the write error, finishes without a word.
- kafka-python's own logging is silenced unless ``KAFKA_PY_TOOLS_LOG_LEVEL`` asks for it
  (Kafka's tools log WARN and above to stderr through config/tools-log4j.properties;
  kafka-python's reconnect warnings would bury the one line that matters).
- A progress bar on stderr for tools whose stdout goes to a file or pipe.
- ``admin_channel_builder`` / ``open_network_client``: the same ``--command-config``
  properties (``security.protocol``, ``ssl.*``, ``sasl.mechanism``, ``sasl.jaas.config``)
  securing the tools' own connection for the requests kafka-python has no class for.
- Raw admin requests through a KafkaAdminClient's connections, for the answers its
  public methods drop (per-resource error codes and messages of DescribeConfigs and
  IncrementalAlterConfigs, and the cluster-wide default broker resource "").
"""
from __future__ import annotations

import errno
import functools
import logging
import os
import re
import select
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, NoReturn, Sequence

import click

from kafka_py.clients.common.errors import AdminOperationException
from kafka_py.clients.common.utils import properties

logger = logging.getLogger(__name__)

LOG_LEVEL_ENV = "KAFKA_PY_TOOLS_LOG_LEVEL"

# The admin tools' ``bootstrap.timeout.ms`` (kafka-python's wait for a first bootstrap
# connection) unless --command-config sets it.
DEFAULT_BOOTSTRAP_TIMEOUT_MS = 15000

# Kafka's ConfigEntry.ConfigSource, by the wire value of DescribeConfigs v1+.
CONFIG_SOURCES = {
    0: "UNKNOWN",
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
}

# ConfigResource.Type wire values.
TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4

# IncrementalAlterConfigs operations (AlterConfigOp.OpType).
OP_SET = 0
OP_DELETE = 1

# Java client property names whose kafka-python keyword differs from the dotted name
# with dots turned into underscores.
_RENAMED_CLIENT_CONFIGS = {
    "receive.buffer.bytes": "receive_buffer_bytes",
    "send.buffer.bytes": "send_buffer_bytes",
    "max.partition.fetch.bytes": "max_partition_fetch_bytes",
}
# Java-only properties with no kafka-python counterpart and no effect worth a warning
# (serializers are fixed to bytes by the tools themselves).
_SILENTLY_IGNORED = frozenset({
    "key.serializer", "value.serializer", "key.deserializer", "value.deserializer",
    "buffer.memory", "default.api.timeout.ms", "interceptor.classes",
})


# Java client TLS file properties -> kafka-python keywords (PEM files).
_SSL_FILE_CONFIGS = {
    "ssl.truststore.location": "ssl_cafile",
    "ssl.keystore.location": "ssl_certfile",
    "ssl.key.password": "ssl_password",
}


class CommandError(Exception):
    """A failure the tool reports as one line on stderr before exiting with status 1."""


class AdminCommandFailedException(CommandError):
    """core's kafka.common.AdminCommandFailedException: the command as a whole failed."""


# How long a tool's --zookeeper mode waits for its ZooKeeper session (Kafka's tools: 30 s)
TOOL_ZK_TIMEOUT_MS = 30_000


def tool_zk_client(zookeeper: str, name: str, failure: type[CommandError] = CommandError) -> Any:
    """The KafkaZkClient of a tool's deprecated --zookeeper mode, kazoo's reconnect warnings
    silenced (they would bury the one line that matters); a connection that fails raises
    ``failure`` with that line."""
    from kafka_py.core.zk.kafka_zk_client import KafkaZkClient

    logging.getLogger("kazoo").setLevel(logging.CRITICAL + 1)
    try:
        return KafkaZkClient(zookeeper, session_timeout_ms=TOOL_ZK_TIMEOUT_MS, connection_timeout_ms=TOOL_ZK_TIMEOUT_MS,
                             create_chroot_if_missing=False, name=name)
    except Exception as e:  # noqa: BLE001 - one line, whatever kazoo raises
        raise failure(f"Unable to connect to ZooKeeper at {zookeeper}: {e}") from e


def altered_configs(current: Mapping[str, str], to_add: Mapping[str, str], to_delete: Sequence[str]) -> dict[str, str]:
    """An entity's configs with ``to_add`` set and ``to_delete`` removed, as ConfigCommand alters
    them; deleting a config the entity does not have is an error naming it."""
    invalid = [name for name in to_delete if name not in current]
    if invalid:
        raise CommandError(f"Invalid config(s): {','.join(invalid)}")
    configs = dict(current)
    configs.update(to_add)
    for name in to_delete:
        configs.pop(name, None)
    return configs


def configure_tool_logging() -> None:
    """WARN and above of our own loggers on stderr in Kafka's line format.

    kafka-python's loggers stay quiet unless KAFKA_PY_TOOLS_LOG_LEVEL names a level, which
    then applies to every logger.
    """
    level_name = os.environ.get(LOG_LEVEL_ENV, "").strip().upper()
    level = logging.getLevelName(level_name) if level_name else logging.WARNING
    if not isinstance(level, int):
        level = logging.WARNING
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(
        "[%(asctime)s,%(msecs)03d] %(levelname)s %(message)s (%(name)s)", "%Y-%m-%d %H:%M:%S"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("kafka").setLevel(level if level_name else logging.CRITICAL + 1)


def stdout_closed() -> bool:
    """True when nobody reads our stdout any more: the pipe's reader has exited (the end
    of ``| head``), which poll reports as an error condition on the writing end."""
    try:
        fd = sys.__stdout__.fileno()
        poller = select.poll()
        poller.register(fd, 0)  # POLLERR and POLLHUP are reported whatever the mask
        return any(events & (select.POLLERR | select.POLLNVAL) for _, events in poller.poll(0))
    except (AttributeError, ValueError, OSError):
        return False


def is_closed_stdout_error(e: BaseException) -> bool:
    """``e`` is the failed write to a stdout (or stderr) whose reader has gone."""
    return isinstance(e, OSError) and e.errno == errno.EPIPE and stdout_closed()


def _discard_stdout() -> None:
    # What is still buffered goes nowhere instead of failing again when the
    # interpreter flushes stdout at exit ("Exception ignored ... BrokenPipeError").
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
        os.close(devnull)
    except (AttributeError, ValueError, OSError):
        pass


def run_tool(command: Callable[..., Any], prog_name: str | None = None, *,
             tool_logging: bool = True, **kwargs: Any) -> None:
    """The entry point of every tool (``python -m kafka_py.core.tools.<tool>``, ``kafka_py.core.admin.<command>``).

    Sets up the tools' logging, runs the click ``command`` (or any callable taking
    ``prog_name``) and exits with its status. When stdout's reader has gone
    (``| head``), the tool has nobody to write for: it ends with status 0 and no
    traceback, whichever write noticed it first (click itself turns a broken pipe into
    status 1; the tools' own error handling lets it through, see ``handle_errors``).
    """
    if tool_logging:
        configure_tool_logging()
    status: Any = 0
    try:
        if prog_name is not None:
            kwargs["prog_name"] = prog_name
        result = command(**kwargs)
        status = result if isinstance(result, int) else 0
    except SystemExit as e:
        status = e.code
    except KeyboardInterrupt:
        status = 130
    except OSError as e:
        if not is_closed_stdout_error(e):
            raise
    if stdout_closed():
        _discard_stdout()
        if status in (None, 0, 1):  # 1: click's own answer to a broken pipe
            status = 0
    else:
        try:
            sys.stdout.flush()
        except OSError as e:
            if not is_closed_stdout_error(e):
                raise
            _discard_stdout()
            status = 0
    sys.exit(status)


def handle_errors(prefix: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Turn CommandError, kafka-python errors and OS errors into one stderr line and exit 1."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
                raise
            except KeyboardInterrupt:
                raise click.exceptions.Exit(130)
            except OSError as e:
                if is_closed_stdout_error(e):
                    raise  # not a failure: the reader of our output has gone (run_tool)
                logger.debug("command failed", exc_info=True)
                click.echo(f"{prefix}{describe_exception(e)}", err=True)
                raise click.exceptions.Exit(1)
            except Exception as e:  # the whole point: no traceback reaches the user
                logger.debug("command failed", exc_info=True)
                click.echo(f"{prefix}{describe_exception(e)}", err=True)
                raise click.exceptions.Exit(1)

        return wrapper

    return decorate


def print_usage_and_die(message: str) -> NoReturn:
    """CommandLineUtils.printUsageAndDie: ``message``, then the tool's help, on stderr and exit
    status 1 (a missing required option, a tool run without arguments), as Kafka's tools do."""
    ctx = click.get_current_context()
    click.echo(message, err=True)
    click.echo(ctx.get_help(), err=True)
    ctx.exit(1)
    raise AssertionError("unreachable")  # ctx.exit raises


def describe_exception(e: BaseException) -> str:
    """One line for an exception: its message, Kafka-style."""
    if isinstance(e, (CommandError, AdminOperationException)):
        return str(e)
    try:
        import kafka.errors as kafka_errors
    except ImportError:  # pragma: no cover - kafka-python is a dependency
        kafka_errors = None
    if kafka_errors is not None and isinstance(e, kafka_errors.KafkaError):
        message = e.args[0] if e.args else None
        if isinstance(message, str) and message:
            return f"{type(e).__name__}: {message}"
        description = getattr(e, "description", None)
        return f"{type(e).__name__}: {description}" if description else type(e).__name__
    text = str(e).replace("\n", " ").strip()
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def error_message(error_code: int, message: str | None = None) -> str:
    """The message a Kafka client shows for a response error: the broker's, else the default."""
    if message:
        return message
    from kafka_py.clients.common.protocol.errors import Errors  # kio is slow to import; most runs never need it

    try:
        error = Errors.for_code(error_code)
    except (KeyError, ValueError):
        return f"Unknown error code {error_code}"
    return error.message or error.name


def error_name(error_code: int) -> str:
    from kafka_py.clients.common.protocol.errors import Errors

    try:
        return Errors.for_code(error_code).name
    except (KeyError, ValueError):
        return f"UNKNOWN_ERROR_CODE_{error_code}"


# -- properties and client configuration ---------------------------------------------------

def load_props(path: str) -> dict[str, str]:
    """Utils.loadProps: a .properties file, or CommandError naming the file."""
    try:
        return properties.load_file(path)
    except OSError as e:
        raise CommandError(f"Unable to read properties file {path}: {e.strerror or e}") from e
    except ValueError as e:
        raise CommandError(f"Invalid properties file {path}: {e}") from e


def parse_key_value_args(args: Iterable[str], accept_missing_value: bool = True) -> dict[str, str]:
    """CommandLineUtils.parseKeyValueArgs: ``k=v`` strings split at the first ``=``."""
    try:
        return properties.parse_key_value_args(args, accept_missing_value)
    except ValueError as e:
        raise CommandError(str(e)) from e


def _coerce(name: str, value: str, default: Any) -> Any:
    text = value.strip()
    if isinstance(default, bool):
        if text.lower() not in ("true", "false"):
            raise CommandError(f"Invalid value {value} for configuration {name}: Expected value to be "
                               "either true or false")
        return text.lower() == "true"
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise CommandError(f"Invalid value {value} for configuration {name}: Not a number of "
                               "type INT") from None
    if isinstance(default, float):
        try:
            return float(text)
        except ValueError:
            raise CommandError(f"Invalid value {value} for configuration {name}: Not a number of "
                               "type DOUBLE") from None
    return text


def client_configs(props: Mapping[str, str], client_class: type) -> dict[str, Any]:
    """Java client properties as kafka-python keyword arguments for ``client_class``.

    ``client_class`` is KafkaProducer, KafkaConsumer or KafkaAdminClient; its
    DEFAULT_CONFIG gives the accepted names and the type each value is parsed to.
    Properties it does not know are logged and dropped, as Kafka warns that a supplied
    configuration "isn't a known config".
    """
    defaults: Mapping[str, Any] = getattr(client_class, "DEFAULT_CONFIG")
    out: dict[str, Any] = {}
    for name, value in props.items():
        if name in _SILENTLY_IGNORED:
            continue
        if name == "sasl.jaas.config" and _is_oauthbearer(props):
            # OAuthBearerLoginModule: kafka-python takes its tokens from a token provider
            out["sasl_oauth_token_provider"] = oauthbearer_token_provider(props)
            continue
        if name == "sasl.jaas.config" and _is_gssapi(props):
            _kafka_python_gssapi(props, out)
            continue
        if name == "sasl.jaas.config":
            # A Java client's login (PlainLoginModule / ScramLoginModule ``username`` and
            # ``password``) is kafka-python's sasl_plain_username / sasl_plain_password.
            from kafka_py.clients.common.security.jaas_config import client_credentials, parse_jaas_config

            try:
                credentials = client_credentials(parse_jaas_config(value))
            except ValueError as e:
                raise CommandError(f"Invalid value for configuration sasl.jaas.config: {e}") from None
            if credentials is None:
                raise CommandError("sasl.jaas.config names no username and password")
            out["sasl_plain_username"], out["sasl_plain_password"] = credentials
            continue
        if name in _SSL_FILE_CONFIGS:
            # PEM files (ssl.keystore.type / ssl.truststore.type PEM) as kafka-python reads them.
            out[_SSL_FILE_CONFIGS[name]] = value
            continue
        if name == "ssl.endpoint.identification.algorithm":
            # https (Kafka's default): the broker's certificate must name the host; empty: it need not.
            out["ssl_check_hostname"] = bool(value.strip())
            continue
        if name in ("ssl.keystore.type", "ssl.truststore.type", "ssl.keystore.password",
                    "ssl.truststore.password", "ssl.keystore.key", "ssl.keystore.certificate.chain",
                    "ssl.truststore.certificates"):
            continue  # read with the stores below
        key = _RENAMED_CLIENT_CONFIGS.get(name, name.replace(".", "_").replace("-", "_"))
        if key not in defaults:
            logger.warning("The configuration '%s' was supplied but isn't a known config.", name)
            continue
        if key == "bootstrap_servers":
            out[key] = [s.strip() for s in value.split(",") if s.strip()]
        elif key == "acks":
            text = value.strip().lower()
            out[key] = -1 if text == "all" else _coerce(name, text, 0)
        elif key == "compression_type":
            text = value.strip().lower()
            out[key] = None if text in ("", "none") else text
        elif key == "retries":
            out[key] = _coerce(name, value, 0)
        elif key in ("group_id", "client_id", "transactional_id", "group_instance_id"):
            out[key] = value
        elif defaults[key] is None and re.fullmatch(r"\s*-?\d+\s*", value):
            out[key] = int(value)  # optional sizes such as send_buffer_bytes default to None
        else:
            out[key] = _coerce(name, value, defaults[key])
    if _needs_ssl_context(props):
        # kafka-python reads PEM files only: JKS and PKCS12 stores, and inline PEM, become the
        # SSLContext it is handed instead.
        for keyword in (*_SSL_FILE_CONFIGS.values(), "ssl_check_hostname"):
            out.pop(keyword, None)
        out["ssl_context"] = client_ssl_context(props)
    return out


def _needs_ssl_context(props: Mapping[str, str]) -> bool:
    if (props.get("security.protocol") or "PLAINTEXT").strip().upper() not in ("SSL", "SASL_SSL"):
        return False
    if any(props.get(k) for k in ("ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.truststore.certificates")):
        return True
    return any((props.get(k) or "PEM").strip().upper() != "PEM" for k in ("ssl.keystore.type", "ssl.truststore.type"))


def client_ssl_context(props: Mapping[str, str]) -> Any:
    """The SSLContext of a tool's connections from the Java client's ``ssl.*`` properties:
    JKS, PKCS12 or PEM key and trust stores as kafka_py/clients/common/security/ssl_factory.py reads them for
    brokers, ``ssl.endpoint.identification.algorithm`` https by default as in Kafka's clients.
    CommandError naming the key for a value it cannot use."""
    from kafka_py.clients.common.security.listener_config import ListenerSecurityConfig
    from kafka_py.clients.common.security.ssl_factory import create_client_context
    from kafka_py.server.kafka_config import CONFIG_DEF
    from kafka_py.clients.common.config.config_def import ConfigException

    values: dict[str, Any] = {key: CONFIG_DEF.parse_value(config_key, config_key.default_value, False)
                              for key, config_key in CONFIG_DEF.config_keys.items()
                              if key.startswith("ssl.") and config_key.has_default}
    values["ssl.endpoint.identification.algorithm"] = "https"
    for key, value in props.items():
        if key.startswith("ssl.") and key in CONFIG_DEF.config_keys:
            try:
                values[key] = CONFIG_DEF.parse_value(CONFIG_DEF.config_keys[key], value, True)
            except ConfigException as e:
                raise CommandError(f"Invalid value {value} for configuration {key}: {e}") from None
    try:
        return create_client_context(ListenerSecurityConfig("command-config", {}, CONFIG_DEF, values))
    except ConfigException as e:
        raise CommandError(f"Invalid TLS configuration: {e}") from None
    except (OSError, ValueError) as e:
        raise CommandError(f"Unable to load the TLS key or trust store: {e}") from None


def _is_oauthbearer(props: Mapping[str, str]) -> bool:
    return (props.get("sasl.mechanism") or "").strip() == "OAUTHBEARER"


def _is_gssapi(props: Mapping[str, str]) -> bool:
    return (props.get("sasl.mechanism") or "").strip() == "GSSAPI"


def kerberos_client_login(props: Mapping[str, str]) -> Any:
    """The Kerberos login of a Java client's properties: the Krb5LoginModule entry of
    ``sasl.jaas.config`` (a keytab and principal, or ``useTicketCache=true`` for the tickets of
    ``kinit``) and ``sasl.kerberos.service.name``; its credentials are taken now, so
    CommandError says at once when there are none."""
    from kafka_py.clients.common.security.jaas_config import parse_jaas_config
    from kafka_py.clients.common.security.kerberos import KerberosClientLogin

    text = props.get("sasl.jaas.config")
    if not text:
        raise CommandError("sasl.mechanism GSSAPI needs sasl.jaas.config with com.sun.security.auth.module."
                           "Krb5LoginModule (useKeyTab=true keyTab=... principal=..., or useTicketCache=true)")
    try:
        login = KerberosClientLogin(parse_jaas_config(text), (props.get("sasl.kerberos.service.name") or "").strip()
                                    or None)
        login.login_initiator()
    except ImportError as e:
        raise CommandError(f"SASL/GSSAPI needs the gssapi package: {e}") from None
    except ValueError as e:
        raise CommandError(f"Invalid value for configuration sasl.jaas.config: SASL/GSSAPI cannot log in: {e}"
                           ) from None
    return login


def _kafka_python_gssapi(props: Mapping[str, str], out: dict[str, Any]) -> None:
    """kafka-python's GSSAPI takes its tickets from KRB5CCNAME: a keytab login's are written to
    a credential cache of this process's own, which KRB5CCNAME then names."""
    login = kerberos_client_login(props)
    if login.use_keytab:
        ccache = f"MEMORY:kafka-py-tool-{os.getpid()}"
        login.store_in(ccache)
        os.environ["KRB5CCNAME"] = ccache
    out["sasl_kerberos_service_name"] = login.service_name


def oauthbearer_login(props: Mapping[str, str]) -> Any:
    """The OAuthBearerLogin of a Java client's properties: the OAuthBearerLoginModule entry of
    ``sasl.jaas.config`` (``unsecuredLogin*`` options) through the unsecured login callback
    handler, or the class ``sasl.login.callback.handler.class`` names by dotted path. A first
    token is made now, so CommandError says at once when none can be."""
    from kafka_py.clients.common.security.jaas_config import parse_jaas_config
    from kafka_py.clients.common.security.oauthbearer import OAuthBearerLogin

    text = props.get("sasl.jaas.config")
    if not text:
        raise CommandError("sasl.mechanism OAUTHBEARER needs sasl.jaas.config with "
                           "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule")
    configs = {name: props[name] for name in ("sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter")
               if props.get(name)}
    try:
        login = OAuthBearerLogin.from_jaas(parse_jaas_config(text), configs,
                                           (props.get("sasl.login.callback.handler.class") or "").strip() or None)
        login.token()
    except Exception as e:  # noqa: BLE001 - any failure to make a token is a configuration error
        raise CommandError(f"Invalid value for configuration sasl.jaas.config: SASL/OAUTHBEARER cannot log in: {e}"
                           ) from None
    return login


def oauthbearer_token_provider(props: Mapping[str, str]) -> Any:
    """kafka-python's OAUTHBEARER token provider over ``oauthbearer_login(props)``."""
    try:
        from kafka.net.sasl.oauth import AbstractTokenProvider
    except ImportError:  # kafka-python 2.x
        from kafka.sasl.oauth import AbstractTokenProvider

    login = oauthbearer_login(props)

    class OAuthBearerTokenProvider(AbstractTokenProvider):
        def token(self) -> str:
            return login.token().value

        def extensions(self) -> dict[str, str]:
            return login.extensions()

    return OAuthBearerTokenProvider()


def admin_channel_builder(props: Mapping[str, str]) -> Any:
    """How a tool's own connection (kafka_py/clients/network_client.py) reaches a secured
    listener, from the admin client properties of ``--command-config``: ``security.protocol``,
    ``ssl.*`` (JKS, PKCS12 or PEM stores, ``ssl.endpoint.identification.algorithm``, https by
    default as in Kafka's clients), ``sasl.mechanism`` (PLAIN by default here) and the
    ``username``/``password`` of ``sasl.jaas.config`` (OAUTHBEARER's and GSSAPI's logins
    otherwise). None for PLAINTEXT; CommandError naming the key for a value it cannot use."""
    from kafka_py.core.cluster.broker import SecurityProtocol
    from kafka_py.network.channel_builders import SUPPORTED_SASL_MECHANISMS, ClientChannelBuilder
    from kafka_py.clients.common.security.jaas_config import client_credentials, parse_jaas_config

    name = (props.get("security.protocol") or "PLAINTEXT").strip().upper()
    try:
        protocol = SecurityProtocol[name]
    except KeyError:
        raise CommandError(f"Invalid value {props.get('security.protocol')} for configuration security.protocol: "
                           f"String must be one of: {', '.join(p.name for p in SecurityProtocol)}") from None
    if protocol is SecurityProtocol.PLAINTEXT:
        return None
    ssl_context = None
    if protocol in (SecurityProtocol.SSL, SecurityProtocol.SASL_SSL):
        ssl_context = client_ssl_context(props)
    mechanism = username = password = extensions = None
    if protocol in (SecurityProtocol.SASL_PLAINTEXT, SecurityProtocol.SASL_SSL):
        mechanism = (props.get("sasl.mechanism") or "PLAIN").strip()
        if mechanism not in SUPPORTED_SASL_MECHANISMS:
            raise CommandError(f"Invalid value {mechanism} for configuration sasl.mechanism: kafka-py's tools support "
                               f"{', '.join(SUPPORTED_SASL_MECHANISMS)}")
        if mechanism in ("OAUTHBEARER", "GSSAPI"):
            builder = ClientChannelBuilder("command-config", protocol, ssl_context, mechanism)
            builder.login = oauthbearer_login(props) if mechanism == "OAUTHBEARER" else kerberos_client_login(props)
            return builder
        text = props.get("sasl.jaas.config")
        if not text:
            raise CommandError(f"security.protocol {protocol.name} needs sasl.jaas.config with a username and "
                               "password")
        try:
            entries = parse_jaas_config(text)
            credentials = client_credentials(entries)
        except ValueError as e:
            raise CommandError(f"Invalid value for configuration sasl.jaas.config: {e}") from None
        if credentials is None:
            raise CommandError("sasl.jaas.config names no username and password")
        username, password = credentials
        # ScramLoginModule's tokenauth="true": the username is a delegation token's id, the
        # password its HMAC, sent with the SCRAM extension tokenauth=true
        if any(e.options.get("tokenauth", "").strip().lower() == "true" for e in entries):
            extensions = {"tokenauth": "true"}
    return ClientChannelBuilder("command-config", protocol, ssl_context, mechanism, username, password, extensions)


def open_network_client(bootstrap_server: str, props: Mapping[str, str], client_id: str,
                        request_timeout_ms: int = 30000, connect_timeout_ms: int = 15000) -> Any:
    """A connected kafka_py NetworkClient to the first ``--bootstrap-server`` entry, secured as
    the ``--command-config`` properties say (``admin_channel_builder``), for the requests the
    tools send themselves (client quotas, SCRAM credentials). CommandError when the broker
    cannot be reached or refuses the login; the caller closes the client."""
    from kafka_py.core.cluster.broker import Node
    from kafka_py.clients.network_client import NetworkClient
    from kafka_py.clients.network_client_utils import await_ready

    builder = admin_channel_builder(props)
    host, _, port = bootstrap_server.split(",")[0].strip().rpartition(":")
    client = NetworkClient(Node(-1, host.strip("[]"), int(port)), client_id, request_timeout_ms,
                           channel_builder=builder)
    try:
        if not await_ready(client, connect_timeout_ms):
            raise CommandError(f"Could not connect to {bootstrap_server} within {connect_timeout_ms} ms")
    except CommandError:
        client.close()
        raise
    except Exception as e:
        client.close()
        raise CommandError(f"Could not connect to {bootstrap_server}: {describe_exception(e)}") from None
    return client


@dataclass(frozen=True)
class AdminTarget:
    """Where a tool sends its own requests: ``--bootstrap-server`` and the ``--command-config``
    properties that secure the connection."""

    bootstrap_server: str
    command_config: Mapping[str, str]

    def send(self, client_id: str, api_key: Any, api_version: int, body: Any) -> Any:
        """One request on a fresh connection; the response body."""
        from kafka_py.clients.network_client_utils import send_and_receive

        client = open_network_client(self.bootstrap_server, self.command_config, client_id)
        try:
            return send_and_receive(client, api_key, api_version, body).response_body
        finally:
            client.close()


def validate_bootstrap_servers(servers: str, option: str = "--bootstrap-server") -> list[str]:
    """ToolsUtils.validatePortOrDie: every entry must be ``host:port`` with a numeric port."""
    entries = [s.strip() for s in servers.split(",") if s.strip()]
    valid = bool(entries) and all(re.fullmatch(r".+:\d+", s) for s in entries)
    if not valid:
        raise click.UsageError(
            f"Please provide valid host:port like host1:9091,host2:9092 for {option} (got '{servers}')")
    return entries


def validate_port_or_die(servers: str) -> list[str]:
    """ToolsUtils.validatePortOrDie as Kafka's tools end on it: its message and the tool's help
    on stderr, exit status 1 (``validate_bootstrap_servers`` is the click usage error)."""
    try:
        return validate_bootstrap_servers(servers)
    except click.UsageError:
        print_usage_and_die("Please provide valid host:port like host1:9091,host2:9092\n ")


class _LoginRefusalWatch(logging.Handler):
    """Catches the SASL refusal kafka-python's connection manager logs while a client bootstraps.

    The client itself retries a refused login until its bootstrap timeout and then reports only
    that no broker answered; Kafka's clients fail at once with the authentication error, and so
    do the tools here."""

    LOGGER = "kafka.net.manager"

    def __init__(self) -> None:
        super().__init__(logging.WARNING)  # a refused bootstrap is logged as a warning
        self.refusal: BaseException | None = None

    def emit(self, record: logging.LogRecord) -> None:
        from kafka.errors import SaslAuthenticationFailedError

        for arg in record.args if isinstance(record.args, tuple) else ():
            if isinstance(arg, SaslAuthenticationFailedError):
                self.refusal = arg

    @contextmanager
    def watching(self) -> Iterator["_LoginRefusalWatch"]:
        logger = logging.getLogger(self.LOGGER)
        level, propagate = logger.level, logger.propagate
        if not logger.isEnabledFor(logging.WARNING):
            # the tools keep kafka-python quiet: hear its warnings here without printing them
            logger.setLevel(logging.WARNING)
            logger.propagate = False
        logger.addHandler(self)
        try:
            yield self
        finally:
            logger.removeHandler(self)
            logger.setLevel(level)
            logger.propagate = propagate


def _servers(configs: Mapping[str, Any]) -> str:
    servers = configs.get("bootstrap_servers")
    return ",".join(servers) if isinstance(servers, (list, tuple)) else str(servers)


def _refused_login(configs: Mapping[str, Any], refusal: BaseException) -> str:
    """As the tools' own connections word it: ``SaslAuthenticationException: <the broker's reason>``."""
    reason = str(refusal.args[0] if refusal.args else refusal)
    prefix = f"{type(refusal).__name__}: "
    reason = reason[len(prefix):] if reason.startswith(prefix) else reason
    return f"Could not connect to {_servers(configs)}: SaslAuthenticationException: {reason}"


def connect(factory: Callable[..., Any], configs: Mapping[str, Any]) -> Any:
    """Create a kafka-python client, reporting an unreachable cluster or a refused login as a
    CommandError. The client is made on a thread of its own so that a refused login ends the
    wait at once (the tool exits right after, taking that thread with it)."""
    import kafka.errors as kafka_errors

    outcome: dict[str, Any] = {}
    made = threading.Event()

    def create() -> None:
        try:
            outcome["client"] = factory(**configs)
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            outcome["error"] = e
        finally:
            made.set()

    with _LoginRefusalWatch().watching() as watch:
        threading.Thread(target=create, name="kafka-client-bootstrap", daemon=True).start()
        while not made.wait(0.05):
            if watch.refusal is not None:
                raise CommandError(_refused_login(configs, watch.refusal))
    if "client" in outcome:
        return outcome["client"]
    e = outcome["error"]
    if isinstance(e, (getattr(kafka_errors, "NoBrokersAvailable", kafka_errors.KafkaTimeoutError),
                      kafka_errors.KafkaTimeoutError)):
        if watch.refusal is not None:
            raise CommandError(_refused_login(configs, watch.refusal)) from e
        timeout = configs.get("bootstrap_timeout_ms", 30000)
        raise CommandError(
            f"Unable to connect to the bootstrap server(s) {_servers(configs)}: no broker answered within "
            f"{timeout} ms") from e
    if isinstance(e, kafka_errors.KafkaConfigurationError):
        raise CommandError(f"Invalid client configuration: {describe_exception(e)}") from e
    raise e


def expand_multi_value_options(args: Sequence[str], names: Iterable[str]) -> list[str]:
    """Rewrite argparse-style ``--opt a b c`` (nargs '+') as ``--opt a --opt b --opt c``.

    Kafka's ProducerPerformance takes ``--producer-props k1=v1 k2=v2``; click options take
    one value each, so the values up to the next ``-``-prefixed token are spread out.
    """
    wanted = set(names)
    out: list[str] = []
    current: str | None = None
    for arg in args:
        if arg.startswith("-"):
            head, sep, value = arg.partition("=")
            if head in wanted:
                if sep:
                    out += [head, value]
                current = head
                continue
            current = None
            out.append(arg)
        elif current is not None:
            out += [current, arg]
        else:
            out.append(arg)
    return out


# -- progress --------------------------------------------------------------------------------

def want_progress_bar(stdout: Any = None, stderr: Any = None) -> bool:
    """A bar on stderr only when stderr is a terminal and stdout is not that terminal too
    (a bar interleaved with the records or report lines on one screen would garble both)."""
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    try:
        return bool(stderr.isatty()) and not bool(stdout.isatty())
    except (AttributeError, ValueError):
        return False


class _NoProgress:
    def update(self, n: int) -> None:
        pass


@contextmanager
def progress_bar(total: int | None, label: str, enabled: bool | None = None) -> Iterator[Any]:
    """A click progress bar on stderr (``.update(n)``), or a no-op when not wanted."""
    if enabled is None:
        enabled = want_progress_bar()
    if not enabled or not total or total <= 0:
        yield _NoProgress()
        return
    with click.progressbar(length=total, label=label, file=sys.stderr, show_eta=True,
                           show_percent=True, show_pos=True) as bar:
        yield bar


# -- raw admin requests through kafka-python's connections -----------------------------------

@dataclass(frozen=True, slots=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: str


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One entry of a DescribeConfigs answer (Kafka's admin ConfigEntry)."""

    name: str
    value: str | None
    source: str
    is_sensitive: bool
    read_only: bool
    synonyms: tuple[ConfigSynonym, ...] = ()

    @property
    def is_default(self) -> bool:
        return self.source == "DEFAULT_CONFIG"


def send_admin_request(admin: Any, request: Any, node_id: int | None = None) -> Any:
    """Send ``request`` on the admin client's connections; returns the decoded response.

    KafkaAdminClient's public methods drop per-resource error codes of DescribeConfigs
    and refuse a broker resource named "" (the cluster-wide default), both of which the
    config tools need.
    """
    manager = admin._manager

    async def _send() -> Any:
        return await manager.send(request, node_id=node_id)

    return manager.run(_send)


def describe_configs(admin: Any, resource_type: int, name: str,
                     include_synonyms: bool = True) -> list[ConfigEntry]:
    """Every config entry of one topic or broker resource; CommandError on an error code."""
    from kafka.protocol.admin import DescribeConfigsRequest

    request = DescribeConfigsRequest(
        resources=[(resource_type, name, None)], include_synonyms=include_synonyms,
        min_version=1)
    node_id = None
    if resource_type == BROKER_RESOURCE and name:
        node_id = int(name)
    response = send_admin_request(admin, request, node_id)
    entries: list[ConfigEntry] = []
    for result in response.results:
        if result.error_code:
            raise CommandError(error_message(result.error_code, result.error_message))
        for config in result.configs:
            synonyms = tuple(
                ConfigSynonym(s.name, s.value, CONFIG_SOURCES.get(s.source, "UNKNOWN"))
                for s in (getattr(config, "synonyms", None) or ()))
            entries.append(ConfigEntry(
                name=config.name, value=config.value,
                source=CONFIG_SOURCES.get(config.config_source, "UNKNOWN"),
                is_sensitive=bool(config.is_sensitive), read_only=bool(config.read_only),
                synonyms=synonyms))
    return entries


def incremental_alter_configs(admin: Any, resource_type: int, name: str,
                              ops: Sequence[tuple[str, int, str | None]]) -> None:
    """IncrementalAlterConfigs of one resource; CommandError with the broker's message."""
    from kafka.protocol.admin import IncrementalAlterConfigsRequest

    request = IncrementalAlterConfigsRequest(
        resources=[(resource_type, name, list(ops))], validate_only=False)
    node_id = None
    if resource_type == BROKER_RESOURCE and name:
        node_id = int(name)
    response = send_admin_request(admin, request, node_id)
    for result in response.responses:
        if result.error_code:
            raise CommandError(error_message(result.error_code, result.error_message))


# -- metrics ----------------------------------------------------------------------------------

def format_metrics(metrics: Mapping[str, Any]) -> list[str]:
    """ToolsUtils.printMetrics: "group:name:{tags}" names sorted, floats with 3 decimals.

    ``metrics`` maps the merged name to its value; ``merged_metric_names`` builds that
    from kafka-python's raw metrics.
    """
    if not metrics:
        return []
    width = max(len(name) for name in metrics)
    lines = ["", f"{'Metric Name':<{width}}   Value"]
    for name in sorted(metrics):
        value = metrics[name]
        if isinstance(value, float):
            lines.append(f"{name:<{width}} : {value:.3f}")
        else:
            lines.append(f"{name:<{width}} : {value}")
    return lines


def merged_metric_names(raw_metrics: Mapping[Any, Any] | None) -> dict[str, Any]:
    """kafka-python's ``metrics(raw=True)`` as Kafka's merged names, tags as {k=v, ...}."""
    merged: dict[str, Any] = {}
    for metric_name, metric in (raw_metrics or {}).items():
        tags = ", ".join(f"{k}={v}" for k, v in sorted((metric_name.tags or {}).items()))
        try:
            value = metric.value()
        except Exception:  # a metric whose measurement fails is shown, not fatal
            value = float("nan")
        merged[f"{metric_name.group}:{metric_name.name}:{{{tags}}}"] = value
    return merged


def cluster_brokers(admin: Any) -> dict[int, tuple[str, int]]:
    """Live brokers (id → host, port) from a Metadata request, as Kafka 2.8's
    Admin.describeCluster does. (kafka-python's describe_cluster reads DescribeCluster
    responses of v1+ only and fails on the v0 a 2.8 broker sends.)"""
    from kafka.protocol.metadata import MetadataRequest

    response = send_admin_request(admin, MetadataRequest(topics=[], allow_auto_topic_creation=False))
    return {b.node_id: (b.host, b.port) for b in response.brokers}
