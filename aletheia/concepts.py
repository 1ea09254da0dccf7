"""General software vocabulary: the words a question uses for a concept, and the names the
memories that answer it use instead.

A later session asks "how do I run the tests?" or "which package manager do we use?"; the
memory that answers says `pytest -q -x` or `uv add httpx`.  Search adds the names listed here
for a concept the query names, as extra words weighted below the query's own
(``search.EXPAND_WEIGHT``).  The lists were written from general knowledge of many ecosystems
(Python, JavaScript/TypeScript, Ruby, PHP, Go, Rust, Java/Kotlin, .NET, Elixir, Swift, mobile,
infrastructure), before any miss of the evaluation sets was read, and never from a held-out
project; C/C++, embedded, desktop and mobile UI toolkits, dependency injection, game engines,
data/ML and the rest were added later the same way, without reading any evaluation data.  A
name earns its place by being a common tool for that concept somewhere, not by appearing in our
data.  Words are lower-case single tokens as the index splits them (a name with a dot or a dash
is split by the tokenizer: list its distinctive part, or its joined form, which is how
``toolkinds.tool_key`` reads it: ``clangtidy``).

``CONCEPTS`` (tools by what they are for) and ``SYNONYMS`` (plain words): a key (one word, or two words that must both be in the query) → the words added.
A key is matched on the index's stems, so "tests", "testing" and "test" all name the first.
A one-word key is also named by a query word and the stop word after it, joined ("log in" names
"login", and then not "log": ``search.EXPAND_PHRASES``).
"""

from __future__ import annotations

