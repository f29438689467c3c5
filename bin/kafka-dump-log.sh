#!/usr/bin/env bash
# Dumps log segments, offset/time indexes, transaction indexes and producer snapshots
# (Kafka's bin/kafka-dump-log.sh, i.e. kafka.tools.DumpLogSegments):
#   bin/kafka-dump-log.sh --files 00000000000000000000.log[,00000000000000000000.index] \
#       [--print-data-log] [--deep-iteration] [--index-sanity-check] [--verify-index-only] \
#       [--max-message-size N] [--skip-record-metadata]
#       [--offsets-decoder | --transaction-log-decoder | --cluster-metadata-decoder]
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="$ROOT/.venv/bin/python"
if [ ! -x "$PYTHON" ]; then
    PYTHON=python3
fi
exec "$PYTHON" -m kafka_py.core.tools.dump_log_segments "$@"
