"""Project knowledge that fills a slot: what the project depends on, which package manager and
runtime it uses, the commands its Makefile and package.json name.  Each finding is a
``Finding``: its kind, its text, the slot (``subject``) and value that let a later finding
supersede it, and whether the project's own files or a passing command confirm it.

Slots come from what the text says — a make target's name, a script's name, the package a
command adds — and from a few closed vocabularies every ecosystem shares (package managers,
language runtimes), never from a list fitted to one project.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from dataclasses import dataclass

from aletheia.claims import (
    KEYED_FILES,
    RUNTIMES,
    dockerfile_runtime,
    keyed_versions,
    printed_versions,
    runtime_value,
    shell_versions,
    version_file,
)
from aletheia.extract.items import cap

# Package managers a project's dependencies are managed with (the program's own name).
PACKAGE_MANAGERS = frozenset({
    "pip", "pip3", "uv", "poetry", "pipenv", "pdm", "hatch", "rye", "conda", "mamba", "micromamba",
    "npm", "pnpm", "yarn", "bun", "deno", "cargo", "go", "bundle", "gem", "composer", "mix",
    "dotnet", "swift", "dart", "flutter",
})
_ADD = frozenset({"add", "install", "i", "get", "require"})
_REMOVE = frozenset({"remove", "uninstall", "rm", "un", "del"})
_SYNC = frozenset({"sync", "ci", "lock", "install", "i", "update", "upgrade"})
# Flags that take the next word as their value (so it is not a package).
_VALUE_FLAGS = frozenset({
    "--group", "-G", "--extra", "-E", "--source", "--python", "-p", "--index-url", "-i",
    "--extra-index-url", "--filter", "-F", "-C", "--cwd", "--registry", "--tag", "--target",
    "--optional", "--only", "-r", "--requirement", "-c", "--constraint", "--package",
    "--features", "--git", "--branch", "--rev", "--path", "--rename", "--version", "--vers",
})
_DEV_FLAGS = frozenset({"-D", "--dev", "--save-dev", "-d", "--group=dev", "-Gdev"})
@dataclass
class Finding:
    kind: str
    text: str
    subject: str | None = None
    value: str | None = None
    confirmed: int = 0
    ends: bool = False  # the slot has no current value after it (a dependency removed)


# --- package managers and dependencies -------------------------------------------------------


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def package_name(token: str) -> str | None:
    """``"sqlalchemy[asyncio]>=2.0"`` → ``sqlalchemy``; ``@tanstack/react-query@5`` →
    ``@tanstack/react-query``; paths, URLs and flags → None."""
    tok = token.strip().strip("'\"")
    if not tok or tok.startswith(("-", ".", "/", "~")) or "://" in tok or tok.startswith("git+"):
        return None
    if tok.startswith("@"):
        scope, _, rest = tok[1:].partition("/")
        name = "@" + scope + "/" + rest.split("@", 1)[0] if rest else None
    else:
        name = re.split(r"[\[<>=!~;@\s]", tok, maxsplit=1)[0]
    if not name or not re.fullmatch(r"@?[A-Za-z0-9][\w.\-/]*", name) or name.endswith((".txt", ".toml")):
        return None
    return name


def install_command(command: str) -> tuple[str, str, list[tuple[str, bool]]] | None:
    """(package manager, ``add`` / ``remove`` / ``sync``, [(package, dev?)]) for a command that
    changes or installs the project's dependencies; None for anything else."""
    words = _words(command)
    while words and words[0] in ("sudo", "time", "command"):
        words = words[1:]
    if len(words) >= 3 and re.fullmatch(r"python[\d.]*", words[0]) and words[1] == "-m":
        words = words[2:]
    if len(words) < 2:
        return None
    pm = words[0].rsplit("/", 1)[-1]
    if pm not in PACKAGE_MANAGERS:
        return None
    rest = words[1:]
    if pm == "uv" and rest[0] == "pip":
        rest = rest[1:]
    if pm == "go" and rest[:1] == ["mod"]:
        return (pm, "sync", []) if rest[1:2] in (["tidy"], ["download"]) else None
    if not rest:
        return None
    verb = rest[0]
    packages: list[tuple[str, bool]] = []
    dev = False
    skip = False
    for tok in rest[1:]:
        if skip:
            skip = False
            dev = dev or tok == "dev"
            continue
        if tok in _DEV_FLAGS:
            dev = True
            continue
        if tok in _VALUE_FLAGS:
            skip = True
            continue
        if tok.startswith("-"):
            if tok.startswith("--group=") and tok.endswith("dev"):
                dev = True
            continue
        name = package_name(tok)
        if name:
            packages.append((name, dev))
    if verb in _REMOVE:
        return (pm, "remove", packages) if packages else None
    if verb in _ADD and packages and not (pm in ("pip", "pip3", "uv") and "-e" in rest):
        return pm, "add", packages
    if verb in _SYNC:
        return pm, "sync", []
    if verb == "run" and pm in ("npm", "pnpm", "yarn", "bun", "uv", "poetry", "pdm", "pipenv"):
        return pm, "run", []
    return None


