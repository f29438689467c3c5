"""SASL/GSSAPI (Kerberos) on a real broker against a real MIT KDC (tests/security/mini_kdc.py):
kafka-python producing and consuming with a ticket, principals mapped to user names by
``sasl.kerberos.principal.to.local.rules``, tickets for another service and garbage tokens
refused (SASL_AUTHENTICATION_FAILED, the connection closed, counted in
failed-authentication-total) while the broker keeps serving others, and startup errors that
name their key.

One KDC and one ZooKeeper-mode broker for the module: a PLAINTEXT listener (the harness) and a
SASL_PLAINTEXT listener KERBEROS offering GSSAPI as kafka/localhost@KAFKA-PY.TEST. Clients
name the service host ``localhost`` (kafka-python's sasl_kerberos_domain_name). One test adds
a second broker with the same listeners, the two replicating over GSSAPI; another a KRaft
combined node whose SASL_SSL listener takes GSSAPI as kraft/localhost.
"""
from __future__ import annotations

import os
import socket
import struct
import uuid

import pytest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import decode_response, encode_request, request_schema
from tests.integration.broker_harness import BrokerProcess, free_port, unique_chroot
from tests.security.mini_kdc import MiniKdc, missing_tools

gssapi = pytest.importorskip("gssapi", reason="SASL/GSSAPI needs python-gssapi (the setup.cfg test extra)")
if missing_tools():
    pytest.skip(f"MIT Kerberos' {', '.join(missing_tools())} not installed (Debian's krb5-kdc, krb5-admin-server "
                "and krb5-user; bin/run-tests.sh installs them as root)", allow_module_level=True)

KRB5_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
RULES = ("RULE:[1:$1@$0](bob@KAFKA-PY.TEST)s/bob@.*/robert/,"
         "RULE:[2:$1_$2@$0](.*@KAFKA-PY.TEST)s/@.*//,"
         "DEFAULT")
INVALID_CREDENTIALS = ("Authentication failed during authentication due to invalid credentials with SASL "
                       "mechanism GSSAPI")


class Kerberos:
    def __init__(self, kdc: MiniKdc, broker: BrokerProcess, port: int, metrics_port: int) -> None:
        self.kdc = kdc
        self.broker = broker
        self.port = port
        self.metrics_port = metrics_port
        self.ccaches: dict[str, str] = {}

    def use(self, user: str) -> None:
        """This process's Kerberos clients take ``user``'s tickets from now on."""
        os.environ["KRB5CCNAME"] = self.ccaches[user]


