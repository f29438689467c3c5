"""Port of shell/src/main/java/org/apache/kafka/shell/command/TreeCommandHandler.java of
Kafka 3.5 (and its node/printer/ShellNodePrinter.java); Kafka 2.8.2's shell has no ``tree``.

``tree <path>...``: everything below each path, one name a line followed by a colon, each
level indented two spaces, and under a file its contents (indented as its name's children).
A file named directly prints its contents.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Optional, TextIO

from kafka_py.shell.command_utils import complete_path
from kafka_py.shell.commands import Argument, Type, println
from kafka_py.shell.glob_visitor import GlobVisitor, MetadataNodeInfo
from kafka_py.shell.metadata_node import DirectoryNode, MetadataNode

if TYPE_CHECKING:
    from kafka_py.shell.interactive_shell import InteractiveShell
    from kafka_py.shell.metadata_node_manager import MetadataNodeManager

logger = logging.getLogger(__name__)


class TreeCommandType(Type):
    name = "tree"
    description = "Show the contents of metadata nodes in a tree structure."
    shell_only = False
    arguments = (Argument("targets", "+", "The metadata nodes to display."),)

    def create_handler(self, namespace: dict[str, Any]) -> TreeCommandHandler:
        return TreeCommandHandler(namespace["targets"])

    def complete_next(self, node_manager: MetadataNodeManager, next_words: list[str]) -> list[str]:
        return complete_path(node_manager, next_words[-1])


class ShellNodePrinter:
    """Kafka 3.5's ShellNodePrinter: ``enter_node`` prints ``name:`` and indents."""

    def __init__(self, writer: TextIO) -> None:
        self.writer = writer
        self.indentation_level = 0

    def enter_node(self, name: str) -> None:
        println(self.writer, f"{'  ' * self.indentation_level}{name}:")
        self.indentation_level += 1

    def leave_node(self) -> None:
        self.indentation_level -= 1

    def output(self, text: str) -> None:
        # A multi-line file (a partition's JSON) keeps its lines under the one indent.
        for line in text.split("\n"):
            println(self.writer, f"{'  ' * self.indentation_level}{line}")


def print_node(node: MetadataNode, printer: ShellNodePrinter) -> None:
    """MetadataNode.print: a directory's children in name order, a file's contents."""
    if isinstance(node, DirectoryNode):
        for name, child in node.children():
            printer.enter_node(name)
            print_node(child, printer)
            printer.leave_node()
    else:
        printer.output(str(node.contents()))


class TreeCommandHandler:
    TYPE = TreeCommandType()

    def __init__(self, targets: list[str]) -> None:
        self.targets = targets

    def run(self, shell: Optional[InteractiveShell], writer: TextIO, manager: MetadataNodeManager) -> None:
        logger.debug("tree %s", self.targets)
        for target in self.targets:
            def show(info: Optional[MetadataNodeInfo], target: str = target) -> None:
                if info is None:
                    println(writer, f"tree: {target}: No such file or directory.")
                else:
                    print_node(info.node, ShellNodePrinter(writer))

            manager.visit(GlobVisitor(target, show))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TreeCommandHandler) and other.targets == self.targets
