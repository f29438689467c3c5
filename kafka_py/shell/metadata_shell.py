"""Port of shell/src/main/java/org/apache/kafka/shell/MetadataShell.java
(``bin/kafka-metadata-shell.sh``).

    bin/kafka-metadata-shell.sh --snapshot /tmp/kraft-combined-logs/@metadata-0 ls /topics
    bin/kafka-metadata-shell.sh --snapshot /tmp/kraft-combined-logs/@metadata-0

Reads the metadata given with ``--snapshot`` (a segment of the metadata log, a snapshot
``.checkpoint``, or the ``@metadata-0`` directory: SnapshotFileReader) into the tree
(MetadataNodeManager), then runs the command given after the options and exits, or, with
no command, an interactive shell on stdin (``Loading...``, ``Starting...``, then the
``>> `` prompt). It reads files only: no broker or controller needs to run, and it is safe
on a stopped node's directory (it never writes there).

Errors end the tool with exit status 1, as in Kafka: a path it cannot read is ``Error:
...``, anything else ``Unexpected error: ...``. A command's own errors (no such node, an
unknown command) are printed and are not failures, as in Kafka.
"""
from __future__ import annotations

import logging
import sys
from typing import Optional

import click

from kafka_py.shell.commands import Commands
from kafka_py.shell.interactive_shell import InteractiveShell
from kafka_py.shell.metadata_node_manager import MetadataNodeManager
from kafka_py.shell.snapshot_file_reader import SnapshotFileReader, SnapshotReaderError
from kafka_py.core.utils.command_line_utils import run_tool

logger = logging.getLogger(__name__)


class TerseFailure(Exception):
    """An error the user can fix, printed as ``Error: <message>`` without a stack trace."""


class MetadataShell:
    """The metadata shell over one metadata log or snapshot."""

    class Builder:
        def __init__(self) -> None:
            self.snapshot_path: Optional[str] = None

        def set_snapshot_path(self, snapshot_path: Optional[str]) -> MetadataShell.Builder:
            self.snapshot_path = snapshot_path
            return self

        def build(self) -> MetadataShell:
            if self.snapshot_path is None:
                raise RuntimeError("You must supply the log path via --snapshot")
            node_manager = MetadataNodeManager()
            try:
                reader = SnapshotFileReader(self.snapshot_path, node_manager.log_listener())
            except SnapshotReaderError as e:
                node_manager.close()
                raise TerseFailure(str(e)) from None
            return MetadataShell(reader, node_manager)

    def __init__(self, snapshot_file_reader: SnapshotFileReader, node_manager: MetadataNodeManager) -> None:
        self.snapshot_file_reader = snapshot_file_reader
        self.node_manager = node_manager

    def run(self, args: list[str], stdin=None, stdout=None) -> None:
        stdout = stdout if stdout is not None else sys.stdout
        self.node_manager.setup()
        if not args:
            print("Loading...", file=stdout, flush=True)
            self.wait_until_caught_up()
            print("Starting...", file=stdout, flush=True)
            shell = InteractiveShell(self.node_manager, stdin, stdout)
            try:
                shell.run_main_loop()
            finally:
                shell.close()
        else:
            self.wait_until_caught_up()
            handler = Commands(False).parse_command(list(args), stdout)
            handler.run(None, stdout, self.node_manager)
            stdout.flush()

    def wait_until_caught_up(self) -> None:
        try:
            self.snapshot_file_reader.startup()
        except SnapshotReaderError as e:
            raise TerseFailure(str(e)) from None

    def close(self) -> None:
        self.snapshot_file_reader.close()
        self.node_manager.close()


@click.command(
    name="kafka-metadata-shell",
    help="The Apache Kafka metadata tool: browse a KRaft cluster's metadata log (or snapshot) as a tree. "
         "Runs COMMAND (ls, cat, find, tree) and exits, or without one an interactive shell.",
    context_settings={"help_option_names": ["-h", "--help"], "ignore_unknown_options": True,
                      "allow_interspersed_args": False},
)
@click.option("--snapshot", "-s", "snapshot", metavar="SNAPSHOT",
              help="The snapshot file to read: a metadata log segment (@metadata-0/*.log), a snapshot "
                   "(*.checkpoint), or the @metadata-0 directory.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def main(snapshot: Optional[str], command: tuple[str, ...]) -> None:
    status = 0
    try:
        shell = MetadataShell.Builder().set_snapshot_path(snapshot).build()
        try:
            shell.run(list(command))
        finally:
            shell.close()
    except TerseFailure as e:
        click.echo(f"Error: {e}", err=True)
        status = 1
    except (SystemExit, KeyboardInterrupt, BrokenPipeError):
        raise
    except Exception as e:
        logger.debug("the metadata shell failed", exc_info=True)
        click.echo(f"Unexpected error: {e}", err=True)
        status = 1
    if status:
        click.get_current_context().exit(status)


if __name__ == "__main__":
    run_tool(main, "kafka-metadata-shell.sh")
