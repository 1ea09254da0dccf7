"""Redaction: hide private blocks, known secret shapes and generic credentials before storing.

Pure, deterministic, idempotent and stdlib-only: it runs inside the 150 ms hook on every tool
output (DESIGN.md §7). Order: ``<private>…</private>`` → ``[private]``; secret shapes →
``[redacted:KIND]``; generic credentials (URL passwords, auth headers, secret-named keys and
assignments) → ``[redacted]``, keeping the name and the structure visible.

Speed comes from how ``re`` searches: a pattern whose first item is a literal is scanned for in
C, while an alternation of different first characters enters the matcher at every candidate and
is ten times slower. So each regex below starts with one literal (often a rare letter from the
middle of a token, with the letters before it checked by a look-behind), and the work is done
on UTF-8 bytes, where ``bytes.lower()`` and ``bytes.translate()`` are cheap and keep offsets.

Markers are never matched again: every rule skips values that start with ``[redacted`` or
``[private]``, and no shape accepts ``[`` or ``]``.
"""

from __future__ import annotations

import binascii
import re

__all__ = ["KINDS", "redact", "redact_obj"]

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
)

_Span = tuple[int, int, bytes]

_REDACTED = b"[redacted]"
_PRIVATE = b"[private]"
_MARKER = {kind: b"[redacted:" + kind.encode() + b"]" for kind in KINDS}

_ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_TOKEN_CHARS = frozenset(_ALNUM + b"_-")
_NAME_CHARS = frozenset(_ALNUM + b"_.-")
_CARD_EDGE = frozenset(_ALNUM + b"_/")


# ---------------------------------------------------------------------------------------------
# 1. <private>…</private>, case-insensitive (matched on the lowered copy); nesting counts, an
#    unclosed tag hides the rest, a stray closing tag hides nothing.

_PRIVATE_TAG = re.compile(rb"<(/?)private(?:\s[^<>]*)?>")


