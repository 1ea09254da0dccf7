"""Shell commands: one normal form, a category (test, lint, build, setup, run …), and the
phrases a command that worked becomes."""

from __future__ import annotations

import re

_RUNNER = r"(?:(?:uv run|poetry run|pipenv run|pdm run|hatch run|rye run|npx|pnpm exec|bunx)\s+)?"
_PY = r"(?:python3?(?:\.\d+)?\s+-m\s+)?"
CATEGORIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        # Before "test": a browser-test run is its own command (``playwright test``).
        ("e2e", _RUNNER + r"(?:playwright\s+test|cypress\s+run)\b"
                r"|(?:npm|pnpm|yarn|bun)\s+run\s+(?:e2e|test:e2e)\b|make\s+e2e\b"),
        # Schema migrations: applying them, and making a new one.
        ("migration", _RUNNER + _PY + r"(?:alembic\s+revision|aerich\s+migrate|prisma\s+migrate\s+dev"
                      r"|(?:python3?\s+)?manage\.py\s+makemigrations|rails\s+generate\s+migration"
                      r"|diesel\s+migration\s+generate|knex\s+migrate:make)\b"),
        ("migrate", _RUNNER + _PY + r"(?:alembic\s+(?:upgrade|downgrade)|aerich\s+upgrade"
                    r"|prisma\s+migrate\s+deploy|(?:python3?\s+)?manage\.py\s+migrate|rails\s+db:migrate"
                    r"|diesel\s+migration\s+run|knex\s+migrate:latest|flyway\s+migrate|goose\s+up)\b"
                    r"|make\s+migrate\b|(?:npm|pnpm|yarn|bun)\s+run\s+(?:db:)?migrate\b"),
        ("services", r"docker(?:-|\s+)compose\s+(?:\S+\s+)*?up\b"),
        ("test", _RUNNER + _PY + r"(?:pytest|py\.test|tox|nox|unittest|jest|vitest|mocha|ava|rspec|phpunit|ctest)\b"
                 r"|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test\b|go\s+test\b|cargo\s+(?:test|nextest)\b"
                 r"|make\s+(?:test|check)\b|(?:mvn|\./mvnw|gradle|\./gradlew)\s+\S*test|dotnet\s+test\b"
                 r"|mix\s+test\b|(?:bundle\s+exec\s+)?rake\s+test\b"),
        ("format", _RUNNER + _PY + r"(?:black|isort|ruff\s+format|prettier|gofmt|rustfmt|cargo\s+fmt)\b"
                   r"|(?:npm|pnpm|yarn)\s+run\s+(?:format|fmt)\b"),
        ("lint", _RUNNER + _PY + r"(?:ruff(?:\s+check)?|flake8|pylint|eslint|golangci-lint|shellcheck|rubocop|biome)\b"
                 r"|cargo\s+clippy\b|(?:npm|pnpm|yarn)\s+run\s+lint\b|make\s+lint\b"),
        ("typecheck", _RUNNER + _PY + r"(?:mypy|pyright|tsc|vue-tsc|pytype)\b"
                      r"|(?:npm|pnpm|yarn)\s+run\s+(?:typecheck|type-check|types)\b"),
        ("setup", _PY + r"pip3?\s+install\b|uv\s+(?:sync|pip\s+install|add)\b|poetry\s+(?:install|add)\b"
                  r"|(?:npm|pnpm|yarn|bun)\s+(?:install|ci|i|add)\b|bundle\s+install\b"
                  r"|go\s+mod\s+(?:tidy|download)\b|cargo\s+(?:add|fetch)\b|pipx\s+install\b"),
        ("build", r"make\b|cargo\s+build\b|go\s+build\b|(?:npm|pnpm|yarn|bun)\s+run\s+build\b"
                  r"|python3?\s+-m\s+build\b|docker\s+build\b|(?:mvn|gradle|\./gradlew)\s+(?:package|build)\b"),
        ("run", _RUNNER + r"(?:python3?(?:\.\d+)?\s+(?!-c\b)(?:-m\s+)?[\w./-]+|node\s+\S+|cargo\s+run\b|go\s+run\b"
                r"|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:start|dev|serve)\b|uvicorn\b|flask\s+run\b|\./[\w.-]+)"),
        ("vcs", r"git\s+(?:commit|push|merge|rebase|tag)\b"),
    )
)
# Looking around is not worth a fact: these never become "commands that worked".
_NOISE = re.compile(
    r"(?:ls|ll|cat|head|tail|less|more|grep|rg|ag|find|fd|cd|pwd|echo|printf|sed|awk|wc|which|"
    r"type|whereis|tree|file|stat|du|df|env|printenv|export|true|false|sleep|ps|kill|touch|mkdir|"
    r"cp|mv|rm|chmod|diff|sort|uniq|xargs|jq|curl|wget|date|clear|history|man|open|code|"
    r"git\s+(?:status|diff|log|show|branch|add|stash|checkout|switch|restore|fetch|remote|blame|rev-parse|config))\b"
)
_CD_PREFIX = re.compile(r"^cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*")
_PLUMBING = re.compile(r"\s*(?:2>&1|\|\s*(?:tail|head)(?:\s+-n)?\s*-?\d*|\|\s*cat)\s*$")
_ENV_ASSIGN = re.compile(r"^(?:export\s+)?[A-Z_][A-Z0-9_]*=\S*\s*(?:&&|;)?\s*")
SELECTIVE_TEST = re.compile(r"\s-k\s|::|\s--lf\b|\s-m\s|\s\S+\.(?:py|ts|js|tsx|jsx|go|rs)\b|\s--grep\b|\s-t\s")


