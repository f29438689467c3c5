"""The pytest plugin of kafka-py (registered as ``kafka_py`` through the ``pytest11`` entry
point, so installing kafka-py is enough to have it).

Fixtures:

* ``kafka_cluster``: a ``KafkaCluster``. Shared by the tests of a session (in each
  pytest-xdist worker: one cluster per worker process) unless the ``kafka_cluster_scope``
  ini option names another scope; a test marked ``@pytest.mark.kafka_cluster(...)`` gets a
  cluster of its own, built with the marker's keyword arguments (``brokers``, ``mode``,
  ``overrides``, ``listener``...: those of ``KafkaCluster``).
* ``kafka_broker``: the cluster's first broker (``BrokerNode``: ``bootstrap``, ``node_id``).
* ``kafka_bootstrap``: the cluster's ``bootstrap_servers`` string.
* ``kafka_topic``: a topic created for the test (one partition, in sync) and deleted after it.

Ini options: ``kafka_cluster_scope`` (session), ``kafka_brokers`` (1), ``kafka_mode``
(kraft or zookeeper), ``kafka_listener`` (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL; a
test reaches it with ``kafka_cluster.client_config()``), ``kafka_overrides`` (broker
properties, one ``key=value`` a line).

When a test that used a cluster fails, the last lines of each broker's output are added to
its report (a section "kafka cluster logs").

Loading the plugin costs nothing to a test run that uses none of this: no fixture is
autouse, and nothing but the standard library is imported until a fixture is used.
"""
from __future__ import annotations

from typing import Iterator

import pytest

FIXTURES = ("kafka_cluster", "kafka_broker", "kafka_bootstrap", "kafka_topic", "kafka_cluster_shared")
SCOPES = ("session", "package", "module", "class", "function")
LOG_LINES = 60


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("kafka_cluster_scope", "scope of the shared kafka_cluster fixture", default="session")
    parser.addini("kafka_brokers", "number of brokers of the shared kafka_cluster", default="1")
    parser.addini("kafka_mode", "kraft (default) or zookeeper", default="kraft")
    parser.addini("kafka_listener", "security protocol of the shared kafka_cluster's client listener: "
                                    "PLAINTEXT (default), SSL, SASL_PLAINTEXT or SASL_SSL", default="PLAINTEXT")
    parser.addini("kafka_overrides", "broker properties of the shared kafka_cluster, key=value a line",
                  type="linelist", default=[])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "kafka_cluster(**options): give the test a Kafka cluster of its own, built with "
                   "KafkaCluster(**options) (brokers=, mode=, overrides=, listener=...)")


def _parse_overrides(lines: list[str]) -> dict[str, str]:
    overrides = {}
    for line in lines:
        key, sep, value = line.partition("=")
        if not sep:
            raise pytest.UsageError(f"kafka_overrides: {line!r} is not key=value")
        overrides[key.strip()] = value.strip()
    return overrides


def _shared_scope(fixture_name: str, config: pytest.Config) -> str:
    scope = config.getini("kafka_cluster_scope").strip() or "session"
    if scope not in SCOPES:
        raise pytest.UsageError(f"kafka_cluster_scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    return scope


def pytest_collection_finish(session: pytest.Session) -> None:
    # The broker launcher's imports take a second or two: begin them while the first tests
    # (or the other fixtures) run, as soon as it is known that a cluster will be needed.
    if any(set(FIXTURES) & set(getattr(item, "fixturenames", ())) for item in session.items):
        from kafka_py.testing.cluster import prewarm

        prewarm()


@pytest.fixture(scope=_shared_scope)
def kafka_cluster_shared(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory):
    """The cluster shared by the tests of the ini option ``kafka_cluster_scope``."""
    from kafka_py.testing.cluster import KafkaCluster

    cluster = KafkaCluster(brokers=int(pytestconfig.getini("kafka_brokers")),
                           mode=pytestconfig.getini("kafka_mode").strip() or "kraft",
                           listener=pytestconfig.getini("kafka_listener").strip() or "PLAINTEXT",
                           overrides=_parse_overrides(pytestconfig.getini("kafka_overrides")))
    with cluster:
        yield cluster


@pytest.fixture
def kafka_cluster(request: pytest.FixtureRequest):
    """The shared cluster, or one of the test's own when the test is marked ``kafka_cluster``."""
    marker = request.node.get_closest_marker("kafka_cluster")
    if marker is None:
        yield request.getfixturevalue("kafka_cluster_shared")
        return
    from kafka_py.testing.cluster import KafkaCluster

    with KafkaCluster(*marker.args, **marker.kwargs) as cluster:
        yield cluster


@pytest.fixture
def kafka_broker(kafka_cluster):
    """The first broker of ``kafka_cluster``."""
    return kafka_cluster.brokers[min(kafka_cluster.brokers)]


@pytest.fixture
def kafka_bootstrap(kafka_cluster) -> str:
    return kafka_cluster.bootstrap_servers


@pytest.fixture
def kafka_topic(kafka_cluster) -> Iterator[str]:
    """A new topic for this test, deleted after it."""
    name = kafka_cluster.create_topic()
    yield name
    try:
        kafka_cluster.delete_topic(name)
    except (RuntimeError, TimeoutError, OSError):
        pass  # a test that stopped its brokers leaves the topic to the cluster's own end


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if report.failed:
        funcargs = getattr(item, "funcargs", {})
        for name in ("kafka_cluster", "kafka_cluster_shared"):
            cluster = funcargs.get(name)
            if cluster is not None and cluster.workdir is not None:
                report.sections.append(("kafka cluster logs", cluster.logs(LOG_LINES)))
                break
    return report
