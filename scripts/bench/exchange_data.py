"""A second generated dialogue set, written unlike `dialogue_data.py`: two styles.

- `factual`: short exchanges full of names, dates and numbers. Often one person asks
  ("When is Aiko's housewarming?") and the *next* turn answers ("Saturday the 14th, in
  her flat in Ghent"): the question that names the thing and the answer that holds it
  are neighbours, so a retriever that returns only the turn sharing the words misses.
- `rambling`: long turns, several sentences of chatter each, one of which tells the
  fact in other words than the question uses ("scraping away at that old cello" for
  "Which instrument is Greta learning?"): few shared rare words, so vectors have work.

Each conversation (its own workspace) mixes both styles by session; questions carry
their kind and evidence turns. Built from a seed; halves by conversation index, tune on
the first, report on the second.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from dated_questions import Told, dated_question, when_question
from dialogue_data import PEOPLE, Conversation, DialogueQuestion, Turn

SEED = 28
CONVERSATIONS = 16
START = datetime(2024, 9, 2, 19, 0)
CITIES = ["Ghent", "Tartu", "Porto", "Bergen", "Lyon", "Kraków", "Cork", "Turku", "Graz"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["March", "April", "May", "June", "July", "October", "November"]

# (question about the fact, the asking turn, the answering turn); {p} person, {c} city,
# {d} day, {n} number, {m} month.
FACTUAL = [
    ("When is {p}'s housewarming?", "When is {p}'s housewarming again?",
     "{d} the {n}th, at the new flat in {c}."),
    ("Which city did {p} move to?", "Where did {p} end up moving?",
     "{c}, since {m}. Loves it there."),
    ("What is {p}'s flight number?", "What was {p}'s flight number?",
     "LX {n}{n}, lands at six."),
    ("How old is {p}'s daughter?", "How old is {p}'s little one now?",
     "She turned {n} in {m}."),
    ("When does {p} start the new job?", "When does {p} start at the bank?",
     "First {d} of {m}, in the {c} office."),
    ("What is {p}'s room number at the hospital?", "Which room is {p} in?",
     "Room {n}{n}, third floor, visiting until eight."),
]  # fmt: skip
# (question, the fact as a rambling turn tells it: no rare word of the question in it)
RAMBLING = [
    ("Which instrument is {p} learning?",
     "these days my evenings go to scraping away at that old cello I found, scales "
     "until the neighbours knock"),
    ("What pet did {p} adopt?",
     "we brought home a scruffy little terrier from the rescue place and he already "
     "owns the sofa"),
    ("Why did {p} quit the gym?",
     "paying all that money to stare at a wall of mirrors felt silly, so I cancelled "
     "and walk along the canal instead"),
    ("What is {p} allergic to?",
     "one bite of anything with shrimp or crab and my throat closes up, so I always "
     "ask the waiter twice"),
    ("Where does {p} go to relax?",
     "when it all gets too much I drive out to the cabin by the lake, no signal, "
     "just the loons and a fire"),
    ("What did {p} study at university?",
     "years ago I spent four years reading about old bones and ruined temples, the "
     "degree was archaeology"),
    ("What car does {p} drive now?",
     "the old hatchback finally died, so now I rattle around in a secondhand "
     "electric Nissan Leaf"),
    ("What is {p} cooking for the party?",
     "for the party I am doing a huge pot of my grandmother's lamb stew with "
     "apricots, it takes all day"),
]  # fmt: skip
# What a time question calls each fact, by the question that asks it.
TOPICS = {
    "When is {p}'s housewarming?": "{p}'s housewarming",
    "Which city did {p} move to?": "{p}'s move",
    "What is {p}'s flight number?": "{p}'s flight",
    "How old is {p}'s daughter?": "{p}'s daughter",
    "When does {p} start the new job?": "{p}'s new job",
    "What is {p}'s room number at the hospital?": "{p} being in hospital",
    "Which instrument is {p} learning?": "the instrument they are learning",
    "What pet did {p} adopt?": "their new pet",
    "Why did {p} quit the gym?": "quitting the gym",
    "What is {p} allergic to?": "their allergy",
    "Where does {p} go to relax?": "where they go to relax",
    "What did {p} study at university?": "what they studied",
    "What car does {p} drive now?": "their car",
    "What is {p} cooking for the party?": "cooking for the party",
}
CHATTER = [
    "Honestly the week has been a blur.", "I keep meaning to call you back.",
    "Anyway, where was I.", "You know how it is with work.", "The weather has been odd.",
    "I had the strangest dream last night.", "My back is killing me again.",
    "We should plan something soon.", "I finished that podcast you sent.",
    "The kids are driving me up the wall.", "Traffic this morning was unreal.",
    "I have been trying to sleep earlier.", "Mum says hello, by the way.",
]  # fmt: skip
SHORT = [
    "Ha, nice.", "Really?", "Oh wow.", "No way!", "Good to know.", "Makes sense.",
    "I'll note that down.", "Thanks!", "Right.", "Speak soon.",
]  # fmt: skip


@dataclass
class _Builder:
    convo: Conversation
    rng: random.Random
    day: datetime
    session: int = 0
    turns: list[Turn] = field(default_factory=list)

    def say(self, speaker: str, text: str) -> Turn:
        at = self.day + timedelta(minutes=len(self.convo.turns))
        turn = Turn(f"{self.convo.id}:s{self.session}:t{len(self.convo.turns)}", speaker,
                    text, at, self.session)  # fmt: skip
        self.convo.turns.append(turn)
        return turn


def generate(seed: int = SEED, conversations: int = CONVERSATIONS) -> list[Conversation]:
    """The data set for `seed`: `conversations` conversations with their questions."""
    rng = random.Random(seed)
    data = [_conversation(rng, n) for n in range(conversations)]
    for convo in data:
        # A stream of its own: the questions above stay what they were before these existed.
        _ask_about_time(random.Random(f"{seed}:{convo.id}:time"), convo)
    return data


def _conversation(rng: random.Random, n: int) -> Conversation:
    a, b = rng.sample(PEOPLE, 2)
    third = [p for p in rng.sample(PEOPLE, 6) if p not in (a, b)]
    built = _Builder(Conversation(f"exch{n:02d}", (a, b)), rng, START)
    for session in range(rng.randint(6, 9)):
        built.session = session
        built.day += timedelta(days=rng.randint(3, 15))
        if session % 2 == 0:
            _factual_session(built, third)
        else:
            _rambling_session(built)
    _merge_repeats(built.convo)
    return built.convo


def _merge_repeats(convo: Conversation) -> None:
    # A fact told twice (the same person, two sessions) is one question, both turns count.
    merged: dict[str, DialogueQuestion] = {}
    for q in convo.questions:
        seen = merged.get(q.text)
        merged[q.text] = (
            q if seen is None else DialogueQuestion(q.kind, q.text, seen.evidence + q.evidence)
        )
    convo.questions = list(merged.values())


def _fill(rng: random.Random, template: str, person: str) -> str:
    return template.format(
        p=person, c=rng.choice(CITIES), d=rng.choice(DAYS), n=rng.randint(2, 29),
        m=rng.choice(MONTHS),
    )  # fmt: skip


def _factual_session(built: _Builder, third: list[str]) -> None:
    rng, (a, b) = built.rng, built.convo.people
    for asked in rng.sample(FACTUAL, 3):
        person = rng.choice(third)
        for _ in range(rng.randint(1, 3)):
            built.say(a, rng.choice(SHORT))
        question, ask, answer = (_fill(rng, t, person) for t in asked)
        built.say(a, ask)
        told = built.say(b, _fill(rng, answer, person))
        built.convo.questions.append(DialogueQuestion("factual", question, (told.id,)))
        built.convo.told.append(Told(b, person, asked[0], told.id, told.said_at))
        built.say(a, rng.choice(SHORT))


def _rambling_session(built: _Builder) -> None:
    rng, people = built.rng, built.convo.people
    facts = rng.sample(RAMBLING, 2)
    length = rng.randint(8, 12)
    slots = rng.sample(range(length), len(facts))
    for i in range(length):
        speaker = people[i % 2]
        chatter = rng.sample(CHATTER, 3)
        if i in slots:
            question, fact = facts[slots.index(i)]
            chatter.insert(rng.randint(1, 2), f"Oh and {fact}.")
            told = built.say(speaker, " ".join(chatter))
            text = question.format(p=speaker)
            built.convo.questions.append(DialogueQuestion("rambling", text, (told.id,)))
            built.convo.told.append(Told(speaker, speaker, question, told.id, told.said_at))
        else:
            built.say(speaker, " ".join(chatter))


def _ask_about_time(rng: random.Random, convo: Conversation) -> None:
    """A `when` and a `dated` question for every fact told."""
    last = convo.turns[-1].said_at
    for told in convo.told:
        topic = TOPICS[told.topic].format(p=told.subject)
        verb = "tell me about" if told.subject != told.speaker else "talk about"
        text = f"When did {told.speaker} {verb} {topic}?"
        convo.timed.append(when_question(told, text, rng, last))
        wording = f"What did {told.speaker} say about {topic} {{}}?".format
        convo.timed.append(dated_question(told, wording, rng, convo.told))
