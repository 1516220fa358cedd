"""Benchmark: the NVDP explorer page (issue 7 acceptance).

Targets: a post-hoc slider change answers in <= 1 s; with a cold cache the first visit shows
progress and is ready in <= 3 min (encoding the 3,000 sentences + training two small models on 2
cores); with a warm disk cache a first visit is ready in <= 5 s.

Measures, with the page's default settings (``ExploreSettings.from_env()``):

1. ``posthoc``: the engine call behind a slider move (``LiveEvaluator.evaluate`` on the 500 test
   sentences with a new clipping: the model after the bottleneck re-run, exact bound on LIVE_N_RD = 48
   sentences, paper form and both BDP figures on LIVE_N_BDP = 128), for several C_mu values;
2. ``rerun``: an AppTest rerun of the page after moving the C_mu slider (models loaded and cached);
3. ``warm``: the first AppTest run of the page in a fresh process with both models on disk;
4. ``cold`` (only with ``--cold``): the first AppTest run with an empty ``NVDP_CACHE_DIR``
   (a temporary folder): encoding + training both models with progress, until the metrics show.

Run: ``.venv/bin/python bench/bench_nvdp_page.py [--cold] [--threads 2] [--repeat 5]``.
The model cache of the default settings is created on first use (minutes). Prints wall times,
``os.getloadavg()`` (the machine is shared: read the figures against the load) and the threads.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _load():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def _app():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1200)
    at.switch_page("pages/nvdp.py")
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
        res = live.evaluate(clip, seed=settings.seed)  # the one protocol (engine.nvdp.protocol)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        print(f"  posthoc C_mu={clip.C_mu:.1f}: {times[-1]:.3f} s wall, {cpu[-1]:.3f} s CPU  accuracy {res.accuracy:.3f}  "
              f"RD paper max {res.rd_paper.max:.4g}  exact max {res.rd_exact.max:.4g}  BDP paper {res.bdp_paper.epsilon:.4g}")
    print(f"posthoc (engine, one slider move): median {statistics.median(times):.3f} s wall, max {max(times):.3f} s; "
          f"median {statistics.median(cpu):.3f} s CPU (all threads) over {repeat} ({_load()})")


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
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    if args.cold_only:
        bench_cold()
        return
    print(f"torch threads {torch.get_num_threads()}, cpus {os.cpu_count()}, {_load()}")
    bench_posthoc(args.repeat)
    bench_page(args.repeat)
    if args.cold:
        # a fresh process: Streamlit's caches of this one already hold the warm models
        import subprocess
        import sys

        subprocess.run([sys.executable, __file__, "--cold-only", "--threads", str(args.threads)], check=True)


if __name__ == "__main__":
    main()
