"""Make (or check) the shipped encoder states of the NVDP page's evaluation sentences.

Encodes the 500 test sentences of the page's default split (``ExploreSettings()``: split seed 0,
max_length 48; :func:`engine.nvdp.explorer_models.select_sentences`) with the frozen
all-MiniLM-L6-v2 (:func:`engine.nvdp.encoder.encode_sentences`, no cache) and writes
``assets/nvdp/eval_states.safetensors`` (float16 states of the real tokens, the lengths),
``assets/nvdp/eval_states.json`` (the encoder's cache key; the split's indices, which
``settings.json`` records as hashes) and ``assets/nvdp/eval_states.sha256`` (:mod:`engine.nvdp.eval_states`).

Bit for bit: one torch thread, the encoder in eval mode without gradients, float16 rounding as the
encoder's own cache does, and a file without time stamps. ``--check`` encodes again into a
temporary folder and compares the SHA-256 with ``eval_states.sha256`` (exit status 1 if it
differs). The same torch version and CPU kind are needed for identical floating-point results.

Run: ``python scripts/make_nvdp_eval_states.py [--out assets/nvdp] [--check]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")


def make(out: Path) -> Path:
    import torch

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    from engine.nvdp.encoder import encode_sentences
    from engine.nvdp.eval_states import save_eval_states
    from engine.nvdp.explorer_models import ExploreSettings, select_sentences

    settings = ExploreSettings()
    sentences, _, tr, va, te = select_sentences(settings)
    t = time.perf_counter()
    states = encode_sentences([sentences[i] for i in te], max_length=settings.max_length, use_cache=False)
    print(f"encoded {states.n} evaluation sentences in {time.perf_counter() - t:.1f} s", flush=True)
    path = save_eval_states(states, out, split=(tr, va, te))
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)", flush=True)
    return path


def main() -> int:
    from engine.nvdp.eval_states import SUMS_FILE

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "assets" / "nvdp"))
    ap.add_argument("--check", action="store_true", help="encode again into a temporary folder and compare SHA-256")
    args = ap.parse_args()
    out = Path(args.out)
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    if not args.check:
        make(out)
        print((out / SUMS_FILE).read_text())
        return 0
    want = (out / SUMS_FILE).read_text()
    with tempfile.TemporaryDirectory(prefix="nvdp_eval_states_") as tmp:
        make(Path(tmp))
        got = (Path(tmp) / SUMS_FILE).read_text()
    if got != want:
        print("DIFFERENT:\n" + got + "expected:\n" + want)
        return 1
    print("identical: the shipped evaluation states reproduced bit for bit")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
