"""A generated dialogue data set: multi-session conversations between two people.

Built from a seed (the same seed gives the same set), not written by hand, so the
retriever cannot have been tuned to its sentences. Each conversation is two people
talking over 8-12 dated sessions; most turns are small talk, some tell a life event
(an activity started, a trip, a purchase, a visit, a feeling about something), and
some are near misses (the other person mentions the same kind of thing, never did it).
Questions, each with its evidence turns:

- `single`: one fact ("Where did Maya travel?"),
- `multi`: every event of one kind a person told ("What hobbies has Maya taken up?"),
- `when`: when an event happened ("When did Maya go to the support group?"),
- `open`: how a person feels about something they talked about.

A question names the event in the words it was told with probability `SAME_WORDS`,
else with a paraphrase from the event's list, so keyword and vector search both have
work. Conversations split in two by index: tune on the first half, report on the second.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from dated_questions import TimedQuestion, Told, dated_question, when_question

SEED = 15
CONVERSATIONS = 20
SAME_WORDS = 0.5
START = datetime(2025, 1, 6, 18, 0)

PEOPLE = [
    "Maya", "Liam", "Noor", "Tomas", "Ines", "Kofi", "Hana", "Pavel", "Lucia", "Arjun",
    "Zoe", "Emeka", "Sofia", "Jonas", "Aiko", "Rafael", "Greta", "Omar", "Elif", "Marco",
    "Nadia", "Sven", "Priya", "Diego", "Leah", "Yusuf", "Clara", "Ivan", "Amara", "Felix",
]  # fmt: skip

# kind -> events: (told as, paraphrases the question may use instead, question slot)
EVENTS: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "hobby": [
        ("a pottery class", ("a ceramics course", "making clay pots")),
        ("salsa lessons", ("Latin dance classes", "learning to dance salsa")),
        ("rock climbing at the indoor gym", ("bouldering", "climbing walls")),
        ("a watercolour painting course", ("painting with watercolours", "an art class")),
        ("the community choir", ("singing in a choir", "a singing group")),
        ("beekeeping with my uncle", ("keeping bees", "looking after hives")),
        ("a woodworking workshop", ("carpentry", "building furniture by hand")),
        ("chess club on Thursdays", ("playing chess in a club", "a chess group")),
    ],
    "trip": [
        ("Lisbon for a long weekend", ("Portugal's capital", "a short break in Lisbon")),
        ("a hiking trip in the Dolomites", ("the Italian Alps", "mountain walking in Italy")),
        ("my cousin's wedding in Nairobi", ("a family wedding in Kenya", "Kenya")),
        ("a camping trip by Lake Bled", ("camping in Slovenia", "a lake in Slovenia")),
        ("a work conference in Montreal", ("a business trip to Canada", "Quebec")),
        ("the Edinburgh festival", ("a festival in Scotland", "Scotland in August")),
        ("a ski week in the Tatras", ("skiing in Slovakia", "a winter holiday on skis")),
    ],
    "purchase": [
        ("a second-hand cargo bike", ("a used bicycle for carrying kids", "a cargo bicycle")),
        ("a small greenhouse for the garden", ("a glasshouse", "somewhere to grow tomatoes")),
        ("an old upright piano", ("a piano", "a musical instrument for the living room")),
        ("a camper van", ("a motorhome", "a van to sleep in")),
        ("a secondhand sewing machine", ("a machine for making clothes", "sewing gear")),
        ("a telescope", ("a stargazing scope", "something to look at the stars")),
    ],
    "visit": [
        ("the support group for new parents", ("a parents' support meeting", "a group")),
        ("the LGBTQ support group downtown", ("a support meeting", "the queer support circle")),
        ("the career fair at the university", ("a jobs fair", "a recruitment event")),
        ("my grandmother in the care home", ("visiting granny", "the nursing home")),
        ("the animal shelter to volunteer", ("volunteering with rescue dogs", "helping out")),
        ("a charity run for cancer research", ("a fundraising race", "a 5k for charity")),
        ("the new science museum", ("a museum", "an exhibition about science")),
    ],
}
FEELINGS = {
    "their job": ("I honestly feel burnt out at work lately", "I am really happy at work"),
    "moving city": ("Moving away scares me a bit", "I can't wait to move to a new city"),
    "their neighbours": (
        "The neighbours are so loud, it drives me mad",
        "Our neighbours are lovely",
    ),
    "learning to drive": ("Driving lessons make me so nervous", "I love my driving lessons"),
    "running": ("Running is the one thing that clears my head", "I have started to hate running"),
}
VERBS = {
    "hobby": ("I started {e}", "I signed up for {e}", "Guess what, I've joined {e}"),
    "trip": ("I just got back from {e}", "We went to {e}", "I spent last week at {e}"),
    "purchase": ("I finally bought {e}", "We got ourselves {e}", "I picked up {e}"),
    "visit": ("I went to {e} yesterday", "Yesterday I went to {e}", "I dropped by {e}"),
}
QUESTIONS = {
    "hobby": "What activity did {p} take up: was it {e}?",
    "trip": "Where did {p} go, {e}?",
    "purchase": "What did {p} buy, {e}?",
    "visit": "What did {p} do at {e}?",
}
WHEN = {
    "hobby": "When did {p} start {e}?",
    "trip": "When did {p} go on {e}?",
    "purchase": "When did {p} buy {e}?",
    "visit": "When did {p} go to {e}?",
}
MULTI = {
    "hobby": "What hobbies or classes has {p} taken up?",
    "trip": "Which places has {p} travelled to?",
    "purchase": "What things has {p} bought?",
    "visit": "Which places or events has {p} been to?",
}
NEAR_MISS = (
    "Have you ever tried {e}? I never have.",
    "My sister keeps talking about {e}, not my thing.",
    "I saw an advert for {e} on the bus.",
)
SMALL_TALK = (
    "How was your day?", "Pretty good, a bit tired.", "The weather has been awful all week.",
    "Did you watch the match on Sunday?", "I made lasagne tonight.", "Work is busy as always.",
    "I'm reading a novel about a lighthouse keeper.", "My cat knocked over a plant again.",
    "Traffic was terrible this morning.", "We should get coffee soon.", "Ha, that's funny.",
    "I slept badly, the neighbours had a party.", "I need a holiday.", "How is your mum doing?",
    "She's fine, thanks for asking.", "I've been cooking more at home.", "That sounds nice.",
    "Did you finish that series?", "Not yet, two episodes left.",
    "I'm trying to drink less coffee.",
    "The train was late again.", "I bought new running shoes.", "My phone screen cracked.",
    "Let's talk tomorrow.", "Good night!", "Morning! Busy day ahead.", "I love this song.",
)  # fmt: skip


@dataclass(frozen=True)
class Turn:
    """One thing said: by whom, when, in which session."""

    id: str
    speaker: str
    text: str
    said_at: datetime
    session: int


@dataclass(frozen=True)
class DialogueQuestion:
    """A question and the ids of the turns that answer it."""

    kind: str
    text: str
    evidence: tuple[str, ...]


@dataclass
class Conversation:
    """Two people's sessions (a workspace of their own) and questions about them."""

    id: str
    people: tuple[str, str]
    turns: list[Turn] = field(default_factory=list)
    questions: list[DialogueQuestion] = field(default_factory=list)
    told: list[Told] = field(default_factory=list)
    """The facts told, for questions about time."""
    timed: list[TimedQuestion] = field(default_factory=list)
    """Questions about time (`dated_questions.py`)."""


