"""The student's own copy of the workbook: ``make lab`` runs ``python -m workbook.student_copy``.

Copies the release (``make release``'s notebooks: exercises blank, locked tests, no hidden tests,
no outputs) into the student's folder (``student/`` by default, ignored by git) and never
overwrites a notebook already there: that is the student's work. When the release of a chapter
changed since the student's copy was made (the course was updated, ``git pull``), the new version
is written beside it as ``NN-topic.updated.ipynb`` and the student is told. The copies carry no
jupytext metadata, so saving never writes paired ``.py`` files next to them.
"""
import argparse
import hashlib
import pathlib
import shutil
import sys

import nbformat

PRISTINE = ".release"        # the release each copy was made from, to notice course updates


def _digest(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def without_jupytext(src, dest):
    nb = nbformat.read(src, as_version=4)
    nb.metadata.pop("jupytext", None)
    nbformat.write(nb, dest)


def copy_release(release, dest):
    """Returns (added, updated) chapter names."""
    dest.mkdir(parents=True, exist_ok=True)
    pristine = dest / PRISTINE
    pristine.mkdir(exist_ok=True)
    added, updated = [], []
    for nb in sorted(release.glob("[0-9][0-9]-*.ipynb")):
        mine, base = dest / nb.name, pristine / nb.name
        if not mine.exists():
            without_jupytext(nb, mine)
            shutil.copy(nb, base)
            added.append(nb.stem)
        elif base.exists() and _digest(base) != _digest(nb):
            without_jupytext(nb, dest / f"{nb.stem}.updated.ipynb")
            shutil.copy(nb, base)
            updated.append(nb.stem)
    return added, updated


def write_handout(release, dest):
    """``make release``'s folder to hand out: every released notebook, without jupytext metadata
    (replaces ``dest``)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for nb in sorted(release.glob("[0-9][0-9]-*.ipynb")):
        without_jupytext(nb, dest / nb.name)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", type=pathlib.Path, required=True, help="folder of the released NN-topic.ipynb")
    ap.add_argument("--dest", type=pathlib.Path, required=True, help="the student's folder")
    ap.add_argument("--handout", action="store_true",
                    help="write the whole release to DEST (replacing it) instead of a student's copy")
    args = ap.parse_args(argv)
    if not any(args.release.glob("[0-9][0-9]-*.ipynb")):
        ap.error(f"no released notebooks in {args.release} (run `make release` first)")
    if args.handout:
        write_handout(args.release, args.dest)
        return 0
    added, updated = copy_release(args.release, args.dest)
    if added:
        print(f"your workbook: {args.dest}/ (new: {', '.join(added)})")
    for name in updated:
        print(f"{name}: the course has a newer version; yours is kept as {name}.ipynb, "
              f"the new one is {name}.updated.ipynb")
    return 0


if __name__ == "__main__":
    sys.exit(main())
