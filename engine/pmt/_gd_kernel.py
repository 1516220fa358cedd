"""Fused DP-GD ridge gradient kernel: ``U^T clip(S [theta; 1], -C, C)`` in one pass over the rows.

Why: with ``d = 5`` the numpy/BLAS step (``S @ th`` into a chunk buffer, ``np.clip`` in place, ``U^T @ r``,
``grad += part``) runs at 45-60 % of one core's GEMM rate: both products are skinny (inner or outer
dimension 5-6), BLAS packs the (rows x runs) residual chunk again, and the clip is a separate memory
pass. Here each row's residuals for a vector of runs are computed, clipped and accumulated while in
registers, so nothing (rows x runs)-sized is ever stored.

Arithmetic (the same as the numpy path's up to the order of the float64 sums: OpenBLAS's dgemm blocks a
chunk's rows, the kernel adds them in order, so the two agree to float64 rounding, 1.7e-18 max on the
ccpp sweep's coefficients in ``bench/bench_dpgd.py``; ``tests/engine/test_dpgd_kernel.py``):

* ``s_ir = fma(S_i,m-1, th_m-1,r, ... fma(S_i,1, th_1,r, S_i,0 th_0,r))`` (sequential FMA over the columns);
* ``c_ir = min(max(s_ir, -C), C)`` (NaN stays NaN, as ``np.clip``);
* per chunk of ``cr`` rows, ``part_jr = fma(U_ij, c_ir, part_jr)`` over the chunk's rows in order, from 0,
  **in float64** (``part`` and ``grad`` are float64 arrays; ``U_ij`` and ``c_ir`` are cast, exactly, from
  the working dtype), so the sums over rows carry the certified rounding bound of
  :func:`engine.privacy.sum_rounding_factor`; ``grad = part`` for the first chunk, then ``grad += part``
  chunk after chunk.

The kernel is generated for each ``(m, d)`` (columns of ``S`` and of ``U``) with the loops over columns
unrolled, and compiled by numba on first use: 3-15 s per shape and dtype on the shared 2-core machine,
once per machine (the source is written to :func:`kernel_dir` and numba caches the machine code there;
loading it then takes ~15 ms, plus ~0.4 s to import numba once per process). numba is imported only here,
lazily; :func:`ridge_kernel` returns None when numba is missing, and the caller then uses the numpy path
(same values up to float rounding order, slower).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import threading
from pathlib import Path

#: Largest ``d`` (columns of ``U``) for which the kernel is used. LLVM vectorizes its loop over runs up to
#: d = 8 (checked in the assembly, numba 0.68); from d = 9 on its cost model declines (the run-time overlap
#: checks between the ``d`` rows written grow as d^2) and the scalar loop is slower than BLAS: numpy path.
#: A blocked variant with kernel-local accumulators vectorized for any d, but ran slower at d = 5.
MAX_KERNEL_D = 8

#: Rows handled per pass over the runs (their accumulators stay in registers between rows).
_ROW_UNROLL = 2

_lock = threading.Lock()


def _source(m: int, d: int, R: int, count: bool) -> str:
    """Python source of the kernel for ``m`` columns of S and ``d`` of U (loops over columns unrolled):
    ``kern_count``, which also counts the clipped rows per run into ``cnt``, or ``kern`` without (the
    count costs about a fifth of the loop and is read at the last step only)."""
    L = [_DECORATOR,
         "def kern_count(S, U, th, C, cr, grad, part, cnt):" if count else "def kern(S, U, th, C, cr, grad, part):",
         "    n = S.shape[0]",
         "    k = th.shape[1]",
         "    for s0 in range(0, n, cr):",
         "        s1 = min(n, s0 + cr)",
         "        part[:, :] = 0",
         "        i = s0"]

    def body(q, ind):
        out = [f"{ind}s = a{q}_0 * t0"]
        out += [f"{ind}s = fma(a{q}_{j}, t{j}, s)" for j in range(1, m)]
        if count:
            out.append(f"{ind}nc += (s > C) | (s < -C)")
        out.append(f"{ind}s = C if s > C else s")
        out.append(f"{ind}s = -C if s < -C else s")
        out.append(f"{ind}s64 = numba.float64(s)")  # float32 products are exact in float64: sums in float64
        out += [f"{ind}p{j} = fma(numba.float64(u{q}_{j}), s64, p{j})" for j in range(d)]
        return out

    def block(rows, ind):
        out = []
        for q in range(rows):
            out += [f"{ind}a{q}_{j} = S[i + {q}, {j}]" for j in range(m)]
            out += [f"{ind}u{q}_{j} = U[i + {q}, {j}]" for j in range(d)]
        out.append(f"{ind}for r in range(k):")
        out += [f"{ind}    t{j} = th[{j}, r]" for j in range(m)]
        out += [f"{ind}    p{j} = part[{j}, r]" for j in range(d)]
        if count:
            out.append(f"{ind}    nc = cnt[r]")
        for q in range(rows):
            out += body(q, ind + "    ")
        out += [f"{ind}    part[{j}, r] = p{j}" for j in range(d)]
        if count:
            out.append(f"{ind}    cnt[r] = nc")
        out.append(f"{ind}i += {rows}")
        return out

    L.append(f"        while i + {R} <= s1:")
    L += block(R, "            ")
    L.append("        while i < s1:")
    L += block(1, "            ")
    L += ["        if s0 == 0:",
          "            grad[:, :] = part",
          "        else:",
          "            grad += part"]
    return "\n".join(L)


_HEADER = '''"""Generated by engine.pmt._gd_kernel (do not edit: rewritten whenever it differs)."""
import numba
from numba.extending import intrinsic


@intrinsic
def fma(typingctx, a, b, c):  # a * b + c, one rounding (llvm.fma): the order of every sum is the source's
    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return a(a, b, c), codegen
'''

_DECORATOR = '\n\n@numba.njit(nogil=True, boundscheck=False, error_model="numpy", cache=CACHE)'


def kernel_dir() -> Path:
    """Folder of the generated kernel sources and numba's compiled cache: ``$DPGD_KERNEL_DIR`` or
    ``<repo root>/.cache/dpgd_kernels`` (git-ignored)."""
    env = os.environ.get("DPGD_KERNEL_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2] / ".cache" / "dpgd_kernels"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # numba's cache rebuilds the kernel's environment by importing the module by name
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod.kern, mod.kern_count


@functools.lru_cache(maxsize=None)
def _compiled(m: int, d: int):
    """The kernel for ``(m, d)``: its source is written to :func:`kernel_dir` (only when it differs, so numba's
    on-disk cache, keyed by the file's time stamp, stays valid) and imported with ``cache=True``, so a shape
    compiles once per machine, not once per process. Without a writable folder: compiled in memory."""
    body = _source(m, d, _ROW_UNROLL, False) + "\n" + _source(m, d, _ROW_UNROLL, True)
    name = f"_dpgd_kernel_ridge_m{m}_d{d}"
    try:
        folder = kernel_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.py"
        text = (_HEADER + body).replace("CACHE", "True") + "\n"
        if not path.exists() or path.read_text() != text:
            tmp = folder / f".{name}.{os.getpid()}.tmp"
            tmp.write_text(text)
            os.replace(tmp, path)  # atomic: another process sees the old or the new file, never half of one
        return _load(name, path)
    except (OSError, RuntimeError):  # read-only folder, or numba finds no cache locator there
        ns: dict = {}
        exec(compile((_HEADER + body).replace("CACHE", "False"), f"<{name}>", "exec"), ns)
        return ns["kern"], ns["kern_count"]


def ridge_kernel(m: int, d: int):
    """The compiled kernel for ``S`` with ``m`` columns and ``U`` with ``d`` columns, or None.

    None when numba is not installed or ``d > MAX_KERNEL_D``. Call signature of the result::

        kern(S, U, th, C, cr, grad, part, cnt=None)

    ``S`` (n, m) and ``U`` (n, d) C-contiguous rows, ``th`` (m, k), ``C`` the clip bound (a scalar of the
    arrays' dtype, float32 or float64), ``cr`` rows per chunk, ``grad`` (d, k) float64 the output, ``part``
    (d, k) float64 scratch, ``cnt`` None or (k,) int32 to which each run's number of clipped rows (``|s_i| > C``; NaN is not
    counted, as ``np.abs(s) > C``) is added. Releases the GIL (the DP-GD loop calls it from threads).
    """
    if d > MAX_KERNEL_D:
        return None
    try:
        import numba  # noqa: F401
    except ImportError:  # pragma: no cover - numba is in requirements.txt
        return None
    with _lock:  # compile once, before the worker threads call it
        plain, counting = _compiled(int(m), int(d))

    def kern(S, U, th, C, cr, grad, part, cnt=None):
        if cnt is None:
            plain(S, U, th, C, cr, grad, part)
        else:
            counting(S, U, th, C, cr, grad, part, cnt)

    return kern
