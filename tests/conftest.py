import logging
import zlib

import pytest

from tests.zookeeper_harness import ZooKeeperServer


#: The test files that take longest, longest first (the Spark files among them are dealt
#: out to the Spark shares in this order, see SPARK_WORKERS). They are collected first, and bin/run-tests.sh hands files to its workers in
#: collection order (--no-loadscope-reorder), so no worker is still in one of them when the
#: others have run out of files. Left to itself, pytest-xdist hands out the files with the
#: most tests first, which puts these last: each has only a few tests, every one of them a
#: Spark start or a cluster of broker processes.
LONGEST_FILES = (
    "tests/spark/test_streaming.py",
    "tests/tools/test_tools_against_broker.py",
    "tests/integration/test_consumer_groups.py",
    "tests/spark/test_stream_export.py",
    "tests/integration/test_replication_durability.py",
    "tests/spark/test_cluster_failover.py",
    "tests/integration/test_client_quotas.py",
    "tests/spark/test_kafka_sink.py",
    "tests/integration/test_restart_at_scale.py",
    "tests/spark/test_first_use.py",
    "tests/integration/test_isr_replication.py",
    "tests/integration/test_crash_points.py",
    "tests/spark/test_pipeline.py",
    "tests/integration/test_replication.py",
    "tests/spark/test_cluster_reads.py",
    "tests/security/test_reauthentication.py",
    "tests/security/test_security_listeners.py",
    "tests/integration/test_topic_churn_memory.py",
    "tests/spark/test_secure_cluster.py",
    "tests/integration/test_transactions.py",
    "tests/spark/test_broker_reads.py",
    "tests/tools/test_operator_tools.py",
    "tests/integration/test_kraft_cluster.py",
    "tests/integration/test_bin_scripts.py",
    "tests/integration/test_log_dir_failure.py",
    "tests/testing/test_installed_package.py",
    "tests/integration/test_log_dirs.py",
    "tests/integration/test_kraft_combined_node.py",
    "tests/fuzz/test_fuzz.py",
    "tests/raft/test_raft_event_simulation.py",
    "tests/integration/test_down_conversion.py",
    "tests/security/test_inter_broker_security.py",
)


def pytest_collection_modifyitems(config, items):
    rank = {path: i for i, path in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


#: How many workers run the Spark files, each its share of them one after another in one Spark
#: session. Spark files run on any worker would put up to one Spark JVM per worker on the two
#: CPUs at once, and a Spark task whose Python worker does not connect back within Spark's
#: fixed 10 seconds fails its query ("Python worker failed to connect back").
SPARK_WORKERS = 2
SPARK_DIR = "tests/spark/"
LONG_SPARK_FILES = [f for f in LONGEST_FILES if f.startswith(SPARK_DIR)]


def spark_scope(path: str) -> str:
    """The unit of work of a Spark test file: one of SPARK_WORKERS shares, the long files
    dealt out in turn by LONGEST_FILES' order and the others by their names' CRC."""
    share = LONG_SPARK_FILES.index(path) if path in LONG_SPARK_FILES else zlib.crc32(path.encode())
    return f"{SPARK_DIR}(Spark share {share % SPARK_WORKERS + 1} of {SPARK_WORKERS})"


def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile, but with the Spark files in SPARK_WORKERS units of work, not one each."""
    from xdist.scheduler import LoadFileScheduling

    class SparkSharesScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return spark_scope(path) if path.startswith(SPARK_DIR) else super()._split_scope(nodeid)

    if config.getoption("dist") != "loadfile":
        return None
    return SparkSharesScheduling(config, log)


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory):
    """A real ZooKeeper server (Debian's package) shared by the tests of a session."""
    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper")).start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _restore_client_logger_levels():
    """The admin tools quiet the kazoo and kafka-python loggers of the process they run in
    (a command prints one line, not a client's reconnect warnings); a tool run inside a
    test must not leave them quiet for the tests after it in the same worker."""
    loggers = [logging.getLogger(name) for name in ("kazoo", "kafka")]
    levels = [logger.level for logger in loggers]
    yield
    for logger, level in zip(loggers, levels):
        logger.setLevel(level)


# -- the metadata mode of a module's brokers ---------------------------------------------------

METADATA_MODES = ("zookeeper", "kraft")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "metadata_modes(*modes): run the module's tests once per mode ('zookeeper', 'kraft'), "
                   "its `broker` and `broker_factory` fixtures starting brokers of that mode")


def pytest_generate_tests(metafunc):
    marker = metafunc.definition.get_closest_marker("metadata_modes")
    if marker is None or "metadata_mode" not in metafunc.fixturenames:
        return
    unknown = set(marker.args) - set(METADATA_MODES)
    if unknown:
        raise pytest.UsageError(f"metadata_modes: unknown mode(s) {sorted(unknown)}, known: {METADATA_MODES}")
    # Module scope: each mode's brokers are started once for the module, not once per test.
    metafunc.parametrize("metadata_mode", marker.args, indirect=True, scope="module")


@pytest.fixture(scope="module")
def metadata_mode(request) -> str:
    """'zookeeper' (a ZooKeeper-mode broker, the default) or 'kraft' (a KRaft node that is its
    own controller quorum), as the module's ``metadata_modes`` marker asks."""
    return getattr(request, "param", "zookeeper")
