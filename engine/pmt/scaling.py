"""The public standardisation of the private-only baselines: :func:`public_scaling` (public names of ``_public_scale``).

DP-RR and DP-GD clip the rows standardised with statistics of the public sample (``center="public"``);
the dashboard reads the same scaling to show the norms they clip.
"""

from engine.pmt._public_scale import CENTERS, PublicScaling, public_scaling

__all__ = ["CENTERS", "PublicScaling", "public_scaling"]
