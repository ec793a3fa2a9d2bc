"""The native module's typed stubs (python/schedlab/_schedlab.pyi) name exactly what the module
has: every public function, class and method, nothing the module lost."""

from __future__ import annotations

import ast

from schedlab import _schedlab

from conftest import ROOT

STUBS = ROOT / "python" / "schedlab" / "_schedlab.pyi"


def public(names):
    return {n for n in names if not n.startswith("_")}


def test_the_stubs_name_what_the_native_module_has():
    tree = ast.parse(STUBS.read_text())
    top = set()
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            top.add(node.name)
        elif isinstance(node, ast.ClassDef):
            top.add(node.name)
            classes[node.name] = {
                item.target.id if isinstance(item, ast.AnnAssign) else item.name
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AnnAssign))
            }
    assert top == public(dir(_schedlab)), "module and stubs differ at the top level"
    for name in ("ViewState", "Plan", "Placer", "GymEnvs"):
        members = public(dir(getattr(_schedlab, name)))
        assert public(classes[name]) == members, name
