// The prompts of the RAG and quality judges, written for evalpipe and shown
// in the README. Each is a template over the unit (`renderTemplate`): the
// values are filled in once, so a placeholder inside a case's text stays
// text. Changing a prompt changes the judge's evaluator version.

/** The system prompt every judge of `rag_judges.ts` is given. */
export const JUDGE_SYSTEM =
  "You grade the output of an AI system for an evaluation. Do exactly what " +
  "the task asks and nothing else. Reply with one JSON object in the shape " +
  "the task gives: no text before or after it, no code fence.";

/** `faithfulness`: every claim of the output, backed by the context or not. */
export const FAITHFULNESS =
  `Task: check whether an answer is backed by the passages it was given.

Question (only to help you read the answer):
{{input}}

Passages:
{{passages}}

Answer:
{{output}}

Steps:
1. Split the answer into its claims: each separate statement of fact it makes, rewritten so that it stands on its own. Greetings, hedges, questions and offers of help claim nothing: leave them out.
2. For each claim decide whether the passages back it. A claim is backed when a passage says it, or it follows directly from what the passages say. It is not backed when the passages say nothing about it or say otherwise, even when it is true in the world.

Reply in this shape, one entry per claim:
{"claims": [{"claim": "<the claim>", "supported": true}, {"claim": "<another claim>", "supported": false}]}
When the answer makes no claim at all, reply {"claims": []}.`;

/** `answer_relevance`: how well the output responds to the input. */
export const ANSWER_RELEVANCE =
  `Task: decide how well an answer responds to the question it was given. Judge only whether it addresses what was asked, not whether it is true.

Question:
{{input}}

Answer:
{{output}}

Scale:
1 = answers exactly what was asked, leaving out nothing that matters
0.75 = answers it, with a gap, or with padding that does not belong
0.5 = answers part of it, or a neighbouring question
0.25 = stays on the topic but does not answer
0 = ignores the question, refuses without cause, or is empty

Reply in this shape:
{"score": <a number from 0 to 1 on the scale>, "reason": "<one sentence>"}`;

/** `context_precision`: which retrieved chunks help reach the expected answer. */
export const CONTEXT_PRECISION =
  `Task: decide which of the retrieved passages help answer a question, taking the reference answer as what a good answer says.

Question:
{{input}}

Reference answer:
{{expected_text}}

Passages, numbered in the order they were retrieved:
{{passages}}

For each passage decide whether it is useful: it states something the reference answer relies on. A passage on the topic that adds nothing the reference answer needs is not useful.

Reply in this shape, one entry per passage, numbered 1 to {{passage_count}} in order:
{"chunks": [{"chunk": 1, "useful": true}, {"chunk": 2, "useful": false}]}`;

/** `context_recall`: which statements of the expected answer the context holds. */
export const CONTEXT_RECALL =
  `Task: decide how much of a reference answer the retrieved passages contain.

Question:
{{input}}

Reference answer:
{{expected_text}}

Passages:
{{passages}}

Steps:
1. Split the reference answer into its statements: each separate fact it states, rewritten so that it stands on its own.
2. For each statement decide whether the passages contain it: a passage says it, or it follows directly from what the passages say.

Reply in this shape, one entry per statement:
{"statements": [{"statement": "<the statement>", "attributed": true}, {"statement": "<another statement>", "attributed": false}]}`;

/** `correctness`: which facts of the expected answer the output gets right. */
export const CORRECTNESS =
  `Task: check an answer against a reference answer that is taken to be right.

Question:
{{input}}

Reference answer:
{{expected_text}}

Answer to check:
{{output}}

Steps:
1. List the facts of the reference answer that a correct answer has to get right: each separate fact, rewritten so that it stands on its own. Wording and style are not facts.
2. For each fact decide what the answer does with it: "stated" when the answer says it, in any words; "missing" when the answer does not say it; "contradicted" when the answer says something that cannot be true together with it.

Reply in this shape, one entry per fact:
{"facts": [{"fact": "<the fact>", "verdict": "stated"}, {"fact": "<another fact>", "verdict": "missing"}]}`;

/** `rubric`: a grade on the rubric file's terms. */
export const RUBRIC = `Task: grade an answer by the rubric below.

Rubric:
{{rubric}}

Question:
{{input}}

Answer to grade:
{{output}}

Reference answer (may be empty):
{{expected_text}}

Passages the answer was given (may be empty):
{{passages}}

Give the score the rubric describes, from {{scale_low}} (worst) to {{scale_high}} (best).

Reply in this shape:
{"score": <a number from {{scale_low}} to {{scale_high}}>, "reason": "<one or two sentences>"}`;
