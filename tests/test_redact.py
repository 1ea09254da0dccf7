"""Redaction: the corpus (positives of every kind, negatives), idempotence, private tags,
redact_obj, and that the module stays stdlib-only (it runs in the hook)."""

from __future__ import annotations

import base64
import json
import random
import string
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from aletheia.redact import KINDS, redact, redact_obj
from tests.redact_corpus import Case, Fake, build, grouped

REPO = Path(__file__).resolve().parent.parent
CORPUS = build()
# The cases that name the marker they expect and the context they keep (the first corpus):
# checked one by one here. The whole corpus is scored through the CLI in test_redact_corpus.
POSITIVES = [c for c in CORPUS if c.secrets and c.marker]
NEGATIVES = [c for c in CORPUS if not c.secrets]


def ids(cases: list[Case]) -> list[str]:
    return [c.id for c in cases]


# -- the corpus itself -------------------------------------------------------------------------


def test_corpus_is_big_enough_and_well_formed() -> None:
    positives = [c for c in CORPUS if c.positive]
    negatives = [c for c in CORPUS if not c.positive]
    assert len(positives) >= 400
    assert len({c.kind for c in positives}) >= 60
    assert len(negatives) >= 150
    families = {c.family for c in positives}
    assert {"cli_password", "cloud_config", "connection_string", "code", "cookie", "key_material",
            "private_tag"} <= families
    markers = {c.marker_kind for c in POSITIVES if c.marker_kind}
    assert len(markers) >= 25
    assert markers <= set(KINDS), markers - set(KINDS)
    assert len({c.id for c in CORPUS}) == len(CORPUS), "case ids must be unique"
    assert build() == CORPUS, "the corpus is deterministic (seeded)"


def test_kinds_are_unique_names() -> None:
    assert isinstance(KINDS, tuple)
    assert len(KINDS) == len(set(KINDS)) >= 25
    assert all(k.isidentifier() and k == k.lower() for k in KINDS)


# -- positives and negatives -------------------------------------------------------------------


@pytest.mark.parametrize("case", POSITIVES, ids=ids(POSITIVES))
def test_positive(case: Case) -> None:
    out = redact(case.text)
    for secret in case.secrets:
        assert secret not in out
    assert case.marker in out, out
    for context in case.keep:
        assert context in out, f"lost {context!r} in {out!r}"


@pytest.mark.parametrize("case", NEGATIVES, ids=ids(NEGATIVES))
def test_negative_is_untouched(case: Case) -> None:
    assert redact(case.text) == case.text


@pytest.mark.parametrize("case", CORPUS, ids=ids(CORPUS))
def test_idempotent(case: Case) -> None:
    once = redact(case.text)
    assert redact(once) == once


def test_idempotent_on_mixed_and_cut_fragments() -> None:
    """Pieces of the corpus glued and cut at random points (half tokens, split markers)."""
    rng = random.Random(7)
    texts = [c.text for c in CORPUS]
    for _ in range(400):
        parts = [rng.choice(texts) for _ in range(rng.randint(1, 4))]
        joined = rng.choice(["", " ", "\n", "=", ":", '"']).join(parts)
        a, b = sorted(rng.randint(0, len(joined)) for _ in range(2))
        for sample in (joined, joined[a:b], joined[:a] + joined[b:]):
            once = redact(sample)
            assert redact(once) == once, sample


FUZZ_PIECES = [
    "password", "token", "api_key", "secret", "auth", "cookie", "Authorization", "Bearer", "key",
    # what the issue-13 rules look for: tool flags, pipes, setters, name/value pairs, tags, base64
    " -p", " -P", " -a", "mysql", "sshpass", "login", "--password-stdin", "echo ", " | ", "<<<",
    "set -gx ", "AUTH ", "- name: ", "value: ", '"name": ', '"value": ', "kind: Secret\ndata:\n  ",
    "IDENTIFIED BY ", "htpasswd -b ", "\tTRUE\t", "\tFALSE\t", "&lt;private&gt;", "\\u003c",
    "＜private＞", "</ private >", "<private/>", "base64", "_B64=", "eyJ", "LS0tLS1CRUdJTi",
    "MIIEpAIBAAK", "-----END RSA PRIVATE KEY-----", "?sig=", "&key=", "Login: ", "creds: ",
    "%3A%2F%2F", "%40", "httpOnly", "Cookie: ", "(", ")", "'", "Q~", "ya29.", "whsec_", "PWD={",
    "=", ":", ": ", " = ", '"', "'", "`", "\\", '\\"', "\n", " ", "\t", "<private>", "</private>",
    "<PRIVATE", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "sk-", "ghp_",
    "AKIA", "eyJ", ".", "4111", "-", "0123456789", "://", "@", "u:p", "é", "🚀", "\ud800",
    "[redacted]", "[redacted:github]", "[private]", "${X}", "$", "{", "}", "(", ")", "[", "]", ",",
    ";", "&", "?", "#", "machine", "login", "--password", "-u", "Set-Cookie:", "AccountKey=", ">",
    "<", "k", "K", "x", "A",
]


def test_idempotent_on_random_soup() -> None:
    """Random strings of the pieces the rules care about, and runs of token characters."""
    rng = random.Random(2024)
    for _ in range(3000):
        text = "".join(
            rng.choice(FUZZ_PIECES) if rng.random() < 0.7 else rng.choice("abcXYZ019_-+/") * rng.randint(1, 30)
            for _ in range(rng.randint(1, 40))
        )
        once = redact(text)
        assert redact(once) == once, text


def test_markers_are_never_matched_again() -> None:
    markers = ["[redacted]", "[private]"] + [f"[redacted:{k}]" for k in KINDS]
    for marker in markers:
        for template in ("{}", "password={}", '"api_key": "{}"', "Authorization: Bearer {}",
                         "postgres://u:{}@db/app", "{}: {}", "token {} {}", "{}=x"):
            text = template.format(marker, marker)
            assert redact(text) == text


def test_kind_marker_wins_over_generic() -> None:
    tok = Fake(random.Random(3)).github()
    assert redact(f"GITHUB_TOKEN={tok}") == "GITHUB_TOKEN=[redacted:github]"
    assert redact(f'{{"token": "{tok}"}}') == '{"token": "[redacted:github]"}'


def test_exact_outputs() -> None:
    f = Fake(random.Random(11))
    pw, tok, card = f.password(), f.opaque(), f.card("4", 16)
    assert redact(f"DB_PASSWORD={pw}\n") == "DB_PASSWORD=[redacted]\n"
    assert redact(f"postgres://app:{pw}@db:5432/x") == "postgres://app:[redacted]@db:5432/x"
    assert redact(f"Authorization: Bearer {tok}") == "Authorization: Bearer [redacted]"
    assert redact(f"card {card[:4]} {card[4:8]} {card[8:12]} {card[12:]}.") == "card [redacted:credit_card]."
    assert redact(f'{{"password": "{pw}", "user": "a"}}') == '{"password": "[redacted]", "user": "a"}'


def test_luhn_decides_for_card_numbers() -> None:
    f = Fake(random.Random(5))
    for first, length in (("4", 16), ("51", 16), ("37", 15), ("6011", 16)):
        good, bad = f.card(first, length), f.bad_card(first, length)
        assert redact(f"n={good};") == "n=[redacted:credit_card];"
        assert redact(f"n={bad};") == f"n={bad};"


def test_short_and_long_card_numbers_only_when_grouped() -> None:
    """13- and 19-digit numbers are mostly ids and int64 seeds unless written as a card."""
    f = Fake(random.Random(6))
    visa13, visa19 = f.card("4", 13), f.card("4", 19)
    assert redact(f"seed={visa19}") == f"seed={visa19}"
    assert redact(f"id {visa13} ok") == f"id {visa13} ok"
    assert redact(f"card {grouped(visa19, (4, 4, 4, 4, 3), ' ')} ok") == "card [redacted:credit_card] ok"
    assert redact(f"card {grouped(visa13, (4, 4, 4, 1), '-')} ok") == "card [redacted:credit_card] ok"


def test_unicode_around_secrets_survives() -> None:
    pw = Fake(random.Random(2)).password()
    text = f"🚀 déploiement ✓ token={pw} — 日本語 \U0001f600"
    assert redact(text) == "🚀 déploiement ✓ token=[redacted] — 日本語 \U0001f600"
    lone = "\ud800 password=" + pw  # a lone surrogate (json.loads can produce one)
    assert redact(lone) == "\ud800 password=[redacted]"


def test_empty_and_plain_text() -> None:
    assert redact("") == ""
    plain = "just a line of output\n" * 100
    assert redact(plain) == plain


def test_pathological_inputs_finish() -> None:
    """Shapes that could make a regex backtrack; the suite's timeout guards them."""
    f = Fake(random.Random(9))
    inputs = [
        "a" * 200_000,
        "password" * 20_000,
        "password=" * 20_000,
        "token: " * 20_000,
        "-----BEGIN RSA PRIVATE KEY-----\n" * 2_000,
        "://" * 50_000 + "@",
        "://user:" + "x" * 100_000 + "@",
        "0" * 100_000,
        "4111 " * 40_000,
        "sk-" + "a-" * 50_000,
        "eyJ" + "a" * 50_000 + "." * 1_000,
        '"' + "\\" * 50_000 + '"',
        "<private>" * 10_000 + "</private>" * 5_000,
        " " * 100_000 + "password: " + f.password(),
        # the issue-13 rules: long command lines, pipes, tags, key bodies, name/value pairs
        "mysql -p" + " -p" * 30_000,
        "echo x | " * 20_000 + "docker login --password-stdin",
        "&lt;private&gt;" * 10_000,
        "</private>" * 20_000,
        "MIIEpAIBAAK" + "A" * 200_000,
        "-----END RSA PRIVATE KEY-----\n" * 5_000,
        ("- name: DB_PASSWORD\n" * 20_000) + "  value: x1y2z3w4",
        "kind: Secret\ndata:\n" + "  k: dmFsdWU=\n" * 30_000,
        "a:b@" * 50_000,
        "postgres://u:" + "@" * 100_000 + "host",
        "eyJ" + "hbGciOiJIUzI1NiJ9" + (".eyJ" + "a" * 20 + "\n") * 5_000,
        "base64 " + "QUFB" * 50_000,
        "\tTRUE\t/\tFALSE\t0\tsid\t" * 20_000,
        "Login: " + "a/" * 50_000,
        "set -gx " + "API_KEY " * 20_000,
    ]
    for text in inputs:
        once = redact(text)
        assert redact(once) == once


# -- private tags -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a <private>x</private> b", "a [private] b"),
        ("a <PRIVATE>x</Private> b", "a [private] b"),
        ("a <private>x\ny\n</private>\nb", "a [private]\nb"),
        ("a <private>x", "a [private]"),
        ("a <private>x <private>y</private> z</private> b", "a [private] b"),
        ("a <private>x</private> b <private>y</private> c", "a [private] b [private] c"),
        ("a </private> b", "a </private> b"),
        ('a <private note="x">y</private> b', "a [private] b"),
        ("a <privateer> b", "a <privateer> b"),
        ("a <private>sk-ant-x</private> token=abc123def", "a [private] token=[redacted]"),
    ],
    ids=["simple", "case", "multiline", "unclosed", "nested", "two", "stray-close", "attribute",
         "not-a-tag", "then-secrets"],
)
def test_private_tags(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert redact(expected) == expected


# -- redact_obj -------------------------------------------------------------------------------------


def test_redact_obj_secret_keys_and_strings() -> None:
    f = Fake(random.Random(4))
    tok = f.github()
    data: dict[object, object] = {
        "password": "hunter2",
        "api_key": 12345,
        "apiKey": 3.5,
        "token": tok,
        "secret": None,
        "client_secret": "",
        "has_password": True,
        "DB_PASSWORD": "${DB_PASSWORD}",
        "user": "jane",
        "max_tokens": 4096,
        "nested": [{"Authorization": "Bearer abcdef123456"}, f"export X={tok}", ("a", "b")],
        "credentials": {"user": "svc", "password": "p4ss-w0rd"},
        7: "non-string key",
    }
    before = json.dumps(data, default=str, sort_keys=False)
    out = redact_obj(data)
    assert json.dumps(data, default=str, sort_keys=False) == before, "input must not change"
    assert out == {
        "password": "[redacted]",
        "api_key": "[redacted]",
        "apiKey": "[redacted]",
        "token": "[redacted:github]",
        "secret": None,
        "client_secret": "",
        "has_password": True,
        "DB_PASSWORD": "${DB_PASSWORD}",
        "user": "jane",
        "max_tokens": 4096,
        "nested": [{"Authorization": "Bearer [redacted]"}, "export X=[redacted:github]", ("a", "b")],
        "credentials": {"user": "svc", "password": "[redacted]"},
        7: "non-string key",
    }


def test_redact_obj_lists_under_secret_keys_and_scalars() -> None:
    assert redact_obj({"tokens": ["a", "b"]}) == {"tokens": ["a", "b"]}  # a count-ish name
    assert redact_obj({"api_keys": ["k1-abcdef", 99]}) == {"api_keys": ["[redacted]", "[redacted]"]}
    assert redact_obj("password=hunter22") == "password=[redacted]"
    assert redact_obj(42) == 42
    assert redact_obj(None) is None
    assert redact_obj([{"pwd": "x1y2z3"}]) == [{"pwd": "[redacted]"}]


def test_redact_obj_is_idempotent_on_the_corpus() -> None:
    doc = {"items": [{"text": c.text, "password": c.id} for c in CORPUS]}
    once = redact_obj(doc)
    assert redact_obj(once) == once


# -- the hook path ----------------------------------------------------------------------------------


def _modules(code: str) -> set[str]:
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True, cwd=REPO)
    return set(out.stdout.split())


def test_imports_only_the_standard_library() -> None:
    baseline = _modules("import sys; print(*sorted(sys.modules))")
    loaded = _modules("import aletheia.redact, sys; print(*sorted(sys.modules))")
    extra = {m for m in loaded - baseline if m.split(".")[0] != "aletheia"}
    third_party = {m for m in extra if m.split(".")[0] not in sys.stdlib_module_names}
    assert not third_party, third_party


def test_a_long_random_word_after_the_word_token_is_redacted() -> None:
    rng = random.Random(40)
    hex40 = "".join(rng.choice("0123456789abcdef") for _ in range(40))
    out = redact(f"Generated token {hex40} for user scanner-01")
    assert hex40[:8] not in out and out.startswith("Generated token [redacted")
    assert hex40[:8] not in redact(f"Token {hex40.upper()}")
    for ordinary in ("the token expired yesterday", "use a csrf token from the form",
                     "token 12345", "the token budget is 4096 per day",
                     "a token bucket rate limiter with 40 tokens"):
        assert redact(ordinary) == ordinary


