"""Passes on the tensor level (`linalg`/`tensor` after `graph-to-tile`): tiling and fusion.

`tiling_interface` is the per-op tiling API the passes share; `tile_sizes` picks
tile sizes from a machine description; `tile_and_fuse` is the pass.
"""
