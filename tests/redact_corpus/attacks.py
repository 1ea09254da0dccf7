"""The families issue 13 found missing, written as an attacker would: for each tool, language and
encoding, the forms a coding agent really meets and their neighbours (each tool's own flag for a
password, each language's way to set a variable, each encoding a secret travels in).

Every secret is generated from the seeded ``Fake``; each kind returns (text, secrets) variants.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import Callable

from tests.redact_corpus.case import Case
from tests.redact_corpus.fakes import ALNUM, B64URL, HEX, Fake

Variant = tuple[str, tuple[str, ...]]
KindFn = Callable[[Fake], list[Variant]]
REGISTRY: list[tuple[str, str, KindFn]] = []


def kind(family: str, name: str) -> Callable[[KindFn], KindFn]:
    def register(fn: KindFn) -> KindFn:
        REGISTRY.append((family, name, fn))
        return fn

    return register


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# =============================================================================================
# Passwords on command lines, per tool


@kind("cli_password", "mysql-p")
def mysql_p(f: Fake) -> list[Variant]:
    out = []
    for tool, form in (("mysql", "-p{}"), ("mysqldump", "-p'{}'"), ("mariadb", '-p"{}"'),
                       ("mysqladmin", "--password={}"), ("mariadb-dump", "--password='{}'"),
                       ("mysql", "-p{}"), ("mysqlimport", "-p{}"), ("mysqlcheck", "--password={}")):
        pw = f.pw()
        out.append((f"$ {tool} -h db.internal -u root {form.format(pw)} app_prod > /tmp/out.sql", (pw,)))
    pw = f.pw()
    out.append((f"$ docker exec -i mysql8 mysql -uroot -p{pw} -e 'SHOW DATABASES;'\nDatabase\ninformation_schema", (pw,)))
    pw = f.pw()
    out.append((f"kubectl exec -it deploy/db -- mysqldump -u admin -p'{pw}' --all-databases | gzip > all.sql.gz", (pw,)))
    pw = f.pw()
    out.append((f"$ MYSQL_PWD='{pw}' mysql -u app -h 10.0.0.12 shop", (pw,)))
    return out


@kind("cli_password", "sshpass")
def sshpass(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ sshpass -p {} ssh -o StrictHostKeyChecking=no deploy@10.0.3.4 'uptime'",
                "sshpass -p '{}' scp build.tar.gz ubuntu@web-1:/srv/",
                'sshpass -p"{}" rsync -az ./dist/ pi@raspberrypi.local:/var/www/',
                "$ sshpass -p{} ssh root@192.168.1.20",
                "SSHPASS='{}' sshpass -e ssh admin@bastion.internal",
                "export SSHPASS={}\nsshpass -e sftp -oBatchMode=no backup@nas"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "redis-cli")
def redis_cli(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ redis-cli -h cache.internal -p 6379 -a {} ping\nWarning: Using a password with '-a' or '-u' option on the command line interface may not be safe.\nPONG",
                "redis-cli -a '{}' --no-auth-warning INFO keyspace",
                "$ redis-cli --user default --pass {} -n 2 KEYS 'session:*'",
                "REDISCLI_AUTH={} redis-cli -h 10.0.0.9 DBSIZE",
                "127.0.0.1:6379> AUTH {}\nOK",
                "127.0.0.1:6379> AUTH default {}\nOK",
                "127.0.0.1:6379> CONFIG SET requirepass \"{}\"\nOK",
                "redis-cli -h redis-master -a \"{}\" --cluster check 10.0.0.5:7000"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "registry-login")
def registry_login(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ docker login -u jane -p {} registry.gitlab.com\nWARNING! Using --password via the CLI is insecure. Use --password-stdin.\nLogin Succeeded",
                "docker login --username ci --password '{}' ghcr.io",
                "podman login -u admin -p {} quay.io",
                "buildah login --username bot --password={} registry.internal:5000",
                "helm registry login registry.example.com --username jane --password {}",
                "oras login -u robot -p '{}' harbor.internal",
                "$ echo {} | docker login ghcr.io -u jane --password-stdin\nLogin Succeeded",
                "echo '{}' | podman login -u ci --password-stdin quay.io",
                "printf '%s' \"{}\" | helm registry login harbor.internal -u admin --password-stdin",
                "skopeo copy --src-creds jane:{} docker://registry.internal/app:1.2 oci:app",
                "crane auth login registry.internal -u bot -p {}",
                "nerdctl login -u admin -p {} 192.168.1.10:5000"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "htpasswd")
def htpasswd(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ htpasswd -b /etc/nginx/.htpasswd admin {}\nUpdating password for user admin",
                "htpasswd -bc .htpasswd jane '{}'",
                "$ htpasswd -nbB traefik {}\ntraefik:$2y$05$Qm9v",
                "htpasswd -nb admin \"{}\" >> auth",
                "htpasswd -Bbn registry '{}' > /auth/htpasswd",
                "docker run --rm httpd:2.4 htpasswd -Bbn user {} > htpasswd"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "archive-password")
def archive_password(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ 7z a -p{} -mhe=on backup.7z ./secrets/",
                "7za x -p'{}' archive.7z -o/tmp/out",
                "7z x release.7z -p{} -y",
                "$ zip -P {} -r dump.zip dump/\n  adding: dump/ (stored 0%)",
                "zip -r --password '{}' site.zip public/",
                "unzip -P {} customer-data.zip",
                "rar a -p{} logs.rar logs/",
                "unrar x -p'{}' bundle.rar",
                "openssl enc -aes-256-cbc -salt -in db.sql -out db.sql.enc -k {}",
                "openssl enc -d -aes-256-cbc -in db.sql.enc -pass pass:{}",
                "gpg --batch --yes --passphrase '{}' -c notes.txt",
                "gpg --pinentry-mode loopback --passphrase={} --decrypt secrets.gpg"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "az-login")
def az_login(f: Fake) -> list[Variant]:
    out = []
    app, tenant = f.uuid(), f.uuid()
    for tpl in ("$ az login -u jane@contoso.com -p {}",
                "az login --service-principal -u " + app + " -p {} --tenant " + tenant,
                "az login --service-principal --username " + app + " --password '{}' --tenant contoso.onmicrosoft.com",
                "az login --service-principal -u http://ci-bot --password={} --tenant " + tenant,
                "az acr login -n myregistry -u myregistry -p {}",
                "Connect-AzAccount -ServicePrincipal -Credential (New-Object PSCredential('" + app + "', (ConvertTo-SecureString '{}' -AsPlainText -Force))) -Tenant " + tenant):
        pw = f.pick([f.pw(), f.azure_client_secret()])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "gh-secret")
def gh_secret(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ gh secret set DEPLOY_KEY --body {}\n✓ Set Actions secret DEPLOY_KEY for acme/web",
                "gh secret set NPM_TOKEN -b'{}' --repo acme/cli",
                "gh secret set SLACK_HOOK --body \"{}\" --env production",
                "gh secret set DB_URL -b {} -R acme/api",
                "echo -n '{}' | gh secret set SENTRY_AUTH -R acme/web",
                "gh variable set RELEASE_CHANNEL --body stable && gh secret set SIGNING_PASS --body '{}'",
                "glab variable set API_TOKEN '{}' --masked",
                "echo {} | gh auth login --with-token"):
        pw = f.pick([f.pw(), f.opaque(40)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "vault-cli")
def vault_cli(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ vault kv put secret/app/db password={} username=app\n====== Secret Path ======",
                "vault kv put -mount=secret stripe api_key={}",
                "vault write auth/userpass/users/jane password='{}' policies=dev",
                "vault login -method=userpass username=jane password={}",
                "vault kv put secret/ci db_password=\"{}\" host=db.internal",
                "vault write database/config/pg plugin_name=postgresql-database-plugin connection_url=\"postgresql://{{{{username}}}}:{{{{password}}}}@db:5432/app\" username=vault password={}",
                "vault kv put secret/smtp pass={} user=mailer",
                "vault kv patch secret/app/api token={}"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "psql")
def psql(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ PGPASSWORD={} psql -h db.internal -U app -d shop -c 'select count(*) from orders'",
                "PGPASSWORD='{}' pg_dump -Fc -h 10.0.0.5 -U postgres app > app.dump",
                "$ psql \"host=db.internal port=5432 user=app password={} dbname=shop sslmode=require\"",
                "psql -d 'dbname=analytics user=reader password={}'",
                "export PGPASSWORD=\"{}\"\npsql -h localhost -U postgres",
                "pg_restore --dbname=\"host=db user=app password={}\" app.dump"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    pw = f.pw()
    out.append((f"$ cat ~/.pgpass\ndb.internal:5432:shop:app:{pw}\n*:*:*:replicator:{f.pw()}", (pw,)))
    return out


@kind("cli_password", "curl-wget-auth")
def curl_wget(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ curl -s -u jenkins:{} https://ci.internal/api/json",
                "curl --user 'admin:{}' -X POST https://grafana.internal/api/dashboards/db",
                "curl -U proxyuser:{} -x http://proxy.corp:3128 https://example.org",
                "curl --proxy-user 'jane:{}' --proxy http://10.0.0.1:8080 https://pypi.org/simple/",
                "wget --user=deploy --password={} https://artifacts.internal/app.tar.gz",
                "wget --http-user=ci --http-password='{}' https://nexus.internal/repository/raw/x.zip",
                "wget --ftp-user=anon --ftp-password={} ftp://ftp.internal/pub/data.csv",
                "http -a admin:{} POST https://api.internal/v1/reindex",
                "http --auth 'bot:{}' https://api.internal/health",
                "aria2c --http-user=jane --http-passwd={} https://files.internal/big.iso",
                "curl --oauth2-bearer {} https://api.internal/v2/me"):
        pw = f.pick([f.pw(), f.opaque(32)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "db-cli-other")
def db_cli_other(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ sqlcmd -S tcp:sql.internal,1433 -U sa -P {} -Q \"SELECT @@VERSION\"",
                "bcp dbo.Orders out orders.dat -S sql01 -U loader -P '{}' -c",
                "mongosh --host mongo.internal --username admin --password {} --authenticationDatabase admin",
                "mongo -u root -p '{}' --authenticationDatabase admin shop",
                "mongodump --username backup --password={} --out /backups/$(date +%F)",
                "cqlsh cassandra.internal -u cassandra -p {}",
                "influx -username admin -password '{}' -execute 'SHOW DATABASES'",
                "clickhouse-client --host ch.internal --user default --password {} --query 'SELECT 1'",
                "$ sqlplus scott/{}@//db.internal:1521/ORCLPDB1",
                "cypher-shell -a neo4j://graph:7687 -u neo4j -p {} 'MATCH (n) RETURN count(n)'",
                "isql -U sa -P {} -S SYBASE01"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "ldap-ipmi-snmp")
def ldap_ipmi(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ ldapsearch -x -H ldap://ldap.internal -D \"cn=admin,dc=acme,dc=io\" -w {} -b dc=acme,dc=io '(uid=jane)'",
                "ldapadd -x -D cn=admin,dc=example,dc=org -w '{}' -f users.ldif",
                "ldapmodify -H ldaps://dc01 -D 'CN=svc,OU=Service,DC=corp' -w {} -f change.ldif",
                "ipmitool -I lanplus -H 10.0.9.21 -U ADMIN -P {} chassis power status",
                "snmpwalk -v3 -l authPriv -u monitor -a SHA -A {} -x AES -X {} 10.0.0.1",
                "ldappasswd -x -D cn=admin,dc=acme -w {} -s {} uid=jane,ou=people,dc=acme"):
        pws = tuple(f.pw() for _ in range(tpl.count("{}")))
        out.append((tpl.format(*pws), pws))
    return out


@kind("cli_password", "keystore-passphrase")
def keystore(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ keytool -genkeypair -alias app -keystore app.jks -storepass {} -keypass {} -dname CN=app",
                "keytool -importkeystore -srckeystore a.p12 -srcstorepass '{}' -destkeystore b.jks -deststorepass {}",
                "jarsigner -keystore release.jks -storepass {} app.apk release",
                "openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout pass:{}",
                "openssl rsa -in server.key -passin pass:'{}' -out server.nopass.key",
                "openssl genrsa -aes256 -passout pass:{} -out ca.key 4096",
                "ssh-keygen -t ed25519 -N '{}' -f ~/.ssh/deploy_ed25519 -C deploy",
                "ssh-keygen -p -P {} -N {} -f ~/.ssh/id_rsa",
                "apksigner sign --ks release.jks --ks-pass pass:{} --key-pass pass:{} app.apk"):
        pws = tuple(f.pw() for _ in range(tpl.count("{}")))
        out.append((tpl.format(*pws), pws))
    return out


@kind("cli_password", "smb-mount-rdp")
def smb(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ smbclient //fileserver/finance -U jane%{} -c 'ls'",
                "smbclient -U 'CORP\\\\svc_backup%{}' //nas/backup",
                "sudo mount -t cifs //nas/share /mnt/share -o username=jane,password={},vers=3.0",
                "mount.cifs //10.0.0.4/data /data -o user=backup,pass='{}'",
                "xfreerdp /u:Administrator /p:{} /v:10.0.4.7 /cert:ignore",
                "rdesktop -u admin -p {} win2019.internal",
                "net use Z: \\\\\\\\fs01\\\\projects /user:CORP\\\\jane {} /persistent:no",
                "net user svc_deploy {} /add /domain",
                "psexec \\\\\\\\web01 -u CORP\\\\admin -p {} cmd /c ipconfig",
                "lftp -u deploy,{} sftp://files.internal -e 'mirror -R dist /www; quit'"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "passwd-stdin")
def passwd_stdin(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("echo 'jane:{}' | sudo chpasswd",
                "echo \"{}\" | passwd --stdin deploy",
                "$ echo {} | sudo -S apt-get update",
                "sudo -S systemctl restart nginx <<< '{}'",
                "printf '{}\\n{}\\n' | passwd jane",
                "usermod --password $(openssl passwd -6 '{}') deploy",
                "$ openssl passwd -1 {}\n$1$abc$",
                "mkpasswd -m sha-512 {}",
                "echo -e \"{}\\n{}\" | smbpasswd -a -s jane"):
        pw = f.pw()
        out.append((tpl.format(*([pw] * tpl.count("{}"))), (pw,)))
    return out


@kind("cli_password", "generic-flag")
def generic_flag(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ ./migrate --db-password {} --db-host db.internal up",
                "python manage.py createsuperuser --username admin --password '{}'",
                "terraform-provider-test --api-key={} --region eu-west-1",
                "./bin/worker --client-secret {} --client-id web-app",
                "node scripts/seed.js --auth-token={}",
                "go run ./cmd/sync -token {} -org acme",
                "java -jar loader.jar --spring.datasource.password={}",
                "app.exe /password:{} /user:svc",
                "cloudflared tunnel run --token {}",
                "./deploy.sh --secret-key '{}' --env prod",
                "ngrok config add-authtoken {}",
                "npx vercel deploy --prod --token {}"):
        pw = f.pick([f.pw(), f.opaque(40)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "env-prefix")
def env_prefix(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ RSYNC_PASSWORD={} rsync -av rsync://backup@nas/share ./",
                "docker run -e POSTGRES_PASSWORD={} -p 5432:5432 -d postgres:16",
                "docker run --rm --env API_KEY='{}' acme/worker:latest",
                "docker build --build-arg NPM_TOKEN={} -t web .",
                "kubectl create secret generic db --from-literal=password={} --from-literal=username=app",
                "kubectl create secret docker-registry regcred --docker-server=ghcr.io --docker-username=jane --docker-password={}",
                "kubectl set env deployment/api STRIPE_SECRET={}",
                "heroku config:set SESSION_SECRET={} -a acme-web",
                "fly secrets set DATABASE_PASSWORD='{}' -a api",
                "helm upgrade --install pg bitnami/postgresql --set auth.postgresPassword={} --set auth.database=app",
                "terraform apply -var 'db_password={}' -auto-approve",
                "ansible-playbook site.yml -e \"ansible_become_pass={}\"",
                "AWS_SECRET_ACCESS_KEY={} aws s3 ls s3://acme-backups"):
        pw = f.pick([f.pw(), f.opaque(40)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "package-registry-auth")
def package_auth(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ npm config set //registry.npmjs.org/:_authToken {}",
                "npm config set //npm.pkg.github.com/:_authToken=\"{}\"",
                "yarn config set npmAuthToken {}",
                "poetry config pypi-token.pypi {}",
                "poetry config http-basic.internal jane {}",
                "composer config --global http-basic.repo.packagist.com token {}",
                "cargo login {}",
                "twine upload -u __token__ -p {} dist/*",
                "git config --global http.https://git.internal/.extraheader \"AUTHORIZATION: bearer {}\"",
                "git -c http.extraHeader=\"Authorization: Basic {}\" clone https://dev.azure.com/acme/_git/web"):
        pw = f.opaque(40) if "Basic" not in tpl else b64("pat:" + f.opaque(52))
        out.append((tpl.format(pw), (pw,)))
    return out


# =============================================================================================
# Orchestration and cloud configuration


@kind("cloud_config", "k8s-env-pair")
def k8s_env_pair(f: Fake) -> list[Variant]:
    out = []
    for name in ("DB_PASSWORD", "STRIPE_API_KEY", "JWT_SECRET", "GITHUB_TOKEN"):
        pw = f.pw() if "PASSWORD" in name else f.opaque(40)
        q = f.pick(["", '"', "'"])
        out.append((f"    spec:\n      containers:\n        - name: api\n          image: acme/api:1.4\n"
                    f"          env:\n            - name: LOG_LEVEL\n              value: info\n"
                    f"            - name: {name}\n              value: {q}{pw}{q}\n", (pw,)))
    pw = f.pw()
    out.append((json.dumps({"containerDefinitions": [{"name": "web", "environment": [
        {"name": "NODE_ENV", "value": "production"}, {"name": "DATABASE_PASSWORD", "value": pw}]}]}, indent=2), (pw,)))
    pw = f.pw()
    out.append((json.dumps([{"name": "APP_SECRET", "slotSetting": False, "value": pw}]), (pw,)))
    pw = f.pw()
    out.append((f'  env {{\n    name  = "DB_PASSWORD"\n    value = "{pw}"\n  }}', (pw,)))
    pw = f.pw()
    out.append((f'<appSettings>\n  <add key="Environment" value="prod" />\n  <add key="SmtpPassword" value="{pw}" />\n</appSettings>', (pw,)))
    pw = f.pw()
    out.append((f"aws cloudformation deploy --stack-name app --parameter-overrides ParameterKey=DbPassword,ParameterValue={pw}", (pw,)))
    pw = f.pw()
    out.append((f"$ aws ssm put-parameter --name /prod/db/password --value '{pw}' --type SecureString --overwrite", (pw,)))
    pw = f.pw()
    out.append((f'<property name="hibernate.connection.password" value="{pw}"/>', (pw,)))
    pw = f.opaque(40)
    out.append((json.dumps({"Parameters": [{"Name": "/app/api_token", "Type": "SecureString", "Value": pw}]}), (pw,)))
    return out


@kind("cloud_config", "k8s-secret")
def k8s_secret(f: Fake) -> list[Variant]:
    out = []
    pw = f.pw()
    out.append((f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  username: {b64('app')}\n  password: {b64(pw)}\n", (b64(pw),)))
    url = f"postgres://app:{f.pw()}@db.internal:5432/shop"
    out.append((f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-env\ndata:\n  DATABASE_URL: {b64(url)}\n  LOG_LEVEL: {b64('info')}\n", (b64(url),)))
    cfg = json.dumps({"auths": {"ghcr.io": {"auth": b64("jane:" + f.opaque(40))}}})
    out.append((f"apiVersion: v1\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: {b64(cfg)}\n", (b64(cfg),)))
    env = f"API_KEY={f.opaque(32)}\nDEBUG=false\n"
    out.append((f"$ kubectl get secret app -o yaml\napiVersion: v1\ndata:\n  app.env: {b64(env)}\nkind: Secret\n", (b64(env),)))
    pw = f.pw()
    out.append((f"$ kubectl get secret db -o jsonpath='{{.data.password}}' | base64 -d\n{pw}", (pw,)))
    pw = f.pw()
    out.append((f"stringData:\n  config.yaml: |\n    database:\n      host: db\n      password: {pw}\n", (pw,)))
    return out


@kind("cloud_config", "kubeconfig")
def kubeconfig(f: Fake) -> list[Variant]:
    out = []
    for _ in range(3):
        pem = "-----BEGIN RSA PRIVATE KEY-----\n" + f.key_body("rsa") + "\n-----END RSA PRIVATE KEY-----\n"
        cert = "-----BEGIN CERTIFICATE-----\n" + f.pem_body(4) + "\n-----END CERTIFICATE-----\n"
        key_data = b64(pem)
        # (the ends are base64 of the fixed BEGIN/END lines, which the certificate shares)
        out.append((f"users:\n- name: kind-dev\n  user:\n    client-certificate-data: {b64(cert)}\n    client-key-data: {key_data}\n", (key_data[60:-60],)))
    tok = f.jwt()
    out.append((f"users:\n- name: sa\n  user:\n    token: {tok}\n", (tok,)))
    pw = f.pw()
    out.append((f"users:\n- name: admin\n  user:\n    username: admin\n    password: {pw}\n", (pw,)))
    sec = f.opaque(32)
    out.append((f"    auth-provider:\n      config:\n        client-id: kubernetes\n        client-secret: {sec}\n        id-token: {f.jwt()}\n", (sec,)))
    return out


@kind("cloud_config", "gcp-service-account")
def gcp_sa(f: Fake) -> list[Variant]:
    out = []
    for style in ("indent", "compact", "env", "python", "escaped", "b64"):
        body = f.key_body("pkcs8")
        pem = "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n"
        sa = {"type": "service_account", "project_id": "acme-prod", "private_key_id": f.hex(40),
              "private_key": pem, "client_email": "ci@acme-prod.iam.gserviceaccount.com",
              "client_id": f.digits(21), "token_uri": "https://oauth2.googleapis.com/token"}
        lines = body.split("\n")
        secrets = (lines[1], lines[len(lines) // 2], lines[-2])
        if style == "indent":
            text = json.dumps(sa, indent=2)
        elif style == "compact":
            text = "$ cat key.json\n" + json.dumps(sa)
        elif style == "env":
            text = f"GOOGLE_CREDENTIALS='{json.dumps(sa)}'"
        elif style == "python":
            text = f"creds = {sa!r}"
        elif style == "escaped":
            text = json.dumps({"secret": json.dumps(sa)})
        else:
            blob = b64(json.dumps(sa, indent=2))
            text, secrets = f"GCP_SA_KEY_B64={blob}", (blob,)
        out.append((text, secrets))
    return out


@kind("cloud_config", "azure-sas")
def azure_sas(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("https://acmestore.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=sco&sp=rwdlac&se=2024-06-01T00:00:00Z&st=2024-05-01T00:00:00Z&spr=https&sig={}",
                "$ azcopy copy ./dist 'https://web.blob.core.windows.net/$web?sv=2021-06-08&se=2024-05-20T10%3A00%3A00Z&sr=c&sp=racwl&sig={}' --recursive",
                "AZURE_STORAGE_SAS_TOKEN=\"?sv=2022-11-02&ss=bfqt&srt=sco&sp=rwdlacupiytfx&se=2025-01-01T00:00:00Z&spr=https&sig={}\"",
                "BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&srt=o&sp=r&se=2024-12-31&sig={}",
                "$ az storage container generate-sas --account-name acme -n logs --permissions rl --expiry 2024-06-01 -o tsv\nse=2024-06-01&sp=rl&sv=2022-11-02&sr=c&sig={}",
                "Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessSignature=SharedAccessSignature sr=acme-bus.servicebus.windows.net&sig={}&se=1718000000&skn=RootManageSharedAccessKey"):
        sig = f.sas_sig()
        out.append((tpl.format(sig), (sig,)))
    return out


@kind("cloud_config", "azure-client-secret")
def azure_client_secret(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("The app registration's client secret is {} (expires in 6 months).",
                "$ az ad app credential reset --id 3f2a --append\n{{\n  \"appId\": \"3f2a\",\n  \"password\": \"{}\",\n  \"tenant\": \"contoso\"\n}}",
                "cred = ClientSecretCredential(tenant_id, client_id, \"{}\")",
                "AZURE_CLIENT_SECRET={}",
                "Secret value: {}\nSecret ID: 6b1c",
                "clientSecret: '{}'"):
        sec = f.azure_client_secret()
        out.append((tpl.format(sec), (sec,)))
    return out


@kind("cloud_config", "gcp-oauth-token")
def gcp_oauth(f: Fake) -> list[Variant]:
    out = []
    for tpl, gen in (("$ gcloud auth print-access-token\n{}", f.ya29),
                     ("curl -H \"Authorization: Bearer {}\" https://storage.googleapis.com/storage/v1/b/acme", f.ya29),
                     ("token expired: {} (refresh needed)", f.ya29),
                     ('{{"access_token": "{}", "expires_in": 3599, "token_type": "Bearer"}}', f.ya29),
                     ('{{"refresh_token": "{}", "scope": "openid"}}', f.google_refresh),
                     ("saved refresh token {} to ~/.config/app/creds", f.google_refresh),
                     ("creds = Credentials(token=None, refresh_token='{}', client_id=cid)", f.google_refresh)):
        tok = gen()
        out.append((tpl.format(tok), (tok,)))
    return out


@kind("cloud_config", "stripe-webhook")
def stripe_webhook(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ stripe listen --forward-to localhost:3000/webhooks\n> Ready! Your webhook signing secret is {} (^C to quit)",
                "STRIPE_WEBHOOK_SECRET={}",
                "event = stripe.Webhook.construct_event(payload, sig_header, \"{}\")",
                "const endpointSecret = '{}';",
                "webhook secret: {}"):
        tok = f.whsec()
        out.append((tpl.format(tok), (tok,)))
    return out


@kind("cloud_config", "discord-bot")
def discord_bot(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("client.run('{}')", "bot.run(\"{}\")", "Logged in with {} as Acme#1234",
                "DISCORD_TOKEN={}", '{{"token": "{}", "prefix": "!"}}',
                "const client = new Client({{ intents }}); client.login('{}');"):
        tok = f.discord_bot()
        out.append((tpl.format(tok), (tok,)))
    return out


@kind("cloud_config", "twilio")
def twilio(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("client = Client(\"{sid}\", \"{tok}\")",
                "const client = require('twilio')('{sid}', '{tok}');",
                "client := twilio.NewRestClientWithParams(twilio.ClientParams{{Username: \"{sid}\", Password: \"{tok}\"}})",
                "curl -X POST https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json -u {sid}:{tok}",
                "Twilio.init(\"{sid}\", \"{tok}\");",
                "account {sid} auth token {tok}"):
        tok = f.hex(32)
        out.append((tpl.format(sid=f.twilio_sid(), tok=tok), (tok,)))
    return out


@kind("cloud_config", "aws-config")
def aws_config(f: Fake) -> list[Variant]:
    out = []
    kid, sec = f.aws_access_key_id(), f.aws_secret_access_key()
    out.append((f"$ aws configure\nAWS Access Key ID [None]: {kid}\nAWS Secret Access Key [None]: {sec}\nDefault region name [None]: eu-west-1", (kid, sec)))
    kid, sec = f.aws_access_key_id(), f.aws_secret_access_key()
    out.append((f"Use access key {kid} with secret {sec} for the CI user.", (kid, sec)))
    kid, sec = f.aws_access_key_id(), f.aws_secret_access_key()
    out.append((f"s3 = boto3.client('s3', aws_access_key_id='{kid}', aws_secret_access_key='{sec}')", (kid, sec)))
    sec = f.aws_secret_access_key()
    out.append((f"AWS.config.update({{ accessKeyId: 'AKIA' + id, secretAccessKey: '{sec}', region: 'us-east-1' }});", (sec,)))
    sec = f.aws_secret_access_key()
    out.append((f'provider "aws" {{\n  region     = "eu-west-1"\n  access_key = "{f.aws_access_key_id()}"\n  secret_key = "{sec}"\n}}', (sec,)))
    kid, sec = f.aws_access_key_id(), f.aws_secret_access_key()
    out.append((f"{kid},{sec}\n", (kid, sec)))
    kid, sec = f.aws_access_key_id(), f.aws_secret_access_key()
    out.append((f"User name,Password,Access key ID,Secret access key,Console login link\nci,,{kid},{sec},https://acme.signin.aws.amazon.com/console", (kid, sec)))
    return out


@kind("cloud_config", "tool-config-files")
def tool_config(f: Fake) -> list[Variant]:
    out = []
    sec = f.aws_secret_access_key()
    out.append((f"$ cat ~/.s3cfg\n[default]\naccess_key = {f.aws_access_key_id()}\nsecret_key = {sec}\nhost_base = s3.amazonaws.com", (sec,)))
    pw = f.pw()
    out.append((f"[remote-sftp]\ntype = sftp\nhost = files.internal\nuser = deploy\npass = {pw}\n", (pw,)))
    tok = f.github()
    out.append((f"$ cat ~/.config/gh/hosts.yml\ngithub.com:\n    user: jane\n    oauth_token: {tok}\n    git_protocol: ssh", (tok,)))
    pw = f.pw()
    out.append((f"# ~/.gradle/gradle.properties\nsigning.keyId=24875D73\nsigning.password={pw}\nossrhUsername=jane\nossrhPassword={pw}\n", (pw,)))
    tok = f.opaque(40)
    out.append((f"$ cat ~/.git-credentials\nhttps://jane:{tok}@github.com\n", (tok,)))
    tok = f.opaque(48)
    out.append((f"---\n:rubygems_api_key: rubygems_{f.hex(48)}\n:github: Bearer {tok}\n", (tok,)))
    pw = f.pw()
    out.append((f"[client]\nuser=root\npassword=\"{pw}\"\n", (pw,)))
    pw = f.pw()
    out.append((f"# wireguard\n[Interface]\nPrivateKey = {f.b64(32)}\n[Peer]\nPresharedKey = {pw}\n", (pw,)))
    return out


# =============================================================================================
# Connection strings, URLs, query parameters, SQL


@kind("connection_string", "url-special-chars")
def url_special(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("DATABASE_URL=postgres://app:{}@db.internal:5432/shop",
                "mysql://root:{}@127.0.0.1:3306/app?charset=utf8mb4",
                "mongodb+srv://admin:{}@cluster0.ab12c.mongodb.net/test?retryWrites=true",
                "connecting to redis://:{}@cache:6379/0",
                "amqp://guest:{}@rabbit.internal:5672/",
                "engine = create_engine(\"postgresql+psycopg2://etl:{}@warehouse:5432/dw\")",
                "smtp://mailer:{}@smtp.example.com:587",
                "ftp://upload:{}@ftp.internal/incoming/"):
        pw = f.url_unsafe_password()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("connection_string", "url-encoded")
def url_encoded(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("DATABASE_URL=postgresql://app:{}@db.internal/shop",
                "mongodb://admin:{}@mongo-0.mongo:27017/?authSource=admin",
                "jdbc:mysql://db.internal:3306/app?user=app&password={}&useSSL=true",
                "POST /login HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\nusername=jane&password={}&remember=1"):
        pw = urllib.parse.quote(f.url_unsafe_password(), safe="")
        out.append((tpl.format(pw), (pw,)))
    for tpl in ("GET /oauth/callback?state=xyz&redirect={} HTTP/1.1",
                "config=%7B%22db%22%3A%22{}%22%7D"):
        raw = f"postgres://app:{f.mixed(ALNUM, 14)}@db.internal:5432/shop"
        enc = urllib.parse.quote(raw, safe="")
        pw = raw.split(":")[2].split("@")[0]
        out.append((tpl.format(enc), (pw,)))
    pw = f.mixed(ALNUM, 16)
    out.append((f"curl -d 'grant_type=password&username=jane&password={pw}%21&client_id=web' https://auth.internal/token", (pw,)))
    return out


@kind("connection_string", "query-secret-param")
def query_params(f: Fake) -> list[Variant]:
    out = []
    out.append((f"GET https://maps.example.com/api/geocode?address=Berlin&key={f.opaque(39)} 200", ()))
    out[-1] = (out[-1][0], (out[-1][0].split("key=")[1].split(" ")[0],))
    sig = f.hex(64)
    out.append((f"https://acme-uploads.s3.eu-west-1.amazonaws.com/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={f.aws_access_key_id()}%2F20240514%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20240514T092107Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature={sig}", (sig,)))
    tok = f.b64(120)
    out.append((f"https://bucket.s3.amazonaws.com/x?X-Amz-Security-Token={urllib.parse.quote(tok, safe='')}&X-Amz-Signature={f.hex(64)}", (urllib.parse.quote(tok, safe=""),)))
    sig = f.hex(256)
    out.append((f"https://storage.googleapis.com/acme/file.zip?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=sa%40acme.iam.gserviceaccount.com%2F20240514&X-Goog-Expires=900&X-Goog-Signature={sig}", (sig,)))
    sig = f.b64url(128).replace("_", "~")
    out.append((f"https://d111111abcdef8.cloudfront.net/video.mp4?Expires=1718000000&Signature={sig}&Key-Pair-Id=K2JCJMDEHXQW5F", (sig,)))
    for name in ("token", "api_key", "apikey", "secret", "auth", "sig", "signature", "access_key", "client_secret", "refresh_token", "pwd"):
        val = f.opaque(32)
        out.append((f"GET /v1/export?format=csv&{name}={val}&page=2 HTTP/1.1", (val,)))
    val = f.opaque(40)
    out.append((f"wss://stream.internal/socket?token={val}", (val,)))
    return out


@kind("connection_string", "keyword-conn-string")
def keyword_conn(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("Server=tcp:acme.database.windows.net,1433;Database=shop;User Id=app;Password={};Encrypt=true;",
                "Data Source=sql01;Initial Catalog=crm;User ID=sa;Pwd={};",
                "Driver={{ODBC Driver 18 for SQL Server}};Server=sql01;UID=etl;PWD={{{}}};",
                "host=db.internal port=5432 dbname=app user=app password={} sslmode=verify-full",
                "jdbc:oracle:thin:scott/{}@db.internal:1521:ORCL",
                "conn = cx_Oracle.connect('scott/{}@db.internal:1521/ORCLPDB1')",
                "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"svc\" password=\"{}\";",
                "Provider=SQLOLEDB;Data Source=db;User Id=sa;Password=\"{}\";",
                "DSN=warehouse;UID=reader;PASSWORD={}"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("connection_string", "sql-password")
def sql_password(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("mysql> CREATE USER 'app'@'%' IDENTIFIED BY '{}';\nQuery OK, 0 rows affected (0.01 sec)",
                "ALTER USER 'root'@'localhost' IDENTIFIED WITH mysql_native_password BY '{}';",
                "GRANT ALL PRIVILEGES ON shop.* TO 'etl'@'10.0.%' IDENTIFIED BY \"{}\";",
                "SQL> CREATE USER reporting IDENTIFIED BY {} DEFAULT TABLESPACE users;",
                "SET PASSWORD FOR 'jane'@'%' = PASSWORD('{}');",
                "CREATE LOGIN etl WITH PASSWORD = '{}', CHECK_POLICY = OFF;",
                "ALTER ROLE app WITH LOGIN ENCRYPTED PASSWORD '{}';",
                "ALTER USER postgres PASSWORD '{}';",
                "db.createUser({{ user: \"reporter\", pwd: \"{}\", roles: [\"read\"] }})",
                "db.changeUserPassword(\"reporter\", \"{}\")",
                "127.0.0.1:6379> ACL SETUSER worker on >{} ~jobs:* +@all"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("connection_string", "url-userinfo-more")
def url_userinfo_more(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("pip install --extra-index-url https://jane:{}@pkgs.internal/simple/ acme-core",
                "$ git clone https://oauth2:{}@gitlab.internal/acme/infra.git",
                "https://elastic:{}@localhost:9200/_cat/indices",
                "snowflake://loader:{}@acme-xy12345/analytics/public?warehouse=etl",
                "HTTP_PROXY=http://jane:{}@proxy.corp:3128",
                "sftp://deploy:{}@files.internal:22/www"):
        pw = f.pick([f.pw(), f.opaque(32)])
        out.append((tpl.format(pw), (pw,)))
    return out


# =============================================================================================
# Code forms


@kind("code", "py-environ-set")
def py_environ(f: Fake) -> list[Variant]:
    out = []
    for tpl in ('os.environ["DB_PASSWORD"] = "{}"',
                "os.environ['OPENAI_API_KEY'] = '{}'",
                'os.environ.setdefault("SECRET_KEY", "{}")',
                'os.putenv("API_TOKEN", "{}")',
                "os.environ.update(STRIPE_KEY='{}', DEBUG='1')",
                'password = os.getenv("DB_PASSWORD", "{}")',
                "token = os.environ.get('GH_TOKEN', '{}')",
                'monkeypatch.setenv("API_SECRET", "{}")'):
        pw = f.pick([f.pw(), f.opaque(36)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("code", "py-dict-literal")
def py_dict(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("conn = psycopg2.connect(**{{'host': 'db', 'user': 'app', 'password': '{}'}})",
                "subprocess.run(cmd, env={{\"DB_PASSWORD\": \"{}\", **os.environ}})",
                "params = dict(user='svc', password='{}', host='db.internal')",
                "headers = {{'Authorization': 'Bearer {}', 'Accept': 'application/json'}}",
                "DATABASES = {{\n    'default': {{\n        'ENGINE': 'django.db.backends.postgresql',\n        'NAME': 'shop',\n        'PASSWORD': '{}',\n    }}\n}}",
                "config = {{\n    \"api_key\": \"{}\",\n    \"timeout\": 30,\n}}",
                "creds = {{'client_id': 'web', 'client_secret': '{}'}}",
                "r = requests.post(url, data={{'username': 'jane', 'password': '{}'}})"):
        pw = f.pick([f.pw(), f.opaque(36)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("code", "go")
def go_forms(f: Fake) -> list[Variant]:
    out = []
    for tpl in ('os.Setenv("DB_PASSWORD", "{}")',
                't.Setenv("API_KEY", "{}")',
                'viper.Set("auth.token", "{}")',
                'const apiKey = "{}"',
                'password := "{}"',
                'cfg := Config{{Host: "db", User: "app", Password: "{}"}}',
                'req.Header.Set("Authorization", "Bearer {}")',
                'req.SetBasicAuth("admin", "{}")',
                'var signingKey = []byte("{}")'):
        pw = f.pick([f.pw(), f.opaque(32)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("code", "php")
def php(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("define('DB_PASSWORD', '{}');",
                'define( "AUTH_KEY", "{}" );',
                "$password = '{}';",
                "$config['db_password'] = \"{}\";",
                "    'password' => '{}',",
                'putenv("API_KEY={}");',
                "$pdo = new PDO('mysql:host=db;dbname=shop', 'app', '{}');",
                "$link = mysqli_connect('db.internal', 'app', '{}', 'shop');"):
        pw = f.pick([f.pw(), f.password(40, "!@#$%^&*()-_[]{}<>~+=,.;:/?|")]) if "AUTH_KEY" not in tpl else f.password(64, "!#%^&*()-_[]<>~+=,.;:/?|")
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("code", "js-ts")
def js_ts(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("const apiKey = '{}';",
                'process.env.API_SECRET = "{}";',
                "export const JWT_SECRET = `{}`;",
                "axios.get(url, {{ auth: {{ username: 'jane', password: '{}' }} }});",
                "private readonly clientSecret: string = '{}';",
                "const stripe = new Stripe('{}', {{ apiVersion: '2024-04-10' }});",
                "headers: {{ Authorization: `Bearer {}` }},",
                "mongoose.connect('mongodb://app:{}@mongo:27017/shop');",
                "let config: Config = {{ password: \"{}\", port: 5432 }};"):
        pw = f.stripe() if "Stripe" in tpl else f.pick([f.pw(), f.opaque(36)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("code", "ruby")
def ruby(f: Fake) -> list[Variant]:
    out = []
    for tpl in ('ENV["API_KEY"] = "{}"',
                "ENV.fetch('SECRET_KEY_BASE', '{}')",
                "config.api_key = '{}'",
                "Stripe.api_key = \"{}\"",
                "{{ :password => '{}', :username => 'app' }}",
                "client = Octokit::Client.new(access_token: '{}')",
                "req.basic_auth('admin', '{}')"):
        pw = f.stripe() if "Stripe" in tpl else f.pick([f.pw(), f.opaque(36)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("code", "java-kotlin")
def java(f: Fake) -> list[Variant]:
    out = []
    for tpl in ('String password = "{}";',
                'private static final String API_KEY = "{}";',
                'props.setProperty("password", "{}");',
                'System.setProperty("javax.net.ssl.keyStorePassword", "{}");',
                'Connection c = DriverManager.getConnection(url, "app", "{}");',
                'val apiToken = "{}"',
                'ds.setPassword("{}");',
                '@Value("${{db.password:{}}}")',
                'new UsernamePasswordCredentials("svc", "{}")'):
        pw = f.pick([f.pw(), f.opaque(36)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("code", "hcl")
def hcl(f: Fake) -> list[Variant]:
    out = []
    for tpl in ('secret = "{}"',
                'variable "db_password" {{\n  type    = string\n  default = "{}"\n}}',
                'resource "aws_db_instance" "main" {{\n  username = "admin"\n  password = "{}"\n}}',
                '  token    = "{}"\n  org      = "acme"',
                'client_secret = "{}"',
                'locals {{\n  api_key = "{}"\n}}'):
        pw = f.pick([f.pw(), f.opaque(36)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("code", "config-formats")
def config_formats(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("database:\n  host: db.internal\n  password: {}\n",
                "[database]\nuser = \"app\"\npassword = '{}'\n",
                "spring:\n  datasource:\n    password: \"{}\"\n",
                "mail.smtp.password={}\nmail.smtp.user=noreply",
                "<connection>\n  <user>app</user>\n  <pass>{}</pass>\n</connection>",
                "auth:\n  token: {}\n",
                "[smtp]\npass={}\n",
                "credentials:\n  - user: ci\n    secret: {}\n"):
        pw = f.pick([f.pw(), f.opaque(36)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("code", "shells")
def shells(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("set -gx OPENAI_API_KEY {}",
                'setx API_TOKEN "{}"',
                "set DB_PASSWORD={}",
                'declare -x GITHUB_TOKEN="{}"',
                "launchctl setenv NPM_TOKEN {}",
                '[Environment]::SetEnvironmentVariable("API_KEY", "{}", "User")',
                'Environment="DB_PASSWORD={}"',
                "ENV API_SECRET {}",
                "ARG NPM_TOKEN={}",
                "$ env | grep -i key\nSTRIPE_API_KEY={}\nKEYBOARD=us",
                "export TF_VAR_db_password='{}'",
                "$cred = ConvertTo-SecureString \"{}\" -AsPlainText -Force"):
        pw = f.pick([f.pw(), f.opaque(36)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("code", "stacktrace-locals")
def stacktrace(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("psycopg2.OperationalError: connection failed\n(connect kwargs: {{'host': 'db', 'user': 'app', 'password': '{}'}})",
                "│ │   password = '{}'                                   │ │\n│ │       user = 'jane'                                   │ │",
                "    def login(user, password):\n>       raise AuthError(user)\nE       AuthError: jane\n\npassword   = '{}'\nuser       = 'jane'",
                "E       AssertionError: assert login(user='jane', password='{}') is True",
                "Caused by: Credentials{{username='svc', password='{}'}}",
                "Settings(debug=False, api_key='{}', region='eu-west-1')",
                "panic: bad config main.Config{{User:\"app\", Password:\"{}\", Port:5432}}",
                "Config {{ host: \"db\", password: \"{}\", port: 5432 }}",
                "{{ user: 'jane', password: '{}', iat: 1715678467 }}",
                "TypeError: connect() got an unexpected keyword argument 'passwd' in connect(host='db', passwd='{}')"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("code", "hmac-jwt-key")
def hmac_keys(f: Fake) -> list[Variant]:
    out = []
    for tpl in ('hmac.new(b"{}", body, hashlib.sha256).hexdigest()',
                "HMAC_KEY = '{}'",
                'signing_key = "{}"',
                "const sig = crypto.createHmac('sha256', '{}').update(body).digest('hex');",
                'token = jwt.encode(payload, "{}", algorithm="HS256")',
                "jwt.sign({{ sub: user.id }}, '{}', {{ expiresIn: '1h' }})",
                'claims = jwt.decode(token, "{}", algorithms=["HS256"])',
                'mac := hmac.New(sha256.New, []byte("{}"))',
                'new SecretKeySpec("{}".getBytes(UTF_8), "HmacSHA256")',
                "OpenSSL::HMAC.hexdigest('SHA256', '{}', data)",
                "$sig = hash_hmac('sha256', $payload, '{}');",
                "app.secret_key = '{}'",
                "app.config['SECRET_KEY'] = '{}'",
                'ENCRYPTION_KEY = bytes.fromhex("{}")',
                "fernet = Fernet(b'{}')"):
        if "fromhex" in tpl:
            pw = f.hex(64)
        elif "Fernet" in tpl:
            pw = base64.urlsafe_b64encode(f.rng.randbytes(32)).decode()
        else:
            pw = f.pick([f.pw(), f.opaque(32), f.hex(40)])
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("code", "lone-key")
def lone_key(f: Fake) -> list[Variant]:
    out = []
    for tpl, gen in (('{{"key": "{}"}}', lambda: f.opaque(32)),
                     ('{{"id": 7, "name": "ci", "key": "{}", "created": "2024-05-14"}}', lambda: f.hex(40)),
                     ('  "Key": "{}",', lambda: f.b64(32)),
                     ("key: {}\n", lambda: f.opaque(40)),
                     ("[[keys]]\nkey = \"{}\"", lambda: f.opaque(32)),
                     ("License key: {}", lambda: "-".join(f.chars("ABCDEFGHJKLMNPQRSTUVWXYZ23456789", 5) for _ in range(5)))):
        val = gen()
        out.append((tpl.format(val), (val,)))
    return out


@kind("code", "jwk")
def jwk(f: Fake) -> list[Variant]:
    out = []
    for _ in range(2):
        d, p, q = f.b64url(256), f.b64url(128), f.b64url(128)
        key = {"kty": "RSA", "kid": "k1", "n": f.b64url(256), "e": "AQAB", "d": d, "p": p, "q": q,
               "dp": f.b64url(128), "dq": f.b64url(128), "qi": f.b64url(128)}
        out.append((json.dumps(key, indent=2), (d, p, q)))
    d = f.b64url(32)
    out.append((json.dumps({"keys": [{"kty": "EC", "crv": "P-256", "x": f.b64url(32), "y": f.b64url(32), "d": d}]}), (d,)))
    k = f.b64url(32)
    out.append((json.dumps({"kty": "oct", "alg": "HS256", "k": k}), (k,)))
    d = f.b64url(32)
    out.append((json.dumps({"kty": "OKP", "crv": "Ed25519", "x": f.b64url(32), "d": d}), (d,)))
    return out


@kind("code", "prose-password")
def prose_password(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("The staging db password is {} — don't share it.",
                "password was `{}` until the rotation",
                "Login: admin / {}",
                "creds for the router: admin:{}",
                "The new passphrase is \"{}\".",
                "API key -> {}",
                "my token is {}, it expires tomorrow",
                "Use {} as the password for the test account."):
        pw = f.pw() if "token" not in tpl and "API" not in tpl else f.opaque(32)
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("code", "prose-qualified-password")
def prose_qualified_password(f: Fake) -> list[Variant]:
    """A qualifier between the name and the value, as people paste one into a prompt."""
    out = []
    for tpl in ("DB password for linking: {}",
                "the admin password for grafana is {}",
                "Password for the staging db: {} (rotate after the demo)",
                "The token for CI: {}",
                "passphrase for the deploy key is `{}`",
                "here's the password for user bob: {}"):
        pw = f.pw() if "token" not in tpl else f.opaque(32)
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("cli_password", "cli-login-token")
def cli_login_token(f: Fake) -> list[Variant]:
    """CLIs whose login takes the token as a bare argument."""
    out = []
    for tpl in ("$ wandb login {}\nwandb: Appending key for api.wandb.ai to your netrc file",
                "wandb login --relogin {}",
                "wandb login --host https://wandb.internal {}",
                "cargo login --registry internal {}",
                "vault login -no-print {}"):
        tok = f.hex(40) if "wandb" in tpl else f.opaque(32)
        out.append((tpl.format(tok), (tok,)))
    return out


@kind("cli_password", "cli-user-then-password")
def cli_user_then_password(f: Fake) -> list[Variant]:
    """A password that follows a user name or is the tool's one argument, with no name before it."""
    out = []
    for tpl in ("$ steamcmd +login {user} '{pw}' +run_app_build ../scripts/app_build.vdf +quit",
                "steamcmd +login {user} {pw} 48213 +workshop_build_item item.vdf +quit",
                "$ xcrun altool --upload-app -f build/App.ipa -t ios -u {user}@example.com -p '{pw}'",
                "xcrun altool --validate-app -f App.ipa -u {user}@example.com -p {pw}",
                "$ ansible-vault encrypt_string '{pw}' --name 'vault_db_password'",
                "ansible-vault encrypt_string --vault-id prod@prompt --name smtp_pass \"{pw}\""):
        pw = f.password(f.rng.randint(12, 20)) if "ansible" in tpl else f.opaque(16)
        out.append((tpl.format(user=f.pick(["builder", "ci_bot", "release"]), pw=pw), (pw,)))
    return out


