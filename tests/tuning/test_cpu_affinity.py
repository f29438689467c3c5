"""KAFKA_PY_CPU_AFFINITY: parsing and the choice of CPUs (pure functions), and the launcher's
refusal of an unusable value."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_py.tuning import TuningError, tune_process
from kafka_py.tuning.cpu_affinity import CpuAffinityError, choose_cpus, parse_cpu_list

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("text, cpus", [
    ("0", {0}), ("3", {3}), ("0,2", {0, 2}), ("0-3", {0, 1, 2, 3}), ("1,4-5, 7", {1, 4, 5, 7}), ("2-2", {2}),
])
def test_parse_cpu_list(text, cpus):
    assert parse_cpu_list(text) == frozenset(cpus)


@pytest.mark.parametrize("text", ["", "a", "1,", "-1", "3-1", "1-x", "1.5", "0,,1"])
def test_parse_cpu_list_rejects(text):
    with pytest.raises(CpuAffinityError):
        parse_cpu_list(text)


def test_auto_picks_one_allowed_cpu_by_pid():
    allowed = frozenset({0, 2, 5})
    chosen = {pid: choose_cpus("auto", allowed, pid) for pid in range(6)}
    assert all(len(cpus) == 1 and cpus <= allowed for cpus in chosen.values())
    # consecutive process ids land on different CPUs
    assert {next(iter(c)) for c in chosen.values()} == allowed
    assert choose_cpus("AUTO", allowed, 4) == choose_cpus("auto", allowed, 4)


@pytest.mark.parametrize("value", [None, "", "  "])
def test_unset_leaves_the_affinity_alone(value):
    # pinning is a tuning the user turns on (docs/operations.md)
    assert choose_cpus(value, frozenset({0, 1, 2, 3}), 5) is None


def test_auto_on_one_cpu_and_none_change_nothing():
    assert choose_cpus("auto", frozenset({1}), 123) is None
    assert choose_cpus("none", frozenset({0, 1}), 123) is None
    assert choose_cpus(" None ", frozenset({0, 1}), 123) is None


def test_explicit_list_must_be_allowed():
    assert choose_cpus("1", frozenset({0, 1}), 7) == frozenset({1})
    assert choose_cpus("0-1", frozenset({0, 1}), 7) is None  # already so
    with pytest.raises(CpuAffinityError, match="not available"):
        choose_cpus("4", frozenset({0, 1}), 7)
    with pytest.raises(CpuAffinityError):
        choose_cpus("first", frozenset({0, 1}), 7)


@pytest.mark.parametrize("value, problem", [("fast", "not a CPU number"), ("4096", "not available"),
                                            ("1,", "empty item")])
def test_tune_process_names_the_variable(value, problem):
    # refused before anything is changed: the choice is made before the affinity is set
    before = os.sched_getaffinity(0)
    with pytest.raises(TuningError, match=f"Invalid KAFKA_PY_CPU_AFFINITY: .*{problem}"):
        tune_process({"KAFKA_PY_CPU_AFFINITY": value})
    assert os.sched_getaffinity(0) == before


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to pin to one of them")
def test_apply_pins_the_process_and_returns_the_cpus():
    # in a child process: the test runner's own affinity must not change
    chosen = max(os.sched_getaffinity(0))
    script = ("import os\n"
              "from kafka_py.tuning.cpu_affinity import apply_cpu_affinity\n"
              "print(apply_cpu_affinity({}), len(os.sched_getaffinity(0)))\n"
              f"print(sorted(apply_cpu_affinity({{'KAFKA_PY_CPU_AFFINITY': '{chosen}'}})), sorted(os.sched_getaffinity(0)))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"None {len(os.sched_getaffinity(0))}", f"[{chosen}] [{chosen}]"]
