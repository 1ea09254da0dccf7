"""Fake secrets of the right shape, from one seeded RNG (never a real secret, never a fixed
literal that happens to look real): provider prefixes, lengths and alphabets as documented,
Luhn digits computed, DER and JSON structure built, then filled with random bytes."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
BASE32 = string.ascii_uppercase + "234567"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"



class Fake:
    """Secret-shaped strings from one seeded RNG."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def mixed(self, alphabet: str, n: int) -> str:
        """Random text with an upper and a lower case letter and (if the alphabet has them) a digit."""
        want = [str.isupper, str.islower] + ([str.isdigit] if any(c.isdigit() for c in alphabet) else [])
        while True:
            s = self.chars(alphabet, n)
            if all(any(test(c) for c in s) for test in want):
                return s

    def digits(self, n: int) -> str:
        return str(self.rng.randint(1, 9)) + self.chars(string.digits, n - 1)

    def password(self, n: int = 16, symbols: str = "!%^*_+=.-") -> str:
        """A generic password: starts with a letter, has a digit; safe inside URLs and .env."""
        return self.rng.choice(string.ascii_letters) + self.mixed(ALNUM + symbols, n - 1)

    def url_password(self) -> str:
        return self.password(14, "._~-")

    def opaque(self, n: int = 32) -> str:
        """An opaque token with no provider prefix."""
        return self.mixed(ALNUM, n)

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def sha(self, algo: str = "sha256") -> str:
        return hashlib.new(algo, self.rng.randbytes(32)).hexdigest()

    def b64(self, nbytes: int) -> str:
        return base64.b64encode(self.rng.randbytes(nbytes)).decode()

    # -- provider shapes ---------------------------------------------------------------------

    def anthropic(self) -> str:
        return "sk-ant-api03-" + self.mixed(B64URL, 93) + "AA"

    def openai(self) -> str:
        if self.rng.random() < 0.5:
            return "sk-proj-" + self.mixed(B64URL, 120)
        return "sk-" + self.mixed(ALNUM, 20) + "T3Blbk" + "FJ" + self.mixed(ALNUM, 20)

    def stripe(self) -> str:
        return self.rng.choice(["sk_live_", "rk_live_", "sk_test_"]) + self.mixed(ALNUM, 24)

    def github(self) -> str:
        if self.rng.random() < 0.25:
            return "github_pat_" + self.mixed(ALNUM, 22) + "_" + self.mixed(ALNUM, 59)
        return "gh" + self.rng.choice("pousr") + "_" + self.mixed(ALNUM, 36)

    def gitlab(self) -> str:
        return "glpat-" + self.mixed(ALNUM + "_-", 20)

    def npm(self) -> str:
        return "npm_" + self.mixed(ALNUM, 36)

    def slack(self) -> str:
        kind = self.rng.choice(["xoxb", "xoxp"])
        return f"{kind}-{self.digits(12)}-{self.digits(13)}-{self.mixed(ALNUM, 24)}"

    def slack_webhook(self) -> str:
        up = string.ascii_uppercase + string.digits
        return (f"https://hooks.slack.com/services/T{self.chars(up, 8)}/B{self.chars(up, 10)}/"
                f"{self.mixed(ALNUM, 24)}")

    def aws_access_key_id(self) -> str:
        return self.rng.choice(["AKIA", "ASIA"]) + self.chars(BASE32, 16)

    def aws_secret_access_key(self) -> str:
        return self.mixed(B64, 40)

    def google_api_key(self) -> str:
        return "AIza" + self.mixed(B64URL, 35)

    def google_oauth_secret(self) -> str:
        return "GOCSPX-" + self.mixed(B64URL, 28)

    def jwt(self) -> str:
        def part(obj: dict[str, object]) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

        header = part({"alg": "HS256", "typ": "JWT"})
        body = part({"sub": self.digits(8), "name": "Jane Doe", "iat": 1715678467,
                     "exp": 1715682067, "scope": "repo read:user"})
        sig = base64.urlsafe_b64encode(self.rng.randbytes(32)).decode().rstrip("=")
        return f"{header}.{body}.{sig}"

    def pem_body(self, lines: int = 12) -> str:
        raw = base64.b64encode(self.rng.randbytes(48 * lines)).decode()
        return "\n".join(raw[i : i + 64] for i in range(0, len(raw), 64))

    def private_key(self, label: str = "RSA PRIVATE KEY") -> str:
        return f"-----BEGIN {label}-----\n{self.pem_body()}\n-----END {label}-----"

    def ssh_private_key(self) -> str:
        return self.private_key("OPENSSH PRIVATE KEY")

    def huggingface(self) -> str:
        return "hf_" + self.mixed(string.ascii_letters, 34)

    def twilio(self) -> str:
        return "SK" + self.chars(HEX, 32)

    def sendgrid(self) -> str:
        return "SG." + self.mixed(B64URL, 22) + "." + self.mixed(B64URL, 43)

    def mailgun(self) -> str:
        return "key-" + self.chars(HEX, 32)

    def digitalocean(self) -> str:
        return "dop_v1_" + self.chars(HEX, 64)

    def discord(self) -> str:
        user = base64.b64encode(self.digits(18).encode()).decode().rstrip("=")
        return f"{user}.{self.mixed(B64URL, 6)}.{self.mixed(B64URL, 38)}"

    def discord_webhook(self) -> str:
        return f"https://discord.com/api/webhooks/{self.digits(19)}/{self.mixed(B64URL, 68)}"

    def telegram(self) -> str:
        return f"{self.digits(10)}:AA{self.mixed(B64URL, 33)}"

    def shopify(self) -> str:
        return "shpat_" + self.chars(HEX, 32)

    def pypi(self) -> str:
        return "pypi-AgEIcHlwaS5vcmc" + self.mixed(B64URL, 140)

    def dockerhub(self) -> str:
        return "dckr_pat_" + self.mixed(B64URL, 27)

    def azure_storage(self) -> str:
        return self.b64(64)  # an 88-character AccountKey ending in "=="

    def heroku(self) -> str:
        return "HRKU-AA" + self.mixed(B64URL, 58)

    def databricks(self) -> str:
        return "dapi" + self.chars(HEX, 32)

    def age(self) -> str:
        return "AGE-SECRET-KEY-1" + self.chars(BECH32, 58)

    def groq(self) -> str:
        return "gsk_" + self.mixed(ALNUM, 52)

    def xai(self) -> str:
        return "xai-" + self.mixed(ALNUM, 80)

    def grafana(self) -> str:
        return "glsa_" + self.mixed(ALNUM, 32) + "_" + self.chars(HEX, 8)

    def postman(self) -> str:
        return f"PMAK-{self.chars(HEX, 24)}-{self.chars(HEX, 34)}"

    def hashicorp_vault(self) -> str:
        return "hvs." + self.mixed(B64URL, 91)

    def atlassian(self) -> str:
        return "ATATT3" + self.mixed(B64URL, 180) + "=" + self.chars(HEX.upper(), 8)

    def openrouter(self) -> str:
        return "sk-or-v1-" + self.chars(HEX, 64)

    def card(self, first: str = "4", length: int = 16) -> str:
        """A Luhn-valid card number with the given IIN and length."""
        body = first + self.chars(string.digits, length - len(first) - 1)
        return body + str(luhn_digit(body))

    def bad_card(self, first: str = "4", length: int = 16) -> str:
        good = self.card(first, length)
        return good[:-1] + str((int(good[-1]) + 1) % 10)


    # -- new shapes (issue 13) ------------------------------------------------------------------

    def pick(self, options: list[str] | tuple[str, ...]) -> str:
        return self.rng.choice(list(options))

    def memorable(self) -> str:
        """What people type: words, a number, a symbol (Falcon-orange-42!)."""
        a, b = self.rng.sample(WORDS, 2)
        sep = self.pick(["-", "_", ".", ""])
        return f"{a.title()}{sep}{b}{self.rng.randint(10, 9999)}{self.pick(['!', '#', '$', '?', ''])}"

    def pw(self) -> str:
        """A password of some style: random, memorable, or alphanumeric."""
        roll = self.rng.random()
        if roll < 0.4:
            return self.password(self.rng.randint(12, 24))
        if roll < 0.7:
            return self.memorable()
        return self.mixed(ALNUM, self.rng.randint(12, 20))

    def url_unsafe_password(self) -> str:
        """A password holding the characters that break naive URL parsing: / # @ : ? %."""
        core = list(self.mixed(ALNUM, 12))
        for ch in self.rng.sample("/#@:?", 2) + [self.pick("/#@")]:
            core.insert(self.rng.randint(1, len(core) - 1), ch)
        return "".join(core)

    def hex(self, n: int) -> str:
        return self.chars(HEX, n)

    def b64url(self, nbytes: int) -> str:
        return base64.urlsafe_b64encode(self.rng.randbytes(nbytes)).decode().rstrip("=")

    def whsec(self) -> str:
        return "whsec_" + self.mixed(ALNUM, 32)

    def ya29(self) -> str:
        return "ya29." + self.mixed(B64URL, self.rng.randint(120, 200))

    def google_refresh(self) -> str:
        return "1//0" + self.chars(ALNUM, 2) + self.mixed(B64URL, 96)

    def azure_client_secret(self) -> str:
        return self.mixed(ALNUM, 3) + str(self.rng.randint(0, 9)) + "Q~" + self.mixed(ALNUM + "_~.-", 34)

    def sas_sig(self) -> str:
        """The sig of an Azure SAS: base64 of an HMAC-SHA256, URL-encoded."""
        raw = base64.b64encode(self.rng.randbytes(32)).decode()
        return raw.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")

    def twilio_sid(self) -> str:
        return "AC" + self.hex(32)

    def discord_bot(self) -> str:
        user = base64.b64encode(self.digits(self.rng.randint(18, 19)).encode()).decode().rstrip("=")
        return f"{user}.{self.mixed(B64URL, 6)}.{self.mixed(B64URL, self.rng.choice([27, 38]))}"

    def der_key(self, kind: str = "rsa") -> bytes:
        """DER bytes with a real private-key header (the structure names it) and random content."""
        r = self.rng.randbytes
        if kind == "rsa":  # PKCS#1 RSAPrivateKey: SEQUENCE { INTEGER 0, INTEGER n, ... }
            return bytes.fromhex("308204a40201000282010100") + r(1180)
        if kind == "pkcs8":  # PrivateKeyInfo with rsaEncryption
            return bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8308204a40201000282010100") + r(1180)
        if kind == "ec":  # SEC1 ECPrivateKey, P-256
            return (bytes.fromhex("30770201010420") + r(32) + bytes.fromhex("a00a06082a8648ce3d030107a14403420004")
                    + r(64))
        if kind == "ed25519":  # PKCS#8 Ed25519
            return bytes.fromhex("302e020100300506032b657004220420") + r(32)
        if kind == "encrypted":  # EncryptedPrivateKeyInfo, PBES2
            return bytes.fromhex("30820524305606092a864886f70d01050d3049") + r(1300)
        if kind == "openssh":
            return b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none" + r(380)
        raise ValueError(kind)

    def key_body(self, kind: str = "rsa", width: int = 64) -> str:
        raw = base64.b64encode(self.der_key(kind)).decode()
        return "\n".join(raw[i : i + width] for i in range(0, len(raw), width))

    def pgp_body(self) -> str:
        """An armored secret-key packet body (new-format tag 5) and its CRC line."""
        raw = base64.b64encode(b"\xc5\x86" + self.rng.randbytes(1800)).decode()
        lines = [raw[i : i + 64] for i in range(0, len(raw), 64)]
        return "\n".join(lines) + "\n=" + self.chars(B64, 4)


WORDS = ("falcon orange river copper summer winter maple tiger ocean violet silver rocket "
         "purple meadow thunder garden planet coffee dragon window").split()


def luhn_digit(body: str) -> int:
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return (10 - total % 10) % 10


def grouped(number: str, sizes: tuple[int, ...], sep: str) -> str:
    out, pos = [], 0
    for size in sizes:
        out.append(number[pos : pos + size])
        pos += size
    return sep.join(out)

