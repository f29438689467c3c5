#!/usr/bin/env bash
# Exports topics of a broker's log dirs to Parquet with Spark, partitioned by topic and
# partition; each run exports only what is new since the last one (kafka_py/spark/export_job.py):
#   bin/kafka-log-to-parquet.sh --log-dir DIR [--log-dir DIR2] --output OUT \
#       [--topic T ... | --topic-pattern REGEX] [--committed-only] [--state-file FILE] \
#       [--master local[*] | spark://host:7077 | yarn] [--conf key=value] [--progress bar|spark|none]
# or as a streaming query that resumes from its checkpoint (kafka_py/spark/stream_export.py):
#   bin/kafka-log-to-parquet.sh --stream --checkpoint DIR --log-dir DIR --output OUT \
#       [--trigger 10s | --available-now] [--max-offsets-per-trigger N] [--bootstrap-server HOST:PORT]
# --master (default local[*]) goes to spark-submit, every other argument to the job. Extra
# spark-submit arguments (e.g. "--executor-memory 4g") go in KAFKA_LOG_SPARK_SUBMIT_OPTS. The
# driver and local workers run the project's virtualenv Python; set PYSPARK_PYTHON for a
# cluster whose nodes have kafka-py installed elsewhere.
set -euo pipefail
source "$(dirname "$0")/kafka-env.sh"
ensure_python_env

master="local[*]"
job_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --master) master="$2"; shift 2 ;;
        --master=*) master="${1#--master=}"; shift ;;
        --stream) stream=1; job_args+=("$1"); shift ;;
        *) job_args+=("$1"); shift ;;
    esac
done

if [ -n "${stream:-}" ]; then
    # Ctrl-C must reach only the job, which stops its query between micro-batches and then
    # Spark: a JVM started with SIGINT ignored keeps ignoring it (and runs no shutdown hook
    # under the query), while the job installs its own handler.
    trap '' INT
fi

export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$KAFKA_PY_PYTHON}"
export PYSPARK_DRIVER_PYTHON="${PYSPARK_DRIVER_PYTHON:-$KAFKA_PY_PYTHON}"
# shellcheck disable=SC2086  # the extra options are meant to split into words
exec "$KAFKA_PY_VENV/bin/spark-submit" --master "$master" --name kafka-log-to-parquet \
    ${KAFKA_LOG_SPARK_SUBMIT_OPTS:-} "$KAFKA_PY_HOME/kafka_py/spark/export_job.py" ${job_args[@]+"${job_args[@]}"}