@pytest.fixture(scope="module")
def kerberos(zookeeper, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("kdc")
    kdc = MiniKdc(workdir).start()
    saved = {key: os.environ.get(key) for key in (*kdc.env, "KRB5CCNAME")}
    try:
        keytab = kdc.create_principal("kafka/localhost", workdir / "kafka.keytab")
        internal_keytab = kdc.create_principal("kafka/127.0.0.1", workdir / "internal.keytab")
        kdc.create_principal("other/localhost", workdir / "other.keytab")
        port, internal_port, metrics_port = free_port(), free_port(), free_port()
        broker = BrokerProcess(tmp_path_factory.mktemp("gssapi-broker"), zookeeper.connect_string, unique_chroot(),
                               env=kdc.env)
        broker.overrides.update({
            "listeners": f"PLAINTEXT://127.0.0.1:{broker.port},KERBEROS://127.0.0.1:{port},"
                         f"INTERNAL://127.0.0.1:{internal_port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,KERBEROS:SASL_PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
            # the controller's channel to the broker goes over INTERNAL, as kafka/127.0.0.1
            "inter.broker.listener.name": "INTERNAL",
            "sasl.mechanism.inter.broker.protocol": "GSSAPI",
            "listener.name.internal.gssapi.sasl.jaas.config":
                f'{KRB5_MODULE} required useKeyTab=true storeKey=true keyTab="{internal_keytab}" '
                f'principal="kafka/127.0.0.1@{kdc.realm}";',
            "sasl.enabled.mechanisms": "GSSAPI",
            "sasl.kerberos.service.name": "kafka",
            "listener.name.kerberos.gssapi.sasl.jaas.config":
                f'{KRB5_MODULE} required useKeyTab=true storeKey=true keyTab="{keytab}" '
                f'principal="kafka/localhost@{kdc.realm}";',
            "listener.name.kerberos.sasl.kerberos.principal.to.local.rules": RULES,
            # CreateDelegationToken answers with the principal a connection authenticated as
            "delegation.token.secret.key": "gssapi-test-secret",
            "connection.failed.authentication.delay.ms": "50",
            "kafka.py.metrics.prometheus.port": str(metrics_port),
            "kafka.py.metrics.prometheus.host": "127.0.0.1",
        })
        broker.write_config()
        broker.start()
        env = Kerberos(kdc, broker, port, metrics_port)
        for user in ("alice", "bob", "carol/admin"):
            client_keytab = workdir / f"{user.replace('/', '_')}.keytab"
            kdc.create_principal(user, client_keytab)
            env.ccaches[user] = kdc.kinit(user, client_keytab, workdir / f"{user.replace('/', '_')}.ccache")
        os.environ.update({k: v for k, v in kdc.env.items() if k != "KRB5_KDC_PROFILE"})
        yield env
        if broker.running:
            assert broker.stop() == 0, broker.tail()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        kdc.stop()


class GssapiConnection:
    """A SASL/GSSAPI exchange driven by hand (SaslHandshake v1, SaslAuthenticate v2), as RFC 4752's
    client: the context's tokens, then the answer to the broker's security layer offer."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=15)
        self.correlation = 0

    def request(self, api: ApiKeys, version: int, body):
        self.correlation += 1
        header = RequestHeader(api, version, self.correlation, "gssapi-test", api.request_header_version(version))
        self.sock.sendall(encode_request(header, body))
        size = struct.unpack(">i", self._exactly(4))[0]
        return decode_response(self._exactly(size), api, version)[1]

    def _exactly(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed by the broker")
            data += chunk
        return data

    def handshake(self) -> None:
        answer = self.request(ApiKeys.SASL_HANDSHAKE, 1, request_schema(ApiKeys.SASL_HANDSHAKE, 1)(mechanism="GSSAPI"))
        assert Errors.for_code(int(answer.error_code)) is Errors.NONE
        assert "GSSAPI" in answer.mechanisms

    def authenticate(self, auth_bytes: bytes):
        return self.request(ApiKeys.SASL_AUTHENTICATE, 2,
                            request_schema(ApiKeys.SASL_AUTHENTICATE, 2)(auth_bytes=auth_bytes))

    def login(self, service: str = "kafka") -> None:
        """The whole exchange for the service ``service@localhost`` with this process's tickets."""
        self.handshake()
        name = gssapi.Name(f"{service}@localhost", name_type=gssapi.NameType.hostbased_service)
        context = gssapi.SecurityContext(name=name, usage="initiate")
        token = context.step(None)
        for _ in range(10):  # the context takes one or two round trips
            answer = self.authenticate(token)
            assert Errors.for_code(int(answer.error_code)) is Errors.NONE, answer.error_message
            if context.complete:
                offer = context.unwrap(bytes(answer.auth_bytes)).message
                assert offer[0] & 1, "the broker offers no security layer"
                answer = self.authenticate(context.wrap(b"\x01" + offer[1:4], False).message)
                assert Errors.for_code(int(answer.error_code)) is Errors.NONE, answer.error_message
                return
            token = context.step(bytes(answer.auth_bytes)) or b""
        raise AssertionError("the GSS-API context was not established in 10 rounds")

    def refused(self, auth_bytes: bytes) -> str:
        """The broker's SASL_AUTHENTICATION_FAILED message for ``auth_bytes``; the connection is then closed."""
        answer = self.authenticate(auth_bytes)
        assert Errors.for_code(int(answer.error_code)) is Errors.SASL_AUTHENTICATION_FAILED
        assert self.closed_by_broker()
        return answer.error_message

    def owner(self) -> str:
        """Who the connection authenticated as: the owner of a delegation token it creates."""
        schema = request_schema(ApiKeys.CREATE_DELEGATION_TOKEN, 2)
        answer = self.request(ApiKeys.CREATE_DELEGATION_TOKEN, 2,
                              build_entity(schema, {"renewers": [], "max_lifetime": -1}))
        assert Errors.for_code(int(answer.error_code)) is Errors.NONE
        return f"{answer.principal_type}:{answer.principal_name}"

    def closed_by_broker(self) -> bool:
        try:
            self.request(ApiKeys.METADATA, 9, request_schema(ApiKeys.METADATA, 9)(
                topics=(), allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
                include_topic_authorized_operations=False))
        except (ConnectionError, OSError):
            return True
        return False

    def __enter__(self) -> "GssapiConnection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def _failed_authentications(kerberos: Kerberos) -> float:
    from tests.integration.test_metrics import scrape

    name = "kafka_server_socket_server_metrics_failed_authentication_total"
    return sum(v for (n, labels), v in scrape(kerberos.metrics_port).items()
               if n == name and ("listener", "KERBEROS") in labels and v == v)


def test_the_broker_logs_in_to_its_own_inter_broker_listener_with_its_keytab(kerberos) -> None:
    # UpdateMetadata and LeaderAndIsr reach the broker over INTERNAL, so a topic led here proves
    # the broker's own GSSAPI login (its ticket from internal.keytab) was accepted.
    from kafka import KafkaProducer

    from tests.integration.broker_harness import wait_until

    producer = KafkaProducer(bootstrap_servers=kerberos.broker.bootstrap, acks="all")
    try:
        producer.send(f"kerberos-ib-{uuid.uuid4().hex[:6]}", b"over-plaintext").get(timeout=60)
    finally:
        producer.close(timeout=30)
    wait_until(lambda: "authenticationID=kafka/127.0.0.1@KAFKA-PY.TEST" in kerberos.broker.output(), 30,
               lambda: kerberos.broker.tail())


def test_kafka_python_produces_and_consumes_with_a_ticket(kerberos) -> None:
    kerberos.use("alice")
    security = {"bootstrap_servers": f"127.0.0.1:{kerberos.port}", "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "GSSAPI", "sasl_kerberos_service_name": "kafka",
                "sasl_kerberos_domain_name": "localhost"}
    assert _produced_and_read_back(security, f"kerberos-{uuid.uuid4().hex[:8]}", 5)


def test_two_brokers_replicate_over_gssapi(kerberos, tmp_path_factory) -> None:
    """A second broker joins the module's broker with the same listeners and
    sasl.mechanism.inter.broker.protocol=GSSAPI (both on 127.0.0.1, so both log in from the keytab
    of kafka/127.0.0.1): the controller's channel to it, and each broker's fetcher from the other,
    authenticate with Kerberos. A topic with two replicas replicates, and kafka-python reads it with
    a ticket from both leaders."""
    from kafka import KafkaProducer

    from tests.integration.broker_harness import wait_until
    from tests.integration.test_replication import Cluster, log_end_offset, wait_replicas_identical

    first = kerberos.broker
    second = BrokerProcess(tmp_path_factory.mktemp("gssapi-broker-1"), first.zk_hosts, first.chroot, 1,
                           env=kerberos.kdc.env)
    second.overrides.update({k: v for k, v in first.overrides.items()
                             if k not in ("listeners", "kafka.py.metrics.prometheus.port")})
    second.overrides["listeners"] = (f"PLAINTEXT://127.0.0.1:{second.port},KERBEROS://127.0.0.1:{free_port()},"
                                     f"INTERNAL://127.0.0.1:{free_port()}")
    second.write_config()
    cluster = Cluster([first, second])
    try:
        # its start waits on the controller's (broker 0's) UpdateMetadata over GSSAPI
        second.start()
        topic = f"kerberos-rf2-{uuid.uuid4().hex[:6]}"
        # one partition led by each broker, the other its follower
        cluster.create_topic(topic, {0: [1, 0], 1: [0, 1]})
        for p in (0, 1):
            cluster.wait_state(topic, lambda s: sorted(s["isr"]) == [0, 1], f"{topic}-{p}: ISR of both", p)
        kerberos.use("alice")
        security = {"bootstrap_servers": f"127.0.0.1:{kerberos.port}", "security_protocol": "SASL_PLAINTEXT",
                    "sasl_mechanism": "GSSAPI", "sasl_kerberos_service_name": "kafka",
                    "sasl_kerberos_domain_name": "localhost"}
        producer = KafkaProducer(**security, acks="all")
        try:
            for p in (0, 1):
                for i in range(20):
                    producer.send(topic, f"p{p}-{i}".encode(), partition=p).get(timeout=30)
        finally:
            producer.close(timeout=10)
        for p in (0, 1):
            wait_replicas_identical(cluster, topic, ids=(0, 1), partition=p)
            assert log_end_offset(first, topic, p) == log_end_offset(second, topic, p) == 20
        assert _read_back(security, topic, 40) == sorted(f"p{p}-{i}".encode() for p in (0, 1) for i in range(20))
        # broker 1's INTERNAL listener took broker 0's Kerberos login (its controller channel and fetcher)
        wait_until(lambda: "authenticationID=kafka/127.0.0.1@KAFKA-PY.TEST" in second.output(), 30,
                   lambda: second.tail())
        assert "failed authentication" not in first.output() + second.output()
    finally:
        if second.running:
            assert second.stop() == 0, second.tail()
        cluster.close()


def _read_back(security: dict, topic: str, count: int) -> list[bytes]:
    """Up to ``count`` values a consumer of a new group reads from ``topic``, sorted."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, **security, auto_offset_reset="earliest", consumer_timeout_ms=10_000,
                             group_id=f"kerberos-group-{uuid.uuid4().hex[:6]}")
    try:
        return sorted(record.value for _, record in zip(range(count), consumer))
    finally:
        consumer.close()


def _produced_and_read_back(security: dict, topic: str, count: int) -> bool:
    """kafka-python writes ``count`` records to ``topic`` and a consumer of a new group reads
    them back, both with ``security``: whether it read exactly those."""
    from kafka import KafkaConsumer, KafkaProducer

    producer = KafkaProducer(**security, acks="all")
    try:
        for i in range(count):
            producer.send(topic, f"record-{i}".encode()).get(timeout=30)
    finally:
        producer.close(timeout=10)
    consumer = KafkaConsumer(topic, **security, auto_offset_reset="earliest", consumer_timeout_ms=10_000,
                             group_id=f"kerberos-group-{uuid.uuid4().hex[:6]}")
    try:
        values = [record.value for _, record in zip(range(count), consumer)]
    finally:
        consumer.close()
    return values == [f"record-{i}".encode() for i in range(count)]


def test_a_kraft_node_serves_kerberos_over_sasl_ssl(kerberos, request, tmp_path) -> None:
    """A KRaft combined node with a SASL_SSL listener taking GSSAPI under a service name of its
    own: kafka-python logs in with a ticket over TLS, produces and consumes."""
    from tests.integration.conftest import new_broker
    from tests.integration.kraft_harness import listener_overrides
    from tests.security.certs import make_pki

    pki = make_pki(tmp_path / "pki")
    keytab = kerberos.kdc.create_principal("kraft/localhost", tmp_path / "kraft.keytab")
    port = free_port()
    node = new_broker(request, "kraft", tmp_path / "node", env=kerberos.kdc.env)
    node.overrides.update(listener_overrides(node, {"SECURED": ("SASL_SSL", port)}))
    node.overrides.update({
        "sasl.enabled.mechanisms": "GSSAPI",
        "listener.name.secured.sasl.kerberos.service.name": "kraft",
        "listener.name.secured.gssapi.sasl.jaas.config":
            f'{KRB5_MODULE} required useKeyTab=true storeKey=true keyTab="{keytab}" '
            f'principal="kraft/localhost@{kerberos.kdc.realm}";',
        "listener.name.secured.ssl.keystore.type": "PEM",
        "listener.name.secured.ssl.keystore.location": str(pki.server_keystore),
    })
    node.write_config()
    node.start()
    try:
        kerberos.use("alice")
        security = {"bootstrap_servers": f"localhost:{port}", "security_protocol": "SASL_SSL",
                    "ssl_cafile": str(pki.ca_cert), "sasl_mechanism": "GSSAPI",
                    "sasl_kerberos_service_name": "kraft", "sasl_kerberos_domain_name": "localhost"}
        assert _produced_and_read_back(security, f"kraft-kerberos-{uuid.uuid4().hex[:8]}", 3)
    finally:
        if node.running:
            assert node.stop() == 0, node.tail()


def test_the_tools_log_in_with_a_keytab_or_the_ticket_cache(kerberos, tmp_path) -> None:
    """--command-config with Krb5LoginModule, as a Java client's: kafka-topics.sh (through
    kafka-python) with alice's keytab, kafka-configs.sh (the tools' own client) with the tickets
    bob's kinit left; without tickets, a one-line error that says so."""
    import subprocess

    from tests.integration.broker_harness import ROOT

    # INTERNAL: the service is kafka/127.0.0.1, the host every client connects to here
    internal = next(int(entry.rsplit(":", 1)[1]) for entry in kerberos.broker.overrides["listeners"].split(",")
                    if entry.startswith("INTERNAL://"))
    server = f"127.0.0.1:{internal}"

    def command_config(name: str, jaas: str) -> str:
        path = tmp_path / f"{name}.properties"
        path.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"
                        f"sasl.jaas.config={KRB5_MODULE} required {jaas};\n")
        return str(path)

    def tool(script: str, *args: str, ccache: str = "FILE:/nonexistent") -> subprocess.CompletedProcess:
        env = dict(os.environ, **kerberos.kdc.env, KRB5CCNAME=ccache)
        return subprocess.run([str(ROOT / "bin" / script), *args], capture_output=True, text=True, timeout=120,
                              env=env)

    keytab = command_config("keytab", f'useKeyTab=true keyTab="{kerberos.kdc.workdir / "alice.keytab"}" '
                                      f'principal="alice@{kerberos.kdc.realm}"')
    topic = f"kerberos-tool-{uuid.uuid4().hex[:6]}"
    created = tool("kafka-topics.sh", "--bootstrap-server", server, "--command-config", keytab, "--create",
                   "--topic", topic, "--partitions", "1")
    assert created.returncode == 0, created.stdout + created.stderr
    listed = tool("kafka-topics.sh", "--bootstrap-server", server, "--command-config", keytab, "--list")
    assert topic in listed.stdout.split(), listed.stdout + listed.stderr

    cache = command_config("cache", "useTicketCache=true")
    described = tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", cache, "--describe",
                     "--entity-type", "users", ccache=kerberos.ccaches["bob"])
    assert described.returncode == 0, described.stdout + described.stderr

    no_tickets = tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", cache, "--describe",
                      "--entity-type", "users")
    assert no_tickets.returncode != 0
    assert "kinit first" in no_tickets.stderr and "Traceback" not in no_tickets.stderr, no_tickets.stderr


