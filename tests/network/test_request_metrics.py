"""AbstractResponse.errorCounts over kio responses (network/request_metrics.error_counts):
the error codes of every level counted once each, whatever form they are given in."""
from __future__ import annotations

from kio.schema.fetch.v12.response import FetchResponse
from kio.schema.metadata.v9.response import MetadataResponse

from kafka_py.network.request_metrics import error_counts
from kafka_py.protocol.entities import build_entity
from kafka_py.protocol.errors import Errors


def test_fetch_response_errors_of_the_response_and_of_each_partition():
    response = build_entity(FetchResponse, {"error_code": 0, "session_id": 7, "responses": [
        {"topic": "t", "partitions": [{"partition_index": i, "error_code": 3 if i == 2 else 0} for i in range(4)]},
        {"topic": "u", "partitions": [{"partition_index": 0, "error_code": Errors.NOT_LEADER_OR_FOLLOWER}]}]})
    assert error_counts(response) == {Errors.NONE: 4, Errors.UNKNOWN_TOPIC_OR_PARTITION: 1,
                                      Errors.NOT_LEADER_OR_FOLLOWER: 1}


def test_metadata_response_topic_and_partition_errors_not_the_brokers():
    response = build_entity(MetadataResponse, {
        "brokers": [{"node_id": 1, "host": "h", "port": 9092}],
        "topics": [{"name": "t", "error_code": 0, "partitions": [
            {"partition_index": 0, "error_code": 9}, {"partition_index": 1, "error_code": 0}]},
            {"name": "gone", "error_code": 3}]})
    assert error_counts(response) == {Errors.NONE: 2, Errors.REPLICA_NOT_AVAILABLE: 1,
                                      Errors.UNKNOWN_TOPIC_OR_PARTITION: 1}


def test_an_empty_answer_counts_its_one_error_code_and_a_non_message_nothing():
    assert error_counts(build_entity(FetchResponse, {"error_code": 71})) == {Errors.INVALID_FETCH_SESSION_EPOCH: 1}
    assert error_counts(None) == {}
    assert error_counts(b"raw") == {}
