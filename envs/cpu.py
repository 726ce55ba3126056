"""The CPU arithmetic of torch (the deep learners, a neural order flow), pinned so that every
x86-64 machine with AVX2, Intel's and AMD's, gives the same numbers.

torch picks its CPU kernels by the processor's instruction set: ATen's vectorised loops
(AVX2 or AVX-512), Intel MKL's matrix products (a code path per instruction set, Intel's and
AMD's apart) and oneDNN's convolutions and recurrent cells. Two paths add the same numbers in
another order, and a different rounding in one update of a network grows over a run: the
quickstart's DQN row differed by processor, not in its last digits. `pin_cpu_arithmetic`
fixes the three choices through the variables each library reads once, at its first
computation (`PINNED`):

- ``ATEN_CPU_CAPABILITY=avx2``: ATen's AVX2 kernels, on a processor with AVX-512 as well;
- ``MKL_CBWR=COMPATIBLE``: MKL's conditional numerical reproducibility on its SSE2 code path
  without approximate reciprocals, the one branch MKL keeps the same on Intel's and other
  makers' processors (``MKL_CBWR=AVX2`` holds on Intel's only);
- ``ONEDNN_MAX_CPU_ISA=AVX2``: oneDNN's kernels at most AVX2.

A pin chooses code, not hardware: an instruction whose result the processor's maker
defines, an estimate of 1/x or 1/sqrt(x) (``rcpps``, ``rsqrtps``), gives other bits on
Intel's processors than on AMD's on any code path. MKL's vector library (VML, which ATen
calls for ``sqrt``, ``exp``, ``log`` and ``tanh`` of float tensors) computes a square root
from ``rsqrtps`` refined once, one root in six a last bit off the correctly rounded one, and
off elsewhere on the other maker's processor: through Adam's denominators the quickstart's
DQN differed between an Intel Xeon and an AMD EPYC with every pin in force. So a learner
takes no square root from VML: its optimizer is torch's fused Adam, one vectorised ATen
kernel whose square root is the processor's exact one (`agents.deep.dqn.DQN.optimizer`;
`tests/agents/deep/test_pinned_kernels.py` checks its step against IEEE arithmetic to the
bit and prints each op's digest, to compare two machines).

The networks here are tiny and most of their time goes to Python's and torch's overhead: MKL's
compatible branch multiplies two 64 x 64 matrices in some 22 us where its AVX-512 one takes 9,
about a second of a quickstart DQN job's 17 s of CPU (a machine shared with other work; the
fused Adam saved more than that). Thread counts matter too (a sum split across
threads adds in another order): every job runs on one torch thread
(`tradearena.evaluation.experiment.kinds.one_thread`).

Importing `tradearena.envs` pins, and every module of the project imports it before torch
computes anything (the test suite pins first thing, too), so a process and the processes it
starts (Ray's workers) compute alike; a process that ran torch's kernels before it imported
tradearena keeps the ones it chose. ``TRADEARENA_CPU=native`` leaves the three choices to the
libraries (the machine's fastest kernels; a deep learner's numbers then differ by
processor); any other value is warned of, and pins. On a processor without AVX2, or not
x86-64, nothing is pinned: there they are the machine's own.
"""

from __future__ import annotations

import os
import platform
import warnings
from collections.abc import Mapping, MutableMapping

__all__ = ["OPT_OUT", "PINNED", "CpuSettingWarning", "has_avx2", "pin_cpu_arithmetic"]

PINNED: Mapping[str, str] = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
}
"""The variables `pin_cpu_arithmetic` sets, and their values."""
OPT_OUT = "TRADEARENA_CPU"
"""The variable that, set to ``native``, leaves the kernels to the libraries."""


def has_avx2() -> bool:
    """Whether this is an x86-64 processor with AVX2 and FMA3 (numpy's detection of the
    running processor, which ATen's AVX2 kernels need)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as features
    return bool(features.get("AVX2")) and bool(features.get("FMA3"))


class CpuSettingWarning(UserWarning):
    """``TRADEARENA_CPU`` set to something other than ``native``: the kernels stay pinned."""


def pin_cpu_arithmetic(environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Set `PINNED` in ``environ`` (default ``os.environ``), over any values they had, on an
    x86-64 processor with AVX2 unless ``TRADEARENA_CPU=native``; return what was set (empty
    when nothing was). Another value of ``TRADEARENA_CPU`` is a `CpuSettingWarning` naming it
    (the kernels pinned, as unset). Call it before torch computes anything in the process."""
    environ = os.environ if environ is None else environ
    setting = environ.get(OPT_OUT, "")
    if setting.lower() not in ("", "native"):
        warnings.warn(
            CpuSettingWarning(
                f"{OPT_OUT}={setting!r} is not 'native': the kernels stay pinned (set it to "
                "native for the libraries' own, or unset it)"
            ),
            stacklevel=2,
        )
    if setting.lower() == "native" or not has_avx2():
        return {}
    environ.update(PINNED)
    return dict(PINNED)
