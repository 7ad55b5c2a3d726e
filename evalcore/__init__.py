"""evalcore: exact retrieval evaluation — every metric at every k, paired statistics, fusion.

Pure Python (numpy, pandas, scipy); never imports Streamlit.
"""

from .data import Qrels, Run
from .errors import EvalcoreError, EvalcoreWarning
from .evaluate import Evaluation, evaluate
from .measures import Measure, parse_measure

__all__ = ["Qrels", "Run", "Evaluation", "evaluate", "Measure", "parse_measure", "EvalcoreError", "EvalcoreWarning"]
__version__ = "0.1.0"
