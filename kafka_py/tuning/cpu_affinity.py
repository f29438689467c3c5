"""The broker process's CPU affinity, a tuning the user turns on: kafka-py's counterpart of
the JVM tuning that Kafka's bin/kafka-run-class.sh takes from KAFKA_JVM_PERFORMANCE_OPTS.

CPython runs one thread at a time (the GIL), and a request crosses three threads on its
way through the broker (Processor, request handler, Processor again) with the GIL passed
at each step and at every blocking system call. When those threads sit on different
cores, each pass wakes an idle core and moves the interpreter's working set between
caches. Keeping every thread of the broker on one core turns those passes into ordinary
same-core switches; docs/performance.md ("Broker tuning") has what that buys. It also
keeps the broker off the other cores, which a machine running several brokers or other
services wants to decide for itself, so the launcher leaves the affinity alone unless
told. The CPUs are chosen before any thread starts; threads created later inherit them.

``KAFKA_PY_CPU_AFFINITY`` chooses:

* ``none`` (the default, also when unset or empty): leave the affinity alone (every
  allowed CPU);
* ``auto``: one of the CPUs the process may run on, picked by process id, so that several
  brokers started on one machine spread over its CPUs;
* a CPU list as taskset(1) and /proc take it, e.g. ``1`` or ``0,2-3``.

The parsing is pure (``parse_cpu_list``, ``choose_cpus``); ``apply_cpu_affinity`` is the
one function with a side effect.
"""
from __future__ import annotations

import logging
import os
from typing import Mapping, Optional

logger = logging.getLogger(__name__)

ENV_VAR = "KAFKA_PY_CPU_AFFINITY"
AUTO = "auto"
NONE = "none"


class CpuAffinityError(ValueError):
    """KAFKA_PY_CPU_AFFINITY holds something that is not a usable CPU choice."""


def parse_cpu_list(text: str) -> frozenset[int]:
    """CPUs of a list such as ``0,2-3`` (the format of taskset -c and Cpus_allowed_list)."""
    cpus: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise CpuAffinityError(f"empty item in CPU list {text!r}")
        low, dash, high = part.partition("-")
        try:
            first = int(low)
            last = int(high) if dash else first
        except ValueError:
            raise CpuAffinityError(f"{part!r} in {text!r} is not a CPU number or range") from None
        if first < 0 or last < first:
            raise CpuAffinityError(f"{part!r} in {text!r} is not a valid CPU range")
        cpus.update(range(first, last + 1))
    return frozenset(cpus)


def choose_cpus(value: Optional[str], allowed: frozenset[int], pid: int) -> Optional[frozenset[int]]:
    """The CPUs to pin to for the setting ``value`` (None when nothing is to change).

    ``allowed`` is the set the process may run on now; an explicit list must lie within it.
    """
    setting = (value or NONE).strip().lower() or NONE
    if setting == NONE:
        return None
    if setting == AUTO:
        if len(allowed) <= 1:
            return None
        ordered = sorted(allowed)
        return frozenset((ordered[pid % len(ordered)],))
    cpus = parse_cpu_list(setting)
    outside = cpus - allowed
    if outside:
        raise CpuAffinityError(f"CPU(s) {sorted(outside)} are not available to this process "
                               f"(allowed: {sorted(allowed)})")
    return None if cpus == allowed else cpus


def apply_cpu_affinity(environ: Mapping[str, str] = os.environ) -> Optional[frozenset[int]]:
    """Pin the calling process (and the threads it starts afterwards) as ``environ`` says;
    the CPUs pinned to, or None when the affinity was left alone. Raises CpuAffinityError."""
    if not hasattr(os, "sched_setaffinity"):
        return None  # not Linux: nothing to tune
    allowed = frozenset(os.sched_getaffinity(0))
    cpus = choose_cpus(environ.get(ENV_VAR), allowed, os.getpid())
    if cpus is None:
        return None
    os.sched_setaffinity(0, cpus)
    logger.info("Running on CPU(s) %s of %s (%s=%s)", ",".join(map(str, sorted(cpus))),
                ",".join(map(str, sorted(allowed))), ENV_VAR, environ.get(ENV_VAR))
    return cpus