@dataclass
class _Told:
    person: str
    kind: str
    event: tuple[str, tuple[str, ...]]
    turn: Turn


def generate(seed: int = SEED, conversations: int = CONVERSATIONS) -> list[Conversation]:
    """The data set for `seed`: `conversations` conversations with their questions."""
    rng = random.Random(seed)
    return [_conversation(rng, n, seed) for n in range(conversations)]


def halves(data: list[Conversation]) -> tuple[list[Conversation], list[Conversation]]:
    """The tuning half (first conversations) and the held-out half."""
    middle = len(data) // 2
    return data[:middle], data[middle:]


def _conversation(rng: random.Random, n: int, seed: int) -> Conversation:
    a, b = rng.sample(PEOPLE, 2)
    convo = Conversation(f"conv{n:02d}", (a, b))
    told: list[_Told] = []
    feelings: list[tuple[str, str, Turn]] = []
    day = START + timedelta(days=rng.randint(0, 60))
    for session in range(rng.randint(8, 12)):
        day += timedelta(days=rng.randint(2, 20), minutes=rng.randint(0, 180))
        _session(rng, convo, session, day, told, feelings)
    _ask(rng, convo, told, feelings)
    convo.told = [Told(t.person, t.person, t.kind, t.turn.id, t.turn.said_at) for t in told]
    # A stream of its own: the questions above stay what they were before these existed.
    _ask_about_time(random.Random(f"{seed}:{convo.id}:time"), convo, told)
    return convo


