#!/usr/bin/env bash
# Describes, upgrades and downgrades the cluster's finalized features (KIP-584), as Kafka's
# bin/kafka-features.sh (kafka.admin.FeatureCommand):
#   bin/kafka-features.sh --bootstrap-server localhost:9092 --describe [--from-controller]
#   bin/kafka-features.sh --bootstrap-server localhost:9092 --upgrade-all [--dry-run]
#   bin/kafka-features.sh --bootstrap-server localhost:9092 --downgrade-all [--dry-run]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.admin.feature_command "$@"
