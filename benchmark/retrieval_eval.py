"""Run ``.venv/bin/python benchmark/retrieval_eval.py``: recall, size and latency of retrieval.

Options::

    .venv/bin/python benchmark/retrieval_eval.py [--questions benchmark/retrieval_questions.yaml]
        [--index chroma|memory] [--repeat 3] [--verbose]

Question sets: ``retrieval_questions.yaml`` (93, used to tune the defaults),
``retrieval_questions_holdout.yaml`` (27, written after the first tuning round) and
``retrieval_questions_unseen.yaml`` (25, written after the defaults were fixed; never tuned on).

Uses the configured catalog (``GEOASK_CATALOG_PATH``, default the demo's) and embedder (default:
the shipped static model), reads the value lexicon from the configured database (start it first:
``geoask db up && geoask db load``), builds a fresh chroma index in a temporary folder, warms up,
then
times every question uncached (``--repeat`` times) and once more through the cache. Prints:
recall of needed tables, mean tables returned, mean tokens of the rendered subset vs. the full
catalog (WordPiece tokens of the shipped tokenizer), latency p50/p95, and whether the issue's
targets are met (recall >= 0.98 with <= 8 tables, p50 <= 50 ms, subset >= 3x smaller).
Exit code 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import jsonschema
import numpy as np

from geoask.base.yamlio import load_yaml
from geoask.catalog.model import load_catalog
from geoask.embeddings.base import get_embedder
from geoask.embeddings.static import shipped_embedder
from geoask.retrieval import InMemorySchemaIndex, RetrievalConfig, RetrievalIntent, SchemaRetriever
from geoask.retrieval.chroma_index import ChromaSchemaIndex, chroma_client
from geoask.retrieval.lexical import build_lexicon
from geoask.retrieval.render import render_catalog
from geoask.retrieval.service import index_values
from geoask.retrieval.values import ValueStore
from geoask.settings import get_settings

QUESTIONS = Path(__file__).with_name("retrieval_questions.yaml")

SCHEMA = {
    "type": "object",
    "required": ["questions"],
    "properties": {
        "questions": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id", "question", "needs"],
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "string"},
                    "question": {"type": "string", "minLength": 5},
                    "needs": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                    "intent": {"type": "object"},
                },
            },
        }
    },
}


@dataclass(frozen=True)
class Case:
    """One labelled question; each entry of ``needs`` is a set of acceptable tables."""

    id: str
    question: str
    needs: list[frozenset[str]]
    intent: RetrievalIntent | None


@dataclass(frozen=True)
class Outcome:
    """Named results of one case."""

    found: int
    needed: int
    tables: int
    tokens: int
    missing: list[str]


def load_cases(path: Path, known_tables: set[str]) -> list[Case]:
    """Read and validate the question file; every table named must exist in the catalog."""
    raw = load_yaml(path.read_text(encoding="utf-8"))
    jsonschema.validate(raw, SCHEMA)
    cases = []
    for item in raw["questions"]:
        needs = [frozenset(alt.split("|")) for alt in item["needs"]]
        unknown = set().union(*needs) - known_tables
        if unknown:
            raise SystemExit(f"{item['id']}: unknown tables {sorted(unknown)}")
        intent = RetrievalIntent(**item["intent"]) if "intent" in item else None
        cases.append(Case(item["id"], item["question"], needs, intent))
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise SystemExit("duplicate question ids")
    return cases


def evaluate(case: Case, tables: list[str], tokens: int) -> Outcome:
    """Count needed table groups present in ``tables``."""
    missing = ["|".join(sorted(group)) for group in case.needs if not group & set(tables)]
    return Outcome(len(case.needs) - len(missing), len(case.needs), len(tables), tokens, missing)


def main() -> int:
    """Run the evaluation and print the report; 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--index", choices=["chroma", "memory"], default="chroma")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    settings = get_settings()
    catalog = load_catalog(settings.catalog_path)
    cases = load_cases(args.questions, set(catalog.by_name))
    embedder = get_embedder(settings)
    config = replace(RetrievalConfig.from_settings(settings), cache_size=0)
    count_tokens = shipped_embedder().count_tokens

    with tempfile.TemporaryDirectory() as home:
        index = (ChromaSchemaIndex(chroma_client(Path(home), None), embedder)
                 if args.index == "chroma" else InMemorySchemaIndex())
        values = index_values(settings, catalog, store=ValueStore(Path(home)))
        if values.warning:
            print(f"warning: {values.warning}", file=sys.stderr)
        lexicon = build_lexicon(catalog, values.values)
        retriever = SchemaRetriever(catalog, index, embedder, config, count_tokens, lexicon)
        t0 = time.perf_counter()
        retriever.ensure_index()
        build_s = time.perf_counter() - t0
        for case in cases[:10]:  # warm-up
            retriever.retrieve(case.question, case.intent)

        latencies_ms: list[float] = []
        outcomes: list[Outcome] = []
        for case in cases:
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                subset = retriever.retrieve(case.question, case.intent)
                latencies_ms.append((time.perf_counter() - t0) * 1000)
            outcome = evaluate(case, subset.table_names, subset.token_count)
            outcomes.append(outcome)
            if args.verbose or outcome.missing:
                mark = "MISS " + ",".join(outcome.missing) if outcome.missing else "ok"
                print(f"{case.id:<4} {mark:<40} {subset.table_names} {subset.token_count} tok"
                      f"  | {case.question}")

        cached = SchemaRetriever(catalog, index, embedder, replace(config, cache_size=256),
                                 count_tokens, lexicon)
        for case in cases:
            cached.retrieve(case.question, case.intent)
        cached_ms = []
        for case in cases:
            t0 = time.perf_counter()
            cached.retrieve(case.question, case.intent)
            cached_ms.append((time.perf_counter() - t0) * 1000)

    full_tokens = count_tokens(render_catalog(catalog))
    recall = sum(o.found for o in outcomes) / sum(o.needed for o in outcomes)
    mean_tables = statistics.mean(o.tables for o in outcomes)
    max_tables = max(o.tables for o in outcomes)
    mean_tokens = statistics.mean(o.tokens for o in outcomes)
    p50, p95 = np.percentile(latencies_ms, [50, 95])
    ratio = full_tokens / mean_tokens
    print()
    print(f"questions:                 {len(cases)} ({sum(o.needed for o in outcomes)} needed "
          f"table groups; {len(catalog.tables)} tables in the catalog)")
    print(f"embedder / index:          {embedder.name} / {args.index} "
          f"(index built in {build_s * 1000:.0f} ms)")
    print(f"alpha / min relative score: {config.alpha} / {config.min_relative_score}")
    print(f"recall of needed tables:   {recall:.3f}  "
          f"({sum(1 for o in outcomes if not o.missing)}/{len(cases)} questions complete)")
    print(f"tables returned:           mean {mean_tables:.2f}, max {max_tables}")
    print(f"rendered subset tokens:    mean {mean_tokens:.0f} vs full catalog {full_tokens} "
          f"({ratio:.1f}x smaller; WordPiece tokens of the shipped tokenizer)")
    print(f"latency uncached (ms):     p50 {p50:.2f}, p95 {p95:.2f} "
          f"({len(latencies_ms)} timed retrievals after warm-up)")
    print(f"latency cached (ms):       p50 {np.percentile(cached_ms, 50):.3f}")
    targets = {
        "recall >= 0.98 with <= 8 tables": recall >= 0.98 and max_tables <= 8,
        "latency p50 <= 50 ms": p50 <= 50,
        "subset >= 3x smaller": ratio >= 3,
    }
    for name, ok in targets.items():
        print(f"target {name:<32} {'PASS' if ok else 'FAIL'}")
    return 0 if all(targets.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
