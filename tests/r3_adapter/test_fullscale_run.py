"""Full-scale steps on local fixtures: a 7-Scenes-format archive made here, ground truth of
pairs against closed forms, DUSt3R's loss, the raw low-light model, and adaptation plus
evaluation end to end on the local DUSt3R- and VGGT-named trees."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import PIL.Image
import pytest
import torch

from repro.r3_adapter.fullrun import run_full, split_pairs
from repro.r3_adapter.fullscale import FullAdaptConfig, confidence_loss
from repro.r3_adapter.sevenscenes import RawLowLight, make_pairs, pair_targets, read_frames
from tests.r3_adapter.trees import TinyDUSt3R, TinyVGGT

NATIVE = (6, 8)  # rows, columns of the fixture frames


def _png(array) -> bytes:
    buffer = io.BytesIO()
    PIL.Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


def _pose(tx: float) -> np.ndarray:
    pose = np.eye(4)
    pose[0, 3] = tx
    return pose


def write_scene(path, frames=6, depth_mm=2000, invalid=(0, 0), sequences=1):
    """A 7-Scenes-format archive: <scene>/seq-XX.zip with frames moving along x."""
    rng = np.random.default_rng(0)
    with zipfile.ZipFile(path, "w") as outer:
        for k in range(1, sequences + 1):
            inner = io.BytesIO()
            with zipfile.ZipFile(inner, "w") as seq:
                for i in range(frames):
                    stem = f"seq-{k:02d}/frame-{i:06d}"
                    color = rng.integers(0, 255, (*NATIVE, 3), dtype=np.uint8)
                    depth = np.full(NATIVE, depth_mm, dtype=np.uint16)
                    depth[invalid] = 65535
                    seq.writestr(f"{stem}.color.png", _png(color))
                    seq.writestr(f"{stem}.depth.png", _png(depth))
                    pose = "\n".join(" ".join(map(str, r)) for r in _pose(0.01 * i))
                    seq.writestr(f"{stem}.pose.txt", pose)
            outer.writestr(f"chess/seq-{k:02d}.zip", inner.getvalue())
    return path


def test_frames_read_with_metric_depth_and_poses(tmp_path):
    frames = read_frames(str(write_scene(tmp_path / "chess.zip")))["seq-01"]
    assert len(frames) == 6 and frames[0]["color"].shape == (*NATIVE, 3)
    # registered to the colour camera: the invalid corner stays empty, the plane stays ≈ 2 m
    assert frames[0]["depth"][0, 0] == 0.0
    assert frames[0]["depth"][1, 1] == pytest.approx(2.0, abs=0.02)
    np.testing.assert_allclose(frames[3]["pose"], _pose(0.03))
    with zipfile.ZipFile(tmp_path / "empty.zip", "w") as z:
        z.writestr("readme.txt", "no sequences")
    with pytest.raises(ValueError, match="no seq-XX.zip"):
        read_frames(str(tmp_path / "empty.zip"))


def test_pairs_are_resized_with_scaled_intrinsics_and_relative_poses(tmp_path):
    arrays = make_pairs([str(write_scene(tmp_path / "chess.zip"))], (3, 4), pairs=3, frame_gap=2)
    assert arrays["image1"].shape == (3, 3, 4, 3) and arrays["depth2"].shape == (3, 3, 4)
    np.testing.assert_allclose(arrays["K"][0, 0], 525.0 * 4 / 640)  # the colour camera
    assert list(arrays["sequence"]) == ["chess/seq-01"] * 3
    for T in arrays["T21"]:  # frame i+2 is 2 cm further along x: view-1 points move by -2 cm
        np.testing.assert_allclose(T, _pose(-0.02), atol=1e-12)


def _naive_registration(depth):
    """The benchmarks' setup loop (depth pixel -> 3D -> colour pixel, nearest wins)."""
    from repro.r3_adapter.sevenscenes import DEPTH_TO_RGB, camera

    h, w = depth.shape
    K_d, K_c = camera(585.0, (h, w)), camera(525.0, (h, w))
    out = np.full((h, w), np.inf)
    for r in range(h):
        for c in range(w):
            z = depth[r, c]
            if z <= 0:
                continue
            p = np.array([(c - K_d[0, 2]) / K_d[0, 0] * z, (r - K_d[1, 2]) / K_d[1, 1] * z, z, 1])
            x, y, zc = (DEPTH_TO_RGB @ p)[:3]
            u, v = round(x / zc * K_c[0, 0] + K_c[0, 2]), round(y / zc * K_c[1, 1] + K_c[1, 2])
            if 0 <= u < w and 0 <= v < h:
                out[v, u] = min(out[v, u], zc)
    return np.where(np.isfinite(out), out, 0)


