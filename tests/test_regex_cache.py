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
