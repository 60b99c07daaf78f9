"""Cut an answer into blocks (lines, list items, bounded pieces) before parsing.

Blocks never cross a line break unless the line was hard-wrapped inside a
sentence, drop list markers and markdown heading marks, and are at most
:data:`MAX_BLOCK_CHARS` long so that a 100,000-character answer parses in
bounded pieces. Offsets are into the answer text (half-open).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_BLOCK_CHARS = 5000
"""Longest block handed to the parser in one piece."""

_MARKER = re.compile(
    r"[ \t]*(?:(?P<heading>#{1,6})[ \t]+|(?:[-*\u2022\u25cf\u25aa+>]+|\d{1,3}[.)](?!\d)|"
    r"[a-zA-Z]\)|\(\w{1,3}\))[ \t]*)"
)
_SENTENCE_END = re.compile(r"[.!?;:][\"')\]]*\s*$")
_BREAK = re.compile(r"\n|(?<=[.!?:\"')\]])\\n|(?<!\\)\\n(?=\\n|[A-Z0-9*#\u2022-])")
_LABEL = re.compile(r"(?P<label>(?:\*\*)?[^\W\d_][^:.!?\d\n]{0,50}?:(?:\*\*)?)[ \t]+(?=\S)")
_CUT = re.compile(r"[.!?][\"')\]]*\s+")


@dataclass(frozen=True)
class Block:
    """A piece of the answer to parse: ``[start, end)``, whether it was a list item or a
    heading, and the lead-in text ("The four presidents were:") it continues, if any."""

    start: int
    end: int
    item: bool = False
    heading: bool = False
    lead_in: str | None = None


def segment(text: str) -> list[Block]:
    """Blocks of ``text`` in order, without blank lines, list markers or heading marks."""
    if not isinstance(text, str):
        raise TypeError(f"text: expected str, got {type(text).__name__}")
    lines: list[Block] = []
    for line_start, line_end in _line_ranges(text):
        marker = _MARKER.match(text, line_start, line_end)
        start = line_start
        item = heading = False
        if marker and marker.end() > line_start and _has_word(text, marker.end(), line_end):
            start = marker.end()
            heading = marker.group("heading") is not None
            item = not heading
        start, end = _strip(text, start, line_end)
        if start >= end:
            continue
        if (
            lines
            and not item
            and not heading
            and not lines[-1].heading
            and text[start].islower()
            and not _SENTENCE_END.search(text, lines[-1].start, lines[-1].end)
        ):
            prev = lines.pop()  # a hard-wrapped sentence: join the two lines
            lines.append(Block(prev.start, end, prev.item, prev.heading, prev.lead_in))
            continue
        label = _LABEL.match(text, start, end)
        if (
            label
            and label.end() < end
            and (item or text.startswith("**", start))
            and len(label.group("label").split()) <= 5
        ):
            # "Hardware compatibility: drivers may be missing" -> a heading and a sentence
            lines.append(Block(start, start + len(label.group("label")), False, True))
            lines.append(Block(label.end(), end, item, False))
            continue
        lines.append(Block(start, end, item, heading))
    blocks: list[Block] = []
    lead_in: str | None = None
    for block in lines:
        if block.item and lead_in is not None:
            block = Block(block.start, block.end, True, False, lead_in)
        elif not block.item:
            body = text[block.start : block.end].rstrip()
            lead_in = None
            if body.endswith(":"):
                last = _CUT.split(body[:-1])[-1].strip()
                lead_in = last if 0 < len(last) < 200 else None
        blocks.extend(_bounded(text, block))
    return blocks


def _line_ranges(text: str) -> list[tuple[int, int]]:
    """Line ranges, cut at real line breaks and at a literal backslash-n that ends a
    sentence or precedes a capital (a common artefact of escaped model output)."""
    ranges = []
    pos = 0
    for match in _BREAK.finditer(text):
        ranges.append((pos, match.start()))
        pos = match.end()
    ranges.append((pos, len(text)))
    return ranges


def _has_word(text: str, start: int, end: int) -> bool:
    return any(ch.isalnum() for ch in text[start:end])


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _bounded(text: str, block: Block) -> list[Block]:
    """Split a block longer than :data:`MAX_BLOCK_CHARS` at sentence ends, else at
    whitespace, else hard."""
    pieces = []
    start = block.start
    while block.end - start > MAX_BLOCK_CHARS:
        limit = start + MAX_BLOCK_CHARS
        cut = -1
        for match in _CUT.finditer(text, start + MAX_BLOCK_CHARS // 2, limit):
            cut = match.end()
        if cut < 0:
            space = text.rfind(" ", start + MAX_BLOCK_CHARS // 2, limit)
            cut = space + 1 if space >= 0 else limit
        s, e = _strip(text, start, cut)
        if s < e:
            pieces.append(Block(s, e, block.item, block.heading, block.lead_in))
        start = cut
    s, e = _strip(text, start, block.end)
    if s < e:
        pieces.append(Block(s, e, block.item, block.heading, block.lead_in))
    return pieces
