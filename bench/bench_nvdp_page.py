"""Benchmark: the NVDP explorer page: first visit and control moves.

Targets: the first NVDP visit on a fresh clone <= 15 s on a quiet machine (the shipped
models of assets/nvdp are loaded and only the 500 evaluation sentences are encoded); a move of
C_mu, alpha_min, alpha_max or the Renyi order answers in <= 0.3 s median on a quiet machine.

Measures, with the page's default settings:

1. ``first`` (a fresh process, an empty ``NVDP_CACHE_DIR``, so nothing is cached: the fresh-clone
   case): wall time of the page's first AppTest run until the metrics show, and of the whole
   process (imports included);
2. ``sliders`` (same fresh process, after the first visit and the page's prefetch of the unclipped
   bounds at the other orders): for moves of each of C_mu, alpha_min, alpha_max and the Renyi order,
   the median time until the page had drawn the bounds and the open tab's figure (its own
   ``_nvdp_timing`` mark: what a move answers first, sent to the browser as drawn) and of the whole
   AppTest rerun, which ends when the accuracy of the new caps is drawn (computed on a worker
   thread meanwhile, ui/nvdp/live.py), each with the CPU time of the process (all threads). The
   scripts are compiled once, as the server does (``--recompile``: AppTest's recompilation on
   every run; streamlit >= 1.50 builds the cache in ``app_test``, older ones in
   ``local_script_runner``: both are shared);
3. ``posthoc``: the engine call behind a slider move (``LiveEvaluator.evaluate``), for several C_mu;
4. ``cold`` (only with ``--cold``): the first AppTest run with an empty cache and no bundle
   (``NVDP_ASSET_DIR=``): encoding the 3,000 sentences + training both models, with progress.

Run: ``.venv/bin/python bench/bench_nvdp_page.py [--cold] [--threads 2] [--repeat 5]``.
Prints wall times, ``os.getloadavg()`` (the machine is shared: read the figures against the
load) and the threads.

Figures (2026-11-30 19:15 UTC, final code, 2 cores, load average 1.6-1.8 incl. this run; two fresh
processes): first visit 10.1-10.3 s (goal <= 15 s; 11.8-13.4 s in earlier runs today); bounds and
figure on screen after a move, median over 5: C_mu 0.19-0.22 s, alpha_min 0.10-0.11 s, alpha_max
0.15 s, Renyi order 0.17 s (0.36 s before the unclipped bounds were prefetched); the whole move with the new accuracy 0.35-0.49 s
(the accuracy is a re-run of the model on 500 sentences, about 0.25 s of both cores). Before this
round (same machine, 16:40 UTC): whole reruns 0.49-0.64 s with the accuracy in the page's thread
(a newer move had to wait for it), bounds and figure after 0.18-0.36 s, and AppTest recompiled both
scripts on every rerun (about 0.05-0.08 s of the figures then).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

_T0 = time.perf_counter()
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")




def _load():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def _share_bytecode() -> None:
    """Compile each script once, as the server does (AppTest builds a new ScriptCache per run).

    Streamlit's server keeps one ScriptCache for its lifetime, so a rerun does not recompile
    app.py and the page; ``AppTest`` recompiles both on every run (about 0.1-0.2 s of CPU here),
    which a user never waits for. ``--recompile`` keeps AppTest's behaviour.
    """
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import local_script_runner

    from streamlit.testing.v1 import app_test

    shared = ScriptCache()
    # AppTest builds the cache in app_test (streamlit >= 1.50) or in local_script_runner (older)
    local_script_runner.ScriptCache = lambda: shared
    app_test.ScriptCache = lambda: shared


def _app():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1200)
    at.switch_page("app_pages/nvdp.py")
    return at


def bench_posthoc(repeat: int) -> None:
    from engine.nvdp import explore as X
    from engine.nvdp.clipping import ClipConfig

    settings = X.ExploreSettings.from_env()
    t = time.perf_counter()
    data, models = X.load_or_train(settings, progress=lambda f, m: print(f"  [{100 * f:5.1f}%] {m}", flush=True)
                                   if int(1000 * f) % 50 == 0 else None)
    print(f"models ready in {time.perf_counter() - t:.1f} s ({_load()})")
    states, y = data.split("test")
    t = time.perf_counter()
    live = X.LiveEvaluator(models["clipped"], states, y)
    print(f"LiveEvaluator prepared in {time.perf_counter() - t:.2f} s (once per model)")
    base = settings.train_clip.to_dict()
    times, cpu = [], []
    for i in range(repeat):
        clip = ClipConfig(**{**base, "C_mu": 2.0 + 0.7 * i})
        t, c = time.perf_counter(), time.process_time()
        res = live.evaluate(clip, seed=settings.seed, with_accuracy=False)  # the one protocol (engine.nvdp.protocol)
        tb, cb = time.perf_counter() - t, time.process_time() - c
        res = live.complete(res)  # the accuracy, as the page adds it at the end of its run
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        print(f"  posthoc C_mu={clip.C_mu:.1f}: {times[-1]:.3f} s wall, {cpu[-1]:.3f} s CPU (bounds {tb:.3f} s wall, "
              f"{cb:.3f} s CPU; accuracy the rest)  accuracy {res.accuracy:.3f}  "
              f"RD paper max {res.rd_paper.max:.4g}  exact max {res.rd_exact.max:.4g}  BDP paper {res.bdp_paper.epsilon:.4g}")
    print(f"posthoc (engine, one slider move): median {statistics.median(times):.3f} s wall, max {max(times):.3f} s; "
          f"median {statistics.median(cpu):.3f} s CPU (all threads) over {repeat} ({_load()})")


def bench_first_and_sliders(repeat: int) -> None:
    """In this (fresh) process with an empty cache: the first visit, then slider moves."""

    tmp = tempfile.mkdtemp(prefix="nvdp_first_")
    os.environ["NVDP_CACHE_DIR"] = tmp
    try:
        print(f"first visit: fresh process, empty NVDP_CACHE_DIR ({_load()})", flush=True)
        c0 = time.process_time()
        t = time.perf_counter()
        at = _app().run()
        first = time.perf_counter() - t
        assert not at.exception, [e.message for e in at.exception]
        assert at.metric, "the page drew no metrics"
        print(f"first NVDP visit (shipped models, encode 500 evaluation sentences): {first:.2f} s wall, "
              f"{time.process_time() - c0:.2f} s CPU; process {time.perf_counter() - _T0:.2f} s "
              f"since start ({_load()})", flush=True)
        at.run()  # settle (URL sync)
        # the page prefetches the unclipped bounds at every offered order after the first view (about a
        # second on a worker thread, while a user reads the page); moves are timed after it
        from engine.nvdp.background import PREFETCH

        t = time.perf_counter()
        PREFETCH.wait(timeout=600)
        print(f"  prefetch of the unclipped bounds at the other orders finished {time.perf_counter() - t:.2f} s "
              "after the settled first view", flush=True)
        moves = {
            "nvdp_C_mu": lambda i, w: round(w.min + (w.max - w.min) * (i + 1) / (repeat + 2), 1),
            "nvdp_alpha_min": lambda i, w: round(0.12 + 0.03 * i, 2),
            "nvdp_alpha_max": lambda i, w: round(0.95 - 0.05 * i, 2),
        }
        moves = {k: (lambda i, w, f=f: ("slider", f(i, w))) for k, f in moves.items()}
        moves["nvdp_renyi_order"] = lambda i, w: ("select_slider", (1.2, 1.5, 2.0, 1.05, 1.1, 3.0, 1.01)[i % 7])
        for key, val in moves.items():
            walls, cpus, answers, answers_cpu = [], [], [], []
            for i in range(repeat):
                kind, v = val(i, at.slider(key=key) if key != "nvdp_renyi_order" else None)
                w = getattr(at, kind)(key=key)
                t, c = time.perf_counter(), time.process_time()
                w.set_value(v).run()
                walls.append(time.perf_counter() - t)
                cpus.append(time.process_time() - c)
                assert not at.exception, [e.message for e in at.exception]
                assert not any("computing" in m.value for m in at.metric), "the run ended without the accuracy"
                # the page's own mark: the headline bounds and the open tab's figure are drawn (and sent
                # to the browser); the accuracy follows from the worker thread (ui/nvdp/live.py)
                answers.append(at.session_state["_nvdp_timing"]["answer"] - t)
                answers_cpu.append(at.session_state["_nvdp_timing"]["answer_cpu"] - c)
            print(f"  {key[5:]:>11} moves: bounds + figure on screen after median {statistics.median(answers):.3f} s "
                  f"wall, {statistics.median(answers_cpu):.3f} s CPU (max {max(answers):.3f} s); whole rerun with the "
                  f"accuracy median {statistics.median(walls):.3f} s wall, {statistics.median(cpus):.3f} s CPU "
                  f"(max {max(walls):.3f} s); over {repeat} ({_load()})", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_page(repeat: int) -> None:
    t = time.perf_counter()
    at = _app().run()
    warm = time.perf_counter() - t
    assert not at.exception, [e.message for e in at.exception]
    assert at.metric, "the page drew no metrics"
    print(f"warm first visit (models on disk, fresh process): {warm:.2f} s ({_load()})")
    lo, hi = at.slider(key="nvdp_C_mu").min, at.slider(key="nvdp_C_mu").max
    times = []
    for i in range(repeat):
        v = round(lo + (hi - lo) * (i + 1) / (repeat + 2), 1)
        t = time.perf_counter()
        at.slider(key="nvdp_C_mu").set_value(v).run()
        times.append(time.perf_counter() - t)
        assert not at.exception
        print(f"  rerun after C_mu -> {v}: {times[-1]:.3f} s")
    t = time.perf_counter()
    at.slider(key="nvdp_C_mu").set_value(round(lo + (hi - lo) / (repeat + 2), 1)).run()
    back = time.perf_counter() - t
    print(f"page rerun after moving C_mu: median {statistics.median(times):.3f} s, max {max(times):.3f} s; "
          f"moving back to a seen value {back:.3f} s ({_load()})")


def bench_cold() -> None:
    tmp = tempfile.mkdtemp(prefix="nvdp_cold_")
    old = os.environ.get("NVDP_CACHE_DIR")
    os.environ["NVDP_CACHE_DIR"] = tmp
    os.environ["NVDP_ASSET_DIR"] = ""  # no shipped models: encode everything and train
    try:
        import engine.nvdp.encoder as enc

        enc._load_model.cache_clear()  # the MiniLM load is part of a cold start
        t = time.perf_counter()
        at = _app().run()
        cold = time.perf_counter() - t
        assert not at.exception, [e.message for e in at.exception]
        assert at.metric, "the page drew no metrics after training"
        print(f"cold first visit (empty cache: encode 3000 sentences + train 2 models): {cold:.1f} s ({_load()})")
    finally:
        if old is None:
            os.environ.pop("NVDP_CACHE_DIR", None)
        else:
            os.environ["NVDP_CACHE_DIR"] = old
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cold", action="store_true", help="also time a first visit with an empty cache (minutes)")
    ap.add_argument("--cold-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--first-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--skip-engine", action="store_true", help="only the fresh-process first visit and slider moves")
    ap.add_argument("--recompile", action="store_true", help="let AppTest recompile the scripts on every run")
    args = ap.parse_args()
    if not args.recompile:
        _share_bytecode()
    import torch

    torch.set_num_threads(args.threads)
    if args.cold_only:
        bench_cold()
        return
    if args.first_only:
        bench_first_and_sliders(args.repeat)
        return
    print(f"torch threads {torch.get_num_threads()}, cpus {os.cpu_count()}, "
          f"{'AppTest recompiles the scripts per run' if args.recompile else 'scripts compiled once (as the server)'}, {_load()}")
    import subprocess

    # a fresh process: nothing imported, nothing cached (the fresh-clone first visit)
    subprocess.run([sys.executable, __file__, "--first-only", "--threads", str(args.threads), "--repeat",
                    str(args.repeat)] + (["--recompile"] if args.recompile else []), check=True)
    if args.skip_engine:
        return
    bench_posthoc(args.repeat)
    bench_page(args.repeat)
    if args.cold:
        # a fresh process: Streamlit's caches of this one already hold the warm models
        import subprocess

        subprocess.run([sys.executable, __file__, "--cold-only", "--threads", str(args.threads)], check=True)


if __name__ == "__main__":
    main()
