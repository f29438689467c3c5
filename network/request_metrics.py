"""Port of the RequestMetrics class and object, the RequestChannel.Metrics class and
Request.updateRequestMetrics of core/src/main/scala/kafka/network/RequestChannel.scala
(Kafka 2.8.2), with the request logger's "Completed request" line.

Every request carries the times Kafka's ``RequestChannel.Request`` carries: read
(``start_time_ns``, by the Processor), taken off the request queue (by a handler), local
processing done (end of ``KafkaApis.handle``), remote completion (a purgatory's callback:
acks=all, a long-poll fetch), response queued (``RequestChannel.send_response``), response
taken by the Processor, and response written. When the Processor has written the response
(or handled a NoOp/close answer) ``RequestChannelMetrics.update_request_metrics`` turns them
into Kafka's histograms under ``kafka.network:type=RequestMetrics,name=...,request=<Api>``:

    RequestQueueTimeMs   dequeue - start            LocalTimeMs          local done - dequeue
    RemoteTimeMs         remote done - local done   ThrottleTimeMs       quota throttle
    ResponseQueueTimeMs  taken - queued             ResponseSendTimeMs   written - taken
    TotalTimeMs          written - start            RequestBytes         request size

plus ``RequestsPerSec`` (tag ``version``) and, for Produce and Fetch,
``MessageConversionsTimeMs`` and ``TemporaryMemoryBytes``: the time spent converting the
request's records between message formats and the bytes held meanwhile (a Fetch v0-v3
converting what it read; each request's values are 0 otherwise). Fetches also count under
``FetchConsumer`` or ``FetchFollower``. The times are whole milliseconds, rounded, as Kafka
records them.

``ErrorsPerSec`` (tags ``request``, ``error``) counts every error code a response carries,
``NONE`` included, when the response is queued (``update_error_metrics``).

The update runs on the network thread for every request: one lock per API, the metric
objects found by index (no name is built), and the request's values written into staged
rows that the registry's ticker folds into the histograms every five seconds (or a read
does first); the spans are staged in nanoseconds and rounded to milliseconds when folded, so
the request path only subtracts. No container is allocated per request. ``kafka.py.metrics.enabled=false``
skips it.
"""
from __future__ import annotations

import array
import dataclasses
import logging
import random
import struct
import threading
from typing import Any, Iterable, Mapping, Optional

from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup, recording
from kafka_py.core.metrics.yammer import Histogram, Meter
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.utils.logging import TRACE

# Kafka's request logger: its "Completed request" lines go to kafka-request.log at DEBUG.
request_logger = logging.getLogger("kafka.request.logger")
_request_log_levels: dict = getattr(request_logger, "_cache", {})

CONSUMER_FETCH_METRIC_NAME = "FetchConsumer"
FOLLOW_FETCH_METRIC_NAME = "FetchFollower"
_WITH_CONVERSIONS = {ApiKeys.PRODUCE.api_name, ApiKeys.FETCH.api_name,
                     CONSUMER_FETCH_METRIC_NAME, FOLLOW_FETCH_METRIC_NAME}


