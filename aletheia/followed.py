"""A value followed into a later edit: the best answers to a query state a value ("the default
analysis window is 4096 samples", "the 2024.06 Compose BOM") and a later edit's diff replaces
that value at a key the answer names next to it (`windowSize = 4096` → `8192`, `composeBom =
"2024.06.00"` → `"2024.10.01"`).  Then the edit is the newer answer, though it holds none of the
query's words: a diff names the key, not what the user calls it.  Text only (search does the
reading): which values a text states, and what an edit's diff replaces at which key."""

from __future__ import annotations

import functools
import re

from aletheia.changes import RUNTIME_NAMES, edit_input, edit_pairs, projects_own

# A value worth following: a dotted version (2.0.21, 2024.06) or a number of three or more
# digits (4096, 8080).  Smaller numbers ("2 tests", "50 %") are everywhere, in every diff.
_VALUE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)+|\d{3,})(?![\w]|\.\d)")
# `key = value` / `key: value` at the end of a line, after whatever declares it (a type, `val`,
# `const`): the key is the last word before the sign.  (A key starts where no letter is before it
# and its word and value are read whole, ``*+``: the same matches — a key begun inside a word ends
# where the word's own does, and no shorter word or value is followed by the sign or the end —
# without trying every place in every word, which cost a line of code ~5x more.)
_AT_KEY = re.compile(r"""(?<![A-Za-z_])(?P<key>[A-Za-z_][\w-]*+)["']?\s*(?:=|:)\s*["']?(?P<value>[\w.+-]{1,40}+)["']?"""
                     r"""\s*[,;]?\s*(?:#.*|//.*)?$""")
# A setting said in code, in an answer's backticks: `@lead_hours 72`, `truncate_m <- 175`,
# `timeout = 30`, `--retries 5`, or a bare value (update channel `preview`).  Its value is worth
# following however short: it is said as code, not as any number or word of the prose.
_CODED = re.compile(r"`(?:[@$]?-{0,2}[A-Za-z_][\w.-]*(?:\s*(?:=|:=|:|<-)\s*|\s+))?[\"']?"
                    r"(?P<value>[\w+-]{1,40}|\d+(?:\.\d+)+)[\"']?;?`")
# A line's words for a diff read word by word: identifiers, flags, attributes, numbers, versions.
_LINE_WORD = re.compile(r"[@$]?-{0,2}[\w][\w.+-]*")
_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_BOUNDARY = re.compile(r"[.!?;]\s|\n")
NEAR = 40  # characters around a stated value in which the answer must name the key


def stated_values(text: str) -> list[str]:
    """The values worth following that ``text`` states, once each, in order: versions and long
    numbers anywhere, and any value a setting in backticks gives its key."""
    found = [(m.start(), m.group(1)) for m in _VALUE.finditer(text)]
    found += [(m.start("value"), m.group("value")) for m in _CODED.finditer(text)]
    return list(dict.fromkeys(v for _, v in sorted(found)))


def key_words(key: str) -> set[str]:
    """The words of a key: `windowSize` → window, size; `compose-bom` → compose, bom."""
    return {p.lower() for p in _PART.findall(key) if len(p) >= 3 and not p.isdigit()}


def replaced_at_keys(narrative: str) -> list[tuple[str, str, str]]:
    """(key, old value, new value) for each value an edit's diff replaces at the same key, from
    its tool event's text (``input: {…}`` as the hook stores it).  Not in tests or lockfiles."""
    data = edit_input(narrative)
    if data is None:
        return []
    path = data.get("file_path") or data.get("path") or ""
    if not isinstance(path, str) or not projects_own(path):
        return []
    out: list[tuple[str, str, str]] = []
    for old, new in edit_pairs(data):
        after: dict[str, str] = {}
        news = new.splitlines()
        for line in news:
            m = _at_key(line)
            if m:
                after.setdefault(m.group("key"), m.group("value"))
        # (each new line's words read once, when a line of the old needs them: a line of the old
        # was compared with every line of the new, its words read again each time)
        words_of: list[list[str]] | None = None
        for line in old.splitlines():
            m = _at_key(line)
            if m and after.get(m.group("key"), m.group("value")) != m.group("value"):
                out.append((m.group("key"), m.group("value"), after[m.group("key")]))
            elif not m:
                if words_of is None:
                    words_of = [_LINE_WORD.findall(other) for other in news]
                out += _one_word_changed(line, words_of)
    return out


