"""Shell commands: one normal form, what a command does (test, build, run, migrate, deploy,
worker …) read from its own words, and the phrases a command that worked becomes.

What a command does is read from its words, not looked up in a list of commands.  The runner
that wraps it is set aside (``uv run``, ``bundle exec``, ``npx``, ``python -m``, ``docker compose
exec web`` …); then the words it is asked to do — a subcommand, a make/just/rake target, a
package script, a Gradle task, a script's own name — are cut into their parts (``bootRun`` →
boot, run; ``db:migrate`` → db, migrate; ``test:e2e`` → test, e2e) and read against the
vocabulary of what developers do (test, spec, build, compile, serve, migrate, lint, format,
deploy, worker …).  Only programs whose name *is* the action (pytest, rspec, eslint, black,
mypy, sidekiq …) are named, because their words say nothing more.  So ``./gradlew bootRun``,
``bin/rails db:migrate``, ``python manage.py makemigrations``, ``celery -A proj worker``,
``pnpm --filter api dev`` and ``cargo nextest run`` are each recognised without being listed.
"""

from __future__ import annotations

import re
import shlex

# --- the vocabulary ---------------------------------------------------------------------------


def _by_word(table: tuple[tuple[str, str], ...]) -> dict[str, str]:
    return {word: cat for cat, words in table for word in words.split()}


# A word (or part of one) that says what a command does.
_ACTIONS = _by_word((
    ("test", "test tests spec specs unittest unittests verify busted"),
    ("e2e", "e2e playwright cypress"),
    ("build", "build builds compile package assemble dist jar bootjar wheel sdist precompile make"),
    ("image", "image images bootbuildimage jib"),
    ("run", "run serve server runserver start dev watch bootrun"),
    ("migrate", "migrate"),
    ("lint", "lint linter clippy vet analyze analyse analyzer analyser"),
    ("format", "format fmt formatter spotless style"),
    ("typecheck", "typecheck types"),
    ("deploy", "deploy publish ship upload"),
    # a declared configuration made real on a machine (``nixos-rebuild switch``, ``terraform
    # apply``, ``home-manager switch``, ``chezmoi apply``)
    ("apply", "apply switch"),
    ("worker", "worker workers jobs queue consumer"),
    ("scheduler", "beat scheduler cron clock"),
    ("seed", "seed seeds loaddata fixtures"),
    ("setup", "install setup bootstrap sync deps restore"),
    ("check", "check"),
    ("docs", "docs doc render"),
    ("bench", "bench benchmark benchmarks"),
))
# Programs whose own name is what they do (their arguments are paths and options).
_PROGRAMS = _by_word((
    ("test", "pytest py.test tox nox jest vitest mocha ava rspec phpunit ctest minitest karma "
             "behave cucumber jasmine tap bats pest paratest codecept busted"),
    ("lint", "ruff flake8 pylint eslint rubocop standardrb biome shellcheck hadolint credo "
             "staticcheck golangci-lint ktlint detekt checkstyle stylelint markdownlint tflint oxlint phpcs "
             "clang-tidy run-clang-tidy cppcheck ansible-lint yamllint selene luacheck lintr statix deadnix hlint"),
    ("format", "black isort prettier gofmt gofumpt goimports rustfmt autopep8 yapf ktfmt "
               "clang-format google-java-format dprint pint php-cs-fixer phpcbf stylua styler alejandra nixfmt "
               "nixpkgs-fmt ormolu fourmolu stylish-haskell"),
    ("typecheck", "mypy pyright tsc vue-tsc pytype phpstan psalm"),
    ("run", "uvicorn gunicorn hypercorn daphne puma unicorn nodemon"),
    ("worker", "sidekiq good_job resque dramatiq rq huey_consumer"),
    ("e2e", "playwright cypress"),
))
# Tools that apply (or create) schema migrations: ``up``/``upgrade`` to them means "migrate".
MIGRATION_TOOLS = frozenset(
    "alembic flyway goose dbmate liquibase atlas sqitch migrate diesel sqlx prisma knex sequelize "
    "typeorm drizzle-kit aerich yoyo refinery".split())
_DB_WORDS = frozenset("db database schema migration migrations makemigrations revision".split())
_APPLY_WORDS = frozenset("up upgrade downgrade apply push update".split())
_NEW_WORDS = frozenset("create new make generate revision add makemigrations".split())
_DB_SETUP = frozenset("create setup prepare reset drop createdb".split())
_NEW_AFTER_MIGRATE = _NEW_WORDS - {"revision", "makemigrations"} | {"diff"}
# A program named for what it checks or rewrites (``swiftlint``, ``swiftformat``, ``sqlfmt``):
# every run of it lints or formats, whatever its arguments.
_NAMED_FOR = (("lint", "lint"), ("format", "format"), ("fmt", "format"), ("prettify", "format"),
              ("beautify", "format"))
