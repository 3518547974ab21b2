"""Forces Dr.Jit's LLVM code generation to a CPU, feature set and vector width, which its Python
API does not expose, through the C function `jit_llvm_set_target` of libdrjit-core. Call it
before loading a scene: Mitsuba sizes its ray tracing calls when it loads one, and crashes if the
width changes afterwards. Embree picks its own instruction set whatever this says.

The benchmark scripts read the target from the environment: MI_LLVM_WIDTH (lanes), and
optionally MI_LLVM_CPU and MI_LLVM_FEATURES (default: what Dr.Jit detected). For the 128-bit,
AVX2-level code that drs's Cranelift backend emits:

    MI_LLVM_WIDTH=4 MI_LLVM_CPU=x86-64-v3 \\
    MI_LLVM_FEATURES=+sse4.2,+popcnt,+avx,+avx2,+fma,+f16c,+bmi,+bmi2,+lzcnt,+movbe,-avx512f,-avx512vl,-avx512dq,-avx512bw
"""

import ctypes
import os

import drjit as dr


def _core():
    core = ctypes.CDLL(os.path.join(os.path.dirname(dr.__file__), "libdrjit-core.so"))
    core._Z19jit_llvm_target_cpuv.restype = ctypes.c_char_p
    core._Z24jit_llvm_target_featuresv.restype = ctypes.c_char_p
    core._Z21jit_llvm_vector_widthv.restype = ctypes.c_uint32
    core._Z19jit_llvm_set_targetPKcS0_j.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32]
    return core


def set_llvm_target(width, cpu=None, features=None):
    """Sets the target; `cpu` and `features` default to the detected ones. Returns the CPU name."""
    core = _core()
    cpu = cpu.encode() if cpu else core._Z19jit_llvm_target_cpuv()
    features = features.encode() if features else core._Z24jit_llvm_target_featuresv()
    core._Z19jit_llvm_set_targetPKcS0_j(cpu, features, width)
    return cpu.decode()


def set_llvm_target_from_env():
    """Applies MI_LLVM_WIDTH, MI_LLVM_CPU and MI_LLVM_FEATURES if MI_LLVM_WIDTH is set. Returns a
    description of the target in effect."""
    width = os.environ.get("MI_LLVM_WIDTH")
    if width:
        set_llvm_target(int(width), os.environ.get("MI_LLVM_CPU"), os.environ.get("MI_LLVM_FEATURES"))
    core = _core()
    return f"{core._Z19jit_llvm_target_cpuv().decode()}, {core._Z21jit_llvm_vector_widthv()} lanes"