def _at_key(line: str) -> re.Match[str] | None:
    """``_AT_KEY`` in ``line``: only a line with a sign in it can hold one (the pattern is tried
    at every place of the line)."""
    return _AT_KEY.search(line) if "=" in line or ":" in line else None


def _one_word_changed(line: str, news: list[list[str]]) -> list[tuple[str, str, str]]:
    """(key, old, new) when a line of the new text is ``line`` with one word changed that holds
    a value, the key being the word before it: `@lead_hours 72` → `@lead_hours 24`,
    `truncate_m <- 150` → `175`, `"channel": "preview" }` → `"beta" }`, `--delete-older-than
    30d` → `21d` (a setting written otherwise than `key = value` at the end of its line).  Not a
    runtime's own version (`"php": "^8.2"`): that is a slot ``aletheia.claims`` reads, for a
    question that asks for a version, not for every answer naming the runtime."""
    was = _LINE_WORD.findall(line)
    if len(was) < 2:
        return []
    for now in news:  # (each line of the new text, as its words)
        if len(now) != len(was):
            continue
        diff = [i for i, (a, b) in enumerate(zip(was, now, strict=True)) if a != b]
        if len(diff) == 1 and diff[0] > 0:
            i = diff[0]
            key = was[i - 1].lstrip("@$-")
            if key_words(key) and not re.fullmatch(RUNTIME_NAMES, key, re.I) and len(was[i]) <= 40 and len(now[i]) <= 40:
                return [(key, was[i].lstrip("@$-"), now[i].lstrip("@$-"))]
    return []


def same_value(stated: str, old: str) -> bool:
    """Is ``old`` (a diff's value) the value ``stated`` names: the same, or a version the
    statement gives shorter ("2024.06" for 2024.06.00)?"""
    return old == stated or old.startswith(stated + ".")


@functools.lru_cache(maxsize=1024)
def _stated_at(low_value: str) -> re.Pattern[str]:
    """Where a lower-cased text states ``low_value`` (see ``_near``); compiled once per value."""
    return re.compile(r"(?:`[^`\n]{0,40}?)?(?<![\w.])" + re.escape(low_value) + r"(?![\w])")


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"  # (what ``\w`` matches in a str pattern)


def _word_starting(text: str, start: str) -> bool:
    """``re.search(r"\b" + re.escape(start), text)``, without a pattern built for each word
    (an answer's values are checked against every query word: most of their cost was building)."""
    if not start:
        return re.search(r"\b", text) is not None
    first = _is_word(start[0])
    i = text.find(start)
    while i >= 0:
        if (i > 0 and _is_word(text[i - 1])) != first:
            return True
        i = text.find(start, i + 1)
    return False


def _near(text: str, value: str) -> list[str]:
    """The stretches of ``text`` (lower-cased) around each place it states ``value``, within its
    sentence (a title and its text are joined: the next one is about something else).  A value
    in a setting in backticks is said from where the setting starts (`@lead_hours 72`: its key
    is part of the value's statement, not the prose around it)."""
    low = text.lower()
    out = []
    for at, end in _stated_spans(low, value.lower()):
        # (the boundaries within reach only, ``NEAR`` and a boundary's length: one further off
        # never decides, and the text was read from its start for each place)
        start = max([at - NEAR, *(b.end() for b in _BOUNDARY.finditer(low, max(0, at - NEAR - 1), at))])
        after = _BOUNDARY.search(low, end, end + NEAR + 1)
        out.append(low[max(0, start):min(end + NEAR, after.start() if after else len(low))])
    return out


def _stated_spans(low: str, value: str) -> list[tuple[int, int]]:
    """The spans of ``_stated_at(value)``'s matches in ``low``, found by looking for the value
    itself: the pattern begins with an optional part, so the regex engine tried it at every
    place of the text (~80 % of an answer's ``asked_near``).  A match starts at the last
    backtick before the value when at most 40 characters, none a newline, lie between (and no
    earlier match ended after it), else at the value.  (A value holds no backtick or newline.)"""
    if not value:
        return [m.span() for m in _stated_at(value).finditer(low)]
    out: list[tuple[int, int]] = []
    size, done = len(value), 0
    i = low.find(value)
    while i >= 0:
        end = i + size
        if (i == 0 or not (_is_word(low[i - 1]) or low[i - 1] == ".")) and not (end < len(low) and _is_word(low[end])):
            tick = low.rfind("`", done, i)
            out.append((tick if tick >= 0 and i - tick <= 41 and "\n" not in low[tick + 1:i] else i, end))
            done = end
            i = low.find(value, end)
        else:
            i = low.find(value, i + 1)
    return out


