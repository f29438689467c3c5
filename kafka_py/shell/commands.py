"""Port of shell/src/main/java/org/apache/kafka/shell/Commands.java, with
ErroneousCommandHandler.java and NoOpCommandHandler.java.

The shell's commands by name, and the parsing of one command line into the handler that
runs it. Kafka parses with argparse4j's sub-commands; the commands take only positional
arguments, so a small parser does the same here with argparse4j's answers: an unknown
command is ``invalid choice: 'x' (choose from 'cat', 'cd', ...)``, the unique prefix of a
command is ``invalid choice: 'l': did you mean 'ls'?`` (Kafka refuses abbreviations
after argparse4j has accepted them), ``-h``/``--help`` after a command prints its usage,
and a wrong number of arguments is ``too few arguments`` or ``unrecognized arguments:
'...'``. A command line that does not parse becomes an ErroneousCommandHandler, which
prints that message: the shell goes on.

Without the shell (a command on kafka-metadata-shell.sh's command line) only the commands
that make sense once are offered, as in Kafka: ``cat``, ``find``, ``ls`` and ``tree``;
``cd``, ``pwd``, ``history``, ``help``, ``man`` and ``exit`` are shell-only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Optional, Protocol, TextIO

if TYPE_CHECKING:
    from kafka_py.shell.interactive_shell import InteractiveShell
    from kafka_py.shell.metadata_node_manager import MetadataNodeManager


def println(writer: TextIO, text: str = "") -> None:
    writer.write(text + "\n")


class Handler(Protocol):
    """A parsed command, ready to run (Commands.Handler)."""

    def run(self, shell: Optional[InteractiveShell], writer: TextIO, manager: MetadataNodeManager) -> None:
        ...


@dataclass(frozen=True)
class Argument:
    """One positional argument: argparse4j's nargs (``?``, ``*``, ``+`` or 1) and its type."""

    name: str
    nargs: str | int
    help: str
    convert: Optional[Callable[[str], Any]] = None
    type_name: str = "String"

    def usage(self) -> str:
        if self.nargs == "?":
            return f"[{self.name}]"
        if self.nargs == "*":
            return f"[{self.name} [{self.name} ...]]"
        if self.nargs == "+":
            return f"{self.name} [{self.name} ...]"
        return self.name


class Type:
    """A kind of command: its name, help, whether only the shell offers it, its arguments
    (Commands.Type)."""

    name: ClassVar[str]
    description: ClassVar[str]
    shell_only: ClassVar[bool]
    arguments: ClassVar[tuple[Argument, ...]] = ()

    def create_handler(self, namespace: dict[str, Any]) -> Handler:
        raise NotImplementedError

    def complete_next(self, node_manager: MetadataNodeManager, next_words: list[str]) -> list[str]:
        """Completions of the last of ``next_words`` (the words after the command)."""
        return []

    def usage(self) -> str:
        return " ".join(["usage:", self.name, "[-h]"] + [a.usage() for a in self.arguments])

    def help_text(self) -> str:
        """What argparse4j's printHelp shows for the command's parser."""
        lines = [self.usage()]
        if self.arguments:
            lines += ["", "positional arguments:"]
            lines += [f"  {a.name:<22} {a.help}" for a in self.arguments]
        lines += ["", "named arguments:", f"  {'-h, --help':<22} show this help message and exit"]
        return "\n".join(lines)


class ArgumentParserException(Exception):
    """A command line that does not parse; its message is what the shell prints."""


class HelpScreenException(Exception):
    """``-h`` was given: the help has been printed, nothing else is to be done."""


def parse_arguments(command_type: Type, words: list[str], writer: Optional[TextIO]) -> dict[str, Any]:
    """The namespace of ``words`` (the words after the command) for ``command_type``."""
    positional: list[str] = []
    only_positional = False
    for word in words:
        if not only_positional and word == "--":
            only_positional = True
        elif not only_positional and word in ("-h", "--help"):
            if writer is not None:
                println(writer, command_type.help_text())
            raise HelpScreenException()
        elif not only_positional and word.startswith("-") and len(word) > 1 and not _is_number(word):
            raise ArgumentParserException(f"unrecognized arguments: '{word}'")
        else:
            positional.append(word)
    namespace: dict[str, Any] = {}
    for argument in command_type.arguments:
        nargs = argument.nargs
        if nargs == "?":
            taken = positional[:1]
        elif nargs in ("*", "+"):
            taken = list(positional)
        else:
            taken = positional[:int(nargs)]
        if (nargs == "+" and not taken) or (isinstance(nargs, int) and len(taken) < nargs):
            raise ArgumentParserException("too few arguments")
        positional = positional[len(taken):]
        values = []
        for value in taken:
            if argument.convert is not None:
                try:
                    value = argument.convert(value)
                except ValueError:
                    raise ArgumentParserException(
                        f"argument {argument.name}: could not convert '{value}' to {argument.type_name} "
                        f"(For input string: \"{value}\")") from None
            values.append(value)
        if nargs == "?":
            namespace[argument.name] = values[0] if values else None
        else:
            namespace[argument.name] = values
    if positional:
        raise ArgumentParserException(f"unrecognized arguments: '{' '.join(positional)}'")
    return namespace


