"""The demo's version series: training checkpoints of its strong model (for the Versions page).

The built-in demo (:mod:`.demo`) has three runs, none of them versions of another. This
module adds, on request, the **checkpoints** of the strong model: at epoch :math:`e` of
:data:`CHECKPOINT_EPOCHS` its item vectors are the final model's plus a noise that fades as
training goes on,

.. math:: x^{(e)} = x^{(E)} + s\\,(1 - e/E)^{0.7}\\,(1.2\\,N + 0.5\\,N_e),

with :math:`E` = :data:`FINAL_EPOCH` (the demo's ``strong-128d`` itself), :math:`s` the
reference's scale, :math:`N` a noise shared by every epoch (what training removes) and
:math:`N_e` each epoch's own (so a later epoch improves most queries but not all). Each
checkpoint is ranked like the demo's models (item-to-item, 100 deep). Everything comes from
``numpy.random.default_rng([seed, 1])``: the demo itself is unchanged.

:func:`with_demo_checkpoints` puts them into a demo :class:`~.model.Snapshot`, every one with
``model``, ``version`` and ``step`` set, the final ``strong-128d`` included.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np

from ..data import Run
from ..defaults import DEMO_SEED
from .demo import RUN_DEPTH, _run, _topk, cached_demo
from .model import RunSource, Snapshot

__all__ = ["SERIES_MODEL", "FINAL_EPOCH", "CHECKPOINT_EPOCHS", "checkpoint_name", "DemoSeries", "demo_series",
           "demo_run", "demo_matrix", "with_demo_checkpoints"]

#: The demo model whose checkpoints form the series.
SERIES_MODEL = "strong-128d"
#: The demo's ``strong-128d`` is the model after this many epochs.
FINAL_EPOCH = 25
#: Epochs of the earlier checkpoints.
CHECKPOINT_EPOCHS: tuple[int, ...] = (1, 3, 6, 10, 15, 20)
_SHARED, _OWN, _POWER = 1.2, 0.5, 0.7


def checkpoint_name(epoch: int) -> str:
    """The run name of the checkpoint after ``epoch`` epochs (the final one is ``strong-128d``)."""
    return SERIES_MODEL if int(epoch) == FINAL_EPOCH else f"{SERIES_MODEL} epoch {int(epoch)}"


@dataclass(frozen=True, eq=False)
class DemoSeries:
    """The checkpoints' runs and item vectors, by run name (:func:`checkpoint_name`)."""

    runs: dict[str, Run]
    embeddings: dict[str, np.ndarray]


@functools.lru_cache(maxsize=2)
def demo_series(seed: int = DEMO_SEED) -> DemoSeries:
    """The checkpoints of the demo of ``seed`` (built once per process; see the module docstring)."""
    demo = cached_demo(seed)
    final = demo.embeddings[SERIES_MODEL]
    ref = demo.embeddings["reference"]
    scale = float(np.linalg.norm(ref, axis=1).mean()) / np.sqrt(ref.shape[1])
    position = {str(x): i for i, x in enumerate(demo.item_ids)}
    q_index = np.array([position[str(q)] for q in demo.qrels.query_ids], dtype=np.int64)
    qids = demo.item_ids[q_index]
    rng = np.random.default_rng([seed, 1])
    shared = rng.normal(size=final.shape)
    runs, embeddings = {}, {}
    for epoch in CHECKPOINT_EPOCHS:
        fade = (1.0 - epoch / FINAL_EPOCH) ** _POWER
        emb = (final + scale * fade * (_SHARED * shared + _OWN * rng.normal(size=final.shape))).astype(np.float32)
        name = checkpoint_name(epoch)
        idx, sc = _topk(emb[q_index], emb, q_index, RUN_DEPTH)
        runs[name] = _run(name, qids, demo.item_ids, idx, sc)
        embeddings[name] = emb
    return DemoSeries(runs, embeddings)


def demo_run(seed: int, name: str) -> Run:
    """A demo run by name: one of the demo's own, or a checkpoint."""
    demo = cached_demo(seed)
    return demo.runs[name] if name in demo.runs else demo_series(seed).runs[name]


def demo_matrix(seed: int, name: str) -> np.ndarray | None:
    """The item vectors of a demo run (a model or a checkpoint), None for the lexical run."""
    demo = cached_demo(seed)
    if name in demo.embeddings:
        return demo.embeddings[name]
    if name.startswith(SERIES_MODEL + " epoch "):
        return demo_series(seed).embeddings.get(name)
    return None


def with_demo_checkpoints(ws: Snapshot) -> Snapshot:
    """The demo snapshot with the strong model's checkpoints added (unchanged when not the demo).

    ``strong-128d`` (the demo's run of that name, whatever its kind) becomes the last version
    (``epoch 25``); the checkpoints (kind ``"demo"``, built by :func:`demo_run`) follow the
    demo's runs, each with ``model="strong-128d"``, ``version="epoch e"``, ``step=e``.
    Adding them twice changes nothing.
    """
    if not ws.is_demo:
        return ws
    seed = ws.demo_seed or 0
    final = (SERIES_MODEL,)  # the demo's run, in memory (kind "demo") or read from the stored demo
    runs = tuple(replace(r, model=SERIES_MODEL, version=f"epoch {FINAL_EPOCH}", step=float(FINAL_EPOCH))
                 if (r.demo_name or r.name) in final else r for r in ws.runs)
    have = {r.demo_name or r.name for r in runs}
    extra = tuple(RunSource(f"demo-{seed}-{checkpoint_name(e)}", checkpoint_name(e), "demo", demo_seed=seed,
                            demo_name=checkpoint_name(e), model=SERIES_MODEL, version=f"epoch {e}", step=float(e))
                  for e in CHECKPOINT_EPOCHS if checkpoint_name(e) not in have)
    return replace(ws, runs=runs + extra)
