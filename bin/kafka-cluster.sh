#!/usr/bin/env bash
# The cluster's id, and the unregistration of a KRaft broker, as Kafka's bin/kafka-cluster.sh
# (kafka.tools.ClusterTool):
#   bin/kafka-cluster.sh cluster-id --bootstrap-server localhost:9092
#   bin/kafka-cluster.sh unregister --bootstrap-server localhost:9092 --id 3
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.tools.cluster_tool "$@"
