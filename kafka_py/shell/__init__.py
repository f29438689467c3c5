"""Port of Kafka 2.8.2's shell/ module (shell/src/main/java/org/apache/kafka/shell/): the
metadata shell, ``bin/kafka-metadata-shell.sh``.

It replays a KRaft metadata log (or snapshot) into a tree of directories and files
(MetadataNodeManager) and lets the operator walk it with ``ls``, ``cd``, ``cat``,
``find``, ``tree`` and the rest (Commands and its handlers), one command given on the
command line or an interactive shell (InteractiveShell). Entry point: metadata_shell.py.
"""
