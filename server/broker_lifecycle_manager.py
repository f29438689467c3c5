"""Port of core/src/main/scala/kafka/server/BrokerLifecycleManager.scala (Kafka 2.8.2).

Owns a KRaft broker's state and its conversation with the active controller (KIP-631):

* it registers the broker (BrokerRegistration, API 62) with its incarnation id (random,
  one per start), its advertised listeners, supported features and rack, retrying with
  exponential backoff, and gives up (shutting itself down) if no registration succeeds
  within initial.broker.registration.timeout.ms;
* once registered it heartbeats (BrokerHeartbeat, API 63) every
  broker.heartbeat.interval.ms, reporting the highest metadata offset the broker has
  applied, whether it wants to stay fenced, and whether it wants to shut down;
* it moves the broker through its states from the answers: STARTING until the controller
  says the broker has caught up with the metadata log (``initial_catch_up_future``
  completes), RECOVERY until the controller unfences it (after ``set_ready_to_unfence``),
  then RUNNING; a controlled shutdown is PENDING_CONTROLLED_SHUTDOWN (heartbeats carry
  want_shut_down, the controller moves leaderships away) until the controller answers
  should_shut_down, then SHUTTING_DOWN (``controlled_shutdown_future`` completes).

Everything runs on one KafkaEventQueue; the state and the broker epoch are written only
there and may be read from any thread.
"""
from __future__ import annotations

import logging
import uuid
from concurrent.futures import Future
from typing import Any, Callable, Mapping, Optional

from kio.schema.broker_heartbeat.v0.request import BrokerHeartbeatRequest
from kio.schema.broker_registration.v0.request import BrokerRegistrationRequest, Feature, Listener

from kafka_py.metadata.broker_state import BrokerState
from kafka_py.metadata.queue.event_queue import DeadlineFunction, Event
from kafka_py.metadata.queue.kafka_event_queue import KafkaEventQueue
from kafka_py.metadata.version_range import VersionRange
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.utils.exponential_backoff import ExponentialBackoff
from kafka_py.core.utils.logging import TRACE, IdentLogger
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

_NS_PER_MS = 1_000_000


class _Event(Event):
    def __init__(self, manager: "BrokerLifecycleManager", run: Callable[[], None], name: str) -> None:
        self._manager = manager
        self._run = run
        self._name = name

    def run(self) -> None:
        self._run()

    def handle_exception(self, e: BaseException) -> None:
        from kafka_py.metadata.queue.event_queue import RejectedExecutionException, TimeoutException

        # a deferred event (the registration timeout, the next heartbeat) left when the queue closes
        if isinstance(e, (RejectedExecutionException, TimeoutException)):
            self._manager.logger.debug("Not running %s: the event queue is closed.", self._name)
        else:
            self._manager.logger.error("Unexpected error in %s", self._name, exc_info=e)

    def __str__(self) -> str:
        return self._name


