"""Import an ONNX model into the `graph` dialect: one `func.func @main` whose arguments are the graph
inputs that are not initializers and whose results are the graph outputs, every value statically typed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, NameLoc, StringAttr, TensorType, UnknownLoc
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.traits import Pure
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import VerifyException

from ziggurat.diagnostics import Diagnostic, DiagnosticError, emit
from ziggurat.dialects.graph import ConstantOp, GraphOp
from ziggurat.dtypes import from_numpy_dtype, to_numpy_dtype
from ziggurat.frontends.onnx.node import NodeContext, element_type_of, node_label
from ziggurat.frontends.onnx.ops import CONVERTERS, MISSING_GRAPH_OPS, NEWEST_VERSIONS
from ziggurat.ir.tensor_constants import dense_elements
from ziggurat.verifier import verify_module

SUPPORTED_OPSETS = range(6, onnx.defs.onnx_opset_version() + 1)
"""Versions of the default ONNX domain the importer accepts: from 6 (where the onnx package's
conformance models begin) to the newest the installed onnx package defines. Each converter
states the newest version of its operators that it handles (`ops.NEWEST_VERSIONS`); a node that
the model's opset resolves to a newer version is reported."""

DEFAULT_DOMAINS = ("", "ai.onnx")

ModelSource = onnx.ModelProto | str | Path | bytes


# --------------------------------------------------------------------------- #
# Loading and checking
# --------------------------------------------------------------------------- #


def load_model(model_or_path: ModelSource) -> tuple[onnx.ModelProto, str]:
    """The model (external data loaded) and the name diagnostics use for it; checked with onnx.checker."""
    if isinstance(model_or_path, onnx.ModelProto):
        model, where = model_or_path, model_or_path.graph.name or "<model>"
        check_target: onnx.ModelProto | str = model
    elif isinstance(model_or_path, bytes):
        where = "<bytes>"
        model = _parse(lambda: onnx.load_model_from_string(model_or_path), where)
        check_target = model
    else:
        path = Path(model_or_path)
        where = str(path)
        if not path.is_file():
            raise DiagnosticError(
                Diagnostic("error", "cannot read the ONNX model: no such file", file=where)
            )
        model = _parse(lambda: onnx.load(str(path), load_external_data=True), where)
        # From the path, the checker reads external data and models past protobuf's 2 GB limit itself.
        check_target = str(path)
    try:
        onnx.checker.check_model(check_target)
    except (onnx.checker.ValidationError, ValueError) as error:
        raise DiagnosticError(
            Diagnostic("error", f"invalid ONNX model: {_first_line(error)}", file=where)
        ) from None
    return model, where


def _parse(load, where: str) -> onnx.ModelProto:
    try:
        return load()
    # onnx.load is a protobuf parser plus file reads for external data: any failure is the file's.
    except Exception as error:  # noqa: BLE001
        raise DiagnosticError(
            Diagnostic("error", f"not a readable ONNX model: {_first_line(error)}", file=where)
        ) from None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def default_opset(model: onnx.ModelProto) -> int | None:
    """The model's version of the default (ai.onnx) domain."""
    for entry in model.opset_import:
        if entry.domain in DEFAULT_DOMAINS:
            return entry.version
    return None


def unsupported_nodes(model: onnx.ModelProto) -> list[tuple[str, str]]:
    """(operator, node label) for every node no converter handles, in graph order."""
    found = []
    for index, node in enumerate(model.graph.node):
        if node.domain not in DEFAULT_DOMAINS:
            found.append((f"{node.domain}.{node.op_type}", node_label(node, index)))
        elif node.op_type not in CONVERTERS:
            found.append((node.op_type, node_label(node, index)))
    return found


