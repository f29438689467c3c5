"""KafkaApis' parts in modules of their own (KafkaApisPart): each handler names a method its
part has, a new KafkaApis imports none of them, the first request of a part builds it once
(also when two come at once), and its answer is the one the part gives."""
from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.schema_imports import import_schema_module
from kafka_py.server.kafka_apis import KafkaApis, KafkaApisPart
from tests.server.test_kafka_apis import env  # noqa: F401  (the fixture)

ROOT = Path(__file__).resolve().parents[2]
PARTS = {name: value for name, value in vars(KafkaApis).items() if isinstance(value, KafkaApisPart)}


def test_every_part_handler_names_a_method_of_its_part(env):  # noqa: F811
    seen = set()
    for api, handler in env.apis._handlers.items():
        if getattr(handler, "func", None) != env.apis._call_part:
            continue
        part, method = handler.args
        descriptor = PARTS[part]
        cls = getattr(import_schema_module(f"kafka_py.server.{descriptor.module}"), descriptor.class_name)
        assert callable(getattr(cls, method, None)), (api, part, method)
        seen.add(part)
    assert seen == set(PARTS)


def test_a_new_kafka_apis_imports_no_part():
    code = ("import sys\n"
            "from tests.server.test_kafka_apis import Apis\n"
            "import tempfile, pathlib\n"
            "with tempfile.TemporaryDirectory() as d:\n"
            "    e = Apis(pathlib.Path(d))\n"
            "    try:\n"
            "        print(sorted(m for m in sys.modules if m.startswith('kafka_py.server.kafka_apis_')))\n"
            "    finally:\n"
            "        e.close()\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    # kafka_apis_common (functions of the class itself) and kafka_apis_quotas (every answer's throttling) may be loaded
    loaded = eval(result.stdout.strip().splitlines()[-1])
    assert not set(loaded) & {f"kafka_py.server.{p.module}" for p in PARTS.values()}, loaded


def test_the_first_request_builds_the_part_once_and_it_answers(env):  # noqa: F811
    assert "_log_dirs" not in vars(env.apis)
    results, errors = [], []

    def call() -> None:
        try:
            results.append(env.call(ApiKeys.DESCRIBE_LOG_DIRS, 1, topics=None))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and len(results) == 2
    part = vars(env.apis)["_log_dirs"]
    assert env.apis._log_dirs is part
    log_dirs = env.broker.config.log_dirs
    for body in results + [env.call(ApiKeys.DESCRIBE_LOG_DIRS, 1, topics=None)]:
        assert [(Errors.for_code(r.error_code), r.log_dir) for r in body.results] == \
            [(Errors.NONE, d) for d in log_dirs]
    assert vars(env.apis)["_log_dirs"] is part