def test_depth_is_registered_to_the_colour_camera_as_the_benchmarks_do():
    from repro.r3_adapter.sevenscenes import register_depth

    rng = np.random.default_rng(0)
    depth = rng.uniform(0.5, 4.0, (48, 64)) * (rng.uniform(size=(48, 64)) > 0.1)
    got = register_depth(depth.astype(np.float32))
    np.testing.assert_allclose(got, _naive_registration(depth.astype(np.float32)), atol=1e-5)
    # the colour camera is narrower (f 525 vs 585): a plane fills it but for a thin border
    plane = register_depth(np.full((48, 64), 2.0, np.float32))
    assert (plane[5:-5, 5:-5] > 1.9).all() and plane[5:-5, 5:-5].std() < 0.02


def test_pair_targets_match_a_closed_form_for_a_sideways_step():
    # fronto-parallel plane at depth 2, f = 4 px; view 2 moved by +0.5 m in x: the point
    # seen at view-2 pixel u is at view-1 pixel u + f·0.5/2 = u + 1
    H, W = 4, 6
    K = torch.tensor([[4.0, 0, 2.5], [0, 4.0, 1.5], [0, 0, 1]])
    depth = torch.full((1, H, W), 2.0)
    T21 = torch.eye(4)[None].clone()
    T21[0, 0, 3] = -0.5
    t = pair_targets(depth, depth.clone(), K, T21, patch=1)
    cols = torch.arange(H * W) % W
    want = torch.where(cols + 1 < W, torch.arange(H * W) + 1, -1)
    torch.testing.assert_close(t["match"][0], want)
    torch.testing.assert_close(
        t["points2"][0] - t["points1"][0], torch.tensor([0.5, 0, 0]).expand(H, W, 3)
    )
    occluded = depth.clone()
    occluded[0, :, 3] = 1.0  # view 1 sees something nearer in column 3: no correspondence
    t = pair_targets(occluded, depth, K, T21, patch=1)
    assert (t["match"][0].reshape(H, W)[:, 2] == -1).all()


def test_confidence_loss_is_scale_invariant_and_closed_form_at_the_truth():
    g = torch.Generator().manual_seed(0)
    truth = [torch.randn(2, 3, 4, 3, generator=g) for _ in range(2)]
    valid = [torch.ones(2, 3, 4, dtype=torch.bool)] * 2
    conf = [torch.full((2, 3, 4), 2.0)] * 2
    at_truth = confidence_loss(truth, conf, truth, valid)
    assert at_truth.item() == pytest.approx(-2 * 0.2 * np.log(2.0))  # two views
    pred = [p + 0.1 * torch.randn(p.shape, generator=g) for p in truth]
    scaled = [3.0 * p for p in pred]
    torch.testing.assert_close(
        confidence_loss(scaled, conf, truth, valid), confidence_loss(pred, conf, truth, valid)
    )