def _check_supported(model: onnx.ModelProto, where: str) -> int:
    opset = default_opset(model)
    unsupported = unsupported_nodes(model)
    if unsupported:
        listed = ", ".join(f"{op} ({label})" for op, label in unsupported)
        notes = [
            Diagnostic(
                "note",
                f"{op} needs {MISSING_GRAPH_OPS[op]}, which the graph dialect does not have yet",
            )
            for op in dict.fromkeys(op for op, _ in unsupported)
            if op in MISSING_GRAPH_OPS
        ]
        raise DiagnosticError(
            Diagnostic("error", f"unsupported ONNX operators: {listed}", file=where, notes=notes)
        )
    if model.graph.node and opset not in SUPPORTED_OPSETS:
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"the model uses ONNX opset {opset}; the importer supports opsets "
                f"{SUPPORTED_OPSETS.start} to {SUPPORTED_OPSETS.stop - 1}",
                file=where,
            )
        )
    opset = opset or SUPPORTED_OPSETS.stop - 1
    if too_new := _newer_than_handled(model.graph, opset):
        raise DiagnosticError([Diagnostic("error", problem, file=where) for problem in too_new])
    return opset


def _newer_than_handled(graph: onnx.GraphProto, opset: int, scope: str = "") -> list[str]:
    """A message for every node whose operator version at `opset` is newer than its converter handles
    (`scope` places a subgraph's nodes)."""
    problems = []
    for index, node in enumerate(graph.node):
        newest = NEWEST_VERSIONS.get(node.op_type)
        if node.domain not in DEFAULT_DOMAINS or newest is None:
            continue
        try:
            version = onnx.defs.get_schema(node.op_type, opset, "").since_version
        except onnx.defs.SchemaError:
            continue  # not defined at this opset: onnx.checker reports it
        if version > newest:
            problems.append(
                f"{node_label(node, index)} ({node.op_type}){scope}: opset {opset} makes it {node.op_type}-{version}, "
                f"but the importer handles {node.op_type} up to version {newest}"
            )
    return problems


# --------------------------------------------------------------------------- #
# Types and input shapes
# --------------------------------------------------------------------------- #


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """`name=1x3x224x224` (or `name=1,3,224,224`; `name=` for a scalar) as (name, shape)."""
    name, sep, dims = text.rpartition("=")
    if not sep or not name:
        raise DiagnosticError(
            Diagnostic(
                "error", f"invalid --input-shape '{text}': expected NAME=DIMS, e.g. x=1x3x224x224"
            )
        )
    try:
        shape = tuple(int(d) for d in dims.replace(",", "x").split("x")) if dims else ()
    except ValueError:
        shape = None
    if shape is None or any(d < 0 for d in shape):
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"invalid --input-shape '{text}': dimensions must be non-negative integers "
                "separated by 'x', e.g. x=1x3x224x224",
            )
        )
    return name, shape


