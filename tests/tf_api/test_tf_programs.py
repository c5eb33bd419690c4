"""Runs the complete TensorFlow-style programs in tests/tf_programs/ (import swapped to aicslib).

Each program's ``main()`` checks its own numbers against an independent NumPy computation;
this test runs it and restores TF2 behaviour afterwards (TF1 programs call
``disable_v2_behavior()``). Programs are loaded in this process, so one import of
aicslib and of MNIST serves them all.
"""
import importlib.util
import pathlib

import pytest

import aicslib as aics
import aicslib.compat.v1 as tf1

PROGRAMS = sorted((pathlib.Path(__file__).resolve().parents[1] / "tf_programs").glob("tf*.py"))


def test_there_are_tf1_and_tf2_programs():
    names = [p.name for p in PROGRAMS]
    assert len(names) >= 12
    assert sum(n.startswith("tf1_") for n in names) >= 6 and sum(n.startswith("tf2_") for n in names) >= 4


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_runs_and_matches_numpy(path):
    spec = importlib.util.spec_from_file_location(f"tf_program_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    source = path.read_text()
    if path.name.startswith("tf1_"):
        assert "import aicslib.compat.v1 as tf" in source and "tf.disable_v2_behavior()" in source
    else:
        assert "import aicslib as tf" in source
    try:
        spec.loader.exec_module(module)
        result = module.main()
        assert isinstance(result, dict) and result
    finally:
        tf1.enable_v2_behavior()
        aics.reset_default_graph()
        aics.random.set_seed(None)
