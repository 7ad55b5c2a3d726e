"""``evalcore.data`` became a package (``Qrels`` in ``_qrels.py``, ``Run`` in ``_run.py``) when its one file reached
the 600-line limit: every name it offered as one file still imports from it, and from ``evalcore``."""

from __future__ import annotations

import pickle

import evalcore
import evalcore.data as data

# what ``evalcore/data.py`` offered (its public names and the private ones the tests import), read before the split
OFFERED = ["DuplicateIdError", "EmptyInputError", "NonFiniteValueError", "Qrels", "Run", "ValueTypeError",
           "arrow_indices", "encode_strings", "factorize_strings", "numbers", "pair_keys", "pd", "positions_in",
           "refuse_broken_column", "refuse_broken_name", "string_hashes", "strings", "_NO_KEY", "_has_repeats",
           "_pair_hashes"]


def test_every_name_of_the_one_file_still_imports_from_evalcore_data():
    missing = [n for n in OFFERED if not hasattr(data, n)]
    assert missing == []
    assert data.__all__ == ["Qrels", "Run"]
    assert evalcore.Qrels is data.Qrels and evalcore.Run is data.Run


def test_the_classes_name_evalcore_data_as_their_home_and_pickle_there():
    assert data.Qrels.__module__ == data.Run.__module__ == "evalcore.data"
    run = data.Run.from_dict({"q1": {"d1": 1.0, "d2": 0.5}}, name="r")
    again = pickle.loads(pickle.dumps(run))
    assert type(again) is data.Run and again.to_dict() == run.to_dict()
    assert b"evalcore.data\x94" in pickle.dumps(run) or b"evalcore.data\n" in pickle.dumps(run, protocol=0)
