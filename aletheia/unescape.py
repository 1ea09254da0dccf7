"""Escaped text decoded with a map back to where each character came from.

A secret can reach a hook escaped: in a URL's query or a form body (``token%3Dghp_…``,
``ghp%5F…``, doubly as ``%253D``), in HTML a tool printed (``&quot;api_key&quot;``, ``&#112;assword``,
``&#x67;hp_…``) or in a JSON string printed as text (``GITHUB_TOKEN\\u003d…``). Every shape and name
rule of the redactor reads plain text, so :func:`decoded_lines` gives it the text decoded line
for line, and maps what is found there back to the original bytes it came from (the whole
escape, never half of one), where it is replaced.

Only escapes of printable ASCII characters (and tab) are decoded: a secret is ASCII, and a
decoded line break would change which line is which. Standard library only (the hook path).
"""

from __future__ import annotations

import bisect
import re

TYPE_CHECKING = False  # the hook path: importing typing costs ~2 ms
if TYPE_CHECKING:
    from collections.abc import Callable

# %XX (and %25XX, a percent-escape escaped again), &#N; &#xH; &name; \uXXXX, and the
# full-width forms of ASCII (U+FF01-FF5E in UTF-8: "password：…", "ＤＢ_ＰＡＳＳ＝…", typed with a
# CJK input method on).
_ESCAPE = re.compile(
    rb"%(?:25)?([0-7][0-9A-Fa-f])|&#([0-9]{1,7});|&#[xX]([0-9A-Fa-f]{1,6});|&([A-Za-z]{2,8});|\\u(00[0-7][0-9A-Fa-f])"
    rb"|\xef(?:\xbc([\x81-\xbf])|\xbd([\x80-\x9e]))"
)
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
# over a long tool output that holds none).
_FORMS = (
    (b"%", re.compile(rb"%[0-7][0-9A-Fa-f]").search),
    (b"&", re.compile(rb"&#?[0-9A-Za-z]{1,8};").search),
    (b"\\u", re.compile(rb"\\u00[0-7][0-9A-Fa-f]").search),
    (b"\xef", re.compile(rb"\xef(?:\xbc[\x81-\xbf]|\xbd[\x80-\x9e])").search),
)


def _char(m: re.Match[bytes]) -> bytes | None:
    pct, dec, hexa, name, uni, wide, wider = m.groups()
    if name is not None:
        return _NAMED.get(name)
    if wide is not None or wider is not None:  # U+FF01 is "!": its last byte 0x81 less 0x61
        return bytes((wide[0] - 0x60,)) if wide is not None else bytes((wider[0] - 0x20,))
    code = int(pct or uni, 16) if dec is None and hexa is None else int(dec, 10) if dec else int(hexa, 16)
    return bytes((code,)) if 32 <= code < 127 or code == 9 else None


_CACHE: dict[bytes, bytes] = {}  # an escape -> what it decodes to (b"" when it is kept)
# What these decode to hides nothing the original does not show: a URL's "&amp;token=" shows
# "token=", an escaped <private> tag is read as one, a space splits nothing. A text whose only
# escapes are these is not read twice (an HTML page or a URL with spaces is common).
_QUIET = frozenset((b"&", b"<", b">", b" "))


def _decoder(loud: list[bool]) -> Callable[[re.Match[bytes]], bytes]:
    def decode(m: re.Match[bytes]) -> bytes:
        raw = m[0]
        out = _CACHE.get(raw)
        if out is None:
            out = _char(m) or b""
            if len(_CACHE) < 4096:
                _CACHE[raw] = out
        if not out:
            return raw
        if out not in _QUIET:
            loud[0] = True
        return out
    return decode


class Decoded:
    """A text with its escapes decoded (``text``: the same lines, each decoded), and the way
    back from a span of ``text`` to the original bytes."""

    def __init__(self, data: bytes, text: bytes) -> None:
        self.data = data
        self.text = text
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
        for m in _ESCAPE.finditer(self.data, at, stop):  # the same escapes the decoding read
            a, b = m.span()
            if _char(m) is None:
                continue  # kept as it was: part of the verbatim run
            begins.extend(range(pos, a))
            ends.extend(range(pos + 1, a + 1))
            begins.append(a)
            ends.append(b)
            pos = b
        begins.extend(range(pos, stop + 1))
        ends.extend(range(pos + 1, stop + 2))
        self._maps[k] = begins, ends
        return begins, ends


def decoded_lines(data: bytes) -> Decoded | None:
    """``data`` with its escapes decoded, line for line; None when it holds none (the common
    case, read with one search per escape form). All of it, not only the lines with an escape:
    a private key's BEGIN line, or a secret's name on the line before, is read with them."""
    if not any(lead in data and search(data) for lead, search in _FORMS):
        return None
    loud = [False]
    decoded = _ESCAPE.sub(_decoder(loud), data)
    return Decoded(data, decoded) if loud[0] else None
