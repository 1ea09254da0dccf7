"""The rule extractor: walks a session in order and turns what it sees into fact drafts
(commands that worked, errors and their fixes, statements, file roles)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from aletheia.changes import (
    REJECTION,
    change_news,
    change_pairs,
    edited_numbers,
    edited_values,
    reported_olds,
    says_number,
    version_successor,
)
from aletheia.extract.commands import (
    COMMAND_PHRASES,
    PROJECT_INSTALL,
    category,
    classify,
    invocation,
    normalize_command,
    program_key,
    ran_key,
    selective_test,
    split_command,
)
from aletheia.extract.errors import (
    OpenError,
    clean_output,
    error_signature,
    fix_text,
    outcome,
    test_run_in,
)
from aletheia.extract.files import (
    config_facts,
    content_of,
    describe_file,
    edit_change,
    test_target,
)
from aletheia.extract.items import Item, cap, windows
from aletheia.extract.knowledge import (
    Finding,
    command_versions,
    dependency_finding,
    edited_dependencies,
    edited_versions,
    env_keys,
    env_template,
    file_findings,
    flake_findings,
    install_command,
    install_findings,
    mix_findings,
    package_json_fragment,
    removed_finding,
    removed_setting,
    source_language,
    version_findings,
)
from aletheia.extract.named import named_tools
from aletheia.extract.removals import DELETE_TOOLS, patch_removals, shell_removals
from aletheia.extract.said import answer_commands, answer_dependencies, said_roles
from aletheia.extract.statements import APPROVAL, Statement, sentence_facts
from aletheia.extract.tools import ToolCall, parse_tool
from aletheia.toolkinds import IN_USE, said_key
from aletheia.vocab import RAN_SLOT, SUMMARY_KINDS

FACT_TEXT_CAP = 420


@dataclass
class Draft:
    """A fact before the fact store sees it, with the slot it fills and its evidence."""

    kind: str
    text: str
    source_ids: list[str]
    subject: str | None = None
    value: str | None = None
    stated: bool = False
    confirmed: int = 0
    replaces: list[str] = field(default_factory=list)
    at: int = 0  # the newest memory behind it (epoch ms)
    ends: bool = False  # after it the slot holds nothing current (see ``facts.FactIn.ends``)
    removes_file: str | None = None  # see ``facts.FactIn.removes_file``
    moved_to: str | None = None



@dataclass
class FileEdit:
    path: str
    old: str
    new: str
    item_id: str
    at: int


@dataclass
class NumberEdit:
    """A line of a project file whose numbers an edit changed (``changes.edited_numbers``)."""

    path: str
    key: str  # the line with its numbers masked: the setting, in any syntax
    line: str  # the new line
    old: list[str]
    new: list[str]
    item_id: str
    at: int


@dataclass
class FileRemoval:
    """A file (or folder) the session deleted, or renamed to ``new``."""

    path: str
    new: str | None
    item_id: str
    at: int


@dataclass
class CommandRun:
    command: str
    category: str | None
    result: str  # pass / ok / fail
    item_id: str



class RuleExtractor:
    """Walks a session in order.  ``prime`` replays items already extracted by an earlier job
    (state only: an error seen then can be fixed now); ``feed`` takes one window;
    ``finish`` returns the drafts, merged by text, in order of first evidence."""

    def __init__(self, project: str) -> None:
        self.root = project if project.startswith("/") else None
        self._drafts: dict[str, Draft] = {}
        self._emit_enabled = True
        self.open_errors: dict[str, OpenError] = {}
        self.fixed: list[OpenError] = []
        self.commands: list[CommandRun] = []
        self.changed: dict[str, str] = {}  # path → first item id that changed it
        self.read: dict[str, str] = {}
        self.roles: dict[str, tuple[str, str]] = {}  # path → (description, item id)
        self.prompts: list[Item] = []
        self.responses: list[Item] = []
        self.items = 0
        self.commits: list[str] = []
        self.fed = False
        self._now = 0  # the time of the item being walked
        self._proposals: list[str] = []  # draft keys of the last answer's recommendations
        self._recommended: list[str] = []  # … of which it only recommended (turned down by a "no")
        self.contents: dict[str, str] = {}  # path → the whole file as last read or written
        self.edits: list[FileEdit] = []  # edits of files this session never saw whole
        self.numbers: list[NumberEdit] = []  # lines whose numbers an edit changed, in order
        self.removals: list[FileRemoval] = []  # files deleted or renamed, in order
        self.gone: set[str] = set()  # removed and not written again since
        self.dropped: set[str] = set()  # values this session's change statements replaced

    # public ---------------------------------------------------------------------------
    def prime(self, items: Iterable[Item]) -> None:
        self._emit_enabled = False
        try:
            for item in items:
                self._take(item)
        finally:
            self._emit_enabled = True

    def feed(self, window: Iterable[Item]) -> None:
        self.fed = True
        for item in window:
            self._take(item)

    def finish(self) -> list[Draft]:
        if self.fed:  # facts about the whole session only when rules extracted some of it
            self._pair_tests()
            self._link_numbers()
        return [
            Draft(d.kind, cap(d.text, FACT_TEXT_CAP), d.source_ids, d.subject, d.value, d.stated,
                  d.confirmed, d.replaces, d.at, d.ends)
            for d in self._drafts.values()
        ]

    def rel(self, path: str) -> str:
        if self.root and path.startswith(self.root.rstrip("/") + "/"):
            return path[len(self.root.rstrip("/")) + 1:]
        return path[2:] if path.startswith("./") else path

    def in_project(self, path: str) -> bool:
        rel = self.rel(path)
        return not rel.startswith(("/", "..", "~")) and "site-packages" not in rel

    # internals --------------------------------------------------------------------------
    def _emit(self, kind: str, text: str, source_ids: Iterable[str], *,
              subject: str | None = None, value: str | None = None, stated: bool = False,
              confirmed: int = 0, replaces: Iterable[str] = (), ends: bool = False) -> str | None:
        if not self._emit_enabled:
            return None
        if self.root:
            # Facts outlive checkouts: paths inside the project are said relative to it.
            text = text.replace(self.root.rstrip("/") + "/", "")
        key = text.casefold()
        draft = self._drafts.get(key)
        if draft is None:
            draft = self._drafts[key] = Draft(kind, text, list(dict.fromkeys(source_ids)),
                                              subject, value)
        else:
            draft.source_ids.extend(s for s in source_ids if s not in draft.source_ids)
        draft.stated = draft.stated or stated
        draft.confirmed += confirmed
        draft.replaces.extend(r for r in replaces if r not in draft.replaces)
        draft.at = max(draft.at, self._now)
        draft.ends = draft.ends or ends
        return key

    def _found(self, findings: Iterable[Finding], source_ids: list[str]) -> None:
        for f in findings:
            self._emit(f.kind, f.text, source_ids, subject=f.subject, value=f.value,
                       confirmed=f.confirmed, ends=f.ends)

    def _statement(self, s: Statement, item_id: str) -> str | None:
        for old in s.replaces:
            # What a change drops is recorded on its own (stored as history, never current):
            # it retires what still names the old value, and tells the block what is outdated.
            # "`Jest` was replaced by `Vitest`.": what the change chose (a value chosen again later
            # is current again, ``context.outdated``)
            new = dict(change_pairs(s.sentence)).get(old) or version_successor(old, s.text)
            # a tool said by its short form ("no more influx") retires the tool's own fact too
            key = said_key(old.strip("`"))
            self._emit("decision", f"`{old}` was replaced{f' by `{new}`' if new else ''}.", [item_id],
                       subject=f"replaced:{old.lower()}", value="(replaced)", stated=s.stated,
                       replaces=[old, key] if key and key != old.lower() else [old], ends=True)
        if s.runtime:
            subject, value = s.runtime
            self._emit("stack", f"Runtime: {value} (the user said).", [item_id], subject=subject,
                       value=value, stated=s.stated)
        if not s.text:
            return None  # the statement only dropped something ("X is gone")
        return self._emit(s.kind, s.text, [item_id], subject=s.subject, value=s.value,
                          stated=s.stated, replaces=s.replaces)

    def _take(self, item: Item) -> None:
        self.items += 1
        self._now = max(self._now, item.created_at)
        if item.kind in SUMMARY_KINDS:
            return
        if item.kind == "tool_event":
            call = parse_tool(item)
            if call is not None:
                self._tool(call)
            return
        user = item.kind in ("prompt", "note")
        if item.kind == "prompt":
            self.prompts.append(item)
        elif item.kind == "response":
            self.responses.append(item)
        elif not user:
            return
        if item.kind == "prompt" and self._recommended and REJECTION.search(item.narrative or item.title):
            # "No, keep Jest for now": what the last answer only recommended is no choice (a
            # recommendation seen in another item too stays: something else said it).
            for key in self._recommended:
                draft = self._drafts.get(key)
                if draft is not None and not draft.stated and len(draft.source_ids) == 1:
                    del self._drafts[key]
            self._recommended = self._proposals = []
        if item.kind == "prompt" and self._proposals and APPROVAL.search(item.narrative or item.title):
            # "Yes, do that": what the last answer recommended is now the user's choice too.
            for key in self._proposals:
                if key in self._drafts:
                    self._drafts[key].stated = True
                    self._drafts[key].source_ids.append(item.id)
                    self._drafts[key].at = max(self._drafts[key].at, self._now)
        statements = sentence_facts(item, user)
        keys = [(s, self._statement(s, item.id)) for s in statements]
        from aletheia.extract.updates import tool_now_drafts  # (updates builds on this module)

        for d in tool_now_drafts(item.narrative or item.title, item.id, stated=user, at=self._now):
            # "we switched the unit tests over to Vitest": the tool the project used before goes
            self._emit(d.kind, d.text, d.source_ids, subject=d.subject, value=d.value, stated=d.stated, ends=True)
        if item.kind == "response":
            self._proposals = [k for s, k in keys if k and (s.recommends or s.kind == "decision")]
            self._recommended = [k for s, k in keys if k and s.recommends]
            for command, cat in answer_commands(item.narrative or item.title):
                self._how_to_run(command, cat, command_text(command, cat), item.id)
            # The packages an answer lists as the project's ("runtime deps: …"), as an install of
            # them would say.
            self._found((dependency_finding(name, dev)
                         for name, dev in answer_dependencies(item.narrative or item.title)), [item.id])
            for path, about in said_roles(item.narrative or item.title):
                # What the answer says a file is for, when the file's own words are not known
                # (a session of talk alone never reads it).
                rel = self.rel(path)
                if self.in_project(rel) and rel not in self.roles and rel not in self.gone:
                    self.roles[rel] = (about, item.id)
                    self._emit("file_role", f"`{rel}` — {about}", [item.id])
            said = {o.lower() for s in statements for o in s.replaces}
            news = change_news(item.narrative or item.title)
            for old in reported_olds(item.narrative or item.title):
                self.dropped.add(old.lower())
                if old.lower() not in said:
                    # The answer reports a change the prompt did not name ("Jobs moved from
                    # Sidekiq to GoodJob" after "use GoodJob for the jobs"): the old value is
                    # recorded as replaced, no decision is made of the answer's words.
                    new = news.get(old.lower()) or version_successor(old, item.narrative or item.title)
                    self._emit("decision", f"`{old}` was replaced{f' by `{new}`' if new else ''}.", [item.id],
                               subject=f"replaced:{old.lower()}", value="(replaced)", replaces=[old],
                               ends=True)
        elif item.kind == "prompt":
            self._proposals = self._recommended = []
            # A command the user writes for a purpose ("run the tests with `pytest -q -x`") is how
            # the project runs that, in the user's own words: a session of talk alone (or one
            # whose tool calls never ran it) knows the project's commands only this way.
            for command, cat in answer_commands(item.narrative or item.title):
                self._how_to_run(command, cat, command_text(command, cat), item.id, stated=True)
        self.dropped.update(o.lower() for s in statements for o in s.replaces)
        for key, name, label in named_tools(item.narrative or item.title):
            if key in self.dropped or name.lower() in self.dropped or \
                    any(said_key(d) == key for d in self.dropped):
                continue  # this session set it aside ("zap pulls in a pile …; switch from zap")
            # The tools the talk names as in use (the stack of a store that never saw a manifest):
            # one fact per tool, its evidence the sessions naming it and whether the user did.
            # (The slot's value is its own, "celery (in use)": the bare name would read as a
            # current choice wherever values are compared, and one value for all would make a
            # change that retires one tool retire them all.)
            self._emit("stack", f"Uses {name} ({label}).", [item.id], subject=f"uses:{key}",
                       value=f"{key} {IN_USE}", stated=user)

    def _removed(self, call: ToolCall) -> set[str]:
        """Files the call deleted or renamed (recorded while priming too: retiring what the
        store knows about them is idempotent); the paths it deleted."""
        found: list[tuple[str, str | None]] = []
        if call.is_shell and outcome(call) != "fail":
            found = shell_removals(call.command, self.root)
            if "*** Begin Patch" in call.command:  # `apply_patch <<'EOF'` run as a command
                found += patch_removals(call.command)
        elif call.name == "apply_patch" and not call.failed:
            data = call.input
            patch = data.get("patch") or data.get("input") if isinstance(data, dict) else data
            found = patch_removals(patch) if isinstance(patch, str) else []
        elif call.name in DELETE_TOOLS and not call.failed:
            found = [(p, None) for p in call.paths]
        for old, new in found:
            if not self.in_project(old):
                continue
            rel = self.rel(old)
            target = self.rel(new) if new is not None and self.in_project(new) else None
            self.removals.append(FileRemoval(rel, target, call.item.id, self._now))
            self.gone.add(rel)
            if target:
                self.gone.discard(target)
        return {self.rel(old) for old, new in found if new is None and self.in_project(old)}

    def _tool(self, call: ToolCall) -> None:
        deleted = self._removed(call)
        if call.is_shell:
            self._shell(call)
        elif call.is_edit:
            change = edit_change(call)
            for path in call.paths:
                if not self.in_project(path):
                    continue
                rel = self.rel(path)
                if rel in deleted:
                    continue  # the patch deleted it
                self.gone.discard(rel)  # written again
                self.changed.setdefault(rel, call.item.id)
                lang = source_language(rel)
                if lang is not None:
                    self._found([lang], [call.item.id])
                for err in self.open_errors.values():
                    err.edits.append((rel, change))
                    err.source_ids.append(call.item.id)
                self._describe(rel, call)
        elif call.is_read:
            for path in call.paths:
                if self.in_project(path):
                    rel = self.rel(path)
                    self.read.setdefault(rel, call.item.id)
                    self._describe(rel, call)

    def _edited(self, rel: str, call: ToolCall) -> None:
        """An edit shows the old and new text only: applied to the file as this session last
        saw it, it gives the whole new file (a changed Makefile recipe, a bumped version);
        otherwise the new lines alone may still name a make target or a version."""
        data = call.input if isinstance(call.input, dict) else {}
        old = data.get("old_string", data.get("old_str"))
        new = data.get("new_string", data.get("new_str"))
        if not isinstance(new, str):
            return
        if isinstance(old, str):
            for key, line, was_numbers, now_numbers in edited_numbers(rel, old, new):
                self.numbers.append(NumberEdit(rel, key, line, was_numbers, now_numbers, call.item.id, self._now))
            said = "\n".join(i.narrative or i.title for i in (*self.prompts[-3:], *self.responses[-3:]))
            for key, was, now in edited_values(rel, old, new, said):
                # A value only the diff shows changed (`jwt_algorithm: str = "HS256"` → "RS256"):
                # recorded as replaced, like a change a prompt states.
                self._emit("decision", f"`{was}` was replaced by `{now}` (`{key}` in `{rel}`).", [call.item.id],
                           subject=f"replaced:{was.lower()}", value="(replaced)", replaces=[was], ends=True)
            # A dependency taken out of a manifest is removed as `pip uninstall` would say.
            self._found((removed_finding(n) for n in edited_dependencies(rel, old, new)), [call.item.id])
            # A version the edit bumps is the current one of its slot (kotlin 2.0.0 → 2.0.21).
            self._found(edited_versions(rel, old, new), [call.item.id])
            if env_template(rel):  # so is a setting taken out of `.env.example`
                kept = set(env_keys(new))
                self._found((removed_setting(rel, k) for k in env_keys(old) if k not in kept), [call.item.id])
        known = self.contents.get(rel)
        if known is not None and isinstance(old, str) and old and old in known:
            whole = known.replace(old, new) if data.get("replace_all") else known.replace(old, new, 1)
            self.contents[rel] = whole
            self._found(file_findings(rel, whole), [call.item.id])
            return
        if rel.rsplit("/", 1)[-1] == "package.json":
            self._found(package_json_fragment(rel, new), [call.item.id])
        elif rel.rsplit("/", 1)[-1] == "mix.exs":
            self._found(mix_findings(rel, new), [call.item.id])
        elif rel.rsplit("/", 1)[-1] == "flake.nix":  # an input's lines say all there is of it
            self._found(flake_findings(rel, new), [call.item.id])
        else:
            self._found((f for f in file_findings(rel, new)
                         if f.subject and f.subject.startswith(("make:", "runtime:", "env:"))), [call.item.id])
        if isinstance(old, str) and old.strip():
            # Facts an earlier session drew from this file may quote the old text.
            self.edits.append(FileEdit(rel, old, new, call.item.id, self._now))

    def _describe(self, rel: str, call: ToolCall) -> None:
        if call.is_edit and call.name not in ("write", "write_file", "create_file"):
            self._edited(rel, call)
            return
        content = content_of(call)
        if not content.strip():
            return
        whole = not (isinstance(call.input, dict) and ("offset" in call.input or "limit" in call.input))
        if whole:
            self.contents[rel] = content
        for kind, text in config_facts(rel, content):
            self._emit(kind, text, [call.item.id])
        self._found(file_findings(rel, content), [call.item.id])
        if rel in self.roles:
            return
        about = describe_file(rel, content)
        if about:
            self.roles[rel] = (about, call.item.id)
            self._emit("file_role", f"`{rel}` — {about}", [call.item.id])

    def _shell(self, call: ToolCall) -> None:
        whole = normalize_command(call.command, self.root)
        if not whole:
            return
        result = outcome(call)
        # (each part without its own plumbing: ``lint 2>&1 | tail -1 && test | tail -1``)
        parts = [normalize_command(p) or p for p in split_command(whole)]
        cats = [category(p) for p in parts]
        ran_tests = test_run_in(parts, cats, call.output)
        if ran_tests is not None:
            cats[ran_tests] = "test"
        for part, cat in zip(parts, cats, strict=True):
            self.commands.append(CommandRun(part, cat, result, call.item.id))
        if result == "fail":
            # In ``a && b`` the part that failed is the last one that is a real command.
            failing = next((p for p, c in zip(reversed(parts), reversed(cats), strict=True) if c), parts[-1])
            self._failed(failing, call)
            return
        for part, cat in zip(parts, cats, strict=True):
            self._succeeded(part, call, cat)
        self._found(version_findings(whole, clean_output(call.output)), [call.item.id])
        self._found(command_versions(whole, clean_output(call.output)), [call.item.id])

    def _failed(self, command: str, call: ToolCall) -> None:
        signature, tests = error_signature(call.output)
        key = program_key(command)
        current = self.open_errors.get(key)
        if current is not None:
            same = current.signature == signature or (set(current.tests) & set(tests))
            if not same and (not current.tests or not set(current.tests) & set(tests)):
                # A different failure now: the earlier one is gone (fixed by what came between).
                if current.edits or current.fix_commands:
                    current.resolved_by = command
                    current.source_ids.append(call.item.id)
                    self._fixed(current, also_failed=True)
                self.open_errors[key] = OpenError(command, key, signature, tests, [call.item.id])
            else:
                current.source_ids.append(call.item.id)
            return
        self.open_errors[key] = OpenError(command, key, signature, tests, [call.item.id])

    def _succeeded(self, command: str, call: ToolCall, cat: str | None = None) -> None:
        cat = cat or category(command)
        key = program_key(command)
        err = self.open_errors.pop(key, None)
        if err is not None:
            err.resolved_by = command
            err.source_ids.append(call.item.id)
            self._fixed(err)
        elif cat == "setup":
            for other in self.open_errors.values():
                other.fix_commands.append(command)
                other.source_ids.append(call.item.id)
        if cat == "vcs" and command.startswith("git commit"):
            m = re.search(r"-m\s+(?:\"([^\"]+)\"|'([^']+)')", command)
            if m and not self.commits:
                self.commits.append(m.group(1) or m.group(2))
                self._emit("convention", f"Commit message style: `{cap(m.group(1) or m.group(2), 100)}`.",
                           [call.item.id])
        self._command_fact(command, cat, call)

    def _command_fact(self, command: str, cat: str | None, call: ToolCall) -> None:
        self._found(install_findings(command), [call.item.id])
        if cat is None:
            self._ran(command, call.item.id)
            return
        if cat == "vcs":
            return
        text = command_text(command, cat)
        if cat == "run":
            first = next((line.strip() for line in clean_output(call.output).splitlines() if line.strip()), "")
            shown = f" (prints `{first}`)" if first and len(first) <= 60 else ""
            text = f"Run with `{command}`{shown}."
        self._how_to_run(command, cat, text, call.item.id)
        m = re.search(r"platform \S+ -- Python (\d+\.\d+(?:\.\d+)?), pytest-(\d+\.\d+(?:\.\d+)?)", call.output)
        if m:
            self._emit("fact", f"Tests run on Python {m.group(1)} with pytest {m.group(2)}.", [call.item.id])

    def _ran(self, command: str, item_id: str) -> None:
        """A command that worked although no word of it says what it does (``rebar3 dialyzer``,
        ``butler status …``): its program and subcommand are a slot, so the form run last is the
        current one, and each clean run confirms it (the block lists those run clean more than
        once: a habit, not a probe)."""
        key = ran_key(command)
        if key is None:
            return
        text = (f"Show the installed version with `{command}`." if key.endswith(" --version")
                else f"Ran clean: `{command}`.")
        # (a fact seen, not a command of a named purpose: the block lists it with the commands)
        self._emit("fact", text, [item_id], subject=f"{RAN_SLOT}{key}", value=command, confirmed=1)

    def _how_to_run(self, command: str, cat: str, text: str | None, item_id: str, *,
                    stated: bool = False) -> None:
        """How the project does ``cat``, from a command that worked or one an answer names for a
        purpose (confirmed once either way: the assistant's answer reports what it ran), or one
        the user wrote for it (``stated``: said, not seen to run)."""
        if cat in ("test", "e2e") and selective_test(command):
            return  # a run of one test is not how to run the tests
        if text:
            self._emit("command", text, [item_id], subject=f"command:{command_slot(command, cat)}",
                       value=command, confirmed=0 if stated else 1, stated=stated)

    def _fixed(self, err: OpenError, *, also_failed: bool = False) -> None:
        self.fixed.append(err)
        text = fix_text(err, also_failed=also_failed)
        self._emit("error_fix", text, err.source_ids)

    def _link_numbers(self) -> None:
        """A statement of this session that says a number an edit of it set or replaced ("reminders
        two days ahead", then `(Duration/ofHours 24)` → `48`) is about that line: it fills the
        line's slot (``set:<line with its numbers masked>``) with the value the session left, so
        a later edit of the line alone supersedes it (``updates.number_drafts``)."""
        if not self.numbers:
            return
        final: dict[str, NumberEdit] = {}
        for edit in self.numbers:
            final[edit.key] = edit
        for draft in self._drafts.values():
            if draft.subject or draft.kind not in ("decision", "convention") or draft.ends:
                continue
            keys = list(dict.fromkeys(e.key for e in self.numbers
                                      if any(says_number(draft.text, n) for n in (*e.old, *e.new))))
            if len(keys) > 1:  # more than one line: the one whose words the statement shares
                words = set(re.findall(r"[a-z]{3,}", draft.text.lower()))
                keys = [k for k in keys if words & set(re.findall(r"[a-z]{3,}", k.lower()))]
            if len(keys) == 1:
                draft.subject, draft.value = f"set:{keys[0]}", " ".join(final[keys[0]].new)

    def _pair_tests(self) -> None:
        touched = [p for p in dict.fromkeys([*self.changed, *self.read]) if p not in self.gone]
        by_stem: dict[str, list[str]] = {}
        for path in touched:
            if test_target(path) is None:
                name = path.rsplit("/", 1)[-1]
                by_stem.setdefault(name.rsplit(".", 1)[0], []).append(path)
        for path in touched:
            target = test_target(path)
            if target and target in by_stem:
                for module in by_stem[target][:1]:
                    sources = [self.changed.get(path) or self.read[path],
                               self.changed.get(module) or self.read[module]]
                    self._emit("file_role", f"`{path}` holds the tests for `{module}`.", sources)
        # A src layout holds a package (src/<name>/…py); src/app, src/lib of a web app do not say so.
        src = [p for p in touched if p.startswith("src/") and p.count("/") >= 2 and p.endswith(".py")]
        if src:
            source = self.changed.get(src[0]) or self.read[src[0]]
            self._emit("convention", f"The code uses a src layout (`src/{src[0].split('/')[1]}/`).",
                       [source])



def extract_rules(
    project: str, new_items: Sequence[Item], *, context: Sequence[Item] = ()
) -> tuple[list[Draft], RuleExtractor]:
    """Rule facts for ``new_items`` (cut into windows), with ``context`` (earlier items of
    the same session) replayed first so fixes can refer to errors seen before."""
    extractor = RuleExtractor(project)
    extractor.prime(context)
    for window in windows(new_items):
        extractor.feed(window)
    return extractor.finish(), extractor


def command_text(command: str, cat: str) -> str | None:
    """What a command that worked becomes: "Run the tests with `…`." (None: not worth a fact,
    such as a package added, which the stack says)."""
    if cat == "format":
        verb = "Check formatting" if re.search(r"\s--(?:check|diff)\b|\s-l\b|\scheck$", " " + command) else "Format"
        return f"{verb} with `{command}`."
    if cat in COMMAND_PHRASES:
        return COMMAND_PHRASES[cat].format(cmd=command)
    if cat == "setup":
        if PROJECT_INSTALL.search(command):
            return f"Install the project for development with `{command}`."
        parsed = install_command(command)
        if parsed is None or parsed[1] not in ("add", "remove"):
            return f"Set up with `{command}`."
    if cat == "run":
        return f"Run with `{command}`."
    return None


def command_slot(command: str, cat: str) -> str:
    """The slot a command fills: what it does (``pytest -q``, ``make test`` and ``./gradlew test``
    all fill ``test``), with the workspace part it is for (``test@apps/api``); the project's
    install is ``setup``, any other set-up step is named by its program (``setup:playwright``),
    services started by name are named (``services:db``)."""
    _, workspace = classify(command)
    slot = cat
    if cat == "setup" and not PROJECT_INSTALL.search(command):
        inv = invocation(command)
        slot = f"setup:{inv.program}" if inv else cat
    elif cat == "apply":  # each machine's or tool's own (``darwin-rebuild``, ``nixos-rebuild``)
        inv = invocation(command)
        slot = f"apply:{inv.program}" if inv else cat
    elif cat == "services":
        # ``docker compose up -d db`` and ``… up -d redis`` start different things: one slot each
        inv = invocation(command)
        names = sorted(w for w in (inv.words[1:] if inv else []) if not w.startswith("-") and "=" not in w)
        slot = f"services:{'+'.join(names)}" if names else cat
    return f"{slot}@{workspace}" if workspace else slot
