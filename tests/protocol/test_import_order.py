"""Each protocol module imports on its own in a fresh interpreter: the package's modules
(messages and the fast writers it uses, kio_fields, the inter-broker schemas) do not depend
on one of them having been imported first."""
from __future__ import annotations

import subprocess
import sys

import pytest

MODULES = [
    "kafka_py.clients.common.protocol.schema",
    "kafka_py.clients.common.protocol.kio_fields",
    "kafka_py.clients.common.protocol.codec",
    "kafka_py.clients.common.protocol.entities",
    "kafka_py.clients.common.protocol.messages",
    "kafka_py.clients.common.protocol.fast_fields",
    "kafka_py.clients.common.protocol.fast_produce_response",
    "kafka_py.clients.common.protocol.fast_fetch_request",
    "kafka_py.clients.common.protocol.fast_fetch_response",
    "kafka_py.clients.common.protocol.fast_metadata_response",
    "kafka_py.clients.common.protocol.fast_response_writers",
]


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_first_in_a_fresh_interpreter(module: str, tmp_path) -> None:
    # run outside the source tree, so that only the installed package is on the path
    done = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
