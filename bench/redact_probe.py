"""Redaction probe: secrets in the forms a real coding session holds them, each with the secret
it must hide. Tool output of real CLIs (aws, gcloud, az, vault, kubectl, docker, heroku …),
credential files a session cats, connection strings of many drivers, CI logs, init and
bootstrap output, config and code, prose; and the same printing commands as a hook stores
them (the command in the event's JSON input, the output after "output:"). Every value is
generated at run time from a fixed seed, of the shape the real one has: none is a real secret.

Prints, per family, how many forms leak (a form leaks when its secret, or the part of it that
identifies it, is still in the redacted text) and how many are not idempotent (a second run
changes the text again). The forms that still leak are listed with --show.

    python bench/redact_probe.py [--seed 7] [--show]
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import sys
import uuid
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from aletheia.redact import redact  # noqa: E402

A = string.ascii_letters + string.digits
H = "0123456789abcdef"
U = string.ascii_uppercase + string.digits
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
Case = tuple[str, str, str, str | None]  # family, name, text, the secret (None: its longest word)


def cases(seed: int) -> list[Case]:
    rng = random.Random(seed)

    def r(n: int, al: str = A) -> str:
        return "".join(rng.choice(al) for _ in range(n))

    def pw() -> str:
        return r(3) + rng.choice("#!%@") + r(5) + str(rng.randint(10, 99))

    def b64(s: str) -> str:
        return base64.b64encode(s.encode()).decode()

    def b64u(b: bytes) -> str:
        return base64.urlsafe_b64encode(b).decode().rstrip("=")

    def jwt() -> str:
        h = b64u(b'{"alg":"HS256","typ":"JWT"}')
        p = b64u(json.dumps({"sub": r(8), "exp": rng.randint(10**9, 2 * 10**9)}).encode())
        return f"{h}.{p}.{b64u(bytes(rng.randrange(256) for _ in range(32)))}"

    def akid() -> str:
        return "AKIA" + r(16, U)

    def aws_secret() -> str:
        return r(40, A + "+/")

    def uid() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128)))

    out: list[Case] = []

    def add(family: str, name: str, text: str, secret: str | None) -> None:
        out.append((family, name, text, secret))

    family = "stop-26 leaks"
    s = r(40)
    add(family, "mc alias set", f"$ mc alias set minio http://127.0.0.1:9000 minioadmin {s}", s)
    s = r(32)
    add(family, "mc alias set https", f"mc alias set s3 https://s3.amazonaws.com {akid()} {s} --api S3v4", s)
    p = pw()
    add(family, "spaced name", f"p a s s w o r d: {p}", p)
    p = pw()
    add(family, "spaced name api key =", f"api key = {r(32)}", None)
    p = pw()
    add(family, "api key spaced colon", f"API Key: {r(32)}", None)
    s = "ghp_" + r(36)
    add(family, "reversed token", f"token (reversed): {s[::-1]}", s[::-1][:20])
    s = "ghp_" + r(36)
    add(family, "line-split token", f"{s[:20]}\n{s[20:]}", s[22:])
    pin = str(rng.randint(1000, 9999))
    puk = str(rng.randint(10**7, 10**8 - 1))
    add(family, "SIM PIN", f"SIM PIN: {pin}, PUK: {puk}", pin)
    add(family, "SIM PUK", f"SIM PIN: {pin}, PUK: {puk}", puk)
    p = pw()
    add(family, "bare pgpass line", f"db.internal:5432:app:app:{p}", p)
    p = pw()
    add(family, "pgpass wildcard", f"*:*:*:postgres:{p}", p)
    p = pw()
    add(family, "russian label", f"Пароль от базы: {p}", p)
    p = pw()
    add(family, "russian password word", f"пароль: {p}", p)
    p = pw()
    add(family, "ukrainian", f"Пароль: {p}", p)
    p = pw()
    add(family, "portuguese", f"a senha é {p}", p)
    p = pw()
    add(family, "dutch", f"het wachtwoord is {p}", p)
    p = pw()
    add(family, "polish", f"hasło: {p}", p)
    p = pw()
    add(family, "chinese", f"密码：{p}", p)
    p = pw()
    add(family, "japanese", f"パスワード: {p}", p)
    s = r(12)
    add(family, "environ.update short", f"os.environ.update(DB_PASSWORD='{s}')", s)
    s = r(10)
    add(family, "environ setdefault", f"os.environ.setdefault('API_TOKEN', '{s}')", s)
    s = r(12)
    add(family, "environ[] short", f"os.environ['DB_PASSWORD'] = '{s}'", s)
    s = r(12)
    add(family, "monkeypatch.setenv", f"monkeypatch.setenv('SECRET_KEY', '{s}')", s)
    family = "aws"
    k, s = akid(), aws_secret()
    add(family, "aws credentials file", f"$ cat ~/.aws/credentials\n[default]\naws_access_key_id = {k}\naws_secret_access_key = {s}", s)
    s = aws_secret()
    add(family, "aws configure get", f"$ aws configure get aws_secret_access_key\n{s}", s)
    s = aws_secret()
    t = "IQoJb3JpZ2luX2VjE" + r(300, A + "+/")
    add(family, "aws sts json secret", f'{{\n    "Credentials": {{\n        "AccessKeyId": "ASIA{r(16, U)}",\n        "SecretAccessKey": "{s}",\n        "SessionToken": "{t}",\n        "Expiration": "2024-05-01T00:00:00Z"\n    }}\n}}', s)
    add(family, "aws sts json session", f'        "SessionToken": "{t}",', t[20:60])
    s = r(1200, A + "+/") + "=="
    add(family, "ecr get-login-password", f"$ aws ecr get-login-password --region us-east-1\n{s}", s[:60])
    p = pw()
    add(family, "secretsmanager", f'$ aws secretsmanager get-secret-value --secret-id prod/db\n{{\n    "Name": "prod/db",\n    "SecretString": "{{\\"username\\":\\"app\\",\\"password\\":\\"{p}\\"}}"\n}}', p)
    p = pw()
    add(family, "ssm get-parameter", f'$ aws ssm get-parameter --name /prod/db/password --with-decryption\n{{\n    "Parameter": {{\n        "Name": "/prod/db/password",\n        "Type": "SecureString",\n        "Value": "{p}",\n        "Version": 3\n    }}\n}}', p)
    family = "kubernetes"
    p = pw()
    add(family, "kubectl secret yaml", f"$ kubectl get secret db -o yaml\napiVersion: v1\ndata:\n  password: {b64(p)}\n  username: {b64('app')}\nkind: Secret", b64(p))
    p = pw()
    add(family, "kubectl secret json", f'$ kubectl get secret db -o json\n{{\n    "apiVersion": "v1",\n    "data": {{\n        "password": "{b64(p)}"\n    }},\n    "kind": "Secret"\n}}', b64(p))
    p = pw()
    add(family, "kubectl jsonpath decode", f"$ kubectl get secret db -o jsonpath='{{.data.password}}' | base64 -d\n{p}", p)
    p = pw()
    add(family, "kubectl describe? no: base64 --decode", f"$ echo {b64(p)} | base64 --decode\n{p}", p)
    s = jwt()
    add(family, "kubeconfig token", f"users:\n- name: admin\n  user:\n    token: {s}", s[40:])
    s = r(6, "abcdefghijklmnopqrstuvwxyz0123456789") + "." + r(16, "abcdefghijklmnopqrstuvwxyz0123456789")
    add(family, "kubeadm join token", f"kubeadm join 10.0.0.1:6443 --token {s} --discovery-token-ca-cert-hash sha256:{r(64, H)}", s)
    family = "docker"
    p = pw()
    add(family, "docker login echo", f"$ echo '{p}' | docker login -u bob --password-stdin ghcr.io\nLogin Succeeded", p)
    s = b64("bob:" + pw())
    add(family, "docker config.json", f'$ cat ~/.docker/config.json\n{{\n\t"auths": {{\n\t\t"https://index.docker.io/v1/": {{\n\t\t\t"auth": "{s}"\n\t\t}}\n\t}}\n}}', s)
    p = pw()
    add(family, "docker run -e", f"docker run -e POSTGRES_PASSWORD={p} -d postgres:16", p)
    p = pw()
    add(family, "docker inspect env", f'            "Env": [\n                "POSTGRES_PASSWORD={p}",\n                "PATH=/usr/local/bin"\n            ],', p)
    family = "netrc/git"
    p = pw()
    add(family, "netrc multiline", f"$ cat ~/.netrc\nmachine github.com\n  login bob\n  password {p}", p)
    s = "gho_" + r(36)
    add(family, "git credential fill", f"$ printf 'protocol=https\\nhost=github.com\\n\\n' | git credential fill\nprotocol=https\nhost=github.com\nusername=bob\npassword={s}", s[4:])
    p = pw()
    add(family, "git credential fill pw", f"protocol=https\nhost=git.example.com\nusername=bob\npassword={p}", p)
    p = pw()
    add(family, "git-credentials file", f"$ cat ~/.git-credentials\nhttps://bob:{p}@github.com", p)
    family = "http"
    s = jwt()
    add(family, "curl -v bearer", f"> GET /api/me HTTP/1.1\n> Host: localhost:8000\n> Authorization: Bearer {s}\n> Accept: */*", s[40:])
    s = r(40)
    add(family, "curl -v set-cookie", f"< HTTP/1.1 200 OK\n< Set-Cookie: sessionid={s}; Path=/; HttpOnly", s)
    s = jwt()
    add(family, "jwt bare in json", f'{{"access_token":"{s}","token_type":"bearer","expires_in":3600}}', s[40:])
    s = jwt()
    add(family, "jwt bare prose", f"the login response gave {s} which expires in an hour", s[40:])
    family = "connection strings"
    p = pw()
    add(family, "mongodb+srv", f"MONGO_URL=mongodb+srv://app:{p}@cluster0.ab1cd.mongodb.net/?retryWrites=true", p)
    p = pw()
    add(family, "redis no user", f"redis://:{p}@cache.internal:6379/0", p)
    p = pw()
    add(family, "amqp", f"CELERY_BROKER_URL = 'amqp://app:{p}@rabbit:5672//'", p)
    p = pw()
    add(family, "sqlalchemy asyncpg", f'engine = create_async_engine("postgresql+asyncpg://app:{p}@db/app")', p)
    p = pw()
    add(family, "mssql odbc", f"DRIVER={{ODBC Driver 18 for SQL Server}};SERVER=db;DATABASE=app;UID=sa;PWD={p};TrustServerCertificate=yes", p)
    p = pw()
    add(family, "jdbc sqlserver", f"jdbc:sqlserver://db:1433;databaseName=app;user=sa;password={p};encrypt=true", p)
    p = pw()
    add(family, "oracle ezconnect", f"sqlplus system/{p}@//db:1521/ORCLPDB1", p)
    p = pw()
    add(family, "snowflake url", f"snowflake://bob:{p}@xy12345.eu-west-1/db/schema?warehouse=wh", p)
    p = pw()
    add(family, "clickhouse-client", f"clickhouse-client --host ch --user default --password {p} --query 'select 1'", p)
    p = pw()
    add(family, "cqlsh", f"cqlsh cass 9042 -u cassandra -p {p}", p)
    p = pw()
    add(family, "mongosh", f'mongosh "mongodb://db:27017" --username admin --password {p} --authenticationDatabase admin', p)
    p = pw()
    add(family, "neo4j bolt", f"NEO4J_AUTH=neo4j/{p}", p)
    p = pw()
    add(family, "psql conninfo uri", f"psql 'postgresql://app@db/app?password={p}&sslmode=require'", p)
    p = pw()
    add(family, "libpq keyword", f"dsn = \"host=db port=5432 dbname=app user=app password='{p}'\"", p)
    p = pw()
    add(family, "DATABASE_URL mysql", f"DATABASE_URL=mysql://root:{p}@127.0.0.1:3306/shop", p)
    p = pw()
    add(family, "redis-cli AUTH", f"127.0.0.1:6379> AUTH {p}\nOK", p)
    p = pw()
    add(family, "redis CONFIG requirepass", f"127.0.0.1:6379> CONFIG SET requirepass {p}", p)
    p = pw()
    add(family, "mysql ALTER USER", f"mysql> ALTER USER 'root'@'localhost' IDENTIFIED BY '{p}';", p)
    p = pw()
    add(family, "postgres ALTER ROLE", f"app=# ALTER ROLE app WITH PASSWORD '{p}';", p)
    p = pw()
    add(family, "CREATE USER PASSWORD", f"CREATE USER app WITH ENCRYPTED PASSWORD '{p}';", p)
    family = "cloud CLIs"
    s = "ya29." + r(150, A + "-_")
    add(family, "gcloud print-access-token", f"$ gcloud auth print-access-token\n{s}", s[5:60])
    s = jwt()
    add(family, "az get-access-token", f'$ az account get-access-token\n{{\n  "accessToken": "{s}",\n  "expiresOn": "2024-05-01 10:00:00.000000",\n  "tokenType": "Bearer"\n}}', s[40:])
    s = r(86, A + "+/") + "=="
    add(family, "az storage keys list", f'[\n  {{\n    "creationTime": "2024-01-01T00:00:00+00:00",\n    "keyName": "key1",\n    "permissions": "FULL",\n    "value": "{s}"\n  }}\n]', s)
    p = pw()
    add(family, "gcloud secrets access", f"$ gcloud secrets versions access latest --secret=db-password\n{p}", p)
    s = r(24, H)
    add(family, "vault login token table", f"Key                  Value\n---                  -----\ntoken                hvs.{r(24)}\ntoken_accessor       {s}\ntoken_duration       768h", "hvs.")
    p = pw()
    add(family, "vault kv get table", f"$ vault kv get secret/db\n====== Data ======\nKey         Value\n---         -----\npassword    {p}\nusername    app", p)
    p = pw()
    add(family, "vault kv get -field", f"$ vault kv get -field=password secret/db\n{p}", p)
    p = pw()
    add(family, "op read", f"$ op read op://Private/db/password\n{p}", p)
    p = pw()
    add(family, "pass show", f"$ pass show work/db\n{p}\nusername: app", p)
    p = pw()
    add(family, "security find-generic-password -w", f"$ security find-generic-password -s db -w\n{p}", p)
    p = pw()
    add(family, "heroku config:get", f"$ heroku config:get DATABASE_PASSWORD -a app\n{p}", p)
    s = r(8, H) + "-" + r(4, H) + "-" + r(4, H) + "-" + r(4, H) + "-" + r(12, H)
    add(family, "heroku auth:token", f"$ heroku auth:token\n ›   Warning: token will expire 05/01/2025\n{s}", s)
    s = "gho_" + r(36)
    add(family, "gh auth token", f"$ gh auth token\n{s}", s[4:])
    s = "dop_v1_" + r(64, H)
    add(family, "doctl auth init", f"doctl auth init -t {s}", s[7:])
    s = r(24)
    add(family, "vercel --token", f"vercel deploy --prod --token {s}", s)
    s = r(40, H)
    add(family, "netlify auth token env", f"NETLIFY_AUTH_TOKEN={s} netlify deploy", s)
    s = "sk_live_" + r(24)
    add(family, "stripe key", f"stripe listen --api-key {s}", s[8:])
    s = "1//0g" + r(100, A + "-_")
    add(family, "firebase login:ci", f"✔  Success! Use this token to login on a CI server:\n\n{s}\n\nExample: firebase deploy --token \"$FIREBASE_TOKEN\"", s[5:50])
    p = pw()
    add(family, "doppler secrets get --plain", f"$ doppler secrets get DB_PASSWORD --plain\n{p}", p)
    p = pw()
    add(family, "bw get password", f"$ bw get password github.com\n{p}", p)
    family = "CI logs"
    p = pw()
    add(family, "gha env block", f"  env:\n    DB_PASSWORD: {p}\n    NODE_ENV: test", p)
    s = "glcbt-" + r(20)
    add(family, "gitlab CI_JOB_TOKEN", f"$ export CI_JOB_TOKEN={s}", s[6:])
    p = pw()
    add(family, "add-mask", f"Run echo \"::add-mask::{p}\"", p)
    s = "ghp_" + r(36)
    add(family, "set -x trace curl", f"+ curl -sf -H 'Authorization: token {s}' https://api.github.com/user", s[4:])
    s = r(36)
    add(family, "set -x trace npm", f"+ npm config set //registry.npmjs.org/:_authToken {s}", s)
    p = pw()
    add(family, "jenkins echo", f"[Pipeline] sh\n+ echo {p} | docker login -u ci --password-stdin", p)
    s = "npm_" + r(36)
    add(family, "travis env", f'Setting environment variables from .travis.yml\n$ export NPM_TOKEN="{s}"', s[4:])
    p = pw()
    add(family, "circleci env dump", f"DEPLOY_PASSWORD={p}\nHOME=/home/circleci", p)
    family = "config and code"
    s = "xoxb-" + r(11, "0123456789") + "-" + r(13, "0123456789") + "-" + r(24)
    add(family, "slack bot", f"SLACK_BOT_TOKEN={s}", s[5:])
    s = "https://hooks.slack.com/services/T" + r(8, U) + "/B" + r(8, U) + "/" + r(24)
    add(family, "slack webhook", f"curl -X POST {s} -d '{{}}'", s[-24:])
    p = pw()
    add(family, "wifi nmcli", f"nmcli dev wifi connect HomeNet password {p}", p)
    p = pw()
    add(family, "wpa_supplicant", f'network={{\n    ssid="HomeNet"\n    psk="{p}"\n}}', p)
    p = pw()
    add(family, "ftp url", f"lftp ftp://deploy:{p}@ftp.example.com", p)
    p = pw()
    add(family, "rsync password env", f"RSYNC_PASSWORD={p} rsync -av src/ rsync://backup@nas/module", p)
    p = pw()
    add(family, "smtp settings", f"EMAIL_HOST_PASSWORD = '{p}'", p)
    s = r(64, H)
    add(family, "django SECRET_KEY", f"SECRET_KEY = 'django-insecure-{r(50, A + '!@#$%^&*(-_=+)')}'", None)
    p = pw()
    add(family, "ldap bind yaml", f"ldap:\n  bind_dn: cn=admin,dc=ex\n  bind_password: {p}", p)
    p = pw()
    add(family, "openvpn auth file", f"$ cat auth.txt\nbob\n{p}", p)
    p = pw()
    add(family, "ansible vault pass echo", f"echo '{p}' > ~/.vault_pass.txt", p)
    p = pw()
    add(family, "python getpass echo", f">>> getpass.getpass()\nPassword: \n>>> pw\n'{p}'", None)
    p = pw()
    add(family, "expect send", f'expect "password:"\nsend "{p}\\r"', p)
    p = pw()
    add(family, "ssh password prompt echoed", f"bob@10.0.0.5's password: {p}", p)
    p = pw()
    add(family, "sudo -S", f"echo {p} | sudo -S apt-get update", p)
    p = pw()
    add(family, "xml attribute", f'<add key="DbPassword" value="{p}" />', p)
    p = pw()
    add(family, "properties camel", f"db.connection.password={p}", p)
    p = pw()
    add(family, "toml", f'[database]\npassword = "{p}"', p)
    p = pw()
    add(family, "hcl", f'variable "db_password" {{\n  default = "{p}"\n}}', p)
    p = pw()
    add(family, "tfvars", f'db_password = "{p}"', p)
    s = r(40)
    add(family, "terraform output sensitive json", f'"db_password": {{\n    "sensitive": true,\n    "type": "string",\n    "value": "{s}"\n  }}', s)

    family = "credential files and init output"
    p = pw()
    add(family, "npmrc _auth", f"$ cat ~/.npmrc\n//npm.example.com/:_auth={b64('bob:' + p)}\nalways-auth=true", b64('bob:' + p))
    p = pw()
    add(family, "npmrc _password", f"//npm.example.com/:_password={b64(p)}", b64(p))
    s = b64("-----BEGIN RSA PRIVATE KEY-----\n" + r(64) + "\n-----END RSA PRIVATE KEY-----\n")
    add(family, "kubeconfig client-key-data", f"users:\n- name: admin\n  user:\n    client-certificate-data: {b64(r(60))}\n    client-key-data: {s}", s[30:80])
    s = "rubygems_" + r(48, H)
    add(family, "gem credentials", f"---\n:rubygems_api_key: {s}", s[9:])
    s = r(14) + ".atlasv1." + r(67)
    add(family, "terraformrc", f'credentials "app.terraform.io" {{\n  token = "{s}"\n}}', s)
    s = r(43) + "="
    add(family, "wg showconf", f"[Interface]\nListenPort = 51820\nPrivateKey = {s}", s)
    s = "AGE-SECRET-KEY-1" + r(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
    add(family, "age-keygen", f"# created: 2024-05-01T10:00:00Z\n# public key: age1{r(58, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l')}\n{s}", s[16:])
    s = "K10" + r(64, H) + "::server:" + r(32, H)
    add(family, "k3s node-token", f"$ sudo cat /var/lib/rancher/k3s/server/node-token\n{s}", s[3:40])
    s = "SWMTKN-1-" + r(50, "abcdefghijklmnopqrstuvwxyz0123456789") + "-" + r(25, "abcdefghijklmnopqrstuvwxyz0123456789")
    add(family, "docker swarm join", f"    docker swarm join --token {s} 10.0.0.1:2377", s[9:])
    u = uid()
    add(family, "consul acl bootstrap", f"AccessorID:       {uid()}\nSecretID:         {u}\nDescription:      Bootstrap Token (Global Management)", u)
    u = uid()
    add(family, "nomad acl bootstrap", f"Accessor ID  = {uid()}\nSecret ID    = {u}\nName         = Bootstrap Token", u)
    k = r(44, A + "+/")
    t = "hvs." + r(24)
    add(family, "vault operator init unseal", f"Unseal Key 1: {k}\nUnseal Key 2: {r(44, A + '+/')}\n\nInitial Root Token: {t}", k)
    add(family, "vault operator init root", f"Unseal Key 1: {k}\n\nInitial Root Token: {t}", t[4:])
    s = r(128, H)
    add(family, "rails secret", f"$ bin/rails secret\n{s}", s)
    s = "base64:" + b64(r(32))
    add(family, "artisan key:generate --show", f"$ php artisan key:generate --show\n{s}", s[7:])
    s = r(50, A + "!@#$%^&*(-_=+)")
    add(family, "django get_random_secret_key", f"$ python -c 'from django.core.management.utils import get_random_secret_key; print(get_random_secret_key())'\n{s}", s)
    s = r(64, H)
    add(family, "python secrets.token_hex", f'$ python3 -c "import secrets; print(secrets.token_hex(32))"\n{s}', s)
    s = r(43, A + "-_")
    add(family, "python secrets.token_urlsafe", f'$ python -c "import secrets; print(secrets.token_urlsafe(32))"\n{s}', s)
    s = r(24) + "_" + r(24)
    add(family, "ngrok add-authtoken", f"ngrok config add-authtoken {s}", s)
    s = "tskey-auth-" + r(17) + "-" + r(33)
    add(family, "tailscale authkey", f"sudo tailscale up --authkey {s}", s[11:])
    s = "eyJhIjoi" + r(150)
    add(family, "cloudflared token", f"cloudflared tunnel run --token {s}", s[8:60])
    s = "fo1_" + r(43, A + "_-")
    add(family, "fly auth token", f"$ fly auth token\n{s}", s[4:])
    j = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + base64.urlsafe_b64encode(json.dumps({"iss": "supabase-demo", "role": "service_role", "exp": 1983812996}).encode()).decode().rstrip("=") + "." + r(43, A + "-_")
    add(family, "supabase status service_role", f"        API URL: http://127.0.0.1:54321\nservice_role key: {j}", j[-43:])
    p = pw()
    add(family, "cmdkey", f"cmdkey /add:fileserver /user:CORP\\bob /pass:{p}", p)
    p = pw()
    add(family, "curl -d form", f"curl -X POST https://example.com/login -d 'username=bob&password={p}'", p)
    s = r(20, A + "-_")
    add(family, "wget PRIVATE-TOKEN", f'wget --header="PRIVATE-TOKEN: {s}" https://gitlab.example.com/api/v4/projects', s)
    s = r(20, A + "-_")
    add(family, "curl PRIVATE-TOKEN", f'curl --header "PRIVATE-TOKEN: {s}" "https://gitlab.example.com/api/v4/user"', s)
    s = r(32, B32)
    add(family, "otpauth uri", f"otpauth://totp/Example:bob@example.com?secret={s}&issuer=Example", s)
    s = r(32, B32)
    add(family, "totp secret prose", f"Your 2FA setup key: {s}", s)
    s = "0x" + r(64, H)
    add(family, "hardhat node", f"Account #0: 0x{r(40, H)} (10000 ETH)\nPrivate Key: {s}", s[2:])
    s = r(64, H)
    add(family, "eth private key env", f"PRIVATE_KEY={s}", s)
    arr = json.dumps([rng.randrange(256) for _ in range(64)])
    add(family, "solana keypair json", f"$ cat ~/.config/solana/id.json\n{arr}", arr[1:60])
    s = "5" + r(50, "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz")
    add(family, "bitcoin WIF", f"WIF: {s}", s)
    p = pw()
    add(family, "s3cfg", f"[default]\naccess_key = AKIA{r(16, U)}\nsecret_key = {p}", p)
    p = pw()
    add(family, "boto", f"[Credentials]\naws_access_key_id = AKIA{r(16, U)}\naws_secret_access_key = {p}", p)
    p = pw()
    add(family, "rclone.conf pass", f"[nas]\ntype = sftp\nhost = nas.local\nuser = bob\npass = {r(40, A + '-_')}", None)
    p = pw()
    add(family, "git config credential", f"[credential \"https://git.example.com\"]\n\tusername = bob\n\tpassword = {p}", p)
    s = "glpat-" + r(20, A + "-_")
    add(family, "glab config", f"hosts:\n    gitlab.com:\n        token: {s}", s[6:])
    s = r(40, H)
    add(family, "sentry auth token", f"SENTRY_AUTH_TOKEN={s}", s)
    s = "sntrys_" + r(80)
    add(family, "sentry org token", f"sentry-cli --auth-token {s} releases new 1.0", s[7:])
    p = pw()
    add(family, "compose secret env", f"services:\n  db:\n    environment:\n      - MYSQL_ROOT_PASSWORD={p}", p)
    p = pw()
    add(family, "dockerfile ENV", f"ENV DB_PASSWORD {p}", p)
    p = pw()
    add(family, "dockerfile ARG", f"ARG NPM_TOKEN={r(36)}", None)
    p = pw()
    add(family, "systemd Environment", f'Environment="DB_PASSWORD={p}"', p)
    p = pw()
    add(family, "supervisor env", f"environment=DB_PASSWORD=\"{p}\",DEBUG=\"0\"", p)
    p = pw()
    add(family, "nginx auth_basic htpasswd line", f"$ cat /etc/nginx/.htpasswd\nadmin:$apr1${r(8)}${r(22, A + './')}", "$apr1$")
    p = pw()
    add(family, "php.ini / wp-config", f"define( 'DB_PASSWORD', '{p}' );", p)
    p = pw()
    add(family, "laravel .env", f"DB_PASSWORD=\"{p}\"", p)
    p = pw()
    add(family, "appsettings.json", f'"ConnectionStrings": {{ "Default": "Host=db;Username=app;Password={p};Database=app" }}', p)
    p = pw()
    add(family, "yaml anchor", f"defaults: &defaults\n  password: &pw {p}", p)
    p = pw()
    add(family, "ini with quotes semicolon", f"password = \"{p}\" ; prod", p)
    p = pw()
    add(family, "xml element attr", f'<connectionStrings><add name="db" connectionString="Server=.;User ID=sa;Password={p}" /></connectionStrings>', p)
    p = pw()
    add(family, "gradle.properties", f"signing.password={p}\nossrhPassword={p}", p)
    p = pw()
    add(family, "android keystore", f"storePassword={p}\nkeyPassword={p}", p)
    p = pw()
    add(family, "sbt credentials", f'credentials += Credentials("Sonatype", "oss.sonatype.org", "bob", "{p}")', p)
    p = pw()
    add(family, "nuget add source", f"dotnet nuget add source https://nuget.example.com/v3/index.json -n corp -u bob -p {p} --store-password-in-clear-text", p)
    p = pw()
    add(family, "pip index url", f"pip install --index-url https://bob:{p}@pypi.example.com/simple pkg", p)
    p = pw()
    add(family, "poetry http-basic", f"poetry config http-basic.corp bob {p}", p)
    p = pw()
    add(family, "uv env", f"UV_INDEX_CORP_PASSWORD={p} uv sync", p)
    p = pw()
    add(family, "conda channel token", f"conda config --set channel_alias https://conda.example.com/t/{r(32, H)}/", None)
    p = pw()
    add(family, "helm repo add", f"helm repo add corp https://charts.example.com --username bob --password {p}", p)
    p = pw()
    add(family, "argocd login", f"argocd login argocd.example.com --username admin --password {p}", p)
    p = pw()
    add(family, "argocd initial admin", f"$ kubectl -n argocd get secret argocd-initial-admin-secret -o jsonpath=\"{{.data.password}}\" | base64 -d\n{p}", p)
    p = pw()
    add(family, "grafana-cli reset", f"grafana-cli admin reset-admin-password {p}", p)
    p = pw()
    add(family, "rabbitmq env", f"RABBITMQ_DEFAULT_PASS={p}", p)
    p = pw()
    add(family, "keycloak", f"KEYCLOAK_ADMIN_PASSWORD={p}", p)
    p = pw()
    add(family, "jenkins initialAdminPassword", f"$ sudo cat /var/lib/jenkins/secrets/initialAdminPassword\n{r(32, H)}", None)
    p = pw()
    add(family, "gitlab initial_root_password", f"$ sudo cat /etc/gitlab/initial_root_password\n# WARNING: This value is valid only in the following conditions\nPassword: {p}", p)
    p = pw()
    add(family, "mysql temp password log", f"2024-05-01T10:00:00.000000Z 6 [Note] [MY-010454] [Server] A temporary password is generated for root@localhost: {p}", p)
    p = pw()
    add(family, "elastic reset password", f"$ bin/elasticsearch-reset-password -u elastic\nPassword for the [elastic] user successfully reset.\nNew value: {p}", p)
    p = pw()
    add(family, "elastic setup passwords", f"Changed password for user elastic\nPASSWORD elastic = {p}", p)
    p = pw()
    add(family, "opensearch admin", f"OPENSEARCH_INITIAL_ADMIN_PASSWORD={p}", p)
    p = pw()
    add(family, "minio root", f"MINIO_ROOT_PASSWORD={p}", p)
    p = pw()
    add(family, "postgres docker log", f"POSTGRES_PASSWORD={p} docker compose up", p)
    p = pw()
    add(family, "pgadmin", f"PGADMIN_DEFAULT_PASSWORD: {p}", p)
    p = pw()
    add(family, "jupyter token url", f"    http://127.0.0.1:8888/lab?token={r(48, H)}", None)
    p = pw()
    add(family, "code-server password", f"$ cat ~/.config/code-server/config.yaml\nbind-addr: 127.0.0.1:8080\nauth: password\npassword: {p}", p)
    family = "tool events"
    for command in ("aws configure get aws_secret_access_key", "gcloud secrets versions access latest --secret=db",
                    "vault kv get -field=password secret/db", "op read op://Private/db/password", "pass show work/db",
                    "security find-generic-password -s db -w", "heroku config:get DATABASE_PASSWORD -a app",
                    "doppler secrets get DB_PASSWORD --plain", "bw get password github.com", 'echo "$API_TOKEN"',
                    "printenv GITHUB_TOKEN", "openssl rand -hex 32",
                    "kubectl get secret db -o jsonpath='{.data.password}' | base64 -d",
                    "terraform output -raw db_password", "aws ecr get-login-password --region eu-west-1"):
        for form in ("json", "bash -lc"):
            v = r(24)
            given = {"command": command, "description": "read it"} if form == "json" else {
                "command": ["bash", "-lc", command]}
            add(family, f"{command.split()[0]} ({form})", f"input: {json.dumps(given)}\n\noutput:\n{v}\n", v)
    for path in ("/run/secrets/db_password", "/home/dev/.vault_pass.txt", "/var/lib/rancher/k3s/server/node-token",
                 "/srv/app/secret_key.txt"):  # a Read of a file that holds one secret
        v = pw()
        read = {"type": "text", "file": {"filePath": path, "content": f"     1→{v}\n     2→", "numLines": 2}}
        add(family, f"Read {path.rsplit('/', 1)[1]}",
            f"input: {json.dumps({'file_path': path})}\n\noutput:\n{json.dumps(read, ensure_ascii=False)}", v)
    return out


def leaked(text: str, secret: str | None, shown: str) -> bool:
    if secret is None:  # the longest word of the text is the secret
        words = text.replace("'", " ").replace('"', " ").replace("=", " ").replace("/", " ").split()
        secret = max((w for w in words if len(w) >= 12), key=len)
    return secret in shown


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show", action="store_true", help="list the forms that leak")
    args = parser.parse_args()
    forms = cases(args.seed)
    total: Counter[str] = Counter()
    leaks: Counter[str] = Counter()
    unstable: Counter[str] = Counter()
    shown_leaks = []
    for family, name, text, secret in forms:
        once = redact(text)
        total[family] += 1
        if leaked(text, secret, once):
            leaks[family] += 1
            shown_leaks.append(f"  {family}: {name} | {once[:150]!r}")
        if redact(once) != once:
            unstable[family] += 1
    print(f"redaction probe (seed {args.seed}): {len(forms)} forms")
    print(f"  {'family':<36} {'forms':>5} {'leaked':>6} {'not idempotent':>15}")
    for family in total:
        print(f"  {family:<36} {total[family]:>5} {leaks[family]:>6} {unstable[family]:>15}")
    print(f"  {'ALL':<36} {len(forms):>5} {sum(leaks.values()):>6} {sum(unstable.values()):>15}")
    if args.show and shown_leaks:
        print("leaked:")
        print("\n".join(shown_leaks))


if __name__ == "__main__":
    main()
