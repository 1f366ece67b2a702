"""ziggurat-tune: the search finds a schedule no slower than the default heuristic, whose IR
lowers and matches the graph interpreter; the cache skips work; the budget stops it; bad input
and options are diagnostics."""

import time
from dataclasses import dataclass

import pytest
from xdsl.dialects.builtin import TensorType, f16
from xdsl.passes import ModulePass

from ziggurat.context import default_context
from ziggurat.diagnostics import error_at
from ziggurat.interpreters.interpreter import find_function
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.machine import load_machine
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import (
    apply_pipeline,
    check_pass_preserves_numerics,
    compare_outputs,
    input_names,
    level_inputs,
    run_at_level,
)
from ziggurat.tools import ziggurat_tune
from ziggurat.tuning.layouts import SOURCE, LayoutGraph, Transpose, choose_layouts, layout_graph
from ziggurat.tuning.space import (
    loop_orders,
    nhwc_sizes,
    schedule_group,
    set_sizes,
    set_stage_reduction,
    stages_reduction,
    tunable_groups,
    with_nhwc_twin,
)
from ziggurat.tuning.tuner import Task, TuneCache, TuneOptions, measure, tune

MACHINE = "davinci"


def gemm(m: int, n: int, k: int) -> str:
    return f"""
func.func @main(%a: tensor<{m}x{k}xf16>, %b: tensor<{k}x{n}xf16>) -> tensor<{m}x{n}xf16> {{
  %c = graph.matmul %a, %b : (tensor<{m}x{k}xf16>, tensor<{k}x{n}xf16>) -> tensor<{m}x{n}xf16>
  %r = graph.relu %c : tensor<{m}x{n}xf16>
  func.return %r : tensor<{m}x{n}xf16>
}}"""


def parse(text: str):
    return parse_source(default_context(), text, "test.mlir")


@pytest.fixture(scope="module")
def gemm256():
    module = parse(gemm(256, 256, 256))
    return module, tunable_groups(module, load_machine(MACHINE))


def test_groups_and_candidates_follow_the_machine(gemm256):
    _, groups = gemm256
    (group,) = groups
    assert group.loops == ("m", "n", "k") and group.extents == (256, 256, 256)
    assert group.candidates[0] == (128, 256, 64)  # the heuristic's own choice comes first
    assert all(m % 16 == 0 and n % 16 == 0 and k % 16 == 0 for m, n, k in group.candidates)
    assert list(group.estimates[1:]) == sorted(group.estimates[1:])
    assert "davinci" in group.key and "matmul+relu" in group.key and "256x256xf16" in group.key


def test_tuned_schedule_is_no_slower_and_lowers_right(gemm256, tmp_path):
    module, groups = gemm256
    cache = TuneCache(tmp_path / "cache.json")
    seen = []
    options = TuneOptions(jobs=1, top_k=3, bufferings=(), stage=False)
    (choice,) = tune(groups, MACHINE, options, cache, lambda g, m: seen.append(m))
    assert len(seen) == 3 and all(m.cycles is not None for m in seen)
    assert choice.complete and choice.sizes is not None
    assert choice.cycles == min(m.cycles for m in seen) <= choice.default_cycles
    assert (
        0.7 < choice.group.estimates[0] / choice.default_cycles < 1.3
    )  # the estimate ranks in the right range
    tuned = module.clone()
    set_sizes(list(tuned.walk())[choice.group.target], choice.sizes)
    report = check_pass_preserves_numerics(
        tuned, f"lower-to-npu{{machine={MACHINE}}}", machine=MACHINE
    )
    assert report.ok, str(report)

    cache.save()
    again = []
    (cached,) = tune(
        groups,
        MACHINE,
        TuneOptions(jobs=1, top_k=3),
        TuneCache.load(cache.path),
        lambda g, m: again.append(m),
    )
    assert again == [] and cached.cached and cached.sizes == choice.sizes


