"""The dashboard on the persistent store: which workspace a session shows, reading it, writing to it.

* **Where the workspace comes from.** A session starts on the workspace its URL names
  (``?ws=NAME``; :data:`DEMO` is the built-in read-only demo); without one, on the default:
  ``EVALCORE_WORKSPACE`` when set (created when missing), else the ``default`` workspace of
  the root folder when it holds anything, else the demo (so a fresh machine opens on real
  charts). Named workspaces live in :func:`evalcore.workspace.default_root`
  (``EVALCORE_WORKSPACES``); ``EVALCORE_WORKSPACE``'s folder is listed with them by its name.
* **Reading.** Every run starts with :func:`sync`: one query of the workspace's change counter
  (:attr:`~evalcore.workspace.Workspace.generation`); the session's
  :class:`~evalcore.workspace.Snapshot` is read again only when it changed (by this session,
  another tab, the CLI or a training script). Open workspaces and snapshots are cached once
  per server (``st.cache_resource``), and the snapshot holds no bytes: artifacts are read
  from the workspace, embeddings memory-mapped, so N tabs on one workspace cost one copy.
* **Writing.** Every change goes to the workspace as it is made (:func:`write`); the demo is
  read-only, so a change made on it first creates a writable workspace — a copy of the demo,
  or an empty one for the user's own files — and the session moves there. While another process writes to the
  workspace, a change waits visibly (Cancel) and kept selections are saved later (:mod:`dashboard.busy`). A workspace whose
  folder this user cannot write opens read-only too (:func:`locked`): the pages say so and
  why, disable what would change it and offer a copy; :func:`write` refuses its changes.
* **Selections** (metric@k, runs, baseline, query, test...) are mirrored into the URL
  (:data:`URL_KEYS`; the page is the URL's path), so a link pasted into another tab opens the
  same view, and into the workspace's ``ui_state``, so a workspace opened again (another tab,
  after a restart) comes back where it was left. The URL wins when it names a selection. A
  read-only workspace (the demo) keeps them in the user's data folder instead
  (:mod:`evalcore.workspace.localstate`; when that cannot be written, they are simply not kept). Kept selections
  carry :data:`dashboard.legacy.FORMAT_KEY`: those of an older dashboard, which kept some defaults as choices, are
  told apart where a value can say it (:mod:`dashboard.legacy`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard import busy, legacy, selections
from dashboard import state as S
from evalcore import workspace as W
from evalcore.errors import EvalcoreError, WorkspaceError
from evalcore.workspace import localstate
from evalcore.workspace.locations import ENV_WORKSPACE, check_name, is_workspace
from evalcore.workspace.store import folder_writable
from evalcore.workspace.stored import snapshot_of

#: The built-in demo's name in the URL and the picker (never a workspace name: ':' is not allowed in one).
DEMO = ":demo"
DEMO_LABEL = "Built-in demo (read-only)"
ACTIVE = "_ws_active"  # the session's workspace: a name, or DEMO
SEEN = "_ws_seen"  # (folder, generation) the session's snapshot was read at
PENDING = "_ws_url_selections"  # selections named by the URL the session started with (applied once)
SAVED = "_ws_saved_selections"  # what was last written to the workspace's ui_state
NOTICES = "_ws_notices"  # messages for the sidebar: (kind, text)
DROPPED = "_ws_dropped_choices"  # the user's choices trimmed when the workspace was opened (selections.dropped_choices)
MEMORY_DEMO = ("memory", -1)  # SEEN of the in-memory demo (when the stored one cannot be built)
#: Seconds between two checks of the change counter while the Data (or Versions) page is open.
POLL_SECONDS = 3.0

URL_WS, URL_METRIC, URL_RUN, URL_BASELINE, URL_QUERY = "ws", "metric", "run", "baseline", "query"
#: The Versions page's selections in the URL: the model, its reference version, versions A and B.
URL_VERSIONS = {"model": S.SEL_VERSION_MODEL, "reference": S.SEL_VERSION_REFERENCE, "version_a": S.SEL_VERSION_A,
                "version_b": S.SEL_VERSION_B}
#: Query parameters of the URL besides the workspace: metric@k, runs A and B, the baseline, the query, versions.
URL_KEYS = (URL_METRIC, URL_RUN, URL_BASELINE, URL_QUERY, *URL_VERSIONS)
#: The Fusion page's set-up, one dict (runs, method, weights by run, c, top-N, the search's options; dashboard.kept).
SEL_FUSION = "sel_fusion"
#: The Fusion page's last weight search: its result under the key of its inputs (dashboard.analysis.weight_search),
#: so a reload or a restarted server shows it without searching again.
SEL_FUSION_SEARCH = "sel_fusion_search"
#: Shared selections kept in the workspace's ui_state (the URL carries metric@k, runs, baseline, query, versions).
SELECTIONS = (S.SEL_METRIC, S.SEL_K, S.SEL_RUN_A, S.SEL_RUN_B, S.SEL_BASELINE, S.SEL_QUERY, S.SEL_TEST,
              S.SEL_CORRECTION, S.SEL_INCLUDE_LOW, S.SEL_ASPECT, S.SEL_MIX_ASPECTS, S.SEL_IMAGE_FORMAT, S.SEL_CMP_RUNS,
              S.SEL_HSD_DESIGN, S.SEL_DOM_MIN_QUERIES, S.SEL_OV_COLUMNS, S.SEL_OV_CURVE_METRIC, S.SEL_OVERVIEW, S.SEL_AGREEMENT, S.SEL_VERSIONS_VIEW,
              S.SEL_QUERIES_VIEW, S.SEL_Q_SEARCH,
              SEL_FUSION, SEL_FUSION_SEARCH, *URL_VERSIONS.values())


# ------------------------------------------------------------------------------------------ where


def root() -> W.WorkspaceRoot:
    """The folder of named workspaces (``EVALCORE_WORKSPACES``, else the per-user data folder)."""
    return W.WorkspaceRoot()


def env_workspace() -> Path | None:
    """``EVALCORE_WORKSPACE``'s folder, when set."""
    env = os.environ.get(ENV_WORKSPACE)
    return Path(env).expanduser() if env else None


