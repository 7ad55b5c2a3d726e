"""What the Data page does with what the user loads: each file is validated and saved into the workspace
as it is loaded (:func:`dashboard.persist.write`: one transaction; a file that does not load changes
nothing stored), from an upload or from a path on the server's disk (read in place; a ``.npy`` is
memory-mapped and copied in blocks, never loaded whole).

Uploaded bytes are not kept: once a file is stored, its uploader is emptied (its widget key
changes, which lets Streamlit drop the file), and every page reads the stored artifact.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard import persist as P
from dashboard import selections, ui
from dashboard import state as S
from evalcore import workspace as W
from evalcore.errors import EvalcoreError, OptionError
from evalcore.workspace.runfiles import add_embedding_file, add_run_file

CONSUMED = "consumed_uploads"
FLASH = "data_flash"
ROUNDS = "_uploader_rounds"

#: What "Add from a local path" adds.
PATH_KINDS = {"qrels": "ground truth: a judgments file", "reference": "ground truth: a reference model's embeddings",
              "ranked": "a ranked run file", "embedding": "an embedding run"}


# ------------------------------------------------------------------------------------------ messages


def flash(kind: str, text: str, prefix: str = "Not done", *, where: str | None = None) -> None:
    """A message shown on the Data page's next run: next to the section ``where`` (its uploader or form,
    :func:`show_flash`), at the top of the page without one (workspace-wide changes)."""
    st.session_state.setdefault(FLASH, []).append((kind, text, prefix, where))


def show_flash(where: str | None = None) -> list[str]:
    """Show (once) the messages of section ``where`` (None: those of no section); returns the texts of the warnings
    shown (a section that also shows standing warnings leaves those out, so each is said once)."""
    pending = st.session_state.get(FLASH, [])
    mine = [m for m in pending if m[3] == where]
    if not mine:
        return []
    st.session_state[FLASH] = [m for m in pending if m[3] != where]
    for kind, text, prefix, _ in mine:
        if kind == "error":
            ui.show_error(text, prefix=prefix)
        elif kind == "warning":
            ui.show_warning(text)
        else:
            st.success(ui.md_escape(text), icon=":material/check_circle:")
    return [text for kind, text, _, _ in mine if kind == "warning"]


def report(result: P.Written, done: str, *, failed: str = "nothing was changed", prefix: str = "Not done",
           where: str | None = None) -> bool:
    """Flash what :func:`dashboard.persist.write` did (next to section ``where``); True when it was done."""
    if result.ok:
        flash("ok", done + (f" (saved in the new workspace {result.created!r}; the demo is unchanged)"
                            if result.created else ""), where=where)
    else:
        flash("error", f"{result.error} ({failed})", prefix, where=where)
    return result.ok


def write_collecting(change: Callable[[W.Workspace], Any], *, on_demo: str = "copy") -> tuple[P.Written, list[str]]:
    """:func:`dashboard.persist.write` of ``change``, with the evalcore warnings the change gave (each once, in order)
    collected instead of going to the server's log (:func:`evalcore.errors.collected_warnings`)."""
    from evalcore.errors import collected_warnings

    told: list[str] = []

    def run(ws: W.Workspace) -> Any:
        with collected_warnings() as got:
            try:
                return change(ws)
            finally:
                told[:] = got

    result = P.write(run, on_demo=on_demo)
    return result, list(dict.fromkeys(told))


def flash_warnings(told: Sequence[str], *, where: str | None) -> None:
    """Flash each of the warnings ``told`` (once) next to section ``where`` (:func:`show_flash`)."""
    for text in dict.fromkeys(told):
        flash("warning", text, where=where)


def write_telling(change: Callable[[W.Workspace], Any], done: str, *, where: str | None, on_demo: str = "copy",
                  failed: str = "nothing was changed", prefix: str = "Not done", told: Sequence[str] = ()) -> bool:
    """:func:`dashboard.persist.write` of ``change`` and :func:`report` of it, then the evalcore warnings the change
    gave, flashed next to section ``where`` instead of going to the server's log (a change that failed: its error
    only); ``told``: warnings already given while preparing the change (reading a form's values), flashed first.
    Making another ground truth the active one warns about the stored runs that answer none of its queries
    (:func:`evalcore.workspace.idchecks.warn_runs_answering_none`: the first few named, then "and N more"), which
    the user changing it must see; a file read with comment lines or all-zero vectors says so. Shown as plain text
    (:func:`dashboard.ui.show_warning`)."""
    result, got = write_collecting(change, on_demo=on_demo)
    ok = report(result, done, failed=failed, prefix=prefix, where=where)
    if ok:
        flash_warnings([*told, *got], where=where)
    return ok


