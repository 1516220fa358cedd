"""The row pass of the PMT transform: whiten, truncate and multiply out the private rows.

Used by :func:`engine.pmt._transform.pmt_transform` (``engine.pmt`` exports :func:`truncate_rows_inplace`): the in-place
truncation, the intercept row added to every whitened row, and the blocked version of the whole pass for
compute-bound shapes (:func:`_whiten_blocks`), whose numbers do not depend on the number of threads.
"""

from __future__ import annotations

import functools

import numpy as np

from engine.pmt import _blas
from engine.pmt._blas import COMPUTE_BOUND_D, COMPUTE_BOUND_FLOPS, _executor, blas_limit

__all__ = ["BLOCK_ROWS", "FEW_COLUMNS", "truncate_rows_inplace"]


def _add_row(Z: np.ndarray, v: np.ndarray) -> None:
    """``Z += v`` (v added to every row of the C-contiguous Z), in place.

    For a few columns, numpy's broadcast loop runs once per row of length d (about 5 ns a call); adding a
    tiled copy of v as one flat vector gives the same sums (each entry is ``z_ij + v_j`` either way) several
    times faster.
    """
    if Z.shape[1] < 16 and Z.flags.c_contiguous:
        flat = Z.reshape(-1)
        tiled = np.empty_like(flat)  # v repeated n times, by doubling copies (np.tile is slower here)
        k = v.size
        tiled[:k] = v
        while k < tiled.size:
            m = min(k, tiled.size - k)
            tiled[k:k + m] = tiled[:m]
            k += m
        np.add(flat, tiled, out=flat)
    else:
        Z += v


def truncate_rows_inplace(Z, radius: float):
    """In-place :func:`truncate_rows` (no copy of ``Z``): rows with ``||z_i|| > radius`` onto the sphere.

    Used by :func:`pmt_transform` on the freshly whitened rows it owns (no second n x d array).

    Parameters
    ----------
    Z : ndarray of shape (n, d), float64 (any layout: the transform passes a column-major view)
        Modified in place.
    radius : float
        ``radius > 0`` (checked by the caller: :func:`pmt_radius` is always finite and positive).

    Returns
    -------
    norms_before : ndarray of shape (n,)
    truncated : ndarray of bool, shape (n,)
        Which rows were scaled (display only).

    Examples
    --------
    >>> Z = np.array([[3.0, 4.0], [0.3, 0.4]])
    >>> nb, tr = truncate_rows_inplace(Z, 1.0)
    >>> Z.round(3).tolist(), nb.tolist(), tr.tolist()
    ([[0.6, 0.8], [0.3, 0.4]], [5.0, 0.5], [True, False])
    """
    r = float(radius)
    norms = np.einsum("ij,ij->i", Z, Z)
    np.sqrt(norms, out=norms)
    truncated = norms > r
    idx = np.flatnonzero(truncated)
    if idx.size:
        Z[idx] *= (r / norms[idx])[:, None]  # rows on the sphere of radius r (the others untouched)
    return norms, truncated


#: Rows per block of the blocked transform (:func:`_whiten_blocks`): fixed, so the result never depends on the
#: number of threads; 4096 rows of d = 200 (6.5 MB) stay in the last-level cache between the three steps.
BLOCK_ROWS = 4096


def _chunked(n: int, d: int) -> bool:
    """Whether the transform runs blockwise (:func:`_whiten_blocks`): the compute-bound shapes of
    :func:`engine.pmt._blas.blas_threads` (``d >= 64`` and ``n d^2 >= 2e7``). A function of the shape only."""
    return d >= COMPUTE_BOUND_D and n * d * d >= COMPUTE_BOUND_FLOPS and n > BLOCK_ROWS