def test_principals_map_to_user_names_by_the_listener_rules(kerberos) -> None:
    expected = {"alice": "User:alice",  # DEFAULT: a principal of the default realm is its primary
                "bob": "User:robert",  # the first rule renames bob
                "carol/admin": "User:carol_admin"}  # two components joined by the second rule
    for user, principal in expected.items():
        kerberos.use(user)
        with GssapiConnection(kerberos.port) as connection:
            connection.login()
            assert connection.owner() == principal


def test_a_kafka_0_9_client_authenticates_without_a_handshake(kerberos) -> None:
    """Kafka 0.9's clients send their first GSSAPI token as the first frame, with no
    SaslHandshake: raw size-prefixed tokens both ways, then Kafka requests."""
    kerberos.use("bob")
    with GssapiConnection(kerberos.port) as connection:
        def exchange(token: bytes) -> bytes:
            connection.sock.sendall(struct.pack(">i", len(token)) + token)
            return connection._exactly(struct.unpack(">i", connection._exactly(4))[0])

        context = gssapi.SecurityContext(name=gssapi.Name("kafka@localhost",
                                                          name_type=gssapi.NameType.hostbased_service),
                                         usage="initiate")
        challenge = exchange(context.step(None))
        for _ in range(10):
            if context.complete:
                break
            token = context.step(challenge) or b""
            challenge = exchange(token)
        assert context.complete
        offer = context.unwrap(challenge).message
        assert exchange(context.wrap(b"\x01" + offer[1:4], False).message) == b""
        assert connection.owner() == "User:robert"


