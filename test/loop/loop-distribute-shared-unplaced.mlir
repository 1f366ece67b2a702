// Groups that each run on one core take the cores in turn, so a group can read what the group
// before it wrote on another core. Here (the loop IR of loop-distribute-shared.mlir as tile-to-loop
// gave it when the pooling was one tile) the pooling runs on core 0 into an unplaced buffer, which
// the matrix product reads on core 1: loop-distribute marks it loop.shared_by_cores, and
// loop-promote-to-memory-space keeps it in global memory, which every core sees, instead of core 0's
// unified buffer. Compiled for 2 cores, the program gives the loop interpreter's result (zeros when
// the buffer stayed in core 0's "ub").
// RUN: ziggurat-opt %s -p 'loop-distribute{machine=davinci cores=2}' | filecheck %s
// RUN: ziggurat-opt %s -p 'loop-distribute{machine=davinci cores=2},loop-promote-to-memory-space{machine=davinci}' | filecheck %s --check-prefix=PLACED
// RUN: ziggurat-run %s --outputs %t.loop.npz
// RUN: ziggurat-opt %s -p 'loop-distribute{machine=davinci cores=2},loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci},loop-stage-reduction,loop-hoist-copies,loop-double-buffer{machine=davinci},loop-to-npu{machine=davinci},npu-hoist-invariant{machine=davinci},npu-plan-memory{machine=davinci},npu-insert-sync{machine=davinci}' | ziggurat-run - --machine davinci --cores 2 --expect %t.loop.npz | filecheck %s --check-prefix=NUMBERS

// CHECK:       memref.alloc() {loop.shared_by_cores} : memref<1x16xf16>
// CHECK:       npu.sync_cores
// CHECK:       scf.if

// PLACED:      memref.alloc() {loop.shared_by_cores} : memref<1x16xf16, "gm">

// NUMBERS: result0: float16[1, 10] {{.*}} ok{{$}}

