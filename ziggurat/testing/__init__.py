"""Test harnesses that ship with the package: the onnx operator suite runner."""