def names() -> list[str]:
    """The workspaces the picker offers: ``EVALCORE_WORKSPACE``'s first, then the root's, sorted."""
    env = env_workspace()
    out = root().names()
    if env is not None and is_workspace(env):
        out = [env.name, *[n for n in out if n != env.name]]
    return out


def path_of(name: str) -> Path:
    """The folder of workspace ``name`` (``EVALCORE_WORKSPACE``'s when it has that name)."""
    env = env_workspace()
    if env is not None and name == env.name:
        return env
    return root().path_of(name)


def is_env(name: str) -> bool:
    """Whether ``name`` is ``EVALCORE_WORKSPACE``'s workspace (the dashboard does not rename or delete it)."""
    env = env_workspace()
    return env is not None and name == env.name


def default_name() -> str:
    """The workspace a session opens without a URL (see the module docstring)."""
    env = env_workspace()
    if env is not None:
        try:
            W.Workspace.open(env).close()  # the user named it: created when missing
            return env.name
        except (EvalcoreError, OSError) as e:
            notice("error", f"EVALCORE_WORKSPACE ({env}) cannot be opened: {e}; showing the built-in demo.")
            return DEMO
    path = root().path_of("default")
    if is_workspace(path):
        try:
            ws = _opened(str(path))
            if ws.ground_truth_record() is not None or ws.run_names():
                return "default"
        except EvalcoreError:
            pass
    return DEMO


def unique_name(base: str) -> str:
    """``base``, or ``base-2``, ``base-3``... not yet used in the root."""
    taken = set(names())
    name, i = base, 2
    while name in taken or root().path_of(name).exists():
        name, i = f"{base}-{i}", i + 1
    return name


# ------------------------------------------------------------------------------------------ open, cached


@st.cache_resource(show_spinner=False, max_entries=32)
def _open(path: str, writable: bool = True) -> W.Workspace:
    """The workspace in folder ``path``, opened once per server for each ``writable`` (whether this process may
    write the folder; :func:`_opened` gives it): part of the key, so that a folder made writable (or no longer
    writable) by its owner is opened again, read-only or not, on the next run that asks for it."""
    return W.Workspace.open(path, create=False)


def _opened(path: str) -> W.Workspace:
    """:func:`_open` of ``path`` as its folder can be written now: one ``access`` call, on every run that asks for
    the workspace (before, the read-only state found at the first open held until the server restarted)."""
    return _open(path, folder_writable(Path(path)))


@st.cache_resource(show_spinner="Preparing the built-in demo…")
def _demo(seed: int) -> W.Workspace:
    return W.Workspace.demo(seed)


