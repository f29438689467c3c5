"""KAFKA_PY_SCHED_POLICY: the choice of scheduling policy (pure) and its application."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_py.tuning.sched_policy import SchedPolicyError, apply_sched_policy, choose_policy

OTHER, BATCH, FIFO = 0, 3, 1  # Linux's numbers, but any distinct values do here


@pytest.mark.parametrize("value", ["batch", " BATCH "])
def test_batch_replaces_the_normal_policy(value):
    assert choose_policy(value, OTHER, OTHER, BATCH) == BATCH


def test_batch_leaves_a_policy_chosen_by_someone_else():
    assert choose_policy("batch", FIFO, OTHER, BATCH) is None
    assert choose_policy("batch", BATCH, OTHER, BATCH) is None


@pytest.mark.parametrize("value", [None, "", "  ", "none", "None"])
def test_unset_and_none_change_nothing(value):
    # SCHED_BATCH is a tuning the user turns on (docs/operations.md)
    assert choose_policy(value, OTHER, OTHER, BATCH) is None


@pytest.mark.parametrize("value", ["fifo", "other", "1", "batchy"])
def test_unknown_values_are_refused_naming_the_value(value):
    with pytest.raises(SchedPolicyError, match=repr(value)):
        choose_policy(value, OTHER, OTHER, BATCH)


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux scheduling policies")
def test_apply_switches_a_child_process_and_its_threads():
    if os.sched_getscheduler(0) != os.SCHED_OTHER:
        pytest.skip("the tests run under a policy apply_sched_policy would keep")
    # In a child process: the policy of the test runner itself must not change.
    code = (
        "import os, threading\n"
        "from kafka_py.tuning.sched_policy import apply_sched_policy\n"
        "assert os.sched_getscheduler(0) == os.SCHED_OTHER\n"
        "assert apply_sched_policy({}) is None  # unset: left alone\n"
        "assert os.sched_getscheduler(0) == os.SCHED_OTHER\n"
        "assert apply_sched_policy({'KAFKA_PY_SCHED_POLICY': 'batch'}) == os.SCHED_BATCH\n"
        "seen = []\n"
        "t = threading.Thread(target=lambda: seen.append(os.sched_getscheduler(0)))\n"
        "t.start(); t.join()\n"
        "assert seen == [os.SCHED_BATCH], seen\n"
        "assert apply_sched_policy({'KAFKA_PY_SCHED_POLICY': 'batch'}) is None  # already batch\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            cwd=Path(__file__).resolve().parents[2])
    assert result.returncode == 0, result.stderr


def test_apply_with_none_leaves_the_process_alone():
    before = os.sched_getscheduler(0) if hasattr(os, "sched_getscheduler") else None
    assert apply_sched_policy({"KAFKA_PY_SCHED_POLICY": "none"}) is None
    if before is not None:
        assert os.sched_getscheduler(0) == before


def test_apply_refuses_a_bad_value():
    with pytest.raises(SchedPolicyError):
        apply_sched_policy({"KAFKA_PY_SCHED_POLICY": "fast"})