def test_tuning_for_several_cores_measures_on_them_and_searches_the_split(tmp_path):
    """On 4 cores the default is tile-and-fuse's tile for 4 cores, the candidates include tiles
    split among them, and each measurement is the run of the group lowered for and run on 4
    cores: the default's and the winner's cycles are those of `lower-to-npu{cores=4}` on 4 cores."""
    module = parse(gemm(128, 256, 256))
    machine = load_machine(MACHINE)
    (one,) = tunable_groups(module, machine)
    (group,) = tunable_groups(module, machine, cores=4)
    assert group.cores == 4 and "|davinci x4|" in group.key and one.key != group.key
    m, n = group.extents[0], group.extents[1]
    assert -(-m // one.candidates[0][0]) * -(-n // one.candidates[0][1]) < 4
    assert -(-m // group.candidates[0][0]) * -(-n // group.candidates[0][1]) >= 4
    seen = []
    options = TuneOptions(jobs=1, top_k=3, bufferings=(), stage=False, cores=4)
    (choice,) = tune(
        [group], MACHINE, options, TuneCache(tmp_path / "c.json"), lambda g, x: seen.append(x)
    )
    assert len(seen) == 3 and choice.cycles == min(x.cycles for x in seen)

    def cycles_on_4_cores(sizes):
        lowered = module.clone()
        if sizes is not None:
            set_sizes(list(lowered.walk())[group.target], sizes)
        apply_pipeline(lowered, "lower-to-npu{machine=davinci cores=4}")
        main = find_function(lowered, "main")
        inputs = level_inputs(find_function(module, "main"), 0)
        run = run_npu(lowered, MACHINE, dict(zip(input_names(main), inputs)), "main", cores=4)
        return run.stats.total_cycles

    assert choice.default_cycles == cycles_on_4_cores(None)
    assert choice.cycles == cycles_on_4_cores(choice.sizes)


def test_a_repeated_layer_is_measured_once():
    module = parse("""
func.func @main(%a: tensor<128x128xf16>, %b: tensor<128x128xf16>, %c: tensor<128x128xf16>) -> tensor<128x128xf16> {
  %x = graph.matmul %a, %b : (tensor<128x128xf16>, tensor<128x128xf16>) -> tensor<128x128xf16>
  %z = graph.matmul %x, %c : (tensor<128x128xf16>, tensor<128x128xf16>) -> tensor<128x128xf16>
  func.return %z : tensor<128x128xf16>
}""")
    groups = tunable_groups(module, load_machine(MACHINE))
    assert len(groups) == 2 and groups[0].key == groups[1].key and groups[0].name != groups[1].name
    measured = []
    options = TuneOptions(jobs=1, top_k=2, bufferings=(), stage=False)
    first, second = tune(groups, MACHINE, options, TuneCache(None), lambda g, m: measured.append(m))
    assert len(measured) == 2 and first.sizes == second.sizes and second.group is groups[1]


def test_layers_that_differ_only_in_their_bias_values_share_a_key():
    # a model's layers have biases of their own values: copied into the group, they made each
    # repeat of a layer a group of its own, measured again
    biases = [", ".join(f"{(i + k) % 7}.0" for i in range(64)) for k in (1, 2)]
    module = parse(f"""
func.func @main(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {{
  %one = graph.constant dense<[{biases[0]}]> : tensor<64xf16>
  %two = graph.constant dense<[{biases[1]}]> : tensor<64xf16>
  %x = graph.matmul %a, %b : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  %y = graph.add %x, %one : (tensor<64x64xf16>, tensor<64xf16>) -> tensor<64x64xf16>
  %z = graph.matmul %y, %b : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  %w = graph.add %z, %two : (tensor<64x64xf16>, tensor<64xf16>) -> tensor<64x64xf16>
  func.return %w : tensor<64x64xf16>
}}""")
    first, second = tunable_groups(module, load_machine(MACHINE))
    assert first.key == second.key and "tensor<64xf16>" in first.key.split("|")[3]


def test_a_splat_bias_stays_a_constant_in_the_group_as_in_its_model():
    # graph-to-tile folds a splat into the ops that read it: as an argument, the group alone
    # would tile and run differently from the group in its model (the light ResNet-50's biases)
    module = parse("""
func.func @main(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %one = graph.constant dense<1.0> : tensor<64xf16>
  %x = graph.matmul %a, %b : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  %y = graph.add %x, %one : (tensor<64x64xf16>, tensor<64xf16>) -> tensor<64x64xf16>
  func.return %y : tensor<64x64xf16>
}""")
    (group,) = tunable_groups(module, load_machine(MACHINE))
    assert "dense<1.000000e+00> : tensor<64xf16>" in group.module_text
    assert "tensor<64xf16>" not in group.key.split("|")[3]  # not an argument


def test_a_group_with_a_splat_weight_is_checked_with_dense_weights_too(monkeypatch):
    """Timed as it is (a splat reads as a scalar), checked again with random weights in its place:
    a candidate right only because every weight is equal loses."""
    from ziggurat.tuning import tuner

    module = parse("""
func.func @main(%a: tensor<64x128xf16>) -> tensor<64x64xf16> {
  %w = graph.constant dense<0.5> : tensor<128x64xf16>
  %x = graph.matmul %a, %w : (tensor<64x128xf16>, tensor<128x64xf16>) -> tensor<64x64xf16>
  func.return %x : tensor<64x64xf16>
}""")
    (group,) = tunable_groups(module, load_machine(MACHINE))
    assert "dense<5.000000e-01> : tensor<128x64xf16>" in group.module_text
    task = Task(0, 0, group.module_text, group.target, None, MACHINE, 0)
    checked = []
    real = tuner._lowered_outputs_differ

    def counting(task, module, machine):
        checked.append(len(find_function(module, "main").body.block.args))
        return real(task, module, machine)

    monkeypatch.setattr(tuner, "_lowered_outputs_differ", counting)
    assert measure(task).cycles is not None
    assert checked == [1, 2]  # the group, then with the weight as a second argument

    def wrong_with_dense_weights(task, module, machine):
        dense = len(find_function(module, "main").body.block.args) == 2
        wrong, result = real(task, module, machine)
        return ("numerics differ: ..." if dense else wrong), result

    monkeypatch.setattr(tuner, "_lowered_outputs_differ", wrong_with_dense_weights)
    result = measure(task)
    assert result.cycles is None and "with dense random weights" in result.error


def test_a_candidate_that_does_not_fit_loses_with_its_reason(gemm256):
    _, (group,) = gemm256
    whole = Task(0, 1, group.module_text, group.target, (256, 256, 256), MACHINE, 0)
    result = measure(whole)
    assert result.cycles is None and result.error


def test_budget_stops_launching_and_keeps_the_heuristic(tmp_path):
    module = parse(gemm(256, 256, 512))
    groups = tunable_groups(module, load_machine(MACHINE))
    cache = TuneCache(tmp_path / "cache.json")
    start = time.monotonic()
    (choice,) = tune(groups, MACHINE, TuneOptions(jobs=2, top_k=4, budget=0.05), cache)
    assert time.monotonic() - start < 1.5  # runs in flight are stopped, not awaited
    assert not choice.complete and choice.sizes is None
    assert cache.entries == {}  # a partial search is not cached


def test_budget_in_process_keeps_what_was_measured(gemm256):
    _, groups = gemm256
    measured = []
    (choice,) = tune(
        groups,
        MACHINE,
        TuneOptions(jobs=1, top_k=4, budget=0.01),
        TuneCache(None),
        lambda g, m: measured.append(m),
    )
    assert [m.candidate for m in measured] == [
        0
    ]  # launched in time; nothing launched after the budget
    assert choice.sizes == groups[0].candidates[0] and not choice.complete


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--jobs", "0"], "--jobs must be at least 1"),
        (["--budget", "-1"], "--budget must be a positive number"),
        (["--machine", "nosuch"], "nosuch"),
        (["--bogus"], "unrecognized arguments"),
    ],
)
def test_bad_options_are_diagnostics(argv, message, tmp_path, capsys):
    source = tmp_path / "in.mlir"
    source.write_text(gemm(64, 64, 64))
    args = [str(source), "--machine", MACHINE, *argv]
    with pytest.raises(SystemExit) as exit:
        ziggurat_tune.main(args)
    assert exit.value.code == 1
    assert message in capsys.readouterr().err


