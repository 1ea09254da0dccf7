"""What a memory shows a slot of the project holds: the runtime's version a command printed or a
version file was given (`echo "22" > .nvmrc`, `node --version` → v22.11.0, `FROM node:22`, "on
Node 22"), the value a setting is given in a file or an edit (`FX_TIMEOUT_SECONDS = 3.0`,
`QUEUE_CONNECTION=database`).

Two memories of a project that show one slot with different values say the slot changed between
them, however either of them words it (or says nothing at all: a command's output): the older one
is the old answer (``search._claimed_changes``).  A change is tied to its subject by structure —
the same runtime, the same setting key — never by nearness.  Read from the head of a memory
(what search reads of its candidates), stdlib only."""

from __future__ import annotations

import json
import re

# --- a runtime's version, wherever it is shown (also what the extractor's runtime facts read) ------

RUNTIMES = {
    "python": "Python", "node": "Node", "nodejs": "Node", "node.js": "Node", "go": "Go", "golang": "Go",
    "rust": "Rust", "rustc": "Rust", "ruby": "Ruby", "java": "Java", "openjdk": "Java",
    "deno": "Deno", "bun": "Bun", "php": "PHP", "elixir": "Elixir", "dotnet": ".NET",
}
_MAJOR_ONLY = frozenset({"Node", "Java", "Deno", ".NET"})


def runtime_value(name: str, version: str) -> tuple[str, str] | None:
    """(slot, value) for a runtime and a version as said: ("node", "v22.11.0") → ("runtime:node",
    "Node 22"); Python 3.12.4 → "Python 3.12"."""
    label = RUNTIMES.get(name.lower())
    m = re.match(r"v?(\d+)(?:\.(\d+))?", version)
    if label is None or m is None:
        return None
    short = m.group(1) if label in _MAJOR_ONLY or not m.group(2) else f"{m.group(1)}.{m.group(2)}"
    return f"runtime:{label.lower()}", f"{label} {short}"


_VERSION_CMD = re.compile(r"^(python[\d.]*|node|go|rustc|ruby|java|deno|bun|php|elixir)\s+(?:--?version|-v|-V|version)\b")
_VERSION_OUT = re.compile(
    r"\b(Python|node|go|rustc|ruby|openjdk|java|deno|bun|PHP|Elixir)?\s*(?:version\s+)?(?:go)?v?(\d+\.\d+(?:\.\d+)?)", re.I)
# A version file written by the shell: `echo "22" > .nvmrc`, `echo 3.12 > .python-version`.
_SHELL_WRITE = re.compile(r"""(?:echo|printf)\s+(?:-n\s+)?["']?v?(\d+(?:\.\d+){0,2})(?:\\n)?["']?\s*>\s*"""
                          r"""(?:\./)?(\.nvmrc|\.node-version|\.python-version|\.ruby-version|\.go-version|"""
                          r"""\.java-version)(?![\w.-])""")
_VERSION_FILES = {".nvmrc": "node", ".node-version": "node", ".python-version": "python",
                  ".ruby-version": "ruby", ".go-version": "go", ".java-version": "java"}
_FROM = re.compile(r"^FROM\s+(?:--\S+\s+)*([\w./-]+):(v?\d+(?:\.\d+)?)", re.M | re.I)
# A runtime's version beside a key that names it, in a CI workflow, a build file, a Dockerfile ARG
# (`node-version: 22`, `ARG PYTHON_VERSION=3.12`, `<java.version>17</java.version>`,
# `JavaLanguageVersion.of(21)`); a list of versions (a CI matrix) names none.
_RUNTIME_KEYED = re.compile(r"(?i)(?<![\w-])(node|nodejs|python|ruby|java|go|golang|php|elixir)[-_.]?(?:language)?"
                            r"[-_.]?version\b(?:\.of\(|[\"'>]?\s*[:=>]\s*[\"']?)\s*v?(\d+(?:\.\d+){0,2})(?![\d.]*\w)")
KEYED_FILES = re.compile(r"\.(?:ya?ml|xml|kts|gradle|properties)$|(?:^|/)(?:Dockerfile[\w.-]*|\.tool-versions)$", re.I)
_TOOL_VERSIONS = re.compile(r"^(nodejs|python|ruby|golang|java|elixir|php)\s+v?(\d+(?:\.\d+){0,2})\b", re.M)


def shell_versions(command: str) -> list[tuple[str, str, str]]:
    """(runtime, version, the write) for each version file a shell command writes."""
    return [(_VERSION_FILES[m.group(2)], m.group(1), f"`{m.group(0)[:60]}`") for m in _SHELL_WRITE.finditer(command)]


