"""The tolerance rule and the comparison behind --check, --expect and the per-pass checks: a wrong
answer (a zeroed output, two channels swapped, logits 5% off) fails, the right one passes."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ziggurat import numerics
from ziggurat.diagnostics import DiagnosticError
from ziggurat.tools import ziggurat_compile, ziggurat_run

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def classifier(dtype: type = np.float32, seed: int = 0) -> onnx.ModelProto:
    """conv 3x3 + relu + global average pool + gemm to 10 logits, dense random weights scaled by
    1/sqrt(fan-in) so that the logits are O(1) and differ from class to class."""
    rng = np.random.default_rng(seed)
    channels, features, classes = 3, 16, 10
    weights = {
        "w": rng.normal(0, 1 / np.sqrt(channels * 9), (features, channels, 3, 3)),
        "b": rng.normal(0, 0.1, features),
        "g": rng.normal(0, 1 / np.sqrt(features), (classes, features)),
        "gb": rng.normal(0, 0.1, classes),
    }
    element = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("GlobalAveragePool", ["relu"], ["pool"]),
        helper.make_node("Flatten", ["pool"], ["flat"]),
        helper.make_node("Gemm", ["flat", "g", "gb"], ["logits"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "classifier",
        [helper.make_tensor_value_info("x", element, [1, channels, 12, 12])],
        [helper.make_tensor_value_info("logits", element, [1, classes])],
        [numpy_helper.from_array(value.astype(dtype), name) for name, value in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def zeroed(logits: np.ndarray) -> np.ndarray:
    return np.zeros_like(logits)


def swapped(logits: np.ndarray) -> np.ndarray:
    """Classes 0 and 1 exchanged, as a wrong channel index would."""
    return logits[..., [1, 0, *range(2, logits.shape[-1])]]


def scaled(logits: np.ndarray) -> np.ndarray:
    """Every logit 5% larger."""
    return (logits.astype(np.float64) * 1.05).astype(logits.dtype)


WRONG = [zeroed, swapped, scaled]


# --------------------------------------------------------------------------- #
# The rule
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "dtype, rtol",
    [
        (np.float32, 2.0**-13),
        (np.float64, 2.0**-42),
        (np.float16, 1e-2),
        (ml_dtypes.bfloat16, 3e-2),
        (ml_dtypes.float8_e4m3fn, 0.25),
        (np.int8, 0.0),
        (np.int64, 0.0),
        (np.bool_, 0.0),
    ],
)
def test_the_bound_follows_the_precision(dtype, rtol):
    tolerance = numerics.tolerance_for(np.dtype(dtype))
    assert tolerance.rtol == rtol
    assert tolerance.exact == (rtol == 0)


def test_an_output_computed_in_a_narrower_type_gets_its_bound():
    f32, bf16, f16 = np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)
    assert numerics.tolerance_for(f32, bf16).rtol == 3e-2
    assert numerics.tolerance_for(f32, f16).rtol == 1e-2
    assert numerics.tolerance_for(f16, f32).rtol == 1e-2  # a finer type does not tighten it
    assert numerics.tolerance_for(np.dtype(np.int32), bf16).exact


def test_the_bound_scales_with_the_outputs_magnitude():
    reference = np.array([0.001] * 1000, np.float32)  # the light ResNet-50's shipped output
    bf16 = np.dtype(ml_dtypes.bfloat16)
    assert numerics.compare(reference * np.float32(1.02), reference, computed_in=bf16).ok
    assert not numerics.compare(reference * np.float32(1.04), reference, computed_in=bf16).ok
    big = reference * np.float32(1e6)
    assert numerics.compare(big * np.float32(1.02), big, computed_in=bf16).ok
    assert not numerics.compare(big * np.float32(1.04), big, computed_in=bf16).ok


def test_an_all_zero_output_fails_against_the_light_resnet50s_shipped_output():
    """With constant weights every class scores the same: 0.001 in each of 1000 classes. An absolute
    tolerance of 8e-2 let an all-zero output pass; 3% of the output's magnitude does not."""
    shipped = numpy_helper.to_array(onnx.load_tensor(str(LIGHT / "light_resnet50_output_0.pb")))
    assert np.allclose(shipped, 0.001, atol=1e-6)
    bf16 = np.dtype(ml_dtypes.bfloat16)
    check = numerics.compare(np.zeros_like(shipped), shipped, computed_in=bf16)
    assert not check.ok and check.mismatches == shipped.size
    assert "FAIL" in str(check)
    # The npu run's measured error on it is 5.5e-7 (docs/conformance.md): within 3e-5.
    assert numerics.compare(shipped + np.float32(5.5e-7), shipped, computed_in=bf16).ok


