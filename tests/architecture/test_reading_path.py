"""The README's reading path names files that exist, in an order a reader can follow, and stays an
afternoon long; the layer table covers every package directory."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import layer_lines  # noqa: E402  (a script in tools/, not a package)


def test_reading_path_files_exist_and_fit_an_afternoon():
    files = layer_lines.reading_path()
    assert len(files) >= 10
    missing = [f for f in files if not f.exists()]
    assert not missing, f"the README's reading path names missing files: {missing}"
    total = sum(layer_lines.lines(f) for f in files)
    # whole files counted, a few read only in part: the README says about 5,500
    assert total <= 6000, f"the reading path has grown to {total} lines; shorten it or the files"


def test_reading_path_reaches_the_kernel_and_back_in_both_modes():
    names = {f.relative_to(ROOT / "aicslib").as_posix() for f in layer_lines.reading_path()}
    for needed in ["framework/op_def.py", "framework/kernel_registry.py", "framework/execute.py",
                   "framework/eager.py", "framework/session.py", "ops/gradients_util.py",
                   "eager/backprop.py", "kernels/matmul_op.py", "kernels/conv_ops.py"]:
        assert needed in names, f"the reading path skips {needed}"


def test_every_package_directory_is_in_one_layer():
    dirs = {p.name for p in (ROOT / "aicslib").iterdir() if (p / "__init__.py").exists()}
    core_and_speed = {d for name, ds in layer_lines.LAYERS.items() for d in ds}
    assert core_and_speed <= dirs, f"LAYERS names directories that are gone: {core_and_speed - dirs}"
    # nothing from the speed layer is on the reading path: the core reads without it
    assert not any("accel" in f.parts for f in layer_lines.reading_path())
