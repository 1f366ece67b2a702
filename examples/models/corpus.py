"""A corpus of real network architectures written in PyTorch (torchvision's structure, no torchvision),
with seeded weights trained briefly on a synthetic task, exported with torch.onnx.export for tests and
benchmarks.

    /tmp/torchvenv/bin/python examples/models/corpus.py test/unit/data/corpus --size small
    /tmp/torchvenv/bin/python examples/models/corpus.py benchmarks/results/corpus --size full  # make conformance

Needs torch and onnxscript (the `models` extra; ziggurat does not): it runs in a virtual environment of
its own (see test/unit/data/corpus/README.md). Nothing is downloaded. Per model the directory gets
`<name>.onnx` (TorchScript exporter, opset 17, static shapes), `<name>.inputs.npz` (a seeded input,
keyed by input name) and `<name>.outputs.npz` (onnxruntime's outputs with graph optimizations off, keyed
by output name; a classifier's are the logits before softmax), and a README.md listing them.

`--size full` is the published resolution and width (224x224 images, ImageNet widths, 1000 classes;
BERT-base, GPT-2 small at 128 tokens); `--size small` narrows every network (fewer channels, 32x32
images, 10 classes, two transformer layers) so each file stays under 1.5 MB, keeping each architecture's
depth and operators. The weights start seeded random; the image models are then trained on a synthetic
task (`SyntheticImages`: which of 10 fixed templates with a natural image's spectrum an input is, under
as much white noise) until they classify it (`train`; the full-size CNNs at 64x64, the full-size ViT not
at all), because random BatchNorm networks amplify every rounding of their activations as trained
ones do not. BatchNorm statistics are then calibrated on batches of the task's inputs (train mode with a
cumulative average, then eval), so activations stay O(1). `resnet18_int8` and `mobilenet_v2_int8` are
the float exports quantized by onnxruntime's `quantize_static` (QDQ, uint8 activations, int8
per-channel weights, calibrated on the task's inputs).

Before a model is written its export is checked: onnxruntime against torch (max abs difference), and the
logits must not be degenerate (std across classes > 0.1 and different for two inputs).
"""

from __future__ import annotations

import argparse
import copy
import functools
import math
import platform
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import onnxruntime
import onnxscript
import torch
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from torch import nn
from torch.nn import functional as F

OPSET = 17
CALIBRATION_BATCHES, CALIBRATION_BATCH = 4, 16
EXPORT_RTOL, EXPORT_SLACK = 1e-5, 4.0
"""onnxruntime's f32 logits against torch's in f64: within 1e-5 relative to the largest logit, or within
4x torch's own f32 error (summation order and kernels differ; an export bug moves logits by O(1))."""


def make_divisible(value: float, divisor: int = 8, minimum: int | None = None) -> int:
    """torchvision's _make_divisible: round to a multiple of `divisor`, at most 10% down."""
    minimum = minimum or divisor
    rounded = max(minimum, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def conv_bn(
    cin: int,
    cout: int,
    kernel: int,
    stride: int = 1,
    groups: int = 1,
    act: Callable | None = nn.ReLU,
    eps: float = 1e-5,
    padding: int | None = None,
) -> nn.Sequential:
    """Conv2d (no bias), BatchNorm2d and an activation: torchvision's Conv2dNormActivation."""
    padding = (kernel - 1) // 2 if padding is None else padding
    layers = [
        nn.Conv2d(cin, cout, kernel, stride, padding, groups=groups, bias=False),
        nn.BatchNorm2d(cout, eps=eps),
    ]
    return nn.Sequential(*layers, *([act()] if act is not None else []))


# --------------------------------------------------------------------------- #
# ResNet-18 / ResNet-50
# --------------------------------------------------------------------------- #


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin: int, planes: int, stride: int):
        super().__init__()
        self.conv1 = conv_bn(cin, planes, 3, stride)
        self.conv2 = conv_bn(planes, planes, 3, act=None)
        out = planes * self.expansion
        self.downsample = (
            conv_bn(cin, out, 1, stride, act=None) if stride != 1 or cin != out else None
        )

    def residual_norm(self) -> nn.BatchNorm2d:
        return self.conv2[1]

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(self.conv2(self.conv1(x)) + identity)


class Bottleneck(nn.Module):
    """ResNet v1.5: the stride on the 3x3 conv."""

    expansion = 4

    def __init__(self, cin: int, planes: int, stride: int):
        super().__init__()
        out = planes * self.expansion
        self.body = nn.Sequential(
            conv_bn(cin, planes, 1),
            conv_bn(planes, planes, 3, stride),
            conv_bn(planes, out, 1, act=None),
        )
        self.downsample = (
            conv_bn(cin, out, 1, stride, act=None) if stride != 1 or cin != out else None
        )

    def residual_norm(self) -> nn.BatchNorm2d:
        return self.body[-1][1]

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(self.body(x) + identity)


class ResNet(nn.Module):
    def __init__(self, block: type, layers: list[int], width: int, classes: int):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, width, 7, 2, padding=3), nn.MaxPool2d(3, 2, 1))
        stages, cin = [], width
        for index, count in enumerate(layers):
            planes = width * 2**index
            for i in range(count):
                stages.append(block(cin, planes, 2 if i == 0 and index > 0 else 1))
                cin = planes * block.expansion
        self.layers = nn.Sequential(*stages)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))


# --------------------------------------------------------------------------- #
# MobileNetV2 / MobileNetV3-small
# --------------------------------------------------------------------------- #


