"""Files a session deleted or renamed: ``rm``, ``git rm``, ``mv``, ``git mv`` in a shell command,
an apply_patch ``*** Delete File:`` / ``*** Move to:``, an editor tool that deletes a file.
What the store knew about such a file (its role, what was read from it) is retired or follows
it to its new path (see ``facts.add_facts``)."""

from __future__ import annotations

import re
import shlex

from aletheia import patches

# Shell words that end one command and start the next.
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})
_GLOB = re.compile(r"[*?\[\]{}$`~]")
DELETE_TOOLS = frozenset({"delete_file", "deletefile", "remove_file", "delete"})


# A here document's opener (``<<EOF``, ``<<-'EOF'``, ``<< "END"``): the lines after it up to its
# delimiter are data (a patch's context lines, a script being written), never commands.
_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([\w.-]+)\2")


def _commands(command: str) -> list[list[str]]:
    out: list[list[str]] = []
    ends: list[tuple[str, bool]] = []  # here documents still open: (delimiter, tabs stripped)
    for line in command.splitlines():
        if ends:
            delimiter, strip = ends[0]
            if (line.lstrip("\t") if strip else line) == delimiter:
                ends.pop(0)
            continue
        ends = [(m.group(3), m.group(1) == "-") for m in _HEREDOC.finditer(line)]
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
            lexer.whitespace_split = True
            words = list(lexer)
        except ValueError:
            continue
        current: list[str] = []
        for word in words:
            if word in _SEPARATORS or set(word) <= set(";&|"):
                if current:
                    out.append(current)
                current = []
            else:
                current.append(word)
        if current:
            out.append(current)
    return out


def _plain(path: str) -> bool:
    """A path the command names as it is (no glob, variable or home to expand)."""
    return bool(path) and not _GLOB.search(path) and path not in (".", "..", "/")


def _operands(words: list[str]) -> list[str] | None:
    """The paths after a command's flags, None when one of them cannot be read as a path."""
    out: list[str] = []
    ended = False
    for word in words:
        if not ended and word == "--":
            ended = True
        elif not ended and word.startswith("-"):
            if word in ("-t", "--target-directory", "-S", "--suffix"):
                return None  # `mv -t dir a b`: not worth reading
        elif _plain(word):
            out.append(word.rstrip("/") if word != "/" else word)
        else:
            return None
    return out


def _moved(sources: list[str], target: str, into: bool) -> list[tuple[str, str | None]]:
    """(old, new) for ``mv``: into a folder when the target ends with ``/`` or several sources
    go there; a file renamed when the target looks like a file name too; otherwise the new path
    is not known (a folder or a file?) and the old one is only gone."""
    if into or len(sources) > 1:
        return [(s, f"{target}/{s.rsplit('/', 1)[-1]}") for s in sources]
    source = sources[0]
    src_ext = "." in source.rsplit("/", 1)[-1].lstrip(".")
    dst_ext = "." in target.rsplit("/", 1)[-1].lstrip(".")
    if src_ext and not dst_ext:
        return [(source, None)]  # `mv src/x.py lib`: lib may be a folder
    return [(source, target)]


def shell_removals(command: str, root: str | None = None) -> list[tuple[str, str | None]]:
    """(old path, new path or None) for each file or folder a shell command deletes or renames:
    ``rm -f a b`` → (a, None), (b, None); ``git mv a b`` → (a, b); ``git rm --cached`` keeps
    the file, so it is not a removal."""
    out: list[tuple[str, str | None]] = []
    here = ""  # the folder a `cd` earlier in the command moved to (relative to where it ran)
    for words in _commands(command):
        while words and (words[0] in ("sudo", "command", "time") or "=" in words[0]):
            words = words[1:]
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        rest = words[1:]
        if program == "cd":
            target = rest[0] if len(rest) == 1 and _plain(rest[0]) else None
            top = (root or "").rstrip("/")
            if target and top and (target.rstrip("/") == top or target.startswith(top + "/")):
                here, target = "", target[len(top):].strip("/") or "."  # `cd /the/project/api`
            if target is None or target.startswith("/") or ".." in target.split("/"):
                return out  # somewhere this command does not say: the paths after it are unknown
            here = f"{here}{target.strip('/')}/" if target not in (".", "./") else here
            continue
        found_before = len(out)
        if program == "git" and rest[:1] in (["rm"], ["mv"]):
            program, rest = rest[0], rest[1:]
            if program == "rm" and ("--cached" in rest or "-n" in rest or "--dry-run" in rest):
                continue
        if program in ("rm", "unlink", "rmdir"):
            found = _operands(rest)
            out.extend((p, None) for p in found or [])
        elif program == "mv":
            raw = [w for w in rest if not w.startswith("-")]
            found = _operands(rest)
            if found and len(found) >= 2:
                out.extend(_moved(found[:-1], found[-1], raw[-1].endswith("/")))
        if here:
            out[found_before:] = [(_under(here, old), _under(here, new) if new else None)
                                  for old, new in out[found_before:]]
    return out


def _under(folder: str, path: str) -> str:
    return path if path.startswith("/") else folder + (path[2:] if path.startswith("./") else path)


def patch_removals(patch: str) -> list[tuple[str, str | None]]:
    """(old, new or None) for an apply_patch text (``aletheia.patches``)."""
    return patches.removals(patch)