class BrokerLifecycleManager:
    def __init__(self, config: Any, time: Time, thread_name_prefix: Optional[str] = None) -> None:
        self.config = config
        self.time = time
        self.node_id: int = config.node_id
        self.rack: Optional[str] = config.rack
        self.logger = IdentLogger(logger, f"[BrokerLifecycleManager id={self.node_id}] ")
        self.initial_timeout_ns = int(config.initial_registration_timeout_ms) * _NS_PER_MS
        self.resend_exponential_backoff = ExponentialBackoff(100, 2, int(config.broker_session_timeout_ms), 0.02)
        # identifies this run of the broker to the controller
        self.incarnation_id = uuid.uuid4()
        self.initial_catch_up_future: Future = Future()
        self.controlled_shutdown_future: Future = Future()
        # written on the event queue's thread only; read from anywhere
        self._broker_epoch = -1
        self._state = BrokerState.NOT_RUNNING
        # the event queue's thread only
        self._failed_attempts = 0
        self._highest_metadata_offset_provider: Optional[Callable[[], int]] = None
        self._ready_to_unfence = False
        self._got_controlled_shutdown_response = False
        self._registered = False
        self._initial_registration_succeeded = False
        self._cluster_id: Optional[str] = None
        self._advertised_listeners: tuple = ()
        self._supported_features: dict[str, VersionRange] = {}
        self._channel_manager: Any = None
        self.event_queue = KafkaEventQueue(time, self.logger.ident, thread_name_prefix or "")

    def _append(self, name: str, run: Callable[[], None]) -> None:
        self.event_queue.append(_Event(self, run, name))

    # ------------------------------------------------------------------ the API

    def start(self, highest_metadata_offset_provider: Callable[[], int], channel_manager: Any, cluster_id: str,
              advertised_listeners: tuple, supported_features: Mapping[str, VersionRange]) -> None:
        """``advertised_listeners``: BrokerRegistration Listener entries (name, host, port,
        security protocol id)."""
        def startup() -> None:
            self._highest_metadata_offset_provider = highest_metadata_offset_provider
            self._channel_manager = channel_manager
            channel_manager.start()
            self._state = BrokerState.STARTING
            self._cluster_id = cluster_id
            self._advertised_listeners = tuple(advertised_listeners)
            self._supported_features = dict(supported_features)
            self.event_queue.schedule_deferred("initialRegistrationTimeout",
                                               DeadlineFunction(self.time.nanoseconds() + self.initial_timeout_ns),
                                               _Event(self, self._registration_timeout, "RegistrationTimeoutEvent"))
            self._send_broker_registration()
            self.logger.info("Incarnation %s of broker %d in cluster %s is now STARTING.", self.incarnation_id,
                             self.node_id, cluster_id)

        self._append("StartupEvent", startup)

    def set_ready_to_unfence(self) -> None:
        def ready() -> None:
            self._ready_to_unfence = True
            self._schedule_next_communication_immediately()

        self._append("SetReadyToUnfenceEvent", ready)

    def broker_epoch(self) -> int:
        return self._broker_epoch

    def state(self) -> BrokerState:
        return self._state

    def begin_controlled_shutdown(self) -> None:
        """Enter PENDING_CONTROLLED_SHUTDOWN if RUNNING; any other state shuts down at once."""
        def begin() -> None:
            if self._state is BrokerState.PENDING_CONTROLLED_SHUTDOWN:
                self.logger.info("Attempted to enter pending controlled shutdown state, but we are already in that "
                                 "state.")
            elif self._state is BrokerState.RUNNING:
                self.logger.info("Beginning controlled shutdown.")
                self._state = BrokerState.PENDING_CONTROLLED_SHUTDOWN
                # tell the controller now rather than at the next heartbeat
                self._schedule_next_communication_immediately()
            else:
                self.logger.info("Skipping controlled shutdown because we are in state %s.", self._state.name)
                self.begin_shutdown()

        self._append("BeginControlledShutdownEvent", begin)

    def begin_shutdown(self) -> None:
        self.event_queue.begin_shutdown("beginShutdown", _Event(self, self._shutdown_event, "ShutdownEvent"))

    def close(self) -> None:
        self.begin_shutdown()
        self.event_queue.close()

    # ------------------------------------------------------------------ registration

    def _send_broker_registration(self) -> None:
        features = tuple(Feature(name=name, min_supported_version=r.min, max_supported_version=r.max)
                         for name, r in self._supported_features.items())
        data = BrokerRegistrationRequest(broker_id=self.node_id, cluster_id=self._cluster_id,
                                         incarnation_id=self.incarnation_id, listeners=self._advertised_listeners,
                                         features=features, rack=self.rack)
        self.logger.log(TRACE, "Sending broker registration %s", data)
        self._channel_manager.send_request(ApiKeys.BROKER_REGISTRATION, data,
                                           _CompletionHandler(self, self._on_registration_response,
                                                              self._on_registration_timeout))

    def _on_registration_response(self, response: Any) -> None:
        if response.version_mismatch is not None:
            self.logger.error("Unable to register broker %d because of an API version problem.", self.node_id,
                              exc_info=response.version_mismatch)
            self._schedule_next_communication_after_failure()
        elif response.response_body is None:
            self.logger.warning("Unable to register broker %d.", self.node_id)
            self._schedule_next_communication_after_failure()
        elif type(response.response_body).__name__ != "BrokerRegistrationResponse":
            self.logger.error("Unable to register broker %d because the controller returned an invalid response "
                              "type.", self.node_id)
            self._schedule_next_communication_after_failure()
        else:
            message = response.response_body
            error = Errors.for_code(int(message.error_code))
            if error is Errors.NONE:
                self._failed_attempts = 0
                self._broker_epoch = int(message.broker_epoch)
                self._registered = True
                self._initial_registration_succeeded = True
                self.logger.info("Successfully registered broker %d with broker epoch %d", self.node_id,
                                 self._broker_epoch)
                self._schedule_next_communication_immediately()  # a heartbeat at once
            else:
                self.logger.info("Unable to register broker %d because the controller returned error %s",
                                 self.node_id, error.name)
                self._schedule_next_communication_after_failure()

    def _on_registration_timeout(self) -> None:
        self.logger.info("Unable to register the broker because the RPC got timed out before it could be sent.")
        self._schedule_next_communication_after_failure()

    # ------------------------------------------------------------------ heartbeats

    def _send_broker_heartbeat(self) -> None:
        provider = self._highest_metadata_offset_provider
        assert provider is not None  # (set by start, whose registration comes before any heartbeat)
        metadata_offset = provider()
        data = BrokerHeartbeatRequest(broker_id=self.node_id, broker_epoch=self._broker_epoch,
                                      current_metadata_offset=metadata_offset,
                                      want_fence=not self._ready_to_unfence,
                                      want_shut_down=self._state is BrokerState.PENDING_CONTROLLED_SHUTDOWN)
        self.logger.log(TRACE, "Sending broker heartbeat %s", data)
        self._channel_manager.send_request(ApiKeys.BROKER_HEARTBEAT, data,
                                           _CompletionHandler(self, self._on_heartbeat_response,
                                                              self._on_heartbeat_timeout))

    def _on_heartbeat_response(self, response: Any) -> None:
        if response.version_mismatch is not None:
            self.logger.error("Unable to send broker heartbeat for %d because of an API version problem.",
                              self.node_id, exc_info=response.version_mismatch)
            self._schedule_next_communication_after_failure()
            return
        if response.response_body is None:
            self.logger.warning("Unable to send broker heartbeat for %d. Retrying.", self.node_id)
            self._schedule_next_communication_after_failure()
            return
        if type(response.response_body).__name__ != "BrokerHeartbeatResponse":
            self.logger.error("Unable to send broker heartbeat for %d because the controller returned an invalid "
                              "response type.", self.node_id)
            self._schedule_next_communication_after_failure()
            return
        message = response.response_body
        error = Errors.for_code(int(message.error_code))
        if error is not Errors.NONE:
            self.logger.warning("Broker %d sent a heartbeat request but received error %s.", self.node_id,
                                error.name)
            self._schedule_next_communication_after_failure()
            return
        self._failed_attempts = 0
        state = self._state
        if state is BrokerState.STARTING:
            if message.is_caught_up:
                self.logger.info("The broker has caught up. Transitioning from STARTING to RECOVERY.")
                self._state = BrokerState.RECOVERY
                if not self.initial_catch_up_future.done():
                    self.initial_catch_up_future.set_result(None)
            else:
                self.logger.debug("The broker is STARTING. Still waiting to catch up with cluster metadata.")
            # soon again: with no recovery to do, the broker starts a little quicker
            self._schedule_next_communication(10 * _NS_PER_MS)
        elif state is BrokerState.RECOVERY:
            if not message.is_fenced:
                self.logger.info("The broker has been unfenced. Transitioning from RECOVERY to RUNNING.")
                self._state = BrokerState.RUNNING
            else:
                self.logger.info("The broker is in RECOVERY.")
            self._schedule_next_communication_after_success()
        elif state is BrokerState.RUNNING:
            self.logger.debug("The broker is RUNNING. Processing heartbeat response.")
            self._schedule_next_communication_after_success()
        elif state is BrokerState.PENDING_CONTROLLED_SHUTDOWN:
            if not message.should_shut_down:
                self.logger.info("The broker is in PENDING_CONTROLLED_SHUTDOWN state, still waiting for the active "
                                 "controller.")
                if not self._got_controlled_shutdown_response:
                    # the first answer: ask again soon, controlled shutdown is often quick
                    self._schedule_next_communication(50 * _NS_PER_MS)
                else:
                    self._schedule_next_communication_after_success()
            else:
                self.logger.info("The controller has asked us to exit controlled shutdown.")
                self.begin_shutdown()
            self._got_controlled_shutdown_response = True
        elif state is BrokerState.SHUTTING_DOWN:
            self.logger.info("The broker is SHUTTING_DOWN. Ignoring heartbeat response.")
        else:
            self.logger.error("Unexpected broker state %s", state.name)
            self._schedule_next_communication_after_success()

    def _on_heartbeat_timeout(self) -> None:
        self.logger.info("Unable to send a heartbeat because the RPC got timed out before it could be sent.")
        self._schedule_next_communication_after_failure()

    # ------------------------------------------------------------------ scheduling

    def _schedule_next_communication_immediately(self) -> None:
        self._schedule_next_communication(0)

    def _schedule_next_communication_after_failure(self) -> None:
        delay_ms = self.resend_exponential_backoff.backoff(self._failed_attempts)
        self._failed_attempts += 1
        self._schedule_next_communication(delay_ms * _NS_PER_MS)

    def _schedule_next_communication_after_success(self) -> None:
        self._schedule_next_communication(int(self.config.broker_heartbeat_interval_ms) * _NS_PER_MS)

    def _schedule_next_communication(self, interval_ns: int) -> None:
        self.logger.log(TRACE, "Scheduling next communication at %d ms from now.", interval_ns // _NS_PER_MS)
        # one tag: a new schedule replaces the pending one
        self.event_queue.schedule_deferred("communication", DeadlineFunction(self.time.nanoseconds() + interval_ns),
                                           _Event(self, self._communicate, "CommunicationEvent"))

    def _communicate(self) -> None:
        if self._registered:
            self._send_broker_heartbeat()
        else:
            self._send_broker_registration()

    def _registration_timeout(self) -> None:
        if not self._initial_registration_succeeded:
            self.logger.error("Shutting down because we were unable to register with the controller quorum.")
            self.event_queue.begin_shutdown("registrationTimeout",
                                            _Event(self, self._shutdown_event, "ShutdownEvent"))

    def _shutdown_event(self) -> None:
        self.logger.info("Transitioning from %s to %s.", self._state.name, BrokerState.SHUTTING_DOWN.name)
        self._state = BrokerState.SHUTTING_DOWN
        if not self.controlled_shutdown_future.done():
            self.controlled_shutdown_future.set_result(None)
        self.initial_catch_up_future.cancel()
        if self._channel_manager is not None:
            self._channel_manager.shutdown()
            self._channel_manager = None


class _CompletionHandler:
    """A ControllerRequestCompletionHandler whose answers are handled on the manager's queue
    (the channel calls it on its own thread)."""

    def __init__(self, manager: BrokerLifecycleManager, on_response: Callable[[Any], None],
                 on_timeout_: Callable[[], None]) -> None:
        self._manager = manager
        self._on_response = on_response
        self._on_timeout = on_timeout_

    def on_complete(self, response: Any) -> None:
        self._manager._append("ResponseEvent", lambda: self._on_response(response))

    def on_timeout(self) -> None:
        self._manager._append("TimeoutEvent", self._on_timeout)


def listener_entries(listeners: Any) -> tuple[Listener, ...]:
    """BrokerRegistration's listener entries from (name, host, port, security protocol id)."""
    return tuple(Listener(name=name, host=host, port=port, security_protocol=protocol)
                 for name, host, port, protocol in listeners)


__all__ = ["BrokerLifecycleManager", "listener_entries"]