def test_bad_tickets_and_tokens_are_refused_and_counted(kerberos) -> None:
    kerberos.use("alice")
    before = _failed_authentications(kerberos)
    # A valid ticket, but for another service: the broker's keytab has no key to read it.
    with GssapiConnection(kerberos.port) as connection:
        connection.handshake()
        other = gssapi.SecurityContext(name=gssapi.Name("other@localhost", name_type=gssapi.NameType.hostbased_service),
                                       usage="initiate")
        assert connection.refused(other.step(None)) == INVALID_CREDENTIALS
    # Garbage, and an empty first token.
    for token in (b"\x60\x05garbage-not-a-gss-token", b""):
        with GssapiConnection(kerberos.port) as connection:
            connection.handshake()
            assert connection.refused(token) == INVALID_CREDENTIALS
    # A good context, then a security layer answer that is not wrapped by it.
    with GssapiConnection(kerberos.port) as connection:
        connection.handshake()
        context = gssapi.SecurityContext(name=gssapi.Name("kafka@localhost",
                                                          name_type=gssapi.NameType.hostbased_service),
                                         usage="initiate")
        answer = connection.authenticate(context.step(None))
        assert Errors.for_code(int(answer.error_code)) is Errors.NONE
        context.step(bytes(answer.auth_bytes))
        assert context.complete
        assert connection.refused(b"\x01\x00\x00\x00") == INVALID_CREDENTIALS
    # SaslHandshake v0: raw tokens without Kafka framing; garbage just closes the connection.
    with socket.create_connection(("127.0.0.1", kerberos.port), timeout=15) as sock:
        header = RequestHeader(ApiKeys.SASL_HANDSHAKE, 0, 1, "gssapi-test",
                               ApiKeys.SASL_HANDSHAKE.request_header_version(0))
        sock.sendall(encode_request(header, request_schema(ApiKeys.SASL_HANDSHAKE, 0)(mechanism="GSSAPI")))
        assert sock.recv(4)
        sock.recv(65536)
        sock.sendall(struct.pack(">i", 9) + b"not-a-gss")
        received = b""
        for _ in range(10):
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        assert received == b""
    from tests.integration.broker_harness import wait_until
    wait_until(lambda: _failed_authentications(kerberos) - before == 5, 30,
               lambda: f"failed-authentication-total went {before} -> {_failed_authentications(kerberos)}")
    # The broker still serves a good client.
    with GssapiConnection(kerberos.port) as connection:
        connection.login()
        assert connection.owner() == "User:alice"
    assert kerberos.broker.running


