"""workbook.engine: the student's parts in place for a block, and real TF programs run on them."""
import numpy as np
import pytest

import aicslib as aics
import aicslib.compat.v1 as tf1
from aicslib.framework import planner as planner_module
from workbook.engine import compare_engines, program_names, run_program, student_engine


def test_every_part_is_in_place_inside_the_block_only():
    calls = {"planner": 0, "kernel": 0}

    def my_planner(targets, feeds, keep):
        calls["planner"] += 1
        return planner_module.default_planner(targets, feeds, keep)

    def my_relu(features):
        calls["kernel"] += 1
        return np.maximum(features, 0)

    class MyMomentum(aics.train.MomentumOptimizer):
        pass

    with student_engine(planner=my_planner, kernels={"Relu": my_relu}, optimizers={"MomentumOptimizer": MyMomentum}):
        assert aics.train.MomentumOptimizer is MyMomentum and tf1.train.MomentumOptimizer is MyMomentum
        g = aics.Graph()
        with g.as_default():
            y = aics.nn.relu(aics.constant([-1.0, 2.0]))
        with aics.Session(graph=g) as sess:
            np.testing.assert_array_equal(sess.run(y), [0.0, 2.0])
    assert calls == {"planner": 1, "kernel": 1}
    assert aics.train.MomentumOptimizer is not MyMomentum


def test_a_program_gives_the_library_numbers_on_an_equivalent_engine():
    planned = []

    def my_planner(targets, feeds, keep):
        planned.append(len(targets))
        return planner_module.default_planner(targets, feeds, keep)

    reference, mine = compare_engines("tf1_mnist_softmax", planner=my_planner)
    assert planned and reference == mine


def test_a_wrong_part_shows_in_the_programs_numbers():
    def dropping_planner(targets, feeds, keep):      # leaves the weight updates out of the step
        order, free_after = planner_module.default_planner(targets, feeds, keep)
        return [op for op in order if op.type not in ("ApplyGradientDescent", "ResourceApplyGradientDescent")], \
            free_after
    with pytest.raises(Exception):
        run_program("tf1_mnist_softmax", student_engine(planner=dropping_planner))


def test_unknown_program_and_optimizer_names_are_refused():
    with pytest.raises(FileNotFoundError, match="the programs are: .*tf1_mnist_softmax"):
        run_program("no_such_program")
    with pytest.raises(AttributeError, match="no optimizer 'NoSuchOptimizer'"):
        with student_engine(optimizers={"NoSuchOptimizer": object}):
            pass
    assert "tf1_mnist_softmax" in program_names()


def test_compare_engines_prints_a_list_result_value_by_value(monkeypatch, capsys):
    import workbook.engine as engine

    results = iter([{"loss": 2.5, "losses": [3.0, 2.0]}, {"loss": 2.5, "losses": [3.0]}])
    monkeypatch.setattr(engine, "run_program", lambda name, *a: next(results))
    engine.compare_engines("fake_program")
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["loss", "2.5", "2.5"]
    assert lines[2].split() == ["losses[0]", "3", "3"]
    assert lines[3].split() == ["losses[1]", "2", "missing"]
