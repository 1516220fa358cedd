"""Learn: five short interactive lessons, one idea, one live figure and one "try this" each.

Plain words first, the formula one click away (an expander). All numbers come from
``engine.figures.lessons``, which uses the engine's real accounting (``engine.privacy``), transform
(``engine.pmt``) and Renyi closed forms (``engine.nvdp.divergence``).
"""

import math

import numpy as np
import streamlit as st

from engine.figures import lessons
from ui.presets import markdown_links
from engine.privacy import gdp_mu
from ui.layout import warm_browser_code
from ui.state import ensure_frame

ensure_frame()  # a first deep link to this page must still run inside the app.py frame
warm_browser_code()  # the browser loads the chart code while the lesson computes

# --------------------------------------------------------------------------------------------
# cached engine calls (moving a slider back is instant)
# --------------------------------------------------------------------------------------------
_cache = st.cache_data(show_spinner=False, max_entries=64)


def _keep(key: str) -> dict:
    """A lesson widget's key; its value is kept while its tab is closed (only the open lesson is built)."""
    return {"key": key, "persist_state": "session"}


@_cache
def _fig_epsilon_delta(epsilon, delta):
    return lessons.figure_epsilon_delta(epsilon, delta)


@_cache
def _fig_composition(mu, k, epsilon_total, delta):
    return lessons.figure_composition(mu, k, epsilon_total=epsilon_total, delta=delta)


@_cache
def _composition(mu, k, delta):
    return lessons.composition_table(mu, [k], delta=delta).iloc[0].to_dict()


@_cache
def _truncation(n, epsilon, delta, df):
    radii = np.geomspace(0.05, 50.0, 90)
    return lessons.truncation_tradeoff(radii, n=n, epsilon=epsilon, delta=delta, df=df)


@_cache
def _truncation_at(C, n, epsilon, delta, df):
    return lessons.truncation_tradeoff([C], n=n, epsilon=epsilon, delta=delta, df=df).iloc[0].to_dict()


@_cache
def _whitening(kappa, n_pub, heavy):
    return lessons.whitening_demo(kappa=kappa, n_pub=n_pub, df=3.0 if heavy else None)


@_cache
def _noisy_inverse(kappa, n_pub, n, epsilon):
    return lessons.noisy_inverse_demo(kappa=kappa, n_pub=n_pub, n=n, epsilon=epsilon)


@_cache
def _fig_renyi(mean_a, std_a, mean_b, std_b, C_mu, renyi_order):
    return lessons.figure_renyi(mean_a=mean_a, std_a=std_a, mean_b=mean_b, std_b=std_b, C_mu=C_mu,
                                renyi_order=renyi_order)


@_cache
def _renyi_now(mean_a, std_a, mean_b, std_b, C_mu, renyi_order):
    ab = lessons.renyi_clipping_curve([mean_a], std_a=std_a, mean_b=mean_b, std_b=std_b, C_mu=C_mu,
                                      renyi_order=renyi_order).iloc[0]
    ba = lessons.renyi_clipping_curve([mean_b], std_a=std_b, mean_b=mean_a, std_b=std_a, C_mu=C_mu,
                                      renyi_order=renyi_order).iloc[0]
    return float(ab.before), float(ab.after), float(ba.before), float(ba.after)


def _fmt(x: float, digits: int = 3) -> str:
    return "infinite" if not math.isfinite(x) else f"{x:.{digits}g}"


def _chart(fig, key):
    st.plotly_chart(fig, width="stretch", key=key,
                    config={"toImageButtonOptions": {"format": "png", "scale": 2}, "displaylogo": False})


def _try(text):
    st.info(f"**Try this.** {text}", icon=":material/touch_app:")


ss = st.session_state
EPS_DEFAULT = float(min(max(ss.get("epsilon", 1.0), 0.1), 10.0))
DELTA_OPTIONS = [1e-3, 1e-4, 1e-5, 1e-6, 1e-8]
DELTA_DEFAULT = ss.get("delta", 1e-5) if ss.get("delta", 1e-5) in DELTA_OPTIONS else 1e-5

# --------------------------------------------------------------------------------------------
st.title("Learn: the ideas behind the explorer")
st.markdown(
    "Five short lessons, one idea each. Move the sliders: every figure is computed live with the same "
    "code the explorer uses. Words used on this page: **DP** = differential privacy; **GDP** = Gaussian "
    "differential privacy; **PMT** = public-moment-guided truncation (the regression method); **NVDP** = "
    "nonparametric variational differential privacy (the sentence-embedding method); **MSE** = mean squared "
    "error; **nats** = the natural-log unit in which privacy losses are measured."
)

