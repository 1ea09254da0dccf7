"""Redaction: hide private blocks, secrets and credentials in text before anything is stored.

Pure, deterministic, idempotent, stdlib-only: it runs in the 150 ms hook on every tool output.
In order: ``<private>…</private>`` → ``[private]``; known secret shapes →
``[redacted:KIND]``; generic credentials (URL passwords, auth headers, secret-named keys and
assignments) → ``[redacted]``, keeping the name and the structure visible. Markers are never
matched again: every rule skips values that start with ``[redacted`` or ``[private]``.

Why it is shaped like this: ``re`` scans for a regex's leading literal in C, but an alternation
of different first characters enters the matcher at every candidate, ten times slower. So there
is one regex per rare "anchor" letter (the letters before it checked by a look-behind), shapes
and keywords share it, and it all runs on UTF-8 bytes, where ``lower()`` and ``translate()``
are cheap and keep offsets (bench/redact.py measures it).
"""

from __future__ import annotations

import binascii
import bisect
import re

from aletheia.unescape import decoded_lines

TYPE_CHECKING = False  # the hook path: importing typing costs ~2 ms
if TYPE_CHECKING:
    from typing import AnyStr

__all__ = ["KINDS", "redact", "redact_obj"]


_PATTERNS: list[bytes | str] = []  # every _Lazy pattern, for the compiled-pattern cache


class _Lazy:
    """A regex compiled on its first use.  The hook imports this module on every host event,
    and compiling every pattern up front costs it ~2.5 ms; most of them serve only text that
    holds a key name or a shape.  The first use takes the compiled program from the cache
    (``aletheia.regex_cache``: compiling the ones an ordinary tool output meets costs ~8 ms).
    After the first use the compiled methods are plain attributes, so a hot loop pays nothing
    extra."""

    def __init__(self, pattern: bytes | str) -> None:
        self._pattern = pattern
        _PATTERNS.append(pattern)

    def __getattr__(self, name: str) -> object:
        from aletheia.regex_cache import compiled

        rx = compiled(self._pattern, _PATTERNS)
        for method in ("match", "search", "fullmatch", "finditer", "findall", "sub"):
            setattr(self, method, getattr(rx, method))
        return getattr(rx, name)


def _lazy(pattern: AnyStr) -> re.Pattern[AnyStr]:
    return _Lazy(pattern)  # type: ignore[return-value]  # it answers every method used here

KINDS: tuple[str, ...] = (
    "anthropic",
    "openai",
    "openrouter",
    "xai",
    "groq",
    "stripe",
    "github",
    "gitlab",
    "grafana",
    "npm",
    "slack",
    "slack_webhook",
    "aws_access_key_id",
    "aws_secret_access_key",
    "google_api_key",
    "google_oauth_secret",
    "jwt",
    "private_key",
    "ssh_private_key",
    "huggingface",
    "twilio",
    "sendgrid",
    "mailgun",
    "digitalocean",
    "discord",
    "telegram",
    "shopify",
    "pypi",
    "dockerhub",
    "azure_storage",
    "heroku",
    "databricks",
    "age",
    "atlassian",
    "postman",
    "hashicorp_vault",
    "credit_card",
    "azure_client_secret",
    "google_oauth_token",
    "netlify",
    "supabase",
    "linear",
    "perplexity",
    "planetscale",
    "square",
    "tailscale",
    "base64",
    "rubygem",
    "figma",
    "prefixed_token",
    "doppler",
    "contentful",
    "airtable",
    "notion",
    "bitbucket",
    "render",
    "neon",
    "password_hash",
    "terraform_cloud",
    "newrelic",
    "pulumi",
    "mapbox",
    "bitcoin",
)

_Span = tuple[int, int, bytes]

_REDACTED = b"[redacted]"
_PRIVATE = b"[private]"
_MARKER = {kind: b"[redacted:" + kind.encode() + b"]" for kind in KINDS}

_ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_TOKEN_CHARS = frozenset(_ALNUM + b"_-")
_NAME_CHARS = frozenset(_ALNUM + b"_.-")
_NAME_CHARS_BYTES = _ALNUM + b"_.-"
_PATH_CHARS = _ALNUM + b"_.-/"
_CARD_EDGE = frozenset(_ALNUM + b"_/")


# ---------------------------------------------------------------------------------------------
# 1. <private>…</private>, case-insensitive (matched on the lowered copy), in every form a tag
#    travels in: spaces inside it, HTML and numeric entities, JSON and URL escapes, full-width
#    brackets and letters. Nesting counts; an unclosed tag hides the rest; a self-closing tag
#    closes an open block (or opens one); a close tag before any open one starts a block when
#    another tag follows (the tags were typed the wrong way round).

_TAG_OPEN = (rb"(?:<|&lt;|&#0*60;|&#x0*3c;|\\{1,2}u003c|\\x3c|%3c|\xef\xbc\x9c|\xef\xb9\xa4"
             rb"|\xe3\x80\x88)")
_TAG_CLOSE = (rb"(?:>|&gt;|&#0*62;|&#x0*3e;|\\{1,2}u003e|\\x3e|%3e|\xef\xbc\x9e|\xef\xb9\xa5"
              rb"|\xe3\x80\x89)")
_TAG_SLASH = rb"(?:/|%2f|\\/|\xef\xbc\x8f)"
_TAG_BEFORE = _lazy(_TAG_OPEN + rb"[ \t\r\n]*(" + _TAG_SLASH + rb")?[ \t\r\n]*\Z")
_TAG_ATTRIBUTES = rb"(?:[ \t\r\n]+[a-z_-]+(?:=(?:\"[^\"<>\n\[\]]{0,80}\"|'[^'<>\n\[\]]{0,80}'|[\w-]{1,40}))?){0,4}"
_TAG_AFTER = _lazy(_TAG_ATTRIBUTES + rb"[ \t\r\n]*(" + _TAG_SLASH + rb")?[ \t\r\n]*" + _TAG_CLOSE)
_TAG_WORDS = (b"private", "ｐｒｉｖａｔｅ".encode(), "ＰＲＩＶＡＴＥ".encode())


def _private_tags(low: bytes, words: tuple[bytes, ...]) -> list[tuple[int, int, str]]:
    """(start, end, "open" | "close" | "self") of each private tag, in order."""
    tags = []
    for word in words:
        i = low.find(word)
        while i >= 0:
            before = _TAG_BEFORE.search(low, max(0, i - 16), i)
            after = _TAG_AFTER.match(low, i + len(word)) if before else None
            if before and after:
                kind = "close" if before.group(1) else "self" if after.group(1) else "open"
                tags.append((before.start(), after.end(), kind))
            i = low.find(word, i + len(word))
    tags.sort()
    return tags


def _private_spans(low: bytes, words: tuple[bytes, ...] = _TAG_WORDS[:1]) -> list[tuple[int, int]]:
    """(start, end) of each outermost private block, tags included."""
    blocks: list[tuple[int, int]] = []
    start = depth = 0
    stray = -1  # a close tag seen with no block open
    for s, e, kind in _private_tags(low, words):
        if kind == "close" or kind == "self" and depth:
            if depth:
                depth -= 1
                if depth == 0:
                    blocks.append((start, e))
            elif stray >= 0:
                blocks.append((stray, e))  # </private>x</private>: the first was meant to open
                stray = -1
            else:
                stray = s
            continue
        if depth == 0:
            start = stray if stray >= 0 else s  # </private>x<private>: typed the wrong way round
            stray = -1
        depth += 1
    if depth:
        blocks.append((start, len(low)))
    return blocks


def _tag_words(data: bytes) -> tuple[bytes, ...]:
    """The spellings of "private" to look for (the full-width ones only in text that has any)."""
    return _TAG_WORDS if b"\xef" in data else _TAG_WORDS[:1]


def _without_private(spans: list[_Span], blocks: list[tuple[int, int]]) -> list[_Span]:
    """Private blocks go first: a span that starts inside one is dropped (what it matched is
    hidden anyway), and the blocks become spans themselves. Same result as hiding them before
    scanning, without building a second copy of the text."""
    starts = [s for s, _ in blocks]
    kept = []
    for span in spans:
        i = bisect.bisect_right(starts, span[0]) - 1
        if i < 0 or span[0] >= blocks[i][1]:
            kept.append(span)
    return kept + [(s, e, _PRIVATE) for s, e in blocks]


# ---------------------------------------------------------------------------------------------
# 2. Known secret shapes, from the providers' documented formats.
#    Rows: (anchor, kind, back, rest, case). The regexes are built per anchor (see "Scan plan");
#    a lowercase anchor is scanned on the lowered copy, together with the keywords of part 3,
#    so ``rest`` is written for lowercase input and ``case`` is the exact prefix the original
#    must have. ``back`` is how many characters of the token come before the anchor (checked by
#    a look-behind); a group ``v`` is the only part replaced (a webhook's URL stays visible).

_SHAPE_TABLE: tuple[tuple[bytes, str, int, bytes, bytes], ...] = (
    # sk-ant-api03-… / sk-or-v1-… / sk-proj-…, sk-… (the catch-all must look random: _mixed)
    (b"k", "anthropic", 1, rb"-(?<=sk-)(?<![\w-]sk-)ant-[\w-]{32,}", b"sk-ant-"),
    (b"k", "openrouter", 1, rb"-(?<=sk-)(?<![\w-]sk-)or-v1-[0-9a-f]{64}", b"sk-or-"),
    (b"k", "openai", 1, rb"-(?<=sk-)(?<![\w-]sk-)[\w-]{20,}", b"sk-"),
    (b"k", "stripe", 1, rb"_(?<=[rs]k_)(?<![\w-][rs]k_)(?:live|test)_[a-z0-9]{10,}", b""),
    (b"k", "mailgun", 0, rb"ey-(?<![\w-]key-)[0-9a-f]{32}(?![0-9a-z])", b"key-"),
    (b"k", "dockerhub", 2, rb"r_(?<=dckr_)(?<![\w-]dckr_)(?:pat|oat)_[\w-]{24,}", b"dckr_"),
    (b"k", "slack_webhook", 0,
     rb"\.com/(?<=hooks\.slack\.com/)(?:services|workflows|triggers)/(?P<v>[a-z0-9_/-]{20,})",
     b""),
    (b"k", "discord", 0, rb"s/(?<=webhooks/)(?P<v>\d{15,22}/[\w-]{40,100})", b""),  # + host check
    # a Teams (Office 365 connector) incoming webhook: …/IncomingWebhook/<32 hex>/<owner id>[/V2<signature>]
    (b"k", "x_value", 0, rb"/(?<=/incomingwebhook/)(?P<v>[0-9a-f]{32}/[0-9a-f]{8}-[0-9a-f-]{27}(?:/v2[\w-]{20,})?)", b""),
    # Uppercase K is rare in text: these are found from it (on the lowered copy, like "k").
    # any case, 3-6 dashes, SSH2's "---- BEGIN … ----"; the block itself: _shape_span
    (b"k", "private_key", 0, rb"ey(?<=private key)(?: block)?[ ]?-{3,6}", b""),
    # key bodies without their header: OpenSSH's magic, PKCS#8 PBES2 (see also the "A" rows)
    (b"k", "x_openssh_body", 14, rb"tdje(?<=b3blbnnzac1yzxktdje)", b"b3BlbnNzaC1rZXktdjE"),
    (b"k", "x_der", 10, rb"qhkig9w0bbq(?<=mii[a-z0-9+/]{5}bgkqhkig9w0bbq)", b"MII"),
    (b"k", "x_jwk", 0, rb"ty[\"'][ \t]*:", b""),  # a JSON Web Key: its private members
    (b"k", "tailscale", 2, rb"ey-(?<=tskey-)(?<![\w-]tskey-)(?:auth|client|api|scim|webhook)-[\w-]{20,}",
     b"tskey-"),
    (b"k", "ssh_private_key", 11, rb"ey-file-(?<=putty-user-key-file-)\d",
     b"PuTTY-User-Key-File-"),
    (b"k", "azure_storage", 0,
     rb"ey=(?:(?<=accountkey=)|(?<=sharedaccesskey=))(?P<v>[a-z0-9+/]{20,}={0,2})", b""),
    (b"k", "age", 11, rb"ey-1(?<=age-secret-key-1)[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{58}",
     b"AGE-SECRET-KEY-1"),
    (b"k", "twilio", 1, rb"(?<![\w-]sk)[0-9a-f]{32}(?![0-9a-z])", b"SK"),
    (b"k", "heroku", 2, rb"u-(?<=hrku-)(?<![\w-]hrku-)[\w-]{20,}", b"HRKU-"),
    # Mapbox's secret tokens (sk.eyJ…; pk.eyJ… are public, left alone)
    (b"k", "mapbox", 1, rb"\.(?<=sk\.)(?<![\w.-]sk\.)eyj[a-z0-9_-]{40,}\.[a-z0-9_-]{20,}", b"sk."),
    (b"k", "postman", 3, rb"-(?<=pmak-)[0-9a-f]{24}-[0-9a-f]{34}", b"PMAK-"),
    (b"g", "rubygem", 4, rb"ems_(?<=rubygems_)(?<![\w-]rubygems_)[a-f0-9]{48}", b"rubygems_"),
    (b"g", "figma", 2, rb"d_(?<=figd_)(?<![\w-]figd_)[\w-]{40,}", b"figd_"),
    (b"g", "x_positional_call", 0, rb"etconnection\(", b""),  # DriverManager.getConnection(url, user, PW)
    # SonarQube's token as its login (-Dsonar.login=…, sonar-project.properties): 40 hex, or led
    # by squ_/sqp_/sqa_ (a user name there, with sonar.password, has neither shape)
    (b"g", "x_value", 0, rb"in(?<=sonar\.login)[\"']?[ \t]*[=:][ \t]*[\"']?(?P<v>(?:sq[upa]_)?[0-9a-f]{40})(?![0-9a-z])", b""),
    (b"g", "x_cred_pair", 2, rb"in[ \t]*:[ \t]*(?=[^\s/:]+[ \t]*[/:][ \t]*\S)", b""),  # Login: user / PASSWORD
    # "log in with admin / PASSWORD", "login as root:PASSWORD"
    (b"g", "x_cred_pair", 2, rb"[ \t]?in(?:(?<=log[ \t]in)|(?<=login))[ \t]+(?:with|as|using)[ \t]+(?=[^\s/:]+[ \t]*[/:][ \t]*\S)", b""),
    (b"g", "x_login", 2, rb"in(?<=cargo login|vault login|wandb login)[ \t]+", b""),
    (b"g", "x_plus_login", 3, rb"in(?<=\+login)[ \t]+", b""),  # steamcmd +login USER PASSWORD
    (b"g", "x_vault_string", 13, rb"(?<=encrypt_string)[ \t]+", b""),  # ansible-vault encrypt_string X
    (b"g", "github", 0, rb"h(?<![\w-]gh)[pousr]_[a-z0-9]{36,255}", b"gh"),
    # the same token wrapped onto a second line (copied from a narrow terminal): _x_wrapped_github
    # grafana-cli admin reset-admin-password X with no prompt before it (a note, a README, a script)
    (b"g", "x_secret_argument", 0, rb"rafana(?:-cli)?[ \t]+admin[ \t]+reset-admin-password[ \t]", b""),
    (b"g", "x_wrapped_github", 0, rb"h(?<![\w-]gh)[pousr]_[a-z0-9]{4,35}(?=\r?\n[a-z0-9])", b"gh"),
    (b"g", "github", 0, rb"ithub_pat_(?<![\w-]github_pat_)[a-z0-9_]{22,255}", b"github_pat_"),
    (b"g", "gitlab", 0,
     rb"l(?<![\w-]gl)(?:pat|ptt|dt|rt|cbt|soat|oas|imt|ffct|agent)-[\w-]{20,}(?:\.[\w-]+)*", b"gl"),
    (b"g", "grafana", 0,
     rb"l(?<![\w-]gl)(?:sa_[a-z0-9]{32}_[0-9a-f]{8}|c_[a-z0-9+/]{32,}={0,2})", b"gl"),
    (b"g", "groq", 0, rb"sk_(?<![\w-]gsk_)[a-z0-9]{48,56}(?![a-z0-9])", b"gsk_"),
    (b"g", "google_oauth_secret", 0, rb"ocspx-[\w-]{24,40}", b"GOCSPX-"),
    (b"g", "sendgrid", 1, rb"\.(?<![\w-]sg\.)[\w-]{22}\.[\w-]{43}", b"SG."),
    # a Kubernetes Secret: every value of its data map; `kubectl get secret … | base64 -d`: its output
    # (also "creds are admin/PASSWORD")
    (b"cr", "x_cred_pair", 0,
     rb"eds?(?![\w-])(?:[^\n:\"'{},=]{0,40}:|[ \t]+(?:are|is|were))[ \t]*(?=[^\s/:]+[ \t]*[/:][ \t]*\S)", b""),
    # Notion's internal integration secret (secret_ and 43 letters and digits)
    (b"cr", "notion", 2, rb"et_(?<=secret_)(?<![\w-]secret_)[a-z0-9]{43}(?![a-z0-9])", b"secret_"),
    (b"cr", "x_k8s_secret", 2, rb"et(?<=kind: secret)(?![\w-])", b""),
    (b"cr", "x_k8s_secret", 2, rb"et(?<=\"kind\": \"secret)\"", b""),
    (b"cr", "x_get_secret", 2, rb"et(?<=get secret)s?[ \t]", b""),
    (b"x", "slack", 0,
     rb"(?<![\w-]x)(?:ox[abeoprs](?:\.xox[bp])?-[a-z0-9-]{10,}|app-\d-[a-z0-9-]{10,})", b"x"),
    (b"x", "xai", 0, rb"ai-(?<![\w-]xai-)[a-z0-9]{70,}", b"xai-"),
    # Bitwarden's session key exported by hand (export BW_SESSION="…", as bw unlock tells one to)
    (b"x", "x_value", 0, rb"port(?<=export)[ \t]+bw_session=[\"']?(?P<v>[a-z0-9+/]{20,}={0,2})(?![\w+/=])", b""),
    (b"h", "stripe", 1, rb"sec_(?<=whsec_)(?<![\w-]whsec_)[a-z0-9]{24,}", b"whsec_"),
    (b"h", "x_http_basic", 0, rb"ttp-basic\.[\w.-]+[ \t]", b""),  # poetry/composer config
    (b"h", "x_auth_pair", 0, rb"(?<=auth)[ \t]*=[ \t]*[(\[][ \t]*(?=[bru]?[\"'])", b""),  # auth=("user", PASSWORD)
    (b"h", "x_hmac", 0, rb"mac(?:\.new|\.hexdigest|\.digest)?\(", b""),  # hmac.new(b"key", …)
    (b"h", "x_cookie_object", 0, rb"ttponly[\"'][ \t]*:", b""),  # a cookie exported as JSON
    (b"h", "x_thin", 1, rb"in:(?<=thin:)[\w$#]+/(?P<v>[^\s/@\"']{3,})@", b""),  # jdbc:oracle:thin:u/p@
    (b"h", "huggingface", 0, rb"f_(?<![\w-]hf_)[a-z0-9]{30,40}(?![a-z0-9])", b"hf_"),
    (b"h", "hashicorp_vault", 0, rb"v(?<![\w-]hv)[sb]\.[\w-]{90,}", b"hv"),
    (b"p", "x_positional_call", 0, rb"do\((?<=[^\w]pdo\()", b""),  # new PDO(dsn, user, PASSWORD)
    (b"p", "x_sqlplus", 3, rb"lus(?<=sqlplus)(?<![\w-]sqlplus)[ \t]", b""),
    (b"p", "x_sqlplus", 3, rb"(?<=expdp|impdp)(?<![\w-]expdp)(?<![\w-]impdp)[ \t]", b""),  # Data Pump
    (b"p", "x_pgpass", 1, rb"gpass(?<=\.pgpass)", b""),
    (b"p", "x_secret_argument", 4, rb"assphrase(?<=wpa_passphrase)[ \t]", b""),  # wpa_passphrase SSID X
    (b"p", "x_unseal", 0, rb"erator[ \t]+unseal[ \t]+(?<=vault operator unseal )", b""),  # vault operator unseal KEY
    # Azure's key lists: {"keyName": "key1", "permissions": "FULL", "value": …} (az storage
    # account keys list and the like; found from the "k" every scan reads already)
    (b"k", "x_key_list", 0, rb"eyname\"(?<=\"keyname\")[ \t]*:", b""),
    # Neon's generated role passwords (npg_ and 12+ letters and digits), printed bare
    (b"p", "neon", 1, rb"g_(?<=npg_)(?<![\w-]npg_)[a-z0-9]{12,64}(?![\w-])", b"npg_"),
    (b"p", "x_mkpasswd", 0, rb"asswd(?<=openssl passwd)[ \t]", b""),
    (b"p", "x_mkpasswd", 0, rb"asswd(?<=mkpasswd)[ \t]", b""),
    (b"p", "x_value", 1, rb":(?<=[ \t]/p:)(?P<v>[^\s\"']{3,})", b""),  # xfreerdp /p:PASSWORD
    # the ftp client's "user NAME PASSWORD" at its prompt (ftp> user bob X)
    (b"p", "x_value", 0, rb">(?<=ftp>)[ \t]+user[ \t]+[^\s\[]+[ \t]+(?P<v>[^\s\[]{3,256})", b""),
    (b"p", "x_plaintext", 0, rb"laintext(?<=-asplaintext)", b""),  # ConvertTo-SecureString "…" -AsPlainText
    # rabbitmqctl change_password NAME X with no prompt before it (its add_user: _ARGUMENT_USER)
    (b"p", "x_argument_command", 0, rb"assword(?<=change_password)[ \t]", b""),
    # Doppler: dp.st.<config>.…, dp.pt.…, dp.ct.…, dp.sa.…, dp.scim.…, dp.audit.…
    (b"p", "doppler", 1, rb"\.(?<=dp\.)(?<![\w.-]dp\.)(?:st|pt|ct|sa|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?"
     rb"[a-z0-9]{40,44}(?![a-z0-9])", b"dp."),
    (b"p", "contentful", 2, rb"at-(?<=cfpat-)(?<![\w-]cfpat-)[\w-]{43}(?![\w-])", b"CFPAT-"),
    (b"p", "airtable", 0, rb"at(?<![\w-]pat)[a-z0-9]{14}\.[0-9a-f]{64}(?![0-9a-z])", b"pat"),
    (b"p", "netlify", 2, rb"_(?<=nfp_)(?<![\w-]nfp_)[a-z0-9]{36,}", b"nfp_"),
    (b"p", "supabase", 2, rb"_(?<=sbp_)(?<![\w-]sbp_)[a-f0-9]{40}", b"sbp_"),
    (b"p", "linear", 5, rb"i_(?<=lin_api_)(?<![\w-]lin_api_)[a-z0-9]{40}", b"lin_api_"),
    (b"p", "pulumi", 0, rb"ul-(?<![\w-]pul-)[a-f0-9]{40}(?![a-z0-9])", b"pul-"),
    (b"p", "perplexity", 0, rb"plx-(?<![\w-]pplx-)[a-z0-9]{40,}", b"pplx-"),
    (b"p", "planetscale", 0, rb"scale_(?<![\w-]pscale_)(?:pw|tkn|oauth)_[\w.-]{32,}", b"pscale_"),
    (b"p", "square", 5, rb"-(?<=sq0atp-|sq0csp-)[\w-]{22,}", b""),
    (b"p", "databricks", 2, rb"i(?<=dapi)(?<![\w-]dapi)[0-9a-f]{32}(?:-\d)?(?![\w])", b"dapi"),
    (b"p", "npm", 1, rb"m_(?<=npm_)(?<![\w-]npm_)[a-z0-9]{36}(?![a-z0-9])", b"npm_"),
    (b"p", "digitalocean", 2, rb"_v1_(?<=dop_v1_)(?<![\w-]dop_v1_)[0-9a-f]{64}", b"dop_v1_"),
    (b"h", "shopify", 1,
     rb"p[acps][acst]_(?<=shp(?:at|ca|pa|ss)_)(?<![\w-]shp(?:at|ca|pa|ss)_)[0-9a-f]{32}", b"shp"),
    # Uppercase anchors, scanned on the original bytes.
    # DER private keys in base64 without their PEM header: SEQUENCE { INTEGER 0|1 …
    (b"A", "x_der", 8, rb"[ADz](?<=MII[A-Za-z0-9+/]{3}IBA[ADz])", b""),
    (b"A", "x_der", 4, rb"gE[AB](?<=MI[E-H][A-Za-z0-9+/]AgE[AB])", b""),
    (b"A", "x_der", 4, rb"Q[A-H](?<=M[A-Za-z0-9+/]{2}CAQ[A-H])", b""),
    (b"A", "x_twilio_pair", 0, rb"C[0-9a-f]{32}(?![0-9A-Za-z])", b""),  # an account SID, then its token
    (b"A", "aws_access_key_id", 0,
     rb"(?<![A-Za-z0-9+/_-]A)(?:KIA|SIA|BIA|CCA)[A-Z2-7]{16}(?![A-Za-z0-9])", b""),
    (b"rnd_", "render", 0, rb"(?<![\w-]rnd_)[a-z0-9]{32}(?![\w-])", b"rnd_"),  # Render's API keys
    (b"A", "bitbucket", 0, rb"TBB(?<![\w-]ATBB)[A-Za-z0-9]{32,}(?![\w-])", b""),  # app password
    (b"A", "google_api_key", 0, rb"Iza(?<![\w-]AIza)[\w-]{35}(?![\w-])", b""),
    (b"A", "atlassian", 0, rb"TATT3(?<![\w-]ATATT3)[\w=-]{150,}", b""),
    (b"A", "pypi", 5, rb"gE(?<=pypi-AgE)(?<![\w-]pypi-AgE)[\w-]{50,}", b""),
    (b"A", "telegram", 0, rb"A(?<=[0-9]{6}:AA)[\w-]{33}(?![\w-])", b""),  # <bot id>:AA…
    (b"J", "jwt", 2, rb"(?<=eyJ)(?<![\w-]eyJ)[\w-]{8,}+\.eyJ[\w-]{8,}+\.[\w-]*+", b""),
    (b"J", "x_pem_b64", 11, rb"Ti(?<=LS0tLS1CRUdJTi)", b""),  # base64 of "-----BEGIN …"
    # base64 of JSON ({" or {\n  "), or a JWT split over lines or concatenated in code
    (b"J", "x_b64_json", 2, rb"(?<=eyJ)(?<![A-Za-z0-9+/_-]eyJ)[A-Za-z0-9+/_-]{8,}+={0,2}", b""),
    (b"J", "x_b64_json", 6, rb"(?<=ewogICJ)(?<![A-Za-z0-9+/_-]ewogICJ)[A-Za-z0-9+/]{8,}+={0,2}", b""),
    (b"Q~", "azure_client_secret", 4,
     rb"(?<=[A-Za-z0-9_~.-]{3}[0-9]Q~)(?<![A-Za-z0-9_~.-]{4}[0-9]Q~)[A-Za-z0-9_~.-]{31,34}"
     rb"(?![A-Za-z0-9_~.-])", b""),
    (b"ya29.", "google_oauth_token", 0, rb"(?<![\w.-]ya29\.)[a-z0-9_-]{20,}", b"ya29."),
    (b"//0", "google_oauth_token", 1, rb"(?<=1//0)(?<![\w/]1//0)[a-z0-9_-]{30,}", b"1//0"),
    (b"bearer ", "x_bearer", 0, rb"(?=[a-z0-9._~+/-]{16})", b""),  # a bearer token wherever it is
    # "Generated token 9944b0…" (Django REST framework's drf_create_token), "Token 9944b0…": a
    # long random word right after the word token, in prose or output
    (b"token ", "x_bearer", 0, rb"(?<![\w-]token )(?=[a-z0-9._~+/-]{32})", b""),
    (b"jwt.", "x_jwt_call", 0, rb"(?<![\w.]jwt\.)(?:encode|sign|decode|verify)\(", b""),
    # A password's hash (crypt(3): bcrypt, md5-crypt/apr1, sha256/512-crypt, yescrypt; argon2;
    # Django's pbkdf2): an .htpasswd or /etc/shadow line, a Traefik basic-auth label (its $ doubled
    # for Compose), a user row dumped from a database. It is the password to whoever runs a
    # cracker on it. (The lowered copy: the alphabets are case-blind here.)
    (b"$", "password_hash", 0,
     rb"(?<![\w$]\$)\$?(?:2[abxy]?\$\$?\d\d\$\$?[./a-z0-9]{53}"
     rb"|(?:1|apr1)\$\$?[./a-z0-9]{1,8}\$\$?[./a-z0-9]{22}"
     rb"|[56]\$\$?(?:rounds=\d+\$\$?)?[./a-z0-9]{1,16}\$\$?[./a-z0-9]{43}(?:[./a-z0-9]{43})?"
     rb"|y\$\$?[./a-z0-9]{1,10}\$\$?[./a-z0-9]{1,86}\$\$?[./a-z0-9]{43}"
     rb"|argon2(?:id|i|d)\$\$?v=\d+\$\$?m=\d+,t=\d+,p=\d+\$\$?[a-z0-9+/]{8,}\$\$?[a-z0-9+/]{16,})(?![./a-z0-9+])",
     b""),
    # Fernet(b"KEY"); mysqli_connect(host, user, PASSWORD, db), new mysqli(…); an Oracle
    # connect string's user/PASSWORD@dsn (cx_Oracle.connect('scott/…@db:1521/ORCL'))
    (b"fernet(", "x_hmac", 0, rb"(?<![\w.]fernet\()", b""),
    (b"mysqli", "x_positional_call", 0, rb"(?:_connect|_real_connect)?\((?<![\w$>.]mysqli\()(?<![\w.]mysqli_connect\()"
     rb"(?<![\w.]mysqli_real_connect\()", b""),
    (b"oracle", "x_oracle_connect", 0, rb"(?:db)?\.connect\([ \t]*(?=[\"'])", b""),
    # base64 of a connection URL (postgres://…, mysql://…, mongodb://…, redis://…): decoded and
    # read (its password) like base64 of JSON
    # (found from a letter of an anchor scanned anyway: a scan of its own costs ~1 % each)
    (b"g", "x_b64_json", 1, rb"9zdgdyzxm(?<![a-z0-9+/]cg9zdgdyzxm)[a-z0-9+/]{12,}={0,2}", b"cG9zdGdyZXM"),
    (b"x", "x_b64_json", 1, rb"lzcww6(?<![a-z0-9+/]bxlzcww6)[a-z0-9+/]{12,}={0,2}", b"bXlzcWw6"),
    (b"k", "x_b64_json", 7, rb"yi(?<![a-z0-9+/]bw9uz29kyi)[a-z0-9+/]{12,}={0,2}", b"bW9uZ29kYi"),
    (b"k", "x_b64_json", 3, rb"axm6(?<![a-z0-9+/]cmvkaxm6)[a-z0-9+/]{12,}={0,2}", b"cmVkaXM6"),
    # GitHub Actions' `echo "::add-mask::VALUE"`: what a workflow masks is a secret by its word
    (b"k", "x_add_mask", 0, rb"::(?<=::add-mask::)(?P<v>(?![$%{])[^\s\"'`]{4,})", b""),
    # Terraform Cloud / Enterprise API tokens; New Relic's user keys (NRAK-)
    (b"atlasv1.", "terraform_cloud", 15,
     rb"(?<=[a-z0-9]{14}\.atlasv1\.)(?<![a-z0-9]{15}\.atlasv1\.)[a-z0-9_=-]{60,90}(?![a-z0-9_=-])", b""),
    (b"A", "newrelic", 2, rb"K-(?<=NRAK-)(?<![\w-]NRAK-)[A-Z0-9]{27}(?![A-Za-z0-9])", b""),  # (user keys)
    (b"p", "password_hash", 0,
     rb"bkdf2_sha(?<![\w$]pbkdf2_sha)(?:1|256|512)\$\d{4,7}\$[a-z0-9]{4,64}\$[a-z0-9+/]{27,}={0,2}(?![a-z0-9+/=])", b""),
    # Secrets with no name the keyword rules read (see _x_pin … _x_auth_file): a SIM's PIN/PUK,
    # a spaced name, a token written backwards, expect's answer, `cat auth.txt`, init output's
    # labels pasted without their command (Unseal Key 1:, PASSWORD elastic =)
    (b"p", "x_pin", 0, rb"(?:in|uk)2?(?![a-z0-9])", b""),
    (b"p", "x_spaced", 0, rb"[ ._-]a[ ._-]s[ ._-]s(?:[ ._-]w[ ._-]o[ ._-]r[ ._-]d)?", b""),
    (b"k", "x_spaced", 0, rb"[ ._-]e[ ._-](?:n(?<=t[ ._-]o[ ._-]k[ ._-]e[ ._-]n)|y(?<=a[ ._-]p[ ._-]i[ ._-]k[ ._-]e[ ._-]y))", b""),
    (b"k", "x_reversed", 3, rb"ward(?<=backward)", b""),
    # a prefixed token written backwards with no word saying so (code that hides a token from
    # scanners by reversing it, a note that pastes it that way): "…_phg", "…-taplg", "…_evil_ks",
    # "…-ks", "…-bxox", "…AIKA", read forwards by _x_reversed_token
    # (each row only a word's end: the word is read forwards and checked there)
    (b"h", "x_reversed_token", 0, rb"g(?<=_[pousr]hg)(?![\w-])", b""),
    (b"p", "x_reversed_token", 0, rb"lg(?<=-t[at]plg)(?![\w-])", b""),
    (b"k", "x_reversed_token", 0, rb"s(?<=[_-]ks)(?![\w-])", b""),
    (b"k", "x_reversed_token", 0, rb"r(?<=_kr)(?![\w-])", b""),
    (b"x", "x_reversed_token", 0, rb"(?<=-[abeoprs]xox)(?![\w-])", b""),
    (b"A", "x_reversed_token", 0, rb"I[KS]A(?<=[A-Z2-7]{16}AI[KS]A)(?![A-Za-z0-9])", b""),
    (b"x", "x_expect", 1, rb"pect(?<=expect)(?=[ \t]*\(?[ \t]*(?:-[a-z]+[ \t]+)*[\"'])", b""),
    (b"h", "x_auth_file", 3, rb"(?<=auth)(?:[_-]user[_-]pass|\.txt)(?![\w.-])", b""),
    (b"cr", "x_auth_file", 0, rb"eds?\.txt(?![\w.-])", b""),
    (b"k", "x_value", 0, rb"ey(?:(?<=unseal key)|(?<=recovery key))(?: \d{1,2})?:[ \t]*(?P<v>[^\s\[]{8,})", b""),
    (b"p", "x_value", 0, rb"assword [\w.-]+ = (?P<v>[^\s\[]+)", b"PASSWORD "),
    # Subversion's auth cache (~/.subversion/auth/svn.simple/<hash>, svn.ssl.client-passphrase):
    # "K 8\npassword\nV 20\n<the password>", a hash file of length-prefixed keys and values
    (b"p", "x_value", 0, rb"ass(?:word(?<=k 8\npassword)|phrase(?<=k 10\npassphrase))\r?\nv \d{1,4}\r?\n(?P<v>[^\r\n\[][^\r\n]{0,4095})", b""),
    # a minisign or signify secret key file: the base64 line after "untrusted comment: … secret key"
    (b"k", "x_value", 0, rb"ey(?<=secret key)[ \t]*\r?\n(?P<v>rw[a-z0-9+/]{60,400}={0,2})(?![a-z0-9+/=])", b""),
    # Bitcoin's extended private keys (BIP32: xprv, tprv, and the yprv/zprv/uprv/vprv of other
    # address types): in a wallet's descriptor (listdescriptors true), a config, a test vector
    (b"p", "bitcoin", 1, rb"rv(?<![\w-][tuvxyz]prv)(?<=[tuvxyz]prv)[1-9a-z]{107}(?![a-z0-9])", b""),
    # a URL that leads to a secret: a token as its first path segment after /t/ (conda's
    # channel_alias and channels, https://conda.anaconda.org/t/<token>/channel; not a forum's
    # /t/topic-slug), or a URL followed by two words that end the command (mc alias set NAME URL
    # ACCESS SECRET with no prompt before it: a compose file's entrypoint, a script, a note)
    (b"h", "x_url", 0, rb"ttps?://(?=[a-z0-9.-]{1,253}(?::\d{1,5})?/t/[\w-]{16,256}(?:/|[\s\"'<>]|\Z)"
     rb"|[^\s\"'<>`]{1,2048}+[ \t]+[^\s\"'<>;&|`]{1,256}+[ \t]+[^\s\"'<>;&|`]{3,256}+[ \t]*(?:[;&|\r\n\"'`]|--|\Z))", b""),
    # pulumi config set --secret NAME VALUE (the flag anywhere in the command)
    (b"cr", "x_flagged_value", 0, rb"et(?<=--secret)(?=[ \t])", b""),
    # microk8s join HOST:25000/TOKEN/HASH (what microk8s add-node prints)
    (b"k", "x_value", 0, rb"8s(?<=microk8s)[ \t]+join[ \t]+[\w.:-]{1,255}:\d{1,5}/(?P<v>[0-9a-z]{16,64})(?=/|\s|\Z)", b""),
    # a NATS nkey seed's block; kubeadm's certificate key (it decrypts the control plane's
    # uploaded certificates): after --certificate-key in a join command (often the third line
    # of one), or under its label
    (b"k", "x_value", 0, rb"ey(?:(?<=nkey) seed-{5}\r?\n|(?<=-certificate-key)[ \t=]+"
     rb"|(?<=using certificate key):[ \t]*\r?\n[ \t]*)(?P<v>[a-z2-7]{50,64}|[0-9a-f]{64})(?![0-9a-z])", b""),
    # a Nomad/Consul token's Secret ID, a Vault AppRole's secret_id (an accessor ID is not one)
    (b"cr", "x_value", 0, rb"et(?<=secret)[ _-]?id[\"']?[ \t]*[:=][ \t]*[\"']?(?P<v>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}"
     rb"-[0-9a-f]{4}-[0-9a-f]{12})(?![\w-])", b""),
)

