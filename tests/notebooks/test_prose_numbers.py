"""Numbers in a notebook's prose come from its code: a measurement (a time, a rate, a speedup, an
accuracy or error with decimals, a size in MB) typed into a markdown cell goes stale the day the
code or the machine changes, and then the prose says something the notebook does not compute.

So a markdown cell may state such a figure only when it cites where it comes from (a link, a
paper "et al.", TensorFlow's or a tool's own output named in the same paragraph); the notebook
prints its own figures (a code cell's output, or a small display helper). Settings a chapter
chooses are not measurements and stay in prose: a figure that is a literal in the notebook's
code (a crop fraction 0.875 stated as 87.5 %, a target accuracy) passes.
"""
import pathlib
import re

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9][0-9]-*.py"))

_NUM = r"(?<![\w.])\d+(?:[.,]\d+)?"
MEASURED = [
    (re.compile(rf"{_NUM}\s*(?:ms|µs|us|ns|毫秒|微秒)(?![A-Za-z])"), "a time"),
    (re.compile(rf"{_NUM}\s*(?:s|秒)(?![A-Za-z\w])"), "a time"),
    (re.compile(rf"{_NUM}\s*(?:GFLOP/s|TFLOP/s|GB/s|images/s|样本/秒)"), "a rate"),
    (re.compile(r"(?<![\w.])\d+\.\d+\s*[x×](?![A-Za-z])"), "a speedup"),
    (re.compile(r"(?<![\w.])\d+\.\d+\s*%"), "a percentage with decimals"),
    (re.compile(rf"{_NUM}\s*(?:MB|GB|MiB|GiB)\b"), "a size"),
]
# A paragraph that names its source: a link, a paper, TF's (or another tool's) own printed output.
CITED = re.compile(r"https?://|\bet al\.|\(\d{4}\)|（\d{4}）|arXiv|原文|TF 2\.\d+ 的|TensorFlow 2\.\d+ 的|"
                   r"论文|paper|benchmarks/|bench_\w+\.py|README")


def markdown_paragraphs(path):
    """(first line number, text) of each paragraph of the markdown cells of a py:percent notebook."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, in_md, para, start = [], False, [], 0
    for i, line in enumerate(lines, 1):
        if line.startswith("# %%"):
            in_md = "[markdown]" in line
            if para:
                out.append((start, " ".join(para)))
            para = []
            continue
        if not in_md:
            continue
        text = line[2:] if line.startswith("# ") else line.lstrip("#")
        if not text.strip():
            if para:
                out.append((start, " ".join(para)))
            para = []
        else:
            if not para:
                start = i
            para.append(text.strip())
    if para:
        out.append((start, " ".join(para)))
    return out


def code_literals(path):
    """The numbers written as literals in the notebook's code cells (its settings)."""
    code, in_code = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# %%"):
            in_code = "[markdown]" not in line
        elif in_code:
            code.append(line)
    return {float(m) for m in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?:e-?\d+)?", "\n".join(code))}


def _is_setting(figure, literals):
    value = float(re.match(r"\d+(?:[.,]\d+)?", figure).group(0).replace(",", "."))
    return any(abs(value - x) < 1e-9 or (figure.rstrip().endswith("%") and abs(value / 100 - x) < 1e-9)
               for x in literals)


def typed_measurements(path):
    found = []
    literals = code_literals(path)
    for line, text in markdown_paragraphs(path):
        if CITED.search(text):
            continue
        prose = re.sub(r"`[^`]*`", "", text)          # code spans are code, not claims
        for pattern, what in MEASURED:
            for m in pattern.finditer(prose):
                if not _is_setting(m.group(0), literals):
                    found.append(f"{path.name}:{line}: {what} typed into the prose: {m.group(0)!r}")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_measured_numbers_in_prose_come_from_the_code(path):
    found = typed_measurements(path)
    assert not found, "print these from the code (or cite their source):\n" + "\n".join(found)


def test_the_check_sees_typed_figures(tmp_path):
    nb = tmp_path / "99-check.py"
    nb.write_text("# %% [markdown]\n# 融合后每步 1.23 ms，快了 1.5x，准确率 98.45%，裁剪 87.5%。\n#\n"
                  "# Micikevicius et al. (2018) report 5.3 % of gradients below 2^-24.\n"
                  "# %%\nCROP = 0.875\nprint(CROP)\n", encoding="utf-8")
    found = typed_measurements(nb)
    assert [f.split(": ", 2)[1] for f in found] == ["a time typed into the prose", "a speedup typed into the prose",
                                                   "a percentage with decimals typed into the prose"]
