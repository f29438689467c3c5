"""The broker's configuration files, shipped inside the package.

``config/`` at the top of the repository holds them (``server.properties``,
``zookeeper.properties``, ``kraft/server.properties``, ``logging.yaml``...). A wheel carries
a copy in this package (setup.py's ``build_py`` puts it there), so a user of
``pip install kafka-py`` has them without the repository; in a source tree (an editable
install) they are read from ``config/`` itself. ``python -m kafka_py.config`` prints one
(``server.properties`` unless named) or lists them.
"""
from __future__ import annotations

import pathlib

_PACKAGED = pathlib.Path(__file__).resolve().parent
_SOURCE_TREE = _PACKAGED.parents[1] / "config"


def config_dir() -> pathlib.Path:
    """The folder holding the shipped configs: this package's copy, or the source tree's."""
    if (_PACKAGED / "server.properties").is_file():
        return _PACKAGED
    return _SOURCE_TREE


def config_path(name: str) -> pathlib.Path:
    """The path of a shipped config by its name relative to config/ (``kraft/server.properties``)."""
    path = config_dir() / name
    if not path.is_file():
        raise FileNotFoundError(f"no shipped config named {name} (python -m kafka_py.config --list)")
    return path


def config_names() -> list[str]:
    root = config_dir()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and p.suffix in (".properties", ".yaml", ".json", ".md"))


def read_config(name: str = "server.properties") -> str:
    return config_path(name).read_text()
