#!/usr/bin/env bash
# Browses a KRaft cluster's metadata log as a tree (Kafka's bin/kafka-metadata-shell.sh,
# i.e. org.apache.kafka.shell.MetadataShell); reads files only, no broker needed:
#   bin/kafka-metadata-shell.sh --snapshot /tmp/kraft-combined-logs/@metadata-0 ls /topics
#   bin/kafka-metadata-shell.sh --snapshot /tmp/kraft-combined-logs/@metadata-0/00000000000000000000.log
# The path may be the @metadata-0 directory, a segment (*.log) or a snapshot (*.checkpoint).
# With a command (ls, cat, find, tree) it runs it and exits; without, an interactive shell.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="$ROOT/.venv/bin/python"
if [ ! -x "$PYTHON" ]; then
    PYTHON=python3
fi
exec "$PYTHON" -m kafka_py.shell.metadata_shell "$@"
