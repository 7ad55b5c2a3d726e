"""Workspaces: the persistent store (:class:`Workspace`) and the dashboard's in-memory pipeline.

The persistent store (issue #9) — a folder with an SQLite catalogue and content-addressed
Parquet / ``.npy`` artifacts, shared by the Python API, the CLI and the dashboard:

* :mod:`.api` — :class:`Workspace` (``from evalcore import Workspace``), the public API, built on
  :mod:`.ground_truths` (setting and reading the ground truth) and :mod:`.run_changes` (adding and
  editing runs);
* :mod:`.roots` — :class:`WorkspaceRoot` (named workspaces), :func:`order_versions`;
  ``Workspace.demo()`` is the built-in demo as a read-only workspace (:mod:`.demostore`);
  ``demo_workspace`` (of :mod:`.model`) stays the dashboard's in-memory demo ``Snapshot``;
* :mod:`.store` (catalogue, schema, transactions), :mod:`.artifacts` (files),
  :mod:`.codecs` (how data is stored), :mod:`.resolve` (evaluation), :mod:`.bundle`
  (export, import, copy, gc), :mod:`.locations` (default folders), :mod:`.inputs`,
  :mod:`.sidecar`, :mod:`.evaluations`, :mod:`.core`.

The dashboard's data model and pipeline, in pure Python (no Streamlit):

* :mod:`.model` — what the user loaded and chose (:class:`Snapshot`: files as
  :class:`Blob`, a :class:`GroundTruthSource`, :class:`RunSource` s, :class:`Settings`)
  and the functions that edit it;
* :mod:`.pipeline` — from that to the :class:`~evalcore.evaluate.Evaluation`: each step a
  pure function of content keys, so the dashboard caches each step and never recomputes
  retrieval when only the displayed k, query, run or baseline changes::

    ground truth bytes ──load_ground_truth──> Qrels (per aspect)
                       ──query_universe──> all query ids ──sample_query_ids──> sample
    Qrels + domains + sample ──prepare_qrels──> evaluated Qrels
    run bytes / embeddings / fusion ──build_run──> Run        (retrieval only here)
    Qrels + Runs + Settings ──evaluate_workspace──> Evaluation (every k at once)

* :mod:`.analysis` — one call per analysis page over what the pipeline resolved (fusion
  weight search, agreement between runs, a reference model's similarity agreement);
* :mod:`.versions` — a model across its versions (the Versions page): the series, the
  metric curve, the paired tests against the previous and a reference version, what changed;
* :mod:`.demo` — the built-in synthetic demo.

Every number the dashboard shows is an aggregation of ``Evaluation.table``
(:mod:`evalcore.aggregate`, :mod:`evalcore.stats`); display reshaping lives in the
dashboard (``dashboard/tables.py``).
"""

from . import analysis, incremental, model, pipeline, versions
from .analysis import *  # noqa: F403  (the names of analysis.__all__)
from .api import RUN_COLUMNS, Workspace
from .incremental import *  # noqa: F403  (the names of incremental.__all__)
from .locations import default_path, default_root
from .model import *  # noqa: F403  (the names of model.__all__)
from .pipeline import *  # noqa: F403  (the names of pipeline.__all__)
from .resolve import Resolved
from .roots import WorkspaceRoot, order_versions
from .runfiles import RunFilesAdded, is_file_set
from .versions import *  # noqa: F403  (the names of versions.__all__)

__all__ = [*model.__all__, *pipeline.__all__, *analysis.__all__, *versions.__all__, *incremental.__all__, "Workspace", "WorkspaceRoot", "Resolved",
           "RUN_COLUMNS", "order_versions", "default_path", "default_root", "RunFilesAdded", "is_file_set"]
