#!/usr/bin/env bash
# Log dirs of brokers and the size and lag of the replicas in them (Kafka's bin/kafka-log-dirs.sh,
# i.e. kafka.admin.LogDirsCommand):
#   bin/kafka-log-dirs.sh --bootstrap-server localhost:9092 --describe
#   bin/kafka-log-dirs.sh --bootstrap-server localhost:9092 --describe --broker-list 0,1 --topic-list orders
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.admin.log_dirs_command "$@"
