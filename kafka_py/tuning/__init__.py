"""Broker tuning: kafka-py's performance machinery that has no counterpart in Kafka's source.

Everything here exists because the broker is CPython (one interpreter lock, threads that
hand the GIL over at each system call) and none of it changes what a client sees. The
ported classes reach it through one line a method, so they read as Kafka's do:
Log._add_segment's hook and FileRecords.append's mark (the prefaulter), LogManager making,
starting and stopping the prefaulter, the Processor's wake-ups (``enqueue_response`` and
``poll``) and ReplicaManager.append_records' batching of them, the Acceptor's accepts per
ready key, and kafka.py's ``tune_process`` and ``leave_out_test_libraries``. The
hand-written writers of the Produce, Fetch and Metadata messages are protocol code
(kafka_py/clients/common/protocol/fast_*.py), and KafkaApis sends its Produce and Metadata answers with
them in server/kafka_apis_fast_answers.py.

* ``cpu_affinity`` and ``sched_policy``: the broker process pinned to one CPU and put
  under SCHED_BATCH, both off unless the environment turns them on
  (``KAFKA_PY_CPU_AFFINITY``, ``KAFKA_PY_SCHED_POLICY``; docs/operations.md);
* ``page_cache_prefaulter``: the page cache filled ahead of the appends of preallocated
  active segments; ``prefault_mark``: where a FileRecords' appends ask it for the next fill;
* ``gc_tuning``: the cyclic garbage collector's thresholds sized for a broker's heap, and
  the objects loaded at startup frozen (``KAFKA_PY_GC``; docs/operations.md);
* ``startup_imports``: Hypothesis, which kio imports whenever it is installed, left out of
  the broker process (kafka.py's ``main``; docs/kraft.md);
* ``wakeups``: a Processor woken for a queued answer only while it may be asleep in
  select, once a poll (``ProcessorWakeups``), and once after a handler has queued several
  answers (the follower fetches a leader append completes), not once per answer
  (``ReplicaManager.append_records``);
* ``accept_batch``: an Acceptor taking up to 64 connections from its listen queue each time
  select reports it ready, not one (``Acceptor.accept_new_connections``).

docs/performance.md, "Broker tuning", says what each piece buys, with the command that
measures it.
"""
from __future__ import annotations

import os
from typing import Mapping

from kafka_py.tuning.cpu_affinity import ENV_VAR as CPU_AFFINITY_ENV_VAR, CpuAffinityError, apply_cpu_affinity
from kafka_py.tuning.gc_tuning import ENV_VAR as GC_ENV_VAR, GcTuningError, apply_gc_tuning, freeze_startup_objects
from kafka_py.tuning.sched_policy import ENV_VAR as SCHED_POLICY_ENV_VAR, SchedPolicyError, apply_sched_policy

__all__ = ["TuningError", "tune_process", "freeze_startup_objects"]


class TuningError(ValueError):
    """A tuning variable of the environment holds something unusable; the message names it."""


def tune_process(environ: Mapping[str, str] = os.environ) -> None:
    """Apply ``KAFKA_PY_CPU_AFFINITY``, ``KAFKA_PY_SCHED_POLICY`` and ``KAFKA_PY_GC`` to the
    calling process, before it starts any thread so that every thread inherits the CPUs and
    the policy. The launcher calls ``freeze_startup_objects`` later, once the broker is
    built and before it starts."""
    try:
        apply_cpu_affinity(environ)
    except CpuAffinityError as e:
        raise TuningError(f"Invalid {CPU_AFFINITY_ENV_VAR}: {e}") from None
    try:
        apply_sched_policy(environ)
    except SchedPolicyError as e:
        raise TuningError(f"Invalid {SCHED_POLICY_ENV_VAR}: {e}") from None
    try:
        apply_gc_tuning(environ)
    except GcTuningError as e:
        raise TuningError(f"Invalid {GC_ENV_VAR}: {e}") from None
