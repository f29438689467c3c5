#!/usr/bin/env bash
# Type-checks the ported core packages with mypy (configuration: setup.cfg's [mypy] sections):
#   bin/kafka-type-check.sh [mypy args...]
# bin/run-tests.sh runs it before pytest; a type error fails the run.
#
# network/, log/, server/ and controller/ sit at the top of the repository but are the
# packages kafka_py.network, kafka_py.log ... (setup.py's package_dir); the editable install
# maps them with an import hook that mypy does not follow. So the check runs on a throwaway
# tree that has the installed layout: kafka_py/ holding a link to each entry of the
# repository's kafka_py/ and links network, log, server, controller to the top folders. It is
# made anew each run at one place in the venv, so mypy's cache (also there) stays valid.
set -euo pipefail
source "$(dirname "$0")/kafka-env.sh"
ensure_python_env

# what is checked (and reported); what they import is read for its types only
CHECKED_PACKAGES=(kafka_py.server kafka_py.log kafka_py.network kafka_py.controller kafka_py.core.cluster)

tree="$KAFKA_PY_VENV/mypy-tree"
rm -rf "$tree"
mkdir -p "$tree/kafka_py"
for entry in "$KAFKA_PY_HOME"/kafka_py/*; do
    case "$(basename "$entry")" in __pycache__|*.so) continue ;; esac
    ln -s "$entry" "$tree/kafka_py/"
done
for top in network log server controller; do
    ln -s "$KAFKA_PY_HOME/$top" "$tree/kafka_py/$top"
done

args=()
for package in "${CHECKED_PACKAGES[@]}"; do args+=(-p "$package"); done
cd "$tree"
kafka_py_log "type-checking ${CHECKED_PACKAGES[*]}"
"$KAFKA_PY_PYTHON" -m mypy --config-file "$KAFKA_PY_HOME/setup.cfg" --cache-dir "$KAFKA_PY_VENV/.mypy_cache" \
    "${args[@]}" "$@"