# Short forms a few frameworks' CLIs take (``rails s``).
_ABBREVIATIONS = {"rails": {"s": "server", "c": "console", "g": "generate", "t": "test"}}
# When a command's words say several things, the most specific one wins (``bootBuildImage``
# builds an image, ``cargo nextest run`` a test run, ``go run ./cmd/feedworker`` the worker).
_SPECIFIC = ("e2e", "migration", "migrate", "db", "seed", "worker", "scheduler", "deploy", "test",
             "typecheck", "lint", "format", "image", "build", "bench", "docs", "check", "apply", "services", "setup",
             "env", "run")

# Interpreters given a script of the project (``python manage.py``, ``julia scripts/plan.jl``).
_INTERPRETERS = frozenset("python ruby node php bash sh deno bun julia Rscript perl lua elixir".split())
# Wrappers that run the command after them (their own words say nothing).
_WRAPPERS = frozenset("sudo time nice command exec env nohup caffeinate".split())
_RUNNERS: tuple[tuple[str, ...], ...] = (
    ("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"),
    ("rye", "run"), ("bundle", "exec"), ("pnpm", "exec"), ("pnpm", "dlx"), ("yarn", "dlx"),
    ("npm", "exec"), ("mise", "exec"), ("asdf", "exec"), ("dotnet", "tool", "run"), ("npx",),
    ("bunx",), ("pipx", "run"), ("uvx",),
)
# Package managers whose first word may be a script of the project (``yarn build``).
_SCRIPT_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_PM_VERBS = frozenset(
    "install i ci add remove rm uninstall un update up upgrade outdated audit link unlink pack "
    "publish init create exec dlx x why list ls info view config cache store prune rebuild "
    "login logout whoami version help import fetch patch".split())
# Options of the runners and package managers that take a value, and those naming a package of a
# workspace (the value says which part of a monorepo the command is for).
_VALUE_OPTS = frozenset("-C --dir --cwd --prefix -w --workspace --filter -F -p --package "
                        "--project --manifest-path -f --file --config -c --env-file --preset -B -S -G "
                        "--target -i --inventory".split())
# A subcommand given as the first option (``cmake --build``, ``clj-kondo --lint src test``): what
# follows it are its arguments (``src test`` are folders there, not a test run).
_OPTION_ACTION = re.compile(r"^--([a-z]+)$")
_OPTION_KINDS = frozenset("build test lint format typecheck check".split())
# Analysing is what a linter does (``dart analyze``, ``Invoke-ScriptAnalyzer``), but a type
# checker's ``phpstan analyse`` stays a type check.
_ANALYSIS = frozenset("analyze analyse analyzer analyser".split())
# ``-M:test``, ``-X:deploy``, ``-A:dev:test``: an option naming aliases or tasks of the project.
_ALIAS_OPTION = re.compile(r"^-[A-Za-z]:([\w:.-]+)$")
# Shells given the command as a string (``bash -c "…"``, ``pwsh -c '…'``, ``cmd /c …``) or a
# script file (``pwsh -File ./build/publish.ps1``): the command is what the string runs.
_SHELLS = {"bash": ("-c",), "sh": ("-c",), "zsh": ("-c",), "dash": ("-c",), "fish": ("-c", "--command"),
           "pwsh": ("-c", "-command", "-Command"), "powershell": ("-c", "-command", "-Command"),
           "pwsh.exe": ("-c", "-command", "-Command"), "powershell.exe": ("-c", "-command", "-Command"),
           "cmd": ("/c", "/C"), "cmd.exe": ("/c", "/C")}
_SHELL_FILE = ("-File", "-file", "-f")
_ASSIGNED = re.compile(r"^\$[\w.:]+\s*=\s*")  # ``$r = Invoke-Pester …``: what runs is on the right
# A source folder among a command's words: the words from there on are paths it is given
# (``fprettify -r src app test``), not what it does.
_PATHS_FROM = "src"
# Code evaluated in passing (``wp eval '…'``, ``rails runner``-style probes): not how to run it.
_EVAL_WORDS = frozenset("eval".split())
# Programs that act on something else than the project (a phone, a remote host, the CI service):
# what they run is not how the project is run.
_ELSEWHERE = frozenset("adb gh ssh scp rsync".split())
_WORKSPACE_OPTS = frozenset("-C --dir --cwd --prefix -w --workspace --filter -F -p --package "
                            "--project --manifest-path --preset".split())
