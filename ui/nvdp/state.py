"""The NVDP page's settings: the evaluation protocol, the slider options, the defaults and the URL.

The page's settings live in ``st.session_state`` under ``nvdp_*`` keys (:data:`NVDP_DEFAULTS`).
:func:`load` fills in the defaults and reads a shared link once per session (every value validated,
a rejected one reported); :func:`url_sync` writes the settings that differ from the defaults back
into the URL, so a shared link reproduces the view.
"""

from __future__ import annotations

import streamlit as st

from engine.markup import md_escape

from engine.nvdp import explore as X
from engine.nvdp.protocol import DEFAULT_PROTOCOL
from ui.nvdp.parts import choice, float_in, int_in

ss = st.session_state

#: The one evaluation protocol (engine.nvdp.protocol): the CLI, the results script and the docs use it too.
PROTOCOL = DEFAULT_PROTOCOL
N_EVAL = PROTOCOL.n_eval
SIGMA_CAP = X.DEFAULT_TRAIN_CLIP.sigma_max or 0.99
RENYI_ORDERS = (1.01, 1.05, 1.1, 1.2, 1.5, 2.0, 3.0)
TARGETS = {"trained": "the model trained with clipping", "release": "the unclipped model, clipped only at release"}
DEFAULT_SENTENCES = ("The battery lasts all day and the screen is gorgeous.",
                     "Terrible customer service, I will never order again.")

_D = X.DEFAULT_TRAIN_CLIP
NVDP_DEFAULTS = {
    "nvdp_kl_weight": 1e-2,
    "nvdp_seed": 0,
    "nvdp_C_mu": _D.C_mu,
    "nvdp_alpha_min": _D.alpha_min,
    "nvdp_alpha_max": _D.alpha_max,
    "nvdp_renyi_order": _D.renyi_order,
    "nvdp_sigma_cap": _D.sigma_max is not None,
    "nvdp_target": "trained",
    "nvdp_form": "paper",
    "nvdp_sent_a": DEFAULT_SENTENCES[0],
    "nvdp_sent_b": DEFAULT_SENTENCES[1],
    "nvdp_source": "bundled",  # the "Sentences" choice; kept across page switches like the others
    "nvdp_lr_schedule": "constant",  # the shipped models' schedule
}

#: Learning-rate schedules offered for training (engine.nvdp.training.LR_SCHEDULES).
LR_SCHEDULES = {"constant": "constant (the shipped models)",
                "linear_warmup_decay": "the authors': 6 % warm-up, then linear decay to 0"}


#: URL name -> (session key, parse). A shared link reproduces the view.
URL = {
    "kl": ("nvdp_kl_weight", choice(X.KL_WEIGHTS)),
    "seed": ("nvdp_seed", int_in(0, 99)),
    "C_mu": ("nvdp_C_mu", float_in(0.1, 100.0)),
    "alpha_min": ("nvdp_alpha_min", float_in(0.0, 2.0)),
    "alpha_max": ("nvdp_alpha_max", float_in(0.05, 5.0)),
    "renyi_order": ("nvdp_renyi_order", choice(RENYI_ORDERS)),
    "sigma_cap": ("nvdp_sigma_cap", lambda t: {"1": True, "0": False}[t]),
    "lr": ("nvdp_lr_schedule", lambda t: t if t in LR_SCHEDULES else (_ for _ in ()).throw(ValueError(f"{t!r} is not one of {', '.join(LR_SCHEDULES)}"))),
    "apply_to": ("nvdp_target", lambda t: t if t in TARGETS else (_ for _ in ()).throw(ValueError(f"{t!r} is not one of {', '.join(TARGETS)}"))),
}


def load() -> list[str]:
    """Fill in the page's defaults and, once per session, copy valid settings from the URL.

    Returns
    -------
    list of str
        One message per link parameter that was ignored (the default is kept), for the page to show.
    """
    for k, v in NVDP_DEFAULTS.items():
        ss.setdefault(k, v)
    ss.setdefault("nvdp_train_clip", _D.to_dict())
    url_problems = []
    if not ss.get("_nvdp_url_loaded"):
        ss["_nvdp_url_loaded"] = True
        for name, (key, parse) in URL.items():
            if name in st.query_params:
                try:
                    ss[key] = parse(st.query_params[name])
                except (ValueError, TypeError, KeyError) as exc:
                    url_problems.append(f"The link's {name}={md_escape(st.query_params[name])} was ignored: "
                                        f"{md_escape(exc, 200)}.")  # data, never markup
    return url_problems


def url_sync() -> None:
    """Write the settings that differ from the defaults into the URL (a shared link reproduces the view)."""
    want = {}
    for name, (key, _) in URL.items():
        v = ss.get(key)
        if v != NVDP_DEFAULTS[key]:
            want[name] = ("1" if v else "0") if isinstance(v, bool) else (f"{v:g}" if isinstance(v, float) else str(v))
    from ui.common.class_mode import url_extra

    want.update(url_extra())  # presenter mode travels with the link
    if {k: st.query_params[k] for k in st.query_params} != want:
        st.query_params.from_dict(want)