def _input_types(
    model: onnx.ModelProto,
    input_shapes: Mapping[str, Sequence[int]],
    where: str,
    bound: Mapping[str, np.ndarray] | None = None,
) -> list[tuple[onnx.ValueInfoProto, TensorType]]:
    """The graph inputs that are neither initializers nor `bound`, with static types; every dynamic
    one is reported."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    inputs = [value for value in model.graph.input if value.name not in initializers]
    names = [value.name for value in inputs]
    if unknown := [name for name in bound or {} if name not in names]:
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"--bind names {', '.join(repr(n) for n in unknown)}, which "
                f"{'is' if len(unknown) == 1 else 'are'} not an input of the model "
                f"(inputs: {', '.join(repr(n) for n in names) or 'none'})",
                file=where,
            )
        )
    inputs = [value for value in inputs if value.name not in (bound or {})]
    if unknown := [name for name in input_shapes if name not in names]:
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"--input-shape names {', '.join(repr(n) for n in unknown)}, which "
                f"{'is' if len(unknown) == 1 else 'are'} not an input of the model "
                f"(inputs: {', '.join(repr(n) for n in names) or 'none'})",
                file=where,
            )
        )
    typed, problems = [], []
    for value in inputs:
        if not value.type.HasField("tensor_type"):
            raise DiagnosticError(
                Diagnostic("error", f"input '{value.name}' is not a tensor", file=where)
            )
        tensor_type = value.type.tensor_type
        element_type = element_type_of(tensor_type.elem_type, f"input '{value.name}'")
        dims = list(tensor_type.shape.dim) if tensor_type.HasField("shape") else None
        if value.name in input_shapes:
            shape = tuple(input_shapes[value.name])
            if dims is not None and len(dims) != len(shape):
                problems.append(
                    f"--input-shape gives input '{value.name}' {len(shape)} dimensions, but the model "
                    f"declares {len(dims)}"
                )
                continue
            for index, (dim, size) in enumerate(zip(dims or [], shape)):
                if dim.HasField("dim_value") and dim.dim_value != size:
                    problems.append(
                        f"--input-shape sets dimension {index} of input '{value.name}' to {size}, but the "
                        f"model fixes it to {dim.dim_value}"
                    )
            typed.append((value, TensorType(element_type, shape)))
            continue
        if dims is None:
            problems.append(
                f"input '{value.name}' has an unknown rank; set its shape with --input-shape {value.name}=..."
            )
            continue
        dynamic = [(i, d.dim_param) for i, d in enumerate(dims) if not d.HasField("dim_value")]
        if dynamic:
            listed = ", ".join(f"{i} ('{param}')" if param else f"{i}" for i, param in dynamic)
            example = "x".join(str(d.dim_value) if d.HasField("dim_value") else "1" for d in dims)
            which = (
                f"dynamic dimensions {listed}; set them"
                if len(dynamic) > 1
                else f"a dynamic dimension {listed}; set it"
            )
            problems.append(
                f"input '{value.name}' has {which} with --input-shape {value.name}={example}"
            )
            continue
        typed.append((value, TensorType(element_type, [d.dim_value for d in dims])))
    if problems:
        raise DiagnosticError([Diagnostic("error", problem, file=where) for problem in problems])
    return typed


def _bound_values(
    model: onnx.ModelProto, bound: Mapping[str, np.ndarray], where: str
) -> dict[str, np.ndarray]:
    """The bound inputs' values in their declared element types; a shape or type that cannot be is reported."""
    declared = {value.name: value.type.tensor_type for value in model.graph.input}
    values, problems = {}, []
    for name, given in bound.items():
        tensor_type = declared[name]
        dtype = to_numpy_dtype(element_type_of(tensor_type.elem_type, f"input '{name}'"))
        array = np.asarray(given)
        converted = array.astype(dtype)
        if not np.array_equal(converted.astype(array.dtype), array, equal_nan=True):
            problems.append(
                f"--bind {name}: the values do not fit the input's element type {dtype}"
            )
            continue
        dims = tensor_type.shape.dim if tensor_type.HasField("shape") else None
        if dims is not None and (
            len(dims) != array.ndim
            or any(d.HasField("dim_value") and d.dim_value != n for d, n in zip(dims, array.shape))
        ):
            wanted = ", ".join(str(d.dim_value) if d.HasField("dim_value") else "?" for d in dims)
            problems.append(
                f"--bind {name}: the value has shape {list(array.shape)}, but the input's is [{wanted}]"
            )
            continue
        values[name] = converted
    if problems:
        raise DiagnosticError([Diagnostic("error", problem, file=where) for problem in problems])
    return values


def _with_static_inputs(
    model: onnx.ModelProto, typed_inputs: list[tuple[onnx.ValueInfoProto, TensorType]]
) -> onnx.ModelProto:
    """A copy of the graph's skeleton whose inputs carry the static shapes (for ONNX shape inference).

    Bound inputs stay inputs there: their values are the importer's to use, and given to ONNX's
    inference they would reach its shape functions' corners (STFT's ignores `onesided` when its
    frame length is known).

    Initializers stay in the original model: inference needs only their
    declared dims, and copying them would double the memory of large models.
    """
    skeleton = onnx.ModelProto()
    skeleton.CopyFrom(model)
    del skeleton.graph.initializer[:]
    for tensor in model.graph.initializer:
        stub = skeleton.graph.initializer.add()
        stub.name, stub.data_type = tensor.name, tensor.data_type
        stub.dims.extend(tensor.dims)
        # Shape inference reads constant values (Reshape's shape, Slice's starts) from small initializers.
        if int(np.prod(tensor.dims, dtype=np.int64)) <= 1024:
            stub.CopyFrom(tensor)
    by_name = {value.name: tensor_type for value, tensor_type in typed_inputs}
    for value in skeleton.graph.input:
        if value.name in by_name:
            shape = value.type.tensor_type.shape
            shape.Clear()
            for size in by_name[value.name].get_shape():
                shape.dim.add().dim_value = size
    return skeleton


