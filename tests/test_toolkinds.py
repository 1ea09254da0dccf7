"""The kinds of tool the vocabulary knows beyond the web stack (UI toolkits, dependency
injection, C++ test frameworks, game engines …), and two-word names read as one tool."""

from __future__ import annotations

import sqlite3

from aletheia import context, recall, store
from aletheia.extract.named import named_tools
from aletheia.store import MemoryIn
from aletheia.toolkinds import TOOLS, asked_labels, label_of, phrases

P = "/home/dev/fieldnotes"
T = 1_800_000_000_000
DAY = 86_400_000


def labelled(text: str) -> list[tuple[str, str]]:
    return [(name, label) for _, name, label in named_tools(text)]


def test_the_new_kinds_are_known_by_their_tools() -> None:
    assert labelled("The settings screen is built with Jetpack Compose and Hilt injects the "
                    "view models.") == [("Jetpack Compose", "UI toolkit"), ("Hilt", "DI")]
    assert labelled("Unit tests use Catch2 and CTest runs them; the viewer is Qt 6.") == [
        ("Catch2", "tests"), ("CTest", "tests"), ("Qt", "UI toolkit")]
    assert labelled("The server is SvelteKit on Postgres.") == [("SvelteKit", "web"),
                                                              ("Postgres", "database")]
    assert labelled("The level editor runs in Godot; Koin wires the Android services.") == [
        ("Godot", "game engine"), ("Koin", "DI")]
    # docker compose keeps what it was: docker is the container tool.
    assert labelled("We start the stack with docker compose up.") == [("docker", "containers")]
    # lower case, two ordinary words are no tool ("the core data model")
    assert labelled("We moved the core data model into its own module.") == []
    assert {TOOLS[k] for k in ("gtest", "googletest", "doctest", "swiftui", "gtk", "dagger")} == {
        "tests", "UI toolkit", "DI"}
    assert label_of("hilt-android") == "DI" and label_of("catch2") == "tests"


def test_a_two_word_name_is_one_tool() -> None:
    text = "Jetpack Compose, then React Native"
    assert [(text[a:b], key) for a, b, key in phrases(text)] == [
        ("Jetpack Compose", "jetpack"), ("React Native", "reactnative")]
    assert TOOLS["jetpack"] == "UI toolkit" and TOOLS["compose"] == "containers"


def test_questions_for_the_new_kinds() -> None:
    assert "UI toolkit" in asked_labels("which ui toolkit do we use".split())
    assert "DI" in asked_labels("what do we use for dependency injection".split())
    assert asked_labels("which game engine is it".split()) == {"game engine"}
    assert "tests" in asked_labels("which test framework for the C++ code".split())
    assert "build" in asked_labels("what builds the project".split())


def _said(conn: sqlite3.Connection, text: str, kind: str, session: str, at: int) -> None:
    store.write_memory(conn, MemoryIn(project=P, kind=kind, title=text[:80], narrative=text,
                                      created_at=at, session_id=session))


def test_a_prompt_naming_the_kind_gets_the_tool(conn: sqlite3.Connection) -> None:
    from aletheia.tasks.compress import JobRunner, drain

    # Talk only: the sessions name the app's UI toolkit and its dependency injection.
    _said(conn, "Start the field notes app: the screens are Jetpack Compose, Hilt for injection.",
          "prompt", "s1", T)
    _said(conn, "Done: the note list is a Jetpack Compose screen and Hilt provides the repository.",
          "response", "s1", T + 1000)
    _said(conn, "Added the sync screen in Jetpack Compose; Hilt injects the sync worker.",
          "response", "s2", T + DAY)
    for s in ("s1", "s2"):
        store.queue_stop(conn, s, P, "claude-code")
    assert drain(conn, JobRunner(use_provider=False)).done == 2
    stack = next(line for line in context.build_block(conn, P).splitlines()
                 if line.startswith("Stack:"))
    assert "Jetpack Compose" in stack and "containers" not in stack
    text, _ = recall.prompt_block(conn, P, "Which UI toolkit do the screens use?")
    assert "Jetpack Compose" in text
    text, _ = recall.prompt_block(conn, P, "What do we use for dependency injection?")
    assert "Hilt" in text
