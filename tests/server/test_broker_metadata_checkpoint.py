"""meta.properties (port of BrokerMetadataCheckpoint.scala) and the startup checks KafkaServer
and KafkaRaftServer make with it: Kafka's file format, agreement across log dirs, cluster id,
broker id and (KRaft, version 1) node id."""
from __future__ import annotations

import logging
import os

import pytest

from kafka_py.clients.common.errors import KafkaException
from kafka_py.server.broker_metadata_checkpoint import (
    META_PROPERTIES_FILE,
    BrokerMetadataCheckpoint,
    InconsistentBrokerIdException,
    InconsistentBrokerMetadataException,
    InconsistentClusterIdException,
    InconsistentNodeIdException,
    MetaProperties,
    RawMetaProperties,
    ZkMetaProperties,
    check_cluster_id,
    check_zk_meta_properties_version,
    get_broker_metadata_and_offline_dirs,
    get_or_generate_broker_id,
    initialize_log_dirs,
)
from kafka_py.server.kafka_config import KafkaConfig

CLUSTER_ID = "7qbZrFD0RKCkAFMOlSyS2w"


def write_meta(log_dir, cluster_id=CLUSTER_ID, broker_id=0):
    os.makedirs(log_dir, exist_ok=True)
    BrokerMetadataCheckpoint(os.path.join(log_dir, META_PROPERTIES_FILE)).write(
        ZkMetaProperties(cluster_id, broker_id).to_properties())


def test_write_uses_kafkas_format_and_round_trips(tmp_path):
    path = tmp_path / META_PROPERTIES_FILE
    checkpoint = BrokerMetadataCheckpoint(path)
    checkpoint.write(ZkMetaProperties(CLUSTER_ID, 5).to_properties())
    lines = path.read_text("ascii").split("\n")
    assert lines[0] == "#"  # Properties.store(out, "") writes an empty comment
    assert lines[1].startswith("#")  # then the date
    assert lines[2:] == ["version=0", f"cluster.id={CLUSTER_ID}", "broker.id=5", ""]
    assert not (tmp_path / (META_PROPERTIES_FILE + ".tmp")).exists()
    raw = RawMetaProperties(checkpoint.read())
    assert (raw.version, raw.cluster_id, raw.broker_id) == (0, CLUSTER_ID, 5)
    # A fresh instance, as after a restart, reads the same.
    assert BrokerMetadataCheckpoint(path).read() == {"version": "0", "cluster.id": CLUSTER_ID, "broker.id": "5"}


def test_reads_a_file_written_by_java_kafka(tmp_path):
    path = tmp_path / META_PROPERTIES_FILE
    path.write_bytes(b"#\n#Mon Mar 04 10:11:12 UTC 2024\ncluster.id=abc-DEF_123\nversion=0\nbroker.id=1002\n")
    raw = RawMetaProperties(BrokerMetadataCheckpoint(path).read())
    assert (raw.version, raw.cluster_id, raw.broker_id, raw.node_id) == (0, "abc-DEF_123", 1002, None)
    assert str(raw) == "{broker.id=1002, cluster.id=abc-DEF_123, version=0}"


def test_missing_file_reads_as_none_and_stale_tmp_is_removed(tmp_path, caplog):
    path = tmp_path / META_PROPERTIES_FILE
    (tmp_path / (META_PROPERTIES_FILE + ".tmp")).write_text("half written")
    with caplog.at_level(logging.WARNING):
        assert BrokerMetadataCheckpoint(path).read() is None
    assert not (tmp_path / (META_PROPERTIES_FILE + ".tmp")).exists()
    assert any("No meta.properties file under dir" in r.getMessage() for r in caplog.records)


def test_raw_meta_properties_values():
    assert RawMetaProperties().version == 0
    with pytest.raises(RuntimeError, match='Failed to parse broker.id property as an int: For input string: " 7"'):
        RawMetaProperties({"broker.id": " 7"}).broker_id
    with pytest.raises(RuntimeError, match="Expected version 1, but got version 0"):
        MetaProperties.parse(RawMetaProperties({"cluster.id": "c", "broker.id": "1"}))
    assert MetaProperties.parse(RawMetaProperties(MetaProperties("c", 3).to_properties())) == MetaProperties("c", 3)
    with pytest.raises(RuntimeError, match="Failed to find required property node.id."):
        MetaProperties.parse(RawMetaProperties({"version": "1", "cluster.id": "c"}))


