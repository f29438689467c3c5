#!/usr/bin/env bash
# Formats and inspects the storage directories of a KRaft node (Kafka's bin/kafka-storage.sh,
# i.e. kafka.tools.StorageTool):
#   bin/kafka-storage.sh random-uuid
#   bin/kafka-storage.sh format -t <cluster id> -c config/kraft/server.properties [--ignore-formatted]
#   bin/kafka-storage.sh info -c config/kraft/server.properties
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.tools.storage_tool "$@"
