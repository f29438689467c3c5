"""Builds the module table of the reading guide (docs/README.md) from the code itself.

No Kafka counterpart. Every module's docstring opens with the Kafka 2.8.2 file it
ports ("Port of core/src/main/scala/kafka/log/Log.scala ..."), or says what it is when
Kafka has no twin. This tool turns those first lines into the table between the
``<!-- module-table -->`` markers of docs/README.md, and a test checks the table is
current, so the guide cannot drift from the code.

    .venv/bin/python -m kafka_py.bin.reading_guide --write
"""
from __future__ import annotations

import ast
import pathlib
import re
import sys

from kafka_py.core.utils.command_line_utils import run_tool

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("network", "log", "server", "controller", "kafka_py")
BEGIN, END = "<!-- module-table -->", "<!-- /module-table -->"
_PORT = re.compile(r"^Port of (?P<what>.+?)\.?$")


def module_files() -> list[pathlib.Path]:
    files = []
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            if path.name == "__init__.py" and path.stat().st_size == 0:
                continue
            if "__pycache__" in path.parts:
                continue
            files.append(path)
    return files


def first_line(path: pathlib.Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(), str(path))) or ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def table() -> str:
    rows = ["| module | Kafka 2.8.2 counterpart |", "|---|---|"]
    for path in module_files():
        line = first_line(path)
        match = _PORT.match(line.split(". ")[0] if line.startswith("Port of") else "")
        counterpart = match.group("what") if match else (line or "(no docstring)")
        rows.append(f"| `{path.relative_to(ROOT).as_posix()}` | {counterpart.replace('|', '/')} |")
    return "\n".join(rows)


def render(readme: str) -> str:
    start, end = readme.index(BEGIN) + len(BEGIN), readme.index(END)
    return readme[:start] + "\n" + table() + "\n" + readme[end:]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--write" in argv:
        guide = ROOT / "docs" / "README.md"
        guide.write_text(render(guide.read_text()))
    else:
        print(table())
    return 0


if __name__ == "__main__":
    run_tool(main, tool_logging=False)
