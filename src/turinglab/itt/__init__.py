"""Integrative Turing tests (Zhang et al.): datasets of human (H) and machine (M) responses to the
same stimuli, human and AI judges that label each response H or M, and imitation detectability.

Modules: `tables` (CSV/JSONL rows with line+column errors), `judgements` (the common currency),
`metrics` (confusion matrices, detectability), `dataset` (stimuli and responses), `stimuli`
(stimuli files), `tasks` and `controls` (instructions and checks the game and the browser
share), `batches` (judging batches), `embeddings`/`ai_judges`/`llm_judges`/`scanpath` (AI
judges), `quality` (BLEU, CIDEr), `textstats`, `demographics` (ANOVA factors), `demo`.
"""
