import logging

import pytest

from tests.zookeeper_harness import ZooKeeperServer


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
