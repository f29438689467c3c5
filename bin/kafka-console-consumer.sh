#!/usr/bin/env bash
# Prints the records of a topic on standard output
# (Kafka's bin/kafka-console-consumer.sh, i.e. kafka.tools.ConsoleConsumer):
#   bin/kafka-console-consumer.sh --bootstrap-server localhost:9092 --topic t --from-beginning \
#       [--partition 0 --offset earliest|latest|N] [--max-messages N] [--timeout-ms MS] [--group g] \
#       [--property print.key=true --property print.timestamp=true --property print.headers=true]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.tools.console_consumer "$@"
