"""TransactionCoordinator and TransactionStateManager over real logs (after Kafka's
TransactionCoordinatorTest and TransactionStateManagerTest): producer ids and epochs, fencing,
the transaction state machine as clients drive it, the records in __transaction_state, loading
on election and unloading on resignation, timeouts and id expiry."""
from __future__ import annotations

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.coordinator.transaction import transaction_log
from kafka_py.core.coordinator.transaction.transaction_metadata import (
    CompleteAbort,
    CompleteCommit,
    Empty,
    Ongoing,
    PrepareCommit,
)
from kafka_py.log.log_offset_metadata import FetchIsolation
from kafka_py.clients.common.protocol.errors import Errors
from tests.coordinator.txn_coordinator_harness import TxnCoordinatorHarness

TP0 = TopicPartition("topic", 0)
TP1 = TopicPartition("topic", 1)


@pytest.fixture
def harness(tmp_path):
    h = TxnCoordinatorHarness(str(tmp_path / "logs"))
    h.lead()
    yield h
    h.close()


@pytest.fixture
def make_harness(tmp_path):
    made = []

    def make(log_dir=None, lead=True, **kwargs):
        h = TxnCoordinatorHarness(log_dir or str(tmp_path / "logs"), **kwargs)
        made.append(h)
        if lead:
            h.lead()
        return h

    yield make
    for h in made:
        h.close()


def log_records(harness, transactional_id):
    """(key, metadata or None) of every record in the id's __transaction_state partition."""
    log = harness.txn_log(transactional_id)
    out = []
    info = log.read(log.log_start_offset, 1 << 20, FetchIsolation.LOG_END, min_one_message=True)
    from kafka_py.clients.common.record.memory_records import MemoryRecords
    data = MemoryRecords(bytearray(info.records.read_bytes(0, info.records.size_in_bytes())))
    for batch in data.batches():
        for record in batch:
            key = transaction_log.read_txn_record_key(record.key).transactional_id
            out.append((key, transaction_log.read_txn_record_value(key, record.value)))
    return out


# ---------------------------------------------------------------------------- InitProducerId


def test_idempotent_producers_get_fresh_ids_with_epoch_zero(harness):
    a = harness.init_producer_id(None)
    b = harness.init_producer_id(None)
    assert a.error is b.error is Errors.NONE
    assert a.producer_epoch == b.producer_epoch == 0 and a.producer_id != b.producer_id
    assert harness.init_producer_id("").error is Errors.INVALID_REQUEST


def test_init_producer_id_assigns_an_id_and_each_new_instance_bumps_the_epoch(harness):
    first = harness.init_producer_id("tx")
    assert first.error is Errors.NONE and first.producer_epoch == 0
    second = harness.init_producer_id("tx")
    assert (second.producer_id, second.producer_epoch) == (first.producer_id, 1)
    # the fenced instance can no longer add partitions or end a transaction
    assert harness.add_partitions("tx", first.producer_id, 0, TP0) is Errors.PRODUCER_FENCED
    assert harness.end_txn("tx", first.producer_id, 0, True) is Errors.PRODUCER_FENCED
    # ... nor re-initialise as itself
    assert harness.init_producer_id("tx", expected=(first.producer_id + 99, 0)).error is Errors.PRODUCER_FENCED
    records = log_records(harness, "tx")
    assert [(k, m.producer_id, m.producer_epoch, m.state) for k, m in records] == [
        ("tx", first.producer_id, 0, Empty), ("tx", first.producer_id, 1, Empty)]


def test_transaction_timeout_is_checked(harness):
    assert harness.init_producer_id("tx", timeout_ms=0).error is Errors.INVALID_TRANSACTION_TIMEOUT
    too_long = harness.config.transaction_max_timeout_ms + 1
    assert harness.init_producer_id("tx", timeout_ms=too_long).error is Errors.INVALID_TRANSACTION_TIMEOUT


