"""Instruction counts of a stretch of Python code, under ``valgrind --tool=callgrind``.

Seconds on these small VMs move by 2x within a day; the number of instructions a piece of
code executes does not. Callgrind counts them, but sees C functions only, so a Python
benchmark marks the stretch it wants counted with callgrind's client requests
(``<valgrind/callgrind.h>``, Debian's valgrind package): a tiny C library, compiled here on
first use with the machine's gcc and loaded with ctypes, whose functions are no-ops outside
valgrind.

    marks = CallgrindMarks.load()
    marks.start()          # instrumentation on (the run starts with it off: faster setup)
    ...                    # the requests to count
    marks.dump("produce-1")  # the counts since start() written as one dump, then zeroed
    marks.stop()

``run_under_callgrind`` re-runs a command under valgrind with instrumentation off at start,
each thread counted apart, and ``dumps`` reads each dump's label and the instruction count
(``Ir``) of the thread that ran the marks (the main thread). The process's other threads
(a broker's timers and background tasks, a socket drained for the benchmark) run at
moments that depend on the clock, not on the code counted, so they are left out.
"""
from __future__ import annotations

import ctypes
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from typing import Optional, Sequence

HEADER = pathlib.Path("/usr/include/valgrind/callgrind.h")
SOURCE = r"""
#include <valgrind/callgrind.h>
int kp_running_on_valgrind(void) { return RUNNING_ON_VALGRIND; }
void kp_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void kp_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
void kp_zero(void) { CALLGRIND_ZERO_STATS; }
void kp_dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
"""


class CallgrindMarks:
    def __init__(self, library: ctypes.CDLL) -> None:
        self._lib = library
        self._lib.kp_dump.argtypes = [ctypes.c_char_p]

    @classmethod
    def load(cls, build_dir: Optional[pathlib.Path] = None) -> "CallgrindMarks":
        if not HEADER.exists():
            raise RuntimeError(f"{HEADER} is missing: install Debian's valgrind package")
        build_dir = build_dir or pathlib.Path(tempfile.gettempdir()) / "kafka-py-callgrind-marks"
        build_dir.mkdir(parents=True, exist_ok=True)
        library = build_dir / "libkpmarks.so"
        source = build_dir / "marks.c"
        current = library.exists() and source.exists() and source.read_text() == SOURCE
        if not current:
            source.write_text(SOURCE)
            subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
        return cls(ctypes.CDLL(str(library)))

    @property
    def running_on_valgrind(self) -> bool:
        return self._lib.kp_running_on_valgrind() != 0

    def start(self) -> None:
        self._lib.kp_start()
        self._lib.kp_zero()

    def stop(self) -> None:
        self._lib.kp_stop()

    def dump(self, label: str) -> None:
        self._lib.kp_dump(label.encode())


def run_under_callgrind(argv: Sequence[str], out_dir: pathlib.Path, env: Optional[dict] = None) -> int:
    """``argv`` under callgrind, instrumentation off until the program's first ``start()``;
    its dumps in ``out_dir``. Hash seeds fixed, so that two runs walk the same dicts."""
    command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--dump-instr=no", "--dump-line=no",
               "--separate-threads=yes", f"--callgrind-out-file={out_dir}/callgrind.out.%p", *argv]
    run_env = dict(os.environ if env is None else env, PYTHONHASHSEED="0")
    return subprocess.run(command, env=run_env).returncode


def dumps(out_dir: pathlib.Path, thread: int = 1) -> list[tuple[str, int]]:
    """(label, instructions of ``thread``) of every dump a client request wrote in ``out_dir``,
    in order; thread 1 is the main thread."""
    found = []
    paths = out_dir.glob(f"callgrind.out.*-{thread:02d}")
    for path in sorted(paths, key=lambda p: [int(n) for n in re.findall(r"\d+", p.name)]):
        text = path.read_text(errors="replace")
        label = re.search(r"^desc: Trigger: Client Request: (.*)$", text, re.M)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if label and total:
            found.append((label.group(1).strip(), int(total.group(1))))
    return found


if __name__ == "__main__":
    sys.exit("a helper of benchmarks/bench_request_path.py --instructions; not a benchmark of its own")
