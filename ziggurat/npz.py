"""Reading and writing the `.npz` archives that the tools take inputs from and write outputs to.

An archive's arrays are matched to a function's arguments by name, `argN` or
numpy.savez's positional `arr_N` (`candidate_keys`). `.npy` has no descriptor
for ml_dtypes' bf16 and fp8 types, so numpy.savez stores them as raw bytes
(`|V2`, `|V1`); `restore_element_type` views them as the argument's type again.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import Attribute

from ziggurat.diagnostics import Diagnostic, DiagnosticError
from ziggurat.dtypes import to_numpy_dtype


def npz_error(path: Path, message: str) -> DiagnosticError:
    return DiagnosticError(Diagnostic("error", message, file=str(path)))


def read_npz(path: Path) -> dict[str, np.ndarray]:
    """Every array of the archive at `path` by key; a missing, unreadable or non-npz file is a diagnostic."""
    try:
        with path.open("rb") as stream:
            # np.load takes anything that is neither zip nor .npy for a pickle; say what is expected.
            if not zipfile.is_zipfile(stream):
                raise npz_error(
                    path, "not an .npz archive (a zip of .npy arrays, as numpy.savez writes)"
                )
            stream.seek(0)
            with np.load(stream, allow_pickle=False) as archive:
                return {key: archive[key] for key in archive.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as failure:
        raise npz_error(path, f"cannot read the inputs: {failure}") from None


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """The .npz archive of `arrays`, for `write_atomically`."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def candidate_keys(name: str, index: int) -> list[str]:
    """The keys argument #`index` called `name` may be stored under, without repeats."""
    return list(dict.fromkeys([name, f"arg{index}", f"arr_{index}"]))


def restore_element_type(array: np.ndarray, value_type: Attribute) -> np.ndarray:
    """`array` viewed as `value_type`'s elements where it holds them as raw bytes (bf16, fp8)."""
    if array.dtype.kind != "V":
        return array
    shaped = isinstance(value_type, TensorType | MemRefType)
    element_type = value_type.get_element_type() if shaped else value_type
    try:
        dtype = to_numpy_dtype(element_type)
    except ValueError:
        return array  # the interpreter rejects the argument's type, at the function
    return array.view(dtype) if array.dtype.itemsize == dtype.itemsize else array
