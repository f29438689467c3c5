"""kafka-storage.sh (port of StorageTool.scala): random-uuid, format and info, their output,
messages and exit statuses, through the module's entry point and once through bin/."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess

import pytest

from kafka_py.server.broker_metadata_checkpoint import (
    META_PROPERTIES_FILE,
    BrokerMetadataCheckpoint,
    MetaProperties,
    ZkMetaProperties,
)
from kafka_py.core.tools import storage_tool
from kafka_py.clients.common.utils import properties
from kafka_py.core.zk.zk_data import uuid_from_base64

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bin" / "kafka-storage.sh"
CLUSTER_ID = "7qbZrFD0RKCkAFMOlSyS2w"
LEGACY_MESSAGE = ("The kafka configuration file appears to be for a legacy cluster. Formatting is only supported "
                  "for clusters in KRaft mode.")


def write_config(tmp_path: pathlib.Path, log_dirs: list[pathlib.Path], metadata_log_dir: pathlib.Path | None = None,
                 node_id: int = 1, **extra: str) -> pathlib.Path:
    props = {"process.roles": "broker,controller", "node.id": str(node_id),
             "controller.quorum.voters": f"{node_id}@localhost:9093",
             "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093", "controller.listener.names": "CONTROLLER",
             "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
             "log.dirs": ",".join(str(d) for d in log_dirs), **extra}
    if metadata_log_dir is not None:
        props["metadata.log.dir"] = str(metadata_log_dir)
    path = tmp_path / "server.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def zk_config(tmp_path: pathlib.Path, log_dir: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "zk-server.properties"
    path.write_text(f"broker.id=0\nzookeeper.connect=localhost:2181\nlog.dirs={log_dir}\n")
    return path


def run(capsys, *args: str) -> tuple[int, str, str]:
    status = storage_tool.main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def read_meta(directory: pathlib.Path) -> dict[str, str]:
    return properties.load_file(directory / META_PROPERTIES_FILE)


# -- random-uuid ----------------------------------------------------------------------------------

def test_random_uuid_prints_a_kafka_uuid(capsys):
    printed = set()
    for _ in range(3):
        status, out, err = run(capsys, "random-uuid")
        assert (status, err) == (0, "")
        text = out.strip()
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", text), text
        assert uuid_from_base64(text).int not in (0, 1)  # never Kafka's zero or sentinel id
        printed.add(text)
    assert len(printed) == 3


# -- format ---------------------------------------------------------------------------------------

def test_format_writes_meta_properties_v1_into_every_dir(tmp_path, capsys):
    a, b, meta = tmp_path / "a", tmp_path / "b", tmp_path / "meta"
    config = write_config(tmp_path, [b, a], metadata_log_dir=meta)
    status, out, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", str(config))
    assert (status, err) == (0, "")
    # every directory, in sorted order, created when missing
    assert out == f"Formatting {a}\nFormatting {b}\nFormatting {meta}\n"
    for directory in (a, b, meta):
        assert read_meta(directory) == {"version": "1", "cluster.id": CLUSTER_ID, "node.id": "1"}
        lines = (directory / META_PROPERTIES_FILE).read_text("ascii").split("\n")
        assert lines[0] == "#" and lines[1].startswith("#")  # Properties.store's comment and date


def test_format_metadata_log_dir_defaults_to_the_first_log_dir(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    status, out, _ = run(capsys, "format", "--cluster-id", CLUSTER_ID, "--config", str(write_config(tmp_path, [a, b])))
    assert status == 0 and out == f"Formatting {a}\nFormatting {b}\n"


def test_format_refuses_an_already_formatted_dir(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    config = write_config(tmp_path, [a, b])
    assert run(capsys, "format", "-t", CLUSTER_ID, "-c", str(config))[0] == 0
    (b / META_PROPERTIES_FILE).unlink()
    status, out, err = run(capsys, "format", "-t", "AAAAAAAAAAAAAAAAAAAAAA", "-c", str(config))
    assert (status, out) == (1, "")
    assert err == (f"Log directory {a} is already formatted. Use --ignore-formatted to ignore this directory and "
                   "format the others.\n")
    # nothing was written: not even the unformatted directory
    assert not (b / META_PROPERTIES_FILE).exists()
    assert read_meta(a)["cluster.id"] == CLUSTER_ID


def test_format_ignore_formatted_formats_the_others(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    config = write_config(tmp_path, [a, b])
    assert run(capsys, "format", "-t", CLUSTER_ID, "-c", str(config))[0] == 0
    (b / META_PROPERTIES_FILE).unlink()
    status, out, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", str(config), "--ignore-formatted")
    assert (status, out, err) == (0, f"Formatting {b}\n", "")
    status, out, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", str(config), "-g")
    assert (status, out, err) == (0, "All of the log directories are already formatted.\n", "")


def test_format_refuses_a_zookeeper_config(tmp_path, capsys):
    log_dir = tmp_path / "zk-logs"
    status, out, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", str(zk_config(tmp_path, log_dir)))
    assert (status, out, err) == (1, "", LEGACY_MESSAGE + "\n")
    assert not log_dir.exists()


def test_format_refuses_the_repositorys_zookeeper_server_properties(capsys):
    status, _, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", str(ROOT / "config" / "server.properties"))
    assert (status, err) == (1, LEGACY_MESSAGE + "\n")


@pytest.mark.parametrize("cluster_id, reason", [
    ("not-a-uuid", "Input string `not-a-uuid` decoded as 7 bytes, which is not equal to the expected 16 bytes of "
                   "a base64-encoded UUID"),
    ("7qbZrFD0RKCkAFMOlSyS2w+", "Illegal base64 character 2b"),
    ("7qbZrFD0RKCkAFMOlSyS2wAAAA", "Input string with prefix `7qbZrFD0RKCkAFMOlSyS2wAA` is too long to be decoded "
                                   "as a base64 UUID"),
    ("a", "Last unit does not have enough valid bits"),
])
def test_format_refuses_a_cluster_id_that_is_not_a_uuid(tmp_path, capsys, cluster_id, reason):
    config = write_config(tmp_path, [tmp_path / "a"])
    status, out, err = run(capsys, "format", "-t", cluster_id, "-c", str(config))
    assert (status, out) == (1, "")
    assert err == f"Cluster ID string {cluster_id} does not appear to be a valid UUID: {reason}\n"
    assert not (tmp_path / "a").exists()


def test_format_cannot_create_a_dir(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    config = write_config(tmp_path, [blocker / "logs"])
    status, _, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", str(config))
    assert status == 1
    assert err == f"Unable to create storage directory {blocker / 'logs'}: Not a directory\n"


def test_format_with_a_config_that_does_not_load(tmp_path, capsys):
    status, _, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", str(tmp_path / "missing.properties"))
    assert status == 1
    assert err == f"Unable to read properties file {tmp_path / 'missing.properties'}: No such file or directory\n"
    bad = write_config(tmp_path, [tmp_path / "a"], node_id=1, **{"controller.quorum.voters": "2@localhost:9093"})
    status, _, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", str(bad))
    assert status == 1
    assert err.startswith("ConfigException: Invalid value 1 for configuration node.id: ") and err.count("\n") == 1


@pytest.mark.parametrize("args", [
    [],
    ["format", "-c", "x.properties"],                 # no --cluster-id
    ["format", "-t", CLUSTER_ID],                     # no --config
    ["info"],
    ["no-such-command"],
    ["random-uuid", "--unknown"],
])
def test_a_command_line_that_does_not_parse_is_status_1(capsys, args):
    status, out, err = run(capsys, *args)
    assert status == 1 and out == ""
    assert "Usage: kafka-storage.sh" in err


# -- info -----------------------------------------------------------------------------------------

def test_info_of_formatted_dirs(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    config = write_config(tmp_path, [a, b])
    run(capsys, "format", "-t", CLUSTER_ID, "-c", str(config))
    status, out, err = run(capsys, "info", "-c", str(config))
    assert (status, err) == (0, "")
    assert out == (f"Found log directories:\n  {a}\n  {b}\n\n"
                   f"Found metadata: {{cluster.id={CLUSTER_ID}, node.id=1, version=1}}\n\n")


def test_info_of_unformatted_and_missing_dirs(tmp_path, capsys):
    a, missing, not_a_dir = tmp_path / "a", tmp_path / "missing", tmp_path / "f"
    a.mkdir()
    not_a_dir.write_text("")
    config = write_config(tmp_path, [a, missing, not_a_dir])
    status, out, err = run(capsys, "info", "-c", str(config))
    assert (status, err) == (1, "")
    assert out == (f"Found log directory:\n  {a}\n\n"
                   "Found problems:\n"
                   f"  {a} is not formatted.\n"
                   f"  {not_a_dir} is not a directory\n"
                   f"  {missing} does not exist\n\n")


def test_info_of_mismatched_dirs(tmp_path, capsys):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    config = write_config(tmp_path, [a, b, c])
    run(capsys, "format", "-t", CLUSTER_ID, "-c", str(config))
    # b belongs to another node, c to another cluster
    BrokerMetadataCheckpoint(b / META_PROPERTIES_FILE).write(MetaProperties(CLUSTER_ID, 7).to_properties())
    other = "AAAAAAAAAAAAAAAAAAAAAA"
    BrokerMetadataCheckpoint(c / META_PROPERTIES_FILE).write(MetaProperties(other, 1).to_properties())
    status, out, _ = run(capsys, "info", "-c", str(config))
    assert status == 1
    expected = f"{{cluster.id={CLUSTER_ID}, node.id=1, version=1}}"
    assert out == (f"Found log directories:\n  {a}\n  {b}\n  {c}\n\n"
                   f"Found metadata: {expected}\n\n"
                   "Found problems:\n"
                   f"  Metadata for {b / META_PROPERTIES_FILE} was {{cluster.id={CLUSTER_ID}, node.id=7, version=1}}, "
                   f"but other directories featured {expected}\n"
                   f"  Metadata for {c / META_PROPERTIES_FILE} was {{cluster.id={other}, node.id=1, version=1}}, "
                   f"but other directories featured {expected}\n\n")


def test_info_of_dirs_formatted_for_the_other_mode(tmp_path, capsys):
    a = tmp_path / "a"
    a.mkdir()
    BrokerMetadataCheckpoint(a / META_PROPERTIES_FILE).write(ZkMetaProperties(CLUSTER_ID, 0).to_properties())
    status, out, _ = run(capsys, "info", "-c", str(write_config(tmp_path, [a])))
    assert status == 1
    assert out.endswith("Found problem:\n  The kafka configuration file appears to be for a cluster in KRaft mode, "
                        "but the directories are formatted for legacy mode.\n\n")
    assert f"Found metadata: {{broker.id=0, cluster.id={CLUSTER_ID}, version=0}}\n" in out

    b = tmp_path / "b"
    b.mkdir()
    BrokerMetadataCheckpoint(b / META_PROPERTIES_FILE).write(MetaProperties(CLUSTER_ID, 1).to_properties())
    status, out, _ = run(capsys, "info", "-c", str(zk_config(tmp_path, b)))
    assert status == 1
    assert out.endswith("Found problem:\n  The kafka configuration file appears to be for a legacy cluster, but the "
                        "directories are formatted for a cluster in KRaft mode.\n\n")


def test_info_of_an_unsupported_version(tmp_path, capsys):
    a = tmp_path / "a"
    a.mkdir()
    (a / META_PROPERTIES_FILE).write_text(f"version=2\ncluster.id={CLUSTER_ID}\nnode.id=1\n")
    status, out, _ = run(capsys, "info", "-c", str(write_config(tmp_path, [a])))
    assert status == 1
    assert out == f"Found log directory:\n  {a}\n\nFound problem:\n  Unsupported version for {a / META_PROPERTIES_FILE}: 2\n\n"


def test_info_prints_dirs_as_java_paths(tmp_path, capsys):
    a = tmp_path / "a"
    config = write_config(tmp_path, [pathlib.Path(f"{a}//")])
    run(capsys, "format", "-t", CLUSTER_ID, "-c", str(config))
    status, out, _ = run(capsys, "info", "-c", str(config))
    assert status == 0 and out.startswith(f"Found log directory:\n  {a}\n\n")


# -- bin/kafka-storage.sh --------------------------------------------------------------------------

def test_the_script_formats_and_describes_a_kraft_node(tmp_path):
    env = {**os.environ, "KAFKA_PY_TOOLS_LOG_LEVEL": ""}

    def script(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=120, env=env)

    generated = script("random-uuid")
    assert generated.returncode == 0, generated.stderr
    cluster_id = generated.stdout.strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", cluster_id)

    log_dir = tmp_path / "kraft-combined-logs"
    config = write_config(tmp_path, [log_dir])
    formatted = script("format", "-t", cluster_id, "-c", str(config))
    assert (formatted.returncode, formatted.stdout, formatted.stderr) == (0, f"Formatting {log_dir}\n", "")
    assert read_meta(log_dir) == {"version": "1", "cluster.id": cluster_id, "node.id": "1"}

    again = script("format", "-t", cluster_id, "-c", str(config))
    assert again.returncode == 1 and "is already formatted" in again.stderr

    described = script("info", "-c", str(config))
    assert described.returncode == 0
    assert described.stdout == (f"Found log directory:\n  {log_dir}\n\n"
                                f"Found metadata: {{cluster.id={cluster_id}, node.id=1, version=1}}\n\n")

    legacy = script("format", "-t", cluster_id, "-c", str(ROOT / "config" / "server.properties"))
    assert (legacy.returncode, legacy.stdout, legacy.stderr) == (1, "", LEGACY_MESSAGE + "\n")

    through_run_class = subprocess.run([str(ROOT / "bin" / "kafka-run-class.sh"), "kafka.tools.StorageTool",
                                        "info", "-c", str(config)], capture_output=True, text=True, timeout=120,
                                       env=env)
    assert through_run_class.returncode == 0 and through_run_class.stdout == described.stdout


@pytest.mark.parametrize("name", ["server.properties", "broker.properties", "controller.properties"])
def test_the_shipped_kraft_configs_format(tmp_path, capsys, name):
    # config/kraft/*.properties, with the log dirs moved into the test's directory
    props = properties.load_file(ROOT / "config" / "kraft" / name)
    props["log.dirs"] = str(tmp_path / "logs")
    config = tmp_path / name
    config.write_text(properties.store(props, ""))
    status, out, err = run(capsys, "format", "-t", CLUSTER_ID, "-c", str(config))
    assert (status, out, err) == (0, f"Formatting {tmp_path / 'logs'}\n", "")
    node_id = "2" if name == "broker.properties" else "1"
    assert read_meta(tmp_path / "logs") == {"version": "1", "cluster.id": CLUSTER_ID, "node.id": node_id}
