"""The source folders install as subpackages of `ziggurat`, in editable installs and in wheels."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE_FOLDERS = [
    "dialects",
    "transforms",
    "lowering",
    "interpreters",
    "tuning",
    "frontends",
    "tools",
]


def test_editable_install_imports_subpackages():
    import ziggurat.dialects.graph
    import ziggurat.tools.ziggurat_opt

    assert Path(ziggurat.dialects.graph.__file__).resolve() == ROOT / "dialects" / "graph.py"
    assert ziggurat.tools.ziggurat_opt.main


def test_no_bare_top_level_packages(tmp_path):
    # Run outside the checkout: from its root, `import dialects` finds the folder itself.
    for folder in SOURCE_FOLDERS:
        probe = subprocess.run(
            [sys.executable, "-c", f"import {folder}"], cwd=tmp_path, capture_output=True, text=True
        )
        assert probe.returncode != 0, f"'{folder}' is importable as a top-level package"
        assert "ModuleNotFoundError" in probe.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
    )
    (built,) = out.glob("ziggurat-*.whl")
    return built


def test_wheel_contains_only_the_ziggurat_package(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    top_levels = {name.split("/")[0] for name in names if not name.startswith("ziggurat-")}
    assert top_levels == {"ziggurat"}
    assert "ziggurat/dialects/graph.py" in names
    assert "ziggurat/transforms/graph/__init__.py" in names
    assert "ziggurat/tools/ziggurat_opt.py" in names


def test_wheel_ships_the_machine_package_and_its_presets(wheel: Path):
    # The presets are package data: `load_machine("davinci")` reads them next to the modules.
    names = set(zipfile.ZipFile(wheel).namelist())
    machine = ROOT / "ziggurat" / "machine"
    shipped = [*machine.glob("*.py"), *(machine / "presets").glob("*.toml")]
    assert {"davinci.toml", "systolic.toml", "tensorcore.toml", "__main__.py"} <= {
        path.name for path in shipped
    }
    for path in shipped:
        assert path.relative_to(ROOT).as_posix() in names


def test_wheel_declares_the_universe_entry_point(wheel: Path):
    archive = zipfile.ZipFile(wheel)
    (entry_points,) = [n for n in archive.namelist() if n.endswith("entry_points.txt")]
    text = archive.read(entry_points).decode()
    assert "[xdsl.universe]" in text
    assert "ziggurat = ziggurat.universe:ZIGGURAT_UNIVERSE" in text
    assert "ziggurat-opt = ziggurat.tools.ziggurat_opt:main" in text


def test_onnx_is_a_dependency_and_onnxruntime_an_extra():
    # `pip install ziggurat` alone must give a ziggurat-compile that imports ONNX models;
    # onnxruntime is only for --check (the `check` extra), which says so when it is missing.
    from importlib.metadata import requires

    requirements = requires("ziggurat")
    plain = [r for r in requirements if "extra ==" not in r]
    assert any(r.startswith("onnx>") or r.startswith("onnx<") for r in plain), plain
    assert not any(r.startswith("onnxruntime") for r in plain), plain
    assert any(r.startswith("onnxruntime") and 'extra == "check"' in r for r in requirements)
