"""IdentLogger: Kafka's logIdent prefix on every line an object logs."""
from __future__ import annotations

import logging

import pytest

from kafka_py.core.utils.logging import IdentLogger


class _Unformattable:
    def __str__(self) -> str:
        raise AssertionError("formatted although the level is off")

    __repr__ = __str__


@pytest.fixture
def module_logger(caplog):
    caplog.set_level(logging.INFO, logger="kafka_py.test_ident")
    return logging.getLogger("kafka_py.test_ident")


def test_lines_start_with_the_ident_and_keep_the_module_logger_name(module_logger, caplog):
    log = IdentLogger(module_logger, "[ReplicaManager broker=0] ")
    log.info("Shrinking ISR from %s to %s", [0, 1], [0])
    log.warning("plain 100% text, no arguments: not formatted")
    record = caplog.records[-2]
    assert record.getMessage() == "[ReplicaManager broker=0] Shrinking ISR from [0, 1] to [0]"
    assert record.name == "kafka_py.test_ident"
    assert record.levelno == logging.INFO
    # the record is the one logger.info("%s...", ident, ...) made: %-style, ident first
    assert record.msg == "%sShrinking ISR from %s to %s"
    assert record.args == ("[ReplicaManager broker=0] ", [0, 1], [0])
    assert caplog.records[-1].getMessage() == "[ReplicaManager broker=0] plain 100% text, no arguments: not formatted"


def test_an_ident_with_percent_signs_is_never_taken_for_a_format(module_logger, caplog):
    log = IdentLogger(module_logger, "[Log partition=t-0, dir=/data/100%] ")
    log.info("Truncating to offset %d", 7)
    log.info("no arguments")
    log.info("mapping %(offset)d", {"offset": 9})
    assert [r.getMessage() for r in caplog.records[-3:]] == [
        "[Log partition=t-0, dir=/data/100%] Truncating to offset 7",
        "[Log partition=t-0, dir=/data/100%] no arguments",
        "[Log partition=t-0, dir=/data/100%] mapping 9"]


def test_records_name_the_caller_not_the_adapter(module_logger, caplog):
    log = IdentLogger(module_logger, "[X] ")

    def caller():
        log.info("from the caller")
        log.log(logging.WARNING, "through log()")

    caller()
    assert [r.funcName for r in caplog.records[-2:]] == ["caller", "caller"]
    assert all(r.pathname == __file__ for r in caplog.records[-2:])


def test_disabled_levels_format_nothing(module_logger, caplog):
    log = IdentLogger(module_logger, "[X] ")
    log.debug("never %s", _Unformattable())
    log.log(logging.DEBUG, "never %s", _Unformattable())
    assert not [r for r in caplog.records if r.levelno < logging.INFO]


def test_the_ident_can_change(module_logger, caplog):
    log = IdentLogger(module_logger)
    log.info("before the id is known")
    log.ident = "[KafkaServer id=3] "
    log.info("started")
    assert [r.getMessage() for r in caplog.records[-2:]] == ["before the id is known", "[KafkaServer id=3] started"]


def test_exception_carries_the_traceback_and_non_string_messages_work(module_logger, caplog):
    log = IdentLogger(module_logger, "[X] ")
    try:
        raise ValueError("bad input")
    except ValueError:
        log.exception("Error handling %d", 7)
    record = caplog.records[-1]
    assert record.levelno == logging.ERROR and record.exc_info[0] is ValueError
    assert record.getMessage() == "[X] Error handling 7"
    log.error(KeyError("k"))
    assert caplog.records[-1].getMessage() == "[X] 'k'"
