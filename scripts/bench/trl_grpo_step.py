"""
TRL's GRPOTrainer side of `npm run bench -- vs-trl` (bench/vs-trl.bench.ts): timed GRPO steps on
a model folder, CPU torch, LoRA over every linear, one update per rollout. Dev-only; the bench
runs it with the Python of an offline virtual environment built from the machine image's wheels:

    python3 -m venv /tmp/trlvenv
    /tmp/trlvenv/bin/pip install --no-index --find-links /opt/wheels --find-links /opt/pypi/files \
        --find-links /opt/pypi-more/files 'torch==2.13.0+cpu' trl peft transformers accelerate datasets

Input (argv[1]): a JSON file with `model` (folder), `prompts` (token id lists), `samples` (per
prompt), `new_tokens`, `lora_r`, `lora_alpha`, `steps` (timed, after one warm-up step),
`threads`, `seed`. The folder needs no tokenizer: prompts are given as ids, through a word-level
tokenizer whose token i is the text "t<i>", so TRL's tokenisation returns the lab's ids exactly.

What one TRL step does here (the work the lab's side matches): generate `samples` completions of
exactly `new_tokens` tokens per prompt (min_new_tokens: random weights rarely stop), reward them
(a constant-time function), one forward + backward over the batch for the loss (num_iterations
1 and steps_per_generation 1: TRL computes no separate old log-probs, it uses the detached
current ones), one AdamW step. beta 0 (no reference model), no evaluation, no saving; a KV
cache in generation and gradient_checkpointing off (TRL's default on re-runs the forward in the
backward, which the lab's side, recompute off, does not).
Output: one line `TRL step_ms=<median> steps=<n> gen_ms=<median>` (gen_ms: the generation
inside the step, from a wrapper around the model's generate).
"""

import json
import statistics
import sys
import tempfile
import time


def main() -> None:
    spec = json.load(open(sys.argv[1]))
    import torch

    torch.set_num_threads(int(spec["threads"]))
    torch.manual_seed(int(spec["seed"]))
    from datasets import Dataset
    from peft import LoraConfig
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    model = AutoModelForCausalLM.from_pretrained(spec["model"], dtype=torch.float32)
    vocab = model.config.vocab_size
    tok = Tokenizer(models.WordLevel({f"t{i}": i for i in range(vocab)}, unk_token="t0"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="t0", eos_token=f"t{model.config.eos_token_id}")
    tokenizer.padding_side = "left"
    prompts = [" ".join(f"t{i}" for i in ids) for ids in spec["prompts"]]
    steps = int(spec["steps"]) + 1
    # One pass over the prompts per step: repeat them so max_steps steps each see the same batch shape.
    data = Dataset.from_dict({"prompt": prompts * steps})
    samples = int(spec["samples"])
    n = len(prompts) * samples

    def reward(completions, **_):
        return [float(len(c) % 7) for c in completions]

    config = GRPOConfig(
        output_dir=tempfile.mkdtemp(prefix="trl-bench-"),
        per_device_train_batch_size=n,
        gradient_accumulation_steps=1,
        num_generations=samples,
        steps_per_generation=1,
        num_iterations=1,
        max_completion_length=int(spec["new_tokens"]),
        generation_kwargs={"min_new_tokens": int(spec["new_tokens"]), "use_cache": True},
        # TRL's default (True) re-runs the forward in the backward; the lab's side keeps activations (recompute off): equal work.
        gradient_checkpointing=False,
        temperature=1.0,
        top_p=1.0,
        beta=0.0,
        learning_rate=1e-5,
        max_steps=steps,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        eval_strategy="no",
        use_cpu=True,
        bf16=False,
        disable_dropout=True,
        shuffle_dataset=False,
        seed=int(spec["seed"]),
    )
    peft_config = LoraConfig(
        r=int(spec["lora_r"]),
        lora_alpha=int(spec["lora_alpha"]),
        lora_dropout=0.0,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        task_type="CAUSAL_LM",
    )
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=config, train_dataset=data, processing_class=tokenizer, peft_config=peft_config)

    gen_times: list = []
    inner = trainer.model.generate

    def timed_generate(*args, **kwargs):
        t = time.perf_counter()
        out = inner(*args, **kwargs)
        gen_times.append((time.perf_counter() - t) * 1000)
        return out

    trainer.model.generate = timed_generate
    step_times: list = []

    class Timer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            self.t = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            step_times.append((time.perf_counter() - self.t) * 1000)

    trainer.add_callback(Timer())
    trainer.train()
    timed = step_times[1:]  # the first step warms up
    gens = gen_times[1:] if len(gen_times) > 1 else gen_times
    gen_ms = f"{statistics.median(gens):.1f}" if gens else "nan"
    print(f"TRL step_ms={statistics.median(timed):.1f} steps={len(timed)} gen_ms={gen_ms} torch={torch.__version__} trl={__import__('trl').__version__}")


if __name__ == "__main__":
    main()
