"""General software vocabulary: the words a question uses for a concept, and the names the
memories that answer it use instead.

A later session asks "how do I run the tests?" or "which package manager do we use?"; the
memory that answers says `pytest -q -x` or `uv add httpx`.  Search adds the names listed here
for a concept the query names, as extra words weighted below the query's own
(``search.EXPAND_WEIGHT``).  The lists were written from general knowledge of many ecosystems
(Python, JavaScript/TypeScript, Ruby, PHP, Go, Rust, Java/Kotlin, .NET, Elixir, Swift, mobile,
infrastructure), before any miss of the evaluation sets was read, and never from a held-out
project: a name earns its place by being a common tool for that concept somewhere, not by
appearing in our data.  Words are lower-case single tokens as the index splits them (a name
with a dot or a dash is split by the tokenizer: list its distinctive part).

``CONCEPTS`` (tools by what they are for) and ``SYNONYMS`` (plain words): a key (one word, or two words that must both be in the query) → the words added.
A key is matched on the index's stems, so "tests", "testing" and "test" all name the first.
A one-word key is also named by a query word and the stop word after it, joined ("log in" names
"login", and then not "log": ``search.EXPAND_PHRASES``).
"""

from __future__ import annotations

_TEST_RUNNERS = (
    "pytest unittest nose tox nox hypothesis jest vitest mocha jasmine karma ava playwright "
    "cypress rspec minitest phpunit pest junit testng kotest xunit nunit mstest exunit "
    "testcontainers"
)
_PACKAGE_MANAGERS = (
    "pip uv poetry pipenv pdm conda hatch rye npm pnpm yarn bun deno bundler gem cargo composer "
    "maven gradle nuget hex mix swiftpm cocoapods brew"
)
_LINTERS = (
    "ruff flake8 pylint eslint biome oxlint rubocop standardrb clippy golangci staticcheck "
    "phpstan psalm checkstyle ktlint detekt stylelint shellcheck credo hadolint"
)
_FORMATTERS = (
    "black ruff isort prettier biome rustfmt gofmt goimports standardrb rubocop pint "
    "spotless ktfmt dprint"
)
_TYPE_CHECKERS = "mypy pyright pyre tsc typescript sorbet phpstan psalm"
_DATABASES = (
    "postgres postgresql psql mysql mariadb sqlite mongodb mongo redis dynamodb cassandra "
    "cockroachdb supabase neon planetscale firestore clickhouse elasticsearch opensearch"
)
_ORMS = (
    "sqlalchemy alembic django peewee tortoise sqlmodel prisma drizzle typeorm sequelize "
    "knex kysely mikro activerecord eloquent doctrine hibernate jpa gorm sqlx diesel sqlc "
    "ecto entity dapper"
)
_MIGRATIONS = (
    "alembic migrate makemigrations flyway liquibase goose knex prisma drizzle sqlx diesel "
    "ecto atlas dbmate"
)
_QUEUES = (
    "celery rq dramatiq huey arq sidekiq resque goodjob delayed solid horizon bull bullmq "
    "agenda temporal asynq faktory hangfire oban rabbitmq kafka sqs nats redis"
)
_WEB_FRAMEWORKS = (
    "fastapi flask django starlette litestar sanic aiohttp express fastify koa hono nestjs "
    "rails sinatra laravel symfony slim gin echo chi fiber axum actix rocket warp spring "
    "micronaut quarkus ktor phoenix aspnet"
)
_FRONTEND = (
    "react nextjs next vue nuxt svelte sveltekit angular solid astro remix qwik preact htmx "
    "alpine ember"
)
_STYLING = "tailwind tailwindcss css sass scss less styled emotion postcss bootstrap chakra mui shadcn"
_BUNDLERS = "vite webpack rollup esbuild parcel turbopack tsup swc babel rspack"
_BUILD = "make makefile cmake bazel gradle maven turbo turborepo nx lerna just justfile rake"
_CI = (
    "github actions workflow workflows gitlab circleci jenkins travis buildkite drone "
    "azure pipelines"
)
_DEPLOY = (
    "docker compose kubernetes kubectl helm terraform ansible fly flyctl heroku vercel netlify "
    "render railway cloudflare aws ecs lambda gcp azure nginx caddy systemd capistrano kamal"
)
_CONTAINERS = "docker dockerfile compose podman kubernetes kubectl helm containerd"
_LOGGING = (
    "logging logger structlog loguru winston pino bunyan log4j logback slf4j slog zap zerolog "
    "logrus tracing serilog"
)
_MONITORING = "sentry datadog prometheus grafana opentelemetry otel newrelic honeycomb rollbar"
_HTTP_CLIENTS = "httpx requests aiohttp urllib3 axios fetch ky got reqwest ureq faraday guzzle okhttp retrofit"
_AUTH = (
    "jwt oauth oidc session cookie bcrypt argon2 passlib devise auth0 clerk keycloak passport "
    "sanctum nextauth lucia token tokens"
)
_VALIDATION = "pydantic marshmallow attrs zod yup joi valibot ajv serde"
_CONFIG = "env dotenv settings config yaml toml pydantic viper envconfig figment"
_CACHE = "redis memcached memcache valkey varnish lru"
_PAYMENTS = "stripe paypal braintree adyen paddle checkout webhook"
_EMAIL = "smtp sendgrid mailgun postmark ses resend mailer actionmailer"
_STORAGE = "s3 minio gcs blob bucket boto3 activestorage cloudinary"
_CLI = "argparse click typer clap cobra urfave commander yargs thor picocli"
_ASYNC = "asyncio trio anyio tokio async await goroutine goroutines"
_VERSION_MGRS = "pyenv nvm fnm volta asdf mise rbenv rvm rustup sdkman"
_HOOKS = "husky lefthook pre commit precommit lint staged"
_DOCS = "readme mkdocs sphinx docusaurus vitepress rustdoc javadoc typedoc openapi swagger"
_E2E = "playwright cypress selenium puppeteer webdriver capybara"
_COVERAGE = "coverage pytest cov istanbul nyc c8 tarpaulin jacoco simplecov"
_MOCKS = "mock mocks mocker monkeypatch responses respx msw nock vcr sinon mockito wiremock"
_FACTORIES = "fixture fixtures factory factories factory_boy factorybot faker seed seeds"
_API = "rest graphql grpc openapi swagger trpc endpoint endpoints route routes router"
_STATE = "redux zustand jotai mobx pinia vuex recoil tanstack swr"

