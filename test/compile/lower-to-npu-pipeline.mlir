// The named pipelines of docs/lowering.md, expanded by --print-pipeline (which
// needs no input and no pass to exist yet), and their option errors.
// RUN: ziggurat-opt -p 'lower-to-npu{machine=davinci}' --print-pipeline | filecheck %s --check-prefix=LOWER
// RUN: ziggurat-opt -p 'compile{machine=systolic}' --print-pipeline | filecheck %s --check-prefix=COMPILE
// RUN: ziggurat-opt -p 'lower-to-npu{machine="%S/../../ziggurat/machine/presets/tensorcore.toml"}' --print-pipeline | filecheck %s --check-prefix=PATH
// RUN: not ziggurat-opt -p 'lower-to-npu{machine=davincy}' --print-pipeline 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not ziggurat-opt -p 'compile' --print-pipeline 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not ziggurat-opt -p 'lower-to-npu{machine=davinci lanes=2}' --print-pipeline 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: ziggurat-opt -p 'compile{machine=davinci cores=4}' --print-pipeline | filecheck %s --check-prefix=CORES

// LOWER: graph-fuse,graph-to-tile,tile-record-useful-work,tile-and-fuse{machine="davinci"},tile-decompose-conv,tile-vectorize{machine="davinci"},canonicalize,tile-to-loop{machine="davinci"},loop-promote-to-memory-space{machine="davinci"},loop-legalize-copies{machine="davinci"},loop-stage-reduction,loop-hoist-copies,loop-double-buffer{machine="davinci"},loop-to-npu{machine="davinci"},npu-hoist-invariant{machine="davinci"},npu-plan-memory{machine="davinci"},npu-insert-sync{machine="davinci"}{{$}}

// COMPILE: graph-integer-qdq{machine="systolic"},graph-fold-constants,graph-canonicalize,graph-fold-batch-norm,graph-split-grouped-conv{min-out-per-group=17},graph-space-to-depth{machine="systolic"},graph-fold-constants,cse,dce,graph-fuse,graph-fuse,graph-to-tile,tile-record-useful-work,tile-and-fuse{machine="systolic"},tile-decompose-conv,tile-vectorize{machine="systolic"},canonicalize,tile-to-loop{machine="systolic"},loop-promote-to-memory-space{machine="systolic"},loop-legalize-copies{machine="systolic"},loop-stage-reduction,loop-hoist-copies,loop-double-buffer{machine="systolic"},loop-to-npu{machine="systolic"},npu-hoist-invariant{machine="systolic"},npu-plan-memory{machine="systolic"},npu-insert-sync{machine="systolic"}{{$}}

// PATH: tile-and-fuse{machine="{{.*}}/ziggurat/machine/presets/tensorcore.toml"}

// UNKNOWN: error: unknown machine 'davincy': neither a preset ({{.*}}) nor a TOML file; did you mean 'davinci'?
// MISSING: error: pipeline 'compile' needs a machine: compile{machine=NAME} (presets: davinci, {{.*}})
// OPTION: error: pipeline 'lower-to-npu' has no option 'lanes' (options: machine
// With cores=N, loop-distribute runs right after tile-to-loop; graph-opt is the same.
// CORES: graph-space-to-depth{machine="davinci"},{{.*}},tile-to-loop{machine="davinci"},loop-distribute{machine="davinci" cores=4},loop-promote-to-memory-space{machine="davinci"}
