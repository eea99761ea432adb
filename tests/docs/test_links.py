"""Every relative link between the documents resolves: the file exists, and an ``#anchor``
names a heading of the Markdown page it points to (as the forge makes anchors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs._markdown import DOCUMENTS, anchors, links
from tests.fixtures.corpus import REPO_ROOT

_EXTERNAL = ("http://", "https://", "mailto:")


def _broken(document: Path) -> list[str]:
    broken = []
    for target in links(document.read_text(encoding="utf-8")):
        if target.startswith(_EXTERNAL):
            continue
        path_part, _, anchor = target.partition("#")
        path = (document.parent / path_part).resolve() if path_part else document
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading with that anchor")
    return broken


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_relative_link_resolves(document: Path) -> None:
    assert _broken(document) == []


def test_the_checker_sees_a_broken_file_and_a_broken_anchor(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Title\n\n## A `code` heading, with punctuation!\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-code-heading-with-punctuation) [file](missing.md) "
        "[anchor](other.md#nothing) [self](#top) `[not a link](x.md)`\n\n# Top\n"
    )
    assert _broken(page) == [
        "missing.md: no such file",
        "other.md#nothing: no heading with that anchor",
    ]


def test_the_readme_is_one_link_from_deploying_configuring_and_operating() -> None:
    targets = links((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    for page in ("deployment", "configuration", "operations", "consumers", "embedding",
                 "protocol", "design", "benchmarks"):  # fmt: skip
        assert f"docs/{page}.md" in targets
