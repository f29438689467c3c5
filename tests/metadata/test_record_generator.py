"""The metadata record generator, on small specs written like Kafka's record specs."""
from __future__ import annotations

import dataclasses
import importlib.util
import json

import pytest

from kafka_py.metadata.records import generator
from kafka_py.clients.common.protocol.codec import read_entity, write_entity

SPEC = {
    "apiKey": 5, "type": "metadata", "name": "PartitionChangeRecord",
    "validVersions": "0-1", "flexibleVersions": "1+",
    "fields": [
        {"name": "PartitionId", "type": "int32", "versions": "0+", "default": "-1"},
        {"name": "Port", "type": "uint16", "versions": "0+"},
        {"name": "Isr", "type": "[]int32", "default": "null", "versions": "1+",
         "nullableVersions": "1+", "taggedVersions": "1+", "tag": 0},
        {"name": "Leader", "type": "int32", "default": "-2", "versions": "1+",
         "taggedVersions": "1+", "tag": 1},
        {"name": "Fenced", "type": "int8", "versions": "1+", "taggedVersions": "1+", "tag": 2},
        {"name": "Names", "type": "[]Name", "versions": "1+", "taggedVersions": "1+", "tag": 3,
         "fields": [{"name": "Value", "type": "string", "versions": "1+"}]},
    ],
}


def load(path):
    spec = importlib.util.spec_from_file_location(f"generated_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def out(tmp_path, monkeypatch):
    specs = tmp_path / "specs"
    specs.mkdir()
    monkeypatch.setattr(generator, "GENERATED_RECORDS", ("PartitionChangeRecord",))
    (specs / "PartitionChangeRecord.json").write_text("// license\n" + json.dumps(SPEC))
    out = tmp_path / "out"
    out.mkdir()
    generator.generate(specs, out)
    return out


def test_versions_and_tagged_fields(out) -> None:
    v0 = load(out / "partition_change_record" / "v0.py").PartitionChangeRecord
    assert [f.name for f in dataclasses.fields(v0)] == ["partition_id", "port"]
    assert v0.__flexible__ is False and v0.__api_key__ == 5

    v1 = load(out / "partition_change_record" / "v1.py").PartitionChangeRecord
    tags = {f.name: (f.metadata.get("tag"), f.default) for f in dataclasses.fields(v1)}
    assert tags["isr"] == (0, None)
    assert tags["leader"] == (1, -2)
    assert tags["fenced"] == (2, 0)   # Kafka's implicit default, written out
    assert tags["names"] == (3, ())
    record = v1(partition_id=1, port=65535)
    # only the count of tagged fields (zero) follows the plain fields
    assert write_entity(record) == b"\x00\x00\x00\x01\xff\xff\x00"
    changed = v1(partition_id=1, port=2, isr=(3,), fenced=1)
    assert read_entity(v1, write_entity(changed))[0] == changed


def test_record_type_module(out) -> None:
    text = (out / "metadata_record_type.py").read_text()
    assert "PARTITION_CHANGE_RECORD = 5" in text
    assert "(5, 1): PartitionChangeRecordV1," in text
    assert "5: (0, 1)," in text


def test_tagged_struct_is_refused(tmp_path, monkeypatch) -> None:
    spec = dict(SPEC, fields=[{"name": "One", "type": "Name", "versions": "0+",
                               "taggedVersions": "0+", "tag": 0,
                               "fields": [{"name": "Value", "type": "string", "versions": "0+"}]}],
                flexibleVersions="0+")
    (tmp_path / "PartitionChangeRecord.json").write_text(json.dumps(spec))
    monkeypatch.setattr(generator, "GENERATED_RECORDS", ("PartitionChangeRecord",))
    with pytest.raises(NotImplementedError, match="tagged Name field One"):
        generator.generate(tmp_path, tmp_path)
