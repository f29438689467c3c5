"""The fuzz targets in the test suite: every seed and regression input replayed in process,
then every target run under atheris for a bounded number of inputs.

KAFKA_PY_FUZZ_RUNS (default 300) is the number of inputs a target runs, its seed corpus
included; KAFKA_PY_FUZZ_SECONDS (default 6) bounds each run's time. A long campaign is
``python -m tests.fuzz <target>`` by hand (docs/fuzzing.md).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.fuzz.harness import FUZZ_DIR, TARGETS, corpus_inputs, corpus_of, target_module

RUNS = int(os.environ.get("KAFKA_PY_FUZZ_RUNS", "300"))
SECONDS = int(os.environ.get("KAFKA_PY_FUZZ_SECONDS", "6"))
ROOT = FUZZ_DIR.parents[1]


@pytest.mark.parametrize("name", list(TARGETS))
def test_corpus_replays(name):
    """Every input of the target's corpus (seeds and past findings) meets its contract."""
    inputs = list(corpus_inputs(name))
    assert inputs, f"no seed corpus for {name}: python -m tests.fuzz.make_seeds {name}"
    one_input = target_module(name).one_input
    for label, data in inputs:
        try:
            one_input(data)
        except Exception as e:  # noqa: BLE001 - named with its input
            raise AssertionError(f"{name} corpus input {label}: {e!r}") from e


@pytest.fixture(scope="module")
def fuzz_runs(tmp_path_factory):
    """Every target under atheris, two at a time (each is one process on one core)."""
    pytest.importorskip("atheris")

    # made here, not in the pool's threads: tmp_path_factory is not safe to call from two at once
    works = {name: tmp_path_factory.mktemp(f"fuzz-{name}") for name in TARGETS}

    def run(name: str) -> tuple[int, str]:
        work = works[name]
        (work / "corpus").mkdir()
        command = [sys.executable, "-m", "tests.fuzz", name, f"-runs={RUNS}", f"-max_total_time={SECONDS}",
                   "-seed=1", f"-artifact_prefix={work}/", "-print_final_stats=1",
                   str(work / "corpus"), str(corpus_of(name))]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, errors="replace",
                              timeout=SECONDS + 120)
        return done.returncode, done.stdout + done.stderr

    with ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 2) // 2)) as pool:
        return dict(zip(TARGETS, pool.map(run, TARGETS)))


@pytest.mark.parametrize("name", list(TARGETS))
def test_fuzz_target(name, fuzz_runs):
    returncode, output = fuzz_runs[name]
    assert returncode == 0, f"fuzz target {name} found a failing input:\n{output[-6000:]}"
    done = re.search(r"Done (\d+) runs", output)
    assert done and int(done.group(1)) > 0, output[-3000:]