#: The lessons' tab labels. Only the open tab is built (``on_change="rerun"`` tracks it): a first visit
#: computes one lesson's figure, not five (the Renyi lesson alone needs the NVDP closed forms).
LESSON_TABS = ("1 · epsilon and delta", "2 · Many releases", "3 · The truncation dilemma",
               "4 · Why conditioning matters", "5 · Renyi divergence and clipping")
tabs = st.tabs(list(LESSON_TABS), key="learn_tab", on_change="rerun")

# ============================================================================================
def _lesson_1() -> None:
    st.subheader("What an (epsilon, delta) promise means")
    st.markdown(
        "Differential privacy is a promise about what anyone can learn about **you** from a published "
        "result. Picture an attacker who sees the result and must guess: *was your row in the data or not?* "
        "DP guarantees that no test, however clever, does much better than a coin flip. **epsilon** says how "
        "much better it may do (smaller = closer to a coin flip = more private); **delta** is a tiny "
        "probability that the promise may fail. The noise we add (Gaussian noise) is tuned to meet the pair."
    )
    c1, c2 = st.columns(2)
    eps1 = c1.slider("epsilon (privacy loss; smaller = more private)", 0.1, 10.0, EPS_DEFAULT, 0.1, **_keep("learn_l1_eps"),
                     help="The privacy budget, in nats. 1 is a common middle ground; 0.1 is very private.")
    dlt1 = c2.select_slider("delta (chance the promise fails)", DELTA_OPTIONS, DELTA_DEFAULT, **_keep("learn_l1_delta"),
                            format_func=lambda d: f"{d:g}",
                            help="Should be far below 1 / (number of people in the data).")
    mu1 = gdp_mu(eps1, dlt1)
    beta05 = float(lessons.gdp_tradeoff(0.05, mu1))
    m1, m2 = st.columns(2)
    m1.metric("Equivalent Gaussian mechanism", f"mu = {mu1:.3f}",
              help="mu-GDP: telling 'with you' from 'without you' is as hard as telling N(0,1) from N(mu,1).")
    m2.metric("An attacker with 5 % false alarms still misses", f"{beta05:.1%} of members",
              help="Type II error of the best possible test at type I error 0.05 (perfect privacy: 95 %).")
    _chart(_fig_epsilon_delta(eps1, dlt1), "learn_fig1")
    st.caption(
        "Left: each point of the blue curve is the best possible attacker: if it accepts wrongly accusing "
        "(false alarms) at the rate on the x-axis, it still misses at least the share of real members on the "
        "y-axis. The closer to the dotted diagonal, the more private. Right: the same mechanism also "
        "satisfies every other (epsilon, delta) pair on the curve: one mechanism, a whole price list."
    )
    _try("Set epsilon to 0.1: the blue curve hugs the diagonal, the attacker is reduced to guessing. Then set "
         "epsilon to 8: an attacker tolerating 5 % false alarms now catches about half of the members "
         "(at epsilon = 1, about 8 %).")
    st.markdown("**On real data** (opens the PMT page with these settings; share the link):\n"
                + markdown_links(["epsilon_cost", "public_enough", "pmt_beats_public",
                                                "pmt_beats_public_logistic"]))
    with st.expander("The formulas"):
        st.markdown("A mechanism is **mu-GDP** when no test separates neighbouring data sets better than a test "
                    "separating N(0, 1) from N(mu, 1) (Dong, Roth & Su 2022). Its trade-off curve and its delta "
                    "at each epsilon are:")
        st.latex(r"\beta(\alpha) = \Phi\left(\Phi^{-1}(1-\alpha) - \mu\right)")
        st.latex(r"\delta(\varepsilon;\mu) = \Phi\left(-\frac{\varepsilon}{\mu} + \frac{\mu}{2}\right)"
                 r" - e^{\varepsilon}\,\Phi\left(-\frac{\varepsilon}{\mu} - \frac{\mu}{2}\right)")
        st.markdown("The (epsilon, delta) guarantee as a trade-off curve (orange, dashed):")
        st.latex(r"f_{\varepsilon,\delta}(\alpha) = \max\{0,\ 1-\delta-e^{\varepsilon}\alpha,\ "
                 r"e^{-\varepsilon}(1-\delta-\alpha)\}")
        st.markdown(r"Adding $N(0, \sigma^2)$ to a statistic whose value one person can move by at most "
                    r"$\Delta$ (its **sensitivity**) is $(\Delta / \sigma)$-GDP.")