@st.cache_resource(show_spinner=False, max_entries=64)
def _snapshot(path: str, generation: int, demo_seed: int | None) -> W.Snapshot:
    ws = _demo(demo_seed) if demo_seed is not None else _opened(path)
    return snapshot_of(ws, demo_seed=demo_seed, generation=generation)


def forget_open_workspaces() -> None:
    """Drop the cached workspace objects (after a folder was created, renamed or deleted)."""
    _open.clear()


def workspace(name: str | None = None) -> W.Workspace:
    """The open workspace ``name`` (default: the session's); :class:`WorkspaceError` when it is gone."""
    name = st.session_state.get(ACTIVE, DEMO) if name is None else name
    if name == DEMO:
        return _demo(S.DEMO_SEED)
    path = path_of(name)
    if not is_workspace(path):
        raise WorkspaceError(f"there is no workspace named {name!r} (any more)", file=str(path))
    return _opened(str(path))


def active() -> str:
    return st.session_state.get(ACTIVE, DEMO)


def read_only() -> bool:
    """Whether the session's workspace cannot be changed here: the built-in demo (a change made on it goes into a
    copy of it, :func:`write`) or a workspace whose folder cannot be written (:func:`locked`)."""
    return active() == DEMO or locked() is not None


def locked() -> str | None:
    """Why the session's workspace cannot be changed here, as a phrase, when it is not the demo and cannot be
    (its folder cannot be written by this user: a colleague's shared folder, a read-only mount, an unpacked
    archive; :attr:`~evalcore.workspace.core.WorkspaceCore.read_only_reason`); None when it can be changed, or it is
    the demo. The pages then disable every control that would change it and offer a copy (:func:`copy_name`);
    what only reads (views, downloads, the selections kept in the user's data folder) works as on any workspace."""
    if active() == DEMO:
        return None
    try:
        ws = workspace()
    except (EvalcoreError, OSError):
        return None
    return ws.read_only_reason if ws.read_only else None


def locked_text(reason: str) -> str:
    """The one line that says a workspace is read-only, why, and the way to change it (plain text)."""
    return (f"this workspace is read-only ({reason}): copy it to a workspace you can change "
            "(\"Copy this workspace to a new workspace\" on the Data page, or under Manage workspaces)")


def copy_name() -> str:
    """A free name for a copy of the session's workspace: ``demo-copy``, ``NAME-copy`` (then ``-2``, ``-3``...)."""
    name = active()
    if name != DEMO:
        try:
            return unique_name(check_name(f"{name}-copy"))
        except WorkspaceError:  # (too long with the suffix)
            pass
    return unique_name("demo-copy" if name == DEMO else "workspace-copy")


# ------------------------------------------------------------------------------------------ sessions


def notice(kind: str, text: str) -> None:
    """A message for the sidebar (shown once)."""
    st.session_state.setdefault(NOTICES, []).append((kind, text))


def _url_selections() -> dict[str, Any]:
    """The selections the URL names (metric@k, runs, baseline, query)."""
    qp = st.query_params
    out: dict[str, Any] = {}
    label = qp.get(URL_METRIC)
    if label:
        metric, _, k = label.rpartition("@")
        if metric and k.isdigit():
            out[S.SEL_METRIC], out[S.SEL_K] = metric, int(k)
        else:
            out[S.SEL_METRIC], out[S.SEL_K] = label, 0
    runs = qp.get_all(URL_RUN)
    for key, value in zip((S.SEL_RUN_A, S.SEL_RUN_B), runs, strict=False):
        out[key] = value
    for param, key in ((URL_BASELINE, S.SEL_BASELINE), (URL_QUERY, S.SEL_QUERY), *URL_VERSIONS.items()):
        if qp.get(param):
            out[key] = qp.get(param)
    return out


def _start_session() -> None:
    state = st.session_state
    wanted = st.query_params.get(URL_WS)
    name = None
    if wanted:
        try:
            if wanted == DEMO or is_workspace(path_of(wanted)):
                name = wanted
        except EvalcoreError:
            pass
        if name is None:
            notice("warning", f"There is no workspace named {wanted!r}; showing the default one.")
    state[ACTIVE] = name or default_name()
    state[PENDING] = _url_selections()


