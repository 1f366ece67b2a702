#!/usr/bin/env bash
# `make demo`: the levels of ziggurat on small examples, with the commands a user would type.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
show() { printf '$ %s\n' "$*"; "$@"; }

step "1. graph level: a small CNN as written (examples/graph/small_cnn.mlir)"
# Printed through ziggurat-opt (no passes) so that each op is one line; weights elided.
ziggurat-opt examples/graph/small_cnn.mlir | sed -E 's/dense<[^>]*>/dense<...>/' | cut -c1-140

step "2. graph optimizations: constant folding, algebraic simplification, CSE, DCE"
show ziggurat-opt examples/graph/small_cnn.mlir \
    -p graph-fold-constants,graph-canonicalize,cse,dce -o "$out/small_cnn.opt.mlir"
sed -E 's/dense<[^>]*>/dense<...>/' "$out/small_cnn.opt.mlir" | cut -c1-140
printf '%s ops before, %s after\n' \
    "$(grep -cE '= graph\.' examples/graph/small_cnn.mlir)" "$(grep -cE '= graph\.' "$out/small_cnn.opt.mlir")"

step "3. the reference interpreter: same random image (seed 0) before and after optimization"
show ziggurat-run examples/graph/small_cnn.mlir --outputs "$out/before.npz"
show ziggurat-run "$out/small_cnn.opt.mlir" --outputs "$out/after.npz"
python - "$out/before.npz" "$out/after.npz" <<'PY'
import sys
import numpy as np
before, after = (np.load(path)["result0"] for path in sys.argv[1:])
print("class probabilities:", np.array2string(after, precision=4))
print("max |before - after| =", float(np.abs(before - after).max()))
assert np.allclose(before, after, rtol=1e-5, atol=1e-6), "optimization changed the numbers"
PY

step "4. graph-opt: the same plus batch-norm folding and TVM-style fusion into graph.fused groups"
show ziggurat-opt examples/graph/small_cnn.mlir -p graph-opt --print-pipeline
ziggurat-opt examples/graph/small_cnn.mlir -p graph-opt -o "$out/small_cnn.fused.mlir"
grep -E 'graph\.fused|graph\.(conv2d|relu|add|mul|gemm|softmax|max_pool)' "$out/small_cnn.fused.mlir" \
    | sed -E 's/dense<[^>]*>/dense<...>/; s/ : .*$//' | cut -c1-110
show ziggurat-run "$out/small_cnn.fused.mlir" --outputs "$out/fused.npz"

step "5. tensor level: graph-to-tile lowers every op to linalg/tensor/arith/math on tensors"
show ziggurat-opt examples/graph/small_cnn.mlir -p graph-to-tile -o "$out/small_cnn.tile.mlir"
grep -oE '(linalg|tensor)\.[a-z_0-9]+' "$out/small_cnn.tile.mlir" | sort | uniq -c | sort -rn
show ziggurat-run "$out/small_cnn.tile.mlir" --outputs "$out/tile.npz"
python - "$out/before.npz" "$out/fused.npz" "$out/tile.npz" <<'PY'
import sys
import numpy as np
reference, *others = (np.load(path)["result0"] for path in sys.argv[1:])
for name, result in zip(("graph-opt", "graph-to-tile"), others):
    print(f"{name}: max |difference| = {float(np.abs(reference - result).max()):.3g}")
    assert np.allclose(reference, result, rtol=1e-5, atol=1e-6), f"{name} changed the numbers"
PY

step "6. hardware level: a hand-written GEMM on the davinci machine model, single- vs double-buffered"
traces="${TMPDIR:-/tmp}/ziggurat-demo"  # kept after the demo, to open in Perfetto
mkdir -p "$traces"
for kernel in gemm_single_buffered gemm_double_buffered; do
    show ziggurat-run "examples/npu/$kernel.mlir" --machine davinci --report text --trace "$traces/$kernel.json"
done
echo "Open $traces/gemm_*.json in https://ui.perfetto.dev to see the pipes overlap."

step "7. the whole pipeline: a ResNet block lowered by lower-to-npu and run on davinci"
show ziggurat-opt --print-pipeline -p 'lower-to-npu{machine=davinci}' examples/resnet_block.mlir
show ziggurat-run examples/resnet_block.mlir --save-inputs "$out/block.in.npz" --outputs "$out/block.graph.npz"
show ziggurat-opt examples/resnet_block.mlir -p 'lower-to-npu{machine=davinci}' -o "$out/resnet_block.npu.mlir"
show ziggurat-run "$out/resnet_block.npu.mlir" --inputs "$out/block.in.npz" --expect "$out/block.graph.npz" --report text

step "8. a bad input gets a located diagnostic, not a traceback"
printf 'func.func @f(%%x: tensor<2x3xf32>) -> tensor<3x2xf32> {\n  %%y = graph.transpose %%x {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>\n  func.return %%y : tensor<3x2xf32>\n}\n' > "$out/bad.mlir"
set +e
ziggurat-opt "$out/bad.mlir" 2>&1 | sed "s|$out/||"
echo "exit code: ${PIPESTATUS[0]}"
set -e