_HAS_DIGIT = re.compile(rb"[0-9]").search
_HAS_UPPER = re.compile(rb"[A-Z]").search
_HAS_LOWER = re.compile(rb"[a-z]").search
_VERSION_LIKE = _lazy(rb"v?\d+(?:\.\d+)+(?:[-+.][0-9A-Za-z.]+)?\Z")  # 3.11.7, v1.2.0-rc1
_PEM_BEGIN = _lazy(rb"(?i)-{3,6} ?BEGIN ([A-Z0-9 ]*)\Z")
_PEM_END = _lazy(rb"(?i)-{3,6} ?END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{3,6}")
_PEM_END_LINE = _lazy(rb"(?i)-{3,6} ?END ([A-Z0-9 ]*)\Z")
# What follows a real BEGIN line: base64 or an armor header, after whitespace or newlines
# (maybe escaped once or twice, as in JSON; indented, as in YAML), or nothing at all (a key
# pasted on one line). A quote or code after it means the marker is only named.
_PEM_BODY = _lazy(
    rb"(?:[ \t\r\n]|\\{1,3}[rn])*(?:[A-Za-z0-9+/=]{16}|(?i:Proc-Type|Comment|Version|Hash):)"
)
_PUTTY_END = _lazy(rb"Private-MAC:[ \t]*[0-9a-fA-F]*")
_DISCORD_HOST = _lazy(rb"discord(?:app)?\.com/api/(?:v\d+/)?webhoo\Z")


def _mixed(token: bytes) -> bool:
    """Random-looking: a digit, an upper and a lower case letter (kebab-case names are not)."""
    return bool(_HAS_DIGIT(token) and _HAS_UPPER(token) and _HAS_LOWER(token))


def _shape_span(data: bytes, m: re.Match[bytes], row: int, spans: list[_Span]) -> _Span | None:
    """The span of a shape match (None: not one after all). ``spans`` takes what a match adds
    besides (the token after a Twilio SID, the values in a Kubernetes Secret)."""
    _, kind, back, _, case = _SHAPE_TABLE[row]
    start, end = m.start() - back, m.end()
    if case and not data.startswith(case, start):
        return None  # the lowered copy matched, the original's case does not
    if kind[:2] != "x_" and end - start >= 24 and len(set(data[end - 16 : end])) <= 3:
        return None  # ghp_xxxxxxxxxxxxxxxx…: a placeholder in the shape of a token
    if kind[:2] == "x_":
        v = m.re.groupindex.get(f"v{row}")
        if v is not None:
            return m.start(v), m.end(v), _REDACTED
        return _SPECIAL[kind](data, start, end, spans)
    if kind == "openai":
        if not _mixed(data[start + 3 : end]):
            return None
    elif kind in ("neon", "render"):  # random: two of digits, upper and lower case (not npg_configuration)
        body = data[start + 4 : end]
        if bool(_HAS_DIGIT(body)) + bool(_HAS_UPPER(body)) + bool(_HAS_LOWER(body)) < 2:
            return None
    elif kind == "huggingface":
        if not (_HAS_UPPER(data, start + 3, end) and _HAS_LOWER(data, start + 3, end)):
            return None
    elif kind == "age":
        if not data[start:end].isupper():
            return None
    elif kind == "private_key":
        begin = _PEM_BEGIN.search(data, max(0, start - 64), start - 8)  # before "PRIVATE "
        if begin is None:
            return _orphan_pem_end(data, start)  # the END of a block whose start was cut off
        if not _PEM_BODY.match(data, end):
            return None  # the words in prose, or the marker as a constant in code
        label = begin.group(1).upper()
        if b"OPENSSH" in label or b"SSH2" in label:
            kind = "ssh_private_key"
        close = _PEM_END.search(data, end)
        end = close.end() if close else len(data)  # unterminated: everything after BEGIN
        return begin.start(), end, _MARKER[kind]
    elif kind == "aws_access_key_id":
        _pair_after(data, end, _AWS_SECRET_NEAR, "aws_secret_access_key", spans)
    elif kind == "ssh_private_key":  # PuTTY .ppk, up to its MAC line
        close = _PUTTY_END.search(data, end)
        return start, (close.end() if close else len(data)), _MARKER[kind]
    elif kind == "discord":
        if not _DISCORD_HOST.search(data, max(0, start - 40), start):
            return None
    elif kind == "telegram":
        colon = j = start - 1
        while j > 0 and 48 <= data[j - 1] <= 57:
            j -= 1
        if not 6 <= colon - j <= 12:
            return None
        if j > 0 and data[j - 1] in _TOKEN_CHARS and data[j - 3 : j] != b"bot":  # /bot<id>:AA…
            return None
        start = j
    v = m.re.groupindex.get(f"v{row}")
    if v is not None and m.start(v) >= 0:
        start, end = m.span(v)
    return start, end, _MARKER[kind]


# --- special shapes: what a match of the table leads to, when it is not one token -----------

_B64_RUN = _lazy(rb"(?:[A-Za-z0-9+/=_-]|\\{1,3}[rn]|\r?\n[ \t]*|[ \t]+(?=[A-Za-z0-9+/]{16}))+")
_B64_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
_BODY_LINE = _lazy(rb"[ \t]*(?:(?:[A-Za-z0-9+/=]|\\{1,3}[rn])*|(?i:version|comment|hash|charset|proc-type|dek-info"
                   rb"|messageid): [^\[\]]*|=[A-Za-z0-9+/]{4})[ \t\r]*\Z")