def test_a_password_word_then_its_value_in_prose_is_redacted() -> None:
    """"log in with password X": only a space between the word and the value. The value must
    look typed to a password rule (8+ characters, letters and two digits, or mixed case or a
    symbol with one), so a name or a version after the word stays."""
    rng = random.Random(41)
    for _ in range(20):
        value = (rng.choice(string.ascii_uppercase) + "".join(rng.choice(string.ascii_lowercase)
                 for _ in range(rng.randint(4, 9))) + str(rng.randint(10, 9999)))
        for text in (f"log in with password {value} on staging",
                     f"use passwd {value} for the admin account",
                     f"the passphrase {value}.",
                     f"password {value}"):
            out = redact(text)
            assert value not in out and "[redacted]" in out, (text, out)
    for ordinary in ("password reset2fa done", "upgrade password 3.11.7", "pass utf8mb4 as charset",
                     "password authentication failed for user bob",
                     "the password field v2 is required", "password hashing with argon2id",
                     "see the password_reset_v2 handler", "reset password token expired"):
        assert redact(ordinary) == ordinary


def test_a_prefixed_hex_token_printed_bare() -> None:
    rng = random.Random(11)
    token = "rw_" + "".join(rng.choice("0123456789abcdef") for _ in range(40))
    live = "acme_live_" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
    out = redact(f"{token}\nproducer: {live} ok")
    assert token not in out and live not in out and out.count("[redacted:prefixed_token]") == 2
    # Not a token: a commit id, a path, an identifier with a short hex tail, a capitalised name.
    sha = "".join(rng.choice("0123456789abcdef") for _ in range(40))
    for ordinary in (f"commit {sha}", f"cache/x_{sha[:32]}", "my_var_name_1e2b6fa6",
                     f"Foo_{sha[:32]}", f"test_{'a' * 32}"):
        assert redact(ordinary) == ordinary


def test_a_password_named_with_a_qualifier_in_prose_is_redacted() -> None:
    """"DB password for linking: X", "the token for CI is X": up to four words name what the
    secret is for; the value after them is judged as prose, so a sentence there stays."""
    rng = random.Random(42)
    for _ in range(10):
        value = (rng.choice(string.ascii_uppercase) + "".join(rng.choice(string.ascii_letters + string.digits)
                 for _ in range(rng.randint(8, 14))) + rng.choice("!#%") + str(rng.randint(1, 99)))
        for text in (f"DB password for linking: {value}", f"the admin password for grafana is {value}",
                     f"Password for the staging db: {value} (rotate it)", f"token for CI: {value}",
                     f"passphrase for the deploy key was `{value}`"):
            out = redact(text)
            assert value[:8] not in out and "[redacted]" in out, (text, out)
    for ordinary in ("The password for the admin user: reset it from the invite email.",
                     "the password for prod is stored in 1Password", "token for CI is rotated monthly",
                     "key for sorting: created_at_2", "password for user alice: see the vault"):
        assert redact(ordinary) == ordinary


def test_a_login_cli_token_after_its_flags_is_redacted() -> None:
    rng = random.Random(43)
    key = "".join(rng.choice("0123456789abcdef") for _ in range(40))
    token = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(32))
    for text, secret in ((f"wandb login {key}", key), (f"wandb login --relogin {key}", key),
                         (f"wandb login --host https://wandb.internal {key}", key),
                         (f"cargo login --registry internal {token}", token),
                         (f"cargo login {token}", token), (f"vault login -no-print {token}", token)):
        out = redact(text)
        assert secret not in out and out.endswith("[redacted]"), (text, out)
    for ordinary in ("wandb login", "run wandb login then train", "wandb login prompts for your key",
                     "cargo login reads the token from stdin", "vault login -method=userpass username=bob"):
        assert redact(ordinary) == ordinary


def test_more_provider_shapes_printed_bare() -> None:
    """Doppler, Contentful, Airtable, Notion and Bitbucket tokens, in prose with no name before
    them (fakes of the documented shapes); each gets its provider's marker."""
    rng = random.Random(23)
    alnum = string.ascii_letters + string.digits

    def pick(n: int, alphabet: str = alnum) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    cases = {
        "doppler": [f"dp.st.prd.{pick(40)}", f"dp.pt.{pick(43)}", f"dp.sa.{pick(44)}"],
        "contentful": [f"CFPAT-{pick(43, alnum + '-_')}"],
        "airtable": [f"pat{pick(14)}.{pick(64, '0123456789abcdef')}"],
        "notion": [f"secret_{pick(43)}"],
        "bitbucket": [f"ATBB{pick(32)}"],
    }
    for kind, tokens in cases.items():
        for token in tokens:
            out = redact(f"use {token} for prod, it was rotated")
            assert token[-20:] not in out and f"[redacted:{kind}]" in out, (kind, out)
    # Not tokens: an identifier that starts the same way, a short Doppler-like name, a pattern.
    for ordinary in ("secret_manager_client.get()", "dp.st.dev is the config", "pattern.match(x)",
                     "ATBB_SETTINGS = {}", f"secret_{'a' * 43}x"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_long_hex_number_under_a_secret_name_is_redacted() -> None:
    """PRIVATE_KEY=0x…64 hex (a wallet key): a short hex number is a constant or a colour and
    stays; 32 hex digits or more under a secret's name are key material."""
    rng = random.Random(5)
    key = "0x" + "".join(rng.choice("0123456789abcdef") for _ in range(64))
    for text in (f"PRIVATE_KEY={key}", f'signing_key: "{key}"', f"export DEPLOYER_SECRET={key}"):
        out = redact(text)
        assert key[4:] not in out and "[redacted" in out, out
    for ordinary in ("API_KEY_MASK = 0xffff", "secret_flags = 0x1f", "token: 0xdeadbeef"):
        assert redact(ordinary) == ordinary, ordinary


def test_invisible_characters_inside_a_token_do_not_hide_it() -> None:
    """A zero-width space, joiner, word joiner, BOM or soft hyphen inside a token or a name
    (pasted from a chat, or put there on purpose) does not split it from the rules; a joiner
    between two emoji stays."""
    rng = random.Random(31)
    token = "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    for mark in ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"):
        for text in (f"token {token[:4]}{mark}{token[4:]} ok", f"{token[:20]}{mark}{token[20:]}",
                     f"DB_PASS{mark}WORD=Zq8{token[10:22]}"):
            out = redact(text)
            assert token[12:22] not in out and "[redacted" in out, (mark, out)
    family = "the team 👨\u200d👩\u200d👧 shipped it"
    assert redact(family) == family


def _escaped(text: str, form: str) -> str:
    """Every character but letters and digits escaped the way ``form`` writes it."""
    def one(ch: str) -> str:
        if ch.isalnum():
            return ch
        return {"url": f"%{ord(ch):02X}", "url2": f"%25{ord(ch):02X}", "html": f"&#{ord(ch)};",
                "hex": f"&#x{ord(ch):x};", "json": f"\\u{ord(ch):04x}"}[form]
    return "".join(one(ch) for ch in text)


@pytest.mark.parametrize("form", ["url", "url2", "html", "hex", "json"])
def test_a_secret_behind_escapes_is_redacted_and_the_escapes_around_it_stay(form: str) -> None:
    """A query string or form body (%3D, %5F, %253D), HTML a tool printed (&#61;, &#x5f;) or a
    JSON string printed as text (\\u003d): the secret is found in the decoded line and
    replaced in the original, whole escapes included; what surrounds it is kept as it came."""
    rng = random.Random(41)
    alnum = string.ascii_letters + string.digits
    token = "ghp_" + "".join(rng.choice(alnum) for _ in range(36))
    slack = "xoxb-" + "".join(rng.choice(string.digits) for _ in range(11)) + "-" + "".join(
        rng.choice(string.digits) for _ in range(12)) + "-" + "".join(rng.choice(alnum) for _ in range(24))
    password = "".join(rng.choice(string.ascii_letters) for _ in range(6)) + "7!Qz"
    for plain, secret in ((f"token={token}", token[4:]), (f"GET /cb?x=1&DB_PASSWORD={password} 200", password[:6]),
                          (f'{{"webhook": "{slack}"}}', slack[5:])):
        text = _escaped(plain, form)
        out = redact(text)
        assert secret not in out and "[redacted" in out, (form, out)
        assert out.startswith(text[:3]), out  # the escaped text before the secret stays
    html_token = "&#x67;hp_" + token[4:]
    assert redact(f"token: {html_token} (copied)") == "token: [redacted:github] (copied)"
    assert redact(f"cb%3Ftoken%3D{token}%26x%3D1") == "cb%3Ftoken%3D[redacted:github]%26x%3D1"


def test_ordinary_escaped_text_is_unchanged() -> None:
    """Escapes with nothing secret behind them (an HTML page, a URL, JSON with accents) come
    back byte for byte; a private key whose base64 is escaped on every line is one block."""
    for ordinary in ("Tom &amp; Jerry &lt;b&gt;42&lt;/b&gt; &quot;ok&quot; 45%2F&nbsp;done",
                     "https://example.test/search?q=release%20notes%3A%202026&amp;page=2",
                     '{"name": "Caf\\u00e9", "note": "a\\u0026b \\u003cbr\\u003e"}',
                     "progress [ 45%] ok; 100%25 of &#1234; &unknown; &#0; %0A"):
        assert redact(ordinary) == ordinary, ordinary
    rng = random.Random(43)
    body = "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(640))
    lines = [body[i : i + 64].replace("+", "&#43;").replace("/", "&#x2F;") for i in range(0, 640, 64)]
    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"
    out = redact(f"<pre>{key}</pre>\nafter")
    assert out == "<pre>[redacted:private_key]</pre>\nafter", out


def test_full_width_separators_and_names_do_not_hide_a_secret() -> None:
    """Typed with a CJK input method on: "password：…", "DB_PASSWORD＝…" (full-width colon and
    equals); CJK prose with full-width punctuation stays as it is."""
    rng = random.Random(47)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(7)) + "9#" + "Qa"
    for text in (f"password：{value}", f"DB_PASSWORD＝{value}", f"ＰＡＳＳＷＯＲＤ: {value}"):
        out = redact(text)
        assert value not in out and "[redacted]" in out, out
    for ordinary in ("注意：这个文件（config）很重要！", "设置：token 过期时间为 ３０ 分钟", "ＡＢＣ：ｄｅｆ"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_password_named_in_another_language_is_redacted() -> None:
    """Passwort, contraseña, senha, mot de passe, пароль, 密码, パスワード, 비밀번호 …: the value
    after the name is judged as a password's (code, placeholders and prose about it stay)."""
    rng = random.Random(67)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(7)) + "5!" + "Kq"
    for text in (f"Passwort: {value}", f"DB_PASSWORT={value}",
                 f"contraseña = {value}", f"Contraseña: {value}", f"senha: {value}", f"SENHA_DB={value}",
                 f"mot de passe : {value}", f"wachtwoord={value}", f"lösenord: {value}", f"hasło: {value}",
                 f"jelszó: {value}", f"şifre: {value}", f"пароль: {value}", f"Пароль: {value}",
                 f"数据库密码：{value}", f"密碼: {value}", f"パスワード：{value}", f"비밀번호: {value}",
                 f"mật khẩu: {value}", f'{{"senha": "{value}"}}'):
        out = redact(text)
        assert value not in out and "[redacted]" in out, (text, out)
    for ordinary in ("Das Passwort ist zu kurz.", "senha: ******", "Введите пароль: ", "密码错误，请重试",
                     "contraseña incorrecta", 'contraseña = request.form["contraseña"]', "mot de passe oublié ?",
                     "パスワードを忘れた場合", "senha_hash = bcrypt.hash(senha)", "A senha do banco é forte.",
                     "пароль: ${DB_PASSWORD}", "senha=<sua senha>", "España mañana configuración sesión"):
        assert redact(ordinary) == ordinary, ordinary


def test_password_hashes_are_redacted() -> None:
    """An .htpasswd or /etc/shadow line, a Traefik basic-auth label ($ doubled for Compose), a
    Django user row: the hash is the password to whoever runs a cracker on it."""
    rng = random.Random(71)
    crypt = string.ascii_letters + string.digits + "./"

    def r(n: int, alphabet: str = crypt) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    hashes = (f"$2y$05${r(53)}", f"$2b$12${r(53)}", f"$apr1${r(8)}${r(22)}", f"$1${r(8)}${r(22)}",
              f"$5$rounds=5000${r(16)}${r(43)}", f"$6${r(16)}${r(86)}", f"$y$j9T${r(22)}${r(43)}",
              f"$argon2id$v=19$m=65536,t=3,p=4${r(22, string.ascii_letters + '+/')}${r(43, string.ascii_letters + '+/')}",
              f"pbkdf2_sha256$600000${r(22, string.ascii_letters)}${r(43, string.ascii_letters + '+/')}=")
    for h in hashes:
        for text in (f"admin:{h}", f"root:{h}:19000:0:99999:7:::", f"password_hash = '{h}'"):
            out = redact(text)
            assert h[-20:] not in out and "[redacted:password_hash]" in out, (text, out)
    label = f"traefik.http.middlewares.auth.basicauth.users=admin:$$apr1$${r(8)}$${r(22)}"
    assert redact(label).endswith("admin:[redacted:password_hash]"), redact(label)
    for ordinary in ("echo $HOME $1 $PATH", "cost = $5.00 and $6.50", "awk '{print $1$2}'", "price: $1,299.00",
                     "$2y$10$ is the prefix; the rest is 53 chars", r"^\$2[aby]\$\d\d\$", "$y$ is yescrypt's"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_token_as_a_url_user_and_other_vendor_keys() -> None:
    """A Sentry DSN's key, `https://<token>@github.com/…`; Terraform Cloud and New Relic keys; a
    Wi-Fi psk. A URL's ordinary user names stay."""
    rng = random.Random(73)
    hexa = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    out = redact(f"SENTRY_DSN=https://{hexa}@o4505.ingest.us.sentry.io/4506")
    assert out == "SENTRY_DSN=https://[redacted]@o4505.ingest.us.sentry.io/4506", out
    alnum = string.ascii_letters + string.digits
    token = "".join(rng.choice(alnum) for _ in range(40))
    assert redact(f"git remote add origin https://{token}@github.com/org/app.git") == \
        "git remote add origin https://[redacted]@github.com/org/app.git"
    tfc = "".join(rng.choice(alnum) for _ in range(14)) + ".atlasv1." + "".join(rng.choice(alnum) for _ in range(67))
    assert redact(f"TFE_TOKEN {tfc} ok") == "TFE_TOKEN [redacted:terraform_cloud] ok", redact(f"TFE_TOKEN {tfc} ok")
    nr = "NRAK-" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(27))
    assert redact(f"key {nr}.") == "key [redacted:newrelic].", redact(f"key {nr}.")
    psk = "".join(rng.choice(alnum) for _ in range(12))
    assert redact(f'network={{\n  ssid="home"\n  psk="{psk}"\n}}') == 'network={\n  ssid="home"\n  psk="[redacted]"\n}'
    for ordinary in ("git clone https://git@github.com/org/repo.git", "ssh://git@gitlab.com:2222/x.git",
                     "https://deploy-bot-for-production@registry.example.com/v2/",
                     "postgres://app_readonly_replica_user@db.internal:5432/app", "use_psk = true",
                     "psk_identity = client1", "the PSK is shared", "NRAK-docs explain the key"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_yaml_block_value_a_masked_value_and_a_secret_file() -> None:
    """`password: |` then the value indented below; GitHub Actions' ::add-mask::; what is echoed
    into a file named for a secret (master.key, /run/secrets/db_password, .vault_pass) and
    the bare word a cat of one prints."""
    rng = random.Random(79)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(8)) + "7" + "Qz"
    assert redact(f"db:\n  password: |\n    {value}\n  user: app") == "db:\n  password: |\n    [redacted]\n  user: app"
    assert redact(f'echo "::add-mask::{value}"') == 'echo "::add-mask::[redacted]"'
    hexa = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    assert redact(f"echo {hexa} > config/master.key") == "echo [redacted] > config/master.key"
    assert redact(f"echo -n '{value}' > secrets/db_password.txt") == "echo -n '[redacted]' > secrets/db_password.txt"
    event = f'input: {{"command": "cat /run/secrets/db_password"}}\n\noutput:\n{value}\n'
    assert redact(event) == event.replace(value, "[redacted]"), redact(event)
    for ordinary in ("description: |\n  some text here\n", "password: |\n  {{ vault_db_password }}\n",
                     'echo "::add-mask::$TOKEN"', "echo $TOKEN > token.txt", "echo hello > notes.txt",
                     "cat token_refresh.py\nimport os", "cat secrets.yaml\npassword: x",
                     "cat /run/secrets/api_token\n/run/secrets/api_token: No such file"):
        assert redact(ordinary) == ordinary, ordinary


