"""Identifier words for the search index: the parts of a CamelCase name and the joined form of
a snake_case or kebab-case one, so ``InvalidAccessKeyId`` is found by "access key" and
``--no-verify`` by "noverify" (the tokenizer already splits ``snake_case``, dotted paths and
file names at their punctuation).  Stdlib only: the hook's write path computes it.
"""

from __future__ import annotations

import re

# A word with a second capital (accessKey, InvalidAccessKeyId, HTTPServer; all-caps words
# come out as one part and are skipped).
_CAMEL = re.compile(r"\b[A-Za-z][a-z0-9]*+[A-Z][A-Za-z0-9]*+")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# Words joined by _ or - (snake_case, kebab-case, --no-verify).
_COMPOUND = re.compile(r"\b[A-Za-z0-9]++(?:[_-]++[A-Za-z0-9]++)+")
CAP = 4000  # characters of identifier words per memory
# An IPv4 address: a question asks for "the IP" or "the address", the text only shows it.
_IP = r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])"
_IPV4 = re.compile(_IP)
# A host or node name numbered in a fleet (nas1, web02, db3) as the key of a line that holds an
# address (an inventory's `nas1: { ansible_host: 10.0.20.20 }`, a hosts file's `10.0.20.20
# nas1`; not a command naming one): its name alone is how a later question says it ("the NAS's
# address").  Three letters or more, one or two digits.  A line starts after a line break, also
# inside a JSON string (an Edit's old/new text as the hook records it: `\n`, or the quote).
_KEY_FIRST = re.compile(r"[-+]?[ \t]*+(?:- )?([A-Za-z]{3,}+)\d{1,2}\b")
_KEY_AFTER = re.compile(r"[ \t]++([A-Za-z]{3,}+)\d{1,2}\b")
_ADDRESSES = 64  # addresses looked at per text (a log holds one a line)
_REACH = 120


def camel_parts(word: str) -> list[str]:
    return [p.lower() for p in _PART.findall(word)]


def identifier_words(text: str, cap: int | None = None) -> list[str]:
    """The derived words of ``text``'s identifiers, in order, each once; with ``cap``, stop
    once they fill that many characters (the hook computes this for every tool output)."""
    out: dict[str, None] = {}
    size = 0
    limit = cap if cap is not None else len(text) + 1
    if "." in text and _IPV4.search(text):
        out["ip"] = None
        size += 3
        for i, m in enumerate(_IPV4.finditer(text)):
            if i == _ADDRESSES:
                break
            at = m.start()
            # (a key is near its address: a line is looked at up to _REACH characters back)
            lo = max(0, at - _REACH)
            escaped = text.rfind("\\n", lo, at)  # (its last character ends the break)
            start = max(text.rfind("\n", lo, at), text.rfind('"', lo, at),
                        escaped + 1 if escaped >= 0 else -1) + 1
            if start == 0 and lo > 0:
                continue
            key = _KEY_FIRST.match(text, start, at)
            if key is None and not text[start:at].strip(" \t+-"):
                key = _KEY_AFTER.match(text, m.end())
            if key is None:
                continue
            low = key.group(1).lower()
            # (a name the text says bare is found already)
            if low not in out and not re.search(rf"\b{low}\b", text, re.IGNORECASE):
                out[low] = None
                size += len(low) + 1
        if size > limit:
            return list(out)
    for word in dict.fromkeys(_CAMEL.findall(text)):
        if word.isupper():
            continue
        parts = camel_parts(word)
        if len(parts) > 1:
            for p in parts:
                if p not in out:
                    out[p] = None
                    size += len(p) + 1
        if size > limit:
            return list(out)
    for word in dict.fromkeys(_COMPOUND.findall(text)):
        # str.replace, not a regex: a long tool output holds hundreds of these
        joined = word.replace("_", "").replace("-", "").lower()
        if joined not in out:
            out[joined] = None
            size += len(joined) + 1
            if size > limit:
                break
    return list(out)


def index_text(*fields: str) -> str:
    """What the search index's ``idents`` column holds for a memory with these fields."""
    words = identifier_words("\n".join(f for f in fields if f), cap=CAP)
    text = " ".join(words)
    return text[:CAP].rsplit(" ", 1)[0] if len(text) > CAP else text
