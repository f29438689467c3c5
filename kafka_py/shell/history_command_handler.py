"""Port of shell/src/main/java/org/apache/kafka/shell/HistoryCommandHandler.java.

``history [n]``: the last n command lines of this shell (all without n), numbered from 0.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, TextIO

from kafka_py.shell.commands import Argument, Type, println

if TYPE_CHECKING:
    from kafka_py.shell.interactive_shell import InteractiveShell
    from kafka_py.shell.metadata_node_manager import MetadataNodeManager

INTEGER_MAX_VALUE = 2**31 - 1


class HistoryCommandType(Type):
    name = "history"
    description = "Print command history."
    shell_only = True
    arguments = (Argument("numEntriesToShow", "?", "The number of entries to show.", int, "Integer"),)

    def create_handler(self, namespace: dict[str, Any]) -> HistoryCommandHandler:
        count = namespace["numEntriesToShow"]
        return HistoryCommandHandler(INTEGER_MAX_VALUE if count is None else count)


class HistoryCommandHandler:
    TYPE = HistoryCommandType()

    def __init__(self, num_entries_to_show: int) -> None:
        self.num_entries_to_show = num_entries_to_show

    def run(self, shell: Optional[InteractiveShell], writer: TextIO, manager: MetadataNodeManager) -> None:
        if shell is None:
            raise RuntimeError("The history command requires a shell.")
        for index, line in shell.history(self.num_entries_to_show):
            println(writer, f"{index:5d}  {line}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HistoryCommandHandler) and other.num_entries_to_show == self.num_entries_to_show

    def __hash__(self) -> int:
        return self.num_entries_to_show