def _hide_private(data: bytes, low: bytes) -> tuple[bytes, bytes]:
    """``data`` and its lowered copy with private blocks replaced (one pass, no second lower)."""
    keep: list[tuple[int, int]] = []  # (start, end) of visible text; a hidden block follows each
    pos = depth = 0
    for m in _PRIVATE_TAG.finditer(low):
        if m.group(1):
            if depth == 0:
                continue
            depth -= 1
            if depth == 0:
                pos = m.end()
        else:
            if depth == 0:
                keep.append((pos, m.start()))
            depth += 1
    tail = [] if depth else [data[pos:]]
    parts = [piece for s, e in keep for piece in (data[s:e], _PRIVATE)]
    low_parts = [piece for s, e in keep for piece in (low[s:e], _PRIVATE)]
    return b"".join(parts + tail), b"".join(low_parts + ([] if depth else [low[pos:]]))


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
     rb"\.com/(?<=hooks\.slack\.com/)(?:services|workflows|triggers)/(?P<v>[a-z0-9_/-]{20,})", b""),
    (b"k", "discord", 0, rb"s/(?<=webhooks/)(?P<v>\d{15,22}/[\w-]{40,100})", b""),  # + host check
    # Uppercase K is rare in text: these are found from it (on the lowered copy, like "k").
    (b"k", "private_key", 0, rb"ey(?<=private key)(?: block)?-----", b"KEY"),  # block: _shape_span
    (b"k", "ssh_private_key", 11, rb"ey-file-(?<=putty-user-key-file-)\d", b"PuTTY-User-Key-File-"),
    (b"k", "azure_storage", 0,
     rb"ey=(?:(?<=accountkey=)|(?<=sharedaccesskey=))(?P<v>[a-z0-9+/]{20,}={0,2})", b""),
    (b"k", "age", 11, rb"ey-1(?<=age-secret-key-1)[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{58}",
     b"AGE-SECRET-KEY-1"),
    (b"k", "twilio", 1, rb"(?<![\w-]sk)[0-9a-f]{32}(?![0-9a-z])", b"SK"),
    (b"k", "heroku", 2, rb"u-(?<=hrku-)(?<![\w-]hrku-)[\w-]{20,}", b"HRKU-"),
    (b"k", "postman", 3, rb"-(?<=pmak-)[0-9a-f]{24}-[0-9a-f]{34}", b"PMAK-"),
    (b"g", "github", 0, rb"h(?<![\w-]gh)[pousr]_[a-z0-9]{36,255}", b"gh"),
    (b"g", "github", 0, rb"ithub_pat_(?<![\w-]github_pat_)[a-z0-9_]{22,255}", b"github_pat_"),
    (b"g", "gitlab", 0,
     rb"l(?<![\w-]gl)(?:pat|ptt|dt|rt|cbt|soat|oas|imt|ffct|agent)-[\w-]{20,}(?:\.[\w-]+)*", b"gl"),
    (b"g", "grafana", 0, rb"l(?<![\w-]gl)(?:sa_[a-z0-9]{32}_[0-9a-f]{8}|c_[a-z0-9+/]{32,}={0,2})", b"gl"),
    (b"g", "groq", 0, rb"sk_(?<![\w-]gsk_)[a-z0-9]{48,56}(?![a-z0-9])", b"gsk_"),
    (b"g", "google_oauth_secret", 0, rb"ocspx-[\w-]{24,40}", b"GOCSPX-"),
    (b"g", "sendgrid", 1, rb"\.(?<![\w-]sg\.)[\w-]{22}\.[\w-]{43}", b"SG."),
    (b"x", "slack", 0,
     rb"(?<![\w-]x)(?:ox[abeoprs](?:\.xox[bp])?-[a-z0-9-]{10,}|app-\d-[a-z0-9-]{10,})", b"x"),
    (b"x", "xai", 0, rb"ai-(?<![\w-]xai-)[a-z0-9]{70,}", b"xai-"),
    (b"h", "huggingface", 0, rb"f_(?<![\w-]hf_)[a-z0-9]{30,40}(?![a-z0-9])", b"hf_"),
    (b"h", "hashicorp_vault", 0, rb"v(?<![\w-]hv)[sb]\.[\w-]{90,}", b"hv"),
    (b"p", "databricks", 2, rb"i(?<=dapi)(?<![\w-]dapi)[0-9a-f]{32}(?:-\d)?(?![\w])", b"dapi"),
    (b"p", "npm", 1, rb"m_(?<=npm_)(?<![\w-]npm_)[a-z0-9]{36}(?![a-z0-9])", b"npm_"),
    (b"p", "digitalocean", 2, rb"_v1_(?<=dop_v1_)(?<![\w-]dop_v1_)[0-9a-f]{64}", b"dop_v1_"),
    (b"p", "shopify", 2,
     rb"[acps][acst]_(?<=shp(?:at|ca|pa|ss)_)(?<![\w-]shp(?:at|ca|pa|ss)_)[0-9a-f]{32}", b"shp"),
    # Uppercase anchors, scanned on the original bytes.
    (b"A", "aws_access_key_id", 0,
     rb"(?<![A-Za-z0-9+/_-]A)(?:KIA|SIA|BIA|CCA)[A-Z2-7]{16}(?![A-Za-z0-9])", b""),
    (b"A", "google_api_key", 0, rb"Iza(?<![\w-]AIza)[\w-]{35}(?![\w-])", b""),
    (b"A", "atlassian", 0, rb"TATT3(?<![\w-]ATATT3)[\w=-]{150,}", b""),
    (b"A", "pypi", 5, rb"gE(?<=pypi-AgE)(?<![\w-]pypi-AgE)[\w-]{50,}", b""),
    (b"A", "telegram", 0, rb"A(?<=[0-9]{6}:AA)[\w-]{33}(?![\w-])", b""),  # <bot id>:AA…
    (b"J", "jwt", 2, rb"(?<=eyJ)(?<![\w-]eyJ)[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*", b""),
)

