"""Port of shell/src/main/java/org/apache/kafka/shell/FindCommandHandler.java.

``find [path]...``: every node at and below each path, one path a line, depth first in
name order (the working directory without a path).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, TextIO

from kafka_py.shell.command_utils import complete_path, get_effective_paths
from kafka_py.shell.commands import Argument, Type, println
from kafka_py.shell.glob_visitor import GlobVisitor, MetadataNodeInfo
from kafka_py.shell.metadata_node import DirectoryNode, MetadataNode

if TYPE_CHECKING:
    from kafka_py.shell.interactive_shell import InteractiveShell
    from kafka_py.shell.metadata_node_manager import MetadataNodeManager


class FindCommandType(Type):
    name = "find"
    description = "Search for nodes in the directory hierarchy."
    shell_only = False
    arguments = (Argument("paths", "*", "The paths to start at."),)

    def create_handler(self, namespace: dict[str, Any]) -> FindCommandHandler:
        return FindCommandHandler(namespace["paths"])

    def complete_next(self, node_manager: MetadataNodeManager, next_words: list[str]) -> list[str]:
        return complete_path(node_manager, next_words[-1])


class FindCommandHandler:
    TYPE = FindCommandType()

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths

    def run(self, shell: Optional[InteractiveShell], writer: TextIO, manager: MetadataNodeManager) -> None:
        for path in get_effective_paths(self.paths):
            def visit(info: Optional[MetadataNodeInfo], path: str = path) -> None:
                if info is None:
                    println(writer, f"find: {path}: no such file or directory.")
                else:
                    self.find(writer, path, info.node)

            manager.visit(GlobVisitor(path, visit))

    def find(self, writer: TextIO, path: str, node: MetadataNode) -> None:
        # Iterative, so that a deep tree cannot reach Python's recursion limit.
        stack = [(path, node)]
        while stack:
            current_path, current = stack.pop()
            println(writer, current_path)
            if isinstance(current, DirectoryNode):
                children = [(current_path + name if current_path == "/" else current_path + "/" + name, child)
                            for name, child in current.children()]
                stack.extend(reversed(children))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FindCommandHandler) and other.paths == self.paths