def asked_near(text: str, value: str, asked: set[str]) -> int:
    """How many words of the query ``text`` says beside ``value`` ("the default analysis window
    is 4096 samples" for "How many samples long is a default analysis frame?": three).  An answer
    states many values; only the one the query is about makes a later edit of it the newer
    answer (the port in "created: Next.js 14.2, TypeScript strict, serves on localhost:3000" is
    not what "How strict is the TypeScript config?" asks)."""
    near = " ".join(_near(text, value))
    return sum(1 for w in asked if len(w) >= 3 and _word_starting(near, w[:5]))


def about(text: str, value: str, key: str, asked: set[str]) -> bool:
    """Is the query about the value an edit replaced at ``key``: the query names the key (`composeBom`
    for "Which Compose bill of materials…"), or two of its words are beside the value where the
    answer states it (one may be any word: "run" beside `npm run dev` on localhost:3000 is not a
    question about the port)?  And the answer names the key there (``names_key``).  A value
    without a digit (`preview`) only when the query names the key: a word is often the name of
    something else as well (a build profile `preview` beside its update channel `preview`)."""
    if not names_key(text, value, key, set()):
        return False
    if key_words(key) & asked:
        return True
    return any(c.isdigit() for c in value) and asked_near(text, value, asked) >= 2


def names_key(text: str, value: str, key: str, asked: set[str]) -> bool:
    """Does ``text`` name ``key`` near where it states ``value`` ("the 2024.06 Compose BOM" for
    `composeBom`), or does the query name it?  A value alone is not enough: 4096 is many things."""
    parts = key_words(key)
    if not parts:
        return False
    if parts & asked:
        return True
    return any(_word_starting(near, p) for near in _near(text, value) for p in parts)


# Manifests: the files a project's dependencies are listed in, by name.
MANIFESTS = ("package.json", "pyproject.toml", "requirements.txt", "Cargo.toml", "go.mod", "Gemfile", "mix.exs",
             "composer.json", "vcpkg.json", "conanfile.txt", "libs.versions.toml", "build.gradle",
             "build.gradle.kts", "pom.xml", "pubspec.yaml", "Package.swift", "deno.json", "Podfile",
             "DESCRIPTION", "flake.nix", "stack.yaml")
_VERSIONISH = re.compile(r"(?<![A-Za-z0-9_])\d[\w.+-]*")
_NAME_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def swapped_names(narrative: str) -> list[tuple[str, str]]:
    """(old, new) for each dependency an edit of a manifest swaps for another in one line, its
    other words and any version aside: `{:timex, "~> 3.7"}` → `{:tz, "~> 0.28"}`,
    `implementation(libs.glide.compose)` → `implementation(libs.coil.compose)`, `"fftw3"` →
    `"pocketfft"`, `"@sveltejs/adapter-auto": "^3.0.0"` → `"@sveltejs/adapter-node": "^5.2.0"`."""
    data = edit_input(narrative)
    if data is None:
        return []
    path = data.get("file_path") or data.get("path") or ""
    if not isinstance(path, str) or path.rsplit("/", 1)[-1] not in MANIFESTS or not projects_own(path):
        return []
    out: list[tuple[str, str]] = []
    for old, new in edit_pairs(data):
        kept = set(old.splitlines()) & set(new.splitlines())
        written = [_NAME_WORD.findall(_VERSIONISH.sub(" ", line)) for line in new.splitlines() if line not in kept]
        olds = [_NAME_WORD.findall(_VERSIONISH.sub(" ", line)) for line in old.splitlines() if line not in kept]
        news = [n for n in written if n not in olds]
        for line in old.splitlines():
            if line in kept:
                continue
            was = _NAME_WORD.findall(_VERSIONISH.sub(" ", line))
            if was in written:
                continue  # (the same names: a comma added, a version bumped)
            for now in news:
                diff = [i for i, (a, b) in enumerate(zip(was, now, strict=False)) if a != b]
                if len(was) == len(now) and len(diff) == 1 and len(was[diff[0]]) >= 2 and len(now[diff[0]]) >= 2:
                    out.append((was[diff[0]], now[diff[0]]))
                    break
    return list(dict.fromkeys(out))
