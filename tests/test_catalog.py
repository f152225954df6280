"""The shipped catalogs: every entry loads, every number has a source, lookups work."""

from __future__ import annotations

import dataclasses
import json

import pytest
from estimates import estimate

from roofline.catalog import all_models, all_platforms, builtin_dir, load_model, load_platform
from roofline.errors import UnknownNameError
from roofline.files.reading import read_toml
from roofline.spec.sourced import Sourced

PLATFORMS = ["icx", "spr", "emr", "gnr", "genoa", "turin", "milan", "emr-16vcpu"]
MODELS = ["bert-base", "bert-large", "distilbert-base", "xlm-roberta-base", "xlm-roberta-large"]


def test_catalog_contents():
    assert {p.name for p in all_platforms()} >= set(PLATFORMS)
    assert {m.name for m in all_models()} >= set(MODELS)


def _sourced_values(obj, path=""):
    if isinstance(obj, Sourced):
        yield path, obj
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            yield from _sourced_values(getattr(obj, f.name), f"{path}.{f.name}".strip("."))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _sourced_values(v, f"{path}.{k}")


@pytest.mark.parametrize("name", PLATFORMS)
def test_every_platform_number_is_sourced(name):
    p = load_platform(name)
    values = dict(_sourced_values(p))
    assert len(values) >= 8
    for field, s in values.items():
        assert s.known or s.unknown, field
        if s.known:
            assert s.kind and s.source and len(s.source) > 10, field
    assert p.paths_for("fp32") and p.paths_for("int8")


@pytest.mark.parametrize("name", PLATFORMS)
def test_every_platform_estimates_every_model(name):
    for model in MODELS:
        r = estimate(load_platform(name), load_model(model), seq_len=128)
        assert r.speedups and all(s.end_to_end_ceiling > 1 for s in r.speedups)


def test_native_bf16_decides_default_precisions():
    assert list(estimate(load_platform("icx"), load_model("bert-base")).precisions) == ["fp32", "int8-static"]
    assert list(estimate(load_platform("spr"), load_model("bert-base")).precisions) == ["fp32", "bf16", "int8-static"]


def test_bf16_without_native_path_falls_back_to_fp32_compute():
    r = estimate(load_platform("icx"), load_model("bert-base"), precisions=["bf16"])
    p = r.precisions["bf16"]
    assert p.compute_path == "fp32-avx512" and not p.native
    assert p.element_bytes == {"x": 2.0, "w": 2.0, "y": 2.0}
    assert any("no native BF16" in n for n in p.notes)


def test_aliases_and_paths(tmp_path):
    assert load_platform("granite-rapids").name == "gnr"
    assert load_platform("GNR").name == "gnr"
    assert load_model("bert-large-uncased").name == "bert-large"
    path = builtin_dir("platforms") / "icx.toml"
    assert load_platform(str(path)).name == "icx"


def test_unknown_names_suggest_the_closest():
    with pytest.raises(UnknownNameError, match="did you mean: gnr"):
        load_platform("gnrr")
    with pytest.raises(UnknownNameError, match="bert-large"):
        load_model("bert-larg")


def test_user_catalog_folder_is_searched_first(tmp_path, monkeypatch):
    data = read_toml(builtin_dir("platforms") / "icx.toml")
    text = (builtin_dir("platforms") / "icx.toml").read_text().replace('name = "icx"', 'name = "my-icx"', 1)
    (tmp_path / "my-icx.toml").write_text(text)
    monkeypatch.setenv("ROOFLINE_PLATFORMS", str(tmp_path))
    assert load_platform("my-icx").cores_per_socket.value == data["cores_per_socket"]["value"]


HF_BERT_LARGE = {
    "architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": 1024, "intermediate_size": 4096,
    "num_hidden_layers": 24, "num_attention_heads": 16, "vocab_size": 30522, "max_position_embeddings": 512,
    "type_vocab_size": 2, "hidden_act": "gelu", "attention_probs_dropout_prob": 0.1,
}


def test_hugging_face_config_gives_the_same_gemms(tmp_path):
    cfg = tmp_path / "bert-large-uncased" / "config.json"
    cfg.parent.mkdir()
    cfg.write_text(json.dumps(HF_BERT_LARGE))
    from_json = load_model(str(cfg))
    assert from_json.name == "bert-large-uncased" and from_json.family == "encoder"
    a = estimate(load_platform("icx"), from_json)
    b = estimate(load_platform("icx"), load_model("bert-large"))
    assert a.precisions["int8-static"].gemms == b.precisions["int8-static"].gemms


def test_distilbert_config_keys(tmp_path):
    cfg = tmp_path / "distil.json"
    cfg.write_text(json.dumps({"model_type": "distilbert", "dim": 768, "hidden_dim": 3072, "n_layers": 6,
                               "n_heads": 12, "vocab_size": 30522, "max_position_embeddings": 512,
                               "activation": "gelu"}))
    m = load_model(str(cfg))
    catalog = load_model("distilbert-base")
    for f in ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads"):
        assert getattr(m, f) == getattr(catalog, f)


def test_decoder_config_gqa(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
                               "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
                               "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 128256,
                               "max_position_embeddings": 131072, "hidden_act": "silu",
                               "tie_word_embeddings": True}))
    m = load_model(str(cfg))
    assert m.family == "decoder" and m.kv_heads == 8 and m.gated_mlp and m.tie_word_embeddings


@pytest.mark.parametrize("name", PLATFORMS)
def test_platform_toml_round_trip(name, tmp_path):
    from roofline.catalog.write import platform_toml

    p = load_platform(name)
    path = tmp_path / f"{name}-copy.toml"
    path.write_text(platform_toml(p, header="a copy\nfor the test"))
    assert load_platform(str(path)) == p


def test_an_unknown_name_says_when_the_users_catalog_folder_is_not_there(tmp_path, monkeypatch):
    """ROOFLINE_PLATFORMS / ROOFLINE_MODELS naming something that is not a folder is the likely reason a
    user's own entry is unknown: the one-line error says so."""
    from roofline.catalog import find_file

    monkeypatch.setenv("ROOFLINE_PLATFORMS", str(tmp_path / "missing"))
    with pytest.raises(UnknownNameError, match="ROOFLINE_PLATFORMS names .*missing, which is not a folder"):
        find_file("platforms", "my-cpu")
    monkeypatch.setenv("ROOFLINE_PLATFORMS", str(tmp_path))  # a folder: nothing to say about it
    with pytest.raises(UnknownNameError) as e:
        find_file("platforms", "my-cpu")
    assert "ROOFLINE_PLATFORMS" not in str(e.value)
