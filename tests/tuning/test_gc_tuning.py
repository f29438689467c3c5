"""KAFKA_PY_GC: the garbage collector's thresholds (pure choice) and, in a child process,
their application and the freeze of the objects loaded at startup."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafka_py.tuning import TuningError, tune_process
from kafka_py.tuning.gc_tuning import BROKER_THRESHOLDS, GcTuningError, choose_thresholds

PYTHON_DEFAULT = (700, 10, 10)
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("value", [None, "", "  ", "broker", " Broker "])
def test_unset_and_broker_choose_the_broker_thresholds(value):
    assert choose_thresholds(value, PYTHON_DEFAULT) == BROKER_THRESHOLDS
    assert BROKER_THRESHOLDS[0] > PYTHON_DEFAULT[0]


def test_python_keeps_pythons_settings():
    assert choose_thresholds("python", PYTHON_DEFAULT) is None


def test_explicit_thresholds():
    assert choose_thresholds("20000,5,0", PYTHON_DEFAULT) == (20000, 5, 0)


@pytest.mark.parametrize("value", ["fast", "1,2", "1,2,3,4", "0,10,10", "a,b,c", "100,-1,10"])
def test_unusable_values_are_refused_naming_the_value(value):
    with pytest.raises(GcTuningError, match=repr(value)):
        choose_thresholds(value, PYTHON_DEFAULT)


def test_tune_process_names_the_variable():
    with pytest.raises(TuningError, match="KAFKA_PY_GC"):
        tune_process({"KAFKA_PY_GC": "fast"})


def _run(code: str, env_value: str | None) -> str:
    # A child process: the test runner's own collector must not change.
    environ = "{}" if env_value is None else "{'KAFKA_PY_GC': %r}" % env_value
    script = ("import gc\n"
              "from kafka_py.tuning import tune_process, freeze_startup_objects\n"
              f"tune_process({environ})\n" + code)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_default_sets_the_thresholds_and_freezes_what_was_loaded():
    out = _run("print(gc.get_threshold())\n"
               "assert not gc.isenabled()\n"  # off while the broker loads
               "assert freeze_startup_objects() is True\n"
               "assert gc.isenabled()\n"
               "assert gc.get_freeze_count() > 1000, gc.get_freeze_count()\n"
               # what comes after the freeze is still collected: a cycle made now is freed
               "class Node: pass\n"
               "a, b = Node(), Node(); a.other, b.other = b, a\n"
               "import weakref; ref = weakref.ref(a); del a, b\n"
               "gc.collect(); assert ref() is None\n"
               "print('ok')\n", None)
    assert out.splitlines() == [str(BROKER_THRESHOLDS), "ok"]


def test_python_leaves_the_collector_alone():
    out = _run("before = gc.get_threshold()\n"
               "print(freeze_startup_objects(), gc.get_freeze_count(), gc.get_threshold() == (700, 10, 10),\n"
               "      gc.isenabled())\n",
               "python")
    assert out == "False 0 True True"
