"""KafkaApis' Metadata and Produce answers sent as frames written straight from plain values
(kafka_py/clients/common/protocol/fast_metadata_response.py and fast_produce_response.py): beside
KafkaApis.scala's sending of those two answers (handleTopicMetadataRequest's
sendResponseMaybeThrottle and handleProduceRequest's sendResponseCallback, Kafka 2.8.2),
with no counterpart in Kafka's source as code.

Why: built as response objects and encoded by the generic (kio) writer, a full Metadata
answer of a broker with thousands of partitions spent most of its time in that building and
encoding, and a Produce answer cost more than the append it reports. The frames are the
same bytes (tests/protocol/test_fast_response_writers.py), so a client cannot tell.

Hooks: ``KafkaApis.handle_topic_metadata_request`` ends with ``send_metadata_response`` and
``KafkaApis._send_produce_response`` calls ``send_produce_response``, one line each. An
answer sent here bypasses ``RequestChannel.send_response``'s counting of the errors in
response objects, so each counts its own (ErrorsPerSec), and, as ``send_response`` does, a
failure to send closes the connection rather than leaving the client waiting.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.network.request_channel import Request, SendResponse
from kafka_py.network.send import ByteBufferSend
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.server.delayed_produce import PartitionResponse
from kafka_py.clients.common.protocol.fast_metadata_response import encode_metadata_response
from kafka_py.clients.common.protocol.fast_produce_response import encode_produce_response

if TYPE_CHECKING:
    # KafkaApis imports this module to send its answers
    from kafka_py.server.kafka_apis import KafkaApis


def send_metadata_response(apis: KafkaApis, request: Request, brokers: Sequence[tuple], controller_id: int,
                           topics: Sequence[tuple], throttle_time_ms: int, cluster_authorized_operations: int) -> None:
    """Answer ``request`` (a Metadata request) for KafkaApis ``apis``: ``brokers`` as (id, host,
    port, rack), ``topics`` as KafkaApis' ``_metadata_topic`` makes them."""
    try:
        frame = encode_metadata_response(request.api_version, request.correlation_id, brokers, apis.cluster_id,
                                         controller_id, topics, throttle_time_ms=throttle_time_ms,
                                         cluster_authorized_operations=cluster_authorized_operations)
        apis.request_channel.metrics.mark_metadata_errors(topics)
        apis.request_channel.send_response(SendResponse(request, ByteBufferSend(frame)))
    except Exception:  # noqa: BLE001 - as send_response: the client must not wait forever
        apis.logger.exception("Could not send the response to %r", request)
        apis.request_channel.close_connection(request)


def send_produce_response(apis: KafkaApis, request: Request, statuses: Mapping[TopicPartition, PartitionResponse],
                          throttle_time_ms: int) -> bool:
    """Answer ``request`` (a Produce request of version 3 or later, what every current client
    sends) for KafkaApis ``apis`` with one PartitionResponse per partition; False, having sent
    nothing, for an older version (KafkaApis then answers with response objects)."""
    version = request.api_version
    if version < 3:
        return False
    try:
        # the statuses grouped by topic (first-seen order, as topics_of) as the plain values
        # encode_produce_response takes; loops rather than comprehensions, each of which is a
        # call of its own, on the path of every produce
        by_topic: dict[str, list] = {}
        for tp, s in statuses.items():
            errors = s.record_errors
            record_errors = [(r.batch_index, r.message) for r in errors] if errors else errors
            partition = (tp.partition, s.error, s.base_offset, s.log_append_time, s.log_start_offset, record_errors,
                         s.error_message)
            partitions = by_topic.get(tp.topic)
            if partitions is None:
                by_topic[tp.topic] = [partition]
            else:
                partitions.append(partition)
        values = list(by_topic.items())
        frame = encode_produce_response(version, request.correlation_id, values, throttle_time_ms)
        apis.request_channel.metrics.mark_partition_errors(ApiKeys.PRODUCE, statuses.values())
        apis.request_channel.send_response(SendResponse(request, ByteBufferSend(frame)))
    except Exception:  # noqa: BLE001 - as send_response: the client must not wait forever
        apis.logger.exception("Could not send the response to %r", request)
        apis.request_channel.close_connection(request)
    return True


__all__ = ["send_metadata_response", "send_produce_response"]
