"""``numpy.random.default_rng(s)`` for many integer seeds at once, the same generators.

A sweep draws its noise from ``default_rng(s)`` for every seed ``s`` (so that a sweep row reproduces the
estimator fitted with that generator). Building one such generator costs about 7 us, most of it in
:class:`numpy.random.SeedSequence` hashing the seed into the 256-bit PCG64 state: for 50 seeds that was
the largest part of drawing a ridge sweep's noise. :func:`default_rngs` runs that hashing once for all
seeds, as uint32 array arithmetic (the algorithm of ``numpy/random/bit_generator.pyx``, which wraps modulo
2^32 exactly as numpy's arithmetic on uint32 arrays does), and hands each seed's state words to
:class:`numpy.random.PCG64` through a fixed :class:`numpy.random.bit_generator.ISeedSequence`. The
generators are the ones ``default_rng(s)`` returns: same state, same draws
(``tests/engine/test_pmt_rng.py`` checks the state words against ``SeedSequence`` and the draws against
``default_rng``). Seeds that are not integers in ``[0, 2**32)`` go through ``default_rng`` itself.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.random.bit_generator import ISeedSequence

__all__ = ["default_rngs", "seed_state_words"]

# numpy/random/bit_generator.pyx (SeedSequence, pool size 4, 32-bit words)
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = 0xCA01F9DD, 0x4973F715
_POOL = 4
_MASK = 0xFFFFFFFF


def _hash_consts(init: int, mult: int, k: int) -> list[int]:
    """The hash constant before each of ``k`` successive hashes, then after the last (k + 1 values)."""
    out = [init]
    for _ in range(k):
        out.append(out[-1] * mult & _MASK)
    return out


# Every hashmix of SeedSequence's pool mixing advances one constant: 4 for the pool, then 4 x 3 for the mixing.
_HA = np.array(_hash_consts(_INIT_A, _MULT_A, _POOL + _POOL * (_POOL - 1)), dtype=np.uint32)
_HB = np.array(_hash_consts(_INIT_B, _MULT_B, 2 * _POOL), dtype=np.uint32)
_L, _R, _SH = np.uint32(_MIX_MULT_L), np.uint32(_MIX_MULT_R), np.uint32(16)
_DSTS = [np.array([i for i in range(_POOL) if i != src]) for src in range(_POOL)]


def seed_state_words(seeds) -> np.ndarray:
    """``SeedSequence(s).generate_state(4, numpy.uint64)`` of every seed, shape ``(S, 4)``.

    Parameters
    ----------
    seeds : sequence of int
        Each ``0 <= s < 2**32`` (one 32-bit word of entropy, no spawn key).

    Returns
    -------
    ndarray of uint64, shape (S, 4)

    Raises
    ------
    ValueError
        When a seed is outside ``[0, 2**32)``.

    Examples
    --------
    >>> bool((seed_state_words([7])[0] == np.random.SeedSequence(7).generate_state(4, np.uint64)).all())
    True
    """
    s = np.asarray(seeds, dtype=np.int64).reshape(-1)
    if s.size and (s.min() < 0 or s.max() > _MASK):
        raise ValueError("seeds must be integers in [0, 2**32) for seed_state_words")
    s = s.astype(np.uint32)
    with np.errstate(over="ignore"):
        # mix_entropy: hashmix(v) = x ^ (x >> 16) with x = (v ^ h_k) * h_{k+1}; the pool starts as the seed's
        # word then three zero words (hashes 0..3), each of the three zero words' hashes is a constant.
        def hashmix(v, k):
            x = (v ^ _HA[k]) * _HA[k + 1]
            return x ^ (x >> _SH)

        pool = np.empty((_POOL, s.size), dtype=np.uint32)
        pool[0] = hashmix(s, 0)
        pool[1:] = np.array([hashmix(np.uint32(0), k) for k in range(1, _POOL)], dtype=np.uint32)[:, None]
        k = _POOL
        for src in range(_POOL):
            dsts = _DSTS[src]
            # the three hashes of pool[src] (not changed while it is the source), then each mixed into its
            # destination word; the destinations are distinct, so mixing them together is the same as in turn
            x = (pool[src] ^ _HA[k:k + 3, None]) * _HA[k + 1:k + 4, None]
            hashed = x ^ (x >> _SH)
            k += 3
            r = _L * pool[dsts] - _R * hashed
            pool[dsts] = r ^ (r >> _SH)
        # generate_state(8 uint32 words): word i hashes pool[i % 4] with the i-th constant of the B sequence
        P = np.concatenate([pool, pool])  # (8, S)
        x = (P ^ _HB[:-1, None]) * _HB[1:, None]
        words = (x ^ (x >> _SH)).T  # (S, 8)
    return np.ascontiguousarray(words).astype("<u4").view("<u8").astype(np.uint64)


class _FixedSeedSequence(ISeedSequence):
    """An :class:`ISeedSequence` that hands :class:`numpy.random.PCG64` precomputed state words."""

    __slots__ = ("_words",)

    def __init__(self, words: np.ndarray):
        self._words = words

    def generate_state(self, n_words, dtype=np.uint32):
        if n_words != 4 or np.dtype(dtype) != np.uint64:
            raise ValueError("this seed sequence only holds PCG64's four 64-bit state words")
        return self._words


def default_rngs(seeds) -> list[np.random.Generator]:
    """``[numpy.random.default_rng(s) for s in seeds]``, the same generators, with the seed hashing vectorised.

    Parameters
    ----------
    seeds : sequence of int
        Seeds; integers in ``[0, 2**32)`` take the fast path, any other seed is passed to ``default_rng``
        (which raises for what it does not accept).

    Returns
    -------
    list of numpy.random.Generator
        PCG64 generators in the state ``default_rng(s)`` gives.

    Examples
    --------
    >>> a, b = default_rngs([3, 4])
    >>> bool((a.normal(size=4) == np.random.default_rng(3).normal(size=4)).all())
    True
    """
    seeds = list(seeds)
    try:
        ints = [operator.index(s) for s in seeds if not isinstance(s, (bool, np.bool_))]
    except TypeError:
        return [np.random.default_rng(s) for s in seeds]
    if not ints or len(ints) < len(seeds) or min(ints) < 0 or max(ints) > _MASK:
        return [np.random.default_rng(s) for s in seeds]
    words = seed_state_words(ints)
    return [np.random.Generator(np.random.PCG64(_FixedSeedSequence(w))) for w in words]
