"""Port of core/src/main/scala/kafka/server/ClientQuotaManager.scala (Kafka 2.8.2), with
ThrottledChannel.scala, the QuotaType half of QuotaFactory.scala and kafka/utils/QuotaUtils.scala.

A ClientQuotaManager enforces one kind of client quota: bytes per second produced
(``producer_byte_rate``), bytes per second fetched by consumers (``consumer_byte_rate``) or,
in its ClientRequestQuotaManager subclass (server/client_request_quota_manager.py), the
share of a request handler thread spent on a client (``request_percentage``).

Quotas are set per user principal, per client id, or per (user, client id), each with a
``<default>`` entity, in ZooKeeper (/config/users/<user>, /config/clients/<client-id>,
/config/users/<user>/clients/<client-id>). The config handlers (server/config_handler.py)
call ``update_quota`` whenever one changes. A client gets the most specific quota that
matches it, in Kafka's order:

1. /config/users/<user>/clients/<client-id>
2. /config/users/<user>/clients/<default>
3. /config/users/<user>
4. /config/users/<default>/clients/<client-id>
5. /config/users/<default>/clients/<default>
6. /config/users/<default>
7. /config/clients/<client-id>
8. /config/clients/<default>

The entity that supplied the quota decides which clients share one rate: with a user quota
all the user's client ids are measured together. That grouping is the sensor's metric tags
(``quota_metric_tags``); each tag pair has one Sensor holding a Rate over
``quota.window.num`` windows of ``quota.window.size.seconds``.

Throttling follows KIP-219. ``record_and_get_throttle_time_ms`` records a value; when the
rate is over the bound it returns how long the client must be silent for the rate to come
back to it: with O the measured rate, T the bound and W the window the rate spans, a pause X
gives O * W / (W + X) = T, so X = (O - T) / T * W. The handler puts that time in the
response's ``throttle_time_ms`` and sends the response at once; ``throttle`` then tells the
client's Processor to stop reading from the connection (StartThrottlingResponse) and a
reaper thread tells it to read again when the time is up (EndThrottlingResponse).

No quota costs nothing: until a quota of the manager's kind has been set, ``quotas_enabled``
is False and the handlers skip every call here (as in Kafka, it stays True after the quotas
are removed again, until the broker restarts).

Metrics: each client's sensors are published, as Kafka's JmxReporter publishes them, as
attributes of ``kafka.server:type=<Produce|Fetch|Request|ControllerMutation>,user=U,client-id=C``
(a tag with an empty value left out): the quota metric (``byte-rate``, ``request-time``;
``tokens`` and ``mutation-rate`` for controller mutations) and ``throttle-time``, the average
throttle time given to the client over the last 30 to 60 s (NaN when none was). They come and
go with the sensors (created at a client's first record once quotas are enabled, removed after
an hour without one).

The ClientQuotaCallback plug-in (``client.quota.callback.class``) is not ported: the
default callback's logic is this class's own.
"""
from __future__ import annotations

import enum
import heapq
import itertools
import logging
import math
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

from kafka_py.clients.common.sensor import Avg, KafkaMetric, MetricConfig, Quota, QuotaViolationException, Rate, Sensor
from kafka_py.core.metrics.kafka_metrics_group import default_registry
from kafka_py.core.metrics.yammer import Gauge, MetricName
from kafka_py.clients.common.security.sanitizer import desanitize, sanitize
from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.core.utils.shutdownable_thread import ShutdownableThread
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.zk.zk_data import ConfigEntityName

logger = logging.getLogger(__name__)


# Purge sensors after an hour without a record.
INACTIVE_SENSOR_EXPIRATION_TIME_SECONDS = 3600
# How often expired sensors are looked for (Kafka's Metrics expires them every 30 s).
_SENSOR_PURGE_INTERVAL_MS = 30_000
# Kafka's MetricConfig defaults (metrics.num.samples, metrics.sample.window.ms), used by the
# throttle-time average.
METRICS_NUM_SAMPLES = 2
METRICS_SAMPLE_WINDOW_MS = 30_000