_HAS_DIGIT = re.compile(rb"[0-9]").search
_HAS_UPPER = re.compile(rb"[A-Z]").search
_HAS_LOWER = re.compile(rb"[a-z]").search
_PEM_BEGIN = re.compile(rb"-----BEGIN ([A-Z0-9 ]*)\Z")
_PEM_END = re.compile(rb"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_PUTTY_END = re.compile(rb"Private-MAC:[ \t]*[0-9a-fA-F]*")
_DISCORD_HOST = re.compile(rb"discord(?:app)?\.com/api/(?:v\d+/)?webhoo\Z")


def _mixed(token: bytes) -> bool:
    """Random-looking: a digit, an upper and a lower case letter (kebab-case names are not)."""
    return bool(_HAS_DIGIT(token) and _HAS_UPPER(token) and _HAS_LOWER(token))


def _shape_span(data: bytes, m: re.Match[bytes], row: int) -> _Span | None:
    _, kind, back, _, case = _SHAPE_TABLE[row]
    start, end = m.start() - back, m.end()
    if case and not data.startswith(case, start):
        return None  # the lowered copy matched, the original's case does not
    if kind == "openai":
        if not _mixed(data[start + 3 : end]):
            return None
    elif kind == "huggingface":
        if not (_HAS_UPPER(data, start + 3, end) and _HAS_LOWER(data, start + 3, end)):
            return None
    elif kind == "age":
        if not data[start:end].isupper():
            return None
    elif kind == "private_key":
        begin = _PEM_BEGIN.search(data, max(0, start - 56), start - 8)  # before "PRIVATE "
        if begin is None:
            return None  # an END line, or the words in prose
        if b"OPENSSH" in begin.group(1) or b"SSH2" in begin.group(1):
            kind = "ssh_private_key"
        close = _PEM_END.search(data, end)
        return begin.start(), (close.end() if close else len(data)), _MARKER[kind]  # unterminated: the rest
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
_CARD_HINT = re.compile(rb"0000(?:000000000| 0000 0000 0| 000000 0000)")
_DIGIT_RUN = re.compile(rb"[0-9]+(?:[ -][0-9]+)*")
_CARD_GROUP = re.compile(rb"[0-9]+")


def _luhn(digits: bytes) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = c - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card_ok(d: bytes) -> bool:
    n = len(d)
    if not 13 <= n <= 19:
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


def _card_spans(data: bytes, spans: list[_Span]) -> None:
    folded = data.translate(_CARD_FOLD)
    n, done = len(data), 0
    for hint in _CARD_HINT.finditer(folded):
        s = hint.start()
        if s < done:
            continue
        while s > 0 and (48 <= data[s - 1] <= 57 or (data[s - 1] in b" -" and s > 1 and 48 <= data[s - 2] <= 57)):
            s -= 1
        run = _DIGIT_RUN.match(data, s)
        if run is None:
            continue
        e = done = run.end()
        if s > 0 and data[s - 1] in _CARD_EDGE or s > 1 and data[s - 1] == 0x2E and 48 <= data[s - 2] <= 57:
            continue  # inside an identifier, a hash, a URL path or a decimal
        if e < n and (data[e] in _CARD_EDGE or data[e] == 0x2E and e + 1 < n and 48 <= data[e + 1] <= 57):
            continue
        groups = [g.span() for g in _CARD_GROUP.finditer(data, s, e)]
        i = 0
        while i < len(groups):  # the longest run of whole groups that is a card
            best, digits = -1, b""
            for j in range(i, len(groups)):
                digits += data[groups[j][0] : groups[j][1]]
                if len(digits) > 19:
                    break
                if _card_ok(digits):
                    best = j
            if best >= 0:
                spans.append((groups[i][0], groups[best][1], _MARKER["credit_card"]))
                i = best + 1
            else:
                i += 1


# ---------------------------------------------------------------------------------------------
# 3. Generic credentials → [redacted]. Keyword regexes run on the lowered copy, each anchored on
#    a rare letter of its keyword; the rest of the name, an optional closing quote and a
#    separator must follow. A cheap look-ahead drops the commonest code values (None, calls,
#    attribute chains) before any Python runs.

_NAME_REST = rb"[a-z0-9_-]{0,40}+(?:[\"'`]|\\[\"'])?\]?"
_SEP = rb"(?P<sep>[ \t]*+(?:=>|:=|=(?![=~])|:(?![:/]))[ \t]*+)"
# "--token VALUE", "--password VALUE" and .netrc's "password VALUE": a space as the separator
_FLAG = rb"(?:(?<=-token)|(?<=-key)|(?<=-secret)|(?<=[\s-]password))(?P<flag>[ \t]+)"
_NOT_CODE = (rb"(?!(?:none|null|nil|true|false|undefined)(?![\w.])|(?:await|new|yield|typeof)\s"
             rb"|self\.|this\.|os\.|[a-z_][a-z0-9_]*+\(|[a-z_]+(?:\.[a-z_]+)+(?![^\s(),;\[\]}]))")
# Atomic: once "=" or ":" has matched, a code value must not fall back to the space separator.
_KEYWORD_TAIL = rb"(?>" + _NAME_REST + _SEP + rb"|" + _FLAG + rb")(?=[^\n])" + _NOT_CODE
# anchor → keywords (after the anchor), on the lowered copy
_KEYWORDS: dict[bytes, bytes] = {
    # token, *key with a qualifier (api_key, accessKey), cookie
    b"k": rb"(?:en(?<=token)(?!s[^a-z_])|ey(?:(?<=[a-z]key)|(?<=[a-z][_-]key))|ie(?<=cookie))",
    b"cr": rb"(?:et(?<=secret)(?!keyref|s?name)|edential)",  # secret, credential
    b"p": rb"(?:ass(?:word|wd|phrase)?|wd)",  # password, passwd, passphrase, pass, pwd
    b"h": rb"(?<=auth)(?!or(?!iz))",  # auth, authorization (not author)
}

# Passwords in URLs: scheme://user:PASSWORD@host (the last @ before the path ends the password).
_URL_CREDS = re.compile(rb"://[^\s:/?#@\[\]\"'<>]*+:(?P<v>[^\s/?#\"'<>]+)@")
# curl -u user:PASSWORD / --user user:PASSWORD
_CURL_USER = re.compile(rb"-u(?P<long>ser)?(?:[ \t]+|=)[\"']?[^\s:\"'$\[\]]+:(?P<v>[^\s\"']+)")

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_WORDS = frozenset(
    "password passwd passwords passphrase pwd pass secret token credential credentials auth "
    "authorization cookie apikey accesskey secretkey privatekey authkey authtoken accesstoken "
    "refreshtoken idtoken apitoken".split()
)
_SECRET_ENDINGS = ("password", "passwd", "secret", "token", "apikey", "accesskey", "secretkey")
_KEY_QUALIFIERS = frozenset(
    "api access secret private auth signing encryption master client account subscription "
    "app service admin deploy session shared storage root license webhook consumer".split()
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
    "namespace namespaces".split()
)
_NOT_SECRET_FIRST = frozenset("max min num n total count has is use no".split())
_CONTEXT_KINDS = {"twilio": "twilio", "heroku": "heroku", "mailgun": "mailgun",
                  "discord": "discord", "databricks": "databricks"}

_PLACEHOLDER_WORDS = frozenset(
    "none null nil undefined true false yes no on off empty required optional str string int "
    "bytes bool boolean any object unknown secret secrets password passwd token key value "
    "changeme change_me change-me replaceme replace_me replace-me todo tbd fixme placeholder "
    "example redacted hidden masked omitted unset default inherit prompt n/a na void await new "
    "yield lambda function async this self not typeof require sensitive".split()
)
# Values that are references, templates, placeholders, URLs, paths or versions (lowered).
_PLACEHOLDER = re.compile(
    rb"<[^<>]*>|\{\{.*\}\}|\{[\w.\s]*\}|\$|%[\w(]|#\{|[*&!]|your[\w.\s-]|"
    rb"(?:replace|change|insert|enter|add|put|set)[_-]?(?:me|this|your|with|here)|"
    rb".*(?:x{4,}|\*{3,}|\.\.\.|\xe2\x80\xa6)|.*[_\s-]here\Z|"
    rb"[a-z][a-z0-9+.-]*://|/|~/|\.\.?/|[a-z]:\\|\[|v?\d+(?:\.\d+)+\Z"
)
_AUTH_SCHEME = re.compile(
    rb"(?i:bearer|basic|digest|bot|negotiate|ntlm|(?P<weak>token|apikey|api-key|key|sso-key|otp|jwt))"
    rb"[ \t]+(?=[^\s])"
)
_ANNOTATION = re.compile(
    rb"[A-Za-z_][\w.]*(?:\[[^\n=]*\])?(?:[ \t]*\|[ \t]*[A-Za-z_][\w.]*(?:\[[^\n=]*\])?)*"
    rb"[ \t]*=(?!=)[ \t]*"
)
_CODE = re.compile(rb"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?P<tail>[(\[]|\Z)")
_PROSE = re.compile(rb"[a-z_]+[ \t]+[a-z(]")  # "token: fix stream", "deploy.token: batch …"
_UNQUOTED = re.compile(rb"[^\s,;&)}\]'\"`\\<>]*")
_COOKIE_PAIR = re.compile(rb"(?P<name>[^=;,\s]+)=(?P<v>[^;,\r\n\"']*)")
_COOKIE_ATTRS = frozenset(
    b"path domain expires max-age samesite secure httponly priority partitioned version".split()
)
_AWS_SECRET = re.compile(rb"[A-Za-z0-9/+=]{40}\Z")


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


def _scan_plan() -> tuple[tuple[re.Pattern[bytes], bool], ...]:
    anchors = dict.fromkeys([row[0] for row in _SHAPE_TABLE] + list(_KEYWORDS))
    plan = []
    for anchor in anchors:
        alts = [_shape_alternative(i) for i, row in enumerate(_SHAPE_TABLE) if row[0] == anchor]
        if anchor in _KEYWORDS:
            alts.append(_KEYWORDS[anchor] + _KEYWORD_TAIL)
        rx = re.compile(re.escape(anchor) + b"(?:" + b"|".join(alts) + b")")
        plan.append((rx, not anchor.isupper()))  # lowercase anchors run on the lowered copy
    return tuple(plan)


_SCANS = _scan_plan()


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(name)]


