"""Running a function of a module on numpy arrays, at any IR level, with xDSL's interpreter.

`run_function(module, inputs)` builds an `xdsl.interpreter.Interpreter` with every registered set of
implementations (ziggurat's `CORE_FUNCTIONS`, then plugins', see `register_interpreter_functions`)
and calls the entry function. Failures are `DiagnosticError`s at the function (wrong inputs) or at
the op (no implementation, or one that fails). Scalars are `IntegerAttr`/`FloatAttr` of their type, as
xDSL's own interpreters (arith, scf) take and give them: `scalar_value` reads one.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, MemRefType, ModuleOp, TensorType, i1
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues
from xdsl.interpreters.builtin import scalar_attr
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from ziggurat.diagnostics import error_at
from ziggurat.dtypes import to_numpy_dtype

InterpreterFunctionsFactory = Callable[[], InterpreterFunctions]

ENTRY_POINT_GROUP = "ziggurat.interpreter"


def scalar_value(value):
    """The Python number a scalar `IntegerAttr`/`FloatAttr` holds (an i1 as a bool); any other
    value (an array) as it is."""
    if isinstance(value, IntegerAttr):
        data = value.value.data
        # A signless i1 holds true as -1, its one bit read as signed.
        return bool(data) if value.type == i1 else data
    if isinstance(value, FloatAttr):
        return value.value.data
    return value


def _func_functions() -> InterpreterFunctions:
    from xdsl.interpreters.func import FuncFunctions

    return FuncFunctions()


def _builtin_functions() -> InterpreterFunctions:
    from xdsl.interpreters.builtin import BuiltinFunctions

    return BuiltinFunctions()


def _arith_functions() -> InterpreterFunctions:
    from ziggurat.interpreters.graph_interpreter import ArithTensorFunctions

    return ArithTensorFunctions()


def _graph_functions() -> InterpreterFunctions:
    from ziggurat.interpreters.graph_interpreter import GraphFunctions

    return GraphFunctions()


def _tensor_functions() -> InterpreterFunctions:
    from ziggurat.interpreters.tensor_interpreter import TensorFunctions

    return TensorFunctions()


def _tile_functions() -> InterpreterFunctions:
    from ziggurat.interpreters.tile_interpreter import TileFunctions

    return TileFunctions()


def _scf_functions() -> InterpreterFunctions:
    from xdsl.interpreters.scf import ScfFunctions

    return ScfFunctions()


def _loop_functions() -> InterpreterFunctions:
    from ziggurat.interpreters.loop_interpreter import LoopFunctions

    return LoopFunctions()


CORE_FUNCTIONS: dict[str, InterpreterFunctionsFactory] = {
    "func": _func_functions,
    "builtin": _builtin_functions,
    "arith": _arith_functions,
    "graph": _graph_functions,
    "tensor": _tensor_functions,
    "tile": _tile_functions,
    "scf": _scf_functions,
    "loop": _loop_functions,
}
"""ziggurat's own implementations, by the dialect they cover."""

CORE_OVERRIDES = {"loop"}
"""Core sets that replace earlier ones: the loop set runs linalg ops on memrefs and on tensors."""


@dataclass(frozen=True)
class _Registration:
    factory: InterpreterFunctionsFactory
    override: bool


_runtime_registrations: list[_Registration] = []


def register_interpreter_functions(
    factory: InterpreterFunctionsFactory, *, override: bool = False
) -> None:
    """Add a set of implementations to every interpreter built from now on.

    A set is an `InterpreterFunctions` subclass (`@register_impls`) holding the
    `@impl` functions of some ops; `factory` returns one when called with no
    arguments (usually the class itself). The runner registers ziggurat's own sets
    (`CORE_FUNCTIONS`, one per level, loaded lazily), then each entry point of the
    group `ziggurat.interpreter`, then the sets registered here. A second
    implementation for an op is an error unless registered with `override=True`,
    which replaces the earlier one: a plugin cannot replace a semantics by accident.
    """
    _runtime_registrations.append(_Registration(factory, override))


@functools.cache
def _plugin_registrations() -> tuple[_Registration, ...]:
    return tuple(
        _Registration(entry_point.load(), override=False)
        for entry_point in entry_points(group=ENTRY_POINT_GROUP)
    )


def _all_registrations() -> list[_Registration]:
    core = [
        _Registration(factory, override=name in CORE_OVERRIDES)
        for name, factory in CORE_FUNCTIONS.items()
    ]
    return [*core, *_plugin_registrations(), *_runtime_registrations]


