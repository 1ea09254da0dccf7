"""Escaped text decoded with a map back to where each character came from.

A secret can reach a hook escaped: in a URL's query or a form body (``token%3Dghp_…``,
``ghp%5F…``, doubly as ``%253D``), in HTML a tool printed (``&quot;api_key&quot;``, ``&#112;assword``,
``&#x67;hp_…``) or in a JSON string printed as text (``GITHUB_TOKEN\\u003d…``). Every shape and name
rule of the redactor reads plain text, so :func:`decoded_lines` gives it the text decoded line
for line, and maps what is found there back to the original bytes it came from (the whole
escape, never half of one), where it is replaced.

Only escapes of printable ASCII characters (and tab) are decoded: a secret is ASCII, and a
decoded line break would change which line is which. The name of a password in another language
(``Passwort:``, ``contraseña =``, ``密码：``, ``пароль:``) is read as ``password`` the same way, so every
rule that reads a password's name reads it. Standard library only (the hook path).
"""

from __future__ import annotations

import bisect
import re

TYPE_CHECKING = False  # the hook path: importing typing costs ~2 ms
if TYPE_CHECKING:
    from collections.abc import Callable

# "Password" in the languages a developer is likeliest to write it in (config files, prompts,
# a README pasted in), each read as "password", so the value after it is judged as a password's
# is (placeholders, references and code stay). Latin-script ones as whole words in any case
# (German's Passwort and Norwegian's passord are read by the redactor's own names: "pass…"),
# the others as written, without word boundaries (Chinese and Japanese write none: "数据库密码：…").
_LATIN_WORDS = ("senha", "wachtwoord", "mot de passe", "contraseña", "lösenord", "hasło", "jelszó",
                "şifre", "parolă", "mật khẩu")
_SCRIPT_WORDS = ("пароль", "Пароль", "ПАРОЛЬ", "密码", "密碼", "口令", "パスワード", "비밀번호",
                 "κωδικός", "Κωδικός", "סיסמה", "סיסמא", "كلمة المرور", "كلمة السر", "पासवर्ड",
                 "รหัสผ่าน")
_WORD = (rb"((?<![A-Za-z0-9\x80-\xff])(?i:" + b"|".join(re.escape(w.encode()) for w in _LATIN_WORDS)
         + rb")(?![A-Za-z0-9\x80-\xff])|" + b"|".join(re.escape(w.encode()) for w in _SCRIPT_WORDS) + rb")")
# Whether a text names one, cheaply (it is searched for on every text a hook writes): the ASCII
# words one by one on the lowered copy (~1 % of the redactor's time each; one regex over all the
# words cost it 3x), the others from their first byte outside ASCII, checked back to the word's
# start (the bytes before it).
_ASCII_WORDS = tuple(w.encode() for w in _LATIN_WORDS if w.isascii())


def _tail(word: str) -> bytes:
    raw = word.encode()
    k = next(i for i, c in enumerate(raw) if c > 127)
    head = re.escape(raw[:k])
    return re.escape(raw[k:]) + (rb"(?<=(?i:" + head + rb")" + re.escape(raw[k:]) + rb")" if k else b"")


_OTHER_WORDS = b"|".join(_tail(w) for w in (*_LATIN_WORDS, *_SCRIPT_WORDS) if not w.isascii())
# … and before that search (5 ns a byte: a 32 KB tool output with one "→" in it would pay it),
# the bytes outside ASCII alone are looked at, a few hundred of a long log's thousands
_ASCII = bytes(range(128))
_OTHER_BYTES = b"|".join(sorted({re.escape(w.encode().translate(None, _ASCII))
                                  for w in (*_LATIN_WORDS, *_SCRIPT_WORDS) if not w.isascii()}))
_COMPILED: dict[bytes, re.Pattern[bytes]] = {}


def _rx(pattern: bytes) -> re.Pattern[bytes]:
    """``pattern`` compiled on first use: most texts never need these (~1.7 ms at import, on the
    hook's path)."""
    rx = _COMPILED.get(pattern)
    if rx is None:
        rx = _COMPILED[pattern] = re.compile(pattern)
    return rx


# %XX (and %25XX, a percent-escape escaped again), &#N; &#xH; &name; \uXXXX, and the
# full-width forms of ASCII (U+FF01-FF5E in UTF-8: "password：…", "ＤＢ_ＰＡＳＳ＝…", typed with a
# CJK input method on).
# and a terminal's colour and style codes (ESC [ … m), which a tool's output puts inside a
# line ("\x1b[1mDB_PASSWORD\x1b[0m=…"): read as nothing.
_ESCAPES = (rb"%(?:25)?([0-7][0-9A-Fa-f])|&#([0-9]{1,7});|&#[xX]([0-9A-Fa-f]{1,6});|&([A-Za-z]{2,8});"
            rb"|\\u(00[0-7][0-9A-Fa-f])|\xef(?:\xbc([\x81-\xbf])|\xbd([\x80-\x9e]))|(\x1b\[[0-9;]{0,24}[mK])")