def _secret_name(name: str) -> bool:
    """Does this variable/key/header name hold a credential (DB_PASSWORD, apiKey, X-Api-Key)?"""
    words = _words(name)
    if not words or words[-1] in _NOT_SECRET_LAST or words[0] in _NOT_SECRET_FIRST:
        return False
    prev = ""
    for w in words:
        if w in _SECRET_WORDS or w.endswith(_SECRET_ENDINGS):
            return True
        if w == "key" and prev in _KEY_QUALIFIERS:
            return True
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


def _is_marker(v: bytes) -> bool:
    return v.startswith(b"[redacted") or v.startswith(_PRIVATE)


def _placeholder(v: bytes) -> bool:
    low = v.lower()
    return low.decode("latin-1") in _PLACEHOLDER_WORDS or _PLACEHOLDER.match(low) is not None


def _secret_value(v: bytes, *, quoted: bool, code: bool, name: str) -> bool:
    """Is this value a literal credential (not code, a reference, a placeholder or empty)?"""
    if len(v) < 3 or _is_marker(v) or _placeholder(v):
        return False
    if not quoted:
        m = _CODE.match(v)
        if m:
            if m.group("tail") or (b"." in v and not any(map(_mixed, v.split(b".")))):
                return False  # a call, a subscript or an attribute (not a dotted token)
            text = v.decode("latin-1")
            if text.lower() == name.lower().lstrip("-") or _secret_name(text):
                return False  # another variable: password=password, token=ACCESS_TOKEN
            if code and not _HAS_DIGIT(v):
                return False  # `password = hunter` in code is a variable, not a literal
    return True


