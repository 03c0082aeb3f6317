"""Judges that return a probability distribution over ordinal levels.

The expected level (sum of p_i * i) is the score; the distribution, its coverage and entropy are
kept. Prompts, level descriptions and choice tables live in ``data/judges/<evaluator>/v<N>.yaml``
(locked by hash in ``data/judges/judges.lock``); judges plan jobs that the runner executes.

Example:
    >>> from jevalkit.judges import Judgment
    >>> Judgment.from_probs(["0", "1"], [0.3, 0.7], coverage=0.9, method="logprobs").score
    0.7
"""

from ..errors import CaseFileError, JudgeError, JudgeFileError
from ..metrics import label_budget
from ._bias import LENGTH_COLUMNS, POSITION_COLUMNS, games_of, length_bias, position_bias
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
from ._judgment import Judgment
from ._labels import (
    AGREEMENT_COLUMNS,
    LABEL_COLUMNS,
    STRATEGIES,
    append_label,
    judged_items,
    label_agreement,
    label_plan,
    label_record,
    read_labels,
)
from ._logprobs import level_distribution, normalise_token, top_alternatives
from ._pairwise import (
    POSITIONS,
    PREFERENCE_COLUMNS,
    STYLE_FEATURES,
    SYSTEM_VERDICTS,
    PairwiseJob,
    cases_from_runs,
    pairwise_preferences,
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
from ._quality import quality, reliability_curve
from ._run import ajudge, judge
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
    "AGREEMENT_COLUMNS",
    "CASE_FIELDS",
    "EVALUATORS",
    "LABEL_COLUMNS",
    "LENGTH_COLUMNS",
    "POSITIONS",
    "POSITION_COLUMNS",
    "PREFERENCE_COLUMNS",
    "STRATEGIES",
    "STYLE_FEATURES",
    "SYSTEM_VERDICTS",
    "TOOL_CALL_EVALUATOR",
    "TOOL_CALL_LEVELS",
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
    "append_label",
    "case_file_path",
    "cases_from_runs",
    "equivalent",
    "first_level",
    "free_text_pairs",
    "games_of",
    "judge",
    "judge_case",
    "judge_files",
    "judge_request",
    "judged_items",
    "judges_dir",
    "judgment_fields",
    "label_agreement",
    "label_budget",
    "label_plan",
    "label_record",
    "length_bias",
    "level_distribution",
    "load_cases",
    "load_judge_prompt",
    "normalise_token",
    "pairwise_preferences",
    "plan_judge_jobs",
    "plan_pairwise_jobs",
    "position_bias",
    "publish_judges",
    "quality",
    "read_judge_file",
    "read_labels",
    "reliability_curve",
    "style_features",
    "to_systems",
    "tool_call_accuracy",
    "top_alternatives",
]
