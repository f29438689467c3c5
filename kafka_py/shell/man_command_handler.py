"""Port of shell/src/main/java/org/apache/kafka/shell/ManCommandHandler.java.

``man <command>``: the help of one command.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, TextIO

from kafka_py.shell.command_utils import complete_command
from kafka_py.shell.commands import Argument, Commands, Type, println

if TYPE_CHECKING:
    from kafka_py.shell.interactive_shell import InteractiveShell
    from kafka_py.shell.metadata_node_manager import MetadataNodeManager


class ManCommandType(Type):
    name = "man"
    description = "Show the help text for a specific command."
    shell_only = True
    arguments = (Argument("cmd", 1, "The command to get help text for."),)

    def create_handler(self, namespace: dict[str, Any]) -> ManCommandHandler:
        return ManCommandHandler(namespace["cmd"][0])

    def complete_next(self, node_manager: MetadataNodeManager, next_words: list[str]) -> list[str]:
        return complete_command(next_words[0]) if len(next_words) == 1 else []


class ManCommandHandler:
    TYPE = ManCommandType()

    def __init__(self, cmd: str) -> None:
        self.cmd = cmd

    def run(self, shell: Optional[InteractiveShell], writer: TextIO, manager: MetadataNodeManager) -> None:
        command_type = Commands.TYPES.get(self.cmd)
        if command_type is None:
            println(writer, f"man: unknown command {self.cmd}. Type help to get a list of commands.")
            return
        println(writer, f"{self.cmd}: {command_type.description}")
        println(writer)
        println(writer, command_type.help_text())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ManCommandHandler) and other.cmd == self.cmd
