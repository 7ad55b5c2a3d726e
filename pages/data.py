"""Data page: the workspace's ground truth, runs (ranked files or embeddings; uploaded or read from a path on
the server), their model / version / step, side files and settings — each saved into the workspace as it is
loaded (dashboard/dataops.py)."""

from __future__ import annotations

import streamlit as st

from dashboard import dataops as D
from dashboard import persist as P
from dashboard import picker as PK
from dashboard import state as S
from dashboard import ui
from dashboard import workspaces as WS
from evalcore import workspace as W
from evalcore.errors import EvalcoreError

ui.page_setup()
st.title("Data")
WS.watch()  # runs added meanwhile by a training script, the CLI or another tab appear without a click
flash_slot = st.container()  # filled once the context is resolved (a success says so only when it is done)
# each section's own messages (a file that does not load, a success) are shown next to its uploader or form
ws = S.get_ws()
locked = P.locked()  # a folder this user cannot write: every control that would change it is disabled
off = locked is not None
if ws.is_demo:
    from evalcore.workspace.demo import cached_demo, demo_description

    st.info("You are looking at the **built-in demo: synthetic data** (read-only). "
            + demo_description(cached_demo(ws.demo_seed)) + " Files you load here go into a new workspace; "
            "other changes into a copy of the demo.", icon=":material/science:")
    c1, c2 = st.columns(2)
    c1.button("Start an empty workspace", on_click=D.cb_empty_workspace, type="primary", key="clear_demo",
              help="A new, empty workspace for your own files (the demo stays as it is).")
    c2.button("Copy the demo to a new workspace", on_click=D.cb_copy_demo, key="copy_demo",
              help="A writable copy of the demo, to change its settings, runs or files.")
elif off:
    st.warning(f"**This workspace is read-only**: {ui.md_escape(locked)}. You can view every page and download its "
               "results, and your page choices are kept in your own data folder; to load files or change its runs, "
               "ground truth, side files, settings or fusions, copy it to a workspace you can change (its runs and "
               "files come along).", icon=":material/lock:")
    st.text(str(P.workspace().path))
    c1, c2 = st.columns(2)
    c1.button("Copy this workspace to a new workspace", on_click=D.cb_copy_demo, type="primary", key="copy_current",
              help="A writable copy in your workspaces folder, which this session then shows (this one stays as it "
                   "is).")
    c2.button("Open the demo", on_click=D.cb_open_demo, key="load_demo",
              help="Show the built-in synthetic demo (this workspace stays as it is; come back with the picker).")
else:
    st.caption("Workspace: everything loaded here is saved in it at once, read by every tab, the command line "
               "(--workspace) and Python (evalcore.Workspace).")
    st.text(str(P.workspace().path))
    st.button("Open the demo", on_click=D.cb_open_demo, key="load_demo",
              help="Show the built-in synthetic demo (this workspace stays as it is; come back with the picker).")

# ---------------------------------------------------------------- ground truth
st.header("Ground truth")
gt_kind = st.radio("Ground truth from", ["a judgments file", "a reference model's embeddings"], horizontal=True,
                   key="gt_kind_choice",
                   help="Judgments: TREC qrels, BEIR TSV, CSV/Parquet, JSON {query: {doc: grade}}, JSON ordered "
                        "lists of similar items (one list per aspect), graded JSON with domains. Reference: "
                        "relevant = a reference model's nearest items by cosine similarity.")
if gt_kind == "a judgments file":
    c1, c2 = st.columns([3, 1])
    with c2:
        gt_fmt = st.selectbox("Read as", ["auto", *W.qrels_formats()], key="gt_format", disabled=off,
                              help="auto: the format is detected from the file's name and content.")
    with c1:
        up = st.file_uploader("Ground-truth file", key=D.uploader_key("up_gt"), disabled=off,
                              help="Replaces the workspace's ground truth (the previous one is kept, inactive). A file "
                                   "that does not load changes nothing.")
    for blob in D.new_files(up):
        D.store_ground_truth(blob, gt_fmt)
        D.empty_uploader("up_gt")
        st.rerun()
