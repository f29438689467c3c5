"""Port of shell/src/main/java/org/apache/kafka/shell/PwdCommandHandler.java.

``pwd``: the working directory.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, TextIO

from kafka_py.shell.commands import Type, println

if TYPE_CHECKING:
    from kafka_py.shell.interactive_shell import InteractiveShell
    from kafka_py.shell.metadata_node_manager import MetadataNodeManager


class PwdCommandType(Type):
    name = "pwd"
    description = "Print the current working directory."
    shell_only = True

    def create_handler(self, namespace: dict[str, Any]) -> PwdCommandHandler:
        return PwdCommandHandler()


class PwdCommandHandler:
    TYPE = PwdCommandType()

    def run(self, shell: Optional[InteractiveShell], writer: TextIO, manager: MetadataNodeManager) -> None:
        manager.visit(lambda data: println(writer, data.working_directory))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PwdCommandHandler)

    def __hash__(self) -> int:
        return 0
