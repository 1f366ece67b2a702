"""The plugin's own regression suite: ziggurat's tools on PATH, with the plugin installed."""

import os

import lit.formats

config.name = "ziggurat-gemmini"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.excludes = ["Inputs"]
# lit runs tests in a clean environment: pass on where the tools and packages are.
for variable in ("PATH", "PYTHONPATH", "VIRTUAL_ENV", "HOME"):
    if variable in os.environ:
        config.environment[variable] = os.environ[variable]