# ------------------------------------------------------------------------------------------ uploads


def uploader_key(base: str) -> str:
    """The current key of an uploader (a new one each time what it held was stored)."""
    n = st.session_state.get(ROUNDS, {}).get(base, 0)
    return base if n == 0 else f"{base}_{n}"


def empty_uploader(base: str) -> None:
    rounds = st.session_state.setdefault(ROUNDS, {})
    rounds[base] = rounds.get(base, 0) + 1


def new_files(files: Any) -> list[W.Blob]:
    """Uploaded files not seen before (by upload id), as blobs (bytes + SHA-256), for this run only."""
    if files is None:
        return []
    files = files if isinstance(files, list) else [files]
    out = []
    seen = st.session_state.setdefault(CONSUMED, set())
    for f in files:
        fid = getattr(f, "file_id", None) or f"{f.name}:{f.size}"
        if fid in seen:
            continue
        seen.add(fid)
        out.append(W.Blob.of(f.name, f.getvalue()))
    return out


def blob_of(f: Any) -> W.Blob | None:
    return None if f is None else W.Blob.of(f.name, f.getvalue())


def _failed_text() -> str:
    return "the demo was kept" if P.active() == P.DEMO else "nothing was changed"


def store_ground_truth(blob: W.Blob, fmt: str = "auto") -> bool:
    """A judgments file as the ground truth (on the demo: in a new, empty workspace); vectors there are said to
    belong to the other choice, a reference model's embeddings."""
    failed = "nothing was changed" + ("; these are vectors: choose \"Ground truth from: a reference model's "
                                      "embeddings\" above" if W.looks_like_embeddings(blob) else "")
    return write_telling(lambda ws: ws.set_ground_truth(blob.data, source_name=blob.name, format=fmt),
                         f"loaded ground truth {blob.name}", on_demo="new", failed=failed, prefix="Not loaded",
                         where="gt")


def use_ground_truth(gt_id: int, label: str) -> bool:
    """Make an earlier ground truth of the workspace the active one again."""
    return write_telling(lambda ws: ws.use_ground_truth(gt_id), f"the ground truth is {label} again", where="gt")


def earlier_ground_truths() -> list[dict]:
    """The workspace's inactive ground truths, newest first (none on the demo)."""
    ws = P.workspace()
    return [] if ws.read_only else [g for g in ws.ground_truths() if not g["active"]]


def store_reference(blob: W.Blob, ids: W.Blob | None) -> bool:
    return write_telling(lambda ws: ws.set_reference(blob.data, None if ids is None else ids.data,
                                                     source_name=blob.name),
                         f"reference ground truth {blob.name}: its nearest items are the relevant ones", on_demo="new",
                         prefix="Not loaded", where="gt")


#: How files whose very bytes the workspace already holds as a run are named (not stored a second time)
ALREADY = "already in the workspace, not stored again: "


def _add_run(ws: W.Workspace, blob: W.Blob, aspect: str | None, fmt: str) -> tuple[str, list[str], bool]:
    """Store the file as a run; returns its name, the runs already holding these very bytes and whether it was
    stored (False: a file already stored, under whatever name, is not stored again:
    :meth:`evalcore.workspace.Workspace.same_file_run`, ``same_embedding_run`` for embeddings)."""
    aspect = aspect if aspect in ws.aspects() else None
    if W.looks_like_embeddings(blob):  # vectors dropped here: an item-to-item embedding run
        out = add_embedding_file(ws, blob.data, file=blob.name, aspect=aspect, source_name=blob.name)
    else:
        out = add_run_file(ws, blob.data, file=blob.name, sha256=blob.sha256, format=fmt, aspect=aspect,
                           source_name=blob.name)
    return out.run, list(out.same), out.new


def added_text(file_name: str, run_name: str, same: list[str], *, embeddings: bool, new: bool = True) -> str:
    """How an uploaded file was added: under its own name, or another one (the name was taken), and whether
    the workspace already held its very content (``new`` False: a ranked file not stored again)."""
    if not new:
        return f"{file_name} (the same file as run {run_name!r})"
    text = file_name + (" (embeddings, item-to-item)" if embeddings else "")
    if run_name != W.file_stem(file_name):
        text += f" as run {run_name!r}"
    if same:
        text += f" (the same file as run {same[0]!r})"
    return text


