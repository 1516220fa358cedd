"""What the product says about clipping, computed from the shipped numbers, and a checker for such sentences.

The shipped facts are the per-seed figures of the default pair (``assets/nvdp/seeds.json``, made by
``scripts/make_nvdp_models.py``) and the training-drift trace (``assets/nvdp/drift_trace.json``,
``scripts/nvdp_drift_trace.py``). :func:`clipping_sentence` writes the sentence the Home card and the
NVDP page's introduction show; :func:`check_text` reads a text's sentences and reports every claim
about clipping that the facts do not support (``tests/ui/test_nvdp_claims.py`` runs it over the page's
sentences and over planted false ones). No Streamlit here.
"""

from __future__ import annotations

import math
import re

__all__ = ["shipped_facts", "clipping_sentence", "home_clipping_sentence", "restored_sentence", "check_text", "sentences"]

_NUM = r"\d+(?:\.\d+)?(?:e[+-]?\d+)?"
_METRICS = {"worst case": "rd_max_all_pairs", "filtered max": "rd_paper_max", "mean": "rd_paper_mean"}


def shipped_facts(seeds: dict | None = None, trace: dict | None = None) -> dict:
    """The facts the sentences are checked against (loaded from the shipped assets when not given)."""
    if seeds is None:
        from engine.nvdp.bundled import seed_summary

        seeds = seed_summary()
    if trace is None:
        try:
            from engine.nvdp.drift import load_trace

            trace = load_trace()
        except FileNotFoundError:
            trace = None
    live = next(r for r in seeds["per_seed"] if r["seed"] == seeds["live_seed"])
    n = len(seeds["per_seed"])
    lower = {m: sum(float(r["clipped"][m]) < float(r["unclipped"][m]) for r in seeds["per_seed"]) for m in _METRICS.values()}
    return {"live": live, "n_seeds": n, "lower": lower, "per_seed": seeds["per_seed"],
            "drift": trace["summary"] if trace else None, "bit_for_bit_across_cpus": False}


def _fmt(x: float) -> str:
    return f"{float(x):.3g}"


def restored_sentence(facts: dict) -> str:
    """Which epochs the shipped models are (early stopping restores them)."""
    u, c = facts["live"]["unclipped"], facts["live"]["clipped"]
    return (f"The shipped unclipped model is its run's epoch-{u['best_epoch']} checkpoint (of {u['epochs_run']} run) and "
            f"the clipped one epoch {c['best_epoch']} (of {c['epochs_run']}), each restored by early stopping.")


def clipping_sentence(facts: dict | None = None) -> str:
    """What clipping does here, per training regime, computed from the shipped numbers."""
    f = facts or shipped_facts()
    u, c = f["live"]["unclipped"], f["live"]["clipped"]
    n = f["n_seeds"]

    def direction(m):
        return "lowers" if float(c[m]) < float(u[m]) else "raises"

    dirs = {name: direction(m) for name, m in _METRICS.items()}
    if len(set(dirs.values())) == 1:
        head = f"On the shipped early-stopped models, training with clipping {dirs['worst case']} the worst case, the filtered max and the mean"
    else:
        head = "On the shipped early-stopped models, training with clipping " + ", ".join(
            f"{d} the {name}" for name, d in dirs.items())
    s = (f"{head} (worst case {_fmt(c['rd_max_all_pairs'])} vs {_fmt(u['rd_max_all_pairs'])}, filtered max "
         f"{_fmt(c['rd_paper_max'])} vs {_fmt(u['rd_paper_max'])}, mean {_fmt(c['rd_paper_mean'])} vs "
         f"{_fmt(u['rd_paper_mean'])}; accuracy "
         f"{100 * float(c['accuracy']):.1f} vs {100 * float(u['accuracy']):.1f} %); over {n} seeds the worst case is lower "
         f"with clipping in {f['lower']['rd_max_all_pairs']} of {n}, the filtered max in {f['lower']['rd_paper_max']} of "
         f"{n} and the mean in {f['lower']['rd_paper_mean']} of {n}.")
    d = f.get("drift")
    if d and "constant" in d:
        k = d["constant"]
        lead = ("Clipping is insurance against late drift" if k["release_lower_rd_max_all_pairs"] or
                k["clipped_lower_rd_max_all_pairs"] else "Clipping did not lower the worst case even late in training")
        s += (f" {lead}: with the constant rate run to the end, clipping at release "
              f"lowers the worst case at {k['release_lower_rd_max_all_pairs']} of {k['n_points']} seed-epochs and "
              f"training with clipping at {k['clipped_lower_rd_max_all_pairs']} of {k['n_points']}")
        if "linear_warmup_decay" in d:
            a = d["linear_warmup_decay"]
            s += (f"; with the authors' schedule, training with clipping at {a['clipped_lower_rd_max_all_pairs']} of "
                  f"{a['n_points']}")
        s += " (the Training drift tab)."
    return s