# These texts name no command: a fact that quotes `npm install x` would be retired with npm
# when the project moves to another package manager, though x is still a dependency.
def manager_finding(pm: str, verb: str = "") -> Finding:
    how = f" (`{pm} {verb}`)" if verb in ("add", "install", "i", "get") else ""
    return Finding("stack", f"Package manager: `{pm}`{how}.", "tool:package-manager", pm, 1)


def dependency_finding(name: str, dev: bool) -> Finding:
    label = "Dev dependency" if dev else "Dependency"
    return Finding("stack", f"{label}: `{name}`.", f"dep:{name.lower()}",
                   "dev" if dev else "runtime", 1)


def removed_finding(name: str) -> Finding:
    return Finding("stack", f"`{name}` was removed from the dependencies.",
                   f"dep:{name.lower()}", "(removed)", 1, ends=True)


# Julia's package manager called from code: `julia --project=. -e 'using Pkg; Pkg.add(["JuMP", "HiGHS"])'`.
_JULIA_PKG = re.compile(r"\bPkg\.(add|rm)\(\s*(\[[^\]]*\]|\"[^\"]*\")")


# R's package managers called from code: `Rscript -e 'renv::install(c("sf", "ggplot2"))'`,
# `install.packages("x")`, `pak::pkg_install("owner/repo")`, `remotes::install_github(…)`;
# `renv::remove`/`remove.packages` take one out.
_R_PKG = re.compile(r"(?<![\w.:])(?:install\.packages|remove\.packages|(?:renv|pak|remotes|devtools|BiocManager)::"
                    r"(?:install(?:_\w+)?|pkg_install|pak|remove))\(\s*(c\([^)]*\)|\"[^\"]*\"|'[^']*')")
_R_NAME = re.compile(r"^(?:[\w.-]+/)?(?:\w+::)?([A-Za-z][A-Za-z0-9.]*)(?:@\S*)?$")


def _r_calls(command: str) -> list[Finding]:
    out: list[Finding] = []
    for m in _R_PKG.finditer(command):
        gone = "remove" in m.group(0).split("(", 1)[0]
        for quoted in re.findall(r"[\"']([^\"']+)[\"']", m.group(1)):
            name = _R_NAME.match(quoted.strip())
            if name:
                out.append(removed_finding(name.group(1)) if gone else dependency_finding(name.group(1), False))
    return out


def install_findings(command: str) -> list[Finding]:
    """What a passing install command says about the project."""
    parsed = install_command(command)
    if parsed is None:
        calls = list(_JULIA_PKG.finditer(command)) if "julia" in command else []
        return ([(dependency_finding(name, False) if m.group(1) == "add" else removed_finding(name))
                 for m in calls for name in re.findall(r"\"([A-Za-z][\w.]*)\"", m.group(2))]
                + _r_calls(command))[:30]
    pm, verb, packages = parsed
    if pm in ("pip", "pip3") and verb not in ("add", "remove"):
        return []
    verb_used = _words(command)[1] if verb == "add" and len(_words(command)) > 1 else ""
    out = [manager_finding(pm, verb_used)] if pm not in ("pip", "pip3") else []
    for name, dev in packages[:30]:
        if verb == "add":
            out.append(dependency_finding(name, dev))
        elif verb == "remove":
            out.append(removed_finding(name))
    return out


# --- the language the sources are written in -------------------------------------------------

# A source file's extension → its language (a closed vocabulary every stack shares).  Left out:
# extensions that name no one language (`.h`, `.m`, `.v`, `.d`), build and config scripts
# (`.kts`, `.nix`, `.gradle`), shell and SQL (every project has some).
_LANGUAGES = {
    "py": "Python", "ts": "TypeScript", "tsx": "TypeScript", "mts": "TypeScript", "js": "JavaScript",
    "jsx": "JavaScript", "mjs": "JavaScript", "rs": "Rust", "go": "Go", "kt": "Kotlin", "java": "Java",
    "scala": "Scala", "swift": "Swift", "rb": "Ruby", "php": "PHP", "cs": "C#", "fs": "F#",
    "vb": "Visual Basic", "hs": "Haskell", "ml": "OCaml", "ex": "Elixir", "exs": "Elixir", "erl": "Erlang",
    "gleam": "Gleam", "clj": "Clojure", "cljs": "ClojureScript", "elm": "Elm", "zig": "Zig", "jl": "Julia",
    "r": "R", "lua": "Lua", "dart": "Dart", "c": "C", "cpp": "C++", "cc": "C++", "cxx": "C++",
    "hpp": "C++", "nim": "Nim", "cr": "Crystal", "pl": "Perl", "groovy": "Groovy",
    "tf": "Terraform (HCL)", "sol": "Solidity", "purs": "PureScript", "rkt": "Racket", "f90": "Fortran",
    "ada": "Ada", "adb": "Ada", "pas": "Pascal", "cob": "COBOL", "odin": "Odin",
}
_NOT_OWN_SOURCE = re.compile(r"(?:^|/)(?:node_modules|vendor|third_party|\.venv|venv|site-packages|"
                             r"dist|build|target|\.build|_build|deps)/")


