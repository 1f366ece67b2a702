// RUN: ziggurat-opt %s --verify-diagnostics

// A hexadecimal float literal is the element type's bit pattern: it must fit its width.

// expected-error@+1 {{hexadecimal float literal 0x7FC00000 does not fit the 16 bits of f16}}
%c = arith.constant dense<[0x7FC00000, 1.0]> : tensor<2xf16>
