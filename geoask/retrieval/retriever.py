"""Schema retrieval: the tables and columns a question or planner subtask needs.

Semantic score of a table = (1 − α)·table similarity + α·best column similarity, with
α = ``GEOASK_RETRIEVAL_ALPHA`` (default 0.6, must be > 0.5); a table's similarity is the best of
its passages (summary, theme sentences, example questions), and similarities are the best over
the whole query and its clauses. Ranking score = semantic score + λ·lexical weight (λ =
``GEOASK_RETRIEVAL_LEXICAL_WEIGHT``, default 0.3; exact names, codes, place names, years).

Selection: tables failing the intent's hard filters are dropped; a table is kept if its semantic
score clears :func:`relative_cutoff` (median + 0.3 × the best's margin over the median), or its
lexical weight reaches ``lexical_keep`` (0.5), or it is among the ``min_ranked_tables`` (2)
best; foreign keys are followed (depth ≤ 3) to bring in geometry/lookup tables; at most
``max_tables`` (8) tables are returned; columns irrelevant to the query are trimmed from the
rendered prompt text. The defaults were tuned on ``benchmark/retrieval_questions.yaml``.

Token counts are WordPiece tokens of the shipped model's tokenizer (the bert-base-uncased
vocabulary of all-MiniLM-L6-v2): a local, offline stand-in for an LLM's token count (tiktoken
would download its encodings); an LLM's own BPE count will differ somewhat.
"""

from __future__ import annotations

import re
import statistics
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from geoask.catalog.model import Catalog, Table
from geoask.embeddings.base import Embedder
from geoask.retrieval.documents import catalog_content_hash, catalog_documents
from geoask.retrieval.filters import RetrievalIntent, passes_intent
from geoask.retrieval.index import SchemaIndex
from geoask.retrieval.joins import SelectedTable, complete_join_paths
from geoask.retrieval.lexical import LexicalHit, Lexicon, build_lexicon
from geoask.retrieval.render import glossary_line, outline_block, table_block

if TYPE_CHECKING:
    from geoask.settings import Settings


@dataclass(frozen=True)
class RetrievalConfig:
    """Tuning of :class:`SchemaRetriever`; :meth:`from_settings` reads the ``GEOASK_`` settings."""

    alpha: float = 0.6
    max_tables: int = 8
    min_relative_score: float = 0.3
    min_ranked_tables: int = 2
    lexical_weight: float = 0.3
    lexical_keep: float = 0.5
    column_margin: float = 0.15
    min_columns: int = 3
    join_depth: int = 3
    cache_size: int = 256
    max_values: int = 12

    def __post_init__(self) -> None:
        """Reject α ≤ 0.5 or > 1 and a table budget outside 1..8."""
        if not 0.5 < self.alpha <= 1.0:
            raise ValueError(f"alpha must be in (0.5, 1], got {self.alpha}")
        if not 1 <= self.max_tables <= 8:
            raise ValueError(f"max_tables must be in 1..8, got {self.max_tables}")

    @classmethod
    def from_settings(cls, settings: Settings) -> RetrievalConfig:
        """The configuration given by the ``GEOASK_RETRIEVAL_*`` settings."""
        return cls(**settings.values_for("retrieval_", (f.name for f in fields(cls))))


class RetrievedTable(BaseModel):
    """One table of a schema subset, with how it was found and which columns are shown."""

    model_config = ConfigDict(frozen=True)

    name: str
    score: float = Field(
        description="Ranking score (semantic + lexical); 0 if the intent's filters excluded it."
    )
    table_similarity: float = Field(description="Cosine similarity of the table document.")
    column_similarity: float = Field(description="Best cosine similarity of its columns.")
    lexical_terms: list[str] = Field(description="Exact terms of the query naming this table.")
    joined_in: bool = Field(description="Added by foreign-key join-path completion.")
    joined_from: str | None = Field(description="The table whose foreign key brought it in.")
    columns: list[str] = Field(description="Columns kept in the rendered prompt text.")
    omitted_columns: int = Field(description="Columns trimmed as irrelevant to the query.")


class SchemaSubset(BaseModel):
    """The local schema a question needs: typed tables plus compact prompt text."""

    model_config = ConfigDict(frozen=True)

    query: str
    intent: RetrievalIntent | None
    tables: list[RetrievedTable] = Field(description="Ranked tables first, then joined-in ones.")
    prompt_text: str = Field(description="Compact schema text for a model's prompt.")
    outline_text: str = Field(description="Tables and column names, types, keys and units only "
                                          "(for agents that write no SQL).")
    token_count: int = Field(description="WordPiece tokens of prompt_text (shipped tokenizer).")
    content_hash: str = Field(description="Content hash of the catalog the index was built on.")

    @property
    def table_names(self) -> list[str]:
        """Names of all tables in the subset, in order."""
        return [t.name for t in self.tables]

    def catalog_tables(self, catalog: Catalog) -> list[Table]:
        """The subset as catalog :class:`Table` objects holding only the kept columns."""
        out = []
        for retrieved in self.tables:
            table = catalog.table(retrieved.name)
            kept = [c for c in table.columns if c.name in retrieved.columns]
            out.append(table.model_copy(update={"columns": kept}))
        return out


