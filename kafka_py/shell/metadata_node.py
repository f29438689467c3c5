"""Port of shell/src/main/java/org/apache/kafka/shell/MetadataNode.java (DirectoryNode,
FileNode), with NotDirectoryException.java and NotFileException.java.

The shell's tree: directories map names to children, kept in name order (Java's TreeMap,
so ``ls`` lists in order without sorting), and files hold text. A directory may be the
child of two parents: the topic directory is both ``/topics/<name>`` and
``/topicIds/<id>``, one object under two names, as MetadataNodeManager links it.
"""
from __future__ import annotations

import bisect
from typing import Iterator, Optional, Union


class NotDirectoryException(RuntimeError):
    """A path component that should be a directory is a file."""


class NotFileException(RuntimeError):
    """A name that should be a file is a directory."""


class DirectoryNode:
    """A directory: named children in name order."""

    def __init__(self) -> None:
        self._children: dict[str, MetadataNode] = {}
        self._names: list[str] = []  # sorted, so children() iterates as a TreeMap does

    def mkdirs(self, *names: str) -> DirectoryNode:
        """The directory at ``names`` below this one, created where missing."""
        if not names:
            raise RuntimeError("Invalid zero-length path")
        node = self
        for name in names:
            next_node = node._children.get(name)
            if next_node is None:
                next_node = DirectoryNode()
                node._put(name, next_node)
            elif not isinstance(next_node, DirectoryNode):
                raise NotDirectoryException()
            node = next_node
        return node

    def rmrf(self, *names: str) -> None:
        """Remove the node at ``names`` (and all below it); nothing if the last is missing."""
        if not names:
            raise RuntimeError("Invalid zero-length path")
        node = self
        for name in names[:-1]:
            next_node = node._children.get(name)
            if not isinstance(next_node, DirectoryNode):
                raise RuntimeError("Unable to locate directory /" + "/".join(names))
            node = next_node
        node._remove(names[-1])

    def create(self, name: str) -> FileNode:
        """The file ``name`` of this directory, created empty if missing."""
        node = self._children.get(name)
        if node is None:
            node = FileNode()
            self._put(name, node)
        elif not isinstance(node, FileNode):
            raise NotFileException()
        return node

    def child(self, component: str) -> Optional[MetadataNode]:
        return self._children.get(component)

    def children(self) -> Iterator[tuple[str, MetadataNode]]:
        """(name, node) in name order."""
        return ((name, self._children[name]) for name in list(self._names))

    def child_names(self) -> list[str]:
        return list(self._names)

    def ceiling_names(self, prefix: str) -> Iterator[str]:
        """Names from ``prefix`` on (TreeMap.ceilingEntry then higherEntry), for completion."""
        start = bisect.bisect_left(self._names, prefix)
        return iter(self._names[start:])

    def add_child(self, name: str, child: DirectoryNode) -> None:
        self._put(name, child)

    def directory(self, *names: str) -> DirectoryNode:
        if not names:
            raise RuntimeError("Invalid zero-length path")
        node = self
        for name in names:
            next_node = node._children.get(name)
            if not isinstance(next_node, DirectoryNode):
                raise RuntimeError("Unable to locate directory /" + "/".join(names))
            node = next_node
        return node

    def file(self, *names: str) -> FileNode:
        if not names:
            raise RuntimeError("Invalid zero-length path")
        node = self
        for name in names[:-1]:
            next_node = node._children.get(name)
            if not isinstance(next_node, DirectoryNode):
                raise RuntimeError("Unable to locate file /" + "/".join(names))
            node = next_node
        last = node._children.get(names[-1])
        if not isinstance(last, FileNode):
            raise RuntimeError("Unable to locate file /" + "/".join(names))
        return last

    def _put(self, name: str, node: MetadataNode) -> None:
        if name not in self._children:
            bisect.insort(self._names, name)
        self._children[name] = node

    def _remove(self, name: str) -> None:
        if self._children.pop(name, None) is not None:
            self._names.remove(name)


class FileNode:
    """A file: its text (None until set)."""

    def __init__(self) -> None:
        self._contents: Optional[str] = None

    def set_contents(self, contents: str) -> None:
        self._contents = contents

    def contents(self) -> Optional[str]:
        return self._contents


MetadataNode = Union[DirectoryNode, FileNode]
