"""Fixtures starting real broker processes (tests/integration/broker_harness.py)."""
from __future__ import annotations

import pytest

from tests.integration.broker_harness import BrokerProcess, unique_chroot


@pytest.fixture
def broker_factory(zookeeper, tmp_path_factory):
    """Make brokers (not started); every one still running at the end is stopped."""
    made: list[BrokerProcess] = []

    def make(broker_id: int = 0, chroot: str | None = None, **kwargs) -> BrokerProcess:
        workdir = tmp_path_factory.mktemp(f"broker{broker_id}-")
        broker = BrokerProcess(workdir, zookeeper.connect_string, chroot or unique_chroot(), broker_id, **kwargs)
        made.append(broker)
        return broker

    yield make
    for broker in made:
        if broker.running:
            broker.stop()


@pytest.fixture(scope="module")
def broker(zookeeper, tmp_path_factory):
    """One broker shared by the tests of a module, in a cluster (chroot) of its own."""
    b = BrokerProcess(tmp_path_factory.mktemp("broker"), zookeeper.connect_string, unique_chroot())
    b.start()
    yield b
    if b.running:
        assert b.stop() == 0, b.tail()


def pytest_configure(config):
    config.addinivalue_line("markers", "scale: restarts of brokers holding thousands of partitions or segments "
                                       "(minutes each; select with -m scale)")
