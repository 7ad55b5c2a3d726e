"""The sidebar's workspace picker (switch, create, copy the demo, rename, delete with confirmation),
its refresh button, and the automatic check for changes made by other processes.

Workspace names are shown only as widget options and plain text; every message goes through
:func:`dashboard.persist.notice` (the sidebar escapes it).
"""

from __future__ import annotations

import streamlit as st

from dashboard import persist as P
from evalcore.errors import EvalcoreError

PICK = "ws_pick"
NEW_NAME = "ws_new_name"
RENAME_TO = "ws_rename_to"
CONFIRM = "_ws_confirm_delete"


def label(name: str) -> str:
    return P.DEMO_LABEL if name == P.DEMO else name


def _attempt(action, done: str) -> None:
    try:
        name = action()
    except EvalcoreError as e:
        P.notice("error", e.message)  # (not the server's folder path in front)
        return
    except OSError as e:
        P.notice("error", str(e))
        return
    P.notice("success", done.format(name=name))


def cb_pick() -> None:
    P.switch(st.session_state[PICK])
    st.session_state.pop(CONFIRM, None)


def cb_create() -> None:
    _attempt(lambda: P.create(st.session_state.get(NEW_NAME) or P.unique_name("my-workspace")),
             "Created the workspace {name!r}.")
    st.session_state[NEW_NAME] = ""


def cb_copy() -> None:
    _attempt(lambda: P.create(st.session_state.get(NEW_NAME) or P.copy_name(), copy_of_current=True),
             "Copied into the new workspace {name!r}: it can be edited.")
    st.session_state[NEW_NAME] = ""


def cb_rename() -> None:
    new = (st.session_state.get(RENAME_TO) or "").strip()
    done = "The workspace is already named {name!r}." if new and new == P.active() else "Renamed to {name!r}."
    _attempt(lambda: P.rename(new), done)
    st.session_state[RENAME_TO] = ""


def cb_delete_ask() -> None:
    st.session_state[CONFIRM] = P.active()


def cb_delete_cancel() -> None:
    st.session_state.pop(CONFIRM, None)


def cb_delete() -> None:
    name = st.session_state.pop(CONFIRM, None)
    if name is None:
        return

    def action() -> str:
        P.delete(name)
        return name

    _attempt(action, "Deleted the workspace {name!r}.")


def picker() -> None:
    """The workspace selector and its management expander (in the sidebar)."""
    current = P.active()
    options = [P.DEMO, *P.names()]
    if current not in options:
        options.append(current)
    if st.session_state.get(PICK) != current:
        st.session_state[PICK] = current
    st.sidebar.selectbox("Workspace", options, key=PICK, format_func=label, on_change=cb_pick,
                         help="Where everything you load is saved. Open it again from any tab, after a restart, "
                              "or from Python (evalcore.Workspace) and the command line (--workspace).")
    st.sidebar.button("Refresh", key="ws_refresh", icon=":material/refresh:",
                      help="Read the workspace again: runs added meanwhile by a script or another tab appear.")
    with st.sidebar.expander("Manage workspaces", icon=":material/folder_managed:"):
        st.text_input("Name of a new workspace", key=NEW_NAME, placeholder="my-workspace")
        locked = P.locked()
        if current == P.DEMO:
            st.caption("The demo is read-only: copy it to change it (a change made on it does so too).")
            st.button("Copy the demo to a new workspace", key="ws_copy_demo", on_click=cb_copy,
                      icon=":material/content_copy:")
        elif locked is not None:
            st.caption(f"This workspace is read-only ({locked}): copy it to change it; rename or delete its folder "
                       "outside the dashboard.")
            st.button("Copy this workspace to a new workspace", key="ws_copy_current", on_click=cb_copy,
                      icon=":material/content_copy:")
        st.button("Create an empty workspace", key="ws_create", on_click=cb_create, icon=":material/add:")
        if current == P.DEMO or P.is_env(current) or locked is not None:
            if current != P.DEMO and locked is None:
                st.caption("This is EVALCORE_WORKSPACE's folder: rename or delete it outside the dashboard.")
            return
        st.divider()
        st.text_input("Rename this workspace to", key=RENAME_TO)
        st.button("Rename", key="ws_rename", on_click=cb_rename, icon=":material/edit:")
        if st.session_state.get(CONFIRM) == current:
            st.warning("Delete this workspace and everything in it? This cannot be undone.", icon=":material/warning:")
            st.text(current)
            c1, c2 = st.columns(2)
            c1.button("Yes, delete it", key="ws_delete_yes", on_click=cb_delete, type="primary")
            c2.button("Cancel", key="ws_delete_no", on_click=cb_delete_cancel)
        else:
            st.button("Delete this workspace…", key="ws_delete", on_click=cb_delete_ask, icon=":material/delete:")


@st.fragment(run_every=P.POLL_SECONDS)
def watch() -> None:
    """While a page that calls it is open: every few seconds, one cheap query of the workspace's change
    counter; the app reruns only when something changed (a run added by a training script appears)."""
    if P.changed_on_disk():
        st.rerun(scope="app")