def source_language(path: str) -> Finding | None:
    """A source file of the project that a session wrote or edited says the language it is
    written in (`src/Offers.kt` → Kotlin): one fact per language, its evidence the sessions
    that edit such files (the block takes it from two sessions on)."""
    base = path.rsplit("/", 1)[-1]
    ext = base.rsplit(".", 1)[-1].lower() if "." in base.lstrip(".") else ""
    name = _LANGUAGES.get(ext, "")
    if not name or _NOT_OWN_SOURCE.search(path):
        return None
    return Finding("stack", f"Written in {name}.", f"lang:{name.lower()}", name, 0)


# --- runtimes ----------------------------------------------------------------------------------


def runtime_finding(name: str, version: str, how: str, *, confirmed: int = 1) -> Finding | None:
    held = runtime_value(name, version)
    if held is None:
        return None
    subject, value = held
    return Finding("stack", f"Runtime: {value} ({how}).", subject, value, confirmed)


def version_findings(command: str, output: str) -> list[Finding]:
    """``python3.12 --version`` → Python 3.12; ``node -v`` → Node 22; ``echo "22" > .nvmrc`` →
    Node 22."""
    out = [runtime_finding(name, version, how) for name, version, how in shell_versions(command)]
    out += [runtime_finding(name, version, how) for name, version, how in printed_versions(command, output)]
    return [f for f in out if f]


# --- the project's own files ---------------------------------------------------------------


def _pep508_names(values: object) -> list[str]:
    if not isinstance(values, list):
        return []
    return [n for n in (package_name(v) for v in values if isinstance(v, str)) if n]


def _pyproject(path: str, content: str) -> list[Finding]:
    try:
        data = tomllib.loads(content)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    out: list[Finding] = []
    how = f"`{path}`"
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    assert isinstance(project, dict)
    for name in _pep508_names(project.get("dependencies")):
        out.append(dependency_finding(name, False))
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        for group, values in groups.items():
            for name in _pep508_names(values):
                out.append(dependency_finding(name, group in ("dev", "test", "lint")))
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    assert isinstance(tool, dict)
    poetry = tool.get("poetry") if isinstance(tool.get("poetry"), dict) else {}
    assert isinstance(poetry, dict)
    deps = poetry.get("dependencies")
    if isinstance(deps, dict):
        for name in deps:
            if name != "python":
                out.append(dependency_finding(name, False))
        py = deps.get("python")
        if isinstance(py, str):
            found = runtime_finding("python", py.lstrip("^~>=< "), how)
            if found:
                out.append(found)
    pgroups = poetry.get("group")
    if isinstance(pgroups, dict):
        for group, body in pgroups.items():
            gdeps = body.get("dependencies") if isinstance(body, dict) else None
            if isinstance(gdeps, dict):
                out.extend(dependency_finding(n, group in ("dev", "test")) for n in gdeps)
    requires = project.get("requires-python")
    if isinstance(requires, str):
        found = runtime_finding("python", requires.lstrip("^~>=< "), how)
        if found:
            out.append(found)
    return out


def _package_json(path: str, content: str) -> list[Finding]:
    try:
        data = json.loads(content)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    out: list[Finding] = []
    how = f"`{path}`"
    for key, dev in (("dependencies", False), ("devDependencies", True)):
        deps = data.get(key)
        if isinstance(deps, dict):
            out.extend(dependency_finding(n, dev) for n in list(deps)[:60] if isinstance(n, str))
    engines = data.get("engines")
    if isinstance(engines, dict) and isinstance(engines.get("node"), str):
        found = runtime_finding("node", engines["node"].lstrip("^~>=< "), how)
        if found:
            out.append(found)
    manager = data.get("packageManager")
    if isinstance(manager, str) and "@" in manager:
        pm = manager.split("@", 1)[0]
        if pm in PACKAGE_MANAGERS:
            out.append(Finding("stack", f"Package manager: `{pm}` (`packageManager` in {how}).",
                               "tool:package-manager", pm, 1))
    scripts = data.get("scripts")
    if isinstance(scripts, dict):
        for name, value in list(scripts.items())[:20]:
            if isinstance(name, str) and isinstance(value, str):
                out.append(Finding("command", f"Script `{name}` runs `{cap(value, 100)}` ({how}).",
                                   _slot_in("script", name, path), value, 1))
    return out


def _slot_in(family: str, name: str, path: str) -> str:
    """``script:build`` for the project's own package.json; ``script:build@apps/web`` for a
    package of a workspace (a monorepo has a ``build`` in every package)."""
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    return f"{family}:{name}@{folder}" if folder else f"{family}:{name}"


_MAKE_TARGET = re.compile(r"^([A-Za-z0-9][\w.-]*)\s*:(?!=)([^\n]*)$")


def makefile_targets(content: str) -> list[tuple[str, str]]:
    """(target, first recipe line) for each rule with a recipe."""
    out: list[tuple[str, str]] = []
    lines = content.splitlines()
    for i, line in enumerate(lines):
        m = _MAKE_TARGET.match(line)
        if not m or m.group(1).startswith(".") or "=" in m.group(2).split("#")[0]:
            continue
        recipe = []
        for follow in lines[i + 1:i + 6]:
            if not follow.startswith("\t"):
                break
            step = follow.strip().lstrip("@-").strip()
            if step:
                recipe.append(step)
        if recipe:
            out.append((m.group(1), " && ".join(recipe)))
    return out


