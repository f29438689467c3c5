"""The kazoo handler the broker's ZooKeeper client runs on (no Kafka counterpart: Kafka
uses ZooKeeper's own Java client).

kazoo's threading handler waits for its connection's socket through
``kazoo.handlers.utils.selector_select``, which builds a new selector for every wait. Its
default selector is epoll, whose instance costs a descriptor and three more system calls
(create, register, close) each time, and the connection thread waits once per read or
write: a controller reading 10,000 partition states after a restart waits tens of
thousands of times. A poll(2) selector, built per wait the same way, takes no descriptor
and one system call, and, like epoll, has no limit on descriptor numbers (a broker with
thousands of segments has its sockets above 1023).
"""
from __future__ import annotations

import selectors
import types
from typing import Any

from kazoo.handlers.threading import SequentialThreadingHandler
from kazoo.handlers.utils import selector_select

_POLL_SELECTORS = types.SimpleNamespace(EVENT_READ=selectors.EVENT_READ, EVENT_WRITE=selectors.EVENT_WRITE,
                                        DefaultSelector=selectors.PollSelector)


class PollingThreadingHandler(SequentialThreadingHandler):
    """kazoo's SequentialThreadingHandler, waiting with a poll(2) selector."""

    def select(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("selectors_module", _POLL_SELECTORS)
        return selector_select(*args, **kwargs)