def test_all_dirs_agreeing(tmp_path):
    dirs = [str(tmp_path / name) for name in ("a", "b")]
    for d in dirs:
        write_meta(d, broker_id=3)
    raw, offline = get_broker_metadata_and_offline_dirs(dirs, ignore_missing=False)
    assert (raw.cluster_id, raw.broker_id, offline) == (CLUSTER_ID, 3, [])


def test_dirs_without_meta_properties(tmp_path):
    dirs = [str(tmp_path / "a"), str(tmp_path / "b")]
    write_meta(dirs[0], broker_id=1)
    os.makedirs(dirs[1])
    raw, offline = get_broker_metadata_and_offline_dirs(dirs, ignore_missing=True)
    assert raw.broker_id == 1 and offline == []
    with pytest.raises(KafkaException, match="No `meta.properties` found in .*b"):
        get_broker_metadata_and_offline_dirs(dirs, ignore_missing=False)
    empty, _ = get_broker_metadata_and_offline_dirs([dirs[1]], ignore_missing=True)
    assert empty == RawMetaProperties()


def test_inconsistent_cluster_id_across_dirs_raises(tmp_path):
    dirs = [str(tmp_path / "a"), str(tmp_path / "b")]
    write_meta(dirs[0], cluster_id="cluster-one")
    write_meta(dirs[1], cluster_id="cluster-two")
    with pytest.raises(InconsistentBrokerMetadataException) as info:
        get_broker_metadata_and_offline_dirs(dirs, ignore_missing=True)
    message = str(info.value)
    assert message.startswith("BrokerMetadata is not consistent across log.dirs.")
    assert f"- {dirs[0]} -> {{broker.id=0, cluster.id=cluster-one, version=0}}" in message
    assert f"- {dirs[1]} -> {{broker.id=0, cluster.id=cluster-two, version=0}}" in message


def test_inconsistent_broker_id_across_dirs_raises(tmp_path):
    dirs = [str(tmp_path / "a"), str(tmp_path / "b")]
    write_meta(dirs[0], broker_id=1)
    write_meta(dirs[1], broker_id=2)
    with pytest.raises(InconsistentBrokerMetadataException, match="broker.id=2"):
        get_broker_metadata_and_offline_dirs(dirs, ignore_missing=True)


def test_unreadable_dir_is_offline(tmp_path):
    good, bad = str(tmp_path / "good"), str(tmp_path / "bad")
    write_meta(good, broker_id=4)
    os.makedirs(os.path.join(bad, META_PROPERTIES_FILE))  # a directory where the file should be
    raw, offline = get_broker_metadata_and_offline_dirs([good, bad], ignore_missing=False)
    assert raw.broker_id == 4
    assert offline == [bad]


def test_cluster_id_check():
    check_cluster_id(RawMetaProperties(), CLUSTER_ID)
    check_cluster_id(RawMetaProperties(ZkMetaProperties(CLUSTER_ID, 0).to_properties()), CLUSTER_ID)
    with pytest.raises(InconsistentClusterIdException) as info:
        check_cluster_id(RawMetaProperties({"cluster.id": "other"}), CLUSTER_ID)
    assert str(info.value) == (
        f"The Cluster ID {CLUSTER_ID} doesn't match stored clusterId Some(other) in meta.properties. The broker "
        "is trying to join the wrong cluster. Configured zookeeper.connect may be wrong.")


def test_zk_broker_refuses_other_versions():
    check_zk_meta_properties_version(RawMetaProperties({"cluster.id": "c"}))
    with pytest.raises(RuntimeError, match="Zk-based brokers only support version 0"):
        check_zk_meta_properties_version(RawMetaProperties(MetaProperties("c", 1).to_properties()))


def test_get_or_generate_broker_id():
    def never() -> int:
        raise AssertionError("must not generate")

    stored = RawMetaProperties({"broker.id": "7"})
    assert get_or_generate_broker_id(stored, 7, True, never) == 7
    assert get_or_generate_broker_id(stored, -1, True, never) == 7  # stored id wins over generation
    assert get_or_generate_broker_id(RawMetaProperties(), 3, True, never) == 3
    assert get_or_generate_broker_id(RawMetaProperties(), -1, True, lambda: 1001) == 1001
    assert get_or_generate_broker_id(RawMetaProperties(), -1, False, never) == -1
    with pytest.raises(InconsistentBrokerIdException) as info:
        get_or_generate_broker_id(stored, 8, True, never)
    assert str(info.value).startswith(
        "Configured broker.id 8 doesn't match stored broker.id Some(7) in meta.properties.")


