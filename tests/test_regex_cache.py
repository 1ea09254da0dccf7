"""The compiled-pattern cache the hook's redaction uses (``aletheia.regex_cache``): every pattern
it hands out is the very program ``re.compile`` makes, from a fresh file, a file another process
wrote, a damaged file and a refused entry alike; and a cache that cannot be written changes
nothing but speed."""

from __future__ import annotations

import marshal
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from aletheia import redact, regex_cache

PATTERNS = redact._PATTERNS


@pytest.fixture(autouse=True)
def fresh_table() -> Iterator[None]:
    """Each test starts as a new process would: nothing loaded yet."""
    regex_cache._table = None
    yield
    regex_cache._table = None


def _cache_files(home: Path) -> list[Path]:
    return sorted((home / "cache").glob("regex-*.bin"))


def _all_equal_to_re() -> None:
    for pattern in PATTERNS:
        assert regex_cache.compiled(pattern, PATTERNS) == re.compile(pattern), pattern


def test_every_redaction_pattern_is_re_compiles_program(aletheia_home: Path) -> None:
    assert len(PATTERNS) > 50
    _all_equal_to_re()  # built now
    [made] = _cache_files(aletheia_home)
    assert made.stat().st_mode & 0o777 == 0o600
    assert (aletheia_home / "cache").stat().st_mode & 0o777 == 0o700
    table = marshal.loads(made.read_bytes())
    assert set(table) == set(PATTERNS)
    regex_cache._table = None
    _all_equal_to_re()  # read back from the file
    assert _cache_files(aletheia_home) == [made]


def test_another_process_reads_the_file_and_redacts_the_same(aletheia_home: Path) -> None:
    secret = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"
    text = f"export GITHUB_TOKEN={secret}\npassword: 'hunter2hunter2'\nplain words stay"
    script = ("import sys; from aletheia.redact import redact; "
              "sys.stdout.write(redact(sys.stdin.read()))")
    env = dict(os.environ, ALETHEIA_HOME=str(aletheia_home))
    first = subprocess.run([sys.executable, "-c", script], input=text, env=env,
                           capture_output=True, text=True, check=True).stdout
    [made] = _cache_files(aletheia_home)
    before = made.stat().st_mtime_ns
    second = subprocess.run([sys.executable, "-c", script], input=text, env=env,
                            capture_output=True, text=True, check=True).stdout
    assert first == second
    assert secret not in second and "hunter2hunter2" not in second and "plain words stay" in second
    assert made.stat().st_mtime_ns == before  # read, not built again


def test_a_damaged_file_is_built_again(aletheia_home: Path) -> None:
    _all_equal_to_re()
    [made] = _cache_files(aletheia_home)
    made.write_bytes(b"\x00not marshal at all")
    regex_cache._table = None
    _all_equal_to_re()
    assert set(marshal.loads(made.read_bytes())) == set(PATTERNS)


def test_an_entry_the_engine_refuses_falls_back_to_re(aletheia_home: Path) -> None:
    _all_equal_to_re()
    [made] = _cache_files(aletheia_home)
    table = marshal.loads(made.read_bytes())
    victim = PATTERNS[0]
    flags, packed, *rest = table[victim]
    table[victim] = (flags, b"\xff\xff\xff\x7f" * 8, *rest)  # not a program the engine accepts
    made.write_bytes(marshal.dumps(table))
    regex_cache._table = None
    assert regex_cache.compiled(victim, PATTERNS) == re.compile(victim)


def test_an_unwritable_cache_changes_nothing_but_speed(aletheia_home: Path) -> None:
    (aletheia_home / "cache").write_text("a file where the folder would go")
    _all_equal_to_re()
    assert (aletheia_home / "cache").read_text() == "a file where the folder would go"
    assert redact.redact("token = 'Zq8vN3xK7pL2mR9t'") != "token = 'Zq8vN3xK7pL2mR9t'"


def test_a_changed_pattern_set_gets_its_own_file(aletheia_home: Path) -> None:
    _all_equal_to_re()
    regex_cache._table = None
    extra = [*PATTERNS, rb"(?i)brand[ -]new(\d+)"]
    assert regex_cache.compiled(extra[-1], extra) == re.compile(extra[-1])
    assert len(_cache_files(aletheia_home)) == 2


# --- importing(): the patterns the context path's modules compile when they load ------------

_MODULE = '''
import re
WORD = re.compile(r"\\b(?P<name>[a-z]+)(?:\\s+(?P=name))?\\b", re.I)
BYTES = re.compile(rb"(?m)^key=([^\\n]{2,40})$")
VERBOSE = re.compile(r"""
    (?P<old>\\w+)      # before
    \\s*(?:->|=>|→)\\s*  # an arrow
    (?P<new>\\w+)      # after
""", re.X | re.U)
PLAIN = re.compile("a|b|c")
'''


def _import_fresh(folder: Path, name: str = "rx_probe_module") -> object:
    import importlib

    sys.modules.pop(name, None)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(name, None)


def _module_patterns(module: object) -> list[re.Pattern[str] | re.Pattern[bytes]]:
    return [v for v in vars(module).values() if isinstance(v, re.Pattern)]


def _import_files(home: Path) -> list[Path]:
    return sorted((home / "cache").glob("rximport-*.bin"))