@dataclass
class _OpTracker(Interpreter.Listener):
    """Refuses ops without implementation and remembers which ops are running,
    so that a failure deep in a call is reported at the innermost op."""

    implemented: set[type[Operation]]
    running: list[Operation] = field(default_factory=list)

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        if type(op) not in self.implemented:
            raise error_at(op, f"no interpreter implementation for '{op.name}'")
        self.running.append(op)

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        self.running.pop()


def build_interpreter(module: ModuleOp) -> Interpreter:
    """An interpreter for `module` with every registered set of implementations."""
    return _build_interpreter(module)[0]


def _build_interpreter(module: ModuleOp) -> tuple[Interpreter, _OpTracker]:
    interpreter = Interpreter(module)
    implemented: set[type[Operation]] = set()
    for registration in _all_registrations():
        functions = registration.factory()
        interpreter.register_implementations(functions, override=registration.override)
        # xDSL keeps the implemented op types private to the interpreter; the
        # tracker needs them to name the op that has none.
        implemented.update(op_type for op_type, _ in functions._impls())  # pyright: ignore[reportPrivateUsage]
    tracker = _OpTracker(implemented)
    interpreter.listeners = (*interpreter.listeners, tracker)
    return interpreter, tracker


# --------------------------------------------------------------------------- #
# The entry function and its arguments
# --------------------------------------------------------------------------- #


