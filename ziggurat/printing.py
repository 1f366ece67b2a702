"""xDSL's `Printer`, with large dense constants printed from their bytes: the same text as xDSL's, without
decoding every element into a Python number first (most of the time spent printing a model's weights).
Every tool prints IR through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from io import StringIO
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Attribute
from xdsl.printer import Printer as XdslPrinter
from xdsl.syntax_printer import SyntaxPrinter as XdslSyntaxPrinter
from xdsl.targets.mlir import MLIRTarget as XdslMLIRTarget
from xdsl.utils.identity import identity

from ziggurat.dtypes import is_splat
from ziggurat.parsing import MAX_SPLAT_ELEMENTS

HEX_ELEMENTS = 100
"""xDSL prints a non-splat dense attribute of more elements than this as hex."""


class Printer(XdslPrinter):
    """xDSL's printer, printing a large non-splat `dense<...>` as the hex of its bytes without decoding them.

        dense<"0x00BC0034..."> : tensor<64x3x7x7xbf16>

    A splat is printed from its first element only; one with more elements than the
    parser expands from a number (`MAX_SPLAT_ELEMENTS`) is printed as the hex of
    that element, which xDSL and MLIR read back as a splat by repeating its bytes:

        dense<"0x3CA4"> : tensor<4096x25088xbf16>
    """

    def print_string(self, text: str, *, indent: int | None = None) -> None:
        # xDSL's print_string, without its per-call encoding and newline splitting where
        # the text has no newline (most of the hundreds of thousands of tokens a module prints)
        if self._encode is not identity or "\n" in text:
            return super().print_string(text, indent=indent)
        self._current_column += len(text)
        self.stream.write(text)

    def print_attribute(self, attribute: Attribute) -> None:
        if isinstance(attribute, DenseIntOrFPElementsAttr):
            if len(attribute) > HEX_ELEMENTS:
                return self._print_large_dense(attribute)
            return super().print_attribute(attribute)
        # An attribute prints the same text wherever it appears (it holds no SSA value): print
        # each once per printer. A module repeats few distinct types and attributes many times.
        texts = self.__dict__.setdefault("_attribute_texts", {})
        text = texts.get(attribute)
        if text is None:
            stream, self.stream = self.stream, StringIO()
            column, self._names_resource = self._current_column, False
            try:
                super().print_attribute(attribute)
                text = self.stream.getvalue()
            finally:
                self.stream = stream
                self._current_column = column
            if not self._names_resource:  # a resource is also listed at the end of the module
                texts[attribute] = text
        self.print_string(text)

    def print_resource_handle(self, dialect: str, handle: str) -> None:
        self._names_resource = True
        super().print_resource_handle(dialect, handle)

    def _print_large_dense(self, attribute: DenseIntOrFPElementsAttr) -> None:
        element_type = attribute.get_element_type()
        first = attribute.data.data[: element_type.compile_time_size]
        if not is_splat(attribute):
            self.print_string(f'dense<"0x{attribute.data.data.hex().upper()}"> : ')
        elif len(attribute) > MAX_SPLAT_ELEMENTS:
            self.print_string(f'dense<"0x{first.hex().upper()}"> : ')
        else:
            DenseIntOrFPElementsAttr(
                TensorType(element_type, [1]), BytesAttr(first)
            ).print_without_type(self)
            self.print_string(" : ")
        self.print_attribute(attribute.get_type())


class SyntaxPrinter(Printer, XdslSyntaxPrinter):
    """`Printer` with xDSL's syntax highlighting (`ziggurat-opt --syntax-highlight`)."""


@dataclass(frozen=True)
class MLIRTarget(XdslMLIRTarget):
    """xDSL's `mlir` output target, printing through `Printer`: same options, same text
    except for large dense constants, which it prints so that they parse back."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        printer = (SyntaxPrinter if self.syntax_highlight else Printer)(
            stream=output,
            print_generic_format=self.print_generic_format,
            print_properties_as_attributes=self.print_properties_as_attributes,
            print_debuginfo=self.print_debuginfo,
        )
        printer.print_op(module)
        printer.print_metadata(ctx.loaded_dialects)
        print("\n", file=output)


__all__ = ["MLIRTarget", "Printer", "SyntaxPrinter"]
