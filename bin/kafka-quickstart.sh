#!/usr/bin/env bash
# One command from a fresh machine to a running Kafka on localhost.
#   bin/kafka-quickstart.sh [zookeeper.properties server.properties]
#   bin/kafka-quickstart.sh --kraft [server.properties]
# Installs what is missing (.venv with the project, Debian's zookeeper package), checks that
# the ports and the log dirs the configs name are free (and says which process holds one
# that is not), starts ZooKeeper with config/zookeeper.properties and a broker with
# config/server.properties (or the two files given), logs both to this terminal, and on
# Ctrl-C stops the broker first, then ZooKeeper, whether or not the output goes through a
# pipe (| tee log). A second Ctrl-C while they stop kills them. If the broker stops by
# itself, ZooKeeper is stopped too and the script exits with the broker's status.
#
# With --kraft: no ZooKeeper and no Java. One combined broker and controller node
# (config/kraft/server.properties, or the file given) in KRaft mode; its log dirs are
# formatted on first use (bin/kafka-storage.sh format, with a new cluster id, or the one
# a formatted dir of the node already has), then it runs as above.
set -euo pipefail
source "$(dirname "$0")/kafka-env.sh"

kraft=0
if [ "${1:-}" = "--kraft" ]; then
    kraft=1
    shift
    if [ $# -gt 1 ]; then
        echo "USAGE: $0 --kraft [server.properties]" >&2
        exit 1
    fi
    zk_config=""
    server_config="${1:-$KAFKA_PY_HOME/config/kraft/server.properties}"
elif [ $# -eq 0 ]; then
    zk_config="$KAFKA_PY_HOME/config/zookeeper.properties"
    server_config="$KAFKA_PY_HOME/config/server.properties"
elif [ $# -eq 2 ]; then
    zk_config="$1"
    server_config="$2"
else
    echo "USAGE: $0 [zookeeper.properties server.properties]" >&2
    echo "       $0 --kraft [server.properties]" >&2
    exit 1
fi

# Nothing is started while another ZooKeeper or broker holds what these configs name.
if [ "$kraft" = 1 ]; then
    ensure_python_env
    check_args=(--kraft "$server_config")
else
    ensure_installed
    check_args=("$zk_config" "$server_config")
fi
if ! "$KAFKA_PY_PYTHON" -m kafka_py.bin.quickstart_check "${check_args[@]}"; then
    echo "Not starting: stop what holds them (bin/kafka-server-stop.sh, bin/zookeeper-server-stop.sh)" \
         "or give the quickstart configs with other ports and log.dirs." >&2
    exit 1
fi

if [ "$kraft" = 1 ]; then
    cluster_id="$("$KAFKA_PY_PYTHON" -m kafka_py.bin.quickstart_check --cluster-id "$server_config")"
    if [ -z "$cluster_id" ]; then
        cluster_id="$("$KAFKA_PY_HOME/bin/kafka-storage.sh" random-uuid)"
    fi
    "$KAFKA_PY_HOME/bin/kafka-storage.sh" format --ignore-formatted -t "$cluster_id" -c "$server_config" >&2
else
    zk_port="$(sed -n 's/^[[:space:]]*clientPort[[:space:]]*=[[:space:]]*//p' "$zk_config" | tail -n 1)"
fi

zk_pid=""
broker_pid=""
stop_one() {  # name pid
    if [ -n "$2" ] && kill -0 "$2" 2>/dev/null; then
        kafka_py_log "stopping $1 (pid $2)"
        kill -TERM "$2" 2>/dev/null
        wait "$2" 2>/dev/null
    fi
}
force_stop() {
    trap '' INT TERM
    kafka_py_log "killing the broker and zookeeper"
    [ -z "$broker_pid" ] || kill -KILL "$broker_pid" 2>/dev/null
    [ -z "$zk_pid" ] || kill -KILL "$zk_pid" 2>/dev/null
    exit 130
}
stop_all() {
    # Ctrl-C also stops whatever reads this script's output (| tee, | less): a write to it
    # must neither kill this script (SIGPIPE) nor end it (set -e) before both are stopped.
    trap '' PIPE
    set +e
    trap - EXIT
    trap force_stop INT TERM
    stop_one broker "$broker_pid"
    stop_one zookeeper "$zk_pid"
}
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 143' TERM
trap stop_all EXIT

# Children run in sessions of their own, so a Ctrl-C in the terminal reaches only this
# script: ZooKeeper must outlive the broker, whose clean shutdown still talks to it.
if [ "$kraft" = 0 ]; then
    setsid "$KAFKA_PY_HOME/bin/zookeeper-server-start.sh" "$zk_config" &
    zk_pid=$!

    # Wait until ZooKeeper answers on its client port before the broker connects to it.
    zk_up=0
    for _ in $(seq 1 600); do
        kill -0 "$zk_pid" 2>/dev/null || { echo "zookeeper exited during startup" >&2; exit 1; }
        if (exec 3<>"/dev/tcp/127.0.0.1/$zk_port") 2>/dev/null; then zk_up=1; break; fi
        sleep 0.1
    done
    [ "$zk_up" = 1 ] || { echo "zookeeper did not answer on port $zk_port within 60 s" >&2; exit 1; }
    kafka_py_log "zookeeper is serving on localhost:$zk_port (pid $zk_pid)"
fi

setsid "$KAFKA_PY_HOME/bin/kafka-server-start.sh" "$server_config" &
broker_pid=$!
status=0
wait "$broker_pid" || status=$?
kafka_py_log "the broker exited with status $status"
broker_pid=""
stop_all
exit "$status"
