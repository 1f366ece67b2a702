"""Test harnesses that ship with the package: the differential harness and the onnx operator suite runner."""
