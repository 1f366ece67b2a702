"""The generated reference pages cover every op and every ziggurat pass."""

from ziggurat.dialects.graph import Graph, TransposeOp
from ziggurat.tools.gen_docs import describe_constraint, generate
from ziggurat.universe import PASSES


def test_reference_pages_list_every_op_and_pass(tmp_path):
    pages = {path.name: path.read_text() for path in generate(tmp_path)}
    graph_page = pages["graph.md"]
    for op in Graph.operations:
        assert f"### `{op.name}`" in graph_page
    for name in PASSES:
        assert f"## `{name}`" in pages["passes.md"]


def test_constraints_read_like_types():
    op_def = TransposeOp.get_irdl_definition()
    assert describe_constraint(op_def.properties["perm"].constr) == "array<i64>"
    assert describe_constraint(op_def.operands[0][1].constr) == "tensor"


def test_tools_page_has_every_tool_and_its_flags(tmp_path):
    pages = {path.name: path.read_text() for path in generate(tmp_path)}
    tools = pages["tools.md"]
    for tool in ("ziggurat-opt", "ziggurat-run", "ziggurat-compile"):
        assert f"## `{tool}`" in tools
    for flag in ("--verify-diagnostics", "--machine", "--report", "--check"):
        assert flag in tools
