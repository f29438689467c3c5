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


STAGE_COUNT = 96
STAGE_SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

/* A callable standing in for a Python function: calls it through a C function of its own,
   kp_stage_<index>, so that callgrind's inclusive count of that C function is what the
   Python function and everything under it cost. */
typedef struct {
    PyObject_HEAD
    PyObject *fn;
    vectorcallfunc vectorcall;
} Stage;

#define STAGE(K) \
    __attribute__((noinline)) PyObject *kp_stage_##K(PyObject *self, PyObject *const *args, size_t nargsf, \
                                                     PyObject *kwnames) { \
        PyObject *result = PyObject_Vectorcall(((Stage *)self)->fn, args, nargsf, kwnames); \
        return result; \
    }
""" + "".join(f"STAGE({k})\n" for k in range(STAGE_COUNT)) + r"""
static vectorcallfunc stage_calls[] = {""" + ", ".join(f"kp_stage_{k}" for k in range(STAGE_COUNT)) + r"""};

static PyObject *Stage_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *fn;
    int index;
    if (!PyArg_ParseTuple(args, "Oi", &fn, &index))
        return NULL;
    if (index < 0 || index >= (int)(sizeof(stage_calls) / sizeof(stage_calls[0]))) {
        PyErr_SetString(PyExc_ValueError, "stage index out of range");
        return NULL;
    }
    Stage *self = (Stage *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    Py_INCREF(fn);
    self->fn = fn;
    self->vectorcall = stage_calls[index];
    return (PyObject *)self;
}

static void Stage_dealloc(Stage *self) {
    Py_XDECREF(self->fn);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Stage_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static PyObject *Stage_wrapped(Stage *self, void *closure) {
    Py_INCREF(self->fn);
    return self->fn;
}

static PyGetSetDef Stage_getset[] = {
    {"__wrapped__", (getter)Stage_wrapped, NULL, NULL, NULL},
    {NULL},
};

static PyTypeObject StageType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kp_stages.Stage",
    .tp_basicsize = sizeof(Stage),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(Stage, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = Stage_get,
    .tp_new = Stage_new,
    .tp_dealloc = (destructor)Stage_dealloc,
    .tp_getset = Stage_getset,
};

static struct PyModuleDef stages_module = {PyModuleDef_HEAD_INIT, "kp_stages", NULL, -1, NULL};

PyMODINIT_FUNC PyInit_kp_stages(void) {
    if (PyType_Ready(&StageType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&stages_module);
    if (module == NULL)
        return NULL;
    Py_INCREF(&StageType);
    if (PyModule_AddObject(module, "Stage", (PyObject *)&StageType) < 0)
        return NULL;
    return module;
}
"""


class CallgrindStages:
    """Inclusive instruction counts of chosen Python functions ("stages").

    ``stand_in(fn, k)`` is a callable that calls ``fn`` through a C function of its own,
    ``kp_stage_<k>``; put in ``fn``'s place (on its class, in the modules that look it up),
    it makes callgrind count that C function's inclusive instructions like any other's, so
    ``inclusive_counts`` of a dump gives each stage's calls and instructions: its own and
    those of everything it calls, nested stages included. A stand-in costs a few hundred
    instructions a call (a C call into a fresh interpreter frame where the interpreter
    would have entered the Python function inline), charged to its caller."""

    def __init__(self, build_dir: Optional[pathlib.Path] = None) -> None:
        import importlib.util
        import sysconfig

        build_dir = build_dir or pathlib.Path(tempfile.gettempdir()) / "kafka-py-callgrind-marks"
        build_dir.mkdir(parents=True, exist_ok=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        library = build_dir / f"kp_stages{suffix}"
        source = build_dir / "kp_stages.c"
        if not (library.exists() and source.exists() and source.read_text() == STAGE_SOURCE):
            source.write_text(STAGE_SOURCE)
            # no sibling calls: each kp_stage_<k> must stay a frame of its own for callgrind
            subprocess.run(["gcc", "-O1", "-fno-optimize-sibling-calls", "-shared", "-fPIC",
                            f"-I{sysconfig.get_paths()['include']}", "-o", str(library), str(source)], check=True)
        spec = importlib.util.spec_from_file_location("kp_stages", library)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self._stage_type = module.Stage

    def stand_in(self, fn, index: int):
        """A callable doing what ``fn`` does, counted as ``kp_stage_<index>``; a method when
        put on a class."""
        return self._stage_type(fn, index)


def inclusive_counts(path: pathlib.Path) -> dict[str, tuple[int, int]]:
    """(calls, inclusive instructions) of each called function of one callgrind dump, summed
    over the call records of its callers (a function calling itself would count twice)."""
    names: dict[str, str] = {}
    totals: dict[str, tuple[int, int]] = {}
    pending: Optional[str] = None
    pending_calls = 0
    expect_cost = False

    def name_of(spec: str) -> str:
        match = re.match(r"\((\d+)\)(?: (.*))?$", spec)
        if not match:
            return spec
        if match.group(2) is not None:
            names[match.group(1)] = match.group(2)
        return names.get(match.group(1), spec)

    with open(path, errors="replace") as lines:
        for line in lines:
            if expect_cost:
                expect_cost = False
                parts = line.split()
                if pending is not None and len(parts) >= 2:
                    calls, cost = totals.get(pending, (0, 0))
                    totals[pending] = (calls + pending_calls, cost + int(parts[1]))
                continue
            if line.startswith("cfn="):
                pending = name_of(line[4:].strip())
            elif line.startswith("fn="):
                name_of(line[3:].strip())
            elif line.startswith("calls="):
                pending_calls = int(line[6:].split()[0])
                expect_cost = True
    return totals


def dump_paths(out_dir: pathlib.Path, thread: int = 1) -> list[tuple[str, pathlib.Path]]:
    """(label, path) of every dump a client request wrote in ``out_dir`` for ``thread``, in order."""
    found = []
    paths = out_dir.glob(f"callgrind.out.*-{thread:02d}")
    for path in sorted(paths, key=lambda p: [int(n) for n in re.findall(r"\d+", p.name)]):
        with open(path, errors="replace") as f:
            head = f.read(4096)
        label = re.search(r"^desc: Trigger: Client Request: (.*)$", head, re.M)
        if label:
            found.append((label.group(1).strip(), path))
    return found


if __name__ == "__main__":
    sys.exit("a helper of benchmarks/bench_request_path.py --instructions; not a benchmark of its own")
