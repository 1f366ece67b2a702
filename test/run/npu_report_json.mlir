// --report json: the same report as data; --trace: Chrome trace events, one track per pipe.
// RUN: ziggurat-run %examples/npu/gemm_double_buffered.mlir --machine davinci --report json --trace %t.trace.json > %t.report.json
// RUN: python -c "import json; r = json.load(open('%t.report.json')); print(*sorted(r)); print(*sorted(r['roofline'])); print(r['roofline']['bound_by'], r['total_cycles'] > r['roofline']['bound_cycles'], r['flops'], r['bytes_read']['gm'], r['bytes_written']['gm']); print(*r['utilization'])" | filecheck %s --check-prefix=JSON
// RUN: python -c "import json; t = json.load(open('%t.trace.json')); e = t['traceEvents']; names = {x['tid']: x['args']['name'] for x in e if x['name'] == 'thread_name'}; print(*names.values()); slices = [x for x in e if x['ph'] == 'X']; print(len(slices) > 0, {x['tid'] for x in slices} <= set(names), {x['pid'] for x in e}); print(*sorted({x['cat'] for x in slices})); print(sorted({x['args']['loc'].split(':')[0].rsplit('/', 1)[-1] for x in slices}))" | filecheck %s --check-prefix=TRACE

// JSON:      active_cores busy_cycles bytes_read bytes_written clock_hz cores flops flops_per_second instructions machine machine_cores macs roofline seconds total_cycles utilization
// JSON-NEXT: achieved bound_by bound_cycles compute_cycles global_memory_cycles
// JSON-NEXT: compute True 67108864 524288 262144
// JSON-NEXT: scalar mte2 mte1 mte3 fixpipe cube vector

// One track (thread) per pipe of the core, every slice on one of them, one process (core 0);
// each slice points back at its op in the kernel.
// TRACE:      scalar mte2 mte1 mte3 fixpipe cube vector
// TRACE-NEXT: True True {0}
// TRACE-NEXT: cube fixpipe mte1 mte2
// TRACE-NEXT: ['gemm_double_buffered.mlir']
