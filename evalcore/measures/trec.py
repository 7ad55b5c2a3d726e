"""trec_eval's measure names, as a trec_eval user types them, in evalcore's canonical names.

:func:`trec_eval_names` turns one trec_eval name into the canonical evalcore
names it stands for (several for a list of cutoffs or a group), or None when
the text is not a trec_eval name. :mod:`evalcore.measures` tries evalcore's
own names first, so a name both programs know keeps evalcore's meaning:
``map``, ``ndcg``, ``recip_rank``, ``recall`` and ``P`` without a cutoff
mean "at each k" in evalcore, while trec_eval's bare ``map``, ``recip_rank``
and ``ndcg`` (whole list) are ``map@all``, ``mrr@all`` and ``ndcg@all``,
which is what the groups give.

======================== ==============================================
trec_eval                evalcore
======================== ==============================================
``P_5``, ``P.5,10``      ``precision@5`` (, ``precision@10``)
``recall_1000``          ``recall@1000``
``map_cut_100``          ``map@100``
``ndcg_cut_10``          ``ndcg@10``
``success_1``            ``hit_rate@1``
``iprec_at_recall_0.10`` ``iprec_at_recall(recall=0.1)``
``set_F``, ``set_F.0.5`` ``set_f``, ``set_f(beta=0.5)``
``set_P``                ``set_precision``
``infAP``                ``infap``
``Rprec``                ``rprec``
``rbp_resid``            ``rbp_residual(p=0.9)`` (trec_eval's default p)
``ndcg.1=3,2=9``         ``ndcg(gains=1:3,2:9)@all``
``official``             num_q, num_ret, num_rel, num_rel_ret, map@all, gm_map,
                         rprec, bpref, mrr@all, the 11 iprec_at_recall,
                         precision at 5, 10, 15, 20, 30, 100, 200, 500, 1000
``all_trec``             official + recall and map and ndcg at those cutoffs,
                         hit_rate@1,5,10, infap, 11pt_avg, ndcg@all,
                         set_precision, set_recall, set_f, rbp_residual(p=0.9)
======================== ==============================================

A group's members that evalcore does not compute are left out with a one-line
:class:`~evalcore.errors.EvalcoreWarning` naming them (``rbp`` among them:
trec_eval grades RBP's gains on graded qrels, evalcore's ``rbp`` is binary).
"""

from __future__ import annotations

import re

from ..errors import UnknownMeasureError, warn

__all__ = ["trec_eval_names", "cut_measure_names", "TREC_CUTOFFS", "GROUPS", "NOT_COMPUTED"]

#: trec_eval's default cutoffs of P, recall, map_cut, ndcg_cut (success: 1, 5, 10)
TREC_CUTOFFS: tuple[int, ...] = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_SUCCESS_CUTOFFS = (1, 5, 10)
_CUT_MEASURES = {"P": "precision", "recall": "recall", "map_cut": "map", "ndcg_cut": "ndcg",
                 "success": "hit_rate"}
_IPREC = [f"iprec_at_recall(recall={x})" for x in ("0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7",
                                                     "0.8", "0.9", "1")]

#: trec_eval names evalcore's own names do not cover (``infAP``, ``Rprec``, ``set_P``, ``set_F``... are
#: evalcore aliases; ``map``, ``ndcg``, ``recip_rank`` keep evalcore's meaning, see the module docstring)
_PLAIN = {"rbp_resid": "rbp_residual(p=0.9)"}

#: trec_eval measures evalcore does not compute, and why when it is not obvious
NOT_COMPUTED: dict[str, str] = {
    "runid": "the run's name, not a measure",
    "relstring": "a string of relevance values, not a number",
    "unj": "evalcore's judged@k counts negative grades as judged and divides by min(k, n)",
    "rbp": "trec_eval grades RBP's gains on graded qrels; evalcore's rbp is binary at θ",
    "gm_bpref": "", "utility": "", "relative_P": "", "Rprec_mult": "", "ndcg_rel": "", "Rndcg": "",
    "binG": "", "G": "", "set_relative_P": "", "set_map": "", "num_nonrel_judged_ret": "",
}


def cut_measure_names() -> list[str]:
    """trec_eval's measures taking a cutoff as ``NAME_k`` / ``NAME.k,k`` (``P``, ``ndcg_cut``...)."""
    return list(_CUT_MEASURES)


def _cuts(measure: str, cuts: tuple[int, ...]) -> list[str]:
    return [f"{_CUT_MEASURES[measure]}@{k}" for k in cuts]


_OFFICIAL = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map@all", "gm_map", "rprec", "bpref", "mrr@all",
             *_IPREC, *_cuts("P", TREC_CUTOFFS)]