def home_clipping_sentence(facts: dict | None = None) -> str:
    """The Home card's short sentence about clipping, computed from the shipped numbers ("" without them)."""
    try:
        f = facts or shipped_facts()
    except (FileNotFoundError, KeyError, ValueError, StopIteration):
        return ""
    u, c = f["live"]["unclipped"], f["live"]["clipped"]
    m = "rd_max_all_pairs"
    verb = "lowers" if float(c[m]) < float(u[m]) else "raises"
    s = (f"On the shipped early-stopped models, training with clipping {verb} the worst case (worst case "
         f"{_fmt(c[m])} vs {_fmt(u[m])}; lower with clipping in {f['lower'][m]} of {f['n_seeds']} seeds).")
    d = f.get("drift")
    if d and "constant" in d:
        k = d["constant"]
        s += (f" {'It is insurance against' if k['release_lower_rd_max_all_pairs'] else 'It did not help against'} "
              "drift late in training: with a constant learning rate run to the end, "
              f"clipping at release lowers the worst case at {k['release_lower_rd_max_all_pairs']} of "
              f"{k['n_points']} seed-epochs.")
    return s


def sentences(text: str) -> list[str]:
    """The sentences of a (markdown) text: split after '.', '!' or '?' followed by a space or the end.

    >>> sentences("**A** b 0.79 vs 0.65. C d!  E")
    ['A b 0.79 vs 0.65.', 'C d!', 'E']
    """
    plain = re.sub(r"[*`]", "", text)
    blocks = re.split(r"\n\s*\n|\n#+ ", plain)  # paragraphs and headings end a sentence too
    parts = [p for b in blocks for p in re.split(r"(?<=[.!?])\s+(?=[A-Z(:])", b.replace("\n", " "))]
    return [p.strip() for p in parts if p.strip()]


def _close(x: float, y: float) -> bool:
    return math.isclose(float(x), float(y), rel_tol=6e-3, abs_tol=1e-12)


