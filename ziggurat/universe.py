"""ziggurat's dialects and passes, as one xDSL `Universe` found through the `xdsl.universe` entry point.

Factories import lazily so that `ziggurat-opt --help` does not pay for every dialect.
Adding a dialect or a pass to ziggurat means adding one line here.
"""

from collections.abc import Callable
from dataclasses import replace

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.arg_spec import ArgSpec


def _graph_dialect() -> Dialect:
    from ziggurat.dialects.graph import Graph

    return Graph


def _npu_dialect() -> Dialect:
    from ziggurat.dialects.npu import Npu

    return Npu


def _loop_dialect() -> Dialect:
    from ziggurat.dialects.loop import Loop

    return Loop


def _tile_dialect() -> Dialect:
    from ziggurat.dialects.tile import Tile

    return Tile


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "graph": _graph_dialect,
    "loop": _loop_dialect,
    "npu": _npu_dialect,
    "tile": _tile_dialect,
}


def _graph_fold_constants() -> type[ModulePass]:
    from ziggurat.transforms.graph.fold_constants import GraphFoldConstantsPass

    return GraphFoldConstantsPass


def _graph_canonicalize() -> type[ModulePass]:
    from ziggurat.transforms.graph.canonicalize import GraphCanonicalizePass

    return GraphCanonicalizePass


def _graph_convert_float() -> type[ModulePass]:
    from ziggurat.transforms.graph.convert_float import GraphConvertFloat

    return GraphConvertFloat


def _graph_fold_batch_norm() -> type[ModulePass]:
    from ziggurat.transforms.graph.fold_batch_norm import GraphFoldBatchNormPass

    return GraphFoldBatchNormPass


def _graph_split_grouped_conv() -> type[ModulePass]:
    from ziggurat.transforms.graph.split_grouped_conv import GraphSplitGroupedConvPass

    return GraphSplitGroupedConvPass


def _graph_integer_qdq() -> type[ModulePass]:
    from ziggurat.transforms.graph.integer_qdq import GraphIntegerQDQPass

    return GraphIntegerQDQPass


def _graph_space_to_depth() -> type[ModulePass]:
    from ziggurat.transforms.graph.space_to_depth import GraphSpaceToDepthPass

    return GraphSpaceToDepthPass


def _graph_fuse() -> type[ModulePass]:
    from ziggurat.transforms.graph.fuse import GraphFusePass

    return GraphFusePass


def _graph_unfuse() -> type[ModulePass]:
    from ziggurat.transforms.graph.unfuse import GraphUnfusePass

    return GraphUnfusePass


def _graph_layout() -> type[ModulePass]:
    from ziggurat.transforms.graph.layout import GraphLayoutPass

    return GraphLayoutPass


def _graph_to_tile() -> type[ModulePass]:
    from ziggurat.lowering.graph_to_tile import GraphToTilePass

    return GraphToTilePass


def _tile_decompose_conv() -> type[ModulePass]:
    from ziggurat.transforms.tile.decompose_conv import TileDecomposeConvPass

    return TileDecomposeConvPass


def _npu_insert_sync() -> type[ModulePass]:
    from ziggurat.transforms.npu.insert_sync import NpuInsertSyncPass

    return NpuInsertSyncPass


def _npu_hoist_invariant() -> type[ModulePass]:
    from ziggurat.transforms.npu.hoist_invariant import NpuHoistInvariantPass

    return NpuHoistInvariantPass


def _npu_plan_memory() -> type[ModulePass]:
    from ziggurat.transforms.npu.plan_memory import NpuPlanMemoryPass

    return NpuPlanMemoryPass


def _loop_to_npu() -> type[ModulePass]:
    from ziggurat.lowering.loop_to_npu import LoopToNpuPass

    return LoopToNpuPass


def _tile_to_loop() -> type[ModulePass]:
    from ziggurat.lowering.tile_to_loop import TileToLoopPass

    return TileToLoopPass


def _loop_promote_to_memory_space() -> type[ModulePass]:
    from ziggurat.transforms.loop.promote_to_memory_space import PromoteToMemorySpacePass

    return PromoteToMemorySpacePass


def _loop_legalize_copies() -> type[ModulePass]:
    from ziggurat.transforms.loop.legalize_copies import LegalizeCopiesPass

    return LegalizeCopiesPass