def printed_versions(command: str, output: str) -> list[tuple[str, str, str]]:
    """(runtime, version, how) for each version command in ``command`` (``python3.12 --version``,
    ``node -v``) and the first line of ``output`` that answers it."""
    out: list[tuple[str, str, str]] = []
    for part in command.split("&&"):
        m = _VERSION_CMD.match(part.strip())
        if not m:
            continue
        program = re.sub(r"[\d.]+$", "", m.group(1))
        for line in output.splitlines():
            shown = line.strip()
            if program == "node" and re.match(r"^v\d+\.\d+", shown):
                out.append(("node", shown, f"`{part.strip()}` prints `{shown}`"))
                break
            v = _VERSION_OUT.search(line)
            # (a line that names no program is the answer only when it is a bare version: in
            # `python3 --version && ansible --version`, "ansible [core 2.16.6]" is not Python's)
            bare = v is not None and v.group(1) is None and re.fullmatch(r"\s*v?\d+\.\d+(?:\.\d+)?\S*\s*", line)
            if v and (v.group(1) or bare) and (v.group(1) or program).lower().rstrip("c") in (program.rstrip("c"), "openjdk") \
                    and runtime_value(program, v.group(2)):
                out.append((program, v.group(2), f"`{part.strip()}` prints `{shown[:40]}`"))
                break
    return out


# The interpreter a Python project manager says it runs the project on, whatever the command
# (uv on every environment it makes: "Using CPython 3.12.7 interpreter at: /usr/bin/python3.12";
# poetry: "Using virtualenv: …-py3.12", "Creating virtualenv app-x-py3.12 in …").
_INTERPRETER = re.compile(r"^(?:Using CPython (\d+\.\d+(?:\.\d+)?) interpreter\b|"
                          r"(?:Using|Creating) virtualenv:? \S+-py(\d+\.\d+)\b)", re.M)


def interpreter_versions(output: str) -> list[tuple[str, str, str]]:
    """(python, version, the line) for the interpreter a project manager's output says it uses;
    two different ones (an environment made again on another) are none."""
    said = {(m.group(1) or m.group(2), m.group(0)) for m in _INTERPRETER.finditer(output)}
    versions = {runtime_value("python", v) for v, _ in said}
    return [("python", v, f"`{line}`") for v, line in sorted(said)][:1] if len(versions) == 1 else []


# A tool's own version command (`xcodebuild -version`, `terraform version`, `psql --version`) and
# the first output line that names it and a version ("Xcode 15.4", "Terraform v1.9.8"): the
# tool's version, a slot of its own ("version:xcode").
_TOOL_VERSION_CMD = re.compile(r"^([a-z][\w-]{1,30})\s+(?:--?version|-v|-V|version)\s*(?:2>&1)?\s*(?:\||$)")
_NAMED_VERSION = re.compile(r"^\s*([A-Za-z][\w+-]{1,30})(?: version)? v?(\d+\.\d+(?:\.\d+)?)\b")


# … or a name said with "version" further along its line: `swift --version` prints
# "swift-driver version: 1.115 Apple Swift version 6.0.2" (the program's own name wins).
_BARE_VERSION = re.compile(r"\s*v?(\d+\.\d+(?:\.\d+)?)\s*")
_NAMED_LATER = re.compile(r"(?<![\w-])([A-Za-z][\w+-]{1,30}) version:? v?(\d+\.\d+(?:\.\d+)?)\b")


def tool_versions(command: str, output: str) -> list[tuple[str, str]]:
    """(name, version) for each version command of a tool in ``command`` that is no runtime (those
    are ``printed_versions``) and the first line of ``output`` naming it ("xcodebuild" → Xcode)."""
    out: list[tuple[str, str]] = []
    lines = output.splitlines()
    version_commands = sum(1 for part in command.split("&&") if _TOOL_VERSION_CMD.match(part.strip())
                           or _VERSION_CMD.match(part.strip()))
    for part in command.split("&&"):
        m = _TOOL_VERSION_CMD.match(part.strip())
        if not m or RUNTIMES.get(re.sub(r"[\d.]+$", "", m.group(1))):
            continue
        program = m.group(1).lower()
        for line in lines:
            n = _NAMED_VERSION.match(line)
            named = [(n.group(1), n.group(2))] if n else []
            named += [(x.group(1), x.group(2)) for x in _NAMED_LATER.finditer(line)]
            named = [(a.lower(), v) for a, v in named if len(a) >= 3]
            hit = next((x for x in named if x[0] == program), None) or next(
                (x for x in named if program.startswith(x[0]) or x[0].startswith(program)), None)
            # (a tool that prints its bare version: `zig version` → "0.14.0", `terraform -v` → "1.9.8"
            # after a download line; one version command only, or the line could be another's)
            bare = _BARE_VERSION.fullmatch(line) if version_commands == 1 else None
            hit = hit or ((program, bare.group(1)) if bare else None)
            if hit:
                out.append(hit)
                break
    return out


