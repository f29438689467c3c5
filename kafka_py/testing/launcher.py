"""The process that starts a test cluster's brokers: the broker's modules imported once,
then each broker forked from it.

Importing the broker (kio's message classes, the log, the raft client, the controllers)
takes a CPython process one and a half to two seconds on a small machine: most of a
broker's start. ``KafkaCluster`` starts this launcher once per test process; it imports
all of that, then serves requests on its stdin, one JSON object a line:

* ``{"op": "run", "module": M, "args": [...], "out": FILE, "env": {...}}``: fork a child
  that runs ``python -m M args`` (``kafka_py.core.kafka`` for a broker, ``kafka_py.core.
  tools.storage_tool`` to format one) on the modules already loaded, its output in FILE;
* ``{"op": "exec", "argv": [...], "out": FILE, "env": {...}}``: fork and exec a program
  (ZooKeeper's JVM);
* ``{"op": "own", "path": DIR}`` / ``{"op": "disown", "path": DIR}``: a cluster's directory,
  removed by the launcher if the test process dies without removing it;

and answers on its stdout, one JSON object a line: ``{"ready": pid}`` once the imports
are done, ``{"started": pid, "tag": T}`` for each request, ``{"exit": pid, "code": C}``
for each child that ended (it reaps them, being their parent).

Nothing outlives the test process. Each child asks the kernel for SIGKILL when the
launcher dies (``prctl(PR_SET_PDEATHSIG)``; the launcher is single-threaded, so its death
is its forking thread's), and the launcher dies with the test process in two ways: the
same prctl towards the test process, and the end of its stdin, a pipe only the test
process holds: whatever kills that process (``kill -9`` included) closes it, and the
launcher then kills its children, removes the directories it was given and exits.

It stays single-threaded so that forking it is safe: a fork copies only the forking
thread, and a lock another thread held at that moment would stay locked in the child.
"""
from __future__ import annotations

import ctypes
import gc
import json
import os
import runpy
import selectors
import shutil
import signal
import sys
import threading
import warnings
from typing import Callable, Optional

PR_SET_PDEATHSIG = 1
# What the launcher loads before it forks anything: the broker of either mode, the modules
# a starting broker imports only inside its functions (its KRaft roles, KafkaApis' halves),
# and the tools a cluster runs through it. A module left out is imported by every broker
# forked, at each start.
PRELOADED_MODULES = (
    "kafka_py.core.kafka",
    "kafka_py.server.kafka_raft_server",
    "kafka_py.server.kafka_server",
    "kafka_py.server.broker_server",
    "kafka_py.server.controller_server",
    "kafka_py.server.kafka_apis_acls",
    "kafka_py.server.kafka_apis_admin",
    "kafka_py.server.kafka_apis_group",
    "kafka_py.server.kafka_apis_log_dirs",
    "kafka_py.server.kafka_apis_quotas",
    "kafka_py.server.kafka_apis_reassignment",
    "kafka_py.server.kafka_apis_security",
    "kafka_py.server.kafka_apis_txn",
    "kafka_py.server.replica_fetcher_manager",
    "kafka_py.server.replica_alter_log_dirs_manager",
    "encodings.idna",  # the first connection to a host by name
    "kafka_py.core.tools.storage_tool",
)


