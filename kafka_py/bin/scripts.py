"""The console scripts ``pip install kafka-py`` puts on PATH: the ``bin/*.sh`` scripts under the
names Confluent's packages give Kafka's commands (``kafka-topics``, ``kafka-server-start``...,
without ``.sh``), taking the same arguments and running the same code as the scripts of
the repository, which a pip user does not have.

Each entry point imports its tool only when called, so that starting one command never
loads the others.
"""
from __future__ import annotations

import importlib
import os
import shutil
import signal
import subprocess
import sys
from typing import Optional

from kafka_py.config import config_path

# bin/kafka-env.sh's Debian ZooKeeper jars.
ZOOKEEPER_CLASSPATH = "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar"
DEFAULT_LOG_DIR = "/tmp/kafka-py-logs"
BROKER_MODULE = "kafka_py.core.kafka"
ZOOKEEPER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

# command name -> the tool module its bin/ script runs (``python -m`` of it)
TOOLS = {
    "kafka-acls": "kafka_py.core.admin.acl_command",
    "kafka-broker-api-versions": "kafka_py.core.admin.broker_api_versions_command",
    "kafka-cluster": "kafka_py.core.tools.cluster_tool",
    "kafka-configs": "kafka_py.core.admin.config_command",
    "kafka-console-consumer": "kafka_py.core.tools.console_consumer",
    "kafka-console-producer": "kafka_py.core.tools.console_producer",
    "kafka-consumer-groups": "kafka_py.core.admin.consumer_group_command",
    "kafka-consumer-perf-test": "kafka_py.core.tools.consumer_performance",
    "kafka-delegation-tokens": "kafka_py.core.admin.delegation_token_command",
    "kafka-delete-records": "kafka_py.core.admin.delete_records_command",
    "kafka-dump-log": "kafka_py.core.tools.dump_log_segments",
    "kafka-features": "kafka_py.core.admin.feature_command",
    "kafka-leader-election": "kafka_py.core.admin.leader_election_command",
    "kafka-log-dirs": "kafka_py.core.admin.log_dirs_command",
    "kafka-mirror-maker": "kafka_py.core.tools.mirror_maker",
    "kafka-metadata-shell": "kafka_py.shell.metadata_shell",
    "kafka-preferred-replica-election": "kafka_py.core.admin.preferred_replica_leader_election_command",
    "kafka-producer-perf-test": "kafka_py.tools.producer_performance",
    "kafka-reassign-partitions": "kafka_py.core.admin.reassign_partitions_command",
    "kafka-replica-verification": "kafka_py.core.tools.replica_verification_tool",
    "kafka-storage": "kafka_py.core.tools.storage_tool",
    "kafka-streams-application-reset": "kafka_py.core.tools.streams_resetter",
    "kafka-topics": "kafka_py.core.admin.topic_command",
    "kafka-verifiable-consumer": "kafka_py.tools.verifiable_consumer",
    "kafka-verifiable-producer": "kafka_py.tools.verifiable_producer",
    "zookeeper-security-migration": "kafka_py.core.admin.zk_security_migrator",
}


def _run_tool(command: str) -> None:
    from kafka_py.core.utils.command_line_utils import run_tool

    module = importlib.import_module(TOOLS[command])
    # the perf test names itself (its main expands Kafka's multi-value options first)
    prog_name = None if command == "kafka-producer-perf-test" else command
    run_tool(module.main, prog_name, tool_logging=command != "kafka-dump-log")


def _tool(command: str):
    def entry_point() -> None:
        _run_tool(command)

    entry_point.__name__ = command.replace("-", "_")
    entry_point.__doc__ = f"``{command}``: bin/{command}.sh, python -m {TOOLS[command]}"
    return entry_point


kafka_acls = _tool("kafka-acls")
kafka_broker_api_versions = _tool("kafka-broker-api-versions")
kafka_cluster = _tool("kafka-cluster")
kafka_configs = _tool("kafka-configs")
kafka_console_consumer = _tool("kafka-console-consumer")
kafka_console_producer = _tool("kafka-console-producer")
kafka_consumer_groups = _tool("kafka-consumer-groups")
kafka_consumer_perf_test = _tool("kafka-consumer-perf-test")
kafka_delegation_tokens = _tool("kafka-delegation-tokens")
kafka_delete_records = _tool("kafka-delete-records")
kafka_dump_log = _tool("kafka-dump-log")
kafka_features = _tool("kafka-features")
kafka_leader_election = _tool("kafka-leader-election")
kafka_log_dirs = _tool("kafka-log-dirs")
kafka_mirror_maker = _tool("kafka-mirror-maker")
kafka_metadata_shell = _tool("kafka-metadata-shell")
kafka_preferred_replica_election = _tool("kafka-preferred-replica-election")
kafka_producer_perf_test = _tool("kafka-producer-perf-test")
kafka_reassign_partitions = _tool("kafka-reassign-partitions")
kafka_replica_verification = _tool("kafka-replica-verification")
kafka_storage = _tool("kafka-storage")
kafka_streams_application_reset = _tool("kafka-streams-application-reset")
kafka_topics = _tool("kafka-topics")
kafka_verifiable_consumer = _tool("kafka-verifiable-consumer")
kafka_verifiable_producer = _tool("kafka-verifiable-producer")
zookeeper_security_migration = _tool("zookeeper-security-migration")


def _usage(text: str) -> None:
    print(f"USAGE: {text}", file=sys.stderr)
    sys.exit(1)


def _log_dir() -> str:
    # Kafka's scripts pass $LOG_DIR as kafka.logs.dir; the broker's logging reads it from there
    log_dir = os.environ.get("LOG_DIR") or DEFAULT_LOG_DIR
    os.environ["LOG_DIR"] = log_dir
    return log_dir