# A word that mixes Latin letters with Cyrillic or Greek ones drawn alike (``раssword`` with a
# Cyrillic р and а, ``tоken``): no word of either language is written so, only a name made not to be
# found. Read with the Latin letters they look like.
_LOOKALIKES = {c: a for a, cs in {
    "a": "аα", "c": "с", "e": "е", "i": "іι", "j": "ј", "k": "κ", "o": "оο", "p": "рρ", "s": "ѕ",
    "t": "τ", "u": "υ", "v": "ν", "x": "хχ", "y": "у", "A": "АΑ", "B": "ВΒ", "C": "С", "E": "ЕΕ",
    "H": "НΗ", "I": "ІΙ", "J": "Ј", "K": "КΚ", "M": "МΜ", "N": "Ν", "O": "ОΟ", "P": "РΡ",
    "S": "Ѕ", "T": "ТΤ", "X": "ХΧ", "Y": "УΥ", "Z": "Ζ"}.items() for c in cs}
_LOOK = b"(?:" + b"|".join(re.escape(c.encode()) for c in _LOOKALIKES) + b")"
_MIXED = (rb"((?<![A-Za-z0-9_])(?:[A-Za-z0-9_]|" + _LOOK + rb")*?(?:[A-Za-z]" + _LOOK + b"|" + _LOOK
          + rb"[A-Za-z])(?:[A-Za-z0-9_]|" + _LOOK + rb")*)")
_LATIN = {c.encode(): a.encode() for c, a in _LOOKALIKES.items()}
_LOOK_RX = re.compile(_LOOK)
_ESCAPES += b"|" + _MIXED
_MIXED_SEARCH = re.compile(rb"[A-Za-z]" + _LOOK + b"|" + _LOOK + rb"[A-Za-z]").search
_ESCAPE = re.compile(_ESCAPES)
_ESCAPE_OR_WORD = _ESCAPES + b"|" + _WORD  # (only for a text that names one: slower)
# HTML's named references for the ASCII characters a secret or its name is written with
# (html.entities would cost the hook an import for a table of 2,000 names).
_NAMED = {
    b"quot": b'"', b"amp": b"&", b"lt": b"<", b"gt": b">", b"apos": b"'", b"equals": b"=",
    b"lowbar": b"_", b"UnderBar": b"_", b"colon": b":", b"sol": b"/", b"num": b"#",
    b"commat": b"@", b"plus": b"+", b"hyphen": b"-", b"dash": b"-", b"period": b".",
    b"dollar": b"$", b"excl": b"!", b"percnt": b"%", b"ast": b"*", b"midast": b"*",
    b"lpar": b"(", b"rpar": b")", b"comma": b",", b"semi": b";", b"quest": b"?",
    b"verbar": b"|", b"vert": b"|", b"bsol": b"\\", b"Hat": b"^", b"grave": b"`",
    b"lsqb": b"[", b"rsqb": b"]", b"lcub": b"{", b"rcub": b"}", b"lbrack": b"[", b"rbrack": b"]",
    b"lbrace": b"{", b"rbrace": b"}", b"tilde": b"~", b"nbsp": b" ", b"Tab": b"\t",
}
# One search per form, each led by its literal (several times faster than the one pattern above
# over a long tool output that holds none). A lead is one byte where it can be: a one-byte `in`
# is memchr, ~80x faster than a two-byte one over a long text (5 MB: 0.05 ms, not 4.5 ms).
_FORMS = (
    (b"%", re.compile(rb"%[0-7][0-9A-Fa-f]").search),
    (b"&", re.compile(rb"&#?[0-9A-Za-z]{1,8};").search),
    (b"\\", re.compile(rb"\\u00[0-7][0-9A-Fa-f]").search),
    (b"\xef", re.compile(rb"\xef(?:\xbc[\x81-\xbf]|\xbd[\x80-\x9e])").search),
    # (a colour code only where it splits a name from its separator or a word: around a word,
    # as coloured output mostly has them, it hides nothing, and reading a 32 KB coloured log
    # twice cost its redaction 3.5x)
    (b"\x1b", re.compile(rb"(?<=[A-Za-z0-9_])\x1b\[[0-9;]{0,24}[mK](?=[=:A-Za-z0-9_])").search),
    *((lead, _MIXED_SEARCH) for lead in (b"\xd0", b"\xd1", b"\xce", b"\xcf")),  # (Cyrillic, Greek)
)
_SPLIT_BEFORE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_SPLIT_AFTER = _SPLIT_BEFORE | frozenset(b"=:")


def _char(m: re.Match[bytes]) -> bytes | None:
    pct, dec, hexa, name, uni, wide, wider, ansi, mixed, *word = m.groups()
    if word and word[0] is not None:
        return b"password"
    if mixed is not None:
        return _LOOK_RX.sub(lambda c: _LATIN[c[0]], mixed)
    if ansi is not None:
        return b""  # (removed: nothing of it is read)
    if name is not None:
        return _NAMED.get(name)
    if wide is not None or wider is not None:  # U+FF01 is "!": its last byte 0x81 less 0x61
        return bytes((wide[0] - 0x60,)) if wide is not None else bytes((wider[0] - 0x20,))
    code = int(pct or uni, 16) if dec is None and hexa is None else int(dec, 10) if dec else int(hexa, 16)
    return bytes((code,)) if 32 <= code < 127 or code == 9 else None