def _whiten_blocks(Xp: np.ndarray, W: np.ndarray, fit_intercept: bool, R: float):
    """``Z = Pi_R(X W)`` (intercept row of W added), row norms, truncation flags and ``Z^T Z``, by row blocks.

    Each block of :data:`BLOCK_ROWS` rows is whitened, truncated and multiplied out with one BLAS thread
    (``Z_b = X_b W``, ``G_b = Z_b^T Z_b``) while it is in cache, and ``G = G_0 + G_1 + ...`` is summed in block
    order. The blocks are spread over :func:`engine.pmt._blas.pool_threads` threads (``os.cpu_count()``; numpy's
    BLAS and einsum release the GIL): no OpenBLAS threads spinning at a barrier on a shared machine, and since
    the blocks and the order of the sum are fixed, the numbers are the same for any number of threads
    (OpenBLAS's own threads change the last bits of these products with the thread count).

    Returns
    -------
    Z : ndarray of shape (n, d)
    norms_before : ndarray of shape (n,)
    truncated : ndarray of bool, shape (n,)
    G : ndarray of shape (d, d)
    """
    n = Xp.shape[0]
    Wx = W[:-1] if fit_intercept else W
    Z = np.empty((n, W.shape[1]))
    norms = np.empty(n)
    truncated = np.empty(n, dtype=bool)
    starts = list(range(0, n, BLOCK_ROWS))

    def block(i):
        rows = slice(starts[i], min(n, starts[i] + BLOCK_ROWS))
        Zb = Z[rows]
        np.matmul(Xp[rows], Wx, out=Zb)
        if fit_intercept:
            Zb += W[-1]
        norms[rows], truncated[rows] = truncate_rows_inplace(Zb, R)
        return Zb.T @ Zb

    threads = min(_blas.pool_threads(), len(starts))
    with blas_limit(1):  # (a no-op when the caller holds one thread already)
        if threads <= 1:
            grams = [block(i) for i in range(len(starts))]
        else:
            grams = list(_executor().map(block, range(len(starts))))
    G = grams[0]
    for Gb in grams[1:]:
        G = G + Gb
    return Z, norms, truncated, G


#: Below this many columns (intercept included) the transform works on the transposed rows
#: (:func:`_whiten_few`): numpy's per-row loops over d < 16 entries and OpenBLAS's ``syrk`` for a
#: (d, n) x (n, d) product cost several times the arithmetic.
FEW_COLUMNS = 16


@functools.lru_cache(maxsize=64)
def _strict_upper(d: int):
    """``np.triu_indices(d, 1)`` (read-only; building them costs about 15 us, three times the mirror itself)."""
    iu = np.triu_indices(d, 1)
    for a in iu:
        a.setflags(write=False)
    return iu


def _whiten_few(Xp, W, fit_intercept, R, y=None, truncate=None):
    """The transform's row pass for few columns, on the transposed rows: ``(Z, norms, truncated, G, xty)``.

    ``Z^T = W^T X^T`` is written into the first d rows of a ``(d + 1, n)`` buffer (each entry the same
    sum of products as ``X @ W``: one GEMM either way), the intercept row added along contiguous rows,
    the rows truncated through the (n, d) view by ``truncate`` (default :func:`truncate_rows_inplace`;
    :func:`engine.pmt._transform._transform_rows` passes the name it holds, which the audit can
    replace), and the last row of the buffer set to ``y`` (zeros without it). Then one GEMM
    ``[Z^T; y^T] Z`` gives ``Z^T Z`` and ``Z^T y`` together; numpy would hand ``Z^T Z`` alone to
    OpenBLAS's ``syrk``, about five times slower at these shapes. ``Z^T Z`` is made exactly symmetric
    (its upper triangle mirrored, as numpy does after ``syrk``).

    Same quantities as the row-major pass, to float rounding: the row norms and the two products sum in
    another order (measured on CCPP: relative differences of a few 1e-16).
    """
    n, d = Xp.shape[0], W.shape[1]
    buf = np.empty((d + 1, n))
    Zt = buf[:d]
    if fit_intercept:
        np.matmul(W[:-1].T, Xp.T, out=Zt)
        Zt += W[-1][:, None]
    else:
        np.matmul(W.T, Xp.T, out=Zt)
    Z = Zt.T  # (n, d), column-major view of the buffer
    norms_before, truncated = (truncate or truncate_rows_inplace)(Z, R)
    if y is None:
        buf[d] = 0.0
    else:
        buf[d] = y
    S = buf @ Z  # (d + 1, d): a GEMM (the operands differ in shape, so numpy does not take syrk)
    G = S[:d]
    iu, ju = _strict_upper(d)
    G[ju, iu] = G[iu, ju]
    return Z, norms_before, truncated, np.ascontiguousarray(G), (None if y is None else S[d].copy())
