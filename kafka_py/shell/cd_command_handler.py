"""Port of shell/src/main/java/org/apache/kafka/shell/CdCommandHandler.java.

``cd [path]``: change the working directory (``/`` without a path).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, TextIO

from kafka_py.shell.command_utils import complete_path
from kafka_py.shell.commands import Argument, Type, println
from kafka_py.shell.glob_visitor import GlobVisitor, MetadataNodeInfo
from kafka_py.shell.metadata_node import DirectoryNode

if TYPE_CHECKING:
    from kafka_py.shell.interactive_shell import InteractiveShell
    from kafka_py.shell.metadata_node_manager import Data, MetadataNodeManager


class CdCommandType(Type):
    name = "cd"
    description = "Set the current working directory."
    shell_only = True
    arguments = (Argument("target", "?", "The directory to change to."),)

    def create_handler(self, namespace: dict[str, Any]) -> CdCommandHandler:
        return CdCommandHandler(namespace["target"])

    def complete_next(self, node_manager: MetadataNodeManager, next_words: list[str]) -> list[str]:
        return complete_path(node_manager, next_words[0]) if len(next_words) == 1 else []


class CdCommandHandler:
    TYPE = CdCommandType()

    def __init__(self, target: Optional[str]) -> None:
        self.target = target

    def run(self, shell: Optional[InteractiveShell], writer: TextIO, manager: MetadataNodeManager) -> None:
        effective_target = self.target if self.target is not None else "/"

        def visit(data: Data) -> None:
            def change(info: Optional[MetadataNodeInfo]) -> None:
                if info is None:
                    println(writer, f"cd: {effective_target}: no such directory.")
                elif not isinstance(info.node, DirectoryNode):
                    println(writer, f"cd: {effective_target}: not a directory.")
                else:
                    data.working_directory = info.absolute_path()

            GlobVisitor(effective_target, change)(data)

        manager.visit(visit)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CdCommandHandler) and other.target == self.target
