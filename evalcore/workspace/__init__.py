"""The dashboard's data model and pipeline, in pure Python (no Streamlit).

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
* :mod:`.demo` — the built-in synthetic demo.

Every number the dashboard shows is an aggregation of ``Evaluation.table``
(:mod:`evalcore.aggregate`, :mod:`evalcore.stats`); display reshaping lives in the
dashboard (``dashboard/tables.py``).
"""

from . import analysis, model, pipeline
from .analysis import *  # noqa: F403  (the names of analysis.__all__)
from .model import *  # noqa: F403  (the names of model.__all__)
from .pipeline import *  # noqa: F403  (the names of pipeline.__all__)

__all__ = [*model.__all__, *pipeline.__all__, *analysis.__all__]