def test_ids_of_partitions_this_broker_does_not_lead_are_not_coordinated(make_harness):
    h = make_harness(num_partitions=2, lead=False)
    h.lead(0)
    ids = [f"tx-{i}" for i in range(20)]
    elsewhere = next(i for i in ids if h.coordinator.partition_for(i) == 1)
    assert h.init_producer_id(elsewhere).error is Errors.NOT_COORDINATOR
    assert h.end_txn(elsewhere, 1, 0, True) is Errors.NOT_COORDINATOR


# ---------------------------------------------------------------------------- the client's transaction


def test_add_partitions_commit_and_the_log(harness):
    pid = harness.init_producer_id("tx")
    assert harness.add_partitions("tx", pid.producer_id, pid.producer_epoch, TP0) is Errors.NONE
    assert harness.add_partitions("tx", pid.producer_id, pid.producer_epoch, TP0, TP1) is Errors.NONE
    # partitions already in the transaction are answered without a write
    n = len(log_records(harness, "tx"))
    assert harness.add_partitions("tx", pid.producer_id, pid.producer_epoch, TP1) is Errors.NONE
    assert len(log_records(harness, "tx")) == n
    metadata = harness.metadata("tx")
    assert metadata.state is Ongoing and metadata.topic_partitions == {TP0, TP1}
    assert harness.end_txn("tx", pid.producer_id, pid.producer_epoch, True) is Errors.NONE
    # no broker leads the partitions here, so the transaction completes without markers
    assert metadata.state is CompleteCommit and not metadata.topic_partitions
    states = [(m.state, sorted(m.topic_partitions, key=str)) for _, m in log_records(harness, "tx")]
    assert states == [(Empty, []), (Ongoing, [TP0]), (Ongoing, [TP0, TP1]), (PrepareCommit, [TP0, TP1]),
                      (CompleteCommit, [])]
    # committing again answers at once; aborting a committed transaction is an invalid state
    assert harness.end_txn("tx", pid.producer_id, pid.producer_epoch, True) is Errors.NONE
    assert harness.end_txn("tx", pid.producer_id, pid.producer_epoch, False) is Errors.INVALID_TXN_STATE


def test_bad_requests(harness):
    pid = harness.init_producer_id("tx")
    assert harness.add_partitions("unknown", pid.producer_id, 0, TP0) is Errors.INVALID_PRODUCER_ID_MAPPING
    assert harness.add_partitions("tx", pid.producer_id + 1, 0, TP0) is Errors.INVALID_PRODUCER_ID_MAPPING
    assert harness.add_partitions("tx", pid.producer_id, 5, TP0) is Errors.PRODUCER_FENCED
    assert harness.end_txn("unknown", pid.producer_id, 0, True) is Errors.INVALID_PRODUCER_ID_MAPPING
    # nothing to end: no partition was added
    assert harness.end_txn("tx", pid.producer_id, pid.producer_epoch, True) is Errors.INVALID_TXN_STATE
    assert harness.end_txn("tx", pid.producer_id, pid.producer_epoch + 1, False) is Errors.PRODUCER_FENCED
    assert harness.add_partitions("", pid.producer_id, 0, TP0) is Errors.INVALID_REQUEST
    assert [m.state for _, m in log_records(harness, "tx")] == [Empty]


def test_new_instance_aborts_the_open_transaction_of_the_old_one(harness):
    old = harness.init_producer_id("tx")
    assert harness.add_partitions("tx", old.producer_id, old.producer_epoch, TP0) is Errors.NONE
    # the new instance is told to retry while the old transaction is aborted with a bumped epoch
    assert harness.init_producer_id("tx").error is Errors.CONCURRENT_TRANSACTIONS
    metadata = harness.metadata("tx")
    assert metadata.state is CompleteAbort and metadata.producer_epoch == old.producer_epoch + 1
    retried = harness.init_producer_id("tx")
    assert retried.error is Errors.NONE and retried.producer_epoch == old.producer_epoch + 2
    assert harness.end_txn("tx", old.producer_id, old.producer_epoch, True) is Errors.PRODUCER_FENCED