# What a package manager prints it resolved, installed or upgraded: each a public format
# (uv/pip ` + duckdb==1.1.3`, uv `Updated duckdb v1.0.0 -> v1.1.3`, poetry `- Updating duckdb
# (1.0.0 -> 1.1.3)`, cargo `Updating serde v1.0.1 -> v1.0.2`, go `go: upgraded x v1 => v2`, mix
# `tz 0.26.5 => 0.28.1`, bundler `Installing rails 7.1.3`, pnpm `+ react 18.3.1`, vcpkg
# `catch2:x64-linux@3.7.1`).  The version after an arrow is the one it holds now.
_V = r"v?(\d+(?:\.\d+)+[\w.+-]*)"
_PACKAGE_LINES = (
    re.compile(rf"^\s*\+ (@?[A-Za-z][\w./-]*)(?:==|@| ){_V}\s*$"),
    re.compile(rf"^\s*(?:- )?(?:Updated|Updating|Upgraded|Upgrading|Downgraded|Downgrading|Added|Adding|Locking|"
               rf"Installing|Installed)\s+([A-Za-z][\w.-]*) \(?(?:v?[\d.]+[\w.+-]* (?:->|=>) )?{_V}\)?"
               rf"(?: \(was [\w.+-]+\))?\s*$"),
    re.compile(rf"^go: (?:upgraded|downgraded|added) (\S+) (?:v\S+ => )?{_V}\s*$"),
    re.compile(rf"^\s+([a-z][\w-]*) v?[\d.]+[\w.+-]* => {_V}\s*$"),
    re.compile(rf"^\s+([a-z0-9][\w-]*)(?:\[[^\]]*\])?:[\w-]+@{_V}?(?:#\d+)?\s*$"),
)


def package_versions(output: str) -> list[tuple[str, str]]:
    """(package, version) for each line of a package manager's output saying it resolved,
    installed or upgraded one (``_PACKAGE_LINES``)."""
    out: list[tuple[str, str]] = []
    for line in output.splitlines():
        for rule in _PACKAGE_LINES:
            m = rule.match(line)
            if m and m.group(2):
                # (a Go module's name is its path less a major-version suffix: …/pgx/v5 → pgx)
                name = re.sub(r"/v\d+$", "", m.group(1)).rsplit("/", 1)[-1].lower()
                out.append((name, m.group(2)))
                break
    return out


def dockerfile_runtime(content: str) -> tuple[str, str, str] | None:
    """(image's runtime, tag, image) of the stage that runs (the last ``FROM`` naming one)."""
    found = [(image.rsplit("/", 1)[-1], tag, f"{image}:{tag}") for image, tag in _FROM.findall(content)]
    runs = [f for f in found if runtime_value(f[0], f[1])]
    return runs[-1] if runs else None


def keyed_versions(content: str) -> list[tuple[str, str, str]]:
    """(runtime, version, what says it) a file names by a version key, one version per runtime."""
    seen: dict[str, tuple[str, str, str]] = {}
    mixed: set[str] = set()
    said = [*_RUNTIME_KEYED.finditer(content), *_TOOL_VERSIONS.finditer(content)]
    for m in said:
        held = runtime_value(m.group(1), m.group(2))
        if held is None:
            continue
        if held[0] in seen and runtime_value(*seen[held[0]][:2]) != held:
            mixed.add(held[0])
        seen.setdefault(held[0], (m.group(1), m.group(2), m.group(0)))
    return [v for k, v in seen.items() if k not in mixed]


def version_file(path: str, content: str) -> tuple[str, str] | None:
    """(runtime, version) of `.nvmrc`, `.node-version`, `.python-version`, … ."""
    runtime = _VERSION_FILES.get(path.rsplit("/", 1)[-1])
    text = content.strip().splitlines()[0].strip() if content.strip() else ""
    return (runtime, text.lstrip("v")) if runtime and text else None


_RUNTIME_WORD = {"node": "node", "node.js": "node", "nodejs": "node", "python": "python", "go": "go",
                 "golang": "go", "ruby": "ruby", "java": "java", "php": "php", "rust": "rust",
                 "elixir": "elixir", "deno": "deno"}
# A runtime named with its version in prose ("on Node 22", "Python 3.12", "Java 21"); "Go 1.23"
# and "Go" need a dotted version (``go 2`` is a verb).
_PROSE_RUNTIME = re.compile(r"(?<![\w@/.-])(Node(?:\.js)?|Python|Ruby|Java|PHP|Rust|Elixir|Deno|Go(?= \d+\.\d))"
                            r" v?(\d+(?:\.\d+){0,2})(?![\w.]*[-/]|\.\d|\w)")
