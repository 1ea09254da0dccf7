"""Minimal, byte-preserving edits of JSON-with-comments config files (OpenCode's ``opencode.json``
and ``opencode.jsonc``).

Only the member or array element we add or remove changes; every other byte (comments, key
order, spacing, trailing commas) stays as the user wrote it, and a removal is the exact inverse
of the insertion.  The libraries that read JSONC (json5, commentjson …) re-serialise the whole
document, so this module scans the text itself: strings, ``//`` and ``/* */`` comments, the
six punctuation marks and bare literals are all JSONC has.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from aletheia.errors import InvalidInput

_LITERAL = re.compile(r"[^\s,:\[\]{}/\"]+")


@dataclass
class Node:
    kind: str  # "object" | "array" | "scalar"
    start: int
    end: int  # one past the last character
    members: list[Member] = field(default_factory=list)  # objects
    items: list[Node] = field(default_factory=list)  # arrays


@dataclass
class Member:
    key: str
    key_start: int
    value: Node


class _Scanner:
    def __init__(self, text: str, where: str) -> None:
        self.text = text
        self.pos = 0
        self.where = where

    def fail(self, what: str) -> InvalidInput:
        line = self.text.count("\n", 0, self.pos) + 1
        return InvalidInput(f"{self.where}: {what} at line {line}; fix the file, then run this "
                            "again (nothing was changed)")

    def skip(self) -> None:
        """Whitespace and comments."""
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if c in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                nl = text.find("\n", self.pos)
                self.pos = n if nl < 0 else nl + 1
            elif text.startswith("/*", self.pos):
                close = text.find("*/", self.pos + 2)
                if close < 0:
                    raise self.fail("an unclosed /* comment")
                self.pos = close + 2
            else:
                return

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def string(self) -> str:
        start = self.pos
        i = start + 1
        text = self.text
        while i < len(text):
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if c == '"':
                self.pos = i + 1
                try:
                    value = json.loads(text[start:self.pos])
                except ValueError:
                    raise self.fail("a malformed string") from None
                assert isinstance(value, str)
                return value
            if c == "\n":
                break
            i += 1
        raise self.fail("an unterminated string")

    def value(self) -> Node:
        c = self.peek()
        start = self.pos
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c == '"':
            self.string()
            return Node("scalar", start, self.pos)
        m = _LITERAL.match(self.text, self.pos)
        if not m:
            raise self.fail("a value was expected")
        self.pos = m.end()
        return Node("scalar", start, self.pos)

    def obj(self) -> Node:
        node = Node("object", self.pos, -1)
        self.pos += 1
        while True:
            c = self.peek()
            if c == "}":
                self.pos += 1
                node.end = self.pos
                return node
            if c != '"':
                raise self.fail("a key or } was expected")
            key_start = self.pos
            key = self.string()
            if self.peek() != ":":
                raise self.fail("':' was expected")
            self.pos += 1
            node.members.append(Member(key, key_start, self.value()))
            c = self.peek()
            if c == ",":
                self.pos += 1
            elif c != "}":
                raise self.fail("',' or } was expected")

    def arr(self) -> Node:
        node = Node("array", self.pos, -1)
        self.pos += 1
        while True:
            c = self.peek()
            if c == "]":
                self.pos += 1
                node.end = self.pos
                return node
            node.items.append(self.value())
            c = self.peek()
            if c == ",":
                self.pos += 1
            elif c != "]":
                raise self.fail("',' or ] was expected")


def parse(text: str, where: str = "the config") -> Node:
    """The document's top-level object (an empty or blank text is an error: callers decide)."""
    s = _Scanner(text, where)
    if s.peek() != "{":
        raise s.fail("a JSON object was expected")
    root = s.value()
    if s.peek():
        raise s.fail("text after the top-level object")
    return root


def to_python(text: str, node: Node) -> Any:
    """A node's value (comments and trailing commas dropped)."""
    out: list[str] = []
    s = _Scanner(text, "the config")
    s.pos = node.start
    while s.pos < node.end:
        s.skip()
        if s.pos >= node.end:
            break
        c = text[s.pos]
        if c == '"':
            start = s.pos
            s.string()
            out.append(text[start:s.pos])
        elif c in "{}[]:,":
            if c in "}]" and out and out[-1] == ",":
                out.pop()  # a trailing comma
            out.append(c)
            s.pos += 1
        else:
            m = _LITERAL.match(text, s.pos)
            assert m is not None
            out.append(m.group())
            s.pos = m.end()
    return json.loads("".join(out))


