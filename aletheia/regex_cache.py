"""Compiled regular expressions kept between processes (the hook's redaction patterns, and the
patterns the modules a hook imports for its context compile when they load).

Why: every host event starts a fresh Python process, and ``re.compile`` runs its parser and
compiler in Python.  The redaction patterns the hook meets on an ordinary 8 KB tool output
cost ~8 ms of CPU to compile — a fifth of the whole hook — and the answer is the same every
time.  So the compiled program (the list of opcodes ``re`` hands to its C engine) is written
once to ``$ALETHEIA_HOME/cache/`` and later processes build the pattern from it directly.

Safety: ``re``'s C engine validates every program it is given (a wrong one raises, it is never
run), the file is keyed by the Python build and the exact pattern texts, each entry by its own
pattern, and any failure — a missing, unreadable, stale or damaged file, an unwritable
directory, a Python whose ``re`` internals differ — falls back to ``re.compile``.  A test holds
each cached pattern equal (same program) to ``re.compile``'s.  Stdlib only: the hook imports it.

``importing(purpose)``: the modules imported inside it (the context path: ``aletheia.context``,
``aletheia.changes``, ``aletheia.search`` …) compile ~150 patterns at module level, ~35 ms of
CPU on every SessionStart and prompt the hook answers (of a ~170 ms process).  Inside the block
``re``'s compile step takes each program from a per-purpose file, keyed by the exact pattern
and flags; a pattern it lacks is compiled as ``re`` does and the file written again.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # re's C engine (no stubs), loaded by ``import re``
import binascii
import contextlib
import marshal
import os
import re
import sys
from array import array

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

_PREFIX = "regex-"
_IMPORT_PREFIX = "rximport-"
_KEEP = 4
_IMPORT_MAX = 4096  # patterns a purpose's file holds at most (module-level ones are ~150)
_CODE = "I" if _sre.CODESIZE == 4 else "H"  # the engine's code word
# pattern → the arguments of _sre.compile after the pattern: flags, the program (packed), groups,
# groupindex, indexgroup.  None until the table is first needed.
_Entry = tuple[int, bytes, int, dict[str, int], tuple["str | None", ...]]
_table: dict[str | bytes, _Entry] | None = None


def compiled(pattern: str | bytes, every: Sequence[str | bytes]) -> re.Pattern[str] | re.Pattern[bytes]:
    """``re.compile(pattern)``, from the cache when it holds it.  ``every`` is the whole set of
    patterns the caller may ask for: a cache file holds them all, so it is built once."""
    global _table
    if _table is None:
        _table = _load_or_build(every)
    entry = _table.get(pattern)
    if entry is not None:
        try:
            return _from_entry(pattern, entry)
        except Exception:  # a program this engine refuses: compile it the ordinary way
            _table.pop(pattern, None)
    return re.compile(pattern)


def _file_name(every: Sequence[str | bytes]) -> str:
    key = repr((sys.version, _sre.MAGIC, _sre.CODESIZE)).encode()
    crc = binascii.crc32(key)
    for pattern in every:
        crc = binascii.crc32(pattern if isinstance(pattern, bytes) else pattern.encode(), crc)
    from aletheia.paths import home_dir

    return os.path.join(home_dir(), "cache", f"{_PREFIX}{crc:08x}.bin")


def _load_or_build(every: Sequence[str | bytes]) -> dict[str | bytes, _Entry]:
    try:
        name = _file_name(every)
    except Exception:
        return {}
    try:
        with open(name, "rb") as f:
            table = marshal.load(f)
        if isinstance(table, dict):
            return table
    except Exception:  # missing or damaged: build it again
        pass
    table = _build(every)
    if table:
        _write(name, table)
    return table


def _build(every: Sequence[str | bytes]) -> dict[str | bytes, _Entry]:
    """Each pattern's program, as ``re._compiler.compile`` makes it (Python 3.11–3.13)."""
    try:
        from re import _compiler, _parser  # type: ignore[attr-defined]
    except ImportError:
        return {}
    table: dict[str | bytes, _Entry] = {}
    for pattern in every:
        try:
            entry, _ = _program(_parser, _compiler, pattern, 0)  # refused → left out
        except Exception:
            continue
        table[pattern] = entry
    return table


