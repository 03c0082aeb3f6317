"""Judges that return a probability distribution over ordinal levels.

The expected level (:func:`expected_level`: sum of p_i * i, the levels numbered 0, 1, ... as the
judge file lists them) over the top level is the score; the distribution, its coverage and entropy are
kept. Judges plan judgment jobs and ask for judgments; analyses of judged results live
downstream (:mod:`jevalkit.metrics`: quality, bias; :mod:`jevalkit.labels`: human labels).
Prompts, level descriptions and choice tables live in ``data/judges/<evaluator>/v<N>.yaml``
(locked by hash in ``data/judges/judges.lock``); judges plan jobs that the runner executes.

Example:
    >>> from jevalkit.judges import Judgment
    >>> Judgment.from_probs(["0", "1"], [0.3, 0.7], coverage=0.9, method="logprobs").score
    0.7
"""

from ..errors import CaseFileError, JudgeError, JudgeFileError
from ._cascade import (
    CascadeRun,
    CascadeStage,
    item_systems,
    item_verdicts,
    judge_cascade,
    judge_names,
    route,
)
from ._cases import CASE_FIELDS, case_file_path, load_cases
from ._evaluate import JudgeConfig, first_level, judge_case, judge_request
from ._jobs import (
    TOOL_CALL_EVALUATOR,
    TOOL_CALL_LEVELS,
    JudgeJob,
    ToolCallJob,
    judgment_fields,
    plan_judge_jobs,
)
from ._judgment import Judgment, expected_level
from ._logprobs import level_distribution, normalise_token, top_alternatives
from ._pairwise import (
    POSITIONS,
    STYLE_FEATURES,
    SYSTEM_VERDICTS,
    PairwiseJob,
    cases_from_runs,
    plan_pairwise_jobs,
    style_features,
    to_systems,
)
from ._prompts import (
    JudgePrompt,
    judge_files,
    judges_dir,
    load_judge_prompt,
    publish_judges,
    read_judge_file,
)
from ._run import ajudge, judge
from ._several import judge_models, results_path_for
from ._tool_calls import equivalent, free_text_pairs, tool_call_accuracy

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
    "CascadeRun",
    "CascadeStage",
    "CaseFileError",
    "JudgeConfig",
    "JudgeError",
    "JudgeFileError",
    "JudgeJob",
    "JudgePrompt",
    "Judgment",
    "PairwiseJob",
    "ToolCallJob",
    "ajudge",
    "case_file_path",
    "cases_from_runs",
    "equivalent",
    "expected_level",
    "first_level",
    "free_text_pairs",
    "item_systems",
    "item_verdicts",
    "judge",
    "judge_cascade",
    "judge_case",
    "judge_files",
    "judge_models",
    "judge_names",
    "judge_request",
    "judges_dir",
    "judgment_fields",
    "level_distribution",
    "load_cases",
    "load_judge_prompt",
    "normalise_token",
    "plan_judge_jobs",
    "plan_pairwise_jobs",
    "publish_judges",
    "read_judge_file",
    "results_path_for",
    "route",
    "style_features",
    "to_systems",
    "tool_call_accuracy",
    "top_alternatives",
]
