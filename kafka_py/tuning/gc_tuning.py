"""The broker process's cyclic garbage collector: thresholds sized for a broker's heap, and
the code and configuration loaded at startup kept out of every collection.

CPython frees an object when its last reference goes; the cyclic collector only exists for
objects that refer to each other in a cycle. It runs when allocations of container objects
minus their deallocations pass the first threshold (700 by default), and every tenth and
hundredth such run walks the older generations too, a full collection walking every tracked
object of the process once the objects not yet walked are a quarter of those that were.
A broker holding thousands of partitions has millions of such objects (a log, its segments,
indexes, locks, metrics and epoch cache per partition), and a LeaderAndIsr creating a
thousand partitions allocates a few hundred thousand more: with the defaults the collector
ran hundreds of times during it and the full collections walked the whole heap again and
again, a third of the broker's CPU while 10,000 partitions were created
(docs/performance.md, "Partitions per broker"). Kafka's JVM has its own collector to tune
(KAFKA_JVM_PERFORMANCE_OPTS); this is the broker's.

``KAFKA_PY_GC`` chooses:

* ``broker`` (the default, also when unset or empty): the first threshold raised to
  ``BROKER_THRESHOLDS[0]`` (cyclic garbage is rare in the broker, so a young collection
  seldom finds anything: the threshold is how much may wait), the other two left as Python
  has them, and ``freeze_startup_objects`` called by the launcher once the broker's modules
  and configuration are loaded, before it starts: those objects live as long as the
  process, and a frozen object is never walked again. Until then the collector is off:
  walking objects that are all about to be frozen found nothing to free and was 50 to 70 ms
  of every start (two young collections of 50,000 objects while the modules load);
* ``python``: Python's own settings, nothing frozen;
* three comma-separated integers: those thresholds (``gc.set_threshold``), and the freeze.

Only objects that live until the process ends are frozen: a frozen object that later
becomes cyclic garbage is never collected, so nothing of a partition or a connection is.
"""
from __future__ import annotations

import gc
import logging
import os
from typing import Mapping, Optional, Tuple

logger = logging.getLogger(__name__)

ENV_VAR = "KAFKA_PY_GC"
BROKER = "broker"
PYTHON = "python"
BROKER_THRESHOLDS = (50_000, 10, 10)


class GcTuningError(ValueError):
    """KAFKA_PY_GC holds something other than a known choice."""


def choose_thresholds(value: Optional[str], default: Tuple[int, int, int]) -> Optional[Tuple[int, int, int]]:
    """The collector thresholds for the setting ``value`` (None: Python's, left alone).

    ``default`` is what Python has now (``gc.get_threshold()``), whose older-generation
    thresholds the ``broker`` choice keeps."""
    setting = (value or BROKER).strip().lower() or BROKER
    if setting == PYTHON:
        return None
    if setting == BROKER:
        return BROKER_THRESHOLDS
    parts = setting.split(",")
    try:
        thresholds = tuple(int(p) for p in parts)
    except ValueError:
        thresholds = ()
    if len(thresholds) != 3 or thresholds[0] < 1 or min(thresholds) < 0:
        raise GcTuningError(f"{value!r} is not {BROKER!r}, {PYTHON!r} or three comma-separated "
                            "thresholds, the first positive (e.g. 50000,10,10)")
    return thresholds  # type: ignore[return-value]


_freeze_at_startup = False


def apply_gc_tuning(environ: Mapping[str, str] = os.environ) -> Optional[Tuple[int, int, int]]:
    """Set the collector's thresholds as ``environ`` says; the thresholds set, or None when
    Python's were left alone. Raises GcTuningError."""
    global _freeze_at_startup
    thresholds = choose_thresholds(environ.get(ENV_VAR), gc.get_threshold())
    _freeze_at_startup = thresholds is not None
    if thresholds is not None:
        gc.set_threshold(*thresholds)
        gc.disable()  # until freeze_startup_objects
    return thresholds


def freeze_startup_objects() -> bool:
    """Once the broker's modules and configuration are loaded and before it starts: move
    every object the collector tracks to its permanent generation (``gc.freeze``) and turn
    the collector back on. Whether it froze (not when the tuning is off)."""
    if not _freeze_at_startup:
        return False
    # No collection first: it walked the ~95,000 objects of a KRaft node's modules to find
    # a few dozen unreachable ones (import-time cycles), 50 to 100 ms of every start on a
    # 2-core VM. Those few are kept for the life of the process instead, as with Python's
    # own advice for freeze (gc.disable at start, gc.freeze with no collection).
    gc.freeze()
    gc.enable()
    # Not counted (gc.get_freeze_count walks the ~100,000 frozen objects: 7 to 30 ms of a start).
    logger.info("Garbage collector thresholds %s; the objects loaded at startup frozen", gc.get_threshold())
    return True