class QuotaType(enum.Enum):
    FETCH = "Fetch"
    PRODUCE = "Produce"
    REQUEST = "Request"
    CONTROLLER_MUTATION = "ControllerMutation"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class ClientQuotaManagerConfig:
    """``quota_default``: the deprecated static per-client-id quota (quota.producer.default /
    quota.consumer.default); ``num_quota_samples`` windows of ``quota_window_size_seconds``."""

    quota_default: int = LONG_MAX
    num_quota_samples: int = 11
    quota_window_size_seconds: int = 1


class QuotaTypes:
    """Bits saying which levels of quotas have been set (for the fast tag computation)."""

    NO_QUOTAS = 0
    CLIENT_ID_QUOTA_ENABLED = 1
    USER_QUOTA_ENABLED = 2
    USER_CLIENT_ID_QUOTA_ENABLED = 4


# ---------------------------------------------------------------------------- quota entities

@dataclass(frozen=True)
class UserEntity:
    sanitized_user: str

    def __str__(self) -> str:
        return f"user {self.sanitized_user}"


@dataclass(frozen=True)
class ClientIdEntity:
    client_id: str

    def __str__(self) -> str:
        return f"client-id {self.client_id}"


class _DefaultUserEntity:
    def __repr__(self) -> str:
        return "default user"

    __str__ = __repr__


class _DefaultClientIdEntity:
    def __repr__(self) -> str:
        return "default client-id"

    __str__ = __repr__


DEFAULT_USER_ENTITY = _DefaultUserEntity()
DEFAULT_CLIENT_ID_ENTITY = _DefaultClientIdEntity()


@dataclass(frozen=True)
class KafkaQuotaEntity:
    """A (user, client id) quota entity; either half may be absent (None) or the default."""

    user_entity: Any = None
    client_id_entity: Any = None

    @property
    def sanitized_user(self) -> str:
        if isinstance(self.user_entity, UserEntity):
            return self.user_entity.sanitized_user
        return ConfigEntityName.DEFAULT if self.user_entity is DEFAULT_USER_ENTITY else ""

    @property
    def client_id(self) -> str:
        if isinstance(self.client_id_entity, ClientIdEntity):
            return self.client_id_entity.client_id
        return ConfigEntityName.DEFAULT if self.client_id_entity is DEFAULT_CLIENT_ID_ENTITY else ""

    def __str__(self) -> str:
        parts = [str(e) for e in (self.user_entity, self.client_id_entity) if e is not None]
        return " ".join(parts)


DEFAULT_CLIENT_ID_QUOTA_ENTITY = KafkaQuotaEntity(None, DEFAULT_CLIENT_ID_ENTITY)
DEFAULT_USER_QUOTA_ENTITY = KafkaQuotaEntity(DEFAULT_USER_ENTITY, None)
DEFAULT_USER_CLIENT_ID_QUOTA_ENTITY = KafkaQuotaEntity(DEFAULT_USER_ENTITY, DEFAULT_CLIENT_ID_ENTITY)

USER_TAG = "user"
CLIENT_ID_TAG = "client-id"


def principal_name(principal: str) -> str:
    """``User:alice`` -> ``alice`` (KafkaPrincipal.getName)."""
    _, sep, name = principal.partition(":")
    return name if sep else principal


# ---------------------------------------------------------------------------- QuotaUtils

def _window_size(metric: KafkaMetric, time_ms: int) -> int:
    measurable = metric.measurable
    if not isinstance(measurable, Rate):
        raise ValueError(f"Metric {metric.name} is not a Rate metric, value {measurable!r}")
    return measurable.window_size(metric.config, time_ms)


