"""Maps the repository's top-level source folders onto subpackages of `ziggurat`.

The folders stay where DESIGN.md puts them (dialects/, transforms/, ...) while
installing as `ziggurat.dialects`, `ziggurat.transforms`, ...; nothing installs
as a bare top-level `dialects` package. Metadata lives in pyproject.toml.
"""

from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent
# every top-level package folder besides ziggurat/ itself (the Makefile's lint layout finds them the same way)
SOURCE_FOLDERS = sorted(
    init.parent.name for init in ROOT.glob("*/__init__.py") if init.parent.name != "ziggurat"
)

package_dir = {"ziggurat": "ziggurat"}
packages = ["ziggurat"]
for folder in ["ziggurat", *SOURCE_FOLDERS]:
    prefix = "ziggurat" if folder == "ziggurat" else f"ziggurat.{folder}"
    package_dir[prefix] = folder
    for init in sorted((ROOT / folder).rglob("__init__.py")):
        relative = init.parent.relative_to(ROOT / folder)
        name = ".".join([prefix, *relative.parts])
        if name not in packages:
            packages.append(name)

setup(package_dir=package_dir, packages=packages)