# Programs whose workspace options name a part of a monorepo (elsewhere ``-C`` is a config file).
_WORKSPACE_PROGRAMS = frozenset("npm pnpm yarn bun cargo make just turbo nx lerna rush cmake ctest".split())
# A package manager's own verbs that install or add (``bundle add``, ``go get``, ``uv sync``).
_INSTALL_VERBS = frozenset("install i ci add sync get require update upgrade rebuild".split())
_PACKAGE_MANAGERS = frozenset("pip pip3 uv poetry pipenv pdm bundle gem cargo go composer mix "
                              "dotnet conda mamba npm pnpm yarn bun deno luarocks".split())
# Interpreters and editors run with code in an option (``Rscript -e 'targets::tar_make()'``,
# ``julia -e 'using Pkg; Pkg.test()'``, ``nvim --headless -c "PlenaryBustedDirectory tests/"``):
# what they do is what the code calls, so the code's calls are the command's words.
_CODE_OPTS = {"rscript": ("-e", "--expr"), "r": ("-e",), "julia": ("-e", "--eval"), "lua": ("-e",),
              "luajit": ("-e",), "nvim": ("-c", "+", "--cmd"), "vim": ("-c", "+", "--cmd"),
              "ruby": ("-e",), "perl": ("-e", "-E"), "node": ("-e", "--eval"), "python": ("-c",),
              "deno": ("eval",), "elixir": ("-e",), "erl": ("-eval",), "sbcl": ("--eval",)}
# a call in the code (``testthat::test_dir(``, ``Pkg.test(``, ``tar_make(``) or an editor's Ex
# command (``PlenaryBustedDirectory tests/``, ``lua MiniTest.run()`` → its call)
_CALL = re.compile(r"(?<![\w.:)\]'\"])((?:[A-Za-z_]\w*(?:::|\.|:))*)([A-Za-z_]\w*)\s*\(")
# what a one-liner computes on the way (a language's own library, printing, loading) says
# nothing of what the command is for
_LIBRARY_CALLS = frozenset("cat print require source library quit nrow length c paste message puts "
                           "dofile loadfile".split())
_LIBRARY_SPACES = frozenset("string table math os io vim base utils as is sys json".split())
_EX_COMMAND = re.compile(r"^\s*([A-Z]\w+|[a-z]+)\b")

# Looking around is not worth a fact: these never become "commands that worked".
_NOISE = re.compile(
    r"(?:ls|ll|cat|head|tail|less|more|grep|rg|ag|find|fd|cd|pwd|echo|printf|sed|awk|wc|which|"
    r"type|whereis|tree|file|stat|du|df|env|printenv|export|true|false|sleep|ps|kill|touch|mkdir|"
    r"cp|mv|rm|chmod|diff|sort|uniq|xargs|jq|curl|wget|date|clear|history|man|open|code|"
    r"git\s+(?:status|diff|log|show|branch|add|stash|checkout|switch|restore|fetch|remote|blame|rev-parse|config))\b"
)
_VCS = re.compile(r"git\s+(?:commit|push|merge|rebase|tag)\b")
_CD_PREFIX = re.compile(r"^cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*")
_TIMEOUT = re.compile(r"^timeout\s+(?:-\S+\s+)*\d+[smh]?\s+")
_PLUMBING = re.compile(r"\s*(?:2>&1|\|\s*(?:tail|head)(?:\s+-n)?\s*-?\d*|\|\s*cat)\s*$")
# Output piped into a filter (``… 2>&1 | grep -E "idempotence"``, ``| tail -n 2``, ``| jq .``): the
# command is what ran, the filter only how its output was read.
_FILTERED = re.compile(r"\s*(?:2>&1\s*)?\|\s*(?:grep|egrep|rg|tail|head|sed|awk|jq|sort|uniq|wc|less|more|"
                       r"cat|cut|column|tee)\b[^&;]*$")
_ENV_ASSIGN = re.compile(r"^(?:export\s+)?[A-Z_][A-Z0-9_]*=(?:\"[^\"]*\"|'[^']*'|\S*)\s*(?:&&|;)?\s*")
_VERSION_QUERY = re.compile(r"^\S+\s+(?:--version|-v|-V|version)$")