def test_what_a_module_compiles_inside_importing_is_re_compiles_program(
        aletheia_home: Path, tmp_path: Path) -> None:
    (tmp_path / "rx_probe_module.py").write_text(_MODULE, encoding="utf-8")
    with regex_cache.importing("probe"):
        first = _import_fresh(tmp_path)
    [made] = _import_files(aletheia_home)
    assert made.stat().st_mode & 0o777 == 0o600
    assert len(marshal.loads(made.read_bytes())) == 4
    written = made.stat().st_mtime_ns
    with regex_cache.importing("probe"):
        second = _import_fresh(tmp_path)  # every program from the file now
    assert made.stat().st_mtime_ns == written  # nothing missed: not written again
    for module in (first, second):
        patterns = _module_patterns(module)
        assert len(patterns) == 4
        for rx in patterns:
            assert rx == re.compile(rx.pattern, rx.flags), rx.pattern  # (the same program)
    assert second.WORD.search("Hello hello world").group("name") == "Hello"  # type: ignore[attr-defined]
    assert second.BYTES.findall(b"x\nkey=abc\n") == [b"abc"]  # type: ignore[attr-defined]
    assert second.VERBOSE.search("from poetry -> uv").group("new") == "uv"  # type: ignore[attr-defined]


def test_importing_keeps_only_what_is_compiled_inside_it_and_puts_re_back(
        aletheia_home: Path) -> None:
    original = re._compile  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError), regex_cache.importing("probe"):
        re.compile(r"inside-(\d+)")
        raise RuntimeError("an import that fails")
    assert re._compile is original  # type: ignore[attr-defined]
    re.compile(r"outside-(\d+)")  # after the block: never kept
    [made] = _import_files(aletheia_home)
    assert set(marshal.loads(made.read_bytes())) == {(r"inside-(\d+)", 0)}


def test_a_damaged_or_refused_import_file_falls_back_to_re(aletheia_home: Path,
                                                           tmp_path: Path) -> None:
    (tmp_path / "rx_probe_module.py").write_text(_MODULE, encoding="utf-8")
    with regex_cache.importing("probe"):
        _import_fresh(tmp_path)
    [made] = _import_files(aletheia_home)
    table = marshal.loads(made.read_bytes())
    key = next(k for k in table if k[0] == "a|b|c")
    flags, packed, *rest = table[key]
    table[key] = (flags, b"\xff\xff\xff\x7f" * 8, *rest)  # not a program the engine accepts
    made.write_bytes(marshal.dumps(table))
    with regex_cache.importing("probe"):
        module = _import_fresh(tmp_path)
    assert re.compile("a|b|c") == module.PLAIN  # type: ignore[attr-defined]
    assert marshal.loads(made.read_bytes())[key][1] == packed  # written again, mended
    made.write_bytes(b"\x00not marshal at all")
    with regex_cache.importing("probe"):
        module = _import_fresh(tmp_path)
    assert all(rx == re.compile(rx.pattern, rx.flags) for rx in _module_patterns(module))
    assert len(marshal.loads(made.read_bytes())) == 4


def test_each_purpose_keeps_its_own_files_beside_another_python_s(aletheia_home: Path) -> None:
    # Two Pythons sharing a data directory: each writes one file per purpose.  Pruning keeps the
    # newest few of a purpose, so five purposes (or two Pythons' four) never evict each other.
    cache = aletheia_home / "cache"
    cache.mkdir(exist_ok=True)
    other = []
    for purpose in ("capture", "block", "prompt", "file", "probe"):
        stale = cache / f"rximport-{purpose}-0000beef.bin"  # another Python's file
        stale.write_bytes(marshal.dumps({}))
        os.utime(stale, (1, 1))  # older than anything written below
        other.append(stale)
    for n, purpose in enumerate(("capture", "block", "prompt", "file", "probe")):
        with regex_cache.importing(purpose):
            re.compile(rf"purpose-{n}-(\d+)")
    assert all(p.exists() for p in other)
    assert len(_import_files(aletheia_home)) == 10


def test_a_bad_pattern_inside_importing_raises_re_s_own_error(aletheia_home: Path) -> None:
    with pytest.raises(re.error), regex_cache.importing("probe"):
        re.compile(r"(unclosed")
    assert re.compile(r"fine") == re.compile(r"fine")


def test_the_context_modules_load_their_patterns_from_the_cache_in_a_new_process(
        aletheia_home: Path) -> None:
    """The hook's own imports, twice in new processes (the second from the file): every
    module-level pattern of theirs is the program ``re.compile`` makes."""
    names = ("blocks", "changes", "claims", "concepts", "context", "followed", "measures",
             "recall", "search", "toolkinds")
    script = (
        "import re, sys\n"
        "from aletheia.regex_cache import importing\n"
        "with importing('prompt'):\n"
        f"    from aletheia import {', '.join(names)}\n"
        "bad = n = 0\n"
        f"for module in ({', '.join(names)},):\n"
        "    for v in vars(module).values():\n"
        "        for rx in (v if isinstance(v, (tuple, list)) else (v,)):\n"
        "            if isinstance(rx, tuple) and rx and isinstance(rx[0], re.Pattern):\n"
        "                rx = rx[0]\n"
        "            if isinstance(rx, re.Pattern):\n"
        "                n += 1\n"
        "                bad += rx != re.compile(rx.pattern, rx.flags)\n"
        "print(n, bad)\n")
    env = dict(os.environ, ALETHEIA_HOME=str(aletheia_home))
    outs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, check=True).stdout.split() for _ in range(2)]
    [made] = _import_files(aletheia_home)
    assert len(marshal.loads(made.read_bytes())) > 100
    for n, bad in outs:
        assert int(n) > 100 and int(bad) == 0