def _makefile(path: str, content: str) -> list[Finding]:
    return [
        Finding("command", f"`make {target}` runs `{cap(recipe, 110)}` (`{path}`).",
                _slot_in("make", target, path), recipe, 1)
        for target, recipe in makefile_targets(content)[:20]
    ]


def _dockerfile(path: str, content: str) -> list[Finding]:
    built = dockerfile_runtime(content)
    found = runtime_finding(built[0], built[1], f"`{path}` builds `FROM {built[2]}`") if built else None
    return [found] if found else []


def keyed_runtimes(path: str, content: str) -> list[Finding]:
    """The runtimes a file names by a version key (`node-version: 22`, see ``claims``)."""
    out = [runtime_finding(name, version, f"`{path}` {cap(said, 40)}") for name, version, said in keyed_versions(content)]
    return [f for f in out if f]


def _version_file(path: str, content: str) -> list[Finding]:
    held = version_file(path, content)
    found = runtime_finding(held[0], held[1], f"`{path}`") if held else None
    return [found] if found else []


def _requirements(path: str, content: str) -> list[Finding]:
    names = [package_name(line.split("#", 1)[0]) for line in content.splitlines()]
    return [dependency_finding(n, "dev" in path) for n in names if n][:60]


_VERSIONISH = re.compile(r"^(?:[\^~>=<*]|\d|workspace:|npm:|latest$|next$)")


def package_json_fragment(path: str, fragment: str) -> list[Finding]:
    """The scripts an edit of package.json adds or changes, from its new text alone
    (``"typecheck": "tsc --noEmit",``): a value with a space is a command, a version is not."""
    text = fragment.strip().rstrip(",")
    data = None
    for candidate in (text, "{" + text + "}", "{" + text + "}}", "{" + text.rstrip("}") + "}"):
        try:
            data = json.loads(candidate)
            break
        except ValueError:
            continue
    if not isinstance(data, dict):
        return []
    inner = data.get("scripts")
    scripts: dict[str, object] = inner if isinstance(inner, dict) else data
    out = []
    for name, value in list(scripts.items())[:20]:
        if (isinstance(name, str) and isinstance(value, str) and " " in value.strip()
                and not _VERSIONISH.match(value) and re.fullmatch(r"[\w:.-]+", name)):
            out.append(Finding("command", f"Script `{name}` runs `{cap(value, 100)}` (`{path}`).",
                               _slot_in("script", name, path), value, 1))
    return out


def _cargo_toml(path: str, content: str) -> list[Finding]:
    try:
        data = tomllib.loads(content)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    out: list[Finding] = []
    for key, dev in (("dependencies", False), ("dev-dependencies", True), ("build-dependencies", True)):
        deps = data.get(key)
        if isinstance(deps, dict):
            out.extend(dependency_finding(n, dev) for n in list(deps)[:60] if isinstance(n, str))
    package = data.get("package") if isinstance(data.get("package"), dict) else {}
    assert isinstance(package, dict)
    version = package.get("rust-version")
    if isinstance(version, str):
        found = runtime_finding("rust", version, f"`{path}` rust-version")
        if found:
            out.append(found)
    return out


def _julia_project(path: str, content: str) -> list[Finding]:
    """A Julia `Project.toml`: its ``[deps]`` (and ``[extras]``, the test-only ones)."""
    try:
        data = tomllib.loads(content)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    out: list[Finding] = []
    for key, dev in (("deps", False), ("extras", True)):
        deps = data.get(key)
        if isinstance(deps, dict):
            out.extend(dependency_finding(n, dev) for n in list(deps)[:60] if isinstance(n, str))
    return out


_DCF_FIELD = re.compile(r"^(Depends|Imports|LinkingTo|Suggests):((?:.*)(?:\n[ \t]+.*)*)", re.M)


def _r_description(path: str, content: str) -> list[Finding]:
    """An R package's `DESCRIPTION`: Depends/Imports/LinkingTo (Suggests: the test-only ones),
    but R itself."""
    out: list[Finding] = []
    for m in _DCF_FIELD.finditer(content):
        for item in m.group(2).split(","):
            name = re.match(r"\s*([A-Za-z][A-Za-z0-9.]*)\s*(?:\(|$)", item)
            if name and name.group(1) != "R":
                out.append(dependency_finding(name.group(1), m.group(1) == "Suggests"))
    return out[:60]


_GO_REQUIRE = re.compile(r"^\s*(?:require\s+)?([\w.-]+\.[\w.-]+/[\w./-]+)\s+v\d", re.M)
_GO_VERSION = re.compile(r"^go\s+(\d+\.\d+)", re.M)


def _go_mod(path: str, content: str) -> list[Finding]:
    out = [dependency_finding(m, "// indirect" in line)
           for line in content.splitlines() for m in _GO_REQUIRE.findall(line)][:60]
    version = _GO_VERSION.search(content)
    if version:
        found = runtime_finding("go", version.group(1), f"`{path}`")
        if found:
            out.append(found)
    return out


