#!/usr/bin/env bash
# Starts Debian's ZooKeeper server with a Kafka-style properties file.
# Usage: bin/zookeeper-server-start.sh [-daemon] config/zookeeper.properties
set -euo pipefail
source "$(dirname "$0")/kafka-env.sh"

daemon=0
if [ "${1:-}" = "-daemon" ]; then daemon=1; shift; fi
if [ $# -lt 1 ]; then
    echo "USAGE: $0 [-daemon] zookeeper.properties" >&2
    exit 1
fi
# by its absolute path, which bin/zookeeper-server-stop.sh CONFIG looks for
config="$(realpath -m -- "$1")"
[ -f "$config" ] || { echo "zookeeper config not found: $1" >&2; exit 1; }
ensure_zookeeper

# Kafka keeps these under $base_dir/logs; outside the tree here so it stays clean.
log_dir="${LOG_DIR:-/tmp/kafka-py-logs}"
mkdir -p "$log_dir"
data_dir="$(sed -n 's/^[[:space:]]*dataDir[[:space:]]*=[[:space:]]*//p' "$config" | tail -n 1)"
[ -z "$data_dir" ] || mkdir -p "$data_dir"

# The jar's manifest carries the classpath of Debian's ZooKeeper dependencies, slf4j's API
# among them; its log4j 1.2 binding (both are dependencies of the package) makes ZooKeeper
# log through config/log4j.properties, as Kafka's script points its ZooKeeper at Kafka's.
log4j_opts="${KAFKA_LOG4J_OPTS:--Dlog4j.configuration=file:$KAFKA_PY_HOME/config/log4j.properties}"
# KAFKA_OPTS: further JVM options, word-split, as Kafka's kafka-run-class.sh takes them
cmd=(java -Xmx512M -Xms512M -Dzookeeper.log.dir="$log_dir" -Dkafka.logs.dir="$log_dir" $log4j_opts
     -Dzookeeper.admin.enableServer=false ${KAFKA_OPTS:-}
     -cp "$ZOOKEEPER_JAR:$SLF4J_LOG4J_JAR:$LOG4J_JAR"
     org.apache.zookeeper.server.quorum.QuorumPeerMain "$config")

if [ "$daemon" = 1 ]; then
    nohup "${cmd[@]}" > "$log_dir/zookeeper.out" 2>&1 < /dev/null &
    echo $! > "$log_dir/zookeeper.pid"
else
    exec "${cmd[@]}"
fi
