"""The loop level on numpy: memrefs are numpy arrays and views of them are numpy views, so that
the output of `tile-to-loop` and the loop passes runs and can be compared with the levels above.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, ModuleOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.interpreters.builtin import scalar_attr
from xdsl.ir import Operation

from ziggurat.diagnostics import error_at
from ziggurat.dialects import loop
from ziggurat.dialects.graph import ConstantOp, sliding_windows
from ziggurat.dtypes import to_numpy_dtype
from ziggurat.interpreters.interpreter import (
    argument_names,
    find_function,
    run_function,
    scalar_value,
)
from ziggurat.interpreters.tensor_interpreter import TensorFunctions, run_generic


def _dtype(memref_type: MemRefType) -> np.dtype:
    return to_numpy_dtype(memref_type.get_element_type())


def _mixed(static: Sequence[int], dynamic: Sequence[int]) -> list[int]:
    values = iter(dynamic)
    return [scalar_value(next(values)) if s == DYNAMIC_INDEX else s for s in static]


def _view(op: Operation, array: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    try:
        view = array.reshape(shape)
    except ValueError:
        raise error_at(
            op, f"'{op.name}' cannot view a buffer of shape {list(array.shape)} as {list(shape)}"
        ) from None
    if not np.may_share_memory(view, array):
        raise error_at(
            op,
            f"'{op.name}' of a non-contiguous buffer would need a copy; copy it to a row-major buffer first",
        )
    return view


def write(op: Operation, destination: np.ndarray, value: np.ndarray) -> None:
    """`destination[...] = value`, or an error at `op` when the destination is read-only."""
    if not destination.flags.writeable:
        raise error_at(
            op, f"'{op.name}' writes a read-only buffer (a function input or a constant)"
        )
    destination[...] = value


def cast_into(op: Operation, destination: np.ndarray, source: np.ndarray) -> None:
    """Write `source` into `destination` in its type: floats to integers round and saturate."""
    if destination.dtype.kind in "iu" and source.dtype.kind == "f":
        info = np.iinfo(destination.dtype)
        source = np.clip(np.rint(source), info.min, info.max)
    write(op, destination, source)


def _copy(
    op: loop.CopyOp | loop.CopyAsyncOp | memref.CopyOp, source: np.ndarray, destination: np.ndarray
) -> None:
    if isinstance(op, loop.CopyOp | loop.CopyAsyncOp) and op.pad is not None:
        value = op.pad_value.value.data if op.pad_value is not None else 0.0
        source = np.pad(
            source, op.padding(), constant_values=np.asarray(value).astype(source.dtype)
        )
    cast_into(op, destination, source)


@register_impls
class LoopFunctions(InterpreterFunctions):
    """memref views, loop copies, and linalg ops on memrefs.

    A `memref.alloc` (in any memory space) is a zeroed array; `memref.subview`,
    `collapse_shape` and `expand_shape` are zero-copy numpy views of their source
    (a reshape that would need a copy is an error at the op), so a write through a
    view lands in the buffer it looks into. `loop.copy`/`loop.copy_async` pad, then
    cast, as `npu.dma` does (floats to integers round and saturate); `loop.wait`
    has nothing to wait for. `memref.get_global` reads a `memref.global`'s value,
    read-only.

    `linalg` ops on memrefs compute what their tensor forms compute and write it
    into their `outs` buffers; on tensors they are the tensor forms. So this set
    replaces the tensor set's linalg implementations (`CORE_FUNCTIONS` registers it
    with override) and hands tensor operands back to them.
    """

    def __init__(self) -> None:
        # The tensor forms; calling their `@impl` methods gives an OpImplResult, hence `.values`.
        self.tensor = TensorFunctions()

    # -- buffers and views ----------------------------------------------------

    @impl(memref.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: memref.AllocOp, args: PythonValues):
        if args:
            raise error_at(op, "memref.alloc with dynamic sizes is not supported")
        return (np.zeros(op.memref.type.get_shape(), _dtype(op.memref.type)),)

    @impl(memref.SubviewOp)
    def run_subview(self, interpreter: Interpreter, op: memref.SubviewOp, args: PythonValues):
        source, *dynamic = args
        offsets = _mixed(op.static_offsets.get_values(), dynamic[: len(op.offsets)])
        sizes = _mixed(
            op.static_sizes.get_values(), dynamic[len(op.offsets) : len(op.offsets) + len(op.sizes)]
        )
        strides = _mixed(op.static_strides.get_values(), dynamic[len(op.offsets) + len(op.sizes) :])
        if any(stride <= 0 for stride in strides):
            raise error_at(
                op, f"the interpreter runs subviews of positive strides, got {list(strides)}"
            )
        slices = tuple(
            slice(o, o + (n - 1) * s + 1 if n else o, s) for o, n, s in zip(offsets, sizes, strides)
        )
        view = source[slices]
        if view.shape != tuple(sizes):
            raise error_at(
                op,
                f"subview of sizes {sizes} at offsets {offsets} does not fit in a buffer of shape {list(source.shape)}",
            )
        shape = op.result.type.get_shape()
        if [n for n in sizes if n != 1] != [
            n for n in shape if n != 1
        ]:  # a rank-reduced result drops unit dims
            raise error_at(op, f"subview sizes {sizes} do not match its result shape {list(shape)}")
        return (_view(op, view, shape),)

    @impl(memref.CollapseShapeOp)
    def run_collapse_shape(
        self, interpreter: Interpreter, op: memref.CollapseShapeOp, args: PythonValues
    ):
        return (_view(op, args[0], op.result.type.get_shape()),)

    @impl(memref.ExpandShapeOp)
    def run_expand_shape(
        self, interpreter: Interpreter, op: memref.ExpandShapeOp, args: PythonValues
    ):
        return (_view(op, args[0], op.result.type.get_shape()),)

    @impl(memref.GetGlobalOp)
    def run_get_global(self, interpreter: Interpreter, op: memref.GetGlobalOp, args: PythonValues):
        declaration = interpreter.get_op_for_symbol(op.name_)
        assert isinstance(declaration, memref.GlobalOp)
        array = ConstantOp(declaration.initial_value).to_array().reshape(op.memref.type.get_shape())
        array.flags.writeable = False
        return (array,)

    @impl(memref.LoadOp)
    def run_load(self, interpreter: Interpreter, op: memref.LoadOp, args: PythonValues):
        buffer, *indices = args
        value = buffer[tuple(scalar_value(i) for i in indices)].item()
        return (scalar_attr(value, op.res.type, interpreter.index_bitwidth),)

    @impl(memref.StoreOp)
    def run_store(self, interpreter: Interpreter, op: memref.StoreOp, args: PythonValues):
        value, buffer, *indices = args
        write(
            op, buffer[(*(scalar_value(i) for i in indices), ...)], scalar_value(value)
        )  # a 0-d view of the element
        return ()

    # -- copies ---------------------------------------------------------------

    @impl(memref.CopyOp)
    def run_memref_copy(self, interpreter: Interpreter, op: memref.CopyOp, args: PythonValues):
        _copy(op, *args)
        return ()

    @impl(loop.CopyOp)
    def run_copy(self, interpreter: Interpreter, op: loop.CopyOp, args: PythonValues):
        _copy(op, *args)
        return ()

    @impl(loop.CopyAsyncOp)
    def run_copy_async(self, interpreter: Interpreter, op: loop.CopyAsyncOp, args: PythonValues):
        _copy(op, *args)  # done at once: the token has nothing left to wait for
        return (None,)

    @impl(loop.WaitOp)
    def run_wait(self, interpreter: Interpreter, op: loop.WaitOp, args: PythonValues):
        return ()

    # -- linalg on memrefs (tensors go to the tensor set) ----------------------

    @impl(linalg.GenericOp)
    def run_generic(self, interpreter: Interpreter, op: linalg.GenericOp, args: PythonValues):
        if op.results:
            return self.tensor.run_generic(interpreter, op, args).values
        for output, value in zip(
            args[len(op.inputs) :], run_generic(interpreter, op, args, self.tensor.plans)
        ):
            write(op, output, value)
        return ()

    @impl(linalg.FillOp)
    def run_fill(self, interpreter: Interpreter, op: linalg.FillOp, args: PythonValues):
        if op.results:
            return self.tensor.run_fill(interpreter, op, args).values
        value, output = args
        write(op, output, scalar_value(value))
        return ()

    @impl(linalg.MatmulOp)
    def run_matmul(self, interpreter: Interpreter, op: linalg.MatmulOp, args: PythonValues):
        if op.results:
            return self.tensor.run_matmul(interpreter, op, args).values
        a, b, output = args
        write(op, output, output + np.matmul(a, b))
        return ()

    @impl(linalg.TransposeOp)
    def run_transpose(self, interpreter: Interpreter, op: linalg.TransposeOp, args: PythonValues):
        if op.results:
            return self.tensor.run_transpose(interpreter, op, args).values
        source, output = args
        write(op, output, np.transpose(source, op.permutation.get_values()))
        return ()

    @impl(linalg.BroadcastOp)
    def run_broadcast(self, interpreter: Interpreter, op: linalg.BroadcastOp, args: PythonValues):
        if op.results:
            return self.tensor.run_broadcast(interpreter, op, args).values
        source, output = args
        write(op, output, np.expand_dims(source, tuple(op.dimensions.get_values())))
        return ()

    @impl(linalg.Conv2DNchwFchwOp)
    def run_conv_2d_nchw_fchw(
        self, interpreter: Interpreter, op: linalg.Conv2DNchwFchwOp, args: PythonValues
    ):
        if op.results:
            return self.tensor.run_conv_2d_nchw_fchw(interpreter, op, args).values
        x, w, output = args
        strides = [int(s) for s in op.strides.get_values()]
        dilations = [int(d) for d in op.dilations.get_values()]
        windows = sliding_windows(x, w.shape[2:], strides, dilations, output.shape[2:])
        write(op, output, output + np.einsum("nchwij,fcij->nfhw", windows, w, optimize=True))
        return ()


# --------------------------------------------------------------------------- #
# Running a destination-passing function
# --------------------------------------------------------------------------- #


def _unwritten(memref_type: MemRefType) -> np.ndarray:
    """An output buffer before the run: NaN (integers: their minimum), so what is never written shows."""
    dtype = _dtype(memref_type)
    fill = np.nan if dtype.kind == "f" else (np.iinfo(dtype).min if dtype.kind in "iu" else False)
    return np.full(memref_type.get_shape(), fill, dtype)


def run_loop_function(
    module: ModuleOp, inputs: Sequence[np.ndarray], function: str | None = None
) -> dict[str, np.ndarray]:
    """Run a loop-level function on `inputs` (its non-`%result` arguments, in order); returns
    the `%result<i>` buffers by name.

    The outputs start filled with NaN (or the integer minimum) so that an output the
    program never writes shows; the inputs are read-only (a write to one is an error
    at the op).
    """
    func_op = find_function(module, function)
    names = argument_names(func_op)
    pending = iter(inputs)
    arguments: list[np.ndarray] = []
    outputs: dict[str, np.ndarray] = {}
    declared = loop.declared_element_types(func_op)
    for name, arg_type, element_type in zip(names, func_op.function_type.inputs.data, declared):
        if loop.is_output_argument(name, arg_type):
            buffer = _unwritten(arg_type)
            outputs[name] = loop.as_declared(buffer, element_type)  # a view: the run fills it
            arguments.append(buffer)
            continue
        array = next(pending, None)
        if array is None:
            raise error_at(
                func_op,
                f"@{func_op.sym_name.data} needs an input for argument '{name}'; too few inputs",
            )
        if element_type is not None:  # the caller's unsigned integers as the buffer holds them
            array = loop.as_buffer(array, element_type, arg_type)
        array = np.array(array)  # the caller's array stays untouched; ours is read-only
        array.flags.writeable = False
        arguments.append(array)
    if next(pending, None) is not None:
        raise error_at(
            func_op,
            f"@{func_op.sym_name.data} takes {len(arguments) - len(outputs)} inputs; more were given",
        )
    run_function(module, arguments, function)
    return outputs
