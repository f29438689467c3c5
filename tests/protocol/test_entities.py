"""build_entity: one description of a message serves every version; a key that no version
of the message has (a misspelling) fails at once, naming the key and the class."""
from __future__ import annotations

import datetime

import pytest
from kio.schema.errors import ErrorCode

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity, new_entity, to_version
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema, response_schema


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

    import kafka_py.clients.common.protocol.schema

    names: set[str] = set()
    for package in (kio.schema, kafka_py.clients.common.protocol.schema):
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


# ---------------------------------------------------------------- new_entity and to_version

def _newest_response(api: ApiKeys) -> type:
    return response_schema(api, api.supported_versions()[-1])


def _struct(message_cls: type, name: str) -> type:
    import sys

    return vars(sys.modules[message_cls.__module__])[name]


def test_new_entity_refuses_a_misspelled_keyword_at_the_call() -> None:
    newest = _newest_response(ApiKeys.DELETE_TOPICS)
    with pytest.raises(TypeError, match="'responsess'"):
        new_entity(newest, throttle_time=0, responsess=())
    # a field of another version of the same struct is not a field of this class either
    with pytest.raises(TypeError, match="'throttle_time_ms'"):
        new_entity(newest, throttle_time_ms=0)


def test_a_misspelled_keyword_fails_in_kio_constructors_too() -> None:
    result = _struct(_newest_response(ApiKeys.DELETE_TOPICS), "DeletableTopicResult")
    with pytest.raises(TypeError):
        result(name="t", topic_id=None, error_kode=ErrorCode.none)
    with pytest.raises(TypeError):  # a required field left out
        result(name="t", topic_id=None)


def test_new_entity_fills_kafka_defaults_and_converts() -> None:
    newest = _newest_response(ApiKeys.DELETE_TOPICS)
    result = new_entity(_struct(newest, "DeletableTopicResult"), name="t", error_code=Errors.TOPIC_DELETION_DISABLED)
    assert result.error_code is ErrorCode.topic_deletion_disabled
    assert result.topic_id is None and result.error_message is None
    assert new_entity(newest, responses=(result,)).throttle_time == datetime.timedelta(0)


def test_to_version_drops_a_field_only_the_newest_version_has() -> None:
    newest_cls = _newest_response(ApiKeys.DELETE_TOPICS)
    newest = new_entity(newest_cls, throttle_time=7, responses=(new_entity(
        _struct(newest_cls, "DeletableTopicResult"), name="t", error_code=Errors.NONE, error_message="m"),))
    v1 = to_version(newest, 1)
    assert type(v1) is response_schema(ApiKeys.DELETE_TOPICS, 1)
    [topic] = v1.responses
    assert type(topic).__module__ == type(v1).__module__  # the nested struct of v1, not v6's
    assert not hasattr(topic, "error_message") and not hasattr(topic, "topic_id")
    assert (topic.name, topic.error_code, v1.throttle_time) == ("t", ErrorCode.none, datetime.timedelta(milliseconds=7))
    assert to_version(newest, 5).responses[0].error_message == "m"
    assert to_version(newest, 6) is newest


def test_to_version_converts_nested_structs_at_every_level() -> None:
    newest_cls = _newest_response(ApiKeys.PRODUCE)
    newest = new_entity(newest_cls, responses=(
        new_entity(_struct(newest_cls, "TopicProduceResponse"), name="t", partition_responses=(
            new_entity(_struct(newest_cls, "PartitionProduceResponse"), index=2, base_offset=9, log_start_offset=4,
                       record_errors=(new_entity(_struct(newest_cls, "BatchIndexAndErrorMessage"), batch_index=1),)),
        )),))
    for version in ApiKeys.PRODUCE.supported_versions():
        old = to_version(newest, version)
        [partition] = old.responses[0].partition_responses
        assert type(partition).__version__ == version
        assert (partition.index, partition.base_offset) == (2, 9)
        assert hasattr(partition, "log_start_offset") == (version >= 5)
        assert hasattr(partition, "record_errors") == (version >= 8)
        if version >= 8:
            assert type(partition.record_errors[0]).__version__ == version


def test_to_version_gives_defaults_to_fields_the_source_lacks() -> None:
    # an old version's entity written at the newest: the fields it lacks take their defaults
    old = build_entity(response_schema(ApiKeys.PRODUCE, 3), {"responses": [
        {"name": "t", "partition_responses": [{"index": 0, "base_offset": 3}]}]})
    newest = to_version(old, ApiKeys.PRODUCE.supported_versions()[-1])
    [partition] = newest.responses[0].partition_responses
    assert (partition.base_offset, partition.record_errors, partition.error_message) == (3, (), None)
    assert partition.log_start_offset == -1  # the schema's default for the field


def test_the_handlers_answer_with_the_newest_classes_written_at_the_request_version() -> None:
    """A response class the handlers construct is the newest version this broker speaks."""
    import importlib

    from kafka_py.server.kafka_apis_common import error_responses

    for api in error_responses():
        newest = _newest_response(api)
        for module in ("kafka_py.server.kafka_apis", "kafka_py.server.kafka_apis_admin",
                       "kafka_py.server.kafka_apis_group", "kafka_py.server.kafka_apis_txn",
                       "kafka_py.server.kafka_apis_acls", "kafka_py.server.kafka_apis_quotas",
                       "kafka_py.server.kafka_apis_security", "kafka_py.server.kafka_apis_log_dirs",
                       "kafka_py.server.kafka_apis_reassignment"):
            used = vars(importlib.import_module(module)).get(newest.__name__)
            if used is not None and getattr(used, "__api_key__", None) == newest.__api_key__:
                assert used is newest, f"{module} answers {api.name} with v{used.__version__}, newest v{newest.__version__}"


def test_every_keyword_the_handlers_construct_a_message_with_is_a_field_of_its_class() -> None:
    """The keyword arguments written in server/kafka_apis*.py where a kio class (or
    ``new_entity`` with one) is called are fields of that class: a misspelling in a branch the
    tests do not run (an error path, a rare version) is caught here as the call would catch it."""
    import ast
    import dataclasses
    import importlib
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2]
    wrong = []
    checked = 0
    for path in sorted((root / "server").glob("kafka_apis*.py")):
        module = vars(importlib.import_module(f"kafka_py.server.{path.stem}"))
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            target = module.get(node.func.id)
            if target is new_entity and node.args and isinstance(node.args[0], ast.Name):
                target = module.get(node.args[0].id)
            if not (isinstance(target, type) and dataclasses.is_dataclass(target)
                    and getattr(target, "__api_key__", None) is not None):
                continue
            checked += 1
            names = {f.name for f in dataclasses.fields(target)}
            wrong += [f"{path.name}:{node.lineno}: {target.__name__}({k.arg}=)" for k in node.keywords
                      if k.arg is not None and k.arg not in names]
    assert checked > 150, checked
    assert wrong == []
