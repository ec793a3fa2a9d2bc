"""scripts/check-screenshot.py, which CI runs on report screenshots (scripts/ci-screenshots.sh):
a blank or wrongly sized page fails, a drawn page passes."""

import importlib.util
from pathlib import Path

import pytest

PIL = pytest.importorskip("PIL", reason="Pillow is not installed (make venv installs it)")
from PIL import Image, ImageDraw  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check-screenshot.py"


def checker():
    spec = importlib.util.spec_from_file_location("check_screenshot", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page(path: Path, draw: bool, size=(1100, 600)) -> Path:
    image = Image.new("RGB", size, "white")
    if draw:
        pen = ImageDraw.Draw(image)
        # A title and lines of text in the top band, and a chart of 20 coloured series below.
        for y in range(20, 580, 14):
            pen.text(
                (20, y), "Findings: mean wait lowers from 11.0 h to 5.00 h " * 3, fill=(30, 30, 30)
            )
        for k in range(20):
            colour = (12 * k, 255 - 12 * k, (97 * k) % 256)
            pen.line([(600, 100 + 20 * k), (1080, 580 - 20 * k)], fill=colour, width=3)
    image.save(path)
    return path


def test_a_blank_page_fails_and_says_why(tmp_path):
    found = checker().problems(page(tmp_path / "blank.png", False), 1100, 600)
    assert any("blank" in p for p in found), found
    assert any("no title" in p for p in found), found
    assert any("bytes" in p for p in found), found


def test_a_drawn_page_of_the_size_asked_passes_and_another_size_fails(tmp_path):
    module = checker()
    module.MIN_BYTES = 1_000  # a synthetic page compresses far better than a report
    drawn = page(tmp_path / "drawn.png", True)
    assert module.problems(drawn, 1100, 600) == []
    assert module.problems(drawn, 1100, 4200) == ["1100×600 px, expected 1100×4200"]
