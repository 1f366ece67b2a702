"""ziggurat-gemmini: a Gemmini-style accelerator added to ziggurat from outside.

`gemm.py` is its hardware dialect, `gemmini.toml` its machine, `instructions.py`
what its commands compute and cost on ziggurat's machine model, and
`loop_to_gemm.py` the lowering from ziggurat's loop level to its commands.
"""