#: trec_eval's measure groups: (evalcore names, trec_eval measures left out; ``runid`` is not a measure)
GROUPS: dict[str, tuple[list[str], list[str]]] = {
    "official": (_OFFICIAL, []),
    "all_trec": (
        [*_OFFICIAL, *_cuts("recall", TREC_CUTOFFS), "rbp_residual(p=0.9)", "infap", "11pt_avg", "ndcg@all",
         *_cuts("success", _SUCCESS_CUTOFFS), *_cuts("map_cut", TREC_CUTOFFS), *_cuts("ndcg_cut", TREC_CUTOFFS),
         "set_precision", "set_recall", "set_f"],
        ["relstring", "unj", "rbp", "gm_bpref", "utility", "relative_P", "Rprec_mult", "ndcg_rel",
         "Rndcg", "binG", "G", "set_relative_P", "set_map", "num_nonrel_judged_ret"],
    ),
    "set": (["num_q", "num_ret", "num_rel", "num_rel_ret", "set_precision", "set_recall", "set_f"],
            ["utility", "set_relative_P", "set_map"]),
}

_NUM = r"(?:\d+(?:\.\d*)?|\.\d+)"
_CUT_RE = re.compile(r"^(P|recall|map_cut|ndcg_cut|success)_(\d+)$")
_CUT_LIST_RE = re.compile(r"^(P|recall|map_cut|ndcg_cut|success)\.(\d+(?:,\d+)*)$")
_IPREC_RE = re.compile(rf"^iprec_at_recall_({_NUM})$")
_IPREC_LIST_RE = re.compile(rf"^iprec_at_recall\.({_NUM}(?:,{_NUM})*)$")
_SET_F_RE = re.compile(rf"^set_F[._]({_NUM})$")
_RBP_RE = re.compile(rf"^(rbp|rbp_resid)\.p=({_NUM})$")
_GAINS_RE = re.compile(rf"^ndcg[._](\d+={_NUM}(?:,\d+={_NUM})*)$")


def _level(text: str) -> str:
    v = float(text)
    if not 0 <= v <= 1:
        raise UnknownMeasureError(f"iprec_at_recall: the recall level must be in [0, 1], got {text!r}")
    return repr(v)


def _group(name: str) -> list[str]:
    names, left_out = GROUPS[name]
    if left_out:
        warn(f"trec_eval's {name} also holds {', '.join(left_out)}, which evalcore does not compute "
             "(see evalcore.measures.trec.NOT_COMPUTED); left out")
    return list(names)


def trec_eval_names(text: str) -> list[str] | None:
    """Canonical evalcore names of a trec_eval measure name; None if ``text`` is not one.

    >>> trec_eval_names("P.5,10"), trec_eval_names("iprec_at_recall_0.10"), trec_eval_names("set_F.0.5")
    (['precision@5', 'precision@10'], ['iprec_at_recall(recall=0.1)'], ['set_f(beta=0.5)'])
    >>> trec_eval_names("bleu") is None
    True
    """
    if text in GROUPS:
        return _group(text)
    if text in _PLAIN:
        return [_PLAIN[text]]
    if m := _CUT_RE.match(text):
        return _cuts(m.group(1), (int(m.group(2)),))
    if m := _CUT_LIST_RE.match(text):
        return _cuts(m.group(1), tuple(int(x) for x in m.group(2).split(",")))
    if m := _IPREC_RE.match(text):
        return [f"iprec_at_recall(recall={_level(m.group(1))})"]
    if m := _IPREC_LIST_RE.match(text):
        return [f"iprec_at_recall(recall={_level(x)})" for x in m.group(1).split(",")]
    if m := _SET_F_RE.match(text):
        return [f"set_f(beta={m.group(1)})"]
    if m := _RBP_RE.match(text):
        if m.group(1) == "rbp":  # trec_eval's rbp grades its gains: not evalcore's (binary) rbp
            raise UnknownMeasureError(f"trec_eval's {text!r} is not computed by evalcore ({NOT_COMPUTED['rbp']}; "
                                      f"evalcore's binary RBP is rbp(p={m.group(2)}))")
        return [f"rbp_residual(p={m.group(2)})"]
    if m := _GAINS_RE.match(text):
        return [f"ndcg(gains={m.group(1)})@all"]
    base = re.split(r"[._]\d", text, maxsplit=1)[0]
    if base in NOT_COMPUTED:
        why = NOT_COMPUTED[base]
        raise UnknownMeasureError(f"trec_eval's {text!r} is not computed by evalcore" + (f" ({why})" if why else ""))
    return None
