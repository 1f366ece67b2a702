"""ONNX frontend: `import_model` turns an ONNX model into `graph`-dialect IR (one `func.func @main`)."""

from ziggurat.frontends.onnx.importer import (
    SUPPORTED_OPSETS,
    import_loaded_model,
    import_model,
    load_model,
    parse_input_shape,
    unsupported_nodes,
)

__all__ = [
    "SUPPORTED_OPSETS",
    "import_loaded_model",
    "import_model",
    "load_model",
    "parse_input_shape",
    "unsupported_nodes",
]
