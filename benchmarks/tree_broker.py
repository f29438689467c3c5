"""A harness broker that runs the code of another checkout, for same-run before/after
comparisons (``--tree PATH`` of the benchmarks): bench_broker's launcher started on the
harness's config, output file and log dir."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_broker import _RUN_FROM_TREE  # noqa: E402
from tests.integration.broker_harness import BrokerProcess  # noqa: E402


class TreeBroker(BrokerProcess):
    """A harness broker running the code of the checkout at ``root``."""

    def __init__(self, *args, root: pathlib.Path, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.root = root

    def start(self, timeout: float = 60.0, wait: bool = True) -> "TreeBroker":
        self._run_offset = self.output_path.stat().st_size if self.output_path.exists() else 0
        self._output = open(self.output_path, "ab")
        env = dict(os.environ, PYTHONUNBUFFERED="1", LOG_DIR=str(self.logs_dir))
        self.process = subprocess.Popen([sys.executable, "-c", _RUN_FROM_TREE, str(self.root), str(self.config_path)],
                                        cwd=self.root, stdout=self._output, stderr=subprocess.STDOUT, env=env)
        if wait:
            self.wait_started(timeout)
        return self
