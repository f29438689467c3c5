"""Port of shell/src/main/java/org/apache/kafka/shell/ExitCommandHandler.java.

``exit``: leave the shell, status 0 (Kafka's Exit.exit(0); here SystemExit, so the
shell's ``finally`` blocks still close what it opened).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, TextIO

from kafka_py.shell.commands import Type

if TYPE_CHECKING:
    from kafka_py.shell.interactive_shell import InteractiveShell
    from kafka_py.shell.metadata_node_manager import MetadataNodeManager


class ExitCommandType(Type):
    name = "exit"
    description = "Exit the metadata shell."
    shell_only = True

    def create_handler(self, namespace: dict[str, Any]) -> ExitCommandHandler:
        return ExitCommandHandler()


class ExitCommandHandler:
    TYPE = ExitCommandType()

    def run(self, shell: Optional[InteractiveShell], writer: TextIO, manager: MetadataNodeManager) -> None:
        writer.flush()
        raise SystemExit(0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExitCommandHandler)

    def __hash__(self) -> int:
        return 0
