#!/usr/bin/env bash
# Stops kafka-py brokers started by bin/kafka-server-start.sh with SIGTERM (a clean, controlled
# shutdown), as Kafka's bin/kafka-server-stop.sh. With a config file argument, only the brokers
# started with that file are stopped.
# Usage: bin/kafka-server-stop.sh [server.properties]
set -uo pipefail
pattern='python[0-9.]* -m kafka_py\.kafka( |$)'
if [ $# -ge 1 ]; then
    config="$(cd "$(dirname "$1")" 2>/dev/null && pwd)/$(basename "$1")"
    # the start script passes the path as given; match either form
    pids=$( { pgrep -f "kafka_py\.kafka $config( |\$)"; pgrep -f "kafka_py\.kafka $1( |\$)"; } | sort -u)
else
    pids=$(pgrep -f "$pattern" || true)
fi
if [ -z "$pids" ]; then
    echo "No kafka server to stop"
    exit 1
fi
kill -s TERM $pids
