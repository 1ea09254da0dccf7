"""The first corpus (provider tokens in generic contexts, kind-specific contexts, generic
credentials, private blocks, ordinary text), kept as it was and tagged with families."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

from tests.redact_corpus.case import Case
from tests.redact_corpus.fakes import ALNUM, B64, BECH32, HEX, Fake, grouped

# ---------------------------------------------------------------------------------------------
# Contexts: a token-like secret dropped into typical tool output. Each returns (text, keep).

Context = Callable[[str, str], tuple[str, tuple[str, ...]]]


def ctx_log(s: str, env: str) -> tuple[str, tuple[str, ...]]:
    return (f"2024-05-14T09:21:07.412Z INFO  [worker-3] sync: authenticated with {s} (scope=repo)\n"
            "2024-05-14T09:21:07.519Z INFO  [worker-3] pulled 14 objects",
            ("[worker-3] sync: authenticated with ", "(scope=repo)", "pulled 14 objects"))


def ctx_dotenv(s: str, env: str) -> tuple[str, tuple[str, ...]]:
    return (f"$ cat .env\nAPP_ENV=production\n{env}={s}\nLOG_LEVEL=debug\n",
            ("$ cat .env", "APP_ENV=production", f"{env}=", "LOG_LEVEL=debug"))


def ctx_export(s: str, env: str) -> tuple[str, tuple[str, ...]]:
    return (f'$ export {env}="{s}"\n$ ./deploy.sh --region eu-west-1\ndeploying…',
            (f'export {env}="', "./deploy.sh --region eu-west-1"))


def ctx_json(s: str, env: str) -> tuple[str, tuple[str, ...]]:
    body = {"object": "credential", "id": "cred_8842", "value": s, "created": 1715678467,
            "livemode": False}
    return json.dumps(body, indent=2), ('"object": "credential"', '"id": "cred_8842"', '"value": "')


def ctx_python(s: str, env: str) -> tuple[str, tuple[str, ...]]:
    return (f'import client\n\napi = client.Client(api_key="{s}", timeout=30)\nprint(api.me())\n',
            ("api = client.Client(api_key=", "timeout=30", "print(api.me())"))


def ctx_traceback(s: str, env: str) -> tuple[str, tuple[str, ...]]:
    return ("Traceback (most recent call last):\n"
            '  File "/srv/app/sync.py", line 42, in <module>\n'
            "    session.login()\n"
            '  File "/srv/app/client.py", line 118, in login\n'
            "    raise AuthError(f\"rejected credential {token!r}\")\n"
            f"client.AuthError: rejected credential '{s}'",
            ('File "/srv/app/client.py", line 118, in login', "client.AuthError: rejected credential"))


def ctx_yaml(s: str, env: str) -> tuple[str, tuple[str, ...]]:
    return ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-credentials\n  namespace: prod\n"
            f"type: Opaque\nstringData:\n  {env}: {s}\n",
            ("kind: Secret", "name: app-credentials", f"  {env}: "))


def ctx_curl(s: str, env: str) -> tuple[str, tuple[str, ...]]:
    return (f'$ curl -sS -H "Authorization: Bearer {s}" https://api.example.com/v1/me\n'
            '{"login": "jane", "id": 4411}',
            ("curl -sS -H \"Authorization: Bearer ", "https://api.example.com/v1/me", '"login": "jane"'))


def ctx_prose(s: str, env: str) -> tuple[str, tuple[str, ...]]:
    return (f"Found a leftover value in scripts/old.sh line 12: {s} — removing it.",
            ("Found a leftover value in scripts/old.sh line 12:", "removing it."))


TOKEN_CONTEXTS: tuple[tuple[str, Context], ...] = (
    ("log", ctx_log), ("dotenv", ctx_dotenv), ("export", ctx_export), ("json", ctx_json),
    ("python", ctx_python), ("traceback", ctx_traceback), ("yaml", ctx_yaml), ("curl", ctx_curl),
    ("prose", ctx_prose),
)

# kind → (factory method, env-var name used in contexts, how many generic contexts)
TOKEN_KINDS: dict[str, tuple[str, str]] = {
    "anthropic": ("anthropic", "ANTHROPIC_API_KEY"),
    "openai": ("openai", "OPENAI_API_KEY"),
    "openrouter": ("openrouter", "OPENROUTER_API_KEY"),
    "xai": ("xai", "XAI_API_KEY"),
    "groq": ("groq", "GROQ_API_KEY"),
    "stripe": ("stripe", "STRIPE_SECRET_KEY"),
    "github": ("github", "GITHUB_TOKEN"),
    "gitlab": ("gitlab", "GITLAB_TOKEN"),
    "grafana": ("grafana", "GRAFANA_TOKEN"),
    "npm": ("npm", "NPM_TOKEN"),
    "slack": ("slack", "SLACK_BOT_TOKEN"),
    "aws_access_key_id": ("aws_access_key_id", "AWS_ACCESS_KEY_ID"),
    "google_api_key": ("google_api_key", "GOOGLE_API_KEY"),
    "google_oauth_secret": ("google_oauth_secret", "GOOGLE_CLIENT_SECRET"),
    "jwt": ("jwt", "ID_TOKEN"),
    "huggingface": ("huggingface", "HF_TOKEN"),
    "twilio": ("twilio", "TWILIO_API_KEY"),
    "sendgrid": ("sendgrid", "SENDGRID_API_KEY"),
    "mailgun": ("mailgun", "MAILGUN_API_KEY"),
    "digitalocean": ("digitalocean", "DIGITALOCEAN_TOKEN"),
    "telegram": ("telegram", "TELEGRAM_BOT_TOKEN"),
    "shopify": ("shopify", "SHOPIFY_ACCESS_TOKEN"),
    "pypi": ("pypi", "TWINE_PASSWORD"),
    "dockerhub": ("dockerhub", "DOCKERHUB_TOKEN"),
    "heroku": ("heroku", "HEROKU_API_KEY"),
    "databricks": ("databricks", "DATABRICKS_TOKEN"),
    "age": ("age", "SOPS_AGE_KEY"),
    "postman": ("postman", "POSTMAN_API_KEY"),
    "hashicorp_vault": ("hashicorp_vault", "VAULT_TOKEN"),
    "atlassian": ("atlassian", "JIRA_API_TOKEN"),
}


_SPECIFIC_FAMILY = {
    "private_key": "key_material", "ssh_private_key": "key_material", "credit_card": "card",
    "azure_storage": "cloud_config", "aws_secret_access_key": "cloud_config",
}

# The generic cases' ids name their form; the family and kind follow from it.
_GENERIC_KINDS = (
    ("url-", "connection_string", "url-userinfo"),
    ("git-remote", "connection_string", "url-userinfo"),
    ("ado-", "connection_string", "keyword-conn-string"),
    ("odbc-", "connection_string", "keyword-conn-string"),
    ("jdbc-", "connection_string", "query-secret-param"),
    ("sql-", "connection_string", "sql-password"),
    ("cli-", "cli_password", "generic-flag"),
    ("curl-user", "cli_password", "curl-user"),
    ("pgpassword", "cli_password", "env-prefix"),
    ("authorization-", "generic", "auth-header"),
    ("x-api-key", "generic", "auth-header"),
    ("json-authorization", "generic", "auth-header"),
    ("set-cookie", "cookie", "set-cookie"),
    ("cookie-", "cookie", "cookie-header"),
    ("python-", "code", "py-assignment"),
    ("js-", "code", "js-ts"),
    ("django", "code", "py-assignment"),
    ("terraform", "code", "hcl"),
    ("powershell", "code", "dotenv-export"),
    ("export-", "code", "dotenv-export"),
    ("dotenv", "code", "dotenv-export"),
    ("dockerfile", "code", "dotenv-export"),
    ("k8s-", "cloud_config", "k8s-secret"),
    ("compose-", "cloud_config", "compose-env"),
    ("docker-config", "cloud_config", "registry-auth"),
)


def _generic_kind(cid: str) -> tuple[str, str]:
    for prefix, family, kind in _GENERIC_KINDS:
        if cid.startswith(prefix):
            return family, kind
    return "generic", "config-assignment"


_NEGATIVE_FAMILIES = (
    ("card", "card"), ("pem", "key_material"), ("certificate", "key_material"),
    ("base64", "key_material"), ("sha", "hashes_ids"), ("md5", "hashes_ids"),
    ("pip-hash", "hashes_ids"), ("uuid", "hashes_ids"), ("git-log", "hashes_ids"),
    ("int64", "hashes_ids"), ("long-digit", "hashes_ids"), ("timestamps", "hashes_ids"),
    ("placeholder", "placeholders"), ("shell-", "placeholders"), ("dollar-var", "placeholders"),
    ("url", "connection_string"), ("ssh-scp", "connection_string"), ("docker-", "cli_password"),
    ("cookie", "cookie"), ("k8s", "cloud_config"), ("secret-name", "cloud_config"),
    ("aws-arn", "cloud_config"), ("prose", "prose"), ("comment", "prose"), ("docstring", "prose"),
    ("private-word", "private_tag"), ("markers", "ordinary"),
)


def _negative_kind(cid: str) -> tuple[str, str]:
    for prefix, family in _NEGATIVE_FAMILIES:
        if cid.startswith(prefix):
            return family, "legacy-" + family
    return "code", "legacy-names-secrets"


def _marker(kind: str) -> str:
    return f"[redacted:{kind}]" if kind else "[redacted]"


def token_cases(fake: Fake) -> list[Case]:
    """Every token kind in four of the generic contexts (rotating), so each shows up everywhere."""
    cases: list[Case] = []
    n = len(TOKEN_CONTEXTS)
    for k, (kind, (method, env)) in enumerate(TOKEN_KINDS.items()):
        for j in range(4):
            name, ctx = TOKEN_CONTEXTS[(k + j * 2) % n]
            secret = getattr(fake, method)()
            text, keep = ctx(secret, env)
            cases.append(Case(f"{kind}-{name}", "provider_token", kind, text, (secret,), _marker(kind), keep))
    return cases


def specific_cases(fake: Fake) -> list[Case]:
    """Kind-specific contexts: the places these secrets really turn up."""
    f = fake
    out: list[Case] = []

    def add(cid: str, kind: str, text: str, secrets: tuple[str, ...], keep: tuple[str, ...]) -> None:
        out.append(Case(cid, _SPECIFIC_FAMILY.get(kind, "provider_token"), kind, text, secrets,
                         _marker(kind), keep))

    gh = f.github()
    add("github-git-remote", "github",
        f"$ git remote -v\norigin\thttps://x-access-token:{gh}@github.com/acme/api.git (fetch)\n"
        f"origin\thttps://x-access-token:{gh}@github.com/acme/api.git (push)",
        (gh,), ("origin\thttps://x-access-token:", "@github.com/acme/api.git (fetch)"))
    gh = f.github()
    add("github-gh-auth-status", "github",
        "$ gh auth status\ngithub.com\n  ✓ Logged in to github.com account jane (keyring)\n"
        f"  - Active account: true\n  - Token: {gh}\n  - Token scopes: 'gist', 'repo'",
        (gh,), ("Logged in to github.com account jane", "  - Token: ", "Token scopes"))
    tok = f.npm()
    add("npm-npmrc", "npm", f"$ cat ~/.npmrc\n//registry.npmjs.org/:_authToken={tok}\nsave-exact=true",
        (tok,), ("//registry.npmjs.org/:_authToken=", "save-exact=true"))
    tok = f.pypi()
    add("pypi-pypirc", "pypi",
        f"$ cat ~/.pypirc\n[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\npassword = {tok}\n",
        (tok,), ("[pypi]", "username = __token__", "password = "))
    tok = f.dockerhub()
    add("dockerhub-login", "dockerhub",
        f"$ echo {tok} | docker login -u acme --password-stdin\nLogin Succeeded",
        (tok,), ("| docker login -u acme --password-stdin", "Login Succeeded"))
    url = f.slack_webhook()
    secret = url.split("/services/")[1]
    add("slack-webhook-curl", "slack_webhook",
        "$ curl -X POST -H 'Content-type: application/json' "
        f"--data '{{\"text\":\"deploy finished\"}}' {url}\nok",
        (secret,), ("https://hooks.slack.com/services/", "deploy finished"))
    url = f.slack_webhook()
    add("slack-webhook-env", "slack_webhook", f"SLACK_WEBHOOK_URL={url}\n",
        (url.split("/services/")[1],), ("SLACK_WEBHOOK_URL=https://hooks.slack.com/services/",))
    url = f.discord_webhook()
    add("discord-webhook-python", "discord",
        f'requests.post("{url}", json={{"content": "build #812 passed"}})',
        (url.rsplit("/", 1)[1],), ('requests.post("https://discord.com/api/webhooks/', "build #812 passed"))
    tok = f.discord()
    add("discord-bot-env", "discord", f"DISCORD_BOT_TOKEN={tok}\nDISCORD_GUILD=8812",
        (tok,), ("DISCORD_BOT_TOKEN=", "DISCORD_GUILD=8812"))
    tok = f.discord()
    add("discord-bot-header", "discord",
        f'curl -H "Authorization: Bot {tok}" https://discord.com/api/v10/users/@me',
        (tok,), ('curl -H "Authorization: Bot ', "https://discord.com/api/v10/users/@me"))
    tok = f.telegram()
    add("telegram-url", "telegram",
        f"$ curl -s https://api.telegram.org/bot{tok}/sendMessage -d chat_id=42 -d text=hi\n"
        '{"ok":true,"result":{"message_id":7}}',
        (tok,), ("https://api.telegram.org/bot", "/sendMessage -d chat_id=42", '"message_id":7'))
    key = f.azure_storage()
    add("azure-connection-string", "azure_storage",
        "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmestore;"
        f"AccountKey={key};EndpointSuffix=core.windows.net",
        (key,), ("AccountName=acmestore;AccountKey=", ";EndpointSuffix=core.windows.net"))
    key = f.azure_storage()
    add("azure-json-settings", "azure_storage",
        json.dumps({"Values": {"AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName="
                               f"funcstore;AccountKey={key};EndpointSuffix=core.windows.net"}}),
        (key,), ('"AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName=funcstore',))
    kid, sec = f.aws_access_key_id(), f.aws_secret_access_key()
    add("aws-credentials-file", "aws_secret_access_key",
        f"$ cat ~/.aws/credentials\n[default]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}\n"
        "region = eu-west-1",
        (kid, sec), ("[default]", "aws_access_key_id = ", "aws_secret_access_key = ", "region = eu-west-1"))
    kid, sec, session = f.aws_access_key_id(), f.aws_secret_access_key(), f.b64(180)
    add("aws-sts-json", "aws_secret_access_key",
        json.dumps({"Credentials": {"AccessKeyId": kid, "SecretAccessKey": sec, "SessionToken": session,
                                    "Expiration": "2024-05-14T10:21:07+00:00"}}, indent=4),
        (kid, sec, session), ('"AccessKeyId": "', '"SecretAccessKey": "', '"Expiration": "2024-05-14T10:21:07+00:00"'))
    sec = f.aws_secret_access_key()
    add("aws-secret-env", "aws_secret_access_key", f"export AWS_SECRET_ACCESS_KEY={sec}\n",
        (sec,), ("export AWS_SECRET_ACCESS_KEY=",))
    tok = f.chars(HEX, 32)
    add("twilio-auth-token", "twilio", f"TWILIO_ACCOUNT_SID=AC{f.chars(HEX, 32)}\nTWILIO_AUTH_TOKEN={tok}\n",
        (tok,), ("TWILIO_ACCOUNT_SID=AC", "TWILIO_AUTH_TOKEN="))
    tok = f.uuid()
    add("heroku-uuid-env", "heroku", f"$ heroku config:get -a acme\nHEROKU_API_KEY={tok}\n",
        (tok,), ("HEROKU_API_KEY=",))
    tok = f.uuid()
    add("heroku-netrc", "heroku",
        f"$ cat ~/.netrc\nmachine api.heroku.com\n  login jane@example.com\n  password {tok}\n",
        (tok,), ("machine api.heroku.com", "login jane@example.com", "  password "))
    tok = f.mailgun()
    add("mailgun-curl", "mailgun",
        f"curl -s --user 'api:{tok}' https://api.mailgun.net/v3/mg.example.com/messages -F to=a@b.c",
        (tok,), ("curl -s --user 'api:", "https://api.mailgun.net/v3/mg.example.com/messages"))
    tok = f"{f.chars(HEX, 32)}-{f.chars(HEX, 8)}-{f.chars(HEX, 8)}"
    add("mailgun-new-format-env", "mailgun", f"MAILGUN_API_KEY={tok}", (tok,), ("MAILGUN_API_KEY=",))
    tok = f.databricks()
    add("databricks-cfg", "databricks",
        f"$ cat ~/.databrickscfg\n[DEFAULT]\nhost = https://adb-1234.5.azuredatabricks.net\ntoken = {tok}\n",
        (tok,), ("host = https://adb-1234.5.azuredatabricks.net", "token = "))
    tok = f.shopify()
    add("shopify-header", "shopify",
        f"> GET /admin/api/2024-04/shop.json HTTP/1.1\n> X-Shopify-Access-Token: {tok}\n< HTTP/1.1 200 OK",
        (tok,), ("> X-Shopify-Access-Token: ", "< HTTP/1.1 200 OK"))
    tok = f.digitalocean()
    add("digitalocean-doctl", "digitalocean", f"$ doctl auth init --access-token {tok}\nValidating token... OK",
        (tok,), ("$ doctl auth init --access-token ", "Validating token... OK"))
    tok = f.huggingface()
    add("huggingface-cli", "huggingface", f"$ huggingface-cli login --token {tok}\nLogin successful",
        (tok,), ("huggingface-cli login --token ", "Login successful"))
    sec = f.google_oauth_secret()
    add("google-client-secret-json", "google_oauth_secret",
        json.dumps({"installed": {"client_id": "1234-abc.apps.googleusercontent.com", "client_secret": sec,
                                  "redirect_uris": ["http://localhost"]}}),
        (sec,), ('"client_id": "1234-abc.apps.googleusercontent.com"', '"client_secret": "'))
    key = f.google_api_key()
    add("google-maps-url", "google_api_key",
        f"GET https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={key} 200 OK",
        (key,), ("https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key=", "200 OK"))
    tok = f.anthropic()
    add("anthropic-curl-header", "anthropic",
        f"curl https://api.anthropic.com/v1/messages -H 'x-api-key: {tok}' -H 'anthropic-version: 2023-06-01'",
        (tok,), ("curl https://api.anthropic.com/v1/messages -H 'x-api-key: ", "anthropic-version: 2023-06-01"))
    tok = f.stripe()
    add("stripe-curl-user", "stripe", f"curl https://api.stripe.com/v1/charges -u {tok}: -d amount=2000",
        (tok,), ("curl https://api.stripe.com/v1/charges -u ", "-d amount=2000"))
    tok = f.gitlab()
    add("gitlab-clone-url", "gitlab",
        f"$ git clone https://oauth2:{tok}@gitlab.com/acme/infra.git\nCloning into 'infra'...",
        (tok,), ("git clone https://oauth2:", "@gitlab.com/acme/infra.git", "Cloning into 'infra'..."))
    tok = f.gitlab()
    add("gitlab-private-token-header", "gitlab",
        f'curl --header "PRIVATE-TOKEN: {tok}" "https://gitlab.example.com/api/v4/projects"',
        (tok,), ('curl --header "PRIVATE-TOKEN: ', "https://gitlab.example.com/api/v4/projects"))
    tok = f.slack()
    add("slack-sdk-traceback", "slack",
        "slack_sdk.errors.SlackApiError: The request to the Slack API failed. (url: https://slack.com/api/chat.postMessage)\n"
        f"The server responded with: {{'ok': False, 'error': 'invalid_auth'}} token={tok}",
        (tok,), ("slack_sdk.errors.SlackApiError", "'error': 'invalid_auth'"))
    tok = f.jwt()
    add("jwt-http-log", "jwt",
        f'10.0.0.7 - - [14/May/2024:09:21:07 +0000] "GET /api/me?access_token={tok} HTTP/1.1" 200 512',
        (tok,), ('10.0.0.7 - - [14/May/2024:09:21:07 +0000] "GET /api/me?access_token=', 'HTTP/1.1" 200 512'))
    tok = f.jwt()
    add("jwt-cookie", "jwt", f"Set-Cookie: id_token={tok}; Path=/; Secure; HttpOnly",
        (tok,), ("Set-Cookie: id_token=", "; Path=/; Secure; HttpOnly"))
    tok = f.age()
    add("age-keygen", "age",
        f"$ age-keygen\n# created: 2024-05-14T09:21:07Z\n# public key: age1{f.chars(BECH32.lower(), 58)}\n{tok}",
        (tok,), ("# created: 2024-05-14T09:21:07Z", "# public key: age1"))
    tok = f.heroku()
    add("heroku-hrku-token", "heroku", f"$ heroku authorizations:create\nToken:       {tok}\nScope:       global",
        (tok,), ("Scope:       global",))
    tok = f.twilio()
    add("twilio-api-key-sid", "twilio", f"Created API key {tok} (friendly name: ci)",
        (tok,), ("Created API key ", "(friendly name: ci)"))
    tok = f.sendgrid()
    add("sendgrid-python", "sendgrid", f"sg = SendGridAPIClient('{tok}')\nresponse = sg.send(message)",
        (tok,), ("sg = SendGridAPIClient('", "response = sg.send(message)"))
    tok = f.openai()
    add("openai-bare-in-stdout", "openai", f"echo $OPENAI_API_KEY\n{tok}\n$ ", (tok,), ("echo $OPENAI_API_KEY",))

    # PEM / SSH private keys
    pem = f.private_key("RSA PRIVATE KEY")
    body = pem.split("\n")[3]
    add("pem-rsa-cat", "private_key", f"$ cat deploy/id_rsa\n{pem}\n$ chmod 600 deploy/id_rsa",
        (body,), ("$ cat deploy/id_rsa", "$ chmod 600 deploy/id_rsa"))
    pem = f.private_key("EC PRIVATE KEY")
    add("pem-ec-k8s-tls", "private_key",
        "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.crt: LS0tLS1CRUdJTi...\n"
        "stringData:\n  tls.key: |\n    " + pem.replace("\n", "\n    ") + "\n",
        (pem.split("\n")[2],), ("type: kubernetes.io/tls", "  tls.key: |"))
    pem = f.private_key("ENCRYPTED PRIVATE KEY")
    add("pem-encrypted", "private_key", f"Wrote key.pem:\n{pem}\nDone.", (pem.split("\n")[5],), ("Wrote key.pem:", "Done."))
    pem = f.private_key("PRIVATE KEY")
    sa = {"type": "service_account", "project_id": "acme-prod", "private_key_id": f.chars(HEX, 40),
          "private_key": pem + "\n", "client_email": "ci@acme-prod.iam.gserviceaccount.com"}
    add("pem-gcp-service-account-json", "private_key", json.dumps(sa, indent=2),
        (pem.split("\n")[4],), ('"type": "service_account"', '"client_email": "ci@acme-prod.iam.gserviceaccount.com"'))
    pem = f.private_key("RSA PRIVATE KEY")
    cut = pem[: pem.index("\n", 300)]
    add("pem-unterminated", "private_key", f"$ head -c 400 server.key\n{cut}",
        (cut.split("\n")[2],), ("$ head -c 400 server.key",))
    pem = f.ssh_private_key()
    add("ssh-openssh-key", "ssh_private_key", f"$ cat ~/.ssh/id_ed25519\n{pem}\n",
        (pem.split("\n")[1], pem.split("\n")[6]), ("$ cat ~/.ssh/id_ed25519",))
    putty = ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: jane@laptop\nPublic-Lines: 2\n"
             f"{f.b64(48)}\n{f.b64(12)}\nPrivate-Lines: 1\n{f.b64(36)}\nPrivate-MAC: {f.chars(HEX, 64)}")
    add("ssh-putty-key", "ssh_private_key", f"$ type key.ppk\n{putty}\n",
        (putty.split("\n")[7],), ("$ type key.ppk",))

    # Credit cards (Luhn-valid, computed)
    for cid, first, length, sizes, sep, tpl in (
        ("visa-spaces", "4", 16, (4, 4, 4, 4), " ", "Card number: {} exp 08/27"),
        ("mastercard-dashes", "52", 16, (4, 4, 4, 4), "-", '{{"card": "{}", "cvc_check": "pass"}}'),
        ("amex-plain", "37", 15, (15,), "", "charged {} for $12.00"),
        ("discover-log", "6011", 16, (16,), "", "payment_method=card number={} status=declined"),
        ("visa-19-digits", "4", 19, (4, 4, 4, 4, 3), " ", "PAN {} (test)"),
    ):
        number = f.card(first, length)
        shown = grouped(number, sizes, sep)
        add(f"credit-card-{cid}", "credit_card", tpl.format(shown), (shown,), (tpl.split("{")[0],))
    return out


def generic_cases(fake: Fake) -> list[Case]:
    """Credentials without a provider shape: the name or the structure says it is one."""
    f = fake
    out: list[Case] = []

    def add(cid: str, text: str, secret: str, keep: tuple[str, ...]) -> None:
        family, kind = _generic_kind(cid)
        out.append(Case(f"generic-{cid}", family, kind, text, (secret,), "[redacted]", keep))

    pw = f.password()
    add("dotenv-db-password", f"$ cat .env\nDB_HOST=db.internal\nDB_PASSWORD={pw}\nDB_PORT=5432", pw,
        ("DB_HOST=db.internal", "DB_PASSWORD=", "DB_PORT=5432"))
    tok = f.opaque()
    add("export-api-key", f'export MY_API_KEY="{tok}"\necho done', tok, ('export MY_API_KEY="', "echo done"))
    pw = f.password()
    add("yaml-secret", f"service:\n  name: billing\n  secret: {pw}\n  replicas: 2", pw,
        ("  name: billing", "  secret: ", "  replicas: 2"))
    pw = f.password()
    add("cli-password-equals", f"$ mysql --user=app --password={pw} -h db.internal app", pw,
        ("mysql --user=app --password=", "-h db.internal app"))
    pw = f.password()
    add("cli-password-space", f"$ pg_dump --username app --password {pw} --host db.internal", pw,
        ("--username app --password ", "--host db.internal"))
    pw = f.password()
    add("json-password", json.dumps({"username": "admin", "password": pw, "remember": True}), pw,
        ('"username": "admin"', '"password": "', '"remember": true'))
    tok = f.opaque(40)
    add("json-camel-api-key", json.dumps({"apiKey": tok, "region": "us-east-1"}, indent=2), tok,
        ('"apiKey": "', '"region": "us-east-1"'))
    pw = f.password()
    add("k8s-secret-stringdata",
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: pg\nstringData:\n  username: app\n  password: {pw}\n",
        pw, ("kind: Secret", "  username: app", "  password: "))
    pw = f.password()
    add("compose-env-list",
        f"services:\n  db:\n    image: postgres:16\n    environment:\n      - POSTGRES_USER=app\n      - POSTGRES_PASSWORD={pw}\n",
        pw, ("image: postgres:16", "- POSTGRES_USER=app", "- POSTGRES_PASSWORD="))
    pw = f.password()
    add("compose-env-map",
        f"services:\n  db:\n    environment:\n      POSTGRES_DB: app\n      POSTGRES_PASSWORD: {pw}\n",
        pw, ("POSTGRES_DB: app", "POSTGRES_PASSWORD: "))
    for scheme, tail in (("postgres", "db.internal:5432/app"), ("mysql", "10.0.0.5:3306/shop"),
                         ("mongodb+srv", "cluster0.ab1cd.mongodb.net/test?retryWrites=true"),
                         ("amqp", "rabbit.internal:5672/%2F")):
        pw = f.url_password()
        add(f"url-{scheme}", f"DATABASE_URL={scheme}://app:{pw}@{tail}", pw,
            (f"DATABASE_URL={scheme}://app:", f"@{tail}"))
    pw = f.url_password()
    add("url-redis-no-user", f"connecting to redis://:{pw}@cache.internal:6379/0 ...", pw,
        ("connecting to redis://:", "@cache.internal:6379/0 ..."))
    tok = f.opaque(40)
    add("git-remote-https-token",
        f"$ git remote -v\norigin  https://jane:{tok}@github.com/acme/web.git (fetch)\n"
        f"origin  https://jane:{tok}@github.com/acme/web.git (push)",
        tok, ("origin  https://jane:", "@github.com/acme/web.git (fetch)"))
    pw = f.password(16, "!%^*_+=.-")
    add("ado-connection-string",
        f"Server=tcp:acme.database.windows.net,1433;Initial Catalog=shop;User ID=app;Password={pw};Encrypt=True;",
        pw, ("Server=tcp:acme.database.windows.net,1433;", "User ID=app;Password=", ";Encrypt=True;"))
    pw = f.password()
    add("odbc-pwd", f"DRIVER={{ODBC Driver 18}};SERVER=db;UID=sa;PWD={pw};", pw, ("UID=sa;PWD=",))
    pw = f.url_password()
    add("jdbc-query-password",
        "Caused by: org.postgresql.util.PSQLException: FATAL: password authentication failed\n"
        f"\tat jdbc:postgresql://db.internal:5432/app?user=app&password={pw}&ssl=true",
        pw, ("Caused by: org.postgresql.util.PSQLException", "jdbc:postgresql://db.internal:5432/app?user=app&password=", "&ssl=true"))
    tok = f.opaque(48)
    add("authorization-bearer-header", f"> GET /v1/items HTTP/2\n> Authorization: Bearer {tok}\n> Accept: */*",
        tok, ("> GET /v1/items HTTP/2", "> Authorization: Bearer ", "> Accept: */*"))
    basic = base64.b64encode(f"admin:{f.password()}".encode()).decode()
    add("authorization-basic-header", f"Authorization: Basic {basic}\r\nHost: intranet.local\r\n", basic,
        ("Authorization: Basic ", "Host: intranet.local"))
    tok = f.opaque(40)
    add("authorization-token-curl", f"curl -H 'Authorization: token {tok}' https://api.example.com/repos",
        tok, ("curl -H 'Authorization: token ", "https://api.example.com/repos"))
    tok = f.opaque(32)
    add("x-api-key-header", f'curl -H "X-Api-Key: {tok}" -H "Accept: application/json" https://api.example.com',
        tok, ('curl -H "X-Api-Key: ', '-H "Accept: application/json"'))
    tok = f.opaque(32)
    add("json-authorization-value", json.dumps({"headers": {"Authorization": f"Bearer {tok}"}}), tok,
        ('{"headers": {"Authorization": "Bearer ',))
    tok = f.opaque(36)
    add("python-api-key", f'api_key = "{tok}"\nclient = Client(api_key)', tok, ('api_key = "', "client = Client(api_key)"))
    tok = f.opaque(36)
    add("js-const-api-key", f"const apiKey = '{tok}';\nfetch(url, {{ headers: {{ 'x-key': apiKey }} }});",
        tok, ("const apiKey = '", "fetch(url,"))
    tok = f.opaque(36)
    add("toml-token", f'[tool.publish]\nrepository = "internal"\ntoken = "{tok}"\n', tok,
        ('[tool.publish]', 'repository = "internal"', 'token = "'))
    pw = f.password()
    add("ini-password", f"[client]\nuser = backup\npassword = {pw}\nhost = db.internal\n", pw,
        ("[client]", "user = backup", "password = ", "host = db.internal"))
    tok = f.opaque(40)
    add("yaml-client-secret", f"oauth:\n  client_id: web-app\n  client_secret: {tok}\n", tok,
        ("  client_id: web-app", "  client_secret: "))
    tok = f.opaque(32)
    add("set-cookie-session", f"< HTTP/1.1 302 Found\n< Set-Cookie: sessionid={tok}; Path=/; HttpOnly; SameSite=Lax",
        tok, ("< Set-Cookie: sessionid=", "; Path=/; HttpOnly; SameSite=Lax"))
    tok = f.opaque(32)
    add("cookie-header", f"Cookie: theme=dark; csrftoken=abc; sessionid={tok}\nUser-Agent: curl/8.5.0",
        tok, ("Cookie: theme=", "; sessionid=", "User-Agent: curl/8.5.0"))
    pw = f.password()
    add("curl-user", f"$ curl -u admin:{pw} https://jenkins.internal/api/json", pw,
        ("$ curl -u admin:", "https://jenkins.internal/api/json"))
    auth = base64.b64encode(f"jane:{f.password()}".encode()).decode()
    add("docker-config-auth", json.dumps({"auths": {"https://index.docker.io/v1/": {"auth": auth}}}, indent=2),
        auth, ('"https://index.docker.io/v1/": {', '"auth": "'))
    pw = f.password()
    add("pgpassword-env-prefix", f"$ PGPASSWORD={pw} psql -h db.internal -U app -c 'select 1'", pw,
        ("$ PGPASSWORD=", "psql -h db.internal -U app"))
    tok = f.opaque(40)
    add("oauth-token-response",
        json.dumps({"access_token": tok, "token_type": "bearer", "expires_in": 3600, "scope": "read"}),
        tok, ('"access_token": "', '"token_type": "bearer"', '"expires_in": 3600'))
    pw = f.password()
    add("netrc-one-line", f"machine ftp.example.com login anon password {pw}\n", pw,
        ("machine ftp.example.com login anon password ",))
    tok = f.opaque(40)
    add("url-query-access-token", f"GET https://api.example.com/export?format=csv&access_token={tok}&page=2",
        tok, ("https://api.example.com/export?format=csv&access_token=", "&page=2"))
    tok = f.opaque(40)
    add("powershell-env", f'PS> $env:GITHUB_TOKEN = "{tok}"\nPS> gh repo list', tok,
        ('PS> $env:GITHUB_TOKEN = "', "PS> gh repo list"))
    pw = f.password()
    add("spring-properties", f"spring.datasource.url=jdbc:postgresql://db/app\nspring.datasource.password={pw}\n",
        pw, ("spring.datasource.url=jdbc:postgresql://db/app", "spring.datasource.password="))
    pw = f.password()
    add("json-capitalized", json.dumps({"User": "sa", "Password": pw}), pw, ('"User": "sa"', '"Password": "'))
    pw = f.password()
    add("dockerfile-env", f"Step 4/9 : ENV DB_PASSWORD={pw}\n ---> Running in 3f2a", pw,
        ("Step 4/9 : ENV DB_PASSWORD=", " ---> Running in 3f2a"))
    pw = f.password()
    add("terraform-hcl", f'resource "aws_db_instance" "db" {{\n  username = "app"\n  password = "{pw}"\n}}', pw,
        ('username = "app"', 'password = "'))
    pw = f.password()
    add("logfmt", f'level=info msg="login ok" user=bob password={pw} took=12ms', pw,
        ('level=info msg="login ok" user=bob password=', "took=12ms"))
    tok = f.opaque(40)
    add("cli-token-space", f"$ vault login --token {tok} --address https://vault.internal", tok,
        ("vault login --token ", "--address https://vault.internal"))
    pw = f.password()
    add("python-dict-single-quotes", f"{{'user': 'admin', 'password': '{pw}'}}", pw, ("{'user': 'admin', 'password': '",))
    pw = f.password()
    add("json-escaped-in-string", json.dumps({"body": json.dumps({"password": pw})}), pw, ('{"body": "{\\"password\\": \\"',))
    hexkey = f.chars(HEX, 64)
    add("rails-secret-key-base", f"secret_key_base: {hexkey}\n", hexkey, ("secret_key_base: ",))
    pw = f.password()
    add("django-secret-key", f"SECRET_KEY = 'django-insecure-{pw}'", pw, ("SECRET_KEY = '",))
    pw = f.password(12, "")
    add("yaml-password-spaces", f"smtp:\n  password: {pw} horse battery\n  port: 587\n", pw,
        ("  password: ", "  port: 587"))
    pw = f.password()
    add("xml-maven-settings",
        f"<server>\n  <id>internal</id>\n  <username>deploy</username>\n  <password>{pw}</password>\n</server>",
        pw, ("<username>deploy</username>", "<password>", "</password>"))
    pw = f.password()
    add("sql-create-user", f"CREATE USER app WITH PASSWORD '{pw}';", pw, ("CREATE USER app WITH PASSWORD '", "';"))
    tok = "/" + f.mixed(B64, 60)
    add("token-starting-with-slash", f"AWS_SESSION_TOKEN={tok}\nAWS_REGION=eu-west-1", tok,
        ("AWS_SESSION_TOKEN=", "AWS_REGION=eu-west-1"))
    pw = "%" + f.mixed(ALNUM, 15)
    add("password-starting-with-percent", f"SMTP_PASSWORD={pw}", pw, ("SMTP_PASSWORD=",))
    pw = f.password()
    add("python-annotated-default", f'class Settings(BaseSettings):\n    password: str = "{pw}"\n', pw,
        ("class Settings(BaseSettings):", 'password: str = "'))
    return out


def private_cases(fake: Fake) -> list[Case]:
    f = fake
    out: list[Case] = []
    for cid, tpl, keep in (
        ("simple", "before <private>{}</private> after", ("before ", " after")),
        ("upper", "before <PRIVATE>{}</PRIVATE> after", ("before ", " after")),
        ("mixed-case-multiline", "before\n<Private>\nline one {}\nline two\n</pRiVaTe>\nafter",
         ("before\n", "\nafter")),
        ("unclosed-hides-rest", "before <private>{} and everything\nmore lines", ("before ",)),
        ("nested", "before <private>outer <private>{}</private> still hidden</private> after",
         ("before ", " after")),
        ("with-attribute", 'before <private reason="client data">{}</private> after', ("before ", " after")),
    ):
        s = f.password()
        out.append(Case(f"private-{cid}", "private_tag", "tag-plain", tpl.format(s), (s,), "[private]", keep))
    a, b = f.password(), f.password()
    out.append(Case("private-two-blocks", "private_tag", "tag-plain", f"x <private>{a}</private> y <private>{b}</private> z", (a, b),
                    "[private]", ("x ", " y ", " z")))
    return out


def negative_cases(fake: Fake) -> list[Case]:
    """Ordinary code and text that must come out byte-identical."""
    f = fake
    texts: list[tuple[str, str]] = [
        ("getpass", "password = getpass()"),
        ("input-prompt", 'password = input("Password: ")'),
        ("os-environ-subscript", 'api_key = os.environ["API_KEY"]'),
        ("os-getenv", 'db_password = os.getenv("DB_PASSWORD")'),
        ("tokenizer", "token = tokenizer.encode(x)"),
        ("attribute", "api_key = config.api_key"),
        ("none", "secret = None"),
        ("annotation", "password: str"),
        ("annotation-optional", "api_key: Optional[str] = None"),
        ("annotation-union", "token: str | None = None"),
        ("def-signature", "def set_password(self, password):"),
        ("if-none", "if token is None:"),
        ("empty-json", '{"password": ""}'),
        ("shell-expansion", "password=${DB_PASSWORD}"),
        ("shell-default", 'TOKEN="${TOKEN:-}"'),
        ("dollar-var", "curl -H \"Authorization: Bearer $API_KEY\" https://api.example.com"),
        ("process-env", "const key = process.env.API_KEY;"),
        ("placeholder-angle", "OPENAI_API_KEY=<your-api-key>"),
        ("placeholder-your", "export OPENAI_API_KEY=YOUR_API_KEY"),
        ("placeholder-replace-me", "DB_PASSWORD=REPLACE_ME"),
        ("placeholder-changeme", "password: changeme"),
        ("placeholder-xxxx", "API_KEY=xxxxxxxxxxxxxxxx"),
        ("placeholder-stars", 'password = "********"'),
        ("placeholder-dots", "token: ..."),
        ("placeholder-token-tag", "Authorization: Bearer <token>"),
        ("placeholder-jinja", "password: {{ secret }}"),
        ("placeholder-gha", "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}"),
        ("placeholder-here", "api_key = 'insert-your-key-here'"),
        ("max-tokens-json", '{"model": "claude-sonnet", "max_tokens": 4096, "temperature": 0.2}'),
        ("token-type", '{"token_type": "bearer", "expires_in": 3600}'),
        ("git-log-author", f"commit {f.sha('sha1')}\nAuthor: Jane Doe <jane@example.com>\nDate:   Tue May 14 09:21:07 2024 +0200\n\n    Fix password reset flow"),
        ("git-log-oneline", "\n".join(f"{f.sha('sha1')[:7]} fix: rotate token cache ({i})" for i in range(5))),
        ("sha256sum", f"{f.sha('sha256')}  dist/aletheia-0.1.0.tar.gz"),
        ("md5", f"MD5 ({'file.bin'}) = {f.sha('md5')}"),
        ("pip-hash", f"    --hash=sha256:{f.sha('sha256')}"),
        ("uuid", f"request_id={f.uuid()} session={f.uuid()}"),
        ("uuid-json", json.dumps({"id": f.uuid(), "parent": f.uuid()})),
        ("base64-image", f"data:image/png;base64,{f.b64(120)}"),
        ("base64-json-content", json.dumps({"encoding": "base64", "content": f.b64(90)})),
        ("versions", "Successfully installed click-8.1.7 huey-2.5.0 starlette-0.37.2 uvicorn-0.29.0"),
        ("paths", "/home/jane/.cache/pip/wheels/3f/2a/9c1e7d/secret_santa-1.0-py3-none-any.whl"),
        ("url-no-creds", "Fetching https://github.com/acme/api.git and https://pypi.org/simple/requests/"),
        ("url-port", "Listening on http://127.0.0.1:8080/ (press CTRL+C to quit)"),
        ("ssh-scp-remote", "origin\tgit@github.com:acme/api.git (fetch)"),
        ("card-fails-luhn", f"order ref {grouped(f.bad_card('4', 16), (4, 4, 4, 4), ' ')} shipped"),
        ("card-fails-luhn-plain", f"ticket {f.bad_card('5', 16)}"),
        ("timestamps", "1715678467123 2024-05-14T09:21:07.412Z 20240514092107 1715678467.412"),
        ("phone-numbers", "Call +1 (555) 123-4567 or +44 20 7946 0958 or 030-1234-5678"),
        ("long-digit-id", "order 12345678901234567890123 placed"),
        ("python-kwargs-passthrough", "conn = connect(user=user, password=password, host=host)"),
        ("kwargs-variable", "client = Client(api_key=api_key, token=access_token)"),
        ("secrets-module", "token = secrets.token_urlsafe(32)"),
        ("password-hash-call", "password_hash = make_password(form.cleaned_data['password'])"),
        ("pwd-env", "PWD=/home/jane/src/aletheia\nOLDPWD=/home/jane"),
        ("java-using-password-yes", "java.sql.SQLException: Access denied for user 'app'@'10.0.0.5' (using password: YES)"),
        ("docker-password-stdin", 'echo "$DOCKER_PASSWORD" | docker login -u acme --password-stdin'),
        ("docker-run-user", "docker run --rm -u 1000:1000 -v $PWD:/src node:20 npm test"),
        ("k8s-secret-ref", "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: pg\n        key: password"),
        ("secret-name-field", "secretName: tls-cert\nsecretNamespace: prod"),
        ("password-file", "POSTGRES_PASSWORD_FILE=/run/secrets/pg_password"),
        ("token-url", "token_url = 'https://oauth2.googleapis.com/token'"),
        ("typescript-interface", "interface Login {\n  username: string;\n  password: string;\n}"),
        ("js-await", "const token = await getToken(scope);"),
        ("self-assign", "        self.password = password\n        self.api_key = api_key"),
        ("comparison", 'if password == "":\n    raise ValueError("empty")'),
        ("password-prompt-output", "Enter password: \nPassword:\nsudo: 3 incorrect password attempts"),
        ("tokens-count", "Usage: 1,234 input tokens, 567 output tokens (token_count=1801)"),
        ("ansible-vault", "db_password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256"),
        ("yaml-alias", "password: *default_password"),
        ("prose-about-secrets", "Never commit secrets; rotate the API key and store the token in the vault."),
        ("pytest-output", "tests/test_auth.py::test_password_reset PASSED [ 42%]\ntests/test_auth.py::test_token_refresh FAILED [ 43%]"),
        ("aws-arn", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf"),
        ("stack-trace-java", "java.lang.IllegalStateException: token expired\n\tat com.acme.auth.TokenService.refresh(TokenService.java:88)\n\tat com.acme.Main.main(Main.java:12)"),
        ("kebab-sk-word", "Running task-runner-for-the-disk-cleanup-job-nightly now"),
        ("pk-live-publishable", f"STRIPE_PUBLISHABLE_KEY=pk_live_{f.mixed(ALNUM, 24)}"),
        ("private-word-only", "This is private data about a PRIVATE KEY format; no key here."),
        ("pem-public-key", f"-----BEGIN PUBLIC KEY-----\n{f.pem_body(3)}\n-----END PUBLIC KEY-----"),
        ("certificate", f"-----BEGIN CERTIFICATE-----\n{f.pem_body(3)}\n-----END CERTIFICATE-----"),
        ("markers-already", "DB_PASSWORD=[redacted] token=[redacted:github] [private] [redacted:credit_card]"),
        ("empty-values", "PASSWORD=\nTOKEN=''\nAPI_KEY=\"\""),
        ("bool-values", "auth: true\nrequire_password: false\npassword_enabled: yes"),
        ("rust-env-var", 'let api_key = env::var("API_KEY")?;'),
        ("npm-config-protected", "; //registry.npmjs.org/:_authToken = (protected)"),
        ("html-password-input", '<input type="password" name="password" autocomplete="current-password">'),
        ("ssh-auth-sock-path", "SSH_AUTH_SOCK=/tmp/ssh-XXXXabc123/agent.1234\nGIT_ASKPASS=/usr/lib/git-core/git-gui--askpass"),
        ("yaml-tag", "password: !Ref DbPassword"),
        ("sql-parameters", 'cur.execute("UPDATE users SET password=%s WHERE id=?", (pw, uid))'),
        ("go-getenv", 'token := os.Getenv("GITHUB_TOKEN")'),
        ("java-getenv", 'String password = System.getenv("DB_PASSWORD");'),
        ("terraform-var", "password = var.db_password"),
        ("helm-template", "password: {{ .Values.postgresql.password | quote }}"),
        ("gha-permissions", "permissions:\n  contents: read\n  id-token: write\n"),
        ("quoted-labels", '"passwd:gecos", "passwd:shell", "token:name"'),
        ("schema-types", '{"password": "string?", "passphrase": "string?", "credentials": "boolean?"}'),
        ("typed-params", "def sign(data: bytes, private_key: PKCS7PrivateKeyTypes, token: Token | None) -> bytes:"),
        ("comment-prose", "# Cache for the exchanged token: re-exchanging on every call would be wasteful"),
        ("docstring-param", ":param password: The plaintext password.\n:param api_key: Optional key for the API."),
        ("cookie-kwarg", "return parse_cookie(cookie=cookie, cls=cls)"),
        ("enum-constants", 'INVALID_AUTH = "invalid_auth"\nHEADER_API_KEY = "X-Api-Key"\nPASS_STMT: Final = 180'),
        ("pem-marker-constant", '_SK_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n_SK_END = b"-----END OPENSSH PRIVATE KEY-----"'),
        ("int64-seed", "rng = np.random.default_rng([4220315081820346526, 7177518203184491332])"),
        ("dpkg-list", "ii  libsecret-1-0:amd64   0.20.5-3   amd64   Secret store\n"
                      "ii  gir1.2-secret-1:amd64  0.20.5-3   amd64   Secret store (GObject-Introspection)"),
    ]
    return [Case(f"neg-{cid}", *_negative_kind(cid), text) for cid, text in texts]


