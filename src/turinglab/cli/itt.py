"""`turinglab itt`: integrative Turing tests — datasets, judging batches, AI judges, scores.

Imports stay inside the commands so `turinglab --help` does not load scikit-learn or torch."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from turinglab.agents.base import Agent

T = TypeVar("T")

itt_app = typer.Typer(
    help="Integrative Turing tests: human and machine responses, H/M judges, detectability.",
    no_args_is_help=True,
)
dataset_app = typer.Typer(help="Check and convert ITT datasets (CSV/JSONL).", no_args_is_help=True)
itt_app.add_typer(dataset_app, name="dataset")


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _echo_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))


@itt_app.command()
def score(
    judgements: Annotated[Path, typer.Argument(help="judgements file (.csv or .jsonl)")],
    as_json: Annotated[bool, typer.Option("--json", help="print everything as JSON")] = False,
    group_by: Annotated[
        list[str] | None,
        typer.Option("--group-by", help="demographic column to form judge groups (repeatable)"),
    ] = None,
    replicates: Annotated[int, typer.Option(help="bootstrap replicates of each interval")] = 1000,
    seed: Annotated[int, typer.Option(help="seed of the bootstrap (record it)")] = 0,
    min_rt: Annotated[
        float | None,
        typer.Option(help="keep only judgements made in more than this many seconds (rt)"),
    ] = None,
    responses: Annotated[
        Path | None,
        typer.Option(help="the dataset judged: fills each judgement's unit (its stimulus)"),
    ] = None,
) -> None:
    """Confusion matrices and imitation detectability with 95% cluster-bootstrap intervals
    (stimuli/conversations and judges resampled) — overall, per model (split by judge type
    and task), per judge type, per conversation length, per task and per judge group."""
    from turinglab.itt.judgements import load_judgements
    from turinglab.itt.metrics import score as score_rows

    if replicates < 100:
        _fail(f"--replicates must be at least 100, not {replicates}")
    try:
        rows = load_judgements(judgements)
        if responses is not None:
            from turinglab.itt.dataset import load_dataset
            from turinglab.itt.judgements import with_units
            from turinglab.itt.study import response_units

            rows = with_units(rows, response_units(load_dataset(responses)))
        if min_rt is not None:
            rows = _fast_dropped(rows, min_rt)
        result = score_rows(
            rows, group_by or [], replicates=replicates, seed=seed, ai_inference=_ai(judgements)
        )
    except ValueError as err:
        _fail(str(err))
        return
    if as_json:
        _echo_json(result)
        return
    _print_score(result)


def _ai(judgements: Path) -> dict[str, Any] | None:
    """The permutation inference `itt judge` stored beside the judgements (study.json), if any."""
    facts = judgements.parent / "study.json"
    if not facts.is_file():
        return None
    inference = json.loads(facts.read_text()).get("ai_judges", {}).get("inference")
    return inference if isinstance(inference, dict) else None


def _fast_dropped(rows: list[Any], min_rt: float) -> list[Any]:
    """The paper's response-time rule: judgements made in `min_rt` seconds or less are left
    out. Rows without an rt are refused rather than silently kept."""
    missing = sum(1 for r in rows if r.rt is None)
    if missing:
        raise ValueError(f"--min-rt: {missing} judgements have no rt column value")
    kept = [r for r in rows if r.rt > min_rt]
    typer.echo(f"--min-rt {min_rt:g}: {len(rows) - len(kept)} of {len(rows)} left out", err=True)
    if not kept:
        raise ValueError(f"--min-rt {min_rt:g} leaves no judgement")
    return kept


def _print_score(result: dict[str, Any]) -> None:
    from turinglab.itt.score_text import print_score

    print_score(result, width=None if sys.stdout.isatty() else 160)


@dataset_app.command("check")
def dataset_check(path: Annotated[Path, typer.Argument(help="dataset (.csv or .jsonl)")]) -> None:
    """Validate a dataset; bad rows are refused with their line and column."""
    from collections import Counter

    from turinglab.itt.dataset import load_dataset

    try:
        rows = load_dataset(path)
    except ValueError as err:
        _fail(str(err))
        return
    counts = Counter((r.task, r.source) for r in rows)
    agents = Counter(r.agent for r in rows if r.source == "machine")
    typer.echo(f"{path}: {len(rows)} responses")
    for (task, source), n in sorted(counts.items()):
        typer.echo(f"  {task:18} {source:8} {n}")
    for agent, n in sorted(agents.items()):
        typer.echo(f"  machine agent {agent}: {n}")


@dataset_app.command("convert")
def dataset_convert(
    src: Annotated[Path, typer.Argument(help="dataset or judgements file to read")],
    dst: Annotated[Path, typer.Argument(help="file to write (.csv or .jsonl)")],
    kind: Annotated[str, typer.Option(help="dataset | judgements")] = "dataset",
) -> None:
    """Convert between CSV and JSONL (validating every row on the way)."""
    from turinglab.itt.dataset import load_dataset, save_dataset
    from turinglab.itt.judgements import load_judgements, save_judgements

    try:
        if kind == "dataset":
            rows: list[Any] = load_dataset(src)
            save_dataset(dst, rows)
        elif kind == "judgements":
            rows = load_judgements(src)
            save_judgements(dst, rows)
        else:
            _fail(f"--kind must be dataset or judgements, not {kind!r}")
    except ValueError as err:
        _fail(str(err))
        return
    typer.echo(f"wrote {len(rows)} rows to {dst}")


@itt_app.command()
def judge(
    dataset: Annotated[Path, typer.Argument(help="dataset with human and machine responses")],
    out: Annotated[Path, typer.Option(help="study folder to write")] = Path("itt-study"),
    folds: Annotated[int, typer.Option(help="cross-validation folds")] = 10,
    seeds: Annotated[int, typer.Option(help="CV repetitions with seeds 0..n-1")] = 3,
    human_judgements: Annotated[
        Path | None, typer.Option(help="human judgements to add to the study (browser export)")
    ] = None,
    embedding_model: Annotated[
        str,
        typer.Option(
            help="sentence-transformers model (name in the cache, or a path); with "
            "--embedding-url, the model name sent to that endpoint"
        ),
    ] = "all-MiniLM-L6-v2",
    embedding_url: Annotated[
        str | None,
        typer.Option(help="OpenAI-compatible base URL (…/v1) to take embeddings from"),
    ] = None,
    embedding_key_env: Annotated[
        str, typer.Option(help="environment variable holding the endpoint's API key")
    ] = "OPENAI_API_KEY",
    permutations: Annotated[
        int,
        typer.Option(
            help="relabellings for each AI judge's permutation test and interval (0: none)"
        ),
    ] = 199,
    permutation_seed: Annotated[int, typer.Option(help="seed of the relabellings")] = 0,
) -> None:
    """Train and evaluate the AI judges (MiniLM embeddings + linear SVM, grouped stratified CV,
    extrapolation across agents); writes a study folder for `itt score` and `report`."""
    from turinglab.itt.dataset import load_dataset
    from turinglab.itt.embeddings import EmbeddingSpec
    from turinglab.itt.judgements import load_judgements
    from turinglab.itt.pipeline import run_judges
    from turinglab.itt.study import Study, existing_study

    held = existing_study(out)
    if held:
        _fail(f"{out} already holds a study ({held}); choose a new --out (nothing overwritten)")
    try:
        rows = load_dataset(dataset)
        extra = load_judgements(human_judgements) if human_judgements else []
        spec = EmbeddingSpec(embedding_model, embedding_url, embedding_key_env)
        result = run_judges(
            rows,
            folds=folds,
            seeds=range(seeds),
            embedding=spec,
            permutations=permutations,
            permutation_seed=permutation_seed,
        )
    except (ValueError, RuntimeError) as err:
        _fail(str(err))
        return
    facts = {
        "kind": "judged-dataset",
        "dataset": str(dataset),
        "ai_judges": result.summary,
        "extrapolation": result.extrapolation,
    }
    Study(rows, [*extra, *result.judgements], facts).save(out)
    _echo_json({"study": str(out), "ai_judgements": len(result.judgements), **result.summary})


async def _closing(agent: Agent, work: Coroutine[Any, Any, T]) -> T:
    """`work`, then `agent` closed (an HTTP agent's session), whatever happened."""
    try:
        return await work
    finally:
        await agent.aclose()


def _judge_agent(name: str, config: Path | None) -> Agent:
    """The agent a judging command names: an embedded one, or one from `--config`."""
    from turinglab.agents.registry import build_agent
    from turinglab.config import EMBEDDED_AGENTS, load_config

    configs = dict(EMBEDDED_AGENTS)
    if config is not None:
        configs.update(load_config(config).all_agents())
    if name not in configs:
        _fail(f"unknown agent {name!r} (known: {', '.join(sorted(configs))})")
    return build_agent(name, configs[name])


@itt_app.command("llm-judge")
def llm_judge(
    dataset: Annotated[Path, typer.Argument(help="dataset with conversations")],
    agent: Annotated[str, typer.Option(help="an embedded agent or one from --config")],
    out: Annotated[Path, typer.Option(help="judgements file to write")],
    shots: Annotated[int, typer.Option(help="0 (zero-shot) or 1 (one-shot)")] = 0,
    example: Annotated[
        str | None, typer.Option(help="conversation id of the one-shot example")
    ] = None,
    config: Annotated[Path | None, typer.Option(help="experiment config naming agents")] = None,
    exchanges: Annotated[int | None, typer.Option(help="cut conversations to this length")] = None,
    limit: Annotated[
        int | None,
        typer.Option(help="judge at most this many conversations, drawn across H-H/H-M/M-M"),
    ] = None,
    seed: Annotated[int, typer.Option(help="seed of the --limit draw")] = 0,
) -> None:
    """Zero- or one-shot LLM judge: "is A a human or an AI? is B?" for each conversation."""
    if out.exists():
        _fail(f"{out} exists; choose a new --out (nothing overwritten)")
    import asyncio

    from turinglab.agents.registry import AgentSetupError
    from turinglab.config import ConfigError
    from turinglab.itt.dataset import conversations, load_dataset
    from turinglab.itt.judgements import save_judgements
    from turinglab.itt.llm_judges import judge_conversations, stratified

    try:
        judge = _judge_agent(agent, config)
        convs = conversations(load_dataset(dataset))
        chosen = next((c for c in convs if c.id == example), None)
        if shots == 1 and chosen is None:
            _fail("--shots 1 needs --example naming a conversation of the dataset")
        run = asyncio.run(
            _closing(
                judge,
                judge_conversations(
                    judge,
                    convs if limit is None else stratified(convs, limit, seed),
                    shots=shots,
                    example=chosen,
                    exchanges=exchanges,
                ),
            )
        )
    except (ValueError, ConfigError, AgentSetupError) as err:
        _fail(str(err))
        return
    save_judgements(out, run.judgements)
    _echo_json({"judgements": len(run.judgements), "unparsed": run.unparsed, "errors": run.errors})


@itt_app.command("vision-judge")
def vision_judge(
    dataset: Annotated[Path, typer.Argument(help="dataset with image-task responses")],
    agent: Annotated[str, typer.Option(help="a vision agent from --config (kind: openai)")],
    out: Annotated[Path, typer.Option(help="judgements file to write")],
    config: Annotated[Path | None, typer.Option(help="experiment config naming agents")] = None,
    limit: Annotated[
        int | None, typer.Option(help="judge at most this many responses, human and machine")
    ] = None,
    seed: Annotated[int, typer.Option(help="seed of the --limit draw")] = 0,
) -> None:
    """A vision model as judge: shown each image (captioning, colour estimation, object
    detection) and one answer, it says whether a human or a machine gave it."""
    if out.exists():
        _fail(f"{out} exists; choose a new --out (nothing overwritten)")
    import asyncio

    from turinglab.agents.registry import AgentSetupError
    from turinglab.config import ConfigError
    from turinglab.itt.dataset import load_dataset
    from turinglab.itt.judgements import save_judgements
    from turinglab.itt.vision_judges import balanced, image_rows, judge_images

    try:
        judge = _judge_agent(agent, config)
        rows = image_rows(load_dataset(dataset))
        if not rows:
            _fail(f"{dataset}: no captioning, colour or object answers with an image")
        chosen = rows if limit is None else balanced(rows, limit, seed)
        run = asyncio.run(_closing(judge, judge_images(judge, chosen, dataset.parent, seed=seed)))
    except (ValueError, ConfigError, AgentSetupError) as err:
        _fail(str(err))
        return
    save_judgements(out, run.judgements)
    _echo_json({"judgements": len(run.judgements), "unparsed": run.unparsed, "errors": run.errors})


@itt_app.command()
def batch(
    dataset: Annotated[Path, typer.Argument(help="dataset to draw responses from")],
    judge_id: Annotated[str, typer.Option("--judge", help="the judge the batch is for")],
    size: Annotated[int, typer.Option(help="trials (even: half human, half machine)")] = 20,
    seed: Annotated[int, typer.Option(help="seed of the draw (record it)")] = 0,
) -> None:
    """Draw one judging batch (JSON), as the arena's judging page does."""
    from dataclasses import asdict

    from turinglab.itt.batches import build_batch, candidates
    from turinglab.itt.dataset import load_dataset

    try:
        rows = load_dataset(dataset)
        cands = candidates(rows)
        drawn = build_batch(cands, size, judge=judge_id, seed=seed)
    except ValueError as err:
        _fail(str(err))
        return
    _echo_json(asdict(drawn))


@itt_app.command()
def textstats(
    dataset: Annotated[Path, typer.Argument(help="dataset with human and machine responses")],
) -> None:
    """Low-level text statistics, human vs machine, with two-tailed Welch t-tests (JSON)."""
    from dataclasses import asdict

    from turinglab.itt.dataset import load_dataset
    from turinglab.itt.textstats import compare

    try:
        rows = load_dataset(dataset)
        tests = compare(
            [r.text for r in rows if r.source == "human"],
            [r.text for r in rows if r.source == "machine"],
        )
    except ValueError as err:
        _fail(str(err))
        return
    _echo_json([asdict(t) for t in tests])


@itt_app.command()
def anova(
    judgements: Annotated[Path, typer.Argument(help="judgements with demographic columns")],
    factor_a: Annotated[str, typer.Argument(help="first demographic column")],
    factor_b: Annotated[str, typer.Argument(help="second demographic column")],
) -> None:
    """Two-way ANOVA of judge accuracy over two demographic columns (JSON)."""
    from turinglab.itt.judgements import load_judgements
    from turinglab.itt.textstats import demographics_anova

    try:
        _echo_json(demographics_anova(load_judgements(judgements), factor_a, factor_b))
    except ValueError as err:
        _fail(str(err))


@itt_app.command()
def demo(
    out: Annotated[Path, typer.Argument(help="study folder to write")] = Path("itt-demo"),
    machine: Annotated[int, typer.Option(help="machine conversations (embedded models)")] = 21,
    human: Annotated[int, typer.Option(help="human conversations (chitchat-dataset)")] = 21,
    exchanges: Annotated[int, typer.Option(help="messages per conversation")] = 4,
    seed: Annotated[int, typer.Option(help="seed of every draw and sample")] = 0,
    folds: Annotated[int, typer.Option(help="cross-validation folds")] = 10,
    llm_judge_agent: Annotated[
        str | None, typer.Option("--llm-judge", help="embedded agent as zero/one-shot judge")
    ] = None,
    llm_limit: Annotated[int, typer.Option(help="conversations the LLM judge reads")] = 8,
    report_out: Annotated[
        Path | None, typer.Option("--report", help="also write the HTML report here")
    ] = None,
) -> None:
    """The offline conversation demo: generate machine conversations with the embedded
    models, take human ones from chitchat-dataset, train/evaluate AI judges, score."""
    from turinglab.itt.demo import build_conversation_demo
    from turinglab.itt.metrics import score as score_rows

    try:
        study = build_conversation_demo(
            out,
            machine=machine,
            human=human,
            exchanges=exchanges,
            seed=seed,
            folds=folds,
            llm_judge=llm_judge_agent,
            llm_limit=llm_limit,
            progress=lambda m: typer.echo(f"· {m}", err=True),
        )
    except (ValueError, RuntimeError) as err:
        _fail(str(err))
        return
    f = study.facts
    typer.echo(
        f"{out}: {f['conversations']['human']} human + {f['conversations']['machine']} machine "
        f"conversations ({f['conversations']['machine_flagged']} flagged, "
        f"{len(f['resamples'])} re-samples), {len(study.judgements)} AI judgements, "
        f"{f['total_seconds']} s"
    )
    _print_score(score_rows(study.judgements))
    if report_out is not None:
        from turinglab.report.itt_report import itt_report

        typer.echo(f"report: {itt_report(out, report_out)}")


@itt_app.command()
def bench(
    study: Annotated[Path, typer.Argument(help="study folder (e.g. from `itt demo`)")],
    folds: Annotated[int, typer.Option(help="cross-validation folds")] = 10,
    seeds: Annotated[int, typer.Option(help="CV repetitions")] = 3,
    repeat: Annotated[int, typer.Option(help="timed embedding passes (best is kept)")] = 3,
) -> None:
    """Time the AI-judge pipeline on a study's responses: embeddings/s (warm model, best of
    `repeat`) and cross-validation seconds of the per-sentence judge (JSON)."""
    import os
    import platform
    import time

    from turinglab.itt.ai_judges import Sample, cross_validate
    from turinglab.itt.embeddings import embed
    from turinglab.itt.study import load_study

    try:
        responses = load_study(study).responses
    except ValueError as err:
        _fail(str(err))
        return
    texts = [r.text for r in responses]
    start = time.perf_counter()
    embed(texts[:8])  # load the model and warm it up
    load_s = time.perf_counter() - start
    runs = [embed(texts) for _ in range(max(1, repeat))]
    best = min(runs, key=lambda r: r.seconds)
    samples = [
        Sample(
            r.item,
            r.conversation or r.stimulus_id,
            r.source,
            r.agent if r.source == "machine" else None,
        )
        for r in responses
    ]
    cv = cross_validate(best.vectors, samples, judge="bench", folds=folds, seeds=range(seeds))
    _echo_json(
        {
            "study": str(study),
            "texts": len(texts),
            "model_load_seconds": round(load_s, 2),
            "embedding_seconds_best": round(best.seconds, 3),
            "embeddings_per_second": round(best.per_second, 1),
            "cv_folds": cv.folds,
            "cv_seeds": seeds,
            "cv_seconds": round(cv.seconds, 3),
            "cv_fits": cv.folds * seeds,
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        }
    )


@itt_app.command("demo-words")
def demo_words(
    out: Annotated[Path, typer.Argument(help="dataset file to write (.csv or .jsonl)")],
    seed: Annotated[int, typer.Option(help="seed of every sample")] = 0,
    cues: Annotated[
        str | None, typer.Option(help="comma-separated cues instead of the built-in 30")
    ] = None,
) -> None:
    """Word associations from the embedded models for the built-in cues (machine-only: no
    shipped package has human association norms), post-processed as in the paper. Plays the
    `itt-response` game in-process; `turinglab run configs/itt-words.yaml` is the same through
    the runner (resume, several workers)."""
    import asyncio

    from turinglab.itt.dataset import save_dataset
    from turinglab.itt.demo import demo_agents
    from turinglab.itt.word_association import DEMO_CUES, generate_associations

    chosen = [c.strip() for c in cues.split(",") if c.strip()] if cues else list(DEMO_CUES)
    if not chosen:
        _fail("--cues names no cue")
    try:
        run = asyncio.run(generate_associations(demo_agents(max_tokens=6), chosen, seed=seed))
    except (ValueError, RuntimeError) as err:
        _fail(str(err))
        return
    save_dataset(out, run.rows)
    _echo_json(
        {"dataset": str(out), "kept": len(run.rows), "dropped": run.dropped, "errors": run.errors}
    )


@itt_app.command("clean-words")
def clean_words(
    words: Annotated[Path, typer.Argument(help="CSV with columns cue and answer")],
    out: Annotated[Path, typer.Option(help="CSV to write: cue, answer, cleaned, reason")],
) -> None:
    """Apply the paper's word-association post-processing to a lab's own answers (human or
    machine): letters only, English words, singular nouns, base-form verbs, NLTK stop words, 3
    letters, the 60% similarity rule."""
    import csv

    from turinglab.itt.tables import csv_dicts
    from turinglab.itt.word_rules import postprocess_association

    if out.exists():
        _fail(f"{out} exists; choose a new --out (nothing overwritten)")
    try:
        if not words.is_file():
            raise ValueError(f"{words}: no such file")
        header, rows = csv_dicts(words)
        if not {"cue", "answer"} <= set(header):
            raise ValueError(f"{words}: needs columns cue and answer (has {', '.join(header)})")
        cleaned = []
        for _, raw in rows:
            got = postprocess_association(raw.get("cue") or "", raw.get("answer") or "")
            cleaned.append(
                {
                    "cue": raw["cue"],
                    "answer": raw["answer"],
                    "cleaned": got.word or "",
                    "reason": got.dropped or "",
                }
            )
    except ValueError as err:
        _fail(str(err))
        return
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=["cue", "answer", "cleaned", "reason"])
        writer.writeheader()
        writer.writerows(cleaned)
    kept = sum(1 for r in cleaned if r["cleaned"])
    typer.echo(f"{out}: {len(cleaned)} answers: {kept} kept, {len(cleaned) - kept} refused")