# ============================================================================================
def _lesson_2() -> None:
    # lesson 1's epsilon and delta, also while its tab is closed (its widgets keep their state)
    eps1, dlt1 = float(ss.get("learn_l1_eps", EPS_DEFAULT)), ss.get("learn_l1_delta", DELTA_DEFAULT)
    st.subheader("Every release spends privacy: composition")
    st.markdown(
        "A method rarely publishes one number. Private logistic regression, for example, takes a few Newton "
        "steps and publishes a noisy gradient and a noisy curvature matrix at each: 5 steps = 10 releases. "
        "Each release spends part of the budget. With Gaussian noise the bookkeeping is kind: the "
        "releases add up like the sides of a right triangle, so **10 releases cost about 3 times one "
        "release, not 10 times**."
    )
    c1, c2 = st.columns(2)
    k2 = c1.slider("number of releases k", 1, 40, 10, **_keep("learn_l2_k"),
                   help="For example 2 per Newton step of private logistic regression (gradient and Hessian).")
    mu2 = c2.slider("mu of each release (smaller = more noise)", 0.05, 1.0, 0.3, 0.05, **_keep("learn_l2_mu"),
                    help="The GDP parameter of one release: its sensitivity divided by its noise std.")
    row = _composition(mu2, k2, dlt1)
    m1, m2, m3 = st.columns(3)
    m1.metric("Total mu", f"{row['mu_total']:.3f}", help="sqrt(k) times the mu of one release.")
    m2.metric(f"Total epsilon (delta = {dlt1:g})", f"{row['epsilon_gdp']:.2f}",
              help="The composed mu-GDP total, converted to epsilon at the delta chosen in lesson 1.")
    m3.metric("Adding up each release's epsilon", f"{row['epsilon_basic']:.2f}",
              delta=f"{row['epsilon_basic'] / row['epsilon_gdp']:.1f}x worse", delta_color="off",
              help="Basic composition: each release is reported at delta / k and the epsilons are summed.")
    _chart(_fig_composition(mu2, k2, eps1, dlt1), "learn_fig2")
    st.caption(
        f"Left: total epsilon after k releases (blue: exact Gaussian accounting; orange: the naive sum). "
        f"Right: to keep a fixed total of epsilon = {eps1:g} (from lesson 1), each of k releases needs "
        f"sqrt(k) times the noise of a single release."
    )
    _try("Move k from 10 to 40. The total mu only doubles (sqrt(4) = 2), while the naive sum of epsilons "
         "keeps climbing almost in a straight line.")
    with st.expander("The formulas"):
        st.latex(r"\mu_{\text{total}} = \sqrt{\mu_1^2 + \dots + \mu_k^2} = \sqrt{k}\,\mu")
        st.markdown("(Dong, Roth & Su 2022, Corollary 3.3.) To spend a total mu over k releases evenly, give "
                    "each mu / sqrt(k), i.e. noise")
        st.latex(r"\sigma_{\text{release}} = \frac{\Delta\,\sqrt{k}}{\mu_{\text{total}}}")

