"""docs/tutorial.md works as written: its files, extracted, install as a plugin whose lit suite passes.

Each fenced block with a `title="path"` in the tutorial is a file of the reader's
package. The package is installed into a scratch folder (not the shared
environment, so other tests never see its passes) and found through
PYTHONPATH, which is how entry points of a `--target` install are discovered.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
FILE_BLOCK = re.compile(r'```\w+ title="([^"]+)"\n(.*?)```', re.S)


def tutorial_files() -> dict[str, str]:
    return {path: body for path, body in FILE_BLOCK.findall(TUTORIAL.read_text())}


def install(files: dict[str, str], where: Path) -> dict[str, str]:
    """Write the package under `where`, install it beside it; the environment that sees it."""
    package = where / "my-first-pass"
    for path, body in files.items():
        target = package / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body)
    site = where / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(package),
        ],
        check=True,
        capture_output=True,
    )
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PYTHONPATH": str(site),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }


def run_lit(where: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    lit = Path(sys.executable).parent / "lit"
    return subprocess.run(
        [str(lit), "-v", str(where / "my-first-pass" / "test")],
        env=env,
        capture_output=True,
        text=True,
    )


def test_the_tutorial_has_the_files_it_lists():
    files = tutorial_files()
    for path in (
        "pyproject.toml",
        "my_first_pass/universe.py",
        "test/lit.cfg.py",
        "test/fold-double-relu.mlir",
    ):
        assert path in files


def test_the_tutorial_package_passes_its_own_tests(tmp_path):
    env = install(tutorial_files(), tmp_path)
    listed = subprocess.run(
        ["ziggurat-opt", "--list-passes"], env=env, capture_output=True, text=True, check=True
    )
    assert "fold-double-relu" in listed.stdout and "mine-square-to-graph" in listed.stdout
    result = run_lit(tmp_path, env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed: 3" in result.stdout


@pytest.mark.parametrize("broken", ["rewriter.replace_op(op, [], [op.output])"])
def test_breaking_the_pattern_fails_the_tutorial_test(tmp_path, broken):
    """The tutorial says a wrong rewrite fails its FileCheck test: it does."""
    files = tutorial_files()
    path = "my_first_pass/fold_double_relu.py"
    files[path] = files[path].replace("rewriter.replace_op(op, [], [inner.output])", broken)
    env = install(files, tmp_path)
    result = run_lit(tmp_path, env)
    assert result.returncode != 0
    assert "FAIL: my-first-pass :: fold-double-relu.mlir" in result.stdout
