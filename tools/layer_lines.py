"""Lines of Python in each layer of aicslib, and the length of the README's reading path.

    python tools/layer_lines.py

The layers are the README's ("Layers, and a reading path"); a package directory not named in
LAYERS, and every top-level module, counts as an API.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
LAYERS = {
    "core": ["framework", "ops", "kernels"],
    "runtime": ["eager", "grappler", "autograph", "client", "config"],
    "speed": ["accel"],
}
COURSE = ["workbook"]
PATH_BLOCK = re.compile(r"<!-- reading-path.*?-->(.*?)<!-- /reading-path -->", re.S)


def lines(path):
    return sum(1 for _ in path.open(encoding="utf-8"))


def layer_of(path):
    top = path.relative_to(ROOT / "aicslib").parts[0]
    return next((name for name, dirs in LAYERS.items() if top in dirs), "APIs")


def lines_per_layer():
    totals = {name: 0 for name in [*LAYERS, "APIs"]}
    for path in (ROOT / "aicslib").rglob("*.py"):
        totals[layer_of(path)] += lines(path)
    totals["course"] = sum(lines(p) for d in COURSE for p in (ROOT / d).rglob("*.py"))
    return totals


def reading_path(readme=ROOT / "README.md"):
    """The files the README's reading path names, in order."""
    block = PATH_BLOCK.search(readme.read_text(encoding="utf-8"))
    if block is None:
        raise SystemExit("README.md has no <!-- reading-path --> block")
    return [ROOT / m for m in re.findall(r"^\d+\. `([^`]+)`", block.group(1), re.M)]


def main():
    totals = lines_per_layer()
    for name, n in totals.items():
        print(f"{name:8s} {n:7,d} lines")
    print(f"{'aicslib':8s} {sum(n for k, n in totals.items() if k != 'course'):7,d} lines")
    files = reading_path()
    missing = [str(f.relative_to(ROOT)) for f in files if not f.exists()]
    if missing:
        sys.exit(f"the reading path names missing files: {missing}")
    print(f"reading path: {len(files)} files, {sum(lines(f) for f in files):,d} lines")


if __name__ == "__main__":
    main()
