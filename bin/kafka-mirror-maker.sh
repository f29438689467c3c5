#!/usr/bin/env bash
# Copies topics from one cluster to another (Kafka's bin/kafka-mirror-maker.sh, i.e.
# kafka.tools.MirrorMaker, MirrorMaker 1):
#   bin/kafka-mirror-maker.sh --consumer.config source.properties --producer.config target.properties \
#       --whitelist 'orders.*' [--num.streams N] [--offset.commit.interval.ms 60000] [--abort.on.send.failure true]
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" kafka.tools.MirrorMaker "$@"
