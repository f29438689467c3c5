"""Port of shell/src/main/java/org/apache/kafka/shell/HelpCommandHandler.java.

``help``: the list of commands.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, TextIO

from kafka_py.shell.commands import Commands, Type, println

if TYPE_CHECKING:
    from kafka_py.shell.interactive_shell import InteractiveShell
    from kafka_py.shell.metadata_node_manager import MetadataNodeManager


class HelpCommandType(Type):
    name = "help"
    description = "Display this help message."
    shell_only = True

    def create_handler(self, namespace: dict[str, Any]) -> HelpCommandHandler:
        return HelpCommandHandler()


class HelpCommandHandler:
    TYPE = HelpCommandType()

    def run(self, shell: Optional[InteractiveShell], writer: TextIO, manager: MetadataNodeManager) -> None:
        println(writer, "Welcome to the Apache Kafka metadata shell.")
        println(writer)
        println(writer, Commands(True).help_text())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HelpCommandHandler)

    def __hash__(self) -> int:
        return 0
