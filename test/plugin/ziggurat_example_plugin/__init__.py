"""An example ziggurat plugin: the `toy` dialect and the `toy-double-to-add` pass.

`universe.py` is all a plugin needs to join ziggurat-opt; pyproject.toml points the
`xdsl.universe` entry point at it.
"""
