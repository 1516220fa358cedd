"""The split memo's public switch: :func:`bypass` computes a block afresh and keeps nothing.

The memo itself (``_split_memo``) keeps the deterministic parts of a sweep (the split, the public
moment, the transformed rows) across calls; a caller whose data must not outlive its own session
(an upload) runs the sweep inside ``with bypass():``.

Examples
--------
>>> with bypass():
...     bypassed()
True
>>> bypassed()
False
"""

from engine.pmt._split_memo import bypass, bypassed

__all__ = ["bypass", "bypassed"]