class InvertedResidual(nn.Module):
    """MobileNetV2's block: 1x1 expand, 3x3 depthwise, 1x1 linear projection, ReLU6."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        layers = [conv_bn(cin, hidden, 1, act=nn.ReLU6)] if expand != 1 else []
        layers += [
            conv_bn(hidden, hidden, 3, stride, groups=hidden, act=nn.ReLU6),
            conv_bn(hidden, cout, 1, act=None),
        ]
        self.conv = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def residual_norm(self) -> nn.BatchNorm2d | None:
        return self.conv[-1][1] if self.residual else None

    def forward(self, x):
        return x + self.conv(x) if self.residual else self.conv(x)


class MobileNetV2(nn.Module):
    # expansion, output channels, blocks, stride of the first
    SETTINGS = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ]

    def __init__(self, width: float, classes: int):
        super().__init__()
        cin = make_divisible(32 * width)
        last = make_divisible(1280 * max(1.0, width))
        layers = [conv_bn(3, cin, 3, 2, act=nn.ReLU6)]
        for t, c, n, s in self.SETTINGS:
            cout = make_divisible(c * width)
            for i in range(n):
                layers.append(InvertedResidual(cin, cout, s if i == 0 else 1, t))
                cin = cout
        layers.append(conv_bn(cin, last, 1, act=nn.ReLU6))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


class SqueezeExcitation(nn.Module):
    """torchvision's SqueezeExcitation: global average, 1x1 conv, activation, 1x1 conv, gate."""

    def __init__(
        self, channels: int, squeeze: int, act: Callable = nn.ReLU, gate: Callable = nn.Sigmoid
    ):
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(channels, squeeze, 1), nn.Conv2d(squeeze, channels, 1)
        self.act, self.gate = act(), gate()

    def forward(self, x):
        return x * self.gate(self.fc2(self.act(self.fc1(F.adaptive_avg_pool2d(x, 1)))))