def _inferred_shapes(
    model: onnx.ModelProto, where: str
) -> dict[str, tuple[int, tuple[int, ...] | None]]:
    """ONNX shape inference: value name -> (element type, static shape or None)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(
            model, check_type=True, strict_mode=True, data_prop=True
        )
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError) as error:
        raise DiagnosticError(
            Diagnostic("error", f"ONNX shape inference failed: {_first_line(error)}", file=where)
        ) from None
    shapes = {}
    for value in [*inferred.graph.value_info, *inferred.graph.output]:
        if not value.type.HasField("tensor_type"):
            continue
        tensor_type = value.type.tensor_type
        dims = tensor_type.shape.dim if tensor_type.HasField("shape") else None
        static = dims is not None and all(d.HasField("dim_value") for d in dims)
        shapes[value.name] = (
            tensor_type.elem_type,
            tuple(d.dim_value for d in dims) if static else None,
        )
    return shapes


# --------------------------------------------------------------------------- #
# Building the function
# --------------------------------------------------------------------------- #


class Importer:
    """Builds `@main` node by node; converters reach it through their `NodeContext`."""

    def __init__(self, model: onnx.ModelProto, opset: int, where: str):
        self.model = model
        self.opset = opset
        self.where = where
        self.block = Block()
        self.values: dict[str, SSAValue] = {}
        self.initializers = {tensor.name: tensor for tensor in model.graph.initializer}
        self.graph_inputs = {value.name for value in model.graph.input} - set(self.initializers)
        """Names of the graph's inputs (bound or not), for diagnostics that suggest binding one."""
        self._constants: dict[SSAValue, np.ndarray | None] = {}
        self._not_produced: dict[str, str] = {}
        """Node outputs a converter leaves out (training statistics, say) -> the node's label."""

    # ---- values ----

    def inputs_feeding(self, name: str) -> list[str]:
        """The graph inputs whose values `name` depends on (`name` itself if it is one), in graph order."""
        producers = {output: node for node in self.model.graph.node for output in node.output}
        found, seen, pending = set(), set(), [name]
        while pending:
            value = pending.pop()
            if value in seen:
                continue
            seen.add(value)
            if value in self.graph_inputs:
                found.add(value)
            elif value in producers:
                node = producers[value]
                pending += [v for v in node.input if v]
                # A subgraph (If branch, Loop body) reads outer values by name.
                for attribute in node.attribute:
                    for subgraph in [attribute.g] * attribute.HasField("g") + list(
                        attribute.graphs
                    ):
                        pending += [v for n in subgraph.node for v in n.input if v]
        return [value.name for value in self.model.graph.input if value.name in found]

    def value(self, name: str, user: str) -> SSAValue:
        """The SSA value of ONNX value `name`, creating initializers' constants on first use."""
        if name in self.values:
            return self.values[name]
        if name in self.initializers:
            array = numpy_helper.to_array(self.initializers[name])
            constant = self.constant(array, name)
            return constant
        if name in self._not_produced:
            message = f"{user} uses '{name}', an output of {self._not_produced[name]} that inference does not compute"
        else:
            message = f"{user} uses '{name}', which no earlier node, input or initializer defines"
        raise DiagnosticError(Diagnostic("error", message, file=self.where))

    def constant(self, array: np.ndarray, name: str | None = None) -> SSAValue:
        """A `graph.constant` of `array` (stored as a splat when all elements are equal)."""
        array = np.asarray(array)
        try:
            op = ConstantOp(
                dense_elements(array, TensorType(from_numpy_dtype(array.dtype), array.shape))
            )
        except ValueError as error:
            raise DiagnosticError(
                Diagnostic(
                    "error",
                    f"constant '{name or '?'}' cannot be represented: {error}",
                    file=self.where,
                )
            ) from None
        self.insert(op, name)
        self._constants[op.output] = array
        if name is not None:
            self.values[name] = op.output
            if SSAValue.is_valid_name(name):
                op.output.name_hint = name
        return op.output

    def constant_array(self, value: SSAValue) -> np.ndarray | None:
        """The value of `value` if the import can compute it now, else None.

        Constants are read; pure graph ops whose operands are all computable are
        evaluated with their own `evaluate` (shape arithmetic such as
        Shape -> Gather -> Concat -> Reshape folds this way); the ops left
        unused are removed when the function is complete.
        """
        if value in self._constants:
            return self._constants[value]
        owner = value.owner
        array = None
        if isinstance(owner, ConstantOp):
            array = owner.to_array()
        elif isinstance(owner, GraphOp) and owner.has_trait(Pure):
            operands = [self.constant_array(operand) for operand in owner.operands]
            if all(operand is not None for operand in operands):
                with np.errstate(all="ignore"):
                    array = owner.evaluate(*operands)[owner.results.index(value)]
        self._constants[value] = array
        return array

    def insert(self, op: Operation, label: str | None) -> None:
        if label:
            op.location = NameLoc(StringAttr(label), UnknownLoc())
        self.block.add_op(op)

    # ---- nodes ----

    def import_node(
        self, node: onnx.NodeProto, index: int, shapes: Mapping, scope: str = ""
    ) -> None:
        context = NodeContext(self, node, index, scope)
        try:
            outputs = CONVERTERS[node.op_type](context)
        except VerifyException as error:
            raise context.error(str(error)) from None
        for position, name in enumerate(node.output):
            if not name:
                continue
            result = outputs[position] if position < len(outputs) else None
            if result is None:
                # An error only if something reads it, which inference graphs do not.
                self._not_produced[name] = f"{context.label} ({node.op_type})"
                continue
            self._check_shape(context, name, result, shapes.get(name))
            if SSAValue.is_valid_name(name) and result.name_hint is None:
                result.name_hint = name
            self.values[name] = result

    def import_subgraph(
        self, graph: onnx.GraphProto, inputs: Sequence[SSAValue], scope: str
    ) -> list[SSAValue]:
        """The outputs of `graph` (an If branch, a Loop or Scan body) built into the current block with
        its inputs bound to `inputs`; `scope` (" in the body of node #3") names its nodes in diagnostics.

        The enclosing graphs' values stay visible inside; the subgraph's own names do not outlive
        it, so an unrolled body can be imported once per iteration.
        """
        unsupported = [
            f"{node.op_type if node.domain in DEFAULT_DOMAINS else f'{node.domain}.{node.op_type}'} "
            f"({node_label(node, index)})"
            for index, node in enumerate(graph.node)
            if node.domain not in DEFAULT_DOMAINS or node.op_type not in CONVERTERS
        ]
        if unsupported:
            raise DiagnosticError(
                Diagnostic(
                    "error",
                    f"unsupported ONNX operators{scope}: {', '.join(unsupported)}",
                    file=self.where,
                )
            )
        if too_new := _newer_than_handled(graph, self.opset, scope):
            raise DiagnosticError(
                [Diagnostic("error", problem, file=self.where) for problem in too_new]
            )
        if len(inputs) != len(graph.input):
            message = f"the subgraph{scope} takes {len(graph.input)} inputs, given {len(inputs)}"
            raise DiagnosticError(Diagnostic("error", message, file=self.where))
        values, initializers, not_produced = (
            dict(self.values),
            self.initializers,
            dict(self._not_produced),
        )
        local = {tensor.name for tensor in graph.initializer} | {
            value.name for value in graph.input
        }
        local |= {name for node in graph.node for name in node.output}
        try:
            self.initializers = {
                **initializers,
                **{tensor.name: tensor for tensor in graph.initializer},
            }
            for name in local:
                self.values.pop(name, None)  # the subgraph's own names shadow the enclosing ones
            for value_info, value in zip(graph.input, inputs):
                self.values[value_info.name] = value
            for index, node in enumerate(graph.node):
                self.import_node(node, index, {}, scope)
            return [
                self.value(output.name, f"the output '{output.name}' of the subgraph{scope}")
                for output in graph.output
            ]
        finally:
            # The enclosing graph's initializers first read inside stay read (one constant, not one per iteration).
            read = {
                name: value
                for name, value in self.values.items()
                if name not in values and name in initializers and name not in local
            }
            self.values, self.initializers, self._not_produced = (
                values | read,
                initializers,
                not_produced,
            )

    def _check_shape(self, context: NodeContext, name: str, result: SSAValue, expected) -> None:
        if expected is None or expected[1] is None:
            return
        elem_type, shape = expected
        actual = result.type
        if not isinstance(actual, TensorType):
            return
        onnx_type = TensorType(element_type_of(elem_type, name), shape)
        if actual.get_element_type() != onnx_type.get_element_type():
            raise context.error(
                f"output '{name}' is {actual} in the graph dialect, but ONNX says {onnx_type}"
            )
        if tuple(actual.get_shape()) != shape:
            # ONNX's shape inference and onnxruntime disagree in corners: a ceil-mode pooling window
            # that would start in the end padding counts for the former only; the graph dialect
            # (like onnxruntime and PyTorch) drops it. The dialect's shape is what the IR computes.
            emit(
                context.diagnostic(
                    "warning",
                    f"output '{name}' is {actual} in the graph dialect, but ONNX shape inference gives "
                    f"{onnx_type}; the graph dialect's shape is kept",
                )
            )

    def finish(
        self, outputs: Sequence[onnx.ValueInfoProto], inputs: Sequence[SSAValue]
    ) -> ModuleOp:
        results = [self.value(output.name, f"graph output '{output.name}'") for output in outputs]
        self.block.add_op(func.ReturnOp(*results))
        function = func.FuncOp(
            "main", ([a.type for a in inputs], [r.type for r in results]), Region(self.block)
        )
        region_dce(function.body)
        return ModuleOp([function])


