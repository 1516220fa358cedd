"""The compiled DP-GD kernels: warm them once per machine (the launcher, ``scripts/warm_dpgd_kernels.py``).

Public names for ``_gd.warm_kernels`` and ``_gd_kernel.kernel_dir``; importing this module loads neither
numba nor the kernels (each call does).
"""

from __future__ import annotations


def warm_kernels(ds=None, dtypes=("float32", "float64")):
    """Compile or load the fused DP-GD kernels (see ``engine.pmt._gd.warm_kernels``); returns its rows."""
    from engine.pmt._gd import warm_kernels as warm

    return warm(ds, dtypes)


def kernel_dir():
    """The folder of the compiled DP-GD kernels (``.cache/dpgd_kernels`` unless configured)."""
    from engine.pmt._gd_kernel import kernel_dir as folder

    return folder()


__all__ = ["warm_kernels", "kernel_dir"]
