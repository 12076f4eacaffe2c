"""The machine a benchmark ran on, printed at the top of every benchmark's output.

Timings only compare within one run, and what limits them differs between CPUs (numpy's
float64 ``tanh`` and ``exp`` are SIMD with AVX-512 only, for example), so every table is
printed under one line naming the CPU, the SIMD extensions numpy dispatches to, the BLAS
and its threads, and the load average.

Usage, from a script in this directory::

    from _machine import print_machine
    print_machine()
"""

import os
import platform


def cpu_model():
    """The CPU's model name (from /proc/cpuinfo on Linux)."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def numpy_simd():
    """The SIMD extensions numpy found and did not find (as ``numpy.show_runtime``)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    found = [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]
    missing = [name for name in __cpu_dispatch__ if not __cpu_features__.get(name)]
    return found, missing


def widest_simd(found):
    """"AVX-512", "AVX2" or "SSE" from numpy's feature names (old and new spellings)."""
    names = set(found)
    if names & {"X86_V4", "AVX512F", "AVX512_SKX"}:
        return "AVX-512"
    if names & {"X86_V3", "AVX2"}:
        return "AVX2"
    return "SSE"


def blas_description():
    """The BLAS libraries numpy loaded, with their kernels and thread counts."""
    from threadpoolctl import threadpool_info

    return "; ".join(
        f"{info['internal_api']} {info['version']}"
        + (f" ({info['architecture']} kernels)" if info.get("architecture") else "")
        + f", {info['num_threads']} thread(s)"
        for info in threadpool_info()
        if info["user_api"] == "blas"
    ) or "none found"


def machine_line():
    """One line: CPU, cores, numpy's SIMD level, BLAS, load average."""
    import numpy as np

    found, missing = numpy_simd()
    return (
        f"CPU: {cpu_model()}, {os.cpu_count()} cores | numpy {np.__version__} SIMD: "
        f"{widest_simd(found)} (found: {' '.join(found) or '-'}; not found: "
        f"{' '.join(missing) or '-'}) | "
        f"BLAS: {blas_description()} | load average "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
    )


def print_machine():
    """Print :func:`machine_line` and a blank line."""
    print(machine_line(), end="\n\n", flush=True)


if __name__ == "__main__":
    print_machine()