def store_runs(blobs: list[W.Blob], aspect: str | None, fmt: str = "auto") -> None:
    """Run files, one run each (``.npy``/``.npz``: item-to-item embedding runs); a file that does not load
    is reported next to the uploader and nothing of it is stored."""
    added, kept, told = [], [], []
    for blob in blobs:
        failed = _failed_text()
        result, got = write_collecting(lambda ws, blob=blob: _add_run(ws, blob, aspect, fmt), on_demo="new")
        if result.ok:
            run_name, same, new = result.value
            (added if new else kept).append(added_text(blob.name, run_name, same,
                                                       embeddings=W.looks_like_embeddings(blob), new=new))
            told += got  # (comment lines skipped, all-zero vectors: said after what was added)
            if result.created:
                flash("ok", f"created the workspace {result.created!r} for your files; the demo is unchanged",
                      where="runs")
        else:
            flash("error", f"{result.error} ({failed})", "Not loaded", where="runs")
    if added:
        flash("ok", "added run file(s) " + ", ".join(added), where="runs")
    if kept:
        flash("ok", ALREADY + ", ".join(kept), where="runs")
    flash_warnings(told, where="runs")


def store_embedding_run(name: str | None, docs: W.Blob, ids: W.Blob | None, queries: W.Blob | None,
                        query_ids: W.Blob | None, aspect: str | None) -> bool:
    """The embedding form's run: without a run name, files the workspace already holds as an embedding run (the
    same bytes: :meth:`evalcore.workspace.Workspace.same_embedding_run`) are that run, said as for ranked files."""
    def change(ws: W.Workspace) -> Any:
        return add_embedding_file(ws, docs.data, None if ids is None else ids.data, file=docs.name, name=name,
                                  query_embeddings=None if queries is None else queries.data,
                                  query_ids=None if query_ids is None else query_ids.data,
                                  source_name=docs.name, query_source_name=None if queries is None else queries.name,
                                  aspect=aspect if aspect in ws.aspects() else None)

    failed = _failed_text()
    result, told = write_collecting(change, on_demo="new")
    if result.ok and not result.value.new:
        flash("ok", ALREADY + _files_text(docs.name, queries) + f" (the same {_files_word(queries)} as run "
              f"{result.value.run!r})", where="embedding")
        return True
    ok = report(result, f"added embedding run {result.value.run if result.ok else name} (from {docs.name}); it is "
                "ranked when first needed", failed=failed, prefix="Not loaded", where="embedding")
    if ok:
        flash_warnings(told, where="embedding")  # all-zero vectors: said when read, not when ranked
    return ok


def _files_text(docs: str, queries: Any) -> str:
    """The files of an embedding run, as the messages name them (``docs.npz`` or ``docs.npy and queries.npy``)."""
    qname = getattr(queries, "name", queries)
    return docs if qname is None else f"{docs} and {qname}"


def _files_word(queries: Any) -> str:
    return "file" if queries is None else "files"


SIDE_SETTERS: dict[str, Callable[[W.Workspace], Callable[..., None]]] = {
    "domains": lambda ws: ws.set_domains, "metadata": lambda ws: ws.set_metadata,
    "queries": lambda ws: ws.set_query_texts}


def store_side(role: str, blob: W.Blob) -> bool:
    """A side file (domains, metadata, query texts); on the demo, into a copy of it."""
    return write_telling(lambda ws: SIDE_SETTERS[role](ws)(blob.data, name=blob.name), f"loaded {blob.name}",
                         prefix="Not loaded", where=f"side:{role}")


# ------------------------------------------------------------------------------------------ a local path


def _file(text: str | None, what: str, *, required: bool = True) -> Path | None:
    text = (text or "").strip()
    if not text:
        if required:
            raise OptionError(f"give the path of the {what}")
        return None
    path = Path(text).expanduser()
    folder = ("; a folder or a glob (/data/runs/*.trec) of ranked run files is read with \"What: a ranked run "
              "file\", one run per file; a folder or a glob of embedding shards is for the command line: rank it "
              "with `python -m evalcore topk --docs DIR ...` and add the TREC run it writes, or record it with "
              "`python -m evalcore evaluate --emb NAME=DIR ... --workspace WS`")
    if path.is_dir():
        raise OptionError(f"{text!r} is a folder, not a file (the {what}; a path on the server's disk){folder}")
    if not path.is_file():
        raise OptionError(f"no file at {text!r} (the {what}; a path on the server's disk)"
                          + (folder if any(ch in text for ch in "*?[") else ""))
    return path


