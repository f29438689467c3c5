"""A class-data sharing archive for the Spark drivers the tests start.

A Spark driver's JVM loads and verifies some ten thousand classes before its first job: on
two cores about half of a Spark start's CPU. A dynamic CDS archive (JDK 13+:
``-XX:ArchiveClassesAtExit`` once, ``-XX:SharedArchiveFile`` after) maps them ready-made,
and a start with its first small job takes about half the CPU it took without.

The archive is made once per machine (per JDK and pyspark, in the user's cache directory)
by a Spark run of its own
(``python -m tests.spark.class_archive``), started in the background by the first test
process that imports tests/spark/conftest.py, and written under a temporary name then
renamed, so a driver started meanwhile simply does without it. The drivers name it in
their JVM options whether it exists yet or not; ``-Xlog:cds*=off`` keeps a missing or
unusable archive silent (the JVM then loads classes as usual), so nothing any test reads
from a driver's output changes.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys

# A cache of the machine's, not of the checkout: kept across clones and virtualenvs, and
# keyed by the JDK and pyspark it was made with.
ARCHIVE_DIR = (pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache")
               / "kafka-py" / "test-spark-classes")


def _key() -> str:
    import pyspark

    java = shutil.which("java") or "java"
    real = os.path.realpath(java)
    try:
        stamp = os.stat(real).st_mtime_ns
    except OSError:
        stamp = 0
    return hashlib.sha1(f"{real}:{stamp}:{pyspark.__version__}".encode()).hexdigest()[:16]


def archive_path() -> pathlib.Path:
    return ARCHIVE_DIR / f"spark-driver-{_key()}.jsa"


def jvm_options(base: str) -> str:
    """``base`` and the archive's options, as one ``@file`` word (Java's launcher reads
    options from an argument file), since the bin/ scripts word-split what they pass on."""
    ARCHIVE_DIR.mkdir(parents=True, exist_ok=True)
    text = f"{base} -Xlog:cds*=off -XX:SharedArchiveFile={archive_path()}\n"
    argfile = ARCHIVE_DIR / f"driver-{hashlib.sha1(text.encode()).hexdigest()[:12]}.args"
    if not argfile.exists():
        temporary = argfile.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(text)
        os.replace(temporary, argfile)
    return f"@{argfile}"


def start_making(base: str) -> None:
    """Starts the archive's Spark run in the background unless the archive exists or another
    process is making it."""
    if archive_path().exists():
        return
    ARCHIVE_DIR.mkdir(parents=True, exist_ok=True)
    lock = open(ARCHIVE_DIR / "making.lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return  # another test process is making it
    # The child inherits the lock and holds it until it is done.
    subprocess.Popen([sys.executable, "-m", "tests.spark.class_archive", base],
                     cwd=pathlib.Path(__file__).resolve().parents[2], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(lock.fileno(),),
                     start_new_session=True)
    lock.close()


def _make(base: str) -> None:
    """One Spark start and a small Parquet write and read (what most of the tests do), the
    loaded classes written to the archive when the JVM exits. (A broader run archives more
    classes but costs more to make than the later starts save.)"""
    from pyspark.sql import SparkSession

    target = archive_path()
    temporary = target.with_suffix(f".{os.getpid()}.tmp")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session = (SparkSession.builder.master("local[2]").appName("kafka-py-class-archive")
               .config("spark.ui.enabled", "false")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.pyspark.python", sys.executable)
               .config("spark.driver.extraJavaOptions", f"{base} -XX:ArchiveClassesAtExit={temporary}")
               .getOrCreate())
    scratch = ARCHIVE_DIR / f"scratch-{os.getpid()}"
    try:
        df = session.range(100).selectExpr("id", "id % 3 AS k")
        df.write.mode("overwrite").partitionBy("k").parquet(str(scratch / "parquet"))
        session.read.parquet(str(scratch / "parquet")).count()
    finally:
        process = session.sparkContext._gateway.proc
        session.stop()
        # The JVM writes the archive as it exits, which it does once its stdin closes (Spark's
        # gateway server watches it): close it now and wait, rather than at this process's exit.
        process.stdin.close()
        process.wait(timeout=300)
        shutil.rmtree(scratch, ignore_errors=True)
        if process.returncode == 0 and temporary.exists() and temporary.stat().st_size > 0:
            os.replace(temporary, target)
        temporary.unlink(missing_ok=True)


if __name__ == "__main__":
    _make(sys.argv[1] if len(sys.argv) > 1 else "")
