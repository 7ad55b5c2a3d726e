"""Data page: ground truth, runs (ranked files or embeddings), side files, settings."""

from __future__ import annotations

import dataclasses

import streamlit as st

from dashboard import state as S
from dashboard import ui
from evalcore import workspace as W
from evalcore.errors import EvalcoreError

CONSUMED = "consumed_uploads"
FLASH = "data_flash"


def consumed() -> set:
    return st.session_state.setdefault(CONSUMED, set())


def new_files(files) -> list[W.Blob]:
    """Uploaded files not seen before (by upload id), as blobs (bytes + SHA-256)."""
    if files is None:
        return []
    files = files if isinstance(files, list) else [files]
    out = []
    seen = consumed()
    for f in files:
        fid = getattr(f, "file_id", None) or f"{f.name}:{f.size}"
        if fid in seen:
            continue
        seen.add(fid)
        out.append(W.Blob.of(f.name, f.getvalue()))
    return out


def flash(kind: str, text: str) -> None:
    st.session_state.setdefault(FLASH, []).append((kind, text))


def show_flash() -> None:
    for kind, text in st.session_state.pop(FLASH, []):
        if kind == "error":
            ui.show_error(text, prefix="Not done")
        else:
            st.success(ui.md_escape(text), icon=":material/check_circle:")


# ------------------------------------------------------------------------------------------ callbacks


def cb_clear_demo() -> None:
    S.set_ws(W.clear_demo(S.get_ws()))


def cb_load_demo() -> None:
    S.set_ws(W.demo_workspace(S.DEMO_SEED, settings=S.get_ws().settings))


def cb_remove_run(uid: str) -> None:
    S.set_ws(S.get_ws().without_run(uid))


def cb_rename(uid: str) -> None:
    try:
        S.set_ws(S.get_ws().renamed(uid, st.session_state[f"name_{uid}"]))
    except EvalcoreError as e:
        flash("error", str(e))
        st.session_state.pop(f"name_{uid}", None)


def cb_run_option(uid: str, option: str) -> None:
    value = st.session_state[f"{option}_{uid}"]
    S.set_ws(W.set_run_options(S.get_ws(), uid, **{option: value}))


def cb_gt_format() -> None:
    ws = S.get_ws()
    if ws.ground_truth is not None and ws.ground_truth.kind == "file":
        S.set_ws(dataclasses.replace(ws, ground_truth=dataclasses.replace(ws.ground_truth,
                                                                          format=st.session_state["gt_format"])))


def cb_remove_side(which: str) -> None:
    S.set_ws(dataclasses.replace(S.get_ws(), **{which: None}))


# ------------------------------------------------------------------------------------------ page

ui.page_setup()
st.title("Data")
flash_slot = st.container()  # filled once the context is resolved (a success says so only when it is done)
ws = S.get_ws()
if ws.is_demo:
    from evalcore.workspace.demo import cached_demo, demo_description

    st.info("You are looking at the **built-in demo: synthetic data**. " + demo_description(cached_demo(ws.demo_seed)),
            icon=":material/science:")
    st.button("Clear demo", on_click=cb_clear_demo, type="primary", key="clear_demo",
              help="Remove the demo's ground truth and runs, then load your own files.")
else:
    st.button("Load the demo", on_click=cb_load_demo, key="load_demo",
              help="Replace everything loaded with the built-in synthetic demo.")

# ---------------------------------------------------------------- ground truth
st.header("Ground truth")
gt_kind = st.radio("Ground truth from", ["a judgments file", "a reference model's embeddings"], horizontal=True,
                   key="gt_kind_choice",
                   help="Judgments: TREC qrels, BEIR TSV, CSV/Parquet, JSON {query: {doc: grade}}, JSON ordered "
                        "lists of similar items (one list per aspect), graded JSON with domains. Reference: "
                        "relevant = a reference model's nearest items by cosine similarity.")
if gt_kind == "a judgments file":
    up = st.file_uploader("Ground-truth file", key="up_gt",
                          help="Uploading your own ground truth clears the demo (a file that does not load changes "
                               "nothing).")
    for blob in new_files(up):
        candidate = W.set_ground_truth(S.get_ws(), blob, kind="file")
        problem = S.check_ground_truth(candidate.ground_truth)
        if problem:  # everything loaded stays as it was
            flash("error", f"{problem} (nothing was changed)")
        else:
            S.set_ws(candidate)
            flash("ok", f"loaded ground truth {blob.name}")
        st.rerun()