PATH_KIND = "path_kind"
_PATH_KIND_GT = "_path_kind_for_ground_truth"


def default_path_kind(gt_key: str | None) -> None:
    """Before the path form's "What" radio is drawn: a ranked run file once a ground truth is stored (what is added
    next), set each time another ground truth becomes the active one; the user's own choice is kept meanwhile."""
    if gt_key is not None and st.session_state.get(_PATH_KIND_GT) != gt_key:
        st.session_state[_PATH_KIND_GT] = gt_key
        st.session_state[PATH_KIND] = "ranked"


#: The failed files of a folder shown each with its own error; beyond, the others are named in one message.
FAILURES_SHOWN = 10


def _short(items: Sequence[str], n: int = 8) -> str:
    return ", ".join(items[:n]) + (f" and {len(items) - n:,} more" if len(items) > n else "")


def add_run_folder(path: str, *, name: str | None, aspect: str | None, fmt: str) -> bool:
    """Every ranked run file of a folder or glob on the server's disk, one run each
    (:meth:`evalcore.workspace.Workspace.add_run_files`): what was added, each file that failed (its own error),
    what was left out, and the files' warnings, next to the path form; a progress bar while the files are read."""
    if name:
        flash("error", f"a run name ({name!r}) names one run: the runs of a folder are named after their files "
              "(rename them below once added); clear the name", "Not loaded", where="path")
        return False
    bar = st.progress(0.0, text="reading the run files…")

    def step(done: int, total: int, file: str) -> None:
        bar.progress(done / max(total, 1), text=f"{done:,} of {total:,} run files read"
                     + (f": {Path(file).name}" if file else ""))

    result, told = write_collecting(lambda ws: ws.add_run_files(
        path.strip(), format=fmt, aspect=aspect if aspect in ws.aspects() else None, progress=step), on_demo="new")
    bar.empty()
    if not result.ok:
        flash("error", f"{result.error} ({_failed_text()})", "Not loaded", where="path")
        return False
    out = result.value
    if result.created:
        flash("ok", f"created the workspace {result.created!r} for your files; the demo is unchanged", where="path")
    new = [a for a in out.added if a.new]
    if new:
        flash("ok", f"added {len(new):,} run(s) from {out.spec}: "
              + _short([added_text(Path(a.file).name, a.run, list(a.same), embeddings=False) for a in new]),
              where="path")
    kept = [a for a in out.added if not a.new]
    if kept:
        flash("ok", ALREADY + _short([added_text(Path(a.file).name, a.run, [], embeddings=False, new=False)
                                      for a in kept]), where="path")
    for f in out.failed[:FAILURES_SHOWN]:  # each file's own error (its path and line); the other files are added
        flash("error", f.error, f"Not loaded ({Path(f.file).name}; the other files are added)", where="path")
    if len(out.failed) > FAILURES_SHOWN:  # (not a wall of errors: the rest named in one)
        flash("error", f"{len(out.failed) - FAILURES_SHOWN:,} more run files did not load: "
              + _short([Path(f.file).name for f in out.failed[FAILURES_SHOWN:]], 20), "Not loaded", where="path")
    if out.left_out:
        flash("warning", f"left out {len(out.left_out):,} file(s) that are not taken as run files: "
              + _short([f"{Path(p).name} ({why})" for p, why in out.left_out]), where="path")
    flash_warnings(told, where="path")
    return True