def _name_start(data: bytes, i: int) -> int:
    lo = max(0, i - 64)
    while i > lo and data[i - 1] in _NAME_CHARS:
        i -= 1
    return i


def _line_end(data: bytes, p: int) -> int:
    e = data.find(b"\n", p)
    return len(data) if e < 0 else e


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


def _value_at(data: bytes, p: int) -> tuple[int, int, bool]:
    """(start, end, quoted) of the value that starts at p."""
    n = len(data)
    if p + 1 < n and data[p] in b"bBrRuU" and data[p + 1] in b"\"'":
        p += 1  # a Python string prefix
    if p + 1 < n and data[p] == 0x5C and data[p + 1] in b"\"'":
        quote = data[p : p + 2]  # an escaped quote: JSON inside a JSON string
        return p + 2, _close_quote(data, p + 2, quote, _line_end(data, p)), True
    if p < n and data[p] in b"\"'":
        return p + 1, _close_quote(data, p + 1, data[p : p + 1], _line_end(data, p)), True
    if p < n and data[p] == 0x60:  # `command substitution`
        return p, p, True
    m = _UNQUOTED.match(data, p)
    return p, (m.end() if m else p), False


def _at_line_start(data: bytes, i: int) -> bool:
    j = i
    while j > 0 and data[j - 1] in b" \t":
        j -= 1
    if j > 1 and data[j - 2 : j] == b"- ":  # a YAML list item
        j -= 2
        while j > 0 and data[j - 1] in b" \t":
            j -= 1
    return j == 0 or data[j - 1] == 0x0A


