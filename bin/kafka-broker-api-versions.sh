#!/usr/bin/env bash
# Prints the API versions every broker of the cluster offers
# (Kafka's bin/kafka-broker-api-versions.sh, i.e. kafka.admin.BrokerApiVersionsCommand):
#   bin/kafka-broker-api-versions.sh --bootstrap-server localhost:9092 [--command-config admin.properties]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.admin.broker_api_versions_command "$@"
