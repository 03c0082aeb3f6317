"""Data files people edit (probes, judge prompts, batch files): read YAML safely, validate it
against a bundled JSON Schema, report the field, and lock published versions by hash.

Used by :mod:`jevalkit.probes`, :mod:`jevalkit.judges` and :mod:`jevalkit.reports` alike, so a
probe file, a judge file and a batch file fail the same way: one line naming the file (and line,
or field) and the fix.

YAML aliases (``*name``) are refused: a nine-line "billion laughs" file expands to gigabytes, and
none of these files needs them.

Example:
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.yaml"
    >>> _ = p.write_text("a: &x [1, 2]\\nb: *x\\n")
    >>> load_yaml(p, ValueError)
    Traceback (most recent call last):
    ...
    ValueError: .../x.yaml: line 2 column 4: YAML aliases (*name) are not allowed in jevalkit data files; write the value out
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import jsonschema_rs
import yaml

from .files import read_file, write_file
from .jsontext import nested_deeper_than

__all__ = [
    "LOCK_HEADER",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "field_path",
    "load_yaml",
    "parse_ref",
    "publish_versions",
    "read_lock",
    "read_regular_file",
    "schema_validator",
    "validate_data",
    "verify_locked",
    "version_files",
    "write_lock",
]

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 100
_REF = re.compile(r"^([a-z0-9][a-z0-9_-]*)(?:@([1-9][0-9]*))?$")
_VERSION_FILE = re.compile(r"^v([1-9][0-9]*)\.yaml$")
_ZERO_PADDED = re.compile(r"^v0[0-9]*\.yaml$")


def parse_ref(ref: str, what: str, error: Callable[[str], Exception]) -> tuple[str, int | None]:
    """Split a data file's name ``id@N`` into ``(id, N)``; ``id`` alone gives ``(id, None)``
    (the latest). The one rule for probes and judges alike: an id of lowercase letters, digits,
    ``-`` and ``_``; N a version number 1, 2, ... (``@01`` is refused, as ``v01.yaml`` is by
    :func:`version_files`).

    Example:
        >>> parse_ref("schema-ten-records@2", "probe", ValueError), parse_ref("faithfulness", "judge", ValueError)
        (('schema-ten-records', 2), ('faithfulness', None))
        >>> parse_ref("faithfulness@01", "judge", ValueError)
        Traceback (most recent call last):
        ...
        ValueError: judge 'faithfulness@01': expected `judge-id` or `judge-id@N` (N a version number)
    """
    m = _REF.match(ref.strip()) if isinstance(ref, str) else None
    if not m:
        raise error(f"{what} {ref!r}: expected `{what}-id` or `{what}-id@N` (N a version number)")
    return m.group(1), int(m.group(2)) if m.group(2) else None


def version_files(folder: Path, error: Callable[[str], Exception]) -> dict[int, Path]:
    """The published versions of one probe or judge: ``v<N>.yaml`` in ``folder`` by N (an
    absent folder has none). A zero-padded name (``v01.yaml``, ``v0.yaml``) is refused, naming
    the file and the fix: it would be version 1 to one reader and no version to another.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "v2.yaml").write_text(""), (folder / "notes.yaml").write_text("")
        >>> sorted(version_files(folder, ValueError))
        [2]
        >>> _ = (folder / "v01.yaml").write_text("")
        >>> version_files(folder, ValueError)
        Traceback (most recent call last):
        ...
        ValueError: .../v01.yaml: a version file is named v<N>.yaml with N = 1, 2, ... (no leading zero): rename it
    """
    out: dict[int, Path] = {}
    if not folder.is_dir():
        return out
    for f in sorted(folder.glob("v*.yaml")):
        if _ZERO_PADDED.match(f.name):
            raise error(
                f"{f}: a version file is named v<N>.yaml with N = 1, 2, ... (no leading zero): "
                "rename it"
            )
        m = _VERSION_FILE.match(f.name)
        if m:
            out[int(m.group(1))] = f
    return out


class _NoAliasLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing aliases (the only way YAML expands exponentially)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases (*name) are not allowed", event.start_mark
            )
        return super().compose_node(parent, index)


def read_regular_file(
    path: str | Path, max_bytes: int, error: Callable[[str], Exception], *, what: str = "file"
) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_bytes``; anything else raises
    ``error`` with one line naming the file (:func:`jevalkit.files.read_file`, the one reader
    rule: a folder, a FIFO or a device opened without waiting, a larger file, an unreadable
    one, an over-long name).

    Example:
        >>> read_regular_file("/dev/zero", 10, ValueError)
        Traceback (most recent call last):
        ...
        ValueError: /dev/zero: not a regular file (a character device); give a file
    """
    return read_file(path, error, max_bytes=max_bytes, what=what)


