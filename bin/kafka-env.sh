# Sourced by the scripts in bin/: locates the repository and installs what is missing.
# (Kafka's scripts share bin/kafka-run-class.sh the same way.)

KAFKA_PY_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KAFKA_PY_VENV="${KAFKA_PY_VENV:-$KAFKA_PY_HOME/.venv}"
KAFKA_PY_PYTHON="$KAFKA_PY_VENV/bin/python"
ZOOKEEPER_JAR=/usr/share/java/zookeeper.jar
SLF4J_LOG4J_JAR=/usr/share/java/slf4j-log4j12.jar
LOG4J_JAR=/usr/share/java/log4j-1.2.jar

kafka_py_log() { echo "[$(date '+%Y-%m-%d %H:%M:%S')] $*" >&2; }

# The process ids of the servers the stop scripts stop: every process with the argument
# $1 (the broker's module kafka_py.core.kafka, ZooKeeper's main class); with $2, a config file,
# only those also given that file, compared by absolute path (the start scripts pass it so).
kafka_py_server_pids() {
    local marker="$1" config="" pid args
    if [ -n "${2:-}" ]; then config="$(realpath -m -- "$2")"; fi
    for pid in $(pgrep -f -- "$marker"); do
        args="$(tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null)" || continue
        grep -qxF -- "$marker" <<< "$args" || continue
        if [ -z "$config" ] || grep -qxF -- "$config" <<< "$args"; then
            echo "$pid"
        fi
    done
}

# A .venv with a current pip/setuptools and the project installed editable, with the
# test extras. Re-installs only when setup.py, setup.cfg or the C sources of the compiled
# record and protocol code changed since the last time.
ensure_python_env() {
    local stamp="$KAFKA_PY_VENV/.kafka-py-installed"
    local want
    want="$(cat "$KAFKA_PY_HOME/setup.py" "$KAFKA_PY_HOME/setup.cfg" "$KAFKA_PY_HOME"/kafka_py/clients/common/record/*.c "$KAFKA_PY_HOME"/kafka_py/clients/common/protocol/*.c | sha256sum | cut -d' ' -f1)"
    if [ -x "$KAFKA_PY_PYTHON" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
        return 0
    fi
    if [ ! -x "$KAFKA_PY_PYTHON" ]; then
        kafka_py_log "creating virtualenv $KAFKA_PY_VENV"
        python3 -m venv "$KAFKA_PY_VENV"
    fi
    # python-gssapi, in the test extra, is built from source: it needs krb5-config and gcc.
    ensure_kerberos
    kafka_py_log "installing kafka-py and its dependencies into $KAFKA_PY_VENV"
    "$KAFKA_PY_PYTHON" -m pip install -q --upgrade pip setuptools wheel
    "$KAFKA_PY_PYTHON" -m pip install -q -e "$KAFKA_PY_HOME[test]"
    echo "$want" > "$stamp"
}

# Debian's ZooKeeper server package (it brings a Java runtime with it).
ensure_zookeeper() {
    if [ -f "$ZOOKEEPER_JAR" ] && command -v java >/dev/null 2>&1; then
        return 0
    fi
    if [ "$(id -u)" != 0 ]; then
        echo "ZooKeeper is not installed: run 'apt-get install zookeeper' as root" >&2
        return 1
    fi
    kafka_py_log "installing Debian's zookeeper package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q zookeeper >/dev/null
}

# Debian's Prometheus server, which one integration test starts to scrape a broker.
ensure_prometheus() {
    if command -v prometheus >/dev/null 2>&1; then
        return 0
    fi
    if [ "$(id -u)" != 0 ]; then
        echo "Prometheus is not installed: run 'apt-get install prometheus' as root" >&2
        return 1
    fi
    kafka_py_log "installing Debian's prometheus package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends prometheus >/dev/null
}

# Debian's Burrow (a consumer lag checker built on Sarama), which one integration test runs
# against a broker: it speaks the protocol of Kafka 0.10.0.
ensure_burrow() {
    if command -v Burrow >/dev/null 2>&1; then
        return 0
    fi
    if [ "$(id -u)" != 0 ]; then
        echo "Burrow is not installed: run 'apt-get install burrow' as root" >&2
        return 1
    fi
    kafka_py_log "installing Debian's burrow package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends burrow >/dev/null
}

# MIT Kerberos: the KDC (krb5kdc, kdb5_util), kadmin.local and kinit that the SASL/GSSAPI tests
# make a throwaway realm with, and the headers and compiler python-gssapi (the test extra)
# builds against, since PyPI has no Linux wheel of it.
ensure_kerberos() {
    if command -v krb5-config >/dev/null 2>&1 && command -v gcc >/dev/null 2>&1 \
            && [ -x /usr/sbin/krb5kdc ] && [ -x /usr/sbin/kadmin.local ] && command -v kinit >/dev/null 2>&1; then
        return 0
    fi
    if [ "$(id -u)" != 0 ]; then
        echo "MIT Kerberos is not installed: run 'apt-get install krb5-kdc krb5-admin-server krb5-user" \
             "libkrb5-dev gcc' as root" >&2
        return 1
    fi
    kafka_py_log "installing Debian's krb5-kdc, krb5-admin-server, krb5-user, libkrb5-dev and gcc"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends krb5-kdc krb5-admin-server krb5-user libkrb5-dev gcc >/dev/null
}

ensure_installed() {
    ensure_python_env
    ensure_zookeeper
}