def normalize_command(command: str, root: str | None = None) -> str:
    """One line, without ``cd <dir> &&``, leading env assignments, ``2>&1`` or ``| tail``;
    the project root becomes a relative path."""
    cmd = " ".join(command.strip().splitlines()[0].split()) if command.strip() else ""
    for _ in range(3):
        before = cmd
        cmd = _CD_PREFIX.sub("", cmd)
        cmd = _ENV_ASSIGN.sub("", cmd)
        cmd = _PLUMBING.sub("", cmd)
        if cmd == before:
            break
    if root and root.startswith("/"):
        cmd = cmd.replace(root.rstrip("/") + "/", "").replace(root.rstrip("/"), ".")
    return cmd.strip()


def split_command(command: str) -> list[str]:
    """``a && b`` → ``[a, b]`` (a pipeline or ``;`` chain stays whole: its parts are not runs)."""
    return [part.strip() for part in re.split(r"\s&&\s", command) if part.strip()]


_VERSION_QUERY = re.compile(r"^\S+\s+(?:--version|-v|-V|version)$")


def category(command: str) -> str | None:
    if _NOISE.match(command) or _VERSION_QUERY.match(command):
        return None
    for name, pattern in CATEGORIES:
        if pattern.match(command):
            return name
    return None


def program_key(command: str) -> str:
    """A key for "the same command again": category, else the first two words."""
    cat = category(command)
    if cat in ("test", "lint", "typecheck", "format", "build"):
        return cat
    return " ".join(command.split()[:3 if command.startswith(("python", "uv run", "npx")) else 2])


COMMAND_PHRASES = {
    "e2e": "Run the end-to-end tests with `{cmd}`.",
    "migration": "Create a migration with `{cmd}`.",
    "migrate": "Apply the migrations with `{cmd}`.",
    "services": "Start the local services with `{cmd}`.",
    "test": "Run the tests with `{cmd}`.",
    "lint": "Lint with `{cmd}`.",
    "format": "Check formatting with `{cmd}`.",
    "typecheck": "Type-check with `{cmd}`.",
    "build": "Build with `{cmd}`.",
}
PROJECT_INSTALL = re.compile(
    r"(?:pip3?|uv pip) install (?:-e|--editable)\b|uv sync\b|poetry install\b|(?:npm|pnpm|yarn|bun) (?:install|ci|i)$|"
    r"bundle install\b|go mod (?:tidy|download)\b|pip3? install -r\b"
)
