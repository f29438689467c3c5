"""Logging configuration, the counterpart of Kafka's config/log4j.properties.

Kafka configures log4j from a properties file named by KAFKA_LOG4J_OPTS; here the
broker and tools load a YAML file (config/logging.yaml by default, or the file named
by KAFKA_PY_LOGGING_CONFIG) into logging.config.dictConfig. The default line format
follows Kafka's "[%d] %p %m (%c)%n" so operators' greps keep working.

Kafka's files (server.log, controller.log, state-change.log, kafka-request.log,
log-cleaner.log, kafka-authorizer.log) go to ``${kafka.logs.dir}``, which Kafka's scripts
set from $LOG_DIR; here a handler's ``filename`` may name ``${kafka.logs.dir}`` and it is
replaced by $LOG_DIR (the directory the bin scripts use), /tmp/kafka-py-logs without it.
DailyRollingFileHandler rolls them as log4j's DailyRollingFileAppender with the
DatePattern '.'yyyy-MM-dd-HH does: at the top of every hour, the file closed being renamed
with the hour it covered (server.log.2026-11-25-05).
"""
from __future__ import annotations

import logging
import logging.config
import os
import pathlib
import re
import time
from logging.handlers import TimedRotatingFileHandler

import yaml

from kafka_py.config import config_dir
from kafka_py.core.utils.logging import TRACE

# config/logging.yaml of the source tree, or the copy a wheel ships inside kafka_py.config
DEFAULT_CONFIG = config_dir() / "logging.yaml"
DEFAULT_LOGS_DIR = "/tmp/kafka-py-logs"
LOGS_DIR_PLACEHOLDER = "${kafka.logs.dir}"
_FALLBACK_FORMAT = "[%(asctime)s,%(msecs)03d] %(levelname)s %(message)s (%(name)s)"


def kafka_logs_dir() -> str:
    """Kafka's ``kafka.logs.dir``: $LOG_DIR as the bin scripts pass it, or their default."""
    return os.environ.get("LOG_DIR") or DEFAULT_LOGS_DIR


class DailyRollingFileHandler(TimedRotatingFileHandler):
    """log4j's DailyRollingFileAppender: a new file at each boundary of ``date_pattern``'s
    finest unit (hourly for '%Y-%m-%d-%H', Kafka's '.'yyyy-MM-dd-HH), in local time,
    aligned to the boundary rather than counted from the start. The file closed is renamed
    ``<file>.<the period it covered>``; rolled files are kept (as log4j keeps them) unless
    ``backup_count`` is set. ``${kafka.logs.dir}`` in ``filename`` is resolved and the
    directory created."""

    def __init__(self, filename: str, date_pattern: str = "%Y-%m-%d-%H", backup_count: int = 0,
                 encoding: str | None = "utf-8", delay: bool = True) -> None:
        filename = os.fspath(filename).replace(LOGS_DIR_PLACEHOLDER, kafka_logs_dir())
        pathlib.Path(filename).parent.mkdir(parents=True, exist_ok=True)
        when = "H" if "%H" in date_pattern else "D"
        super().__init__(filename, when=when, backupCount=backup_count, encoding=encoding, delay=delay)
        self.suffix = date_pattern
        # for the deletion of the oldest files when backup_count is set
        pattern = re.escape(date_pattern)
        for code, digits in (("%Y", 4), ("%m", 2), ("%d", 2), ("%H", 2)):
            pattern = pattern.replace(re.escape(code), r"\d{%d}" % digits)
        self.extMatch = re.compile(rf"^{pattern}(\.\w+)?$", re.ASCII)
        self.rolloverAt = self.computeRollover(time.time())

    def computeRollover(self, currentTime: float) -> int:  # noqa: N802 (logging's name)
        lt = time.localtime(currentTime)
        if self.when == "H":
            start = time.mktime((lt.tm_year, lt.tm_mon, lt.tm_mday, lt.tm_hour, 0, 0, 0, 0, -1))
            return int(start + 3600)
        # the next midnight (mktime carries a day past the month's end)
        return int(time.mktime((lt.tm_year, lt.tm_mon, lt.tm_mday + 1, 0, 0, 0, 0, 0, -1)))


class KafkaFormatter(logging.Formatter):
    """logging.Formatter that formats a record once for all the handlers sharing it (stdout
    and server.log, say, as config/logging.yaml has it): the last record's line is kept and
    given again for the same record."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._last: tuple[logging.LogRecord | None, str] = (None, "")

    def format(self, record: logging.LogRecord) -> str:
        last_record, line = self._last  # one tuple: read and replaced whole by any thread
        if last_record is record:
            return line
        line = super().format(record)
        self._last = (record, line)
        return line


def configure_logging(path: str | os.PathLike | None = None) -> None:
    """Load the YAML logging config; fall back to Kafka's line format on stdout."""
    logging.addLevelName(TRACE, "TRACE")
    chosen = path or os.environ.get("KAFKA_PY_LOGGING_CONFIG") or DEFAULT_CONFIG
    chosen = pathlib.Path(chosen)
    if chosen.is_file():
        with chosen.open() as f:
            # libyaml's loader when PyYAML has it: the same documents, parsed in C (config/
            # logging.yaml took ~19 ms in pure Python, ~3 ms here, on every start).
            logging.config.dictConfig(yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    elif path is not None:
        # An explicitly named file that does not exist is an operator error, not a default.
        raise FileNotFoundError(f"logging config not found: {chosen}")
    else:
        logging.basicConfig(level=logging.INFO, format=_FALLBACK_FORMAT, datefmt="%Y-%m-%d %H:%M:%S")
    skip_unused_record_fields()


# What a LogRecord looks up for the attributes of each group (logging's module flags).
_RECORD_FIELDS = {
    "_srcfile": ("pathname", "filename", "module", "lineno", "funcName"),
    "logThreads": ("thread", "threadName"),
    "logProcesses": ("process",),
    "logMultiprocessing": ("processName",),
}


def skip_unused_record_fields() -> None:
    """Spare every log record the caller's frame walk, thread and process lookups when no
    configured format shows them (Kafka's format shows none): the "Optimization" logging's
    documentation describes. A broker making 10,000 partitions leaders writes five lines
    per partition (as Kafka does); the walk and lookups were a fifth of each line's cost.
    A format naming any field of a group keeps that group."""
    formats = []
    for handler in _all_handlers():
        formatter = handler.formatter
        fmt = getattr(getattr(formatter, "_style", None), "_fmt", None)
        if fmt is None and formatter is not None:
            return  # a formatter of unknown kind may show anything
        formats.append(fmt or logging.BASIC_FORMAT)
    text = "\n".join(formats)
    for flag, fields in _RECORD_FIELDS.items():
        if not any(_shows(text, field) for field in fields):
            setattr(logging, flag, None if flag == "_srcfile" else False)


def _shows(text: str, field: str) -> bool:
    # the three format styles: %(name)s, {name}, $name / ${name}
    return f"%({field})" in text or f"{{{field}" in text or f"${field}" in text


def _all_handlers() -> list[logging.Handler]:
    loggers = [logging.getLogger()] + [logger for logger in logging.Logger.manager.loggerDict.values()
                                       if isinstance(logger, logging.Logger)]
    return [handler for logger in loggers for handler in logger.handlers]