def add_from_path(kind: str, path: str, *, ids: str | None = None, queries: str | None = None,
                  query_ids: str | None = None, name: str | None = None, aspect: str | None = None,
                  fmt: str = "auto") -> bool:
    """Add a file from the server's disk, read in place (validated as an upload would be); for ranked runs, a
    folder or a glob of run files too (:func:`add_run_folder`)."""
    if kind == "ranked" and W.is_file_set(path or ""):
        return add_run_folder(path, name=name, aspect=aspect, fmt=fmt)
    try:
        main = _file(path, "file")
        ids_p = _file(ids, "ids file", required=False)
        q_p = _file(queries, "query embeddings", required=False)
        qids_p = _file(query_ids, "query ids file", required=False)
    except EvalcoreError as e:
        flash("error", str(e), "Not loaded", where="path")
        return False
    label = main.name
    if kind == "ranked" and not name:  # a file already stored (its stem or TREC tag as name): not stored again
        from evalcore.workspace.artifacts import sha256_file

        try:
            ws_now = P.workspace()
            stored = ws_now.same_file_run(sha256_file(main), aspect=aspect if aspect in ws_now.aspects() else None)
        except (OSError, EvalcoreError):  # (said by the write below, as before)
            stored = None
        if stored is not None:
            flash("ok", ALREADY + added_text(label, stored, [stored], embeddings=False, new=False), where="path")
            return True
    if kind == "embedding" and not name:  # the same embedding files again (their bytes): not stored again either
        try:
            ws_now = P.workspace()
            stored = ws_now.same_embedding_run(main, ids_p, query_embeddings=q_p, query_ids=qids_p,
                                               aspect=aspect if aspect in ws_now.aspects() else None)
        except (OSError, EvalcoreError):  # (said by the write below, as before)
            stored = None
        if stored is not None:
            flash("ok", ALREADY + _files_text(label, None if q_p is None else q_p.name)
                  + f" (the same {_files_word(q_p)} as run {stored!r})", where="path")
            return True

    def change(ws: W.Workspace) -> Any:
        if kind == "qrels":
            return ws.set_ground_truth(main, format=fmt)
        if kind == "reference":
            return ws.set_reference(main, ids_p)
        run_name = W.free_name(name or W.file_stem(label), ws.run_names())
        asp = aspect if aspect in ws.aspects() else None
        if kind == "ranked":
            return ws.add_run(run_name, main, format=fmt, aspect=asp)
        return ws.add_embedding_run(run_name, main, ids_p, query_embeddings=q_p, query_ids=qids_p, aspect=asp)

    # the stored runs answering none of a new ground truth's queries, comment lines, all-zero vectors: said here
    return write_telling(change, f"added {label} from its path ({PATH_KINDS[kind]})", on_demo="new",
                         failed=_failed_text(), prefix="Not loaded", where="path")


# ------------------------------------------------------------------------------------------ edits (callbacks)


def _name_of(uid: str) -> str | None:
    src = S.get_ws().run_by_uid(uid)
    return None if src is None else src.name


def cb_remove_run(uid: str) -> None:
    name = _name_of(uid)
    if name is None:
        return
    result = P.write(lambda ws: ws.remove_run(name))
    gone = [str(n) for n in (result.value or []) if str(n) != name] if result.ok else []
    report(result, f"removed {name}" + (f" and the fused run(s) made of it: {', '.join(gone)}" if gone else ""),
           where="loaded")


def cb_rename(uid: str) -> None:
    name, new = _name_of(uid), st.session_state[f"name_{uid}"]
    if name is None or new == name:
        return
    if not report(P.write(lambda ws: ws.rename_run(name, new)), f"renamed {name} to {new}", where="loaded"):
        st.session_state.pop(f"name_{uid}", None)
        return
    follow_rename(st.session_state, name, new)


#: The shared selections that hold run names (one, or a list).
RUN_SELECTIONS = selections.RUN_SELECTIONS


def follow_rename(state: Any, old: str, new: str) -> None:
    """The selections naming run ``old`` name ``new`` (run A on Queries stays that run, renamed)."""
    for key in RUN_SELECTIONS:
        value = state.get(key)
        if value == old:
            state[key] = new
        elif isinstance(value, list) and old in value:
            state[key] = [new if v == old else v for v in value]
    fusion = state.get(P.SEL_FUSION)
    if isinstance(fusion, dict):  # the Fusion page's runs and their weights (by run name)
        runs, weights = fusion.get("runs"), fusion.get("weights")
        state[P.SEL_FUSION] = {**fusion, **({"runs": [new if v == old else v for v in runs]}
                                            if isinstance(runs, list) else {}),
                               **({"weights": {new if k == old else k: w for k, w in weights.items()}}
                                  if isinstance(weights, dict) else {})}


