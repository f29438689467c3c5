"""Port of shell/src/main/java/org/apache/kafka/shell/CommandUtils.java.

Path helpers shared by the commands (split a path, resolve ``.`` and ``..``, the
working directory when no path is given) and the tab completion of command names and
paths.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_py.shell.metadata_node import DirectoryNode

if TYPE_CHECKING:
    from kafka_py.shell.metadata_node_manager import MetadataNodeManager


def get_effective_paths(paths: list[str]) -> list[str]:
    """The paths without empty ones; the working directory (``.``) when none is left."""
    effective = [p for p in paths if p]
    return effective or ["."]


def complete_command(command_prefix: str) -> list[str]:
    """The command names starting with ``command_prefix``, in order."""
    from kafka_py.shell.commands import Commands

    return [name for name in Commands.TYPES if name.startswith(command_prefix)]


def split_path(path: str) -> list[str]:
    """A path's components; repeated and trailing slashes count as one or none."""
    return [c for c in path.split("/") if c]


def strip_dot_path_components(components: list[str]) -> list[str]:
    output: list[str] = []
    for component in components:
        if component == "..":
            if output:
                output.pop()
        elif component != ".":
            output.append(component)
    return output


def complete_path(node_manager: MetadataNodeManager, path_prefix: str) -> list[str]:
    """The completions of a path prefix: each child of the prefix's directory whose name
    starts with its last component, with the prefix's leading part kept; a directory's
    completion ends with ``/`` (so the next tab goes on inside it)."""
    candidates: list[str] = []

    def visit(data) -> None:
        absolute = path_prefix if path_prefix.startswith("/") else data.working_directory + "/" + path_prefix
        components = strip_dot_path_components(split_path(absolute))
        directory = data.root
        num_directories = len(components) if path_prefix.endswith("/") else len(components) - 1
        for i in range(max(num_directories, 0)):
            node = directory.child(components[i])
            if not isinstance(node, DirectoryNode):
                return
            directory = node
        last_component = ""
        if 0 <= num_directories < len(components):
            last_component = components[num_directories]
        last_slash = path_prefix.rfind("/")
        effective_prefix = "" if last_slash < 0 else path_prefix[:last_slash + 1]
        for name in directory.ceiling_names(last_component):
            if not name.startswith(last_component):
                break
            suffix = "/" if isinstance(directory.child(name), DirectoryNode) else ""
            candidates.append(effective_prefix + name + suffix)

    node_manager.visit(visit)
    return candidates
