#!/usr/bin/env bash
# Stops ZooKeeper servers started by bin/zookeeper-server-start.sh (SIGTERM, as Kafka's script).
set -uo pipefail
pids=$(pgrep -f 'org.apache.zookeeper.server.quorum.QuorumPeerMain' || true)
if [ -z "$pids" ]; then
    echo "No zookeeper server to stop"
    exit 1
fi
kill -s TERM $pids