_TEST_RUNNERS = (
    "pytest unittest nose tox nox hypothesis jest vitest mocha jasmine karma ava playwright "
    "cypress rspec minitest phpunit pest junit testng kotest xunit nunit mstest exunit "
    "testcontainers catch2 gtest googletest ctest doctest cppunit cpputest cmocka "
    "xctest spock espresso robolectric testify ginkgo gomega nextest proptest insta "
    "codeception behat cucumber qunit uvu testthat tinytest busted luaunit hspec "
    "tasty quickcheck eunit ounit alcotest"
)
_PACKAGE_MANAGERS = (
    "pip uv poetry pipenv pdm conda hatch rye npm pnpm yarn bun deno bundler gem cargo composer "
    "maven gradle nuget hex mix swiftpm cocoapods brew vcpkg conan pixi mamba micromamba pipx "
    "cabal opam carthage luarocks cpanm rebar3 dub nix spack cpm renv pak packrat"
)
_LINTERS = (
    "ruff flake8 pylint eslint biome oxlint rubocop standardrb clippy golangci staticcheck "
    "phpstan psalm checkstyle ktlint detekt stylelint shellcheck credo hadolint clangtidy "
    "cppcheck cpplint swiftlint pmd spotbugs errorprone revive golint tflint yamllint "
    "markdownlint commitlint semgrep lintr selene luacheck statix deadnix hlint"
)
_FORMATTERS = (
    "black ruff isort prettier biome rustfmt gofmt goimports standardrb rubocop pint "
    "spotless ktfmt dprint clangformat swiftformat scalafmt csharpier yapf autopep8 shfmt stylua "
    "styler alejandra nixfmt ormolu fourmolu"
)
_TYPE_CHECKERS = "mypy pyright pyre tsc typescript sorbet phpstan psalm dialyzer"
_DATABASES = (
    "postgres postgresql psql mysql mariadb sqlite mongodb mongo redis dynamodb cassandra "
    "cockroachdb supabase neon planetscale firestore clickhouse elasticsearch opensearch duckdb "
    "couchdb couchbase neo4j influxdb timescaledb scylladb surrealdb libsql turso mssql "
    "sqlserver firebase bigquery redshift rocksdb leveldb lmdb spanner"
)
_ORMS = (
    "sqlalchemy alembic django peewee tortoise sqlmodel prisma drizzle typeorm sequelize "
    "knex kysely mikro activerecord eloquent doctrine hibernate jpa gorm sqlx diesel sqlc "
    "ecto entity dapper sqldelight jooq mybatis efcore nhibernate mongoose "
    "beanie sqlboiler seaorm coredata swiftdata grdb room realm objectbox isar"
)
_MIGRATIONS = (
    "alembic migrate makemigrations flyway liquibase goose knex prisma drizzle sqlx diesel "
    "ecto atlas dbmate"
)
_QUEUES = (
    "celery rq dramatiq huey arq sidekiq resque goodjob delayed solid horizon bull bullmq "
    "agenda temporal asynq faktory hangfire oban rabbitmq kafka sqs nats redis pulsar activemq "
    "zeromq kinesis masstransit shoryuken pgboss graphile inngest workmanager"
)
_WEB_FRAMEWORKS = (
    "fastapi flask django starlette litestar sanic aiohttp express fastify koa hono nestjs "
    "rails sinatra laravel symfony slim gin echo chi fiber axum actix rocket warp spring "
    "micronaut quarkus ktor phoenix aspnet sveltekit nuxt remix tornado falcon "
    "quart hanami roda cakephp codeigniter yii adonisjs hapi elysia beego vapor shiny plumber genie "
    "dropwizard vertx javalin http4k grails blazor drogon"
)
_FRONTEND = (
    "react nextjs next vue nuxt svelte sveltekit angular solid astro remix qwik preact htmx "
    "alpine ember lit stencil jquery elm stimulus hotwire livewire inertia yew leptos dioxus"
)
_STYLING = (
    "tailwind tailwindcss css sass scss less styled emotion postcss bootstrap chakra mui shadcn "
    "unocss vanillaextract bulma daisyui radix mantine antd vuetify quasar primevue"
)
_BUNDLERS = "vite webpack rollup esbuild parcel turbopack tsup swc babel rspack rolldown metro browserify"
_BUILD = (
    "make makefile cmake bazel gradle maven turbo turborepo nx lerna just justfile rake meson ninja "
    "scons autotools autoconf premake xmake buck buck2 pants msbuild xcodebuild sbt lein mill ant "
    "earthly gulp grunt tuist xcodegen mage taskfile bitbake"
)
_CI = (
    "github actions workflow workflows gitlab circleci jenkins travis buildkite drone "
    "azure pipelines teamcity bamboo tekton woodpecker concourse appveyor bitrise codemagic "
    "fastlane"
)
_DEPLOY = (
    "docker compose kubernetes kubectl helm terraform ansible fly flyctl heroku vercel netlify "
    "render railway cloudflare aws ecs lambda gcp azure nginx caddy systemd capistrano kamal "
    "argocd nomad dokku coolify openshift fargate rsconnect shinyapps deployrs colmena nixops"
)
_CONTAINERS = (
    "docker dockerfile compose podman kubernetes kubectl helm containerd buildah minikube k3s "
    "skaffold tilt kustomize colima orbstack"
)
_LOGGING = (
    "logging logger structlog loguru winston pino bunyan log4j logback slf4j slog zap zerolog "
    "logrus tracing serilog spdlog glog nlog log4net monolog timber oslog"
)
_MONITORING = (
    "sentry datadog prometheus grafana opentelemetry otel newrelic honeycomb rollbar crashlytics "
    "bugsnag appsignal loki jaeger"
)
_HTTP_CLIENTS = (
    "httpx requests aiohttp urllib3 axios fetch ky got reqwest ureq faraday guzzle okhttp retrofit "
    "alamofire urlsession resty libcurl restsharp refit httparty superagent undici ofetch httr httr2"
)
_AUTH = (
    "jwt oauth oidc session cookie bcrypt argon2 passlib devise auth0 clerk keycloak passport "
    "sanctum nextauth lucia token tokens cognito okta authjs betterauth omniauth doorkeeper "
    "authlib allauth workos stytch"
)
_VALIDATION = (
    "pydantic marshmallow attrs zod yup joi valibot ajv serde arktype typebox superstruct "
    "classvalidator cerberus jsonschema fluentvalidation"
)
_CONFIG = "env dotenv settings config yaml toml pydantic viper envconfig figment"
_CACHE = "redis memcached memcache valkey varnish lru dragonfly hazelcast caffeine ehcache keydb"
_PAYMENTS = "stripe paypal braintree adyen paddle checkout webhook lemonsqueezy mollie razorpay revenuecat storekit"
_EMAIL = "smtp sendgrid mailgun postmark ses resend mailer actionmailer nodemailer mailjet sparkpost brevo mailchimp"
_STORAGE = "s3 minio gcs blob bucket boto3 activestorage cloudinary r2 backblaze uploadthing carrierwave shrine multer"
_CLI = "argparse click typer clap cobra urfave commander yargs thor picocli docopt oclif kingpin cxxopts cli11"
_ASYNC = "asyncio trio anyio tokio async await goroutine goroutines"
_VERSION_MGRS = "pyenv nvm fnm volta asdf mise rbenv rvm rustup sdkman rig juliaup ghcup"
_HOOKS = "husky lefthook pre commit precommit lint staged"
_DOCS = (
    "readme mkdocs sphinx docusaurus vitepress rustdoc javadoc typedoc openapi swagger doxygen "
    "jsdoc mdbook docfx dokka mintlify starlight nextra quarto rmarkdown knitr roxygen pkgdown "
    "vimdoc panvimdoc pandoc"
)
_E2E = "playwright cypress selenium puppeteer webdriver capybara appium detox maestro xcuitest espresso"
_COVERAGE = "coverage pytest cov istanbul nyc c8 tarpaulin jacoco simplecov"
_MOCKS = (
    "mock mocks mocker monkeypatch responses respx msw nock vcr sinon mockito wiremock mockk "
    "mockall gomock mockery moq nsubstitute fakeiteasy gmock googlemock"
)
_FACTORIES = "fixture fixtures factory factories factory_boy factorybot faker seed seeds"
_API = "rest graphql grpc openapi swagger trpc endpoint endpoints route routes router"
_STATE = "redux zustand jotai mobx pinia vuex recoil tanstack swr ngrx xstate valtio riverpod bloc getx rxjs"
# What a user interface is drawn with outside the browser's own front end: native and desktop
# toolkits, and the frameworks that build one app for several platforms.
_UI_TOOLKITS = (
    "qt pyqt pyside qml gtk gtkmm wxwidgets wxpython tkinter kivy imgui fltk swing javafx swiftui "
    "uikit appkit winui wpf winforms maui avalonia uno jetpack electron tauri flutter reactnative "
    "expo ionic capacitor cordova xamarin nativescript egui iced slint fyne wails"
)
_MOBILE = (
    "flutter reactnative expo ionic capacitor cordova xamarin maui nativescript kmp swiftui "
    "uikit jetpack"
)
_DI = (
    "hilt dagger koin kodein guice autofac ninject simpleinjector inversify tsyringe typedi awilix "
    "wire fx dig injector dependencyinjector lagom punq dishka swinject phpdi pimple"
)
_GAME_ENGINES = (
    "unity unreal godot bevy gamemaker defold cocos2d cocos2dx cocos phaser pixijs babylonjs monogame "
    "love2d raylib sdl sdl2 sfml libgdx pygame o3de cryengine renpy macroquad ggez fyrox "
    "ebitengine"
)
_GRAPHICS = "opengl vulkan metal directx webgl webgpu wgpu threejs bgfx"
_EMBEDDED = (
    "zephyr freertos arduino platformio espidf mbed rtic embassy nuttx chibios stm32cube "
    "micropython circuitpython"
)
_DATAFRAMES = "pandas polars numpy dask spark pyspark duckdb dplyr tidyverse datatable arrow"
_ML = (
    "pytorch torch tensorflow keras jax sklearn scikit scikitlearn xgboost lightgbm catboost transformers "
    "onnx mlflow wandb"
)
_ORCHESTRATION = "airflow dagster prefect luigi dbt kubeflow argo snakemake nextflow tarchetypes drake"
_LLM = "langchain llamaindex litellm ollama vllm"
_VECTOR = "pgvector pinecone weaviate qdrant chroma milvus faiss lancedb"
_TUI = "textual bubbletea ratatui ncurses tview urwid ftxui blessed ink"
_EXTENSIONS = "plasmo wxt crxjs webextension manifest"
_STATIC_SITES = "hugo jekyll eleventy gatsby hexo zola pelican astro"

