"""Port of metadata/src/main/java/org/apache/kafka/controller/ScramControlManager.java (Kafka
3.5.0; 2.8.2's controller kept no SCRAM credentials).

The SCRAM credentials of a KRaft cluster: one per user and mechanism, in a timeline map, so
an uncommitted change rolls back with the rest of the controller's state.

``alter_credentials`` takes an AlterUserScramCredentials request. An upsertion becomes a
UserScramCredentialRecord holding the salt, the iterations and the stored and server keys
derived from the salted password the client sent (the salted password itself is never
written); a deletion becomes a RemoveUserScramCredentialRecord. A user's alterations succeed
or fail together, each user answered once, in the order the request first names them:

* an empty name: UNACCEPTABLE_CREDENTIAL; a mechanism other than SCRAM-SHA-256 (1) or
  SCRAM-SHA-512 (2): UNSUPPORTED_SASL_MECHANISM;
* the same user and mechanism twice: DUPLICATE_RESOURCE;
* iterations below the mechanism's minimum (4096) or above 16384, or an empty salt or salted
  password: UNACCEPTABLE_CREDENTIAL;
* deleting a credential that does not exist: RESOURCE_NOT_FOUND.

Kafka 3.5 refuses two alterations of one user in a request whatever their mechanisms; here,
as ZooKeeper mode does, only two of the same mechanism, so ``kafka-configs.sh`` can set both
mechanisms of a user at once. The records are written as one atomic batch.

``iterator(epoch)`` gives the records a snapshot holds for this state.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Iterator

from kafka_py.clients.common.api_error import ApiError
from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.controller.controller_result import ControllerResult
from kafka_py.metadata.records.remove_user_scram_credential_record.v0 import RemoveUserScramCredentialRecord
from kafka_py.metadata.records.user_scram_credential_record.v0 import UserScramCredentialRecord
from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry
from kafka_py.metadata.timeline.timeline_hash_map import TimelineHashMap
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.security.scram import MAX_ITERATIONS, ScramCredential, ScramFormatter, ScramMechanism
from kafka_py.core.utils.logging import IdentLogger

logger = logging.getLogger(__name__)

# The mechanism bytes of the admin API and the records (org.apache.kafka.clients.admin.ScramMechanism).
SCRAM_MECHANISM_TYPES = {1: ScramMechanism.SCRAM_SHA_256, 2: ScramMechanism.SCRAM_SHA_512}
SCRAM_MECHANISM_IDS = {mechanism: type_id for type_id, mechanism in SCRAM_MECHANISM_TYPES.items()}
# how many credential records go in one snapshot batch
SNAPSHOT_BATCH_SIZE = 10


@dataclass(frozen=True, slots=True)
class ScramCredentialKey:
    username: str
    mechanism: ScramMechanism


def credential_from_record(record: UserScramCredentialRecord) -> ScramCredential:
    return ScramCredential(bytes(record.salt), bytes(record.stored_key), bytes(record.server_key),
                           int(record.iterations))


class ScramControlManager:
    def __init__(self, snapshot_registry: SnapshotRegistry, log_prefix: str = "") -> None:
        self.logger = IdentLogger(logger, log_prefix)
        self._credentials: TimelineHashMap[ScramCredentialKey, ScramCredential] = TimelineHashMap(snapshot_registry)

    # ------------------------------------------------------------------ writes

    def alter_credentials(self, request: Any) -> ControllerResult[list[tuple[str, ApiError]]]:
        """The records of an AlterUserScramCredentials request, and each user's result."""
        operations = ([(d.name, None, d) for d in request.deletions]
                      + [(u.name, u, u) for u in request.upsertions])
        users = list(dict.fromkeys(name for name, _, _ in operations))
        errors: dict[str, ApiError] = {}
        seen: set[tuple[str, int]] = set()
        for name, upsertion, op in operations:
            if name in errors:
                continue
            error = self._validate(name, upsertion, op, seen)
            if error is not None:
                errors[name] = error
        records: list[ApiMessageAndVersion] = []
        for user in users:
            if user in errors:
                continue
            for name, upsertion, op in operations:
                if name != user:
                    continue
                mechanism_id = int(op.mechanism)
                if upsertion is None:
                    records.append(ApiMessageAndVersion.of(
                        RemoveUserScramCredentialRecord(name=name, mechanism=mechanism_id)))
                else:
                    formatter = ScramFormatter(SCRAM_MECHANISM_TYPES[mechanism_id])
                    salted = bytes(upsertion.salted_password)
                    records.append(ApiMessageAndVersion.of(UserScramCredentialRecord(
                        name=name, mechanism=mechanism_id, salt=bytes(upsertion.salt),
                        stored_key=formatter.stored_key(formatter.client_key(salted)),
                        server_key=formatter.server_key(salted), iterations=int(upsertion.iterations))))
        results = [(user, errors.get(user, ApiError.NONE)) for user in users]  # type: ignore[attr-defined]
        return ControllerResult.atomic_of(records, results)

    def _validate(self, name: str, upsertion: Any, op: Any, seen: set[tuple[str, int]]) -> ApiError | None:
        if not name:
            return ApiError(Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
        mechanism = SCRAM_MECHANISM_TYPES.get(int(op.mechanism))
        if mechanism is None:
            return ApiError(Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
        key = (name, int(op.mechanism))
        if key in seen:
            return ApiError(Errors.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request")
        seen.add(key)
        if upsertion is None:
            if ScramCredentialKey(name, mechanism) not in self._credentials:
                return ApiError(Errors.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist")
            return None
        if int(upsertion.iterations) < mechanism.min_iterations:
            return ApiError(Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
        if int(upsertion.iterations) > MAX_ITERATIONS:
            return ApiError(Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
        if not upsertion.salt or not upsertion.salted_password:
            return ApiError(Errors.UNACCEPTABLE_CREDENTIAL, "Salt and salted password must not be empty")
        return None

    # ------------------------------------------------------------------ replay and reads

    def replay(self, record: UserScramCredentialRecord) -> None:
        mechanism = SCRAM_MECHANISM_TYPES.get(int(record.mechanism))
        if mechanism is None:
            raise RuntimeError(f"Unknown SCRAM mechanism {int(record.mechanism)} for user {record.name}")
        key = ScramCredentialKey(str(record.name), mechanism)
        if self._credentials.put(key, credential_from_record(record)) is None:
            self.logger.info("Created new SCRAM credential for %s with mechanism %s.", key.username,
                             mechanism.mechanism_name)
        else:
            self.logger.info("Modified SCRAM credential for %s with mechanism %s.", key.username,
                             mechanism.mechanism_name)

    def replay_remove(self, record: RemoveUserScramCredentialRecord) -> None:
        mechanism = SCRAM_MECHANISM_TYPES.get(int(record.mechanism))
        key = ScramCredentialKey(str(record.name), mechanism)  # type: ignore[arg-type]
        if mechanism is None or self._credentials.remove(key) is None:
            raise RuntimeError(f"Unable to find credential to delete: {key}")
        self.logger.info("Removed SCRAM credential for %s with mechanism %s.", key.username, mechanism.mechanism_name)

    def credentials(self, epoch: int = LATEST_EPOCH) -> dict[ScramCredentialKey, ScramCredential]:
        return self._credentials.to_dict(epoch)

    def iterator(self, epoch: int) -> Iterator[list[ApiMessageAndVersion]]:
        """The records that rebuild the credentials as of ``epoch``."""
        batch: list[ApiMessageAndVersion] = []
        items = sorted(self._credentials.items(epoch), key=lambda item: (item[0].username, item[0].mechanism.name))
        for key, credential in items:
            batch.append(ApiMessageAndVersion.of(UserScramCredentialRecord(
                name=key.username, mechanism=SCRAM_MECHANISM_IDS[key.mechanism], salt=credential.salt,
                stored_key=credential.stored_key, server_key=credential.server_key,
                iterations=credential.iterations)))
            if len(batch) == SNAPSHOT_BATCH_SIZE:
                yield batch
                batch = []
        if batch:
            yield batch


__all__ = ["SCRAM_MECHANISM_IDS", "SCRAM_MECHANISM_TYPES", "ScramControlManager", "ScramCredentialKey",
           "credential_from_record"]
