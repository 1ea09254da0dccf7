"""Compiled regular expressions kept between processes (the hook's redaction patterns).

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
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # re's C engine (no stubs), loaded by ``import re``
import binascii
import marshal
import os
import re
import sys
from array import array

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

_PREFIX = "regex-"
_KEEP = 4
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
            flags, packed, groups, groupindex, indexgroup = entry
            code = array(_CODE)
            code.frombytes(packed)
            rx: re.Pattern[str] | re.Pattern[bytes] = _sre.compile(
                pattern, flags, code.tolist(), groups, groupindex, indexgroup)
            return rx
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
            p = _parser.parse(pattern, 0)
            code = _compiler._code(p, 0)
            groupindex = dict(p.state.groupdict)
            indexgroup: list[str | None] = [None] * p.state.groups
            for k, i in groupindex.items():
                indexgroup[i] = k
            # The program as packed machine words: marshal reads a list of ints ~20x slower.
            entry: _Entry = (int(p.state.flags), array(_CODE, code).tobytes(),
                             p.state.groups - 1, groupindex, tuple(indexgroup))
            _sre.compile(pattern, entry[0], list(code), *entry[2:])  # refused → left out
        except Exception:
            continue
        table[pattern] = entry
    return table


def _write(name: str, table: dict[str | bytes, _Entry]) -> None:
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
                       if n.startswith(_PREFIX) and n.endswith(".bin")), key=os.path.getmtime)
        for old in olds[:-_KEEP]:
            os.unlink(old)
    except Exception:
        try:
            os.unlink(tmp)
        except OSError:
            pass