class MobileNetV3Block(nn.Module):
    def __init__(
        self, cin: int, kernel: int, expanded: int, cout: int, se: bool, act: Callable, stride: int
    ):
        super().__init__()
        layers = [conv_bn(cin, expanded, 1, act=act)] if expanded != cin else []
        layers.append(conv_bn(expanded, expanded, kernel, stride, groups=expanded, act=act))
        if se:
            layers.append(
                SqueezeExcitation(expanded, make_divisible(expanded // 4), gate=nn.Hardsigmoid)
            )
        layers.append(conv_bn(expanded, cout, 1, act=None))
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def residual_norm(self) -> nn.BatchNorm2d | None:
        return self.block[-1][1] if self.residual else None

    def forward(self, x):
        return x + self.block(x) if self.residual else self.block(x)


class MobileNetV3Small(nn.Module):
    # input, kernel, expanded, output, squeeze-excitation, activation, stride
    SETTINGS = [
        (16, 3, 16, 16, True, "RE", 2),
        (16, 3, 72, 24, False, "RE", 2),
        (24, 3, 88, 24, False, "RE", 1),
        (24, 5, 96, 40, True, "HS", 2),
        (40, 5, 240, 40, True, "HS", 1),
        (40, 5, 240, 40, True, "HS", 1),
        (40, 5, 120, 48, True, "HS", 1),
        (48, 5, 144, 48, True, "HS", 1),
        (48, 5, 288, 96, True, "HS", 2),
        (96, 5, 576, 96, True, "HS", 1),
        (96, 5, 576, 96, True, "HS", 1),
    ]

    def __init__(self, width: float, classes: int):
        super().__init__()

        def scale(c: int) -> int:
            return make_divisible(c * width)

        layers = [conv_bn(3, scale(16), 3, 2, act=nn.Hardswish)]
        for cin, kernel, expanded, cout, se, act, stride in self.SETTINGS:
            act = nn.ReLU if act == "RE" else nn.Hardswish
            layers.append(
                MobileNetV3Block(scale(cin), kernel, scale(expanded), scale(cout), se, act, stride)
            )
        last_conv = 6 * scale(96)
        layers.append(conv_bn(scale(96), last_conv, 1, act=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        last = make_divisible(1024 * width)
        self.classifier = nn.Sequential(
            nn.Linear(last_conv, last), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(last, classes)
        )

    def forward(self, x):
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


# --------------------------------------------------------------------------- #
# EfficientNet-B0
# --------------------------------------------------------------------------- #


class MBConv(nn.Module):
    def __init__(self, cin: int, cout: int, kernel: int, stride: int, expand: int):
        super().__init__()
        hidden = make_divisible(cin * expand)
        layers = [conv_bn(cin, hidden, 1, act=nn.SiLU, eps=1e-3)] if hidden != cin else []
        layers += [
            conv_bn(hidden, hidden, kernel, stride, groups=hidden, act=nn.SiLU, eps=1e-3),
            SqueezeExcitation(hidden, max(1, cin // 4), act=nn.SiLU),
            conv_bn(hidden, cout, 1, act=None, eps=1e-3),
        ]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def residual_norm(self) -> nn.BatchNorm2d | None:
        return self.block[-1][1] if self.residual else None

    def forward(self, x):
        return x + self.block(x) if self.residual else self.block(x)


class EfficientNetB0(nn.Module):
    # expand, kernel, stride, input, output, layers
    SETTINGS = [
        (1, 3, 1, 32, 16, 1),
        (6, 3, 2, 16, 24, 2),
        (6, 5, 2, 24, 40, 2),
        (6, 3, 2, 40, 80, 3),
        (6, 5, 1, 80, 112, 3),
        (6, 5, 2, 112, 192, 4),
        (6, 3, 1, 192, 320, 1),
    ]

    def __init__(self, width: float, classes: int):
        super().__init__()

        def scale(c: int) -> int:
            return make_divisible(c * width)

        layers = [conv_bn(3, scale(32), 3, 2, act=nn.SiLU, eps=1e-3)]
        for expand, kernel, stride, cin, cout, count in self.SETTINGS:
            for i in range(count):
                first = i == 0
                block = MBConv(
                    scale(cin if first else cout),
                    scale(cout),
                    kernel,
                    stride if first else 1,
                    expand,
                )
                layers.append(block)
        last = 4 * scale(320)
        layers.append(conv_bn(scale(320), last, 1, act=nn.SiLU, eps=1e-3))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


# --------------------------------------------------------------------------- #
# RegNetY-400MF
# --------------------------------------------------------------------------- #


class RegNetBlock(nn.Module):
    """torchvision's ResBottleneckBlock (bottleneck multiplier 1): 1x1, grouped 3x3, SE, 1x1, residual."""

    def __init__(self, cin: int, cout: int, stride: int, group_width: int, se_ratio: float):
        super().__init__()
        groups = cout // group_width
        self.body = nn.Sequential(
            conv_bn(cin, cout, 1),
            conv_bn(cout, cout, 3, stride, groups=groups),
            SqueezeExcitation(cout, int(round(se_ratio * cin))),
            conv_bn(cout, cout, 1, act=None),
        )
        self.proj = conv_bn(cin, cout, 1, stride, act=None) if stride != 1 or cin != cout else None

    def residual_norm(self) -> nn.BatchNorm2d:
        return self.body[-1][1]

    def forward(self, x):
        return F.relu(self.body(x) + (x if self.proj is None else self.proj(x)))


class RegNetY(nn.Module):
    def __init__(
        self, stem: int, depths: list[int], widths: list[int], group_width: int, classes: int
    ):
        super().__init__()
        layers, cin = [conv_bn(3, stem, 3, 2)], stem
        for depth, width in zip(depths, widths, strict=True):
            for i in range(depth):
                layers.append(RegNetBlock(cin, width, 2 if i == 0 else 1, group_width, 0.25))
                cin = width
        self.trunk = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.trunk(x), 1), 1))


# --------------------------------------------------------------------------- #
# ShuffleNetV2
# --------------------------------------------------------------------------- #


def channel_shuffle(x, groups: int):
    batch, channels, height, width = x.size()
    x = x.view(batch, groups, channels // groups, height, width).transpose(1, 2).contiguous()
    return x.view(batch, channels, height, width)


class ShuffleUnit(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.stride = stride
        branch = cout // 2
        if stride > 1:
            self.branch1 = nn.Sequential(
                conv_bn(cin, cin, 3, stride, groups=cin, act=None), conv_bn(cin, branch, 1)
            )
        self.branch2 = nn.Sequential(
            conv_bn(cin if stride > 1 else branch, branch, 1),
            conv_bn(branch, branch, 3, stride, groups=branch, act=None),
            conv_bn(branch, branch, 1),
        )

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, repeats: list[int], channels: list[int], classes: int):
        super().__init__()
        layers, cin = [conv_bn(3, channels[0], 3, 2), nn.MaxPool2d(3, 2, 1)], channels[0]
        for count, cout in zip(repeats, channels[1:-1], strict=True):
            layers += [ShuffleUnit(cin, cout, 2)] + [
                ShuffleUnit(cout, cout, 1) for _ in range(count - 1)
            ]
            cin = cout
        layers.append(conv_bn(cin, channels[-1], 1))
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(channels[-1], classes)

    def forward(self, x):
        return self.fc(self.features(x).mean([2, 3]))


# --------------------------------------------------------------------------- #
# ConvNeXt-T
# --------------------------------------------------------------------------- #


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor (torchvision's: permute, layer_norm, permute)."""

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps).permute(
            0, 3, 1, 2
        )


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int, layer_scale: float):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.layer_scale = nn.Parameter(torch.full((dim, 1, 1), layer_scale))

    def forward(self, x):
        y = self.mlp(self.norm(self.dwconv(x).permute(0, 2, 3, 1))).permute(0, 3, 1, 2)
        return x + self.layer_scale * y


class ConvNeXt(nn.Module):
    """ConvNeXt with torchvision's layout. The layer scale starts at 0.5, not torchvision's 1e-6 (which
    before training makes every block the identity to 1e-6, so the export would check nothing)."""

    def __init__(self, depths: list[int], dims: list[int], classes: int):
        super().__init__()
        layers = [nn.Sequential(nn.Conv2d(3, dims[0], 4, 4), LayerNorm2d(dims[0], eps=1e-6))]
        for index, (depth, dim) in enumerate(zip(depths, dims, strict=True)):
            if index > 0:
                previous = dims[index - 1]
                layers.append(
                    nn.Sequential(LayerNorm2d(previous, eps=1e-6), nn.Conv2d(previous, dim, 2, 2))
                )
            layers += [ConvNeXtBlock(dim, 0.5) for _ in range(depth)]
        self.features = nn.Sequential(*layers)
        self.norm = LayerNorm2d(dims[-1], eps=1e-6)
        self.fc = nn.Linear(dims[-1], classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.norm(F.adaptive_avg_pool2d(self.features(x), 1)), 1))


# --------------------------------------------------------------------------- #
# GoogLeNet (Inception v1)
# --------------------------------------------------------------------------- #


class Inception(nn.Module):
    """torchvision's Inception block (its 'fourth' branch is a 3x3, as torchvision has it)."""

    def __init__(self, cin, ch1, ch3r, ch3, ch5r, ch5, pool):
        super().__init__()
        conv = partial(conv_bn, eps=1e-3)
        self.branch1 = conv(cin, ch1, 1)
        self.branch2 = nn.Sequential(conv(cin, ch3r, 1), conv(ch3r, ch3, 3))
        self.branch3 = nn.Sequential(conv(cin, ch5r, 1), conv(ch5r, ch5, 3))
        self.branch4 = nn.Sequential(nn.MaxPool2d(3, 1, 1, ceil_mode=True), conv(cin, pool, 1))

    def forward(self, x):
        return torch.cat([self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)], 1)


class GoogLeNet(nn.Module):
    BLOCKS = {
        "3a": (192, 64, 96, 128, 16, 32, 32),
        "3b": (256, 128, 128, 192, 32, 96, 64),
        "4a": (480, 192, 96, 208, 16, 48, 64),
        "4b": (512, 160, 112, 224, 24, 64, 64),
        "4c": (512, 128, 128, 256, 24, 64, 64),
        "4d": (512, 112, 144, 288, 32, 64, 64),
        "4e": (528, 256, 160, 320, 32, 128, 128),
        "5a": (832, 256, 160, 320, 32, 128, 128),
        "5b": (832, 384, 192, 384, 48, 128, 128),
    }

    def __init__(self, width: float, classes: int):
        super().__init__()

        def scale(c: int) -> int:
            return max(4, int(round(c * width)))

        conv = partial(conv_bn, eps=1e-3)
        blocks = {}
        for name, (_, *branches) in self.BLOCKS.items():
            ch1, ch3r, ch3, ch5r, ch5, pool = map(scale, branches)
            blocks[name] = (ch1, ch3r, ch3, ch5r, ch5, pool)
        inputs, cin = {}, scale(192)
        for name, (ch1, _, ch3, _, ch5, pool) in blocks.items():
            inputs[name] = cin
            cin = ch1 + ch3 + ch5 + pool
        maxpool = partial(nn.MaxPool2d, 3, 2, ceil_mode=True)
        layers = [
            conv(3, scale(64), 7, 2, padding=3),
            maxpool(),
            conv(scale(64), scale(64), 1),
            conv(scale(64), scale(192), 3),
            maxpool(),
        ]
        for name, branches in blocks.items():
            layers.append(Inception(inputs[name], *branches))
            if name == "3b":
                layers.append(maxpool())
            if name == "4e":
                layers.append(nn.MaxPool2d(2, 2, ceil_mode=True))
        self.features = nn.Sequential(*layers)
        self.fc = nn.Sequential(nn.Dropout(0.2), nn.Linear(cin, classes))

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


# --------------------------------------------------------------------------- #
# DenseNet-121
# --------------------------------------------------------------------------- #


class DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int, bn_size: int):
        super().__init__()
        self.body = nn.Sequential(
            nn.BatchNorm2d(cin),
            nn.ReLU(),
            nn.Conv2d(cin, bn_size * growth, 1, bias=False),
            nn.BatchNorm2d(bn_size * growth),
            nn.ReLU(),
            nn.Conv2d(bn_size * growth, growth, 3, padding=1, bias=False),
        )

    def forward(self, features: list):
        return self.body(torch.cat(features, 1))