def test_a_transaction_older_than_its_timeout_is_aborted_and_its_producer_fenced(harness):
    pid = harness.init_producer_id("tx", timeout_ms=5_000)
    assert harness.add_partitions("tx", pid.producer_id, pid.producer_epoch, TP0) is Errors.NONE
    harness.tick(4_000)
    assert harness.metadata("tx").state is Ongoing
    # the abort task runs every transaction.abort.timed.out.transaction.cleanup.interval.ms (10 s)
    harness.tick(10_000)
    metadata = harness.metadata("tx")
    assert metadata.state is CompleteAbort and metadata.producer_epoch == pid.producer_epoch + 1
    assert harness.end_txn("tx", pid.producer_id, pid.producer_epoch, True) is Errors.PRODUCER_FENCED


def test_idle_transactional_ids_expire_with_a_tombstone(make_harness):
    h = make_harness(transactional_id_expiration_ms="60000",
                     transaction_remove_expired_transaction_cleanup_interval_ms="30000")
    pid = h.init_producer_id("tx")
    assert h.add_partitions("tx", pid.producer_id, pid.producer_epoch, TP0) is Errors.NONE
    h.tick(120_000)
    # an open transaction never expires (it is aborted by its timeout first, 60 s here)
    assert h.metadata("tx") is not None
    h.tick(61_000)
    assert h.metadata("tx") is None
    assert log_records(h, "tx")[-1] == ("tx", None)


# ---------------------------------------------------------------------------- loading and unloading


def test_resign_and_reelection_reload_the_ids_from_the_log(harness):
    pid = harness.init_producer_id("tx")
    assert harness.add_partitions("tx", pid.producer_id, pid.producer_epoch, TP0, TP1) is Errors.NONE
    harness.resign(epoch=2)
    assert harness.init_producer_id("tx").error is Errors.NOT_COORDINATOR
    harness.reelect(epoch=3)
    metadata = harness.metadata("tx")
    assert (metadata.producer_id, metadata.producer_epoch, metadata.state, metadata.topic_partitions) == \
        (pid.producer_id, pid.producer_epoch, Ongoing, {TP0, TP1})
    # the reloaded transaction goes on under the new coordinator epoch
    assert harness.end_txn("tx", pid.producer_id, pid.producer_epoch, False) is Errors.NONE
    assert harness.metadata("tx").state is CompleteAbort


def test_a_restart_finishes_a_transaction_left_in_prepare_commit(make_harness, tmp_path):
    h = make_harness()
    pid = h.init_producer_id("tx")
    assert h.add_partitions("tx", pid.producer_id, pid.producer_epoch, TP0) is Errors.NONE
    # a coordinator that wrote PrepareCommit and died before the markers: its log ends there
    metadata = h.metadata("tx")
    with metadata.lock:
        transit = metadata.prepare_abort_or_commit(PrepareCommit, h.time.milliseconds())
    results = []
    h.state_manager.append_transaction_to_log("tx", 1, transit, results.append)
    assert results == [Errors.NONE] and h.metadata("tx").state is PrepareCommit
    h.close()
    restarted = make_harness(lead=False)
    restarted.lead(epoch=2)
    assert restarted.metadata("tx").state is CompleteCommit
    assert log_records(restarted, "tx")[-1][1].state is CompleteCommit


def test_loading_answers_load_in_progress(make_harness):
    h = make_harness(lead=False)
    h.state_manager.add_loading_partition(0, 1)
    assert h.init_producer_id("tx").error is Errors.COORDINATOR_LOAD_IN_PROGRESS