def _session(  # noqa: PLR0917  one generator step, its state passed in order
    rng: random.Random,
    convo: Conversation,
    session: int,
    day: datetime,
    told: list[_Told],
    feelings: list[tuple[str, str, Turn]],
) -> None:
    length = rng.randint(22, 34)
    events = rng.sample(range(length), 3)
    for i in range(length):
        speaker = convo.people[i % 2]
        at = day + timedelta(minutes=i)
        turn_id = f"{convo.id}:s{session}:t{i}"
        if i in events:
            text = _event_turn(rng, speaker, told, feelings, turn_id, at, session)
        elif rng.random() < 0.08:
            kind = rng.choice(list(EVENTS))
            text = rng.choice(NEAR_MISS).format(e=rng.choice(EVENTS[kind])[0])
        else:
            text = rng.choice(SMALL_TALK)
        turn = Turn(turn_id, speaker, text, at, session)
        convo.turns.append(turn)
        if told and told[-1].turn.id == turn_id:
            told[-1].turn = turn
        if feelings and feelings[-1][2].id == turn_id:
            feelings[-1] = (*feelings[-1][:2], turn)


def _event_turn(  # noqa: PLR0917  one generator step, its state passed in order
    rng: random.Random,
    speaker: str,
    told: list[_Told],
    feelings: list[tuple[str, str, Turn]],
    turn_id: str,
    at: datetime,
    session: int,
) -> str:
    placeholder = Turn(turn_id, speaker, "", at, session)
    if rng.random() < 0.2:
        topic = rng.choice(list(FEELINGS))
        text = rng.choice(FEELINGS[topic])
        feelings.append((speaker, topic, placeholder))
        return f"{text}."
    kind = rng.choice(list(EVENTS))
    taken = {t.event[0] for t in told if t.person == speaker}
    options = [e for e in EVENTS[kind] if e[0] not in taken] or EVENTS[kind]
    event = rng.choice(options)
    told.append(_Told(speaker, kind, event, placeholder))
    return rng.choice(VERBS[kind]).format(e=event[0]) + "."


def _ask(
    rng: random.Random,
    convo: Conversation,
    told: list[_Told],
    feelings: list[tuple[str, str, Turn]],
) -> None:
    def name(t: _Told) -> str:
        words = t.event[0] if rng.random() < SAME_WORDS else rng.choice(t.event[1])
        return words.replace("my ", "their ")  # the question is about them

    for t in told:
        template = QUESTIONS if rng.random() < 0.5 else WHEN
        kind = "single" if template is QUESTIONS else "when"
        text = template[t.kind].format(p=t.person, e=name(t))
        convo.questions.append(DialogueQuestion(kind, text, (t.turn.id,)))
    for person in convo.people:
        for kind, question in MULTI.items():
            evidence = tuple(t.turn.id for t in told if t.person == person and t.kind == kind)
            if len(evidence) >= 2:
                text = question.format(p=person)
                convo.questions.append(DialogueQuestion("multi", text, evidence))
    for person, topic, turn in feelings:
        text = f"How does {person} feel about {topic}?"
        convo.questions.append(DialogueQuestion("open", text, (turn.id,)))


DATED = {
    "hobby": "What did {p} take up {when}?",
    "trip": "Where did {p} go {when}?",
    "purchase": "What did {p} buy {when}?",
    "visit": "What did {p} say {when} about where they had been?",
}


def _ask_about_time(rng: random.Random, convo: Conversation, told: list[_Told]) -> None:
    """A `when` and a `dated` question for every event told."""
    last = convo.turns[-1].said_at
    for event, fact in zip(told, convo.told, strict=True):
        told_as, paraphrases = event.event
        words = told_as if rng.random() < SAME_WORDS else rng.choice(paraphrases)
        text = WHEN[fact.topic].format(p=fact.speaker, e=words.replace("my ", "their "))
        convo.timed.append(when_question(fact, text, rng, last))
        template = DATED[fact.topic]
        wording = functools.partial(_dated_text, template, fact.speaker)
        convo.timed.append(dated_question(fact, wording, rng, convo.told))


def _dated_text(template: str, person: str, when: str) -> str:
    return template.format(p=person, when=when)
