"""The NVDP page's "Download report" (no Streamlit): one self-contained HTML file.

Built by :func:`engine.figures.report.html_report` from what the page shows: first its verdict in words and
its warnings (as the PMT report), then the headline numbers
(RD max / mean and BDP epsilon in the papers' protocol, accuracy; clipped vs unclipped), the figures on
screen, the settings (including the two typed sentences, escaped), the privacy-bound table, the data's
provenance and licence (UCI Sentiment Labelled Sentences, CC BY 4.0), and the CLI commands.
"""

from __future__ import annotations

import pandas as pd


def _fmt_bound(v) -> str:
    from engine.figures.nvdp import fmt_bound

    return fmt_bound(v)


def sentiment_provenance() -> dict:
    """Source, DOI and licence of the bundled sentences (from the data registry)."""
    from engine.datasets import list_datasets

    reg = list_datasets().set_index("name")
    row = reg.loc["sentiment"]
    doi = str(row["source"]).removeprefix("doi:")
    return {"data set": "sentiment (UCI Sentiment Labelled Sentences: Amazon, IMDb and Yelp reviews)",
            "rows": int(row["rows"]), "target": str(row["target"]),
            "source": "D. Kotzias (2015). Sentiment Labelled Sentences. UCI Machine Learning Repository.",
            "doi": f"https://doi.org/{doi}", "licence": "CC BY 4.0 (UCI Machine Learning Repository)"}


def nvdp_report_html(*, label_c: str, res_c, res_u, figures: list, bounds: pd.DataFrame, settings: dict,
                     commands: list[str], notes: list[str] = (), verdict=None, warnings=()) -> str:
    """The HTML report of the NVDP page.

    Parameters
    ----------
    label_c : str
        Name of the clipped model ("clipped" or "clipped at release").
    res_c, res_u : engine.nvdp.explore.PosthocResult
        The clipped and unclipped evaluations shown on the page.
    figures : list of (caption, Figure)
    bounds : DataFrame
        The privacy-bound table of the page (RD and BDP, both forms, both models).
    settings : dict
        Setting name -> value (typed sentences included; every value is escaped).
    commands : list of str
    notes : list of str
    verdict : engine.figures.verdict.Verdict, optional
        The page's lead sentence (:func:`engine.figures.verdict.nvdp_verdict`): the report's first line, coloured.
    warnings : sequence of str
        What the page says about its numbers (the headline's direction check under the privacy figure,
        numerical failures), right after the verdict and before the numbers.
    """
    from engine.figures.report import html_report

    cards = [("RD worst case", _fmt_bound(res_c.rd_paper.max_unfiltered),
              f"unclipped {_fmt_bound(res_u.rd_paper.max_unfiltered)}"),
             ("RD filtered max", _fmt_bound(res_c.rd_paper.max), f"unclipped {_fmt_bound(res_u.rd_paper.max)}"),
             ("RD mean", _fmt_bound(res_c.rd_paper.mean), f"unclipped {_fmt_bound(res_u.rd_paper.mean)}"),
             ("BDP epsilon", _fmt_bound(res_c.bdp_paper.epsilon), f"unclipped {_fmt_bound(res_u.bdp_paper.epsilon)}"),
             ("Accuracy", f"{100 * res_c.accuracy:.1f}%", f"unclipped {100 * res_u.accuracy:.1f}%")]
    return html_report(
        title="NVDP embeddings: clipped vs unclipped",
        subtitle=f"{label_c} vs unclipped, {res_c.n_test} held-out sentences; smaller RD and BDP = more private",
        headline=cards, figures=figures, settings=settings, ledgers={"Privacy bounds (both forms)": bounds},
        provenance=sentiment_provenance(), commands=commands, notes=list(notes),
        verdict=None if verdict is None else (verdict.text, verdict.tone), warnings=list(warnings))


def package_versions() -> dict:
    """Python and the versions of the packages behind the numbers (for the settings JSON)."""
    import importlib.metadata as md
    import platform

    out = {"python": platform.python_version()}
    for name in ("torch", "numpy", "pandas", "streamlit", "transformers", "plotly"):
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = None
    return out


def evaluate_command(settings, clip, which: str) -> str:
    """The ``python -m engine nvdp evaluate`` command that reproduces the page's numbers for ``clip``.

    Parameters
    ----------
    settings : engine.nvdp.explore.ExploreSettings
    clip : engine.nvdp.clipping.ClipConfig
        The clipping on the sliders.
    which : {"clipped", "unclipped"}
        The model the sliders apply to.
    """
    model = "artifacts/nvdp/clipped" if which == "clipped" else "artifacts/nvdp/unclipped"
    return (f".venv/bin/python -m engine nvdp evaluate --model-dir {model} --clip --C-mu {clip.C_mu:.10g} "
            f"--alpha-min {clip.alpha_min:.10g} --alpha-max {clip.alpha_max:.10g} --renyi-order {clip.renyi_order:g} "
            f"--seed {settings.seed} --split-seed {settings.split_seed}"
            + (f" --n-sentences {settings.n_sentences}" if settings.n_sentences else "") + " --json")


def export_notes(settings, clip, n_eval: int, n_test: int) -> list[str]:
    """The Export tab's notes on what the commands reproduce."""
    notes = [f"The CLI, the results script and this page use one protocol (bounds on the first {n_eval} test "
             f"sentences, accuracy on all {n_test}): the same model and clipping give the same numbers."]
    if clip.sigma_max is not None or settings.train_clip.sigma_max is not None:
        notes.append("The CLI has no flag for the sigma cap; its runs clip sigma only from below.")
    if settings.n_sentences:
        notes.append(f"This page runs on a subset of {settings.n_sentences} sentences (NVDP_PAGE_N_SENTENCES); "
                     "the command above passes the same --n-sentences.")
    return notes
