#!/usr/bin/env bash
# Stops kafka-py brokers, as Kafka 2.8's bin/kafka-server-stop.sh: sends SIGTERM (or the signal
# named by $SIGNAL) to every broker on this machine started by bin/kafka-server-start.sh
# (python -m kafka_py.core.kafka), and says "No kafka server to stop" with status 1 if there is none.
# With a config file, only the brokers started with that file are stopped (the same file by its
# absolute path, however each path was written).
# Usage: [SIGNAL=TERM] bin/kafka-server-stop.sh [server.properties]
set -uo pipefail
source "$(dirname "$0")/kafka-env.sh"
SIGNAL=${SIGNAL:-TERM}

pids=$(kafka_py_server_pids kafka_py.core.kafka "${1:-}")
if [ -z "$pids" ]; then
    echo "No kafka server to stop"
    exit 1
fi
kill -s "$SIGNAL" $pids
