"""Passes on the tensor level (`linalg`/`tensor` after `graph-to-tile`): tiling and fusion, convolution
decomposition, vectorization and packing, with the tiling interface and tile-size rules they share.
"""
