"""The schema generator, on small specs written like Kafka's (comments, stray brackets)."""
from __future__ import annotations

import dataclasses
import importlib.util
import json

import pytest

from kafka_py.clients.common.protocol.codec import read_entity, write_entity
from kafka_py.clients.common.protocol.schema.generator import (
    GENERATED_APIS,
    Versions,
    generate,
    load_spec,
    snake_case,
)

REQUEST = """// header comment with "quotes"
{
  "apiKey": %(key)d,
  "type": "request",
  // Version 1 adds Epoch; version 2 is flexible.
  "name": "%(name)sRequest",
  "validVersions": "0-2",
  "flexibleVersions": "2+",
  "fields": [
    { "name": "BrokerId", "type": "int32", "versions": "0+", "entityType": "brokerId",
      "about": "a // not a comment" },
    { "name": "Epoch", "type": "int64", "versions": "1+", "default": "-1" },
    { "name": "Rack", "type": "string", "versions": "0+", "nullableVersions": "1+" },
    { "name": "Topics", "type": "[]TopicState", "versions": "0+", "fields": [
      { "name": "TopicName", "type": "string", "versions": "0+", "entityType": "topicName" },
      { "name": "TopicId", "type": "uuid", "versions": "2+" },
      { "name": "PartitionIds", "type": "[]int32", "versions": "0+" }
    ]}
  ]
}
]}
"""

RESPONSE = """{
  "apiKey": %(key)d, "type": "response", "name": "%(name)sResponse",
  "validVersions": "0-2", "flexibleVersions": "2+",
  "fields": [ { "name": "ErrorCode", "type": "int16", "versions": "0+" } ]
}
"""


@pytest.fixture
def spec_dir(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    for key, name in enumerate(GENERATED_APIS, start=4):
        (specs / f"{name}Request.json").write_text(REQUEST % {"key": key, "name": name})
        (specs / f"{name}Response.json").write_text(RESPONSE % {"key": key, "name": name})
    return specs


def field_names(cls) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def load_module(path):
    spec = importlib.util.spec_from_file_location(f"generated_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_helpers() -> None:
    assert snake_case("ZkVersion") == "zk_version"
    assert snake_case("V0Host") == "v0_host"
    assert snake_case("IsNew") == "is_new"
    assert snake_case("TopicId") == "topic_id"
    assert 5 in Versions.parse("4+") and 3 not in Versions.parse("4+")
    assert list(range(6)) == [v for v in range(6) if v in Versions.parse("0-5")]
    assert 0 not in Versions.parse("none") and 0 not in Versions.parse(None)


def test_load_spec_strips_comments_and_trailing_garbage(spec_dir) -> None:
    spec = load_spec(spec_dir / "StopReplicaRequest.json")
    assert spec["name"] == "StopReplicaRequest"
    assert spec["fields"][0]["about"] == "a // not a comment"


def test_generate(spec_dir, tmp_path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    written = generate(spec_dir, out, old_versions={})
    assert out / "stop_replica" / "v2" / "request.py" in written

    v0 = load_module(out / "stop_replica" / "v0" / "request.py")
    assert field_names(v0.StopReplicaRequest) == ["broker_id", "rack", "topics"]
    assert v0.StopReplicaRequest.__flexible__ is False

    v2 = load_module(out / "stop_replica" / "v2" / "request.py")
    cls = v2.StopReplicaRequest
    assert field_names(cls) == ["broker_id", "epoch", "rack", "topics"]
    assert cls.__flexible__ is True and cls.__api_key__ == 5 and cls.__version__ == 2
    request = cls(broker_id=1, rack=None, topics=(
        v2.TopicState(topic_name="t", topic_id=None, partition_ids=(1, 2)),))
    assert request.epoch == -1
    assert read_entity(cls, write_entity(request))[0] == request

    response = load_module(out / "controlled_shutdown" / "v1" / "response.py")
    (error_code,) = dataclasses.fields(response.ControlledShutdownResponse)
    assert error_code.metadata == {"kafka_type": "error_code"}
    index = (out / "index.py").read_text()
    assert '"kafka_py.clients.common.protocol.schema.stop_replica.v2.request:StopReplicaRequest"' in index


def test_tagged_fields_are_refused(spec_dir, tmp_path) -> None:
    path = spec_dir / "UpdateMetadataRequest.json"
    spec = load_spec(path)
    spec["fields"].append({"name": "Extra", "type": "int32", "versions": "2+",
                           "taggedVersions": "2+", "tag": 0})
    path.write_text(json.dumps(spec))
    with pytest.raises(NotImplementedError, match="tagged field Extra"):
        generate(spec_dir, tmp_path)
