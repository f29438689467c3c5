"""leave_out_test_libraries: in a child process, the protocol codec imported after it works
without Hypothesis and leaves it unimported; a process that already holds Hypothesis keeps it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kafka_py.tuning.startup_imports import leave_out_test_libraries

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_marks_only_what_is_not_imported_yet():
    modules: dict[str, object] = {}
    assert leave_out_test_libraries(modules) == ["hypothesis"]
    assert modules == {"hypothesis": None}
    held = object()
    modules = {"hypothesis": held}
    assert leave_out_test_libraries(modules) == []
    assert modules["hypothesis"] is held


def test_the_codec_works_without_hypothesis_once_left_out():
    out = _run(
        "import sys\n"
        "from kafka_py.tuning.startup_imports import leave_out_test_libraries\n"
        "leave_out_test_libraries()\n"
        "from kafka_py.clients.common.protocol.api_keys import ApiKeys\n"
        "from kafka_py.clients.common.protocol.headers import RequestHeader\n"
        "from kafka_py.clients.common.protocol.messages import decode_request, encode_request, request_schema\n"
        "schema = request_schema(ApiKeys.METADATA.id, 9)\n"
        "body = schema(topics=None, allow_auto_topic_creation=True, include_cluster_authorized_operations=False,\n"
        "              include_topic_authorized_operations=False)\n"
        "frame = encode_request(RequestHeader.for_request(ApiKeys.METADATA, 9, 7, 'c'), body)\n"
        "header, parsed = decode_request(frame[4:])\n"
        "assert header.correlation_id == 7 and parsed == body, (header, parsed)\n"
        "print(sys.modules['hypothesis'] is None, 'hypothesis.strategies' in sys.modules)\n")
    assert out == "True False"


def test_without_it_kio_imports_hypothesis():
    # What the function exists for: kio pulls Hypothesis in when it is installed.
    out = _run("import sys\n"
               "import kio.static.primitive\n"
               "print(sys.modules.get('hypothesis') is not None)\n")
    assert out == "True"