def test_describe_transactions_tells_the_ongoing_transaction(harness):
    describe = harness.coordinator.handle_describe_transactions
    assert describe("unknown").error is Errors.TRANSACTIONAL_ID_NOT_FOUND
    assert describe("").error is Errors.INVALID_REQUEST
    pid = harness.init_producer_id("tx", timeout_ms=45_000)
    empty = describe("tx")
    assert (empty.error, empty.state, empty.producer_id, empty.producer_epoch, empty.timeout_ms) == \
        (Errors.NONE, "Empty", pid.producer_id, pid.producer_epoch, 45_000)
    assert empty.topic_partitions == frozenset()
    assert harness.add_partitions("tx", pid.producer_id, pid.producer_epoch, TP0, TP1) is Errors.NONE
    ongoing = describe("tx")
    assert ongoing.state == "Ongoing" and ongoing.topic_partitions == {TP0, TP1}
    assert ongoing.start_time_ms == harness.time.milliseconds()
    assert harness.end_txn("tx", pid.producer_id, pid.producer_epoch, True) is Errors.NONE
    assert describe("tx").state in ("PrepareCommit", "CompleteCommit")


def test_what_the_description_lets_a_producer_write(harness):
    """The partition leader's decision (server/add_partitions_to_txn_manager.py) from what the
    coordinator describes: the ongoing transaction's partitions only, at the id's producer id
    and epoch."""
    from kafka_py.server.add_partitions_to_txn_manager import verification_errors

    def verify(txn_id, producer_id, epoch, partitions):
        return verification_errors(harness.coordinator.handle_describe_transactions(txn_id), producer_id, epoch,
                                   partitions)

    pid = harness.init_producer_id("tx")
    assert verify("tx", pid.producer_id, pid.producer_epoch, [TP0]) == {TP0: Errors.INVALID_TXN_STATE}
    assert harness.add_partitions("tx", pid.producer_id, pid.producer_epoch, TP0) is Errors.NONE
    assert verify("tx", pid.producer_id, pid.producer_epoch, [TP0]) == {}
    assert verify("tx", pid.producer_id, pid.producer_epoch, [TP0, TP1]) == {TP1: Errors.INVALID_TXN_STATE}
    assert verify("tx", pid.producer_id + 1, pid.producer_epoch, [TP0]) == {TP0: Errors.INVALID_TXN_STATE}
    assert verify("tx", pid.producer_id, pid.producer_epoch + 1, [TP0]) == {TP0: Errors.INVALID_TXN_STATE}
    assert verify("unknown", pid.producer_id, 0, [TP0]) == {TP0: Errors.INVALID_PRODUCER_ID_MAPPING}
    newer = harness.init_producer_id("tx")  # fences: the open transaction is aborted
    assert newer.error is Errors.CONCURRENT_TRANSACTIONS
    assert verify("tx", pid.producer_id, pid.producer_epoch, [TP0]) == {TP0: Errors.INVALID_PRODUCER_EPOCH}
    # an id of a partition this broker does not lead: it is not the one to ask
    harness.resign(0)
    assert verify("tx", pid.producer_id, pid.producer_epoch, [TP0]) == {TP0: Errors.NOT_COORDINATOR}


def test_partition_load_time_metrics_are_registered_under_kafkas_names(make_harness):
    import math

    from kafka_py.clients.common.sensor import Max, MetricConfig
    from kafka_py.core.coordinator.transaction.transaction_state_manager import _coordinator_metric_name
    from kafka_py.core.metrics.kafka_metrics_group import default_registry

    stat, config = Max(), MetricConfig()
    assert math.isnan(stat.measure(config, 1000))
    stat.record(config, 5, 1000)
    stat.record(config, 20, 31_000)
    assert stat.measure(config, 31_000) == 20
    assert math.isnan(stat.measure(config, 200_000))  # both 30 s samples expired

    registry = default_registry()
    max_name = _coordinator_metric_name("partition-load-time-max")
    avg_name = _coordinator_metric_name("partition-load-time-avg")
    assert max_name.mbean_name == "kafka.server:type=transaction-coordinator-metrics"
    h = make_harness(lead=False)
    assert math.isnan(registry.get(max_name).value())
    h.lead()
    h.state_manager.partition_load_sensor.record(40, h.time.milliseconds(), False)
    assert registry.get(max_name).value() == 40
    assert registry.get(avg_name).value() == 20  # the load itself (0 ms on the manual clock) and 40
    h.close()
    assert registry.get(max_name) is None and registry.get(avg_name) is None
