"""The broker process's Linux scheduling policy, a tuning the user turns on: SCHED_BATCH.

A request passes the GIL from the Processor to a request handler and back. When the handler
answers it wakes the Processor (an eventfd write); under the normal policy the kernel lets
the freshly woken thread preempt the handler at once, although the Processor cannot run
a line of Python until the handler lets go of the GIL. It takes the CPU, finds the GIL
held, and sleeps again: two context switches for nothing, about one per request.

SCHED_BATCH is the normal time-sharing policy without wake-up preemption: a woken thread
waits until the running one blocks or its time slice ends. Inside one GIL-bound process
that is what we want, since the running thread is about to block anyway (on the request
queue, a read, the next poll). Nice values still apply and an unprivileged process may
switch itself to it, but another process woken on the broker's CPU waits for the broker's
time slice too, so the launcher leaves the policy alone unless told. docs/performance.md
("Broker tuning") has what it buys.

``KAFKA_PY_SCHED_POLICY`` chooses:

* ``none`` (the default, also when unset or empty): leave the policy alone;
* ``batch``: SCHED_BATCH, when the process runs under the normal policy (a process
  started under a real-time or idle policy keeps it).

``choose_policy`` is pure; ``apply_sched_policy`` is the one function with a side effect.
"""
from __future__ import annotations

import logging
import os
from typing import Mapping, Optional

logger = logging.getLogger(__name__)

ENV_VAR = "KAFKA_PY_SCHED_POLICY"
BATCH = "batch"
NONE = "none"


class SchedPolicyError(ValueError):
    """KAFKA_PY_SCHED_POLICY holds something other than a known policy choice."""


def choose_policy(value: Optional[str], current: int, normal: int, batch: int) -> Optional[int]:
    """The policy to switch to for the setting ``value`` (None: nothing to change).

    ``current`` is the process's policy now; ``normal`` and ``batch`` are the platform's
    SCHED_OTHER and SCHED_BATCH.
    """
    setting = (value or NONE).strip().lower() or NONE
    if setting == NONE:
        return None
    if setting != BATCH:
        raise SchedPolicyError(f"{value!r} is not one of {BATCH!r}, {NONE!r}")
    # Only the default time-sharing policy is replaced: someone who started the broker
    # under chrt with another policy meant it.
    return batch if current == normal else None


def apply_sched_policy(environ: Mapping[str, str] = os.environ) -> Optional[int]:
    """Switch the calling process (and the threads it starts afterwards) as ``environ``
    says; the policy set, or None when it was left alone. Raises SchedPolicyError."""
    value = environ.get(ENV_VAR)
    if not hasattr(os, "SCHED_BATCH"):
        # Not Linux: the default quietly does nothing, an explicit choice cannot be met.
        if value and value.strip().lower() not in (BATCH, NONE):
            raise SchedPolicyError(f"{value!r} is not one of {BATCH!r}, {NONE!r}")
        return None
    policy = choose_policy(value, os.sched_getscheduler(0), os.SCHED_OTHER, os.SCHED_BATCH)
    if policy is None:
        return None
    os.sched_setscheduler(0, policy, os.sched_param(0))
    logger.info("Scheduling policy SCHED_BATCH (%s=%s)", ENV_VAR, value)
    return policy
