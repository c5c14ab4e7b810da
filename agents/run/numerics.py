"""What a trained network depends on besides the code, the seed and the library versions: the CPU.

Torch picks its CPU kernels by the instruction set it finds (``ATEN_CPU_CAPABILITY``: AVX512,
AVX2 or the generic DEFAULT), and MKL, which does torch's matrix products on x86, picks its code
path by the processor (``MKL_CBWR``). Each path rounds differently in the last bits; PPO's updates
amplify that, so the same seed learns differently from the first rollouts on: MaskablePPO seed 1
became perfect at 130,048 timesteps with AVX512 kernels and at 120,000 with AVX2 on the same
machine, and at 160,000 and 180,032 on two others. Tabular Q-learning uses no floating-point
kernels of this kind, and its episodes reproduce everywhere.

``REPRODUCIBLE`` pins both to paths every x86-64 CPU runs (torch's generic kernels, MKL's SSE2
branch): with it the parameters came out bit for bit the same whether MKL, oneDNN and NumPy were
limited to AVX2 or used AVX-512, and so did the timesteps to perfect play (110,016 for that
seed). It costs about 1.5 times the CPU time per timestep, nearly all MKL's. The benchmarks set it
for their SB3 runs; ``train.py`` does not, but records ``numerics()`` in its results so that a
figure says what it came from. Other architectures (ARM) use other kernels altogether.
"""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

REPRODUCIBLE = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
# Variables that change which kernels run or how many threads share the work.
VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA",
             "NPY_DISABLE_CPU_FEATURES", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def cpu_model() -> str:
    """The processor's name (Linux: /proc/cpuinfo's model name), or the platform's guess."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def numerics() -> dict[str, Any]:
    """The CPU, the kernel-choosing variables that are set, and, once torch is imported, the
    kernels torch dispatches to and its thread counts."""
    found: dict[str, Any] = {"cpu": cpu_model(), "machine": platform.machine(),
                             "cpus": os.cpu_count(),
                             "variables": {name: os.environ[name] for name in VARIABLES
                                           if name in os.environ}}
    torch = sys.modules.get("torch")  # never imported here: a tabular run has no torch
    if torch is not None:
        found.update(torch_cpu_capability=torch.backends.cpu.get_cpu_capability(),
                     torch_threads=torch.get_num_threads(),
                     torch_interop_threads=torch.get_num_interop_threads())
    return found


def reproducible_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of ``environ`` (default ``os.environ``) with ``REPRODUCIBLE`` set, for a child
    process: the variables are read when torch and MKL load, so they cannot change in a process
    that has already imported torch."""
    return {**(os.environ if environ is None else environ), **REPRODUCIBLE}