def test_bad_input_is_a_diagnostic(tmp_path, capsys):
    source = tmp_path / "in.mlir"
    source.write_text("func.func @main( {")
    with pytest.raises(SystemExit) as exit:
        ziggurat_tune.main([str(source), "--machine", MACHINE])
    assert exit.value.code == 1
    err = capsys.readouterr().err
    assert "in.mlir:1" in err and "Traceback" not in err


def test_a_broken_cache_is_a_diagnostic(tmp_path, capsys):
    source, cache = tmp_path / "in.mlir", tmp_path / "cache.json"
    source.write_text(gemm(64, 64, 64))
    cache.write_text("{not json")
    with pytest.raises(SystemExit) as exit:
        ziggurat_tune.main([str(source), "--machine", MACHINE, "--cache", str(cache)])
    assert exit.value.code == 1
    assert "cannot read tuning cache" in capsys.readouterr().err


def test_the_winning_tile_is_measured_at_each_buffering_depth_and_a_faster_one_wins(
    gemm256, tmp_path
):
    module, groups = gemm256
    seen = []
    cache = TuneCache(tmp_path / "cache.json")
    (choice,) = tune(
        groups,
        MACHINE,
        TuneOptions(jobs=1, top_k=2, bufferings=(1, 3), stage=False),
        cache,
        lambda g, m: seen.append(m),
    )
    sizes_phase, depth_phase = seen[:2], [m for m in seen[2:] if m.interchange is None]
    assert [m.buffering for m in sizes_phase] == [None, None] and [
        m.buffering for m in depth_phase
    ] == [1, 3]
    winner = min(
        (m for m in sizes_phase if m.cycles is not None), key=lambda m: (m.cycles, m.candidate)
    )
    assert all(m.candidate == winner.candidate for m in depth_phase)  # the winner's sizes, again
    assert choice.complete and choice.measured == len(seen) == 4 + len(
        loop_orders(groups[0], choice.sizes)
    )
    assert choice.cycles == min(m.cycles for m in seen if m.cycles is not None)
    fastest_variant = min(seen[2:], key=lambda m: (m.cycles, m.buffering or 0, m.interchange or ()))
    assert choice.buffering == (
        fastest_variant.buffering if fastest_variant.cycles < winner.cycles else None
    )
    assert cache.entries[groups[0].key]["buffering"] == choice.buffering
    cache.save()
    (cached,) = tune(
        groups,
        MACHINE,
        TuneOptions(jobs=1, top_k=2, bufferings=(1, 3), stage=False),
        TuneCache.load(cache.path),
    )
    assert cached.cached and cached.buffering == choice.buffering
    # what tune_module writes lowers with that depth: the group alone at depth 1 keeps single buffers
    single = parse(groups[0].module_text)
    schedule_group(single, groups[0].target, None, 1)
    apply_pipeline(
        single,
        "graph-to-tile,tile-and-fuse{machine=davinci},tile-to-loop{machine=davinci},loop-promote-to-memory-space{machine=davinci},loop-double-buffer{machine=davinci}",
    )
    assert "memref<2x" not in str(single)


