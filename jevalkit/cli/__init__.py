"""The ``jevalkit`` command: a thin layer over the Python API, one module per command group.

Every user mistake ends as one line on stderr and exit code 2; no traceback. That covers
argument errors (argparse's usage block is replaced by one line naming the command and the
``--help`` to read) and every :class:`~jevalkit.errors.JevalkitError` the library raises.
"""

from __future__ import annotations

import argparse
import difflib
import errno
import importlib
import io
import re
import sys
import warnings
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import NoReturn, TextIO

from .. import errors, files
from .._version import __version__
from ._commands import COMMANDS

__all__ = ["COMMANDS", "OneLineParser", "build_parser", "main", "printable"]


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line: ``jevalkit run: error: ... (see --help)``."""

    def error(self, message: str) -> NoReturn:
        print(
            f"{self.prog}: error: {_suggest(message)} (see `{self.prog} --help`)", file=sys.stderr
        )
        sys.exit(2)


_INVALID_CHOICE = re.compile(r"invalid choice: '?([^' ]*)'? \(choose from (.*)\)$")


def _suggest(message: str) -> str:
    """argparse's "invalid choice" message with the choice most likely meant (``exprot``: did you
    mean 'export'?), as its ``suggest_on_error`` does from Python 3.14.

    Example:
        >>> _suggest("argument COMMAND: invalid choice: 'exprot' (choose from 'run', 'export')")
        "argument COMMAND: invalid choice: 'exprot' (choose from 'run', 'export'); did you mean 'export'?"
    """
    found = _INVALID_CHOICE.search(message)
    if not found:
        return message
    choices = [c.strip().strip("'") for c in found.group(2).split(",")]
    close = difflib.get_close_matches(found.group(1), choices, n=1, cutoff=0.6)
    return f"{message}; did you mean {close[0]!r}?" if close else message


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser: every command in full, or only ``commands`` in full and the others
    by name and help, so that running one command loads one module (and ``--help`` none).

    Example:
        >>> build_parser().parse_args(["probes", "list"]).command
        'probes'
        >>> build_parser(["score"]).parse_args(["score", "tiny/includes@0"]).probe
        'tiny/includes@0'
    """
    parser = OneLineParser(
        prog="jevalkit", description="Evaluate language-model outputs with versioned probes."
    )
    parser.add_argument("--version", action="version", version=f"jevalkit {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=OneLineParser
    )
    chosen = set(COMMANDS) if commands is None else set(commands)
    if unknown := sorted(chosen - set(COMMANDS)):
        raise ValueError(f"not jevalkit commands: {', '.join(unknown)}")
    wanted = {COMMANDS[name].module for name in chosen}
    registered: set[str] = set()
    for name, declared in COMMANDS.items():  # the table's order is the order of --help
        if declared.module not in wanted:
            sub.add_parser(name, help=declared.help).set_defaults(handler=_not_loaded)
        elif declared.module not in registered:
            _command_module(declared.module).register(sub)
            registered.add(declared.module)
    return parser


def _command_module(module: str) -> ModuleType:
    # The one import by name in the CLI: a command's module loads when the command runs, so
    # ``jevalkit --help`` and ``--version`` stay fast. ``module`` comes from COMMANDS only.
    return importlib.import_module(f"{__name__}.{module}")


def _not_loaded(args: argparse.Namespace) -> int:
    # reached only if _command_in and argparse disagreed on the command (a top-level option
    # that takes a value would do it): say so in one line instead of running nothing
    raise errors.UsageError(
        f"jevalkit {args.command}: could not tell the command from the options before it; "
        "put the command first"
    )


def _command_in(argv: Sequence[str]) -> str | None:
    """The command named in ``argv`` (the first word that is not an option), if it is one."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in COMMANDS else None


# C0 controls but newline and tab, DEL, and C1 controls: an escape sequence in a model's name or
# an endpoint's answer must not drive the user's terminal (move the cursor, retitle the window,
# hide text). Carriage return is kept on stderr only, for the progress bar.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_BUT_CR = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def printable(text: str, *, keep_cr: bool = False) -> str:
    """``text`` without terminal control characters (newlines and tabs stay).

    Example:
        >>> printable("model\\x1b]0;pwned\\x07-x\\tok\\r")
        'model]0;pwned-x\\tok'
    """
    return (_CONTROL_BUT_CR if keep_cr else _CONTROL).sub("", text)


class _Printable(io.TextIOBase):
    """A text stream that drops control characters before they reach the terminal."""

    def __init__(self, stream: TextIO, *, keep_cr: bool) -> None:
        self._stream, self._keep_cr = stream, keep_cr

    def write(self, text: str) -> int:
        self._stream.write(printable(text, keep_cr=self._keep_cr))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", "utf-8")


def _command_parser(
    parser: argparse.ArgumentParser, argv: Sequence[str]
) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``argv`` names, deepest first (``probes check``)."""
    for word in argv:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if subs and word in subs[0].choices:
            parser = subs[0].choices[word]
    return parser


def _refuse_unrecognized(
    parser: argparse.ArgumentParser, argv: Sequence[str], extras: Sequence[str]
) -> NoReturn:
    """One line from the command the words were given to (not the top-level parser), with the
    option each misspelled flag was most likely meant to be."""
    target = _command_parser(parser, argv)
    flags = [s for a in target._actions for s in a.option_strings if s.startswith("--")]
    hints = []
    for word in extras:
        flag = word.split("=", 1)[0]
        close = (
            difflib.get_close_matches(flag, flags, n=1, cutoff=0.7) if flag.startswith("--") else []
        )
        if close:
            hints.append(f"did you mean {close[0]}?")
    hint = f"; {' '.join(hints)}" if hints else ""
    target.error(f"unrecognized arguments: {' '.join(extras)}{hint}")


def _one_line_warning(message: Warning | str, *where: object, **more: object) -> None:
    # warnings.showwarning: the category, file and line are left out
    print(f"jevalkit: warning: {' '.join(str(message).split())}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``jevalkit`` console script; returns the exit code. Everything it
    prints passes through :func:`printable`."""
    out, err = sys.stdout, sys.stderr
    sys.stdout = _Printable(out, keep_cr=False)
    sys.stderr = _Printable(err, keep_cr=True)
    try:
        return _main(argv)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = out, err


def _main(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command_in(argv)
    parser = build_parser([] if command is None else [command])
    args, extras = parser.parse_known_args(argv)
    if extras:
        _refuse_unrecognized(parser, argv, extras)
    warnings.showwarning = _one_line_warning
    try:
        return int(args.handler(args) or 0)
    except errors.JevalkitError as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"jevalkit: error: {message}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
        # a name past the file system's limit fails in whichever call meets it first (an
        # exists(), an is_dir()): the readers and writers check names first (jevalkit.files),
        # this catches the checks a path meets before them
        print(
            f"jevalkit: error: {files.shown(exc.filename or '')}: a name in this path is longer than "
            "the file system allows; choose a shorter name",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print("jevalkit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