def test_keys_in_calls_connect_strings_and_prose_that_names_the_password_last() -> None:
    """Fernet(b"…"), mysqli_connect(host, user, PASSWORD, db), cx_Oracle's user/PASSWORD@dsn,
    base64 of a connection URL, "Use X as the password for …", a double-quoted password ending
    in "$", a Word.word1234 password, and a YAML value with "=" in it."""
    rng = random.Random(83)
    alnum = string.ascii_letters + string.digits
    key = base64.urlsafe_b64encode(bytes(rng.randrange(256) for _ in range(32))).decode()
    assert redact(f"fernet = Fernet(b'{key}')") == "fernet = Fernet(b'[redacted]')"
    pw = "".join(rng.choice(alnum) for _ in range(12)) + "#"
    assert redact(f"$link = mysqli_connect('db.internal', 'app', '{pw}', 'shop');") == \
        "$link = mysqli_connect('db.internal', 'app', '[redacted]', 'shop');"
    assert redact(f"conn = cx_Oracle.connect('scott/{pw}@db.internal:1521/ORCLPDB1')") == \
        "conn = cx_Oracle.connect('scott/[redacted]@db.internal:1521/ORCLPDB1')"
    url = base64.b64encode(f"postgres://app:{pw}@db:5432/shop".encode()).decode()
    assert redact(f'"connection": "{url}"') == '"connection": "[redacted:base64]"'
    assert redact(f"Use {pw} as the password for the test account.") == \
        "Use [redacted] as the password for the test account."
    assert redact('gh secret set HOOK --body "Silverthunder9425$" --env prod') == \
        'gh secret set HOOK --body "[redacted]" --env prod'
    assert redact("docker run -e POSTGRES_PASSWORD=Tiger.window2188 -d postgres:16") == \
        "docker run -e POSTGRES_PASSWORD=[redacted] -d postgres:16"
    assert redact("service:\n  secret: ZIKE57EF5xa=TKm9\n  replicas: 2") == "service:\n  secret: [redacted]\n  replicas: 2"
    assert redact('putenv("API_KEY=TnDHL_sjGD|tbaYLEq7=F+nf:sP0;]Yn1j)bB3E-");') == 'putenv("API_KEY=[redacted]");'
    assert redact("$link = mysqli_connect('db', 'app', 'Y,A#;_*<i.d9JSC|31P(juEt{Q6pf:', 'shop');") == \
        "$link = mysqli_connect('db', 'app', '[redacted]', 'shop');"  # (ends in ":", yet no label)
    for ordinary in ("fernet = Fernet(key)", "mysqli_connect($host, $user, $pass, $db)", "use it as the password field",
                     'token_range = "%d,%d-%d,%d:" % (a, b, c, d)', 'print("Password:")', 'password = "Enter it:"',
                     'token = "Host name:"',
                     'echo "cost: $PRICE"', "password: Optional[str] = None", "x = settings.database_url2",
                     "conn = oracledb.connect(user=u, password=p, dsn=d)", "Use the value as the password."):
        assert redact(ordinary) == ordinary, ordinary


def test_terminal_colours_a_markdown_table_and_an_insert_do_not_hide_a_secret() -> None:
    """A coloured name in a tool's output (ESC[1mDB_PASSWORD ESC[0m=…), an agent's table of env
    vars (| DB_PASSWORD | … |), a seed script's INSERT under a password column."""
    rng = random.Random(89)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(9)) + "4!"
    assert redact(f"\x1b[1mDB_PASSWORD\x1b[0m={value}") == "\x1b[1mDB_PASSWORD\x1b[0m=[redacted]"
    assert redact(f"| Name | Value |\n|---|---|\n| `DB_PASSWORD` | `{value}` |\n| DEBUG | 1 |") == \
        "| Name | Value |\n|---|---|\n| `DB_PASSWORD` | `[redacted]` |\n| DEBUG | 1 |"
    assert redact(f"INSERT INTO users (name, password) VALUES ('admin', '{value}'), ('bob', '{value[::-1]}');") == \
        "INSERT INTO users (name, password) VALUES ('admin', '[redacted]'), ('bob', '[redacted]');"
    for ordinary in ("\x1b[32mok\x1b[0m all good", "| DB_PASSWORD | The database password |",
                     "| DB_PASSWORD | required | string |", "| API_TOKEN | `${{ secrets.API_TOKEN }}` |",
                     "| token_ttl | 3600 |", "INSERT INTO users (name, password) VALUES (:name, :password)",
                     "INSERT INTO users (name, email) VALUES ('a', 'b@c.d')"):
        assert redact(ordinary) == ordinary, ordinary


def test_render_and_neon_secrets_printed_bare() -> None:
    rng = random.Random(53)
    alnum = string.ascii_letters + string.digits
    render = "rnd_" + "".join(rng.choice(alnum) for _ in range(32))
    neon = "npg_" + "".join(rng.choice(alnum) for _ in range(12))
    assert redact(f"render key {render} (new)") == "render key [redacted:render] (new)"
    assert redact(f"password is now {neon}") .endswith("[redacted:neon]")
    assert redact(f"connected as neondb_owner with {neon} ok") == "connected as neondb_owner with [redacted:neon] ok"
    for ordinary in ("npg_configuration", "import npg_pool_manager", "rnd_" + "a" * 32, "x = rnd_seed(42)"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_pgpass_line_written_by_echo_and_base64_printed_on_the_next_line() -> None:
    rng = random.Random(59)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(8)) + "4!" + "Zq"
    out = redact(f"echo 'db.internal:5432:*:postgres:{value}' >> ~/.pgpass && chmod 600 ~/.pgpass")
    assert out == "echo 'db.internal:5432:*:postgres:[redacted]' >> ~/.pgpass && chmod 600 ~/.pgpass", out
    token = "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    encoded = base64.b64encode(token.encode()).decode()
    out = redact(f"$ echo -n $GITHUB_TOKEN | base64\n{encoded}\n$ ls")
    assert encoded[8:] not in out and out.endswith("[redacted:base64]\n$ ls"), out
    listing = "$ ls | base64\nYmluCmV0Ywpob21lCg==\n"
    assert redact(listing) == listing


def test_a_wallet_recovery_phrase_under_its_name_is_redacted() -> None:
    rng = random.Random(61)
    pool = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 8))) for _ in range(60)]
    for n in (12, 24):
        words = " ".join(rng.choice(pool) for _ in range(n))
        for text in (f'MNEMONIC="{words}"', f"seed phrase: {words}", f"recoveryPhrase = '{words}'",
                     f'"mnemonic": "{words}",'):
            out = redact(text)
            assert words.split()[5] not in out.split() and "[redacted]" in out, out
    for ordinary in ("opcode mnemonic: MOV", "the mnemonic is easy to remember", "seed_phrase_length = 12",
                     "mnemonic: the one you learn first and then the other two words after it ok"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_label_before_a_secret_name_does_not_read_it_as_a_type() -> None:
    """`main.tf:12: db_password = "…"` (a tool's prefix, a log label): the name after the label
    is lower- or upper-case, so it is the name, not a type annotation (those stay: a capitalised
    type after a label is `error: AuthorizationErrorCode = "…"`)."""
    rng = random.Random(17)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(6)) + "42#" + "Qz"
    for text in (f'terraform: password = "{value}"', f'main.tf:12: db_password = "{value}"',
                 f'x: PASSWORD = "{value}"'):
        out = redact(text)
        assert value not in out and "[redacted]" in out, out
    for ordinary in ('error: AuthorizationErrorCode = "InvalidToken"', 'field: AuthToken = "x"'):
        assert redact(ordinary) == ordinary


def test_pw_is_a_password_name_only_with_a_password_like_value() -> None:
    rng = random.Random(19)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(5)) + "912#" + "TCjl"
    for text in (f"pw: {value}", f"root pw is {value}", f"DB_PW={value}", f"admin pw {value} ok"):
        out = redact(text)
        assert value not in out and "[redacted]" in out, out
    for ordinary in ('const pw = require("playwright")', 'pw.test("x")', "npx pw test --headed",
                     "pw_hash = bcrypt(x)", "set pw_len = 12", "pw show --all", "the kW and pW units"):
        assert redact(ordinary) == ordinary, ordinary


def test_prose_in_other_languages_csv_columns_auth_tuples_and_login_pairs() -> None:
    """"la password è X", a CSV fixture's password column, requests' auth=("u", X), "log in
    with admin / X", rclone's "secret_access_key X", Pulumi and Mapbox secret tokens."""
    rng = random.Random(97)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(9)) + "7#"
    token = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(38)) + "a1B"
    for said in ("la password è", "la contraseña es", "das Passwort ist", "le mot de passe est"):
        assert redact(f"{said} {value}") == f"{said} [redacted]", said
    assert redact(f"email,password,role\nann@example.com,{value},admin\nbob@example.com,{value[::-1]},dev") == \
        "email,password,role\nann@example.com,[redacted],admin\nbob@example.com,[redacted],dev"
    assert redact(f"user\tpassword\nadmin\t{value}") == "user\tpassword\nadmin\t[redacted]"
    assert redact(f"requests.get(url, auth=('svc', '{value}'))") == "requests.get(url, auth=('svc', '[redacted]'))"
    assert redact(f"log in with admin / {value}") == "log in with admin / [redacted]"
    assert redact(f"creds are admin/{value}") == "creds are admin/[redacted]"
    assert redact(f"rclone config create s3 s3 secret_access_key {token}") == \
        "rclone config create s3 s3 secret_access_key [redacted]"
    assert redact(f'<input type="password" value="{value}">') == '<input type="password" value="[redacted]">'
    pul = "pul-" + "".join(rng.choice("0123456789abcdef") for _ in range(40))
    assert redact(f"PULUMI_ACCESS_TOKEN {pul}").endswith("[redacted:pulumi]")
    assert redact(f"x {pul} y") == "x [redacted:pulumi] y"
    mapbox = "sk.eyJ1Ijoi" + token + "." + token[:22]
    assert redact(f"mapbox {mapbox}") == "mapbox [redacted:mapbox]"
    for ordinary in ("la password è obbligatoria", "das Passwort ist falsch", "email,password,role\n,,",
                     "id,password_hash,created\n1,x,2024-01-01", "auth=('svc', os.environ['PW'])",
                     "auth = ('user', 'password')", "log in with your account", "creds are in vault/kv",
                     "secret_access_key is required", "pk.eyJ1IjoiZXhhbXBsZSIsImEiOiJjbGV4YW1wbGUifQ.abc",
                     "the token_type is bearer", "<input type=\"text\" value=\"hello world\">"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_name_written_with_cyrillic_or_greek_lookalikes_is_read_as_latin() -> None:
    """``раssword`` (a Cyrillic р and а), ``DB_РАSSWORD``, ``api_kеy``: a word mixing scripts is a
    name made not to be found. Words of one script stay as they are."""
    rng = random.Random(101)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(10)) + "4!"
    assert redact(f"раssword: {value}") == "раssword: [redacted]"
    assert redact(f"DB_РАSSWORD={value}") == "DB_РАSSWORD=[redacted]"
    token = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(20)) + "x7Q"
    assert redact(f"api_kеy: {token}") == "api_kеy: [redacted]"
    for ordinary in ("Привет, мир: всё работает", "пароль обязателен", "the café is open",
                     "αβγ password rules", "σ = 0.5, μs timings", "Ответ: ok"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_command_that_prints_a_secret_hides_the_line_it_prints() -> None:
    """aws configure get aws_secret_access_key, gcloud auth print-access-token, vault kv get
    -field=password, op read, pass show, echo $API_TOKEN …: the one word the output starts with,
    after a "$ " prompt or in a tool event (the command in its JSON input, the output after it)."""
    rng = random.Random(41)

    def fake(n: int = 24) -> str:
        return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n - 2)) + "7#"

    commands = [
        "aws configure get aws_secret_access_key", "aws ecr get-login-password --region eu-west-1",
        "gcloud auth print-access-token", "gcloud secrets versions access latest --secret=db",
        "az keyvault secret show --vault-name kv --name db --query value -o tsv",
        "vault kv get -field=password secret/db", "vault read -field token auth/x", "op read op://Private/db/password",
        "pass show work/db", "security find-generic-password -s db -w", "heroku config:get DATABASE_PASSWORD -a app",
        "heroku auth:token", "doppler secrets get DB_PASSWORD --plain", "bw get password github.com",
        "secret-tool lookup service db", "keyring get db app", "terraform output -raw db_password",
        'echo "$API_TOKEN"', "printenv GITHUB_TOKEN", "openssl rand -hex 32", "pwgen -s 24 1",
        "kubeadm token create", "kubectl get secret db -o jsonpath='{.data.password}' | base64 -d",
        "sudo aws configure get aws_session_token | tr -d '\\n'",
    ]
    for command in commands:
        value = fake()
        assert redact(f"$ {command}\n{value}\n$ ls") == f"$ {command}\n[redacted]\n$ ls", command
        event = f"input: {json.dumps({'command': command, 'description': 'read it'})}\n\noutput:\n{value}"
        assert value not in redact(event), command
        shell = f'input: {json.dumps({"command": ["bash", "-lc", command]})}\n\noutput:\n\n{value}\n'
        assert value not in redact(shell), command
    value = fake(1200)
    assert redact(f"$ aws ecr get-login-password\n{value}") == "$ aws ecr get-login-password\n[redacted]"
    value = fake()
    assert redact(f"$ heroku auth:token\n ›   Warning: token will expire soon\n{value}").endswith("\n[redacted]")
    for ordinary in ("$ aws configure get region\nus-east-1", "$ echo $HOME\n/home/bob", "$ echo $PATH\n/usr/bin:/bin",
                     "$ terraform output instance_ip\n\"10.0.0.1\"", "$ aws configure get aws_access_key_id\nAKIAEXAMPLE",
                     "$ pass ls\nPassword Store", "$ heroku config:get WEB_CONCURRENCY\n4", "$ printenv USER\nbob",
                     "$ vault kv get -field=username secret/db\nappuser", "$ echo done\nall_ok_now",
                     "$ echo API_TOKEN\nAPI_TOKEN", "$ aws configure get aws_secret_access_key\nNone",
                     "$ op read op://x/y/password\n[ERROR] 2024/05/01 could not read secret",
                     "$ echo $DB_PASSWORD | docker login -u ci --password-stdin\nLogin_Succeeded",
                     "$ pass show work/db\n", "$ terraform output -raw bucket_name\nmy-bucket-2024"):
        assert redact(ordinary) == ordinary, ordinary