else:
    with st.form("gt_reference_form", clear_on_submit=True):
        ref = st.file_uploader("Reference embeddings (.npz, .npy, .parquet, .csv, .json)", key="up_gt_ref",
                               disabled=off)
        ref_ids = st.file_uploader("Ids file for a .npy (one id per line; optional)", key="up_gt_ref_ids",
                                   disabled=off)
        if st.form_submit_button("Use as ground truth", disabled=off):
            if ref is None:
                D.flash("error", "choose the reference embedding file", where="gt")
            else:
                D.store_reference(D.blob_of(ref), D.blob_of(ref_ids))
            st.rerun()
earlier = D.earlier_ground_truths()
if earlier:  # a ground truth replaced is kept: bring it back without uploading it again
    with st.expander(f"Earlier ground truths ({len(earlier)})", icon=":material/history:"):
        labels = {g["id"]: f"{g['name']} ({g['kind']}, {g['n_queries'] or 0:,} queries, loaded "
                           f"{str(g['created_at'])[:16].replace('T', ' ')} UTC)" for g in earlier}
        pick = st.selectbox("Ground truth", list(labels), format_func=labels.get, key="gt_earlier")
        if st.button("Use it again", key="gt_use_earlier",
                     help="Makes it the workspace's ground truth again; the current one is kept here in turn."):
            D.use_ground_truth(pick, labels[pick])
            st.rerun()
gt_flash = st.container()  # filled once the context is resolved, as the top of the page

slot = st.empty()
ctx = S.context(slot)
ui.refresh_sidebar(ctx)
with gt_flash:
    D.show_flash("gt")
with flash_slot:
    D.show_flash()
    if S.cancelled():
        st.warning("A long computation was cancelled; what it would have produced is not shown.",
                   icon=":material/stop_circle:")
        st.button("Retry", on_click=S.retry, key="retry_cancelled", icon=":material/refresh:")
    if ctx.ready:
        ui.coverage_banner(ctx)
ws = ctx.ws
gt = ws.ground_truth
if gt is None:
    st.info("No ground truth loaded yet.", icon=":material/info:")
else:
    with st.container(border=True):
        st.caption("Current ground truth" + (" (a reference model: relevant = its nearest items by cosine; mode "
                                             "and depth in the settings below)" if gt.kind == "reference" else ""))
        st.text(gt.label)
        if gt.kind == "file" and not ctx.gt_error and gt.format != "auto":
            st.caption("Read as")
            st.text(gt.format)
        if ctx.gt_error:
            ui.show_error(ctx.gt_error)
        for w in ctx.gt_warnings:
            if w != ctx.domain_mismatch:  # shown with the domain mapping, below
                ui.show_warning(w)
        q = next(iter(ctx.qrels.values())) if ctx.qrels else None
        if ctx.aspects:
            aspect = st.selectbox("Aspect: previewed here and given to runs added next (each run can change its own)",
                                  list(ctx.aspects), key="gt_aspect")
            if aspect in ctx.qrels:
                q = ctx.qrels[aspect]
            else:
                try:
                    q = S.memo("gtprev:" + gt.key(aspect), lambda: W.load_ground_truth(gt, aspect))
                except EvalcoreError as e:
                    ui.show_error(e)
                    q = None
        if q is not None:
            st.caption(f"Preview: first rows — {ui.plural(q.n_queries, 'query', 'queries')} "
                       f"({ctx.n_universe:,} in the file), {ui.plural(len(q), 'judgment')}")
            st.dataframe(q.to_frame().head(8), hide_index=True)

