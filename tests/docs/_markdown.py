"""Reading the repository's Markdown documents as the forge renders them: headings and
their anchors, relative links, code spans and fenced blocks (for tests/docs)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from tests.fixtures.corpus import REPO_ROOT

__all__ = [
    "DOCUMENTS",
    "anchors",
    "code_lines",
    "fenced_blocks",
    "headings",
    "links",
    "section",
]

#: The documents a reader follows: the README and every page of docs/.
DOCUMENTS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^(#{1,6}) (.+?)\s*$", re.MULTILINE)
_LINK = re.compile(r"(?<!!)\[(?:[^\]\n]|\n(?!\n))*\]\(([^)\s]+)\)")
_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)


def _without_fences(text: str) -> str:
    return _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def headings(text: str) -> list[tuple[int, str]]:
    """(level, text) of every heading outside fenced blocks."""
    return [(len(m.group(1)), m.group(2)) for m in _HEADING.finditer(_without_fences(text))]


def _slug(heading: str) -> str:
    """The anchor the forge gives a heading: links and code marks dropped, lower case,
    punctuation other than ``-`` and ``_`` removed, each space a ``-``."""
    plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", plain.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every ``#anchor`` a link into *path* may use (a repeated heading gets ``-1``, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for _, text in headings(path.read_text(encoding="utf-8")):
        slug = _slug(text)
        count = seen.get(slug, 0)
        found.add(slug if count == 0 else f"{slug}-{count}")
        seen[slug] = count + 1
    return found


def links(text: str) -> list[str]:
    """The targets of the inline links outside fenced blocks and code spans."""
    prose = _SPAN.sub("", _without_fences(text))
    return [m.group(1) for m in _LINK.finditer(prose)]


def fenced_blocks(text: str, language: str) -> list[str]:
    """The bodies of the fenced blocks of *language*."""
    return [body for lang, body in _FENCE.findall(text) if lang == language]


def code_lines(text: str) -> Iterator[str]:
    """Where commands are written: every code span, and every line of every shell block
    without its comment."""
    for language, body in _FENCE.findall(text):
        if language in ("sh", "bash", "console"):
            yield from (re.sub(r"(^|\s)#.*", "", line) for line in body.splitlines())
    yield from (m.group(2) for m in _SPAN.finditer(_without_fences(text)))


def section(text: str, heading: str) -> str:
    """The text under the heading *heading* (any level), up to the next heading of the same
    or a higher level."""
    match = re.search(rf"^(#+) {re.escape(heading)}\n", text, re.MULTILINE)
    if match is None:
        raise LookupError(f"no section {heading!r}")
    level = len(match.group(1))
    rest = text[match.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.MULTILINE)
    return rest[: end.start()] if end else rest