# ============================================================================================
def _lesson_3() -> None:
    # lesson 1's epsilon and delta, also while its tab is closed (its widgets keep their state)
    eps1, dlt1 = float(ss.get("learn_l1_eps", EPS_DEFAULT)), ss.get("learn_l1_delta", DELTA_DEFAULT)
    st.subheader("The truncation dilemma: clip too hard or add too much noise")
    st.markdown(
        "The noise must cover the largest change one person can make. Real data are unbounded (a few "
        "people have huge values), so we first **clip** every value into [-C, C]. Then the trade-off is "
        "unavoidable: a small C **biases** the answer (big values are cut), a large C forces **more noise** "
        "(the noise grows with C). Here we privately estimate the mean of one heavy-tailed, whitened "
        "feature and split the error into its parts. PMT picks C without looking at the private data: "
        "the radius R depends only on the number of rows and features."
    )
    c1, c2, c3, c4 = st.columns(4)
    n3 = c1.select_slider("private rows n", [100, 300, 1000, 3000, 10_000, 100_000], 1000, **_keep("learn_l3_n"))
    eps3 = c2.slider("epsilon", 0.1, 10.0, EPS_DEFAULT, 0.1, **_keep("learn_l3_eps"))
    df3 = c3.select_slider("tail heaviness (degrees of freedom)", [2.5, 3.0, 5.0, 10.0, 30.0], 3.0,
                           **_keep("learn_l3_df"), help="Student t degrees of freedom: smaller = heavier tails "
                           "(more extreme values). 30 is almost Gaussian.")
    C_options = [0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0]
    C3 = c4.select_slider("your clipping radius C", C_options, 1.0,
                          **_keep("learn_l3_C"), help="Values are clipped into [-C, C] before averaging.")
    frame = _truncation(n3, eps3, dlt1, df3)
    at = _truncation_at(C3, n3, eps3, dlt1, df3)
    R3 = float(frame.pmt_radius.iloc[0])
    atR = _truncation_at(R3, n3, eps3, dlt1, df3)
    best = frame.loc[frame.mse.idxmin()]
    m1, m2, m3 = st.columns(3)
    m1.metric(f"Error at your C = {C3:g}", f"{math.sqrt(at['mse']):.4f}",
              help="Root mean squared error of the private mean, in units of the feature.")
    m2.metric(f"Error at the PMT radius R = {R3:.2f}", f"{math.sqrt(atR['mse']):.4f}",
              help="R = sqrt(1 + ln(2n / eta)) with eta = 0.05: chosen from public quantities only.")
    m3.metric(f"Best possible (C = {best.radius:.2f})", f"{math.sqrt(best.mse):.4f}",
              help="Finding this C needs the private data's error curve, so it is not itself private.")
    _chart(lessons.figure_truncation(frame, radius=C3), "learn_fig3")
    st.caption(
        "Orange: squared bias from clipping, falling as C grows. Green: variance of the privacy noise, rising as "
        "C squared. Grey dotted: the ordinary sampling variance. Black: the total (mean squared error). The "
        "blue dashed line is PMT's radius R; the vermillion line your C. Data: the true mean is 0.5, second "
        "moment 1 (as after whitening)."
    )
    _try("Move your C to the PMT radius and compare its error with the best possible one. Then set n to 100 "
         "and to 100,000: with more rows each row matters less, the noise shrinks and the best C moves outwards "
         "(from about 1 to about 7), while PMT's radius grows only slowly (like the square root of log n): "
         "a safe choice made without looking at the data, not the optimum.")
    with st.expander("The formulas"):
        st.markdown("The private mean of the clipped values, for replace-one neighbours (one row changes the "
                    "mean by at most 2C/n):")
        st.latex(r"\hat m = \frac1n\sum_i \operatorname{clip}(x_i,-C,C) + N\!\left(0, \left(\frac{2C}{n\mu}\right)^2\right)")
        st.latex(r"\operatorname{MSE}(C) = \underbrace{\left(\mathbb E\,\operatorname{clip}(X) - m\right)^2}_{\text{bias}^2}"
                 r" + \underbrace{\frac{\operatorname{Var}\operatorname{clip}(X)}{n}}_{\text{sampling}}"
                 r" + \underbrace{\left(\frac{2C}{n\mu}\right)^2}_{\text{privacy noise}}")
        st.markdown("PMT's radius for whitened rows with d features (here d = 1) and failure probability eta:")
        st.latex(r"R = \sqrt{d\,\left(1 + \ln(2n/\eta)\right)}")

