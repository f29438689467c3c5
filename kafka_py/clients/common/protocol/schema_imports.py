"""One thread at a time imports message schema modules. A kafka-py module with no twin in
Kafka (the JVM loads its generated message classes without this hazard).

kio's schema packages, and this project's own in ``kafka_py/clients/common/protocol/schema``, are one
package per message version whose ``__init__`` imports both its ``request`` and its
``response`` module. CPython before 3.15 takes a module's import lock before its package's
(gh-83065): when two threads import the request and the response of one version for the
first time at once, each holds the lock the other waits for, and the import system raises
``_DeadlockError`` in one of them. A broker meets this when a network thread reads a
message version at the moment another thread writes the same version, e.g. the SASL
handshake of a broker connecting to itself while the controller's channel connects.

Every first import of a schema module goes through ``load_schema``, under one lock; a
schema already loaded costs its caller nothing here (the callers cache what they load).
"""
from __future__ import annotations

import importlib
import threading
from types import ModuleType
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_SCHEMA_IMPORT_LOCK = threading.RLock()


def load_schema(load: Callable[..., T], *args: Any) -> T:
    """``load(*args)`` (a loader that may import schema modules) under the schema import lock."""
    with _SCHEMA_IMPORT_LOCK:
        return load(*args)


def import_schema_module(name: str) -> ModuleType:
    """``importlib.import_module(name)`` for a schema module, under the schema import lock."""
    return load_schema(importlib.import_module, name)