def die_with_parent(expected_parent: int, sig: int = signal.SIGKILL) -> None:
    """Have the kernel send ``sig`` to this process when its parent dies; exit at once if
    the parent already has."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    # the parent may have died before the prctl: then this process was re-parented
    if os.getppid() != expected_parent:
        os._exit(1)


def dies_with_this_process(then: Optional[Callable[[], None]] = None) -> Optional[Callable[[], None]]:
    """A ``preexec_fn`` for ``subprocess.Popen`` that ties the child to the calling process:
    the kernel SIGKILLs it when this process dies, ``kill -9`` included (``then``, when given,
    runs after). For tests that start a broker as their own child rather than through a
    launcher.

    The kernel ties the signal to the *thread* that forked, not to its process: a child
    forked from a thread that ends before the test would be killed with it. Only a child of
    the main thread, which lives as long as the process, is tied; from another thread the
    result is ``then`` alone."""
    if threading.current_thread() is not threading.main_thread():
        return then
    parent = os.getpid()
    if sys.platform.startswith("linux"):
        # looked up here, not after the fork: loading a library in a child forked from a
        # threaded process could wait on a loader lock some other thread held at the fork
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    else:
        prctl = None

    def preexec() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)  # the parent died before the prctl
        if then is not None:
            then()

    return preexec


def finish_preload() -> None:
    # Everything loaded so far lives as long as the brokers: keep the collector off it, and
    # the forked brokers share its pages with the launcher instead of copying them.
    gc.collect()
    gc.freeze()


class Launcher:
    def __init__(self) -> None:
        self.children: set[int] = set()
        self.owned_dirs: set[str] = set()
        self._input = b""
        self._stdin: Optional[selectors.BaseSelector] = None

    def reply(self, message: dict) -> None:
        data = (json.dumps(message) + "\n").encode()
        while data:
            data = data[os.write(1, data):]

    def serve(self) -> None:
        """Import the broker's modules, then serve until stdin ends. A program to exec
        (ZooKeeper) is started at once, even during the imports, which a broker to run
        needs first: those wait in ``deferred``."""
        import importlib

        to_load = list(PRELOADED_MODULES)
        deferred: list[dict] = []
        self._stdin = selectors.DefaultSelector()
        self._stdin.register(0, selectors.EVENT_READ)
        while True:
            readable = self._stdin.select(0 if to_load else 0.05)
            if readable:
                chunk = os.read(0, 65536)
                if not chunk:
                    self.finish()
                    return
                self._input += chunk
                while b"\n" in self._input:
                    line, self._input = self._input.split(b"\n", 1)
                    if line.strip():
                        request = json.loads(line)
                        if request["op"] == "own":
                            self.owned_dirs.add(request["path"])
                        elif request["op"] == "disown":
                            self.owned_dirs.discard(request["path"])
                        elif to_load and request["op"] != "exec":
                            deferred.append(request)
                        else:
                            self.handle(request)
            if to_load:
                importlib.import_module(to_load.pop(0))
                if not to_load:
                    finish_preload()
                    self.reply({"ready": os.getpid()})
                    for request in deferred:
                        self.handle(request)
                    deferred.clear()
            self.reap()

    def finish(self) -> None:
        """The test process is gone: nothing it started may stay."""
        self.stop_children()
        for path in self.owned_dirs:
            shutil.rmtree(path, ignore_errors=True)
        self.owned_dirs.clear()

    def handle(self, request: dict) -> None:
        pid = os.fork()
        if pid == 0:
            if self._stdin is not None:  # the launcher's, not the child's
                self._stdin.close()
            self._child(request)  # never returns
        self.children.add(pid)
        self.reply({"started": pid, "tag": request.get("tag")})

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.children.discard(pid)
            self.reply({"exit": pid, "code": os.waitstatus_to_exitcode(status)})

    def stop_children(self) -> None:
        for pid in list(self.children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in list(self.children):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self.children.clear()

    def _child(self, request: dict) -> None:
        code = 1
        try:
            die_with_parent(self.launcher_pid)
            out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            os.dup2(out, 1)
            os.dup2(out, 2)
            os.closerange(3, 65536)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.environ.update(request.get("env") or {})
            if "cwd" in request:
                os.chdir(request["cwd"])
            if request["op"] == "exec":
                os.execvpe(request["argv"][0], request["argv"], os.environ)
            sys.argv = [request["module"], *request.get("args", [])]
            # runpy's warning that the module is loaded already: it is, on purpose
            warnings.filterwarnings("ignore", message=".*found in sys.modules after import of package",
                                    category=RuntimeWarning)
            try:
                runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # noqa: BLE001  (whatever happens, the child must not return)
            import traceback

            traceback.print_exc()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)

    launcher_pid = 0


def main(argv: Optional[list[str]] = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    parent = int(args[0]) if args else os.getppid()
    launcher = Launcher()

    def parent_died(_signum: int, _frame: object) -> None:
        if os.getpid() != Launcher.launcher_pid:
            os._exit(1)  # a child forked a moment ago, not yet running its own code
        launcher.finish()
        os._exit(0)

    # SIGTERM rather than SIGKILL for the launcher itself: it has its children and the
    # clusters' directories to clean up first.
    Launcher.launcher_pid = os.getpid()
    signal.signal(signal.SIGTERM, parent_died)
    die_with_parent(parent, signal.SIGTERM)
    # Ctrl-C in the terminal is for the test process, which stops the brokers in order.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    launcher.serve()


if __name__ == "__main__":
    main()