CONCEPTS: dict[str, str] = {
    # tests
    "test": _TEST_RUNNERS,
    "spec": _TEST_RUNNERS,
    "suite": _TEST_RUNNERS,
    "e2e": _E2E,
    "end2end": _E2E,
    "browser test": _E2E,
    "coverage": _COVERAGE,
    "mock": _MOCKS,
    "stub": _MOCKS,
    "fixture": _FACTORIES,
    "factory": _FACTORIES,
    "seed": _FACTORIES,
    # dependencies and builds
    "package manager": _PACKAGE_MANAGERS,
    "dependency": _PACKAGE_MANAGERS + " lockfile lock requirements",
    "depend": _PACKAGE_MANAGERS,
    "install": _PACKAGE_MANAGERS,
    "package": _PACKAGE_MANAGERS,
    "lockfile": "lock poetry uv pnpm yarn npm cargo gemfile composer",
    "library": "crate gem package module dependency",
    "crate": "cargo",
    "gem": "bundler bundle gemfile",
    "build": _BUILD + " " + _BUNDLERS,
    "bundler": _BUNDLERS,
    "bundle": _BUNDLERS,
    "monorepo": "turbo turborepo nx lerna workspace workspaces pnpm",
    "workspace": "turbo turborepo nx lerna pnpm cargo",
    "task runner": _BUILD,
    "version manager": _VERSION_MGRS,
    "runtime": "python node deno bun jvm dotnet ruby php erlang beam",
    # code quality
    "lint": _LINTERS,
    "linter": _LINTERS,
    "format": _FORMATTERS,
    "formatter": _FORMATTERS,
    "style": _FORMATTERS + " " + _LINTERS,
    "type": _TYPE_CHECKERS,
    "typecheck": _TYPE_CHECKERS,
    "type checker": _TYPE_CHECKERS,
    "hook": _HOOKS,
    "pre commit": _HOOKS,
    # data
    "database": _DATABASES,
    "db": _DATABASES,
    "datastore": _DATABASES,
    "sql": _DATABASES + " " + _ORMS,
    "orm": _ORMS,
    "model": _ORMS,
    "query builder": _ORMS,
    "migration": _MIGRATIONS,
    "schema": _MIGRATIONS,
    "cache": _CACHE,
    "caching": _CACHE,
    "storage": _STORAGE,
    "upload": _STORAGE,
    "file storage": _STORAGE,
    "search engine": "elasticsearch opensearch meilisearch typesense algolia solr",
    "full text": "elasticsearch opensearch meilisearch typesense fts tsvector",
    # background work
    "background": _QUEUES,
    "job": _QUEUES,
    "queue": _QUEUES,
    "worker": _QUEUES,
    "task": _QUEUES,
    "async job": _QUEUES,
    "schedule": "cron crontab beat celery scheduler sidekiq quartz whenever",
    "cron": "crontab beat scheduler quartz whenever",
    "broker": "rabbitmq kafka redis sqs nats amqp",
    "message": "rabbitmq kafka sqs nats amqp pubsub",
    # frameworks and front end
    "framework": _WEB_FRAMEWORKS + " " + _FRONTEND,
    "web framework": _WEB_FRAMEWORKS,
    "backend": _WEB_FRAMEWORKS,
    "server": _WEB_FRAMEWORKS + " uvicorn gunicorn puma unicorn nginx",
    "frontend": _FRONTEND + " " + _BUNDLERS,
    "ui": _FRONTEND + " " + _STYLING,
    "css": _STYLING,
    "styling": _STYLING,
    "component": _FRONTEND + " storybook",
    "state management": _STATE,
    "data fetching": "tanstack swr axios fetch apollo urql",
    "router": "router routes routing",
    "route": "router routes endpoint handler",
    "endpoint": _API + " handler handlers controller",
    "api": _API,
    "client": _HTTP_CLIENTS,
    "http": _HTTP_CLIENTS,
    "http client": _HTTP_CLIENTS,
    "request": _HTTP_CLIENTS,
    "websocket": "websockets socketio ws channels actioncable sse",
    "realtime": "websocket websockets socketio sse pusher",
    "validation": _VALIDATION,
    "validate": _VALIDATION,
    "serialization": _VALIDATION + " json serializer serializers",
    "cli": _CLI,
    "command line": _CLI,
    "argument": _CLI,
    "async": _ASYNC,
    "concurrency": _ASYNC + " threads threadpool",
    # operations
    "deploy": _DEPLOY,
    "deployment": _DEPLOY,
    "host": _DEPLOY,
    "hosting": _DEPLOY,
    "production": _DEPLOY,
    "release": _DEPLOY + " tag changelog semver",
    "ci": _CI,
    "pipeline": _CI,
    "continuous integration": _CI,
    "container": _CONTAINERS,
    "image": "docker dockerfile podman",
    "infrastructure": "terraform pulumi ansible cloudformation cdk helm kubernetes",
    "log": _LOGGING,
    "logging": _LOGGING,
    "monitor": _MONITORING,
    "monitoring": _MONITORING,
    "error tracking": _MONITORING,
    "metric": "prometheus grafana statsd datadog opentelemetry",
    "trace": "opentelemetry otel jaeger tracing zipkin",
    # security and config
    "auth": _AUTH,
    "authentication": _AUTH,
    "login": _AUTH,
    "password": "bcrypt argon2 scrypt passlib hash hashing",
    "token": "jwt oauth bearer refresh",
    "permission": "rbac policy policies pundit cancancan casbin guard",
    "secret": "env dotenv vault kms sops",
    "config": _CONFIG,
    "configuration": _CONFIG,
    "setting": _CONFIG,
    "environment variable": "env dotenv environ getenv",
    # integrations
    "payment": _PAYMENTS,
    "billing": _PAYMENTS + " invoice subscription",
    "email": _EMAIL,
    "mail": _EMAIL,
    "documentation": _DOCS,
    "docs": _DOCS,
}

# General synonyms: the words of a question and of the memory that answers it (a row of their own,
# so the two lists can be measured apart: ``search.EXPAND_SYNONYMS``).
SYNONYMS: dict[str, str] = {
    "error": "exception traceback stack failed failure panic crash",
    "bug": "fix fixed error exception regression",
    "fail": "error exception traceback failed failure",
    "crash": "panic exception traceback segfault",
    "run": "command script cmd",
    "command": "cmd script run",
    "script": "command scripts cmd",
    "folder": "directory dir path",
    "directory": "folder dir path",
    "file": "path",
    "function": "def fn func method",
    "method": "def fn func function",
    "class": "struct interface type",
    "speed": "performance latency slow fast benchmark",
    "slow": "performance latency timeout benchmark profile",
    "performance": "latency benchmark profile profiling slow",
    "decide": "decision chose choose picked switched",
    "decision": "decided chose choose picked switched",
    "prefer": "preference convention always never",
    "convention": "style always never naming prefer",
    "upgrade": "bump update upgraded version",
    "version": "bump upgrade pinned pin",
    "rename": "renamed move moved",
    "remove": "removed drop dropped delete deleted",
    "replace": "replaced switch switched migrate migrated",
    "switch": "switched replace replaced migrate migrated",
}