class DenseBlock(nn.Module):
    def __init__(self, count: int, cin: int, growth: int, bn_size: int):
        super().__init__()
        self.layers = nn.ModuleList(
            DenseLayer(cin + i * growth, growth, bn_size) for i in range(count)
        )

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            features.append(layer(features))
        return torch.cat(features, 1)


class DenseNet(nn.Module):
    def __init__(self, growth: int, blocks: list[int], init: int, classes: int, bn_size: int = 4):
        super().__init__()
        layers = [
            nn.Conv2d(3, init, 7, 2, 3, bias=False),
            nn.BatchNorm2d(init),
            nn.ReLU(),
            nn.MaxPool2d(3, 2, 1),
        ]
        cin = init
        for index, count in enumerate(blocks):
            layers.append(DenseBlock(count, cin, growth, bn_size))
            cin += count * growth
            if index != len(blocks) - 1:
                layers += [
                    nn.BatchNorm2d(cin),
                    nn.ReLU(),
                    nn.Conv2d(cin, cin // 2, 1, bias=False),
                    nn.AvgPool2d(2, 2),
                ]
                cin //= 2
        layers += [nn.BatchNorm2d(cin), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(cin, classes)

    def forward(self, x):
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


# --------------------------------------------------------------------------- #
# ViT, BERT, GPT
# --------------------------------------------------------------------------- #


class EncoderBlock(nn.Module):
    """torchvision's ViT block: pre-norm nn.MultiheadAttention and a GELU MLP."""

    def __init__(self, dim: int, heads: int, mlp: int):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(dim, eps=1e-6), nn.LayerNorm(dim, eps=1e-6)
        self.attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp), nn.GELU(), nn.Linear(mlp, dim))

    def forward(self, x):
        y = self.ln_1(x)
        x = x + self.attention(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class ViT(nn.Module):
    def __init__(
        self, image: int, patch: int, dim: int, depth: int, heads: int, mlp: int, classes: int
    ):
        super().__init__()
        self.conv_proj = nn.Conv2d(3, dim, patch, patch)
        self.class_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.positions = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, dim) * 0.02)
        self.layers = nn.Sequential(*(EncoderBlock(dim, heads, mlp) for _ in range(depth)))
        self.ln = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.conv_proj(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1) + self.positions
        return self.head(self.ln(self.layers(x))[:, 0])


@dataclass
class TextConfig:
    vocab: int
    positions: int
    length: int
    dim: int
    layers: int
    heads: int
    hidden: int
    labels: int = 0


class BertLayer(nn.Module):
    """HF BERT's post-norm layer: hand-written heads, the additive attention mask, erf GELU."""

    def __init__(self, c: TextConfig):
        super().__init__()
        self.heads = c.heads
        self.query, self.key, self.value, self.attention_out = (
            nn.Linear(c.dim, c.dim) for _ in range(4)
        )
        self.attention_norm, self.output_norm = (
            nn.LayerNorm(c.dim, eps=1e-12),
            nn.LayerNorm(c.dim, eps=1e-12),
        )
        self.intermediate, self.output = nn.Linear(c.dim, c.hidden), nn.Linear(c.hidden, c.dim)

    def split(self, x):
        return x.view(x.size()[:-1] + (self.heads, x.size(-1) // self.heads)).permute(0, 2, 1, 3)

    def forward(self, x, additive):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1)) + additive
        context = torch.matmul(scores.softmax(dim=-1), v).permute(0, 2, 1, 3).contiguous()
        x = self.attention_norm(x + self.attention_out(context.view(x.size())))
        return self.output_norm(x + self.output(F.gelu(self.intermediate(x))))


class Bert(nn.Module):
    """A BERT encoder for sequence classification: embeddings, post-norm layers, tanh pooler, classifier."""

    def __init__(self, c: TextConfig):
        super().__init__()
        self.words, self.positions = nn.Embedding(c.vocab, c.dim), nn.Embedding(c.positions, c.dim)
        self.token_types = nn.Embedding(2, c.dim)
        self.embedding_norm = nn.LayerNorm(c.dim, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(c) for _ in range(c.layers))
        self.pooler, self.classifier = nn.Linear(c.dim, c.dim), nn.Linear(c.dim, c.labels)

    def forward(self, input_ids, token_type_ids, attention_mask):
        position_ids = torch.arange(input_ids.size(1), dtype=torch.long).unsqueeze(0)
        x = self.words(input_ids) + self.positions(position_ids) + self.token_types(token_type_ids)
        x = self.embedding_norm(x)
        additive = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, additive)
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))