# ---------------------------------------------------------------- runs
st.header("Runs")
c1, c2 = st.columns(2)
with c1:
    st.subheader("Ranked run files")
    ups = st.file_uploader("Run files (TREC, CSV/Parquet, JSON...); one run per file", accept_multiple_files=True,
                           key=D.uploader_key("up_runs"), disabled=off,
                           help="Each file becomes a run named after the file; rename it below. .npy/.npz files are "
                                "taken as embeddings (item-to-item). A file that does not load is not added.")
    run_fmt = st.selectbox("Read run files as", ["auto", *W.run_formats()], key="run_format", disabled=off,
                           help="auto: the format is detected from each file's name and content.")
    blobs = D.new_files(ups)
    if blobs:
        D.store_runs(blobs, st.session_state.get("gt_aspect"), run_fmt)
        D.empty_uploader("up_runs")
        st.rerun()
    D.show_flash("runs")
with c2:
    st.subheader("Embedding run")
    with st.form("emb_form", clear_on_submit=True, enter_to_submit=False):  # Enter in the name: no empty submit
        emb_name = st.text_input("Run name (default: the file name)", key="emb_name", disabled=off)
        emb = st.file_uploader("Document embeddings (.npz, .npy, .parquet, .csv, .json)", key="up_emb", disabled=off)
        emb_ids = st.file_uploader("Ids for a .npy (one per line; optional)", key="up_emb_ids", disabled=off)
        with st.expander("Separate query embeddings (optional; default: item-to-item)"):
            qemb = st.file_uploader("Query embeddings", key="up_qemb", disabled=off)
            qemb_ids = st.file_uploader("Ids for a query .npy", key="up_qemb_ids", disabled=off)
        if st.form_submit_button("Add embedding run", disabled=off):
            if emb is None:
                D.flash("error", "choose the document embedding file", where="embedding")
            else:
                D.store_embedding_run(emb_name or None, D.blob_of(emb), D.blob_of(emb_ids), D.blob_of(qemb),
                                      D.blob_of(qemb_ids), st.session_state.get("gt_aspect"))
            st.rerun()
    D.show_flash("embedding")

with st.expander("Add from a local path (files too large for the browser)", icon=":material/folder_open:"):
    st.caption("A file on this server's disk, read where it is and validated like an upload: a .npy is "
               "memory-mapped and copied into the workspace in blocks, never loaded whole. Ranked run files: a "
               "folder or a glob (`/data/runs/*.trec`) too, one run per file named after it; left out, and named: "
               "hidden files, ids files (`*_ids.txt`), README / LICENSE and documents, .npy/.npz, subfolders. A file "
               "that does not load is reported and the others are added.")
    with st.form("path_form"):
        D.default_path_kind(None if gt is None or ws.is_demo else gt.key())  # a stored ground truth: runs next
        p_kind = st.radio("What", list(D.PATH_KINDS), format_func=D.PATH_KINDS.get, key=D.PATH_KIND, horizontal=True,
                          disabled=off)
        p_path = st.text_input("Path (a ranked run: a file, a folder or a glob)", key="path_main",
                               placeholder="/data/model/embeddings.npy, /data/runs/ or /data/runs/*.trec", disabled=off)
        c1, c2, c3 = st.columns(3)
        p_name = c1.text_input("Run name (default: the file name)", key="path_name", disabled=off)
        p_ids = c2.text_input("Ids file for a .npy (default: X_ids.txt beside it)", key="path_ids", disabled=off)
        p_fmt = c3.selectbox("Read as (judgments, run files)", ["auto", *W.qrels_formats(), *W.run_formats()],
                             key="path_format", disabled=off)
        c1, c2 = st.columns(2)
        p_q = c1.text_input("Query embeddings (an embedding run; default: item-to-item)", key="path_queries",
                            disabled=off)
        p_qids = c2.text_input("Ids file of a query .npy", key="path_query_ids", disabled=off)
        if st.form_submit_button("Add from this path", disabled=off):
            D.add_from_path(p_kind, p_path, ids=p_ids, queries=p_q, query_ids=p_qids, name=p_name or None,
                            aspect=st.session_state.get("gt_aspect"), fmt=p_fmt)
            st.rerun()