def _cookie_spans(data: bytes, start: int, end: int, first_only: bool, spans: list[_Span]) -> None:
    for m in _COOKIE_PAIR.finditer(data, start, end):
        raw = m.group("v")
        v = raw.strip()
        if m.group("name").lower() not in _COOKIE_ATTRS and v and not _is_marker(v):
            vs = m.start("v") + len(raw) - len(raw.lstrip())
            spans.append((vs, vs + len(v), _REDACTED))
        if first_only:
            return


def _keyword_span(data: bytes, m: re.Match[bytes], spans: list[_Span]) -> None:
    name_start = _name_start(data, m.start())
    name_end = m.end() - len(m.group("sep") or m.group("flag"))
    name = data[name_start:name_end].decode("latin-1").rstrip("\"'`]\\")
    before = data[max(0, name_start - 10) : name_start]
    sep = m.group("sep")
    kind = None
    if sep is None:  # "--password VALUE", or .netrc "password VALUE"
        netrc = data[max(0, name_start - 200) : name_start]
        if not name.startswith("--"):
            if b"machine" not in netrc:
                return
            if b"heroku" in netrc[netrc.rfind(b"machine") :]:
                kind = "heroku"
    elif before.endswith((b"${", b"://", b"/", b"[redacted:")):
        return  # ${TOKEN:-default}, URL user info (see _URL_CREDS), image:tag, a marker's kind
    elif before.endswith(b":") and sep == b":":
        return  # a colon chain: arn:aws:secretsmanager:…:secret:name
    if not _secret_name(name):
        return
    p = m.end()
    words = _words(name)
    if words[-1] == "cookie":
        if p < len(data) and data[p] in b"\"'":
            vs, ve, _ = _value_at(data, p)
        else:
            vs, ve = p, _line_end(data, p)
        _cookie_spans(data, vs, ve, name.lower().startswith("set-"), spans)
        return
    sep = sep or b" "
    code = sep[:1] in b" \t" and b"=" in sep or b":=" in sep or b"=>" in sep
    colon = b":" in sep and not code
    if colon and (ann := _ANNOTATION.match(data, p)):
        p, code, colon = ann.end(), True, False  # `password: str = "…"`: the value follows "="
    vs, ve, quoted = _value_at(data, p)
    scheme = _AUTH_SCHEME.match(data, vs, ve if quoted else _line_end(data, vs))
    if scheme and scheme.group("weak") and "authorization" not in words:
        scheme = None  # "token: token payload" is prose; "Authorization: token …" is a scheme
    if scheme:  # "Authorization: Bearer …": keep the scheme, redact the credential
        if scheme.group().split()[0].lower() == b"bot":
            kind = "discord"
        if quoted:
            vs = scheme.end()
        else:
            vs, ve, quoted = _value_at(data, scheme.end())
    value = data[vs:ve]
    if colon and not quoted and name_end > name_start and data[name_end - 1] in b"\"'":
        code = True  # {"token": variable}: JSON would quote a literal, so this is code
    if not _secret_value(value, quoted=quoted, code=code, name=name):
        return
    if colon and not quoted:
        if _PROSE.match(data, vs):
            return  # a sentence after a label ("token: fix stream"), not a value
        if not scheme and _at_line_start(data, name_start):  # a YAML/header line: the value runs to its end
            rest = data[ve : _line_end(data, ve)]
            cut = rest.find(b" #")
            ve += len((rest if cut < 0 else rest[:cut]).rstrip())
            value = data[vs:ve]
    if kind is None:
        kind = _context_kind(name, value)
        if kind == "discord" and not _discord_bot_token(value):
            kind = None
    spans.append((vs, ve, _MARKER[kind] if kind else _REDACTED))


