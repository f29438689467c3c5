"""Port of shell/src/main/java/org/apache/kafka/shell/LsCommandHandler.java.

``ls [path]...``: the files named, then each directory's children (headed by the
directory's name when there is more than one thing to list). In the shell on a terminal
the names fill columns as wide as the screen allows, down then across, as ``ls`` does;
otherwise one name a line.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, TextIO

from kafka_py.shell.command_utils import complete_path, get_effective_paths
from kafka_py.shell.commands import Argument, Type, println
from kafka_py.shell.glob_visitor import GlobVisitor, MetadataNodeInfo
from kafka_py.shell.metadata_node import DirectoryNode, FileNode

if TYPE_CHECKING:
    from kafka_py.shell.interactive_shell import InteractiveShell
    from kafka_py.shell.metadata_node_manager import MetadataNodeManager

logger = logging.getLogger(__name__)


class LsCommandType(Type):
    name = "ls"
    description = "List metadata nodes."
    shell_only = False
    arguments = (Argument("targets", "*", "The metadata node paths to list."),)

    def create_handler(self, namespace: dict[str, Any]) -> LsCommandHandler:
        return LsCommandHandler(namespace["targets"])

    def complete_next(self, node_manager: MetadataNodeManager, next_words: list[str]) -> list[str]:
        return complete_path(node_manager, next_words[-1])


@dataclass
class TargetDirectory:
    name: str
    children: list[str]


class LsCommandHandler:
    TYPE = LsCommandType()

    def __init__(self, targets: list[str]) -> None:
        self.targets = targets

    def run(self, shell: Optional[InteractiveShell], writer: TextIO, manager: MetadataNodeManager) -> None:
        target_files: list[str] = []
        target_directories: list[TargetDirectory] = []
        for target in get_effective_paths(self.targets):
            def visit(info: Optional[MetadataNodeInfo], target: str = target) -> None:
                if info is None:
                    println(writer, f"ls: {target}: no such file or directory.")
                elif isinstance(info.node, DirectoryNode):
                    target_directories.append(TargetDirectory(info.last_path_component(), info.node.child_names()))
                elif isinstance(info.node, FileNode):
                    target_files.append(info.last_path_component())

            manager.visit(GlobVisitor(target, visit))
        screen_width = shell.screen_width() if shell is not None else None
        logger.debug("LS : targetFiles = %s, targetDirectories = %s, screenWidth = %s",
                     target_files, target_directories, screen_width)
        print_targets(writer, screen_width, target_files, target_directories)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LsCommandHandler) and other.targets == self.targets


def print_targets(writer: TextIO, screen_width: Optional[int], target_files: list[str],
                  target_directories: list[TargetDirectory]) -> None:
    print_entries(writer, "", screen_width, target_files)
    need_intro = bool(target_files) or len(target_directories) > 1
    first_intro = not target_files
    for directory in target_directories:
        intro = ""
        if need_intro:
            if not first_intro:
                intro += "\n"
            intro += directory.name + ":"
            first_intro = False
        print_entries(writer, intro, screen_width, directory.children)


def print_entries(writer: TextIO, intro: str, screen_width: Optional[int], entries: list[str]) -> None:
    if not entries:
        return
    if intro:
        println(writer, intro)
    schema = calculate_column_schema(screen_width, entries)
    num_columns = schema.num_columns()
    num_lines = (len(entries) + num_columns - 1) // num_columns
    for line in range(num_lines):
        output = []
        for column in range(num_columns):
            index = line + column * schema.entries_per_column
            if index < len(entries):
                entry = entries[index]
                output.append(entry)
                if column < num_columns - 1:
                    output.append(" " * (schema.column_width(column) - len(entry)))
        println(writer, "".join(output))


class ColumnSchema:
    """How many columns, how many entries each, and how wide each is."""

    def __init__(self, num_columns: int, entries_per_column: int) -> None:
        self.column_widths = [0] * num_columns
        self.entries_per_column = entries_per_column

    def set_column_widths(self, *widths: int) -> ColumnSchema:
        for i, width in enumerate(widths):
            self.column_widths[i] = width
        return self

    def process(self, entry_index: int, output: str) -> None:
        column_index = entry_index // self.entries_per_column
        self.column_widths[column_index] = max(self.column_widths[column_index], len(output) + 2)

    def total_width(self) -> int:
        return sum(self.column_widths)

    def num_columns(self) -> int:
        return len(self.column_widths)

    def column_width(self, column_index: int) -> int:
        return self.column_widths[column_index]

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ColumnSchema) and other.column_widths == self.column_widths
                and other.entries_per_column == self.entries_per_column)

    def __repr__(self) -> str:
        return (f"ColumnSchema(columnWidths=[{', '.join(map(str, self.column_widths))}], "
                f"entriesPerColumn={self.entries_per_column})")


def calculate_column_schema(screen_width: Optional[int], entries: list[str]) -> ColumnSchema:
    """The most columns whose widths (each its longest entry plus two) fit the screen and
    whose last column is not empty; one column without a screen."""
    if screen_width is None:
        return ColumnSchema(1, len(entries))
    max_columns = screen_width // 4
    if max_columns <= 1:
        return ColumnSchema(1, len(entries))
    schemas = [ColumnSchema(n, (len(entries) + n - 1) // n) for n in range(1, max_columns + 1)]
    for i, entry in enumerate(entries):
        for schema in schemas:
            schema.process(i, entry)
    for schema in reversed(schemas[1:]):
        if schema.column_widths[-1] != 0 and schema.total_width() <= screen_width:
            return schema
    return schemas[0]
