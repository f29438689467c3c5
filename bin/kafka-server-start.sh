#!/usr/bin/env bash
# Starts a kafka-py broker (python -m kafka_py.core.kafka), as Kafka's bin/kafka-server-start.sh.
# Usage: bin/kafka-server-start.sh [-daemon] config/server.properties [--override property=value]*
set -euo pipefail
source "$(dirname "$0")/kafka-env.sh"

if [ $# -lt 1 ]; then
    echo "USAGE: $0 [-daemon] server.properties [--override property=value]*" >&2
    exit 1
fi
daemon=0
if [ "$1" = "-daemon" ]; then daemon=1; shift; fi
if [ $# -lt 1 ]; then
    echo "USAGE: $0 [-daemon] server.properties [--override property=value]*" >&2
    exit 1
fi
ensure_python_env

# The config file by its absolute path, which bin/kafka-server-stop.sh CONFIG looks for.
config="$1"; shift
if [ -f "$config" ]; then config="$(realpath -- "$config")"; fi
cmd=("$KAFKA_PY_PYTHON" -m kafka_py.core.kafka "$config" "$@")
# Kafka keeps these under $base_dir/logs; outside the tree here so it stays clean. The
# broker writes server.log, controller.log, state-change.log... there (${kafka.logs.dir}
# in config/logging.yaml is $LOG_DIR), as Kafka's scripts pass -Dkafka.logs.dir=$LOG_DIR.
log_dir="${LOG_DIR:-/tmp/kafka-py-logs}"
export LOG_DIR="$log_dir"
if [ "$daemon" = 1 ]; then
    mkdir -p "$log_dir"
    nohup "${cmd[@]}" > "$log_dir/kafkaServer.out" 2>&1 < /dev/null &
    echo $! > "$log_dir/kafkaServer.pid"
else
    exec "${cmd[@]}"
fi