_GEM = re.compile(r"^\s*gem\s+['\"]([\w.-]+)['\"]", re.M)


def _gemfile(path: str, content: str) -> list[Finding]:
    return [dependency_finding(name, False) for name in _GEM.findall(content)][:60]


# mix.exs: a dependency is a tuple `{:bandit, "~> 1.5"}` (`only: :test` keeps it out of the app);
# an alias names a list of mix tasks, `precommit: ["format --check-formatted", "credo --strict", "test"]`.
_MIX_DEP = re.compile(r"^\s*\{:(\w+),[^}\n]*\}", re.M)
_MIX_ALIAS = re.compile(r"^\s*(?:\"([\w.:-]+)\"|([a-z][\w.]*)):\s*\[((?:\s*\"[^\"\n]+\"\s*,?)+)\s*\],?\s*$", re.M)
_MIX_TASK = re.compile(r"[a-z][\w.]*(?:\s.*)?")


def mix_findings(path: str, content: str) -> list[Finding]:
    """What a mix.exs (or the lines of it an edit shows) says: its dependencies and its aliases
    (named task lists, as a Makefile's targets are)."""
    out: list[Finding] = []
    for m in _MIX_DEP.finditer(content):
        line = m.group(0)
        out.append(dependency_finding(m.group(1), bool(re.search(r"only:\s*\[?:(?:test|dev)\b", line))))
    for m in _MIX_ALIAS.finditer(content):
        name = m.group(1) or m.group(2)
        tasks = re.findall(r"\"([^\"\n]+)\"", m.group(3))
        # a list of paths or names (`elixirc_paths: ["lib"]`) is not a task list
        if not all(_MIX_TASK.fullmatch(t) for t in tasks) or not any(" " in t or "." in t for t in tasks):
            continue
        recipe = " && ".join(tasks)
        out.append(Finding("command", f"`mix {name}` runs `{cap(recipe, 110)}` (`{path}`).",
                           _slot_in("mix", name, path), recipe, 1))
    return out[:60]


# flake.nix: its inputs are what the project is built from (`home-manager.url = "github:…"`,
# `sops-nix = { url = "github:Mic92/sops-nix"; … }`, `inputs.x.url = …`); a branch or tag that
# names a release (`nixos-25.05`, `release-25.05`, `v1.2`) is the version the flake follows.
_FLAKE_INPUT = re.compile(r"^\s*(?:inputs\.)?([A-Za-z][\w-]*)(?:\.url\s*=|\s*=\s*\{\s*url\s*=)\s*\"([^\"]+)\"", re.M)
_FLAKE_REF = re.compile(r"^(?:github|gitlab|sourcehut):[^/]+/[^/?]+/([^/?\"]*\d+\.\d+[^/?\"]*)|[?&]ref=([^&\"]*\d+\.\d+[^&\"]*)")


def flake_findings(path: str, content: str) -> list[Finding]:
    """What a flake.nix says: its inputs, and the release each input's branch or tag follows."""
    out: list[Finding] = []
    for m in _FLAKE_INPUT.finditer(content):
        name, url = m.group(1), m.group(2)
        out.append(dependency_finding(name, False))
        ref = _FLAKE_REF.search(url)
        if ref:
            version = ref.group(1) or ref.group(2)
            out.append(Finding("stack", f"`{name}` follows `{version}` (`{path}`).", f"version:{name.lower()}",
                               f"{name} {version}", 1))
    return out[:60]


# A dependency as one line of a manifest shows it (an edit shows a few lines, not the file).
_LINE_DEPS = (
    (re.compile(r"mix\.exs"), _MIX_DEP),
    (re.compile(r"requirements[\w.-]*\.txt"), re.compile(r"^\s*([A-Za-z0-9][\w.\[\],-]*\s*(?:[=<>!~]=?.*)?)$")),
    (re.compile(r"pyproject\.toml"), re.compile(r"^\s*[\"']([A-Za-z0-9][^\"']*)[\"'],?\s*$")),
    (re.compile(r"package\.json"), re.compile(r"^\s*\"(@?[\w.-]+(?:/[\w.-]+)?)\":\s*\"(?:[\^~>=<*\d]|workspace:|npm:|latest)")),
    (re.compile(r"Gemfile"), _GEM),
    (re.compile(r"flake\.nix"), _FLAKE_INPUT),
)