# A setting key worth comparing: a name, not a loop variable (`FX_TIMEOUT_SECONDS`, `poll_interval`,
# `QUEUE_CONNECTION`, `jwt_algorithm`).
_KEY = re.compile(r"^(?=.{4,60}$)(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+|"
                  r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+)$")
_ASSIGN = re.compile(
    r"""^\s*(?:export\s+)?(?:const\s+|let\s+|var\s+|final\s+|ENV\s+)?(?P<key>[A-Za-z_][\w.]{3,60})\s*"""
    r"""(?::\s*[\w\[\]., |]{1,30}?\s*(?==))?(?:=|:=)\s*(?P<value>"[^"\n]{1,40}"|'[^'\n]{1,40}'|[\w.:/*+-]{1,40}(?: [\w.:/*+-]{1,20}){0,2})"""
    r"""\s*[,;]?\s*(?:#.*|//.*)?$""", re.M)
_SPAN_ASSIGN = re.compile(r"`(?P<key>[A-Za-z_][\w.]{3,60}) ?(?:=|:) ?(?P<value>[\"']?[\w.:/-]{1,40}[\"']?)`")
# A setting passed as a keyword argument inside a call (`crew_controller_local(workers = 2)`,
# `Pool(max_workers=4)`, `connect(timeout = 30)`): a number or a quoted value, then the call's next
# argument or its end.  Read only for a key the query names (a plain word like `workers` is a
# setting only when asked for: every call has keyword arguments).
_KWARG = re.compile(r"""[(,]\s*(?P<key>[A-Za-z_]\w{3,40})\s*=\s*(?P<value>\d+(?:\.\d+)?|"[^"\n]{1,40}"|'[^'\n]{1,40}')"""
                    r"""\s*(?=[,)])""")
_TALK = ("prompt", "response", "note", "turn")


def _runtime(name: str, version: str) -> tuple[str, str] | None:
    return runtime_value(name, version)


def _value(raw: str) -> str:
    value = raw.strip().strip("\"'")
    try:  # 10 and 10.0 are one value
        number = float(value)
        return f"{number:g}" if re.fullmatch(r"\d+(?:\.\d+)?", value) else value
    except ValueError:
        return value


def file_words(path: str) -> set[str]:
    """The words of a file's own name (`roles/restic/templates/restic-backup.timer` → restic,
    backup, timer)."""
    return {w for w in re.split(r"[^a-z0-9]+", path.rsplit("/", 1)[-1].lower()) if len(w) >= 3}


def key_parts(key: str) -> set[str]:
    """The words of a setting's key (`FX_TIMEOUT_SECONDS` → fx, timeout, seconds; `pollInterval`
    → poll, interval)."""
    return set(_snake(key).split("_")) - {""}