else:
    with st.form("gt_reference_form", clear_on_submit=True):
        ref = st.file_uploader("Reference embeddings (.npz, .npy, .parquet, .csv, .json)", key="up_gt_ref")
        ref_ids = st.file_uploader("Ids file for a .npy (one id per line; optional)", key="up_gt_ref_ids")
        if st.form_submit_button("Use as ground truth"):
            if ref is None:
                flash("error", "choose the reference embedding file")
            else:
                ids_blob = W.Blob.of(ref_ids.name, ref_ids.getvalue()) if ref_ids is not None else None
                candidate = W.set_ground_truth(S.get_ws(), W.Blob.of(ref.name, ref.getvalue()), kind="reference",
                                               ids_blob=ids_blob)
                problem = S.check_ground_truth(candidate.ground_truth)
                if problem:
                    flash("error", f"{problem} (nothing was changed)")
                else:
                    S.set_ws(candidate)
                    flash("ok", f"reference ground truth {ref.name}: its nearest items are the relevant ones")
            st.rerun()

slot = st.empty()
ctx = S.context(slot)
ui.refresh_sidebar(ctx)
with flash_slot:
    show_flash()
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
        c1, c2 = st.columns([3, 2])
        with c1:
            st.caption("Current ground truth")
            st.text(gt.label)
            if gt.kind == "file" and not ctx.gt_error:
                detected = W.detect_qrels(gt.blob)
                st.caption("Detected format")
                st.text(detected or "(not recognised)")
        with c2:
            if gt.kind == "file":
                formats = ["auto", *W.qrels_formats()]
                st.session_state["gt_format"] = gt.format if gt.format in formats else "auto"
                st.selectbox("Format (override the detection)", formats, key="gt_format", on_change=cb_gt_format)
            elif gt.kind == "reference":
                st.caption("Reference model: relevant = its nearest items by cosine (mode and depth in the "
                           "settings below)")
        if ctx.gt_error:
            ui.show_error(ctx.gt_error)
        for w in ctx.gt_warnings:
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
                           key="up_runs", help="Each file becomes a run named after the file; rename it below. "
                                               ".npy/.npz files are taken as embeddings (item-to-item).")
    added, refused = [], False
    for blob in new_files(ups):
        aspect = st.session_state.get("gt_aspect")
        if W.looks_like_embeddings(blob):  # vectors dropped here: an item-to-item embedding run
            ws, uid = W.add_embedding_run(S.get_ws(), blob, aspect=aspect)
            added.append(f"{blob.name} (embeddings, item-to-item)")
        else:
            ws, uid = W.add_ranked_run(S.get_ws(), blob, aspect=aspect)
            problem = S.check_run(ws.run_by_uid(uid), ws.settings) if S.get_ws().is_demo else None
            if problem:  # on the demo, a file that does not load must not clear it
                flash("error", f"{problem} (the demo was kept)")
                refused = True
                continue
            added.append(blob.name)
        S.set_ws(ws)
    if added:
        flash("ok", "added run file(s) " + ", ".join(added))
    if added or refused:
        st.rerun()
with c2:
    st.subheader("Embedding run")
    with st.form("emb_form", clear_on_submit=True):
        emb_name = st.text_input("Run name (default: the file name)", key="emb_name")
        emb = st.file_uploader("Document embeddings (.npz, .npy, .parquet, .csv, .json)", key="up_emb")
        emb_ids = st.file_uploader("Ids for a .npy (one per line; optional)", key="up_emb_ids")
        with st.expander("Separate query embeddings (optional; default: item-to-item)"):
            qemb = st.file_uploader("Query embeddings", key="up_qemb")
            qemb_ids = st.file_uploader("Ids for a query .npy", key="up_qemb_ids")
        if st.form_submit_button("Add embedding run"):
            if emb is None:
                flash("error", "choose the document embedding file")
            else:
                def blob(f):
                    return None if f is None else W.Blob.of(f.name, f.getvalue())

                ws, uid = W.add_embedding_run(S.get_ws(), blob(emb), ids_blob=blob(emb_ids), query_blob=blob(qemb),
                                              query_ids_blob=blob(qemb_ids), name=emb_name or None,
                                              aspect=st.session_state.get("gt_aspect"))
                S.set_ws(ws)
                flash("ok", f"added embedding run {emb.name}; it is ranked when first needed")
            st.rerun()

