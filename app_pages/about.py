"""About / reproduce: the papers, how the numbers were made, results tables, data citations, CLI."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CITATION = ROOT / "assets" / "data" / "CITATION.md"

st.title("About and reproduce")
st.markdown(
    "This tool explores **differential privacy** (DP): a promise that the output of an analysis barely "
    "changes when one person's record is replaced, so the output reveals little about that person. "
    "The promise is quantified by **epsilon** and **delta** (smaller = more private)."
)

st.header("The papers")
st.markdown(
    """
| Method in this tool | Paper |
|---|---|
| PMT regression (public-moment-guided truncation, DP-PMTRR / DP-PMTLR) | Z. Cao, X. Bi, H. Zhang, *Differentially Private Truncation of Unbounded Data via Public Second Moments*, [arXiv:2602.22282](https://arxiv.org/abs/2602.22282) (2026) |
| The PMT transform and radius it builds on | Z. Cao, H. Zhang, [arXiv:2508.18037](https://arxiv.org/abs/2508.18037) (2025) |
| Clipped NVDP (nonparametric variational DP with embedding-parameter clipping) | D. El Zein, S. Kumar, J. Henderson, *Nonparametric Variational Differential Privacy via Embedding Parameter Clipping*, [arXiv:2603.09583](https://arxiv.org/abs/2603.09583) (2026) |
| NVDP | D. El Zein, J. Henderson, *Differential Privacy for Transformer Embeddings with Nonparametric Variational Information Bottleneck*, [arXiv:2601.02307](https://arxiv.org/abs/2601.02307) |
| NVIB layer | J. Henderson, F. Fehr, *A VAE for Transformers with Nonparametric Variational Information Bottleneck*, ICLR 2023, [arXiv:2207.13529](https://arxiv.org/abs/2207.13529) |
| Gaussian differential privacy (mu-GDP accounting) | J. Dong, A. Roth, W. Su, *Gaussian Differential Privacy*, J. R. Stat. Soc. B 84 (2022), [arXiv:1905.02383](https://arxiv.org/abs/1905.02383) |
"""
)
st.caption(
    "Only the abstracts and summaries of the 2026 papers could be read while building this tool; "
    "where the method had to be read into, the engine's docstrings say so (\"our reading\")."
)

st.header("How the numbers are made")
st.markdown(
    """
- **One engine, three front ends.** Every number on these pages comes from the Python package `engine/`;
  the dashboard only calls it and draws what it returns. The command line (`python -m engine ...`) and the
  tests call the same functions, so the browser, the CLI and the tests agree.
- **Privacy accounting** is in mu-Gaussian DP (**mu-GDP**): each noisy release of a statistic with L2
  sensitivity *s* and Gaussian noise of standard deviation *sigma* costs mu = *s* / *sigma*; releases compose
  as the square root of the sum of squares; the total is converted to (epsilon, delta) exactly, rounding
  towards more privacy. The privacy ledger on each page lists every release.
- **Public sample.** PMT needs a small public sample (default 200 rows). On bundled data it is a random
  split of the data set, a **simulation** of having public data; you may upload a separate public file instead.
- **Repetitions.** Every noisy method is run over several seeds (default 20); figures show the median and the
  25-75 % and 5-95 % bands over seeds, because the error is heavy-tailed and means mislead.
- **Error.** The default metric is the L2 distance between the private and the non-private ridge
  coefficients fitted on the same private rows (the non-private fit is the target), with relative error,
  excess empirical risk and held-out RMSE as alternatives.
- **Baselines** see only the private data: DP-RR (private ridge regression from noisy sufficient statistics of
  clipped rows) and DP-GD (gradient descent with per-row gradient clipping and Gaussian noise); for logistic
  regression DP-Newton (noisy Newton steps on clipped rows) and DP-GD. The "oracle" DP-RR picks its clip radius
  by looking at the error: it is *not* private and shows the best the baseline could do.
- **Standardisation** (optional) centres and scales the features, and centres the response of a regression,
  with the *public* sample's statistics only, so it costs no privacy.
- **Caching.** The dashboard caches every result by (data fingerprint, parameters): moving a slider back is
  instant, and the same settings always give the same numbers (seeds drive all the noise).
"""
)

st.header("Results tables")
#: Documents for developers (the team's conventions, the dashboard spec, the code layout): not listed here.
DEVELOPER_DOCS = {"CONVENTIONS.md", "DASHBOARD.md", "architecture.md", "README.md"}
#: Shown with the results tables: the methods' specifications, the threat model and the current timings.
FOR_USERS = ("specs/NVDP.md", "specs/PMT.md", "performance/current.md", "dev/threat_model.md")
tables = sorted(p for p in DOCS.glob("*.md") if p.name not in DEVELOPER_DOCS) if DOCS.is_dir() else []
if not tables:
    st.info("No results tables have been written to `docs/` yet. Run the benchmark scripts in `bench/` to create them.")
for path in tables + [DOCS / rel for rel in FOR_USERS if (DOCS / rel).is_file()]:
    with st.expander(f"docs/{path.relative_to(DOCS).as_posix()}", expanded=False):
        st.markdown(path.read_text(encoding="utf-8"))

st.header("Data and how to cite it")
if CITATION.is_file():
    text = CITATION.read_text(encoding="utf-8")
    head, _, _ = text.partition("## Formats and shapes")
    st.markdown(head.replace("# Bundled data: provenance, citations and licence", "").strip())
    with st.expander("Formats, shapes and checksums of the bundled files"):
        st.markdown("## Formats and shapes" + text.partition("## Formats and shapes")[2])
else:
    st.warning("assets/data/CITATION.md is missing: the data citations cannot be shown.")

st.header("The command line equivalents")
st.markdown(
    "Everything the dashboard shows can be reproduced from a terminal in the project folder "
    "(after the README's set-up command). Every subcommand accepts `--json` for machine-readable output; "
    "`.venv/bin/python -m engine SUBCOMMAND --help` lists its options. The PMT page's *Export* tab shows the exact "
    "command for the view you are looking at."
)
st.code(
    ".venv/bin/python -m engine datasets                          # the bundled data sets\n"
    ".venv/bin/python -m engine privacy --epsilon 1 --delta 1e-5  # mu, the Gaussian noise scale, what is achieved\n"
    ".venv/bin/python -m engine pmt --help                        # PMT vs the baselines on a data set (sweeps)\n"
    ".venv/bin/python -m engine pmt --data my.csv --target y      # ... or on your own CSV file\n",
    language="bash",
)
