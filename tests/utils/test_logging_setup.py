"""DailyRollingFileHandler: log4j's DailyRollingFileAppender ('.'yyyy-MM-dd-HH) for
config/logging.yaml's files under ${kafka.logs.dir}."""
from __future__ import annotations

import logging
import time

from kafka_py.core.utils.logging_setup import DailyRollingFileHandler, kafka_logs_dir


def _record(msg: str) -> logging.LogRecord:
    return logging.LogRecord("kafka_py.test", logging.INFO, "", 0, msg, None, None)


def test_logs_dir_is_log_dir_with_the_scripts_default(monkeypatch):
    monkeypatch.setenv("LOG_DIR", "/var/log/kafka-py")
    assert kafka_logs_dir() == "/var/log/kafka-py"
    monkeypatch.delenv("LOG_DIR")
    assert kafka_logs_dir() == "/tmp/kafka-py-logs"


def test_placeholder_resolved_and_directory_created_without_a_file_until_a_line(tmp_path, monkeypatch):
    monkeypatch.setenv("LOG_DIR", str(tmp_path / "a" / "b"))
    handler = DailyRollingFileHandler("${kafka.logs.dir}/server.log")
    try:
        assert handler.baseFilename == str(tmp_path / "a" / "b" / "server.log")
        assert (tmp_path / "a" / "b").is_dir() and not (tmp_path / "a" / "b" / "server.log").exists()
        handler.emit(_record("one"))
        handler.flush()
        assert (tmp_path / "a" / "b" / "server.log").read_text() == "one\n"
    finally:
        handler.close()


def test_rolls_at_the_top_of_the_hour_into_the_hour_it_covered(tmp_path):
    handler = DailyRollingFileHandler(str(tmp_path / "server.log"))
    try:
        now = time.time()
        lt = time.localtime(now)
        hour_start = time.mktime((lt.tm_year, lt.tm_mon, lt.tm_mday, lt.tm_hour, 0, 0, 0, 0, -1))
        # aligned to the hour, not an hour after the handler was made
        assert handler.rolloverAt == int(hour_start + 3600)
        handler.emit(_record("before"))
        # as if the hour had ended: the file is renamed after the hour it covered
        handler.rolloverAt = int(now) - 1
        expected_suffix = time.strftime("%Y-%m-%d-%H", time.localtime(handler.rolloverAt - 3600))
        handler.emit(_record("after"))
        handler.flush()
        rolled = tmp_path / f"server.log.{expected_suffix}"
        assert rolled.read_text() == "before\n"
        assert (tmp_path / "server.log").read_text() == "after\n"
        assert handler.rolloverAt > now
        assert handler.extMatch.match(expected_suffix)
    finally:
        handler.close()


def test_daily_pattern_rolls_at_midnight(tmp_path):
    handler = DailyRollingFileHandler(str(tmp_path / "x.log"), date_pattern="%Y-%m-%d")
    try:
        lt = time.localtime(handler.rolloverAt)
        assert (lt.tm_hour, lt.tm_min, lt.tm_sec) == (0, 0, 0)
        assert 0 < handler.rolloverAt - time.time() <= 86400 + 3600
    finally:
        handler.close()


_PROBE = """
import logging, sys
from kafka_py.core.utils.logging_setup import configure_logging
configure_logging(sys.argv[1] if len(sys.argv) > 1 else None)
logging.getLogger("kafka_py.probe").warning("probe line")
print("FLAGS", logging._srcfile is not None, logging.logThreads, logging.logProcesses, logging.logMultiprocessing)
"""


def _probe(tmp_path, *args) -> tuple[str, str]:
    import os
    import subprocess
    import sys

    env = dict(os.environ, LOG_DIR=str(tmp_path / "logs"))
    env.pop("KAFKA_PY_LOGGING_CONFIG", None)
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, env=env,
                          timeout=60, check=True)
    flags = [line for line in done.stdout.splitlines() if line.startswith("FLAGS")][0]
    return flags, done.stdout


def test_record_fields_no_format_shows_are_not_looked_up(tmp_path):
    flags, out = _probe(tmp_path)  # config/logging.yaml: Kafka's line format
    assert flags == "FLAGS False False False False"
    assert "WARNING probe line (kafka_py.probe)" in out


def test_record_fields_a_format_shows_are_kept(tmp_path):
    config = tmp_path / "logging.yaml"
    config.write_text(
        "version: 1\n"
        "formatters:\n  f:\n    format: '%(threadName)s %(funcName)s:%(lineno)d %(message)s'\n"
        "handlers:\n  out:\n    class: logging.StreamHandler\n    formatter: f\n    stream: ext://sys.stdout\n"
        "root:\n  level: INFO\n  handlers: [out]\n")
    flags, out = _probe(tmp_path, str(config))
    assert flags == "FLAGS True True False False"
    assert "MainThread <module>:5 probe line" in out


def test_kafka_formatter_formats_a_record_once_for_its_handlers(monkeypatch):
    import io

    from kafka_py.core.utils.logging_setup import KafkaFormatter

    formatted = []
    original = logging.Formatter.format
    monkeypatch.setattr(logging.Formatter, "format", lambda self, record: formatted.append(record) or original(self, record))
    formatter = KafkaFormatter("%(levelname)s %(message)s (%(name)s)")
    streams = [io.StringIO(), io.StringIO()]
    logger = logging.getLogger("kafka_py.test.formatter")
    logger.propagate = False
    handlers = [logging.StreamHandler(s) for s in streams]
    for handler in handlers:
        handler.setFormatter(formatter)
        logger.addHandler(handler)
    try:
        logger.warning("one %d", 1)
        logger.warning("two")
        logger.warning("two")
    finally:
        for handler in handlers:
            logger.removeHandler(handler)
    lines = "WARNING one 1 (kafka_py.test.formatter)\n" + "WARNING two (kafka_py.test.formatter)\n" * 2
    assert [s.getvalue() for s in streams] == [lines, lines]
    assert len(formatted) == 3