# ============================================================================================
def _lesson_4() -> None:
    st.subheader("Why conditioning matters: whitening and the noisy inverse")
    st.markdown(
        "Regression divides by the data's spread in every direction. When the data are long and thin "
        "(one direction barely varies: the matrix is **ill-conditioned**), a little noise in that thin "
        "direction turns into a huge error. PMT uses a small **public** sample to learn the shape of the "
        "cloud and **whitens** the private rows: it stretches the thin direction until the cloud is round. "
        "Then one circle (the truncation radius) fits every direction, and the noise hurts every direction "
        "equally little."
    )
    c1, c2, c3 = st.columns(3)
    kappa4 = c1.select_slider("how elongated (condition number)", [1.0, 10.0, 100.0, 1000.0, 10_000.0], 100.0,
                              **_keep("learn_l4_kappa"), format_func=lambda v: f"{v:,.0f}",
                              help="Ratio of the largest to the smallest variance of the two features.")
    npub4 = c2.select_slider("public rows n_pub", [10, 20, 50, 200, 1000], 200, **_keep("learn_l4_npub"),
                             help="Rows whose privacy is not protected (e.g. an old public survey), used only "
                             "to learn the shape.")
    heavy4 = c3.toggle("heavy tails", False, **_keep("learn_l4_heavy"),
                       help="Draw the rows from a Student t distribution with 3 degrees of freedom (same shape, "
                       "a few extreme rows). With Gaussian rows the circle almost never cuts anything (by design); heavy "
                       "tails show rows being scaled onto it.")
    w = _whitening(kappa4, npub4, heavy4)
    _chart(lessons.figure_whitening(w), "learn_fig4a")
    st.caption(
        f"Left: 2,000 private rows (vermillion) and {npub4} public rows (black crosses). Right: the private rows "
        f"after multiplying by the inverse square root of the public second moment; the dashed circle has the "
        f"PMT radius R = {w.radius:.2f}. {int(w.truncated.sum())} of {w.X.shape[0]:,} rows lie outside and are "
        f"scaled onto it. Condition number {w.kappa_raw:,.0f} before, {w.kappa_white:.2f} after."
    )
    st.markdown("**The noisy inverse.** Now solve the regression equations after adding privacy noise to the "
                "data's spread matrix, 400 times with fresh noise, once on the raw rows and once on the "
                "whitened rows (with the same privacy budget).")
    c1, c2 = st.columns(2)
    eps4 = c1.slider("epsilon", 0.1, 10.0, EPS_DEFAULT, 0.1, **_keep("learn_l4_eps"))
    n4 = c2.select_slider("private rows n", [1000, 3000, 10_000, 30_000, 100_000], 10_000, **_keep("learn_l4_n"))
    inv = _noisy_inverse(kappa4, npub4, n4, eps4)
    m1, m2, m3 = st.columns(3)
    m1.metric("Median error, raw", f"{inv.median_error('raw'):.3f}",
              help="Median distance of the noisy solution from the true coefficients (true length 1).")
    m2.metric("Median error, whitened (PMT)", f"{inv.median_error('pmt'):.3f}")
    m3.metric("Raw solves that broke down", f"{inv.not_pd_raw:.0%}",
              help="Share of draws where the noisy matrix stopped being positive definite: the 'division' "
              f"flips sign in the thin direction. Whitened: {inv.not_pd_pmt:.0%}.")
    _chart(lessons.figure_noisy_inverse(inv), "learn_fig4b")
    st.caption(
        "Each dot is one private solution of the regression equations; the open star is the truth (length 1). "
        "Left: the raw solutions smear along the thin direction and some fly off. Right: the whitened ones, "
        "mapped back to the original coefficients, stay close."
    )
    _try("Set the condition number to 1 (a round cloud): whitening changes nothing and both are equally good. "
         "Then go to 1,000: about 4 in 10 raw solves break down while the whitened ones stay close. At 10,000 "
         "even PMT needs more rows: raise n to 100,000. Shrinking the public sample to 10 rows still gives "
         "enough of the shape.")
    st.markdown("**On real data** (opens the PMT page with these settings; share the link):\n"
                + markdown_links(["conditioning", "pmt_beats_baselines"]))
    with st.expander("The formulas"):
        st.markdown("Public second moment (uncentered) and whitening:")
        st.latex(r"\Sigma_{\text{pub}} = \tfrac1m X_{\text{pub}}^\top X_{\text{pub}},\qquad "
                 r"\tilde x_i = \Sigma_{\text{pub}}^{-1/2} x_i,\qquad "
                 r"\tilde x_i \leftarrow \tilde x_i\,\min\!\left(1, R/\lVert\tilde x_i\rVert\right)")
        st.markdown(r"The private system and its solution (only $A$ is noised in this picture; $W$ is symmetric "
                    r"Gaussian with std $\sqrt2\, r^2 / \mu_A$, $r$ the bound on the row norms):")
        st.latex(r"(\tilde A + W)\,\tilde\theta = \tilde b,\qquad \theta = \Sigma_{\text{pub}}^{-1/2}\tilde\theta")
        st.markdown(r"Raw rows use the same radius rule with $\operatorname{tr}\Sigma_{\text{pub}}$ in place of "
                    r"$d$. The error of a noisy inverse grows like $\lVert W\rVert / \lambda_{\min}(A)$: "
                    r"tiny for a round cloud, huge when one direction barely varies.")

