#!/usr/bin/env bash
# Runs the whole test suite from a fresh machine:
#   bin/run-tests.sh [pytest args...]
# Installs what is missing (.venv with the project and test extras, Debian's zookeeper
# and prometheus packages for the integration tests), then runs pytest over tests/.
set -euo pipefail
source "$(dirname "$0")/kafka-env.sh"
ensure_installed
ensure_prometheus
cd "$KAFKA_PY_HOME"
exec "$KAFKA_PY_PYTHON" -m pytest "$@"
