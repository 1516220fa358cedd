"""engine.pmt._rng: the vectorised default_rng(s) generators are numpy's, state and draws."""

import numpy as np
import pytest

from engine.pmt._rng import default_rngs, seed_state_words

EDGE = [0, 1, 2, 255, 256, 65535, 65536, 123456789, 2**31 - 1, 2**31, 4_000_000_000, 2**32 - 1]


def test_state_words_match_seedsequence():
    seeds = list(range(2000)) + EDGE
    words = seed_state_words(seeds)
    assert words.shape == (len(seeds), 4) and words.dtype == np.uint64
    for s, w in zip(seeds, words):
        np.testing.assert_array_equal(w, np.random.SeedSequence(s).generate_state(4, np.uint64))


def test_generators_equal_default_rng():
    seeds = list(range(64)) + EDGE + [np.int64(17), np.uint32(9)]
    for g, s in zip(default_rngs(seeds), seeds):
        ref = np.random.default_rng(s)
        assert g.bit_generator.state == ref.bit_generator.state
        np.testing.assert_array_equal(g.normal(0.0, 1.0, size=(5, 5)), ref.normal(0.0, 1.0, size=(5, 5)))
        np.testing.assert_array_equal(g.integers(0, 10**9, size=7), ref.integers(0, 10**9, size=7))


def test_other_seeds_go_through_default_rng():
    ss = np.random.SeedSequence(5)
    big = 2**40 + 3
    for g, s in zip(default_rngs([big, ss]), [big, ss]):
        assert g.bit_generator.state == np.random.default_rng(s).bit_generator.state
    with pytest.raises(ValueError):
        default_rngs([3, -1])  # default_rng(-1) raises
    with pytest.raises(ValueError, match=r"\[0, 2\*\*32\)"):
        seed_state_words([2**32])
    assert default_rngs([]) == []


def test_sweep_noise_stack_is_ssp_noise_of_default_rng():
    """The ridge sweep's shared noise equals ssp_noise(default_rng(s), d) seed by seed, bit for bit."""
    from types import SimpleNamespace

    from engine.pmt.ridge import ssp_noise
    from engine.pmt.sweep_ridge import _ssp_noise_stack

    ctx = SimpleNamespace(d=5)
    W, w = _ssp_noise_stack(ctx, list(range(30)) + [2**32 - 1])
    for i, s in enumerate(list(range(30)) + [2**32 - 1]):
        W0, w0 = ssp_noise(np.random.default_rng(s), 5)
        assert np.array_equal(W[i], W0) and np.array_equal(w[i], w0)
        assert np.array_equal(np.signbit(W[i]), np.signbit(W0))
