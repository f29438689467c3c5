"""Port of metadata/src/main/java/org/apache/kafka/metalog/MetaLogListener.java.

What a MetaLogManager tells the component that registered with it. The calls come from
the manager's own thread, so a listener hands them to its own thread (the quorum
controller queues an event for each).
"""
from __future__ import annotations

from typing import Sequence

from kafka_py.metadata.api_message_and_version import ApiMessage
from kafka_py.metadata.metalog.meta_log_leader import MetaLogLeader


class MetaLogListener:
    def handle_commits(self, last_offset: int, messages: Sequence[ApiMessage]) -> None:
        """``messages`` are committed; ``last_offset`` is the offset of the last one."""
        raise NotImplementedError

    def handle_new_leader(self, leader: MetaLogLeader) -> None:
        """A leader (possibly this node) has been elected for ``leader.epoch``."""

    def handle_renounce(self, epoch: int) -> None:
        """This node's leadership of ``epoch`` has ended."""

    def begin_shutdown(self) -> None:
        """The manager has shut down; the listener may shut down too."""
