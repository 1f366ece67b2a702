"""The reference interpreter of graph-level IR: func, arith and every `graph` op on numpy arrays.

Each `graph` op runs its own `evaluate`, so this file names no op: `GraphFunctions` gets one `@impl`
per op of the dialect and checks the result arrays against the op's result types, so that a wrong
`evaluate` is reported at its op. `ArithTensorFunctions` is xDSL's arith interpreter with
`arith.constant` of dense tensors producing numpy arrays.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters.arith import ArithFunctions
from xdsl.traits import IsTerminator

from ziggurat.diagnostics import DiagnosticError, error_at
from ziggurat.dialects.graph import Graph, GraphOp
from ziggurat.interpreters.interpreter import (
    find_function,
    random_inputs,
    register_interpreter_functions,
    run_function,
    value_shape_and_dtype,
)
from ziggurat.ir.tensor_constants import constant_array

__all__ = [
    "ArithTensorFunctions",
    "GraphFunctions",
    "find_function",
    "random_inputs",
    "register_interpreter_functions",
    "run_function",
]


@register_impls
class ArithTensorFunctions(ArithFunctions):
    """xDSL's arith implementations; `arith.constant dense<...>` gives a numpy array."""

    @impl(arith.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues
    ) -> PythonValues:
        if (array := constant_array(op.result)) is not None:
            return (array,)
        # Scalars as xDSL's arith expects them; `@impl` wrapped that method, so it
        # returns an OpImplResult.
        return ArithFunctions.run_constant(self, interpreter, op, args).values


def check_evaluated(op: GraphOp, results: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """`op.evaluate`'s `results`, checked against the op's result types.

    A mismatch is a bug in the op's reference semantics, reported at the op by
    every caller (the interpreter, constant folding) in the same words.
    """
    if len(results) != len(op.results):
        raise error_at(
            op,
            f"'{op.name}' evaluated to {len(results)} arrays for its {len(op.results)} "
            "results; its reference semantics are wrong",
        )
    for index, (array, result) in enumerate(zip(results, op.results)):
        shape, dtype = value_shape_and_dtype(result.type, f"result #{index}", op)
        if array.shape != shape or array.dtype != dtype:
            raise error_at(
                op,
                f"'{op.name}' evaluated result #{index} to shape {list(array.shape)} and dtype "
                f"{array.dtype}, but its type is {result.type}; its reference semantics are wrong",
            )
    return tuple(results)


def _run_graph_op(
    functions: InterpreterFunctions, interpreter: Interpreter, op: GraphOp, args: PythonValues
) -> PythonValues:
    try:
        # IEEE results (inf, NaN) are the op's semantics, as in onnxruntime: no numpy warnings.
        with np.errstate(all="ignore"):
            results = op.evaluate(*args)
    except DiagnosticError:
        raise
    except Exception as error:  # evaluate is numpy code: whatever fails, fails at this op
        raise error_at(
            op, f"evaluating '{op.name}' failed: {type(error).__name__}: {error}"
        ) from error
    return check_evaluated(op, results)


def _graph_functions_class() -> type[InterpreterFunctions]:
    implementations = {
        f"run_{op_type.name.replace('.', '_')}": impl(op_type)(_run_graph_op)
        for op_type in Graph.operations
        if issubclass(op_type, GraphOp) and not op_type.has_trait(IsTerminator)
    }
    functions = type("GraphFunctions", (InterpreterFunctions,), implementations)
    functions.__doc__ = "Every non-terminator `graph` op, through its `evaluate`."
    functions.__module__ = __name__
    return register_impls(functions)


GraphFunctions = _graph_functions_class()
