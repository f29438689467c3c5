"""AbstractResponse.errorCounts over kio responses (network/request_metrics.error_counts):
the error codes of every level counted once each, whatever form they are given in."""
from __future__ import annotations

from kio.schema.fetch.v12.response import FetchResponse
from kio.schema.metadata.v9.response import MetadataResponse

from kafka_py.network.request_metrics import error_counts
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors


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


def test_request_timings_become_whole_milliseconds_rounded_half_up():
    """The request's spans (staged in nanoseconds, folded when read) land in Kafka's
    histograms as whole milliseconds, Math.round style; a negative span counts as 0."""
    from kafka_py.network.request_channel import Request, RequestContext
    from kafka_py.network.request_metrics import RequestChannelMetrics
    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.headers import RequestHeader

    from .conftest import api_versions_frame

    metrics = RequestChannelMetrics([ApiKeys.API_VERSIONS], prefix="RoundingTest")
    try:
        ms = 1_000_000
        for start_ns in (0, 10 * ms):
            frame = memoryview(bytearray(api_versions_frame(1, 3)[4:]))
            header, _ = RequestHeader.parse(frame)
            request = Request(0, RequestContext(header, "c", "127.0.0.1"), start_ns, frame)
            request.request_dequeue_time_ns = start_ns + 2 * ms + 499_999      # queue 2
            request.api_local_complete_time_ns = start_ns + 5 * ms              # local 3 (2.500001)
            request.response_complete_time_ns = start_ns + 5 * ms
            request.response_dequeue_time_ns = start_ns + 4 * ms                # response queue < 0: 0
            metrics.update_request_metrics(request, start_ns + 7 * ms + 500_000)  # send 3.5 -> 4, total 7.5 -> 8
        m = metrics("ApiVersions")
        assert m.request_queue_time_hist.snapshot().values == [2.0, 2.0]
        assert m.local_time_hist.snapshot().values == [3.0, 3.0]
        assert m.response_queue_time_hist.snapshot().values == [0.0, 0.0]
        assert m.response_send_time_hist.snapshot().values == [4.0, 4.0]
        assert m.total_time_hist.snapshot().values == [8.0, 8.0]
        assert m.request_bytes_hist.snapshot().values == [float(len(frame))] * 2
        assert m.request_rate(3).count == 2
    finally:
        metrics.remove_metrics()


def test_completed_request_lines_follow_the_request_loggers_level_as_it_changes():
    """The request logger's level is looked up from logging's cache per request: raised to
    DEBUG the next request is logged, back at INFO (or disabled) the one after is not; a Fetch
    counts under FetchConsumer as well as Fetch."""
    import logging
    from types import SimpleNamespace

    from kafka_py.network.request_channel import Request, RequestContext
    from kafka_py.network.request_metrics import RequestChannelMetrics, request_logger
    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.headers import RequestHeader

    lines: list = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    metrics = RequestChannelMetrics([ApiKeys.FETCH], prefix="RequestLogTest")
    handler = Collect()
    level, propagate = request_logger.level, request_logger.propagate
    request_logger.addHandler(handler)
    request_logger.propagate = False

    def one_request() -> None:
        header = RequestHeader.for_request(ApiKeys.FETCH, 11, 1, "log-test")
        request = Request(0, RequestContext(header, "c", "127.0.0.1"), 0, memoryview(bytearray(64)),
                          SimpleNamespace(replica_id=-1))
        metrics.update_request_metrics(request, 1_000_000)

    try:
        request_logger.setLevel(logging.INFO)
        one_request()
        request_logger.setLevel(logging.DEBUG)
        one_request()
        request_logger.disabled = True
        one_request()
        request_logger.disabled = False
        request_logger.setLevel(logging.INFO)
        one_request()
        assert len(lines) == 1 and lines[0].startswith("Completed request:{") and '"clientId":"log-test"' in lines[0]
        # no ApiVersions named the software: Kafka's "unknown"
        assert lines[0].endswith('"clientInformation":{"softwareName":"unknown","softwareVersion":"unknown"}}')
        assert metrics("Fetch").request_rate(11).count == 4
        assert metrics("FetchConsumer").request_rate(11).count == 4
        assert metrics("FetchFollower").request_rate(11).count == 0
    finally:
        request_logger.removeHandler(handler)
        request_logger.setLevel(level)
        request_logger.propagate = propagate
        request_logger.disabled = False
        metrics.remove_metrics()