# What sits in front of an app and terminates TLS, and where its certificates come from.
_PROXIES = (
    "nginx caddy caddyfile traefik haproxy envoy apache httpd certbot letsencrypt acme "
    "cloudflare ingress stunnel"
)
# Where a mobile or desktop app keeps small settings on the device.
_PREFERENCES = (
    "datastore sharedpreferences userdefaults mmkv asyncstorage localstorage keychain keystore "
    "securestorage hive appstorage"
)
_IMAGES = "coil glide picasso fresco kingfisher nuke sdwebimage pillow sharp imagemagick libvips"
_I18N = (
    "i18n i18next gettext babel crowdin lokalise transifex weblate poeditor formatjs fluent "
    "intl icu arb xliff"
)
_PUSH = "fcm firebase apns onesignal pusher novu"
_ANALYTICS = "posthog mixpanel segment amplitude plausible matomo umami"
_FEATURE_FLAGS = "launchdarkly unleash flagsmith growthbook configcat flipper"
_CHARTS = ("chartjs recharts d3 echarts plotly matplotlib seaborn highcharts apexcharts nivo vega "
           "ggplot2 plotnine makie gadfly")
_AUDIO = "ffmpeg libsndfile sox portaudio pyaudio librosa soundfile pydub miniaudio openal"
_BACKUPS = "restic borg borgbackup rclone duplicity velero pgbackrest barman kopia"
_ENCRYPTION = "sops age gpg vault kms libsodium openssl sealedsecrets agenix ragenix"
_VPN = "wireguard tailscale openvpn zerotier headscale ipsec"

