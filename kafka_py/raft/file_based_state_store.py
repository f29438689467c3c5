"""Port of raft/src/main/java/org/apache/kafka/raft/FileBasedStateStore.java (Kafka 2.8.2),
with the JSON form of raft/src/main/resources/common/message/QuorumState.json that Kafka's
generated QuorumStateDataJsonConverter reads and writes.

The ``quorum-state`` file holds one line of JSON, the fields in the schema's order and
then ``data_version``, written compactly as Jackson writes it::

    {"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}

so a file written by Kafka 2.8.2 reads here and the other way round. A write goes to
``quorum-state.tmp``, is fsynced, renamed over the file and the directory is fsynced: a
crash leaves either the old state or the new one.

A file that is empty, is not JSON, is not an object or lacks ``data_version`` raises
OSError (QuorumState then clears the store and starts from epoch 0, as Kafka does after
its IOException); a field that is missing or of the wrong type raises ValueError, which
stops the node, as Kafka's converter's RuntimeException does.
"""
from __future__ import annotations

import json
import logging
import os
import pathlib
from typing import Any, Optional

from kafka_py.raft.election_state import ElectionState
from kafka_py.raft.quorum_state_store import NOT_VOTED, UNKNOWN_LEADER_ID, QuorumStateStore

logger = logging.getLogger(__name__)

DATA_VERSION = "data_version"
# QuorumStateData's only version (validVersions "0").
HIGHEST_SUPPORTED_VERSION = 0


def _mandatory(obj: dict, name: str) -> Any:
    if name not in obj:
        raise ValueError(f"QuorumStateData: unable to locate field '{name}', which is mandatory in version 0")
    return obj[name]


def _as_int(value: Any, name: str, bits: int) -> int:
    # Jackson's converter accepts a JSON integer, or a string holding one.
    if isinstance(value, bool):
        raise ValueError(f"QuorumStateData expected an integer for {name}, but got {value!r}")
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            raise ValueError(f"QuorumStateData expected an integer for {name}, but got {value!r}") from None
    if not isinstance(value, int):
        raise ValueError(f"QuorumStateData expected an integer for {name}, but got {value!r}")
    limit = 1 << (bits - 1)
    if not -limit <= value < limit:
        raise ValueError(f"QuorumStateData value {value} for {name} does not fit an int{bits}")
    return value


def election_state_to_json(latest: ElectionState) -> str:
    """The file's one line for ``latest`` (QuorumStateDataJsonConverter.write + data_version)."""
    data = {
        "clusterId": "",
        "leaderId": latest.leader_id() if latest.has_leader() else UNKNOWN_LEADER_ID,
        "leaderEpoch": latest.epoch,
        "votedId": latest.voted_id() if latest.has_voted() else NOT_VOTED,
        "appliedOffset": 0,
        "currentVoters": [{"voterId": voter_id} for voter_id in sorted(latest.voters)],
        DATA_VERSION: HIGHEST_SUPPORTED_VERSION,
    }
    return json.dumps(data, separators=(",", ":"))


def election_state_from_json(line: str) -> ElectionState:
    try:
        node = json.loads(line)
    except ValueError as e:
        raise OSError(f"Quorum state is not valid JSON: {e}") from e
    if not isinstance(node, dict):
        raise OSError(f"Deserialized node {line} is not an object node")
    if DATA_VERSION not in node:
        raise OSError(f"Deserialized node {line} does not have {DATA_VERSION} field")
    version = _as_int(node[DATA_VERSION], DATA_VERSION, 16)
    if version != HIGHEST_SUPPORTED_VERSION:
        raise ValueError(f"QuorumStateData version {version} is not supported; only version 0 is")
    cluster_id = _mandatory(node, "clusterId")
    if not isinstance(cluster_id, str):
        raise ValueError(f"QuorumStateData expected a string type for clusterId, but got {cluster_id!r}")
    leader_id = _as_int(_mandatory(node, "leaderId"), "leaderId", 32)
    epoch = _as_int(_mandatory(node, "leaderEpoch"), "leaderEpoch", 32)
    voted_id = _as_int(_mandatory(node, "votedId"), "votedId", 32)
    _as_int(_mandatory(node, "appliedOffset"), "appliedOffset", 64)
    voters_node = _mandatory(node, "currentVoters")
    voters: set[int] = set()
    if voters_node is not None:
        if not isinstance(voters_node, list):
            raise ValueError(f"QuorumStateData expected a JSON array for currentVoters, but got {voters_node!r}")
        for voter in voters_node:
            if not isinstance(voter, dict):
                raise ValueError(f"Voter expected a JSON object, but got {voter!r}")
            voters.add(_as_int(_mandatory(voter, "voterId"), "voterId", 32))
    return ElectionState(
        epoch,
        None if leader_id == UNKNOWN_LEADER_ID else leader_id,
        None if voted_id == NOT_VOTED else voted_id,
        frozenset(voters),
    )


class FileBasedStateStore(QuorumStateStore):
    def __init__(self, state_file: str | os.PathLike) -> None:
        self._state_file = pathlib.Path(state_file)
        self._temp_file = pathlib.Path(str(self._state_file.absolute()) + ".tmp")

    def read_election_state(self) -> Optional[ElectionState]:
        if not self._state_file.exists():
            return None
        with open(self._state_file, "r", encoding="utf-8") as f:
            line = f.readline()
        if not line:
            raise OSError("File ended prematurely.")
        return election_state_from_json(line.rstrip("\r\n"))

    def write_election_state(self, latest: ElectionState) -> None:
        data = election_state_to_json(latest).encode("utf-8")
        self._temp_file.unlink(missing_ok=True)
        try:
            fd = os.open(self._temp_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(self._temp_file, self._state_file)
            # The rename itself must reach the disk, or a crash could bring back the old state.
            dir_fd = os.open(self._state_file.absolute().parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        finally:
            self._temp_file.unlink(missing_ok=True)

    def clear(self) -> None:
        self._state_file.unlink(missing_ok=True)
        self._temp_file.unlink(missing_ok=True)

    def __str__(self) -> str:
        return f"Quorum state filepath: {self._state_file.absolute()}"