D.show_flash("path")  # below the expander: seen even when it is folded

st.subheader("Loaded runs")
D.show_flash("loaded")
if not ws.runs:
    st.info("No run loaded yet.", icon=":material/info:")
listed = list(ws.runs)
if len(listed) > D.RUNS_PER_PAGE:  # a search and pages: only the runs of one page are drawn (and read)
    f1, f2 = st.columns([3, 1])
    with f1:
        find = st.text_input("Find a run", key="data_find_run", placeholder="part of its name, model or version")
    listed = D.runs_matching(listed, find)
    n_pages = PK.page_count(len(listed), D.RUNS_PER_PAGE)
    with f2:
        page = int(st.number_input("Page", min_value=1, max_value=n_pages, value=1, step=1,
                                   key=f"data_runs_page_{n_pages}", help=f"{D.RUNS_PER_PAGE} runs per page"))
    st.caption(f"{ui.plural(len(listed), 'run')} of {len(ws.runs):,}"
               + (f", page {page:,} of {n_pages:,}." if listed else ": none matches."))
    listed = listed[(page - 1) * D.RUNS_PER_PAGE: page * D.RUNS_PER_PAGE]
for src in listed:
    with st.container(border=True):
        cols = st.columns([3, 3, 2])
        with cols[0]:
            if st.session_state.get(f"name_{src.uid}") != src.name:
                st.session_state[f"name_{src.uid}"] = src.name
            st.text_input("Name", key=f"name_{src.uid}", on_change=D.cb_rename, args=(src.uid,), disabled=off)
        with cols[1]:
            st.caption(f"{src.kind} run")
            st.text(src.label)
            # here, not in a narrow column of its own (where the label was cut to "Rem…")
            st.button("Remove", key=f"rm_{src.uid}", on_click=D.cb_remove_run, args=(src.uid,), disabled=off,
                      icon=":material/delete:", help="Remove this run (and any fusion built on it)")
        with cols[2]:
            if ctx.aspects:
                current = src.aspect if src.aspect in ctx.aspects else ctx.aspects[0]
                st.session_state[f"aspect_{src.uid}"] = current
                st.selectbox("Ground-truth aspect", list(ctx.aspects), key=f"aspect_{src.uid}",
                             on_change=D.cb_run_info, args=(src.uid, "aspect"), disabled=off)
        cols = st.columns(3)
        for col, field, label, value in ((cols[0], "model", "Model", src.model),
                                          (cols[1], "version", "Version label", src.version)):
            if st.session_state.get(f"{field}_{src.uid}") != (value or ""):
                st.session_state[f"{field}_{src.uid}"] = value or ""
            col.text_input(label, key=f"{field}_{src.uid}", on_change=D.cb_run_info, args=(src.uid, field),
                           placeholder="(none)", help="Runs of one model form its version series (Versions page).",
                           disabled=off)
        if st.session_state.get(f"step_{src.uid}") != src.step:
            st.session_state[f"step_{src.uid}"] = src.step
        cols[2].number_input("Step (training step or epoch)", key=f"step_{src.uid}", value=None, step=1.0,
                             on_change=D.cb_run_info, args=(src.uid, "step"), placeholder="(none)", disabled=off,
                             help="Orders the versions of a model; empty: by version label.")
        run = ctx.runs.get(src.name)  # read first (a stored run is read on demand): its warnings come with it
        if src.uid in ctx.run_errors:  # (stored: it cannot be read or ranked against this ground truth)
            ui.show_error(ctx.run_errors[src.uid], prefix="Not evaluated (the run is kept)")
        for w in ctx.run_warnings.get(src.uid, ()):
            ui.show_warning(w)
        if run is not None and src.uid not in ctx.run_errors:
            st.caption(ui.md_escape(D.run_counts(ctx, src.name, run)))  # (a sample: which queries each counts)
            with st.expander("Preview (first rows)"):
                st.dataframe(D.run_preview(ctx.run_keys[src.uid], run),
                             hide_index=True)