def test_secret_arguments_set_x_traces_and_qualified_names_in_other_languages() -> None:
    """mc alias set NAME URL ACCESS SECRET, rabbitmqctl add_user NAME SECRET, cf auth USER
    SECRET, security add-generic-password -w SECRET; set -x's "+ echo X | docker login
    --password-stdin"; "Пароль от базы: X", "Passwort für die DB: X", "senha do banco: X"."""
    rng = random.Random(43)
    value = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(30)) + "9a"
    for command, shown in (
        (f"mc alias set minio http://127.0.0.1:9000 minioadmin {value}",
         "mc alias set minio http://127.0.0.1:9000 minioadmin [redacted]"),
        (f"mc config host add s3 https://s3.example.com AK1 {value} --api S3v4",
         "mc config host add s3 https://s3.example.com AK1 [redacted] --api S3v4"),
        (f"rabbitmqctl add_user app {value}", "rabbitmqctl add_user app [redacted]"),
        (f"rabbitmqctl change_password app '{value}'", "rabbitmqctl change_password app '[redacted]'"),
        (f"cf auth admin {value}", "cf auth admin [redacted]"),
        (f"rclone obscure {value}", "rclone obscure [redacted]"),
    ):
        assert redact(f"$ {command}") == f"$ {shown}", command
        assert redact(f"ok\n$ {command}") == f"ok\n$ {shown}", command
        event = redact(f"input: {json.dumps({'command': command, 'description': 'x'})}")
        assert value not in event and "[redacted]" in event, command
    assert redact(f"security add-generic-password -a bob -s db -w {value}") == \
        "security add-generic-password -a bob -s db -w [redacted]"
    assert redact(f"+ echo {value} | docker login -u ci --password-stdin") == \
        "+ echo [redacted] | docker login -u ci --password-stdin"
    for said in ("Пароль от базы:", "Пароль для базы данных:", "Passwort für die DB:", "senha do banco:",
                 "contraseña de la base:", "wachtwoord voor de database:", "hasło do bazy:"):
        assert redact(f"{said} {value}") == f"{said} [redacted]", said
    for ordinary in ("$ mc alias set local http://localhost:9000 $MINIO_USER $MINIO_PASSWORD", "$ mc alias list",
                     "$ mc alias set local", "security find-generic-password -w -s db", "+ echo hello | wc -l",
                     "$ rabbitmqctl list_users", "password per user: 3 attempts", "key for sorting: created_at",
                     "das Passwort für den Server: bitte im Vault nachsehen", "Пароль от базы: см. vault",
                     "$ cf auth", "+ make test"):
        assert redact(ordinary) == ordinary, ordinary


def test_sensitive_terraform_outputs_pgpass_written_by_a_tool_and_a_second_run_of_a_call() -> None:
    """terraform output -json's {"sensitive": true, …, "value": X} whatever its name; a tool
    event writing ~/.pgpass (its lines in the JSON string); and set_password(service, user,
    [redacted]) read again keeps its user (idempotent)."""
    rng = random.Random(47)
    value = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(20)) + "4z"
    shown = redact(f'$ terraform output -json\n{{\n  "db_conn": {{\n    "sensitive": true,\n    "type": "string",\n'
                   f'    "value": "{value}"\n  }}\n}}')
    assert value not in shown and '"value": "[redacted]"' in shown
    assert redact(f'{{"admin":{{"sensitive":true,"type":"string","value":"{value}"}}}}') == \
        '{"admin":{"sensitive":true,"type":"string","value":"[redacted]"}}'
    event = "input: " + json.dumps({"file_path": "/home/u/.pgpass",
                                    "content": f"db:5432:app:app:{value}\nlocalhost:*:*:postgres:{value[::-1]}\n"})
    assert redact(event) == "input: " + json.dumps(
        {"file_path": "/home/u/.pgpass", "content": "db:5432:app:app:[redacted]\nlocalhost:*:*:postgres:[redacted]\n"})
    once = redact(f"keyring.set_password('app', 'bob', '{value}')")
    assert once == "keyring.set_password('app', 'bob', '[redacted]')" == redact(once)
    for ordinary in ('{"region":{"sensitive":false,"type":"string","value":"eu-west-1"}}',
                     '{"x":{"sensitive":true,"type":"string","value":""}}',
                     "input: " + json.dumps({"file_path": "/home/u/.pgpass", "content": "# host:port:db:user:password\n"}),
                     "input: " + json.dumps({"file_path": "notes/.pgpass.md", "content": "see the wiki"})):
        assert redact(ordinary) == ordinary, ordinary


def test_generated_keys_bootstrap_tokens_and_first_start_passwords() -> None:
    """A key made and printed (rails secret, php artisan key:generate --show, python -c
    "…secrets.token_hex…", fly auth token), a cat of a file named for its one secret
    (k3s' node-token), Consul's SecretID, MySQL's first-start "temporary password is generated
    for root@localhost: X", grafana-cli's reset-admin-password X, nuget's -p X."""
    rng = random.Random(53)

    def fake(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    hexed = fake(64, "0123456789abcdef")
    for command in ("bin/rails secret", "rake secret", "php artisan key:generate --show",
                    'python3 -c "import secrets; print(secrets.token_hex(32))"',
                    "node -e \"console.log(require('crypto').randomBytes(32).toString('hex'))\"",
                    "fly auth token", "sudo cat /var/lib/rancher/k3s/server/node-token"):
        assert redact(f"$ {command}\n{hexed}") == f"$ {command}\n[redacted]", command
    for ordinary in ("$ cat ~/.aws/credentials\n[default]", "$ cat token_test.py\nimport pytest",
                     "$ python3 -c 'print(1)'\n0123456789abcdef0123", "$ rails server\nBooting_Puma_v6",
                     "$ php artisan key:generate\nApplication_key_set_successfully."):
        assert redact(ordinary) == ordinary, ordinary
    secret_id = "90360a0b-20df-5eca-b006-e5cb5678e445"
    assert redact(f"AccessorID:   71ccbcec-1275-615e-443f-a3a5c63b1673\nSecretID:     {secret_id}") == \
        "AccessorID:   71ccbcec-1275-615e-443f-a3a5c63b1673\nSecretID:     [redacted]"
    assert redact(f'{{"secret_id": "{secret_id}"}}') == '{"secret_id": "[redacted]"}'
    assert redact('SecretId: "prod/db/credentials"') == 'SecretId: "prod/db/credentials"'
    value = fake(9) + "!7q"
    line = "2024-05-01T10:00:00Z 6 [Note] [Server] A temporary password is generated for root@localhost: "
    assert redact(line + value) == line + "[redacted]"
    assert redact(f"the password has been reset for admin: {value}") == "the password has been reset for admin: [redacted]"
    for ordinary in ("password is required for login: yes", "the password was changed for bob: see email"):
        assert redact(ordinary) == ordinary, ordinary
    assert redact(f"$ grafana-cli admin reset-admin-password {value}") == \
        "$ grafana-cli admin reset-admin-password [redacted]"
    assert redact(f"dotnet nuget add source https://nuget.example.com/v3/index.json -n corp -u bob -p {value}") == \
        "dotnet nuget add source https://nuget.example.com/v3/index.json -n corp -u bob -p [redacted]"


def test_labelled_secrets_in_the_output_of_init_and_reset_commands() -> None:
    """vault operator init's unseal and recovery keys, Elasticsearch's reset and setup
    passwords, nomad acl bootstrap's Secret ID; and keys printed by wg genkey, mix
    phx.gen.secret and a read of /dev/urandom (not wg genkey | wg pubkey: a public key)."""
    rng = random.Random(59)

    def fake(n: int, alphabet: str = string.ascii_letters + string.digits + "+/") -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    one, two = fake(44), fake(44)
    init = (f"$ vault operator init\nUnseal Key 1: {one}\nUnseal Key 2: {two}\n\n"
            "Vault initialized with 5 key shares and a key threshold of 3.\n$ vault status\nUnseal Key 1: x")
    assert redact(init) == ("$ vault operator init\nUnseal Key 1: [redacted]\nUnseal Key 2: [redacted]\n\n"
                            "Vault initialized with 5 key shares and a key threshold of 3.\n$ vault status\nUnseal Key 1: x")
    event = "input: " + json.dumps({"command": "vault operator init -recovery-shares=1"}) + f"\n\noutput:\nRecovery Key 1: {one}"
    assert one not in redact(event)
    value = fake(12, string.ascii_letters + string.digits) + "%1"
    for command, output in (("bin/elasticsearch-reset-password -u elastic", f"Password for the [elastic] user reset.\nNew value: {value}"),
                            ("/usr/share/elasticsearch/bin/elasticsearch-setup-passwords auto", f"PASSWORD elastic = {value}"),
                            ("nomad acl bootstrap", "Secret ID    = 2417a30e-9247-56c6-fe1f-db1952c3fbd9")):
        shown = redact(f"$ {command}\n{output}")
        assert shown.endswith("[redacted]") and shown.startswith(f"$ {command}\n"), command
    for command in ("wg genkey", "mix phx.gen.secret", "head -c 32 /dev/urandom | base64",
                    "tr -dc 'A-Za-z0-9' </dev/urandom | head -c 24", "cat /dev/urandom | tr -dc a-z0-9 | head -c 20"):
        assert redact(f"$ {command}\n{one}") == f"$ {command}\n[redacted]", command
    for ordinary in (f"$ wg genkey | wg pubkey\n{one}", "$ vault status\nUnseal Progress    0/3",
                     "$ head -n 1 README.md\nProject_2024_notes", "$ elasticsearch-reset-password --help\nNew value: see docs"):
        assert redact(ordinary) == ordinary, ordinary


def test_unseal_and_recovery_keys_and_azure_key_lists() -> None:
    """A key named for unsealing or recovery (unseal_key_1, RECOVERY_KEY) and an Azure key
    list's value ({"keyName": "key1", …, "value": X}: az storage account keys list)."""
    rng = random.Random(61)
    key = "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(86)) + "=="
    assert redact(f"unseal_key_1: {key}") == "unseal_key_1: [redacted]"
    assert redact(f"RECOVERY_KEY={key}") == "RECOVERY_KEY=[redacted]"
    listed = (f'[\n  {{\n    "creationTime": "2024-01-01T00:00:00+00:00",\n    "keyName": "key1",\n'
              f'    "permissions": "FULL",\n    "value": "{key}"\n  }}\n]')
    assert redact(listed) == listed.replace(key, "[redacted]")
    for ordinary in ("the recovery key: see the vault", "recovery_key_path: /etc/keys/r.pem",
                     '{"keyName": "primary", "value": ""}', '{"name": "key1", "value": "eastus"}'):
        assert redact(ordinary) == ordinary, ordinary


def test_a_read_of_a_file_named_for_its_one_secret() -> None:
    """A tool event reading /run/secrets/db_password, .vault_pass.txt or k3s' node-token: the
    one word the file's content starts with (raw, or numbered as a transcript copies it)."""
    rng = random.Random(67)
    value = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(18)) + "5c"

    def event(path: str, content: str) -> str:
        out = {"type": "text", "file": {"filePath": path, "content": content, "numLines": 1}}
        return f"input: {json.dumps({'file_path': path})}\n\noutput:\n{json.dumps(out, ensure_ascii=False)}"

    for path in ("/run/secrets/db_password", "/home/u/.vault_pass.txt", "/var/lib/rancher/k3s/server/node-token",
                 "/srv/app/secret_key.txt"):
        for content in (f"{value}\n", f"     1→{value}\n     2→", f"     1\t{value}"):
            shown = redact(event(path, content))
            assert value not in shown and shown == event(path, content.replace(value, "[redacted]")), (path, content)
    for path, content in (("/app/README.md", value), ("/app/secrets.yaml", "apiVersion: v1\nkind: Secret"),
                          ("/app/token_test.py", "import pytest"), ("/run/secrets/db_password", "changeme")):
        assert redact(event(path, content)) == event(path, content), path


def _fake_password(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters) for _ in range(4)) + rng.choice("#!%@") + "".join(
        rng.choice(string.ascii_letters + string.digits) for _ in range(6)) + str(rng.randint(10, 99))


