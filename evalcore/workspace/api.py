"""``evalcore.Workspace``: a persistent workspace shared by the Python API, the CLI and the dashboard.

A workspace is a folder::

    DIR/
      catalogue.sqlite   (+ -wal, -shm)  the catalogue: ground truths, runs, evaluations, settings
      objects/ab/<sha256>.parquet|.npy   content-addressed artifacts (qrels, runs, embeddings, tables)
      tmp/                               files being written (renamed into objects/ when complete)

Typical use, e.g. in a training loop's validation hook::

    from evalcore import Workspace
    ws = Workspace.open("runs/my-model")            # created when missing
    ws.set_ground_truth("qrels.txt")                 # any format evalcore reads
    for epoch in range(epochs):
        ...
        ws.add_embedding_run(f"e5-ep{epoch}", doc_vectors, doc_ids, query_embeddings=q_vectors,
                             query_ids=q_ids, model="e5", version=f"epoch {epoch}", step=epoch)
    ev = ws.evaluate(metrics=["ndcg", "recall"], k=[10, 100])
    ws.runs()                                        # one row per run

Every change is atomic (artifacts are written first, then ONE catalogue transaction
records them) and visible to other processes at once; :attr:`Workspace.generation` tells
a reader cheaply whether anything changed. See :mod:`.store` (catalogue and concurrency), :mod:`.artifacts`
(files), :mod:`.codecs` (how data is stored), :mod:`.resolve` (evaluation), :mod:`.bundle` (export, import,
copy), :mod:`.roots` (named workspaces, version order) and :mod:`.demostore` (the read-only demo). The class
is built in layers, one module each: :mod:`.core` (reading records and artifacts, the one writing
primitive), :mod:`.sidecar` (settings, side files), :mod:`.ground_truths` (the ground truth),
:mod:`.run_changes` (adding and editing runs) and this module (opening, reading runs, evaluation, folder
operations).

Decisions: parsed data is stored, not the original bytes (to read a file with another format, add it
again with ``replace=True``); a run name is unique, adding it again is an error unless ``replace=True``
(the run keeps its place); a fused run stores its inputs by name and is computed at evaluation (renames
follow, removing an input removes it); setting the same ground truth again changes nothing (from a file of
another name: renames it), setting another keeps the old one inactive; an embedding run's exact top-k ranking
is kept keyed by its artifacts, the depth and the judged queries' content; evaluations are recorded once
per distinct input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._lazy import pd
from ..data import Run
from ..defaults import DEMO_SEED
from ..errors import CorruptArtifactError, OptionError
from ..evaluate import Evaluation
from ..io.embeddings import Embeddings
from .inputs import check_bool
from .locations import default_path
from .resolve import Resolved, evaluate_stored, resolve
from .run_changes import RunChanges

__all__ = ["Workspace", "RUN_COLUMNS"]

#: Columns of :meth:`Workspace.runs`.
RUN_COLUMNS = ["name", "kind", "model", "version", "step", "tags", "created_at", "source_name", "source_sha256",
               "n_queries", "n_rows", "dim", "aspect", "inputs", "options"]


class Workspace(RunChanges):
    """A workspace folder (see the module docstring). Open one with :meth:`open`.

    Thread-safe (one catalogue connection per thread); any number of processes may read
    while one writes. A read-only workspace (the demo, :meth:`demo`) refuses every change
    with :class:`~evalcore.errors.ReadOnlyWorkspaceError`; :meth:`copy_to` makes a
    writable copy.
    """

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | Path | None = None, *, read_only: bool = False, create: bool = True) -> Workspace:
        """Open the workspace in ``path`` (None: :func:`~.locations.default_path`), creating it when missing.

        A workspace is created only in a new or empty folder: a folder of other files is
        refused (:class:`~evalcore.errors.WorkspaceError`), never filled with a catalogue.

        Parameters
        ----------
        path : str or Path, optional
        read_only : bool
            Refuse changes (and never create or migrate).
        create : bool
            Create the folder and its catalogue when missing (else
            :class:`~evalcore.errors.WorkspaceError`).

        Raises
        ------
        SchemaVersionError
            The catalogue was written by a newer evalcore (nothing is written).
        WorkspaceError
            Not a workspace (and ``create`` is False), or not an evalcore catalogue.
        """
        return cls(default_path() if path is None else path, read_only=read_only, create=create)

    @classmethod
    def demo(cls, seed: int = DEMO_SEED, *, cache_dir: str | Path | None = None) -> Workspace:
        """The built-in synthetic demo as a read-only workspace (built once into a cache folder).

        ``cache_dir`` defaults to :func:`~.locations.demo_cache_dir`; see
        :func:`~.demostore.ensure_demo`. With the default settings it evaluates to exactly
        the demo's numbers; :meth:`copy_to` gives a writable copy.
        """
        from .demostore import ensure_demo

        return cls.open(ensure_demo(seed, cache_dir=cache_dir, open_workspace=cls.open), read_only=True)

    @classmethod
    def import_bundle(cls, bundle: str | Path, path: str | Path) -> Workspace:
        """Unpack an :meth:`export` bundle into ``path`` (absent or empty) and open it.

        See :func:`evalcore.workspace.bundle.import_bundle`.
        """
        from .bundle import import_bundle

        return cls.open(import_bundle(bundle, path))

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Workspace({str(self.path)!r}{', read_only=True' if self.read_only else ''})"

    @property
    def name(self) -> str:
        """The folder's name."""
        return self.path.name

    # ------------------------------------------------------------------ reading runs
    def runs(self) -> pd.DataFrame:
        """One row per run, in display order: :data:`RUN_COLUMNS` (``created_at`` as UTC datetime)."""
        rows = [{"name": r.name, "kind": r.kind, "model": r.model, "version": r.version, "step": r.step,
                 "tags": r.tags, "created_at": r.created_at, "source_name": r.source_name,
                 "source_sha256": r.source_sha256, "n_queries": r.n_queries, "n_rows": r.n_rows, "dim": r.dim,
                 "aspect": r.aspect, "inputs": r.inputs, "options": r.options} for r in self.run_records()]
        frame = pd.DataFrame(rows, columns=RUN_COLUMNS)
        frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True, format="ISO8601")
        frame["step"] = frame["step"].astype(float)
        return frame

    def run_names(self) -> list[str]:
        return [r.name for r in self.run_records()]

    def load_run(self, name: str) -> Run:
        """The Run of a run: read (ranked), or built as :meth:`evaluate` builds it (embedding, fused).

        A run another process removed (or replaced) between this one's reading of the catalogue and of the run's
        file, a ``gc`` having taken the file away, is said so (:meth:`check_still_listed`), not as a missing file.
        A run replaced under its name is read again, once."""
        return self._load_listed(name, again=True)

    def _load_listed(self, name: str, *, again: bool) -> Run:
        rec = self.run_record(name)
        try:
            if rec.kind == "ranked":
                return self.ranked_run(rec)
            res = self.resolve(runs=[rec.name])
            if rec.name in res.errors:
                raise OptionError(res.errors[rec.name])
            return res.runs[rec.name]
        except (CorruptArtifactError, OptionError):
            if again and self.listing_changed(rec) == "replaced":
                return self._load_listed(name, again=False)  # stored again under its name meanwhile: the new one
            self.check_still_listed(rec)  # removed (or replaced again) meanwhile: say so, not "file missing"
            raise

    def load_embeddings(self, name: str) -> tuple[Embeddings, Embeddings | None]:
        """An embedding run's document and (None when item-to-item) query vectors, memory-mapped."""
        return self.run_embeddings(self.run_record(name))

    # ------------------------------------------------------------------ evaluation
    def resolve(self, *, runs: Sequence[str] | None = None, progress: Callable[[int, int], None] | None = None,
                **settings: Any) -> Resolved:
        """Ground truth, sample and runs ready to evaluate (:func:`~.resolve.resolve`).

        ``settings`` override the stored ones for this call (``metrics=``, ``k=``, ``ties=``...).
        """
        return resolve(self, self._settings_with(settings), runs=runs, progress=progress)

    def evaluate(self, *, metrics: Sequence[str] | str | None = None, k: Sequence[int] | int | None = None,
                 ties: str | None = None, rel_threshold: int | None = None, no_relevant: str | None = None,
                 runs: Sequence[str] | None = None, sample_size: int | None = None, seed: int | None = None,
                 depth: int | None = None, judged_only: bool | None = None, record: bool = True,
                 progress: Callable[[int, int], None] | None = None, strict: bool = False) -> Evaluation:
        """Evaluate the stored runs against the active ground truth (every metric at every k).

        Options left None take the stored settings (:meth:`settings`; ``judged_only``:
        trec_eval's ``-J``, see :func:`evalcore.evaluate`). Embedding runs are
        ranked by exact top-k once (the ranking is kept in the workspace). A run that
        cannot be evaluated (a damaged artifact...) is left out with an
        :class:`~evalcore.errors.EvalcoreWarning` and listed in ``settings["errors"]``
        of the result. With ``record`` (and a writable workspace) the evaluation is
        stored in the catalogue, its per-query table as Parquet (once per distinct input).
        A ranked run answering only part of the evaluated ground-truth queries (the others count 0)
        is said in a warning, in the command line's words (:func:`evalcore.coverage.warn_missing_queries`);
        embedding and fused runs have their own warnings (the search's, the fusion's).
        ``strict`` (default False): a ground-truth query a run does not answer or that an embedding
        run's embeddings lack, or a relevant document absent from its corpus, raises
        :class:`~evalcore.errors.MissingIdsError` (the coverage warning's message) and nothing is
        recorded (:func:`~.resolve.evaluate_stored`).
        """
        record = check_bool(record, "record")
        return evaluate_stored(self, self._settings_with(dict(
            metrics=metrics, k=k, ties=ties, rel_threshold=rel_threshold, no_relevant=no_relevant,
            sample_size=sample_size, seed=seed, depth=depth, judged_only=judged_only)),
            runs=runs, progress=progress, record=record, strict=strict)

    def record_evaluation(self, ev: Evaluation, *, key: str | None = None, ground_truth_id: int | None = None) -> int:
        """Store an evaluation (its table as Parquet); returns its id. The same ``key`` is stored once."""
        from .evaluations import record_evaluation

        return record_evaluation(self, ev, key=key, ground_truth_id=ground_truth_id)

    def evaluations(self) -> pd.DataFrame:
        """The stored evaluations, newest last: ``id, created_at, ground_truth, runs, metrics, k, errors``."""
        from .evaluations import list_evaluations

        return list_evaluations(self)

    def load_evaluation(self, evaluation_id: int | None = None) -> Evaluation:
        """A stored evaluation (default the newest) as an :class:`~evalcore.evaluate.Evaluation`."""
        from .evaluations import load_evaluation

        return load_evaluation(self, evaluation_id)

    # ------------------------------------------------------------------ folder operations
    def export(self, path: str | Path) -> Path:
        """Write the whole workspace as one portable ``.zip`` (:func:`~.bundle.export_bundle`)."""
        from .bundle import export_bundle

        return export_bundle(self, path)

    def copy_to(self, new_path: str | Path) -> Workspace:
        """Copy the workspace into ``new_path`` (absent or empty) and open the copy (writable)."""
        from .bundle import copy_workspace

        return Workspace.open(copy_workspace(self, new_path))

    def gc(self, *, age: float | None = None) -> dict[str, int]:
        """Remove artifacts nothing refers to any more (:func:`~.bundle.collect_garbage`)."""
        from .bundle import collect_garbage

        return collect_garbage(self, age=age)

    def verify(self) -> list[str]:
        """Check every stored artifact against its SHA-256; returns one message per problem (empty: all good)."""
        from .bundle import verify_artifacts

        return verify_artifacts(self)