class GPTBlock(nn.Module):
    """GPT-2's pre-norm block: fused qkv projection, causal mask from a lower-triangular buffer, tanh GELU."""

    def __init__(self, c: TextConfig):
        super().__init__()
        self.heads = c.heads
        self.ln_1, self.ln_2 = nn.LayerNorm(c.dim), nn.LayerNorm(c.dim)
        self.qkv, self.proj = nn.Linear(c.dim, 3 * c.dim), nn.Linear(c.dim, c.dim)
        self.fc, self.fc_out = nn.Linear(c.dim, c.hidden), nn.Linear(c.hidden, c.dim)
        causal = torch.tril(torch.ones(c.positions, c.positions, dtype=torch.bool))
        self.register_buffer("causal", causal, persistent=False)

    def attention(self, x):
        batch, length, dim = x.size()
        q, k, v = (
            t.view(batch, length, self.heads, dim // self.heads).transpose(1, 2)
            for t in self.qkv(x).split(dim, 2)
        )
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        scores = scores.masked_fill(~self.causal[:length, :length], float("-inf"))
        return self.proj(
            (F.softmax(scores, dim=-1) @ v).transpose(1, 2).contiguous().view(batch, length, dim)
        )

    def forward(self, x):
        x = x + self.attention(self.ln_1(x))
        return x + self.fc_out(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    """A GPT-2 decoder: token and position embeddings, pre-norm blocks, final LayerNorm, tied LM head."""

    def __init__(self, c: TextConfig):
        super().__init__()
        self.tokens, self.positions = nn.Embedding(c.vocab, c.dim), nn.Embedding(c.positions, c.dim)
        self.blocks = nn.ModuleList(GPTBlock(c) for _ in range(c.layers))
        self.ln_f = nn.LayerNorm(c.dim)
        self.lm_head = nn.Linear(c.dim, c.vocab, bias=False)
        self.lm_head.weight = self.tokens.weight

    def forward(self, input_ids):
        x = self.tokens(input_ids) + self.positions(
            torch.arange(input_ids.size(1), dtype=torch.long)
        )
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


# --------------------------------------------------------------------------- #
# The corpus
# --------------------------------------------------------------------------- #


@dataclass
class Spec:
    """One model of the corpus at one size."""

    build: Callable[[], nn.Module]
    inputs: Callable[[np.random.Generator], dict[str, np.ndarray]]
    output: str
    description: str


TASK_CLASSES = 10
"""Classes of the synthetic task the image models are trained on (`SyntheticImages`)."""


@dataclass(frozen=True)
class SyntheticImages:
    """Inputs of an image model, and the synthetic classification task its weights are trained on.

    Class k is template k, a fixed random image with the 1/f amplitude spectrum of natural images
    (made at `train_size` and resized to `size`), at a random contrast in [0.5, 1.5) plus white noise
    of the same power: to classify, a network must learn to ignore the noise, as one trained on real
    images ignores perturbations of its input that carry no class. Called with a generator it gives
    one seeded input of `size` (the model's input)."""

    size: int
    train_size: int | None
    """The resolution the model trains at (None: it is not trained)."""

    def __call__(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        images, _ = self.batch(rng, 1, self.size)
        return {"image": images.numpy()}

    def batch(
        self, rng: np.random.Generator, count: int, size: int
    ) -> tuple[torch.Tensor, torch.Tensor]:
        labels = rng.integers(0, TASK_CLASSES, count)
        contrast = rng.uniform(0.5, 1.5, (count, 1, 1, 1))
        noise = rng.standard_normal((count, 3, size, size))
        images = templates(self.train_size or self.size, size)[labels] * contrast + noise
        return torch.from_numpy(images.astype(np.float32)), torch.from_numpy(labels)


@functools.cache
def templates(made: int, size: int) -> np.ndarray:
    """`TASK_CLASSES` images of unit variance with a 1/f amplitude spectrum, made at `made` x `made`
    and resized (bilinear) to `size`."""
    rng = np.random.default_rng(123)
    frequency = np.fft.fftfreq(made)
    radius = np.hypot(frequency[:, None], frequency[None, :])
    radius[0, 0] = 1.0 / made
    shape = (TASK_CLASSES, 3, made, made)
    spectrum = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) / radius
    images = np.real(np.fft.ifft2(spectrum))
    images /= images.std(axis=(1, 2, 3), keepdims=True)
    if size != made:
        resized = F.interpolate(torch.from_numpy(images), size=(size, size), mode="bilinear")
        images = resized.numpy()
    return images


def bert_tokens(c: TextConfig) -> Callable[[np.random.Generator], dict[str, np.ndarray]]:
    def make(rng: np.random.Generator) -> dict[str, np.ndarray]:
        types = np.zeros((1, c.length), np.int64)
        types[:, c.length // 2 :] = 1
        mask = np.ones((1, c.length), np.int64)
        mask[:, c.length - c.length // 4 :] = 0  # the last quarter is padding
        return {
            "input_ids": rng.integers(0, c.vocab, (1, c.length)),
            "token_type_ids": types,
            "attention_mask": mask,
        }

    return make


def gpt_tokens(c: TextConfig) -> Callable[[np.random.Generator], dict[str, np.ndarray]]:
    return lambda rng: {"input_ids": rng.integers(0, c.vocab, (1, c.length))}


def corpus(size: str) -> dict[str, Spec]:
    full = size == "full"
    res, classes = (224, 1000) if full else (32, 10)
    img = SyntheticImages(res, 64 if full else res)
    bert = (
        TextConfig(30522, 512, 128, 768, 12, 12, 3072, 2)
        if full
        else TextConfig(512, 64, 32, 64, 2, 4, 256, 10)
    )
    gpt = (
        TextConfig(50257, 1024, 128, 768, 12, 12, 3072)
        if full
        else TextConfig(512, 64, 32, 64, 2, 4, 256)
    )
    vit = (224, 16, 384, 12, 6, 1536) if full else (32, 4, 64, 2, 4, 256)
    return {
        "resnet18": Spec(
            lambda: ResNet(BasicBlock, [2, 2, 2, 2], 64 if full else 8, classes),
            img,
            "logits",
            "ResNet-18: basic blocks, 7x7/s2 stem, max pool, projection shortcuts",
        ),
        "resnet50": Spec(
            lambda: ResNet(Bottleneck, [3, 4, 6, 3], 64 if full else 6, classes),
            img,
            "logits",
            "ResNet-50 (v1.5): bottleneck blocks",
        ),
        "mobilenet_v2": Spec(
            lambda: MobileNetV2(1.0 if full else 0.25, classes),
            img,
            "logits",
            "MobileNetV2: inverted residuals, depthwise 3x3, ReLU6",
        ),
        "mobilenet_v3_small": Spec(
            lambda: MobileNetV3Small(1.0 if full else 0.375, classes),
            img,
            "logits",
            "MobileNetV3-small: hard-swish, squeeze-excitation with hard-sigmoid, 5x5 depthwise",
        ),
        "efficientnet_b0": Spec(
            lambda: EfficientNetB0(1.0 if full else 0.25, classes),
            img,
            "logits",
            "EfficientNet-B0: MBConv, SiLU, squeeze-excitation with sigmoid",
        ),
        "regnet_y_400mf": Spec(
            lambda: (
                RegNetY(32, [1, 3, 6, 6], [48, 104, 208, 440], 8, classes)
                if full
                else RegNetY(8, [1, 3, 6, 6], [16, 24, 56, 112], 8, classes)
            ),
            img,
            "logits",
            "RegNetY-400MF: grouped 3x3 convs (group width 8), squeeze-excitation",
        ),
        "shufflenet_v2": Spec(
            lambda: ShuffleNetV2(
                [4, 8, 4], [24, 116, 232, 464, 1024] if full else [24, 24, 48, 96, 256], classes
            ),
            img,
            "logits",
            "ShuffleNetV2 (x1.0 full): channel split, concat, channel shuffle",
        ),
        "convnext_tiny": Spec(
            lambda: ConvNeXt(
                [3, 3, 9, 3], [96, 192, 384, 768] if full else [8, 16, 32, 64], classes
            ),
            img,
            "logits",
            "ConvNeXt-T: 7x7 depthwise, LayerNorm over channels, 2x2/s2 downsampling, GELU",
        ),
        "googlenet": Spec(
            lambda: GoogLeNet(1.0 if full else 0.125, classes),
            img,
            "logits",
            "GoogLeNet (Inception v1): four-branch blocks, ceil-mode max pools",
        ),
        "densenet121": Spec(
            lambda: DenseNet(32 if full else 4, [6, 12, 24, 16], 64 if full else 8, classes),
            img,
            "logits",
            "DenseNet-121: dense blocks of concatenations, transitions with average pools",
        ),
        "vit": Spec(
            lambda: ViT(*vit, classes),
            SyntheticImages(vit[0], None if full else vit[0]),
            "logits",
            "ViT (ViT-S/16 full): patchify conv, class token, pre-norm nn.MultiheadAttention",
        ),
        "bert": Spec(
            lambda: Bert(bert),
            bert_tokens(bert),
            "logits",
            "BERT encoder (BERT-base full) with a padding mask, pooler and classifier",
        ),
        "gpt": Spec(
            lambda: GPT(gpt),
            gpt_tokens(gpt),
            "logits",
            "GPT-2 decoder (GPT-2 small full): causal mask, tanh GELU, tied LM head",
        ),
    }


QUANTIZED = {"resnet18_int8": "resnet18", "mobilenet_v2_int8": "mobilenet_v2"}


RESIDUAL_SCALE = 0.5
"""The scales of the last BatchNorm of a residual branch are uniform in [0, RESIDUAL_SCALE)."""


def randomize(module: nn.Module, generator: torch.Generator) -> None:
    """Per-channel scales and shifts of every norm, as a trained network has (not all ones and zeros), and
    variance-preserving Linear weights (std 1/sqrt(fan-in); torch's default shrinks each layer's output by
    sqrt(3), which through a classifier of two Linears leaves the logits nearly equal).

    The last norm of each residual branch scales it below the identity beside it (uniform in
    [0, RESIDUAL_SCALE)), as in trained residual networks, whose training starts it at 0 (the zero-gamma
    initialization of Goyal et al., "Accurate, Large Minibatch SGD", 2017). With every branch at full
    scale a random BatchNorm network is chaotic (Yang et al., "A Mean Field Theory of Batch
    Normalization", 2019: its input-output Jacobian grows geometrically with depth): rounding only the
    input of the small ResNet-50 to bf16 moved its logits by 17% of the largest, a sensitivity that no
    computation in bf16 or f16 could meet a bound on."""
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, (nn.BatchNorm2d, nn.LayerNorm)) and layer.weight is not None:
                layer.weight.uniform_(0.5, 1.5, generator=generator)
                layer.bias.uniform_(-0.2, 0.2, generator=generator)
            elif isinstance(layer, nn.Linear):
                layer.weight.normal_(0.0, layer.in_features**-0.5, generator=generator)
        for layer in module.modules():
            norm = layer.residual_norm() if hasattr(layer, "residual_norm") else None
            if norm is not None:
                norm.weight.uniform_(0.0, RESIDUAL_SCALE, generator=generator)


TRAIN_BATCH, TRAIN_STEPS, TRAIN_LOSS, TRAIN_WINDOW = 32, 800, 0.02, 20
"""Training on the synthetic task: Adam at 1e-3 on batches of TRAIN_BATCH until the mean loss of the
last TRAIN_WINDOW steps is below TRAIN_LOSS, or TRAIN_STEPS steps."""


def train(module: nn.Module, inputs: Callable) -> str:
    """Train an image model on its synthetic task (`SyntheticImages`); returns a summary.

    Random weights are not what users bring: a random network with a BatchNorm after every
    convolution is chaotic (Yang et al., "A Mean Field Theory of Batch Normalization", 2019), each
    layer amplifying a perturbation of its input: rounding only the input of the small random
    GoogLeNet to f16 moved its logits by 0.47% of the largest, and rounding every weight and
    activation once by about 1%, the bound any f16 computation is held to. Trained to classify
    despite noise, the small networks' logits move by 0.01-0.05% when their input is rounded to f16
    (the corpus README)."""
    if not isinstance(inputs, SyntheticImages) or inputs.train_size is None:
        return "not trained"
    rng = np.random.default_rng(6)
    optimizer = torch.optim.Adam(module.parameters(), lr=1e-3)
    module.train()
    losses: list[float] = []
    step = 0
    while step < TRAIN_STEPS:
        step += 1
        images, labels = inputs.batch(rng, TRAIN_BATCH, inputs.train_size)
        loss = F.cross_entropy(module(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses = [*losses[-TRAIN_WINDOW + 1 :], float(loss)]
        if len(losses) == TRAIN_WINDOW and sum(losses) / TRAIN_WINDOW < TRAIN_LOSS:
            break
    module.eval()
    return f"trained {step} steps at {inputs.train_size}x{inputs.train_size} to loss {sum(losses) / len(losses):.3f}"


def calibrate_batch_norm(
    module: nn.Module, make_inputs: Callable, rng: np.random.Generator
) -> None:
    """Running statistics from random batches (cumulative average), so each BatchNorm normalizes."""
    norms = [m for m in module.modules() if isinstance(m, nn.BatchNorm2d)]
    if not norms:
        return
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None
    module.train()
    with torch.no_grad():
        for _ in range(CALIBRATION_BATCHES):
            batch = [make_inputs(rng) for _ in range(CALIBRATION_BATCH)]
            module(*(torch.from_numpy(np.concatenate([b[k] for b in batch])) for k in batch[0]))
    module.eval()


def onnxruntime_session(path: Path) -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def check_logits(name: str, first: np.ndarray, second: np.ndarray) -> str:
    """Fails unless the logits vary across classes and between two inputs; returns a summary."""
    spread = float(first.std(axis=-1).min())
    apart = float(np.abs(first - second).max())
    if spread <= 0.1 or apart <= 0.1 * spread:
        raise SystemExit(
            f"{name}: degenerate logits (std across classes {spread:.3g}, two inputs differ by {apart:.3g})"
        )
    return f"logit std {spread:.3g}, two inputs differ by {apart:.3g}"


def input_sensitivity(
    session: onnxruntime.InferenceSession, inputs: dict[str, np.ndarray], outputs: np.ndarray
) -> tuple[float, float]:
    """How far the logits move, over the largest of them, when only the float inputs are rounded to f16
    and to bf16: an error that computing in that type cannot avoid, so a bound on a narrow type's error
    is only a test where this is well below it."""
    largest = float(np.abs(outputs).max())
    moved = []
    for dtype in (np.float16, ml_dtypes.bfloat16):
        rounded = {
            key: value.astype(dtype).astype(value.dtype) if value.dtype == np.float32 else value
            for key, value in inputs.items()
        }
        moved.append(float(np.abs(session.run(None, rounded)[0] - outputs).max()) / largest)
    return moved[0], moved[1]


Sensitivity = tuple[float, float] | None
"""How far the logits move when the input is rounded to f16 and to bf16 (`input_sensitivity`)."""


_BUILT: dict[str, tuple[nn.Module, str]] = {}


def built(name: str, spec: Spec) -> tuple[nn.Module, str]:
    """The model with its weights (seeded random, trained where `train` trains it, BatchNorm calibrated)
    and how it was trained, built once per run: a quantized model starts from the same float one."""
    if name not in _BUILT:
        torch.manual_seed(0)
        module = spec.build()
        randomize(module, torch.Generator().manual_seed(1))
        trained = train(module, spec.inputs)
        calibrate_batch_norm(module, spec.inputs, np.random.default_rng(2))
        module.eval()
        _BUILT[name] = module, trained
    return _BUILT[name]


def export(
    name: str, spec: Spec, directory: Path
) -> tuple[onnx.ModelProto, str, float | None, Sensitivity]:
    """Exports, checks and writes one model: the model, a summary of the checks, how far onnxruntime's
    f32 logits are from torch's f64 ones, and the logits' sensitivity to rounding the input."""
    module, trained = built(name, spec)
    inputs, other = spec.inputs(np.random.default_rng(0)), spec.inputs(np.random.default_rng(3))
    path = directory / f"{name}.onnx"
    arguments = tuple(torch.from_numpy(a) for a in inputs.values())
    torch.onnx.export(
        module,
        arguments,
        str(path),
        dynamo=False,
        opset_version=OPSET,
        input_names=list(inputs),
        output_names=[spec.output],
        verbose=False,
    )
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    session = onnxruntime_session(path)
    (outputs,), (second,) = session.run(None, inputs), session.run(None, other)
    with torch.no_grad():
        expected = module(*arguments).numpy()
        exact = (
            copy.deepcopy(module)
            .double()(*(a.double() if a.is_floating_point() else a for a in arguments))
            .numpy()
        )
    # Both compute in f32; how far either is from the f64 result depends on the model's conditioning
    # (a narrow BatchNorm channel with a small variance amplifies rounding), so onnxruntime is held to
    # torch's own error, not to a fixed tolerance.
    pairs = ((outputs, expected), (outputs, exact), (expected, exact))
    difference, ours, torchs = (float(np.abs(a - b).max()) for a, b in pairs)
    if ours > max(EXPORT_SLACK * torchs, EXPORT_RTOL * max(1.0, float(np.abs(exact).max()))):
        raise SystemExit(
            f"{name}: onnxruntime is {ours:.3g} from the f64 result, torch {torchs:.3g}"
        )
    summary = (
        f"{trained}, "
        f"torch vs onnxruntime {difference:.2g} (f64: onnxruntime {ours:.2g}, torch {torchs:.2g}), "
    )
    summary += check_logits(name, outputs, second)
    sensitivity = None
    if any(value.dtype == np.float32 for value in inputs.values()):
        sensitivity = input_sensitivity(session, inputs, outputs)
        summary += ", input rounded to f16 moves the logits by {:.2%}, to bf16 by {:.2%}".format(
            *sensitivity
        )
    write_data(directory / name, inputs, {spec.output: outputs})
    return model, summary, ours, sensitivity


def write_data(stem: Path, inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray]) -> None:
    np.savez(f"{stem}.inputs.npz", **inputs)
    np.savez(f"{stem}.outputs.npz", **outputs)


class RandomBatches(CalibrationDataReader):
    """Calibration inputs for quantize_static: seeded random inputs of the model's (static) shape."""

    def __init__(self, make_inputs: Callable, count: int):
        rng = np.random.default_rng(4)
        self.batches = iter([make_inputs(rng) for _ in range(count)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


def quantize(
    name: str, float_name: str, spec: Spec, directory: Path
) -> tuple[onnx.ModelProto, str, float | None, Sensitivity]:
    """The float export quantized statically: QDQ, uint8 activations, int8 per-channel weights."""
    path = directory / f"{name}.onnx"
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / f"{float_name}.onnx"
        export(float_name, spec, Path(scratch))
        quantize_static(
            str(source),
            str(path),
            RandomBatches(spec.inputs, 2 * CALIBRATION_BATCH),
            quant_format=QuantFormat.QDQ,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            per_channel=True,
        )
        float_outputs = onnxruntime_session(source).run(
            None, spec.inputs(np.random.default_rng(0))
        )[0]
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    inputs, other = spec.inputs(np.random.default_rng(0)), spec.inputs(np.random.default_rng(3))
    session = onnxruntime_session(path)
    (outputs,), (second,) = session.run(None, inputs), session.run(None, other)
    difference = float(np.abs(outputs - float_outputs).max())
    summary = f"int8 vs float {difference:.2g} (max |logit| {np.abs(float_outputs).max():.2g}), "
    summary += check_logits(name, outputs, second)
    write_data(directory / name, inputs, {spec.output: outputs})
    return model, summary, None, None


def readme(
    size: str, rows: list[tuple[str, str, onnx.ModelProto, Path, float | None, Sensitivity]]
) -> str:
    table = []
    total = 0
    for name, description, model, directory, error, sensitivity in rows:
        suffixes = (".onnx", ".inputs.npz", ".outputs.npz")
        files = sum((directory / f"{name}{suffix}").stat().st_size for suffix in suffixes)
        total += files
        shapes = ", ".join(
            "x".join(str(d.dim_value) for d in i.type.tensor_type.shape.dim)
            for i in model.graph.input
        )
        error = "" if error is None else f"{error:.2g}"
        moved = " | " if sensitivity is None else "{:.2%} | {:.2%}".format(*sensitivity)
        nodes = len(model.graph.node)
        table.append(
            f"| `{name}` | {description} | {shapes} | {nodes} | {files / 1024:.0f} KiB | {error} "
            f"| {moved} |"
        )
    where = "test/unit/data/corpus" if size == "small" else "DIR"
    return "\n".join(
        [
            f"# Model corpus ({size})",
            "",
            "Written by `examples/models/corpus.py` (architectures written in torch after torchvision's, seeded",
            "random weights, the image models trained on a synthetic task, BatchNorm statistics calibrated on",
            "the task's inputs) with",
            f"torch {torch.__version__}, onnxscript {onnxscript.__version__}, onnx {onnx.__version__}, "
            f"onnxruntime {onnxruntime.__version__}, Python {platform.python_version()}; regenerate with",
            "",
            "```sh",
            "python3 -m venv /tmp/torchvenv",
            f"/tmp/torchvenv/bin/pip install torch=={torch.__version__.split('+')[0]} onnx onnxruntime onnxscript numpy",
            f"/tmp/torchvenv/bin/python examples/models/corpus.py {where} --size {size}",
            "```",
            "",
            "Per model: `<name>.onnx` (TorchScript exporter, opset 17, static shapes), `<name>.inputs.npz`",
            "(a seeded input, keyed by input name) and `<name>.outputs.npz` (onnxruntime's output with graph",
            "optimizations off: the logits before any softmax). The `_int8` models are quantized by onnxruntime's",
            "`quantize_static` (QDQ, uint8 activations, int8 per-channel weights).",
            "`test/unit/test_corpus.py` imports each one and compares on the graph interpreter;",
            "`benchmarks/conformance.py --corpus DIR` compiles and simulates them (docs/conformance.md).",
            "",
            "The f32 error is how far onnxruntime's logits are from torch's computed in f64 (the model's",
            "conditioning: a narrow BatchNorm channel with a small variance amplifies rounding); the tests",
            "hold ziggurat's graph interpreter to it. *f16 input* and *bf16 input* are how far the logits move,",
            "over the largest of them, when only the input is rounded to that type: an error computing in it",
            "cannot avoid, which a bound on that type's error (1% for f16, 3% for bf16) must be well above",
            "for the comparison to test the compiler.",
            "",
            "| model | architecture | input | nodes | files | f32 error | f16 input | bf16 input |",
            "|---|---|---|---|---|---|---|---|",
            *table,
            "",
            f"{len(rows)} models, {total / 2**20:.1f} MiB in all.",
            "",
        ]
    )


def readme_errors(path: Path) -> dict[str, tuple[float | None, Sensitivity]]:
    """The f32 errors and input sensitivities of an existing README's table (kept for the models not
    regenerated)."""
    errors = {}
    for line in path.read_text().splitlines() if path.is_file() else []:
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) == 10 and cells[1].startswith("`"):
            sensitivity = (
                (float(cells[7].rstrip("%")) / 100, float(cells[8].rstrip("%")) / 100)
                if cells[7]
                else None
            )
            errors[cells[1].strip("`")] = (float(cells[6]) if cells[6] else None, sensitivity)
    return errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="where to write the models and their data")
    parser.add_argument(
        "--size",
        choices=("full", "small"),
        default="small",
        help="full: published resolution and widths; small: narrow test fixtures (default)",
    )
    parser.add_argument("--models", metavar="A,B", help="only these models (default: all)")
    args = parser.parse_args()
    onnxruntime.set_default_logger_severity(
        3
    )  # quantize_static's notes on every unused initializer
    args.directory.mkdir(parents=True, exist_ok=True)
    specs = corpus(args.size)
    names = list(specs) + list(QUANTIZED)
    chosen = names if args.models is None else args.models.split(",")
    if unknown := set(chosen) - set(names):
        parser.error(f"unknown models {sorted(unknown)}; the corpus has {names}")
    rows, errors, previous = [], {}, readme_errors(args.directory / "README.md")
    for name in names:
        if name not in chosen and not (args.directory / f"{name}.onnx").is_file():
            continue
        if name in chosen:
            if name in QUANTIZED:
                model, summary, error, sensitivity = quantize(
                    name, QUANTIZED[name], specs[QUANTIZED[name]], args.directory
                )
            else:
                model, summary, error, sensitivity = export(name, specs[name], args.directory)
            errors[name] = (error, sensitivity)
            print(f"wrote {name}.onnx: {len(model.graph.node)} nodes, {summary}", file=sys.stderr)
        else:
            model = onnx.load(str(args.directory / f"{name}.onnx"))
            errors[name] = previous.get(name, (None, None))
        base = specs[QUANTIZED.get(name, name)].description
        description = f"{base}; int8 QDQ" if name in QUANTIZED else base
        rows.append((name, description, model, args.directory, *errors[name]))
    (args.directory / "README.md").write_text(readme(args.size, rows))


if __name__ == "__main__":
    main()
