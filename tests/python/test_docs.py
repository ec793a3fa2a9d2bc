"""The Python code blocks of docs/python.md and docs/policies.md run as written, in order, from
the repository's root (each document in a namespace of its own)."""

from __future__ import annotations

import os
import re

import pytest

from conftest import ROOT

DOCS = ["docs/python.md", "docs/policies.md", "docs/rl.md"]


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("doc", DOCS)
def test_the_documents_python_blocks_run(doc, monkeypatch):
    blocks = python_blocks((ROOT / doc).read_text())
    assert len(blocks) >= 3, f"{doc} has too few Python examples to be the package's guide"
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT / "policies"))
    namespace: dict = {"__name__": "__doc_example__"}
    for k, block in enumerate(blocks):
        try:
            exec(compile(block, f"{doc}, block {k + 1}", "exec"), namespace)
        except Exception as e:  # the block and its document, then the error
            raise AssertionError(f"{doc}, Python block {k + 1} failed: {e!r}\n{block}") from e
    assert os.getcwd() == str(ROOT)
