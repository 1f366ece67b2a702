"""The plugin's `Universe`; factories import lazily, as in `ziggurat.universe`."""

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def _toy_dialect() -> Dialect:
    from ziggurat_example_plugin.toy import Toy

    return Toy


def _double_to_add() -> type[ModulePass]:
    from ziggurat_example_plugin.double_to_add import ToyDoubleToAdd

    return ToyDoubleToAdd


def _crash() -> type[ModulePass]:
    from ziggurat_example_plugin.crash import ToyCrash

    return ToyCrash


TOY_UNIVERSE = Universe(
    all_dialects={"toy": _toy_dialect},
    all_passes={"toy-double-to-add": _double_to_add, "toy-crash": _crash},
)