def edited_dependencies(path: str, old: str, new: str) -> list[str]:
    """The dependencies an edit of a manifest takes out: named on a line of the old text, nowhere
    in the new one (``celery==5.3.6`` → ``dramatiq==1.16``: celery).  A changed version keeps
    its name."""
    base = path.rsplit("/", 1)[-1]
    pattern = next((line for name, line in _LINE_DEPS if name.fullmatch(base)), None)
    if pattern is None:
        return []

    def names(text: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for line in text.splitlines():
            m = pattern.match(line)
            name = package_name(m.group(1)) if m and not base.endswith(".json") and base not in ("Gemfile", "mix.exs", "flake.nix") \
                else (m.group(1) if m else None)
            if name:
                out.setdefault(name.lower(), name)
        return out

    before, after = names(old), names(new)
    # still named in the new text ("dramatiq[redis]" keeps redis): not taken out
    return [name for key, name in before.items() if key not in after
            and not re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", new, re.I)][:20]


# --- settings in an example environment file ---------------------------------------------------

# Template files that document a project's settings and are committed: `.env.example`,
# `.env.sample`, `api.env.example`, `config/*.example`.  Never `.env` itself (it holds secrets).
_ENV_TEMPLATE = re.compile(r"(?:[\w-]+\.)?env\.(?:example|sample|template|dist|defaults)|\.env\.(?:example|sample|template|dist)",
                           re.I)
_ENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Z][A-Z0-9_]{1,60})\s*=\s*(.*?)\s*$")
_SECRET_KEY = re.compile(r"SECRET|TOKEN|PASSW|PASS(?:$|_)|(?:^|_)KEY(?:$|_)|PRIVATE|CREDENTIAL|SALT|AUTH|"
                         r"SIGNING|CERT|DSN|COOKIE|SESSION_ID|ACCOUNT_SID|WEBHOOK|_PAT$")
_PLACEHOLDER = re.compile(r"^(?:your|change|replace|put|insert|enter|example|todo|xxx|<|\$\{|\.\.\.)|xxx|<[^>]*>", re.I)
_LOCAL = re.compile(r"^(?:\w+://)?(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[?::1\]?)(?::\d+)?(?:/\S*)?$", re.I)
_RANDOMISH = re.compile(r"^(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[A-Za-z0-9+/=_.:-]{20,}$")


def env_template(path: str) -> bool:
    base = path.rsplit("/", 1)[-1]
    if _ENV_TEMPLATE.fullmatch(base):
        return True
    return base.endswith((".example", ".sample")) and "/config/" in f"/{path}"


def env_value(key: str, raw: str) -> str | None:
    """The value a template sets, when it says a choice: not a secret (by its key or its shape),
    not a placeholder, not a local address, not empty."""
    from aletheia.redact import redact

    value = raw
    if value[:1] in ("'", '"') and value[-1:] == value[:1] and len(value) >= 2:
        value = value[1:-1]
    else:
        value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
    if (not value or len(value) > 60 or _SECRET_KEY.search(key) or _PLACEHOLDER.search(value)
            or _LOCAL.match(value) or _RANDOMISH.match(value) or "@" in value or "`" in value
            or redact(f"{key}={value}") != f"{key}={value}"):
        return None
    return value


def env_settings(path: str, content: str) -> list[Finding]:
    """``QUEUE_CONNECTION=database`` in `.env.example` → a setting in slot ``env:QUEUE_CONNECTION``
    (a later value of the key supersedes it)."""
    out: list[Finding] = []
    for line in content.splitlines():
        m = _ENV_LINE.match(line)
        if not m:
            continue
        value = env_value(m.group(1), m.group(2))
        if value is not None:
            out.append(Finding("fact", f"`{m.group(1)}={value}` (`{path}`).",
                               _slot_in("env", m.group(1), path), value, 1))
    return out[:60]


def env_keys(content: str) -> list[str]:
    return [m.group(1) for m in map(_ENV_LINE.match, content.splitlines()) if m]


def removed_setting(path: str, key: str) -> Finding:
    return Finding("fact", f"`{key}` was removed from `{path}`.", _slot_in("env", key, path),
                   "(removed)", 1, ends=True)


def file_findings(path: str, content: str) -> list[Finding]:
    """What a manifest, Makefile, Dockerfile or version file of the project says."""
    base = path.rsplit("/", 1)[-1]
    lower = base.lower()
    if base == "pyproject.toml":
        return _pyproject(path, content)
    if base == "package.json" and "node_modules" not in path:
        return _package_json(path, content)
    if lower in ("makefile", "gnumakefile"):
        return _makefile(path, content)
    if lower == "dockerfile" or lower.startswith("dockerfile."):
        return _dockerfile(path, content) or keyed_runtimes(path, content)
    if base in (".nvmrc", ".node-version", ".python-version"):
        return _version_file(path, content)
    if re.fullmatch(r"requirements[\w.-]*\.txt", lower):
        return _requirements(path, content)
    if base == "Cargo.toml":
        return _cargo_toml(path, content)
    if base in ("Project.toml", "JuliaProject.toml"):
        return _julia_project(path, content)
    if base == "DESCRIPTION":
        return _r_description(path, content)
    if base == "go.mod":
        return _go_mod(path, content)
    if base == "Gemfile":
        return _gemfile(path, content)
    if base == "mix.exs":
        return mix_findings(path, content)
    if base == "flake.nix":
        return flake_findings(path, content)
    if env_template(path):
        return env_settings(path, content)
    if KEYED_FILES.search(path):
        return keyed_runtimes(path, content)
    return []


# --- versions an edit bumps ------------------------------------------------------------------