class RequestMetrics(KafkaMetricsGroup):
    """The metrics of one request type (``Produce``, ``FetchConsumer`` ...)."""

    metrics_group = "kafka.network"
    metrics_type_name = "RequestMetrics"

    def __init__(self, name: str, prefix: str = "") -> None:
        self.name = name
        self.tags = {"request": name}
        self.lock = threading.Lock()
        self._prefix = prefix
        lock = self.lock
        h = lambda n: self.new_histogram(prefix + n, self.tags, lock)  # noqa: E731
        self.request_queue_time_hist = h("RequestQueueTimeMs")
        self.local_time_hist = h("LocalTimeMs")
        self.remote_time_hist = h("RemoteTimeMs")
        self.throttle_time_hist = h("ThrottleTimeMs")
        self.response_queue_time_hist = h("ResponseQueueTimeMs")
        self.response_send_time_hist = h("ResponseSendTimeMs")
        self.total_time_hist = h("TotalTimeMs")
        self.request_bytes_hist = h("RequestBytes")
        self.message_conversions_time_hist: Optional[Histogram] = None
        self.temp_memory_bytes_hist: Optional[Histogram] = None
        if name in _WITH_CONVERSIONS:
            self.message_conversions_time_hist = h("MessageConversionsTimeMs")
            self.temp_memory_bytes_hist = h("TemporaryMemoryBytes")
        # The values of each request are staged here, a row per request, and folded into
        # the histograms by the registry's ticker (every 5 s) or when one is read: the request
        # path only writes eleven numbers. Past STAGE_ROWS requests in a tick, a uniform sample of
        # them stays (Vitter's algorithm R); counts stay exact.
        self._hists = [self.request_queue_time_hist, self.local_time_hist, self.remote_time_hist,
                       self.throttle_time_hist, self.response_queue_time_hist, self.response_send_time_hist,
                       self.total_time_hist, self.request_bytes_hist]
        if self.message_conversions_time_hist is not None and self.temp_memory_bytes_hist is not None:
            self._hists += [self.message_conversions_time_hist, self.temp_memory_bytes_hist]
        for hist in self._hists:
            hist.stage_owner = self
        # The staged rows, ROW_VALUES doubles each, side by side in one buffer (one object and a
        # cache line or two per request rather than a column object per value); made on the
        # first request.
        self._rows: Optional[array.array] = None
        self.staged = 0
        self._random = random.random
        self.metrics_registry.add_ticked(self)
        # RequestsPerSec per version and ErrorsPerSec per error, made on first use and then
        # found by index.
        self._request_rate: list[Optional[Meter]] = [None] * 64
        self._errors: dict[Errors, Meter] = {}
        self._errors_lock = threading.Lock()
        # ErrorsPerSec{error=NONE}, the one nearly every answer marks, once made.
        self.none_meter: Optional[Meter] = None

    STAGE_ROWS = 1024
    ROW_VALUES = 10

    def rows(self) -> array.array:
        with self.lock:
            if self._rows is None:
                self._rows = array.array("d", bytes(8 * self.ROW_VALUES * self.STAGE_ROWS))
            return self._rows

    def tick(self) -> None:
        """Fold the staged requests into the histograms."""
        with self.lock:  # no call under the lock (see update_request_metrics)
            n = self.staged
            rows = self._rows
            if n == 0 or rows is None:
                return
            self.staged = 0
        # Rows are written outside the lock: one written meanwhile for the next tick may be
        # taken with these, which a sample does not mind.
        kept = min(n, self.STAGE_ROWS)
        flat = rows[:kept * self.ROW_VALUES].tolist()
        width = self.ROW_VALUES
        values = [flat[i::width] for i in range(width)]
        # The time columns hold nanosecond spans: whole milliseconds, rounded half up as
        # Kafka's Math.round, a negative span counting as 0.
        hists = len(self._hists)
        for i in _NANOS_COLUMNS:
            if i < hists:
                values[i] = [(v + 500_000.0) // 1_000_000.0 if v > 0 else 0.0 for v in values[i]]
        # (the conversion columns of APIs without conversion histograms are left out here)
        for hist, column in zip(self._hists, values):
            hist.fold(column, n)

    def record(self, version: int, queue_ns: int, local_ns: int, remote_ns: int, throttle_ms: int,
               response_queue_ns: int, send_ns: int, total_ns: int, size: int, conversions_ns: int = 0,
               temporary_memory_bytes: int = 0) -> None:
        """One request of ``version``: its RequestsPerSec count, and its spans (nanoseconds,
        turned into milliseconds when a tick folds them), size, message conversion time and
        temporary memory staged as one row."""
        try:
            # a negative version (an ApiVersions one answered as unsupported) finds None here:
            # no API has 64 versions
            rate = self._request_rate[version]
        except IndexError:
            rate = None
        if rate is None:
            rate = self.request_rate(version)
        rows = self._rows
        if rows is None:
            rows = self.rows()
        # Nothing is called while the lock is held: a call is where the interpreter may hand
        # the GIL to another thread, which would then block on this lock.
        with self.lock:
            rate.count += 1
            j = self.staged
            self.staged = j + 1
        if j >= 1024:  # STAGE_ROWS; past it, a uniform sample of the tick's requests is kept
            j = int(self._random() * (j + 1))
            if j >= 1024:
                return
        # One C call, which a tick's copy of the rows (another) cannot interleave with.
        _ROW.pack_into(rows, j * _ROW_BYTES, queue_ns, local_ns, remote_ns, throttle_ms, response_queue_ns,
                       send_ns, total_ns, size, conversions_ns, temporary_memory_bytes)

    def request_rate(self, version: int) -> Meter:
        meter = self._request_rate[version] if 0 <= version < 64 else None
        if meter is None:
            meter = self.new_meter(self._prefix + "RequestsPerSec", "requests",
                                   {"request": self.name, "version": str(version)}, self.lock)
            if 0 <= version < 64:
                self._request_rate[version] = meter
        return meter

    def error_meter(self, error: Errors) -> Meter:
        meter = self._errors.get(error)
        if meter is None:
            with self._errors_lock:
                meter = self._errors.get(error)
                if meter is None:
                    meter = self.new_meter(self._prefix + "ErrorsPerSec", "requests",
                                           {"request": self.name, "error": error.name})
                    self._errors[error] = meter
        return meter

    def mark_errors(self, error_counts: Mapping[Errors, int]) -> None:
        for error, count in error_counts.items():
            self.error_meter(error).mark(count)

    def remove_metrics(self) -> None:
        for n in ("RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs", "ThrottleTimeMs", "ResponseQueueTimeMs",
                  "ResponseSendTimeMs", "TotalTimeMs", "RequestBytes", "MessageConversionsTimeMs",
                  "TemporaryMemoryBytes"):
            self.remove_metric(self._prefix + n, self.tags)
        for version, meter in enumerate(self._request_rate):
            if meter is not None:
                self.remove_metric(self._prefix + "RequestsPerSec", {"request": self.name, "version": str(version)})
        for error in list(self._errors):
            self.remove_metric(self._prefix + "ErrorsPerSec", {"request": self.name, "error": error.name})


_FETCH = ApiKeys.FETCH
# Values of a staged row staged as nanosecond spans (the others: throttle ms, request bytes,
# temporary memory bytes).
_NANOS_COLUMNS = (0, 1, 2, 4, 5, 6, 8)
# One staged row: queue, local, remote (ns), throttle (ms), response queue, send, total (ns),
# bytes, message conversions (ns), temporary memory bytes.
_ROW = struct.Struct("=10d")
_ROW_BYTES = _ROW.size


def _ms(nanos: int) -> int:
    """Whole milliseconds, rounded half up as Math.round does; negative spans count as 0."""
    return (nanos + 500_000) // 1_000_000 if nanos > 0 else 0


def _ms_float(nanos: int) -> float:
    return max(nanos, 0) // 1000 / 1000.0


class RequestChannelMetrics:
    """RequestChannel.Metrics: a RequestMetrics per API the broker serves, by API key."""

    def __init__(self, api_keys: Iterable[ApiKeys], prefix: str = "") -> None:
        self._by_key: list[Optional[RequestMetrics]] = [None] * (max(ApiKeys) + 1)
        self.by_name: dict[str, RequestMetrics] = {}
        for key in api_keys:
            metrics = RequestMetrics(key.api_name, prefix)
            self._by_key[key] = metrics
            self.by_name[key.api_name] = metrics
        self.consumer_fetch = RequestMetrics(CONSUMER_FETCH_METRIC_NAME, prefix)
        self.follower_fetch = RequestMetrics(FOLLOW_FETCH_METRIC_NAME, prefix)
        self.by_name[CONSUMER_FETCH_METRIC_NAME] = self.consumer_fetch
        self.by_name[FOLLOW_FETCH_METRIC_NAME] = self.follower_fetch

    def __call__(self, name: str) -> RequestMetrics:
        return self.by_name[name]

    def for_key(self, api_key: ApiKeys) -> Optional[RequestMetrics]:
        return self._by_key[api_key]

    def update_request_metrics(self, request: Any, end_time_ns: int) -> None:
        """Request.updateRequestMetrics: the request's timings, once its answer is out."""
        if not recording.enabled:
            return
        header = request.context.header
        api_key = header.api_key
        metrics = self._by_key[api_key]
        if metrics is None:
            return
        start = request.start_time_ns
        dequeue = request.request_dequeue_time_ns
        response_complete = request.response_complete_time_ns
        if response_complete < 0:  # answered without RequestChannel.send_response (tests)
            response_complete = end_time_ns
        local = request.api_local_complete_time_ns
        if local < 0:
            local = response_complete
        remote = request.api_remote_complete_time_ns
        if remote < 0:
            remote = response_complete
        response_dequeue = request.response_dequeue_time_ns
        if response_dequeue < 0:
            response_dequeue = end_time_ns
        if dequeue < 0:
            dequeue = start
        queue_ns = dequeue - start
        total_ns = end_time_ns - start
        local_ns = local - dequeue
        remote_ns = remote - local
        response_queue_ns = response_dequeue - response_complete
        send_ns = end_time_ns - response_dequeue
        throttle_ms = request.api_throttle_time_ms
        size = len(request.buffer)
        version = header.api_version
        conversions_ns = request.message_conversions_time_ns
        temporary_memory_bytes = request.temporary_memory_bytes
        metrics.record(version, queue_ns, local_ns, remote_ns, throttle_ms, response_queue_ns, send_ns, total_ns, size,
                       conversions_ns, temporary_memory_bytes)
        if api_key is _FETCH:
            replica_id = getattr(request.body, "replica_id", -1)
            fetch_metrics = self.follower_fetch if replica_id is not None and replica_id >= 0 else self.consumer_fetch
            fetch_metrics.record(version, queue_ns, local_ns, remote_ns, throttle_ms, response_queue_ns, send_ns,
                                 total_ns, size, conversions_ns, temporary_memory_bytes)
        # Logger.isEnabledFor's own cache, read without the call (logging clears it, in place,
        # whenever a level changes or logging.disable is called); the call when it has no
        # answer yet. A logger the logging config disabled logs nothing, whatever it says.
        log = _request_log_levels.get(logging.DEBUG)
        if log is None:
            log = request_logger.isEnabledFor(logging.DEBUG)
        if log and not request_logger.disabled:
            _log_completed_request(request, end_time_ns, start, dequeue, local, remote, response_complete,
                                   response_dequeue, throttle_ms)

    def mark_partition_errors(self, api_key: ApiKeys, answers: Iterable[Any]) -> None:
        """ErrorsPerSec for an answer written without response objects (Produce v3+): one
        count per partition answer's ``error``, the NONEs marked at once."""
        if not recording.enabled:
            return
        metrics = self._by_key[api_key]
        if metrics is None:
            return
        none = 0
        NONE = Errors.NONE
        for answer in answers:
            error = answer.error
            if error is NONE:
                none += 1
            else:
                metrics.error_meter(error).mark()
        if none:
            meter = metrics.none_meter
            if meter is None:
                meter = metrics.none_meter = metrics.error_meter(NONE)
            with meter.lock:
                meter.count += none

    def mark_metadata_errors(self, topics: Iterable[tuple]) -> None:
        """ErrorsPerSec of a Metadata answer written from plain values: each topic's error
        and each of its partitions' (MetadataResponse.errorCounts), from the tuples
        fast_metadata_response.encode_metadata_response takes (error first, partitions fifth)."""
        if not recording.enabled:
            return
        metrics = self._by_key[ApiKeys.METADATA]
        if metrics is None:
            return
        none = 0
        for topic in topics:
            error = topic[0]
            if error is Errors.NONE:
                none += 1
            else:
                metrics.error_meter(error).mark()
            for partition in topic[4]:
                error = partition[0]
                if error is Errors.NONE:
                    none += 1
                else:
                    metrics.error_meter(error).mark()
        if none:
            metrics.error_meter(Errors.NONE).mark(none)

    def update_error_metrics(self, api_key: ApiKeys, error_counts: Mapping[Errors, int]) -> None:
        if not recording.enabled:
            return
        metrics = self._by_key[api_key]
        if metrics is not None:
            metrics.mark_errors(error_counts)

    def remove_metrics(self) -> None:
        for metrics in self.by_name.values():
            metrics.remove_metrics()


# ---- error counts of a response ----------------------------------------------------------

# What to look at in an instance of each response class: (field name, kind), kind being
# _ERROR (an error code), _ONE (a nested struct) or _MANY (an array of structs); value fields
# are left out once, here, instead of being looked at in every response.
_ERROR, _ONE, _MANY = 0, 1, 2
_SKIPPED = frozenset(("records", "error_message", "throttle_time_ms", "throttle_time"))
_plans: dict[type, tuple[tuple[str, int], ...]] = {}
# Errors by wire code, kio ErrorCode or Errors member (ErrorCode is an IntEnum: it hashes as its code).
_ERROR_OF: dict[Any, Errors] = {**{e.code: e for e in Errors}, **{e: e for e in Errors}}


def _plan_of(cls: type) -> tuple[tuple[str, int], ...]:
    plan = _plans.get(cls)
    if plan is None:
        from kafka_py.clients.common.protocol.kio_fields import EntityField, EntityTupleField, classify_field

        entries = []
        for f in dataclasses.fields(cls):
            if f.name == "error_code":
                entries.append((f.name, _ERROR))
            elif f.name not in _SKIPPED:
                try:
                    kind = classify_field(f)
                except Exception:  # noqa: BLE001 - not a kio field: looked at per value
                    entries.append((f.name, -1))
                    continue
                if isinstance(kind, EntityTupleField):
                    entries.append((f.name, _MANY))
                elif isinstance(kind, EntityField):
                    entries.append((f.name, _ONE))
        plan = _plans[cls] = tuple(entries)
    return plan


def error_counts(response: Any) -> dict[Errors, int]:
    """AbstractResponse.errorCounts, for any kio response: every ``error_code`` it carries,
    top level and nested (topics, partitions ...), counted once each."""
    counts: dict[Errors, int] = {}
    if dataclasses.is_dataclass(response) and not isinstance(response, type):
        _count_errors(response, counts, 0)
    return counts


def _count_errors(obj: Any, counts: dict[Errors, int], depth: int) -> None:
    plan = _plans.get(type(obj))
    if plan is None:
        plan = _plan_of(type(obj))
    for name, kind in plan:
        value = getattr(obj, name, None)
        if value is None:
            continue
        if kind == _ERROR:
            error = _ERROR_OF.get(value)
            if error is None:
                try:
                    error = Errors.for_code(int(value))
                except (ValueError, KeyError, TypeError):
                    error = Errors.UNKNOWN_SERVER_ERROR
            counts[error] = counts.get(error, 0) + 1
        elif depth >= 6:
            continue
        elif kind == _MANY:
            for item in value:
                _count_errors(item, counts, depth + 1)
        elif kind == _ONE:
            _count_errors(value, counts, depth + 1)
        elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            for item in value:
                _count_errors(item, counts, depth + 1)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            _count_errors(value, counts, depth + 1)


# ---- the request log ---------------------------------------------------------------------

def _log_completed_request(request: Any, end: int, start: int, dequeue: int, local: int, remote: int,
                           response_complete: int, response_dequeue: int, throttle_ms: int) -> None:
    header = request.context.header
    context = request.context
    fields = [
        f'"isForwarded":false',
        f'"requestHeader":{{"requestApiKey":{int(header.api_key)},"requestApiVersion":{header.api_version},'
        f'"correlationId":{header.correlation_id},"clientId":{_json_str(header.client_id)}}}',
    ]
    if request_logger.isEnabledFor(TRACE):  # the request body too
        fields.append(f'"request":{_json_str(repr(request.body))}')
    fields += [
        f'"connection":{_json_str(context.connection_id)}',
        f'"totalTimeMs":{_ms_float(end - start)}',
        f'"requestQueueTimeMs":{_ms_float(dequeue - start)}',
        f'"localTimeMs":{_ms_float(local - dequeue)}',
        f'"remoteTimeMs":{_ms_float(remote - local)}',
        f'"throttleTimeMs":{throttle_ms}',
        f'"responseQueueTimeMs":{_ms_float(response_dequeue - response_complete)}',
        f'"sendTimeMs":{_ms_float(end - response_dequeue)}',
        f'"securityProtocol":{_json_str(context.security_protocol)}',
        f'"principal":{_json_str(str(context.principal))}',
        f'"listener":{_json_str(context.listener_name)}',
        f'"clientInformation":{{"softwareName":{_json_str(context.client_information.software_name)},'
        f'"softwareVersion":{_json_str(context.client_information.software_version)}}}',
    ]
    if request.temporary_memory_bytes > 0:
        fields.append(f'"temporaryMemoryBytes":{request.temporary_memory_bytes}')
    if request.message_conversions_time_ns > 0:
        fields.append(f'"messageConversionsTime":{_ms_float(request.message_conversions_time_ns)}')
    request_logger.debug("Completed request:{%s}", ",".join(fields))


def _json_str(value: Any) -> str:
    import json

    return json.dumps(value)


__all__ = ["RequestMetrics", "RequestChannelMetrics", "error_counts", "request_logger",
           "CONSUMER_FETCH_METRIC_NAME", "FOLLOW_FETCH_METRIC_NAME"]