@dataclass(frozen=True)
class TableScore:
    """How one table scored for a query: similarities (cosine), lexical hits and the total."""

    name: str
    score: float
    semantic_score: float
    lexical_score: float
    table_similarity: float
    column_similarity: float
    column_similarities: dict[str, float]
    lexical: list[LexicalHit]


class SchemaRetriever:
    """Retrieves schema subsets from a :class:`SchemaIndex` built on ``catalog``.

    Call :meth:`ensure_index` once (it rebuilds only when the catalog content hash changed),
    then :meth:`retrieve`. Results are cached per (query, intent) in an LRU of
    ``config.cache_size`` entries.
    """

    def __init__(
        self,
        catalog: Catalog,
        index: SchemaIndex,
        embedder: Embedder,
        config: RetrievalConfig | None = None,
        count_tokens: Callable[[str], int] | None = None,
        lexicon: Lexicon | None = None,
    ) -> None:
        self.catalog = catalog
        self.index = index
        self.embedder = embedder
        self.config = config or RetrievalConfig()
        self.lexicon = lexicon or build_lexicon(catalog)
        self.content_hash = catalog_content_hash(catalog, embedder.name)
        documents = catalog_documents(catalog)
        self._n_documents = {kind: sum(d.kind == kind for d in documents)
                             for kind in ("table", "column")}
        self._count_tokens = count_tokens or _shipped_token_count
        self._cache: OrderedDict[tuple[str, str, str, str, str, str], SchemaSubset] = OrderedDict()
        self.cache_hits = 0

    def ensure_index(self, force: bool = False) -> bool:
        """Rebuild the index if its content hash differs from the catalog's; True if rebuilt."""
        if not force and self.index.content_hash() == self.content_hash:
            return False
        documents = catalog_documents(self.catalog)
        vectors = self.embedder.embed([d.text for d in documents])
        self.index.rebuild(documents, vectors, self.content_hash)
        self._cache.clear()
        return True

    def rank(self, query: str, intent: RetrievalIntent | None = None) -> list[TableScore]:
        """Every table passing the intent's hard filters, scored, best first.

        Similarities are the best over the whole query and its clauses (see
        :func:`query_clauses`), so each part of a two- or three-table question finds its table.
        """
        texts = query_clauses(query)
        vectors = self.embedder.embed(texts)
        table_sims: dict[str, float] = {}
        for table_hits in self.index.query(vectors, "table", self._n_documents["table"]):
            for hit in table_hits:  # best passage per table, over all clauses
                table_sims[hit.table] = max(hit.similarity, table_sims.get(hit.table, -1.0))
        column_sims: dict[str, dict[str, float]] = {}
        for column_hits in self.index.query(vectors, "column", self._n_documents["column"]):
            for hit in column_hits:
                if hit.column is not None:
                    sims = column_sims.setdefault(hit.table, {})
                    sims[hit.column] = max(hit.similarity, sims.get(hit.column, -1.0))
        lexical: dict[str, list[LexicalHit]] = {}
        for lex_hit in self.lexicon.match(query):
            lexical.setdefault(lex_hit.table, []).append(lex_hit)
        alpha, weight = self.config.alpha, self.config.lexical_weight
        scored = []
        for table in self.catalog.tables:
            if not passes_intent(table, intent):
                continue
            cols = column_sims.get(table.name, {})
            best_col = max(cols.values(), default=0.0)
            table_sim = table_sims.get(table.name, 0.0)
            hits = lexical.get(table.name, [])
            lexical_score = min(1.0, sum({h.term: h.weight for h in hits}.values()))
            semantic = (1 - alpha) * table_sim + alpha * best_col
            scored.append(TableScore(table.name, semantic + weight * lexical_score, semantic,
                                  lexical_score, table_sim, best_col, cols, hits))
        return sorted(scored, key=lambda s: (-s.score, s.name))

    def retrieve(self, query: str, intent: RetrievalIntent | None = None,
                 within: Sequence[str] | None = None, geometry: bool = True) -> SchemaSubset:
        """The schema subset for ``query`` (a question or planner subtask) under ``intent``.

        ``within``: tables already chosen (those a plan step reads). Exactly these are kept,
        in ranked order: no ``intent`` filter, score cutoff or join completion applies; columns
        are still trimmed for ``query``. Unknown names are ignored.

        ``geometry=False`` leaves geometry columns out (for SQL that may not compute with them
        and need not export them).
        """
        key = (self.content_hash, " ".join(query.split()), repr(self.config),
               intent.model_dump_json() if intent else "",
               "" if within is None else "+" + ",".join(sorted(within)), str(geometry))
        if key in self._cache:
            self._cache.move_to_end(key)
            self.cache_hits += 1
            return self._cache[key]
        subset = self._retrieve(query, intent, within, geometry)
        if self.config.cache_size > 0:
            self._cache[key] = subset
            while len(self._cache) > self.config.cache_size:
                self._cache.popitem(last=False)
        return subset

    def _retrieve(self, query: str, intent: RetrievalIntent | None,
                  within: Sequence[str] | None, geometry: bool) -> SchemaSubset:
        if within is not None:
            ranked = [s for s in self.rank(query) if s.name in within]
            kept = [s.name for s in ranked]
        else:
            ranked = self.rank(query, intent)
            cutoff = relative_cutoff([s.semantic_score for s in ranked],
                                     self.config.min_relative_score)
            kept = [
                s.name for i, s in enumerate(ranked)
                if s.semantic_score >= cutoff
                or s.lexical_score >= self.config.lexical_keep
                or i < self.config.min_ranked_tables
            ]
        by_name = {s.name: s for s in ranked}
        selected = ([SelectedTable(name) for name in kept] if within is not None else
                    complete_join_paths(self.catalog, kept, self.config.max_tables,
                                        self.config.join_depth))
        tables = [self._retrieved_table(s, by_name.get(s.name), geometry) for s in selected]
        tables.sort(key=lambda t: (t.joined_in, -t.score))  # ranked by score, then joined-in
        glossary: dict[str, str] = {}
        blocks = [
            table_block(
                self.catalog.schema_of(self.catalog.table(t.name)),
                self.catalog.table(t.name),
                t.columns,
                f" (joined in: referenced by {t.joined_from})" if t.joined_in else "",
                max_values=self.config.max_values,
                query=query,
                brief=t.joined_in,
                glossary=glossary,
            )
            for t in tables
        ]
        prompt_text = "\n\n".join(filter(None, [*blocks, glossary_line(glossary)]))
        outline = "\n".join(
            outline_block(self.catalog.schema_of(self.catalog.table(t.name)),
                          self.catalog.table(t.name), t.columns,
                          f" (joined in via {t.joined_from})" if t.joined_in else "")
            for t in tables)
        return SchemaSubset(
            query=query,
            intent=intent,
            tables=tables,
            prompt_text=prompt_text,
            outline_text=outline,
            token_count=self._count_tokens(prompt_text),
            content_hash=self.content_hash,
        )

    def _retrieved_table(
        self, selected: SelectedTable, scored: TableScore | None, geometry: bool = True
    ) -> RetrievedTable:
        table = self.catalog.table(selected.name)
        spatial = {c.name for c in table.spatial_columns}
        hidden = set() if geometry else spatial
        sims = {c: s for c, s in (scored.column_similarities if scored else {}).items()
                if c not in hidden}
        keep = set(table.primary_key) | {c for fk in table.foreign_keys for c in fk.columns}
        keep |= spatial
        if scored is not None:
            keep |= {h.column for h in scored.lexical if h.column is not None}
        by_similarity = sorted(sims, key=lambda c: -sims[c])
        keep |= set(by_similarity[: self.config.min_columns])
        if sims and not selected.joined_in:
            best = sims[by_similarity[0]]
            keep |= {c for c, s in sims.items() if s >= best - self.config.column_margin}
        columns = [c.name for c in table.columns if c.name in keep - hidden]
        return RetrievedTable(
            name=table.name,
            score=round(scored.score, 4) if scored else 0.0,
            table_similarity=round(scored.table_similarity, 4) if scored else 0.0,
            column_similarity=round(scored.column_similarity, 4) if scored else 0.0,
            lexical_terms=sorted({h.term for h in scored.lexical}) if scored else [],
            joined_in=selected.joined_in,
            joined_from=selected.joined_from,
            columns=columns,
            omitted_columns=len(table.columns) - len(columns),
        )


