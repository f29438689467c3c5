"""Port of shell/src/main/java/org/apache/kafka/shell/CatCommandHandler.java.

``cat <path>...``: the contents of each file a path (or glob) names.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Optional, TextIO

from kafka_py.shell.command_utils import complete_path
from kafka_py.shell.commands import Argument, Type, println
from kafka_py.shell.glob_visitor import GlobVisitor, MetadataNodeInfo
from kafka_py.shell.metadata_node import DirectoryNode, FileNode

if TYPE_CHECKING:
    from kafka_py.shell.interactive_shell import InteractiveShell
    from kafka_py.shell.metadata_node_manager import MetadataNodeManager

logger = logging.getLogger(__name__)


class CatCommandType(Type):
    name = "cat"
    description = "Show the contents of metadata nodes."
    shell_only = False
    arguments = (Argument("targets", "+", "The metadata nodes to display."),)

    def create_handler(self, namespace: dict[str, Any]) -> CatCommandHandler:
        return CatCommandHandler(namespace["targets"])

    def complete_next(self, node_manager: MetadataNodeManager, next_words: list[str]) -> list[str]:
        return complete_path(node_manager, next_words[-1])


class CatCommandHandler:
    TYPE = CatCommandType()

    def __init__(self, targets: list[str]) -> None:
        self.targets = targets

    def run(self, shell: Optional[InteractiveShell], writer: TextIO, manager: MetadataNodeManager) -> None:
        logger.debug("cat %s", self.targets)
        for target in self.targets:
            def show(info: Optional[MetadataNodeInfo], target: str = target) -> None:
                if info is None:
                    println(writer, f"cat: {target}: No such file or directory.")
                elif isinstance(info.node, DirectoryNode):
                    println(writer, f"cat: {target}: Is a directory")
                elif isinstance(info.node, FileNode):
                    println(writer, str(info.node.contents()))

            manager.visit(GlobVisitor(target, show))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CatCommandHandler) and other.targets == self.targets
