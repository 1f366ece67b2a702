"""ziggurat: an MLIR-style compiler framework on xDSL, from NN graphs to an NPU machine model."""

__version__ = "0.1.0"