_CACHE: dict[bytes, bytes] = {}  # an escape -> what it decodes to (itself when it is kept)
# What these decode to hides nothing the original does not show: a URL's "&amp;token=" shows
# "token=", an escaped <private> tag is read as one, a space splits nothing. A text whose only
# escapes are these is not read twice (an HTML page or a URL with spaces is common).
_QUIET = frozenset((b"&", b"<", b">", b" "))


def _decoder(loud: list[bool]) -> Callable[[re.Match[bytes]], bytes]:
    def decode(m: re.Match[bytes]) -> bytes:
        raw = m[0]
        out = _CACHE.get(raw)
        if out is None:
            char = _char(m)
            out = raw if char is None else char
            if len(_CACHE) < 4096:
                _CACHE[raw] = out
        if out == raw:
            return raw
        if not out:  # a colour code (see _FORMS): loud only where it splits a name from what follows
            a, b = m.span()
            if a and m.string[a - 1] in _SPLIT_BEFORE and m.string[b : b + 1] and m.string[b] in _SPLIT_AFTER:
                loud[0] = True
            return out
        if out not in _QUIET:
            loud[0] = True
        return out
    return decode


class Decoded:
    """A text with its escapes decoded (``text``: the same lines, each decoded), and the way
    back from a span of ``text`` to the original bytes."""

    def __init__(self, data: bytes, text: bytes, escape: re.Pattern[bytes] = _ESCAPE) -> None:
        self.data = data
        self.text = text
        self._escape = escape  # (what ``text`` was decoded with)
        self._lines: tuple[list[int], list[int]] | None = None  # line starts: text, data
        self._maps: dict[int, tuple[list[int], list[int]]] = {}

    def _tables(self) -> tuple[list[int], list[int]]:
        if self._lines is None:  # built when something was found: the rare case
            ours: list[int] = []
            theirs: list[int] = []
            at = 0
            for line in self.text.split(b"\n"):
                ours.append(at)
                at += len(line) + 1
            at = 0
            for line in self.data.split(b"\n"):
                theirs.append(at)
                at += len(line) + 1
            self._lines = ours, theirs
        return self._lines

    def original(self, s: int, e: int) -> tuple[int, int]:
        """The bytes of the original that ``text[s:e]`` was decoded from (``e > s``)."""
        ours, _ = self._tables()
        i = bisect.bisect_right(ours, s) - 1
        j = bisect.bisect_right(ours, e - 1) - 1
        return self._line_map(i)[0][s - ours[i]], self._line_map(j)[1][e - 1 - ours[j]]

    def _line_map(self, k: int) -> tuple[list[int], list[int]]:
        """For each byte of decoded line ``k`` (and its newline), where it starts and ends in the
        original: built only for a line where something was found."""
        if k in self._maps:
            return self._maps[k]
        at = self._tables()[1][k]
        nl = self.data.find(b"\n", at)
        stop = len(self.data) if nl < 0 else nl
        begins: list[int] = []
        ends: list[int] = []
        pos = at
        for m in self._escape.finditer(self.data, at, stop):  # the same escapes the decoding read
            a, b = m.span()
            out = _char(m)
            if out is None:
                continue  # kept as it was: part of the verbatim run
            begins.extend(range(pos, a))
            ends.extend(range(pos + 1, a + 1))
            begins.extend([a] * len(out))  # (a word read as "password": each of its bytes is all of it)
            ends.extend([b] * len(out))
            pos = b
        begins.extend(range(pos, stop + 1))
        ends.extend(range(pos + 1, stop + 2))
        self._maps[k] = begins, ends
        return begins, ends


def _names_password(data: bytes, low: bytes | None) -> bool:
    """Whether ``data`` may name a password in another language (``_LATIN_WORDS``, ``_SCRIPT_WORDS``)."""
    if not data.isascii() and _rx(_OTHER_BYTES).search(data.translate(None, _ASCII)) \
            and _rx(_OTHER_WORDS).search(data):
        return True
    low = data.lower() if low is None else low
    return any(w in low for w in _ASCII_WORDS)


def decoded_lines(data: bytes, low: bytes | None = None) -> Decoded | None:
    """``data`` with its escapes decoded, line for line; None when it holds none (the common
    case, read with one search per escape form). All of it, not only the lines with an escape:
    a private key's BEGIN line, or a secret's name on the line before, is read with them.
    ``low``: ``data.lower()``, when the caller has it."""
    words = _names_password(data, low)
    if not words and not any(lead in data and search(data) for lead, search in _FORMS):
        return None
    loud = [False]
    escape = _rx(_ESCAPE_OR_WORD) if words else _ESCAPE
    decoded = escape.sub(_decoder(loud), data)
    return Decoded(data, decoded, escape) if loud[0] else None
