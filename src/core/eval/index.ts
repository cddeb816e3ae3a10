/**
 * Evaluation: answer graders (math boxed answers, QA answer tags) and the metrics the paper
 * reports (Avg@n, Pass@n, macro averages, cost, U_tok, latency). Pure TypeScript, no I/O.
 */
export {
  gradeMath,
  gradeQA,
  mathAnswersEqual,
  extractLastTag,
  normalizeQA,
  tokenF1,
  scoreQAAnswer,
  type MathGrade,
  type MathGradeOptions,
  DEFAULT_MAX_OPERATIONS,
  type QAGrade,
} from './grade';
export { extractLastBoxed, goldAnswerText, normalizeMathAnswer } from './latex';
export { compileExpression, numbersEqual } from './expr';
export {
  avgAtN,
  passAtN,
  passAtK,
  percentile,
  benchmarkMetrics,
  summarizeEvaluation,
  summaryToMetrics,
  type SampleOutcome,
  type QueryOutcome,
  type BenchmarkMetrics,
  type EvaluationSummary,
} from './metrics';
