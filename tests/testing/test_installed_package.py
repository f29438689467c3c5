"""``python -m build`` of this repository, the wheel installed in a new virtualenv with
nothing of the repository, and a KRaft broker started from the installed console scripts
with the config the package ships."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import venv

import pytest

from kafka_py.testing.cluster import wait_until
from kafka_py.testing.ports import reserve_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = ("kafka-server-start", "kafka-server-stop", "kafka-topics", "kafka-configs", "kafka-console-producer",
           "kafka-console-consumer", "kafka-consumer-groups", "kafka-acls", "kafka-dump-log", "kafka-storage",
           "zookeeper-server-start", "zookeeper-shell")


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("timeout", 600)
    return subprocess.run(list(map(str, args)), capture_output=True, text=True, **kwargs)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> pathlib.Path:
    """The bin/ folder of a new virtualenv with the built wheel installed (built once)."""
    work = tmp_path_factory.mktemp("installed")
    # a copy of the sources, so that the build leaves nothing in the work tree
    src = work / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", "build",
                                                              "tests", "benchmarks", ".hypothesis", ".pytest_cache"))
    # --no-isolation: the build runs on this environment's setuptools, not a fresh download
    built = run(sys.executable, "-m", "build", "--no-isolation", "--outdir", work / "dist", src)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    dist = sorted(p.name for p in (work / "dist").iterdir())
    assert any(n.endswith(".tar.gz") for n in dist) and any(n.endswith(".whl") for n in dist), dist
    wheel = next((work / "dist").glob("*.whl"))
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=True)
    installed = run(env_dir / "bin" / "python", "-m", "pip", "install", "-q", wheel)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return env_dir / "bin"


def test_every_script_is_on_path(installed):
    for name in SCRIPTS:
        assert (installed / name).exists(), name
    assert run(installed / "kafka-topics", "--help").returncode == 0


def test_the_package_ships_its_configs(installed, tmp_path):
    out = run(installed / "python", "-m", "kafka_py.config", "kraft/server.properties", cwd=tmp_path)
    assert out.returncode == 0 and "process.roles=broker,controller" in out.stdout
    where = run(installed / "python", "-m", "kafka_py.config", "--list", cwd=tmp_path)
    assert str(installed.parent) in where.stdout and "logging.yaml" in where.stdout


def test_a_broker_starts_from_the_installed_scripts(installed, tmp_path):
    client, controller = reserve_port(), reserve_port()
    try:
        config = run(installed / "python", "-m", "kafka_py.config", "kraft/server.properties", cwd=tmp_path).stdout
        config = (config.replace("/tmp/kraft-combined-logs", str(tmp_path / "data"))
                  .replace("9092", str(client.port)).replace("9093", str(controller.port)))
        (tmp_path / "server.properties").write_text(config)
        cluster_id = run(installed / "kafka-storage", "random-uuid", cwd=tmp_path).stdout.strip()
        formatted = run(installed / "kafka-storage", "format", "-t", cluster_id, "-c", "server.properties", cwd=tmp_path)
        assert formatted.returncode == 0, formatted.stderr
        client.release()
        controller.release()
        env = dict(os.environ, LOG_DIR=str(tmp_path / "logs"))
        with open(tmp_path / "broker.out", "wb") as out:
            broker = subprocess.Popen([installed / "kafka-server-start", "server.properties"], cwd=tmp_path,
                                      stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            wait_until(lambda: b"Transitioning from RECOVERY to RUNNING" in (tmp_path / "broker.out").read_bytes()
                       or broker.poll() is not None, 120, "the broker did not start")
            assert broker.poll() is None, (tmp_path / "broker.out").read_text()[-3000:]
            bootstrap = f"localhost:{client.port}"
            created = run(installed / "kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", "t",
                          cwd=tmp_path, timeout=120)
            assert created.returncode == 0 and "Created topic t." in created.stdout, created.stderr
            produced = run(installed / "kafka-console-producer", "--bootstrap-server", bootstrap, "--topic", "t",
                           input="hello\n", cwd=tmp_path, timeout=120)
            assert produced.returncode == 0, produced.stderr
            consumed = run(installed / "kafka-console-consumer", "--bootstrap-server", bootstrap, "--topic", "t",
                           "--from-beginning", "--max-messages", "1", cwd=tmp_path, timeout=120)
            assert consumed.stdout.strip() == "hello", consumed.stderr
            # the broker's logging config came from the package: Kafka's files under LOG_DIR
            assert (tmp_path / "logs" / "server.log").exists()
            # the installed stop script finds the broker by its config file
            stopped = run(installed / "kafka-server-stop", tmp_path / "server.properties")
            assert stopped.returncode == 0
            assert broker.wait(timeout=60) == 0
        finally:
            if broker.poll() is None:
                broker.kill()
                broker.wait()
    finally:
        client.release()
        controller.release()
