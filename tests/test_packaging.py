"""The installed layout promised by setup.py: the ported folders live inside kafka_py."""
import importlib
import importlib.util
import pathlib
import sysconfig

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PORTED = ("network", "log", "server", "controller")


@pytest.mark.parametrize("name", PORTED)
def test_ported_folder_imports_inside_namespace(name):
    module = importlib.import_module(f"kafka_py.{name}")
    assert pathlib.Path(module.__file__).resolve().parent == ROOT / name


@pytest.mark.parametrize("name", PORTED)
def test_nothing_lands_at_top_of_site_packages(name):
    site = pathlib.Path(sysconfig.get_paths()["purelib"])
    assert not (site / name).exists()
    assert not (site / f"{name}.py").exists()


def test_subpackages_map_too():
    module = importlib.import_module("kafka_py.server.checkpoints")
    assert pathlib.Path(module.__file__).resolve().parent == ROOT / "server" / "checkpoints"


def test_logging_config_is_valid_dictconfig(tmp_path, monkeypatch):
    import logging.config

    import yaml

    monkeypatch.setenv("LOG_DIR", str(tmp_path))
    config = yaml.safe_load((ROOT / "config" / "logging.yaml").read_text())
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    named = {name: (lg.level, lg.handlers[:], lg.propagate)
             for name, lg in ((n, logging.getLogger(n)) for n in config.get("loggers", {}))}
    try:
        logging.config.dictConfig(config)
        handler = root.handlers[0]
        file_handlers = {pathlib.Path(h.baseFilename).name for h in root.handlers[1:]}
        for name in named:
            file_handlers.update(pathlib.Path(h.baseFilename).name for h in logging.getLogger(name).handlers)
    finally:
        # dictConfig binds a handler to the current (captured) stdout; leaving it on the root
        # logger would make later log calls, even at interpreter exit, write to a closed file.
        for h in root.handlers[1:]:
            h.close()
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        for name, (level, handlers, propagate) in named.items():
            lg = logging.getLogger(name)
            for h in lg.handlers:
                h.close()
            lg.setLevel(level)
            lg.handlers[:] = handlers
            lg.propagate = propagate
    assert file_handlers == {"server.log", "controller.log", "state-change.log", "kafka-request.log",
                             "log-cleaner.log", "kafka-authorizer.log"}
    record = logging.LogRecord("kafka_py.server.kafka_server", logging.INFO, "", 0,
                               "[KafkaServer id=0] started", None, None)
    line = handler.formatter.format(record)
    # Kafka's log4j pattern: "[date] LEVEL message (logger)"
    assert line.startswith("[") and "] INFO [KafkaServer id=0] started (kafka_py.server.kafka_server)" in line


def test_wheel_puts_everything_under_kafka_py(tmp_path):
    import shutil
    import subprocess
    import sys
    import zipfile

    # Build from a copy so setuptools' build/ and egg-info never land in the work tree.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("setup.py", "setup.cfg", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("kafka_py",) + PORTED:
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "dist"), str(src)],
        check=True, capture_output=True,
    )
    wheel = next((tmp_path / "dist").glob("kafka_py-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert all(t == "kafka_py" or t.startswith("kafka_py-") for t in tops), tops
    for name in PORTED:
        assert f"kafka_py/{name}/__init__.py" in names
