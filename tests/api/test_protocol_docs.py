"""docs/protocol.md is generated from the protocol models and must be current; every message type
has a valid example."""

from __future__ import annotations

import typing

from app.api import protocol
from app.api.protocol_docs import DOC, render


def test_protocol_doc_is_generated_from_the_models() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), "run: python -m app.api.protocol_docs"


def _types(union: object) -> set[str]:
    annotated = typing.get_args(union)[0]
    return {typing.get_args(m.model_fields["type"].annotation)[0] for m in typing.get_args(annotated)}


def test_every_message_type_has_an_example_that_validates() -> None:
    examples = {e.model_dump()["type"]: e for e in protocol.EXAMPLES}
    client, server = _types(protocol.ClientMessage), _types(protocol.ServerMessage)
    assert client | server == set(examples)
    for kind, example in examples.items():
        adapter = protocol.client_message if kind in client else protocol.server_message
        assert adapter.validate_python(example.model_dump()).type == kind
