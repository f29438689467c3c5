"""Port of shell/src/main/java/org/apache/kafka/shell/InteractiveShell.java.

The shell's loop: print the prompt ``>> ``, read a line, split it into words as a shell
would (quotes group words), run the command, until end of input (Ctrl-D) or ``exit``.
Ctrl-C abandons the line being typed (``^C``) and the shell goes on. Kafka reads lines
with JLine; here, on a terminal, Python's ``readline`` gives the line editing, the
history (up arrow) and tab completion of command names and paths (MetadataShellCompleter);
from a pipe the lines are read as they come, which is how scripts and tests drive it.
"""
from __future__ import annotations

import shlex
import shutil
import sys
from typing import TYPE_CHECKING, Iterator, Optional, TextIO

from kafka_py.shell.command_utils import complete_command
from kafka_py.shell.commands import Commands, println

if TYPE_CHECKING:
    from kafka_py.shell.metadata_node_manager import MetadataNodeManager

PROMPT = ">> "


class MetadataShellCompleter:
    """Completes the command name, then the command's own arguments (Type.complete_next)."""

    def __init__(self, node_manager: MetadataNodeManager) -> None:
        self.node_manager = node_manager

    def complete(self, words: list[str]) -> list[str]:
        if len(words) <= 1:
            return complete_command(words[0] if words else "")
        command_type = Commands.TYPES.get(words[0])
        if command_type is None:
            return []
        return command_type.complete_next(self.node_manager, words[1:])


class InteractiveShell:
    def __init__(self, node_manager: MetadataNodeManager, stdin: Optional[TextIO] = None,
                 stdout: Optional[TextIO] = None) -> None:
        self.node_manager = node_manager
        self.stdin = stdin if stdin is not None else sys.stdin
        self.stdout = stdout if stdout is not None else sys.stdout
        self.completer = MetadataShellCompleter(node_manager)
        self._history: list[str] = []
        self._terminal = _is_tty(self.stdin) and _is_tty(self.stdout)
        self._readline = self._setup_readline() if self._terminal else None
        self._matches: list[str] = []

    def _setup_readline(self):
        try:
            import readline
        except ImportError:  # a Python built without it: plain input() still works
            return None
        readline.set_completer(self._readline_complete)
        readline.set_completer_delims(" \t\n")
        readline.parse_and_bind("tab: complete")
        return readline

    def _readline_complete(self, text: str, state: int) -> Optional[str]:
        if state == 0:
            line = self._readline.get_line_buffer()[: self._readline.get_endidx()]
            words = line.split()
            if line.endswith((" ", "\t")) or not words:
                words.append("")
            try:
                self._matches = self.completer.complete(words)
            except Exception:  # completion must never break the line being typed
                self._matches = []
        return self._matches[state] if state < len(self._matches) else None

    def run_main_loop(self) -> None:
        println(self.stdout, "[ Kafka Metadata Shell ]")
        self.stdout.flush()
        commands = Commands(True)
        while True:
            try:
                line = self._read_line()
            except KeyboardInterrupt:
                println(self.stdout, "^C")
                continue
            except EOFError:
                if self._terminal:
                    println(self.stdout)
                return
            if line.strip():
                self._history.append(line)
            try:
                words = shlex.split(line)
            except ValueError as e:
                println(self.stdout, f"Unable to parse command: {e}")
                continue
            handler = commands.parse_command(words, self.stdout)
            try:
                handler.run(self, self.stdout, self.node_manager)
            except (SystemExit, KeyboardInterrupt):
                raise
            except Exception as e:  # one failing command must not end the shell
                println(self.stdout, f"{type(e).__name__}: {e}")
            self.stdout.flush()

    def _read_line(self) -> str:
        if self._terminal and self.stdin is sys.stdin and self.stdout is sys.stdout:
            return input(PROMPT)  # readline's editing, history and completion
        self.stdout.write(PROMPT)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")

    def screen_width(self) -> Optional[int]:
        """The terminal's width, or None (one name a line) when not on a terminal."""
        return shutil.get_terminal_size().columns if self._terminal else None

    def history(self, num_entries_to_show: int) -> Iterator[tuple[int, str]]:
        """The last ``num_entries_to_show`` lines with their numbers (from 0)."""
        count = max(0, min(num_entries_to_show, len(self._history)))
        first = len(self._history) - count
        return ((i, self._history[i]) for i in range(first, len(self._history)))

    def close(self) -> None:
        self.stdout.flush()


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