def test_secrets_with_no_name_the_keyword_rules_read() -> None:
    """A bare .pgpass line, a SIM's PIN and PUK, a name spelled with spaces, a token written
    backwards, `echo … | base64 -d` of a literal, `cat auth.txt` (user line, password line), an
    expect script's answer, and init output's labels pasted without their command."""
    rng = random.Random(71)
    p = _fake_password(rng)
    token = "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    encoded = base64.b64encode(p.encode()).decode()
    pin, puk = str(rng.randint(1000, 9999)), str(rng.randint(10**7, 10**8 - 1))
    accessor, secret_id = (str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(2))
    keypair = json.dumps([rng.randrange(256) for _ in range(64)])
    for text, secrets in (
        (f"db.internal:5432:app:app:{p}", [p]),
        (f"localhost:5432:*:postgres:x1\n*:*:*:replicator:{p}", [p]),
        (f"SIM PIN: {pin}, PUK: {puk}", [pin, puk]),
        (f"the PIN code for the test SIM is {pin}", [pin]),
        (f"modem:\n  sim_pin: {pin}", [pin]),
        (f'AT+CPIN="{pin}"', [pin]),
        (f"p a s s w o r d: {p}", [p]),
        (f"T-O-K-E-N = {p}", [p]),
        (f"written backwards:\n{token[::-1]}", [token[::-1][:20]]),
        (f"{token[:20]}\n{token[20:]}", [token[22:]]),
        (f"export GH_TOKEN={token[:30]}\r\n{token[30:]}", [token[4:30]]),
        (f"$ echo -n '{encoded}' | base64 -d\n{p}", [p, encoded]),
        (f"$ base64 --decode <<< {encoded}\n{p}", [p, encoded]),
        ("input: " + json.dumps({"command": f"echo '{encoded}' | base64 --decode"}) + f"\n\noutput:\n{p}\n",
         [p, encoded]),
        (f"$ cat /etc/openvpn/auth.txt\nalice\n{p}", [p]),
        (f"$ cat ~/vpn/creds.txt\nalice\n{p}\n", [p]),
        (f"$ cat ~/.config/solana/id.json\n{keypair}", [keypair[1:40]]),
        ("input: " + json.dumps({"command": "cat deploy-keypair.json"}) + f"\n\noutput:\n{keypair}\n", [keypair[1:40]]),
        (f'expect "password:"\nsend "{p}\\r"', [p]),
        (f'expect "*assword*" {{ send -- "{p}\\r" }}', [p]),
        (f'child.expect("Passphrase:")\nchild.sendline("{p}")', [p]),
        (f"Unseal Key 1: {encoded}x{encoded}", [encoded]),
        (f"Recovery Key 2: {p}", [p]),
        (f"PASSWORD kibana_system = {p}", [p]),
        (f"grafana-cli admin reset-admin-password {p}", [p]),
        (f">>> pw = getpass.getpass()\nPassword: \n>>> pw\n'{p}'", [p]),
        (f"In [4]: api_token\nOut[4]: '{p}'", [p]),
        (f"RUN grafana-cli admin reset-admin-password '{p}'", [p]),
        (f"Accessor ID  = {accessor}\nSecret ID    = {secret_id}", [secret_id]),
        (f"secret_id: {secret_id}", [secret_id]),
    ):
        shown = redact(text)
        assert all(s not in shown for s in secrets), (text, shown)
        assert redact(shown) == shown, text
        if "Accessor" in text:
            assert accessor in shown


def test_look_alikes_of_the_unnamed_forms_stay() -> None:
    """Clock times, compiler and grep output, GPIO pins, pinned versions, test assertions and
    base64 of prose are not those secrets."""
    for ordinary in (
        "2024-05-01 12:34:56 INFO worker started", "app.py:12:5: E501 line too long",
        "src/app.py:12:foo:bar:baz", "/etc/passwd: root:x:0:0:root:/root:/bin/bash",
        "LED_PIN = 17", "pin: 3.11", "pinned numpy==1.26.4", "spin: 2000 ms", "the PIN is set in the app",
        'expect("password").toBe(form.value)', "expect(res.status).toBe(200)",
        "$ echo aGVsbG8gd29ybGQ= | base64 -d\nhello world", "kept for backward compatibility with v1",
        "$ cat auth.txt\nsee the README", "password rules apply",
        "see gho_token\nthe next line is prose", "ghp_abcd\nfoo bar",
        '$ cat schema/id.json\n{"type": "string"}', "$ cat data/id.json\n[1, 2, 3]",
        "run grafana-cli admin reset-admin-password with the new one",
        ">>> password_policy\n'strict'", ">>> user\n'alice'",
    ):
        assert redact(ordinary) == ordinary, ordinary


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def test_tokens_written_backwards_with_no_word_saying_so() -> None:
    """Code that hides a token from scanners by reversing it, a note that pastes it that way:
    the word read forwards is a token a shape knows, so the whole word goes, with its kind."""
    rng = random.Random(28)
    an, digits, upper = string.ascii_letters + string.digits, string.digits, string.ascii_uppercase + "234567"
    tokens = {
        "github": "ghp_" + _pick(rng, an, 36),
        "gitlab": "glpat-" + _pick(rng, an, 20),
        "stripe": "sk_live_" + _pick(rng, an, 24),
        "openai": "sk-proj-" + _pick(rng, an + "_-", 48),
        "slack": f"xoxb-{_pick(rng, digits, 11)}-{_pick(rng, digits, 13)}-{_pick(rng, an, 24)}",
        "aws_access_key_id": "AKIA" + _pick(rng, upper, 16),
    }
    for kind, token in tokens.items():
        backwards = token[::-1]
        for text in (f'GH = "{backwards}"[::-1]', f"token (reversed): {backwards}", backwards,
                     f"export T={backwards}"):
            shown = redact(text)
            assert backwards[:12] not in shown and f"[redacted:{kind}]" in shown, (kind, text, shown)
            assert redact(shown) == shown, text


def test_secrets_in_urls_and_wallets() -> None:
    """A conda channel's token in its URL, `mc alias set` with no prompt before it (a compose
    file's entrypoint, a tool event's command), Bitcoin's extended private keys, a wallet key
    under a privkey name, and `bitcoin-cli dumpprivkey`'s output."""
    rng = random.Random(280)
    hexd, b58 = "0123456789abcdef", "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    conda = _pick(rng, hexd, 32)
    binstar = f"ab-{_pick(rng, hexd, 8)}-{_pick(rng, hexd, 4)}-{_pick(rng, hexd, 4)}-{_pick(rng, hexd, 12)}"
    p = _fake_password(rng)
    xprv = "xprv9s21ZrQH143K" + _pick(rng, b58, 95)
    tprv = "tprv8ZgxMBicQKsPd" + _pick(rng, b58, 94)
    wif = "K" + _pick(rng, b58, 51)
    for text, secrets in (
        (f"conda config --set channel_alias https://conda.example.com/t/{conda}/", [conda]),
        (f"channels:\n  - https://conda.anaconda.org/t/{binstar}/acme\n  - conda-forge", [binstar]),
        (f'    entrypoint: >\n      /bin/sh -c "\n      /usr/bin/mc alias set local http://minio:9000 admin {p};\n'
         '      /usr/bin/mc mb local/uploads;\n      "', [p]),
        ("input: " + json.dumps({"command": f"mc alias set s3 https://s3.example.com bob {p} --api S3v4"}),
         [p]),
        (f"mc alias set backup https://minio.internal:9000 backup-user {p}", [p]),
        (f'"desc": "wpkh({xprv}/84h/0h/0h/0/*)#3kr4ck2q"', [xprv[4:]]),
        (f"TPRV={tprv}", [tprv[4:]]),
        (f'{{"privkey": "{wif}"}}', [wif]),
        (f"PRIV_KEY={wif}", [wif]),
        (f"$ bitcoin-cli -regtest dumpprivkey bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080\n{wif}", [wif]),
    ):
        shown = redact(text)
        assert all(s not in shown for s in secrets), (text, shown)
        assert redact(shown) == shown, text
    assert "[redacted:bitcoin]" in redact(f"xpub and {xprv}")


def test_url_and_wallet_look_alikes_stay() -> None:
    """A forum topic's /t/slug/id, URLs followed by words in prose or output, other mc commands,
    and a prefix written backwards inside an ordinary word are none of those."""
    for ordinary in (
        "see https://discuss.python.org/t/python-3-12-0-is-now-available/35000 now",
        "https://community.example.com/t/how-to-rotate-keys-in-2024/12345/7",
        "Downloading https://files.pythonhosted.org/packages/x.whl (123 kB)",
        "read https://docs.min.io/ for details", "mc alias list local", "mc alias set local",
        "mc alias set local http://127.0.0.1:9000 $MINIO_USER $MINIO_PASSWORD",
        "hg clone https://hg.example.com/repo", "thanks-ks works_ks", "tprv keys derive tpub keys",
        "the xprv of a wallet is private", 'privkey_path = "keys/node.pem"',
    ):
        assert redact(ordinary) == ordinary, ordinary


def test_secret_flags_and_outputs_of_other_tools() -> None:
    """pulumi config set --secret NAME VALUE, a value piped into vercel env add, the password
    flags of hdbsql, vsql, cbq and mssql-cli, OCI's pass_phrase, kubeadm's certificate key (in a
    join command's third line, under its label), microk8s join's token, argocd's initial admin
    password, a NATS nkey seed."""
    rng = random.Random(281)
    an, hexd = string.ascii_letters + string.digits, "0123456789abcdef"
    v, p = _pick(rng, an, 24), _fake_password(rng)
    cert, join = _pick(rng, hexd, 64), _pick(rng, hexd, 32)
    seed = "SUA" + _pick(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 53)
    for text, secrets in (
        (f"pulumi config set --secret dbPassword {v}", [v]),
        (f"pulumi config set apiKey {v} --secret", [v]),
        ("input: " + json.dumps({"command": f"pulumi config set --secret -s prod apiKey {v}"}), [v]),
        (f"echo {v} | vercel env add API_SECRET production", [v]),
        (f"hdbsql -n localhost:30015 -u SYSTEM -p {p}", [p]),
        (f"vsql -h db -U dbadmin -w {p}", [p]),
        (f"cbq -e couchbase://localhost -u Administrator -p {p}", [p]),
        (f"mssql-cli -S localhost -U sa -P {p}", [p]),
        (f"[DEFAULT]\nkey_file=~/.oci/key.pem\npass_phrase={v}", [v]),
        (f"  kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef \\\n\t--control-plane --certificate-key {cert}",
         [cert]),
        (f"[upload-certs] Using certificate key:\n{cert}", [cert]),
        (f"microk8s join 10.0.0.1:25000/{join}/{join[:12]}", [join]),
        (f"$ argocd admin initial-password -n argocd\n{v}\n\n This password must be only used for first time login.",
         [v]),
        (f"-----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------", [seed]),
    ):
        shown = redact(text)
        assert all(s not in shown for s in secrets), (text, shown)
        assert redact(shown) == shown, text


def test_look_alikes_of_other_tools_flags_stay() -> None:
    for ordinary in (
        "pulumi config set aws:region eu-west-1", "pulumi config set --secret dbPassword",
        "pulumi config set --secret --path db.password $DB_PASSWORD", "use --secret for sensitive values",
        "echo done | vercel env ls", "microk8s join 10.0.0.1:25000/abcd/ef --worker",
        "pass_phrase_file = ~/.oci/pp", "[upload-certs] Using certificate key:\nsee above",
        "ssl_certificate_key /etc/nginx/certs/site.key;",
    ):
        assert redact(ordinary) == ordinary, ordinary


def test_values_given_to_and_read_from_secret_stores() -> None:
    """What a session stores in a secret manager (--secret-string, --value of a SecureString or
    a Key Vault secret, a value piped into gcloud secrets, kubeseal --raw, secret-tool, keyring)
    and what it reads back (SecretString, --output text, Parameter Store's decrypted Values), and
    dotnet nuget push's -k API key."""
    rng = random.Random(282)
    v = _pick(rng, string.ascii_letters + string.digits, 32)
    for text in (
        f"aws secretsmanager create-secret --name prod/stripe --secret-string '{v}'",
        f'{{\n    "ARN": "arn:aws:secretsmanager:eu-west-1:123:secret:prod/stripe-AbCdEf",\n    "SecretString": "{v}"\n}}',
        f"$ aws secretsmanager get-secret-value --secret-id prod/stripe --query SecretString --output text\n{v}",
        f"aws ssm put-parameter --name /prod/stripe --type SecureString --value '{v}'",
        f"az keyvault secret set --vault-name kv --name stripe --value {v}",
        f'$ aws ssm get-parameters-by-path --path /prod/app --with-decryption\n{{\n    "Parameters": [\n'
        f'        {{\n            "Name": "/prod/app/stripe",\n            "Value": "{v}",\n            "Version": 1\n'
        '        }\n    ]\n}',
        f"echo -n '{v}' | gcloud secrets versions add stripe --data-file=-",
        f"echo -n '{v}' | kubeseal --raw --name app --namespace prod",
        f"echo -n '{v}' | secret-tool store --label=api service api",
        f"dotnet nuget push pkg.nupkg -k {v} -s https://api.nuget.org/v3/index.json",
    ):
        shown = redact(text)
        assert v not in shown, (text, shown)
        assert redact(shown) == shown, text
    for ordinary in (
        "aws ssm put-parameter --name /prod/region --type String --value eu-west-1",
        "helm template . --set image.tag=1.2 --value-files x", "az tag create --name env --value prod",
        '$ aws ssm get-parameters-by-path --path /prod/app\n{\n    "Parameters": []\n}',
    ):
        assert redact(ordinary) == ordinary, ordinary


