"""lit configuration: every `.mlir` file under test/ is a test; the tools come from the active environment."""

import os
import shutil
import subprocess

import lit.formats

config.name = "ziggurat"
# lit 23 deprecates the external shell; the internal one runs our RUN lines (pipes, `not`, redirections).
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["unit", "plugin", "Inputs", "lit.cfg.py"]

config.environment["PATH"] = os.environ.get("PATH", "")
for variable in ("HOME", "PYTHONPATH", "VIRTUAL_ENV"):
    if variable in os.environ:
        config.environment[variable] = os.environ[variable]

for tool in ("ziggurat-opt", "ziggurat-run", "ziggurat-compile", "filecheck"):
    if shutil.which(tool, path=config.environment["PATH"]) is None:
        lit_config.fatal(f"'{tool}' is not on PATH; run the tests with `make test`")

# `FileCheck` spelled as in LLVM's own suites resolves to the Python filecheck.
config.substitutions.append(("FileCheck", "filecheck"))
config.substitutions.append(
    ("%examples", os.path.join(os.path.dirname(__file__), "..", "examples"))
)

# test/opt/plugin.mlir and others use the example plugin (test/plugin): check once that
# the ziggurat-opt on PATH sees it rather than fail those tests one by one.
dialects = subprocess.run(
    ["ziggurat-opt", "--list-dialects"], env=config.environment, capture_output=True, text=True
).stdout
if "\n  toy  (" not in dialects:
    lit_config.fatal(
        "the example plugin is not installed; run `pip install -e test/plugin` (`make install` does)"
    )