def throttle_time(e: QuotaViolationException, time_ms: int) -> int:
    """The pause that brings the rate back to its bound if nothing more is recorded:
    (O - T) / T * W over the precise window W the rate was measured on."""
    difference = e.value - e.bound
    return int(math.floor(difference / e.bound * _window_size(e.metric, time_ms) + 0.5))


def bounded_throttle_time(e: QuotaViolationException, max_throttle_time_ms: int, time_ms: int) -> int:
    return min(throttle_time(e, time_ms), max_throttle_time_ms)


# ---------------------------------------------------------------------------- ThrottledChannel

class ThrottledChannel:
    """A connection muted for ``throttle_time_ms``; creating it tells the Processor to mute it."""

    __slots__ = ("request", "throttle_time_ms", "end_time_ns", "_callback")

    def __init__(self, request: Any, time: Time, throttle_time_ms: int,
                 channel_throttling_callback: Callable[[Any], None]) -> None:
        from kafka_py.network.request_channel import StartThrottlingResponse

        self.request = request
        self.throttle_time_ms = throttle_time_ms
        self.end_time_ns = time.nanoseconds() + throttle_time_ms * 1_000_000
        self._callback = channel_throttling_callback
        channel_throttling_callback(StartThrottlingResponse(request))

    def notify_throttling_done(self) -> None:
        from kafka_py.network.request_channel import EndThrottlingResponse

        self._callback(EndThrottlingResponse(self.request))

    def get_delay_ns(self, now_ns: int) -> int:
        return self.end_time_ns - now_ns


class ThrottledChannelReaper(ShutdownableThread):
    """Ends each throttle when its time is up (Kafka's thread over a DelayQueue; here a heap
    ordered by end time and a condition the adders signal)."""

    def __init__(self, quota_type: QuotaType, time: Time, prefix: str = "") -> None:
        super().__init__(f"{prefix}ThrottledChannelReaper-{quota_type}", is_interruptible=False, daemon=True)
        self._time = time
        self._cond = threading.Condition()
        self._queue: list[tuple[int, int, ThrottledChannel]] = []
        self._sequence = itertools.count()

    def add(self, channel: ThrottledChannel) -> None:
        with self._cond:
            heapq.heappush(self._queue, (channel.end_time_ns, next(self._sequence), channel))
            if self._queue[0][2] is channel:
                self._cond.notify()

    @property
    def queue_size(self) -> int:
        with self._cond:
            return len(self._queue)

    def initiate_shutdown(self) -> bool:
        initiated = super().initiate_shutdown()
        with self._cond:
            self._cond.notify_all()
        return initiated

    def do_work(self) -> None:
        due: list[ThrottledChannel] = []
        with self._cond:
            if not self._queue:
                self._cond.wait(1.0)
            else:
                delay_ns = self._queue[0][0] - self._time.nanoseconds()
                if delay_ns > 0:
                    self._cond.wait(min(delay_ns / 1e9, 1.0))
            now = self._time.nanoseconds()
            while self._queue and self._queue[0][0] <= now:
                due.append(heapq.heappop(self._queue)[2])
        for channel in due:
            try:
                channel.notify_throttling_done()
            except Exception:  # noqa: BLE001 - one closed channel must not stop the reaper
                self.logger.exception("Error ending the throttle of %r", channel.request)

    def end_all(self) -> None:
        """At shutdown: end every throttle still pending (the Processors may be gone already)."""
        with self._cond:
            pending = [entry[2] for entry in self._queue]
            self._queue.clear()
        for channel in pending:
            try:
                channel.notify_throttling_done()
            except Exception:  # noqa: BLE001
                pass


# ---------------------------------------------------------------------------- the manager

@dataclass(frozen=True)
class ClientSensors:
    metric_tags: tuple[str, str]
    quota_sensor: Sensor
    throttle_time_sensor: Sensor


def _measurement(sensor: Any, metric: Any, now: Callable[[], float]) -> Callable[[], float]:
    """A gauge's reading of one of a sensor's metrics."""
    return lambda: sensor.measure(metric, now())


