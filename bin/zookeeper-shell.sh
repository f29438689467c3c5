#!/usr/bin/env bash
# ZooKeeper's command-line client (Debian's ZooKeeperMain) on a ZooKeeper ensemble, as Kafka's
# bin/zookeeper-shell.sh: interactive without a command, one command and exit with one:
#   bin/zookeeper-shell.sh localhost:2181/kafka
#   bin/zookeeper-shell.sh localhost:2181/kafka get /brokers/ids/0
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "USAGE: $0 zookeeper_host:port[/path] [args...]"
    exit 1
fi

exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka -server "$@"
