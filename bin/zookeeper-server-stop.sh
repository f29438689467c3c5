#!/usr/bin/env bash
# Stops ZooKeeper servers, as Kafka 2.8's bin/zookeeper-server-stop.sh: sends SIGTERM (or the
# signal named by $SIGNAL) to every ZooKeeper server on this machine (Java's QuorumPeerMain, as
# bin/zookeeper-server-start.sh runs it), and says "No zookeeper server to stop" with status 1
# if there is none. With a config file, only the servers started with that file are stopped
# (compared by absolute path).
# Usage: [SIGNAL=TERM] bin/zookeeper-server-stop.sh [zookeeper.properties]
set -uo pipefail
source "$(dirname "$0")/kafka-env.sh"
SIGNAL=${SIGNAL:-TERM}

pids=$(kafka_py_server_pids org.apache.zookeeper.server.quorum.QuorumPeerMain "${1:-}")
if [ -z "$pids" ]; then
    echo "No zookeeper server to stop"
    exit 1
fi
kill -s "$SIGNAL" $pids
