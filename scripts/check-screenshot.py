"""Checks that a report screenshot is a page a reader can see (scripts/ci-screenshots.sh).

    check-screenshot.py PNG WIDTH HEIGHT

Fails (exit 1, saying which check) unless the PNG is at least MIN_BYTES, exactly WIDTH × HEIGHT
pixels, not blank (at least MIN_INK of its pixels are not the page's white), drawn in more than
a few colours (text, lines and fills of several series), and has ink in its top band (the
report's title: a page that failed to load is white there).
"""

import sys
from pathlib import Path

from PIL import Image

MIN_BYTES = 20_000
# The fraction of non-white pixels: a report part with its text and charts is far above this.
MIN_INK = 0.02
MIN_COLOURS = 16
TOP_BAND = 200


def problems(path: Path, width: int, height: int) -> list[str]:
    found = []
    size = path.stat().st_size
    if size < MIN_BYTES:
        found.append(f"{size} bytes, expected at least {MIN_BYTES}")
    with Image.open(path) as image:
        if image.size != (width, height):
            found.append(f"{image.size[0]}×{image.size[1]} px, expected {width}×{height}")
        rgb = image.convert("RGB")
    white = (255, 255, 255)
    # (count, colour) for every colour of the page; no pixel-by-pixel loop in Python.
    colours = rgb.getcolors(maxcolors=rgb.size[0] * rgb.size[1]) or []
    blank = sum(n for n, c in colours if c == white)
    ink = 1 - blank / max(1, rgb.size[0] * rgb.size[1])
    if ink < MIN_INK:
        found.append(
            f"{ink:.1%} of the pixels are not white: blank (expected at least {MIN_INK:.0%})"
        )
    if len(colours) < MIN_COLOURS:
        found.append(f"{len(colours)} colours, expected at least {MIN_COLOURS}")
    top = rgb.crop((0, 0, rgb.size[0], min(TOP_BAND, rgb.size[1])))
    if top.getextrema() == ((255, 255), (255, 255), (255, 255)):
        found.append(f"the top {TOP_BAND} px are white: no title")
    return found


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    path, width, height = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    found = problems(path, width, height)
    if found:
        print(f"error: {path.name}: " + "; ".join(found), file=sys.stderr)
        return 1
    print(f"checked {path.name}: {path.stat().st_size} bytes, {width}×{height} px, not blank")
    return 0


if __name__ == "__main__":
    sys.exit(main())