@kind("code", "prose-credential-list")
def prose_credential_list(f: Fake) -> list[Variant]:
    """Credentials listed in a prompt: a lower-case name, a space and the value, no colon."""
    out = []
    for tpl in ("Store API creds: client id {n}, secret {a}, refresh token {b}.",
                "For the signing step use issuer user:{n}, secret {h}.",
                "the webhook secret {a} goes in the dashboard, the deploy token {b} in CI"):
        a, b, h = f.opaque(24), f.opaque(32), f.hex(40)
        text = tpl.format(n=f.rng.randint(10000, 99999), a=a, b=b, h=h)
        out.append((text, tuple(v for v in (a, b, h) if v in text)))
    return out


# =============================================================================================
# Cookies


@kind("cookie", "curl-cookie")
def curl_cookie(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("$ curl -b 'sessionid={}' https://app.internal/api/me",
                "curl --cookie \"session={}; theme=dark\" https://shop.example.com/cart",
                "curl -b PHPSESSID={} http://intranet/admin.php",
                "curl 'https://github.com/settings' -H 'cookie: _gh_sess={}; logged_in=yes'",
                "wget --header=\"Cookie: JSESSIONID={}\" https://legacy.internal/report",
                "http GET https://app.internal/api Cookie:connect.sid={}"):
        val = f.pick([f.b64url(32), f.opaque(40), f.hex(32)])
        out.append((tpl.format(val), (val,)))
    return out


@kind("cookie", "cookie-header")
def cookie_header(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("GET /dashboard HTTP/1.1\nHost: app.internal\nCookie: theme=dark; lang=en; session={}\n",
                "cookie: csrftoken={}; sessionid={}",
                "> Cookie: laravel_session={}; XSRF-TOKEN={}",
                "requests.get(url, cookies={{\"sessionid\": \"{}\"}})",
                "session.cookies.set('auth_token', '{}', domain='.example.com')",
                "document.cookie = \"token={}; path=/; secure\";",
                "res.cookie('sid', '{}', {{ httpOnly: true }});",
                "Cookie: __Secure-next-auth.session-token={}"):
        vals = tuple(f.pick([f.b64url(48), f.opaque(40), f.hex(40)]) for _ in range(tpl.count("{}")))
        out.append((tpl.format(*vals), vals))
    return out


@kind("cookie", "set-cookie")
def set_cookie(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("< HTTP/2 302\n< set-cookie: session={}; Path=/; HttpOnly; Secure; SameSite=Lax\n< location: /home",
                "Set-Cookie: laravel_session={}; expires=Tue, 14-May-2024 11:21:07 GMT; Max-Age=7200; path=/; httponly",
                "Set-Cookie: __Host-sid={}; Path=/; Secure\nSet-Cookie: lang=en; Path=/",
                '"set-cookie": ["_session_id={}; path=/; HttpOnly"]',
                "set-cookie: remember_token={}; Expires=Wed, 21 Oct 2025 07:28:00 GMT"):
        val = f.pick([f.b64url(48), f.opaque(40), f.hex(64)])
        out.append((tpl.format(val), (val,)))
    return out


@kind("cookie", "cookie-jar")
def cookie_jar(f: Fake) -> list[Variant]:
    out = []
    a, b = f.b64url(40), f.hex(32)
    out.append(("$ cat cookies.txt\n# Netscape HTTP Cookie File\n# https://curl.se/docs/http-cookies.html\n"
                f".example.com\tTRUE\t/\tTRUE\t1718000000\tsessionid\t{a}\n"
                f"#HttpOnly_app.internal\tFALSE\t/\tFALSE\t0\tPHPSESSID\t{b}\n", (a, b)))
    a = f.opaque(40)
    out.append((f"github.com\tFALSE\t/\tTRUE\t1747000000\tuser_session\t{a}", (a,)))
    a = f.b64url(48)
    out.append((json.dumps([{"domain": ".example.com", "name": "sessionid", "value": a, "path": "/",
                             "httpOnly": True, "secure": True}], indent=2), (a,)))
    a = f.opaque(40)
    out.append((json.dumps({"cookies": [{"name": "auth", "value": a, "domain": "localhost", "path": "/",
                                         "expires": -1, "httpOnly": True}], "origins": []}), (a,)))
    return out


# =============================================================================================
# Key material


def _pem(label: str, body: str, dashes: int = 5) -> str:
    d = "-" * dashes
    return f"{d}BEGIN {label}{d}\n{body}\n{d}END {label}{d}"


@kind("key_material", "pem-header-variants")
def pem_variants(f: Fake) -> list[Variant]:
    out = []
    for label, body_kind, dashes, lower in (("RSA PRIVATE KEY", "rsa", 4, False), ("PRIVATE KEY", "pkcs8", 6, False),
                                            ("rsa private key", "rsa", 5, True), ("EC PRIVATE KEY", "ec", 5, False),
                                            ("OPENSSH PRIVATE KEY", "openssh", 5, False),
                                            ("ENCRYPTED PRIVATE KEY", "encrypted", 5, False),
                                            ("DSA PRIVATE KEY", "rsa", 5, False)):
        body = f.key_body(body_kind, 70 if body_kind == "openssh" else 64)
        pem = _pem(label, body, dashes)
        if lower:
            pem = _pem(label, "@", dashes).lower().replace("@", body)
        out.append((f"$ cat key.pem\n{pem}\n", (body.split("\n")[1], body.split("\n")[-2])))
    body = f.key_body("rsa")
    pem = ("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC," + f.hex(32).upper()
           + "\n\n" + body + "\n-----END RSA PRIVATE KEY-----")
    out.append((pem, (body.split("\n")[2],)))
    body = f.key_body("rsa")
    out.append(("---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key-20240514\"\n" + body
                + "\n---- END SSH2 ENCRYPTED PRIVATE KEY ----", (body.split("\n")[3],)))
    body = f.key_body("pkcs8")
    out.append((_pem("PRIVATE KEY", body).replace("\n", "\r\n"), (body.split("\n")[4],)))
    body = f.key_body("ec")
    out.append(("tls:\n  key: |\n    " + _pem("EC PRIVATE KEY", body).replace("\n", "\n    ") + "\n", (body.split("\n")[0][10:], body.split("\n")[1])))
    pgp = f.pgp_body()
    out.append(("$ gpg --export-secret-keys --armor jane@example.com\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
                + pgp + "\n-----END PGP PRIVATE KEY BLOCK-----\n", (pgp.split("\n")[3], pgp.split("\n")[-2])))
    return out


@kind("key_material", "pem-one-line")
def pem_one_line(f: Fake) -> list[Variant]:
    out = []
    for style in ("spaces", "escaped", "double-escaped", "crlf-escaped", "none", "env-quoted"):
        body = f.key_body("pkcs8")
        lines = body.split("\n")
        head, tail = "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----"
        if style == "spaces":
            text = f"{head} {' '.join(lines)} {tail}"
        elif style == "escaped":
            text = 'PRIVATE_KEY="' + head + "\\n" + "\\n".join(lines) + "\\n" + tail + '\\n"'
        elif style == "double-escaped":
            text = '{"body": "{\\"key\\": \\"' + head + "\\\\n" + "\\\\n".join(lines) + "\\\\n" + tail + '\\"}"}'
        elif style == "crlf-escaped":
            text = '"signingKey": "' + head + "\\r\\n" + "\\r\\n".join(lines) + "\\r\\n" + tail + '"'
        elif style == "none":
            text = head + "".join(lines) + tail
        else:
            text = "export JWT_PRIVATE_KEY='" + head + "\n" + body + "\n" + tail + "'"
        out.append((text, (lines[1], lines[len(lines) // 2], lines[-2])))
    return out


@kind("key_material", "key-body-headerless")
def key_body(f: Fake) -> list[Variant]:
    out = []
    for body_kind in ("rsa", "pkcs8", "ec", "encrypted"):
        body = f.key_body(body_kind)
        lines = body.split("\n")
        out.append((f"here is the key body you asked for:\n{body}\n", tuple(lines[i] for i in range(0, len(lines) - 1, 5))))
    body = f.key_body("openssh", 70)
    lines = body.split("\n")
    out.append((body + "\n-----END OPENSSH PRIVATE KEY-----", (lines[0], lines[2])))
    raw = "".join(f.key_body("pkcs8").split("\n"))
    out.append((f"PRIVATE_KEY={raw}", (raw,)))
    raw = "".join(f.key_body("ec").split("\n"))
    out.append((json.dumps({"signing": {"alg": "ES256", "pem": raw}}), (raw,)))
    body = f.key_body("rsa")
    lines = body.split("\n")
    cut = "\n".join(lines[9:])
    out.append((f"{cut}\n-----END RSA PRIVATE KEY-----\n$ chmod 600 id_rsa", tuple(lines[i] for i in range(9, len(lines) - 1, 3))))
    pgp = f.pgp_body()
    lines = pgp.split("\n")
    tail = "\n".join(lines[10:])
    out.append((f"{tail}\n-----END PGP PRIVATE KEY BLOCK-----", (lines[12], lines[-2])))
    return out


@kind("key_material", "jwt-split")
def jwt_split(f: Fake) -> list[Variant]:
    out = []
    for style in ("dot-lines", "wrap80", "js-concat", "js-concat-mid", "py-implicit", "bearer-wrapped", "backslash"):
        tok = f.jwt()
        h, p, s = tok.split(".")
        if style == "dot-lines":
            text = f"token:\n{h}\n.{p}\n.{s}"
        elif style == "wrap80":
            text = "Authorization: Bearer " + "\n".join(tok[i : i + 80] for i in range(0, len(tok), 80))
        elif style == "js-concat":
            text = f'const token = "{h}." +\n  "{p}." +\n  "{s}";'
        elif style == "js-concat-mid":
            cut = [0, 17, 61, 95, len(tok)]
            text = "const jwt = " + " +\n  ".join(f"'{tok[a:b]}'" for a, b in zip(cut, cut[1:], strict=False)) + ";"
        elif style == "py-implicit":
            text = f'TOKEN = (\n    "{h}."\n    "{p}."\n    "{s}"\n)'
        elif style == "bearer-wrapped":
            text = f'{{"Authorization": "Bearer {h}.{p}.{s}"}}'
        else:
            text = f"curl -H 'Authorization: Bearer {h}.\\\n{p}.{s}' https://api.internal"
        out.append((text, (tok[12:44], p[:40], s)))
    return out


@kind("key_material", "base64-wrapped")
def base64_wrapped(f: Fake) -> list[Variant]:
    out = []
    env = f"DB_HOST=db.internal\nDB_PASSWORD={f.pw()}\n"
    out.append((f"$ echo '{b64(env)}' | base64 -d > .env", (b64(env),)))
    env = f"STRIPE_SECRET_KEY={f.stripe()}"
    out.append((f"ENV_FILE_B64={b64(env)}", (b64(env),)))
    blob = b64(json.dumps({"username": "svc", "password": f.pw()}))
    out.append((json.dumps({"name": "creds", "data": blob}), (blob,)))
    blob = b64(json.dumps({"api_key": f.opaque(32), "region": "eu"}))
    out.append((f"config: {blob}", (blob,)))
    blob = b64(f"postgres://app:{f.pw()}@db:5432/shop")
    out.append((f'"connection": "{blob}"', (blob,)))
    pem = _pem("RSA PRIVATE KEY", f.key_body("rsa"))
    blob = b64(pem)
    out.append((f"SSH_KEY_B64={blob}", (blob[:200], blob[-60:])))
    blob = b64(f"GITHUB_TOKEN={f.github()}\n")
    out.append((f"echo {blob} | base64 --decode >> $GITHUB_ENV", (blob,)))
    return out


# =============================================================================================
# <private> tag variants


@kind("private_tag", "tag-spacing-case")
def tag_spacing(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("before < private >{}</ private > after", "before <private >{}</private > after",
                "before <Private>{}</PRIVATE> after", "before <PRIVATE\n>{}</private\n> after",
                "before <private\treason='x'>{}</private> after", "before < /private><private>{}</ private> after"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("private_tag", "tag-self-closing")
def tag_self_closing(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("before <private>{}<private/> after", "before <private>{}</private/> after",
                "before <private/>{}", "before <private>{}<private /> after", "before <private>{}</private /> after"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("private_tag", "tag-escaped")
def tag_escaped(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("before &lt;private&gt;{}&lt;/private&gt; after", '{{"text": "before \\u003cprivate\\u003e{}\\u003c/private\\u003e after"}}',
                "before &#60;private&#62;{}&#60;/private&#62; after", "before %3Cprivate%3E{}%3C%2Fprivate%3E after",
                "before \\x3cprivate\\x3e{}\\x3c/private\\x3e after", '"before \\\\u003cprivate\\\\u003e{}\\\\u003c/private\\\\u003e after"',
                "before &lt;PRIVATE&gt;{}&lt;/PRIVATE&gt; after", "before &#x3c;private&#x3e;{}&#x3c;/private&#x3e; after"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("private_tag", "tag-order")
def tag_order(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("before </private>{}<private> after", "note: </private> {} <private>",
                "before </private>{}</private> after"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


@kind("private_tag", "tag-fullwidth")
def tag_fullwidth(f: Fake) -> list[Variant]:
    out = []
    for tpl in ("before ＜private＞{}＜/private＞ after", "before ﹤private﹥{}﹤/private﹥ after",
                "before ＜private>{}</private＞ after", "before ＜ＰＲＩＶＡＴＥ＞{}＜／ＰＲＩＶＡＴＥ＞ after",
                "before 〈private〉{}〈/private〉 after"):
        pw = f.pw()
        out.append((tpl.format(pw), (pw,)))
    return out


# =============================================================================================
# Provider tokens with prefixes the first corpus did not have


@kind("provider_token", "more-prefixes")
def more_prefixes(f: Fake) -> list[Variant]:
    gens = (
        lambda: "sk-ant-admin01-" + f.mixed(B64URL, 93) + "AA",
        lambda: "glrt-" + f.mixed(ALNUM + "_-", 20),
        lambda: "gldt-" + f.mixed(ALNUM + "_-", 20),
        lambda: "nfp_" + f.mixed(ALNUM, 36),
        lambda: "sbp_" + f.hex(40),
        lambda: "lin_api_" + f.mixed(ALNUM, 40),
        lambda: "pplx-" + f.mixed(ALNUM, 48),
        lambda: "xoxe.xoxp-1-" + f.mixed(ALNUM, 140),
        lambda: "rubygems_" + f.hex(48),
        lambda: "hvb." + f.mixed(B64URL, 120),
        lambda: "dckr_oat_" + f.mixed(B64URL, 32),
        lambda: "pscale_pw_" + f.mixed(ALNUM + "_", 43),
        lambda: "tskey-auth-" + f.mixed(ALNUM, 12) + "CNTRL-" + f.mixed(ALNUM, 32),
        lambda: "sk-proj-" + f.mixed(B64URL, 156),
        lambda: "sq0csp-" + f.mixed(B64URL, 43),
        lambda: "figd_" + f.mixed(B64URL, 40),
    )
    out = []
    for i, gen in enumerate(gens):
        tok = gen()
        tpl = ("authenticated with {} (scope=repo)", "TOKEN={}", '{{"value": "{}"}}', "Found {} in logs")[i % 4]
        out.append((tpl.format(tok), (tok,)))
    return out


def cases(fake: Fake) -> list[Case]:
    out = []
    for family, name, fn in REGISTRY:
        for i, (text, secrets) in enumerate(fn(fake)):
            out.append(Case(f"{name}-{i}", family, name, text, tuple(s for s in secrets if s)))
    return out


__all__ = ["HEX", "cases"]
