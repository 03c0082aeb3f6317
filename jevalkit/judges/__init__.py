"""What a judge is: judges that return a probability distribution over ordinal levels.

The expected level (:func:`expected_level`: sum of p_i * i, the levels numbered 0, 1, ... as the
judge file lists them) over the top level is the score; the distribution, its coverage and entropy are
kept. Prompts, level descriptions and choice tables live in ``data/judges/<evaluator>/v<N>.yaml``
(locked by hash in ``data/judges/judges.lock``); case files in ``data/cases/``; how a judge is
asked is a :class:`JudgeConfig`. The runner asks judges (:func:`jevalkit.runner.judge`: judge
jobs it executes like probe requests); analyses of judged results live downstream
(:mod:`jevalkit.metrics`: quality, bias; :mod:`jevalkit.labels`: human labels, cascades).
Nothing here sends a request.

Example:
    >>> from jevalkit.judges import Judgment
    >>> Judgment.from_probs(["0", "1"], [0.3, 0.7], coverage=0.9, method="logprobs").score
    0.7
"""

from .._paths import judges_dir
from ..errors import CaseFileError, JudgeError, JudgeFileError
from ._cases import CASE_FIELDS, case_file_path, load_cases
from ._config import JudgeConfig, first_level
from ._judgment import Judgment, expected_level, judgment_fields
from ._logprobs import level_distribution, normalise_token, top_alternatives
from ._pairwise import (
    POSITIONS,
    STYLE_FEATURES,
    SYSTEM_VERDICTS,
    cases_from_runs,
    style_features,
    to_systems,
)
from ._prompts import (
    JudgePrompt,
    judge_files,
    load_judge_prompt,
    publish_judges,
    read_judge_file,
)
from ._tool_calls import (
    TOOL_CALL_EVALUATOR,
    TOOL_CALL_LEVELS,
    equivalent,
    free_text_pairs,
    tool_call_accuracy,
)

EVALUATORS = (
    "llm_judge",
    "faithfulness",
    "answer_relevancy",
    "answer_correctness",
    "translation",
    "security",
    "factuality",
    "pairwise",
    "tool_call_accuracy",
)

__all__ = [
    "CASE_FIELDS",
    "EVALUATORS",
    "POSITIONS",
    "STYLE_FEATURES",
    "SYSTEM_VERDICTS",
    "TOOL_CALL_EVALUATOR",
    "TOOL_CALL_LEVELS",
    "CaseFileError",
    "JudgeConfig",
    "JudgeError",
    "JudgeFileError",
    "JudgePrompt",
    "Judgment",
    "case_file_path",
    "cases_from_runs",
    "equivalent",
    "expected_level",
    "first_level",
    "free_text_pairs",
    "judge_files",
    "judges_dir",
    "judgment_fields",
    "level_distribution",
    "load_cases",
    "load_judge_prompt",
    "normalise_token",
    "publish_judges",
    "read_judge_file",
    "style_features",
    "to_systems",
    "tool_call_accuracy",
    "top_alternatives",
]
