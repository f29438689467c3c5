"""Logging configuration, the counterpart of Kafka's config/log4j.properties.

Kafka configures log4j from a properties file named by KAFKA_LOG4J_OPTS; here the
broker and tools load a YAML file (config/logging.yaml by default, or the file named
by KAFKA_PY_LOGGING_CONFIG) into logging.config.dictConfig. The default line format
follows Kafka's "[%d] %p %m (%c)%n" so operators' greps keep working.
"""
from __future__ import annotations

import logging
import logging.config
import os
import pathlib

import yaml

DEFAULT_CONFIG = pathlib.Path(__file__).resolve().parents[2] / "config" / "logging.yaml"
_FALLBACK_FORMAT = "[%(asctime)s,%(msecs)03d] %(levelname)s %(message)s (%(name)s)"


def configure_logging(path: str | os.PathLike | None = None) -> None:
    """Load the YAML logging config; fall back to Kafka's line format on stdout."""
    chosen = path or os.environ.get("KAFKA_PY_LOGGING_CONFIG") or DEFAULT_CONFIG
    chosen = pathlib.Path(chosen)
    if chosen.is_file():
        with chosen.open() as f:
            logging.config.dictConfig(yaml.safe_load(f))
        return
    if path is not None:
        # An explicitly named file that does not exist is an operator error, not a default.
        raise FileNotFoundError(f"logging config not found: {chosen}")
    logging.basicConfig(level=logging.INFO, format=_FALLBACK_FORMAT, datefmt="%Y-%m-%d %H:%M:%S")
