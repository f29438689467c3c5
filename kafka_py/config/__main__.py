"""``python -m kafka_py.config [NAME] [--list]``: print a config shipped with the broker
(``server.properties`` by default; ``kraft/server.properties``, ``zookeeper.properties``...),
so a pip user starts from the same files as ``config/`` in the repository:

    python -m kafka_py.config kraft/server.properties > server.properties
"""
from __future__ import annotations

import sys

from kafka_py.config import config_dir, config_names, read_config


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if args and args[0] == "--list":
        print(f"# in {config_dir()}")
        for name in config_names():
            print(name)
        return 0
    name = args[0] if args else "server.properties"
    try:
        sys.stdout.write(read_config(name))
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
