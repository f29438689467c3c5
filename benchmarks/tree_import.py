"""Import kafka_py from another checkout, for same-machine before/after benchmarks: the
checkout goes first on sys.path, and its network, log, server and controller folders are
loaded as kafka_py.network (...) before anything imports them, since the editable install
maps those names to this checkout's folders whatever the working directory. No kafka_py
import here: this runs before the tree is chosen."""
from __future__ import annotations

import importlib.util
import pathlib
import sys


def use_tree(root: "str | pathlib.Path") -> None:
    root = pathlib.Path(root).resolve()
    sys.path.insert(0, str(root))
    import kafka_py

    assert pathlib.Path(kafka_py.__file__).parent == root / "kafka_py", kafka_py.__file__
    for top in ("network", "log", "server", "controller"):
        spec = importlib.util.spec_from_file_location(f"kafka_py.{top}", root / top / "__init__.py",
                                                      submodule_search_locations=[str(root / top)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
