"""Issue 16's faster ridge-sweep arithmetic gives the same floats as the plain numpy forms it replaces."""

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