# -- KRaft: version 1 and KafkaRaftServer.initializeLogDirs -------------------------------------

def kraft_config(log_dirs, metadata_log_dir=None, node_id=1) -> KafkaConfig:
    props = {"process.roles": "broker,controller", "node.id": str(node_id),
             "controller.quorum.voters": f"{node_id}@localhost:9093",
             "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093", "controller.listener.names": "CONTROLLER",
             "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
             "log.dirs": ",".join(str(d) for d in log_dirs)}
    if metadata_log_dir is not None:
        props["metadata.log.dir"] = str(metadata_log_dir)
    return KafkaConfig(props, do_log=False)


def write_v1(log_dir, cluster_id=CLUSTER_ID, node_id=1):
    os.makedirs(log_dir, exist_ok=True)
    BrokerMetadataCheckpoint(os.path.join(log_dir, META_PROPERTIES_FILE)).write(
        MetaProperties(cluster_id, node_id).to_properties())


def test_meta_properties_v1_round_trips(tmp_path):
    write_v1(tmp_path, node_id=3)
    raw = RawMetaProperties(BrokerMetadataCheckpoint(tmp_path / META_PROPERTIES_FILE).read())
    assert raw.props == {"version": "1", "cluster.id": CLUSTER_ID, "node.id": "3"}
    assert MetaProperties.parse(raw) == MetaProperties(CLUSTER_ID, 3)
    assert str(raw) == f"{{cluster.id={CLUSTER_ID}, node.id=3, version=1}}"


def test_kraft_node_reads_its_formatted_dirs(tmp_path):
    dirs = [tmp_path / "a", tmp_path / "b", tmp_path / "meta"]
    for d in dirs:
        write_v1(d)
    meta, offline = initialize_log_dirs(kraft_config(dirs[:2], metadata_log_dir=dirs[2]))
    assert meta == MetaProperties(CLUSTER_ID, 1) and offline == []


def test_kraft_node_refuses_an_unformatted_dir(tmp_path):
    write_v1(tmp_path / "a")
    os.makedirs(tmp_path / "b")
    with pytest.raises(KafkaException, match=r"No `meta.properties` found in .*b \(have you run `kafka-storage.sh` "
                                             r"to format the directory\?\)"):
        initialize_log_dirs(kraft_config([tmp_path / "a", tmp_path / "b"]))


def test_kraft_node_refuses_another_clusters_dir(tmp_path):
    write_v1(tmp_path / "a")
    write_v1(tmp_path / "b", cluster_id="AAAAAAAAAAAAAAAAAAAAAA")
    with pytest.raises(InconsistentBrokerMetadataException, match="BrokerMetadata is not consistent across log.dirs"):
        initialize_log_dirs(kraft_config([tmp_path / "a", tmp_path / "b"]))


def test_kraft_node_refuses_another_nodes_dirs(tmp_path):
    write_v1(tmp_path / "a", node_id=2)
    with pytest.raises(InconsistentNodeIdException) as info:
        initialize_log_dirs(kraft_config([tmp_path / "a"], node_id=1))
    assert str(info.value).startswith("Configured node.id `1` doesn't match stored node.id `2' in meta.properties.")


def test_kraft_node_refuses_a_zookeeper_brokers_dir(tmp_path):
    write_meta(tmp_path / "a", broker_id=1)
    with pytest.raises(RuntimeError, match="Expected version 1, but got version 0"):
        initialize_log_dirs(kraft_config([tmp_path / "a"]))


def test_kraft_node_refuses_a_metadata_log_outside_metadata_log_dir(tmp_path):
    from kafka_py.log.log_manager import METADATA_TOPIC

    write_v1(tmp_path / "a")
    write_v1(tmp_path / "meta")
    os.makedirs(tmp_path / "a" / f"{METADATA_TOPIC}-0")
    with pytest.raises(KafkaException, match="Found unexpected metadata location in data directory"):
        initialize_log_dirs(kraft_config([tmp_path / "a"], metadata_log_dir=tmp_path / "meta"))

