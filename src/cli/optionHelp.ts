/**
 * What each command-line option means, for `COMMAND --help`: one line per option with its value
 * placeholder. An option means the same in every command unless the command's own table says
 * otherwise (`--format` is a dataset format for `eval`, a file format for `export`). A test
 * (test/cli/help.test.ts) checks that every option and flag of every command is explained here.
 */

export interface OptionText {
  /** The value's placeholder (`PATH`, `N`); empty for a flag. */
  value: string;
  text: string;
}

const o = (value: string, text: string): OptionText => ({ value, text });

/** Options that mean the same wherever they appear. */
const COMMON: Record<string, OptionText> = {
  db: o('PATH', 'the lab database file (default ./lab.db; run folders live beside it in PATH.runs/)'),
  preset: o('NAME', 'a named run config (listed below for train); --set edits apply on top'),
  config: o('FILE', 'a run config as JSON (a preset plus edits, or a whole config)'),
  out: o('FILE', 'where to write; an existing file is kept unless --force'),
  force: o('', 'replace an existing output file (a symbolic link is never written through)'),
  json: o('', 'print machine-readable JSON instead of tables'),
  backend: o('NAME', 'the compute backend: node-gpu (CUDA), node (native CPU), wasm or cpu (default auto: the fastest that loads)'),
  seed: o('N', 'the random seed (same seed, same draws on the CPU backends)'),
  model: o('DIR', 'a Hugging Face model folder (config.json, tokenizer.json, *.safetensors)'),
  adapter: o('DIR', 'a peft LoRA adapter folder to apply over --model'),
  run: o('N', 'a run id of the database (see: runs)'),
  step: o('N', 'a checkpoint, named by the updates it holds (default: the latest)'),
  checkpoint: o('N', 'a checkpoint, named by the updates it holds (default: the latest)'),
  role: o('ROLE', 'the policy of one role in a per-role run (a shared run has one policy)'),
  port: o('N', 'the port on 127.0.0.1 to listen on (default: a free one)'),
  n: o('N', "samples per query: Avg@n and Pass@n (default: the run config's eval.n)"),
  limit: o('N', 'use only the first N queries of each dataset'),
  baseline: o('LABEL', 'the row the paired differences are taken against'),
  format: o('NAME', 'the output format'),
};

/** Per command: options whose meaning there differs from COMMON, and options only that command has. */
const BY_COMMAND: Record<string, Record<string, OptionText>> = {
  resume: { force: o('', 'take the run over although its lease looks held (only for a run whose engine is gone; a live engine is never overridden)') },
  eval: {
    data: o('PATH[,PATH]', 'benchmark files (JSONL, JSON or parquet of the 13 formats in docs/BENCHMARK_FILES.md)'),
    format: o('NAME', 'the benchmark format when the file name does not say it (e.g. gsm8k, math500, hotpotqa)'),
    workflow: o('NAME', 'the workflow that answers: math, search or single'),
    corpus: o('PATH', 'the retrieval corpus for the search workflow (indexed once, then reused)'),
    policy: o('NAME', 'gold: answer with the gold answers (checks the files and the graders, trains nothing)'),
    json: o('', 'print the table as JSON'),
  },
  export: { format: o('NAME', 'json (run, metrics and evaluations) or csv (run,step,key,value,wall_time)') },
  report: {
    format: o('NAME', "html, md, pdf (printed by headless Chromium), csv (the runs' table), csv-metrics or csv-events"),
    suite: o('ID', "a suite's report (its completed runs, its tables first) instead of run ids"),
  },
  warmstart: {
    preset: o('NAME', 'the preset whose warm start to make (its recipe: episodes and epochs)'),
    out: o('DIR', 'the checkpoint folder to write'),
    epochs: o('N', "supervised passes over the demonstrations (default: the recipe's)"),
    episodes: o('N', "demonstration episodes per task generator (default: the recipe's)"),
  },
  objective: {
    batch: o('FILE', 'a batch as JSON (events with members, rewards and log-probs); default: a built-in example'),
    all: o('', 'compute every objective variant on the batch, side by side'),
  },
  'export-model': {
    out: o('DIR', 'the folder to write (a new one; never inside a run folder)'),
    merge: o('', 'write a merged bf16 model folder instead of a peft adapter'),
  },
  model: {
    lora: o('R', 'add a fresh LoRA adapter of rank R (for a quick check of the LoRA path)'),
    'seq-len': o('N', "the sequence length model info estimates memory for (checked against the model's positions)"),
    ids: o('1,2,3', 'token ids to score (logprobs) or continue (generate)'),
    text: o('TEXT', "raw text, tokenised by the folder's tokenizer"),
    chat: o('TEXT', "a user message, rendered by the folder's chat template"),
    'max-new-tokens': o('N', 'most tokens to generate'),
    temperature: o('T', 'sampling temperature (0: greedy)'),
    'top-p': o('P', 'nucleus sampling: keep the most probable tokens up to mass P'),
    'top-k': o('K', 'keep only the K most probable tokens (0: off)'),
    'no-thinking': o('', "render the chat template with enable_thinking false (Qwen3's no-think mode)"),
    json: o('', 'print JSON'),
  },
  suite: {
    preset: o('A[,B]', 'presets to run (one row each), or a suite FILE as the argument instead'),
    seeds: o('1,2,3', 'seeds of every row'),
    vary: o('key=v1,v2', 'one row per value of a config field'),
    parallel: o('N', 'runs trained at once (default 1; each is an engine process)'),
    name: o('NAME', "the suite's name"),
    format: o('NAME', 'suite show: text, md or csv'),
  },
  serve: { allow: o('DIR', 'a folder web clients may name files in (repeatable; default: the database folder and resources/)') },
  'serve-model': {
    'max-tokens': o('N', 'the most tokens one request may generate'),
  },
};

/** What an option means in a command; undefined when nobody wrote it down (the help test fails then). */
export function optionText(command: string, option: string): OptionText | undefined {
  return BY_COMMAND[command]?.[option] ?? COMMON[option];
}