# ============================================================================================
def _lesson_5() -> None:
    st.subheader("What a Renyi-divergence bound says, and how clipping tightens it")
    st.markdown(
        "NVDP shares a random sample drawn from a distribution computed from your sentence, instead of the "
        "sentence's exact embedding. If two different sentences give **nearly the same distribution**, "
        "nobody can tell from the sample which one was used. The **Renyi divergence** of order lambda "
        "measures how different two distributions are (0 = identical; bigger = easier to tell apart), and "
        "it translates into a privacy guarantee. Clipping keeps every distribution inside a box: means in "
        "[-C_mu, C_mu] and spreads above a floor, so no pair can be too different."
    )
    MEAN_B, STD_B = -0.5, 0.2
    c1, c2, c3, c4 = st.columns(4)
    ma5 = c1.slider("mean of sentence A", -6.0, 6.0, 3.0, 0.1, **_keep("learn_l5_ma"))
    sa5 = c2.slider("spread (std) of sentence A", 0.05, 0.95, 0.5, 0.05, **_keep("learn_l5_sa"))
    C5 = c3.slider("C_mu (mean clipping radius)", 0.25, 5.0, 1.0, 0.25, **_keep("learn_l5_C"))
    lam5 = c4.select_slider("Renyi order lambda", [1.1, 1.5, 2.0, 4.0, 8.0], 1.1, **_keep("learn_l5_lam"),
                            help="Higher orders weigh the worst cases more. NVDP's papers use 1.1.")
    d_ab, d_ab_c, d_ba, d_ba_c = _renyi_now(ma5, sa5, MEAN_B, STD_B, C5, lam5)
    m1, m2, m3 = st.columns(3)
    m1.metric("D(A || B) without clipping", _fmt(d_ab) + ("" if not math.isfinite(d_ab) else " nats"))
    m2.metric("D(A || B) with clipping", _fmt(d_ab_c) + " nats")
    m3.metric("Worse of both orders, clipped", _fmt(max(d_ba_c, d_ab_c)) + " nats",
              help=f"The divergence is not symmetric; a privacy bound takes the worse order. D(B || A): "
              f"{_fmt(d_ba)} unclipped, {_fmt(d_ba_c)} clipped.")
    _chart(_fig_renyi(ma5, sa5, MEAN_B, STD_B, C5, lam5), "learn_fig5")
    st.caption(
        f"Left: sentence B's posterior is fixed (mean {MEAN_B}, std {STD_B}); dotted = as the encoder made them, "
        f"solid = after clipping (the shaded band is the allowed range of means). Right: the divergence as "
        f"A's mean moves; without clipping it grows without limit, with clipping it levels off once A's mean "
        f"leaves the band."
    )
    _try("Raise A's spread above 0.66 (with lambda = 1.1): without clipping the divergence becomes infinite, "
         "because B is too narrow compared with A. Clipping raises B's spread to the floor and keeps it finite. "
         "Then drag A's mean far out: the clipped curve stays flat.")
    st.markdown("**On real sentences** (opens the NVDP page with these caps; share the link):\n"
                + markdown_links(["clipping_rules"]))
    with st.expander("The formulas"):
        st.markdown(r"Renyi divergence of order $\lambda > 1$ between two 1-D Gaussians (in nats), with "
                    r"$s^2 = \lambda s_B^2 + (1 - \lambda) s_A^2$:")
        st.latex(r"D_\lambda\!\left(\mathcal N(m_A,s_A^2)\,\|\,\mathcal N(m_B,s_B^2)\right) = "
                 r"\frac{\lambda (m_A-m_B)^2}{2 s^2} + \frac{1}{1-\lambda}\ln\frac{s}{s_A^{1-\lambda} s_B^{\lambda}}")
        st.markdown(r"It is **infinite** when $s^2 \le 0$, i.e. when $\lambda s_B^2 - (\lambda - 1) s_A^2 \le 0$. "
                    "Clipping (El Zein, Kumar & Henderson 2026) projects the mean and floors the spread:")
        st.latex(r"m \leftarrow m\,\min\!\left(1, \frac{C_\mu}{|m|}\right),\qquad "
                 r"s \leftarrow \max\!\left(s, \sqrt{\tfrac{\lambda-1}{\lambda}}\,\sigma_{\text{prior}}\right),"
                 r"\quad \sigma_{\text{prior}} = 1")
        st.markdown(r"With every spread at or above the floor and below the prior's 1, $s^2 > 0$, so the "
                    r"divergence is finite, and the clipped means keep the first term at most "
                    r"$\lambda (2 C_\mu)^2 / (2 s^2)$. Clipping caps the **worst case**; for a pair already "
                    "inside the box it can change D slightly either way.")


for _tab, _lesson in zip(tabs, (_lesson_1, _lesson_2, _lesson_3, _lesson_4, _lesson_5)):
    if _tab.open:
        with _tab:
            _lesson()