def import_model(
    model_or_path: ModelSource,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    bound_inputs: Mapping[str, np.ndarray] | None = None,
) -> ModuleOp:
    """An ONNX model (a ModelProto, a path or serialized bytes) as a module with one `func.func @main`.

        module = import_model("resnet.onnx", input_shapes={"x": (1, 3, 224, 224)})

    `input_shapes` sets the shape of inputs by name (needed for dynamic dimensions).
    `bound_inputs` gives inputs fixed values: they become constants and leave `@main`'s
    arguments (for inputs whose values decide shapes, such as a Reshape's target or a Slice's starts).

    Initializers, `Constant` nodes and everything ONNX computes from shapes alone
    become `graph.constant`s; every other node becomes one or a few `graph` ops,
    built with `build_inferred` so that each type comes from the dialect's own
    inference. ONNX shape inference runs first and its static types are compared
    with the dialect's: a different element type is an error at the node, a
    different shape a warning (ONNX's inference and onnxruntime disagree on some
    ceil-mode pools; the dialect sides with onnxruntime). Every failure is a
    `DiagnosticError` naming what is wrong: an unreadable or malformed file, an
    opset outside `SUPPORTED_OPSETS` or an operator version newer than its
    converter handles, a dynamic input dimension (with the `--input-shape` that
    fixes it), every unsupported operator with its node, a node whose attributes
    the dialect cannot express.
    """
    model, where = load_model(model_or_path)
    return import_loaded_model(model, input_shapes, where, bound_inputs=bound_inputs)


