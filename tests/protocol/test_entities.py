"""build_entity: one description of a message serves every version; a key that no version
of the message has (a misspelling) fails at once, naming the key and the class."""
from __future__ import annotations

import datetime

import pytest
from kio.schema.errors import ErrorCode

from kafka_py.protocol.api_keys import ApiKeys
from kafka_py.protocol.entities import build_entity
from kafka_py.protocol.errors import Errors
from kafka_py.protocol.messages import request_schema, response_schema


def produce_response(version: int, partition: dict) -> object:
    return build_entity(response_schema(ApiKeys.PRODUCE, version), {
        "throttle_time": 5, "responses": [{"name": "t", "partition_responses": [partition]}]})


def test_misspelled_top_level_key_raises_naming_key_and_class() -> None:
    with pytest.raises(TypeError) as raised:
        build_entity(response_schema(ApiKeys.PRODUCE, 8), {"throttle_time_ms": 0, "responses": []})
    message = str(raised.value)
    assert "'throttle_time_ms'" in message
    assert "ProduceResponse" in message


def test_misspelled_nested_key_raises_naming_its_struct() -> None:
    with pytest.raises(TypeError) as raised:
        produce_response(8, {"index": 0, "eror_code": Errors.NOT_LEADER_OR_FOLLOWER})
    message = str(raised.value)
    assert "'eror_code'" in message
    assert "PartitionProduceResponse" in message


def test_misspelled_key_in_a_request_raises() -> None:
    with pytest.raises(TypeError, match="'max_wait_ms'"):
        build_entity(request_schema(ApiKeys.FETCH, 12), {"replica_id": -1, "max_wait_ms": 500, "topics": []})


def test_a_field_name_of_another_place_is_still_a_misspelling_here() -> None:
    # "name" is a field of the topic level, not of the partition level.
    with pytest.raises(TypeError, match="'name'"):
        produce_response(8, {"index": 0, "name": "t"})


def test_field_of_another_version_is_dropped() -> None:
    # log_start_offset exists from v5 and error_message from v8 of ProduceResponse.
    old = produce_response(3, {"index": 1, "error_code": Errors.NONE, "base_offset": 7, "log_start_offset": 2,
                               "error_message": "x", "record_errors": []})
    [partition] = old.responses[0].partition_responses
    assert not hasattr(partition, "log_start_offset")
    assert not hasattr(partition, "error_message")
    assert (partition.index, partition.base_offset) == (1, 7)
    new = produce_response(8, {"index": 1, "base_offset": 7, "log_start_offset": 2, "error_message": "x"})
    [partition] = new.responses[0].partition_responses
    assert (partition.log_start_offset, partition.error_message) == (2, "x")


def test_request_field_of_another_version_is_dropped() -> None:
    # session_id is a Fetch field from v7.
    request = build_entity(request_schema(ApiKeys.FETCH, 4), {
        "replica_id": -1, "max_wait": 500, "session_id": 3, "topics": []})
    assert not hasattr(request, "session_id")
    assert request.max_wait == datetime.timedelta(milliseconds=500)


def test_defaults_and_conversions_unchanged() -> None:
    response = produce_response(8, {"index": 0, "error_code": 6, "log_append_time": -1})
    [partition] = response.responses[0].partition_responses
    assert partition.error_code is ErrorCode.not_leader_or_follower
    assert partition.base_offset == 0  # required, not given: zero
    assert partition.log_append_time is None  # nullable timestamp, -1
    assert partition.error_message is None  # nullable string, not given
    assert partition.record_errors == ()
    assert response.throttle_time == datetime.timedelta(milliseconds=5)


def test_entities_given_as_objects_are_kept() -> None:
    first = produce_response(8, {"index": 0})
    topic = first.responses[0]
    again = build_entity(type(first), {"responses": [topic]})
    assert again.responses[0] is topic


def _every_field_name() -> set[str]:
    import dataclasses
    import importlib
    import pkgutil

    import kio.schema

    import kafka_py.protocol.schema

    names: set[str] = set()
    for package in (kio.schema, kafka_py.protocol.schema):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.rsplit(".", 1)[-1] not in ("request", "response"):
                continue
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                if isinstance(value, type) and dataclasses.is_dataclass(value):
                    names.update(f.name for f in dataclasses.fields(value))
    return names


def test_no_literal_key_in_the_code_is_a_field_of_no_message() -> None:
    """The dict keys written in the code that builds messages (``build_response``,
    ``build_entity``) are all field names of some message: a misspelling in a path the
    tests do not run (an error branch, a rare version) is caught here."""
    import ast
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2]
    names = _every_field_name()
    unknown = []
    for folder in ("server", "controller", "network", "log", "kafka_py"):
        for path in (root / folder).rglob("*.py"):
            if "protocol/schema" in path.as_posix():
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name not in ("build_response", "build_entity"):
                    continue
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Dict):
                        unknown += [f"{path.relative_to(root)}:{key.lineno}: {key.value}" for key in sub.keys
                                    if isinstance(key, ast.Constant) and isinstance(key.value, str)
                                    and key.value not in names]
    assert unknown == []
