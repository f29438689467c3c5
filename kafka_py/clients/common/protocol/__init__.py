"""Kafka's wire protocol, sans-IO: clients/.../common/protocol and common/requests.

Pure functions over bytes; nothing here touches a socket.

- ``errors.Errors``: every error code of Kafka 2.8.2.
- ``api_keys.ApiKeys``: every API, its versions, what this broker serves.
- ``headers``: request headers v0-v2 and response headers v0-v1.
- ``framing``: the 4-byte size prefix; an incremental ``FrameDecoder``.
- ``messages``: request/response bodies as kio message classes.
- ``codec``: the bounds-checked reader behind ``messages``.
- ``schema``: the inter-broker messages kio lacks (LeaderAndIsr, StopReplica,
  UpdateMetadata, ControlledShutdown), in kio's style.

Each is imported from its own module, as Kafka's classes are: the package re-exports
nothing, so its modules (and their optional compiled parts, ``_headers`` and the like) can
import one another without passing through here.
"""
