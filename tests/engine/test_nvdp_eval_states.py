"""The shipped encoder states of the NVDP page's evaluation sentences (engine.nvdp.eval_states)."""

import shutil
import warnings

import numpy as np
import pytest
import torch

import engine.nvdp.encoder as enc
from engine.nvdp import eval_states as E
from engine.nvdp.bundled import ASSET_DIR
from engine.nvdp.encoder import TokenStates, _cache_key
from engine.nvdp.explorer_models import ExploreSettings, select_sentences

SENTS = ["a first sentence", "the second one", "and a third"]


def _states(lengths, L=6, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    mask = torch.arange(L).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    s = torch.randn(len(lengths), L, d, generator=g).to(torch.float16).float()  # float16-exact, as the encoder
    return TokenStates(s, mask, _cache_key(SENTS[: len(lengths)], L))


def test_round_trip_keeps_real_tokens_bit_for_bit_and_zeros_padding(tmp_path):
    st = _states([2, 6, 3])
    E.save_eval_states(st, tmp_path)
    back = E.load_eval_states(SENTS, max_length=6, directory=tmp_path)
    assert back.key == st.key and torch.equal(back.mask, st.mask)
    assert torch.equal(back.states[st.mask], st.states[st.mask])
    assert torch.count_nonzero(back.states[~st.mask]) == 0
    first = (tmp_path / E.STATES_FILE).read_bytes()
    E.save_eval_states(st, tmp_path)  # deterministic file
    assert (tmp_path / E.STATES_FILE).read_bytes() == first


def test_refuses_what_it_cannot_store(tmp_path):
    st = _states([2, 6, 3])
    with pytest.raises(ValueError, match="key is empty"):
        E.save_eval_states(TokenStates(st.states, st.mask, ""), tmp_path)
    with pytest.raises(ValueError, match="float16"):
        E.save_eval_states(TokenStates(st.states + 1e-4, st.mask, st.key), tmp_path)
    holes = st.mask.clone()
    holes[1, 2] = False
    with pytest.raises(ValueError, match="prefix"):
        E.save_eval_states(TokenStates(st.states, holes, st.key), tmp_path)


def _encode_spy(monkeypatch):
    calls = []

    def fake(sentences, *, max_length, progress=None, **kw):
        calls.append(list(sentences))
        return "encoded"

    monkeypatch.setattr(enc, "encode_sentences", fake)
    return calls


def test_missing_file_encodes_without_warning(tmp_path, monkeypatch):
    calls = _encode_spy(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert E.load_or_encode(SENTS, max_length=6, directory=tmp_path) == "encoded"
    assert calls == [SENTS]


@pytest.mark.parametrize("damage", ["byte", "sums", "sentences", "meta"])
def test_unusable_file_warns_and_encodes(tmp_path, monkeypatch, damage):
    E.save_eval_states(_states([2, 6, 3]), tmp_path)
    sents = SENTS
    if damage == "byte":  # one flipped byte in the states
        p = tmp_path / E.STATES_FILE
        b = bytearray(p.read_bytes())
        b[-5] ^= 1
        p.write_bytes(bytes(b))
    elif damage == "sums":
        (tmp_path / E.SUMS_FILE).unlink()
    elif damage == "sentences":
        sents = ["another", "set of", "sentences"]
    else:  # metadata edited and re-summed: the key no longer matches
        (tmp_path / E.META_FILE).write_text((tmp_path / E.META_FILE).read_text().replace('"n": "3"', '"n": "4"'))
        import hashlib

        lines = [f"{hashlib.sha256((tmp_path / n).read_bytes()).hexdigest()}  {n}\n" for n in (E.STATES_FILE, E.META_FILE)]
        (tmp_path / E.SUMS_FILE).write_text("".join(lines))
    calls = _encode_spy(monkeypatch)
    with pytest.warns(UserWarning, match="encoding instead"):
        assert E.load_or_encode(sents, max_length=6, directory=tmp_path) == "encoded"
    assert calls == [sents]


def test_shipped_states_match_the_default_evaluation_sentences(monkeypatch):
    settings = ExploreSettings()
    sentences, _, _, _, te = select_sentences(settings)
    test_sents = [sentences[i] for i in te]
    monkeypatch.setattr(enc, "_load_model", lambda: pytest.fail("the encoder was loaded"))
    st = E.load_or_encode(test_sents, max_length=settings.max_length, directory=ASSET_DIR)
    assert isinstance(st, TokenStates) and st.n == 500 and st.states.shape == (500, 48, 384)
    assert st.key == _cache_key(test_sents, 48)  # the same key as an encoding: the same model cache folders
    assert 3 <= int(st.mask.sum(1).min()) and int(st.mask.sum(1).max()) <= 48


def test_bundled_first_visit_encodes_nothing(monkeypatch, tmp_path):
    from engine.nvdp.bundled import load_bundled

    monkeypatch.setenv("NVDP_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(enc, "_load_model", lambda: pytest.fail("the encoder was loaded"))
    data, models = load_bundled(ExploreSettings())
    states, y = data.split("test")
    assert states.n == len(y) == 500 and set(models) == {"clipped", "unclipped"}
    assert not any(tmp_path.iterdir())  # nothing encoded, nothing cached


@pytest.mark.slow
def test_shipped_states_equal_a_fresh_encoding_and_give_the_same_numbers(tmp_path, monkeypatch):
    """A fresh encoding (this machine's threads) equals the shipped values at every real token, and the
    page's numbers (bounds, BDP, accuracy) are the same with the encoder's padding or zeros there."""
    from engine.nvdp import explore as X

    settings = ExploreSettings()
    sentences, _, _, _, te = select_sentences(settings)
    monkeypatch.setenv("NVDP_CACHE_DIR", str(tmp_path))
    data, models = X.load_or_train(settings)
    shipped, y = data.split("test")
    fresh = enc.encode_sentences([sentences[i] for i in te], max_length=48, use_cache=False)
    assert torch.equal(fresh.mask, shipped.mask)
    assert torch.equal(fresh.states[fresh.mask], shipped.states[shipped.mask])
    for which in ("clipped", "unclipped"):
        clip = settings.train_clip
        a = X.posthoc_evaluate(models[which], shipped, y, clip, seed=0)
        b = X.posthoc_evaluate(models[which], fresh, y, clip, seed=0)
        assert a.accuracy == b.accuracy
        assert a.rd_paper.max == b.rd_paper.max and a.rd_paper.mean == b.rd_paper.mean
        assert a.rd_exact.max == b.rd_exact.max and a.bdp_paper.epsilon == b.bdp_paper.epsilon


def test_stored_split_is_the_bundle_split_and_a_changed_index_is_refused(tmp_path):
    import json

    recorded = json.loads((ASSET_DIR / "settings.json").read_text())["data"]
    split = E.load_split(ASSET_DIR, recorded)
    _, _, tr, va, te = select_sentences(ExploreSettings())
    assert split is not None and all(np.array_equal(a, b) for a, b in zip(split, (tr, va, te)))
    shutil.copytree(ASSET_DIR, tmp_path / "a")
    meta = json.loads((tmp_path / "a" / E.META_FILE).read_text())
    meta["split"]["test"][0] += 1
    (tmp_path / "a" / E.META_FILE).write_text(json.dumps(meta))
    assert E.load_split(tmp_path / "a", recorded) is None  # the checksum of the JSON fails
    import hashlib

    sums = "".join(f"{hashlib.sha256((tmp_path / 'a' / n).read_bytes()).hexdigest()}  {n}\n"
                   for n in (E.STATES_FILE, E.META_FILE))
    (tmp_path / "a" / E.SUMS_FILE).write_text(sums)
    assert E.load_split(tmp_path / "a", recorded) is None  # re-summed, but the index hash differs


def test_first_visit_imports_neither_the_encoder_nor_scikit_learn(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from engine.nvdp.bundled import load_bundled; from engine.nvdp.explorer_models import "
            "ExploreSettings; d, m = load_bundled(ExploreSettings()); assert d.split('test')[0].n == 500; "
            "print(sorted({n.split('.')[0] for n in sys.modules} & {'sklearn', 'transformers'}))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=ASSET_DIR.parents[1], env={**__import__("os").environ, "NVDP_CACHE_DIR": str(tmp_path)})
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "[]"