def _restore_selections(ws: W.Workspace) -> None:
    """Selections of a workspace just opened in this session: its ui_state, then what the URL names.

    What it kept is trimmed first (:func:`_trim_kept`): selections of runs, a model, an aspect or a query gone
    are dropped, and so written back; those that were the user's choices (:data:`DROPPED`) are said once where they
    were made (:func:`dashboard.ui.no_longer_offered`), unless the URL names another."""
    state = st.session_state
    for key in SELECTIONS:
        state.pop(key, None)
    state[DROPPED], state[legacy.DROPPED], state[SAVED] = {}, {}, {}  # (SAVED: what is stored, when the trim is not)
    try:
        kept = _trim_kept(ws)
        saved = {k: v for k, v in kept.items() if k in SELECTIONS}
    except EvalcoreError:
        kept, saved = {}, {}
    state[SAVED] = state.get(SAVED) or {**saved, **({legacy.FORMAT_KEY: legacy.FORMAT}
                                                    if kept.get(legacy.FORMAT_KEY) == legacy.FORMAT else {})}
    pending = state.pop(PENDING, {})
    state[DROPPED] = {k: v for k, v in state[DROPPED].items() if k not in pending}
    saved.update(pending)
    for key, value in saved.items():
        state[key] = value


def _trim_kept(ws: W.Workspace) -> dict[str, Any]:
    """The selections ``ws`` keeps, without those referring to things gone (:func:`dashboard.selections.trimmed`),
    the difference written back (best effort); a read-only workspace's are in the user's data folder, where the
    selections of workspaces whose folder is gone are forgotten at the same time
    (:func:`evalcore.workspace.localstate.forget_missing`)."""
    if ws.read_only:
        localstate.forget_missing()
    kept = localstate.read(_local_key(ws)) if ws.read_only else ws.ui_state()
    if not kept:
        return kept
    try:
        records = ws.run_records()
        aspects = ws.aspects()
        universes = [ws.query_universe(a) for a in (aspects or (None,))]
        queries = None if any(u is None for u in universes) else {str(q) for u in universes for q in u[0].tolist()}
        trimmed = selections.trimmed(kept, known=SELECTIONS, runs=[r.name for r in records],
                                     models=[r.model for r in records if r.model], aspects=aspects, queries=queries,
                                     fusion=SEL_FUSION, fusion_search=SEL_FUSION_SEARCH)
        # an older dashboard's: what may have been its defaults is dropped, said where it was (dashboard.legacy)
        maybe = legacy.maybe_defaults(trimmed, records, fusion=SEL_FUSION) if legacy.is_legacy(kept) else None
    except (EvalcoreError, OSError):
        return kept
    st.session_state[DROPPED] = selections.dropped_choices(kept, trimmed, fusion=SEL_FUSION)
    if maybe is not None:
        st.session_state[legacy.DROPPED] = maybe
        trimmed = {**legacy.without(trimmed, maybe, fusion=SEL_FUSION), legacy.FORMAT_KEY: legacy.FORMAT}
    delta = selections.changes(kept, trimmed)
    if delta:
        try:
            if ws.read_only:
                localstate.write(_local_key(ws), delta)
            else:
                if not busy.save_selections(ws, delta):  # another process writing: publish saves it later
                    st.session_state[SAVED] = {k: v for k, v in kept.items() if k in SELECTIONS or k == legacy.FORMAT_KEY}
        except (EvalcoreError, OSError):
            pass  # the view's memory only: never an error for the user
    return trimmed


def sync() -> W.Snapshot:
    """At the start of every run: the session's snapshot, read again when its workspace changed on disk.

    A workspace that cannot be opened (deleted or renamed in another tab, damaged) is reported
    in the sidebar and the session moves to the default workspace.
    """
    state = st.session_state
    busy.forget_note()
    if ACTIVE not in state:
        _start_session()
    name = state[ACTIVE]
    try:
        ws = workspace(name)
        generation = ws.generation
    except (EvalcoreError, OSError) as e:
        forget_open_workspaces()
        gone, fallback = name, default_name() if name != DEMO else DEMO
        state[ACTIVE] = name = fallback if fallback != name else DEMO
        try:
            ws = workspace(name)
            generation = ws.generation
        except (EvalcoreError, OSError) as again:  # the demo could not be built (no writable cache folder...)
            if state.get(SEEN) != MEMORY_DEMO:
                notice("error", f"The built-in demo could not be stored ({again}); it is shown from memory.")
            state[S.WS_KEY], state[SEEN] = W.demo_workspace(S.DEMO_SEED), MEMORY_DEMO
            return state[S.WS_KEY]
        notice("error", f"The workspace {gone!r} cannot be opened ({e}); showing "
               + ("the built-in demo." if name == DEMO else f"{name!r}."))
    seen = (str(ws.path), generation)
    previous = state.get(SEEN)
    if previous != seen or S.WS_KEY not in state:
        state[S.WS_KEY] = _snapshot(str(ws.path), generation, S.DEMO_SEED if name == DEMO else None)
        if previous is not None:
            state.pop(S.CANCEL_KEY, None)  # new inputs: nothing is cancelled any more
        if previous is None or previous[0] != seen[0]:
            _restore_selections(ws)
        state[SEEN] = seen
    publish()
    return state[S.WS_KEY]