_AWS_SECRET_NEAR = _lazy(rb"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_HEX32 = _lazy(rb"(?<![0-9A-Za-z])[0-9a-f]{32}(?![0-9A-Za-z])")
_DEPTH = [0]  # base64 inside base64 is decoded once, not again


def _pair_after(data: bytes, end: int, rx: re.Pattern[bytes], kind: str, spans: list[_Span]) -> None:
    """A key id and its secret written side by side (AKIA… wJalr…, AC… token): the secret is the
    next token of its shape within a short distance (and mixed, where the shape is loose)."""
    m = rx.search(data, end, min(len(data), end + 200))
    if m and (kind != "aws_secret_access_key" or _mixed(m.group())):
        spans.append((m.start(), m.end(), _MARKER[kind]))


def _base64_run(data: bytes, start: int) -> int:
    """The end of a base64 body that starts at ``start``, across wrapped lines (real or escaped
    newlines, or spaces before a full line)."""
    m = _B64_RUN.match(data, start)
    end = m.end() if m else start
    while end > start and data[end - 1] not in _B64_CHARS:
        end -= 1
    return end


def _b64decode(raw: bytes) -> bytes | None:
    clean = bytes(c for c in raw if c in _B64_CHARS).rstrip(b"=")
    clean = clean.replace(b"-", b"+").replace(b"_", b"/")
    clean = clean[: len(clean) - len(clean) % 4] if len(clean) % 4 == 1 else clean
    try:
        return binascii.a2b_base64(clean + b"=" * (-len(clean) % 4))
    except binascii.Error:
        return None


def _printable(blob: bytes) -> bool:
    if not blob:
        return False
    bad = sum(1 for c in blob[:512] if c < 9 or 13 < c < 32 or c == 127)
    return bad == 0


def _orphan_pem_end(data: bytes, start: int) -> _Span | None:
    """An END line with no BEGIN before it (the head was cut off, or only the body was
    pasted): the base64 lines above it belong to a key."""
    end_line = _PEM_END_LINE.search(data, max(0, start - 64), start - 8)
    if end_line is None:
        return None
    close = _PEM_END.match(data, end_line.start())
    line_end = close.end() if close else start + 3
    pos = end_line.start()
    top = pos
    floor = max(0, pos - 65536)
    while pos > floor:
        ls = data.rfind(b"\n", floor, pos - 1) + 1
        line = data[ls : pos].rstrip(b"\r\n")
        if not _BODY_LINE.match(line) or (not line.strip() and top != pos and data[top - 2 : top - 1] == b"\n"):
            break
        top = ls
        pos = ls
        if ls <= floor:
            break
    if end_line.start() - top < 32:
        return None
    return top, line_end, _MARKER["private_key"]


def _x_der(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    if start > 0 and data[start - 1] in _B64_CHARS:
        return None  # in the middle of other base64
    stop = _base64_run(data, start)
    if stop - start < 100:
        return None
    return start, stop, _MARKER["private_key"]


def _x_openssh_body(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    found = _x_der(data, start, end, spans)
    return (found[0], found[1], _MARKER["ssh_private_key"]) if found else None


def _x_pem_b64(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """base64 of a PEM block (a kubeconfig's client-key-data, a Secret's tls.key)."""
    stop = _base64_run(data, start)
    blob = _b64decode(data[start : min(stop, start + 120)])
    if blob and b"PRIVATE KEY" in blob.upper():
        return start, stop, _MARKER["private_key"]
    return None


_JWT_JOIN = _lazy(rb"(?:[\"'`][ \t]*\+?[ \t]*(?:\\?\r?\n[ \t]*)?[\"'`]|\\?\r?\n[ \t]*|[ \t]*\+[ \t]*)")
_JWT_PART = _lazy(rb"[A-Za-z0-9_-]+")


def _jwt_joined(data: bytes, start: int) -> int:
    """A JWT written in pieces (split over lines, concatenated in code): where it ends, or 0."""
    pos, dots, parts = start, 0, 0
    while pos < len(data) and pos - start < 16384:
        j = _JWT_JOIN.match(data, pos)
        q = j.end() if j else pos
        if data[q : q + 1] == b".":
            dots += 1
            q += 1
            j2 = _JWT_JOIN.match(data, q)
            q = j2.end() if j2 else q
        part = _JWT_PART.match(data, q)
        if part is None:
            break
        pos, parts = part.end(), parts + 1
        if dots == 2:
            # the signature may go on over more pieces
            while (j := _JWT_JOIN.match(data, pos)) and (part := _JWT_PART.match(data, j.end())) and j.end() > pos:
                pos = part.end()
            break
    return pos if dots == 2 else 0


def _x_b64_json(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """base64 of JSON: a JWT in pieces, or a config blob that holds a secret."""
    if data.startswith(b"eyJ", start):
        header = _b64decode(data[start:end])
        if header and b'"alg"' in header[:200] or header and b'"typ"' in header[:200]:
            stop = _jwt_joined(data, start)
            return (start, stop, _MARKER["jwt"]) if stop else None
    if _DEPTH[0] or end - start < 16:
        return None
    blob = _b64decode(data[start:end])
    if blob is None or not _printable(blob):
        return None
    _DEPTH[0] += 1
    try:
        text = blob.decode("utf-8", "replace")
        changed = redact(text) != text
    finally:
        _DEPTH[0] -= 1
    return (start, end, _MARKER["base64"]) if changed else None


def _x_twilio_pair(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    if start > 0 and data[start - 1] in _TOKEN_CHARS:
        return None
    _pair_after(data, end, _HEX32, "twilio", spans)
    return None


# Bytes that end a simple command: a pipe, a list, a subshell, and a backtick (`cmd` is a command
# substitution, and Markdown's inline code: "run `mysql -pX` first" is a command inside its text)
_COMMAND_BREAK = b"|;&()`"


def _words_after(data: bytes, end: int) -> list[tuple[int, int]]:
    """The shell words from end to the end of the line, up to the first | ; & ( )."""
    words = _shell_words(data, end, _line_end(data, end, min(len(data), end + 2048)))
    for i, (s, _) in enumerate(words):
        if data[s] in _COMMAND_BREAK:
            return words[:i]
    return words


def _positional(data: bytes, words: list[tuple[int, int]], with_value: tuple[bytes, ...] = ()) -> list[tuple[int, int]]:
    out, i = [], 0
    while i < len(words):
        s, e = words[i]
        if data[s] == 0x2D and e - s > 1:
            i += 2 if data[s:e] in with_value else 1
            continue
        out.append((s, e))
        i += 1
    return out


def _x_sqlplus(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """sqlplus user/PASSWORD@db (also rman, expdp …): the password between / and @."""
    args = _positional(data, _words_after(data, end), (b"-M", b"-R"))
    if args:
        s, e, _ = _unquote(data, *args[0])
        slash = data.find(b"/", s, e)
        if slash > s:
            at = data.find(b"@", slash, e)
            _cli_value(data, slash + 1, at if at > 0 else e, spans)
    return None


_PGPASS_QUOTED = _lazy(rb"([\"'])([^\"'\n:]*:[^\"'\n]{3,})\1")
_JSON_TEXT = _lazy(rb"\"[ \t]*:[ \t]*\"((?:[^\"\\\n]|\\.){0,8192})\"")


def _x_pgpass(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """~/.pgpass lines after its name: host:port:db:user:PASSWORD; and a quoted line written
    into it (echo 'host:5432:*:user:PASSWORD' >> ~/.pgpass)."""
    ls = data.rfind(b"\n", 0, start) + 1
    for m in _PGPASS_QUOTED.finditer(data, ls, start):
        fields = m.group(2).split(b":")
        if len(fields) >= 5 and (fields[1].isdigit() or fields[1] == b"*"):
            value_start = m.start(2) + sum(len(f) + 1 for f in fields[:4])
            spans.append((value_start, m.end(2), _REDACTED))
    for m in _JSON_TEXT.finditer(data, end, _line_end(data, end)):  # a tool writing the file:
        at = m.start(1)                                             # {"file_path": "~/.pgpass",
        for line in m.group(1).split(b"\\n"):                    # "content": "h:5432:*:u:X\n"}
            fields = line.split(b":")
            if len(fields) >= 5 and (fields[1].isdigit() or fields[1] == b"*"):
                value_start = at + sum(len(f) + 1 for f in fields[:4])
                _cli_value(data, value_start, at + len(line), spans)
            at += len(line) + 2
    pos = data.find(b"\n", end, end + 256)
    for _ in range(64):
        if pos < 0:
            break
        le = data.find(b"\n", pos + 1)
        le = len(data) if le < 0 else le
        fields = data[pos + 1 : le].rstrip(b"\r").split(b":")
        if len(fields) < 5 or not (fields[1].isdigit() or fields[1] == b"*"):
            break
        if b"[redacted" in data[pos + 1 : le] or b"[private]" in data[pos + 1 : le]:
            pos = le if le < len(data) else -1  # a marker's own colon would shift the fields
            continue
        value_start = pos + 1 + sum(len(f) + 1 for f in fields[:4])
        _cli_value(data, value_start, value_start + len(b":".join(fields[4:])), spans)
        pos = le if le < len(data) else -1
    return None


def _x_mkpasswd(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """openssl passwd [-1|-6|-salt S] PASSWORD, mkpasswd [-m METHOD] PASSWORD: the plaintext."""
    args = _positional(data, _words_after(data, end), (b"-m", b"--method", b"-S", b"--salt", b"-salt",
                                                       b"-R", b"--rounds", b"-in"))
    if args:
        _cli_value(data, *args[-1 if len(args) < 3 else 0], spans)
    return None


def _x_plaintext(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """ConvertTo-SecureString "PASSWORD" -AsPlainText: the quoted string before the flag."""
    ls = max(data.rfind(b"\n", 0, start) + 1, start - 512)
    head = data[ls : start - 3].rstrip()  # before "-AsPlainText"
    if head[-1:] in (b"'", b'"'):
        q = head[-1:]
        open_at = head.rfind(q, 0, len(head) - 1)
        if open_at >= 0:
            _cli_value(data, ls + open_at, ls + len(head), spans)
    else:
        words = _shell_words(data, ls, start)
        if words:
            _cli_value(data, *words[-1], spans)
    return None


# The login flags that take a value of their own (cargo's --registry NAME, wandb's --host URL).
_LOGIN_FLAGS_WITH_VALUE = (b"--registry", b"--host", b"--anonymously", b"--cloud-url", b"-address",
                           b"-method", b"-path")


def _x_login(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """cargo login [--registry R] TOKEN, vault login [-no-print] TOKEN, wandb login [--relogin]
    KEY: the first positional word (not -method=…, not key=value)."""
    words = _positional(data, _words_after(data, end), _LOGIN_FLAGS_WITH_VALUE)
    if not words or data.find(b"=", *words[0]) >= 0:
        return None
    token = data[words[0][0] : words[0][1]]
    if len(token) >= 8 and not (token.isalpha() and token.islower()):  # not "wandb login then …"
        _cli_value(data, *words[0], spans)
    return None


def _x_plus_login(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """steamcmd +login USER PASSWORD [CODE]: the word after the user, unless it is the next
    +command (a cached login gives the user alone)."""
    words = _words_after(data, end)
    if len(words) >= 2 and data[words[1][0]] not in b"+-":
        _cli_value(data, *words[1], spans)
    return None


# ansible-vault encrypt_string's flags that take a value of their own.
_VAULT_FLAGS_WITH_VALUE = (b"--name", b"-n", b"--vault-id", b"--encrypt-vault-id", b"--output",
                           b"--vault-password-file", b"--vault-pass-file", b"--stdin-name")


def _x_vault_string(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """ansible-vault encrypt_string [flags] 'VALUE': the string it encrypts is the secret (a
    quoted word, or one no sentence has: "encrypt_string the db password" names none)."""
    words = _positional(data, _words_after(data, end), _VAULT_FLAGS_WITH_VALUE)
    if not words:
        return None
    s, e, quoted = _unquote(data, *words[0])
    value = data[s:e]
    if quoted or len(value) >= 8 and not (value.isalpha() and value.islower()):
        _cli_value(data, *words[0], spans)
    return None


def _x_http_basic(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """poetry/composer config http-basic.REPO USER PASSWORD."""
    words = _positional(data, _words_after(data, end))
    if len(words) >= 2:
        _cli_value(data, *words[1], spans)
    return None


_ALGORITHM = _lazy(rb"(?i)(?:sha-?\d*|md5|hs\d+|rs\d+|es\d+|ps\d+|hmac[\w-]*|aes[\w-]*|utf-?8|hex|base64|ascii|latin-?1|none)\Z")


def _literal_args(data: bytes, end: int, spans: list[_Span], only: int | None = None) -> None:
    """The quoted literal arguments of a call (not an algorithm's name, not a keyword
    argument): a key handed to HMAC, a JWT library or a cipher."""
    args = _call_args(data, end, _line_end(data, end))
    for i, (s, e, quoted) in enumerate(args):
        if only is not None and i != only:
            continue
        if not quoted:
            w = _WRAPPER.match(data, s, e + 2)
            if not w:
                continue
            s, e, quoted = _value_at(data, w.end() - 1, len(data))
        value = data[s:e]
        if not _ALGORITHM.match(value) and _secret_value(value, quoted=True, code=True, name="key"):
            spans.append((s, e, _REDACTED))


def _x_hmac(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    _literal_args(data, end, spans)
    return None


def _x_jwt_call(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    _literal_args(data, end, spans, only=1)  # jwt.encode(payload, KEY, …), jwt.decode(token, KEY)
    return None


def _object_bounds(data: bytes, pos: int, reach: int = 4096) -> tuple[int, int]:
    """The JSON object around pos (a flat one: the nearest braces)."""
    lo = data.rfind(b"{", max(0, pos - reach), pos)
    hi = data.find(b"}", pos, pos + reach)
    return (lo, hi) if lo >= 0 and hi >= 0 else (pos, pos)


_JSON_MEMBER = _lazy(rb"[\"']([A-Za-z_]{1,4})[\"'][ \t]*:[ \t]*[\"']([A-Za-z0-9_+/=-]{8,})[\"']")
_JWK_PRIVATE = frozenset((b"d", b"p", b"q", b"dp", b"dq", b"qi", b"k"))


def _x_jwk(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """A JSON Web Key: its private members (d, p, q, dp, dq, qi; k of a symmetric key)."""
    if start == 0 or data[start - 1] not in b"\"'":
        return None
    lo, hi = _object_bounds(data, start)
    for m in _JSON_MEMBER.finditer(data, lo, hi):
        if m.group(1) in _JWK_PRIVATE:
            spans.append((m.start(2), m.end(2), _MARKER["private_key"]))
    return None


def _x_key_list(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """The "value" of the object a "keyName" member names a key in (the key itself)."""
    lo, hi = _object_bounds(data, start, 1024)
    for v in _VALUE_MEMBER.finditer(data, lo, hi):
        _cli_value(data, v.start(1), v.end(1), spans)
    return None


_DICT_PAIR = _lazy(rb"[\"']([^\"'\n]{1,80})[\"'][ \t]*:[ \t]*[\"']([^\"'\n]*)[\"']")
_COOKIE_VALUE = _lazy(rb"[\"']value[\"'][ \t]*:[ \t]*[\"']([^\"'\n]*)[\"']")
_COOKIE_NAME = _lazy(rb"[\"']name[\"'][ \t]*:[ \t]*[\"']([^\"'\n]*)[\"']")


def _x_cookie_object(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """A cookie exported as JSON (browser extensions, Playwright's storageState)."""
    lo, hi = _object_bounds(data, start, 2048)
    value = _COOKIE_VALUE.search(data, lo, hi)
    name = _COOKIE_NAME.search(data, lo, hi)
    if value and _cookie_secret(name.group(1) if name else b"", value.group(1)):
        spans.append((value.start(1), value.end(1), _REDACTED))
    return None


_ORACLE_CREDS = _lazy(rb"[\w$#.-]{1,64}/([^\s\"'@/]{3,128})@")


def _x_oracle_connect(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """cx_Oracle.connect('scott/PASSWORD@db:1521/ORCL'), oracledb.connect("user/PASSWORD@dsn")."""
    args = _call_args(data, end, _line_end(data, end))
    if args and args[0][2]:
        m = _ORACLE_CREDS.match(data, args[0][0], args[0][1])
        if m and not _placeholder(m.group(1)):
            spans.append((m.start(1), m.end(1), _REDACTED))
    return None


def _x_auth_pair(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """requests' and httpx's auth=("user", PASSWORD): the second of two quoted strings."""
    args = _call_args(data, end, _line_end(data, end))
    if len(args) == 2 and args[0][2] and args[1][2] and _secret_value(
            data[args[1][0] : args[1][1]], quoted=True, code=True, name="password"):
        spans.append((args[1][0], args[1][1], _REDACTED))
    return None


def _x_positional_call(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """new PDO(dsn, user, PASSWORD), DriverManager.getConnection(url, user, PASSWORD)."""
    args = _call_args(data, end, _line_end(data, end))
    if len(args) >= 3 and args[2][2] and _secret_value(data[args[2][0] : args[2][1]], quoted=True,
                                                         code=True, name="password"):
        spans.append((args[2][0], args[2][1], _REDACTED))
    return None


_YAML_DATA = _lazy(rb"(?m)^([ \t]*)(?:(stringD)|d)ata:[ \t]*\r?$")  # (stringData: the same, not encoded)
_YAML_PAIR = _lazy(rb"[ \t]+[\"']?[\w.-]+[\"']?:[ \t]+[\"']?([A-Za-z0-9+/=_-]{4,})[\"']?[ \t]*\r?\Z")
_YAML_STRING_PAIR = _lazy(rb"[ \t]+[\"']?[\w.-]+[\"']?:[ \t]+([\"']?)([^\s\"'|>][^\s\"']{3,})\1[ \t]*\r?\Z")
_JSON_DATA = _lazy(rb"[\"'](?:stringD|d)ata[\"'][ \t]*:[ \t]*\{")


def _secret_data_value(data: bytes, vs: int, ve: int, spans: list[_Span]) -> None:
    blob = _b64decode(data[vs : min(ve, vs + 64)])
    if blob and blob.startswith(b"-----BEGIN CERTIFICATE"):
        return  # tls.crt, ca.crt: public
    if not _is_marker(data[vs:ve]):
        spans.append((vs, ve, _REDACTED))


def _x_k8s_secret(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """A Kubernetes Secret's data map holds secrets by definition (base64 is no protection):
    every value, whatever its key is called; certificates excepted."""
    lo = data.rfind(b"\n---", max(0, start - 16384), start)
    lo = lo + 1 if lo >= 0 else max(0, start - 16384)
    hi = data.find(b"\n---", end, end + 16384)
    hi = hi if hi >= 0 else min(len(data), end + 16384)
    for m in _YAML_DATA.finditer(data, lo, hi):
        indent = len(m.group(1))
        pair_rx, group = (_YAML_STRING_PAIR, 2) if m.group(2) else (_YAML_PAIR, 1)
        pos = m.end() + 1
        while pos < hi:
            le = data.find(b"\n", pos, hi)
            le = hi if le < 0 else le
            line = data[pos:le]
            body = line.lstrip(b" \t")
            if body.strip():
                if len(line) - len(body) <= indent:
                    break
                pair = pair_rx.match(line)
                if pair:
                    _secret_data_value(data, pos + pair.start(group), pos + pair.end(group), spans)
            pos = le + 1
    for brace in _JSON_DATA.finditer(data, lo, hi):
        close = data.find(b"}", brace.end(), hi)
        for pair in _DICT_PAIR.finditer(data, brace.end(), close if close > 0 else brace.end()):
            if len(pair.group(2)) >= 4:
                _secret_data_value(data, pair.start(2), pair.end(2), spans)
    return None


def _x_get_secret(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """kubectl get secret … -o jsonpath=… [| base64 -d]: the next line is the value."""
    le = _line_end(data, end)
    line = data[end:le].lower()
    if not any(w in line for w in (b"jsonpath", b"go-template", b"base64", b"template=")):
        return None
    nxt = le + 1
    stop = _line_end(data, nxt) if nxt < len(data) else nxt
    value = data[nxt:stop].strip()
    if value and b" " not in value and not value.startswith((b"$", b"[redacted", b"[private]")):
        vs = data.find(value, nxt, stop)
        spans.append((vs, vs + len(value), _REDACTED))
    return None


_CRED_PAIR = _lazy(rb"([^\s/:]+)[ \t]*[/:][ \t]*(\S+)")
_BEARER_TOKEN = _lazy(rb"[A-Za-z0-9._~+/-]+=*")


def _x_cred_pair(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """"Login: admin / PASSWORD", "creds for the router: admin:PASSWORD"."""
    m = _CRED_PAIR.match(data, end)
    if m and b"[redacted" not in m.group() and b"[private]" not in m.group():
        value = m.group(2).rstrip(b".,;)")
        if (_HAS_DIGIT(value) or not value.isalnum()) and _secret_value(
                value, quoted=False, code=False, name="password", literal=True):
            spans.append((m.start(2), m.start(2) + len(value), _REDACTED))
    return None


def _x_bearer(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    m = _BEARER_TOKEN.match(data, end)
    if m and (_random_token(m.group()) or m.group().count(b".") == 2):
        spans.append((m.start(), m.end(), _REDACTED))
    return None


# A SIM's PIN and PUK (SIM PIN: 1234, PUK: 12345678, the PIN code … is 1234, sim_pin: 1234,
# AT+CPIN="1234"): "pin" alone is a GPIO pin or a pinned version, so only these labels.
_PIN_VALUE = _lazy(rb"(?:[ _-]?(?:code|number))?[\"']?(?:(?:[ \t]+[a-z]+){0,5}?[ \t]+(?:is|was|=|:)|[ \t]*[:=])"
                   rb"[ \t]*[\"']?(\d{4,8})(?![\w.])")


def _x_pin(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    before = data[max(0, start - 4) : start].lower()
    if start and data[start - 1] in _NAME_CHARS and data[start - 1] != 95 and not before.endswith(b"+c"):
        return None  # (spin, sim_pin's "_" is a word break)
    label = (data[start + 1 : start + 2] in b"uU" or data.startswith(b"PIN", start) or before.endswith(
        (b"sim ", b"sim_", b"sim-", b"+c")) or data[end : end + 5].lower() in (b" code", b"_code", b"-code"))
    v = _PIN_VALUE.match(data[end : end + 160].lower()) if label else None
    return (end + v.start(1), end + v.end(1), _REDACTED) if v else None


# A secret's name spelled with spaces or dashes ("p a s s w o r d:", "T-O-K-E-N =")
_SPACED_VALUE = _lazy(rb"(?:[ \t]*[:=]|[ \t]+(?:is|was))[ \t]*[\"']?([^\s\"']{4,256})")


def _x_spaced(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    if data[start : start + 1] in b"kK":  # (found from the k: "t o k e n", "a p i k e y")
        start -= 4 if data[end - 1 : end] in b"nN" else 6
    if start and data[start - 1] in _TOKEN_CHARS or end < len(data) and data[end] in _TOKEN_CHARS:
        return None
    v = _SPACED_VALUE.match(data, end, end + 300)
    return (v.start(1), v.end(1), _REDACTED) if v and not _is_marker(v.group(1)) else None


def _reversed_near(data: bytes, pos: int, spans: list[_Span]) -> int:
    """A token written backwards near the word that says so ("backwards", from the k every scan
    reads; a find of "reversed" too cost 1 % of the redactor's time): the shapes of its line
    and the next, read backwards. Returns where that window ends."""
    ls = data.rfind(b"\n", 0, pos) + 1
    le = _line_end(data, _line_end(data, pos) + 1)
    back = data[ls:le][::-1]
    found: list[_Span] = []
    _scan(back, back.lower(), found)
    spans += [(le - e, le - s, r) for s, e, r in found if r.startswith(b"[redacted:")]
    return le


def _x_reversed(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    _reversed_near(data, start, spans)
    return None


def _url_token(token: bytes) -> bool:
    """A URL path segment that is a token: 16+ characters, four digits or more, and no word
    of three letters or more that is not hex (a slug, "python-3-12-released", has one)."""
    if sum(c in b"0123456789" for c in token) < 4:
        return False
    for part in re.split(rb"[-_]", token):
        if len(part) >= 3 and part.isalpha() and part.lower().strip(b"abcdef"):
            return False
    return _random_token(token) or bool(_HEX_USER.match(token))


_URL_TOKEN = _lazy(rb"[A-Za-z0-9.-]{1,253}(?::\d{1,5})?/t/([\w-]{16,256})(?:/|[\s\"'<>]|\Z)")
_MC_ALIAS = _lazy(rb"(?:^|[\s`'\"(;&|])((?:[\w.~-]*/)*mc(?:li)?)[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]")


def _x_url(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    token = _URL_TOKEN.match(data, end)
    if token:
        return (token.start(1), token.end(1), _REDACTED) if _url_token(token.group(1)) else None
    ls = data.rfind(b"\n", max(0, start - 512), start) + 1
    mc = _MC_ALIAS.search(data, max(ls - 1, 0), start) if b"alias set" in data[ls:start] or b"host add" in data[ls:start] else None
    if mc:
        _secret_argument(data, mc.start(1), spans)
    return None


# tool: (its subcommand's words, flags that take a value): the second plain argument after the
# subcommand is the value the flag marks secret
_FLAGGED: dict[bytes, tuple[tuple[bytes, ...], frozenset[bytes]]] = {
    b"pulumi": ((b"config", b"set"), frozenset((b"-s", b"--stack", b"-C", b"--cwd", b"--config-file"))),
}


def _x_flagged_value(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    words, i = _line_words(data, start, spans)
    if i < 0:
        return None
    lo, hi = _command_bounds(words, data, i)
    tool, t = _find_tool(data, words, lo, i, _FLAGGED)  # type: ignore[arg-type]
    if not tool:
        return None
    sub, with_value = _FLAGGED[tool]
    args: list[tuple[int, int]] = []
    j = t + 1
    while j < hi:
        w = data[words[j][0] : words[j][1]]
        if w[:1] == b"-":
            j += 2 if w in with_value else 1
            continue
        args.append(words[j])
        j += 1
    if tuple(data[a:b].lower() for a, b in args[: len(sub)]) == sub and len(args) > len(sub) + 1:
        _cli_value(data, *args[len(sub) + 1], spans)
    return None


_REVERSING = [False]  # (a word read backwards is not read backwards again: "sk-…-ks")


def _x_reversed_token(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """A word that ends in a token's prefix written backwards: the whole word, if read forwards
    it is a token a shape knows (its first character starts the shape)."""
    if _REVERSING[0]:
        return None
    s = start
    while s > 0 and start - s < 512 and data[s - 1] in _TOKEN_CHARS:
        s -= 1
    word = data[s:end][::-1]
    found: list[_Span] = []
    _REVERSING[0] = True
    try:
        _scan(word, word.lower(), found)
    finally:
        _REVERSING[0] = False
    for a, _, r in found:
        if a == 0 and r.startswith(b"[redacted:"):
            return s, end, r
    return None


# An expect script's (or pexpect's) answer to a password prompt: expect "password:" then
# send "…\r" (or child.sendline("…")) within the next lines
_EXPECTED = _lazy(rb"[ \t]*\(?[ \t]*(?:-[a-z]+[ \t]+)*[\"']([^\"'\n]{0,80})[\"']")
_SEND = _lazy(rb"send(?:line)?[ \t]*\(?[ \t]*(?:-[-a-z]*[ \t]+)*[\"']((?:[^\"'\\\n]|\\[^rn])+)(?:\\[rn])*[\"']")
_PROMPT_WORDS = (b"assword", b"passphrase", b"pin", b"token", b"secret")


def _x_expect(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    prompt = _EXPECTED.match(data, end)
    if not prompt or not any(w in prompt.group(1).lower() for w in _PROMPT_WORDS):
        return None
    answer = _SEND.search(data, prompt.end(), prompt.end() + 200)
    if answer and not _is_marker(answer.group(1)) and answer.group(1)[:1] != b"$":
        return answer.start(1), answer.end(1), _REDACTED
    return None


def _x_auth_file(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """`cat auth.txt` of an OpenVPN auth-user-pass file: the user's line, then the password's."""
    ls = data.rfind(b"\n", 0, start) + 1
    low = data[ls:end].lower()
    if not any(rx.search(low) for rx in _CAT_OF):
        return None
    pos = _line_end(data, end)
    lines: list[tuple[int, bytes]] = []
    while pos < len(data) and len(lines) < 3:
        le = _line_end(data, pos + 1)
        line = data[pos + 1 : le].strip()
        if line and line.lower() != b"output:":
            lines.append((pos + 1, line))
        elif lines:
            break
        pos = le
    if len(lines) == 2 and b" " not in lines[0][1] and _bare_secret(lines[1][1]):
        vs = data.find(lines[1][1], lines[1][0])
        return vs, vs + len(lines[1][1]), _REDACTED
    return None


def _x_secret_argument(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """The command where a line starts (after a prompt or sudo): in prose it is a mention."""
    before = data[data.rfind(b"\n", 0, start) + 1 : start].split()
    if all(w in (b"$", b"#", b">", b"sudo", b"-", b"*", b"RUN") for w in before):  # (RUN: a Dockerfile)
        _secret_argument(data, start, spans)
    return None


_ALNUM_RUN = _lazy(rb"\r?\n([A-Za-z0-9]{1,251})(?![\w-])")


def _x_wrapped_github(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    rest = _ALNUM_RUN.match(data, end)
    if rest is None or end - start - 4 + len(rest.group(1)) < 36 or not _mixed(data[start + 4 : rest.end()]):
        return None
    return start, rest.end(), _MARKER["github"]

_SPECIAL = {
    "x_auth_pair": _x_auth_pair, "x_cred_pair": _x_cred_pair, "x_bearer": _x_bearer,
    "x_k8s_secret": _x_k8s_secret, "x_get_secret": _x_get_secret,
    "x_positional_call": _x_positional_call, "x_oracle_connect": _x_oracle_connect,
    "x_der": _x_der, "x_openssh_body": _x_openssh_body, "x_pem_b64": _x_pem_b64,
    "x_b64_json": _x_b64_json, "x_twilio_pair": _x_twilio_pair, "x_sqlplus": _x_sqlplus,
    "x_pgpass": _x_pgpass, "x_mkpasswd": _x_mkpasswd, "x_plaintext": _x_plaintext,
    "x_login": _x_login, "x_plus_login": _x_plus_login, "x_vault_string": _x_vault_string,
    "x_http_basic": _x_http_basic, "x_hmac": _x_hmac,
    "x_jwt_call": _x_jwt_call, "x_jwk": _x_jwk, "x_cookie_object": _x_cookie_object,
    "x_key_list": _x_key_list, "x_pin": _x_pin, "x_spaced": _x_spaced, "x_reversed": _x_reversed,
    "x_reversed_token": _x_reversed_token, "x_url": _x_url,
    "x_flagged_value": _x_flagged_value,
    "x_expect": _x_expect, "x_auth_file": _x_auth_file,
    "x_wrapped_github": _x_wrapped_github, "x_secret_argument": _x_secret_argument,
}


# Discord bot tokens (base64 of a numeric id . 6 chars . HMAC) have no literal prefix; they are
# recognised by name (DISCORD_TOKEN=…) or scheme (Authorization: Bot …) and checked here.
def _discord_bot_token(value: bytes) -> bool:
    parts = value.split(b".")
    if len(parts) != 3 or not 23 <= len(parts[0]) <= 28 or len(parts[1]) != 6:
        return False
    try:
        return binascii.a2b_base64(parts[0] + b"=" * (-len(parts[0]) % 4)).isdigit()
    except binascii.Error:
        return False


# Credit cards: fold digits to "0" and dashes to spaces, so every layout of a card number is a
# literal; the hits are then checked on the real digits (issuer prefix, length, Luhn).
_CARD_FOLD = bytes.maketrans(b"0123456789-", b"0000000000 ")
# 13+ digits, 4-4-4-…, or 4-6-5 / 4-6-4 (Amex, Diners).
_CARD_HINT = _lazy(rb"0000(?:000000000| 0000 0000 0| 000000 0000)")
_DIGIT_RUN = _lazy(rb"[0-9]+(?:[ -][0-9]+)*")
_CARD_GROUP = _lazy(rb"[0-9]+")


def _isdigit(data: bytes, i: int) -> bool:
    return 0 <= i < len(data) and 48 <= data[i] <= 57


def _luhn(digits: bytes) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = c - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# The numbers payment providers publish for tests (Stripe, Braintree, Adyen): public, worth
# nothing, and "we test with 4242…" is worth remembering. Any number of four distinct digits or
# fewer is a test pattern as well (a real card number has eight or more).
_TEST_CARDS = frozenset(
    b"378282246310005 371449635398431 378734493671000 6011000990139424 3056930009020004 "
    b"36227206271667 3566002020360505 6200000000000005 4012888888881881 5200828282828210 "
    b"4000002500003155 4000000000003220 4000000760000002 4000001240000000 4000058260000005 "
    b"4917610000000000 4484070000000000 6759649826438453 5100290029002909 4988438843884305 "
    b"6011601160116611 3530111333300000 5105105105105100 2223003122003222".split()
)


def _card_ok(d: bytes, grouped: bool = True) -> bool:
    """Issuer prefix, length and Luhn. A run of digits without separators counts only at 15/16
    digits: 13-14 and 17-19 digit numbers are mostly ids, seeds and timestamps."""
    n = len(d)
    if d in _TEST_CARDS or len(set(d)) <= 4:
        return False
    if not 13 <= n <= 19 or not (grouped or n in (15, 16)):
        return False
    two, four = int(d[:2]), int(d[:4])
    if d[:1] == b"4":
        ok = n in (13, 16, 19)  # Visa
    elif 51 <= two <= 55 or 2221 <= four <= 2720:
        ok = n == 16  # Mastercard
    elif two in (34, 37):
        ok = n == 15  # Amex
    elif two in (30, 36, 38, 39):
        ok = n >= 14  # Diners
    elif two in (35, 50, 56, 57, 58) or d[:1] == b"6":
        ok = n >= 16 or two in (50, 56, 57, 58)  # JCB, Discover, UnionPay, Maestro
    else:
        ok = False
    return ok and _luhn(d)


# A service's own token printed bare: a short lower-case prefix and an underscore before 32-64
# hex digits (``rw_9414bc…``, ``acme_live_3f…``), the shape many in-house and smaller services
# issue.  Found by its underscore and hex run (one C scan), then the prefix is checked.
_HEX_TAIL = _lazy(rb"_[0-9a-f]{32,64}(?![0-9A-Za-z_-])")
_TOKEN_PREFIX = _lazy(rb"(?<![0-9A-Za-z_./-])[a-z][a-z0-9]{1,9}(?:_[a-z][a-z0-9]{1,9})?\Z")


def _prefixed_token_spans(data: bytes, spans: list[_Span]) -> None:
    for m in _HEX_TAIL.finditer(data):
        s = m.start()
        head = _TOKEN_PREFIX.search(data, max(0, s - 24), s)
        tail = data[m.start() + 1:m.end()]
        if head is None or not (any(c in b"abcdef" for c in tail) and sum(c in b"0123456789" for c in tail) >= 4):
            continue
        spans.append((head.start(), m.end(), _MARKER["prefixed_token"]))


def _card_spans(data: bytes, spans: list[_Span]) -> None:
    folded = data.translate(_CARD_FOLD)
    n, done = len(data), 0
    for hint in _CARD_HINT.finditer(folded):
        s = hint.start()
        if s < done:
            continue
        while s > 0 and (_isdigit(data, s - 1) or data[s - 1] in b" -" and _isdigit(data, s - 2)):
            s -= 1  # back to the start of the run of digit groups
        run = _DIGIT_RUN.match(data, s)
        if run is None:
            continue
        e = done = run.end()
        if s > 0 and (data[s - 1] in _CARD_EDGE or data[s - 1] == 0x2E and _isdigit(data, s - 2)):
            continue  # inside an identifier, a hash, a URL path or a decimal
        if e < n and (data[e] in _CARD_EDGE or data[e] == 0x2E and _isdigit(data, e + 1)):
            continue
        groups = [g.span() for g in _CARD_GROUP.finditer(data, s, e)]
        if len(groups) > 12:
            continue  # a table of numbers (od, a hexdump), not a card
        i = 0
        while i < len(groups):  # the longest run of whole groups that is a card
            best, digits = -1, b""
            for j in range(i, len(groups)):
                digits += data[groups[j][0] : groups[j][1]]
                if len(digits) > 19:
                    break
                if _card_ok(digits, j > i):
                    best = j
            if best >= 0:
                spans.append((groups[i][0], groups[best][1], _MARKER["credit_card"]))
                i = best + 1
            else:
                i += 1


# ---------------------------------------------------------------------------------------------
# 3. Generic credentials → [redacted], keeping the name and the structure. A keyword (found on
#    the lowered copy from a rare letter of it, in the same regex as the shapes with that
#    anchor) must be followed by the rest of a name, an optional closing quote and a separator;
#    a look-ahead drops the commonest code values (None, calls, attribute chains) in C. Then
#    _keyword_span reads the whole name and the value and decides.

# "is" after a name in the languages whose names for a password are read (unescape): "la password
# è X", "das Passwort ist X", "la contraseña es X", "le mot de passe est X", "lösenordet är X"
_COPULA = rb"(?:is|was|ist|est|es|\xc3\xa8|\xc3\xa9|\xc3\xa4r|er|jest)"
_COPULAS = frozenset((b"is", b"was", b"ist", b"est", b"es", "è".encode(), "é".encode(), "är".encode(), b"er", b"jest"))
_NAME_REST = rb"[a-z0-9_-]{0,40}+(?:[\"'`]|\\[\"'])?\]?"
_FOR = (rb"(?:for|\xd0\xbe\xd1\x82|\xd0\xb4\xd0\xbb\xd1\x8f|de|da|do|del|della|di|f\xc3\xbcr|zur|zum|von|voor|van"
        rb"|dla|pour|per|para|f\xc3\xb6r|till|i\xc3\xa7in)")  # (от, для, für, för, için)
# "A temporary password is generated for root@localhost: X" (MySQL's first start), "the
# password has been reset for admin: X"
_DONE = rb"(?:(?:is|was|has|have|been|generated|set|reset|changed|created|updated)[ \t]+){0,3}"
# = : => := ?= -> →, <password>x, prose ("password is x"), a call's next argument
# (setenv("API_KEY", "x")) and a call's own argument (setPassword("x"), PASSWORD('x')).
# (a name in markdown emphasis, as an assistant's summary writes it: "**Password:** X",
# "**API_TOKEN** = X", "*password*: X": the stars are the separator's)
_SEP = (rb"(?P<sep>[ \t]*+(?:\*\*?[ \t]*(?=[:=]))?(?:=>|:=|\?=|=(?![=~])|:(?![:/])|->|\xe2\x86\x92)"
        rb"(?:(?<=:)\*\*?(?=[ \t]))?[ \t]*+|>(?=[^<\s])"
        # "the password for the staging db: X", "token for CI is X" (_keyword_span: prose only);
        # the same in the languages whose names for a password are read (unescape): "Пароль от
        # базы: X", "contraseña de la base: X", "Passwort für die DB: X"
        rb"|[ \t]+" + _DONE + _FOR + rb"[ \t]+(?:[a-z0-9_.@\x80-\xff-]{1,40}[ \t]+){0,3}?(?:[a-z0-9_.@\x80-\xff-]{1,40}"
        rb"|'[a-z0-9_.@/:~\x80-\xff-]{1,200}')"  # (ssh-add's "Enter passphrase for key '/home/…/id_ed25519': X",
        # git's "Password for 'https://bob@github.com': X")
        rb"(?:[ \t]*:(?![:/])|[ \t]+(?:is|was))[ \t]+"
        rb"|[ \t]+" + _COPULA + rb"[ \t]+|[ \t]*,[ \t]*(?:(?<=[\"'],)\r?\n[ \t]*)?(?=[bru]?\\?[\"']|[^\s\"'\[\](){},]{3,256}[ \t]*\])|\((?=[ \t]*[bru]?[\"'])"
        # a prompt's aside before its colon: "Token (will be hidden): X", "Enter your token
        # (input will not be visible): X"
        rb"|[ \t]+\((?=[a-z])[^()\n:]{1,60}\)[ \t]*:(?![:/])[ \t]+"
        # Kotlin's pair: mapOf("password" to "x") (a quoted name, then a quoted value)
        rb"|(?<=[\"'])[ \t]+to[ \t]+(?=[\"']))")
# "--token VALUE", "-storepass VALUE", .netrc's "password VALUE", "set -gx API_KEY VALUE",
# redis' "AUTH VALUE": a space as the separator (_keyword_span says when that holds)
_FLAG = (rb"(?:\.[a-z0-9_-]+)?(?P<flag>[ \t]+)"  # (poetry's pypi-token.pypi VALUE)
         rb"(?![=:]|(?:is|was|and|or|for|in|to|the|of|not|from|with|if|on|a)[ \t.,;:])"
         # a value after a space has more than letters ("token expired" is prose; a word of
         # letters only is no flag's value either, see _keyword_span), or comes second (AUTH u p)
         rb"(?=[^\s]*[^a-z\s]|[a-z]+[ \t]+[^\s]*[^a-z\s])")
_NOT_CODE = (rb"(?!(?:none|null|nil|true|false|undefined)(?![\w.])|(?:await|new|yield|typeof)\s"
             rb"|(?:self|this|os|process|settings|config|cfg|conf|env|request|req|ctx|args|kwargs"
             rb"|options|opts|props|params|app|secrets|credentials|creds|auth)\.(?!com\b|org\b|io\b|net\b)"
             rb"|[a-z_][a-z0-9_]*+\()")  # (attribute chains: _secret_value)
# Atomic: once "=" or ":" has matched, a code value must not fall back to the space separator.
# …or no separator at all, where the name is itself a value ("- name: DB_PASSWORD" then
# "value: …"): _name_value looks for its value field.
_NAME_AS_VALUE = rb"(?P<nv>(?=[ \t]*(?:[\r\n,}{]|/?>)|[ \t]+-{0,2}(?i:value)(?![a-z])))"
# …or a table's header cell (a tab, a bar or a box's bar after it, or two spaces before the
# next column's name): _column_rows reads the column under it; not a name/value pair
_HEADER_CELL = rb"(?P<hd>(?=[ \t]*[|\t]|[ \t]*\xe2\x94\x82|[ \t]{2,}[a-z]))"
_FOR_SEP = _lazy(rb"[ \t]+" + _DONE + _FOR + rb"[ \t]")
_KEYWORD_TAIL = (rb"(?>" + _NAME_REST + rb"(?:" + _SEP + rb"(?=[^\n])" + _NOT_CODE + rb"|" + _NAME_AS_VALUE
                 + rb"|" + _FLAG + rb"(?=[^\n])" + _NOT_CODE + rb"|" + _HEADER_CELL + rb"))")
# anchor → keywords (after the anchor), on the lowered copy
_KEYWORDS: dict[bytes, bytes] = {
    # token, *key with a qualifier (api_key, accessKey), cookie
    b"k": rb"(?:en(?<=token)(?!s[^a-z_])|ey(?<=key)(?!error)|ie(?<=cookie)|(?<=psk)(?<![a-z]psk))",  # (+ a Wi-Fi psk)
    b"cr": rb"(?:et(?<=secret)(?!keyref|s?name)|edential)",  # secret, credential
    # password, passwd, passphrase, pass, pwd (not passed, passing, passage, passive, passport …)
    b"p": rb"(?:ass(?!ed|es[^\w]|ing|age|enger|ive|port|ion|through|ivity|able)(?:word|wd|phrase)?|wd|w(?![a-z0-9]))",
    b"h": rb"(?:(?<=auth)(?!or(?!iz))|mac(?==))",  # auth, authorization (not author); hmac= (in a query)
    b"g": rb"(?<=sig)(?:nature)?",  # ?sig=, &signature=, X-Amz-Signature= (in a query: _keyword_span)
}

# Passwords in URLs: scheme://user:PASSWORD@host, where PASSWORD may hold / # @ ? : (unencoded,
# as people type them): the password ends at the first @ that a host follows.
_URL_HOST = _lazy(rb"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.~-]+)(?::\d*)?(?=[/?#\s\"'<>,;)\]]|\Z|\\n)")
_URL_HOST_ENCODED = _lazy(rb"(?i)[A-Za-z0-9_.~-]+(?:%3A\d+)?(?=%2F|%3F|%23|&|[\s\"'<>]|\Z)")
_URL_REST = _lazy(rb"[^ \t\r\n\"'<>`]{0,2048}")
_URL_REST_ENCODED = _lazy(rb"[^ \t\r\n\"'<>`&]{0,2048}")
_PORT_PATH = _lazy(rb"\d+(?:/|\Z)")
_HOST_PORT = _lazy(rb"[A-Za-z0-9_.~-]+:\d{1,5}(?=[/?#\s\"'<>,;)\]]|\Z)")
# curl -u user:PASSWORD / --user user:PASSWORD
_CURL_USER = _lazy(rb"-u(?P<long>ser)?(?:[ \t]+|=)[\"']?[^\s:\"'$\[\]]+:(?P<v>[^\s\"']+)")

_WORDS = _lazy(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_WORDS = frozenset(
    "password passwd passwords passphrase pwd pw pass secret token credential credentials auth "
    "passwort passord psk "  # (German, Norwegian: other languages' names are read as "password", aletheia.unescape)
    "authorization cookie apikey accesskey secretkey privatekey authkey authtoken accesstoken "
    "refreshtoken idtoken apitoken sshpass smbpass requirepass masterauth storepass keypass "
    "srcstorepass deststorepass srckeypass destkeypass passin passout kspass creds "
    "sessionid sessiontoken jsessionid phpsessid privkey".split()
)
_SECRET_ENDINGS = ("password", "passwd", "secret", "token", "apikey", "accesskey", "secretkey", "passwort")
_KEY_QUALIFIERS = frozenset(
    "api access secret private auth signing encryption master client account subscription "
    "app service admin deploy session shared storage root license webhook consumer hmac jwt "
    "aes crypt cipher fernet totp otp mfa preshared psk gossip sign product activation "
    "serial decryption unseal recovery priv".split()
)
# A name whose last word is one of these holds something *about* a secret, not the secret.
_NOT_SECRET_LAST = frozenset(
    "file files path paths dir directory folder url uri urls endpoint host hostname name names "
    "ref type types kind id ids count counts len length size limit limits max min expiry expires "
    "expiration expire exp ttl lifetime in env var variable field fields prompt hint label "
    "placeholder required enabled disabled enable disable mode format timeout version used usage "
    "window policy provider providers method methods scheme strategy source store manager schema "
    "class backend rotation scope scopes issuer algorithm alg regex pattern validator validation "
    "reset changed updated created at stdin stdout command cmd helper prefix suffix index idx "
    "position pos offset budget cost price rate ratio per total fn func function callback handler "
    "factory getter setter level levels arn location bits hash hashed hasher salt rounds "
    "confirmation strength widget input form dialog button text message msg error errors "
    "namespace namespaces time timestamp date ts info header headers code codes status state "
    "reason description desc detail details request response result grant flow service client "
    "str string pointer ptr".split()
)
_NOT_SECRET_FIRST = frozenset(
    "max min num n total count has is use no reset forgot validate check verify generate get "
    "require allow show hide toggle enable disable invalid missing existing".split()
)
_LAST_ONLY = frozenset("pass auth pwd pw cookie psk".split())
_KEY_NOT_SECRET = frozenset(
    b"public host primary foreign sort partition hash range cache row index composite unique "
    b"dictionary map lookup routing object idempotency translation ssh gpg pgp fingerprint "
    b"publishable".split()
)
_CONTEXT_KINDS = {"twilio": "twilio", "heroku": "heroku", "mailgun": "mailgun",
                  "discord": "discord", "databricks": "databricks"}

_PLACEHOLDER_WORDS = frozenset(
    "none null nil undefined true false yes no on off empty required optional str string int "
    "bytes bool boolean any object unknown secret secrets password passwd token key value "
    "changeme change_me change-me replaceme replace_me replace-me todo tbd fixme placeholder "
    "example redacted hidden masked omitted unset default inherit prompt n/a na void await new "
    "yield lambda function async this self not typeof require sensitive pass foo bar baz qux "
    "basic bearer digest read write".split()
)
# Values that are references, templates, placeholders, URLs, paths or versions (lowered).
_PLACEHOLDER = _lazy(
    rb"<[^<>]*>|\{|\$|#\{|\[|\(|\*\("  # <token> {{ x }} {x} {…} $X #{x} [hidden] (none) *(optional)
    rb"|%[sd]\Z|%\(\w+\)[sd]|%\w+%\Z|[*&][a-z_][\w-]*\Z|![a-z]"  # %s %(pw)s %PW% *alias !tag
    rb"|your[_\-. ]|(?:replace|change|insert|enter|add|put|set)[_-]?(?:me|this|your|with|here)"
    rb"|.*(?:x{4,}|\*{3,}|\.\.\.|\xe2\x80\xa6)|.*[_\s-]here\Z"  # xxxx **** ... …  key_here
    rb"|[a-z][a-z0-9+.-]*://|v?\d+(?:\.\d+)+\Z|[\w .-]*:\Z|[^:\s]*%[-#0 +]?\d*[sdr][^:\s]*:\Z"  # a URL, a version, another label (a format)
    rb"|#[0-9a-f]{3,8}\Z|0x[0-9a-f]{1,31}\Z|(?:basic|bearer|digest|token|bot)\s*\Z"  # colour, hex, scheme
    rb"|[a-z]+\?\Z"  # a type in a schema: "string?"
    rb"|@[a-z][\w.]*\(|projects/[^/\s]+/secrets/|arn:aws[\w-]*:secretsmanager:"  # secret-store refs
)
# A path, not a token that happens to start with "/": a known root, or no digits at all.
_PATH = _lazy(
    rb"(?:~|\.\.?)?/(?:home|users|tmp|etc|var|usr|opt|run|srv|mnt|data|app|root|proc|dev|bin"
    rb"|sbin|lib|volumes|private|workspace|work|code|src)(?:/|\Z)|(?:~|\.\.?)?/[^0-9]*\Z|[a-z]:\\"
)
_AUTH_SCHEME = _lazy(  # "weak" schemes are also ordinary words: only after Authorization
    rb"(?i:bearer|basic|digest|bot|negotiate|ntlm"
    rb"|(?P<weak>token|apikey|api-key|key|sso-key|otp|jwt))[ \t]+(?=[^\s])"
)
_ANNOTATION = _lazy(
    rb"[A-Za-z_][\w.]*(?:\[[^\n=]*\])?(?:[ \t]*\|[ \t]*[A-Za-z_][\w.]*(?:\[[^\n=]*\])?)*"
    rb"[ \t]*=(?!=)[ \t]*"
)
_CODE = _lazy(rb"[A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)*(?P<tail>[(\[]|!\(|::|\Z)")
_PROSE = _lazy(rb"[A-Za-z_][A-Za-z_-]*[ \t]+[a-z('\"`\[]")  # "token: fix stream", ":param x: The …"
_MAX_VALUE = 8192  # a value is read at most this far: no credential is longer
_UNQUOTED = _lazy(rb"[^\s,;&)}\]'\"`\\<>]{0,%d}" % _MAX_VALUE)
_COOKIE_PAIR = _lazy(rb"(?P<name>[^=;,\s\[\]]+)=(?P<v>[^;,\r\n\"'\[\]<]*)")
_COOKIE_ATTRS = frozenset(
    b"path domain expires max-age samesite secure httponly priority partitioned version".split()
)
_AWS_SECRET = _lazy(rb"[A-Za-z0-9/+=]{40}\Z")
_UTF8_TAIL = bytes(range(0x80, 0xC0))  # continuation bytes: not counted as characters
_IDENT = _lazy(rb"[A-Za-z_][A-Za-z0-9_]*\Z")
_ANNOTATED = _lazy(rb"\w:[ \t]*\Z")
_LABEL = _lazy(rb"[a-z_]+[\"']")
_VERSIONED = _lazy(r"-\d+(?:[.-]\d+)*\Z")
# "x-bundled", "invalid_request", "__root__", "X-Xet-Access-Token": names, not secrets
_NAME_LIKE = _lazy(rb"[a-z_]+(?:[-_.][a-z]+)+_*\Z|__\w+__\Z|[A-Z][a-z]*(?:-[A-Z][a-z]*)+\Z")
_PROSE_WORDS = frozenset(
    b"the a an if whether to for of optional required used use this your indicates see when "
    b"which that must should will can is are set".split()
)
_PASSWORD_WORDS = frozenset("password passwd passwords passphrase pwd pw pass secret".split())
# Names whose value may follow a qualifier ("the password for the staging db: X"): not a bare
# key ("key for sorting: created_at").
_QUALIFIED_WORDS = _PASSWORD_WORDS | {"token", "credential", "credentials", "passwort", "passord"}
_TYPE_NAME = _lazy(rb"[A-Z][a-z]+[A-Z][A-Za-z]*\Z")  # AuthType, AuthenticationInfo


# ---------------------------------------------------------------------------------------------
# Scan plan: one regex per anchor. Each starts with its anchor literal; a shape alternative
# opens its row's group after its own first character, so re's branch skips it by that
# character alone. Shapes come before the keywords, so "AccountKey=…" is a shape, not a name.


def _shape_alternative(row: int) -> bytes:
    rest = _SHAPE_TABLE[row][3].replace(b"(?P<v>", b"(?P<v%d>" % row)
    head = b""
    if rest[:1].isalnum() or rest[:1] in (b"-", b"_"):
        head, rest = rest[:1], rest[1:]
    elif rest[:2] in (b"\\.", b"\\-"):
        head, rest = rest[:2], rest[2:]
    return head + b"(?P<a%d>%s)" % (row, rest)


# What can follow each anchor in any of its alternatives: one cheap check that turns away runs
# like "kkkk", "xxxx" or base64 "AAAA" before the branch tries every alternative.
_FOLLOW = {
    b"k": rb"[-_.eirsu0-9a-fqt]|/(?<=gwebhook/)|w(?<=backw)|[ ](?<=o k )|(?<=psk)(?<![a-z]psk)|(?<=bw9uz29k)yi|(?<=add-mask)::",
    b"g": rb"[hilos.=]|r(?=afana)|[ \t](?<=log[ \t])in|n(?<=sign)|e(?=ms_|tconnection)|d(?<=figd)|[ \t](?<=encrypt_string[ \t])|(?<=cg)9zdgdyzxm",
    b"x": rb"[oap]|(?<=bx)lzcww6|(?<=-[abeoprs]xox)(?![\w-])",
    b"h": rb"[fvstmip]|(?<=auth)|g(?<=_[pousr]hg)",
    b"p": rb"ass|wd?|erator[ \t]+unseal|rv(?<=[tuvxyz]prv)|lg(?<=-t[at]plg)|[:_-]|[ .](?=a[ .]s)|>(?<=ftp>)|(?:in|uk)2?(?![a-z0-9])|ul-|i[_0-9a-f]|m_|plx-|scale_|lus|laintext|gpass|g_(?<=npg_)|do\(|\.(?<=dp\.)|at-(?<=cfpat-)|at[a-z0-9]{14}\.|bkdf2_|[ \t](?<=dp[ \t])",
    b"A": rb"[BCgIKSTDzQ]|A(?<=:AA|BAA)",
    b"cr": rb"e",
    b"$": rb"\$?(?:[1256y]|apr1|argon2(?:id|i|d))\$|\$?2[abxy]\$",  # (a shell's $ and $HOME are common)
}


def _scan_plan() -> tuple[tuple[re.Pattern[bytes], bool, bytes], ...]:
    """One regex per anchor, compiled on first use: a text without the anchor (most hook
    events lack "Q~", "ya29." or "jwt.") neither compiles nor runs it."""
    anchors = dict.fromkeys([row[0] for row in _SHAPE_TABLE] + list(_KEYWORDS))
    plan = []
    for anchor in anchors:
        alts = [_shape_alternative(i) for i, row in enumerate(_SHAPE_TABLE) if row[0] == anchor]
        if anchor in _KEYWORDS:
            alts.append(_KEYWORDS[anchor] + _KEYWORD_TAIL)
        follow = b"(?=" + _FOLLOW[anchor] + b")" if anchor in _FOLLOW else b""
        rx = _lazy(re.escape(anchor) + follow + b"(?:" + b"|".join(alts) + b")")
        plan.append((rx, not anchor.isupper(), anchor))  # lowercase anchors run on the lowered copy
    return tuple(plan)


# Where a shape matched but turned out not to be one, the same place may still start a name
# (a second run, which sees a marker nearby, would find it): these match only the names.
_KEYWORD_ONLY = {
    anchor: _lazy(re.escape(anchor) + rx + _KEYWORD_TAIL) for anchor, rx in _KEYWORDS.items()
}


_SCANS = _scan_plan()


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(name)]


def _secret_name(name: str) -> bool:
    """Does this variable/key/header name hold a credential (DB_PASSWORD, apiKey, X-Api-Key)?"""
    words = _words(name)
    if words[-2:] in (["secret", "string"], ["secret", "binary"]):
        return True  # AWS Secrets Manager's SecretString (--secret-string): the secret itself
    if not words or words[-1] in _NOT_SECRET_LAST or words[0] in _NOT_SECRET_FIRST:
        return False
    if words[-1] == "key" and len(words) > 1 and words[-2] in ("password", "passwd", "token"):
        return False  # adminPasswordKey: the key (in a Secret) that holds the password
    prev = ""
    for i, w in enumerate(words):
        if w in _LAST_ONLY and i < len(words) - 1:
            pass  # PASS_STMT, auth_time, pwd_file: "pass"/"auth" lead a name about something else
        elif w in _SECRET_WORDS or w.endswith(_SECRET_ENDINGS):
            return True
        if w in ("key", "keys") and prev in _KEY_QUALIFIERS or w == "phrase" and prev == "pass":
            return True  # (api_key; pass_phrase: OCI's config)
        prev = w
    return False


def _context_kind(name: str, value: bytes) -> str | None:
    words = _words(name)
    for w in words:
        kind = _CONTEXT_KINDS.get(w)
        if kind:
            return kind
    if "secret" in words and ("aws" in words or "access" in words) and _AWS_SECRET.match(value):
        return "aws_secret_access_key"
    return None


def _alnum_only(v: bytes) -> bytes:
    return bytes(c for c in v.lower() if c in _TOKEN_CHARS and c not in b"_-")


def _random_token(v: bytes) -> bool:
    """Looks generated: 16+ characters, no spaces, two of digits, upper and lower case."""
    if len(v) < 16 or b" " in v or _NAME_LIKE.match(v):
        return False
    return bool(_HAS_DIGIT(v)) + bool(_HAS_UPPER(v)) + bool(_HAS_LOWER(v)) >= 2


def _is_marker(v: bytes) -> bool:
    return v.startswith(b"[redacted") or v.startswith(_PRIVATE)


def _placeholder(v: bytes) -> bool:
    low = v.lower()
    return (low.decode("latin-1") in _PLACEHOLDER_WORDS or _PLACEHOLDER.match(low) is not None
            or _PATH.match(low) is not None)


# A password made of a capitalised word, a dot, a word and digits (Garden.river2716): no module
# or object is called that way, and no attribute ends in a year-like number.
_WORDS_AND_DIGITS = _lazy(rb"[A-Z][a-z]{2,}\.[a-z]{2,}[0-9]{2,}[!?$#%&*]?\Z")


def _secret_value(v: bytes, *, quoted: bool, code: bool, name: str, literal: bool = False) -> bool:
    """Is this value a literal credential (not code, a reference, a placeholder or empty)?
    ``literal``: a command line's word, where a dotted or bare word is no attribute."""
    if len(v) < 3 or len(v.translate(None, _UTF8_TAIL)) < 3 or _is_marker(v) or _placeholder(v):
        return False
    if v.isdigit() and not _PASSWORD_WORDS.intersection(_words(name)):
        return False  # token=11098, OBJECT_LEVEL_AUTHORIZATION = 906: ids, not secrets
    if quoted:
        if _NAME_LIKE.match(v) or (_IDENT.match(v) and not _HAS_DIGIT(v)
                                   and (v.decode("latin-1").lower() == name.lower()
                                        or _secret_name(v.decode("latin-1")))):
            return False  # an enum or a key name: INVALID_AUTH = "invalid_auth", "x-api-key"
        if v.count(b" ") >= 3 and (v.endswith(b".") or b"`" in v):
            return False  # a help text
        if b" " in v and _alnum_only(v) == _alnum_only(name.encode("latin-1")):
            return False  # a label: {"api_key": "API key"}
    elif literal:
        if v[:1] == b"-" or _IDENT.match(v) and _secret_name(v.decode("latin-1")):
            return False  # --api-key API_KEY: a name in a usage line
    else:
        m = _CODE.match(v)
        if m:
            if m.group("tail") or (b"." in v and not any(map(_mixed, v.split(b"."))) and not _WORDS_AND_DIGITS.match(v)) \
                    or b"::" in v:
                return False  # a call, a subscript or an attribute (not a dotted token, not Tiger.window2188)
            text = v.decode("latin-1")
            if text.lower() == name.lower().lstrip("-") or _secret_name(text) and not _random_token(v):
                return False  # another variable: password=password, token=ACCESS_TOKEN
            if code and not _HAS_DIGIT(v):
                return False  # `password = hunter` in code is a variable, not a literal
    return True


def _name_start(data: bytes, i: int) -> int:
    lo = max(0, i - 64)
    s = lo + len(data[lo:i].rstrip(_NAME_CHARS_BYTES))
    # A name right after an escape written out (printf 'SSID = "x"\nWIFI_PASSWORD = "…"', echo -e
    # '…\tAPI_KEY=…') starts after the escape's letter: "nWIFI_PASSWORD" reads as a count (n_…).
    if s > 0 and data[s - 1] == 0x5C and data[s : s + 1] in (b"n", b"t", b"r") and s + 1 < i:
        return s + 1
    return s


def _line_end(data: bytes, p: int, limit: int | None = None) -> int:
    """End of the line at p, looking at most _MAX_VALUE (or up to ``limit``) ahead."""
    stop = min(len(data), p + _MAX_VALUE if limit is None else limit)
    e = data.find(b"\n", p, stop)
    return stop if e < 0 else e


def _close_quote(data: bytes, p: int, quote: bytes, eol: int) -> int:
    """Index of the closing quote after position p (skipping backslash escapes), or eol."""
    while True:
        e = data.find(quote, p, eol)
        if e < 0:
            return eol
        k = e
        while k > 0 and data[k - 1] == 0x5C:
            k -= 1
        if (e - k) % 2 == 0 or len(quote) == 2:
            return e
        p = e + 1


def _value_at(data: bytes, p: int, limit: int) -> tuple[int, int, bool]:
    """(start, end, quoted) of the value that starts at p; nothing at or after ``limit`` is read."""
    n = min(len(data), limit)
    if p + 1 < n and data[p] in b"bBrRuU" and data[p + 1] in b"\"'":
        p += 1  # a Python string prefix
    if p + 1 < n and data[p] == 0x5C and data[p + 1] in b"\"'":
        quote = data[p : p + 2]  # an escaped quote: JSON inside a JSON string
        return p + 2, _close_quote(data, p + 2, quote, _line_end(data, p, n)), True
    if p < n and data[p] in b"\"'":
        return p + 1, _close_quote(data, p + 1, data[p : p + 1], _line_end(data, p, n)), True
    if p < n and data[p] == 0x60:  # `command substitution`, or a JS template literal
        close = data.find(b"`", p + 1, min(n, p + _MAX_VALUE))
        inner = data[p + 1 : close] if close > p else b""
        if inner and not any(c in inner for c in b" \t\n$"):
            return p + 1, close, True
        if inner.startswith((b"Bearer ", b"Basic ", b"Token ", b"token ")) and b"$" not in inner:
            return p + 1, close, True
        return p, p, True
    m = _UNQUOTED.match(data, p, n)
    return p, (m.end() if m else p), False


def _at_line_start(data: bytes, i: int, floor: int) -> bool:
    j = i
    while j > floor and data[j - 1] in b" \t":
        j -= 1
    if j > floor + 1 and data[j - 2 : j] == b"- ":  # a YAML list item
        j -= 2
        while j > floor and data[j - 1] in b" \t":
            j -= 1
    return j == 0 or (j > floor and data[j - 1] == 0x0A)


def _cookie_spans(data: bytes, start: int, end: int, first_only: bool, blocked: _Blockers,
                  spans: list[_Span]) -> None:
    """The values of ``name=value; …`` pairs, read between blockers (as a second run would)."""
    for seg_start, seg_end in blocked.gaps(start, end):
        for m in _COOKIE_PAIR.finditer(data, seg_start, seg_end):
            raw = m.group("v")
            v = raw.strip()
            if m.group("name").lower() not in _COOKIE_ATTRS and _cookie_secret(m.group("name"), v):
                vs = m.start("v") + len(raw) - len(raw.lstrip())
                spans.append((vs, vs + len(v), _REDACTED))
            if first_only:
                return


_COOKIE_SECRET_WORDS = frozenset(
    "sess session sessionid sessid sid auth token jwt login remember csrf xsrf secret key "
    "credential credentials identity phpsessid jsessionid ticket sso saml access refresh oauth "
    "idtoken id_token authenticity".split()
)


def _cookie_secret(name: bytes, value: bytes) -> bool:
    """Does this cookie carry a credential? A session-like name, or a value that looks random
    (``theme=dark; lang=en`` does not)."""
    v = value.strip()
    if not v or _is_marker(v) or _placeholder(v):
        return False
    words = _words(name.decode("latin-1"))
    if any(w in _COOKIE_SECRET_WORDS or w.endswith("sess") or "session" in w for w in words):
        return True
    return len(v) >= 32 or len(v) >= 16 and bool(_HAS_DIGIT(v)) and bool(_HAS_LOWER(v) or _HAS_UPPER(v))


class _Blockers:
    """What the first phase replaces (shapes, cards, private blocks) and the markers already in
    the text. Names and values of the second phase stop at them, so a second run, which sees
    markers where the first saw secrets, reads the same names and values: that is what keeps
    redact idempotent."""

    def __init__(self, low: bytes, spans: list[_Span]) -> None:
        found = [(s, e) for s, e, _ in spans] + [m.span() for m in _MARKERS_IN_TEXT.finditer(low)]
        found.sort()
        self.starts: list[int] = []
        self.ends: list[int] = []
        for s, e in found:
            if self.ends and s <= self.ends[-1]:
                self.ends[-1] = max(self.ends[-1], e)
            else:
                self.starts.append(s)
                self.ends.append(e)

    def end_of(self, pos: int) -> int:
        """The end of the blocker that contains pos (pos itself if none does)."""
        i = bisect.bisect_right(self.starts, pos) - 1
        return self.ends[i] if i >= 0 and pos < self.ends[i] else pos

    def inside(self, pos: int) -> bool:
        i = bisect.bisect_right(self.starts, pos) - 1
        return i >= 0 and pos < self.ends[i]

    def next_start(self, pos: int, limit: int) -> int:
        """The first blocker that starts after ``pos`` and before ``limit``, else ``limit``."""
        i = bisect.bisect_right(self.starts, pos)
        return min(limit, self.starts[i]) if i < len(self.starts) else limit

    def gaps(self, start: int, end: int) -> list[tuple[int, int]]:
        """The parts of [start, end) outside every blocker."""
        out = []
        i = max(0, bisect.bisect_right(self.starts, start) - 1)
        pos = start
        while pos < end:
            if i < len(self.starts) and self.starts[i] <= pos < self.ends[i]:
                pos = self.ends[i]  # inside this one: skip it
                i += 1
                continue
            while i < len(self.starts) and self.ends[i] <= pos:
                i += 1
            stop = min(end, self.starts[i]) if i < len(self.starts) else end
            if stop > pos:
                out.append((pos, stop))
            pos = stop
        return out

    def line_end(self, data: bytes, pos: int) -> int:
        """End of the line at pos, not counting newlines inside blockers (a marker has none)."""
        stop = min(len(data), pos + _MAX_VALUE)
        for a, b in self.gaps(pos, stop):
            e = data.find(b"\n", a, b)
            if e >= 0:
                return e
        return stop

    def last_end(self, pos: int, floor: int) -> int:
        """The end of a blocker that ends in (floor, pos], else ``floor``."""
        i = bisect.bisect_right(self.starts, pos) - 1
        return self.ends[i] if i >= 0 and floor < self.ends[i] <= pos else floor


class _Names:
    """Where the names of the keyword matches start, to end a value at the next one."""

    def __init__(self, data: bytes, anchors: list[int]) -> None:
        self.data, self.anchors = data, anchors

    def after(self, pos: int) -> int:
        i = bisect.bisect_right(self.anchors, pos)
        return _name_start(self.data, self.anchors[i]) if i < len(self.anchors) else len(self.data)


_UUID_VALUE = _lazy(rb"[\"']?([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(?![\w-])")
_MARKERS_IN_TEXT = _lazy(rb"\[(?:redacted(?::[a-z_]+)?|private)\]")
_Keyword = tuple[int, int, bytes | None, bytes | None]  # match start, end, separator, flag


_YAML_BLOCK = _lazy(rb"[|>][-+]?[0-9]?[ \t]*\r?\n")


def _keyword_span(data: bytes, kw: _Keyword, blocked: _Blockers, names: _Names, floor: int,
                  later: list[int], spans: list[_Span]) -> int:
    """Add the span of this name's value if it is a credential; return where a redacted single
    value ends (0 otherwise), so keywords inside it are skipped. Nothing before ``floor`` (the
    end of the last span) is looked at: a second run sees a marker there."""
    start, end, sep, flag = kw
    if end == start or blocked.inside(start):
        return 0  # only a name (see _scan), or inside a secret or a marker
    name_start = max(floor, blocked.last_end(start, _name_start(data, start)))
    floor = max(floor, blocked.last_end(name_start, 0))
    name_end = end - len(sep or flag or b"")
    name = data[name_start:name_end].decode("latin-1").rstrip("\"'`]\\")
    lo = max(0, name_start - 10)
    before = (b"]" + data[floor:name_start]) if floor > lo else data[lo:name_start]
    if sep == b"":
        return _name_value(data, name, name_start, end, floor, blocked, spans) if _secret_name(name) else 0
    kind = None
    literal = False  # a shell word: no attribute chains there
    last_word = False  # redis' AUTH user PASSWORD: the value is the last word
    if sep is None:  # "--password VALUE", .netrc "password VALUE", SQL "PASSWORD 'VALUE'"
        if flag is None:
            return 0
        netrc = data[max(floor, name_start - 200) : name_start]
        if name.startswith("-") and len(name) > 2 and before[-1:] in b" \t=[":
            literal = True  # --password VALUE, -storepass VALUE, Ruby's %w[--token VALUE]
        elif before[-1:] == b":" and before[-2:-1] in b" \t({[,\n" and data[end : end + 1] == b'"':
            literal = True  # a Clojure or Lisp keyword and its string: {:api-key "…"}, (:secret "…")
        elif _setter_before(data, name_start, floor):
            literal = True  # set -gx API_KEY VALUE, npm config set //host/:_authToken VALUE
        elif name == "AUTH" and _line_head(data, name_start, floor):
            literal = last_word = True  # redis: AUTH [user] PASSWORD
        elif (data[end : end + 1] != b"'" or name.lower() not in ("password", "pwd", "passwd")) \
                and not _quoted_word(data, end, name):
            if b"machine" not in netrc:
                if not (_prose_credential(name.encode("latin-1"), data, end)
                        or _directive(data, name_start, end, floor)):
                    return _auth_pair(data, name, end, blocked, spans)
                literal = True  # "log in with password Zx9vQ2mK7pL", "secret 3f9a…, token Pw…"
            elif b"heroku" in netrc[netrc.rfind(b"machine") :]:
                kind = "heroku"
    elif name.startswith("-") and len(name) > 2:
        if b":" in sep:
            return 0  # keytool's -storepass:env NAME
        literal = True  # --password=VALUE
    elif before.endswith(b"${") and b":" in sep:
        return _default_value(data, name, end, blocked, spans)  # ${DB_PASSWORD:-hunter2}, ${db.password:x}
    elif before.endswith((b"${", b"://", b"[redacted:")) or (
            before.endswith(b"/") and b":" in sep and not before.endswith((b" /", b"\t/"))
            and not _sed_replacement(data, name_start)):
        return 0  # ${TOKEN:-default}, URL user info (see _URL_CREDS), image:tag, a marker's kind
    elif sep == b":" and (before.endswith(b":") or _VERSIONED.search(name)):
        return 0  # arn:aws:secretsmanager:…:secret:name, a package:arch (libsecret-1-0:amd64)
    elif (b"=" in sep and _ANNOTATED.search(before) and not before.endswith(b"$env:")
          and name[:1].isupper() and not name.isupper()):
        # the name is a type: `error: AuthorizationErrorCode = "…"` (a type is capitalised; a
        # lower-case or upper-case name after a label is the name: `app.tf: password = "…"`)
        return 0
    elif sep == b">" and not (before.endswith(b"<")
                              and data.find(b"</", end, end + _MAX_VALUE) >= 0):
        return 0  # only an XML element's text: <password>…</password>
    weak = False  # a bare "key": only a random-looking value (or one in a URL's query)
    if name.lower().endswith("cookies") and sep and data[end : end + 1] == b"{":
        close = data.find(b"}", end, end + 4096)  # cookies={"sessionid": "…"}
        for m in _DICT_PAIR.finditer(data, end, close if close > 0 else end):
            if _cookie_secret(m.group(1), m.group(2)):
                spans.append((m.start(2), m.end(2), _REDACTED))
        return 0
    if sep and b":" in sep and data[end : end + 1] == b"{" and before[-1:] in b"\"'" and _secret_name(name):
        # a map of secrets by host (composer's auth.json: "gitlab-token": {"gitlab.example.com":
        # "…"}): each host's value
        close = data.find(b"}", end, end + 4096)
        for m in _DICT_PAIR.finditer(data, end, close if close > 0 else end):
            host, value = m.group(1), m.group(2)
            if b"." in host and b" " not in host and len(value) >= 8 and b" " not in value \
                    and not _is_marker(value) and not _placeholder(value):
                spans.append((m.start(2), m.end(2), _REDACTED))
        return 0
    if not _secret_name(name):
        query = data[name_start - 1 : name_start] in (b"?", b"&", b";") and sep is not None and b"=" in sep
        w = _words(name)
        if w == ["secret", "id"] and sep and (uuid := _UUID_VALUE.match(data, end)):
            # Consul's and Vault AppRole's SecretID is the token itself (AWS' SecretId is a name)
            spans.append((uuid.start(1), uuid.end(1), _REDACTED))
            return uuid.end(1)
        if w and w[-1] in ("sig", "signature", "hmac") and (query or "amz" in w or "goog" in w):
            weak = w[-1] == "hmac"  # ?sig= (Azure SAS), X-Amz-Signature=, Signature= (CloudFront);
            # &hmac= (Shopify's callbacks): only a generated value (not ?hmac=sha256)
        elif w[-1:] == ["key"] and sep is not None and sep[-1:] != b"(" and b"," not in sep:
            prev = w[-2].encode() if len(w) > 1 else data[max(0, name_start - 24) : name_start].split()[-1:][0:1]
            if isinstance(prev, list):
                prev = prev[0].lower().strip(b"\"'#*(") if prev else b""
            if prev in _KEY_NOT_SECRET:
                return 0  # "public key: age1…", PRIMARY_KEY = "id"
            weak = not query  # STRIPE_KEY, "key": only a random-looking value
        else:
            return 0
    p = end
    if sep is not None and (sep[-1:] == b"(" or b"," in sep):
        found = _call_value(data, name, sep, before, name_end, p, blocked, spans)
        if found < 0:  # {"name": "API_KEY", "value": …}: a name field's value
            return _name_value(data, name, name_start, name_end, floor, blocked, spans)
        return found
    # A value ends where phase one's next span starts, and where another name=value starts
    # (that one is judged on its own): a second run sees the same value.
    next_name = names.after(p)
    i = bisect.bisect_right(later, p)  # a cookie's value, redacted by an earlier name
    limit = blocked.next_start(p, min(next_name, p + _MAX_VALUE, later[i] if i < len(later) else len(data)))
    opener = before[-1:]
    subscript = data[name_end - 2 : name_end] in (b'"]', b"']")  # os.environ["API_KEY"] = …
    if opener in (b'"', b"'") and data[name_end - 1 : name_end] != opener and not subscript:
        if data[p : p + 1] == opener:
            return 0  # `"Auth: ", next`: the name and separator are inside a string that ends here
        if sep == b":" and _LABEL.match(data, p, limit):
            return 0  # one token in a string: "passwd:gecos"
    words = _words(name)
    if sep is not None and _FOR_SEP.match(sep):
        if words[-1] not in _QUALIFIED_WORDS:
            return 0  # "key for sorting: created_at"
        return _prose_value(data, name, p, limit, blocked, spans)
    if words[-1] == "cookie" and sep and (b":" in sep or data[p : p + 1] in (b"\"", b"'")):
        if p < len(data) and data[p] in b"\"'":
            vs, ve, _ = _value_at(data, p, limit)
        else:
            vs, ve = p, blocked.line_end(data, p)
        _cookie_spans(data, vs, ve, name.lower().startswith("set-"), blocked, spans)
        return 0  # only the pairs' values: the names between them are still read
    if sep is not None and sep[-1:] in b" \t" and sep.split()[-1:] and sep.split()[-1] in _COPULAS:
        return _prose_value(data, name, p, limit, blocked, spans)
    if last_word:  # AUTH user PASSWORD, alone on its line
        le = _line_end(data, p)
        after = _shell_words(data, p, le)
        if len(after) not in (1, 2) or not _clear(blocked, p, le):
            return 0
        p = after[-1][0]
    sep = sep or b" "
    code = sep[:1] in b" \t" and b"=" in sep or b":=" in sep or b"=>" in sep
    colon = b":" in sep and not code
    if colon and (ann := _ANNOTATION.match(data, p)) and not (
            _HAS_DIGIT(ann.group()) and data[ann.end() - 1 : ann.end()] == b"=" and data[ann.end() - 2] not in b" \t"):
        # `password: str = "…"`: the value follows "=" (not `secret: ZIKE57EF5xa=TKm9`, a value with "=" in it)
        p, code, colon = ann.end(), True, False
    vs, ve, quoted = _value_at(data, p, limit)
    if data.startswith(b"%s", vs) or data.startswith(b"%s", p):
        return _printf_argument(data, p, spans)  # a format's directive is no value; printf's argument may be
    if not quoted and opener in (b'"', b"'") and b"=" in sep and not subscript and data[name_end - 1 : name_end] != opener:
        # putenv("API_KEY=…;]x|y…"): the name and its value are one string, which ends the value
        close = data.find(opener, ve, _line_end(data, ve, limit))
        if close > ve and not any(c in b" \t" for c in data[ve:close]):
            ve = close
    if colon and (block := _YAML_BLOCK.match(data, p)):
        # `password: |` (a YAML block scalar): the value is the line below, indented further
        head = data[data.rfind(b"\n", 0, name_start) + 1 : name_start]
        indent = len(head) - len(head.lstrip(b" \t-"))
        below = data[block.end() : _line_end(data, block.end())]
        if len(below) - len(below.lstrip(b" ")) <= indent or not below.strip():
            return 0
        vs = block.end() + len(below) - len(below.lstrip(b" "))
        ve, quoted = block.end() + len(below.rstrip()), True
        limit = max(limit, ve)
    if not quoted and data[vs : vs + 1] == b"{" and sep == b"=" and _PASSWORD_WORDS.intersection(words):
        close = data.find(b"}", vs + 1, limit)  # ODBC: PWD={…}
        if close > vs + 1 and data[vs + 1] not in b"{$":
            vs, ve, quoted = vs + 1, close, True
    scheme = _AUTH_SCHEME.match(data, vs, ve if quoted else limit)
    if scheme and scheme.group("weak") and "authorization" not in words:
        scheme = None  # "token: token payload" is prose; "Authorization: token …" is a scheme
    if scheme:  # "Authorization: Bearer …": keep the scheme, redact the credential
        if scheme.group().split()[0].lower() == b"bot":
            kind = "discord"
        if quoted:
            vs = scheme.end()
        else:
            vs, ve, quoted = _value_at(data, scheme.end(), limit)
    if blocked.inside(vs) or vs >= limit:
        return 0  # a known shape or a marker (phase one has it), or another name=value
    ve = min(ve, limit)
    value = data[vs:ve]
    in_list = not quoted and _IDENT.match(value) and ve < len(data) and data[ve] in b",)]}|"
    if in_list and (not _HAS_DIGIT(value) or colon and _HAS_LOWER(value) and value[:1].isupper()):
        return 0  # a variable or a type in a list: f(auth=auth_wfc, key: PKCS7KeyTypes)
    if colon and not quoted and name_end > name_start and data[name_end - 1] in b"\"'":
        code = True  # {"token": variable}: JSON would quote a literal, so this is code
    if literal and data.startswith((b"env:", b"file:", b"fd:", b"stdin"), vs):
        return 0  # openssl -passin env:VAR
    if literal and data.startswith(b"pass:", vs):
        vs += 5  # openssl -passin pass:SECRET
    if not quoted and data.startswith(_WRAPPER_HEADS, vs) and (wrapped := _WRAPPER.match(data, vs, limit)):
        vs, ve, quoted = _value_at(data, wrapped.end() - 1, limit)  # bytes.fromhex("…"), []byte("…")
        value = data[vs:ve]
    if not _secret_value(value, quoted=quoted, code=code, name=name, literal=literal):
        return 0
    if value[:1] in b".[\\" and _REGEX_VALUE.match(value):
        return 0  # a pattern: sed -i 's/PASSWORD=.*/PASSWORD=x/' (the value that replaces it is read on its own)
    if quoted and data.startswith(b":private]", ve + 1):
        return 0  # PHP's var_dump of a private property: ["apiToken":"Cfg":private] names its class
    if sep == b":" and not quoted and value.lower() in _TASK_VERBS:
        return 0  # rails credentials:edit, secrets:setup: a namespaced task, not a value
    if sep == b" " and value.isalpha() and value.islower():
        return 0  # "--password options", "password for": a word, not a flag's value
    if (colon or sep == b" ") and not quoted:
        if _PROSE.match(data, vs) or value.lower() in _PROSE_WORDS:
            return 0  # a sentence after a label ("token: fix stream"), not a value
        if _TYPE_NAME.match(value):
            return 0  # a type annotation: def f(auth_info: AuthInfo)
        if not scheme and _at_line_start(data, name_start, floor):  # YAML, a header: to the end
            rest = data[ve : _line_end(data, ve, limit)]
            cut = rest.find(b" #")
            ve += len((rest if cut < 0 else rest[:cut]).rstrip())
            value = data[vs:ve]
    if weak and not _random_token(value):
        return 0
    if kind is None:
        kind = _context_kind(name, value)
        if kind == "discord" and not _discord_bot_token(value):
            kind = None
    if (sed_close := _SED_CLOSE.search(data, vs + 1, ve)) and _sed_replacement(data, name_start):
        ve = sed_close.start()  # s/PASSWORD=.*/PASSWORD=X/g: the command's closing delimiter (and flags) stay
    spans.append((vs, ve, _MARKER[kind] if kind else _REDACTED))
    return ve


_TASK_VERBS = frozenset(b"show edit diff fetch setup set get list ls unset pull push add remove rm rotate "
                        b"generate create delete clear encrypt decrypt".split())


# Words after which "NAME VALUE" assigns VALUE: set -gx, setx, setenv, config set, ENV (Docker).
_SETTERS = frozenset((b"set", b"setx", b"setenv", b"ENV"))
_SETTER_WORDS = frozenset((b"set", b"setx", b"setenv", b"env", b"config", b"configure", b"--global", b"--local"))
# "config NAME VALUE" only after these tools (poetry config pypi-token.pypi TOKEN)
_CONFIG_TOOLS = frozenset((b"poetry", b"composer", b"git", b"ngrok", b"npm", b"yarn", b"pnpm", b"pip",
                           b"conda", b"cargo", b"bundle", b"gem", b"hub", b"gh", b"glab", b"heroku"))
_SETTER_FLAGS = frozenset((b"-x", b"-gx", b"-xg", b"-g", b"-u", b"-ux", b"-U", b"-Ux", b"--global",
                           b"--local", b"-l", b"--location", b"--json"))


# A regular expression's wildcard as a whole value, up to a delimiter: .*/, .+|, [^"]*/, \S+#
_REGEX_VALUE = _lazy(rb"(?:\.[*+]|\[\^?[^\]\s]{1,40}\][*+]|\\S[*+])[?]?(?:[/|#,'\"]\S*)?\Z")


_SED_CLOSE = _lazy(rb"[/|#][gipIeEmM0-9]{0,4}\Z")


def _sed_replacement(data: bytes, name_start: int) -> bool:
    """Does the name start the replacement of a sed/perl s command (s/PATTERN/NAME: …/)?"""
    delim = data[name_start - 1 : name_start]
    ls = max(data.rfind(b"\n", 0, name_start) + 1, name_start - 512)
    k = data.rfind(b"s" + delim, ls, name_start - 1)
    if k < 0 or k > ls and data[k - 1] not in b" \t'\";{":
        return False
    pattern = data[k + 2 : name_start - 1]
    return pattern.count(delim) == pattern.count(b"\\" + delim)  # (no unescaped delimiter in it)


_DIRECTIVE = _lazy(rb"%%|%[-+ #0]*\d*(?:\.\d+)?[a-zA-Z]")


def _printf_argument(data: bytes, pos: int, spans: list[_Span]) -> int:
    """printf 'NAME=%s\\n' VALUE: the directive at pos takes the argument its place in the
    format gives (a value printf writes into .env, .netrc or .my.cnf). Returns 0 (no value here)."""
    words, i = _line_words(data, pos, spans)
    if i < 1 or _tool_name(data[words[i - 1][0] : words[i - 1][1]]) != b"printf":
        return 0
    before = [d for d in _DIRECTIVE.findall(data, words[i][0], pos) if d != b"%%"]
    _, hi = _command_bounds(words, data, i)
    j = i + 1 + len(before)
    if j < hi and data[words[j][0] : words[j][0] + 1] not in (b">", b"<"):
        _cli_value(data, *words[j], spans)
    return 0


def _setter_before(data: bytes, name_start: int, floor: int) -> bool:
    """Is the name's word the argument of a setter (``set -gx NAME``, ``config set NAME``)?"""
    ls = max(floor, data.rfind(b"\n", 0, name_start) + 1, name_start - 160)
    head = data[ls:name_start]
    cut = max(head.rfind(b" "), head.rfind(b"\t"))
    words = head[: cut + 1].split()  # the words before the name's own word (npm: //host/:_authToken)
    while words and words[-1] in _SETTER_FLAGS:
        words.pop()
    if not words:
        return False
    last = words[-1]
    if last.lower() in (b"config", b"configure") and len(words) > 1:
        return _tool_name(words[-2]) in _CONFIG_TOOLS or words[-2] == b"aws"
    return last in _SETTERS or last.lower() in _SETTERS or _path_setter(words)


# Editors that set a key of a config file named by its path, the value the word after the key's:
# crudini --set FILE SECTION KEY VALUE; dasel v1's put string [-f FILE] SELECTOR VALUE (v2's -v
# VALUE is read from its flag, _path_editor_at). dasel's flags that take a value other than -s
_DASEL_VALUE_FLAGS = frozenset((b"-f", b"--file", b"-p", b"--parser", b"-r", b"--read", b"-w", b"--write",
                                b"-o", b"--out", b"-t", b"--type", b"-m", b"--multiple"))


def _path_setter(words: list[bytes]) -> bool:
    """Is the next word the key of ``crudini --set FILE SECTION`` or the selector of ``dasel put
    string`` (the words before it given)?"""
    for t, w in enumerate(words):
        tool = _tool_name(w)
        if tool == b"crudini":
            rest = words[t + 1 :]
            return b"--set" in rest and len([a for a in rest if a[:1] != b"-"]) == 2  # FILE SECTION
        if tool == b"dasel":
            rest = words[t + 1 :]
            if rest[:1] != [b"put"] or b"string" not in rest or rest[-1] in _DASEL_VALUE_FLAGS:
                return False  # (v1: put string …, or put -t string …)
            return rest[-1] != b"string" or rest[-2:-1] != [b"-t"]
    return False


# A password's name, a space and a quoted word: Gradle's and fetchmail's password "x", EDN's
# :password "x", ipsec.secrets' PSK "x" (SQL's PASSWORD 'x y' is read above, spaces and all)
_QUOTED_NAMES = frozenset(("password", "passwd", "pwd", "passphrase", "psk"))  # (not "pass": a verb)


def _quoted_word(data: bytes, end: int, name: str) -> bool:
    quote = data[end : end + 1]
    if quote not in (b"'", b'"') or _words(name)[-1:][0:1] and _words(name)[-1] not in _QUOTED_NAMES:
        return False
    close = data.find(quote, end + 1, end + 258)
    return close > end + 1 and not any(c in b" \t\r\n" for c in data[end + 1 : close])


def _directive(data: bytes, name_start: int, end: int, floor: int) -> bool:
    """A config file's directive and its one value (redis.conf's requirepass X, mbsync's Pass X):
    the name first on its line, the value the last word of it, and a word no sentence has."""
    if not _line_head(data, name_start, floor) or not _prose_password(data, end):
        return False
    le = _line_end(data, end)
    return len(data[end:le].rstrip(b" \t\r;").split()) == 1


# A name for credentials, a space, and user:secret as its line's last word (HAProxy's "stats auth
# admin:X", "basic_auth bob:X")
_AUTH_WORDS = (b"auth", b"creds", b"credentials")
_USER_SECRET = _lazy(rb"[\w.@-]{1,64}:([^\s:'\"]{1,128})[ \t]*;?[ \t]*\r?(?:\n|\Z)")


def _auth_pair(data: bytes, name: str, end: int, blocked: _Blockers, spans: list[_Span]) -> int:
    if _words(name)[-1:][0:1] and _words(name)[-1].encode() not in _AUTH_WORDS:
        return 0
    m = _USER_SECRET.match(data, end)
    if not m or not _prose_password(data, m.start(1)) or not _clear(blocked, m.start(1), m.end(1)):
        return 0
    spans.append((m.start(1), m.end(1), _REDACTED))
    return m.end(1)


def _line_head(data: bytes, name_start: int, floor: int) -> bool:
    """Is the name the first word of its line (after a prompt such as ``127.0.0.1:6379>``)?"""
    ls = max(floor, data.rfind(b"\n", 0, name_start) + 1)
    head = data[ls:name_start].strip()
    return not head or head.endswith(b">") and b" " not in head


_WRAPPER = _lazy(
    rb"(?:bytes\.fromhex|(?:base64\.)?(?:urlsafe_)?b64decode|binascii\.unhexlify|unhexlify|bytes"
    rb"|Buffer\.from|\[\]byte|SecretStr|SecretBytes|Secret|str|String|encode)\([ \t]*[bru]?[\"']"
)
_WRAPPER_HEADS = (b"bytes", b"base64", b"b64decode", b"urlsafe", b"binascii", b"unhexlify",
                  b"Buffer", b"[]byte", b"Secret", b"str(", b"String(", b"encode(")


def _default_value(data: bytes, name: str, end: int, blocked: _Blockers, spans: list[_Span]) -> int:
    """``${DB_PASSWORD:-hunter2}``, Spring's ``${db.password:hunter2}``: the default is a literal."""
    p = end + (data[end : end + 1] in (b"-", b"="))
    close = data.find(b"}", p, p + 512)
    if close < 0 or data.find(b"{", p, close) >= 0:
        return 0
    value = data[p:close]
    if _clear(blocked, p, close) and _secret_value(value, quoted=False, code=False, name=name, literal=True):
        spans.append((p, close, _REDACTED))
        return close
    return 0


def _call_args(data: bytes, p: int, stop: int) -> list[tuple[int, int, bool]]:
    """The arguments of a call (or the rest of an argument list) starting at p, up to a closing
    parenthesis, on one line: (start, end, quoted) of each, the inside of a quoted one."""
    args: list[tuple[int, int, bool]] = []
    while p < stop and len(args) < 6:
        while p < stop and data[p] in b" \t":
            p += 1
        if p >= stop or data[p] in b")]}":
            break
        q = p + 1 if data[p] in b"bruBRU" and data[p + 1 : p + 2] in (b'"', b"'") else p
        if data.startswith(b"Some(", p) and data[p + 5 : p + 6] in (b'"', b"'"):  # Rust's Option
            vs, ve, _ = _value_at(data, p + 5, stop)
            args.append((vs, ve, True))
            p = ve + 1
            if data[p : p + 1] == b")":
                p += 1
        elif data[q : q + 1] in (b'"', b"'", b"`"):
            vs, ve, _ = _value_at(data, q, stop) if data[q] != 0x60 else (q + 1, max(q + 1, data.find(b"`", q + 1, stop)), True)
            args.append((vs, ve, True))
            p = ve + 1
        elif data[q : q + 1] == b"\\" and data[q + 1 : q + 2] in (b'"', b"'"):  # JSON inside a JSON string
            vs, ve, _ = _value_at(data, q, stop)
            args.append((vs, ve, True))
            p = ve + 2
        else:
            depth, e = 0, p
            while e < stop and (depth or data[e] not in b",)]}"):
                depth += data[e] in b"([{"
                depth -= depth > 0 and data[e] in b")]}"
                e += 1
            args.append((p, e, False))
            p = e
        while p < stop and data[p] in b" \t":
            p += 1
        if p < stop and data[p] == 0x2C:
            p += 1
        else:
            break
    return args


def _list_closes(data: bytes, ve: int, stop: int) -> bool:
    """Does the list end right after the item that ends at ``ve`` (its closing quote, escaped or
    not, then "]", "}" or ")")?"""
    stop = max(stop, min(len(data), ve + 64))  # (a pretty-printed list closes on the next line)
    while ve < stop and data[ve] in b" \t\r\n\"'\\":
        ve += 1
    return ve < stop and data[ve] in b"]})"


def _list_value(v: bytes) -> bool:
    """A list's item read as the value of the name before it: one word, not a flag, not an
    identifier of letters (["password", "email"] lists fields; ["API_KEY", "REGION"] names;
    {"--token", "--quiet"} flags)."""
    return not any(c in v for c in b" \t") and v[:1] != b"-" and not (_IDENT.match(v) and not _HAS_DIGIT(v))


def _call_value(data: bytes, name: str, sep: bytes, before: bytes, name_end: int, p: int,
                blocked: _Blockers, spans: list[_Span]) -> int:
    """A secret name as a call's argument with the value after it (``setenv("API_KEY", "x")``,
    ``define('DB_PASSWORD', 'x')``), or a secret-named call with a literal argument
    (``setPassword("x")``, ``SetBasicAuth("admin", "x")``, SQL ``PASSWORD('x')``)."""
    stop = _line_end(data, p)
    if b"," in sep and before.endswith((b"{", b"{:")):  # a tuple: {db_password, "x"}, {:password, "x"}
        args = _call_args(data, p, stop)[:1]
    elif b"," in sep and before.rstrip()[-1:] == b"[" and data[p : p + 1] not in (b'"', b"'", b"\\"):
        # a YAML flow sequence of the name and its value: [API_TOKEN, x] (in code, a list of
        # variables: a value of letters and digits only counts when it looks generated)
        args = _call_args(data, p, stop)[:1]
        if not args or args[0][2] or not _list_closes(data, args[0][1], stop):
            return 0
        vs, ve, _ = args[0]
        value = data[vs:ve].rstrip()
        if not _list_value(value) or _IDENT.match(value) and not _random_token(value) \
                or not _clear(blocked, vs, vs + len(value)) or not _secret_value(value, quoted=False, code=True, name=name):
            return 0
        spans.append((vs, vs + len(value), _REDACTED))
        return vs + len(value)
    elif b"," in sep:  # the name was a quoted argument: the next argument is its value
        opener = before[-1:]
        if opener not in (b'"', b"'"):  # "/app/api_token": the quote is before the path
            ws = name_end - len(name) - 1
            while ws > 0 and name_end - ws < 200 and data[ws - 1] not in b" \t\r\n\"'=:,{(<":
                ws -= 1
            opener, before = data[ws - 1 : ws], data[max(0, ws - 10) : ws]
        if opener not in (b'"', b"'") or data[name_end - 1 : name_end] != opener:
            return 0
        if before[:-1].rstrip().endswith((b":", b"=")):
            return -1  # {"name": "API_KEY", "other": …}: the name is a value itself (_name_value)
        prev = before[:-1].rstrip(b" \t\r\n\\")[-1:]
        args = _call_args(data, p, stop)[:1]
        if args and data[args[0][1] + 1 : args[0][1] + 3].lstrip()[:1] == b":":
            return 0  # the next item is a key, not this name's value
        if prev == b"(" and b"\n" in sep:
            return 0  # (a call's arguments one a line: __all__ = (\n "Name",\n "Other", …))
        if prev != b"(":  # a call's first argument: setenv("API_KEY", "…")
            # …or a list's: the pair ["API_KEY", "x"], ("db_password", "x"), {"token", "x"}
            # (the name first, the value last: ["token", "scope", "id"] lists names), or a
            # flag and its value in an argv list: ["mysql", "--password", "x"]
            flag = name.startswith("-") and prev in (b",", b"[", b"{")
            if not args or not (flag or prev in (b"[", b"{") and _list_closes(data, args[0][1], stop)):
                return 0
            if not _list_value(data[args[0][0] : args[0][1]]):
                return 0
    else:
        args = _call_args(data, p, stop)
        if len(args) > 1:
            args = args[1:]  # (user, password…): the first is a user, a service or a key name
    for vs, ve, quoted in reversed(args):
        if quoted and _is_marker(data[vs:ve]):
            return 0  # redacted already: the user before it stays, as on the first run
        if quoted and _clear(blocked, vs, ve) and _secret_value(data[vs:ve], quoted=True, code=True, name=name):
            spans.append((vs, ve, _REDACTED))
            return ve
    return 0


_PROSE_NOT_VALUES = frozenset(
    b"required incorrect invalid wrong expired missing empty correct set unset not now too the a "
    b"an still being stored hashed encrypted optional needed used valid revoked rotated saved "
    b"shown hidden public private secret ok fine same different long short weak strong".split()
)


_ATTRIBUTE = _lazy(rb"[A-Za-z]+=[A-Za-z]+\Z")  # SameSite=Strict: a setting, not a value


def _prose_value(data: bytes, name: str, p: int, limit: int, blocked: _Blockers, spans: list[_Span]) -> int:
    """"The password is X", "my token was `X`": a value, unless it is a word of the sentence."""
    if p < len(data) and data[p] == 0x60:  # `X`
        close = data.find(b"`", p + 1, min(limit, p + 256))
        vs, ve, quoted = p + 1, close, True
        if close < 0:
            return 0
    else:
        vs, ve, quoted = _value_at(data, p, limit)
    value = data[vs:ve]
    if not quoted:
        value = value.rstrip(b".,;:!?)")
        ve = vs + len(value)
        low = value.lower()
        if len(value) < 6 or low in _PROSE_NOT_VALUES or value.isalpha():
            return 0
    if name.lower() not in _PASSWORD_WORDS and (_NAME_LIKE.match(value) or _ATTRIBUTE.match(value)):
        return 0  # "auth is better-auth", "the cookie is `SameSite=Strict`": what it is, not its value
    if not _clear(blocked, vs, ve) or not _secret_value(value, quoted=quoted, code=False, name=name, literal=True):
        return 0
    spans.append((vs, ve, _REDACTED))
    return ve


# A secret's name as the value of a name field, its value in a value field nearby: Kubernetes
# env (- name: X / value: …), ECS and Azure settings JSON, .NET <add key= value=/>, Java
# <property name= value=/>, CloudFormation ParameterKey=/ParameterValue=, ssm --name/--value.
_NAME_FIELD = _lazy(rb"(?i)(?:^|[\s{,(\"'<])-{0,2}(?:name|key|parameterkey|variable|type)[\"']?[ \t]*[:=]?[ \t]*[\"']?\Z")
_VALUE_FIELD = _lazy(rb"(?i)[\s{,\"'<-](?:value|parametervalue|default)(?![a-z])[\"']?[ \t]*[:=]?[ \t]*")
_ANOTHER_NAME = _lazy(rb"(?i)[\s{,\"'<-](?:name|key|parameterkey)[\"']?[ \t]*[:=]")


def _name_field_before(data: bytes, pos: int, floor: int = 0) -> bool:
    """Is the word around pos the value of a name field (name:, "Name": ", key=", --name)?"""
    ns = _name_start(data, pos)
    lo = max(floor, ns - 200)
    ws = lo + len(data[lo:ns].rstrip(_PATH_CHARS))  # /prod/db/password, hibernate.connection.password
    return _NAME_FIELD.search(data, max(floor, ws - 40), ws) is not None


def _name_value(data: bytes, name: str, name_start: int, end: int, floor: int, blocked: _Blockers,
                spans: list[_Span]) -> int:
    if not _name_field_before(data, name_start, floor):
        return 0
    stop = min(len(data), end + 400)
    m = _VALUE_FIELD.search(data, end, stop)
    if m is None or _ANOTHER_NAME.search(data, end, m.start()):
        return 0
    vs, ve, quoted = _value_at(data, m.end(), _line_end(data, m.end()))
    value = data[vs:ve]
    if _clear(blocked, vs, ve) and _secret_value(value, quoted=quoted, code=False, name=name, literal=True):
        spans.append((vs, ve, _REDACTED))
        return ve
    return 0


def _clear(blocked: _Blockers, vs: int, ve: int) -> bool:
    """No shape, card, private block or marker inside [vs, ve): a second run reads it the same."""
    return not blocked.inside(vs) and blocked.next_start(vs, ve) >= ve


def _scan(data: bytes, low: bytes, spans: list[_Span]) -> list[_Keyword]:
    """Phase one: every anchor regex once; shapes become spans now, keyword matches are kept
    for phase two (which needs all of phase one's spans). An ``AccountKey=`` shape leaves its
    name in the text, so it is also kept, as a name only (flag ``None``, no separator)."""
    keywords: list[_Keyword] = []
    headers: set[int] = set()
    small = len(data) < 65536  # (in a long text every anchor is there; the regex finds it as fast)
    for rx, on_low, anchor in _SCANS:
        text = low if on_low else data
        if small and anchor not in text:
            continue
        block_end = 0  # matches inside a key block add nothing
        for m in rx.finditer(text):
            group = m.lastgroup or ""
            if group[:1] == "a":
                if m.start() < block_end:
                    continue
                found = _shape_span(data, m, int(group[1:]), spans)
                if found is None and (kw := _KEYWORD_ONLY.get(_SHAPE_TABLE[int(group[1:])][0])):
                    km = kw.match(low if on_low else data, m.start())
                    if km is not None:
                        _keyword_hit(data, low, km, keywords)
                if found:
                    spans.append(found)
                    if found[1] - found[0] > 256:
                        block_end = found[1]
                    if found[2] == _MARKER["azure_storage"]:
                        keywords.append((m.start(), m.start(), None, None))
            else:
                if m.group("hd") is None:
                    _keyword_hit(data, low, m, keywords)
                if m.group("nv") is not None or m.group("hd") is not None or m.group("flag") and (
                        data[m.end() : m.end() + 1] in b"|\xe2" or len(m.group("flag")) > 1):
                    # a name alone, or a cell before a column's bar, tab or gap: maybe a header's
                    ls = data.rfind(b"\n", 0, m.start()) + 1
                    if ls not in headers:
                        headers.add(ls)
                        _column_rows(data, ls, _line_end(data, ls), spans)
                        if data.startswith(_BOX_BAR, ls):  # │ password │ 'X' │ (console.table)
                            _bar_row(data, ls, _line_end(data, ls), _BOX_BAR, spans)
                        if data.startswith((b">>> ", b"In ["), ls):
                            _repl_echo(data, ls, spans)
    return keywords


# A Python REPL echoing a secret-named variable (>>> pw, In [3]: token): its repr, next line
_REPL_LINE = _lazy(rb"(?:>>> |In \[\d{1,4}\]: )[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\r?\Z")
_REPL_VALUE = _lazy(rb"\n(?:Out\[\d{1,4}\]: )?[bu]?(['\"])((?:(?!\1)[^\\\n]|\\.){4,512})\1[ \t]*\r?(?:\n|\Z)")


def _repl_echo(data: bytes, ls: int, spans: list[_Span]) -> None:
    le = _line_end(data, ls)
    line = _REPL_LINE.match(data, ls, le)
    if not line or not _secret_name(line.group(1).decode()):
        return
    v = _REPL_VALUE.match(data, le)
    if v and not _is_marker(v.group(2)) and not _placeholder(v.group(2)):
        spans.append((v.start(2), v.end(2), _REDACTED))


def _keyword_hit(data: bytes, low: bytes, m: re.Match[bytes], keywords: list[_Keyword]) -> None:
    """Keep a name match for phase two, unless it cannot be one (cheap checks here)."""
    if m.group("nv") is not None:
        if _name_field_before(data, m.start()):  # or it is no name/value pair
            keywords.append((m.start(), m.end(), b"", None))
    elif m.group("flag") is None or _flag_plausible(data, low, m.start(), m.end()):
        s, e = m.start(), m.end()
        if low[s : s + 3] == b"key" and (not s or low[s - 1] not in _NAME_CHARS) and not _random_token(
                _first_token(data, e)):
            e = s  # a bare "key" whose value is not random: a name only (it still ends values)
        keywords.append((s, e, m.group("sep"), m.group("flag")))


def _first_token(data: bytes, p: int) -> bytes:
    """The value-looking token at p (quotes and brackets stripped), for a quick look."""
    m = _FIRST_TOKEN.match(data, p)
    return m.group(1) if m else b""


_FIRST_TOKEN = _lazy(rb"[\"'`]?([^\s\"'`,;)}\][&<]{0,96})")


def _flag_plausible(data: bytes, low: bytes, anchor: int, end: int) -> bool:
    """Can "NAME VALUE" (a space between) assign VALUE? A flag (--password), a quote after it
    (SQL's PASSWORD 'x'), a name no sentence has (API_KEY, npmAuthToken, AUTH), a .netrc, or a
    setter before it. Most hits are prose ("the token expired") and stop here, cheaply."""
    ns = _name_start(data, anchor)
    if data[ns : ns + 1] == b"-" or data[end : end + 1] in (b"'", b'"'):
        return True
    lo = max(0, ns - 256)
    ls = max(lo, data.rfind(b"\n", lo, ns) + 1)
    head = data[ls:ns]
    if not head.strip() or head.rstrip().endswith(b">"):
        return True  # first on its line (requirepass x, AUTH x) or after a prompt
    if low.find(b"machine", max(0, ns - 200), ns) >= 0:
        return True
    words = head.split()
    if head and not head[-1:].isspace():
        words = words[:-1]  # npm config set //host/:_authToken: the name's word began earlier
    prev = words[-1:]
    if bool(prev) and (prev[0].lower() in _SETTER_WORDS or prev[0][:1] == b"-" and len(prev[0]) <= 4):
        return True
    if (b"crudini" in head or b"dasel" in head) and _path_setter(words):
        return True
    word = data[ns:end].rstrip()
    return _prose_credential(word, data, end) or word.lower().endswith(_AUTH_WORDS) and _USER_SECRET.match(data, end) is not None


# The words "NAME VALUE" prose may use ("pass" and "pwd" are also a verb and a command).
_PROSE_PASSWORD_WORDS = (b"password", b"passwd", b"passphrase", b"pw")


# "client id 4411, secret Xq9…, refresh token Pw…": a secret or a token named in a list of
# credentials, its value after a space. Stricter than a password's (below): the value must look
# random (mixed case with a digit, or 32+ hex digits), so "token expired", "secret sauce" and
# the generated names of tool output ("secret db-creds-7f9c8b6d5k") stay.
_PROSE_TOKEN_WORDS = (b"secret", b"token")
_HEX_RUN = _lazy(rb"[0-9a-f]{32,}\Z")


def _prose_credential(name: bytes, data: bytes, end: int) -> bool:
    word = name.lower()
    if b"_" in word.strip(b"_") or b"-" in word.strip(b"-") or name[:1].islower() and _HAS_UPPER(name):
        # rclone's "secret_access_key VALUE", HAProxy's "insecure-password VALUE", nginx's
        # "X-Api-Key VALUE", pulumi's "dbPassword   VALUE": a snake, kebab or camel case name is
        # no word of a sentence; its value after a space counts when it looks generated, or, after
        # a password's name, like a password
        if word.endswith((b"password", b"passwd", b"passphrase", b"pass", b"pwd")):
            return _prose_password(data, end)
        return _random_after(data, end)
    if word in _PROSE_PASSWORD_WORDS:
        return _prose_password(data, end)
    return word in _PROSE_TOKEN_WORDS and _prose_password(data, end) and _random_after(data, end)


def _random_after(data: bytes, end: int) -> bool:
    """The word after ``end`` looks generated: 16+ characters, mixed case with a digit, or 32+
    hex digits."""
    ve = end
    while ve < len(data) and data[ve] not in b" \t\r\n\"'`":
        ve += 1
    value = data[end:ve].rstrip(b".,;:)!?")
    return len(value) >= 16 and (_mixed(value) or _HEX_RUN.match(value) is not None)


def _prose_password(data: bytes, end: int) -> bool:
    """"log in with password Zx9vQ2mK7pL", "use passwd Pa55word9 for it": in prose a password
    word may be followed by its value with only a space between. Only where the word after it
    is one no sentence has: 8+ characters holding letters and digits, no path, no version."""
    vs = end
    ve = vs
    n = min(len(data), vs + 80)
    while ve < n and data[ve] not in b" \t\r\n\"'`":
        ve += 1
    value = data[vs:ve].rstrip(b".,;:)!?")
    upper, lower = bool(_HAS_UPPER(value)), bool(_HAS_LOWER(value))
    if not (8 <= len(value) <= 64 and (upper or lower) and b"/" not in value) \
            or _VERSION_LIKE.match(value):
        return False
    digits = sum(c in b"0123456789" for c in value)
    # "reset2fa", "oauth2flow": one digit in a lower-case word is a name; two digits, mixed
    # case with a digit or a symbol is what password rules make people type
    return digits >= 2 or digits == 1 and (upper and lower or not value.isalnum())


def _rescan_after_blockers(low: bytes, keywords: list[_Keyword], blocked: _Blockers) -> list[_Keyword]:
    """A keyword match that starts inside a shape (the "key" in ``ghp_keykey…``) may have run
    on into a real name after it; a second run sees that name alone, so look again from the
    end of the shape."""
    out = []
    for kw in keywords:
        start, end = kw[0], kw[1]
        if end > start and blocked.inside(start):
            stop = blocked.end_of(start)
            if end > stop:
                for rx, on_low, anchor in _SCANS:
                    if on_low and anchor in low:
                        pos = stop
                        while (m := rx.search(low, pos)) and m.start() < end:
                            if not (m.lastgroup or "a").startswith("a") and m.group("hd") is None:
                                sep = b"" if m.group("nv") is not None else m.group("sep")
                                out.append((m.start(), m.end(), sep, m.group("flag")))
                            pos = m.start() + 1
                continue
        out.append(kw)
    return out


_HEX_USER = _lazy(rb"[0-9a-f]{32,64}\Z")


def _token_user(data: bytes, p: int, a: int) -> bool:
    """A URL's user name (``data[p:a]``) that is a token: 32-64 hex digits, or 20+ characters of
    a token's alphabet that look generated (names, e-mail locals and ``git`` do not)."""
    user = data[p:a]
    if not 20 <= len(user) <= 256 or any(c not in _TOKEN_CHARS for c in user):
        return False
    return bool(_HEX_USER.match(user)) or _random_token(user) and _mixed(user)


def _url_userinfo(data: bytes, p: int, stop: int, at: bytes, colon: bytes, host: re.Pattern[bytes],
                  blocked: _Blockers, spans: list[_Span]) -> None:
    """The password of the user info that starts at p (after ``://``): from the first colon
    to the last ``at`` that a host follows (not ``/@scope``: a path)."""
    a = -1
    k = data.find(at, p, stop)
    while k >= 0:
        if data[k - 1] != 0x2F and host.match(data, k + len(at)):
            a = k
        k = data.find(at, k + len(at), stop)
    if a < 0:
        return
    c = data.find(colon, p, a)
    if c < 0 and _token_user(data, p, a) and not blocked.inside(p):
        # no password, but the user is a token (a Sentry DSN's key, `https://<token>@github.com/…`)
        spans.append((p, blocked.next_start(p, a), _REDACTED))
        return
    if c < 0 or data.find(b"/", p, c) >= 0:
        return  # no password, or the colon is a port's (host:8080/path@x)
    vs, ve = c + len(colon), a
    if blocked.inside(vs) or _PORT_PATH.match(data, vs, ve) and not _HOST_PORT.match(data, a + len(at)):
        return  # host:8080/path@1.2.3 (a path), but not user:6/pass@db:3306 (a password with a slash)
    ve = blocked.next_start(vs, ve)
    value = data[vs:ve]
    if len(value) >= 3 and not _is_marker(value) and not _placeholder(value):
        spans.append((vs, ve, _REDACTED))


def _url_spans(data: bytes, low: bytes, blocked: _Blockers, spans: list[_Span]) -> None:
    pos = data.find(b"://")
    while pos >= 0:
        p = pos + 3
        stop = _URL_REST.match(data, p).end()  # type: ignore[union-attr]  # (it always matches)
        if data.find(b"@", p, stop) >= 0:
            _url_userinfo(data, p, stop, b"@", b":", _URL_HOST, blocked, spans)
        pos = data.find(b"://", p)
    pos = low.find(b"%3a%2f%2f")  # a URL inside a query parameter: user%3Apass%40host
    while pos >= 0:
        p = pos + 9
        stop = _URL_REST_ENCODED.match(data, p).end()  # type: ignore[union-attr]
        _url_userinfo(low, p, stop, b"%40", b"%3a", _URL_HOST_ENCODED, blocked, spans)
        pos = low.find(b"%3a%2f%2f", p)


def _credential_spans(data: bytes, low: bytes, keywords: list[_Keyword], spans: list[_Span]) -> None:
    """Phase two: URL and curl passwords, then names and values, cut at what came before."""
    at, dash_u = b"@" in data or b"%40" in low, b"-u" in data  # URL user info, curl -u
    early = _Blockers(low, spans) if at or dash_u else _Blockers(b"", [])
    if at:
        _url_spans(data, low, early, spans)
    if dash_u:
        for m in _CURL_USER.finditer(data):
            before = data[m.start() - 1 : m.start()] if m.start() else b" "
            if (before == b"-") if m.group("long") else (before in b" \t\n"):
                user = data[m.start() : m.start("v")].rsplit(b":", 1)[0]
                if not (m.group("v").isdigit() and user[-1:].isdigit()):  # docker -u 1000:1000
                    _plain_value(data, m, early, spans)
    if not keywords:
        return
    blocked = _Blockers(low, spans)
    keywords = _rescan_after_blockers(low, keywords, blocked)
    value_end = 0  # a keyword inside a redacted value adds nothing
    ends: list[int] = []  # ends of the spans added here, sorted: the floor for later names
    starts: list[int] = []  # and their starts: a later value stops there
    keywords.sort()
    # A value stops at the next name=value; a word followed by a space ("token expired") is
    # only a name where it is a flag (--password VALUE).
    names = _Names(data, [kw[0] for kw in keywords
                          if kw[2] or data[_name_start(data, kw[0]) : kw[0]][:1] == b"-"])
    for kw in keywords:
        if kw[0] >= value_end:
            i = bisect.bisect_right(ends, kw[0])
            floor = ends[i - 1] if i else 0
            count = len(spans)
            value_end = max(value_end, _keyword_span(data, kw, blocked, names, floor, starts, spans))
            for s, e, _ in spans[count:]:
                bisect.insort(ends, e)
                bisect.insort(starts, s)


def _plain_value(data: bytes, m: re.Match[bytes], blocked: _Blockers, spans: list[_Span]) -> None:
    vs, ve = m.span("v")
    if blocked.inside(vs):
        return
    ve = blocked.next_start(vs, ve)
    value = data[vs:ve]
    if len(value) >= 3 and not _is_marker(value) and not _placeholder(value):
        spans.append((vs, ve, _REDACTED))


# SQL: CREATE/ALTER USER … IDENTIFIED [WITH plugin] BY 'x' (MySQL, Oracle unquoted), and redis'
# ACL SETUSER name on >password.
_IDENTIFIED = _lazy(rb"identified(?:[ \t]+with[ \t]+[\w'\"]+)?[ \t]+by[ \t]+(?:password[ \t]+)?")
_SQL_WORD = _lazy(rb"[^\s;,)]+")


_INSERT = _lazy(rb"insert[ \t]+(?:or[ \t]+[a-z]+[ \t]+)?into[ \t]+[\w.\"`\[\]]+[ \t]*\(([^()]{1,600})\)\s*values\s*")


def _insert_spans(data: bytes, low: bytes, spans: list[_Span]) -> None:
    """INSERT INTO users (name, password) VALUES ('admin', '…'), (…): the quoted values under a
    column named for a secret (a seed script, a fixture, a query a tool printed)."""
    for m in _INSERT.finditer(low):
        columns = [c.strip(b" \t\r\n\"`[]").decode("latin-1") for c in data[m.start(1) : m.end(1)].split(b",")]
        secret = [i for i, c in enumerate(columns) if _secret_name(c)]
        if not secret:
            continue
        p = m.end()
        for _ in range(50):  # (the rows of a multi-row insert)
            if data[p : p + 1] != b"(":
                break
            args = _call_args(data, p + 1, _line_end(data, p + 1))
            for i in secret:
                if i < len(args) and args[i][2]:
                    value = data[args[i][0] : args[i][1]]
                    if _secret_value(value, quoted=True, code=True, name=columns[i]) and not _is_marker(value):
                        spans.append((args[i][0], args[i][1], _REDACTED))
            close = data.find(b")", args[-1][1] + 1 if args else p + 1, _line_end(data, p + 1))
            if close < 0:
                break
            p = close + 1
            while data[p : p + 1] in (b",", b" ", b"\t", b"\n", b"\r"):
                p += 1


def _sql_spans(data: bytes, low: bytes, spans: list[_Span]) -> None:
    if b"insert" in low:
        _insert_spans(data, low, spans)
    pos = low.find(b"identified")
    while pos >= 0:
        m = _IDENTIFIED.match(low, pos)
        if m:
            p = m.end()
            if data[p : p + 1] in (b"'", b'"'):
                vs, ve, _ = _value_at(data, p, len(data))
                _cli_value(data, vs - 1, ve + 1, spans)
            elif (w := _SQL_WORD.match(data, p)) and not w.group().isalpha():
                _cli_value(data, p, w.end(), spans)
        pos = low.find(b"identified", pos + 10)
    pos = low.find(b"setuser")
    while pos >= 0:
        for s, e in _words_after(data, pos + 7):
            if data[s] == 0x3E:  # >password
                _cli_value(data, s + 1, e, spans)
        pos = low.find(b"setuser", pos + 7)


# ---------------------------------------------------------------------------------------------
# 5. Contexts found by a rare literal: Netscape cookie jars (tab-separated, TRUE/FALSE flags),
#    base64 next to "base64"/"b64" (decoded: does it hold a secret?), Discord bot tokens in
#    code that runs a bot (base64 of the bot's id, 6 characters, an HMAC).

_COOKIE_JAR = _lazy(rb"\t(?:TRUE|FALSE)\t[^\t\n]*\t(?:TRUE|FALSE)\t\d+\t([^\t\n]*)\t([^\t\r\n]+)")
_HEX_DIGITS = frozenset(b"0123456789abcdef")


def _b64_word(low: bytes, pos: int) -> bool:
    """"b64" as a word of a name (ENV_B64=, b64decode), not inside a hex string or an id."""
    before, after = low[pos - 1 : pos], low[pos + 3 : pos + 9]
    if before.isalnum() and before not in (b"_",):
        return False
    return not after[:1].isalnum() or after.startswith((b"decode", b"encode"))
_B64_VALUE = _lazy(rb"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
_DISCORD_TAIL = _lazy(rb"\.[\w-]{6}\.[\w-]{27,40}(?![\w-])")  # the id part is checked backwards


# A wallet's recovery words (BIP39: 12, 15, 18, 21 or 24 words of 3 to 8 letters, all of the
# value) under their name, quoted or not: MNEMONIC="…", seed phrase: …, recoveryPhrase = '…'. Not an opcode's mnemonic (MOV).
_MNEMONIC_VALUE = (rb"[\"']?[ \t]*[:=][ \t]*[\"']?((?:[a-z]{3,8}[ \t]+){11,23}[a-z]{3,8})[ \t]*(?:[\"',\r\n]|\Z)")
_MNEMONIC = (  # (each led by its literal: a scan of a long text for either is fast)
    _lazy(rb"mnemonic" + _MNEMONIC_VALUE),
    _lazy(rb"phrase(?:(?<=seed.phrase)|(?<=seedphrase)|(?<=recovery.phrase)|(?<=recoveryphrase))" + _MNEMONIC_VALUE),
)


# A file that holds one secret bare, by its name: Rails' master.key, a Docker/Compose secret
# (/run/secrets/db_password, secrets/api_token.txt), Ansible's .vault_pass, token.txt. What is
# echoed into one, and the bare word a cat of one prints on the next lines, is that secret.
# (Looked for only where one of these names is: a search for each costs ~1 % of the redactor's
# time; the regexes over every ">" or "cat" of a long log cost it a third more.)
_SECRET_FILE_WORDS = (b"master.key", b"secrets/", b"vault_pass", b"password.txt", b"token.txt", b"sasl_passwd",
                      b"userlist.txt")
_SECRET_FILE = _lazy(rb"(?:master\.key|userlist\.txt|\.?vault[_-]?pass(?:word)?(?:\.txt)?|id\.json|[\w.-]*keypair[\w.-]*\.json"
                     rb"|[\w.-]*(?:secret|token|passw(?:or)?d"
                     rb"|api[_-]?key|credential)[\w-]*(?:\.txt|\.key)?)\Z")  # (a path's last part)
# (each led by a literal, which re finds as fast as bytes.find; the path possessive, its last
# part checked apart: an alternation over every ">" of a long log cost the redactor a third more)
_INTO_FILE = _lazy(rb">>?[ \t]*+[\"']?([\w.~/-]{4,200}+)")
_ECHOED = _lazy(rb"(?:echo|printf)[ \t]+(?:-[ne]+[ \t]+)?([\"']?)([^\s\"'|;&<>$`]{8,})\1[ \t]*\Z")
_CAT_OF = tuple(_lazy(verb + rb"[ \t]++(?:-[\w]+[ \t]+)*[\"']?([\w.~/-]{4,200}+)")
                for verb in (rb"cat(?<![\w-]cat)", rb"head(?<![\w-]head)", rb"type(?<![\w-]type)", rb"get-content"))


def _secret_file(low: bytes, m: re.Match[bytes]) -> bool:
    path = m.group(1)
    return bool(_SECRET_FILE.search(path, path.rfind(b"/") + 1))
_BARE_LINE = _lazy(rb"[ \t]*([A-Za-z0-9+/=_.:!@#%^&*-]{8,256})[ \t]*\r?(?:\n|\Z)")


def _bare_secret(value: bytes) -> bool:
    """A word that such a file holds: random-looking, hex, or letters with digits (not a path,
    a number, a reference or a marker)."""
    if _is_marker(value) or value[:1] in b"/.~" or b"/" in value[1:] and not _random_token(value):
        return False
    return _random_token(value) or bool(_HEX_USER.match(value.lower())) or bool(
        _HAS_DIGIT(value) and (_HAS_LOWER(value) or _HAS_UPPER(value)))


# The lines of a file of credentials, one a line: postfix's sasl_passwd ([host]:587 user:X),
# pgbouncer's userlist.txt ("user" "X", "user" "md5…")
_CREDENTIAL_LINE = _lazy(rb"[ \t]*(?:\[?(?=[\w.-]*[A-Za-z])[\w.-]+\]?(?::\d+)?[ \t]+[^\s:\"]+:([^\s]{3,256})|\"[^\"\n]{1,64}\"[ \t]+\"([^\"\n]{3,256})\")[ \t]*\r?(?:\n|\Z)")


def _credential_lines(data: bytes, pos: int, spans: list[_Span]) -> bool:
    found = False
    for _ in range(64):
        m = _CREDENTIAL_LINE.match(data, pos)
        if not m:
            break
        g = 1 if m.start(1) >= 0 else 2
        value = m.group(g)
        if not _is_marker(value) and not _placeholder(value) and not value.startswith(b"$"):
            spans.append((m.start(g), m.end(g), _REDACTED))
        found, pos = True, m.end()
    return found


def _secret_file_spans(data: bytes, low: bytes, spans: list[_Span]) -> None:
    lines: dict[int, int] = {}  # (only the lines that name such a file are read)
    for w in _SECRET_FILE_WORDS:
        pos = low.find(w)
        while pos >= 0:
            ls = data.rfind(b"\n", 0, pos) + 1
            lines[ls] = _line_end(data, pos)
            pos = low.find(w, lines[ls])
    for ls, le in sorted(lines.items()):
        _secret_file_line(data, low, ls, le, spans)


def _secret_file_line(data: bytes, low: bytes, ls: int, le: int, spans: list[_Span]) -> None:
    for into in _INTO_FILE.finditer(low, ls, le):
        if not _secret_file(low, into):
            continue
        m = _ECHOED.search(low, max(ls, into.start() - 300), into.start())
        if m and _bare_secret(data[m.start(2) : m.end(2)]):
            spans.append((m.start(2), m.end(2), _REDACTED))
    for m in (m for rx in _CAT_OF for m in rx.finditer(low, ls, le) if _secret_file(low, m)):
        # (the next lines: a hook's event puts the output after "\n\noutput:\n")
        pos = _line_end(data, m.end())
        for _ in range(4):
            if pos >= len(data):
                break
            if _credential_lines(data, pos + 1, spans):
                break
            line = _BARE_LINE.match(data, pos + 1)
            if line and not data[line.start(1) : line.end(1)].lower().startswith((b"output:", b"input:")):
                if _bare_secret(data[line.start(1) : line.end(1)]):
                    spans.append((line.start(1), line.end(1), _REDACTED))
                break
            if data[pos + 1 : _line_end(data, pos + 1)].strip() not in (b"", b"output:"):
                break
            pos = _line_end(data, pos + 1)


# A command whose output is a secret (aws configure get aws_secret_access_key, gcloud auth
# print-access-token, vault kv get -field=password, op read, pass show, echo $API_TOKEN …):
# the one word its output starts with; and one that takes a secret as a plain argument (mc
# alias set NAME URL ACCESS SECRET). Found where a command starts (a "$ " prompt, or the
# "command" of a tool event's narrative, which puts the output after "output:"), each led by
# its literal: a search for every tool's name over a long log would cost far more (and each
# such scan of a 10 MB log costs ~1 % of the redactor's time).
_PRINTER_TOOL = (rb"(?=(?:[\w.~-]*/)*(?:aws|gcloud|az|vault|op|g?pass|security|heroku|doppler|bw|secret-tool|keyring|terraform"
                 rb"|tofu|printenv|echo|printf|openssl|pwgen|kubeadm|kubectl|mcli|mc|rabbitmqctl|cf|rclone"
                 rb"|rails|rake|php|fly(?:ctl)?|python3?|node|cat|grafana(?:-cli)?|nomad|wg|mix|head|tr"
                 rb"|elasticsearch-(?:reset|setup)-passwords?|bitcoin-cli|argocd|influx|chamber|sops|ejson|lpass"
                 rb"|keepassxc-cli|netlify|dotnet|ruby|perl|deno|bun)[ \t])")
_PROMPTED = _lazy(rb"\n\$[ \t]+(?:sudo[ \t]+)?" + _PRINTER_TOOL)
_JSON_COMMAND = _lazy(rb"\"command\":[ \t]*\[?\"(?:(?:ba|z)?sh\",[ \t]*\"-l?c\",[ \t]*\")?(?:sudo[ \t]+)?"
                      + _PRINTER_TOOL)
_NAMED = b"*"  # a word of the command that names a secret (DATABASE_PASSWORD, aws_secret_access_key)
_PRINTERS: dict[bytes, tuple[tuple[tuple[bytes, ...], bytes], ...]] = {
    # tool: (words the command has, in order; a word it needs: "-field=" or "jsonpath=" one
    # naming a secret)
    b"aws": (((b"configure", b"get", _NAMED), b""), ((b"get-login-password",), b""),
             ((b"get-authorization-token",), b"text"), ((b"get-secret-value",), b"text")),
    b"gcloud": (((b"print-access-token",), b""), ((b"print-identity-token",), b""),
                ((b"secrets", b"versions", b"access"), b"")),
    b"az": (((b"get-access-token",), b"tsv"), ((b"keyvault", b"secret", b"show"), b"tsv"),
            ((b"keys", b"list"), b"tsv")),
    b"vault": (((b"get",), b"-field="), ((b"read",), b"-field="), ((b"print", b"token"), b""),
               ((b"token", b"create"), b"-field=")),
    b"op": (((b"read",), b""),),
    **dict.fromkeys((b"pass", b"gopass"), (((b"show",), b""),)),
    b"security": (((b"find-generic-password",), b"-w"), ((b"find-internet-password",), b"-w")),
    b"heroku": (((b"config:get", _NAMED), b""), ((b"auth:token",), b"")),
    b"doppler": (((b"secrets", b"get", _NAMED), b"--plain"),),
    b"bw": (((b"get", b"password"), b""), ((b"unlock",), b"--raw"), ((b"login",), b"--raw")),
    b"secret-tool": (((b"lookup",), b""),),
    b"keyring": (((b"get",), b""),),
    **dict.fromkeys((b"terraform", b"tofu"), (((b"output", _NAMED), b""),)),
    **dict.fromkeys((b"printenv", b"echo", b"printf"), (((_NAMED,), b""),)),  # echo $API_TOKEN
    b"openssl": (((b"rand",), b""),),  # a key or password being made
    b"pwgen": (((), b""),),
    b"kubeadm": (((b"token", b"create"), b""),),
    b"kubectl": (((b"get", b"secret"), b"jsonpath="), ((b"view-secret",), b"")),  # -o jsonpath={.data.password}
    b"lpass": (((b"show",), b"--password"),),
    b"keepassxc-cli": (((b"show", _NAMED), b""),),  # keepassxc-cli show -a Password DB ENTRY
    b"netlify": (((b"env:get", _NAMED), b""),),
    **dict.fromkeys((b"rails", b"rake"), (((b"secret",), b""),)),
    b"php": (((b"artisan", b"key:generate"), b"--show"),),
    **dict.fromkeys((b"fly", b"flyctl"), (((b"auth", b"token"), b""),)),
    # a key made by a one-liner: python -c "import secrets; print(secrets.token_hex(32))"
    **dict.fromkeys((b"python", b"python3"), (((), b"~secrets.token_"), ((), b"~get_random_secret_key"),
                                             ((), b"~generate_key"))),
    b"node": (((), b"~randombytes"),),
    b"wg": (((b"genkey",), b""),),  # (| wg pubkey prints the public key: not a filter)
    b"mix": (((b"phx.gen.secret",), b""),),
    b"head": (((), b"~/dev/urandom"),),  # head -c 32 /dev/urandom | base64
    b"tr": (((), b"~urandom"),),  # tr -dc A-Za-z0-9 </dev/urandom | head -c 32
    b"bitcoin-cli": (((b"dumpprivkey",), b""),),  # a wallet's key, in wallet import format
    b"argocd": (((b"admin", b"initial-password"), b""),),
}
# What may come after it in a pipe and still print the secret (| tr -d '\n', | base64 -d …)
_PRINT_FILTERS = frozenset((b"tr", b"head", b"tail", b"cut", b"base64", b"xargs", b"cat", b"sed", b"awk",
                            b"jq", b"tee"))
_NOT_PRINTED = frozenset((b"none", b"null", b"nil", b"true", b"false", b"unset", b"undefined", b"<not",
                          b"error", b"error:"))


def _named_secret(word: bytes) -> bool:
    word = word.lstrip(b"$").strip(b"{}")
    if not word:
        return False
    words = _words(word.decode("latin-1"))
    # (a variable named for a key: STRIPE_KEY, MAPS_KEY; not PRIMARY_KEY)
    return _secret_name(word.decode("latin-1")) or len(words) > 1 and words[-1] == "key" \
        and words[-2].encode() not in _KEY_NOT_SECRET


# An interpreter's one-liner that prints a secret-named environment variable (python -c
# "print(os.environ['API_KEY'])", node -e "console.log(process.env.API_TOKEN)", ruby -e 'puts
# ENV["X"]'): the env read's name, in the code after -c/-e
_INTERPRETERS = frozenset((b"python", b"python3", b"node", b"deno", b"bun", b"ruby", b"perl", b"php"))
_ENV_PRINT = _lazy(rb"(?:print|console\.log|puts|p|say|echo|write)\b[ \t(]*(?:str\()?"
                   rb"(?:os\.environ(?:\.get\(|\[)|os\.getenv\(|getenv\(|process\.env(?:\.|\[)|Deno\.env\.get\("
                   rb"|ENV(?:\.fetch\(|\[)|\$ENV\{|\$_ENV\[)[ \t]*[\"']?([A-Za-z_][A-Za-z0-9_]*)")


def _prints_env(words: list[bytes]) -> bool:
    for j, w in enumerate(words[1:-1], 1):
        if w in (b"-c", b"-e", b"-E", b"-r", b"eval", b"-p"):
            m = _ENV_PRINT.search(words[j + 1])
            return bool(m and _named_secret(m.group(1)))
    return False


def _prints_secret(words: list[bytes]) -> bool:
    """Does this command print a secret, by its tool's table?"""
    tool = _tool_name(words[0])
    if tool in _INTERPRETERS and _prints_env(words):
        return True
    specs = _PRINTERS.get(tool)
    if not specs:
        return False
    args = words[1:]
    for need, flag in specs:
        i = 0
        for w in args:
            if i < len(need) and (w == need[i] if need[i] != _NAMED else
                                  w[:1] != b"-" and (tool not in (b"echo", b"printf") or w[:1] == b"$")
                                  and _named_secret(w)):
                i += 1
        if i < len(need):
            continue
        if not flag or flag in args:
            return True
        if flag[:1] == b"~" and any(flag[1:] in w.lower() for w in args):
            return True
        if flag == b"-field=":
            for j, w in enumerate(args):
                name, eq, value = w.lstrip(b"-").partition(b"=")
                if name == b"field" and _named_secret(value if eq else b"".join(args[j + 1 : j + 2])):
                    return True
        if flag == b"jsonpath=":
            path = next((w for w in args if w.startswith(flag)), b"").rstrip(b"}'\"")
            if _named_secret(path.rpartition(b".")[2]):
                return True
    return False


def _printer_at(data: bytes, s: int, json: bool) -> tuple[int, re.Pattern[bytes] | None]:
    """If the command at s prints a secret, where its line ends (else -1; -2: a cat of a file
    named for its secret), and the pattern of the output lines that hold one (None: the first
    line is the secret)."""
    le = _line_end(data, s, s + 2048)
    e = _close_quote(data, s, b'"', le) if json else le
    text = data[s:e]
    if json:
        text = text.replace(b'\\"', b'"').split(b"\\n", 1)[0]
    words = [text[a:b].strip(b"\"'") for a, b in _shell_words(text, 0, len(text))]
    cut = next((j for j, w in enumerate(words) if w in (b";", b"&&", b"||", b"&")), len(words))
    words = words[:cut]
    stages: list[list[bytes]] = [[]]
    for w in words:
        if w == b"|":
            stages.append([])
        elif w:
            stages[-1].append(w)
    if not stages[0] or any(not st or _tool_name(st[0]) not in _PRINT_FILTERS for st in stages[1:]):
        return -1, None
    tool = _tool_name(stages[0][0])
    if tool == b"cat":  # a file named for the one secret it holds (node-token), or random bytes
        paths = [w for w in stages[0][1:] if w[:1] != b"-"]
        if paths == [b"/dev/urandom"] and len(stages) > 1:
            return le, None
        named = len(paths) == 1 and _SECRET_FILE.search(paths[0].lower(), paths[0].rfind(b"/") + 1)
        return (-2 if named else -1), None
    for need, rx in _LABELLED.get(tool, ()):
        if rx is _SECRETS_JSON and tool == b"vault" and not any(b"json" in w.lower() for w in stages[0]):
            continue  # (vault kv get -field=password prints the one value: _prints_secret)
        if rx is _SECRETS_DOC and tool == b"vault" and not any(b"yaml" in w.lower() for w in stages[0]):
            continue
        if rx in (_SECRETS_TABLE, _SECRETS_BOX, _CHAMBER_ROW) and any(
                w.lower().lstrip(b"-").startswith((b"field", b"format", b"plain", b"json", b"raw", b"q"))
                for w in stages[0]):
            continue  # (another format: the table is not what it prints)
        if rx is _BW_SESSION and b"--raw" in stages[0]:
            continue  # (bw unlock --raw prints the key alone)
        if tuple(w.lower() for w in stages[0][1 : 1 + len(need)]) == need:
            return le, rx
    return (le if _prints_secret(stages[0]) else -1), None


# Commands whose output shows secrets under labels: vault operator init's "Unseal Key 1: …"
# and "Recovery Key 1: …", Elasticsearch's reset-password "New value: …" and setup-passwords
# "PASSWORD elastic = …", nomad acl bootstrap's "Secret ID = …" (tool: (its subcommand's
# words, the line's pattern)); read up to the next prompt or _LABELLED_LINES lines on
_LABEL_LINE = rb"(?m)^[ \t]*"
_LABEL_END = rb"[ \t]*\r?$"  # (one word, all the rest of its line)
_SSM_VALUE = _lazy(_LABEL_LINE + rb"\"Value\":[ \t]*\"((?:[^\"\\\n]|\\.){1,8192})\",?" + _LABEL_END)
# A secrets command's JSON (vault kv get/read -format=json, doppler secrets download --no-file):
# every member's string value is a secret, but the envelope's own members (vault's request_id,
# created_time …, Doppler's DOPPLER_PROJECT/ENVIRONMENT/CONFIG)
_ENVELOPE = (rb"(?:request_id|lease_id|created_time|deletion_time|mount_type|lease_duration|renewable|destroyed"
             rb"|version|accessor|warnings|custom_metadata|_public_key|DOPPLER_[A-Z_]+)")
_SECRETS_JSON = _lazy(_LABEL_LINE + rb"\"(?!" + _ENVELOPE + rb"\")[^\"\n]{1,256}\":[ \t]*"
                      rb"\"((?:[^\"\\\n]|\\.){1,8192})\",?" + _LABEL_END)
# …the same as YAML (sops -d, vault -format=yaml, rails credentials:show), either (a file sops
# decrypts may be either): a member's one-word value, whatever its name
_SECRETS_DOC = _lazy(_LABEL_LINE + rb"(?:\"(?!" + _ENVELOPE + rb"\")[^\"\n]{1,256}\":[ \t]*\"((?:[^\"\\\n]|\\.){1,8192})\",?"
                     rb"|(?!" + _ENVELOPE + rb":)[\w.-]{1,128}:[ \t]+([^\s#|>&*!{\[][^\s]*))" + _LABEL_END)
# …and the same in the tables they print by default: vault kv get/read's "key    value" rows
# (not its metadata's), Doppler's boxed NAME │ VALUE rows (not DOPPLER_*), chamber read's row
_SECRETS_TABLE = _lazy(_LABEL_LINE + rb"(?!(?:Key|---|created_time|custom_metadata|deletion_time|destroyed|version"
                       rb"|lease_id|lease_duration|lease_renewable|refresh_interval|token_duration|token_renewable"
                       rb"|token_policies|identity_policies|policies)[ \t])[\w./-]{1,128}[ \t]{2,}(\S+)" + _LABEL_END)
_SECRETS_BOX = _lazy(_LABEL_LINE + "│".encode() + rb"[ \t]*(?!NAME[ \t]|DOPPLER_)[A-Za-z_][\w.-]{0,127}[ \t]*"
                     + "│".encode() + rb"[ \t]*([^\s" + "│".encode() + rb"]+)[ \t]*" + "│".encode())
_CHAMBER_ROW = _lazy(_LABEL_LINE + rb"(?!Key[ \t])[\w./-]{1,128}[ \t]+(\S+)[ \t]+\d+[ \t]+\S")
_BW_SESSION = _lazy(rb"(?:BW_SESSION[\"']?[ \t]*=[ \t]*[\"']?|--session[ \t]+)([A-Za-z0-9+/]{20,}={0,2})(?![\w+/=])")
_INFLUX_TOKEN = _lazy(rb"(?<![\w+/=-])([A-Za-z0-9_-]{86}==)(?![\w+/=-])")
_LABELLED: dict[bytes, tuple[tuple[tuple[bytes, ...], re.Pattern[bytes]], ...]] = {
    b"vault": (((b"operator", b"init"), _lazy(_LABEL_LINE + rb"(?:Unseal|Recovery) Key \d{1,2}:[ \t]*(\S+)" + _LABEL_END)),
               ((b"kv", b"get"), _SECRETS_JSON), ((b"read",), _SECRETS_JSON),
               ((b"kv", b"get"), _SECRETS_TABLE), ((b"read",), _SECRETS_TABLE),
               ((b"kv", b"get"), _SECRETS_DOC), ((b"read",), _SECRETS_DOC)),
    b"sops": tuple(((w,), _SECRETS_DOC) for w in (b"-d", b"--decrypt", b"decrypt")),
    b"ejson": (((b"decrypt",), _SECRETS_DOC),),
    **dict.fromkeys((b"rails", b"rake"), (((b"credentials:show",), _SECRETS_DOC),)),
    b"doppler": (((b"secrets", b"download"), _SECRETS_JSON), ((b"secrets",), _SECRETS_BOX)),
    b"chamber": (((b"read",), _CHAMBER_ROW),),
    # InfluxDB's API tokens in the table influx auth list/find/create prints (a column among
    # IDs, names and permissions: 64 bytes in URL-safe base64); its --json is read by name
    b"influx": tuple(((b"auth", sub), _INFLUX_TOKEN) for sub in (b"list", b"ls", b"find", b"create")),
    # Bitwarden's session key, in what bw unlock/login print (export BW_SESSION="…", --session …)
    b"bw": tuple(((sub,), _BW_SESSION) for sub in (b"unlock", b"login")),
    b"elasticsearch-reset-password": (((), _lazy(_LABEL_LINE + rb"New value:[ \t]*(\S+)" + _LABEL_END)),),
    b"elasticsearch-setup-passwords": (((), _lazy(_LABEL_LINE + rb"PASSWORD [\w.-]+ = (\S+)" + _LABEL_END)),),
    b"nomad": (((b"acl", b"bootstrap"), _lazy(_LABEL_LINE + rb"Secret ID[ \t]+=[ \t]*(\S+)" + _LABEL_END)),),
    # aws ssm get-parameter(s)(-by-path) --with-decryption: every parameter's "Value" (a name
    # like /prod/app/stripe says nothing; SecureString is why one reads it decrypted)
    b"aws": tuple(((b"ssm", sub), _SSM_VALUE) for sub in (b"get-parameter", b"get-parameters",
                                                          b"get-parameters-by-path")),
}
_LABELLED_LINES = 40


def _labelled_values(data: bytes, pos: int, rx: re.Pattern[bytes], spans: list[_Span]) -> None:
    stop = pos
    for _ in range(_LABELLED_LINES):
        nxt = data.find(b"\n", stop + 1)
        if nxt < 0 or data.startswith(b"$ ", stop + 1) and rx is not _BW_SESSION:  # (bw's own "$ export …")
            stop = len(data) if nxt < 0 else stop
            break
        stop = nxt
    for m in rx.finditer(data, pos, stop):
        g = m.lastindex or 1  # (_SECRETS_DOC: a JSON member's group or a YAML pair's)
        _cli_value(data, m.start(g), m.end(g), spans)


# A keypair file's bytes as a JSON array (Solana's id.json, other ed25519 wallets' keypair.json)
_BYTE_ARRAY = _lazy(rb"\[[ \t]*(?:\d{1,3}[ \t]*,[ \t]*){31,63}\d{1,3}[ \t]*\]")


def _printed_value(data: bytes, pos: int, spans: list[_Span], bare: bool = False) -> None:
    """The output's first line after the command line that ends at pos: one word, the secret."""
    for _ in range(5):
        if pos >= len(data):
            return
        ls = pos + 1
        le = _line_end(data, ls)
        line = data[ls:le].strip()
        low = line.lower()
        if not line or low == b"output:" or low.startswith((b"[stderr]", b"warning", "›".encode())) \
                or low.endswith(b":") and (b"password" in low or b"passphrase" in low):
            pos = le  # (keepassxc-cli's "Enter password to unlock vault.kdbx:")
            continue
        if bare and line[:1] == b"[":
            array = _BYTE_ARRAY.match(data, data.find(line, ls, le), le)
            if array:
                spans.append((array.start(), array.end(), _REDACTED))
            return
        value = line.strip(b"\"'")
        if len(value) >= 6 and not any(c in value for c in b" \t") and low.strip(b"\"'") not in _NOT_PRINTED \
                and not _is_marker(value) and not _placeholder(value) and (not bare or _bare_secret(value)):
            vs = data.find(value, ls, le)
            spans.append((vs, vs + len(value), _REDACTED))
        return


# tool: (its subcommand's words, which of the plain arguments after them is the secret)
_SECRET_ARGUMENT: dict[bytes, tuple[tuple[tuple[bytes, ...], int], ...]] = {
    **dict.fromkeys((b"mc", b"mcli"), (((b"alias", b"set"), 3), ((b"config", b"host", b"add"), 3))),
    b"rabbitmqctl": (((b"add_user",), 1), ((b"change_password",), 1), ((b"authenticate_user",), 1)),
    b"cf": (((b"auth",), 1),),
    b"rclone": (((b"obscure",), 0),),
    **dict.fromkeys((b"grafana-cli", b"grafana"), (((b"admin", b"reset-admin-password"), 0),)),
    b"db2": (((b"connect",), -1),),
    b"dotnet": (((b"user-secrets", b"set"), 1),),  # dotnet user-secrets set "Jwt:Key" VALUE  # db2 connect to DB user NAME using PASSWORD: after "using"
    # drush user:password NAME VALUE (and its older name, user-password)
    b"drush": (((b"user:password",), 1), ((b"user-password",), 1)),
    b"wpa_passphrase": (((), 1),),  # wpa_passphrase SSID PASSPHRASE
}
_SECRET_ARGUMENT[b"mc"] += (((b"admin", b"user", b"add"), 2),)  # mc admin user add ALIAS NAME SECRET
_SECRET_ARGUMENT[b"mcli"] = _SECRET_ARGUMENT[b"mc"]
# Where such a command is found without a prompt before it (a script, a README, a command in
# backticks): by the "user" each of these has (rabbitmqctl add_user, mc admin user add, db2
# connect … user NAME using, dotnet user-secrets set, drush user:password), one literal-led scan (~1 % of
# bench/redact.py's time; a find per tool cost ~0.6 % each)
_ARGUMENT_USER = _lazy(rb"user(?:(?<=add_user)[ \t]|(?<=authenticate_user)[ \t]|[ \t]+add[ \t](?<=admin user add )"
                       rb"|-secrets[ \t]+set[ \t]|[ \t]+[^\s]{1,64}[ \t]+using[ \t]|[:-]password[ \t])")


def _secret_argument(data: bytes, s: int, spans: list[_Span]) -> None:
    """mc alias set NAME URL ACCESS SECRET, rabbitmqctl add_user NAME SECRET: the argument."""
    words, i = _line_words(data, s, spans)
    if i < 0 or words[i][0] != s:
        return
    _, hi = _command_bounds(words, data, i)
    specs = _SECRET_ARGUMENT.get(_tool_name(data[words[i][0] : words[i][1]]))
    if not specs:
        return
    args = [(a, b) for a, b in words[i + 1 : hi] if data[a : a + 1] != b"-"]
    names = [_unquote(data, a, b) for a, b in args]
    said = [data[a:b].lower() for a, b, _ in names]
    for sub, n in specs:
        if n < 0 and tuple(said[: len(sub)]) == sub and b"using" in said:
            n = said.index(b"using") + 1 - len(sub)
        if tuple(said[: len(sub)]) == sub and len(args) > len(sub) + n >= len(sub):
            _cli_value(data, *args[len(sub) + n], spans)
            return


def _argument_commands(data: bytes, low: bytes, spans: list[_Span]) -> None:
    """rabbitmqctl add_user NAME SECRET, mc admin user add ALIAS NAME SECRET, db2 connect …
    using SECRET, dotnet user-secrets set NAME SECRET with no prompt before them: the tool
    before the match on its line."""
    done = -1
    for m in _ARGUMENT_USER.finditer(low):
        if m.start() < done:
            continue
        _x_argument_command(data, m.start(), m.end(), spans)
        done = _line_end(data, m.start())


def _x_argument_command(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """The tool before ``start`` on its line, if one of _SECRET_ARGUMENT's: its secret argument."""
    words, i = _line_words(data, start, spans)
    for j in range(i, -1, -1):
        if _tool_name(data[words[j][0] : words[j][1]]) in _SECRET_ARGUMENT:
            _secret_argument(data, words[j][0], spans)
            break
    return None


_SPECIAL["x_argument_command"] = _x_argument_command  # (a row of the shape table: defined here, beside its kin)
_UNSEAL_KEY = _lazy(rb"[\"']?[A-Za-z0-9+/]{20,}={0,2}[\"']?\Z")


def _x_unseal(data: bytes, start: int, end: int, spans: list[_Span]) -> _Span | None:
    """vault operator unseal [flags] KEY: a key share (base64, or hex with -format), also in a
    hook's JSON command; a word or a variable there stays."""
    words, _ = _line_words(data, start, spans)
    for s, e in words:
        if s >= end and data[s : s + 1] != b"-":  # (end: after "unseal ")
            if _UNSEAL_KEY.match(data, s, e):
                _cli_value(data, s, e, spans)
            break
    return None


_SPECIAL["x_unseal"] = _x_unseal


# A value its own tool marks secret: terraform output -json's {"sensitive": true, "type":
# "string", "value": "…"} (whatever the output's name), the same object in a plan or a state
# (and Azure's key lists, by their "keyName": _x_key_list).
_SENSITIVE = _lazy(rb"\"sensitive\"[ \t]*:[ \t]*true")
_VALUE_MEMBER = _lazy(rb"\"value\"[ \t]*:[ \t]*\"((?:[^\"\\\n]|\\.){1,8192})\"")


def _sensitive_spans(data: bytes, spans: list[_Span]) -> None:
    for m in _SENSITIVE.finditer(data):
        lo, hi = _object_bounds(data, m.start(), 1024)
        for v in _VALUE_MEMBER.finditer(data, lo, hi):
            _cli_value(data, v.start(1), v.end(1), spans)


# A Read of a file named for the one secret it holds (/run/secrets/db_password, node-token,
# .vault_pass): the narrative is input: {"file_path": …} then the output's JSON, whose
# "content" starts with the file's first line (numbered "     1→" in a transcript's copy).
_READ_PATH = _lazy(rb"input: \{\"file_path\": \"([^\"]{1,1024})\"")
_READ_CONTENT = _lazy(rb"\"content\": \"(?:[ \t]*1(?:\xe2\x86\x92|\\t))?([^\"\\\s]{1,8192})(?=\\n|\")")


def _read_secret_file(data: bytes, spans: list[_Span]) -> None:
    path = _READ_PATH.match(data)
    if not path or not _SECRET_FILE.search(path.group(1).lower(), path.group(1).rfind(b"/") + 1):
        return
    out = data.find(b"\n\noutput:\n", path.end())
    m = _READ_CONTENT.search(data, out, out + 4096) if out > 0 else None
    if m and _bare_secret(m.group(1)) and not _placeholder(m.group(1)):
        spans.append((m.start(1), m.end(1), _REDACTED))


def _printed_secret_spans(data: bytes, spans: list[_Span]) -> None:
    starts = [(m.end(), False) for m in _PROMPTED.finditer(data)]
    first = _PROMPTED.match(b"\n" + data[:64]) if data[:1] == b"$" else None
    if first:  # (the text's first line: no line break before its prompt)
        starts.append((first.end() - 1, False))
    if data.startswith(b"input: "):  # a tool event's narrative (aletheia.capture.memory)
        starts += [(m.end(), True) for m in _JSON_COMMAND.finditer(data)]
        _read_secret_file(data, spans)
    for s, json in starts:
        end, labelled = _printer_at(data, s, json)
        if labelled is not None:
            _labelled_values(data, end, labelled, spans)
        elif end >= 0:
            _printed_value(data, end, spans)
        elif end == -2:  # (cat: only a word such a file holds, not a config file's first line)
            _printed_value(data, _line_end(data, s, s + 2048), spans, bare=True)
        elif data[s : s + 1] in b"mrcgd":
            _secret_argument(data, s, spans)


# "Use X as the password for the test account", "set Zx9… as the admin password": the value
# before the name (the name comes last, so no name rule reads it)
_AS_PASSWORD = _lazy(rb"as[ \t]+(?:the[ \t]+|a[ \t]+|my[ \t]+|our[ \t]+|your[ \t]+|its[ \t]+)?(?:[a-z]+[ \t]+)?"
                     rb"(?:password|passphrase|passwd)(?![\w-])")
_USED_VALUE = _lazy(rb"(?i:use|using|used|set|with|try|enter|type|pick|picked|chose|choose)[ \t]+([\"'`]?)"
                    rb"([^\s\"'`]{6,128})\1[ \t]+\Z")


def _bar_table_rows(data: bytes, bar_bytes: bytes, spans: list[_Span]) -> None:
    """A Markdown table row that pairs a secret's name with its value (an agent's summary of
    the env vars: `| DB_PASSWORD | hunter2… |`): the cell after the name, when it is one word
    that looks like a secret (a description, a placeholder or a type stays)."""
    row_start = b"\n" + bar_bytes
    pos = 0 if data.startswith(bar_bytes) else data.find(row_start)
    while pos >= 0:
        ls = pos + (data[pos] == 0x0A)
        le = _line_end(data, ls)
        _bar_row(data, ls, le, bar_bytes, spans)
        pos = data.find(row_start, le)


def _bar_row(data: bytes, ls: int, le: int, bar_bytes: bytes, spans: list[_Span]) -> None:
    """One such row; in a box (node's console.table of an object: `│ password │ 'hunter2…' │`,
    read where phase one finds a secret's name before a box's bar) a quoted string's quotes."""
    cells: list[tuple[int, int]] = []
    k = ls + len(bar_bytes)
    while k < le:
        bar = data.find(bar_bytes, k, le)
        if bar < 0:
            break
        cells.append((k, bar))
        k = bar + len(bar_bytes)
    for (ns, ne), (vs, ve) in zip(cells, cells[1:], strict=False):  # (each cell and the next)
        name = data[ns:ne].strip(b" \t`*").decode("latin-1")
        raw = data[vs:ve]
        value = raw.strip(b" \t").strip(b"`")
        if bar_bytes != b"|":  # console.table quotes a string (a type or a word in a box stays)
            if not (len(value) > 2 and value[:1] == value[-1:] and value[:1] in b"'\""):
                continue
            value = value[1:-1]
        if not (name and value) or b" " in value or len(value) < 6 or not _secret_name(name):
            continue
        if _placeholder(value) or not _bare_secret(value):
            continue
        start = vs + raw.find(value)
        spans.append((start, start + len(value), _REDACTED))


# A table's header naming a secret's column (a fixture of users, an export a tool printed, a
# query's result): the column's values in the rows under it. Cells are split by a comma, a
# tab, a semicolon, a bar (psql, mysql, Markdown) or a box's bar (│), or, with none of those,
# start where the header's names start (aligned columns: az -o table, kubectl, docker).
_COLUMN_NAME = _lazy(rb"[A-Za-z0-9_ .-]{1,40}\Z")
_ROWS_READ = 1000
_BOX_BAR = "│".encode()
_GAP = _lazy(rb"[ \t]{2,}")
# A resource's name in a column named for secrets (kubectl's SECRET my-app-secret-v2): short
# lower-case words and digits joined by hyphens (a UUID's 12-digit part is longer)
_KEBAB_NAME = _lazy(rb"[a-z][a-z0-9]{0,9}(?:-[a-z0-9]{1,10})+\Z")
_RULE_CHARS = frozenset("-+|=: \t\r─━│┃┼╋├┤┬┴┌┐└┘╞╪╡═╤╧")
_HEADER_BYTES = _ALNUM + b"_ .-,\t;|\r\"'"  # (all a header line may hold, with the box's bar)


def _rule_line(line: bytes) -> bool:
    """A table's border or the line under its header (----+----, +--+--+, ├──┼──┤, ---  -----)."""
    return bool(line.strip()) and set(line.decode("utf-8", "replace")) <= _RULE_CHARS


def _cells(line: bytes, sep: bytes) -> list[tuple[int, int]]:
    """The cells of a row, as offsets into it (a bar table's outer borders are no cells)."""
    out = []
    k = 0
    while True:
        j = line.find(sep, k)
        out.append((k, len(line) if j < 0 else j))
        if j < 0:
            break
        k = j + len(sep)
    if sep in (b"|", _BOX_BAR):
        if out and not line[out[0][0] : out[0][1]].strip():
            out = out[1:]
        if out and not line[out[-1][0] : out[-1][1]].strip():
            out = out[:-1]
    return out


def _aligned_cells(line: bytes, starts: list[int]) -> list[tuple[int, int]] | None:
    """A row's cells under an aligned header's names (None: the row does not fit it)."""
    out = []
    for i, c in enumerate(starts):
        if c and (c > len(line) or line[c - 1 : c] not in (b" ", b"\t")):
            return None
        out.append((c, starts[i + 1] if i + 1 < len(starts) else len(line)))
    return out


def _column_rows(data: bytes, ls: int, le: int, spans: list[_Span]) -> None:
    """A table's header naming a secret's column: the column's values in the rows under it,
    while the rows have its cells."""
    header = data[ls:le].rstrip(b"\r")
    if len(header) > 1024 or header.translate(None, _HEADER_BYTES).replace(_BOX_BAR, b""):
        return  # (cheaply: a line with other characters is no header: api_key = self.api_key)
    sep = next((c for c in (b",", b"\t", b";", b"|", _BOX_BAR) if c in header), None)
    starts: list[int] = []
    if sep is None:
        indent = len(header) - len(header.lstrip(b" \t"))
        if not _GAP.search(header, indent):
            return
        starts = [indent] + [g.end() for g in _GAP.finditer(header, indent)]
        cells = [(c, starts[i + 1] if i + 1 < len(starts) else len(header)) for i, c in enumerate(starts)]
    else:
        cells = _cells(header, sep)
    names = [header[a:b].strip(b" \t\"'") for a, b in cells]
    if len(names) < 2 or not all(_COLUMN_NAME.match(n) for n in names):
        return  # (a header is names only: a sentence or a row of values is none)
    secret = [i for i, n in enumerate(names) if _secret_name(n.decode("latin-1"))]
    p = le + 1
    for _ in range(_ROWS_READ if secret else 0):
        if p >= len(data):
            break
        e = _line_end(data, p)
        line = data[p:e].rstrip(b"\r")
        if _rule_line(line) and sep in (None, b"|", _BOX_BAR):
            p = e + 1
            continue
        row = _aligned_cells(line, starts) if sep is None else _cells(line, sep)
        if not row or len(row) != len(names) or not line.strip():
            break  # (the table ended)
        for i in secret:
            a, b = row[i]
            cell = line[a:b]
            value = cell.strip(b" \t").strip(b"\"'")
            if len(value) >= 6 and b" " not in value and not _placeholder(value) and _bare_secret(value) \
                    and not _KEBAB_NAME.match(value):
                vs = p + a + cell.find(value)
                spans.append((vs, vs + len(value), _REDACTED))
        p = e + 1


# `echo … | base64 -d` (or `base64 --decode <<< …`) of a literal: the output is what a
# Secret's data or a config's value hid; a word that looks like a secret, and its encoding
_B64_DECODE = _lazy(rb"base64[ \t]+(?:-d|--decode|-D)(?![\w-])")
_B64_LITERAL = _lazy(rb"(?:(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)*|<<<[ \t]*)[\"']?([A-Za-z0-9+/]{8,}={0,2})[\"']?(?![\w+/=])")


def _decoded_literal(data: bytes, ls: int, spans: list[_Span]) -> None:
    le = _line_end(data, ls)
    lit = _B64_LITERAL.search(data, ls, le)
    if lit:
        n = len(spans)
        _printed_value(data, le, spans, bare=True)  # (after "output:" in a tool event's narrative)
        if len(spans) > n:
            spans.append((lit.start(1), lit.end(1), _REDACTED))


_TABLE_ROW = _lazy(rb"\n\|")  # (over a long text: re's literal search is twice as fast as `in`'s)


def _context_spans(data: bytes, low: bytes, spans: list[_Span]) -> None:
    _secret_file_spans(data, low, spans)
    _printed_secret_spans(data, spans)
    _argument_commands(data, low, spans)
    _sensitive_spans(data, spans)
    if data.startswith(b"|") or (_TABLE_ROW.search(data) if len(data) >= 65536 else b"\n|" in data):
        _bar_table_rows(data, b"|", spans)
    for m in _AS_PASSWORD.finditer(low):
        used = _USED_VALUE.search(data, max(0, m.start() - 160), m.start())
        if used and _secret_value(used.group(2), quoted=True, code=False, name="password") \
                and not _placeholder(used.group(2)):
            spans.append((used.start(2), used.end(2), _REDACTED))
    for word, rx in zip((b"mnemonic", b"phrase"), _MNEMONIC, strict=True):
        for m in rx.finditer(low) if word in low else ():
            if m.group(1).count(b" ") + m.group(1).count(b"\t") in (11, 14, 17, 20, 23):  # 12 … 24 words
                spans.append((m.start(1), m.end(1), _REDACTED))
    if b"\t" in data:
        for m in _COOKIE_JAR.finditer(data):
            if _cookie_secret(m.group(1), m.group(2)):
                spans.append((m.start(2), m.end(2), _REDACTED))
    if not _DEPTH[0]:
        for word in (b"base64", b"b64"):
            pos = low.find(word)
            done = -1
            while pos >= 0:
                ls = data.rfind(b"\n", 0, pos) + 1
                if ls > done and (word == b"base64" or _b64_word(low, pos)):
                    # (and the two lines after it: `echo -n $TOKEN | base64` prints on the next)
                    done = _line_end(data, _line_end(data, _line_end(data, pos) + 1) + 1)
                    for m in _B64_VALUE.finditer(data, ls, done):
                        found = _x_b64_json(data, m.start(), m.end(), spans)
                        if found:
                            spans.append(found)
                    if word == b"base64" and _B64_DECODE.match(low, pos):
                        _decoded_literal(data, ls, spans)
                pos = low.find(word, pos + len(word))
    for m in _DISCORD_TAIL.finditer(data):  # a bot token anywhere: its id part checked backwards
        s = m.start()
        head = data[max(0, s - 28) : s]
        cut = len(head.rstrip(_NAME_CHARS_BYTES.replace(b".", b"")))
        if 23 <= len(head) - cut <= 28 and _discord_bot_token(data[s - len(head) + cut : m.end()]):
            spans.append((s - len(head) + cut, m.end(), _MARKER["discord"]))

    _unnamed_spans(data, low, spans)


# A .pgpass line (host:port:db:user:PASSWORD) needs no name: its shape is one. Found from its
# ":port:" (a clock's "12:34:56" is turned away by the digit after it); a whole line is read.
_PGPASS_PORT = _lazy(rb":(?:\d{1,5}|\*):(?!\d)")
_PGPASS_LINE = _lazy(rb"[ \t]*(?:[A-Za-z0-9_.-]{1,253}|\*):(?:\d{1,5}|\*):[\w.$*-]{1,63}:[\w.$@*-]*[A-Za-z*][\w.$@*-]*"
                     rb":((?:[^\s:\\]|\\.){3,256})[ \t]*\r?\Z")


# A Bitcoin private key under its format's name ("WIF: 5H…", {"wif": "L…"}, "wif = K…"): base58,
# 51 or 52 characters, led by 5, K, L (9, c: testnet). (One find: "wif" has no anchor letter.)
_WIF = _lazy(rb"wif[\"']?[ \t]*[:=][ \t]*[\"']?([59klc][1-9a-z]{50,51})(?![\w])")


# "s-e-c-r-e-t": no anchor letter in it (see the x_spaced rows), so one search of its own, from
# its "c" (~1 % of the redactor's CPU on a long log)
_SPACED_SECRET = _lazy(rb"c[ ._-]r[ ._-]e[ ._-]t(?<=s[ ._-]e[ ._-]c[ ._-]r[ ._-]e[ ._-]t)")


# PHP's var_dump of an array or object: the name's line, then its value's on the next line
# (["password"]=>\n  string(11) "…"); found from ']=>' (rare bytes)
_VAR_DUMP = _lazy(rb'\["([A-Za-z_][\w-]{0,63})"(?::"[\w\\]{1,128}")?(?::(?:private|protected))?\]=>\r?\n[ \t]*string\((\d{1,4})\) "')


def _var_dump_spans(data: bytes, spans: list[_Span]) -> None:
    for m in _VAR_DUMP.finditer(data):
        if _secret_name(m.group(1).decode("latin-1")):
            s = m.end()
            e = s + int(m.group(2))
            value = data[s:e]
            if data[e : e + 1] == b'"' and len(value) >= 3 and not _is_marker(value) and not _placeholder(value) \
                    and not any(a < e and s < b for a, b, _ in spans):
                spans.append((s, e, _REDACTED))


def _unnamed_spans(data: bytes, low: bytes, spans: list[_Span]) -> None:
    long = len(low) >= 65536  # (over a long text re finds a literal faster than `in` does)
    if long or b"]=>" in data:
        _var_dump_spans(data, spans)
    for m in _WIF.finditer(low) if long or b"wif" in low else ():
        spans.append((m.start(1), m.end(1), _MARKER["bitcoin"]))
    for m in _SPACED_SECRET.finditer(low):
        if found := _x_spaced(data, m.start() - 4, m.end(), spans):
            spans.append(found)
    done = -1
    for m in _PGPASS_PORT.finditer(data):
        if m.start() < done:
            continue
        ls = data.rfind(b"\n", 0, m.start()) + 1
        done = _line_end(data, m.end())
        line = _PGPASS_LINE.fullmatch(data, ls, done)
        if line and not _is_marker(line.group(1)) and not line.group(1).isdigit():
            spans.append((line.start(1), line.end(1), _REDACTED))


# ---------------------------------------------------------------------------------------------
# 4. Command lines. A tool's own flag for a password (mysql -pX, sshpass -p X, redis-cli -a X,
#    docker login -p X, zip -P X, 7z -pX, ldapsearch -w X, smbclient -U user%X …), passwords
#    as positional arguments (htpasswd -b file user X, sqlplus user/X@db, openssl passwd X),
#    and secrets piped or here-stringed into a command that reads them from stdin (echo X |
#    docker login --password-stdin, sudo -S <<< X). Found from the flag (one regex on " -"),
#    from "|" and "<<<" (rare bytes), and from command words that hold an anchor letter; the
#    line is then split like a shell would and the tool looked up in a table.

_ATTACHED, _NEXT, _BOTH, _USER_COLON, _USER_PERCENT, _USER_COMMA, _PASS_PREFIX, _COOKIE, _KEY_EQUALS = range(9)
_MYSQL = {b"-p": _ATTACHED}
_LDAP = {b"-w": _NEXT}
_SNMP = {b"-A": _NEXT, b"-X": _NEXT}
_ONE_P = {b"-p": _NEXT}
_CAP_P = {b"-P": _BOTH}
_HTTPIE = {b"-a": _USER_COLON, b"--auth": _USER_COLON}
_CLI_TOOLS: dict[bytes, dict[bytes, int]] = {
    **dict.fromkeys((b"mysql", b"mysqldump", b"mysqladmin", b"mysqlimport", b"mysqlcheck",
                     b"mysqlshow", b"mysqlpump", b"mysqlbinlog", b"mysqlsh", b"mariadb",
                     b"mariadb-dump", b"mariadb-admin", b"mariadb-import", b"mariadb-check",
                     b"mydumper", b"myloader", b"mysqlslap"), _MYSQL),
    b"sshpass": {b"-p": _BOTH},
    b"mycli": {b"-p": _BOTH},  # (mysql's -p is attached only: a word after it is the database)
    b"rabbitmqadmin": {b"-p": _NEXT},  # (-P is its port)
    **dict.fromkeys((b"vsce", b"ovsx"), {b"-p": _NEXT}),  # vsce/ovsx publish -p PAT
    b"choco": {b"-k": _NEXT, b"--key": _NEXT},  # choco apikey -k KEY -s SOURCE
    b"altool": {b"-p": _NEXT},  # xcrun altool -u USER -p PASSWORD (an app-specific password)
    **dict.fromkeys((b"redis-cli", b"keydb-cli", b"valkey-cli"), {b"-a": _NEXT}),
    b"login": {b"-p": _BOTH},  # docker, podman, buildah, oras, nerdctl, crane auth, az (acr) login
    **dict.fromkeys((b"7z", b"7za", b"7zr", b"7zz", b"rar", b"unrar", b"winrar"), {b"-p": _ATTACHED}),
    **dict.fromkeys((b"zip", b"unzip", b"zipcloak", b"funzip"), {b"-P": _NEXT}),
    b"openssl": {b"-k": _NEXT, b"-pass": _PASS_PREFIX, b"-passin": _PASS_PREFIX,
                 b"-passout": _PASS_PREFIX},
    b"secret": {b"-b": _BOTH, b"--body": _NEXT},  # gh secret set NAME --body X
    **dict.fromkeys((b"sqlcmd", b"bcp", b"isql", b"osql", b"ipmitool"), _CAP_P),
    b"ssh-keygen": {b"-P": _NEXT, b"-N": _NEXT},
    **dict.fromkeys((b"mongo", b"mongosh", b"mongodump", b"mongorestore", b"mongoexport",
                     b"mongoimport", b"mongostat", b"mongotop", b"mongofiles", b"cqlsh",
                     b"cypher-shell", b"rdesktop", b"psexec", b"psexec.py", b"paexec", b"twine",
                     b"ncftp", b"ncftpput", b"ncftpget", b"evil-winrm", b"crackmapexec", b"nxc",
                     b"smbmap", b"wmiexec.py", b"smbexec.py", b"influx"), _ONE_P),
    **dict.fromkeys((b"ldapsearch", b"ldapadd", b"ldapmodify", b"ldapdelete", b"ldapmodrdn",
                     b"ldapwhoami", b"ldapcompare", b"ldapexop"), _LDAP),
    b"ldappasswd": {b"-w": _NEXT, b"-s": _NEXT, b"-a": _NEXT},
    **dict.fromkeys((b"snmpwalk", b"snmpget", b"snmpset", b"snmpbulkwalk", b"snmpbulkget",
                     b"snmptrap", b"snmptable", b"snmpgetnext"), _SNMP),
    **dict.fromkeys((b"smbclient", b"rpcclient", b"smbcacls", b"smbget"), {b"-U": _USER_PERCENT}),
    b"lftp": {b"-u": _USER_COMMA},
    **dict.fromkeys((b"http", b"https", b"xh", b"xhs"), _HTTPIE),
    b"curl": {b"-U": _USER_COLON, b"--proxy-user": _USER_COLON, b"--oauth2-bearer": _NEXT,
              b"-b": _COOKIE, b"--cookie": _COOKIE},
    b"skopeo": {b"--creds": _USER_COLON, b"--src-creds": _USER_COLON, b"--dest-creds": _USER_COLON},
    b"apksigner": {b"--ks-pass": _PASS_PREFIX, b"--key-pass": _PASS_PREFIX},
    b"security": {b"-w": _NEXT},
    b"nuget": {b"-p": _NEXT, b"-k": _NEXT},  # (dotnet nuget push PKG -k API_KEY)
    # SAP HANA's hdbsql, Couchbase's cbq: -p X; Vertica's vsql: -w X; mssql-cli: -P X
    **dict.fromkeys((b"mosquitto_pub", b"mosquitto_sub", b"mosquitto_rr"), {b"-P": _NEXT}),
    b"bw": {b"--session": _NEXT},  # Bitwarden's session key given to any command
    **dict.fromkeys((b"hdbsql", b"cbq"), _ONE_P), b"vsql": _LDAP, b"mssql-cli": _CAP_P,  # dotnet nuget add source URL -u USER -p PASSWORD  # add-generic-password -w X (find-…-password -w: no value after it)
}
# Commands that read a secret from stdin when given these flags (or always, for None).
_STDIN_READERS: dict[bytes, tuple[bytes, ...] | None] = {
    b"login": (b"--password-stdin", b"--with-token", b"-"), b"chpasswd": None,
    b"passwd": None, b"sudo": (b"-S", b"--stdin"), b"smbpasswd": (b"-s",),
    b"secret": None, b"variable": None, b"htpasswd": (b"-i",),
    b"vercel": (b"add",),  # echo X | vercel env add NAME production
    b"gcloud": (b"--data-file=-",),  # gcloud secrets create|versions add NAME --data-file=-
    b"kubeseal": (b"--raw",), b"secret-tool": (b"store",), b"keyring": (b"set",),
    b"restic": None,  # the repository's password, read from stdin when it is no terminal
}
_HTPASSWD_VALUE_FLAGS = frozenset((b"-C", b"-r"))
_STDIN_WRITERS = frozenset((b"echo", b"printf", b"print", b"write-output"))
_PROMPT_WORD = _lazy(rb"(?:[$#%>\xe2\x9d\xaf]|PS>|[\w.@-]*[$#>]|\++|[A-Za-z_][A-Za-z0-9_]*=\S*)\Z")  # (+: set -x)

# Triggers. Short flags the table knows (and htpasswd's batch clusters: -b, -nb, -Bbn …) and
# the long ones only a tool's table gives a meaning; the generic --password/--token flags are
# names, read in part 3.
_CLI_FLAG = _lazy(
    rb" -(?:[pPawkAXNSsUuv]|t(?=[ \t=]+[\"']?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-)|[a-zA-Z]{0,3}b[a-zA-Z]{0,3}(?=[ \t'\"])|b"
    rb"|-(?:body|s(?:rc|dest)?-?creds|creds|proxy-user|auth|ks-pass|key-pass|oauth2-bearer"
    rb"|cookie|value|session|from-literal|arg|key|global|local)(?=[ \t=]))"
    rb"| /(?:user:|add(?![\w-])|persistent:|domain(?![\w-]))"  # Windows: net use, net user
)
_SHELL_BREAK = frozenset(b" \t\r\n|;&()")


_SHELL_WORD = _lazy(
    rb"\|+|&+|[;()`]|(?:[^\s|;&()`'\"\\$]+|'[^']*'?|\"(?:[^\"\\]|\\.)*\"?|\\.?|\$\([^)]*\)?|\$)+"
)


def _shell_words(data: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """The words of data[start:end] as a shell splits them (quotes group, a backslash escapes,
    $( … ) stays one word); pipes, ``;``, ``&&`` and parentheses come out as words of their own."""
    return [m.span() for m in _SHELL_WORD.finditer(data, start, end)]


def _unquote(data: bytes, s: int, e: int) -> tuple[int, int, bool]:
    """The inside of a quoted word (or the word itself); and whether it was quoted."""
    e = min(e, len(data))
    if e - s >= 2 and data[s] in b"'\"" and data[e - 1] == data[s]:
        return s + 1, e - 1, True
    if e - s >= 3 and data[s] == 0x24 and data[s + 1] == 0x27 and data[e - 1] == 0x27:  # $'…'
        return s + 2, e - 1, True
    if e - s >= 4 and data[s : s + 2] == b'\\"' and data[e - 2 : e] == b'\\"':  # \"…\" in JSON
        return s + 2, e - 2, True
    return s, e, False


def _tool_name(word: bytes) -> bytes:
    name = word.strip(b"'\"").rsplit(b"/", 1)[-1].rsplit(b"\\", 1)[-1].lower()
    return name[:-4] if name.endswith(b".exe") else name


_EXPANDS = _lazy(rb"\$[A-Za-z0-9_{(@*#?!$-]")


def _cli_value(data: bytes, s: int, e: int, spans: list[_Span]) -> None:
    """Redact the literal value data[s:e] (a word, or its inside): not a variable, a command
    substitution, a file, a placeholder or a marker."""
    s, e, quoted = _unquote(data, s, e)
    value = data[s:e]
    if len(value) < 3 or value[:1] in b"$`@<-" or b"$(" in value or b"${" in value:
        return
    if quoted and data[s - 1] == 0x22 and _EXPANDS.search(value):
        return  # "$VAR" inside double quotes (a "$" at the end, or before "%", is the password's)
    if _is_marker(value) or _placeholder(value) or b"[redacted" in value or b"[private]" in value:
        return
    if any(a < e and s < b for a, b, _ in spans):
        return  # part of it is a shape already: a second run would see a marker there
    spans.append((s, e, _REDACTED))


def _after_char(data: bytes, s: int, e: int, sep: bytes, spans: list[_Span]) -> None:
    """user<sep>SECRET: the part after the first separator."""
    s, e, _ = _unquote(data, s, e)
    k = data.find(sep, s, e)
    if k >= 0:
        _cli_value(data, k + 1, e, spans)


def _flag_value(data: bytes, words: list[tuple[int, int]], i: int, flag: bytes, mode: int,
                spans: list[_Span]) -> None:
    s, e = words[i]
    attached = s + len(flag)
    if attached < e and data[attached] == 0x3D:  # --flag=value
        attached += 1
    if attached < e:
        vs, ve = attached, e
    elif mode == _ATTACHED or i + 1 >= len(words):
        return  # mysql -p alone prompts
    else:
        vs, ve = words[i + 1]
        if data[vs : vs + 1] == b"-" or data[vs] in _COMMAND_BREAK:
            return
    if mode in (_ATTACHED, _NEXT, _BOTH):
        _cli_value(data, vs, ve, spans)
    elif mode == _USER_COLON:
        _after_char(data, vs, ve, b":", spans)
    elif mode == _USER_PERCENT:
        _after_char(data, vs, ve, b"%", spans)
    elif mode == _USER_COMMA:
        _after_char(data, vs, ve, b",", spans)
    elif mode == _KEY_EQUALS:
        _after_char(data, vs, ve, b"=", spans)
    elif mode == _PASS_PREFIX:
        us, ue, _ = _unquote(data, vs, ve)
        if data.startswith(b"pass:", us):
            _cli_value(data, us + 5, ue, spans)
        elif data.find(b":", us, ue) < 0:
            _cli_value(data, vs, ve, spans)
    elif mode == _COOKIE:
        us, ue, _ = _unquote(data, vs, ve)
        if data.find(b"=", us, ue) >= 0:  # name=value pairs, not a cookie-jar file
            _cookie_spans(data, us, ue, False, _Blockers(b"", []), spans)


def _command_bounds(words: list[tuple[int, int]], data: bytes, i: int) -> tuple[int, int]:
    """Word indexes [lo, hi) of the simple command that holds word i."""
    lo = i
    while lo > 0 and data[words[lo - 1][0]] not in _COMMAND_BREAK:
        lo -= 1
    hi = i
    while hi < len(words) and data[words[hi][0]] not in _COMMAND_BREAK:
        hi += 1
    return lo, hi


def _find_tool(data: bytes, words: list[tuple[int, int]], lo: int, i: int,
               table: dict[bytes, object]) -> tuple[bytes, int]:
    """The nearest word before word i (in its command) that names a tool of ``table``."""
    for j in range(i - 1, lo - 1, -1):
        s, e = words[j]
        name = _tool_name(data[s:e])
        if name in table:
            return name, j
    return b"", -1


_LINE_REACH = 8192  # how far a command line is read around a flag (a longer one is cut)


def _quoted_command(data: bytes, ls: int, le: int, pos: int) -> tuple[int, int] | None:
    """If pos is inside a double-quoted JSON/YAML string value (after ``:``, ``[`` or ``,``),
    the bounds of its line there: tool inputs are stored as JSON, where a command's quotes are
    escaped and its newlines are ``\\n``."""
    opened = -1
    i = data.find(b'"', ls, pos)
    while i >= 0:
        k = i
        while k > ls and data[k - 1] == 0x5C:
            k -= 1
        if (i - k) % 2 == 0:  # not escaped
            opened = -1 if opened >= 0 else i
        i = data.find(b'"', i + 1, pos)
    if opened < 0 or data[ls:opened].rstrip()[-1:] not in (b":", b"[", b",", b"{"):
        return None
    close = _close_quote(data, opened + 1, b'"', le)
    start = _json_newline(data, opened + 1, pos, last=True)
    start = opened + 1 if start < 0 else start + 2
    end = _json_newline(data, pos, close)
    return start, (close if end < 0 else end)


def _json_newline(data: bytes, lo: int, hi: int, last: bool = False) -> int:
    """The first (or last) newline escape in data[lo:hi], not a backslash's escape and an n
    (printf 'X=%s\\\\n' in a stored command is one line)."""
    i = data.rfind(b"\\n", lo, hi) if last else data.find(b"\\n", lo, hi)
    while i >= 0:
        k = i
        while k > lo and data[k - 1] == 0x5C:
            k -= 1
        if (i - k) % 2 == 0:
            return i
        i = data.rfind(b"\\n", lo, i) if last else data.find(b"\\n", i + 1, hi)
    return -1


_FLAGS_PER_LINE = 64


def _line_words(data: bytes, pos: int, spans: list[_Span]) -> tuple[list[tuple[int, int]], int]:
    """The words of the line around pos (at most 4 KiB of it) and the index of the word at pos.
    What earlier rules replace (a key block, a token) is one opaque word, and a line that starts
    inside one starts where it does: a second run, which sees a marker there, splits the same."""
    ls = data.rfind(b"\n", max(0, pos - _LINE_REACH), pos) + 1 or max(0, pos - _LINE_REACH)
    le = data.find(b"\n", pos, pos + _LINE_REACH)
    if le < 0:
        le = min(len(data), pos + _LINE_REACH)
    inside = [(a, b) for a, b, _ in spans if a < le and b > ls]
    for a, b in inside:
        if a < ls < b:
            ls = data.rfind(b"\n", max(0, a - _LINE_REACH), a) + 1 or max(0, a - _LINE_REACH)
        if a < le < b:
            le = data.find(b"\n", b, b + _LINE_REACH)
            le = min(len(data), b + _LINE_REACH) if le < 0 else le
    quoted = _quoted_command(data, ls, le, pos)
    if quoted:  # {"command": "mysql -p…\n…"}: the command inside a JSON (or YAML) string
        ls, le = quoted
    line = data[ls:le]
    if inside or quoted:
        masked = bytearray(line)
        for a, b, _ in spans:
            if a < le and b > ls:
                masked[max(a, ls) - ls : min(b, le) - ls] = b"x" * (min(b, le) - max(a, ls))
        if quoted:  # the string's escapes, same length: \" is a quote, \t a blank
            masked = bytearray(bytes(masked).replace(b'\\"', b'x"').replace(b"\\t", b"  "))
        line = bytes(masked)
    words = [(s + ls, e + ls) for s, e in _shell_words(line, 0, len(line))]
    i = bisect.bisect_right(words, (pos, len(data) + 1)) - 1
    return words, i


def _htpasswd(data: bytes, words: list[tuple[int, int]], t: int, hi: int, spans: list[_Span]) -> None:
    """htpasswd -b[c|n|B…] [file] user PASSWORD: the last positional of batch mode."""
    flags = b""
    positional = []
    j = t + 1
    while j < hi:
        s, e = words[j]
        w = data[s:e]
        if w[:1] == b"-" and len(w) > 1:
            flags += w[1:]
            j += 2 if w in _HTPASSWD_VALUE_FLAGS else 1
            continue
        positional.append(j)
        j += 1
    if b"b" not in flags:
        return
    need = 2 if b"n" in flags else 3
    if len(positional) >= need:
        s, e = words[positional[need - 1]]
        _cli_value(data, s, e, spans)


def _net_command(data: bytes, words: list[tuple[int, int]], lo: int, hi: int, spans: list[_Span]) -> None:
    """net use [drive:] \\\\server\\share [PASSWORD] /user:NAME [PASSWORD]; net user NAME PASSWORD /add."""
    names = [data[s:e].lower() for s, e in words[lo:hi]]
    if b"net" not in names:
        return
    n = names.index(b"net")
    sub = names[n + 1] if n + 1 < len(names) else b""
    positional = [lo + j for j in range(n + 2, len(names)) if names[j][:1] != b"/" and names[j] != b"*"]
    if sub == b"use":
        for j in positional:
            w = data[words[j][0] : words[j][1]]
            if not (w.startswith(b"\\") or w.endswith(b":") or w.startswith(b"\\")):
                _cli_value(data, *words[j], spans)
    elif sub == b"user" and len(positional) >= 2:
        _cli_value(data, *words[positional[1]], spans)


def _cli_flag_hit(data: bytes, pos: int, spans: list[_Span]) -> None:
    words, i = _line_words(data, pos, spans)
    if i < 0 or words[i][0] != pos:
        return
    lo, hi = _command_bounds(words, data, i)
    if data[pos] == 0x2F:  # /user:, /add: Windows' net
        _net_command(data, words, lo, hi, spans)
        return
    s, e = words[i]
    word = data[s:e]
    if word.startswith(b"--value"):
        _stored_value(data, words, lo, i, hi, spans)
        return
    if word.startswith(b"--from-literal"):  # kubectl/oc create secret … --from-literal=KEY=VALUE
        said = [_tool_name(data[a:b]) for a, b in words[lo:i]]
        if b"secret" in said and (b"kubectl" in said or b"oc" in said) and not _plain_literal(data, *words[i]):
            _flag_value(data, words, i, b"--from-literal", _KEY_EQUALS, spans)  # (not a configmap's)
        return
    if word == b"-v":  # xmlstarlet ed -u XPATH -v X, dasel put -v X SELECTOR
        tool, t = _find_tool(data, words, lo, i, _PATH_EDITORS)
        if tool:
            _path_editor_at(data, words[t][0], spans)
        return
    if word in (b"--global", b"--local"):  # bundle config [set] --local HOST USER:PASSWORD
        _bundle_credentials(data, words, lo, i, hi, spans)
        return
    if word == b"--arg":  # jq/yq --arg NAME VALUE: a secret's when NAME, or the key the
        _jq_arg(data, words, lo, i, hi, spans)  # filter sets to $NAME, names one
        return
    if word[:2] == b"-t":  # a UUID after -t: Codecov's upload token (codecov, codecovcli, or
        # its bash uploader: bash <(curl -s https://codecov.io/bash) -t X)
        if b"codecov" in data[words[0][0] : words[-1][1]].lower():
            _flag_value(data, words, i, b"-t", _NEXT, spans)
        return
    tool, t = _find_tool(data, words, lo, i, _CLI_TOOLS_AND_HTPASSWD)
    if not tool:
        return
    if tool == b"htpasswd":
        _htpasswd(data, words, t, hi, spans)
        return
    table = _CLI_TOOLS[tool]
    for flag, mode in table.items():
        if word == flag or word.startswith(flag) and (
            mode in (_ATTACHED, _BOTH) and len(flag) == 2 or word[len(flag) : len(flag) + 1] == b"="
        ):
            _flag_value(data, words, i, flag, mode, spans)
            return


_CLI_TOOLS_AND_HTPASSWD: dict[bytes, object] = {**_CLI_TOOLS, b"htpasswd": None}
_JQ_TOOLS = frozenset((b"jq", b"gojq", b"jaq", b"yq", b"xq", b"tomlq"))


# A Secret's keys that name no secret: a username, a host, a port, a database (their value stays
# unless it looks generated); every other key's value is hidden, whatever its name
_PLAIN_KEY_WORDS = frozenset("user username login host hostname port database db dbname name email region".split())


def _plain_literal(data: bytes, s: int, e: int) -> bool:
    """--from-literal=KEY=VALUE: does KEY name no secret and VALUE look typed, not generated?"""
    us, ue, _ = _unquote(data, s, e)
    k = data.find(b"=", us, ue)
    eq = data.find(b"=", k + 1, ue) if k >= 0 else -1
    if eq < 0:
        return False
    words = _words(data[k + 1 : eq].decode("latin-1"))
    return bool(words) and _PLAIN_KEY_WORDS.issuperset(words) and not _random_token(data[eq + 1 : ue])


def _bundle_credentials(data: bytes, words: list[tuple[int, int]], lo: int, i: int, hi: int,
                        spans: list[_Span]) -> None:
    """bundle config [set] --local|--global SOURCE USER:PASSWORD: a gem source's credentials
    (Sidekiq Pro's gems.contribsys.com, a private gem server): the part after the colon."""
    said = [data[a:b] for a, b in words[lo:hi]]
    t = next((j for j, w in enumerate(said) if _tool_name(w) == b"bundle"), -1)
    if t < 0 or said[t + 1 : t + 2] != [b"config"]:
        return
    args = [lo + j for j in range(t + 2, len(said)) if said[j][:1] != b"-"]
    if args and said[args[0] - lo] == b"set":
        args = args[1:]
    if len(args) == 2 and b"." in said[args[0] - lo] and b":" in said[args[1] - lo]:
        _after_char(data, *words[args[1]], b":", spans)


def _jq_arg(data: bytes, words: list[tuple[int, int]], lo: int, i: int, hi: int,
            spans: list[_Span]) -> None:
    """jq --arg NAME VALUE: VALUE is a secret's when NAME is a secret's name (--arg pw X) or the
    filter sets a secret-named key to $NAME (.db.password = $v)."""
    if i + 2 >= hi or not any(_tool_name(data[a:b]) in _JQ_TOOLS for a, b in words[lo:i]):
        return
    ns, ne, _ = _unquote(data, *words[i + 1])
    name = data[ns:ne]
    if not name or not _named_secret(name):
        ref = b"$" + name
        line = data[words[lo][0] : words[hi - 1][1]]
        k = line.find(ref)
        while k >= 0:
            m = _JQ_SET_KEY.search(line, max(0, k - 80), k)
            after = k + len(ref)
            if m and (after >= len(line) or line[after] not in _JQ_NAME_BYTES) and _named_secret(m.group(1)):
                break
            k = line.find(ref, k + 1)
        else:
            return
    _cli_value(data, *words[i + 2], spans)


_JQ_SET_KEY = _lazy(rb"([A-Za-z_][\w-]*)[\"']?\]?[ \t]*[|+]?=[ \t]*$")
_JQ_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# Commands that store the --value they are given as a secret: (tool, its subcommand's words,
# a word the command must also have)
_VALUE_STORES = ((b"az", (b"keyvault", b"secret", b"set"), b""),
                 (b"aws", (b"ssm", b"put-parameter"), b"securestring"))


def _stored_value(data: bytes, words: list[tuple[int, int]], lo: int, i: int, hi: int,
                  spans: list[_Span]) -> None:
    said = [data[a:b].lower() for a, b in words[lo:hi]]
    for tool, sub, needed in _VALUE_STORES:
        t = next((j for j, w in enumerate(said) if _tool_name(w) == tool), -1)
        if t >= 0 and tuple(said[t + 1 : t + 1 + len(sub)]) == sub and (not needed or needed in said):
            _flag_value(data, words, i, b"--value", _NEXT, spans)
            return


def _stdin_hit(data: bytes, pos: int, spans: list[_Span]) -> None:
    """A pipe at pos, or a here-string: is a literal fed to a command that reads a secret?"""
    words, i = _line_words(data, pos, spans)
    if i < 0:
        return
    if data.startswith(b"<<<", pos):  # cmd … <<< SECRET
        lo, hi = _command_bounds(words, data, i)
        if not _reads_stdin(data, words, lo, hi):
            return
        if words[i][1] > pos + 3:
            _cli_value(data, pos + 3, words[i][1], spans)  # <<<'SECRET'
        elif i + 1 < hi:
            _cli_value(data, *words[i + 1], spans)  # <<< SECRET
        return
    if words[i][0] != pos or data[pos : pos + 2] == b"||" or i == 0 or i + 1 >= len(words):
        return
    lo, _ = _command_bounds(words, data, i - 1)
    _, hi = _command_bounds(words, data, i + 1)
    if not _reads_stdin(data, words, i + 1, hi):
        return
    while lo < i - 1 and _PROMPT_WORD.match(data, words[lo][0], words[lo][1]):
        lo += 1  # "$ echo …", "PS> echo …", "FOO=1 echo …"
    writer = _tool_name(data[words[lo][0] : words[lo][1]])
    if writer not in _STDIN_WRITERS:
        return
    args = [j for j in range(lo + 1, i) if data[words[j][0]] != 0x2D]  # not echo's -n / -e
    if writer == b"printf" and len(args) > 1:
        args = args[1:]  # printf FORMAT VALUE…: the format is not the secret
    for j in args:
        s, e = words[j]
        if _tool_name(data[words[i + 1][0] : words[i + 1][1]]) == b"chpasswd":
            _after_char(data, s, e, b":", spans)  # user:password
        else:
            _cli_value(data, s, e, spans)


def _reads_stdin(data: bytes, words: list[tuple[int, int]], lo: int, hi: int) -> bool:
    tool, t = _find_tool(data, words, lo, hi, _STDIN_READERS)  # type: ignore[arg-type]
    if not tool:
        return False
    flags = _STDIN_READERS[tool]
    if tool == b"secret":  # gh secret set NAME (no --body): the value comes from stdin
        return all(not data.startswith(b"-b", s) and not data.startswith(b"--body", s)
                   for s, _ in words[t:hi])
    if tool == b"variable":  # glab variable set NAME, value from stdin
        return hi - t <= 3
    if tool == b"restic":  # (not the data of restic backup --stdin, --stdin-from-command)
        return all(not data.startswith(b"--stdin", s) for s, _ in words[t:hi])
    return flags is None or any(data[s:e] in flags for s, e in words[t + 1 : hi])


# Editors that set a value at a path in a config file: xmlstarlet ed -u XPATH -v X, dasel put
# -v X SELECTOR. The value is a secret's when the path's last part names one (//password,
# .db.password). Found from their -v (_CLI_FLAG).
_PATH_EDITORS: dict[bytes, object] = dict.fromkeys((b"dasel", b"xmlstarlet"))  # found from their -v
_PATH_PARTS = _lazy(rb"[A-Za-z_][\w-]*")


def _path_editor_at(data: bytes, start: int, spans: list[_Span]) -> None:
    words, i = _line_words(data, start, spans)
    if i < 0:
        return
    _, hi = _command_bounds(words, data, i)
    said = [data[a:b] for a, b in words[i:hi]]
    path = -1
    for j, w in enumerate(said[1:], 1):
        parts = _PATH_PARTS.findall(w.strip(b"'\""))
        if w[:1] != b"-" and parts and (b"/" in w or b"." in w or b"[" in w) \
                and _secret_name(parts[-1].decode("latin-1")):
            path = j
            break
    if path < 0:
        return
    value = next((j + 1 for j, w in enumerate(said[:-1]) if w in (b"-v", b"--value")), -1)
    if value > 0 and value != path:  # (xmlstarlet sel -v XPATH prints the value)
        _cli_value(data, *words[i + value], spans)


def _cli_spans(data: bytes, spans: list[_Span]) -> None:
    seen = -2  # the line of the last net command (rfind gives -1 for the first line)
    line, count = -2, 0
    for m in _CLI_FLAG.finditer(data):
        ls = data.rfind(b"\n", max(0, m.start() - _LINE_REACH), m.start())
        if ls != line:
            line, count = ls, 0
        count += 1
        if count > _FLAGS_PER_LINE:
            continue  # no command line has that many: bounded work on adversarial input
        if data[m.start() + 1] == 0x2F:  # a net command: once per line
            ls = data.rfind(b"\n", 0, m.start())
            if ls == seen:
                continue
            seen = ls
        _cli_flag_hit(data, m.start() + 1, spans)
    pos = data.find(b"|")
    line, count = -2, 0
    while pos >= 0:
        line_start = data.rfind(b"\n", max(0, pos - _LINE_REACH), pos)
        if line_start != line:
            line, count = line_start, 0
        count += 1
        head = data[max(line_start + 1, pos - 2048) : pos]
        if count <= _FLAGS_PER_LINE and any(w in head for w in (b"echo", b"printf", b"print", b"Write-Output")):
            _stdin_hit(data, pos, spans)
        pos = data.find(b"|", pos + 1)
    pos = data.find(b"<<<")
    while pos >= 0:
        _stdin_hit(data, pos, spans)
        pos = data.find(b"<<<", pos + 3)


# ---------------------------------------------------------------------------------------------


def _apply(data: bytes, spans: list[_Span]) -> bytes:
    """Replace the spans. Overlapping spans merge into one, which keeps ``[private]`` if a block
    is among them, else a marker that names a kind over a plain ``[redacted]``."""
    spans.sort(key=lambda s: (s[0], -s[1]))
    view = memoryview(data)
    parts: list[bytes | memoryview] = []
    last = 0
    cur_s, cur_e, cur_r = spans[0]
    for s, e, r in spans[1:]:
        if s < cur_e:
            cur_e = max(cur_e, e)
            if cur_r == _REDACTED or r == _PRIVATE:
                cur_r = r
            continue
        parts += (view[last:cur_s], cur_r)
        last = cur_e
        cur_s, cur_e, cur_r = s, e, r
    parts += (view[last:cur_s], cur_r, view[cur_e:])
    return b"".join(parts)


# Invisible format characters (zero-width space, joiners, word joiner, BOM, soft hyphen) inside
# a token: pasted from a chat or a web page, or put there on purpose, they split "ghp_\u200b…"
# so no shape matches it. Between two token characters they are dropped before the scan (an
# emoji sequence's joiner, between two emoji, stays).
_INVISIBLE_CHARS = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")  # (str.find: fast)
_INVISIBLE_IN_TOKEN = re.compile(r"(?<=[\w.+/=~-])[\u200b-\u200d\u2060\ufeff\u00ad]+(?=[\w.+/=~-])")


def redact(text: str) -> str:
    """Return ``text`` with private blocks, secrets and credentials replaced by markers."""
    if not text:
        return text
    if not text.isascii() and any(ch in text for ch in _INVISIBLE_CHARS):
        text = _INVISIBLE_IN_TOKEN.sub("", text)
    data = text.encode("utf-8", "surrogatepass")
    low = data.lower()
    spans = _spans(data, low)
    escaped = decoded_lines(data, low)
    if escaped:  # what the lines say once their escapes are decoded, replaced in the original
        spans += [(*escaped.original(s, e), r) for s, e, r in _spans(escaped.text) if e > s]
    if not spans:
        return text
    return _apply(data, spans).decode("utf-8", "surrogatepass")


def _spans(data: bytes, low: bytes | None = None) -> list[_Span]:
    """Where ``data`` holds private blocks, secrets and credentials, and what replaces each
    (``low``: ``data.lower()``, when the caller has it)."""
    low = data.lower() if low is None else low
    spans: list[_Span] = []
    keywords = _scan(data, low, spans)
    _card_spans(data, spans)
    _prefixed_token_spans(data, spans)
    # Private blocks before the rules that read words (command lines, SQL, contexts): those
    # see a block as one opaque word, as a second run sees "[private]".
    blocks = _private_spans(low, _tag_words(data))
    if blocks:
        spans = _without_private(spans, blocks)
    _cli_spans(data, spans)
    _sql_spans(data, low, spans)
    _context_spans(data, low, spans)
    if blocks:
        spans = _without_private(spans, blocks)
    _credential_spans(data, low, keywords, spans)
    if spans:
        _shapes_after_spans(data, spans)
    return spans


def _shapes_after_spans(data: bytes, spans: list[_Span]) -> None:
    """A token glued to the end of another secret (…KEY-----whsec_…) fails its left-edge check
    on the secret's last character; a second run, which sees "]" there, would find it. So look
    again right after each span that ends before a token character, as that run would."""
    n = len(data)
    ends = sorted({e for _, e, r in spans if e < n and data[e] in _TOKEN_CHARS and r != _PRIVATE})
    for e in ends:
        window = b"]" + data[e : e + 1024]
        found: list[_Span] = []
        wlow = window.lower()
        for rx, on_low, anchor in _SCANS:
            if anchor not in (wlow if on_low else window):
                continue
            for m in rx.finditer(wlow if on_low else window):
                group = m.lastgroup or ""
                if group[:1] == "a" and m.start() <= 64:
                    span = _shape_span(window, m, int(group[1:]), found)
                    if span:
                        found.append(span)
        for s, x, r in found:
            if s >= 1:
                spans.append((s - 1 + e, x - 1 + e, r))


def _obj_value(value: object) -> object:
    """A value under a secret-named key: scalars become [redacted], containers are walked."""
    if value is None or isinstance(value, bool) or value == "":
        return value
    if isinstance(value, str):
        clean = redact(value)
        if clean.startswith("[redacted") and clean.endswith("]") and " " not in clean:
            return clean  # already a single marker (keeps the kind)
        raw = clean.encode("utf-8", "surrogatepass")
        if len(raw) < 3 or _is_marker(raw) or _placeholder(raw):
            return clean
        scheme = _AUTH_SCHEME.match(raw)  # "Bearer …" keeps its scheme, as in text
        if scheme and not scheme.group("weak"):
            return raw[: scheme.end()].decode() + "[redacted]"
        return "[redacted]"
    if isinstance(value, (int, float)):
        return "[redacted]"
    if isinstance(value, list):
        return [_obj_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_obj_value(v) for v in value)
    return redact_obj(value)


def redact_obj(value: object) -> object:
    """Redact every string in JSON-like data, and every value whose key names a secret."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        out: dict[object, object] = {}
        for k, v in value.items():
            key = redact(k) if isinstance(k, str) else k
            if isinstance(k, str) and _secret_name(k) and not isinstance(v, dict):
                out[key] = _obj_value(v)
            else:
                out[key] = redact_obj(v)
        return out
    if isinstance(value, list):
        return [redact_obj(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_obj(v) for v in value)
    return value
