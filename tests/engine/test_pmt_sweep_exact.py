"""The faster ridge-sweep arithmetic gives the same floats as the plain numpy forms it replaces."""

import numpy as np
import pytest

from engine.pmt.ridge import _v_diag_vt_stack


@pytest.mark.parametrize("d", [1, 2, 3, 5, 8, 13, 31])
@pytest.mark.parametrize("k", [1, 4, 300])
def test_v_diag_vt_stack_is_einsum_bit_for_bit(d, k):
    rng = np.random.default_rng(d * 1000 + k)
    A = rng.normal(size=(k, d, d)) * rng.uniform(0.1, 1e4, size=(k, 1, 1))
    w, V = np.linalg.eigh(A + np.swapaxes(A, 1, 2))
    wf = np.maximum(w, rng.uniform(0.0, 3.0, size=(k, 1)))
    ref = np.einsum("...ij,...j,...kj->...ik", V, wf, V)
    got = _v_diag_vt_stack(V, wf)
    assert got.shape == ref.shape
    assert np.array_equal(got, ref) and np.array_equal(np.signbit(got), np.signbit(ref))


def test_v_diag_vt_stack_signed_zeros_of_diagonal_systems():
    """Diagonal statistics have exact zeros in V: the zero entries keep einsum's sign (+0.0)."""
    rng = np.random.default_rng(3)
    A = np.stack([np.diag(rng.uniform(-1.0, 5.0, size=5)) for _ in range(40)])
    w, V = np.linalg.eigh(A)
    wf = np.maximum(w, 0.5)
    ref = np.einsum("...ij,...j,...kj->...ik", V, wf, V)
    got = _v_diag_vt_stack(V, wf)
    assert np.array_equal(got, ref) and np.array_equal(np.signbit(got), np.signbit(ref))
    assert np.all(got[:, 0, 1] == 0.0)


@pytest.mark.parametrize("d", [1, 2, 5, 7, 8, 12])
@pytest.mark.parametrize("n", [1, 7, 3001])
def test_sweep_truncate_rows_is_truncate_rows_bit_for_bit(d, n):
    from engine.pmt._bounds import truncate_rows
    from engine.pmt.sweep_ridge import _truncate_rows

    rng = np.random.default_rng(7 * d + n)
    Z = rng.normal(size=(n, d)) * rng.uniform(0.01, 1000.0, size=d)
    Z[0] = 0.0  # a zero row is never truncated (and divides nothing)
    fractions = []
    for radius in (np.median(np.linalg.norm(Z, axis=1)) + 1e-9, 1e-6, 1e9):
        ref, _, ref_tr = truncate_rows(Z, radius)
        got, got_tr = _truncate_rows(Z, radius)
        assert np.array_equal(got, ref) and np.array_equal(got_tr, ref_tr)
        fractions.append(ref_tr.mean())
    if n > 1:  # the median radius truncates some rows but not all; the tiny one all but the zero row
        assert 0 < fractions[0] < 1 and fractions[1] == (n - 1) / n and fractions[2] == 0
    with pytest.raises(ValueError, match="radius"):
        _truncate_rows(Z, 0.0)


def test_kappa_ascending_is_kappa_from_eigs():
    from engine.pmt._bounds import _kappa_from_eigs
    from engine.pmt.ridge import _kappa_ascending

    rng = np.random.default_rng(11)
    A = rng.normal(size=(400, 5, 5))
    w = np.linalg.eigvalsh(A + np.swapaxes(A, 1, 2) + rng.uniform(-3.0, 9.0, size=(400, 1, 1)) * np.eye(5))
    got, ref = _kappa_ascending(w), _kappa_from_eigs(w)
    assert np.array_equal(got, ref)
    assert np.isinf(got).any() and np.isfinite(got).any()  # both branches: indefinite and positive definite
    assert _kappa_ascending(np.array([1.0, 4.0])) == 4.0


def test_grid_is_meshgrid():
    from types import SimpleNamespace

    from engine.pmt._registry import _grid

    L, E, S, li, ei, si = _grid(SimpleNamespace(lams=[1, 2, 3]), [0.1, 1.0], list(range(4)))
    ref = [a.ravel() for a in np.meshgrid(np.arange(3), np.arange(2), np.arange(4), indexing="ij")]
    assert (L, E, S) == (3, 2, 4)
    for got, r in zip((li, ei, si), ref):
        assert got.dtype == r.dtype and np.array_equal(got, r)
