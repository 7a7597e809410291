"""The loader of State's released ST checkpoints, on a tiny run directory in their format
(config.yaml, var_dims.pkl, pert_onehot_map.pt, checkpoints/final.ckpt as arc-state's
``state tx train`` writes them and ``state tx infer`` reads them)."""

import pickle

import lightning
import pytest
import torch

from repro.st_reliability.model import ModelConfig, build_model
from repro.st_reliability.released import load_released

CFG = ModelConfig(hidden=16, layers=2, heads=2, intermediate=32, cell_set_len=8)
G, NAMES = 10, ["non-targeting", "KD_A", "KD_B", "KD_C"]


def write_run(path, model, names):
    (path / "checkpoints").mkdir(parents=True)
    (path / "config.yaml").write_text("model:\n  name: state\n")
    with open(path / "var_dims.pkl", "wb") as f:
        pickle.dump({"pert_dim": len(names), "gene_dim": G, "hvg_dim": G, "output_dim": G}, f)
    onehot = torch.nn.functional.one_hot(torch.arange(len(names)), len(names)).float()
    torch.save({n: onehot[i] for i, n in enumerate(names)}, path / "pert_onehot_map.pt")
    torch.save(
        {
            "state_dict": model.state_dict(),
            "hyper_parameters": dict(model.hparams),
            "pytorch-lightning_version": lightning.__version__,
        },
        path / "checkpoints" / "final.ckpt",
    )


def test_released_run_directory_loads_the_same_model(tmp_path):
    torch.manual_seed(0)
    model = build_model(CFG, input_dim=G, pert_dim=len(NAMES), gene_space=True).eval()
    shuffled = [NAMES[i] for i in (2, 0, 3, 1)]  # dict order is not the one-hot order
    write_run(tmp_path, model, NAMES)
    onehot = torch.load(tmp_path / "pert_onehot_map.pt", weights_only=True)
    torch.save({n: onehot[n] for n in shuffled}, tmp_path / "pert_onehot_map.pt")
    released = load_released(tmp_path)
    assert released.vocabulary == NAMES
    assert released.var_dims["pert_dim"] == len(NAMES)
    batch = {
        "ctrl_cell_emb": torch.rand(2 * CFG.cell_set_len, G),
        "pert_emb": torch.nn.functional.one_hot(
            torch.tensor([1, 2]).repeat_interleave(CFG.cell_set_len), len(NAMES)
        ).float(),
    }
    with torch.no_grad():
        torch.testing.assert_close(released.model(batch), model(batch))
        other = build_model(CFG, input_dim=G, pert_dim=len(NAMES), gene_space=True).eval()
        assert not torch.allclose(other(batch), model(batch), atol=1e-4)  # the test can fail


def test_released_loader_names_what_is_missing_or_inconsistent(tmp_path):
    model = build_model(CFG, input_dim=G, pert_dim=len(NAMES), gene_space=True)
    write_run(tmp_path / "run", model, NAMES)
    (tmp_path / "run" / "var_dims.pkl").unlink()
    with pytest.raises(FileNotFoundError, match="var_dims.pkl"):
        load_released(tmp_path / "run")
    write_run(tmp_path / "bad", model, NAMES)
    with open(tmp_path / "bad" / "var_dims.pkl", "wb") as f:
        pickle.dump({"pert_dim": 7}, f)
    with pytest.raises(ValueError, match="pert_dim"):
        load_released(tmp_path / "bad")
