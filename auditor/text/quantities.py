"""Numbers and quantities: numbers in words and digits, each in the slot it fills.

:func:`quantities` reads the numbers of a text with the unit or noun each counts
("eight branches" -> 8 ``branch``, "an hour and a half" -> 90 ``minute``, "8:45 am" ->
525 ``clock``); :func:`same_amount` and :func:`same_slot` compare two of them;
:func:`canonical_amounts` writes amounts of money with their currency sign. The word
lists they read (number words, unit spellings, currencies, duration phrases) live in
``auditor/judges/wordlists/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from auditor.judges.wordlists import NEVER, derived, entries, mapping, pairs
from auditor.text.words import MONTH_NAMES, WEEKDAYS, stem, stop_words

_NUMBER = re.compile(
    r"(?<![A-Za-z])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*(%|percent|per cent|million|billion|"
    r"thousand)?",
    re.IGNORECASE,
)
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9}


@derived
def _word_values() -> dict[str, float]:
    """The value of each number word up to ninety (``number_words.txt``)."""
    return {w: float(v) for w, v in pairs("number_words", "numbers")} | {
        w: float(v) for w, v in pairs("number_words", "tens")
    }


@derived
def _multipliers() -> dict[str, float]:
    """``hundred`` and ``dozen``: what the number before them is multiplied by."""
    return {w: float(v) for w, v in pairs("number_words", "multipliers")}


@derived
def _number_words() -> dict[str, float]:
    """The number words that count alone: "one" is left out (it is rarely a quantity:
    "one of the ..."), "hundred" and "dozen" are in."""
    return {w: v for w, v in _word_values().items() if v != 1.0} | _multipliers()


@derived
def _ones() -> frozenset[str]:
    """The number words of value one ("one"): a quantity only before a hyphen
    ("one-hour")."""
    return frozenset(w for w, v in _word_values().items() if v == 1.0)


@derived
def _number_word() -> re.Pattern[str]:
    found = _number_words()
    if not found:
        return NEVER
    return re.compile(r"\b(" + "|".join(map(re.escape, found)) + r")\b", re.IGNORECASE)


def numbers(text: str) -> frozenset[float]:
    """Normalised numeric values: "3,200" == "3200"; "2.5 million" == 2500000; "40%" == 40;
    number words up to twenty and the tens ("four" == 4)."""
    found = set()
    for match in _NUMBER.finditer(text):
        integer, fraction, unit = match.group(1), match.group(2), match.group(3)
        value = float(integer.replace(",", "") + ("." + fraction if fraction else ""))
        if unit and unit.lower() in _SCALE:
            value *= _SCALE[unit.lower()]
        found.add(round(value, 6))
    values = _number_words()
    found.update(values[m.group(1).lower()] for m in _number_word().finditer(text))
    return frozenset(found)


# --- numbers in their slots -------------------------------------------------------------


def _words_between(low: float, high: float) -> str:
    """The number words from ``low`` to ``high`` as a regular-expression alternation."""
    return "|".join(re.escape(w) for w, v in _word_values().items() if low <= v <= high)


@derived
def _compound_words() -> str:
    """Numbers in several words: "forty-five", "eighty five", "three hundred and twenty",
    "a hundred", "two dozen" (their value: :func:`word_number`); ``(?!)`` without number
    words."""
    small = entries("number_words", "numbers")
    tens = "|".join(map(re.escape, entries("number_words", "tens")))
    if not small or not tens:
        return "(?!)"
    digits = _words_between(1, 9)
    basic = (
        r"(?:(?:" + tens + r")(?:[-\s](?:" + digits + r")\b)?"
        r"|" + "|".join(map(re.escape, reversed(small))) + r")"
    )
    return (
        r"(?:(?:a|" + basic + r")\s+hundred(?:\s+and\s+" + basic + r")?\b"
        r"|(?:a|" + basic + r")\s+dozen\b"
        r"|(?:" + tens + r")[-\s](?:" + digits + r")\b)"
    )


@derived
def _qty() -> re.Pattern[str]:
    """A number: digits (with thousands separators), or words, a currency sign before it."""
    said = [*_number_words(), *_ones()]
    in_words = r"(?:" + "|".join(map(re.escape, said)) + r")\b" if said else "(?!)"
    return re.compile(
        r"(?<![A-Za-z0-9.])(?P<cur>[$€£])?\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
        r"|" + _compound_words() + r"|" + in_words + r")(?P<hy>-)?",
        re.IGNORECASE,
    )


def word_number(raw: str) -> float | None:
    """The value of a number written in words ("forty-five" 45, "three hundred and
    twenty" 320, "two dozen" 24, "a hundred" 100); None when ``raw`` is not one."""
    value = 0.0
    values, multipliers = _word_values(), _multipliers()
    for word in re.split(r"[-\s]+", raw.lower().strip()):
        if word == "and":
            continue
        if word == "a":
            value += 1
        elif word in multipliers:  # "hundred", "dozen"
            value = max(value, 1.0) * multipliers[word]
        elif word in values:
            value += values[word]
        else:
            return None
    return value


_AFTER = re.compile(r"\s*(?:-\s*)?([A-Za-z%]+(?:'[a-z]+)?)")
_BEFORE = re.compile(r"([A-Za-z%]+)[\s-]*$")


@derived
def _unit_aliases() -> dict[str, str]:
    """Each spelling of a unit with its unit (``unit_spellings.txt``)."""
    return mapping("unit_spellings")


@derived
def _measures() -> frozenset[str]:
    """The units the aliases name ("percent", "meter", "person", ...)."""
    return frozenset(_unit_aliases().values())


@derived
def unit_stems() -> dict[str, str]:
    """Stems of the words that name one unit, mapped to the unit's stem ("metr" ->
    "meter", "kilometr" -> "kilomet"): the same word when a sentence about a number is
    sought."""
    return {
        stem(word): stem(unit)
        for word, unit in _unit_aliases().items()
        if word.isalpha() and unit.isalpha() and stem(word) != stem(unit)
    }


_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_NAMED_BEFORE = re.compile(r"(?<![\w.])([A-Z][A-Za-z]*[a-z])\s$")


@derived
def _not_a_name() -> frozenset[str]:
    """Capitalised words before a number that do not name what it numbers ("In 2023",
    "May 14"): stop words, months and weekdays."""
    return frozenset({*stop_words(), *MONTH_NAMES, *WEEKDAYS})


@dataclass(frozen=True)
class Quantity:
    """A number in its slot: the value and the unit or noun it counts (None when the number
    stands alone, ``"year"`` for a bare year such as ``in 1998``)."""

    value: float
    unit: str | None
    start: int
    end: int
    nouns: tuple[str, ...] = ()
    """The words after the unit within its noun phrase ("4,300 emergency food parcels":
    unit "emergency", nouns "food", "parcel"): what the number may count as well."""


def _unit(word: str) -> str:
    aliases, measures = _unit_aliases(), _measures()
    low = word.lower().replace("'", "")
    low = aliases.get(low, low)
    if low in measures:
        return low
    if low.endswith("ies") and len(low) > 4:
        return low[:-3] + "y"
    if low.endswith(("ches", "shes", "sses", "xes")):
        return low[:-2]
    if low.endswith("s") and not low.endswith("ss") and len(low) > 3:
        low = low[:-1]
    return aliases.get(low, low)


@derived
def _durations() -> tuple[tuple[re.Pattern[str], float], ...]:
    """Durations in words, in minutes ("an hour and a half", "three quarters of an hour",
    "around the clock": ``duration_phrases.txt``)."""
    return tuple(
        (re.compile(pattern, re.IGNORECASE), float(minutes))
        for pattern, minutes in pairs("duration_phrases")
    )


_INTERVAL = re.compile(
    r"\b(?:every|each)\s+(?:(?P<part>half|quarter)(?:\s+an?)?[\s-]hour"
    r"|(?P<num>\d+(?:\.\d+)?|[a-z]+(?:-[a-z]+)?)\s+(?P<unit>minutes?|mins?|hours?)"
    r"|(?P<hour>hour))\b",
    re.I,
)
"""How often, as the minutes between two runs ("every hour", "every half hour", "every
20 minutes": unit ``interval``), apart from how long something lasts."""


@derived
def _clock() -> re.Pattern[str]:
    """A time of day: "8:45 am", "7pm", "5.30 p.m.", "15:15", "a quarter to nine", "half
    past three", "nine o'clock", "seven in the morning", "noon" (:func:`_clock_minutes`)."""
    hour_words = _words_between(1, 12)
    hour = r"(?:\d{1,2}|" + hour_words + ")" if hour_words else r"(?:\d{1,2})"
    return re.compile(
        r"(?<![\w.:])(?:(?P<h>\d{1,2})(?::(?P<m>[0-5]\d)|\.(?P<dm>[0-5]\d)(?=\s*[ap]\.?m\b))?"
        r"\s*(?P<ap>[ap])(?:m|\.m\.?)(?![a-z])"
        r"|(?P<h2>\d{1,2}):(?P<m2>[0-5]\d)(?![\d:])"
        r"|(?:(?:a\s+)?(?P<q>quarter)\s+(?P<qd>to|past)|(?P<half>half)\s+past)\s+(?P<h3>"
        + hour
        + r")\b"
        r"|(?P<h4>" + hour + r")\s+o'?clock\b"
        r"|(?P<h5>" + hour + r")(?=\s+(?:in\s+the\s+(?:morning|afternoon|evening)|at\s+night)\b)"
        r"|(?P<noon>noon|midday|midnight)\b)"
        r"(?:\s+(?P<part>in\s+the\s+(?:morning|afternoon|evening)|at\s+night))?",
        re.IGNORECASE,
    )


def _hour(raw: str) -> int | None:
    hour = int(raw) if raw.isdigit() else _word_values().get(raw.lower())
    return int(hour) if hour is not None and 0 <= hour <= 24 else None


def _clock_minutes(m: re.Match[str]) -> tuple[float, str] | None:
    """Minutes after midnight of a :func:`_clock` match and its unit: ``clock`` when the
    half of the day is known (am/pm, "in the evening", a 24-hour time after 12), else
    ``clock12`` (the minutes within twelve hours: "quarter past three" may be 3:15 or
    15:15)."""
    if m.group("noon"):
        return (0.0 if m.group("noon").lower() == "midnight" else 720.0), "clock"
    raw = next(m.group(g) for g in ("h", "h2", "h3", "h4", "h5") if m.group(g))
    hour = _hour(raw)
    if hour is None:
        return None
    minute = int(m.group("m") or m.group("dm") or m.group("m2") or 0)
    if m.group("q"):
        minute = 15 if m.group("qd").lower() == "past" else -15
    elif m.group("half"):
        minute = 30
    total = hour * 60 + minute
    pm: bool | None = None
    if m.group("ap"):
        pm = m.group("ap").lower() == "p"
    elif m.group("part"):
        pm = not m.group("part").lower().endswith("morning")
    if pm is None:
        if hour > 12 or hour == 0:
            return float(total % 1440), "clock"
        return float(total % 720), "clock12"
    if hour > 12:
        return float(total % 1440), "clock"
    return float(total % 720 + (720 if pm else 0)), "clock"


def _interval_minutes(m: re.Match[str]) -> float | None:
    """The minutes of an :data:`_INTERVAL` match (None for a word that is no number)."""
    if m.group("hour"):
        return 60.0
    if m.group("part"):
        return 30.0 if m.group("part").lower() == "half" else 15.0
    raw = m.group("num").lower()
    value = float(raw) if raw[0].isdigit() else _number_words().get(raw)
    if value is None:
        return None
    return value * (60.0 if m.group("unit").lower().startswith("hour") else 1.0)


def quantities(text: str) -> list[Quantity]:
    """The numbers of ``text`` with the slot each fills.

    The unit is the word right after the number ("eight branches" -> ``branch``,
    "a two-hour course" -> ``hour``, "8 percent"/"8%" -> ``percent``, "50 metres" ->
    ``meter``, "2.5 million passengers" -> ``passenger`` with the value scaled), a
    currency sign before it (``$4`` -> ``dollar``), or a month name next to a day
    ("14 May"). A bare year (1000-2100, no unit) gets the unit ``year``. "one" counts
    only before a hyphen ("one-hour"), not as in "one of".
    How often something runs is the minutes between two runs ("every half hour" -> 30
    ``interval``). Durations in words are minutes ("an hour and a half" -> 90 ``minute``);
    "around the clock" and "24/7" are 24 hours. A number written with a thousands
    separator ("1,500") is never a year. A number right after a capitalised word names
    which one ("Route 7", "Terminal 5", "NorthDev 2025": unit ``#route``, ...), unless
    that word is a stop word ("About"), a month or a weekday. Numbers written in several
    words count as one ("forty-five pounds" 45 ``pound``, "eighty-five thousand homes"
    85,000 ``home``, "two dozen" 24: :func:`word_number`). A time of day is its minutes
    after midnight (``clock``: "8:45 am", "seven in the morning", "noon"; ``clock12`` when
    the half of the day is unsaid: "a quarter to nine").
    """
    out: list[Quantity] = []
    numbers, ones, aliases = _number_words(), _ones(), _unit_aliases()
    phrases: list[tuple[int, int]] = []
    for m in _INTERVAL.finditer(text):
        minutes = _interval_minutes(m)
        if minutes is not None:
            phrases.append(m.span())
            out.append(Quantity(minutes, "interval", m.start(), m.end()))
    for pattern, minutes in _durations():
        for m in pattern.finditer(text):
            if not any(s <= m.start(1) < e for s, e in phrases):
                phrases.append(m.span(1))
                out.append(Quantity(minutes, "minute", m.start(1), m.end(1)))
    for m in _clock().finditer(text):
        clock = _clock_minutes(m)
        if clock is not None and not any(s <= m.start() < e for s, e in phrases):
            phrases.append(m.span())
            out.append(Quantity(clock[0], clock[1], m.start(), m.end()))
    for m in _qty().finditer(text):
        if any(s <= m.start() < e for s, e in phrases):
            continue
        raw = m.group("num")
        low = raw.lower()
        if low[0].isdigit():
            value = float(raw.replace(",", ""))
        elif low in numbers:
            value = numbers[low]
        elif low in ones:
            value = 1.0
        elif (worded := word_number(low)) is not None:
            value = worded
        else:
            continue
        end = m.end()
        unit: str | None = None
        word_unit: str | None = None
        nouns: tuple[str, ...] = ()
        after = _AFTER.match(text, end)
        if after:
            word = after.group(1)
            scale = _SCALES.get(word.lower())
            if scale is not None:
                value *= scale
                end = after.end()
                after = _AFTER.match(text, end)
                word = after.group(1) if after else ""
            if word.lower() in MONTH_NAMES:
                unit = word.lower()
            elif (
                word
                and (word.lower() not in stop_words() or word == "%")
                and not word.lower().endswith("n't")  # "five don't pay": no unit
                and (not word[0].isupper() or word.isupper() or word.lower() in aliases)
            ):  # "in 2023 Northwind": a name
                unit = _unit(word)
                end = after.end() if after else end
                word_unit, nouns = unit, _following_nouns(text, end)
        if m.group("cur"):
            unit = _unit(m.group("cur"))
        elif (named := _NAMED_BEFORE.search(text, max(0, m.start() - 24), m.start())) and (
            named.group(1).lower() not in _not_a_name()
        ):
            if low[0].isdigit() and not {".", ","} & set(raw) and 1000 <= value <= 2100:
                unit = "year"  # "FA Cup Final 1998", "NorthDev 2025 takes place ..."
            elif value < 1000 and "," not in raw and (unit is None or not _measure(unit)):
                # "Route 7 runs ...", "Pinewood 4.0 came out": which one, not how many
                unit = f"#{named.group(1).lower()}"
        if unit is None:
            before = _BEFORE.search(text[max(0, m.start() - 12) : m.start()])
            if before and before.group(1).lower() in MONTH_NAMES and value <= 31:
                unit = before.group(1).lower()
        if low in ones and not m.group("hy"):
            continue
        if (
            unit is None
            and low[0].isdigit()
            and not {".", ","} & set(raw)
            and 1000 <= value <= 2100
        ):
            unit = "year"
        out.append(
            Quantity(round(value, 6), unit, m.start(), end, nouns if unit == word_unit else ())
        )
    return sorted(out, key=lambda q: q.start)


_IN_MINUTES = {"hour": 60.0, "minute": 1.0}
CLOCK_UNITS = frozenset({"clock", "clock12"})
"""Units of a time of day (minutes after midnight; ``clock12`` when am or pm is unsaid)."""
DURATION_UNITS = frozenset(_IN_MINUTES)


def _measure(unit: str) -> bool:
    """Whether ``unit`` is a unit of measure or a currency ("p", "gb", "meter", "person"),
    not a word that merely follows a number ("runs", "came")."""
    return len(unit) <= 2 or unit in _measures()


def same_amount(a: Quantity, b: Quantity) -> bool:
    """True when two quantities state the same amount in the same slot (hours and minutes
    compared in minutes: "90 minutes" is "an hour and a half")."""
    if a.unit in _IN_MINUTES and b.unit in _IN_MINUTES:
        return round(a.value * _IN_MINUTES[a.unit], 6) == round(b.value * _IN_MINUTES[b.unit], 6)
    if a.unit in CLOCK_UNITS and b.unit in CLOCK_UNITS and "clock12" in (a.unit, b.unit):
        return a.value % 720 == b.value % 720  # "quarter past three" is 3:15 pm too
    return a.value == b.value and same_slot(a, b)


def same_slot(a: Quantity, b: Quantity) -> bool:
    """True when two quantities may state the same thing: the same unit (or one's unit
    among the other's nouns, :func:`same_noun`), or one of them has none (a bare number),
    except that a bare year never fills another unit's slot."""
    if same_noun(a, b) or {a.unit, b.unit} <= CLOCK_UNITS:
        return True
    if a.unit is None or b.unit is None:
        return "year" not in (a.unit, b.unit)
    return False


def same_noun(a: Quantity, b: Quantity) -> bool:
    """The same unit, or the unit of one is a noun after the other's unit in its noun
    phrase ("4,300 parcels" and "4,300 emergency food parcels", "9,000 species of plants"
    and "9,000 plant species")."""
    if a.unit == b.unit:
        return True
    if a.unit is None or b.unit is None:
        return False
    return a.unit in b.nouns or b.unit in a.nouns


_FOLLOWING = re.compile(r"\s+([a-z][a-z\-]*)(?:\s+([a-z][a-z\-]*))?")


def _following_nouns(text: str, end: int) -> tuple[str, ...]:
    """Up to two lower-case words after a unit that continue its noun phrase (no stop
    word, no verb-like "-ed"/"-ing" form)."""
    m = _FOLLOWING.match(text, end)
    if m is None:
        return ()
    found: list[str] = []
    stops = stop_words()
    for word in m.groups():
        if not word or word in stops or word.endswith(("ed", "ing", "ly")):
            break
        found.append(_unit(word))
    return tuple(found)


@derived
def currency_signs() -> dict[str, str]:
    """Each currency unit with its sign ("pound": "£"; ``currencies.txt``)."""
    return mapping("currencies")


@derived
def _money_word() -> re.Pattern[str]:
    """A currency named in words ("pounds", "dollar")."""
    units = currency_signs()
    if not units:
        return NEVER
    return re.compile(r"\b(?:" + "|".join(re.escape(u) + "s?" for u in units) + r")\b", re.I)


_WEIGHED = re.compile(r"\bweigh\w*\W+(?:\w+\W+){0,3}$", re.IGNORECASE)


def canonical_amounts(text: str) -> str:
    """``text`` with each amount of money written with its currency sign and digits
    ("eighteen pounds" -> "£18", "52 dollars" -> "$52", "5.20 pounds" -> "£5.20"), the
    way the evidence usually writes it; a weight in pounds ("weighs 200 pounds") is left
    alone, and so are amounts of a million or more."""
    if not _money_word().search(text):
        return text
    out, last = [], 0
    signs = currency_signs()
    for q in quantities(text):
        sign = signs.get(q.unit or "")
        span = text[q.start : q.end]
        if sign is None or span.lstrip().startswith(sign) or q.value >= 1e6:
            continue
        if _WEIGHED.search(text[max(0, q.start - 40) : q.start]):
            continue
        amount = f"{q.value:.0f}" if q.value == int(q.value) else f"{q.value:.2f}"
        out += [text[last : q.start], sign + amount]
        last = q.end
    return "".join(out) + text[last:] if out else text