def normalize_command(command: str, root: str | None = None) -> str:
    """One line, without ``cd <dir> &&``, leading env assignments, ``2>&1`` or ``| tail``;
    the project root becomes a relative path."""
    cmd = " ".join(command.strip().splitlines()[0].split()) if command.strip() else ""
    for _ in range(3):
        before = cmd
        cmd = _CD_PREFIX.sub("", cmd)
        cmd = _ENV_ASSIGN.sub("", cmd)
        cmd = _TIMEOUT.sub("", cmd)
        cmd = _PLUMBING.sub("", cmd)
        cmd = _FILTERED.sub("", cmd)
        if cmd == before:
            break
    if root and root.startswith("/"):
        cmd = cmd.replace(root.rstrip("/") + "/", "").replace(root.rstrip("/"), ".")
    return cmd.strip()


def split_command(command: str) -> list[str]:
    """``a && b`` → ``[a, b]`` (a pipeline or ``;`` chain stays whole: its parts are not runs)."""
    return [part.strip() for part in re.split(r"\s&&\s", command) if part.strip()]


# --- reading a command --------------------------------------------------------------------------


def _tokens(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def parts(word: str) -> list[str]:
    """The parts of a target, task or script name: ``bootBuildImage`` → boot, build, image;
    ``db:test:prepare`` → db, test, prepare; ``./cmd/feedworker`` → cmd, feedworker."""
    word = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", word)
    return [p for p in re.split(r"[^A-Za-z0-9]+", word.lower()) if p]


def _program(token: str) -> str:
    """``./gradlew`` → gradle, ``./mvnw`` → mvn, ``bin/rails`` → rails, ``/usr/bin/python3.12``
    → python."""
    name = token.rsplit("/", 1)[-1]
    name = {"gradlew": "gradle", "mvnw": "mvn", "docker-compose": "docker compose"}.get(name, name)
    return re.sub(r"^(python|pip|ruby|node|php)[\d.]*$", r"\1", name)


class Invocation:
    """A command read for what it does: the program that runs after any wrapper or runner,
    the words it is given before ``--`` (options set aside), and the workspace part it is
    for (``pnpm --filter api …``, ``cargo -p core …``)."""

    __slots__ = ("program", "words", "workspace", "local", "folder")

    def __init__(self, program: str, words: list[str], workspace: str, local: bool, folder: str = "") -> None:
        self.program, self.words, self.workspace, self.local = program, words, workspace, local
        self.folder = folder  # a project script's folder (``deploy`` of ``./deploy/push.sh``)


def invocation(command: str) -> Invocation | None:
    tokens = _tokens(command)
    workspace = ""
    while tokens and (tokens[0] in _WRAPPERS or re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", tokens[0])):
        tokens = tokens[1:]
    for _ in range(3):  # runners can nest (``uv run python -m pytest``)
        if tokens[:1] == ["docker-compose"]:
            tokens = ["docker", "compose", *tokens[1:]]
        runner = next((r for r in _RUNNERS if tuple(tokens[: len(r)]) == r), None)
        if runner:
            tokens = tokens[len(runner):]
        elif len(tokens) >= 3 and re.fullmatch(r"python[\d.]*", _program(tokens[0])) and tokens[1] == "-m":
            tokens = tokens[2:]
        elif tokens[:1] in (["docker"], ["podman"]) and tokens[1:2] == ["compose"] and \
                tokens[2:3] in (["exec"], ["run"]):
            # ``docker compose exec web pytest``: what runs in the service's container.
            i = 3
            while i < len(tokens) and tokens[i].startswith("-"):
                i += 2 if tokens[i] in ("-e", "--env", "-u", "--user", "-w", "--workdir") else 1
            if i + 1 >= len(tokens):
                break
            tokens = tokens[i + 1:]
        else:
            break
    if not tokens:
        return None
    first = tokens[0]
    local = first.startswith(("./", "bin/", "scripts/", "script/")) and _program(first) not in ("gradle", "mvn")
    program = _program(first)
    rest = tokens[1:]
    code = _code_words(program, rest)
    if code is not None:
        return Invocation(program, code, workspace, local)
    script = first
    if program in _INTERPRETERS:  # (its own long options first: ``julia --project=. scripts/plan.jl``)
        while rest and re.fullmatch(r"--[\w-]+(?:=\S*)?", rest[0]):
            rest = rest[1:]
    if program in _INTERPRETERS and rest and \
            not rest[0].startswith("-") and re.search(r"[./]", rest[0]) and rest[0] not in ("run", "x"):
        # ``python manage.py migrate``, ``node scripts/seed.js``: the script is the program.
        script, program, rest, local = rest[0], _program(rest[0]), rest[1:], True
    elif program == "docker" and rest[:1] == ["compose"]:
        program, rest = "docker compose", rest[1:]
    words: list[str] = []
    aliases: list[str] = []
    skip = acting = False
    for i, tok in enumerate(rest):
        if tok == "--":
            break
        if skip:
            skip = False
            if rest[i - 1] in _WORKSPACE_OPTS and not workspace and program in _WORKSPACE_PROGRAMS:
                workspace = tok
            continue
        if tok.startswith("-"):
            name = tok.split("=", 1)[0]
            # (a program named for what it does keeps it: ``pint --test``, ``swiftformat --lint``
            # format, as a check)
            named = program in _PROGRAMS or program.endswith(tuple(end for end, _ in _NAMED_FOR))
            action = _OPTION_ACTION.match(name) if i == 0 and "=" not in tok and not named else None
            if action and _ACTIONS.get(action.group(1)) in _OPTION_KINDS:
                words.append(action.group(1))  # ``cmake --build --preset dev``: it builds
                acting = True
                continue
            alias = _ALIAS_OPTION.match(tok)
            if alias:
                aliases.extend(a for a in alias.group(1).split(":") if a)
                continue
            if name in _WORKSPACE_OPTS and "=" in tok and not workspace and program in _WORKSPACE_PROGRAMS:
                workspace = tok.split("=", 1)[1]
            elif name in _VALUE_OPTS and "=" not in tok:
                skip = True
            continue
        if acting or tok == _PATHS_FROM:
            acting = True  # (the rest are paths)
            continue
        words.append(tok)
        if len(words) >= 6:
            break
    words = [*aliases, *words][:6]
    folder = "/".join(p for p in script.split("/")[:-1] if p not in (".", "..", "")) if local else ""
    return Invocation(program, words, workspace, local, folder)


def _code_words(program: str, rest: list[str]) -> list[str] | None:
    """The calls the code given to an interpreter or editor makes, in order (``Rscript -e
    'renv::restore(prompt = FALSE)'`` → restore), or None when ``program`` is given no code."""
    opts = _CODE_OPTS.get(program.lower())
    if not opts:
        return None
    codes = [rest[i + 1] for i, tok in enumerate(rest[:-1]) if tok in opts]
    if not codes:
        return None
    words: list[str] = []
    for code in codes:
        calls = [name for space, name in _CALL.findall(code)
                 if name not in _LIBRARY_CALLS and "version" not in name.lower()
                 and not (space and re.split(r"::|\.|:", space)[0].lower() in _LIBRARY_SPACES)]
        if not calls and program.lower() in ("nvim", "vim"):
            ex = _EX_COMMAND.match(code)  # ``checkhealth linkwort``, ``PlenaryBustedDirectory tests/``
            calls = [ex.group(1)] if ex and ex.group(1) not in ("q", "qa", "w", "wq", "qall") else []
        words.extend(calls)
    return words[:6]


def _found(words: list[str]) -> set[str]:
    """Every category the words' parts name (a long compound word by its start or end too:
    ``feedworker``, ``nextest``).  A path or file name counts only as what ``run`` runs
    (``go run ./cmd/feedworker``): elsewhere it is an argument (``keys/dev.pub``)."""
    out: set[str] = set()
    for i, word in enumerate(words):
        if re.search(r"[/.]", word) and not (i == 1 and words[0] == "run"):
            continue
        for part in parts(word):
            cat = _ACTIONS.get(part)
            if cat:
                out.add(cat)
                continue
            for action, acat in _ACTIONS.items():
                if len(action) >= 4 and len(part) > len(action) + 2 and (
                        part.endswith(action) or part.startswith(action)):
                    out.add(acat)
    return out


def _db_category(program: str, words: list[str]) -> str | None:
    """Schema migrations and database set-up, which need two words to tell apart: ``db:migrate``,
    ``alembic upgrade``, ``goose … up``, ``makemigrations``, ``db:create``."""
    pieces = {p for w in [program, *words] for p in parts(w)}
    if pieces & {"seed", "seeds"}:
        return None  # ``prisma db seed``, ``rails db:seed``: the seed data (``_ACTIONS``)
    tool = program in MIGRATION_TOOLS or "-".join(parts(program)) in MIGRATION_TOOLS
    # ``atlas migrate diff``, ``sqlx migrate add``, ``migrate create``, ``knex migrate:make``:
    # the word after "migrate" says it writes a new migration (applying is ``… migrate apply``).
    seq = [p for w in [program, *words] for p in parts(w)]
    writes = any(a == "migrate" and b in _NEW_AFTER_MIGRATE for a, b in zip(seq, seq[1:], strict=False))
    if "makemigrations" in pieces or ((tool or pieces & {"migration", "migrations"}) and pieces & _NEW_WORDS
                                      and "migrate" not in pieces) \
            or ("db" in pieces and "generate" in pieces) or writes:
        return "migration"
    if "migrate" in pieces or (tool and pieces & _APPLY_WORDS) or (pieces & {"db", "database"} and pieces & {"push", "upgrade", "update"}):
        return "migrate"
    if pieces & {"db", "database"} and pieces & _DB_SETUP or program == "createdb":
        return "db"
    if tool:
        return "migrate"
    return None


def classify(command: str) -> tuple[str | None, str]:
    """(what the command does, the workspace part it is for), or (None, "")."""
    if not command or _NOISE.match(command) or _VERSION_QUERY.match(command):
        return None, ""
    if _VCS.match(command):
        return "vcs", ""
    if command.startswith("git "):
        return None, ""
    inner = _shell_code(command)
    if inner is not None:
        return _most_specific(inner)
    inv = invocation(command)
    if inv is None:
        return None, ""
    program, words = inv.program, inv.words
    if program in ("rsync", "scp"):
        return ("deploy", "") if _copies_out(command) else (None, "")
    if program in ("source", ".") and words and not words[0].startswith(("/", "~", "$")):
        return "env", ""  # ``source scripts/env.sh``: the project's shell set-up
    if program in _ELSEWHERE:
        return None, ""
    words = [_ABBREVIATIONS.get(program, {}).get(w, w) for w in words[:1]] + words[1:]
    if program == "docker compose":
        if words[:1] == ["up"] or words[:1] == ["start"]:
            return "services", inv.workspace
        return ("image", inv.workspace) if words[:1] == ["build"] else (None, "")
    if program == "docker":
        # A container image is built beside the project's own build (``./gradlew build``,
        # ``cargo build``): a slot of its own, so neither replaces the other.
        return ("image", inv.workspace) if words[:1] in (["build"], ["buildx"]) else (None, "")
    db = _db_category(program, words)
    if db:
        return db, inv.workspace
    named = _PROGRAMS.get(program)
    found = _found(words)
    if program == "go" and words[:1] == ["mod"]:
        found = {"setup"} if words[1:2] in (["tidy"], ["download"]) else set()
    elif program in _PACKAGE_MANAGERS and words and (words[0] in _INSTALL_VERBS or (
            program in _SCRIPT_RUNNERS and words[0] in _PM_VERBS)):
        # The package manager's own verbs (``bun add``, ``go get``, ``uv sync``): setting up.
        found = {"setup"} if words[0] in _INSTALL_VERBS else set()
    if named and named != "e2e":
        # The program says it (``ruff``: lint), unless its subcommand says more (``ruff format``).
        # (its subcommand, not its arguments: ``luacheck lua tests`` lints the tests folder)
        better = _found([w for w in words[:1] if w not in _ANALYSIS]) & {"format", "lint", "typecheck", "test", "build"}
        return (sorted(better, key=_SPECIFIC.index)[0] if better else named), inv.workspace
    if named == "e2e":
        return ("setup" if found & {"setup"} else "e2e"), inv.workspace
    if inv.local or program.endswith((".py", ".sh", ".js", ".ts", ".rb", ".pl")):
        found |= _found([program.rsplit(".", 1)[0]])  # ``bin/dev``, ``scripts/seed.py``: its own name
        if not found:  # ``./deploy/push.sh``: its folder's
            found |= _found([p for p in inv.folder.split("/") if p not in ("scripts", "script", "bin", "tools")])
        if not found and not words and program.endswith((".py", ".js", ".ts", ".rb")):
            found = {"run"}  # ``python app.py``: running the program itself
    elif not found and program not in ("test", "make") and _ACTIONS.get(program):
        found = {_ACTIONS[program]}  # ``python -m build``
    elif program in ("make", "just", "task", "rake") and not words:
        found = {"build"}
    elif program == "cmake" and not words:
        found = {"setup"}  # ``cmake --preset dev``, ``cmake -S . -B build``: configuring the build
    if not found and not inv.local and re.fullmatch(r"[a-z][a-z0-9-]+", program):
        # (a short word before a long ending names it too: ``fprettify``, ``js-beautify``)
        found = {cat for end, cat in _NAMED_FOR if program.endswith(end)
                 and len(program) > len(end) + (2 if len(end) < 8 else 0)}
    if not found and not inv.local and re.fullmatch(r"[A-Z][a-z]+-[A-Z]\w+", program):
        # a verb-noun command names what it does (``Invoke-ScriptAnalyzer``, ``Publish-Module``)
        found = _found([program])
    if found == {"run"} and (_EVAL_WORDS & set(words) or _runs_inside(words)):
        # code evaluated in passing (``wp eval '…'``), or another program run inside the
        # project's container (``wp-env run cli wp config set …``): a probe, not how to run it
        return None, ""
    if "e2e" in found or ({"test"} <= found and "playwright" in words):
        return "e2e", inv.workspace
    if words[:1] == ["build"] and _found(words[1:2]) == {"run"}:
        return "run", inv.workspace  # ``zig build run``: the build system's step says it
    if not found:
        return None, ""
    return sorted(found, key=_SPECIFIC.index)[0], inv.workspace


def _runs_inside(words: list[str]) -> bool:
    """``run <where> <program> <its words>``: two or more plain words after ``run`` (not a
    path, a script or a target: ``cargo run``, ``go run ./cmd/api``, ``fpm run --profile
    release`` run the project itself)."""
    if words[:1] != ["run"]:
        return False
    end = next((i for i, w in enumerate(words) if w in ("&", "|", ";", "&&", "||") or w.endswith(";")), len(words))
    plain = [w for w in words[1:end] if re.fullmatch(r"[A-Za-z][\w-]*", w)]
    return len(plain) >= 3


def _shell_code(command: str) -> list[str] | None:
    """The commands a shell is given as a string or a script file (``bash -c "make test"``,
    ``pwsh -c 'Invoke-Pester ./tests'``, ``pwsh -File ./build/publish.ps1``), each statement
    without the filters its output is piped into; None when ``command`` is no such call."""
    tokens = _tokens(command)
    while tokens and (tokens[0] in _WRAPPERS or re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", tokens[0])):
        tokens = tokens[1:]
    if not tokens:
        return None
    opts = _SHELLS.get(tokens[0].rsplit("/", 1)[-1])
    if not opts:
        return None
    for i, tok in enumerate(tokens[1:-1], 1):
        if tok in _SHELL_FILE and tokens[0] not in ("bash", "sh", "zsh", "dash", "fish"):
            return [" ".join(shlex.quote(t) for t in tokens[i + 1:])]
        if tok in opts:
            code = tokens[i + 1]
            out = []
            for statement in re.split(r"\s*(?:;|&&|\|\|)\s*|\n", code):
                statement = _ASSIGNED.sub("", statement.split("|", 1)[0].strip())
                if statement:
                    out.append(normalize_command(statement))
            return out
    return None


def _most_specific(commands: list[str]) -> tuple[str | None, str]:
    found = [c for c in (classify(x) for x in commands) if c[0]]
    if not found:
        return None, ""
    return min(found, key=lambda c: _SPECIFIC.index(c[0]) if c[0] in _SPECIFIC else len(_SPECIFIC))


_REMOTE = re.compile(r"^(?:[\w.-]+@)?[A-Za-z][\w.-]*:(?!//)")


def _copies_out(command: str) -> bool:
    """``rsync -az ./ host:site/``, ``scp build/app.jar host:/opt/app/``: the project's files put
    on another machine (a deploy), not fetched from it."""
    args = [t for t in _tokens(command)[1:] if not t.startswith("-")]
    return len(args) >= 2 and bool(_REMOTE.match(args[-1])) and not any(_REMOTE.match(a) for a in args[:-1])


def quiet(command: str) -> bool:
    """A command that only looks around, sets up the shell or talks to git (``ls``, ``cd``,
    ``export``, ``git rm``): it does none of the project's work."""
    return bool(not command or _NOISE.match(command) or command.startswith("git ")
                or _VERSION_QUERY.match(command))


def category(command: str) -> str | None:
    return classify(command)[0]


def program_key(command: str) -> str:
    """A key for "the same command again": what it does, else the program and its first word."""
    cat = category(command)
    if cat in ("test", "lint", "typecheck", "format", "build", "image", "e2e", "migrate"):
        return cat
    inv = invocation(command)
    if inv is None:
        return command.split()[0] if command.split() else ""
    return " ".join([inv.program, *inv.words[:1]])


# A test run narrowed to some tests is not how to run the tests: a file, a node id, a filter.
SELECTIVE_TEST = re.compile(
    r"\s-k\s|::|\s--lf\b|\s-m\s|\s\S+\.(?:py|ts|js|tsx|jsx|go|rs|rb|java|kt|ex|exs|php)\b|\s--grep\b|\s-t\s"
    r"|\s-run\s|\s--tests?\s|\s--test-name-pattern\b|\s\./\S+/\.\.\.|\s--example\b|\s-e\s"
    r"|\s--focus\b|\s-TagFilter\b|\s-FullNameFilter\b")



def selective_test(command: str) -> bool:
    """Whether a test command runs a chosen part of the tests (one file, a name pattern, a node
    id).  Code given to an interpreter is left out: in ``Rscript -e 'testthat::test_dir("tests")'``
    the ``-e`` is where the code goes and ``::`` is R's namespace, not pytest's node id."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    opts = _CODE_OPTS.get(words[0].rsplit("/", 1)[-1].lower()) if words else None
    if opts and any(w in opts for w in words[1:-1]):
        kept = [w for i, w in enumerate(words) if w not in opts and not (i and words[i - 1] in opts)]
        command = " ".join(kept)
    return bool(SELECTIVE_TEST.search(" " + command + " "))


COMMAND_PHRASES = {
    "e2e": "Run the end-to-end tests with `{cmd}`.",
    "migration": "Create a migration with `{cmd}`.",
    "migrate": "Apply the migrations with `{cmd}`.",
    "db": "Set up the database with `{cmd}`.",
    "services": "Start the local services with `{cmd}`.",
    "test": "Run the tests with `{cmd}`.",
    "lint": "Lint with `{cmd}`.",
    "format": "Check formatting with `{cmd}`.",
    "typecheck": "Type-check with `{cmd}`.",
    "build": "Build with `{cmd}`.",
    "image": "Build the container image with `{cmd}`.",
    "worker": "Start the worker with `{cmd}`.",
    "scheduler": "Start the scheduler with `{cmd}`.",
    "deploy": "Deploy with `{cmd}`.",
    "env": "Set up the shell's environment with `{cmd}`.",
    "apply": "Apply the configuration with `{cmd}`.",
    "seed": "Load the seed data with `{cmd}`.",
    "check": "Check with `{cmd}`.",
    "docs": "Build the docs with `{cmd}`.",
    "bench": "Run the benchmarks with `{cmd}`.",
}
PROJECT_INSTALL = re.compile(
    r"(?:pip3?|uv pip) install (?:-e|--editable)\b|uv sync\b|poetry install\b|(?:npm|pnpm|yarn|bun) (?:install|ci|i)$|"
    r"bundle install\b|go mod (?:tidy|download)\b|pip3? install -r\b|composer install\b|mix deps\.get\b|"
    r"bin/setup\b|renv::restore\b|Pkg\.instantiate\b|luarocks (?:make|install --only-deps)\b"
)


# --- commands no word of ours names -------------------------------------------------------------

# Words after which the program a command runs comes next (``carton exec prove``, ``mise x``).
_RUN_VERBS = frozenset("exec run x dlx".split())
_PLAIN_WORD = re.compile(r"[A-Za-z][\w:+-]*")  # (not a file's name: ``latexmk thesis.tex`` is latexmk's)
RAN_MAX = 100  # a longer line is a one-off (code given inline, a long pipeline), not a habit


def ran_key(command: str) -> str | None:
    """The program and subcommand of a command that did the project's work although no word of
    it says what (``rebar3 dialyzer``, ``butler status …``, ``renpy.sh … translate . spanish``,
    ``carton exec prove -lr t/``): "``rebar3 dialyzer``", the slot a later form of it takes over;
    ``<program> --version`` for a version query.  None for looking around, the shell, git, a
    line that runs code inline or runs long."""
    if not command or len(command) > RAN_MAX or command.startswith("git ") or "<<" in command:
        return None
    if _VERSION_QUERY.match(command):
        return f"{_program(command.split()[0])} --version"
    try:
        shlex.split(command)
    except ValueError:
        return None  # (a piece of a quoted line that ``split_command`` cut: not a command)
    if _NOISE.match(command) or _shell_code(command) is not None:
        return None
    inv = invocation(command)
    if inv is None or inv.program in ("ssh", "scp", "rsync", "adb") or inv.program in _CODE_OPTS:
        return None
    if _code_words(inv.program, _tokens(command)[1:]) is not None:
        return None
    words = [w for w in inv.words if _PLAIN_WORD.fullmatch(w) and "/" not in w]
    take = 2 if words[:1] and words[0] in _RUN_VERBS else 1
    return " ".join([inv.program, *words[:take]])
