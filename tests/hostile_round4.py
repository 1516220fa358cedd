"""Generator of the fourth round's hostile files (fixed seed): CSVs, moments files and NVDP texts.

Each case is ``(kind, name, raw bytes, expect)``; ``expect`` is either ``("values", ...)``, the values the file
holds (the reader must return exactly them), or ``("error", fragments)``, words the one-line error must contain
(the problem and, where there is one, the accepted range). ``python tests/hostile_round4.py OUT_DIR`` writes the
files out for a reader to inspect; the test module :mod:`tests.test_hostile_files_round4` runs them.

The kinds are the ones the fourth reliability round found: thousands separators read as decimals,
encoding damage (mojibake, a doubled byte-order mark, U+FFFD, mixed encodings), Excel's ``sep=`` line, a ``;``
header over ``,`` rows, JSON uploaded as CSV, a 400-digit integer, a 2,000,000-field row, moments files with
deep JSON, null or mistyped fields, huge entries and n_pub out of range, and NVDP texts with unquoted commas.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

SEED = 20261206
#: Cases per kind (CSV kinds; moments kinds; NVDP kinds).
PER_CSV, PER_MOMENTS, PER_NVDP = 10, 5, 5


def _table(rng, n=None, d=None):
    n = int(rng.integers(12, 40)) if n is None else n
    d = int(rng.integers(1, 4)) if d is None else d
    scale = 10.0 ** rng.integers(-2, 4)
    X = np.round(rng.normal(size=(n, d)) * scale, int(rng.integers(3, 7)))
    y = np.round(X.sum(axis=1) + rng.normal(size=n), 3)
    names = [f"x{j}" for j in range(d)] + ["y"]
    return names, X, y


def _rows(X, y, fmt=repr):
    return [[fmt(float(v)) for v in row] + [fmt(float(t))] for row, t in zip(X, y)]


def _csv(names, rows, sep=",", eol="\n"):
    return sep.join(names) + eol + "".join(sep.join(r) + eol for r in rows)


def _values(names, X, y):
    return ("values", names[:-1], X.astype(float), y.astype(float))


def _thousands_cell(rng):
    v = int(rng.integers(1, 999)) * 1000 + int(rng.integers(0, 999))
    return f"{v // 1000},{v % 1000:03d}", float(v)


def csv_case(kind: str, rng):
    names, X, y = _table(rng)
    rows = _rows(X, y)
    if kind == "plain":
        return _csv(names, rows).encode(), _values(names, X, y)
    if kind == "crlf":
        return _csv(names, rows, eol="\r\n").encode(), _values(names, X, y)
    if kind == "utf8_bom":
        return b"\xef\xbb\xbf" + _csv(names, rows).encode(), _values(names, X, y)
    if kind == "utf16":
        return _csv(names, rows).encode("utf-16"), _values(names, X, y)
    if kind == "tab":
        return _csv(names, rows, sep="\t").encode(), _values(names, X, y)
    if kind in ("semicolon_decimal_comma", "decimal_comma_settles_thousands_look"):
        # decimals with two digits after the comma: no thousands separator explains them
        X = np.round(rng.normal(size=X.shape) * 50, 2)
        X[np.abs(np.round(X * 100) % 10) == 0] += 0.01  # always two decimals written
        y = np.round(X.sum(axis=1) + rng.normal(size=len(y)), 1) + 0.05
        rows = [[f"{v:.2f}".replace(".", ",") for v in r] + [f"{t:.2f}".replace(".", ",")] for r, t in zip(X, y)]
        X, y = np.array([[float(c.replace(",", ".")) for c in r[:-1]] for r in rows]), np.array(
            [float(r[-1].replace(",", ".")) for r in rows])
        if kind == "decimal_comma_settles_thousands_look":  # 12,000 next to 2,55 in the file: a decimal comma
            cell, _ = _thousands_cell(rng)
            at = int(rng.integers(0, len(rows)))
            rows[at][0] = cell
            X[at, 0] = float(cell.replace(",", "."))
        return _csv(names, rows, sep=";").encode(), _values(names, X, y)
    if kind in ("thousands_semicolon", "thousands_tab", "thousands_negative"):
        sep = "\t" if kind == "thousands_tab" else ";"
        col = int(rng.integers(0, len(names)))
        if rng.integers(0, 2):  # whole numbers elsewhere (the decimal-comma reading is tried), or decimal points
            rows = [[str(int(round(float(c) * 100))) or "0" for c in r] for r in rows]
        ints = rng.integers(1, 999_999, size=len(rows))
        for i, v in enumerate(ints):
            rows[i][col] = (f"{v // 1000},{v % 1000:03d}" if v >= 1000 else str(v))
            if kind == "thousands_negative" and i % 2:
                rows[i][col] = "-" + rows[i][col]
        rows[0][col] = "12,000"
        return _csv(names, rows, sep=sep).encode(), ("error", ["ambiguous", "12,000", "thousands separator",
                                                              "decimal comma"])
    if kind == "thousands_comma_quoted":
        rows[int(rng.integers(0, len(rows)))][0] = '"1,234"'
        return _csv(names, rows).encode(), ("error", ["not numeric", "decimal comma"])
    if kind == "percent":
        rows[int(rng.integers(0, len(rows)))][0] = f"{int(rng.integers(1, 99))}%"
        return _csv(names, rows).encode(), ("error", ["not numeric", "only numeric columns are accepted"])
    if kind == "fortran_exponent":
        rows[int(rng.integers(0, len(rows)))][0] = "1.5D+03"
        return _csv(names, rows).encode(), ("error", ["not numeric", "only numeric columns are accepted"])
    if kind in ("nbsp_thousands", "apostrophe_thousands"):
        rows[int(rng.integers(0, len(rows)))][0] = "1\u00a0234" if kind == "nbsp_thousands" else "1'234"
        return _csv(names, rows).encode(), ("error", ["not numeric"])
    if kind == "mojibake_header":
        names = ["temp\u00e9rature".encode("utf-8").decode("latin-1")] + names[1:]
        return _csv(names, rows).encode(), ("error", ["mojibake", "température", "UTF-8"])
    if kind == "mixed_encoding":
        names = ["temp\u00e9rature"] + names[1:]
        raw = _csv(names, rows).encode()
        return raw + "caf\u00e9".encode("latin-1") + b"\n", ("error", ["mixes two text encodings", "UTF-8"])
    if kind == "double_bom":
        return b"\xef\xbb\xbf\xef\xbb\xbf" + _csv(names, rows).encode(), ("error", ["two byte-order marks"])
    if kind == "bom_inside":
        text = _csv(names, rows)
        cut = text.index("\n") + 1
        return (text[:cut] + "\ufeff" + text[cut:]).encode(), ("error", ["byte-order mark", "U+FEFF"])
    if kind == "replacement_char":
        names = ["temp\ufffdrature"] + names[1:]
        return _csv(names, rows).encode(), ("error", ["replacement character", "U+FFFD"])
    if kind == "excel_sep_semicolon":
        return ("sep=;\n" + _csv(names, rows, sep=";")).encode(), _values(names, X, y)
    if kind == "excel_sep_comma_crlf":
        return ("sep=,\r\n" + _csv(names, rows, eol="\r\n")).encode(), _values(names, X, y)
    if kind == "excel_sep_unknown":
        return ("sep=|\n" + _csv(names, rows, sep="|")).encode(), ("error", ["sep=|", "accepted are ',', ';' and tab"])
    if kind == "semicolon_header_comma_rows":
        if len(names) < 2:
            names, X, y = _table(rng, d=2)
            rows = _rows(X, y)
        return (";".join(names) + "\n" + "".join(",".join(r) + "\n" for r in rows)).encode(), (
            "error", ["header line is ';' (semicolon)-separated", "data rows are ',' (comma)-separated"])
    if kind == "json_as_csv":
        obj = {"columns": names, "rows": [[float(v) for v in r] for r in X.tolist()]}
        text = json.dumps(obj, indent=int(rng.integers(0, 3)) or None)
        return text.encode(), ("error", ["JSON", "not CSV"])
    if kind == "json_array_as_csv":
        return json.dumps(X.tolist()).encode(), ("error", ["JSON", "not CSV"])
    if kind == "long_digits":
        digits = int(rng.integers(161, 800))
        rows[int(rng.integers(0, len(rows)))][0] = "9" * digits
        return _csv(names, rows).encode(), ("error", [f"{digits:,} digits", "at most 160 digits"])
    if kind == "long_row":
        k = int(rng.integers(20_001, 60_000))
        return (_csv(names, rows) + ",".join(["1"] * k) + "\n").encode(), ("error", [f"{k:,} fields",
                                                                             "at most 20,000 fields per row"])
    if kind == "long_field":
        size = int(rng.integers(131_073, 300_000))
        rows[int(rng.integers(0, len(rows)))][0] = "a" * size
        return _csv(names, rows).encode(), ("error", [f"{size:,} characters", "longer than 131,072 characters"])
    if kind == "huge_value":
        rows[int(rng.integers(0, len(rows)))][0] = f"{float(rng.uniform(1.1, 9)):.3f}e{int(rng.integers(151, 308))}"
        return _csv(names, rows).encode(), ("error", ["magnitude above 1e+150", "|value| <= 1e+150"])
    if kind == "exponent_and_sign":
        def fmt(v):
            return f"{float(v):+.6E}"

        rows = [[fmt(v) for v in r] + [fmt(t)] for r, t in zip(X, y)]
        Xv = np.array([[float(fmt(v)) for v in r] for r in X])
        return _csv(names, rows).encode(), _values(names, Xv, np.array([float(fmt(t)) for t in y]))
    if kind == "quoted_numbers":
        return _csv(names, [[f'"{c}"' for c in r] for r in rows]).encode(), _values(names, X, y)
    if kind == "latin1_names":
        names = ["caf\u00e9"] + names[1:]
        return _csv(names, rows).encode("latin-1"), ("values", names[:-1], X.astype(float), y.astype(float))
    raise KeyError(kind)


CSV_KINDS = ("plain", "crlf", "utf8_bom", "utf16", "tab", "semicolon_decimal_comma",
             "decimal_comma_settles_thousands_look", "thousands_semicolon", "thousands_tab", "thousands_negative",
             "thousands_comma_quoted", "percent", "fortran_exponent", "nbsp_thousands", "apostrophe_thousands",
             "mojibake_header", "mixed_encoding", "double_bom", "bom_inside", "replacement_char",
             "excel_sep_semicolon", "excel_sep_comma_crlf", "excel_sep_unknown", "semicolon_header_comma_rows",
             "json_as_csv", "json_array_as_csv", "long_digits", "long_row", "long_field", "huge_value",
             "exponent_and_sign", "quoted_numbers", "latin1_names")


def csv_cases():
    rng = np.random.default_rng(SEED)
    return [(k, f"{k}_{i}.csv", *csv_case(k, rng)) for k in CSV_KINDS for i in range(PER_CSV)]


# ------------------------------------------------------------------------------------------------ moments
def _moments(rng):
    p = int(rng.integers(1, 4))
    n_pub = int(rng.integers(p + 5, 500))
    Z = rng.normal(size=(n_pub, p)) * 10.0 ** rng.integers(-1, 3) + rng.normal(size=p)
    cols = [f"c{j}" for j in range(p)]
    return {"columns": cols, "n_pub": n_pub, "mean": Z.mean(axis=0).tolist(), "second_moment": (Z.T @ Z / n_pub).tolist()}


def _csv_moments(d):
    lines = ["second_moment," + ",".join(d["columns"]), "n_pub," + str(d["n_pub"]) + "," * (len(d["columns"]) - 1),
             "mean," + ",".join(repr(v) for v in d["mean"])]
    lines += [c + "," + ",".join(repr(v) for v in row) for c, row in zip(d["columns"], d["second_moment"])]
    return ("\n".join(lines) + "\n").encode()


def moments_case(kind: str, rng):
    d = _moments(rng)
    good = ("values", d)
    j = lambda o: json.dumps(o).encode()  # noqa: E731
    if kind == "good_json":
        return "m.json", j(d), good
    if kind == "good_json_bom_crlf":
        return "m.json", b"\xef\xbb\xbf" + json.dumps(d, indent=1).replace("\n", "\r\n").encode(), good
    if kind == "good_csv":
        return "m.csv", _csv_moments(d), good
    if kind == "columns_null":
        return "m.json", j({**d, "columns": None}), ("error", ["columns must be a non-empty list"])
    if kind == "columns_dict":
        return "m.json", j({**d, "columns": {"a": 1}}), ("error", ["columns must be a non-empty list"])
    if kind == "columns_numbers":
        return "m.json", j({**d, "columns": list(range(len(d["columns"])))}), ("error", ["columns must be"])
    if kind == "mean_dict":
        return "m.json", j({**d, "mean": {}}), ("error", ["mean must be a list of"])
    if kind == "mean_strings":
        return "m.json", j({**d, "mean": ["1"] * len(d["columns"])}), ("error", ["mean must be a list of"])
    if kind == "mean_short":
        return "m.json", j({**d, "mean": d["mean"] + [0.0]}), ("error", ["mean must be a list of"])
    if kind == "matrix_not_square":
        return "m.json", j({**d, "second_moment": [r + [0.0] for r in d["second_moment"]]}), (
            "error", ["second_moment must be a list of"])
    if kind == "matrix_asymmetric":
        M = np.array(d["second_moment"]) + np.eye(len(d["columns"]))
        M = np.vstack([M, 2 * M[-1:]])[: len(d["columns"])]
        if len(d["columns"]) == 1:
            return "m.json", j({**d, "second_moment": [[-1.0]]}), ("error", ["negative diagonal"])
        M[0, -1] += 5 * abs(M).max()
        return "m.json", j({**d, "second_moment": M.tolist()}), ("error", ["not symmetric", "accepted"])
    if kind == "not_psd":
        p = len(d["columns"])
        M = -np.eye(p) if p == 1 else np.ones((p, p)) * 10 - np.eye(p) * 20
        return "m.json", j({**d, "second_moment": M.tolist()}), ("error", ["second_moment"])
    if kind == "nan_token":
        return "m.json", j(d).replace(repr(d["mean"][0]).encode(), b"NaN", 1), ("error", ["NaN is not a number"])
    if kind == "infinity_token":
        return "m.json", j(d).replace(repr(d["mean"][0]).encode(), b"-Infinity", 1), ("error", ["not a number"])
    if kind == "overflow_literal":
        return "m.json", j(d).replace(repr(d["mean"][0]).encode(), b"1e400", 1), ("error", ["NaN or infinite"])
    if kind == "entry_1e308":
        M = np.array(d["second_moment"])
        M[0, 0] = 1e308
        return "m.json", j({**d, "second_moment": M.tolist()}), ("error", ["magnitude", "<= 1e+100"])
    if kind == "mean_1e200":
        return "m.json", j({**d, "mean": [1e200] * len(d["columns"])}), ("error", ["magnitude", "<= 1e+50"])
    if kind == "n_pub_1e300":
        return "m.json", j({**d, "n_pub": 1e300}), ("error", ["n_pub", "<= 1,000,000,000"])
    if kind == "n_pub_fraction":
        return "m.json", j({**d, "n_pub": 10.5}), ("error", ["n_pub must be an integer"])
    if kind == "n_pub_bool":
        return "m.json", j({**d, "n_pub": True}), ("error", ["n_pub must be an integer"])
    if kind == "n_pub_one":
        return "m.json", j({**d, "n_pub": 1}), ("error", ["n_pub must be >"])
    if kind == "n_pub_string":
        return "m.json", j({**d, "n_pub": "many"}), ("error", ["n_pub must be an integer"])
    if kind == "deep_json":
        depth = int(rng.integers(1000, 100_000))
        return "m.json", b"[" * depth + b"]" * depth, ("error", [f"{depth:,} deep", "at most 16 levels"])
    if kind == "long_field":
        size = int(rng.integers(131_073, 400_000))
        return "m.json", j({**d, "columns": ["a" * size] + d["columns"][1:]}), ("error", [f"{size:,} characters",
                                                                                         "131,072"])
    if kind == "long_name":
        return "m.json", j({**d, "columns": ["n" * 500] + d["columns"][1:]}), ("error", ["at most 200 characters"])
    if kind == "non_utf8":
        return "m.json", j(d)[:-1] + b', "note": "caf\xe9"}', ("error", ["not UTF-8", "byte"])
    if kind == "nul_bytes":
        return "m.json", j(d) + b"\x00\x00", ("error", ["NUL"])
    if kind == "empty":
        return "m.json", b"  \n", ("error", ["empty"])
    if kind == "json_list":
        return "m.json", j([d]), ("error", ["must be an object"])
    if kind == "truncated":
        raw = j(d)
        return "m.json", raw[: int(rng.integers(1, len(raw) - 1))], ("error", ["not valid JSON"])
    if kind == "csv_n_pub_inf":
        return "m.csv", _csv_moments({**d, "n_pub": "inf"}), ("error", ["n_pub must be an integer"])
    if kind == "csv_non_numeric":
        raw = _csv_moments(d).replace(b"mean,", b"mean,abc", 1)
        return "m.csv", raw, ("error", ["non-numeric"])
    if kind == "duplicate_columns":
        if len(d["columns"]) == 1:
            d = {**d, "columns": ["c0", "c0"], "mean": d["mean"] * 2, "n_pub": d["n_pub"] + 5,
                 "second_moment": [[d["second_moment"][0][0]] * 2] * 2}
        else:
            d = {**d, "columns": [d["columns"][0]] * len(d["columns"])}
        return "m.json", j(d), ("error", ["unique"])
    raise KeyError(kind)


MOMENTS_KINDS = ("good_json", "good_json_bom_crlf", "good_csv", "columns_null", "columns_dict", "columns_numbers",
                 "mean_dict", "mean_strings", "mean_short", "matrix_not_square", "matrix_asymmetric", "not_psd",
                 "nan_token", "infinity_token", "overflow_literal", "entry_1e308", "mean_1e200", "n_pub_1e300",
                 "n_pub_fraction", "n_pub_bool", "n_pub_one", "n_pub_string", "deep_json", "long_field",
                 "long_name", "non_utf8", "nul_bytes", "empty", "json_list", "truncated", "csv_n_pub_inf",
                 "csv_non_numeric")


def moments_cases():
    rng = np.random.default_rng(SEED + 1)
    out = []
    for k in MOMENTS_KINDS:
        for i in range(PER_MOMENTS):
            name, raw, expect = moments_case(k, rng)
            stem, ext = name.rsplit(".", 1)
            out.append((k, f"{k}_{i}.{ext}", raw, expect))
    return out


# ------------------------------------------------------------------------------------------------ NVDP texts
_WORDS = ("good", "bad", "slow", "fast", "great", "awful", "fine", "meh", "loved", "hated", "really", "not")


def _texts(rng, n=40, comma=False):
    texts, labels = [], []
    for i in range(n):
        words = " ".join(rng.choice(_WORDS, size=int(rng.integers(2, 6))))
        texts.append(f"{words}, {rng.choice(_WORDS)} {i}" if comma else f"{words} {i}")
        labels.append("pos" if i % 2 else "neg")
    return texts, labels


def _q(t):
    return '"' + t.replace('"', '""') + '"'


def nvdp_case(kind: str, rng):
    if kind == "unquoted_comma":
        texts, labels = _texts(rng, comma=True)
        raw = "text,label\n" + "".join(f"{t},{lab}\n" for t, lab in zip(texts, labels))
        return raw.encode(), ("error", ["must be in double quotes", "do not have 2 fields"])
    if kind == "quoted_comma":
        texts, labels = _texts(rng, comma=True)
        raw = "text,label\n" + "".join(f"{_q(t)},{lab}\n" for t, lab in zip(texts, labels))
        return raw.encode(), ("values", texts, labels)
    if kind == "quotes_inside":
        texts, labels = _texts(rng)
        texts = [f'she said "{t}"' for t in texts]
        raw = "text,label\n" + "".join(f"{_q(t)},{lab}\n" for t, lab in zip(texts, labels))
        return raw.encode(), ("values", texts, labels)
    if kind == "semicolon_with_commas":
        texts, labels = _texts(rng, comma=True)
        raw = "text;label\n" + "".join(f"{t};{lab}\n" for t, lab in zip(texts, labels))
        return raw.encode(), ("values", texts, labels)
    if kind == "mojibake_header":
        texts, labels = _texts(rng)
        raw = "text,cl\u00c3\u00a9\n" + "".join(f"{t},{lab}\n" for t, lab in zip(texts, labels))
        return raw.encode(), ("error", ["mojibake"])
    if kind == "double_bom":
        texts, labels = _texts(rng)
        raw = "text,label\n" + "".join(f"{t},{lab}\n" for t, lab in zip(texts, labels))
        return b"\xef\xbb\xbf\xef\xbb\xbf" + raw.encode(), ("error", ["two byte-order marks"])
    if kind == "json":
        texts, labels = _texts(rng)
        return json.dumps([{"text": t, "label": lab} for t, lab in zip(texts, labels)]).encode(), ("error", ["JSON"])
    if kind == "mixed_encoding":
        texts, labels = _texts(rng)
        raw = "text,label\n" + "".join(f"{t} caf\u00e9,{lab}\n" for t, lab in zip(texts, labels))
        return raw.encode() + "na\u00efve text 99,pos\n".encode("latin-1"), ("error", ["mixes two text encodings"])
    raise KeyError(kind)


NVDP_KINDS = ("unquoted_comma", "quoted_comma", "quotes_inside", "semicolon_with_commas", "mojibake_header",
              "double_bom", "json", "mixed_encoding")


def nvdp_cases():
    rng = np.random.default_rng(SEED + 2)
    return [(k, f"{k}_{i}.csv", *nvdp_case(k, rng)) for k in NVDP_KINDS for i in range(PER_NVDP)]


if __name__ == "__main__":  # write the files out
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "hostile_round4")
    for sub, cases in (("csv", csv_cases()), ("moments", moments_cases()), ("nvdp", nvdp_cases())):
        (out / sub).mkdir(parents=True, exist_ok=True)
        for _, name, raw, _ in cases:
            (out / sub / name).write_bytes(raw)
    print(f"wrote {len(csv_cases())} CSVs, {len(moments_cases())} moments files, {len(nvdp_cases())} NVDP texts to {out}")