def _scan(data: bytes, low: bytes, spans: list[_Span]) -> None:
    for rx, on_low in _SCANS:
        for m in rx.finditer(low if on_low else data):
            group = m.lastgroup or ""
            if group[:1] == "a":
                found = _shape_span(data, m, int(group[1:]))
                if found:
                    spans.append(found)
            else:
                _keyword_span(data, m, spans)
    for m in _URL_CREDS.finditer(data):
        _plain_value(data, m, spans)
    for m in _CURL_USER.finditer(data):
        before = data[m.start() - 1 : m.start()] if m.start() else b" "
        if (before == b"-") if m.group("long") else (before in b" \t\n"):
            user = data[m.start() : m.start("v")].rsplit(b":", 1)[0]
            if not (m.group("v").isdigit() and user[-1:].isdigit()):  # docker -u 1000:1000
                _plain_value(data, m, spans)


def _plain_value(data: bytes, m: re.Match[bytes], spans: list[_Span]) -> None:
    vs, ve = m.span("v")
    value = data[vs:ve]
    if len(value) >= 3 and not _is_marker(value) and not _placeholder(value):
        spans.append((vs, ve, _REDACTED))


# ---------------------------------------------------------------------------------------------


def _apply(data: bytes, spans: list[_Span]) -> bytes:
    """Replace the spans. Overlapping spans merge into one, which keeps a marker that names a
    kind over a plain ``[redacted]`` (a known shape inside a secret-named value)."""
    spans.sort(key=lambda s: (s[0], -s[1]))
    parts: list[bytes] = []
    last = 0
    cur_s, cur_e, cur_r = spans[0]
    for s, e, r in spans[1:]:
        if s < cur_e:
            cur_e = max(cur_e, e)
            if cur_r == _REDACTED:
                cur_r = r
            continue
        parts += (data[last:cur_s], cur_r)
        last = cur_e
        cur_s, cur_e, cur_r = s, e, r
    parts += (data[last:cur_s], cur_r, data[cur_e:])
    return b"".join(parts)


def redact(text: str) -> str:
    """Return ``text`` with private blocks, secrets and credentials replaced by markers."""
    if not text:
        return text
    data = text.encode("utf-8", "surrogatepass")
    low = data.lower()
    hidden = False
    if b"<private" in low:
        new, new_low = _hide_private(data, low)
        if new != data:
            data, low, hidden = new, new_low, True
    spans: list[_Span] = []
    _scan(data, low, spans)
    _card_spans(data, spans)
    if spans:
        data = _apply(data, spans)
    elif not hidden:
        return text
    return data.decode("utf-8", "surrogatepass")


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
        return "[redacted]"
    if isinstance(value, (int, float)):
        return "[redacted]"
    if isinstance(value, (list, tuple)):
        return type(value)(_obj_value(v) for v in value)
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
