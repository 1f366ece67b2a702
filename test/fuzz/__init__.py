"""Fuzzing ziggurat's tools: generated inputs that must give a result or a diagnostic, never a crash.

Six categories of cases, each a hypothesis strategy plus a check that runs
the tools on a case and says how each run ended (`outcome`):

* `ir` (`ir_mutation`): mutated and truncated IR files through ziggurat-opt and ziggurat-run;
* `valid` (`valid_mutation`): valid IR with values renamed, independent ops reordered and text
  reformatted, through the same tools, which must accept it as they accepted the original;
* `shapes` (`shapes`): graph ops on odd shapes through ziggurat-run, against onnxruntime;
* `machine` (`machines`): broken machine files through the machine loader (and the npu verifier);
* `pipeline` (`pipelines`): random graph pass pipelines, numbers compared on the interpreter;
* `compile` (`compile`): one-node ONNX models (odd shapes, corrupted bytes) through
  ziggurat-compile --opt --check.

`test/unit/test_fuzz.py` runs a small sample in `make test`; `make fuzz`
(`python -m fuzz` with test/ on the path) runs the long campaign and
prints a summary table. Import it with test/ on `sys.path`: `from fuzz import ...`.
"""