def check_sentence(s: str, facts: dict) -> list[str]:
    """The problems of one sentence against ``facts`` (empty: nothing false found)."""
    out = []
    low = s.lower()
    live_u, live_c = facts["live"]["unclipped"], facts["live"]["clipped"]
    all_lower = all(v == facts["n_seeds"] for v in facts["lower"].values())
    if re.search(r"\btighten(s|ed|ing)?\b", low) and "clipping" in low and not all_lower and "does not tighten" not in low:
        out.append("says clipping tightens the bound; on the shipped models it does not in every seed and figure")
    if (re.search(r"(make_nvdp_models|models?\b|reproduces them)[^.;()]{0,80}bit for bit", low)
            and not facts["bit_for_bit_across_cpus"] and not re.search(r"same (cpu|machine)", low)):
        out.append("says 'bit for bit'; the models are reproduced within tolerances, not bit for bit across CPUs")
    if re.search(r"guarantee for inputs with length hidden|certified bound is (a|the page's) guarantee", low):
        out.append("presents the certified bound as the page's guarantee; it is a what-if for a length-hiding mechanism")
    # "on the shipped ... models, (training with) clipping lowers/raises the <metric>[, the <metric>]": each verb
    # governs the metric names up to the next verb or punctuation
    if "shipped" in low and "clipping" in low:
        for mm in re.finditer(r"\b(lowers|raises|reduces|increases)\b([^.;(]*?)(?=\b(?:lowers|raises|reduces|increases)\b|[.;(]|$)", low):
            verb = "lowers" if mm.group(1) in ("lowers", "reduces") else "raises"
            for name, m in _METRICS.items():
                if re.search(rf"\b{name}\b", mm.group(2)):
                    truth = "lowers" if float(live_c[m]) < float(live_u[m]) else "raises"
                    if truth != verb:
                        out.append(f"says clipping {verb} the {name} of the shipped models; it {truth} it")
    # "<metric> ... a vs b": the first pair of numbers after a metric name is clipped vs unclipped (seed 0)
    for name, m in _METRICS.items():
        mm = re.search(rf"\b{name}(?: is| of)?\s+({_NUM}) vs ({_NUM})", low)
        if mm and "seeds (mean" not in low and "±" not in s:
            a, b = float(mm.group(1)), float(mm.group(2))
            if not (_close(a, live_c[m]) and _close(b, live_u[m])):
                out.append(f"{name} {a:g} vs {b:g}; the shipped models give {_fmt(live_c[m])} vs {_fmt(live_u[m])}")
    # "<metric> ... lower with clipping in k of n" / "the filtered max in k of n"
    for name, m in _METRICS.items():
        found = list(re.finditer(rf"\b{name}\b(?:[^;.()]|\.\d)*?\(?(?:lower with clipping in|lower in|in) (\d+) of (\d+)", low))
        found += list(re.finditer(rf"\b{name}\b(?:[^;.()]|\.\d)*?\((\d+) of (\d+)\)", low))
        for mm in found:
            if "seed-epoch" in low[mm.start():mm.end() + 12]:
                continue
            k, n = int(mm.group(1)), int(mm.group(2))
            if n == facts["n_seeds"] and k != facts["lower"][m]:
                out.append(f"{name} lower in {k} of {n} seeds; the shipped seeds give {facts['lower'][m]} of {n}")
    # restored epochs
    for arm, pat in (("unclipped", r"unclipped model is (?:its run's |the )?epoch[- ](\d+)"),
                     ("clipped", r"(?<!un)clipped one (?:is )?(?:the )?epoch[- ](\d+)")):
        for mm in re.finditer(pat, low):
            if int(mm.group(1)) != int(facts["live"][arm]["best_epoch"]):
                out.append(f"the {arm} model is epoch {mm.group(1)}; it is epoch {facts['live'][arm]['best_epoch']}")
    # drift counts: each ';'-separated part is about the schedule it names, or else the one named before it
    d = facts.get("drift")
    if d:
        ctx = None
        for seg in low.split(";"):
            if "constant" in seg:
                ctx = "constant"
            if "authors'" in seg:
                ctx = "linear_warmup_decay"
            if ctx is None or ctx not in d:
                continue
            for kind, field in (("release", "release_lower_rd_max_all_pairs"),
                                ("training with clipping", "clipped_lower_rd_max_all_pairs")):
                mm = re.search(rf"{kind}[^,;]*? at (\d+) of (\d+)(?: seed-epochs)?", seg)
                if mm and (int(mm.group(1)), int(mm.group(2))) != (d[ctx][field], d[ctx]["n_points"]):
                    out.append(f"{ctx} schedule, {kind}: {mm.group(1)} of {mm.group(2)} seed-epochs; the trace "
                               f"gives {d[ctx][field]} of {d[ctx]['n_points']}")
    if re.search(r"direction (\*\*)?does not hold in every seed", low):
        out.append("'does not hold in every seed' hides how many: say in how many seeds it holds")
    return out


def check_text(text: str, facts: dict | None = None) -> list[str]:
    """Every problem of every sentence of ``text`` (``"sentence: problem"``)."""
    f = facts or shipped_facts()
    return [f"{s!r}: {p}" for s in sentences(text) for p in check_sentence(s, f)]