def test_the_winning_tile_is_measured_in_each_other_loop_order(tmp_path):
    # 512x512 by K 64 on davinci: the heuristic tiles M by 128 and N by 256, K whole, so the
    # loop order decides which operand loop-hoist-copies keeps across the inner loop
    module = parse(gemm(512, 512, 64))
    (group,) = tunable_groups(module, load_machine(MACHINE))
    assert group.candidates[0] == (128, 256, 64) and loop_orders(group, None) == [(1, 0)]
    seen = []
    cache = TuneCache(tmp_path / "cache.json")
    (choice,) = tune(
        [group],
        MACHINE,
        TuneOptions(jobs=1, top_k=1, bufferings=()),
        cache,
        lambda g, m: seen.append(m),
    )
    default, swapped = seen
    assert default.interchange is None and swapped.interchange == (1, 0) and swapped.candidate == 0
    assert (
        default.cycles is not None and swapped.cycles is not None
    )  # both lowered, ran and matched
    assert default.cycles != swapped.cycles  # the order moves different operand tiles
    assert choice.interchange == ((1, 0) if swapped.cycles < default.cycles else None)
    assert choice.cycles == min(default.cycles, swapped.cycles)
    assert cache.entries[group.key]["interchange"] == (
        None if choice.interchange is None else list(choice.interchange)
    )
    cache.save()
    (cached,) = tune(
        [group], MACHINE, TuneOptions(jobs=1, top_k=1, bufferings=()), TuneCache.load(cache.path)
    )
    assert cached.cached and cached.interchange == choice.interchange
    # what tune_module writes is what tile-and-fuse reads: the N loop outside, the M loop inside
    swapped_module = parse(group.module_text)
    schedule_group(swapped_module, group.target, None, None, (1, 0))
    apply_pipeline(swapped_module, "graph-to-tile,tile-and-fuse{machine=davinci}")
    outer = next(op for op in swapped_module.walk() if op.name == "scf.for")
    assert outer.ub.owner.value.value.data == 512 and outer.step.owner.value.value.data == 256


def test_a_group_with_a_splat_too_large_to_print_as_a_number_parses_back():
    # splats are copied into the extracted group; one of more than 2**24 elements must print in
    # the form the parser reads back (ziggurat.printing), or the group cannot be measured
    module = parse("""
func.func @main(%a: tensor<16x4097xf16>) -> tensor<16x4096xf16> {
  %w = graph.constant dense<"0x003C"> : tensor<4097x4096xf16>
  %c = graph.matmul %a, %w : (tensor<16x4097xf16>, tensor<4097x4096xf16>) -> tensor<16x4096xf16>
  func.return %c : tensor<16x4096xf16>
}""")
    (group,) = tunable_groups(module, load_machine(MACHINE))
    assert 'dense<"0x003C"> : tensor<4097x4096xf16>' in group.module_text
    parse(group.module_text)


CONV_ADD_RELU = """
func.func @main(%x: tensor<1x256x14x14xf16>, %w: tensor<1024x256x1x1xf16>, %res: tensor<1x1024x14x14xf16>) -> tensor<1x1024x14x14xf16> {
  %y = graph.conv2d %x, %w : (tensor<1x256x14x14xf16>, tensor<1024x256x1x1xf16>) -> tensor<1x1024x14x14xf16>
  %s = graph.add %y, %res : (tensor<1x1024x14x14xf16>, tensor<1x1024x14x14xf16>) -> tensor<1x1024x14x14xf16>
  %r = graph.relu %s : tensor<1x1024x14x14xf16>
  func.return %r : tensor<1x1024x14x14xf16>
}"""