class ClientQuotaManager:
    """Byte-rate quotas of one kind (Produce or Fetch) per user / client id."""

    def __init__(self, config: ClientQuotaManagerConfig, quota_type: QuotaType, time: Time = Time.SYSTEM,
                 thread_name_prefix: str = "") -> None:
        self.config = config
        self.quota_type = quota_type
        self.time = time
        self._lock = threading.RLock()
        self._static_config_client_id_quota = Quota.upper_bound(float(config.quota_default))
        self._quota_types_enabled = (QuotaTypes.NO_QUOTAS if config.quota_default == LONG_MAX
                                     else QuotaTypes.CLIENT_ID_QUOTA_ENABLED)
        # Plain attribute read on every request: True once any quota of this kind was set.
        self.quotas_enabled = self._quota_types_enabled != QuotaTypes.NO_QUOTAS
        self._overridden_quotas: dict[KafkaQuotaEntity, Quota] = {}
        self._sensors: dict[tuple[str, str], ClientSensors] = {}
        # the registry gauges of each client's sensors (see the module doc)
        self._sensor_gauges: dict[tuple[str, str], list[tuple[MetricName, Gauge]]] = {}
        self._next_purge_ms = 0
        self.throttled_channel_reaper = ThrottledChannelReaper(quota_type, time, thread_name_prefix)
        self.throttled_channel_reaper.start()

    # ------------------------------------------------------------------ recording

    def maybe_record_and_get_throttle_time_ms(self, request: Any, value: float, time_ms: int) -> int:
        if not self.quotas_enabled:
            return 0
        context = request.context
        return self.record_and_get_throttle_time_ms(context.principal, context.client_id or "", value, time_ms)

    def record_and_get_throttle_time_ms(self, principal: str, client_id: str, value: float, time_ms: int) -> int:
        """Record ``value`` for the client; the throttle time in ms if that put it over its quota."""
        sensors = self.get_or_create_quota_sensors(principal, client_id)
        try:
            sensors.quota_sensor.record(value, time_ms, True)
            return 0
        except QuotaViolationException as e:
            throttle_time_ms = self.throttle_time(e, time_ms)
            logger.debug("Quota violated for sensor (%s). Delay time: (%d)", sensors.quota_sensor.name,
                         throttle_time_ms)
            return throttle_time_ms

    def record_no_throttle(self, principal: str, client_id: str, value: float) -> None:
        sensors = self.get_or_create_quota_sensors(principal, client_id)
        sensors.quota_sensor.record(value, self.time.hi_res_milliseconds(), False)

    def unrecord_quota_sensor(self, request: Any, value: float, time_ms: int) -> None:
        """Take back a value recorded for a request that is answered empty because it is throttled
        (a throttled fetch returns no data, so its bytes must not count)."""
        context = request.context
        sensors = self.get_or_create_quota_sensors(context.principal, context.client_id or "")
        sensors.quota_sensor.record(-value, time_ms, False)

    def get_max_value_in_quota_window(self, principal: str, client_id: str) -> float:
        """The most that can be recorded at once without certain throttling (caps a fetch's size)."""
        if not self.quotas_enabled:
            return float(LONG_MAX)
        sensors = self.get_or_create_quota_sensors(principal, client_id)
        limit = self._quota_limit_or_none(sensors.metric_tags)
        if limit is None:
            return float(LONG_MAX)
        return limit * (self.config.num_quota_samples - 1) * self.config.quota_window_size_seconds

    def throttle(self, request: Any, throttle_time_ms: int, channel_throttling_callback: Callable[[Any], None]) -> None:
        """Mute the request's connection for ``throttle_time_ms`` (its response goes out at once)."""
        if throttle_time_ms <= 0:
            return
        context = request.context
        sensors = self.get_or_create_quota_sensors(context.principal, context.client_id or "")
        sensors.throttle_time_sensor.record(throttle_time_ms, self.time.hi_res_milliseconds(), False)
        channel = ThrottledChannel(request, self.time, throttle_time_ms, channel_throttling_callback)
        self.throttled_channel_reaper.add(channel)
        logger.debug("Channel throttled for sensor (%s). Delay time: (%d)", sensors.quota_sensor.name,
                     throttle_time_ms)

    def throttle_time(self, e: QuotaViolationException, time_ms: int) -> int:
        return throttle_time(e, time_ms)

    # ------------------------------------------------------------------ quotas

    def quota(self, user: str, client_id: str) -> Quota:
        """The quota of the client with the (not sanitized) user name ``user`` and ``client_id``."""
        tags = self.quota_metric_tags(sanitize(user), client_id)
        return Quota.upper_bound(self._quota_limit(tags))

    def quota_metric_tags(self, sanitized_user: str, client_id: str) -> tuple[str, str]:
        """(user tag, client-id tag): which clients share one rate, from the most specific quota
        entity that exists for this client (see the module doc)."""
        enabled = self._quota_types_enabled
        if enabled in (QuotaTypes.NO_QUOTAS, QuotaTypes.CLIENT_ID_QUOTA_ENABLED):
            return "", client_id
        if enabled == QuotaTypes.USER_QUOTA_ENABLED:
            return sanitized_user, ""
        if enabled == QuotaTypes.USER_CLIENT_ID_QUOTA_ENABLED:
            return sanitized_user, client_id
        quotas = self._overridden_quotas
        user_entity = UserEntity(sanitized_user)
        client_id_entity = ClientIdEntity(client_id)
        if KafkaQuotaEntity(user_entity, client_id_entity) in quotas:
            return sanitized_user, client_id
        if KafkaQuotaEntity(user_entity, DEFAULT_CLIENT_ID_ENTITY) in quotas:
            return sanitized_user, client_id
        if KafkaQuotaEntity(user_entity, None) in quotas:
            return sanitized_user, ""
        if KafkaQuotaEntity(DEFAULT_USER_ENTITY, client_id_entity) in quotas:
            return sanitized_user, client_id
        if DEFAULT_USER_CLIENT_ID_QUOTA_ENTITY in quotas:
            return sanitized_user, client_id
        if DEFAULT_USER_QUOTA_ENTITY in quotas:
            return sanitized_user, ""
        return "", client_id

    def _quota_limit_or_none(self, metric_tags: tuple[str, str]) -> Optional[float]:
        sanitized_user, client_id = metric_tags
        quotas = self._overridden_quotas
        quota: Optional[Quota] = None
        if sanitized_user and client_id:
            user_entity = UserEntity(sanitized_user)
            client_id_entity = ClientIdEntity(client_id)
            quota = quotas.get(KafkaQuotaEntity(user_entity, client_id_entity))
            if quota is None:
                quota = quotas.get(KafkaQuotaEntity(user_entity, DEFAULT_CLIENT_ID_ENTITY))
            if quota is None:
                quota = quotas.get(KafkaQuotaEntity(DEFAULT_USER_ENTITY, client_id_entity))
            if quota is None:
                quota = quotas.get(DEFAULT_USER_CLIENT_ID_QUOTA_ENTITY)
        elif sanitized_user:
            quota = quotas.get(KafkaQuotaEntity(UserEntity(sanitized_user), None))
            if quota is None:
                quota = quotas.get(DEFAULT_USER_QUOTA_ENTITY)
        elif client_id:
            quota = quotas.get(KafkaQuotaEntity(None, ClientIdEntity(client_id)))
            if quota is None:
                quota = quotas.get(DEFAULT_CLIENT_ID_QUOTA_ENTITY)
            if quota is None:
                quota = self._static_config_client_id_quota
        return None if quota is None else quota.bound

    def _quota_limit(self, metric_tags: tuple[str, str]) -> float:
        limit = self._quota_limit_or_none(metric_tags)
        return float(LONG_MAX) if limit is None else limit

    def update_quota(self, sanitized_user: Optional[str], client_id: Optional[str],
                     sanitized_client_id: Optional[str], quota: Optional[Quota]) -> None:
        """Set (or with ``quota`` None remove) the quota of one entity; ``<default>`` names the
        default user or client id. Existing sensors take the new bounds at once."""
        with self._lock:
            user_entity: UserEntity | _DefaultUserEntity | None
            client_id_entity: ClientIdEntity | _DefaultClientIdEntity | None
            if sanitized_user is None:
                user_entity = None
            elif sanitized_user == ConfigEntityName.DEFAULT:
                user_entity = DEFAULT_USER_ENTITY
            else:
                user_entity = UserEntity(sanitized_user)
            if sanitized_client_id is None:
                client_id_entity = None
            elif sanitized_client_id == ConfigEntityName.DEFAULT:
                client_id_entity = DEFAULT_CLIENT_ID_ENTITY
            else:
                if client_id is None:
                    raise ValueError("Client-id not provided")
                client_id_entity = ClientIdEntity(client_id)
            entity = KafkaQuotaEntity(user_entity, client_id_entity)
            if user_entity is not None:
                if client_id_entity is not None:
                    self._quota_types_enabled |= QuotaTypes.USER_CLIENT_ID_QUOTA_ENABLED
                else:
                    self._quota_types_enabled |= QuotaTypes.USER_QUOTA_ENABLED
            elif client_id_entity is not None:
                self._quota_types_enabled |= QuotaTypes.CLIENT_ID_QUOTA_ENABLED
            if quota is not None:
                logger.info("Changing %s quota for %s to %s", self.quota_type, entity, quota.bound)
                self._overridden_quotas[entity] = quota
            elif self._overridden_quotas.pop(entity, None) is not None:
                logger.info("Removing %s quota for %s", self.quota_type, entity)
            self.update_quota_metric_configs()
            self.quotas_enabled = self._quota_types_enabled != QuotaTypes.NO_QUOTAS

    def update_quota_metric_configs(self) -> None:
        """Give every existing quota sensor the bound its tags now resolve to."""
        with self._lock:
            for tags, sensors in self._sensors.items():
                new_bound = self._quota_limit(tags)
                for metric in sensors.quota_sensor.metrics:
                    if metric.name != self.quota_metric_name:
                        continue  # a sensor's other metrics (ControllerMutation's mutation-rate) have no quota
                    if metric.config.quota is None or metric.config.quota.bound != new_bound:
                        logger.info("Sensor for quota-id %s already exists. Setting quota to %s in MetricConfig",
                                    _tags_repr(tags), new_bound)
                        sensors.quota_sensor.set_metric_config(metric, self._quota_metric_config(new_bound))

    # ------------------------------------------------------------------ sensors

    def get_or_create_quota_sensors(self, principal: str, client_id: str) -> ClientSensors:
        sanitized_user = sanitize(principal_name(principal))
        with self._lock:
            tags = self.quota_metric_tags(sanitized_user, client_id)
            sensors = self._sensors.get(tags)
            now = self.time.hi_res_milliseconds()
            if sensors is None:
                if now >= self._next_purge_ms:
                    self._purge_expired_sensors(now)
                sensors = self._create_sensors(tags, now)
                self._sensors[tags] = sensors
                self._register_sensor_metrics(sensors)
            return sensors

    def _create_sensors(self, tags: tuple[str, str], now: int) -> ClientSensors:
        suffix = ":".join(tags)
        expiration_ms = INACTIVE_SENSOR_EXPIRATION_TIME_SECONDS * 1000
        quota_sensor = Sensor(f"{self.quota_type}-{suffix}", expiration_ms, now)
        quota_sensor.add(KafkaMetric(self.quota_metric_name, Rate(), self._quota_metric_config(self._quota_limit(tags))))
        throttle_sensor = Sensor(f"{self.quota_type}ThrottleTime-{suffix}", expiration_ms, now)
        throttle_sensor.add(KafkaMetric("throttle-time", Avg(),
                                        MetricConfig(METRICS_NUM_SAMPLES, METRICS_SAMPLE_WINDOW_MS)))
        return ClientSensors(tags, quota_sensor, throttle_sensor)

    def _purge_expired_sensors(self, now: int) -> None:
        self._next_purge_ms = now + _SENSOR_PURGE_INTERVAL_MS
        expired = [tags for tags, s in self._sensors.items()
                   if s.quota_sensor.has_expired(now) and s.throttle_time_sensor.has_expired(now)]
        for tags in expired:
            del self._sensors[tags]
            self._remove_sensor_metrics(tags)

    def _metric_name(self, tags: tuple[str, str], attribute: str) -> MetricName:
        """``kafka.server:type=<quota type>,user=U,client-id=C`` / ``attribute``, as Kafka's
        JmxReporter names a sensor's metric (tags with an empty value left out)."""
        kept = tuple((k, v) for k, v in zip((USER_TAG, CLIENT_ID_TAG), tags) if v)
        mbean = f"kafka.server:type={self.quota_type}" + "".join(f",{k}={v}" for k, v in kept)
        return MetricName("kafka.server", str(self.quota_type), "", None, mbean, kept, attribute=attribute)

    def _register_sensor_metrics(self, sensors: ClientSensors) -> None:
        registry = default_registry()
        now = self.time.hi_res_milliseconds
        gauges = []
        for sensor in (sensors.quota_sensor, sensors.throttle_time_sensor):
            for metric in sensor.metrics:
                name = self._metric_name(sensors.metric_tags, metric.name)
                # another broker of this process measuring the same client: the newest one counts
                registry.remove_metric(name)
                gauges.append((name, registry.new_gauge(name, _measurement(sensor, metric, now))))
        self._sensor_gauges[sensors.metric_tags] = gauges

    def _remove_sensor_metrics(self, tags: tuple[str, str]) -> None:
        registry = default_registry()
        for name, gauge in self._sensor_gauges.pop(tags, ()):
            if registry.get(name) is gauge:
                registry.remove_metric(name)

    def _quota_metric_config(self, bound: float) -> MetricConfig:
        return MetricConfig(samples=self.config.num_quota_samples,
                            time_window_ms=self.config.quota_window_size_seconds * 1000,
                            quota=Quota.upper_bound(bound))

    @property
    def quota_metric_name(self) -> str:
        return "byte-rate"

    def client_metrics(self) -> list[dict[str, Any]]:
        """Every client sensor's tags, measured rate, bound and average throttle time (Kafka's
        ``kafka.server:type=<Produce|Fetch|Request>,user=..,client-id=..`` metrics)."""
        now = self.time.hi_res_milliseconds()
        with self._lock:
            entries = list(self._sensors.values())
        result = []
        for sensors in entries:
            quota_metric = sensors.quota_sensor.metrics[0]
            throttle_metric = sensors.throttle_time_sensor.metrics[0]
            value = sensors.quota_sensor.measure(quota_metric, now)
            throttle = sensors.throttle_time_sensor.measure(throttle_metric, now)
            result.append({"type": str(self.quota_type), USER_TAG: desanitize(sensors.metric_tags[0]),
                           CLIENT_ID_TAG: sensors.metric_tags[1], self.quota_metric_name: value,
                           "quota": quota_metric.config.quota.bound if quota_metric.config.quota else None,
                           "throttle-time": throttle})
        return result

    def shutdown(self) -> None:
        self.throttled_channel_reaper.shutdown()
        self.throttled_channel_reaper.end_all()
        with self._lock:
            for tags in list(self._sensor_gauges):
                self._remove_sensor_metrics(tags)


def _tags_repr(tags: tuple[str, str]) -> str:
    return f"{{{USER_TAG}={tags[0]}, {CLIENT_ID_TAG}={tags[1]}}}"