def find_function(module: ModuleOp, name: str | None = None) -> func.FuncOp:
    """The function called `name`; by default `main`, else the module's only public function."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    listed = ", ".join(f"@{f.sym_name.data}" for f in functions) or "none"
    if name is not None:
        for function in functions:
            if function.sym_name.data == name:
                return function
        raise error_at(module, f"no function @{name} in the module (functions: {listed})")
    for function in functions:
        if function.sym_name.data == "main":
            return function
    public = [f for f in functions if f.sym_visibility is None or f.sym_visibility.data == "public"]
    if len(public) != 1:
        raise error_at(
            module,
            f"cannot choose the function to run: there is no @main and "
            f"{len(public)} public functions (functions: {listed}); name one",
        )
    return public[0]


def argument_names(function: func.FuncOp) -> list[str]:
    """The names of the function's arguments as the printer writes them, `arg<i>` where unnamed.

    Each is unique: xDSL keeps `%x_0` and `%x_1` as the same name hint `x`, which the printer
    and these names write `x` and `x_1`."""
    if not function.body.blocks:
        return [f"arg{i}" for i in range(len(function.function_type.inputs))]
    names: list[str] = []
    for i, arg in enumerate(function.body.block.args):
        name = base = arg.name_hint or f"arg{i}"
        suffix = 0
        while name in names:
            suffix += 1
            name = f"{base}_{suffix}"
        names.append(name)
    return names


def value_shape_and_dtype(
    value_type: Attribute, what: str, where: Operation
) -> tuple[tuple[int, ...], np.dtype]:
    """The numpy shape and dtype that hold a value of `value_type` (`()` for scalars)."""
    element_type, shape = value_type, ()
    if isinstance(value_type, TensorType | MemRefType):
        element_type, shape = value_type.get_element_type(), tuple(value_type.get_shape())
        if any(dim < 0 for dim in shape):
            raise error_at(
                where, f"{what} has the dynamic type {value_type}; give it a static shape"
            )
    try:
        return shape, to_numpy_dtype(element_type)
    except ValueError:
        raise error_at(
            where,
            f"{what} has type {value_type}, which the interpreter cannot hold as a numpy array",
        ) from None


def check_inputs(function: func.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """`inputs` as arrays, after checking their number, shapes and dtypes against the signature."""
    name = function.sym_name.data
    arg_types = function.function_type.inputs.data
    names = argument_names(function)
    if len(inputs) != len(arg_types):
        raise error_at(
            function,
            f"@{name} takes {len(arg_types)} arguments ({', '.join(names) or 'none'}), "
            f"but {len(inputs)} inputs were given",
        )
    checked: list[np.ndarray] = []
    for index, (array, arg_type, arg_name) in enumerate(zip(inputs, arg_types, names)):
        what = f"argument #{index} '{arg_name}' of @{name}"
        shape, dtype = value_shape_and_dtype(arg_type, what, function)
        array = np.asarray(array)
        if array.shape != shape:
            raise error_at(
                function,
                f"input for {what} has shape {list(array.shape)}, but the argument is {arg_type}",
            )
        if array.dtype != dtype:
            raise error_at(
                function,
                f"input for {what} has dtype {array.dtype}, but the argument is {arg_type} "
                f"(dtype {dtype})",
            )
        checked.append(array)
    return checked


MAX_RANDOM_INPUT_BYTES = int(os.environ.get("ZIGGURAT_MAX_INPUT_BYTES", 2 << 30))
"""Largest random input made for one argument: beyond it a run fails at once with a message
rather than by exhausting memory (random floats are drawn in float64, twice the size)."""


def random_inputs(function: func.FuncOp, seed: int = 0) -> list[np.ndarray]:
    """Reproducible inputs for every argument: standard normal floats, small integers."""
    rng = np.random.default_rng(seed)
    names = argument_names(function)
    inputs: list[np.ndarray] = []
    for index, arg_type in enumerate(function.function_type.inputs.data):
        what = f"argument #{index} '{names[index]}' of @{function.sym_name.data}"
        shape, dtype = value_shape_and_dtype(arg_type, what, function)
        size = math.prod(shape) * dtype.itemsize
        if size > MAX_RANDOM_INPUT_BYTES:
            raise error_at(
                function,
                f"{what} ({arg_type}) needs {size:,} bytes of random input, over the limit of "
                f"{MAX_RANDOM_INPUT_BYTES:,} (give inputs, or set ZIGGURAT_MAX_INPUT_BYTES)",
            )
        if dtype == np.bool_:
            array = rng.integers(0, 2, size=shape).astype(np.bool_)
        elif dtype.kind in "iu":
            low = 0 if dtype.kind == "u" else -8
            array = rng.integers(low, 8, size=shape).astype(dtype)
        else:
            array = rng.standard_normal(size=shape).astype(dtype)
        inputs.append(np.asarray(array))
    return inputs


# --------------------------------------------------------------------------- #
# Running
# --------------------------------------------------------------------------- #


def _as_python_values(
    interpreter: Interpreter, function: func.FuncOp, inputs: list[np.ndarray]
) -> tuple:
    # Scalar arguments (f32, i64, ...) enter as attributes of their type, as xDSL's scalar
    # implementations expect.
    return tuple(
        array
        if isinstance(arg_type, TensorType | MemRefType)
        else scalar_attr(array.item(), arg_type, interpreter.index_bitwidth)
        for array, arg_type in zip(inputs, function.function_type.inputs.data)
    )


def _check_results(function: func.FuncOp, values: PythonValues) -> list[np.ndarray]:
    results: list[np.ndarray] = []
    for index, (value, result_type) in enumerate(zip(values, function.function_type.outputs.data)):
        what = f"result #{index} of @{function.sym_name.data}"
        shape, dtype = value_shape_and_dtype(result_type, what, function)
        array = np.asarray(scalar_value(value))
        if not isinstance(result_type, TensorType):
            array = array.astype(dtype)
        if array.shape != shape or array.dtype != dtype:
            raise error_at(
                function,
                f"{what} was computed as an array of shape {list(array.shape)} and dtype "
                f"{array.dtype}, but the function returns {result_type}",
            )
        results.append(array)
    return results


def run_function(
    module: ModuleOp,
    inputs: Sequence[np.ndarray],
    function: str | None = None,
    listeners: Sequence[Interpreter.Listener] = (),
) -> list[np.ndarray]:
    """Run func.func `function` (default: `main`, else the only public function) on `inputs`.

    Inputs are checked against the function's signature: numpy arrays of the
    element type's dtype (`ziggurat.dtypes.to_numpy_dtype`), Python numbers for
    scalar arguments, as in xDSL's own interpreters. Results come back as arrays
    of the function's result types (0-d for scalars). `listeners` see every op run.
    """
    func_op = find_function(module, function)
    if not func_op.body.blocks:
        raise error_at(func_op, f"@{func_op.sym_name.data} is a declaration; it has no body to run")
    arrays = check_inputs(func_op, inputs)
    interpreter, tracker = _build_interpreter(module)
    interpreter.listeners = (*interpreter.listeners, *listeners)
    try:
        values = interpreter.call_op(func_op, _as_python_values(interpreter, func_op, arrays))
    except InterpretationError as error:
        failing = tracker.running[-1] if tracker.running else func_op
        raise error_at(failing, f"interpretation failed: {error}") from None
    return _check_results(func_op, values)