_V = r"v?(\d+(?:\.\d+)+(?:[-+.][\w.+-]*)?|\d{4}\.\d{2}\.\d{2})"
# (file name, a line that pins one version: the name, then the version).  A manifest's own
# ``version`` key is the project's version (named ``project``).
_PINS: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    # a Gradle version catalog: `kotlin = "2.0.21"`, `composeBom = "2024.10.01"`
    (re.compile(r"[\w.-]*\.versions\.toml"), re.compile(r"^\s*([A-Za-z][\w.-]*)\s*=\s*\"" + _V + r"\"\s*$")),
    # the Gradle wrapper: `distributionUrl=…/gradle-8.10.2-bin.zip`
    (re.compile(r"gradle-wrapper\.properties"), re.compile(r"^\s*distributionUrl\s*=.*/(gradle)-" + _V + r"-(?:bin|all)\.zip")),
    # CMake: `project(sonoview VERSION 0.4.0 …)`, `find_package(Qt6 6.7 REQUIRED …)`
    (re.compile(r"CMakeLists\.txt|[\w.-]+\.cmake"),
     re.compile(r"^\s*(?:project\s*\(\s*[\w.-]+\s+(VERSION)|find_package\s*\(\s*([\w.-]+))\s+" + _V, re.I)),
    # requirements: `ansible-core==2.17.5`
    (re.compile(r"requirements[\w.-]*\.txt|constraints[\w.-]*\.txt"), re.compile(r"^\s*([A-Za-z0-9][\w.-]*)(?:\[[\w,]+\])?\s*===?\s*" + _V + r"\s*(?:[;#].*)?$")),
    # pyproject/Cargo `version = "0.4.0"`, a pinned PEP 508 line `"fastapi==0.115.0",`, Cargo `serde = "1.0.210"`
    (re.compile(r"pyproject\.toml|Cargo\.toml"),
     re.compile(r"^\s*(?:\"([A-Za-z0-9][\w.-]*)(?:\[[\w,]+\])?\s*===?\s*" + _V + r"\"\s*,?|([A-Za-z][\w-]*)\s*=\s*(?:\{\s*version\s*=\s*)?\"[\^~=]?" + _V + r"\".*)$")),
    # package.json / vcpkg.json: `"vite": "^5.4.8"`, `"version": "0.4.0"`
    (re.compile(r"package\.json|vcpkg\.json|composer\.json"), re.compile(r"^\s*\"(@?[\w.-]+(?:/[\w.-]+)?)\"\s*:\s*\"[\^~=>]*" + _V + r"\"\s*,?\s*$")),
    # asdf/mise `.tool-versions`: `nodejs 22.11.0`
    (re.compile(r"\.tool-versions"), re.compile(r"^\s*([a-z][\w-]*)\s+" + _V + r"\s*$")),
    # go.mod: `go 1.23`, `toolchain go1.23.2` (its own key), `github.com/x/y v1.2.3`
    (re.compile(r"go\.mod"), re.compile(r"^\s*(?:require\s+)?(go|toolchain|[\w.-]+\.[\w.-]+/[\w./-]+)\s+(?:go)?" + _V + r"(?:\s*//.*)?$")),
    # mix.exs: `{:phoenix, "~> 1.7.14"}`, `version: "0.4.0"`
    (re.compile(r"mix\.exs"), re.compile(r"^\s*(?:\{:(\w+),\s*\"[~>= ]*|(version|elixir):\s*\"[~>= ]*)" + _V + r"\"")),
)


def _pins(pattern: re.Pattern[str], text: str) -> dict[str, tuple[str, str]]:
    """lower name → (name, version) for each line of ``text`` that pins one."""
    out: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        m = pattern.match(line)
        if not m:
            continue
        groups = [g for g in m.groups() if g]
        if len(groups) >= 2:
            name = "project" if groups[0].lower() == "version" else groups[0]
            out.setdefault(name.lower(), (name, groups[1]))
    return out


def edited_versions(path: str, old: str, new: str) -> list[Finding]:
    """The versions an edit of a manifest bumps, each as the current version of its slot
    (``kotlin = "2.0.0"`` → ``"2.0.21"`` in `gradle/libs.versions.toml`: kotlin 2.0.21), so the
    bump supersedes what was known of the old one.  A runtime goes to its ``runtime:`` slot
    (go.mod's ``go 1.23`` → Go 1.23); anything else to ``version:NAME``.  Only a version the
    edit changes at the same name: a line the edit adds or keeps says no bump."""
    base = path.rsplit("/", 1)[-1]
    pattern = next((line for name, line in _PINS if name.fullmatch(base)), None)
    if pattern is None or "node_modules/" in path:
        return []
    before, after = _pins(pattern, old), _pins(pattern, new)
    out: list[Finding] = []
    for key, (name, was) in before.items():
        now = after.get(key, ("", was))[1]
        if now == was:
            continue
        if name == "project":
            out.append(Finding("stack", f"The project's version: {now} (`{path}`).",
                               _slot_in("version", "project", path), f"version {now}", 1))
            continue
        found = runtime_finding(name, now, f"`{path}`")
        out.append(found or Finding("stack", f"`{name}` is at {now} (`{path}`).", f"version:{key}", f"{name} {now}", 1))
    return out[:12]


# --- versions a command sets or reports --------------------------------------------------------

