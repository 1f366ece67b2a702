"""The `toy` dialect: `%y = toy.double %x : T` computes x + x for a value of any type T."""

from typing import ClassVar

from xdsl.ir import Dialect
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure


@irdl_op_definition
class DoubleOp(IRDLOperation):
    """x + x; the result has the operand's type."""

    name = "toy.double"

    T: ClassVar = VarConstraint("T", AnyAttr())
    input = operand_def(T)
    output = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input)"


Toy = Dialect("toy", [DoubleOp])
