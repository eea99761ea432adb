"""Code, tests and documents cite the project's own pages by section: ``docs/design.md,
"Title"`` (a title or its beginning) and ``docs/protocol.md §N``. Every such citation names
a section that exists, so renaming a heading cannot leave a citation behind; and nothing
cites an issue number or a document outside the repository."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from tests.docs._markdown import headings
from tests.fixtures.corpus import REPO_ROOT

_SOURCES = ("*.py", "*.md", "*.sql", "*.toml", "*.yml", "*.rst")
_SKIP = {".git", ".nox", ".venv", "venv", "build", "dist", "__pycache__", ".mypy_cache"}
# `design.md`, up to 40 characters on its line, then one or more quoted titles (each
# starting with a capital or a digit) that may run over lines of a comment or docstring
# ("#", "#:", "--" and indentation are dropped). This file is not scanned: its own examples
# are not citations.
_DESIGN = re.compile(
    r'design\.md[^"\n]{0,40}?(?:\n[ \t#:-]*)?((?:"[A-Z0-9][^"]*"(?:,? (?:and )?)?)+)'
)
_PROTOCOL = re.compile(r"protocol\.md,? §(\d+)")
# Built from parts so that this file does not match itself.
_OUTSIDE = re.compile("|".join(["issue" + r" [0-9]", "seeds" + "/", "shared" + "/spec"]), re.I)


def _files() -> Iterator[Path]:
    for pattern in _SOURCES:
        for path in REPO_ROOT.rglob(pattern):
            if path != Path(__file__) and not _SKIP.intersection(path.relative_to(REPO_ROOT).parts):
                yield path


def _titles(page: str) -> list[str]:
    text = (REPO_ROOT / "docs" / page).read_text(encoding="utf-8")
    return [title.lower() for _, title in headings(text)]


def _normal(quoted: str) -> str:
    return re.sub(r"\s*\n[\s#:-]*", " ", quoted).strip().lower()


def _design_citations(text: str) -> Iterator[str]:
    for match in _DESIGN.finditer(text):
        yield from (_normal(q) for q in re.findall(r'"([^"]+)"', match.group(1)))


def test_every_design_citation_names_a_section() -> None:
    titles = _titles("design.md")
    unknown = sorted(
        f"{path.relative_to(REPO_ROOT)}: {cited!r}"
        for path in _files()
        for cited in _design_citations(path.read_text(encoding="utf-8", errors="replace"))
        if not any(title.startswith(cited) for title in titles)
    )
    assert unknown == []


def test_every_protocol_citation_names_a_section() -> None:
    numbers = {t.split(".", 1)[0] for t in _titles("protocol.md") if t[:1].isdigit()}
    unknown = sorted(
        f"{path.relative_to(REPO_ROOT)}: §{number}"
        for path in _files()
        for number in _PROTOCOL.findall(path.read_text(encoding="utf-8", errors="replace"))
        if number not in numbers
    )
    assert unknown == []


def test_the_citation_pattern_reads_a_citation_split_over_comment_lines() -> None:
    text = (
        '#: (docs/design.md, "Late rows and\n#: provenance"); docs/design.md, "Gaps", "Duplicates"'
    )
    assert list(_design_citations(text)) == ["late rows and provenance", "gaps", "duplicates"]


def test_nothing_cites_an_issue_number_or_an_outside_document() -> None:
    found = sorted(
        f"{path.relative_to(REPO_ROOT)}:{n}: {line.strip()[:80]}"
        for path in _files()
        if path.suffix in (".py", ".md")
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if _OUTSIDE.search(line)
    )
    assert found == []