def _daemonize(argv: list[str], name: str) -> None:
    """Run ``argv`` detached, its output in $LOG_DIR/<name>.out and its pid in <name>.pid
    (the scripts' ``-daemon``)."""
    log_dir = _log_dir()
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, f"{name}.out"), "ab") as out, open(os.devnull, "rb") as devnull:
        process = subprocess.Popen(argv, stdin=devnull, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    with open(os.path.join(log_dir, f"{name}.pid"), "w") as f:
        f.write(f"{process.pid}\n")


def kafka_server_start(argv: Optional[list[str]] = None) -> None:
    """``kafka-server-start [-daemon] server.properties [--override property=value]*``"""
    args = list(sys.argv[1:] if argv is None else argv)
    usage = "kafka-server-start [-daemon] server.properties [--override property=value]*"
    daemon = bool(args) and args[0] == "-daemon"
    if daemon:
        args.pop(0)
    if not args:
        _usage(usage)
    # by its absolute path, which kafka-server-stop CONFIG looks for
    if os.path.isfile(args[0]):
        args[0] = os.path.realpath(args[0])
    _log_dir()
    command = [sys.executable, "-m", BROKER_MODULE, *args]
    if daemon:
        _daemonize(command, "kafkaServer")
        return
    os.execv(sys.executable, command)


def server_pids(marker: str, config: Optional[str] = None) -> list[int]:
    """The processes with the argument ``marker`` (and ``config``, by absolute path, if given):
    bin/kafka-env.sh's kafka_py_server_pids."""
    wanted = os.path.realpath(config) if config else None
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = [a.decode(errors="replace") for a in f.read().split(b"\0")]
        except OSError:
            continue
        if marker in args and (wanted is None or wanted in args):
            pids.append(int(entry))
    return pids


def _stop(marker: str, what: str, argv: Optional[list[str]]) -> None:
    args = sys.argv[1:] if argv is None else argv
    sig_name = os.environ.get("SIGNAL", "TERM").upper().removeprefix("SIG")
    try:
        sig = signal.Signals[f"SIG{sig_name}"] if not sig_name.isdigit() else signal.Signals(int(sig_name))
    except (KeyError, ValueError):
        print(f"unknown signal {sig_name}", file=sys.stderr)
        sys.exit(1)
    pids = server_pids(marker, args[0] if args else None)
    if not pids:
        print(f"No {what} to stop")
        sys.exit(1)
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def kafka_server_stop(argv: Optional[list[str]] = None) -> None:
    """``[SIGNAL=TERM] kafka-server-stop [server.properties]``"""
    _stop(BROKER_MODULE, "kafka server", argv)


def zookeeper_server_stop(argv: Optional[list[str]] = None) -> None:
    """``[SIGNAL=TERM] zookeeper-server-stop [zookeeper.properties]``"""
    _stop(ZOOKEEPER_MAIN, "zookeeper server", argv)


def _java(main_class: str, args: list[str], log4j: str, heap: str) -> list[str]:
    if shutil.which("java") is None or not os.path.exists(ZOOKEEPER_CLASSPATH.split(":")[0]):
        print("ZooKeeper is not installed: run 'apt-get install zookeeper' as root", file=sys.stderr)
        sys.exit(1)
    log4j_opts = os.environ.get("KAFKA_LOG4J_OPTS") or f"-Dlog4j.configuration=file:{config_path(log4j)}"
    return ["java", *heap.split(), *log4j_opts.split(), "-cp", ZOOKEEPER_CLASSPATH,
            *os.environ.get("KAFKA_OPTS", "").split(), main_class, *args]


def zookeeper_server_start(argv: Optional[list[str]] = None) -> None:
    """``zookeeper-server-start [-daemon] zookeeper.properties``: Debian's ZooKeeper server."""
    args = list(sys.argv[1:] if argv is None else argv)
    daemon = bool(args) and args[0] == "-daemon"
    if daemon:
        args.pop(0)
    if not args:
        _usage("zookeeper-server-start [-daemon] zookeeper.properties")
    config = os.path.realpath(args[0])
    if not os.path.isfile(config):
        print(f"zookeeper config not found: {args[0]}", file=sys.stderr)
        sys.exit(1)
    log_dir = _log_dir()
    os.makedirs(log_dir, exist_ok=True)
    from kafka_py.clients.common.utils import properties

    data_dir = properties.load_file(config).get("dataDir")
    if data_dir:
        os.makedirs(data_dir, exist_ok=True)
    command = _java(ZOOKEEPER_MAIN, [config], "log4j.properties",
                    os.environ.get("KAFKA_HEAP_OPTS", "-Xmx512M -Xms512M"))
    command[1:1] = [f"-Dzookeeper.log.dir={log_dir}", f"-Dkafka.logs.dir={log_dir}",
                    "-Dzookeeper.admin.enableServer=false"]
    if daemon:
        _daemonize(command, "zookeeper")
        return
    os.execvp("java", command)


def zookeeper_shell(argv: Optional[list[str]] = None) -> None:
    """``zookeeper-shell host:port[/chroot] [command]``: ZooKeeper's own shell."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        _usage("zookeeper-shell zookeeper_host:port[/path] [args...]")
    if "-zk-tls-config-file" in args:
        print("Error: -zk-tls-config-file is not supported: kafka-py connects to ZooKeeper without TLS",
              file=sys.stderr)
        sys.exit(1)
    command = _java("org.apache.zookeeper.ZooKeeperMain", ["-server", *args], "tools-log4j.properties",
                    os.environ.get("KAFKA_HEAP_OPTS", "-Xmx256M"))
    os.execvp("java", command)