def load_yaml(path: str | Path, error: Callable[[str], Exception]) -> Any:
    """Parse a YAML data file; any problem raises ``error`` with one line naming the file.

    Refused: unreadable or non-UTF-8 files, files over 5 MB, invalid YAML, aliases, numbers too
    long to convert, nesting deep enough to exhaust the parser.
    """
    path = Path(path)
    raw = read_regular_file(path, MAX_FILE_BYTES, error)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None
    try:
        data = yaml.load(text, Loader=_NoAliasLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" line {mark.line + 1} column {mark.column + 1}:" if mark else ""
        problem = exc.problem or str(exc).splitlines()[0]
        if "aliases" in problem:
            problem += " in jevalkit data files; write the value out"
        else:
            problem = f"not valid YAML: {problem}"
        raise error(f"{path}:{where} {problem}") from None
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to be a jevalkit data file") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise error(f"{path}: a value cannot be read ({str(exc).splitlines()[0]})") from None
    if nested_deeper_than(data, MAX_DEPTH):
        raise error(f"{path}: nested deeper than {MAX_DEPTH} levels; not a jevalkit data file")
    return data


def schema_validator(schema: dict[str, Any]) -> jsonschema_rs.Validator:
    """A compiled, offline draft 2020-12 validator for a bundled format schema."""
    return jsonschema_rs.Draft202012Validator(schema, offline=True)


def field_path(path: Any) -> str:
    """Render a JSON Schema error path as ``messages[0].role`` (``<top level>`` when empty).

    Example:
        >>> field_path(["messages", 0, "role"])
        'messages[0].role'
    """
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<top level>"


def validate_data(
    data: Any,
    validator: jsonschema_rs.Validator,
    source: str | Path,
    error: Callable[[str], Exception],
    hint: str = "",
) -> None:
    """Raise ``error`` with one line naming ``source`` and the first failing field.

    Example:
        >>> v = schema_validator({"type": "object", "required": ["id"]})
        >>> validate_data({}, v, "x.yaml", ValueError)
        Traceback (most recent call last):
        ...
        ValueError: x.yaml: <top level>: "id" is a required property
    """
    try:
        problem = next(iter(validator.iter_errors(data)), None)
    except (RecursionError, ValueError, OverflowError) as exc:
        raise error(
            f"{source}: cannot be checked ({type(exc).__name__}); simplify the file"
        ) from None
    if problem is not None:
        message = problem.message
        if len(message) > 300:
            message = message[:300] + "…"
        raise error(f"{source}: {field_path(problem.instance_path)}: {message}{hint}")


LOCK_HEADER = (
    "# jevalkit {what} lock: one published version per line, `id@version sha256:<hex>`.\n"
    "# Published versions are immutable. Never edit a line: publish the next version instead\n"
    "# (copy vN.yaml to vN+1.yaml, change it, run `jevalkit {command} lock`).\n"
)


def read_lock(path: Path, error: Callable[[str], Exception]) -> dict[str, str]:
    """Read a lock file into ``{"id@version": hexdigest}`` (a missing file is empty).

    Example:
        >>> import tempfile
        >>> lock = Path(tempfile.mkdtemp()) / "x.lock"
        >>> _ = lock.write_text("# a comment\\np@1 sha256:ab\\n")
        >>> read_lock(lock, ValueError)
        {'p@1': 'ab'}
    """
    if not path.exists():
        return {}
    entries: dict[str, str] = {}
    try:
        text = read_regular_file(path, MAX_FILE_BYTES, error, what="lock file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: cannot read the lock file ({exc})") from None
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[1].startswith("sha256:"):
            raise error(f"{path}:{lineno}: expected `id@version sha256:<hex>`, got {line!r}")
        entries[parts[0]] = parts[1].removeprefix("sha256:")
    return entries


def write_lock(
    path: Path,
    entries: dict[str, str],
    *,
    what: str,
    command: str,
    error: Callable[[str], Exception] = ValueError,
) -> None:
    """Write ``entries`` to ``path`` atomically (sorted, one per line; :func:`jevalkit.files.write_file`)."""
    body = LOCK_HEADER.format(what=what, command=command) + "".join(
        f"{name} sha256:{digest}\n" for name, digest in sorted(entries.items())
    )
    write_file(path, body, error, what="lock file")


def verify_locked(
    name: str,
    digest: str,
    lock: dict[str, str],
    source: Path | str,
    error: Callable[[str], Exception],
) -> bool:
    """Return whether ``name`` is published; raise if its content differs from the recorded hash.

    Example:
        >>> verify_locked("p@1", "aa", {"p@1": "aa"}, "p/v1.yaml", ValueError)
        True
        >>> verify_locked("p@1", "bb", {"p@1": "aa"}, "p/v1.yaml", ValueError)
        Traceback (most recent call last):
        ...
        ValueError: p/v1.yaml: content changed since p@1 was published (sha256 aa, now bb); published versions are immutable: restore the file and publish the change as the next version
    """
    recorded = lock.get(name)
    if recorded is None:
        return False
    if recorded != digest:
        raise error(
            f"{source}: content changed since {name} was published (sha256 {recorded[:12]}, "
            f"now {digest[:12]}); published versions are immutable: restore the file and "
            "publish the change as the next version"
        )
    return True


def publish_versions(
    files: Iterable[Path],
    read: Callable[[Path, dict[str, str]], Any],
    lock_path: Path,
    error: Callable[[str], Exception],
    *,
    what: str,
    command: str,
) -> list[str]:
    """Record the hash of every version in ``files`` not yet in the lock at ``lock_path``;
    return their names. ``read(path, lock)`` loads one file (verifying a published one against
    the lock) into something with ``name`` and ``content_hash``. Versions already published are
    verified, never rewritten; the lock is written only when something was added. Probes and
    judge prompt files publish through this one function.

    Example:
        >>> import tempfile
        >>> from types import SimpleNamespace
        >>> lock = Path(tempfile.mkdtemp()) / "x.lock"
        >>> read = lambda path, lock: SimpleNamespace(name=path.stem + "@1", content_hash="ab")
        >>> publish_versions([Path("p.yaml")], read, lock, ValueError, what="x", command="x")
        ['p@1']
        >>> publish_versions([Path("p.yaml")], read, lock, ValueError, what="x", command="x")
        []
    """
    lock = read_lock(lock_path, error)
    added = []
    for path in files:
        item = read(path, lock)
        if item.name not in lock:
            lock[item.name] = item.content_hash
            added.append(item.name)
    if added:
        write_lock(lock_path, lock, what=what, command=command, error=error)
    return added
