"""lit configuration: every `.mlir` file under test/ is a test; the tools come from the active environment."""

import os
import shutil

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

for tool in ("ziggurat-opt", "ziggurat-run", "filecheck"):
    if shutil.which(tool, path=config.environment["PATH"]) is None:
        lit_config.fatal(f"'{tool}' is not on PATH; run the tests with `make test`")

# `FileCheck` spelled as in LLVM's own suites resolves to the Python filecheck.
config.substitutions.append(("FileCheck", "filecheck"))
config.substitutions.append(("%examples", os.path.join(os.path.dirname(__file__), "..", "examples")))