st.subheader("Loaded runs")
if not ws.runs:
    st.info("No run loaded yet.", icon=":material/info:")
for src in ws.runs:
    with st.container(border=True):
        cols = st.columns([3, 3, 2, 2])
        with cols[0]:
            if st.session_state.get(f"name_{src.uid}") != src.name:
                st.session_state[f"name_{src.uid}"] = src.name
            st.text_input("Name", key=f"name_{src.uid}", on_change=cb_rename, args=(src.uid,))
        with cols[1]:
            st.caption(f"{src.kind} run")
            st.text(src.label)
            # here, not in a narrow column of its own (where the label was cut to "Rem…")
            st.button("Remove", key=f"rm_{src.uid}", on_click=cb_remove_run, args=(src.uid,),
                      icon=":material/delete:", help="Remove this run (and any fusion built on it)")
        with cols[2]:
            if src.kind == "ranked":
                formats = ["auto", *W.run_formats()]
                st.session_state[f"format_{src.uid}"] = src.format if src.format in formats else "auto"
                st.selectbox("Format", formats, key=f"format_{src.uid}", on_change=cb_run_option,
                             args=(src.uid, "format"))
                if src.uid not in ctx.run_errors:
                    st.caption(f"detected: {W.detect_run(src.blob) or 'not recognised'}")
        with cols[3]:
            if ctx.aspects:
                current = src.aspect if src.aspect in ctx.aspects else ctx.aspects[0]
                st.session_state[f"aspect_{src.uid}"] = current
                st.selectbox("Ground-truth aspect", list(ctx.aspects), key=f"aspect_{src.uid}",
                             on_change=cb_run_option, args=(src.uid, "aspect"))
        if src.uid in ctx.run_errors:
            ui.show_error(ctx.run_errors[src.uid])
        for w in ctx.run_warnings.get(src.uid, ()):
            ui.show_warning(w)
        run = ctx.runs.get(src.name)
        if run is not None and src.uid not in ctx.run_errors:
            st.caption(f"{ui.plural(run.n_queries, 'query', 'queries')}, {ui.plural(len(run), 'ranked item')}")
            with st.expander("Preview (first rows)"):
                st.dataframe(S.memo(f"preview:{ctx.run_keys[src.uid]}", lambda run=run: run.to_frame().head(8)),
                             hide_index=True)

# ---------------------------------------------------------------- side files


def side_file(field: str, title: str, label: str, key: str, remove: str, error: str | None,
              help: str | None = None, loaded: str | None = None) -> None:
    """One optional file: its uploader, its name once loaded, its error or what was read, a remove button."""
    st.subheader(title)
    up = st.file_uploader(label, key=f"up_{key}", help=help)
    for blob in new_files(up):
        S.set_ws(dataclasses.replace(S.get_ws(), **{field: blob}))
        st.rerun()
    blob = getattr(ws, field)
    if blob is not None:
        st.text(blob.name)
        if error:
            ui.show_error(error)
        elif loaded:
            st.caption(loaded)
        st.button(remove, key=f"rm_{key}", on_click=cb_remove_side, args=(field,))


st.header("Optional files")
c1, c2, c3 = st.columns(3)
with c1:
    side_file("domain_blob", "Domain mapping", "Query id → domain (CSV/TSV/JSON)", "domains", "Remove domain mapping",
              ctx.domain_error)
with c2:
    side_file("metadata_blob", "Document metadata", "Document id → title / text (CSV/TSV/JSON/Parquet)", "meta",
              "Remove metadata", ctx.metadata_error)