# ---------------------------------------------------------------- side files


def side_file(field: str, role: str, title: str, label: str, key: str, remove: str, error: str | None,
              help: str | None = None, loaded: str | None = None, warning: str | None = None) -> None:
    """One optional file: its uploader, its name once loaded, its error (or warning) or what was read, a remove
    button."""
    st.subheader(title)
    up = st.file_uploader(label, key=D.uploader_key(f"up_{key}"), help=help, disabled=off)
    for blob in D.new_files(up):
        D.store_side(role, blob)
        D.empty_uploader(f"up_{key}")
        st.rerun()
    said = D.show_flash(f"side:{role}")
    blob = getattr(ws, field)
    if blob is not None:
        st.text(blob.name)
        if error:
            ui.show_error(error)
        elif warning and warning not in said:  # (said just now, when the file was stored)
            ui.show_warning(warning)
        elif loaded:
            st.caption(loaded)
        st.button("Remove", key=f"side_rm_{key}", on_click=D.cb_remove_side, args=(role,), help=remove, disabled=off)


st.header("Optional files")
c1, c2, c3 = st.columns(3)
with c1:
    side_file("domain_blob", "domains", "Domain mapping", "Query id → domain (CSV/TSV/JSON)", "domains",
              "Remove the domain mapping", ctx.domain_error,
              warning=ctx.domain_mismatch)
with c2:
    side_file("metadata_blob", "metadata", "Document metadata", "Document id → title / text (CSV/TSV/JSON/Parquet)",
              "meta", "Remove the document metadata", ctx.metadata_error,  # (what was read, as for the query texts)
              loaded=None if ctx.metadata is None else ui.plural(int(ctx.metadata["doc_id"].nunique()), "document"))
with c3:
    side_file("queries_blob", "queries", "Query texts", "Query id → text (BEIR queries.jsonl, TSV/CSV, JSON)",
              "queries", "Remove the query texts", ctx.queries_error,
              help="Shown above a query's drill-down. BEIR queries.jsonl ({_id, text}), a TSV/CSV with a header "
                   "(query_id, text) or lines 'id<TAB>text', JSON {id: text}.",
              loaded=None if ctx.query_texts is None else ui.plural(len(ctx.query_texts), "query text",
                                                                     "query texts"))