def member(node: Node, key: str) -> Member | None:
    for m in node.members:
        if m.key == key:
            return m
    return None


# -- layout -------------------------------------------------------------------------------------


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    lead = text[line_start:pos]
    return lead if not lead.strip() else re.match(r"[ \t]*", lead).group()  # type: ignore[union-attr]


def indent_unit(text: str) -> str:
    """The file's indentation step (two spaces when it has none)."""
    for line in text.splitlines()[1:]:
        lead = line[: len(line) - len(line.lstrip(" \t"))]
        if lead and line.strip():
            return "\t" if lead.startswith("\t") else " " * len(lead)
    return "  "


def _render(value: Any, unit: str, indent: str, multiline: bool) -> str:
    if not multiline:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    text = json.dumps(value, ensure_ascii=False, indent=unit if unit != "\t" else "\t")
    return text.replace("\n", "\n" + indent)


def _multiline(text: str, node: Node) -> bool:
    return "\n" in text[node.start:node.end] or node.end - node.start <= 2


# -- edits --------------------------------------------------------------------------------------


def add_member(text: str, obj: Node, key: str, value: Any) -> str:
    """Insert ``"key": value`` as the object's last member."""
    unit = indent_unit(text)
    if obj.members:
        last = obj.members[-1]
        multiline = _multiline(text, obj)
        if multiline:
            indent = _line_indent(text, last.key_start)
            rendered = _render(value, unit, indent, True)
            piece = f",\n{indent}{json.dumps(key, ensure_ascii=False)}: {rendered}"
        else:
            piece = f", {json.dumps(key, ensure_ascii=False)}: {_render(value, unit, '', False)}"
        at = last.value.end
        return text[:at] + piece + text[at:]
    outer = _line_indent(text, obj.start)
    inner = outer + unit
    rendered = _render(value, unit, inner, True)
    piece = f"\n{inner}{json.dumps(key, ensure_ascii=False)}: {rendered}\n{outer}"
    return text[: obj.start + 1] + piece + text[obj.end - 1:]


def remove_member(text: str, obj: Node, key: str) -> str:
    """Remove a member together with the separator in front of it (the inverse of
    ``add_member``); an object left empty becomes ``{}``."""
    idx = next((i for i, m in enumerate(obj.members) if m.key == key), None)
    if idx is None:
        return text
    m = obj.members[idx]
    if idx > 0:
        return text[: obj.members[idx - 1].value.end] + text[m.value.end:]
    if len(obj.members) > 1:
        return text[: m.key_start] + text[obj.members[1].key_start:]
    return text[: obj.start + 1] + text[obj.end - 1:]


def add_item(text: str, arr: Node, value: Any) -> str:
    """Append an element to an array (same layout rules as ``add_member``)."""
    unit = indent_unit(text)
    if arr.items:
        last = arr.items[-1]
        if "\n" in text[arr.start:arr.end]:
            indent = _line_indent(text, last.start)
            piece = f",\n{indent}{_render(value, unit, indent, True)}"
        else:
            piece = f", {_render(value, unit, '', False)}"
        return text[: last.end] + piece + text[last.end:]
    return text[: arr.start + 1] + _render(value, unit, "", False) + text[arr.end - 1:]


def remove_item(text: str, arr: Node, index: int) -> str:
    item = arr.items[index]
    if index > 0:
        return text[: arr.items[index - 1].end] + text[item.end:]
    if len(arr.items) > 1:
        return text[: item.start] + text[arr.items[1].start:]
    return text[: arr.start + 1] + text[arr.end - 1:]


def replace_value(text: str, node: Node, value: Any) -> str:
    """Put ``value`` where ``node`` is, laid out on several lines if the old one was."""
    multiline = "\n" in text[node.start:node.end]
    rendered = _render(value, indent_unit(text), _line_indent(text, node.start), multiline)
    return text[: node.start] + rendered + text[node.end:]