with c3:
    side_file("queries_blob", "Query texts", "Query id → text (BEIR queries.jsonl, TSV/CSV, JSON)", "queries",
              "Remove query texts", ctx.queries_error,
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
        ks = st.multiselect("Cutoffs k (all computed at once)", K_OPTIONS, default=list(cur.k), key="set_k")
        metrics = st.multiselect("Metrics", list(W.METRIC_CHOICES), default=[m for m in cur.metrics
                                                                            if m in W.METRIC_CHOICES],
                                 key="set_metrics")
        extra_metrics = st.text_input(
            "More metrics, with parameters or a fixed cutoff", key="set_extra_metrics",
            value=", ".join(m for m in cur.metrics if m not in W.METRIC_CHOICES),
            placeholder="e.g. recall(rel=2), P(rel=2)@5, map@all, rbp(p=0.9), P.5,10, official",
            help="Comma-separated names as on the command line: name(rel=N) sets the relevance threshold of a "
                 "binary metric, @k a single cutoff (without it, every k above), @all the whole list; "
                 "parameters such as rbp(p=0.9), set_f(beta=0.5), ndcg(gains=1:3,2:9); trec_eval's names "
                 "(P.5,10, ndcg_cut_10, iprec_at_recall_0.10) and groups (official, all_trec). "
                 "`python -m evalcore metrics` lists the names.")
    with c2:
        rel = st.number_input("Relevance threshold (grade ≥)", min_value=1, value=int(cur.rel_threshold), step=1,
                              key="set_rel")
        ties = st.selectbox("Tie rule", list(W.TIE_CHOICES), index=list(W.TIE_CHOICES).index(cur.ties),
                            key="set_ties", help="Order of equal scores. trec: doc id descending (trec_eval); "
                                                 "docid_asc: doc id ascending; input: file order")
        no_rel = st.selectbox("Queries without a relevant document", ["zero", "skip"],
                              index=["zero", "skip"].index(cur.no_relevant), key="set_norel")
        judged_only = st.toggle("Judged documents only (trec_eval -J)", value=bool(cur.judged_only), key="set_judged",
                                help="Before scoring, remove every retrieved document that has no judgment (absent "
                                     "from the qrels, or a negative grade); the others move up. For dense runs over "
                                     "pooled qrels. Needs a qrels file (not a reference model).")
    with c3:
        sample = st.number_input("Query sample size (0 = all)", min_value=0, value=int(cur.sample_size), step=50,
                                 key="set_sample")
        seed = st.number_input("Sample seed", min_value=0, value=int(cur.seed), step=1, key="set_seed")
        depth = st.number_input("Ranking depth for embeddings", min_value=1, value=int(cur.depth), step=10,
                                key="set_depth")
        modes = {"tied": "its top k at each k", "fixed": "fixed top N, graded by position"}
        gt_mode = st.selectbox("Reference model as ground truth", list(modes), format_func=modes.get,
                               index=list(modes).index(cur.gt_mode), key="set_gtmode",
                               help="tied: at each cutoff k, relevant = the reference's top-k (at k = 1 every "
                                    "metric is the same number); fixed: its top N, graded N..1, at every k.")
        gt_depth = st.number_input("Reference depth N (fixed mode)", min_value=1, value=int(cur.gt_depth), step=1,
                                   key="set_gtdepth")
        min_cov = st.number_input("Flag runs answering fewer than (% of the queries)", min_value=0, max_value=100,
                                  value=int(round(cur.min_coverage * 100)), step=5, key="set_mincov",
                                  help="A query a run does not answer counts as 0. Runs below this coverage are "
                                       "flagged on every page and left out of ★ and tests unless included.")
    if st.form_submit_button("Apply settings", type="primary"):
        try:  # a bad name or value is reported here, next to the form; nothing changes
            new = W.Settings(k=tuple(ks), metrics=(*metrics, *W.parse_metric_names(extra_metrics)),
                             rel_threshold=int(rel), ties=ties, no_relevant=no_rel, sample_size=int(sample),
                             seed=int(seed), depth=int(depth), gt_depth=int(gt_depth), gt_mode=gt_mode,
                             min_coverage=int(min_cov) / 100, judged_only=bool(judged_only)).validated()
        except EvalcoreError as e:
            ui.show_error(e, prefix="Settings not applied")
        else:
            S.set_ws(dataclasses.replace(S.get_ws(), settings=new))
            # shown again as the canonical names, an offered metric typed in the text moving to the list
            st.session_state.pop("set_extra_metrics", None)
            st.session_state.pop("set_metrics", None)
            flash("ok", "settings applied")
            st.rerun()