def test_raw_low_light_darkens_with_severity_and_is_reproducible():
    rgb = torch.rand(2, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    shift = RawLowLight()
    assert torch.equal(shift.apply(rgb, 0, torch.Generator()), rgb)
    means = [shift.apply(rgb, s, torch.Generator().manual_seed(0)).mean().item() for s in (1, 2, 3)]
    assert rgb.mean() > means[0] > means[1] > means[2]
    again = shift.apply(rgb, 2, torch.Generator().manual_seed(0))
    torch.testing.assert_close(again, shift.apply(rgb, 2, torch.Generator().manual_seed(0)))


@pytest.mark.parametrize("backbone", ["dust3r", "vggt"])
@pytest.mark.parametrize("method", ["frozen", "lora", "relational"])
def test_adapt_and_evaluate_end_to_end_on_the_trees(tmp_path, backbone, method):
    arrays = make_pairs(
        [str(write_scene(tmp_path / "chess.zip", frames=5, sequences=3))],
        (3, 4),
        pairs=8,
        frame_gap=1,
    )
    spec = {
        "frozen": {},
        "lora": {"adapters": {"lora": {"rank": 2}}},
        "relational": {"adapters": {"relational": {"candidates": 3, "dim": 4}}},
    }[method]
    tree = TinyDUSt3R if backbone == "dust3r" else TinyVGGT

    def load():
        torch.manual_seed(0)
        return tree((3, 4)).eval()

    cfg = FullAdaptConfig(steps=3, batch_size=2, lrs=(1e-3, 1e-2))
    out = run_full(
        load,
        backbone,
        spec,
        arrays,
        cfg,
        seed=0,
        grid=(3, 4),
        patch=1,
        shift=RawLowLight(),
        severities=(0, 2),
        device="cpu",
    )
    assert out["lr"] in cfg.lrs and (out["n_trainable"] > 0) == (method != "frozen")
    assert len(out["losses"]) == (0 if method == "frozen" else 3)
    for key in ("clean/epe", "severity2/epe", "clean/absrel", "severity2/layer0/gt_mass"):
        assert np.isfinite(out[key]), key
    assert 0 <= out["severity2/layer1/gt_mass"] <= 1


def test_pairs_split_by_sequence_per_seed():
    sequences = np.array([f"chess/seq-{k:02d}" for k in (1, 1, 2, 3, 3, 3, 4, 5, 6, 6)])
    drawn = set()
    for seed in range(5):
        parts = split_pairs(sequences, seed=seed)
        assert all(
            np.array_equal(a, b) for a, b in zip(parts, split_pairs(sequences, seed), strict=True)
        )
        drawn.add(tuple(map(tuple, parts)))
        assert sorted(np.concatenate(parts).tolist()) == list(range(10))
        names = [set(sequences[p]) for p in parts]
        assert all(names) and not (
            names[0] & names[1] or names[0] & names[2] or names[1] & names[2]
        )
        assert len(names[0]) == 3
    assert len(drawn) > 1  # full_scale.seeds: another seed, another split
    with pytest.raises(ValueError, match="too few"):
        split_pairs(np.array(["a/seq-01", "a/seq-02", "a/seq-01"]), seed=0)


def test_gated_data_stop_with_the_instructions(tmp_path):
    from repro.r3_adapter.datasets import GatedDataError, write_pairs

    spec = {"task": "human_scene", "format": "gated", "instructions": "register at example.org."}
    with pytest.raises(GatedDataError, match="register at example.org.*datasets.bedlam.path"):
        write_pairs("bedlam", spec, [], (3, 4), str(tmp_path / "p.npz"))
    (tmp_path / "bedlam").mkdir()
    with pytest.raises(GatedDataError, match="no loader yet"):
        write_pairs("bedlam", spec | {"path": str(tmp_path / "bedlam")}, [], (3, 4), "x.npz")
    assert not (tmp_path / "p.npz").exists()


def test_full_scale_summaries_feed_the_paired_claims(tmp_path):
    from repro.common.io import read_json
    from repro.r3_adapter.claims import check_claims, full_documents
    from repro.r3_adapter.fullrun import summarise

    paths = []
    for method, epe in (("r3_lite", [0.30, 0.31, 0.29]), ("lora_r6", [0.35, 0.36, 0.33])):
        runs = [
            {"seed": s, "lr": 1e-4, "n_trainable": 10, "losses": [], "severity2/epe": e}
            for s, e in enumerate(epe)
        ]
        paths.append(tmp_path / f"{method}.json")
        summarise("dust3r", "seven", method, runs, str(paths[-1]))
    full = full_documents(map(read_json, paths))
    assert set(full) == {"dust3r/seven"} and full["dust3r/seven"]["r3_lite"]["lrs"] == [1e-4] * 3
    spec = {
        "kind": "paired",
        "claim": "C4",
        "backbone": "dust3r",
        "dataset": "seven",
        "method": "r3_lite",
        "baselines": ["lora_r6"],
        "metric": "severity2/epe",
        "criterion": {"test": "beats", "delta": 0.01, "higher_is_better": False},
    }
    out = check_claims({"c4": spec}, {}, {}, {}, str(tmp_path / "c.json"), full)[0]
    assert out.verdict == "reproduced" and out.measured == pytest.approx(0.0467, abs=1e-4)
    worse = check_claims(
        {"c4": spec | {"method": "lora_r6", "baselines": ["r3_lite"]}},
        {},
        {},
        {},
        str(tmp_path / "c.json"),
        full,
    )[0]
    assert worse.verdict == "contradicted"
