"""Fixtures starting real broker processes (tests/integration/broker_harness.py, and
kraft_harness.py for the KRaft mode a module asks for with ``metadata_modes``)."""
from __future__ import annotations

import pathlib
from typing import Union

import pytest

from tests.integration.broker_harness import BrokerProcess, unique_chroot
from tests.integration.kraft_harness import KRaftCombinedProcess

AnyBroker = Union[BrokerProcess, KRaftCombinedProcess]


def new_broker(request, metadata_mode: str, workdir: pathlib.Path, broker_id: int = 0,
               chroot: str | None = None, **kwargs) -> AnyBroker:
    """A broker of ``metadata_mode``, not started: in ZooKeeper mode in ``chroot`` (a cluster
    of its own when None) of the session's ZooKeeper; in KRaft mode a node that is its own
    one-voter quorum, so a cluster of its own (a chroot names none)."""
    if metadata_mode == "kraft":
        return KRaftCombinedProcess(workdir, broker_id, **kwargs)
    zookeeper = request.getfixturevalue("zookeeper")
    return BrokerProcess(workdir, zookeeper.connect_string, chroot or unique_chroot(), broker_id, **kwargs)


@pytest.fixture
def broker_factory(request, metadata_mode, tmp_path_factory):
    """Make brokers (not started); every one still running at the end is stopped."""
    made: list[AnyBroker] = []

    def make(broker_id: int = 0, chroot: str | None = None, **kwargs) -> AnyBroker:
        if metadata_mode == "kraft" and chroot is not None:
            raise NotImplementedError("broker_factory makes one-node KRaft clusters; several brokers "
                                      "of one KRaft cluster come from kraft_harness.KRaftQuorum")
        broker = new_broker(request, metadata_mode, tmp_path_factory.mktemp(f"broker{broker_id}-"),
                            broker_id, chroot, **kwargs)
        made.append(broker)
        return broker

    yield make
    for broker in made:
        if broker.running:
            broker.stop()


@pytest.fixture(scope="module")
def broker(request, metadata_mode, tmp_path_factory):
    """One broker shared by the tests of a module, in a cluster of its own."""
    b = new_broker(request, metadata_mode, tmp_path_factory.mktemp("broker"))
    b.start()
    yield b
    if b.running:
        assert b.stop() == 0, b.tail()


def pytest_configure(config):
    config.addinivalue_line("markers", "scale: restarts of brokers holding thousands of partitions or segments "
                                       "(minutes each; select with -m scale)")