def test_startup_errors_name_the_key(kerberos, tmp_path) -> None:
    from kafka_py.network.socket_server import SocketServer
    from kafka_py.server.kafka_config import KafkaConfig
    from kafka_py.clients.common.config.config_def import ConfigException

    keytab = kerberos.kdc.workdir / "kafka.keytab"
    jaas_key = "listener.name.sasl_plaintext.gssapi.sasl.jaas.config"
    listeners = {"zookeeper.connect": "127.0.0.1:1", "sasl.enabled.mechanisms": "GSSAPI",
                 "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"}

    def jaas(principal: str = "kafka/localhost", path=keytab) -> str:
        return (f'{KRB5_MODULE} required useKeyTab=true storeKey=true keyTab="{path}" '
                f'principal="{principal}@{kerberos.kdc.realm}";')

    def startup_error(**props: str) -> ConfigException:
        config = KafkaConfig({**listeners, **props}, do_log=False)
        server = SocketServer(config)
        try:
            with pytest.raises(ConfigException) as info:
                server.startup(start_processing_requests=False)
            return info.value
        finally:
            server.shutdown()

    error = startup_error(**{jaas_key: jaas()})
    assert error.name == "sasl.kerberos.service.name"
    service = {"sasl.kerberos.service.name": "kafka"}
    # a principal the keytab has no key of, a keytab that is not there
    error = startup_error(**service, **{jaas_key: jaas("nobody/localhost")})
    assert error.name == jaas_key and "nobody/localhost" in str(error)
    error = startup_error(**service, **{jaas_key: jaas(path=tmp_path / "missing.keytab")})
    assert error.name == jaas_key and "missing.keytab" in str(error)
    error = startup_error(**service, **{jaas_key: f'{KRB5_MODULE} required useKeyTab=false principal="kafka";'})
    assert error.name == jaas_key and "useKeyTab" in str(error)
    # JAAS and Kafka config naming different services
    error = startup_error(**service, **{jaas_key: jaas()[:-1] + ' serviceName="zookeeper";'})
    assert error.name == "sasl.kerberos.service.name" and "zookeeper" in str(error)
    rules = "sasl.kerberos.principal.to.local.rules"
    error = startup_error(**service, **{jaas_key: jaas(), rules: "RULE:[1:$1]extra"})
    assert error.name == rules and "extra" in str(error)
    # the same settings start a listener
    config = KafkaConfig({**listeners, **service, jaas_key: jaas()}, do_log=False)
    server = SocketServer(config)
    try:
        server.startup(start_processing_requests=False)
    finally:
        server.shutdown()
