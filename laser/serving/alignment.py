"""What POST /align checks and answers: two lists of sentences (two documents, one sentence an
item) aligned into beads as `laser align` aligns two files (the handler is in `app`)."""
from __future__ import annotations

from .limits import Limits, RequestError, checked_sentence, json_type
from .models import ServedModel


def document_sentences(body: dict, field: str, limits: Limits, truncate: bool) -> list[str]:
    """The sentences of one side: an array of at most --max-align-sentences strings (empty: a
    side with nothing to align), each a sentence as every endpoint takes it."""
    if field not in body:
        raise RequestError(422, f"the body needs '{field}': an array of sentences")
    value = body[field]
    if not isinstance(value, list):
        raise RequestError(422, f"'{field}' must be an array of strings, not {json_type(value)}")
    if len(value) > limits.max_align_sentences:
        raise RequestError(413, f"'{field}' holds {len(value)} sentences; the limit is "
                                f"{limits.max_align_sentences} per side "
                                "(--max-align-sentences)")
    return [checked_sentence(text, f"{field}[{position}]", limits, truncate)
            for position, text in enumerate(value)]


def check_one_space(src: ServedModel, trg: ServedModel) -> None:
    """Refuse (409) sides embedded in two embedding spaces: their cosines mean nothing."""
    from ..errors import LaserError
    from ..models.spaces import check_same_space
    try:
        check_same_space(src.origin, trg.origin)
    except LaserError as error:
        raise RequestError(409, str(error), "model_mismatch") from None


def bead_records(beads: list, src: list[str], trg: list[str]) -> list[dict]:
    """The answer's beads: 0-based sentence indices of each side, their texts, the score."""
    return [{"src": list(bead.src), "trg": list(bead.trg),
             "src_text": " ".join(src[i] for i in bead.src),
             "trg_text": " ".join(trg[i] for i in bead.trg), "score": round(bead.score, 6)}
            for bead in beads]
