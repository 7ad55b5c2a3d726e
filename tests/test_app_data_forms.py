"""The Data page's upload forms (a review: typing a run name and pressing Enter submitted the embedding form
without a file; the error cleared the name, and the run was then named after its file)."""

from __future__ import annotations

from test_app_views import start


def _forms(at) -> dict[str, object]:
    """Every form block of the page by its id: the ``Block.Form`` proto."""
    found, todo = {}, [at._tree]
    while todo:
        node = todo.pop()
        proto = getattr(node, "proto", None)
        if type(proto).__name__ == "Block" and proto.WhichOneof("type") == "form":
            found[proto.form.form_id] = proto.form
        todo.extend(getattr(node, "children", {}).values())
    return found


def test_enter_in_the_run_name_does_not_submit_the_embedding_form():
    at = start(None, "data")
    assert not at.exception
    forms = _forms(at)
    assert "emb_form" in forms, sorted(forms)
    assert forms["emb_form"].enter_to_submit is False
    assert forms["emb_form"].clear_on_submit is True  # a stored run still empties it