def _loop_hoist_copies() -> type[ModulePass]:
    from ziggurat.transforms.loop.hoist_copies import HoistCopiesPass

    return HoistCopiesPass


def _loop_stage_reduction() -> type[ModulePass]:
    from ziggurat.transforms.loop.stage_reduction import StageReductionPass

    return StageReductionPass


def _loop_distribute() -> type[ModulePass]:
    from ziggurat.transforms.loop.distribute import DistributePass

    return DistributePass


def _npu_private_scratch() -> type[ModulePass]:
    from ziggurat.transforms.npu.private_scratch import PrivateScratchPass

    return PrivateScratchPass


def _loop_double_buffer() -> type[ModulePass]:
    from ziggurat.transforms.loop.double_buffer import DoubleBufferPass

    return DoubleBufferPass


def _tile_vectorize() -> type[ModulePass]:
    from ziggurat.transforms.tile.vectorize import TileVectorizePass

    return TileVectorizePass


def _tile_and_fuse() -> type[ModulePass]:
    from ziggurat.transforms.tile.tile_and_fuse import TileAndFusePass

    return TileAndFusePass


def _tile_record_useful_work() -> type[ModulePass]:
    from ziggurat.transforms.tile.record_useful_work import TileRecordUsefulWorkPass

    return TileRecordUsefulWorkPass


def _tile_pack() -> type[ModulePass]:
    from ziggurat.transforms.tile.pack import TilePackPass

    return TilePackPass


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "graph-canonicalize": _graph_canonicalize,
    "graph-convert-float": _graph_convert_float,
    "graph-fold-batch-norm": _graph_fold_batch_norm,
    "graph-fold-constants": _graph_fold_constants,
    "graph-fuse": _graph_fuse,
    "graph-integer-qdq": _graph_integer_qdq,
    "graph-layout": _graph_layout,
    "graph-space-to-depth": _graph_space_to_depth,
    "graph-split-grouped-conv": _graph_split_grouped_conv,
    "graph-unfuse": _graph_unfuse,
    "graph-to-tile": _graph_to_tile,
    "tile-pack": _tile_pack,
    "tile-record-useful-work": _tile_record_useful_work,
    "tile-and-fuse": _tile_and_fuse,
    "tile-vectorize": _tile_vectorize,
    "loop-promote-to-memory-space": _loop_promote_to_memory_space,
    "loop-legalize-copies": _loop_legalize_copies,
    "loop-stage-reduction": _loop_stage_reduction,
    "loop-hoist-copies": _loop_hoist_copies,
    "loop-distribute": _loop_distribute,
    "loop-double-buffer": _loop_double_buffer,
    "tile-to-loop": _tile_to_loop,
    "loop-to-npu": _loop_to_npu,
    "npu-insert-sync": _npu_insert_sync,
    "npu-hoist-invariant": _npu_hoist_invariant,
    "npu-plan-memory": _npu_plan_memory,
    "npu-private-scratch": _npu_private_scratch,
    "tile-decompose-conv": _tile_decompose_conv,
}

RENAMED_PASSES: dict[str, str] = {
    "double-buffer": "loop-double-buffer",
    "hoist-copies": "loop-hoist-copies",
    "promote-to-memory-space": "loop-promote-to-memory-space",
    "stage-reduction": "loop-stage-reduction",
}
"""Old pass names, each still accepted for one release as the pass it now names (docs/lowering.md)."""


def _renamed(old: str, new: str) -> Callable[[], type[ModulePass]]:
    """The factory of `old`: a pass class named `old` whose spec makes the pass `new` (options and all)."""

    def factory() -> type[ModulePass]:
        current = PASSES[new]()

        def from_spec(cls, spec: ArgSpec) -> ModulePass:
            return current.from_spec(replace(spec, name=new))

        members = {
            "name": old,
            "__doc__": f"The old name of `{new}`, accepted for one release.",
            "__module__": current.__module__,
            "from_spec": classmethod(from_spec),
        }
        return type(current.__name__, (current,), members)

    return factory


ZIGGURAT_UNIVERSE = Universe(
    all_dialects=DIALECTS,
    all_passes=PASSES | {old: _renamed(old, new) for old, new in RENAMED_PASSES.items()},
)