def _program(parser: Any, compiler: Any, pattern: str | bytes,
             flags: int) -> tuple[_Entry, re.Pattern[Any]]:
    """``pattern``'s program as ``re._compiler.compile`` makes it, and the pattern built from it
    (the engine checks the program; a refused one raises)."""
    p = parser.parse(pattern, flags)
    code = compiler._code(p, flags)
    groupindex = dict(p.state.groupdict)
    indexgroup: list[str | None] = [None] * p.state.groups
    for k, i in groupindex.items():
        indexgroup[i] = k
    # The program as packed machine words: marshal reads a list of ints ~20x slower.
    entry: _Entry = (int(flags | p.state.flags), array(_CODE, code).tobytes(),
                     p.state.groups - 1, groupindex, tuple(indexgroup))
    return entry, _sre.compile(pattern, entry[0], list(code), *entry[2:])


def _from_entry(pattern: str | bytes, entry: _Entry) -> re.Pattern[Any]:
    flags, packed, groups, groupindex, indexgroup = entry
    code = array(_CODE)
    code.frombytes(packed)
    return _sre.compile(pattern, flags, code.tolist(), groups, groupindex, indexgroup)  # type: ignore[no-any-return]


@contextlib.contextmanager
def importing(purpose: str) -> Iterator[None]:
    """The patterns compiled inside this block (the module-level ones of what it imports) come
    from ``purpose``'s file when it holds them.  Only while the block runs: a pattern built later
    from a query or a value is compiled as usual and never kept.  Any failure (no file, a
    damaged one, a program the engine refuses, a Python whose ``re`` internals differ) falls
    back to ``re``'s own compile."""
    try:
        from re import _compiler, _parser  # type: ignore[attr-defined]

        original = re._compile  # type: ignore[attr-defined]
        name = _import_file(purpose)
    except Exception:
        yield
        return
    try:
        with open(name, "rb") as f:
            loaded = marshal.load(f)
        table: dict[tuple[str | bytes, int], _Entry] = loaded if isinstance(loaded, dict) else {}
    except Exception:  # missing or damaged: built again from what this import compiles
        table = {}
    seen: dict[tuple[str | bytes, int], _Entry] = {}
    missed = False

    def compile_(pattern: Any, flags: Any) -> Any:
        nonlocal missed
        try:
            flags = int(flags)
            if type(pattern) not in (str, bytes) or flags & re.DEBUG:
                return original(pattern, flags)
            key = (pattern, flags)
            entry = table.get(key)
            if entry is not None:
                try:
                    rx = _from_entry(pattern, entry)
                    seen[key] = entry
                    return rx
                except Exception:
                    pass  # refused: compiled below, and the file written again
            entry, rx = _program(_parser, _compiler, pattern, flags)
            seen[key] = entry
            missed = True
            return rx
        except Exception:
            return original(pattern, flags)  # (a bad pattern raises re's own error here)

    re._compile = compile_  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if re._compile is compile_:  # type: ignore[attr-defined]
            re._compile = original  # type: ignore[attr-defined]
        if missed and len(seen) <= _IMPORT_MAX:
            # (pruned per purpose: the four purposes' files are not each other's older copies)
            _write(name, seen, f"{_IMPORT_PREFIX}{purpose}-")


def _import_file(purpose: str) -> str:
    key = repr((sys.version, _sre.MAGIC, _sre.CODESIZE)).encode()
    from aletheia.paths import home_dir

    return os.path.join(home_dir(), "cache",
                        f"{_IMPORT_PREFIX}{purpose}-{binascii.crc32(key):08x}.bin")


def _write(name: str, table: dict[Any, _Entry], prefix: str = _PREFIX) -> None:
    """Written whole under a temporary name, then renamed (a reader never sees half a file).
    The newest few files stay (two Pythons sharing a data directory each keep theirs), older
    ones go.  Best effort: the hook never fails for a cache."""
    folder = os.path.dirname(name)
    tmp = f"{name}.{os.getpid()}.tmp"
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            marshal.dump(table, f)
        os.replace(tmp, name)
        olds = sorted((os.path.join(folder, n) for n in os.listdir(folder)
                       if n.startswith(prefix) and n.endswith(".bin")), key=os.path.getmtime)
        for old in olds[:-_KEEP]:
            os.unlink(old)
    except Exception:
        try:
            os.unlink(tmp)
        except OSError:
            pass