def _snake(key: str) -> str:
    return "_".join(re.split(r"[_.-]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key))).lower()


def _settings(text: str, found: dict[str, set[str]], keys: set[str] | None, *, spans: bool = False) -> None:
    for m in (_SPAN_ASSIGN if spans else _ASSIGN).finditer(text):
        key = m.group("key").rsplit(".", 1)[-1]
        if keys is not None and not key_parts(key) & keys:
            continue
        value = _value(m.group("value"))
        if _KEY.match(key) and value and not re.fullmatch(r"true|false|none|null|nil|0|1", value, re.I):
            found.setdefault(f"setting:{_snake(key)}", set()).add(value)
        elif _VERSIONED_VALUE.match(value) and re.fullmatch(r"[a-z][a-z0-9-]{1,30}", key, re.I):
            # a version catalog's, a manifest's line: `kotlin = "2.0.21"` (the thing's version)
            found.setdefault(f"version:{key.lower()}", set()).add(value)
    if keys is None or spans:
        return
    for m in _KWARG.finditer(text):
        key = m.group("key")
        value = _value(m.group("value"))
        if key_parts(key) & keys and value and not re.fullmatch(r"true|false|none|null|nil|0|1", value, re.I):
            found.setdefault(f"setting:{_snake(key)}", set()).add(value)


_VERSIONED_VALUE = re.compile(r"^v?\d+\.\d+(?:\.\d+)?(?:[-+.][\w.]+)?$")
# A named thing and its version in prose ("Kotlin 2.0.21", "`catch2` 3.7.1", "Qt 6.7"): a dotted
# version, a name with a capital, a digit or backticks.
_PROSE_VERSION = re.compile(r"(?<![\w@/.-])`?([A-Za-z][\w+-]{1,30})`? v?(\d+\.\d+(?:\.\d+)?)(?![\w.-]*\w)")


def _prose_versions(sentence: str, found: dict[str, set[str]], names: set[str] | None) -> None:
    held: dict[str, set[str]] = {}
    for m in _PROSE_VERSION.finditer(sentence):
        name = m.group(1)
        if (names is not None and name.lower() not in names) or name.lower() in _RUNTIME_WORD or not (
                name[:1].isupper() or "`" in m.group(0) or any(c.isdigit() for c in name)):
            continue
        held.setdefault(f"version:{name.lower()}", set()).add(m.group(2))
    for slot, values in held.items():
        if len(values) == 1:  # (two: a comparison or a change said in words the change rules read)
            found.setdefault(slot, set()).update(values)


def decoded(text: str, key: str) -> str | None:
    """The JSON string value of ``key`` in a head cut anywhere (an edit's ``new_string``)."""
    m = re.search(rf'"{key}": "', text)
    if m is None:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text, m.end() - 1)
        return value if isinstance(value, str) else None
    except ValueError:
        raw = re.match(r'((?:[^"\\]|\\.)*)', text[m.end():])
        try:
            return str(json.loads('"' + (raw.group(1) if raw else "") + '"'))
        except ValueError:
            return None


def _prose(text: str, found: dict[str, set[str]], runtimes: bool, keys: set[str] | None) -> None:
    from aletheia.changes import RUNTIME_CHANGE, sentences, settled

    if not runtimes:
        if "`" in text:
            _settings(text, found, keys, spans=True)
        return
    parts = [p for s in sentences(text)[:30] for p in re.split(r"(?<=[.!?;])\s+", s) if p]
    for sentence in parts[:40]:  # (chat: "we're on Kotlin 2.0 now btw. can you fix …?")
        if not settled(sentence):
            continue  # asked, proposed, planned, negated: no slot is shown holding it
        values: dict[str, set[str]] = {}
        moved: dict[str, str] = {}
        for m in RUNTIME_CHANGE.finditer(sentence):  # "Node 20 → 22": the one it went to
            to = re.match(r"\d+(?:\.\d+)*", sentence[m.end():])
            went = _runtime(_RUNTIME_WORD[m.group(1).lower()], to.group(0)) if to else None
            if went:
                moved[went[0]] = went[1]
        for m in _PROSE_RUNTIME.finditer(sentence):
            slot = _runtime(_RUNTIME_WORD[m.group(1).lower()], m.group(2))
            if slot:
                values.setdefault(slot[0], set()).add(slot[1])
        for name, value in moved.items():
            found.setdefault(name, set()).add(value)
        for name, held in values.items():
            if len(held) == 1 and name not in moved:
                found.setdefault(name, set()).update(held)
            # (two versions and no change: a comparison, a matrix — it shows neither)
        _settings(sentence, found, keys, spans=True)
        _prose_versions(sentence, found, keys)
        for m in re.finditer(r"\bbump(?:ed|s|ing)? (Node(?:\.js)?|Python|Ruby|Java|PHP|Go|Rust|Elixir) "
                             r"(?:\w+ ){0,3}?to v?(\d+(?:\.\d+)?)\b", sentence, re.I):
            slot = _runtime(_RUNTIME_WORD[m.group(1).lower()], m.group(2))
            if slot:
                found.setdefault(slot[0], set()).add(slot[1])


def _tool(title: str, text: str, found: dict[str, set[str]], runtimes: bool, keys: set[str] | None) -> None:
    body = text.split("\n\noutput:\n", 1)
    if title.startswith("Bash: $ ") or title.startswith("Shell: $ "):
        if not runtimes:
            return
        command = title.split("$ ", 1)[1]
        output = body[1] if len(body) > 1 else ""
        for name, version, _ in [*shell_versions(command), *printed_versions(command, output),
                                 *interpreter_versions(output)]:
            held = runtime_value(name, version)
            if held:
                found.setdefault(held[0], set()).add(held[1])
        for name, version in [*tool_versions(command, output), *package_versions(output)]:
            if keys is None or name in keys or set(re.split(r"[-_.]+", name)) <= keys:
                # (a build's metadata names no other version: "Installing Julia 1.11.2+0.x64.linux.gnu"
                # then "julia version 1.11.2" is one value)
                found.setdefault(f"version:{name}", set()).add(version.partition("+")[0])
        return
    head, _, path = title.partition(" ")
    if head not in ("Write", "Edit", "MultiEdit", "Read") or not path:
        return
    if head == "Read":  # what the file held when it was read (numbered lines)
        shown = decoded(body[1], "content") if len(body) > 1 else None
        content = re.sub(r"(?m)^ *\d+(?:→|\t)", "", shown or "")
    elif head == "Write":
        content = body[0][len("input: "):] if body[0].startswith("input: ") else body[0]
        content = re.sub(r'\{"file_path": [^\n]*$', "", content)
    else:
        content = decoded(body[0], "new_string") or ""
    if not content.strip():
        return
    if runtimes:
        held_in: list[tuple[str, str]] = []
        built = dockerfile_runtime(content) if re.search(r"(?:^|/)Dockerfile[\w.-]*$", path) else None
        held_in += [built[:2]] if built else []
        at_path = version_file(path, content)
        held_in += [at_path] if at_path else []
        held_in += [(n, v) for n, v, _ in keyed_versions(content)]
        held_in += [(n, v) for n, v in _manifest_runtime(path, content)]
        for name, version in held_in:
            held = runtime_value(name, version)
            if held:
                found.setdefault(held[0], set()).add(held[1])
    if not re.search(r"(?:^|/)(?:tests?|spec|__tests__|fixtures?)/|(?:^|/)test_|[._-](?:test|spec)\.\w+$", path):
        # (a query naming the file, "the backup timer", asks for every setting in it)
        _settings(content, found, None if keys is None or file_words(path) & keys else keys)


# A manifest's runtime line: `requires-python = ">=3.12"`, `"node": ">=22"` under engines, `go 1.23`
# in go.mod, `rust-version = "1.81"`.
_MANIFEST_LINES = {
    "pyproject.toml": ("python", re.compile(r"^requires-python\s*=\s*[\"'][\^~>=<\s]*(\d+\.\d+)", re.M)),
    "package.json": ("node", re.compile(r"^\s*\"node\"\s*:\s*\"[\^~>=<\s]*v?(\d+)", re.M)),
    "go.mod": ("go", re.compile(r"^go\s+(\d+\.\d+)", re.M)),
    "Cargo.toml": ("rust", re.compile(r"^rust-version\s*=\s*\"(\d+\.\d+)", re.M)),
}


def _manifest_runtime(path: str, content: str) -> list[tuple[str, str]]:
    rule = _MANIFEST_LINES.get(path.rsplit("/", 1)[-1])
    if rule is None:
        return []
    return [(rule[0], v) for v in dict.fromkeys(rule[1].findall(content))][:1]


def slot_values(kind: str, title: str, text: str, *, runtimes: bool = True,
                keys: set[str] | None = None) -> dict[str, str]:
    """The slots a memory shows holding one value each (slot → value); a slot it shows with two
    values (a comparison, a matrix, a file listing both) is none of them.  Only what is asked
    is read: runtimes when ``runtimes``, settings whose key holds one of ``keys`` (all of them
    when None)."""
    found: dict[str, set[str]] = {}
    if kind in _TALK:
        _prose(text, found, runtimes, keys)
    elif kind == "tool_event":
        _tool(title, text, found, runtimes, keys)
    return {slot: next(iter(v)) for slot, v in found.items() if len(v) == 1}


# --- the tool a project uses for one purpose ----------------------------------------------------

# Purposes a project has one tool for at a time (a key of ``concepts.CONCEPTS``: its list names the
# tools), and the names that are also plain words or tools of another purpose (said only in
# backticks or capitalised do they name the tool).
_PURPOSES = {"test-runner": "test", "package-manager": "package manager", "linter": "linter",
             "formatter": "formatter", "type-checker": "type checker", "orm": "orm",
             "queue": "queue", "web-framework": "web framework", "bundler": "bundler",
             "logging": "logging", "http-client": "http client", "validation": "validation",
             "state": "state management", "cli": "cli", "version-manager": "version manager",
             "email": "email", "database": "database", "secrets": "secret", "auth": "auth"}
PURPOSES = tuple(_PURPOSES)
_NOT_THE_PURPOSE = {"test-runner": "playwright cypress hypothesis testcontainers", "package-manager": "pip brew",
                    "queue": "redis", "logging": "logging logger tracing", "database": "redis",
                    "orm": "alembic django", "type-checker": "typescript", "secrets": "env dotenv",
                    # (what sign-in is built from, not the library that does it)
                    "auth": "jwt oauth oidc session cookie bcrypt argon2 passlib token tokens"}
_PLAIN_WORDS = frozenset("""next echo solid alpine entity fetch got mix hex gem make just turbo drone render
    railway fly lambda agenda temporal horizon delayed requests warp rocket spring slim chi gin fiber koa
    remix astro nose ava pest mocha karma atlas goose click commander thor session token go deno ky
    mock hatch rye bundle swift dart room realm""".split())
# Says the tool it names is the one in use from then on ("tests run on Vitest now", "switched the
# tests over to Vitest", "we went with pnpm"); a trial, a comparison, a revert of it are not.
_NOW = re.compile(
    r"\b(?:now|from now on|going forward|from here on|these days|switch(?:ed|es|ing)?\b[^.;]{0,30}?\b(?:to|over)|"
    r"mov(?:e|ed|es|ing)\b[^.;]{0,30}?\b(?:to|onto|over)|migrat(?:e|ed|es|ing)\b[^.;]{0,30}?\bto|"
    r"port(?:ed|ing)?\b[^.;]{0,20}?\bto|convert(?:ed|ing)?\b[^.;]{0,20}?\bto|replac\w*|instead|in favou?r of|"
    r"no longer|any ?more|adopt(?:ed|ing)?|went with|going with|go with|settled on|standardi[sz]e on|"
    r"swap(?:s|ped|ping)?)\b", re.I)
# (a word of a tool's name is none of them: "better-auth")
_TRIAL = re.compile(r"(?<![\w-])(?:try|trying|tried|trial|experiment\w*|evaluat\w*|spike|prototype|benchmark\w*|"
                    r"compar\w*|revert\w*|roll(?:ed|ing)? back|undo|undid|faster|slower|better|worse)(?![\w-])", re.I)


def purpose_tools() -> dict[str, frozenset[str]]:
    if not _TOOLS:
        from aletheia.concepts import CONCEPTS

        for purpose, key in _PURPOSES.items():
            names = set(CONCEPTS[key].split()) - set(_NOT_THE_PURPOSE.get(purpose, "").split())
            _TOOLS[purpose] = frozenset(names)
    return _TOOLS


_TOOLS: dict[str, frozenset[str]] = {}
_NAME = re.compile(r"`[^`\s]{2,40}`|(?<![\w@/.-])[A-Za-z][\w.+-]{1,30}(?<![.-])(?![\w@/-])")


def _by_name() -> dict[str, tuple[str, ...]]:
    """tool name → the purposes it serves (built once)."""
    if not _BY_NAME:
        for purpose, names in purpose_tools().items():
            for name in names:
                _BY_NAME[name] = (*_BY_NAME.get(name, ()), purpose)
    return _BY_NAME


_BY_NAME: dict[str, tuple[str, ...]] = {}


def named_tools(sentence: str) -> dict[str, set[str]]:
    """purpose → the tools of it a sentence names (``Jest``, `pnpm`, "ruff"; a plain word like
    "next" or "click" only in backticks or capitalised)."""
    out: dict[str, set[str]] = {}
    by_name = _by_name()
    for m in _NAME.finditer(sentence):
        raw = m.group(0)
        word = raw.strip("`").lower()
        if word in _PLAIN_WORDS and not (raw.startswith("`") or raw[:1].isupper()):
            continue
        purposes = by_name.get(word)
        if purposes is None and ("-" in word or "." in word):
            # ("better-auth", "next-auth", "mini.test", "socket.io": the vocabulary writes them as
            # one word)
            purposes = by_name.get(word.replace("-", "").replace(".", ""))
        if purposes is None and "-" in word:
            # (a tool named with its family: "ansible-vault" is a vault; "jest-dom" is no jest)
            last = word.rsplit("-", 1)[-1]
            if last not in _PLAIN_WORDS and len(last) >= 4:
                purposes = by_name.get(last)
        for purpose in purposes or ():
            out.setdefault(purpose, set()).add(word)
    return out


def tool_claims(text: str, purposes: tuple[str, ...] | None = None) -> dict[str, tuple[str, bool]]:
    """purpose → (the one tool a prompt or an answer names for it, whether it says that tool is
    now the one in use).  A sentence naming two tools of a purpose says which one only as a
    change statement ("Vitest instead of Jest"); a comparison, a question, a plan, a trial or a
    revert names none."""
    from aletheia.changes import change_pairs, sentences, settled

    named_at_all = named_tools(text)
    if not named_at_all or (purposes is not None and not set(named_at_all) & set(purposes)):
        return {}  # (most candidates name no tool of what is asked: nothing to read)
    seen: dict[str, set[str]] = {}
    now: dict[str, set[str]] = {}
    for whole in sentences(text)[:30]:
        pairs = change_pairs(whole)
        news = {n.strip("`").lower() for _, n in pairs if n}
        olds = {o.strip("`").lower() for o, _ in pairs}
        # (chat writes "… bundle. swap it for valibot" in one: a part each, the change read whole)
        for sentence in [p for p in re.split(r"(?<=[.!?;])\s+", whole) if p][:6]:
            named = named_tools(sentence)
            if not named:
                continue
            marker = _NOW.search(sentence)
            # (read up to the words saying the change: a clause after them is another statement)
            if not settled(sentence, marker.end() if marker and not pairs else None) or _TRIAL.search(sentence):
                for purpose in named:
                    seen.setdefault(purpose, set()).add("?")  # (it names them, says neither is current)
                continue
            says_now = bool(pairs) or marker is not None
            after = {t for group in named_tools(sentence[marker.end():]).values() for t in group} if marker else set()
            # ("move us to better-auth, it has a prisma adapter": the clause the change is said in
            # names what changed; a tool the rest names is no change of its purpose)
            clause = named_tools(re.split(r"[,;:(—–]", sentence[marker.end():], maxsplit=1)[0]) \
                if marker and not pairs else {}
            said_in = set(clause)
            # (the tool the clause names is the new one: "Switched to fourmolu, ormolu's fork")
            in_clause = {t for group in clause.values() for t in group}
            for purpose, tools in named.items():
                tools = tools - olds  # (one it says was replaced is claimed by nothing)
                if not tools:
                    continue
                if len(tools) > 1:
                    tools = (tools & news) or (tools & in_clause) or (tools & after)
                    if len(tools) != 1:
                        seen.setdefault(purpose, set()).add("?")
                        continue
                seen.setdefault(purpose, set()).update(tools)
                if says_now and (not said_in or purpose in said_in):
                    now.setdefault(purpose, set()).update(tools)
    out: dict[str, tuple[str, bool]] = {}
    for purpose, tools in seen.items():
        current = now.get(purpose, set())
        if len(current) == 1:
            out[purpose] = (next(iter(current)), True)
        elif not current and len(tools) == 1 and "?" not in tools:
            out[purpose] = (next(iter(tools)), False)
    return out


# The words a question names a purpose by (all the words of one entry): its own names, not the
# words of what the tool works on ("job", "worker", "server", "model" ask about the work itself:
# "How many subscribers does one delivery job handle?").
_ASKED_BY = {"test-runner": ("test", "spec", "suite", "runner"), "package-manager": ("package manager",
             "dependency", "install"), "linter": ("lint", "linter", "linting"),
             "formatter": ("format", "formatter", "formatting"), "type-checker": ("typecheck", "type check",
             "type checker", "type checking"), "orm": ("orm",), "queue": ("queue", "background job", "broker"),
             "web-framework": ("framework",), "bundler": ("bundler",), "logging": ("logging", "log", "logger"),
             "http-client": ("http client",), "validation": ("validation", "validate"),
             "state": ("state management",), "cli": ("cli", "command line"),
             "version-manager": ("version manager",), "email": ("email", "mail"),
             "database": ("database", "db", "datastore"), "secrets": ("secret", "encrypt", "encrypted")}


def asks_purpose(query_words: set[str], purpose: str) -> bool:
    """Does a query name the purpose by one of its own names ("What runs the unit tests?" →
    test-runner; "Which package manager…?")?"""
    held = query_words | {w[:-1] for w in query_words if w.endswith("s")} | \
        {w[:-3] for w in query_words if w.endswith("ies")} | {w[:-3] + "y" for w in query_words if w.endswith("ies")}
    return any(all(p in held for p in entry.split()) for entry in _ASKED_BY.get(purpose, ()))


# A command that installs packages (`npm install valibot`, `uv add httpx`, `bundle add good_job`)
# and the ones it removes first (`npm uninstall zod && npm install valibot`).
_INSTALL = re.compile(r"(?:^|&&|;)\s*(?:sudo\s+)?(?:npm|pnpm|yarn|bun|uv|poetry|pdm|pip3?|cargo|go|bundle|gem|"
                      r"composer|dotnet|mix)\s+(?:pip\s+)?(add|install|i|get|require|remove|uninstall|rm|un)\b"
                      r"((?:\s+(?!&&)[^\s;&|]+)*)")


def installed_tools(command: str) -> dict[str, tuple[str, bool]]:
    """purpose → (the tool a command installs for it, True): installing a tool of a purpose is
    taking it up; one it removes is not claimed."""
    command = re.sub(r"^(?:Bash|Shell): \$ ", "", command.strip())
    added: set[str] = set()
    for m in _INSTALL.finditer(command):
        names = {re.split(r"[@=<>~\[]", w.lstrip("@").split("/")[-1], maxsplit=1)[0].lower()
                 for w in m.group(2).split() if not w.startswith("-")}
        if m.group(1) in ("remove", "uninstall", "rm", "un"):
            added -= names
        else:
            added |= names
    out: dict[str, tuple[str, bool]] = {}
    for purpose, tools in purpose_tools().items():
        held = added & tools
        if len(held) == 1:
            out[purpose] = (next(iter(held)), True)
    return out