# ---------------------------------------------------------------- settings
st.header("Settings")
cur = ws.settings
K_OPTIONS = sorted({1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, *cur.k})
with st.form("settings_form"):
    c1, c2, c3 = st.columns(3)
    with c1:
        ks = st.multiselect("Cutoffs k (all computed at once)", K_OPTIONS, default=list(cur.k), key="set_k", disabled=off)
        metrics = st.multiselect("Metrics", list(W.METRIC_CHOICES), default=[m for m in cur.metrics
                                                                            if m in W.METRIC_CHOICES],
                                 key="set_metrics", disabled=off)
        extra_metrics = st.text_input(
            "More metrics, with parameters or a fixed cutoff", key="set_extra_metrics", disabled=off,
            value=", ".join(m for m in cur.metrics if m not in W.METRIC_CHOICES),
            placeholder="e.g. recall(rel=2), P(rel=2)@5, map@all, rbp(p=0.9), P.5,10, official",
            help="Comma-separated names as on the command line: name(rel=N) sets the relevance threshold of a "
                 "binary metric, @k a single cutoff (without it, every k above), @all the whole list; "
                 "parameters such as rbp(p=0.9), set_f(beta=0.5), ndcg(gains=1:3,2:9); trec_eval's names "
                 "(P.5,10, ndcg_cut_10, iprec_at_recall_0.10) and groups (official, all_trec). "
                 "`python -m evalcore metrics` lists the names.")
    with c2:
        rel = st.number_input("Relevance threshold (grade ≥)", min_value=1, value=int(cur.rel_threshold), step=1,
                              key="set_rel", disabled=off)
        ties = st.selectbox("Tie rule", list(W.TIE_CHOICES), index=list(W.TIE_CHOICES).index(cur.ties),
                            key="set_ties", disabled=off, help="Order of equal scores. trec: doc id descending (trec_eval); "
                                                 "docid_asc: doc id ascending; input: file order")
        no_rel = st.selectbox("Queries without a relevant document", ["zero", "skip"],
                              index=["zero", "skip"].index(cur.no_relevant), key="set_norel",
                              disabled=off)
        judged_only = st.toggle("Judged documents only (trec_eval -J)", value=bool(cur.judged_only), key="set_judged",
                                disabled=off, help="Before scoring, remove every retrieved document that has no judgment (absent "
                                     "from the qrels, or a negative grade); the others move up. For dense runs over "
                                     "pooled qrels. Needs a qrels file (not a reference model).")
    with c3:
        sample = st.number_input("Query sample size (0 = all)", min_value=0, value=int(cur.sample_size), step=50,
                                 key="set_sample", disabled=off)
        seed = st.number_input("Sample seed", min_value=0, value=int(cur.seed), step=1, key="set_seed", disabled=off)
        depth = st.number_input("Ranking depth for embeddings", min_value=1, value=int(cur.depth), step=10,
                                key="set_depth", disabled=off)
        modes = {"tied": "its top k at each k", "fixed": "fixed top N, graded by position"}
        not_ref = ws.ground_truth is None or ws.ground_truth.kind != "reference"
        only_ref = (" Applies only when the ground truth is a reference model's embeddings (not the loaded one)."
                    if not_ref else "")
        gt_mode = st.selectbox("Reference model as ground truth", list(modes), format_func=modes.get,
                               index=list(modes).index(cur.gt_mode), key="set_gtmode", disabled=not_ref or off,
                               help="tied: at each cutoff k, relevant = the reference's top-k (at k = 1 every "
                                    "metric is the same number); fixed: its top N, graded N..1, at every k." + only_ref)
        gt_depth = st.number_input("Reference depth N (fixed mode)", min_value=1, value=int(cur.gt_depth), step=1,
                                   key="set_gtdepth", disabled=not_ref or off, help=only_ref.strip() or None)
        min_cov = st.number_input("Flag runs answering fewer than (% of the queries)", min_value=0, max_value=100,
                                  value=int(round(cur.min_coverage * 100)), step=5, key="set_mincov", disabled=off,
                                  help="A query a run does not answer counts as 0. Runs below this coverage are "
                                       "flagged on every page and left out of ★ and tests unless included.")
    if st.form_submit_button("Apply settings", type="primary", disabled=off):
        try:  # a bad name or value is reported here, next to the form; nothing changes
            new, told = W.capture(lambda: W.Settings(  # (its warnings, e.g. a renamed metric: said next to the form)
                k=tuple(ks), metrics=(*metrics, *W.parse_metric_names(extra_metrics)), rel_threshold=int(rel),
                ties=ties, no_relevant=no_rel, sample_size=int(sample), seed=int(seed), depth=int(depth),
                gt_depth=int(gt_depth), gt_mode=gt_mode, min_coverage=int(min_cov) / 100,
                judged_only=bool(judged_only)).validated())
        except EvalcoreError as e:
            ui.show_error(e, prefix="Settings not applied")
        else:
            if D.save_settings(new, told):  # on the demo: into a copy of it
                # shown again as the canonical names, an offered metric typed in the text moving to the list
                st.session_state.pop("set_extra_metrics", None)
                st.session_state.pop("set_metrics", None)
            st.rerun()
said = D.show_flash("settings")
for w in ctx.eval_warnings:  # what the evaluation under these settings says (e.g. a threshold no grade reaches)
    if w not in said:
        ui.show_warning(w)