_TOOL_VERSION_CMD = re.compile(r"^(?:\./)?([\w./-]+?)\s+(?:--version|-version|-v|-V|version)\s*(?:$|\||2>&1|;)")
# what a package manager reports it set: pipx's `upgraded package ansible-core from 2.16.6 to
# 2.17.5` / `installed package ansible-core 2.17.5,`, and vcpkg's plan lines
# (`qtbase[core,gui]:x64-linux@6.7.2#2`) under "will be built and installed" or "will be removed".
_PIPX = re.compile(r"^\s*(?:upgraded|installed) package ([\w.-]+)(?: from \S+ to| )\s*v?(\d+(?:\.\d+)+)\b", re.M)
_VCPKG = re.compile(r"^\s*(?:\*\s+)?([a-z0-9][a-z0-9-]*)(?:\[[^\]\s]*\])?:(?:x64|x86|arm64|arm|wasm32|riscv64)-[\w-]+@"
                    r"(\d[\w.-]*?)(?:#\d+)?\s*(?:->.*)?$")
# the version a wrapper command sets: `./gradlew wrapper --gradle-version 8.10.2`
_SET_VERSION = re.compile(r"\b(gradle)w?\s+wrapper\b.*?--gradle-version[=\s]+(\d+(?:\.\d+)+)")
_RUNTIME_NAMES = frozenset({*RUNTIMES, "python3", "pip", "pip3", "npm"})
_BARE_VERSION = re.compile(r"\s*v?\d+\.\d+(?:\.\d+)?\s*")
_VCPKG_HEAD = re.compile(r"^\s*The following packages (?:are|will be) (.*?):?\s*$", re.I)


def _vcpkg_plan(output: str) -> tuple[dict[str, str], set[str]]:
    """({package: version} the plan installs or has, {packages it removes and does not put back})."""
    have: dict[str, str] = {}
    gone: set[str] = set()
    removing = False
    for line in output.splitlines():
        head = _VCPKG_HEAD.match(line)
        if head:
            removing = "remove" in head.group(1).lower()
            continue
        m = _VCPKG.match(line)
        if m:
            if removing:
                gone.add(m.group(1))
            else:
                have.setdefault(m.group(1), m.group(2))
    return have, gone - set(have)


def _version_finding(name: str, version: str, how: str) -> Finding | None:
    if name.lower() in _RUNTIME_NAMES:
        return None  # (a runtime's version command is ``version_findings``')
    return Finding("stack", f"`{name}` is at {version} ({how}).", f"version:{name.lower()}", f"{name} {version}", 1)


def command_versions(command: str, output: str) -> list[Finding]:
    """The versions a passing command sets or reports: a tool's own version command and the
    line of its output that names it (``./gradlew --version`` → ``Gradle 8.10.2``,
    ``ansible --version`` → ``ansible [core 2.17.5]``), the version a wrapper command sets, and
    what a package manager says it installed, upgraded or removed (pipx, vcpkg's plan)."""
    out: list[Finding | None] = []
    lines = output.splitlines()
    unnamed: list[tuple[str, str]] = []  # version commands no line of the output names
    for part in command.split("&&"):
        m = _TOOL_VERSION_CMD.match(part.strip())
        if not m:
            continue
        program = m.group(1).rsplit("/", 1)[-1]
        name = program[:-1] if program in ("gradlew", "mvnw") else program
        said = re.compile(r"^\s*(?:apache\s+)?" + re.escape(name) + r"\b[\s\[(:]*(?:[a-z]+\s+)?v?(\d+\.\d+(?:\.\d+)?)\b", re.I)
        # "Apple Swift version 6.0.2" after `swift-driver version: 1.115` on the same line
        vendor = re.compile(r"(?:^|\s)(?:[A-Z][\w.-]*\s+)?" + re.escape(name) + r"\s+version:?\s+v?(\d+\.\d+(?:\.\d+)?)\b", re.I)
        shown = next((s for s in map(said.match, lines) if s), None) or \
            next((s for s in map(vendor.search, lines) if s), None)
        if shown:
            out.append(_version_finding(name, shown.group(1), f"`{cap(part.strip(), 40)}`"))
        elif not any(re.match(r"^\s*" + re.escape(name) + r"\b", line, re.I) for line in lines):
            unnamed.append((name, part.strip()))
    # `go version && buf --version && sqlc version` prints bare versions ("1.34.0", "v1.25.0") in
    # the order asked: they are those of the commands no line names, when the counts agree.
    bare = [line.strip() for line in lines if _BARE_VERSION.fullmatch(line)]
    if unnamed and len(bare) == len(unnamed):
        for (name, part), shown_line in zip(unnamed, bare, strict=True):
            out.append(_version_finding(name, shown_line, f"`{cap(part, 40)}` prints `{shown_line}`"))
    for s in _SET_VERSION.finditer(command):
        out.append(_version_finding(s.group(1), s.group(2), f"`{cap(s.group(0), 60)}`"))
    for r in list(_PIPX.finditer(output))[:12]:
        out.append(_version_finding(r.group(1), r.group(2), "pipx"))
    have, gone = _vcpkg_plan(output)
    for name, version in list(have.items())[:20]:
        out.append(_version_finding(name, version, "vcpkg"))
    out.extend(Finding("stack", f"`{name}` was removed (vcpkg).", f"version:{name}", "(removed)", 1, ends=True)
               for name in sorted(gone)[:20])
    return [f for f in out if f]