def import_loaded_model(
    model: onnx.ModelProto,
    input_shapes: Mapping[str, Sequence[int]] | None,
    where: str,
    on_node: Callable[[int, int], None] | None = None,
    bound_inputs: Mapping[str, np.ndarray] | None = None,
) -> ModuleOp:
    """`import_model` for a model `load_model` returned; `where` names it in diagnostics.

    `on_node(done, total)` is called after each node (for progress displays).
    """
    opset = _check_supported(model, where)
    typed_inputs = _input_types(model, input_shapes or {}, where, bound_inputs)
    bound = _bound_values(model, bound_inputs or {}, where)
    shapes = _inferred_shapes(_with_static_inputs(model, typed_inputs), where)

    importer = Importer(model, opset, where)
    for name, array in bound.items():
        importer.constant(array, name)
    arguments = []
    for value, tensor_type in typed_inputs:
        argument = importer.block.insert_arg(tensor_type, len(importer.block.args))
        if SSAValue.is_valid_name(value.name):
            argument.name_hint = value.name
        importer.values[value.name] = argument
        arguments.append(argument)
    for index, node in enumerate(model.graph.node):
        importer.import_node(node, index, shapes)
        if on_node is not None:
            on_node(index + 1, len(model.graph.node))
    module = importer.finish(model.graph.output, arguments)
    verify_module(module)
    return module
