"""ScramControlManager, after Kafka 3.5's ScramControlManagerTest: upserts and deletions through
records, rollback with the timeline, snapshot records, and Kafka's errors for bad alterations."""
from __future__ import annotations

from types import SimpleNamespace

from kafka_py.metadata.controller.scram_control_manager import ScramControlManager, ScramCredentialKey
from kafka_py.metadata.records.metadata_record_type import MetadataRecordType
from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry
from kafka_py.clients.common.security.scram import ScramFormatter, ScramMechanism

SHA256, SHA512 = 1, 2


def upsert(name: str, mechanism: int = SHA256, iterations: int = 8192, password: str = "secret"):
    salt = b"salt-" + name.encode()
    m = ScramMechanism.SCRAM_SHA_256 if mechanism == SHA256 else ScramMechanism.SCRAM_SHA_512
    salted = ScramFormatter(m).salted_password(password, salt, iterations) if mechanism in (1, 2) else b"x"
    return SimpleNamespace(name=name, mechanism=mechanism, iterations=iterations, salt=salt, salted_password=salted)


def delete(name: str, mechanism: int = SHA256):
    return SimpleNamespace(name=name, mechanism=mechanism)


def request(upsertions=(), deletions=()):
    return SimpleNamespace(upsertions=list(upsertions), deletions=list(deletions))


def replay_all(manager: ScramControlManager, result) -> None:
    for record in result.records:
        message = record.message
        if int(type(message).__api_key__) == MetadataRecordType.USER_SCRAM_CREDENTIAL_RECORD.value:
            manager.replay(message)
        else:
            manager.replay_remove(message)


def errors(result) -> dict[str, str]:
    return {user: error.error.name for user, error in result.response}


def test_upsert_delete_rollback_and_snapshot():
    registry = SnapshotRegistry()
    manager = ScramControlManager(registry)
    result = manager.alter_credentials(request([upsert("alice"), upsert("alice", SHA512), upsert("bob")]))
    assert errors(result) == {"alice": "NONE", "bob": "NONE"} and len(result.records) == 3
    assert manager.credentials() == {}
    replay_all(manager, result)
    registry.get_or_create_snapshot(5)
    key = ScramCredentialKey("alice", ScramMechanism.SCRAM_SHA_256)
    credential = manager.credentials()[key]
    # the keys of the salted password, never the password or salted password themselves
    formatter = ScramFormatter(ScramMechanism.SCRAM_SHA_256)
    salted = formatter.salted_password("secret", b"salt-alice", 8192)
    assert credential.stored_key == formatter.stored_key(formatter.client_key(salted))
    assert credential.server_key == formatter.server_key(salted) and credential.iterations == 8192
    assert not any(salted in bytes(getattr(r.message, "stored_key", b"")) for r in result.records)

    replay_all(manager, manager.alter_credentials(request(deletions=[delete("alice")])))
    assert key not in manager.credentials() and key in manager.credentials(5)
    registry.revert_to_snapshot(5)
    assert key in manager.credentials()

    batches = list(manager.iterator(LATEST_EPOCH))
    other = ScramControlManager(SnapshotRegistry())
    for batch in batches:
        for record in batch:
            other.replay(record.message)
    assert other.credentials() == manager.credentials()


def test_bad_alterations_get_kafkas_errors_and_write_nothing():
    manager = ScramControlManager(SnapshotRegistry())
    replay_all(manager, manager.alter_credentials(request([upsert("carol")])))
    result = manager.alter_credentials(request(
        [upsert(""), upsert("few", iterations=100), upsert("many", iterations=20000), upsert("mech", mechanism=7),
         upsert("dup"), upsert("carol", SHA512)],
        [delete("nobody"), delete("dup")]))
    assert errors(result) == {"": "UNACCEPTABLE_CREDENTIAL", "few": "UNACCEPTABLE_CREDENTIAL",
                              "many": "UNACCEPTABLE_CREDENTIAL", "mech": "UNSUPPORTED_SASL_MECHANISM",
                              "dup": "RESOURCE_NOT_FOUND", "carol": "NONE", "nobody": "RESOURCE_NOT_FOUND"}
    # only carol's alteration is written
    assert [r.message.name for r in result.records] == ["carol"]
    replay_all(manager, manager.alter_credentials(request([upsert("dup")])))
    twice = manager.alter_credentials(request([upsert("dup")], [delete("dup")]))
    assert errors(twice) == {"dup": "DUPLICATE_RESOURCE"} and twice.records == ()