def changed_on_disk() -> bool:
    """Whether the session's workspace changed since its snapshot was read (one cheap query)."""
    seen = st.session_state.get(SEEN)
    if seen == MEMORY_DEMO:
        return False
    try:
        ws = workspace()
        return seen is None or (str(ws.path), ws.generation) != tuple(seen)
    except EvalcoreError:
        return True


def switch(name: str) -> None:
    """Show workspace ``name`` (or :data:`DEMO`) in this session from the next run on."""
    state = st.session_state
    state[ACTIVE] = name
    state.pop(SEEN, None)
    state.pop(S.WS_KEY, None)
    state.pop(PENDING, None)


# ------------------------------------------------------------------------------------------ URL and ui_state


def _metric_label() -> str | None:
    metric, k = st.session_state.get(S.SEL_METRIC), st.session_state.get(S.SEL_K)
    if not metric:
        return None
    from evalcore.aggregate import metric_at_k_label

    return metric_at_k_label(str(metric), int(k)) if isinstance(k, int) and k > 0 else str(metric)


def publish() -> None:
    """Mirror the session's workspace and selections into the URL and (writable workspaces) its ui_state.

    Cheap when nothing changed: one comparison each (called whenever a shared selection is set).
    """
    state = st.session_state
    if ACTIVE not in state:
        return
    runs = [str(r) for r in (state.get(S.SEL_RUN_A), state.get(S.SEL_RUN_B)) if r is not None]
    want = {URL_WS: [state[ACTIVE]], URL_METRIC: _one(_metric_label()), URL_RUN: runs,
            URL_BASELINE: _one(state.get(S.SEL_BASELINE)), URL_QUERY: _one(state.get(S.SEL_QUERY)),
            **{param: _one(state.get(key)) for param, key in URL_VERSIONS.items()}}
    qp = st.query_params
    changes = {k: v for k, v in want.items() if qp.get_all(k) != v}
    if changes:
        for k in [k for k, v in changes.items() if not v]:
            if k in qp:
                del qp[k]
        rest = {k: (v if len(v) > 1 else v[0]) for k, v in changes.items() if v}
        if rest:
            qp.update(rest)
    if state.get(SEEN) == MEMORY_DEMO:  # the demo could not be stored (nor built again on every change)
        return
    current = {k: _jsonable(state[k]) for k in SELECTIONS if state.get(k) is not None}
    current[legacy.FORMAT_KEY] = legacy.FORMAT  # (what wrote them: dashboard.legacy)
    saved = state.get(SAVED, {})
    if current != saved:
        delta = {k: current.get(k) for k in set(current) | set(saved) if current.get(k) != saved.get(k)}
        try:
            ws = workspace()
            if ws.read_only:  # the demo, a folder that cannot be written: into the user's data folder (best effort)
                localstate.write(_local_key(ws), delta)
            elif not busy.save_selections(ws, delta):  # another process writing: kept here, saved at a later run
                return
            state[SAVED] = current
        except (EvalcoreError, OSError):
            pass  # the view's memory only: never an error for the user


def _local_key(ws: W.Workspace) -> str:
    """The key of a read-only workspace's selections in the user's data folder (the demo: by its seed)."""
    return localstate.identity(ws.path, demo_seed=S.DEMO_SEED if active() == DEMO else None)


def _one(value: Any) -> list[str]:
    return [] if value is None or value == "" else [str(value)]


def _jsonable(value: Any) -> Any:
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value


# ------------------------------------------------------------------------------------------ writing


@dataclass(frozen=True)
class Written:
    """What :func:`write` did: ``ok`` or ``error`` (a message), the value of the change, and the
    workspace it created on the demo (None otherwise)."""

    ok: bool
    error: str | None = None
    value: Any = None
    created: str | None = None


