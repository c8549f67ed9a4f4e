"""Bounded text in the agents' outputs: every free-text field has a length its meaning allows.

The bounds are sent with the output schemas (``maxLength``, ``maxItems``). A server that
binds generation to the schema (llama.cpp's grammar from a JSON-schema ``response_format``)
closes the string there: a small model that runs on inside a string - SmolLM2-135M spelled
one ``target`` over 1,100 tokens until its token limit - ends it and goes on with the rest of
the object instead of being cut off. A model that ignores the schema gets the usual output
retry naming the field and its bound. The bounds are far above what a good answer needs
(the verified programs' longest objective: 238 characters); SQL, scripts and the final
answer's summary and payload are not bounded here (the guard, the sandbox and the answer's
checks bound what they may do).
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field

PHRASE_CHARS: Final = 200
"""A place as written, an analysis target, a (schema-qualified) table or field name."""
SENTENCE_CHARS: Final = 1_000
"""An objective, a reason, a method: a sentence or two."""
LIST_ITEMS: Final = 30
"""Tables, inputs, answer fields or missing fields named in one output."""

Phrase = Annotated[str, Field(max_length=PHRASE_CHARS)]
Sentence = Annotated[str, Field(max_length=SENTENCE_CHARS)]
