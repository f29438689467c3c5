"""Port of core/src/main/scala/kafka/utils/Logging.scala: the ``logIdent`` prefix of a class's log lines.

Kafka's classes mix in ``Logging`` and set ``logIdent`` (``"[ReplicaManager broker=0] "``)
once; every message they log starts with it. Here an object keeps one
:class:`IdentLogger` in ``self.logger``, wrapping its module's logger (so the logger's
name, which the logging config and ``(%(name)s)`` in each line use, is the module's as
before), and logs ``self.logger.info("Shrinking ISR from %s to %s", old, new)``.

The ident is an attribute: an object whose ident changes (a broker that learns its id,
a controller's epoch) assigns ``self.logger.ident``.

Nothing is formatted for a level that is off: each method asks the wrapped logger's
``isEnabledFor`` first, and the message stays a %-style format with its arguments, the
ident travelling as the first argument (``"%s" + msg``, ``(ident, *args)``), exactly the
record a ``logger.info("%s...", ident, ...)`` call made. A message without arguments is
not %-formatted, as with a plain logger.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

TRACE = 5  # log4j's TRACE, below Python's DEBUG (logging_setup names the level)

_DEBUG = logging.DEBUG
_INFO = logging.INFO
_WARNING = logging.WARNING
_ERROR = logging.ERROR
_CRITICAL = logging.CRITICAL


class IdentLogger(logging.LoggerAdapter):
    """A logger whose messages start with ``ident`` (Kafka's ``logIdent``).

    Records carry the caller's file, function and line (``stacklevel`` skips this
    class's frame)."""

    def __init__(self, logger: logging.Logger | str, ident: str = "") -> None:
        if isinstance(logger, str):
            logger = logging.getLogger(logger)
        super().__init__(logger, None)
        self.ident = ident

    def _emit(self, level: int, msg: Any, args: tuple, kwargs: dict[str, Any]) -> None:
        # called only once the level is known to be enabled
        kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 2
        msg = msg if isinstance(msg, str) else str(msg)
        if not args:
            # as with a plain logger, a message without arguments is not %-formatted
            self.logger.log(level, self.ident + msg, **kwargs)
        elif len(args) == 1 and isinstance(args[0], Mapping) and args[0]:
            # "%(key)s" formatting from one mapping, as logging does it
            self.logger.log(level, self.ident.replace("%", "%%") + msg, *args, **kwargs)
        else:
            self.logger.log(level, "%s" + msg, self.ident, *args, **kwargs)

    def debug(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        if self.logger.isEnabledFor(_DEBUG):
            self._emit(_DEBUG, msg, args, kwargs)

    def info(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        if self.logger.isEnabledFor(_INFO):
            self._emit(_INFO, msg, args, kwargs)

    def warning(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        if self.logger.isEnabledFor(_WARNING):
            self._emit(_WARNING, msg, args, kwargs)

    def error(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        if self.logger.isEnabledFor(_ERROR):
            self._emit(_ERROR, msg, args, kwargs)

    def exception(self, msg: Any, *args: Any, exc_info: Any = True, **kwargs: Any) -> None:
        if self.logger.isEnabledFor(_ERROR):
            kwargs["exc_info"] = exc_info
            self._emit(_ERROR, msg, args, kwargs)

    def critical(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        if self.logger.isEnabledFor(_CRITICAL):
            self._emit(_CRITICAL, msg, args, kwargs)

    fatal = critical

    def log(self, level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
        if self.logger.isEnabledFor(level):
            self._emit(level, msg, args, kwargs)

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        return self.ident + str(msg), kwargs

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.logger.name} ident={self.ident!r}>"