@itt_app.command("import")
def import_judgements(
    source: Annotated[Path, typer.Argument(help="a psiTurk export (CSV with datastring)")],
    out: Annotated[Path, typer.Option(help="folder to write (must not hold a study)")],
    fmt: Annotated[str, typer.Option("--format", help="psiturk")] = "psiturk",
    qualified_only: Annotated[
        bool,
        typer.Option("--qualified-only", help="the paper's rule: topic accuracy at least 0.75"),
    ] = False,
    min_rt: Annotated[
        float | None, typer.Option(help="leave out trials answered in this many seconds or less")
    ] = None,
    drop_wrong_topic: Annotated[
        bool,
        typer.Option(
            "--drop-wrong-topic",
            help="the paper's rule: leave out trials whose topic question was answered wrong",
        ),
    ] = False,
    drop_feedback: Annotated[
        bool,
        typer.Option(
            "--drop-feedback",
            help="leave out trials after which the right answer was shown (the paper gave none)",
        ),
    ] = False,
    drop_failed_catch: Annotated[
        bool,
        typer.Option(
            "--drop-failed-catch",
            help="leave out participants who answered any catch trial wrong",
        ),
    ] = False,
) -> None:
    """Import the paper's released human judgements (kreimanlab/TuringTest psiTurk exports):
    writes judgements.csv (one row per speaker judged), trials.csv (the 4-way answers) and
    study.json (what was excluded and why)."""
    from turinglab.itt.psiturk import import_psiturk, save_import
    from turinglab.itt.study import existing_study

    if fmt != "psiturk":
        _fail(f"--format must be psiturk, not {fmt!r}")
    held = existing_study(out) or (out / "trials.csv").exists()
    if held:
        _fail(f"{out} already holds a study; choose a new --out (nothing overwritten)")
    try:
        result = import_psiturk(
            source,
            qualified_only=qualified_only,
            min_rt=min_rt,
            drop_wrong_topic=drop_wrong_topic,
            drop_feedback=drop_feedback,
            drop_failed_catch=drop_failed_catch,
        )
    except ValueError as err:
        _fail(str(err))
        return
    save_import(result, out)
    _echo_json({"out": str(out), "judgements": len(result.judgements), **result.facts["counts"]})