CORPUS = Path(__file__).parent / "data" / "corpus"


@pytest.mark.parametrize("computed_in", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("model", ["resnet18", "mobilenet_v2", "vit"])
def test_wrong_logits_of_a_real_model_fail(model, computed_in):
    """A zeroed output, two classes swapped and one logit off by 5% of the largest all fail in
    either narrow type; the same logits with each one's own rounding to that type pass."""
    (logits,) = np.load(CORPUS / f"{model}.outputs.npz").values()
    computed_in = np.dtype(computed_in)
    largest = int(np.argmax(logits[0]))
    other = int(np.argmin(logits[0]))
    swapped = logits.copy()
    swapped[0, [largest, other]] = logits[0, [other, largest]]
    perturbed = logits.copy()
    perturbed[0, other] += 0.05 * np.abs(logits).max()
    for wrong in (np.zeros_like(logits), swapped, perturbed):
        assert not numerics.compare(wrong, logits, computed_in=computed_in).ok
    rounded = logits.astype(computed_in).astype(np.float32)
    assert numerics.compare(rounded, logits, computed_in=computed_in).ok


def test_integers_and_booleans_must_match_exactly():
    check = numerics.compare(np.array([1, 2, 3]), np.array([1, 2, 4]))
    assert not check.ok and check.where == (2,) and (check.expected, check.actual) == (4, 3)
    assert "bound 0 (exact)" in str(check)
    big = np.array([2**60], np.int64)
    assert not numerics.compare(big + 1, big).ok  # beyond float64's 53 bits
    assert numerics.compare(np.array([True, False]), np.array([True, False])).ok
    assert not numerics.compare(np.array([True, True]), np.array([True, False])).ok


def test_nan_and_infinities_match_only_themselves():
    reference = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    assert numerics.compare(reference.copy(), reference).ok
    assert not numerics.compare(np.array([1.0, 0.0, np.inf, -np.inf], np.float32), reference).ok
    assert not numerics.compare(np.array([1.0, np.nan, np.inf, np.inf], np.float32), reference).ok
    assert not numerics.compare(
        np.array([np.nan, np.nan, np.inf, -np.inf], np.float32), reference
    ).ok


def test_a_shape_or_dtype_that_differs_fails():
    check = numerics.compare(np.zeros((1, 3), np.float32), np.zeros(3, np.float32), name="y")
    assert not check.ok and str(check) == "y: float32[3]  FAIL: ours is float32 of shape [1, 3]"
    assert numerics.compare(np.zeros(3, np.float16), np.zeros(3, np.float32)).ok
    assert not numerics.compare(
        np.zeros(3, np.float16), np.zeros(3, np.float32), same_dtype=True
    ).ok


def test_the_report_says_the_error_the_bound_and_the_worst_element():
    reference = np.array([[0.5, -2.0], [1.0, 0.25]], np.float32)
    ours = reference.copy()
    ours[1, 0] = 1.1
    check = numerics.compare(ours, reference, name="output 'y'")
    assert (check.max_abs, check.magnitude, check.where) == (pytest.approx(0.1), 2.0, (1, 0))
    assert check.bound == pytest.approx(2.0**-13 * 2.0)
    assert check.max_rel == pytest.approx(0.05)
    assert str(check) == (
        "output 'y': float32[2, 2]  max abs error 0.1  bound 0.000244 (0.000122 x max|ref| 2)  "
        "FAIL: 1 element(s) beyond it, worst at [1, 0]: expected 1, got 1.1"
    )


def test_a_per_pass_tolerance_is_never_looser_than_the_rule():
    """Per element a few ulps, at least rtol times the output's rms; and the rule's bound on top."""
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
        reference = rng.normal(0, 1, 256).astype(dtype)
        rule = numerics.tolerance_for(reference.dtype)
        per_pass = numerics.pass_tolerance(reference)
        assert (per_pass.rtol, per_pass.atol) == (
            rule.rtol,
            rule.atol,
        ) and per_pass.elementwise is not None
        # An error the rule allows at the largest element, but which a per-element bound does not at a small one.
        ours = reference.astype(np.float64)
        small = int(np.argmin(np.abs(ours)))
        ours[small] += 0.9 * rule.bound(float(np.max(np.abs(ours))))
        ours = ours.astype(dtype)
        assert numerics.compare(ours, reference, rule).ok
        assert not numerics.compare(ours, reference, per_pass).ok


def test_a_lowered_programs_element_tolerance_grows_with_the_outputs_magnitude():
    small, large = np.full(4, 0.1, np.float16), np.full(4, 100.0, np.float16)
    assert numerics.scaled_element_tolerance(small) == (1e-2, 1e-3)
    assert numerics.scaled_element_tolerance(large) == pytest.approx((1e-2, 1.0))
    assert numerics.scaled_element_tolerance(np.arange(4, dtype=np.int32)) == (0.0, 0.0)


# --------------------------------------------------------------------------- #
# ziggurat-compile --check
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def model_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("numerics") / "classifier.onnx"
    onnx.save(classifier(), path)
    return path


def check_with(monkeypatch, model: Path, corrupt, *options: str) -> int:
    """`ziggurat-compile MODEL --check` with ziggurat's outputs passed through `corrupt`."""
    real = ziggurat_compile.run_at_emitted_level

    def corrupted(*args, **kwargs):
        result = real(*args, **kwargs)
        if corrupt is not None:
            first = result.outputs[0]
            # The wrong answer must be wrong by more than the bound for the case to mean anything.
            assert (
                np.abs(corrupt(first).astype(np.float64) - first).max() > 0.04 * np.abs(first).max()
            )
            result.outputs = [corrupt(first), *result.outputs[1:]]
        return result

    monkeypatch.setattr(ziggurat_compile, "run_at_emitted_level", corrupted)
    args = ziggurat_compile.build_argument_parser().parse_args([str(model), "--check", *options])
    return ziggurat_compile.compile_model(args)


CHECKED_PATHS = {
    "graph-f32": ((), "0.000122 x max|ref|"),
    "davinci-auto-f16": (("--machine", "davinci"), "0.01 x max|ref|"),  # the values fit f16
    "davinci-bf16": (("--machine", "davinci", "--precision", "bf16"), "0.03 x max|ref|"),
}


@pytest.mark.parametrize("path", CHECKED_PATHS)
def test_check_passes_the_true_output(monkeypatch, capsys, model_path: Path, path):
    options, bound = CHECKED_PATHS[path]
    assert check_with(monkeypatch, model_path, None, *options) == 0
    printed = capsys.readouterr().out
    assert "check passed" in printed and bound in printed


@pytest.mark.parametrize(
    "options", [options for options, _ in CHECKED_PATHS.values()], ids=list(CHECKED_PATHS)
)
@pytest.mark.parametrize("corrupt", WRONG)
def test_check_fails_a_wrong_output(monkeypatch, capsys, model_path: Path, options, corrupt):
    assert check_with(monkeypatch, model_path, corrupt, *options) == 1
    captured = capsys.readouterr()
    assert "output 'logits': float32[1, 10]" in captured.out and "FAIL" in captured.out
    assert "check failed" in captured.err


# --------------------------------------------------------------------------- #
# ziggurat-run --expect
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def lowered(tmp_path_factory) -> tuple[Path, Path, Path]:
    """The f16 classifier's graph IR, its outputs and inputs from the graph level, and its npu code on davinci."""
    folder = tmp_path_factory.mktemp("expect")
    onnx.save(classifier(np.float16), folder / "classifier.onnx")
    graph_ir, npu_ir = folder / "graph.mlir", folder / "npu.mlir"
    args = ziggurat_compile.build_argument_parser().parse_args(
        [str(folder / "classifier.onnx"), "-o", str(graph_ir)]
    )
    assert ziggurat_compile.compile_model(args) == 0
    reference, inputs = folder / "ref.npz", folder / "in.npz"
    run_args = [str(graph_ir), "--save-inputs", str(inputs), "--outputs", str(reference)]
    assert ziggurat_run.run(ziggurat_run.parse_arguments(run_args)) == 0
    args = ziggurat_compile.build_argument_parser().parse_args(
        [str(folder / "classifier.onnx"), "--machine", "davinci", "-o", str(npu_ir)]
    )
    assert ziggurat_compile.compile_model(args) == 0
    return npu_ir, reference, inputs


def test_expect_passes_the_lowered_programs_true_output(capsys, lowered):
    npu_ir, reference, inputs = lowered
    argv = [
        str(npu_ir),
        "--machine",
        "davinci",
        "--inputs",
        str(inputs),
        "--expect",
        str(reference),
    ]
    assert ziggurat_run.run(ziggurat_run.parse_arguments(argv)) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("result0: float16[1, 10]  max abs error") and line.endswith("  ok")


@pytest.mark.parametrize("corrupt", WRONG)
def test_expect_fails_a_wrong_output(capsys, lowered, corrupt):
    _, reference, _ = lowered
    from xdsl.dialects.builtin import Float16Type, TensorType

    expected = np.load(reference)["result0"]
    outputs = {"result0": (TensorType(Float16Type(), [1, 10]), corrupt(expected))}
    with pytest.raises(
        DiagnosticError, match="output result0 differs from the expected array beyond the tolerance"
    ):
        ziggurat_run.check_expected(reference, outputs, None, None)
    assert "FAIL" in capsys.readouterr().out


# --------------------------------------------------------------------------- #
# Inputs
# --------------------------------------------------------------------------- #


def test_load_inputs_finds_each_array_by_name_or_position(tmp_path: Path):
    from xdsl.dialects.builtin import BFloat16Type, Float32Type, TensorType

    path = tmp_path / "in.npz"
    bf16 = np.array([1.5, 2.0], ml_dtypes.bfloat16)
    np.savez(path, x=np.ones(2, np.float32), arr_1=bf16)
    types = [TensorType(Float32Type(), [2]), TensorType(BFloat16Type(), [2])]
    arrays = numerics.load_inputs(path, ["x", "y"], types)
    assert (
        list(arrays) == ["x", "y"] and arrays["y"].dtype == bf16.dtype
    )  # bf16 comes back from raw bytes
    with pytest.raises(
        DiagnosticError, match=r"no array for input 'z' \(looked for 'z', arg2, arr_2; the archive"
    ):
        numerics.load_inputs(path, ["x", "y", "z"], [*types, types[0]])
    with pytest.raises(DiagnosticError, match="no array for argument #2 of @f"):
        numerics.load_inputs(path, ["x", "y", "z"], [*types, types[0]], function="f")
    assert list(
        numerics.load_inputs(path, ["x", "y", "z"], [*types, types[0]], every_argument=False)
    ) == ["x", "y"]
    with pytest.raises(DiagnosticError, match=r"the model has no input called arr_1 \(inputs: x\)"):
        numerics.load_inputs(path, ["x"], types[:1])
    with pytest.raises(
        DiagnosticError, match=r"no argument of @f is called arr_1 \(arguments: x\)"
    ):
        numerics.load_inputs(path, ["x"], types[:1], function="f")
