"""A helper of the dashboard's tests that stores a snapshot as a new workspace of the default root.

Importing it points the data-folder variables to a private temporary folder first (:func:`private_data.ensure`),
so the workspaces it and the other helpers of ``test_app`` create never land in the user's own folder, also when
a script imports them outside pytest.
"""

from __future__ import annotations

import uuid

import private_data

from evalcore import workspace as W

private_data.ensure()


def store_snapshot(snap: W.Snapshot) -> str:
    """A new workspace of the root holding what ``snap`` holds (what loading those files on the Data page
    saves); returns its name."""
    name = f"test-{uuid.uuid4().hex[:10]}"
    with W.WorkspaceRoot().create(name) as ws:
        gt = snap.ground_truth
        if gt is not None and gt.kind == "reference":
            ws.set_reference(gt.blob.data, None if gt.ids_blob is None else gt.ids_blob.data, source_name=gt.blob.name)
        elif gt is not None:
            ws.set_ground_truth(gt.blob.data, source_name=gt.blob.name, format=gt.format)
        names = {r.uid: r.name for r in snap.runs}
        for r in snap.runs:
            info = {"aspect": r.aspect, "model": r.model, "version": r.version, "step": r.step}
            if r.kind == "ranked":
                ws.add_run(r.name, r.blob.data, format=r.format, source_name=r.blob.name, **info)
            elif r.kind == "embedding":
                data = lambda b: None if b is None else b.data  # noqa: E731
                ws.add_embedding_run(r.name, r.blob.data, data(r.ids_blob), query_embeddings=data(r.query_blob),
                                     query_ids=data(r.query_ids_blob), source_name=r.blob.name,
                                     query_source_name=None if r.query_blob is None else r.query_blob.name, **info)
            else:
                f = r.fusion
                ws.add_fused_run(r.name, [names[u] for u in f.inputs], weights=list(f.weights), c=f.c, top_n=f.top_n,
                                 method=f.method, norm=f.norm, **info)
        for blob, setter in ((snap.domain_blob, ws.set_domains), (snap.metadata_blob, ws.set_metadata),
                             (snap.queries_blob, ws.set_query_texts)):
            if blob is not None:
                setter(blob.data, name=blob.name)
        ws.set_settings(snap.settings)
    return name