def cb_run_info(uid: str, field: str) -> None:
    """Model, version label, step or aspect of a run, saved with :meth:`Workspace.set_run_info`."""
    name, value = _name_of(uid), st.session_state[f"{field}_{uid}"]
    if name is None:
        return
    if isinstance(value, str):
        value = value.strip() or None

    def change(ws: W.Workspace) -> None:
        ws.set_run_info(name, **{field: value})
        if field == "model" and value is not None:  # this label and another differing only in case: said here
            info = ws.runs()
            same = info[info["model"].map(lambda m: isinstance(m, str) and m.casefold() == value.casefold())]
            with contextlib.suppress(EvalcoreError):  # (a check for its warning: the run info is saved already)
                W.version_series(same, min_versions=1)

    if not write_telling(change, f"{name}: {field} saved", where="loaded"):
        st.session_state.pop(f"{field}_{uid}", None)


def cb_remove_side(role: str) -> None:
    report(P.write(lambda ws: ws.remove_side_file(role)), f"removed the {role} file", where=f"side:{role}")


def cb_open_demo() -> None:
    P.switch(P.DEMO)


def cb_empty_workspace() -> None:
    try:
        name = P.create(P.unique_name("my-workspace"))
    except (EvalcoreError, OSError) as e:
        flash("error", str(e))
        return
    flash("ok", f"created the empty workspace {name!r}; the demo is unchanged")


def cb_copy_demo() -> None:
    """Copy the session's read-only workspace (the demo, or a folder that cannot be written) into a new workspace of
    the root, which the session shows from then on."""
    what = "the demo" if P.active() == P.DEMO else "this workspace"
    try:
        name = P.create(P.copy_name(), copy_of_current=True)
    except (EvalcoreError, OSError) as e:
        flash("error", str(e))
        return
    flash("ok", f"copied {what} into the new workspace {name!r}: it can be edited")


def save_settings(new: W.Settings, told: Sequence[str] = ()) -> bool:
    """Store the settings (on the demo: into a copy of it); ``told``: the warnings reading them gave (a metric name
    renamed, a trec_eval group holding measures evalcore does not compute), flashed next to the form."""
    return write_telling(lambda ws: ws.set_settings(new), "settings applied", where="settings", told=told)


#: Runs the Data page edits at once: beyond, a search and pages (137 runs drew 137 boxes of six widgets each and
#: read every run for its counts: 13-23 s per visit at 5,000 queries).
RUNS_PER_PAGE = 10


def runs_matching(sources: list[W.RunSource], text: str | None) -> list[W.RunSource]:
    """The runs whose name, model or version label contains ``text`` (case-insensitive; blank: every run)."""
    t = (text or "").strip().lower()
    if not t:
        return list(sources)
    return [r for r in sources if any(t in (v or "").lower() for v in (r.name, r.model, r.version))]


@st.cache_data(show_spinner=False, max_entries=1024)
def run_preview(key: str, _run: Any) -> Any:
    """The first rows of a run (the Data page's preview), once per server and run content ``key``: not in the
    session's memo, where paging through the runs of a big workspace added an entry per run and pushed the
    pages' work out."""
    return _run.to_frame().head(8)



def run_counts(ctx: S.Context, name: str, run: Any) -> str:
    """The Data page's counts of run ``name``: its queries and ranked items (plain text).

    With a query sample (Settings) a ranked file still holds every query it was written for, while an embedding run is
    ranked for the sampled queries only: "300 queries" beside "100 queries" said nothing of why. So each says which:
    "300 queries in the file, 100 of them in the query sample (of the ground truth's 300, seed 42)", or "100 queries
    (ranked for the query sample only: ...)"; without a sample, "300 queries"."""
    items = ui.plural(len(run), "ranked item")
    qrels = ctx.qrels.get(S.aspect_of(ctx, name)) if ctx.aspects else next(iter(ctx.qrels.values()), None)
    if qrels is None or not ctx.settings.sample_size or qrels.n_queries >= ctx.n_universe:
        return f"{ui.plural(run.n_queries, 'query', 'queries')}, {items}"
    sample = f"the query sample (of the ground truth's {ctx.n_universe:,}, seed {ctx.settings.seed})"
    evaluated = set(map(str, qrels.query_ids))
    inside = sum(str(q) in evaluated for q in run.query_ids)
    if inside == run.n_queries:
        return f"{ui.plural(run.n_queries, 'query', 'queries')} (ranked for {sample} only), {items}"
    return f"{ui.plural(run.n_queries, 'query', 'queries')} in the file, {inside:,} of them in {sample}, {items}"