def evaluation_to_record(evaluation: Any, snapshot: W.Snapshot) -> Any:
    """``evaluation`` marked with the inputs it was computed from (``snapshot``'s run records and ground truth),
    so that recording it later keeps them (a script re-recording a run or switching the ground truth meanwhile
    makes it stale, not current); a marked copy, as the memoised evaluation is shared between sessions.  The
    demo (recorded in a copy, whose ids differ) and inputs not yet stored are left unmarked: the catalogue
    is read when recording."""
    gt = snapshot.ground_truth
    if snapshot.is_demo or any(r.store is None for r in snapshot.runs) or (gt is not None and gt.store is None):
        return evaluation
    from evalcore.workspace.evaluations import mark_inputs

    return mark_inputs(evaluation.with_settings({}), records=[r.store.record for r in snapshot.runs],
                       ground_truth_id=None if gt is None else gt.store.record.id)


def write(change: Callable[[W.Workspace], Any], *, on_demo: str = "copy") -> Written:
    """Apply ``change`` to the session's workspace (one transaction; a failure changes nothing).

    On the read-only demo a writable workspace is made first: ``on_demo="copy"`` a copy of the
    demo (settings, fusions, side files, run info build on it), ``"new"`` an empty one (the
    user's own ground truth or runs); the session moves there. When the change fails, that new
    workspace is deleted again and the session stays on the demo. Any other read-only workspace
    (:func:`locked`) is refused, with the way to a copy: it may be large, and the user's files
    belong with its runs, so it is copied only when asked (its pages disable these changes).
    """
    created = None
    try:
        ws = workspace()
        if ws.read_only and active() != DEMO:
            return Written(False, locked_text(ws.read_only_reason or "it cannot be written"))
        if ws.read_only:
            created = unique_name("demo-copy" if on_demo == "copy" else "my-workspace")
            ws = root().copy(ws, created) if on_demo == "copy" else root().create(created)
            forget_open_workspaces()
        with busy.shown_while_waiting():  # another process writing: said, with a Cancel button (dashboard.busy)
            value = change(ws)
    except (EvalcoreError, OSError, MemoryError) as e:
        if created is not None:
            try:
                root().delete(created)
            except (EvalcoreError, OSError):
                pass
            forget_open_workspaces()
        return Written(False, "out of memory" if isinstance(e, MemoryError) else str(e))
    if created is not None:
        switch(created)
    sync()  # the session's snapshot shows the change from now on
    return Written(True, None, value, created)


# ------------------------------------------------------------------------------------------ managing workspaces


def create(name: str, *, copy_of_current: bool = False) -> str:
    """Create workspace ``name`` (empty, or a copy of the session's) and show it; returns its name."""
    name = check_name(name)
    if copy_of_current:
        root().copy(workspace(), name).close()
    else:
        root().create(name).close()
    forget_open_workspaces()
    switch(name)
    return name


def rename(new: str) -> str:
    """Rename the session's workspace (its folder) and keep showing it; returns the new name."""
    old = active()
    if old == DEMO or is_env(old):
        raise WorkspaceError("this workspace cannot be renamed here" + (
            " (it is EVALCORE_WORKSPACE's folder)" if old != DEMO else " (the demo is read-only)"))
    if locked() is not None:
        raise WorkspaceError(f"this workspace cannot be renamed here ({locked()}): rename its folder outside the "
                             "dashboard")
    new = check_name(new)
    if new == old:  # (the folder would "already exist")
        return new
    workspace().close()
    path = root().rename(old, new)
    forget_open_workspaces()
    st.session_state[ACTIVE] = new
    st.session_state[SEEN] = (str(path), -1)  # read again, the selections kept
    return new


def delete(name: str) -> None:
    """Delete workspace ``name`` (its folder); a session showing it moves to the default workspace."""
    if name == DEMO or is_env(name):
        raise WorkspaceError("this workspace cannot be deleted here" + (
            " (it is EVALCORE_WORKSPACE's folder)" if name != DEMO else " (the demo is read-only)"))
    try:
        ws = workspace(name)
        reason = ws.read_only_reason
        ws.close()
    except EvalcoreError:
        reason = None
    if reason is not None:  # (its files cannot be removed: it would only be hidden under another name)
        raise WorkspaceError(f"this workspace cannot be deleted here ({reason}): nothing was removed")
    root().delete(name)
    forget_open_workspaces()
    if active() == name:
        switch(default_name())