def test_candidates_beyond_the_heuristics_epilogue_share_are_measured():
    """ResNet-50's stage-3 block end: the heuristic keeps the epilogue in half the vector space;
    the search also offers tiles that take all of it, and one of those lowers, matches and wins."""
    from ziggurat.testing.differential import apply_pipeline as lower
    from ziggurat.transforms.tile.tile_and_fuse import collect_groups, epilogue_bytes
    from ziggurat.transforms.tile.tile_sizes import EPILOGUE_SHARE

    machine = load_machine(MACHINE)
    (group,) = tunable_groups(parse(CONV_ADD_RELU), machine)
    tiled = parse(group.module_text)
    lower(tiled, "graph-fuse,graph-to-tile")
    function = next(op for op in tiled.walk() if op.name == "func.func")
    (fused,) = [g for g in collect_groups(function.body.block) if g.anchor is not None]
    per_point = epilogue_bytes(fused)
    space = machine.memories[machine.vector.spaces[0]].capacity

    def points(sizes):
        return sizes[1] * sizes[2] * sizes[3]  # output channels x rows x cols

    assert points(group.candidates[0]) * per_point <= space // EPILOGUE_SHARE
    beyond = [c for c in group.candidates if points(c) * per_point > space // EPILOGUE_SHARE]
    assert beyond and all(points(c) * per_point <= space for c in beyond)
    default = measure(Task(0, 0, group.module_text, group.target, None, MACHINE, 0))
    whole_rows = (1, 128, 14, 14, 64, 1, 1)  # the weights read once instead of twice
    assert whole_rows in beyond
    wider = measure(Task(0, 1, group.module_text, group.target, whole_rows, MACHINE, 0))
    assert default.cycles is not None and wider.cycles is not None and wider.cycles < default.cycles


def test_candidates_that_tile_the_reduction_are_also_measured_staged(tmp_path):
    """A 64x64 GEMM over K 2048 (the shape of ResNet-50's classifier, narrowed): the candidates
    that tile K are measured again with tile.stage_reduction (loop-stage-reduction loads all K slices
    of an operand at once); the fastest of all wins, and what the tuner writes lowers right."""
    module = parse(gemm(64, 64, 2048))
    (group,) = tunable_groups(module, load_machine(MACHINE))
    assert group.candidates[0][2] < 2048 and stages_reduction(group, 0)
    seen = []
    cache = TuneCache(tmp_path / "cache.json")
    (choice,) = tune(
        [group],
        MACHINE,
        TuneOptions(jobs=1, top_k=2, bufferings=()),
        cache,
        lambda g, m: seen.append(m),
    )
    plain = [m for m in seen if not m.stage and m.interchange is None]
    staged = [m for m in seen if m.stage and m.interchange is None]
    assert [m.candidate for m in staged] == [
        m.candidate for m in plain if stages_reduction(group, m.candidate)
    ]
    assert staged and all(m.cycles is not None for m in staged)  # lowered, ran and matched
    best = min((m for m in seen if m.cycles is not None), key=lambda m: m.cycles)
    assert choice.cycles == best.cycles and choice.stage == best.stage
    assert cache.entries[group.key]["stage_reduction"] == choice.stage
    cache.save()
    (cached,) = tune(
        [group], MACHINE, TuneOptions(jobs=1, top_k=2, bufferings=()), TuneCache.load(cache.path)
    )
    assert cached.cached and cached.stage == choice.stage
    staged_module = module.clone()
    set_sizes(list(staged_module.walk())[group.target], group.candidates[0])
    set_stage_reduction(list(staged_module.walk())[group.target])
    report = check_pass_preserves_numerics(
        staged_module, f"lower-to-npu{{machine={MACHINE}}}", machine=MACHINE
    )
    assert report.ok, str(report)
    lowered = staged_module.clone()
    apply_pipeline(
        lowered,
        "graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci},tile-vectorize{machine=davinci},"
        "canonicalize,tile-to-loop{machine=davinci},loop-promote-to-memory-space{machine=davinci},loop-stage-reduction",
    )
    assert 'memref<64x2048xf16, "l1">' in str(lowered)  # the lhs's K slices, all at once


def test_a_vector_group_is_searched_over_multiples_of_its_heuristic_tile(tmp_path):
    """A max pool (no matrix unit): its candidates scale the heuristic's outermost tiled loop; a
    candidate the lowering refuses loses, the fastest that matches wins."""
    module = parse("""
func.func @main(%x: tensor<1x64x56x56xf16>) -> tensor<1x64x28x28xf16> {
  %y = graph.max_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x64x56x56xf16> -> tensor<1x64x28x28xf16>
  func.return %y : tensor<1x64x28x28xf16>
}""")
    (group,) = tunable_groups(module, load_machine(MACHINE))
    assert set(group.loops) == {"parallel"} and group.extents == (1, 64, 28, 28)
    default = group.candidates[0]
    tiled = next(d for d, size in enumerate(default) if size < group.extents[d])
    assert all(
        sizes[:tiled] == default[:tiled] and sizes[tiled + 1 :] == default[tiled + 1 :]
        for sizes in group.candidates
    )
    assert [sizes[tiled] for sizes in group.candidates[1:]] == sorted(
        {min(group.extents[tiled], default[tiled] * k) for k in (2, 4, 8, 16)} - {default[tiled]}
    ) + ([default[tiled] // 2] if default[tiled] > 1 else [])
    seen = []
    (choice,) = tune(
        [group],
        MACHINE,
        TuneOptions(jobs=1, top_k=3, bufferings=()),
        TuneCache(None),
        lambda g, m: seen.append(m),
    )
    searched = [m for m in seen if not m.nhwc]
    assert len(searched) == 3 and searched[0].cycles is not None
    assert (
        choice.cycles
        == min(m.cycles for m in searched if m.cycles is not None)
        <= choice.default_cycles
    )
    # then its NHWC twin: with its heuristic, and with the winner's tile for its loops
    assert [m.sizes for m in seen if m.nhwc] == [
        None,
        nhwc_sizes(choice.group, choice.sizes),
    ] or choice.sizes is None
    tuned = module.clone()
    if choice.sizes is not None:
        set_sizes(list(tuned.walk())[group.target], choice.sizes)
    report = check_pass_preserves_numerics(
        tuned, f"lower-to-npu{{machine={MACHINE}}}", machine=MACHINE
    )
    assert report.ok, str(report)


CONV_RELU = """
func.func @main(%x: tensor<1x16x10x10xf16>, %w: tensor<32x16x3x3xf16>, %b: tensor<32xf16>, %s: tensor<1x32x10x10xf16>) -> tensor<1x32x10x10xf16> {
  %c = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x10x10xf16>, tensor<32x16x3x3xf16>, tensor<32xf16>) -> tensor<1x32x10x10xf16>
  %a = graph.add %c, %s : (tensor<1x32x10x10xf16>, tensor<1x32x10x10xf16>) -> tensor<1x32x10x10xf16>
  %r = graph.relu %a : tensor<1x32x10x10xf16>
  func.return %r : tensor<1x32x10x10xf16>
}"""


def test_a_conv_group_has_an_nhwc_twin_with_its_operands_in_nhwc():
    """The twin is the same group in NHWC, every 4-D operand and result permuted (weights to
    OHWI), no transpose inside; its loops match the NCHW group's by role."""
    module = parse(CONV_RELU)
    (group,) = tunable_groups(module, load_machine(MACHINE))
    assert group.convertible and group.nhwc is None  # built only for a group that is searched
    group = with_nhwc_twin(group, load_machine(MACHINE))
    twin = group.nhwc
    assert twin is not None and twin.target == group.target and twin.key != group.key
    assert (
        "tensor<1x10x10x16xf16>, tensor<32x3x3x16xf16>, tensor<32xf16>, tensor<1x10x10x32xf16>) -> tensor<1x10x10x32xf16>"
        in twin.module_text
    )
    assert "graph.transpose" not in twin.module_text and 'layout = "NHWC"' in twin.module_text
    assert group.loops == ("m", "n", "m", "m", "k", "window", "window")
    assert twin.loops == ("m", "m", "m", "n", "k", "window", "window")
    # (n, o, oh, ow, c, kh, kw) -> (n, oh, ow, o, c, kh, kw)
    assert nhwc_sizes(group, (1, 16, 2, 10, 8, 3, 3)) == (1, 2, 10, 16, 8, 3, 3)
    assert nhwc_sizes(group, None) is None
    # measured alone, the twin computes what the NCHW group does (on permuted inputs)
    report = check_pass_preserves_numerics(
        twin.module_text, f"lower-to-npu{{machine={MACHINE}}}", machine=MACHINE
    )
    assert report.ok, str(report)


def test_a_group_whose_schedule_is_not_on_its_conv_has_no_twin():
    """graph-layout converts the op that carries the schedule; a pool followed by an elementwise op
    is scheduled by that op, so the pool cannot take its layout with it."""
    module = parse("""
func.func @main(%x: tensor<1x16x8x8xf16>) -> tensor<1x16x8x8xf16> {
  %p = graph.max_pool %x {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x16x8x8xf16> -> tensor<1x16x8x8xf16>
  %r = graph.relu %p : tensor<1x16x8x8xf16>
  func.return %r : tensor<1x16x8x8xf16>
}""")
    machine = load_machine(MACHINE)
    assert all(
        with_nhwc_twin(group, machine).nhwc is None for group in tunable_groups(module, machine)
    )


def _transpose(shape, perm):
    return Transpose(TensorType(f16, shape), perm)


def test_the_layout_cut_weighs_each_group_against_the_transposes_it_needs():
    """Two groups in a chain between NCHW arguments: a group alone goes NHWC only if what it saves
    beats the transposes on both sides; two neighbours going together share the saving."""
    # edges[(u, v)]: the transposes needed when u is NCHW and v NHWC (SOURCE: the fixed NCHW ops)
    into, back = _transpose([1, 8, 4, 4], (0, 2, 3, 1)), _transpose([1, 4, 4, 8], (0, 3, 1, 2))
    alone = {(SOURCE, 1): [into, back]}  # the argument into it, its result back for the return
    chain = {(SOURCE, 1): [into], (1, 2): [into], (2, 1): [back], (SOURCE, 2): [back]}
    cycles = {into: 10.0, back: 10.0}
    # each saves 15: alone not worth 20 of transposes, together (30 against 20) they are
    assert choose_layouts(LayoutGraph({1: (100.0, 85.0)}, {}, alone), cycles) == set()
    assert choose_layouts(LayoutGraph({1: (100.0, 85.0), 2: (100.0, 85.0)}, {}, chain), cycles) == {
        1,
        2,
    }
    # one that is slower in NHWC stays NCHW, and its neighbour alone is not worth its transposes
    assert (
        choose_layouts(LayoutGraph({1: (100.0, 85.0), 2: (100.0, 120.0)}, {}, chain), cycles)
        == set()
    )
    # a transpose that was not measured is never worth crossing
    assert choose_layouts(LayoutGraph({1: (100.0, 50.0)}, {}, alone), {}) == set()
    # a saving larger than the transposes wins alone
    assert choose_layouts(LayoutGraph({1: (100.0, 50.0)}, {}, alone), cycles) == {1}


def test_the_layout_graph_links_groups_by_the_tensors_between_them():
    """Nodes are the groups with both layouts measured, the rest is the NCHW source; constants
    (weights) are free; a transpose of the function's own between the layouts is a node whose
    cost vanishes when its NHWC side is NHWC."""
    module = parse("""
func.func @main(%x: tensor<1x8x8x16xf16>) -> tensor<1x16x8x8xf16> {
  %t = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : tensor<1x8x8x16xf16> -> tensor<1x16x8x8xf16>
  %p = graph.max_pool %t {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x16x8x8xf16> -> tensor<1x16x8x8xf16>
  %q = graph.max_pool %p {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x16x8x8xf16> -> tensor<1x16x8x8xf16>
  func.return %q : tensor<1x16x8x8xf16>
}""")
    ops = list(module.walk())
    (t,) = [i for i, op in enumerate(ops) if op.name == "graph.transpose"]
    p, q = [i for i, op in enumerate(ops) if op.name == "graph.max_pool"]
    layouts = layout_graph(module, {p: (50.0, 40.0), q: (50.0, 40.0)})
    assert layouts.transposes_in == {t: _transpose([1, 8, 8, 16], (0, 3, 1, 2))}
    into, back = _transpose([1, 16, 8, 8], (0, 2, 3, 1)), _transpose([1, 8, 8, 16], (0, 3, 1, 2))
    # the function's transpose -> p -> q -> return: (u, v) is paid when u is NCHW and v NHWC
    assert layouts.edges == {
        (t, p): [into],
        (p, t): [back],
        (p, q): [into],
        (q, p): [back],
        (q, SOURCE): [into],
        (SOURCE, q): [back],
    }
    # the function's transpose is the one the result needs back (same type and perm): 9 either way
    assert layouts.transposes_in[t] == back
    cycles = {into: 12.0, back: 9.0}
    # both pools save 20; the function's transpose vanishes and the return needs it back: both go
    assert choose_layouts(layouts, cycles) == {p, q}
    # q slower in NHWC: p goes alone (saves 10 and the function's transpose, q reads it back)
    layouts.costs[q] = (50.0, 75.0)
    assert choose_layouts(layouts, cycles) == {p}
    # p slower in NHWC too: the transpose it would save is paid back for q, nothing changes
    layouts.costs[p] = (50.0, 55.0)
    assert choose_layouts(layouts, cycles) == set()


def test_ziggurat_tune_converts_a_group_that_is_faster_in_nhwc_and_the_result_is_right(tmp_path):
    """A max pool between the function's transposes to and from NHWC: in NHWC it is faster and
    the transposes cancel, so ziggurat-tune converts it; the tuned module computes the same."""
    source = tmp_path / "pool.mlir"
    source.write_text("""
func.func @main(%x: tensor<1x56x56x64xbf16>) -> tensor<1x28x28x64xbf16> {
  %t = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : tensor<1x56x56x64xbf16> -> tensor<1x64x56x56xbf16>
  %p = graph.max_pool %t {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x64x56x56xbf16> -> tensor<1x64x28x28xbf16>
  %r = graph.transpose %p {perm = array<i64: 0, 2, 3, 1>} : tensor<1x64x28x28xbf16> -> tensor<1x28x28x64xbf16>
  func.return %r : tensor<1x28x28x64xbf16>
}""")
    module = ziggurat_tune.read_module(str(source))
    original = module.clone()
    choices = ziggurat_tune.tune_module(
        module, MACHINE, TuneOptions(jobs=1, top_k=2, bufferings=()), tmp_path / "cache.json"
    )
    (pool,) = [c for c in choices if c.group.nhwc is not None]
    assert pool.layout == "NHWC" and pool.nhwc_cycles < pool.cycles
    names = [op.name for op in module.walk() if op.name.startswith("graph.")]
    assert names == ["graph.max_pool"], names
    inputs = level_inputs(find_function(original, "main"), 0)
    expected = run_at_level(original, inputs, "main")
    apply_pipeline(module, f"lower-to-npu{{machine={MACHINE}}}")
    result = run_npu(
        module, MACHINE, dict(zip(input_names(find_function(module, "main")), inputs)), "main"
    )
    assert all(c.ok for c in compare_outputs(expected, result.outputs, None, None, scale_atol=True))
    # the cache keeps the twin's time and the transposes', so a second run decides the same from it
    again = ziggurat_tune.read_module(str(source))
    cached = ziggurat_tune.tune_module(
        again, MACHINE, TuneOptions(jobs=1, top_k=2, budget=0.0), tmp_path / "cache.json"
    )
    assert all(c.cached for c in cached)
    assert [op.name for op in again.walk() if op.name.startswith("graph.")] == ["graph.max_pool"]


def test_a_weight_in_the_other_layout_is_folded_not_left_to_the_device():
    """convert_marked: the conv's weight transposed to OHWI is a constant, not a device op."""
    import numpy as np
    from xdsl.dialects.builtin import StringAttr

    from ziggurat.dialects import graph
    from ziggurat.dialects.tile import LAYOUT_ATTR
    from ziggurat.testing.differential import run_at_level
    from ziggurat.tuning.layouts import convert_marked

    weights = np.random.default_rng(0).standard_normal((16, 8, 3, 3)).astype(np.float16)
    text = f"""
    func.func @main(%x: tensor<1x8x10x10xf16>) -> tensor<1x16x8x8xf16> {{
      %w = graph.constant dense<{weights.tolist()}> : tensor<16x8x3x3xf16>
      %y = graph.conv2d %x, %w : (tensor<1x8x10x10xf16>, tensor<16x8x3x3xf16>) -> tensor<1x16x8x8xf16>
      func.return %y : tensor<1x16x8x8xf16>
    }}
    """
    module = parse_source(default_context(), text, "conv.mlir")
    x = np.random.default_rng(1).standard_normal((1, 8, 10, 10)).astype(np.float16)
    (expected,) = run_at_level(module, [x], "main")
    conv = next(op for op in module.walk() if isinstance(op, graph.Conv2dOp))
    conv.attributes[LAYOUT_ATTR] = StringAttr("NHWC")
    convert_marked(module)
    transposes = [op for op in module.walk() if isinstance(op, graph.TransposeOp)]
    assert transposes and all(
        not isinstance(op.operands[0].owner, graph.ConstantOp) for op in transposes
    )  # only the activations' transposes are left
    (actual,) = run_at_level(module, [x], "main")
    assert np.array_equal(actual, expected)


def test_a_tuned_module_that_does_not_lower_is_not_written(tmp_path, capsys, monkeypatch):
    """The tuner measures each group alone; the whole tuned module is lowered once more before it
    is written, and where that fails (here a pass after tiling refuses every tile) the output is
    not written and the error says why."""
    source, output = tmp_path / "in.mlir", tmp_path / "tuned.mlir"
    source.write_text(gemm(64, 64, 64))
    real = ziggurat_tune.build_passes

    def refusing(pipeline):
        passes = list(real(pipeline))
        if pipeline.startswith("lower-to-npu"):
            passes.append(_RefuseTiled())
        return passes

    monkeypatch.setattr(ziggurat_tune, "build_passes", refusing)
    with pytest.raises(SystemExit) as exit:
        ziggurat_tune.main([str(source), "--machine", MACHINE, "--budget", "20", "-o", str(output)])
    assert exit.value.code == 1
    err = capsys.readouterr().err
    assert "the tuned module does not lower with lower-to-npu{machine=" in err
    assert "refused" in err and "Traceback" not in err
    assert not output.exists()


@dataclass(frozen=True)
class _RefuseTiled(ModulePass):
    name = "test-refuse-tiled"

    def apply(self, ctx, op) -> None:
        raise error_at(next(iter(op.walk())), "refused")