def test_prompts_with_an_aside_or_a_quoted_path() -> None:
    """A prompt whose secret's name has an aside before the colon ("Token (will be hidden): X")
    or names a quoted path ("Enter passphrase for key '/home/…/id_ed25519': X"), pasted with
    what was typed; Google-style docstrings ("token (str): The token.") stay."""
    p = _fake_password(random.Random(283))
    for text in (f"Token (will be hidden): {p}", f"Enter your token (input will not be visible): {p}",
                 f"Enter passphrase for key '/home/dev/.ssh/id_ed25519': {p}"):
        shown = redact(text)
        assert p not in shown and redact(shown) == shown, (text, shown)
    for ordinary in ("    token (str): The API token to use.", "    password (Optional[str]): the password.",
                     "Enter passphrase for key '/home/dev/.ssh/id_ed25519':",
                     "Identity added: /home/dev/.ssh/id_ed25519 (dev@host)"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_bitcoin_key_under_its_formats_name() -> None:
    rng = random.Random(284)
    b58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    for lead, n in (("5H", 49), ("K", 51), ("L", 51), ("c", 51)):
        key = lead + _pick(rng, b58, n)
        for text in (f"WIF: {key}", f'{{"wif": "{key}"}}', f"wif = {key}"):
            shown = redact(text)
            assert key not in shown and "[redacted:bitcoin]" in shown and redact(shown) == shown, (text, shown)
    for ordinary in ("the WIF format is base58check", "key.toWIF()", "WIF: see the wallet's export"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_command_inside_backticks() -> None:
    """Markdown's inline code (and a shell's `…` substitution) holds a command: its backtick
    ends the command, as a pipe or a parenthesis does."""
    rng = random.Random(285)
    for _ in range(3):
        p = _pick(rng, string.ascii_letters + string.digits, 10) + "#" + _pick(rng, string.digits, 2)
        for text in (f"Connect with `mysql -u root -p{p} app` and run the migration.",
                     f"run `sshpass -p {p} ssh deploy@10.0.0.5` then",
                     f"x=`redis-cli -a {p} get key`",
                     f"Run `mc alias set local http://localhost:9000 minioadmin {p}` first."):
            shown = redact(text)
            assert p not in shown and "`" in shown and redact(shown) == shown, (text, shown)
    for ordinary in ("Use `mysql -u root -p` and type the password at its prompt.",
                     "Run `docker build -t app .` and `pytest -p no:cacheprovider`.",
                     "`mc alias set NAME URL ACCESS SECRET` is the form."):
        assert redact(ordinary) == ordinary, ordinary


def test_ftp_user_sonar_login_and_codecov_token() -> None:
    rng = random.Random(286)
    p = _pick(rng, string.ascii_letters + string.digits, 12) + "!"
    h = _pick(rng, "0123456789abcdef", 40)
    u = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    for text, secret in ((f"ftp> user deploy {p}\n331 Password required for deploy.", p),
                         (f"mvn sonar:sonar -Dsonar.host.url=http://localhost:9000 -Dsonar.login={h}", h),
                         (f"sonar.login=squ_{h}", h),
                         (f"bash <(curl -s https://codecov.io/bash) -t {u}", u),
                         (f"codecov -f coverage.xml -t {u}", u),
                         (f"codecovcli upload-process -t {u} --flag unit", u)):
        shown = redact(text)
        assert secret not in shown and redact(shown) == shown, (text, shown)
    for ordinary in ("ftp> user anonymous", "ftp> user bob\n331 Password required for bob.",
                     "-Dsonar.login=${SONAR_TOKEN}", "sonar.login=admin",
                     f"docker run -t {u}", "codecov -t ${CODECOV_TOKEN}"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_secrets_commands_json_values() -> None:
    """vault kv get -format=json and doppler secrets download print secrets under any names:
    every string value is one, but the envelope's own members."""
    rng = random.Random(287)
    s1, s2 = _pick(rng, string.ascii_letters + string.digits, 32), _pick(rng, string.ascii_letters + string.digits, 40)
    rid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    vault = {"request_id": rid, "lease_id": "", "data": {"data": {"stripe": s1, "mailer": s2},
                                                         "metadata": {"created_time": "2024-05-14T09:12:44Z"}}}
    text = f"$ vault kv get -format=json secret/app\n{json.dumps(vault, indent=2)}\n$ ls\napp"
    shown = redact(text)
    assert s1 not in shown and s2 not in shown and rid in shown and "2024-05-14T09:12:44Z" in shown, shown
    assert shown.endswith("$ ls\napp") and redact(shown) == shown
    doppler = {"DOPPLER_CONFIG": "dev", "DOPPLER_PROJECT": "app", "MAILER": s1, "REGION": "eu-west-1"}
    event = (f"input: {json.dumps({'command': 'doppler secrets download --no-file --format json'})}"
             f"\n\noutput:\n{json.dumps(doppler, indent=2)}\n")
    shown = redact(event)
    assert s1 not in shown and '"DOPPLER_PROJECT": "app"' in shown and redact(shown) == shown, shown
    field = f"$ vault kv get -field=password secret/app\n{s1}"  # the one value, as before
    assert s1 not in redact(field)
    listing = "$ vault kv list -format=json secret/\n[\n  \"app\",\n  \"billing\"\n]"
    assert redact(listing) == listing


def test_svn_auth_cache_minisign_key_and_bw_session() -> None:
    rng = random.Random(288)
    alnum = string.ascii_letters + string.digits
    p = _pick(rng, alnum, 14) + "%"
    svn = (f"$ cat ~/.subversion/auth/svn.simple/{_pick(rng, '0123456789abcdef', 32)}\nK 8\npassauthtype\nV 6\nsimple\n"
           f"K 8\npassword\nV {len(p)}\n{p}\nK 15\nsvn:realmstring\nV 41\n<https://svn.example.org:443> Subversion\nEND\n")
    key = "RWRTY0Iy" + base64.b64encode(bytes(rng.randrange(256) for _ in range(150))).decode()[:204]
    minisign = f"$ cat ~/.minisign/minisign.key\nuntrusted comment: minisign encrypted secret key\n{key}\n"
    session = base64.b64encode(bytes(rng.randrange(256) for _ in range(64))).decode()
    bw = (f"$ bw unlock\n? Master password: [hidden]\nYour vault is now unlocked!\n\n$ export BW_SESSION=\"{session}\"\n"
          f"> $env:BW_SESSION=\"{session}\"\n\n$ bw list items --session {session}\n")
    raw = f"$ bw unlock --raw\n{session}\n"
    for text, secret in ((svn, p), (minisign, key[20:]), (bw, session), (raw, session)):
        shown = redact(text)
        assert secret not in shown and redact(shown) == shown, (text, shown)
    assert "Subversion" in redact(svn) and "simple" in redact(svn)
    for ordinary in ("untrusted comment: minisign public key 6B7C28E1F2A3D4C5\nRWTF6B7C28E1F2A3D4C5",
                     "K 8\npassword\nV 0\n\nEND", "$ bw unlock\n? Master password: [hidden]\nInvalid master password."):
        assert redact(ordinary) == ordinary, ordinary


def test_influx_auth_tables() -> None:
    rng = random.Random(289)
    token = base64.urlsafe_b64encode(bytes(rng.randrange(256) for _ in range(64))).decode()
    ids = [_pick(rng, "0123456789abcdef", 16) for _ in range(2)]
    table = (f"$ influx auth list\nID\t\t\tDescription\tToken\t\t\t\t\t\t\t\t\t\tUser Name\tUser ID\t\t\tPermissions\n"
             f"{ids[0]}\ttelegraf\t{token}\tadmin\t\t{ids[1]}\t[write:orgs/{ids[1]}/buckets]\n")
    event = (f"input: {json.dumps({'command': 'influx auth create --org acme --all-access'})}\n\noutput:\n"
             f"ID\t\t\tDescription\tToken\tUser Name\tUser ID\t\t\tPermissions\n{ids[0]}\t\t{token}\tadmin\t{ids[1]}\t[read:orgs/{ids[1]}]\n")
    for text in (table, event):
        shown = redact(text)
        assert token not in shown and ids[0] in shown and ids[1] in shown and redact(shown) == shown, shown
    buckets = f"$ influx bucket list\nID\t\t\tName\t\tRetention\n{ids[0]}\ttelemetry\tinfinite\n"
    assert redact(buckets) == buckets


def test_bw_session_exported_by_hand() -> None:
    rng = random.Random(290)
    session = base64.b64encode(bytes(rng.randrange(256) for _ in range(64))).decode()
    for text in (f'export BW_SESSION="{session}"', f"export BW_SESSION={session}; bw list items"):
        shown = redact(text)
        assert session not in shown and redact(shown) == shown, shown
    for ordinary in ('export BW_SESSION="$(bw unlock --raw)"', "export BW_SESSION=$BW_KEY"):
        assert redact(ordinary) == ordinary, ordinary


def _password(rng: random.Random) -> str:
    return _pick(rng, string.ascii_letters, 3) + rng.choice("#!%@") + _pick(rng, string.ascii_letters + string.digits, 5) + str(rng.randint(10, 99))


def test_a_name_and_its_value_with_only_spaces_between() -> None:
    rng = random.Random(291)
    texts = []
    for form in ("requirepass {p}", "IMAPAccount work\nUser bob\nPass {p}\nSSLType IMAPS",
                 "userlist admins\n    user bob insecure-password {p}", "    dbPassword      {p}",
                 "DB_PASSWORD                    {p}", "credentials {{\n    username \"bob\"\n    password \"{p}\"\n}}",
                 '{{:db {{:user "app" :password "{p}"}}}}', '10.0.0.1 10.0.0.2 : PSK "{p}"',
                 'poll imap.example.com protocol imap user "bob" password "{p}" ssl',
                 "neo4j-admin dbms set-initial-password {p}",
                 "$ git push\nPassword for 'https://bob@github.com': {p}"):
        p = _password(rng)
        texts.append((form.format(p=p), p))
    key = _pick(rng, string.ascii_letters + string.digits, 40)
    texts.append((f"        proxy_set_header X-Api-Key {key};", key))
    for text, secret in texts:
        shown = redact(text)
        assert secret not in shown and redact(shown) == shown, (text, shown)


def test_names_followed_by_words_stay() -> None:
    for ordinary in ('Callers still pass "6379".', "Cannot pass 'force_download=True' here.",
                     "requirepass yes", "dbPassword is required", "proxy_set_header X-Api-Key $http_x_api_key;",
                     "insecure-password hashing is off", "User bob\nPass through the proxy",
                     'msg = "Enter your password " + name', "the password reset flow"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_secret_column_anywhere_in_a_table() -> None:
    rng = random.Random(292)
    p, k, t = _password(rng), _pick(rng, string.ascii_letters + string.digits, 32), _pick(rng, string.ascii_letters, 32)
    s = _pick(rng, string.ascii_letters, 3) + "8Q~" + _pick(rng, string.ascii_letters + string.digits + "._-", 34)
    tables = [
        (f"username\tpassword\temail\tcreated\nbob\t{p}\tbob@example.com\t2024-05-01\n", p),
        (f" id |             api_key              | name\n----+----------------------------------+------\n  1 | {k} | acme\n(1 row)\n", k),
        (f"+----+-------+-------+\n| id | token | owner |\n+----+-------+-------+\n|  1 | {t} | bob   |\n+----+-------+-------+\n", t),
        (f"AppId                                 Password                                 Tenant\n{'-' * 36}  {'-' * 40}  {'-' * 36}\n"
         f"{uuid.UUID(int=rng.getrandbits(128))}  {s}  {uuid.UUID(int=rng.getrandbits(128))}", s),
        (f"│ NAME │ PASSWORD │ NOTE │\n├──────┼──────────┼──────┤\n│ app  │ {p} │ prod │\n", p),
    ]
    for text, secret in tables:
        shown = redact(text)
        assert secret not in shown and redact(shown) == shown, (text, shown)
        assert shown.splitlines()[0] == text.splitlines()[0]  # (the header stays)


def test_tables_without_a_secret_in_a_secret_column_stay() -> None:
    for ordinary in ("name\tpassword\tnote\nbob\t********\tset\n",
                     " id | token_type | name\n----+------------+------\n  1 | bearer     | acme\n",
                     "NAME     TOKEN    AGE\nweb-1    <none>   3d\n",
                     "| user | password |\n|---|---|\n| bob | (see vault) |\n",
                     "Key                Value\n---                -----\ncreated_time       2024-05-14T09:12:44.118Z\n",
                     "SECRET                  AGE\nmy-app-secret-v2        3d\n",
                     "$ gh secret list\nNAME            UPDATED\nSTRIPE_KEY      about 2 days ago\n"):
        assert redact(ordinary) == ordinary, ordinary


def test_secrets_commands_tables_flags_and_maps() -> None:
    rng = random.Random(293)
    word = string.ascii_letters + string.digits
    s = [_pick(rng, word, 32) for _ in range(9)]
    session = base64.b64encode(bytes(rng.randrange(256) for _ in range(64))).decode()
    p = _password(rng)
    cases = [
        ("$ vault kv get secret/app\n======= Metadata =======\nKey                Value\n---                -----\n"
         f"created_time       2024-05-14T09:12:44.118Z\nversion            3\n\n====== Data ======\nKey       Value\n"
         f"---       -----\nregion    eu-west-1\nstripe    {s[0]}\n", s[0], ["2024-05-14T09:12:44.118Z", "version            3"]),
        (f"$ vault read database/creds/readonly\nKey                Value\n---                -----\nlease_duration     1h\n"
         f"password           {s[1]}\n", s[1], ["1h"]),
        (f"$ doppler secrets\n│ NAME           │ VALUE{' ' * 27} │ NOTE │\n│ DOPPLER_CONFIG │ dev{' ' * 29} │      │\n"
         f"│ MAILER         │ {s[2]} │      │\n", s[2], ["DOPPLER_CONFIG │ dev"]),
        (f"$ chamber read app stripe_key\nKey             Value                               Version  LastModified      User\n"
         f"stripe_key      {s[3]}    3        05-14 09:12:44    bob\n", s[3], ["05-14 09:12:44"]),
        (f"bw list items --search github --session {session}", session, ["github"]),
        (f"mosquitto_pub -h broker -u sensor -P {p} -t home/temp -m 21.5", p, ["home/temp"]),
        (f"kubectl create secret generic stripe --from-literal=live={s[4]} --from-literal region=eu", s[4], ["region=eu"]),
        (f'{{\n    "gitlab-token": {{\n        "gitlab.example.com": "{s[5]}"\n    }}\n}}', s[5], ["gitlab.example.com"]),
        (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: stripe\nstringData:\n  live: {s[6]}\n  note: \"{p}\"\n", s[6], ["name: stripe"]),
        (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: stripe\nstringData:\n  live: {s[6]}\n  note: \"{p}\"\n", p, []),
    ]
    for text, secret, kept in cases:
        shown = redact(text)
        assert secret not in shown and redact(shown) == shown, (text, shown)
        assert all(k in shown for k in kept), (text, shown)


def test_look_alikes_of_secrets_commands_tables_stay() -> None:
    for ordinary in ("kubectl create configmap app --from-literal=region=eu-west-1a2",
                     '{"password": {"type": "string", "minLength": 8}}',
                     '{"token": {"example.com": "see the docs"}}',
                     "$ vault kv metadata get secret/app\nKey                Value\n---                -----\ncurrent_version    3\n",
                     "apiVersion: v1\nkind: ConfigMap\ndata:\n  region: eu-west-1\n"):
        assert redact(ordinary) == ordinary, ordinary


def test_secret_arguments_without_a_prompt_tuples_and_options() -> None:
    rng = random.Random(294)
    b32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    cases = []
    for form in ("rabbitmqctl add_user app {p}", "Run `rabbitmqctl add_user app {p}` on the broker.",
                 "mc admin user add local bob {p}", "db2 connect to SAMPLE user db2inst1 using {p}",
                 '[{{app, [{{db_user, "app"}}, {{db_password, "{p}"}}]}}].', 'config :app, auth: {{:password, "{p}"}}',
                 'let res = client.get(url).basic_auth("bob", Some("{p}")).send().await?;'):
        p = _password(rng)
        cases.append((form.format(p=p), p))
    secret = _pick(rng, string.ascii_letters + string.digits + "+/", 40)
    cases.append((f"CREDENTIALS\tASIA{_pick(rng, b32, 16)}\t2024-05-14T10:12:44+00:00\t{secret}\tIQoJb3JpZ2luX2VjE", secret))
    for text, p in cases:
        shown = redact(text)
        assert p not in shown and redact(shown) == shown, (text, shown)
    assert "db2inst1" in redact(cases[3][0]) and "bob" in redact(cases[2][0])


def test_look_alikes_of_secret_arguments_stay() -> None:
    for ordinary in ("rabbitmqctl list_users", "rabbitmqctl add_user app", "db2 connect to SAMPLE",
                     "mc admin user add local bob", '{db_password, Password}', "basic_auth(user, Some(password))",
                     'client.basic_auth("bob", None::<&str>)'):
        assert redact(ordinary) == ordinary, ordinary


def test_a_credentials_name_and_user_colon_secret() -> None:
    rng = random.Random(295)
    p = _password(rng)
    for text in (f"listen stats\n    bind :8404\n    stats auth admin:{p}", f"    stats auth admin:{p};"):
        shown = redact(text)
        assert p not in shown and "admin:" in shown and redact(shown) == shown, shown
    for ordinary in ("auth user:pass", "stats auth admin:admin", "oauth flow: see docs", "the auth header: Bearer"):
        assert redact(ordinary) == ordinary, ordinary


def test_what_more_secrets_stores_print_or_take() -> None:
    rng = random.Random(296)
    s = [_pick(rng, string.ascii_letters + string.digits, 32) for _ in range(6)]
    p = [_password(rng) for _ in range(4)]
    cases = [
        (f'dotnet user-secrets set "Jwt:Key" "{s[0]}"', s[0], ['"Jwt:Key"']),
        (f"$ bin/rails credentials:show\nsecret_key_base: {s[1]}\nstripe:\n  live: {s[2]}\n", s[2], ["credentials:show", "stripe:"]),
        (f"$ sops -d secrets.enc.yaml\nstripe: {s[3]}\n", s[3], ["stripe:"]),
        (f"$ vault kv get -format=yaml secret/app\ndata:\n  data:\n    stripe: {s[4]}\n  metadata:\n    version: 3\n", s[4], ["version: 3"]),
        (f'$ ejson decrypt config/secrets.ejson\n{{\n  "_public_key": "{"ab" * 32}",\n  "stripe": "{s[5]}"\n}}', s[5], ["ab" * 32]),
        (f"$ lpass show --password github\n{p[0]}", p[0], []),
        (f"$ keepassxc-cli show -s -a Password vault.kdbx github\nEnter password to unlock vault.kdbx:\n{p[1]}", p[1], ["unlock vault.kdbx:"]),
        (f"$ netlify env:get STRIPE_KEY\n{s[0]}", s[0], []),
        (f"$ kubectl view-secret db password\n{p[2]}", p[2], []),
        (f"expdp system/{p[3]}@ORCLPDB1 directory=dp_dir schemas=app", p[3], ["@ORCLPDB1"]),
    ]
    for text, secret, kept in cases:
        shown = redact(text)
        assert secret not in shown and redact(shown) == shown, (text, shown)
        assert all(k in shown for k in kept), (text, shown)


def test_namespaced_tasks_and_other_stores_look_alikes_stay() -> None:
    for ordinary in ("$ rails credentials:show", "bin/rails credentials:edit --environment production",
                     "rake secrets:setup", "$ netlify env:get NODE_VERSION\n18", "$ lpass show github\nUsername: bob",
                     "$ vault kv get secret/app\nKey    Value\n---    -----\nversion    3\n"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_secrets_name_and_its_value_as_a_lists_two_items() -> None:
    rng = random.Random(297)
    h = [_pick(rng, "0123456789abcdef", 40) for _ in range(3)]
    s = [_pick(rng, string.ascii_letters + string.digits, 32) for _ in range(3)]
    p = [_password(rng) for _ in range(3)]
    cases = [
        (f"""clasp run setScriptProperty -p '["PLAYCRICKET_API_TOKEN", "{h[0]}"]'""", h[0], ['"PLAYCRICKET_API_TOKEN"']),
        ("input: " + json.dumps({"command": f"""clasp run setScriptProperty -p '["STRAVA_CLIENT_SECRET", "{h[1]}"]'"""}),
         h[1], ["STRAVA_CLIENT_SECRET"]),
        (f'{{"env": [["API_KEY", "{s[0]}"], ["REGION", "eu-west-1"]]}}', s[0], ['"eu-west-1"']),
        (f'secrets = ["SENDGRID_API_KEY", "SG.{s[1]}"]', s[1], ['"SENDGRID_API_KEY"']),
        (f'const env = new Map([["dbPassword", "{p[0]}"], ["dbUser", "app"]]);', p[0], ['"app"']),
        (f'local pair = {{ "WEBHOOK_SECRET", "{h[2]}" }}', h[2], []),
        (f'subprocess.run(["mysqldump", "-u", "root", "--password", "{p[1]}", "shop"])', p[1], ['"root"', '"shop"']),
        (f'    command: ["redis-server", "--requirepass", "{s[2]}"]', s[2], ['"redis-server"']),
        (f"  args: [GITEA_RUNNER_TOKEN, {h[0]}]", h[0], ["GITEA_RUNNER_TOKEN"]),
        (f'config :app, Repo, [{{"password", "{p[2]}"}}, {{"hostname", "db"}}]', p[2], ['"db"']),
        (f'$ jq .env config.json\n[\n  [\n    "API_KEY",\n    "{s[0]}"\n  ]\n]', s[0], ['"API_KEY"']),
    ]
    for text, secret, kept in cases:
        shown = redact(text)
        assert secret not in shown and redact(shown) == shown, (text, shown)
        assert all(k in shown for k in kept), (text, shown)


def test_lists_of_names_flags_and_variables_stay() -> None:
    for ordinary in ('exclude = ["password", "email"]', '["API_KEY", "REGION"]', '{"--token", "--quiet", "--type"}',
                     "args = [API_TOKEN, other_token]", "x = [password, user.name]", "matrix: [password, hunter2]",
                     'subprocess.run(["mysql", "--password", db_password])', '["--password-file", "/run/secrets/db"]',
                     '["--token", "$VERCEL_TOKEN"]', 'SECRET_FIELDS = ["api_key", "token", "password"]',
                     'pair = ["api_key", "<your key here>"]', 'labels = ["Token", "Expires at"]',
                     'cols = ["secret", "created_at"]', 'parser.add_argument("--token", "-t")',
                     'SECRET_FIELDS = [\n    "password",\n    "token",\n]', '__all__ = (\n    "EventLoopToken",\n    "RunVar",\n)',
                     "req.add_unredirected_header('Authorization',\n    'Basic {}'.format(auth_str.strip()))"):
        assert redact(ordinary) == ordinary, ordinary


def test_drush_user_password_and_files_of_credential_lines() -> None:
    rng = random.Random(298)
    p = [_password(rng) for _ in range(6)]
    md5 = "md5" + _pick(rng, "0123456789abcdef", 32)

    def event(command: str, output: str) -> str:
        return f"input: {json.dumps({'command': command})}\n\noutput:\n{output}\n"

    cases = [
        (f'drush user:password admin "{p[0]}"', [p[0]], ["admin"]),
        (f"ddev drush user-password editor '{p[1]}'", [p[1]], ["editor"]),
        (f"$ cat /etc/postfix/sasl_passwd\n[smtp.gmail.com]:587 bob@gmail.com:{p[2]}", [p[2]], ["[smtp.gmail.com]:587 bob@gmail.com:"]),
        (event("cat /etc/postfix/sasl_passwd", f"smtp.sendgrid.net apikey:{p[3]}"), [p[3]], ["apikey:"]),
        (f'$ sudo cat /etc/pgbouncer/userlist.txt\n"app" "{md5}"\n"admin" "{p[4]}"\n', [md5, p[4]], ['"app"', '"admin"']),
        (event("cat pgbouncer/userlist.txt", f'"stats" "{p[5]}"'), [p[5]], ['"stats"']),
    ]
    for text, secrets, kept in cases:
        shown = redact(text)
        assert all(s not in shown for s in secrets) and redact(shown) == shown, (text, shown)
        assert all(k in shown for k in kept), (text, shown)


def test_drush_and_credential_file_look_alikes_stay() -> None:
    for ordinary in ("drush user:password admin", "drush user:password --help", "the user-password flow",
                     "postmap /etc/postfix/sasl_passwd", "$ cat /etc/postfix/sasl_passwd\ncat: /etc/postfix/sasl_passwd: No such file",
                     "$ cat /etc/postfix/sasl_passwd\n[smtp.gmail.com]:587 bob@gmail.com:${SMTP_PASSWORD}",
                     '$ cat userlist.txt\n"app" ""', "$ cat ~/secrets/token.txt\n2024-05-14 10:12:44 starting"):
        assert redact(ordinary) == ordinary, ordinary


def test_kotlin_pairs_lisp_keywords_and_ruby_word_arrays() -> None:
    rng = random.Random(299)
    s = [_pick(rng, string.ascii_letters + string.digits, 32) for _ in range(3)]
    p = [_password(rng) for _ in range(4)]
    cases = [
        (f'val props = mapOf("user" to "app", "password" to "{p[0]}")', p[0], ['"user" to "app"']),
        (f'val headers = mapOf("X-Trace" to traceId, "apiKey" to "{s[0]}")', s[0], ['"X-Trace" to traceId']),
        ("input: " + json.dumps({"command": "kotlinc -script seed.kts"}) + f'\n\noutput:\nval cfg = mapOf("password" to "{p[1]}")\n',
         p[1], ["kotlinc"]),
        (f'(client/get url {{:headers {{"Accept" "json"}} :api-key "{s[1]}"}})', s[1], ['"Accept" "json"']),
        (f'(:host "imap.example.com" :login "bob" :secret "{p[2]}")', p[2], ['"imap.example.com"', '"bob"']),
        (f'(def db {{:dbtype "postgresql" :user "app" :password "{p[3]}"}})', p[3], ['"postgresql"']),
        (f"args = %w[--token {s[2]} --verbose]", s[2], ["--verbose]"]),
    ]
    for text, secret, kept in cases:
        shown = redact(text)
        assert secret not in shown and redact(shown) == shown, (text, shown)
        assert all(k in shown for k in kept), (text, shown)


def test_kotlin_renames_lisp_references_and_flag_arrays_stay() -> None:
    for ordinary in ('rename "token" to "accessToken"', 'map "secret" to "SECRET_KEY"', 'change the "token" to "bearer"',
                     '{:secret "${SECRET}"}', "{:api-key (env :api-key)}", '(:token "default")', "%w[--token --verbose]",
                     'val pair = "password" to passwordField.text'):
        assert redact(ordinary) == ordinary, ordinary


def test_a_secrets_name_spelled_out_as_secret() -> None:
    rng = random.Random(300)
    p = [_password(rng) for _ in range(3)]
    for text, secret in ((f"s-e-c-r-e-t = {p[0]}", p[0]), (f"S E C R E T: {p[1]}", p[1]), (f"s.e.c.r.e.t={p[2]}", p[2])):
        shown = redact(text)
        assert secret not in shown and redact(shown) == shown, (text, shown)
    for ordinary in ("the s-e-c-r-e-t word", "is-e-c-r-e-t = x12345", "s-e-c-r-e-t-s = abc12345", "c-r-e-t = abc12345"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_long_text_reads_tables_wif_escapes_and_colour_as_a_short_one() -> None:
    # over 64 KB some literals are found by re's search instead of `in`, and an escape form by
    # its first byte: the same secrets are found
    rng = random.Random(301)
    p = [_password(rng) for _ in range(3)]
    t = _pick(rng, string.ascii_letters, 32)
    wif = "K" + _pick(rng, "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", 51)
    filler = "".join(f"INFO worker {i} finished batch in {i % 97} ms\n" for i in range(2500))
    texts = [
        (f"+----+-------+-------+\n| id | token | owner |\n+----+-------+-------+\n|  1 | {t} | bob   |\n+----+-------+-------+\n", t),
        (f"WIF: {wif}\n", wif),
        (f'{{"DB_\\u0050ASSWORD": "{p[0]}"}}\n', p[0]),
        (f"\x1b[1mDB_PASSWORD\x1b[0m={p[1]}\n", p[1]),
        (f"s-e-c-r-e-t = {p[2]}\n", p[2]),
    ]
    assert len(filler) > 65536
    for text, secret in texts:
        short, long = redact(text), redact(filler + text + filler)
        assert secret not in short and secret not in long, (text, short)
        assert long == filler + short + filler


def test_rabbitmqctl_change_password_with_no_prompt_before_it() -> None:
    p = _password(random.Random(302))
    for text in (f"rabbitmqctl change_password app {p}", f"sudo rabbitmqctl change_password app '{p}'"):
        shown = redact(text)
        assert p not in shown and "change_password app" in shown and redact(shown) == shown, (text, shown)
    for ordinary in ("the change_password handler", "def change_password(user, new):", "rabbitmqctl change_password",
                     "POST /users/change_password HTTP/1.1", "make change_password app2"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_name_written_right_after_a_spelled_out_escape_is_read_without_the_escapes_letter() -> None:
    """printf 'SSID = "x"\\nWIFI_PASSWORD = "…"' glues the name to the escape's n ("nWIFI_PASSWORD"
    reads as a count, like n_passwords); the name starts after the escape, and a real count stays."""
    rng = random.Random(31)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(10)) + "4!x"
    for text in (f"printf 'WIFI_SSID = \"home\"\\nWIFI_PASSWORD = \"{value}\"\\n' > secrets.py",
                 f"printf 'HOST=db\\nDB_PASSWORD={value}\\n' >> .env",
                 f"echo -e 'user: bob\\tpassword: {value}'",
                 f'body = "a=1\\r\\nSECRET_KEY={value}"'):
        out = redact(text)
        assert value not in out and "[redacted" in out, out
    assert redact("printf 'n=1\\nnum_passwords=12\\n'") == "printf 'n=1\\nnum_passwords=12\\n'"
    assert redact("C:\\new\\notes.txt") == "C:\\new\\notes.txt"


def test_jq_arg_value_is_hidden_when_its_name_or_the_key_it_sets_names_a_secret() -> None:
    """jq --arg NAME VALUE: the value is a secret's when NAME names one (--arg pw X) or the filter
    sets a secret-named key to $NAME (.db.password = $v); an ordinary --arg stays."""
    rng = random.Random(318)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(9)) + "#7q"
    for text in (f"jq --arg pw '{value}' '.db.password = $pw' config.json",
                 f"jq --arg v '{value}' '.db.password = $v' config.json",
                 f"yq -i --arg v \"{value}\" '.auth[\"token\"] |= $v' c.yaml",
                 f"$ gojq --arg apiToken {value} -n '{{t: $apiToken}}'"):
        out = redact(text)
        assert value not in out and "[redacted" in out, out
    for ordinary in ("jq --arg name 'bob-the-builder' '.user.name = $name' config.json",
                     "jq --arg v 'release-2024-05' '.password_hint = $vx' c.json",
                     "jq --arg v 'release-2024-05' --arg vx 1 '.password = $vx' c.json",
                     "jq -n --arg token \"$TOKEN\" '{t: $token}'",
                     "jq --arg v 'keepthisvalue' '.title = $v | .password = null' c.json"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_name_in_markdown_emphasis_is_read_with_its_stars_as_the_separators() -> None:
    """An assistant's summary writes "**Password:** X", "**API_TOKEN** = X": the stars sit between
    the name and the separator, or after the colon; a masked value or a sentence stays."""
    rng = random.Random(3181)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(9)) + "@5k"
    for text in (f"**password**: {value}", f"- **Password:** {value}", f"- **DB password**: {value}",
                 f"**API_TOKEN** = {value}", f"*password*: {value}", f"**Token:**\t{value}"):
        out = redact(text)
        assert value not in out and "[redacted" in out, out
        assert redact(out) == out
    for ordinary in ("password: ********", "password = ****", "the **password** field is required",
                     "**Password**: the user's password, required", "a **token**: string used by the client",
                     "**Token:** see the README", "x = a ** b: int", "**kwargs: Any"):
        assert redact(ordinary) == ordinary, ordinary


def test_php_var_dump_hides_a_secret_named_key_s_string_on_the_next_line() -> None:
    """var_dump prints ["password"]=> on one line and string(N) "…" on the next; the N bytes
    after the quote are the value (a private or protected property's name carries its class)."""
    rng = random.Random(3182)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(10)) + "%2"
    for key in ('"password"', '"apiToken":"App\\\\Config":private', '"secret":protected'):
        text = f'array(2) {{\n  ["user"]=>\n  string(3) "bob"\n  [{key}]=>\n  string({len(value)}) "{value}"\n}}'
        out = redact(text)
        assert value not in out and "[redacted" in out, out
        assert redact(out) == out
    for ordinary in ('array(1) {\n  ["password_hint"]=>\n  string(9) "your pet."\n}',
                     'array(1) {\n  ["user"]=>\n  string(12) "bob-the-user"\n}',
                     'array(1) {\n  ["password"]=>\n  NULL\n}'):
        assert redact(ordinary) == ordinary, ordinary


def test_xmlstarlet_and_dasel_hide_the_value_they_set_at_a_secret_named_path() -> None:
    """xmlstarlet ed -u XPATH -v X and dasel put -v X SELECTOR: X is a secret's when the path's
    last part names one; another path's value, and xmlstarlet sel -v (which prints), stay."""
    rng = random.Random(3183)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(9)) + "!4z"
    for text in (f"xmlstarlet ed -L -u '//password' -v '{value}' config.xml",
                 f"xmlstarlet ed -L -u '/config/db/@apiToken' -v {value} config.xml",
                 f"$ dasel put -f config.yaml -t string -v '{value}' '.db.password'"):
        out = redact(text)
        assert value not in out and "[redacted" in out, out
        assert redact(out) == out
    for ordinary in ("xmlstarlet ed -L -u '//host' -v 'db.internal.example' config.xml",
                     "xmlstarlet sel -t -v '//password' config.xml", "grep -v '^#' .env",
                     "dasel put -f config.yaml -v 'release-2024' '.app.version'"):
        assert redact(ordinary) == ordinary, ordinary


def test_an_interpreter_one_liner_printing_a_secret_named_env_var_hides_its_output() -> None:
    """python -c "print(os.environ['API_KEY'])", node -e "console.log(process.env.X)", ruby -e
    'puts ENV["X"]': the next line is the value; an ordinary variable's or a length stays."""
    rng = random.Random(3184)
    value = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    for command in ("python -c \"import os; print(os.environ['API_KEY'])\"",
                    "node -e \"console.log(process.env.API_TOKEN)\"",
                    "ruby -e 'puts ENV[\"SECRET_KEY_BASE\"]'", "perl -e 'print $ENV{DB_PASSWORD}'"):
        for text in (f"$ {command}\n{value}\n",
                     f"input: {json.dumps({'command': command, 'description': 'x'})}\n\noutput:\n{value}\n"):
            out = redact(text)
            assert value not in out and "[redacted" in out, out
            assert redact(out) == out
    for ordinary in ("$ python -c \"import os; print(os.environ['HOME'])\"\n/home/bob\n",
                     "$ node -e \"console.log(process.env.NODE_ENV)\"\nproduction\n",
                     "$ python -c \"import os; print(len(os.environ['API_KEY']))\"\n40\n",
                     "$ ruby -v\nruby 3.3.0\n"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_box_row_pairing_a_secret_name_with_its_quoted_value_hides_the_value() -> None:
    """node's console.table of an object prints `│ password │ 'X' │` under an (index)/Values
    header: the row's next cell is the value, its quotes are console.table's."""
    rng = random.Random(3185)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(9)) + "#8w"
    top, mid, bottom = "┌──────────┬────────┐", "├──────────┼────────┤", "└──────────┴────────┘"
    text = f"{top}\n│ (index)  │ Values │\n{mid}\n│ user     │ 'bob'  │\n│ password │ '{value}' │\n{bottom}"
    out = redact(text)
    assert value not in out and "[redacted" in out, out
    assert redact(out) == out
    for ordinary in (f"{top}\n│ (index)  │ Values │\n{mid}\n│ password │ 'string' │\n{bottom}",
                     f"{top}\n│ field    │ type   │\n{mid}\n│ password │ varchar(255) │\n{bottom}"):
        assert redact(ordinary) == ordinary, ordinary


def test_crudini_set_and_dasel_v1_put_string_hide_a_secret_keys_value() -> None:
    """crudini --set FILE SECTION KEY X and dasel v1's put string [-f FILE] SELECTOR X: the word
    after a secret-named key or selector is its value; other keys, a get and a select stay."""
    rng = random.Random(3186)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(8)) + "#4q"
    for command in (f"crudini --set /etc/keystone/keystone.conf DEFAULT admin_token {value}",
                    f"crudini --set --existing app.ini db pass '{value}'",
                    f"dasel put string -f config.yaml .db.password {value}",
                    f"dasel put string -f config.yaml -p yaml .db.password {value}",
                    f"dasel put -t string -f config.yaml -s .auth.apiToken {value}"):
        out = redact(command)
        assert value not in out and "[redacted" in out, out
        assert redact(out) == out
    for ordinary in ("crudini --get app.ini db password", "crudini --set app.ini auth token_ttl 3600",
                     "crudini --set app.ini db password_min_length 12",
                     "dasel put string -f config.yaml .db.host db.internal",
                     "dasel -f config.yaml .db.password", "dasel put int -f config.yaml .db.password_min 12"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_secrets_plain_keys_a_sed_pattern_and_a_php_class_name_stay() -> None:
    """kubectl create secret --from-literal=username=app keeps a username, a host and a port (a
    generated value and every other key's value are still hidden); sed's s/PASSWORD=.*/ keeps
    its pattern; var_dump's ["apiToken":"Cfg":private] keeps the class's name."""
    rng = random.Random(3187)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(8)) + "#5r"
    generated = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(24)) + "a1B"
    command = (f"kubectl create secret generic db --from-literal=username=app --from-literal=DB_HOST=db.internal "
               f"--from-literal=password={value} --from-literal=user={generated}")
    out = redact(command)
    assert "username=app " in out and "DB_HOST=db.internal " in out, out
    assert value not in out and generated not in out, out
    out = redact(f"sed -i 's/PASSWORD=.*/PASSWORD={value}/' .env")
    assert "s/PASSWORD=.*/PASSWORD=" in out and value not in out, out
    for command in (f"sed -i 's/PASSWORD=.*/PASSWORD={value}/g' .env", f"sed -i 's|TOKEN=.*|TOKEN={value}|' .env",
                    f"sed -i 's/password: .*/password: {value}/' config.yml"):
        out = redact(command)
        assert value not in out and out.endswith(command[command.index(value) + len(value) :]), out
        assert redact(out) == out
    assert redact("sed -i 's/PASSWORD=.*/PASSWORD=x/' .env") == "sed -i 's/PASSWORD=.*/PASSWORD=x/' .env"
    dump = f'object(Cfg)#1 (1) {{\n  ["apiToken":"Cfg":private]=>\n  string({len(value)}) "{value}"\n}}'
    out = redact(dump)
    assert '["apiToken":"Cfg":private]=>' in out and value not in out, out


def test_more_tools_secret_flags_a_gem_sources_credentials_and_a_querys_hmac() -> None:
    """mycli -p X, rabbitmqadmin -p X, vsce/ovsx publish -p PAT, choco apikey -k/--key X, bundle
    config [set] --local|--global HOST USER:X and a generated &hmac= in a query are hidden; an
    algorithm's name, a variable, other bundle settings and other tools' flags stay."""
    rng = random.Random(3188)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(10)) + "7q"
    digest = "".join(rng.choice("0123456789abcdef") for _ in range(64))
    for text in (f"mycli -h db -u root -p {value} shop", f"rabbitmqadmin -u admin -p {value} list queues",
                 f"npx vsce publish -p {value}", f"ovsx publish ext.vsix -p {value}",
                 f"choco apikey --key {value} --source https://push.chocolatey.org/",
                 f"choco apikey -k {value} -s https://nuget.example.com/",
                 f"bundle config --local gems.contribsys.com ab12cd34:{value}",
                 f"bundle config set --global https://gems.example.com/ ci:{value}"):
        out = redact(text)
        assert value not in out and "[redacted" in out, out
        assert redact(out) == out
    for text in (f"GET /auth/callback?code=4411&hmac={digest}&shop=acme.myshopify.com",
                 f'"GET /apps/proxy?shop=acme.myshopify.com&hmac={digest} HTTP/1.1" 200'):
        out = redact(text)
        assert digest not in out and "[redacted" in out, out
        assert redact(out) == out
    for ordinary in ("https://hooks.example.com/in?hmac=sha256&v=1",
                     'url = base + "?shop=" + shop + "&hmac=" + hmac_value',
                     "bundle config --local path vendor/bundle", "bundle config set --local without development:test",
                     "bundle config --global mirror.https://rubygems.org https://gems.example.com",
                     "git config --global user.email bob@example.com", "gpg --key ABCDEF0123456789 --sign notes.txt",
                     "mycli -h db -u root shop", "rabbitmqadmin -P 15672 list queues", "mysql -h db -u root -p shop"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_teams_webhook_a_restic_password_on_stdin_wpa_passphrase_and_a_sed_yaml_value() -> None:
    """A Teams (Office 365 connector) incoming webhook's key and owner, a password fed to restic
    on stdin, wpa_passphrase SSID X at a line's start and sed's s/password: .*/password: X/ are
    hidden; restic's --stdin data, a placeholder, an image's path and tag and prose stay."""
    rng = random.Random(3189)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(9)) + "#3k"
    key = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    owner, tenant = str(uuid.UUID(int=rng.getrandbits(128))), str(uuid.UUID(int=rng.getrandbits(128)))
    for text, secret in (
            (f"https://acme.webhook.office.com/webhookb2/{owner}@{tenant}/IncomingWebhook/{key}/{owner}", key),
            (f"https://outlook.office.com/webhook/{owner}@{tenant}/IncomingWebhook/{key}/{owner}", key),
            (f"echo '{value}' | restic -r sftp:nas:/srv/restic init", value),
            (f"restic -r /srv/bk snapshots <<< '{value}'", value),
            (f"$ sudo wpa_passphrase HomeNet '{value}'", value),
            (f"sed -i 's/password: .*/password: {value}/' config.yml", value),
            (f"sed -i 's|password: .*|password: {value}|' config.yml", value)):
        out = redact(text)
        assert secret not in out and "[redacted" in out, out
        assert redact(out) == out
    for ordinary in ('echo "hello" | restic backup --stdin --stdin-filename greeting.txt',
                     "sed -i 's/password: changeme/password: ${DB_PASSWORD}/' config.yml",
                     "sed -i 's/password: .*/password: x/' config.yml",
                     "docker pull ghcr.io/acme/password:latest", "see docs/IncomingWebhook/README.md",
                     "run wpa_passphrase SSID then paste the psk line"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_vault_unseal_key_given_as_an_argument_is_hidden() -> None:
    """vault operator unseal [flags] KEY (base64 or hex), at a prompt and in a hook's JSON
    command; prose, a variable and a flag alone stay."""
    rng = random.Random(3190)
    key = base64.b64encode(bytes(rng.randrange(256) for _ in range(33))).decode()
    for text in (f"$ vault operator unseal {key}", f"vault operator unseal -migrate '{key}'",
                 f"input: {json.dumps({'command': f'vault operator unseal {key}'})}\n\noutput:\nSealed: false\n"):
        out = redact(text)
        assert key not in out and "[redacted" in out, out
        assert redact(out) == out
    for ordinary in ("run vault operator unseal three times with different keys",
                     'vault operator unseal "$UNSEAL_KEY_1"', "vault operator unseal -reset"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_value_printf_writes_after_a_secret_named_format_is_hidden() -> None:
    """printf 'NAME=%s\\n' VALUE (into .env, .netrc, .my.cnf), at a prompt and in a hook's JSON
    command (where the format's \\n is an escaped backslash, not a line's end): the argument the
    directive takes is hidden; a variable, a count and a format string in code stay."""
    rng = random.Random(3191)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(9)) + "!6d"
    for command in (f"printf 'DB_PASSWORD=%s\\n' '{value}' >> .env",
                    f'printf "machine %s login %s password %s\\n" api.example.com bob {value} > ~/.netrc',
                    f"printf '[client]\\nuser=%s\\npassword=%s\\n' root '{value}' > ~/.my.cnf"):
        for text in (command, f"input: {json.dumps({'command': command})}\n\noutput:\n\n"):
            out = redact(text)
            assert value not in out and "[redacted" in out, out
            assert redact(out) == out
    for ordinary in ("printf 'DB_PASSWORD=%s\\n' \"$DB_PASSWORD\" >> .env",
                     "printf 'retries=%s token_ttl=%s\\n' 3 3600",
                     'USER_PASSWD = "%s:%s" % (USER, PASSWD)', "log.info('credentials: %s.', source)"):
        assert redact(ordinary) == ordinary, ordinary


def test_a_url_password_that_starts_with_digits_and_a_slash_is_hidden() -> None:
    """user:6/pass@db:3306 is a password (a host with its port follows the @), not host:port/path;
    a package's version after a port's path (cdn:443/npm/pkg@1.2.3/) stays."""
    rng = random.Random(3192)
    value = "".join(rng.choice(string.ascii_letters) for _ in range(9)) + "#2"
    out = redact(f"DATABASE_URL=mysql://root:6/{value}@127.0.0.1:3306/app")
    assert value not in out and "[redacted" in out, out
    assert redact(out) == out
    for ordinary in ("https://cdn.jsdelivr.net:443/npm/pkg@1.2.3/dist/x.js", "https://host:8080/path/@user"):
        assert redact(ordinary) == ordinary, ordinary