def _is_number(word: str) -> bool:
    try:
        int(word)
        return True
    except ValueError:
        return False


class ErroneousCommandHandler:
    """A command line that did not parse: prints why."""

    def __init__(self, message: str) -> None:
        self.message = message

    def run(self, shell: Optional[InteractiveShell], writer: TextIO, manager: MetadataNodeManager) -> None:
        println(writer, self.message)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ErroneousCommandHandler) and other.message == self.message

    def __hash__(self) -> int:
        return hash(self.message)

    def __repr__(self) -> str:
        return f"ErroneousCommandHandler({self.message})"


class NoOpCommandHandler:
    """An empty line, or a help screen already printed: nothing to do."""

    def run(self, shell: Optional[InteractiveShell], writer: TextIO, manager: MetadataNodeManager) -> None:
        pass

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NoOpCommandHandler)

    def __hash__(self) -> int:
        return 0


def _all_types() -> dict[str, Type]:
    # Imported here: the handlers' modules import this one for Type and Argument.
    from kafka_py.shell.cat_command_handler import CatCommandHandler
    from kafka_py.shell.cd_command_handler import CdCommandHandler
    from kafka_py.shell.exit_command_handler import ExitCommandHandler
    from kafka_py.shell.find_command_handler import FindCommandHandler
    from kafka_py.shell.help_command_handler import HelpCommandHandler
    from kafka_py.shell.history_command_handler import HistoryCommandHandler
    from kafka_py.shell.ls_command_handler import LsCommandHandler
    from kafka_py.shell.man_command_handler import ManCommandHandler
    from kafka_py.shell.pwd_command_handler import PwdCommandHandler
    from kafka_py.shell.tree_command_handler import TreeCommandHandler

    types = [CatCommandHandler.TYPE, CdCommandHandler.TYPE, ExitCommandHandler.TYPE, FindCommandHandler.TYPE,
             HelpCommandHandler.TYPE, HistoryCommandHandler.TYPE, LsCommandHandler.TYPE,
             ManCommandHandler.TYPE, PwdCommandHandler.TYPE, TreeCommandHandler.TYPE]
    return {t.name: t for t in sorted(types, key=lambda t: t.name)}


class _TypesDescriptor:
    """Commands.TYPES, built on first use (the handler modules import this module)."""

    _types: Optional[dict[str, Type]] = None

    def __get__(self, obj: object, owner: type) -> dict[str, Type]:
        if _TypesDescriptor._types is None:
            _TypesDescriptor._types = _all_types()
        return _TypesDescriptor._types


class Commands:
    """The commands of the metadata shell (all, or only those offered outside the shell)."""

    TYPES = _TypesDescriptor()  # command name -> Type, in name order

    def __init__(self, add_shell_commands: bool) -> None:
        self.types = {name: t for name, t in self.TYPES.items() if add_shell_commands or not t.shell_only}

    def help_text(self) -> str:
        """argparse4j's help of the parser with one sub-command per command."""
        choices = "{" + ",".join(self.types) + "}"
        lines = [f"usage: {choices} ...", "", "positional arguments:", f"  {choices}"]
        lines += [f"    {name:<20} {t.description}" for name, t in self.types.items()]
        return "\n".join(lines)

    def parse_command(self, arguments: list[str], writer: Optional[TextIO] = None) -> Handler:
        """The handler of one command line, already split into words; never raises for bad
        input (an ErroneousCommandHandler says what is wrong). ``writer`` takes a
        command's ``-h`` help."""
        trimmed = list(arguments)
        while trimmed and not trimmed[-1]:
            trimmed.pop()
        if not trimmed:
            return NoOpCommandHandler()
        name = trimmed[0]
        command_type = self.types.get(name)
        if command_type is None:
            matches = [n for n in self.types if n.startswith(name)] if name else []
            if len(matches) == 1:
                return ErroneousCommandHandler(f"invalid choice: '{name}': did you mean '{matches[0]}'?")
            if len(matches) > 1:
                return ErroneousCommandHandler(f"ambiguous command: '{name}' could match {', '.join(matches)}")
            choices = ", ".join(f"'{n}'" for n in self.types)
            return ErroneousCommandHandler(f"invalid choice: '{name}' (choose from {choices})")
        try:
            namespace = parse_arguments(command_type, trimmed[1:], writer)
        except HelpScreenException:
            return NoOpCommandHandler()
        except ArgumentParserException as e:
            return ErroneousCommandHandler(str(e))
        return command_type.create_handler(namespace)
