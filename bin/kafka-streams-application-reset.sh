#!/usr/bin/env bash
# Resets a Kafka Streams application's input offsets and deletes its internal topics
# (Kafka's bin/kafka-streams-application-reset.sh, i.e. kafka.tools.StreamsResetter):
#   bin/kafka-streams-application-reset.sh --bootstrap-servers localhost:9092 --application-id app \
#       --input-topics in [--intermediate-topics t] [--to-earliest|--to-offset N|...] [--dry-run]
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" kafka.tools.StreamsResetter "$@"
