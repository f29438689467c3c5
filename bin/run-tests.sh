#!/usr/bin/env bash
# Runs the whole test suite from a fresh machine:
#   bin/run-tests.sh [pytest args...]
# Installs what is missing (.venv with the project and test extras, Debian's zookeeper,
# prometheus and burrow packages for the integration tests, MIT Kerberos for the GSSAPI
# tests), type-checks the ported core packages (bin/kafka-type-check.sh; a type error fails
# the run before any test), then runs pytest over tests/.
#
# The tests run in KAFKA_PY_TEST_WORKERS pytest-xdist worker processes (default 4; 0 runs
# them in this one process). Most of the suite's time is spent waiting on brokers,
# ZooKeeper and Spark started as processes (brokers are forked from a launcher that has
# their modules loaded, kafka_py/testing/launcher.py), so four workers keep two CPUs busy. Each
# worker takes whole test files (--dist loadfile), so a file's module-scoped brokers and
# clusters stay in one process; every worker starts its own ZooKeeper on a free port. Files
# are handed out in collection order (--no-loadscope-reorder), which tests/conftest.py
# starts with the longest files (LONGEST_FILES), so that none of them is left for last.
set -euo pipefail
source "$(dirname "$0")/kafka-env.sh"
ensure_kerberos
ensure_installed
ensure_prometheus
ensure_burrow
cd "$KAFKA_PY_HOME"
bin/kafka-type-check.sh
exec "$KAFKA_PY_PYTHON" -m pytest -n "${KAFKA_PY_TEST_WORKERS:-4}" --dist loadfile --no-loadscope-reorder "$@"