_CLAUSE_SPLIT = re.compile(
    r"\s*(?:,\s|;|\bcompared (?:with|to)\b|\bversus\b|\bvs\.?|\band\b|\bwith\b|\bhave\b|"
    r"\bhas\b|\bnear\b|\bwithin\b|\bin each\b|\bper\b|\bof each\b)\s*",
    re.IGNORECASE,
)


def query_clauses(query: str) -> list[str]:
    """The query, then its clauses if it splits into several (at commas, 'and', 'with', ...).

    >>> query_clauses("Total rainfall of each county compared with its SIDS deaths")
    ['Total rainfall of each county compared with its SIDS deaths', 'Total rainfall', \
'county', 'its SIDS deaths']
    """
    parts = [p for p in _CLAUSE_SPLIT.split(query) if p and p.strip()]
    clauses = [c for c in (p.strip(" ?.!") for p in parts) if c]
    return [query, *clauses] if len(clauses) > 1 else [query]


def relative_cutoff(scores: Sequence[float], fraction: float) -> float:
    """Score a table needs to be kept: the median plus ``fraction`` of the best's margin over it.

    Similarities of a static model sit in a narrow band whose floor moves with the query, so the
    margin over the median table separates relevant tables better than a ratio to the best.

    >>> relative_cutoff([0.8, 0.5, 0.4], 0.5)
    0.65
    """
    if not scores:
        return 0.0
    median = statistics.median(scores)
    return median + fraction * (max(scores) - median)


def _shipped_token_count(text: str) -> int:
    from geoask.embeddings.static import shipped_embedder

    return shipped_embedder().count_tokens(text)
