"""The PMT page's CSV export says, per row, which figures are DP releases and which are non-private diagnostics."""

import io

import pandas as pd

from engine.pmt.sweep import run_sweep
from ui.pmt.compute.export import results_csv


def test_csv_rows_name_their_dp_and_non_private_columns():
    frame = run_sweep("ccpp", epsilons=(1.0,), seeds=2, methods=("pmt", "dp-rr", "non-private"), standardize=True)
    out = pd.read_csv(io.StringIO(results_csv({"epsilon": frame}, data_name="ccpp", target="PE")))
    pmt = out[out["method_key"] == "pmt"].iloc[0]
    dp_cols, diag_cols = pmt["dp_release_columns"].split(";"), pmt["non_private_diagnostic_columns"].split(";")
    assert "kappa_noisy" in dp_cols and "eig_fix" in dp_cols
    assert {"rmse", "l2_error", "kappa_raw", "kappa_pmt", "frac_truncated"} <= set(diag_cols)
    assert not set(dp_cols) & set(diag_cols) and "epsilon" not in dp_cols + diag_cols
    # the non-private reference releases nothing: its kappa_noisy is a diagnostic too
    ref = out[out["method_key"] == "non-private"].iloc[0]
    assert pd.isna(ref["dp_release_columns"]) or ref["dp_release_columns"] == ""
    assert "rmse" in ref["non_private_diagnostic_columns"].split(";")
