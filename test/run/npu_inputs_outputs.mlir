// npu level: --inputs fills the global-memory arguments it names (A, B); the others (C)
// start zeroed, are what the kernel computes, and are written to --outputs by name.
// RUN: python -c "import numpy as np; rng = np.random.default_rng(1); np.savez('%t.in.npz', A=rng.standard_normal((256, 512)).astype(np.float16), B=rng.standard_normal((512, 256)).astype(np.float16))"
// RUN: ziggurat-run %examples/npu/gemm_single_buffered.mlir --inputs %t.in.npz --outputs %t.out.npz | filecheck %s --allow-empty --check-prefix=QUIET
// RUN: python -c "import numpy as np; i, o = np.load('%t.in.npz'), np.load('%t.out.npz'); c = o['C']; print(sorted(o.files), c.dtype, c.shape); np.testing.assert_allclose(c, i['A'].astype(np.float32) @ i['B'].astype(np.float32), rtol=1e-4, atol=1e-3); print('C = A @ B')" | filecheck %s
// Positional arrays fill a prefix of the arguments; without --outputs each output is summarized.
// RUN: python -c "import numpy as np; np.savez('%t.ones.npz', np.ones((256, 512), np.float16), np.full((512, 256), 0.5, np.float16))"
// RUN: ziggurat-run %examples/npu/gemm_double_buffered.mlir --inputs %t.ones.npz | filecheck %s --check-prefix=SUMMARY
// Without --inputs every argument is random (--seed) and every argument is an output.
// RUN: ziggurat-run %examples/npu/gemm_double_buffered.mlir | filecheck %s --check-prefix=RANDOM

// QUIET-NOT: {{.}}
// CHECK: ['C'] float32 (256, 256)
// CHECK-NEXT: C = A @ B

// Each element of C sums 512 products 1 * 0.5.
// SUMMARY:      C: memref<256x256xf32, "gm">  min 256 max 256 mean 256
// SUMMARY-NEXT:   256 256 256 256 256 256 256 256 ...
// SUMMARY-NOT:  {{.}}

// RANDOM:      A: memref<256x512xf16, "gm">  min
// RANDOM:      B: memref<512x256xf16, "gm">  min
// RANDOM:      C: memref<256x256xf32, "gm">  min
