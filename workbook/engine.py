"""The student's engine: their implementations in place of the library's, and real TensorFlow
programs run on it.

``student_engine(...)`` is one switch over aicslib's seams: the Session's planner, graph
``gradients()``, any op's kernel (a convolution, an MLU kernel), and the TF1 optimizer classes a
program names (``tf.train.MomentumOptimizer`` ...). Inside the ``with`` block every Session,
eager op and ``aics.function`` uses them; after it the library's come back::

    with student_engine(planner=my_planner, gradients=my_gradients):
        results = run_program("tf1_mnist_softmax")

``compare_engines(program, ...)`` runs a program from ``tests/tf_programs/`` (each written the way
TensorFlow's tutorials write it, with only the import swapped, and checking itself against
NumPy) on the library's engine and on the student's, and prints their numbers side by side.
"""
import contextlib
import importlib.util
import pathlib

import numpy as np

import aicslib as aics
import aicslib.compat.v1 as tf1

PROGRAMS = pathlib.Path(__file__).resolve().parents[1] / "tests" / "tf_programs"


def program_names():
    return sorted(p.stem for p in PROGRAMS.glob("tf[12]_*.py"))


@contextlib.contextmanager
def student_engine(planner=None, gradients=None, kernels=None, optimizers=None):
    """Puts the given parts in place for the block (each optional):

    - ``planner``: ``fn(targets, feeds, keep) -> (order, free_after)`` (``aics.experimental.use_planner``);
    - ``gradients``: ``fn(ys, xs, grad_ys, stop_gradients) -> [gradient or None]``;
    - ``kernels``: ``{op_type: fn}`` or ``{(op_type, device): fn}``, each above the registered kernels;
    - ``optimizers``: ``{"MomentumOptimizer": MyMomentum, ...}``: the classes ``aics.train`` and
      ``tf.compat.v1.train`` hand out under those names.
    """
    with contextlib.ExitStack() as stack:
        if planner is not None:
            stack.enter_context(aics.experimental.use_planner(planner))
        if gradients is not None:
            stack.enter_context(aics.experimental.use_gradients(gradients))
        for key, fn in (kernels or {}).items():
            op_type, device = key if isinstance(key, tuple) else (key, "CPU")
            stack.enter_context(aics.experimental.use_kernel(op_type, fn, device=device))
        for name, cls in (optimizers or {}).items():
            for namespace in {id(aics.train): aics.train, id(tf1.train): tf1.train}.values():
                if not hasattr(namespace, name):
                    raise AttributeError(f"{namespace.__name__} has no optimizer {name!r} to replace")
                stack.enter_context(_replaced(namespace, name, cls))
        yield


@contextlib.contextmanager
def _replaced(namespace, name, value):
    saved = getattr(namespace, name)
    setattr(namespace, name, value)
    try:
        yield
    finally:
        setattr(namespace, name, saved)


def run_program(name, engine=None):
    """Runs ``tests/tf_programs/<name>.py``'s ``main()`` (inside ``engine``, a context manager such as
    ``student_engine(...)``, when given) and returns the numbers it reports."""
    path = PROGRAMS / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no TF program {name!r}; the programs are: {', '.join(program_names())}")
    spec = importlib.util.spec_from_file_location(f"tf_program_{name}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        with engine if engine is not None else contextlib.nullcontext():
            return module.main()
    finally:
        tf1.enable_v2_behavior()          # a TF1 program switched to graph mode
        aics.reset_default_graph()
        aics.random.set_seed(None)


def compare_engines(name, **parts):
    """Runs program ``name`` on the library's engine, then on the student's (``parts`` as for
    ``student_engine``), prints both sets of numbers and returns them: (library's, student's)."""
    reference = run_program(name)
    mine = run_program(name, student_engine(**parts))
    width = max(len(k) for k in reference)
    print(f"{name}: {'':{width}s} {'library':>12s} {'yours':>12s}")
    for key in reference:
        a, b = reference[key], mine.get(key)
        if np.ndim(a) == 0:
            print(f"  {key:{width}s} {_number(a)} {_number(b)}")
            continue
        a, b = np.ravel(a), (None if b is None else np.ravel(b))   # a list of values: one line each
        for i, value in enumerate(a):
            theirs = None if b is None or i >= b.size else b[i]
            print(f"  {f'{key}[{i}]':{width + 4}s} {_number(value)} {_number(theirs)}")
    return reference, mine


def _number(v):
    return f"{'missing':>12s}" if v is None else f"{float(v):12.6g}"