builtin.module {
  "memref.global"() <{sym_name = "constant1", type = memref<10x16xf16, "gm">, initial_value = dense<"0x21B5EDB02B37B12C1EB150B33B371BABB037F0236D255836C5332A2DB3AC0D36A8ADC436E7B67BACFE243737F8B3E534A631F23226308C375BB182AEC1B430B798B4A636713534B6A52E53A5102E193130B2623761A8193054300FB502B7AAAD39340B355C3330B69D36D5340B36F725A63641B784B7ADB7E9B306B400B54B2C60B7C92D58B5B131AAB710B20337EA28FC340E31172FF0B4C32C5DB7D4345D37AA3530B729B1D3B132B60D30C334F6B1CE35C134EFB545341F36D8B4B62C7030FF2E76B6293139302F35DB3488B11B33E03549366AB593B7D33091B4142C1E37BAAFE9B391A9083162B6A4AFDCB532314A35E1AF1BB00E298FB40BB471B174A9B2B60B34102D69B2C3B63634E7B5DEB5E9B5B3B6813663B332B25335AC2F02B52CAC2436F9AFC03274B646336D343635933123B0F9B6D0241F34F2B47BB39F28"> : tensor<10x16xf16>, sym_visibility = "private", constant}> : () -> ()
  "memref.global"() <{sym_name = "constant0", type = memref<16x8x1x1xf16, "gm">, initial_value = dense<"0x01305B36693466B465B2FA35EAB72435C1341CA84EB217B3D8B307AB9C1CD92AEE37AF34D22FD3378EB470B5332F4CB76EB7A12354A8AD3622303823599A0AB4D0B7ECB42532CAB42DB0F1B7483587B570B3163605218E357830BD3389B64329FD1FF13570B0492E0DB732AFAAB199B51035B8AFA937C32DBA2E6A30A63196B5A4AB2BB43DAE74B67C378FB47F3163B2FC353131E5B586351E377636762CACB5ECB4D936B22A1CB525368830762CEBAFB2AD2BB464B7053622A8182AB1B1053499B717B083B709B679370D3198AC1126F735FCB0C72DE131A1B0E4243E348C3695B5EF36EBB70C34F834D0B531AD0B35C5B71D30B034A8223A3361B4D3B461B0"> : tensor<16x8x1x1xf16>, sym_visibility = "private", constant}> : () -> ()
  func.func @main(%x: memref<1x8x6x6xf16, "gm">, %result0: memref<1x10xf16, "gm">) {
    %0 = memref.get_global @constant0 : memref<16x8x1x1xf16, "gm">
    %1 = arith.constant {tile.group = "conv2d_relu_0", tile.root} 0.000000e+00 : f32
    %2 = memref.alloc() : memref<1x16x6x6xf16, "gm">
    %3 = arith.constant 0 : index
    %4 = arith.constant 6 : index
    %5 = arith.constant 3 : index
    %6 = arith.constant 0.000000e+00 : f16
    scf.for %7 = %3 to %4 step %5 {
      %8 = memref.subview %x[0, 0, %7, 0] [1, 8, 3, 6] [1, 1, 1, 1] : memref<1x8x6x6xf16, "gm"> to memref<1x8x3x6xf16, strided<[288, 36, 6, 1], offset: ?>, "gm">
      %9 = memref.alloc() : memref<1x16x3x6xf32>
      linalg.fill {tile.group = "conv2d_relu_0", tile.root} ins(%1 : f32) outs(%9 : memref<1x16x3x6xf32>)
      %10 = memref.subview %0[0, 0, 0, 0] [16, 8, 1, 1] [1, 1, 1, 1] : memref<16x8x1x1xf16, "gm"> to memref<16x8xf16, strided<[8, 1]>, "gm">
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%8, %10 : memref<1x8x3x6xf16, strided<[288, 36, 6, 1], offset: ?>, "gm">, memref<16x8xf16, strided<[8, 1]>, "gm">) outs(%9 : memref<1x16x3x6xf32>) attrs =  {tile.group = "conv2d_relu_0", tile.root} {
      ^bb0(%11: f16, %12: f16, %13: f32):
        %14 = arith.extf %11 : f16 to f32
        %15 = arith.extf %12 : f16 to f32
        %16 = arith.mulf %14, %15 : f32
        %17 = arith.addf %13, %16 : f32
        linalg.yield %17 : f32
      }
      %18 = memref.alloc() : memref<1x16x3x6xf16>
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9 : memref<1x16x3x6xf32>) outs(%18 : memref<1x16x3x6xf16>) attrs =  {tile.group = "conv2d_relu_0", tile.root} {
      ^bb0(%19: f32, %20: f16):
        %21 = arith.truncf %19 : f32 to f16
        linalg.yield %21 : f16
      }
      %22 = memref.subview %2[0, 0, %7, 0] [1, 16, 3, 6] [1, 1, 1, 1] : memref<1x16x6x6xf16, "gm"> to memref<1x16x3x6xf16, strided<[576, 36, 6, 1], offset: ?>, "gm">
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%18, %6 : memref<1x16x3x6xf16>, f16) outs(%22 : memref<1x16x3x6xf16, strided<[576, 36, 6, 1], offset: ?>, "gm">) attrs =  {tile.group = "conv2d_relu_0"} {
      ^bb0(%23: f16, %24: f16, %25: f16):
        %26 = arith.maximumf %23, %24 : f16
        linalg.yield %26 : f16
      }
    }
    %27 = arith.constant {tile.group = "global_avg_pool_0", tile.root} 0.000000e+00 : f32
    %28 = memref.alloc() : memref<1x16x6xf32>
    linalg.fill {tile.group = "global_avg_pool_0", tile.root} ins(%27 : f32) outs(%28 : memref<1x16x6xf32>)
    %29 = memref.alloc() : memref<1x16x6x6xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2 : memref<1x16x6x6xf16, "gm">) outs(%29 : memref<1x16x6x6xf32>) attrs =  {tile.group = "global_avg_pool_0", tile.root} {
    ^bb0(%30: f16, %31: f32):
      %32 = arith.extf %30 : f16 to f32
      linalg.yield %32 : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%29 : memref<1x16x6x6xf32>) outs(%28 : memref<1x16x6xf32>) attrs =  {tile.group = "global_avg_pool_0", tile.root} {
    ^bb0(%33: f32, %34: f32):
      %35 = arith.addf %33, %34 : f32
      linalg.yield %35 : f32
    }
    %36 = arith.constant {tile.group = "global_avg_pool_0", tile.root} 0.000000e+00 : f32
    %37 = memref.alloc() : memref<1x16xf32>
    linalg.fill {tile.group = "global_avg_pool_0", tile.root} ins(%36 : f32) outs(%37 : memref<1x16xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%28 : memref<1x16x6xf32>) outs(%37 : memref<1x16xf32>) attrs =  {tile.group = "global_avg_pool_0", tile.root} {
    ^bb0(%38: f32, %39: f32):
      %40 = arith.addf %38, %39 : f32
      linalg.yield %40 : f32
    }
    %41 = memref.alloc() : memref<1x16xf16>
    %42 = arith.constant 3.600000e+01 : f32
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%37, %42 : memref<1x16xf32>, f32) outs(%37 : memref<1x16xf32>) attrs =  {tile.group = "global_avg_pool_0", tile.root} {
    ^bb0(%43: f32, %44: f32, %45: f32):
      %46 = arith.divf %43, %44 : f32
      linalg.yield %46 : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%37 : memref<1x16xf32>) outs(%41 : memref<1x16xf16>) attrs =  {tile.group = "global_avg_pool_0", tile.root} {
    ^bb0(%47: f32, %48: f16):
      %49 = arith.truncf %47 : f32 to f16
      linalg.yield %49 : f16
    }
    %50 = memref.expand_shape %41 [[0 : i64], [1 : i64, 2 : i64, 3 : i64]] output_shape [1, 16, 1, 1] : memref<1x16xf16> into memref<1x16x1x1xf16>
    %51 = memref.get_global @constant1 : memref<10x16xf16, "gm">
    %52 = arith.constant {tile.group = "gemm_0", tile.root} 0.000000e+00 : f32
    %53 = memref.alloc() : memref<1x10xf32>
    linalg.fill {tile.group = "gemm_0", tile.root} ins(%52 : f32) outs(%53 : memref<1x10xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%41, %51 : memref<1x16xf16>, memref<10x16xf16, "gm">) outs(%53 : memref<1x10xf32>) attrs =  {tile.group = "gemm_0", tile.root} {
    ^bb0(%54: f16, %55: f16, %56: f32):
      %57 = arith.extf %54 : f16 to f32
      %58 = arith.extf %55 : f16 to f32
      %59 = arith.mulf %57, %58 : f32
      %60 = arith.addf %56, %59 : f32
      linalg.yield %60 : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%53 : memref<1x10xf32>) outs(%result0 : memref<1x10xf16, "gm">) attrs =  {tile.group = "gemm_0", tile.root} {
    ^bb0(%61: f32, %62: f16):
      %63 = arith.truncf %61 : f32 to f16
      linalg.yield %63 : f16
    }
    func.return
  }
}

