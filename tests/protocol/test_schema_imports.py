"""Message schemas loaded by several threads at once, in a fresh interpreter: the request
and the response of every version of every API asked for by two threads released together
(kafka_py/clients/common/protocol/schema_imports.py). Without the schema import lock CPython raised
_DeadlockError for a few of the ~230 pairs in every run."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

_LOAD_IN_PAIRS = textwrap.dedent("""
    import json, threading
    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.messages import request_schema, response_schema

    errors, loaded, pairs = [], [], 0

    def load(schema_of, api, version, start):
        start.wait()
        try:
            loaded.append(schema_of(api.id, version).__name__)
        except Exception as e:
            errors.append(f"{api.name} v{version}: {e!r}")

    for api in ApiKeys:
        for version in api.schema_versions():
            start = threading.Barrier(2)
            threads = [threading.Thread(target=load, args=(schema_of, api, version, start))
                       for schema_of in (request_schema, response_schema)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            pairs += 1
    print(json.dumps({"pairs": pairs, "loaded": len(loaded), "errors": errors}))
""")


def test_request_and_response_schemas_load_from_two_threads_at_once():
    done = subprocess.run([sys.executable, "-c", _LOAD_IN_PAIRS], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["errors"] == []
    assert result["pairs"] > 100
    assert result["loaded"] == 2 * result["pairs"]
