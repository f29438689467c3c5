#!/usr/bin/env bash
# Creates, renews, expires and describes delegation tokens
# (Kafka's bin/kafka-delegation-tokens.sh, i.e. kafka.admin.DelegationTokenCommand):
#   bin/kafka-delegation-tokens.sh --bootstrap-server localhost:9093 --command-config client.properties \
#       --create --max-life-time-period -1 --renewer-principal User:bob
# client.properties holds a SASL (or two-way TLS) login: token requests are refused on PLAINTEXT.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.admin.delegation_token_command "$@"
