"""Port of shell/src/main/java/org/apache/kafka/shell/GlobVisitor.java.

Resolves a path (relative to the working directory, with ``.`` and ``..``, each component
possibly a glob) against the tree and calls the handler once per node it names, in name
order, or once with None when it names nothing, which is how every command tells "no such
file" apart.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from kafka_py.shell.command_utils import split_path, strip_dot_path_components
from kafka_py.shell.glob_component import GlobComponent
from kafka_py.shell.metadata_node import DirectoryNode, MetadataNode


@dataclass(frozen=True)
class MetadataNodeInfo:
    path: tuple[str, ...]
    node: MetadataNode

    def last_path_component(self) -> str:
        return self.path[-1] if self.path else "/"

    def absolute_path(self) -> str:
        return "/" + "/".join(self.path)


class GlobVisitor:
    def __init__(self, glob: str, handler: Callable[[Optional[MetadataNodeInfo]], None]) -> None:
        self.glob = glob
        self.handler = handler

    def __call__(self, data) -> None:
        """Visit ``data`` (MetadataNodeManager.Data): Kafka's accept."""
        full_glob = self.glob if self.glob.startswith("/") else data.working_directory + "/" + self.glob
        components = strip_dot_path_components(split_path(full_glob))
        if not self._accept(components, 0, data.root, ()):
            self.handler(None)

    def _accept(self, components: list[str], index: int, node: MetadataNode,
                path: tuple[str, ...]) -> bool:
        if index >= len(components):
            self.handler(MetadataNodeInfo(path, node))
            return True
        glob_component = GlobComponent(components[index])
        if not isinstance(node, DirectoryNode):
            return False
        if glob_component.literal():
            child = node.child(glob_component.component())
            if child is None:
                return False
            return self._accept(components, index + 1, child, path + (glob_component.component(),))
        matched_any = False
        for name, child in node.children():
            if glob_component.matches(name):
                if self._accept(components, index + 1, child, path + (name,)):
                    matched_any = True
        return matched_any
