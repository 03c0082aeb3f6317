"""Judges that return a probability distribution over ordinal levels.

The expected level (sum of p_i * i) is the score; the distribution, its coverage and entropy are
kept. Prompts, level descriptions and choice tables live in ``data/judges/<evaluator>/v<N>.yaml``.

Example:
    >>> from jevalkit.judges import Judgment
    >>> Judgment.from_probs(["0", "1"], [0.3, 0.7], coverage=0.9, method="logprobs").score
    0.7
"""

from ._cases import CASE_FIELDS, load_cases
from ._evaluate import JudgeConfig, JudgeRequestError, first_level, judge_case
from ._judgment import JudgeError, Judgment
from ._logprobs import level_distribution, normalise_token, top_alternatives
from ._prompts import JudgePrompt, load_judge_prompt
from ._quality import quality, reliability_curve
from ._run import ajudge, judge
from ._tool_calls import equivalent, tool_call_accuracy

EVALUATORS = ("llm_judge", "faithfulness", "answer_relevancy", "answer_correctness", "translation",
              "security", "factuality", "tool_call_accuracy")  # fmt: skip

__all__ = [
    "CASE_FIELDS",
    "EVALUATORS",
    "JudgeConfig",
    "JudgeError",
    "JudgePrompt",
    "JudgeRequestError",
    "Judgment",
    "ajudge",
    "equivalent",
    "first_level",
    "judge",
    "judge_case",
    "level_distribution",
    "load_cases",
    "load_judge_prompt",
    "normalise_token",
    "quality",
    "reliability_curve",
    "tool_call_accuracy",
    "top_alternatives",
]