CONCEPTS: dict[str, str] = {
    # in front of the app, on the device, in the app's own libraries
    "proxy": _PROXIES,
    "tls": _PROXIES,
    "ssl": _PROXIES,
    "https": _PROXIES,
    "certificate": _PROXIES,
    "persist": _DATABASES + " " + _ORMS,
    "preference": _PREFERENCES,
    "prefs": _PREFERENCES,
    "photo": _IMAGES,
    "picture": _IMAGES,
    "thumbnail": _IMAGES,
    "translation": _I18N,
    "localisation": _I18N,
    "localization": _I18N,
    "locale": _I18N,
    "notification": _PUSH,
    "analytics": _ANALYTICS,
    "feature flag": _FEATURE_FLAGS,
    "chart": _CHARTS,
    "plot": _CHARTS,
    "audio": _AUDIO,
    "backup": _BACKUPS,
    "encrypt": _ENCRYPTION,
    "vpn": _VPN,
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
    # what the user sees outside the browser, and other kinds of project
    "ui toolkit": _UI_TOOLKITS,
    "toolkit": _UI_TOOLKITS,
    "gui": _UI_TOOLKITS,
    "desktop": _UI_TOOLKITS,
    "native ui": _UI_TOOLKITS,
    "mobile": _MOBILE,
    "cross platform": _MOBILE,
    "dependency injection": _DI,
    "injector": _DI,
    "ioc": _DI,
    "service locator": _DI,
    "game engine": _GAME_ENGINES,
    "graphic": _GRAPHICS,
    "shader": _GRAPHICS,
    "embedded": _EMBEDDED,
    "firmware": _EMBEDDED,
    "microcontroller": _EMBEDDED,
    "rtos": _EMBEDDED,
    "dataframe": _DATAFRAMES,
    "data processing": _DATAFRAMES,
    "machine learning": _ML,
    "ml": _ML,
    "model training": _ML,
    "deep learning": _ML,
    "orchestration": _ORCHESTRATION,
    "orchestrator": _ORCHESTRATION,
    "data pipeline": _ORCHESTRATION,
    "llm": _LLM,
    "vector store": _VECTOR,
    "vector database": _VECTOR,
    "embedding": _VECTOR,
    "tui": _TUI,
    "terminal ui": _TUI,
    "browser extension": _EXTENSIONS,
    "static site": _STATIC_SITES,
    "site generator": _STATIC_SITES,
    # operations
    "deploy": _DEPLOY,
    "deployment": _DEPLOY,
    "host": _DEPLOY,
    "hosting": _DEPLOY,
    "production": _DEPLOY,
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
    "often": "interval frequency period",
    "release": "version",  # ("Which Zig release…": a tool prints its version, `zig version`)
    "rename": "renamed move moved",
    "remove": "removed drop dropped delete deleted",
    "replace": "replaced switch switched migrate migrated",
    "switch": "switched replace replaced migrate migrated",
}
